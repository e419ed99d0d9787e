/*
 * One zone compiled alone spliced into the running image (control/zone/image_splice.h).
 *
 * The new image is the running one's sections copied, each grown by what the zone alone
 * brings: its blocks after the running image's (so every offset of the zone image moves by
 * one amount), its nodes and RRsets after the running image's, where the zone's entry now
 * puts its ranges (image.h, p53_image_zone.node_base: every index inside the zone is relative
 * to them, so none of J's is renumbered), its additional lists after the running ones. The
 * zone's old ranges stay as garbage, outside every zone's range (counted in the header's
 * pad), their nodes out of the name index. The NSEC chain and the NSEC3 hashes are kept zone
 * by zone, in zone order, as the compile writes them and the patch expects them
 * (image_patch.c nsec_proofs, n3_proofs): the zone's old part of each (chain_part,
 * nsec3_part) is replaced by the zone image's, the later zones' proofs (NSEC) and ranges
 * (NSEC3) move by the difference. Additional lists across zones are made again after J's
 * (relist).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/text.h"
#include "control/zone/image_build.h"
#include "control/zone/image_edit.h"
#include "control/zone/image_splice.h"
#include "control/zone/patch_index.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

/* The splice declines: why, then the one way out (the zone's nodes found, the spare). */
#define DECLINE(...) do { snprintf(why, wl, __VA_ARGS__); goto fail; } while (0)

/* A node an edit took out (image_patch.c, below): no RRsets, out of the index. */
static bool dead(const struct p53_image_node *nd)
{
	return (nd->flags & (P53_NODE_ENT | P53_NODE_NSEC3)) == (P53_NODE_ENT | P53_NODE_NSEC3) &&
	       nd->n_rrsets == 0;
}

/* Bytes of node n's block: the node, its name, its RRsets' headers, records, signatures. */
static uint64_t block_bytes(const void *img, const struct p53_image_node *nd)
{
	uint64_t b = sizeof(*nd) + nd->name_len;
	const struct p53_image_rrset *rs = p53_image_node_first(img, nd);

	for (uint32_t i = 0; i < nd->n_rrsets; i++, rs = p53_image_rrset_next(img, rs))
		b += p53_image_rrset_at(p53_image_rrset_span(rs));
	return b;
}

/* The zone of another served zone's apex at or above canonical name q, or P53_NONE. */
static uint32_t served_above(const void *img, uint32_t z, const uint8_t *q, size_t ql)
{
	while (ql >= 1) {
		uint32_t n = p53_image_find(img, q, ql, p53_name_hash(q, ql));
		if (n != P53_NONE) {
			const struct p53_image_node *nd = p53_image_node(img, n);
			if ((nd->flags & P53_NODE_APEX) && nd->zone != z)
				return nd->zone;
		}
		if (ql == 1)
			break;
		ql -= 1u + q[0];
		q += 1u + q[0];
	}
	return P53_NONE;
}

/* Whether node nd of img owns A or AAAA: a target additional lists name (adds_make). */
static bool has_addr(const void *img, const struct p53_image_node *nd)
{
	const struct p53_image_rrset *rs = p53_image_node_first(img, nd);

	for (uint32_t i = 0; i < nd->n_rrsets; i++, rs = p53_image_rrset_next(img, rs))
		if (rs->type == P53_T_A || rs->type == P53_T_AAAA)
			return true;
	return false;
}

/*
 * Additional lists across zones. The compile lists, for an NS, MX, SRV, SVCB or HTTPS record,
 * the target's node in the record's zone when it has addresses, else the indexed node of
 * another served zone that has (image_build.c adds_make). So a list of the zone spliced (J's)
 * may name other zones' nodes, which J compiled alone does not know, and another zone's list
 * may name the zone's nodes, which the splice replaces: both are made again here, record by
 * record as the compile makes them, the targets that resolve across the zones anew (through
 * the running image's index for J's, through J's for the others'), the others taken from the
 * list as it is (in record order after the in-domain glue, RFC 9471, which is never across).
 */
struct lists {
	const void *img, *one;          /* the running image, the zone's own (J) */
	uint32_t bn;                    /* J's node indices move by this */
	const uint8_t *apex;            /* the zone's */
	size_t apex_len;
};

/* Whether target t of an RRset of J (in_j) or of another zone is a name the other side
 * holds: elsewhere than at or below the apex for J's, at or below it for another zone's. */
static bool across(const struct lists *l, bool in_j, const uint8_t *t, size_t tl)
{
	return p53_name_at_or_below(t, tl, l->apex, l->apex_len) != in_j;
}

/* The node (its index in the new image) of a target across, with addresses; or P53_NONE. */
static uint32_t across_node(const struct lists *l, bool in_j, const uint8_t *t, size_t tl)
{
	const void *im = in_j ? l->img : l->one;
	uint32_t n = p53_image_find(im, t, tl, p53_name_hash(t, tl));

	if (n == P53_NONE || !has_addr(im, p53_image_node(im, n)))
		return P53_NONE;
	return in_j ? n : l->bn + n;
}

/*
 * RRset rs of `src` (J when in_j, owned by `owner`) and its list: whether a target lies
 * across (`probe`: then returns 1 or 0, nothing written), else its list as the compile of
 * every zone makes it written to out (head, then nodes relative to the owner's zone's range
 * in the new image, another zone's modulo 2^32: image.h, p53_image_znode()): its length in
 * words, 0 for no list. The nodes are compared as the new image's indices.
 */
static size_t relist(const struct lists *l, bool in_j, const void *src,
		     const struct p53_image_rrset *rs, const struct p53_image_node *owner,
		     bool probe, uint32_t *out)
{
	const int skip = p53_target_skip(rs->type);
	const uint32_t *old = rs->adds != P53_NONE ? p53_image_adds(src, rs->adds) : NULL;
	const uint32_t n_old = old != NULL ? P53_ADDS_COUNT(old[0]) : 0;
	const uint32_t req = old != NULL ? P53_ADDS_REQUIRED(old[0]) : 0;
	/* The owner's zone's range starts here in the new image (J's where J's nodes go, another
	 * zone's where it was): an entry of the old list plus this is a node of the new image. */
	const struct p53_image_zone *oz = p53_image_zone(src, owner->zone);
	const uint32_t by = in_j ? l->bn : oz->node_base;
	const bool cut = rs->type == P53_T_NS && (owner->flags & P53_NODE_CUT);
	const uint8_t *on = p53_image_node_name(src, owner), *rd = p53_image_rdata(src, rs);
	uint8_t t[P53_NAME_MAXLEN];
	uint32_t n = 0, pos = req;

	if (skip < 0)
		return 0;
	for (uint32_t k = 0; !probe && k < req; k++) /* in-domain glue first, as it was */
		out[1 + n++] = old[1 + k] + by;
	for (uint32_t k = 0; k < rs->count; k++) {
		const uint8_t *nm;
		size_t tl;
		rd = p53_target_rr(rd, skip, &nm, &tl);
		if (tl == 0)
			continue;
		p53_name_lower(t, nm, tl);
		if (probe) {
			if (across(l, in_j, t, tl))
				return 1;
			continue;
		}
		if (cut && p53_name_at_or_below(t, tl, on, owner->name_len))
			continue; /* in-domain glue: the first `req` */
		uint32_t tn = P53_NONE;
		/* The old list's next node, when it is this target's (one per distinct target
		 * that resolved, in record order). */
		if (pos < n_old) {
			const struct p53_image_node *e = p53_image_znode(src, oz, old[1 + pos]);
			if (e->name_len == tl && memcmp(p53_image_node_name(src, e), t, tl) == 0)
				tn = old[1 + pos++] + by;
		}
		if (across(l, in_j, t, tl))
			tn = across_node(l, in_j, t, tl);
		bool dup = tn == P53_NONE;
		for (uint32_t q = 0; q < n && !dup; q++)
			dup = out[1 + q] == tn;
		if (!dup)
			out[1 + n++] = tn;
	}
	if (probe || n == 0)
		return 0;
	for (uint32_t q = 0; q < n; q++)
		out[1 + q] -= by; /* modulo 2^32 for another zone's node */
	out[0] = n | req << 16;
	return 1 + n;
}

/* An RRset a list is made again for: its index (in its image, not its zone's), in J (in_j) or
 * in the running image. */
struct relisted {
	uint32_t rs, owner;
	bool in_j;
};

/* The RRsets whose lists are made again, and the words those lists take at most. */
struct relisted_set {
	struct relisted *a;
	size_t n, cap, words;
};

/* Node n of src (J when in_j): its RRsets with a target across zones put on s. 0, or -1
 * (out of memory). */
static int relist_node(const struct lists *l, bool in_j, const void *src, uint32_t n,
		       struct relisted_set *s)
{
	const struct p53_image_node *nd = p53_image_node(src, n);
	const struct p53_image_rrset *rs = p53_image_node_first(src, nd);

	for (uint32_t i = 0; i < nd->n_rrsets; i++, rs = p53_image_rrset_next(src, rs)) {
		if (relist(l, in_j, src, rs, nd, true, NULL) == 0)
			continue;
		if (s->n == s->cap) {
			size_t c = s->cap ? 2 * s->cap : 16;
			struct relisted *x = realloc(s->a, c * sizeof(*x));
			if (x == NULL)
				return -1;
			s->a = x;
			s->cap = c;
		}
		uint32_t rsi = p53_image_zone(src, nd->zone)->rrset_base + nd->rrsets + i;
		s->a[s->n++] = (struct relisted){ .rs = rsi, .owner = n, .in_j = in_j };
		s->words += 1u + rs->count;
	}
	return 0;
}

/* Whether zone zn has an NSEC chain (dnssec_build.c: NSEC3 first). */
static bool nsec_zone(const struct p53_image_hdr *h, const struct p53_image_zone *zn)
{
	return h->proofs_off != 0 && (zn->dnssec & P53_ZONE_NSEC) && !(zn->dnssec & P53_ZONE_NSEC3);
}

/*
 * Zone z's part [*c0, *c1) of the NSEC chain. The compile writes the chain zone by zone in zone
 * order, each zone's owners in canonical order, the apex first (dnssec_build.c nsec_zone), so
 * the apex's proof searches all of it but the apex's own NSEC: chain[lo, hi), the apex at
 * lo - 1 when it owns one (its proof's match is itself), as the patch keeps it (image_patch.c
 * nsec_plan). A zone without a chain has an empty part where the next zone's starts. -1 when
 * the proofs do not say so (the splice declines).
 */
static int chain_part(const void *img, uint32_t z, uint32_t *c0, uint32_t *c1)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	const struct p53_image_zone *zn = p53_image_zone(img, z);

	if (!nsec_zone(h, zn)) {
		uint32_t k = z + 1;
		while (k < h->n_zones && !nsec_zone(h, p53_image_zone(img, k)))
			k++;
		if (k == h->n_zones) {
			*c0 = *c1 = h->n_chain;
			return 0;
		}
		if (chain_part(img, k, c0, c1) != 0)
			return -1;
		*c1 = *c0;
		return 0;
	}
	const struct p53_image_proof *pa = p53_image_proof(img, zn->node_base + zn->apex);
	if (pa->lo > pa->hi || pa->hi > h->n_chain)
		return -1;
	*c0 = pa->lo;
	*c1 = pa->hi;
	if (pa->match == zn->apex) {
		if (pa->lo == 0 || p53_image_chain(img)[pa->lo - 1] != zn->apex)
			return -1;
		*c0 = pa->lo - 1;
	}
	return 0;
}

/* Zone z's part [*h0, *h1) of the NSEC3 hashes: its entry's (proof_lo, proof_n), or an empty
 * part where the next NSEC3 zone's starts. -1 when it lies outside the table. */
static int nsec3_part(const void *img, uint32_t z, uint32_t *h0, uint32_t *h1)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);

	*h0 = *h1 = h->n_nsec3;
	for (uint32_t k = z; k < h->n_zones; k++) {
		const struct p53_image_zone *zn = p53_image_zone(img, k);
		if (!(zn->dnssec & P53_ZONE_NSEC3))
			continue;
		if ((uint64_t)zn->proof_lo + zn->proof_n > h->n_nsec3)
			return -1;
		*h0 = zn->proof_lo;
		*h1 = k == z ? zn->proof_lo + zn->proof_n : zn->proof_lo;
		break;
	}
	return 0;
}

void *p53_image_splice(const void *img, const void *one, void *spare, size_t *len, char *why,
		       size_t whylen)
{
	const struct p53_image_hdr *h = p53_image_hdr(img), *jh = p53_image_hdr(one);
	const size_t wl = whylen;
	char txt[1024], txt2[1024];
	uint8_t *ni = NULL;
	uint32_t *old = NULL;   /* the zone's nodes in img */
	size_t n_old = 0, old_cap = 0;
	struct relisted_set rl = { 0 }; /* RRsets whose lists are made again */

	why[0] = '\0';
	if (jh->n_zones != 1)
		DECLINE("the zone's image holds %u zones", jh->n_zones);
	const struct p53_image_zone *jz = p53_image_zone(one, 0);
	const uint8_t *apex = p53_image_name(one, jz->name_off);
	const size_t apex_len = jz->name_len;
	p53_name_to_str(txt, sizeof(txt), apex);
	uint32_t ai = p53_image_find(img, apex, apex_len, p53_name_hash(apex, apex_len));
	if (ai == P53_NONE || !(p53_image_node(img, ai)->flags & P53_NODE_APEX))
		DECLINE("zone %s is not in the running image", txt);
	const uint32_t z = p53_image_node(img, ai)->zone;

	/* The ties to other served zones (image_splice.h): the zone below another one's apex
	 * (declined); J's lists naming names of other zones (made again: relist). */
	if (apex_len > 1) {
		uint32_t pz = served_above(img, z, apex + 1 + apex[0], apex_len - 1 - apex[0]);
		if (pz != P53_NONE || p53_image_zone(img, z)->parent_side != P53_NONE)
			DECLINE("zone %s lies below another served zone (its parent side)", txt);
	}
	const struct lists ls = { .img = img, .one = one, .bn = h->n_nodes, .apex = apex,
				  .apex_len = apex_len };
	bool steered = false;
	for (uint32_t n = 0; n < jh->n_nodes; n++) {
		const struct p53_image_node *nd = p53_image_node(one, n);
		steered |= nd->steer != 0;
		if (relist_node(&ls, true, one, n, &rl) != 0)
			DECLINE("out of memory");
	}
	if (steered && jh->steer_layout != h->steer_layout)
		DECLINE("the steering layout is not the image's (reload the config)");
	/* One pass over the zones' ranges of nodes[] (the entries outside them are garbage): the
	 * zone's (garbage from here on), and the other zones' ties to it (a served zone below its
	 * apex: declined; lists naming its names: made again). */
	uint64_t garbage = h->pad, old_recs = 0;
	garbage += (uint64_t)p53_image_zone(img, z)->n_rrsets * sizeof(uint32_t);
	/* Its room too (p53_image_room_retire(), below). */
	garbage += p53_image_room_bytes(h, p53_image_zone(img, z));
	for (uint32_t k = 0, n = 0, end = 0; n < end || k < h->n_zones; n++) {
		if (n >= end) { /* the next zone's range (never empty: p53_image_check()) */
			const struct p53_image_zone *kz = p53_image_zone(img, k++);
			n = kz->node_base;
			end = kz->node_base + kz->n_nodes;
		}
		const struct p53_image_node *nd = p53_image_node(img, n);
		/* Names earlier edits took out of the zone: their proofs go too (below). */
		if (dead(nd) && nd->zone != z)
			continue;
		const uint8_t *nm = p53_image_node_name(img, nd);
		if (nd->zone == z) {
			if (n_old == old_cap) {
				size_t cap = old_cap ? 2 * old_cap : 256;
				uint32_t *o = realloc(old, cap * sizeof(*old));
				if (o == NULL)
					DECLINE("out of memory");
				old = o;
				old_cap = cap;
			}
			old[n_old++] = n;
			if (dead(nd))
				continue;
			garbage += block_bytes(img, nd) + sizeof(uint32_t) +
				   (h->proofs_off != 0 ? sizeof(struct p53_image_proof) : 0);
			const struct p53_image_rrset *rs = p53_image_node_first(img, nd);
			for (uint32_t i = 0; i < nd->n_rrsets; i++, rs = p53_image_rrset_next(img, rs))
				old_recs += rs->count + rs->sig_count;
			continue;
		}
		if ((nd->flags & P53_NODE_APEX) && nd->name_len > apex_len &&
		    p53_name_at_or_below(nm, nd->name_len, apex, apex_len))
			DECLINE("%s, a served zone's apex, lies below zone %s (its parent side)",
				p53_name_to_str(txt2, sizeof(txt2), nm), txt);
		if (relist_node(&ls, false, img, n, &rl) != 0)
			DECLINE("out of memory");
	}

	/* The zone's part of the NSEC chain and of the NSEC3 hashes, zone by zone. */
	uint32_t c0, c1, h0, h1;
	if (chain_part(img, z, &c0, &c1) != 0 || nsec3_part(img, z, &h0, &h1) != 0)
		DECLINE("the NSEC chain or NSEC3 hashes of zone %s are not where its entry and "
			"apex say", txt);
	const size_t n3sz = sizeof(struct p53_image_nsec3);
	const int64_t dchain = (int64_t)jh->n_chain - (c1 - c0);
	const int64_t dn3 = (int64_t)jh->n_nsec3 - (h1 - h0);

	/* Sizes of the new image. */
	const uint32_t bn = h->n_nodes, br = h->n_rrsets; /* J's indices move by these */
	const uint64_t n_nodes = (uint64_t)h->n_nodes + jh->n_nodes;
	const uint64_t n_rrsets = (uint64_t)h->n_rrsets + jh->n_rrsets;
	uint64_t n_slots = p53_image_slot_count((uint64_t)h->hash_mask + 1, n_nodes);
	const size_t rdata_old = h->adds_off - h->rdata_off;
	const size_t rdata_one = jh->adds_off - jh->rdata_off;
	const size_t adds_old = ((h->proofs_off != 0 ? h->proofs_off : h->chain_off) - h->adds_off) /
				sizeof(uint32_t);
	const size_t adds_one = ((jh->proofs_off != 0 ? jh->proofs_off : jh->chain_off) -
				 jh->adds_off) / sizeof(uint32_t);
	if (n_nodes >= UINT32_MAX || n_rrsets >= UINT32_MAX || n_slots > (uint64_t)1 << 32 ||
	    rdata_old + rdata_one + 64 > UINT32_MAX)
		DECLINE("the image would pass the format's limits");
	struct p53_image_hdr nh = *h;
	size_t off = p53_align8(sizeof(nh));
	nh.zones_off = (uint32_t)off;
	off = p53_align8(off + (size_t)h->n_zones * sizeof(struct p53_image_zone));
	nh.n_nodes = (uint32_t)n_nodes;
	nh.nodes_off = (uint32_t)off;
	off = p53_align8(off + (size_t)n_nodes * sizeof(uint32_t));
	nh.n_rrsets = (uint32_t)n_rrsets;
	nh.rrsets_off = (uint32_t)off;
	off = p53_align8(off + (size_t)n_rrsets * sizeof(uint32_t));
	nh.hash_mask = (uint32_t)(n_slots - 1);
	nh.slots_off = (uint32_t)off;
	off = p53_align8(off + (size_t)n_slots * sizeof(uint64_t));
	nh.names_off = nh.rdata_off = (uint32_t)off;
	/* J's section whole (its unused head too) after the image's: J's offsets move by
	 * `base`, chosen so that its blocks lie on the same places of their cache lines as in
	 * J (the compile starts a block on a line of its own: P53_IMAGE_PACK_PAD). */
	const size_t base = rdata_old + ((size_t)jh->rdata_off - (nh.rdata_off + rdata_old)) % 64;
	off = p53_align8(off + base + rdata_one);
	nh.adds_off = (uint32_t)off;
	off = p53_align8(off + (adds_old + adds_one + rl.words) * sizeof(uint32_t));
	nh.proofs_off = 0;
	if (h->proofs_off != 0 || jh->proofs_off != 0) {
		nh.proofs_off = (uint32_t)off;
		off = p53_align8(off + (size_t)n_nodes * sizeof(struct p53_image_proof));
	}
	nh.n_chain = (uint32_t)((int64_t)h->n_chain + dchain);
	nh.chain_off = (uint32_t)off;
	off = p53_align8(off + (size_t)nh.n_chain * sizeof(uint32_t));
	nh.n_nsec3 = (uint32_t)((int64_t)h->n_nsec3 + dn3);
	nh.nsec3_off = (uint32_t)off;
	off = p53_align8(off + (size_t)nh.n_nsec3 * n3sz);
	nh.size = off;
	nh.max_labels = jh->max_labels > h->max_labels ? jh->max_labels : h->max_labels;
	nh.n_records = (uint32_t)(h->n_records > old_recs ? h->n_records - old_recs : 0) + jh->n_records;
	nh.generation = 0; /* the publish gives it one; no patch index describes it */
	/* The zone's old part of adds[] is not found here (garbage as well, uncounted). */
	garbage += (uint64_t)(base - rdata_old);
	if (p53_image_too_much_garbage(garbage, off))
		DECLINE("garbage would pass a quarter of the image");
	nh.pad = (uint32_t)garbage; /* (< the image: under 4 GiB) */
	if (off > UINT32_MAX)
		DECLINE("the image would pass the 4 GiB format limit");
	ni = p53_image_out(off, &spare);
	if (ni == NULL)
		DECLINE("out of memory");

	/* The sections: the running image's, then J's after them, gaps zeroed. */
	const uint8_t *oi = img, *jo = one;
	memset(ni, 0, nh.nodes_off);
	memcpy(ni, &nh, sizeof(nh));
	memcpy(ni + nh.zones_off, oi + h->zones_off, (size_t)h->n_zones * sizeof(struct p53_image_zone));
	uint32_t *noff = (uint32_t *)(ni + nh.nodes_off);
	memcpy(noff, oi + h->nodes_off, (size_t)h->n_nodes * sizeof(uint32_t));
	/* J's tables whole: its zone's ranges, then its room (free entries stay 0: image.h,
	 * node_room), which the zone takes with it. */
	for (uint32_t n = 0; n < jh->n_nodes; n++)
		noff[bn + n] = n < jz->n_nodes ? p53_image_node_off(one, n) + (uint32_t)base : 0;
	memset(noff + n_nodes, 0, nh.rrsets_off - nh.nodes_off - n_nodes * sizeof(uint32_t));
	uint32_t *roff = (uint32_t *)(ni + nh.rrsets_off);
	memcpy(roff, oi + h->rrsets_off, (size_t)h->n_rrsets * sizeof(uint32_t));
	memcpy(roff + br, jo + jh->rrsets_off, (size_t)jh->n_rrsets * sizeof(uint32_t));
	for (uint32_t r = 0; r < jz->n_rrsets; r++)
		roff[br + r] += (uint32_t)base;
	(void)p53_image_room_retire(ni, p53_image_zone(img, z)); /* (counted above) */
	memset(roff + n_rrsets, 0, nh.slots_off - nh.rrsets_off - n_rrsets * sizeof(uint32_t));
	uint64_t *slots = (uint64_t *)(ni + nh.slots_off);
	p53_image_index_copy(img, slots, nh.hash_mask);
	uint8_t *sec = ni + nh.rdata_off;
	memcpy(sec, oi + h->rdata_off, rdata_old);
	memset(sec + rdata_old, 0, base - rdata_old);
	memcpy(sec + base, jo + jh->rdata_off, rdata_one);
	memset(sec + base + rdata_one, 0, nh.adds_off - nh.rdata_off - base - rdata_one);
	uint32_t *adds = (uint32_t *)(ni + nh.adds_off);
	memcpy(adds, oi + h->adds_off, adds_old * sizeof(uint32_t));
	memcpy(adds + adds_old, jo + jh->adds_off, adds_one * sizeof(uint32_t));
	size_t adds_end = nh.proofs_off != 0 ? nh.proofs_off : nh.chain_off;
	memset(adds + adds_old + adds_one, 0,
	       adds_end - nh.adds_off - (adds_old + adds_one) * sizeof(uint32_t));
	/* J's lists as they are: their entries are relative to the zone's range (image.h), which
	 * J's nodes are. (The lists made again go after J's, below.) */

	/* The zone's old nodes: out of the index. Their blocks and entries stay as they were,
	 * garbage outside every zone's range (never read through a zone). */
	const uint32_t mask = nh.hash_mask;
	for (size_t i = 0; i < n_old; i++) {
		const struct p53_image_node *nd = p53_image_node(ni, old[i]);
		if (!(nd->flags & P53_NODE_NSEC3))
			p53_image_index_remove(ni, slots, mask,
					       p53_name_hash(p53_image_node_name(ni, nd), nd->name_len),
					       old[i]);
	}
	/* J's nodes: their zone's index is the running image's; every other index in them is
	 * relative to the zone's ranges, J's own. Indexed as J indexed them (below). */
	for (uint32_t n = 0; n < jz->n_nodes; n++)
		p53_image_node_w(ni, bn + n)->zone = z;
	for (uint32_t r = 0; r < jz->n_rrsets; r++) {
		struct p53_image_rrset *rs = (struct p53_image_rrset *)(sec + roff[br + r]);
		if (rs->adds != P53_NONE)
			rs->adds += (uint32_t)adds_old;
	}
	/* Lists across zones made again (relist), after J's; the old ones are left unread. */
	size_t at = adds_old + adds_one;
	for (size_t i = 0; i < rl.n; i++) {
		const struct relisted *e = &rl.a[i];
		const void *src = e->in_j ? one : img;
		size_t w = relist(&ls, e->in_j, src, p53_image_rrset(src, e->rs),
				  p53_image_node(src, e->owner), false, adds + at);
		struct p53_image_rrset *nrs = (struct p53_image_rrset *)
			(sec + roff[e->rs + (e->in_j ? br : 0)]);
		nrs->adds = w > 0 ? (uint32_t)at : P53_NONE;
		at += w;
	}
	const uint64_t *js = p53_image_slots(one);
	for (uint64_t i = 0; i <= jh->hash_mask; i++)
		if (js[i] != 0)
			p53_image_index_add(ni, slots, mask, (uint32_t)(js[i] >> 32),
					    bn + p53_image_slot_node(one, js[i])->self);

	/* The zone's entry: J's, pointing where J's parts now lie. */
	struct p53_image_zone *zones = (struct p53_image_zone *)(ni + nh.zones_off);
	struct p53_image_zone zn = *jz; /* apex, SOA, counts: relative to the ranges, J's */
	/* J's ranges after the running image's (its old ones garbage, p53_image_check()). */
	zn.node_base = bn + jz->node_base;
	zn.rrset_base = br + jz->rrset_base;
	zn.name_off = jz->name_off + (uint32_t)base;
	if (jz->dnssec & P53_ZONE_NSEC3) {
		zn.salt_off = jz->salt_off + (uint32_t)base;
		zn.proof_lo = jz->proof_lo + h0;
	}
	zn.parent_side = P53_NONE; /* no served zone above it (checked) */
	zones[z] = zn;
	for (uint32_t k = z + 1; k < nh.n_zones; k++)
		if (zones[k].dnssec & P53_ZONE_NSEC3)
			zones[k].proof_lo = (uint32_t)((int64_t)zones[k].proof_lo + dn3);

	/* NSEC chain and NSEC3 hashes: the zone's part replaced by J's, in its place. */
	uint32_t *ch = (uint32_t *)(ni + nh.chain_off);
	const uint32_t *och = p53_image_chain(img), *jch = p53_image_chain(one);
	memcpy(ch, och, (size_t)c0 * sizeof(*ch));
	memcpy(ch + c0, jch, (size_t)jh->n_chain * sizeof(*ch)); /* relative to the zone */
	memcpy(ch + c0 + jh->n_chain, och + c1, (size_t)(h->n_chain - c1) * sizeof(*ch));
	memset(ch + nh.n_chain, 0, nh.nsec3_off - nh.chain_off - (size_t)nh.n_chain * sizeof(*ch));
	struct p53_image_nsec3 *n3 = (struct p53_image_nsec3 *)(ni + nh.nsec3_off);
	const struct p53_image_nsec3 *on3 = p53_image_nsec3(img), *jn3 = p53_image_nsec3(one);
	memcpy(n3, on3, (size_t)h0 * n3sz);
	memcpy(n3 + h0, jn3, (size_t)jh->n_nsec3 * n3sz); /* relative to the zone */
	memcpy(n3 + h0 + jh->n_nsec3, on3 + h1, (size_t)(h->n_nsec3 - h1) * n3sz);
	memset(n3 + nh.n_nsec3, 0, nh.size - nh.nsec3_off - (size_t)nh.n_nsec3 * n3sz);

	/* Proofs: the running image's (later NSEC zones' chain ranges moved), none for the
	 * zone's old nodes, J's (relative to the zone) with their chain ranges moved. */
	if (nh.proofs_off != 0) {
		struct p53_image_proof *pf = (struct p53_image_proof *)(ni + nh.proofs_off);
		const struct p53_image_proof none = { .match = P53_NONE, .wild = P53_NONE,
						      .encl = P53_NONE, .nc = P53_NONE };
		if (h->proofs_off != 0)
			memcpy(pf, oi + h->proofs_off, (size_t)h->n_nodes * sizeof(*pf));
		else
			for (uint32_t n = 0; n < h->n_nodes; n++)
				pf[n] = none;
		for (size_t i = 0; i < n_old; i++)
			pf[old[i]] = none;
		/* The later NSEC zones' proofs (their ranges': the zones' parts come in zone
		 * order, chain_part). */
		for (uint32_t k = z + 1; h->proofs_off != 0 && dchain != 0 && k < nh.n_zones; k++) {
			if (!nsec_zone(&nh, &zones[k]))
				continue;
			for (uint32_t n = zones[k].node_base; n < zones[k].node_base + zones[k].n_nodes; n++) {
				struct p53_image_proof *q = &pf[n];
				if (q->hi == 0 || q->lo < c1)
					continue;
				q->lo = (uint32_t)(q->lo + dchain);
				q->hi = (uint32_t)(q->hi + dchain);
			}
		}
		/* Names taken out of other zones keep the proofs they had, unread: one that the
		 * shorter chain leaves pointing past its end goes (the check reads every proof of
		 * a zone's range). */
		for (uint32_t n = 0; h->proofs_off != 0 && dchain < 0 && n < h->n_nodes; n++)
			if (pf[n].hi > nh.n_chain)
				pf[n] = none;
		const bool nsec = nsec_zone(jh, jz);
		for (uint32_t n = 0; n < jh->n_nodes; n++) {
			if (n >= jz->n_nodes) { /* J's room: free */
				memset(&pf[bn + n], 0, sizeof(pf[bn + n]));
				continue;
			}
			if (jh->proofs_off == 0) {
				pf[bn + n] = none;
				continue;
			}
			struct p53_image_proof q = *p53_image_proof(one, n);
			if (nsec) {
				q.lo += c0;
				q.hi += c0;
			}
			pf[bn + n] = q;
		}
		memset(pf + n_nodes, 0, nh.chain_off - nh.proofs_off - n_nodes * sizeof(*pf));
	}
	free(old);
	free(rl.a);
	p53_image_zones_place(ni);
	*len = off;
	return ni;
fail:
	free(old);
	free(rl.a);
	free(spare);
	return NULL;
}
