/*
 * The `steering:` section of the config (docs/CONFIG.md, steering): the location sources (a
 * subnet-to-PoP map in JSON, a MaxMind DB) and the steered records, each an owner and type
 * with a policy chain over a pool of targets. Its own table, walked by the schema; the top
 * level only names the section. Start-up, the control thread and pop53ctl; no DPDK.
 */
#ifndef P53_STEER_CONF_H
#define P53_STEER_CONF_H

#include <stdbool.h>
#include <stdint.h>

#include "control/conf/schema.h"
#include "control/health/probe.h"

#define P53_STEER_MAX_LABELS 8
#define P53_STEER_MAX_POOL   32
#define P53_STEER_MAX_GEO    64
#define P53_STEER_MAX_FALLBACK 8

enum p53_steer_policy {
	P53_POLICY_MAP = 0, P53_POLICY_GEO, P53_POLICY_NEAREST,
	P53_POLICY_PRIORITY,            /* the healthy targets with the lowest pool[].priority */
	P53_POLICY_WEIGHTED,            /* one healthy target by weight, per client /24 or /56 */
	P53_POLICY_STICKY,              /* one healthy target per client /24 or /56, weighted rendezvous hashing */
	P53_POLICY_ASN,                 /* geo: rules with asn:, over the ASN database (steering.asn_db) */
};

/* What a record answers when every target is down (records[].all_down). */
enum p53_steer_all_down { P53_ALL_DOWN_ALL = 0, P53_ALL_DOWN_FALLBACK, P53_ALL_DOWN_POOL };

struct p53_steer_target {
	char *name;                     /* pool[].name: for logs and `pop53ctl target` */
	char *address;                  /* pool[].address, as written (A, AAAA) */
	char *target;                   /* pool[].target, as written (CNAME) */
	uint8_t *tname;                 /* its canonical wire form (tname_len bytes), malloc'd;
					   NULL for an address */
	uint8_t tname_len;
	uint8_t family;                 /* 4 or 6 */
	uint8_t addr[16];
	char *lat, *lon;                /* pool[].lat/.lon as written; NULL: no position */
	double latitude, longitude;
	bool has_pos;
	char *pop;                      /* pool[].pop: the PoP label (an IATA code) */
	unsigned int weight;            /* pool[].weight, default 1; 0 keeps it out of answers */
	unsigned int priority;          /* pool[].priority, default its position (1, 2, ...) */
	char *check;                    /* pool[].check as a command (sh -c, exit 0 = healthy), or
					   check.command; NULL: no command */
	struct p53_probe_conf probe;    /* pool[].check as a mapping; probe.set false: none */
	unsigned int check_interval_ms; /* default 1000 (check.interval wins when given) */
	unsigned int check_timeout_ms;  /* default 1000 (check.timeout) */
	unsigned int rise, fall;        /* default 2 and 2 (check.rise, check.fall) */
	bool backup;                    /* from records[].fallback_pool: answered only when every
					   target of records[].pool is down (all_down: pool) */
	int line;
};

/* One address of records[].fallback. */
struct p53_steer_addr {
	uint8_t family;                 /* 4 or 6 */
	uint8_t addr[16];
};

/* One rule of records[].geo: exactly one of its keys is set. The geo policy tries its rules
 * by how specific they are: city, subdivision, country, continent; the asn policy its asn. */
struct p53_steer_geo_rule {
	char *country;                  /* ISO 3166-1 alpha-2 code, or NULL */
	char *continent;                /* continent code, or NULL */
	char *subdivision;              /* ISO 3166-2 code ("US-CA"), or NULL */
	unsigned int city;              /* GeoNames id (city.geoname_id), 0: none */
	unsigned int asn;               /* autonomous system number, 0: none */
	char *labels[P53_STEER_MAX_LABELS];
	int n_labels;
	int line;
};

struct p53_steer_record {
	char *owner;                    /* records[].owner as written */
	uint8_t *lname;                 /* canonical wire form (lname_len bytes), malloc'd */
	uint8_t lname_len;
	uint16_t type;                  /* 1 (A), 28 (AAAA) or 5 (CNAME) */
	int type_idx;                   /* records[].type: index into {A, AAAA, CNAME} */
	int policy[4];                  /* records[].policy, in order */
	int n_policy;
	unsigned int ttl;               /* records[].ttl, default 300 */
	/* The lists below are allocated to the length the config gives (a record with two
	 * targets holds two), so memory follows the config, not the limits: tens of thousands
	 * of steered names are loaded as one. */
	struct p53_steer_target *pool;  /* records[].pool, then records[].fallback_pool (backup
					   set), in the order the keys were written */
	int n_pool;                     /* both lists: at most P53_STEER_MAX_POOL */
	int n_backup;                   /* of them, from fallback_pool */
	struct p53_steer_geo_rule *geo; /* records[].geo: at most P53_STEER_MAX_GEO */
	int n_geo;
	unsigned int nearest;           /* records[].nearest.count, default 2 */
	bool hybrid;                    /* records[].nearest.hybrid, default true */
	unsigned int ratio_pct;         /* records[].nearest.ratio_pct, default 200 */
	unsigned int miles;             /* records[].nearest.miles, default 1000 */
	unsigned int ttl_single;        /* records[].nearest.ttl_single, default 120 */
	unsigned int ttl_multi;         /* records[].nearest.ttl_multi, default 3600 */
	int all_down;                   /* records[].all_down: enum p53_steer_all_down, default all */
	struct p53_steer_addr *fallback; /* records[].fallback: at most P53_STEER_MAX_FALLBACK */
	int n_fallback;
	int fallback_line;
	int line;
};

struct p53_steer_conf {
	char *map;                      /* steering.map: JSON subnet-to-labels map, or NULL */
	char *geoip;                    /* steering.geoip: MaxMind DB (City or Country), or NULL */
	char *asn_db;                   /* steering.asn_db: MaxMind ASN DB, or NULL */
	struct p53_steer_record *records;
	int n_records;
	int line;                       /* of the section, for messages */
	uint64_t layout;                /* names this list of records (owners and types in order):
					   the image's node indices into the steering table hold
					   for a table of the same layout (dataplane/steer.h
					   p53_steer_node). p53_steer_conf_layout() sets it */
};

/**
 * Give `s` its layout: `old`'s when both list the same owners and types in the same order
 * (a reload that left the records as they were keeps the running image's indices valid),
 * else one never given before. `old` may be NULL. Control thread.
 */
void p53_steer_conf_layout(struct p53_steer_conf *s, const struct p53_steer_conf *old);

/**
 * Link the records of one owner: prev[i] is the index of the record before record i (in
 * config order) with the same owner, -1 when i is its owner's first. Sorts an index of the
 * records by owner: n log n, not a scan of the list per record (a map of tens of thousands
 * of steered names must load in well under a second). -1 when out of memory.
 */
int p53_steer_conf_owner_links(const struct p53_steer_conf *s, int *prev);

/** Table handler for the `steering:` row of the top-level table. */
int p53_steer_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base);

void p53_steer_conf_free(struct p53_steer_conf *s);

#endif /* P53_STEER_CONF_H */
