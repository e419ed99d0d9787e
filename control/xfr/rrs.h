/*
 * A zone's records in memory, and IXFR differences (RFC 1995) applied to them.
 *
 * struct p53_rrs is what a transfer produces and what the zone compiler takes for a
 * secondary zone (struct p53_zone_src.rrs): uncompressed wire records one after another,
 * OWNER TYPE CLASS TTL RDLENGTH RDATA, names in RDATA uncompressed too. A zone already served
 * is read back out of the running image (p53_image_zones_rrs), so a secondary zone costs no
 * second copy while nothing changes: the image is the store.
 *
 * Control thread and transfer threads; each struct belongs to one thread at a time.
 */
#ifndef P53_XFR_RRS_H
#define P53_XFR_RRS_H

#include <stddef.h>
#include <stdint.h>

#include <ldns/ldns.h>

struct p53_rrs {
	uint8_t *buf;
	size_t len, cap;
	uint32_t count;
};

/* One record of a p53_rrs, pointers into its buffer. */
struct p53_rr_view {
	const uint8_t *rr;              /* the whole record */
	size_t rr_len;
	const uint8_t *owner;
	uint8_t owner_len;
	uint16_t type, cls;
	uint32_t ttl;
	const uint8_t *rdata;
	uint16_t rdlen;
};

/** Append one record. @return 0 or -1 (out of memory, bad sizes). */
int p53_rrs_add(struct p53_rrs *r, const uint8_t *owner, size_t owner_len, uint16_t type,
		uint16_t cls, uint32_t ttl, const uint8_t *rdata, size_t rdlen);

/** Append an ldns record (names written uncompressed, case kept). @return 0 or -1. */
int p53_rrs_add_ldns(struct p53_rrs *r, const ldns_rr *rr);

/** Append every record of `from`. @return 0 or -1. */
int p53_rrs_append(struct p53_rrs *r, const struct p53_rrs *from);

/**
 * The record at *pos (start with 0); *pos moves past it.
 * @return 1 with v filled, 0 at the end, -1 when the buffer is malformed.
 */
int p53_rrs_next(const struct p53_rrs *r, size_t *pos, struct p53_rr_view *v);

/** The record as an ldns_rr (for canonical forms and text), or NULL. */
ldns_rr *p53_rr_view_ldns(const struct p53_rr_view *v);

void p53_rrs_free(struct p53_rrs *r);

/** Move: *dst takes src's buffer, src is left empty. */
void p53_rrs_move(struct p53_rrs *dst, struct p53_rrs *src);

/** The serial of the first SOA record, or -1 when there is none. */
int64_t p53_rrs_soa_serial(const struct p53_rrs *r);

/* One IXFR difference sequence (RFC 1995 §4): version `from` to version `to`. */
struct p53_ixfr_step {
	uint32_t from, to;
	struct p53_rrs del;             /* starts with the old SOA */
	struct p53_rrs add;             /* starts with the new SOA */
};

struct p53_ixfr {
	struct p53_ixfr_step *steps;
	size_t n, cap;
};

/** A new step at the end. @return it, or NULL (out of memory). */
struct p53_ixfr_step *p53_ixfr_push(struct p53_ixfr *d);

void p53_ixfr_free(struct p53_ixfr *d);

/** Records deleted and added over all steps (for logs and status). */
void p53_ixfr_counts(const struct p53_ixfr *d, uint64_t *del, uint64_t *add);

/**
 * Apply the steps to `zone` (its records at serial d->steps[0].from), in place: deletions
 * match records by owner, type, class and canonical RDATA (RFC 4034 §6.2), not TTL, and
 * remove every copy; a record added and deleted again in a later step is gone; a TTL change
 * is a deletion and an addition. The records kept slide down over the deleted ones, in their
 * order, and the additions follow them at the end (the zone compiler sorts; a record added
 * that the zone already has is one record there, RFC 2181 §5). The SOA is a record like any
 * other: the old one is deleted, the new one added.
 *
 * Cost: one pass over the zone (a hash of owner and type filters which records need their
 * canonical form), plus the diff; no second copy of the zone. Fails, with the reason, when
 * the steps do not chain (from/to, zone untouched) or a deletion names a record the zone
 * does not have (the zone is then emptied: the caller reads it again or asks for AXFR, RFC
 * 1995 §4; the served image is not touched).
 *
 * @return 0, or -1 with err set.
 */
int p53_ixfr_apply_inplace(struct p53_rrs *zone, const struct p53_ixfr *d, char *err,
			   size_t errlen);

/**
 * p53_ixfr_apply_inplace() on a copy of `base` (left as it is).
 * @param out  emptied, then the new content (empty on failure)
 * @return 0, or -1 with err set.
 */
int p53_ixfr_apply(const struct p53_rrs *base, const struct p53_ixfr *d, struct p53_rrs *out,
		   char *err, size_t errlen);

/**
 * Every zone's records out of an image, in one pass over its nodes: out[z] for zone index z
 * (NULL entries are skipped). Owners come out in canonical (lower) case; RRsets carry their
 * one TTL, RRSIGs their own. A zone without data (image.h rcode) gives nothing.
 * @return 0 or -1 (out of memory).
 */
int p53_image_zones_rrs(const void *img, struct p53_rrs **out);

/**
 * One node's records out of an image (node index n), appended to *out as
 * p53_image_zones_rrs() gives them (its steered RRsets left out; the caller checks the node's
 * zone has data).
 * @return 0 or -1 (out of memory).
 */
int p53_image_node_rrs(const void *img, uint32_t n, struct p53_rrs *out);

#endif /* P53_XFR_RRS_H */
