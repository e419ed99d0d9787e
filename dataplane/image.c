/* Zone image read side; see image.h. */
#include <errno.h>
#include <string.h>

#include "dataplane/dnsmsg.h"
#include "dataplane/dnssec.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

static int in_bounds(uint64_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

/* A canonical name of exactly `len` bytes at names[off], inside names[0, names_len). */
static int name_ok(const uint8_t *names, uint64_t names_len, uint32_t off, uint32_t len,
		   uint32_t labels)
{
	if (!in_bounds(names_len, off, len) || len == 0)
		return 0;
	return p53_name_len(names + off, len) == (int)len &&
	       (uint32_t)p53_name_labels(names + off) == labels;
}

#define FAIL(msg) do { if (why != NULL) *why = (msg); return -EINVAL; } while (0)

/* Where the additional lists end: the DNSSEC sections follow them (proofs, when a zone is
 * signed, then the NSEC chain and the NSEC3 hashes); check_layout() keeps this inside. */
static uint64_t adds_end(const struct p53_image_hdr *h)
{
	return h->proofs_off != 0 ? h->proofs_off : h->chain_off;
}

/* The header and where the sections lie: inside the image, aligned, in layout order. */
static int check_layout(const struct p53_image_hdr *h, size_t len, const char **why)
{
	if (len < sizeof(*h) || h->magic != P53_IMAGE_MAGIC)
		FAIL("not a zone image (magic)");
	if (h->version != P53_IMAGE_VERSION)
		FAIL("image format version differs from this build's");
	if (h->size != len)
		FAIL("image size differs from its header");
	if (((uint64_t)h->hash_mask + 1) & h->hash_mask)
		FAIL("name index size is not a power of two");
	if (h->max_labels > P53_NAME_MAXLABELS)
		FAIL("deepest name has more than 127 labels");
	if (!in_bounds(len, h->zones_off, (uint64_t)h->n_zones * sizeof(struct p53_image_zone)) ||
	    !in_bounds(len, h->nodes_off, (uint64_t)h->n_nodes * sizeof(uint32_t)) ||
	    !in_bounds(len, h->rrsets_off, (uint64_t)h->n_rrsets * sizeof(uint32_t)) ||
	    !in_bounds(len, h->slots_off, ((uint64_t)h->hash_mask + 1) * sizeof(uint64_t)))
		FAIL("a section runs past the image");
	/* names, rdata and adds end where the next one starts. */
	if (h->names_off != h->rdata_off)
		FAIL("names lie apart from the nodes' blocks (an older layout)");
	if (h->rdata_off > h->adds_off ||
	    h->adds_off > adds_end(h) || adds_end(h) > len)
		FAIL("names, RDATA and additional lists are out of order");
	if ((h->zones_off | h->nodes_off | h->rrsets_off | h->slots_off | h->rdata_off) % 8 != 0 ||
	    h->adds_off % 4 != 0)
		FAIL("a section is misaligned");
	/* Nodes and headers are read in place: their addresses 4-byte aligned with the image's
	 * (p53_image_node_first() rounds the name's end in memory). */
	if ((uintptr_t)h % 8 != 0)
		FAIL("the image is misaligned in memory");
	return 0;
}

/*
 * Whether `prev` (an image that passed the check) is a prefix of `img` in what an unchanged
 * node or RRset reads beyond its own bytes: the same zone count, no fewer nodes, RRsets or
 * labels, a names-and-RDATA section no shorter, and its additional lists the first of img's.
 * Then a node equal to prev's at its index, over the same name bytes, and an RRset at the
 * same offset with the same header fields and records, pass every check they passed in prev
 * (each bound they were checked against only grew). The section itself is compared there,
 * block by block: a patch rewrites headers' additional lists in place (image_patch.c).
 */
static int prefix_of(const struct p53_image_hdr *h, const struct p53_image_hdr *hp)
{
	const uint8_t *a = (const uint8_t *)h, *b = (const uint8_t *)hp;
	uint64_t rdata = hp->adds_off - hp->rdata_off;
	uint64_t adds = adds_end(hp) - hp->adds_off;

	if (hp->magic != P53_IMAGE_MAGIC || hp->version != P53_IMAGE_VERSION ||
	    hp->n_zones != h->n_zones || hp->n_nodes > h->n_nodes || hp->n_rrsets > h->n_rrsets ||
	    hp->max_labels > h->max_labels || rdata > h->adds_off - h->rdata_off ||
	    adds > adds_end(h) - h->adds_off)
		return 0;
	return memcmp(a + h->adds_off, b + hp->adds_off, adds) == 0;
}

/* Offset of RRset i's header in the names-and-RDATA section (image.h). */
static uint32_t rrset_off(const void *img, uint32_t i)
{
	return ((const uint32_t *)((const uint8_t *)img + p53_image_hdr(img)->rrsets_off))[i];
}

/* Whether RRset i is prev's: at the same offset, the same fields the record walk reads and
 * the same records and signatures (prev's were checked inside prev's section). */
static int rrset_as_prev(const void *img, const void *prev, uint32_t i)
{
	const struct p53_image_rrset *rs = p53_image_rrset(img, i), *ps = p53_image_rrset(prev, i);

	return rrset_off(img, i) == rrset_off(prev, i) && rs->type == ps->type &&
	       rs->count == ps->count && rs->rdata_len == ps->rdata_len && rs->sig_len == ps->sig_len &&
	       memcmp(p53_image_rdata(img, rs), p53_image_rdata(prev, ps),
		      (size_t)rs->rdata_len + rs->sig_len) == 0;
}

/* A node's RRsets lie in its block (image.h, Co-location): the first header after its name
 * rounded up to 4, each next one after the previous one's records and signatures rounded up
 * to 4, and rrsets[] names the same headers. The RRsets were bounded before. */
static int block_ok(const void *img, const struct p53_image_zone *zn,
		    const struct p53_image_node *n)
{
	uint64_t at = p53_image_rrset_at((uint64_t)p53_image_node_name_off(img, n) + n->name_len);
	uint32_t first = zn->rrset_base + n->rrsets;

	for (uint32_t r = 0; r < n->n_rrsets; r++) {
		if (rrset_off(img, first + r) != at)
			return 0;
		at = p53_image_rrset_at(at + p53_image_rrset_span(p53_image_rrset(img, first + r)));
	}
	return 1;
}

/* Each zone's ranges and room after them (image.h, p53_image_zone.node_base, node_room)
 * inside nodes[] and rrsets[], and their byte offsets agreeing: before anything is read
 * through them. */
static int zone_bounds(const struct p53_image_hdr *h, const char **why)
{
	for (uint32_t z = 0; z < h->n_zones; z++) {
		const struct p53_image_zone *zn = p53_image_zone(h, z);
		if (zn->n_nodes == 0 ||
		    (uint64_t)zn->node_base + zn->n_nodes + zn->node_room > h->n_nodes ||
		    (uint64_t)zn->rrset_base + zn->n_rrsets + zn->rrset_room > h->n_rrsets)
			FAIL("a zone's node or RRset range lies outside its table");
		if (zn->nodes_at != h->nodes_off + 4u * zn->node_base ||
		    zn->rrsets_at != h->rrsets_off + 4u * zn->rrset_base)
			FAIL("a zone's ranges' offsets are not where its ranges lie");
	}
	return 0;
}

/* Whether entry i of `table` (nodes[] or rrsets[], n entries) is free: room (image.h). */
static int is_free(const void *img, uint32_t off, uint32_t n, uint32_t i)
{
	return i < n && ((const uint32_t *)((const uint8_t *)img + off))[i] == 0;
}

/* Each zone's room (zone_bounds() held it inside its tables): every entry free, and as many
 * free entries in each table as the zones' room adds up to (n_free_nodes, n_free_rrsets,
 * counted by the caller), so rooms do not overlap and no free entry lies outside a room.
 * No range holds a free entry (zone_ranges() for nodes, block_ok() and the SOA's type for
 * the RRsets read through a range), so room and ranges do not overlap either. */
static int zone_rooms(const void *img, uint64_t n_free_nodes, uint64_t n_free_rrsets,
		      const char **why)
{
	const struct p53_image_hdr *h = img;

	for (uint32_t z = 0; z < h->n_zones; z++) {
		const struct p53_image_zone *zn = p53_image_zone(img, z);
		for (uint32_t k = 0; k < zn->node_room; k++)
			if (!is_free(img, h->nodes_off, h->n_nodes, zn->node_base + zn->n_nodes + k))
				FAIL("a zone's room holds a node");
		for (uint32_t k = 0; k < zn->rrset_room; k++)
			if (!is_free(img, h->rrsets_off, h->n_rrsets, zn->rrset_base + zn->n_rrsets + k))
				FAIL("a zone's room holds an RRset");
		n_free_nodes -= zn->node_room;
		n_free_rrsets -= zn->rrset_room;
	}
	if (n_free_nodes != 0 || n_free_rrsets != 0)
		FAIL("free table entries lie outside the zones' room, or rooms overlap");
	return 0;
}

/*
 * Each zone's ranges, once every node was checked where nodes[] says (zone_bounds() held
 * them inside their tables): every node of a node range of that range's zone (so no two zones'
 * node ranges overlap: a node in both would belong to two zones) with its RRsets and the
 * nodes it links to in its zone's ranges; RRset ranges in the order of the node ranges,
 * none starting before the previous one ends (so none overlap). Nodes outside every range
 * are garbage: checked as nodes (p53_image_check_from()), never reached through a zone;
 * free entries (room, image.h) are named by no range and no additional list.
 */
static int zone_ranges(const void *img, const char **why)
{
	const struct p53_image_hdr *h = img;
	uint64_t rrsets_end = 0;

	for (uint32_t z = 0; z < h->n_zones; z++)
		if (p53_image_node(img, p53_image_zone(img, z)->node_base)->zone != z)
			FAIL("a zone's node range starts with another zone's node");
	for (uint32_t i = 0; i < h->n_nodes; i++) {
		const struct p53_image_node *n = p53_image_node(img, i);
		const struct p53_image_zone *zn = p53_image_zone(img, n->zone);
		if (i != zn->node_base)
			continue;
		/* The first node of zone n->zone's range: the range is walked once, here. */
		if (zn->rrset_base < rrsets_end)
			FAIL("two zones' RRset ranges overlap or lie out of their node ranges' order");
		rrsets_end = (uint64_t)zn->rrset_base + zn->n_rrsets;
		for (uint32_t k = i; k < i + zn->n_nodes; k++) {
			const struct p53_image_node *m = p53_image_node(img, k);
			if (is_free(img, h->nodes_off, h->n_nodes, k))
				FAIL("a zone's node range holds a free entry");
			if (m->zone != n->zone)
				FAIL("a zone's node range holds another zone's node (ranges overlap)");
			if (m->n_rrsets > 0 && (uint64_t)m->rrsets + m->n_rrsets > zn->n_rrsets)
				FAIL("a node's RRsets lie outside its zone's RRset range");
			if ((m->wildcard != P53_NONE && m->wildcard >= zn->n_nodes) ||
			    (m->occluder != P53_NONE && m->occluder >= zn->n_nodes))
				FAIL("a node links to a node outside its zone's range");
			/* Its RRsets' additional lists (their bounds checked before): each
			 * entry relative to this zone, another zone's modulo 2^32 (image.h). */
			for (uint32_t r = 0; r < m->n_rrsets; r++) {
				const struct p53_image_rrset *rs = p53_image_zrrset(img, zn, m->rrsets + r);
				if (rs->adds == P53_NONE)
					continue;
				const uint32_t *a = p53_image_adds(img, rs->adds);
				for (uint32_t k = 1; k <= P53_ADDS_COUNT(a[0]); k++)
					if (zn->node_base + a[k] >= h->n_nodes ||
					    is_free(img, h->nodes_off, h->n_nodes, zn->node_base + a[k]))
						FAIL("an additional list names a node that does not exist");
			}
		}
		i += zn->n_nodes - 1;
	}
	/* Each zone's range was entered (its apex lies in it: checked by the caller). */
	return 0;
}

int p53_image_check(const void *img, size_t len, const char **why)
{
	return p53_image_check_from(img, len, NULL, NULL, why);
}

int p53_image_check_from(const void *img, size_t len, const void *prev, int *from,
			 const char **why)
{
	const struct p53_image_hdr *h = img;
	const struct p53_image_hdr *hp = prev;

	if (from != NULL)
		*from = 0;
	if (check_layout(h, len, why) != 0)
		return -EINVAL;
	if (zone_bounds(h, why) != 0)
		return -EINVAL;
	if (hp != NULL && !prefix_of(h, hp))
		hp = NULL;
	uint32_t old_rrsets = hp != NULL ? hp->n_rrsets : 0, old_nodes = hp != NULL ? hp->n_nodes : 0;
	if (from != NULL)
		*from = hp != NULL;

	const uint8_t *names = (const uint8_t *)img + h->names_off;
	/* Names lie in the nodes' blocks, between the RRsets (image.h, Co-location). */
	uint64_t names_len = h->adds_off - h->names_off;
	uint64_t rdata_len = h->adds_off - h->rdata_off;
	uint64_t n_adds = (adds_end(h) - h->adds_off) / sizeof(uint32_t);
	const uint32_t *adds = p53_image_adds(img, 0);
	uint64_t n_free_nodes = 0, n_free_rrsets = 0;

	/* The section's head is zero: no node or header lies there, and a free entry (0) read
	 * as a node is one of zone 0 outside its range (image.h, node_room). */
	static const uint8_t head[P53_IMAGE_RDATA_HEAD];
	if (rdata_len < P53_IMAGE_RDATA_HEAD || memcmp(names, head, sizeof(head)) != 0)
		FAIL("the names-and-RDATA section's head is not zero");

	/* RRsets: each one's header lies in the RDATA section, its records fill exactly its
	 * RDATA range, and its additional list and the nodes it names are in the image. */
	const uint32_t *roff = (const uint32_t *)((const uint8_t *)img + h->rrsets_off);
	for (uint32_t i = 0; i < h->n_rrsets; i++) {
		if (roff[i] == 0) { /* free: a zone's room (zone_rooms()) */
			n_free_rrsets++;
			continue;
		}
		if (roff[i] % P53_IMAGE_RRSET_ALIGN != 0 ||
		    !in_bounds(rdata_len, roff[i], sizeof(struct p53_image_rrset)))
			FAIL("an RRset's header lies outside the RDATA section or is misaligned");
		const struct p53_image_rrset *rs = p53_image_rrset(img, i);
		if (rs->count == 0 ||
		    !in_bounds(rdata_len - roff[i] - sizeof(*rs), 0, (uint64_t)rs->rdata_len + rs->sig_len))
			FAIL("an RRset's records or RRSIGs lie outside the RDATA section");
		const uint8_t *rd = p53_image_rdata(img, rs);
		uint64_t pos = 0;
		/* prev's, on the same bytes: its records were walked there. */
		uint16_t walk = i < old_rrsets && rrset_as_prev(img, prev, i) ? 0 : rs->count;
		if (walk == 0)
			pos = rs->rdata_len;
		for (uint16_t k = 0; k < walk; k++) {
			if (pos + P53_RR_OWNER_LEN + 10 > rs->rdata_len)
				FAIL("an RRset holds fewer records than its count");
			uint16_t rdlen = (uint16_t)(rd[pos + P53_RR_OWNER_LEN + 8] << 8 |
						    rd[pos + P53_RR_OWNER_LEN + 9]);
			const uint8_t *data = rd + pos + P53_RR_OWNER_LEN + 10;
			pos += P53_RR_OWNER_LEN + 10u + rdlen;
			if (pos > rs->rdata_len)
				FAIL("a record runs past its RRset");
			/* CNAME and DNAME targets are read as names (answer.c). */
			if ((rs->type == P53_T_CNAME || rs->type == P53_T_DNAME) &&
			    p53_name_len(data, rdlen) != (int)rdlen)
				FAIL("a CNAME or DNAME target is not a name");
		}
		if (pos != rs->rdata_len)
			FAIL("an RRset's RDATA range holds more than its records");
		if (rs->adds != P53_NONE) {
			if (rs->adds >= n_adds)
				FAIL("an additional list lies outside its section");
			uint32_t n = P53_ADDS_COUNT(adds[rs->adds]);
			if (P53_ADDS_REQUIRED(adds[rs->adds]) > n || n > n_adds - rs->adds - 1)
				FAIL("an additional list runs past its section");
			/* Its entries, relative to its owner's zone: zone_ranges(). */
		}
	}
	/* Nodes: each where nodes[] says, heading its block (4-byte aligned, its fields and
	 * name inside the section), its own index its place; then name, zone, RRsets and the
	 * nodes they link to. */
	for (uint32_t i = 0; i < h->n_nodes; i++) {
		uint32_t off = p53_image_node_off(img, i);
		if (off == 0) { /* free: a zone's room (zone_rooms()) */
			n_free_nodes++;
			continue;
		}
		if (off % P53_IMAGE_NODE_ALIGN != 0 || off < P53_IMAGE_RDATA_HEAD ||
		    !in_bounds(names_len, off, sizeof(struct p53_image_node)))
			FAIL("a node lies outside the names section or is misaligned");
		const struct p53_image_node *n = p53_image_node(img, i);
		if (n->zone >= h->n_zones)
			FAIL("a node belongs to a zone that does not exist");
		const struct p53_image_zone *zn = p53_image_zone(img, n->zone);
		/* Outside its zone's range: garbage a patch or a splice left, never followed
		 * (image.h); its block lies in the section, checked above. */
		if (i - zn->node_base >= zn->n_nodes)
			continue;
		if (n->self != i - zn->node_base)
			FAIL("a node's own index is not its place");
		uint32_t name_off = off + (uint32_t)sizeof(*n);
		if (i < old_nodes && off == p53_image_node_off(prev, i) &&
		    memcmp(n, p53_image_node(prev, i), sizeof(*n)) == 0 &&
		    memcmp(names + name_off, p53_image_name(prev, name_off), n->name_len) == 0) {
			/* Its links and name were checked in prev; its RRsets' headers may not be
			 * prev's. */
			if (!block_ok(img, zn, n))
				FAIL("a node's RRsets do not follow its name in its block");
			if ((n->flags & P53_NODE_CNAME) &&
			    p53_image_node_rrset(img, n, P53_T_CNAME) == P53_NONE)
				FAIL("a CNAME node has no CNAME RRset");
			continue;
		}
		if (!name_ok(names, names_len, name_off, n->name_len, n->labels) ||
		    n->labels > h->max_labels)
			FAIL("a node's name is malformed or outside the names section");
		if (n->n_rrsets > 0 && ((uint64_t)n->rrsets + n->n_rrsets > zn->n_rrsets))
			FAIL("a node's RRsets lie outside its zone's RRset range");
		if (!block_ok(img, zn, n))
			FAIL("a node's RRsets do not follow its name in its block");
		if ((n->wildcard != P53_NONE && n->wildcard >= zn->n_nodes) ||
		    (n->occluder != P53_NONE && n->occluder >= zn->n_nodes))
			FAIL("a node links to a node outside its zone's range");
		/* answer.c reads a CNAME node's CNAME RRset without looking for NONE. */
		if ((n->flags & P53_NODE_CNAME) && p53_image_node_rrset(img, n, P53_T_CNAME) == P53_NONE)
			FAIL("a CNAME node has no CNAME RRset");
	}
	/* Zones: their ranges, apex, SOA and name. */
	if (zone_ranges(img, why) != 0 || zone_rooms(img, n_free_nodes, n_free_rrsets, why) != 0)
		return -EINVAL;
	for (uint32_t z = 0; z < h->n_zones; z++) {
		const struct p53_image_zone *zn = p53_image_zone(img, z);
		if (zn->apex >= zn->n_nodes || p53_image_znode(img, zn, zn->apex)->zone != z)
			FAIL("a zone's apex is not one of its nodes");
		/* A zone without data here (rcode set: a secondary not transferred yet or expired,
		 * a catalog) has no SOA; answer.c answers it with the RCODE before reading one. */
		if (zn->rcode == 0 && (zn->soa >= zn->n_rrsets ||
				       p53_image_zrrset(img, zn, zn->soa)->type != P53_T_SOA))
			FAIL("a zone's SOA is not an SOA RRset");
		if (zn->rcode != 0 && zn->soa != P53_NONE)
			FAIL("a zone without data has an SOA");
		if (!name_ok(names, names_len, zn->name_off, zn->name_len, zn->labels))
			FAIL("a zone's name is malformed or outside the names section");
		if (zn->parent_side != P53_NONE &&
		    (zn->parent_side >= h->n_nodes ||
		     is_free(img, h->nodes_off, h->n_nodes, zn->parent_side)))
			FAIL("a zone's parent side is a node that does not exist");
	}
	/* Name index: every slot names a node's offset (nodes[] of the index that node holds
	 * is the slot's), and one at least is empty (a probe for a missing name ends at an
	 * empty slot). */
	const uint64_t *slots = p53_image_slots(img);
	uint64_t used = 0;
	for (uint64_t i = 0; i <= h->hash_mask; i++) {
		if (slots[i] == 0)
			continue;
		uint32_t off = (uint32_t)slots[i];
		if (off % P53_IMAGE_NODE_ALIGN != 0 || off < P53_IMAGE_RDATA_HEAD ||
		    !in_bounds(names_len, off, sizeof(struct p53_image_node)))
			FAIL("a name index slot points at no node");
		const struct p53_image_node *sn = p53_image_slot_node(img, slots[i]);
		if (sn->zone >= h->n_zones)
			FAIL("a name index slot points at no node");
		const struct p53_image_zone *szn = p53_image_zone(img, sn->zone);
		if (sn->self >= szn->n_nodes ||
		    p53_image_node_off(img, szn->node_base + sn->self) != off)
			FAIL("a name index slot points at no node");
		used++;
	}
	if (used > h->hash_mask)
		FAIL("the name index has no empty slot");
	if (p53_dnssec_image_check(img, len) != 0)
		FAIL("the DNSSEC tables (proofs, NSEC chain, NSEC3 hashes) point outside the image");
	return 0;
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
			const struct p53_image_node *node = p53_image_slot_node(img, s);
			if (node->name_len == len &&
			    memcmp(p53_image_node_name(img, node), name, len) == 0)
				return p53_image_zone(img, node->zone)->node_base +
				       p53_image_node_index(img, node); /* in the image */
		}
		i = (i + 1) & h->hash_mask;
	}
}

uint32_t p53_image_node_rrset(const void *img, const struct p53_image_node *node, uint16_t type)
{
	uint32_t rsi;

	p53_image_node_find(img, node, type, &rsi);
	return rsi;
}
