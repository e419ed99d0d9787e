/*
 * p53-fib-compare: pop53's steering blocks (dataplane/steer.h, steer_pick.h) against DPDK's
 * rte_fib (DIR24_8) and rte_fib6 (TRIE) on the same prefixes.
 *
 * The sources are loaded as pop53d loads them (p53_config_load, p53_steer_sources_load: the
 * map JSON or the MMDB walked into disjoint CIDR blocks with a location and a prefix length)
 * and pop53's table is built as the publisher builds it (p53_steer_build). The DPDK tables get
 * the same located blocks as routes, the next hop (8 bytes) being loc << 8 | prefix length,
 * the default next hop P53_STEER_NOLOC << 8. With --gaps every run of addresses between
 * located blocks is added too, as its CIDR decomposition with next hop NOLOC << 8 | length:
 * the scope pop53 computes for a gap from the run's ends (the largest aligned block around
 * the address inside the run) is the length of the decomposition block holding the address.
 *
 * Then, for --addrs random addresses per family (half inside random located blocks, half
 * uniform: IPv4 over the whole space, IPv6 inside 2000::/3), checks that both give the same
 * location and the same prefix length (located addresses always; gap addresses with --gaps,
 * else only that both say "no location"), and times each lookup (--runs runs, the median):
 * pop53's inline lookup in a loop, rte_fib_lookup_bulk with 32 addresses, and with 1.
 * --distinct N draws only N distinct addresses and repeats them (a resolver population whose
 * table lines stay in the cache; the default, every address drawn anew, is the cold case).
 * When rte_fib6_create fails (its tbl8 groups do not fit in the EAL memory), the IPv6 rows
 * are skipped and the failure printed.
 * Under valgrind (callgrind --instr-atstart=no) it skips the check and the timing and runs
 * each lookup kind over the first --cg-addrs addresses between CALLGRIND_ZERO_STATS and
 * CALLGRIND_DUMP_STATS_AT(kind), so each dump holds one kind's instructions
 * (scripts/bench/fib_compare.sh divides).
 *
 * Usage: p53-fib-compare [--src map|geo] [--addrs N] [--runs R] [--gaps] [--cg-addrs N]
 *                        [--distinct N] CONFIG.yaml [-- EAL args]
 * Default EAL args: -l 1 --no-huge -m 4096 --no-shconf --file-prefix=p53-fib --no-telemetry
 * --no-pci (--in-memory is refused with --no-huge by DPDK 22.11).
 * Prints key=value lines.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <valgrind/callgrind.h>

#include "control/conf/config.h"
#include "control/steer/steer_build.h"
#include "dataplane/steer.h"

__extension__ typedef unsigned __int128 u128;

#define BULK 32
#define NOLOC_NH ((uint64_t)P53_STEER_NOLOC << 8)

static void die(const char *fmt, const char *a)
{
	fprintf(stderr, "p53-fib-compare: ");
	fprintf(stderr, fmt, a);
	fprintf(stderr, "\n");
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 53;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- routes ---- */

struct r4 {
	uint32_t start;
	uint8_t len;
	uint64_t nh;
};

struct r6 {
	u128 start;
	uint8_t len;
	uint64_t nh;
};

static u128 b6_start(const struct p53_steer_b6 *b)
{
	return (u128)b->hi << 64 | b->lo;
}

/* Append the CIDR decomposition of [s, e] (bits wide) as gap routes. */
static void gap4(struct r4 **r, size_t *n, size_t *cap, uint64_t s, uint64_t e)
{
	while (s <= e) {
		unsigned int k = s == 0 ? 32 : (unsigned int)__builtin_ctzll(s);
		if (k > 32)
			k = 32;
		while (s + (1ull << k) - 1 > e)
			k--;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 1024;
			*r = realloc(*r, *cap * sizeof(**r));
			if (*r == NULL)
				die("%s", "out of memory");
		}
		(*r)[(*n)++] = (struct r4){ (uint32_t)s, (uint8_t)(32 - k), NOLOC_NH | (32 - k) };
		s += 1ull << k;
	}
}

static unsigned int ctz128(u128 v)
{
	uint64_t lo = (uint64_t)v;

	return lo != 0 ? (unsigned int)__builtin_ctzll(lo) : 64u + (unsigned int)__builtin_ctzll((uint64_t)(v >> 64));
}

static void gap6(struct r6 **r, size_t *n, size_t *cap, u128 s, u128 e)
{
	for (;;) {
		unsigned int k = s == 0 ? 128 : ctz128(s);
		while (k > 0 && (k == 128 ? e != ~(u128)0 || s != 0 : s + (((u128)1 << k) - 1) > e))
			k--;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 1024;
			*r = realloc(*r, *cap * sizeof(**r));
			if (*r == NULL)
				die("%s", "out of memory");
		}
		(*r)[(*n)++] = (struct r6){ s, (uint8_t)(128 - k), NOLOC_NH | (128 - k) };
		if (k == 128)
			return;
		u128 last = s + (((u128)1 << k) - 1);
		if (last >= e)
			return;
		s = last + 1;
	}
}

/* The routes of a source: its located blocks, and with gaps its runs without a location. */
static struct r4 *routes4(const struct p53_steer_source *src, bool gaps, size_t *n)
{
	struct r4 *r = NULL;
	size_t cap = 0;

	*n = 0;
	for (uint32_t i = 0; i < src->n4; i++) {
		uint32_t ll = src->b4[i].loc_len;
		if (ll >> 8 != P53_STEER_NOLOC) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 1024;
				r = realloc(r, cap * sizeof(*r));
				if (r == NULL)
					die("%s", "out of memory");
			}
			r[(*n)++] = (struct r4){ src->b4[i].start, (uint8_t)ll, ll };
		} else if (gaps) {
			uint64_t e = i + 1 < src->n4 ? (uint64_t)src->b4[i + 1].start - 1 : 0xffffffffull;
			gap4(&r, n, &cap, src->b4[i].start, e);
		}
	}
	return r;
}

static struct r6 *routes6(const struct p53_steer_source *src, bool gaps, size_t *n)
{
	struct r6 *r = NULL;
	size_t cap = 0;

	*n = 0;
	for (uint32_t i = 0; i < src->n6; i++) {
		uint32_t ll = src->b6[i].loc_len;
		if (ll >> 8 != P53_STEER_NOLOC) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 1024;
				r = realloc(r, cap * sizeof(*r));
				if (r == NULL)
					die("%s", "out of memory");
			}
			r[(*n)++] = (struct r6){ b6_start(&src->b6[i]), (uint8_t)ll, ll };
		} else if (gaps) {
			u128 e = i + 1 < src->n6 ? b6_start(&src->b6[i + 1]) - 1 : ~(u128)0;
			gap6(&r, n, &cap, b6_start(&src->b6[i]), e);
		}
	}
	return r;
}

/* tbl8 groups the tables need: DIR24_8, one per /24 holding a route longer than /24; TRIE,
 * one per distinct prefix of length L (24, 32 .. 120) of the routes longer than L. The
 * routes come sorted by start, so each level's prefixes never decrease. */
static uint32_t tbl8_need4(const struct r4 *r, size_t n)
{
	uint32_t c = 0;
	int64_t last = -1;

	for (size_t i = 0; i < n; i++)
		if (r[i].len > 24 && (int64_t)(r[i].start >> 8) != last) {
			last = r[i].start >> 8;
			c++;
		}
	return c;
}

static uint32_t tbl8_need6(const struct r6 *r, size_t n)
{
	uint32_t c = 0;

	for (unsigned int l = 24; l < 128; l += 8) {
		bool any = false;
		u128 last = 0;
		for (size_t i = 0; i < n; i++) {
			if (r[i].len <= l)
				continue;
			u128 p = r[i].start >> (128 - l);
			if (!any || p != last) {
				any = true;
				last = p;
				c++;
			}
		}
	}
	return c;
}

/* The groups TRIE reserves (DPDK 22.11 trie.c, add): a route longer than /24 with no route
 * already inside its prefix of floor8(len) bits reserves (ceil8(len) - ceil8(max(parent, 24)))
 * / 8, parent the longest route covering it (none here: the blocks are disjoint). Sorted
 * disjoint routes: a route already inside that prefix is the one just before. An add past
 * num_tbl8 - this fails, so it, not the groups used, sizes the table. */
static uint32_t tbl8_rsvd6(const struct r6 *r, size_t n)
{
	uint32_t c = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned int l = r[i].len;
		if (l <= 24)
			continue;
		unsigned int fl = l / 8 * 8;
		if (i > 0 && fl > 0 && r[i - 1].start >> (128 - fl) == r[i].start >> (128 - fl))
			continue;
		c += ((l + 7) / 8 * 8 - 24) / 8;
	}
	return c;
}

static size_t heap_used(void)
{
	size_t sum = 0;

	for (unsigned int i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			sum += st.heap_allocsz_bytes;
	}
	return sum;
}

/* ---- lookups ---- */

struct addrs {
	size_t n;
	uint32_t *v4;                   /* host order */
	uint8_t (*v6)[16];
	uint64_t *nh;                   /* rte_fib's answers */
	uint32_t *ll;                   /* pop53's */
};

static void put128(uint8_t *p, u128 v)
{
	for (int i = 15; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

/* A table built: its tbl8 groups as configured, used and reserved (read from the data plane
 * struct's first three fields, number_tbl8s, rsvd_tbl8s, cur_tbl8s, in DIR24_8 and TRIE alike:
 * DPDK 22.11's dir24_8.h and trie.h, internal; TRIE leaves cur_tbl8s at 0, so its groups in
 * use are tbl8_need6, counted here), heap bytes of rte_*_create alone and after
 * the adds (the RIB's nodes included). */
struct fib_built {
	struct rte_fib *f4;
	struct rte_fib6 *f6;
	uint32_t num_tbl8, used, rsvd;
	size_t heap_create, heap_total;
	double build_s;
};

static void dp_counts(const void *dp, struct fib_built *b)
{
	const uint32_t *c = dp;

	b->rsvd = c[1];
	b->used = c[2];
}

static int build4(const struct r4 *r, size_t n, struct fib_built *b)
{
	struct rte_fib_conf fc = {
		.type = RTE_FIB_DIR24_8, .default_nh = NOLOC_NH, .max_routes = (int)n + 16, .rib_ext_sz = 0,
		.dir24_8 = { .nh_sz = RTE_FIB_DIR24_8_8B, .num_tbl8 = b->num_tbl8 },
	};
	size_t h0 = heap_used();
	double t0 = now();

	b->f4 = rte_fib_create("p53cmp4", SOCKET_ID_ANY, &fc);
	if (b->f4 == NULL)
		die("rte_fib_create: %s", rte_strerror(rte_errno));
	b->heap_create = heap_used() - h0;
	for (size_t i = 0; i < n; i++) {
		int rc = rte_fib_add(b->f4, r[i].start, r[i].len, r[i].nh);
		if (rc == -ENOSPC) {
			fprintf(stderr, "p53-fib-compare: rte_fib: %u tbl8 groups are too few, doubling\n", b->num_tbl8);
			rte_fib_free(b->f4);
			return -1;
		}
		if (rc != 0) {
			fprintf(stderr, "p53-fib-compare: rte_fib_add of route %zu (/%u): %s\n", i, r[i].len,
				strerror(-rc));
			exit(1);
		}
	}
	b->build_s = now() - t0;
	b->heap_total = heap_used() - h0;
	dp_counts(rte_fib_get_dp(b->f4), b);
	return 0;
}

static int build6(const struct r6 *r, size_t n, struct fib_built *b)
{
	struct rte_fib6_conf fc = {
		.type = RTE_FIB6_TRIE, .default_nh = NOLOC_NH, .max_routes = (int)n + 16, .rib_ext_sz = 0,
		.trie = { .nh_sz = RTE_FIB6_TRIE_8B, .num_tbl8 = b->num_tbl8 },
	};
	size_t h0 = heap_used();
	double t0 = now();

	b->f6 = rte_fib6_create("p53cmp6", SOCKET_ID_ANY, &fc);
	if (b->f6 == NULL) {        /* the tbl8 groups do not fit in the EAL's memory: no IPv6 */
		fprintf(stderr, "p53-fib-compare: rte_fib6_create with %u tbl8 groups (%zu bytes): %s\n",
			b->num_tbl8, (size_t)b->num_tbl8 * 256 * 8, rte_strerror(rte_errno));
		return 0;
	}
	b->heap_create = heap_used() - h0;
	for (size_t i = 0; i < n; i++) {
		uint8_t a[16];
		put128(a, r[i].start);
		int rc = rte_fib6_add(b->f6, a, r[i].len, r[i].nh);
		if (rc == -ENOSPC) {
			fprintf(stderr, "p53-fib-compare: rte_fib6: %u tbl8 groups are too few, doubling\n", b->num_tbl8);
			rte_fib6_free(b->f6);
			return -1;
		}
		if (rc != 0) {
			fprintf(stderr, "p53-fib-compare: rte_fib6_add of route %zu (/%u): %s\n", i, r[i].len,
				strerror(-rc));
			exit(1);
		}
	}
	b->build_s = now() - t0;
	b->heap_total = heap_used() - h0;
	dp_counts(rte_fib6_get_dp(b->f6), b);
	return 0;
}

static void make_addrs(struct addrs *a, const struct r4 *r4, size_t n4, const struct r6 *r6, size_t n6)
{
	size_t nl4 = 0, nl6 = 0;

	/* "inside a located block": pick among the located routes (first in the arrays' order:
	 * count them) */
	for (size_t i = 0; i < n4; i++)
		nl4 += (r4[i].nh >> 8) != P53_STEER_NOLOC;
	for (size_t i = 0; i < n6; i++)
		nl6 += (r6[i].nh >> 8) != P53_STEER_NOLOC;
	size_t *l4 = calloc(nl4 + 1, sizeof(*l4)), *l6 = calloc(nl6 + 1, sizeof(*l6));
	size_t j = 0;
	for (size_t i = 0; i < n4; i++)
		if ((r4[i].nh >> 8) != P53_STEER_NOLOC)
			l4[j++] = i;
	j = 0;
	for (size_t i = 0; i < n6; i++)
		if ((r6[i].nh >> 8) != P53_STEER_NOLOC)
			l6[j++] = i;
	for (size_t i = 0; i < a->n; i++) {
		if (i % 2 == 0 && nl4 > 0) {
			const struct r4 *r = &r4[l4[rnd() % nl4]];
			uint32_t host = r->len == 32 ? 0 : (uint32_t)(rnd() & ((1ull << (32 - r->len)) - 1));
			a->v4[i] = r->start | host;
		} else {
			a->v4[i] = (uint32_t)rnd();
		}
		u128 v;
		if (i % 2 == 0 && nl6 > 0) {
			const struct r6 *r = &r6[l6[rnd() % nl6]];
			u128 host = (u128)rnd() << 64 | rnd();
			v = r->start | (r->len == 128 ? 0 : r->len == 0 ? host : host & (((u128)1 << (128 - r->len)) - 1));
		} else {
			v = ((u128)rnd() << 64 | rnd()) >> 3 | (u128)1 << 125;   /* 2000::/3 */
		}
		put128(a->v6[i], v);
	}
	free(l4);
	free(l6);
}

static __attribute__((noinline)) void p53_run4(const void *t, const struct p53_steer_src *s, const uint32_t *ip,
					       uint32_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = p53_steer_lookup4((const uint8_t *)t, s, ip[i], 1);
}

static __attribute__((noinline)) void p53_run6(const void *t, const struct p53_steer_src *s, uint8_t (*ip)[16],
					       uint32_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = p53_steer_lookup6((const uint8_t *)t, s, p53_steer_be64(ip[i]), ip[i], 0, 1);
}

static __attribute__((noinline)) void fib_run4(struct rte_fib *f, uint32_t *ip, uint64_t *nh, size_t n, int bulk)
{
	size_t i = 0;

	for (; i + (size_t)bulk <= n; i += (size_t)bulk)
		rte_fib_lookup_bulk(f, ip + i, nh + i, bulk);
	if (i < n)
		rte_fib_lookup_bulk(f, ip + i, nh + i, (int)(n - i));
}

static __attribute__((noinline)) void fib_run6(struct rte_fib6 *f, uint8_t (*ip)[16], uint64_t *nh, size_t n, int bulk)
{
	size_t i = 0;

	for (; i + (size_t)bulk <= n; i += (size_t)bulk)
		rte_fib6_lookup_bulk(f, ip + i, nh + i, bulk);
	if (i < n)
		rte_fib6_lookup_bulk(f, ip + i, nh + i, (int)(n - i));
}

static int dcmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

#define MAX_RUNS 31

int main(int argc, char **argv)
{
	static char *def_eal[] = {"p53-fib-compare", "-l", "1", "--no-huge", "-m", "4096", "--no-shconf",
				  "--file-prefix=p53-fib", "--no-telemetry", "--no-pci",
				  "--log-level=*:warning", NULL};
	const char *srcname = "map";
	size_t n_addrs = 2000000, cg_addrs = 100000, distinct = 0;
	int runs = 5, sep = argc;
	bool gaps = false;
	char err[1024];

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	static const struct option lo[] = {
		{"src", required_argument, NULL, 's'}, {"addrs", required_argument, NULL, 'n'},
		{"runs", required_argument, NULL, 'r'}, {"gaps", no_argument, NULL, 'g'},
		{"cg-addrs", required_argument, NULL, 'c'}, {"distinct", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(sep, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': srcname = optarg; break;
		case 'n': n_addrs = strtoul(optarg, NULL, 10); break;
		case 'r': runs = atoi(optarg); break;
		case 'g': gaps = true; break;
		case 'c': cg_addrs = strtoul(optarg, NULL, 10); break;
		case 'd': distinct = strtoul(optarg, NULL, 10); break;
		default: die("%s", "usage: p53-fib-compare [--src map|geo] [--addrs N] [--runs R] [--gaps] [--cg-addrs N] CONFIG.yaml [-- EAL args]");
		}
	}
	if (optind != sep - 1)
		die("%s", "usage: p53-fib-compare [--src map|geo] [--addrs N] [--runs R] [--gaps] [--cg-addrs N] CONFIG.yaml [-- EAL args]");
	if (runs < 1 || runs > MAX_RUNS || n_addrs < BULK)
		die("%s", "--runs 1..31, --addrs 32 or more");
	unsigned int k = strcmp(srcname, "geo") == 0 ? P53_STEER_SRC_GEO : P53_STEER_SRC_MAP;
	const char *cfgpath = argv[sep - 1];
	bool cg = RUNNING_ON_VALGRIND;
	if (cg && cg_addrs < n_addrs)
		n_addrs = cg_addrs;

	/* pop53: the sources, then the table */
	struct p53_config cfg;
	struct p53_steer_sources src;
	if (p53_config_load(cfgpath, &cfg, err, sizeof(err)) != 0)
		die("%s", err);
	double t0 = now();
	if (p53_steer_sources_load(&cfg.steer, &src, err, sizeof(err)) != 0)
		die("%s", err);
	double t1 = now();
	size_t tlen = 0;
	void *t = p53_steer_build(&cfg.steer, &src, NULL, &tlen, err, sizeof(err));
	double t2 = now();
	if (t == NULL)
		die("%s", err);
	const struct p53_steer_source *ss = &src.src[k];
	const struct p53_steer_src *ts = &p53_steer_hdr(t)->src[k];
	size_t p53_bytes4 = ss->n4 ? (size_t)ss->n4 * sizeof(struct p53_steer_b4) + P53_STEER_IDX * 4 : 0;
	size_t p53_bytes6 = ss->n6 ? (size_t)ss->n6 * 24 + P53_STEER_IDX6 * 4 : 0;
	printf("source=%s gaps=%d load_s=%.3f p53_build_s=%.3f p53_table_bytes=%zu p53_blocks4=%u p53_blocks6=%u "
	       "p53_src_bytes4=%zu p53_src_bytes6=%zu\n", srcname, gaps, t1 - t0, t2 - t1, tlen, ss->n4, ss->n6,
	       p53_bytes4, p53_bytes6);

	/* DPDK */
	int eal_rc;
	optind = 0;
	if (sep < argc) {
		argv[sep] = argv[0];
		eal_rc = rte_eal_init(argc - sep, argv + sep);
	} else {
		eal_rc = rte_eal_init((int)(sizeof(def_eal) / sizeof(def_eal[0])) - 1, def_eal);
	}
	if (eal_rc < 0)
		die("EAL init: %s", rte_strerror(rte_errno));

	size_t nr4, nr6;
	double t3 = now();
	struct r4 *r4 = routes4(ss, gaps, &nr4);
	struct r6 *r6 = routes6(ss, gaps, &nr6);
	uint32_t need4 = tbl8_need4(r4, nr4), need6 = tbl8_need6(r6, nr6), rsvd6 = tbl8_rsvd6(r6, nr6);
	double t4 = now();

	/* num_tbl8 is fixed at create time and an add past it fails (ENOSPC): start from the
	 * groups the routes need and double until every route goes in (TRIE reserves groups per
	 * route, more than it uses). The build time is the last, successful build's. */
	struct fib_built b4 = { .num_tbl8 = need4 + need4 / 64 + 64 }, b6 = { .num_tbl8 = (rsvd6 > need6 ? rsvd6 : need6) + 64 };
	while (build4(r4, nr4, &b4) != 0)
		b4.num_tbl8 *= 2;
	while (build6(r6, nr6, &b6) != 0)
		b6.num_tbl8 *= 2;
	struct rte_fib *f4 = b4.f4;
	struct rte_fib6 *f6 = b6.f6;
	/* DIR24_8 and TRIE data planes: tbl24 (2^24 next hops) + the tbl8 groups (256 each) */
	size_t dp4 = ((size_t)1 << 24) * 8 + (size_t)b4.num_tbl8 * 256 * 8;
	size_t dp6 = ((size_t)1 << 24) * 8 + (size_t)b6.num_tbl8 * 256 * 8;
	printf("routes4=%zu routes6=%zu routes_s=%.3f tbl8_need4=%u tbl8_need6=%u tbl8_rsvd6_model=%u fib_build_s=%.3f fib6_build_s=%.3f "
	       "fib_num_tbl8=%u fib_tbl8_used=%u fib_tbl8_rsvd=%u fib6_num_tbl8=%u fib6_tbl8_rsvd=%u "
	       "fib_dp_bytes=%zu fib6_dp_bytes=%zu fib_heap_create=%zu fib_heap_total=%zu fib6_heap_create=%zu "
	       "fib6_heap_total=%zu\n", nr4, nr6, t4 - t3, need4, need6, rsvd6, b4.build_s, b6.build_s, b4.num_tbl8, b4.used,
	       b4.rsvd, b6.num_tbl8, b6.rsvd, dp4, dp6, b4.heap_create, b4.heap_total, b6.heap_create,
	       b6.heap_total);

	struct addrs a = { .n = n_addrs };
	a.v4 = malloc(n_addrs * sizeof(*a.v4));
	a.v6 = malloc(n_addrs * sizeof(*a.v6));
	a.nh = malloc(n_addrs * sizeof(*a.nh));
	a.ll = malloc(n_addrs * sizeof(*a.ll));
	if (a.v4 == NULL || a.v6 == NULL || a.nh == NULL || a.ll == NULL)
		die("%s", "out of memory");
	make_addrs(&a, r4, nr4, r6, nr6);
	for (size_t i = distinct; distinct > 0 && i < n_addrs; i++) {    /* a working set: repeat */
		a.v4[i] = a.v4[i % distinct];
		memcpy(a.v6[i], a.v6[i % distinct], 16);
	}
	bool have6 = f6 != NULL;

	if (cg) {
		/* one dump per lookup kind: scripts/bench/fib_compare.sh divides by n_addrs */
		CALLGRIND_START_INSTRUMENTATION;
		CALLGRIND_ZERO_STATS;
		p53_run4(t, ts, a.v4, a.ll, n_addrs);
		CALLGRIND_DUMP_STATS_AT("p53_v4");
		fib_run4(f4, a.v4, a.nh, n_addrs, BULK);
		CALLGRIND_DUMP_STATS_AT("fib_bulk_v4");
		fib_run4(f4, a.v4, a.nh, n_addrs, 1);
		CALLGRIND_DUMP_STATS_AT("fib_single_v4");
		p53_run6(t, ts, a.v6, a.ll, n_addrs);
		CALLGRIND_DUMP_STATS_AT("p53_v6");
		if (have6) {
			fib_run6(f6, a.v6, a.nh, n_addrs, BULK);
			CALLGRIND_DUMP_STATS_AT("fib_bulk_v6");
			fib_run6(f6, a.v6, a.nh, n_addrs, 1);
			CALLGRIND_DUMP_STATS_AT("fib_single_v6");
		}
		CALLGRIND_STOP_INSTRUMENTATION;
		printf("callgrind_addrs=%zu\n", n_addrs);
	} else {
		/* the check */
		for (int fam = 0; fam < (have6 ? 2 : 1); fam++) {
			size_t loc_ok = 0, len_ok = 0, in_gap = 0, bad = 0;
			if (fam == 0) {
				p53_run4(t, ts, a.v4, a.ll, n_addrs);
				fib_run4(f4, a.v4, a.nh, n_addrs, BULK);
			} else {
				p53_run6(t, ts, a.v6, a.ll, n_addrs);
				fib_run6(f6, a.v6, a.nh, n_addrs, BULK);
			}
			for (size_t i = 0; i < n_addrs; i++) {
				uint32_t ploc = a.ll[i] >> 8, plen = a.ll[i] & 0xff;
				uint32_t floc = (uint32_t)(a.nh[i] >> 8), flen = (uint32_t)(a.nh[i] & 0xff);
				bool gap = ploc == P53_STEER_NOLOC;
				in_gap += gap;
				bool same_loc = ploc == floc;
				bool same_len = plen == flen || (gap && !gaps);
				loc_ok += same_loc;
				len_ok += same_loc && same_len;
				if ((!same_loc || !same_len) && bad++ < 5)
					fprintf(stderr, "mismatch v%d #%zu: pop53 loc %u /%u, rte_fib%s loc %u /%u\n",
						fam ? 6 : 4, i, ploc, plen, fam ? "6" : "", floc, flen);
			}
			printf("check_v%d addrs=%zu in_gap=%zu same_loc=%zu same_loc_and_len=%zu mismatches=%zu\n",
			       fam ? 6 : 4, n_addrs, in_gap, loc_ok, len_ok, bad);
		}
		/* the timing: per kind, runs over every address, the median ns per lookup */
		static const char *const kind[6] = { "p53_v4", "fib_bulk_v4", "fib_single_v4",
						     "p53_v6", "fib_bulk_v6", "fib_single_v6" };
		double ns[6][MAX_RUNS];
		for (int r = 0; r < runs; r++)
			for (int j = 0; j < 6; j++) {      /* interleaved: the machine's noise spreads over all */
				if (j >= 4 && !have6)
					continue;
				double s = now();
				switch (j) {
				case 0: p53_run4(t, ts, a.v4, a.ll, n_addrs); break;
				case 1: fib_run4(f4, a.v4, a.nh, n_addrs, BULK); break;
				case 2: fib_run4(f4, a.v4, a.nh, n_addrs, 1); break;
				case 3: p53_run6(t, ts, a.v6, a.ll, n_addrs); break;
				case 4: fib_run6(f6, a.v6, a.nh, n_addrs, BULK); break;
				default: fib_run6(f6, a.v6, a.nh, n_addrs, 1); break;
				}
				ns[j][r] = (now() - s) * 1e9 / (double)n_addrs;
			}
		printf("timed runs=%d addrs=%zu", runs, n_addrs);
		for (int j = 0; j < (have6 ? 6 : 4); j++) {
			qsort(ns[j], (size_t)runs, sizeof(double), dcmp);
			printf(" %s_ns=%.1f", kind[j], ns[j][runs / 2]);
		}
		printf("\n");
	}
	rte_fib_free(f4);
	if (have6)
		rte_fib6_free(f6);
	free(r4);
	free(r6);
	free(a.v4);
	free(a.v6);
	free(a.nh);
	free(a.ll);
	free(t);
	p53_steer_sources_free(&src);
	p53_config_free(&cfg);
	rte_eal_cleanup();
	return 0;
}
