/*
 * The responder over a compiled image: each semantic case of RFC 1034 §4.3.2 and what followed,
 * checked on the decoded response (rcode, flags, and every record of every section). The zones
 * are the differential test's (tests/differential/zones), compiled by the real compiler.
 */
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
#include "dataplane/image.h"

static void *img;
static struct p53_answer_conf conf;

/* A decoded response: records as "owner type ttl rdata-hex" strings, per section. */
struct rr {
	char owner[256];
	uint16_t type, cls;
	uint32_t ttl;
	uint16_t rdlen;
	uint8_t rdata[512];
	char target[256];       /* decoded name for NS/CNAME/DNAME/MX RDATA */
};

struct resp {
	uint16_t flags;
	uint16_t count[4];
	char qname[256];
	struct rr rrs[3][128];
	uint16_t len;
};

/* Decode a possibly compressed name at off; the test's own decoder, independent of pop53's. */
static int get_name(const uint8_t *m, uint16_t len, uint16_t off, char *out, uint16_t *next)
{
	int jumped = 0, hops = 0;
	size_t o = 0;

	out[0] = '\0';
	for (;;) {
		if (off >= len || hops++ > 100)
			return -1;
		uint8_t l = m[off];
		if ((l & 0xc0) == 0xc0) {
			if (!jumped && next != NULL)
				*next = (uint16_t)(off + 2);
			jumped = 1;
			off = (uint16_t)((l & 0x3f) << 8 | m[off + 1]);
			continue;
		}
		if (l == 0) {
			if (!jumped && next != NULL)
				*next = (uint16_t)(off + 1);
			if (o == 0)
				strcpy(out, ".");
			return 0;
		}
		memcpy(out + o, m + off + 1, l);
		o += l;
		out[o++] = '.';
		out[o] = '\0';
		off = (uint16_t)(off + 1 + l);
	}
}

static void decode(const uint8_t *m, uint16_t len, struct resp *r)
{
	uint16_t off = 12;

	memset(r, 0, sizeof(*r));
	assert_true(len >= 12);
	r->len = len;
	r->flags = (uint16_t)(m[2] << 8 | m[3]);
	for (int i = 0; i < 4; i++)
		r->count[i] = (uint16_t)(m[4 + 2 * i] << 8 | m[5 + 2 * i]);
	if (r->count[0] == 1) {
		assert_int_equal(get_name(m, len, off, r->qname, &off), 0);
		off += 4;
	}
	for (int s = 0; s < 3; s++) {
		for (int i = 0; i < r->count[s + 1]; i++) {
			struct rr *rr = &r->rrs[s][i];
			assert_int_equal(get_name(m, len, off, rr->owner, &off), 0);
			assert_true(off + 10 <= len);
			rr->type = (uint16_t)(m[off] << 8 | m[off + 1]);
			rr->cls = (uint16_t)(m[off + 2] << 8 | m[off + 3]);
			rr->ttl = (uint32_t)m[off + 4] << 24 | (uint32_t)m[off + 5] << 16 | (uint32_t)m[off + 6] << 8 | m[off + 7];
			rr->rdlen = (uint16_t)(m[off + 8] << 8 | m[off + 9]);
			off += 10;
			assert_true(off + rr->rdlen <= len);
			memcpy(rr->rdata, m + off, rr->rdlen < sizeof(rr->rdata) ? rr->rdlen : sizeof(rr->rdata));
			if (rr->type == 2 || rr->type == 5 || rr->type == 39)
				get_name(m, len, off, rr->target, NULL);
			else if (rr->type == 15)
				get_name(m, len, (uint16_t)(off + 2), rr->target, NULL);
			off = (uint16_t)(off + rr->rdlen);
		}
	}
	assert_int_equal(off, len); /* nothing after the last record */
}

/* Build a query for name/type; edns = payload size or 0 for none. */
static uint16_t query(uint8_t *buf, const char *name, uint16_t type, uint16_t qclass, uint16_t edns)
{
	uint16_t off = 12;

	memset(buf, 0, 12);
	buf[0] = 0xab;
	buf[1] = 0xcd;
	buf[2] = 0x01; /* RD */
	buf[5] = 1;
	while (*name != '\0') {
		const char *dot = strchr(name, '.');
		size_t l = dot != NULL ? (size_t)(dot - name) : strlen(name);
		buf[off++] = (uint8_t)l;
		memcpy(buf + off, name, l);
		off = (uint16_t)(off + l);
		name += l + (dot != NULL);
	}
	buf[off++] = 0;
	buf[off++] = (uint8_t)(type >> 8);
	buf[off++] = (uint8_t)type;
	buf[off++] = (uint8_t)(qclass >> 8);
	buf[off++] = (uint8_t)qclass;
	if (edns != 0) {
		buf[11] = 1;
		uint8_t opt[11] = {0, 0, 41, (uint8_t)(edns >> 8), (uint8_t)edns, 0, 0, 0, 0, 0, 0};
		memcpy(buf + off, opt, sizeof(opt));
		off += sizeof(opt);
	}
	return off;
}

static void ask(const char *name, uint16_t type, uint16_t edns, struct resp *r)
{
	static uint8_t buf[8192];
	struct p53_answer_stats st;

	memset(&st, 0, sizeof(st));
	uint16_t len = query(buf, name, type, 1, edns);
	uint16_t n = p53_answer(img, &conf, buf, len, sizeof(buf), &st);
	assert_true(n >= 12);
	decode(buf, n, r);
	if (edns == 0)
		assert_true(n <= 512);
	else
		assert_true(n <= (edns < 512 ? 512 : edns));
}

#define RCODE(r) ((r)->flags & 0xf)
#define AA(r) (((r)->flags & 0x0400) != 0)
#define TC(r) (((r)->flags & 0x0200) != 0)
enum { AN = 0, NS = 1, AR = 2 };

static int has(const struct resp *r, int sec, const char *owner, uint16_t type)
{
	int n = 0;
	for (int i = 0; i < r->count[sec + 1]; i++)
		if (strcasecmp(r->rrs[sec][i].owner, owner) == 0 && r->rrs[sec][i].type == type)
			n++;
	return n;
}

static int setup(void **state)
{
	(void)state;
	char err[512];
	char f1[512], f2[512];
	size_t len;

	snprintf(f1, sizeof(f1), "%s/tests/differential/zones/diff.test.zone", P53_SRCDIR);
	snprintf(f2, sizeof(f2), "%s/tests/differential/zones/second.test.zone", P53_SRCDIR);
	struct p53_zone_src zones[2] = {{.name = "diff.test.", .file = f1}, {.name = "second.test.", .file = f2}};
	img = p53_image_build(zones, 2, &len, err, sizeof(err), NULL, NULL);
	if (img == NULL)
		fprintf(stderr, "build failed: %s\n", err);
	assert_non_null(img);
	assert_int_equal(p53_image_check(img, len), 0);
	conf.identity = (const uint8_t *)"unit-pop";
	conf.identity_len = 8;
	conf.edns_max_payload = 1232;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(img);
	return 0;
}

static void test_exact(void **state)
{
	(void)state;
	struct resp r;
	ask("www.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_true(AA(&r));
	assert_int_equal(r.count[1], 1);
	assert_int_equal(has(&r, AN, "www.diff.test.", 1), 1);
	assert_int_equal(r.rrs[AN][0].ttl, 300);
	assert_memory_equal(r.rrs[AN][0].rdata, "\xc0\x00\x02\x50", 4);
	assert_int_equal(r.count[2], 0);        /* minimal: no NS in authority */
	assert_int_equal(r.count[3], 1);        /* only the OPT */
}

static void test_case_kept(void **state)
{
	(void)state;
	struct resp r;
	ask("mIxEd.DIFF.test", 28, 0, &r);
	assert_string_equal(r.qname, "mIxEd.DIFF.test.");
	assert_int_equal(has(&r, AN, "mixed.diff.test.", 28), 1);
}

static void test_cname_chain(void **state)
{
	(void)state;
	struct resp r;
	ask("chain1.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(has(&r, AN, "chain1.diff.test.", 5), 1);
	assert_int_equal(has(&r, AN, "chain2.diff.test.", 5), 1);
	assert_int_equal(has(&r, AN, "chain3.diff.test.", 5), 1);
	assert_int_equal(has(&r, AN, "www.diff.test.", 1), 1);
	assert_string_equal(r.rrs[AN][0].target, "chain2.diff.test.");
}

static void test_cname_loop_ends(void **state)
{
	(void)state;
	struct resp r;
	ask("loop-a.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_true(r.count[1] >= 2 && r.count[1] <= 10);
	ask("self.diff.test", 1, 1232, &r);
	assert_true(r.count[1] >= 1 && r.count[1] <= 10);
}

static void test_cname_out_of_zone(void **state)
{
	(void)state;
	struct resp r;
	ask("outside.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 1);
	assert_string_equal(r.rrs[AN][0].target, "www.example.net.");
	assert_int_equal(r.count[2], 0);
}

static void test_cname_type_itself(void **state)
{
	(void)state;
	struct resp r;
	ask("chain1.diff.test", 5, 1232, &r);
	assert_int_equal(r.count[1], 1);
	assert_int_equal(has(&r, AN, "chain1.diff.test.", 5), 1);
}

static void test_wildcard(void **state)
{
	(void)state;
	struct resp r;
	ask("anything.wild.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_true(AA(&r));
	assert_int_equal(has(&r, AN, "anything.wild.diff.test.", 1), 1);
	assert_int_equal(r.rrs[AN][0].ttl, 120);
	/* wildcard NODATA */
	ask("anything.wild.diff.test", 28, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 0);
	assert_int_equal(has(&r, NS, "diff.test.", 6), 1);
	/* the explicit name wins over the wildcard */
	ask("explicit.wild.diff.test", 1, 1232, &r);
	assert_memory_equal(r.rrs[AN][0].rdata, "\xc0\x00\x02\x62", 4);
	/* an ENT under the wildcard's parent blocks it (RFC 4592 §2.2.2) */
	ask("blocked.wild.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 0);
	ask("other.blocked.wild.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 3);
}

static void test_wildcard_cname(void **state)
{
	(void)state;
	struct resp r;
	ask("x.wcname.diff.test", 1, 1232, &r);
	assert_int_equal(has(&r, AN, "x.wcname.diff.test.", 5), 1);
	assert_int_equal(has(&r, AN, "www.diff.test.", 1), 1);
}

static void test_negative(void **state)
{
	(void)state;
	struct resp r;
	ask("nope.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 3);
	assert_true(AA(&r));
	assert_int_equal(r.count[1], 0);
	assert_int_equal(has(&r, NS, "diff.test.", 6), 1);
	assert_int_equal(r.rrs[NS][0].ttl, 300); /* min(1800, 300) */
	/* NODATA at an existing name */
	ask("www.diff.test", 16, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 0);
	assert_int_equal(r.rrs[NS][0].ttl, 300);
	/* NODATA at an empty non-terminal, NXDOMAIN below it */
	ask("ent.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(has(&r, NS, "diff.test.", 6), 1);
	ask("y.ent.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 3);
	ask("c.deep.diff.test", 16, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
}

static void test_referral(void **state)
{
	(void)state;
	struct resp r;
	ask("host.sub.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_false(AA(&r));
	assert_int_equal(r.count[1], 0);
	assert_int_equal(has(&r, NS, "sub.diff.test.", 2), 2);
	assert_int_equal(has(&r, AR, "ns1.sub.diff.test.", 1), 1);
	assert_int_equal(has(&r, AR, "ns1.sub.diff.test.", 28), 1);
	/* the glue name itself is below the cut: a referral too */
	ask("ns1.sub.diff.test", 1, 1232, &r);
	assert_false(AA(&r));
	assert_int_equal(has(&r, NS, "sub.diff.test.", 2), 2);
	/* DS at the cut is the parent's (RFC 4035 §3.1.4.1): authoritative NODATA */
	ask("sub.diff.test", 43, 1232, &r);
	assert_true(AA(&r));
	assert_int_equal(has(&r, NS, "diff.test.", 6), 1);
}

static void test_dname(void **state)
{
	(void)state;
	struct resp r;
	ask("host.dname.diff.test", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(has(&r, AN, "dname.diff.test.", 39), 1);
	assert_int_equal(has(&r, AN, "host.dname.diff.test.", 5), 1);
	assert_int_equal(has(&r, AN, "host.target.diff.test.", 1), 1);
	for (int i = 0; i < r.count[1]; i++)
		if (r.rrs[AN][i].type == 5)
			assert_string_equal(r.rrs[AN][i].target, "host.target.diff.test.");
	/* the DNAME owner's own data is not rewritten */
	ask("dname.diff.test", 39, 1232, &r);
	assert_int_equal(r.count[1], 1);
	/* a synthesized name over 255 bytes is YXDOMAIN (RFC 6672 §2.2) */
	char longname[300];
	snprintf(longname, sizeof(longname), "%s.%s.%s.%s.dname.diff.test",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"); /* qname 255 bytes */
	ask(longname, 1, 1232, &r);
	assert_int_equal(RCODE(&r), 6);
}

static void test_additional(void **state)
{
	(void)state;
	struct resp r;
	ask("diff.test", 15, 1232, &r);
	assert_int_equal(has(&r, AN, "diff.test.", 15), 2);
	assert_int_equal(has(&r, AR, "mail.diff.test.", 1), 1);
	assert_int_equal(has(&r, AR, "mail.diff.test.", 28), 1);
	ask("diff.test", 2, 1232, &r);
	assert_int_equal(has(&r, AR, "ns1.diff.test.", 1), 1);
	assert_int_equal(has(&r, AR, "ns2.diff.test.", 28), 1);
}

static void test_any(void **state)
{
	(void)state;
	struct resp r;
	ask("diff.test", 255, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_true(r.count[1] >= 1);
	for (int i = 1; i < r.count[1]; i++)   /* RFC 8482: one RRset */
		assert_int_equal(r.rrs[AN][i].type, r.rrs[AN][0].type);
}

static void test_truncation(void **state)
{
	(void)state;
	struct resp r;
	ask("big.diff.test", 1, 0, &r);         /* no EDNS: 512 bytes */
	assert_true(TC(&r));
	assert_int_equal(r.count[1], 0);        /* whole RRsets only */
	ask("big.diff.test", 1, 1232, &r);
	assert_false(TC(&r));
	assert_true(r.count[1] >= 60);
	ask("big.diff.test", 1, 100, &r);       /* clamped up to 512 */
	assert_true(TC(&r));
}

static void test_refused_and_second_zone(void **state)
{
	(void)state;
	struct resp r;
	ask("example.org", 1, 1232, &r);
	assert_int_equal(RCODE(&r), 5);
	assert_false(AA(&r));
	ask("second.test", 6, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(has(&r, AN, "second.test.", 6), 1);
}

static void test_chaos(void **state)
{
	(void)state;
	static uint8_t buf[512];
	struct p53_answer_stats st;
	struct resp r;

	memset(&st, 0, sizeof(st));
	uint16_t len = query(buf, "id.server", 16, 3, 0);
	uint16_t n = p53_answer(img, &conf, buf, len, sizeof(buf), &st);
	decode(buf, n, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 1);
	assert_int_equal(r.rrs[AN][0].cls, 3);
	assert_memory_equal(r.rrs[AN][0].rdata, "\x08unit-pop", 9);
	len = query(buf, "version.bind", 16, 3, 0);
	n = p53_answer(img, &conf, buf, len, sizeof(buf), &st);
	decode(buf, n, &r);
	assert_int_equal(RCODE(&r), 5);         /* no version configured */
}

/* Hostile input (issue 10) that needs zone data to show the RFC's answer. */

/* A NUL byte is an ordinary octet inside a label (RFC 2181 §11): no such name, NXDOMAIN, and
 * the question goes back byte for byte. */
static void test_nul_in_label(void **state)
{
	(void)state;
	static const uint8_t q[] = {0xab, 0xcd, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
		3, 'a', 0, 'b', 4, 'd', 'i', 'f', 'f', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1};
	static uint8_t buf[1024];
	struct p53_answer_stats st;
	struct resp r;

	memset(&st, 0, sizeof(st));
	memcpy(buf, q, sizeof(q));
	uint16_t n = p53_answer(img, &conf, buf, sizeof(q), sizeof(buf), &st);
	decode(buf, n, &r);
	assert_int_equal(RCODE(&r), 3);
	assert_true(AA(&r));
	assert_int_equal(has(&r, NS, "diff.test.", 6), 1);
	assert_memory_equal(buf + 12, q + 12, sizeof(q) - 12);
}

/* TKEY (RFC 2930) over UDP without a TKEY record: a defined reply, NODATA with the SOA, as
 * Knot answers it. */
static void test_tkey_udp(void **state)
{
	(void)state;
	struct resp r;

	ask("www.diff.test", 249, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_true(AA(&r));
	assert_int_equal(r.count[1], 0);
	assert_int_equal(has(&r, NS, "diff.test.", 6), 1);
}

/* EDNS version 1 with DO and an unknown option: BADVERS and no answer (RFC 6891 §6.1.3), even
 * for a name with data. */
static void test_badvers_no_answer(void **state)
{
	(void)state;
	static uint8_t buf[2048];
	struct p53_answer_stats st;
	struct resp r;

	memset(&st, 0, sizeof(st));
	uint16_t len = query(buf, "www.diff.test", 1, 1, 1232);
	buf[len - 5] = 1;                       /* OPT TTL: version 1 */
	buf[len - 4] = 0x80;                    /* DO */
	static const uint8_t unknown[] = {0xfe, 0xed, 0, 2, 9, 9};
	buf[len - 1] = sizeof(unknown);         /* RDLENGTH */
	memcpy(buf + len, unknown, sizeof(unknown));
	len = (uint16_t)(len + sizeof(unknown));
	uint16_t n = p53_answer(img, &conf, buf, len, sizeof(buf), &st);
	decode(buf, n, &r);
	assert_int_equal(RCODE(&r), 0);         /* BADVERS is 16: 0 here, 1 in the OPT */
	assert_int_equal(r.count[1] + r.count[2], 0);
	assert_int_equal(r.count[3], 1);
	assert_int_equal(r.rrs[AR][0].type, 41);
	assert_int_equal(r.rrs[AR][0].ttl >> 24, 1);
	assert_int_equal(st.rcode[16], 1);
}

/* A response of exactly the client's payload size goes out whole; one byte less and the
 * RRset no longer fits: TC=1 (RFC 6891 §6.2.3, RFC 2181 §9). */
static void test_exact_fit(void **state)
{
	(void)state;
	struct resp r;

	ask("big.diff.test", 1, 1232, &r);
	assert_false(TC(&r));
	uint16_t size = r.len;
	assert_true(size > 512 && size <= 1232);
	ask("big.diff.test", 1, size, &r);
	assert_int_equal(r.len, size);
	assert_false(TC(&r));
	assert_int_equal(r.count[1], has(&r, AN, "big.diff.test.", 1));
	ask("big.diff.test", 1, (uint16_t)(size - 1), &r);
	assert_true(TC(&r));
	assert_int_equal(r.count[1], 0);
	assert_true(r.len <= size - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_case_kept),
		cmocka_unit_test(test_cname_chain),
		cmocka_unit_test(test_cname_loop_ends),
		cmocka_unit_test(test_cname_out_of_zone),
		cmocka_unit_test(test_cname_type_itself),
		cmocka_unit_test(test_wildcard),
		cmocka_unit_test(test_wildcard_cname),
		cmocka_unit_test(test_negative),
		cmocka_unit_test(test_referral),
		cmocka_unit_test(test_dname),
		cmocka_unit_test(test_additional),
		cmocka_unit_test(test_any),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_refused_and_second_zone),
		cmocka_unit_test(test_chaos),
		cmocka_unit_test(test_nul_in_label),
		cmocka_unit_test(test_tkey_udp),
		cmocka_unit_test(test_badvers_no_answer),
		cmocka_unit_test(test_exact_fit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
