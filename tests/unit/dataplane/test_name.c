/*
 * Domain names: canonical form, case, hashing, bounds; and name compression as
 * the responder writes it (decoded here by an independent reader).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/answer.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/name.h"

static void test_lower(void **state)
{
	(void)state;
	uint8_t a[] = "\x03WwW\x07" "ExAmPlE\x03" "CoM";
	uint8_t b[] = "\x03www\x07" "example\x03" "com";
	uint8_t c[sizeof(a)];

	p53_name_lower(c, a, sizeof(a));
	assert_memory_equal(c, b, sizeof(b));
	/* Only ASCII letters fold (RFC 4343 §3): 0xC9 and '[' stay as they are. */
	uint8_t d[] = "\x02\xc9[";
	p53_name_lower(c, d, sizeof(d));
	assert_memory_equal(c, d, sizeof(d));
	/* In place (dst == src) too. */
	p53_name_lower(a, a, sizeof(a));
	assert_memory_equal(a, b, sizeof(b));
}

/* The vector and word forms of the lowering (the question parsers' copies) fold exactly what
 * p53_lower() folds: every byte value 0..255 at every one of the 16 and 8 positions. */
static void test_lower16_lower8_every_byte(void **state)
{
	(void)state;
	uint8_t src[16], dst[16];

	for (unsigned int v = 0; v < 256; v++)
		for (size_t at = 0; at < 16; at++) {
			for (size_t k = 0; k < 16; k++)
				src[k] = (uint8_t)(v + 37 * k + at); /* the others vary too */
			src[at] = (uint8_t)v;
			p53_lower16(dst, src);
			for (size_t k = 0; k < 16; k++)
				assert_int_equal(dst[k], p53_lower(src[k]));
			uint64_t w;
			memcpy(&w, src + (at & 8), 8);
			w = p53_lower8(w);
			memcpy(dst, &w, 8);
			for (size_t k = 0; k < 8; k++)
				assert_int_equal(dst[k], p53_lower(src[(at & 8) + k]));
		}
	/* The boundaries by name: '@' 'A' 'Z' '[' '`' 'a' 'z' '{', 0xC1 0xDA (letters + 0x80). */
	const uint8_t in[16] = {'@', 'A', 'Z', '[', '`', 'a', 'z', '{', 0xc1, 0xda, 0x00, 0x3f, 0x40,
				0x5a, 0x5b, 0x7f};
	const uint8_t out[16] = {'@', 'a', 'z', '[', '`', 'a', 'z', '{', 0xc1, 0xda, 0x00, 0x3f, 0x40,
				 0x7a, 0x5b, 0x7f};
	p53_lower16(dst, in);
	assert_memory_equal(dst, out, 16);
}

static void test_hash_case_blind_after_lowering(void **state)
{
	(void)state;
	uint8_t a[] = "\x03WWW\x07" "EXAMPLE\x00";
	uint8_t b[] = "\x03www\x07" "example\x00";
	uint8_t c[sizeof(a)];

	p53_name_lower(c, a, sizeof(a) - 1);
	assert_int_equal(p53_name_hash(c, sizeof(a) - 1), p53_name_hash(b, sizeof(b) - 1));
	assert_int_not_equal(p53_name_hash(b, sizeof(b) - 1), p53_name_hash(b + 4, sizeof(b) - 5));
}

static void test_len_bounds(void **state)
{
	(void)state;
	uint8_t n[300];

	assert_int_equal(p53_name_len((const uint8_t *)"\x00", 1), 1);
	assert_int_equal(p53_name_len((const uint8_t *)"\x01" "a\x00", 3), 3);
	assert_int_equal(p53_name_len((const uint8_t *)"\x01" "a\x00", 2), -1);   /* runs past max */
	assert_int_equal(p53_name_len((const uint8_t *)"\xc0\x0c", 2), -1);      /* pointer */
	assert_int_equal(p53_name_len((const uint8_t *)"\x40", 70), -1);         /* label type 01 */
	/* 255 bytes is the limit (RFC 1035 §2.3.4): 4 labels of 63 + 3 bytes. */
	memset(n, 'a', sizeof(n));
	for (int i = 0; i < 3; i++)
		n[i * 64] = 63;
	n[192] = 61;
	n[254] = 0;
	assert_int_equal(p53_name_len(n, sizeof(n)), 255);
	n[192] = 62;
	n[255] = 0;
	assert_int_equal(p53_name_len(n, sizeof(n)), -1);
	assert_int_equal(p53_name_labels((const uint8_t *)"\x01" "a\x02" "bc\x00"), 2);
	assert_int_equal(p53_name_labels((const uint8_t *)"\x00"), 0);
}

/* Compression as written by the responder: the answer owner points at the question, and the
 * SOA in a negative answer reuses the question's suffix. Without zones, a CHAOS answer is the
 * simplest record: its owner must be the 2-byte pointer 0xC00C. */
static void test_compression_points_at_question(void **state)
{
	(void)state;
	static const uint8_t q[] = {0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0,
		2, 'I', 'D', 6, 's', 'E', 'r', 'V', 'e', 'R', 0, 0, 16, 0, 3};
	struct p53_answer_conf conf = {.identity = (const uint8_t *)"pop", .identity_len = 3,
				       .edns_max_payload = 1232};
	struct p53_answer_stats st;
	uint8_t buf[512];

	memset(&st, 0, sizeof(st));
	memcpy(buf, q, sizeof(q));
	uint16_t n = p53_answer(NULL, &conf, buf, sizeof(q), sizeof(buf), &st);
	assert_int_equal(n, sizeof(q) + 2 + 10 + 4);
	assert_memory_equal(buf + 12, q + 12, sizeof(q) - 12);  /* question as sent, case kept */
	assert_int_equal(buf[sizeof(q)], 0xc0);
	assert_int_equal(buf[sizeof(q) + 1], 12);
}

/* p53_name_hash() takes 8-, 4-, 2- and 1-byte steps: the same value as one byte at a time,
 * for every length and alignment. */
static void test_hash_bytewise(void **state)
{
	(void)state;
	uint8_t b[264];
	uint64_t x = 0x243f6a8885a308d3u;

	for (size_t i = 0; i < sizeof(b); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (uint8_t)x;
	}
	for (size_t at = 0; at < 8; at++)
		for (size_t len = 0; len <= 255; len++) {
			uint32_t crc = P53_NAME_HASH_SEED;
			for (size_t i = 0; i < len; i++)
				crc = p53_hash_step1(crc, b[at + i]);
			assert_int_equal(p53_name_hash(b + at, len), crc);
		}
}

/* The parser hashes the question while lower-casing it; the image index is keyed by
 * p53_name_hash() of the lower-cased name. They must agree for every length (8-byte words
 * and the byte tail), or lookups silently miss. */
static void test_parser_hash_matches_index_hash(void **state)
{
	(void)state;
	for (int len = 1; len <= 60; len++) {
		uint8_t msg[128] = {0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0};
		size_t o = 12;
		msg[o++] = (uint8_t)len;
		for (int i = 0; i < len; i++)
			msg[o++] = (uint8_t)((i % 2) ? 'A' + i % 26 : 'a' + i % 26);
		msg[o++] = 2;
		msg[o++] = 'N';
		msg[o++] = 'l';
		msg[o++] = 0;
		msg[o++] = 0;
		msg[o++] = 1;
		msg[o++] = 0;
		msg[o++] = 1;
		struct p53_query q;
		assert_int_equal(p53_msg_parse(msg, o, &q), P53_MSG_OK);
		assert_int_equal(q.hash, p53_name_hash(q.lname, q.qname_len));
		for (int i = 0; i < q.qname_len; i++)
			assert_false(q.lname[i] >= 'A' && q.lname[i] <= 'Z');
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lower),
		cmocka_unit_test(test_lower16_lower8_every_byte),
		cmocka_unit_test(test_hash_case_blind_after_lowering),
		cmocka_unit_test(test_len_bounds),
		cmocka_unit_test(test_compression_points_at_question),
		cmocka_unit_test(test_parser_hash_matches_index_hash),
		cmocka_unit_test(test_hash_bytewise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
