/*
 * Catalog zones, consumer side (RFC 9432): the members a catalog zone lists, and bringing the
 * transfer state in line with them (members added get a state and are transferred, members
 * gone are dropped at the next apply). Members inherit the catalog's primaries, TSIG keys,
 * NOTIFY ACL, ixfr and on_expire (its zones[] entry). Control thread only.
 */
#ifndef P53_XFR_CATALOG_H
#define P53_XFR_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/xfr/rrs.h"
#include "control/zone/image_build.h"

struct p53_catalog_member {
	char name[1024];                /* member zone, text, lower case, final dot */
	uint8_t wire[256];              /* canonical wire name */
	uint8_t wire_len;
	char id[64];                    /* the unique-id label (RFC 9432 §4.1) */
};

/**
 * The members of a catalog zone's records: version.<catalog> TXT "2" is required (§4.2.1:
 * other versions are not processed); each <unique-id>.zones.<catalog> with exactly one PTR is
 * a member (§4.1); properties below a member (group, coo) are ignored; a member name listed
 * twice keeps its first unique ID in canonical order. Problems with single members are
 * warnings, not errors.
 *
 * @param out  malloc'd array (free()), *n entries, sorted by name
 * @return 0, or -1 with err (no or unsupported version, out of memory).
 */
int p53_catalog_parse(const struct p53_rrs *cat, const uint8_t *apex, size_t apex_len,
		      struct p53_catalog_member **out, size_t *n, char *err, size_t errlen,
		      p53_warn_fn warn, void *warn_arg);

struct p53_xfr;
struct p53_xfr_zone;
struct p53_config;

/**
 * Bring the catalog's members in the state in line with `m`: new ones added (refresh due now),
 * ones no longer listed marked removed, a member whose unique ID changed gets a fresh AXFR
 * (§5.6, zone reset). A name that is a zone of cfg or another catalog's member is skipped
 * (§5.4), with a warning unless quiet (a reload reading the same list again).
 * @return members added + removed.
 */
size_t p53_catalog_reconcile(struct p53_xfr *x, const struct p53_config *cfg,
			     struct p53_xfr_zone *cat, const struct p53_catalog_member *m, size_t n,
			     bool quiet);

#endif /* P53_XFR_CATALOG_H */
