/*
 * Counters, aggregated: the sum over workers of their per-core counters, minus the snapshot
 * taken at the last reset (workers own their counters, so a reset never writes to them).
 * Read by `pop53ctl stats`, the Prometheus endpoint and DPDK telemetry. Control thread only.
 */
#ifndef P53_STATS_H
#define P53_STATS_H

#include <stdint.h>

#include "dataplane/worker.h"

struct p53_totals {
	uint64_t rx, tx, tx_fail, answered, no_answer, multiseg, notify, notify_lost;
	uint64_t drop[P53_PKT_DROP__MAX];
	struct p53_answer_stats ans;
};

struct p53_dataplane;

/** Sum the workers' counters into `out`, minus the last reset. */
void p53_stats_collect(const struct p53_worker *workers, unsigned int n, struct p53_totals *out);

/** Make the current totals the new zero. */
void p53_stats_reset(const struct p53_worker *workers, unsigned int n);

/** Name of an RCODE (0..16), "rcode<N>" for others. */
const char *p53_rcode_name(unsigned int rcode, char *buf, size_t len);

/** Mnemonic of a QTYPE counter bucket (P53_QTYPE_BUCKETS-1 is "other"), or NULL if unnamed. */
const char *p53_qtype_name(unsigned int bucket);

/** Names of enum p53_answer_kind. */
extern const char *const p53_kind_names[P53_ANS__MAX];

#endif /* P53_STATS_H */
