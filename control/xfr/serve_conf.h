/*
 * The outgoing side of zone transfers in the config, per zone or as the default in `xfr:`:
 * who may transfer a zone from pop53 (AXFR/IXFR, docs/CONFIG.md "transfer": client prefixes
 * and an optional TSIG key; read by control/xfr/serve.c), and whom pop53 NOTIFYs when a zone's
 * serial changes (`notify_to`: addresses, ports, optional TSIG keys; read by
 * control/xfr/notify_out.c). Parsed with the rest of the config (pop53ctl's `config check`
 * too: no DPDK). Start-up and control thread.
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

struct p53_config;
struct p53_config_zone;

/** Does this zone's `transfer` (or xfr.transfer) want a TSIG key? Then the image flags it
 * P53_ZONE_XFR_SIGNED, and the workers hand signed SOA queries for its apex over. */
bool p53_xfr_transfer_signed(const struct p53_config *cfg, const struct p53_config_zone *z);

#define P53_XFR_MAX_NOTIFY_TO 32

/* `notify_to`: the downstream servers NOTIFYed (RFC 1996) of a zone's new serial. */
struct p53_xfr_notify_to {
	struct p53_xfr_primary to[P53_XFR_MAX_NOTIFY_TO]; /* address, port, key (index set by
							     the check, -1: unsigned) */
	int n;                          /* 0: nobody (`notify_to: []` turns the default off) */
};

/** `zones[].notify_to` row handler (base: struct p53_config_zone). */
int p53_xfr_conf_notify_to(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base);

/** `xfr.notify_to` row handler (base: struct p53_xfr_conf). */
int p53_xfr_conf_notify_to_default(struct p53_conf_ctx *c, const struct p53_conf_key *k,
				   yaml_node_t *v, const char *where, void *base);

/** Resolve the key names against tsig_keys. @return 0 or -1 with c->err "FILE:LINE: reason". */
int p53_xfr_notify_to_check(struct p53_conf_ctx *c, const struct p53_xfr_conf *x,
			    struct p53_xfr_notify_to *t, const char *where);

void p53_xfr_notify_to_free(struct p53_xfr_notify_to *t);

#endif /* P53_XFR_SERVE_CONF_H */
