/*
 * Counters of zone transfers that the control thread keeps (control/ops/counters.c describes
 * them): the NOTIFYs pop53 sends to the servers it feeds (control/xfr/notify_out.c), and for
 * its secondary zones the NOTIFYs it is sent, the updates it publishes and how each got into
 * the image (struct p53_xfr_secondary_stats: kept whole in struct p53_xfr, copied here by
 * p53_xfr_totals()). Written by the control thread only, read racily (plain 64-bit loads) by
 * the stats renderers, as the workers' counters are. Plain uint64_t only: totals are added
 * and subtracted word by word.
 * (The transfers served to those servers are counted by the TCP threads: tcp_stats.h.)
 */
#ifndef P53_XFR_STATS_H
#define P53_XFR_STATS_H

#include <stdint.h>

/* How an update got into the published image (control/xfr/update.c), in the order stats,
 * metrics and `zone status` list them. */
enum p53_update_way {
	P53_WAY_PATCHED = 0,            /* the running image patched (image_patch.h) */
	P53_WAY_SPLICED,                /* the zone compiled alone, spliced in (image_splice.h) */
	P53_WAY_COMPILED,               /* every zone compiled */
};
#define P53_WAYS (P53_WAY_COMPILED + 1)

/* The way's name in stats, metrics and `zone status`: "patched", "spliced", "compiled". */
static inline const char *p53_update_way_name(enum p53_update_way w)
{
	static const char *const name[P53_WAYS] = { "patched", "spliced", "compiled" };

	return name[w];
}

/* Updates published, by their way into the image: n[way]. */
struct p53_xfr_ways {
	uint64_t n[P53_WAYS];
};

/* The secondary side: what pop53 is sent and publishes for its secondary zones. */
struct p53_xfr_secondary_stats {
	uint64_t notify_ok;             /* NOTIFYs for a secondary zone answered NOERROR */
	uint64_t notify_refused;        /* refused: not an allowed source, TSIG, not ours... */
	uint64_t applied;               /* new content published (a transfer, expiry) */
	uint64_t apply_failed;          /* not published (the zone did not compile, no memory...) */
	struct p53_xfr_ways ixfr;       /* IXFRs published, each way */
	struct p53_xfr_ways axfr;       /* whole zones published (an AXFR, or an IXFR answered
					   with the whole zone), each way */
};

struct p53_xfr_stats {
	uint64_t notify_sent;           /* NOTIFYs sent, first tries */
	uint64_t notify_retried;        /* sent again: no answer within the timeout */
	uint64_t notify_acked;          /* answered NOERROR (and, when signed, verified) */
	uint64_t notify_failed;         /* given up: no answer after every try, an error RCODE,
					   or a NOTIFY that could not be built or sent */
	struct p53_xfr_secondary_stats secondary;
};

#endif /* P53_XFR_STATS_H */
