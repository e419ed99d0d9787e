/*
 * The steering compiler: config + location sources + target health -> the table the workers
 * read (dataplane/steer.h).
 *
 * Sources are loaded once per config load or reload, not once per policy: the subnet map
 * (JSON, jansson) and the MaxMind DBs (GeoIP and ASN; libmaxminddb, whose search tree is
 * walked once with MMDB_read_node, reading each distinct data record once) each become per-family lists of disjoint CIDR blocks with a location.
 * Decisions are then compiled per record and location from the targets that are up; a health
 * change recompiles them from the loaded sources without reading a file.
 *
 * Control thread, start-up and pop53ctl (config check); allocates with malloc; no DPDK.
 */
#ifndef P53_STEER_BUILD_H
#define P53_STEER_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/dnssec/sign.h"
#include "control/steer/steer_conf.h"
#include "dataplane/steer.h"

/* What a location is: a map entry's labels, or a GeoIP or ASN record's data. */
struct p53_steer_loc {
	char country[4];                /* ISO 3166-1 alpha-2, "" when unknown */
	char continent[4];
	char subdivision[2][4];         /* subdivisions[0..1].iso_code (without the country), largest first */
	uint32_t city_id;               /* city.geoname_id, 0 when unknown */
	uint32_t asn;                   /* autonomous_system_number (ASN DB), 0 when unknown */
	char *city;                     /* city.names.en, or NULL (for explain) */
	char *org;                      /* autonomous_system_organization, or NULL (for explain) */
	bool has_pos;
	double lat, lon;
	char *labels[P53_STEER_MAX_LABELS]; /* map entries: PoP labels, preferred first */
	int n_labels;
};

struct p53_steer_source {
	struct p53_steer_b4 *b4;
	uint32_t n4, cap4;
	struct p53_steer_b6 *b6;
	uint32_t n6, cap6;
	struct p53_steer_loc *locs;
	uint32_t n_locs, cap_locs;
	uint32_t n_nets;                /* networks read: the map's CIDRs, the MMDB's networks
					   with data (for `pop53ctl steering reload`) */
	uint64_t build_epoch;           /* MMDB: metadata.build_epoch */
	char kind[48];                  /* MMDB: metadata.database_type */
};

struct p53_steer_sources {
	struct p53_steer_source src[P53_STEER_SRCS];
};

/**
 * Load the sources steering.map, steering.geoip and steering.asn_db name (each may be absent).
 * @return 0, or -1 with err = "file[:line]: reason"; *s holds nothing to free then.
 */
int p53_steer_sources_load(const struct p53_steer_conf *conf, struct p53_steer_sources *s,
			   char *err, size_t errlen);

void p53_steer_sources_free(struct p53_steer_sources *s);

/*
 * A prefix set compiled into disjoint CIDR blocks covering the whole space (steer.h): insert
 * prefixes (the first insert of a prefix wins), then emit. Exposed for the unit tests.
 */
struct p53_steer_trie {
	uint32_t (*node)[3];            /* child 0, child 1, location */
	uint32_t n, cap;
	unsigned int bits;              /* 32 or 128 */
};

int p53_steer_trie_init(struct p53_steer_trie *t, unsigned int bits);
int p53_steer_trie_add(struct p53_steer_trie *t, const uint8_t *addr, unsigned int len, uint32_t loc);
int p53_steer_trie_emit(const struct p53_steer_trie *t, struct p53_steer_source *out);
void p53_steer_trie_free(struct p53_steer_trie *t);

/** Great-circle distance in statute miles (haversine, mean Earth radius 3958.8 mi). */
double p53_steer_miles(double lat1, double lon1, double lat2, double lon2);

/**
 * Order the targets of a record that are up and have a position by distance from a point.
 * @param up    per target of r->pool: healthy
 * @param out   target indices, nearest first
 * @param dist  their distances in miles (may be NULL)
 * @return how many were written.
 */
int p53_steer_by_distance(const struct p53_steer_record *r, const bool *up, double lat, double lon,
			  uint8_t *out, double *dist);

/** The table source a policy's step reads (P53_STEER_SRC_*). */
int p53_steer_src_of(int policy);

/**
 * The decision of a policy that needs no location source, for one client bucket
 * (p53_steer_bucket; priority ignores it): priority, the up targets with the lowest
 * pool[].priority; weighted, the one target whose share of the weight line holds the bucket;
 * sticky, the up target with the highest weighted score of (bucket, name) (weighted
 * rendezvous hashing: w / -ln(hash in (0,1)); the buckets split by weight).
 * Targets with weight 0 are never chosen.
 * @return how many target indices were written to t (0: every target is down).
 */
int p53_steer_decide_client(const struct p53_steer_record *r, const bool *up, int policy,
			    uint32_t bucket, uint8_t *t);

/**
 * The targets a record's policies choose from: those of pool[] that are up; when none is (and
 * all_down is pool), those of the fallback pool that are up.
 * @param up   per target of r->pool: healthy
 * @param eff  per target: taking part
 */
void p53_steer_effective_up(const struct p53_steer_record *r, const bool *up, bool *eff);

/**
 * Compile the table.
 * @param up  per target, healthy: the records in config order, each record's pool in order
 *            (the sum of the records' n_pool entries, pop53d's health checks in one array);
 *            NULL: every target is up
 * @return malloc'd table (p53_steer_check passes), or NULL with err set.
 */
void *p53_steer_build(const struct p53_steer_conf *conf, const struct p53_steer_sources *s,
		      const bool *up, size_t *len, char *err, size_t errlen);

/**
 * The index over a family's blocks (steer.h): IPv4, P53_STEER_IDX entries into `idx`, for each
 * k the last block starting at or below address k << 16; IPv6, P53_STEER_IDX6 entries, for
 * each k the last block starting at or below 2000:: + k << 109 (k = P53_STEER_IDX: 4000::). The
 * blocks are sorted by start, as the compiler makes them. One pass; no allocation.
 */
void p53_steer_index4(const struct p53_steer_b4 *b, uint32_t n, uint32_t *idx);
void p53_steer_index6(const struct p53_steer_b6 *b, uint32_t n, uint32_t *idx);

/** A family's IPv6 blocks as the table holds them (steer.h): the high halves of the starts
 * into `key`, the rest into `aux`, n entries each. */
void p53_steer_emit6(const struct p53_steer_b6 *b, uint32_t n, uint64_t *key, struct p53_steer_b6x *aux);

/*
 * The merged map+GeoIP blocks of one family (steer.h, struct p53_steer_mrg), from the map's
 * (m) and the GeoIP's (g) blocks of that family, both non-empty and starting at 0: a block at
 * every start of either, naming the block of each holding it and carrying its loc_len. Out
 * arrays NULL: the count only. @return the number of merged blocks.
 */
uint32_t p53_steer_merge4(const struct p53_steer_source *m, const struct p53_steer_source *g, uint32_t *start,
			  struct p53_steer_mx *x);
uint32_t p53_steer_merge6(const struct p53_steer_source *m, const struct p53_steer_source *g, uint64_t *key,
			  struct p53_steer_m6x *x);
/* The index over merged blocks, as p53_steer_index4 / p53_steer_index6 over a source's. */
void p53_steer_mindex4(const uint32_t *start, uint32_t n, uint32_t *idx);
void p53_steer_mindex6(const uint64_t *key, const struct p53_steer_m6x *x, uint32_t n, uint32_t *idx);

/* Variants verified per build with the DNSKEY alone (spread evenly over the variants). */
#define P53_STEER_VERIFY_SAMPLE 16

/*
 * Signing the variants of records in signed zones (dnssec.signing_keys): each variant gets
 * one RRSIG by the key whose zone holds the record (the longest key owner that is the
 * record's owner or above it); records no key covers stay unsigned.
 */
struct p53_steer_signing {
	const struct p53_sign_key *keys;
	int n_keys;
	uint32_t inception, expiration; /* unix seconds, into every RRSIG */
	uint32_t refresh_s;             /* re-sign when this much is left (the publisher's timer) */
	/* set by the build */
	uint32_t n_signed;              /* variants signed */
	uint32_t n_verified;            /* of them, verified (P53_STEER_VERIFY_SAMPLE at most) */
	uint64_t sign_ns;               /* time spent signing (CLOCK_MONOTONIC) */
};

/**
 * p53_steer_build() that also signs the variants (sg may be NULL: unsigned). A sample of the
 * signatures is verified with the key's DNSKEY; one that does not validate fails the build.
 * The table's sig_expire is sg->expiration when any variant is signed.
 */
void *p53_steer_build_signed(const struct p53_steer_conf *conf, const struct p53_steer_sources *s,
			     const bool *up, struct p53_steer_signing *sg, size_t *len,
			     char *err, size_t errlen);

#endif /* P53_STEER_BUILD_H */
