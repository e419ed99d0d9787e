/*
 * Zone compiler tests: rejected zones (a table, each row saying what it breaks, checking
 * the exact "file:line:" and the reason), and compiled zones checked only through the
 * reader API of dataplane/image.h, the way a worker sees them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <ldns/ldns.h>

#include "control/zone/image_build.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

#ifndef P53_SRCDIR
#define P53_SRCDIR "."
#endif
#define ZDIR P53_SRCDIR "/tests/unit/control/zones"

/* Warnings collected from the callback. */
struct warns {
	char msg[16][512];
	int n;
};

static void collect(void *arg, const char *msg)
{
	struct warns *w = arg;

	if (w->n < 16)
		snprintf(w->msg[w->n++], sizeof(w->msg[0]), "%s", msg);
}

static int warned(const struct warns *w, const char *needle)
{
	for (int i = 0; i < w->n; i++)
		if (strstr(w->msg[i], needle) != NULL)
			return 1;
	return 0;
}

/* Canonical wire form of a text name. */
static size_t wire(const char *txt, uint8_t *out)
{
	ldns_rdf *r = NULL;
	size_t n;

	assert_int_equal(ldns_str2rdf_dname(&r, txt), LDNS_STATUS_OK);
	n = ldns_rdf_size(r);
	p53_name_lower(out, ldns_rdf_data(r), n);
	ldns_rdf_deep_free(r);
	return n;
}

static uint32_t find(const void *img, const char *txt)
{
	uint8_t w[P53_NAME_MAXLEN];
	size_t n = wire(txt, w);

	return p53_image_find(img, w, n, p53_name_hash(w, n));
}

static const struct p53_image_node *node(const void *img, const char *txt)
{
	uint32_t n = find(img, txt);

	if (n == P53_NONE)
		fail_msg("name %s not found", txt);
	return p53_image_node(img, n);
}

static const struct p53_image_rrset *rrset(const void *img, const char *txt, uint16_t type)
{
	uint32_t i = p53_image_node_rrset(img, node(img, txt), type);

	if (i == P53_NONE)
		fail_msg("no type %u at %s", type, txt);
	return p53_image_rrset(img, i);
}

/* Search raw bytes, for "this name is in the RDATA with its case". */
static int contains(const uint8_t *hay, size_t hl, const void *needle, size_t nl)
{
	for (size_t i = 0; i + nl <= hl; i++)
		if (memcmp(hay + i, needle, nl) == 0)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ positive */

static void *build_example(size_t *len, struct warns *w)
{
	struct p53_zone_src z[] = {
		{ .name = "example.com.", .file = ZDIR "/example.com.zone" },
		{ .name = "child.example.com", .file = ZDIR "/child.example.com.zone" },
	};
	char err[512];
	void *img = p53_image_build(z, 2, len, err, sizeof(err), collect, w);

	if (img == NULL)
		fail_msg("build failed: %s", err);
	return img;
}

static void test_image_valid_and_indexed(void **state)
{
	struct warns w = { 0 };
	size_t len;
	void *img = build_example(&len, &w);
	const struct p53_image_hdr *h = p53_image_hdr(img);

	(void)state;
	assert_int_equal(p53_image_check(img, len, NULL), 0);
	assert_int_equal(h->size, len);
	assert_int_equal(h->n_zones, 2);
	assert_int_equal(h->generation, 0); /* stamped when published (control/publish.c) */
	assert_int_equal(h->zones_off % 8, 0);
	assert_int_equal(h->nodes_off % 8, 0);
	assert_int_equal(h->rrsets_off % 8, 0);
	assert_int_equal(h->slots_off % 8, 0);
	assert_int_equal(h->names_off % 8, 0);
	assert_int_equal(h->rdata_off % 8, 0);
	assert_int_equal(h->adds_off % 8, 0);
	uint32_t live = 0; /* nodes in the zones' ranges (the tables hold room too) */
	for (uint32_t z = 0; z < h->n_zones; z++)
		live += p53_image_zone(img, z)->n_nodes;
	assert_true((h->hash_mask + 1) * 4 >= 5 * live && h->hash_mask + 1 >= 16);
	/* A small index is kept at a load factor of at most 0.4 (image_build.h). */
	assert_true(h->hash_mask + 1 <= P53_IMAGE_SLOTS_SPARSE);
	assert_true((h->hash_mask + 1) * 2 >= 5 * live);

	for (uint32_t i = 0; i < h->n_nodes; i++) {
		if (p53_image_node_off(img, i) == 0)
			continue; /* room (image.h, node_room) */
		const struct p53_image_node *n = p53_image_node(img, i);
		const uint8_t *name = p53_image_node_name(img, n);
		uint32_t f = p53_image_find(img, name, n->name_len, p53_name_hash(name, n->name_len));
		const struct p53_image_zone *zn = p53_image_zone(img, n->zone);

		assert_int_equal(p53_name_len(name, n->name_len), n->name_len);
		assert_int_equal(p53_name_labels(name), n->labels);
		for (size_t k = 0; k < n->name_len; k++)
			assert_int_equal(name[k], p53_lower(name[k]));
		/* Indexed once: a name held by two zones resolves to the deeper zone's node; parent
		   glue below a served child's apex is not indexed at all. */
		if (f == P53_NONE)
			assert_int_equal(n->flags, P53_NODE_GLUE);
		else if (f != i)
			assert_true(p53_image_zone(img, p53_image_node(img, f)->zone)->labels > zn->labels);
		/* Every ancestor down from the apex is a node (of this zone or a deeper one). */
		if (!(n->flags & P53_NODE_APEX) && f == i) {
			const uint8_t *up = name + 1 + name[0];
			uint32_t pi = p53_image_find(img, up, n->name_len - 1u - name[0],
						     p53_name_hash(up, n->name_len - 1u - name[0]));
			assert_true(pi != P53_NONE);
		}
		/* RRsets sorted by type; records well-formed and inside rdata[]. */
		for (uint32_t r = 0; r < n->n_rrsets; r++) {
			const struct p53_image_rrset *rs = p53_image_rrset(img, n->rrsets + r);
			const uint8_t *p = p53_image_rdata(img, rs);
			size_t o = 0;
			if (r > 0)
				assert_true(p53_image_rrset(img, n->rrsets + r - 1)->type < rs->type);
			assert_true(p + rs->rdata_len <= (const uint8_t *)img + h->adds_off);
			for (uint16_t c = 0; c < rs->count; c++) {
				assert_true(o + 12 <= rs->rdata_len);
				assert_int_equal(p[o], 0xc0);   /* owner: pointer to the question */
				assert_int_equal(p[o + 1], 12);
				o += 2;
				assert_int_equal(p[o] << 8 | p[o + 1], rs->type);
				assert_int_equal(p[o + 2] << 8 | p[o + 3], 1);
				o += 10u + (size_t)(p[o + 8] << 8 | p[o + 9]);
			}
			assert_int_equal(o, rs->rdata_len);
		}
	}
	free(img);
}

static void test_image_apex_soa_and_zone(void **state)
{
	struct warns w = { 0 };
	size_t len;
	void *img = build_example(&len, &w);
	const struct p53_image_zone *z0 = p53_image_zone(img, 0), *z1 = p53_image_zone(img, 1);
	const struct p53_image_node *apex = node(img, "example.com.");

	(void)state;
	assert_ptr_equal(p53_image_node(img, z0->apex), apex);
	assert_int_equal(apex->flags, P53_NODE_APEX);
	assert_int_equal(z0->serial, 2024010101u);
	assert_int_equal(z0->neg_ttl, 300);           /* min(3600, MINIMUM 300) */
	assert_int_equal(z1->serial, 7);
	assert_int_equal(z1->neg_ttl, 7200);          /* min(7200, MINIMUM 86400) */
	assert_int_equal(z0->labels, 2);
	assert_int_equal(z0->name_len, 13);
	assert_memory_equal(p53_image_name(img, z0->name_off), "\7example\3com", 13);
	assert_int_equal(z0->soa, p53_image_node_rrset(img, apex, LDNS_RR_TYPE_SOA));
	assert_int_equal(p53_image_rrset(img, z0->soa)->flags, P53_RRSET_COMPRESS);
	/* 44 records, one an RRSIG covering no RRset at its owner (kept as its own RRset). */
	assert_int_equal(p53_image_hdr(img)->n_records, 44);
	/* The deepest name: deep.ns.sub.example.com. (5 labels); walks start there. */
	assert_int_equal(p53_image_hdr(img)->max_labels, 5);
	free(img);
}

static void test_image_flags_links(void **state)
{
	struct warns w = { 0 };
	size_t len;
	void *img = build_example(&len, &w);
	const struct p53_image_node *n;

	(void)state;
	/* Wildcards: linked from the parent, flagged, also under an ENT. */
	assert_int_equal(node(img, "example.com.")->wildcard, find(img, "*.example.com."));
	assert_int_equal(node(img, "*.example.com.")->flags, P53_NODE_WILD);
	n = node(img, "wild.example.com.");
	assert_int_equal(n->flags, P53_NODE_ENT);
	assert_int_equal(n->wildcard, find(img, "*.wild.example.com."));
	assert_int_equal(node(img, "www.example.com.")->wildcard, P53_NONE);
	/* ENTs: only a.b.c exists. */
	n = node(img, "c.example.com.");
	assert_int_equal(n->flags, P53_NODE_ENT);
	assert_int_equal(n->n_rrsets, 0);
	assert_int_equal(node(img, "b.c.example.com.")->flags, P53_NODE_ENT);
	assert_int_equal(node(img, "a.b.c.example.com.")->flags, 0);
	assert_int_equal(node(img, "a.b.c.example.com.")->labels, 5);
	assert_int_equal(find(img, "x.c.example.com."), P53_NONE);
	/* CNAME chain; RRSIG allowed beside a CNAME. It covers A, which alias does not have:
	   an RRSIG goes with the RRset it covers, so this one stays an RRset of its own, with
	   a warning. */
	assert_int_equal(node(img, "alias.example.com.")->flags, P53_NODE_CNAME);
	assert_int_equal(node(img, "alias.example.com.")->n_rrsets, 2);
	assert_int_equal(rrset(img, "alias.example.com.", LDNS_RR_TYPE_CNAME)->sig_count, 0);
	assert_int_equal(rrset(img, "alias.example.com.", LDNS_RR_TYPE_RRSIG)->count, 1);
	assert_true(warned(&w, "example.com.zone:20: RRSIG at 'alias.example.com.' covers A, "
			       "which 'alias.example.com.' does not have: kept as a record of that "
			       "name (answered to RRSIG and ANY queries, sent in transfers)"));
	assert_int_equal(node(img, "alias2.example.com.")->flags, P53_NODE_CNAME);
	assert_int_equal(rrset(img, "alias.example.com.", LDNS_RR_TYPE_CNAME)->flags,
			 P53_RRSET_COMPRESS);
	/* DNAME. */
	assert_int_equal(node(img, "d.example.com.")->flags, P53_NODE_DNAME);
	/* Delegation: the cut is not glue, what is below it is, occluded by the cut. */
	n = node(img, "sub.example.com.");
	assert_int_equal(n->flags, P53_NODE_CUT);
	assert_int_equal(n->occluder, P53_NONE);
	assert_int_equal(node(img, "ns.sub.example.com.")->flags, P53_NODE_GLUE);
	assert_int_equal(node(img, "ns.sub.example.com.")->occluder, find(img, "sub.example.com."));
	assert_int_equal(node(img, "deep.ns.sub.example.com.")->flags, P53_NODE_GLUE);
	assert_int_equal(node(img, "deep.ns.sub.example.com.")->occluder,
			 find(img, "sub.example.com."));
	assert_int_equal(node(img, "www.example.com.")->occluder, P53_NONE);
	free(img);
}

static void test_image_adds(void **state)
{
	struct warns w = { 0 };
	size_t len;
	void *img = build_example(&len, &w);
	const struct p53_image_rrset *rs;
	const uint32_t *a;

	(void)state;
	/* Apex NS: ns1 in zone; ns2.example.net. not served. */
	rs = rrset(img, "example.com.", LDNS_RR_TYPE_NS);
	assert_int_equal(rs->count, 2);
	a = p53_image_adds(img, rs->adds);
	assert_int_equal(a[0], 1);              /* one node, none required: not a cut */
	assert_int_equal(a[1], find(img, "ns1.example.com."));
	/* Cut NS: in-bailiwick glue included (and required, RFC 9471), out-of-bailiwick
	 * unserved not. */
	rs = rrset(img, "sub.example.com.", LDNS_RR_TYPE_NS);
	a = p53_image_adds(img, rs->adds);
	assert_int_equal(P53_ADDS_COUNT(a[0]), 1);
	assert_int_equal(P53_ADDS_REQUIRED(a[0]), 1);
	assert_int_equal(a[1], find(img, "ns.sub.example.com."));
	/* In-domain glue goes first even when its NS sorts after a sibling's (ns.sub, under
	 * another cut): only it is required. */
	rs = rrset(img, "rfc9471.example.com.", LDNS_RR_TYPE_NS);
	a = p53_image_adds(img, rs->adds);
	assert_int_equal(P53_ADDS_COUNT(a[0]), 2);
	assert_int_equal(P53_ADDS_REQUIRED(a[0]), 1);
	assert_int_equal(a[1], find(img, "zz.rfc9471.example.com."));
	assert_int_equal(a[2], find(img, "ns.sub.example.com."));
	/* MX, and an MX target written in mixed case. */
	a = p53_image_adds(img, rrset(img, "example.com.", LDNS_RR_TYPE_MX)->adds);
	assert_int_equal(a[0], 1);
	assert_int_equal(a[1], find(img, "mail.example.com."));
	a = p53_image_adds(img, rrset(img, "mixed.example.com.", LDNS_RR_TYPE_MX)->adds);
	assert_int_equal(a[0], 1);
	assert_int_equal(a[1], find(img, "mail.example.com."));
	/* SRV. */
	a = p53_image_adds(img, rrset(img, "_sip._tcp.example.com.", LDNS_RR_TYPE_SRV)->adds);
	assert_int_equal(a[0], 1);
	assert_int_equal(a[1], find(img, "ns1.example.com."));
	/* No list for types without targets. */
	assert_int_equal(rrset(img, "www.example.com.", LDNS_RR_TYPE_A)->adds, P53_NONE);
	free(img);
}

static void test_image_parent_child(void **state)
{
	struct warns w = { 0 };
	size_t len;
	void *img = build_example(&len, &w);
	const struct p53_image_node *child = node(img, "child.example.com."), *ps, *glue;
	const uint32_t *a;

	(void)state;
	/* The child's apex is the indexed node; the parent's cut stays behind parent_side. */
	assert_int_equal(child->zone, 1);
	assert_int_equal(child->flags, P53_NODE_APEX);
	assert_int_equal(find(img, "child.example.com."),
			 p53_image_zone(img, 1)->node_base + p53_image_zone(img, 1)->apex);
	assert_true(p53_image_node_parent_side(img, child) != P53_NONE);
	ps = p53_image_node(img, p53_image_node_parent_side(img, child));
	assert_int_equal(ps->zone, 0);
	assert_int_equal(ps->flags, P53_NODE_CUT);
	assert_int_equal(p53_image_node_parent_side(img, node(img, "example.com.")), P53_NONE);
	assert_int_equal(node(img, "ns1.child.example.com.")->zone, 1);
	/* Parent's referral glue comes from the parent's own (glue) node. */
	a = p53_image_adds(img, p53_image_node_rrset(img, ps, LDNS_RR_TYPE_NS) == P53_NONE ? 0 :
			   p53_image_rrset(img, p53_image_node_rrset(img, ps, LDNS_RR_TYPE_NS))->adds);
	assert_int_equal(P53_ADDS_COUNT(a[0]), 1);
	assert_int_equal(P53_ADDS_REQUIRED(a[0]), 1);
	glue = p53_image_node(img, a[1]);
	assert_int_equal(glue->zone, 0);
	assert_int_equal(glue->flags, P53_NODE_GLUE);
	assert_int_equal(glue->occluder, p53_image_node_parent_side(img, child));
	assert_int_not_equal(a[1], find(img, "ns1.child.example.com."));
	/* Parent glue the child does not hold is shadowed: the walk up finds the child apex,
	   which answers NXDOMAIN from the zone that is authoritative (RFC 1034 §4.3.2). */
	assert_int_equal(find(img, "extra.child.example.com."), P53_NONE);
	free(img);
}

/* Each zone's nodes are one range of nodes[], its apex first, and their RRsets one range of
 * rrsets[] in node order (image_build.c apex_make): what a zone's section will be. Zone 1
 * (child.example.com) lies inside zone 0, and zone 0 has glue and a cut at its apex's name. */
static void test_image_zone_ranges(void **state)
{
	struct warns w = { 0 };
	size_t len;
	void *img = build_example(&len, &w);
	const struct p53_image_hdr *h = img;
	uint32_t start[3] = { 0 }, rs_next = 0;

	(void)state;
	assert_int_equal(h->n_zones, 2);
	for (uint32_t i = 0, z = 0; i < h->n_nodes; i++) {
		if (p53_image_node_off(img, i) == 0)
			continue; /* room, below */
		const struct p53_image_node *nd = p53_image_node(img, i);
		assert_true(nd->zone >= z);
		const struct p53_image_zone *zn = p53_image_zone(img, nd->zone);
		if (i == 0 || nd->zone != z) {
			if (i > 0) /* after the zone before's ranges, its room */
				rs_next += p53_image_zone(img, z)->rrset_room;
			z = nd->zone;
			start[z] = i;
			/* its range starts here, with its apex (format 10: indices relative) */
			assert_int_equal(zn->node_base, i);
			assert_int_equal(zn->rrset_base, rs_next);
			assert_int_equal(zn->apex, 0);
		}
		assert_int_equal(zn->node_base + nd->self, i);
		if (nd->n_rrsets == 0)
			continue;
		assert_int_equal(zn->rrset_base + nd->rrsets, rs_next);
		rs_next = zn->rrset_base + nd->rrsets + nd->n_rrsets;
	}
	/* Room (image.h, node_room) after each zone's ranges, free (0), sized by
	 * p53_image_room(), and the last zone's ends the tables. */
	for (uint32_t z = 0; z < 2; z++) {
		const struct p53_image_zone *zn = p53_image_zone(img, z);
		assert_int_equal(zn->node_room, p53_image_room(zn->n_nodes));
		assert_int_equal(zn->rrset_room, p53_image_room(zn->n_rrsets));
		for (uint32_t k = 0; k < zn->node_room; k++)
			assert_int_equal(p53_image_node_off(img, zn->node_base + zn->n_nodes + k), 0);
	}
	rs_next += p53_image_zone(img, 1)->rrset_room;
	assert_int_equal(rs_next, h->n_rrsets);
	start[2] = h->n_nodes - p53_image_zone(img, 1)->node_room;
	assert_int_equal(p53_image_zone(img, 0)->n_nodes + p53_image_zone(img, 0)->node_room,
			 start[1] - start[0]);
	assert_int_equal(p53_image_zone(img, 1)->n_nodes, start[2] - start[1]);
	/* Both zones hold nodes beside their apex: the ranges are not the apexes alone. */
	assert_true(start[1] - start[0] > 1 && start[2] - start[1] > 1);
	assert_int_equal(node(img, "ns1.child.example.com.")->zone, 1);
	assert_true(find(img, "ns1.child.example.com.") >= start[1]);
	assert_true(find(img, "www.example.com.") < start[1]);
	free(img);
}

/* Node-major (image.h, "Co-location"): one names-and-RDATA section, each node's block
 * (4-byte aligned, where nodes[] and its name-index slot say) the node, its name, then each
 * RRset's header (4-byte aligned) and records; rrsets[] names the same headers that
 * p53_image_node_first() and p53_image_rrset_next() walk to from the node. */
static void test_image_node_major(void **state)
{
	struct warns w = { 0 };
	size_t len;

	(void)state;
	void *img = build_example(&len, &w);
	const struct p53_image_hdr *h = p53_image_hdr(img);
	const uint8_t *sec = (const uint8_t *)img + h->rdata_off;

	assert_int_equal(p53_image_check(img, len, NULL), 0);
	assert_int_equal(h->names_off, h->rdata_off);
	assert_int_equal(h->version, P53_IMAGE_VERSION);
	uint32_t with_rrsets = 0, padded = 0, rrsets = 0, indexed = 0;
	uint64_t spans = 0, names = 0;
	size_t end = 0;         /* where the block before ends */
	for (uint32_t i = 0; i < h->n_nodes; i++) {
		if (p53_image_node_off(img, i) == 0)
			continue; /* room (image.h, node_room) */
		const struct p53_image_node *n = p53_image_node(img, i);
		const struct p53_image_rrset *walk = p53_image_node_first(img, n);
		uint32_t off = p53_image_node_off(img, i);
		/* The block starts with its node, 4-byte aligned, after the block before it
		   (format 9), its name right after the node. */
		assert_int_equal(off % 4, 0);
		assert_true(off >= end && off >= P53_IMAGE_RDATA_HEAD);
		assert_ptr_equal(n, sec + off);
		assert_ptr_equal(p53_image_node_name(img, n), sec + off + sizeof(*n));
		assert_int_equal(p53_image_node_name_off(img, n), off + sizeof(*n));
		size_t at = off + sizeof(*n) + n->name_len;
		const struct p53_image_zone *zn = p53_image_zone(img, n->zone);
		/* its own index (format 8), relative to its zone's range (format 10) */
		assert_int_equal(zn->node_base + p53_image_node_index(img, n), i);
		names += n->name_len;
		/* Its name-index slot, when indexed, holds its block's offset (format 9). */
		uint32_t found = p53_image_find(img, p53_image_node_name(img, n), n->name_len,
						p53_name_hash(p53_image_node_name(img, n), n->name_len));
		if (found == i) {
			const uint64_t *sl = p53_image_slots(img);
			uint32_t hash = p53_name_hash(p53_image_node_name(img, n), n->name_len), k;
			for (k = hash & h->hash_mask; sl[k] != p53_image_slot(hash, off); k = (k + 1) & h->hash_mask)
				assert_true(sl[k] != 0);
			indexed++;
		}
		for (uint32_t r = 0; r < n->n_rrsets; r++) {
			const struct p53_image_rrset *rs = p53_image_zrrset(img, zn, n->rrsets + r);
			/* After the name or the RRset before it, 4-byte aligned, with zeroes between. */
			size_t want = (at + 3) & ~(size_t)3;
			assert_ptr_equal(rs, sec + want);
			assert_ptr_equal(walk, rs);
			for (size_t k = at; k < want; k++)
				assert_int_equal(sec[k], 0);
			assert_ptr_equal(p53_image_rdata(img, rs), (const uint8_t *)(rs + 1));
			at = want + sizeof(*rs) + rs->rdata_len + rs->sig_len;
			spans += sizeof(*rs) + rs->rdata_len + rs->sig_len;
			walk = p53_image_rrset_next(img, walk);
			rrsets++;
		}
		end = at;
		with_rrsets += n->n_rrsets > 0;
		/* Its node, name and first RRset's header and records cross no line they could
		   have stayed out of by skipping up to P53_IMAGE_PACK_PAD bytes. */
		size_t start = h->names_off + off, hot = sizeof(*n) + n->name_len;
		if (n->n_rrsets > 0) {
			const struct p53_image_rrset *rs0 = p53_image_node_first(img, n);
			hot = (size_t)((const uint8_t *)rs0 - (const uint8_t *)img) - start +
			      sizeof(*rs0) + rs0->rdata_len;
		}
		if (hot <= 64 && start / 64 != (start + hot - 1) / 64)
			assert_true(64 - start % 64 > P53_IMAGE_PACK_PAD);
		padded += start % 64 == 0;
		/* The zone's name is its apex node's. */
		if (n->flags & P53_NODE_APEX)
			assert_int_equal(p53_image_zone(img, n->zone)->name_off,
					 p53_image_node_name_off(img, n));
	}
	uint32_t live = 0; /* the zones' RRsets (the table holds room too) */
	for (uint32_t z = 0; z < h->n_zones; z++)
		live += p53_image_zone(img, z)->n_rrsets;
	assert_int_equal(rrsets, live); /* each RRset in one node's block */
	assert_true(with_rrsets > 10);
	assert_true(indexed > 10);
	/* The blocks hold nodes, names, headers and records, and at most 3 bytes of alignment
	 * per RRset and 3 + P53_IMAGE_PACK_PAD per node besides. */
	uint32_t n_nodes = 0; /* the zones' nodes */
	for (uint32_t z = 0; z < h->n_zones; z++)
		n_nodes += p53_image_zone(img, z)->n_nodes;
	uint64_t nodes = (uint64_t)n_nodes * sizeof(struct p53_image_node);
	assert_true(h->adds_off - h->rdata_off >= P53_IMAGE_RDATA_HEAD + nodes + names + spans);
	assert_true(h->adds_off - h->rdata_off <= P53_IMAGE_RDATA_HEAD + nodes + names + spans +
		    3u * live + (uint64_t)n_nodes * (3 + P53_IMAGE_PACK_PAD) + 8);
	print_message("node-major: %zu bytes; %u nodes start a line\n", len, padded);
	free(img);
}

static void test_image_rdata(void **state)
{
	static const uint8_t a_www[] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 0x0e, 0x10, 0, 4, 192, 0, 2, 3 };
	static const uint8_t unk[] = { 0xc0, 12, 0x03, 0xe8, 0, 1, 0, 0, 0x0e, 0x10, 0, 3, 0xab, 0xcd, 0xef };
	static const uint8_t ord[] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 0x0e, 0x10, 0, 4, 192, 0, 2, 10,
				       0xc0, 12, 0, 1, 0, 1, 0, 0, 0x0e, 0x10, 0, 4, 192, 0, 2, 20 };
	struct warns w = { 0 };
	size_t len;
	void *img = build_example(&len, &w);
	const struct p53_image_rrset *rs;

	(void)state;
	/* Owner written WWW.Example.COM., found lower-case; A 192.0.2.3 TTL 3600. */
	rs = rrset(img, "www.example.com.", LDNS_RR_TYPE_A);
	assert_int_equal(rs->count, 1);
	assert_int_equal(rs->ttl, 3600);
	assert_int_equal(rs->rdata_len, sizeof(a_www));
	assert_memory_equal(p53_image_rdata(img, rs), a_www, sizeof(a_www));
	assert_int_equal(rs->flags, 0);
	/* RFC 3597 unknown type. */
	rs = rrset(img, "unk.example.com.", 1000);
	assert_int_equal(rs->rdata_len, sizeof(unk));
	assert_memory_equal(p53_image_rdata(img, rs), unk, sizeof(unk));
	/* Canonical order (RFC 4034 §6.3), not file order. */
	rs = rrset(img, "order.example.com.", LDNS_RR_TYPE_A);
	assert_int_equal(rs->count, 2);
	assert_memory_equal(p53_image_rdata(img, rs), ord, sizeof(ord));
	/* Duplicates (also differing in owner case) collapse. */
	assert_int_equal(rrset(img, "dup.example.com.", LDNS_RR_TYPE_A)->count, 1);
	/* RDATA names keep the zone file's case. */
	rs = rrset(img, "mixed.example.com.", LDNS_RR_TYPE_MX);
	assert_true(contains(p53_image_rdata(img, rs), rs->rdata_len, "\4Mail\7Example\3COM", 17));
	rs = rrset(img, "svc.example.com.", LDNS_RR_TYPE_SVCB);
	assert_true(contains(p53_image_rdata(img, rs), rs->rdata_len, "\3svc\7Example\3com", 17));
	assert_int_equal(rs->flags, 0);
	/* The other modern types are there. */
	rs = rrset(img, "h.example.com.", LDNS_RR_TYPE_HTTPS);
	assert_true(contains(p53_image_rdata(img, rs), rs->rdata_len, "\2h2\2h3", 6));
	rs = rrset(img, "caa.example.com.", LDNS_RR_TYPE_CAA);
	assert_true(contains(p53_image_rdata(img, rs), rs->rdata_len, "issueletsencrypt.org", 20));
	rs = rrset(img, "_443._tcp.example.com.", 52 /* TLSA */);
	assert_int_equal(rs->rdata_len, 2 + 10 + 3 + 8);
	/* TTL mismatch: first TTL wins in every record, with a warning. */
	rs = rrset(img, "ttl.example.com.", LDNS_RR_TYPE_A);
	assert_int_equal(rs->ttl, 300);
	assert_int_equal(p53_image_rdata(img, rs)[12 + 2 + 4 + 7], 300 & 0xff);
	assert_true(warned(&w, "example.com.zone:39: TTL 600"));
	free(img);
}

static void test_image_include_and_out_of_zone(void **state)
{
	struct warns w = { 0 };
	size_t len;
	void *img = build_example(&len, &w);

	(void)state;
	assert_int_equal(rrset(img, "inc.example.com.", LDNS_RR_TYPE_A)->count, 1);
	assert_int_equal(rrset(img, "after.example.com.", LDNS_RR_TYPE_A)->count, 1);
	assert_int_equal(find(img, "out.example.org."), P53_NONE);
	assert_true(warned(&w, ZDIR "/example.com.zone:45: record 'out.example.org.' is out of "
			       "zone, ignored"));
	assert_int_equal(w.n, 3); /* and the TTL mismatch, the RRSIG covering nothing */
	free(img);
}

/* ------------------------------------------------------------ temp zones */

struct file {
	const char *name;
	const char *text;
};

static char tmpdir[64];

static void write_files(const struct file *f)
{
	char p[256];

	for (; f->name != NULL; f++) {
		FILE *o;
		snprintf(p, sizeof(p), "%s/%s", tmpdir, f->name);
		o = fopen(p, "w");
		assert_non_null(o);
		fputs(f->text, o);
		fclose(o);
	}
}

static void remove_files(const struct file *f)
{
	char p[256];

	for (; f->name != NULL; f++) {
		snprintf(p, sizeof(p), "%s/%s", tmpdir, f->name);
		unlink(p);
	}
}

static int setup_tmp(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/p53zoneXXXXXX");
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown_tmp(void **state)
{
	(void)state;
	return rmdir(tmpdir);
}

#define SOA "@ IN SOA ns hm 1 2 3 4 5\n@ IN NS ns\nns IN A 192.0.2.1\n"
#define SIG "@ IN RRSIG SOA 13 2 3600 20370101000000 20260101000000 1 example.com. AAAA\n"
#define H3  "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom" /* a base32hex SHA-1 label */

struct bad {
	const char *msg;        /* what the zone breaks */
	struct file files[3];   /* z.zone first */
	const char *where;      /* expected "file:line:" after the temp dir */
	const char *reason;     /* substring of the rest */
};

static const struct bad bad_zones[] = {
	{ "zone file missing", { { NULL } }, "z.zone:0:", "cannot open" },
	{ "syntax error in rdata", { { "z.zone", SOA "bad IN A 1.2.3\n" } }, "z.zone:4:",
	  "error" },
	{ "unknown type mnemonic", { { "z.zone", SOA "\nx IN FOOBAR 1\n" } }, "z.zone:5:",
	  "error" },
	{ "$INCLUDE of a missing file", { { "z.zone", SOA "$INCLUDE nothere.zone\n" } },
	  "z.zone:4:", "$INCLUDE 'nothere.zone': cannot open" },
	{ "syntax error inside an included file",
	  { { "z.zone", SOA "$INCLUDE inc.zone\n" }, { "inc.zone", "; c\nx IN A 300.1.1.1\n" } },
	  "inc.zone:2:", "error" },
	{ "$INCLUDE loop", { { "z.zone", SOA "$INCLUDE z.zone\n" } }, "z.zone:4:",
	  "nested more than" },
	{ "no SOA", { { "z.zone", "\n@ IN NS ns\nns IN A 192.0.2.1\n" } }, "z.zone:2:",
	  "no SOA record at the zone apex 'example.com.'" },
	{ "empty zone file", { { "z.zone", "" } }, "z.zone:1:", "no SOA" },
	{ "two SOAs at the apex",
	  { { "z.zone", SOA "; second one spans lines\n@ IN SOA ns hm (\n 2 2 3 4 5 )\n" } },
	  "z.zone:5:", "more than one SOA" },
	{ "SOA below the apex", { { "z.zone", SOA "sub IN SOA ns hm 1 2 3 4 5\n" } },
	  "z.zone:4:", "SOA record at 'sub.example.com.' is not at the zone apex" },
	{ "CNAME then other data", { { "z.zone", SOA "w IN CNAME ns\nw IN A 192.0.2.2\n" } },
	  "z.zone:5:", "CNAME beside other data (A) at 'w.example.com.'" },
	{ "other data then CNAME", { { "z.zone", SOA "w IN TXT x\nw IN CNAME ns\n" } },
	  "z.zone:5:", "CNAME beside other data (TXT)" },
	{ "CNAME at the apex", { { "z.zone", SOA "@ IN CNAME other.\n" } },
	  "z.zone:4:", "CNAME beside other data" },
	{ "two CNAMEs", { { "z.zone", SOA "w IN CNAME a\nw IN CNAME b\n" } }, "z.zone:5:",
	  "more than one CNAME record at 'w.example.com.'" },
	{ "data below a DNAME", { { "z.zone", SOA "d IN DNAME x.\nq.d IN A 192.0.2.3\n" } },
	  "z.zone:5:", "data at 'q.d.example.com.' below the DNAME at 'd.example.com.'" },
	{ "data far below a DNAME", { { "z.zone", SOA "d IN DNAME x.\nq.r.d IN TXT y\n" } },
	  "z.zone:5:", "below the DNAME at 'd.example.com.'" },
	{ "two DNAMEs", { { "z.zone", SOA "d IN DNAME x.\nd IN DNAME y.\n" } }, "z.zone:5:",
	  "more than one DNAME" },
	{ "NS beside DNAME below the apex", { { "z.zone", SOA "d IN DNAME x.\nd IN NS ns.x.\n" } },
	  "z.zone:4:", "NS beside DNAME at 'd.example.com.'" },
	{ "DNAME beside NS below the apex (NS first)",
	  { { "z.zone", SOA "d IN NS ns.x.\nd IN DNAME x.\n" } }, "z.zone:5:",
	  "NS beside DNAME at 'd.example.com.'" },
	{ "a name of an NSEC3 zone below the DNAME at its apex (its hashes are not)",
	  { { "z.zone", "@ IN SOA ns.x. hm 1 2 3 4 5\n@ IN DNAME x.\n@ IN NSEC3PARAM 1 0 0 -\n"
			"@ IN RRSIG SOA 13 2 3600 20370101000000 20260101000000 1 example.com. AAAA\n"
			H3 " IN NSEC3 1 0 0 - " H3 " A\nq IN A 192.0.2.3\n" } },
	  "z.zone:6:", "data at 'q.example.com.' below the DNAME at 'example.com.'" },
	{ "an NSEC3 owner two labels below a DNAME at the apex",
	  { { "z.zone", "@ IN SOA ns.x. hm 1 2 3 4 5\n@ IN DNAME x.\n@ IN NSEC3PARAM 1 0 0 -\n"
			"@ IN RRSIG SOA 13 2 3600 20370101000000 20260101000000 1 example.com. AAAA\n"
			"x." H3 " IN NSEC3 1 0 0 - " H3 " A\n" } },
	  "z.zone:5:", "below the DNAME at 'example.com.'" },
	{ "class CH", { { "z.zone", SOA "v CH TXT x\n" } }, "z.zone:4:", "class 3 not served" },
	/* DNSSEC (control/zone/dnssec_build.c); SIG makes the zone signed */
	{ "NSEC3 without NSEC3PARAM", { { "z.zone", SOA SIG H3 " IN NSEC3 1 0 0 - " H3 " A\n" } },
	  "z.zone:5:", "NSEC3 at '" H3 ".example.com.' but no NSEC3PARAM at the zone apex" },
	{ "two NSEC3PARAMs", { { "z.zone", SOA SIG "@ IN NSEC3PARAM 1 0 0 -\n@ IN NSEC3PARAM 1 0 1 ab\n" } },
	  "z.zone:6:", "more than one NSEC3PARAM at 'example.com.'" },
	{ "NSEC3PARAM with another hash than SHA-1", { { "z.zone", SOA SIG "@ IN NSEC3PARAM 2 0 0 -\n" } },
	  "z.zone:5:", "NSEC3PARAM hash algorithm 2 not supported" },
	{ "NSEC3 owner not base32hex",
	  { { "z.zone", SOA SIG "@ IN NSEC3PARAM 1 0 0 -\nzzz IN NSEC3 1 0 0 - " H3 " A\n" } },
	  "z.zone:6:", "NSEC3 owner 'zzz.example.com.' is not a base32hex SHA-1 hash" },
	{ "NSEC3 owner two labels below the apex",
	  { { "z.zone", SOA SIG "@ IN NSEC3PARAM 1 0 0 -\nx." H3 " IN NSEC3 1 0 0 - " H3 " A\n" } },
	  "z.zone:6:", "one label below the apex" },
	{ "NSEC3 of another chain than the NSEC3PARAM's",
	  { { "z.zone", SOA SIG "@ IN NSEC3PARAM 1 0 0 -\n" H3 " IN NSEC3 1 0 5 - " H3 " A\n" } },
	  "z.zone:6:", "another algorithm, iteration count or salt than the NSEC3PARAM" },
	{ "NSEC3 beside other data",
	  { { "z.zone", SOA SIG H3 " IN A 192.0.2.7\n" H3 " IN NSEC3 1 0 0 - " H3 " A\n" } },
	  "z.zone:5:", "A beside NSEC3 at '" H3 ".example.com.'" },
};

static void test_image_bad_zones(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_zones) / sizeof(bad_zones[0]); i++) {
		const struct bad *t = &bad_zones[i];
		char path[256], want[256], err[512];
		struct warns w = { 0 };
		struct p53_zone_src z = { .name = "example.com.", .file = path };
		size_t len = 0;
		void *img;

		snprintf(path, sizeof(path), "%s/z.zone", tmpdir);
		snprintf(want, sizeof(want), "%s/%s ", tmpdir, t->where);
		write_files(t->files);
		img = p53_image_build(&z, 1, &len, err, sizeof(err), collect, &w);
		remove_files(t->files);
		if (img != NULL) {
			free(img);
			fail_msg("accepted: %s", t->msg);
		}
		if (getenv("P53_TEST_VERBOSE") != NULL)
			print_message("%-40s %s\n", t->msg, err + strlen(tmpdir) + 1);
		if (strncmp(err, want, strlen(want)) != 0 || strstr(err, t->reason) == NULL)
			fail_msg("%s: got \"%s\", want \"%s...%s\"", t->msg, err, want, t->reason);
	}
}

/* What a signed zone cannot prove is served with a warning naming its line. */
static void test_image_dnssec_warnings(void **state)
{
	static const struct file f[] = {
		{ "z.zone", "@ IN SOA ns hm 1 2 3 4 5\n"
			    "@ IN RRSIG SOA 13 2 3600 20200101000000 20190101000000 1 example.com. AAAA\n"
			    "@ IN NS ns\n"
			    "@ IN NSEC ns NS SOA RRSIG NSEC\n"
			    "ns IN A 192.0.2.1\n"
			    "ns IN RRSIG AAAA 13 2 3600 20370101000000 20260101000000 1 example.com. AAAA\n" },
		{ NULL },
	};
	struct warns w = { 0 };
	char path[256], err[512], want[512];
	struct p53_zone_src z = { .name = "example.com.", .file = path };
	size_t len;
	void *img;

	(void)state;
	snprintf(path, sizeof(path), "%s/z.zone", tmpdir);
	write_files(f);
	img = p53_image_build(&z, 1, &len, err, sizeof(err), collect, &w);
	remove_files(f);
	assert_non_null(img);
	const char *expect[] = {
		"z.zone:6: RRSIG at 'ns.example.com.' covers AAAA, which 'ns.example.com.' does not "
		"have: kept as a record of that name (answered to RRSIG and ANY queries, sent in transfers)",
		"z.zone:1: zone 'example.com.' has RRSIGs but no DNSKEY at its apex",
		"z.zone:1: zone 'example.com.': a signature has already expired",
		"z.zone:3: NS at 'example.com.' has no RRSIG in a signed zone",
		"z.zone:5: A at 'ns.example.com.' has no RRSIG in a signed zone",
		"z.zone:5: no NSEC at 'ns.example.com.' in a signed zone",
	};
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		snprintf(want, sizeof(want), "%s/%s", tmpdir, expect[i]);
		if (!warned(&w, want)) {
			for (int k = 0; k < w.n; k++)
				print_message("warning: %s\n", w.msg[k]);
			fail_msg("missing warning: %s", expect[i]);
		}
	}
	assert_int_equal(p53_image_zone(img, 0)->dnssec, P53_ZONE_SIGNED | P53_ZONE_NSEC);
	assert_int_equal(p53_image_zone(img, 0)->sig_expire, 1577836800u); /* 2020-01-01 */
	/* Six records, the RRSIG that covers nothing kept as an RRset of its own: six in the
	 * image (its records read back compile to the same header; fuzz_xfr). */
	assert_int_equal(p53_image_hdr(img)->n_records, 6);
	free(img);
}

/*
 * A zone with RRSIGs but neither NSEC nor NSEC3 (signed without denial): compiled, with its
 * warning, into an image that p53_image_check accepts. fuzz_xfr found such a zone compiled
 * into an image the check refused (a signed zone and no proofs table: publish refused it,
 * so the zone was never served); tests/fuzz/fuzz_xfr.in/crash-signed-no-nsec.bin.
 */
static void test_image_signed_without_denial(void **state)
{
	static const struct file f[] = {
		{ "z.zone", "@ IN SOA ns hm 1 2 3 4 5\n"
			    "www IN A 192.0.2.10\n"
			    "www IN RRSIG A 13 3 3600 20371231000000 20260101000000 1 example.com. AAAA\n" },
		{ NULL },
	};
	struct warns w = { 0 };
	char path[256], err[512];
	struct p53_zone_src z = { .name = "example.com.", .file = path };
	const char *why = NULL;
	size_t len;

	(void)state;
	snprintf(path, sizeof(path), "%s/z.zone", tmpdir);
	write_files(f);
	void *img = p53_image_build(&z, 1, &len, err, sizeof(err), collect, &w);
	remove_files(f);
	assert_non_null(img);
	assert_true(warned(&w, "has RRSIGs but no DNSKEY at its apex"));
	if (p53_image_check(img, len, &why) != 0)
		fail_msg("p53_image_check: %s", why);
	assert_int_equal(p53_image_zone(img, 0)->dnssec, P53_ZONE_SIGNED);
	free(img);
}

/* The hash of example.com. (NSEC3, SHA-1, no salt, no extra iteration). */
#define H3_APEX "onib9mgub9h0rml3cdf5bgrj59dkjhvk"

/*
 * A DNAME at the apex of a zone signed with NSEC3 (RFC 6672 §2.3 allows one at the apex):
 * the NSEC3 owners below the apex are hashes, not names of the zone (RFC 5155 §7.1), so not
 * data below the DNAME (§2.4). The compiler refused such a zone (it counted them as data
 * below the DNAME): now it compiles, the apex flagged DNAME, the hashed owner flagged NSEC3
 * and occluded by nothing, as in any NSEC3 zone. A name of the zone below the DNAME is still
 * refused (bad_zones).
 */
static void test_image_nsec3_apex_dname(void **state)
{
	static const struct file f[] = {
		{ "z.zone", "@ IN SOA ns.example.net. hm 1 2 3 4 5\n"
			    "@ IN NS ns.example.net.\n"
			    "@ IN DNAME example.org.\n"
			    "@ IN NSEC3PARAM 1 0 0 -\n"
			    SIG
			    "@ IN RRSIG DNAME 13 2 3600 20370101000000 20260101000000 1 example.com. AAAA\n"
			    H3_APEX " IN NSEC3 1 0 0 - " H3_APEX " NS SOA RRSIG DNAME NSEC3PARAM\n"
			    H3_APEX " IN RRSIG NSEC3 13 3 3600 20370101000000 20260101000000 1 "
			    "example.com. AAAA\n" },
		{ NULL },
	};
	struct warns w = { 0 };
	char path[256], err[512];
	struct p53_zone_src z = { .name = "example.com.", .file = path };
	const char *why = NULL;
	size_t len;
	uint32_t hashed = P53_NONE;

	(void)state;
	snprintf(path, sizeof(path), "%s/z.zone", tmpdir);
	write_files(f);
	void *img = p53_image_build(&z, 1, &len, err, sizeof(err), collect, &w);
	remove_files(f);
	if (img == NULL)
		fail_msg("refused: %s", err);
	if (p53_image_check(img, len, &why) != 0)
		fail_msg("p53_image_check: %s", why);
	assert_true(p53_image_zone(img, 0)->dnssec & P53_ZONE_NSEC3);
	assert_true(node(img, "example.com.")->flags & P53_NODE_DNAME);
	assert_non_null(rrset(img, "example.com.", 39 /* DNAME */));
	for (uint32_t n = 0; n < p53_image_hdr(img)->n_nodes; n++)
		if (p53_image_node(img, n)->flags & P53_NODE_NSEC3)
			hashed = n;
	assert_int_not_equal(hashed, P53_NONE);
	assert_int_equal(p53_image_node(img, hashed)->occluder, P53_NONE);
	assert_int_equal(p53_image_node(img, hashed)->flags & (P53_NODE_GLUE | P53_NODE_DNAME), 0);
	free(img);
}

/* RFC 4035 does not bound RRSIGs per RRset; the image does (255, 64 KiB): said at the line. */
static void test_image_too_many_rrsigs(void **state)
{
	static char text[64 * 1024];
	struct file f[] = { { "z.zone", text }, { NULL } };
	char path[256], err[512], want[300];
	struct p53_zone_src z = { .name = "example.com.", .file = path };
	size_t len, o;

	(void)state;
	o = (size_t)snprintf(text, sizeof(text), "%s", SOA);
	for (int i = 0; i < 256; i++)   /* distinct key tags: 256 distinct records */
		o += (size_t)snprintf(text + o, sizeof(text) - o, "ns IN RRSIG A 13 3 3600 "
				      "20370101000000 20260101000000 %d example.com. AAAA\n", i);
	snprintf(path, sizeof(path), "%s/z.zone", tmpdir);
	write_files(f);
	assert_null(p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL));
	remove_files(f);
	snprintf(want, sizeof(want), "%s/z.zone:4: more than 255 RRSIGs (or 65535 bytes of them) "
		 "cover A at 'ns.example.com.'", tmpdir);
	assert_string_equal(err, want);
}

/* Regression: an $INCLUDE that ldns found after a line shorter than "$INCLUDE" (here an
 * opening parenthesis and comments, with NUL bytes) made the re-read step past that line's
 * end and read outside the buffer (tests/fuzz/fuzz_zone.c found it under ASAN; the input is
 * tests/fuzz/fuzz_zone.in/crash-include-token.zone). Now the directive's own line is found:
 * the zone is refused with a reason, and nothing is read out of bounds. */
static void test_image_include_after_short_line(void **state)
{
	static const uint8_t crash[] = {
		0x47, 0x7a, 0x2e, 0x4e, 0x20, 0x66, 0x02, 0x00, 0x00, 0x08, 0x43, 0x4c,
		0x55, 0x0a, 0x28, 0x3b, 0x55, 0x0a, 0x3b, 0x30, 0x0a, 0x24, 0x49, 0x4e,
		0x43, 0x4c, 0x55, 0x44, 0x45, 0x35, 0x20, 0x6e, 0x33, 0x41, 0x50, 0x4d,
		0x4e, 0x4e, 0x4e, 0x9d, 0x4e, 0x4e, 0x4e, 0x4e, 0x4e, 0x4e, 0x4e, 0x4e,
		0x74, 0x2a, 0x30, 0x4e, 0x24, 0x84, 0x84, 0x84, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x84, 0x84, 0x84, 0x84, 0x84, 0x84, 0x8c, 0x84, 0x84, 0x84,
		0x84, 0x84, 0x4f, 0x50, 0x49, 0x47, 0x49, 0x4e, 0x20, 0xbf, 0x6f, 0x49,
		0x0a,
	};
	char path[256], err[512];
	struct p53_zone_src z = { .name = "example.com.", .file = path };
	size_t len;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/z.zone", tmpdir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(crash, 1, sizeof(crash), f), sizeof(crash));
	fclose(f);
	assert_null(p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL));
	unlink(path);
	assert_true(strncmp(err, path, strlen(path)) == 0);
	/* And a well-formed one after comment and blank lines still includes its file. */
	static const struct file ok[] = {
		{ "z.zone", SOA "; comment\n\n$INCLUDE inc.zone\n" }, { "inc.zone", "x IN A 192.0.2.7\n" }, { NULL },
	};
	write_files(ok);
	void *img = p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL);
	remove_files(ok);
	assert_non_null(img);
	free(img);
}

/* Append one uncompressed wire record to buf at *n. */
static void wire_rr(uint8_t *buf, size_t *n, const char *owner, uint16_t type, const void *rd,
		    uint16_t rdlen)
{
	size_t ol = wire(owner, buf + *n);
	uint8_t *p = buf + *n + ol;

	p[0] = (uint8_t)(type >> 8);
	p[1] = (uint8_t)type;
	p[2] = 0;
	p[3] = 1;
	p[4] = p[5] = 0;
	p[6] = 1;
	p[7] = 0x2c;
	p[8] = (uint8_t)(rdlen >> 8);
	p[9] = (uint8_t)rdlen;
	memcpy(p + 10, rd, rdlen);
	*n += ol + 10 + rdlen;
}

/*
 * Records in memory (a transfer's) that ldns reads with fewer RDATA fields than their type
 * has: refused at the record, by the wire reader and by ldns alike. fuzz_xfr found a DNAME of
 * RDLENGTH 0 compiled into an image that p53_image_check refuses (tests/fuzz/fuzz_xfr.in/
 * crash-dname-empty.rrs); an MX cut after its preference is the same case.
 */
static void test_image_rrs_short_rdata(void **state)
{
	static const uint8_t soa[] = "\2ns\0\2hm\0\0\0\0\1\0\0\0\2\0\0\0\3\0\0\0\4\0\0\0\5";
	static const struct {
		uint16_t type;
		const char *rd;
		uint16_t rdlen;
		const char *err;
	} rows[] = {
		{ 39, "", 0, "xfr:3: DNAME record with 0 of its 1 RDATA fields" },
		{ 5, "", 0, "xfr:3: CNAME record with 0 of its 1 RDATA fields" },
		{ 15, "\0\12", 2, "xfr:3: MX record with 1 of its 2 RDATA fields" },
		{ 6, "\2ns\0", 4, "xfr:3: SOA record with 1 of its 7 RDATA fields" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		for (int l = 0; l < 2; l++) {
			uint8_t buf[512];
			size_t n = 0, len;
			char err[512] = "";
			wire_rr(buf, &n, "example.com.", 6, soa, sizeof(soa) - 1);
			wire_rr(buf, &n, "www.example.com.", 1, "\300\0\2\1", 4);
			wire_rr(buf, &n, "old.example.com.", rows[i].type, rows[i].rd, rows[i].rdlen);
			struct p53_zone_src z = { .name = "example.com.", .file = "xfr", .rrs = buf, .rrs_len = n };
			if (l)
				setenv("POP53_ZONE_SCANNER", "ldns", 1);
			void *img = p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL);
			unsetenv("POP53_ZONE_SCANNER");
			if (img != NULL || strcmp(err, rows[i].err) != 0)
				fail_msg("row %zu (%s): '%s', wanted '%s'", i, l ? "ldns" : "wire", err, rows[i].err);
		}
	}
}

static void test_image_zone_config_errors(void **state)
{
	struct p53_zone_src z[] = {
		{ .name = "example.com", .file = "/nonexistent/z", .cfg_file = "pop53.yaml",
		  .cfg_line = 7 },
	};
	struct p53_zone_src twice[] = {
		{ .name = "example.com", .file = ZDIR "/example.com.zone" },
		{ .name = "EXAMPLE.com.", .file = ZDIR "/example.com.zone", .cfg_file = "c.yaml",
		  .cfg_line = 9 },
	};
	char err[512];
	size_t len;

	(void)state;
	assert_null(p53_image_build(z, 1, &len, err, sizeof(err), NULL, NULL));
	assert_true(strncmp(err, "pop53.yaml:7: zone 'example.com': cannot open", 45) == 0);
	assert_null(p53_image_build(twice, 2, &len, err, sizeof(err), NULL, NULL));
	assert_string_equal(err, "c.yaml:9: zone 'EXAMPLE.com.' is defined twice");
}

static void test_image_include_origin(void **state)
{
	static const struct file f[] = {
		{ "z.zone", SOA "host IN A 192.0.2.9\n$INCLUDE sub/inc.zone o\n"
			    " IN AAAA 2001:db8::9\ny IN A 192.0.2.10\n" },
		{ "sub/inc.zone", "x IN A 192.0.2.11\n$ORIGIN elsewhere.example.com.\nq IN A 192.0.2.12" },
		{ NULL },
	};
	struct p53_zone_src z = { .name = "example.com." };
	char path[256], dir[256], err[512];
	struct warns w = { 0 };
	char **files = NULL, inc[300];
	size_t len, n_files = 0;
	void *img;

	(void)state;
	snprintf(path, sizeof(path), "%s/z.zone", tmpdir);
	snprintf(dir, sizeof(dir), "%s/sub", tmpdir);
	snprintf(inc, sizeof(inc), "%s/sub/inc.zone", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	z.file = path;
	write_files(f);
	img = p53_image_build_files(&z, 1, &len, err, sizeof(err), collect, &w, &files, &n_files);
	remove_files(f);
	rmdir(dir);
	if (img == NULL)
		fail_msg("%s", err);
	/* The origin argument applies inside the included file only (RFC 1035 §5.1), and the
	   includer's current owner comes back after it. */
	assert_int_equal(rrset(img, "x.o.example.com.", LDNS_RR_TYPE_A)->count, 1);
	assert_int_equal(rrset(img, "q.elsewhere.example.com.", LDNS_RR_TYPE_A)->count, 1);
	assert_int_equal(rrset(img, "host.example.com.", LDNS_RR_TYPE_AAAA)->count, 1);
	assert_int_equal(rrset(img, "y.example.com.", LDNS_RR_TYPE_A)->count, 1);
	assert_int_equal(node(img, "o.example.com.")->flags, P53_NODE_ENT);
	assert_int_equal(w.n, 0);
	/* Zone watching learns the included file from the compile (regression: it watched only
	 * the zone files the config names, so a change to an $INCLUDEd file went unseen). */
	assert_int_equal(n_files, 2);
	assert_string_equal(files[0], path);
	assert_string_equal(files[1], inc);
	p53_image_files_free(files, n_files);
	free(img);
}

/* Regression: a zone "file" that is a FIFO hung the compiler (and with `config check` over
 * the control socket, the daemon's control thread) in open(). */
static void test_image_fifo_refused(void **state)
{
	struct p53_zone_src z = { .name = "example.com." };
	char path[256], err[512];
	size_t len;

	(void)state;
	snprintf(path, sizeof(path), "%s/fifo.zone", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	z.file = path;
	assert_null(p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL));
	unlink(path);
	assert_non_null(strstr(err, "not a regular file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image_valid_and_indexed),
		cmocka_unit_test(test_image_apex_soa_and_zone),
		cmocka_unit_test(test_image_flags_links),
		cmocka_unit_test(test_image_adds),
		cmocka_unit_test(test_image_parent_child),
		cmocka_unit_test(test_image_rdata),
		cmocka_unit_test(test_image_node_major),
		cmocka_unit_test(test_image_zone_ranges),
		cmocka_unit_test(test_image_include_and_out_of_zone),
		cmocka_unit_test(test_image_bad_zones),
		cmocka_unit_test(test_image_zone_config_errors),
		cmocka_unit_test(test_image_dnssec_warnings),
		cmocka_unit_test(test_image_too_many_rrsigs),
		cmocka_unit_test(test_image_include_after_short_line),
		cmocka_unit_test(test_image_include_origin),
		cmocka_unit_test(test_image_fifo_refused),
		cmocka_unit_test(test_image_rrs_short_rdata),
		cmocka_unit_test(test_image_signed_without_denial),
		cmocka_unit_test(test_image_nsec3_apex_dname),
	};

	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
