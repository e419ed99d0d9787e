/*
 * Response rate limiting, account by account, on a simulated clock (1 tick = 1 ns): BIND's
 * semantics (a fresh account bursts `rate`, every prospective response debits, the debt is
 * capped at window x rate, recovery takes `window` seconds), slip, the per-worker division,
 * prefixes, exemptions and the table's replacement policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/rrl.h"

#define HZ 1000000000ull
#define SEC HZ

static struct p53_rrl_table *table(uint32_t entries)
{
	struct p53_rrl_table *t = test_calloc(1, p53_rrl_table_size(entries));
	p53_rrl_table_init(t, entries);
	return t;
}

static void conf(struct p53_rrl_conf *c, uint32_t rate, uint32_t window, uint32_t slip,
		 unsigned int workers)
{
	struct p53_rrl_settings s;

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < P53_RRL__CLASSES; i++)
		s.rate[i] = i == P53_RRL_ALL ? 0 : rate;
	s.window = window;
	s.slip = slip;
	s.v4_bits = 24;
	s.v6_bits = 56;
	p53_rrl_conf_set(c, &s, HZ, workers, 0x1234);
}

static const uint8_t client1[4] = {192, 0, 2, 1};

/* Send `n` responses from `addr` evenly over [t0, t0 + dur); count those allowed. */
static unsigned int run(const struct p53_rrl_conf *c, struct p53_rrl_table *t, const uint8_t *addr,
			int v6, enum p53_rrl_class cls, uint32_t name, uint64_t t0, uint64_t dur,
			unsigned int n)
{
	unsigned int ok = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct p53_rrl_key k;
		uint64_t now = t0 + dur * i / n;
		p53_rrl_key(c, t, &k, addr, v6, cls, name, 1);
		if (p53_rrl_debit(c, t, &k, p53_rrl_find(t, &k), now) == P53_RRL_OK)
			ok++;
	}
	return ok;
}

static void test_fresh_burst_is_rate(void **state)
{
	(void)state;
	struct p53_rrl_conf c;
	struct p53_rrl_table *t = table(1024);

	conf(&c, 50, 15, 0, 1);
	/* 200 at the same instant: a fresh account holds `rate` credits. */
	assert_int_equal(run(&c, t, client1, 0, P53_RRL_RESPONSES, 7, SEC, 0, 200), 50);
	test_free(t);
}

static void test_below_rate_never_limited(void **state)
{
	(void)state;
	struct p53_rrl_conf c;
	struct p53_rrl_table *t = table(1024);

	conf(&c, 50, 15, 0, 1);
	/* 0.8 x rate for a minute: every response goes out. */
	assert_int_equal(run(&c, t, client1, 0, P53_RRL_RESPONSES, 7, SEC, 60 * SEC, 40 * 60), 40 * 60);
	test_free(t);
}

/* A flood at F > r from a fresh account gets r F / (F - r) answers (the balance r + r t - F t
 * reaches 0 at t = r / (F - r)), then nothing while it lasts. */
static void test_flood_gets_bind_share(void **state)
{
	(void)state;
	struct p53_rrl_conf c;
	struct p53_rrl_table *t = table(1024);

	conf(&c, 50, 15, 0, 1);
	unsigned int ok = run(&c, t, client1, 0, P53_RRL_RESPONSES, 7, SEC, 3 * SEC, 600); /* 200/s */
	/* 50 * 200 / 150 = 66.7 */
	assert_in_range(ok, 65, 68);
	/* Still flooding: nothing more. */
	assert_int_equal(run(&c, t, client1, 0, P53_RRL_RESPONSES, 7, 4 * SEC, 5 * SEC, 1000), 0);
	test_free(t);
}

/* After a flood the account owes window x rate: quiet for `window` seconds, then answered. */
static void test_recovery_takes_window(void **state)
{
	(void)state;
	struct p53_rrl_conf c;
	struct p53_rrl_table *t = table(1024);
	struct p53_rrl_key k;

	conf(&c, 10, 5, 0, 1);
	run(&c, t, client1, 0, P53_RRL_RESPONSES, 7, SEC, 10 * SEC, 10000); /* ends at 11 s */
	p53_rrl_key(&c, t, &k, client1, 0, P53_RRL_RESPONSES, 7, 1);
	/* 4.9 s after the flood: still owing (and this probe debits, as in BIND). */
	assert_int_equal(p53_rrl_debit(&c, t, &k, p53_rrl_find(t, &k), 11 * SEC + 4900000000ull), P53_RRL_DROP);
	/* That probe owes 0.1 s more: at 11 s + 5.0 s + 0.1 s the account is positive again. */
	assert_int_equal(p53_rrl_debit(&c, t, &k, p53_rrl_find(t, &k), 11 * SEC + 5050000000ull), P53_RRL_DROP);
	assert_int_equal(p53_rrl_debit(&c, t, &k, p53_rrl_find(t, &k), 11 * SEC + 5300000000ull), P53_RRL_OK);
	test_free(t);
}

static void test_slip(void **state)
{
	(void)state;
	struct p53_rrl_conf c;
	struct p53_rrl_table *t = table(1024);
	struct p53_rrl_key k;
	static const struct { uint32_t slip; const char *want; } rows[] = {
		{0, "DDDDDD"}, {1, "SSSSSS"}, {2, "DSDSDS"}, {3, "DDSDDS"},
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		memset(t->e, 0, sizeof(struct p53_rrl_entry) * 1024);
		conf(&c, 5, 15, rows[r].slip, 1);
		print_message("slip %u\n", rows[r].slip);
		assert_int_equal(run(&c, t, client1, 0, P53_RRL_RESPONSES, 7, SEC, 0, 5), 5);
		for (int i = 0; i < 6; i++) {
			p53_rrl_key(&c, t, &k, client1, 0, P53_RRL_RESPONSES, 7, 1);
			enum p53_rrl_verdict v = p53_rrl_debit(&c, t, &k, p53_rrl_find(t, &k), SEC);
			assert_int_equal(v, rows[r].want[i] == 'D' ? P53_RRL_DROP : P53_RRL_SLIP);
		}
	}
	test_free(t);
}

/* Four workers: each allows rate / 4 per account; spread over four, the client sees rate. */
static void test_per_worker_share(void **state)
{
	(void)state;
	struct p53_rrl_conf c;
	unsigned int total = 0;

	conf(&c, 40, 15, 0, 4);
	for (int w = 0; w < 4; w++) {
		struct p53_rrl_table *t = table(1024);
		unsigned int burst = run(&c, t, client1, 0, P53_RRL_RESPONSES, 7, SEC, 0, 10);
		assert_int_equal(burst, 10);
		assert_int_equal(run(&c, t, client1, 0, P53_RRL_RESPONSES, 7, SEC, 0, 1), 0);
		total += burst;
		/* Long run at the per-worker rate: 10/s for 30 s, all answered. */
		assert_int_equal(run(&c, t, client1, 0, P53_RRL_RESPONSES, 7, 3 * SEC, 30 * SEC, 300), 300);
		test_free(t);
	}
	assert_int_equal(total, 40);
}

/* A per-worker rate under one response a second still averages right: 5 / 8 = 0.625/s. */
static void test_fractional_worker_rate(void **state)
{
	(void)state;
	struct p53_rrl_conf c;
	struct p53_rrl_table *t = table(1024);

	conf(&c, 5, 15, 0, 8);
	/* A client asking 10 times a second for 1000 s gets ~625 (the window's debt is the
	 * same in both directions, so steady state is exact up to the first second). */
	unsigned int ok = 0;
	for (unsigned int i = 0; i < 10000; i++) {
		struct p53_rrl_key k;
		p53_rrl_key(&c, t, &k, client1, 0, P53_RRL_RESPONSES, 7, 1);
		/* A polite client: it stops asking while it owes (so the debt never grows). */
		struct p53_rrl_entry *e = p53_rrl_find(t, &k);
		uint64_t now = SEC + (uint64_t)i * SEC / 10;
		if (e != NULL && p53_rrl_owes(&c, e, now))
			continue;
		if (p53_rrl_debit(&c, t, &k, e, now) == P53_RRL_OK)
			ok++;
	}
	assert_in_range(ok, 620, 630);
	test_free(t);
}

static void test_prefixes_share_accounts(void **state)
{
	(void)state;
	struct p53_rrl_conf c;
	struct p53_rrl_table *t = table(1024);
	static const uint8_t same24[4] = {192, 0, 2, 200}, other24[4] = {192, 0, 3, 1};
	static const uint8_t v6a[16] = {0x20, 1, 0xd, 0xb8, 0, 0, 0, 0x10, 1}, v6same56[16] = {0x20, 1, 0xd, 0xb8, 0, 0, 0, 0x20, 9};
	static const uint8_t v6other56[16] = {0x20, 1, 0xd, 0xb8, 0, 0, 1, 0x10, 1};

	conf(&c, 10, 15, 0, 1);
	assert_int_equal(run(&c, t, client1, 0, P53_RRL_RESPONSES, 7, SEC, 0, 6), 6);
	assert_int_equal(run(&c, t, same24, 0, P53_RRL_RESPONSES, 7, SEC, 0, 6), 4);   /* same /24 */
	assert_int_equal(run(&c, t, other24, 0, P53_RRL_RESPONSES, 7, SEC, 0, 20), 10); /* its own */
	assert_int_equal(run(&c, t, client1, 0, P53_RRL_RESPONSES, 8, SEC, 0, 20), 10); /* other name */
	assert_int_equal(run(&c, t, client1, 0, P53_RRL_NXDOMAINS, 7, SEC, 0, 20), 10); /* other class */
	assert_int_equal(run(&c, t, v6a, 1, P53_RRL_RESPONSES, 7, SEC, 0, 6), 6);
	assert_int_equal(run(&c, t, v6same56, 1, P53_RRL_RESPONSES, 7, SEC, 0, 6), 4); /* same /56 */
	assert_int_equal(run(&c, t, v6other56, 1, P53_RRL_RESPONSES, 7, SEC, 0, 20), 10);
	test_free(t);
}

static void test_unlimited_class(void **state)
{
	(void)state;
	struct p53_rrl_conf c;
	struct p53_rrl_table *t = table(64);

	conf(&c, 10, 15, 0, 1);
	/* rate 0 for ALL (conf() sets it so): never limited, never accounted. */
	assert_int_equal(run(&c, t, client1, 0, P53_RRL_ALL, 0, SEC, 0, 1000), 1000);
	for (int i = 0; i < 64; i++)
		assert_int_equal(t->e[i].tag, 0);
	test_free(t);
}

static void test_exempt(void **state)
{
	(void)state;
	struct p53_rrl_settings s;
	struct p53_rrl_conf c;
	static const uint8_t in4[4] = {198, 51, 100, 77}, out4[4] = {198, 51, 101, 1};
	static const uint8_t in6[16] = {0x20, 1, 0xd, 0xb8, 0xaa, 0xbb, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5};
	static const uint8_t out6[16] = {0x20, 1, 0xd, 0xb8, 0xaa, 0xbc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5};
	static const uint8_t host6[16] = {0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53};
	static const uint8_t host6b[16] = {0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x54};

	memset(&s, 0, sizeof(s));
	s.window = 15;
	s.v4_bits = 24;
	s.v6_bits = 56;
	s.n_exempt = 3;
	s.exempt[0].family = 4;
	memcpy(s.exempt[0].bytes, (uint8_t[]){198, 51, 100, 0}, 4);
	s.exempt[0].bits = 24;
	s.exempt[1].family = 6;
	memcpy(s.exempt[1].bytes, (uint8_t[]){0x20, 1, 0xd, 0xb8, 0xaa, 0xbb}, 6);
	s.exempt[1].bits = 32 + 16;
	s.exempt[2].family = 6;
	memcpy(s.exempt[2].bytes, host6, 16);
	s.exempt[2].bits = 128;
	p53_rrl_conf_set(&c, &s, HZ, 1, 1);
	assert_true(p53_rrl_exempt(&c, in4, 0));
	assert_false(p53_rrl_exempt(&c, out4, 0));
	assert_true(p53_rrl_exempt(&c, in6, 1));
	assert_false(p53_rrl_exempt(&c, out6, 1));
	assert_true(p53_rrl_exempt(&c, host6, 1));
	assert_false(p53_rrl_exempt(&c, host6b, 1));
	/* An IPv4 address is never matched by an IPv6 prefix whose first bytes look alike. */
	assert_false(p53_rrl_exempt(&c, (const uint8_t[]){0x20, 1, 0xd, 0xb8}, 0));
}

/* One set of four: a fifth account replaces the idlest; an account in debt is kept. */
static void test_replacement_keeps_debtors(void **state)
{
	(void)state;
	struct p53_rrl_conf c;
	struct p53_rrl_table *t = table(4);
	struct p53_rrl_key k;

	conf(&c, 10, 15, 0, 1);
	/* Account 1 floods into debt; 2..4 ask once each. */
	run(&c, t, client1, 0, P53_RRL_RESPONSES, 1, SEC, 0, 300); /* owes the whole window */
	for (uint32_t n = 2; n <= 4; n++)
		run(&c, t, client1, 0, P53_RRL_RESPONSES, n, SEC, 0, 1);
	/* 5..40 come and go, a quarter of a second apart, until 11 s. */
	for (uint32_t n = 5; n <= 40; n++)
		run(&c, t, client1, 0, P53_RRL_RESPONSES, n, SEC + SEC * n / 4, 0, 1);
	/* The debtor is still there and still limited (window 15: it owes until 16 s). */
	p53_rrl_key(&c, t, &k, client1, 0, P53_RRL_RESPONSES, 1, 1);
	assert_non_null(p53_rrl_find(t, &k));
	assert_int_equal(p53_rrl_debit(&c, t, &k, p53_rrl_find(t, &k), 11 * SEC + SEC / 2), P53_RRL_DROP);
	/* One of the one-off accounts went instead. */
	int gone = 0;
	for (uint32_t n = 2; n <= 40; n++) {
		p53_rrl_key(&c, t, &k, client1, 0, P53_RRL_RESPONSES, n, 1);
		gone += p53_rrl_find(t, &k) == NULL;
	}
	assert_int_equal(gone, 39 - 3);
	test_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_burst_is_rate),
		cmocka_unit_test(test_below_rate_never_limited),
		cmocka_unit_test(test_flood_gets_bind_share),
		cmocka_unit_test(test_recovery_takes_window),
		cmocka_unit_test(test_slip),
		cmocka_unit_test(test_per_worker_share),
		cmocka_unit_test(test_fractional_worker_rate),
		cmocka_unit_test(test_prefixes_share_accounts),
		cmocka_unit_test(test_unlimited_class),
		cmocka_unit_test(test_exempt),
		cmocka_unit_test(test_replacement_keeps_debtors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
