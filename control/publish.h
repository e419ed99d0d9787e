/*
 * The control thread's handle on the data plane: the workers, their replicas, and the
 * reload machinery that swaps them without losing a query.
 *
 * A reload compiles off the workers, builds every new replica first (nothing changes if any
 * allocation fails), then publishes with one pointer store per worker, waits with
 * rte_rcu_qsbr until every worker has passed a quiescent state, and only then frees the old
 * replicas. Control thread only.
 */
#ifndef P53_DATAPLANE_H
#define P53_DATAPLANE_H

#include <stddef.h>
#include <stdint.h>

#include <rte_rcu_qsbr.h>

#include "control/conf/config.h"
#include "dataplane/image.h"
#include "dataplane/worker.h"

#define P53_MAX_WORKERS_DP 64 /* as P53_MAX_WORKERS in port.h and dataplane.workers */

struct p53_dataplane {
	struct p53_worker *workers;
	unsigned int n_workers;
	struct rte_rcu_qsbr *qsbr;
	enum p53_replicas mode;
	const void *image;              /* worker 0's replica image: what status and metrics read
					   (valid until the next publish, which only this thread does) */
	size_t image_len;
	uint64_t reloads_ok;
	uint64_t reloads_failed;
	double last_reload_ms;          /* compile + publish time of the last good reload */
	char last_error[1024];          /* reason the last failed reload gave */
};

/**
 * Set up RCU for `n` workers (their `qsbr` is set here). Call before the workers start.
 * @return 0, or -1 (out of memory).
 */
int p53_dataplane_init(struct p53_dataplane *dp, struct p53_worker *workers, unsigned int n,
		       enum p53_replicas mode);

/**
 * Publish a compiled image with the responder settings of `cfg` to every worker.
 *
 * Takes `img` (malloc'd) on success and frees it once copied into the replicas; on failure
 * the running replicas are untouched, `img` is still the caller's, and err says why.
 * @return 0 or -1.
 */
int p53_dataplane_publish(struct p53_dataplane *dp, void *img, size_t len,
			  const struct p53_config *cfg, char *err, size_t errlen);

/** Free every replica and the RCU variable; the workers must have stopped. */
void p53_dataplane_fini(struct p53_dataplane *dp);

#endif /* P53_DATAPLANE_H */
