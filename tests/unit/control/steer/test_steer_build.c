/*
 * control/steer/steer_build.c and dataplane/steer.c: the longest-prefix table (prefixes to
 * disjoint CIDR blocks, and the lookup with the scope it gives), great-circle ordering, and a
 * table of bad `steering:` configs, each with the "file:line: reason" an operator would see.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/conf/config.h"
#include "control/steer/steer_build.h"
#include "dataplane/name.h"
#include "dataplane/steer.h"

/* A table with only a source's blocks, to run p53_steer_lookup over. */
static void *table_of(const struct p53_steer_source *s)
{
	size_t idx = P53_STEER_IDX * sizeof(uint32_t);
	size_t len = sizeof(struct p53_steer_hdr) + s->n4 * sizeof(*s->b4) +
		     s->n6 * (sizeof(uint64_t) + sizeof(struct p53_steer_b6x)) + idx + P53_STEER_IDX6 * sizeof(uint32_t);
	uint8_t *t = calloc(1, len);
	struct p53_steer_hdr *h = (void *)t;

	assert_non_null(t);
	h->src[0].n4 = s->n4;
	h->src[0].off4 = sizeof(*h);
	h->src[0].n6 = s->n6;
	h->src[0].off6 = (uint32_t)(sizeof(*h) + s->n4 * sizeof(*s->b4));
	h->src[0].aux6_off = (uint32_t)(h->src[0].off6 + s->n6 * sizeof(uint64_t));
	h->src[0].idx4_off = (uint32_t)(h->src[0].aux6_off + s->n6 * sizeof(struct p53_steer_b6x));
	h->src[0].idx6_off = (uint32_t)(h->src[0].idx4_off + idx);
	if (s->n4 > 0)  /* b4 is NULL without IPv4 blocks */
		memcpy(t + h->src[0].off4, s->b4, s->n4 * sizeof(*s->b4));
	p53_steer_emit6(s->b6, s->n6, (uint64_t *)(void *)(t + h->src[0].off6),
			(struct p53_steer_b6x *)(void *)(t + h->src[0].aux6_off));
	if (s->n4 > 0)
		p53_steer_index4(s->b4, s->n4, (uint32_t *)(void *)(t + h->src[0].idx4_off));
	if (s->n6 > 0)
		p53_steer_index6(s->b6, s->n6, (uint32_t *)(void *)(t + h->src[0].idx6_off));
	return t;
}

/* The block holding an address without the index: the last one starting at or below it, by
 * a binary search over all the blocks. */
static uint32_t linear4(const struct p53_steer_source *s, uint32_t a)
{
	uint32_t lo = 0, hi = s->n4;            /* b4[lo].start <= a (b4[0] starts at 0) */

	while (hi - lo > 1) {
		uint32_t m = lo + (hi - lo) / 2;
		if (s->b4[m].start <= a)
			lo = m;
		else
			hi = m;
	}
	return s->b4[lo].loc_len;
}

static uint32_t linear6(const struct p53_steer_source *s, uint64_t ah, uint64_t al)
{
	uint32_t lo = 0, hi = s->n6;

	while (hi - lo > 1) {
		uint32_t m = lo + (hi - lo) / 2;
		if (s->b6[m].hi < ah || (s->b6[m].hi == ah && s->b6[m].lo <= al))
			lo = m;
		else
			hi = m;
	}
	return s->b6[lo].loc_len;
}

static uint64_t rng_next(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return *r;
}

static uint32_t look4(const void *t, uint32_t a)
{
	struct p53_steer_client cl = { .v6 = 0, .addr = { (uint8_t)(a >> 24), (uint8_t)(a >> 16), (uint8_t)(a >> 8), (uint8_t)a } };

	return p53_steer_lookup(t, 0, &cl);
}

static uint32_t look6(const void *t, uint64_t hi, uint64_t lo)
{
	struct p53_steer_client cl = { .v6 = 1 };

	for (int i = 0; i < 8; i++) {
		cl.addr[i] = (uint8_t)(hi >> (56 - 8 * i));
		cl.addr[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
	return p53_steer_lookup(t, 0, &cl);
}

/*
 * The /16 index (steer.h) finds the right block: thousands of random prefixes,
 * some dense in one /16 and some spanning many, looked up at every block's start, either side
 * of it, at /16 boundaries and at random addresses, as a binary search over every block finds
 * it; in a located block the whole loc_len, in a
 * gap the location (its scope is test_lpm's).
 */
static void test_index(void **state)
{
	struct p53_steer_trie t4, t6;
	struct p53_steer_source s = {0};
	uint64_t r = 0x2545f4914f6cdd1dull;

	(void)state;
	assert_int_equal(p53_steer_trie_init(&t4, 32), 0);
	assert_int_equal(p53_steer_trie_init(&t6, 128), 0);
	for (uint32_t i = 0; i < 3000; i++) {
		uint64_t x = rng_next(&r);
		unsigned int len = i < 200 ? 1 + (unsigned int)(x % 16) : 8 + (unsigned int)(x % 25);
		uint32_t a = (uint32_t)(x >> 32);
		if (i % 3 == 0)
			a = 0xc6330000u | (a & 0xffffu);        /* dense: 198.51/16 */
		a &= len == 32 ? ~0u : ~(~0u >> len);
		uint8_t b[16] = { (uint8_t)(a >> 24), (uint8_t)(a >> 16), (uint8_t)(a >> 8), (uint8_t)a };
		assert_int_equal(p53_steer_trie_add(&t4, b, len, i % 50), 0);
		uint8_t b6[16] = {0};
		unsigned int len6 = i < 200 ? 1 + (unsigned int)(x % 16) : 16 + (unsigned int)(x % 49);
		for (int k = 0; k < 8; k++)
			b6[k] = (uint8_t)(rng_next(&r) >> 40);
		if (i % 3 == 0) {
			b6[0] = 0x20;
			b6[1] = 0x01;
		}
		for (unsigned int bit = len6; bit < 128; bit++)
			b6[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
		assert_int_equal(p53_steer_trie_add(&t6, b6, len6, i % 50), 0);
	}
	assert_int_equal(p53_steer_trie_emit(&t4, &s), 0);
	assert_int_equal(p53_steer_trie_emit(&t6, &s), 0);
	assert_true(s.n4 > 3000 && s.n6 > 3000);
	void *t = table_of(&s);
	unsigned long n = 0;
	for (uint32_t i = 0; i < s.n4; i++) {
		uint32_t a = s.b4[i].start;
		uint32_t probe[] = { a, a - 1, a + 1, a | 0xffffu, a & ~0xffffu, (a & ~0xffffu) - 1,
				     (uint32_t)rng_next(&r) };
		for (size_t k = 0; k < sizeof(probe) / sizeof(probe[0]); k++, n++) {
			uint32_t got = look4(t, probe[k]), want = linear4(&s, probe[k]);
			if (got >> 8 != want >> 8 || (want >> 8 != P53_STEER_NOLOC && got != want))
				fail_msg("IPv4 %08x: want loc %u /%u, got loc %u /%u", probe[k], want >> 8,
					 want & 0xff, got >> 8, got & 0xff);
		}
	}
	for (uint32_t i = 0; i < s.n6; i++) {
		uint64_t hi = s.b6[i].hi, lo = s.b6[i].lo, x = rng_next(&r);
		uint64_t probe[][2] = { {hi, lo}, {hi - (lo == 0), lo - 1}, {hi + (lo == ~0ull), lo + 1},
					{hi | 0xffffffffffffull, ~0ull}, {hi & ~0xffffffffffffull, 0},
					{(hi & ~0xffffffffffffull) - 1, ~0ull}, {x, x * 3},
					{hi & ~0x1fffffffffffull, 0}, {(hi & ~0x1fffffffffffull) - 1, ~0ull},
					{0x2000000000000000ull | (x >> 3), x}, {0x2000000000000000ull, 0},
					{0x1fffffffffffffffull, ~0ull}, {0x4000000000000000ull, 0},
					{0x3fffffffffffffffull, ~0ull}, {0, 0}, {~0ull, ~0ull} };
		for (size_t k = 0; k < sizeof(probe) / sizeof(probe[0]); k++, n++) {
			uint32_t got = look6(t, probe[k][0], probe[k][1]);
			uint32_t want = linear6(&s, probe[k][0], probe[k][1]);
			if (got >> 8 != want >> 8 || (want >> 8 != P53_STEER_NOLOC && got != want))
				fail_msg("IPv6 %016llx%016llx: want loc %u /%u, got loc %u /%u",
					 (unsigned long long)probe[k][0], (unsigned long long)probe[k][1],
					 want >> 8, want & 0xff, got >> 8, got & 0xff);
		}
	}
	printf("steer index: %u+%u blocks, %lu lookups agree with a search of every block\n", s.n4, s.n6, n);
	free(t);
	free(s.b4);
	free(s.b6);
	p53_steer_trie_free(&t4);
	p53_steer_trie_free(&t6);
}

/*
 * The IPv6 lookup (steer.c: a search over the high halves of the starts, and lookup6_long for
 * an address whose high half equals its block's) against brute force over every block, the
 * whole loc_len compared, the scope of a gap included: the block holding an address is the
 * last one starting at or below it (a scan of them all); in a gap, the scope is the shortest
 * prefix of the address whose aligned block overlaps no located block (each length tried
 * against every block). Prefixes of every length: short ones, /64s and shorter, blocks longer
 * than /64 (some sharing one /64, /128 hosts, side by side and one apart), adjacent siblings,
 * 2000::/3's edges, and once more with a ::/0 default (no gaps left). Probes at each block's
 * start, either side of it, its /64 and its end, and at random.
 */
typedef unsigned __int128 u128;

static u128 start6(const struct p53_steer_source *s, uint32_t i)
{
	return (u128)s->b6[i].hi << 64 | s->b6[i].lo;
}

static uint32_t brute6(const struct p53_steer_source *s, u128 a)
{
	uint32_t at = 0;

	for (uint32_t i = 0; i < s->n6; i++)
		if (start6(s, i) <= a)
			at = i;
	if (s->b6[at].loc_len >> 8 != P53_STEER_NOLOC)
		return s->b6[at].loc_len;
	for (unsigned int len = 0; len <= 128; len++) {
		u128 mask = len == 0 ? 0 : ~(u128)0 << (128 - len);
		u128 lo = a & mask, hi = a | ~mask;
		int clear = 1;
		for (uint32_t j = 0; j < s->n6 && clear; j++) {
			if (s->b6[j].loc_len >> 8 == P53_STEER_NOLOC)
				continue;
			u128 b0 = start6(s, j), b1 = j + 1 < s->n6 ? start6(s, j + 1) - 1 : ~(u128)0;
			clear = b1 < lo || b0 > hi;
		}
		if (clear)
			return P53_STEER_NOLOC << 8 | len;
	}
	fail_msg("no aligned block around the address is clear of located blocks");
	return 0;
}

static void add6(struct p53_steer_trie *t, u128 a, unsigned int len, uint32_t loc)
{
	uint8_t b[16];

	if (len < 128)
		a &= len == 0 ? 0 : ~(u128)0 << (128 - len);
	for (int i = 0; i < 16; i++)
		b[i] = (uint8_t)(a >> (120 - 8 * i));
	assert_int_equal(p53_steer_trie_add(t, b, len, loc), 0);
}

static void check_long6(int with_default)
{
	struct p53_steer_trie t6;
	struct p53_steer_source s = {0};
	uint64_t r = 0x9e3779b97f4a7c15ull;
	unsigned long n = 0, longer = 0, gaps = 0;

	assert_int_equal(p53_steer_trie_init(&t6, 128), 0);
	if (with_default)
		add6(&t6, 0, 0, 49);
	for (uint32_t i = 0; i < 150; i++) {
		uint64_t x = rng_next(&r), y = rng_next(&r);
		u128 a = (u128)(0x2001000000000000ull | (x >> 16)) << 64 | y;
		if (i % 5 == 0)
			a = (u128)(x | 0x2000000000000000ull) << 64 | y;
		unsigned int len = i < 10 ? 16 + (unsigned int)(x % 16) : 32 + (unsigned int)(x % 33); /* /16../64 */
		add6(&t6, a, len, i % 40);
		if (i % 2 == 0) {                                      /* longer than /64 inside it */
			unsigned int l2 = 65 + (unsigned int)(y % 64);  /* /65../128 */
			add6(&t6, a, l2, 40 + i % 8);
			/* its neighbours: the next /128 host, and one a /128 further */
			add6(&t6, (a & (~(u128)0 << (128 - l2))) + ((u128)1 << (128 - l2)), l2, 41);
			if (i % 4 == 0)
				add6(&t6, (a & (~(u128)0 << (128 - l2))) + ((u128)3 << (128 - l2)), 128, 42);
		}
		if (i % 3 == 0)                                        /* an adjacent sibling */
			add6(&t6, a ^ ((u128)1 << (128 - len)), len, 43);
		if (i % 7 == 0) {                                      /* hosts inside the prefix */
			add6(&t6, a | 1, 128, 44);
			add6(&t6, (a | 1) + 2, 128, 45);
		}
		if (i % 2 == 1) {                                      /* hosts and a /96 in a /64 of their own */
			u128 h = (u128)(0x2a00000000000000ull | (x >> 8)) << 64 | (y >> 1);
			add6(&t6, h, 128, 44);
			add6(&t6, h + 5, 128, 45);
			add6(&t6, h + ((u128)1 << 40), 96, 46);
		}
	}
	add6(&t6, (u128)0x2000000000000000ull << 64, 128, 46);  /* 2000::/3's edges */
	add6(&t6, ((u128)0x4000000000000000ull << 64) - 1, 128, 47);
	add6(&t6, (u128)0x1fffffffffffffffull << 64, 64, 48);
	add6(&t6, ~(u128)0, 128, 48);
	add6(&t6, 0, 128, 48);
	assert_int_equal(p53_steer_trie_emit(&t6, &s), 0);
	void *t = table_of(&s);
	for (uint32_t i = 0; i < s.n6; i++) {
		u128 a = start6(&s, i), e = i + 1 < s.n6 ? start6(&s, i + 1) - 1 : ~(u128)0;
		u128 x = (u128)rng_next(&r) << 64 | rng_next(&r);
		u128 probe[] = { a, a - 1, a + 1, e, e + 1, a | 0xffffffffffffffffull, (a >> 64) << 64,
				 ((a >> 64) << 64) - 1, a + (e - a) / 2, e - 1, x,
				 (u128)(0x2000000000000000ull | (uint64_t)x >> 3) << 64 };
		longer += s.b6[i].lo != 0;
		gaps += s.b6[i].loc_len >> 8 == P53_STEER_NOLOC;
		for (size_t k = 0; k < sizeof(probe) / sizeof(probe[0]); k++, n++) {
			uint32_t got = look6(t, (uint64_t)(probe[k] >> 64), (uint64_t)probe[k]);
			uint32_t want = brute6(&s, probe[k]);
			if (got != want)
				fail_msg("IPv6 %016llx%016llx (block %u): want loc %u /%u, got loc %u /%u",
					 (unsigned long long)(probe[k] >> 64), (unsigned long long)probe[k], i,
					 want >> 8, want & 0xff, got >> 8, got & 0xff);
			/* without a scope (a query without ECS): the same location, the search
			   without its one-block-range test (steer_pick.h), in and out of 2000::/3 */
			uint8_t ad[16];
			for (int b = 0; b < 16; b++)
				ad[b] = (uint8_t)(probe[k] >> (120 - 8 * b));
			const struct p53_steer_src *src = &p53_steer_hdr(t)->src[0];
			uint64_t hi = (uint64_t)(probe[k] >> 64);
			got = hi >> 61 == 1 ? p53_steer_lookup6(t, src, hi, ad, 1, 0)
					    : p53_steer_lookup6(t, src, hi, ad, 0, 0);
			if (got >> 8 != want >> 8 || (want >> 8 != P53_STEER_NOLOC && got != want))
				fail_msg("IPv6 %016llx%016llx (block %u), no scope: want loc %u, got loc %u",
					 (unsigned long long)hi, (unsigned long long)probe[k], i,
					 want >> 8, got >> 8);
		}
	}
	printf("steer IPv6 %s: %u blocks (%lu starting inside a /64, %lu gaps), %lu lookups agree with brute force\n",
	       with_default ? "with ::/0" : "no default", s.n6, longer, gaps, n);
	assert_true(longer > 100);                   /* blocks starting inside a /64 were tried */
	assert_true(with_default ? gaps == 0 : gaps > 100);
	free(t);
	free(s.b4);
	free(s.b6);
	p53_steer_trie_free(&t6);
}

/* A table with the map's blocks (m) as source 0, the GeoIP's (g) as source 1 and their merged
 * table (steer.h, struct p53_steer_mrg), as p53_steer_build lays them out. */
static void *table_of2(const struct p53_steer_source *m, const struct p53_steer_source *g)
{
	const struct p53_steer_source *sv[2] = { m, g };
	size_t off = sizeof(struct p53_steer_hdr), idx4 = P53_STEER_IDX * 4, idx6 = P53_STEER_IDX6 * 4;
	struct p53_steer_hdr h = {0};

	for (int k = 0; k < 2; k++) {
		h.src[k].n4 = sv[k]->n4;
		h.src[k].off4 = (uint32_t)off;
		off += sv[k]->n4 * sizeof(struct p53_steer_b4);
		h.src[k].n6 = sv[k]->n6;
		h.src[k].off6 = (uint32_t)off;
		off += sv[k]->n6 * sizeof(uint64_t);
		h.src[k].aux6_off = (uint32_t)off;
		off += sv[k]->n6 * sizeof(struct p53_steer_b6x);
		h.src[k].idx4_off = (uint32_t)off;
		off += idx4;
		h.src[k].idx6_off = (uint32_t)off;
		off += idx6 + 4;
	}
	h.mrg.n4 = p53_steer_merge4(m, g, NULL, NULL);
	h.mrg.start4_off = (uint32_t)off;
	off += h.mrg.n4 * 4;
	h.mrg.aux4_off = (uint32_t)off;
	off += h.mrg.n4 * sizeof(struct p53_steer_mx);
	h.mrg.idx4_off = (uint32_t)off;
	off += idx4;
	h.mrg.n6 = p53_steer_merge6(m, g, NULL, NULL);
	h.mrg.off6 = (uint32_t)(off = (off + 7) & ~(size_t)7);
	off += h.mrg.n6 * 8;
	h.mrg.aux6_off = (uint32_t)off;
	off += h.mrg.n6 * sizeof(struct p53_steer_m6x);
	h.mrg.idx6_off = (uint32_t)off;
	off += idx6;
	uint8_t *t = calloc(1, off);
	assert_non_null(t);
	for (int k = 0; k < 2; k++) {
		memcpy(t + h.src[k].off4, sv[k]->b4, sv[k]->n4 * sizeof(struct p53_steer_b4));
		p53_steer_emit6(sv[k]->b6, sv[k]->n6, (uint64_t *)(void *)(t + h.src[k].off6),
				(struct p53_steer_b6x *)(void *)(t + h.src[k].aux6_off));
		p53_steer_index4(sv[k]->b4, sv[k]->n4, (uint32_t *)(void *)(t + h.src[k].idx4_off));
		p53_steer_index6(sv[k]->b6, sv[k]->n6, (uint32_t *)(void *)(t + h.src[k].idx6_off));
	}
	p53_steer_merge4(m, g, (uint32_t *)(void *)(t + h.mrg.start4_off), (struct p53_steer_mx *)(void *)(t + h.mrg.aux4_off));
	p53_steer_mindex4((uint32_t *)(void *)(t + h.mrg.start4_off), h.mrg.n4, (uint32_t *)(void *)(t + h.mrg.idx4_off));
	p53_steer_merge6(m, g, (uint64_t *)(void *)(t + h.mrg.off6), (struct p53_steer_m6x *)(void *)(t + h.mrg.aux6_off));
	p53_steer_mindex6((uint64_t *)(void *)(t + h.mrg.off6), (struct p53_steer_m6x *)(void *)(t + h.mrg.aux6_off),
			  h.mrg.n6, (uint32_t *)(void *)(t + h.mrg.idx6_off));
	memcpy(t, &h, sizeof(h));
	return t;
}

/* An ECS client: the address cut to its SOURCE PREFIX-LENGTH (RFC 7871 §6: bits past it are 0). */
static void cut(struct p53_steer_client *cl, unsigned int len)
{
	unsigned int bits = cl->v6 ? 128 : 32;

	for (unsigned int b = len; b < bits; b++)
		cl->addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
}

static void set6(struct p53_steer_client *cl, uint64_t hi, uint64_t lo)
{
	cl->v6 = 1;
	for (int i = 0; i < 8; i++) {
		cl->addr[i] = (uint8_t)(hi >> (56 - 8 * i));
		cl->addr[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
}

static void set4(struct p53_steer_client *cl, uint32_t a)
{
	memset(cl, 0, sizeof(*cl));
	cl->addr[0] = (uint8_t)(a >> 24);
	cl->addr[1] = (uint8_t)(a >> 16);
	cl->addr[2] = (uint8_t)(a >> 8);
	cl->addr[3] = (uint8_t)a;
}

/* One merged search against the two searches it replaces, both loc_len words whole (location
 * and the scope: a located block's length, a gap's extent around the address). */
static unsigned long gaps_m, gaps_g;

static void same_as_two(const void *t, const struct p53_steer_client *cl, unsigned long *n)
{
	uint64_t got = p53_steer_lookup_mrg(t, cl);
	uint32_t wm = p53_steer_lookup(t, P53_STEER_SRC_MAP, cl), wg = p53_steer_lookup(t, P53_STEER_SRC_GEO, cl);

	(*n)++;
	gaps_m += wm >> 8 == P53_STEER_NOLOC;
	gaps_g += wg >> 8 == P53_STEER_NOLOC;
	if ((uint32_t)got != wm || (uint32_t)(got >> 32) != wg) {
		char a[INET6_ADDRSTRLEN];
		inet_ntop(cl->v6 ? AF_INET6 : AF_INET, cl->addr, a, sizeof(a));
		fail_msg("%s: merged map loc %u /%u geo loc %u /%u, two searches map loc %u /%u geo loc %u /%u", a,
			 (uint32_t)got >> 8, (uint32_t)got & 0xff, (uint32_t)(got >> 40), (uint32_t)(got >> 32) & 0xff,
			 wm >> 8, wm & 0xff, wg >> 8, wg & 0xff);
	}
}

/*
 * The merged map+GeoIP search gives, for every address, what the map's and the GeoIP's own
 * searches give: both locations and both scopes (located: the block's prefix length; a gap:
 * the largest aligned block around the address inside the source's own run, which the merged
 * block is only part of). Two random sources per family, overlapping, nested, dense in one
 * /16 or /32, blocks longer than /64 in IPv6; probed at every merged block's start, either
 * side of it, its /16 (/48) ends, at random, and at random addresses cut to a random ECS
 * source prefix length.
 */
static void test_merged(void **state)
{
	struct p53_steer_trie tm4, tg4, tm6, tg6;
	struct p53_steer_source m = {0}, g = {0};
	uint64_t r = 0x7f4a7c159e3779b9ull;
	unsigned long n = 0;

	(void)state;
	assert_int_equal(p53_steer_trie_init(&tm4, 32), 0);
	assert_int_equal(p53_steer_trie_init(&tg4, 32), 0);
	assert_int_equal(p53_steer_trie_init(&tm6, 128), 0);
	assert_int_equal(p53_steer_trie_init(&tg6, 128), 0);
	for (uint32_t i = 0; i < 4000; i++) {
		uint64_t x = rng_next(&r), y = rng_next(&r);
		int geo = i % 4 != 0;  /* a map of fewer, a GeoIP DB of more networks */
		/* Short prefixes in the GeoIP DB only: the map leaves gaps (its scope then comes from
		 * its own run), and so does the GeoIP DB in IPv6. */
		unsigned int len = i < 100 && geo ? 1 + (unsigned int)(x % 16) : 8 + (unsigned int)(x % 25);
		uint32_t a = (uint32_t)(x >> 32);
		if (i % 3 == 0)
			a = 0xc6330000u | (a & 0xffffu);
		a &= len == 32 ? ~0u : ~(~0u >> len);
		uint8_t b[16] = { (uint8_t)(a >> 24), (uint8_t)(a >> 16), (uint8_t)(a >> 8), (uint8_t)a };
		assert_int_equal(p53_steer_trie_add(geo ? &tg4 : &tm4, b, len, i % 37), 0);
		u128 a6 = (u128)(0x2001000000000000ull | (x >> 16)) << 64 | y;
		if (i % 5 == 0)
			a6 = (u128)(x | 0x2000000000000000ull) << 64 | y;
		if (i % 11 == 0)
			a6 = (u128)x << 64 | y;                 /* outside 2000::/3 too */
		unsigned int len6 = i < 100 && geo ? 8 + (unsigned int)(x % 24) : 16 + (unsigned int)(y % 49);
		if (i % 7 == 0)
			len6 = 65 + (unsigned int)(y % 64);     /* longer than /64 */
		add6(geo ? &tg6 : &tm6, a6, len6, i % 37);
	}
	assert_int_equal(p53_steer_trie_emit(&tm4, &m), 0);
	assert_int_equal(p53_steer_trie_emit(&tg4, &g), 0);
	assert_int_equal(p53_steer_trie_emit(&tm6, &m), 0);
	assert_int_equal(p53_steer_trie_emit(&tg6, &g), 0);
	void *t = table_of2(&m, &g);
	const struct p53_steer_hdr *h = p53_steer_hdr(t);
	assert_true(h->mrg.n4 >= g.n4 && h->mrg.n4 <= m.n4 + g.n4 && h->mrg.n6 >= g.n6);
	const uint32_t *st4 = (const void *)((const uint8_t *)t + h->mrg.start4_off);
	const uint64_t *k6 = (const void *)((const uint8_t *)t + h->mrg.off6);
	const struct p53_steer_m6x *x6 = (const void *)((const uint8_t *)t + h->mrg.aux6_off);
	struct p53_steer_client cl;
	for (uint32_t i = 0; i < h->mrg.n4; i++) {
		uint32_t a = st4[i];
		uint32_t probe[] = { a, a - 1, a + 1, a | 0xffffu, a & ~0xffffu, (uint32_t)rng_next(&r) };
		for (size_t k = 0; k < sizeof(probe) / sizeof(probe[0]); k++) {
			set4(&cl, probe[k]);
			same_as_two(t, &cl, &n);
			cut(&cl, (unsigned int)(rng_next(&r) % 33));
			same_as_two(t, &cl, &n);
		}
	}
	for (uint32_t i = 0; i < h->mrg.n6; i++) {
		uint64_t hi = k6[i], lo = x6[i].lo, x = rng_next(&r);
		uint64_t probe[][2] = { {hi, lo}, {hi - (lo == 0), lo - 1}, {hi + (lo == ~0ull), lo + 1},
					{hi | 0xffffull, ~0ull}, {hi & ~0xffffull, 0}, {x, x * 3},
					{0x2001000000000000ull | (x >> 16), x}, {0x2000000000000000ull, 0},
					{0x1fffffffffffffffull, ~0ull}, {0x4000000000000000ull, 0}, {0, 0}, {~0ull, ~0ull} };
		for (size_t k = 0; k < sizeof(probe) / sizeof(probe[0]); k++) {
			set6(&cl, probe[k][0], probe[k][1]);
			same_as_two(t, &cl, &n);
			cut(&cl, (unsigned int)(rng_next(&r) % 129));
			same_as_two(t, &cl, &n);
		}
	}
	printf("steer merged: %u+%u map and %u+%u GeoIP blocks in %u+%u merged, %lu searches agree "
	       "(%lu in a map gap, %lu in a GeoIP gap)\n", m.n4, m.n6, g.n4, g.n6, h->mrg.n4, h->mrg.n6, n, gaps_m, gaps_g);
	assert_true(gaps_m > n / 4 && gaps_g > n / 20);
	free(t);
	free(m.b4);
	free(m.b6);
	free(g.b4);
	free(g.b6);
	p53_steer_trie_free(&tm4);
	p53_steer_trie_free(&tg4);
	p53_steer_trie_free(&tm6);
	p53_steer_trie_free(&tg6);
}

/* p53_steer_same_name (the record scan's name compare, steer.h) is memcmp's equality for
 * every length, a difference at every position. */
static void test_same_name(void **state)
{
	uint8_t a[300], b[300];

	(void)state;
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = b[i] = (uint8_t)(i * 7 + 1);
	for (size_t len = 0; len <= 255; len++) {
		assert_true(p53_steer_same_name(a + 1, b + 1, len));
		for (size_t at = 0; at < len; at++) {
			b[1 + at] ^= 0x20;
			assert_false(p53_steer_same_name(a + 1, b + 1, len));
			b[1 + at] ^= 0x20;
		}
		b[1 + len] ^= 0x20;     /* past the end: not compared */
		assert_true(p53_steer_same_name(a + 1, b + 1, len));
		b[1 + len] ^= 0x20;
	}
}

static void test_index6_long(void **state)
{
	(void)state;
	check_long6(0);
	check_long6(1);
}

static uint32_t look(const void *t, const char *ip)
{
	struct p53_steer_client cl = { .v6 = strchr(ip, ':') != NULL };

	assert_int_equal(inet_pton(cl.v6 ? AF_INET6 : AF_INET, ip, cl.addr), 1);
	return p53_steer_lookup(t, 0, &cl);
}

static void add(struct p53_steer_trie *t, const char *ip, unsigned int len, uint32_t loc)
{
	uint8_t a[16] = {0};

	assert_int_equal(inet_pton(t->bits == 32 ? AF_INET : AF_INET6, ip, a), 1);
	assert_int_equal(p53_steer_trie_add(t, a, len, loc), 0);
}

#define LL(loc, len) ((uint32_t)(loc) << 8 | (len))

static void test_lpm(void **state)
{
	struct p53_steer_trie t4, t6;
	struct p53_steer_source s = {0};

	(void)state;
	assert_int_equal(p53_steer_trie_init(&t4, 32), 0);
	assert_int_equal(p53_steer_trie_init(&t6, 128), 0);
	add(&t4, "10.0.0.0", 8, 1);
	add(&t4, "10.1.0.0", 16, 2);
	add(&t4, "10.1.2.0", 24, 3);
	add(&t4, "10.1.0.0", 16, 9);            /* a second entry for a prefix: the first wins */
	add(&t6, "2001:db8::", 32, 4);
	add(&t6, "2001:db8:1::", 48, 5);
	assert_int_equal(p53_steer_trie_emit(&t4, &s), 0);
	assert_int_equal(p53_steer_trie_emit(&t6, &s), 0);
	void *t = table_of(&s);
	/* The blocks cover everything, in order; a gap is one block however many bits it spans. */
	assert_int_equal(s.b4[0].start, 0);
	assert_int_equal(s.n4, 19); /* one gap block before 10/8, 17 blocks inside it, one after (was 25) */
	for (uint32_t i = 1; i < s.n4; i++)
		assert_true(s.b4[i].start > s.b4[i - 1].start);
	struct { const char *ip; uint32_t want; const char *why; } rows[] = {
		{ "10.1.2.3", LL(3, 24), "the most specific entry, its own length" },
		{ "10.1.3.1", LL(2, 24), "in 10.1/16 beside 10.1.2/24: scope 24 (10.1.3/24), not 16" },
		{ "10.1.4.1", LL(2, 22), "in 10.1/16, 10.1.4/22 holds no more specific entry" },
		{ "10.1.128.1", LL(2, 17), "in 10.1/16, far from 10.1.2/24: scope 17" },
		{ "10.200.0.1", LL(1, 9), "in 10/8 outside 10.1/16: scope 9" },
		{ "10.0.0.1", LL(1, 16), "in 10/8 next to 10.1/16: scope 16 (10.0/16)" },
		{ "192.0.2.1", LL(P53_STEER_NOLOC, 1), "nowhere: the gap 128/1" },
		{ "11.0.0.1", LL(P53_STEER_NOLOC, 8), "nowhere, next to 10/8: the gap 11/8" },
		{ "9.0.0.1", LL(P53_STEER_NOLOC, 7), "nowhere, before 10/8: the gap 8/7" },
		{ "2001:db7::1", LL(P53_STEER_NOLOC, 29), "IPv6 nowhere, before 2001:db8::/32: 2001:db0::/29" },
		{ "::1", LL(P53_STEER_NOLOC, 3), "IPv6 nowhere, from the start of the space: ::/3" },
		{ "2001:db8:1:2::1", LL(5, 48), "IPv6, the /48" },
		{ "2001:db8:2::1", LL(4, 47), "IPv6, in the /32 beside the /48" },
		{ "2001:db9::1", LL(P53_STEER_NOLOC, 32), "IPv6 nowhere, next to 2001:db8::/32" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t got = look(t, rows[i].ip);
		if (got != rows[i].want)
			fail_msg("%s (%s): want loc %u /%u, got loc %u /%u", rows[i].ip, rows[i].why,
				 rows[i].want >> 8, rows[i].want & 0xff, got >> 8, got & 0xff);
	}
	free(t);
	free(s.b4);
	free(s.b6);
	p53_steer_trie_free(&t4);
	p53_steer_trie_free(&t6);
}

static void test_great_circle(void **state)
{
	(void)state;
	/* Known distances: Chicago-Los Angeles about 1745 mi, London-New York about 3460 mi. */
	double d = p53_steer_miles(41.88, -87.63, 34.05, -118.24);
	assert_true(d > 1700 && d < 1790);
	d = p53_steer_miles(51.51, -0.13, 40.71, -74.01);
	assert_true(d > 3420 && d < 3500);
	assert_true(p53_steer_miles(10, 20, 10, 20) < 1e-9);
	/* Antipodes: half the circumference, about 12436 mi. */
	d = p53_steer_miles(0, 0, 0, 180);
	assert_true(d > 12400 && d < 12470);

	struct p53_steer_target pool[4] = { { 0 } };
	struct p53_steer_record r = { .pool = pool, .n_pool = 4 };
	const double pos[4][2] = { { 50.03, 8.57 }, { 41.97, -87.90 }, { 33.94, -118.41 }, { 35.77, 140.39 } };
	for (int i = 0; i < 4; i++) {
		r.pool[i].has_pos = true;
		r.pool[i].latitude = pos[i][0];
		r.pool[i].longitude = pos[i][1];
		r.pool[i].weight = 1;
	}
	bool up[P53_STEER_MAX_POOL] = { true, true, true, true };
	uint8_t out[P53_STEER_MAX_POOL];
	double dist[P53_STEER_MAX_POOL];
	/* Mexico City: LAX, then ORD, then FRA, then NRT. */
	int n = p53_steer_by_distance(&r, up, 19.43, -99.13, out, dist);
	assert_int_equal(n, 4);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 1);
	assert_int_equal(out[2], 0);
	assert_int_equal(out[3], 3);
	for (int i = 1; i < n; i++)
		assert_true(dist[i] >= dist[i - 1]);
	/* A target that is down is not a candidate. */
	up[2] = false;
	n = p53_steer_by_distance(&r, up, 19.43, -99.13, out, NULL);
	assert_int_equal(n, 3);
	assert_int_equal(out[0], 1);
}

static char tmpdir[] = "/tmp/p53steercfg.XXXXXX";

#define HEAD "server:\n  identity: pop1\n" \
	     "dataplane:\n  port: net_null0\n  addresses: [192.0.2.1]\n" \
	     "zones:\n  - {name: example.com, file: example.com.zone}\n"
#define REC "steering:\n  map: m.json\n  records:\n    - owner: www.example.com.\n"
/* A target whose check (on line 17) is `x`. */
#define CHK(x) REC "      type: A\n      policy: [map]\n      pool:\n        - name: a\n" \
	       "          address: 10.0.0.1\n          check: " x "\n"
#define GREC "steering:\n  geoip: g.mmdb\n  records:\n    - owner: www.example.com.\n" \
	     "      type: A\n      pool: [{name: a, address: 10.0.0.1}]\n"

static void test_bad_config(void **state)
{
	static const struct { const char *yaml; const char *msg; } rows[] = {
		{ REC "      type: MX\n      policy: [map]\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "c.yaml:12: steering.records[0].type: expected A, AAAA or CNAME, got 'MX'" },
		{ REC "      type: A\n      policy: [closest]\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "c.yaml:13: steering.records[0].policy[0]: unknown policy 'closest'" },
		{ REC "      type: A\n      policy: [map]\n      pool: [{name: a, address: 2001:db8::1}]\n",
		  "c.yaml:11: steering.records[0].pool[0]: address 2001:db8::1 is not an IPv4 address" },
		{ REC "      type: A\n      policy: [geo]\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "c.yaml:11: steering.records[0]: policy geo needs steering.geoip" },
		{ REC "      type: A\n      policy: [map]\n      pool: [{name: a, address: 10.0.0.1, lat: \"91\", lon: \"0\"}]\n",
		  "c.yaml:14: steering.records[0].pool[0].lat: expected degrees in [-90, 90], got '91'" },
		{ REC "      type: A\n      policy: [map]\n      pool: [{name: a, address: 10.0.0.1, lat: \"9\"}]\n",
		  "c.yaml:14: steering.records[0].pool[0]: lat and lon go together" },
		{ REC "      type: A\n      policy: [map]\n      pool: [{name: a, address: 10.0.0.1}, {name: a, address: 10.0.0.2}]\n",
		  "steering.records[0].pool[1]: duplicate target name 'a'" },
		{ REC "      type: A\n      policy: [map]\n      pool: [{name: a, address: 10.0.0.1}]\n"
		      "    - {owner: WWW.example.com, type: A, policy: [map], pool: [{name: b, address: 10.0.0.2}]}\n",
		  "steering.records[1]: WWW.example.com A is already steered at line 11" },
		{ REC "      type: A\n      policy: [map, map]\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "steering.records[0].policy[1]: policy 'map' twice" },
		{ REC "      type: A\n      policy: [map]\n      pool: [{name: a, address: 10.0.0.1, colour: red}]\n",
		  "steering.records[0].pool[0]: unknown key 'colour'" },
		{ REC "      type: A\n      policy: [map]\n      all_down: fallback\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "steering.records[0]: all_down: fallback needs a fallback: list of addresses" },
		{ REC "      type: A\n      policy: [map]\n      fallback: [10.0.0.9]\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "steering.records[0]: fallback: is only answered with all_down: fallback" },
		{ REC "      type: A\n      policy: [map]\n      all_down: fallback\n      fallback: [2001:db8::9]\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "steering.records[0].fallback[0]: not an IPv4 address" },
		{ REC "      type: A\n      policy: [map]\n      all_down: pool\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "steering.records[0]: all_down: pool needs a fallback_pool: list of targets" },
		{ REC "      type: A\n      policy: [map]\n      fallback_pool: [{name: b, address: 10.0.0.2}]\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "steering.records[0]: fallback_pool: is only answered with all_down: pool" },
		{ REC "      type: A\n      policy: [map]\n      all_down: pool\n      fallback_pool: [{name: a, address: 10.0.0.2}]\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "duplicate target name 'a'" },
		{ REC "      type: A\n      policy: [map]\n      all_down: pool\n      fallback_pool: [{name: b, address: \"2001:db8::2\"}]\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "steering.records[0].fallback_pool[0]: address 2001:db8::2 is not an IPv4 address" },
		{ REC "      type: CNAME\n      policy: [map]\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "steering.records[0].pool[0]: a CNAME record's target has a target: (a name) and no address:" },
		{ REC "      type: A\n      policy: [map]\n      pool: [{name: a, target: www.example.net.}]\n",
		  "steering.records[0].pool[0]: an A record's target has an address: and no target:" },
		{ REC "      type: CNAME\n      policy: [map]\n      all_down: fallback\n      fallback: [10.0.0.9]\n      pool: [{name: a, target: a.example.net.}]\n",
		  "steering.records[0]: fallback: holds addresses, not for a CNAME record" },
		{ REC "      type: CNAME\n      policy: [map]\n      pool: [{name: a, target: a.example.net., check: {type: tcp, port: 80}}]\n",
		  "steering.records[0].pool[0]: check: a CNAME target has no address to probe" },
		{ REC "      type: CNAME\n      policy: [map]\n      pool: [{name: a, target: a..example.net.}]\n",
		  "steering.records[0].pool[0].target: 'a..example.net.' is not a domain name" },
		{ REC "      type: A\n      policy: [map]\n      pool: [{name: a, address: 10.0.0.1}]\n"
		      "    - {owner: www.example.com., type: CNAME, policy: [map], pool: [{name: b, target: x.example.net.}]}\n",
		  "steering.records[1]: www.example.com. CNAME beside the steered A at line 11 (a CNAME owner has no other data)" },
		{ REC "      type: A\n      policy: [map]\n      all_down: some\n      pool: [{name: a, address: 10.0.0.1}]\n",
		  "c.yaml:14: steering.records[0].all_down: expected all, fallback or pool, got 'some'" },
		/* Probes (check: as a mapping), one defect per row. */
		{ CHK("{port: 80}"),
		  "c.yaml:17: steering.records[0].pool[0].check: missing required key 'type'" },
		{ CHK("{type: icmp}"),
		  "c.yaml:17: steering.records[0].pool[0].check.type: expected command, tcp, http, dns or https, got 'icmp'" },
		{ CHK("{type: tcp}"), "c.yaml:17: steering.records[0].pool[0].check: a tcp check needs a port" },
		{ CHK("{type: tcp, port: 0}"), "c.yaml:17: steering.records[0].pool[0].check.port: " },
		{ CHK("{type: tcp, port: 65536}"), "c.yaml:17: steering.records[0].pool[0].check.port: " },
		{ CHK("{type: tcp, port: 80, address: 10.0.0.300}"),
		  "c.yaml:17: steering.records[0].pool[0].check.address: expected an IPv4 or IPv6 address, got '10.0.0.300'" },
		{ CHK("{type: tcp, port: 80, path: /x}"),
		  "c.yaml:17: steering.records[0].pool[0].check: 'path' is not a key of a tcp check" },
		{ CHK("{type: http, path: health}"),
		  "c.yaml:17: steering.records[0].pool[0].check.path: 'health' does not start with '/'" },
		{ CHK("{type: http, path: \"/a b\"}"),
		  "c.yaml:17: steering.records[0].pool[0].check.path: '/a b' has a space or control character" },
		{ CHK("{type: http, host: \"a\\r\\nX: y\"}"),
		  "steering.records[0].pool[0].check.host: 'a\r\nX: y' has a space or control character" },
		{ CHK("{type: http, status: 99}"), "c.yaml:17: steering.records[0].pool[0].check.status: " },
		{ CHK("{type: http, status: 600}"), "c.yaml:17: steering.records[0].pool[0].check.status: " },
		{ CHK("{type: http, body: \"\"}"), "c.yaml:17: steering.records[0].pool[0].check.body: " },
		{ CHK("{type: http, qname: example.com.}"),
		  "c.yaml:17: steering.records[0].pool[0].check: 'qname' is not a key of a http check" },
		{ CHK("{type: dns}"), "c.yaml:17: steering.records[0].pool[0].check: a dns check needs a qname" },
		{ CHK("{type: dns, qname: \"a..b\"}"),
		  "c.yaml:17: steering.records[0].pool[0].check.qname: expected a domain name, got 'a..b'" },
		{ CHK("{type: dns, qname: example.com., qtype: BOGUS}"),
		  "c.yaml:17: steering.records[0].pool[0].check.qtype: expected a record type" },
		{ CHK("{type: dns, qname: example.com., rcode: OK}"),
		  "c.yaml:17: steering.records[0].pool[0].check.rcode: expected NOERROR, " },
		{ CHK("{type: dns, qname: example.com., answer: maybe}"),
		  "c.yaml:17: steering.records[0].pool[0].check.answer: " },
		{ CHK("{type: dns, qname: example.com., body: ok}"),
		  "c.yaml:17: steering.records[0].pool[0].check: 'body' is not a key of a dns check" },
		{ CHK("{type: command}"), "c.yaml:17: steering.records[0].pool[0].check: a command check needs a command" },
		{ CHK("{type: command, command: \"true\", port: 1}"),
		  "c.yaml:17: steering.records[0].pool[0].check: 'port' is not a key of a command check" },
		{ CHK("{type: tcp, port: 80, interval: 1s, timeout: 2s}"),
		  "c.yaml:17: steering.records[0].pool[0].check: timeout 2000 ms is above interval 1000 ms" },
		{ CHK("{type: tcp, port: 80, interval: 50ms}"), "c.yaml:17: steering.records[0].pool[0].check.interval: " },
		{ CHK("{type: tcp, port: 80, interval: 2}"),
		  "c.yaml:17: steering.records[0].pool[0].check.interval: expected a duration like 250ms" },
		{ CHK("{type: tcp, port: 80, rise: 0}"), "c.yaml:17: steering.records[0].pool[0].check.rise: " },
		{ CHK("{type: tcp, port: 80, fall: 101}"), "c.yaml:17: steering.records[0].pool[0].check.fall: " },
		{ CHK("{type: tcp, port: 80, colour: red}"),
		  "c.yaml:17: steering.records[0].pool[0].check: unknown key 'colour'" },
		{ CHK("[tcp, 80]"),
		  "c.yaml:17: steering.records[0].pool[0].check: expected a command or a mapping with a type" },
		{ CHK("{type: tcp, port: 80, interval: 2s}\n          check_interval_ms: 2000"),
		  "c.yaml:15: steering.records[0].pool[0]: check.interval and check_interval_ms both given" },
		{ CHK("{type: tcp, port: 80, fall: 3}\n          fall: 3"),
		  "c.yaml:15: steering.records[0].pool[0]: check.fall and fall both given" },
		{ CHK("{type: tcp, port: 80, interval: 500ms}\n          check_timeout_ms: 800"),
		  "c.yaml:15: steering.records[0].pool[0]: check timeout 800 ms is above its interval 500 ms" },
		{ GREC "      policy: [geo]\n      geo: [{subdivision: CA, labels: [X]}]\n",
		  "c.yaml:15: steering.records[0].geo[0].subdivision: expected an ISO 3166-2 code such as US-CA, got 'CA'" },
		{ GREC "      policy: [geo]\n      geo: [{country: US, city: 5368361, labels: [X]}]\n",
		  "steering.records[0].geo[0]: exactly one of country, continent, subdivision, city and asn" },
		{ GREC "      policy: [geo]\n      geo: [{city: 0, labels: [X]}]\n",
		  "steering.records[0].geo[0].city" },
		{ GREC "      policy: [asn]\n      geo: [{asn: 64500, labels: [X]}]\n",
		  "c.yaml:11: steering.records[0]: policy asn needs steering.asn_db" },
		{ "steering:\n  geoip: g.mmdb\n  asn_db: a.mmdb\n  records:\n    - owner: www.example.com.\n"
		  "      type: A\n      pool: [{name: a, address: 10.0.0.1}]\n"
		  "      policy: [geo]\n      geo: [{country: US, labels: [X]}, {asn: 64500, labels: [X]}]\n",
		  "steering.records[0].geo[1]: never used: the policy has no asn step" },
		{ "steering:\n  geoip: g.mmdb\n  asn_db: a.mmdb\n  records:\n    - owner: www.example.com.\n"
		  "      type: A\n      pool: [{name: a, address: 10.0.0.1}]\n"
		  "      policy: [asn, geo]\n      geo: [{asn: 64500, labels: [X]}]\n",
		  "steering.records[0]: policy geo needs a geo: list with country, continent, subdivision or city rules" },
	};
	char err[1024], path[256];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct p53_config cfg;
		snprintf(path, sizeof(path), "%s/c.yaml", tmpdir);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(HEAD, f);
		fputs(rows[i].yaml, f);
		fclose(f);
		err[0] = '\0';
		if (p53_config_load(path, &cfg, err, sizeof(err)) == 0) {
			p53_config_free(&cfg);
			fail_msg("row %zu accepted; want \"%s\"", i, rows[i].msg);
		}
		if (strstr(err, rows[i].msg) == NULL)
			fail_msg("row %zu: want \"%s\" in \"%s\"", i, rows[i].msg, err);
	}
}

/* A good probe config: every default and the address taken from the target. */
static void test_probe_config(void **state)
{
	char err[1024], path[256];
	struct p53_config cfg;

	(void)state;
	snprintf(path, sizeof(path), "%s/c.yaml", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(HEAD REC "      type: A\n      policy: [map]\n      pool:\n"
	      "        - {name: h, address: 10.0.0.1, check: {type: http, interval: 500ms}}\n"
	      "        - {name: t, address: 10.0.0.2, check: {type: tcp, port: 22, address: \"2001:db8::5\"}, rise: 3}\n"
	      "        - {name: d, address: 10.0.0.3, check: {type: dns, qname: Example.COM, qtype: A, answer: true}}\n"
	      "        - {name: c, address: 10.0.0.4, check: {type: command, command: \"true\", fall: 4}}\n"
	      "        - {name: s, address: 10.0.0.5, check: \"true\"}\n"
	      "        - {name: hs, address: 10.0.0.6, check: {type: https, host: www.example.com}}\n"
	      "        - {name: dt, address: 10.0.0.7, check: {type: dns, transport: tcp, qname: example.com.}}\n", f);
	fclose(f);
	if (p53_config_load(path, &cfg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	const struct p53_steer_target *p = cfg.steer.records[0].pool;
	/* http: port 80, path /, status 200, the target's address; timeout follows a short interval */
	assert_true(p[0].probe.set);
	assert_int_equal(p[0].probe.type, P53_PROBE_HTTP);
	assert_int_equal(p[0].probe.port, 80);
	assert_string_equal(p[0].probe.path, "/");
	assert_int_equal(p[0].probe.status, 200);
	assert_int_equal(p[0].probe.family, 4);
	assert_memory_equal(p[0].probe.addr, p[0].addr, 4);
	assert_int_equal(p[0].check_interval_ms, 500);
	assert_int_equal(p[0].check_timeout_ms, 500);
	assert_int_equal(p[0].rise, 2);
	assert_int_equal(p[0].fall, 2);
	assert_null(p[0].check);
	/* tcp: its own (IPv6) address; rise from the target's key */
	assert_int_equal(p[1].probe.family, 6);
	assert_int_equal(p[1].probe.port, 22);
	assert_int_equal(p[1].rise, 3);
	assert_int_equal(p[1].check_timeout_ms, 1000);
	/* dns: port 53, the name in lower-cased-or-not wire form, the type */
	assert_int_equal(p[2].probe.port, 53);
	assert_int_equal(p[2].probe.qtype, 1);
	assert_true(p[2].probe.answer);
	assert_int_equal(p[2].probe.rcode, 0);
	assert_int_equal(p[2].probe.qwire_len, 13);
	assert_memory_equal(p[2].probe.qwire, "\7Example\3COM\0", 13);
	/* command as a mapping: the same as the short form */
	assert_int_equal(p[3].probe.type, P53_PROBE_COMMAND);
	assert_string_equal(p[3].check, "true");
	assert_int_equal(p[3].fall, 4);
	assert_false(p[4].probe.set);
	assert_string_equal(p[4].check, "true");
	/* https: port 443, verification on against the system store; dns over tcp */
	assert_int_equal(p[5].probe.type, P53_PROBE_HTTPS);
	assert_int_equal(p[5].probe.port, 443);
	assert_string_equal(p[5].probe.path, "/");
	assert_string_equal(p[5].probe.host, "www.example.com");
	assert_true(p[5].probe.tls_verify);
	assert_null(p[5].probe.ca_file);
	assert_true(p[6].probe.tcp);
	assert_int_equal(p[6].probe.port, 53);
	assert_false(p[2].probe.tcp);
	p53_config_free(&cfg);
}

static void test_bad_map(void **state)
{
	static const struct { const char *json; const char *msg; } rows[] = {
		{ "[{\"networks\": [\"10.0.0.0/33\"], \"labels\": [\"AMS\"]}]",
		  "entry 0: networks[0] '10.0.0.0/33' is not an IPv4 or IPv6 CIDR" },
		{ "[{\"networks\": [\"10.0.0.1/8\"], \"labels\": [\"AMS\"]}]",
		  "entry 0: networks[0] '10.0.0.1/8' has bits set past /8" },
		{ "[{\"networks\": [\"10.0.0.0/8\"], \"labels\": []}]", "entry 0: 1 to 8 labels" },
		{ "[{\"networks\": [\"10.0.0.0/8\"]}]", "entry 0: expected exactly \"networks\" and \"labels\" lists" },
		{ "[{\"networks\": [\"10.0.0.0/8\"],\n \"labels\": [\"AMS\"]}", "m.json:2: " },
		/* A bad value is located by its text: file:line of its first occurrence. */
		{ "[{\"networks\": [\"10.0.0.0/8\",\n\n  \"10.0.0.0/33\"], \"labels\": [\"AMS\"]}]",
		  "m.json:3: entry 0: networks[1] '10.0.0.0/33' is not an IPv4 or IPv6 CIDR" },
		{ "[{\"networks\": [\"10.0.0.0/8\"], \"labels\": [\"AMS\"]},\n"
		  " {\"networks\": [\"192.0.2.1/24\"], \"labels\": [\"FRA\"]}]",
		  "m.json:2: entry 1: networks[0] '192.0.2.1/24' has bits set past /24" },
	};
	char err[512], path[256];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct p53_steer_conf c = {0};
		struct p53_steer_sources s;
		snprintf(path, sizeof(path), "%s/m.json", tmpdir);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(rows[i].json, f);
		fclose(f);
		c.map = path;
		err[0] = '\0';
		if (p53_steer_sources_load(&c, &s, err, sizeof(err)) == 0) {
			p53_steer_sources_free(&s);
			fail_msg("map row %zu accepted; want \"%s\"", i, rows[i].msg);
		}
		if (strstr(err, rows[i].msg) == NULL)
			fail_msg("map row %zu: want \"%s\" in \"%s\"", i, rows[i].msg, err);
	}
}

/* A config's steering table, built with the health in `up` (up[i][j]: target j of record i):
 * the config (HEAD + yaml) and the map (json) are written to the test's directory and loaded
 * as pop53d loads them. The rows go to p53_steer_build as pop53d passes its checks: one array,
 * each record's own targets only, so a build that read past a record's pool would read the
 * next record's flags. */
struct built {
	struct p53_config cfg;
	struct p53_steer_sources src;
	void *t;
	size_t len;
};

static void build_from(struct built *b, const char *yaml, const char *json,
		       bool up[][P53_STEER_MAX_POOL])
{
	char err[1024], path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/m.json", tmpdir);
	assert_non_null(f = fopen(path, "w"));
	fputs(json, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/c.yaml", tmpdir);
	assert_non_null(f = fopen(path, "w"));
	fputs(HEAD, f);
	fputs(yaml, f);
	fclose(f);
	if (p53_config_load(path, &b->cfg, err, sizeof(err)) != 0)
		fail_msg("config: %s", err);
	if (p53_steer_sources_load(&b->cfg.steer, &b->src, err, sizeof(err)) != 0)
		fail_msg("sources: %s", err);
	size_t n = 0;
	for (int i = 0; i < b->cfg.steer.n_records; i++)
		n += (size_t)b->cfg.steer.records[i].n_pool;
	bool *flat = calloc(n + 1, sizeof(*flat));
	assert_non_null(flat);
	n = 0;
	for (int i = 0; i < b->cfg.steer.n_records; i++)
		for (int j = 0; j < b->cfg.steer.records[i].n_pool; j++)
			flat[n++] = up[i][j];
	b->t = p53_steer_build(&b->cfg.steer, &b->src, flat, &b->len, err, sizeof(err));
	free(flat);
	if (b->t == NULL)
		fail_msg("build: %s", err);
}

static void built_free(struct built *b)
{
	free(b->t);
	p53_steer_sources_free(&b->src);
	p53_config_free(&b->cfg);
}

/* The addresses record `rec` answers a client at `ip` (NULL: no client), in answer order, as
 * "a b c", and the TTL. */
static uint8_t last_scope;

static const char *answer(const void *t, uint32_t rec, const char *ip, uint32_t *ttl)
{
	static char out[1024];
	const struct p53_steer_hdr *h = p53_steer_hdr(t);
	const struct p53_steer_rec *r = (const struct p53_steer_rec *)((const uint8_t *)t + h->records_off) + rec;
	struct p53_steer_client cl = {0};
	uint8_t scope;
	size_t n = 0;

	if (ip != NULL) {
		cl.v6 = strchr(ip, ':') != NULL;
		assert_int_equal(inet_pton(cl.v6 ? AF_INET6 : AF_INET, ip, cl.addr), 1);
	}
	const struct p53_steer_variant *v = p53_steer_pick(t, r, ip != NULL ? &cl : NULL, &scope);
	const uint8_t *p = p53_steer_rdata(t, v);
	out[0] = '\0';
	for (unsigned int k = 0; k < v->count; k++) {
		unsigned int rdlen = (unsigned int)p[10] << 8 | p[11];
		char a[INET6_ADDRSTRLEN];
		inet_ntop(rdlen == 4 ? AF_INET : AF_INET6, p + 12, a, sizeof(a));
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", k ? " " : "", a);
		p += 12 + rdlen;
	}
	if (ttl != NULL)
		*ttl = v->ttl;
	last_scope = scope;
	return out;
}

#define POOL3 "      pool:\n" \
	      "        - {name: a, address: 10.0.0.1, pop: AMS}\n" \
	      "        - {name: b, address: 10.0.0.2, pop: AMS}\n" \
	      "        - {name: c, address: 10.0.0.3, pop: FRA}\n"
#define MAP1 "[{\"networks\": [\"198.51.100.0/24\"], \"labels\": [\"FRA\", \"AMS\"]}]"

/* p53_steer_check refuses an IPv6 index that would send a lookup outside the blocks or give it
 * a range that wraps: an entry past the last block, entries out of order, an index whose
 * P53_STEER_IDX6 entries do not fit (one that holds only P53_STEER_IDX does not). */
static void test_check_index6(void **state)
{
	static bool up[2][P53_STEER_MAX_POOL];
	struct built b;
	const char *why = NULL;

	(void)state;
	build_from(&b, REC "      type: A\n      policy: [map]\n" POOL3,
		   "[{\"networks\": [\"2001:db8::/32\"], \"labels\": [\"FRA\"]}]", up);
	struct p53_steer_src *s = &((struct p53_steer_hdr *)b.t)->src[P53_STEER_SRC_MAP];
	uint32_t *idx = (uint32_t *)(void *)((uint8_t *)b.t + s->idx6_off);
	assert_int_equal(p53_steer_check(b.t, b.len, &why), 0);
	assert_int_equal(s->n6, 3);                    /* gap, 2001:db8::/32, gap */
	assert_int_equal(idx[P53_STEER_IDX], 2);       /* 4000:: is in the last gap */
	assert_int_equal(look(b.t, "2001:db8::1"), LL(0, 32));
	assert_int_equal(look(b.t, "2001:db9::1"), LL(P53_STEER_NOLOC, 32));

	idx[P53_STEER_IDX] = 3;                        /* past the last block */
	assert_int_not_equal(p53_steer_check(b.t, b.len, &why), 0);
	assert_string_equal(why, "prefix index out of order");
	idx[P53_STEER_IDX] = 1;                        /* below the entry before it */
	assert_int_not_equal(p53_steer_check(b.t, b.len, &why), 0);
	assert_string_equal(why, "prefix index out of order");
	idx[P53_STEER_IDX] = 2;
	assert_int_equal(p53_steer_check(b.t, b.len, &why), 0);
	uint32_t off = s->idx6_off;
	s->idx6_off = (uint32_t)(b.len - P53_STEER_IDX * sizeof(uint32_t));
	assert_int_not_equal(p53_steer_check(b.t, b.len, &why), 0);
	assert_string_equal(why, "prefix index outside the table");
	s->idx6_off = off;
	assert_int_equal(p53_steer_check(b.t, b.len, &why), 0);
	built_free(&b);
}

/* p53_steer_find: the record's key (hash, type and length in its first 8 bytes) and its owner
 * from the table's start; a name differing in one byte (same length and type), another type,
 * or another length finds nothing. p53_steer_check refuses a record whose key byte is not 0 or
 * whose owner lies before the names. */
static void test_find_key(void **state)
{
	static bool up[2][P53_STEER_MAX_POOL];
	static const uint8_t www[] = "\003www\007example\003com";
	static const uint8_t wwx[] = "\003wwx\007example\003com";
	static const uint8_t ww[] = "\002ww\007example\003com";
	struct built b;
	const char *why = NULL;

	(void)state;
	build_from(&b, REC "      type: A\n      policy: [map]\n" POOL3, MAP1, up);
	struct p53_steer_hdr *h = (struct p53_steer_hdr *)b.t;
	struct p53_steer_rec *r = (struct p53_steer_rec *)(void *)((uint8_t *)b.t + h->records_off);
	assert_int_equal(h->n_records, 1);
	assert_int_equal(r->zero, 0);
	assert_true(r->name_off >= h->names_off);
	assert_memory_equal((const uint8_t *)b.t + r->name_off, www, sizeof(www));
	assert_ptr_equal(p53_steer_find(b.t, www, sizeof(www), p53_name_hash(www, sizeof(www)), 1), r);
	assert_null(p53_steer_find(b.t, www, sizeof(www), p53_name_hash(www, sizeof(www)), 28));
	/* the same hash given for a name one byte apart: the name compare refuses it */
	assert_null(p53_steer_find(b.t, wwx, sizeof(wwx), p53_name_hash(www, sizeof(www)), 1));
	assert_null(p53_steer_find(b.t, ww, sizeof(ww), p53_name_hash(ww, sizeof(ww)), 1));
	assert_int_equal(p53_steer_check(b.t, b.len, &why), 0);
	r->zero = 1;
	assert_int_not_equal(p53_steer_check(b.t, b.len, &why), 0);
	assert_string_equal(why, "record out of range");
	r->zero = 0;
	uint32_t off = r->name_off;
	r->name_off = h->names_off - 1;
	assert_int_not_equal(p53_steer_check(b.t, b.len, &why), 0);
	assert_string_equal(why, "record out of range");
	r->name_off = off;
	assert_int_equal(p53_steer_check(b.t, b.len, &why), 0);
	built_free(&b);
}

/* p53_steer_at: an owner's records chained from its first in config order (www A -> www
 * AAAA, api A alone), found by the index an image node holds (1 + the first's) with no name;
 * a table of another layout (another list of records) or an index out of range says "look it
 * up by name"; p53_steer_check refuses a chain going back or to another owner. A reload with
 * the same records keeps the layout, another list gets a new one. */
static void test_steer_at_chain(void **state)
{
	static bool up[3][P53_STEER_MAX_POOL];
	struct built b, b2;
	const struct p53_steer_rec *r = NULL;
	const char *why = NULL;

	(void)state;
	build_from(&b, REC "      type: A\n      policy: [map]\n" POOL3
		       "    - owner: api.example.com.\n      type: A\n      policy: [map]\n" POOL3
		       "    - owner: www.example.com.\n      type: AAAA\n      policy: [map]\n"
		       "      pool: [{name: x, address: '2001:db8::1', pop: AMS}]\n", MAP1, up);
	struct p53_steer_hdr *h = (struct p53_steer_hdr *)b.t;
	struct p53_steer_rec *recs = (struct p53_steer_rec *)(void *)((uint8_t *)b.t + h->records_off);
	assert_int_equal(h->n_records, 3);
	assert_int_not_equal(b.cfg.steer.layout, 0);
	assert_true(h->layout == b.cfg.steer.layout);
	assert_int_equal(recs[0].next, 3);
	assert_int_equal(recs[1].next, 0);
	assert_int_equal(recs[2].next, 0);
	assert_int_equal(p53_steer_at(b.t, h->layout, 1, 1, &r), 1);
	assert_ptr_equal(r, &recs[0]);
	assert_int_equal(p53_steer_at(b.t, h->layout, 1, 28, &r), 1);
	assert_ptr_equal(r, &recs[2]);
	assert_int_equal(p53_steer_at(b.t, h->layout, 1, 5, &r), 1);
	assert_null(r);
	assert_int_equal(p53_steer_at(b.t, h->layout, 2, 1, &r), 1);
	assert_ptr_equal(r, &recs[1]);
	assert_int_equal(p53_steer_at(b.t, h->layout, 2, 28, &r), 1);
	assert_null(r);
	/* no index, one past the records, another layout: by name */
	assert_int_equal(p53_steer_at(b.t, h->layout, 0, 1, &r), 0);
	assert_int_equal(p53_steer_at(b.t, h->layout, 4, 1, &r), 0);
	assert_int_equal(p53_steer_at(b.t, h->layout + 1, 1, 1, &r), 0);
	static const uint8_t www[] = "\003www\007example\003com";
	assert_ptr_equal(p53_steer_node(b.t, h->layout + 1, 1, www, sizeof(www),
					p53_name_hash(www, sizeof(www)), 28), &recs[2]);
	assert_int_equal(p53_steer_check(b.t, b.len, &why), 0);
	recs[2].next = 1; /* backwards: a loop */
	assert_int_not_equal(p53_steer_check(b.t, b.len, &why), 0);
	assert_string_equal(why, "record chain out of range");
	recs[2].next = 0;
	recs[0].next = 2; /* api: another owner */
	assert_int_not_equal(p53_steer_check(b.t, b.len, &why), 0);
	assert_string_equal(why, "record chain out of range");
	recs[0].next = 4; /* past the records */
	assert_int_not_equal(p53_steer_check(b.t, b.len, &why), 0);
	recs[0].next = 3;
	assert_int_equal(p53_steer_check(b.t, b.len, &why), 0);

	/* A reload: the same records keep the layout; one record fewer gets a new one. */
	build_from(&b2, REC "      type: A\n      policy: [map]\n" POOL3
			"    - owner: api.example.com.\n      type: A\n      policy: [map]\n" POOL3
			"    - owner: www.example.com.\n      type: AAAA\n      policy: [map]\n"
			"      pool: [{name: x, address: '2001:db8::1', pop: AMS}]\n", MAP1, up);
	assert_true(b2.cfg.steer.layout != b.cfg.steer.layout); /* loaded alone: new */
	p53_steer_conf_layout(&b2.cfg.steer, &b.cfg.steer);
	assert_true(b2.cfg.steer.layout == b.cfg.steer.layout);
	b2.cfg.steer.n_records = 2;
	p53_steer_conf_layout(&b2.cfg.steer, &b.cfg.steer);
	assert_true(b2.cfg.steer.layout != b.cfg.steer.layout && b2.cfg.steer.layout != 0);
	b2.cfg.steer.n_records = 3;
	b2.cfg.steer.records[2].type = 1;
	p53_steer_conf_layout(&b2.cfg.steer, &b.cfg.steer);
	assert_true(b2.cfg.steer.layout != b.cfg.steer.layout);
	b2.cfg.steer.records[2].type = 28;
	built_free(&b2);
	built_free(&b);
}

/* all_down: what a record answers when every target is down; the default is every target. */
static void test_all_down(void **state)
{
	static bool up[2][P53_STEER_MAX_POOL];
	struct built b;

	(void)state;
	build_from(&b, REC "      type: A\n      policy: [map]\n" POOL3
		   "    - owner: fb.example.com.\n      type: A\n      policy: [map]\n"
		   "      all_down: fallback\n      fallback: [192.0.2.80, 192.0.2.81]\n" POOL3,
		   MAP1, up);
	assert_string_equal(answer(b.t, 0, "198.51.100.1", NULL), "10.0.0.1 10.0.0.2 10.0.0.3");
	assert_string_equal(answer(b.t, 0, NULL, NULL), "10.0.0.1 10.0.0.2 10.0.0.3");
	assert_string_equal(answer(b.t, 1, "198.51.100.1", NULL), "192.0.2.80 192.0.2.81");
	assert_string_equal(answer(b.t, 1, "10.9.9.9", NULL), "192.0.2.80 192.0.2.81");
	built_free(&b);
	/* One target up: the fallback addresses are not answered. */
	up[1][1] = true;
	up[0][1] = true;
	build_from(&b, REC "      type: A\n      policy: [map]\n" POOL3
		   "    - owner: fb.example.com.\n      type: A\n      policy: [map]\n"
		   "      all_down: fallback\n      fallback: [192.0.2.80, 192.0.2.81]\n" POOL3,
		   MAP1, up);
	assert_string_equal(answer(b.t, 1, "198.51.100.1", NULL), "10.0.0.2");
	assert_string_equal(answer(b.t, 1, NULL, NULL), "10.0.0.2");
	assert_string_equal(answer(b.t, 0, NULL, NULL), "10.0.0.2");
	built_free(&b);
}

/* all_down: pool: with every target of the pool down, the policies run over the fallback
 * pool's targets that are up (map labels, priority); with those down too, all of them. */
static void test_all_down_pool(void **state)
{
	static bool up[2][P53_STEER_MAX_POOL];
	struct built b;
	const char *yaml = REC "      type: A\n      policy: [map]\n      all_down: pool\n" POOL3
		"      fallback_pool:\n"
		"        - {name: x, address: 10.0.9.1, pop: AMS}\n"
		"        - {name: y, address: 10.0.9.2, pop: FRA}\n"
		"    - owner: p.example.com.\n      type: A\n      policy: [priority]\n      all_down: pool\n"
		"      pool: [{name: a, address: 10.0.0.1}]\n"
		"      fallback_pool: [{name: x, address: 10.0.9.1}, {name: y, address: 10.0.9.2}]\n";

	(void)state;
	for (int i = 0; i < 5; i++)
		up[0][i] = up[1][i] = true;
	build_from(&b, yaml, MAP1, up);
	/* the pool up: the fallback pool is never answered, even at its label */
	assert_string_equal(answer(b.t, 0, "198.51.100.1", NULL), "10.0.0.3");
	assert_string_equal(answer(b.t, 0, NULL, NULL), "10.0.0.1 10.0.0.2 10.0.0.3");
	assert_string_equal(answer(b.t, 1, "192.0.2.7", NULL), "10.0.0.1");
	built_free(&b);
	for (int i = 0; i < 3; i++)
		up[0][i] = false;
	up[1][0] = false;
	build_from(&b, yaml, MAP1, up);
	/* the pool down: the map's labels pick from the fallback pool (FRA first), priority too */
	assert_string_equal(answer(b.t, 0, "198.51.100.1", NULL), "10.0.9.2");
	assert_int_equal(last_scope, 24);
	assert_string_equal(answer(b.t, 0, NULL, NULL), "10.0.9.1 10.0.9.2");
	assert_string_equal(answer(b.t, 1, "192.0.2.7", NULL), "10.0.9.1");
	built_free(&b);
	up[0][4] = false;               /* y down too: AMS from the map's second label */
	up[1][1] = false;               /* x down: y */
	build_from(&b, yaml, MAP1, up);
	assert_string_equal(answer(b.t, 0, "198.51.100.1", NULL), "10.0.9.1");
	assert_string_equal(answer(b.t, 1, "192.0.2.7", NULL), "10.0.9.2");
	built_free(&b);
	up[0][3] = false;               /* everything down: every fallback target */
	build_from(&b, yaml, MAP1, up);
	assert_string_equal(answer(b.t, 0, "198.51.100.1", NULL), "10.0.9.1 10.0.9.2");
	built_free(&b);
}

/* A steered CNAME: one record per variant, the first choice; its RDATA the target's name. */
static void test_cname(void **state)
{
	static bool up[1][P53_STEER_MAX_POOL] = { { true, true, true } };
	struct built b;
	const char *yaml = REC "      type: CNAME\n      policy: [map]\n      pool:\n"
		"        - {name: a, target: A.example.net., pop: AMS}\n"
		"        - {name: b, target: b.example.net, pop: AMS}\n"
		"        - {name: c, target: c.example.com., pop: FRA}\n";

	(void)state;
	build_from(&b, yaml, MAP1, up);
	const struct p53_steer_hdr *h = p53_steer_hdr(b.t);
	const struct p53_steer_rec *r = (const struct p53_steer_rec *)((const uint8_t *)b.t + h->records_off);
	struct p53_steer_client cl = { .v6 = 0, .addr = { 198, 51, 100, 1 } };
	uint8_t scope;
	const struct p53_steer_variant *v = p53_steer_pick(b.t, r, &cl, &scope);
	const uint8_t *p = p53_steer_rdata(b.t, v);
	static const uint8_t c_name[] = "\001c\007example\003com";
	assert_int_equal(v->count, 1);
	assert_int_equal(p[2] << 8 | p[3], 5);
	assert_int_equal(p[11], sizeof(c_name));
	assert_memory_equal(p + 12, c_name, sizeof(c_name));
	assert_int_equal(v->rdata_len, 12 + sizeof(c_name));
	assert_int_equal(scope, 24);
	/* no map entry: the fallback, one CNAME (the first target up), in canonical case */
	v = p53_steer_pick(b.t, r, NULL, &scope);
	p = p53_steer_rdata(b.t, v);
	static const uint8_t a_name[] = "\001a\007example\003net";
	assert_int_equal(v->count, 1);
	assert_memory_equal(p + 12, a_name, sizeof(a_name));
	built_free(&b);
}

/* priority: the up targets with the lowest priority (default: pool order); scope 0. */
static void test_priority(void **state)
{
	static bool up[2][P53_STEER_MAX_POOL];
	struct built b;
	const char *yaml = REC "      type: A\n      policy: [priority]\n" POOL3
		"    - owner: p2.example.com.\n      type: A\n      policy: [priority]\n      pool:\n"
		"        - {name: a, address: 10.0.0.1, priority: 5}\n"
		"        - {name: b, address: 10.0.0.2, priority: 2}\n"
		"        - {name: c, address: 10.0.0.3, priority: 2}\n";

	(void)state;
	for (int i = 0; i < 3; i++)
		up[0][i] = up[1][i] = true;
	build_from(&b, yaml, MAP1, up);
	assert_string_equal(answer(b.t, 0, "198.51.100.1", NULL), "10.0.0.1");
	assert_int_equal(last_scope, 0);
	assert_string_equal(answer(b.t, 0, "2001:db8::1", NULL), "10.0.0.1");
	assert_string_equal(answer(b.t, 1, "198.51.100.1", NULL), "10.0.0.2 10.0.0.3");
	built_free(&b);
	up[0][0] = false;               /* the first down: the second */
	up[1][1] = false;               /* one of a tie down: the other */
	build_from(&b, yaml, MAP1, up);
	assert_string_equal(answer(b.t, 0, "198.51.100.1", NULL), "10.0.0.2");
	assert_string_equal(answer(b.t, 1, "198.51.100.1", NULL), "10.0.0.3");
	built_free(&b);
	up[1][2] = false;               /* the tie gone: the higher number */
	build_from(&b, yaml, MAP1, up);
	assert_string_equal(answer(b.t, 1, "198.51.100.1", NULL), "10.0.0.1");
	built_free(&b);
}

/* weighted: each client /24 (or /56) gets one target, its share of the 256 buckets is its
 * share of the weight; one client block always gets the same answer. */
static void test_weighted(void **state)
{
	static bool up[1][P53_STEER_MAX_POOL];
	struct built b;
	int count[3] = {0};
	char ip[64];
	uint8_t t[P53_STEER_MAX_POOL];

	(void)state;
	for (int i = 0; i < 3; i++)
		up[0][i] = true;
	build_from(&b, REC "      type: A\n      policy: [weighted]\n      pool:\n"
		   "        - {name: a, address: 10.0.0.1, weight: 3}\n"
		   "        - {name: b, address: 10.0.0.2, weight: 1}\n"
		   "        - {name: c, address: 10.0.0.3, weight: 0}\n", MAP1, up);
	const struct p53_steer_record *r = &b.cfg.steer.records[0];
	for (uint32_t k = 0; k < P53_STEER_BUCKETS; k++) {
		assert_int_equal(p53_steer_decide_client(r, up[0], P53_POLICY_WEIGHTED, k, t), 1);
		count[t[0]]++;
	}
	assert_int_equal(count[0], 192);         /* 3/4 of the buckets */
	assert_int_equal(count[1], 64);
	assert_int_equal(count[2], 0);           /* weight 0: never */
	/* Clients: 4096 /24s land about 3:1; every host of a /24 gets its /24's answer. */
	memset(count, 0, sizeof(count));
	for (int i = 0; i < 4096; i++) {
		snprintf(ip, sizeof(ip), "100.%d.%d.7", i >> 8, i & 255);
		char first[64];
		snprintf(first, sizeof(first), "%s", answer(b.t, 0, ip, NULL));
		assert_int_equal(last_scope, 24);
		count[first[7] - '1']++;
		snprintf(ip, sizeof(ip), "100.%d.%d.200", i >> 8, i & 255);
		assert_string_equal(answer(b.t, 0, ip, NULL), first);
	}
	if (count[0] < 2800 || count[0] > 3350 || count[2] != 0)
		fail_msg("weights 3:1:0 over 4096 client /24s gave %d:%d:%d", count[0], count[1], count[2]);
	answer(b.t, 0, "2001:db8:1:2::1", NULL);
	assert_int_equal(last_scope, 56);
	built_free(&b);
	/* The heavy one down: everything to the other. */
	up[0][0] = false;
	build_from(&b, REC "      type: A\n      policy: [weighted]\n      pool:\n"
		   "        - {name: a, address: 10.0.0.1, weight: 3}\n"
		   "        - {name: b, address: 10.0.0.2, weight: 1}\n"
		   "        - {name: c, address: 10.0.0.3, weight: 0}\n", MAP1, up);
	for (int i = 0; i < 256; i++) {
		snprintf(ip, sizeof(ip), "100.0.%d.1", i);
		assert_string_equal(answer(b.t, 0, ip, NULL), "10.0.0.2");
	}
	built_free(&b);
}

/* sticky: rendezvous hashing of the client block over the up targets: a target going down
 * moves only its own buckets, and they come back to it when it returns. */
static void test_sticky(void **state)
{
	bool up[4] = { true, true, true, true };
	struct p53_steer_target pool[4] = { { 0 } };
	struct p53_steer_record r = { .pool = pool, .n_pool = 4 };
	const char *names[4] = { "ams1", "fra1", "lhr1", "cdg1" };
	uint8_t before[P53_STEER_BUCKETS], t[P53_STEER_MAX_POOL];
	int count[4] = {0};

	(void)state;
	for (int i = 0; i < 4; i++) {
		r.pool[i].name = (char *)names[i];
		r.pool[i].weight = 1;
	}
	for (uint32_t k = 0; k < P53_STEER_BUCKETS; k++) {
		assert_int_equal(p53_steer_decide_client(&r, up, P53_POLICY_STICKY, k, t), 1);
		before[k] = t[0];
		count[t[0]]++;
	}
	for (int i = 0; i < 4; i++)
		if (count[i] < 40)
			fail_msg("sticky spreads badly: target %d has %d of 256 buckets", i, count[i]);
	up[1] = false;
	int moved = 0;
	for (uint32_t k = 0; k < P53_STEER_BUCKETS; k++) {
		assert_int_equal(p53_steer_decide_client(&r, up, P53_POLICY_STICKY, k, t), 1);
		assert_int_not_equal(t[0], 1);
		if (before[k] != 1 && t[0] != before[k])
			fail_msg("bucket %u moved from %d to %d though %d stayed up", k, before[k], t[0], before[k]);
		moved += t[0] != before[k];
	}
	assert_int_equal(moved, count[1]);
	up[1] = true;
	for (uint32_t k = 0; k < P53_STEER_BUCKETS; k++) {
		p53_steer_decide_client(&r, up, P53_POLICY_STICKY, k, t);
		assert_int_equal(t[0], before[k]);
	}

	/* Weighted: weights 1, 2, 3, 4 share the buckets about 1:2:3:4 (256 buckets: 26, 51, 77,
	 * 102), and the same bucket always gets the same target. */
	int wcount[4] = {0};
	uint8_t wbefore[P53_STEER_BUCKETS];
	for (int i = 0; i < 4; i++)
		r.pool[i].weight = (unsigned int)i + 1;
	for (uint32_t k = 0; k < P53_STEER_BUCKETS; k++) {
		assert_int_equal(p53_steer_decide_client(&r, up, P53_POLICY_STICKY, k, t), 1);
		wbefore[k] = t[0];
		wcount[t[0]]++;
		assert_int_equal(p53_steer_decide_client(&r, up, P53_POLICY_STICKY, k, t), 1);
		assert_int_equal(t[0], wbefore[k]);
	}
	for (int i = 0; i < 4; i++) {
		double want = 256.0 * (i + 1) / 10.0;
		if (wcount[i] < want * 0.65 - 4 || wcount[i] > want * 1.35 + 4)
			fail_msg("sticky by weight: target %d (weight %d) has %d of 256 buckets, want about %.0f",
				 i, i + 1, wcount[i], want);
	}
	/* Lowering one weight moves buckets off that target only. */
	r.pool[3].weight = 1;
	int off = 0;
	for (uint32_t k = 0; k < P53_STEER_BUCKETS; k++) {
		p53_steer_decide_client(&r, up, P53_POLICY_STICKY, k, t);
		if (t[0] != wbefore[k] && wbefore[k] != 3)
			fail_msg("bucket %u moved from %d to %d, though only target 3's weight fell", k,
				 wbefore[k], t[0]);
		off += t[0] != wbefore[k];
	}
	assert_true(off > 0);
	for (int i = 0; i < 4; i++)
		r.pool[i].weight = 1;

	/* Through a table: one /24 or /56 keeps its target, with the scope it depended on. */
	static bool tup[1][P53_STEER_MAX_POOL] = { { true, true, true } };
	struct built b;
	char first[64];
	build_from(&b, REC "      type: A\n      policy: [sticky, map]\n" POOL3, MAP1, tup);
	snprintf(first, sizeof(first), "%s", answer(b.t, 0, "203.0.113.1", NULL));
	assert_int_equal(last_scope, 24);
	assert_string_equal(answer(b.t, 0, "203.0.113.254", NULL), first);
	snprintf(first, sizeof(first), "%s", answer(b.t, 0, "2001:db8:aa:bb00::1", NULL));
	assert_int_equal(last_scope, 56);
	assert_string_equal(answer(b.t, 0, "2001:db8:aa:bbff:ffff::1", NULL), first);
	built_free(&b);
}

/* A MaxMind DB in the test's directory, built by MaxMind's writer (tests/steer/mmdb_build.pl)
 * from a JSON list of networks. */
static void mmdb(const char *name, const char *type, const char *json)
{
	char path[256], cmd[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.json", tmpdir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(json, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "perl %s/tests/steer/mmdb_build.pl --type %s %s/%s %s", P53_SRCDIR,
		 type, tmpdir, name, path);
	if (system(cmd) != 0)
		fail_msg("%s failed", cmd);
}

#define CITY(cc, cont, sub, id, name) \
	"{\"country\": {\"iso_code\": \"" cc "\"}, \"continent\": {\"code\": \"" cont "\"}, " \
	"\"subdivisions\": [{\"iso_code\": \"" sub "\"}], \"city\": {\"geoname_id\": " id ", " \
	"\"names\": {\"en\": \"" name "\"}}}"
#define SUBDIV(cc, cont, sub) \
	"{\"country\": {\"iso_code\": \"" cc "\"}, \"continent\": {\"code\": \"" cont "\"}, " \
	"\"subdivisions\": [{\"iso_code\": \"" sub "\"}]}"
#define COUNTRY(cc, cont) "{\"country\": {\"iso_code\": \"" cc "\"}, \"continent\": {\"code\": \"" cont "\"}}"

/* geo reads city, subdivision, country, continent, in that order (the most specific first);
 * asn reads the ASN database. The scope is the MMDB network that decided, or the longer of
 * the blocks read when an earlier step found nothing there. */
static void test_geo_tiers(void **state)
{
	static const struct { int rec; const char *ip; const char *want; int scope; const char *msg; } rows[] = {
		{ 0, "198.51.100.10", "10.0.0.1", 26, "Chicago: city 4887398 -> ORD (before continent NA)" },
		{ 0, "198.51.100.70", "10.0.0.2", 26, "San Francisco (no city rule): subdivision US-CA -> LAX" },
		{ 0, "198.51.100.130", "10.0.0.6", 26, "Texas: subdivision US-TX -> DAL (before country US)" },
		{ 0, "198.51.100.200", "10.0.0.8", 26, "New York (no rule): country US -> IAD (before continent NA)" },
		{ 0, "203.0.113.9", "10.0.0.5", 24, "Mexico (no country rule): continent NA -> MEX" },
		{ 0, "100.64.1.1", "10.0.0.1 10.0.0.2 10.0.0.3 10.0.0.4 10.0.0.5 10.0.0.6 10.0.0.7 10.0.0.8", 10,
		  "Brazil (no rule): the fallback, every target" },
		{ 0, "2001:db8:10::1", "10.0.0.3", 48, "IPv6, city 5368361 -> NRT (before subdivision US-CA)" },
		{ 0, "2001:db8:20::1", "10.0.0.7", 44, "IPv6, subdivision DE-BE -> BER" },
		{ 1, "198.51.100.70", "10.0.0.4", 27, "asn: AS64500 -> FRA, scope of the ASN network /27" },
		{ 1, "198.51.100.100", "10.0.0.8", 27,
		  "asn miss (the ASN DB's empty /27), geo: country US -> IAD, scope 27 (the longer)" },
		{ 1, "2001:db8:20:8000::1", "10.0.0.4", 49, "IPv6 asn: AS64501 -> FRA, scope 49" },
		{ 1, "2001:db8:20::1", "10.0.0.7", 49, "IPv6 asn miss, geo: continent EU -> BER, scope 49" },
	};
	static bool up[2][P53_STEER_MAX_POOL];
	const char *pool =
		"      pool:\n"
		"        - {name: ord, address: 10.0.0.1, pop: ORD}\n"
		"        - {name: lax, address: 10.0.0.2, pop: LAX}\n"
		"        - {name: nrt, address: 10.0.0.3, pop: NRT}\n"
		"        - {name: fra, address: 10.0.0.4, pop: FRA}\n"
		"        - {name: mex, address: 10.0.0.5, pop: MEX}\n"
		"        - {name: dal, address: 10.0.0.6, pop: DAL}\n"
		"        - {name: ber, address: 10.0.0.7, pop: BER}\n"
		"        - {name: iad, address: 10.0.0.8, pop: IAD}\n";
	char yaml[4096];
	struct built b;

	(void)state;
	mmdb("g.mmdb", "city", "["
	     "{\"network\": \"198.51.100.0/26\", \"data\": " CITY("US", "NA", "IL", "4887398", "Chicago") "},"
	     "{\"network\": \"198.51.100.64/26\", \"data\": " CITY("US", "NA", "CA", "5391959", "San Francisco") "},"
	     "{\"network\": \"198.51.100.128/26\", \"data\": " SUBDIV("US", "NA", "TX") "},"
	     "{\"network\": \"198.51.100.192/26\", \"data\": " SUBDIV("US", "NA", "NY") "},"
	     "{\"network\": \"203.0.113.0/24\", \"data\": " COUNTRY("MX", "NA") "},"
	     "{\"network\": \"100.64.0.0/10\", \"data\": " COUNTRY("BR", "SA") "},"
	     "{\"network\": \"2001:db8:10::/48\", \"data\": " CITY("US", "NA", "CA", "5368361", "Los Angeles") "},"
	     "{\"network\": \"2001:db8:20::/44\", \"data\": " SUBDIV("DE", "EU", "BE") "}]");
	mmdb("a.mmdb", "asn", "["
	     "{\"network\": \"198.51.100.64/27\", \"data\": {\"autonomous_system_number\": 64500, "
	     "\"autonomous_system_organization\": \"Example Net\"}},"
	     "{\"network\": \"2001:db8:20:8000::/49\", \"data\": {\"autonomous_system_number\": 64501, "
	     "\"autonomous_system_organization\": \"Example Six\"}}]");
	snprintf(yaml, sizeof(yaml),
		 "steering:\n  geoip: g.mmdb\n  asn_db: a.mmdb\n  records:\n"
		 "    - owner: geo.example.com.\n      type: A\n      policy: [geo]\n%s"
		 "      geo:\n"
		 "        - {continent: NA, labels: [MEX]}\n"
		 "        - {country: US, labels: [IAD]}\n"
		 "        - {subdivision: US-CA, labels: [LAX]}\n"
		 "        - {subdivision: us-tx, labels: [DAL]}\n"
		 "        - {subdivision: DE-BE, labels: [BER]}\n"
		 "        - {city: 4887398, labels: [ORD]}\n"
		 "        - {city: 5368361, labels: [NRT]}\n"
		 "        - {country: JP, labels: [NRT]}\n"
		 "    - owner: asn.example.com.\n      type: A\n      policy: [asn, geo]\n%s"
		 "      geo:\n"
		 "        - {asn: 64500, labels: [FRA]}\n"
		 "        - {asn: 64501, labels: [FRA]}\n"
		 "        - {country: US, labels: [IAD]}\n"
		 "        - {continent: EU, labels: [BER]}\n", pool, pool);
	for (int i = 0; i < 8; i++)
		up[0][i] = up[1][i] = true;
	build_from(&b, yaml, MAP1, up);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *got = answer(b.t, (uint32_t)rows[i].rec, rows[i].ip, NULL);
		if (strcmp(got, rows[i].want) != 0 || last_scope != rows[i].scope)
			fail_msg("row %zu (%s): want %s scope %d, got %s scope %d", i, rows[i].msg,
				 rows[i].want, rows[i].scope, got, last_scope);
	}
	/* The loaded data explain shows: the city's name, the ASN's organization. */
	const struct p53_steer_source *g = &b.src.src[P53_STEER_SRC_GEO], *a = &b.src.src[P53_STEER_SRC_ASN];
	int chicago = 0, org = 0;
	for (uint32_t l = 0; l < g->n_locs; l++)
		chicago += g->locs[l].city != NULL && strcmp(g->locs[l].city, "Chicago") == 0 &&
			   strcmp(g->locs[l].subdivision[0], "IL") == 0;
	for (uint32_t l = 0; l < a->n_locs; l++)
		org += a->locs[l].asn == 64500 && a->locs[l].org != NULL &&
		       strcmp(a->locs[l].org, "Example Net") == 0;
	assert_int_equal(chicago, 1);
	assert_int_equal(org, 1);
	built_free(&b);

	/* Chicago's city target down: the next tier that holds it (country US -> IAD). */
	up[0][0] = false;
	build_from(&b, yaml, MAP1, up);
	assert_string_equal(answer(b.t, 0, "198.51.100.10", NULL), "10.0.0.8");
	assert_int_equal(last_scope, 26);
	built_free(&b);
}

/* The IPv4 networks are compiled once, into the IPv4 blocks: the IPv6 walk does not enter the
 * IPv4 subtree again at ::/96, nor through MaxMind's aliases (::ffff:0:0/96, 2002::/16); such
 * IPv6 clients get no location. Regression: every IPv4 network was also an IPv6 block (three
 * with aliases), 24 bytes each, in a GeoLite2-sized table. */
static void test_geo_ipv4_once(void **state)
{
	static bool up[1][P53_STEER_MAX_POOL] = { { true, true } };
	struct built b;

	(void)state;
	mmdb("g.mmdb", "city --alias", "["
	     "{\"network\": \"198.51.100.0/24\", \"data\": " COUNTRY("US", "NA") "},"
	     "{\"network\": \"203.0.113.0/24\", \"data\": " COUNTRY("US", "NA") "},"
	     "{\"network\": \"2001:db8::/32\", \"data\": " COUNTRY("US", "NA") "}]");
	build_from(&b, "steering:\n  geoip: g.mmdb\n  records:\n"
		   "    - owner: geo.example.com.\n      type: A\n      policy: [geo]\n"
		   "      geo: [{country: US, labels: [ORD]}]\n      pool:\n"
		   "        - {name: ord, address: 10.0.0.1, pop: ORD}\n"
		   "        - {name: fra, address: 10.0.0.4, pop: FRA}\n", MAP1, up);
	const struct p53_steer_source *g = &b.src.src[P53_STEER_SRC_GEO];
	uint32_t located = 0;
	for (uint32_t i = 0; i < g->n6; i++)
		located += g->b6[i].loc_len >> 8 != P53_STEER_NOLOC;
	assert_int_equal(located, 1);
	assert_string_equal(answer(b.t, 0, "198.51.100.7", NULL), "10.0.0.1");
	assert_int_equal(last_scope, 24);
	assert_string_equal(answer(b.t, 0, "2001:db8::1", NULL), "10.0.0.1");
	assert_string_equal(answer(b.t, 0, "::ffff:198.51.100.7", NULL), "10.0.0.1 10.0.0.4");
	assert_string_equal(answer(b.t, 0, "2002:c633:6407::1", NULL), "10.0.0.1 10.0.0.4");
	assert_string_equal(answer(b.t, 0, "::198.51.100.7", NULL), "10.0.0.1 10.0.0.4");
	built_free(&b);
}

/* A tree with more distinct records than the walk's first table of records seen holds (it
 * grows from 1024 slots at half full; it was once sized by the node count: for a
 * GeoLite2-sized tree, 384 MB): every record keeps its own location, and each network its answer. */
static void test_geo_many_records(void **state)
{
	static bool up[1][P53_STEER_MAX_POOL] = { { true, true } };
	enum { N = 3000 };
	size_t cap = (size_t)N * 200, len = 0;
	char *json = malloc(cap);
	struct built b;

	(void)state;
	assert_non_null(json);
	len += (size_t)snprintf(json + len, cap - len, "[");
	for (int i = 0; i < N; i++)
		len += (size_t)snprintf(json + len, cap - len,
					"%s{\"network\": \"10.%d.%d.0/24\", \"data\": {\"country\": "
					"{\"iso_code\": \"%s\"}, \"city\": {\"geoname_id\": %d}}}",
					i ? "," : "", i / 256, i % 256, i % 2 ? "US" : "DE", 100000 + i);
	snprintf(json + len, cap - len, "]");
	mmdb("many.mmdb", "city", json);
	free(json);
	build_from(&b, "steering:\n  geoip: many.mmdb\n  records:\n"
		   "    - owner: geo.example.com.\n      type: A\n      policy: [geo]\n"
		   "      geo: [{country: US, labels: [ORD]}]\n      pool:\n"
		   "        - {name: ord, address: 10.0.0.1, pop: ORD}\n"
		   "        - {name: fra, address: 10.0.0.4, pop: FRA}\n", MAP1, up);
	const struct p53_steer_source *g = &b.src.src[P53_STEER_SRC_GEO];
	assert_int_equal(g->n_locs, N);
	for (int i = 0; i < N; i += 97) {
		char ip[32];
		snprintf(ip, sizeof(ip), "10.%d.%d.7", i / 256, i % 256);
		assert_string_equal(answer(b.t, 0, ip, NULL), i % 2 ? "10.0.0.1" : "10.0.0.1 10.0.0.4");
		assert_int_equal(last_scope, 24);
	}
	built_free(&b);
}

/* The two-search pick the merged search replaces: each source of the chain looked up on its
 * own (p53_steer_lookup), the scope the longest prefix among the sources read up to the step
 * that decided. */
static const struct p53_steer_variant *pick_two(const void *t, const struct p53_steer_rec *r,
						const struct p53_steer_client *cl, uint8_t *scope)
{
	const uint32_t *dec = (const uint32_t *)((const uint8_t *)t + p53_steer_hdr(t)->dec_off);
	unsigned int last = P53_STEER_SRCS;
	uint32_t ll = 0;
	uint8_t sc = 0;

	for (unsigned int k = 0; k < r->n_steps; k++) {
		const struct p53_steer_step *st = &r->steps[k];
		if (st->src != last) {
			last = st->src;
			ll = last == P53_STEER_SRC_ANY ? 0 : last == P53_STEER_SRC_CLIENT ? p53_steer_bucket(cl->v6, cl->addr)
										  : p53_steer_lookup(t, last, cl);
			if ((uint8_t)ll > sc)
				sc = (uint8_t)ll;
		}
		if (ll >> 8 != P53_STEER_NOLOC && dec[st->dec + (ll >> 8)] != UINT32_MAX) {
			*scope = sc;
			return p53_steer_variant(t, dec[st->dec + (ll >> 8)]);
		}
	}
	*scope = sc;
	return p53_steer_variant(t, r->fallback);
}

/* A client's answer and scope through the merged search (p53_steer_pick, with a scope to echo,
 * and the fast path's pick without one) against the two searches'. */
static void pick_same(const void *t, const struct p53_steer_rec *r, const struct p53_steer_client *cl,
		      unsigned long *n, unsigned long *by_map)
{
	uint8_t sw, sg, s0 = 99;
	const struct p53_steer_variant *want = pick_two(t, r, cl, &sw);
	const struct p53_steer_variant *got = p53_steer_pick(t, r, cl, &sg);
	const struct p53_steer_variant *got0 = p53_steer_pick_addr_s(t, r, cl->v6, cl->addr, &s0, 0);

	(*n)++;
	*by_map += (p53_steer_lookup(t, P53_STEER_SRC_MAP, cl) >> 8) != P53_STEER_NOLOC;
	if (got != want || sg != sw || got0 != want) {
		char a[INET6_ADDRSTRLEN];
		inet_ntop(cl->v6 ? AF_INET6 : AF_INET, cl->addr, a, sizeof(a));
		fail_msg("%s: two searches give variant %ld scope %u; merged %ld scope %u, without a scope %ld",
			 a, (long)(want - p53_steer_variant(t, 0)), sw, (long)(got - p53_steer_variant(t, 0)), sg,
			 (long)(got0 - p53_steer_variant(t, 0)));
	}
}

/*
 * Records whose chain reads the map and the GeoIP DB ([map, geo], [geo, map], [map, geo, asn]
 * shapes: the map names PoPs some of which are not in the pool, so a client in the map can still
 * fall to the GeoIP step) answer every client as the two searches did, with the same ECS scope:
 * a compiled table (random map and MMDB networks, IPv4 and IPv6), probed at every merged
 * block's start and either side of it, and at random addresses, each also cut to a random
 * ECS source prefix length.
 */
static void test_merged_pick(void **state)
{
	static const char *cc[] = { "US", "DE", "MX", "JP", "BR" };
	static const char *pops[] = { "AMS", "FRA", "IAD", "XXX" };
	static bool up[3][P53_STEER_MAX_POOL];
	static char geo[65536], map[65536];
	uint64_t r = 0x1234567887654321ull;
	size_t gn = 0, mn = 0;
	struct built b;

	(void)state;
	gn += (size_t)snprintf(geo + gn, sizeof(geo) - gn, "[");
	mn += (size_t)snprintf(map + mn, sizeof(map) - mn, "[");
	for (int i = 0; i < 300; i++) {
		uint64_t x = rng_next(&r);
		char net[64], txt[INET6_ADDRSTRLEN];
		struct p53_steer_client c;
		unsigned int len;
		if (i % 2) {
			len = 12 + (unsigned int)(x >> 24) % 21;
			set4(&c, (uint32_t)((198 + x % 3) << 24 | ((x >> 8) & 0xffffff)));
		} else {
			len = 28 + (unsigned int)(x >> 32) % 72;
			set6(&c, 0x20010db800000000ull | ((x >> 8) & 0xffffffull) << 8, rng_next(&r));
		}
		cut(&c, len);
		inet_ntop(c.v6 ? AF_INET6 : AF_INET, c.addr, txt, sizeof(txt));
		snprintf(net, sizeof(net), "%s/%u", txt, len);
		if (i % 3 == 0)
			mn += (size_t)snprintf(map + mn, sizeof(map) - mn, "%s{\"networks\": [\"%s\"], \"labels\": [\"%s\"]}",
					       mn > 1 ? "," : "", net, pops[(x >> 40) % 4]);
		else
			gn += (size_t)snprintf(geo + gn, sizeof(geo) - gn, "%s{\"network\": \"%s\", \"data\": "
					       "{\"country\": {\"iso_code\": \"%s\"}, \"continent\": {\"code\": \"NA\"}}}",
					       gn > 1 ? "," : "", net, cc[(x >> 40) % 5]);
	}
	snprintf(geo + gn, sizeof(geo) - gn, "]");
	snprintf(map + mn, sizeof(map) - mn, "]");
	mmdb("g.mmdb", "city", geo);
	const char *pool = "      pool:\n"
			   "        - {name: a, address: 10.0.0.1, pop: AMS}\n"
			   "        - {name: b, address: 10.0.0.2, pop: FRA}\n"
			   "        - {name: c, address: 10.0.0.3, pop: IAD}\n"
			   "      geo:\n"
			   "        - {country: US, labels: [IAD]}\n"
			   "        - {country: DE, labels: [FRA]}\n"
			   "        - {country: JP, labels: [AMS]}\n";
	char yaml[4096];
	snprintf(yaml, sizeof(yaml),
		 "steering:\n  map: m.json\n  geoip: g.mmdb\n  records:\n"
		 "    - owner: a.example.com.\n      type: A\n      policy: [map, geo]\n%s"
		 "    - owner: b.example.com.\n      type: A\n      policy: [geo, map]\n%s"
		 "    - owner: c.example.com.\n      type: A\n      policy: [map, priority, geo]\n%s",
		 pool, pool, pool);
	for (int i = 0; i < 3; i++)
		up[i][0] = up[i][1] = up[i][2] = true;
	build_from(&b, yaml, map, up);
	const struct p53_steer_hdr *h = p53_steer_hdr(b.t);
	const struct p53_steer_rec *rec = (const void *)((const uint8_t *)b.t + h->records_off);
	assert_true(h->mrg.n4 > 0 && h->mrg.n6 > 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rec[i].mrg, P53_STEER_MRG4 | P53_STEER_MRG6);
	const uint32_t *st4 = (const void *)((const uint8_t *)b.t + h->mrg.start4_off);
	const uint64_t *k6 = (const void *)((const uint8_t *)b.t + h->mrg.off6);
	const struct p53_steer_m6x *x6 = (const void *)((const uint8_t *)b.t + h->mrg.aux6_off);
	unsigned long n = 0, by_map = 0;
	struct p53_steer_client cl;
	for (int ri = 0; ri < 3; ri++) {
		for (uint32_t i = 0; i < h->mrg.n4; i++)
			for (int d = -1; d <= 1; d++) {
				set4(&cl, st4[i] + (uint32_t)d);
				pick_same(b.t, &rec[ri], &cl, &n, &by_map);
				cut(&cl, (unsigned int)(rng_next(&r) % 33));
				pick_same(b.t, &rec[ri], &cl, &n, &by_map);
			}
		for (uint32_t i = 0; i < h->mrg.n6; i++)
			for (int d = -1; d <= 1; d++) {
				uint64_t lo = x6[i].lo + (uint64_t)d;
				set6(&cl, k6[i] + (d < 0 && x6[i].lo == 0 ? ~0ull : d > 0 && lo == 0 ? 1 : 0), lo);
				pick_same(b.t, &rec[ri], &cl, &n, &by_map);
				cut(&cl, (unsigned int)(rng_next(&r) % 129));
				pick_same(b.t, &rec[ri], &cl, &n, &by_map);
			}
		for (int i = 0; i < 20000; i++) {
			uint64_t x = rng_next(&r), y = rng_next(&r);
			if (i % 2)
				set4(&cl, (uint32_t)((198 + x % 3) << 24 | ((x >> 8) & 0xffffff)));
			else
				set6(&cl, 0x20010db800000000ull | (x >> 32), y);
			pick_same(b.t, &rec[ri], &cl, &n, &by_map);
			cut(&cl, (unsigned int)(rng_next(&r) % (cl.v6 ? 129 : 33)));
			pick_same(b.t, &rec[ri], &cl, &n, &by_map);
		}
	}
	printf("steer merged pick: %u+%u merged blocks, %lu answers and scopes agree (%lu in the map)\n",
	       h->mrg.n4, h->mrg.n6, n, by_map);
	assert_true(by_map > n / 20 && by_map < n - n / 20);
	built_free(&b);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lpm),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_index6_long),
		cmocka_unit_test(test_merged),
		cmocka_unit_test(test_merged_pick),
		cmocka_unit_test(test_same_name),
		cmocka_unit_test(test_check_index6),
		cmocka_unit_test(test_find_key),
		cmocka_unit_test(test_steer_at_chain),
		cmocka_unit_test(test_great_circle),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_probe_config),
		cmocka_unit_test(test_bad_map),
		cmocka_unit_test(test_all_down),
		cmocka_unit_test(test_all_down_pool),
		cmocka_unit_test(test_cname),
		cmocka_unit_test(test_priority),
		cmocka_unit_test(test_weighted),
		cmocka_unit_test(test_sticky),
		cmocka_unit_test(test_geo_tiers),
		cmocka_unit_test(test_geo_ipv4_once),
		cmocka_unit_test(test_geo_many_records),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
