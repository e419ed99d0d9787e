/*
 * What the IXFR patch (control/zone/image_patch.c) keeps about an image from one IXFR to the
 * next, so that a patch reads its diff and not the zone:
 *
 *   - the additional-section targets backwards: for a target name, the nodes whose NS, MX,
 *     SRV, SVCB or HTTPS records name it (a superset: a node whose records changed since may
 *     stay listed, the patch reads its RRsets again), for the lists that must take a name
 *     that gains its first address or leave one that loses its last;
 *   - per signed zone, how many RRSIGs expire at each second (RFC 4034 §3.1.5, kept as the
 *     32-bit field, resolved around the patch's time) and which is the earliest, for the
 *     zone's earliest expiration: an RRSIG that goes only uncounts itself, and when it was
 *     the last at the earliest second the distinct seconds (one for a zone signed at once,
 *     as ldns-signzone or a signer without jitter signs it) are read, not the records.
 *
 * Each part is made from an image the first time a patch needs it (one pass over that
 * image's nodes, what the patch did every time before) and then follows every patch made
 * with it. It describes one image, told by the generation in its header: the patch writes a
 * token of its own there (the publish replaces it: p53_patch_index_published() follows), so
 * any other image, a full compile's, a patch made without the index, or one whose memory
 * took the same address, does not match and the parts are made again when needed. An image
 * with generation 0 matches nothing. Control thread only; allocates with malloc.
 */
#ifndef P53_PATCH_INDEX_H
#define P53_PATCH_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "dataplane/dnsmsg.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

struct p53_patch_index;

/** An empty index (matches no image). NULL: out of memory. */
struct p53_patch_index *p53_patch_index_new(void);

/** Free ix (NULL: nothing). */
void p53_patch_index_free(struct p53_patch_index *ix);

/** A copy of ix (the same image described). NULL: out of memory. */
struct p53_patch_index *p53_patch_index_clone(const struct p53_patch_index *ix);

/**
 * Make both parts from img (every zone) and bind ix to img's generation, which must not be
 * 0. What a benchmark does ahead of its timed patches; a patch makes the parts it needs
 * itself. 0, or -1 (out of memory, or generation 0: ix then matches nothing).
 */
int p53_patch_index_build(struct p53_patch_index *ix, const void *img);

/**
 * The image whose header held generation `was` (a patch's token, read before the publish)
 * was published with generation `gen`: ix, if it described that image, now describes it by
 * its new generation. Anything else leaves ix matching nothing it did not match before.
 */
void p53_patch_index_published(struct p53_patch_index *ix, uint64_t was, uint64_t gen);

/**
 * Image ni is img with zone z spliced in (control/zone/image_splice.h: the zone's nodes in ni
 * are those from img's node count on; its old ones are left without RRsets). When ix
 * describes img, it is made to describe ni in O(the zone): those nodes' targets listed (the
 * old nodes stay listed: a superset), zone z's signature counts made from them when the zone
 * is signed, and ni bound to ix (a token in its generation, which the publish replaces:
 * p53_patch_index_published). So the next patch does not make the parts again from ni.
 * 0, or -1: ix did not describe img, or out of memory (ix is emptied, ni keeps generation 0).
 */
int p53_patch_index_spliced(struct p53_patch_index *ix, const void *img, void *ni, uint32_t z);

/* ---- For image_patch.c ---- */

/** Whether ix describes img (by its generation); if not, ix is emptied. */
bool p53_patch_index_of(struct p53_patch_index *ix, const void *img);

/** Empty ix: no part made, matches no image. */
void p53_patch_index_reset(struct p53_patch_index *ix);

/** Bind ix to new image ni: a fresh token is written into ni's generation. */
void p53_patch_index_bind(struct p53_patch_index *ix, void *ni);

/** Whether the target part is made. */
bool p53_patch_index_has_targets(const struct p53_patch_index *ix);

/** Make the target part from img (every node). 0, or -1 (out of memory: not made). */
int p53_patch_index_targets_build(struct p53_patch_index *ix, const void *img);

/** List node n's targets in img (its NS/MX/SRV/SVCB/HTTPS records). 0, or -1 (out of
 * memory: the target part is dropped). */
int p53_patch_index_targets_add(struct p53_patch_index *ix, const void *img, uint32_t n);

/**
 * Append to *out (grown as needed: *n used, *cap allocated) the nodes listed for target
 * `name` (any case, len bytes), and possibly others (the caller checks their records).
 * 0, or -1 (out of memory).
 */
int p53_patch_index_targets_find(const struct p53_patch_index *ix, const uint8_t *name,
				 size_t len, uint32_t **out, size_t *n, size_t *cap);

/** Whether zone z's signature counts are made. */
bool p53_patch_index_has_sigs(const struct p53_patch_index *ix, uint32_t z);

/** Make zone z's signature counts from img. 0, or -1 (out of memory: not made). */
int p53_patch_index_sigs_build(struct p53_patch_index *ix, const void *img, uint32_t z);

/** Drop zone z's signature counts (made again when needed). */
void p53_patch_index_sigs_drop(struct p53_patch_index *ix, uint32_t z);

/**
 * Count (add true) or uncount the RRSIGs of node n of img, when it is in zone z. 0, or -1:
 * a count that was not there, or out of memory (zone z's counts are dropped).
 */
int p53_patch_index_sigs_node(struct p53_patch_index *ix, const void *img, uint32_t n,
			      uint32_t z, bool add);

/** Zone z's earliest RRSIG expiration resolved around now as the compiler resolves it
 * (seconds since the epoch, at least 1), or 0 when it has none. When the earliest counted
 * went, the distinct expirations are read again (not the records). */
uint64_t p53_patch_index_sigs_min(struct p53_patch_index *ix, uint32_t z, time_t now);

/**
 * Where the target name starts in an RRset's RDATA: the types whose targets get additional
 * lists (NS, MX, SRV, SVCB, HTTPS), read by the patch and by the index. -1: no target.
 */
static inline int p53_target_skip(uint16_t type)
{
	switch (type) {
	case P53_T_NS:
		return 0;
	case P53_T_MX: case 64 /* SVCB */: case 65 /* HTTPS */:
		return 2;
	case 33 /* SRV */:
		return 6;
	default:
		return -1;
	}
}

/**
 * One record's target name, in an RRset of a type p53_target_skip() gives `skip` >= 0 for:
 * rd at the record (its owner reference first); *name and *len the target (*len 0: the RDATA
 * holds none). Returns the next record.
 */
static inline const uint8_t *p53_target_rr(const uint8_t *rd, int skip, const uint8_t **name,
					   size_t *len)
{
	rd += P53_RR_OWNER_LEN;
	uint16_t rdlen = p53_get16(rd + 8);
	int tl = rdlen > (uint32_t)skip ? p53_name_len(rd + 10 + skip, rdlen - (size_t)skip) : -1;

	*name = rd + 10 + skip;
	*len = tl > 0 ? (size_t)tl : 0;
	return rd + 10u + rdlen;
}

#endif /* P53_PATCH_INDEX_H */
