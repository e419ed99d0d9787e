/*
 * The counters, described once. The workers own their per-core counters
 * (dataplane/worker.h); here they are summed, a reset baseline subtracted, and walked in one
 * fixed order as (family, label value, value) triples. Every family has its Prometheus name,
 * its key in `pop53ctl stats`, its help text and type. The three renderers (the `stats`
 * command's JSON, the Prometheus text, DPDK telemetry) are thin callbacks over
 * p53_counters_walk() and never name a counter themselves.
 *
 * Any thread but the workers; nothing here writes a worker's counters.
 */
#ifndef P53_COUNTERS_H
#define P53_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "control/exc/exc_stats.h"
#include "control/tcp/tcp_stats.h"
#include "control/xfr/xfr_stats.h"
#include "control/abuse/rrl_view.h"
#include "dataplane/worker.h"

struct p53_totals {
	uint64_t rx, tx, tx_fail, answered, no_answer, multiseg, notify, notify_lost;
	uint64_t drop[P53_PKT_DROP__MAX];
	struct p53_answer_stats ans;    /* workers and TCP threads */
	struct p53_tcp_stats tcp;       /* the TCP threads' own (p53_totals_add_tcp) */
	uint64_t exc_frames[2];         /* exception path: P53_EXC_TO_KERNEL, P53_EXC_TO_WIRE */
	uint64_t exc_drops[4];          /* its drops, by enum p53_exc_drop */
	uint64_t tcp_open;              /* gauge: TCP connections open now (never reset) */
	struct p53_guard_stats guard;
	struct p53_xfr_stats xfr;       /* the control thread's (NOTIFYs sent downstream) */
};

/* dpdk mode's exception path (control/exc/exc.h), by direction; zero in xdp mode. */
enum { P53_EXC_TO_KERNEL = 0, P53_EXC_TO_WIRE };
enum p53_exc_drop {
	P53_EXC_DROP_KERNEL_QUEUE = 0,  /* a worker's ring to the exception thread was full */
	P53_EXC_DROP_KERNEL_TAP,        /* the tap refused the frame */
	P53_EXC_DROP_WIRE_QUEUE,        /* the ring to the worker was full */
	P53_EXC_DROP_WIRE_NIC,          /* the NIC refused the frame */
};

/* Port counters (rte_eth_stats), walked after the totals when the port has them. */
struct p53_port_totals {
	int valid;
	uint64_t ipackets, opackets, imissed, ierrors, oerrors, rx_nombuf;
	/* net_af_xdp: the kernel's AF_XDP socket counters (control/net/port.h p53_xsk_stats),
	 * walked when xsk is set */
	int xsk;
	uint64_t xsk_rx_ring_full, xsk_rx_dropped, xsk_rx_invalid, xsk_tx_invalid;
	uint64_t xsk_fill_empty, xsk_tx_empty;
};

enum p53_family_type { P53_COUNTER = 0, P53_GAUGE };

struct p53_family {
	const char *prom;       /* Prometheus name, e.g. "pop53_responses_total" */
	const char *json;       /* key in `pop53ctl stats`; "a.b" nests b inside object a */
	const char *label;      /* label name for a family of series ("rcode"), NULL for one value */
	enum p53_family_type type;
	const char *help;
};

/**
 * Called once per series, families in a fixed order (all series of a family together).
 * @param label  the label's value (e.g. "NOERROR"), NULL when the family has no label
 */
typedef void (*p53_counter_fn)(void *arg, const struct p53_family *f, const char *label,
			       uint64_t value);

/** Walk every counter of `t` (and `port` when valid, and the top RRL-limited prefixes when
 * `top` is not NULL) in order. */
void p53_counters_walk(const struct p53_totals *t, const struct p53_port_totals *port,
		       const struct p53_rrl_top *top, p53_counter_fn fn, void *arg);

/** out = the sum of the workers' counters. */
void p53_totals_sum(const struct p53_worker *workers, unsigned int n, struct p53_totals *out);

/**
 * Add the TCP threads' counters: t->tcp, their responder counters into t->ans, responses into
 * t->answered, NOTIFY events into t->notify; t->tcp_open from accepted minus closed.
 */
void p53_totals_add_tcp(struct p53_totals *t, const struct p53_tcp_stats *tcp);

/** Add the exception thread's counters (the workers' side comes with p53_totals_sum). */
void p53_totals_add_exc(struct p53_totals *t, const struct p53_exc_stats *x);

/** t -= base, counter by counter (t->tcp_open, a gauge, is kept). */
void p53_totals_sub(struct p53_totals *t, const struct p53_totals *base);

/** Name of an RCODE (0..16), "RCODE<N>" for others. */
const char *p53_rcode_name(unsigned int rcode, char *buf, size_t len);

/** Mnemonic of a QTYPE counter bucket (P53_QTYPE_BUCKETS-1 is "other"), or NULL if unnamed. */
const char *p53_qtype_name(unsigned int bucket);

/** Names of enum p53_answer_kind. */
extern const char *const p53_kind_names[P53_ANS__MAX];

#endif /* P53_COUNTERS_H */
