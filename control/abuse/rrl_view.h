/*
 * What operators see of the RRL tables: the prefixes limited now (`pop53ctl rrl`) and the
 * most limited prefixes (a gauge family in `pop53ctl stats` and the metrics). The workers'
 * tables are read racily, as the counters are: a torn entry only blurs one line of a
 * diagnostic, and the workers never wait for this.
 *
 * Control thread only (it alone frees tables, so they stay valid while it reads them).
 */
#ifndef P53_RRL_VIEW_H
#define P53_RRL_VIEW_H

#include <stdint.h>

#include <jansson.h>

struct p53_guard_pub;

#define P53_RRL_TOP 10

struct p53_rrl_top {
	unsigned int n;
	struct {
		char prefix[64];        /* "198.51.100.0/24" */
		uint64_t limited;       /* responses limited, summed over its accounts and workers */
	} e[P53_RRL_TOP];
};

/** The P53_RRL_TOP prefixes with the most limited responses among the accounts held now. */
void p53_rrl_top(const struct p53_guard_pub *p, struct p53_rrl_top *out);

/**
 * `pop53ctl rrl`: the settings in force and every prefix limited now, with its classes, the
 * responses limited and the seconds until its accounts are out of debt.
 */
json_t *p53_rrl_view_json(const struct p53_guard_pub *p);

#endif /* P53_RRL_VIEW_H */
