/*
 * pop53d configuration loader (see control/conf/config.h, docs/CONFIG.md).
 *
 * libyaml composes the whole file into a node tree (yaml_parser_load); this file then walks
 * that tree against the key tables at the bottom, with the walker and handlers of
 * control/conf/schema.h. Each table row names a key, the handler that checks and stores its
 * value, and where in the struct it goes. Keeping the schema in tables means unknown keys,
 * duplicate keys and missing required keys are caught in one place (p53_conf_map) for every
 * section alike, so a typo can never pass silently. Sections owned by other concerns (health,
 * anycast, rrl...) have their tables in their own files and are only named here.
 *
 * Control thread only. No global state: concurrent loads of different structs are safe.
 */
#include "control/conf/config.h"
#include "dataplane/qcache.h"
#include "control/conf/schema.h"
#include "control/xfr/serve_conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <yaml.h>

#define SHOW_MAX 64

static int key_eal(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		   const char *where, void *base)
{
	struct p53_config *cfg = base;
	yaml_node_item_t *it;
	char iw[P53_CONF_WHERE_MAX];
	int n;

	(void)k;
	if (v->type != YAML_SEQUENCE_NODE)
		return p53_conf_expected(c, v, where, "a list of strings");
	n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n > P53_CONFIG_MAX_EAL)
		return p53_conf_fail(c, v, "%s: at most %d arguments, got %d", where, P53_CONFIG_MAX_EAL, n);
	/* NULL-terminated, so it can be appended to an argv as it is. */
	cfg->eal = calloc((size_t)n + 1, sizeof(char *));
	if (cfg->eal == NULL)
		return p53_conf_fail(c, v, "out of memory");
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		const char *s;

		snprintf(iw, sizeof(iw), "%s[%d]", where, cfg->n_eal);
		if (p53_conf_string_of(c, item, iw, &s) != 0)
			return -1;
		if (p53_conf_set_string(c, item, &cfg->eal[cfg->n_eal], s) != 0)
			return -1;
		cfg->n_eal++;
	}
	return 0;
}

static int key_addrs(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		   const char *where, void *base)
{
	struct p53_config *cfg = base;
	yaml_node_item_t *it;
	char iw[P53_CONF_WHERE_MAX];

	(void)k;
	if (v->type != YAML_SEQUENCE_NODE)
		return p53_conf_expected(c, v, where, "a list of IP addresses");
	if (v->data.sequence.items.top == v->data.sequence.items.start)
		return p53_conf_fail(c, v, "%s: at least one address is required", where);
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		struct p53_addr a = { 0 };
		const char *s;

		snprintf(iw, sizeof(iw), "%s[%d]", where, cfg->n_addrs);
		if (cfg->n_addrs == P53_CONFIG_MAX_ADDRS)
			return p53_conf_fail(c, item, "%s: at most %d addresses", where,
				    P53_CONFIG_MAX_ADDRS);
		if (p53_conf_string_of(c, item, iw, &s) != 0)
			return -1;
		if (inet_pton(AF_INET, s, a.bytes) == 1)
			a.family = AF_INET;
		else if (inet_pton(AF_INET6, s, a.bytes) == 1)
			a.family = AF_INET6;
		else
			return p53_conf_expected(c, item, iw, "an IPv4 or IPv6 address");
		for (int i = 0; i < cfg->n_addrs; i++)
			if (memcmp(&cfg->addrs[i], &a, sizeof(a)) == 0)
				return p53_conf_fail(c, item, "%s: duplicate address '%s'", iw, s);
		cfg->addrs[cfg->n_addrs++] = a;
	}
	return 0;
}

/*
 * Enough of RFC 1035 §2.3.4 to catch typos ("example..com", a 64-byte label); the zone loader
 * checks the name against the zone file's SOA owner anyway. Escapes are refused rather than
 * half-understood.
 */
static int key_zone_name(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		   const char *where, void *base)
{
	struct p53_config_zone *z = base;
	const char *s, *p;
	size_t len;

	(void)k;
	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	len = strlen(s);
	if (len == 0)
		return p53_conf_expected(c, v, where, "a domain name");
	if (strcmp(s, ".") != 0) {
		for (p = s; *p != '\0';) {
			size_t label = strcspn(p, ".");

			if (label == 0 || label > 63)
				return p53_conf_expected(c, v, where, "a domain name (labels of 1..63 bytes)");
			p += label;
			if (*p == '.')
				p++;
		}
		if (strpbrk(s, "\\ \t") != NULL)
			return p53_conf_expected(c, v, where, "a domain name without escapes or spaces");
		/* Presentation length + 1 = wire length when the name ends in '.'. */
		if (len + (s[len - 1] != '.') > 254)
			return p53_conf_expected(c, v, where, "a domain name of at most 255 bytes");
	}
	z->name = malloc(len + 2);
	if (z->name == NULL)
		return p53_conf_fail(c, v, "out of memory");
	memcpy(z->name, s, len + 1);
	if (s[len - 1] != '.')
		memcpy(z->name + len, ".", 2);
	return 0;
}

static const struct p53_conf_key zone_keys[] = {
	{ .name = "name", .fn = key_zone_name, .required = true },
	{ .name = "file", .fn = p53_conf_path, .off = offsetof(struct p53_config_zone, file) },
	/* A secondary zone (control/xfr/conf.c); p53_xfr_conf_check requires file or primaries. */
	{ .name = "primaries", .fn = p53_xfr_conf_primaries },
	{ .name = "notify", .fn = p53_xfr_conf_notify },
	{ .name = "ixfr", .fn = p53_xfr_conf_ixfr },
	{ .name = "on_expire", .fn = p53_xfr_conf_on_expire },
	{ .name = "catalog", .fn = p53_xfr_conf_catalog },
	/* Outgoing AXFR/IXFR (control/xfr/serve_conf.c), primary and secondary zones alike. */
	{ .name = "transfer", .fn = p53_xfr_conf_transfer },
	/* Outgoing NOTIFY to the servers we feed (control/xfr/notify_out.c). */
	{ .name = "notify_to", .fn = p53_xfr_conf_notify_to },
};

static int key_zones(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		   const char *where, void *base)
{
	struct p53_config *cfg = base;
	yaml_node_item_t *it;
	char iw[P53_CONF_WHERE_MAX];
	size_t n;

	(void)k;
	if (v->type != YAML_SEQUENCE_NODE)
		return p53_conf_expected(c, v, where, "a list of {name, file}");
	n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n == 0)
		return p53_conf_fail(c, v, "%s: at least one zone is required", where);
	cfg->zones = calloc(n, sizeof(*cfg->zones));
	if (cfg->zones == NULL)
		return p53_conf_fail(c, v, "out of memory");
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		struct p53_config_zone *z = &cfg->zones[cfg->n_zones];

		snprintf(iw, sizeof(iw), "%s[%d]", where, cfg->n_zones);
		/* Count it first: p53_config_free() must see a half-filled entry. */
		cfg->n_zones++;
		z->line = (int)item->start_mark.line + 1;
		if (p53_conf_map(c, item, zone_keys, sizeof(zone_keys) / sizeof(zone_keys[0]), iw,
			     item, z) != 0)
			return -1;
		/* DNS names compare case-insensitively (RFC 4343). */
		for (int i = 0; i < cfg->n_zones - 1; i++)
			if (strcasecmp(cfg->zones[i].name, z->name) == 0)
				return p53_conf_fail(c, item, "%s: duplicate zone '%s' (first at line %d)",
					    iw, z->name, cfg->zones[i].line);
	}
	return 0;
}

#define CFG(f) P53_CONF_FIELD(struct p53_config, f)
#define SECTION(t) P53_CONF_SECTION(t)

static const char *const replicas_names[] = { "per-core", "per-socket", NULL };
static const char *const idle_names[] = { "busy", "adaptive", NULL };
static const char *const mode_names[] = { "xdp", "dpdk", NULL };

static const struct p53_conf_key server_keys[] = {
	{ .name = "identity", .fn = p53_conf_string, CFG(identity), .required = true },
	{ .name = "version", .fn = p53_conf_string, CFG(version) },
	{ .name = "edns_max_payload", .fn = p53_conf_uint, CFG(edns_max_payload), .min = 512,
	  .max = 4096 },
	{ .name = "control_socket", .fn = p53_conf_sockpath, CFG(control_socket) },
	{ .name = "control_group", .fn = p53_conf_string, CFG(control_group) },
	{ .name = "replicas", .fn = p53_conf_enum, CFG(replicas), .names = replicas_names },
	{ .name = "watch_zones", .fn = p53_conf_bool, CFG(watch_zones) },
	{ .name = "watch_debounce_ms", .fn = p53_conf_uint, CFG(watch_debounce_ms), .min = 10,
	  .max = 60000 },
};

static const struct p53_conf_key metrics_keys[] = {
	{ .name = "listen", .fn = p53_conf_listen, CFG(metrics_listen) },
	{ .name = "enabled", .fn = p53_conf_bool, CFG(metrics_enabled) },
};

static const struct p53_conf_key idle_keys[] = {
	{ .name = "mode", .fn = p53_conf_enum, CFG(idle), .names = idle_names },
	{ .name = "max_sleep_us", .fn = p53_conf_uint, CFG(idle_max_us), .min = 0, .max = 100000 },
	{ .name = "spin_polls", .fn = p53_conf_uint, CFG(idle_spin_polls), .min = 0, .max = 1000000 },
};

/* net_af_xdp devargs pop53d adds to `port` (port.c) unless the port string names them. */
static const struct p53_conf_key af_xdp_keys[] = {
	{ .name = "busy_budget", .fn = p53_conf_uint, CFG(af_xdp_busy_budget), .min = 0, .max = 1024 },
	{ .name = "force_copy", .fn = p53_conf_bool, CFG(af_xdp_force_copy) },
	{ .name = "tx_budget", .fn = p53_conf_uint, CFG(af_xdp_tx_budget), .min = 0, .max = 16384 },
};

static const struct p53_conf_key dataplane_keys[] = {
	{ .name = "eal", .fn = key_eal },
	{ .name = "port", .fn = p53_conf_string, CFG(port), .required = true },
	{ .name = "mode", .fn = p53_conf_enum, CFG(mode), .names = mode_names },
	{ .name = "exception", .fn = p53_exc_conf_section, .off = offsetof(struct p53_config, exc) },
	{ .name = "workers", .fn = p53_conf_uint, CFG(workers), .min = 1, .max = 64 },
	{ .name = "addresses", .fn = key_addrs, .required = true },
	{ .name = "xdp_prog", .fn = p53_conf_path, CFG(xdp_prog) },
	{ .name = "idle", SECTION(idle_keys) },
	{ .name = "burst", .fn = p53_conf_uint, CFG(burst), .min = 1, .max = P53_CONFIG_BURST_MAX },
	{ .name = "af_xdp", SECTION(af_xdp_keys) },
	{ .name = "rx_desc", .fn = p53_conf_pow2, CFG(rx_desc), .min = 64, .max = 16384 },
	{ .name = "tx_desc", .fn = p53_conf_pow2, CFG(tx_desc), .min = 64, .max = 16384 },
	{ .name = "mbufs", .fn = p53_conf_uint, CFG(mbufs), .min = 1023, .max = 1048575 },
	/* entries per worker (dataplane/qcache.h); 0: off */
	{ .name = "answer_cache", .fn = p53_conf_pow2, CFG(answer_cache), .min = 0,
	  .max = P53_QCACHE_MAX_ENTRIES },
};

static const struct p53_conf_key top_keys[] = {
	{ .name = "server", SECTION(server_keys), .required = true },
	{ .name = "dataplane", SECTION(dataplane_keys), .required = true },
	{ .name = "metrics", SECTION(metrics_keys) },
	{ .name = "dnssec", .fn = p53_dnssec_conf_section, .off = offsetof(struct p53_config, dnssec) },
	{ .name = "zones", .fn = key_zones, .required = true },
	{ .name = "health", .fn = p53_health_conf_section, .off = offsetof(struct p53_config, health) },
	{ .name = "anycast", .fn = p53_anycast_conf_section, .off = offsetof(struct p53_config, anycast) },
	{ .name = "tcp", .fn = p53_tcp_conf_section, .off = offsetof(struct p53_config, tcp) },
	{ .name = "rrl", .fn = p53_rrl_section, .off = offsetof(struct p53_config, abuse.rrl) },
	{ .name = "cookies", .fn = p53_cookies_section, .off = offsetof(struct p53_config, abuse.cookies) },
	{ .name = "tsig_keys", .fn = p53_xfr_conf_keys },
	{ .name = "xfr", .fn = p53_conf_section, .off = offsetof(struct p53_config, xfr),
	  .sub = p53_xfr_conf_keys_table, .nsub = P53_XFR_CONF_NKEYS },
	{ .name = "steering", .fn = p53_steer_conf_section, .off = offsetof(struct p53_config, steer) },
};

_Static_assert(P53_CONF_NKEYS(dataplane_keys) <= P53_CONF_MAX_KEYS, "P53_CONF_MAX_KEYS");

static void syntax_error(struct p53_conf_ctx *c, const yaml_parser_t *p)
{
	/* Reader errors (bad UTF-8) carry an offset, not a mark; the parser's mark is near. */
	size_t line = p->error == YAML_READER_ERROR ? p->mark.line : p->problem_mark.line;

	if (p->error == YAML_MEMORY_ERROR) {
		snprintf(c->err, c->errlen, "%s: out of memory", c->path);
		return;
	}
	snprintf(c->err, c->errlen, "%s:%zu: YAML syntax error: %s%s%s", c->path, line + 1,
		 p->problem != NULL ? p->problem : "unknown problem",
		 p->context != NULL ? ", " : "", p->context != NULL ? p->context : "");
}

int p53_config_load(const char *path, struct p53_config *cfg, char *err, size_t errlen)
{
	struct p53_conf_ctx c = { .path = path, .err = err, .errlen = errlen };
	yaml_parser_t parser;
	yaml_document_t doc, next;
	bool have_parser = false, have_doc = false;
	yaml_node_t *root;
	FILE *f;
	int rc = -1;

	memset(cfg, 0, sizeof(*cfg));
	if (errlen > 0)
		err[0] = '\0';
	f = p53_fopen_regular(path);
	if (f == NULL) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 errno == EINVAL ? "not a regular file" : strerror(errno));
		return -1;
	}
	if (yaml_parser_initialize(&parser) == 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto cleanup;
	}
	have_parser = true;
	yaml_parser_set_input_file(&parser, f);
	if (yaml_parser_load(&parser, &doc) == 0) {
		syntax_error(&c, &parser);
		goto cleanup;
	}
	have_doc = true;
	c.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (root == NULL) {
		snprintf(err, errlen, "%s:1: empty config", path);
		goto cleanup;
	}
	/* Parse to the end so a syntax error after the first document is not ignored. */
	if (yaml_parser_load(&parser, &next) == 0) {
		syntax_error(&c, &parser);
		goto cleanup;
	}
	if (yaml_document_get_root_node(&next) != NULL) {
		p53_conf_fail(&c, yaml_document_get_root_node(&next), "only one YAML document is allowed");
		yaml_document_delete(&next);
		goto cleanup;
	}
	yaml_document_delete(&next);

	cfg->edns_max_payload = 1232;
	cfg->workers = 1;
	cfg->idle = P53_IDLE_ADAPTIVE;
	cfg->idle_max_us = 200;
	cfg->idle_spin_polls = 64;
	cfg->burst = 32;
	cfg->answer_cache = P53_QCACHE_DEFAULT_ENTRIES;
	cfg->af_xdp_busy_budget = 64;
	cfg->rx_desc = 2048;
	cfg->tx_desc = 1024;
	cfg->mbufs = 8191;
	cfg->replicas = P53_REPLICAS_PER_CORE;
	cfg->watch_debounce_ms = 500;
	p53_dnssec_conf_init(&cfg->dnssec);
	cfg->metrics_enabled = true;
	p53_tcp_conf_defaults(&cfg->tcp);
	p53_abuse_config_defaults(&cfg->abuse);
	p53_exc_conf_defaults(&cfg->exc);
	cfg->path = strdup(path);
	if (cfg->path == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto cleanup;
	}
	if (p53_conf_map(&c, root, top_keys, sizeof(top_keys) / sizeof(top_keys[0]), "", root,
		     cfg) != 0)
		goto cleanup;
	if (p53_xfr_conf_check(&c, cfg) != 0)
		goto cleanup;
	if (cfg->control_socket == NULL) {
		cfg->control_socket = strdup("/run/pop53/control.sock");
		if (cfg->control_socket == NULL) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto cleanup;
		}
	}
	if (cfg->exc.iface == NULL) {
		cfg->exc.iface = strdup("pop53x");
		if (cfg->exc.iface == NULL) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto cleanup;
		}
	}
	if (cfg->metrics_listen == NULL) {
		cfg->metrics_listen = strdup("127.0.0.1:9153");
		if (cfg->metrics_listen == NULL) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto cleanup;
		}
	}
	p53_steer_conf_layout(&cfg->steer, NULL);
	rc = 0;
cleanup:
	if (have_doc)
		yaml_document_delete(&doc);
	if (have_parser)
		yaml_parser_delete(&parser);
	fclose(f);
	if (rc != 0)
		p53_config_free(cfg);
	return rc;
}

void p53_config_free(struct p53_config *cfg)
{
	if (cfg == NULL)
		return;
	p53_steer_conf_free(&cfg->steer);
	p53_dnssec_conf_free(&cfg->dnssec);
	free(cfg->path);
	free(cfg->identity);
	free(cfg->version);
	free(cfg->control_socket);
	free(cfg->control_group);
	free(cfg->metrics_listen);
	for (int i = 0; i < cfg->n_eal; i++)
		free(cfg->eal[i]);
	free(cfg->eal);
	free(cfg->port);
	free(cfg->xdp_prog);
	p53_exc_conf_free(&cfg->exc);
	for (int i = 0; i < cfg->n_zones; i++) {
		free(cfg->zones[i].name);
		free(cfg->zones[i].file);
		p53_xfr_zone_conf_free(cfg->zones[i].xfr);
		p53_xfr_transfer_conf_free(cfg->zones[i].transfer);
		p53_xfr_notify_to_free(cfg->zones[i].notify_to);
	}
	p53_xfr_conf_free(&cfg->xfr);
	free(cfg->zones);
	p53_health_conf_free(&cfg->health);
	p53_anycast_conf_free(&cfg->anycast);
	p53_abuse_config_free(&cfg->abuse);
	memset(cfg, 0, sizeof(*cfg));
}
