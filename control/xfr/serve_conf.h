/*
 * Who may transfer a zone from pop53 (outgoing AXFR/IXFR, docs/CONFIG.md "transfer"): a list
 * of client prefixes and an optional TSIG key, per zone (`zones[].transfer`) or as the default
 * for every zone without one (`xfr.transfer`). Parsed with the rest of the config (pop53ctl's
 * `config check` too: no DPDK); read by control/xfr/serve.c. Start-up and control thread.
 */
#ifndef P53_XFR_SERVE_CONF_H
#define P53_XFR_SERVE_CONF_H

#include "control/conf/schema.h"
#include "control/xfr/conf.h"

struct p53_xfr_transfer_conf {
	struct p53_xfr_acl acl[P53_XFR_MAX_ACL]; /* `allow`; .key = the key below (or -1) */
	int n_acl;
	char *key_name;                 /* `key`: requests must be signed with it; NULL: unsigned */
	int key;                        /* index into tsig_keys, -1 (set by the check) */
	int line;
};

/** `zones[].transfer` row handler (base: struct p53_config_zone). */
int p53_xfr_conf_transfer(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			  const char *where, void *base);

/** `xfr.transfer` row handler (base: struct p53_xfr_conf). */
int p53_xfr_conf_transfer_default(struct p53_conf_ctx *c, const struct p53_conf_key *k,
				  yaml_node_t *v, const char *where, void *base);

/** Resolve the key name against tsig_keys. @return 0 or -1 with c->err "FILE:LINE: reason". */
int p53_xfr_transfer_check(struct p53_conf_ctx *c, const struct p53_xfr_conf *x,
			   struct p53_xfr_transfer_conf *t, const char *where);

void p53_xfr_transfer_conf_free(struct p53_xfr_transfer_conf *t);

#endif /* P53_XFR_SERVE_CONF_H */
