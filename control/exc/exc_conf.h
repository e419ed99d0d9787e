/*
 * The `dataplane.exception:` config section (docs/CONFIG.md): the exception interface of dpdk
 * mode (control/exc/exc.h), where every frame that is not UDP/53 to a service address goes.
 * Its own table, walked by the schema (control/conf/schema.h); dataplane_keys only names it.
 * Start-up and the control thread only; also linked into pop53ctl (no DPDK).
 */
#ifndef P53_EXC_CONF_H
#define P53_EXC_CONF_H

#include "control/anycast/conf.h"
#include "control/conf/schema.h"

#define P53_EXC_MAX_ADDRS 16

struct p53_exc_conf {
	char *iface;                    /* exception.iface: the tap's name, default pop53x */
	struct p53_prefix addrs[P53_EXC_MAX_ADDRS]; /* exception.addresses: management addresses
					   with their prefix length ("192.0.2.53/24"; host bits
					   are the address), put on the tap */
	int n_addrs;
	unsigned int queue;             /* exception.queue: frames each ring holds, per worker
					   and direction (power of two), default 1024 */
	unsigned int idle_max_us;       /* exception.max_sleep_us: the servicing thread's longest
					   idle sleep, default 100 */
};

/** Set the defaults (call before the file is read: a missing section keeps them). */
void p53_exc_conf_defaults(struct p53_exc_conf *x);

/** Table handler for the `exception:` row of dataplane_keys; `k->off` locates the struct. */
int p53_exc_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			 const char *where, void *base);

/** Do two sections say the same? (a reload applies neither; it notes a difference) */
bool p53_exc_conf_same(const struct p53_exc_conf *a, const struct p53_exc_conf *b);

/** Release what the section allocated; safe on a zeroed struct. */
void p53_exc_conf_free(struct p53_exc_conf *x);

#endif /* P53_EXC_CONF_H */
