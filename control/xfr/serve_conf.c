/* Outgoing transfer ACLs (`transfer:`); see serve_conf.h and docs/CONFIG.md. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "control/conf/config.h"
#include "control/xfr/serve_conf.h"

static int allow_list(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	struct p53_xfr_transfer_conf *t = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of IPv4/IPv6 prefixes");

	(void)k;
	if (n < 0)
		return -1;
	if (n > P53_XFR_MAX_ACL)
		return p53_conf_fail(c, v, "%s: at most %d prefixes", where, P53_XFR_MAX_ACL);
	t->n_acl = 0;
	for (int i = 0; i < n; i++) {
		struct p53_xfr_acl *a = &t->acl[t->n_acl];
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_conf_prefix_of(c, p53_conf_seq_item(c, v, i), iw, &a->family, a->addr, &a->len) != 0)
			return -1;
		a->key = -1;
		t->n_acl++;
	}
	return 0;
}

static const struct p53_conf_key transfer_keys[] = {
	{ .name = "allow", .fn = allow_list, .required = true },
	{ .name = "key", .fn = p53_conf_string,
	  P53_CONF_FIELD(struct p53_xfr_transfer_conf, key_name) },
};

static int parse(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		 struct p53_xfr_transfer_conf **out)
{
	if (*out == NULL && (*out = calloc(1, sizeof(**out))) == NULL)
		return p53_conf_fail(c, v, "out of memory");
	(*out)->key = -1;
	(*out)->line = (int)v->start_mark.line + 1;
	return p53_conf_map(c, v, transfer_keys, P53_CONF_NKEYS(transfer_keys), where, c->key, *out);
}

int p53_xfr_conf_transfer(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			  const char *where, void *base)
{
	(void)k;
	return parse(c, v, where, &((struct p53_config_zone *)base)->transfer);
}

int p53_xfr_conf_transfer_default(struct p53_conf_ctx *c, const struct p53_conf_key *k,
				  yaml_node_t *v, const char *where, void *base)
{
	(void)k;
	return parse(c, v, where, &((struct p53_xfr_conf *)base)->transfer);
}

int p53_xfr_transfer_check(struct p53_conf_ctx *c, const struct p53_xfr_conf *x,
			   struct p53_xfr_transfer_conf *t, const char *where)
{
	if (t == NULL || t->key_name == NULL)
		return 0;
	t->key = p53_xfr_key_find(x, t->key_name);
	if (t->key < 0) {
		snprintf(c->err, c->errlen, "%s:%d: %s.key: unknown TSIG key '%s' (not in tsig_keys)",
			 c->path, t->line, where, t->key_name);
		return -1;
	}
	for (int i = 0; i < t->n_acl; i++)
		t->acl[i].key = t->key;
	return 0;
}

void p53_xfr_transfer_conf_free(struct p53_xfr_transfer_conf *t)
{
	if (t == NULL)
		return;
	free(t->key_name);
	free(t);
}

bool p53_xfr_transfer_signed(const struct p53_config *cfg, const struct p53_config_zone *z)
{
	const struct p53_xfr_transfer_conf *t = z->transfer != NULL ? z->transfer : cfg->xfr.transfer;

	return t != NULL && t->key >= 0;
}

/* ---- notify_to ---- */

static int notify_to_parse(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
			   struct p53_xfr_notify_to **out)
{
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of {address, port, key}");

	if (n < 0)
		return -1;
	if (n > P53_XFR_MAX_NOTIFY_TO)
		return p53_conf_fail(c, v, "%s: at most %d servers", where, P53_XFR_MAX_NOTIFY_TO);
	if (*out == NULL && (*out = calloc(1, sizeof(**out))) == NULL)
		return p53_conf_fail(c, v, "out of memory");
	for (int i = 0; i < n; i++) {
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_xfr_conf_remote(c, p53_conf_seq_item(c, v, i), iw, &(*out)->to[(*out)->n++]) != 0)
			return -1;
	}
	return 0;
}

int p53_xfr_conf_notify_to(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base)
{
	(void)k;
	return notify_to_parse(c, v, where, &((struct p53_config_zone *)base)->notify_to);
}

int p53_xfr_conf_notify_to_default(struct p53_conf_ctx *c, const struct p53_conf_key *k,
				   yaml_node_t *v, const char *where, void *base)
{
	(void)k;
	return notify_to_parse(c, v, where, &((struct p53_xfr_conf *)base)->notify_to);
}

int p53_xfr_notify_to_check(struct p53_conf_ctx *c, const struct p53_xfr_conf *x,
			    struct p53_xfr_notify_to *t, const char *where)
{
	for (int i = 0; t != NULL && i < t->n; i++) {
		struct p53_xfr_primary *p = &t->to[i];
		if (p->key_name == NULL)
			continue;
		p->key = p53_xfr_key_find(x, p->key_name);
		if (p->key < 0) {
			snprintf(c->err, c->errlen, "%s:%d: %s[%d].key: unknown TSIG key '%s' (not in "
				 "tsig_keys)", c->path, p->line, where, i, p->key_name);
			return -1;
		}
	}
	return 0;
}

void p53_xfr_notify_to_free(struct p53_xfr_notify_to *t)
{
	if (t == NULL)
		return;
	for (int i = 0; i < t->n; i++)
		free(t->to[i].key_name);
	free(t);
}
