/*
 * Unit tests for control/conf/config.c: a full config loads with every field, defaults and
 * relative paths right; the shipped configs load; and a table of bad configs, each failing
 * with the exact "file:line: reason" an operator would see.
 *
 * Fixtures are written to a mkdtemp() directory so each row's YAML sits next to what it
 * breaks; the shipped configs are read from P53_SRCDIR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/conf/config.h"
#include "control/xfr/serve_conf.h"

#ifndef P53_SRCDIR
#define P53_SRCDIR "."
#endif

static char tmpdir[] = "/tmp/p53cfg.XXXXXX";

/*
 * Allocation fault injection, to prove that a load failing at any allocation leaves nothing
 * behind. glibc lets a program replace malloc (all of libc and libyaml then call these); they
 * forward to glibc's own allocator. Under valgrind its allocator wins and these are never
 * called: test_alloc_failures() then notices and skips, and valgrind checks for leaks instead.
 * Under AddressSanitizer they are not defined at all (they would bypass its allocator), and
 * LeakSanitizer does the checking.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define P53_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define P53_ASAN 1
#endif

static bool tracking;           /* count and inject only inside the code under test */
static long alloc_calls;        /* allocation calls since tracking started */
static long alloc_fail_at;      /* fail this call (1-based); 0 = never */
static long alloc_live;         /* blocks allocated minus blocks freed while tracking */

#ifndef P53_ASAN
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static bool alloc_should_fail(void)
{
	return tracking && ++alloc_calls == alloc_fail_at;
}

void *malloc(size_t n)
{
	void *p = alloc_should_fail() ? NULL : __libc_malloc(n);

	alloc_live += tracking && p != NULL;
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p = alloc_should_fail() ? NULL : __libc_calloc(n, size);

	alloc_live += tracking && p != NULL;
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p = alloc_should_fail() ? NULL : __libc_realloc(old, n);

	alloc_live += tracking && p != NULL && old == NULL;
	return p;
}

void free(void *p)
{
	alloc_live -= tracking && p != NULL;
	__libc_free(p);
}
#endif /* P53_ASAN */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void fixture(char *path, size_t len, const char *name, const char *text)
{
	snprintf(path, len, "%s/%s", tmpdir, name);
	write_file(path, text);
}

static int is_zeroed(const struct p53_config *cfg)
{
	static const struct p53_config zero;

	return memcmp(cfg, &zero, sizeof(zero)) == 0;
}

static void addr_is(const struct p53_addr *a, int family, const char *text)
{
	uint8_t want[16] = { 0 };

	assert_int_equal(inet_pton(family, text, want), 1);
	assert_int_equal(a->family, family);
	assert_memory_equal(a->bytes, want, family == AF_INET ? 4 : 16);
}

static const char full_yaml[] =
	"# every key set\n"
	"server:\n"
	"  identity: pop-ams1\n"
	"  version: \"pop53 test\"\n"
	"  edns_max_payload: 4096\n"
	"  control_socket: /tmp/p53.sock\n"
	"dataplane:\n"
	"  eal: [\"-l\", \"0-2\", \"--no-pci\"]\n"
	"  port: \"0000:3b:00.0\"\n"
	"  workers: 2\n"
	"  addresses:\n"
	"    - 192.0.2.53\n"
	"    - 2001:db8:53::53\n"
	"  xdp_prog: bpf/steer.bpf.o\n"
	"  idle:\n"
	"    mode: busy\n"
	"    max_sleep_us: 0\n"
	"    spin_polls: 1000\n"
	"  burst: 64\n"
	"  answer_cache: 4096\n"
	"  af_xdp: {busy_budget: 0, force_copy: true, tx_budget: 128}\n"
	"  rx_desc: 2048\n"
	"  tx_desc: 512\n"
	"  mbufs: 16383\n"
	"  mode: dpdk\n"
	"  exception:\n"
	"    iface: p53x\n"
	"    addresses: [198.51.100.10/24, \"2001:db8:100::10/64\"]\n"
	"    queue: 256\n"
	"    max_sleep_us: 50\n"
	"dnssec:\n"
	"  signature_margin: 86400\n"
	"zones:\n"
	"  - name: example.com\n"
	"    file: zones/example.com.zone\n"
	"  - name: Example.NET.\n"
	"    file: /srv/zones/example.net.zone\n"
	"  - name: .\n"
	"    file: root.zone\n"
	"rrl:\n"
	"  responses_per_second: 10\n"
	"  nxdomains_per_second: 5\n"
	"  all_per_second: 100\n"
	"  window: 30\n"
	"  slip: 3\n"
	"  ipv4_prefix_length: 22\n"
	"  ipv6_prefix_length: 48\n"
	"  exempt_clients: [192.0.2.0/24, \"2001:db8::/32\", 198.51.100.7]\n"
	"  log_only: true\n"
	"  table_size: 1024\n"
	"cookies:\n"
	"  enabled: true\n"
	"  secret_rotation: 3600\n"
	"  secret_file: cookie.key\n";

#define COOKIE_KEY "00112233445566778899aabbccddeeff\n"

static void test_full_config(void **state)
{
	struct p53_config cfg = { 0 };
	char path[512], want[600], err[512] = "";

	(void)state;
	fixture(path, sizeof(path), "cookie.key", COOKIE_KEY);
	fixture(path, sizeof(path), "full.yaml", full_yaml);
	assert_int_equal(p53_config_load(path, &cfg, err, sizeof(err)), 0);
	assert_string_equal(err, "");

	assert_string_equal(cfg.path, path);
	assert_string_equal(cfg.identity, "pop-ams1");
	assert_string_equal(cfg.version, "pop53 test");
	assert_int_equal(cfg.edns_max_payload, 4096);
	assert_string_equal(cfg.control_socket, "/tmp/p53.sock");

	assert_int_equal(cfg.n_eal, 3);
	assert_string_equal(cfg.eal[0], "-l");
	assert_string_equal(cfg.eal[1], "0-2");
	assert_string_equal(cfg.eal[2], "--no-pci");
	assert_null(cfg.eal[3]);        /* NULL-terminated for argv use */
	assert_string_equal(cfg.port, "0000:3b:00.0");
	assert_int_equal(cfg.workers, 2);
	assert_int_equal(cfg.n_addrs, 2);
	addr_is(&cfg.addrs[0], AF_INET, "192.0.2.53");
	addr_is(&cfg.addrs[1], AF_INET6, "2001:db8:53::53");
	snprintf(want, sizeof(want), "%s/bpf/steer.bpf.o", tmpdir);
	assert_string_equal(cfg.xdp_prog, want);
	assert_int_equal(cfg.idle, P53_IDLE_BUSY);
	assert_int_equal(cfg.idle_max_us, 0);
	assert_int_equal(cfg.idle_spin_polls, 1000);
	assert_int_equal(cfg.burst, 64);
	assert_int_equal(cfg.answer_cache, 4096);
	assert_int_equal(cfg.af_xdp_busy_budget, 0);
	assert_true(cfg.af_xdp_force_copy);
	assert_int_equal(cfg.af_xdp_tx_budget, 128);
	assert_int_equal(cfg.rx_desc, 2048);
	assert_int_equal(cfg.tx_desc, 512);
	assert_int_equal(cfg.mbufs, 16383);
	assert_int_equal(cfg.dnssec.margin_s, 86400);
	assert_int_equal(cfg.mode, P53_MODE_DPDK);
	assert_string_equal(cfg.exc.iface, "p53x");
	assert_int_equal(cfg.exc.n_addrs, 2);
	assert_int_equal(cfg.exc.addrs[0].family, AF_INET);
	assert_int_equal(cfg.exc.addrs[0].len, 24);
	assert_memory_equal(cfg.exc.addrs[0].bytes, "\xc6\x33\x64\x0a", 4); /* host bits kept */
	assert_int_equal(cfg.exc.addrs[1].family, AF_INET6);
	assert_int_equal(cfg.exc.addrs[1].len, 64);
	assert_int_equal(cfg.exc.addrs[1].bytes[15], 0x10);
	assert_int_equal(cfg.exc.queue, 256);
	assert_int_equal(cfg.exc.idle_max_us, 50);

	assert_int_equal(cfg.n_zones, 3);
	assert_string_equal(cfg.zones[0].name, "example.com.");
	snprintf(want, sizeof(want), "%s/zones/example.com.zone", tmpdir);
	assert_string_equal(cfg.zones[0].file, want);
	assert_int_equal(cfg.zones[0].line, 34);
	assert_string_equal(cfg.zones[1].name, "Example.NET.");  /* case kept as written */
	assert_string_equal(cfg.zones[1].file, "/srv/zones/example.net.zone");
	assert_int_equal(cfg.zones[1].line, 36);
	assert_string_equal(cfg.zones[2].name, ".");
	assert_int_equal(cfg.zones[2].line, 38);

	const struct p53_rrl_config *r = &cfg.abuse.rrl;
	assert_true(r->enabled);
	assert_int_equal(r->rate[P53_RRL_RESPONSES], 10);
	assert_int_equal(r->rate[P53_RRL_REFERRALS], 10);       /* BIND: defaults to responses */
	assert_int_equal(r->rate[P53_RRL_NODATA], 10);
	assert_int_equal(r->rate[P53_RRL_NXDOMAINS], 5);
	assert_int_equal(r->rate[P53_RRL_ERRORS], 10);
	assert_int_equal(r->rate[P53_RRL_ALL], 100);
	assert_int_equal(r->window, 30);
	assert_int_equal(r->slip, 3);
	assert_int_equal(r->ipv4_prefix_length, 22);
	assert_int_equal(r->ipv6_prefix_length, 48);
	assert_true(r->log_only);
	assert_int_equal(r->table_size, 1024);
	assert_int_equal(r->n_exempt, 3);
	assert_int_equal(r->exempt[0].family, 4);
	assert_int_equal(r->exempt[0].bits, 24);
	assert_memory_equal(r->exempt[0].bytes, "\xc0\x00\x02\x00", 4);
	assert_int_equal(r->exempt[1].family, 6);
	assert_int_equal(r->exempt[1].bits, 32);
	assert_int_equal(r->exempt[2].bits, 32);                /* a bare address is a host */
	const struct p53_cookie_config *ck = &cfg.abuse.cookies;
	assert_true(ck->enabled);
	assert_int_equal(ck->secret_rotation, 3600);
	snprintf(want, sizeof(want), "%s/cookie.key", tmpdir);
	assert_string_equal(ck->secret_file, want);
	assert_true(ck->have_master);
	assert_memory_equal(ck->master, "\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff", 16);

	p53_config_free(&cfg);
	assert_true(is_zeroed(&cfg));
	p53_config_free(&cfg);          /* safe twice */
}

static const char minimal_yaml[] =
	"server:\n"
	"  identity: pop1\n"
	"  version:\n"                  /* empty optional value = absent */
	"dataplane:\n"
	"  port: net_null0\n"
	"  addresses: [192.0.2.1]\n"
	"  idle:\n"
	"zones:\n"
	"  - {name: example.com, file: example.com.zone}\n";

static void test_defaults(void **state)
{
	struct p53_config cfg = { 0 };
	char path[512], want[600], err[512];

	(void)state;
	fixture(path, sizeof(path), "minimal.yaml", minimal_yaml);
	assert_int_equal(p53_config_load(path, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.identity, "pop1");
	assert_null(cfg.version);       /* version.bind / version.server are REFUSED */
	assert_int_equal(cfg.edns_max_payload, 1232);
	assert_string_equal(cfg.control_socket, "/run/pop53/control.sock");
	assert_int_equal(cfg.n_eal, 0);
	assert_null(cfg.eal);
	assert_int_equal(cfg.workers, 1);
	assert_int_equal(cfg.n_addrs, 1);
	addr_is(&cfg.addrs[0], AF_INET, "192.0.2.1");
	assert_null(cfg.xdp_prog);
	assert_int_equal(cfg.idle, P53_IDLE_ADAPTIVE);
	assert_int_equal(cfg.idle_max_us, 200);
	assert_int_equal(cfg.idle_spin_polls, 64);
	assert_int_equal(cfg.burst, 32);
	assert_int_equal(cfg.answer_cache, 1024);
	assert_int_equal(cfg.af_xdp_busy_budget, 64);
	assert_false(cfg.af_xdp_force_copy);
	assert_int_equal(cfg.af_xdp_tx_budget, 0);
	assert_int_equal(cfg.rx_desc, 2048);
	assert_int_equal(cfg.tx_desc, 1024);
	assert_int_equal(cfg.mbufs, 8191);
	assert_int_equal(cfg.dnssec.margin_s, 3 * 86400);
	assert_int_equal(cfg.mode, P53_MODE_XDP);       /* the kernel keeps the NIC */
	assert_string_equal(cfg.exc.iface, "pop53x");
	assert_int_equal(cfg.exc.n_addrs, 0);
	assert_int_equal(cfg.exc.queue, 1024);
	assert_int_equal(cfg.exc.idle_max_us, 100);
	assert_int_equal(cfg.n_zones, 1);
	snprintf(want, sizeof(want), "%s/example.com.zone", tmpdir);
	assert_string_equal(cfg.zones[0].file, want);
	/* No rrl: section, no rate limiting; cookies on with a random daily secret. */
	assert_false(cfg.abuse.rrl.enabled);
	assert_int_equal(cfg.abuse.rrl.window, 15);
	assert_int_equal(cfg.abuse.rrl.slip, 2);
	assert_int_equal(cfg.abuse.rrl.ipv4_prefix_length, 24);
	assert_int_equal(cfg.abuse.rrl.ipv6_prefix_length, 56);
	assert_int_equal(cfg.abuse.rrl.table_size, 65536);
	assert_true(cfg.abuse.cookies.enabled);
	assert_int_equal(cfg.abuse.cookies.secret_rotation, 86400);
	assert_false(cfg.abuse.cookies.have_master);
	p53_config_free(&cfg);
}

/* A bare file name has no directory to resolve against: the zone path stays as written. */
static void test_bare_path(void **state)
{
	struct p53_config cfg = { 0 };
	char path[512], cwd[512], err[512];

	(void)state;
	fixture(path, sizeof(path), "bare.yaml", minimal_yaml);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmpdir), 0);
	assert_int_equal(p53_config_load("bare.yaml", &cfg, err, sizeof(err)), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_string_equal(cfg.zones[0].file, "example.com.zone");
	p53_config_free(&cfg);
}

/* The configs we ship must stay loadable. */
static void test_shipped_configs(void **state)
{
	static const char *const files[] = {
		P53_SRCDIR "/configs/lab.yaml",
		P53_SRCDIR "/configs/production.example.yaml",
	};
	struct p53_config cfg = { 0 };
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		err[0] = '\0';
		if (p53_config_load(files[i], &cfg, err, sizeof(err)) != 0)
			fail_msg("%s", err);
		assert_true(cfg.n_zones >= 1);
		p53_config_free(&cfg);
	}
	assert_int_equal(p53_config_load(files[0], &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.identity, "lab-pop1");
	assert_string_equal(cfg.port, "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1");
	assert_int_equal(cfg.workers, 1);
	assert_int_equal(cfg.n_addrs, 2);
	addr_is(&cfg.addrs[0], AF_INET, "192.0.2.53");
	addr_is(&cfg.addrs[1], AF_INET6, "2001:db8:53::53");
	assert_int_equal(cfg.n_eal, 5);
	assert_string_equal(cfg.eal[4], "--log-level=*:notice");
	assert_int_equal(cfg.idle, P53_IDLE_ADAPTIVE);
	assert_string_equal(cfg.zones[0].name, "example.com.");
	assert_string_equal(cfg.zones[0].file, P53_SRCDIR "/configs/../zones/example.com.zone");
	p53_config_free(&cfg);
}

static void test_cannot_open(void **state)
{
	struct p53_config cfg = { 0 };
	char path[512], want[600], err[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/no-such.yaml", tmpdir);
	assert_int_equal(p53_config_load(path, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
	assert_string_equal(err, want);
	assert_true(is_zeroed(&cfg));

	assert_int_equal(p53_config_load(tmpdir, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: cannot open: Is a directory", tmpdir);
	assert_string_equal(err, want);
	assert_true(is_zeroed(&cfg));

	/* Regression: a FIFO blocked open() for ever (the daemon's control thread, when
	 * `config check` ran there). It is refused without blocking. */
	snprintf(path, sizeof(path), "%s/fifo.yaml", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(p53_config_load(path, &cfg, err, sizeof(err)), -1);
	unlink(path);
	snprintf(want, sizeof(want), "%s: cannot open: not a regular file", path);
	assert_string_equal(err, want);
	assert_true(is_zeroed(&cfg));
}

/* Secondary zones, TSIG keys and the xfr section (control/xfr/conf.c). */
static const char secondary_yaml[] =
	"server:\n"
	"  identity: pop1\n"
	"dataplane:\n"
	"  port: net_null0\n"
	"  addresses: [192.0.2.1]\n"
	"zones:\n"
	"  - {name: example.com, file: example.com.zone}\n"                    /* 7 */
	"  - name: sec.example\n"                                              /* 8 */
	"    primaries:\n"
	"      - {address: 198.51.100.1, key: XFR.Key}\n"                      /* 10 */
	"      - {address: \"2001:db8:1::1\", port: 5353}\n"
	"    on_expire: refuse\n"
	"    ixfr: false\n"
	"  - name: sec2.example\n"                                             /* 14 */
	"    file: copies/sec2.zone\n"
	"    primaries: [{address: 198.51.100.1}]\n"
	"    notify: {from: [198.51.100.0/24, \"2001:db8::/32\"], key: xfr.key.}\n"
	"  - name: cat.invalid\n"                                              /* 18 */
	"    catalog: true\n"
	"    primaries: [{address: 198.51.100.1, key: xfr.key}]\n"
	"    notify_to: []\n"
	"  - name: p2.example\n"
	"    file: p2.zone\n"
	"    notify_to: [{address: \"2001:db8:2::2\", port: 5300, key: other}, {address: 203.0.113.9}]\n"
	"tsig_keys:\n"
	"  - name: xfr.key\n"
	"    algorithm: hmac-sha256\n"
	"    secret: \"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=\"\n"
	"  - {name: other, algorithm: hmac-sha512, secret: \"YQ==\"}\n"
	"xfr:\n"
	"  directory: state\n"
	"  threads: 4\n"
	"  timeout_ms: 2000\n"
	"  refresh_min_s: 5\n"
	"  notify_to: [{address: 203.0.113.7, key: xfr.key}]\n";

static void test_secondary(void **state)
{
	struct p53_config cfg = { 0 };
	char path[512], want[600], err[512] = "";

	(void)state;
	fixture(path, sizeof(path), "sec.yaml", secondary_yaml);
	assert_int_equal(p53_config_load(path, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.xfr.n_keys, 2);
	assert_string_equal(cfg.xfr.keys[0].name, "xfr.key.");
	assert_int_equal(cfg.xfr.keys[0].alg, P53_TSIG_HMAC_SHA256);
	assert_int_equal(cfg.xfr.keys[0].secret_len, 32);
	assert_memory_equal(cfg.xfr.keys[0].secret, "secretsecretsecretsecretsecret12", 32);
	assert_int_equal(cfg.xfr.keys[1].alg, P53_TSIG_HMAC_SHA512);
	assert_int_equal(cfg.xfr.keys[1].secret_len, 1);
	snprintf(want, sizeof(want), "%s/state", tmpdir);
	assert_string_equal(cfg.xfr.directory, want);
	assert_int_equal(cfg.xfr.threads, 4);
	assert_int_equal(cfg.xfr.timeout_ms, 2000);
	assert_int_equal(cfg.xfr.refresh_min_s, 5);
	assert_int_equal(cfg.xfr.refresh_max_s, 86400);     /* defaults */
	assert_int_equal(cfg.xfr.copy_sync_s, 300);
	assert_int_equal(cfg.xfr.retry_min_s, 1);

	assert_null(cfg.zones[0].xfr);                      /* a primary zone */
	const struct p53_xfr_zone_conf *z = cfg.zones[1].xfr;
	assert_non_null(z);
	assert_int_equal(z->n_primaries, 2);
	assert_int_equal(z->primaries[0].family, AF_INET);
	assert_int_equal(z->primaries[0].port, 53);
	assert_int_equal(z->primaries[0].key, 0);           /* XFR.Key = xfr.key. */
	assert_int_equal(z->primaries[1].family, AF_INET6);
	assert_int_equal(z->primaries[1].port, 5353);
	assert_int_equal(z->primaries[1].key, -1);
	assert_int_equal(z->on_expire, P53_EXPIRE_REFUSE);
	assert_false(z->ixfr);
	assert_false(z->catalog);
	/* No notify: each primary may notify, with its own key. */
	assert_int_equal(z->n_acl, 2);
	assert_int_equal(z->acl[0].len, 32);
	assert_int_equal(z->acl[0].key, 0);
	assert_int_equal(z->acl[1].len, 128);
	assert_int_equal(z->acl[1].key, -1);
	/* No file: the disk copy goes under xfr.directory. */
	snprintf(want, sizeof(want), "%s/state/sec.example.zone", tmpdir);
	assert_string_equal(cfg.zones[1].file, want);
	assert_false(z->file_given);

	z = cfg.zones[2].xfr;
	assert_true(z->ixfr);                               /* default */
	assert_int_equal(z->on_expire, P53_EXPIRE_SERVFAIL);
	assert_int_equal(z->n_acl, 2);
	assert_int_equal(z->acl[0].family, AF_INET);
	assert_int_equal(z->acl[0].len, 24);
	assert_int_equal(z->acl[0].key, 0);
	assert_int_equal(z->acl[1].len, 32);
	assert_int_equal(z->acl[1].key, 0);
	snprintf(want, sizeof(want), "%s/copies/sec2.zone", tmpdir);
	assert_string_equal(cfg.zones[2].file, want);
	assert_true(z->file_given);
	assert_true(cfg.zones[3].xfr->catalog);

	/* notify_to: the xfr default, a zone's own list, and [] turning the default off. */
	assert_non_null(cfg.xfr.notify_to);
	assert_int_equal(cfg.xfr.notify_to->n, 1);
	assert_int_equal(cfg.xfr.notify_to->to[0].family, AF_INET);
	assert_int_equal(cfg.xfr.notify_to->to[0].port, 53);
	assert_int_equal(cfg.xfr.notify_to->to[0].key, 0);
	assert_null(cfg.zones[0].notify_to);                /* the default applies */
	assert_non_null(cfg.zones[3].notify_to);
	assert_int_equal(cfg.zones[3].notify_to->n, 0);
	const struct p53_xfr_notify_to *nt = cfg.zones[4].notify_to;
	assert_non_null(nt);
	assert_int_equal(nt->n, 2);
	assert_int_equal(nt->to[0].family, AF_INET6);
	assert_int_equal(nt->to[0].port, 5300);
	assert_int_equal(nt->to[0].key, 1);
	assert_int_equal(nt->to[1].key, -1);
	assert_null(cfg.zones[4].xfr);                      /* a primary zone may notify too */

	p53_config_free(&cfg);
	assert_true(is_zeroed(&cfg));
}

/* The valid head most rows build on: server on lines 1-2, dataplane 3-5, zones 6-8. */
#define HEAD_SERVER "server:\n  identity: pop1\n"
#define HEAD_DP     "dataplane:\n  port: net_null0\n  addresses: [192.0.2.1]\n"
#define HEAD_ZONES  "zones:\n  - name: example.com\n    file: example.com.zone\n"

/* 65 distinct addresses, one per line. */
#define TEN(p) "    - " p "0\n    - " p "1\n    - " p "2\n    - " p "3\n    - " p "4\n" \
	       "    - " p "5\n    - " p "6\n    - " p "7\n    - " p "8\n    - " p "9\n"
#define ADDR65 TEN("10.0.1.") TEN("10.0.2.") TEN("10.0.3.") TEN("10.0.4.") TEN("10.0.5.") \
	       TEN("10.0.6.") "    - 10.0.7.0\n    - 10.0.7.1\n    - 10.0.7.2\n" \
	       "    - 10.0.7.3\n    - 10.0.7.4\n"

struct bad_case {
	const char *msg;        /* what the row breaks */
	const char *yaml;
	const char *want;       /* expected error after "FILE:", starting with the line */
};

static const struct bad_case bad_cases[] = {
	{ "YAML syntax error",
	  "server:\n  identity: pop1: x\n" HEAD_DP HEAD_ZONES,
	  "2: YAML syntax error: mapping values are not allowed in this context" },
	{ "unterminated flow list",
	  HEAD_SERVER "dataplane:\n  port: p\n  addresses: [192.0.2.1\nzones: []\n",
	  "6: YAML syntax error: did not find expected ',' or ']'" },
	{ "syntax error in a second document",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "---\na: [\n",
	  "11: YAML syntax error: did not find expected node content" },
	{ "two documents",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "---\na: 1\n",
	  "10: only one YAML document is allowed" },
	{ "empty file",
	  "# nothing here\n",
	  "1: empty config" },
	{ "top level is a list",
	  "- server\n",
	  "1: top level: expected a mapping, got a list" },
	{ "unknown top-level key",
	  "sever:\n  identity: pop1\n" HEAD_DP HEAD_ZONES,
	  "1: unknown key 'sever'" },
	{ "unknown nested key",
	  HEAD_SERVER HEAD_DP "  wrokers: 2\n" HEAD_ZONES,
	  "6: dataplane: unknown key 'wrokers'" },
	{ "unknown key in idle",
	  HEAD_SERVER HEAD_DP "  idle:\n    mode: busy\n    max_sleep: 5\n" HEAD_ZONES,
	  "8: dataplane.idle: unknown key 'max_sleep'" },
	{ "unknown key in a zone",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "    fiel: x\n",
	  "9: zones[0]: unknown key 'fiel'" },
	{ "duplicate key",
	  HEAD_SERVER HEAD_DP "  port: net_null1\n" HEAD_ZONES,
	  "6: dataplane: duplicate key 'port' (first at line 4)" },
	{ "missing identity",
	  "server:\n  version: x\n" HEAD_DP HEAD_ZONES,
	  "1: server: missing required key 'identity'" },
	{ "empty identity",
	  "server:\n  identity:\n" HEAD_DP HEAD_ZONES,
	  "2: server.identity: expected a string, got nothing" },
	{ "missing port",
	  HEAD_SERVER "dataplane:\n  addresses: [192.0.2.1]\n" HEAD_ZONES,
	  "3: dataplane: missing required key 'port'" },
	{ "missing dataplane section",
	  HEAD_SERVER HEAD_ZONES,
	  "1: missing required key 'dataplane'" },
	{ "missing zones section",
	  HEAD_SERVER HEAD_DP,
	  "1: missing required key 'zones'" },
	{ "server is a scalar",
	  "server: pop1\n" HEAD_DP HEAD_ZONES,
	  "1: server: expected a mapping, got 'pop1'" },
	{ "workers not an integer",
	  HEAD_SERVER HEAD_DP "  workers: two\n" HEAD_ZONES,
	  "6: dataplane.workers: expected an integer 1..64, got 'two'" },
	{ "workers 0",
	  HEAD_SERVER HEAD_DP "  workers: 0\n" HEAD_ZONES,
	  "6: dataplane.workers: expected an integer 1..64, got '0'" },
	{ "workers 65",
	  HEAD_SERVER HEAD_DP "  workers: 65\n" HEAD_ZONES,
	  "6: dataplane.workers: expected an integer 1..64, got '65'" },
	{ "workers negative",
	  HEAD_SERVER HEAD_DP "  workers: -1\n" HEAD_ZONES,
	  "6: dataplane.workers: expected an integer 1..64, got '-1'" },
	{ "workers hex",
	  HEAD_SERVER HEAD_DP "  workers: 0x2\n" HEAD_ZONES,
	  "6: dataplane.workers: expected an integer 1..64, got '0x2'" },
	{ "workers huge (no wrap-around)",
	  HEAD_SERVER HEAD_DP "  workers: 18446744073709551617\n" HEAD_ZONES,
	  "6: dataplane.workers: expected an integer 1..64, got '18446744073709551617'" },
	{ "workers is a list",
	  HEAD_SERVER HEAD_DP "  workers: [1]\n" HEAD_ZONES,
	  "6: dataplane.workers: expected an integer 1..64, got a list" },
	{ "bad address",
	  HEAD_SERVER "dataplane:\n  port: p\n  addresses:\n    - 192.0.2.1\n    - 192.0.2.300\n"
	  HEAD_ZONES,
	  "7: dataplane.addresses[1]: expected an IPv4 or IPv6 address, got '192.0.2.300'" },
	{ "address with a prefix length",
	  HEAD_SERVER "dataplane:\n  port: p\n  addresses: [\"2001:db8::/64\"]\n" HEAD_ZONES,
	  "5: dataplane.addresses[0]: expected an IPv4 or IPv6 address, got '2001:db8::/64'" },
	{ "duplicate address",
	  HEAD_SERVER "dataplane:\n  port: p\n  addresses: [2001:db8::1, 2001:DB8:0::1]\n"
	  HEAD_ZONES,
	  "5: dataplane.addresses[1]: duplicate address '2001:DB8:0::1'" },
	{ "no addresses",
	  HEAD_SERVER "dataplane:\n  port: p\n  addresses: []\n" HEAD_ZONES,
	  "5: dataplane.addresses: at least one address is required" },
	{ "too many addresses",
	  HEAD_SERVER "dataplane:\n  port: p\n  addresses:\n" ADDR65 HEAD_ZONES,
	  "70: dataplane.addresses: at most 64 addresses" },
	{ "addresses is a scalar",
	  HEAD_SERVER "dataplane:\n  port: p\n  addresses: 192.0.2.1\n" HEAD_ZONES,
	  "5: dataplane.addresses: expected a list of IP addresses, got '192.0.2.1'" },
	{ "eal is a string",
	  HEAD_SERVER HEAD_DP "  eal: \"-l 1\"\n" HEAD_ZONES,
	  "6: dataplane.eal: expected a list of strings, got '-l 1'" },
	{ "eal item is a mapping",
	  HEAD_SERVER HEAD_DP "  eal: [\"-l\", {a: b}]\n" HEAD_ZONES,
	  "6: dataplane.eal[1]: expected a string, got a mapping" },
	{ "zone without file",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: example.com\n",
	  "7: zones[0]: missing required key 'file' (or 'primaries' for a secondary zone)" },
	{ "duplicate zone",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "  - name: EXAMPLE.com.\n    file: other.zone\n",
	  "9: zones[1]: duplicate zone 'EXAMPLE.com.' (first at line 7)" },
	{ "zone name with an empty label",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: example..com\n    file: x\n",
	  "7: zones[0].name: expected a domain name (labels of 1..63 bytes), got 'example..com'" },
	{ "no zones",
	  HEAD_SERVER HEAD_DP "zones: []\n",
	  "6: zones: at least one zone is required" },
	{ "zones is a mapping",
	  HEAD_SERVER HEAD_DP "zones:\n  example.com: example.com.zone\n",
	  "7: zones: expected a list of {name, file}, got a mapping" },
	{ "zone entry is a string",
	  HEAD_SERVER HEAD_DP "zones:\n  - example.com\n",
	  "7: zones[0]: expected a mapping, got 'example.com'" },
	{ "edns_max_payload 100",
	  "server:\n  identity: pop1\n  edns_max_payload: 100\n" HEAD_DP HEAD_ZONES,
	  "3: server.edns_max_payload: expected an integer 512..4096, got '100'" },
	{ "control socket path too long for sun_path",
	  "server:\n  identity: pop1\n  control_socket: /run/"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaa.sock\n" HEAD_DP HEAD_ZONES,
	  "3: server.control_socket: path longer than 107 bytes, too long for a unix socket" },
	{ "idle mode bogus",
	  HEAD_SERVER HEAD_DP "  idle:\n    mode: bogus\n" HEAD_ZONES,
	  "7: dataplane.idle.mode: expected busy or adaptive, got 'bogus'" },
	{ "burst zero",
	  HEAD_SERVER HEAD_DP "  burst: 0\n" HEAD_ZONES,
	  "6: dataplane.burst: expected an integer 1..256, got '0'" },
	{ "answer cache not a power of two",
	  HEAD_SERVER HEAD_DP "  answer_cache: 1000\n" HEAD_ZONES,
	  "6: dataplane.answer_cache: expected a power of two 0..1048576, got '1000'" },
	{ "burst over the worker's rx array",
	  HEAD_SERVER HEAD_DP "  burst: 257\n" HEAD_ZONES,
	  "6: dataplane.burst: expected an integer 1..256, got '257'" },
	{ "af_xdp busy_budget too large",
	  HEAD_SERVER HEAD_DP "  af_xdp: {busy_budget: 1025}\n" HEAD_ZONES,
	  "6: dataplane.af_xdp.busy_budget: expected an integer 0..1024, got '1025'" },
	{ "af_xdp tx_budget too large",
	  HEAD_SERVER HEAD_DP "  af_xdp: {tx_budget: 16385}\n" HEAD_ZONES,
	  "6: dataplane.af_xdp.tx_budget: expected an integer 0..16384, got '16385'" },
	{ "unknown key in af_xdp",
	  HEAD_SERVER HEAD_DP "  af_xdp: {queue: 1}\n" HEAD_ZONES,
	  "6: dataplane.af_xdp: unknown key 'queue'" },
	{ "idle max_sleep_us too large",
	  HEAD_SERVER HEAD_DP "  idle: {max_sleep_us: 100001}\n" HEAD_ZONES,
	  "6: dataplane.idle.max_sleep_us: expected an integer 0..100000, got '100001'" },
	{ "unknown dataplane.mode",
	  HEAD_SERVER HEAD_DP "  mode: kernel\n" HEAD_ZONES,
	  "6: dataplane.mode: expected xdp or dpdk, got 'kernel'" },
	{ "exception address without a prefix length",
	  HEAD_SERVER HEAD_DP "  exception:\n    addresses: [192.0.2.10]\n" HEAD_ZONES,
	  "7: dataplane.exception.addresses[0]: '192.0.2.10' has no prefix length (e.g. 192.0.2.53/24)" },
	{ "exception address that is not an address",
	  HEAD_SERVER HEAD_DP "  exception:\n    addresses: [pop.example/24]\n" HEAD_ZONES,
	  "7: dataplane.exception.addresses[0]: 'pop.example' is not an IPv4 or IPv6 address" },
	{ "exception IPv4 prefix length over 32",
	  HEAD_SERVER HEAD_DP "  exception:\n    addresses: [192.0.2.10/33]\n" HEAD_ZONES,
	  "7: dataplane.exception.addresses[0]: bad prefix length '33'" },
	{ "exception prefix length 0",
	  HEAD_SERVER HEAD_DP "  exception:\n    addresses: [\"2001:db8::1/0\"]\n" HEAD_ZONES,
	  "7: dataplane.exception.addresses[0]: bad prefix length '0'" },
	{ "exception address twice",
	  HEAD_SERVER HEAD_DP "  exception:\n    addresses: [192.0.2.10/24, 192.0.2.10/25]\n" HEAD_ZONES,
	  "7: dataplane.exception.addresses[1]: duplicate address" },
	{ "exception iface longer than IFNAMSIZ allows",
	  HEAD_SERVER HEAD_DP "  exception:\n    iface: a-very-long-name0\n" HEAD_ZONES,
	  "7: dataplane.exception.iface: 'a-very-long-name0' is not an interface name (1 to 15 characters, no '/', ' ', ',' or '=')" },
	{ "exception iface with a devargs separator",
	  HEAD_SERVER HEAD_DP "  exception:\n    iface: \"tap,x=1\"\n" HEAD_ZONES,
	  "7: dataplane.exception.iface: 'tap,x=1' is not an interface name (1 to 15 characters, no '/', ' ', ',' or '=')" },
	{ "exception queue not a power of two",
	  HEAD_SERVER HEAD_DP "  exception:\n    queue: 1000\n" HEAD_ZONES,
	  "7: dataplane.exception.queue: expected a power of two 64..65536, got '1000'" },
	{ "unknown exception key",
	  HEAD_SERVER HEAD_DP "  exception:\n    tap: x\n" HEAD_ZONES,
	  "7: dataplane.exception: unknown key 'tap'" },
	{ "rx_desc not a power of two",
	  HEAD_SERVER HEAD_DP "  rx_desc: 1000\n" HEAD_ZONES,
	  "6: dataplane.rx_desc: expected a power of two 64..16384, got '1000'" },
	{ "tx_desc too large",
	  HEAD_SERVER HEAD_DP "  tx_desc: 32768\n" HEAD_ZONES,
	  "6: dataplane.tx_desc: expected a power of two 64..16384, got '32768'" },
	{ "mbufs too few",
	  HEAD_SERVER HEAD_DP "  mbufs: 512\n" HEAD_ZONES,
	  "6: dataplane.mbufs: expected an integer 1023..1048575, got '512'" },
	{ "string with a NUL escape",
	  "server:\n  identity: \"pop\\0one\"\n" HEAD_DP HEAD_ZONES,
	  "2: server.identity: string contains a NUL byte" },
	{ "dnssec.signature_margin over a year",
	  HEAD_SERVER HEAD_DP "dnssec:\n  signature_margin: 31708801\n" HEAD_ZONES,
	  "7: dnssec.signature_margin: expected an integer 0..31622400, got '31708801'" },
	{ "unknown dnssec key",
	  HEAD_SERVER HEAD_DP "dnssec:\n  sign: yes\n" HEAD_ZONES,
	  "7: dnssec: unknown key 'sign'" },
	{ "secondary: unknown TSIG key",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    primaries:\n"
	  "      - {address: 198.51.100.1, key: nokey}\n",
	  "9: zones[0].primaries[0]: unknown TSIG key 'nokey' (not in tsig_keys)" },
	{ "secondary: primary address is a name",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    primaries: [{address: ns1.example}]\n",
	  "8: zones[0].primaries[0].address: expected an IPv4 or IPv6 address, got 'ns1.example'" },
	{ "secondary: primary without address",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    primaries: [{port: 53}]\n",
	  "8: zones[0].primaries[0]: missing required key 'address'" },
	{ "secondary: port 0",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n"
	  "    primaries: [{address: 198.51.100.1, port: 0}]\n",
	  "8: zones[0].primaries[0].port: expected an integer 1..65535, got '0'" },
	{ "secondary: empty primaries",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    primaries: []\n",
	  "8: zones[0].primaries: at least one primary is required" },
	{ "secondary keys without primaries",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    file: x\n    on_expire: keep\n",
	  "7: zones[0]: 'notify', 'ixfr', 'on_expire' and 'catalog' need 'primaries'" },
	{ "notify prefix with host bits",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    primaries: [{address: 198.51.100.1}]\n"
	  "    notify: {from: [198.51.100.1/24]}\n",
	  "9: zones[0].notify.from[0]: '198.51.100.1/24' has bits set past /24" },
	{ "notify with an unknown key",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    primaries: [{address: 198.51.100.1}]\n"
	  "    notify:\n      key: nokey\n",
	  "10: zones[0].notify.key: unknown TSIG key 'nokey' (not in tsig_keys)" },
	{ "notify with an unknown sub-key",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    primaries: [{address: 198.51.100.1}]\n"
	  "    notify: {allow: [198.51.100.0/24]}\n",
	  "9: zones[0].notify: unknown key 'allow'" },
	{ "notify_to with an unknown key",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    file: x\n"
	  "    notify_to:\n      - {address: 198.51.100.1, key: nokey}\n",
	  "10: zones[0].notify_to[0].key: unknown TSIG key 'nokey' (not in tsig_keys)" },
	{ "notify_to address is a name",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    file: x\n"
	  "    notify_to: [{address: ns2.example}]\n",
	  "9: zones[0].notify_to[0].address: expected an IPv4 or IPv6 address, got 'ns2.example'" },
	{ "notify_to is not a list",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    file: x\n"
	  "    notify_to: 198.51.100.1\n",
	  "9: zones[0].notify_to: expected a list of {address, port, key}" },
	{ "xfr.notify_to with an unknown key",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "xfr:\n  notify_to: [{address: 198.51.100.1, key: nokey}]\n",
	  "10: xfr.notify_to[0].key: unknown TSIG key 'nokey' (not in tsig_keys)" },
	{ "on_expire bogus",
	  HEAD_SERVER HEAD_DP "zones:\n  - name: s.example\n    primaries: [{address: 198.51.100.1}]\n"
	  "    on_expire: drop\n",
	  "9: zones[0].on_expire: expected servfail, refuse or keep, got 'drop'" },
	{ "tsig key: bad base64, value not shown",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "tsig_keys:\n  - {name: k, algorithm: hmac-sha256, secret: \"abc!\"}\n",
	  "10: tsig_keys[0].secret: expected a base64 secret of 1..128 bytes (value not shown)" },
	{ "tsig key: base64 without padding",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "tsig_keys:\n  - {name: k, algorithm: hmac-sha256, secret: \"YQ\"}\n",
	  "10: tsig_keys[0].secret: expected a base64 secret" },
	{ "tsig key: unknown algorithm",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "tsig_keys:\n  - {name: k, algorithm: hmac-md5, secret: \"YQ==\"}\n",
	  "10: tsig_keys[0].algorithm: expected hmac-sha1, hmac-sha224, hmac-sha256, hmac-sha384 or "
	  "hmac-sha512, got 'hmac-md5'" },
	{ "tsig key: missing secret",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "tsig_keys:\n  - {name: k, algorithm: hmac-sha256}\n",
	  "10: tsig_keys[0]: missing required key 'secret'" },
	{ "tsig key: duplicate name",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "tsig_keys:\n  - {name: k, algorithm: hmac-sha256, secret: \"YQ==\"}\n"
	  "  - {name: K., algorithm: hmac-sha1, secret: \"YQ==\"}\n",
	  "11: tsig_keys[1]: duplicate key 'K.' (first at line 10)" },
	{ "xfr: threads 0",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "xfr:\n  threads: 0\n",
	  "10: xfr.threads: expected an integer 1..16, got '0'" },
	{ "xfr: copy_sync_s past a week",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "xfr:\n  copy_sync_s: 604801\n",
	  "10: xfr.copy_sync_s: expected an integer 0..604800, got '604801'" },
	{ "xfr: copy_sync_s negative",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "xfr:\n  copy_sync_s: -1\n",
	  "10: xfr.copy_sync_s: expected an integer 0..604800, got '-1'" },
	{ "xfr: refresh_min above refresh_max",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "xfr:\n  refresh_min_s: 100\n  refresh_max_s: 10\n",
	  "1: xfr: refresh_min_s 100 is above refresh_max_s 10" },
	{ "mapping as a key",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "? {a: b}\n: c\n",
	  "9: keys must be plain words" },
	/* rrl: and cookies: (control/abuse/abuse_conf.c); lines 9 on */
	{ "rrl: unknown key (BIND's spelling with a hyphen)",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "rrl:\n  responses-per-second: 10\n",
	  "10: rrl: unknown key 'responses-per-second'" },
	{ "rrl: rate not a number",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "rrl:\n  responses_per_second: ten\n",
	  "10: rrl.responses_per_second: expected an integer 0..1000000, got 'ten'" },
	{ "rrl: window 0",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "rrl:\n  window: 0\n",
	  "10: rrl.window: expected an integer 1..3600, got '0'" },
	{ "rrl: slip 11",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "rrl:\n  slip: 11\n",
	  "10: rrl.slip: expected an integer 0..10, got '11'" },
	{ "rrl: IPv6 prefix longer than 64",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "rrl:\n  ipv6_prefix_length: 65\n",
	  "10: rrl.ipv6_prefix_length: expected an integer 0..64, got '65'" },
	{ "rrl: table_size not a power of two",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "rrl:\n  table_size: 1000\n",
	  "10: rrl.table_size: expected a power of two 64..4194304, got '1000'" },
	{ "rrl: exempt prefix with bits past its length",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "rrl:\n  exempt_clients: [192.0.2.1/24]\n",
	  "10: rrl.exempt_clients[0]: '192.0.2.1/24' has bits set past /24" },
	{ "rrl: exempt_clients not a list",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "rrl:\n  exempt_clients: 192.0.2.0/24\n",
	  "10: rrl.exempt_clients: expected a list of prefixes" },
	{ "rrl: not a mapping",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "rrl: on\n",
	  "9: rrl: expected a mapping" },
	{ "cookies: rotation 0",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "cookies:\n  secret_rotation: 0\n",
	  "10: cookies.secret_rotation: expected an integer 1..3110400, got '0'" },
	{ "cookies: rotation over 36 days (RFC 7873 §7.1)",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "cookies:\n  secret_rotation: 3110401\n",
	  "10: cookies.secret_rotation: expected an integer 1..3110400" },
	{ "cookies: secret_file missing",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "cookies:\n  secret_file: /nonexistent/key\n",
	  "10: cookies.secret_file: /nonexistent/key: No such file or directory" },
	{ "cookies: secret_file of 31 hex digits",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "cookies:\n  secret_file: short.key\n",
	  "10: cookies.secret_file: " },
	{ "cookies: unknown key",
	  HEAD_SERVER HEAD_DP HEAD_ZONES "cookies:\n  secret: abc\n",
	  "10: cookies: unknown key 'secret'" },
};

static void test_bad_configs(void **state)
{
	char path[512], want[1024], err[512];
	int failures = 0;

	(void)state;
	fixture(path, sizeof(path), "short.key", "00112233445566778899aabbccddeef\n");
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *bc = &bad_cases[i];
		struct p53_config cfg = { 0 };
		int rc;

		fixture(path, sizeof(path), "bad.yaml", bc->yaml);
		snprintf(want, sizeof(want), "%s:%s", path, bc->want);
		err[0] = '\0';
		rc = p53_config_load(path, &cfg, err, sizeof(err));
		if (rc != -1 || strncmp(err, want, strlen(want)) != 0 || !is_zeroed(&cfg)) {
			print_error("row %zu (%s):\n  want: %s\n  got:  %s (rc %d)\n", i, bc->msg,
				    want, err, rc);
			failures++;
		}
		if (rc == 0)
			p53_config_free(&cfg);
	}
	assert_int_equal(failures, 0);
}

/* Fail each allocation of a full load in turn: every failure is reported, and frees everything. */
static void test_alloc_failures(void **state)
{
	char path[512], err[512];
	long n;

	(void)state;
	fixture(path, sizeof(path), "cookie.key", COOKIE_KEY);
	fixture(path, sizeof(path), "full.yaml", full_yaml);
	for (n = 1; n < 100000; n++) {
		struct p53_config cfg = { 0 };
		long calls, live;
		int rc;

		err[0] = '\0';
		alloc_calls = 0;
		alloc_live = 0;
		alloc_fail_at = n;
		tracking = true;
		rc = p53_config_load(path, &cfg, err, sizeof(err));
		if (rc == 0)
			p53_config_free(&cfg);
		tracking = false;
		calls = alloc_calls;
		live = alloc_live;
		if (calls == 0)
			skip();         /* our malloc is not the one in use (valgrind, ASan) */
		if (live != 0)
			fail_msg("allocation %ld failing leaks %ld blocks (rc %d, %s)", n, live, rc, err);
		if (calls < n) {        /* nothing failed: the load ran to the end */
			assert_int_equal(rc, 0);
			break;
		}
		/* rc 0 is fine too: stdio absorbs a failed buffer allocation by going unbuffered. */
		if (rc != 0 && (rc != -1 || strncmp(err, path, strlen(path)) != 0))
			fail_msg("allocation %ld failing: rc %d, error '%s'", n, rc, err);
		assert_true(is_zeroed(&cfg));
	}
	print_message("failed each of %ld allocations in turn\n", n - 1);
}

/* A short error buffer truncates the message but never overflows or leaves it unterminated. */
static void test_short_errbuf(void **state)
{
	struct p53_config cfg = { 0 };
	char path[512], err[8];

	(void)state;
	fixture(path, sizeof(path), "bad.yaml", "sever: 1\n");
	assert_int_equal(p53_config_load(path, &cfg, err, sizeof(err)), -1);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_true(is_zeroed(&cfg));
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	static const char *const names[] = { "full.yaml", "minimal.yaml", "bare.yaml", "bad.yaml",
					     "cookie.key", "short.key", "sec.yaml" };
	char path[512];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
		unlink(path);
	}
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_config),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_secondary),
		cmocka_unit_test(test_bare_path),
		cmocka_unit_test(test_shipped_configs),
		cmocka_unit_test(test_cannot_open),
		cmocka_unit_test(test_bad_configs),
		cmocka_unit_test(test_short_errbuf),
		cmocka_unit_test(test_alloc_failures),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
