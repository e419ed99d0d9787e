/*
 * Text forms for logs and replies (control/text.c): wire names as presentation text, with
 * RFC 1035 §5.1 escapes, never past the buffer; record types by their mnemonics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "control/text.h"

static void test_name_to_str(void **state)
{
	(void)state;
	char buf[64];

	assert_string_equal(p53_name_to_str(buf, sizeof(buf), (const uint8_t *)"\x00"), ".");
	assert_string_equal(p53_name_to_str(buf, sizeof(buf), (const uint8_t *)"\x03www\x02" "nl\x00"), "www.nl.");
	assert_string_equal(p53_name_to_str(buf, sizeof(buf), (const uint8_t *)"\x03" "a.b\x00"), "a\\.b.");
	assert_string_equal(p53_name_to_str(buf, sizeof(buf), (const uint8_t *)"\x02" "a\\\x00"), "a\\\\.");
	assert_string_equal(p53_name_to_str(buf, sizeof(buf), (const uint8_t *)"\x01\x07\x00"), "\\007.");
	/* Never writes past the buffer. */
	char small[4];
	p53_name_to_str(small, sizeof(small), (const uint8_t *)"\x05" "abcde\x00");
	assert_true(strlen(small) < sizeof(small));
}

/* Record types in messages: the mnemonic, RFC 3597 §5 TYPEnnn where there is none. */
static void test_type_to_str(void **state)
{
	(void)state;
	char buf[16];
	static const struct {
		uint16_t type;
		const char *want;
	} rows[] = {
		{ 1, "A" }, { 5, "CNAME" }, { 41, "OPT" }, { 46, "RRSIG" }, { 50, "NSEC3" },
		{ 51, "NSEC3PARAM" }, { 0, "TYPE0" }, { 1000, "TYPE1000" }, { 65534, "TYPE65534" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_string_equal(p53_type_to_str(buf, sizeof(buf), rows[i].type), rows[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_to_str),
		cmocka_unit_test(test_type_to_str),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
