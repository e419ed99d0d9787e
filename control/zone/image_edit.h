/*
 * What the image's editors share: the IXFR patch (control/zone/image_patch.c) and the splice
 * of one zone compiled alone (control/zone/image_splice.c) both make a new image from the
 * running one by copying its sections, appending blocks and editing its name index. Their
 * common steps live here, so that both keep the image's rules (dataplane/image.h) the same
 * way. Control thread only; allocates with malloc.
 */
#ifndef P53_IMAGE_EDIT_H
#define P53_IMAGE_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/image.h"

/** Add node n of image ni (nodes[n] already set) to the name index `slots` (mask + 1 slots)
 * under `hash`: the first empty slot of its probe run. */
void p53_image_index_add(const void *ni, uint64_t *slots, uint32_t mask, uint32_t hash, uint32_t n);

/** Remove node n's slot (nodes[n] of ni names its block) from the name index; later slots of
 * its probe run shift back, as a linear probe needs. No slot: nothing. */
void p53_image_index_remove(const void *ni, uint64_t *slots, uint32_t mask, uint32_t hash,
			    uint32_t n);

/** The name index of img copied into `slots` of mask + 1 slots (zeroed here): as it is when
 * the size is the same, else each slot placed again by its hash (the slot holds it). */
void p53_image_index_copy(const void *img, uint64_t *slots, uint32_t mask);

/**
 * Garbage (bytes earlier edits left unreferenced, p53_image_hdr.pad) that sends the
 * next edit to a full compile (which leaves none): past a quarter of the image, and past
 * 64 KiB (a small image would else be compiled every few edits, for memory that does not
 * matter).
 */
bool p53_image_too_much_garbage(uint64_t garbage, uint64_t size);

/**
 * A zone's room (dataplane/image.h, p53_image_zone.node_room) that stops being its room: the
 * zone's ranges moved (a splice, the patch's zone_to_end) and `old` is its entry as it was.
 * Room entries are free (0) and the checker allows no free entry outside a zone's room, so
 * they become garbage: each nodes[] entry of the old room names the zone's old first node,
 * each rrsets[] entry its old first RRset (a block and a header that are garbage now, never
 * read through a zone). A zone with room in rrsets[] has an RRset (image_build.c rooms()).
 * `img` is the new image, its tables holding the old ranges where they were. Returns the
 * bytes that became garbage (the entries and their proofs), for p53_image_hdr.pad.
 */
uint64_t p53_image_room_retire(void *img, const struct p53_image_zone *old);

/** The bytes zone zn's room takes in image h's tables (nodes[], rrsets[], proofs[]): what
 * p53_image_room_retire() makes garbage. */
uint64_t p53_image_room_bytes(const struct p53_image_hdr *h, const struct p53_image_zone *zn);

/**
 * Memory for a new image of `size` bytes: *spare (taken, *spare set to NULL) when it is big
 * enough and aligned (its pages are there already: no fresh pages for the kernel to fault
 * in and zero; never realloc'd: a moved mapping loses its huge pages), else *spare is freed
 * and fresh memory is taken with 1/64 of room from P53_BIGMEM_MIN on, so that the next
 * edits' images (each a little bigger) fit in it when it comes back as the spare.
 * Returns NULL when out of memory.
 */
void *p53_image_out(size_t size, void **spare);

static inline size_t p53_align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

#endif /* P53_IMAGE_EDIT_H */
