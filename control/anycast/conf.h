/*
 * The `anycast:` config section (docs/CONFIG.md, anycast): the service prefixes and the
 * announcers that tell the local BGP speaker about them. Parsed by the config loader (the
 * table is in conf.c here; control/conf/config.c only names the section), so it is linked
 * into pop53ctl's `config check` too: no DPDK here.
 *
 * An absent section means no announcer: health is tracked and shown, nothing is announced.
 * Start-up and control thread.
 */
#ifndef P53_ANYCAST_CONF_H
#define P53_ANYCAST_CONF_H

#include <stdbool.h>
#include <stdint.h>

#include "control/conf/schema.h"

#define P53_ANYCAST_MAX_PREFIXES 16

struct p53_prefix {
	uint8_t family;                 /* AF_INET or AF_INET6 */
	uint8_t len;
	uint8_t bytes[16];
};

struct p53_frr_conf {
	bool present;
	char *device;                   /* tun device for the announced prefixes, default p53any */
	char *depref_device;            /* ...for the de-preferred ones, default p53any-dp */
	char *check;                    /* command (sh -c), exit 0 = the BGP speaker is fine */
	uint64_t check_interval_ms;     /* default 5 s */
	uint64_t check_timeout_ms;      /* default 2 s */
};

struct p53_bird_conf {
	bool present;
	char *birdc;                    /* default /usr/sbin/birdc */
	char *socket;                   /* birdc -s; default BIRD's own */
	char *protocol;                 /* enabled to announce, disabled to withdraw (required) */
	char *depref_protocol;          /* enabled instead while de-preferred; NULL: none */
	uint64_t timeout_ms;            /* per birdc run, default 2 s */
};

struct p53_exabgp_conf {
	bool present;
	char *output;                   /* "stdout" (default) or a FIFO path */
	char *next_hop;                 /* default "self" */
	char *depref;                   /* attributes of the de-preferred announce,
					   default "community [65535:0]" (RFC 8326) */
};

struct p53_command_conf {
	bool present;
	char *run;                      /* sh -c 'RUN "$@"' with STATE PREFIX... */
	uint64_t timeout_ms;            /* default 5 s */
};

struct p53_anycast_conf {
	bool present;
	struct p53_prefix prefixes[P53_ANYCAST_MAX_PREFIXES]; /* empty: the service addresses */
	int n_prefixes;
	uint64_t retry_ms;              /* a failed announcer is retried after this, default 2 s */
	struct p53_frr_conf frr;
	struct p53_bird_conf bird;
	struct p53_exabgp_conf exabgp;
	struct p53_command_conf command;
};

/** The section's row handler (named in control/conf/config.c's top_keys). */
int p53_anycast_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			     const char *where, void *base);

/** Equal for every key (a reload that changes the section needs a restart). */
bool p53_anycast_conf_same(const struct p53_anycast_conf *a, const struct p53_anycast_conf *b);

void p53_anycast_conf_free(struct p53_anycast_conf *ac);

#endif /* P53_ANYCAST_CONF_H */
