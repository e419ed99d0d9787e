/*
 * The guard publisher: builds the table the workers read for cookies and RRL
 * (dataplane/guard.h) from the config, owns the per-worker RRL tables, rotates the cookie
 * secret on schedule, and swaps guards in with RCU like replicas, without ever waiting: the
 * old guard is retired with an rte_rcu_qsbr token and freed on a later tick, once every
 * worker has passed a quiescent state.
 *
 * Secrets: with cookies.secret_file, the secret of rotation period k (k = unix time /
 * secret_rotation) is derived from the shared master secret (SipHash-2-4 of k under it), so
 * every node of an anycast group holding the file issues and accepts the same cookies and
 * rotates at the same instant; without it, each period's secret is random (getrandom). The
 * previous period's secret stays accepted until the next rotation.
 *
 * Control thread only.
 */
#ifndef P53_GUARD_PUB_H
#define P53_GUARD_PUB_H

#include <stdint.h>

#include <rte_rcu_qsbr.h>

#include "control/conf/config.h"
#include "dataplane/guard.h"
#include "dataplane/worker.h"

#define P53_GUARD_RETIRED 16
#define P53_GUARD_REBASE_S 600          /* clock rebase (and republish) period */

struct p53_guard_retired {
	struct p53_guard *g;
	struct p53_rrl_table *tables[P53_GUARD_MAX_WORKERS]; /* tables it alone used, or NULL */
	uint64_t token;
};

struct p53_guard_pub {
	struct p53_worker *workers;
	unsigned int n_workers;
	struct rte_rcu_qsbr *qsbr;              /* NULL: no workers run yet or ever (tools) */
	struct p53_guard *cur;                  /* what the workers read; NULL: no cookies, no RRL */
	struct p53_rrl_table *tables[P53_GUARD_MAX_WORKERS]; /* the current RRL tables */
	uint32_t table_entries;                 /* their size; 0 when none */
	struct p53_guard_retired retired[P53_GUARD_RETIRED];
	unsigned int n_retired;
	uint64_t seed;                          /* RRL hash seed, random per process */
	uint64_t period;                        /* cookie rotation period of cur's secret */
	uint32_t rotation;                      /* the secret_rotation it was made with */
	struct p53_cookie_secrets secrets;
	uint64_t rebased;                       /* unix time of the last clock rebase */
	uint64_t rotations;                     /* secrets rotated since start */
};

/** Set up for the workers (after p53_dataplane_init, before they start). */
void p53_guard_pub_init(struct p53_guard_pub *p, struct p53_worker *workers, unsigned int n,
			struct rte_rcu_qsbr *qsbr);

/* A guard built but not yet published, so a reload can fail before anything changes. */
struct p53_guard_next {
	struct p53_guard *g;
	struct p53_rrl_table *fresh[P53_GUARD_MAX_WORKERS]; /* tables made for it, if any */
	uint32_t entries;
	struct p53_cookie_secrets secrets;
	uint64_t period;
	uint32_t rotation;
};

/**
 * Build the guard for `cfg` (new RRL tables only when RRL turns on or table_size changes).
 * @return 0, or -1 with err set (out of memory); nothing changed then.
 */
int p53_guard_prepare(struct p53_guard_pub *p, const struct p53_config *cfg,
		      struct p53_guard_next *next, char *err, size_t errlen);

/** Publish a prepared guard (never fails; the old one is retired). */
void p53_guard_commit(struct p53_guard_pub *p, struct p53_guard_next *next);

/** Free a prepared guard that is not going to be published. */
void p53_guard_discard(struct p53_guard_next *next);

/**
 * Every control tick: free retired guards the workers are done with; rotate the secret when
 * its period ended; rebase the workers' clock every P53_GUARD_REBASE_S.
 */
void p53_guard_tick(struct p53_guard_pub *p, const struct p53_config *cfg);

/** Free everything; the workers must have stopped. */
void p53_guard_pub_fini(struct p53_guard_pub *p);

#endif /* P53_GUARD_PUB_H */
