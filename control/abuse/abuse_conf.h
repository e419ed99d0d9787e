/*
 * The config sections of abuse resistance: `rrl:` (response rate limiting, BIND's settings
 * with underscores) and `cookies:` (DNS cookies, RFC 7873 / RFC 9018). docs/CONFIG.md
 * documents every key. Parsed by control/conf/config.c through the schema tables here; the
 * guard publisher (guard_pub.h) turns them into what the workers read.
 *
 * Control thread and pop53ctl (`config check`); no DPDK, no global state.
 */
#ifndef P53_ABUSE_CONF_H
#define P53_ABUSE_CONF_H

#include <stdbool.h>
#include <stdint.h>

#include "control/conf/schema.h"
#include "dataplane/rrl.h"

struct p53_rrl_config {
	bool enabled;                   /* rrl.enabled; true once an rrl: section is given */
	unsigned int rate[P53_RRL__CLASSES]; /* rrl.<class>_per_second, all workers together */
	unsigned int window;            /* rrl.window, seconds, default 15 */
	unsigned int slip;              /* rrl.slip, default 2 */
	unsigned int ipv4_prefix_length; /* default 24 */
	unsigned int ipv6_prefix_length; /* default 56 */
	bool log_only;                  /* rrl.log_only */
	unsigned int table_size;        /* rrl.table_size: accounts per worker, default 65536 */
	unsigned int n_exempt;          /* rrl.exempt_clients */
	struct { uint8_t family; uint8_t bytes[16]; uint8_t bits; } exempt[P53_RRL_MAX_EXEMPT];
};

struct p53_cookie_config {
	bool enabled;                   /* cookies.enabled, default true */
	unsigned int secret_rotation;   /* cookies.secret_rotation, seconds, default 86400 */
	char *secret_file;              /* cookies.secret_file: a shared master secret, or NULL */
	bool have_master;
	uint8_t master[16];             /* read from secret_file at load time */
};

struct p53_abuse_config {
	struct p53_rrl_config rrl;
	struct p53_cookie_config cookies;
};

/** The `rrl:` and `cookies:` rows of the top-level table (handlers of this file). */
int p53_rrl_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		    const char *where, void *base);
int p53_cookies_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			const char *where, void *base);

/** Defaults for an absent section (RRL off, cookies on). */
void p53_abuse_config_defaults(struct p53_abuse_config *a);

/** Release what the loader allocated; safe on a zeroed struct. */
void p53_abuse_config_free(struct p53_abuse_config *a);

/** The settings the data plane's RRL is built from (dataplane/rrl.h). */
void p53_rrl_config_settings(const struct p53_rrl_config *r, struct p53_rrl_settings *s);

#endif /* P53_ABUSE_CONF_H */
