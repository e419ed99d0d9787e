/*
 * Unit tests for control/conf/config_diff.c: which config edits reach the zone image. A table
 * of edits of one base config, each row with the verdict and, when the image depends on it,
 * the start of the reason an operator reads in the reload's reply.
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

#include "control/conf/config_diff.h"

static const char base[] =
	"# the base config\n"
	"server:\n"
	"  identity: pop1\n"
	"  control_socket: /run/a.sock\n"
	"dataplane:\n"
	"  port: \"net_null0\"\n"
	"  workers: 1\n"
	"  addresses: [192.0.2.53]\n"
	"zones:\n"
	"  - {name: a.test, file: a.zone}\n"
	"  - name: b.test\n"
	"    file: b.zone\n"
	"rrl:\n"
	"  responses_per_second: 10\n"
	"health: {interval_ms: 1000}\n";

struct row {
	const char *what;       /* the edit, as the operator made it */
	const char *text;       /* the new config */
	int want;               /* 0: runtime only, 1: the image depends on it */
	const char *why;        /* the start of the reason, for want 1 */
};

static const struct row rows[] = {
	{ "the same text", NULL, 0, NULL },
	{ "a comment added and lines moved: nothing the image holds",
	  "# the base config\n# tuned\n\n"
	  "server:\n  identity: pop1\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - {name: a.test, file: a.zone}\n  - name: b.test\n    file: b.zone\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\n", 0, NULL },
	{ "rrl and health values changed, cookies added: runtime",
	  "server:\n  identity: pop1\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - {name: a.test, file: a.zone}\n  - name: b.test\n    file: b.zone\n"
	  "rrl:\n  responses_per_second: 20\n  window: 5\nhealth: {interval_ms: 500}\ncookies: {}\n",
	  0, NULL },
	{ "key order in a mapping and flow/block style: the same values",
	  "dataplane: {addresses: [192.0.2.53], workers: 1, port: net_null0}\n"
	  "server: {control_socket: /run/a.sock, identity: pop1}\n"
	  "zones:\n  - {file: a.zone, name: a.test}\n  - {name: b.test, file: b.zone}\n"
	  "rrl: {responses_per_second: 10}\nhealth: {interval_ms: 1000}\n", 0, NULL },
	{ "server.control_socket and dataplane.workers (restart-only): runtime",
	  "server:\n  identity: pop1\n  control_socket: /run/b.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 2\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - {name: a.test, file: a.zone}\n  - name: b.test\n    file: b.zone\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\n", 0, NULL },
	{ "a zone's file changed",
	  "server:\n  identity: pop1\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - {name: a.test, file: a.zone}\n  - name: b.test\n    file: b2.zone\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\n", 1,
	  "zones[1] (b.test).file changed (x.yaml:11)" },
	{ "a zone added",
	  "server:\n  identity: pop1\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - {name: a.test, file: a.zone}\n  - name: b.test\n    file: b.zone\n"
	  "  - {name: c.test, file: c.zone}\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\n", 1,
	  "zones[2] (c.test) added" },
	{ "a zone option added (transfer)",
	  "server:\n  identity: pop1\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - {name: a.test, file: a.zone, transfer: {allow: [192.0.2.1]}}\n"
	  "  - name: b.test\n    file: b.zone\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\n", 1,
	  "zones[0] (a.test).transfer added" },
	{ "the zones reordered",
	  "server:\n  identity: pop1\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - name: b.test\n    file: b.zone\n  - {name: a.test, file: a.zone}\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\n", 1,
	  "zones[0] (b.test).name changed" },
	{ "server.identity (in every replica)",
	  "server:\n  identity: pop2\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - {name: a.test, file: a.zone}\n  - name: b.test\n    file: b.zone\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\n", 1,
	  "server.identity changed" },
	{ "dataplane.addresses (in every replica)",
	  "server:\n  identity: pop1\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.54]\n"
	  "zones:\n  - {name: a.test, file: a.zone}\n  - name: b.test\n    file: b.zone\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\n", 1,
	  "dataplane.addresses[0] changed" },
	{ "a steering section added",
	  "server:\n  identity: pop1\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - {name: a.test, file: a.zone}\n  - name: b.test\n    file: b.zone\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\nsteering: {}\n", 1,
	  "steering added" },
	{ "a top-level key this code does not know: counts",
	  "server:\n  identity: pop1\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - {name: a.test, file: a.zone}\n  - name: b.test\n    file: b.zone\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\nfuture: 1\n", 1,
	  "future added" },
	{ "a value quoted: \"~\" is not null",
	  "server:\n  identity: \"pop1\"\n  control_socket: /run/a.sock\n"
	  "dataplane:\n  port: \"net_null0\"\n  workers: 1\n  addresses: [192.0.2.53]\n"
	  "zones:\n  - {name: a.test, file: a.zone}\n  - name: b.test\n    file: b.zone\n"
	  "rrl:\n  responses_per_second: 10\nhealth: {interval_ms: 1000}\n", 1,
	  "server.identity changed" },
	{ "a new text that does not parse", "zones: [\n", -1, "x.yaml: the new config does not parse" },
};

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		const char *t = r->text != NULL ? r->text : base;
		char why[400];
		int rc = p53_config_compile_diff("x.yaml", base, strlen(base), t, strlen(t), why,
						 sizeof(why));
		if (rc != r->want || (r->why != NULL && strncmp(why, r->why, strlen(r->why)) != 0))
			fail_msg("%s: got %d '%s', want %d '%s'", r->what, rc, why, r->want,
				 r->why != NULL ? r->why : "");
	}
}

/* A config with an alias cycle against itself: compared down to the depth limit and said
 * changed (or refused by libyaml), never looped forever. */
static void test_alias_cycle_self(void **state)
{
	(void)state;
	const char *t = "server: &a\n  identity: pop1\n  self: *a\nzones: []\n";
	char why[200];
	assert_int_not_equal(p53_config_compile_diff("x.yaml", t, strlen(t), t, strlen(t), why,
						     sizeof(why)), 0);
}

static void test_text_read(void **state)
{
	(void)state;
	char path[] = "/tmp/p53cfgdiff.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, base, strlen(base)), (ssize_t)strlen(base));
	close(fd);
	char *buf;
	size_t len;
	assert_int_equal(p53_config_text_read(path, &buf, &len), 0);
	assert_int_equal(len, strlen(base));
	assert_string_equal(buf, base);
	free(buf);
	unlink(path);
	assert_int_equal(p53_config_text_read(path, &buf, &len), -1);
	assert_null(buf);
	assert_int_equal(p53_config_text_read("/tmp", &buf, &len), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_alias_cycle_self),
		cmocka_unit_test(test_text_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
