/*
 * The COOKIE and ECS option parsers: one table row per shape, well-formed or not, each with
 * the verdict RFC 7873 §4/§5.2.2 or RFC 7871 §6/§7.2.1 gives it. The ECS rows that are
 * well-formed are also fed to libknot's parser, which must agree on family, prefix and
 * address.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <libknot/libknot.h>

#include "dataplane/edns_opt.h"

static void test_cookie_lengths(void **state)
{
	(void)state;
	uint8_t data[64];
	struct p53_cookie_opt c;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	for (size_t len = 0; len < sizeof(data); len++) {
		int want_ok = len == 8 || (len >= 16 && len <= 40);
		print_message("COOKIE option of %zu bytes: %s\n", len, want_ok ? "well-formed" : "FORMERR");
		assert_int_equal(p53_edns_cookie_parse(data, len, &c), want_ok ? 0 : -1);
		if (!want_ok)
			continue;
		assert_ptr_equal(c.client, data);
		assert_int_equal(c.server_len, len - 8);
		if (len == 8)
			assert_null(c.server);
		else
			assert_ptr_equal(c.server, data + 8);
	}
}

struct ecs_row {
	const char *what;
	uint8_t data[24];
	size_t len;
	enum p53_ecs_status want;
};

static const struct ecs_row ecs_rows[] = {
	{"IPv4 /24", {0, 1, 24, 0, 192, 0, 2}, 7, P53_ECS_OK},
	{"IPv4 /32", {0, 1, 32, 0, 192, 0, 2, 1}, 8, P53_ECS_OK},
	{"IPv4 /0, no address bytes", {0, 1, 0, 0}, 4, P53_ECS_OK},
	{"IPv4 /20: the last byte's low bits are clear", {0, 1, 20, 0, 10, 1, 0xf0}, 7, P53_ECS_OK},
	{"IPv6 /56", {0, 2, 56, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0x12}, 11, P53_ECS_OK},
	{"IPv6 /128", {0, 2, 128, 0, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 20, P53_ECS_OK},
	{"3 bytes: no room for the prefix lengths", {0, 1, 24}, 3, P53_ECS_SHORT},
	{"empty option", {0}, 0, P53_ECS_SHORT},
	{"FAMILY 0 is unknown", {0, 0, 0, 0}, 4, P53_ECS_FAMILY},
	{"FAMILY 3 is unknown", {0, 3, 8, 0, 10}, 5, P53_ECS_FAMILY},
	{"IPv4 source prefix 33", {0, 1, 33, 0, 1, 2, 3, 4, 0}, 9, P53_ECS_SOURCE},
	{"IPv6 source prefix 129", {0, 2, 129, 0}, 4, P53_ECS_SOURCE},
	{"scope prefix 24 in a query", {0, 1, 24, 24, 192, 0, 2}, 7, P53_ECS_SCOPE},
	{"IPv4 /24 with four address bytes (too many)", {0, 1, 24, 0, 192, 0, 2, 0}, 8, P53_ECS_ADDR_LEN},
	{"IPv4 /24 with two address bytes (too few)", {0, 1, 24, 0, 192, 0}, 6, P53_ECS_ADDR_LEN},
	{"IPv4 /0 with an address byte", {0, 1, 0, 0, 0}, 5, P53_ECS_ADDR_LEN},
	{"IPv4 /20 with a bit set past the prefix", {0, 1, 20, 0, 10, 1, 0xf8}, 7, P53_ECS_ADDR_BITS},
	{"IPv4 /31 with the last bit set", {0, 1, 31, 0, 10, 0, 0, 1}, 8, P53_ECS_ADDR_BITS},
	{"IPv6 /57 with bit 57 set", {0, 2, 57, 0, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0x40}, 12, P53_ECS_ADDR_BITS},
};

static void test_ecs_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ecs_rows) / sizeof(ecs_rows[0]); i++) {
		const struct ecs_row *r = &ecs_rows[i];
		struct p53_ecs_opt e;

		print_message("case: %s\n", r->what);
		assert_int_equal(p53_edns_ecs_parse(r->data, r->len, &e), r->want);
		if (r->want != P53_ECS_OK)
			continue;
		knot_edns_client_subnet_t k;
		assert_int_equal(knot_edns_client_subnet_parse(&k, r->data, (uint16_t)r->len), KNOT_EOK);
		assert_int_equal(k.family, e.family);
		assert_int_equal(k.source_len, e.source);
		assert_int_equal(k.scope_len, e.scope);
		assert_memory_equal(k.address, e.addr, (e.source + 7) / 8);
		for (size_t b = (e.source + 7u) / 8u; b < sizeof(e.addr); b++)
			assert_int_equal(e.addr[b], 0);
	}
}

/* Every prefix of a valid option is parsed without reading past its length (ASAN/valgrind). */
static void test_ecs_prefixes(void **state)
{
	(void)state;
	static const uint8_t full[] = {0, 2, 128, 0, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	struct p53_ecs_opt e;

	for (size_t len = 0; len < sizeof(full); len++) {
		uint8_t *copy = test_malloc(len + 1);
		memcpy(copy, full, len);
		assert_int_not_equal(p53_edns_ecs_parse(copy, len, &e), P53_ECS_OK);
		test_free(copy);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cookie_lengths),
		cmocka_unit_test(test_ecs_table),
		cmocka_unit_test(test_ecs_prefixes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
