/*
 * The steering decision, inline (steer.h): p53_steer_pick and the lookups it runs, so the
 * fast path's steered answer makes no call for them (one set of saved registers). Included
 * by steer.h; the rare 128-bit IPv6 search stays out of line in steer.c.
 */
#ifndef P53_STEER_PICK_H
#define P53_STEER_PICK_H

#include <stdint.h>

#include "dataplane/steer.h"

uint32_t p53_steer_lookup6_long(const struct p53_steer_src *s, const uint64_t *key,
				const struct p53_steer_b6x *x, uint32_t from, uint32_t at,
				uint64_t hi, uint64_t lw);
uint64_t p53_steer_mlookup6_long(const void *t, uint64_t hi, const uint8_t *addr, int want_scope);
const struct p53_steer_variant *p53_steer_pick6_other(const void *t, const struct p53_steer_rec *r,
						      const uint8_t *addr, uint8_t *scope);

static inline uint32_t p53_steer_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t p53_steer_be64(const uint8_t *p)
{
	return (uint64_t)p53_steer_be32(p) << 32 | p53_steer_be32(p + 4);
}

/* Bits a and b share from the top, +1: the length of the longest prefix of a that excludes b
 * (a != b). */
static inline unsigned int p53_steer_split32(uint32_t a, uint32_t b)
{
	return (unsigned int)__builtin_clz(a ^ b) + 1;
}

static inline unsigned int p53_steer_split128(uint64_t ah, uint64_t al, uint64_t bh, uint64_t bl)
{
	return ah != bh ? (unsigned int)__builtin_clzll(ah ^ bh) + 1 : 64u + (unsigned int)__builtin_clzll(al ^ bl) + 1;
}

static inline unsigned int p53_steer_max_u(unsigned int a, unsigned int b)
{
	return a > b ? a : b;
}

static inline unsigned int p53_steer_split64(uint64_t a, uint64_t b)
{
	return (unsigned int)__builtin_clzll(a ^ b) + 1;
}

/* The scope of an IPv4 address a in the run with no location that starts at block lo (of n):
 * the longest of the prefixes of a that exclude the address before the run and the next
 * block's start. */
static inline __attribute__((always_inline)) unsigned int p53_steer_gap4(const struct p53_steer_b4 *b, uint32_t n,
									 uint32_t lo, uint32_t a)
{
	unsigned int len = b[lo].start == 0 ? 0 : p53_steer_split32(a, b[lo].start - 1);
	if (lo + 1 < n)
		len = p53_steer_max_u(len, p53_steer_split32(a, b[lo + 1].start));
	return len;
}

/* The same for IPv6 when the high half of the run's start is below the address's (hi): a
 * 64-bit count (p53_steer_lookup6). */
static inline __attribute__((always_inline)) unsigned int p53_steer_gap6(const uint64_t *key, const struct p53_steer_b6x *x,
									 uint32_t n, uint32_t lo, uint64_t hi)
{
	unsigned int len = lo == 0 ? 0 : p53_steer_split64(hi, key[lo] - (x[lo].lo == 0));
	if (lo + 1 < n)
		len = p53_steer_max_u(len, p53_steer_split64(hi, key[lo + 1]));
	return len;
}

/* The IPv6 blocks a search for the high half hi covers, from the index idx (steer.h) over *n
 * blocks (*n > 0; read only outside 2000::/3, so passed by address: a value would be loaded
 * on every path): in 2000::/3 (always when glob, a constant: the caller checked) the bucket of
 * hi's bits below the /3, else every block below P53_STEER_IDX6_BASE, or every one from the
 * last bucket's end. lo, last: the first and last block (last >= lo). Shared by
 * p53_steer_lookup6 and p53_steer_mlookup6; always inline, as they are, so it costs no call. */
struct p53_steer_range {
	uint32_t lo, last;
};

static inline __attribute__((always_inline)) struct p53_steer_range
p53_steer_range6(const uint32_t *idx, const uint32_t *n, uint64_t hi, const int glob)
{
	struct p53_steer_range r;

	if (glob || __builtin_expect(hi >> 61 == 1, 1)) {      /* in 2000::/3 */
		const uint32_t *ik = idx + ((uint32_t)(hi >> P53_STEER_IDX6_SHIFT) & (P53_STEER_IDX - 1));
		r.lo = ik[0];
		r.last = ik[1];
	} else if (hi < P53_STEER_IDX6_BASE) {
		r.lo = 0;
		r.last = idx[0];
	} else {
		r.lo = idx[P53_STEER_IDX];
		r.last = *n - 1;
	}
	return r;
}

/* The last of the n blocks from lo whose high half (key) is at or below hi (key[lo] is; n >=
 * 1): first the n - m above a power of two m <= n, then steps m/2, m/4 .. 1, each a compare
 * and a conditional move, no loop counter beside the step (n == 1: m = 1, key[lo] read again).
 * Shared by p53_steer_lookup6 and p53_steer_mlookup6, always inline. */
static inline __attribute__((always_inline)) uint32_t p53_steer_search6(const uint64_t *key, uint32_t lo, uint32_t n,
									 uint64_t hi)
{
	uint32_t m = 1u << (31 - __builtin_clz(n));

	if (key[lo + n - m] <= hi)
		lo += n - m;
	for (m >>= 1; m > 0; m >>= 1)
		if (key[lo + m] <= hi)
			lo += m;
	return lo;
}

/* The blocks cover the whole space from 0 up, so the last block starting at or below the
 * address holds it: a binary search for it, over the blocks the index leaves (steer.h). A
 * block with no location is a run up to the next block: its scope is the longest of the
 * prefixes of the address that exclude the address before the run and the next block's
 * start, i.e. the largest aligned block around the address inside the run.
 *
 * IPv6 searches the high halves of the starts only. When the found block's high half is
 * below the address's (the rule: blocks of /64 or shorter, an address past the first /64 of a
 * longer block), every later block's is above it, so both ends of a gap differ from the
 * address in the high half and the scope is a 64-bit count: the address before the run has
 * the high half key - 1 (a run starting on a /64 boundary) or key (inside a /64), and the
 * next start has key[lo + 1]. Otherwise p53_steer_lookup6_long (steer.c). */
static inline __attribute__((always_inline)) uint32_t p53_steer_lookup4(const uint8_t *base, const struct p53_steer_src *s,
							      uint32_t a, const int want_scope)
{
	const struct p53_steer_b4 *b = (const struct p53_steer_b4 *)(base + s->off4);
	const uint32_t *idx = (const uint32_t *)(base + s->idx4_off);
	uint32_t k = a >> (32 - P53_STEER_IDX_BITS);

	if (s->n4 == 0)
		return P53_STEER_NOLOC << 8;
	uint32_t lo = idx[k];
	uint32_t n = (k + 1 < P53_STEER_IDX ? idx[k + 1] : s->n4 - 1) - lo + 1;
	while (n > 1) {
		uint32_t half = n / 2;
		if (b[lo + half].start <= a)
			lo += half;
		n -= half;
	}
	if (b[lo].loc_len >> 8 != P53_STEER_NOLOC || !want_scope)
		return b[lo].loc_len;
	return P53_STEER_NOLOC << 8 | p53_steer_gap4(b, s->n4, lo, a);
}

/* hi: the address's high half; addr: the whole address, read again only by lookup6_long.
 * glob (a constant): 1 when the caller knows the address is in 2000::/3, so the search range
 * is always idx[k]..idx[k + 1] (no test per lookup: p53_steer_pick_addr). want_scope (a
 * constant, in both lookups): 0 when the caller echoes no scope (a query without ECS, or ECS
 * SOURCE 0); then a block with no location gives its loc_len as stored (P53_STEER_NOLOC and
 * a prefix length the caller ignores) without the gap's extent: the location alone picks the
 * variant. */
static inline __attribute__((always_inline)) uint32_t p53_steer_lookup6(const uint8_t *base, const struct p53_steer_src *s,
							      uint64_t hi, const uint8_t *addr, const int glob,
							      const int want_scope)
{
	const uint64_t *key = (const uint64_t *)(base + s->off6);
	const struct p53_steer_b6x *x = (const struct p53_steer_b6x *)(base + s->aux6_off);
	const uint32_t *idx = (const uint32_t *)(base + s->idx6_off);

	if (s->n6 == 0)
		return P53_STEER_NOLOC << 8;
	const struct p53_steer_range rg = p53_steer_range6(idx, &s->n6, hi, glob);
	uint32_t lo = rg.lo, last = rg.last;
	/* The block (p53_steer_search6; n >= 1: last >= lo). Without a scope to compute (a query
	 * without ECS: mostly a client's own /56, in a range of several blocks) no test for a
	 * range of one block, whose one probe reads key[lo] again; with it (ECS: any /56, often
	 * alone in its /19) the test (docs/BENCHMARKS.md, "Steered answers after Round 3"). */
	uint32_t from = lo, n = last - lo + 1;
	if (!want_scope || n > 1)
		lo = p53_steer_search6(key, lo, n, hi);
	if (__builtin_expect(key[lo] == hi, 0))
		return p53_steer_lookup6_long(s, key, x, from, lo, hi, p53_steer_be64(addr + 8));
	uint32_t ll = x[lo].loc_len;
	if (ll >> 8 != P53_STEER_NOLOC || !want_scope)
		return ll;
	return P53_STEER_NOLOC << 8 | p53_steer_gap6(key, x, s->n6, lo, hi);
}

/* The merged search (struct p53_steer_mrg; the family's table has blocks): the map's loc_len
 * in the low half of the result, the GeoIP's in the high, as p53_steer_lookup4 /
 * p53_steer_lookup6 give them. The merged block lies inside one block of each source, the one
 * its im / ig names (every source block starts a merged block), so a located source's loc_len
 * is that block's and a gap's scope that block's run's, computed as the source's own lookup
 * does. */
static inline __attribute__((always_inline)) uint64_t p53_steer_mlookup4(const uint8_t *base, const struct p53_steer_hdr *h,
								 uint32_t a, const int want_scope)
{
	const struct p53_steer_mrg *m = &h->mrg;
	const uint32_t *st = (const uint32_t *)(base + m->start4_off);
	const uint32_t *idx = (const uint32_t *)(base + m->idx4_off);
	uint32_t k = a >> (32 - P53_STEER_IDX_BITS);
	uint32_t lo = idx[k];
	uint32_t n = (k + 1 < P53_STEER_IDX ? idx[k + 1] : m->n4 - 1) - lo + 1;

	while (n > 1) {
		uint32_t half = n / 2;
		if (st[lo + half] <= a)
			lo += half;
		n -= half;
	}
	const struct p53_steer_mx *x = (const struct p53_steer_mx *)(base + m->aux4_off) + lo;
	uint32_t llm = x->ll_m, llg = x->ll_g;
	if (want_scope) {
		const struct p53_steer_src *sm = h->src + P53_STEER_SRC_MAP, *sg = h->src + P53_STEER_SRC_GEO;
		if (llm >> 8 == P53_STEER_NOLOC)
			llm = P53_STEER_NOLOC << 8 |
			      p53_steer_gap4((const struct p53_steer_b4 *)(base + sm->off4), sm->n4, x->im, a);
		if (llg >> 8 == P53_STEER_NOLOC)
			llg = P53_STEER_NOLOC << 8 |
			      p53_steer_gap4((const struct p53_steer_b4 *)(base + sg->off4), sg->n4, x->ig, a);
	}
	return (uint64_t)llg << 32 | llm;
}

/* hi, addr, glob, want_scope as p53_steer_lookup6's. A merged block whose high half is the
 * address's (a block longer than /64 may start in its /64) is left to both sources' own
 * lookups (p53_steer_mlookup6_long, steer.c): below it, every later block's high half is
 * above the address's, so each source's is too (the next source block starts a merged block)
 * and p53_steer_gap6's 64-bit count holds for the source's run. */
static inline __attribute__((always_inline)) uint64_t p53_steer_mlookup6(const uint8_t *base, const struct p53_steer_hdr *h,
								 uint64_t hi, const uint8_t *addr, const int glob,
								 const int want_scope)
{
	const struct p53_steer_mrg *m = &h->mrg;
	const uint64_t *key = (const uint64_t *)(base + m->off6);
	const uint32_t *idx = (const uint32_t *)(base + m->idx6_off);
	const struct p53_steer_range rg = p53_steer_range6(idx, &m->n6, hi, glob);
	uint32_t lo = p53_steer_search6(key, rg.lo, rg.last - rg.lo + 1, hi);

	if (__builtin_expect(key[lo] == hi, 0))
		return p53_steer_mlookup6_long(base, hi, addr, want_scope);
	const struct p53_steer_m6x *x = (const struct p53_steer_m6x *)(base + m->aux6_off) + lo;
	uint32_t llm = x->ll_m, llg = x->ll_g;
	if (want_scope) {
		const struct p53_steer_src *sm = h->src + P53_STEER_SRC_MAP, *sg = h->src + P53_STEER_SRC_GEO;
		if (llm >> 8 == P53_STEER_NOLOC)
			llm = P53_STEER_NOLOC << 8 |
			      p53_steer_gap6((const uint64_t *)(base + sm->off6),
					     (const struct p53_steer_b6x *)(base + sm->aux6_off), sm->n6, x->im, hi);
		if (llg >> 8 == P53_STEER_NOLOC)
			llg = P53_STEER_NOLOC << 8 |
			      p53_steer_gap6((const uint64_t *)(base + sg->off6),
					     (const struct p53_steer_b6x *)(base + sg->aux6_off), sg->n6, x->ig, hi);
	}
	return (uint64_t)llg << 32 | llm;
}

/* The sources with blocks to look up (not P53_STEER_SRC_ANY or P53_STEER_SRC_CLIENT), as a
 * mask: one test per source change instead of a compare per kind. */
#define P53_STEER_TABLE_SRCS (1u << P53_STEER_SRC_MAP | 1u << P53_STEER_SRC_GEO | 1u << P53_STEER_SRC_ASN)

/* The policy chain for one family (v6, glob: constants, so the compiler makes one loop per
 * case, the address read once; glob as in p53_steer_lookup6). A source is looked up once per
 * run of steps naming it (a chain such as geo country -> geo continent reads the GeoIP blocks
 * once); a chain that comes back to an earlier source looks it up again, and gets the same
 * answer. addr: 16 bytes (IPv6) or 4 (IPv4), network order. */
static inline __attribute__((always_inline)) const struct p53_steer_variant *
p53_steer_pick_fam(const void *t, const struct p53_steer_rec *r, const uint8_t *addr, const int v6,
		   const int glob, uint8_t *scope, const int want_scope)
{
	const struct p53_steer_hdr *h = p53_steer_hdr(t);
	const uint32_t *dec = (const uint32_t *)((const uint8_t *)t + h->dec_off);
	uint32_t a4 = v6 ? 0 : p53_steer_be32(addr);
	uint64_t a6 = v6 ? p53_steer_be64(addr) : 0;
	unsigned int last = P53_STEER_SRCS;
	uint32_t ll = 0;
	uint8_t sc = 0;
	/* A chain reading the map and the GeoIP blocks: both from one search, up front, each
	 * source's loc_len read back by its index; `mg` the sources taken from it, as a mask (a
	 * bit test per source change, no compare and test, no shift of the pair). */
	const unsigned int mg = r->mrg & (v6 ? P53_STEER_MRG6 : P53_STEER_MRG4) ?
				1u << P53_STEER_SRC_MAP | 1u << P53_STEER_SRC_GEO : 0u;
	uint32_t both[2] = {0, 0};

	if (mg) {
		uint64_t b = v6 ? p53_steer_mlookup6(t, h, a6, addr, glob, want_scope)
				: p53_steer_mlookup4(t, h, a4, want_scope);
		both[P53_STEER_SRC_MAP] = (uint32_t)b;
		both[P53_STEER_SRC_GEO] = (uint32_t)(b >> 32);
	}
	for (const struct p53_steer_step *st = r->steps, *end = st + r->n_steps; st < end; st++) {
		if (st->src != last) {
			last = st->src;
			const struct p53_steer_src *s = h->src + last;
			ll = mg >> last & 1u ? both[last & 1u] :
			     P53_STEER_TABLE_SRCS >> last & 1u ?
			     (v6 ? p53_steer_lookup6(t, s, a6, addr, glob, want_scope)
				 : p53_steer_lookup4(t, s, a4, want_scope))
			   : last == P53_STEER_SRC_CLIENT ? p53_steer_bucket((uint8_t)v6, addr) : 0;
			if (want_scope && (uint8_t)ll > sc)
				sc = (uint8_t)ll;
		}
		uint32_t loc = ll >> 8;
		if (loc == P53_STEER_NOLOC)
			continue;
		uint32_t v = dec[st->dec + loc];
		if (v != UINT32_MAX) {
			*scope = sc;
			return p53_steer_variant(t, v);
		}
	}
	*scope = sc;
	return p53_steer_variant(t, r->fallback);
}

/* p53_steer_pick for a known client address (addr: 16 bytes when v6, else 4; network order),
 * read in place: the fast path passes the packet's source without copying it. IPv6 outside
 * 2000::/3 (rare for clients) is picked out of line (steer.c). want_scope (a constant): 0
 * when the caller echoes no scope; *scope is then 0. */
static inline __attribute__((always_inline)) const struct p53_steer_variant *
p53_steer_pick_addr_s(const void *t, const struct p53_steer_rec *r, int v6, const uint8_t *addr,
		      uint8_t *scope, const int want_scope)
{
	if (!v6)
		return p53_steer_pick_fam(t, r, addr, 0, 0, scope, want_scope);
	if (__builtin_expect(addr[0] >> 5 == 1, 1))
		return p53_steer_pick_fam(t, r, addr, 1, 1, scope, want_scope);
	return p53_steer_pick6_other(t, r, addr, scope);
}

static inline __attribute__((always_inline)) const struct p53_steer_variant *
p53_steer_pick_addr(const void *t, const struct p53_steer_rec *r, int v6, const uint8_t *addr,
		    uint8_t *scope)
{
	return p53_steer_pick_addr_s(t, r, v6, addr, scope, 1);
}

static inline const struct p53_steer_variant *p53_steer_pick(const void *t, const struct p53_steer_rec *r,
							     const struct p53_steer_client *cl, uint8_t *scope)
{
	if (cl == NULL) {
		*scope = 0;
		return p53_steer_variant(t, r->fallback);
	}
	return p53_steer_pick_addr(t, r, cl->v6, cl->addr, scope);
}

#endif /* P53_STEER_PICK_H */
