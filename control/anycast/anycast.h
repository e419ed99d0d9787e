/*
 * Announcers: they tell the local BGP speaker what the health state machine wants for the
 * service prefixes (announced, de-preferred, withdrawn). Owns control/anycast/; control
 * thread only, driven by control/health/health.c every tick.
 *
 * - frr (netlink.c, frr.c): the prefixes live on a non-persistent tun device pop53d creates
 *   and holds open (the kernel deletes it, and the connected routes with it, when the
 *   process dies, even by SIGKILL); de-preferred ones on a second such device that FRR's
 *   route-map marks. Addresses are added and removed with netlink (libmnl): quick, never
 *   blocking. An optional check command tells whether the BGP speaker itself is fine.
 * - bird (bird.c): `birdc -s SOCKET enable|disable PROTOCOL`, run as children.
 * - exabgp (exabgp.c): ExaBGP API lines ("announce route ...") on stdout or into a FIFO.
 * - command (command.c): a hook run with the state and the prefixes as arguments.
 *
 * A failing announcer is logged, counted and shown (`pop53ctl health`), retried every
 * anycast.retry; it never stops pop53d, the workers or the control loop.
 */
#ifndef P53_ANYCAST_H
#define P53_ANYCAST_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "control/anycast/conf.h"
#include "control/conf/config.h"
#include "control/health/proc.h"
#include "control/health/state.h"
#include "control/ops/counters.h"

#define P53_MAX_ANNOUNCERS 4

struct p53_announcer;

struct p53_announcer_ops {
	const char *name;
	/* Bring `level` into effect. 1 done, 0 in progress (poll finishes it), -1 failed (err). */
	int (*apply)(struct p53_announcer *a, enum p53_announce level, uint64_t now_ms);
	/* Progress asynchronous work: 1 the pending apply finished, 0 not yet / nothing
	 * pending, -1 it failed (err set). Also runs the announcer's own checks. */
	int (*poll)(struct p53_announcer *a, uint64_t now_ms);
	void (*close)(struct p53_announcer *a);
};

struct p53_announcer {
	const struct p53_announcer_ops *ops;
	const struct p53_anycast_conf *ac;
	const struct p53_prefix *prefixes;
	int n_prefixes;
	enum p53_announce want;         /* what health asked for */
	enum p53_announce have;         /* what is in effect */
	bool known;                     /* `have` was applied at least once */
	bool busy;                      /* an apply is in progress */
	enum p53_announce busy_level;
	bool failed;                    /* the last apply or check failed */
	bool check_failed;              /* the speaker's own check failed (frr.check) */
	uint64_t retry_ms;              /* when to retry after a failure */
	uint64_t applies, failures;
	char err[256];                  /* the last failure */
	void *priv;                     /* the kind's own state */
};

struct p53_anycast {
	struct p53_announcer a[P53_MAX_ANNOUNCERS];
	int n;
	struct p53_prefix prefixes[P53_ANYCAST_MAX_PREFIXES];
	int n_prefixes;
	uint64_t retry_ms;
};

/** Set up the announcers of cfg->anycast (none: NULL). Never fails: errors are retried. */
struct p53_anycast *p53_anycast_open(const struct p53_config *cfg);

/** Ask every announcer for `level` (applied now or at the next polls). */
void p53_anycast_set(struct p53_anycast *ac, enum p53_announce level, uint64_t now_ms);

/** Progress and retry; call every tick. */
void p53_anycast_poll(struct p53_anycast *ac, uint64_t now_ms);

/** Has every announcer applied the level asked (or failed trying)? */
bool p53_anycast_settled(const struct p53_anycast *ac);

/** Withdraw what can be withdrawn at once and free everything. */
void p53_anycast_close(struct p53_anycast *ac);

json_t *p53_anycast_json(const struct p53_anycast *ac);

void p53_anycast_walk(const struct p53_anycast *ac, p53_counter_fn fn, void *arg);

/* The kinds (frr.c, bird.c, exabgp.c, command.c): set a->ops and a->priv. */
int p53_frr_init(struct p53_announcer *a, const struct p53_frr_conf *fc);
int p53_bird_init(struct p53_announcer *a, const struct p53_bird_conf *bc);
int p53_exabgp_init(struct p53_announcer *a, const struct p53_exabgp_conf *ec);
int p53_command_init(struct p53_announcer *a, const struct p53_command_conf *cc);

/** "192.0.2.53/32" */
void p53_prefix_str(const struct p53_prefix *p, char *buf, size_t len);

#endif /* P53_ANYCAST_H */
