/*
 * DNSSEC on the control side: the `dnssec:` config section and the signature-expiry facts of
 * the served zones, for operators (pop53ctl zone list, the compile warnings) and for the
 * health zone check.
 *
 * pop53 serves zones signed elsewhere (dnssec-signzone, ldns-signzone, Knot) and signs only
 * steering variants, with dnssec.signing_keys (sign.h, loaded here with the section); the compiler
 * (control/zone/dnssec_build.c) records per zone whether it is signed and its earliest RRSIG
 * expiration (struct p53_image_zone: dnssec, sig_expire). A zone whose signatures run out
 * makes validating resolvers fail as surely as a dead server, so:
 *
 * Health seam: the health zone check (control/health/, its own issue) calls
 * p53_dnssec_zone_check() for each zone of the running image with now and
 * cfg->dnssec.margin_s, and fails the zone (so the node withdraws) on -1, reporting `why`.
 * Until then the same check runs after every compile and logs a warning.
 *
 * Control thread, start-up, or pop53ctl; no allocation beyond the config's own.
 */
#ifndef P53_CONTROL_DNSSEC_H
#define P53_CONTROL_DNSSEC_H

#include <stddef.h>
#include <stdint.h>

#include "control/conf/schema.h"
#include "control/zone/image_build.h"

#include "control/dnssec/sign.h"

#define P53_DNSSEC_MARGIN_DEFAULT   (3u * 86400u)  /* three days: a weekend without the signer */
#define P53_DNSSEC_VALIDITY_DEFAULT (14u * 86400u) /* RRSIGs pop53 makes: two weeks... */
#define P53_DNSSEC_REFRESH_DEFAULT  (7u * 86400u)  /* ...re-made when a week is left */

/* The `dnssec:` section (docs/CONFIG.md). */
struct p53_dnssec_conf {
	unsigned int margin_s;  /* dnssec.signature_margin: seconds before the earliest RRSIG
				   expiration at which a zone counts as failing */
	struct p53_sign_key keys[P53_SIGN_MAX_KEYS]; /* dnssec.signing_keys, loaded */
	int n_keys;
	unsigned int validity_s; /* dnssec.signature_validity: expiration - now of our RRSIGs */
	unsigned int refresh_s;  /* dnssec.signature_refresh: re-sign when less than this is left */
	int line;
};

/**
 * Handler for the `dnssec:` row of the top-level table: the keys, then the cross checks
 * (signature_refresh above signature_margin, so re-signing comes before the health check
 * fails; signature_validity above signature_refresh).
 */
int p53_dnssec_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			    const char *where, void *base);

/** Set the defaults (before the section is read). */
void p53_dnssec_conf_init(struct p53_dnssec_conf *d);

void p53_dnssec_conf_free(struct p53_dnssec_conf *d);

/* What a zone's signatures say at a given time. */
struct p53_dnssec_state {
	int is_signed;          /* the zone carries RRSIGs */
	const char *denial;     /* "nsec", "nsec3", or "none" */
	uint64_t expire;        /* earliest RRSIG expiration, seconds since the epoch */
	int64_t left;           /* expire - now, negative once expired */
};

/** Facts of zone `zone` of an image (which passed p53_image_check()) at time `now`. */
void p53_dnssec_zone_state(const void *img, uint32_t zone, uint64_t now, struct p53_dnssec_state *st);

/**
 * The health check of one zone: a signed zone fails when its earliest RRSIG expires within
 * `margin` seconds of `now` (or has expired). Unsigned zones pass.
 * @param why  set to "zone 'NAME': signatures expire in N s (margin M s)" on failure
 * @return 0 (fit) or -1 (not fit).
 */
int p53_dnssec_zone_check(const void *img, uint32_t zone, uint64_t now, unsigned int margin,
			  char *why, size_t cap);

/** Run p53_dnssec_zone_check() over every zone, sending each failure to `warn`. */
void p53_dnssec_warn_expiring(const void *img, uint64_t now, unsigned int margin, p53_warn_fn warn,
			      void *warn_arg);

#endif /* P53_CONTROL_DNSSEC_H */
