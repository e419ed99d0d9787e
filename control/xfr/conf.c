/* Zone-transfer configuration; see conf.h and docs/CONFIG.md. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ldns/ldns.h>

#include "control/conf/config.h"
#include "control/xfr/conf.h"
#include "control/xfr/serve_conf.h"
#include "dataplane/name.h"

static const char *const alg_words[] = {
	"hmac-sha1", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512", NULL
};

const char *p53_tsig_alg_name(enum p53_tsig_alg alg)
{
	static const char *const names[] = {
		"hmac-sha1.", "hmac-sha224.", "hmac-sha256.", "hmac-sha384.", "hmac-sha512.",
	};

	return names[alg];
}

int p53_xfr_name_wire(const char *s, uint8_t *out, uint8_t *len)
{
	ldns_rdf *r = NULL;
	char *abs = NULL;
	int rc = -1;

	if (asprintf(&abs, "%s%s", s, ldns_dname_str_absolute(s) ? "" : ".") < 0)
		return -1;
	if (ldns_str2rdf_dname(&r, abs) == LDNS_STATUS_OK && ldns_rdf_size(r) <= P53_NAME_MAXLEN) {
		p53_name_lower(out, ldns_rdf_data(r), ldns_rdf_size(r));
		*len = (uint8_t)ldns_rdf_size(r);
		rc = 0;
	}
	ldns_rdf_deep_free(r);
	free(abs);
	return rc;
}

/* ---- tsig_keys ---- */

/* Strict base64 (RFC 4648 §4, padding required): -1 on any other byte or a bad length. */
static int b64_decode(const char *s, uint8_t *out, size_t cap)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), o = 0;

	if (n == 0 || n % 4 != 0)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;
		int pad = 0;
		for (int j = 0; j < 4; j++) {
			const char *p = s[i + j] != '\0' ? strchr(abc, s[i + j]) : NULL;
			if (s[i + j] == '=' && i + 4 == n && j >= 2 && (j == 3 || s[i + 3] == '=')) {
				pad++;
				v <<= 6;
				continue;
			}
			if (p == NULL || pad > 0)
				return -1;
			v = v << 6 | (uint32_t)(p - abc);
		}
		if (o + 3 - (size_t)pad > cap)
			return -1;
		out[o++] = (uint8_t)(v >> 16);
		if (pad < 2)
			out[o++] = (uint8_t)(v >> 8);
		if (pad < 1)
			out[o++] = (uint8_t)v;
	}
	return (int)o;
}

static int key_name(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		    const char *where, void *base)
{
	struct p53_tsig_key *key = base;
	const char *s;

	(void)k;
	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	if (s[0] == '\0' || p53_xfr_name_wire(s, key->wire, &key->wire_len) != 0)
		return p53_conf_expected(c, v, where, "a key name (a domain name)");
	if (asprintf(&key->name, "%s%s", s, ldns_dname_str_absolute(s) ? "" : ".") < 0)
		return p53_conf_fail(c, v, "out of memory");
	return 0;
}

static int key_secret(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	struct p53_tsig_key *key = base;
	uint8_t buf[P53_TSIG_SECRET_MAX * 2];
	const char *s;
	int n;

	(void)k;
	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	/* Never quote the value back: it is a secret. */
	if (strlen(s) > sizeof(buf) || (n = b64_decode(s, buf, sizeof(buf))) <= 0)
		return p53_conf_fail(c, v, "%s: expected a base64 secret of 1..%d bytes (value not shown)",
				     where, P53_TSIG_SECRET_MAX);
	if (n > P53_TSIG_SECRET_MAX)
		return p53_conf_fail(c, v, "%s: secret longer than %d bytes (value not shown)", where,
				     P53_TSIG_SECRET_MAX);
	memcpy(key->secret, buf, (size_t)n);
	key->secret_len = (uint16_t)n;
	memset(buf, 0, sizeof(buf));
	return 0;
}

static const struct p53_conf_key tsig_key_keys[] = {
	{ .name = "name", .fn = key_name, .required = true },
	{ .name = "algorithm", .fn = p53_conf_enum, P53_CONF_FIELD(struct p53_tsig_key, alg),
	  .names = alg_words, .required = true },
	{ .name = "secret", .fn = key_secret, .required = true },
};

int p53_xfr_conf_keys(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	struct p53_config *cfg = base;
	struct p53_xfr_conf *x = &cfg->xfr;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of {name, algorithm, secret}");

	(void)k;
	if (n < 0)
		return -1;
	x->keys = calloc((size_t)n + 1, sizeof(*x->keys));
	if (x->keys == NULL)
		return p53_conf_fail(c, v, "out of memory");
	for (int i = 0; i < n; i++) {
		yaml_node_t *item = p53_conf_seq_item(c, v, i);
		struct p53_tsig_key *key = &x->keys[x->n_keys];

		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		x->n_keys++;
		key->line = (int)item->start_mark.line + 1;
		key->alg = P53_TSIG_HMAC_SHA256;
		if (p53_conf_map(c, item, tsig_key_keys, P53_CONF_NKEYS(tsig_key_keys), iw, item, key) != 0)
			return -1;
		for (int j = 0; j < x->n_keys - 1; j++)
			if (x->keys[j].wire_len == key->wire_len &&
			    memcmp(x->keys[j].wire, key->wire, key->wire_len) == 0)
				return p53_conf_fail(c, item, "%s: duplicate key '%s' (first at line %d)",
						     iw, key->name, x->keys[j].line);
	}
	return 0;
}

int p53_xfr_key_find(const struct p53_xfr_conf *x, const char *name)
{
	uint8_t w[P53_NAME_MAXLEN];
	uint8_t len;

	if (p53_xfr_name_wire(name, w, &len) != 0)
		return -1;
	for (int i = 0; i < x->n_keys; i++)
		if (x->keys[i].wire_len == len && memcmp(x->keys[i].wire, w, len) == 0)
			return i;
	return -1;
}

/* ---- xfr: ---- */

#define XC(f) P53_CONF_FIELD(struct p53_xfr_conf, f)

/* 0 is a value (no journal), so the default needs to know whether the key was written. */
static int journal_bytes(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			 const char *where, void *base)
{
	((struct p53_xfr_conf *)base)->journal_set = true;
	return p53_conf_uint(c, k, v, where, base);
}

static int copy_sync(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		     const char *where, void *base)
{
	((struct p53_xfr_conf *)base)->copy_sync_set = true;
	return p53_conf_uint(c, k, v, where, base);
}

const struct p53_conf_key p53_xfr_conf_keys_table[P53_XFR_CONF_NKEYS] = {
	{ .name = "directory", .fn = p53_conf_path, XC(directory) },
	{ .name = "threads", .fn = p53_conf_uint, XC(threads), .min = 1, .max = 16 },
	{ .name = "timeout_ms", .fn = p53_conf_uint, XC(timeout_ms), .min = 100, .max = 600000 },
	{ .name = "refresh_min_s", .fn = p53_conf_uint, XC(refresh_min_s), .min = 1, .max = 2419200 },
	{ .name = "refresh_max_s", .fn = p53_conf_uint, XC(refresh_max_s), .min = 1, .max = 2419200 },
	{ .name = "retry_min_s", .fn = p53_conf_uint, XC(retry_min_s), .min = 1, .max = 2419200 },
	{ .name = "retry_max_s", .fn = p53_conf_uint, XC(retry_max_s), .min = 1, .max = 2419200 },
	{ .name = "expire_min_s", .fn = p53_conf_uint, XC(expire_min_s), .min = 1, .max = 2419200 },
	{ .name = "transfer", .fn = p53_xfr_conf_transfer_default },
	{ .name = "notify_to", .fn = p53_xfr_conf_notify_to_default },
	{ .name = "journal_max_bytes", .fn = journal_bytes, XC(journal_max_bytes), .min = 0,
	  .max = 1ul << 40 },
	{ .name = "copy_sync_s", .fn = copy_sync, XC(copy_sync_s), .min = 0, .max = 604800 },
};

/* ---- zones[]: the secondary keys ---- */

static struct p53_xfr_zone_conf *zone_xfr(struct p53_conf_ctx *c, yaml_node_t *v, void *base)
{
	struct p53_config_zone *z = base;

	if (z->xfr == NULL) {
		z->xfr = calloc(1, sizeof(*z->xfr));
		if (z->xfr == NULL) {
			p53_conf_fail(c, v, "out of memory");
			return NULL;
		}
		z->xfr->ixfr = true;
	}
	return z->xfr;
}

static int primary_address(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base)
{
	struct p53_xfr_primary *p = base;
	const char *s;

	(void)k;
	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	if (inet_pton(AF_INET, s, p->addr) == 1)
		p->family = AF_INET;
	else if (inet_pton(AF_INET6, s, p->addr) == 1)
		p->family = AF_INET6;
	else
		return p53_conf_expected(c, v, where, "an IPv4 or IPv6 address");
	return 0;
}

static const struct p53_conf_key primary_keys[] = {
	{ .name = "address", .fn = primary_address, .required = true },
	{ .name = "port", .fn = p53_conf_uint, P53_CONF_FIELD(struct p53_xfr_primary, port), .min = 1,
	  .max = 65535 },
	{ .name = "key", .fn = p53_conf_string, P53_CONF_FIELD(struct p53_xfr_primary, key_name) },
};

int p53_xfr_conf_remote(struct p53_conf_ctx *c, yaml_node_t *item, const char *where,
			struct p53_xfr_primary *p)
{
	p->line = (int)item->start_mark.line + 1;
	p->port = 53;
	p->key = -1;
	return p53_conf_map(c, item, primary_keys, P53_CONF_NKEYS(primary_keys), where, item, p);
}

int p53_xfr_conf_primaries(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base)
{
	struct p53_xfr_zone_conf *x = zone_xfr(c, v, base);
	char iw[P53_CONF_WHERE_MAX];
	int n;

	(void)k;
	if (x == NULL)
		return -1;
	n = p53_conf_seq_len(c, v, where, "a list of {address, port, key}");
	if (n < 0)
		return -1;
	if (n == 0)
		return p53_conf_fail(c, v, "%s: at least one primary is required", where);
	if (n > P53_XFR_MAX_PRIMARIES)
		return p53_conf_fail(c, v, "%s: at most %d primaries", where, P53_XFR_MAX_PRIMARIES);
	for (int i = 0; i < n; i++) {
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_xfr_conf_remote(c, p53_conf_seq_item(c, v, i), iw, &x->primaries[x->n_primaries++]) != 0)
			return -1;
	}
	return 0;
}

static int notify_from(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		       const char *where, void *base)
{
	struct p53_xfr_zone_conf *x = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of IPv4/IPv6 prefixes");

	(void)k;
	if (n < 0)
		return -1;
	if (n > P53_XFR_MAX_ACL)
		return p53_conf_fail(c, v, "%s: at most %d prefixes", where, P53_XFR_MAX_ACL);
	for (int i = 0; i < n; i++) {
		yaml_node_t *item = p53_conf_seq_item(c, v, i);
		struct p53_xfr_acl *a = &x->acl[x->n_acl];

		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_conf_prefix_of(c, item, iw, &a->family, a->addr, &a->len) != 0)
			return -1;
		a->key = -1;
		x->n_acl++;
	}
	return 0;
}

static const struct p53_conf_key notify_keys[] = {
	{ .name = "from", .fn = notify_from },
	{ .name = "key", .fn = p53_conf_string, P53_CONF_FIELD(struct p53_xfr_zone_conf, notify_key) },
};

int p53_xfr_conf_notify(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			const char *where, void *base)
{
	struct p53_xfr_zone_conf *x = zone_xfr(c, v, base);

	(void)k;
	if (x == NULL)
		return -1;
	x->has_notify = true;
	x->notify_line = (int)v->start_mark.line + 1;
	return p53_conf_map(c, v, notify_keys, P53_CONF_NKEYS(notify_keys), where, c->key, x);
}

int p53_xfr_conf_ixfr(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	struct p53_xfr_zone_conf *x = zone_xfr(c, v, base);
	struct p53_conf_key row = { .off = offsetof(struct p53_xfr_zone_conf, ixfr) };

	(void)k;
	return x == NULL ? -1 : p53_conf_bool(c, &row, v, where, x);
}

int p53_xfr_conf_catalog(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			 const char *where, void *base)
{
	struct p53_xfr_zone_conf *x = zone_xfr(c, v, base);
	struct p53_conf_key row = { .off = offsetof(struct p53_xfr_zone_conf, catalog) };

	(void)k;
	return x == NULL ? -1 : p53_conf_bool(c, &row, v, where, x);
}

int p53_xfr_conf_on_expire(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base)
{
	static const char *const words[] = { "servfail", "refuse", "keep", NULL };
	struct p53_xfr_zone_conf *x = zone_xfr(c, v, base);
	struct p53_conf_key row = { .off = offsetof(struct p53_xfr_zone_conf, on_expire),
				    .names = words };

	(void)k;
	return x == NULL ? -1 : p53_conf_enum(c, &row, v, where, x);
}

/* ---- after the whole file ---- */

char *p53_xfr_default_file(const char *dir, const char *zone)
{
	size_t n = strlen(zone), o;
	char *out = malloc(strlen(dir) + 3 * n + 8);

	if (out == NULL)
		return NULL;
	o = (size_t)sprintf(out, "%s/", dir);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)zone[i];
		/* The root zone "." would be a hidden file named ".zone": call it "root". */
		if (n == 1 && ch == '.') {
			o += (size_t)sprintf(out + o, "root.");
			continue;
		}
		if (ch == '/' || ch == '%' || ch == '\\' || ch <= ' ' || ch >= 0x7f)
			o += (size_t)sprintf(out + o, "%%%02X", ch);
		else
			out[o++] = (char)ch;
	}
	sprintf(out + o, "zone");
	return out;
}

static int fail_line(struct p53_conf_ctx *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_line(struct p53_conf_ctx *c, int line, const char *fmt, ...)
{
	va_list ap;
	int len = snprintf(c->err, c->errlen, "%s:%d: ", c->path, line);

	if (len >= 0 && (size_t)len < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + len, c->errlen - (size_t)len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int p53_xfr_conf_check(struct p53_conf_ctx *c, struct p53_config *cfg)
{
	struct p53_xfr_conf *x = &cfg->xfr;

	if (x->directory == NULL && (x->directory = strdup("/var/lib/pop53/zones")) == NULL)
		return fail_line(c, 1, "out of memory");
	if (x->threads == 0)
		x->threads = 2;
	if (x->timeout_ms == 0)
		x->timeout_ms = 5000;
	/* Knot's defaults for its refresh/retry/expire bounds. */
	if (x->refresh_min_s == 0)
		x->refresh_min_s = 2;
	if (x->refresh_max_s == 0)
		x->refresh_max_s = 86400;
	if (x->retry_min_s == 0)
		x->retry_min_s = 1;
	if (x->retry_max_s == 0)
		x->retry_max_s = 86400;
	if (x->expire_min_s == 0)
		x->expire_min_s = 3;
	if (x->refresh_min_s > x->refresh_max_s)
		return fail_line(c, 1, "xfr: refresh_min_s %u is above refresh_max_s %u",
				 x->refresh_min_s, x->refresh_max_s);
	if (x->retry_min_s > x->retry_max_s)
		return fail_line(c, 1, "xfr: retry_min_s %u is above retry_max_s %u", x->retry_min_s,
				 x->retry_max_s);
	if (!x->journal_set)
		x->journal_max_bytes = UINT64_C(16) << 20;
	if (!x->copy_sync_set)
		x->copy_sync_s = 300;
	if (p53_xfr_transfer_check(c, x, x->transfer, "xfr.transfer") != 0 ||
	    p53_xfr_notify_to_check(c, x, x->notify_to, "xfr.notify_to") != 0)
		return -1;
	for (int i = 0; i < cfg->n_zones; i++) {
		struct p53_config_zone *z = &cfg->zones[i];
		struct p53_xfr_zone_conf *zx = z->xfr;
		char tw[64];

		snprintf(tw, sizeof(tw), "zones[%d].transfer", i);
		if (p53_xfr_transfer_check(c, x, z->transfer, tw) != 0)
			return -1;
		snprintf(tw, sizeof(tw), "zones[%d].notify_to", i);
		if (p53_xfr_notify_to_check(c, x, z->notify_to, tw) != 0)
			return -1;

		if (zx == NULL) {
			if (z->file == NULL)
				return fail_line(c, z->line, "zones[%d]: missing required key 'file' "
						 "(or 'primaries' for a secondary zone)", i);
			continue;
		}
		if (zx->n_primaries == 0)
			return fail_line(c, z->line, "zones[%d]: 'notify', 'ixfr', 'on_expire' and "
					 "'catalog' need 'primaries' (a secondary zone)", i);
		for (int p = 0; p < zx->n_primaries; p++) {
			struct p53_xfr_primary *pr = &zx->primaries[p];
			if (pr->key_name == NULL)
				continue;
			pr->key = p53_xfr_key_find(x, pr->key_name);
			if (pr->key < 0)
				return fail_line(c, pr->line, "zones[%d].primaries[%d]: unknown TSIG key "
						 "'%s' (not in tsig_keys)", i, p, pr->key_name);
		}
		if (zx->has_notify) {
			int key = -1;
			if (zx->notify_key != NULL && (key = p53_xfr_key_find(x, zx->notify_key)) < 0)
				return fail_line(c, zx->notify_line, "zones[%d].notify.key: unknown TSIG "
						 "key '%s' (not in tsig_keys)", i, zx->notify_key);
			for (int a = 0; a < zx->n_acl; a++)
				zx->acl[a].key = key;
		} else {
			/* Default: each primary may notify, signed with its own key (as BIND). */
			for (int p = 0; p < zx->n_primaries && zx->n_acl < P53_XFR_MAX_ACL; p++) {
				struct p53_xfr_acl *a = &zx->acl[zx->n_acl++];
				a->family = zx->primaries[p].family;
				memcpy(a->addr, zx->primaries[p].addr, 16);
				a->len = a->family == AF_INET ? 32 : 128;
				a->key = zx->primaries[p].key;
			}
		}
		zx->file_given = z->file != NULL;
		if (z->file == NULL && (z->file = p53_xfr_default_file(x->directory, z->name)) == NULL)
			return fail_line(c, z->line, "out of memory");
	}
	return 0;
}

void p53_xfr_zone_conf_free(struct p53_xfr_zone_conf *z)
{
	if (z == NULL)
		return;
	for (int i = 0; i < z->n_primaries; i++)
		free(z->primaries[i].key_name);
	free(z->notify_key);
	free(z);
}

void p53_xfr_conf_free(struct p53_xfr_conf *x)
{
	for (int i = 0; i < x->n_keys; i++) {
		free(x->keys[i].name);
		memset(x->keys[i].secret, 0, sizeof(x->keys[i].secret));
	}
	free(x->keys);
	free(x->directory);
	p53_xfr_transfer_conf_free(x->transfer);
	p53_xfr_notify_to_free(x->notify_to);
	memset(x, 0, sizeof(*x));
}

socklen_t p53_xfr_peer_sa(int family, const uint8_t *addr, uint16_t port,
			  struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;
		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, addr, 4);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;
	s->sin6_family = AF_INET6;
	s->sin6_port = htons(port);
	memcpy(&s->sin6_addr, addr, 16);
	return sizeof(*s);
}

const char *p53_xfr_peer_str(int family, const uint8_t *addr, uint16_t port, char *buf,
			     size_t cap)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(family, addr, a, sizeof(a));
	snprintf(buf, cap, family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, port);
	return buf;
}
