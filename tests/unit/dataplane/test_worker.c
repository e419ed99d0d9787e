/*
 * The worker's per-burst path (p53_worker_burst) over real mbufs: which frames are answered
 * and which are dropped, with which counter, and that every mbuf is either handed back to
 * transmit or freed. One table row per case, each saying what it checks. Frames are built
 * here with an independent RFC 1071 checksum; the replica is the differential test's zone
 * compiled by the real compiler.
 *
 * Needs the EAL (a mempool): started with --no-huge --no-pci and its own file prefix.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "control/zone/image_build.h"
#include "dataplane/worker.h"
#include "tests/common/wire.h"

static struct rte_mempool *mp;
static struct p53_worker w;
static struct p53_replica rep;
static void *img;

static const uint8_t SRV_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x53 };
static const uint8_t CLI_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t CLI4[4] = { 192, 0, 2, 1 };
static const uint8_t SRV4[4] = { 192, 0, 2, 53 };
static const uint8_t CLI6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0x53, [15] = 0x01 };
static const uint8_t SRV6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0x53, [15] = 0x53 };

/* ---- frames ------------------------------------------------------------------------- */

struct fspec {
	int v6;
	uint16_t qtype;
	const char *qname;      /* dotted, no trailing dot */
	int edns;               /* 0: no OPT; 1: an OPT (payload 1232); 2: with DO=1 */
};

/* Ethernet + IPv4/IPv6 + UDP 40000 -> 53 + a query (RD=0, no EDNS), correct checksums.
 * Returns the frame length; *l4 is the UDP header offset. */
static uint16_t build(uint8_t *f, const struct fspec *s, size_t *l4)
{
	size_t l3 = 14, u = l3 + (s->v6 ? 40 : 20), d = u + 8, n = 12;
	uint8_t *dns = f + d;

	memcpy(f, SRV_MAC, 6);
	memcpy(f + 6, CLI_MAC, 6);
	put16(f + 12, s->v6 ? 0x86DD : 0x0800);
	memset(dns, 0, 12);
	put16(dns, 0xbeef);
	put16(dns + 4, 1);
	for (const char *p = s->qname; *p != '\0';) {
		const char *dot = strchr(p, '.');
		size_t ll = dot != NULL ? (size_t)(dot - p) : strlen(p);
		dns[n++] = (uint8_t)ll;
		memcpy(dns + n, p, ll);
		n += ll;
		p += ll + (dot != NULL);
	}
	dns[n++] = 0;
	put16(dns + n, s->qtype);
	put16(dns + n + 2, 1);
	n += 4;
	if (s->edns) {
		/* OPT: root owner, type 41, payload 1232, version 0, DO, no options */
		static const uint8_t opt[11] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };
		memcpy(dns + n, opt, sizeof(opt));
		if (s->edns == 2)
			dns[n + 7] = 0x80;
		put16(dns + 10, 1);
		n += sizeof(opt);
	}
	uint16_t ulen = (uint16_t)(8 + n);
	uint8_t *udp = f + u, *ip = f + l3;
	put16(udp, 40000);
	put16(udp + 2, 53);
	put16(udp + 4, ulen);
	put16(udp + 6, 0);
	uint32_t ph;
	if (s->v6) {
		memset(ip, 0, 40);
		ip[0] = 0x60;
		put16(ip + 4, ulen);
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, CLI6, 16);
		memcpy(ip + 24, SRV6, 16);
		ph = sum_be(ip + 8, 32, 0) + ulen + 17;
	} else {
		memset(ip, 0, 20);
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(20 + ulen));
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, CLI4, 4);
		memcpy(ip + 16, SRV4, 4);
		put16(ip + 10, (uint16_t)~fold(sum_be(ip, 20, 0)));
		ph = sum_be(ip + 12, 8, 0) + ulen + 17;
	}
	uint16_t c = (uint16_t)~fold(ph + sum_be(udp, ulen, 0));
	put16(udp + 6, c == 0 ? 0xFFFF : c);
	*l4 = u;
	return (uint16_t)(d + n);
}

/* ---- the table ---------------------------------------------------------------------- */

enum damage {
	NONE_,
	FLIP_QNAME,             /* one bit of the question name: the checksum no longer matches */
	CSUM_ZERO,              /* checksum field 0 ("none" over IPv4, forbidden over IPv6) */
	DST_BROADCAST,          /* destination MAC ff:ff:ff:ff:ff:ff */
	DST_MULTICAST,          /* destination MAC 33:33:00:00:00:01 (IPv6 all-nodes) */
	DST_OTHER_MAC,          /* another host's unicast MAC (promiscuous port) */
	DST_OTHER_IP,           /* 192.0.2.54 / 2001:db8:53::54: not a service address */
};

#define ANSWERED (-1)

struct row {
	const char *what;
	struct fspec f;
	enum damage damage;
	uint64_t ol_flags;      /* what the port said about the L4 checksum */
	int want;               /* ANSWERED, or the p53_pkt_drop reason */
};

#define UNKNOWN RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN
#define GOOD    RTE_MBUF_F_RX_L4_CKSUM_GOOD
#define BAD     RTE_MBUF_F_RX_L4_CKSUM_BAD
#define L4NONE  RTE_MBUF_F_RX_L4_CKSUM_NONE
#define WWW4    { 0, 1, "www.diff.test" }
#define WWW6    { 1, 28, "www.diff.test" }

static const struct row rows[] = {
	{ "IPv4 query, checksum right, no verdict from the port: verified in software, answered",
	  WWW4, NONE_, UNKNOWN, ANSWERED },
	{ "IPv6 query, checksum right, no verdict: answered", WWW6, NONE_, UNKNOWN, ANSWERED },
	{ "IPv4 query with a flipped bit in the name, no verdict: dropped udp_csum",
	  WWW4, FLIP_QNAME, UNKNOWN, P53_PKT_DROP_UDP_CSUM },
	{ "IPv6 query with a flipped bit in the name, no verdict: dropped udp_csum",
	  WWW6, FLIP_QNAME, UNKNOWN, P53_PKT_DROP_UDP_CSUM },
	{ "port says BAD: dropped udp_csum without looking", WWW4, NONE_, BAD, P53_PKT_DROP_UDP_CSUM },
	{ "port says GOOD: trusted, answered (no software check)", WWW4, FLIP_QNAME, GOOD, ANSWERED },
	{ "port says NONE (data verified, field not filled in, as virtio): answered",
	  WWW6, FLIP_QNAME, L4NONE, ANSWERED },
	{ "IPv4 checksum 0 means none was computed (RFC 768): answered", WWW4, CSUM_ZERO, UNKNOWN,
	  ANSWERED },
	{ "IPv6 checksum 0 is forbidden (RFC 8200 §8.1): dropped udp_csum", WWW6, CSUM_ZERO, UNKNOWN,
	  P53_PKT_DROP_UDP_CSUM },
	{ "IPv6 checksum 0 even when the port says GOOD: dropped udp_csum", WWW6, CSUM_ZERO, GOOD,
	  P53_PKT_DROP_UDP_CSUM },
	{ "query to the broadcast MAC: dropped dst_mac, never answered from ff:ff:ff:ff:ff:ff",
	  WWW4, DST_BROADCAST, UNKNOWN, P53_PKT_DROP_DST_MAC },
	{ "query to a multicast MAC: dropped dst_mac", WWW6, DST_MULTICAST, UNKNOWN,
	  P53_PKT_DROP_DST_MAC },
	{ "query to another host's MAC: dropped dst_mac", WWW4, DST_OTHER_MAC, GOOD,
	  P53_PKT_DROP_DST_MAC },
	{ "IPv4 query to an address that is not a service address: dropped dst_addr", WWW4,
	  DST_OTHER_IP, GOOD, P53_PKT_DROP_DST_ADDR },
	{ "IPv6 query to an address that is not a service address: dropped dst_addr", WWW6,
	  DST_OTHER_IP, GOOD, P53_PKT_DROP_DST_ADDR },
};

static void run_row(const struct row *r)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp), *out[1];
	size_t l4;

	assert_non_null(m);
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t len = build(f, &r->f, &l4);
	if (r->damage == FLIP_QNAME)
		f[l4 + 8 + 12 + 1] ^= 0x20;     /* "www" -> "Www": a case flip, a valid name */
	else if (r->damage == CSUM_ZERO)
		put16(f + l4 + 6, 0);
	else if (r->damage == DST_BROADCAST)
		memset(f, 0xff, 6);
	else if (r->damage == DST_MULTICAST)
		memcpy(f, (const uint8_t[6]){ 0x33, 0x33, 0, 0, 0, 1 }, 6);
	else if (r->damage == DST_OTHER_MAC)
		f[5] ^= 0x01;
	else if (r->damage == DST_OTHER_IP)
		f[r->f.v6 ? 14 + 39 : 14 + 19] = r->f.v6 ? 0x54 : 54; /* ...53 -> ...54 */
	m->data_len = len;
	m->pkt_len = len;
	m->ol_flags = r->ol_flags;

	struct p53_worker_stats before = w.stats;
	unsigned int in_use = rte_mempool_in_use_count(mp);
	uint16_t n = p53_worker_burst(&w, &m, 1, out);
	if (r->want == ANSWERED) {
		if (n != 1)
			fail_msg("\"%s\": not answered", r->what);
		assert_int_equal(w.stats.answered, before.answered + 1);
		const uint8_t *rf = rte_pktmbuf_mtod(out[0], const uint8_t *);
		assert_memory_equal(rf, CLI_MAC, 6);
		uint16_t flags = get16(rf + l4 + 8 + 2);
		assert_true(flags & 0x8000);            /* QR */
		assert_int_equal(flags & 0xf, 0);       /* NOERROR: www.diff.test has A and AAAA */
		rte_pktmbuf_free(out[0]);
	} else {
		if (n != 0)
			fail_msg("\"%s\": answered, want drop %s", r->what, p53_pkt_drop_names[r->want]);
		if (w.stats.drop[r->want] != before.drop[r->want] + 1)
			fail_msg("\"%s\": drop counter %s not counted", r->what, p53_pkt_drop_names[r->want]);
		assert_int_equal(w.stats.answered, before.answered);
		assert_int_equal(rte_mempool_in_use_count(mp), in_use - 1); /* freed, not leaked */
	}
}

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("case: %s\n", rows[i].what);
		run_row(&rows[i]);
	}
	assert_int_equal(rte_mempool_in_use_count(mp), 0);
}

/* The same cases on the large-image path (burst()'s parse, prefetch and answer passes:
 * prefetch_chain follows each name's slot as the lookup does), which the worker takes by the
 * replica's image_len; the image is the same, so the answers and drops must be too. */
static void test_table_large(void **state)
{
	size_t len = rep.image_len;

	rep.image_len = P53_PREFETCH_MIN_IMAGE + 1;
	test_table(state);
	rep.image_len = len;
}

/* What the general checks, parser and responder (pkt.c, dnsmsg.c, answer.c) make of frame
 * `f` (a copy): the reply frame's length, 0 for none. */
static size_t general(uint8_t *f, uint16_t len)
{
	struct p53_pkt pkt;
	struct p53_query q;
	struct p53_answer_stats st;

	memset(&st, 0, sizeof(st));
	if (p53_pkt_parse(f, len, &pkt) != P53_PKT_OK || p53_pkt_for_us(f, &pkt, SRV_MAC, &rep.addrs) != P53_PKT_OK ||
	    !p53_pkt_udp_csum_ok(f, &pkt))
		return 0;
	enum p53_msg_status ms = p53_msg_parse(f + pkt.dns_off, pkt.dns_len, &q);
	q.src = pkt.src_addr;
	q.src_v6 = pkt.ipv6;
	uint16_t cap = (uint16_t)(RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM - pkt.dns_off);
	uint16_t rlen = p53_answer_parsed(rep.image, &rep.conf, f + pkt.dns_off, cap, &st, &q, ms);
	return rlen == 0 ? 0 : p53_pkt_reply(f, &pkt, rlen, 0);
}

/* Queries of each kind the fast answer gives or declines, both families, without and with
 * EDNS and DO=1, one damaged: one burst. */
static const struct fspec kinds[] = {
	{ 0, 1, "www.diff.test", 0 },           /* an A RRset */
	{ 1, 28, "www.diff.test", 1 },          /* AAAA, IPv6, EDNS */
	{ 0, 1, "MiXeD.diff.test", 2 },         /* the question's case echoed, DO=1 */
	{ 0, 16, "www.diff.test", 1 },          /* NODATA */
	{ 1, 1, "nope.diff.test", 1 },          /* name error */
	{ 0, 1, "nope.diff.test", 2 },          /* name error, DO=1 (unsigned zone) */
	{ 0, 1, "host.sub.diff.test", 1 },      /* referral, glue */
	{ 1, 28, "sub.diff.test", 0 },          /* referral at the cut */
	{ 0, 1, "chain1.diff.test", 1 },        /* CNAME chain: declined, the general responder */
	{ 0, 1, "x.wild.diff.test", 0 },        /* wildcard */
	{ 0, 15, "diff.test", 1 },              /* MX with additional records: general */
	{ 1, 1, "host.dname.diff.test", 1 },    /* DNAME: general */
	{ 0, 1, "big.diff.test", 0 },           /* 60 A records: truncated without EDNS */
	{ 0, 1, "other.example", 1 },           /* no zone: REFUSED */
	{ 1, 1, "x.ent.diff.test", 2 },
	{ 0, 1, "www.diff.test", 1 },           /* sent with a bad checksum: dropped */
};

/*
 * The large-image path (burst()'s passes: p53_fast_read(), the prefetch passes, then
 * p53_fast_write() or, declined, the general responder) gives what the general checks,
 * parser and responder give, byte for byte, for each frame of one burst mixing answers,
 * declines and a drop; and the small image's one pass (p53_fast_burst()) the same replies
 * and counters.
 */
static void test_passes_same(void **state)
{
	enum { N = sizeof(kinds) / sizeof(kinds[0]) };
	static uint8_t want[N][2048], large[N][2048];
	size_t want_len[N], large_len[N], l4;
	struct rte_mbuf *m[N], *out[N];
	struct p53_answer_stats ans[2];
	size_t len = rep.image_len;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		rep.image_len = pass == 0 ? P53_PREFETCH_MIN_IMAGE + 1 : len;  /* large first */
		for (size_t i = 0; i < N; i++) {
			m[i] = rte_pktmbuf_alloc(mp);
			assert_non_null(m[i]);
			uint8_t *f = rte_pktmbuf_mtod(m[i], uint8_t *);
			uint16_t fl = build(f, &kinds[i], &l4);
			if (i == N - 1)
				f[l4 + 8 + 12 + 1] ^= 0x20;     /* the checksum no longer matches */
			m[i]->data_len = fl;
			m[i]->pkt_len = fl;
			m[i]->ol_flags = UNKNOWN;
			if (pass == 0) {
				uint8_t g[2048];
				memcpy(g, f, fl);
				want_len[i] = general(g, fl);
				memcpy(want[i], g, want_len[i]);
			}
		}
		struct p53_answer_stats before = w.stats.ans;
		uint64_t answered = w.stats.answered;
		uint16_t n = p53_worker_burst(&w, m, N, out);
		assert_int_equal(n, N - 1);             /* all but the damaged frame */
		assert_int_equal(w.stats.answered, answered + N - 1);
		for (size_t i = 0; i < n; i++) {
			assert_ptr_equal(out[i], m[i]);  /* in order */
			const uint8_t *rf = rte_pktmbuf_mtod(out[i], const uint8_t *);
			size_t rl = rte_pktmbuf_data_len(out[i]);
			if (rl != want_len[i] || memcmp(rf, want[i], rl) != 0)
				fail_msg("%s image, %s type %u (EDNS %d, IPv%d): %zu bytes, the general path %zu, or other bytes",
					 pass ? "small" : "large", kinds[i].qname, kinds[i].qtype, kinds[i].edns,
					 kinds[i].v6 ? 6 : 4, rl, want_len[i]);
			if (pass == 0) {
				memcpy(large[i], rf, rl);
				large_len[i] = rl;
			} else {
				assert_int_equal(rl, large_len[i]);
				assert_memory_equal(rf, large[i], rl);
			}
			rte_pktmbuf_free(out[i]);
		}
		/* the counters each kind of answer moved, the same on both paths */
		struct p53_answer_stats *a = &ans[pass];
		*a = w.stats.ans;
		a->queries -= before.queries;
		for (int k = 0; k < P53_MSG__MAX; k++)
			a->msg[k] -= before.msg[k];
		for (int k = 0; k < P53_ANS__MAX; k++)
			a->kind[k] -= before.kind[k];
		for (int k = 0; k < 17; k++)
			a->rcode[k] -= before.rcode[k];
		assert_int_equal(a->queries, N - 1);
		assert_int_equal(rte_mempool_in_use_count(mp), 0);
	}
	rep.image_len = len;
	assert_int_equal(ans[0].queries, ans[1].queries);
	assert_memory_equal(ans[0].msg, ans[1].msg, sizeof(ans[0].msg));
	assert_memory_equal(ans[0].kind, ans[1].kind, sizeof(ans[0].kind));
	assert_memory_equal(ans[0].rcode, ans[1].rcode, sizeof(ans[0].rcode));
}

/* ---- set-up ------------------------------------------------------------------------- */

static int setup(void **state)
{
	char cpu[16], err[512], f1[512];
	cpu_set_t set;
	size_t len;
	int first = 0;

	(void)state;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		while (first < CPU_SETSIZE - 1 && !CPU_ISSET(first, &set))
			first++;
	snprintf(cpu, sizeof(cpu), "%d", first);
	char *argv[] = {"test_worker", "-l", cpu, "--no-huge", "-m", "64", "--no-shconf",
			"--file-prefix=p53-test-worker", "--no-telemetry", "--no-pci",
			"--log-level=*:warning", NULL};
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
		return -1;
	mp = rte_pktmbuf_pool_create("t_worker", 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (mp == NULL)
		return -1;
	snprintf(f1, sizeof(f1), "%s/tests/differential/zones/diff.test.zone", P53_SRCDIR);
	struct p53_zone_src z = {.name = "diff.test.", .file = f1};
	img = p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL);
	if (img == NULL) {
		fprintf(stderr, "zone: %s\n", err);
		return -1;
	}
	rep.image = img;
	rep.image_len = len;
	rep.conf.edns_max_payload = 1232;
	memcpy(&rep.addrs.v4[rep.addrs.n4++], SRV4, 4);
	memcpy(rep.addrs.v6[rep.addrs.n6++], SRV6, 16);
	memcpy(w.mac, SRV_MAC, 6);
	w.replica = &rep;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rte_mempool_free(mp);
	free(img);
	rte_eal_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_large),
		cmocka_unit_test(test_passes_same),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
