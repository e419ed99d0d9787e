/*
 * The `rrl:` and `cookies:` config sections; see abuse_conf.h. Control thread and pop53ctl.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "control/abuse/abuse_conf.h"

#define RATE_UNSET UINT_MAX     /* a class rate not given: BIND makes it responses_per_second */
#define RATE_MAX 1000000

#define RRL(f) P53_CONF_FIELD(struct p53_rrl_config, f)
#define COOKIE(f) P53_CONF_FIELD(struct p53_cookie_config, f)
#define RATE(cls) .off = offsetof(struct p53_rrl_config, rate) + (cls) * sizeof(unsigned int), \
	.size = sizeof(unsigned int), .min = 0, .max = RATE_MAX

static int key_exempt(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	struct p53_rrl_config *r = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of prefixes");

	(void)k;
	if (n < 0)
		return -1;
	if (n > P53_RRL_MAX_EXEMPT)
		return p53_conf_fail(c, v, "%s: at most %d prefixes, got %d", where, P53_RRL_MAX_EXEMPT, n);
	for (int i = 0; i < n; i++) {
		uint8_t family;
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_conf_prefix_of(c, p53_conf_seq_item(c, v, i), iw, &family, r->exempt[i].bytes,
				       &r->exempt[i].bits) != 0)
			return -1;
		r->exempt[i].family = family == AF_INET ? 4 : 6;
		r->n_exempt = (unsigned int)i + 1;
	}
	return 0;
}

static const struct p53_conf_key rrl_keys[] = {
	{ .name = "enabled", .fn = p53_conf_bool, RRL(enabled) },
	{ .name = "responses_per_second", .fn = p53_conf_uint, RATE(P53_RRL_RESPONSES) },
	{ .name = "referrals_per_second", .fn = p53_conf_uint, RATE(P53_RRL_REFERRALS) },
	{ .name = "nodata_per_second", .fn = p53_conf_uint, RATE(P53_RRL_NODATA) },
	{ .name = "nxdomains_per_second", .fn = p53_conf_uint, RATE(P53_RRL_NXDOMAINS) },
	{ .name = "errors_per_second", .fn = p53_conf_uint, RATE(P53_RRL_ERRORS) },
	{ .name = "all_per_second", .fn = p53_conf_uint, RATE(P53_RRL_ALL) },
	{ .name = "window", .fn = p53_conf_uint, RRL(window), .min = 1, .max = 3600 },
	{ .name = "slip", .fn = p53_conf_uint, RRL(slip), .min = 0, .max = 10 },
	{ .name = "ipv4_prefix_length", .fn = p53_conf_uint, RRL(ipv4_prefix_length), .min = 0, .max = 32 },
	{ .name = "ipv6_prefix_length", .fn = p53_conf_uint, RRL(ipv6_prefix_length), .min = 0, .max = 64 },
	{ .name = "exempt_clients", .fn = key_exempt },
	{ .name = "log_only", .fn = p53_conf_bool, RRL(log_only) },
	{ .name = "table_size", .fn = p53_conf_pow2, RRL(table_size), .min = 64, .max = 4194304 },
};

int p53_rrl_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		    const char *where, void *base)
{
	struct p53_rrl_config *r = (struct p53_rrl_config *)((char *)base + k->off);

	/* Writing the section turns RRL on, as BIND's rate-limit block does. */
	r->enabled = true;
	for (int i = P53_RRL_REFERRALS; i <= P53_RRL_ERRORS; i++)
		r->rate[i] = RATE_UNSET;
	if (p53_conf_map(c, v, rrl_keys, P53_CONF_NKEYS(rrl_keys), where, c->key, r) != 0)
		return -1;
	/* BIND: referrals, nodata, nxdomains and errors default to responses_per_second. */
	for (int i = P53_RRL_REFERRALS; i <= P53_RRL_ERRORS; i++)
		if (r->rate[i] == RATE_UNSET)
			r->rate[i] = r->rate[P53_RRL_RESPONSES];
	return 0;
}

/* A 128-bit secret as 32 hex digits (surrounding white space allowed). */
static int read_master(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		       struct p53_cookie_config *ck)
{
	char text[128];
	size_t n = 0, got;
	FILE *f = p53_fopen_regular(ck->secret_file);

	if (f == NULL)
		return p53_conf_fail(c, v, "%s: %s: %s", where, ck->secret_file,
				     errno == EINVAL ? "not a regular file" : strerror(errno));
	got = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[got] = '\0';
	for (size_t i = 0; i < got; i++) {
		if (isspace((unsigned char)text[i]))
			continue;
		if (!isxdigit((unsigned char)text[i]) || n == 32)
			goto bad;
		unsigned int d = isdigit((unsigned char)text[i]) ? (unsigned int)(text[i] - '0') :
				 (unsigned int)(tolower((unsigned char)text[i]) - 'a' + 10);
		ck->master[n / 2] = (uint8_t)(n % 2 == 0 ? d << 4 : ck->master[n / 2] | d);
		n++;
	}
	if (n != 32)
		goto bad;
	ck->have_master = true;
	return 0;
bad:
	return p53_conf_fail(c, v, "%s: %s: expected 32 hex digits (a 128-bit secret)", where,
			     ck->secret_file);
}

static int key_secret_file(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base)
{
	if (p53_conf_path(c, k, v, where, base) != 0)
		return -1;
	return read_master(c, v, where, base);
}

static const struct p53_conf_key cookie_keys[] = {
	{ .name = "enabled", .fn = p53_conf_bool, COOKIE(enabled) },
	/* RFC 7873 §7.1: a secret should change at least every 36 days. */
	{ .name = "secret_rotation", .fn = p53_conf_uint, COOKIE(secret_rotation), .min = 1, .max = 3110400 },
	{ .name = "secret_file", .fn = key_secret_file, COOKIE(secret_file) },
};

int p53_cookies_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			const char *where, void *base)
{
	struct p53_cookie_config *ck = (struct p53_cookie_config *)((char *)base + k->off);

	return p53_conf_map(c, v, cookie_keys, P53_CONF_NKEYS(cookie_keys), where, c->key, ck);
}

void p53_abuse_config_defaults(struct p53_abuse_config *a)
{
	memset(a, 0, sizeof(*a));
	a->rrl.window = 15;
	a->rrl.slip = 2;
	a->rrl.ipv4_prefix_length = 24;
	a->rrl.ipv6_prefix_length = 56;
	a->rrl.table_size = 65536;
	a->cookies.enabled = true;
	a->cookies.secret_rotation = 86400;
}

void p53_abuse_config_free(struct p53_abuse_config *a)
{
	if (a == NULL)
		return;
	free(a->cookies.secret_file);
	memset(a, 0, sizeof(*a));
}

void p53_rrl_config_settings(const struct p53_rrl_config *r, struct p53_rrl_settings *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < P53_RRL__CLASSES; i++)
		s->rate[i] = r->rate[i];
	s->window = r->window;
	s->slip = r->slip;
	s->v4_bits = r->ipv4_prefix_length;
	s->v6_bits = r->ipv6_prefix_length;
	s->log_only = r->log_only;
	s->n_exempt = r->n_exempt;
	for (unsigned int i = 0; i < r->n_exempt; i++) {
		s->exempt[i].family = r->exempt[i].family;
		memcpy(s->exempt[i].bytes, r->exempt[i].bytes, 16);
		s->exempt[i].bits = r->exempt[i].bits;
	}
}
