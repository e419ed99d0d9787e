/* The `tcp:` config section; see tcp_conf.h. */
#include "control/tcp/tcp_conf.h"

#define TCP(f) P53_CONF_FIELD(struct p53_tcp_conf, f)

static const struct p53_conf_key tcp_keys[] = {
	{ .name = "enabled", .fn = p53_conf_bool, TCP(enabled) },
	{ .name = "threads", .fn = p53_conf_uint, TCP(threads), .min = 1, .max = 64 },
	/* RFC 7828 §3.1: the keepalive TIMEOUT is 16 bits of 100 ms, so at most 6553.5 s. */
	{ .name = "idle_timeout_ms", .fn = p53_conf_uint, TCP(idle_timeout_ms), .min = 100,
	  .max = 6553500 },
	{ .name = "io_timeout_ms", .fn = p53_conf_uint, TCP(io_timeout_ms), .min = 50, .max = 60000 },
	{ .name = "max_connections", .fn = p53_conf_uint, TCP(max_connections), .min = 1,
	  .max = 1000000 },
	{ .name = "max_per_client", .fn = p53_conf_uint, TCP(max_per_client), .min = 1, .max = 1000000 },
};

void p53_tcp_conf_defaults(struct p53_tcp_conf *t)
{
	t->enabled = true;
	t->threads = 1;
	t->idle_timeout_ms = 10000;     /* RFC 7766 §6.2.3: "in the order of seconds" */
	t->io_timeout_ms = 2000;
	t->max_connections = 1024;
	t->max_per_client = 16;
}

int p53_tcp_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			 const char *where, void *base)
{
	return p53_conf_map(c, v, tcp_keys, P53_CONF_NKEYS(tcp_keys), where, c->key,
			    (char *)base + k->off);
}
