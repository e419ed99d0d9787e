/*
 * p53_image_check (dataplane/image.c): workers read an image without bounds checks, so the
 * check must refuse every index that points outside it. A good image (the differential
 * zones, compiled by the real compiler) passes; then one table row per corruption, each on a
 * fresh copy, each saying what it breaks and the reason the check must give.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control/zone/image_build.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

static void *good;
static size_t good_len;

static struct p53_image_hdr *H(void *img)
{
	return img;
}

static struct p53_image_node *N(void *img, uint32_t i)
{
	return (struct p53_image_node *)p53_image_node(img, i);
}

static struct p53_image_rrset *R(void *img, uint32_t i)
{
	return (struct p53_image_rrset *)p53_image_rrset(img, i);
}

static struct p53_image_zone *Z(void *img, uint32_t i)
{
	return (struct p53_image_zone *)p53_image_zone(img, i);
}

/* Node of a dotted name ("www.diff.test"). */
static uint32_t node_of(const void *img, const char *txt)
{
	uint8_t w[P53_NAME_MAXLEN];
	size_t n = 0;

	for (const char *p = txt; *p != '\0';) {
		const char *dot = strchr(p, '.');
		size_t l = dot != NULL ? (size_t)(dot - p) : strlen(p);
		w[n++] = (uint8_t)l;
		memcpy(w + n, p, l);
		n += l;
		p += l + (dot != NULL);
	}
	w[n++] = 0;
	uint32_t i = p53_image_find(img, w, n, p53_name_hash(w, n));
	if (i == P53_NONE)
		fail_msg("%s not in the image", txt);
	return i;
}

static uint32_t rrset_of(const void *img, const char *txt, uint16_t type)
{
	uint32_t r = p53_image_node_rrset(img, p53_image_node(img, node_of(img, txt)), type);
	if (r == P53_NONE)
		fail_msg("%s has no type %u", txt, type);
	return r;
}

/* ---- corruptions ------------------------------------------------------------------- */

static size_t c_magic(void *m, size_t len) { H(m)->magic ^= 1; return len; }
static size_t c_version(void *m, size_t len) { H(m)->version++; return len; }
static size_t c_size(void *m, size_t len) { (void)m; return len - 8; }
static size_t c_mask(void *m, size_t len) { H(m)->hash_mask -= 1; return len; }
static size_t c_max_labels(void *m, size_t len) { H(m)->max_labels = 200; return len; }
static size_t c_nodes_off(void *m, size_t len) { H(m)->nodes_off = (uint32_t)len; return len; }
static size_t c_n_nodes(void *m, size_t len) { H(m)->n_nodes = 1u << 30; return len; }
static size_t c_order(void *m, size_t len) { H(m)->names_off = H(m)->rdata_off = H(m)->adds_off + 8; return len; }
static size_t c_apart(void *m, size_t len) { H(m)->names_off -= 8; return len; }
static size_t c_align(void *m, size_t len) { H(m)->rrsets_off += 4; return len; }
/* nodes[] entry of node i: its block's offset in the names-and-RDATA section (format 9). */
static uint32_t *NT(void *img, uint32_t i)
{
	return (uint32_t *)((uint8_t *)img + H(img)->nodes_off) + i;
}
static size_t c_node_past(void *m, size_t len)
{
	*NT(m, node_of(m, "www.diff.test")) = H(m)->adds_off - H(m)->rdata_off - 8;
	return len;
}
static size_t c_node_align(void *m, size_t len) { *NT(m, node_of(m, "www.diff.test")) += 2; return len; }
static size_t c_node_head(void *m, size_t len) { *NT(m, node_of(m, "www.diff.test")) = 4; return len; }
/* www's entry free (0: room, image.h node_room) inside its zone's range */
static size_t c_node_free(void *m, size_t len) { *NT(m, node_of(m, "www.diff.test")) = 0; return len; }
/* The zone's first room entry names www's block: a node where room must be free */
static size_t c_room_node(void *m, size_t len)
{
	const struct p53_image_zone *zn = p53_image_zone(m, 0);
	*NT(m, zn->node_base + zn->n_nodes) = *NT(m, node_of(m, "www.diff.test"));
	return len;
}
/* The zone's room claims one more entry than the table holds free */
static size_t c_room_more(void *m, size_t len)
{
	struct p53_image_zone *zn = (struct p53_image_zone *)((uint8_t *)m + H(m)->zones_off);
	zn->node_room--;
	return len;
}
/* www's entry names big's node (a valid one, whose own index is big's) */
static size_t c_node_other(void *m, size_t len)
{
	*NT(m, node_of(m, "www.diff.test")) = *NT(m, node_of(m, "big.diff.test"));
	return len;
}
static size_t c_name_len(void *m, size_t len) { N(m, node_of(m, "www.diff.test"))->name_len++; return len; }
static size_t c_name_labels(void *m, size_t len) { N(m, node_of(m, "www.diff.test"))->labels++; return len; }
static size_t c_deeper(void *m, size_t len) { H(m)->max_labels = 2; return len; }
static size_t c_node_zone(void *m, size_t len) { N(m, node_of(m, "www.diff.test"))->zone = H(m)->n_zones; return len; }
static size_t c_node_rrsets(void *m, size_t len)
{
	N(m, node_of(m, "www.diff.test"))->rrsets = H(m)->n_rrsets - 1;
	return len;
}
static size_t c_wildcard(void *m, size_t len) { N(m, node_of(m, "wild.diff.test"))->wildcard = H(m)->n_nodes; return len; }
static size_t c_occluder(void *m, size_t len) { N(m, node_of(m, "ns1.sub.diff.test"))->occluder = H(m)->n_nodes + 7; return len; }
static size_t c_parent_side(void *m, size_t len) { Z(m, 0)->parent_side = H(m)->n_nodes; return len; }
static size_t c_self(void *m, size_t len) { N(m, node_of(m, "www.diff.test"))->self = node_of(m, "big.diff.test"); return len; }
static size_t c_cname_flag(void *m, size_t len) { N(m, node_of(m, "www.diff.test"))->flags |= P53_NODE_CNAME; return len; }
/* rrsets[] entry of RRset i: its header's offset in the names-and-RDATA section. */
static uint32_t *T(void *img, uint32_t i)
{
	return (uint32_t *)((uint8_t *)img + H(img)->rrsets_off) + i;
}
static size_t c_rdata_off(void *m, size_t len)
{
	*T(m, rrset_of(m, "www.diff.test", P53_T_A)) = H(m)->adds_off - H(m)->rdata_off - 8;
	return len;
}
static size_t c_rrset_align(void *m, size_t len) { *T(m, rrset_of(m, "www.diff.test", P53_T_A)) += 2; return len; }
/* rrsets[] and the block disagree: www's A entry names big's A header (a valid one). */
static size_t c_block(void *m, size_t len)
{
	*T(m, rrset_of(m, "www.diff.test", P53_T_A)) = *T(m, rrset_of(m, "big.diff.test", P53_T_A));
	return len;
}
static size_t c_count(void *m, size_t len) { R(m, rrset_of(m, "big.diff.test", P53_T_A))->count++; return len; }
static size_t c_count0(void *m, size_t len) { R(m, rrset_of(m, "www.diff.test", P53_T_A))->count = 0; return len; }
static size_t c_rdata_len(void *m, size_t len) { R(m, rrset_of(m, "big.diff.test", P53_T_A))->rdata_len -= 1; return len; }
static size_t c_rdlength(void *m, size_t len)
{
	uint8_t *rd = (uint8_t *)p53_image_rdata(m, R(m, rrset_of(m, "www.diff.test", P53_T_A)));
	rd[P53_RR_OWNER_LEN + 9] = 200;   /* RDLENGTH of the first record */
	return len;
}
static size_t c_cname_target(void *m, size_t len)
{
	uint8_t *rd = (uint8_t *)p53_image_rdata(m, R(m, rrset_of(m, "chain1.diff.test", P53_T_CNAME)));
	rd[P53_RR_OWNER_LEN + 10] = 0x40; /* first label length: not a label */
	return len;
}
static size_t c_adds_index(void *m, size_t len)
{
	R(m, rrset_of(m, "diff.test", P53_T_MX))->adds = (uint32_t)((len - H(m)->adds_off) / 4);
	return len;
}
static size_t c_adds_count(void *m, size_t len)
{
	uint32_t *a = (uint32_t *)p53_image_adds(m, R(m, rrset_of(m, "diff.test", P53_T_MX))->adds);
	a[0] = 0xffff;
	return len;
}
static size_t c_adds_required(void *m, size_t len)
{
	uint32_t *a = (uint32_t *)p53_image_adds(m, R(m, rrset_of(m, "diff.test", P53_T_MX))->adds);
	a[0] |= 9u << 16;
	return len;
}
static size_t c_adds_node(void *m, size_t len)
{
	uint32_t *a = (uint32_t *)p53_image_adds(m, R(m, rrset_of(m, "diff.test", P53_T_NS))->adds);
	a[1] = H(m)->n_nodes;
	return len;
}
static size_t c_apex(void *m, size_t len) { Z(m, 0)->apex = H(m)->n_nodes; return len; }
static size_t c_apex_zone(void *m, size_t len) { Z(m, 0)->apex = node_of(m, "second.test"); return len; }
static size_t c_soa(void *m, size_t len) { Z(m, 0)->soa = H(m)->n_rrsets; return len; }
static size_t c_soa_type(void *m, size_t len) { Z(m, 0)->soa = rrset_of(m, "www.diff.test", P53_T_A); return len; }
static size_t c_zone_name(void *m, size_t len) { Z(m, 0)->name_len = 3; return len; }
/* Zone ranges (format 10): the good image's zone 0 (diff.test) lies before zone 1
 * (second.test) in nodes[] and rrsets[]; each corruption keeps nodes_at and rrsets_at
 * agreeing (p53_image_zones_place()) unless that is what it breaks. */
static size_t c_range_over(void *m, size_t len)
{
	Z(m, 0)->n_nodes += Z(m, 0)->node_room + 1;
	Z(m, 0)->node_room = 0;
	return len;
}
static size_t c_range_start(void *m, size_t len)
{
	Z(m, 1)->node_base--;
	Z(m, 1)->n_nodes++;
	p53_image_zones_place(m);
	return len;
}
static size_t c_range_past(void *m, size_t len) { Z(m, 1)->n_nodes = H(m)->n_nodes; return len; }
static size_t c_range_at(void *m, size_t len) { Z(m, 0)->nodes_at += 4; return len; }
static size_t c_rrsets_at(void *m, size_t len) { Z(m, 1)->rrsets_at -= 4; return len; }
static size_t c_node_in_other(void *m, size_t len) { N(m, node_of(m, "www.diff.test"))->zone = 1; return len; }
static size_t c_link_other(void *m, size_t len)
{
	N(m, node_of(m, "wild.diff.test"))->wildcard = node_of(m, "second.test");
	return len;
}
static size_t c_rrset_over(void *m, size_t len)
{
	Z(m, 0)->n_rrsets += Z(m, 0)->rrset_room + 1;
	Z(m, 0)->rrset_room = 0;
	return len;
}
static size_t c_rrset_out(void *m, size_t len) { Z(m, 0)->n_rrsets--; return len; }
/* zone 0's apex just past its range: zone 1's first node, in the image */
static size_t c_apex_out(void *m, size_t len) { Z(m, 0)->apex = Z(m, 0)->n_nodes; return len; }

/* A slot's low half: past the section, inside a block but not at its node, misaligned. */
static size_t slot_to(void *m, size_t len, uint32_t off)
{
	uint64_t *s = (uint64_t *)p53_image_slots(m);
	for (uint32_t i = 0; i <= H(m)->hash_mask; i++)
		if (s[i] != 0) {
			s[i] = (s[i] & ~0xffffffffull) | off;
			break;
		}
	return len;
}
static size_t c_slot(void *m, size_t len) { return slot_to(m, len, H(m)->adds_off - H(m)->rdata_off); }
static size_t c_slot_inside(void *m, size_t len)
{
	return slot_to(m, len, *NT(m, node_of(m, "www.diff.test")) + 28);
}
static size_t c_slot_align(void *m, size_t len)
{
	return slot_to(m, len, *NT(m, node_of(m, "www.diff.test")) + 1);
}
static size_t c_slots_full(void *m, size_t len)
{
	uint64_t *s = (uint64_t *)p53_image_slots(m), used = 0;
	for (uint32_t i = 0; i <= H(m)->hash_mask && used == 0; i++)
		used = s[i];
	for (uint32_t i = 0; i <= H(m)->hash_mask; i++)
		if (s[i] == 0)
			s[i] = used;    /* a node's slot again: each names a node */
	return len;
}

struct row {
	const char *what;
	size_t (*corrupt)(void *img, size_t len);
	const char *why;        /* a word of the reason the check must give */
};

static const struct row rows[] = {
	{ "bad magic", c_magic, "magic" },
	{ "another format version", c_version, "version" },
	{ "image shorter than its header says", c_size, "size" },
	{ "name index size not a power of two", c_mask, "power of two" },
	{ "deepest name over 127 labels", c_max_labels, "127" },
	{ "node array starts past the end", c_nodes_off, "past the image" },
	{ "node count larger than the image", c_n_nodes, "past the image" },
	{ "RDATA section after the additional lists", c_order, "order" },
	{ "names apart from the nodes' blocks (the layout before)", c_apart, "older layout" },
	{ "RRset array misaligned", c_align, "misaligned" },
	{ "node table entry past the names section", c_node_past, "node lies outside" },
	{ "node table entry misaligned", c_node_align, "misaligned" },
	{ "node table entry in the section's unused head", c_node_head, "node lies outside" },
	{ "node table entry free inside a zone's range", c_node_free, "range holds a free entry" },
	{ "a zone's room holds a node", c_room_node, "room holds a node" },
	{ "a free entry outside every zone's room", c_room_more, "outside the zones' room" },
	{ "node table entry names another node's block", c_node_other, "own index" },
	{ "node name length one too long", c_name_len, "node's name" },
	{ "node label count wrong", c_name_labels, "node's name" },
	{ "node deeper than the header's deepest", c_deeper, "node's name" },
	{ "node in a zone that does not exist", c_node_zone, "zone that does not exist" },
	{ "node's RRsets run past the RRset array", c_node_rrsets, "RRset range" },
	{ "wildcard link past the nodes", c_wildcard, "links to a node" },
	{ "occluder link past the nodes", c_occluder, "links to a node" },
	{ "node's own index names another node", c_self, "own index" },
	{ "CNAME flag without a CNAME RRset", c_cname_flag, "CNAME node" },
	{ "RRset header outside the RDATA section", c_rdata_off, "outside the RDATA" },
	{ "RRset header misaligned", c_rrset_align, "misaligned" },
	{ "RRset table names a header outside its node's block", c_block, "block" },
	{ "RRset count one more than its records", c_count, "fewer records" },
	{ "RRset with no records", c_count0, "outside the RDATA" },
	{ "RRset RDATA range one byte short", c_rdata_len, "runs past its RRset" },
	{ "record RDLENGTH past its RRset", c_rdlength, "runs past its RRset" },
	{ "CNAME target is not a name", c_cname_target, "not a name" },
	{ "additional list index past the section", c_adds_index, "additional list" },
	{ "additional list count past the section", c_adds_count, "additional list" },
	{ "additional list requires more than it holds", c_adds_required, "additional list" },
	{ "additional list names a node that does not exist", c_adds_node, "node that does not exist" },
	{ "zone apex past the nodes", c_apex, "apex" },
	{ "zone apex is another zone's node", c_apex_zone, "apex" },
	{ "zone SOA past the RRsets", c_soa, "SOA" },
	{ "zone SOA is an A RRset", c_soa_type, "SOA" },
	{ "zone name length wrong", c_zone_name, "zone's name" },
	{ "zone's parent side past the nodes", c_parent_side, "parent side" },
	{ "zone 0's node range over its room, one into zone 1's", c_range_over, "range holds a free entry" },
	{ "zone 1's node range starts at zone 0's last node", c_range_start, "own index" },
	{ "zone 1's node range runs past nodes[]", c_range_past, "outside its table" },
	{ "zone 0's nodes_at not its range's offset", c_range_at, "offsets" },
	{ "zone 1's rrsets_at not its range's offset", c_rrsets_at, "offsets" },
	{ "a node in zone 0's range says zone 1", c_node_in_other, "another zone's node" },
	{ "a wildcard link to another zone's node", c_link_other, "outside its zone's range" },
	{ "zone 0's RRset range over its room, one into zone 1's", c_rrset_over, "RRset ranges overlap" },
	{ "a node's RRsets past its zone's RRset range", c_rrset_out, "outside its zone's RRset range" },
	{ "zone 0's apex past its node range", c_apex_out, "apex" },
	{ "name index slot points past the names section", c_slot, "slot" },
	{ "name index slot points into a block, not at its node", c_slot_inside, "slot" },
	{ "name index slot misaligned", c_slot_align, "slot" },
	{ "name index without an empty slot (a miss would probe for ever)", c_slots_full, "empty slot" },
};

static void test_good_image_passes(void **state)
{
	const char *why = NULL;
	(void)state;

	assert_int_equal(p53_image_check(good, good_len, &why), 0);
	assert_null(why);
}

/* Regression: p53_image_check only checked where sections start, so a corrupt index inside
 * them reached workers that read without bounds checks. */
static void test_corrupt_images_refused(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		void *m = malloc(good_len);
		const char *why = NULL;

		memcpy(m, good, good_len);
		size_t len = rows[i].corrupt(m, good_len);
		int rc = p53_image_check(m, len, &why);
		if (rc != -22 /* EINVAL */)
			fail_msg("row %zu \"%s\": accepted", i, rows[i].what);
		if (why == NULL || strstr(why, rows[i].why) == NULL)
			fail_msg("row %zu \"%s\": reason '%s', want '%s'", i, rows[i].what,
				 why ? why : "(none)", rows[i].why);
		free(m);
	}
}

/* Every truncation of the image is refused (the size no longer matches), never read past. */
static void test_truncations_refused(void **state)
{
	(void)state;
	for (size_t len = 0; len < good_len; len += 8) {
		void *m = malloc(len ? len : 1);
		memcpy(m, good, len);
		assert_int_not_equal(p53_image_check(m, len, NULL), 0);
		free(m);
	}
}

static int setup(void **state)
{
	char f1[512], f2[512], err[512];
	(void)state;

	snprintf(f1, sizeof(f1), "%s/tests/differential/zones/diff.test.zone", P53_SRCDIR);
	snprintf(f2, sizeof(f2), "%s/tests/differential/zones/second.test.zone", P53_SRCDIR);
	struct p53_zone_src z[2] = {{.name = "diff.test.", .file = f1}, {.name = "second.test.", .file = f2}};
	good = p53_image_build(z, 2, &good_len, err, sizeof(err), NULL, NULL);
	if (good == NULL)
		fprintf(stderr, "compile: %s\n", err);
	return good == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	free(good);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_image_passes),
		cmocka_unit_test(test_corrupt_images_refused),
		cmocka_unit_test(test_truncations_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
