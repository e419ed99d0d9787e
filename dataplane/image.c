/* Zone image read side; see image.h. */
#include <errno.h>
#include <string.h>

#include "dataplane/dnssec.h"
#include "dataplane/image.h"

static int in_bounds(uint64_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

int p53_image_check(const void *img, size_t len)
{
	const struct p53_image_hdr *h = img;

	if (len < sizeof(*h) || h->magic != P53_IMAGE_MAGIC || h->version != P53_IMAGE_VERSION ||
	    h->size != len)
		return -EINVAL;
	if (((uint64_t)h->hash_mask + 1) & h->hash_mask)
		return -EINVAL;
	if (!in_bounds(len, h->zones_off, (uint64_t)h->n_zones * sizeof(struct p53_image_zone)) ||
	    !in_bounds(len, h->nodes_off, (uint64_t)h->n_nodes * sizeof(struct p53_image_node)) ||
	    !in_bounds(len, h->rrsets_off, (uint64_t)h->n_rrsets * sizeof(struct p53_image_rrset)) ||
	    !in_bounds(len, h->slots_off, ((uint64_t)h->hash_mask + 1) * sizeof(uint64_t)) ||
	    !in_bounds(len, h->names_off, 0) || !in_bounds(len, h->rdata_off, 0) ||
	    !in_bounds(len, h->adds_off, 0))
		return -EINVAL;
	return p53_dnssec_image_check(img, len);
}

uint32_t p53_image_find(const void *img, const uint8_t *name, size_t len, uint32_t hash)
{
	const struct p53_image_hdr *h = img;
	const uint64_t *slots = p53_image_slots(img);
	uint32_t i = hash & h->hash_mask;

	for (;;) {
		uint64_t s = slots[i];
		if (s == 0)
			return P53_NONE;
		if ((uint32_t)(s >> 32) == hash) {
			uint32_t n = (uint32_t)s - 1;
			const struct p53_image_node *node = p53_image_node(img, n);
			if (node->name_len == len &&
			    memcmp(p53_image_name(img, node->name_off), name, len) == 0)
				return n;
		}
		i = (i + 1) & h->hash_mask;
	}
}

uint32_t p53_image_node_rrset(const void *img, const struct p53_image_node *node, uint16_t type)
{
	for (uint32_t i = 0; i < node->n_rrsets; i++) {
		const struct p53_image_rrset *rs = p53_image_rrset(img, node->rrsets + i);
		if (rs->type == type)
			return node->rrsets + i;
		if (rs->type > type)
			break;
	}
	return P53_NONE;
}
