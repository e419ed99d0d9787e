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
#include <unistd.h>

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
		if (off >= len || hops++ > 300) /* labels and pointers: 127 + a few */
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

static struct p53_answer_stats st; /* the last ask()'s counters */

static void ask(const char *name, uint16_t type, uint16_t edns, struct resp *r)
{
	static uint8_t buf[8192];

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
	assert_int_equal(p53_image_check(img, len, NULL), 0);
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

/* A wildcard that owns NS (second.test's *.wns): like Knot, the names it would expand to get a
 * referral from the wildcard itself (RFC 4592 §4.2 leaves it undefined): AA=0, the NS owned
 * by "*.wns", not by the name (nothing in authority is synthesized), the in-zone target's
 * addresses in additional. DS is the wildcard's data: authoritative NODATA. */
static void test_wildcard_ns(void **state)
{
	(void)state;
	struct resp r;
	static const char *const names[] = {"a.wns.second.test", "x.y.wns.second.test", "A.WnS.second.test"};
	static const uint16_t types[] = {1, 2, 28, 16};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			ask(names[i], types[t], 1232, &r);
			assert_int_equal(RCODE(&r), 0);
			assert_false(AA(&r));
			assert_int_equal(r.count[1], 0);
			assert_int_equal(r.count[2], 2);
			assert_int_equal(has(&r, NS, "*.wns.second.test.", 2), 2);
			assert_int_equal(has(&r, AR, "ns.second.test.", 1), 1);
			assert_int_equal(st.kind[P53_ANS_REFERRAL], 1);
		}
	}
	/* Without EDNS (the question's name is the only one before the NS owner) */
	ask("host.wns.second.test", 1, 0, &r);
	assert_false(AA(&r));
	assert_int_equal(has(&r, NS, "*.wns.second.test.", 2), 2);
	/* The wildcard itself: a cut like any */
	ask("*.wns.second.test", 1, 1232, &r);
	assert_false(AA(&r));
	assert_int_equal(has(&r, NS, "*.wns.second.test.", 2), 2);
	/* DS: the wildcard's data, which has none: NODATA, the SOA in authority */
	ask("a.wns.second.test", 43, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_true(AA(&r));
	assert_int_equal(r.count[1], 0);
	assert_int_equal(has(&r, NS, "second.test.", 6), 1);
	/* A CNAME into it: the CNAME, then the referral; AA stays (the CNAME is ours) */
	ask("to-wns.second.test", 1, 1232, &r);
	assert_true(AA(&r));
	assert_int_equal(has(&r, AN, "to-wns.second.test.", 5), 1);
	assert_int_equal(has(&r, NS, "*.wns.second.test.", 2), 2);
	/* The other wildcards still expand */
	ask("a.wild.diff.test", 1, 1232, &r);
	assert_true(AA(&r));
	assert_int_equal(has(&r, AN, "a.wild.diff.test.", 1), 1);
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

/* Regression (RFC 9471 §3): a referral whose in-domain glue did not all fit was sent without
 * TC. second.test's `many` has 8 in-domain name servers with A and AAAA: without EDNS (512
 * octets) the glue cannot all be included, so TC=1; with 1232 it fits, all of it, TC=0. */
static void test_referral_glue_rfc9471(void **state)
{
	(void)state;
	struct resp r;
	char ns[64];

	ask("x.many.second.test", 1, 0, &r);
	assert_false(AA(&r));
	assert_int_equal(RCODE(&r), 0);
	assert_true(TC(&r));
	assert_int_equal(st.kind[P53_ANS_REFERRAL], 1);
	ask("x.many.second.test", 1, 1232, &r);
	assert_false(TC(&r));
	assert_int_equal(has(&r, NS, "many.second.test.", 2), 8);
	for (int i = 1; i <= 8; i++) {
		snprintf(ns, sizeof(ns), "ns%d.many.second.test.", i);
		assert_int_equal(has(&r, AR, ns, 1), 1);
		assert_int_equal(has(&r, AR, ns, 28), 1);
	}
	/* A referral whose glue fits gets all of it and no TC, also without EDNS. */
	ask("host.sub.diff.test", 1, 0, &r);
	assert_false(TC(&r));
	assert_int_equal(has(&r, AR, "ns1.sub.diff.test.", 1), 1);
	assert_int_equal(has(&r, AR, "ns1.sub.diff.test.", 28), 1);
	/* Sibling glue (name servers under another cut of the zone) is optional (§2.2): `sib`'s
	 * own in-domain glue comes first and fits; the siblings' only partly, without TC. */
	ask("x.sib.second.test", 1, 0, &r);
	assert_false(TC(&r));
	assert_int_equal(has(&r, NS, "sib.second.test.", 2), 9);
	assert_int_equal(has(&r, AR, "ns.sib.second.test.", 1), 1);
	assert_int_equal(has(&r, AR, "ns.sib.second.test.", 28), 1);
	assert_true(r.count[3] >= 4 && r.count[3] < 2 + 16);
	ask("x.sib.second.test", 1, 1232, &r);
	assert_int_equal(r.count[3], 2 + 16 + 1);       /* all glue, and the OPT */
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

/* Regression: a positive answer that did not fit (TC=1) was counted as kind `error`. It is an
 * answer; TC has its own counter. */
static void test_truncated_answer_counted_as_answer(void **state)
{
	(void)state;
	struct resp r;
	ask("big.diff.test", 1, 0, &r);
	assert_true(TC(&r));
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(st.kind[P53_ANS_ANSWER], 1);
	assert_int_equal(st.kind[P53_ANS_ERROR], 0);
	assert_int_equal(st.tc, 1);
	assert_int_equal(st.rcode[0], 1);
	/* The same answer that fits: one answer, no TC. */
	ask("big.diff.test", 1, 1232, &r);
	assert_int_equal(st.kind[P53_ANS_ANSWER], 1);
	assert_int_equal(st.tc, 0);
}

/* RFC 8945 §5.2/§5.3.2, regression: a query signed with a key pop53 does not know was answered
 * as if unsigned. It is NOTAUTH with one TSIG RR, last and unsigned: the request's key name and
 * algorithm, time signed and fudge, MAC size 0, original ID, error BADKEY (17), as knotd 3.2
 * answers (tests/differential: tsig-unknown-key*). With EDNS the OPT comes before it. A name
 * in no served zone is REFUSED unsigned, as Knot. Unsigned queries are unaffected. */
static uint16_t signed_query_type(uint8_t *buf, const char *name, uint16_t type, uint16_t edns,
				  int key_ptr);

static uint16_t signed_query(uint8_t *buf, const char *name, uint16_t edns, int key_ptr)
{
	return signed_query_type(buf, name, 1, edns, key_ptr);
}

static uint16_t signed_query_type(uint8_t *buf, const char *name, uint16_t type, uint16_t edns,
				  int key_ptr)
{
	static const uint8_t tsig[] = {0, 250, 0, 255, 0, 0, 0, 0, 0, 33,
		11, 'h', 'm', 'a', 'c', '-', 's', 'h', 'a', '2', '5', '6', 0,
		0, 0, 0x6b, 0x0d, 0xfe, 0x28, 0x01, 0x2c, 0, 4, 0xde, 0xad, 0xbe, 0xef, 0x12, 0x34,
		0, 0, 0, 0};
	uint16_t n = query(buf, name, type, 1, edns);

	buf[11]++;
	if (key_ptr) {                  /* key name = the question's name, by pointer */
		buf[n++] = 0xc0;
		buf[n++] = 12;
	} else {
		memcpy(buf + n, "\3key", 5);
		n += 5;
	}
	memcpy(buf + n, tsig, sizeof(tsig));
	return (uint16_t)(n + sizeof(tsig));
}

static void test_tsig_unknown_key_badkey(void **state)
{
	static const uint8_t want[] = {0, 250, 0, 255, 0, 0, 0, 0, 0, 29,
		11, 'h', 'm', 'a', 'c', '-', 's', 'h', 'a', '2', '5', '6', 0,
		0, 0, 0x6b, 0x0d, 0xfe, 0x28, 0x01, 0x2c, 0, 0, 0x12, 0x34, 0, 17, 0, 0};
	static uint8_t buf[2048];
	struct resp r;
	(void)state;

	for (int edns = 0; edns <= 1; edns++) {
		for (int ptr = 0; ptr <= 1; ptr++) {
			memset(&st, 0, sizeof(st));
			uint16_t len = signed_query(buf, "www.diff.test", edns ? 1232 : 0, ptr);
			uint16_t n = p53_answer(img, &conf, buf, len, sizeof(buf), &st);
			decode(buf, n, &r);
			assert_int_equal(RCODE(&r), P53_RCODE_NOTAUTH);
			assert_false(AA(&r));
			assert_false(TC(&r));
			assert_int_equal(r.count[1], 0);
			assert_int_equal(r.count[3], 1 + edns);
			assert_int_equal(r.rrs[AR][edns].type, 250);  /* last, after the OPT */
			assert_string_equal(r.rrs[AR][edns].owner, ptr ? "www.diff.test." : "key.");
			assert_memory_equal(buf + n - sizeof(want), want, sizeof(want));
			assert_int_equal(st.rcode[P53_RCODE_NOTAUTH], 1);
		}
	}
	/* Outside every zone: REFUSED, unsigned, as Knot. */
	uint16_t len = signed_query(buf, "www.example.org", 0, 0);
	uint16_t n = p53_answer(img, &conf, buf, len, sizeof(buf), &st);
	decode(buf, n, &r);
	assert_int_equal(RCODE(&r), P53_RCODE_REFUSED);
	assert_int_equal(r.count[3], 0);
	/* Unsigned: answered. */
	ask("www.diff.test", 1, 0, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 1);
}

/* A signed SOA query for the apex of a zone whose transfers want a key (P53_ZONE_XFR_SIGNED):
 * a downstream secondary's refresh check over UDP. The workers hold no keys, so it is left
 * unanswered (0, counted `handoff`) for the control thread, which verifies and answers it
 * signed (worker.c hands it over). Anything else signed is still BADKEY here: another type at
 * that apex, a name below it, the SOA of a zone without the flag; unsigned SOA is answered. */
static void test_signed_soa_handoff(void **state)
{
	static uint8_t buf[2048];
	char err[512], f1[512], f2[512];
	size_t blen;
	struct resp r;
	(void)state;

	snprintf(f1, sizeof(f1), "%s/tests/differential/zones/diff.test.zone", P53_SRCDIR);
	snprintf(f2, sizeof(f2), "%s/tests/differential/zones/second.test.zone", P53_SRCDIR);
	struct p53_zone_src zones[2] = {{.name = "diff.test.", .file = f1},
					{.name = "second.test.", .file = f2, .flags = P53_ZONE_XFR_SIGNED}};
	void *fimg = p53_image_build(zones, 2, &blen, err, sizeof(err), NULL, NULL);
	assert_non_null(fimg);

	static const struct { const char *name; uint16_t type; int handoff; } rows[] = {
		{ "second.test", P53_T_SOA, 1 },
		{ "SECOND.test", P53_T_SOA, 1 },        /* case-insensitive (RFC 4343) */
		{ "second.test", 1, 0 },                /* not SOA */
		{ "www.second.test", P53_T_SOA, 0 },    /* not the apex */
		{ "diff.test", P53_T_SOA, 0 },          /* a zone without the flag */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(&st, 0, sizeof(st));
		uint16_t len = signed_query_type(buf, rows[i].name, rows[i].type, 0, 0);
		struct p53_query q;
		assert_int_equal(p53_msg_parse(buf, len, &q), P53_MSG_OK);
		assert_int_equal(p53_answer_signed_soa_handoff(fimg, &q), rows[i].handoff);
		uint16_t n = p53_answer(fimg, &conf, buf, len, sizeof(buf), &st);
		if (rows[i].handoff) {
			assert_int_equal(n, 0);
			assert_int_equal(st.kind[P53_ANS_HANDOFF], 1);
			continue;
		}
		decode(buf, n, &r);
		assert_int_equal(RCODE(&r), P53_RCODE_NOTAUTH);
		assert_int_equal(st.kind[P53_ANS_HANDOFF], 0);
	}
	/* Unsigned SOA: answered here as always. */
	uint16_t len = query(buf, "second.test", P53_T_SOA, 1, 0);
	uint16_t n = p53_answer(fimg, &conf, buf, len, sizeof(buf), &st);
	decode(buf, n, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 1);
	free(fimg);
}

/* Security regression: a lookup miss walked up one label at a time, a hash and a probe each,
 * so a name of 127 one-byte labels cost ~126 of them. The image records its deepest name
 * (hdr.max_labels) and the walk starts there. The answers must not change: the closest
 * encloser of a deep name is still found (NXDOMAIN with the SOA, a wildcard below it, an
 * ENT, a cut above it), and a deep name under no zone is REFUSED. Its cost is in the replay
 * benchmark (mixes deep-nx, deep-refused), not here. */
static void deep(char *out, size_t cap, int labels, const char *below)
{
	size_t o = 0;

	for (int i = 0; i < labels && o + 2 < cap; i++) {
		out[o++] = (char)('a' + i % 26);
		out[o++] = '.';
	}
	snprintf(out + o, cap - o, "%s", below);
}

static void test_deep_names(void **state)
{
	char name[300];
	struct resp r;
	(void)state;

	assert_true(p53_image_hdr(img)->max_labels >= 6);       /* a.b.c.deep.diff.test */
	assert_true(p53_image_hdr(img)->max_labels < 10);
	deep(name, sizeof(name), 118, "diff.test");              /* 120 labels, 250 octets */
	ask(name, 1, 1232, &r);
	assert_int_equal(RCODE(&r), 3);
	assert_true(AA(&r));
	assert_int_equal(has(&r, NS, "diff.test.", 6), 1);
	deep(name, sizeof(name), 110, "a.b.c.deep.diff.test");   /* below the deepest names */
	ask(name, 1, 1232, &r);
	assert_int_equal(RCODE(&r), 3);
	deep(name, sizeof(name), 110, "wild.diff.test.");        /* RFC 4592: the wildcard */
	ask(name, 1, 1232, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 1);
	assert_string_equal(r.rrs[AN][0].owner, name);          /* owner = QNAME */
	deep(name, sizeof(name), 110, "sub.diff.test");          /* below a cut: referral */
	ask(name, 1, 1232, &r);
	assert_false(AA(&r));
	assert_int_equal(has(&r, NS, "sub.diff.test.", 2), 2);
	deep(name, sizeof(name), 126, "t");                      /* 127 labels, 255 octets, no zone */
	ask(name, 1, 1232, &r);
	assert_int_equal(RCODE(&r), 5);
	assert_false(AA(&r));
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

/* --- TCP (conf.tcp_limit, conf.keepalive): control/tcp/ answers with these ------------------- */

static uint16_t tcp_ask(const void *image, const struct p53_answer_conf *cf, uint8_t *buf,
			uint16_t cap, const char *name, uint16_t type, uint16_t edns)
{
	struct p53_answer_stats st;

	memset(&st, 0, sizeof(st));
	uint16_t len = query(buf, name, type, 1, edns);
	return p53_answer(image, cf, buf, len, cap, &st);
}

/* RFC 7766 §8: over TCP a response is never cut to the UDP size, with or without EDNS. */
static void test_tcp_no_truncation(void **state)
{
	(void)state;
	static uint8_t buf[65535];
	struct p53_answer_conf tcp = conf;
	struct resp r;

	tcp.tcp_limit = 65535;
	uint16_t n = tcp_ask(img, &tcp, buf, sizeof(buf), "big.diff.test", 1, 0);
	decode(buf, n, &r);
	assert_false(TC(&r));
	assert_int_equal(has(&r, AN, "big.diff.test.", 1), 60);
	assert_true(n > 512);
	n = tcp_ask(img, &tcp, buf, sizeof(buf), "big.diff.test", 1, 512);
	decode(buf, n, &r);
	assert_false(TC(&r));
	assert_int_equal(has(&r, AN, "big.diff.test.", 1), 60);
	/* The same query over UDP still gets TC: tcp_limit 0 changes nothing there. */
	n = tcp_ask(img, &conf, buf, sizeof(buf), "big.diff.test", 1, 0);
	decode(buf, n, &r);
	assert_true(TC(&r));
}

/* The OPT's options as (code, data) pairs; returns how many, -1 without an OPT. */
static int opt_options(const uint8_t *m, uint16_t n, uint16_t codes[8], uint16_t vals[8])
{
	/* The OPT is the last record and ours are written in order: walk from its RDATA. */
	for (uint16_t off = 12; off + 11 <= n; off++) {
		if (m[off] != 0 || m[off + 1] != 0 || m[off + 2] != 41)
			continue;
		uint16_t rdlen = (uint16_t)(m[off + 9] << 8 | m[off + 10]);
		if (off + 11 + rdlen != n)
			continue;
		int k = 0;
		for (uint16_t o = (uint16_t)(off + 11); o + 4 <= n && k < 8; k++) {
			uint16_t ol = (uint16_t)(m[o + 2] << 8 | m[o + 3]);
			codes[k] = (uint16_t)(m[o] << 8 | m[o + 1]);
			vals[k] = ol >= 2 ? (uint16_t)(m[o + 4] << 8 | m[o + 5]) : 0xffff;
			o = (uint16_t)(o + 4 + ol);
		}
		return k;
	}
	return -1;
}

/* RFC 7828 §3.3.2: on TCP a query carrying edns-tcp-keepalive learns the idle timeout; on
 * UDP the option is ignored (§3.3.1), and a query without it gets none. */
static void test_tcp_keepalive(void **state)
{
	(void)state;
	static uint8_t buf[65535];
	struct p53_answer_conf tcp = conf;
	uint16_t codes[8], vals[8];
	static const struct {
		const char *what;
		int tcp, with_option;
		int want; /* the keepalive value expected in the response, -1 for no option */
	} rows[] = {
		{"TCP query with the option gets the timeout (100 ms units)", 1, 1, 100},
		{"TCP query without the option gets none", 1, 0, -1},
		{"UDP query with the option: ignored, no option sent", 0, 1, -1},
	};

	tcp.tcp_limit = 65535;
	tcp.keepalive = 100;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("case: %s\n", rows[i].what);
		uint16_t len = query(buf, "www.diff.test", 1, 1, 1232);
		if (rows[i].with_option) {
			static const uint8_t ka[4] = {0, 11, 0, 0};
			memcpy(buf + len, ka, sizeof(ka));
			buf[len - 1] = 4; /* OPT RDLENGTH (the OPT is the last 11 bytes) */
			len = (uint16_t)(len + 4);
		}
		struct p53_answer_stats st;
		memset(&st, 0, sizeof(st));
		uint16_t n = p53_answer(img, rows[i].tcp ? &tcp : &conf, buf, len, sizeof(buf), &st);
		assert_int_equal(buf[3] & 0xf, 0);
		int k = opt_options(buf, n, codes, vals);
		assert_true(k >= 0);
		int found = -1;
		for (int j = 0; j < k; j++)
			if (codes[j] == 11)
				found = vals[j];
		assert_int_equal(found, rows[i].want);
	}
}

/*
 * A response far past 16 KiB: compression pointers have 14 bits, so names written after
 * offset 0x3fff must never become pointer targets. 700 MX records with distinct targets (each
 * with an A record, added to the additional section) take about 18 KB; every name in the
 * response must decode to what the zone says.
 */
static void test_tcp_past_16k(void **state)
{
	(void)state;
	static uint8_t buf[65535];
	char path[] = "/tmp/p53-test-tcp16k.XXXXXX";
	char err[512], name[256];
	int fd = mkstemp(path);
	size_t len;
	enum { N = 700 };

	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "$ORIGIN big.test.\n$TTL 300\n@ SOA ns hostmaster 1 3600 600 86400 300\n@ NS ns\nns A 192.0.2.1\n");
	for (int i = 0; i < N; i++)
		fprintf(f, "mx MX %d host%04d\nhost%04d A 10.%d.%d.1\n", i % 100, i, i, i / 256, i % 256);
	fclose(f);
	struct p53_zone_src z = {.name = "big.test.", .file = path};
	void *big = p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL);
	unlink(path);
	if (big == NULL)
		fprintf(stderr, "build failed: %s\n", err);
	assert_non_null(big);

	struct p53_answer_conf tcp = conf;
	tcp.tcp_limit = 65535;
	uint16_t n = tcp_ask(big, &tcp, buf, sizeof(buf), "mx.big.test", 15, 1232);
	assert_true(n > 0x4000);
	assert_int_equal(buf[2] & 0x02, 0);                     /* no TC */
	assert_int_equal(buf[3] & 0xf, 0);
	assert_int_equal(buf[6] << 8 | buf[7], N);              /* every MX */
	uint16_t ar = (uint16_t)(buf[10] << 8 | buf[11]);
	assert_true(ar >= 2);                                   /* some targets' A records and OPT */

	uint16_t off = 12, seen[N] = {0};
	assert_int_equal(get_name(buf, n, off, name, &off), 0);
	off = (uint16_t)(off + 4);
	for (int i = 0; i < N; i++) {
		assert_int_equal(get_name(buf, n, off, name, &off), 0);
		assert_string_equal(name, "mx.big.test.");
		assert_int_equal(buf[off] << 8 | buf[off + 1], 15);
		uint16_t rdlen = (uint16_t)(buf[off + 8] << 8 | buf[off + 9]);
		uint16_t rd = (uint16_t)(off + 10);
		char target[256];
		int pref = buf[rd] << 8 | buf[rd + 1];
		assert_int_equal(get_name(buf, n, (uint16_t)(rd + 2), target, NULL), 0);
		unsigned host;
		assert_int_equal(sscanf(target, "host%4u.big.test.", &host), 1);
		assert_true(host < N);
		assert_int_equal(pref, (int)(host % 100));
		seen[host]++;
		off = (uint16_t)(rd + rdlen);
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	for (int i = 0; i < ar; i++) {
		assert_int_equal(get_name(buf, n, off, name, &off), 0);
		uint16_t type = (uint16_t)(buf[off] << 8 | buf[off + 1]);
		uint16_t rdlen = (uint16_t)(buf[off + 8] << 8 | buf[off + 9]);
		if (type == 1) {
			unsigned host;
			assert_int_equal(sscanf(name, "host%4u.big.test.", &host), 1);
			assert_int_equal(buf[off + 11], host / 256);
			assert_int_equal(buf[off + 12], host % 256);
		} else {
			assert_int_equal(type, 41);
		}
		off = (uint16_t)(off + 10 + rdlen);
	}
	assert_int_equal(off, n);
	free(big);
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

/*
 * RRSIGs that cover no RRset of their owner are records of that name (knotd and BIND keep
 * them): NODATA to other types, not NXDOMAIN; asked for by type, or ANY, they are the answer
 * (the compiler keeps them as an RRset of type RRSIG, control/zone/dnssec_build.c).
 */
static void test_orphan_rrsigs(void **state)
{
	(void)state;
	static const char text[] =
		"orphan.test. 300 IN SOA ns.orphan.test. h.orphan.test. 1 7200 3600 1209600 300\n"
		"orphan.test. 300 IN NS ns.orphan.test.\n"
		"ns.orphan.test. 300 IN A 192.0.2.53\n"
		"only.orphan.test. 300 IN RRSIG A 8 3 300 20300101000000 20200101000000 1 orphan.test. AAAA\n";
	char path[] = "/tmp/p53-test-orphan-XXXXXX", err[512];
	size_t len;
	struct resp r;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	struct p53_zone_src z = { .name = "orphan.test.", .file = path };
	void *mine = p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL);
	unlink(path);
	if (mine == NULL)
		fail_msg("%s", err);
	assert_int_equal(p53_image_check(mine, len, NULL), 0);
	void *saved = img;
	img = mine;
	ask("only.orphan.test", 1, 1232, &r);           /* A: NODATA, the name exists */
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 0);
	assert_int_equal(has(&r, NS, "orphan.test.", 6), 1);
	ask("only.orphan.test", 46, 1232, &r);          /* RRSIG: the record */
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(has(&r, AN, "only.orphan.test.", 46), 1);
	ask("only.orphan.test", 255, 1232, &r);         /* ANY (RFC 8482): that RRset */
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(has(&r, AN, "only.orphan.test.", 46), 1);
	ask("x.only.orphan.test", 1, 1232, &r);         /* below it: NXDOMAIN */
	assert_int_equal(RCODE(&r), 3);
	img = saved;
	free(mine);
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
		cmocka_unit_test(test_wildcard_ns),
		cmocka_unit_test(test_negative),
		cmocka_unit_test(test_referral),
		cmocka_unit_test(test_referral_glue_rfc9471),
		cmocka_unit_test(test_dname),
		cmocka_unit_test(test_additional),
		cmocka_unit_test(test_any),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_truncated_answer_counted_as_answer),
		cmocka_unit_test(test_tsig_unknown_key_badkey),
		cmocka_unit_test(test_signed_soa_handoff),
		cmocka_unit_test(test_deep_names),
		cmocka_unit_test(test_refused_and_second_zone),
		cmocka_unit_test(test_chaos),
		cmocka_unit_test(test_tcp_no_truncation),
		cmocka_unit_test(test_tcp_keepalive),
		cmocka_unit_test(test_tcp_past_16k),
		cmocka_unit_test(test_nul_in_label),
		cmocka_unit_test(test_tkey_udp),
		cmocka_unit_test(test_badvers_no_answer),
		cmocka_unit_test(test_exact_fit),
		cmocka_unit_test(test_orphan_rrsigs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
