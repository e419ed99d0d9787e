/* Steering decisions over the published table; see steer.h. */
#include <errno.h>
#include <string.h>

#include "dataplane/image.h"
#include "dataplane/steer.h"
#include "dataplane/wire.h"

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* Bits a and b share from the top, +1: the length of the longest prefix of a that excludes b
 * (a != b). */
static inline unsigned int split32(uint32_t a, uint32_t b)
{
	return (unsigned int)__builtin_clz(a ^ b) + 1;
}

static inline unsigned int split128(uint64_t ah, uint64_t al, uint64_t bh, uint64_t bl)
{
	return ah != bh ? (unsigned int)__builtin_clzll(ah ^ bh) + 1 : 64u + (unsigned int)__builtin_clzll(al ^ bl) + 1;
}

static inline unsigned int max_u(unsigned int a, unsigned int b)
{
	return a > b ? a : b;
}

static inline unsigned int split64(uint64_t a, uint64_t b)
{
	return (unsigned int)__builtin_clzll(a ^ b) + 1;
}

/* An IPv6 address whose high half equals that of the last block starting at or below it
 * (`at`; steer.h, struct p53_steer_b6x): blocks longer than /64 may share that half, so the
 * search is redone over whole starts, from `from` (a block starting at or below the address)
 * to `at`, and a gap's scope computed from 128-bit ends. Out of line: the common lookup never
 * comes here. */
static __attribute__((noinline, cold)) uint32_t lookup6_long(const struct p53_steer_src *s,
							      const uint64_t *key, const struct p53_steer_b6x *x,
							      uint32_t from, uint32_t at, uint64_t hi, uint64_t lw)
{
	uint32_t lo = from, n = at - from + 1;

	while (n > 1) {
		uint32_t half = n / 2;
		if (key[lo + half] < hi || (key[lo + half] == hi && x[lo + half].lo <= lw))
			lo += half;
		n -= half;
	}
	if (x[lo].loc_len >> 8 != P53_STEER_NOLOC)
		return x[lo].loc_len;
	unsigned int len = 0;
	if (key[lo] != 0 || x[lo].lo != 0)
		len = split128(hi, lw, key[lo] - (x[lo].lo == 0), x[lo].lo - 1);
	if (lo + 1 < s->n6)
		len = max_u(len, split128(hi, lw, key[lo + 1], x[lo + 1].lo));
	return P53_STEER_NOLOC << 8 | len;
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
 * next start has key[lo + 1]. Otherwise lookup6_long. */
static inline __attribute__((always_inline)) uint32_t lookup4(const uint8_t *base, const struct p53_steer_src *s,
							      uint32_t a)
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
	if (b[lo].loc_len >> 8 != P53_STEER_NOLOC)
		return b[lo].loc_len;
	unsigned int len = b[lo].start == 0 ? 0 : split32(a, b[lo].start - 1);
	if (lo + 1 < s->n4)
		len = max_u(len, split32(a, b[lo + 1].start));
	return P53_STEER_NOLOC << 8 | len;
}

/* hi: the address's high half; addr: the whole address, read again only by lookup6_long. */
static inline __attribute__((always_inline)) uint32_t lookup6(const uint8_t *base, const struct p53_steer_src *s,
							      uint64_t hi, const uint8_t *addr)
{
	const uint64_t *key = (const uint64_t *)(base + s->off6);
	const struct p53_steer_b6x *x = (const struct p53_steer_b6x *)(base + s->aux6_off);
	const uint32_t *idx = (const uint32_t *)(base + s->idx6_off);

	if (s->n6 == 0)
		return P53_STEER_NOLOC << 8;
	uint32_t lo, last;
	if (__builtin_expect(hi >> 61 == 1, 1)) {      /* in 2000::/3 */
		uint32_t k = (uint32_t)(hi >> P53_STEER_IDX6_SHIFT) & (P53_STEER_IDX - 1);
		lo = idx[k];
		last = idx[k + 1];
	} else if (hi < P53_STEER_IDX6_BASE) {
		lo = 0;
		last = idx[0];
	} else {
		lo = idx[P53_STEER_IDX];
		last = s->n6 - 1;
	}
	/* The last of the n blocks from lo whose key is at or below hi (key[lo] is): first the
	 * n - m above a power of two m <= n, then steps m/2, m/4 .. 1 (each a compare and a
	 * conditional move, no loop counter beside the step). */
	uint32_t from = lo, n = last - lo + 1;
	if (n > 1) {
		uint32_t m = 1u << (31 - __builtin_clz(n));
		if (key[lo + n - m] <= hi)
			lo += n - m;
		for (m >>= 1; m > 0; m >>= 1)
			if (key[lo + m] <= hi)
				lo += m;
	}
	if (__builtin_expect(key[lo] == hi, 0))
		return lookup6_long(s, key, x, from, lo, hi, be64(addr + 8));
	uint32_t ll = x[lo].loc_len;
	if (ll >> 8 != P53_STEER_NOLOC)
		return ll;
	unsigned int len = lo == 0 ? 0 : split64(hi, key[lo] - (x[lo].lo == 0));
	if (lo + 1 < s->n6)
		len = max_u(len, split64(hi, key[lo + 1]));
	return P53_STEER_NOLOC << 8 | len;
}

uint32_t p53_steer_lookup(const void *t, unsigned int src, const struct p53_steer_client *cl)
{
	const struct p53_steer_src *s = &p53_steer_hdr(t)->src[src];

	return cl->v6 ? lookup6(t, s, be64(cl->addr), cl->addr) : lookup4(t, s, be32(cl->addr));
}

/* The policy chain for one family (v6 a constant: the compiler makes one loop per family, the
 * address read once). A source is looked up once per run of steps naming it (a chain such
 * as geo country -> geo continent reads the GeoIP blocks once); a chain that comes back to
 * an earlier source looks it up again, and gets the same answer. */
static inline __attribute__((always_inline)) const struct p53_steer_variant *
pick(const void *t, const struct p53_steer_rec *r, const struct p53_steer_client *cl, const int v6,
     uint8_t *scope)
{
	const struct p53_steer_hdr *h = p53_steer_hdr(t);
	const uint32_t *dec = (const uint32_t *)((const uint8_t *)t + h->dec_off);
	uint32_t a4 = v6 ? 0 : be32(cl->addr);
	uint64_t a6 = v6 ? be64(cl->addr) : 0;
	unsigned int last = P53_STEER_SRCS;
	uint32_t ll = 0;
	uint8_t sc = 0;

	for (unsigned int i = 0; i < r->n_steps; i++) {
		const struct p53_steer_step *st = &r->steps[i];
		if (st->src != last) {
			last = st->src;
			ll = last == P53_STEER_SRC_CLIENT ? p53_steer_bucket((uint8_t)v6, cl->addr)
			   : last == P53_STEER_SRC_ANY ? 0
			   : v6 ? lookup6(t, &h->src[last], a6, cl->addr)
			   : lookup4(t, &h->src[last], a4);
			if ((uint8_t)ll > sc)
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

const struct p53_steer_variant *p53_steer_pick(const void *t, const struct p53_steer_rec *r,
					       const struct p53_steer_client *cl, uint8_t *scope)
{
	if (cl == NULL) {
		*scope = 0;
		return p53_steer_variant(t, r->fallback);
	}
	return cl->v6 ? pick(t, r, cl, 1, scope) : pick(t, r, cl, 0, scope);
}

static int inside(size_t len, uint64_t off, uint64_t n, uint64_t sz)
{
	return off <= len && n <= (len - off) / (sz ? sz : 1);
}

int p53_steer_check(const void *t, size_t len, const char **why)
{
	const struct p53_steer_hdr *h = t;
	const char *w = NULL;

	if (len < sizeof(*h) || h->magic != P53_STEER_MAGIC || h->size != len) {
		w = "bad header";
		goto bad;
	}
	if (!inside(len, h->records_off, h->n_records, sizeof(struct p53_steer_rec)) ||
	    !inside(len, h->variants_off, h->n_variants, sizeof(struct p53_steer_variant)) ||
	    h->dec_off > len || h->rdata_off > len || h->names_off > len) {
		w = "section outside the table";
		goto bad;
	}
	uint64_t n_dec = (len - h->dec_off) / 4;
	/* The sources without blocks have fixed locations: the picker indexes them unchecked. */
	if (h->src[P53_STEER_SRC_ANY].n_locs != 1 || h->src[P53_STEER_SRC_CLIENT].n_locs != P53_STEER_BUCKETS) {
		w = "a source without blocks has the wrong number of locations";
		goto bad;
	}
	for (unsigned int s = 0; s < P53_STEER_SRCS; s++) {
		const struct p53_steer_src *src = &h->src[s];
		if (!inside(len, src->off4, src->n4, sizeof(struct p53_steer_b4)) ||
		    !inside(len, src->off6, src->n6, sizeof(uint64_t)) ||
		    !inside(len, src->aux6_off, src->n6, sizeof(struct p53_steer_b6x))) {
			w = "prefix table outside the table";
			goto bad;
		}
		/* The indices: inside, each entry a block, never decreasing (the lookup's
		 * range idx[k]..idx[k + 1] must not wrap). */
		for (int fam = 0; fam < 2; fam++) {
			uint32_t nb = fam ? src->n6 : src->n4, io = fam ? src->idx6_off : src->idx4_off;
			if (nb == 0)
				continue;
			uint32_t ni = fam ? P53_STEER_IDX6 : P53_STEER_IDX;
			if ((io & 3) != 0 || !inside(len, io, ni, 4)) {
				w = "prefix index outside the table";
				goto bad;
			}
			const uint32_t *idx = (const void *)((const uint8_t *)t + io);
			for (uint32_t k = 0; k < ni; k++)
				if (idx[k] >= nb || (k > 0 && idx[k] < idx[k - 1])) {
					w = "prefix index out of order";
					goto bad;
				}
		}
		const struct p53_steer_b4 *b4 = (const void *)((const uint8_t *)t + src->off4);
		for (uint32_t i = 0; i < src->n4; i++)
			if ((b4[i].loc_len >> 8) != P53_STEER_NOLOC && (b4[i].loc_len >> 8) >= src->n_locs) {
				w = "block names a location that is not there";
				goto bad;
			}
		const struct p53_steer_b6x *b6 = (const void *)((const uint8_t *)t + src->aux6_off);
		for (uint32_t i = 0; i < src->n6; i++)
			if ((b6[i].loc_len >> 8) != P53_STEER_NOLOC && (b6[i].loc_len >> 8) >= src->n_locs) {
				w = "block names a location that is not there";
				goto bad;
			}
	}
	const struct p53_steer_rec *r = (const void *)((const uint8_t *)t + h->records_off);
	const uint32_t *dec = (const uint32_t *)((const uint8_t *)t + h->dec_off);
	for (uint32_t i = 0; i < h->n_records; i++) {
		if (r[i].n_steps > P53_STEER_STEPS || r[i].fallback >= h->n_variants ||
		    (uint64_t)h->names_off + r[i].name_off + r[i].name_len > len) {
			w = "record out of range";
			goto bad;
		}
		for (unsigned int k = 0; k < r[i].n_steps; k++) {
			const struct p53_steer_step *st = &r[i].steps[k];
			if (st->src >= P53_STEER_SRCS ||
			    (uint64_t)st->dec + h->src[st->src].n_locs > n_dec) {
				w = "policy step out of range";
				goto bad;
			}
			for (uint32_t l = 0; l < h->src[st->src].n_locs; l++)
				if (dec[st->dec + l] != UINT32_MAX && dec[st->dec + l] >= h->n_variants) {
					w = "decision names a variant that is not there";
					goto bad;
				}
		}
	}
	for (uint32_t i = 0; i < h->n_variants; i++) {
		const struct p53_steer_variant *v = p53_steer_variant(t, i);
		if ((uint64_t)h->rdata_off + v->rdata_off + v->rdata_len + v->sig_len > len) {
			w = "variant outside the table";
			goto bad;
		}
		/* Records, then signatures: each a pointer, 10 octets of header and its RDATA. */
		const uint8_t *p = p53_steer_rdata(t, v);
		uint64_t at = 0, end = (uint64_t)v->rdata_len + v->sig_len;
		int ok = 1;
		for (uint32_t k = 0; ok && k < (uint32_t)v->count + v->sig_count; k++) {
			ok = at + P53_RR_OWNER_LEN + 10 <= end && (k != v->count || at == v->rdata_len);
			if (ok)
				at += P53_RR_OWNER_LEN + 10 + p53_get16(p + at + P53_RR_OWNER_LEN + 8);
		}
		if (!ok || at != end || (v->sig_count == 0 && v->sig_len != 0) ||
		    v->sig_count > UINT8_MAX || v->sig_len > UINT16_MAX) {
			w = "variant records do not fill their bytes";
			goto bad;
		}
	}
	return 0;
bad:
	if (why != NULL)
		*why = w;
	return -EINVAL;
}
