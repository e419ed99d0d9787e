/*
 * The fast path (dataplane/fastpath.c) against the general responder (answer.c): for every
 * query the fast path answers, the response must be byte for byte the general one, with the
 * same length and the same counters; what it declines it must leave for the general path.
 *
 * Queries: the replay benchmark's shapes (scripts/bench/replay.c: an owner and its types,
 * names below the apex that do not exist, names below a delegation, wildcards, with and
 * without EDNS, DO=0 and 1, mixed case) over every name of the differential test's zones,
 * the replay's small zone and the signed unit-test zones; then every file of the fuzz
 * corpora (tests/fuzz/fuzz_answer.in, fuzz_dnsmsg.in) and deterministic mutations of them.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include "control/steer/steer_build.h"
#include "control/steer/steer_conf.h"
#include "control/zone/image_build.h"
#include "dataplane/answer.h"
#include "dataplane/csum.h"
#include "dataplane/fastpath.h"
#include "dataplane/image.h"
#include "dataplane/pkt.h"
#include "dataplane/qcache.h"
#include "dataplane/steer.h"
#include "dataplane/wire.h"

static void *img;
static struct p53_answer_conf conf;
static void *ref;
static uint64_t *sums;          /* the RRsets' sums of the current image (p53_fast_sum_build) */
static unsigned long n_fast, n_general, fast_kind[P53_ANS__MAX];
static unsigned long fast_do_kind[P53_ANS__MAX]; /* DO=1 queries answered fast, by kind */

/* Answer `q` both ways with buffer size `cap`; compare when the fast path answers. */
static void frames(const uint8_t *q, uint16_t len, uint16_t sport);

static void both(const uint8_t *q, uint16_t len, uint16_t cap, const struct p53_answer_conf *cf)
{
	static uint8_t a[8192], b[8192];
	struct p53_answer_stats sa, sb;
	struct p53_query pq;

	if (cap == 1500)
		frames(q, len, (uint16_t)(1024 + len));
	memset(&sa, 0, sizeof(sa));
	memset(&sb, 0, sizeof(sb));
	memcpy(a, q, len);
	memcpy(b, q, len);
	enum p53_msg_status ms = p53_msg_parse(b, len, &pq);
	uint16_t na = p53_answer(img, cf, a, len, cap, &sa);
	uint16_t nb = ms == P53_MSG_OK ? p53_fast_answer(img, cf, b, cap, &sb, &pq) : 0;
	if (nb == 0) {
		/* Declined: nothing counted, header and question untouched; and the general path,
		 * run on what the fast path left (as the worker does), gives the same bytes. */
		struct p53_answer_stats zero;
		memset(&zero, 0, sizeof(zero));
		assert_memory_equal(&sb, &zero, sizeof(zero));
		if (ms == P53_MSG_OK)
			assert_memory_equal(b, q, pq.question_end);
		n_general++;
		if (ms == P53_MSG_OK) {
			nb = p53_answer_parsed(img, cf, b, cap, &sb, &pq, ms);
			assert_int_equal(na, nb);
			assert_memory_equal(a, b, na);
		}
		return;
	}
	n_fast++;
	for (int k = 0; k < P53_ANS__MAX && pq.edns && pq.edns_do; k++)
		fast_do_kind[k] += sb.kind[k];
	for (int k = 0; k < P53_ANS__MAX; k++)
		fast_kind[k] += sb.kind[k];
	if (na != nb || memcmp(a, b, na) != 0) {
		fprintf(stderr, "fast path differs: general %u bytes, fast %u bytes, cap %u\n", na, nb, cap);
		for (uint16_t i = 0; i < (na > nb ? na : nb); i++)
			fprintf(stderr, "%4u %02x %02x%s\n", i, i < na ? a[i] : 0, i < nb ? b[i] : 0,
				i < na && i < nb && a[i] == b[i] ? "" : "  <--");
	}
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na);
	assert_memory_equal(&sa, &sb, sizeof(sa));
}

static const uint8_t mac_us[6] = {0x02, 0, 0, 0, 0, 0x53}, mac_them[6] = {0x02, 0, 0, 0, 0, 1};
static struct p53_pkt_addrs addrs = {.n4 = 1, .n6 = 1};
static unsigned long n_frames_fast, n_frames_ecs, n_frames_fast6, n_replies6, n_replies;
static uint16_t last_csum;      /* the UDP checksum of the last fast reply one_frame() compared */
/* Fast replies whose records' sum came from a table or template (p53_fast_answer_sum()), by
 * the question's end and the response's length, each odd or even; and by kind of answer. */
static unsigned long n_tail[2][2], n_tail_kind[P53_ANS__MAX];
/* Fast replies to the steered name (steer_lname, type A) whose records' sum was known: the
 * variant's precomputed sums (steer.h), checked against the bytes below. */
static uint8_t steer_lname[P53_NAME_MAXLEN];
static uint8_t steer_lname_len;
static unsigned long n_tail_steer;
static unsigned long n_frame_calls;     /* replies p53_fast_frame() wrote, compared */
/* The frames' client: 192.0.2.1 and 2001:db8:ffff::1 unless a test sets another. */
static uint8_t src4[4] = {192, 0, 2, 1};
static uint8_t src6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, [15] = 1};
static const uint8_t dst6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x53, [15] = 0x53};

/* RFC 1071 by the test's own 16-bit loop over the pseudo-header `ph` and the datagram `u`:
 * the checksum to send, right, or wrong (`bad` 1), or zero (`bad` 2: "none"). */
static void put_csum(uint8_t *u, uint16_t ulen, const uint8_t *ph, size_t phlen, int bad)
{
	uint32_t sum = 0;

	u[6] = u[7] = 0;
	for (size_t i = 0; i < phlen; i += 2)
		sum += (uint32_t)(ph[i] << 8 | ph[i + 1]);
	sum += 17 + ulen;
	for (uint16_t i = 0; i < ulen; i += 2)
		sum += (uint32_t)(u[i] << 8 | (i + 1 < ulen ? u[i + 1] : 0));
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	uint16_t c = (uint16_t)~sum;
	if (c == 0)
		c = 0xffff;
	c = (uint16_t)(c ^ (bad == 1 ? 0x0100 : 0));
	if (c == 0)
		c = 1;  /* still wrong, and not "no checksum" (RFC 768) */
	if (bad == 2)
		c = 0;
	u[6] = (uint8_t)(c >> 8);
	u[7] = (uint8_t)c;
}

/* The query in an IPv4/UDP frame to 192.0.2.53, from src4, with a right checksum (or a
 * wrong one: `bad`). */
static uint16_t frame_of(uint8_t *f, const uint8_t *q, uint16_t len, uint16_t sport, int bad)
{
	uint8_t *ip = f + 14, *u = ip + 20;
	uint16_t ulen = (uint16_t)(8 + len);

	memcpy(f, mac_us, 6);
	memcpy(f + 6, mac_them, 6);
	f[12] = 0x08;
	f[13] = 0;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[1] = (uint8_t)(sport & 0xff);        /* DSCP and ECN: the reply's are 0 */
	ip[2] = (uint8_t)((20 + ulen) >> 8);
	ip[3] = (uint8_t)(20 + ulen);
	ip[4] = (uint8_t)(sport >> 8);          /* an ID: the reply's is 0 */
	ip[5] = (uint8_t)(sport * 7);
	ip[6] = (sport & 1) ? 0x40 : 0;         /* DF: the reply keeps it */
	ip[8] = 57;
	ip[9] = 17;
	memcpy(ip + 12, src4, 4);
	memcpy(ip + 16, "\xc0\x00\x02\x35", 4);
	u[0] = (uint8_t)(sport >> 8);
	u[1] = (uint8_t)sport;
	u[2] = 0;
	u[3] = 53;
	u[4] = (uint8_t)(ulen >> 8);
	u[5] = (uint8_t)ulen;
	memcpy(u + 8, q, len);
	put_csum(u, ulen, ip + 12, 8, bad);
	return (uint16_t)(42 + len);
}

/* The query in an IPv6/UDP frame from src6 to dst6 (traffic class and flow label set, as a
 * client may), the checksum right, wrong or zero (`bad` 0, 1, 2); `hbh`: a hop-by-hop options
 * header (PadN) between the fixed header and UDP. */
static uint16_t frame6_of(uint8_t *f, const uint8_t *q, uint16_t len, uint16_t sport, int bad,
			  int hbh)
{
	uint8_t *ip = f + 14, *u = ip + 40 + (hbh ? 8 : 0);
	uint16_t ulen = (uint16_t)(8 + len);

	memcpy(f, mac_us, 6);
	memcpy(f + 6, mac_them, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	memcpy(ip, "\x6b\x81\x23\x45", 4);      /* DSCP, ECN CE, flow label 0x12345 */
	ip[4] = (uint8_t)((ulen + (hbh ? 8 : 0)) >> 8);
	ip[5] = (uint8_t)(ulen + (hbh ? 8 : 0));
	ip[6] = hbh ? 0 : 17;
	ip[7] = 61;
	memcpy(ip + 8, src6, 16);
	memcpy(ip + 24, dst6, 16);
	if (hbh)
		memcpy(ip + 40, "\x11\x00\x01\x04\x00\x00\x00\x00", 8);
	u[0] = (uint8_t)(sport >> 8);
	u[1] = (uint8_t)sport;
	u[2] = 0;
	u[3] = 53;
	u[4] = (uint8_t)(ulen >> 8);
	u[5] = (uint8_t)ulen;
	memcpy(u + 8, q, len);
	put_csum(u, ulen, ip + 8, 32, bad);
	return (uint16_t)(u + 8 + len - f);
}

/* One frame through p53_fast_frame() into `out` (`room` bytes from its start), with the answer
 * cache `qc` (NULL: none); the counters to `st`. */
static int run_frame(struct p53_qcache *qc, const uint8_t *f, uint16_t fl, uint8_t *out,
		     struct p53_answer_stats *st, uint32_t room)
{
	struct p53_fast_ctx fx;
	struct p53_query q;
	struct p53_pkt pk;

	memcpy(out, f, fl);
	memset(st, 0, sizeof(*st));
	memset(&q, 0x5a, sizeof(q));
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, st), 0);
	if (qc != NULL)
		p53_fast_ctx_cache(&fx, qc);
	return p53_fast_frame(&fx, &q, out, fl, room, 1, &pk);
}

static unsigned long n_cache_hits, n_cache_stored, n_cache_steered;
static struct p53_qcache *cache64(void);
static int cached_same(struct p53_qcache *qc, const uint8_t *q, uint16_t len, int v6, uint8_t *out);

/* The answer cache (qcache.h) on one frame p53_fast_frame() answered as `k0` (the reply
 * `want`, the counters `s0`) without it: a miss remembered by the first pass, stored by the
 * second, answered from the cache by the third, the same outcome, bytes and counters each
 * time. */
static void cache_check(const uint8_t *f, uint16_t fl, int k0, const uint8_t *want,
			const struct p53_answer_stats *s0, uint32_t room)
{
	static uint8_t mem[sizeof(struct p53_qcache) +
			   4 * (sizeof(struct p53_qcache_entry) + sizeof(struct p53_qcache_pick))]
		__attribute__((aligned(64)));
	static uint8_t out[4096];
	struct p53_qcache *qc = (struct p53_qcache *)mem;
	struct p53_answer_stats st;

	assert_int_equal(p53_qcache_init(qc, 4), 0);
	for (int pass = 0; pass < 3; pass++) {
		int k = run_frame(qc, f, fl, out, &st, room);
		assert_int_equal(k, k0);
		if (k >= P53_FAST_ANSWERED) {
			assert_memory_equal(out, want, (size_t)k);
			assert_memory_equal(&st, s0, sizeof(st));
		}
	}
	assert_true(qc->stores <= 1);
	assert_int_equal(qc->hits, qc->stores);  /* what was stored answered the third pass */
	assert_true(k0 >= P53_FAST_ANSWERED || qc->stores == 0);
	n_cache_hits += qc->hits;
	n_cache_stored += qc->stores;
	for (uint32_t i = 0; i <= qc->mask; i++)
		n_cache_steered += (qc->e[i].bits & P53_QC_STEERED) != 0;
}

static unsigned long n_read_write, n_read_declined, n_found_hit, n_found_other;

/* What the prefetch passes (worker.c prefetch_chain()) find for q: the node of the first slot
 * in probe order with q's hash, its RRset of q's type. `other`: instead a node whose name is
 * not q's, with its RRset of q's type (a hash that matched another name), or 0 when the image
 * has none. */
static int found_of(const struct p53_query *q, int other, struct p53_fast_found *fd)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	const uint64_t *slots = p53_image_slots(img);

	fd->node = NULL;
	if (!other) {
		for (uint32_t j = q->hash & h->hash_mask; slots[j] != 0; j = (j + 1) & h->hash_mask)
			if ((uint32_t)(slots[j] >> 32) == q->hash) {
				fd->node = p53_image_slot_node(img, slots[j]);
				break;
			}
	} else {
		for (uint32_t i = 0; i < h->n_nodes && fd->node == NULL; i++) {
			const struct p53_image_node *nd = p53_image_node(img, i);
			if (nd->name_len != q->qname_len ||
			    memcmp(p53_image_node_name(img, nd), q->lname, q->qname_len) != 0)
				fd->node = nd;
		}
	}
	if (fd->node == NULL)
		return 0;
	fd->rs = p53_image_node_find(img, fd->node, q->qtype, &fd->rsi);
	return 1;
}

/* p53_fast_read() and p53_fast_write() on frame `f`, against p53_fast_frame()'s outcome `k`
 * (`fast`: p53_fast_parse()'s), its reply `want`, counters `s0` and, declined, packet fields
 * `p0`; declined, the general responder on what they left gives the general bytes too. Three
 * times: the write told nothing found, what the prefetch passes find, and another name's node
 * (the write must compare the name and look it up). */
static void read_write_found(const uint8_t *f, uint16_t fl, int fast, int k, const uint8_t *want,
			     const struct p53_answer_stats *s0, const struct p53_pkt *p0,
			     uint32_t room, int how)
{
	static uint8_t e[2048], g[2048];
	struct p53_fast_ctx fx;
	struct p53_answer_stats se, sg;
	struct p53_query qe, qg;
	struct p53_pkt pe, pg;
	struct p53_fast_found fd;
	uint64_t keep;

	memcpy(e, f, fl);
	memset(&se, 0, sizeof(se));
	memset(&qe, 0x5a, sizeof(qe));
	memset(&pe, 0xa5, sizeof(pe));
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &se), 0);
	int fam = p53_fast_read(&fx, &qe, e, fl, 1, &keep);
	assert_int_equal(fam, fast);
	assert_memory_equal(e, f, fl);          /* nothing written */
	if (fam == 0)
		return;
	int has = how != 0 && found_of(&qe, how == 2, &fd);
	if (has && how == 1)
		n_found_hit++;
	if (has && how == 2)
		n_found_other++;
	int kw = p53_fast_write(&fx, &qe, e, fam, room, keep, &pe, how != 0 ? &fd : NULL);
	if (kw != k)
		fail_msg("read and write, found %s: %d, p53_fast_frame() %d",
			 how == 0 ? "NULL" : how == 1 ? "by the passes" : "another name's", kw, k);
	assert_memory_equal(&se, s0, sizeof(se));
	n_read_write++;
	if (kw >= P53_FAST_ANSWERED) {
		assert_memory_equal(e, want, (size_t)kw);
		return;
	}
	assert_memory_equal(&pe, p0, sizeof(pe));
	assert_ptr_equal(qe.src, pe.src_addr);
	p53_fast_complete(&qe);
	uint16_t re = p53_answer_parsed(img, &conf, e + pe.dns_off, 1500, &se, &qe, P53_MSG_OK);
	memcpy(g, f, fl);
	assert_int_equal(p53_pkt_parse(g, fl, &pg), P53_PKT_OK);
	assert_int_equal(p53_msg_parse(g + pg.dns_off, pg.dns_len, &qg), P53_MSG_OK);
	qg.src = pg.src_addr;
	qg.src_v6 = pg.ipv6;
	memset(&sg, 0, sizeof(sg));
	uint16_t rg = p53_answer_parsed(img, &conf, g + pg.dns_off, 1500, &sg, &qg, P53_MSG_OK);
	assert_int_equal(re, rg);
	assert_memory_equal(e + pe.dns_off, g + pg.dns_off, rg);
	n_read_declined++;
}

static void read_write(const uint8_t *f, uint16_t fl, int fast, int k, const uint8_t *want,
		       const struct p53_answer_stats *s0, const struct p53_pkt *p0, uint32_t room)
{
	for (int how = 0; how < 3; how++)
		read_write_found(f, fl, fast, k, want, s0, p0, room, how);
}

/* One frame both ways: the general checks, parser, responder and p53_pkt_reply, and
 * p53_fast_parse, p53_fast_answer and p53_fast_reply; the same frame out, byte for byte.
 * `no_fast`: the general checks refuse it (a bad or zero checksum, an extension header, a
 * truncated frame), so the fast parse must. */
static void one_frame(const uint8_t *f, uint16_t fl, int no_fast)
{
	static uint8_t a[2048], b[2048];
	struct p53_pkt pa, pb;
	struct p53_query qa, qb;
	struct p53_answer_stats sa, sb;
	uint64_t keep;

	memcpy(a, f, fl);
	memcpy(b, f, fl);
	int hdr = p53_pkt_parse(a, fl, &pa) == P53_PKT_OK &&
		  p53_pkt_for_us(a, &pa, mac_us, &addrs) == P53_PKT_OK;
	int ok = hdr && p53_pkt_udp_csum_ok(a, &pa);
	/* The port verified the checksum (verify 0): still no frame the general checks drop. */
	if (p53_fast_parse(b, fl, 0, mac_us, &addrs, &pb, &qb, &keep))
		assert_true(hdr);
	/* The fields the fast parse leaves for p53_fast_complete() hold garbage: the fast
	 * answer must not read them. */
	memset(&qb, 0xa5, sizeof(qb));
	int fast = p53_fast_parse(b, fl, 1, mac_us, &addrs, &pb, &qb, &keep);
	assert_memory_equal(f, b, fl); /* nothing written */
	/* The same frame through p53_fast_frame() (worker.c's one call for a small image): read
	 * when p53_fast_parse() reads it, and answered below as the three steps answer it. */
	static uint8_t df[2048];
	struct p53_pkt pd;
	struct p53_query qd;
	struct p53_answer_stats sd;
	uint16_t dl = 0;
	memcpy(df, f, fl);
	memset(&sd, 0, sizeof(sd));
	memset(&qd, 0x5a, sizeof(qd));
	struct p53_fast_ctx fx;
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &sd), 0);
	int k = p53_fast_frame(&fx, &qd, df, fl, (uint32_t)(fast ? pb.dns_off : 62) + 1500, 1, &pd);
	if (k >= P53_FAST_ANSWERED)
		dl = (uint16_t)k;
	assert_int_equal(k != P53_FAST_NOT_READ, fast != 0);
	/* And in two calls, read then answered (worker.c's passes for a large image): the same
	 * outcome, reply, counters and, declined, packet fields as p53_fast_frame(). */
	read_write(f, fl, fast, k, df, &sd, &pd, (uint32_t)(fast ? pb.dns_off : 62) + 1500);
	if (fast)
		cache_check(f, fl, k, df, &sd, (uint32_t)pb.dns_off + 1500);
	if (fast)       /* the family, whose offsets p53_fast_frame() takes as constants */
		assert_int_equal(fast, pb.ipv6 ? 2 : 1);
	if (!fast) {
		assert_memory_equal(f, df, fl);
		return;
	}
	struct p53_query qc = qb;      /* completed for the comparison below */
	p53_fast_complete(&qc);
	/* What the fast parse accepts the general one accepts, and reads the same. */
	assert_true(ok);
	assert_false(no_fast);
	assert_int_equal(p53_msg_parse(a + pa.dns_off, pa.dns_len, &qa), P53_MSG_OK);
	assert_memory_equal(&pa, &pb, sizeof(pa));
	assert_ptr_equal(qb.src, pb.src_addr);
	assert_int_equal(qb.src_v6, pb.ipv6);
	assert_int_equal(qa.id, qc.id);
	assert_int_equal(qa.flags, qc.flags);
	assert_int_equal(qa.qdcount, qc.qdcount);
	assert_int_equal(qa.ancount, qc.ancount);
	assert_int_equal(qa.nscount, qc.nscount);
	assert_int_equal(qa.arcount, qc.arcount);
	assert_int_equal(qa.qtype, qc.qtype);
	assert_int_equal(qa.qclass, qc.qclass);
	assert_int_equal(qa.question_end, qc.question_end);
	assert_int_equal(qa.trailing, qc.trailing);
	assert_int_equal(qa.hash, qc.hash);
	assert_int_equal(qa.qname_len, qc.qname_len);
	assert_int_equal(qa.qname_labels, qc.qname_labels);
	assert_memory_equal(qa.label_off, qc.label_off, qa.qname_labels + 1u);
	assert_memory_equal(qa.lname, qc.lname, qa.qname_len);
	assert_int_equal(qa.edns, qc.edns);
	if (qa.edns) {
		assert_int_equal(qa.edns_payload, qc.edns_payload);
		assert_int_equal(qa.edns_version, qc.edns_version);
		assert_int_equal(qa.edns_do, qc.edns_do);
	}
	assert_int_equal(qa.nsid | qa.cookie | qa.keepalive | qa.tsig, 0);
	assert_int_equal(qc.nsid | qc.cookie | qc.keepalive | qc.tsig, 0);
	assert_int_equal(qa.ecs, qc.ecs);
	if (qa.ecs) {
		assert_int_equal(qa.ecs_off, qc.ecs_off);
		assert_int_equal(qa.ecs_len, qc.ecs_len);
		n_frames_ecs++;
	}
	n_frames_fast++;
	n_frames_fast6 += pb.ipv6;
	qa.src = pa.src_addr;   /* worker.c burst() */
	qa.src_v6 = pa.ipv6;
	memset(&sa, 0, sizeof(sa));
	memset(&sb, 0, sizeof(sb));
	uint64_t tail;
	uint16_t rb = p53_fast_answer_sum(img, &conf, b + pb.dns_off, 1500, &sb, &qb, &tail);
	uint16_t ra = p53_answer_parsed(img, &conf, a + pa.dns_off, 1500, &sa, &qa, P53_MSG_OK);
	if (rb == 0) {
		/* Declined: as worker.c, the query completed and the general responder on what
		 * the fast answer left gives the general bytes. */
		struct p53_answer_stats zero;
		memset(&zero, 0, sizeof(zero));
		assert_memory_equal(&sb, &zero, sizeof(zero));
		assert_int_equal(k, P53_FAST_DECLINED);
		assert_memory_equal(&sd, &zero, sizeof(zero));
		assert_memory_equal(&pd, &pb, sizeof(pd));
		p53_fast_complete(&qd);
		uint16_t rd = p53_answer_parsed(img, &conf, df + pd.dns_off, 1500, &sd, &qd, P53_MSG_OK);
		assert_int_equal(ra, rd);
		assert_memory_equal(a + pa.dns_off, df + pd.dns_off, ra);
		p53_fast_complete(&qb);
		rb = p53_answer_parsed(img, &conf, b + pb.dns_off, 1500, &sb, &qb, P53_MSG_OK);
		assert_int_equal(ra, rb);
		assert_memory_equal(a + pa.dns_off, b + pb.dns_off, ra);
		assert_memory_equal(&sa, &sb, sizeof(sa));
		return;
	}
	assert_memory_equal(&sa, &sb, sizeof(sa));
	size_t fa = p53_pkt_reply(a, &pa, ra, 0);
	/* The records' sum, when the answer knew it, against the bytes: and the reply from it
	 * (worker.c) and without it (summed again) the general reply's, byte for byte. */
	static uint8_t c[2048];
	memcpy(c, b, pb.dns_off + rb);
	size_t fc = p53_fast_reply(c, &pb, rb, &qb, keep);
	if (tail != P53_FAST_NO_SUM) {
		uint16_t qe = qb.question_end;
		assert_int_equal(p53_csum_fold(tail),
				 p53_csum_fold(p53_csum_add(b + pb.dns_off + qe, rb - qe, 0)));
		n_tail[qe & 1][rb & 1]++;
		if (steer_lname_len != 0 && qa.qname_len == steer_lname_len && qa.qtype == 1 &&
		    memcmp(qa.lname, steer_lname, steer_lname_len) == 0)
			n_tail_steer++;
		for (int k = 0; k < P53_ANS__MAX; k++)
			n_tail_kind[k] += sb.kind[k];
	}
	size_t fb = p53_fast_reply_sum(b, &pb, rb, &qb, keep, tail);
	assert_int_equal(fc, fb);
	assert_memory_equal(b, c, fb);
	assert_true(k >= P53_FAST_ANSWERED);
	assert_int_equal(dl, fb);
	assert_memory_equal(df, b, fb);
	assert_memory_equal(&sd, &sb, sizeof(sd));
	n_frame_calls++;
	if (fa != fb || memcmp(a, b, fa) != 0) {
		fprintf(stderr, "fast reply differs: general %zu bytes, fast %zu bytes\n", fa, fb);
		for (size_t i = 0; i < (fa > fb ? fa : fb); i++)
			fprintf(stderr, "%4zu %02x %02x%s\n", i, i < fa ? a[i] : 0, i < fb ? b[i] : 0,
				i < fa && i < fb && a[i] == b[i] ? "" : "  <--");
	}
	assert_int_equal(fa, fb);
	assert_memory_equal(a, b, fa);
	n_replies6 += pb.ipv6;
	last_csum = (uint16_t)(b[pb.l4_off + 6] << 8 | b[pb.l4_off + 7]);
	n_replies++;
}

/* The query in frames of both families, each both ways (one_frame): right, wrong and (IPv6)
 * zero checksums; over IPv6 a hop-by-hop header; truncated by a byte; with Ethernet padding. */
static void frames(const uint8_t *q, uint16_t len, uint16_t sport)
{
	static uint8_t f[2048];
	uint16_t fl;

	if (len > 1400)
		return;
	for (int bad = 0; bad < 2; bad++)
		one_frame(f, frame_of(f, q, len, sport, bad), bad);
	fl = frame_of(f, q, len, sport, 0);
	one_frame(f, (uint16_t)(fl - 1), 1);
	for (int bad = 0; bad < 3; bad++)
		one_frame(f, frame6_of(f, q, len, sport, bad, 0), bad);
	one_frame(f, frame6_of(f, q, len, sport, 0, 1), 1);
	fl = frame6_of(f, q, len, sport, 0, 0);
	one_frame(f, (uint16_t)(fl - 1), 1);
	f[fl] = f[fl + 1] = 0;
	one_frame(f, (uint16_t)(fl + 2), 0);
}

/* A query for a wire name: `edns` the payload size (0: no OPT), `dob` DO, `mix` case. */
static uint16_t query(uint8_t *buf, const uint8_t *wname, size_t wlen, uint16_t type, uint16_t edns,
		      int dob, unsigned int mix, uint16_t flags)
{
	uint16_t off = 12;

	memset(buf, 0, 12);
	buf[0] = 0x12;
	buf[1] = (uint8_t)mix;
	buf[2] = (uint8_t)(flags >> 8);
	buf[3] = (uint8_t)flags;
	buf[5] = 1;
	memcpy(buf + off, wname, wlen);
	for (size_t i = 0; i < wlen; i++)
		if (buf[off + i] >= 'a' && buf[off + i] <= 'z' && ((mix >> (i % 8)) & 1))
			buf[off + i] = (uint8_t)(buf[off + i] - 32);
	off = (uint16_t)(off + wlen);
	buf[off++] = (uint8_t)(type >> 8);
	buf[off++] = (uint8_t)type;
	buf[off++] = 0;
	buf[off++] = 1;
	if (edns != 0) {
		buf[11] = 1;
		uint8_t opt[11] = {0, 0, 41, (uint8_t)(edns >> 8), (uint8_t)edns, 0, 0,
				   (uint8_t)(dob ? 0x80 : 0), 0, 0, 0};
		memcpy(buf + off, opt, sizeof(opt));
		off += sizeof(opt);
	}
	return off;
}

static uint64_t img_gen;        /* the image generations "published" so far */

static void build(const char *const *names, const char *const *files, size_t n)
{
	struct p53_zone_src z[8];
	char paths[8][512], err[512];
	size_t len;

	memset(z, 0, sizeof(z));
	for (size_t i = 0; i < n; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/%s", P53_SRCDIR, files[i]);
		z[i].name = names[i];
		z[i].file = paths[i];
	}
	free(img);
	conf.neg = NULL; /* the templates belong to an image */
	conf.n_neg = 0;
	conf.sums = NULL;
	conf.n_sums = 0;
	free(sums);
	sums = NULL;
	conf.ref = NULL;
	free(ref);
	ref = NULL;
	img = p53_image_build(z, n, &len, err, sizeof(err), NULL, NULL);
	if (img == NULL)
		fprintf(stderr, "build failed: %s\n", err);
	assert_non_null(img);
	/* as control/publish.c stamps each image it publishes (the answer cache's key) */
	((struct p53_image_hdr *)img)->generation = ++img_gen;
	assert_int_equal(p53_image_check(img, len, NULL), 0);
}

static const uint16_t types[] = {1, 28, 16, 15, 2, 6, 5, 33, 12, 13, 257, 99, 39, 43, 46, 47, 50,
				 255, 252, 251, 41, 0};
static const uint16_t payloads[] = {0, 512, 1232, 4096, 100, 600};
static const uint16_t caps[] = {8192, 1500, 512, 60, 40};

static struct p53_fast_neg neg[16];

/* The image's negative-answer templates, as a replica has them (control/publish.c). */
static void use_neg(void)
{
	assert_true(p53_fast_neg_count(img) <= 16);
	p53_fast_neg_build(img, neg);
	conf.neg = neg;
	conf.n_neg = (uint32_t)p53_fast_neg_count(img);
}
static unsigned long n_ref_cuts; /* delegations with a template, over the images */


/* Every node of the image: its name, a name below it, a name two labels below it; with the
 * negative-answer templates a replica has (control/publish.c) and without them. */
static void every_name_once(void);

static void every_name(void)
{
	assert_true(p53_fast_neg_count(img) <= 16);
	p53_fast_neg_build(img, neg);
	conf.neg = NULL;
	conf.n_neg = 0;
	conf.sums = NULL;       /* a table belongs to one image and payload size */
	conf.n_sums = 0;
	every_name_once();
	conf.neg = neg;
	conf.n_neg = (uint32_t)p53_fast_neg_count(img);
	/* Built for this image as a publish builds them: a stale table would give wrong sums,
	 * which one_frame() would see. */
	free(sums);
	sums = malloc(p53_fast_sum_count(img) * sizeof(*sums) + 1);
	assert_non_null(sums);
	p53_fast_sum_build(img, conf.edns_max_payload, sums);
	conf.sums = sums;
	conf.n_sums = (uint32_t)p53_fast_sum_count(img);
	size_t rz = p53_fast_ref_size(img);
	if (rz > 0) {
		ref = malloc(rz);
		assert_non_null(ref);
		p53_fast_ref_build(img, ref, rz);
		conf.ref = ref;
		n_ref_cuts += p53_fast_ref_count(ref);
	}
	every_name_once();
	/* Not vacuous: the templates were used (every zone here has in-zone SOA names). */
	for (size_t i = 0; i < p53_fast_neg_count(img); i++)
		assert_true(neg[i].len > 0);
}

static void every_name_once(void)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	uint8_t buf[1024], name[300];

	for (uint32_t ni = 0; ni < h->n_nodes; ni++) {
		const struct p53_image_node *n = p53_image_node(img, ni);
		const uint8_t *nm = p53_image_node_name(img, n);
		for (int below = 0; below < 3; below++) {
			size_t l = 0;
			if (below >= 1) {
				memcpy(name, "\x05nx-q1", 6);
				l = 6;
			}
			if (below == 2) {
				memcpy(name + l, "\x03" "www", 4);
				l += 4;
			}
			if (l + n->name_len > 255)
				continue;
			memcpy(name + l, nm, n->name_len);
			l += n->name_len;
			for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
				for (size_t p = 0; p < sizeof(payloads) / sizeof(payloads[0]); p++)
					for (int dob = 0; dob < 2; dob++) {
						if (dob && payloads[p] == 0)
							continue;
						unsigned int mix = (unsigned int)(ni * 7 + t + p) & 0xff;
						uint16_t ql = query(buf, name, l, types[t], payloads[p], dob,
								    mix, (t & 1) ? 0x0110 : 0);
						for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++)
							both(buf, ql, caps[c], &conf);
					}
		}
	}
}

/* Names 0..70 one-byte labels below each delegation: the referral templates stand for the
 * writer only while the question's labels and the template's fit answer.c's compression
 * table (48 names); deeper questions take the writer, and both give the general path's bytes. */
static void deep_referrals(void)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	uint8_t buf[1024], name[300];

	for (uint32_t ni = 0; ni < h->n_nodes; ni++) {
		const struct p53_image_node *n = p53_image_node(img, ni);
		if (!(n->flags & P53_NODE_CUT))
			continue;
		for (size_t k = 0; k <= 70; k++) {
			if (2 * k + n->name_len > 255)
				break;
			for (size_t i = 0; i < k; i++)
				memcpy(name + 2 * i, (i & 1) ? "\x01" "B" : "\x01" "a", 2);
			memcpy(name + 2 * k, p53_image_node_name(img, n), n->name_len);
			for (int t = 0; t < 2; t++) {
				uint16_t ql = query(buf, name, 2 * k + n->name_len, t ? 2 : 1,
						    t ? 0 : 1232, 0, (unsigned int)k, 0);
				for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++)
					both(buf, ql, caps[c], &conf);
			}
		}
		/* L up to 250 in a few long labels: a pointer's low byte plus L carries into its
		 * high byte for the larger ones (ref_answer() then adds L per pointer, ref_put()). */
		for (size_t L = 2; L + n->name_len <= 255; L += 11) {
			size_t at = 0;
			while (at < L) {
				size_t r = L - at, ll = r - 1 > 63 ? 63 : r - 1;
				if (r - 1 - ll == 1)
					ll--;   /* no 1-byte rest: a label takes 2 at least */
				name[at] = (uint8_t)ll;
				memset(name + at + 1, 'x', ll);
				at += 1 + ll;
			}
			memcpy(name + L, p53_image_node_name(img, n), n->name_len);
			uint16_t ql = query(buf, name, L + n->name_len, 1, 1232, 0, (unsigned int)L, 0);
			for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++)
				both(buf, ql, caps[c], &conf);
		}
	}
}

static void corpus(const char *dir)
{
	char path[1024];
	static uint8_t b[4096], m[4096];
	uint64_t rng = 0x9e3779b97f4a7c15u;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/%s", P53_SRCDIR, dir);
	DIR *d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", P53_SRCDIR, dir, e->d_name);
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		size_t len = fread(b, 1, sizeof(b), f);
		fclose(f);
		both(b, (uint16_t)len, 1500, &conf);
		both(b, (uint16_t)len, 512, &conf);
		/* Mutations: a byte of the header or question changed, the OPT's flags. */
		for (int r = 0; r < 200 && len > 0; r++) {
			memcpy(m, b, len);
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			size_t at = (size_t)(rng >> 8) % (len < 64 ? len : 64);
			m[at] ^= (uint8_t)(rng >> 40 | 1);
			both(m, (uint16_t)len, 1500, &conf);
		}
	}
	closedir(d);
}

/* The differential test's zones (the referral and deep mixes), with a second, nested zone. */
static void diff_zones(void **state)
{
	(void)state;
	static const char *const names[] = {"diff.test.", "second.test."};
	static const char *const files[] = {"tests/differential/zones/diff.test.zone",
					    "tests/differential/zones/second.test.zone"};
	build(names, files, 2);
	every_name();
	/* The referral templates were built and used (every_name() ran with them last): sub and
	 * many (sib's glue is under another cut, which the fast path declines). */
	assert_non_null(conf.ref);
	printf("fast path: %u referral templates\n", p53_fast_ref_count(conf.ref));
	assert_true(p53_fast_ref_count(conf.ref) >= 2);
	unsigned long before = fast_kind[P53_ANS_REFERRAL];
	deep_referrals();
	conf.ref = NULL;
	deep_referrals();
	conf.ref = ref;
	assert_true(fast_kind[P53_ANS_REFERRAL] > before + 100);
	corpus("tests/fuzz/fuzz_answer.in");
	corpus("tests/fuzz/fuzz_dnsmsg.in");
	/* Not vacuous: each kind of answer the fast path gives was given, and some declined. */
	assert_true(fast_kind[P53_ANS_ANSWER] > 100);
	assert_true(fast_kind[P53_ANS_NXDOMAIN] > 100);
	assert_true(fast_kind[P53_ANS_NODATA] > 100);
	assert_true(fast_kind[P53_ANS_REFERRAL] > 100);
	assert_true(fast_kind[P53_ANS_REFUSED] > 100);
	assert_true(n_general > n_fast / 10);
	assert_true(n_frames_fast > 1000);
	assert_true(n_frames_fast6 > 1000 && n_replies6 > 1000);
	printf("fast path: %lu frames read by p53_fast_parse (%lu IPv6), %lu IPv6 replies\n",
	       n_frames_fast, n_frames_fast6, n_replies6);
	printf("fast path: %lu queries answered fast (%lu referrals), %lu declined\n", n_fast,
	       fast_kind[P53_ANS_REFERRAL], n_general);
	/* The answer cache: the replies stored and answered again from it were the same bytes. */
	printf("fast path, answer cache: %lu replies stored, %lu answered from the cache\n",
	       n_cache_stored, n_cache_hits);
	assert_true(n_cache_hits > 10000);
	/* The reply's checksum from the tables' and templates' sums (not summed again) was
	 * compared byte for byte for each kind of answer, after questions and records of both
	 * parities. */
	for (int i = 0; i < 4; i++)
		assert_true(n_tail[i >> 1][i & 1] > 100);
	assert_true(n_frame_calls > 1000);
	/* p53_fast_read() and p53_fast_write() gave p53_fast_frame()'s outcomes and bytes,
	 * answered and declined. */
	printf("fast path: %lu frames read and answered in two calls, %lu of them declined\n",
	       n_read_write, n_read_declined);
	assert_true(n_read_write > 1000 && n_read_declined > 100);
	/* and from the node the prefetch passes found, or another name's */
	printf("fast path: %lu written from the node found, %lu from another name's node\n",
	       n_found_hit, n_found_other);
	assert_true(n_found_hit > 1000 && n_found_other > 1000);
	assert_true(n_tail_kind[P53_ANS_ANSWER] > 100);
	assert_true(n_tail_kind[P53_ANS_NXDOMAIN] > 100);
	assert_true(n_tail_kind[P53_ANS_NODATA] > 100);
	assert_true(n_tail_kind[P53_ANS_REFERRAL] > 100);
	assert_true(n_tail_kind[P53_ANS_REFUSED] > 10);
	printf("fast path: %lu replies with the records' sum from a table (%lu %lu %lu %lu by parity)\n",
	       n_tail[0][0] + n_tail[0][1] + n_tail[1][0] + n_tail[1][1], n_tail[0][0], n_tail[0][1],
	       n_tail[1][0], n_tail[1][1]);
}

/* Every source port for one query and its answer: the reply's UDP checksum takes every value
 * (the port is one word of the sum), so the fast reply meets the sum whose complement is 0,
 * sent as 0xffff (RFC 768), and the one that is 0xffff, each byte for byte the general
 * reply's (one_frame()); IPv4 frames, with and without DF. */
static void csum_edges(void)
{
	uint8_t buf[512], f[2048];
	static const uint8_t www[] = "\x03www\x07" "example\x03" "com";
	unsigned long ffff = 0, zero = 0, before = n_replies;

	uint16_t ql = query(buf, www, sizeof(www), 1, 1232, 0, 0x35, 0);
	for (uint32_t sp = 1; sp <= 0xffff; sp++) {
		uint16_t fl = frame_of(f, buf, ql, (uint16_t)sp, 0);
		one_frame(f, fl, 0);
		assert_int_equal(n_replies, before + sp);
		ffff += last_csum == 0xffff;
		zero += last_csum == 0;
	}
	assert_int_equal(zero, 0);
	assert_true(ffff >= 1);
}

/* The replay's small zone (small-a, nxdomain, wildcard mixes). */
static void small_zone(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	memset(fast_kind, 0, sizeof(fast_kind));
	build(names, files, 1);
	every_name();
	assert_true(fast_kind[P53_ANS_ANSWER] > 10);
	assert_true(fast_kind[P53_ANS_NXDOMAIN] > 10);
	csum_edges();
	/* A replica published with another payload size: its RRset sums hold another OPT (our
	 * payload in it); the replies from them must still be the general path's. */
	static const uint16_t ours[] = {512, 4096, 1400};
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		unsigned long before = n_tail_kind[P53_ANS_ANSWER];
		conf.ref = NULL;
		free(ref);
		ref = NULL;
		conf.edns_max_payload = ours[i];
		every_name();
		assert_true(n_tail_kind[P53_ANS_ANSWER] > before + 10);
	}
	conf.edns_max_payload = 1232;
}

/* Signed zones: DO=0 answered from the same records; DO=1 answered for an RRset with its
 * RRSIGs (and after a wildcard the NSEC/NSEC3 covering the name), a name error and no data
 * (the SOA, its RRSIGs, the NSEC/NSEC3 proof), byte for byte the general path's; referrals
 * and NODATA at a wildcard with DO=1 are declined, as both() checks. */
static void signed_zones(void **state)
{
	(void)state;
	static const char *const names[] = {"nsec.test.", "nsec3.test.", "optout.test."};
	static const char *const files[] = {"tests/unit/dataplane/zones/nsec.test.zone",
					    "tests/unit/dataplane/zones/nsec3.test.zone",
					    "tests/unit/dataplane/zones/optout.test.zone"};
	memset(fast_kind, 0, sizeof(fast_kind));
	memset(fast_do_kind, 0, sizeof(fast_do_kind));
	build(names, files, 3);
	every_name();
	corpus("tests/fuzz/fuzz_answer.in");
	assert_true(fast_kind[P53_ANS_ANSWER] > 10);
	assert_true(fast_kind[P53_ANS_NXDOMAIN] > 10);
	assert_true(fast_do_kind[P53_ANS_ANSWER] > 10);
	assert_true(fast_do_kind[P53_ANS_NXDOMAIN] > 10);
	assert_true(fast_do_kind[P53_ANS_NODATA] > 10);
	printf("fast path, DO=1 in signed zones: %lu answers, %lu name errors, %lu no data\n",
	       fast_do_kind[P53_ANS_ANSWER], fast_do_kind[P53_ANS_NXDOMAIN], fast_do_kind[P53_ANS_NODATA]);
}

/* Name errors with EDNS and DO=0: the SOA and the OPT from the zone's template (one copy, our
 * payload size put in), byte for byte the general path's, the reply's checksum from the
 * template's sum (one_frame() compares it with the bytes); zones whose SOA record is of odd and
 * of even length (the payload size's bytes in the sum as loaded or swapped), our payload size
 * several ways, buffers too small for the template's fixed copy; NODATA at each apex, whose
 * OPT is written apart. */
static void neg_opt_template(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com.", "second.test.", "even.test."};
	static const char *const files[] = {"zones/example.com.zone",
					    "tests/differential/zones/second.test.zone",
					    "tests/unit/dataplane/zones/even.test.zone"};
	static const uint16_t ours[] = {512, 1232, 1400, 4096};
	static const uint16_t qcaps[] = {1500, 512, 120, 60};
	uint8_t buf[512], name[300];
	int parity[2] = {0, 0};

	build(names, files, 3);
	size_t nz = p53_fast_neg_count(img);
	assert_int_equal(nz, 3);
	p53_fast_neg_build(img, neg);
	for (size_t i = 0; i < nz; i++) {
		/* the OPT after the record: 00 | 00 29 | payload 0 | 00 | 00 | 00 00 | 00 00 */
		static const uint8_t opt[11] = {0, 0, 41};
		assert_true(neg[i].len > 0);
		assert_int_equal(neg[i].olen, neg[i].len + 11);
		assert_memory_equal(neg[i].bytes + neg[i].len, opt, sizeof(opt));
		parity[neg[i].len & 1]++;
	}
	assert_true(parity[0] > 0 && parity[1] > 0);
	conf.neg = neg;
	conf.n_neg = (uint32_t)nz;
	for (size_t u = 0; u < sizeof(ours) / sizeof(ours[0]); u++) {
		conf.edns_max_payload = ours[u];
		for (uint32_t z = 0; z < nz; z++) {
			const struct p53_image_node *apex =
				p53_image_znode(img, p53_image_zone(img, z), p53_image_zone(img, z)->apex);
			unsigned long nx = n_tail_kind[P53_ANS_NXDOMAIN];
			unsigned long nd = n_tail_kind[P53_ANS_NODATA];
			unsigned long fnx = fast_kind[P53_ANS_NXDOMAIN];
			/* a name error (one label and two below the apex) and NODATA at the apex */
			for (int w = 0; w < 3; w++) {
				size_t l = 0;
				if (w == 1) {
					memcpy(name, "\x05nx-q1", 6);
					l = 6;
				} else if (w == 2) {
					memcpy(name, "\x02zz\x05nx-q2", 9);
					l = 9;
				}
				memcpy(name + l, p53_image_node_name(img, apex), apex->name_len);
				l += apex->name_len;
				uint16_t type = w == 0 ? 13 : 1;        /* HINFO: at no apex here */
				for (unsigned int mix = 0; mix < 2; mix++)
					for (size_t c = 0; c < sizeof(qcaps) / sizeof(qcaps[0]); c++) {
						uint16_t ql = query(buf, name, l, type, 1232, 0,
								    mix ? 0x35 : 0, P53_F_RD);
						both(buf, ql, qcaps[c], &conf);
					}
			}
			/* answered fast but where 60 bytes hold no SOA (TC: general) */
			assert_true(fast_kind[P53_ANS_NXDOMAIN] >= fnx + 2 * 2 * 3);
			assert_true(n_tail_kind[P53_ANS_NXDOMAIN] > nx);
			assert_true(n_tail_kind[P53_ANS_NODATA] > nd);
		}
	}
	conf.edns_max_payload = 1232;
}

/* The question name's labels as the fast parse walks them (fast_qname()): a label of 1..63
 * bytes is read, and answered as the general path answers (one_frame()); one of 64 or more
 * (RFC 1035 §2.3.4; the general parser's FORMERR) is not read, nor a name over 255 bytes.
 * Each length first, in the middle and last of the name. */
static void label_lengths(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	static const uint8_t apex[] = "\x07" "example\x03" "com";
	static const size_t lens[] = {1, 2, 62, 63, 64, 65, 127, 128, 191, 192, 255};
	uint8_t name[600], buf[700], f[1024];

	build(names, files, 1);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (int where = 0; where < 3; where++) {
			/* first: L.example.com; in the middle: ab.L.example.com; last:
			   ab.example.com.L (under no zone: REFUSED) */
			size_t l = 0, L = lens[i];
			if (where >= 1) {
				memcpy(name, "\x02" "ab", 3);
				l = 3;
			}
			if (where == 2) {
				memcpy(name + l, apex, sizeof(apex) - 1);
				l += sizeof(apex) - 1;
			}
			name[l++] = (uint8_t)L;
			memset(name + l, 'x', L);
			l += L;
			if (where < 2) {
				memcpy(name + l, apex, sizeof(apex) - 1);
				l += sizeof(apex) - 1;
			}
			name[l++] = 0;
			uint16_t ql = query(buf, name, l, 1, 1232, 0, (unsigned int)i, 0);
			uint16_t fl = frame_of(f, buf, ql, 5353, 0);
			unsigned long before = n_frames_fast;
			one_frame(f, fl, L > 63);
			assert_int_equal(n_frames_fast, before + (L <= 63 && l <= 255));
		}
	/* 255 bytes read, 256 not: three 63-byte labels and one of 61 or 62 */
	for (size_t last = 61; last <= 62; last++) {
		size_t l = 0;
		for (int k = 0; k < 3; k++) {
			name[l++] = 63;
			memset(name + l, 'a' + k, 63);
			l += 63;
		}
		name[l++] = (uint8_t)last;
		memset(name + l, 'd', last);
		l += last;
		name[l++] = 0;
		uint16_t ql = query(buf, name, l, 1, 0, 0, 0x5a, 0);
		uint16_t fl = frame_of(f, buf, ql, 5353, 0);
		unsigned long before = n_frames_fast;
		one_frame(f, fl, l > 255);
		assert_int_equal(n_frames_fast, before + (l <= 255));
	}
}

/* A query the fast path must leave alone, one row per rule it would break with a message. */
static void declines(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	build(names, files, 1);
	uint8_t buf[512], out[1500];
	struct p53_query q;
	struct p53_answer_stats st;
	static struct p53_answer_conf tcp;
	tcp = conf;
	tcp.tcp_limit = 65535;
	const struct {
		const char *why;
		uint16_t type, edns;
		int dob;
		const struct p53_answer_conf *cf;
	} rows[] = {
		{"ANY has its own rule (RFC 8482)", 255, 1232, 0, &conf},
		{"DS is answered from the parent side", 43, 1232, 0, &conf},
		{"RRSIG questions are answered by put_sigs", 46, 1232, 0, &conf},
		{"TCP has its own size limit and keepalive", 1, 1232, 0, &tcp},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint16_t l = query(buf, (const uint8_t *)"\x03www\x07" "example\x03" "com", 17, rows[i].type,
				   rows[i].edns, rows[i].dob, 0, 0);
		memcpy(out, buf, l);
		memset(&st, 0, sizeof(st));
		assert_int_equal(p53_msg_parse(out, l, &q), P53_MSG_OK);
		if (p53_fast_answer(img, rows[i].cf, out, sizeof(out), &st, &q) != 0)
			fail_msg("fast path answered: %s", rows[i].why);
	}
}

/* ---- steered answers and ECS ------------------------------------------------------------ */

static void *steer_t;           /* the published table; conf.steer points here */
static uint64_t steer_gen;      /* the table generations "published" so far (steer_pub.c) */
static unsigned long scopes[129];       /* fast answers by the SCOPE echoed */
static unsigned long n_steer_fast;

/* A query with an OPT holding one ECS option: FAMILY, SOURCE, SCOPE, then `alen` bytes of
 * ADDRESS from `addr` (the test makes bad ones on purpose). */
static uint16_t ecs_query(uint8_t *buf, const uint8_t *wname, size_t wlen, uint16_t type, int dob,
			  uint16_t family, uint8_t source, uint8_t scope, const uint8_t *addr,
			  size_t alen)
{
	uint16_t off = query(buf, wname, wlen, type, 1232, dob, 0x35, 0);
	uint16_t olen = (uint16_t)(4 + alen);

	buf[off - 2] = (uint8_t)((4 + olen) >> 8);      /* the OPT's RDLENGTH */
	buf[off - 1] = (uint8_t)(4 + olen);
	uint8_t h[8] = {0, 8, (uint8_t)(olen >> 8), (uint8_t)olen, (uint8_t)(family >> 8), (uint8_t)family,
			source, scope};
	memcpy(buf + off, h, sizeof(h));
	memcpy(buf + off + 8, addr, alen);
	return (uint16_t)(off + 8 + alen);
}

/* The offset just past the (possibly compressed) name at off in m. */
static uint16_t skip_owner(const uint8_t *m, uint16_t len, uint16_t off)
{
	while (off < len && m[off] != 0 && (m[off] & 0xc0) == 0)
		off = (uint16_t)(off + 1 + m[off]);
	assert_true(off < len);
	return (uint16_t)(off + ((m[off] & 0xc0) == 0xc0 ? 2 : 1));
}

/* The offset of the ECS option (its OPTION-CODE) in message m (the OPT's options walked: an
 * EDE may follow the ECS, as on REFUSED), or 0 when there is none. */
static uint16_t ecs_at(const uint8_t *m, uint16_t len)
{
	uint16_t off = 12;
	unsigned int rrs = (unsigned int)p53_get16(m + 6) + p53_get16(m + 8) + p53_get16(m + 10);

	for (unsigned int i = 0; i < p53_get16(m + 4); i++)
		off = (uint16_t)(skip_owner(m, len, off) + 4);
	for (unsigned int i = 0; i < rrs; i++) {
		off = skip_owner(m, len, off);
		assert_true(off + 10 <= len);
		uint16_t type = p53_get16(m + off), rdlen = p53_get16(m + off + 8);
		off = (uint16_t)(off + 10);
		assert_true(off + rdlen <= len);
		for (uint16_t o = off; type == 41 && o + 4 <= off + rdlen;
		     o = (uint16_t)(o + 4 + p53_get16(m + o + 2)))
			if (p53_get16(m + o) == P53_EDNS_ECS)
				return o;
		off = (uint16_t)(off + rdlen);
	}
	return 0;
}

/* The SCOPE PREFIX-LENGTH of the ECS option echoed in response m, or -1 when there is none. */
static int echoed_scope(const uint8_t *m, uint16_t len)
{
	uint16_t o = ecs_at(m, len);

	return o != 0 ? m[o + 4 + 3] : -1;
}

/* Answer `q` from client `src` (4 or 16 bytes) both ways, as the worker does (q->src set
 * after the parse); compare. Returns the fast answer's SCOPE, or -1 (declined or no ECS). */
static int steer_both(const uint8_t *q, uint16_t len, const uint8_t *src, int v6)
{
	static uint8_t a[1500], b[1500];
	struct p53_answer_stats sa, sb;
	struct p53_query qa, qb;

	memset(&sa, 0, sizeof(sa));
	memset(&sb, 0, sizeof(sb));
	memcpy(a, q, len);
	memcpy(b, q, len);
	enum p53_msg_status ms = p53_msg_parse(a, len, &qa);
	assert_int_equal(p53_msg_parse(b, len, &qb), ms);
	qa.src = qb.src = src;
	qa.src_v6 = qb.src_v6 = (uint8_t)v6;
	uint16_t na = p53_answer_parsed(img, &conf, a, 1232, &sa, &qa, ms);
	uint16_t nb = ms == P53_MSG_OK ? p53_fast_answer(img, &conf, b, 1232, &sb, &qb) : 0;
	if (nb == 0) {
		n_general++;
		nb = p53_answer_parsed(img, &conf, b, 1232, &sb, &qb, ms); /* what the worker does */
	} else {
		n_steer_fast++;
	}
	if (na != nb || memcmp(a, b, na) != 0) {
		fprintf(stderr, "fast path differs: general %u bytes, fast %u bytes\n", na, nb);
		for (uint16_t i = 0; i < (na > nb ? na : nb); i++)
			fprintf(stderr, "%4u %02x %02x%s\n", i, i < na ? a[i] : 0, i < nb ? b[i] : 0,
				i < na && i < nb && a[i] == b[i] ? "" : "  <--");
	}
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na);
	assert_memory_equal(&sa, &sb, sizeof(sa));
	if (ms != P53_MSG_OK || !qb.ecs || sb.kind[P53_ANS_ANSWER] + sb.kind[P53_ANS_NXDOMAIN] +
	    sb.kind[P53_ANS_NODATA] + sb.kind[P53_ANS_REFUSED] + sb.kind[P53_ANS_REFERRAL] == 0)
		return -1;
	int sc = echoed_scope(b, nb); /* every answer to a query with ECS echoes it (RFC 7871 §7.2) */
	assert_true(sc >= 0 && sc <= 128);
	return sc;
}

/* The steered record and its table: steered.example.com. A, policy [map, weighted] over three
 * targets in two PoPs; the map's subnets (IPv4 and IPv6, nested) as a JSON file. */
static char steer_dir[] = "/tmp/p53faststeer.XXXXXX";
static struct p53_steer_record steer_rec;
static struct p53_steer_target steer_pool[3];
static struct p53_steer_conf steer_conf;

static void steer_build(void)
{
	static const char *const names[] = {"example.com."};
	char path[256], err[600], zpath[512];
	size_t len;
	FILE *f;

	assert_non_null(mkdtemp(steer_dir));
	snprintf(path, sizeof(path), "%s/map.json", steer_dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("[{\"networks\": [\"198.51.100.0/24\", \"10.1.0.0/16\", \"2001:db8:1::/48\"], \"labels\": [\"AMS\"]},"
	      " {\"networks\": [\"203.0.113.0/25\", \"10.0.0.0/8\", \"2001:db8::/32\"], \"labels\": [\"FRA\"]},"
	      " {\"networks\": [\"198.51.100.128/26\", \"2001:db8:1:2::/64\"], \"labels\": [\"FRA\", \"AMS\"]}]\n", f);
	fclose(f);
	steer_conf.map = strdup(path);
	steer_conf.records = &steer_rec;
	steer_conf.n_records = 1;
	struct p53_steer_record *r = &steer_rec;
	r->pool = steer_pool;
	r->n_pool = 0;
	r->owner = (char *)(uintptr_t)"steered.example.com.";
	r->lname = (uint8_t *)(uintptr_t)"\x07steered\x07" "example\x03" "com";
	r->lname_len = 21;
	r->type = 1;
	r->policy[0] = P53_POLICY_MAP;
	r->policy[1] = P53_POLICY_WEIGHTED;
	r->n_policy = 2;
	r->ttl = 300;
	static const char *const pops[] = {"AMS", "AMS", "FRA"};
	for (int i = 0; i < 3; i++) {
		struct p53_steer_target *t = &r->pool[r->n_pool++];
		t->name = (char *)(uintptr_t)pops[i];
		t->family = 4;
		t->addr[0] = 10;
		t->addr[3] = (uint8_t)(i + 1);
		t->pop = (char *)(uintptr_t)pops[i];
		t->weight = 1;
		t->priority = (unsigned int)i + 1;
	}
	struct p53_steer_sources src;
	memset(&src, 0, sizeof(src));
	p53_steer_conf_layout(&steer_conf, NULL); /* as p53_config_load */
	if (p53_steer_sources_load(&steer_conf, &src, err, sizeof(err)) != 0)
		fail_msg("steering sources: %s", err);
	steer_t = p53_steer_build(&steer_conf, &src, NULL, &len, err, sizeof(err));
	if (steer_t == NULL)
		fail_msg("steering table: %s", err);
	((struct p53_steer_hdr *)steer_t)->generation = ++steer_gen; /* as steer_pub.c publishes */
	p53_steer_sources_free(&src);

	/* The image with the record's every-target RRset, flagged steered (compile.c). */
	uint8_t addrs[3 * 4];
	for (int j = 0; j < 3; j++)
		memcpy(addrs + 4 * j, r->pool[j].addr, 4);
	struct p53_zone_extra e = { .lname = r->lname, .lname_len = r->lname_len, .type = 1,
				    .ttl = r->ttl, .addrs = addrs, .n = 3, .line = 1, .owner = r->owner,
				    .rec = 0 };
	struct p53_zone_src z;
	memset(&z, 0, sizeof(z));
	snprintf(zpath, sizeof(zpath), "%s/zones/example.com.zone", P53_SRCDIR);
	z.name = names[0];
	z.file = zpath;
	z.extra = &e;
	z.n_extra = 1;
	z.steer_layout = steer_conf.layout;
	free(img);
	conf.neg = NULL;
	conf.n_neg = 0;
	img = p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL);
	if (img == NULL)
		fail_msg("build failed: %s", err);
	((struct p53_image_hdr *)img)->generation = ++img_gen;
	use_neg();
	conf.steer = &steer_t;
}

/* A republish (steer_pub.c on a health change): the table built again with target `down`
 * (0..2) unhealthy, or every target up for -1; the old one freed once conf.steer points at the
 * new one. */
static void steer_republish(int down)
{
	char err[600];
	size_t len;
	struct p53_steer_sources src;
	bool up[P53_STEER_MAX_POOL]; /* the one record's pool */

	memset(up, 1, sizeof(up));
	if (down >= 0)
		up[down] = false;
	memset(&src, 0, sizeof(src));
	if (p53_steer_sources_load(&steer_conf, &src, err, sizeof(err)) != 0)
		fail_msg("steering sources: %s", err);
	void *t = p53_steer_build(&steer_conf, &src, up, &len, err, sizeof(err));
	if (t == NULL)
		fail_msg("steering table: %s", err);
	p53_steer_sources_free(&src);
	const char *why = NULL;
	assert_int_equal(p53_steer_check(t, len, &why), 0);
	((struct p53_steer_hdr *)t)->generation = ++steer_gen;
	void *old = steer_t;
	steer_t = t;
	free(old);
}

/* An address in text, 4 or 16 bytes; *v6 set. */
static void addr_of(const char *s, uint8_t *a, int *v6)
{
	*v6 = strchr(s, ':') != NULL;
	memset(a, 0, 16);
	assert_int_equal(inet_pton(*v6 ? AF_INET6 : AF_INET, s, a), 1);
}

/*
 * Steered answers and ECS, fast against general: every client (IPv4 and IPv6 sources, in and
 * out of the map's subnets), without ECS and with an ECS for each prefix length of interest
 * (0, inside a map subnet, wider than it), DO=0 and 1, for the steered name, a static name
 * and names that do not exist; the SCOPE echoed as the general path writes it.
 */
static void steered(void **state)
{
	(void)state;
	static const char *const clients[] = {
		"198.51.100.7", "198.51.100.200", "198.51.100.130", "203.0.113.9", "203.0.113.200",
		"10.1.2.3", "10.200.0.1", "8.8.8.8", "192.0.2.1", "255.255.255.255", "0.0.0.1",
		"2001:db8:1::5", "2001:db8:1:2::9", "2001:db8:2::1", "2001:db8:ffff::1", "2a00::1", "::1",
		"ffff::1",
	};
	static const unsigned int v4_src[] = {0, 8, 16, 20, 24, 25, 26, 31, 32};
	static const unsigned int v6_src[] = {0, 16, 32, 48, 56, 64, 65, 127, 128};
	static const struct { const uint8_t *n; size_t l; uint16_t type; } qs[] = {
		{(const uint8_t *)"\x07steered\x07" "example\x03" "com", 21, 1},
		{(const uint8_t *)"\x07StEeReD\x07" "example\x03" "com", 21, 1},
		{(const uint8_t *)"\x07steered\x07" "example\x03" "com", 21, 28},
		{(const uint8_t *)"\x03www\x07" "example\x03" "com", 17, 1},
		{(const uint8_t *)"\x02nx\x07steered\x07" "example\x03" "com", 24, 1},
		{(const uint8_t *)"\x07" "example\x03" "org", 13, 1},
	};
	uint8_t buf[512], src[16], ea[16];
	int v6;

	steer_build();
	{
		struct p53_query sq;
		uint16_t l = query(buf, qs[0].n, qs[0].l, 1, 0, 0, 0, 0);
		assert_int_equal(p53_msg_parse(buf, l, &sq), P53_MSG_OK);
		memcpy(steer_lname, sq.lname, sq.qname_len);
		steer_lname_len = sq.qname_len;
	}
	memset(scopes, 0, sizeof(scopes));
	n_steer_fast = 0;
	/* The steered node names its record by index (image.h p53_image_node.steer) in a table of
	 * the image's layout: pass 0 finds it so, pass 1 (an image of another layout, as during a
	 * reload) by name; the answers agree either way. */
	{
		const struct p53_image_hdr *ih = p53_image_hdr(img);
		uint32_t ni = P53_NONE;
		for (uint32_t i = 0; i < ih->n_nodes; i++)
			if (p53_image_node(img, i)->name_len == steer_lname_len &&
			    memcmp(p53_image_node_name(img, p53_image_node(img, i)), steer_lname,
				   steer_lname_len) == 0)
				ni = i;
		assert_int_not_equal(ni, P53_NONE);
		assert_int_equal(p53_image_node(img, ni)->steer, 1);
		assert_true(ih->steer_layout != 0 && ih->steer_layout == p53_steer_hdr(steer_t)->layout);
	}
	for (int pass = 0; pass < 2; pass++)
	for (size_t c = 0; c < sizeof(clients) / sizeof(clients[0]); c++) {
		((struct p53_image_hdr *)img)->steer_layout = p53_steer_hdr(steer_t)->layout + (uint64_t)pass;
		addr_of(clients[c], src, &v6);
		for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++)
			for (int dob = 0; dob < 2; dob++) {
				/* No OPT, an OPT without options, then ECS from this client's address
				 * (the source then is 192.0.2.1 or 2001:db8:ffff::1: a resolver). */
				uint16_t l = query(buf, qs[k].n, qs[k].l, qs[k].type, 0, 0, 0, 0);
				steer_both(buf, l, src, v6);
				l = query(buf, qs[k].n, qs[k].l, qs[k].type, 1232, dob, 0, 0);
				steer_both(buf, l, src, v6);
				steer_both(buf, l, NULL, 0); /* no client known: the fallback */
				const unsigned int *sl = v6 ? v6_src : v4_src;
				for (size_t i = 0; i < 9; i++) {
					unsigned int bits = sl[i], bytes = (bits + 7) / 8;
					memcpy(ea, src, 16);
					if (bits % 8)
						ea[bytes - 1] &= (uint8_t)(0xff << (8 - bits % 8));
					l = ecs_query(buf, qs[k].n, qs[k].l, qs[k].type, dob, v6 ? 2 : 1,
						      (uint8_t)bits, 0, ea, bytes);
					uint8_t res[16];
					int rv6;
					addr_of(v6 ? "2001:db8:ffff::1" : "192.0.2.1", res, &rv6);
					int sc = steer_both(buf, l, res, rv6);
					if (sc >= 0)
						scopes[sc]++;
					/* ECS from a client of the other family than the packet's. */
					addr_of(v6 ? "192.0.2.1" : "2001:db8:ffff::1", res, &rv6);
					sc = steer_both(buf, l, res, rv6);
					if (sc >= 0)
						scopes[sc]++;
				}
			}
	}
	((struct p53_image_hdr *)img)->steer_layout = p53_steer_hdr(steer_t)->layout;
	/* Not vacuous: answered fast, with the SCOPE of a map subnet (24, 16, 48, 26, 64...), of
	 * the weighted bucket (24, 56: each client /24 or /56 hashed), and 0 (source 0, a static
	 * name, a name error). */
	printf("fast path, steering: %lu answered fast; SCOPE 0: %lu, 16: %lu, 24: %lu, 26: %lu, "
	       "48: %lu, 56: %lu, 64: %lu\n", n_steer_fast, scopes[0], scopes[16], scopes[24],
	       scopes[26], scopes[48], scopes[56], scopes[64]);
	assert_true(n_steer_fast > 1000);
	assert_true(scopes[0] > 100 && scopes[24] > 10 && scopes[56] > 10);
	assert_true(scopes[16] > 0 && scopes[26] > 0 && scopes[48] > 0 && scopes[64] > 0);

	/* Frames: ECS in IPv4 frames, p53_fast_parse against the general checks and parser. */
	unsigned long before = n_frames_ecs;
	for (unsigned int bits = 0; bits <= 32; bits++) {
		memset(ea, 0, sizeof(ea));
		addr_of("198.51.100.255", ea, &v6);
		if (bits % 8)
			ea[bits / 8] &= (uint8_t)(0xff << (8 - bits % 8));
		uint16_t l = ecs_query(buf, qs[0].n, qs[0].l, 1, (int)(bits & 1), 1, (uint8_t)bits, 0, ea,
				       (bits + 7) / 8);
		frames(buf, l, (uint16_t)(2000 + bits));
	}
	for (unsigned int bits = 0; bits <= 128; bits += 7) {
		addr_of("2001:db8:1:2:ffff:ffff:ffff:ffff", ea, &v6);
		if (bits % 8)
			ea[bits / 8] &= (uint8_t)(0xff << (8 - bits % 8));
		for (unsigned int i = (bits + 7) / 8; i < 16; i++)
			ea[i] = 0;
		uint16_t l = ecs_query(buf, qs[3].n, qs[3].l, 1, 0, 2, (uint8_t)bits, 0, ea,
				       (bits + 7) / 8);
		frames(buf, l, (uint16_t)(3000 + bits));
	}
	assert_true(n_frames_ecs - before > 30);

	/* Frames of both families from clients in and out of the map (and sources the general
	 * checks refuse: unspecified, loopback, multicast, IPv4-mapped loopback), for the steered
	 * name, a static one and a name error: no OPT, an OPT, DO=1, an ECS of the client. */
	static const char *const fsrc[] = {
		"198.51.100.7", "10.1.2.3", "8.8.8.8", "2001:db8:1::5", "2001:db8:1:2::9",
		"2001:db8:2::1", "2a00::1", "::ffff:198.51.100.7", "::", "::1", "ff02::1",
		"::ffff:127.0.0.1",
	};
	unsigned long before6 = n_replies6, fast6 = n_frames_fast6;
	for (size_t c = 0; c < sizeof(fsrc) / sizeof(fsrc[0]); c++) {
		addr_of(fsrc[c], src, &v6);
		if (v6)
			memcpy(src6, src, 16);
		else
			memcpy(src4, src, 4);
		for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
			uint16_t l = query(buf, qs[k].n, qs[k].l, qs[k].type, 0, 0, 0, 0);
			frames(buf, l, (uint16_t)(5000 + c));
			for (int dob = 0; dob < 2; dob++) {
				l = query(buf, qs[k].n, qs[k].l, qs[k].type, 1232, dob, 0, 0);
				frames(buf, l, (uint16_t)(5100 + c));
				unsigned int bits = v6 ? 56 : 24;
				memcpy(ea, src, 16);
				l = ecs_query(buf, qs[k].n, qs[k].l, qs[k].type, dob, v6 ? 2 : 1,
					      (uint8_t)bits, 0, ea, bits / 8);
				frames(buf, l, (uint16_t)(5200 + c));
			}
		}
	}
	/* The variants' precomputed sums (steer.h) gave the steered replies' checksums, and
	 * after each republish (a target down: other variants, other bytes, other sums) too:
	 * one_frame() checks each sum against the bytes and the reply against the general one. */
	assert_true(n_tail_steer > 20);
	for (int down = 0; down < 3; down++) {
		unsigned long tails = n_tail_steer;
		steer_republish(down);
		for (size_t c = 0; c < 7; c++) {
			addr_of(fsrc[c], src, &v6);
			if (v6)
				memcpy(src6, src, 16);
			else
				memcpy(src4, src, 4);
			uint16_t l = query(buf, qs[0].n, qs[0].l, 1, 0, 0, 0, 0);
			frames(buf, l, (uint16_t)(5300 + c));
			for (int dob = 0; dob < 2; dob++) {
				l = query(buf, qs[0].n, qs[0].l, 1, 1232, dob, 0, 0);
				frames(buf, l, (uint16_t)(5400 + c));
			}
		}
		assert_true(n_tail_steer - tails > 10);
	}
	/* The answer cache across clients: the steered name's entry (its record's index) answers
	 * every client with its own variant, the one the table picks without the cache; after a
	 * republish (a target down, as a health change publishes) at once the new table's. */
	struct p53_qcache *qc = cache64();
	static uint8_t out[4096];
	for (int down = -1; down < 3; down++) {
		if (down >= 0)
			steer_republish(down);
		for (int pass = 0; pass < 2; pass++) {
			unsigned long hits = qc->hits;
			for (size_t c = 0; c < 7; c++) {
				addr_of(fsrc[c], src, &v6);
				if (v6)
					memcpy(src6, src, 16);
				else
					memcpy(src4, src, 4);
				for (int dob = 0; dob < 2; dob++) {
					uint16_t l = query(buf, qs[0].n, qs[0].l, 1, 1232, dob, 0, 0);
					cached_same(qc, buf, l, v6, out);
				}
			}
			/* one store per DO bit (the second client's): the others are hits */
			assert_int_equal(qc->hits - hits, down < 0 && pass == 0 ? 10 : 14);
		}
	}
	assert_int_equal(qc->stores, 2);
	printf("fast path, answer cache of steered answers: %lu stored, %lu hits (%lu steered entries "
	       "in one_frame()'s checks)\n", qc->stores, qc->hits, n_cache_steered);
	assert_true(n_cache_steered > 10);
	steer_republish(-1);
	memcpy(src4, "\xc0\x00\x02\x01", 4);
	addr_of("2001:db8:ffff::1", src6, &v6);
	/* Not vacuous: IPv6 frames read and answered fast (steered, static, name errors). */
	printf("fast path, steering frames: %lu IPv6 read fast, %lu answered fast, %lu steered "
	       "replies from the variants' sums\n", n_frames_fast6 - fast6, n_replies6 - before6,
	       n_tail_steer);
	assert_true(n_replies6 - before6 > 100);
}

/* An invalid ECS option: the fast parse leaves it to the general parser, which answers FORMERR
 * with an OPT (RFC 7871 §7.1.1, answer.c), steered name or not. */
static void bad_ecs(void **state)
{
	(void)state;
	static const struct {
		const char *why;
		uint16_t family;
		uint8_t source, scope;
		const char *addr;
		size_t alen;
	} rows[] = {
		{"unknown FAMILY", 3, 24, 0, "\xc6\x33\x64", 3},
		{"FAMILY 0", 0, 0, 0, "", 0},
		{"IPv4 SOURCE over 32", 1, 33, 0, "\xc6\x33\x64\x07\x00", 5},
		{"IPv6 SOURCE over 128", 2, 129, 0, "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", 17},
		{"SCOPE not 0 in a query", 1, 24, 24, "\xc6\x33\x64", 3},
		{"ADDRESS longer than the SOURCE", 1, 24, 0, "\xc6\x33\x64\x00", 4},
		{"ADDRESS shorter than the SOURCE", 1, 24, 0, "\xc6\x33", 2},
		{"IPv6 ADDRESS shorter than the SOURCE", 2, 56, 0, "\x20\x01\x0d\xb8\x00\x01", 6},
		{"bits set past the SOURCE", 1, 20, 0, "\xc6\x33\x6f", 3},
		{"bits set past an IPv6 SOURCE", 2, 33, 0, "\x20\x01\x0d\xb8\x01", 5},
		{"no ADDRESS for SOURCE 1", 1, 1, 0, "", 0},
	};
	uint8_t buf[512], f[2048], out[1500];
	struct p53_pkt pk;
	struct p53_query q;
	uint64_t keep;

	if (steer_t == NULL)
		steer_build();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		for (int name = 0; name < 2; name++) {
			uint16_t l = ecs_query(buf, name ? (const uint8_t *)"\x07steered\x07" "example\x03" "com"
							 : (const uint8_t *)"\x03www\x07" "example\x03" "com",
					       name ? 21 : 17, 1, 0, rows[i].family, rows[i].source, rows[i].scope,
					       (const uint8_t *)rows[i].addr, rows[i].alen);
			uint16_t fl = frame_of(f, buf, l, 4000, 0);
			if (p53_fast_parse(f, fl, 1, mac_us, &addrs, &pk, &q, &keep))
				fail_msg("fast parse took an invalid ECS: %s", rows[i].why);
			assert_int_equal(p53_msg_parse(buf, l, &q), P53_MSG_OPT_ECS);
			struct p53_answer_stats st;
			memset(&st, 0, sizeof(st));
			memcpy(out, buf, l);
			uint16_t n = p53_answer(img, &conf, out, l, sizeof(out), &st);
			assert_true(n >= P53_DNS_HDR_LEN);
			if ((out[3] & 0x0f) != P53_RCODE_FORMERR)
				fail_msg("%s: rcode %u, not FORMERR", rows[i].why, out[3] & 0x0f);
			assert_int_equal(p53_get16(out + 10), 1); /* the OPT */
		}
}

/* A cache of 64 entries for the tests below. */
static struct p53_qcache *cache64(void)
{
	static uint8_t mem[sizeof(struct p53_qcache) +
			   64 * (sizeof(struct p53_qcache_entry) + sizeof(struct p53_qcache_pick))]
		__attribute__((aligned(64)));
	struct p53_qcache *qc = (struct p53_qcache *)mem;

	assert_int_equal(p53_qcache_init(qc, 64), 0);
	return qc;
}

/* The frame of `q` from src4 through the cache `qc` and without one: the same outcome and
 * bytes; returns the outcome, the reply in `out`. */
static int cached_same(struct p53_qcache *qc, const uint8_t *q, uint16_t len, int v6,
		       uint8_t *out)
{
	static uint8_t f[2048], want[4096];
	struct p53_answer_stats s0, s1;
	uint16_t fl = v6 ? frame6_of(f, q, len, 9053, 0, 0) : frame_of(f, q, len, 9053, 0);
	uint32_t room = (uint32_t)fl + 1500;

	int k0 = run_frame(NULL, f, fl, want, &s0, room);
	int k1 = run_frame(qc, f, fl, out, &s1, room);
	assert_int_equal(k0, k1);
	if (k0 >= P53_FAST_ANSWERED) {
		assert_memory_equal(out, want, (size_t)k0);
		assert_memory_equal(&s0, &s1, sizeof(s0));
	}
	return k1;
}

/*
 * The answer cache (qcache.h) on its own rules: the ID, RD and CD of each query and the case
 * of its name echoed (a name in another case is another key); DO=0 and DO=1 apart; an image of
 * another generation (a publish) misses, even at the same address; the same generation hits.
 */
static void answer_cache(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	static uint8_t out[4096], first[4096];
	uint8_t buf[512];
	build(names, files, 1);
	struct p53_qcache *qc = cache64();
	const uint8_t *www = (const uint8_t *)"\x03www\x07" "example\x03" "com";

	/* The same question three times, then with another ID, RD and CD: the first remembered
	 * in its slot, the second stored, hits after. */
	uint16_t l = query(buf, www, 17, 1, 1232, 0, 0, P53_F_RD);
	int k = cached_same(qc, buf, l, 0, out);
	assert_true(k >= P53_FAST_ANSWERED);
	assert_int_equal(qc->stores, 0);
	cached_same(qc, buf, l, 0, out);
	assert_int_equal(qc->stores, 1);
	assert_int_equal(qc->hits, 0);
	cached_same(qc, buf, l, 0, out);
	assert_int_equal(qc->hits, 1);
	buf[0] = 0xbe;
	buf[1] = 0xef;
	buf[2] = 0;                     /* RD clear */
	buf[3] = 0x10;                  /* CD set */
	k = cached_same(qc, buf, l, 0, out);
	assert_int_equal(qc->hits, 2);
	assert_int_equal(out[42], 0xbe);
	assert_int_equal(out[43], 0xef);
	assert_int_equal(out[44] & 0x01, 0);    /* RD as asked */
	assert_int_equal(out[45] & 0x10, 0x10); /* CD as asked */
	/* IPv6: the same question, the same entry (the answer is the same bytes). */
	cached_same(qc, buf, l, 1, out);
	assert_int_equal(qc->hits, 3);

	/* Another case: another key, its own case echoed, then answered from the cache too. */
	for (unsigned int mix = 1; mix < 4; mix++) {
		unsigned long stores = qc->stores, hits = qc->hits;
		l = query(buf, www, 17, 1, 1232, 0, mix, 0);
		cached_same(qc, buf, l, 0, out);
		cached_same(qc, buf, l, 0, out);
		assert_int_equal(qc->stores, stores + 1);
		assert_memory_equal(out + 42 + 12, buf + 12, 17);
		cached_same(qc, buf, l, 0, out);
		assert_int_equal(qc->hits, hits + 1);
		assert_memory_equal(out + 42 + 12, buf + 12, 17);
	}

	/* DO=1 after DO=0 (stored above), and without an OPT: each its own answer. */
	unsigned long stores = qc->stores;
	l = query(buf, www, 17, 1, 1232, 1, 0, 0);
	cached_same(qc, buf, l, 0, out);
	k = cached_same(qc, buf, l, 0, out);
	assert_int_equal(out[k - 4] & 0x80, 0x80);      /* the OPT's DO */
	l = query(buf, www, 17, 1, 0, 0, 0, 0);
	cached_same(qc, buf, l, 0, out);
	k = cached_same(qc, buf, l, 0, out);
	assert_int_equal(out[42 + 11], 0);              /* ARCOUNT 0 */
	assert_int_equal(qc->stores, stores + 2);

	/* A new generation: what the cache holds is not used, even for an image at the same
	 * address. Here the responder's payload size changes with it (a reload publishes both):
	 * our OPT's size in the reply is the new one. */
	l = query(buf, www, 17, 1, 1232, 0, 0, 0);
	k = cached_same(qc, buf, l, 0, first);
	unsigned long hits = qc->hits;
	conf.edns_max_payload = 4000;
	((struct p53_image_hdr *)img)->generation = ++img_gen;
	int k2 = cached_same(qc, buf, l, 0, out);
	assert_int_equal(qc->hits, hits);               /* a miss */
	assert_int_equal(k, k2);
	assert_memory_not_equal(out, first, (size_t)k);
	assert_int_equal(p53_get16(out + k - 8), 4000);
	/* that miss was stored at once: the slot remembered the question */
	cached_same(qc, buf, l, 0, out);
	assert_int_equal(qc->hits, hits + 1);
	assert_int_equal(p53_get16(out + k - 8), 4000);
	/* The same generation with other settings (no publish does that) would be served from
	 * the cache: shown here, so the test above can fail. */
	conf.edns_max_payload = 1232;
	struct p53_answer_stats st;
	uint16_t fl = frame_of(first, buf, l, 9053, 0);
	k2 = run_frame(qc, first, fl, out, &st, (uint32_t)fl + 1500);
	assert_int_equal(p53_get16(out + k2 - 8), 4000);
	((struct p53_image_hdr *)img)->generation = ++img_gen;
	k2 = run_frame(qc, first, fl, out, &st, (uint32_t)fl + 1500);
	assert_int_equal(p53_get16(out + k2 - 8), 1232);

	/* A name error, NODATA and REFUSED are cached too. */
	static const struct { const char *n; size_t l; uint16_t type; } other[] = {
		{"\x02nx\x07" "example\x03" "com", 16, 1},
		{"\x03www\x07" "example\x03" "com", 17, 99},
		{"\x07" "example\x03" "org", 13, 1},
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		stores = qc->stores;
		hits = qc->hits;
		l = query(buf, (const uint8_t *)other[i].n, other[i].l, other[i].type, 1232, 0, 0, 0);
		for (int j = 0; j < 3; j++)
			cached_same(qc, buf, l, 0, out);
		assert_int_equal(qc->stores, stores + 1);
		assert_int_equal(qc->hits, hits + 1);
	}
	/* An image of generation 0 (never published) is not cached. */
	((struct p53_image_hdr *)img)->generation = 0;
	stores = qc->stores;
	for (int j = 0; j < 3; j++)
		cached_same(qc, buf, l, 0, out);
	assert_int_equal(qc->stores, stores);
	((struct p53_image_hdr *)img)->generation = ++img_gen;
}

/*
 * The hit path's own reading (qcache.h, fastpath.c qc_find() and fast_udp()): questions of 5 to
 * 48 bytes (the lookup's last word read ending at the question's end, a whole word at a
 * multiple of 8), without an OPT and with one, DO=0 and 1, over IPv4 and IPv6, answered from
 * the cache with the uncached path's bytes and counters; then, for a question the cache holds,
 * what a hit does not take from its key: an OPT of another EDNS version (the general path's
 * BADVERS), a bad UDP checksum (dropped) and none over IPv4 (answered), each as without it.
 */
static void hit_path(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	static uint8_t out[4096], want[4096], f[2048];
	uint8_t buf[512], name[64];
	struct p53_answer_stats s0, s1;
	build(names, files, 1);
	struct p53_qcache *qc = cache64();

	/* a label of L bytes (none: the apex; 3: "www") under example.com: questions of 17 and
	   19..48 bytes */
	for (size_t L = 0; L <= 30; L++) {
		size_t n = 0;
		if (L > 0) {
			name[n++] = (uint8_t)L;
			for (size_t i = 0; i < L; i++)
				name[n++] = L == 3 ? (uint8_t)"www"[i] : (uint8_t)('a' + i % 26);
		}
		memcpy(name + n, "\x07" "example\x03" "com", 13);     /* and the root */
		n += 13;
		for (int edns = 0; edns < 2; edns++)
			for (int dob = 0; dob <= edns; dob++)
				for (int v6 = 0; v6 < 2; v6++) {
					unsigned long hits = qc->hits;
					uint16_t l = query(buf, name, n, 1, edns ? 1232 : 0, dob, 0, 0);
					for (int j = 0; j < 3; j++)
						assert_true(cached_same(qc, buf, l, v6, out) >= P53_FAST_ANSWERED);
					/* IPv4 stored it, IPv6 finds it three times */
					assert_int_equal(qc->hits, hits + (v6 ? 3 : 1));
				}
	}
	/* Shorter questions (5..9 bytes: the root, "a", "ab", "com"), whatever their answer: the
	 * uncached path's outcome and bytes each time. */
	static const struct { const char *n; size_t l; } shorter[] = {
		{"", 1}, {"\x01" "a", 3}, {"\x02" "ab", 4}, {"\x03" "com", 5},
	};
	unsigned long hits = qc->hits;
	for (size_t i = 0; i < sizeof(shorter) / sizeof(shorter[0]); i++) {
		uint16_t l = query(buf, (const uint8_t *)shorter[i].n, shorter[i].l, 1, 1232, 0, 0, 0);
		for (int j = 0; j < 3; j++)
			cached_same(qc, buf, l, (int)i & 1, out);
	}
	assert_true(qc->hits > hits);           /* REFUSED at least, cached too */

	/* www.example.com A with an OPT, held by the cache */
	uint16_t l = query(buf, (const uint8_t *)"\x03www\x07" "example\x03" "com", 17, 1, 1232, 0, 0, 0);
	for (int j = 0; j < 3; j++)
		cached_same(qc, buf, l, 0, out);
	hits = qc->hits;
	buf[l - 5] = 1;                         /* the OPT's VERSION: 1 */
	for (int v6 = 0; v6 < 2; v6++)
		assert_true(cached_same(qc, buf, l, v6, out) < P53_FAST_ANSWERED);
	assert_int_equal(qc->hits, hits);
	buf[l - 5] = 0;
	for (int v6 = 0; v6 < 2; v6++) {
		uint16_t fl = v6 ? frame6_of(f, buf, l, 9053, 1, 0) : frame_of(f, buf, l, 9053, 1);
		int k0 = run_frame(NULL, f, fl, want, &s0, (uint32_t)fl + 1500);
		int k1 = run_frame(qc, f, fl, out, &s1, (uint32_t)fl + 1500);
		assert_int_equal(k0, k1);
		assert_true(k1 < P53_FAST_ANSWERED);    /* the checksum wrong: not answered */
	}
	assert_int_equal(qc->hits, hits);
	uint16_t fl = frame_of(f, buf, l, 9053, 2);     /* IPv4 without a checksum */
	int k0 = run_frame(NULL, f, fl, want, &s0, (uint32_t)fl + 1500);
	int k1 = run_frame(qc, f, fl, out, &s1, (uint32_t)fl + 1500);
	assert_true(k0 >= P53_FAST_ANSWERED);
	assert_int_equal(k0, k1);
	assert_memory_equal(out, want, (size_t)k0);
	assert_memory_equal(&s0, &s1, sizeof(s0));
	assert_int_equal(qc->hits, hits + 1);
}

/*
 * A hit's checksum check (fastpath.c qc_sum_ok(): the question's, counts' and OPT's fixed bytes
 * summed from the entry, qcache.h vsum): for questions of odd and even length, without an OPT
 * and with one (DO=0 and 1), over IPv4 and IPv6, a held question whose frame has any one byte
 * of the pseudo-header's addresses or of the datagram changed (its checksum left as it was:
 * now wrong) is not answered, with or without the cache, and nothing is counted as a hit; the
 * frame as sent is answered from the cache.
 */
static void hit_checksum(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	static uint8_t out[4096], want[4096], f[2048], g[2048];
	uint8_t buf[512];
	struct p53_answer_stats s0, s1;
	build(names, files, 1);
	struct p53_qcache *qc = cache64();
	/* questions of 21 and 22 bytes: www and mail, then the apex (17) */
	static const struct { const char *n; size_t l; } qs[] = {
		{"\x03www\x07" "example\x03" "com", 17},
		{"\x04mail\x07" "example\x03" "com", 18},
		{"\x07" "example\x03" "com", 13},
	};

	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		for (int edns = 0; edns < 2; edns++)
			for (int dob = 0; dob <= edns; dob++)
				for (int v6 = 0; v6 < 2; v6++) {
					uint16_t l = query(buf, (const uint8_t *)qs[i].n, qs[i].l, 1,
							   edns ? 1232 : 0, dob, 0, 0);
					for (int j = 0; j < 3; j++)
						assert_true(cached_same(qc, buf, l, v6, out) >= P53_FAST_ANSWERED);
					uint16_t fl = v6 ? frame6_of(f, buf, l, 9053, 0, 0)
							 : frame_of(f, buf, l, 9053, 0);
					unsigned long hits = qc->hits;
					assert_true(run_frame(qc, f, fl, out, &s1, (uint32_t)fl + 1500) >=
						    P53_FAST_ANSWERED);
					assert_int_equal(qc->hits, hits + 1);
					/* from the source address to the message's end */
					const size_t from = v6 ? 14 + 8 : 14 + 12, udp = v6 ? 14 + 40 : 14 + 20;
					for (size_t b = from; b < fl; b++) {
						if (b == udp + 6 || b == udp + 7)
							continue;       /* the checksum itself */
						memcpy(g, f, fl);
						g[b]++;
						int k0 = run_frame(NULL, g, fl, want, &s0, (uint32_t)fl + 1500);
						int k1 = run_frame(qc, g, fl, out, &s1, (uint32_t)fl + 1500);
						assert_true(k1 < P53_FAST_ANSWERED);
						assert_int_equal(k0, k1);
					}
					assert_int_equal(qc->hits, hits + 1);
				}
}

/*
 * A run of misses (qcache.h P53_QCACHE_RUN, fastpath.c qc_skip()): after 32 questions in a row
 * that miss (names asked once, a random-subdomain flood) the cache is not looked up but for
 * one question in 32, until one hits; every reply is the one made without a cache. A name
 * stored before the run is answered by the fast answer while the lookups pause, from the
 * cache again once one of its questions is looked up, and every one after that.
 */
static void answer_cache_run(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	static uint8_t out[4096];
	uint8_t buf[512], nx[18];
	build(names, files, 1);
	struct p53_qcache *qc = cache64();
	const uint8_t *www = (const uint8_t *)"\x03www\x07" "example\x03" "com";

	uint16_t lw = query(buf, www, 17, 1, 1232, 0, 0, 0);
	for (int i = 0; i < 3; i++)
		assert_true(cached_same(qc, buf, lw, 0, out) >= P53_FAST_ANSWERED);
	assert_int_equal(qc->stores, 1);
	assert_int_equal(qc->hits, 1);

	/* 32 names asked once: each looked up, each a miss (and a name error) */
	memcpy(nx, "\x04nx00\x07" "example\x03" "com", 18);
	for (int i = 0; i < (int)P53_QCACHE_RUN; i++) {
		nx[3] = (uint8_t)('0' + i / 10);
		nx[4] = (uint8_t)('0' + i % 10);
		uint16_t l = query(buf, nx, 18, 1, 1232, 0, 0, 0);
		int k = cached_same(qc, buf, l, 0, out);
		assert_true(k >= P53_FAST_ANSWERED);
		assert_int_equal(out[42 + 3] & 0xf, P53_RCODE_NXDOMAIN);
	}
	assert_int_equal(qc->misses, 2 + P53_QCACHE_RUN);
	assert_int_equal(qc->hits, 1);
	assert_int_equal(qc->stores, 1);

	/* The stored name, in the run: 32 questions answered without the cache (misses, the
	 * same bytes), then one looked up: a hit, and the lookups go on. */
	lw = query(buf, www, 17, 1, 1232, 0, 0, 0);
	for (int i = 0; i < (int)P53_QCACHE_RUN; i++)
		assert_true(cached_same(qc, buf, lw, 0, out) >= P53_FAST_ANSWERED);
	assert_int_equal(qc->hits, 1);
	assert_int_equal(qc->misses, 2 + 2 * P53_QCACHE_RUN);
	cached_same(qc, buf, lw, 0, out);
	assert_int_equal(qc->hits, 2);
	for (int i = 0; i < 5; i++)
		cached_same(qc, buf, lw, 0, out);
	assert_int_equal(qc->hits, 7);
	assert_int_equal(qc->misses, 2 + 2 * P53_QCACHE_RUN);

	/* Fewer than 32 misses in a row between hits: every question looked up. */
	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < (int)P53_QCACHE_RUN - 1; j++) {
			nx[3] = (uint8_t)('a' + i);
			nx[4] = (uint8_t)('a' + j);
			uint16_t l = query(buf, nx, 18, 1, 1232, 0, 0, 0);
			cached_same(qc, buf, l, 0, out);
		}
		unsigned long hits = qc->hits;
		lw = query(buf, www, 17, 1, 1232, 0, 0, 0);
		cached_same(qc, buf, lw, 0, out);
		assert_int_equal(qc->hits, hits + 1);
	}

	/* A name asked again in a run is stored when looked up twice in a row in its slot, and
	 * that ends the run: a new run of names asked once, then the question looked up (the
	 * 33rd after the run began) stored by its second lookup, which looks the next one up. */
	for (int i = 0; i < (int)P53_QCACHE_RUN * 2; i++) {
		nx[3] = (uint8_t)('A' + i / 26);
		nx[4] = (uint8_t)('A' + i % 26);
		uint16_t l = query(buf, nx, 18, 1, 1232, 0, 0, 0);
		cached_same(qc, buf, l, 0, out);
	}
	unsigned long stores = qc->stores, hits = qc->hits;
	const uint8_t *mail = (const uint8_t *)"\x04mail\x07" "example\x03" "com";
	uint16_t lm = query(buf, mail, 18, 1, 1232, 0, 0, 0);
	cached_same(qc, buf, lm, 0, out);       /* the one in 32 looked up: a miss */
	for (int i = 0; i < (int)P53_QCACHE_RUN - 1; i++)
		cached_same(qc, buf, lm, 0, out);
	assert_int_equal(qc->stores, stores);
	cached_same(qc, buf, lm, 0, out);       /* looked up again: stored */
	assert_int_equal(qc->stores, stores + 1);
	cached_same(qc, buf, lm, 0, out);
	assert_int_equal(qc->hits, hits + 1);
}

/* `n` questions (qs[i], ls[i] bytes) from src4 as one burst through p53_fast_burst() with the
 * cache `qc` (mbufs of our own: the burst reads their data, lengths and flags only): every
 * frame answered, each reply the bytes p53_fast_frame() writes without a cache (and with a
 * context of its own: no closest encloser remembered). *ce (unless NULL): the closest encloser
 * the burst's context remembers at its end. */
static void burst_ce(struct p53_qcache *qc, uint8_t (*qs)[64], const uint16_t *ls, uint16_t n,
		     const struct p53_image_node **ce)
{
	enum { HEAD = 128, ROOM = 2048 };
	static uint8_t bufs[64][HEAD + ROOM], want[4096];
	static struct rte_mbuf mb[64];
	struct rte_mbuf *pkts[64], *out[64];
	struct p53_query q[64];
	struct p53_pkt pk[64];
	struct p53_answer_stats st, s0;
	struct p53_fast_ctx fx;
	uint16_t fl[64];
	int k = -1;

	assert_true(n <= 64);
	for (uint16_t i = 0; i < n; i++) {
		memset(&mb[i], 0, sizeof(mb[i]));
		fl[i] = frame_of(bufs[i] + HEAD, qs[i], ls[i], 9053, 0);
		mb[i].buf_addr = bufs[i];
		mb[i].data_off = HEAD;
		mb[i].buf_len = HEAD + ROOM;
		mb[i].nb_segs = 1;
		mb[i].data_len = fl[i];
		mb[i].pkt_len = fl[i];
		pkts[i] = &mb[i];
	}
	memset(&st, 0, sizeof(st));
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &st), 0);
	p53_fast_ctx_cache(&fx, qc);
	assert_int_equal(p53_fast_burst(&fx, pkts, n, out, q, pk, &k), n);
	for (uint16_t i = 0; i < n; i++) {
		uint8_t f[2048];
		uint16_t l = frame_of(f, qs[i], ls[i], 9053, 0);
		int k0 = run_frame(NULL, f, l, want, &s0, (uint32_t)l + 1500);
		assert_true(k0 >= P53_FAST_ANSWERED);
		assert_ptr_equal(out[i], &mb[i]);
		assert_int_equal(mb[i].data_len, k0);
		assert_memory_equal(bufs[i] + HEAD, want, (size_t)k0);
	}
	if (ce != NULL)
		*ce = fx.nx->ce;
}

static void burst_same(struct p53_qcache *qc, uint8_t (*qs)[64], const uint16_t *ls, uint16_t n)
{
	burst_ce(qc, qs, ls, n, NULL);
}

/* `n` questions for name errors `nx` (18 bytes), its bytes 3 and 4 made `hi` + i / 26 and
 * `lo` + i % 26 for the i-th: every one new. */
static void nx_names(uint8_t (*qs)[64], uint16_t *ls, uint8_t *nx, char hi, char lo, int n)
{
	for (int i = 0; i < n; i++) {
		nx[3] = (uint8_t)(hi + i / 26);
		nx[4] = (uint8_t)(lo + i % 26);
		ls[i] = query(qs[i], nx, 18, 1, 1232, 0, 0, 0);
	}
}

/*
 * p53_fast_burst() in a run of misses (a random-subdomain flood): a burst that begins in the
 * run answers its questions without looking them up, counted as misses, and looks one in
 * P53_QCACHE_RUN up as p53_fast_frame() does: a hit there ends the run and the lookups go on
 * in the same burst. The replies are the cacheless ones.
 */
static void answer_cache_burst_run(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	static uint8_t qs[64][64];
	uint16_t ls[64];
	build(names, files, 1);
	struct p53_qcache *qc = cache64();
	const uint8_t *www = (const uint8_t *)"\x03www\x07" "example\x03" "com";
	uint8_t nx[18];

	memcpy(nx, "\x04nx00\x07" "example\x03" "com", 18);
	/* www stored (its second miss in its slot), then a hit */
	for (int i = 0; i < 3; i++)
		ls[i] = query(qs[i], www, 17, 1, 1232, 0, 0, 0);
	burst_same(qc, qs, ls, 3);
	assert_int_equal(qc->stores, 1);
	assert_int_equal(qc->hits, 1);
	assert_int_equal(qc->misses, 2);
	/* 32 names asked once, in a burst that begins out of the run: each looked up */
	nx_names(qs, ls, nx, 'a', 'a', (int)P53_QCACHE_RUN);
	burst_same(qc, qs, ls, P53_QCACHE_RUN);
	assert_int_equal(qc->misses, 2 + P53_QCACHE_RUN);
	assert_int_equal(qc->klim, 0);
	/* A burst that begins in the run: 32 questions not looked up (www among them: a miss
	 * too), the 33rd looked up (www: a hit, the run ends), the rest looked up (hits). */
	for (int i = 0; i < 40; i++) {
		nx[3] = (uint8_t)('A' + i / 26);
		nx[4] = (uint8_t)('A' + i % 26);
		ls[i] = i == 5 || i >= (int)P53_QCACHE_RUN ? query(qs[i], www, 17, 1, 1232, 0, 0, 0)
							    : query(qs[i], nx, 18, 1, 1232, 0, 0, 0);
	}
	burst_same(qc, qs, ls, 40);
	assert_int_equal(qc->hits, 1 + 40 - P53_QCACHE_RUN);
	assert_int_equal(qc->misses, 2 + 2 * P53_QCACHE_RUN);
	assert_int_equal(qc->klim, P53_QCACHE_KEY);
	assert_int_equal(qc->stores, 1);
}

/*
 * The question a run of misses looks up, answered from the kept name error instead (fastpath.c
 * qc_kept()): a name error the cache holds, asked where the run looks one up in a burst whose
 * kept reply answers it, is not looked up: no hit, the run goes on (counted as a miss), and
 * the reply is the cacheless one. A name in the index there is looked up (a hit: the run ends).
 */
static void answer_cache_run_kept(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	static uint8_t qs[64][64];
	uint16_t ls[64];
	build(names, files, 1);
	use_neg();      /* a replica's templates: the kept name error needs them */
	struct p53_qcache *qc = cache64();
	const uint8_t *www = (const uint8_t *)"\x03www\x07" "example\x03" "com";
	uint8_t nx[18];

	memcpy(nx, "\x04nxzz\x07" "example\x03" "com", 18);
	/* nxzz and www stored (each a second miss in its slot), then hits */
	for (int i = 0; i < 6; i++)
		ls[i] = i < 3 ? query(qs[i], nx, 18, 1, 1232, 0, 0, 0) : query(qs[i], www, 17, 1, 1232, 0, 0, 0);
	burst_same(qc, qs, ls, 6);
	assert_int_equal(qc->stores, 2);
	assert_int_equal(qc->hits, 2);
	/* 32 names asked once: the run begins */
	nx_names(qs, ls, nx, 'a', 'a', (int)P53_QCACHE_RUN);
	burst_same(qc, qs, ls, P53_QCACHE_RUN);
	assert_int_equal(qc->klim, 0);
	uint64_t misses = qc->misses;
	/* in the run: 32 not looked up, then nxzz where one is looked up (the kept reply: no
	   lookup), the rest not looked up either */
	nx_names(qs, ls, nx, 'A', 'A', 40);
	nx[3] = nx[4] = 'z';
	ls[P53_QCACHE_RUN] = query(qs[P53_QCACHE_RUN], nx, 18, 1, 1232, 0, 0, 0);
	burst_same(qc, qs, ls, 40);
	assert_int_equal(qc->hits, 2);
	assert_int_equal(qc->misses, misses + 40);
	assert_int_equal(qc->klim, 0);
	assert_true(qc->run >= P53_QCACHE_RUN);
	/* the same with www where one is looked up: a hit, the run ends, the rest looked up */
	nx_names(qs, ls, nx, '0', 'A', 64);
	uint32_t at = P53_QCACHE_RUN - (qc->run & (P53_QCACHE_RUN - 1));
	ls[at] = query(qs[at], www, 17, 1, 1232, 0, 0, 0);
	burst_same(qc, qs, ls, 64);
	assert_int_equal(qc->hits, 3);
	assert_int_equal(qc->misses, misses + 40 + 63);
}

/* The answer cache's state that fast_burst_run() keeps as p53_fast_frame() would. */
static void same_counts(const struct p53_qcache *a, const struct p53_qcache *b, int burst)
{
	if (a->hits != b->hits || a->misses != b->misses || a->stores != b->stores ||
	    a->run != b->run || a->seen != b->seen || a->klim != b->klim)
		fail_msg("burst %d: hits %lu/%lu misses %lu/%lu stores %lu/%lu run %u/%u seen %u/%u "
			 "klim %u/%u", burst, (unsigned long)a->hits, (unsigned long)b->hits,
			 (unsigned long)a->misses, (unsigned long)b->misses, (unsigned long)a->stores,
			 (unsigned long)b->stores, a->run, b->run, a->seen, b->seen, a->klim, b->klim);
}

/*
 * p53_fast_burst() in a run of misses (fastpath.c fast_burst_run(): the frames not looked up
 * go through the cacheless loop in stretches, counted after each) keeps the answer cache's
 * counts and state as p53_fast_frame() keeps them frame by frame, and writes the same
 * replies. 640 frames in bursts of 1 to 64, the worker's way (a burst stops at a frame the
 * fast path does not answer; the general responder takes it; the next call goes on after
 * it): name errors asked once (IPv4 and IPv6), names asked again (stored, then hits that end
 * the run), a CNAME (read, declined), a DS question and a bad checksum (not the fast shape:
 * read, not answered), a frame of two segments and one with a bad L4 checksum flag (not
 * read), and a question past the cache's key length (not looked up).
 */
static void burst_run_counts(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	enum { N = 640, HEAD = 128, ROOM = 2048 };
	static const uint16_t sizes[] = {32, 7, 64, 1, 32, 45, 3, 32, 19, 64, 2, 33};
	static uint8_t bufs[N][HEAD + ROOM], frm[N][512], want[4096], own[4096];
	static struct rte_mbuf mb[N];
	static struct p53_query qa[N], qb;
	static struct p53_pkt pa[N], pb;
	uint16_t fl[N];
	uint8_t segs[N], l4bad[N];
	struct rte_mbuf *pkts[64], *out[64];
	struct p53_answer_stats sa, sb, s0;
	struct p53_fast_ctx fa, fb;
	uint64_t x = 53;
	unsigned long answered = 0, stops = 0, hits_in_run = 0;
	build(names, files, 1);
	struct p53_qcache *qa_c = cache64();
	static uint8_t mem_b[sizeof(struct p53_qcache) +
			     64 * (sizeof(struct p53_qcache_entry) + sizeof(struct p53_qcache_pick))]
		__attribute__((aligned(64)));
	struct p53_qcache *qb_c = (struct p53_qcache *)mem_b;
	assert_int_equal(p53_qcache_init(qb_c, 64), 0);

	for (int i = 0; i < N; i++) {
		uint8_t q[512], nm[128];
		uint16_t ql, nl = 18, type = 1;
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned int r = (unsigned int)(x >> 33) % 100;
		int v6 = (x >> 20) & 1, bad = 0;
		memcpy(nm, "\x04nx00\x07" "example\x03" "com", 18);
		nm[3] = (uint8_t)('a' + i / 26 % 26);
		nm[4] = (uint8_t)('a' + i % 26);
		segs[i] = 1;
		l4bad[i] = 0;
		if (r < 4 || (i >= 300 && i < 310) || (i >= 450 && i < 490)) {
			memcpy(nm, "\x03www\x07" "example\x03" "com", 17);     /* asked again */
			nl = 17;
		} else if (i >= 540 && i < 620) {
			nm[3] = nm[4] = 'z';    /* a name error asked again: stored */
		} else if (r < 6) {
			memcpy(nm, "\x03" "cdn\x07" "example\x03" "com", 17);  /* CNAME: declined */
			nl = 17;
		} else if (r < 7) {
			type = P53_T_DS;
		} else if (r < 8) {
			bad = 1;
		} else if (r < 9) {
			segs[i] = 2;
		} else if (r < 10) {
			l4bad[i] = 1;
		} else if (r < 12) {
			/* 89 bytes of name: past P53_QCACHE_KEY */
			memset(nm, 0, sizeof(nm));
			for (int l = 0; l < 4; l++) {
				nm[l * 19] = 18;
				memset(nm + l * 19 + 1, 'a' + (i + l) % 26, 18);
			}
			memcpy(nm + 76, "\x07" "example\x03" "com", 13);    /* and the root */
			nl = 89;
		}
		ql = query(q, nm, nl, type, 1232, 0, 0, 0);
		fl[i] = v6 ? frame6_of(frm[i], q, ql, (uint16_t)(9000 + i), bad, 0)
			   : frame_of(frm[i], q, ql, (uint16_t)(9000 + i), bad);
		memset(&mb[i], 0, sizeof(mb[i]));
		memcpy(bufs[i] + HEAD, frm[i], fl[i]);
		mb[i].buf_addr = bufs[i];
		mb[i].data_off = HEAD;
		mb[i].buf_len = HEAD + ROOM;
		mb[i].nb_segs = segs[i];
		mb[i].ol_flags = l4bad[i] ? RTE_MBUF_F_RX_L4_CKSUM_BAD : 0;
		mb[i].data_len = fl[i];
		mb[i].pkt_len = fl[i];
	}
	int at = 0;
	for (int b = 0; at < N; b++) {
		int n = sizes[b % (sizeof(sizes) / sizeof(sizes[0]))];
		if (n > N - at)
			n = N - at;
		int begins_in_run = qa_c->run >= P53_QCACHE_RUN;
		uint64_t hits0 = qa_c->hits;
		/* the worker's way: one context a burst, the frames in order */
		memset(&sa, 0, sizeof(sa));
		memset(&sb, 0, sizeof(sb));
		assert_int_equal(p53_fast_ctx_init(&fa, mac_us, &addrs, img, &conf, &sa), 0);
		p53_fast_ctx_cache(&fa, qa_c);
		for (int i = 0; i < n;) {
			int k = -1;
			for (int j = i; j < n; j++)
				pkts[j - i] = &mb[at + j];
			uint16_t a = p53_fast_burst(&fa, pkts, (uint16_t)(n - i), out, qa + at + i,
						    pa + at + i, &k);
			answered += a;
			i += a;
			if (i < n) {
				assert_true(k == P53_FAST_NOT_READ || k == P53_FAST_DECLINED);
				stops++;
				i++;    /* the general responder's */
			}
		}
		if (begins_in_run)
			hits_in_run += qa_c->hits - hits0;
		assert_int_equal(p53_fast_ctx_init(&fb, mac_us, &addrs, img, &conf, &sb), 0);
		p53_fast_ctx_cache(&fb, qb_c);
		for (int i = at; i < at + n; i++) {
			if (segs[i] != 1 || l4bad[i])
				continue;       /* not read: the worker's checks */
			memcpy(want, frm[i], fl[i]);
			memset(&qb, 0x5a, sizeof(qb));
			int kb = p53_fast_frame(&fb, &qb, want, fl[i], ROOM, 1, &pb);
			/* and a context of its own, without the cache */
			int k0 = run_frame(NULL, frm[i], fl[i], own, &s0, ROOM);
			assert_int_equal(kb, k0);
			if (kb >= P53_FAST_ANSWERED) {
				assert_int_equal(mb[i].data_len, kb);
				assert_memory_equal(bufs[i] + HEAD, want, (size_t)kb);
				assert_memory_equal(own, want, (size_t)kb);
			}
		}
		same_counts(qa_c, qb_c, b);
		assert_memory_equal(&sa, &sb, sizeof(sa));
		at += n;
	}
	/* what the sequence went through */
	printf("burst run counts: %lu answered, %lu stops, %lu hits in bursts begun in a run, "
	       "%lu stores, %lu misses\n", answered, stops, hits_in_run, (unsigned long)qa_c->stores,
	       (unsigned long)qa_c->misses);
	assert_true(stops > 15);
	assert_true(hits_in_run > 0);
	assert_true(qa_c->stores > 1);
	assert_true(answered > N / 2);
}

/*
 * The closest encloser a burst's name errors remember (p53_fast_ctx.nx->ce): compared with each
 * candidate before it is hashed, and used only when its name is the candidate's. Name errors
 * under two apexes of the same length (example.com., second.test.: 13 bytes) in turn, names
 * below a deeper node (www), below the wildcard's parent (img: its wildcard answers, not the
 * apex remembered before it), two labels below the apex, in mixed case, and one under no zone
 * (REFUSED: nothing remembered). Every reply the one a context of its own writes, with and
 * without the answer cache, IPv4 frames in one burst.
 */
static void encloser_memo(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com.", "second.test."};
	static const char *const files[] = {"zones/example.com.zone",
					    "tests/differential/zones/second.test.zone"};
	static const struct {
		const char *name;
		size_t len;
		unsigned int mix;       /* query()'s upper-case bits */
	} qn[] = {
		{"\x04nx-a\x07" "example\x03" "com", 18, 0},
		{"\x04nx-b\x07" "example\x03" "com", 18, 0},
		{"\x04nx-c\x06" "second\x04" "test", 18, 0},
		{"\x04nx-d\x07" "example\x03" "com", 18, 0},
		{"\x04nx-e\x07" "example\x03" "com", 18, 0x5a},
		{"\x01" "a\x03img\x07" "example\x03" "com", 19, 0},
		{"\x04nx-f\x07" "example\x03" "com", 18, 0},
		{"\x01x\x04nx-g\x07" "example\x03" "com", 20, 0},
		{"\x04nx-h\x03www\x07" "example\x03" "com", 22, 0},
		{"\x04nx-i\x03www\x07" "example\x03" "com", 22, 0x33},
		{"\x04nx-j\x05other\x03org", 16, 0},
		{"\x04nx-k\x06" "second\x04" "test", 18, 0xff},
	};
	enum { N = sizeof(qn) / sizeof(qn[0]) };
	static uint8_t qs[64][64];
	uint16_t ls[N];
	uint8_t rp[4096];
	struct p53_answer_stats st;
	build(names, files, 2);
	use_neg();

	for (int i = 0; i < N; i++) {
		ls[i] = query(qs[i], (const uint8_t *)qn[i].name, qn[i].len, 1, 1232, 0, qn[i].mix,
			      P53_F_RD);
		/* what each answers with a context of its own (DNS header at 42) */
		uint8_t f[512];
		uint16_t l = frame_of(f, qs[i], ls[i], 9053, 0);
		assert_true(run_frame(NULL, f, l, rp, &st, (uint32_t)l + 1500) >= P53_FAST_ANSWERED);
		uint8_t rcode = rp[42 + 3] & 0xf;
		if (i == 5)     /* the wildcard's A */
			assert_true(rcode == P53_RCODE_NOERROR && rp[42 + 7] == 1);
		else if (i == 10)
			assert_int_equal(rcode, P53_RCODE_REFUSED);
		else
			assert_int_equal(rcode, P53_RCODE_NXDOMAIN);
	}
	const struct p53_image_node *sec = p53_image_znode(img, p53_image_zone(img, 1),
							   p53_image_zone(img, 1)->apex);
	const struct p53_image_node *ce = NULL;
	assert_int_equal(sec->name_len, 13);
	burst_ce(NULL, qs, ls, N, &ce);
	assert_ptr_equal(ce, sec);      /* nx-k's, kept past other.org's REFUSED */
	struct p53_qcache *qc = cache64();
	burst_ce(qc, qs, ls, N, &ce);
	assert_ptr_equal(ce, sec);
	assert_int_equal(qc->hits, 0);
	/* and each name error first in its burst (nothing remembered yet) after one of another
	   zone's */
	for (int i = 0; i + 1 < N; i++) {
		uint8_t two[2][64];
		uint16_t tl[2] = {ls[i], ls[i + 1]};
		memcpy(two[0], qs[i], ls[i]);
		memcpy(two[1], qs[i + 1], ls[i + 1]);
		burst_same(NULL, two, tl, 2);
	}
}

/* qs[i] through one context in turn (p53_fast_frame(), `room` bytes), so what a name error
 * leaves (p53_fast_nx) is there for the next: each outcome and reply the one a context of its
 * own gives. */
static void nx_in_turn(struct p53_fast_ctx *fx, uint8_t (*qs)[64], const uint16_t *ls, int n,
		       uint32_t room)
{
	for (int i = 0; i < n; i++) {
		uint8_t f[512], a[4096], b[4096];
		struct p53_answer_stats s0;
		struct p53_query q;
		struct p53_pkt pk;
		uint16_t l = frame_of(f, qs[i], ls[i], 9053, 0);

		memcpy(a, f, l);
		memset(&q, 0x5a, sizeof(q));
		int k = p53_fast_frame(fx, &q, a, l, room, 1, &pk);
		int k0 = run_frame(NULL, f, l, b, &s0, room);
		assert_int_equal(k, k0);
		if (k >= P53_FAST_ANSWERED)
			assert_memory_equal(a, b, (size_t)k);
	}
}

/*
 * The last name error's reply kept for the next of its question's length below its encloser
 * (p53_fast_nx): names of 18 bytes under four zones in turn (two unsigned, one NSEC3-signed,
 * one with a delegation), with and without OPT, DO 0 and 1, payload sizes 100 to 4096, mixed
 * case, two labels below the apex, below a cut (a referral), below a wildcard's parent (its
 * answer) after a name error of the same length, each through one context with rooms down to
 * where the reply no longer fits, and in bursts with and without the answer cache; then a new
 * image (the SOA changed, as a reload publishes it) through the same context made again: its
 * SOA, not the kept one.
 */
static void nx_tail(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com.", "second.test.", "nsec3.test.", "diff.test."};
	static const char *const files[] = {"zones/example.com.zone",
					    "tests/differential/zones/second.test.zone",
					    "tests/unit/dataplane/zones/nsec3.test.zone",
					    "tests/differential/zones/diff.test.zone"};
	static const struct {
		const char *name;
		size_t len;
		uint16_t edns;          /* payload size; 0: no OPT */
		int dob;
		unsigned int mix;       /* query()'s upper-case bits */
		uint8_t rcode;
	} qn[] = {
		{"\x04nx-a\x07" "example\x03" "com", 18, 1232, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x04nx-b\x07" "example\x03" "com", 18, 1232, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x04nx-c\x07" "example\x03" "com", 18, 1232, 0, 0xa5, P53_RCODE_NXDOMAIN},
		{"\x04nx-d\x07" "example\x03" "com", 18, 0, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x04nx-e\x07" "example\x03" "com", 18, 512, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x04nx-f\x07" "example\x03" "com", 18, 4096, 1, 0, P53_RCODE_NXDOMAIN},
		{"\x04nx-g\x07" "example\x03" "com", 18, 100, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x04nx-g\x06" "second\x04" "test", 18, 1232, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x04nx-h\x07" "example\x03" "com", 18, 1232, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x05nx-ij\x05" "nsec3\x04" "test", 18, 1232, 1, 0, P53_RCODE_NXDOMAIN},
		{"\x05nx-ik\x05" "nsec3\x04" "test", 18, 1232, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x05nx-il\x05" "nsec3\x04" "test", 18, 1232, 0, 0x0f, P53_RCODE_NXDOMAIN},
		{"\x05nx-im\x05" "nsec3\x04" "test", 18, 1232, 1, 0, P53_RCODE_NXDOMAIN},
		{"\x06nx-abc\x04" "diff\x04" "test", 18, 1232, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x02xy\x03sub\x04" "diff\x04" "test", 18, 1232, 0, 0, P53_RCODE_NOERROR},
		{"\x06nx-abd\x04" "diff\x04" "test", 18, 1232, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x01x\x02nx\x07" "example\x03" "com", 18, 1232, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x04nx-i\x07" "example\x03" "com", 18, 1232, 0, 0x3c, P53_RCODE_NXDOMAIN},
		{"\x05nx-ab\x07" "example\x03" "com", 19, 1232, 0, 0, P53_RCODE_NXDOMAIN},
		{"\x01" "a\x03img\x07" "example\x03" "com", 19, 1232, 0, 0, P53_RCODE_NOERROR},
		{"\x05nx-ac\x07" "example\x03" "com", 19, 1232, 0, 0, P53_RCODE_NXDOMAIN},
	};
	enum { N = sizeof(qn) / sizeof(qn[0]) };
	static const uint32_t rooms[] = {2048, 1500, 300, 200, 160, 150, 140};
	static uint8_t qs[64][64];
	uint16_t ls[N];
	uint8_t f[512], rp[4096];
	struct p53_answer_stats st, sx;
	struct p53_fast_ctx fx;
	build(names, files, 4);
	use_neg();

	for (int i = 0; i < N; i++) {
		ls[i] = query(qs[i], (const uint8_t *)qn[i].name, qn[i].len, 1, qn[i].edns, qn[i].dob,
			      qn[i].mix, P53_F_RD);
		uint16_t l = frame_of(f, qs[i], ls[i], 9053, 0);
		assert_true(run_frame(NULL, f, l, rp, &st, 2048) >= P53_FAST_ANSWERED);
		assert_int_equal(rp[42 + 3] & 0xf, qn[i].rcode);
	}
	for (size_t r = 0; r < sizeof(rooms) / sizeof(rooms[0]); r++) {
		/* with the answer cache too: p53_fast_frame()'s cache step (fast_frame_qc()) */
		assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &sx), 0);
		p53_fast_ctx_cache(&fx, cache64());
		nx_in_turn(&fx, qs, ls, N, rooms[r]);
		assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &sx), 0);
		nx_in_turn(&fx, qs, ls, N, rooms[r]);
		if (r == 0) {
			/* the last kept: nx-ac's, below example.com (a.img's wildcard answer
			   kept nothing) */
			const struct p53_image_node *ex = p53_image_node(img, p53_image_zone(img, 0)->apex);
			assert_int_equal(fx.nx->qlen, 19);
			assert_ptr_equal(fx.nx->at, ex);
		}
	}
	burst_same(NULL, qs, ls, N);
	burst_same(cache64(), qs, ls, N);

	/* Kept from context to context (the worker's, p53_fast_ctx_nx()), three questions a
	   context; then with another payload size of ours (a configuration reload, the same
	   image): emptied. */
	static struct p53_fast_nx keep;
	memset(&keep, 0, sizeof(keep));
	for (int i = 0; i < N; i += 3) {
		assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &sx), 0);
		p53_fast_ctx_nx(&fx, &keep);
		nx_in_turn(&fx, qs + i, ls + i, N - i < 3 ? N - i : 3, 2048);
	}
	assert_int_equal(keep.qlen, 19);
	conf.edns_max_payload = 1400;
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &sx), 0);
	p53_fast_ctx_nx(&fx, &keep);
	assert_int_equal(keep.qlen, 0);
	nx_in_turn(&fx, qs + N - 1, ls + N - 1, 1, 2048);      /* nx-ac's length, kept before */
	nx_in_turn(&fx, qs, ls, N, 2048);
	conf.edns_max_payload = 1232;

	/* A new image: example.com's SOA with another serial and negative TTL, as a reload
	   publishes it. A context made for it: its SOA, not the one kept (the context's own,
	   and the worker's). */
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &sx), 0);
	p53_fast_ctx_nx(&fx, &keep);
	nx_in_turn(&fx, qs, ls, 2, 2048);
	assert_int_equal(keep.qlen, 18);
	uint8_t old[4096];
	uint16_t l = frame_of(f, qs[1], ls[1], 9053, 0);
	int k_old = run_frame(NULL, f, l, old, &st, 2048);
	char path[] = "/tmp/p53-nx-tail-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *in = fopen(P53_SRCDIR "/zones/example.com.zone", "r"), *out = fdopen(fd, "w");
	assert_non_null(in);
	assert_non_null(out);
	char line[512];
	while (fgets(line, sizeof(line), in) != NULL) {
		char *s = strstr(line, "2026113001");
		if (s != NULL)
			memcpy(s, "2026120401", 10);
		s = strstr(line, "300 )");
		if (s != NULL)
			memcpy(s, "600 )", 5);
		fputs(line, out);
	}
	fclose(in);
	fclose(out);
	struct p53_zone_src z = {.name = "example.com.", .file = path};
	char err[512];
	size_t len;
	void *old_img = img;
	img = p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL);
	unlink(path);
	assert_non_null(img);
	((struct p53_image_hdr *)img)->generation = ++img_gen;
	use_neg();
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &sx), 0);
	nx_in_turn(&fx, qs, ls, 3, 2048);
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &sx), 0);
	p53_fast_ctx_nx(&fx, &keep);
	nx_in_turn(&fx, qs, ls, 3, 2048);
	uint8_t now[4096];
	int k_new = run_frame(NULL, f, l, now, &st, 2048);
	assert_int_equal(k_new, k_old);
	assert_memory_not_equal(now, old, (size_t)k_new);      /* the serial and TTL */
	free(old_img);
}

/* One frame as a burst of one through p53_fast_burst() with the kept name errors `keep` (the
 * worker's way, p53_fast_ctx_nx()), in an mbuf of `room` bytes after its headroom, its L4
 * checksum flagged good by the NIC when not `verify`: the reply (or the frame as left) in
 * `out`, the outcome as p53_fast_frame() gives it. */
static int nx_burst1(struct p53_fast_nx *keep, const uint8_t *f, uint16_t fl, uint32_t room,
		     uint8_t *out, int verify)
{
	enum { HEAD = 128 };
	static uint8_t buf[HEAD + 4096];
	struct rte_mbuf mb, *pkts[1] = {&mb}, *sent[1] = {NULL};
	struct p53_answer_stats st;
	struct p53_fast_ctx fx;
	struct p53_query q;
	struct p53_pkt pk;
	int k = -7;

	memset(&mb, 0, sizeof(mb));
	memcpy(buf + HEAD, f, fl);
	mb.buf_addr = buf;
	mb.data_off = HEAD;
	mb.buf_len = (uint16_t)(HEAD + room);
	mb.nb_segs = 1;
	mb.data_len = fl;
	mb.pkt_len = fl;
	mb.ol_flags = verify ? 0 : RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	memset(&st, 0, sizeof(st));
	memset(&q, 0x5a, sizeof(q));
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &st), 0);
	p53_fast_ctx_nx(&fx, keep);
	uint16_t a = p53_fast_burst(&fx, pkts, 1, sent, &q, &pk, &k);
	memcpy(out, buf + HEAD, a == 1 ? mb.data_len : fl);
	if (a == 1) {
		assert_ptr_equal(sent[0], &mb);
		assert_int_equal(st.queries, 1);
		assert_int_equal(st.kind[P53_ANS_NXDOMAIN] + st.kind[P53_ANS_ANSWER] +
				 st.kind[P53_ANS_NODATA] + st.kind[P53_ANS_REFERRAL] +
				 st.kind[P53_ANS_REFUSED], 1);
		return mb.data_len;
	}
	return k;
}

/*
 * The kept name error's frame (fastpath.c nx_frame(), p53_fast_nx `flen`): once a name error
 * over IPv4 is kept, a burst tries each frame of its query's length as one more first. Each
 * row is a frame of that length that differs from the kept question's shape in one thing (or
 * in nothing that counts): through a burst it must give what p53_fast_frame() (which never
 * takes that step) gives with the same kept state, byte for byte, outcome for outcome. The
 * kept reply is marked (a byte of its SOA's serial changed), so a frame answered from it
 * shows it and one the general checks must judge does not.
 */
struct nx_row {
	const char *why;
	const char *name;               /* 20 bytes, or 16 with `opt4` */
	uint16_t type, edns;
	int dob;
	unsigned int mix;
	int at;                         /* a frame byte set to `val` (-1: none), then */
	uint8_t val;                    /* the checksum made right again */
	int bad;                        /* put_csum(): 1 wrong, 2 zero */
	int opt4;                       /* an option of 4 bytes in the OPT */
	uint32_t room;
	int kept;                       /* answered from the kept reply */
};

/* The SOA serial (2026113001) the kept reply holds, its last byte marked there (nx_frame_shape()). */
static const uint8_t nx_serial[4] = {0x78, 0xc4, 0x07, 0xe9};

/*
 * One row of nx_frame_shape() as a frame of the kept length over IPv4 or over IPv6 (`v6` 1: an
 * IPv4 row's, its bytes at and after the DNS message 20 further on, its room 20 more when it
 * is counted to the byte, a row that sets a byte of the IPv4 or UDP header being IPv4's
 * alone; 2: an IPv6 row's, at its own offsets), with the kept state `saved`: through a burst
 * it gives what p53_fast_frame() gives.
 */
static void nx_row_try(const struct nx_row *r, size_t i, int v6, const struct p53_fast_nx *plain,
		       const struct p53_fast_nx *saved)
{
	enum { DNS = 42, OPT = DNS + 12 + 20 + 4 };
	static uint8_t f[512], got[4096], want[4096], qb[512];
	static struct p53_fast_nx keep;
	const int shift = v6 ? 20 : 0;
	int at = r->at >= DNS && v6 == 1 ? r->at + shift : r->at;
	uint32_t room = r->room < 2048 && r->room > 100 ? r->room + (uint32_t)shift : r->room;
	/* a zero checksum: "none" over IPv4, refused over IPv6 (RFC 8200 §8.1) */
	int kept = r->kept && !(v6 && r->bad == 2);

	uint16_t ql = query(qb, (const uint8_t *)r->name, r->opt4 ? 16 : 20, r->type, r->edns, r->dob,
			    r->mix, P53_F_RD);
	if (r->opt4) {
		/* OPTION-CODE 65001 (local use), OPTION-LENGTH 0 */
		qb[ql - 1] = 4;
		memcpy(qb + ql, "\xfd\xe9\x00\x00", 4);
		ql = (uint16_t)(ql + 4);
	}
	uint16_t fl = v6 ? frame6_of(f, qb, ql, (uint16_t)(9000 + i), r->bad, 0)
			 : frame_of(f, qb, ql, (uint16_t)(9000 + i), r->bad);
	if (at >= 0) {
		f[at] = r->val;
		if (at == (v6 ? 54 : 34))
			f[at + 1] = r->val;     /* the source port's two bytes */
		if (v6)
			put_csum(f + 54, (uint16_t)(fl - 54), f + 22, 32, r->bad);
		else
			put_csum(f + 34, (uint16_t)(fl - 34), f + 26, 8, r->bad);
	}
	if (fl != OPT + 11 + shift)
		fail_msg("%s: a frame of %u bytes, not %u", r->why, fl, OPT + 11 + shift);
	/* p53_fast_frame(): fast_frame() alone, with the same kept state; the checksum verified,
	   then left to the NIC (a wrong reply checksum shows then: a bad sum no longer sends
	   the frame to fast_frame()) */
	for (int verify = 1; verify >= 0; verify--) {
		struct p53_answer_stats s0;
		struct p53_fast_ctx fx;
		struct p53_query q;
		struct p53_pkt pk;
		keep = *plain;
		memcpy(want, f, fl);
		memset(&s0, 0, sizeof(s0));
		assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &s0), 0);
		p53_fast_ctx_nx(&fx, &keep);
		int k0 = p53_fast_frame(&fx, &q, want, fl, room, verify, &pk);
		keep = *plain;
		int k = nx_burst1(&keep, f, fl, room, got, verify);
		if (k != k0)
			fail_msg("%s (IPv%d, verify %d, kept first label %u): %d, p53_fast_frame() %d",
				 r->why, v6 ? 6 : 4, verify, plain->flab, k, k0);
		if (k >= P53_FAST_ANSWERED && memcmp(got, want, (size_t)k) != 0)
			fail_msg("%s (IPv%d, verify %d, kept first label %u): not p53_fast_frame()'s reply",
				 r->why, v6 ? 6 : 4, verify, plain->flab);
		/* the kept reply marked: the burst answers with it, or not, as the row says */
		keep = *saved;
		k = nx_burst1(&keep, f, fl, room, got, verify);
		if (k != k0)
			fail_msg("%s (IPv%d, verify %d, kept first label %u, marked): %d, p53_fast_frame() %d",
				 r->why, v6 ? 6 : 4, verify, plain->flab, k, k0);
		if (k >= P53_FAST_ANSWERED) {
			const uint8_t *m = memmem(got + DNS + shift, (size_t)k - DNS - (size_t)shift,
						  nx_serial, 3);
			int marked = m != NULL && m[3] == (nx_serial[3] ^ 0x10);
			/* a wrong checksum not verified: answered as a right one */
			if (marked != (kept || (!verify && r->bad == 1)))
				fail_msg("%s (IPv%d, verify %d, kept first label %u): %s the kept reply",
					 r->why, v6 ? 6 : 4, verify, plain->flab, marked ? "" : "not");
		} else if (kept) {
			fail_msg("%s (IPv%d, verify %d): not answered (%d)", r->why, v6 ? 6 : 4, verify, k);
		}
	}
}

/*
 * A name error below the kept one's encloser whose first label has `lab` bytes (1-63, some
 * upper case; 64 is not a label length and need not be answered) over IPv4 or IPv6 (`v6`): through a burst with the kept state `plain` it gives
 * p53_fast_frame()'s outcome and bytes (the kept tail's pointers to the apex moved, its sum
 * made again: nx_frame_any(), nx_frame_any6()), and with `marked` (`plain` with the serial
 * marked) it is answered from the kept tail whatever the label's length and family: an IPv4
 * one 20 bytes longer than the kept one's has the kept IPv6 frame's length (nx_frame6(),
 * which leaves it to nx_frame_any()), an IPv6 one 20 bytes shorter the kept IPv4 frame's
 * (nx_frame(), which leaves it to nx_frame_any6()).
 */
static void nx_len_try(unsigned int lab, int v6, const struct p53_fast_nx *plain,
		       const struct p53_fast_nx *marked)
{
	static uint8_t f[512], got[4096], want[4096], qb[512], wn[128];
	static struct p53_fast_nx keep;
	struct p53_answer_stats s0;
	struct p53_fast_ctx fx;
	struct p53_query q;
	struct p53_pkt pk;

	wn[0] = (uint8_t)lab;
	for (unsigned int i = 0; i < lab; i++)
		wn[1 + i] = (uint8_t)((i % 3 == 0 ? 'A' : 'a') + (lab * 7 + i) % 26);
	memcpy(wn + 1 + lab, "\x07" "example\x03" "com", 13);
	uint16_t ql = query(qb, wn, 1 + lab + 13, 1, 1232, 0, 0, P53_F_RD);
	uint16_t fl = v6 ? frame6_of(f, qb, ql, (uint16_t)(7000 + lab), 0, 0)
			 : frame_of(f, qb, ql, (uint16_t)(7000 + lab), 0);
	keep = *plain;
	memcpy(want, f, fl);
	memset(&s0, 0, sizeof(s0));
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &s0), 0);
	p53_fast_ctx_nx(&fx, &keep);
	int k0 = p53_fast_frame(&fx, &q, want, fl, 2048, 1, &pk);
	keep = *plain;
	int k = nx_burst1(&keep, f, fl, 2048, got, 1);
	if (k != k0 || (k < P53_FAST_ANSWERED && lab <= 63))
		fail_msg("a first label of %u bytes (IPv%d): %d, p53_fast_frame() %d", lab, v6 ? 6 : 4, k, k0);
	if (k >= P53_FAST_ANSWERED && memcmp(got, want, (size_t)k) != 0)
		fail_msg("a first label of %u bytes (IPv%d): not p53_fast_frame()'s reply", lab, v6 ? 6 : 4);
	if (lab > 63)
		return;
	keep = *marked;
	k = nx_burst1(&keep, f, fl, 2048, got, 0);
	size_t dns = v6 ? 62 : 42;
	const uint8_t *m = k > (int)dns ? memmem(got + dns, (size_t)k - dns, nx_serial, 3) : NULL;
	if (k < P53_FAST_ANSWERED || m == NULL || m[3] != (nx_serial[3] ^ 0x10))
		fail_msg("a first label of %u bytes (IPv%d, the kept one %u): not the kept reply", lab,
			 v6 ? 6 : 4, plain->flab);
}

static void nx_frame_shape(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com.", "second.test."};
	static const char *const files[] = {"zones/example.com.zone",
					    "tests/differential/zones/second.test.zone"};
	enum { DNS = 42, NAME = DNS + 12, OPT = NAME + 20 + 4 };
	static const struct nx_row rows[] = {
		{"another new name", "\x06nx-xyz\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 0, 0, 2048, 1},
		{"mixed case", "\x06nx-xyz\x07" "example\x03" "com", 28, 1232, 0, 0xbe, -1, 0, 0, 0, 2048, 1},
		{"payload 512", "\x06nx-qqq\x07" "example\x03" "com", 15, 512, 0, 0, -1, 0, 0, 0, 2048, 1},
		{"payload 100", "\x06nx-qqq\x07" "example\x03" "com", 15, 100, 0, 0, -1, 0, 0, 0, 2048, 1},
		{"no checksum", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 2, 0, 2048, 1},
		{"TTL and ID", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 18, 0x77, 0, 0, 2048, 1},
		{"the room the copy takes", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 0, 0, 42 + 36 + 96, 1},
		{"a room one byte short", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 0, 0, 42 + 36 + 95, 0},
		{"a room too small for any answer", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 0, 0, 100, 0},
		{"a name that exists (CNAME)", "\x06static\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"a name that exists (NODATA)", "\x06_dmarc\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"a name that exists, mixed case", "\x06_DMARC\x07" "example\x03" "com", 16, 1232, 0, 0x55, -1, 0, 0, 0, 2048, 0},
		{"a name of 15 bytes, 5 more before the type", "\x01" "a\x07" "example\x03" "com\x00" "\x00\x10\x00\x01\x00", 1, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"below another encloser", "\x02xy\x03www\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"below a wildcard", "\x02xy\x03img\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"another zone", "\x06nx-abc\x06" "second\x04" "test", 1, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"under no zone", "\x06nx-abc\x07" "example\x03" "org", 1, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"DO=1", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 1, 0, -1, 0, 0, 0, 2048, 0},
		{"EDNS version 1", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, OPT + 6, 1, 0, 0, 2048, 0},
		{"an option in the OPT", "\x02nx\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 0, 1, 2048, 0},
		{"OPT not the root's", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, OPT, 1, 0, 0, 2048, 0},
		{"DS", "\x06nx-qqq\x07" "example\x03" "com", 43, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"RRSIG", "\x06nx-qqq\x07" "example\x03" "com", 46, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"ANY", "\x06nx-qqq\x07" "example\x03" "com", 255, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"type 0", "\x06nx-qqq\x07" "example\x03" "com", 0, 1232, 0, 0, -1, 0, 0, 0, 2048, 0},
		{"class CH", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, OPT - 1, 3, 0, 0, 2048, 0},
		{"a response (QR)", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, DNS + 2, 0x81, 0, 0, 2048, 0},
		{"opcode NOTIFY", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, DNS + 2, 0x21, 0, 0, 2048, 0},
		{"NSCOUNT 1", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, DNS + 9, 1, 0, 0, 2048, 0},
		{"a bad checksum", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, -1, 0, 1, 0, 2048, 0},
		{"another MAC", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 5, 0x54, 0, 0, 2048, 0},
		{"a multicast source MAC", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 6, 0x03, 0, 0, 2048, 0},
		{"EtherType IPv6", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 12, 0x86, 0, 0, 2048, 0},
		{"IPv4 options", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 14, 0x46, 0, 0, 2048, 0},
		{"a fragment (MF)", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 20, 0x20, 0, 0, 2048, 0},
		{"TCP", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 23, 6, 0, 0, 2048, 0},
		{"from 127/8", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 26, 127, 0, 0, 2048, 0},
		{"from a multicast address", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 26, 224, 0, 0, 2048, 0},
		{"to another address", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 33, 54, 0, 0, 2048, 0},
		{"an IPv4 length short of the frame", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 17, 0x49, 0, 0, 2048, 0},
		{"a UDP length short of the IPv4 one", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 39, 0x35, 0, 0, 2048, 0},
		{"to port 54", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 37, 54, 0, 0, 2048, 0},
		{"from port 0", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 34, 0, 0, 0, 2048, 0},
	};
	/* IPv6's own header, at its offsets (the IPv4 rows from 12 to 41 are IPv4's) */
	static const struct nx_row rows6[] = {
		{"traffic class and flow label 0", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 15, 0, 0, 0, 2048, 1},
		{"hop limit 1", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 21, 1, 0, 0, 2048, 1},
		{"EtherType IPv4", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 12, 0x08, 0, 0, 2048, 0},
		{"IP version 4", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 14, 0x4b, 0, 0, 2048, 0},
		{"next header TCP", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 20, 6, 0, 0, 2048, 0},
		{"next header hop-by-hop", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 20, 0, 0, 0, 2048, 0},
		{"from a multicast address", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 22, 0xff, 0, 0, 2048, 0},
		{"to another address", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 53, 0x54, 0, 0, 2048, 0},
		{"a payload length short of the frame", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 19, 0x36, 0, 0, 2048, 0},
		{"a UDP length short of the payload's", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 59, 0x36, 0, 0, 2048, 0},
		{"to port 54", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 57, 54, 0, 0, 2048, 0},
		{"from port 0", "\x06nx-qqq\x07" "example\x03" "com", 1, 1232, 0, 0, 54, 0, 0, 0, 2048, 0},
	};
	static uint8_t f[512], got[4096], qb[512];
	static struct p53_fast_nx keep, saved, plain;
	build(names, files, 2);
	use_neg();

	/* the kept name error, asked over IPv4 and then over IPv6 (the kept reply is the same
	   for either family): a burst of one, then each row's over either family (the first
	   burst of a context has no kept frame length yet); then one two labels below the apex,
	   whose parent is not its encloser: no frame length kept (the rows all through
	   fast_frame()); then ones whose first label is 8 bytes (IPv4) and 26 (IPv6): the rows'
	   frames are of no kept length, through nx_frame_any() and nx_frame_any6(), and with
	   26 an IPv6 row's frame has the kept IPv4 frame's length (nx_frame(), which leaves it
	   to nx_frame_any6()) */
	static const char *const kept[] = {
		"\x06nx-abc\x07" "example\x03" "com", "\x06nx-abc\x07" "example\x03" "com",
		"\x01x\x04nx-a\x07" "example\x03" "com", "\x08nx-abcde\x07" "example\x03" "com",
		"\x1anx-abcdefghijklmnopqrstuvw\x07" "example\x03" "com"};
	for (int v6 = 0; v6 < 5; v6++) {
		uint16_t kl = (uint16_t)(strlen(kept[v6]) + 1);
		uint16_t ql = query(qb, (const uint8_t *)kept[v6], kl, 1, 1232, 0, 0, P53_F_RD);
		uint16_t fl = v6 == 1 || v6 == 4 ? frame6_of(f, qb, ql, 9053, 0, 0)
						 : frame_of(f, qb, ql, 9053, 0);
		memset(&keep, 0, sizeof(keep));
		assert_true(nx_burst1(&keep, f, fl, 2048, got, 1) >= P53_FAST_ANSWERED);
		assert_int_equal(keep.qlen, kl);
		assert_int_equal(keep.flen, v6 == 2 ? 0 : OPT + 11 + kl - 20);
		plain = keep;
		/* the mark: the SOA serial's last byte in the kept tail, its sums kept right */
		uint8_t *sp = memmem(keep.tail, keep.len, nx_serial, 4);
		assert_non_null(sp);
		size_t so = (size_t)(sp - keep.tail) + 3;
		keep.tail[so] ^= 0x10;
		keep.sum += (so & 1) ? (uint64_t)0x10 << 8 : 0x10;   /* bit 4 was clear: 0x...e9 */
		keep.psum += (so & 1) ? (uint64_t)0x10 << 8 : 0x10;
		assert_int_equal(nx_serial[3] & 0x10, 0);
		saved = keep;

		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			nx_row_try(&rows[i], i, 0, &plain, &saved);
			if (rows[i].at < 12 || rows[i].at >= DNS)
				nx_row_try(&rows[i], i, 1, &plain, &saved);
		}
		for (size_t i = 0; i < sizeof(rows6) / sizeof(rows6[0]); i++)
			nx_row_try(&rows6[i], i, 2, &plain, &saved);
		/* first labels of every length (63: a name of 77 bytes), kept ones only; a
		   length byte of 64 (not a label: RFC 6891's extended label type) as
		   p53_fast_frame() has it, never the kept reply */
		if (v6 == 2)
			continue;
		assert_int_not_equal(keep.pmult, 0);
		for (unsigned int lab = 1; lab <= 64; lab++)
			for (int f6 = 0; f6 < 2; f6++)
				nx_len_try(lab, f6, &plain, &saved);
	}
}

/* ---- the pick cache ----------------------------------------------------------------------- */

/* The steered name asked by `client` through `qc` and without a cache (cached_same()); the
 * reply in `out`, its outcome returned. */
static int ask_from(struct p53_qcache *qc, const uint8_t *q, uint16_t l, const char *client, uint8_t *out)
{
	uint8_t a[16];
	int v6;

	addr_of(client, a, &v6);
	if (v6)
		memcpy(src6, a, 16);
	else
		memcpy(src4, a, 4);
	int k = cached_same(qc, q, l, v6, out);
	assert_true(k >= P53_FAST_ANSWERED);
	return k;
}

/* The steered question's entry in `qc`. */
static const struct p53_qcache_entry *steered_entry(const struct p53_qcache *qc)
{
	for (uint32_t i = 0; i <= qc->mask; i++)
		if (qc->e[i].gen != 0 && (qc->e[i].bits & P53_QC_STEERED))
			return &qc->e[i];
	fail_msg("no steered entry");
	return NULL;
}

/* The DNS messages of two IPv4 replies (after 42 bytes of headers) differ. */
static int replies_differ(const uint8_t *a, int ka, const uint8_t *b, int kb)
{
	return ka != kb || memcmp(a + 42, b + 42, (size_t)ka - 42) != 0;
}

/* The map file of the steered test, written again (a map reload's input). */
static void steer_map_write(const char *json)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/map.json", steer_dir);
	assert_non_null(f = fopen(path, "w"));
	fputs(json, f);
	fclose(f);
}

static const char steer_map_json[] =
	"[{\"networks\": [\"198.51.100.0/24\", \"10.1.0.0/16\", \"2001:db8:1::/48\"], \"labels\": [\"AMS\"]},"
	" {\"networks\": [\"203.0.113.0/25\", \"10.0.0.0/8\", \"2001:db8::/32\"], \"labels\": [\"FRA\"]},"
	" {\"networks\": [\"198.51.100.128/26\", \"2001:db8:1:2::/64\"], \"labels\": [\"FRA\", \"AMS\"]}]\n";

/* The steered test's table as first built (its map written again, republished) and an empty
 * cache of 64 entries. */
static struct p53_qcache *steer_fresh(void)
{
	if (steer_t == NULL)
		steer_build();
	steer_map_write(steer_map_json);
	steer_republish(-1);
	return cache64();
}

/*
 * What the pick cache rests on: a pick's scope bounds the prefix it holds for. For random
 * clients in and out of the map's nested subnets (and the weighted step's /24 and /56
 * buckets), every address sharing the first `scope` bits with one gets its variant and scope.
 */
static void pick_scope_holds(void **state)
{
	(void)state;
	static const char *const bases[] = {"10.1.2.3", "10.200.0.1", "198.51.100.7", "198.51.100.130",
					     "203.0.113.9", "8.8.8.8", "2001:db8:1::5", "2001:db8:1:2::9",
					     "2001:db8:2::1", "2a00::1", "2001:db8:ffff::1"};
	uint64_t x = 53;
	unsigned long checked = 0, by_len[129] = {0};

	if (steer_t == NULL)
		steer_build();
	const struct p53_steer_rec *r = p53_steer_find(steer_t, steer_lname, steer_lname_len,
						       p53_name_hash(steer_lname, steer_lname_len), 1);
	assert_non_null(r);
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
		for (int i = 0; i < 400; i++) {
			struct p53_steer_client ca, cb;
			int v6;
			addr_of(bases[b], ca.addr, &v6);
			ca.v6 = (uint8_t)v6;
			unsigned int bits = v6 ? 128 : 32;
			/* a random address sharing a random number of leading bits with the base */
			unsigned int keep = (unsigned int)((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33) % (bits + 1);
			for (unsigned int k = keep; k < bits; k++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				uint8_t m = (uint8_t)(0x80u >> (k % 8));
				ca.addr[k / 8] = (uint8_t)((x >> 40) & 1 ? ca.addr[k / 8] | m : ca.addr[k / 8] & ~m);
			}
			uint8_t sa, sb;
			const struct p53_steer_variant *va = p53_steer_pick(steer_t, r, &ca, &sa);
			cb = ca;
			for (unsigned int k = sa; k < bits; k++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				uint8_t m = (uint8_t)(0x80u >> (k % 8));
				cb.addr[k / 8] = (uint8_t)((x >> 40) & 1 ? cb.addr[k / 8] | m : cb.addr[k / 8] & ~m);
			}
			const struct p53_steer_variant *vb = p53_steer_pick(steer_t, r, &cb, &sb);
			assert_ptr_equal(va, vb);
			assert_int_equal(sa, sb);
			by_len[sa]++;
			checked++;
		}
	printf("pick scope: %lu pairs; scopes 8: %lu, 15: %lu, 16: %lu, 24: %lu, 26: %lu, 47: %lu, 56: %lu, 64: %lu\n",
	       checked, by_len[8], by_len[15], by_len[16], by_len[24], by_len[26], by_len[47], by_len[56],
	       by_len[64]);
	assert_true(by_len[16] > 0 && by_len[24] > 0 && by_len[26] > 0 && by_len[56] > 0 && by_len[64] > 0);
}

/*
 * The pick cache (qcache.h) through the answer cache: every reply compared with the one made
 * without a cache (cached_same()); the counters show where each variant came from. A client
 * in the prefix of a kept pick hits, one outside misses and gets its own variant; a health
 * change and a map reload (each a new table generation) miss and answer the new variant; a
 * scope past /24 is picked per query; ECS answers keep their scope; a table of generation 0
 * is not cached.
 */
static void pick_cache(void **state)
{
	(void)state;
	const uint8_t *sn = (const uint8_t *)"\x07steered\x07" "example\x03" "com";
	static uint8_t out[4096], ams[4096], fra[4096];
	uint8_t buf[512], ea[16];
	int v6;

	struct p53_qcache *qc = steer_fresh();
	uint16_t l = query(buf, sn, 21, 1, 1232, 0, 0, 0);

	/* remembered, stored (answered by the fast answer), then a hit: the first pick */
	ask_from(qc, buf, l, "10.1.2.3", out);
	ask_from(qc, buf, l, "10.1.2.3", out);
	assert_int_equal(qc->stores, 1);
	assert_int_equal(qc->pick_hits + qc->pick_misses, 0);
	int ka = ask_from(qc, buf, l, "10.1.2.3", ams);
	assert_int_equal(qc->pick_misses, 1);
	assert_int_equal(steered_entry(qc)->hint[0], 16);       /* the map's 10.1.0.0/16 */
	/* the same /16: the kept pick */
	ask_from(qc, buf, l, "10.1.200.7", out);
	assert_int_equal(qc->pick_hits, 1);
	assert_false(replies_differ(out, ka, ams, ka));
	/* another /16 (10.0.0.0/8 around 10.1.0.0/16: scope 15): its own variant, then kept */
	int kf = ask_from(qc, buf, l, "10.2.0.1", fra);
	assert_int_equal(qc->pick_misses, 2);
	assert_true(replies_differ(fra, kf, ams, ka));
	ask_from(qc, buf, l, "10.2.99.1", out);
	assert_int_equal(qc->pick_hits, 2);
	assert_int_equal(steered_entry(qc)->hint[0], 16);
	/* IPv6: 2001:db8::/32 around 2001:db8:1::/48, scope 47, apart from IPv4's hint */
	ask_from(qc, buf, l, "2001:db8:2::1", out);
	ask_from(qc, buf, l, "2001:db8:3:ffff::1", out);
	assert_int_equal(qc->pick_misses, 3);
	assert_int_equal(qc->pick_hits, 3);
	assert_int_equal(steered_entry(qc)->hint[1], 47);
	/* 198.51.100.128/26: a scope past /24, picked per query, the hint kept */
	for (int i = 0; i < 2; i++)
		ask_from(qc, buf, l, "198.51.100.130", out);
	assert_int_equal(qc->pick_misses, 5);
	assert_int_equal(steered_entry(qc)->hint[0], 16);
	/* Out of the map: the weighted step's /24 bucket, scope 24; the hint follows, and a
	 * client of the 10.1.0.0/16 pick is now kept at /24 too. */
	ask_from(qc, buf, l, "8.8.8.8", out);
	assert_int_equal(steered_entry(qc)->hint[0], 24);
	ask_from(qc, buf, l, "8.8.8.200", out);
	assert_int_equal(qc->pick_hits, 4);
	unsigned long m = qc->pick_misses;
	ask_from(qc, buf, l, "8.8.9.1", out);
	ask_from(qc, buf, l, "10.1.2.3", out);
	assert_int_equal(qc->pick_misses, m + 2);
	ask_from(qc, buf, l, "10.1.2.99", out);
	assert_int_equal(qc->pick_hits, 5);
	/* every weighted /24 bucket through the cache as without it (cached_same) */
	for (int i = 0; i < 64; i++) {
		char a[32];
		snprintf(a, sizeof(a), "100.%d.%d.1", i, i * 7 % 256);
		ask_from(qc, buf, l, a, out);
		ask_from(qc, buf, l, a, out);
	}
	assert_true(qc->pick_hits >= 5 + 50);   /* a few slots taken by another /24 */

	/* A health change (AMS's first target down: a new table) misses, and answers the
	 * variant without it. */
	m = qc->pick_misses;
	unsigned long h = qc->pick_hits;
	steer_republish(0);
	int k = ask_from(qc, buf, l, "10.1.2.3", out);
	assert_int_equal(qc->pick_misses, m + 1);
	assert_true(replies_differ(out, k, ams, ka));
	ask_from(qc, buf, l, "10.1.2.4", out);
	assert_int_equal(qc->pick_hits, h + 1);
	steer_republish(-1);
	k = ask_from(qc, buf, l, "10.1.2.3", out);
	assert_int_equal(qc->pick_misses, m + 2);
	assert_false(replies_differ(out, k, ams, ka));

	/* A map reload (10.1.0.0/16 to FRA): a new table, the FRA variant at once. */
	static const char moved[] =
		"[{\"networks\": [\"198.51.100.0/24\", \"2001:db8:1::/48\"], \"labels\": [\"AMS\"]},"
		" {\"networks\": [\"203.0.113.0/25\", \"10.0.0.0/8\", \"10.1.0.0/16\", \"2001:db8::/32\"], \"labels\": [\"FRA\"]},"
		" {\"networks\": [\"198.51.100.128/26\", \"2001:db8:1:2::/64\"], \"labels\": [\"FRA\", \"AMS\"]}]\n";
	steer_map_write(moved);
	steer_republish(-1);
	m = qc->pick_misses;
	k = ask_from(qc, buf, l, "10.1.2.3", out);
	assert_int_equal(qc->pick_misses, m + 1);
	assert_false(replies_differ(out, k, fra, kf));
	/* ECS (its variant picked per reply, not kept): the scope of the map's block as without it */
	memset(ea, 0, sizeof(ea));
	addr_of("10.1.2.0", ea, &v6);
	uint16_t le = ecs_query(buf, sn, 21, 1, 0, 1, 24, 0, ea, 3);
	k = ask_from(qc, buf, le, "10.1.2.3", out);
	assert_int_equal(echoed_scope(out + 42, (uint16_t)(k - 42)), 16);
	addr_of("10.2.0.0", ea, &v6);
	le = ecs_query(buf, sn, 21, 1, 0, 1, 24, 0, ea, 3);
	k = ask_from(qc, buf, le, "10.1.2.3", out);
	assert_int_equal(echoed_scope(out + 42, (uint16_t)(k - 42)), 15);
	steer_map_write(steer_map_json);
	steer_republish(-1);

	/* A table of generation 0 (never published) is not cached, and answers right. */
	l = query(buf, sn, 21, 1, 1232, 0, 0, 0);
	((struct p53_steer_hdr *)steer_t)->generation = 0;
	m = qc->pick_misses;
	h = qc->pick_hits;
	for (int i = 0; i < 3; i++)
		k = ask_from(qc, buf, l, "10.1.2.3", out);
	assert_false(replies_differ(out, k, ams, ka));
	assert_int_equal(qc->pick_misses, m + 3);       /* each picked from the table */
	assert_int_equal(qc->pick_hits, h);
	((struct p53_steer_hdr *)steer_t)->generation = ++steer_gen;
	memcpy(src4, "\xc0\x00\x02\x01", 4);
	addr_of("2001:db8:ffff::1", src6, &v6);
	printf("pick cache: %lu picks kept and used, %lu picked\n", (unsigned long)qc->pick_hits,
	       (unsigned long)qc->pick_misses);
}

/* A query with ECS of `family` at `source` bits of the address `text` (cut there). */
static uint16_t ecs_of(uint8_t *buf, const uint8_t *wname, size_t wlen, uint16_t type, int dob,
		       uint16_t family, unsigned int source, const char *text)
{
	uint8_t a[16];
	int v6;

	addr_of(text, a, &v6);
	assert_int_equal(v6, family == 2);
	for (unsigned int k = source; k < 128; k++)
		a[k / 8] = (uint8_t)(a[k / 8] & ~(0x80u >> (k % 8)));
	return ecs_query(buf, wname, wlen, type, dob, family, (uint8_t)source, 0, a, (source + 7) / 8);
}

/* In reply `out` (k bytes, IPv4 or IPv6 headers) the query's ECS `q` (its option last in ql
 * bytes) echoed: FAMILY, SOURCE and ADDRESS as sent; returns the SCOPE. */
static int echo_of(const uint8_t *out, int k, int v6, const uint8_t *q, uint16_t ql)
{
	const uint8_t *m = out + (v6 ? 62 : 42);
	uint16_t ml = (uint16_t)(k - (v6 ? 62 : 42));
	uint16_t o = ecs_at(m, ml), oq = ecs_at(q, ql);

	assert_int_not_equal(o, 0);
	assert_int_not_equal(oq, 0);
	assert_memory_equal(m + o, q + oq, 7);                  /* code, length, FAMILY, SOURCE */
	assert_memory_equal(m + o + 8, q + oq + 8, p53_get16(q + oq + 2) - 4u); /* ADDRESS */
	return m[o + 7];
}

/*
 * Steered answers to queries with ECS through the answer cache, each reply (the variant, the
 * ECS echoed with its SCOPE, the checksum) and the counters compared with the ones made
 * without a cache (cached_same()): ECS ADDRESSES in and out of the map's nested subnets at
 * each SOURCE length of interest (0, inside a subnet, wider, odd lengths), asked from
 * resolvers of both families in other subnets (the variant is the ADDRESS's; for SOURCE 0 the
 * resolver's, SCOPE 0), DO=0 and 1. Entries are stored and hit, with the SCOPE of a map subnet,
 * of a weighted bucket and 0 among the hits; each variant is picked per reply (qcache.h: not
 * from the pick cache).
 */
static void ecs_steered_cache(void **state)
{
	(void)state;
	static const char *const ecs4[] = {"198.51.100.7", "198.51.100.130", "203.0.113.9",
					   "10.1.2.3", "10.1.200.9", "10.2.0.1", "8.8.8.8", "8.8.8.200"};
	static const char *const ecs6[] = {"2001:db8:1::5", "2001:db8:1:2::9", "2001:db8:1:2::77",
					   "2001:db8:2::1", "2a00::1", "2a00::2:1"};
	static const char *const resolvers[] = {"10.2.0.1", "2001:db8:1::5", "198.51.100.7", "2a00::1"};
	static const unsigned int src4_len[] = {0, 8, 15, 16, 23, 24, 25, 26, 32};
	static const unsigned int src6_len[] = {0, 32, 47, 48, 56, 57, 63, 64, 128};
	const uint8_t *sn = (const uint8_t *)"\x07steered\x07" "example\x03" "com";
	static uint8_t out[4096];
	unsigned long hit_scopes[129] = {0}, asked = 0;
	uint8_t buf[512], a[16];
	int v6;

	struct p53_qcache *qc = steer_fresh();
	for (int fam = 1; fam <= 2; fam++) {
		const char *const *cl = fam == 1 ? ecs4 : ecs6;
		size_t ncl = fam == 1 ? sizeof(ecs4) / sizeof(ecs4[0]) : sizeof(ecs6) / sizeof(ecs6[0]);
		for (size_t si = 0; si < 9; si++)
			for (int dob = 0; dob < 2; dob++)
				for (int round = 0; round < 2; round++)
					for (size_t c = 0; c < ncl; c++) {
						unsigned int sl = fam == 1 ? src4_len[si] : src6_len[si];
						uint16_t l = ecs_of(buf, sn, 21, 1, dob, (uint16_t)fam, sl, cl[c]);
						const char *res = resolvers[(c + (size_t)round) % 4];
						addr_of(res, a, &v6);
						if (v6)
							memcpy(src6, a, 16);
						else
							memcpy(src4, a, 4);
						unsigned long hits = qc->hits;
						int k = cached_same(qc, buf, l, v6, out);
						assert_true(k >= P53_FAST_ANSWERED);
						int sc = echo_of(out, k, v6, buf, l);
						if (sl == 0)
							assert_int_equal(sc, 0);
						if (qc->hits > hits)
							hit_scopes[sc]++;
						asked++;
					}
	}
	printf("answer cache, steered with ECS: %lu asked, %lu hits; SCOPE among the hits 0: %lu, "
	       "15: %lu, 16: %lu, 24: %lu, 26: %lu, 47: %lu, 48: %lu, 56: %lu, 64: %lu\n", asked,
	       (unsigned long)qc->hits, hit_scopes[0],
	       hit_scopes[15], hit_scopes[16], hit_scopes[24], hit_scopes[26], hit_scopes[47],
	       hit_scopes[48], hit_scopes[56], hit_scopes[64]);
	assert_true(qc->hits > asked / 2);
	assert_int_equal(qc->pick_hits + qc->pick_misses, 0);
	assert_true(hit_scopes[0] > 0 && hit_scopes[16] > 0 && hit_scopes[24] > 0 && hit_scopes[26] > 0);
	assert_true(hit_scopes[48] > 0 && hit_scopes[56] > 0 && hit_scopes[64] > 0);
	memcpy(src4, "\xc0\x00\x02\x01", 4);
	addr_of("2001:db8:ffff::1", src6, &v6);
}

/*
 * A steered entry with ECS keeps its record (its table's generation and offset: a hit reads it
 * without the index's lookup); a table published since, whose record differs (the policy
 * [weighted] instead of [map, weighted], so other variants and scopes), is read instead: every
 * hit before and after the publish the uncached reply (cached_same()), the new table's, and
 * some replies change with it. A table of generation 0 (never published) is not kept.
 */
static void ecs_steered_republish(void **state)
{
	(void)state;
	static const char *const ecs[] = {"198.51.100.7", "198.51.100.130", "10.1.2.3", "203.0.113.9",
					  "2001:db8:1::5", "2001:db8:1:2::9", "2001:db8:2::1"};
	const uint8_t *sn = (const uint8_t *)"\x07steered\x07" "example\x03" "com";
	static uint8_t out[4096], before[7][2][4096];
	int kb[7][2], changed = 0;
	uint8_t buf[512];

	struct p53_qcache *qc = steer_fresh();
	memcpy(src4, "\xc0\x00\x02\x01", 4);
	for (int round = 0; round < 3; round++) {
		unsigned long hits = qc->hits;
		for (size_t c = 0; c < 7; c++)
			for (int dob = 0; dob < 2; dob++) {
				uint16_t fam = strchr(ecs[c], ':') ? 2 : 1;
				uint16_t l = ecs_of(buf, sn, 21, 1, dob, fam, fam == 2 ? 56 : 24, ecs[c]);
				int k = cached_same(qc, buf, l, 0, out);
				assert_true(k >= P53_FAST_ANSWERED);
				if (round < 2) {
					kb[c][dob] = k;
					memcpy(before[c][dob], out, (size_t)k);
				} else {
					changed += replies_differ(before[c][dob], kb[c][dob], out, k);
				}
			}
		if (round == 0) {
			/* the first question a miss, the rest of its shape hits (its key is the
			   family, SOURCE's length and DO, not the ADDRESS) */
			assert_true(qc->hits > hits);
		} else {
			assert_int_equal(qc->hits - hits, 14);
		}
		/* the entries' record as last found: in the table published now */
		for (uint32_t i = 0; i <= qc->mask; i++) {
			uint64_t rec[2];
			if (qc->e[i].gen == 0 || (qc->e[i].bits & (P53_QC_STEERED | P53_QC_ECS)) !=
						 (P53_QC_STEERED | P53_QC_ECS))
				continue;
			memcpy(rec, qc->e[i].ans + P53_QCACHE_STEER_REC, 16);
			assert_int_equal(rec[0], ((struct p53_steer_hdr *)steer_t)->generation);
		}
		if (round == 1) {
			steer_rec.policy[0] = P53_POLICY_WEIGHTED;
			steer_rec.n_policy = 1;
			steer_republish(-1);
		}
	}
	assert_true(changed > 0);
	/* generation 0: every hit looks the record up by its index, the replies the same */
	((struct p53_steer_hdr *)steer_t)->generation = 0;
	unsigned long hits = qc->hits;
	for (int round = 0; round < 2; round++)
		for (size_t c = 0; c < 7; c++) {
			uint16_t fam = strchr(ecs[c], ':') ? 2 : 1;
			uint16_t l = ecs_of(buf, sn, 21, 1, 0, fam, fam == 2 ? 56 : 24, ecs[c]);
			assert_true(cached_same(qc, buf, l, 0, out) >= P53_FAST_ANSWERED);
		}
	assert_int_equal(qc->hits - hits, 14);
	for (uint32_t i = 0; i <= qc->mask; i++) {
		uint64_t rec[2];
		memcpy(rec, qc->e[i].ans + P53_QCACHE_STEER_REC, 16);
		assert_true(qc->e[i].gen == 0 || !(qc->e[i].bits & P53_QC_ECS) ||
			    !(qc->e[i].bits & P53_QC_STEERED) || rec[0] != 0);
	}
	steer_rec.policy[0] = P53_POLICY_MAP;
	steer_rec.n_policy = 2;
	steer_republish(-1);
}

/* ---- queries with ECS through the caches ------------------------------------------------ */

/*
 * Static answers (an RRset, a wildcard's, a name error, NODATA, a referral) to queries with
 * ECS through the answer cache: each compared, reply and counters, with the one made without
 * a cache (cached_same(): the UDP checksum included). The third ask of a question with an ECS
 * of one FAMILY and SOURCE length is answered from the cache, then every other ADDRESS of that
 * length too, from IPv4 and IPv6 frames, its own ECS echoed with SCOPE 0; REFUSED (an EDE after
 * the ECS), a DO=1 referral and an answer over P53_QCACHE_MAX_RESPONSE are not stored.
 */
static void ecs_cache(void **state)
{
	(void)state;
	static const char *const names[] = {"diff.test.", "second.test."};
	static const char *const files[] = {"tests/differential/zones/diff.test.zone",
					    "tests/differential/zones/second.test.zone"};
	static const struct { const char *n; size_t l; uint16_t type; int stored; } qs[] = {
		{"\x03www\x04" "diff\x04" "test", 15, 1, 1},
		{"\x03WwW\x04" "diff\x04" "test", 15, 28, 1},
		{"\x03" "foo\x04" "wild\x04" "diff\x04" "test", 20, 1, 1},
		{"\x02nx\x04" "diff\x04" "test", 14, 1, 1},
		{"\x03www\x04" "diff\x04" "test", 15, 99, 1},
		{"\x04host\x03sub\x04" "diff\x04" "test", 20, 1, 2},    /* DO=0 only */
		{"\x03" "big\x04" "diff\x04" "test", 15, 1, 0},         /* 60 A: 1000 bytes */
		{"\x07" "example\x03" "org", 13, 1, 0},                 /* REFUSED */
	};
	static const struct { uint16_t family; unsigned int source; const char *a, *b; } es[] = {
		{1, 0, "0.0.0.0", "0.0.0.0"},
		{1, 23, "198.51.101.7", "10.1.2.3"},
		{1, 24, "198.51.100.7", "203.0.113.9"},
		{1, 31, "192.0.2.77", "8.8.8.8"},
		{1, 32, "192.0.2.1", "255.255.255.254"},
		{2, 0, "::", "::"},
		{2, 56, "2001:db8:1::5", "2a00::1"},
		{2, 57, "2001:db8:1:80::5", "2001:db8:ffff::1"},
		{2, 64, "2001:db8:1:2::9", "2001:db8:2::1"},
		{2, 127, "2001:db8::ffff", "2a00:1::1"},
		{2, 128, "2001:db8:1:2:3:4:5:6", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"},
	};
	static uint8_t out[4096];
	uint8_t buf[512];
	unsigned long echoed = 0;

	build(names, files, 2);
	struct p53_qcache *qc = cache64();
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		for (size_t j = 0; j < sizeof(es) / sizeof(es[0]); j++)
			for (int dob = 0; dob < 2; dob++) {
				const uint8_t *n = (const uint8_t *)qs[i].n;
				int stored = qs[i].stored == 1 || (qs[i].stored == 2 && !dob);
				p53_qcache_init(qc, 64);
				uint16_t l = ecs_of(buf, n, qs[i].l, qs[i].type, dob, es[j].family,
						    es[j].source, es[j].a);
				/* remembered, stored, answered from the cache; from IPv6 frames too */
				for (int ask = 0; ask < 4; ask++) {
					int v6 = ask == 3;
					int k = cached_same(qc, buf, l, v6, out);
					if (qc->hits != (stored && ask >= 2 ? (unsigned long)ask - 1 : 0))
						fail_msg("q %zu ecs %zu do %d ask %d: %lu hits, %lu stores, k %d", i, j, dob, ask, (unsigned long)qc->hits, (unsigned long)qc->stores, k);
					if (k >= P53_FAST_ANSWERED) {
						assert_int_equal(echo_of(out, k, v6, buf, l), 0);
						echoed++;
					}
				}
				assert_int_equal(qc->stores, stored);
				/* another ADDRESS of the length: the same entry, its own echo */
				l = ecs_of(buf, n, qs[i].l, qs[i].type, dob, es[j].family, es[j].source,
					   es[j].b);
				for (int v6 = 0; v6 < 2; v6++) {
					int k = cached_same(qc, buf, l, v6, out);
					assert_true(k >= P53_FAST_ANSWERED || !stored);
					if (k >= P53_FAST_ANSWERED)
						assert_int_equal(echo_of(out, k, v6, buf, l), 0);
				}
				assert_int_equal(qc->hits, stored ? 4 : 0);
				/* a SOURCE of another length (other bytes of OPT): its own entry */
				unsigned int other = es[j].family == 1 ? (es[j].source + 8) % 33
								       : (es[j].source + 16) % 129;
				l = ecs_of(buf, n, qs[i].l, qs[i].type, dob, es[j].family, other, es[j].a);
				cached_same(qc, buf, l, 0, out);
				assert_int_equal(qc->hits, stored ? 4 : 0);
				/* and without ECS: another key too */
				l = query(buf, n, qs[i].l, qs[i].type, 1232, dob, 0, 0);
				cached_same(qc, buf, l, 0, out);
				assert_int_equal(qc->hits, stored ? 4 : 0);
			}
	printf("answer cache with ECS: %lu replies with the ECS echoed checked\n", echoed);
	assert_true(echoed > 500);

	/* A referral to a query with a payload size below ours may lack optional glue another
	 * query's has (referral()): not stored, with ECS or without. */
	p53_qcache_init(qc, 64);
	uint16_t l = query(buf, (const uint8_t *)qs[5].n, qs[5].l, 1, 1232, 0, 0, 0);
	p53_put16(buf + l - 8, 600);                            /* the OPT's payload size */
	for (int ask = 0; ask < 3; ask++)
		assert_true(cached_same(qc, buf, l, 0, out) >= P53_FAST_ANSWERED);
	l = ecs_of(buf, (const uint8_t *)qs[5].n, qs[5].l, 1, 0, 1, 24, "198.51.100.7");
	p53_put16(buf + 12 + qs[5].l + 4 + 3, 600);
	for (int ask = 0; ask < 3; ask++)
		assert_true(cached_same(qc, buf, l, 0, out) >= P53_FAST_ANSWERED);
	assert_int_equal(qc->stores, 0);
	/* at ours, stored at once (its slot remembered the key's misses), then hits */
	p53_put16(buf + 12 + qs[5].l + 4 + 3, 1232);
	for (int ask = 0; ask < 3; ask++)
		cached_same(qc, buf, l, 0, out);
	assert_int_equal(qc->stores, 1);
	assert_int_equal(qc->hits, 2);
}

/* ---- the burst loop --------------------------------------------------------------------- */

#define BURST_N 7
#define BURST_ROOM 2048
#define BURST_HEAD 128

/* mbufs over static buffers (no pool: p53_fast_burst() reads and sets the fields alone) */
static struct rte_mbuf burst_m[BURST_N];
static uint8_t burst_buf[BURST_N][BURST_ROOM];

static void burst_fill(int i, const uint8_t *f, uint16_t fl, uint16_t segs, uint64_t l4)
{
	struct rte_mbuf *m = &burst_m[i];

	memset(m, 0, sizeof(*m));
	m->buf_addr = burst_buf[i];
	m->buf_len = BURST_ROOM;
	m->data_off = BURST_HEAD;
	m->data_len = fl;
	m->pkt_len = fl;
	m->nb_segs = segs;
	m->ol_flags = l4;
	memcpy(burst_buf[i] + BURST_HEAD, f, fl);
}

/*
 * p53_fast_burst() with the answer cache (its own loop, fast_burst_qc()) and without: a run of
 * hits with a frame the fast answer reads and declines (a CNAME: the general path's) in the middle, then one not read
 * (a bad L4 checksum flag, two segments): the loop stops at it with its outcome in *k, the
 * declined frame's packet fields as p53_fast_frame() gives them, the frames before it answered
 * in place (the bytes and the lengths of p53_fast_frame()'s replies, without a cache), counted
 * once each (`queries`, `msg`), each a hit; the rest of the burst after it the same.
 */
static void burst_loop(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	static uint8_t f[BURST_N][512], want[BURST_N][4096];
	static const uint16_t types[BURST_N] = {1, 28, 1, 1, 28, 1, 1};
	uint16_t fl[BURST_N];
	int k0[BURST_N];
	uint8_t buf[512];
	struct p53_answer_stats st, s0;
	struct p53_pkt pk0[BURST_N];
	build(names, files, 1);

	for (int i = 0; i < BURST_N; i++) {
		uint16_t l = query(buf, (const uint8_t *)(i == 2 ? "\x03" "cdn\x07" "example\x03" "com"
								 : "\x03www\x07" "example\x03" "com"),
				   17, types[i], 1232, 0, (unsigned int)i, 0);
		fl[i] = i & 1 ? frame6_of(f[i], buf, l, (uint16_t)(9000 + i), 0, 0)
			      : frame_of(f[i], buf, l, (uint16_t)(9000 + i), 0);
		struct p53_fast_ctx fx;
		struct p53_query q;
		memcpy(want[i], f[i], fl[i]);
		memset(&s0, 0, sizeof(s0));
		memset(&pk0[i], 0, sizeof(pk0[i]));
		assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &s0), 0);
		k0[i] = p53_fast_frame(&fx, &q, want[i], fl[i], BURST_ROOM - BURST_HEAD, 1, &pk0[i]);
		if (i == 2 ? k0[i] != P53_FAST_DECLINED : k0[i] < P53_FAST_ANSWERED)
			fail_msg("frame %d: %d", i, k0[i]);
	}
	for (int cached = 0; cached < 2; cached++) {
		struct p53_qcache *qc = cached ? cache64() : NULL;
		struct p53_fast_ctx fx;
		struct rte_mbuf *pkts[BURST_N], *out[BURST_N];
		struct p53_query q[BURST_N];
		struct p53_pkt pk[BURST_N];
		memset(&st, 0, sizeof(st));
		assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &st), 0);
		if (qc != NULL)
			p53_fast_ctx_cache(&fx, qc);
		/* twice through: remembered, stored; then every answered frame is a hit */
		for (int ask = 0; ask < 3; ask++) {
			unsigned long hits = qc != NULL ? qc->hits : 0;
			uint64_t queries = st.queries, ok = st.msg[P53_MSG_OK];
			for (int i = 0; i < BURST_N; i++) {
				burst_fill(i, f[i], fl[i], 1, i == 4 ? RTE_MBUF_F_RX_L4_CKSUM_BAD : 0);
				pkts[i] = &burst_m[i];
				out[i] = NULL;
			}
			memset(pk, 0, sizeof(pk));
			int k = -7;
			/* 0, 1 answered; 2 declined */
			assert_int_equal(p53_fast_burst(&fx, pkts, BURST_N, out, q, pk, &k), 2);
			assert_int_equal(k, P53_FAST_DECLINED);
			assert_memory_equal(&pk[2], &pk0[2], sizeof(pk[2]));
			/* 3 answered; 4 not read (its flag) */
			k = -7;
			assert_int_equal(p53_fast_burst(&fx, pkts + 3, BURST_N - 3, out + 3, q + 3, pk + 3, &k), 1);
			assert_int_equal(k, P53_FAST_NOT_READ);
			/* 5 not read (two segments) */
			burst_fill(5, f[5], fl[5], 2, 0);
			k = -7;
			assert_int_equal(p53_fast_burst(&fx, pkts + 5, 2, out + 5, q + 5, pk + 5, &k), 0);
			assert_int_equal(k, P53_FAST_NOT_READ);
			/* 6 answered, the burst's end */
			k = -7;
			assert_int_equal(p53_fast_burst(&fx, pkts + 6, 1, out + 6, q + 6, pk + 6, &k), 1);
			assert_int_equal(k, -7);
			for (int i = 0; i < BURST_N; i++) {
				if (i == 2 || i == 4 || i == 5) {
					assert_null(out[i]);
					continue;
				}
				assert_ptr_equal(out[i], &burst_m[i]);
				assert_int_equal(burst_m[i].data_len, k0[i]);
				assert_int_equal(burst_m[i].pkt_len, (uint32_t)k0[i]);
				assert_memory_equal(burst_buf[i] + BURST_HEAD, want[i], (size_t)k0[i]);
			}
			assert_int_equal(st.queries, queries + 4);
			assert_int_equal(st.msg[P53_MSG_OK], ok + 4);
			if (qc != NULL)
				assert_int_equal(qc->hits, hits + (ask < 2 ? 0 : 4));
		}
	}
}

/* A hit counts its question's type as fast_answer() does (answer.c count()): its own counter
 * below P53_QTYPE_BUCKETS - 1, the last one for any type above (qcache.h qbucket, set by the
 * store): NODATA for types 62, 63, 64, 65 (HTTPS) and 248 (the last the fast path reads),
 * each from the cache on the third pass, the counters those of the answer without it. */
static void cache_qtype_counter(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	static const uint16_t types[] = {62, 63, 64, 65, 248};
	static uint8_t f[512], out[4096];
	uint8_t buf[512];
	struct p53_answer_stats s0, st;
	build(names, files, 1);

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		uint16_t l = query(buf, (const uint8_t *)"\x03www\x07" "example\x03" "com", 17, types[t],
				   1232, 0, 0, 0);
		uint16_t fl = frame_of(f, buf, l, 4242, 0);
		struct p53_qcache *qc = cache64();
		int k = run_frame(NULL, f, fl, out, &s0, sizeof(out));
		if (k < P53_FAST_ANSWERED)
			fail_msg("type %u: %d", types[t], k);
		assert_int_equal(s0.qtype[types[t] < P53_QTYPE_BUCKETS - 1 ? types[t] : P53_QTYPE_BUCKETS - 1], 1);
		for (int pass = 0; pass < 3; pass++) {
			assert_true(run_frame(qc, f, fl, out, &st, sizeof(out)) >= P53_FAST_ANSWERED);
			assert_memory_equal(&st, &s0, sizeof(st));
		}
		assert_int_equal(qc->hits, 1);
	}
}

/* One frame through p53_fast_burst() with the answer cache `qc` (fast_burst_qc(): its IPv4
 * step or fast_mbuf_qc6()): the frames answered (0 or 1); *k as the loop left it. */
static int burst_one(struct p53_qcache *qc, const uint8_t *f, uint16_t fl, int *k)
{
	struct p53_fast_ctx fx;
	struct p53_answer_stats st;
	struct rte_mbuf *pkts[1] = {&burst_m[0]}, *out[1];
	struct p53_query q[1];
	struct p53_pkt pk[1];

	memset(&st, 0, sizeof(st));
	assert_int_equal(p53_fast_ctx_init(&fx, mac_us, &addrs, img, &conf, &st), 0);
	p53_fast_ctx_cache(&fx, qc);
	burst_fill(0, f, fl, 1, 0);
	*k = -7;
	return p53_fast_burst(&fx, pkts, 1, out, q, pk, k);
}

/*
 * pkt.c p53_pkt_for_us() in the fast parse (fastpath.c ours4(), ours6()): a frame to any of
 * the service addresses of its family is answered, the first or a later one, through
 * p53_fast_frame() with and without the answer cache and through the cached burst loop (a
 * miss, a store and hits); one to another address is not read, nor one to the first entry
 * of an empty set (n4 or n6 0: what v4[0] / v6[0] hold is no address of ours).
 */
static void service_addrs(void **state)
{
	(void)state;
	static const char *const names[] = {"example.com."};
	static const char *const files[] = {"zones/example.com.zone"};
	static uint8_t f[512], out[4096];
	uint8_t buf[512];
	struct p53_answer_stats st;
	const struct p53_pkt_addrs saved = addrs;
	build(names, files, 1);

	uint16_t l = query(buf, (const uint8_t *)"\x03www\x07" "example\x03" "com", 17, 1, 1232, 0, 7, 0);
	addrs.n4 = 2;
	addrs.v4[1] = 0x360200c0u;      /* 192.0.2.54 */
	addrs.n6 = 2;
	memcpy(addrs.v6[1], dst6, 16);
	addrs.v6[1][15] = 0x54;
	for (int v6 = 0; v6 < 2; v6++) {
		/* the destination's last byte: 0x53 the first address, 0x54 the second, 0x55
		   none; then 0x53 with an empty set */
		for (int t = 0; t < 4; t++) {
			uint16_t fl;
			if (v6) {
				fl = frame6_of(f, buf, l, 5353, 0, 0);
				f[14 + 24 + 15] = t == 1 ? 0x54 : t == 2 ? 0x55 : 0x53;
				put_csum(f + 14 + 40, (uint16_t)(8 + l), f + 14 + 8, 32, 0);
			} else {
				fl = frame_of(f, buf, l, 5353, 0);
				f[14 + 19] = t == 1 ? 0x36 : t == 2 ? 0x37 : 0x35;
				put_csum(f + 14 + 20, (uint16_t)(8 + l), f + 14 + 12, 8, 0);
			}
			if (t == 3) {
				addrs.n4 = 0;
				addrs.n6 = 0;
			}
			int ours = t < 2;
			struct p53_qcache *qc = cache64();
			int r = run_frame(NULL, f, fl, out, &st, sizeof(out));
			if (ours ? r < P53_FAST_ANSWERED : r != P53_FAST_NOT_READ)
				fail_msg("v6 %d, address %d: p53_fast_frame() %d", v6, t, r);
			for (int ask = 0; ask < 3; ask++) {
				assert_int_equal(run_frame(qc, f, fl, out, &st, sizeof(out)), r);
				int k, n = burst_one(qc, f, fl, &k);
				assert_int_equal(n, ours);
				assert_int_equal(k, ours ? -7 : P53_FAST_NOT_READ);
				if (ours)
					assert_int_equal(burst_m[0].data_len, r);
			}
			if (ours)
				assert_true(qc->hits >= 4);     /* the cache's own parse saw them */
			addrs.n4 = 2;
			addrs.n6 = 2;
		}
	}
	addrs = saved;
}

static int setup(void **state)
{
	(void)state;
	conf.identity = (const uint8_t *)"unit-pop";
	conf.identity_len = 8;
	conf.edns_max_payload = 1232;
	addrs.v4[0] = 0x350200c0u; /* 192.0.2.53 as on the wire, little-endian load */
	memcpy(addrs.v6[0], dst6, 16);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(img);
	free(ref);
	free(sums);
	free(steer_t);
	free(steer_conf.map);
	if (steer_dir[sizeof(steer_dir) - 7] != 'X') {
		char path[256];
		snprintf(path, sizeof(path), "%s/map.json", steer_dir);
		unlink(path);
		rmdir(steer_dir);
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diff_zones),
		cmocka_unit_test(small_zone),
		cmocka_unit_test(signed_zones),
		cmocka_unit_test(neg_opt_template),
		cmocka_unit_test(label_lengths),
		cmocka_unit_test(declines),
		cmocka_unit_test(steered),
		cmocka_unit_test(bad_ecs),
		cmocka_unit_test(pick_scope_holds),
		cmocka_unit_test(pick_cache),
		cmocka_unit_test(ecs_steered_cache),
		cmocka_unit_test(ecs_steered_republish),
		cmocka_unit_test(answer_cache),
		cmocka_unit_test(answer_cache_run),
		cmocka_unit_test(answer_cache_burst_run),
		cmocka_unit_test(answer_cache_run_kept),
		cmocka_unit_test(burst_run_counts),
		cmocka_unit_test(encloser_memo),
		cmocka_unit_test(nx_tail),
		cmocka_unit_test(nx_frame_shape),
		cmocka_unit_test(ecs_cache),
		cmocka_unit_test(hit_path),
		cmocka_unit_test(hit_checksum),
		cmocka_unit_test(burst_loop),
		cmocka_unit_test(service_addrs),
		cmocka_unit_test(cache_qtype_counter),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
