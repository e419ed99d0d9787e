/*
 * IXFR applied to the compiled image: a new image that is the running one with one zone's
 * differences patched in, in O(diff) work plus one copy of the image, instead of compiling
 * every zone again (control/zone/image_build.c). Used by control/xfr/update.c for a DIFF;
 * whenever a change could reach beyond the names it touches, it declines with the reason and
 * the caller splices the zone compiled alone (control/zone/image_splice.h) or compiles in
 * full. Control thread only; allocates with malloc.
 *
 * What it patches (docs/ARCHITECTURE.md, "IXFR: patching the image"): RRsets of any type but
 * DNAME, DS and the DNSSEC types (and SOA but at the apex) added, changed or removed at
 * names that are not DNAME owners or below one (at an unsigned zone's steered owner too, its
 * steered RRsets and steer index kept): A, AAAA, TXT, CNAME (the node's
 * flag follows), MX, SRV, SVCB, HTTPS (their additional lists made again), NS (a cut's CUT
 * flag, the GLUE flag and occluder of the names below it, its list), ...; new names at any
 * depth (new empty non-terminals above them), below cuts (glue), new wildcards (their
 * parent's link follows) and names whose last record goes (they, and the empty
 * non-terminals left with nothing below them, leave the name index). The additional lists
 * of other RRsets follow a name losing or gaining addresses. That is an unsigned zone's; a
 * signed one's cuts, glue and wildcards decline (below).
 *
 * A signed zone (what a signing primary's IXFR mostly is): records of those types changed,
 * added or removed at names that stay and keep their set of types, with their RRSIGs; any
 * RRset's RRSIGs replaced (NSEC and NSEC3 ones, at cuts, CNAME and DNAME owners and
 * wildcards too: their records must stay); the apex's DNSKEY, CDS, CDNSKEY. The NSEC chain,
 * NSEC3 hashes and per-node proofs hold node indices, which stay, and are copied; the zone's
 * earliest RRSIG expiration (sig_expire) is kept right. Unsigned zones of an image that also
 * holds signed ones are patched as above (new nodes get empty proofs).
 *
 * Declined: in a signed zone, NS changed, cuts, glue and wildcards changing more than their
 * RRSIGs, a name added or removed without a chain, a CNAME changed, NSEC/NSEC3/NSEC3PARAM
 * records changed; in any zone, DNAME changes, DS at an unsigned zone's apex (below it DS
 * is data), names below a DNAME, a cut coming or going above a name held below another
 * served zone's apex; at or below another served zone's apex (the parent side of a served
 * child, whose NS set, DS, glue and data are patched) a name new or gone, the delegation
 * added or removed, a name losing its last address while the served zone's copy has some;
 * more than 32 distinct additional-section targets the owner's zone holds
 * below another served zone's apex (each found by a scan of the nodes; fewer are listed as
 * the compiler lists them), and images whose garbage (bytes earlier patches
 * left unreferenced, counted in p53_image_hdr.pad) would pass a quarter of the image
 * and 64 KiB.
 */
#ifndef P53_IMAGE_PATCH_H
#define P53_IMAGE_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "control/xfr/rrs.h"
#include "control/zone/patch_index.h"

struct p53_sign_key;

/* The reason the patch (an IXFR's RRSIG in an unsigned zone) and p53_zone_repatch (a reload
 * whose zone compiles signed) give for an unsigned zone turning signed, with the owner of an
 * RRSIG: the same change, the same words. */
#define P53_PATCH_TURNS_SIGNED "the zone's DNSSEC state changes (unsigned to signed: RRSIG " \
			       "records at %s)"

/*
 * What signs, in the patch, the NSEC pop53 makes for a signed zone's steered owners (the
 * compile's: p53_zone_src.sign_key and its window, which p53_steer_extras_attach() sets):
 * where the chain moves beside a steered owner the patch signs its new NSEC as the compile
 * would. NULL (or key NULL): nothing is signed, such a change declines.
 */
struct p53_patch_sign {
	const struct p53_sign_key *key;
	uint32_t inception, expiration;  /* unix seconds, into the RRSIGs */
};

/**
 * Patch zone `apex` of `img` with `diff`, whose result (the zone's whole new content, what
 * p53_ixfr_apply_inplace() made of the zone read back out of img) is `result`.
 *
 * @param img      the running image (left as it is)
 * @param apex     the zone's canonical apex name, apex_len bytes
 * @param diff     the IXFR steps: only the owners they name are looked at
 * @param result   the zone's records after the diff, or NULL: then the touched owners'
 *                 records are read out of img and the diff applied to them alone (O(diff);
 *                 a diff that does not apply declines, with p53_ixfr_apply_inplace's reason)
 * @param sign     the zone's key for its steered owners' denial, or NULL
 * @param spare    NULL, or a malloc'd buffer (any size, any content) that is taken: the new
 *                 image is written into it when it fits (pages already faulted in cost no
 *                 zeroing), else it is freed (a fresh image gets 1/64 of room from 4 MiB on,
 *                 so that it fits the next patches' images as their spare)
 * @param len      set to the new image's size
 * @param why      on NULL return: why it declined (the caller compiles in full)
 * @return malloc'd image (generation 0: the publish sets it), or NULL.
 */
void *p53_image_patch(const void *img, const uint8_t *apex, size_t apex_len,
		      const struct p53_ixfr *diff, const struct p53_rrs *result,
		      const struct p53_patch_sign *sign, void *spare, size_t *len, char *why,
		      size_t whylen);

/**
 * p53_image_patch() with what is kept about img between IXFRs (control/zone/patch_index.h):
 * the nodes naming a name that gains its first address, and a signed zone's RRSIGs by
 * expiration, read off `ix` instead of every node of the image. ix (not NULL) is used when it
 * describes img (else emptied, and its parts made from img when the patch needs them); on
 * success it describes the new image, whose generation is then ix's token (pass it to
 * p53_patch_index_published() with the generation the publish gives the image); when the
 * patch declines it is emptied.
 */
void *p53_image_patch_indexed(const void *img, const uint8_t *apex, size_t apex_len,
			      const struct p53_ixfr *diff, const struct p53_rrs *result,
			      const struct p53_patch_sign *sign, void *spare,
			      struct p53_patch_index *ix, size_t *len, char *why, size_t whylen);

/**
 * p53_image_patch() that hands the spare back when it declines: *spare is taken (set to
 * NULL) when the patch makes an image; on NULL return it is still the caller's (NULL when
 * the patch used or freed it), for what the caller does instead (image_splice.h).
 */
void *p53_image_patch_spare(const void *img, const uint8_t *apex, size_t apex_len,
			    const struct p53_ixfr *diff, const struct p53_rrs *result,
			    const struct p53_patch_sign *sign, void **spare, size_t *len,
			    char *why, size_t whylen);

/** Steered owners the last p53_image_patch() touched for their NSEC (steer_near: at most
 * one per name of the diff); control thread only, for tests. */
size_t p53_image_patch_steer_near_last(void);

#endif /* P53_IMAGE_PATCH_H */
