/*
 * The canary: a real DNS query put into every worker's path and answered by the worker from
 * its replica with the same p53_worker_burst() as NIC traffic (dataplane/worker.c).
 *
 * Per worker, two single-producer single-consumer rings: `in` (control thread -> worker)
 * carries query frames in mbufs taken from that worker's own pool; the worker checks it once
 * per loop iteration (one ring-empty test, never per packet), answers what is there into a
 * twin p53_worker whose counters keep canaries out of the served totals, and puts the
 * responses on `out` instead of transmitting them. The control thread decodes each response
 * with ldns and compares it with the expectation: RCODE, the answer RRset as data (owner,
 * type, RDATA; TTLs ignored), and the latency bound; with health.canary.dnssec it asks with
 * DO=1 and validates the response's RRSIGs against the DNSKEY RRset of the served image
 * (control/dnssec/verify.h), so a node serving bogus signatures fails the canary.
 *
 * Every mbuf has one owner at a time: the control thread until enqueued, the worker until it
 * enqueues the response (or frees it: a ring that is full, a query it does not answer), then
 * the control thread, which frees every response it takes, late or not. A full `in` ring (a
 * worker that stopped polling) frees the query at once. p53_canary_fini() frees what is left
 * in both rings after the workers stopped. Control thread only, except the worker side in
 * dataplane/worker.c.
 */
#ifndef P53_HEALTH_CANARY_H
#define P53_HEALTH_CANARY_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "control/conf/config.h"
#include "dataplane/worker.h"

#define P53_CANARY_RING 16              /* queries or responses queued per worker */
#define P53_CANARY_MAX_WORKERS 64

struct p53_canary_worker {
	struct rte_ring *in, *out;
	struct p53_worker *twin;        /* counters of the canary bursts */
	struct rte_mempool *pool;       /* the worker's pool */
	uint16_t id;                    /* DNS ID of the outstanding query */
	bool waiting;                   /* a query of this round is unanswered */
	bool failed;
	double last_ms;                 /* latency of the last good answer */
	char err[200];
};

struct p53_canary {
	struct p53_canary_worker w[P53_CANARY_MAX_WORKERS];
	unsigned int n;
	void *expect;                   /* ldns_rr_list of the expected RRset, or NULL */
	uint8_t qname[256];
	int qname_len;
	char qname_str[256];
	uint16_t qtype;
	int rcode;
	bool dnssec;                    /* DO=1, RRSIGs validated (health.canary.dnssec) */
	int family;                     /* AF_INET or AF_INET6 */
	uint8_t dst[16];                /* service address the query is sent to */
	uint16_t seq;
	bool open;                      /* a round is out */
	uint64_t sent_tsc, deadline_tsc;
	uint64_t rounds, failed_rounds, sent, answered, late, ring_full, alloc_fail;
};

/**
 * Create the rings and twins for `n` workers before they start; sets each worker's
 * canary_in/canary_out/canary (the worker loop needs them).
 * @return 0 or -1 (out of memory), err set.
 */
int p53_canary_attach(struct p53_canary *c, struct p53_worker *workers, unsigned int n,
		      struct rte_mempool *const *pools, char *err, size_t errlen);

/**
 * What to ask and expect, from cfg (health.canary; the first zone's SOA by default).
 * @return 0 or -1 with err set.
 */
int p53_canary_configure(struct p53_canary *c, const struct p53_config *cfg, char *err,
			 size_t errlen);

/** Start a round: one query to every worker. */
void p53_canary_send(struct p53_canary *c, uint64_t timeout_ms);

/**
 * Take the responses that arrived. `img` is the served image (the DNSKEY for
 * health.canary.dnssec; NULL when none is published).
 * @return -1 while the round is open, 1 when every worker answered as expected in time, 0
 *         when one did not (err says which and why; the round is closed).
 */
int p53_canary_collect(struct p53_canary *c, const void *img, char *err, size_t errlen);

/** Free every mbuf still in the rings, the rings and the twins; the workers must have stopped. */
void p53_canary_fini(struct p53_canary *c);

#endif /* P53_HEALTH_CANARY_H */
