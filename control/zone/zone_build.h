/*
 * Zone compiler internals shared by control/zone/zone_load.c (master files to records, with
 * ldns) and control/zone/image_build.c (records to the image of dataplane/image.h). Not a public API:
 * only the compiler includes it. Control thread only; everything here allocates with malloc.
 *
 * While building, nodes live in an array of struct p53_zb_node (the fields the image's nodes
 * get, with the name's place in the arena below) plus a side array of build-only facts; owner
 * names live in a byte arena whose names go into the nodes' blocks of the image
 * (image_build.c layout(), which writes each node in the image's layout). Records are
 * kept compact (no ldns_rr survives its line): wire bytes after the owner in a byte arena,
 * and a small struct with where the record came from, for messages.
 */
#ifndef P53_ZONE_BUILD_H
#define P53_ZONE_BUILD_H

#include <stdint.h>
#include <stddef.h>

#include "control/zone/image_build.h"
#include "dataplane/image.h"

/* A node while building: what the image's node (dataplane/image.h) gets, whatever its
 * layout there, with its name in p53_zb.names. */
struct p53_zb_node {
	uint32_t name_off;      /* canonical owner name, into p53_zb.names */
	uint8_t  name_len;
	uint8_t  labels;        /* label count, root excluded */
	uint16_t flags;         /* P53_NODE_* */
	uint32_t zone;
	uint32_t rrsets;        /* first RRset (the build's index); sorted by type */
	uint16_t n_rrsets;
	uint16_t steer;         /* as p53_image_node.steer */
	uint32_t wildcard;      /* node "*.<owner>", or P53_NONE */
	uint32_t occluder;      /* as p53_image_node.occluder */
};

/* Build-only facts about a node; indexed like the node array. */
struct p53_zb_nodex {
	uint32_t hash;          /* p53_name_hash of the canonical name */
	uint32_t parent;        /* node of the parent name in the same zone; P53_NONE at the apex */
	uint32_t first_rec;     /* record (sorted order) of the node's earliest line, for errors */
	uint8_t has_addr;       /* owns A or AAAA: a target for additional-section lists */
	uint8_t shadowed;       /* at or below the apex of a deeper served zone: not indexed */
	uint8_t below_dname;    /* strictly below a DNAME in this zone */
	uint8_t below_cut;      /* strictly below a CUT in this zone */
};

/* One parsed RR, owner excluded: 32 bytes, a million of them in a big zone. */
struct p53_zb_rec {
	uint32_t node;          /* owner node */
	uint32_t seq;           /* order of appearance, over all files */
	uint32_t off;           /* into arena: wire TYPE CLASS TTL RDLENGTH RDATA, then the
				   canonical RDATA when it differs (clen > 0) */
	uint32_t wlen;          /* wire bytes, 10 + RDLENGTH */
	uint32_t clen;          /* canonical RDATA bytes, 0 when identical to the wire RDATA */
	uint32_t ttl;
	uint32_t line;          /* line of its file where it starts, for messages */
	uint16_t type;
	uint16_t file;          /* index into p53_zb.files */
};

struct p53_zb {
	const struct p53_zone_src *src;
	size_t n_zones;
	struct p53_image_zone *zones;

	struct p53_zb_node *nodes;
	struct p53_zb_nodex *nx;
	size_t n_nodes, nodes_cap, nx_cap;
	uint8_t *names;         /* canonical owner names, copied into the nodes' blocks */
	size_t names_len, names_cap;
	uint64_t *map;          /* (zone, name) -> name hash << 32 | node + 1, open addressing */
	uint32_t map_mask;

	struct p53_zb_rec *recs;
	size_t n_recs, recs_cap;
	uint8_t *arena;
	size_t arena_len, arena_cap;

	char **files;           /* every file read, for "file:line:" */
	size_t n_files, files_cap;
	size_t cfg_file;        /* 1 + index in files[] of the config file, when steered records
				   (p53_zone_src.extra) came from it; not a file the zone reads */

	char *err;
	size_t errlen;
	p53_warn_fn warn;
	void *warn_arg;
};

/** Grow *p (elements of `sz` bytes) so it holds at least `need`; 0 or -1 (out of memory). */
int p53_zb_grow(void **p, size_t *cap, size_t need, size_t sz);

/**
 * Node of a canonical name in zone z, created with its missing ancestors (up to the apex)
 * when absent. The name must be at or below the zone apex (zones[z] and its apex node set).
 * @return node index, or P53_NONE when out of memory.
 */
uint32_t p53_zb_node_get(struct p53_zb *b, uint32_t z, const uint8_t *name, size_t len);

/** Node of a canonical name in zone z, or P53_NONE. */
uint32_t p53_zb_node_find(const struct p53_zb *b, uint32_t z, const uint8_t *name, size_t len);

/** Add a path to b->files; its index, or -1 (out of memory). */
int p53_zb_file_add(struct p53_zb *b, const char *path);

/** Line where record r starts in its file. */
uint32_t p53_zb_rec_line(const struct p53_zb *b, const struct p53_zb_rec *r);

/** Set the error to "file:line: <fmt>" for record r; returns -1. */
int p53_zb_rec_err(struct p53_zb *b, const struct p53_zb_rec *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Send "file:line: <fmt>" for record r to the warning callback. */
void p53_zb_rec_warn(struct p53_zb *b, const struct p53_zb_rec *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Set the error to "<where>: <fmt>" (where is "file:line"); returns -1. */
int p53_zb_err(struct p53_zb *b, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Build state beyond the loader's: RRsets, the index, additional lists, DNSSEC facts. */
struct build {
	struct p53_zb zb;
	uint32_t *apexes;               /* zone indices sorted by apex name */
	struct p53_image_rrset *rrsets;
	uint32_t *rs_rec;               /* first kept record of each RRset */
	uint32_t *rs_sig;               /* first RRSIG record covering each RRset (sig_count) */
	size_t n_rrsets, rrsets_cap, rs_rec_cap;
	size_t n_kept;                  /* records after duplicate removal */
	size_t n_ignored;               /* of those, RRSIGs that cover no RRset (dnssec_build.c) */
	uint64_t *slots;
	uint32_t hash_mask;
	uint32_t *adds;
	size_t n_adds, adds_cap;
	size_t rdata_len;
	/* DNSSEC (control/zone/dnssec_build.c) */
	uint32_t *n3param;              /* per zone: its NSEC3PARAM RRset, or P53_NONE */
	struct p53_image_proof *proofs; /* per node; NULL when no zone is signed */
	uint32_t *chain;
	size_t n_chain;
	struct p53_image_nsec3 *nsec3;
	size_t n_nsec3;
};

/**
 * RRSIGs to the RRsets they cover (step 3c): each RRset gets the range of RRSIG records of
 * its owner whose Type Covered is its type; RRSIG RRsets leave the RRset list. Records each
 * zone's earliest signature expiration. Warns (file:line) about RRSIGs that cover nothing.
 * @return 0, or -1 with the error set.
 */
int p53_dnssec_attach(struct build *s);

/**
 * Step 2b, after the steered records of zone z are added: for each steered owner of a zone
 * signed with NSEC or NSEC3 whose chain does not hold it, when the zone has a signing key
 * (p53_zone_src.sign_key), the record a validator needs for NODATA there, made and signed
 * here: NSEC "OWNER NSEC <next> <types, RRSIG, NSEC>" at the owner, <next> the next name of the
 * zone's NSEC covering OWNER or the next steered owner before it (so it joins the chain and
 * proves names below and beside OWNER too, denying no served name); or, RFC 4470's minimal
 * covering, an NSEC3 whose owner is the owner's hash and whose next hash is that hash + 1
 * (the zone's parameters and flags; kept out of the hash table, step 5d makes it the owner's
 * match). TTL: the zone's NSEC or NSEC3 records'. They come from the config, as the steered
 * records do (P53_RRSET_STEERED: never read back into a transfer).
 * @return 0, or -1 with the error set.
 */
int p53_dnssec_steer_denial(struct build *s, uint32_t z);

/** The record of RRset `rs` seen first in the files (for messages): computed when asked, not
 *  kept, which saves 4 bytes an RRset at the compile's peak. */
static inline uint32_t p53_rs_first(const struct build *s, uint32_t rs)
{
	const struct p53_zb_rec *r = s->zb.recs;
	uint32_t first = s->rs_rec[rs];

	for (uint32_t i = first + 1; i < s->rs_rec[rs] + s->rrsets[rs].count; i++)
		if (r[i].seq < r[first].seq)
			first = i;
	return first;
}

/**
 * Give RRset `rrset` the RRSIG records recs[first .. first+count) (records of its owner,
 * Type Covered its type): layout() pre-encodes them after its records, workers send them with
 * it when DO=1, and the zone's earliest expiration counts them. p53_dnssec_attach() uses it for
 * the signatures of the zone file. (Steering variants live in the steering table, not the
 * image: they carry their RRSIGs there, control/steer/steer_build.c.)
 * @return 0, or -1 with the error set (more than 255 RRSIGs or 64 KiB of them).
 */
int p53_dnssec_sigs_set(struct build *s, uint32_t rrset, uint32_t first, uint32_t count);

/**
 * NSEC3 owners out of the name index, then the denial facts (step 5d): NSEC chain order,
 * NSEC3 hashes, per-node proofs (dataplane/image.h). Checks NSEC3PARAM and the chains and
 * warns about signed zones that cannot prove something.
 * @return 0, or -1 with the error set.
 */
int p53_dnssec_build(struct build *s);

/**
 * Parse zone z's master file (and its $INCLUDEs) into records and nodes. The zone's apex
 * node must already exist (zones[z].apex).
 * @return 0, or -1 with the error set.
 */
int p53_zone_load(struct p53_zb *b, uint32_t z);

#endif /* P53_ZONE_BUILD_H */
