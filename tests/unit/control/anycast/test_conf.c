/*
 * The anycast: section (control/anycast/conf.c): FRR by default, every announcer's keys, and
 * a table of bad values, each failing with the "file:line: key: reason" an operator sees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/anycast/anycast.h"
#include "control/conf/config.h"

static char tmpdir[] = "/tmp/p53aconf.XXXXXX";

#define HEAD "server:\n  identity: pop1\ndataplane:\n  port: net_null0\n  addresses: [192.0.2.1]\n" \
	     "zones:\n  - {name: example.com, file: example.com.zone}\n"

static int load(const char *yaml, struct p53_config *cfg, char *err, size_t len, char *path, size_t plen)
{
	snprintf(path, plen, "%s/c.yaml", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(yaml, f);
	fclose(f);
	memset(cfg, 0, sizeof(*cfg));
	return p53_config_load(path, cfg, err, len);
}

static void test_frr_default(void **state)
{
	struct p53_config cfg;
	char err[512], path[256];
	(void)state;
	assert_int_equal(load(HEAD "anycast:\n  prefixes: [192.0.2.53/32]\n", &cfg, err, sizeof(err), path, sizeof(path)), 0);
	assert_true(cfg.anycast.present);
	assert_true(cfg.anycast.frr.present);
	assert_false(cfg.anycast.bird.present);
	assert_string_equal(cfg.anycast.frr.device, "p53any");
	assert_string_equal(cfg.anycast.frr.depref_device, "p53any-dp");
	assert_null(cfg.anycast.frr.check);
	assert_int_equal(cfg.anycast.retry_ms, 2000);
	assert_int_equal(cfg.anycast.n_prefixes, 1);
	assert_int_equal(cfg.anycast.prefixes[0].len, 32);
	p53_config_free(&cfg);
}

static void test_all(void **state)
{
	struct p53_config cfg;
	char err[512], path[256], p[64];
	(void)state;
	assert_int_equal(load(HEAD
		"anycast:\n"
		"  prefixes: [192.0.2.53/32, \"2001:db8:53::/48\"]\n"
		"  retry: 500ms\n"
		"  frr: {device: any0, depref_device: any1, check: 'true', check_interval: 1s, check_timeout: 200ms}\n"
		"  bird: {protocol: anycast, depref_protocol: anycast_dp, socket: /run/bird/bird.ctl, timeout: 1s}\n"
		"  exabgp: {output: /run/pop53/exabgp.fifo, next_hop: 192.0.2.179, depref: 'as-path [65053 65053]'}\n"
		"  command: {run: /usr/local/bin/hook, timeout: 3s}\n",
		&cfg, err, sizeof(err), path, sizeof(path)), 0);
	const struct p53_anycast_conf *a = &cfg.anycast;
	assert_int_equal(a->n_prefixes, 2);
	p53_prefix_str(&a->prefixes[1], p, sizeof(p));
	assert_string_equal(p, "2001:db8:53::/48");
	assert_int_equal(a->retry_ms, 500);
	assert_string_equal(a->frr.device, "any0");
	assert_string_equal(a->frr.depref_device, "any1");
	assert_int_equal(a->frr.check_timeout_ms, 200);
	assert_string_equal(a->bird.birdc, "/usr/sbin/birdc");
	assert_string_equal(a->bird.depref_protocol, "anycast_dp");
	assert_int_equal(a->bird.timeout_ms, 1000);
	assert_string_equal(a->exabgp.next_hop, "192.0.2.179");
	assert_string_equal(a->exabgp.depref, "as-path [65053 65053]");
	assert_string_equal(a->command.run, "/usr/local/bin/hook");
	assert_int_equal(a->command.timeout_ms, 3000);
	p53_config_free(&cfg);
}

static void test_exabgp_defaults(void **state)
{
	struct p53_config cfg;
	char err[512], path[256];
	(void)state;
	assert_int_equal(load(HEAD "anycast:\n  exabgp: {}\n", &cfg, err, sizeof(err), path, sizeof(path)), 0);
	assert_false(cfg.anycast.frr.present); /* an announcer named: no FRR by default */
	assert_string_equal(cfg.anycast.exabgp.output, "stdout");
	assert_string_equal(cfg.anycast.exabgp.next_hop, "self");
	assert_string_equal(cfg.anycast.exabgp.depref, "community [65535:0]");
	p53_config_free(&cfg);
}

struct bad_case {
	const char *msg, *yaml, *want;
};

/* HEAD is lines 1-7; anycast: is line 8. */
static const struct bad_case bad_cases[] = {
	{ "unknown announcer", HEAD "anycast:\n  gobgp: {}\n", "9: anycast: unknown key 'gobgp'" },
	{ "prefix with host bits", HEAD "anycast:\n  prefixes: [192.0.2.53/24]\n",
	  "9: anycast.prefixes[0]: '192.0.2.53/24' has bits set past /24" },
	{ "not a prefix", HEAD "anycast:\n  prefixes: [anycast.example]\n",
	  "9: anycast.prefixes[0]: expected an IPv4 or IPv6 prefix (192.0.2.0/24, 2001:db8::/32), got 'anycast.example'" },
	{ "duplicate prefix", HEAD "anycast:\n  prefixes: [192.0.2.53/32, 192.0.2.53]\n",
	  "9: anycast.prefixes[1]: duplicate prefix" },
	{ "interface name too long", HEAD "anycast:\n  frr: {device: pop53-anycast-dev0}\n",
	  "9: anycast.frr.device: expected an interface name (1..15 bytes, no '/', ':' or spaces), got 'pop53-anycast-dev0'" },
	{ "same device twice", HEAD "anycast:\n  frr: {device: a, depref_device: a}\n",
	  "9: anycast.frr: device and depref_device must differ" },
	{ "bird without protocol", HEAD "anycast:\n  bird: {socket: /run/bird.ctl}\n",
	  "9: anycast.bird: missing required key 'protocol'" },
	{ "command without run", HEAD "anycast:\n  command: {timeout: 1s}\n",
	  "9: anycast.command: missing required key 'run'" },
	{ "retry too short", HEAD "anycast:\n  retry: 10ms\n",
	  "9: anycast.retry: expected a duration like 250ms, 2s or 5m (100ms..3600s), got '10ms'" },
	{ "announcer not a mapping", HEAD "anycast:\n  frr: yes\n",
	  "9: anycast.frr: expected a mapping, got 'yes'" },
};

static void test_bad(void **state)
{
	char err[512], want[768], path[256];
	int failures = 0;
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct p53_config cfg;
		int rc = load(bad_cases[i].yaml, &cfg, err, sizeof(err), path, sizeof(path));
		snprintf(want, sizeof(want), "%s:%s", path, bad_cases[i].want);
		if (rc != -1 || strcmp(err, want) != 0) {
			print_error("row %zu (%s):\n  want: %s\n  got:  %s (rc %d)\n", i, bad_cases[i].msg, want, err, rc);
			failures++;
		}
		if (rc == 0)
			p53_config_free(&cfg);
	}
	assert_int_equal(failures, 0);
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
		cmocka_unit_test(test_frr_default),
		cmocka_unit_test(test_all),
		cmocka_unit_test(test_exabgp_defaults),
		cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
