/*
 * RFC 1071 one's complement sums (dataplane/csum.h) against a straightforward 16-bit reference:
 * every length and alignment of random data, sums made of pieces at any split (as the fast
 * path sums the question apart from the rest, and the reply's records at an odd offset), the
 * fold against the plain four-step fold, and the zero and 0xffff edges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/csum.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* RFC 1071 §4.1: 16-bit big-endian words, the odd byte padded with zero, carries folded. */
static uint16_t ref_sum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | (i + 1 < len ? p[i + 1] : 0));
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* What csum.h gives, as the big-endian number ref_sum() computes: the folded native-order
 * sum stored in memory is the checksum field's bytes. */
static uint16_t p53_sum(uint64_t sum)
{
	uint16_t f = p53_csum_fold(sum);
	uint8_t b[2];

	memcpy(b, &f, 2);
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* The fold as it was written first: four shift-and-add steps. */
static uint16_t fold4(uint64_t sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)sum;
}

static void test_fold(void **state)
{
	(void)state;
	static const uint64_t edges[] = {
		0, 1, 0xfffe, 0xffff, 0x10000, 0x1fffe, 0xfffffffe, 0xffffffff, 0x100000000u,
		0xffff0000ffff0000u, 0x0000ffff0000ffffu, 0xfffffffeffffffffu, 0xffffffff00000000u,
		0xfffffffffffffffeu, 0xffffffffffffffffu, 0x8000000000000000u, 0x7fffffffffffffffu,
		0x0001000100010001u, 0xffff000000000001u,
	};

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		assert_int_equal(p53_csum_fold(edges[i]), fold4(edges[i]));
	for (int i = 0; i < 1000000; i++) {
		uint64_t x = next();
		/* also values with long runs of ones and zeros, where the carries are */
		uint64_t y = (i & 1) ? x | (x << 1) | (x << 2) : x & (x >> 1) & (x >> 2);
		assert_int_equal(p53_csum_fold(x), fold4(x));
		assert_int_equal(p53_csum_fold(y), fold4(y));
	}
	/* 0 only for 0; a nonzero sum congruent to 0 folds to 0xffff (the sender then sends
	 * 0xffff's complement, 0, as 0xffff: RFC 768). */
	assert_int_equal(p53_csum_fold(0), 0);
	assert_int_equal(p53_csum_fold(0xffff), 0xffff);
	assert_int_equal(p53_csum_fold(0xffffffffffffffffu), 0xffff);
	assert_int_equal(p53_csum_fold(0xfffe0001u), 0xffff);
}

static void test_sum_every_length(void **state)
{
	(void)state;
	uint8_t b[320 + 8];

	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (uint8_t)next();
		for (size_t at = 0; at < 8; at++)
			for (size_t len = 0; len <= 320; len++) {
				uint64_t seed = round & 1 ? next() & 0xffffffffu : 0;
				uint16_t want = ref_sum(b + at, len);
				if (seed != 0) {
					/* a starting sum, as the callers pass the pseudo-header in */
					uint8_t s[8];
					for (int k = 0; k < 8; k++)
						s[k] = (uint8_t)(seed >> (8 * k));
					uint8_t both[8 + 320];
					memcpy(both, s, 8);
					memcpy(both + 8, b + at, len);
					want = ref_sum(both, 8 + len);
				}
				assert_int_equal(p53_sum(p53_csum_add(b + at, len, seed)), want);
			}
	}
	/* All ones: every word 0xffff; all zeros: 0. */
	memset(b, 0xff, sizeof(b));
	for (size_t len = 2; len <= 320; len += 2)
		assert_int_equal(p53_sum(p53_csum_add(b, len, 0)), 0xffff);
	memset(b, 0, sizeof(b));
	for (size_t len = 0; len <= 320; len++)
		assert_int_equal(p53_sum(p53_csum_add(b, len, 0)), 0);
}

/* A sum in two pieces: the second summed as if at an even offset, then p53_csum_odd() when it
 * starts at an odd one; what fastpath.c does for the OPT after the question and for the
 * records after it in the reply. */
static void test_pieces(void **state)
{
	(void)state;
	uint8_t b[256];

	for (int round = 0; round < 200; round++) {
		size_t len = (size_t)(next() % sizeof(b));
		for (size_t i = 0; i < len; i++)
			b[i] = (uint8_t)next();
		uint16_t want = ref_sum(b, len);
		for (size_t k = 0; k <= len; k++) {
			uint64_t first = p53_csum_add(b, k, 0);
			uint64_t second = p53_csum_add(b + k, len - k, 0);
			if (k & 1)
				second = p53_csum_odd(second);
			assert_int_equal(p53_sum(p53_csum_addc(first, second)), want);
		}
	}
	/* The rotate by 8 is a byte swap of the folded sum. */
	for (int i = 0; i < 100000; i++) {
		uint64_t x = next();
		uint16_t f = p53_csum_fold(x);
		uint16_t g = p53_csum_fold(p53_csum_odd(x));
		assert_int_equal(g, (uint16_t)(f << 8 | f >> 8));
	}
}

/* p53_csum_addc(): end-around carry at the 64-bit boundary. */
static void test_addc(void **state)
{
	(void)state;
	assert_int_equal(p53_csum_addc(0xffffffffffffffffu, 1), 1);
	assert_int_equal(p53_csum_addc(0xffffffffffffffffu, 0xffffffffffffffffu), 0xffffffffffffffffu);
	assert_int_equal(p53_csum_addc(0x8000000000000000u, 0x8000000000000000u), 1);
	for (int i = 0; i < 100000; i++) {
		uint64_t a = next(), b = i & 1 ? next() | 0xffff000000000000u : next();
		/* the sum's class modulo 0xffff, 0xffff standing for a nonzero multiple */
		unsigned __int128 s = (unsigned __int128)a + b;
		uint16_t want = (uint16_t)(s % 0xffff);
		if (want == 0 && s != 0)
			want = 0xffff;
		assert_int_equal(p53_csum_fold(p53_csum_addc(a, b)), want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_sum_every_length),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_addc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
