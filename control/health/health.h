/*
 * Node health: the checks, the state machine and what it tells the announcers. Owns
 * control/health/ (conf, state, canary, proc); runs on the control thread, one
 * p53_health_tick() per loop iteration (50 ms or sooner, see p53_health_wait_ms), and
 * never blocks it: external commands run as children reaped without waiting, the canary's
 * answers come back on rings.
 *
 * Checks, each with interval, fall and rise (docs/CONFIG.md, health):
 * - canary: a real query through every worker (canary.h), compared with the expectation;
 * - workers: every worker's heartbeat is younger than the bound and no worker is stuck in
 *   an RCU grace period (d->dp.stuck); a failure is critical (withdraw at once);
 * - zones: every configured zone is in the served image and not expired
 *   (p53_health_zone_expiry: the zone-transfer work fills it; today nothing expires);
 * - external: an operator command (exit 0 = healthy), or a verdict pushed with
 *   `pop53ctl health set external up|down` (`auto` gives it back to the command).
 */
#ifndef P53_HEALTH_H
#define P53_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "control/health/canary.h"
#include "control/health/proc.h"
#include "control/health/state.h"
#include "control/ops/counters.h"

struct p53_daemon;
struct p53_anycast;

enum p53_check_id {
	P53_HC_CANARY = 0,
	P53_HC_WORKERS,
	P53_HC_ZONES,
	P53_HC_EXTERNAL,
	P53_HC__MAX
};

extern const char *const p53_check_names[P53_HC__MAX];

enum p53_external_mode { P53_EXT_AUTO = 0, P53_EXT_UP, P53_EXT_DOWN };

/**
 * Has `zone` (its name as in the config, ending in '.') expired? Non-zero with `why` set
 * means it must not be served: the zones check fails. For the transfer work (SOA expire).
 */
typedef int (*p53_zone_expired_fn)(void *arg, const char *zone, char *why, size_t len);

struct p53_health {
	bool attached;                  /* p53_health_attach ran: fini has work to do */
	bool enabled;
	struct p53_hsm m;
	struct p53_check_track chk[P53_HC__MAX];
	bool active[P53_HC__MAX];       /* the check takes part (external: a command or a verdict) */
	uint64_t next_ms[P53_HC__MAX];  /* when it runs next */
	struct p53_canary canary;
	bool canary_ready;              /* configured: rings attached and a query to send */
	struct p53_proc ext;
	enum p53_external_mode ext_mode;
	bool ext_command;               /* health.external.command is set */
	uint64_t linger_ms;             /* health.stop_linger */
	p53_zone_expired_fn zone_expired;
	void *zone_expired_arg;
	struct p53_anycast *anycast;    /* NULL: nothing announced (no anycast: section) */
	enum p53_announce level;        /* what the announcers were last told */
	uint64_t transitions;
	uint64_t stop_ms;               /* when the stop was asked, 0 before */
	uint64_t stopped_ms;            /* when STOPPED was reached */
	uint64_t started_ms;
};

/** Attach the canary rings to the workers (before they start). @return 0 or -1, err set. */
int p53_health_attach(struct p53_health *h, struct p53_daemon *d, char *err, size_t errlen);

/**
 * Configure from d->cfg and open the announcers (their failures are retried, never fatal).
 * @return 0 or -1 with err set (a canary that cannot be built from the config).
 */
int p53_health_start(struct p53_health *h, struct p53_daemon *d, char *err, size_t errlen);

/** One control-loop step: run due checks, step the state machine, drive the announcers. */
void p53_health_tick(struct p53_health *h, struct p53_daemon *d);

/** How long the control loop may sleep before the next tick is due (<= max_ms). */
int p53_health_wait_ms(const struct p53_health *h, int max_ms);

/** SIGTERM: withdraw (or drain first, health.on_stop). */
void p53_health_stop(struct p53_health *h);

/**
 * May the workers stop now? True once the node is STOPPED, the announcers applied the
 * withdraw (or failed) and health.stop_linger passed; also true after a bound (the stop
 * must end even when an announcer hangs).
 */
bool p53_health_stop_done(const struct p53_health *h);

/** Free the canary's mbufs and rings, kill children, close the announcers (workers stopped). */
void p53_health_fini(struct p53_health *h);

/** `pop53ctl drain` / `undrain`. */
void p53_health_drain(struct p53_health *h, bool on);

/** `pop53ctl health set external up|down|auto`. @return 0, -1 for an unknown word. */
int p53_health_set_external(struct p53_health *h, const char *mode);

/** Register the zone expiry callback (the transfer work). */
void p53_health_zone_expiry(struct p53_health *h, p53_zone_expired_fn fn, void *arg);

/** The `health` reply and `status.health`: node, checks, announcers. */
json_t *p53_health_json(const struct p53_health *h, bool brief);

/**
 * Walk the health facts as counter families (same callback as p53_counters_walk), for the
 * Prometheus text, the stats JSON and telemetry. Any thread: plain integer reads.
 */
void p53_health_walk(const struct p53_health *h, p53_counter_fn fn, void *arg);

#endif /* P53_HEALTH_H */
