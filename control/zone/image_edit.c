/*
 * The image editors' shared steps (control/zone/image_edit.h).
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control/bigmem.h"
#include "control/zone/image_edit.h"
#include "dataplane/image.h"

void p53_image_index_remove(const void *ni, uint64_t *slots, uint32_t mask, uint32_t hash,
			    uint32_t n)
{
	uint32_t i = hash & mask, off = p53_image_node_off(ni, n);

	while (slots[i] != 0 && slots[i] != p53_image_slot(hash, off))
		i = (i + 1) & mask;
	if (slots[i] == 0)
		return;
	for (;;) {
		uint32_t j = i;
		slots[i] = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (slots[j] == 0)
				return;
			uint32_t k = (uint32_t)(slots[j] >> 32) & mask;
			/* Stays when its home k lies cyclically in (i, j]. */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		slots[i] = slots[j];
		i = j;
	}
}

void p53_image_index_add(const void *ni, uint64_t *slots, uint32_t mask, uint32_t hash, uint32_t n)
{
	uint32_t i = hash & mask;

	while (slots[i] != 0)
		i = (i + 1) & mask;
	slots[i] = p53_image_slot(hash, p53_image_node_off(ni, n));
}

void p53_image_index_copy(const void *img, uint64_t *slots, uint32_t mask)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	const uint64_t *os = p53_image_slots(img);

	if (mask == h->hash_mask) {
		memcpy(slots, os, ((size_t)mask + 1) * sizeof(*slots));
		return;
	}
	memset(slots, 0, ((size_t)mask + 1) * sizeof(*slots));
	for (uint64_t i = 0; i <= h->hash_mask; i++) {
		if (os[i] == 0)
			continue;
		uint32_t k = (uint32_t)(os[i] >> 32) & mask;
		while (slots[k] != 0)
			k = (k + 1) & mask;
		slots[k] = os[i];
	}
}

bool p53_image_too_much_garbage(uint64_t garbage, uint64_t size)
{
	return garbage > size / 4 && garbage > 64 * 1024;
}

uint64_t p53_image_room_retire(void *img, const struct p53_image_zone *old)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	uint32_t *noff = (uint32_t *)((uint8_t *)img + h->nodes_off);
	uint32_t *roff = (uint32_t *)((uint8_t *)img + h->rrsets_off);

	for (uint32_t k = 0; k < old->node_room; k++)
		noff[old->node_base + old->n_nodes + k] = noff[old->node_base];
	for (uint32_t k = 0; k < old->rrset_room; k++)
		roff[old->rrset_base + old->n_rrsets + k] = roff[old->rrset_base];
	return p53_image_room_bytes(h, old);
}

uint64_t p53_image_room_bytes(const struct p53_image_hdr *h, const struct p53_image_zone *zn)
{
	return ((uint64_t)zn->node_room + zn->rrset_room) * sizeof(uint32_t) +
	       (h->proofs_off != 0 ? (uint64_t)zn->node_room * sizeof(struct p53_image_proof) : 0);
}

void *p53_image_out(size_t size, void **spare)
{
	void *s = *spare;

	*spare = NULL;
	if (s != NULL && malloc_usable_size(s) >= size &&
	    ((uintptr_t)s & (P53_IMAGE_ALIGN - 1)) == 0)
		return s;
	free(s);
	size_t room = size >= P53_BIGMEM_MIN ? size / 64 : 0;
	return p53_bigmem_image(size + room); /* aligned as the compiler's (bigmem.h) */
}
