/*
 * Text forms for logs and replies (control/text.c): wire names as presentation text, with
 * RFC 1035 §5.1 escapes, never past the buffer.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_to_str),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
