/*
 * The health: section (control/health/conf.c): defaults without the section, every key set,
 * and a table of bad values, each failing with the "file:line: key: reason" an operator sees.
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

static char tmpdir[] = "/tmp/p53hconf.XXXXXX";

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

static void test_absent(void **state)
{
	struct p53_config cfg;
	char err[512], path[256];
	(void)state;
	assert_int_equal(load(HEAD, &cfg, err, sizeof(err), path, sizeof(path)), 0);
	const struct p53_health_conf *h = p53_health_conf_of(&cfg.health);
	assert_false(cfg.health.present);
	assert_true(h->enabled);
	assert_int_equal(h->hold_down_ms, 300000);
	assert_int_equal(h->min_announce_ms, 300000);
	assert_int_equal(h->warmup_ms, 0);
	assert_int_equal(h->drain_ms, 30000);
	assert_int_equal(h->canary.check.interval_ms, 1000);
	assert_int_equal(h->canary.check.timeout_ms, 250);
	assert_int_equal(h->canary.check.fall, 3);
	assert_int_equal(h->canary.check.rise, 2);
	assert_int_equal(h->canary.qtype, 6); /* SOA of the first zone */
	assert_null(h->canary.name);
	assert_false(h->canary.dnssec);
	assert_int_equal(h->workers.heartbeat_ms, 100);
	assert_null(h->external.command);
	assert_false(cfg.anycast.present);
	p53_config_free(&cfg);
}

static void test_full(void **state)
{
	struct p53_config cfg;
	char err[512], path[256];
	(void)state;
	assert_int_equal(load(HEAD
		"health:\n"
		"  hold_down: 10m\n"
		"  min_announce_interval: 90s\n"
		"  warmup: 2m\n"
		"  drain_time: 45s\n"
		"  on_stop: drain\n"
		"  stop_drain_time: 3s\n"
		"  stop_linger: 0\n"
		"  canary:\n"
		"    expect: ['192.0.2.7', '192.0.2.8']\n"     /* before type: read as A anyway */
		"    type: A\n"
		"    name: canary.example.com\n"
		"    rcode: NOERROR\n"
		"    interval: 200ms\n"                          /* timeout: min(250 ms, interval) */
		"    fall: 4\n"
		"    rise: 5\n"
		"    family: ipv4\n"
		"    dnssec: true\n"
		"  workers: {interval: 20ms, heartbeat: 80ms, rise: 3}\n"
		"  zones: {interval: 2s}\n"
		"  external: {command: 'curl -sf http://127.0.0.1/ok', interval: 1s, fall: 2}\n",
		&cfg, err, sizeof(err), path, sizeof(path)), 0);
	const struct p53_health_conf *h = p53_health_conf_of(&cfg.health);
	assert_true(h->present);
	assert_int_equal(h->hold_down_ms, 600000);
	assert_int_equal(h->min_announce_ms, 90000);
	assert_int_equal(h->warmup_ms, 120000);
	assert_int_equal(h->drain_ms, 45000);
	assert_int_equal(h->on_stop, 1);
	assert_int_equal(h->stop_drain_ms, 3000);
	assert_int_equal(h->stop_linger_ms, 0);
	assert_string_equal(h->canary.name, "canary.example.com");
	assert_int_equal(h->canary.qtype, 1);
	assert_int_equal(h->canary.n_expect, 2);
	assert_string_equal(h->canary.expect[1], "192.0.2.8");
	assert_int_equal(h->canary.check.interval_ms, 200);
	assert_int_equal(h->canary.check.timeout_ms, 200);
	assert_int_equal(h->canary.check.fall, 4);
	assert_int_equal(h->canary.check.rise, 5);
	assert_int_equal(h->canary.family, 1);
	assert_true(h->canary.dnssec);
	assert_int_equal(h->workers.check.interval_ms, 20);
	assert_int_equal(h->workers.heartbeat_ms, 80);
	assert_int_equal(h->workers.check.rise, 3);
	assert_int_equal(h->zones.check.interval_ms, 2000);
	assert_string_equal(h->external.command, "curl -sf http://127.0.0.1/ok");
	assert_int_equal(h->external.check.timeout_ms, 1000);
	assert_int_equal(h->external.check.fall, 2);
	p53_config_free(&cfg);
}

struct bad_case {
	const char *msg, *yaml, *want;
};

/* HEAD is lines 1-7; the health: section starts on line 8. */
static const struct bad_case bad_cases[] = {
	{ "unknown key in health", HEAD "health:\n  hold_dwn: 1s\n", "9: health: unknown key 'hold_dwn'" },
	{ "duration without a unit", HEAD "health:\n  hold_down: 300\n",
	  "9: health.hold_down: expected a duration like 250ms, 2s or 5m (0ms..86400s), got '300'" },
	{ "duration with a bad unit", HEAD "health:\n  warmup: 5d\n",
	  "9: health.warmup: expected a duration like 250ms, 2s or 5m (0ms..86400s), got '5d'" },
	{ "negative duration", HEAD "health:\n  drain_time: -1s\n",
	  "9: health.drain_time: expected a duration like 250ms, 2s or 5m (0ms..86400s), got '-1s'" },
	{ "interval below 10 ms", HEAD "health:\n  canary: {interval: 5ms}\n",
	  "9: health.canary.interval: expected a duration like 250ms, 2s or 5m (10ms..86400s), got '5ms'" },
	{ "timeout longer than interval", HEAD "health:\n  canary:\n    interval: 100ms\n    timeout: 200ms\n",
	  "10: health.canary: timeout (200 ms) is longer than interval (100 ms)" },
	{ "canary.dnssec not a boolean", HEAD "health:\n  canary: {dnssec: sometimes}\n",
	  "9: health.canary.dnssec: expected true or false, got 'sometimes'" },
	{ "fall 0", HEAD "health:\n  canary: {fall: 0}\n",
	  "9: health.canary.fall: expected an integer 1..100, got '0'" },
	{ "rise too large", HEAD "health:\n  workers: {rise: 101}\n",
	  "9: health.workers.rise: expected an integer 1..100, got '101'" },
	{ "unknown record type", HEAD "health:\n  canary: {type: BOGUS}\n",
	  "9: health.canary.type: expected a record type (A, AAAA, TXT, SOA...), got 'BOGUS'" },
	{ "ANY as canary type", HEAD "health:\n  canary: {type: ANY}\n",
	  "9: health.canary.type: expected a record type (A, AAAA, TXT, SOA...), got 'ANY'" },
	{ "bad canary name", HEAD "health:\n  canary: {name: 'a..b'}\n",
	  "9: health.canary.name: expected a domain name, got 'a..b'" },
	{ "RDATA not of the type", HEAD "health:\n  canary:\n    type: A\n    expect: ['not-an-address']\n",
	  "11: health.canary.expect[0]: expected RDATA of a A record, got 'not-an-address'" },
	{ "expect not a list", HEAD "health:\n  canary: {expect: 192.0.2.1}\n",
	  "9: health.canary.expect: expected a list of RDATA strings, got '192.0.2.1'" },
	{ "unknown rcode", HEAD "health:\n  canary: {rcode: YXDOMAIN}\n",
	  "9: health.canary.rcode: expected NOERROR, FORMERR, SERVFAIL, NXDOMAIN, NOTIMP or REFUSED, got 'YXDOMAIN'" },
	{ "unknown on_stop", HEAD "health:\n  on_stop: ignore\n",
	  "9: health.on_stop: expected withdraw or drain, got 'ignore'" },
	{ "external timeout longer than interval", HEAD "health:\n  external: {command: x, interval: 1s, timeout: 2s}\n",
	  "9: health.external: timeout is longer than interval" },
	{ "empty command", HEAD "health:\n  external: {command: ''}\n",
	  "9: health.external.command: expected a non-empty string, got ''" },
	{ "heartbeat too short", HEAD "health:\n  workers: {heartbeat: 1ms}\n",
	  "9: health.workers.heartbeat: expected a duration like 250ms, 2s or 5m (5ms..60s), got '1ms'" },
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
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
