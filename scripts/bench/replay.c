/*
 * p53-replay: the replay benchmark. Feeds pre-built query frames through the exact per-burst
 * code a worker runs (p53_worker_burst: frame parse, answer from the replica, rewrite in
 * place) on one core, with no NIC and no kernel, and reports what one query costs.
 *
 * Per burst of P53_BURST: take mbufs from a mempool (rte_pktmbuf_alloc_bulk), copy the next
 * pre-built frames in (this copy models the NIC's DMA), p53_worker_burst(), free the
 * responses (rte_pktmbuf_free_bulk). A second loop does the same without p53_worker_burst
 * (alloc + copy + free) so that cost can be subtracted: net = full - copy-only.
 *
 * Before timing, every pre-built frame is answered once and its response checked in full
 * (RCODE, ANCOUNT, NSCOUNT, AA, ID, ports); during the timed run one response per burst is
 * checked (RCODE, ANCOUNT), and after it the worker's counters must show one answer with the
 * expected RCODE per query. Any mismatch exits 1: a benchmark that measures errors is
 * worthless.
 *
 * The measured loops are replay_loop() and replay_copy_loop(), kept out of line so that
 * `valgrind --tool=callgrind --toggle-collect=replay_loop` counts exactly one of them
 * (scripts/bench/replay.sh --callgrind).
 *
 * With --rrl RATE a guard (dataplane/guard.h) is published as pop53d would: cookies on, RRL at
 * RATE responses per second per account (all classes), window 15, slip 2, 65536 accounts.
 * --clients N spreads the frames' source addresses over N /24s (10.a.b.1), so accounts are
 * as many as a real client population makes; --flood expects most responses to be limited
 * (one client /24 far over its rate): the frames are checked before the guard is published,
 * and afterwards every query must be answered, slipped or dropped by RRL, most of them limited.
 *
 * Usage: p53-replay [EAL args --] -z NAME=FILE [-z ...] -m MIX [options]
 * Without EAL args: -l 1 --no-huge -m 256 --no-shconf --file-prefix=p53-replay --no-telemetry
 * --no-pci --log-level=*:warning.
 * Last line of output: "RESULT key=value ..." for scripts.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>
#include <rte_udp.h>

#include "control/bigmem.h"
#include "control/steer/steer_build.h"
#include "control/text.h"
#include "control/zone/image_build.h"
#include "dataplane/dnssec.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/fastpath.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/steer.h"
#include "dataplane/worker.h"

#define MAX_ZONES     16
#define FRAME_MAX     400       /* 14 + 40 + 8 + 12 + 255 + 4 + 11 + 4 + 11: fits any query */
#define POOL_MBUFS    4095
#define POOL_CACHE    256
#define ETH_HLEN      14
#define STEERED_OWNER "steered.example.com." /* the steered mix's record */

enum mix {
	MIX_SMALL_A, MIX_NXDOMAIN, MIX_REFERRAL, MIX_BIG_A, MIX_ECS, MIX_STEERED, MIX_WILDCARD,
	MIX_DEEP_NX, MIX_DEEP_REFUSED,
};

/* Where the replica's image lives (--replica). */
enum replica_mode { REP_ADOPT, REP_EAL, REP_THP, REP_4K, REP_HUGETLB };
static const char *const replica_names[] = {
	[REP_ADOPT] = "adopt", [REP_EAL] = "eal", [REP_THP] = "thp", [REP_4K] = "4k",
	[REP_HUGETLB] = "hugetlb",
};

static const char *const mix_names[] = {
	[MIX_SMALL_A] = "small-a", [MIX_NXDOMAIN] = "nxdomain", [MIX_REFERRAL] = "referral",
	[MIX_BIG_A] = "big-a", [MIX_ECS] = "ecs", [MIX_STEERED] = "steered",
	[MIX_WILDCARD] = "wildcard",
	[MIX_DEEP_NX] = "deep-nx", [MIX_DEEP_REFUSED] = "deep-refused",
};

/* What one pre-built frame is and what its response must look like. */
struct frame_meta {
	uint32_t off;           /* into the frame arena */
	uint16_t len;
	uint16_t dns_off;       /* DNS header offset, same in the query and the response */
	uint16_t id;
	uint16_t sport;
	uint8_t  rcode;
	uint8_t  aa;
	uint16_t ancount;
	uint16_t nscount;       /* exact for NXDOMAIN (the SOA) without DO; else a minimum */
};

struct replay {
	struct rte_mempool *mp;
	struct p53_worker *w;
	const uint8_t *arena;
	const struct frame_meta *meta;
	uint32_t n_frames;
	int flood;              /* RRL is expected to limit: fewer responses than queries */
	/* first failure seen inside a measured loop */
	int failed;
	uint32_t fail_frame;
	char fail[256];
};

struct opts {
	struct p53_zone_src zones[MAX_ZONES];
	int n_zones;
	const char *zone_name;  /* the zone the mix queries; default the first -z */
	enum mix mix;
	uint64_t count;
	double max_seconds;
	uint32_t frames;
	uint64_t seed;
	unsigned int ipv6_pct;
	uint16_t payload;
	int dnssec;             /* DO=1 in the queries (--do) */
	int copy_run;
	int replica;    /* enum replica_mode */
	uint32_t rrl_rate;      /* 0: no RRL */
	int guard;              /* publish a guard (cookies on; RRL when rrl_rate != 0) */
	uint32_t clients;       /* distinct client /24s */
	int flood;
	const char *steer_map;  /* steered: the subnet map (JSON) */
	const char *steer_geo;  /* steered: the MaxMind DB */
	unsigned int ecs_pct;   /* steered: share of frames with an ECS option */
	const char *sign_key;   /* steered: sign the variants with this key (dnssec.signing_keys) */
	uint32_t names;         /* nxdomain, wildcard: draw the random label from this many
				   distinct ones; 0: a fresh one per frame */
	double zipf;            /* small-a, big-a: the owner drawn by a Zipf law of this
				   exponent over the candidates (--zipf); 0: uniformly */
};

/* ---- small helpers ------------------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic for a given -s, good enough to pick names. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("p53-replay: FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

/* Text name -> lower-case wire name; returns its length or -1. */
static int name_from_text(uint8_t *dst, const char *txt)
{
	size_t n = 0, lab = 0;
	uint8_t *len_at = dst;

	if (strcmp(txt, ".") == 0) {
		dst[0] = 0;
		return 1;
	}
	n = 1;
	for (const char *c = txt; *c != '\0'; c++) {
		if (*c == '.') {
			if (lab == 0)
				return -1;      /* empty label */
			*len_at = (uint8_t)lab;
			len_at = dst + n++;
			lab = 0;
			if (c[1] == '\0')
				break;
			continue;
		}
		if (++lab > P53_LABEL_MAXLEN || n >= P53_NAME_MAXLEN)
			return -1;
		dst[n++] = p53_lower((uint8_t)*c);
	}
	if (lab != 0) {
		*len_at = (uint8_t)lab;
		len_at = dst + n++;
	}
	*len_at = 0;
	return (int)n;
}

/* ---- the measured loops --------------------------------------------------------------- */

static inline void copy_in(const struct replay *r, struct rte_mbuf *m, uint32_t f)
{
	const struct frame_meta *fm = &r->meta[f];

	rte_memcpy(rte_pktmbuf_mtod(m, void *), r->arena + fm->off, fm->len);
	m->data_len = fm->len;
	m->pkt_len = fm->len;
}

/* One sampled response: QR, RCODE, ANCOUNT against what frame f expects. */
static inline int sample_ok(const struct replay *r, const struct rte_mbuf *m, uint32_t f)
{
	const struct frame_meta *fm = &r->meta[f];
	const uint8_t *h = rte_pktmbuf_mtod_offset(m, const uint8_t *, fm->dns_off);

	return (h[2] & 0x80) != 0 && (h[3] & 0x0f) == fm->rcode && get16(h + 6) == fm->ancount;
}

/*
 * The measured loop: alloc, copy in (the "DMA"), p53_worker_burst, free. Kept out of line
 * for callgrind's --toggle-collect. Stops after `count` queries, or at TSC `deadline`
 * (0: none), or at the first failure (r->failed). Returns the queries answered.
 */
__attribute__((noinline)) uint64_t replay_loop(struct replay *r, uint64_t count, uint64_t deadline)
{
	struct rte_mbuf *pkts[P53_BURST], *out[P53_BURST];
	uint64_t done = 0;
	uint32_t fi = 0;
	unsigned int burst = 0;

	while (done < count) {
		uint16_t n = count - done < P53_BURST ? (uint16_t)(count - done) : P53_BURST;
		uint32_t first = fi;

		if (rte_pktmbuf_alloc_bulk(r->mp, pkts, n) != 0) {
			r->failed = 1;
			snprintf(r->fail, sizeof(r->fail), "mempool empty after %" PRIu64 " queries", done);
			break;
		}
		for (uint16_t i = 0; i < n; i++) {
			copy_in(r, pkts[i], fi);
			if (++fi == r->n_frames)
				fi = 0;
		}
		uint16_t n_out = p53_worker_burst(r->w, pkts, n, out);
		if (r->flood) {
			rte_pktmbuf_free_bulk(out, n_out);
			done += n;
			if ((++burst & 63u) == 0 && deadline != 0 && rte_rdtsc() > deadline)
				break;
			continue;
		}
		if (n_out != n) {
			r->failed = 1;
			r->fail_frame = first;
			snprintf(r->fail, sizeof(r->fail), "burst of %u queries gave %u responses", n, n_out);
			rte_pktmbuf_free_bulk(out, n_out);
			break;
		}
		/* Check one response per burst, a different slot each time. */
		unsigned int k = (burst * 7u) % n;
		uint32_t sf = first + k;
		if (sf >= r->n_frames)
			sf -= r->n_frames;
		if (!sample_ok(r, out[k], sf)) {
			r->failed = 1;
			r->fail_frame = sf;
			snprintf(r->fail, sizeof(r->fail), "sampled response to frame %u: wrong QR/RCODE/ANCOUNT", sf);
			rte_pktmbuf_free_bulk(out, n_out);
			break;
		}
		rte_pktmbuf_free_bulk(out, n_out);
		done += n;
		if ((++burst & 63u) == 0 && deadline != 0 && rte_rdtsc() > deadline)
			break;
	}
	return done;
}

/* The same loop without p53_worker_burst: what the copy (and mbuf alloc/free) cost. */
__attribute__((noinline)) uint64_t replay_copy_loop(struct replay *r, uint64_t count, uint64_t deadline)
{
	struct rte_mbuf *pkts[P53_BURST];
	uint64_t done = 0;
	uint32_t fi = 0;
	unsigned int burst = 0;

	while (done < count) {
		uint16_t n = count - done < P53_BURST ? (uint16_t)(count - done) : P53_BURST;

		if (rte_pktmbuf_alloc_bulk(r->mp, pkts, n) != 0) {
			r->failed = 1;
			snprintf(r->fail, sizeof(r->fail), "mempool empty after %" PRIu64 " copies", done);
			break;
		}
		for (uint16_t i = 0; i < n; i++) {
			copy_in(r, pkts[i], fi);
			if (++fi == r->n_frames)
				fi = 0;
		}
		rte_pktmbuf_free_bulk(pkts, n);
		done += n;
		if ((++burst & 63u) == 0 && deadline != 0 && rte_rdtsc() > deadline)
			break;
	}
	return done;
}

/* ---- choosing the query names from the image ----------------------------------------- */

struct pick {
	uint32_t node;
	uint16_t qtype;
	uint16_t ancount;
	uint16_t nscount;
};

static uint32_t zone_index(const void *img, const char *name)
{
	uint8_t want[P53_NAME_MAXLEN + 1];
	int wl = name_from_text(want, name);
	const struct p53_image_hdr *h = p53_image_hdr(img);

	if (wl < 0)
		die("bad zone name '%s'", name);
	for (uint32_t z = 0; z < h->n_zones; z++) {
		const struct p53_image_zone *zn = p53_image_zone(img, z);
		/* Both canonical (lower case), so bytes compare. */
		if (zn->name_len == wl && memcmp(p53_image_name(img, zn->name_off), want, (size_t)wl) == 0)
			return z;
	}
	die("zone '%s' is not in the image", name);
}

static int plain_node(const struct p53_image_node *nd, uint32_t zone)
{
	const uint16_t skip = P53_NODE_CUT | P53_NODE_DNAME | P53_NODE_CNAME | P53_NODE_ENT |
			      P53_NODE_WILD | P53_NODE_GLUE;

	return nd->zone == zone && (nd->flags & skip) == 0 && nd->occluder == P53_NONE;
}

/* Records an answer of this RRset holds: with DO=1 its RRSIGs too (RFC 4035 §3.1.1). */
static uint16_t answers(const void *img, uint32_t rsi, int dnssec)
{
	const struct p53_image_rrset *rs = p53_image_rrset(img, rsi);

	return (uint16_t)(rs->count + (dnssec ? rs->sig_count : 0));
}

/* Candidates for the mix: owners with A (and AAAA for small-a/ecs), delegation points, or
   wildcards with A. */
static struct pick *candidates(const void *img, uint32_t zone, enum mix mix, int dnssec, size_t *np)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	struct pick *p = calloc((size_t)h->n_nodes * 2 + 1, sizeof(*p));
	size_t n = 0;

	if (p == NULL)
		die("out of memory");
	for (uint32_t i = 0; i < h->n_nodes; i++) {
		if (p53_image_node_off(img, i) == 0)
			continue; /* a zone's room (image.h, node_room) */
		const struct p53_image_node *nd = p53_image_node(img, i);
		if (mix == MIX_REFERRAL) {
			if (nd->zone != zone || (nd->flags & P53_NODE_CUT) == 0 ||
			    (nd->flags & P53_NODE_APEX) != 0 || nd->occluder != P53_NONE)
				continue;
			uint32_t ns = p53_image_node_rrset(img, nd, P53_T_NS);
			if (ns == P53_NONE)
				continue;
			p[n++] = (struct pick){i, P53_T_A, 0, p53_image_rrset(img, ns)->count};
			continue;
		}
		if (mix == MIX_WILDCARD) {
			/* Wildcards with A; the frame asks for a random name below their parent. */
			uint32_t a = p53_image_node_rrset(img, nd, P53_T_A);
			if (nd->zone == zone && (nd->flags & P53_NODE_WILD) && nd->occluder == P53_NONE &&
			    a != P53_NONE)
				p[n++] = (struct pick){i, P53_T_A, answers(img, a, dnssec), 0};
			continue;
		}
		if (!plain_node(nd, zone))
			continue;
		uint32_t a = p53_image_node_rrset(img, nd, P53_T_A);
		if (a != P53_NONE)
			p[n++] = (struct pick){i, P53_T_A, answers(img, a, dnssec), 0};
		if (mix == MIX_BIG_A)
			continue;
		uint32_t aaaa = p53_image_node_rrset(img, nd, P53_T_AAAA);
		if (aaaa != P53_NONE)
			p[n++] = (struct pick){i, P53_T_AAAA, answers(img, aaaa, dnssec), 0};
	}
	*np = n;
	return p;
}

/* ---- building the frames ---------------------------------------------------------------- */

/* The window --zipf reports repeats in: the answer cache's default size (qcache.h). */
#define ZIPF_WINDOW 1024u

/*
 * --zipf S: the candidates shuffled (seeded: a rank is a random owner, not the image's
 * order), then rank r (1-based) drawn with probability proportional to 1 / r^S, as the names
 * resolvers ask an authoritative server repeat (a few popular, a long tail). Returns the
 * cumulative distribution over the ranks (n doubles, the last 1).
 */
static double *zipf_setup(struct pick *p, size_t n, double s)
{
	double *cdf = malloc(n * sizeof(*cdf));
	double sum = 0;

	if (cdf == NULL)
		die("out of memory for the Zipf table");
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(rnd() % (i + 1));
		struct pick t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		sum += pow((double)(i + 1), -s);
		cdf[i] = sum;
	}
	for (size_t i = 0; i < n; i++)
		cdf[i] /= sum;
	cdf[n - 1] = 1.0;
	return cdf;
}

/* A rank drawn from zipf_setup()'s distribution (0-based). */
static size_t zipf_draw(const double *cdf, size_t n)
{
	double u = (double)(rnd() >> 11) * 0x1.0p-53;
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static const uint8_t mac_server[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x53};
static const uint8_t mac_client[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t v6_client[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
static const uint8_t v6_server[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x53, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53};

/*
 * One query frame: Ethernet, IPv4 192.0.2.1 -> 192.0.2.53 (or IPv6 2001:db8::1 ->
 * 2001:db8:53::53), UDP random source port -> 53 with a correct checksum, DNS with a random
 * ID, RD=0 (resolvers querying an authority), one question, an OPT with our payload size and
 * DO=0 (DO=1 with --do), and in the ecs mix an ECS option (RFC 7871) for a random /24 (or /56).
 */
static uint16_t build_frame(uint8_t *f, int v6, const uint8_t *qname, int qlen, uint16_t qtype,
			    uint16_t payload, int ecs, int dnssec, uint16_t id, uint16_t sport, uint32_t client,
			    uint16_t *dns_off, struct p53_steer_client *who)
{
	uint16_t l3 = ETH_HLEN;
	uint16_t l4 = (uint16_t)(l3 + (v6 ? 40 : 20));
	uint16_t dns = (uint16_t)(l4 + 8);
	uint8_t *d = f + dns;
	size_t n = 0;

	memcpy(f, mac_server, 6);
	memcpy(f + 6, mac_client, 6);
	put16(f + 12, v6 ? 0x86dd : 0x0800);

	put16(d + n, id); n += 2;
	put16(d + n, 0); n += 2;        /* QUERY, RD=0 */
	put16(d + n, 1); n += 2;        /* QDCOUNT */
	put16(d + n, 0); n += 2;
	put16(d + n, 0); n += 2;
	put16(d + n, 1); n += 2;        /* ARCOUNT: the OPT */
	memcpy(d + n, qname, (size_t)qlen); n += (size_t)qlen;
	put16(d + n, qtype); n += 2;
	put16(d + n, P53_C_IN); n += 2;
	d[n++] = 0;                     /* OPT owner: root (RFC 6891 §6.1.2) */
	put16(d + n, P53_T_OPT); n += 2;
	put16(d + n, payload); n += 2;  /* CLASS = requestor's payload size */
	put16(d + n, 0); n += 2;        /* extended RCODE, version 0 */
	put16(d + n, dnssec ? 0x8000 : 0); n += 2; /* DO (RFC 3225) */
	if (ecs) {
		uint64_t r = rnd();
		if (!v6) {
			put16(d + n, 11); n += 2;               /* RDLENGTH */
			put16(d + n, P53_EDNS_ECS); n += 2;
			put16(d + n, 7); n += 2;
			put16(d + n, 1); n += 2;                /* FAMILY 1: IPv4 */
			d[n++] = 24;                            /* SOURCE PREFIX-LENGTH */
			d[n++] = 0;                             /* SCOPE PREFIX-LENGTH */
			d[n++] = (uint8_t)(1 + r % 223);        /* 1.x.x.0/24 .. 223.x.x.0/24 */
			d[n++] = (uint8_t)(r >> 8);
			d[n++] = (uint8_t)(r >> 16);
			*who = (struct p53_steer_client){.v6 = 0};
			memcpy(who->addr, d + n - 3, 3);
		} else {
			put16(d + n, 15); n += 2;
			put16(d + n, P53_EDNS_ECS); n += 2;
			put16(d + n, 11); n += 2;
			put16(d + n, 2); n += 2;                /* FAMILY 2: IPv6 */
			d[n++] = 56;
			d[n++] = 0;
			d[n++] = 0x20;                          /* 2000::/3 */
			for (int i = 1; i < 7; i++)
				d[n++] = (uint8_t)(r >> (8 * i));
			*who = (struct p53_steer_client){.v6 = 1};
			memcpy(who->addr, d + n - 7, 7);
		}
	} else {
		put16(d + n, 0); n += 2;        /* RDLENGTH */
	}

	uint16_t udp_len = (uint16_t)(8 + n);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(f + l4);
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(53);
	udp->dgram_len = rte_cpu_to_be_16(udp_len);
	udp->dgram_cksum = 0;
	if (!v6) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + l3);
		memset(ip, 0, sizeof(*ip));
		ip->version_ihl = 0x45;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + udp_len));
		ip->packet_id = rte_cpu_to_be_16((uint16_t)rnd());
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_UDP;
		/* Client 0 is 192.0.2.1; others 10.a.b.1, one /24 each. 192u: DPDK 22.11's RTE_IPV4()
		   shifts its first argument as an int (192 << 24 overflows it). */
		ip->src_addr = rte_cpu_to_be_32(client == 0 ? RTE_IPV4(192u, 0, 2, 1) :
						RTE_IPV4(10, (client >> 8) & 0xff, client & 0xff, 1));
		ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(192u, 0, 2, 53));
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
		if (!ecs) {
			*who = (struct p53_steer_client){.v6 = 0};
			memcpy(who->addr, &ip->src_addr, 4);
		}
	} else {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(f + l3);
		memset(ip, 0, sizeof(*ip));
		ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
		ip->payload_len = rte_cpu_to_be_16(udp_len);
		ip->proto = IPPROTO_UDP;
		ip->hop_limits = 64;
		memcpy(ip->src_addr, v6_client, 16);
		ip->src_addr[4] = (uint8_t)(client >> 8); /* one /56 each */
		ip->src_addr[5] = (uint8_t)client;
		memcpy(ip->dst_addr, v6_server, 16);
		udp->dgram_cksum = rte_ipv6_udptcp_cksum(ip, udp);
		if (!ecs) {
			*who = (struct p53_steer_client){.v6 = 1};
			memcpy(who->addr, ip->src_addr, 16);
		}
	}
	*dns_off = dns;
	return (uint16_t)(dns + n);
}

/* As many one-byte random labels as fit before `base` (wire), up to 127 labels and 255 bytes in
 * all: the deepest name a query can carry, the worst case of a closest-encloser walk. */
static int deepest_below(uint8_t *dst, const uint8_t *base, int blen, int base_labels)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	int n = 0;

	for (int labels = base_labels; labels < P53_NAME_MAXLABELS && n + 2 + blen <= P53_NAME_MAXLEN;
	     labels++) {
		dst[n++] = 1;
		dst[n++] = (uint8_t)alnum[rnd() % 36];
	}
	memcpy(dst + n, base, (size_t)blen);
	return n + blen;
}

/* Prefix a random label to `base` (wire): "<prefix><random>.<base>". */
static uint32_t name_pool;      /* --names */
static int label_min = 10, label_max = 10; /* --label-lens: the random part's length */

static int random_below(uint8_t *dst, const char *prefix, const uint8_t *base, int blen)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	int pl = (int)strlen(prefix);
	int rl = label_min + (label_max > label_min ? (int)(rnd() % (uint64_t)(label_max - label_min + 1)) : 0);
	int ll = pl + rl;
	/* --names N: the label is the k-th of N, k random; its characters come from k alone. */
	uint64_t x = name_pool != 0 ? (rnd() % name_pool + 1) * 0x9E3779B97F4A7C15ULL : 0;

	if (1 + ll + blen > P53_NAME_MAXLEN)
		return -1;
	dst[0] = (uint8_t)ll;
	memcpy(dst + 1, prefix, (size_t)pl);
	for (int i = 0; i < rl; i++) {
		uint64_t c = rnd();
		if (name_pool != 0) {
			x ^= x >> 29;
			x *= 0xBF58476D1CE4E5B9ULL;
			x ^= x >> 32;
			c = x;
		}
		dst[1 + pl + i] = (uint8_t)alnum[c % 36];
	}
	memcpy(dst + 1 + ll, base, (size_t)blen);
	return 1 + ll + blen;
}

static uint8_t *build_frames(const void *img, const struct opts *o, struct frame_meta *meta,
			     const void *steer)
{
	uint32_t zone = zone_index(img, o->zone_name);
	const struct p53_image_zone *zn = p53_image_zone(img, zone);
	const uint8_t *apex = p53_image_name(img, zn->name_off);
	uint8_t *arena = malloc((size_t)o->frames * FRAME_MAX);
	struct pick *picks = NULL;
	size_t n_picks = 0;
	uint32_t off = 0;
	char txt[1024];

	if (arena == NULL)
		die("out of memory for %u frames", o->frames);
	if (o->mix == MIX_STEERED) {
		n_picks = 1;
	} else if (o->mix == MIX_NXDOMAIN || o->mix == MIX_DEEP_NX) {
		if (p53_image_node(img, zn->apex)->wildcard != P53_NONE)
			die("zone %s has a wildcard at the apex: no name under it is NXDOMAIN", o->zone_name);
	} else {
		picks = candidates(img, zone, o->mix, o->dnssec, &n_picks);
		if (n_picks == 0)
			die("zone %s has no %s for mix %s", o->zone_name,
			    o->mix == MIX_REFERRAL ? "delegation (NS below the apex)" :
			    o->mix == MIX_BIG_A ? "A owners" : o->mix == MIX_WILDCARD ? "wildcard with A" :
			    "A/AAAA owners", mix_names[o->mix]);
	}
	fprintf(stderr, "p53-replay: mix %s on %s: %zu candidate %s, %u frames\n", mix_names[o->mix],
		o->zone_name, n_picks, o->mix == MIX_REFERRAL ? "delegations" : "owner/type pairs",
		o->frames);
	double *cdf = NULL;
	uint32_t *last = NULL;  /* --zipf: each candidate's last frame + 1, for the repeat share */
	uint32_t repeats = 0, distinct = 0;
	if (o->zipf > 0) {
		if (o->mix != MIX_SMALL_A && o->mix != MIX_BIG_A)
			die("--zipf is for the small-a and big-a mixes");
		cdf = zipf_setup(picks, n_picks, o->zipf);
		last = calloc(n_picks, sizeof(*last));
		if (last == NULL)
			die("out of memory");
	}
	const struct p53_steer_rec *srec = NULL;
	if (o->mix == MIX_STEERED) {
		uint8_t sname[P53_NAME_MAXLEN + 1];
		int l = name_from_text(sname, STEERED_OWNER);
		srec = p53_steer_find(steer, sname, (uint8_t)l, p53_name_hash(sname, (size_t)l), P53_T_A);
		if (srec == NULL)
			die("the steering table has no %s A", STEERED_OWNER);
	}

	for (uint32_t i = 0; i < o->frames; i++) {
		uint8_t qname[P53_NAME_MAXLEN + 1];
		int qlen;
		uint16_t qtype = P53_T_A;
		struct frame_meta *fm = &meta[i];
		int v6 = (rnd() % 100) < o->ipv6_pct;

		memset(fm, 0, sizeof(*fm));
		if (o->mix == MIX_STEERED) {
			qlen = name_from_text(qname, STEERED_OWNER);
			fm->rcode = P53_RCODE_NOERROR;
			fm->aa = 1;
		} else if (o->mix == MIX_DEEP_NX || o->mix == MIX_DEEP_REFUSED) {
			/* deep-nx: under the zone (NXDOMAIN); deep-refused: 127 labels under no
			 * served zone (REFUSED, AA=0). */
			if (o->mix == MIX_DEEP_NX) {
				qlen = deepest_below(qname, apex, zn->name_len, zn->labels);
				fm->rcode = P53_RCODE_NXDOMAIN;
				fm->aa = 1;
				fm->nscount = 1;
			} else {
				qlen = deepest_below(qname, (const uint8_t *)"", 1, 0);
				fm->rcode = P53_RCODE_REFUSED;
			}
		} else if (o->mix == MIX_NXDOMAIN) {
			do {
				qlen = random_below(qname, "nx-", apex, zn->name_len);
				if (qlen < 0)
					die("zone name too long for the nxdomain mix");
			} while (p53_image_find(img, qname, (size_t)qlen,
						p53_name_hash(qname, (size_t)qlen)) != P53_NONE);
			fm->rcode = P53_RCODE_NXDOMAIN;
			fm->aa = 1;
			fm->nscount = 1;        /* the SOA (RFC 2308 §3); with DO a minimum */
		} else {
			size_t pi;
			if (cdf != NULL) {
				pi = zipf_draw(cdf, n_picks);
				if (last[pi] == 0)
					distinct++;
				else if (i + 1 - last[pi] <= ZIPF_WINDOW)
					repeats++;
				last[pi] = i + 1;
			} else {
				pi = (size_t)(rnd() % n_picks);
			}
			const struct pick *p = &picks[pi];
			const struct p53_image_node *nd = p53_image_node(img, p->node);
			const uint8_t *owner = p53_image_node_name(img, nd);
			if (o->mix == MIX_REFERRAL) {
				qlen = random_below(qname, "h-", owner, nd->name_len);
				if (qlen < 0) {
					memcpy(qname, owner, nd->name_len);
					qlen = nd->name_len;
				}
				fm->aa = 0;     /* RFC 1034 §4.3.2 step 3b: not authoritative */
				fm->nscount = p->nscount;
			} else if (o->mix == MIX_WILDCARD) {
				/* "*.<parent>" -> "w-<random>.<parent>" (RFC 4592 §3.3.1) */
				qlen = random_below(qname, "w-", owner + 2, nd->name_len - 2);
				if (qlen < 0)
					die("wildcard owner too long for the wildcard mix");
				fm->aa = 1;
				fm->ancount = p->ancount;
			} else {
				memcpy(qname, owner, nd->name_len);
				qlen = nd->name_len;
				fm->aa = 1;
				fm->ancount = p->ancount;
			}
			qtype = p->qtype;
			fm->rcode = P53_RCODE_NOERROR;
		}
		if (i < 3)
			fprintf(stderr, "p53-replay:   e.g. %s %s\n", p53_name_to_str(txt, sizeof(txt), qname),
				qtype == P53_T_AAAA ? "AAAA" : "A");
		fm->off = off;
		fm->id = (uint16_t)rnd();
		fm->sport = (uint16_t)(1024 + rnd() % (65536 - 1024));
		int ecs = o->mix == MIX_ECS || (o->mix == MIX_STEERED && rnd() % 100 < o->ecs_pct);
		struct p53_steer_client who;
		fm->len = build_frame(arena + off, v6, qname, qlen, qtype, o->payload, ecs, o->dnssec,
				      fm->id, fm->sport,
				      o->clients > 1 ? (uint32_t)(rnd() % o->clients) : 0, &fm->dns_off, &who);
		if (srec != NULL) {
			/* What the table gives this client (its ECS address, else its source): the
			 * response must carry exactly that many records. */
			uint8_t scope;
			const struct p53_steer_variant *v = p53_steer_pick(steer, srec, &who, &scope);
			fm->ancount = (uint16_t)(v->count + (o->dnssec ? v->sig_count : 0));
		}
		off += fm->len;
	}
	if (cdf != NULL)
		fprintf(stderr, "p53-replay: zipf %.2f over %zu owner/type pairs: %u distinct in %u frames; "
			"%.1f%% of the frames ask a pair asked within the %u frames before\n", o->zipf,
			n_picks, distinct, o->frames, 100.0 * repeats / o->frames, ZIPF_WINDOW);
	free(cdf);
	free(last);
	free(picks);
	return arena;
}

/* ---- the steered mix: a steering table as pop53d builds it ------------------------------ */

/* Eight PoPs; the geo rules send countries to them, continents as the fallback. */
static const struct { const char *pop; double lat, lon; } pops[] = {
	{"ORD", 41.97, -87.90}, {"LAX", 33.94, -118.41}, {"NRT", 35.77, 140.39},
	{"FRA", 50.03, 8.57}, {"GRU", -23.43, -46.47}, {"SYD", -33.94, 151.18},
	{"JNB", -26.14, 28.24}, {"LHR", 51.47, -0.45},
};
static const struct { const char *key, *labels[2]; int continent; } geo_rules[] = {
	{"US", {"ORD", "LAX"}, 0}, {"MX", {"LAX", NULL}, 0}, {"JP", {"NRT", NULL}, 0},
	{"DE", {"FRA", NULL}, 0}, {"FR", {"FRA", "LHR"}, 0}, {"GB", {"LHR", NULL}, 0},
	{"BR", {"GRU", NULL}, 0}, {"AU", {"SYD", NULL}, 0}, {"ZA", {"JNB", NULL}, 0},
	{"NA", {"ORD", NULL}, 1}, {"EU", {"FRA", NULL}, 1}, {"AS", {"NRT", NULL}, 1},
	{"SA", {"GRU", NULL}, 1}, {"OC", {"SYD", NULL}, 1}, {"AF", {"JNB", NULL}, 1},
};

/*
 * The steering config the mix runs: steered.example.com. A with policy [map, geo] over eight
 * targets (two per PoP for ORD and FRA), the subnet map and MMDB that replay.sh writes
 * (scripts/bench/replay.sh: thousands of prefixes, every client of the frames inside some).
 */
static void steer_conf_make(struct p53_steer_conf *c, const struct opts *o)
{
	static struct p53_steer_record rec;
	static uint8_t lname[255];
	static struct p53_steer_target pool[RTE_DIM(pops) + 2];
	static struct p53_steer_geo_rule geo[RTE_DIM(geo_rules)];
	static char names[RTE_DIM(pops) + 2][16];
	struct p53_steer_record *r = &rec;

	memset(c, 0, sizeof(*c));
	c->map = (char *)(uintptr_t)o->steer_map;
	c->geoip = (char *)(uintptr_t)o->steer_geo;
	c->records = r;
	c->n_records = 1;
	r->pool = pool;
	r->geo = geo;
	r->owner = (char *)(uintptr_t)STEERED_OWNER;
	r->lname = lname;
	int l = name_from_text(r->lname, STEERED_OWNER);
	r->lname_len = (uint8_t)l;
	r->type = P53_T_A;
	r->policy[0] = P53_POLICY_MAP;
	r->policy[1] = P53_POLICY_GEO;
	r->n_policy = 2;
	r->ttl = 300;
	for (size_t i = 0; i < RTE_DIM(pops) + 2; i++) {
		struct p53_steer_target *t = &r->pool[r->n_pool++];
		size_t k = i < RTE_DIM(pops) ? i : (i == RTE_DIM(pops) ? 0 : 3); /* ORD2, FRA2 */
		snprintf(names[i], sizeof(names[i]), "%s%d", pops[k].pop, i < RTE_DIM(pops) ? 1 : 2);
		t->name = names[i];
		t->family = 4;
		t->addr[0] = 10;
		t->addr[3] = (uint8_t)(i + 1);
		t->pop = (char *)(uintptr_t)pops[k].pop;
		t->weight = 1;
		t->has_pos = true;
		t->latitude = pops[k].lat;
		t->longitude = pops[k].lon;
	}
	for (size_t g = 0; g < RTE_DIM(geo_rules); g++) {
		struct p53_steer_geo_rule *x = &r->geo[r->n_geo++];
		if (geo_rules[g].continent)
			x->continent = (char *)(uintptr_t)geo_rules[g].key;
		else
			x->country = (char *)(uintptr_t)geo_rules[g].key;
		for (int k = 0; k < 2 && geo_rules[g].labels[k] != NULL; k++)
			x->labels[x->n_labels++] = (char *)(uintptr_t)geo_rules[g].labels[k];
	}
	p53_steer_conf_layout(c, NULL); /* as p53_config_load: the image's indices hold */
}

/* The image's RRset for the steered owner (every target), as p53_zone_compile adds it. */
static void steer_extra_make(const struct p53_steer_conf *c, struct p53_zone_extra *e, uint8_t *addrs)
{
	const struct p53_steer_record *r = &c->records[0];

	for (int j = 0; j < r->n_pool; j++)
		memcpy(addrs + 4 * j, r->pool[j].addr, 4);
	*e = (struct p53_zone_extra){ .lname = r->lname, .lname_len = r->lname_len, .type = r->type,
				      .ttl = r->ttl, .addrs = addrs, .n = r->n_pool, .line = 1,
				      .owner = r->owner, .rec = 0 };
}

/* Load the sources and build the table with every target up, as p53_steer_prepare does;
 * signed with `key` when not NULL. */
static void *steer_table_make(const struct p53_steer_conf *c, const char *key, size_t *len)
{
	struct p53_steer_sources src;
	struct p53_sign_key k;
	char err[600];
	uint32_t now = (uint32_t)time(NULL);
	struct p53_steer_signing sg = { .keys = &k, .n_keys = key != NULL, .inception = now - 3600,
					.expiration = now + 14 * 86400 };

	if (key != NULL && p53_sign_key_load(key, &k, err, sizeof(err)) != 0)
		die("--sign-key: %s", err);
	if (p53_steer_sources_load(c, &src, err, sizeof(err)) != 0)
		die("steering sources: %s", err);
	void *t = p53_steer_build_signed(c, &src, NULL, &sg, len, err, sizeof(err));
	if (t == NULL)
		die("steering table: %s", err);
	fprintf(stderr, "p53-replay: steering table %zu bytes: map %u+%u blocks, geo %u+%u blocks "
		"(IPv4+IPv6), %u variants, %u signed in %.3f ms\n", *len, src.src[0].n4, src.src[0].n6,
		src.src[1].n4, src.src[1].n6, p53_steer_hdr(t)->n_variants, sg.n_signed,
		(double)sg.sign_ns / 1e6);
	p53_steer_sources_free(&src);
	if (key != NULL)
		p53_sign_key_free(&k);
	return t;
}

/* ---- full check of every frame's response, before timing ---------------------------- */

static int dnssec_run; /* --do: NXDOMAIN carries its proof */

static void verify_response(const struct frame_meta *fm, const struct rte_mbuf *m, uint32_t f,
			    uint64_t *dns_bytes, uint64_t *frame_bytes)
{
	const uint8_t *fr = rte_pktmbuf_mtod(m, const uint8_t *);
	uint16_t len = rte_pktmbuf_data_len(m);
	const uint8_t *h = fr + fm->dns_off;
	uint16_t sport_resp;

	if (len < fm->dns_off + P53_DNS_HDR_LEN)
		die("frame %u: response of %u bytes is too short", f, len);
	sport_resp = get16(fr + fm->dns_off - 8);
	if (sport_resp != 53 || get16(fr + fm->dns_off - 6) != fm->sport)
		die("frame %u: response ports %u -> %u, expected 53 -> %u", f, sport_resp,
		    get16(fr + fm->dns_off - 6), fm->sport);
	if (memcmp(fr, mac_client, 6) != 0)
		die("frame %u: response not addressed to the client MAC", f);
	if (get16(h) != fm->id)
		die("frame %u: response ID %04x, query ID %04x", f, get16(h), fm->id);
	if ((h[2] & 0x80) == 0)
		die("frame %u: QR=0 in the response", f);
	if ((h[3] & 0x0f) != fm->rcode)
		die("frame %u: RCODE %u, expected %u", f, h[3] & 0x0f, fm->rcode);
	if (((h[2] & 0x04) != 0) != (fm->aa != 0))
		die("frame %u: AA=%u, expected %u", f, (h[2] & 0x04) != 0, fm->aa);
	if (get16(h + 4) != 1)
		die("frame %u: QDCOUNT %u", f, get16(h + 4));
	if (get16(h + 6) != fm->ancount)
		die("frame %u: ANCOUNT %u, expected %u", f, get16(h + 6), fm->ancount);
	if (fm->rcode == P53_RCODE_NXDOMAIN && !dnssec_run && get16(h + 8) != fm->nscount)
		die("frame %u: NSCOUNT %u, expected %u (the SOA)", f, get16(h + 8), fm->nscount);
	if (fm->rcode == P53_RCODE_NXDOMAIN && dnssec_run && get16(h + 8) < 2 * fm->nscount + 2)
		die("frame %u: NSCOUNT %u, expected the SOA, a denial and their RRSIGs", f,
		    get16(h + 8));
	if ((h[2] & 0x02) != 0 || (h[3] & 0x20) != 0)
		die("frame %u: TC or AD set", f);
	if (fm->aa == 0 && get16(h + 8) < fm->nscount)
		die("frame %u: referral NSCOUNT %u, expected %u NS", f, get16(h + 8), fm->nscount);
	if (get16(h + 10) < 1)
		die("frame %u: no OPT in the response to an EDNS query (RFC 6891 §7)", f);
	*dns_bytes += (uint64_t)(len - fm->dns_off);
	*frame_bytes += len;
}

static void verify_all(struct replay *r, double *avg_dns, double *avg_frame)
{
	struct rte_mbuf *pkts[P53_BURST], *out[P53_BURST];
	uint64_t dns_bytes = 0, frame_bytes = 0;

	for (uint32_t f = 0; f < r->n_frames; f += P53_BURST) {
		uint16_t n = r->n_frames - f < P53_BURST ? (uint16_t)(r->n_frames - f) : P53_BURST;
		if (rte_pktmbuf_alloc_bulk(r->mp, pkts, n) != 0)
			die("mempool empty");
		for (uint16_t i = 0; i < n; i++)
			copy_in(r, pkts[i], f + i);
		uint16_t n_out = p53_worker_burst(r->w, pkts, n, out);
		if (n_out != n)
			die("frames %u..%u: %u queries gave %u responses (worker dropped some)", f,
			    f + n - 1, n, n_out);
		for (uint16_t i = 0; i < n; i++)
			verify_response(&r->meta[f + i], out[i], f + i, &dns_bytes, &frame_bytes);
		rte_pktmbuf_free_bulk(out, n_out);
	}
	*avg_dns = (double)dns_bytes / r->n_frames;
	*avg_frame = (double)frame_bytes / r->n_frames;
}

/* ---- the guard, as control/abuse/guard_pub.c publishes it ------------------------------ */

static struct p53_guard *make_guard(uint32_t rate)
{
	struct p53_rrl_settings s;
	struct p53_guard *g = rte_zmalloc("p53_guard", sizeof(*g), RTE_CACHE_LINE_SIZE);
	uint32_t entries = 65536;

	if (g == NULL)
		die("out of memory for the guard");
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < P53_RRL_ALL; i++)
		s.rate[i] = rate;
	s.window = 15;
	s.slip = 2;
	s.v4_bits = 24;
	s.v6_bits = 56;
	p53_rrl_conf_set(&g->rrl, &s, rte_get_tsc_hz(), 1, 0x5353535353535353ull);
	g->rrl.on = rate != 0;
	g->tables[0] = rte_zmalloc("p53_rrl", p53_rrl_table_size(entries), RTE_CACHE_LINE_SIZE);
	if (g->tables[0] == NULL)
		die("out of memory for the RRL table");
	p53_rrl_table_init(g->tables[0], entries);
	g->cookies = 1;
	for (int i = 0; i < 16; i++)
		g->secrets.cur[i] = (uint8_t)rnd();
	g->clock_hz = rte_get_tsc_hz();
	g->clock_tsc = rte_rdtsc();
	g->clock_unix = 1700000000u;
	return g;
}

/* This thread's CPU time in ns: unlike the TSC it stops while another process has the CPU,
 * which on a shared machine is most of the run-to-run noise. */
static double thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- main --------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: p53-replay [EAL args --] -z NAME=FILE [-z NAME=FILE ...] -m MIX [options]\n"
		"  -m MIX          small-a | nxdomain | referral | big-a | ecs | steered | wildcard |\n"
		"                  deep-nx | deep-refused\n"
		"  -z NAME=FILE    compile this zone into the image (repeatable)\n"
		"  -Z NAME         the zone the mix queries (default: the first -z)\n"
		"  -n COUNT        queries per measured run (default 2000000)\n"
		"  -t SECONDS      stop a measured run after this long (default 30)\n"
		"  -f FRAMES       distinct pre-built query frames, cycled (default 65536)\n"
		"  -s SEED         random seed (default 53)\n"
		"  -6 PERCENT      share of IPv6 frames (default 0)\n"
		"  --payload N     EDNS UDP payload size in the queries (default 1232)\n"
		"  --do            DO=1 in the queries: signed zones answer with RRSIGs and proofs\n"
		"  --no-copy-run   skip the copy-only run (callgrind)\n"
		"  --replica MODE  where the image the worker reads lives:\n"
		"                  adopt    the compiled image itself (p53_bigmem_image: 2 MiB-aligned\n"
		"                           when big, THP advised by the compiler): what pop53d's first\n"
		"                           worker answers from (default)\n"
		"                  eal      a copy in rte_malloc memory: pop53d's other workers (2 MiB\n"
		"                           hugetlbfs pages when the EAL has hugepages; the default EAL\n"
		"                           args say --no-huge: 4 KiB pages)\n"
		"                  thp      a copy in 2 MiB-aligned memory, MADV_HUGEPAGE\n"
		"                  4k       a copy in 4 KiB pages (MADV_NOHUGEPAGE)\n"
		"                  hugetlb  a copy in an anonymous MAP_HUGETLB mapping (2 MiB pages;\n"
		"                           needs free pages in /proc/sys/vm/nr_hugepages)\n"
		"  --rrl RATE      publish a guard: cookies on, RRL at RATE/s per account\n"
		"  --guard         publish a guard with cookies on and RRL off (pop53d's default)\n"
		"  --clients N     source addresses from N client /24s (default 1: 192.0.2.1)\n"
		"  --flood         RRL is expected to limit most responses (one /24 over its rate)\n"
		"  --steer-map F   steered: the subnet map (JSON, docs/CONFIG.md steering.map)\n"
		"  --steer-geo F   steered: the MaxMind DB (steering.geoip)\n"
		"  --ecs-pct P     steered: share of frames with an ECS option (default 50)\n"
		"  --sign-key K    steered: sign the variants with key K (as dnssec.signing_keys);\n"
		"                  with --do the answers carry the RRSIGs\n"
		"  --zipf S        small-a, big-a: owners drawn by a Zipf law of exponent S over the\n"
		"                  candidates (shuffled, seeded by -s): repeated names, as resolvers ask\n"
		"                  them; prints the share asked again within 1024 frames\n"
		"  --names N       nxdomain, wildcard: the random label is one of N distinct ones (default:\n"
		"                  a fresh one per frame): repeated names, which NSEC3's next closer\n"
		"                  cache (dataplane/dnssec.h) answers without hashing\n"
		"  --label-lens A-B nxdomain, wildcard, referral: the random part of the label is A to B\n"
		"                  characters long, drawn per frame (default 10-10: every frame one length)\n"
		"EAL args default to: -l 1 --no-huge -m 256 --no-shconf --file-prefix=p53-replay\n"
		"                     --no-telemetry --no-pci --log-level=*:warning\n");
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{"payload", required_argument, NULL, 'P'},
		{"no-copy-run", no_argument, NULL, 'C'},
		{"do", no_argument, NULL, 'D'},
		{"replica", required_argument, NULL, 'R'},
		{"rrl", required_argument, NULL, 'L'},
		{"clients", required_argument, NULL, 'c'},
		{"flood", no_argument, NULL, 'F'},
		{"guard", no_argument, NULL, 'G'},
		{"steer-map", required_argument, NULL, 'M'},
		{"steer-geo", required_argument, NULL, 'g'},
		{"ecs-pct", required_argument, NULL, 'e'},
		{"sign-key", required_argument, NULL, 'K'},
		{"names", required_argument, NULL, 'N'},
		{"zipf", required_argument, NULL, 'z' + 256},
		{"label-lens", required_argument, NULL, 'l' + 256},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;
	int have_mix = 0;

	*o = (struct opts){.count = 2000000, .max_seconds = 30, .frames = 65536, .seed = 53,
			   .payload = 1232, .copy_run = 1, .clients = 1, .ecs_pct = 50};
	optind = 1;
	while ((opt = getopt_long(argc, argv, "m:z:Z:n:t:f:s:6:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			have_mix = 0;
			for (size_t i = 0; i < RTE_DIM(mix_names); i++)
				if (strcmp(optarg, mix_names[i]) == 0) {
					o->mix = (enum mix)i;
					have_mix = 1;
				}
			if (!have_mix)
				die("unknown mix '%s'", optarg);
			break;
		case 'z': {
			char *eq = strchr(optarg, '=');
			if (eq == NULL || o->n_zones == MAX_ZONES)
				die("-z wants NAME=FILE (at most %d)", MAX_ZONES);
			*eq = '\0';
			o->zones[o->n_zones].name = optarg;
			o->zones[o->n_zones].file = eq + 1;
			o->n_zones++;
			break;
		}
		case 'Z':
			o->zone_name = optarg;
			break;
		case 'n':
			o->count = strtoull(optarg, NULL, 10);
			break;
		case 't':
			o->max_seconds = strtod(optarg, NULL);
			break;
		case 'f':
			o->frames = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 's':
			o->seed = strtoull(optarg, NULL, 10);
			break;
		case '6':
			o->ipv6_pct = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'P':
			o->payload = (uint16_t)strtoul(optarg, NULL, 10);
			break;
		case 'C':
			o->copy_run = 0;
			break;
		case 'D':
			o->dnssec = 1;
			dnssec_run = 1;
			break;
		case 'R':
			o->replica = -1;
			for (size_t i = 0; i < RTE_DIM(replica_names); i++)
				if (strcmp(optarg, replica_names[i]) == 0)
					o->replica = (int)i;
			if (o->replica < 0)
				die("unknown --replica '%s'", optarg);
			break;
		case 'L':
			o->rrl_rate = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'c':
			o->clients = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'F':
			o->flood = 1;
			break;
		case 'G':
			o->guard = 1;
			break;
		case 'M':
			o->steer_map = optarg;
			break;
		case 'g':
			o->steer_geo = optarg;
			break;
		case 'e':
			o->ecs_pct = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'K':
			o->sign_key = optarg;
			break;
		case 'N':
			o->names = (uint32_t)strtoul(optarg, NULL, 10);
			name_pool = o->names;
			break;
		case 'z' + 256:
			o->zipf = strtod(optarg, NULL);
			break;
		case 'l' + 256:
			if (sscanf(optarg, "%d-%d", &label_min, &label_max) != 2 || label_min < 1 ||
			    label_max < label_min || label_max > 60)
				die("--label-lens wants A-B with 1 <= A <= B <= 60");
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (!have_mix) {
		usage(stderr);
		exit(2);
	}
	if (o->n_zones == 0)
		die("no zone: give -z NAME=FILE");
	if ((o->mix == MIX_STEERED) != (o->steer_map != NULL || o->steer_geo != NULL) || o->ecs_pct > 100)
		die("the steered mix (and only it) wants --steer-map and/or --steer-geo; --ecs-pct 0..100");
	if (o->zone_name == NULL && o->n_zones > 0)
		o->zone_name = o->zones[0].name;
	if (o->frames == 0 || o->count == 0 || o->ipv6_pct > 100)
		die("bad -f, -n or -6");
	if (o->clients == 0 || o->clients > 65536 || (o->flood && o->rrl_rate == 0))
		die("bad --clients (1..65536), or --flood without --rrl");
	if (o->rrl_rate != 0)
		o->guard = 1;
}

/* The replica's image in the memory --replica asks for; `img` is freed unless adopted. */
static void *make_replica(void *img, size_t len, int mode, const char **where)
{
	size_t huge = 2u << 20, alen = (len + huge - 1) & ~(huge - 1);
	void *r = NULL;

	switch (mode) {
	case REP_ADOPT:
		*where = "the compiled image (p53_bigmem_image, MADV_HUGEPAGE by the compiler), as pop53d's first worker";
		return img;
	case REP_EAL:
		r = rte_malloc_socket("p53_replica", len, RTE_CACHE_LINE_SIZE, (int)rte_socket_id());
		if (r == NULL)
			die("rte_malloc of %zu bytes failed (EAL -m too small?)", len);
		*where = rte_eal_has_hugepages() ? "rte_malloc (EAL hugepages)" : "rte_malloc (EAL --no-huge)";
		break;
	case REP_THP:
		if (posix_memalign(&r, huge, alen) != 0)
			return NULL;
		(void)madvise(r, alen, MADV_HUGEPAGE);
		*where = "2 MiB-aligned malloc, MADV_HUGEPAGE";
		break;
	case REP_4K:
		if (posix_memalign(&r, 4096, alen) != 0)
			return NULL;
		(void)madvise(r, alen, MADV_NOHUGEPAGE);
		*where = "malloc, MADV_NOHUGEPAGE (4 KiB pages)";
		break;
	case REP_HUGETLB:
		r = mmap(NULL, alen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (r == MAP_FAILED)
			die("mmap MAP_HUGETLB of %zu bytes: %s (free 2 MiB pages: /proc/sys/vm/nr_hugepages)",
			    alen, strerror(errno));
		*where = "mmap MAP_HUGETLB (2 MiB pages)";
		break;
	default:
		return NULL;
	}
	memcpy(r, img, len);
	free(img);
	return r;
}

static void free_replica(void *r, size_t len, int mode)
{
	size_t huge = 2u << 20;

	if (mode == REP_EAL)
		rte_free(r);
	else if (mode == REP_HUGETLB)
		munmap(r, (len + huge - 1) & ~(huge - 1));
	else
		free(r);
}

/* How the replica is backed, and the process's THP total (smaps_rollup). */
static double print_backing(const void *rep, size_t len)
{
	struct p53_bigmem_backing b;
	char line[256];
	unsigned long long anon_huge = 0;

	if (p53_bigmem_backing(rep, len, &b) == 0)
		printf("  replica pages      %.1f MiB of %.1f MiB resident, %.1f MiB in huge pages (%.0f%%), "
		       "largest kernel page %zu KiB\n", (double)b.resident / 1048576.0,
		       (double)len / 1048576.0, (double)b.huge / 1048576.0,
		       100.0 * (double)b.huge / (double)len, b.page_size >> 10);
	FILE *f = fopen("/proc/self/smaps_rollup", "re");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "AnonHugePages: %llu kB", &anon_huge) == 1)
			printf("  smaps_rollup       AnonHugePages %llu kB\n", anon_huge);
	if (f != NULL)
		fclose(f);
	return 100.0 * (double)b.huge / (double)len;
}

int main(int argc, char **argv)
{
	/* --in-memory is refused with --no-huge by DPDK 22.11 ("--legacy-mem is not compatible");
	 * --no-shconf and our own prefix keep us off other DPDK processes' runtime files. */
	static char *def_eal[] = {"p53-replay", "-l", "1", "--no-huge", "-m", "256", "--no-shconf",
				  "--file-prefix=p53-replay", "--no-telemetry", "--no-pci",
				  "--log-level=*:warning", NULL};
	struct opts o;
	char err[1024] = "";
	int sep = -1;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	/* App options: after "--" when EAL args are given, else all of argv. */
	{
		int app_argc = sep < 0 ? argc : argc - sep;
		char **app_argv = sep < 0 ? argv : argv + sep;
		if (sep >= 0)
			app_argv[0] = argv[0];
		parse_opts(app_argc, app_argv, &o);
	}
	/* The steered mix: its record into the image (every target, flagged steered) and the
	 * table the workers pick a variant from. */
	struct p53_steer_conf sconf;
	struct p53_zone_extra sextra;
	uint8_t saddrs[P53_STEER_MAX_POOL * 4];
	if (o.mix == MIX_STEERED) {
		steer_conf_make(&sconf, &o);
		steer_extra_make(&sconf, &sextra, saddrs);
		o.zones[0].extra = &sextra;
		o.zones[0].n_extra = 1;
		o.zones[0].steer_layout = sconf.layout;
	}
	rng_state = o.seed * 0x9E3779B97F4A7C15ULL + 1;

	size_t img_len = 0;
	uint64_t t_build = rte_get_tsc_cycles();
	void *img = p53_image_build(o.zones, (size_t)o.n_zones, &img_len, err, sizeof(err), NULL, NULL);
	if (img == NULL)
		die("zone compile: %s", err);
	t_build = rte_get_tsc_cycles() - t_build;

	optind = 0;     /* glibc: fully reset getopt for the EAL parser */
	int eal_rc = sep < 0 ? rte_eal_init((int)RTE_DIM(def_eal) - 1, def_eal)
			     : rte_eal_init(sep, argv);
	if (eal_rc < 0)
		die("EAL init: %s", rte_strerror(rte_errno));
	uint64_t hz = rte_get_tsc_hz();
	fprintf(stderr, "p53-replay: image %zu bytes, %" PRIu32 " records, %" PRIu32 " nodes (compiled in %.1f s)\n",
		img_len, p53_image_hdr(img)->n_records, p53_image_hdr(img)->n_nodes,
		(double)t_build / (double)hz);

	const char *where = "";
	void *rep = make_replica(img, img_len, o.replica, &where);
	if (rep == NULL)
		die("out of memory for the replica (%zu bytes)", img_len);
	img = NULL;
	/* control/publish.c stamps every image it publishes; the NSEC3 next closer cache
	   (dataplane/dnssec.h) keeps a hash's NSEC3 only for a published generation. */
	((struct p53_image_hdr *)rep)->generation = 1;

	struct frame_meta *meta = calloc(o.frames, sizeof(*meta));
	if (meta == NULL)
		die("out of memory");
	size_t steer_len = 0;
	void *steer = o.mix == MIX_STEERED ? steer_table_make(&sconf, o.sign_key, &steer_len) : NULL;
	uint8_t *arena = build_frames(rep, &o, meta, steer);

	struct rte_mempool *mp = rte_pktmbuf_pool_create("p53_replay", POOL_MBUFS, POOL_CACHE, 0,
							 RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (mp == NULL)
		die("mempool: %s", rte_strerror(rte_errno));

	struct p53_worker *w = rte_zmalloc("p53_replay_worker", sizeof(*w), RTE_CACHE_LINE_SIZE);
	static const char identity[] = "replay";
	if (w == NULL)
		die("out of memory for the worker");
	/* As control/main.c sets it up for a port without checksum offload. */
	w->lcore = rte_lcore_id();
	w->tx_offload = 0;
	memcpy(w->mac, mac_server, 6);
	static struct p53_replica replica;
	replica.image = rep;
	replica.image_len = img_len; /* as publish.c: the worker prefetches only for large images */
	replica.conf.identity = (const uint8_t *)identity;
	replica.conf.identity_len = (uint8_t)strlen(identity);
	replica.conf.edns_max_payload = 1232;
	static void *steer_slot;        /* dp.steer in pop53d: published once, never replaced */
	steer_slot = steer;
	replica.conf.steer = &steer_slot;
	/* The fast path's negative-answer templates, as control/publish.c builds them. */
	static struct p53_fast_neg neg[64];
	if (p53_fast_neg_count(rep) <= RTE_DIM(neg)) {
		p53_fast_neg_build(rep, neg);
		replica.conf.neg = neg;
		replica.conf.n_neg = (uint32_t)p53_fast_neg_count(rep);
	}
	/* And its referral templates (P53_NO_REF=1 in the environment: none, to compare). */
	size_t rz = getenv("P53_NO_REF") == NULL ? p53_fast_ref_size(rep) : 0;
	if (rz > 0) {
		void *ref = rte_malloc("p53_fast_ref", rz, RTE_CACHE_LINE_SIZE);
		if (ref == NULL)
			die("out of memory for the referral templates");
		p53_fast_ref_build(rep, ref, rz);
		replica.conf.ref = ref;
	}
	/* And its RRsets' checksum sums, as publish.c: none for a big image (P53_NO_SUMS=1: none
	 * for any image, P53_BIG_SUMS=1: a big image's too, to compare). */
	size_t nsum = getenv("P53_NO_SUMS") == NULL &&
		      (img_len <= P53_PREFETCH_MIN_IMAGE || getenv("P53_BIG_SUMS") != NULL) ?
		      p53_fast_sum_count(rep) : 0;
	if (nsum > 0) {
		uint64_t *sums = rte_malloc("p53_fast_sums", nsum * sizeof(*sums), RTE_CACHE_LINE_SIZE);
		if (sums == NULL)
			die("out of memory for the RRset sums");
		p53_fast_sum_build(rep, replica.conf.edns_max_payload, sums);
		replica.conf.sums = sums;
		replica.conf.n_sums = (uint32_t)nsum;
	}
	/* The frames' destinations, as dataplane.addresses would list them. */
	replica.addrs.v4[replica.addrs.n4++] = rte_cpu_to_be_32(RTE_IPV4(192u, 0, 2, 53));
	memcpy(replica.addrs.v6[replica.addrs.n6++], v6_server, 16);
	w->replica = &replica; /* no reloads here: no RCU variable, w->qsbr stays NULL */
	/* The answer cache (dataplane/qcache.h), as control/main.c gives each worker one:
	 * P53_ANSWER_CACHE=N entries in the environment (0: none, as dataplane.answer_cache: 0);
	 * without it pop53d's default, so the figures are the default deployment's. */
	const char *qce = getenv("P53_ANSWER_CACHE");
	uint32_t qc_entries = qce != NULL ? (uint32_t)strtoul(qce, NULL, 10) : P53_QCACHE_DEFAULT_ENTRIES;
	if (qc_entries != 0) {
		w->qcache = rte_malloc("p53_qcache", p53_qcache_size(qc_entries), RTE_CACHE_LINE_SIZE);
		if (w->qcache == NULL || p53_qcache_init(w->qcache, qc_entries) != 0)
			die("answer cache of %u entries: out of memory or not a power of two", qc_entries);
	}
	if (steer != NULL)      /* as control/steer/steer_pub.c stamps a published table */
		((struct p53_steer_hdr *)steer)->generation = 1;
	static volatile int never;
	w->stop = &never;

	struct replay r = {.mp = mp, .w = w, .arena = arena, .meta = meta, .n_frames = o.frames};
	double avg_dns, avg_frame;
	verify_all(&r, &avg_dns, &avg_frame);
	if (w->qcache != NULL)  /* again: the answers the cache holds now, checked as well */
		verify_all(&r, &avg_dns, &avg_frame);
	fprintf(stderr, "p53-replay: all %u frames answered and checked (RCODE %u, AA, ANCOUNT, NSCOUNT, ID, ports)\n",
		o.frames, meta[0].rcode);
	struct p53_guard *guard = NULL;
	if (o.guard) {
		guard = make_guard(o.rrl_rate);
		w->guard = guard;
		r.flood = o.flood;
		if (!o.flood) {
			/* With RRL on and nobody over the rate, every frame still gets its answer. */
			verify_all(&r, &avg_dns, &avg_frame);
			if (w->stats.guard.rrl_dropped + w->stats.guard.rrl_slipped != 0)
				die("--rrl %u without --flood: %" PRIu64 " responses were limited; raise the rate "
				    "or --clients", o.rrl_rate, w->stats.guard.rrl_dropped + w->stats.guard.rrl_slipped);
		}
		fprintf(stderr, "p53-replay: guard published: cookies on, RRL %u/s per account (0: off), %u client /24s%s\n",
			o.rrl_rate, o.clients, o.flood ? ", flood: most responses limited" : "");
	}

	uint64_t copy_done = 0, copy_cyc = 0;
	double copy_cpu = 0;
	if (o.copy_run) {
		copy_cpu = thread_ns();
		uint64_t t0 = rte_rdtsc_precise();
		copy_done = replay_copy_loop(&r, o.count, t0 + (uint64_t)(o.max_seconds * (double)hz));
		copy_cyc = rte_rdtsc_precise() - t0;
		copy_cpu = thread_ns() - copy_cpu;
		if (r.failed)
			die("copy run: %s", r.fail);
	}

	struct p53_worker_stats before = w->stats;
	struct p53_qcache qc0 = {0};
	if (w->qcache != NULL)
		qc0 = *w->qcache;
	struct p53_nsec3_cache_stats nc0, nc1;
	p53_nsec3_cache_stats(&nc0);
	double cpu = thread_ns();
	uint64_t t0 = rte_rdtsc_precise();
	uint64_t done = replay_loop(&r, o.count, t0 + (uint64_t)(o.max_seconds * (double)hz));
	uint64_t cyc = rte_rdtsc_precise() - t0;
	cpu = thread_ns() - cpu;
	p53_nsec3_cache_stats(&nc1);
	if (r.failed)
		die("measured run: %s (after %" PRIu64 " queries)", r.fail, done);
	uint8_t rc = meta[0].rcode;
	uint64_t answered = w->stats.answered - before.answered;
	uint64_t with_rc = w->stats.ans.rcode[rc] - before.ans.rcode[rc];
	uint64_t dropped = w->stats.guard.rrl_dropped - before.guard.rrl_dropped;
	uint64_t slipped = w->stats.guard.rrl_slipped - before.guard.rrl_slipped;
	uint64_t limited = dropped + slipped;
	if (o.flood) {
		/* Every query answered, slipped or dropped by RRL, and most of them limited. */
		if (done == 0 || answered + dropped != done || limited < done * 9 / 10)
			die("flood run: %" PRIu64 " queries, %" PRIu64 " sent, %" PRIu64 " dropped, %" PRIu64
			    " slipped: expected almost all limited", done, answered, dropped, slipped);
	} else if (done == 0 || answered != done || with_rc != done || limited != 0) {
		die("measured run: %" PRIu64 " queries, %" PRIu64 " answered, %" PRIu64 " with RCODE %u, %"
		    PRIu64 " limited", done, answered, with_rc, rc, limited);
	}

	double ns = (double)cyc * 1e9 / (double)hz / (double)done;
	double copy_ns = copy_done ? (double)copy_cyc * 1e9 / (double)hz / (double)copy_done : 0;
	double net_ns = ns - copy_ns;
	double mqps = 1e3 / ns;
	double net_mqps = net_ns > 0 ? 1e3 / net_ns : 0;
	double cpu_net_ns = cpu / (double)done - (copy_done ? copy_cpu / (double)copy_done : 0);

	printf("mix %s, zone %s, %u frames (%u%% IPv6), replica in %s\n", mix_names[o.mix],
	       o.zone_name, o.frames, o.ipv6_pct, where);
	double huge_pct = print_backing(rep, img_len);
	printf("  queries            %" PRIu64 " in %.3f s, all answered with RCODE %u (counters and %" PRIu64 " sampled responses checked)\n",
	       done, (double)cyc / (double)hz, rc, (done + P53_BURST - 1) / P53_BURST);
	printf("  full loop          %.1f ns/query  %.2f Mqps  (alloc + copy + p53_worker_burst + free)\n", ns, mqps);
	if (o.copy_run) {
		printf("  copy-only loop     %.1f ns/query  (alloc + copy + free: the modelled NIC DMA)\n", copy_ns);
		printf("  net (full - copy)  %.1f ns/query  %.2f Mqps on one core\n", net_ns, net_mqps);
		printf("  net, CPU time      %.1f ns/query  (this thread's CPU time: what a shared CPU's other\n"
		       "                     processes took is not in it)\n", cpu_net_ns);
	}
	printf("  response size      %.1f bytes DNS, %.1f bytes frame (average)\n", avg_dns, avg_frame);
	if (nc1.hits + nc1.misses + nc1.uncached != nc0.hits + nc0.misses + nc0.uncached)
		printf("  NSEC3 cache        %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " uncached (names: %s)\n",
		       nc1.hits - nc0.hits, nc1.misses - nc0.misses, nc1.uncached - nc0.uncached,
		       o.names != 0 ? "--names" : "one per frame");
	if (w->qcache != NULL)
		printf("  answer cache       %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " stored (%u entries)\n",
		       w->qcache->hits - qc0.hits, w->qcache->misses - qc0.misses,
		       w->qcache->stores - qc0.stores, w->qcache->mask + 1);
	if (w->qcache != NULL && w->qcache->pick_hits + w->qcache->pick_misses != qc0.pick_hits + qc0.pick_misses)
		printf("  steered picks      %" PRIu64 " from the pick cache, %" PRIu64 " from the table\n",
		       w->qcache->pick_hits - qc0.pick_hits, w->qcache->pick_misses - qc0.pick_misses);
	if (guard != NULL)
		printf("  guard              cookies on, RRL %u/s per account, %u client /24s: %" PRIu64 " dropped, %" PRIu64
		       " slipped (%" PRIu64 " before answering)\n", o.rrl_rate, o.clients, dropped, slipped,
		       w->stats.guard.rrl_early - before.guard.rrl_early);
	printf("RESULT mix=%s zone=%s frames=%u ipv6_pct=%u queries=%" PRIu64 " ns=%.2f copy_ns=%.2f net_ns=%.2f"
	       " mqps=%.3f net_mqps=%.3f resp_dns=%.1f resp_frame=%.1f image_bytes=%zu records=%" PRIu32
	       " tsc_hz=%" PRIu64 " rrl=%u clients=%u limited=%" PRIu64 " replica=%s huge_pct=%.0f cpu_net_ns=%.2f\n",
	       mix_names[o.mix], o.zone_name, o.frames, o.ipv6_pct, done, ns, copy_ns, net_ns, mqps, net_mqps,
	       avg_dns, avg_frame, img_len, p53_image_hdr(rep)->n_records, hz, o.rrl_rate, o.clients, limited,
	       replica_names[o.replica], huge_pct, cpu_net_ns);

	if (guard != NULL) {
		rte_free(guard->tables[0]);
		rte_free(guard);
	}
	free(steer);
	rte_free(w);
	rte_mempool_free(mp);
	free(arena);
	free(meta);
	free_replica(rep, img_len, o.replica);
	rte_eal_cleanup();
	return 0;
}
