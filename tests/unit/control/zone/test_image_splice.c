/*
 * The splice (control/zone/image_splice.c): one zone compiled alone replacing that zone in an
 * image of several. For zone sets of independent zones (unsigned, NSEC- and NSEC3-signed, a
 * steered owner, a 10k-record generated zone beside them), one zone's content is replaced by
 * random new content again and again (records dropped and changed, names, cuts, DNAMEs at
 * cuts, wildcards, aliases added: what the patch declines too), each time spliced into the
 * image the step before left (spliced, or patched where the patch takes it:
 * p53_zone_repatch), and that image must pass the check, the publish's check from its source,
 * and answer every name of the old and new content, names below and beside them, each type,
 * with and without DO, byte for byte as a full compile of every zone's new content does,
 * through the general responder and through the fast path where it answers. Zones naming
 * each other's names (additional lists across zones) are spliced as the rest; nested zones
 * must decline.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/bigmem.h"
#include "control/xfr/rrs.h"
#include "control/zone/image_build.h"
#include "control/zone/image_patch.h"
#include "control/zone/patch_index.h"
#include "control/zone/image_splice.h"
#include "control/zone/zone_repatch.h"
#include "dataplane/answer.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/fastpath.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#include "image_compare.h"

static const char *ZONE_A =
	"$ORIGIN a.test.\n$TTL 300\n"
	"@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n"
	"@ NS ns1\n@ MX 10 mail\n@ A 192.0.2.1\nns1 A 192.0.2.53\nmail A 192.0.2.25\n"
	"www A 192.0.2.80\nwww AAAA 2001:db8::80\nalias CNAME www\n*.wild A 192.0.2.99\n"
	"sub NS ns.sub\nns.sub A 192.0.2.54\nsvc SRV 0 0 443 www\nx.y.ent TXT \"e\"\n"
	/* Additional lists across zones: names of b.example. */
	"@ NS ns.b.example.\next MX 5 host.b.example.\next MX 9 www\n";

static const char *ZONE_B =
	"$ORIGIN b.example.\n$TTL 600\n"
	"@ SOA ns hostmaster 9 7200 3600 1209600 60\n@ NS ns\nns A 198.51.100.1\n"
	"host A 198.51.100.3\nmx MX 1 host\ndn DNAME elsewhere.example.\n"
	/* ... and of a.test. */
	"ext MX 5 www.a.test.\next MX 7 mail.a.test.\next MX 8 host\nsrv SRV 0 0 53 ns1.a.test.\n";

/* Zones nested, which the splice must decline, and a zone naming another's names. */
static const char *ZONE_PARENT =
	"$ORIGIN parent.test.\n$TTL 300\n"
	"@ SOA ns hostmaster 7 7200 3600 1209600 60\n@ NS ns\nns A 198.51.100.1\n"
	"child NS ns.child\nns.child A 198.51.100.2\n";
static const char *ZONE_CHILD =
	"$ORIGIN child.parent.test.\n$TTL 300\n"
	"@ SOA ns hostmaster 3 7200 3600 1209600 60\n@ NS ns\nns A 198.51.100.2\n";
static const char *ZONE_NAMES_A =
	"$ORIGIN other.test.\n$TTL 300\n"
	"@ SOA ns hostmaster 1 7200 3600 1209600 60\n@ NS ns1.a.test.\n@ MX 5 mail.a.test.\n";

static void zone_rrs(const void *img, uint32_t z, struct p53_rrs *out)
{
	struct p53_rrs **want = calloc(p53_image_hdr(img)->n_zones, sizeof(*want));

	assert_non_null(want);
	want[z] = out;
	assert_int_equal(p53_image_zones_rrs(img, want), 0);
	free(want);
}

/* name = label(s) in text + "." + the apex (wire). */
static size_t below_apex(const char *labels, const uint8_t *apex, size_t al, uint8_t *out)
{
	char txt[300];
	size_t o = 0;

	snprintf(txt, sizeof(txt), "%s.", labels);
	o = wname(txt, out) - 1;
	memcpy(out + o, apex, al);
	return o + al;
}

static const char *const LABELS[] = { "www", "ns1", "mail", "sub", "new", "n2", "deep.x", "x",
				       "*.wild", "w2", "alias", "dn", "host", "mx", "z.sub",
				       "ns.sub", "a.b.c", "c" };
#define N_LABELS (sizeof(LABELS) / sizeof(LABELS[0]))

/*
 * Random new content for a zone from its old records: some dropped, some A records
 * changed, the SOA's serial up, and a few records added at names of LABELS: addresses, text,
 * MX and SRV naming the zone's names, NS (a cut, glue below it), DNAME (at a cut's owner
 * too), CNAME, NSEC3PARAM with another salt, a made-up RRSIG. Some make a zone the compiler
 * rejects (a CNAME beside data): the caller skips those.
 */
static void new_content(const struct p53_rrs *old, const uint8_t *apex, size_t al, bool sgn,
			bool minimal, struct p53_rrs *out)
{
	struct p53_rr_view v;
	size_t pos = 0;
	uint8_t rd[600], nm[300], t[300];

	while (p53_rrs_next(old, &pos, &v) == 1) {
		bool at_apex = v.owner_len == al && memcmp(v.owner, apex, al) == 0;
		if (v.type == P53_T_SOA) {
			memcpy(rd, v.rdata, v.rdlen);
			size_t s = v.rdlen - 20;
			p53_put32(rd + s, ((uint32_t)p53_get16(rd + s) << 16 | p53_get16(rd + s + 2)) + 1);
			assert_int_equal(p53_rrs_add(out, v.owner, v.owner_len, v.type, v.cls, v.ttl,
						     rd, v.rdlen), 0);
			continue;
		}
		if (!minimal && !at_apex && rnd(100) < 12)
			continue;
		memcpy(rd, v.rdata, v.rdlen);
		if (v.type == P53_T_A && rnd(100) < 10)
			rd[3] = (uint8_t)rnd(256);
		if (v.type == 51 && rnd(100) < 30 && v.rdlen >= 5) /* NSEC3PARAM: another salt */
			rd[v.rdlen - 1] ^= 0x5a;
		assert_int_equal(p53_rrs_add(out, v.owner, v.owner_len, v.type, v.cls, v.ttl, rd,
					     v.rdlen), 0);
	}
	for (uint32_t k = minimal ? 0 : rnd(6); k > 0; k--) {
		size_t nl = below_apex(LABELS[rnd(N_LABELS)], apex, al, nm);
		size_t tl = below_apex(LABELS[rnd(N_LABELS)], apex, al, t);
		uint16_t type;
		size_t rl = 0;
		switch (rnd(sgn ? 11 : 10)) {
		case 0: case 1:
			type = P53_T_A;
			rd[0] = 192; rd[1] = 0; rd[2] = 2; rd[3] = (uint8_t)rnd(256);
			rl = 4;
			break;
		case 2:
			type = P53_T_AAAA;
			memset(rd, 0, 16);
			rd[0] = 0x20; rd[1] = 0x01; rd[15] = (uint8_t)rnd(256);
			rl = 16;
			break;
		case 3:
			type = P53_T_TXT;
			rd[0] = 3; memcpy(rd + 1, "new", 3);
			rl = 4;
			break;
		case 4:
			type = P53_T_MX;
			rd[0] = 0; rd[1] = (uint8_t)rnd(50);
			memcpy(rd + 2, t, tl);
			rl = 2 + tl;
			break;
		case 5:
			type = 33; /* SRV */
			memset(rd, 0, 6);
			rd[5] = 53;
			memcpy(rd + 6, t, tl);
			rl = 6 + tl;
			break;
		case 6: /* a cut, its glue below it */
			type = P53_T_NS;
			tl = below_apex("ns", nm, nl, t);
			memcpy(rd, t, tl);
			rl = tl;
			if (nl > al) {
				uint8_t a4[4] = { 192, 0, 2, (uint8_t)rnd(256) };
				assert_int_equal(p53_rrs_add(out, t, tl, P53_T_A, 1, 300, a4, 4), 0);
			}
			break;
		case 7: /* DNAME, at a cut's owner too */
			type = 39;
			rl = wname("target.example.", rd);
			break;
		case 8:
			type = P53_T_CNAME;
			memcpy(rd, t, tl);
			rl = tl;
			break;
		case 9:
			type = 65; /* HTTPS: priority, target, no parameters */
			rd[0] = 0; rd[1] = 1;
			memcpy(rd + 2, t, tl);
			rl = 2 + tl;
			break;
		default: /* a made-up RRSIG over the owner's A */
			type = 46;
			memset(rd, 0, 18);
			p53_put16(rd, P53_T_A);
			rd[2] = 13;
			p53_put32(rd + 8, 2000000000u);
			p53_put32(rd + 12, 1700000000u);
			memcpy(rd + 18, apex, al);
			memset(rd + 18 + al, 0x42, 64);
			rl = 18 + al + 64;
			break;
		}
		if (nl > 255 || (type == P53_T_NS && nl == al))
			continue;
		assert_int_equal(p53_rrs_add(out, nm, nl, type, 1, 300, rd, rl), 0);
	}
}

/* The publish's check of an image made from `img` (control/publish.c): the same verdict
 * from its source, and the same RRset sums as made from scratch. */
static void published_from(const void *img, const void *ni, size_t len)
{
	const char *bad = NULL;

	if (p53_image_check(ni, len, &bad) != 0)
		fail_msg("the spliced image fails the check: %s", bad);
	(void)checked_from(img, ni, len);
}

/* The fast path's answers from the spliced image, where it answers, are the full compile's
 * general answers. */
static void same_fast(const void *ni, const void *fresh, const struct names *s)
{
	static uint8_t qa[4096], qb[4096];
	size_t fast = 0;

	for (size_t i = 0; i < s->count; i++)
		for (size_t t = 0; t < N_PLAIN; t++) {
			int edns = (int)((i + t) % 3);
			uint16_t lb = ask(fresh, s->n[i], s->len[i], QTYPES[t], edns, qb, sizeof(qb));
			uint16_t ql = query_make(qa, s->n[i], s->len[i], QTYPES[t], edns);
			struct p53_query q;
			struct p53_answer_stats st = { 0 };
			if (p53_msg_parse(qa, ql, &q) != P53_MSG_OK)
				continue;
			uint16_t la = p53_fast_answer(ni, &ask_conf, qa, sizeof(qa), &st, &q);
			if (la == 0)
				continue;
			fast++;
			if (la != lb || memcmp(qa, qb, la) != 0)
				fail_msg("the fast path of the spliced image answers %u bytes, the "
					 "full compile %u (or other bytes), question %zu type %u",
					 la, lb, i, QTYPES[t]);
		}
	assert_true(fast > 0);
}

struct outcome {
	int spliced, patched, declined, invalid;
	int index_patched;              /* patches made with the index the splice handed on */
};

/*
 * The patch index the splice hands on (p53_patch_index_spliced, from an index of img)
 * describes spliced image ni as one made from ni does: each target its records name lists
 * the node, each signed zone's earliest RRSIG is the same; and the next patch of zone z (new
 * content as chain() makes it) made with it gives the bytes, generation aside, or the
 * refusal of the patch made without one.
 */
static void index_handed(void *img, void *ni, uint32_t z, const uint8_t *apex, size_t al,
			 bool sgn, struct outcome *o)
{
	struct p53_patch_index *ix = p53_patch_index_new(), *fresh = p53_patch_index_new();
	struct p53_image_hdr *h = img, *nh = ni;
	const uint64_t g = h->generation, ng = nh->generation;
	char err[512], w1[512], w2[512];
	uint32_t *list = NULL;
	size_t n_list = 0, cap = 0;

	assert_non_null(ix);
	assert_non_null(fresh);
	h->generation = 77; /* as the publish gives one */
	assert_int_equal(p53_patch_index_build(ix, img), 0);
	assert_int_equal(p53_patch_index_spliced(ix, img, ni, z), 0);
	h->generation = g;
	assert_true(nh->generation >> 63); /* the index's token */
	assert_int_equal(p53_patch_index_build(fresh, ni), 0);
	/* Every zone's nodes (its range, image.h; the entries outside every range are garbage). */
	for (uint32_t n = 0; n < nh->n_nodes; n++) {
		const struct p53_image_node *nd = p53_image_node(ni, n);
		const struct p53_image_zone *zn = p53_image_zone(ni, nd->zone);
		if (n - zn->node_base >= zn->n_nodes)
			continue;
		for (uint32_t r = nd->rrsets; r < (uint32_t)nd->rrsets + nd->n_rrsets; r++) {
			const struct p53_image_rrset *rs = p53_image_zrrset(ni, zn, r);
			const int skip = p53_target_skip(rs->type);
			const uint8_t *rd = p53_image_rdata(ni, rs), *t;
			size_t tl;
			for (uint32_t k = 0; skip >= 0 && k < rs->count; k++) {
				rd = p53_target_rr(rd, skip, &t, &tl);
				if (tl == 0)
					continue;
				n_list = 0;
				assert_int_equal(p53_patch_index_targets_find(ix, t, tl, &list, &n_list,
									      &cap), 0);
				bool found = false;
				for (size_t q = 0; q < n_list && !found; q++)
					found = list[q] == n;
				if (!found)
					fail_msg("node %u names a target the handed index does not list", n);
			}
		}
	}
	for (uint32_t k = 0; k < nh->n_zones; k++) {
		assert_int_equal(p53_patch_index_has_sigs(ix, k), p53_patch_index_has_sigs(fresh, k));
		assert_true(p53_patch_index_sigs_min(ix, k, 1800000000) ==
			    p53_patch_index_sigs_min(fresh, k, 1800000000));
	}
	/* The next patch, with the index and without (the chain's random source left as it
	 * was, so that the chain's steps stay those of its seed). */
	const uint64_t saved = rng;
	struct p53_rrs cur = { 0 }, next = { 0 };
	struct p53_ixfr d = { 0 };
	zone_rrs(ni, z, &cur);
	new_content(&cur, apex, al, sgn, false, &next);
	rng = saved;
	if (p53_rrs_diff(&cur, &next, &d, err, sizeof(err)) > 0) {
		size_t l1 = 0, l2 = 0;
		void *a = p53_image_patch_indexed(ni, apex, al, &d, NULL, NULL, NULL, ix, &l1, w1,
						  sizeof(w1));
		void *b = p53_image_patch(ni, apex, al, &d, NULL, NULL, NULL, &l2, w2, sizeof(w2));
		if (b == NULL) {
			assert_null(a);
			assert_string_equal(w1, w2);
		} else {
			assert_non_null(a);
			assert_int_equal(l1, l2);
			((struct p53_image_hdr *)a)->generation = 0;
			assert_memory_equal(a, b, l2);
			o->index_patched++;
		}
		free(a);
		free(b);
	}
	nh->generation = ng;
	p53_ixfr_free(&d);
	p53_rrs_free(&cur);
	p53_rrs_free(&next);
	free(list);
	p53_patch_index_free(ix);
	p53_patch_index_free(fresh);
}

/*
 * `steps` times: zone z of the image gets new content (from `next`, when not NULL, once,
 * else new_content()), spliced in (or, every other step, through p53_zone_repatch: patched
 * where the patch takes it, spliced where not, as pop53d does), and compared with the full
 * compile. A decline fails unless `declines` (then every step must decline).
 */
static void chain(const struct p53_zone_src *srcs, size_t n_src, uint32_t z, int steps,
		  const struct p53_rrs *next, bool declines, struct outcome *o)
{
	char err[1024], why[512];
	size_t len = 0;
	void *img = p53_image_build(srcs, n_src, &len, err, sizeof(err), quiet, NULL);
	struct p53_rrs *now = calloc(n_src, sizeof(*now));

	if (img == NULL)
		fail_msg("the zone set does not compile: %s", err);
	assert_non_null(now);
	const struct p53_image_zone *iz = p53_image_zone(img, z);
	uint8_t apex[256];
	size_t al = iz->name_len;
	memcpy(apex, p53_image_name(img, iz->name_off), al);
	bool sgn = iz->dnssec != 0;
	for (int i = 0; i < steps; i++) {
		struct p53_zone_src *s2 = calloc(n_src, sizeof(*s2));
		assert_non_null(s2);
		memcpy(s2, srcs, n_src * sizeof(*s2));
		for (size_t k = 0; k < n_src; k++) {
			p53_rrs_free(&now[k]);
			struct p53_rrs cur = { 0 };
			zone_rrs(img, (uint32_t)k, &cur);
			if (k == z && next != NULL)
				assert_int_equal(p53_rrs_append(&now[k], next), 0);
			else if (k == z)
				/* A zone tied to another: the SOA's serial alone (the splice
				 * declines whatever the content). */
				new_content(&cur, apex, al, sgn, declines, &now[k]);
			else
				p53_rrs_move(&now[k], &cur);
			p53_rrs_free(&cur);
			s2[k].rrs = now[k].buf;
			s2[k].rrs_len = now[k].len;
			s2[k].file = "(test)";
		}
		size_t flen = 0, slen = 0;
		void *fresh = p53_image_build(s2, n_src, &flen, err, sizeof(err), quiet, NULL);
		void *one = p53_image_build(&s2[z], 1, &slen, err, sizeof(err), quiet, NULL);
		if (fresh == NULL) {
			/* What the zone alone rejects, the full compile rejects too. */
			o->invalid++;
			free(one);
			free(s2);
			continue;
		}
		assert_non_null(one);
		/* Written into a spare full of other bytes (none of them may show). */
		void *spare = p53_bigmem_image(4096 + (size_t)rnd(65536));
		assert_non_null(spare);
		memset(spare, 0x5a, malloc_usable_size(spare));
		void *ni = NULL;
		size_t nlen = 0;
		enum p53_repatch rc = P53_REPATCH_SPLICED;
		if ((i & 1) && !declines) {
			free(one);
			rc = p53_zone_repatch(img, &s2[z], true, spare, &ni, &nlen, NULL, why,
					      sizeof(why), err, sizeof(err), quiet, NULL, NULL, NULL);
			assert_true(rc != P53_REPATCH_BAD && rc != P53_REPATCH_SAME);
		} else {
			ni = p53_image_splice(img, one, spare, &nlen, why, sizeof(why));
			free(one);
			if (ni == NULL)
				rc = P53_REPATCH_DECLINED;
		}
		if (declines) {
			if (ni != NULL)
				fail_msg("step %d: the splice took a zone tied to another", i);
			o->declined++;
			print_message("declined: %s\n", why);
			free(fresh);
			free(s2);
			continue;
		}
		if (ni == NULL && strstr(why, "garbage would pass") != NULL) {
			/* Garbage past the limit: pop53d compiles in full, which leaves none. */
			o->declined++;
			free(img);
			img = fresh;
			free(s2);
			continue;
		}
		if (ni == NULL)
			fail_msg("step %d: declined: %s", i, why);
		o->spliced += rc == P53_REPATCH_SPLICED;
		o->patched += rc == P53_REPATCH_PATCHED;
		assert_int_equal((uintptr_t)ni % P53_IMAGE_ALIGN, 0);
		if (getenv("P53_SPLICE_DEBUG") != NULL)
			print_message("zone %u step %d %s\n", z, i, rc == P53_REPATCH_SPLICED ? "spliced" : "patched");
		published_from(img, ni, nlen);
		if (rc == P53_REPATCH_SPLICED && !(i & 1))
			index_handed(img, ni, z, apex, al, sgn, o);
		struct names s = { 0 };
		for (size_t k = 0; k < n_src; k++)
			names_of(&s, &now[k]);
		struct p53_rrs was = { 0 };
		zone_rrs(img, z, &was);
		names_of(&s, &was);
		p53_rrs_free(&was);
		names_add(&s, (const uint8_t *)"\3not\4here\0", 10);
		char what[64];
		snprintf(what, sizeof(what), "step %d (%s)", i,
			 rc == P53_REPATCH_SPLICED ? "spliced" : "patched");
		same_answers(ni, fresh, &s, what);
		same_fast(ni, fresh, &s);
		names_free(&s);
		free(fresh);
		free(img);
		img = ni;
		len = nlen;
		free(s2);
	}
	for (size_t k = 0; k < n_src; k++)
		p53_rrs_free(&now[k]);
	free(now);
	free(img);
}

/* A test's temporary zone files removed and their paths freed; NULL ends the list. */
static void drop_files(char *path, ...)
{
	va_list ap;

	va_start(ap, path);
	for (; path != NULL; path = va_arg(ap, char *)) {
		unlink(path);
		free(path);
	}
	va_end(ap);
}

static char *zone_path(const char *file)
{
	char *p = malloc(512);

	assert_non_null(p);
	snprintf(p, 512, "%s/tests/unit/dataplane/zones/%s", P53_SRCDIR, file);
	return p;
}

/* Two unsigned zones, then those two beside an NSEC and an NSEC3 zone: each zone in turn
 * gets random new content, spliced step after step. */
static void test_independent_zones(void **state)
{
	(void)state;
	char *fa = tmp_zone(ZONE_A), *fb = tmp_zone(ZONE_B);
	char *fn = zone_path("nsec.test.zone"), *f3 = zone_path("nsec3.test.zone");
	char *fs = tmp_zone(ZONE_SMALL_NSEC);
	/* Two NSEC zones: the second's part of the chain lies after the first's (its proofs'
	 * ranges move when the first's part changes length). */
	struct p53_zone_src srcs[5] = {
		{ .name = "a.test.", .file = fa },
		{ .name = "nsec.test.", .file = fn, .flags = P53_ZONE_SECONDARY },
		{ .name = "b.example.", .file = fb },
		{ .name = "small.test.", .file = fs, .flags = P53_ZONE_SECONDARY },
		{ .name = "nsec3.test.", .file = f3, .flags = P53_ZONE_SECONDARY },
	};
	struct outcome o = { 0 };

	rng = seed(26);
	ask_do_too = 0;
	chain((struct p53_zone_src[]){ srcs[0], srcs[2] }, 2, 0, 12, NULL, false, &o);
	chain((struct p53_zone_src[]){ srcs[0], srcs[2] }, 2, 1, 12, NULL, false, &o);
	ask_do_too = 1;
	for (uint32_t z = 0; z < 5; z++)
		chain(srcs, 5, z, 10, NULL, false, &o);
	ask_do_too = 0;
	print_message("%d spliced, %d patched, %d compiled in full (garbage), %d invalid "
		      "contents; %d patches after a splice with the index it handed on\n",
		      o.spliced, o.patched, o.declined, o.invalid, o.index_patched);
	assert_true(o.spliced > 20);
	assert_true(o.patched > 0);
	assert_true(o.index_patched > 5);
	drop_files(fa, fb, fs, NULL);
	free(fn);
	free(f3);
}

/* An NSEC3 zone re-salted (its NSEC3PARAM and every NSEC3 changed: the patch declines it)
 * beside an NSEC zone after it and an unsigned one before it. */
static void test_nsec3_resalted(void **state)
{
	(void)state;
	char *fa = tmp_zone(ZONE_A), *fn = zone_path("nsec.test.zone");
	char *f3 = zone_path("nsec3.test.zone"), *fr = zone_path("nsec3-resalted.test.zone");
	struct p53_zone_src srcs[3] = {
		{ .name = "a.test.", .file = fa },
		{ .name = "nsec3.test.", .file = f3, .flags = P53_ZONE_SECONDARY },
		{ .name = "nsec.test.", .file = fn, .flags = P53_ZONE_SECONDARY },
	};
	struct p53_zone_src rs = { .name = "nsec3.test.", .file = fr, .flags = P53_ZONE_SECONDARY };
	char err[512];
	size_t len;
	void *ri = p53_image_build(&rs, 1, &len, err, sizeof(err), quiet, NULL);
	assert_non_null(ri);
	struct p53_rrs next = { 0 };
	zone_rrs(ri, 0, &next);
	free(ri);
	struct outcome o = { 0 };

	rng = seed(5155);
	ask_do_too = 1;
	chain(srcs, 3, 1, 1, &next, false, &o);
	ask_do_too = 0;
	assert_int_equal(o.spliced, 1);
	p53_rrs_free(&next);
	drop_files(fa, NULL);
	free(fn);
	free(f3);
	free(fr);
}

/* A steered owner (its steered RRsets and index from the config, as the compile attaches
 * them) in the zone spliced, beside another zone. */
static void test_steered_owner(void **state)
{
	(void)state;
	static const uint8_t a4[] = { 10, 0, 0, 1, 10, 0, 0, 2 };
	static uint8_t ln[64];
	size_t sl = wname("steer.a.test.", ln);
	struct p53_zone_extra ex[1] = {
		{ .lname = ln, .lname_len = (uint8_t)sl, .type = 1, .ttl = 60, .addrs = a4,
		  .rdlen = 4, .n = 2, .line = 1, .owner = "steer.a.test.", .rec = 0 },
	};
	char *fa = tmp_zone(ZONE_A), *fb = tmp_zone(ZONE_B);
	struct p53_zone_src srcs[2] = {
		{ .name = "b.example.", .file = fb, .steer_layout = 7 },
		{ .name = "a.test.", .file = fa, .extra = ex, .n_extra = 1, .steer_layout = 7 },
	};
	struct outcome o = { 0 };

	rng = seed(7);
	/* Under P53_PATCH_SEED a chain may splice less: go on with more steps until it has. */
	for (int k = 0; k < 4 && o.spliced <= 2; k++)
		chain(srcs, 2, 1, 16, NULL, false, &o);
	print_message("steered: %d spliced, %d patched, %d invalid contents\n", o.spliced,
		      o.patched, o.invalid);
	assert_true(o.spliced > 2);
	drop_files(fa, fb, NULL);
}

/* A small zone beside a 10k-record generated one: spliced, the big zone's nodes untouched. */
static void test_beside_big_zone(void **state)
{
	(void)state;
	char *path = gen_zone(10000), *fa = tmp_zone(ZONE_A);
	struct p53_zone_src srcs[2] = {
		{ .name = "big.test.", .file = path, .flags = P53_ZONE_SECONDARY },
		{ .name = "a.test.", .file = fa },
	};
	struct outcome o = { 0 };

	rng = seed(10000);
	chain(srcs, 2, 1, 3, NULL, false, &o);
	assert_true(o.spliced > 0);
	drop_files(path, fa, NULL);
}

/* Ties the splice declines: a served child below the zone, the zone below a served parent. */
static void test_declines(void **state)
{
	(void)state;
	char *fp = tmp_zone(ZONE_PARENT), *fc = tmp_zone(ZONE_CHILD);
	struct p53_zone_src nest[2] = { { .name = "parent.test.", .file = fp },
					{ .name = "child.parent.test.", .file = fc } };
	struct outcome o = { 0 };

	rng = seed(1034);
	chain(nest, 2, 0, 2, NULL, true, &o);   /* the parent: a served zone below it */
	chain(nest, 2, 1, 2, NULL, true, &o);   /* the child: below a served zone */
	assert_int_equal(o.declined, 4);
	drop_files(fp, fc, NULL);
}

/* Additional lists across zones (image_splice.c relist): other.test's NS and MX name a.test's
 * names (their lists follow a.test's new content: addresses gained, lost, names gone), and
 * a.test's records name b.example's (its lists take them as the compile of every zone). */
static void test_lists_across_zones(void **state)
{
	(void)state;
	char *fa = tmp_zone(ZONE_A), *fb = tmp_zone(ZONE_B), *fo = tmp_zone(ZONE_NAMES_A);
	struct p53_zone_src srcs[3] = { { .name = "a.test.", .file = fa },
					{ .name = "other.test.", .file = fo },
					{ .name = "b.example.", .file = fb } };
	struct outcome o = { 0 };

	rng = seed(9471);
	for (uint32_t z = 0; z < 3; z++)
		chain(srcs, 3, z, 14, NULL, false, &o);
	print_message("across zones: %d spliced, %d patched, %d invalid contents\n", o.spliced,
		      o.patched, o.invalid);
	assert_true(o.spliced > 10);
	drop_files(fa, fb, fo, NULL);
}

/* The referral templates' count of image img (p53_fast_ref_build()). */
static uint32_t ref_count(const void *img)
{
	size_t rz = p53_fast_ref_size(img);
	void *ref = rz != 0 ? aligned_alloc(64, (rz + 63) & ~(size_t)63) : NULL;

	if (rz == 0)
		return 0;
	assert_non_null(ref);
	p53_fast_ref_build(img, ref, rz);
	uint32_t n = p53_fast_ref_count(ref);
	free(ref);
	return n;
}

/*
 * The referral templates of a spliced image (dataplane/fastpath.c ref_iter): a.test.'s old
 * nodes stay as garbage, sub.a.test.'s still flagged a cut, its indices relative to where the
 * zone's range was; the table holds the delegations of the zones' ranges only, as the full
 * compile's: sub's once when the zone keeps it, none when it goes.
 */
static void test_ref_table_skips_garbage(void **state)
{
	(void)state;
	char text[4096], err[1024], why[512];
	snprintf(text, sizeof(text), "%s", ZONE_A);
	char *serial = strstr(text, "hostmaster 1 ");
	assert_non_null(serial);
	serial[11] = '2';
	char *fa = tmp_zone(ZONE_A), *fb = tmp_zone(ZONE_B), *f2 = tmp_zone(text);
	char *cut = strstr(text, "sub NS ns.sub\n");
	assert_non_null(cut);
	memcpy(cut, "sub TXT \"nnn\"\n", 14); /* the delegation goes, ns.sub stays */
	char *f3 = tmp_zone(text);
	const char *next[2] = { f2, f3 };
	const uint32_t want[2] = { 1, 0 };

	for (int k = 0; k < 2; k++) {
		struct p53_zone_src srcs[2] = { { .name = "a.test.", .file = fa },
						{ .name = "b.example.", .file = fb } };
		size_t len = 0, slen = 0, nlen = 0, flen = 0;
		void *img = p53_image_build(srcs, 2, &len, err, sizeof(err), quiet, NULL);
		assert_non_null(img);
		assert_int_equal(ref_count(img), 1);
		srcs[0].file = next[k];
		void *one = p53_image_build(&srcs[0], 1, &slen, err, sizeof(err), quiet, NULL);
		void *fresh = p53_image_build(srcs, 2, &flen, err, sizeof(err), quiet, NULL);
		assert_non_null(one);
		assert_non_null(fresh);
		void *ni = p53_image_splice(img, one, NULL, &nlen, why, sizeof(why));
		if (ni == NULL)
			fail_msg("declined: %s", why);
		assert_int_equal(p53_image_check(ni, nlen, NULL), 0);
		/* The garbage holds the old cut. */
		uint32_t stale = 0;
		for (uint32_t n = 0; n < p53_image_hdr(ni)->n_nodes; n++) {
			const struct p53_image_node *nd = p53_image_node(ni, n);
			const struct p53_image_zone *zn = p53_image_zone(ni, nd->zone);
			stale += n - zn->node_base >= zn->n_nodes && (nd->flags & P53_NODE_CUT);
		}
		assert_int_equal(stale, 1);
		assert_int_equal(ref_count(fresh), want[k]);
		assert_int_equal(ref_count(ni), want[k]);
		free(ni);
		free(one);
		free(fresh);
		free(img);
	}
	drop_files(fa, fb, f2, f3, NULL);
}

/*
 * An unsigned zone turning signed (an RRSIG added at www): `zone reload NAME`'s way
 * (p53_zone_repatch: the zone compiled alone, its DNSSEC state compared) and an IXFR's (the
 * patch, of the same change as a diff) decline with the same reason, and the reload's is
 * spliced; turning unsigned again is said in words too.
 */
static void test_turns_signed_same_reason(void **state)
{
	(void)state;
	static const char sig[] = "www RRSIG A 13 3 300 20300101000000 20250101000000 4242 a.test. "
		"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==\n";
	static const char want[] = "the zone's DNSSEC state changes (unsigned to signed: RRSIG "
				   "records at www.a.test.)";
	char text[4096], err[1024], why[512], why2[512];
	snprintf(text, sizeof(text), "%s%s", ZONE_A, sig);
	char *fa = tmp_zone(ZONE_A), *fb = tmp_zone(ZONE_B), *fs = tmp_zone(text);
	struct p53_zone_src srcs[2] = { { .name = "a.test.", .file = fa },
					{ .name = "b.example.", .file = fb } };
	struct p53_zone_src sgn = { .name = "a.test.", .file = fs };
	size_t len = 0, nlen = 0, plen = 0;
	void *img = p53_image_build(srcs, 2, &len, err, sizeof(err), quiet, NULL), *ni = NULL;
	assert_non_null(img);

	enum p53_repatch rc = p53_zone_repatch(img, &sgn, true, NULL, &ni, &nlen, NULL, why,
					       sizeof(why), err, sizeof(err), quiet, NULL, NULL, NULL);
	assert_int_equal(rc, P53_REPATCH_SPLICED);
	assert_string_equal(why, want);
	assert_true(p53_image_zone(ni, 0)->dnssec & P53_ZONE_SIGNED);

	struct p53_rrs was = { 0 }, now = { 0 };
	struct p53_ixfr diff = { 0 };
	zone_rrs(img, 0, &was);
	zone_rrs(ni, 0, &now);
	assert_int_equal(p53_rrs_diff(&was, &now, &diff, err, sizeof(err)), 1);
	const struct p53_image_zone *iz = p53_image_zone(img, 0);
	assert_null(p53_image_patch(img, p53_image_name(img, iz->name_off), iz->name_len, &diff,
				    &now, NULL, NULL, &plen, why2, sizeof(why2)));
	assert_string_equal(why2, want);

	void *back = NULL;
	rc = p53_zone_repatch(ni, &srcs[0], true, NULL, &back, &nlen, NULL, why, sizeof(why), err,
			      sizeof(err), quiet, NULL, NULL, NULL);
	assert_int_equal(rc, P53_REPATCH_SPLICED);
	assert_string_equal(why, "the zone's DNSSEC state changes (signed to unsigned)");
	p53_ixfr_free(&diff);
	p53_rrs_free(&was);
	p53_rrs_free(&now);
	free(back);
	free(ni);
	free(img);
	drop_files(fa, fb, fs, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_independent_zones),
		cmocka_unit_test(test_nsec3_resalted),
		cmocka_unit_test(test_steered_owner),
		cmocka_unit_test(test_beside_big_zone),
		cmocka_unit_test(test_declines),
		cmocka_unit_test(test_lists_across_zones),
		cmocka_unit_test(test_turns_signed_same_reason),
		cmocka_unit_test(test_ref_table_skips_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
