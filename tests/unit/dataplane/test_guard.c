/*
 * Cookies and RRL around the responder (p53_guard_answer, the worker's path with a guard) on
 * the differential test's zones: what each client sees, response by response, on a simulated
 * clock. Every response is decoded here, independently of pop53's writer.
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
#include "dataplane/guard.h"
#include "dataplane/image.h"

#define HZ 1000000000ull
#define T0 (1700000000u)        /* unix time at tsc 0 */

static void *img;
static struct p53_answer_conf conf = {.edns_max_payload = 1232};
static struct p53_guard g;
static struct p53_rrl_table *tbl;
static struct p53_guard_stats gst;
static struct p53_answer_stats ast;
static const uint8_t client1[4] = {192, 0, 2, 1};
static const uint8_t client2[4] = {198, 51, 100, 1};

struct resp {
	uint16_t len;
	uint16_t flags;
	uint16_t qd, an, ns, ar;
	int rcode;                      /* full, with the OPT's upper bits */
	int has_opt;
	uint16_t payload;
	uint8_t cookie[40];
	int cookie_len;                 /* -1: no COOKIE option */
};

/* Skip a name, compressed or not; returns the offset after it. */
static uint16_t skip_name(const uint8_t *m, uint16_t off)
{
	while (m[off] != 0) {
		if ((m[off] & 0xc0) == 0xc0)
			return (uint16_t)(off + 2);
		off = (uint16_t)(off + 1 + m[off]);
	}
	return (uint16_t)(off + 1);
}

static void decode(const uint8_t *m, uint16_t len, struct resp *r)
{
	memset(r, 0, sizeof(*r));
	r->len = len;
	r->cookie_len = -1;
	if (len == 0)
		return;
	assert_true(len >= 12);
	r->flags = (uint16_t)(m[2] << 8 | m[3]);
	r->qd = (uint16_t)(m[4] << 8 | m[5]);
	r->an = (uint16_t)(m[6] << 8 | m[7]);
	r->ns = (uint16_t)(m[8] << 8 | m[9]);
	r->ar = (uint16_t)(m[10] << 8 | m[11]);
	r->rcode = r->flags & 0xf;
	uint16_t off = 12;
	if (r->qd)
		off = (uint16_t)(skip_name(m, off) + 4);
	for (int i = 0; i < r->an + r->ns + r->ar; i++) {
		uint16_t at = off;
		off = skip_name(m, off);
		uint16_t type = (uint16_t)(m[off] << 8 | m[off + 1]);
		uint16_t rdlen = (uint16_t)(m[off + 8] << 8 | m[off + 9]);
		if (type == 41) {
			assert_int_equal(m[at], 0);
			r->has_opt = 1;
			r->payload = (uint16_t)(m[off + 2] << 8 | m[off + 3]);
			r->rcode |= m[off + 4] << 4;
			for (uint16_t o = (uint16_t)(off + 10); o < off + 10 + rdlen;) {
				uint16_t code = (uint16_t)(m[o] << 8 | m[o + 1]);
				uint16_t ol = (uint16_t)(m[o + 2] << 8 | m[o + 3]);
				if (code == 10) {
					r->cookie_len = ol;
					memcpy(r->cookie, m + o + 4, ol);
				}
				o = (uint16_t)(o + 4 + ol);
			}
		}
		off = (uint16_t)(off + 10 + rdlen);
	}
	assert_int_equal(off, len);
}

/* A query for name/type with EDNS (payload 1232) and, when cookie_len > 0, a COOKIE option. */
static uint16_t query(uint8_t *buf, const char *name, uint16_t type, const uint8_t *cookie, int cookie_len)
{
	uint16_t off = 12;

	memset(buf, 0, 12);
	buf[0] = 0x53;
	buf[1] = 0x53;
	buf[5] = 1;
	buf[11] = 1;
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
	buf[off++] = 0;
	buf[off++] = 1;
	uint16_t rdlen = cookie_len > 0 ? (uint16_t)(4 + cookie_len) : 0;
	uint8_t opt[11] = {0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, (uint8_t)(rdlen >> 8), (uint8_t)rdlen};
	memcpy(buf + off, opt, 11);
	off += 11;
	if (cookie_len > 0) {
		buf[off++] = 0;
		buf[off++] = 10;
		buf[off++] = 0;
		buf[off++] = (uint8_t)cookie_len;
		memcpy(buf + off, cookie, (size_t)cookie_len);
		off = (uint16_t)(off + cookie_len);
	}
	return off;
}

/* One query from addr at `sec` seconds (tsc = sec * HZ). */
static void ask_from(const uint8_t *addr, double sec, const char *name, uint16_t type,
		     const uint8_t *cookie, int cookie_len, struct resp *r)
{
	static uint8_t buf[4096];
	struct p53_query q;
	struct p53_guard_now now;

	uint16_t len = query(buf, name, type, cookie, cookie_len);
	enum p53_msg_status ms = p53_msg_parse(buf, len, &q);
	p53_guard_clock(&g, (uint64_t)(sec * (double)HZ), &now);
	uint16_t n = p53_guard_answer(&g, tbl, &gst, img, &conf, buf, sizeof(buf), &ast, &q, ms,
				      addr, 0, &now);
	decode(buf, n, r);
	if (n != 0) {
		assert_int_equal(buf[0], 0x53);         /* ID kept */
		assert_true(r->flags & 0x8000);         /* QR */
		assert_int_equal(r->qd, 1);             /* the question is always there */
		assert_true(r->has_opt);                /* RFC 6891 §6.1.1 */
		assert_int_equal(r->payload, 1232);
	}
}

static void rrl_on(uint32_t rate, uint32_t slip, int log_only)
{
	struct p53_rrl_settings s;

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < P53_RRL_ALL; i++)
		s.rate[i] = rate;
	s.window = 15;
	s.slip = slip;
	s.v4_bits = 24;
	s.v6_bits = 56;
	s.log_only = log_only;
	p53_rrl_conf_set(&g.rrl, &s, HZ, 1, 99);
}

static int reset(void **state)
{
	(void)state;
	memset(&g, 0, sizeof(g));
	memset(&gst, 0, sizeof(gst));
	memset(tbl->e, 0, sizeof(struct p53_rrl_entry) * 4096);
	g.cookies = 1;
	memset(g.secrets.cur, 0xc0, 16);
	g.clock_hz = HZ;
	g.clock_tsc = 0;
	g.clock_unix = T0;
	g.tables[0] = tbl;
	rrl_on(5, 2, 0);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	char err[512], f1[512], f2[512];
	size_t len;

	snprintf(f1, sizeof(f1), "%s/tests/differential/zones/diff.test.zone", P53_SRCDIR);
	snprintf(f2, sizeof(f2), "%s/tests/differential/zones/second.test.zone", P53_SRCDIR);
	struct p53_zone_src zones[2] = {{.name = "diff.test.", .file = f1}, {.name = "second.test.", .file = f2}};
	img = p53_image_build(zones, 2, &len, err, sizeof(err), NULL, NULL);
	assert_non_null(img);
	tbl = calloc(1, p53_rrl_table_size(4096));
	p53_rrl_table_init(tbl, 4096);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(img);
	free(tbl);
	return 0;
}

#define TC(r) (((r)->flags & 0x0200) != 0)
#define AA(r) (((r)->flags & 0x0400) != 0)

/* Same question: `rate` answers, then drop / TC=1 alternately (slip 2), decided before
 * answering. Another /24 is not affected. */
static void test_answers_then_slips(void **state)
{
	(void)state;
	struct resp r;

	for (int i = 0; i < 5; i++) {
		ask_from(client1, 1.0, "www.diff.test", 1, NULL, 0, &r);
		assert_int_equal(r.an, 1);
		assert_false(TC(&r));
	}
	for (int i = 0; i < 8; i++) {
		ask_from(client1, 1.0, "www.diff.test", 1, NULL, 0, &r);
		if (i % 2 == 0) {
			assert_int_equal(r.len, 0);
		} else {
			assert_true(TC(&r));
			assert_true(AA(&r));
			assert_int_equal(r.rcode, 0);
			assert_int_equal(r.an + r.ns, 0);
			assert_int_equal(r.ar, 1);      /* the OPT only */
			assert_int_equal(r.cookie_len, -1);
		}
	}
	assert_int_equal(gst.rrl_dropped, 4);
	assert_int_equal(gst.rrl_slipped, 4);
	assert_int_equal(gst.rrl_early, 8);
	ask_from(client2, 1.0, "www.diff.test", 1, NULL, 0, &r);
	assert_int_equal(r.an, 1);
	/* Another name from client1 has its own account. */
	ask_from(client1, 1.0, "mixed.diff.test", 28, NULL, 0, &r);
	assert_int_equal(r.an, 1);
}

/* NXDOMAIN is keyed by the zone: random names share one account. The slipped reply keeps
 * the RCODE and AA. */
static void test_nxdomain_by_zone(void **state)
{
	(void)state;
	struct resp r;
	char name[64];

	for (int i = 0; i < 9; i++) {
		snprintf(name, sizeof(name), "nx%d.diff.test", i);
		ask_from(client1, 1.0, name, 1, NULL, 0, &r);
		if (i < 5) {
			assert_int_equal(r.rcode, 3);
			assert_int_equal(r.ns, 1);
		} else if (i % 2 == 1) {
			assert_int_equal(r.len, 0);
		} else {
			assert_true(TC(&r));
			assert_true(AA(&r));
			assert_int_equal(r.rcode, 3);
			assert_int_equal(r.ns, 0);
		}
	}
	assert_int_equal(gst.rrl_early, 0);
	/* NXDOMAIN in another zone is another account. */
	ask_from(client1, 1.0, "nx.second.test", 1, NULL, 0, &r);
	assert_int_equal(r.rcode, 3);
	assert_int_equal(r.ns, 1);
	/* And the window: 15 s later it is answered again (it owed 4 responses: 0.8 s). */
	ask_from(client1, 2.0, "nx99.diff.test", 1, NULL, 0, &r);
	assert_int_equal(r.rcode, 3);
	assert_int_equal(r.ns, 1);
}

/* Referrals are keyed by the delegation point; the slipped reply has AA=0. */
static void test_referral_by_cut(void **state)
{
	(void)state;
	struct resp r;
	char name[64];

	for (int i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "h%d.sub.diff.test", i);
		ask_from(client1, 1.0, name, 1, NULL, 0, &r);
		if (i < 5)
			assert_true(r.ns >= 2);
		else if (i == 6) {
			assert_true(TC(&r));
			assert_false(AA(&r));
		} else
			assert_int_equal(r.len, 0);
	}
}

/* Errors cannot shrink: at the slip rate they are sent whole ("leaked"), never TC=1. */
static void test_errors_leak(void **state)
{
	(void)state;
	struct resp r;

	for (int i = 0; i < 9; i++) {
		ask_from(client1, 1.0, "example.org", 1, NULL, 0, &r);
		if (i >= 5 && i % 2 == 1) {
			assert_int_equal(r.len, 0);
			continue;
		}
		assert_int_equal(r.rcode, 5);
		assert_false(TC(&r));
	}
	assert_int_equal(gst.rrl_dropped, 2);
	assert_int_equal(gst.rrl_slipped, 2);
}

/* rate 0 for responses, all_per_second 10: any names, ten answers, then limited. */
static void test_all_per_second(void **state)
{
	(void)state;
	struct p53_rrl_settings s;
	struct resp r;
	char name[64];
	int sent = 0;

	memset(&s, 0, sizeof(s));
	s.rate[P53_RRL_ALL] = 10;
	s.window = 15;
	s.v4_bits = 24;
	s.v6_bits = 56;
	p53_rrl_conf_set(&g.rrl, &s, HZ, 1, 99);
	for (int i = 0; i < 30; i++) {
		snprintf(name, sizeof(name), "%s", i % 2 ? "www.diff.test" : "mixed.diff.test");
		ask_from(client1, 1.0, name, 1, NULL, 0, &r);
		sent += r.len != 0;
	}
	assert_int_equal(sent, 10);
}

static void test_log_only(void **state)
{
	(void)state;
	struct resp r;

	rrl_on(5, 2, 1);
	for (int i = 0; i < 25; i++) {
		ask_from(client1, 1.0, "www.diff.test", 1, NULL, 0, &r);
		assert_int_equal(r.an, 1);
	}
	assert_int_equal(gst.rrl_would_drop + gst.rrl_would_slip, 20);
	assert_int_equal(gst.rrl_dropped + gst.rrl_slipped, 0);
}

static void test_exempt_clients(void **state)
{
	(void)state;
	struct p53_rrl_settings s;
	struct resp r;

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < P53_RRL_ALL; i++)
		s.rate[i] = 5;
	s.window = 15;
	s.v4_bits = 24;
	s.v6_bits = 56;
	s.n_exempt = 1;
	s.exempt[0].family = 4;
	memcpy(s.exempt[0].bytes, client1, 4);
	s.exempt[0].bits = 32;
	p53_rrl_conf_set(&g.rrl, &s, HZ, 1, 99);
	for (int i = 0; i < 25; i++) {
		ask_from(client1, 1.0, "www.diff.test", 1, NULL, 0, &r);
		assert_int_equal(r.an, 1);
	}
	assert_int_equal(gst.rrl_exempt, 20);
	/* 192.0.2.2 shares client1's /24 account but is not exempt. */
	ask_from((const uint8_t[]){192, 0, 2, 2}, 1.0, "www.diff.test", 1, NULL, 0, &r);
	assert_int_equal(r.len, 0);
}

static const uint8_t cc[8] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4};

/* RFC 7873 §5.2.3: a client cookie alone gets it back with our server cookie (RFC 9018). */
static void test_cookie_client_only(void **state)
{
	(void)state;
	struct resp r;
	uint8_t want[16];

	ask_from(client1, 10.5, "www.diff.test", 1, cc, 8, &r);
	assert_int_equal(r.an, 1);
	assert_int_equal(r.cookie_len, 24);
	assert_memory_equal(r.cookie, cc, 8);
	p53_cookie_make(g.secrets.cur, cc, client1, 4, T0 + 10, want);
	assert_memory_equal(r.cookie + 8, want, 16);
	assert_int_equal(gst.cookie_client, 1);
}

/* A valid server cookie: echoed while fresh, and never rate limited. */
static void test_cookie_valid_is_exempt(void **state)
{
	(void)state;
	struct resp r;
	uint8_t full[24];

	memcpy(full, cc, 8);
	p53_cookie_make(g.secrets.cur, cc, client1, 4, T0 + 1, full + 8);
	for (int i = 0; i < 50; i++) {
		ask_from(client1, 2.0, "www.diff.test", 1, full, 24, &r);
		assert_int_equal(r.an, 1);
		assert_int_equal(r.cookie_len, 24);
		assert_memory_equal(r.cookie, full, 24);        /* echoed */
	}
	assert_int_equal(gst.cookie_valid, 50);
	assert_int_equal(gst.rrl_cookie, 50);
	assert_int_equal(gst.rrl_dropped + gst.rrl_slipped, 0);
	/* The same cookie from another address (a spoofer who saw it) is not valid there. */
	ask_from(client2, 2.0, "www.diff.test", 1, full, 24, &r);
	assert_int_equal(gst.cookie_invalid, 1);
	assert_memory_not_equal(r.cookie + 8, full + 8, 16);
}

/* Rollover: a cookie under the previous secret is still valid, and replaced by a new one. */
static void test_cookie_previous_secret(void **state)
{
	(void)state;
	struct resp r;
	uint8_t full[24], want[16];

	memcpy(full, cc, 8);
	p53_cookie_make(g.secrets.cur, cc, client1, 4, T0 + 1, full + 8);
	memcpy(g.secrets.prev, g.secrets.cur, 16);
	memset(g.secrets.cur, 0xc1, 16);
	g.secrets.have_prev = 1;
	ask_from(client1, 2.0, "www.diff.test", 1, full, 24, &r);
	assert_int_equal(gst.cookie_valid, 1);
	p53_cookie_make(g.secrets.cur, cc, client1, 4, T0 + 2, want);
	assert_memory_equal(r.cookie + 8, want, 16);
	/* After the rollover period the old one is invalid. */
	g.secrets.have_prev = 0;
	ask_from(client1, 3.0, "www.diff.test", 1, full, 24, &r);
	assert_int_equal(gst.cookie_invalid, 1);
}

/* A limited client that sent a cookie gets BADCOOKIE with our cookie instead of TC=1
 * (RFC 7873 §5.2.3 choice 2); its retry with that cookie is answered. */
static void test_badcookie_when_limited(void **state)
{
	(void)state;
	struct resp r;
	uint8_t full[24];

	for (int i = 0; i < 5; i++)
		ask_from(client1, 1.0, "www.diff.test", 1, cc, 8, &r);
	ask_from(client1, 1.0, "www.diff.test", 1, cc, 8, &r);
	assert_int_equal(r.len, 0);
	ask_from(client1, 1.0, "www.diff.test", 1, cc, 8, &r);
	assert_int_equal(r.rcode, 23);                   /* BADCOOKIE */
	assert_int_equal((r.flags & 0xf), 7);            /* its lower bits in the header */
	assert_false(TC(&r));
	assert_int_equal(r.an + r.ns, 0);
	assert_int_equal(r.cookie_len, 24);
	assert_int_equal(gst.cookie_badcookie, 1);
	memcpy(full, r.cookie, 24);
	ask_from(client1, 1.0, "www.diff.test", 1, full, 24, &r);
	assert_int_equal(r.an, 1);
}

static void test_cookies_disabled(void **state)
{
	(void)state;
	struct resp r;

	g.cookies = 0;
	ask_from(client1, 1.0, "www.diff.test", 1, cc, 8, &r);
	assert_int_equal(r.an, 1);
	assert_int_equal(r.cookie_len, -1);
}

/* A malformed COOKIE option is FORMERR whatever the guard says (RFC 7873 §5.2.2). */
static void test_malformed_cookie(void **state)
{
	(void)state;
	struct resp r;

	ask_from(client1, 1.0, "www.diff.test", 1, cc, 7, &r);
	assert_int_equal(r.rcode, 1);
	ask_from(client1, 1.0, "www.diff.test", 1, (const uint8_t[12]){0}, 12, &r);
	assert_int_equal(r.rcode, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_answers_then_slips, reset),
		cmocka_unit_test_setup(test_nxdomain_by_zone, reset),
		cmocka_unit_test_setup(test_referral_by_cut, reset),
		cmocka_unit_test_setup(test_errors_leak, reset),
		cmocka_unit_test_setup(test_all_per_second, reset),
		cmocka_unit_test_setup(test_log_only, reset),
		cmocka_unit_test_setup(test_exempt_clients, reset),
		cmocka_unit_test_setup(test_cookie_client_only, reset),
		cmocka_unit_test_setup(test_cookie_valid_is_exempt, reset),
		cmocka_unit_test_setup(test_cookie_previous_secret, reset),
		cmocka_unit_test_setup(test_badcookie_when_limited, reset),
		cmocka_unit_test_setup(test_cookies_disabled, reset),
		cmocka_unit_test_setup(test_malformed_cookie, reset),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
