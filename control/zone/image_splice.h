/*
 * One zone compiled alone spliced into the running image: what pop53d does when the IXFR
 * patch (control/zone/image_patch.c) declines a zone's change, instead of compiling every
 * zone. The zone's own image J (p53_image_build() of its p53_zone_src: the same steered
 * records, key, flags and checks as the full compile gives it) replaces the zone's nodes in
 * a copy of the running image I: I's nodes of the zone leave the name index and become
 * garbage (as a patched-out block does, counted in p53_image_hdr.pad), J's blocks are
 * appended with its node and RRset indices renumbered, the zone's entry points at J's apex,
 * SOA and DNSSEC facts, J's NSEC chain and NSEC3 hashes take the zone's place in those
 * tables (kept zone by zone, as the compile and the patch keep them), its additional lists
 * are appended. Additional lists across zones (image_build.c adds_make lists another served
 * zone's indexed node with addresses) are made again as the compile makes them: the zone's
 * lists that name other zones' names, other zones' lists that name the zone's. Answers are
 * those of a full compile of every zone's content.
 *
 * Where the zone is nested with another served zone the compile of every zone makes what
 * the zone alone cannot, and the splice declines with the reason (the caller compiles in
 * full):
 *   - a served zone at or below the zone's apex, or the zone below another one's apex
 *     (the parent side: the parent's names there are out of the name index, the child's
 *     parent_side names one of them; image_build.c nodes_link, zones_finish);
 *   - a steering layout other than the image's, where the zone holds steered owners (their
 *     node's index counts in the image's layout);
 *   - garbage past p53_image_too_much_garbage(), or the 4 GiB format limit.
 * Control thread only; allocates with malloc.
 */
#ifndef P53_IMAGE_SPLICE_H
#define P53_IMAGE_SPLICE_H

#include <stddef.h>

/**
 * Splice the one zone of image `one` into `img` in place of the zone of the same apex.
 *
 * @param img    the running image (left as it is); it must serve the zone
 * @param one    an image of exactly one zone (p53_image_build of that zone alone)
 * @param spare  NULL, or a malloc'd buffer taken as p53_image_patch()'s (image_edit.h)
 * @param len    set to the new image's size
 * @param why    on NULL return: why it declined
 * @return malloc'd image (generation 0: the publish sets it), or NULL.
 */
void *p53_image_splice(const void *img, const void *one, void *spare, size_t *len, char *why,
		       size_t whylen);

#endif /* P53_IMAGE_SPLICE_H */
