/*
 * The `health:` config section (docs/CONFIG.md, health): the checks and the state machine's
 * timers. Parsed by the config loader (control/conf/config.c names the section; the table is
 * in conf.c here), so it is linked into pop53ctl's `config check` too: no DPDK here.
 *
 * An absent section means every default (p53_health_conf_of). Start-up and control thread.
 */
#ifndef P53_HEALTH_CONF_H
#define P53_HEALTH_CONF_H

#include <stdbool.h>
#include <stdint.h>

#include "control/conf/schema.h"

#define P53_CANARY_MAX_EXPECT 16

/* What every check has. */
struct p53_check_conf {
	uint64_t interval_ms;
	uint64_t timeout_ms;
	unsigned int fall;
	unsigned int rise;
};

struct p53_canary_conf {
	struct p53_check_conf check;    /* timeout = the latency bound */
	char *name;                     /* query name; NULL: the first zone's apex */
	uint16_t qtype;                 /* default SOA */
	int rcode;                      /* expected RCODE, default NOERROR (0) */
	char *expect[P53_CANARY_MAX_EXPECT]; /* expected answer RRset, RDATA in presentation form */
	int n_expect;                   /* 0: only the RCODE is compared */
	int family;                     /* 0: the first service address's; AF_INET or AF_INET6 */
	bool dnssec;                    /* ask with DO=1 and validate the answer's RRSIGs against
					   the served zone's DNSKEY (control/dnssec/verify.h) */
};

struct p53_workers_conf {
	struct p53_check_conf check;
	uint64_t heartbeat_ms;          /* largest heartbeat age, default 100 ms */
};

struct p53_zones_conf {
	struct p53_check_conf check;
};

struct p53_external_conf {
	struct p53_check_conf check;
	char *command;                  /* run with /bin/sh -c; NULL: pushed verdicts only */
};

struct p53_health_conf {
	bool present;                   /* the section was in the file */
	bool enabled;                   /* health.enabled, default true */
	uint64_t hold_down_ms;          /* default 300 s */
	uint64_t min_announce_ms;       /* default 300 s */
	uint64_t warmup_ms;             /* default 0 (off) */
	uint64_t drain_ms;              /* default 30 s */
	int on_stop;                    /* 0 withdraw (default), 1 drain */
	uint64_t stop_drain_ms;         /* default 5 s */
	uint64_t stop_linger_ms;        /* serve this long after the stop withdraw, default 500 ms */
	struct p53_canary_conf canary;
	struct p53_workers_conf workers;
	struct p53_zones_conf zones;
	struct p53_external_conf external;
};

/** The section's key table row handler (named in control/conf/config.c's top_keys). */
int p53_health_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			    const char *where, void *base);

/** The section in force: `hc` when the file had one, else the defaults. */
const struct p53_health_conf *p53_health_conf_of(const struct p53_health_conf *hc);

/** Equal for every key (a reload that changes the section needs a restart). */
bool p53_health_conf_same(const struct p53_health_conf *a, const struct p53_health_conf *b);

void p53_health_conf_free(struct p53_health_conf *hc);

/**
 * A duration with its unit: "250ms", "2s", "5m", "1h" (or "0"), stored as uint64_t ms in
 * [k->min, k->max] ms. Used by the health and anycast sections.
 */
int p53_conf_duration(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base);

/**
 * A record type to ask for, by name ("A", "TXT", "SOA"...), stored as uint16_t at k->off;
 * the meta types (OPT, AXFR, IXFR, ANY) are refused. Used by the canary and the DNS probes.
 */
int p53_conf_qtype(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		   const char *where, void *base);

/** The RCODE names a canary or DNS probe may expect, in RCODE order, NULL-terminated. */
extern const char *const p53_conf_rcode_names[];

#endif /* P53_HEALTH_CONF_H */
