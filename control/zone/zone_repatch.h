/*
 * One zone's whole new content (a reloaded zone file, an AXFR of a zone already served)
 * patched into the running image instead of every zone compiled again: the zone is compiled
 * alone (every check of the full compile, its errors "file:line: reason"), its records are
 * read back out of that small image and out of the running one (the same reader, so the same
 * form), the two are compared (sorted, record by record) into one IXFR step, and
 * p53_image_patch() applies that step with the new content as its result. Whatever the patch
 * declines (steered records other than those served, a change of the zone's DNSSEC state,
 * the patch's own declines) is spliced instead: the small image replaces the zone's nodes in
 * a copy of the running image (control/zone/image_splice.h); what the splice declines (the
 * zone nested with another served zone) goes to the full compile as before.
 * Control thread only; allocates with malloc.
 */
#ifndef P53_ZONE_REPATCH_H
#define P53_ZONE_REPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/xfr/rrs.h"
#include "control/zone/image_build.h"

/**
 * The difference between two versions of a zone as one IXFR step (RFC 1995 §4): its `del`
 * starts with old's SOA, then the records of old that new does not have; its `add` starts
 * with new's SOA, then the records of new that old does not have. Records are compared
 * byte for byte (owner, type, class, TTL, RDATA): give both in one form, as
 * p53_image_zones_rrs() reads them (owners lower case; a TTL change is a deletion and an
 * addition). Neither input is changed; each is sorted through an index (O(n log n)).
 *
 * @param out     emptied, then one step, or no step when the two are the same record for
 *                record
 * @return the number of records that differ besides the SOAs (0: same content), or -1 with
 *         err set (no SOA in one of them, malformed buffer, out of memory).
 */
long p53_rrs_diff(const struct p53_rrs *old, const struct p53_rrs *new, struct p53_ixfr *out,
		  char *err, size_t errlen);

/* What p53_zone_repatch() did. */
enum p53_repatch {
	P53_REPATCH_BAD = -1,           /* the new content does not compile: err, nothing else */
	P53_REPATCH_PATCHED = 0,        /* *img is the running image with the zone patched */
	P53_REPATCH_SAME = 1,           /* the content is what the image serves: no image */
	P53_REPATCH_DECLINED = 2,       /* compile in full: why */
	P53_REPATCH_SPLICED = 3,        /* the patch declined (why says why): *img is the
					   running image with the zone compiled alone spliced
					   in (control/zone/image_splice.h) */
};

/**
 * Patch zone `src` (one source, its steered records attached: p53_steer_extras_attach) of
 * the running image `cur` with its whole new content.
 *
 * @param same_too  when the content equals what is served: still make an image (the apex
 *                  compiled again, the rest copied: the same answers), as an AXFR wants
 *                  for its publish; else return P53_REPATCH_SAME
 * @param spare     as p53_image_patch()'s (taken in every case)
 * @param img,len   the new image (malloc'd) on P53_REPATCH_PATCHED
 * @param files     when not NULL, set on P53_REPATCH_PATCHED and _SAME to the files the
 *                  zone's compile read (p53_image_files_free)
 * @param stats     when not NULL: [0] records deleted, [1] added (SOAs included)
 */
enum p53_repatch p53_zone_repatch(const void *cur, const struct p53_zone_src *src, bool same_too,
				  void *spare, void **img, size_t *len, uint64_t stats[2],
				  char *why, size_t whylen, char *err, size_t errlen,
				  p53_warn_fn warn, void *warn_arg, char ***files, size_t *n_files);

/**
 * Zone `src` compiled alone (every check of the full compile, its errors) and spliced into
 * the running image `cur` (control/zone/image_splice.h), without a patch: for a change the
 * caller knows the patch declined (a secondary zone's IXFR, control/xfr/update.c), or a
 * zone the image serves without data (its first transfer). A zone of more than 65536 names
 * that is most of the image is not compiled alone (declined, as for the patch). Returns
 * P53_REPATCH_SPLICED (*img, *len), _BAD (err) or _DECLINED (why). `spare` is taken in every
 * case.
 */
enum p53_repatch p53_zone_splice(const void *cur, const struct p53_zone_src *src, void *spare,
				 void **img, size_t *len, char *why, size_t whylen, char *err,
				 size_t errlen, p53_warn_fn warn, void *warn_arg);

#endif /* P53_ZONE_REPATCH_H */
