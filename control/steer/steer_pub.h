/*
 * The steering publisher: loads the sources and compiles the steering table
 * (steer_build.h) for a config, runs the targets' health checks, and publishes the table the
 * workers and TCP threads read (dataplane/steer.h) with RCU, never waiting: the old table is
 * retired with an rte_rcu_qsbr token and freed on a later tick (as the guard is).
 *
 * One table for all readers, in rte_malloc memory on the control thread's socket: it is
 * read-only, small next to the zone image, and a health change must reach every worker at
 * once, so it is shared rather than copied per core (per-socket copies are planned for
 * multi-socket machines, as server.replicas does for the image).
 *
 * Health: a target with a `check` runs it every check_interval_ms, one run in flight at a
 * time: a command (sh -c, control/health/proc.c: posix_spawn, its own process group, killed at
 * the timeout) or a network probe (tcp, http, dns: control/health/probe.c, a non-blocking
 * socket advanced every tick, abandoned at the timeout). `fall` failures in a row take it out
 * of every answer, `rise` successes bring it back. A change recompiles the decisions from the
 * loaded sources (no file is read) and publishes within the tick that saw the verdict.
 *
 * An operator (or an outside monitor) can force a target up or down with `pop53ctl target set
 * NAME up|down|auto`; the word overrides the check (which keeps running and is shown) until
 * `auto`, survives reloads like the check's verdict, and is published on the next tick.
 *
 * Signing: variants of records in a zone with a key in dnssec.signing_keys are signed on every
 * build (start, reload, health change) with signature_validity from now, and the whole table
 * is re-signed and republished once less than signature_refresh is left (checked every tick
 * against the wall clock): a timer on the control thread, no worker involved.
 *
 * Control thread only.
 */
#ifndef P53_STEER_PUB_H
#define P53_STEER_PUB_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_rcu_qsbr.h>

#include "control/dnssec/dnssec.h"
#include "control/health/probe.h"
#include "control/health/proc.h"
#include "control/ops/counters.h"
#include "control/steer/steer_build.h"

#define P53_STEER_RETIRED 16

struct p53_steer_check {
	struct p53_proc proc;           /* a command check's child */
	struct p53_probe probe;         /* a tcp, http or dns check's socket */
	uint64_t next_ms;               /* when to start the next run */
	unsigned int ok_run, fail_run;  /* consecutive results */
	uint64_t changes;
	uint64_t oks, fails;            /* results since the target's state began (start, reload) */
	bool last_ok;                   /* the last run's verdict (meaningless before the first) */
	uint64_t last_ms;               /* when the last run ended; 0: none yet */
	char last[300];                 /* how the last run ended */
	bool up;                        /* the check's verdict (rise, fall); up until it says otherwise */
	int8_t forced;                  /* `pop53ctl target set`: 1 up, -1 down, 0 auto (the check) */
};

/* The targets' health: one check per target of every record (pool and fallback_pool), in
 * one array sized by the config's pools, not by P53_STEER_MAX_POOL per record. */
struct p53_steer_state {
	int n_records;
	int *first;                     /* first[i]: chk index of record i's pool[0];
					   first[n_records]: the number of targets */
	struct p53_steer_check *chk;
	struct p53_steer_sources src;
};

/** The check of target j (pool[j]) of record i. */
static inline struct p53_steer_check *p53_steer_chk(const struct p53_steer_state *s, int i, int j)
{
	return &s->chk[s->first[i] + j];
}

struct p53_steer_pub {
	void **slot;                    /* where readers load the table (p53_answer_conf.steer) */
	struct rte_rcu_qsbr *qsbr;      /* NULL: no readers run yet or ever */
	const struct p53_steer_conf *conf; /* the config in force's section (its address is
					   stable: the daemon's config is replaced in place) */
	const struct p53_dnssec_conf *dnssec; /* its dnssec section (keys, validity, refresh) */
	uint64_t resign_at;             /* unix seconds; 0: nothing signed */
	uint64_t resigns;               /* re-signed by the timer */
	struct p53_steer_signing last_sign; /* the last build's signing figures */
	void *cur;
	size_t cur_len;
	struct p53_steer_state st;
	bool dirty;                     /* an operator changed a target: republish next tick */
	struct { void *t; uint64_t token; } retired[P53_STEER_RETIRED];
	unsigned int n_retired;
	uint64_t publishes;
	uint64_t source_reloads, source_reloads_failed; /* `steering reload` */
	double last_source_reload_ms;
	uint64_t health_changes;
	uint64_t probe_ok[P53_PROBE_NTYPES], probe_fail[P53_PROBE_NTYPES]; /* check results since start, by enum p53_probe_type */
	uint64_t target_changes;        /* targets that crossed rise or fall, since start */
	uint64_t targets_down;          /* out of the answers now (check or operator) */
	/* The counters above are plain integers written by the control thread only, so
	 * p53_steer_walk may run on the telemetry thread too. */
};

/* A table built but not yet published, so a reload can fail before anything changes. */
struct p53_steer_next {
	void *t;                        /* rte_malloc'd, or NULL for no steering */
	size_t len;
	struct p53_steer_signing sign;
	struct p53_steer_state st;
};

void p53_steer_pub_init(struct p53_steer_pub *p, void **slot, struct rte_rcu_qsbr *qsbr,
			const struct p53_steer_conf *conf, const struct p53_dnssec_conf *dnssec);

/**
 * Load the sources of `conf` and build its table; health carries over for targets of the
 * same record (owner, type) and name with the same check.
 * @return 0, or -1 with err = "file[:line]: reason".
 */
int p53_steer_prepare(struct p53_steer_pub *p, const struct p53_steer_conf *conf,
		      const struct p53_dnssec_conf *dnssec, struct p53_steer_next *next, char *err,
		      size_t errlen);

/**
 * `pop53ctl steering reload`: re-read only the steering sources of the config in force (the
 * map and the MaxMind DBs, each once), rebuild the table with the targets' health as it is
 * (checks keep running) and publish it. All or nothing: on any error the running table and
 * sources stay.
 * @return 0, or -1 with err = "file[:line]: reason".
 */
int p53_steer_reload_sources(struct p53_steer_pub *p, char *err, size_t errlen);

/** Publish a prepared table (never fails). */
void p53_steer_commit(struct p53_steer_pub *p, struct p53_steer_next *next);

void p53_steer_discard(struct p53_steer_next *next);

/** Every control tick: reap, run health checks, republish on a change or when the variants'
 *  signatures are due for re-signing. */
void p53_steer_tick(struct p53_steer_pub *p, uint64_t now_ms);

/**
 * The health zone check's part for the variants (dnssec.signature_margin covers them too):
 * -1 with why set when the published table's earliest RRSIG expires within `margin` of `now`.
 */
int p53_steer_sig_check(const struct p53_steer_pub *p, uint64_t now, unsigned int margin,
			char *why, size_t cap);

/**
 * `pop53ctl target set NAME up|down|auto`: force every target called NAME (pool[].name, in any
 * record) up or down, overriding its check until `auto`; the table is rebuilt and published on
 * the next tick (p53_steer_tick).
 * @return how many targets matched (0: none, nothing changed), or -1 for a bad state word.
 */
int p53_steer_force(struct p53_steer_pub *p, const char *name, const char *state);

/** What checks the target: "none", "command", "tcp", "http" or "dns". */
const char *p53_steer_check_kind(const struct p53_steer_target *t);

/** A target's health as the answers see it: the operator's word, else its check's. */
bool p53_steer_target_up(const struct p53_steer_state *s, int i, int j);

/**
 * Walk the probe counters as counter families (p53_counters_walk's callback): results by
 * check type and result, state changes, targets out of the answers now. Any thread: reads
 * only the integers of struct p53_steer_pub.
 */
void p53_steer_walk(const struct p53_steer_pub *p, p53_counter_fn fn, void *arg);

/** Free everything; readers must have stopped. */
void p53_steer_pub_fini(struct p53_steer_pub *p);

#endif /* P53_STEER_PUB_H */
