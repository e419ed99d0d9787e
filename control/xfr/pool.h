/*
 * Transfer threads: a fixed pool (xfr.threads) taking jobs (control/xfr/client.h) from one
 * queue and putting them, finished, on another that the control thread drains every tick.
 * The control loop never waits for the network or the disk. Jobs never share memory with
 * the control thread while they run.
 *
 * submit/done/stop: control thread. The workers: their own pthreads.
 */
#ifndef P53_XFR_POOL_H
#define P53_XFR_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "control/xfr/client.h"

#define P53_XFR_MAX_THREADS 16

struct p53_xfr_pool {
	pthread_t th[P53_XFR_MAX_THREADS];
	unsigned int n;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct p53_xfr_job *todo, *todo_tail;
	struct p53_xfr_job *done, *done_tail;
	size_t queued;                  /* jobs waiting */
	unsigned int running;           /* jobs being run */
	volatile int stop;              /* also what running jobs poll to give up */
	int wake_fd;                    /* eventfd written when a job is done, -1 if none */
};

/** Start n threads. @return 0 or -1 (nothing started). */
int p53_xfr_pool_start(struct p53_xfr_pool *p, unsigned int n);

/** Queue a job (the pool owns it until p53_xfr_pool_done hands it back); urgent ones first. */
void p53_xfr_pool_submit(struct p53_xfr_pool *p, struct p53_xfr_job *j, bool urgent);

/** A finished job, or NULL. */
struct p53_xfr_job *p53_xfr_pool_done(struct p53_xfr_pool *p);

/** Stop: running jobs give up within ~100 ms; every job still held is freed. */
void p53_xfr_pool_stop(struct p53_xfr_pool *p);

#endif /* P53_XFR_POOL_H */
