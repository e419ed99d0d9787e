/*
 * control/tcp/tcp_conf.c: the `tcp:` section. Every key read, the defaults when the section
 * or a key is missing, and a table of bad values, each with the "file:line: reason" an
 * operator would see.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/conf/config.h"

static char tmpdir[] = "/tmp/p53tcpcfg.XXXXXX";

#define HEAD "server:\n  identity: pop1\n" \
	     "dataplane:\n  port: net_null0\n  addresses: [192.0.2.1]\n" \
	     "zones:\n  - {name: example.com, file: example.com.zone}\n"

static int load(const char *yaml, struct p53_config *cfg, char *err, size_t errlen, char *path,
		size_t plen)
{
	snprintf(path, plen, "%s/c.yaml", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(yaml, f);
	fclose(f);
	return p53_config_load(path, cfg, err, errlen);
}

static void test_all_keys(void **state)
{
	struct p53_config cfg;
	char err[512], path[256];

	(void)state;
	assert_int_equal(load(HEAD "tcp:\n  enabled: true\n  threads: 3\n  idle_timeout_ms: 30000\n"
			      "  io_timeout_ms: 500\n  max_connections: 5000\n  max_per_client: 50\n",
			      &cfg, err, sizeof(err), path, sizeof(path)), 0);
	assert_true(cfg.tcp.enabled);
	assert_int_equal(cfg.tcp.threads, 3);
	assert_int_equal(cfg.tcp.idle_timeout_ms, 30000);
	assert_int_equal(cfg.tcp.io_timeout_ms, 500);
	assert_int_equal(cfg.tcp.max_connections, 5000);
	assert_int_equal(cfg.tcp.max_per_client, 50);
	p53_config_free(&cfg);
}

static void test_defaults(void **state)
{
	struct p53_config cfg;
	char err[512], path[256];

	(void)state;
	/* No section, an empty one, and a partial one all keep the defaults of what is unset. */
	static const char *const yamls[] = {HEAD, HEAD "tcp:\n", HEAD "tcp: {threads: 2}\n"};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(load(yamls[i], &cfg, err, sizeof(err), path, sizeof(path)), 0);
		assert_true(cfg.tcp.enabled);
		assert_int_equal(cfg.tcp.threads, i == 2 ? 2 : 1);
		assert_int_equal(cfg.tcp.idle_timeout_ms, 10000);
		assert_int_equal(cfg.tcp.io_timeout_ms, 2000);
		assert_int_equal(cfg.tcp.max_connections, 1024);
		assert_int_equal(cfg.tcp.max_per_client, 16);
		p53_config_free(&cfg);
	}
	assert_int_equal(load(HEAD "tcp: {enabled: false}\n", &cfg, err, sizeof(err), path,
			      sizeof(path)), 0);
	assert_false(cfg.tcp.enabled);
	p53_config_free(&cfg);
}

static void test_bad(void **state)
{
	static const struct {
		const char *msg, *yaml, *want;
	} rows[] = {
		{"threads 0", "tcp:\n  threads: 0\n", "9: tcp.threads: expected an integer 1..64, got '0'"},
		{"threads 65", "tcp:\n  threads: 65\n", "9: tcp.threads: expected an integer 1..64, got '65'"},
		{"idle timeout under 100 ms", "tcp:\n  idle_timeout_ms: 99\n",
		 "9: tcp.idle_timeout_ms: expected an integer 100..6553500, got '99'"},
		{"idle timeout past what RFC 7828 can signal", "tcp:\n  idle_timeout_ms: 6553600\n",
		 "9: tcp.idle_timeout_ms: expected an integer 100..6553500, got '6553600'"},
		{"io timeout 0", "tcp:\n  io_timeout_ms: 0\n",
		 "9: tcp.io_timeout_ms: expected an integer 50..60000, got '0'"},
		{"no connections at all", "tcp:\n  max_connections: 0\n",
		 "9: tcp.max_connections: expected an integer 1..1000000, got '0'"},
		{"per-client limit 0", "tcp:\n  max_per_client: 0\n",
		 "9: tcp.max_per_client: expected an integer 1..1000000, got '0'"},
		{"unknown key", "tcp:\n  thread: 2\n", "9: tcp: unknown key 'thread'"},
		{"tcp is a scalar", "tcp: yes\n", "8: tcp: expected a mapping, got 'yes'"},
		{"enabled not a boolean", "tcp:\n  enabled: 2\n", "9: tcp.enabled: expected true or false, got '2'"},
	};
	struct p53_config cfg;
	char err[512], path[256], want[768];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char yaml[1024];
		print_message("case: %s\n", rows[i].msg);
		snprintf(yaml, sizeof(yaml), "%s%s", HEAD, rows[i].yaml);
		assert_int_equal(load(yaml, &cfg, err, sizeof(err), path, sizeof(path)), -1);
		snprintf(want, sizeof(want), "%s:%s", path, rows[i].want);
		assert_string_equal(err, want);
	}
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char path[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/c.yaml", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_keys),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
