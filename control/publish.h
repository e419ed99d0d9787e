/*
 * The replica publisher: the control thread's handle on the workers and their replicas, and
 * the RCU machinery that swaps them without losing a query.
 *
 * A reload compiles off the workers, builds every new replica first (nothing changes if any
 * allocation fails), then publishes with one pointer store per worker, waits with
 * rte_rcu_qsbr until every worker has passed a quiescent state, and only then frees the old
 * replicas. The wait is bounded (P53_RCU_WAIT_MS): a worker that does not pass a quiescent
 * state in time is stuck, and then the old replicas are put back, the reload fails naming the
 * worker, and the replicas the stuck worker might still hold wait in "limbo" until it moves
 * again (p53_dataplane_poll). So a hung worker never freezes the control thread, and SIGTERM
 * still works. Control thread only.
 */
#ifndef P53_DATAPLANE_H
#define P53_DATAPLANE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_rcu_qsbr.h>

#include "control/conf/config.h"
#include "dataplane/image.h"
#include "dataplane/worker.h"

#define P53_MAX_WORKERS_DP 64 /* as P53_MAX_WORKERS in port.h and dataplane.workers */
#define P53_RCU_WAIT_MS 2000  /* longest a publish waits for the workers' quiescent states */

struct p53_dataplane {
	struct p53_worker *workers;
	unsigned int n_workers;
	unsigned int n_readers;         /* RCU readers besides the workers: the TCP threads
					   (control/tcp/), qsbr thread ids n_workers.. */
	struct rte_rcu_qsbr *qsbr;
	enum p53_replicas mode;
	const void *image;              /* worker 0's replica image: what status and metrics read
					   (valid until the next publish, which only this thread does) */
	size_t image_len;
	uint64_t generation;            /* of the image published last (wall-clock µs, rising) */
	void *steer;                    /* the steering table every reader uses (dataplane/steer.h),
					   published by control/steer/steer_pub.c; each replica's
					   conf.steer points here */
	/* Replicas a stuck worker may still read: freed once every worker has passed a
	 * quiescent state after limbo_token. */
	struct p53_replica *limbo[P53_MAX_WORKERS_DP];
	uint64_t limbo_token;
	int stuck;                      /* qsbr thread id (worker index, or n_workers + TCP
					   thread) that missed the last wait, or -1 */
	/* The largest DNS payload the port carries (see p53_port.max_payload), 0 for no limit,
	 * and why; server.edns_max_payload above it is clamped in every replica. */
	uint16_t payload_limit;
	char payload_why[160];
	uint16_t payload_warned;        /* configured value last warned about, 0 for none */
	/* The previous image, kept (malloc'd, its pages faulted in) for the next IXFR patch to
	 * write into instead of fresh pages (control/xfr/update.c): only while images are
	 * patched (keep_spare, set by the caller per publish) and only from P53_SPARE_MIN bytes
	 * on. One image of standing memory (docs/OPERATIONS.md). */
	void *spare;
	bool keep_spare;
	/* The image to publish is the running one patched (set by the caller per publish, as
	 * keep_spare): it is checked, and its RRset sums made, where it differs from it. */
	bool patch_of_running;
	/* The spare last taken: a replica's image before (it passed adoptable()) or one made
	 * ahead (malloc'd with huge pages asked for, then written): its pages' backing, read
	 * from /proc/self/smaps, is not read again when it comes back as a patched image. */
	const void *spare_given;
	/* A spare made ahead (p53_dataplane_spare_prepare): a thread faults its pages in off the
	 * control thread; `made` is set (release) when it is done. */
	pthread_t spare_th;
	bool spare_th_on;
	bool spare_made;
	void *spare_new;
	size_t spare_new_len;
	/* Where the last publish's time went (wall µs, for the log: docs/BENCHMARKS.md), and
	 * when the workers got the new replicas (CLOCK_MONOTONIC µs): from then on queries get
	 * the new data, whatever the publish still does (grace period, freeing). */
	uint64_t us_check, us_replicas, us_grace, us_free;
	uint64_t swapped_us;
	uint64_t reloads_ok;
	uint64_t reloads_failed;
	double last_reload_ms;          /* compile + publish time of the last good reload */
	char last_error[1024];          /* reason the last failed reload gave */
};

/**
 * Set up RCU for `n` workers (their `qsbr` is set here) and `readers` other reader threads.
 * Call before any of them starts.
 * @return 0, or -1 (out of memory).
 */
int p53_dataplane_init(struct p53_dataplane *dp, struct p53_worker *workers, unsigned int n,
		       unsigned int readers, enum p53_replicas mode);

/*
 * The other RCU readers (the TCP threads) answer from worker 0's replica: each registers as
 * qsbr thread p53_dataplane_reader_id(dp, i), loads *p53_dataplane_reader_slot(dp) with
 * acquire while online, reports quiescent states between events and goes offline while it
 * blocks. A publish swaps that replica like any other and waits for them too, never longer
 * than one event; they must unregister before p53_dataplane_fini().
 */
static inline unsigned int p53_dataplane_reader_id(const struct p53_dataplane *dp, unsigned int i)
{
	return dp->n_workers + i;
}

static inline struct p53_replica *const *p53_dataplane_reader_slot(const struct p53_dataplane *dp)
{
	return &dp->workers[0].replica;
}

/**
 * Publish a compiled image with the responder settings of `cfg` to every worker.
 *
 * Stamps the image's generation. Always takes `img` (malloc'd, as p53_image_build returns
 * it), on success and on failure alike, so the caller never frees it: the first worker on
 * the socket the image was written on answers from `img` itself (its replica frees it), the
 * others from copies in the DPDK heap; when no replica adopted it, it is freed here. On
 * failure (a bad image, out of memory, a worker stuck now or still stuck from an earlier
 * publish) the workers answer from the replicas they had, and err says why.
 * @return 0 or -1.
 */
int p53_dataplane_publish(struct p53_dataplane *dp, void *img, size_t len,
			  const struct p53_config *cfg, char *err, size_t errlen);

/**
 * Free the replicas in limbo once the stuck worker has moved on; call every control tick.
 * Cheap when there is nothing in limbo.
 */
void p53_dataplane_poll(struct p53_dataplane *dp);

/** Free every replica and the RCU variable; the workers must have stopped. */
void p53_dataplane_fini(struct p53_dataplane *dp);

/** Images from this size on leave a spare behind (dp->keep_spare). */
#define P53_SPARE_MIN ((size_t)32 << 20)

/** The spare image (see struct p53_dataplane), taken by the caller (free() it), or NULL. */
void *p53_dataplane_spare_take(struct p53_dataplane *dp);

/**
 * Make a spare of `len` bytes ahead when there is none (nor one being made): a thread mallocs
 * it and writes every page, so that the first IXFR patch after a compile (an AXFR, the start,
 * a reload) also writes into memory already there. Taken by p53_dataplane_spare_take() once
 * done; a publish that keeps no spare frees it. One image of standing memory, as the spare.
 */
void p53_dataplane_spare_prepare(struct p53_dataplane *dp, size_t len);

#endif /* P53_DATAPLANE_H */
