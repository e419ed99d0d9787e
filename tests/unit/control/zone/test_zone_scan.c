/*
 * The fast master-file scanner (control/zone/zone_scan.c): each line it takes gives the bytes
 * ldns gives for it (checked against ldns_rr_new_frm_fp_l on the same text and state), and
 * each line outside its subset is declined without a change of state, so the loader hands
 * it to ldns. Tables, one row per case with what it checks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <ldns/ldns.h>

#include "control/zone/zone_scan.h"

/* Origin ex.test., previous owner prev.ex.test., $TTL 300 unless a row says 0. */
static void state(struct p53_scan *s, uint32_t ttl)
{
	static const uint8_t origin[] = "\002ex\004test";
	static const uint8_t prev[] = "\004prev\002ex\004test";

	memset(s, 0, sizeof(*s));
	memcpy(s->origin, origin, sizeof(origin));
	s->origin_len = sizeof(origin);
	memcpy(s->prev, prev, sizeof(prev));
	s->prev_len = sizeof(prev);
	s->ttl = ttl;
}

struct take {
	const char *msg;
	const char *line;
	uint32_t ttl;           /* $TTL in force */
};

static const struct take takes[] = {
	{ "A, relative owner", "www A 192.0.2.1\n", 300 },
	{ "A with TTL and class", "www 60 IN A 192.0.2.1\n", 300 },
	{ "lower-case class and type", "www 60 in a 192.0.2.1\n", 300 },
	{ "TTL with a leading zero", "www 0060 A 192.0.2.1\n", 300 },
	{ "$TTL 0 means ldns' 3600", "www A 192.0.2.1\n", 0 },
	{ "absolute owner, tabs", "www.ex.test.\tIN\tA\t192.0.2.1\n", 300 },
	{ "@ owner", "@ A 192.0.2.1\n", 300 },
	{ "blank owner is the previous one", "\tAAAA 2001:db8::1\n", 300 },
	{ "AAAA upper case", "h AAAA 2001:DB8::A\n", 300 },
	{ "AAAA with a v4 tail", "h AAAA ::ffff:192.0.2.1\n", 300 },
	{ "NS relative", "sub NS ns.sub\n", 300 },
	{ "NS to @", "sub NS @\n", 300 },
	{ "CNAME absolute, upper case (canonical form differs)", "c CNAME Host.Example.\n", 300 },
	{ "PTR", "1 PTR host.example.\n", 300 },
	{ "MX", "m MX 10 mail\n", 300 },
	{ "MX 65535", "m MX 65535 mail.example.\n", 300 },
	{ "TXT one string with spaces", "t TXT \"v=spf1 -all  x\"\n", 300 },
	{ "TXT two strings, tab between", "t TXT \"a\"\t\"b;c\"\n", 300 },
	{ "comment after the data", "www A 192.0.2.1 ; note\n", 300 },
	{ "wildcard and underscore", "*._x A 192.0.2.1\n", 300 },
	{ "last line without a newline", "www A 192.0.2.1", 300 },
};

static const char *const declines[] = {
	"$ORIGIN other.\n",             /* directives are ldns' */
	"@ SOA ns hm 1 2 3 4 5\n",      /* a type it does not know */
	"www IN 60 A 192.0.2.1\n",      /* class before TTL: ldns rejects it */
	"www 1h A 192.0.2.1\n",         /* TTL with units */
	"www CH A 192.0.2.1\n",         /* another class */
	"www A 192.0.2\n",              /* a bad address */
	"www A 010.0.0.1\n",            /* inet_pton says no: ldns' error */
	"www A 192.0.2.1 x\n",          /* trailing text */
	"www A 192.0.2.1\r\n",          /* CR: ldns ends lines there */
	"a..b A 192.0.2.1\n",           /* an empty label */
	"w\\046 A 192.0.2.1\n",         /* an escape */
	"t TXT x\n",                    /* an unquoted string */
	"t TXT \"\"\n",                 /* an empty string */
	"t TXT \"a\\\"b\"\n",           /* an escape in a string */
	"t TXT \"a\fb\"\n",             /* a control character in a string */
	"m MX 65536 mail\n",            /* a preference over 16 bits */
	"@ SOA ns hm (\n",              /* parentheses */
	"\vwww A 192.0.2.1\n",          /* ldns keeps a leading \v in the owner */
	"www A 192.0.2.1 ; \f\n",       /* a control character in a comment */
	"x A",                          /* no data */
};

/* What ldns makes of the same line from the same state: owner and wire after it. */
static size_t by_ldns(const char *line, uint32_t ttl, uint8_t *out)
{
	FILE *f = fmemopen((void *)line, strlen(line), "r");
	ldns_rdf *origin = ldns_dname_new_frm_str("ex.test.");
	ldns_rdf *prev = ldns_dname_new_frm_str("prev.ex.test.");
	ldns_rr *rr = NULL;
	ldns_buffer *b = ldns_buffer_new(2048);
	int n = 0;
	size_t len = 0;

	assert_non_null(f);
	if (ldns_rr_new_frm_fp_l(&rr, f, &ttl, &origin, &prev, &n) == LDNS_STATUS_OK &&
	    ldns_rr2buffer_wire(b, rr, LDNS_SECTION_ANSWER) == LDNS_STATUS_OK) {
		len = ldns_buffer_position(b);
		memcpy(out, ldns_buffer_begin(b), len);
	}
	ldns_rr_free(rr);
	ldns_buffer_free(b);
	ldns_rdf_deep_free(origin);
	ldns_rdf_deep_free(prev);
	fclose(f);
	return len;
}

static void test_scan_takes_what_ldns_reads_alike(void **state_)
{
	(void)state_;
	for (size_t i = 0; i < sizeof(takes) / sizeof(takes[0]); i++) {
		const struct take *t = &takes[i];
		struct p53_scan s;
		struct p53_scan_rr rr;
		uint8_t want[2048], got[2048];
		size_t used = 0, n = strlen(t->line), wl, gl;
		const char *nl = memchr(t->line, '\n', n);

		state(&s, t->ttl);
		if (p53_scan_line(&s, t->line, n, nl == NULL, &rr, &used) != P53_SCAN_RR)
			fail_msg("declined: %s", t->msg);
		if (used != n)
			fail_msg("%s: consumed %zu of %zu bytes", t->msg, used, n);
		wl = by_ldns(t->line, t->ttl, want);
		if (wl == 0)
			fail_msg("%s: ldns does not read it", t->msg);
		memcpy(got, rr.owner, rr.olen);
		gl = rr.olen;
		got[gl++] = (uint8_t)(rr.type >> 8);
		got[gl++] = (uint8_t)rr.type;
		got[gl++] = 0;
		got[gl++] = 1;
		for (int k = 24; k >= 0; k -= 8)
			got[gl++] = (uint8_t)(rr.ttl >> k);
		got[gl++] = (uint8_t)(rr.rdlen >> 8);
		got[gl++] = (uint8_t)rr.rdlen;
		memcpy(got + gl, rr.rdata, rr.rdlen);
		gl += rr.rdlen;
		if (gl != wl || memcmp(got, want, wl) != 0)
			fail_msg("%s: bytes differ from ldns'", t->msg);
		/* The canonical RDATA is only given when it differs (upper case in a name). */
		if (strstr(t->msg, "canonical") != NULL) {
			if (rr.clen != rr.rdlen || memcmp(rr.canon, "\004host\007example", 13) != 0)
				fail_msg("%s: canonical RDATA not lower-cased", t->msg);
		} else if (rr.clen != 0) {
			fail_msg("%s: canonical RDATA given though it does not differ", t->msg);
		}
	}
}

static void test_scan_declines_the_rest(void **state_)
{
	(void)state_;
	for (size_t i = 0; i < sizeof(declines) / sizeof(declines[0]); i++) {
		struct p53_scan s, before;
		struct p53_scan_rr rr;
		const char *l = declines[i];
		size_t used = 0, n = strlen(l);

		state(&s, 300);
		before = s;
		if (p53_scan_line(&s, l, n, memchr(l, '\n', n) == NULL, &rr, &used) != P53_SCAN_DECLINE)
			fail_msg("taken, but ldns must read it: row %zu \"%s\"", i, l);
		if (memcmp(&s, &before, sizeof(s)) != 0)
			fail_msg("state changed by a declined line: row %zu", i);
	}
}

/* Blank and comment-only lines are consumed with nothing else. */
static void test_scan_empty_lines(void **state_)
{
	static const char *const empty[] = { "\n", "   \n", "; comment\n", "\t; c\n", "  " };
	(void)state_;
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		struct p53_scan s;
		struct p53_scan_rr rr;
		size_t used = 0, n = strlen(empty[i]);

		state(&s, 300);
		if (p53_scan_line(&s, empty[i], n, memchr(empty[i], '\n', n) == NULL, &rr, &used) !=
		    P53_SCAN_EMPTY || used != n)
			fail_msg("not an empty line: row %zu", i);
	}
}

/* An owner written out becomes the previous owner, as in ldns; a blank owner keeps it. */
static void test_scan_previous_owner(void **state_)
{
	struct p53_scan s;
	struct p53_scan_rr rr;
	size_t used;

	(void)state_;
	state(&s, 300);
	assert_int_equal(p53_scan_line(&s, "a A 192.0.2.1\n", 14, 0, &rr, &used), P53_SCAN_RR);
	assert_int_equal(s.prev_len, 11);
	assert_memory_equal(s.prev, "\001a\002ex\004test", 11);
	assert_int_equal(p53_scan_line(&s, " TXT \"x\"\n", 9, 0, &rr, &used), P53_SCAN_RR);
	assert_memory_equal(rr.owner, "\001a\002ex\004test", 11);
	assert_int_equal(p53_scan_line(&s, "@ A 192.0.2.1\n", 14, 0, &rr, &used), P53_SCAN_RR);
	assert_memory_equal(s.prev, "\002ex\004test", 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_takes_what_ldns_reads_alike),
		cmocka_unit_test(test_scan_declines_the_rest),
		cmocka_unit_test(test_scan_empty_lines),
		cmocka_unit_test(test_scan_previous_owner),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
