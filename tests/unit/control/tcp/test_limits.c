/*
 * control/tcp/limits.c: connection admission. The limits themselves (total and per client,
 * IPv4 and IPv6 apart), then a long random run of takes and puts checked against a plain
 * model, so the table's backward-shift deletion never loses or duplicates a client.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>

#include "control/tcp/limits.h"

static struct p53_addr addr(const char *s)
{
	struct p53_addr a;

	memset(&a, 0, sizeof(a));
	if (inet_pton(AF_INET, s, a.bytes) == 1)
		a.family = AF_INET;
	else if (inet_pton(AF_INET6, s, a.bytes) == 1)
		a.family = AF_INET6;
	return a;
}

static void test_limits(void **state)
{
	struct p53_tcp_limits l;
	enum p53_tcp_refuse why;
	struct p53_addr a = addr("192.0.2.1"), b = addr("192.0.2.2"), c = addr("::ffff:192.0.2.1"),
			d = addr("2001:db8::1");

	(void)state;
	assert_int_equal(p53_tcp_limits_init(&l, 5, 2), 0);
	assert_int_equal(p53_tcp_limits_take(&l, &a, &why), 0);
	assert_int_equal(p53_tcp_limits_take(&l, &a, &why), 0);
	assert_int_equal(p53_tcp_limits_take(&l, &a, &why), -1);
	assert_int_equal(why, P53_TCP_REFUSE_PER_CLIENT);
	/* Another address, and the same bytes as IPv6 (mapped), are other clients. */
	assert_int_equal(p53_tcp_limits_take(&l, &b, &why), 0);
	assert_int_equal(p53_tcp_limits_take(&l, &c, &why), 0);
	assert_int_equal(p53_tcp_limits_take(&l, &d, &why), 0);
	assert_int_equal(p53_tcp_limits_take(&l, &b, &why), -1);
	assert_int_equal(why, P53_TCP_REFUSE_MAX_CONNECTIONS);
	p53_tcp_limits_put(&l, &a);
	assert_int_equal(p53_tcp_limits_open(&l, &a), 1);
	assert_int_equal(p53_tcp_limits_take(&l, &b, &why), 0);
	assert_int_equal(p53_tcp_limits_open(&l, &b), 2);
	/* A put for an address that holds nothing changes nothing. */
	struct p53_addr e = addr("198.51.100.9");
	p53_tcp_limits_put(&l, &e);
	assert_int_equal(l.total, 5);
	p53_tcp_limits_fini(&l);
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Random takes and puts over few clients (so probe chains cross and wrap): every count must
 * match the model after every step. */
static void test_random_against_model(void **state)
{
	enum { CLIENTS = 40, MAX = 24, PER = 3, STEPS = 200000 };
	struct p53_tcp_limits l;
	struct p53_addr cl[CLIENTS];
	unsigned int model[CLIENTS] = {0}, total = 0;
	enum p53_tcp_refuse why;
	char s[64];

	(void)state;
	for (int i = 0; i < CLIENTS; i++) {
		snprintf(s, sizeof(s), i % 2 ? "10.%d.0.1" : "2001:db8::%x", i);
		cl[i] = addr(s);
	}
	assert_int_equal(p53_tcp_limits_init(&l, MAX, PER), 0);
	for (int step = 0; step < STEPS; step++) {
		int i = (int)(next() % CLIENTS);
		if (next() % 2) {
			int want = total < MAX && model[i] < PER ? 0 : -1;
			assert_int_equal(p53_tcp_limits_take(&l, &cl[i], &why), want);
			if (want == 0) {
				model[i]++;
				total++;
			} else {
				assert_int_equal(why, total >= MAX ? P53_TCP_REFUSE_MAX_CONNECTIONS
							      : P53_TCP_REFUSE_PER_CLIENT);
			}
		} else if (model[i] > 0) {
			p53_tcp_limits_put(&l, &cl[i]);
			model[i]--;
			total--;
		}
		if (step % 97 == 0)
			for (int k = 0; k < CLIENTS; k++)
				assert_int_equal(p53_tcp_limits_open(&l, &cl[k]), model[k]);
		assert_int_equal(l.total, total);
	}
	p53_tcp_limits_fini(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_random_against_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
