/*
 * IXFR applied to the compiled image (image_patch.h). The new image is the old one's sections
 * copied, each with room appended:
 *
 *   - the touched names' records (the diff's owners and the missing names above new ones,
 *     read out of the zone's new content) are compiled alone by p53_image_build(), so every
 *     RRset is encoded, sorted, deduplicated and TTL'd exactly as a full compile does; an RRset whose bytes did not change keeps its old
 *     header (and its additional list), a changed or new one is taken from that small image;
 *   - each touched node gets its whole block (its name, then each RRset's header and records,
 *     dataplane/image.h Co-location) appended to the names-and-RDATA section and the headers'
 *     offsets to rrsets[] (node.rrsets and name_off redirected), new nodes to nodes[] and
 *     the name index; a node whose last record goes leaves the index (linear probing, so the
 *     slots after it are shifted back, never a tombstone) and stays in nodes[] flagged
 *     P53_NODE_ENT | P53_NODE_NSEC3 ("not in the index"), or becomes an empty non-terminal
 *     when names below it remain; empty non-terminals above it left with nothing below leave
 *     the index too, and missing names above a new name are new empty non-terminals;
 *   - additional lists naming a node that loses its last address are appended again without
 *     it and the RRsets pointing at them redirected; new MX/SRV/SVCB/HTTPS RRsets, and every
 *     RRset naming a name that gains addresses (found by the patch index, patch_index.h,
 *     when the caller keeps one: else every node is read), get a list made as the compiler
 *     makes it (adds_list);
 *   - signed zones: the DNSSEC sections (proofs, NSEC chain, NSEC3 hashes: node indices) are
 *     copied as they are when no node comes or goes and no NSEC/NSEC3 owner changes; NSEC
 *     zones may gain and lose names and types, with their NSECs: the zone's part of the chain
 *     and its nodes' proofs are remade (nsec_plan, nsec_proofs: one pass in order, names read
 *     only where owners joined), and whether a name that goes keeps names below it is read
 *     from the chain (below_owners); NSEC3 zones likewise with
 *     their NSEC3s: the zone's sorted hashes are merged again and the proofs whose covers
 *     moved are made again (n3_plan, n3_proofs); in all an RRset whose
 *     records stay but whose RRSIGs change keeps its header (additional list, flags) over a
 *     copy of its records and the new RRSIGs; NSEC3 owners (not in the name index) are found
 *     by their hash; the zone's sig_expire is read off the patch index's counts by
 *     expiration (the touched nodes' RRSIGs uncounted and counted again), or without one
 *     the small compile's and the old one's minimum, or every node's again when an RRSIG
 *     that goes may have been the earliest; at a cut of a signed zone the DS RRset may come,
 *     change or go and the NS set change (cut_rrset_ok), glue change its addresses
 *     (signed_glue), delegations come and go and glue with them (signed_deleg: the links
 *     made again as for an unsigned zone, signed_cuts, signed_links), cuts nest (a cut
 *     below a cut, NS above a cut: signed_nest, nested_cut): the NSECs/NSEC3s whose
 *     bitmaps or owners change, and the RRSIGs, come in the diff (names made glue or freed
 *     with no owner moving, an opt-out chain's insecure cuts: glue_proofs); a wildcard's records
 *     change, and wildcards come and go, as any name's (wild_links), gain or lose NS as any
 *     delegation (signed_deleg) and are made glue or freed by one (signed_glue); with a chain, CNAME
 *     owners come, go and change as any name's (signed_cname; below a cut as glue's,
 *     glue_cname) and
 *     the apex NS set changes, comes or goes (signed_apex_ns, signed_apex_ns_set: its
 *     additional list made again); DNAME
 *     owners come, go and change as any name's, their links as an unsigned zone's
 *     (signed_dname, signed_dnames);
 *   - unsigned zones: cuts, glue and wildcards come and go (cut_links), and DNAME owners
 *     (dname_links: the owner's flag; a name that stays below a new one declines).
 *   - the parent side of a served child (a zone's names at and below another served zone's
 *     apex, out of the name index: the delegation's NS set and DS, glue, other names):
 *     their records patched at the zone's own nodes while nothing the compiler links from
 *     them changes (shadowed_nodes, shadowed_ok); names new there made out of the index,
 *     linked as nodes_link() links them (shadow_new, shadow_ancestors), names gone there
 *     taken out, the child's parent_side following (shadow_sides); the delegation coming
 *     or going at a name that stays, cuts below it coming and going with it or alone, new
 *     cuts there, several in one diff (shadow_flips, flip_occ: the names below become or
 *     stop being glue; in a signed parent their NSECs/NSEC3s come in the diff and the
 *     proofs are made again with the chain's, glue_proofs, shadow_parent); a cut or DNAME
 *     above the child's apex coming or going (their occluders made again, occ_above); names
 *     at a grandchild's apex (its parent_side left to the child, shadow_sides).
 * What the old bytes held becomes garbage, counted in p53_image_hdr.pad (bytes).
 *
 * Format 10 (dataplane/image.h, p53_image_zone.node_base): the indices an image stores are
 * relative to their zone's ranges of nodes[] and rrsets[]; the patch holds nodes and RRsets
 * by their index in the image and reads the stored ones through the zone (rs0, nabs, zrel).
 * New nodes and RRsets are appended at the tables' ends, inside the zone's ranges: when
 * another zone's ranges follow, the zone's are moved to the ends first (zone_to_end), the
 * references other zones hold into it by position following.
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control/bigmem.h"
#include "control/text.h"
#include "control/zone/image_build.h"
#include "control/zone/image_edit.h"
#include "control/zone/image_patch.h"
#include "control/zone/patch_index.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/dnssec.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

/*
 * Format 10 (dataplane/image.h, p53_image_zone.node_base): a node's RRsets, wildcard and
 * occluder, a proof's nodes, the chain's and the NSEC3 hashes' are indices relative to
 * their zone's ranges; the patch holds nodes and RRsets by their index in the image (the
 * patched zone's ranges end the tables, patch_run()). Node nd's first RRset in the image,
 * and node i of nd's zone (P53_NONE kept):
 */
static uint32_t rs0(const void *img, const struct p53_image_node *nd)
{
	return p53_image_zone(img, nd->zone)->rrset_base + nd->rrsets;
}

static uint32_t nabs(const void *img, const struct p53_image_node *nd, uint32_t i)
{
	return i == P53_NONE ? P53_NONE : p53_image_zone(img, nd->zone)->node_base + i;
}

/* Whether node n is one of the image's and lies in its zone's range: outside every range a
 * node is garbage a patch or a splice left (image.h), never read as the zone's. (The patch
 * index may list a node of an image a patch moved the zone in and then declined:
 * patch_run.) */
static bool in_range(const void *img, uint32_t n)
{
	if (n >= p53_image_hdr(img)->n_nodes || p53_image_node_off(img, n) == 0)
		return false; /* (0: a zone's room, image.h node_room) */
	const struct p53_image_zone *zn = p53_image_zone(img, p53_image_node(img, n)->zone);

	return n - zn->node_base < zn->n_nodes;
}

/* A touched name: an owner the diff names, or the apex. */
struct tn {
	uint8_t name[P53_NAME_MAXLEN];
	uint8_t len, labels;
	uint32_t old;           /* its node in the old image, or P53_NONE (a new name) */
	uint32_t parent;        /* old node of the parent name (new and deleted names) */
	uint32_t node;          /* its node in the new image */
	uint32_t rs_first, rs_n; /* its RRsets in the new image (indices into nrs) */
	bool recs;              /* has records in the new content */
	bool old_addr, new_addr;
	bool changed;           /* its RRsets are rewritten */
	bool gone;              /* its last record goes */
	bool dead;              /* ... and nothing is below it: it leaves the index */
	uint32_t wparent;       /* (empty non-terminals above a name that goes) a wildcard's:
				   its parent's node, whose wildcard link goes with it; else
				   P53_NONE */
	bool child;             /* (gone names and empty parents) a live name below it */
	bool n3;                /* an NSEC3 owner (signed zones): found by its hash, not indexed */
	bool sigs_only;         /* (signed zones) a cut, CNAME or DNAME owner: its
				   records must stay, only their RRSIGs may change */
	bool glue_s;            /* (signed zones) glue (signed_glue): it keeps an address */
	bool was_owner, is_owner; /* (NSEC zones) owns an NSEC before, after */
	/* (unsigned zones) what the full compile's nodes_link() gives it in the new image */
	bool cut_now;           /* a cut: an NS RRset below the apex */
	uint32_t occ_now;       /* its occluder (the closest cut above it), or P53_NONE */
	bool deleg;             /* (signed zones) becomes a cut or stops being one (signed_deleg) */
	bool dn_s;              /* (signed zones) a DNAME owner before or after (signed_dname) */
	bool shadow;            /* the zone's name at or below another served zone's apex (out
				   of the name index: shadowed_nodes, shadowed_ok) */
	bool steer_fill;        /* (NSEC zones) a steered owner that lost its own NSEC: its
				   NSEC RRset is a place for the one steer_sign() makes;
				   (NSEC3 zones) a steered owner's own NSEC3 that goes: a place
				   for the one steer_sign3() makes at its hash */
	bool n3_synth;          /* (NSEC3 zones) its old node is the NSEC3 the compile signed
				   for a steered owner (out of the sorted hashes), which the
				   content's NSEC3 at that hash replaces (steer_n3_synth) */
};

/* A set of canonical names: open addressing on a case-folded hash, so a probe in any case
 * finds it (the caller compares exactly). */
struct nset {
	uint32_t *slot;         /* index + 1 into the caller's array; 0 empty */
	uint32_t *hash;         /* fold hash of each entry, by index */
	uint32_t mask;
	uint8_t lens[32];       /* bitmap of the lengths present: a cheap first filter */
	uint64_t bloom[1024];   /* bitmap of qkey(): a cheap second one */
};

/* 16 bits from the length and the first 16 bytes, case-folded: a probe of a million names
 * mostly stops here, before the whole name is hashed. */
static uint32_t qkey(const uint8_t *p, size_t len)
{
	uint64_t w[2] = { 0, 0 };

	memcpy(w, p, len < 16 ? len : 16);
	uint64_t h = ((w[0] | 0x2020202020202020ull) * 0x9e3779b97f4a7c15ull) ^
		     ((w[1] | 0x2020202020202020ull) * 0xc2b2ae3d27d4eb4full) ^ len;
	return (uint32_t)(h >> 48);
}

static uint32_t fhash(const uint8_t *p, size_t len)
{
	uint64_t h = (uint64_t)len * 0x9e3779b97f4a7c15ull, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ (w | 0x2020202020202020ull)) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p + i, len - i);
	h = (h ^ (w | 0x2020202020202020ull)) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return (uint32_t)h;
}

/* For up to n entries whose indices are below max_idx. */
static int nset_init(struct nset *s, size_t n, size_t max_idx)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	memset(s, 0, sizeof(*s));
	s->slot = calloc(cap, sizeof(*s->slot));
	s->hash = calloc(max_idx ? max_idx : 1, sizeof(*s->hash));
	s->mask = (uint32_t)cap - 1;
	return s->slot != NULL && s->hash != NULL ? 0 : -1;
}

static void nset_free(struct nset *s)
{
	free(s->slot);
	free(s->hash);
}

static void nset_add(struct nset *s, uint32_t idx, const uint8_t *name, size_t len)
{
	uint32_t h = fhash(name, len), i = h & s->mask;

	while (s->slot[i] != 0)
		i = (i + 1) & s->mask;
	s->slot[i] = idx + 1;
	s->hash[idx] = h;
	s->lens[len >> 3] |= (uint8_t)(1u << (len & 7));
	uint32_t q = qkey(name, len);
	s->bloom[q >> 6] |= 1ull << (q & 63);
}

static bool eq_fold(const uint8_t *canon, const uint8_t *any, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (canon[i] != p53_lower(any[i]))
			return false;
	return true;
}

/* Index of the touched name equal (ignoring case) to name, or P53_NONE. */
static uint32_t tn_find(const struct nset *s, const struct tn *t, const uint8_t *name, size_t len)
{
	if (!(s->lens[len >> 3] & (1u << (len & 7))))
		return P53_NONE;
	uint32_t q = qkey(name, len);
	if (!(s->bloom[q >> 6] & (1ull << (q & 63))))
		return P53_NONE;
	uint32_t h = fhash(name, len);
	for (uint32_t i = h & s->mask; s->slot[i] != 0; i = (i + 1) & s->mask) {
		uint32_t k = s->slot[i] - 1;
		if (s->hash[k] == h && t[k].len == len && eq_fold(t[k].name, name, len))
			return k;
	}
	return P53_NONE;
}

static void *decline(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void *decline(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return NULL;
}

/* Types whose RRsets may change here: what the image precomputes from them is remade for
 * the touched names (CNAME: the node flag; MX, SRV, SVCB, HTTPS: their additional lists,
 * adds_list) or nothing beyond their own bytes. Not NS (cuts and glue), DNAME (occluders),
 * the DNSSEC records the compile reads (RRSIG: signatures; NSEC, NSEC3, NSEC3PARAM: denial),
 * SOA but at the apex. DS at the apex: the compile keeps it as the apex's data, as knotd
 * does (a child's DS is its parent's, RFC 4035 §3.1.4.1, where a served parent answers it:
 * answer.c's parent_side); nothing precomputed reads it (the apex is no cut, the fast path
 * leaves DS to answer.c). Every other type is data the compile keeps as it reads it
 * (image_build.c and dnssec_build.c read no other type's RDATA): DNSKEY, CDS and CDNSKEY
 * (nothing precomputed reads them; the health canary reads the apex's DNSKEY out of the
 * image), the types above 127 (URI, CAA, AMTRELAY, RESINFO, WALLET, private use such as the
 * TYPE65534 a BIND signer keeps at the apex, RFC 3597 unknown types in TYPEnnn form), and
 * the meta types 128-255 (TSIG, TKEY, ANY...; as knotd, the compile keeps one whose RDATA it
 * reads as data and refuses one it cannot parse with `file:line: reason`: the small compile
 * refuses it as well, the patch declines and the full compile refuses it). Type 0 and OPT
 * (41), which the compile keeps too, still decline (sv_bitmap leaves bit 0 out). */
static bool type_ok(uint16_t type, bool apex)
{
	switch (type) {
	case P53_T_SOA: case P53_T_DS:
		return apex;
	case 0: case P53_T_NS: case P53_T_DNAME: case P53_T_RRSIG: case P53_T_NSEC:
	case 50 /* NSEC3 */: case 51 /* NSEC3PARAM */: case P53_T_OPT:
		return false;
	default:
		return true;
	}
}

/* Unsigned zones: NS too, at the apex (its additional list) and below it (cuts: the patch
 * remakes the CUT and GLUE flags and the occluder links they change, cut_links), and DNAME
 * (the owner's flag; nothing lies below a DNAME owner, RFC 6672 §2.4: dname_links). */
static bool unsigned_type_ok(uint16_t type, bool apex)
{
	return type == P53_T_NS || type == P53_T_DNAME || type == P53_T_DS || type_ok(type, apex);
}

/* Whether a DNAME owner occludes node nd (its occluders, closest first). */
static bool dname_above(const void *img, const struct p53_image_node *nd)
{
	for (const struct p53_image_node *o = nd; o->occluder != P53_NONE;) {
		o = p53_image_nnode(img, o, o->occluder);
		if (o->flags & P53_NODE_DNAME)
			return true;
	}
	return false;
}

/* Signed zones: what the diff may name besides type_ok()'s. RRSIGs (they go with the RRsets
 * they cover, at names that stay), NSEC/NSEC3/NSEC3PARAM (only unchanged records pass the
 * RRset comparison, only their signatures may change). */
static bool signed_type_ok(uint16_t type, bool apex)
{
	switch (type) {
	case P53_T_RRSIG: case P53_T_NSEC: case 50 /* NSEC3 */:
		return true;
	case 51 /* NSEC3PARAM */:
		return apex;
	case P53_T_DS:
		return true; /* at a cut (cut_rrset_ok), at the apex (type_ok) */
	case P53_T_NS:
		return true; /* at a cut (cut_rrset_ok), at the apex (signed_apex_ns) */
	case P53_T_DNAME:
		return true; /* at a DNAME owner that comes, goes or changes (signed_dname; at
			      * the apex signed_apex_dname) */
	default:
		return type_ok(type, apex);
	}
}

/*
 * A signed zone's cut that stays one (its records otherwise only signed again, sigs_only):
 * the RRsets of `type` it may gain or lose (`comes_goes`) or change. DS (RFC 4035 §2.4: a
 * child's keys rolled, a delegation made secure or insecure) comes, changes or goes with its
 * RRSIGs; the NSEC or NSEC3 whose bitmap names it comes in the diff, signed by the primary,
 * and is patched with its chain. Nothing the compiler precomputes reads DS: the proofs of a
 * cut are its NSEC's or its NSEC3 cover's (dnssec_build.c), which answer.c's referral sends
 * only when the cut has no DS, and the fast path's referral templates are DO=0 ones. The NS
 * set (not signed, RFC 4035 §2.2) changes: its additional list is made again (adds_list,
 * glue first) and the referral templates follow the node's RRsets (fastpath.c ref_same).
 */
static bool cut_rrset_ok(const struct tn *t, const struct p53_image_node *od, uint16_t type,
			 bool comes_goes)
{
	return (type == P53_T_DS || (type == P53_T_NS && !comes_goes)) && t->sigs_only &&
	       od != NULL && (od->flags & P53_NODE_CUT) && od->occluder == P53_NONE;
}

/*
 * DS at a signed zone's name below its apex that is no cut before or after the diff (odd
 * data: a child's DS is its parent's at the delegation, RFC 4035 §3.1.4.1). The full
 * compile keeps it as that name's data, as knotd does (kzonecheck takes it): at an
 * authoritative name signed by the zone, named in its NSEC / NSEC3 bitmap, answered from the
 * node (the name is no cut, so no referral carries it and nothing precomputed reads it); at
 * glue occluded data as glue's addresses are (not signed, no NSEC / NSEC3, never answered:
 * the cut above it refers). So it comes, changes and goes as any type of a name with a
 * chain: at a name the image holds, not below a cut or DNAME, or glue (signed_glue and its
 * like, glue_s), or at a new name (its place, authoritative or glue, as any new name's:
 * new_ancestors, glue_parent); not another served zone's parent side, not an NSEC3 owner,
 * becoming no cut (a delegation coming or going is signed_deleg's).
 */
static bool ds_data(const struct tn *t, const struct p53_image_node *od,
		    const struct p53_image_node *md, uint16_t type, bool chain)
{
	if (type != P53_T_DS || !chain || t->shadow || t->n3 ||
	    (md != NULL && (md->flags & P53_NODE_CUT)))
		return false;
	if (od == NULL || t->glue_s)
		return true;
	return !(od->flags & (P53_NODE_APEX | P53_NODE_CUT | P53_NODE_GLUE | P53_NODE_NSEC3)) &&
	       od->occluder == P53_NONE;
}

/*
 * A signed zone's glue whose records may change (a name server renumbered, an address added
 * or removed): a name below a cut (no DNAME above it, itself no cut, CNAME or DNAME owner; a
 * wildcard below a cut is such occluded data too, its WILD flag and its parent's link kept,
 * wild_links). Glue is not signed (RFC 4035 §2.2), owns no NSEC or NSEC3 and has no proof
 * (dnssec_build.c skips it); the patch keeps its node's GLUE flag and occluder. When it gains
 * its first address or loses its last, the lists naming it are made again as any target's
 * (relist_gain, relist_lose).
 */
static bool signed_glue(const void *img, const struct p53_image_node *nd)
{
	return (nd->flags & P53_NODE_GLUE) && nd->occluder != P53_NONE &&
	       !(nd->flags & (P53_NODE_CUT | P53_NODE_DNAME | P53_NODE_CNAME | P53_NODE_NSEC3)) &&
	       (p53_image_nnode(img, nd, nd->occluder)->flags & P53_NODE_CUT) && !dname_above(img, nd);
}

/*
 * A signed zone's name that becomes a cut (NS added: a new delegation, at a new name or at
 * one with records, whose names below become glue) or stops being one (its NS removed: the
 * delegation goes, its glue with it or left as names of the zone). A wildcard too (RFC 4592
 * §4.2: a wildcard owning NS is a cut, its expansions referrals from it, the names below it
 * glue; its WILD flag and its parent's link stay, wild_links). Not the apex, a CNAME or
 * DNAME owner, an NSEC3 owner, nor a name below a cut or a DNAME (for a new name: occ_walk,
 * signed_cuts). What a signer sends with it comes in the diff and is
 * patched as any name's: the name's NSEC or NSEC3 (its bitmap NS, DS, RRSIG; in an opt-out
 * chain an insecure delegation may have none), the NSECs/NSEC3s of names that become glue
 * going, those of glue that becomes authoritative coming, their RRSIGs; the links (CUT,
 * GLUE, occluders) are made again as for an unsigned zone (signed_cuts, signed_links).
 */
static bool signed_deleg(const void *img, const struct tn *t, const struct p53_image_node *od,
			 const struct p53_image_node *md, bool apex)
{
	bool was = od != NULL && (od->flags & P53_NODE_CUT);
	bool is = md != NULL && (md->flags & P53_NODE_CUT);

	if (apex || was == is || t->n3)
		return false;
	if (od != NULL && (od->occluder != P53_NONE || dname_above(img, od) ||
			   (od->flags & (P53_NODE_DNAME | P53_NODE_CNAME |
					 P53_NODE_GLUE | P53_NODE_NSEC3))))
		return false;
	return md == NULL || !(md->flags & (P53_NODE_DNAME | P53_NODE_CNAME));
}

/*
 * A signed zone's name that becomes a DNAME owner, stops being one or changes its DNAME (its
 * target, its TTL), RFC 6672: its records as any name's, the DNAME with them, and the NSEC
 * or NSEC3 a signer sends with it (its bitmap gains or loses DNAME) patched with its chain.
 * What the compiler derives from a DNAME is the owner's flag and the occluder of the names
 * below it, of which there are none (§2.4): as in an unsigned zone (signed_dnames: a name
 * that stays below a new owner declines, dname_links; the flag after the layout,
 * dname_flags). A wildcard too (RFC 4592 §4.4 leaves its use undefined, the compile and
 * knotd take it): its WILD flag and its parent's link as any wildcard's (wild_links), the
 * DNAME flag beside it. Not the apex, an NSEC3 owner, a cut or CNAME owner before or after
 * (the zone does not compile: the small compile declines with its reason), nor a name below
 * a DNAME or a nested cut; glue (below a cut) may gain, change or lose one (glue_dname), a
 * new name below a cut own one.
 */
static bool signed_dname(const void *img, const struct tn *t, const struct p53_image_node *od,
			 const struct p53_image_node *md, bool apex)
{
	bool was = od != NULL && (od->flags & P53_NODE_DNAME);
	bool is = md != NULL && (md->flags & P53_NODE_DNAME);

	if (apex || !(was || is) || t->n3)
		return false;
	/* Glue (below a cut, no DNAME above it) may gain, change or lose a DNAME: occluded
	 * data, not signed, no NSEC or NSEC3, as a new DNAME owner below a cut. */
	bool glue = od != NULL && (od->flags & P53_NODE_GLUE) && od->occluder != P53_NONE &&
		    (p53_image_nnode(img, od, od->occluder)->flags & P53_NODE_CUT) &&
		    !dname_above(img, od);
	if (od != NULL && ((od->occluder != P53_NONE && !glue) ||
			   (od->flags & (P53_NODE_CUT | P53_NODE_CNAME | P53_NODE_NSEC3))))
		return false;
	return md == NULL || !(md->flags & (P53_NODE_CUT | P53_NODE_CNAME));
}

/*
 * A signed zone's apex that becomes a DNAME owner, stops being one, changes its DNAME or
 * keeps it (RFC 6672 §2.3 allows one at the apex), in a zone with a chain: as
 * signed_dname()'s owner, the DNAME and the apex's NSEC or NSEC3 bitmap as a signer sends
 * them. Nothing of the zone may stay below it (§2.4: dname_links' pass, as for any name
 * that becomes an owner; a name new below one that stays fails the small compile) but the
 * NSEC3 owners, hashes and not names of the zone (RFC 5155 §7.1), which the compiler links
 * below nothing (image_build.c nsec3_owner): an NSEC3 zone keeps its apex and its hashed
 * owners, an NSEC zone its apex alone, its NSEC naming itself. While the DNAME stays, the
 * apex's other records (SOA, NS, keys) change as any apex's (not sigs_only).
 */
static bool signed_apex_dname(const struct p53_image_node *od, const struct p53_image_node *md,
			      bool apex)
{
	return apex && ((od != NULL && (od->flags & P53_NODE_DNAME)) ||
			(md != NULL && (md->flags & P53_NODE_DNAME)));
}

/*
 * A signed zone's cut below another cut (nodes_link() flags it CUT and GLUE, its occluder
 * the closest cut above): occluded data as any glue, not signed, no NSEC or NSEC3, no proof;
 * the names below it are occluded by it. No DNAME above it, itself no DNAME, CNAME or
 * wildcard owner.
 */
static bool nested_cut(const void *img, const struct p53_image_node *nd)
{
	return (nd->flags & P53_NODE_CUT) && (nd->flags & P53_NODE_GLUE) &&
	       nd->occluder != P53_NONE &&
	       !(nd->flags & (P53_NODE_DNAME | P53_NODE_CNAME | P53_NODE_WILD | P53_NODE_NSEC3)) &&
	       (p53_image_nnode(img, nd, nd->occluder)->flags & P53_NODE_CUT) && !dname_above(img, nd);
}

/*
 * A signed zone's name below a cut that becomes a cut (NS added at glue, or at an empty
 * non-terminal below the cut), stops being one or changes its NS set (a nested cut,
 * nested_cut): its records as any glue's, NS and DS too (none signed, no NSEC or NSEC3 comes
 * or goes: RFC 4035 §2.2); the links as for any delegation (signed_cuts: the names below it
 * take it, or the cut above, as their occluder). A new name below a cut with NS is
 * signed_deleg's (new glue).
 */
static bool signed_nest(const void *img, const struct tn *t, const struct p53_image_node *od,
			const struct p53_image_node *md, bool apex)
{
	if (apex || t->n3 || od == NULL || (t->name[0] == 1 && t->name[1] == '*'))
		return false;
	if (!nested_cut(img, od) &&
	    !(signed_glue(img, od) && md != NULL && (md->flags & P53_NODE_CUT)))
		return false;
	return md == NULL || !(md->flags & (P53_NODE_DNAME | P53_NODE_CNAME));
}

/*
 * A signed zone's glue that owns a CNAME (below a cut, no DNAME above it, itself no cut,
 * wildcard or DNAME owner): occluded data as any glue (RFC 4035 §2.2: not signed, no NSEC or
 * NSEC3, no proof; a query there gets the cut's referral), so its records change as
 * signed_glue()'s do: the CNAME re-pointed, gone (its name with it, or given an address),
 * glue's address replaced by one, a new name below a cut owning one. What the compiler derives from it is
 * the node's CNAME flag (set at the layout from its RRsets) and the lists naming it, which
 * lose it (relist_lose: no address) or gain it again (relist_gain) as any target's.
 */
static bool glue_cname(const void *img, const struct p53_image_node *nd)
{
	return (nd->flags & P53_NODE_GLUE) && (nd->flags & P53_NODE_CNAME) &&
	       nd->occluder != P53_NONE &&
	       !(nd->flags & (P53_NODE_CUT | P53_NODE_DNAME | P53_NODE_WILD | P53_NODE_NSEC3)) &&
	       (p53_image_nnode(img, nd, nd->occluder)->flags & P53_NODE_CUT) && !dname_above(img, nd);
}

/*
 * A signed zone's DNAME owner below a cut (no cut itself, no DNAME above it): occluded data
 * as any glue (not signed, no NSEC or NSEC3, no proof; a query there gets the cut's
 * referral); its DNAME changes or goes as signed_dname()'s, the owner's flag after the
 * layout (dname_flags).
 */
static bool glue_dname(const void *img, const struct p53_image_node *nd)
{
	return (nd->flags & P53_NODE_GLUE) && (nd->flags & P53_NODE_DNAME) &&
	       nd->occluder != P53_NONE &&
	       !(nd->flags & (P53_NODE_CUT | P53_NODE_CNAME | P53_NODE_WILD | P53_NODE_NSEC3)) &&
	       (p53_image_nnode(img, nd, nd->occluder)->flags & P53_NODE_CUT) && !dname_above(img, nd);
}

/* Whether a new name may stand below node nd of a signed zone as new glue: nd is a cut no
 * cut or DNAME occludes (a wildcard owning NS too), glue (signed_glue) or a nested cut
 * (nested_cut). */
static bool glue_parent(const void *img, const struct p53_image_node *nd)
{
	return ((nd->flags & P53_NODE_CUT) && nd->occluder == P53_NONE &&
		!(nd->flags & (P53_NODE_DNAME | P53_NODE_NSEC3))) ||
	       signed_glue(img, nd) || nested_cut(img, nd);
}

/*
 * An NSEC zone's cut that stays one may lose or gain its NSEC (with its RRSIG): a cut that
 * comes above it makes it a nested cut, glue, which owns none (RFC 4035 §2.3); the chain is
 * patched as for any owner that leaves or joins (nsec_plan).
 */
static bool cut_nsec_ok(const struct tn *t, const struct p53_image_node *od, uint16_t type,
			bool nsec_ok)
{
	return nsec_ok && type == P53_T_NSEC && t->sigs_only && od != NULL &&
	       (od->flags & P53_NODE_CUT);
}

/*
 * A signed zone's CNAME owner whose records may change as any name's (not only its RRSIGs):
 * in a zone with an NSEC or NSEC3 chain, an authoritative name (no cut or DNAME above it,
 * itself no cut, glue or NSEC3 owner). What the compiler derives from a CNAME is its owner's
 * P53_NODE_CNAME flag (set from the RRsets at the layout, as for an unsigned zone) and
 * nothing else: a CNAME RRset has no additional list, the proofs (dnssec_build.c) read which
 * names and NSEC/NSEC3 owners exist, never their types, and answer.c follows the target at
 * query time. Its type bitmap's change comes in the diff with the NSEC or NSEC3, signed by
 * the primary, and is patched with its chain; the lists naming a name that becomes a CNAME
 * owner (it loses its addresses) or stops being one are made again as any target's
 * (relist_lose, relist_gain).
 */
static bool signed_cname(const struct p53_image_node *nd, bool chain)
{
	return chain && (nd->flags & P53_NODE_CNAME) && nd->occluder == P53_NONE &&
	       !(nd->flags & (P53_NODE_CUT | P53_NODE_DNAME | P53_NODE_GLUE | P53_NODE_NSEC3));
}

/*
 * A signed zone's apex NS RRset changed (records or TTL; it is signed, its RRSIGs come with
 * it): not gained or lost (the zone keeps its apex NS). Nothing precomputed reads it but its
 * additional list, made again by adds_list as for an unsigned zone's apex NS (the apex is no
 * cut: no glue first); the fast path's referral templates are cuts' only (fastpath.c
 * ref_apex_ns).
 */
static bool signed_apex_ns(const struct p53_image_rrset *x, const struct p53_image_rrset *y,
			   bool apex)
{
	return apex && x != NULL && y != NULL && x->type == P53_T_NS && y->type == P53_T_NS;
}

/*
 * A signed zone's apex NS RRset that comes or goes (a zone given its first name servers, or
 * left with none: the compiler takes both, RFC 1035 §5.2 asks for NS at the apex but nothing
 * the image holds reads it), with its RRSIGs and the apex's NSEC or NSEC3 whose bitmap
 * gains or loses NS, which come in the diff and are patched with its chain (a zone with
 * one: nsec_ok or n3_ok). As for a changed apex NS set (signed_apex_ns) nothing precomputed
 * reads it but its additional list, made by adds_list for a new one; the fast path's
 * referral templates are cuts' only (fastpath.c ref_apex_ns).
 */
static bool signed_apex_ns_set(uint16_t type, bool apex, bool chain)
{
	return apex && chain && type == P53_T_NS;
}

/* The hash an NSEC3 owner name's first label spells (base32hex, RFC 4648 §7). */
static int n3_hash_of(const uint8_t *name, uint8_t out[P53_NSEC3_HASH_LEN])
{
	uint64_t acc = 0;
	int bits = 0, o = 0;

	if (name[0] != 32)
		return -1;
	for (int i = 1; i <= 32; i++) {
		uint8_t c = name[i], v;
		if (c >= '0' && c <= '9')
			v = (uint8_t)(c - '0');
		else if (c >= 'a' && c <= 'v')
			v = (uint8_t)(c - 'a' + 10);
		else
			return -1;
		acc = acc << 5 | v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	return 0;
}

/* The node of an NSEC3 owner name of signed zone zn (hashed owners are not in the name
 * index): its first label, base32hex (RFC 4648 §7) of a SHA-1 hash, looked up in the zone's
 * sorted hashes. P53_NONE when the name is no such owner. */
static uint32_t n3_node(const void *img, const struct p53_image_zone *zn, const uint8_t *name,
			size_t len)
{
	uint8_t hash[P53_NSEC3_HASH_LEN];

	if (!(zn->dnssec & P53_ZONE_NSEC3) || name[0] != 32 || len != 33u + zn->name_len ||
	    memcmp(name + 33, p53_image_name(img, zn->name_off), zn->name_len) != 0 ||
	    n3_hash_of(name, hash) != 0)
		return P53_NONE;
	const struct p53_image_nsec3 *t = p53_image_nsec3(img) + zn->proof_lo;
	size_t lo = 0, hi = zn->proof_n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(t[mid].hash, hash, P53_NSEC3_HASH_LEN);
		if (c == 0)
			return zn->node_base + t[mid].node; /* (relative to its zone) */
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return P53_NONE;
}

/* The earliest expiration of the RRSIGs pre-encoded after an RRset's records, resolved
 * around now as the compiler does (RFC 4034 §3.1.5, serial-number time); 0 if none. */
static uint64_t sigs_expire(const void *img, const struct p53_image_rrset *rs, time_t now)
{
	const uint8_t *q = p53_image_rdata(img, rs) + rs->rdata_len;
	uint64_t min = 0;

	for (uint32_t k = 0; k < rs->sig_count; k++) {
		/* owner pointer, TYPE CLASS TTL RDLENGTH, then covered(2) alg labels ttl(4) exp */
		const uint8_t *ep = q + P53_RR_OWNER_LEN + 10 + 8;
		uint32_t e = (uint32_t)ep[0] << 24 | (uint32_t)ep[1] << 16 | (uint32_t)ep[2] << 8 | ep[3];
		int64_t t = (int64_t)now + (int32_t)(e - (uint32_t)now);
		uint64_t x = t > 0 ? (uint64_t)t : 1;
		if (min == 0 || x < min)
			min = x;
		q += P53_RR_OWNER_LEN + 10u + p53_get16(q + P53_RR_OWNER_LEN + 8);
	}
	return min;
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static bool rrset_same(const void *a, const struct p53_image_rrset *x, const void *b,
		       const struct p53_image_rrset *y)
{
	return x->type == y->type && x->count == y->count && x->ttl == y->ttl &&
	       x->rdata_len == y->rdata_len && x->sig_count == y->sig_count &&
	       x->sig_len == y->sig_len && x->flags == y->flags &&
	       memcmp(p53_image_rdata(a, x), p53_image_rdata(b, y), (size_t)x->rdata_len + x->sig_len) == 0;
}

/* The same records, whatever signatures follow them (a signed zone's RRset re-signed). */
static bool records_same(const void *a, const struct p53_image_rrset *x, const void *b,
			 const struct p53_image_rrset *y)
{
	return x->type == y->type && x->count == y->count && x->ttl == y->ttl &&
	       x->rdata_len == y->rdata_len && x->flags == y->flags &&
	       memcmp(p53_image_rdata(a, x), p53_image_rdata(b, y), x->rdata_len) == 0;
}

static bool has_addr(const void *img, const struct p53_image_node *nd)
{
	for (uint32_t i = rs0(img, nd), end = i + nd->n_rrsets; i < end; i++) {
		uint16_t t = p53_image_rrset(img, i)->type;
		if (t == P53_T_A || t == P53_T_AAAA)
			return true;
	}
	return false;
}

/* A node whose block moved from section offset `from` (blocks_append): its slot, if it has
 * one, names the block's new place. */
static void index_move(uint64_t *slots, uint32_t mask, uint32_t hash, uint32_t from, uint32_t to)
{
	for (uint32_t i = hash & mask; slots[i] != 0; i = (i + 1) & mask)
		if (slots[i] == p53_image_slot(hash, from)) {
			slots[i] = p53_image_slot(hash, to);
			return;
		}
}

static int depth_cmp(const void *a, const void *b, void *arg)
{
	const struct tn *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (t[y].labels > t[x].labels) - (t[y].labels < t[x].labels);
}

/* The working state; everything freed at the end. */
struct patch {
	struct tn *t;
	size_t n_t;
	uint32_t nb, rb;                /* the patched zone's node and RRset bases (image.h), the
					   same in the old image and the new one (patch_run) */
	uint32_t nn0, nr0;              /* its first new node and RRset: where its ranges end,
					   in its room (image.h, node_room) or at the tables'
					   ends */
	bool must_move;                 /* its room is too small: move it first (zone_to_end) */
	struct nset ts;                 /* touched names */
	struct p53_image_rrset *nrs;    /* RRsets to append */
	uint32_t *nrs_old;              /* for each: the old RRset it keeps, or P53_NONE (new
					   records, at nrs_rd into nrd) */
	uint32_t *nrs_rd;               /* for each new one: its records' offset in nrd */
	size_t n_nrs, nrs_cap, nrs_old_cap, nrs_rd_cap;
	uint8_t *nrd;                   /* records to append to rdata[] */
	size_t nrd_len, nrd_cap;
	uint32_t *nadds;                /* additional lists to append */
	size_t n_nadds, nadds_cap;
	struct p53_rrs mini;
	struct p53_rrs own;             /* result NULL: the touched names' records after the diff */
	void *spare;                    /* a malloc'd buffer the new image may reuse */
	void *mimg;
	void *moved;                    /* img with the zone's ranges at the tables' ends
					   (zone_to_end), or NULL */
	struct pend *pend;              /* missing ancestors of new names (new_ancestors) */
	size_t n_pend, pend_cap;
	size_t n_ext;                   /* empty non-terminals that may go, after t[n_t] */
	uint32_t *relist;               /* (old RRset, its new additional list) pairs */
	size_t n_relist, relist_cap;
	struct shadow *sh;              /* targets a zone holds below another's apex (shadow_node) */
	size_t n_sh, sh_cap;
	struct p53_patch_index *ix;     /* NULL, or what is kept about img between IXFRs */
	uint32_t *cand;                 /* nodes the index lists for the names that gain addresses */
	size_t n_cand, cand_cap;
	/* An NSEC zone whose chain or node set changes (nsec_plan, nsec_proofs). */
	bool nsec_redo;
	uint32_t cz0, cz1;              /* the zone's part of the old chain[] */
	uint32_t *zc;                   /* the zone's new part (nodes), n_zc of them */
	size_t n_zc;
	struct nsec_ins *ins;           /* owners that join, sorted by (gap, canonical name) */
	size_t n_ins;
	uint32_t *rem;                  /* old positions (zone-relative) of owners that leave */
	size_t n_rem;
	uint32_t *before;               /* per old gap b (before old owner b): owners before it
					   in the new chain, old ones kept and new ones */
	uint8_t *gap_ins;               /* per old gap: 1 when owners join there */
	/* An NSEC3 zone whose nodes or hashes change (n3_plan, n3_proofs). */
	bool n3_redo;
	struct p53_image_nsec3 *n3j;    /* hashes that join, sorted, with their new nodes */
	size_t n_n3j;
	uint32_t *n3l;                  /* where the hashes that leave stand in the zone's old
					   table (zone-relative), sorted */
	size_t n_n3l;
	uint8_t *n3mk;                  /* bit per old node: an owner whose hash leaves or after
					   which hashes join (proofs naming it are made again) */
	uint32_t *n3r;                  /* nodes whose proofs are made again */
	/* An unsigned zone whose cuts change at names that have names below them (cut_below). */
	uint32_t *desc;                 /* (node, its new occluder) pairs */
	size_t n_desc, desc_cap;
	bool sg_links;                  /* a signed zone's cuts or glue come or go (signed_cuts) */
	bool sg_dname;                  /* a signed zone's DNAME owners come, go or change
					   (signed_dnames) */
	bool glue_redo;                 /* names become or stop being glue: the proofs are
					   made again even when no owner comes or goes
					   (glue_proofs) */
	/* The parent side of a served child (shadowed_nodes): the zone's old nodes at the
	 * touched shadowed names' ancestors there (shadow_at), and the zone itself. */
	struct shadow *sa;
	size_t n_sa, sa_cap;
	uint32_t sz;
	bool above;                     /* a cut or DNAME above a served child's apex comes or
					   goes, or a name new there: the shadowed names'
					   occluders made again (occ_above) */
	/* A signed zone's steered owners whose NSEC (the one pop53 signs) changes with the chain:
	 * touched from the plan (steer_near), made and signed before the layout (steer_sign). */
	const struct p53_patch_sign *sign;
	bool signed_nsec;               /* steer_sign signed one: its expiration counts */
	/* An NSEC3 zone's steered owners near the diff and the NSEC3 matching each in the old
	 * image (its own, or the one the compile signed for it): steer_n3_owners(). */
	struct s3 *s3;
	size_t n_s3, s3_cap;
};

/* Node n of the image (P53_NONE kept) relative to the patched zone's range: what the new
 * image's links and tables hold (image.h). */
static uint32_t zrel(const struct patch *p, uint32_t n)
{
	return n == P53_NONE ? P53_NONE : n - p->nb;
}

/* A steered owner (old node) and the NSEC3 owner node matching it in the old image. */
struct s3 {
	uint32_t owner, n3;
};

/* An owner joining an NSEC chain: its gap in the old chain (the old owners before it) and its
 * touched name. */
struct nsec_ins {
	uint32_t k, ti;
};

/* A name a zone holds below another served zone's apex, and its node there (or P53_NONE). */
struct shadow {
	uint8_t name[P53_NAME_MAXLEN];
	uint8_t len;
	uint32_t zone, node;
};

/* At most this many such names looked up per patch (one scan of the nodes each). */
#define SHADOW_MAX 32

/* A name that is not in the image, above a new name. */
struct pend {
	uint8_t name[P53_NAME_MAXLEN];
	uint8_t len;
};

static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * sz);
	if (q == NULL)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* A canonical name's node in the new image and whether it has addresses then (touched
 * names as the patch leaves them, others as they are), or P53_NONE. */
static uint32_t node_now(const struct patch *p, const void *img, const uint8_t *nm, size_t len,
			 bool *addr)
{
	uint32_t k = tn_find(&p->ts, p->t, nm, len);

	*addr = false;
	if (k != P53_NONE && !p->t[k].shadow) { /* (a shadowed name is not the indexed one) */
		const struct tn *t = &p->t[k];
		if (t->changed) {
			*addr = t->new_addr;
			return t->dead ? P53_NONE : t->node;
		}
		*addr = t->old_addr;
		return t->old;
	}
	uint32_t m = p53_image_find(img, nm, len, p53_name_hash(nm, len));
	if (m != P53_NONE) {
		const struct p53_image_node *nd = p53_image_node(img, m);
		*addr = has_addr(img, nd);
	}
	return m;
}

/* The compiler (adds_make) looks for a target in the owner's zone first, then in the
 * deepest served zone holding it: the same node, unless the owner's zone holds the name
 * below a deeper served zone's apex (its own copy, out of the name index). -1 then. */
static int target_plain(const void *img, uint32_t oz, const uint8_t *nm, size_t len)
{
	const uint8_t *q = nm;
	size_t ql = len;
	uint32_t dz = P53_NONE;

	for (;;) {
		uint32_t m = p53_image_find(img, q, ql, p53_name_hash(q, ql));
		if (m != P53_NONE && (p53_image_node(img, m)->flags & P53_NODE_APEX)) {
			dz = p53_image_node(img, m)->zone;
			break;
		}
		if (ql <= 1)
			break;
		ql -= 1u + q[0];
		q += 1u + q[0];
	}
	const struct p53_image_zone *zo = p53_image_zone(img, oz);
	if (dz != oz && p53_name_at_or_below(nm, len, p53_image_name(img, zo->name_off), zo->name_len))
		return -1;
	return 0;
}

/* A touched name of the patched zone at or below another served zone's apex (shadowed_nodes)
 * as the patch leaves it: its node in *node (a new one's, P53_NONE when it leaves), true;
 * false for any other name or zone. */
static bool shadow_touched(const struct patch *p, uint32_t oz, const uint8_t *nm, size_t len,
			   uint32_t *node)
{
	uint32_t k = p->n_t > 0 ? tn_find(&p->ts, p->t, nm, len) : P53_NONE;

	if (k == P53_NONE || !p->t[k].shadow || oz != p->sz)
		return false;
	const struct tn *t = &p->t[k];
	*node = !t->changed ? t->old : t->dead ? P53_NONE : t->node;
	return true;
}

/*
 * Zone oz's own node for canonical name nm that oz holds below a deeper served zone's apex
 * (target_plain -1): out of the name index, so found by one scan of the nodes (remembered
 * for the patch; whether it has addresses: own_addr). *node is P53_NONE when oz has
 * none. @return 0, -1 more than SHADOW_MAX names or
 * out of memory.
 */
static int shadow_node(struct patch *p, const void *img, uint32_t oz, const uint8_t *nm,
		       size_t len, uint32_t *node)
{
	if (shadow_touched(p, oz, nm, len, node))
		return 0;
	for (size_t i = 0; i < p->n_sh; i++)
		if (p->sh[i].zone == oz && p->sh[i].len == len && memcmp(p->sh[i].name, nm, len) == 0) {
			*node = p->sh[i].node;
			return 0;
		}
	if (p->n_sh == SHADOW_MAX ||
	    grow((void **)&p->sh, &p->sh_cap, p->n_sh + 1, sizeof(*p->sh)) != 0)
		return -1;
	const struct p53_image_zone *zo = p53_image_zone(img, oz);
	uint32_t found = P53_NONE;
	for (uint32_t n = zo->node_base; n < zo->node_base + zo->n_nodes && found == P53_NONE; n++) {
		const struct p53_image_node *nd = p53_image_node(img, n);
		if (nd->name_len == len && !(nd->flags & P53_NODE_NSEC3) &&
		    memcmp(p53_image_node_name(img, nd), nm, len) == 0)
			found = n;
	}
	struct shadow *e = &p->sh[p->n_sh++];
	memcpy(e->name, nm, len);
	e->len = (uint8_t)len;
	e->zone = oz;
	e->node = found;
	*node = found;
	return 0;
}

/* Whether zone's own node `own` below another served zone's apex (shadow_node) has
 * addresses in the new image: a touched one's as the patch leaves it (shadowed_ok). */
static bool own_addr(const struct patch *p, const void *img, uint32_t own)
{
	for (size_t i = 0; i < p->n_t; i++)
		if (p->t[i].shadow && p->t[i].changed && p->t[i].node == own)
			return p->t[i].new_addr; /* a new node's (shadow_touched) too */
	const struct p53_image_node *od = p53_image_node(img, own);
	uint32_t k = tn_find(&p->ts, p->t, p53_image_node_name(img, od), od->name_len);

	if (k != P53_NONE && p->t[k].shadow && p->t[k].old == own && p->t[k].changed)
		return p->t[k].new_addr;
	return has_addr(img, od);
}

/* Shadowed touched name t (shadowed_nodes) loses its last address while the served zone's
 * copy (the indexed node) has some: the compiler lists that copy instead, so the lists
 * naming it are made again as for a name that gains (relist_gain), not cut (relist_lose). */
static bool shadow_swap(const void *img, const struct tn *t)
{
	if (!t->shadow || !t->changed || !t->old_addr || t->new_addr)
		return false;
	uint32_t m = p53_image_find(img, t->name, t->len, p53_name_hash(t->name, t->len));
	return m != P53_NONE && has_addr(img, p53_image_node(img, m));
}

/* Whether the lists naming touched name t are made again (it gains its first address, or
 * shadow_swap), or cut (it loses its last). */
static bool addr_gains(const void *img, const struct tn *t)
{
	return t->changed && ((t->new_addr && !t->old_addr) || shadow_swap(img, t));
}

static bool addr_loses(const void *img, const struct tn *t)
{
	return t->changed && t->old_addr && !t->new_addr && !shadow_swap(img, t);
}

/*
 * The additional list of an RRset (type, `count` pre-encoded records at rd) of `owner` in
 * zone oz, `cut` when it is a cut's NS, as adds_make() in image_build.c makes it, over the
 * names as the patch leaves them: appended to p->nadds, its index in the new image's adds[]
 * (P53_NONE: empty) in *out. -1 (the target in txt): declined.
 */
static int adds_list(struct patch *p, const void *img, size_t n_adds_old, uint32_t oz,
		     const uint8_t *owner, size_t owner_len, bool cut, uint16_t type,
		     const uint8_t *rd, uint32_t count, uint32_t *out, char *txt, size_t tl_cap)
{
	int skip = p53_target_skip(type);
	size_t at = p->n_nadds;
	uint32_t n = 0, req = 0;

	*out = P53_NONE;
	if (skip < 0)
		return 0;
	for (uint32_t k = 0; k < count; k++) {
		rd += P53_RR_OWNER_LEN;
		uint16_t rdlen = p53_get16(rd + 8);
		const uint8_t *r = rd + 10;
		rd += 10u + rdlen;
		int tl = rdlen > (uint32_t)skip ? p53_name_len(r + skip, rdlen - (size_t)skip) : -1;
		if (tl < 0)
			continue;
		uint8_t t[P53_NAME_MAXLEN];
		bool addr;
		p53_name_lower(t, r + skip, (size_t)tl);
		uint32_t m = P53_NONE;
		if (target_plain(img, oz, t, (size_t)tl) != 0) {
			/* The zone's own copy first, as the compiler takes it, when it has
			 * addresses; else the served one (another zone's). */
			uint32_t own;
			if (shadow_node(p, img, oz, t, (size_t)tl, &own) != 0) {
				p53_name_to_str(txt, tl_cap, t);
				return -1;
			}
			if (own != P53_NONE && own_addr(p, img, own))
				m = own;
		}
		if (m == P53_NONE) {
			m = node_now(p, img, t, (size_t)tl, &addr);
			if (m == P53_NONE || !addr)
				continue;
		}
		/* Stored relative to the owner's zone, another zone's node modulo 2^32 (image.h,
		 * p53_image_znode()). */
		m -= p53_image_zone(img, oz)->node_base;
		bool dup = false;
		for (uint32_t q = 0; q < n; q++)
			dup |= p->nadds[at + 1 + q] == m;
		if (dup)
			continue;
		if (grow((void **)&p->nadds, &p->nadds_cap, at + n + 2, sizeof(uint32_t)) != 0)
			return -1;
		if (cut && p53_name_at_or_below(t, (size_t)tl, owner, owner_len)) {
			memmove(&p->nadds[at + 2 + req], &p->nadds[at + 1 + req], (n - req) * sizeof(uint32_t));
			p->nadds[at + 1 + req++] = m;
			n++;
		} else {
			p->nadds[at + 1 + n++] = m;
		}
	}
	if (n > 0) {
		p->nadds[at] = n | req << 16;
		p->n_nadds = at + 1 + n;
		*out = (uint32_t)(n_adds_old + at);
	}
	return 0;
}

/* Every RRset of the image naming a name of `gain` (names gaining their first address)
 * gets its list made again: (RRset, list) pairs in p->relist, sorted. The nodes read are
 * cand[0..n_cand) (ascending, no duplicates: those the patch index lists for the names),
 * or with cand NULL every node; their NS/MX/SRV/SVCB/HTTPS records are read. -1: declined
 * (or out of memory). */
static int relist_gain(struct patch *p, const void *img, const struct nset *gain,
		       const uint32_t *cand, size_t n_cand, size_t n_adds_old, uint64_t *garbage,
		       char *txt, size_t tl_cap)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	size_t n_read = cand != NULL ? n_cand : h->n_nodes;

	txt[0] = '\0';
	for (size_t c = 0; c < n_read; c++) {
		uint32_t n = cand != NULL ? cand[c] : (uint32_t)c;
		const struct p53_image_node *nd = p53_image_node(img, n);
		if ((nd->flags & P53_NODE_NSEC3) || !in_range(img, n))
			continue;
		for (uint32_t r = rs0(img, nd), r_end = r + nd->n_rrsets; r < r_end; r++) {
			const struct p53_image_rrset *rs = p53_image_rrset(img, r);
			int skip = p53_target_skip(rs->type);
			if (skip < 0)
				continue;
			const uint8_t *rd = p53_image_rdata(img, rs);
			bool hit = false;
			for (uint32_t k = 0; k < rs->count && !hit; k++) {
				const uint8_t *t;
				size_t tl;
				rd = p53_target_rr(rd, skip, &t, &tl);
				hit = tl > 0 && tn_find(gain, p->t, t, tl) != P53_NONE;
			}
			if (!hit)
				continue;
			uint32_t list;
			if (adds_list(p, img, n_adds_old, nd->zone, p53_image_node_name(img, nd),
				      nd->name_len, rs->type == P53_T_NS && (nd->flags & P53_NODE_CUT),
				      rs->type, p53_image_rdata(img, rs), rs->count, &list, txt, tl_cap) != 0)
				return -1;
			if (grow((void **)&p->relist, &p->relist_cap, 2 * (p->n_relist + 1), sizeof(uint32_t)) != 0)
				return -1;
			p->relist[2 * p->n_relist] = r;
			p->relist[2 * p->n_relist + 1] = list;
			p->n_relist++;
			if (rs->adds != P53_NONE)
				*garbage += (1u + P53_ADDS_COUNT(*p53_image_adds(img, rs->adds))) * sizeof(uint32_t);
		}
	}
	if (p->n_relist > 1)
		qsort(p->relist, p->n_relist, 2 * sizeof(uint32_t), u32_cmp);
	return 0;
}

/*
 * The RRsets whose additional lists name a node of lose[0..n_lose) (sorted: nodes losing
 * their last address), read among cand[0..n_cand) (ascending, no duplicates: the nodes the
 * patch index lists for those names, a superset), or with cand NULL every node: each gets its list without them (in the order kept, the
 * required ones counted again), made once per old list, as (RRset, list) pairs in
 * p->relist, sorted (P53_NONE: left empty). An RRset relist_gain made a list for keeps it
 * (made over the names as the patch leaves them). With the index, O(the lists naming
 * them): no other list or RRset of the image is read. -1: out of memory.
 */
static int relist_lose(struct patch *p, const void *img, const uint32_t *lose, size_t n_lose,
		       const uint32_t *cand, size_t n_cand, size_t n_adds_old, uint64_t *garbage)
{
	uint32_t *pr = NULL;            /* (old list, RRset, its zone's node base) */
	size_t n_pr = 0, pr_cap = 0;
	size_t n_gained = p->n_relist;  /* sorted, bsearched below */

	size_t n_read = cand != NULL ? n_cand : p53_image_hdr(img)->n_nodes;

	for (size_t c = 0; c < n_read; c++) {
		uint32_t n = cand != NULL ? cand[c] : (uint32_t)c;
		const struct p53_image_node *nd = p53_image_node(img, n);
		if ((nd->flags & P53_NODE_NSEC3) || !in_range(img, n))
			continue;
		uint32_t nb = p53_image_zone(img, nd->zone)->node_base;
		for (uint32_t r = rs0(img, nd), r_end = r + nd->n_rrsets; r < r_end; r++) {
			const struct p53_image_rrset *rs = p53_image_rrset(img, r);
			if (rs->adds == P53_NONE || p53_target_skip(rs->type) < 0 ||
			    (n_gained > 0 && bsearch(&r, p->relist, n_gained, 2 * sizeof(uint32_t),
						     u32_cmp) != NULL))
				continue;
			const uint32_t *l = p53_image_adds(img, rs->adds);
			bool hit = false;
			for (uint32_t k = 0; k < P53_ADDS_COUNT(l[0]) && !hit; k++) {
				uint32_t m = nb + l[1 + k]; /* in the image (modulo 2^32) */
				hit = bsearch(&m, lose, n_lose, sizeof(*lose), u32_cmp) != NULL;
			}
			if (!hit)
				continue;
			if (grow((void **)&pr, &pr_cap, 3 * (n_pr + 1), sizeof(uint32_t)) != 0) {
				free(pr);
				return -1;
			}
			pr[3 * n_pr] = rs->adds;
			pr[3 * n_pr + 1] = r;
			pr[3 * n_pr + 2] = nb;
			n_pr++;
		}
	}
	if (n_pr > 1)
		qsort(pr, n_pr, 3 * sizeof(uint32_t), u32_cmp);
	uint32_t list = P53_NONE;
	for (size_t j = 0; j < n_pr; j++) {
		uint32_t at = pr[3 * j], nb = pr[3 * j + 2];
		if (j == 0 || at != pr[3 * (j - 1)]) {
			const uint32_t *l = p53_image_adds(img, at);
			uint32_t cnt = P53_ADDS_COUNT(l[0]), req = P53_ADDS_REQUIRED(l[0]);
			uint32_t keep = 0, kreq = 0;
			size_t base = p->n_nadds;
			if (grow((void **)&p->nadds, &p->nadds_cap, base + 1 + cnt, sizeof(uint32_t)) != 0) {
				free(pr);
				return -1;
			}
			for (uint32_t k = 0; k < cnt; k++) {
				uint32_t m = nb + l[1 + k];
				if (bsearch(&m, lose, n_lose, sizeof(*lose), u32_cmp) != NULL)
					continue;
				p->nadds[base + 1 + keep++] = l[1 + k];
				kreq += k < req;
			}
			*garbage += (1u + cnt) * sizeof(uint32_t);
			list = P53_NONE;
			if (keep > 0) {
				p->nadds[base] = keep | kreq << 16;
				p->n_nadds = base + 1 + keep;
				list = (uint32_t)(n_adds_old + base);
			}
		}
		if (grow((void **)&p->relist, &p->relist_cap, 2 * (p->n_relist + 1), sizeof(uint32_t)) != 0) {
			free(pr);
			return -1;
		}
		p->relist[2 * p->n_relist] = pr[3 * j + 1];
		p->relist[2 * p->n_relist + 1] = list;
		p->n_relist++;
	}
	free(pr);
	if (p->n_relist > 1)
		qsort(p->relist, p->n_relist, 2 * sizeof(uint32_t), u32_cmp);
	return 0;
}

/*
 * The nodes whose records name a touched name gaining its first address (gain) or losing
 * its last one (!gain), from the patch index (built from this image the first time), in
 * p->cand: ascending, no duplicates, a superset. false: no index, or out of memory (the
 * caller reads every node).
 */
static bool naming_nodes(struct patch *p, const void *img, bool gain)
{
	bool ok = p->ix != NULL && (p53_patch_index_has_targets(p->ix) ||
				    p53_patch_index_targets_build(p->ix, img) == 0);

	p->n_cand = 0;
	for (size_t i = 0; i < p->n_t && ok; i++) {
		const struct tn *t = &p->t[i];
		if (gain ? addr_gains(img, t) : addr_loses(img, t))
			ok = p53_patch_index_targets_find(p->ix, t->name, t->len, &p->cand,
							  &p->n_cand, &p->cand_cap) == 0;
	}
	if (ok && p->n_cand > 1) {
		qsort(p->cand, p->n_cand, sizeof(*p->cand), u32_cmp);
		size_t m = 1;
		for (size_t i = 1; i < p->n_cand; i++)
			if (p->cand[i] != p->cand[m - 1])
				p->cand[m++] = p->cand[i];
		p->n_cand = m;
	}
	return ok;
}

/*
 * A DNAME owner (in the image) above a new name: taken when the owner is a touched name,
 * whose records the small compile holds beside the new name's, so a DNAME that stays fails
 * it there ("data below the DNAME", RFC 6672 §2.4) as the full compile fails, and one that
 * goes leaves the name a plain ancestor (in a signed zone, signed_dname: its NSEC or NSEC3
 * loses DNAME in the diff).
 */
static bool dname_goes_ok(const struct patch *p, const uint8_t *nm, size_t len)
{
	return tn_find(&p->ts, p->t, nm, len) != P53_NONE;
}

/* Queues name q (ql bytes) as an ancestor to add. */
static int pend_push(struct patch *p, const uint8_t *q, size_t ql)
{
	if (grow((void **)&p->pend, &p->pend_cap, p->n_pend + 1, sizeof(*p->pend)) != 0)
		return -1;
	memcpy(p->pend[p->n_pend].name, q, ql);
	p->pend[p->n_pend++].len = (uint8_t)ql;
	return 0;
}

/* The names above new name t up to the first one in the image (which must be in the zone,
 * no DNAME owner nor below one; in a signed zone not a cut, glue or below an occluder,
 * unless a cut or glue the new name is glue below: glue_parent): they would be new empty
 * non-terminals (wildcard ones too, wild_links). Queued in p->pend (duplicates allowed).
 * -1: declined; -2: declined, a DNAME owner that stays above it. */
static int new_ancestors(struct patch *p, const void *img, uint32_t z, size_t apex_len,
			 const struct tn *t, bool sgn)
{
	const uint8_t *q = t->name + 1 + t->name[0];
	size_t ql = t->len - 1u - t->name[0];

	for (;;) {
		uint32_t m = p53_image_find(img, q, ql, p53_name_hash(q, ql));
		if (m != P53_NONE) {
			const struct p53_image_node *nd = p53_image_node(img, m);
			if (nd->zone == z && (nd->flags & P53_NODE_DNAME) && !dname_goes_ok(p, q, ql))
				return -2; /* RFC 6672 §2.4: the zone would not compile */
			if (nd->zone != z || (nd->flags & P53_NODE_NSEC3) ||
			    ((nd->flags & P53_NODE_DNAME) && !dname_goes_ok(p, q, ql)) ||
			    dname_above(img, nd) ||
			    (sgn && ((nd->flags & (P53_NODE_CUT | P53_NODE_GLUE)) ||
				     nd->occluder != P53_NONE) && !glue_parent(img, nd)))
				return -1;
			return 0;
		}
		/* Not in the index: a missing name, or an NSEC3 owner (hashed names have none
		 * below them in a zone the patch takes). */
		if (ql <= apex_len ||
		    n3_node(img, p53_image_zone(img, z), q, ql) != P53_NONE)
			return -1;
		if (pend_push(p, q, ql) != 0)
			return -1;
		ql -= 1u + q[0];
		q += 1u + q[0];
	}
}

/* The queued ancestors become touched names (new, no records of their own). */
static int add_ancestors(struct patch *p)
{
	if (p->n_pend == 0)
		return 0;
	size_t cap = p->n_t + p->n_pend;
	struct tn *t2 = realloc(p->t, cap * sizeof(*p->t));
	if (t2 == NULL)
		return -1;
	p->t = t2;
	nset_free(&p->ts);
	if (nset_init(&p->ts, cap, cap) != 0)
		return -1;
	for (size_t i = 0; i < p->n_t; i++)
		nset_add(&p->ts, (uint32_t)i, p->t[i].name, p->t[i].len);
	for (size_t j = 0; j < p->n_pend; j++) {
		const struct pend *q = &p->pend[j];
		if (tn_find(&p->ts, p->t, q->name, q->len) != P53_NONE)
			continue;
		struct tn *t = &p->t[p->n_t];
		memset(t, 0, sizeof(*t));
		memcpy(t->name, q->name, q->len);
		t->len = q->len;
		t->labels = (uint8_t)p53_name_labels(t->name);
		t->old = t->parent = P53_NONE;
		nset_add(&p->ts, (uint32_t)p->n_t, t->name, t->len);
		p->n_t++;
	}
	return 0;
}

/* ---- NSEC zones: the chain and the per-node proofs when names or owners come and go ---- */

/* Canonical order (RFC 4034 §6.1) of two canonical names: labels compared from the root. */
static int canon_cmp(const uint8_t *a, const uint8_t *b)
{
	uint8_t oa[P53_NAME_MAXLABELS], ob[P53_NAME_MAXLABELS];
	int na = 0, nb = 0;

	for (uint8_t q = 0; a[q] != 0 && na < P53_NAME_MAXLABELS; q = (uint8_t)(q + 1 + a[q]))
		oa[na++] = q;
	for (uint8_t q = 0; b[q] != 0 && nb < P53_NAME_MAXLABELS; q = (uint8_t)(q + 1 + b[q]))
		ob[nb++] = q;
	while (na > 0 && nb > 0) {
		const uint8_t *x = a + oa[--na], *y = b + ob[--nb];
		int d = memcmp(x + 1, y + 1, x[0] < y[0] ? x[0] : y[0]);
		if (d != 0)
			return d;
		if (x[0] != y[0])
			return (x[0] > y[0]) - (x[0] < y[0]);
	}
	return (na > 0) - (nb > 0);
}

static bool has_type(const void *img, uint32_t n, uint16_t type, uint32_t *rs)
{
	const struct p53_image_node *nd = p53_image_node(img, n);

	for (uint32_t r = rs0(img, nd), r_end = r + nd->n_rrsets; r < r_end; r++)
		if (p53_image_rrset(img, r)->type == type) {
			if (rs != NULL)
				*rs = r;
			return true;
		}
	return false;
}

static int ins_cmp(const void *a, const void *b, void *arg)
{
	const struct nsec_ins *x = a, *y = b;
	const struct tn *t = arg;

	if (x->k != y->k)
		return (x->k > y->k) - (x->k < y->k);
	return canon_cmp(t[x->ti].name, t[y->ti].name);
}

/*
 * The NSEC zone of apex node ai: which owners leave and join its chain (the touched names
 * that lose or gain their NSEC RRset), the new chain, and per old gap the count of owners
 * before it in the new one, so that nsec_proofs() remakes every node's proof (match, wild,
 * lo, hi: image.h) with one array lookup for the nodes that stay, a binary search for the new
 * ones. Nothing to do (p->nsec_redo unset) when no node comes and no owner changes. p, or
 * NULL: declined (why).
 */
static void *nsec_plan(struct patch *p, const void *img, uint32_t ai, char *why,
		       size_t wl)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	const uint32_t *ch = p53_image_chain(img);
	char txt[1024];
	bool any = false;
	size_t n_in = 0, n_out = 0;

	for (size_t i = 0; i < p->n_t; i++) {
		struct tn *t = &p->t[i];
		t->was_owner = t->old != P53_NONE && !t->n3 && has_type(img, t->old, P53_T_NSEC, NULL);
		t->is_owner = t->was_owner;
		if (!t->changed)
			continue;
		t->is_owner = false;
		for (uint32_t r = 0; r < t->rs_n; r++)
			t->is_owner |= p->nrs[t->rs_first + r].type == P53_T_NSEC;
		any |= t->old == P53_NONE || t->was_owner != t->is_owner;
		n_in += t->is_owner && !t->was_owner;
		n_out += t->was_owner && !t->is_owner;
	}
	if (!any && !p->glue_redo)
		return p;
	p53_name_to_str(txt, sizeof(txt), p->t[0].name);
	const struct p53_image_proof *pa = h->proofs_off != 0 ? p53_image_proof(img, ai) : NULL;
	if (pa == NULL || p->nb + pa->match != ai || pa->lo == 0 || pa->lo > pa->hi ||
	    pa->hi > h->n_chain || p->nb + ch[pa->lo - 1] != ai)
		return decline(why, wl, "the apex %s has no NSEC (names come or go in its chain)", txt);
	if (!p->t[0].is_owner)
		return decline(why, wl, "the apex %s loses its NSEC", txt);
	p->cz0 = pa->lo - 1;
	p->cz1 = pa->hi;
	const size_t zn = p->cz1 - p->cz0;
	/* Steered owners' NSECs are made by the compile from the chain around them (their next
	 * name): steer_denials() checks each against the new chain once it is made. */
	p->ins = malloc((n_in ? n_in : 1) * sizeof(*p->ins));
	p->rem = malloc((n_out ? n_out : 1) * sizeof(*p->rem));
	p->zc = malloc((zn + n_in) * sizeof(*p->zc));
	p->before = malloc((zn + 1) * sizeof(*p->before));
	p->gap_ins = calloc(zn + 1, 1);
	if (p->ins == NULL || p->rem == NULL || p->zc == NULL || p->before == NULL || p->gap_ins == NULL)
		return decline(why, wl, "out of memory");
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		if (!t->changed || t->was_owner == t->is_owner)
			continue;
		if (t->was_owner) {
			uint32_t lo = p53_image_proof(img, t->old)->lo;
			if (lo <= p->cz0 || lo > p->cz1 || p->nb + ch[lo - 1] != t->old)
				return decline(why, wl, "the NSEC chain of %s does not hold its owner "
					       "where the proofs say", txt);
			p->rem[p->n_rem++] = lo - 1 - p->cz0;
			continue;
		}
		/* Its gap: the old owners before it (for a node that stays, its proof says). */
		uint32_t k;
		if (t->old != P53_NONE) {
			k = p53_image_proof(img, t->old)->lo - p->cz0;
		} else {
			size_t lo = 0, hi = zn;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				const struct p53_image_node *md = p53_image_node(img, p->nb + ch[p->cz0 + mid]);
				if (canon_cmp(p53_image_node_name(img, md), t->name) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			k = (uint32_t)lo;
		}
		if (k == 0 || k > zn)
			return decline(why, wl, "%s would come before the apex in the NSEC chain",
				       p53_name_to_str(txt, sizeof(txt), t->name));
		p->ins[p->n_ins++] = (struct nsec_ins){ k, (uint32_t)i };
	}
	qsort(p->rem, p->n_rem, sizeof(*p->rem), u32_cmp);
	qsort_r(p->ins, p->n_ins, sizeof(*p->ins), ins_cmp, p->t);
	size_t ri = 0, ii = 0, o = 0;
	for (size_t b = 0; b <= zn; b++) {
		p->before[b] = (uint32_t)o;
		while (ii < p->n_ins && p->ins[ii].k == b) {
			p->gap_ins[b] = 1;
			p->zc[o++] = p->t[p->ins[ii++].ti].node;
		}
		if (b == zn)
			break;
		if (ri < p->n_rem && p->rem[ri] == b)
			ri++;
		else
			p->zc[o++] = p->nb + ch[p->cz0 + b]; /* zc: in the image */
	}
	p->n_zc = o;
	p->nsec_redo = true;
	return p;
}

/* Whether node n of the old image was glue and its copy nd in the new one is not (a signed
 * zone's delegation above it went: signed_links): its proof is made as a new node's. */
static bool glue_freed(const void *img, uint32_t n, const struct p53_image_node *nd)
{
	return (p53_image_node(img, n)->flags & P53_NODE_GLUE) && !(nd->flags & P53_NODE_GLUE);
}

/* Owners joining at old gap b that sort at or before `name` (or, with `below`, that are
 * below it too): what a node's count of old owners before it misses. */
static uint32_t joined(const struct patch *p, uint32_t b, const uint8_t *name, size_t len,
		       bool below)
{
	size_t lo = 0, hi = p->n_ins;
	uint32_t n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->ins[mid].k < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < p->n_ins && p->ins[i].k == b; i++) {
		const struct tn *x = &p->t[p->ins[i].ti];
		n += canon_cmp(x->name, name) <= 0 ||
		     (below && p53_name_at_or_below(x->name, x->len, name, len));
	}
	return n;
}

/* Owners of the new chain at or before `name` (canonical order). */
static uint32_t zc_upto(const struct patch *p, const void *ni, const uint8_t *name)
{
	size_t lo = 0, hi = p->n_zc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (canon_cmp(p53_image_node_name(ni, p53_image_node(ni, p->zc[mid])), name) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (uint32_t)lo;
}

/*
 * The new image's chain[] and proofs made right for the plan of nsec_plan(), in one pass that
 * also copies the proofs (patch_run leaves them to it): zone z's part of the chain replaced,
 * later NSEC zones' ranges shifted, and per node of z what the compiler's nsec_zone()
 * computes: match (the last owner at or before it), lo and hi (the owners strictly below
 * it), wild (the last owner at or before "*.<it>"; none for glue and names too long for it).
 * A node that stays counts the old owners before it from its old proof and `before[]` turns
 * that into the new count; its name is read only where owners joined in that very gap (and
 * names are compared), and its wildcard cover's proof only when that is not its own match
 * (when it is, the cover's gap is the node's). So the pass reads the nodes and the proofs in
 * order, and the names and the rest at the diff's places alone. A new node is searched for in
 * the new chain.
 */
static void nsec_proofs(const struct patch *p, const void *img, uint8_t *ni, uint32_t z)
{
	const struct p53_image_hdr *h = p53_image_hdr(img), *nh = p53_image_hdr(ni);
	const uint32_t *och = p53_image_chain(img);
	const struct p53_image_proof *opf = p53_image_proof(img, 0);
	uint32_t *nch = (uint32_t *)(ni + nh->chain_off);
	struct p53_image_proof *pf = (struct p53_image_proof *)(ni + nh->proofs_off);
	const struct p53_image_zone *zones = (const struct p53_image_zone *)(ni + nh->zones_off);
	const int64_t delta = (int64_t)p->n_zc - (p->cz1 - p->cz0);
	const uint32_t cz0 = p->cz0;
	const uint32_t *zc = p->zc, *before = p->before;
	const uint8_t *gi = p->gap_ins;

	memcpy(nch, och, (size_t)cz0 * sizeof(*nch));
	for (size_t i = 0; i < p->n_zc; i++) /* relative to the zone (image.h) */
		nch[cz0 + i] = zc[i] - p->nb;
	memcpy(nch + cz0 + p->n_zc, och + p->cz1, (size_t)(h->n_chain - p->cz1) * sizeof(*nch));
	for (uint32_t n = 0; n < nh->n_nodes; n++) {
		const struct p53_image_node *nd = p53_image_node(ni, n);
		struct p53_image_proof *q = &pf[n];
		if (nd->zone != z || !in_range(ni, n)) { /* (garbage: copied) */
			if (n < h->n_nodes)
				*q = opf[n]; /* (a free entry's: zero) */
			/* Later NSEC zones' chains moved by delta. */
			if (nd->zone > z && delta != 0 && (zones[nd->zone].dnssec & P53_ZONE_NSEC) &&
			    !(zones[nd->zone].dnssec & P53_ZONE_NSEC3) && q->hi != 0) {
				q->lo = (uint32_t)(q->lo + delta);
				q->hi = (uint32_t)(q->hi + delta);
			}
			continue;
		}
		if (nd->flags & P53_NODE_NSEC3) {
			/* Out of the index (gone): nothing reads it; empty, in bounds. */
			*q = (struct p53_image_proof){ .match = P53_NONE, .wild = P53_NONE,
						       .encl = P53_NONE, .nc = P53_NONE };
			continue;
		}
		const bool wok = nd->name_len + 2u <= P53_NAME_MAXLEN && !(nd->flags & P53_NODE_GLUE);
		const uint8_t *nm = NULL;
		uint8_t w[P53_NAME_MAXLEN];
		uint32_t lo, hi, wc;
		/* A node that stops being glue (a delegation above it went) has no wildcard
		 * cover in its old proof: searched for as a new node's. */
		if (n < p->nn0 && !glue_freed(img, n, nd)) { /* an old node */
			const struct p53_image_proof *op = &opf[n];
			uint32_t lb = op->lo - cz0, hb = op->hi - cz0;
			if (gi[lb] | gi[hb])
				nm = p53_image_node_name(ni, nd);
			lo = before[lb] + (gi[lb] ? joined(p, lb, nm, nd->name_len, false) : 0);
			hi = before[hb] + (gi[hb] ? joined(p, hb, nm, nd->name_len, true) : 0);
			wc = 0;
			if (op->wild != P53_NONE && wok) {
				uint32_t wb = op->wild == op->match ? lb : opf[p->nb + op->wild].lo - cz0;
				wc = before[wb];
				if (gi[wb]) {
					if (nm == NULL)
						nm = p53_image_node_name(ni, nd);
					w[0] = 1;
					w[1] = '*';
					memcpy(w + 2, nm, nd->name_len);
					wc += joined(p, wb, w, nd->name_len + 2u, false);
				}
			}
		} else {
			nm = p53_image_node_name(ni, nd);
			lo = zc_upto(p, ni, nm);
			size_t a = lo, b = p->n_zc;
			while (a < b) {
				size_t mid = a + (b - a) / 2;
				const struct p53_image_node *md = p53_image_node(ni, zc[mid]);
				if (p53_name_at_or_below(p53_image_node_name(ni, md), md->name_len,
							 nm, nd->name_len))
					a = mid + 1;
				else
					b = mid;
			}
			hi = (uint32_t)a;
			wc = 0;
			if (wok) {
				w[0] = 1;
				w[1] = '*';
				memcpy(w + 2, nm, nd->name_len);
				wc = zc_upto(p, ni, w);
			}
		}
		*q = (struct p53_image_proof){ .match = lo > 0 ? zc[lo - 1] - p->nb : P53_NONE,
					       .wild = wc > 0 ? zc[wc - 1] - p->nb : P53_NONE,
					       .encl = P53_NONE, .nc = P53_NONE,
					       .lo = cz0 + lo, .hi = cz0 + hi };
	}
}

/*
 * In an NSEC zone, which of the names gi[0..m) (names that go and the empty non-terminals
 * above them) keep a name below them, from the old chain instead of a pass over the zone's
 * names: every name of the zone below one of them that is not occluded is an NSEC owner or
 * lies above one (an empty non-terminal), so a name stays below x when the owners strictly
 * below it (its proof's lo, hi) outnumber those of the set's names that go. Sets t[].child of
 * those, and 0. 1, nothing set: the caller scans, when a name that goes is a cut, owns a
 * DNAME, is glue or occluded (names below those are no owners), has no NSEC, or the set is
 * large.
 */
static int below_owners(struct patch *p, const void *img, const uint32_t *gi, size_t m)
{
	uint8_t own[1024];

	if (p53_image_hdr(img)->proofs_off == 0 || m > sizeof(own))
		return 1;
	for (size_t j = 0; j < m; j++) {
		const struct tn *t = &p->t[gi[j]];
		const struct p53_image_node *nd = p53_image_node(img, t->old);
		if ((nd->flags & (P53_NODE_CUT | P53_NODE_DNAME | P53_NODE_GLUE)) ||
		    nd->occluder != P53_NONE)
			return 1;
		own[j] = !(nd->flags & P53_NODE_ENT);
		if (own[j] && !has_type(img, t->old, P53_T_NSEC, NULL))
			return 1;
	}
	for (size_t j = 0; j < m; j++) {
		struct tn *x = &p->t[gi[j]];
		const struct p53_image_proof *op = p53_image_proof(img, x->old);
		uint32_t below = op->hi > op->lo ? op->hi - op->lo : 0;
		for (size_t k = 0; k < m && below > 0; k++) {
			const struct tn *g = &p->t[gi[k]];
			below -= k != j && own[k] && p53_name_at_or_below(g->name, g->len, x->name, x->len);
		}
		x->child |= below > 0;
	}
	return 0;
}

/* ---- NSEC3 zones: the sorted hashes and the per-node proofs when names or hashes change -- */


static int n3e_cmp(const void *a, const void *b)
{
	return memcmp(((const struct p53_image_nsec3 *)a)->hash,
		      ((const struct p53_image_nsec3 *)b)->hash, P53_NSEC3_HASH_LEN);
}

/* Whether an NSEC3 RRset has a record with the opt-out flag (RFC 5155 §3.1.2.1). */
static bool n3_optout(const void *img, const struct p53_image_rrset *rs)
{
	const uint8_t *r = p53_image_rdata(img, rs);

	for (uint32_t k = 0; k < rs->count; k++) {
		uint16_t rdlen = p53_get16(r + P53_RR_OWNER_LEN + 8);
		if (rdlen >= 2 && (r[P53_RR_OWNER_LEN + 10 + 1] & 1))
			return true;
		r += P53_RR_OWNER_LEN + 10u + rdlen;
	}
	return false;
}

/*
 * The NSEC3 zone z: the hashes that join (new NSEC3 owners) and leave (owners whose NSEC3
 * goes), and which old owners' covers they move: an owner that leaves, and the owner after
 * which one joins (the last one before its hash, or the last of all before the first), mark
 * every proof naming them to be made again (n3_proofs). Nothing to do (p->n3_redo unset)
 * when no node comes or goes and no hash joins or leaves. p, or NULL: declined.
 */
static void *n3_plan(struct patch *p, const void *img, uint32_t z, char *why, size_t wl)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	const struct p53_image_zone *zn = p53_image_zone(img, z);
	const struct p53_image_nsec3 *ot = p53_image_nsec3(img) + zn->proof_lo;
	bool nodes = false;
	size_t nj = 0, nl = 0;

	for (size_t i = 0; i < p->n_t + p->n_ext; i++) {
		const struct tn *t = &p->t[i];
		if (i >= p->n_t) {
			nodes |= t->dead;
			continue;
		}
		if (!t->changed)
			continue;
		if (t->n3) {
			/* (A hash that the compile's NSEC3 for a steered owner held joins when the
			 * content's takes its node; one that the compile's takes leaves.) */
			nj += (t->old == P53_NONE || t->n3_synth) && t->rs_n > 0;
			nl += t->old != P53_NONE && (t->gone || t->steer_fill);
		} else {
			nodes |= t->old == P53_NONE || t->dead;
		}
	}
	if (!nodes && nj == 0 && nl == 0 && !p->glue_redo)
		return p;
	p->n3j = malloc((nj ? nj : 1) * sizeof(*p->n3j));
	p->n3l = malloc((nl ? nl : 1) * sizeof(*p->n3l));
	p->n3mk = calloc(((size_t)h->n_nodes + 7) / 8, 1);
	if (p->n3j == NULL || p->n3l == NULL || p->n3mk == NULL)
		return decline(why, wl, "out of memory");
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		if (!t->changed || !t->n3)
			continue;
		if (t->old != P53_NONE && (t->gone || t->steer_fill)) {
			/* Its place in the old table: found by its hash. */
			uint8_t hash[P53_NSEC3_HASH_LEN];
			size_t lo = 0, hi = zn->proof_n;
			if (n3_hash_of(t->name, hash) != 0)
				return decline(why, wl, "an NSEC3 owner is not a hash");
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (memcmp(ot[mid].hash, hash, P53_NSEC3_HASH_LEN) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == zn->proof_n || p->nb + ot[lo].node != t->old)
				return decline(why, wl, "an NSEC3 owner that goes is not in the zone's "
					       "hashes");
			p->n3l[p->n_n3l++] = (uint32_t)lo;
			p->n3mk[t->old >> 3] |= (uint8_t)(1u << (t->old & 7));
		} else if ((t->old == P53_NONE || t->n3_synth) && t->rs_n > 0) {
			struct p53_image_nsec3 *e = &p->n3j[p->n_n3j++];
			if (n3_hash_of(t->name, e->hash) != 0)
				return decline(why, wl, "an NSEC3 owner is not a hash");
			/* (One that takes the node of the compile's NSEC3 for a steered owner: the
			 * proofs naming that node, the owner's and the enclosers of names below
			 * it, stay right.) */
			e->node = t->node;
			/* The old owner it follows: covers of hashes past it may be the new one. */
			size_t lo = 0, hi = zn->proof_n;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (memcmp(ot[mid].hash, e->hash, P53_NSEC3_HASH_LEN) <= 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (zn->proof_n > 0) {
				uint32_t k = p->nb + ot[lo > 0 ? lo - 1 : zn->proof_n - 1].node;
				p->n3mk[k >> 3] |= (uint8_t)(1u << (k & 7));
			}
		}
	}
	qsort(p->n3j, p->n_n3j, sizeof(*p->n3j), n3e_cmp);
	qsort(p->n3l, p->n_n3l, sizeof(*p->n3l), u32_cmp);
	p->n3_redo = true;
	return p;
}

/*
 * The parent's node at canonical name q at or below a served child's apex (out of the name
 * index), in the new image, where the patch knows it: a touched name's, one queued above a
 * touched shadowed name (shadow_anc), or one below a cut that comes or goes there
 * (shadow_flips' p->desc), else found by one pass over the nodes; or P53_NONE. For the
 * proofs made again there (n3_proofs: a node without a match takes its parent's facts).
 */
static uint32_t shadow_parent(const struct patch *p, const void *img, const uint8_t *q, size_t ql)
{
	uint32_t k = tn_find(&p->ts, p->t, q, ql);

	if (k != P53_NONE) {
		const struct tn *t = &p->t[k];
		if (t->changed)
			return t->dead ? P53_NONE : t->node;
		return t->old;
	}
	for (size_t i = 0; i < p->n_sa; i++)
		if (p->sa[i].len == ql && p->sa[i].zone == p->sz && memcmp(p->sa[i].name, q, ql) == 0)
			return p->sa[i].node;
	for (size_t j = 0; j < p->n_desc; j++) {
		const struct p53_image_node *nd = p53_image_node(img, p->desc[2 * j]);
		if (nd->name_len == ql && memcmp(p53_image_node_name(img, nd), q, ql) == 0)
			return p->desc[2 * j];
	}
	/* Else (an opt-out chain's insecure cut below an untouched name there, which a
	 * joining hash makes look again): one pass over the nodes. */
	const struct p53_image_zone *zn = p53_image_zone(img, p->sz);
	for (uint32_t n = zn->node_base; n < zn->node_base + zn->n_nodes; n++) {
		const struct p53_image_node *nd = p53_image_node(img, n);
		if (!(nd->flags & P53_NODE_NSEC3) && nd->name_len == ql &&
		    memcmp(p53_image_node_name(img, nd), q, ql) == 0)
			return n;
	}
	return P53_NONE;
}

/* Whether node nd has a steered RRset: the config's (control/steer/), which every compile
 * attaches again and no content (file, transfer, read-back) holds; not the NSEC or NSEC3 the
 * compile signs for a steered owner (steer_denials). */
static bool steered_at(const void *img, const struct p53_image_node *nd)
{
	for (uint32_t r = rs0(img, nd), r_end = r + nd->n_rrsets; r < r_end; r++) {
		const struct p53_image_rrset *rs = p53_image_rrset(img, r);
		if ((rs->flags & P53_RRSET_STEERED) && rs->type != P53_T_NSEC && rs->type != 50)
			return true;
	}
	return false;
}

static int labels_cmp(const void *a, const void *b, void *arg)
{
	const uint8_t *ni = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct p53_image_node *nx = p53_image_node(ni, x), *ny = p53_image_node(ni, y);

	if (nx->labels != ny->labels)
		return nx->labels - ny->labels;
	return (x > y) - (x < y);
}

/*
 * The new image's NSEC3 hashes and proofs (copied from the old image) made right for the
 * plan of n3_plan(): zone z's sorted hashes merged (those that leave out, those that join
 * in), later NSEC3 zones' ranges shifted, and what the compiler's nsec3_zone() computes
 * (match, encl, encl_labels, wild, nc) made again, parents first, for the zone's new nodes,
 * for nodes whose proof names a marked owner, and, when hashes join, for nodes without a
 * match (one may now match, and such a node takes its parent's facts). Every other proof
 * names owners whose covers did not move and stays. 0, or -1: declined (why).
 */
static int n3_proofs(struct patch *p, const void *img, uint8_t *ni, uint32_t z, char *why,
		     size_t wl)
{
	const struct p53_image_hdr *h = p53_image_hdr(img), *nh = p53_image_hdr(ni);
	struct p53_image_zone *zones = (struct p53_image_zone *)(ni + nh->zones_off);
	struct p53_image_nsec3 *nt = (struct p53_image_nsec3 *)(ni + nh->nsec3_off);
	struct p53_image_proof *pf = (struct p53_image_proof *)(ni + nh->proofs_off);
	const struct p53_image_nsec3 *ot = p53_image_nsec3(img);
	const struct p53_image_zone *oz = p53_image_zone(img, z);
	const uint32_t lo = oz->proof_lo, n = oz->proof_n;
	const size_t sz = sizeof(*nt);
	size_t o = lo, j = 0;

	memcpy(nt, ot, (size_t)lo * sz);
	/* Runs of the old table copied whole between the places where a hash joins (before the
	 * first old hash above it) or leaves. */
	for (size_t k = 0, l = 0;;) {
		size_t at = n;
		if (j < p->n_n3j) {
			size_t a = k, b = n;
			while (a < b) {
				size_t mid = a + (b - a) / 2;
				if (memcmp(ot[lo + mid].hash, p->n3j[j].hash, P53_NSEC3_HASH_LEN) <= 0)
					a = mid + 1;
				else
					b = mid;
			}
			at = a;
		}
		size_t stop = l < p->n_n3l && p->n3l[l] < at ? p->n3l[l] : at;
		memcpy(nt + o, ot + lo + k, (stop - k) * sz);
		o += stop - k;
		k = stop;
		if (l < p->n_n3l && p->n3l[l] == stop) {
			k++;
			l++;
		} else if (j < p->n_n3j) {
			nt[o] = p->n3j[j++];
			nt[o++].node -= p->nb; /* relative to the zone (image.h) */
		} else {
			break;
		}
	}
	const uint32_t newn = (uint32_t)(o - lo);
	memcpy(nt + o, ot + lo + n, (size_t)(h->n_nsec3 - lo - n) * sz);
	zones[z].proof_n = newn;
	for (uint32_t k = z + 1; k < nh->n_zones; k++)
		if (zones[k].dnssec & P53_ZONE_NSEC3)
			zones[k].proof_lo = (uint32_t)((int64_t)zones[k].proof_lo + newn - n);

	const struct p53_image_nsec3 *zt = nt + lo;
	struct p53_n3_set c = { .t = zt, .n = newn, .salt_len = zones[z].salt_len,
			 .iter = zones[z].nsec3_iter,
			 .salt = ni + nh->rdata_off + zones[z].salt_off };
	const struct p53_image_proof none = { .match = P53_NONE, .wild = P53_NONE,
					      .encl = P53_NONE, .nc = P53_NONE };
#define MK(r) ((r) != P53_NONE && p->nb + (r) < p->nn0 && \
		(p->n3mk[(p->nb + (r)) >> 3] >> ((p->nb + (r)) & 7) & 1))
	size_t nr = 0, rcap = 64;
	p->n3r = malloc(rcap * sizeof(*p->n3r));
	if (p->n3r == NULL) {
		decline(why, wl, "out of memory");
		return -1;
	}
	for (uint32_t m = zones[z].node_base; m < zones[z].node_base + zones[z].n_nodes; m++) {
		const struct p53_image_node *nd = p53_image_node(ni, m);
		if (nd->flags & P53_NODE_GLUE) {
			/* Glue has no proof (nsec3_zone); a node that became glue loses its own. */
			pf[m] = none;
			continue;
		}
		if (nd->flags & P53_NODE_NSEC3) {
			/* Hashed owners, and names out of the index: nothing reads them. */
			pf[m] = none;
			continue;
		}
		const struct p53_image_proof *q = &pf[m];
		if (m < p->nn0 && !glue_freed(img, m, nd) &&
		    !(q->match == P53_NONE && p->n_n3j > 0) && !MK(q->match) &&
		    !MK(q->encl) && !MK(q->wild) && !MK(q->nc))
			continue;
		if (nr == rcap) {
			rcap *= 2;
			uint32_t *r2 = realloc(p->n3r, rcap * sizeof(*p->n3r));
			if (r2 == NULL) {
				decline(why, wl, "out of memory");
				return -1;
			}
			p->n3r = r2;
		}
		p->n3r[nr++] = m;
	}
#undef MK
	qsort_r(p->n3r, nr, sizeof(*p->n3r), labels_cmp, ni);
	for (size_t i = 0; i < nr; i++) {
		const uint32_t m = p->n3r[i];
		const struct p53_image_node *nd = p53_image_node(ni, m);
		const uint8_t *nm = p53_image_node_name(ni, nd);
		struct p53_image_proof *q = &pf[m];
		bool exact;
		uint32_t mt = p53_n3_find(&c, nm, nd->name_len, &exact);

		*q = none;
		/* A steered owner the chain lacks has its own NSEC3 from the compile, out of the
		 * sorted hashes (dnssec_build.c nsec3_zone): it keeps the node it had, which
		 * holds that record (kept, or made by steer_sign3 where its own went), and
		 * steer_denials() checks (the owner's types) when the owner is touched. */
		if (!exact && steered_at(ni, nd)) {
			uint32_t sm = m < p->nn0 ? p53_image_proof(img, m)->match : P53_NONE;
			uint32_t sr;
			if (sm == P53_NONE || !has_type(ni, p->nb + sm, 50, &sr) ||
			    !(p53_image_rrset(ni, sr)->flags & P53_RRSET_STEERED)) {
				char txt[1024];
				decline(why, wl, "%s, a steered owner, has no NSEC3 of its own in "
					"the new chain (the compile signs one for it)",
					p53_name_to_str(txt, sizeof(txt), nm));
				return -1;
			}
			mt = sm;
			exact = true;
		}
		if (exact) {
			q->match = mt;
			q->encl = mt;
			q->encl_labels = nd->labels;
			if (nd->name_len + 2u <= P53_NAME_MAXLEN) {
				uint8_t w[P53_NAME_MAXLEN];
				w[0] = 1;
				w[1] = '*';
				memcpy(w + 2, nm, nd->name_len);
				q->wild = p53_n3_find(&c, w, nd->name_len + 2u, &exact);
			}
			continue;
		}
		if (nd->flags & P53_NODE_APEX)
			continue;
		const uint8_t *pn = nm + 1 + nm[0];
		size_t pl = nd->name_len - 1u - nm[0];
		uint32_t pi = p53_image_find(ni, pn, pl, p53_name_hash(pn, pl));
		if (pi == P53_NONE || p53_image_node(ni, pi)->zone != z)
			pi = shadow_parent(p, img, pn, pl);
		if (pi == P53_NONE) {
			char txt[1024];
			decline(why, wl, "%s has no parent node in the NSEC3 zone",
				p53_name_to_str(txt, sizeof(txt), nm));
			return -1;
		}
		const struct p53_image_proof *pp = &pf[pi];
		q->encl = pp->encl;
		q->encl_labels = pp->encl_labels;
		q->wild = pp->wild;
		q->nc = pp->match != P53_NONE ? p53_n3_find(&c, nm, nd->name_len, &exact) : pp->nc;
	}
	return 0;
}

/* ---- Unsigned zones: cuts and wildcards that come and go ---- */

/*
 * The occluder that name nm (of zone z, at or below its apex) has in the new image, as
 * nodes_link() in image_build.c makes it: the closest cut above it, the touched names as the
 * patch leaves them (cut_now), the others as they are. -1: a DNAME owner above it, or an
 * ancestor that is not zone z's node (declined).
 */
static int occ_walk(const struct patch *p, const void *img, uint32_t z, size_t apex_len,
		    const uint8_t *nm, size_t len, uint32_t *occ)
{
	const uint8_t *q = nm + 1 + nm[0];
	size_t ql = len - 1u - nm[0];

	*occ = P53_NONE;
	while (len > apex_len && ql >= apex_len) {
		uint32_t k = tn_find(&p->ts, p->t, q, ql), node;
		uint16_t f;
		if (k != P53_NONE && (p->t[k].changed || p->t[k].old == P53_NONE)) {
			node = p->t[k].node;
			f = p->t[k].cut_now ? P53_NODE_CUT : 0;
		} else {
			node = k != P53_NONE ? p->t[k].old : p53_image_find(img, q, ql, p53_name_hash(q, ql));
			if (node == P53_NONE || p53_image_node(img, node)->zone != z)
				return -1;
			f = p53_image_node(img, node)->flags;
		}
		if (f & P53_NODE_DNAME)
			return -1;
		if ((f & P53_NODE_CUT) && *occ == P53_NONE)
			*occ = node;
		if (ql == apex_len)
			break;
		ql -= 1u + q[0];
		q += 1u + q[0];
	}
	return 0;
}

static uint32_t zone_node(const struct patch *p, const void *img, uint32_t z, size_t apex_len,
			  const uint8_t *q, size_t ql);
static bool dname_now(const struct patch *p, const void *img, const struct tn *t);

/*
 * occ_walk() for zone z's name nm at or below a served child's apex, out of the name index
 * (shadowed_nodes), when a cut or DNAME above that apex comes or goes or a name is new there
 * (p->above): the closest name above nm that is a cut as the patch leaves the names (a
 * touched one's cut_now), the others read off the old occluder chain of the closest name
 * the image holds (`from`: nm's own old node; P53_NONE for a new name, whose first ancestor
 * the image holds zone_node() finds), which lists every old cut above it (nodes_link()
 * links a cut to the closest cut above it as any name). -1: a DNAME owner above nm (data
 * below a DNAME: the zone does not compile).
 */
static int occ_above(const struct patch *p, const void *img, uint32_t z, size_t apex_len,
		     const uint8_t *nm, size_t len, uint32_t from, uint32_t *occ)
{
	bool chain = from != P53_NONE;
	uint32_t o = chain ? nabs(img, p53_image_node(img, from), p53_image_node(img, from)->occluder)
			   : P53_NONE;
	const uint8_t *q = nm + 1 + nm[0];
	size_t ql = len - 1u - nm[0];

	*occ = P53_NONE;
	for (; ql >= apex_len; ql -= 1u + q[0], q += 1u + q[0]) {
		uint32_t k = tn_find(&p->ts, p->t, q, ql), node = P53_NONE;
		const struct tn *a = k != P53_NONE ? &p->t[k] : NULL;
		if (chain) {
			if (o != P53_NONE && p53_image_node(img, o)->name_len == ql) {
				node = o;
				o = nabs(img, p53_image_node(img, o), p53_image_node(img, o)->occluder);
			}
		} else {
			node = a != NULL ? a->old : zone_node(p, img, z, apex_len, q, ql);
			if (node != P53_NONE) {
				chain = true;
				o = nabs(img, p53_image_node(img, node), p53_image_node(img, node)->occluder);
			}
		}
		bool cut, dn;
		if (a != NULL && (a->changed || a->old == P53_NONE)) {
			cut = a->changed && a->cut_now && !a->dead;
			dn = dname_now(p, img, a);
			node = a->node;
		} else {
			uint16_t f = node != P53_NONE ? p53_image_node(img, node)->flags : 0;
			cut = (f & P53_NODE_CUT) && ql > apex_len;
			dn = (f & P53_NODE_DNAME) && ql > apex_len;
		}
		if (dn)
			return -1;
		if (cut) {
			*occ = node;
			return 0;
		}
		if (ql == apex_len)
			break;
	}
	return 0;
}

/* Whether touched name t stays in the image and becomes or stops being a cut. */
static bool cut_flips(const struct patch *p, const void *img, const struct tn *t)
{
	(void)p;
	return !t->shadow && /* (shadow_flips) */
	       !(t->changed && t->dead) && t->old != P53_NONE &&
	       t->cut_now != ((p53_image_node(img, t->old)->flags & P53_NODE_CUT) != 0);
}

/* The touched names `pick` takes, as a set in *out (fewest labels in *min_l), when there are
 * any: how many (0: *out untouched), or -1 (out of memory). */
static ssize_t flips_set(const struct patch *p, const void *img,
			 bool (*pick)(const struct patch *, const void *, const struct tn *),
			 struct nset *out, uint8_t *min_l)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_t; i++)
		if (pick(p, img, &p->t[i])) {
			n++;
			if (p->t[i].labels < *min_l)
				*min_l = p->t[i].labels;
		}
	if (n == 0)
		return 0;
	if (nset_init(out, n, p->n_t) != 0) {
		nset_free(out);
		return -1;
	}
	for (size_t i = 0; i < p->n_t; i++)
		if (pick(p, img, &p->t[i]))
			nset_add(out, (uint32_t)i, p->t[i].name, p->t[i].len);
	return (ssize_t)n;
}

/*
 * An unsigned zone: each touched name's occluder in the new image (occ_walk; GLUE is "has
 * one": no DNAME lies above a name the patch takes), and, when a name that stays in the
 * image becomes or stops being a cut, the same for every node below it (one pass over the
 * zone's nodes; other served zones' nodes are their own), in p->desc. A new cut has nothing
 * below it in the old image but the diff's own names (touched). -1: declined, the name in
 * txt (empty: out of memory).
 */
static int cut_links(struct patch *p, const void *img, uint32_t z, size_t apex_len, char *txt,
		     size_t tl)
{
	uint8_t min_l = UINT8_MAX;

	txt[0] = '\0';
	struct nset cs;
	ssize_t n_c = flips_set(p, img, cut_flips, &cs, &min_l);
	if (n_c < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < p->n_t && rc == 0; i++) {
		struct tn *t = &p->t[i];
		if (t->shadow) {
			/* Its old occluder (shadowed_ok, shadow_new, shadow_flips), or made again
			 * when a cut or DNAME above the served apex comes or goes (occ_above). */
			if ((p->above || n_c > 0) && !(t->changed && t->dead) &&
			    (t->changed || t->old != P53_NONE))
				rc = occ_above(p, img, z, apex_len, t->name, t->len, t->old, &t->occ_now);
		} else {
			t->occ_now = P53_NONE;
			if (!(t->changed ? t->dead : t->old == P53_NONE))
				rc = occ_walk(p, img, z, apex_len, t->name, t->len, &t->occ_now);
		}
		if (rc != 0)
			p53_name_to_str(txt, tl, t->name);
	}
	if (n_c == 0 || rc != 0) {
		if (n_c > 0)
			nset_free(&cs);
		return rc;
	}
	const struct p53_image_zone *zn = p53_image_zone(img, z);
	for (uint32_t n = zn->node_base; n < zn->node_base + zn->n_nodes && rc == 0; n++) {
		const struct p53_image_node *nd = p53_image_node(img, n);
		if (nd->labels <= min_l || (nd->flags & P53_NODE_NSEC3))
			continue;
		const uint8_t *nm = p53_image_node_name(img, nd);
		bool below = false;
		for (size_t off = 1u + nm[0]; off < nd->name_len && !below; off += 1u + nm[off])
			below = tn_find(&cs, p->t, nm + off, nd->name_len - off) != P53_NONE;
		if (!below || tn_find(&p->ts, p->t, nm, nd->name_len) != P53_NONE)
			continue; /* a touched name has its own occ_now */
		uint32_t occ;
		/* Shadowed by another served zone (out of the name index: the child's apex's
		 * parent_side, names below it) or not, as the patch leaves the names above it;
		 * -1: a DNAME above it. */
		int r = p53_image_find(img, nm, nd->name_len, p53_name_hash(nm, nd->name_len)) != n ?
			occ_above(p, img, z, apex_len, nm, nd->name_len, n, &occ) :
			occ_walk(p, img, z, apex_len, nm, nd->name_len, &occ);
		if (r != 0) {
			p53_name_to_str(txt, tl, nm);
			rc = -1;
		} else if (grow((void **)&p->desc, &p->desc_cap, 2 * (p->n_desc + 1), sizeof(uint32_t)) != 0) {
			rc = -1;
		} else {
			p->desc[2 * p->n_desc] = n;
			p->desc[2 * p->n_desc + 1] = occ;
			p->n_desc++;
		}
	}
	nset_free(&cs);
	return rc;
}

/*
 * A signed zone whose delegations come or go (signed_deleg) or that gains names (new glue
 * below a cut among them): the links as nodes_link() makes them, by cut_links (each touched
 * name's occluder; every node below a name that becomes or stops being a cut, one pass over
 * the zone's nodes), applied after the layout (signed_links). Cuts nest: a new cut below
 * another is glue (signed_nest), a cut that a new cut occludes becomes glue (its NSEC or
 * NSEC3 goes in the diff, nodes_link() keeps its CUT flag), one that a cut going frees stops
 * being glue; names below a nested cut keep it as their occluder. A wildcard or DNAME owner
 * made glue or freed is as any name (the signer's chain for it comes in the diff; its WILD
 * or DNAME flag and a wildcard's parent link stay). 0 (p->sg_links set when there is
 * something to apply), or -1: declined (why).
 */
static int signed_cuts(struct patch *p, const void *img, uint32_t z, size_t apex_len, char *why,
		       size_t wl)
{
	char txt[1024];
	bool any = false;

	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		any |= t->deleg || (t->changed && t->old == P53_NONE && !t->n3);
	}
	if (!any)
		return 0;
	if (cut_links(p, img, z, apex_len, txt, sizeof(txt)) != 0) {
		if (txt[0] == '\0')
			decline(why, wl, "out of memory");
		else
			decline(why, wl, "%s is below a DNAME owner or another served zone's apex "
				"and a cut above it comes or goes", txt);
		return -1;
	}
	p->sg_links = true;
	return 0;
}

/* Whether a node of the image becomes glue or stops being glue by signed_cuts()'s links. */
static bool glue_flips(const struct patch *p, const void *img)
{
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		if (t->old != P53_NONE && !t->n3 && !(t->changed && t->dead) &&
		    ((p53_image_node(img, t->old)->flags & P53_NODE_GLUE) != 0) != (t->occ_now != P53_NONE))
			return true;
	}
	for (size_t j = 0; j < p->n_desc; j++) {
		/* (An empty non-terminal that leaves the index with the names below it has no
		 * proof anyone reads.) */
		bool dead = false;
		for (size_t k = p->n_t; k < p->n_t + p->n_ext && !dead; k++)
			dead = p->t[k].dead && p->t[k].old == p->desc[2 * j];
		if (!dead && ((p53_image_node(img, p->desc[2 * j])->flags & P53_NODE_GLUE) != 0) !=
		    (p->desc[2 * j + 1] != P53_NONE))
			return true;
	}
	return false;
}

/*
 * Whether the proofs are made again for names that become or stop being glue although no
 * NSEC or NSEC3 owner comes or goes (p->glue_redo). The usual case is an opt-out chain
 * (RFC 5155 §6): an insecure delegation owns no NSEC3, nor do the empty non-terminals
 * leading only to such, so NS put above one (or taken away from above it) makes it and
 * those glue (or frees them) with nothing of the chain in the diff; elsewhere it is a
 * signer's gap, which the full compile takes too (warning of the names without their NSEC
 * or NSEC3). What nsec3_zone() and nsec_zone() give such a name depends only on its GLUE
 * flag, the chain and its parent's proof, so the passes that make the proofs when owners
 * move (nsec_proofs, n3_proofs: a node that became glue loses its proof, one freed gets
 * its proof as a new node's, parents first) make them here too, over the chain as it is.
 */
static bool glue_proofs(const struct patch *p, const void *img)
{
	return p->sg_links && glue_flips(p, img);
}

/* The links signed_cuts() made, into the new image's nodes: each touched name's CUT, GLUE
 * and occluder, and those of the nodes below a cut that came or went. */
static void signed_links(const struct patch *p, uint8_t *ni)
{
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		if ((t->changed && t->dead) || (!t->changed && t->old == P53_NONE) || t->n3)
			continue;
		struct p53_image_node *nd = p53_image_node_w(ni, t->changed ? t->node : t->old);
		nd->flags &= (uint16_t)~(P53_NODE_CUT | P53_NODE_GLUE);
		nd->flags |= (uint16_t)((t->cut_now ? P53_NODE_CUT : 0) |
					(t->occ_now != P53_NONE ? P53_NODE_GLUE : 0));
		nd->occluder = zrel(p, t->occ_now);
	}
	for (size_t j = 0; j < p->n_desc; j++) {
		struct p53_image_node *nd = p53_image_node_w(ni, p->desc[2 * j]);
		nd->occluder = zrel(p, p->desc[2 * j + 1]);
		nd->flags &= (uint16_t)~P53_NODE_GLUE;
		if (nd->occluder != P53_NONE)
			nd->flags |= P53_NODE_GLUE;
	}
}

/* The node a touched name's parent has in the new image, or P53_NONE. */
static uint32_t parent_now(const struct patch *p, const void *img, const struct tn *t)
{
	const uint8_t *pn = t->name + 1 + t->name[0];
	size_t pl = t->len - 1u - t->name[0];
	uint32_t k = tn_find(&p->ts, p->t, pn, pl);

	if (k != P53_NONE)
		return p->t[k].changed ? (p->t[k].dead ? P53_NONE : p->t[k].node) : p->t[k].old;
	/* At or below a served child's apex the zone's own node is out of the index (the
	 * child's is there): the one shadowed_nodes() found. */
	if (t->shadow)
		return t->parent;
	return p53_image_find(img, pn, pl, p53_name_hash(pn, pl));
}

/* ---- Unsigned zones: DNAME owners that come and go ---- */

/* Whether touched name t owns a DNAME in the new image (its RRsets as the patch leaves
 * them). */
static bool dname_now(const struct patch *p, const void *img, const struct tn *t)
{
	if (!t->changed)
		return t->old != P53_NONE && (p53_image_node(img, t->old)->flags & P53_NODE_DNAME);
	for (uint32_t r = 0; r < t->rs_n && !t->dead; r++)
		if (p->nrs[t->rs_first + r].type == P53_T_DNAME)
			return true;
	return false;
}

/* Whether touched name t was in the image and becomes a DNAME owner. */
static bool dname_comes(const struct patch *p, const void *img, const struct tn *t)
{
	return t->changed && t->old != P53_NONE && dname_now(p, img, t) &&
	       !(p53_image_node(img, t->old)->flags & P53_NODE_DNAME);
}

/*
 * An unsigned zone's DNAME owners (RFC 6672): what the compiler's nodes_link() derives from
 * them is the owner's P53_NODE_DNAME flag (the data plane synthesizes from the closest
 * encloser's) and the occluder of the names below it, of which there are none: data below a
 * DNAME does not compile (§2.4). So a name of the image that becomes a DNAME owner must
 * have nothing left below it but names the diff removes, which one pass over the zone's
 * nodes tells, only then: a new owner has nothing below it but the diff's own names, which
 * the small compile held beside it and refused, as it refuses a new name below a DNAME that
 * stays (dname_goes_ok). -1: declined, the owner in txt and the name below it in below
 * (empty: out of memory).
 */
static int dname_links(struct patch *p, const void *img, uint32_t z, char *txt, size_t tl,
		       char *below, size_t bl)
{
	uint8_t min_l = UINT8_MAX;

	txt[0] = below[0] = '\0';
	struct nset ds;
	ssize_t n_d = flips_set(p, img, dname_comes, &ds, &min_l);
	if (n_d <= 0)
		return (int)n_d;
	int rc = 0;
	const struct p53_image_zone *zn = p53_image_zone(img, z);
	for (uint32_t n = zn->node_base; n < zn->node_base + zn->n_nodes && rc == 0; n++) {
		const struct p53_image_node *nd = p53_image_node(img, n);
		/* An empty non-terminal that stays has a name with records below it. */
		if (nd->labels <= min_l || (nd->flags & (P53_NODE_NSEC3 | P53_NODE_ENT)))
			continue;
		const uint8_t *nm = p53_image_node_name(img, nd);
		uint32_t owner = P53_NONE;
		for (size_t off = 1u + nm[0]; off < nd->name_len && owner == P53_NONE; off += 1u + nm[off])
			owner = tn_find(&ds, p->t, nm + off, nd->name_len - off);
		if (owner == P53_NONE)
			continue;
		uint32_t k = tn_find(&p->ts, p->t, nm, nd->name_len);
		if (k != P53_NONE && p->t[k].changed && p->t[k].gone)
			continue; /* its records go with the diff */
		p53_name_to_str(txt, tl, p->t[owner].name);
		p53_name_to_str(below, bl, nm);
		rc = -1;
	}
	nset_free(&ds);
	return rc;
}

/* After the layout: each touched node's DNAME flag as its RRsets leave it (unsigned zones). */
static void dname_flags(const struct patch *p, const void *img, uint8_t *ni)
{
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		if (!t->changed || t->dead)
			continue;
		struct p53_image_node *nd = p53_image_node_w(ni, t->node);
		nd->flags &= (uint16_t)~P53_NODE_DNAME;
		if (dname_now(p, img, t))
			nd->flags |= P53_NODE_DNAME;
	}
}

/* ---- Signed zones: DNAME owners that come, go and change ---- */

/*
 * A signed zone whose DNAME owners come, go or change (signed_dname): as an unsigned zone's
 * (dname_links: a name of the image that becomes an owner has nothing left below it but
 * names the diff removes, RFC 6672 §2.4); below a cut an owner is glue (not signed, no
 * NSEC or NSEC3: nothing of the chain in the diff; its GLUE flag and occluder from
 * cut_links or kept). The owners' flags are set after the layout (dname_flags). 0 (p->sg_dname set when there is
 * one), or -1: declined (why).
 */
static int signed_dnames(struct patch *p, const void *img, uint32_t z, char *why, size_t wl)
{
	char txt[1024], below[1024];
	bool any = false;

	for (size_t i = 0; i < p->n_t && !any; i++)
		any = p->t[i].dn_s;
	if (!any)
		return 0;
	if (dname_links(p, img, z, txt, sizeof(txt), below, sizeof(below)) != 0) {
		if (txt[0] == '\0')
			decline(why, wl, "out of memory");
		else
			decline(why, wl, "%s becomes a DNAME owner but %s stays below it (RFC 6672 "
				"§2.4: the zone does not compile)", txt, below);
		return -1;
	}
	p->sg_dname = true;
	return 0;
}

/* ---- Signed zones: wildcards that come and go ---- */

/*
 * After the layout, a signed zone's wildcards as nodes_link() makes them: a new "*.<x>" is
 * flagged P53_NODE_WILD and becomes x's `wildcard` link, a new wildcard empty non-terminal
 * above a new name (`a.*.x`) too; one that leaves the index takes the link with it (one
 * left as an empty non-terminal, names below it staying, keeps it, as in the compile). The denial side (the NSEC or NSEC3 that comes or goes with it,
 * the proofs naming "*.<x>", which wildcard-expanded answers carry) is the chain's, remade
 * as for any name (nsec_proofs, n3_proofs).
 */
static void wild_links(const struct patch *p, const void *img, uint8_t *ni)
{
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		if (!t->changed || t->n3 || !(t->name[0] == 1 && t->name[1] == '*'))
			continue;
		if (t->dead) {
			if (t->parent != P53_NONE && p53_image_node(ni, t->parent)->wildcard == zrel(p, t->node))
				p53_image_node_w(ni, t->parent)->wildcard = P53_NONE;
		} else if (t->old == P53_NONE) {
			p53_image_node_w(ni, t->node)->flags |= P53_NODE_WILD;
			uint32_t pn = parent_now(p, img, t);
			if (pn != P53_NONE)
				p53_image_node_w(ni, pn)->wildcard = zrel(p, t->node);
		}
	}
}

/*
 * The changed nodes' blocks (image.h, Co-location), appended to the names-and-RDATA section
 * from its offset `pos`: each one 4-byte aligned, the node (its fields as in img, or a zeroed
 * new one), its name, then its RRsets' headers and records (the diff's, from nrd, or kept
 * ones copied from img), each header 4-byte aligned; a node left without RRsets keeps its
 * block where it was. With sec NULL only measured (the nodes and names that move counted
 * into *garbage); else written, with the appended rrsets[] entries (roff, indexed as nrs) and
 * ni's nodes[] pointing at the blocks (their name-index slots are the caller's). Returns where
 * the last block ends.
 */
static size_t blocks_append(const struct patch *p, const void *img, uint8_t *sec, uint32_t *roff,
			    uint8_t *ni, size_t pos, uint64_t *garbage)
{
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		if (!t->changed || (t->rs_n == 0 && t->old != P53_NONE))
			continue;
		size_t at = p53_image_rrset_at(pos);    /* a block is 4-byte aligned (image.h) */
		if (sec == NULL && t->old != P53_NONE)
			*garbage += sizeof(struct p53_image_node) + t->len;
		if (sec != NULL) {
			memset(sec + pos, 0, at - pos);
			p53_image_node_place(ni, t->node, (uint32_t)at,
					     t->old != P53_NONE ? p53_image_node(img, t->old) : NULL);
			memcpy(sec + at + sizeof(struct p53_image_node), t->name, t->len);
		}
		pos = at + sizeof(struct p53_image_node) + t->len;
		for (uint32_t r = t->rs_first; r < t->rs_first + t->rs_n; r++) {
			const struct p53_image_rrset *rs = &p->nrs[r];
			size_t at = p53_image_rrset_at(pos);
			if (sec != NULL) {
				uint32_t old = p->nrs_old[r];
				memset(sec + pos, 0, at - pos);
				memcpy(sec + at, rs, sizeof(*rs));
				memcpy(sec + at + sizeof(*rs), old != P53_NONE ?
				       p53_image_rdata(img, p53_image_rrset(img, old)) : p->nrd + p->nrs_rd[r],
				       (size_t)rs->rdata_len + rs->sig_len);
				roff[r] = (uint32_t)at;
			}
			pos = at + p53_image_rrset_span(rs);
		}
	}
	return pos;
}

/* ---- The parent side of a served child: names at or below another served zone's apex ---- */

/*
 * When pop53 serves a zone and a child zone below it (a CDN serving example.com and
 * sub.example.com), the parent's names at and below the child's apex are the parent's nodes
 * (its cut, DS, RFC 4035 §3.1.4.1; its glue) out of the name index: the compiler indexes the
 * deepest zone's node (image.h, Name index). What reads them: answer.c's DS at the child
 * apex (p53_image_node_parent_side(): the parent's node there, its DS RRset or its NODATA
 * proof), additional lists of the parent's RRsets naming them (adds_make: the owner zone's
 * own copy first; adds_list, shadow_node) and, in a signed parent, its chain and proofs (the
 * cut owns an NSEC or NSEC3 as any cut). So their records change as any name's, at the node
 * the compiler made for them (shadowed: found through the child apex's parent_side, or for a
 * name below it by one pass over the nodes), and nothing else moves as long as what the
 * compiler derives from them stays: the cut stays a cut (CUT, the links below it), no DNAME
 * comes or goes, and no cut or DNAME above it comes or goes in the same diff (its
 * occluder). A name new there (new glue, the delegation at a name the parent lacked) gets
 * a node of the parent out of the name index, with new empty non-terminals above it as
 * any new name (shadow_ancestors, shadow_mark), GLUE and its occluder from the names
 * above it (shadow_new), and at the child's apex becomes its parent_side (shadow_sides);
 * a name gone there leaves as any name that goes, out of the index already, the empty
 * non-terminals above it with it (found by zone_node), and the delegation may go with
 * every name below it (parent_side P53_NONE), or come or go at a name that stays, the
 * names below becoming or ceasing to be glue (shadow_flips; in a signed parent with their
 * NSECs/NSEC3s, which the diff brings, and the proofs made again). A name gaining its first
 * address or
 * losing its last moves the lists naming it as any target's (relist_gain with own_addr,
 * relist_lose); losing its last while the served zone's copy has addresses, the lists are
 * made again as for a gain (shadow_swap: the compiler lists that copy then). What does not
 * hold declines, naming the case.
 */

/* The highest apex of another served zone at or above canonical name q of zone z (below
 * z's apex), or P53_NONE. */
static uint32_t served_top(const void *img, uint32_t z, size_t apex_len, const uint8_t *q,
			   size_t ql)
{
	uint32_t top = P53_NONE;

	while (ql > apex_len) {
		uint32_t m = p53_image_find(img, q, ql, p53_name_hash(q, ql));
		if (m != P53_NONE && p53_image_node(img, m)->zone != z &&
		    (p53_image_node(img, m)->flags & P53_NODE_APEX))
			top = m;
		ql -= 1u + q[0];
		q += 1u + q[0];
	}
	return top;
}

/* When touched name t is zone z's name at or below another served zone's apex: the highest
 * such apex's node (at the name or above it), else P53_NONE. */
static uint32_t served_below(const void *img, uint32_t z, size_t apex_len, const struct tn *t)
{
	return served_top(img, z, apex_len, t->name, t->len);
}

/* The lowest apex of another served zone at or above canonical name q of zone z (its
 * closest enclosing served zone's), or P53_NONE. */
static uint32_t served_lowest(const void *img, uint32_t z, size_t apex_len, const uint8_t *q,
			      size_t ql)
{
	while (ql > apex_len) {
		uint32_t m = p53_image_find(img, q, ql, p53_name_hash(q, ql));
		if (m != P53_NONE && p53_image_node(img, m)->zone != z &&
		    (p53_image_node(img, m)->flags & P53_NODE_APEX))
			return m;
		ql -= 1u + q[0];
		q += 1u + q[0];
	}
	return P53_NONE;
}

/* Queues the names above shadowed touched name t up to the served apex `top` (its highest),
 * whose nodes in zone z the pass of shadowed_nodes finds (shadow_anc_found; the one at the
 * apex is its parent_side): for shadow_at. -1: out of memory. */
static int shadow_anc(struct patch *p, const void *img, uint32_t z, const struct tn *t,
		      uint32_t top)
{
	const struct p53_image_node *cn = p53_image_node(img, top);
	const uint8_t *q = t->name;
	size_t ql = t->len;

	while (ql > cn->name_len) {
		ql -= 1u + q[0];
		q += 1u + q[0];
		bool have = false;
		for (size_t i = 0; i < p->n_sa && !have; i++)
			have = p->sa[i].len == ql && memcmp(p->sa[i].name, q, ql) == 0;
		if (have)
			continue;
		if (grow((void **)&p->sa, &p->sa_cap, p->n_sa + 1, sizeof(*p->sa)) != 0)
			return -1;
		struct shadow *e = &p->sa[p->n_sa++];
		memcpy(e->name, q, ql);
		e->len = (uint8_t)ql;
		e->zone = z;
		e->node = P53_NONE;
		if (ql == cn->name_len) {
			uint32_t ps = p53_image_node_parent_side(img, cn);
			if (ps != P53_NONE && p53_image_node(img, ps)->zone == z)
				e->node = ps;
		}
	}
	return 0;
}

/* shadowed_nodes' pass: node n (zone z's, no NSEC3 owner) is the one of a queued name. */
static void shadow_anc_found(struct patch *p, const void *img, uint32_t n)
{
	const struct p53_image_node *nd = p53_image_node(img, n);

	for (size_t i = 0; i < p->n_sa; i++)
		if (p->sa[i].len == nd->name_len &&
		    memcmp(p->sa[i].name, p53_image_node_name(img, nd), nd->name_len) == 0)
			p->sa[i].node = n;
}

/* Zone z's old node at canonical name q: one queued by shadow_anc when q lies at or below
 * another served zone's apex, else the indexed one when it is zone z's; or P53_NONE. */
static uint32_t zone_node(const struct patch *p, const void *img, uint32_t z, size_t apex_len,
			  const uint8_t *q, size_t ql)
{
	if (served_top(img, z, apex_len, q, ql) != P53_NONE) {
		for (size_t i = 0; i < p->n_sa; i++)
			if (p->sa[i].len == ql && memcmp(p->sa[i].name, q, ql) == 0)
				return p->sa[i].node;
		return P53_NONE;
	}
	uint32_t m = p53_image_find(img, q, ql, p53_name_hash(q, ql));
	return m != P53_NONE && p53_image_node(img, m)->zone == z ? m : P53_NONE;
}

/*
 * The touched names of zone z at or below another served zone's apex (shadowed): each one's
 * node in zone z (t->old, t->shadow set; P53_NONE for a name new there, shadow_new), the
 * one at a child's apex through its parent_side link, the others, and the names above them
 * up to the child's apex (shadow_anc, for zone_node), by one pass over the nodes for all of
 * them. A name at or below a grandchild's apex (a served zone below the child) is z's node
 * there as any (shadow_sides leaves the grandchild's parent_side, the child's node, alone).
 * 0, or -1: declined (why).
 */
static int shadowed_nodes(struct patch *p, const void *img, uint32_t z, size_t apex_len,
			  char *why, size_t wl)
{
	char txt[1024];
	size_t n_below = 0;

	p->sz = z;
	for (size_t i = 1; i < p->n_t; i++) {
		struct tn *t = &p->t[i];
		uint32_t top = served_below(img, z, apex_len, t);
		if (top == P53_NONE)
			continue;
		const struct p53_image_node *cn = p53_image_node(img, top);
		t->shadow = true;
		t->old = P53_NONE;
		if (shadow_anc(p, img, z, t, top) != 0) {
			decline(why, wl, "out of memory");
			return -1;
		}
		if (cn->name_len == t->len) {
			uint32_t ps = p53_image_node_parent_side(img, cn);
			if (ps != P53_NONE && p53_image_node(img, ps)->zone != z) {
				decline(why, wl, "%s is the apex of a served zone whose parent side is "
					"another served zone's, not this one's",
					p53_name_to_str(txt, sizeof(txt), t->name));
				return -1;
			}
			t->old = ps;
		} else {
			n_below++;
		}
	}
	const struct p53_image_zone *zn = p53_image_zone(img, z);
	for (uint32_t n = zn->node_base; n < zn->node_base + zn->n_nodes && n_below > 0; n++) {
		const struct p53_image_node *nd = p53_image_node(img, n);
		if (nd->flags & P53_NODE_NSEC3)
			continue;
		uint32_t k = tn_find(&p->ts, p->t, p53_image_node_name(img, nd), nd->name_len);
		if (k != P53_NONE && k != 0 && p->t[k].shadow && p->t[k].old == P53_NONE)
			p->t[k].old = n;
		shadow_anc_found(p, img, n);
	}
	return 0;
}

/*
 * new_ancestors() for a name new in zone z at or below another served zone's apex: the names
 * above it up to the first one zone z holds (its node found by zone_node: out of the name
 * index there) are queued for new empty non-terminals (shadow_mark makes them shadowed
 * too). The one found must be no DNAME owner nor below one, no NSEC3 owner, and in a signed
 * zone not a cut, glue or below an occluder unless the new name is glue below it
 * (glue_parent). -1: declined; -2: a DNAME owner that stays above it.
 */
static int shadow_ancestors(struct patch *p, const void *img, uint32_t z, size_t apex_len,
			    const struct tn *t, bool sgn)
{
	const uint8_t *q = t->name + 1 + t->name[0];
	size_t ql = t->len - 1u - t->name[0];

	while (ql >= apex_len) {
		uint32_t m = zone_node(p, img, z, apex_len, q, ql);
		if (m != P53_NONE) {
			const struct p53_image_node *nd = p53_image_node(img, m);
			if ((nd->flags & P53_NODE_DNAME) && !dname_goes_ok(p, q, ql))
				return -2;
			if ((nd->flags & P53_NODE_NSEC3) || dname_above(img, nd) ||
			    (sgn && ((nd->flags & (P53_NODE_CUT | P53_NODE_GLUE)) ||
				     nd->occluder != P53_NONE) && !glue_parent(img, nd)))
				return -1;
			return 0;
		}
		if (ql == apex_len || (served_top(img, z, apex_len, q, ql) == P53_NONE &&
				       p53_image_find(img, q, ql, p53_name_hash(q, ql)) != P53_NONE))
			return -1; /* another zone's name above the served apex */
		if (pend_push(p, q, ql) != 0)
			return -1;
		ql -= 1u + q[0];
		q += 1u + q[0];
	}
	return -1;
}

/* The new empty non-terminals add_ancestors() made at or below another served zone's apex
 * are shadowed names too (out of the name index). */
static void shadow_mark(struct patch *p, const void *img, uint32_t z, size_t apex_len)
{
	for (size_t i = 1; i < p->n_t; i++) {
		struct tn *t = &p->t[i];
		if (!t->shadow && t->old == P53_NONE &&
		    served_top(img, z, apex_len, t->name, t->len) != P53_NONE)
			t->shadow = true;
	}
}

/*
 * A name new in the parent at or below a served child's apex (new glue, the delegation at
 * a name the parent did not hold): the compiler makes it a node of the parent out of the
 * name index (nodes_link: shadowed), GLUE with the closest cut above it as its occluder, and
 * at the child's apex the child's parent_side (shadow_sides). Its occluder is read off the
 * names above it as the patch leaves them (a touched one's cut_now, else the old node's:
 * no cut comes or goes above a shadowed name, shadowed_ok; below one that comes or goes
 * there, shadow_flips makes it again). A new cut there (a nested delegation below the
 * child's apex, or the parent's own below it) is linked the same way: the names below it
 * are new too.
 */
static void shadow_new(struct patch *p, const void *img, size_t apex_len, struct tn *t)
{
	const uint8_t *q = t->name + 1 + t->name[0];
	size_t ql = t->len - 1u - t->name[0];

	t->occ_now = P53_NONE;
	while (ql >= apex_len) {
		uint32_t k = tn_find(&p->ts, p->t, q, ql), node;
		if (k != P53_NONE && p->t[k].old == P53_NONE) {
			if (p->t[k].changed && p->t[k].cut_now) {
				t->occ_now = p->t[k].node;
				return;
			}
		} else {
			node = k != P53_NONE ? p->t[k].old : zone_node(p, img, p->sz, apex_len, q, ql);
			if (node != P53_NONE) {
				const struct p53_image_node *nd = p53_image_node(img, node);
				bool cut = k != P53_NONE && p->t[k].changed ? p->t[k].cut_now :
					   (nd->flags & P53_NODE_CUT) != 0;
				t->occ_now = cut ? node : nabs(img, nd, nd->occluder);
				return;
			}
		}
		if (ql == apex_len)
			break;
		ql -= 1u + q[0];
		q += 1u + q[0];
	}
}

/* Whether shadowed touched name t stays in the image and becomes or stops being a cut (the
 * parent's delegation to a served child added at a name it holds, or removed while names
 * stay below it, or a cut below it coming or going: shadow_flips). */
static bool shadow_flip(const struct patch *p, const void *img, const struct tn *t)
{
	(void)p;
	return t->shadow && t->old != P53_NONE && !(t->changed && t->dead) &&
	       t->cut_now != ((p53_image_node(img, t->old)->flags & P53_NODE_CUT) != 0);
}

/* The highest of the flips fs (a set of touched names) strictly above name nm, or P53_NONE. */
static uint32_t flip_above(const struct patch *p, const struct nset *fs, const uint8_t *nm,
			   size_t len)
{
	uint32_t top = P53_NONE;

	for (size_t off = 1u + nm[0]; off < len; off += 1u + nm[off]) {
		uint32_t k = tn_find(fs, p->t, nm + off, len - off);
		if (k != P53_NONE)
			top = k;
	}
	return top;
}

/*
 * The occluder nodes_link() gives name nm of the parent below the flip p->t[top] (its
 * highest): the closest name above it, up to the flip, that is a cut as the patch leaves it
 * (a touched name's cut_now, else the old node's CUT: the untouched ones below the flips,
 * cuts[0..n_cuts), or the flip's own occluder when none is.
 */
static uint32_t flip_occ(const struct patch *p, const void *img, uint32_t top, const uint32_t *cuts,
			 size_t n_cuts, const uint8_t *nm, size_t len)
{
	const struct tn *f = &p->t[top];

	for (size_t off = 1u + nm[0]; off < len && len - off >= f->len; off += 1u + nm[off]) {
		const uint8_t *q = nm + off;
		size_t ql = len - off;
		uint32_t k = tn_find(&p->ts, p->t, q, ql);
		if (k != P53_NONE) {
			const struct tn *a = &p->t[k];
			if (a->changed ? a->cut_now && !a->dead :
			    a->old != P53_NONE && (p53_image_node(img, a->old)->flags & P53_NODE_CUT))
				return a->changed ? a->node : a->old;
			continue;
		}
		for (size_t j = 0; j < n_cuts; j++) {
			const struct p53_image_node *cd = p53_image_node(img, cuts[j]);
			if (cd->name_len == ql && memcmp(p53_image_node_name(img, cd), q, ql) == 0)
				return cuts[j];
		}
	}
	return nabs(img, p53_image_node(img, f->old), p53_image_node(img, f->old)->occluder);
}

/*
 * A parent whose delegations at or below a served child's apex come or go at names that stay
 * (shadow_flip: the delegation to the child added at a name the parent holds or removed
 * while names stay below it, a cut below it coming or going with it): the parent's names
 * below them become glue or stop being it, as nodes_link() links them: each one's occluder
 * the closest cut above it as the patch leaves the names, up to the highest flip above it,
 * else that flip's own (no cut above it comes or goes, shadowed_ok), flip_occ. One pass over
 * the zone's nodes finds them (out of the name index) and the cuts among them: touched
 * ones get occ_now, the others go to p->desc as cut_links' do. In a signed parent
 * (signed_deleg, signed_nest: the delegation's own records and NSEC/NSEC3 as any name's)
 * what a signer sends with it comes in the diff: the NSECs / NSEC3s and RRSIGs of the names
 * that become glue going, of those freed coming; the links are applied with signed_cuts'
 * (signed_links) and the proofs made again with the chain's (glue_proofs: a node made glue
 * loses its proof, one freed gets one as a new node's). 0, or -1 (why: out of memory).
 */
static int shadow_flips(struct patch *p, const void *img, uint32_t z, char *why, size_t wl)
{
	uint8_t min_l = UINT8_MAX;
	struct nset fs;
	uint32_t *cuts = NULL;
	size_t n_cuts = 0, cuts_cap = 0, d0 = p->n_desc;
	int rc = 0;

	ssize_t n_f = flips_set(p, img, shadow_flip, &fs, &min_l);
	if (n_f <= 0) {
		if (n_f < 0)
			decline(why, wl, "out of memory");
		return (int)n_f;
	}
	/* The parent's untouched nodes below a flip, and the cuts among them. */
	const struct p53_image_zone *zn = p53_image_zone(img, z);
	for (uint32_t n = zn->node_base; n < zn->node_base + zn->n_nodes && rc == 0; n++) {
		const struct p53_image_node *nd = p53_image_node(img, n);
		if ((nd->flags & P53_NODE_NSEC3) || nd->labels <= min_l)
			continue;
		const uint8_t *nm = p53_image_node_name(img, nd);
		uint32_t top = flip_above(p, &fs, nm, nd->name_len);
		if (top == P53_NONE || tn_find(&p->ts, p->t, nm, nd->name_len) != P53_NONE)
			continue; /* a touched name gets occ_now below */
		if (grow((void **)&p->desc, &p->desc_cap, 2 * (p->n_desc + 1), sizeof(uint32_t)) != 0 ||
		    ((nd->flags & P53_NODE_CUT) &&
		     grow((void **)&cuts, &cuts_cap, n_cuts + 1, sizeof(*cuts)) != 0)) {
			rc = -1;
			break;
		}
		if (nd->flags & P53_NODE_CUT)
			cuts[n_cuts++] = n;
		p->desc[2 * p->n_desc] = n;
		p->desc[2 * p->n_desc + 1] = top;
		p->n_desc++;
	}
	for (size_t j = d0; j < p->n_desc && rc == 0; j++) {
		const struct p53_image_node *nd = p53_image_node(img, p->desc[2 * j]);
		p->desc[2 * j + 1] = flip_occ(p, img, p->desc[2 * j + 1], cuts, n_cuts,
					      p53_image_node_name(img, nd), nd->name_len);
	}
	for (size_t i = 1; i < p->n_t && rc == 0; i++) {
		struct tn *t = &p->t[i];
		uint32_t top = flip_above(p, &fs, t->name, t->len);
		if (top != P53_NONE && !(t->changed && t->dead))
			t->occ_now = flip_occ(p, img, top, cuts, n_cuts, t->name, t->len);
	}
	if (rc != 0)
		decline(why, wl, "out of memory");
	free(cuts);
	nset_free(&fs);
	return rc;
}

/* A served child's parent_side (the parent's node at its apex, image.h) where the patch
 * made that node or took it out: the new node, or P53_NONE, as zones_finish() links it. */
static void shadow_sides(const struct patch *p, const void *img, struct p53_image_zone *zones,
			 uint32_t z)
{
	for (size_t i = 1; i < p->n_t + p->n_ext; i++) {
		const struct tn *t = &p->t[i];
		bool made = i < p->n_t && t->changed && t->old == P53_NONE;
		if (!t->shadow || !(made || t->dead))
			continue;
		uint32_t m = p53_image_find(img, t->name, t->len, p53_name_hash(t->name, t->len));
		if (m == P53_NONE || p53_image_node(img, m)->zone == z ||
		    !(p53_image_node(img, m)->flags & P53_NODE_APEX))
			continue;
		/* A grandchild's apex: its closest enclosing served zone (the child) holds its
		 * parent side, not z (zones_finish). */
		if (served_lowest(img, z, zones[z].name_len, t->name + 1 + t->name[0],
				  t->len - 1u - t->name[0]) != P53_NONE)
			continue;
		struct p53_image_zone *cz = &zones[p53_image_node(img, m)->zone];
		if (made)
			cz->parent_side = t->node;
		else if (cz->parent_side == t->old)
			cz->parent_side = P53_NONE;
	}
}

/*
 * After the touched names' RRsets are known: for each shadowed name (shadowed_nodes) an old
 * one's occluder is the old one (occ_now; shadow_flips makes it again below a cut that comes
 * or goes there); a new one is linked by shadow_new. When a touched name above it in the
 * zone outside the child is new or becomes or stops being a cut or DNAME owner, p->above:
 * cut_links makes every shadowed name's occluder again (occ_above); one that keeps records
 * below a new DNAME declines (the zone does not compile).
 * 0, or -1: declined (why).
 */
static int shadowed_ok(struct patch *p, const void *img, size_t apex_len, char *why, size_t wl)
{
	char txt[1024];

	for (size_t i = 1; i < p->n_t; i++) {
		struct tn *t = &p->t[i];
		if (!t->shadow)
			continue;
		const struct p53_image_node *od = t->old != P53_NONE ? p53_image_node(img, t->old) : NULL;
		p53_name_to_str(txt, sizeof(txt), t->name);
		if (od == NULL) {
			/* New there (shadow_new): its links from the names above it. */
			shadow_new(p, img, apex_len, t);
		} else {
			t->occ_now = nabs(img, od, od->occluder);
		}
		if (!t->changed)
			continue;
		/* A name that goes leaves as any name (a cut that goes with names left below
		 * it: shadow_flips). */
		/* Its first address: the lists naming it are made again (relist_gain, adds_list:
		 * the zone's own copy first, own_addr). Its last: the lists naming it lose it
		 * (relist_lose), or name the served zone's copy instead when that has addresses,
		 * as the compiler's (shadow_swap: made again as for a gain). */
		/* A cut or DNAME above the served apex that comes or goes, or a name new
		 * there (its empty non-terminals): the occluders are made again (p->above,
		 * occ_above in cut_links). A DNAME there with this name's records below it:
		 * the zone does not compile (RFC 6672 §2.4). */
		const uint8_t *q = t->name + 1 + t->name[0];
		size_t ql = t->len - 1u - t->name[0];
		while (ql > apex_len) {
			uint32_t k = tn_find(&p->ts, p->t, q, ql);
			const struct tn *a = k != P53_NONE ? &p->t[k] : NULL;
			if (a != NULL && !a->shadow && a->changed) {
				if (dname_now(p, img, a) && !t->gone) {
					decline(why, wl, "%s is below a served zone's apex and keeps "
						"records below a new DNAME above it (RFC 6672 §2.4: the "
						"zone does not compile)", txt);
					return -1;
				}
				p->above |= a->old == P53_NONE || cut_flips(p, img, a) ||
					    dname_now(p, img, a) ||
					    (p53_image_node(img, a->old)->flags & P53_NODE_DNAME);
			}
			ql -= 1u + q[0];
			q += 1u + q[0];
		}
	}
	return 0;
}

/* ---- Steered owners (unsigned zones): their other records change, the steered RRsets stay ---- */

/*
 * A type the touched name's new records (node md of the small image, or NULL) have that its
 * steered RRsets in the old image (node od) forbid, or 0: static data of a steered owner and
 * type, a CNAME beside steered records, anything beside a steered CNAME (RFC 1034 §3.6.2).
 * The full compile rejects these (image_build.c, extras_add); the patch leaves them to it.
 */
static uint16_t steer_clash(const void *img, const struct p53_image_node *od, const void *mi,
			    const struct p53_image_node *md)
{
	if (md == NULL || !steered_at(img, od))
		return 0;
	for (uint32_t r = rs0(img, od), r_end = r + od->n_rrsets; r < r_end; r++) {
		const struct p53_image_rrset *x = p53_image_rrset(img, r);
		if (!(x->flags & P53_RRSET_STEERED) || x->type == P53_T_NSEC)
			continue;
		for (uint32_t k = rs0(mi, md), k_end = k + md->n_rrsets; k < k_end; k++) {
			uint16_t type = p53_image_rrset(mi, k)->type;
			if (type == x->type || type == P53_T_CNAME || x->type == P53_T_CNAME)
				return type;
		}
	}
	return 0;
}

/* ---- Steered owners of a signed zone: the denial the compile signs for them ---- */

/*
 * The compile gives a steered owner its chain lacks its own NSEC or NSEC3, signed with the
 * config's key (dnssec_build.c p53_dnssec_steer_denial: NSEC `OWNER NSEC NEXT <types>`,
 * NEXT the next name of the zone's NSEC covering OWNER or the next steered owner before it;
 * NSEC3 at the owner's hash, next hash + 1, `<types> RRSIG`; either with the zone's
 * negative TTL, min(SOA TTL, SOA MINIMUM): RFC 9077 §3). The patch keeps that record and its
 * RRSIG as the last compile made them where the compile would make the same record again. In
 * an NSEC zone, with the caller's key, it makes the ones that change in the same run: the plan
 * touches the steered owners beside the diff's names in the chain (steer_near), and once the
 * new chain is planned, before anything is laid out, each touched steered owner's NSEC is made
 * from it and signed where its RDATA changes, or where the owner lost its own NSEC
 * (steer_sign); in an NSEC3 zone an owner gains or loses its own NSEC3 (steer_n3_owners
 * below). After the layout
 * steer_denials() checks every steered owner against the patched image; what does not hold
 * (no key, a new negative TTL) declines and the compile signs.
 */

/* Octets of an uncompressed wire name. */
static size_t wire_len(const uint8_t *nm)
{
	size_t l = 0;

	while (nm[l] != 0)
		l += 1u + nm[l];
	return l + 1;
}

/* Whether the patch signs steered owners' NSECs (the caller passed a key). */
static bool steer_key(const struct patch *p)
{
	return p->sign != NULL && p->sign->key != NULL;
}

/*
 * The zone as steer_nsec_expect() reads it: the patched image (p NULL), or, before the
 * layout, the old image with the touched names' new RRsets (p->nrs) for the nodes in tix
 * ((node, touched index) pairs sorted by node).
 */
struct sview {
	const void *img;
	const struct patch *p;
	const uint32_t *tix;
	size_t n_tix;
	uint32_t cb;            /* added to the chain's entries read with it: the zone's node
				   base for an image's chain[] (relative, image.h), 0 for p->zc */
};

static const struct tn *sv_t(const struct sview *v, uint32_t n)
{
	size_t lo = 0, hi = v->n_tix;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v->tix[2 * mid] < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->n_tix && v->tix[2 * lo] == n ? &v->p->t[v->tix[2 * lo + 1]] : NULL;
}

static const uint8_t *sv_name(const struct sview *v, uint32_t n)
{
	const struct tn *t = sv_t(v, n);

	return t != NULL ? t->name : p53_image_node_name(v->img, p53_image_node(v->img, n));
}

/* Node n's RRset of `type` and its records' bytes (*rd, NULL for a place steer_sign() has
 * not filled yet), or NULL. */
static const struct p53_image_rrset *sv_rrset(const struct sview *v, uint32_t n, uint16_t type,
					      const uint8_t **rd)
{
	const struct tn *t = sv_t(v, n);
	uint32_t r;

	if (t == NULL) {
		if (!has_type(v->img, n, type, &r))
			return NULL;
		*rd = p53_image_rdata(v->img, p53_image_rrset(v->img, r));
		return p53_image_rrset(v->img, r);
	}
	for (uint32_t j = t->rs_first; j < t->rs_first + t->rs_n; j++) {
		if (v->p->nrs[j].type != type)
			continue;
		uint32_t old = v->p->nrs_old[j];
		*rd = old != P53_NONE ? p53_image_rdata(v->img, p53_image_rrset(v->img, old)) :
		      t->steer_fill && type == P53_T_NSEC ? NULL : v->p->nrd + v->p->nrs_rd[j];
		return &v->p->nrs[j];
	}
	return NULL;
}

/* Whether node n has a steered RRset (steered_at). */
static bool sv_steered(const struct sview *v, uint32_t n)
{
	const struct tn *t = sv_t(v, n);

	if (t == NULL)
		return steered_at(v->img, p53_image_node(v->img, n));
	for (uint32_t j = t->rs_first; j < t->rs_first + t->rs_n; j++) {
		const struct p53_image_rrset *rs = &v->p->nrs[j];
		if ((rs->flags & P53_RRSET_STEERED) && rs->type != P53_T_NSEC && rs->type != 50)
			return true;
	}
	return false;
}

/* RFC 4034 §4.1.2 bitmap of node n's types with t1 and t2 (0: none) into out; its length. */
static size_t sv_bitmap(const struct sview *v, uint32_t n, uint16_t t1, uint16_t t2, uint8_t *out)
{
	const struct tn *t = sv_t(v, n);
	uint8_t bits[8192];

	memset(bits, 0, sizeof(bits));
	if (t == NULL) {
		const struct p53_image_node *nd = p53_image_node(v->img, n);
		for (uint32_t r = rs0(v->img, nd), r_end = r + nd->n_rrsets; r < r_end; r++) {
			uint16_t ty = p53_image_rrset(v->img, r)->type;
			bits[ty >> 3] |= (uint8_t)(0x80 >> (ty & 7));
		}
	} else {
		for (uint32_t j = t->rs_first; j < t->rs_first + t->rs_n; j++) {
			uint16_t ty = v->p->nrs[j].type;
			bits[ty >> 3] |= (uint8_t)(0x80 >> (ty & 7));
		}
	}
	bits[t1 >> 3] |= (uint8_t)(0x80 >> (t1 & 7));
	bits[t2 >> 3] |= (uint8_t)(0x80 >> (t2 & 7));
	bits[0] &= 0x7f; /* type 0 (no type) */
	return p53_type_bitmap(bits, out);
}

/* The single record of RRset rs (records at r, NULL: none yet): its RDATA and length
 * (records carry an owner pointer and TYPE CLASS TTL RDLENGTH before it). */
static const uint8_t *one_rdata(const struct p53_image_rrset *rs, const uint8_t *r, size_t *rdlen)
{
	if (r == NULL || rs->count != 1 || rs->rdata_len < P53_RR_OWNER_LEN + 10u)
		return NULL;
	*rdlen = (size_t)(r[10] << 8 | r[11]);
	return *rdlen + P53_RR_OWNER_LEN + 10u == rs->rdata_len ? r + 12 : NULL;
}

/*
 * The NSEC the compile makes for steered owner o of an NSEC zone whose chain is ch[c0, c1)
 * as v reads it (the owners before o end at position at, those after it start at after: o
 * is at `at` or not in the chain), as its RDATA into out (its length), or 0 when the
 * compile's next name cannot be told from the chain here (an owner before o's whose NSEC
 * does not name a canonical next: the patch declines).
 */
static size_t steer_nsec_expect(const struct sview *v, uint32_t o, const uint32_t *ch, uint32_t c0,
				uint32_t c1, uint32_t at, uint32_t after, uint8_t *out)
{
	const struct p53_image_rrset *rs = NULL;
	const uint8_t *on = sv_name(v, o), *rd = NULL;
	uint32_t pk = at;
	size_t rl, nl;

	/* The zone's NSEC covering o: its nearest owner before o that is no steered owner's
	 * (the apex, first in the chain, at worst). */
	while (pk > c0) {
		pk--;
		rs = sv_rrset(v, (v->cb + ch[pk]), P53_T_NSEC, &rd);
		if (rs != NULL && !(rs->flags & P53_RRSET_STEERED))
			break;
		rs = NULL;
	}
	rd = rs != NULL ? one_rdata(rs, rd, &rl) : NULL;
	if (rd == NULL || (nl = wire_len(rd)) > rl)
		return 0;
	const uint8_t *pn = sv_name(v, (v->cb + ch[pk]));
	const uint8_t *x = rd;
	if (!(canon_cmp(on, x) < 0 || canon_cmp(x, pn) <= 0)) {
		/* Covered by none: \000.OWNER. */
		size_t ol = wire_len(on);
		out[0] = 1;
		out[1] = 0;
		memcpy(out + 2, on, ol);
		nl = ol + 2;
	} else {
		/* The next steered owner before that NSEC's next name (the chain holds every
		 * steered owner: its own NSEC, or this one). */
		bool wraps = canon_cmp(x, on) <= 0;
		for (uint32_t j = after; j < c1; j++) {
			const uint8_t *jn = sv_name(v, (v->cb + ch[j]));
			if (!wraps && canon_cmp(jn, x) >= 0)
				break;
			if (sv_steered(v, (v->cb + ch[j]))) {
				x = jn;
				break;
			}
		}
		nl = wire_len(x);
		memcpy(out, x, nl);
	}
	return nl + sv_bitmap(v, o, P53_T_RRSIG, P53_T_NSEC, out + nl);
}

/* Whether node n of img holds a steered owner's NSEC (the one the compile signs). */
static bool steer_nsec_at(const void *img, uint32_t n)
{
	uint32_t r;

	return has_type(img, n, P53_T_NSEC, &r) &&
	       (p53_image_rrset(img, r)->flags & P53_RRSET_STEERED);
}

/* v appended to the array *a (*n of *cap). 0, or -1 (out of memory). */
static int push_u32(uint32_t **a, size_t *n, size_t *cap, uint32_t v)
{
	if (grow((void **)a, cap, *n + 1, sizeof(**a)) != 0)
		return -1;
	(*a)[(*n)++] = v;
	return 0;
}

/* The first position in ch(c0, c1) whose name sorts after nm, as v reads the names. */
static uint32_t chain_after(const struct sview *v, const uint32_t *ch, uint32_t c0, uint32_t c1,
			    const uint8_t *nm)
{
	uint32_t lo = c0 + 1, hi = c1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (canon_cmp(sv_name(v, (v->cb + ch[mid])), nm) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Steered owners steer_near() touched in the last patch (control thread only; tests). */
static size_t steer_near_last;

size_t p53_image_patch_steer_near_last(void)
{
	return steer_near_last;
}

/*
 * The plan, with a key: the steered owners of the NSEC zone of apex node ai whose NSEC the
 * diff may change, touched too. A steered owner's NSEC names the next steered owner after
 * it, or, for the last one before the next name N of the zone's NSEC covering it, N: of the
 * run of steered owners between two names of the content, only the last one's NSEC reads
 * the content, and only the content's name right after it. A name coming, going or
 * changing at a place of the chain changes at most the NSEC of the steered owner right
 * before that place (the run after it keeps its next names: the covering NSEC's next is the
 * same one); a steered owner that is itself touched is planned as such. So one binary
 * search and at most one owner per touched name: O(diff log chain), however long the runs
 * of steered owners (the run right after the apex, which every patch touches, included).
 * 0, or -1 (out of memory).
 */
static int steer_near(struct patch *p, const void *img, uint32_t ai, const uint8_t *apex,
		      size_t apex_len)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	const struct sview v = { .img = img, .cb = p->nb };
	const uint32_t *ch = p53_image_chain(img);
	uint32_t *add = NULL;
	size_t n_add = 0, add_cap = 0;

	steer_near_last = 0;
	if (!steer_key(p) || h->proofs_off == 0)
		return 0;
	const struct p53_image_proof *pa = p53_image_proof(img, ai);
	if (pa->lo == 0 || pa->lo > pa->hi || pa->hi > h->n_chain || p->nb + ch[pa->lo - 1] != ai)
		return 0; /* (nsec_plan declines) */
	const uint32_t c0 = pa->lo - 1, c1 = pa->hi;
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		if (!p53_name_at_or_below(t->name, t->len, apex, apex_len))
			continue; /* (declined later) */
		if (i == 0)
			continue; /* the apex neither comes nor goes: nothing before it reads it */
		uint32_t n = p53_image_find(img, t->name, t->len, p53_name_hash(t->name, t->len));
		uint32_t back;
		if (n != P53_NONE && p53_image_proof(img, n)->lo > c0 &&
		    p53_image_proof(img, n)->lo <= c1 && p->nb + ch[p53_image_proof(img, n)->lo - 1] == n)
			back = p53_image_proof(img, n)->lo - 1;
		else
			back = chain_after(&v, ch, c0, c1, t->name);
		if (back > c0 + 1 && steer_nsec_at(img, p->nb + ch[back - 1]) &&
		    push_u32(&add, &n_add, &add_cap, p->nb + ch[back - 1]) != 0)
			goto oom;
	}
	steer_near_last = n_add;
	if (n_add == 0)
		return 0;
	size_t cap = p->n_t + n_add;
	struct tn *t2 = realloc(p->t, cap * sizeof(*p->t));
	if (t2 == NULL)
		goto oom;
	p->t = t2;
	nset_free(&p->ts);
	if (nset_init(&p->ts, cap, cap) != 0)
		goto oom;
	for (size_t i = 0; i < p->n_t; i++)
		nset_add(&p->ts, (uint32_t)i, p->t[i].name, p->t[i].len);
	for (size_t k = 0; k < n_add; k++) {
		const struct p53_image_node *nd = p53_image_node(img, add[k]);
		const uint8_t *nm = p53_image_node_name(img, nd);
		if (tn_find(&p->ts, p->t, nm, nd->name_len) != P53_NONE)
			continue;
		struct tn *t = &p->t[p->n_t];
		memset(t, 0, sizeof(*t));
		memcpy(t->name, nm, nd->name_len);
		t->len = nd->name_len;
		nset_add(&p->ts, (uint32_t)p->n_t, t->name, t->len);
		p->n_t++;
	}
	free(add);
	return 0;
oom:
	free(add);
	return -1;
}

/* Touched name t, whose RRsets did not change, rewritten as they are (its block moves) so
 * that steer_sign() can put its new NSEC in: what the loop over the touched names gives a
 * changed name. 0, or -1 (out of memory). */
static int steer_touch(struct patch *p, const void *img, struct tn *t, uint64_t *garbage)
{
	const struct p53_image_node *od = p53_image_node(img, t->old);
	size_t need = p->n_nrs + od->n_rrsets;

	if (grow((void **)&p->nrs, &p->nrs_cap, need, sizeof(*p->nrs)) != 0 ||
	    grow((void **)&p->nrs_old, &p->nrs_old_cap, need, sizeof(*p->nrs_old)) != 0 ||
	    grow((void **)&p->nrs_rd, &p->nrs_rd_cap, need, sizeof(*p->nrs_rd)) != 0)
		return -1;
	t->rs_first = (uint32_t)p->n_nrs;
	for (uint32_t r = rs0(img, od), r_end = r + od->n_rrsets; r < r_end; r++) {
		const struct p53_image_rrset *x = p53_image_rrset(img, r);
		struct p53_image_rrset *rs = &p->nrs[p->n_nrs];
		*rs = *x;
		/* Its list made again when relist_gain or relist_lose made one. */
		const uint32_t *hit = p->n_relist > 0 ?
			bsearch(&r, p->relist, p->n_relist, 2 * sizeof(uint32_t), u32_cmp) : NULL;
		if (hit != NULL)
			rs->adds = hit[1];
		p->nrs_old[p->n_nrs] = r;
		p->nrs_rd[p->n_nrs] = P53_NONE;
		p->n_nrs++;
		*garbage += p53_image_rrset_span(x) + sizeof(uint32_t);
	}
	t->rs_n = od->n_rrsets;
	t->changed = true;
	t->node = t->old;
	t->new_addr = t->old_addr;
	return 0;
}

static int tix_cmp(const void *a, const void *b)
{
	return u32_cmp(a, b);
}

/* The changed touched names' (new node, touched index) pairs sorted by node, for a view
 * (struct sview); *n of them, or NULL (out of memory). */
static uint32_t *tix_make(const struct patch *p, size_t *n)
{
	uint32_t *tix = malloc((p->n_t ? p->n_t : 1) * 2 * sizeof(*tix));

	*n = 0;
	if (tix == NULL)
		return NULL;
	for (size_t i = 0; i < p->n_t; i++) {
		if (!p->t[i].changed)
			continue;
		tix[2 * *n] = p->t[i].node;
		tix[2 * *n + 1] = (uint32_t)i;
		(*n)++;
	}
	qsort(tix, *n, 2 * sizeof(*tix), tix_cmp);
	return tix;
}

/*
 * Record `type` with RDATA want (wn octets) and TTL ttl at touched name t, signed with the
 * caller's key as the compile signs it (p53_steer_denial_sign), put in t's RRset j (a place
 * the merge kept, flagged P53_RRSET_STEERED): the record and its RRSIG appended to p->nrd
 * behind op's owner pointer (the record it replaces). Its old RRSIG, which goes, may have
 * been zone zn's earliest (*rescan). 0, or -1 with why.
 */
static int steer_put(struct patch *p, const void *img, const struct p53_image_zone *zn,
		     struct tn *t, uint32_t j, uint16_t type, uint32_t ttl, const uint8_t *want,
		     size_t wn, const uint8_t *op, time_t now, bool *rescan, char *why, size_t wl)
{
	uint8_t rr[P53_RR_OWNER_LEN + 10 + P53_NAME_MAXLEN + 2 + 256 * 34], sig[1024];
	char txt[1024];

	memcpy(rr + 12, want, wn);
	int sl = p53_steer_denial_sign(p->sign->key, p->sign->inception, p->sign->expiration,
				       t->name, t->len, type, ttl, rr, wn, sig, sizeof(sig));
	size_t rrl = 12 + wn;
	if (sl < 12) {
		decline(why, wl, "%s: signing its %s failed",
			p53_name_to_str(txt, sizeof(txt), t->name), type == 50 ? "NSEC3" : "NSEC");
		return -1;
	}
	if (grow((void **)&p->nrd, &p->nrd_cap, p->nrd_len + rrl + (size_t)sl, 1) != 0) {
		decline(why, wl, "out of memory");
		return -1;
	}
	memcpy(rr, op, P53_RR_OWNER_LEN);
	memcpy(sig, op, P53_RR_OWNER_LEN);
	uint32_t old = p->nrs_old[j];
	if (old != P53_NONE) {
		uint64_t e = sigs_expire(img, p53_image_rrset(img, old), now);
		*rescan |= e != 0 && e <= zn->sig_expire;
	}
	struct p53_image_rrset *nr = &p->nrs[j];
	p->nrs_old[j] = P53_NONE;
	p->nrs_rd[j] = (uint32_t)p->nrd_len;
	memcpy(p->nrd + p->nrd_len, rr, rrl);
	memcpy(p->nrd + p->nrd_len + rrl, sig, (size_t)sl);
	p->nrd_len += rrl + (size_t)sl;
	nr->flags |= P53_RRSET_STEERED;
	nr->adds = P53_NONE;
	nr->count = 1;
	nr->rdata_len = (uint32_t)rrl;
	nr->sig_count = 1;
	nr->sig_len = (uint32_t)sl;
	nr->ttl = ttl;
	t->steer_fill = false;
	p->signed_nsec = true;
	return 0;
}

/*
 * Before the layout, with a key: each touched steered owner of the NSEC zone of apex node ai
 * gets the NSEC the compile would make for it from the new chain (p->zc, or the old one when
 * no owner comes or goes), signed with the key as the compile signs it
 * (p53_steer_denial_sign) where its RDATA changes or the owner lost its own NSEC
 * (steer_fill); the record and its RRSIG appended to p->nrd, the owner's NSEC RRset pointed
 * at them. An old RRSIG that goes may have been the zone's earliest (*rescan). 0, or -1 with
 * why.
 */
static int steer_sign(struct patch *p, const void *img, uint32_t ai, time_t now, bool *rescan,
		      uint64_t *garbage, char *why, size_t wl)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	const struct p53_image_zone *zn = p53_image_zone(img, p53_image_node(img, ai)->zone);
	uint32_t *tix = NULL;
	size_t n_tix = 0;
	int rc = -1;

	if (!steer_key(p) || h->proofs_off == 0)
		return 0; /* (steer_denials declines what changes) */
	tix = tix_make(p, &n_tix);
	if (tix == NULL) {
		decline(why, wl, "out of memory");
		return -1;
	}
	struct sview v = { .img = img, .p = p, .tix = tix, .n_tix = n_tix };
	const uint32_t *ch = p->zc;
	uint32_t c0 = 0, c1 = (uint32_t)p->n_zc;
	if (!p->nsec_redo) {
		const struct p53_image_proof *pa = p53_image_proof(img, ai);
		if (pa->lo == 0 || pa->lo > pa->hi || pa->hi > h->n_chain)
			goto done;
		ch = p53_image_chain(img);
		v.cb = p->nb;
		c0 = pa->lo - 1;
		c1 = pa->hi;
	}
	const uint8_t *ard;
	const struct p53_image_rrset *ars = sv_rrset(&v, ai, P53_T_NSEC, &ard);
	if (ars == NULL || c1 <= c0 || v.cb + ch[c0] != ai)
		goto done;
	/* RFC 9077 §3, as the compile signs: min(SOA TTL, SOA MINIMUM) of the new SOA. */
	const uint32_t ttl = p53_image_zone(p->mimg, 0)->neg_ttl;
	for (size_t i = 0; i < p->n_t; i++) {
		struct tn *t = &p->t[i];
		if (t->old == P53_NONE || t->n3 || t->gone ||
		    !steered_at(img, p53_image_node(img, t->old)))
			continue;
		const uint8_t *cur;
		const struct p53_image_rrset *rs = sv_rrset(&v, t->old, P53_T_NSEC, &cur);
		if (rs == NULL || !(rs->flags & P53_RRSET_STEERED))
			continue; /* none, or the content's */
		uint32_t at = chain_after(&v, ch, c0, c1, t->name);
		if (at <= c0 + 1 || v.cb + ch[at - 1] != t->old)
			continue; /* (steer_denials declines) */
		uint8_t want[P53_NAME_MAXLEN + 2 + 256 * 34];
		size_t wn = steer_nsec_expect(&v, t->old, ch, c0, c1, at - 1, at, want), rl;
		const uint8_t *rd = one_rdata(rs, cur, &rl);
		if (wn == 0 || (rd != NULL && rl == wn && memcmp(rd, want, wn) == 0))
			continue; /* (a TTL alone: steer_denials declines) */
		if (!t->changed && steer_touch(p, img, t, garbage) != 0) {
			decline(why, wl, "out of memory");
			goto done;
		}
		uint32_t j = t->rs_first;
		while (j < t->rs_first + t->rs_n && p->nrs[j].type != P53_T_NSEC)
			j++;
		/* The record as the image has it: the owner pointer the old one had (the
		 * content's NSEC it replaces, or its own), TYPE CLASS TTL RDLENGTH, RDATA. */
		uint32_t on;
		if (j == t->rs_first + t->rs_n || !has_type(img, t->old, P53_T_NSEC, &on))
			continue; /* (steer_denials declines) */
		if (steer_put(p, img, zn, t, j, P53_T_NSEC, ttl, want, wn,
			      p53_image_rdata(img, p53_image_rrset(img, on)), now, rescan, why, wl) != 0)
			goto done;
	}
	rc = 0;
done:
	free(tix);
	return rc;
}

/*
 * Whether the steered owner o of zone z (node od in the old image, or P53_NONE) has in the
 * patched image ni the denial the full compile would give it: its own NSEC or NSEC3 from the
 * content, or the one the compile signs, kept byte for byte or made by steer_sign(). 0, or
 * -1 with why.
 */
static int steer_denial_ok(const void *img, uint32_t od, const void *ni, uint32_t o, uint32_t ai,
			   bool nsec, char *why, size_t wl)
{
	const struct p53_image_node *nd = p53_image_node(ni, o);
	const uint32_t nb = p53_image_zone(ni, nd->zone)->node_base; /* (image.h) */
	const struct sview v = { .img = ni, .cb = nb };
	char txt[1024];
	uint8_t want[P53_NAME_MAXLEN + 2 + 256 * 34];
	size_t wn = 0, rl;
	uint32_t r, ar;

	p53_name_to_str(txt, sizeof(txt), p53_image_node_name(ni, nd));
	if (nsec) {
		if (!has_type(ni, o, P53_T_NSEC, &r)) {
			/* None before (no key signs steered owners' NSECs here): none after. */
			if (od == P53_NONE || !has_type(img, od, P53_T_NSEC, NULL))
				return 0;
			decline(why, wl, "%s, a steered owner, loses its NSEC (the compile signs one "
				"for it)", txt);
			return -1;
		}
		const struct p53_image_rrset *rs = p53_image_rrset(ni, r);
		if (!(rs->flags & P53_RRSET_STEERED))
			return 0; /* the content's */
		const struct p53_image_proof *pf = p53_image_proof(ni, 0), *pa = &pf[ai];
		const uint32_t at = pf[o].lo - 1;
		if (pf[o].lo == 0 || pf[o].lo > p53_image_hdr(ni)->n_chain ||
		    nb + p53_image_chain(ni)[at] != o || pa->lo == 0)
			goto changes;
		wn = steer_nsec_expect(&v, o, p53_image_chain(ni), pa->lo - 1, pa->hi, at, at + 1,
				       want);
		if (!has_type(ni, ai, P53_T_NSEC, &ar))
			goto changes;
	} else {
		const struct p53_image_proof *pf = p53_image_proof(ni, 0);
		uint32_t m = pf[o].match == P53_NONE ? P53_NONE : nb + pf[o].match;
		if (m == P53_NONE || !has_type(ni, m, 50, &r)) {
			if (od == P53_NONE || p53_image_proof(img, od)->match == P53_NONE)
				return 0;
			decline(why, wl, "%s, a steered owner, loses its NSEC3 (the compile signs one "
				"for it)", txt);
			return -1;
		}
		const struct p53_image_rrset *rs = p53_image_rrset(ni, r);
		if (!(rs->flags & P53_RRSET_STEERED))
			return 0;
		/* The chain now has the owner's hash: the compile takes that record and signs
		 * none (its proofs, and those below it, would move to it). */
		const struct p53_image_node *mn = p53_image_node(ni, m);
		if (n3_node(ni, p53_image_zone(ni, nd->zone), p53_image_node_name(ni, mn),
			    mn->name_len) != P53_NONE) {
			decline(why, wl, "%s, a steered owner, gains its own NSEC3 in the chain (the "
				"one the compile signed for it goes)", txt);
			return -1;
		}
		/* Its parameters and hash as they were (the zone's NSEC3PARAM is not patched),
		 * its types now. */
		const uint8_t *rd = one_rdata(rs, p53_image_rdata(ni, rs), &rl);
		uint32_t am = pf[ai].match == P53_NONE ? P53_NONE : nb + pf[ai].match;
		if (rd == NULL || rl < 6u + rd[4] || rl < 6u + rd[4] + rd[5u + rd[4]] ||
		    am == P53_NONE || !has_type(ni, am, 50, &ar))
			goto changes;
		wn = 6u + rd[4] + rd[5u + rd[4]];
		memcpy(want, rd, wn);
		wn += sv_bitmap(&v, o, P53_T_RRSIG, 0, want + wn);
	}
	{
		const struct p53_image_rrset *rs = p53_image_rrset(ni, r);
		const uint8_t *rd = one_rdata(rs, p53_image_rdata(ni, rs), &rl);
		/* RFC 9077 §3: the zone's negative TTL, min(SOA TTL, SOA MINIMUM). */
		if (wn == 0 || rd == NULL || rs->ttl != p53_image_zone(ni, nd->zone)->neg_ttl ||
		    rl != wn || memcmp(rd, want, wn) != 0)
			goto changes;
	}
	return 0;
changes:
	decline(why, wl, "the %s pop53 signs for steered owner %s would change (its next name, "
		"types or TTL): the full compile signs it again", nsec ? "NSEC" : "NSEC3", txt);
	return -1;
}

/*
 * Every steered owner of zone z that the patch may have changed the denial of (each touched
 * one; in an NSEC zone whose chain changed, every NSEC owner the compile signed; every one
 * when the zone's negative TTL changed) has the denial the full compile would give it
 * (steer_denial_ok). 0, or -1 with why.
 */
static int steer_denials(struct patch *p, const void *img, const void *ni, uint32_t ai,
			 bool nsec, char *why, size_t wl)
{
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		if (t->old == P53_NONE || t->n3 || !steered_at(ni, p53_image_node(ni, t->node)))
			continue;
		if (steer_denial_ok(img, t->old, ni, t->node, ai, nsec, why, wl) != 0)
			return -1;
	}
	/* The SOA's TTL or MINIMUM changed: the compile signs every steered owner's denial
	 * with the new negative TTL (RFC 9077 §3); one left as it was declines. */
	const uint32_t z = p53_image_node(ni, ai)->zone;
	const bool ttl_moved = p53_image_zone(ni, z)->neg_ttl !=
			       p53_image_zone(img, p53_image_node(img, ai)->zone)->neg_ttl;
	const struct p53_image_zone *zn = p53_image_zone(ni, z);
	for (uint32_t n = zn->node_base; ttl_moved && !nsec && n < zn->node_base + zn->n_nodes; n++) {
		uint32_t r;
		if (has_type(ni, n, 50, &r) &&
		    (p53_image_rrset(ni, r)->flags & P53_RRSET_STEERED) &&
		    p53_image_rrset(ni, r)->ttl != p53_image_zone(ni, z)->neg_ttl) {
			decline(why, wl, "the SOA's TTL or MINIMUM changes the TTL of the NSEC3 "
				"pop53 signs for steered owners: the full compile signs them again");
			return -1;
		}
	}
	if (!nsec || !(p->nsec_redo || ttl_moved))
		return 0;
	const struct p53_image_proof *pa = p53_image_proof(ni, ai);
	const uint32_t *ch = p53_image_chain(ni);
	for (uint32_t j = pa->lo; j < pa->hi; j++) {
		uint32_t o = zn->node_base + ch[j];
		if (steer_nsec_at(ni, o) &&
		    steer_denial_ok(img, o < p->nn0 ? o : P53_NONE,
				    ni, o, ai, nsec, why, wl) != 0)
			return -1;
	}
	return 0;
}

/* ---- Steered owners of an NSEC3 zone: their own NSEC3 coming and going ---- */

/*
 * The NSEC3 the compile signs for a steered owner its chain lacks sits at the owner's hash,
 * out of the sorted hashes: `<parameters> <hash + 1> <types> RRSIG` (p53_dnssec_steer_denial).
 * Nothing in it depends on the chain but its parameters and TTL, so the chain moving beside
 * the owner leaves it; what moves it is the content's own NSEC3 at the owner's hash coming or
 * going. The owner is then a touched name or above one (its data, or names below it, come
 * or go with that NSEC3): steer_n3_owners() lists those owners and the NSEC3 node matching
 * each in the old image. The content's NSEC3 at the hash of an owner matched by the
 * compile's takes that node (steer_n3_synth: it joins the sorted hashes, and the proofs
 * naming the node, which only the owner's match and its names' enclosers do, stay right:
 * nsec3_zone() gives them the content's); an owner's own
 * NSEC3 that goes keeps its node, with the key, for the one the compile signs there
 * (steer_sign3: it leaves the sorted hashes, and n3_proofs() gives the owner that node as
 * the compile gives it the one it makes). steer_denials() checks both after the layout.
 */

/* The steered owners of zone z at or above the touched names, each with the NSEC3 node
 * matching it in the old image (p->s3). 0, or -1 (out of memory). */
static int steer_n3_owners(struct patch *p, const void *img, uint32_t z, size_t apex_len)
{
	for (size_t i = 0; i < p->n_t; i++) {
		const uint8_t *q = p->t[i].name;
		size_t ql = p->t[i].len;
		for (;; ql -= 1u + q[0], q += 1u + q[0]) {
			uint32_t o = p53_image_find(img, q, ql, p53_name_hash(q, ql));
			if (o != P53_NONE && p53_image_node(img, o)->zone == z &&
			    steered_at(img, p53_image_node(img, o))) {
				uint32_t m = nabs(img, p53_image_node(img, o), p53_image_proof(img, o)->match);
				bool dup = false;
				for (size_t k = 0; k < p->n_s3 && !dup; k++)
					dup = p->s3[k].owner == o;
				if (m != P53_NONE && !dup) {
					if (grow((void **)&p->s3, &p->s3_cap, p->n_s3 + 1, sizeof(*p->s3)) != 0)
						return -1;
					p->s3[p->n_s3++] = (struct s3){ .owner = o, .n3 = m };
				}
			}
			if (ql <= apex_len)
				break;
		}
	}
	return 0;
}

/* The node of the NSEC3 the compile signed for a steered owner listed in p->s3 at owner
 * name nm (canonical), or P53_NONE. */
static uint32_t steer_n3_synth(const struct patch *p, const void *img, const uint8_t *nm,
			       size_t len)
{
	uint32_t r;

	for (size_t k = 0; k < p->n_s3; k++) {
		const struct p53_image_node *nd = p53_image_node(img, p->s3[k].n3);
		if (nd->name_len == len && eq_fold(nm, p53_image_node_name(img, nd), len) &&
		    has_type(img, p->s3[k].n3, 50, &r) &&
		    (p53_image_rrset(img, r)->flags & P53_RRSET_STEERED))
			return p->s3[k].n3;
	}
	return P53_NONE;
}

/* The steered owner whose own NSEC3 (the content's) is at old node n, or P53_NONE. */
static uint32_t steer_n3_owner(const struct patch *p, uint32_t n)
{
	for (size_t k = 0; k < p->n_s3; k++)
		if (p->s3[k].n3 == n)
			return p->s3[k].owner;
	return P53_NONE;
}

/*
 * Before the layout, with a key: each steered owner's own NSEC3 that goes in zone z (its
 * place kept by the merge, t->steer_fill) becomes the one the compile signs for the owner at
 * that hash: the parameters of the record that goes (the chain's), the hash + 1, the owner's
 * types now and RRSIG, the new SOA's negative TTL as the compile's (RFC 9077 §3;
 * steer_denials() checks it). The old record's RRSIG may have been the zone's earliest (*rescan). 0, or -1
 * with why.
 */
static int steer_sign3(struct patch *p, const void *img, uint32_t z, time_t now, bool *rescan,
		       char *why, size_t wl)
{
	const struct p53_image_zone *zn = p53_image_zone(img, z);
	bool any = false;
	size_t n_tix;
	char txt[1024];
	int rc = -1;

	for (size_t i = 0; i < p->n_t; i++)
		any |= p->t[i].n3 && p->t[i].steer_fill;
	if (!any)
		return 0;
	uint32_t *tix = tix_make(p, &n_tix);
	if (tix == NULL) {
		decline(why, wl, "out of memory");
		return -1;
	}
	const struct sview v = { .img = img, .p = p, .tix = tix, .n_tix = n_tix };
	for (size_t i = 0; i < p->n_t; i++) {
		struct tn *t = &p->t[i];
		if (!t->n3 || !t->steer_fill)
			continue;
		uint32_t o = steer_n3_owner(p, t->old), on, j = t->rs_first;
		uint8_t want[P53_NAME_MAXLEN + 2 + 256 * 34], hash[P53_NSEC3_HASH_LEN];
		size_t rl;
		const uint8_t *rd = NULL;
		if (o != P53_NONE && has_type(img, t->old, 50, &on))
			rd = one_rdata(p53_image_rrset(img, on),
				       p53_image_rdata(img, p53_image_rrset(img, on)), &rl);
		while (j < t->rs_first + t->rs_n && p->nrs[j].type != 50)
			j++;
		if (rd == NULL || rl < 5u + rd[4] || j == t->rs_first + t->rs_n ||
		    n3_hash_of(t->name, hash) != 0) {
			decline(why, wl, "%s: the NSEC3 of a steered owner that goes is not one record "
				"of the zone's chain", p53_name_to_str(txt, sizeof(txt), t->name));
			goto done;
		}
		size_t wn = 5u + rd[4];
		memcpy(want, rd, wn); /* algorithm, flags, iterations, salt */
		want[wn++] = P53_NSEC3_HASH_LEN;
		/* Next hashed owner: the hash + 1, so the record covers no other name. */
		memcpy(want + wn, hash, P53_NSEC3_HASH_LEN);
		for (int q = P53_NSEC3_HASH_LEN - 1; q >= 0 && ++want[wn + q] == 0; q--)
			;
		wn += P53_NSEC3_HASH_LEN;
		wn += sv_bitmap(&v, o, P53_T_RRSIG, 0, want + wn);
		if (steer_put(p, img, zn, t, j, 50, p53_image_zone(p->mimg, 0)->neg_ttl, want, wn,
			      p53_image_rdata(img, p53_image_rrset(img, on)), now, rescan, why, wl) != 0)
			goto done;
	}
	rc = 0;
done:
	free(tix);
	return rc;
}

/*
 * Format 10 (image.h, p53_image_zone.node_base): the patch appends the zone's new nodes and
 * RRsets at the tables' ends, inside its ranges only when those end there. When another
 * zone's ranges follow, the zone's ranges of nodes[], proofs[] and rrsets[] move to the
 * tables' ends first: a copy of img with the three tables grown by the zone's counts and the
 * zone's entries copied there (every index inside the zone is relative to its ranges, so
 * none changes; the blocks, the name index, the chain and the hashes stay), its old entries
 * left as garbage (counted in pad). What holds the zone's nodes by their place follows: a
 * served child's parent_side (an index in the image) in the zone's old range, and the
 * additional lists crossing zones (an entry is relative to its list's zone modulo 2^32,
 * p53_image_znode()): another zone's list naming the zone's node, the zone's naming another
 * zone's. Such a list is appended again with its entries moved and its RRsets pointed at it
 * (the old one garbage), as relist_gain does, so that the old lists stay the first of the
 * new image's (p53_image_check_from() takes the old image as a prefix). The image
 * (p53_image_out: fresh memory, the caller frees it) and its length, or NULL: out of memory
 * or past the 4 GiB format limit. O(the image): the tables are copied and every list of the
 * image is read.
 */

/* Whether list a of zone y (y's node base before the move yb) names a node whose entry the
 * move of zone z (old base ob, nn nodes) changes. */
static bool list_crosses(const uint32_t *adds, uint32_t a, uint32_t y, uint32_t yb, uint32_t z,
			 uint32_t ob, uint32_t nn)
{
	for (uint32_t k = 1; k <= P53_ADDS_COUNT(adds[a]); k++)
		if ((yb + adds[a + k] - ob < nn) != (y == z))
			return true;
	return false;
}

static void *zone_to_end(const void *img, uint32_t z, size_t *len)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	const struct p53_image_zone *oz = p53_image_zone(img, z);
	const uint32_t ob = oz->node_base, nn = oz->n_nodes, orb = oz->rrset_base, nr = oz->n_rrsets;
	/* Fresh room after the moved ranges (image.h, node_room), free (zeroed below). */
	const uint32_t nroom = p53_image_room(nn), rroom = p53_image_room(nr);
	const size_t psz = sizeof(struct p53_image_proof);
	const uint32_t dnssec_off = h->proofs_off != 0 ? h->proofs_off : h->chain_off;
	const size_t n_adds = (dnssec_off - h->adds_off) / sizeof(uint32_t);
	const uint32_t *oadds = p53_image_adds(img, 0);
	struct p53_image_hdr nh = *h;
	uint64_t garbage = (uint64_t)h->pad + ((uint64_t)nn + nr) * sizeof(uint32_t) +
			   (h->proofs_off != 0 ? (uint64_t)nn * psz : 0) +
			   p53_image_room_bytes(h, oz); /* (its old room: p53_image_room_retire) */

	/* The lists that cross: remap[a] 1 for a list read and kept, else its new index + 2. */
	uint32_t *remap = calloc(n_adds + 1, sizeof(*remap));
	if (remap == NULL)
		return NULL;
	size_t extra = 0;
	for (uint32_t y = 0; y < h->n_zones; y++) {
		const struct p53_image_zone *zy = p53_image_zone(img, y);
		for (uint32_t r = 0; r < zy->n_rrsets; r++) {
			uint32_t a = p53_image_zrrset(img, zy, r)->adds;
			if (a == P53_NONE || remap[a] != 0)
				continue;
			remap[a] = 1;
			if (!list_crosses(oadds, a, y, zy->node_base, z, ob, nn))
				continue;
			remap[a] = (uint32_t)(n_adds + extra + 2);
			extra += 1u + P53_ADDS_COUNT(oadds[a]);
			garbage += (1u + P53_ADDS_COUNT(oadds[a])) * sizeof(uint32_t);
		}
	}
	nh.n_nodes = h->n_nodes + nn + nroom;
	nh.n_rrsets = h->n_rrsets + nr + rroom;
	size_t off = p53_align8((size_t)h->nodes_off + (size_t)nh.n_nodes * sizeof(uint32_t));
	nh.rrsets_off = (uint32_t)off;
	off = p53_align8(off + (size_t)nh.n_rrsets * sizeof(uint32_t));
	nh.slots_off = (uint32_t)off;
	off = p53_align8(off + ((size_t)h->hash_mask + 1) * sizeof(uint64_t));
	/* The names-and-RDATA section and the additional lists as they are, shifted by s (a
	 * multiple of 8: the alignments hold), the lists that cross appended. */
	const size_t s = off - h->rdata_off;
	nh.names_off = nh.rdata_off = (uint32_t)(h->rdata_off + s);
	nh.adds_off = (uint32_t)(h->adds_off + s);
	off = p53_align8(nh.adds_off + (n_adds + extra) * sizeof(uint32_t));
	if (h->proofs_off != 0) {
		nh.proofs_off = (uint32_t)off;
		off = p53_align8(off + (size_t)nh.n_nodes * psz);
	}
	nh.chain_off = (uint32_t)off;
	nh.nsec3_off = (uint32_t)(h->nsec3_off - h->chain_off + off);
	nh.size = off + (h->size - h->chain_off);
	nh.pad = (uint32_t)garbage; /* (< the image: under 4 GiB) */
	void *spare = NULL;
	uint8_t *ni = nh.size <= UINT32_MAX ? p53_image_out(nh.size, &spare) : NULL;
	if (ni == NULL) {
		free(remap);
		return NULL;
	}
	const uint8_t *oi = img;
	/* Each section copied, what lies between them zeroed (the header and the zones as they
	 * were up to nodes[], which starts where it did). */
#define PUT(at, src, n, end) do { \
		memcpy(ni + (at), (src), (n)); \
		memset(ni + (at) + (n), 0, (size_t)(end) - (at) - (n)); \
	} while (0)
	memcpy(ni, oi, h->nodes_off);
	memcpy(ni, &nh, sizeof(nh));
	memcpy(ni + nh.nodes_off, oi + h->nodes_off, (size_t)h->n_nodes * sizeof(uint32_t));
	PUT(nh.nodes_off + (size_t)h->n_nodes * sizeof(uint32_t),
	    oi + h->nodes_off + (size_t)ob * sizeof(uint32_t), (size_t)nn * sizeof(uint32_t), nh.rrsets_off);
	memcpy(ni + nh.rrsets_off, oi + h->rrsets_off, (size_t)h->n_rrsets * sizeof(uint32_t));
	PUT(nh.rrsets_off + (size_t)h->n_rrsets * sizeof(uint32_t),
	    oi + h->rrsets_off + (size_t)orb * sizeof(uint32_t), (size_t)nr * sizeof(uint32_t), nh.slots_off);
	PUT(nh.slots_off, oi + h->slots_off, ((size_t)h->hash_mask + 1) * sizeof(uint64_t), nh.rdata_off);
	/* (The lists appended later start zeroed: written once, below.) */
	PUT(nh.rdata_off, oi + h->rdata_off, dnssec_off - h->rdata_off,
	    nh.proofs_off != 0 ? nh.proofs_off : nh.chain_off);
	if (h->proofs_off != 0) {
		memcpy(ni + nh.proofs_off, oi + h->proofs_off, (size_t)h->n_nodes * psz);
		PUT(nh.proofs_off + (size_t)h->n_nodes * psz, oi + h->proofs_off + (size_t)ob * psz,
		    (size_t)nn * psz, nh.chain_off);
	}
	memcpy(ni + nh.chain_off, oi + h->chain_off, h->size - h->chain_off);
#undef PUT
	struct p53_image_zone *zones = (struct p53_image_zone *)(ni + nh.zones_off);
	(void)p53_image_room_retire(ni, oz); /* (counted in garbage above) */
	zones[z].node_base = h->n_nodes;
	zones[z].rrset_base = h->n_rrsets;
	zones[z].node_room = nroom;
	zones[z].rrset_room = rroom;
	p53_image_zones_place(ni);
	const uint32_t delta = h->n_nodes - ob;
	for (uint32_t y = 0; y < h->n_zones; y++)
		if (zones[y].parent_side != P53_NONE && zones[y].parent_side - ob < nn)
			zones[y].parent_side += delta;
	/* The lists that cross, appended with their entries moved, their RRsets pointed there. */
	uint32_t *adds = (uint32_t *)(ni + nh.adds_off);
	for (uint32_t y = 0; y < h->n_zones && extra > 0; y++) {
		const struct p53_image_zone *zy = &zones[y];
		for (uint32_t r = 0; r < zy->n_rrsets; r++) {
			struct p53_image_rrset *rs = (struct p53_image_rrset *)(uintptr_t)
						     p53_image_zrrset(ni, zy, r);
			uint32_t a = rs->adds;
			if (a == P53_NONE || a >= n_adds || remap[a] < 2)
				continue;
			uint32_t at = remap[a] - 2;
			if (adds[at] == 0) { /* not written yet (a list has one name at least) */
				uint32_t n = P53_ADDS_COUNT(oadds[a]);
				adds[at] = oadds[a];
				for (uint32_t k = 1; k <= n; k++) {
					bool in_z = (y == z ? ob : zy->node_base) + oadds[a + k] - ob < nn;
					adds[at + k] = oadds[a + k] + (y == z && !in_z ? -delta :
								       y != z && in_z ? delta : 0);
				}
			}
			rs->adds = at;
		}
	}
	free(remap);
	*len = nh.size;
	return ni;
}

static void *patch_run(struct patch *p, const void *img, const uint8_t *apex, size_t apex_len,
		       const struct p53_ixfr *diff, const struct p53_rrs *result, size_t *len,
		       char *why, size_t wl)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	char txt[1024], tb[16], err[1024];

	uint32_t ai = p53_image_find(img, apex, apex_len, p53_name_hash(apex, apex_len));
	if (ai == P53_NONE || !(p53_image_node(img, ai)->flags & P53_NODE_APEX))
		return decline(why, wl, "the zone is not in the image");
	uint32_t z = p53_image_node(img, ai)->zone;
	const struct p53_image_zone *zn = p53_image_zone(img, z);
	if (zn->rcode != 0)
		return decline(why, wl, "the zone has no data here");
	/* A signed zone: only data at names that stay, each keeping its set of types, so the
	 * NSEC/NSEC3 chain, the type bitmaps and the per-node proofs hold as they are. */
	const bool sgn = zn->dnssec != 0;
	/* An NSEC zone (not NSEC3): names may come and go, types change, NSECs change with them
	 * (nsec_plan, nsec_proofs remake the chain and the proofs). */
	const bool nsec_ok = sgn && (zn->dnssec & P53_ZONE_NSEC) && !(zn->dnssec & P53_ZONE_NSEC3);
	/* An NSEC3 zone: the same, with NSEC3 owners (hashed names) coming and going
	 * (n3_plan, n3_proofs remake the zone's sorted hashes and the proofs that moved). */
	const bool n3_ok = sgn && (zn->dnssec & P53_ZONE_NSEC3);
	if (p53_image_too_much_garbage(h->pad, h->size))
		return decline(why, wl, "earlier patches left %u KiB unreferenced, a quarter of the image",
			       h->pad / 1024);

	/* The touched names: every owner of the steps, and the apex. */
	size_t cap = 1;
	for (size_t s = 0; s < diff->n; s++)
		cap += diff->steps[s].del.count + diff->steps[s].add.count;
	p->t = calloc(cap, sizeof(*p->t));
	if (p->t == NULL || nset_init(&p->ts, cap, cap) != 0)
		return decline(why, wl, "out of memory");
	memcpy(p->t[0].name, apex, apex_len);
	p->t[0].len = (uint8_t)apex_len;
	nset_add(&p->ts, 0, apex, apex_len);
	p->n_t = 1;
	for (size_t s = 0; s < diff->n; s++) {
		for (int part = 0; part < 2; part++) {
			const struct p53_rrs *r = part ? &diff->steps[s].add : &diff->steps[s].del;
			struct p53_rr_view v;
			size_t pos = 0;
			while (p53_rrs_next(r, &pos, &v) == 1) {
				bool at_apex = v.owner_len == apex_len && eq_fold(apex, v.owner, apex_len);
				if (!(sgn ? signed_type_ok(v.type, at_apex) : unsigned_type_ok(v.type, at_apex))) {
					p53_name_to_str(txt, sizeof(txt), v.owner);
					/* An RRSIG the last step adds stays in the new content: the
					 * compile makes the zone a signed one (p53_zone_repatch's
					 * reason for that, word for word). */
					if (!sgn && v.type == P53_T_RRSIG && part == 1 && s + 1 == diff->n)
						return decline(why, wl, P53_PATCH_TURNS_SIGNED, txt);
					return decline(why, wl, "the diff changes %s records at %s%s",
						       p53_type_to_str(tb, sizeof(tb), v.type), txt,
						       !sgn && v.type == P53_T_RRSIG ?
						       " (an unsigned zone)" : "");
				}
				if (tn_find(&p->ts, p->t, v.owner, v.owner_len) != P53_NONE)
					continue;
				struct tn *t = &p->t[p->n_t];
				p53_name_lower(t->name, v.owner, v.owner_len);
				t->len = v.owner_len;
				nset_add(&p->ts, (uint32_t)p->n_t, t->name, t->len);
				p->n_t++;
			}
		}
	}

	/* The zone's new nodes and RRsets go right after its ranges, into its room (image.h,
	 * node_room), so the patch's indices are the same in img and the new image. When they
	 * did not fit there (found where the new image is laid out, below) and other zones'
	 * ranges follow, patch_entry() runs the patch again with p->must_move: its ranges
	 * copied to the tables' ends first, with fresh room (zone_to_end; after the checks
	 * above, which read names only: a diff they decline costs no copy). */
	if (p->must_move) {
		size_t mlen;
		p->moved = zone_to_end(img, z, &mlen);
		if (p->moved == NULL)
			return decline(why, wl, "out of memory, or the image would pass the 4 GiB "
				       "format limit");
		img = p->moved;
		h = p53_image_hdr(img);
		zn = p53_image_zone(img, z);
		ai = zn->node_base + zn->apex;
		/* The patch index lists nodes by their place: the zone's at theirs now (its
		 * old entries name garbage, which relist_gain and relist_lose skip). */
		for (uint32_t n = zn->node_base; p->ix != NULL && p53_patch_index_has_targets(p->ix) &&
						 n < zn->node_base + zn->n_nodes; n++)
			if (p53_patch_index_targets_add(p->ix, img, n) != 0)
				break; /* (the target part dropped: made again when needed) */
	}
	p->nb = zn->node_base;
	p->rb = zn->rrset_base;
	p->nn0 = zn->node_base + zn->n_nodes;
	p->nr0 = zn->rrset_base + zn->n_rrsets;

	/* The steered owners whose NSEC may change with the chain beside them are touched too. */
	if (nsec_ok && steer_near(p, img, ai, apex, apex_len) != 0)
		return decline(why, wl, "out of memory");
	/* ... and in an NSEC3 zone, those whose own NSEC3 may come or go (steer_n3_owners). */
	if (n3_ok && steer_n3_owners(p, img, z, apex_len) != 0)
		return decline(why, wl, "out of memory");

	/* The zone's names at or below another served zone's apex: its own nodes there. */
	if (shadowed_nodes(p, img, z, apex_len, why, wl) != 0)
		return NULL;
	/* Where each touched name stands in the old image. */
	for (size_t i = 0; i < p->n_t; i++) {
		struct tn *t = &p->t[i];
		p53_name_to_str(txt, sizeof(txt), t->name);
		t->labels = (uint8_t)p53_name_labels(t->name);
		t->parent = P53_NONE;
		if (!p53_name_at_or_below(t->name, t->len, apex, apex_len))
			return decline(why, wl, "%s is outside the zone", txt);
		/* A wildcard may change, come and go like any name (its flag and its parent's
		 * link after the layout: cut_links' pass in unsigned zones, wild_links in signed
		 * ones, whose chain and proofs are remade as for any name). */
		/* A deeper served zone at or above the name: its node is not this zone's (a
		 * shadowed name's is, shadowed_nodes). */
		const uint8_t *q = t->name;
		size_t ql = t->len;
		while (!t->shadow && ql > apex_len) {
			uint32_t m = p53_image_find(img, q, ql, p53_name_hash(q, ql));
			if (m != P53_NONE && p53_image_node(img, m)->zone != z)
				return decline(why, wl, "%s is at or below another served zone's apex", txt);
			ql -= 1u + q[0];
			q += 1u + q[0];
		}
		if (!t->shadow)
			t->old = p53_image_find(img, t->name, t->len, p53_name_hash(t->name, t->len));
		if (t->old == P53_NONE && sgn) {
			t->old = n3_node(img, zn, t->name, t->len);
			t->n3 = t->old != P53_NONE;
			/* The content's NSEC3 at the hash of a steered owner the compile signed
			 * one for: that node (steer_n3_synth). */
			if (t->old == P53_NONE && n3_ok) {
				t->old = steer_n3_synth(p, img, t->name, t->len);
				t->n3 = t->n3_synth = t->old != P53_NONE;
			}
			if (t->old == P53_NONE && !nsec_ok && !n3_ok)
				return decline(why, wl, "%s is new in a signed zone (it has no NSEC "
					       "chain)", txt);
		}
		if (t->old != P53_NONE) {
			const struct p53_image_node *nd = p53_image_node(img, t->old);
			/* A signed zone's RRSIGs are bytes after their RRset's, which nothing links
			 * to: they may change at such names (not at glue, which is not signed). A
			 * CNAME owner's records change in unsigned zones only. */
			if (sgn && !(nd->flags & (P53_NODE_GLUE | P53_NODE_NSEC3)) &&
			    nd->occluder == P53_NONE &&
			    (nd->flags & (P53_NODE_CUT | P53_NODE_DNAME | P53_NODE_CNAME)))
				t->sigs_only = true;
			else if (sgn && (signed_glue(img, nd) || glue_cname(img, nd) ||
					 glue_dname(img, nd)))
				t->glue_s = true;
			else if (sgn && ((nd->flags & (P53_NODE_CUT | P53_NODE_DNAME | P53_NODE_GLUE |
						       (t->n3 ? 0 : P53_NODE_NSEC3))) ||
					 nd->occluder != P53_NONE) && !nested_cut(img, nd))
				return decline(why, wl, "%s is a cut, a DNAME owner or "
					       "below a cut", txt);
			/* An unsigned zone's cuts, glue, wildcards and DNAME owners change here
			 * (cut_links, dname_links); nothing lies below a DNAME owner. */
			else if (!sgn && ((nd->flags & P53_NODE_NSEC3) || dname_above(img, nd)))
				return decline(why, wl, "%s is below a DNAME owner", txt);
			/* A CNAME owner of a zone with a chain: its records as any name's. */
			if (t->sigs_only && signed_cname(nd, nsec_ok || n3_ok))
				t->sigs_only = false;
			t->old_addr = has_addr(img, nd);
		}
		if (i == 0)
			continue;
		/* The parent: for a new name it must exist (no new empty non-terminals); for a
		 * name that may go, it may be an empty non-terminal that has to go with it. */
		const uint8_t *pn = t->name + 1 + t->name[0];
		size_t pl = t->len - 1u - t->name[0];
		uint32_t pi = p53_image_find(img, pn, pl, p53_name_hash(pn, pl));
		if (pi != P53_NONE && p53_image_node(img, pi)->zone == z)
			t->parent = pi;
		if (t->shadow)
			t->parent = zone_node(p, img, z, apex_len, pn, pl);
		int na = t->old != P53_NONE ? 0 : t->shadow ? shadow_ancestors(p, img, z, apex_len, t, sgn) :
			 new_ancestors(p, img, z, apex_len, t, sgn);
		if (na != 0) {
			if (!sgn || na == -2)
				return decline(why, wl, "%s is new below a DNAME owner that stays "
					       "(RFC 6672 §2.4: the zone does not compile)", txt);
			return decline(why, wl, "%s is new below a cut, DNAME or NSEC3 owner", txt);
		}
	}
	/* The names new names need as new empty non-terminals are touched names too (they
	 * exist in the new image only when a new name with records stays below them). */
	if (add_ancestors(p) != 0)
		return decline(why, wl, "out of memory");
	shadow_mark(p, img, z, apex_len);

	/* Without the zone's new content: the touched names' records read out of the image and
	 * the differences applied to them alone (every record the steps delete or add is at a
	 * touched name, so the same checks hold: a deletion of a record the zone lacks, steps
	 * that do not chain from the served SOA; any failure declines, and the caller's full
	 * path reports it). */
	if (result == NULL) {
		for (size_t i = 0; i < p->n_t; i++)
			if (p->t[i].old != P53_NONE &&
			    p53_image_node_rrs(img, p->t[i].old, &p->own) != 0)
				return decline(why, wl, "out of memory");
		if (p53_ixfr_apply_inplace(&p->own, diff, err, sizeof(err)) != 0)
			return decline(why, wl, "the differences do not apply: %s", err);
		if (p53_rrs_soa_serial(&p->own) < 0)
			return decline(why, wl, "the new content has no SOA");
		result = &p->own;
	}

	/* The touched names' records in the new content, compiled alone. */
	size_t pos = 0;
	struct p53_rr_view v;
	int rc;
	while ((rc = p53_rrs_next(result, &pos, &v)) == 1) {
		uint32_t k = tn_find(&p->ts, p->t, v.owner, v.owner_len);
		if (k == P53_NONE)
			continue;
		p->t[k].recs = true;
		if (p53_rrs_add(&p->mini, v.owner, v.owner_len, v.type, v.cls, v.ttl, v.rdata, v.rdlen) != 0)
			return decline(why, wl, "out of memory");
	}
	if (rc < 0)
		return decline(why, wl, "the new content is malformed");
	p53_name_to_str(txt, sizeof(txt), apex);
	struct p53_zone_src src = { .name = txt, .file = "(IXFR patch)", .rrs = p->mini.buf,
				    .rrs_len = p->mini.len, .flags = zn->flags };
	size_t mlen = 0;
	p->mimg = p53_image_build(&src, 1, &mlen, err, sizeof(err), quiet, NULL);
	if (p->mimg == NULL)
		return decline(why, wl, "the changed names do not compile alone: %s", err);
	const void *mi = p->mimg;

	/* Each touched name's RRsets: unchanged ones keep their header, the others come from
	 * the small image. */
	uint32_t n_new = 0, max_labels = h->max_labels;
	int64_t d_records = 0;
	uint64_t garbage = 0;
	bool rescan = false;
	const time_t now = time(NULL);
	for (size_t i = 0; i < p->n_t; i++) {
		struct tn *t = &p->t[i];
		const struct p53_image_node *od = t->old != P53_NONE ? p53_image_node(img, t->old) : NULL;
		uint32_t mn = !t->recs ? P53_NONE :
			      t->n3 ? n3_node(mi, p53_image_zone(mi, 0), t->name, t->len) :
			      p53_image_find(mi, t->name, t->len, p53_name_hash(t->name, t->len));
		if (mn == P53_NONE && t->recs && n3_ok && t->old == P53_NONE) {
			/* A new NSEC3 owner (out of the small image's index too). */
			mn = n3_node(mi, p53_image_zone(mi, 0), t->name, t->len);
			t->n3 = mn != P53_NONE;
		}
		const struct p53_image_node *md = mn != P53_NONE ? p53_image_node(mi, mn) : NULL;
		uint32_t oa = od ? rs0(img, od) : 0, on = od ? od->n_rrsets : 0;
		uint32_t ma = md ? rs0(mi, md) : 0, mc = md ? md->n_rrsets : 0;
		bool apex_t = i == 0;

		p53_name_to_str(txt, sizeof(txt), t->name);
		if (t->recs && t->old != P53_NONE &&
		    (t->n3 ? p53_image_find(mi, t->name, t->len, p53_name_hash(t->name, t->len)) :
		     n3_ok ? n3_node(mi, p53_image_zone(mi, 0), t->name, t->len) : P53_NONE) != P53_NONE)
			/* A hashed owner (out of the index) and a name of the zone are different
			 * nodes: the compiler decides which one the name is from all its records. */
			return decline(why, wl, "%s %s", txt, t->n3 ? "keeps records but loses its "
				       "NSEC3 (it becomes a name of the zone)" : "becomes an NSEC3 owner");
		/* A signed zone's delegation that comes or goes: its name's records as any name's
		 * (its NSEC/NSEC3 with them), NS and DS too. */
		t->deleg = sgn && (nsec_ok || n3_ok) && (signed_deleg(img, t, od, md, apex_t) ||
							 signed_nest(img, t, od, md, apex_t));
		if (t->deleg)
			t->sigs_only = false;
		/* ... and a DNAME owner that comes, goes or changes its target. */
		t->dn_s = sgn && (nsec_ok || n3_ok) && (signed_dname(img, t, od, md, apex_t) ||
							signed_apex_dname(od, md, apex_t));
		if (t->dn_s)
			t->sigs_only = false;
		if (md != NULL && (md->flags & (P53_NODE_CUT | P53_NODE_DNAME)) && !t->sigs_only &&
		    !t->deleg && !t->dn_s && sgn)
			return decline(why, wl, "%s becomes a cut or DNAME owner", txt);
		uint16_t clash = od != NULL ? steer_clash(img, od, mi, md) : 0;
		if (clash != 0)
			return decline(why, wl, "%s gains %s data beside its steered records (the zone "
				       "does not compile with its steering)", txt,
				       p53_type_to_str(tb, sizeof(tb), clash));
		t->rs_first = (uint32_t)p->n_nrs;
		uint32_t a = 0, b = 0;
		while (a < on || b < mc) {
			const struct p53_image_rrset *x = a < on ? p53_image_rrset(img, oa + a) : NULL;
			const struct p53_image_rrset *y = b < mc ? p53_image_rrset(mi, ma + b) : NULL;
			struct p53_image_rrset keep;
			uint32_t from = P53_NONE, rd_at = P53_NONE;
			if (sgn && (!(nsec_ok || n3_ok) || t->sigs_only) &&
			    (x == NULL || y == NULL || x->type != y->type) &&
			    !cut_rrset_ok(t, od, x != NULL && (y == NULL || x->type < y->type) ?
					  x->type : y->type, true) &&
			    !cut_nsec_ok(t, od, x != NULL && (y == NULL || x->type < y->type) ?
					 x->type : y->type, nsec_ok))
				return decline(why, wl, "%s %s its %s RRset in a signed zone (%s)", txt,
					       x != NULL && (y == NULL || x->type < y->type) ? "loses" : "gains",
					       p53_type_to_str(tb, sizeof(tb), x != NULL &&
							       (y == NULL || x->type < y->type) ?
							       x->type : y->type),
					       t->sigs_only ? "a cut, a CNAME or DNAME owner" :
					       "it has no NSEC chain");
			if (x != NULL && !(x->flags & P53_RRSET_STEERED) &&
			    (y == NULL || x->type < y->type) && steer_key(p) &&
			    ((x->type == P53_T_NSEC && nsec_ok && steered_at(img, od)) ||
			     (x->type == 50 && n3_ok && t->n3 && steer_n3_owner(p, t->old) != P53_NONE))) {
				/* A steered owner's own NSEC gone: the compile signs one for it, which
				 * steer_sign() makes once the new chain is planned; here its place
				 * (the owner stays in the chain). Likewise its own NSEC3: the compile
				 * signs one at its hash, made by steer_sign3() (the node stays, out
				 * of the sorted hashes). */
				keep = *x;
				keep.flags |= P53_RRSET_STEERED;
				keep.adds = P53_NONE;
				keep.count = 1;
				keep.sig_count = 1;
				rd_at = 0;
				t->steer_fill = true;
				t->changed = true;
				a++;
				goto append;
			}
			if (x != NULL && !(x->flags & P53_RRSET_STEERED) &&
			    (y == NULL || x->type < y->type)) {
				/* Gone altogether (in an NSEC zone its NSEC too, or RRSIGs that
				 * covered nothing). */
				if (!type_ok(x->type, apex_t) && !(!sgn && unsigned_type_ok(x->type, apex_t)) &&
				    !cut_rrset_ok(t, od, x->type, true) &&
				    !(t->deleg && (x->type == P53_T_NS || x->type == P53_T_DS)) &&
				    !(t->dn_s && x->type == P53_T_DNAME) &&
				    !ds_data(t, od, md, x->type, nsec_ok || n3_ok) &&
				    !(nsec_ok && (x->type == P53_T_NSEC || x->type == P53_T_RRSIG)) &&
				    !(n3_ok && (x->type == 50 || x->type == P53_T_RRSIG)) &&
				    !(sgn && signed_apex_ns_set(x->type, apex_t, nsec_ok || n3_ok)))
					return decline(why, wl, "%s loses its %s RRset", txt,
						       p53_type_to_str(tb, sizeof(tb), x->type));
				t->changed = true;
				a++;
				continue;
			}
			if (x != NULL && (x->flags & P53_RRSET_STEERED) && (y == NULL || x->type < y->type)) {
				/* The config's, not the content's (steer_clash() made sure the new
				 * content has nothing of its type): kept as it is, as the full
				 * compile attaches it again; the node keeps its steer index. The
				 * NSEC pop53 signs for it, when the chain moved beside it, is made
				 * and signed again once the chain is planned (steer_sign). */
				keep = *x;
				from = oa + a;
				a++;
			} else if (x != NULL && x->type == y->type && rrset_same(img, x, mi, y)) {
				keep = *x;
				from = oa + a;
				a++;
				b++;
			} else if (sgn && x != NULL && x->type == y->type && records_same(img, x, mi, y)) {
				/* Signed zone, the same records signed again: the old header (its
				 * additional list, its flags) over its records and the new RRSIGs. */
				size_t sz = (size_t)x->rdata_len + y->sig_len;
				if (grow((void **)&p->nrd, &p->nrd_cap, p->nrd_len + sz, 1) != 0)
					return decline(why, wl, "out of memory");
				keep = *x;
				rd_at = (uint32_t)p->nrd_len;
				keep.sig_count = y->sig_count;
				keep.sig_len = y->sig_len;
				memcpy(p->nrd + p->nrd_len, p53_image_rdata(img, x), x->rdata_len);
				memcpy(p->nrd + p->nrd_len + x->rdata_len,
				       p53_image_rdata(mi, y) + y->rdata_len, y->sig_len);
				p->nrd_len += sz;
				t->changed = true;
				a++;
				b++;
			} else {
				/* (An NSEC zone: their NSEC's next name changes with their
				 * neighbours; nothing depends on its bytes but the record.) */
				if (t->sigs_only && !(nsec_ok && x != NULL && x->type == y->type &&
						      y->type == P53_T_NSEC) && !cut_rrset_ok(t, od, y->type, false))
					return decline(why, wl, "%s is a cut, a CNAME or DNAME owner and "
						       "changes its %s records", txt,
						       p53_type_to_str(tb, sizeof(tb), y->type));
				if (!(type_ok(y->type, apex_t) || (!sgn && unsigned_type_ok(y->type, apex_t)) ||
				      cut_rrset_ok(t, od, y->type, false) ||
				      (t->deleg && (y->type == P53_T_NS || y->type == P53_T_DS)) ||
				      (t->dn_s && y->type == P53_T_DNAME) ||
				      ds_data(t, od, md, y->type, nsec_ok || n3_ok) ||
				      (sgn && signed_apex_ns(x, y, apex_t)) ||
				      (sgn && signed_apex_ns_set(y->type, apex_t, nsec_ok || n3_ok)) ||
				      (nsec_ok && (y->type == P53_T_NSEC || y->type == P53_T_RRSIG)) ||
				      (n3_ok && (y->type == 50 || y->type == P53_T_RRSIG))) ||
				    (y->flags & P53_RRSET_STEERED))
					return decline(why, wl, "%s changes its %s RRset", txt,
						       p53_type_to_str(tb, sizeof(tb), y->type));
				size_t sz = (size_t)y->rdata_len + y->sig_len;
				if (grow((void **)&p->nrd, &p->nrd_cap, p->nrd_len + sz, 1) != 0)
					return decline(why, wl, "out of memory");
				keep = *y;
				rd_at = (uint32_t)p->nrd_len;
				keep.adds = P53_NONE; /* made below (adds_list) */
				memcpy(p->nrd + p->nrd_len, p53_image_rdata(mi, y), sz);
				p->nrd_len += sz;
				t->changed = true;
				if (x != NULL && x->type == y->type)
					a++;
				b++;
			}
append:
			if (grow((void **)&p->nrs, &p->nrs_cap, p->n_nrs + 1, sizeof(*p->nrs)) != 0 ||
			    grow((void **)&p->nrs_old, &p->nrs_old_cap, p->n_nrs + 1, sizeof(*p->nrs_old)) != 0 ||
			    grow((void **)&p->nrs_rd, &p->nrs_rd_cap, p->n_nrs + 1, sizeof(*p->nrs_rd)) != 0)
				return decline(why, wl, "out of memory");
			p->nrs_old[p->n_nrs] = from;
			p->nrs_rd[p->n_nrs] = rd_at;
			p->nrs[p->n_nrs++] = keep;
		}
		t->rs_n = (uint32_t)p->n_nrs - t->rs_first;
		/* A cut: NS below the apex (rrsets_check() in image_build.c). */
		t->cut_now = od != NULL && (od->flags & P53_NODE_CUT);
		if (t->changed) {
			t->cut_now = false;
			for (uint32_t r = 0; r < t->rs_n && !apex_t; r++)
				t->cut_now |= p->nrs[t->rs_first + r].type == P53_T_NS;
		}
		if (sgn && !(nsec_ok || n3_ok) && t->changed) {
			bool was_cname = od != NULL && (od->flags & P53_NODE_CNAME), is_cname = false;
			for (uint32_t r = 0; r < t->rs_n; r++)
				is_cname |= p->nrs[t->rs_first + r].type == P53_T_CNAME;
			if (was_cname != is_cname)
				return decline(why, wl, "%s %s a CNAME owner in a signed zone", txt,
					       is_cname ? "becomes" : "ceases to be");
		}
		if (!t->changed) {
			/* Nothing moved here (a record added and deleted again, an ENT): as it was. */
			p->n_nrs = t->rs_first;
			t->rs_n = 0;
			continue;
		}
		for (uint32_t r = 0; r < on; r++) {
			const struct p53_image_rrset *x = p53_image_rrset(img, oa + r);
			d_records -= x->count + x->sig_count;
			garbage += p53_image_rrset_span(x) + sizeof(uint32_t); /* copied if kept */
		}
		for (uint32_t r = 0; r < t->rs_n; r++)
			d_records += p->nrs[t->rs_first + r].count + p->nrs[t->rs_first + r].sig_count;
		for (uint32_t r = 0; r < on; r++) {
			/* Old records no header keeps any more. */
			bool kept = false;
			for (uint32_t k = 0; k < t->rs_n && !kept; k++)
				kept = p->nrs_old[t->rs_first + k] == oa + r;
			if (!kept) {
				const struct p53_image_rrset *x = p53_image_rrset(img, oa + r);
				/* The zone's earliest signature may be among those that go. */
				uint64_t e = sigs_expire(img, x, now);
				rescan |= e != 0 && e <= zn->sig_expire;
			}
		}
		t->new_addr = false;
		for (uint32_t r = 0; r < t->rs_n; r++)
			t->new_addr |= p->nrs[t->rs_first + r].type == P53_T_A ||
				       p->nrs[t->rs_first + r].type == P53_T_AAAA;
		if (t->rs_n == 0) {
			if (apex_t)
				return decline(why, wl, "the apex loses every record");
			t->gone = true;
		}
		if (t->old == P53_NONE) {
			t->node = p->nn0 + n_new++;
			if (t->labels > max_labels)
				max_labels = t->labels;
		} else {
			t->node = t->old;
		}
	}

	/* New names with no records of their own exist as empty non-terminals when a new
	 * name with records stays below them (the missing ancestors add_ancestors made
	 * touched, or a name added and deleted again). */
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		if (!t->changed || t->old != P53_NONE || t->rs_n == 0)
			continue;
		const uint8_t *q = t->name + 1 + t->name[0];
		size_t ql = t->len - 1u - t->name[0];
		while (ql > apex_len) {
			uint32_t k = tn_find(&p->ts, p->t, q, ql);
			if (k == P53_NONE || p->t[k].old != P53_NONE || p->t[k].changed)
				break;
			struct tn *e = &p->t[k];
			e->changed = true;
			e->rs_first = (uint32_t)p->n_nrs;
			e->rs_n = 0;
			e->node = p->nn0 + n_new++;
			ql -= 1u + q[0];
			q += 1u + q[0];
		}
	}

	/* Shadowed names change as the compiler would leave them (shadowed_ok). */
	if (shadowed_ok(p, img, apex_len, why, wl) != 0)
		return NULL;

	/* Names that go: those with a name below them stay as empty non-terminals, the others
	 * leave the index, and so do the empty non-terminals above them left with no name
	 * below (p->n_ext entries after t[n_t], copies of their names). */
	size_t n_g = 0, ext_cap = 0;
	for (size_t i = 0; i < p->n_t; i++)
		if (p->t[i].gone) {
			n_g++;
			ext_cap += p->t[i].labels;
		}
	if (n_g > 0) {
		struct tn *t2 = realloc(p->t, (p->n_t + ext_cap) * sizeof(*p->t));
		if (t2 == NULL)
			return decline(why, wl, "out of memory");
		p->t = t2;
		struct nset gs;
		uint32_t *gi = calloc(n_g + ext_cap, sizeof(*gi));
		if (gi == NULL || nset_init(&gs, n_g + ext_cap, p->n_t + ext_cap) != 0) {
			free(gi);
			nset_free(&gs);
			return decline(why, wl, "out of memory");
		}
		size_t m = 0;
		for (size_t i = 0; i < p->n_t; i++) {
			struct tn *t = &p->t[i];
			if (!t->gone)
				continue;
			if (t->parent == P53_NONE) {
				free(gi);
				nset_free(&gs);
				return decline(why, wl, "a name that goes has no parent node");
			}
			nset_add(&gs, (uint32_t)i, t->name, t->len);
			gi[m++] = (uint32_t)i;
		}
		/* The empty non-terminals above them (not the apex, not one that gains records). */
		for (size_t j = 0; j < n_g; j++) {
			const struct tn *t = &p->t[gi[j]];
			const uint8_t *pn = t->name + 1 + t->name[0];
			size_t pl = t->len - 1u - t->name[0];
			uint32_t pi = t->parent;
			uint8_t labels = (uint8_t)(t->labels - 1);
			while (pi != P53_NONE) {
				const struct p53_image_node *pd = p53_image_node(img, pi);
				uint32_t k = tn_find(&p->ts, p->t, pn, pl);
				if (!(pd->flags & P53_NODE_ENT) || (pd->flags & P53_NODE_APEX) ||
				    (k != P53_NONE && p->t[k].changed) || tn_find(&gs, p->t, pn, pl) != P53_NONE)
					break;
				struct tn *e = &p->t[p->n_t + p->n_ext];
				memset(e, 0, sizeof(*e));
				memcpy(e->name, pn, pl);
				e->len = (uint8_t)pl;
				e->labels = labels--;
				e->old = pi;
				e->wparent = P53_NONE;
				e->shadow = served_top(img, z, apex_len, pn, pl) != P53_NONE;
				nset_add(&gs, (uint32_t)(p->n_t + p->n_ext), e->name, e->len);
				gi[m++] = (uint32_t)(p->n_t + p->n_ext);
				p->n_ext++;
				pl -= 1u + pn[0];
				pn += 1u + pn[0];
				pi = zone_node(p, img, z, apex_len, pn, pl);
				/* A wildcard's: if it goes, so does its parent's link to it (the
				 * parent is in the zone: a wildcard is never the apex). */
				if (pd->flags & P53_NODE_WILD)
					e->wparent = pi;
			}
		}
		/* Mark the set's names that have a name below them that stays: in an NSEC zone
		 * from the chain (below_owners), else one pass over the zone's names (a child
		 * that stays; one in the set itself is settled below). */
		int bo = nsec_ok ? below_owners(p, img, gi, m) : 1;
		for (uint32_t n = p->nb; bo != 0 && n < p->nb + zn->n_nodes; n++) {
			const struct p53_image_node *nd = p53_image_node(img, n);
			if (nd->name_len <= 1 || (nd->flags & P53_NODE_NSEC3))
				continue;
			const uint8_t *nm = p53_image_node_name(img, nd);
			const uint8_t *pn = nm + 1 + nm[0];
			size_t pl = nd->name_len - 1u - nm[0];
			uint32_t k = tn_find(&gs, p->t, pn, pl);
			if (k == P53_NONE || tn_find(&gs, p->t, nm, nd->name_len) != P53_NONE)
				continue;
			p->t[k].child = true;
		}
		for (size_t i = 0; i < p->n_t; i++) {
			const struct tn *t = &p->t[i];
			if (t->changed && t->old == P53_NONE && !t->gone) {
				const uint8_t *pn = t->name + 1 + t->name[0];
				uint32_t k = tn_find(&gs, p->t, pn, t->len - 1u - t->name[0]);
				if (k != P53_NONE)
					p->t[k].child = true;
			}
		}
		/* Deepest first: one that stays (as an empty non-terminal) is its parent's child. */
		qsort_r(gi, m, sizeof(*gi), depth_cmp, p->t);
		for (size_t j = 0; j < m; j++) {
			struct tn *t = &p->t[gi[j]];
			t->dead = !t->child;
			if (!t->dead) {
				const uint8_t *pn = t->name + 1 + t->name[0];
				uint32_t k = tn_find(&gs, p->t, pn, t->len - 1u - t->name[0]);
				if (k != P53_NONE)
					p->t[k].child = true;
			}
		}
		free(gi);
		nset_free(&gs);
		/* A hashed owner whose NSEC3 goes while a name below it stays (a name under a
		 * hashed label, which a full compile took) becomes an empty non-terminal of the
		 * zone: the compile puts it in the name index (NODATA), where this node, an NSEC3
		 * owner's, never was (NXDOMAIN); its proof and those below it would change too. */
		for (size_t i = 0; i < p->n_t; i++)
			if (p->t[i].gone && p->t[i].n3 && !p->t[i].dead)
				return decline(why, wl, "%s loses its NSEC3 but a name below it stays "
					       "(it becomes an empty non-terminal of the zone)",
					       p53_name_to_str(txt, sizeof(txt), p->t[i].name));
	}
	if (shadow_flips(p, img, z, why, wl) != 0)
		return NULL;
	if (n_g > 0) {
		for (size_t i = 0; i < p->n_t + p->n_ext; i++)
			if (p->t[i].dead) {
				const struct p53_image_node *nd = p53_image_node(img, p->t[i].old);
				garbage += sizeof(*nd) + nd->name_len;
			}
	}

	/* An unsigned zone: its cuts' links as the names are left (cut_links), applied after the
	 * layout. */
	if (!sgn && cut_links(p, img, z, apex_len, txt, sizeof(txt)) != 0) {
		if (txt[0] == '\0')
			return decline(why, wl, "out of memory");
		return decline(why, wl, "%s is below a DNAME owner or another served zone's apex "
			       "and a cut above it comes or goes", txt);
	}
	/* ... and its DNAME owners: one that comes has nothing below it (dname_links). */
	if (!sgn && dname_links(p, img, z, txt, sizeof(txt), err, sizeof(err)) != 0) {
		if (txt[0] == '\0')
			return decline(why, wl, "out of memory");
		return decline(why, wl, "%s becomes a DNAME owner but %s stays below it (RFC 6672 "
			       "§2.4: the zone does not compile)", txt, err);
	}
	/* A signed zone's: the same when delegations or glue come or go. */
	if (sgn && signed_cuts(p, img, z, apex_len, why, wl) != 0)
		return NULL;
	/* ... and when DNAME owners come, go or change (signed_dnames). */
	if (sgn && signed_dnames(p, img, z, why, wl) != 0)
		return NULL;

	/* Additional-section targets: a node losing its addresses leaves every list naming it
	 * (relist_lose, or with no patch index every list of the image is read); every RRset
	 * naming a name that gains them has its list made again (adds_list), as has every new
	 * MX, SRV, SVCB or HTTPS RRset of a touched name. */
	struct nset gain;
	size_t n_gain = 0, n_lose = 0;
	/* The additional lists end where the DNSSEC sections begin (proofs, chain, hashes). */
	size_t n_adds_old = ((h->proofs_off != 0 ? h->proofs_off : h->chain_off) - h->adds_off) /
			    sizeof(uint32_t);
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *t = &p->t[i];
		n_gain += addr_gains(img, t);
		n_lose += addr_loses(img, t);
	}
	if (n_gain > 0) {
		if (nset_init(&gain, n_gain, p->n_t) != 0) {
			nset_free(&gain);
			return decline(why, wl, "out of memory");
		}
		for (size_t i = 0; i < p->n_t; i++) {
			const struct tn *t = &p->t[i];
			if (addr_gains(img, t))
				nset_add(&gain, (uint32_t)i, t->name, t->len);
		}
		/* The patch index lists the nodes naming them (made from this image the first
		 * time, then kept with the images patched from it): else every node is read. */
		bool by_ix = naming_nodes(p, img, true);
		int gr = relist_gain(p, img, &gain, by_ix ? p->cand : NULL, p->n_cand, n_adds_old,
				     &garbage, txt, sizeof(txt));
		nset_free(&gain);
		if (gr != 0)
			return decline(why, wl, "%s is an additional-section target beside another "
				       "served zone's copy of it (more than %d such names)", txt,
				       SHADOW_MAX);
	}
	uint32_t *lose = NULL;
	bool lose_ix = false;
	if (n_lose > 0) {
		lose = malloc(n_lose * sizeof(*lose));
		if (lose == NULL)
			return decline(why, wl, "out of memory");
		size_t m = 0;
		for (size_t i = 0; i < p->n_t; i++)
			if (addr_loses(img, &p->t[i]))
				lose[m++] = p->t[i].old;
		qsort(lose, n_lose, sizeof(*lose), u32_cmp);
		/* The lists naming them are those of the nodes the patch index lists for their
		 * names (before the touched names' RRsets take the lists relist made): else
		 * every node is read. */
		lose_ix = naming_nodes(p, img, false);
		if (relist_lose(p, img, lose, n_lose, lose_ix ? p->cand : NULL, p->n_cand, n_adds_old,
				&garbage) != 0) {
			free(lose);
			return decline(why, wl, "out of memory");
		}
	}
	free(lose);
	for (size_t i = 0; i < p->n_t; i++) {
		const struct tn *o = &p->t[i];
		if (!o->changed)
			continue;
		for (size_t j = o->rs_first; j < (size_t)o->rs_first + o->rs_n; j++) {
			struct p53_image_rrset *rs = &p->nrs[j];
			if (p->nrs_old[j] != P53_NONE) {
				/* Kept: its list made again when relist_gain or
				 * relist_lose made one. */
				uint32_t r = p->nrs_old[j];
				const uint32_t *hit = p->n_relist > 0 ?
					bsearch(&r, p->relist, p->n_relist, 2 * sizeof(uint32_t), u32_cmp) : NULL;
				if (hit != NULL)
					rs->adds = hit[1];
				continue;
			}
			if (p53_target_skip(rs->type) < 0)
				continue;
			/* A signed zone's RRset signed again (records_same) keeps its list, or
			 * takes the one relist_gain or relist_lose made for its old RRset (a
			 * name it names gained or lost its addresses in the same diff). */
			if (sgn && rs->adds != P53_NONE) {
				uint32_t r = P53_NONE;
				if (o->old != P53_NONE && p->n_relist > 0 &&
				    p53_image_node_find(img, p53_image_node(img, o->old), rs->type, &r) != NULL)
					r += p->rb; /* (relative to the zone's range) */
				const uint32_t *hit = r != P53_NONE ?
					bsearch(&r, p->relist, p->n_relist, 2 * sizeof(uint32_t), u32_cmp) : NULL;
				if (hit != NULL)
					rs->adds = hit[1];
				continue;
			}
			if (adds_list(p, img, n_adds_old, z, o->name, o->len,
				      rs->type == P53_T_NS && o->cut_now, rs->type,
				      p->nrd + p->nrs_rd[j], rs->count, &rs->adds, txt, sizeof(txt)) != 0)
				return decline(why, wl, "%s is an additional-section target beside "
					       "another served zone's copy of it (more than %d such "
					       "names)", txt, SHADOW_MAX);
		}
	}

	/* Names that become glue or stop being glue have their proofs made again with the
	 * chain's (nsec_proofs, n3_proofs), also when no owner comes or goes (glue_proofs). */
	p->glue_redo = glue_proofs(p, img);
	/* An NSEC zone whose names or owners change: its new chain. */
	if (nsec_ok && nsec_plan(p, img, ai, why, wl) == NULL)
		return NULL;
	/* An NSEC3 zone whose nodes or hashes change: which covers move. */
	if (n3_ok && n3_plan(p, img, z, why, wl) == NULL)
		return NULL;
	/* The steered owners' NSECs the new chain changes, made and signed (steer_sign). */
	if (nsec_ok && steer_sign(p, img, ai, now, &rescan, &garbage, why, wl) != 0)
		return NULL;
	/* ... and the NSEC3s of steered owners whose own goes (steer_sign3). */
	if (n3_ok && steer_key(p) && steer_sign3(p, img, z, now, &rescan, why, wl) != 0)
		return NULL;

	/* The zone's new nodes and RRsets go right after its ranges: into its room when they
	 * fit, else at the tables' ends when its ranges and room end them (the tables grow,
	 * with fresh room after), else the patch runs again with the zone moved there first
	 * (must_move, patch_entry()). */
	const bool nodes_fit = n_new <= zn->node_room, rrsets_fit = p->n_nrs <= zn->rrset_room;
	const bool last = (uint64_t)p->nn0 + zn->node_room == h->n_nodes &&
			  (uint64_t)p->nr0 + zn->rrset_room == h->n_rrsets;
	if (!(nodes_fit && rrsets_fit) && !last) {
		p->must_move = true;
		return decline(why, wl, "the zone's room after its ranges is used up");
	}
	const uint32_t node_room = nodes_fit ? zn->node_room - n_new
					     : p53_image_room(zn->n_nodes + n_new);
	const uint32_t rrset_room = rrsets_fit ? zn->rrset_room - (uint32_t)p->n_nrs
					       : p53_image_room(zn->n_rrsets + (uint32_t)p->n_nrs);
	/* Sizes of the new image. */
	uint32_t n_nodes = nodes_fit ? h->n_nodes : p->nn0 + n_new + node_room;
	/* The compiler's load factor (p53_image_slot_count(): at most 0.8, 0.4 for a small
	 * index): past it, the index doubles and is filled again from its slots (each holds
	 * its hash), O(slots). */
	uint64_t n_slots = p53_image_slot_count((uint64_t)h->hash_mask + 1, n_nodes);
	if (n_slots > (uint64_t)1 << 32)
		return decline(why, wl, "too many names");
	uint32_t mask = (uint32_t)(n_slots - 1);
	/* The names-and-RDATA section (image.h, Co-location): each changed node's block is
	 * appended to it (blocks_append). */
	size_t rdata_old = h->adds_off - h->rdata_off;
	size_t blocks = blocks_append(p, img, NULL, NULL, NULL, rdata_old, &garbage) - rdata_old;
	struct p53_image_hdr nh = *h;
	size_t off = p53_align8(sizeof(nh));
	nh.zones_off = (uint32_t)off;
	off = p53_align8(off + (size_t)h->n_zones * sizeof(struct p53_image_zone));
	nh.n_nodes = n_nodes;
	nh.nodes_off = (uint32_t)off;
	off = p53_align8(off + (size_t)n_nodes * sizeof(uint32_t));
	nh.n_rrsets = rrsets_fit ? h->n_rrsets : p->nr0 + (uint32_t)p->n_nrs + rrset_room;
	nh.rrsets_off = (uint32_t)off;
	off = p53_align8(off + (size_t)nh.n_rrsets * sizeof(uint32_t));
	nh.hash_mask = mask;
	nh.slots_off = (uint32_t)off;
	off = p53_align8(off + (size_t)n_slots * sizeof(uint64_t));
	nh.names_off = (uint32_t)off;
	nh.rdata_off = (uint32_t)off;
	off = p53_align8(off + rdata_old + blocks);
	nh.adds_off = (uint32_t)off;
	off = p53_align8(off + (n_adds_old + p->n_nadds) * sizeof(uint32_t));
	/* DNSSEC sections, when a zone of the image is signed: a proof per node (new nodes are
	 * an unsigned zone's: empty ones), the NSEC chain and NSEC3 hashes as they were (they
	 * hold node indices, which stay). */
	nh.proofs_off = 0;
	if (h->proofs_off != 0) {
		nh.proofs_off = (uint32_t)off;
		off = p53_align8(off + (size_t)n_nodes * sizeof(struct p53_image_proof));
	}
	nh.chain_off = (uint32_t)off;
	if (p->nsec_redo)
		nh.n_chain = (uint32_t)(h->n_chain + p->n_zc - (p->cz1 - p->cz0));
	off = p53_align8(off + (size_t)nh.n_chain * sizeof(uint32_t));
	nh.nsec3_off = (uint32_t)off;
	if (p->n3_redo)
		nh.n_nsec3 = (uint32_t)(h->n_nsec3 + p->n_n3j - p->n_n3l);
	off = p53_align8(off + (size_t)nh.n_nsec3 * sizeof(struct p53_image_nsec3));
	nh.size = off;
	nh.max_labels = max_labels;
	nh.n_records = (uint32_t)((int64_t)h->n_records + d_records);
	garbage += h->pad;
	if (p53_image_too_much_garbage(garbage, off))
		return decline(why, wl, "garbage would pass a quarter of the image");
	nh.pad = (uint32_t)garbage; /* (< the image: under 4 GiB) */
	if (off > UINT32_MAX)
		return decline(why, wl, "the image would pass the 4 GiB format limit");

	/* Into the spare when it is big enough, else fresh memory with room (image_edit.h). */
	uint8_t *ni = p53_image_out(off, &p->spare);
	if (ni == NULL)
		return decline(why, wl, "out of memory");
	const uint8_t *oi = img;
	memcpy(ni, &nh, sizeof(nh));
	memset(ni + sizeof(nh), 0, nh.zones_off - sizeof(nh));
#define COPY(dst_off, src_off, n, total) do { \
		memcpy(ni + (dst_off), oi + (src_off), (n)); \
		memset(ni + (dst_off) + (n), 0, (total) - (n)); \
	} while (0)
	COPY(nh.zones_off, h->zones_off, (size_t)h->n_zones * sizeof(struct p53_image_zone),
	     nh.nodes_off - nh.zones_off);
	COPY(nh.nodes_off, h->nodes_off, (size_t)h->n_nodes * sizeof(uint32_t),
	     nh.rrsets_off - nh.nodes_off);
	COPY(nh.rrsets_off, h->rrsets_off, (size_t)h->n_rrsets * sizeof(uint32_t),
	     nh.slots_off - nh.rrsets_off);
	p53_image_index_copy(img, (uint64_t *)(ni + nh.slots_off), mask); /* fills its section */
	COPY(nh.rdata_off, h->rdata_off, rdata_old, nh.adds_off - nh.rdata_off);
	COPY(nh.adds_off, h->adds_off, n_adds_old * sizeof(uint32_t),
	     (nh.proofs_off != 0 ? nh.proofs_off : nh.chain_off) - nh.adds_off);
	if (nh.proofs_off != 0) {
		struct p53_image_proof *pf = (struct p53_image_proof *)(ni + nh.proofs_off);
		if (p->nsec_redo) /* copied by nsec_proofs(), in its pass */
			memset(ni + nh.proofs_off + (size_t)n_nodes * sizeof(*pf), 0,
			       nh.chain_off - nh.proofs_off - (size_t)n_nodes * sizeof(*pf));
		else
			COPY(nh.proofs_off, h->proofs_off, (size_t)h->n_nodes * sizeof(*pf),
			     nh.chain_off - nh.proofs_off);
		for (uint32_t n = p->nn0; n < p->nn0 + n_new; n++)
			pf[n] = (struct p53_image_proof){ .match = P53_NONE, .wild = P53_NONE,
							  .encl = P53_NONE, .nc = P53_NONE };
		/* The room left: free (nsec_proofs() copies only old entries over it). */
		memset(pf + p->nn0 + n_new, 0, (size_t)node_room * sizeof(*pf));
	}
	if (p->nsec_redo) /* written by nsec_proofs() */
		memset(ni + nh.chain_off, 0, nh.nsec3_off - nh.chain_off);
	else
		COPY(nh.chain_off, h->chain_off, (size_t)h->n_chain * sizeof(uint32_t),
		     nh.nsec3_off - nh.chain_off);
	if (p->n3_redo) /* written by n3_proofs() */
		memset(ni + nh.nsec3_off, 0, nh.size - nh.nsec3_off);
	else
		COPY(nh.nsec3_off, h->nsec3_off, (size_t)h->n_nsec3 * sizeof(struct p53_image_nsec3),
		     nh.size - nh.nsec3_off);
#undef COPY
	uint32_t *roff = (uint32_t *)(ni + nh.rrsets_off);
	uint64_t *slots = (uint64_t *)(ni + nh.slots_off);
	struct p53_image_zone *zones = (struct p53_image_zone *)(ni + nh.zones_off);
	zones[z].n_nodes += n_new;
	zones[z].n_rrsets += (uint32_t)p->n_nrs;
	zones[z].node_room = node_room;
	zones[z].rrset_room = rrset_room;
	p53_image_zones_place(ni); /* (read through from here on) */
	/* A header of the new image, through rrsets[] (image.h). */
#define NRS(r) ((struct p53_image_rrset *)(ni + nh.rdata_off + roff[r]))

	(void)blocks_append(p, img, ni + nh.rdata_off, roff + p->nr0, ni, rdata_old, NULL);
	if (p->n_nadds > 0)
		memcpy(ni + nh.adds_off + n_adds_old * sizeof(uint32_t), p->nadds,
		       p->n_nadds * sizeof(uint32_t));
	for (size_t i = 0; i < p->n_t; i++) {
		struct tn *t = &p->t[i];
		if (!t->changed)
			continue;
		struct p53_image_node *nd = p53_image_node_w(ni, t->node);
		if (t->old == P53_NONE) {
			*nd = (struct p53_image_node){
				.name_len = t->len, .labels = t->labels,
				.zone = z, .wildcard = P53_NONE, .self = t->node - p->nb,
				.occluder = P53_NONE, /* its closest name in the image has none */
			};
		}
		nd->flags &= (uint16_t)~P53_NODE_CNAME;
		if (t->rs_n > 0) {
			nd->rrsets = p->nr0 + t->rs_first - p->rb; /* (relative, image.h) */
			nd->n_rrsets = (uint16_t)t->rs_n;
			nd->flags &= (uint16_t)~P53_NODE_ENT;
			for (uint32_t r = 0; r < t->rs_n; r++)
				if (p->nrs[t->rs_first + r].type == P53_T_CNAME)
					nd->flags |= P53_NODE_CNAME;
		} else {
			nd->rrsets = 0;
			nd->n_rrsets = 0;
			nd->flags |= P53_NODE_ENT;
		}
		uint32_t hash = p53_name_hash(t->name, t->len);
		/* Its block moved (blocks_append): its slot, when it has one, follows it. */
		if (t->old != P53_NONE && p53_image_node_off(ni, t->node) != p53_image_node_off(img, t->old))
			index_move(slots, mask, hash, p53_image_node_off(img, t->old),
				   p53_image_node_off(ni, t->node));
		if (t->old == P53_NONE && t->n3)
			nd->flags |= P53_NODE_NSEC3; /* a hashed owner: out of the index */
		else if (t->old == P53_NONE && !t->shadow) /* (a shadowed name: not indexed) */
			p53_image_index_add(ni, slots, mask, hash, t->node);
		else if (t->dead) {
			if (!t->shadow)
				p53_image_index_remove(ni, slots, mask, hash, t->node);
			nd->flags |= P53_NODE_NSEC3; /* out of the index (image_patch.h) */
		}
		if (i == 0) {
			for (uint32_t r = 0; r < t->rs_n; r++)
				if (NRS(p->rb + nd->rrsets + r)->type == P53_T_SOA)
					zones[z].soa = nd->rrsets + r;
			zones[z].serial = p53_image_zone(mi, 0)->serial;
			zones[z].neg_ttl = p53_image_zone(mi, 0)->neg_ttl;
			zones[z].name_off = p53_image_node_name_off(ni, nd); /* the apex's block moved */
			/* The NSEC3 salt lies in the NSEC3PARAM's RDATA, which may have moved
			 * (signed again): as image_build.c points at it. */
			for (uint32_t r = 0; r < t->rs_n && (zones[z].dnssec & P53_ZONE_NSEC3); r++)
				if (NRS(p->rb + nd->rrsets + r)->type == 51)
					zones[z].salt_off = roff[p->rb + nd->rrsets + r] +
							    (uint32_t)sizeof(struct p53_image_rrset) +
							    P53_RR_OWNER_LEN + 10 + 5;
		}
	}
	for (size_t j = 0; j < p->n_relist; j++)
		NRS(p->relist[2 * j])->adds = p->relist[2 * j + 1];
	/* A served child's parent_side: the parent's node at its apex as the patch leaves it. */
	shadow_sides(p, img, zones, z);
	/* Empty non-terminals left with no name below them leave the index. */
	for (size_t j = p->n_t; j < p->n_t + p->n_ext; j++) {
		const struct tn *e = &p->t[j];
		if (!e->dead)
			continue;
		if (!e->shadow)
			p53_image_index_remove(ni, slots, mask, p53_name_hash(e->name, e->len), e->old);
		p53_image_node_w(ni, e->old)->flags |= P53_NODE_ENT | P53_NODE_NSEC3; /* out of the index */
		/* A wildcard that goes: names below its parent no longer match it (as the full
		 * compile links a node to "*.<owner>" only when that exists). */
		if (e->wparent != P53_NONE && p53_image_node(ni, e->wparent)->wildcard == zrel(p, e->old))
			p53_image_node_w(ni, e->wparent)->wildcard = P53_NONE;
	}
	if (!sgn) {
		/* An unsigned zone's cuts, glue and wildcards as nodes_link() makes them: each
		 * node in the image the patch leaves gets its CUT, GLUE and occluder; a new
		 * wildcard its parent's link, one that leaves the index takes it away. */
		for (size_t i = 0; i < p->n_t; i++) {
			const struct tn *t = &p->t[i];
			bool wild = t->name[0] == 1 && t->name[1] == '*';
			if (t->changed && t->dead) {
				if (wild && t->parent != P53_NONE &&
				    p53_image_node(ni, t->parent)->wildcard == zrel(p, t->node))
					p53_image_node_w(ni, t->parent)->wildcard = P53_NONE;
				continue;
			}
			if (!t->changed && t->old == P53_NONE)
				continue;
			struct p53_image_node *nd = p53_image_node_w(ni, t->changed ? t->node : t->old);
			nd->flags &= (uint16_t)~(P53_NODE_CUT | P53_NODE_GLUE);
			nd->flags |= (uint16_t)((t->cut_now ? P53_NODE_CUT : 0) |
						(t->occ_now != P53_NONE ? P53_NODE_GLUE : 0));
			nd->occluder = zrel(p, t->occ_now);
			if (wild && t->old == P53_NONE) {
				nd->flags |= P53_NODE_WILD;
				uint32_t pn = parent_now(p, img, t);
				if (pn != P53_NONE)
					p53_image_node_w(ni, pn)->wildcard = zrel(p, t->node);
			}
		}
		for (size_t j = 0; j < p->n_desc; j++) {
			struct p53_image_node *nd = p53_image_node_w(ni, p->desc[2 * j]);
			nd->occluder = zrel(p, p->desc[2 * j + 1]);
			nd->flags &= (uint16_t)~P53_NODE_GLUE;
			if (nd->occluder != P53_NONE)
				nd->flags |= P53_NODE_GLUE;
		}
		dname_flags(p, img, ni);
	} else {
		wild_links(p, img, ni);
	}
	if (p->sg_links)
		signed_links(p, ni);
	if (p->sg_dname)
		dname_flags(p, img, ni);
	if (p->nsec_redo)
		nsec_proofs(p, img, ni, z);
	if (p->n3_redo && n3_proofs(p, img, ni, z, why, wl) != 0) {
		free(ni);
		return NULL;
	}
	if ((nsec_ok || n3_ok) && steer_denials(p, img, ni, ai, nsec_ok, why, wl) != 0) {
		free(ni);
		return NULL;
	}
	if (sgn) {
		/* The earliest signature: the touched names' (all of them are in the small
		 * compile), or, when one that went was the earliest, every node's again. (After
		 * steer_denials: a patch it declines leaves ix as it was.) */
		uint64_t e = p53_image_zone(mi, 0)->sig_expire;
		/* The patch index counts the zone's RRSIGs by expiration (made from this image
		 * when one that goes may have been the earliest, then kept): the touched nodes'
		 * old ones uncounted, their new ones counted, the earliest read off it. */
		bool by_ix = p->ix != NULL && (p53_patch_index_has_sigs(p->ix, z) ||
					       (rescan && p53_patch_index_sigs_build(p->ix, img, z) == 0));
		for (size_t i = 0; i < p->n_t && by_ix; i++) {
			const struct tn *t = &p->t[i];
			if (!t->changed) /* its RRsets as they were (t->node unset) */
				continue;
			by_ix = (t->old == P53_NONE ||
				 p53_patch_index_sigs_node(p->ix, img, t->old, z, false) == 0) &&
				p53_patch_index_sigs_node(p->ix, ni, t->node, z, true) == 0;
		}
		if (by_ix) {
			e = p53_patch_index_sigs_min(p->ix, z, now);
		} else if (!rescan) {
			if (zones[z].sig_expire != 0 && (e == 0 || zones[z].sig_expire < e))
				e = zones[z].sig_expire;
			/* The steered owners' NSECs signed here (steer_resign). */
			if (p->signed_nsec && (e == 0 || p->sign->expiration < e))
				e = p->sign->expiration;
		} else {
			e = 0;
			for (uint32_t n = p->nb; n < p->nb + zones[z].n_nodes; n++) {
				const struct p53_image_node *nd = p53_image_node(ni, n);
				for (uint32_t r = rs0(ni, nd), r_end = r + nd->n_rrsets; r < r_end; r++) {
					uint64_t x = sigs_expire(ni, NRS(r), now);
					if (x != 0 && (e == 0 || x < e))
						e = x;
				}
			}
		}
		if (e == 0) {
			/* The index's counts for the zone are its new nodes' now: no longer img's. */
			if (p->ix != NULL)
				p53_patch_index_sigs_drop(p->ix, z);
			free(ni);
			return decline(why, wl, "the signed zone would have no signature left");
		}
		zones[z].sig_expire = e;
	}
	if (n3_ok) {
		/* The opt-out flag: any NSEC3 of the zone with it (the touched owners' are in the
		 * small compile; when one of them had it and the small compile has none, every
		 * owner's again). */
		uint16_t d = zones[z].dnssec | (p53_image_zone(mi, 0)->dnssec & P53_ZONE_OPTOUT);
		bool scan = false;
		for (size_t i = 0; i < p->n_t && (d & P53_ZONE_OPTOUT) &&
				   !(p53_image_zone(mi, 0)->dnssec & P53_ZONE_OPTOUT); i++) {
			const struct tn *t = &p->t[i];
			uint32_t r;
			scan |= t->n3 && t->changed && t->old != P53_NONE &&
				has_type(img, t->old, 50, &r) && n3_optout(img, p53_image_rrset(img, r));
		}
		if (scan) {
			const struct p53_image_nsec3 *nt = (const struct p53_image_nsec3 *)(ni + nh.nsec3_off) +
							   zones[z].proof_lo;
			bool any = false;
			for (uint32_t k = 0; k < zones[z].proof_n && !any; k++) {
				uint32_t r;
				any = has_type(ni, p->nb + nt[k].node, 50, &r) && n3_optout(ni, NRS(r));
			}
			if (!any)
				d &= (uint16_t)~P53_ZONE_OPTOUT;
		}
		zones[z].dnssec = d;
	}
	*len = off;
#undef NRS
	return ni;
}

/* What patch_run() holds, freed. */
static void patch_free(struct patch *p)
{
	free(p->moved);
	free(p->t);
	nset_free(&p->ts);
	free(p->nrs);
	free(p->nrs_old);
	free(p->nrs_rd);
	free(p->nrd);
	free(p->nadds);
	p53_rrs_free(&p->mini);
	p53_rrs_free(&p->own);
	free(p->spare);
	free(p->mimg);
	free(p->pend);
	free(p->relist);
	free(p->sh);
	free(p->sa);
	free(p->cand);
	free(p->zc);
	free(p->ins);
	free(p->rem);
	free(p->before);
	free(p->gap_ins);
	free(p->n3j);
	free(p->n3l);
	free(p->n3mk);
	free(p->n3r);
	free(p->desc);
	free(p->s3);
}

void *p53_image_patch(const void *img, const uint8_t *apex, size_t apex_len,
		      const struct p53_ixfr *diff, const struct p53_rrs *result,
		      const struct p53_patch_sign *sign, void *spare, size_t *len, char *why,
		      size_t whylen)
{
	return p53_image_patch_indexed(img, apex, apex_len, diff, result, sign, spare, NULL, len,
				       why, whylen);
}

/* The patch, its spare handed back on a decline (*spare: NULL when it was used or freed). */
static void *patch_entry(const void *img, const uint8_t *apex, size_t apex_len,
			 const struct p53_ixfr *diff, const struct p53_rrs *result,
			 const struct p53_patch_sign *sign, void **spare,
			 struct p53_patch_index *ix, size_t *len, char *why, size_t whylen)
{
	struct patch p = { .spare = *spare, .sign = sign };
	void *ni;

	*spare = NULL;

	why[0] = '\0';
	if (ix != NULL) {
		p53_patch_index_of(ix, img); /* emptied unless it describes img */
		p.ix = ix;
	}
	ni = patch_run(&p, img, apex, apex_len, diff, result, len, why, whylen);
	if (ni == NULL && p.must_move) {
		/* The zone's room is used up and other zones' ranges follow its: the patch
		 * again, the zone's ranges moved to the tables' ends first (patch_run). */
		struct patch again = { .spare = p.spare, .sign = sign, .ix = p.ix, .must_move = true };
		p.spare = NULL;
		patch_free(&p);
		p = again;
		why[0] = '\0';
		ni = patch_run(&p, img, apex, apex_len, diff, result, len, why, whylen);
	}
	if (ni != NULL && p.ix != NULL) {
		/* The touched nodes' targets as they are now (their old ones stay listed: the
		 * index lists a superset, relist_gain reads the records). */
		for (size_t i = 0; i < p.n_t; i++)
			if (p.t[i].changed)
				p53_patch_index_targets_add(ix, ni, p.t[i].node);
	}
	/* Declined: ix still describes img (the splice that follows may hand it on:
	 * p53_patch_index_spliced); the one part a patch changes before it may decline, the
	 * zone's signature counts, was dropped there. */
	if (ni != NULL && p.ix != NULL)
		p53_patch_index_bind(ix, ni);
	if (ni != NULL && p.ix == NULL) {
		/* No index describes it: generation 0 (the publish sets one), so that an index
		 * of the image it was patched from (whose generation the header copied) does not
		 * take it for that image. */
		((struct p53_image_hdr *)ni)->generation = 0;
	}
	if (ni == NULL) {
		*spare = p.spare;
		p.spare = NULL;
	}
	patch_free(&p);
	return ni;
}

void *p53_image_patch_indexed(const void *img, const uint8_t *apex, size_t apex_len,
			      const struct p53_ixfr *diff, const struct p53_rrs *result,
			      const struct p53_patch_sign *sign, void *spare,
			      struct p53_patch_index *ix, size_t *len, char *why, size_t whylen)
{
	void *ni = patch_entry(img, apex, apex_len, diff, result, sign, &spare, ix, len, why,
			       whylen);

	free(spare);
	return ni;
}

void *p53_image_patch_spare(const void *img, const uint8_t *apex, size_t apex_len,
			    const struct p53_ixfr *diff, const struct p53_rrs *result,
			    const struct p53_patch_sign *sign, void **spare, size_t *len,
			    char *why, size_t whylen)
{
	return patch_entry(img, apex, apex_len, diff, result, sign, spare, NULL, len, why, whylen);
}
