/*
 * The health state machine: check results and time in, the announcement the node wants out.
 *
 * Pure: no clock, no I/O, no globals. Every function takes the current time (ms, any
 * monotonic origin) as an argument, so tests drive it with tables of (time, results) and
 * expected transitions (tests/unit/control/health/test_state.c). The control thread owns
 * one instance (control/health/health.c) and feeds it every tick.
 *
 * Two layers:
 * - a check (struct p53_check_track) turns a stream of pass/fail results into UP or DOWN
 *   with hysteresis: DOWN after `fall` failures in a row (at once for a critical failure:
 *   a dead worker, a stuck RCU grace period), UP after `rise` passes in a row;
 * - the node (struct p53_hsm) turns the checks, the operator's drain and the daemon's stop
 *   into a state and the announcement level it wants from the announcers (FULL, DEPREF or
 *   NONE), with hold-down, minimum announce interval, warm-up and drain timers.
 */
#ifndef P53_HEALTH_STATE_H
#define P53_HEALTH_STATE_H

#include <stdbool.h>
#include <stdint.h>

#define P53_REASON_MAX 200

enum p53_check_state { P53_CHECK_UNKNOWN = 0, P53_CHECK_UP, P53_CHECK_DOWN };

struct p53_check_track {
	unsigned int fall;              /* failures in a row that take it DOWN (>= 1) */
	unsigned int rise;              /* passes in a row that take it UP (>= 1) */
	enum p53_check_state state;
	unsigned int ok_run;            /* passes in a row now */
	unsigned int fail_run;          /* failures in a row now */
	uint64_t since_ms;              /* time of the last state change (or of the first result) */
	uint64_t results, failures;     /* counted for metrics */
	uint64_t downs;                 /* UP/UNKNOWN -> DOWN changes */
	char last_error[P53_REASON_MAX];/* the last failure's reason, kept after it passes again */
};

/**
 * Record one result of a check.
 *
 * @param ok        the check passed
 * @param critical  a failure that must not wait for `fall` (dead worker, stuck RCU)
 * @param err       the failure's reason (ignored when ok), copied
 * @return 1 when the check changed state, else 0.
 */
int p53_check_record(struct p53_check_track *c, bool ok, bool critical, const char *err,
		     uint64_t now_ms);

/** Force a state (the external check set by `pop53ctl health set external up|down`). */
int p53_check_force(struct p53_check_track *c, enum p53_check_state s, const char *why,
		    uint64_t now_ms);

const char *p53_check_state_name(enum p53_check_state s);

/* What the node asks its announcers for. */
enum p53_announce { P53_ANNOUNCE_NONE = 0, P53_ANNOUNCE_DEPREF, P53_ANNOUNCE_FULL };

enum p53_node_state {
	P53_NODE_STARTING = 0,  /* not announced yet: waiting for every check to pass `rise` */
	P53_NODE_WARMING,       /* announced de-preferred for `warmup_ms` */
	P53_NODE_UP,            /* announced */
	P53_NODE_DOWN,          /* withdrawn: a check failed, or waiting for hold-down */
	P53_NODE_DRAINING,      /* operator drain: de-preferred for `drain_ms`, then withdrawn */
	P53_NODE_DRAINED,       /* operator drain: withdrawn until undrain */
	P53_NODE_STOPPING,      /* SIGTERM with on_stop drain: de-preferred for `stop_drain_ms` */
	P53_NODE_STOPPED,       /* SIGTERM: withdrawn, the workers may stop */
	P53_NODE__MAX
};

extern const char *const p53_node_state_names[P53_NODE__MAX];
extern const char *const p53_announce_names[3];

struct p53_hsm_conf {
	uint64_t hold_down_ms;          /* after a withdraw, no announce before this */
	uint64_t min_announce_ms;       /* after an announce, no new announce before this */
	uint64_t warmup_ms;             /* de-preferred this long before the full announce (0: off) */
	uint64_t drain_ms;              /* `drain`: de-preferred this long, then withdrawn */
	uint64_t stop_drain_ms;         /* SIGTERM with stop_drain: de-preferred this long */
	bool stop_drain;                /* SIGTERM drains (true) or withdraws at once (false) */
};

struct p53_hsm {
	struct p53_hsm_conf conf;
	enum p53_node_state state;
	uint64_t since_ms;              /* entered the current state */
	bool announced_once, withdrawn_once;
	uint64_t last_announce_ms;      /* went from NONE to DEPREF/FULL */
	uint64_t last_withdraw_ms;      /* went from DEPREF/FULL to NONE */
	bool drain;                     /* the operator asked for a drain */
	bool stop;                      /* the daemon is stopping */
	uint64_t flaps;                 /* withdraws forced by a failed check */
	uint64_t announces, withdraws;
	uint64_t entered[P53_NODE__MAX];/* transitions into each state */
	char reason[P53_REASON_MAX];    /* why the last transition happened */
};

/* The checks, summed up for one step. */
struct p53_hsm_in {
	bool all_up;            /* every enabled check is UP */
	bool any_down;          /* some enabled check is DOWN */
	const char *why;        /* which check and why, for the reason of a withdraw */
};

/** Start in STARTING at `now_ms`. */
void p53_hsm_init(struct p53_hsm *m, const struct p53_hsm_conf *conf, uint64_t now_ms);

/**
 * Take at most one transition. Call until it returns 0 (at most a few times) every tick.
 * @return 1 when the state changed (m->reason says why), else 0.
 */
int p53_hsm_step(struct p53_hsm *m, const struct p53_hsm_in *in, uint64_t now_ms);

/** Operator drain on/off; takes effect at the next step. */
void p53_hsm_drain(struct p53_hsm *m, bool on);

/** The daemon stops; takes effect at the next step. */
void p53_hsm_stop(struct p53_hsm *m);

/** The announcement the current state wants. */
enum p53_announce p53_hsm_announce(const struct p53_hsm *m);

/**
 * Earliest time a (re-)announce is allowed by hold-down and the minimum announce interval
 * (the checks must pass too); 0 when nothing holds it back.
 */
uint64_t p53_hsm_next_announce(const struct p53_hsm *m);

#endif /* P53_HEALTH_STATE_H */
