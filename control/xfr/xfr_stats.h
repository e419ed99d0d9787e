/*
 * Counters of zone transfers that the control thread keeps (control/ops/counters.c describes
 * them): the NOTIFYs pop53 sends to the servers it feeds (control/xfr/notify_out.c). Written by
 * the control thread only, read racily (plain 64-bit loads) by the stats renderers, as the
 * workers' counters are. Plain uint64_t only: totals are added and subtracted word by word.
 * (The transfers served to those servers are counted by the TCP threads: tcp_stats.h.)
 */
#ifndef P53_XFR_STATS_H
#define P53_XFR_STATS_H

#include <stdint.h>

struct p53_xfr_stats {
	uint64_t notify_sent;           /* NOTIFYs sent, first tries */
	uint64_t notify_retried;        /* sent again: no answer within the timeout */
	uint64_t notify_acked;          /* answered NOERROR (and, when signed, verified) */
	uint64_t notify_failed;         /* given up: no answer after every try, an error RCODE,
					   or a NOTIFY that could not be built or sent */
};

#endif /* P53_XFR_STATS_H */
