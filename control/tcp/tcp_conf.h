/*
 * The `tcp:` section of the config (docs/CONFIG.md): how pop53d serves DNS over TCP
 * (control/tcp/tcp.h). Its own table, walked by the schema (control/conf/schema.h); the top
 * level only names the section. Start-up and the control thread only.
 */
#ifndef P53_TCP_CONF_H
#define P53_TCP_CONF_H

#include <stdbool.h>

#include "control/conf/schema.h"

struct p53_tcp_conf {
	bool enabled;                   /* tcp.enabled, default true */
	unsigned int threads;           /* tcp.threads, 1..64, default 1 */
	unsigned int idle_timeout_ms;   /* tcp.idle_timeout_ms: close a connection with nothing
					   pending after this long, default 10000 */
	unsigned int io_timeout_ms;     /* tcp.io_timeout_ms: a message must arrive whole, and a
					   response must start draining, within this, default 2000 */
	unsigned int max_connections;   /* tcp.max_connections (all threads), default 1024 */
	unsigned int max_per_client;    /* tcp.max_per_client (per client address), default 16 */
};

/** Set the defaults (call before the file is read: a missing section keeps them). */
void p53_tcp_conf_defaults(struct p53_tcp_conf *t);

/**
 * Table handler for the `tcp:` row of the top-level table: `k->off` is where the
 * struct p53_tcp_conf lives in the config.
 */
int p53_tcp_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			 const char *where, void *base);

#endif /* P53_TCP_CONF_H */
