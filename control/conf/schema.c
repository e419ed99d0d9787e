/*
 * The config schema's walker and value handlers; see schema.h. Control thread and start-up
 * only; no global state.
 */
#include "control/conf/schema.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SHOW_MAX 64 /* bytes of a bad value quoted back in an error */

int p53_conf_fail(struct p53_conf_ctx *c, const yaml_node_t *n, const char *fmt, ...)
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

bool p53_conf_is_null(const yaml_node_t *n)
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
	else if (p53_conf_is_null(n))
		snprintf(buf, len, "nothing");
	else
		snprintf(buf, len, "'%.*s'", SHOW_MAX, sval(n));
}

int p53_conf_expected(struct p53_conf_ctx *c, const yaml_node_t *n, const char *where,
		      const char *what)
{
	char got[SHOW_MAX + 8];

	describe(n, got, sizeof(got));
	return p53_conf_fail(c, n, "%s: expected %s, got %s", where, what, got);
}

int p53_conf_string_of(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		       const char **out)
{
	if (v->type != YAML_SCALAR_NODE || p53_conf_is_null(v))
		return p53_conf_expected(c, v, where, "a string");
	/* A "\0" escape would silently truncate a C string. */
	if (strlen(sval(v)) != v->data.scalar.length)
		return p53_conf_fail(c, v, "%s: string contains a NUL byte", where);
	*out = sval(v);
	return 0;
}

/*
 * Decimal digits only: "0x10", "-1", "1e3" and "1_000" are typos here, not numbers. With pow2,
 * also a power of two (descriptor rings: the PMDs want one).
 */
static int uint_check(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		      const struct p53_conf_key *k, bool pow2, unsigned long *out)
{
	char what[64];
	const char *s;
	unsigned long x;

	snprintf(what, sizeof(what), "%s %lu..%lu", pow2 ? "a power of two" : "an integer",
		 k->min, k->max);
	if (v->type != YAML_SCALAR_NODE || p53_conf_is_null(v))
		return p53_conf_expected(c, v, where, what);
	s = sval(v);
	if (v->data.scalar.length == 0 || v->data.scalar.length > 10 ||
	    strspn(s, "0123456789") != v->data.scalar.length)
		return p53_conf_expected(c, v, where, what);
	x = strtoul(s, NULL, 10);
	if (x < k->min || x > k->max || (pow2 && (x & (x - 1)) != 0))
		return p53_conf_expected(c, v, where, what);
	*out = x;
	return 0;
}

int p53_conf_uint_of(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		     const struct p53_conf_key *k, unsigned long *out)
{
	return uint_check(c, v, where, k, false, out);
}

void p53_conf_store_uint(void *field, size_t size, unsigned long x)
{
	switch (size) {
	case sizeof(uint8_t):
		*(uint8_t *)field = (uint8_t)x;
		break;
	case sizeof(uint16_t):
		*(uint16_t *)field = (uint16_t)x;
		break;
	case sizeof(uint64_t):
		*(uint64_t *)field = x;
		break;
	default:
		*(unsigned int *)field = (unsigned int)x;
		break;
	}
}

int p53_conf_uint(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		  const char *where, void *base)
{
	unsigned long x;

	if (uint_check(c, v, where, k, false, &x) != 0)
		return -1;
	p53_conf_store_uint((char *)base + k->off, k->size, x);
	return 0;
}

int p53_conf_pow2(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		  const char *where, void *base)
{
	unsigned long x;

	if (uint_check(c, v, where, k, true, &x) != 0)
		return -1;
	p53_conf_store_uint((char *)base + k->off, k->size, x);
	return 0;
}

int p53_conf_set_string(struct p53_conf_ctx *c, yaml_node_t *v, char **field, const char *s)
{
	char *dup = strdup(s);

	if (dup == NULL)
		return p53_conf_fail(c, v, "out of memory");
	free(*field);
	*field = dup;
	return 0;
}

int p53_conf_string(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		    const char *where, void *base)
{
	const char *s;

	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	if (s[0] == '\0')
		return p53_conf_expected(c, v, where, "a non-empty string");
	return p53_conf_set_string(c, v, (char **)((char *)base + k->off), s);
}

/* bind() takes the path in sun_path; a longer one would be cut, or refused at start-up. */
int p53_conf_sockpath(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	if (p53_conf_string(c, k, v, where, base) != 0)
		return -1;
	if (strlen(sval(v)) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return p53_conf_fail(c, v, "%s: path longer than %zu bytes, too long for a unix socket",
				     where, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	return 0;
}

/*
 * Relative paths are taken from the config file's directory, not the daemon's working
 * directory: systemd starts pop53d in /, and a config should mean the same from anywhere.
 */
int p53_conf_path(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		  const char *where, void *base)
{
	char **field = (char **)((char *)base + k->off);
	const char *s, *slash;
	char *full;
	int dirlen;

	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	if (s[0] == '\0')
		return p53_conf_expected(c, v, where, "a non-empty path");
	slash = strrchr(c->path, '/');
	if (s[0] == '/' || slash == NULL)
		return p53_conf_set_string(c, v, field, s);
	dirlen = (int)(slash - c->path);
	if (asprintf(&full, "%.*s/%s", dirlen, c->path, s) < 0)
		return p53_conf_fail(c, v, "out of memory");
	free(*field);
	*field = full;
	return 0;
}

/* YAML 1.1 booleans, the spellings operators write. */
int p53_conf_bool(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		  const char *where, void *base)
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
	return p53_conf_expected(c, v, where, "true or false");
}

/* host:port or [v6]:port for a TCP listener; the address must be a literal. */
int p53_conf_listen(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		    const char *where, void *base)
{
	static const char what[] = "address:port, e.g. 127.0.0.1:9153 or [::1]:9153";
	char host[INET6_ADDRSTRLEN + 2];
	const char *s, *colon;
	uint8_t buf[16];
	char *end;
	long port;

	if (v->type != YAML_SCALAR_NODE)
		return p53_conf_expected(c, v, where, "address:port");
	s = sval(v);
	colon = strrchr(s, ':');
	if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
		return p53_conf_expected(c, v, where, what);
	if (s[0] == '[' && colon > s + 1 && colon[-1] == ']')
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s - 2), s + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || errno != 0 || port < 1 || port > 65535 ||
	    (inet_pton(AF_INET, host, buf) != 1 && inet_pton(AF_INET6, host, buf) != 1))
		return p53_conf_expected(c, v, where, what);
	return p53_conf_string(c, k, v, where, base);
}

int p53_conf_enum(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		  const char *where, void *base)
{
	char what[256];
	size_t o = 0;

	if (v->type == YAML_SCALAR_NODE) {
		for (int i = 0; k->names[i] != NULL; i++) {
			if (strcmp(sval(v), k->names[i]) == 0) {
				*(int *)((char *)base + k->off) = i;
				return 0;
			}
		}
	}
	what[0] = '\0';
	for (int i = 0; k->names[i] != NULL && o < sizeof(what); i++)
		o += (size_t)snprintf(what + o, sizeof(what) - o, "%s%s",
				      i == 0 ? "" : k->names[i + 1] == NULL ? " or " : ", ", k->names[i]);
	return p53_conf_expected(c, v, where, what);
}

int p53_conf_seq_len(struct p53_conf_ctx *c, yaml_node_t *v, const char *where, const char *what)
{
	if (v->type != YAML_SEQUENCE_NODE)
		return p53_conf_expected(c, v, where, what);
	return (int)(v->data.sequence.items.top - v->data.sequence.items.start);
}

yaml_node_t *p53_conf_seq_item(struct p53_conf_ctx *c, yaml_node_t *v, int i)
{
	return yaml_document_get_node(c->doc, v->data.sequence.items.start[i]);
}

int p53_conf_prefix_of(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		       uint8_t *family, uint8_t bytes[16], uint8_t *len)
{
	static const char what[] = "an IPv4 or IPv6 prefix (192.0.2.0/24, 2001:db8::/32)";
	char addr[INET6_ADDRSTRLEN];
	const char *s, *slash;
	unsigned long plen;
	int max;

	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	slash = strchr(s, '/');
	if ((size_t)(slash != NULL ? slash - s : (ptrdiff_t)strlen(s)) >= sizeof(addr))
		return p53_conf_expected(c, v, where, what);
	snprintf(addr, sizeof(addr), "%.*s", (int)(slash != NULL ? slash - s : (ptrdiff_t)strlen(s)), s);
	memset(bytes, 0, 16);
	if (inet_pton(AF_INET, addr, bytes) == 1) {
		*family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, bytes) == 1) {
		*family = AF_INET6;
		max = 128;
	} else {
		return p53_conf_expected(c, v, where, what);
	}
	plen = (unsigned long)max;
	if (slash != NULL) {
		char *end;
		if (slash[1] == '\0' || strspn(slash + 1, "0123456789") != strlen(slash + 1))
			return p53_conf_expected(c, v, where, what);
		plen = strtoul(slash + 1, &end, 10);
		if (plen > (unsigned long)max)
			return p53_conf_expected(c, v, where, what);
	}
	for (int bit = (int)plen; bit < max; bit++)
		if (bytes[bit / 8] & (0x80u >> (bit % 8)))
			return p53_conf_fail(c, v, "%s: '%s' has bits set past /%lu", where, s, plen);
	*len = (uint8_t)plen;
	return 0;
}

int p53_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		     const char *where, void *base)
{
	/* A section's missing keys are reported at its "name:" line, where a reader looks. */
	return p53_conf_map(c, v, k->sub, k->nsub, where, c->key, (char *)base + k->off);
}

/*
 * Check one mapping against its table: every key known, none twice (libyaml accepts
 * duplicates and the last would silently win), every required key present. A missing key is
 * reported at `parent`'s line, the mapping that should have held it.
 */
int p53_conf_map(struct p53_conf_ctx *c, yaml_node_t *map, const struct p53_conf_key *keys,
		 size_t nkeys, const char *where, const yaml_node_t *parent, void *base)
{
	const yaml_node_t *seen[P53_CONF_MAX_KEYS] = { NULL };
	yaml_node_pair_t *pair;
	char kw[P53_CONF_WHERE_MAX];
	const char *sep = where[0] != '\0' ? ": " : "";

	if (nkeys > P53_CONF_MAX_KEYS)
		return p53_conf_fail(c, map, "%s: schema has more than %d keys", where, P53_CONF_MAX_KEYS);
	if (map->type != YAML_MAPPING_NODE)
		return p53_conf_expected(c, map, where[0] != '\0' ? where : "top level", "a mapping");
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *kn = yaml_document_get_node(c->doc, pair->key);
		yaml_node_t *vn = yaml_document_get_node(c->doc, pair->value);
		size_t i;

		if (kn->type != YAML_SCALAR_NODE)
			return p53_conf_fail(c, kn, "%s%skeys must be plain words", where, sep);
		for (i = 0; i < nkeys; i++)
			if (strcmp(keys[i].name, sval(kn)) == 0)
				break;
		if (i == nkeys)
			return p53_conf_fail(c, kn, "%s%sunknown key '%.*s'", where, sep, SHOW_MAX, sval(kn));
		if (seen[i] != NULL)
			return p53_conf_fail(c, kn, "%s%sduplicate key '%s' (first at line %zu)", where,
					     sep, keys[i].name, seen[i]->start_mark.line + 1);
		seen[i] = kn;
		/* An empty optional value means "default", as if the key were absent. */
		if (p53_conf_is_null(vn) && !keys[i].required)
			continue;
		snprintf(kw, sizeof(kw), "%s%s%s", where, where[0] != '\0' ? "." : "", keys[i].name);
		c->key = kn;
		if (keys[i].fn(c, &keys[i], vn, kw, base) != 0)
			return -1;
	}
	for (size_t i = 0; i < nkeys; i++)
		if (keys[i].required && seen[i] == NULL)
			return p53_conf_fail(c, parent, "%s%smissing required key '%s'", where, sep,
					     keys[i].name);
	return 0;
}

FILE *p53_fopen_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "r");
	if (f == NULL) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}
