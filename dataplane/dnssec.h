/*
 * DNSSEC record selection for the responder: which NSEC or NSEC3 records prove a denial of
 * existence (RFC 4035 §3.1.3, RFC 5155 §7.2), over the image's precomputed facts
 * (struct p53_image_proof in dataplane/image.h).
 *
 * Every function here reads an immutable image only (and writes the calling thread's own
 * next closer cache): no allocation, lock or syscall; safe on any lcore. What does not depend
 * on the query name was worked out by the compiler (control/zone/dnssec_build.c). What does
 * costs one binary search: for NSEC, among the NSEC owners below the closest encloser, on the
 * one label below it; for NSEC3, among the zone's hashes after one NSEC3 hash (SHA-1, plus
 * the zone's extra iterations) of the next closer name, both skipped when this thread's next
 * closer cache (below) has the name. RRSIGs need no selection: each RRset carries its own
 * (image.h).
 *
 * The answer engine (answer.c) asks for the records of a situation (name error, no data,
 * referral without DS, wildcard expansion) and writes the RRset of each returned node (the
 * NSEC or NSEC3 RRset, p53_dnssec_rrset()) with its RRSIGs to the authority section.
 */
#ifndef P53_DNSSEC_H
#define P53_DNSSEC_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/image.h"

#define P53_DENIAL_MAX 4 /* RFC 5155 §7.2.5: NSEC3 NODATA after a wildcard needs three; +1 */

/* Nodes whose NSEC/NSEC3 RRset goes to the authority section, without repeats. */
struct p53_denial {
	uint32_t node[P53_DENIAL_MAX];
	uint8_t n;
};

/* The name being resolved, canonical (lower case), with its label offsets (dnsmsg.h). */
struct p53_dname {
	const uint8_t *name;
	const uint8_t *loff;    /* loff[i]: offset of label i; loff[labels]: the root label */
	uint8_t len;
	uint8_t labels;
	uint32_t hash;          /* p53_name_hash(name, len) (name.h), or 0: not known */
};

#define P53_NSEC3_CACHE_SETS 256 /* the next closer cache (below): sets of 2, by name hash */

/* This thread's next closer cache (below). */
struct p53_nsec3_cache_stats {
	uint64_t hits;          /* the hash came from the cache */
	uint64_t misses;        /* computed, and put in the cache */
	uint64_t uncached;      /* computed, not kept: name and salt over 80 octets, or disabled */
};

/**
 * The NSEC3 proofs' one per-query hash, of the next closer name, goes through a cache of this
 * thread (a worker's is its own): 256 sets of 2 entries, 64 KiB, keyed on the name, salt and
 * iterations themselves (so never stale), each entry also remembering the NSEC3 its hash falls
 * on in the image of one generation (p53_image_hdr.generation, unique per publish; none for 0).
 * A hit costs a compare of the name instead of the SHA-1s. Turning it off (tests) or on again
 * empties it.
 */
void p53_nsec3_cache_enable(int on);

/** This thread's counts since it started. */
void p53_nsec3_cache_stats(struct p53_nsec3_cache_stats *st);

/**
 * Where this thread's counts live, for another thread to read (racily, as plain 64-bit loads,
 * as worker counters are read): valid while the thread lives. The worker publishes its own at
 * start (struct p53_worker.nsec3).
 */
const struct p53_nsec3_cache_stats *p53_nsec3_cache_counters(void);

/**
 * NSEC3 hash of a canonical wire name (RFC 5155 §5): IH(salt, x, 0) = H(x || salt),
 * IH(salt, x, k) = H(IH(salt, x, k-1) || salt), SHA-1, `iter` extra iterations.
 * Uses OpenSSL's low-level SHA-1 (no allocation, no lock). Any thread.
 */
void p53_nsec3_hash(const uint8_t *name, size_t len, const uint8_t *salt, uint8_t salt_len,
		    uint16_t iter, uint8_t out[P53_NSEC3_HASH_LEN]);

/**
 * The NSEC3 of zone `z` that matches or covers `hash` (RFC 5155 §3: owner hash < hash < next
 * hashed owner, the last one wrapping around).
 * @param exact  set to 1 when the owner's hash equals `hash`, else 0
 * @return its node, or P53_NONE when the zone has no NSEC3.
 */
uint32_t p53_nsec3_find(const void *img, const struct p53_image_zone *z,
			const uint8_t hash[P53_NSEC3_HASH_LEN], int *exact);

/**
 * The NSEC covering a name that does not exist below node `ce` (its closest encloser) and
 * whose label just below `ce` is `label` (canonical, length byte first).
 * @return the node owning that NSEC, or P53_NONE.
 */
uint32_t p53_nsec_cover(const void *img, const struct p53_image_zone *z, uint32_t ce,
			const uint8_t *label);

/** The NSEC or NSEC3 RRset (by the zone's kind) of a node p53_dnssec_* returned; P53_NONE. */
static inline uint32_t p53_dnssec_rrset(const void *img, uint32_t zone, uint32_t node)
{
	const struct p53_image_zone *z = p53_image_zone(img, zone);
	uint16_t t = (z->dnssec & P53_ZONE_NSEC3) ? 50 /* NSEC3 */ : 47 /* NSEC */;
	const struct p53_image_node *n = p53_image_znode(img, z, node);

	/* An NSEC3 owner's only RRset (image.h) is its first: no search. */
	if (n->n_rrsets != 0 && p53_image_zrrset(img, z, n->rrsets)->type == t)
		return n->rrsets;
	return p53_image_node_rrset(img, n, t);
}

/**
 * Name error: `nm` does not exist, its closest encloser is node `ce` and it has no wildcard.
 * RFC 4035 §3.1.3.2 (the NSEC covering the name, the NSEC covering the wildcard) or RFC 5155
 * §7.2.2 (closest encloser proof, then the NSEC3 covering the wildcard).
 */
void p53_dnssec_nxdomain(const void *img, uint32_t zone, uint32_t ce, const struct p53_dname *nm,
			 struct p53_denial *d);

/**
 * No data: node `n` exists but not with the type asked. `ce` is P53_NONE, or the closest
 * encloser when `n` is the wildcard that `nm` expanded (RFC 4035 §3.1.3.4, RFC 5155 §7.2.5).
 * Also used for a referral to a delegation without DS (RFC 4035 §3.1.4.1; RFC 5155 §7.2.7
 * with opt-out) and a DS question there (RFC 5155 §7.2.4).
 */
void p53_dnssec_nodata(const void *img, uint32_t zone, uint32_t n, uint32_t ce,
		       const struct p53_dname *nm, struct p53_denial *d);

/**
 * Wildcard answer: `nm` was synthesized from the wildcard child of `ce`. The NSEC covering
 * `nm` (RFC 4035 §3.1.3.3) or the NSEC3 covering its next closer name (RFC 5155 §7.2.6).
 * @return that node, or P53_NONE.
 */
uint32_t p53_dnssec_wildcard(const void *img, uint32_t zone, uint32_t ce, const struct p53_dname *nm);

/**
 * Check the DNSSEC sections and every index in them (called by p53_image_check()).
 * @return 0 or -EINVAL.
 */
int p53_dnssec_image_check(const void *img, size_t len);

#endif /* P53_DNSSEC_H */
