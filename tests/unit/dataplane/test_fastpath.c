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

#include "control/zone/image_build.h"
#include "dataplane/answer.h"
#include "dataplane/fastpath.h"
#include "dataplane/image.h"
#include "dataplane/pkt.h"

static void *img;
static struct p53_answer_conf conf;
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
		/* Declined: nothing counted, header and question untouched. */
		struct p53_answer_stats zero;
		memset(&zero, 0, sizeof(zero));
		assert_memory_equal(&sb, &zero, sizeof(zero));
		if (ms == P53_MSG_OK)
			assert_memory_equal(b, q, pq.question_end);
		n_general++;
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
static struct p53_pkt_addrs addrs = {.n4 = 1};
static unsigned long n_frames_fast;

/* The query in an IPv4/UDP frame to 192.0.2.53, from 192.0.2.1, with a right checksum (or a
 * wrong one: `bad`); the checksum by the test's own 16-bit RFC 1071 loop. */
static uint16_t frame_of(uint8_t *f, const uint8_t *q, uint16_t len, uint16_t sport, int bad)
{
	uint8_t *ip = f + 14, *u = ip + 20;
	uint16_t ulen = (uint16_t)(8 + len);
	uint32_t sum = 0;

	memcpy(f, mac_us, 6);
	memcpy(f + 6, mac_them, 6);
	f[12] = 0x08;
	f[13] = 0;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (uint8_t)((20 + ulen) >> 8);
	ip[3] = (uint8_t)(20 + ulen);
	ip[8] = 57;
	ip[9] = 17;
	memcpy(ip + 12, "\xc0\x00\x02\x01\xc0\x00\x02\x35", 8);
	u[0] = (uint8_t)(sport >> 8);
	u[1] = (uint8_t)sport;
	u[2] = 0;
	u[3] = 53;
	u[4] = (uint8_t)(ulen >> 8);
	u[5] = (uint8_t)ulen;
	u[6] = u[7] = 0;
	memcpy(u + 8, q, len);
	for (int i = 0; i < 8; i += 2)
		sum += (uint32_t)(ip[12 + i] << 8 | ip[13 + i]);
	sum += 17 + ulen;
	for (uint16_t i = 0; i < ulen; i += 2)
		sum += (uint32_t)(u[i] << 8 | (i + 1 < ulen ? u[i + 1] : 0));
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	uint16_t c = (uint16_t)~sum;
	if (c == 0)
		c = 0xffff;
	c = (uint16_t)(c ^ (bad ? 0x0100 : 0));
	if (c == 0)
		c = 1;  /* still wrong, and not "no checksum" (RFC 768) */
	u[6] = (uint8_t)(c >> 8);
	u[7] = (uint8_t)c;
	return (uint16_t)(42 + len);
}

/* The whole frame both ways: the general checks, parser, responder and p53_pkt_reply, and
 * p53_fast_parse, p53_fast_answer and p53_fast_reply; the same frame out, byte for byte. */
static void frames(const uint8_t *q, uint16_t len, uint16_t sport)
{
	static uint8_t a[2048], b[2048];
	struct p53_pkt pa, pb;
	struct p53_query qa, qb;
	struct p53_answer_stats sa, sb;
	uint64_t keep;

	if (len > 1400)
		return;
	for (int bad = 0; bad < 2; bad++) {
		uint16_t fl = frame_of(a, q, len, sport, bad);
		memcpy(b, a, fl);
		int ok = p53_pkt_parse(a, fl, &pa) == P53_PKT_OK &&
			 p53_pkt_for_us(a, &pa, mac_us, &addrs) == P53_PKT_OK && p53_pkt_udp_csum_ok(a, &pa);
		int fast = p53_fast_parse(b, fl, 1, mac_us, &addrs, &pb, &qb, &keep);
		assert_memory_equal(a, b, fl); /* nothing written */
		if (!fast)
			continue;
		/* What the fast parse accepts the general one accepts, and reads the same. */
		assert_true(ok);
		assert_false(bad);
		assert_int_equal(p53_msg_parse(a + pa.dns_off, pa.dns_len, &qa), P53_MSG_OK);
		assert_memory_equal(&pa, &pb, sizeof(pa));
		assert_int_equal(qa.id, qb.id);
		assert_int_equal(qa.flags, qb.flags);
		assert_int_equal(qa.arcount, qb.arcount);
		assert_int_equal(qa.qtype, qb.qtype);
		assert_int_equal(qa.qclass, qb.qclass);
		assert_int_equal(qa.question_end, qb.question_end);
		assert_int_equal(qa.trailing, qb.trailing);
		assert_int_equal(qa.hash, qb.hash);
		assert_int_equal(qa.qname_len, qb.qname_len);
		assert_int_equal(qa.qname_labels, qb.qname_labels);
		assert_memory_equal(qa.label_off, qb.label_off, qa.qname_labels + 1u);
		assert_memory_equal(qa.lname, qb.lname, qa.qname_len);
		assert_int_equal(qa.edns, qb.edns);
		if (qa.edns) {
			assert_int_equal(qa.edns_payload, qb.edns_payload);
			assert_int_equal(qa.edns_version, qb.edns_version);
			assert_int_equal(qa.edns_do, qb.edns_do);
		}
		assert_int_equal(qa.nsid | qa.ecs | qa.cookie | qa.keepalive | qa.tsig, 0);
		assert_int_equal(qb.nsid | qb.ecs | qb.cookie | qb.keepalive | qb.tsig, 0);
		n_frames_fast++;
		memset(&sa, 0, sizeof(sa));
		memset(&sb, 0, sizeof(sb));
		uint16_t rb = p53_fast_answer(img, &conf, b + pb.dns_off, 1500, &sb, &qb);
		if (rb == 0)
			continue;
		uint16_t ra = p53_answer_parsed(img, &conf, a + pa.dns_off, 1500, &sa, &qa, P53_MSG_OK);
		size_t fa = p53_pkt_reply(a, &pa, ra, 0);
		size_t fb = p53_fast_reply(b, &pb, rb, &qb, keep);
		assert_int_equal(fa, fb);
		assert_memory_equal(a, b, fa);
	}
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
	img = p53_image_build(z, n, &len, err, sizeof(err), NULL, NULL);
	if (img == NULL)
		fprintf(stderr, "build failed: %s\n", err);
	assert_non_null(img);
	assert_int_equal(p53_image_check(img, len, NULL), 0);
}

static const uint16_t types[] = {1, 28, 16, 15, 2, 6, 5, 33, 12, 13, 257, 99, 39, 43, 46, 47, 50,
				 255, 252, 251, 41, 0};
static const uint16_t payloads[] = {0, 512, 1232, 4096, 100, 600};
static const uint16_t caps[] = {8192, 1500, 512, 60, 40};

static struct p53_fast_neg neg[16];

/* Every node of the image: its name, a name below it, a name two labels below it; with the
 * negative-answer templates a replica has (control/publish.c) and without them. */
static void every_name_once(void);

static void every_name(void)
{
	assert_true(p53_fast_neg_count(img) <= 16);
	p53_fast_neg_build(img, neg);
	conf.neg = NULL;
	conf.n_neg = 0;
	every_name_once();
	conf.neg = neg;
	conf.n_neg = (uint32_t)p53_fast_neg_count(img);
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
		const uint8_t *nm = p53_image_name(img, n->name_off);
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
	printf("fast path: %lu frames read by p53_fast_parse\n", n_frames_fast);
	printf("fast path: %lu queries answered fast (%lu referrals), %lu declined\n", n_fast,
	       fast_kind[P53_ANS_REFERRAL], n_general);
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

static int setup(void **state)
{
	(void)state;
	conf.identity = (const uint8_t *)"unit-pop";
	conf.identity_len = 8;
	conf.edns_max_payload = 1232;
	addrs.v4[0] = 0x350200c0u; /* 192.0.2.53 as on the wire, little-endian load */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(img);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diff_zones),
		cmocka_unit_test(small_zone),
		cmocka_unit_test(signed_zones),
		cmocka_unit_test(declines),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
