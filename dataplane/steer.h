/*
 * The steering table: what a worker reads to pick the answer of a steered record (an owner
 * and type whose addresses depend on where the client is; docs/CONFIG.md, steering).
 *
 * One immutable buffer of offsets (like the zone image), built on the control thread
 * (control/steer/steer_build.c) and published with RCU (control/steer/steer_pub.c); every
 * worker and TCP thread reads the same copy. It holds:
 *
 *   - one longest-prefix table per location source (the subnet map, the GeoIP database, the
 *     ASN database),
 *     per family, compiled into disjoint CIDR blocks that cover the whole address space,
 *     sorted by start. Each block carries a location (a map entry, or a distinct GeoIP
 *     record) and its prefix length: the length of the largest block around the address
 *     inside which every address gets the same location. That length is the ECS scope
 *     (RFC 7871 §7.2.1): it is the matched subnet, shortened by a more specific entry inside
 *     it when there is one. A block with no location ("no match") is stored once per run of
 *     them, up to the next block (a sparse 1M-subnet map would otherwise store a gap block
 *     per bit of each path); its scope, the extent of the gap around the address, is computed
 *     by the lookup from the run's ends.
 *   - per steered record, a policy chain of steps; each step names a source and a decision
 *     array (one entry per location of that source) holding a variant or none (next step);
 *     after the last step the record's fallback variant. Two sources have no blocks:
 *     P53_STEER_SRC_ANY (one location for every client: priority) and P53_STEER_SRC_CLIENT
 *     (the client's /24 or /56 hashed into P53_STEER_BUCKETS locations: weighted, sticky).
 *     Each family's blocks have an index narrowing the search: IPv4 by /16, IPv6 by /19
 *     inside 2000::/3.
 *   - variants: pre-encoded answer RRsets, laid out exactly as the image's (image.h: owner
 *     pointer C0 0C, then TYPE CLASS TTL RDLENGTH RDATA per record, then the covering RRSIGs
 *     the same way when the zone has a signing key), so writing one is a memcpy. Health is folded in at build time: a variant only names healthy targets, and a
 *     health change publishes a new table.
 *
 * Per query the decision is one index read and a binary search over a few blocks per source
 * consulted, and two array reads.
 * Per-packet safe: no allocation, no locks, no syscalls. Thread-safe (read-only).
 */
#ifndef P53_STEER_H
#define P53_STEER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define P53_STEER_MAGIC   0x52545350u /* "PSTR" */
#define P53_STEER_SRC_MAP 0
#define P53_STEER_SRC_GEO 1
#define P53_STEER_SRC_ANY 2           /* no source: one location, scope 0 (priority) */
#define P53_STEER_SRC_CLIENT 3        /* the client's /24 or /56 hashed into a bucket (weighted, sticky) */
#define P53_STEER_SRC_ASN 4           /* the ASN database (policy asn) */
#define P53_STEER_SRCS    5
#define P53_STEER_BUCKETS 256         /* locations of P53_STEER_SRC_CLIENT */
#define P53_STEER_STEPS   4
#define P53_STEER_NOLOC   0xffffffu   /* block with no location (24 bits) */

/*
 * The index over the IPv4 blocks: for each value k of an address's first 16 bits, the block
 * holding address k << 16, i.e. the last block starting at or below it. The block of an
 * address whose first 16 bits are k lies between idx[k] and idx[k + 1] (the last block for
 * k = 65535), so the binary search runs over that range only: a few
 * blocks in a sparse table instead of log2(n) probes over all of them.
 */
#define P53_STEER_IDX_BITS 16
#define P53_STEER_IDX      (1u << P53_STEER_IDX_BITS)       /* uint32_t entries */

/*
 * The IPv6 index covers 2000::/3 (global unicast, where clients are) at /19 steps: entry k
 * (0..P53_STEER_IDX) is the block holding P53_STEER_IDX6_BASE + k << 109, the last one
 * (k = P53_STEER_IDX) that holding 4000::. An address in 2000::/3 searches idx[k]..idx[k + 1]
 * with k its bits 3..18; one below 2000:: searches 0..idx[0], one from 4000:: on
 * idx[P53_STEER_IDX]..n6 - 1. The leading 001 of every global address would otherwise use
 * 3 of the 16 index bits, leaving 2001::/16 one index entry.
 */
#define P53_STEER_IDX6_BASE  0x2000000000000000ull         /* high half of 2000:: */
#define P53_STEER_IDX6_SHIFT (64 - 3 - P53_STEER_IDX_BITS)  /* 45: bits 3..18 */
#define P53_STEER_IDX6       (P53_STEER_IDX + 1)            /* uint32_t entries */

struct p53_steer_src {
	uint32_t n4, off4;              /* IPv4 blocks (struct p53_steer_b4) */
	uint32_t n6, off6;              /* IPv6 blocks: uint64_t[n6], the high half of each start */
	uint32_t n_locs;
	uint32_t idx4_off;              /* uint32_t[P53_STEER_IDX] over the IPv4 blocks (n4 > 0) */
	uint32_t idx6_off;              /* uint32_t[P53_STEER_IDX6] over the IPv6 blocks (n6 > 0) */
	uint32_t aux6_off;              /* struct p53_steer_b6x[n6]: the rest of each IPv6 block */
};

/*
 * The merged map+GeoIP table: one search for a record whose chain reads both the subnet map
 * and the GeoIP blocks (a [map, geo] chain, whose map misses for most clients), instead of one
 * per source. Per family, a block per change of either source (the union of both sources'
 * block starts, sorted), each carrying both sources' loc_len as their own blocks hold them and
 * the index of each source's block (a gap's scope is computed from that source's own run, as
 * p53_steer_lookup does: the merged block is only a part of the run). Same index as a source's
 * (steer.h above); IPv6 as a source's, high halves alone, then the rest. A family is merged
 * only when both sources have blocks in it (n4 / n6 0 otherwise).
 */
struct p53_steer_mrg {
	uint32_t n4, start4_off;        /* uint32_t starts[n4], host order */
	uint32_t aux4_off;              /* struct p53_steer_mx[n4] */
	uint32_t idx4_off;              /* uint32_t[P53_STEER_IDX] over the starts (n4 > 0) */
	uint32_t n6, off6;              /* uint64_t[n6]: the high half of each start */
	uint32_t aux6_off;              /* struct p53_steer_m6x[n6] */
	uint32_t idx6_off;              /* uint32_t[P53_STEER_IDX6] (n6 > 0) */
};

/* A merged block: the map's and the GeoIP's loc_len and block index. */
struct p53_steer_mx {
	uint32_t ll_m, ll_g;
	uint32_t im, ig;
};

struct p53_steer_m6x {
	uint64_t lo;                    /* host order low half of the start address */
	uint32_t ll_m, ll_g;
	uint32_t im, ig;
};

struct p53_steer_hdr {
	uint32_t magic;
	uint32_t n_records;
	uint64_t size;
	uint32_t records_off;
	uint32_t n_variants;
	uint32_t variants_off;
	uint32_t dec_off;               /* uint32_t decisions[] */
	uint32_t rdata_off;
	uint32_t names_off;
	uint64_t generation;            /* stamped by each publish (steer_pub.c), never 0 there:
					   the pick cache's key (qcache.h); 0: never published */
	uint64_t layout;                /* the steered records' list it was built from
					   (p53_steer_conf.layout): an image of the same
					   steer_layout names its records by index (image.h) */
	uint64_t sig_expire;            /* earliest RRSIG expiration of the variants (unix
					   seconds); 0: no variant is signed */
	struct p53_steer_src src[P53_STEER_SRCS];
	struct p53_steer_mrg mrg;       /* map and GeoIP in one search */
};

/*
 * The location of a client for P53_STEER_SRC_CLIENT, as loc_len: its /24 (IPv4) or /56 (IPv6)
 * hashed (FNV-1a, then a murmur3 finaliser) into one of P53_STEER_BUCKETS, with that prefix
 * length as the scope. The control side uses the same function to explain a decision.
 */
static inline uint32_t p53_steer_bucket(const uint8_t v6, const uint8_t *addr)
{
	uint32_t h = 2166136261u;
	unsigned int n = v6 ? 7 : 3;

	for (unsigned int i = 0; i < n; i++)
		h = (h ^ addr[i]) * 16777619u;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	return (h & (P53_STEER_BUCKETS - 1)) << 8 | (v6 ? 56u : 24u);
}

/* loc_len = location << 8 | prefix length */
struct p53_steer_b4 {
	uint32_t start;                 /* host order */
	uint32_t loc_len;
};

/* An IPv6 block as the compiler makes it (control/steer/steer_build.c). */
struct p53_steer_b6 {
	uint64_t hi, lo;                /* host order halves of the start address */
	uint32_t loc_len;
	uint32_t pad;
};

/*
 * In the table, the IPv6 blocks are two arrays: the high halves of their starts alone
 * (uint64_t, what the binary search reads: 8 bytes a probe, one compare), and the rest. Most
 * blocks are /64 or shorter, so the high half tells the blocks apart and the search never
 * reads the low half: only an address whose high half equals the found block's (a block
 * longer than /64 may start in its /64) takes a second search over the whole starts.
 */
struct p53_steer_b6x {
	uint64_t lo;                    /* host order low half of the start address */
	uint32_t loc_len;
	uint32_t pad;
};

struct p53_steer_step {
	uint8_t src;                    /* P53_STEER_SRC_* */
	uint8_t pad[3];
	uint32_t dec;                   /* index into decisions[]: src.n_locs variant indices */
};

/*
 * A steered record. Its first 8 bytes are the lookup key, P53_STEER_KEY(hash, type, name_len)
 * in host order (the zero byte included), compared in one load by p53_steer_find. name_off
 * counts from the table's start (inside names[]), so the owner is one add away.
 */
struct p53_steer_rec {
	uint32_t hash;                  /* p53_name_hash of the owner */
	uint16_t type;
	uint8_t name_len;
	uint8_t zero;                   /* 0: the key's top byte */
	uint32_t name_off;              /* canonical owner, from the table's start (in names[]) */
	uint8_t n_steps;
	uint8_t mrg;                    /* P53_STEER_MRG4 | P53_STEER_MRG6: the chain reads the map
					   and the GeoIP blocks, and that family's merged table
					   (struct p53_steer_mrg) has blocks: one search for both */
	uint16_t next;                  /* 1 + the index of the next record with the same owner,
					   always a later one; 0: none (p53_steer_node) */
	uint32_t fallback;              /* variant after the last step */
	struct p53_steer_step steps[P53_STEER_STEPS];
};

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && offsetof(struct p53_steer_rec, zero) == 7,
	       "p53_steer_find reads the key as a little-endian word");

/* The key of struct p53_steer_rec's first 8 bytes, as a little-endian load reads them. */
#define P53_STEER_KEY(hash, type, len) \
	((uint64_t)(uint32_t)(hash) | (uint64_t)(uint16_t)(type) << 32 | (uint64_t)(uint8_t)(len) << 48)

#define P53_STEER_MRG4 1u
#define P53_STEER_MRG6 2u

struct p53_steer_variant {
	uint32_t rdata_off;             /* into rdata[] */
	uint32_t rdata_len;             /* the records; their RRSIGs follow (sig_len bytes) */
	uint16_t count;
	uint16_t sig_count;             /* RRSIGs over the records (signed zones: dnssec.signing_keys) */
	uint32_t ttl;
	uint32_t sig_len;
	/* RFC 1071 sums (folded, from an even offset) of the records, and of the records with
	   their RRSIGs: the reply's UDP checksum adds them instead of reading the bytes
	   (fastpath.c). Set by p53_steer_variant_sums() when the table is built, checked by
	   p53_steer_check(). */
	uint16_t sum;
	uint16_t sig_sum;
};

/* Where the client is, for a decision: the ECS address or the packet's source. */
struct p53_steer_client {
	uint8_t v6;
	uint8_t addr[16];               /* 4 bytes used for IPv4 */
};

static inline const struct p53_steer_hdr *p53_steer_hdr(const void *t)
{
	return (const struct p53_steer_hdr *)t;
}

static inline const struct p53_steer_variant *p53_steer_variant(const void *t, uint32_t i)
{
	return (const struct p53_steer_variant *)((const uint8_t *)t + p53_steer_hdr(t)->variants_off) + i;
}

static inline const uint8_t *p53_steer_rdata(const void *t, const struct p53_steer_variant *v)
{
	return (const uint8_t *)t + p53_steer_hdr(t)->rdata_off + v->rdata_off;
}

/**
 * Longest-prefix lookup of one address in a source's table.
 * @return loc_len of the block holding it (location << 8 | prefix length); outside every
 *         located block, P53_STEER_NOLOC << 8 | the length of the largest aligned block around
 *         the address that no located block overlaps; a table with no blocks gives
 *         P53_STEER_NOLOC << 8 | 0.
 */
uint32_t p53_steer_lookup(const void *t, unsigned int src, const struct p53_steer_client *cl);

/**
 * The merged search (struct p53_steer_mrg) of one address: the map's loc_len in the low 32
 * bits, the GeoIP's in the high, each exactly what p53_steer_lookup gives for that source.
 * The family's merged table must have blocks (h->mrg.n4 / n6 > 0).
 */
uint64_t p53_steer_lookup_mrg(const void *t, const struct p53_steer_client *cl);

/* memcmp(a, b, len) == 0, 8 bytes at a time for a name of 8 bytes or more: the first and last
 * words (overlapping when len < 16), the second (a name of 17..24 bytes: no loop), then the
 * words between; no library
 * call for the one name a steered query compares. */
static inline int p53_steer_same_name(const uint8_t *a, const uint8_t *b, size_t len)
{
	uint64_t x, u, v, w, y;
	size_t k;

	if (len < 8) {  /* a byte loop, not memcmp: no call, so its caller saves no registers */
		uint8_t d = 0;
		for (k = 0; k < len; k++)
			d |= a[k] ^ b[k];
		return d == 0;
	}
	memcpy(&u, a, 8);
	memcpy(&v, b, 8);
	memcpy(&w, a + len - 8, 8);
	memcpy(&y, b + len - 8, 8);
	x = (u ^ v) | (w ^ y);
	if (len <= 16)
		return x == 0;
	memcpy(&u, a + 8, 8);
	memcpy(&v, b + 8, 8);
	x |= u ^ v;
	for (k = 16; k + 8 < len; k += 8) {
		memcpy(&u, a + k, 8);
		memcpy(&v, b + k, 8);
		x |= u ^ v;
	}
	return x == 0;
}

/** The steered record of an owner and type, or NULL. Inline: the fast path's one call per
 * steered query costs no call or saved registers. */
static inline const struct p53_steer_rec *p53_steer_find(const void *t, const uint8_t *name, uint8_t len,
							  uint32_t hash, uint16_t type)
{
	const struct p53_steer_hdr *h = p53_steer_hdr(t);
	const struct p53_steer_rec *r = (const struct p53_steer_rec *)((const uint8_t *)t + h->records_off);
	const struct p53_steer_rec *end = r + h->n_records;
	const uint64_t key = P53_STEER_KEY(hash, type, len);

	/* A handful of steered records per node: a scan beats a hash table here. The hash, type
	 * and length in one compare (the record's first 8 bytes), then the name. */
	for (; r < end; r++) {
		uint64_t k;
		memcpy(&k, r, sizeof(k));
		if (k == key && p53_steer_same_name((const uint8_t *)t + r->name_off, name, len))
			return r;
	}
	return NULL;
}

/**
 * The steered record of type `type` at an image node, by the node's index (image.h
 * p53_image_node.steer) when the table was built from the image's list of steered records
 * (the same layout): no name compared.
 * @return 1 with *r set (NULL: the owner has no record of that type), or 0 when the index
 *         does not hold for this table (an image and a table published apart during a
 *         reload, a node a patch added): the caller looks it up by name (p53_steer_find).
 */
static inline int p53_steer_at(const void *t, uint64_t layout, uint32_t at, uint16_t type,
			       const struct p53_steer_rec **r)
{
	const struct p53_steer_hdr *h = p53_steer_hdr(t);

	if (__builtin_expect(h->layout != layout || at - 1u >= h->n_records, 0))
		return 0;
	const struct p53_steer_rec *recs = (const struct p53_steer_rec *)((const uint8_t *)t + h->records_off);
	const struct p53_steer_rec *x = recs + at - 1;
	/* The owner's records in a chain (p53_steer_check: each next is a later record). */
	while (x->type != type) {
		if (x->next == 0) {
			x = NULL;
			break;
		}
		x = recs + x->next - 1;
	}
	*r = x;
	return 1;
}

/** p53_steer_at(), else p53_steer_find() by the owner's name. */
static inline const struct p53_steer_rec *p53_steer_node(const void *t, uint64_t layout, uint32_t at,
							  const uint8_t *name, uint8_t len,
							  uint32_t hash, uint16_t type)
{
	const struct p53_steer_rec *r;

	if (p53_steer_at(t, layout, at, type, &r))
		return r;
	return p53_steer_find(t, name, len, hash, type);
}


/**
 * Pick the variant of a record for a client: walk the policy chain, looking each source up
 * once; the first step whose decision names a variant wins, else the fallback.
 *
 * @param cl     the client, or NULL when unknown (then the fallback, scope 0)
 * @param scope  set to the longest prefix length among the blocks consulted: what the
 *               answer depended on
 */
static inline const struct p53_steer_variant *p53_steer_pick(const void *t, const struct p53_steer_rec *r,
							     const struct p53_steer_client *cl, uint8_t *scope);

/** The sums of a variant's bytes as struct p53_steer_variant keeps them: *sum over the
 * records, *sig_sum over the records and their RRSIGs. */
void p53_steer_variant_sums(const void *t, const struct p53_steer_variant *v, uint16_t *sum,
			    uint16_t *sig_sum);

/**
 * Check a table before workers read it without bounds checks: sections inside, indices in
 * range, and each variant's records and RRSIGs filling exactly rdata_len + sig_len bytes
 * (the writer walks them by their RDLENGTH when it cannot memcpy), with the sums of its bytes.
 * @return 0, or -EINVAL with *why set.
 */
int p53_steer_check(const void *t, size_t len, const char **why);

#include "dataplane/steer_pick.h"

#endif /* P53_STEER_H */
