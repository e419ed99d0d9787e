/*
 * SipHash-2-4 and RFC 9018 server cookies: the paper's test vector, RFC 9018 Appendix A, and
 * random cases against libknot's independent implementation (knot_edns_cookie_server_*),
 * then the checks that decide whether a client's server cookie is ours: time window,
 * rollover to the previous secret, wrong address, wrong client cookie, tampering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>
#include <libknot/libknot.h>

#include "dataplane/cookie.h"
#include "dataplane/siphash.h"

static void hex(const char *s, uint8_t *out)
{
	for (size_t i = 0; i < strlen(s) / 2; i++)
		sscanf(s + 2 * i, "%2hhx", &out[i]);
}

/* The SipHash paper, Appendix A: key 00..0f, message 00..0e. */
static void test_siphash_paper_vector(void **state)
{
	(void)state;
	uint8_t key[16], msg[15];

	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	assert_true(p53_siphash24(key, msg, 15) == 0xa129ca6149be45e5ull);
	/* The empty message, the first line of the reference implementation's vector table. */
	assert_true(p53_siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ull);
}

/* RFC 9018 Appendix A.1: secret, client cookie, client 198.51.100.100, time 1559731985. */
static void test_rfc9018_vector(void **state)
{
	(void)state;
	uint8_t secret[16], client[8], want[16], got[16];
	uint8_t addr[4] = {198, 51, 100, 100};

	hex("e5e973e5a6b2a43f48e7dc849e37bfcf", secret);
	hex("2464c4abcf10c957", client);
	hex("010000005cf79f111f8130c3eee29480", want);
	p53_cookie_make(secret, client, addr, 4, 1559731985u, got);
	assert_memory_equal(got, want, 16);
}

/* libknot (Debian's libknot13) implements RFC 9018 too: both must agree on every input. */
static void test_against_libknot(void **state)
{
	(void)state;
	srand(53);
	for (int round = 0; round < 2000; round++) {
		knot_edns_cookie_params_t p = {.version = KNOT_EDNS_COOKIE_VERSION,
					       .lifetime_before = 3600, .lifetime_after = 300};
		struct sockaddr_storage ss;
		knot_edns_cookie_t cc = {.len = 8}, sc;
		uint8_t addr[16], mine[16];
		int v6 = round & 1;

		memset(&ss, 0, sizeof(ss));
		for (int i = 0; i < 16; i++) {
			p.secret[i] = (uint8_t)rand();
			addr[i] = (uint8_t)rand();
		}
		for (int i = 0; i < 8; i++)
			cc.data[i] = (uint8_t)rand();
		p.timestamp = (uint32_t)rand() * 2u + (uint32_t)(round & 1);
		if (v6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
			s6->sin6_family = AF_INET6;
			memcpy(&s6->sin6_addr, addr, 16);
		} else {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
			s4->sin_family = AF_INET;
			memcpy(&s4->sin_addr, addr, 4);
		}
		p.client_addr = &ss;
		assert_int_equal(knot_edns_cookie_server_generate(&sc, &cc, &p), KNOT_EOK);
		assert_int_equal(sc.len, 16);
		p53_cookie_make(p.secret, cc.data, addr, v6 ? 16 : 4, p.timestamp, mine);
		assert_memory_equal(mine, sc.data, 16);
		/* ...and each accepts the other's. */
		struct p53_cookie_secrets s = {.have_prev = 0};
		memcpy(s.cur, p.secret, 16);
		assert_int_equal(p53_cookie_check(&s, cc.data, sc.data, 16, addr, v6 ? 16 : 4, p.timestamp + 10),
				 P53_COOKIE_OK);
		memcpy(sc.data, mine, 16);
		assert_int_equal(knot_edns_cookie_server_check(&sc, &cc, &p), KNOT_EOK);
	}
}

struct check_row {
	const char *what;
	int32_t dt;             /* check time minus issue time */
	int secret;             /* 0: issued under cur, 1: under prev, 2: under an unknown one */
	int have_prev;
	int flip;               /* byte of the server cookie to flip, -1 for none */
	int other_addr;
	int other_client;
	int len;                /* server cookie length to present */
	enum p53_cookie_check want;
};

static const struct check_row check_rows[] = {
	{"fresh cookie under the current secret is ours and echoed", 5, 0, 0, -1, 0, 0, 16, P53_COOKIE_OK},
	{"29 minutes old: still echoed", 1740, 0, 0, -1, 0, 0, 16, P53_COOKIE_OK},
	{"31 minutes old: valid, but a fresh one is issued (RFC 9018 §4.3)", 1860, 0, 0, -1, 0, 0, 16, P53_COOKIE_OK_REISSUE},
	{"exactly an hour old: still valid", 3600, 0, 0, -1, 0, 0, 16, P53_COOKIE_OK_REISSUE},
	{"an hour and a second old: invalid", 3601, 0, 0, -1, 0, 0, 16, P53_COOKIE_BAD},
	{"5 minutes in the future: valid (clock skew)", -300, 0, 0, -1, 0, 0, 16, P53_COOKIE_OK},
	{"5 minutes and a second in the future: invalid", -301, 0, 0, -1, 0, 0, 16, P53_COOKIE_BAD},
	{"previous secret during rollover: valid, reissued", 5, 1, 1, -1, 0, 0, 16, P53_COOKIE_OK_REISSUE},
	{"previous secret after rollover ended: invalid", 5, 1, 0, -1, 0, 0, 16, P53_COOKIE_BAD},
	{"unknown secret (another server's): invalid", 5, 2, 1, -1, 0, 0, 16, P53_COOKIE_BAD},
	{"version byte changed: invalid", 5, 0, 0, 0, 0, 0, 16, P53_COOKIE_BAD},
	{"reserved byte changed: hash no longer matches", 5, 0, 0, 2, 0, 0, 16, P53_COOKIE_BAD},
	{"timestamp changed: hash no longer matches", 5, 0, 0, 7, 0, 0, 16, P53_COOKIE_BAD},
	{"hash changed: invalid", 5, 0, 0, 12, 0, 0, 16, P53_COOKIE_BAD},
	{"issued to another address: invalid (a spoofer cannot reuse it)", 5, 0, 0, -1, 1, 0, 16, P53_COOKIE_BAD},
	{"another client cookie: invalid", 5, 0, 0, -1, 0, 1, 16, P53_COOKIE_BAD},
	{"8-byte server cookie (not RFC 9018's shape): invalid", 5, 0, 0, -1, 0, 0, 8, P53_COOKIE_BAD},
	{"32-byte server cookie: invalid", 5, 0, 0, -1, 0, 0, 32, P53_COOKIE_BAD},
};

static void test_check_table(void **state)
{
	(void)state;
	uint8_t cur[16], prev[16], other[16], client[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint8_t addr[4] = {192, 0, 2, 1}, addr2[4] = {192, 0, 2, 2};
	const uint32_t t0 = 0xfffffff0u; /* across the 32-bit wrap: serial arithmetic */

	memset(cur, 0x11, 16);
	memset(prev, 0x22, 16);
	memset(other, 0x33, 16);
	for (size_t i = 0; i < sizeof(check_rows) / sizeof(check_rows[0]); i++) {
		const struct check_row *r = &check_rows[i];
		struct p53_cookie_secrets s;
		uint8_t sc[32] = {0}, cc[8];

		print_message("case: %s\n", r->what);
		memcpy(s.cur, cur, 16);
		memcpy(s.prev, prev, 16);
		s.have_prev = (uint8_t)r->have_prev;
		p53_cookie_make(r->secret == 0 ? cur : r->secret == 1 ? prev : other, client, addr, 4, t0, sc);
		if (r->flip >= 0)
			sc[r->flip] ^= 0x01;
		memcpy(cc, client, 8);
		if (r->other_client)
			cc[0] ^= 0x80;
		assert_int_equal(p53_cookie_check(&s, cc, sc, (size_t)r->len, r->other_addr ? addr2 : addr, 4,
						  t0 + (uint32_t)r->dt), r->want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_paper_vector),
		cmocka_unit_test(test_rfc9018_vector),
		cmocka_unit_test(test_against_libknot),
		cmocka_unit_test(test_check_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
