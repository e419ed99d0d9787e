/*
 * pop53d configuration loader (see control/config.h, docs/CONFIG.md).
 *
 * libyaml composes the whole file into a node tree (yaml_parser_load); this file then walks
 * that tree against the key tables at the bottom. Each table row names a key, the handler that
 * checks and stores its value, and where in the struct it goes. Keeping the schema in tables
 * means unknown keys, duplicate keys and missing required keys are caught in one place
 * (walk_map) for every section alike, so a typo can never pass silently.
 *
 * Control thread only. No global state: concurrent loads of different structs are safe.
 */
#include "control/conf/config.h"

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

#define WHERE_MAX 96    /* longest dotted key path, e.g. "dataplane.addresses[63]" */
#define SHOW_MAX  64    /* bytes of a bad value quoted back in an error */
#define MAX_KEYS  16    /* keys in the largest table; checked below the tables */

struct ctx {
	const char *path;       /* as the caller gave it: errors say what the operator typed */
	yaml_document_t *doc;
	const yaml_node_t *key; /* key of the value being handled, for its line */
	char *err;
	size_t errlen;
};

struct key;
typedef int (*key_fn)(struct ctx *c, const struct key *k, yaml_node_t *v,
		      const char *where, void *base);

struct key {
	const char *name;
	key_fn fn;
	size_t off;             /* field offset in *base */
	size_t size;            /* field size, for integers */
	unsigned long min, max; /* integer range */
	bool required;
	const struct key *sub;  /* nested section */
	size_t nsub;
};

static int fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	int len;

	len = snprintf(c->err, c->errlen, "%s:%zu: ", c->path, n->start_mark.line + 1);
	if (len >= 0 && (size_t)len < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + len, c->errlen - len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static const char *sval(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* YAML 1.1 null: `key:`, `key: ~`, `key: null`, but not the quoted string "null". */
static bool is_null(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (strcmp(sval(n), nulls[i]) == 0)
			return true;
	return false;
}

/* What the operator wrote, for "expected X, got Y". */
static void describe(const yaml_node_t *n, char *buf, size_t len)
{
	if (n->type == YAML_MAPPING_NODE)
		snprintf(buf, len, "a mapping");
	else if (n->type == YAML_SEQUENCE_NODE)
		snprintf(buf, len, "a list");
	else if (is_null(n))
		snprintf(buf, len, "nothing");
	else
		snprintf(buf, len, "'%.*s'", SHOW_MAX, sval(n));
}

static int expected(struct ctx *c, const yaml_node_t *n, const char *where, const char *what)
{
	char got[SHOW_MAX + 8];

	describe(n, got, sizeof(got));
	return fail(c, n, "%s: expected %s, got %s", where, what, got);
}

/* A non-null scalar without embedded NULs (a "\0" escape would silently truncate a C string). */
static int string_of(struct ctx *c, yaml_node_t *v, const char *where, const char **out)
{
	if (v->type != YAML_SCALAR_NODE || is_null(v))
		return expected(c, v, where, "a string");
	if (strlen(sval(v)) != v->data.scalar.length)
		return fail(c, v, "%s: string contains a NUL byte", where);
	*out = sval(v);
	return 0;
}

/*
 * Decimal digits only: "0x10", "-1", "1e3" and "1_000" are typos here, not numbers. With pow2,
 * also a power of two (descriptor rings: the PMDs want one).
 */
static int uint_of(struct ctx *c, yaml_node_t *v, const char *where, const struct key *k,
		   bool pow2, unsigned long *out)
{
	char what[64];
	const char *s;
	unsigned long x;

	snprintf(what, sizeof(what), "%s %lu..%lu", pow2 ? "a power of two" : "an integer",
		 k->min, k->max);
	if (v->type != YAML_SCALAR_NODE || is_null(v))
		return expected(c, v, where, what);
	s = sval(v);
	if (v->data.scalar.length == 0 || v->data.scalar.length > 10 ||
	    strspn(s, "0123456789") != v->data.scalar.length)
		return expected(c, v, where, what);
	x = strtoul(s, NULL, 10);
	if (x < k->min || x > k->max || (pow2 && (x & (x - 1)) != 0))
		return expected(c, v, where, what);
	*out = x;
	return 0;
}

static void store_uint(void *field, size_t size, unsigned long x)
{
	if (size == sizeof(uint16_t))
		*(uint16_t *)field = (uint16_t)x;
	else
		*(unsigned int *)field = (unsigned int)x;
}

static int key_uint(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
		    void *base)
{
	unsigned long x;

	if (uint_of(c, v, where, k, false, &x) != 0)
		return -1;
	store_uint((char *)base + k->off, k->size, x);
	return 0;
}

static int key_pow2(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
		    void *base)
{
	unsigned long x;

	if (uint_of(c, v, where, k, true, &x) != 0)
		return -1;
	store_uint((char *)base + k->off, k->size, x);
	return 0;
}

static int set_string(struct ctx *c, yaml_node_t *v, char **field, const char *s)
{
	char *dup = strdup(s);

	if (dup == NULL)
		return fail(c, v, "out of memory");
	free(*field);
	*field = dup;
	return 0;
}

static int key_string(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
		      void *base)
{
	const char *s;

	if (string_of(c, v, where, &s) != 0)
		return -1;
	if (s[0] == '\0')
		return expected(c, v, where, "a non-empty string");
	return set_string(c, v, (char **)((char *)base + k->off), s);
}

/* bind() takes the path in sun_path; a longer one would be cut, or refused at start-up. */
static int key_sockpath(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
			void *base)
{
	if (key_string(c, k, v, where, base) != 0)
		return -1;
	if (strlen(sval(v)) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return fail(c, v, "%s: path longer than %zu bytes, too long for a unix socket",
			    where, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	return 0;
}

/*
 * Relative paths are taken from the config file's directory, not the daemon's working
 * directory: systemd starts pop53d in /, and a config should mean the same from anywhere.
 */
static int key_path(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
		    void *base)
{
	char **field = (char **)((char *)base + k->off);
	const char *s, *slash;
	char *full;
	int dirlen;

	if (string_of(c, v, where, &s) != 0)
		return -1;
	if (s[0] == '\0')
		return expected(c, v, where, "a non-empty path");
	slash = strrchr(c->path, '/');
	if (s[0] == '/' || slash == NULL)
		return set_string(c, v, field, s);
	dirlen = (int)(slash - c->path);
	if (asprintf(&full, "%.*s/%s", dirlen, c->path, s) < 0)
		return fail(c, v, "out of memory");
	free(*field);
	*field = full;
	return 0;
}

static int key_idle_mode(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
			 void *base)
{
	enum p53_idle_mode *mode = (enum p53_idle_mode *)((char *)base + k->off);

	if (v->type == YAML_SCALAR_NODE && strcmp(sval(v), "busy") == 0)
		*mode = P53_IDLE_BUSY;
	else if (v->type == YAML_SCALAR_NODE && strcmp(sval(v), "adaptive") == 0)
		*mode = P53_IDLE_ADAPTIVE;
	else
		return expected(c, v, where, "busy or adaptive");
	return 0;
}

static int key_replicas(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
			void *base)
{
	enum p53_replicas *mode = (enum p53_replicas *)((char *)base + k->off);

	if (v->type == YAML_SCALAR_NODE && strcmp(sval(v), "per-core") == 0)
		*mode = P53_REPLICAS_PER_CORE;
	else if (v->type == YAML_SCALAR_NODE && strcmp(sval(v), "per-socket") == 0)
		*mode = P53_REPLICAS_PER_SOCKET;
	else
		return expected(c, v, where, "per-core or per-socket");
	return 0;
}

/* YAML 1.1 booleans, the spellings operators write. */
static int key_bool(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
		    void *base)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "on", "On" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "off", "Off" };
	bool *b = (bool *)((char *)base + k->off);

	if (v->type == YAML_SCALAR_NODE && v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (strcmp(sval(v), yes[i]) == 0) {
				*b = true;
				return 0;
			}
			if (strcmp(sval(v), no[i]) == 0) {
				*b = false;
				return 0;
			}
		}
	}
	return expected(c, v, where, "true or false");
}

/* host:port or [v6]:port for a TCP listener; the address must be a literal. */
static int key_listen(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
		      void *base)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *s, *colon;
	uint8_t buf[16];
	char *end;
	long port;

	if (v->type != YAML_SCALAR_NODE)
		return expected(c, v, where, "address:port");
	s = sval(v);
	colon = strrchr(s, ':');
	if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
		return expected(c, v, where, "address:port, e.g. 127.0.0.1:9153 or [::1]:9153");
	if (s[0] == '[' && colon > s + 1 && colon[-1] == ']')
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s - 2), s + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || errno != 0 || port < 1 || port > 65535 ||
	    (inet_pton(AF_INET, host, buf) != 1 && inet_pton(AF_INET6, host, buf) != 1))
		return expected(c, v, where, "address:port, e.g. 127.0.0.1:9153 or [::1]:9153");
	return key_string(c, k, v, where, base);
}

static int key_eal(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
		   void *base)
{
	struct p53_config *cfg = base;
	yaml_node_item_t *it;
	char iw[WHERE_MAX];
	int n;

	(void)k;
	if (v->type != YAML_SEQUENCE_NODE)
		return expected(c, v, where, "a list of strings");
	n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n > P53_CONFIG_MAX_EAL)
		return fail(c, v, "%s: at most %d arguments, got %d", where, P53_CONFIG_MAX_EAL, n);
	/* NULL-terminated, so it can be appended to an argv as it is. */
	cfg->eal = calloc((size_t)n + 1, sizeof(char *));
	if (cfg->eal == NULL)
		return fail(c, v, "out of memory");
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		const char *s;

		snprintf(iw, sizeof(iw), "%s[%d]", where, cfg->n_eal);
		if (string_of(c, item, iw, &s) != 0)
			return -1;
		if (set_string(c, item, &cfg->eal[cfg->n_eal], s) != 0)
			return -1;
		cfg->n_eal++;
	}
	return 0;
}

static int key_addrs(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
		     void *base)
{
	struct p53_config *cfg = base;
	yaml_node_item_t *it;
	char iw[WHERE_MAX];

	(void)k;
	if (v->type != YAML_SEQUENCE_NODE)
		return expected(c, v, where, "a list of IP addresses");
	if (v->data.sequence.items.top == v->data.sequence.items.start)
		return fail(c, v, "%s: at least one address is required", where);
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		struct p53_addr a = { 0 };
		const char *s;

		snprintf(iw, sizeof(iw), "%s[%d]", where, cfg->n_addrs);
		if (cfg->n_addrs == P53_CONFIG_MAX_ADDRS)
			return fail(c, item, "%s: at most %d addresses", where,
				    P53_CONFIG_MAX_ADDRS);
		if (string_of(c, item, iw, &s) != 0)
			return -1;
		if (inet_pton(AF_INET, s, a.bytes) == 1)
			a.family = AF_INET;
		else if (inet_pton(AF_INET6, s, a.bytes) == 1)
			a.family = AF_INET6;
		else
			return expected(c, item, iw, "an IPv4 or IPv6 address");
		for (int i = 0; i < cfg->n_addrs; i++)
			if (memcmp(&cfg->addrs[i], &a, sizeof(a)) == 0)
				return fail(c, item, "%s: duplicate address '%s'", iw, s);
		cfg->addrs[cfg->n_addrs++] = a;
	}
	return 0;
}

/*
 * Enough of RFC 1035 §2.3.4 to catch typos ("example..com", a 64-byte label); the zone loader
 * checks the name against the zone file's SOA owner anyway. Escapes are refused rather than
 * half-understood.
 */
static int key_zone_name(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
			 void *base)
{
	struct p53_config_zone *z = base;
	const char *s, *p;
	size_t len;

	(void)k;
	if (string_of(c, v, where, &s) != 0)
		return -1;
	len = strlen(s);
	if (len == 0)
		return expected(c, v, where, "a domain name");
	if (strcmp(s, ".") != 0) {
		for (p = s; *p != '\0';) {
			size_t label = strcspn(p, ".");

			if (label == 0 || label > 63)
				return expected(c, v, where, "a domain name (labels of 1..63 bytes)");
			p += label;
			if (*p == '.')
				p++;
		}
		if (strpbrk(s, "\\ \t") != NULL)
			return expected(c, v, where, "a domain name without escapes or spaces");
		/* Presentation length + 1 = wire length when the name ends in '.'. */
		if (len + (s[len - 1] != '.') > 254)
			return expected(c, v, where, "a domain name of at most 255 bytes");
	}
	z->name = malloc(len + 2);
	if (z->name == NULL)
		return fail(c, v, "out of memory");
	memcpy(z->name, s, len + 1);
	if (s[len - 1] != '.')
		memcpy(z->name + len, ".", 2);
	return 0;
}

static int walk_map(struct ctx *c, yaml_node_t *map, const struct key *keys, size_t nkeys,
		    const char *where, const yaml_node_t *parent, void *base);

static int key_section(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
		       void *base)
{
	/* A section's missing keys are reported at its "name:" line, where a reader looks. */
	return walk_map(c, v, k->sub, k->nsub, where, c->key, base);
}

static const struct key zone_keys[] = {
	{ .name = "name", .fn = key_zone_name, .required = true },
	{ .name = "file", .fn = key_path, .off = offsetof(struct p53_config_zone, file),
	  .required = true },
};

static int key_zones(struct ctx *c, const struct key *k, yaml_node_t *v, const char *where,
		     void *base)
{
	struct p53_config *cfg = base;
	yaml_node_item_t *it;
	char iw[WHERE_MAX];
	size_t n;

	(void)k;
	if (v->type != YAML_SEQUENCE_NODE)
		return expected(c, v, where, "a list of {name, file}");
	n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n == 0)
		return fail(c, v, "%s: at least one zone is required", where);
	cfg->zones = calloc(n, sizeof(*cfg->zones));
	if (cfg->zones == NULL)
		return fail(c, v, "out of memory");
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		struct p53_config_zone *z = &cfg->zones[cfg->n_zones];

		snprintf(iw, sizeof(iw), "%s[%d]", where, cfg->n_zones);
		/* Count it first: p53_config_free() must see a half-filled entry. */
		cfg->n_zones++;
		z->line = (int)item->start_mark.line + 1;
		if (walk_map(c, item, zone_keys, sizeof(zone_keys) / sizeof(zone_keys[0]), iw,
			     item, z) != 0)
			return -1;
		/* DNS names compare case-insensitively (RFC 4343). */
		for (int i = 0; i < cfg->n_zones - 1; i++)
			if (strcasecmp(cfg->zones[i].name, z->name) == 0)
				return fail(c, item, "%s: duplicate zone '%s' (first at line %d)",
					    iw, z->name, cfg->zones[i].line);
	}
	return 0;
}

/*
 * Check one mapping against its table: every key known, none twice (libyaml accepts
 * duplicates and the last would silently win), every required key present. A missing key is
 * reported at `parent`'s line, the mapping that should have held it.
 */
static int walk_map(struct ctx *c, yaml_node_t *map, const struct key *keys, size_t nkeys,
		    const char *where, const yaml_node_t *parent, void *base)
{
	const yaml_node_t *seen[MAX_KEYS] = { NULL };
	yaml_node_pair_t *pair;
	char kw[WHERE_MAX];
	const char *sep = where[0] != '\0' ? ": " : "";

	if (map->type != YAML_MAPPING_NODE)
		return expected(c, map, where[0] != '\0' ? where : "top level", "a mapping");
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *kn = yaml_document_get_node(c->doc, pair->key);
		yaml_node_t *vn = yaml_document_get_node(c->doc, pair->value);
		size_t i;

		if (kn->type != YAML_SCALAR_NODE)
			return fail(c, kn, "%s%skeys must be plain words", where, sep);
		for (i = 0; i < nkeys; i++)
			if (strcmp(keys[i].name, sval(kn)) == 0)
				break;
		if (i == nkeys)
			return fail(c, kn, "%s%sunknown key '%.*s'", where, sep, SHOW_MAX, sval(kn));
		if (seen[i] != NULL)
			return fail(c, kn, "%s%sduplicate key '%s' (first at line %zu)", where, sep,
				    keys[i].name, seen[i]->start_mark.line + 1);
		seen[i] = kn;
		/* An empty optional value means "default", as if the key were absent. */
		if (is_null(vn) && !keys[i].required)
			continue;
		snprintf(kw, sizeof(kw), "%s%s%s", where, where[0] != '\0' ? "." : "", keys[i].name);
		c->key = kn;
		if (keys[i].fn(c, &keys[i], vn, kw, base) != 0)
			return -1;
	}
	for (size_t i = 0; i < nkeys; i++)
		if (keys[i].required && seen[i] == NULL)
			return fail(c, parent, "%s%smissing required key '%s'", where, sep,
				    keys[i].name);
	return 0;
}

#define CFG(f) .off = offsetof(struct p53_config, f), .size = sizeof(((struct p53_config *)0)->f)
#define SECTION(t) .fn = key_section, .sub = (t), .nsub = sizeof(t) / sizeof((t)[0])

static const struct key server_keys[] = {
	{ .name = "identity", .fn = key_string, CFG(identity), .required = true },
	{ .name = "version", .fn = key_string, CFG(version) },
	{ .name = "edns_max_payload", .fn = key_uint, CFG(edns_max_payload), .min = 512,
	  .max = 4096 },
	{ .name = "control_socket", .fn = key_sockpath, CFG(control_socket) },
	{ .name = "control_group", .fn = key_string, CFG(control_group) },
	{ .name = "replicas", .fn = key_replicas, CFG(replicas) },
	{ .name = "watch_zones", .fn = key_bool, CFG(watch_zones) },
	{ .name = "watch_debounce_ms", .fn = key_uint, CFG(watch_debounce_ms), .min = 10,
	  .max = 60000 },
};

static const struct key metrics_keys[] = {
	{ .name = "listen", .fn = key_listen, CFG(metrics_listen) },
	{ .name = "enabled", .fn = key_bool, CFG(metrics_enabled) },
};

static const struct key idle_keys[] = {
	{ .name = "mode", .fn = key_idle_mode, CFG(idle) },
	{ .name = "max_sleep_us", .fn = key_uint, CFG(idle_max_us), .min = 0, .max = 100000 },
};

static const struct key dataplane_keys[] = {
	{ .name = "eal", .fn = key_eal },
	{ .name = "port", .fn = key_string, CFG(port), .required = true },
	{ .name = "workers", .fn = key_uint, CFG(workers), .min = 1, .max = 64 },
	{ .name = "addresses", .fn = key_addrs, .required = true },
	{ .name = "xdp_prog", .fn = key_path, CFG(xdp_prog) },
	{ .name = "idle", SECTION(idle_keys) },
	{ .name = "rx_desc", .fn = key_pow2, CFG(rx_desc), .min = 64, .max = 16384 },
	{ .name = "tx_desc", .fn = key_pow2, CFG(tx_desc), .min = 64, .max = 16384 },
	{ .name = "mbufs", .fn = key_uint, CFG(mbufs), .min = 1023, .max = 1048575 },
};

static const struct key top_keys[] = {
	{ .name = "server", SECTION(server_keys), .required = true },
	{ .name = "dataplane", SECTION(dataplane_keys), .required = true },
	{ .name = "metrics", SECTION(metrics_keys) },
	{ .name = "zones", .fn = key_zones, .required = true },
};

_Static_assert(sizeof(dataplane_keys) / sizeof(dataplane_keys[0]) <= MAX_KEYS, "MAX_KEYS");

static void syntax_error(struct ctx *c, const yaml_parser_t *p)
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
	struct ctx c = { .path = path, .err = err, .errlen = errlen };
	yaml_parser_t parser;
	yaml_document_t doc, next;
	bool have_parser = false, have_doc = false;
	yaml_node_t *root;
	struct stat st;
	FILE *f;
	int rc = -1;

	memset(cfg, 0, sizeof(*cfg));
	if (errlen > 0)
		err[0] = '\0';
	f = fopen(path, "rb");
	if (f == NULL) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	/* fopen() succeeds on a directory; the read would then fail with a vaguer message. */
	if (fstat(fileno(f), &st) != 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		goto cleanup;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(EISDIR));
		goto cleanup;
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
		fail(&c, yaml_document_get_root_node(&next), "only one YAML document is allowed");
		yaml_document_delete(&next);
		goto cleanup;
	}
	yaml_document_delete(&next);

	cfg->edns_max_payload = 1232;
	cfg->workers = 1;
	cfg->idle = P53_IDLE_ADAPTIVE;
	cfg->idle_max_us = 200;
	cfg->rx_desc = 1024;
	cfg->tx_desc = 1024;
	cfg->mbufs = 8191;
	cfg->replicas = P53_REPLICAS_PER_CORE;
	cfg->watch_debounce_ms = 500;
	cfg->metrics_enabled = true;
	cfg->path = strdup(path);
	if (cfg->path == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto cleanup;
	}
	if (walk_map(&c, root, top_keys, sizeof(top_keys) / sizeof(top_keys[0]), "", root,
		     cfg) != 0)
		goto cleanup;
	if (cfg->control_socket == NULL) {
		cfg->control_socket = strdup("/run/pop53/control.sock");
		if (cfg->control_socket == NULL) {
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
	for (int i = 0; i < cfg->n_zones; i++) {
		free(cfg->zones[i].name);
		free(cfg->zones[i].file);
	}
	free(cfg->zones);
	memset(cfg, 0, sizeof(*cfg));
}
