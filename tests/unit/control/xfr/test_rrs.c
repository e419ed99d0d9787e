/*
 * Unit tests for control/xfr/rrs.c: IXFR differences applied to a zone's records (RFC 1995),
 * compared as sets of canonical text records; the failures that must make the caller fall
 * back to AXFR, one row each; and a zone read back out of a compiled image equals what was
 * compiled in (the image is the store of a secondary zone). The in-place apply that
 * p53_zones_update() uses (control/xfr/update.c) is taken through the whole path: image, records
 * out of it, differences applied where they are, image again (the compiler then sees
 * records nearly in order and a wire form it reads without ldns: the image must be the one
 * the master file gives).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ldns/ldns.h>

#include "control/xfr/rrs.h"
#include "control/zone/image_build.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

static void add_text(struct p53_rrs *r, const char *txt)
{
	ldns_rr *rr = NULL;
	ldns_status st = ldns_rr_new_frm_str(&rr, txt, 3600, NULL, NULL);

	if (st != LDNS_STATUS_OK)
		fail_msg("bad record '%s': %s", txt, ldns_get_errorstr_by_id(st));
	assert_int_equal(p53_rrs_add_ldns(r, rr), 0);
	ldns_rr_free(rr);
}

static void fill(struct p53_rrs *r, const char *const *txt)
{
	for (; *txt != NULL; txt++)
		add_text(r, *txt);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Canonical text of every record, sorted, one per line. */
static char *as_text(const struct p53_rrs *r)
{
	char **lines = calloc(r->count + 1, sizeof(char *));
	struct p53_rr_view v;
	size_t pos = 0, n = 0, total = 1;

	while (p53_rrs_next(r, &pos, &v) == 1) {
		ldns_rr *rr = p53_rr_view_ldns(&v);
		assert_non_null(rr);
		ldns_rr2canonical(rr);
		lines[n] = ldns_rr2str(rr);
		total += strlen(lines[n]);
		n++;
		ldns_rr_free(rr);
	}
	assert_int_equal(n, r->count);
	qsort(lines, n, sizeof(char *), cmp_str);
	char *out = calloc(1, total);
	for (size_t i = 0; i < n; i++) {
		strcat(out, lines[i]);
		free(lines[i]);
	}
	free(lines);
	return out;
}

static void same_set(const struct p53_rrs *got, const char *const *want)
{
	struct p53_rrs w = { 0 };
	fill(&w, want);
	char *a = as_text(got), *b = as_text(&w);
	if (strcmp(a, b) != 0)
		fail_msg("records differ:\n--- got\n%s--- want\n%s", a, b);
	free(a);
	free(b);
	p53_rrs_free(&w);
}

static const char *const v1[] = {
	"t.example. 300 IN SOA ns.t.example. h.t.example. 1 7200 3600 1209600 300",
	"t.example. 300 IN NS ns.t.example.",
	"ns.t.example. 300 IN A 192.0.2.53",
	"www.t.example. 300 IN A 192.0.2.80",
	"www.t.example. 300 IN A 192.0.2.81",
	"Mail.T.example. 300 IN MX 10 WWW.t.example.",
	"txt.t.example. 300 IN TXT \"hello\"",
	NULL,
};

static struct p53_ixfr_step *step(struct p53_ixfr *d, uint32_t from, uint32_t to,
				  const char *const *del, const char *const *add)
{
	struct p53_ixfr_step *s = p53_ixfr_push(d);
	s->from = from;
	s->to = to;
	fill(&s->del, del);
	fill(&s->add, add);
	return s;
}

#define SOA(n) "t.example. 300 IN SOA ns.t.example. h.t.example. " #n " 7200 3600 1209600 300"

/* Two chained steps: change, TTL change, case-insensitive delete, add-then-delete. */
static void test_apply(void **state)
{
	struct p53_rrs base = { 0 }, out = { 0 };
	struct p53_ixfr d = { 0 };
	char err[256];

	(void)state;
	fill(&base, v1);
	step(&d, 1, 2,
	     (const char *const[]){ SOA(1), "www.t.example. 300 IN A 192.0.2.81",
				    /* names in MX RDATA compare case-insensitively */
				    "mail.t.example. 300 IN MX 10 www.T.EXAMPLE.", NULL },
	     (const char *const[]){ SOA(2), "www.t.example. 300 IN A 192.0.2.82",
				    "new.t.example. 300 IN A 192.0.2.9",
				    "mail.t.example. 600 IN MX 10 www.t.example.", NULL });
	step(&d, 2, 3,
	     (const char *const[]){ SOA(2), "new.t.example. 300 IN A 192.0.2.9", NULL },
	     (const char *const[]){ SOA(3), "txt.t.example. 300 IN TXT \"second\"", NULL });
	assert_int_equal(p53_ixfr_apply(&base, &d, &out, err, sizeof(err)), 0);
	same_set(&out, (const char *const[]){
		SOA(3),
		"t.example. 300 IN NS ns.t.example.",
		"ns.t.example. 300 IN A 192.0.2.53",
		"www.t.example. 300 IN A 192.0.2.80",
		"www.t.example. 300 IN A 192.0.2.82",
		"mail.t.example. 600 IN MX 10 www.t.example.",
		"txt.t.example. 300 IN TXT \"hello\"",
		"txt.t.example. 300 IN TXT \"second\"",
		NULL });
	assert_int_equal(p53_rrs_soa_serial(&out), 3);
	p53_rrs_free(&out);
	p53_rrs_free(&base);
	p53_ixfr_free(&d);
}

/* What makes an IXFR unusable (the caller then asks for AXFR): one row each. */
struct bad_ixfr {
	const char *msg;
	uint32_t from, to;
	const char *const *del;
	const char *const *add;
	const char *want;       /* start of the error */
};

static const struct bad_ixfr bad_rows[] = {
	{ "deletes a record the zone does not have", 1, 2,
	  (const char *const[]){ SOA(1), "www.t.example. 300 IN A 192.0.2.99", NULL },
	  (const char *const[]){ SOA(2), NULL },
	  "IXFR deletes a record the zone does not have: www.t.example. type 1" },
	{ "starts from another serial", 5, 6,
	  (const char *const[]){ SOA(5), NULL }, (const char *const[]){ SOA(6), NULL },
	  "IXFR difference 0 starts at serial 5, the zone is at 1" },
	{ "deletes the same record twice", 1, 2,
	  (const char *const[]){ SOA(1), "ns.t.example. 300 IN A 192.0.2.53",
				 "ns.t.example. 60 IN A 192.0.2.53", NULL },
	  (const char *const[]){ SOA(2), NULL },
	  "IXFR deletes the same record twice" },
	{ "deletes an SOA that is not the zone's", 1, 2,
	  (const char *const[]){ "t.example. 300 IN SOA ns.t.example. h.t.example. 1 1 1 1 1", NULL },
	  (const char *const[]){ SOA(2), NULL },
	  "IXFR deletes a record the zone does not have: t.example. type 6" },
};

static void test_apply_fails(void **state)
{
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		struct p53_rrs base = { 0 }, out = { 0 };
		struct p53_ixfr d = { 0 };
		char err[256] = "";
		fill(&base, v1);
		step(&d, bad_rows[i].from, bad_rows[i].to, bad_rows[i].del, bad_rows[i].add);
		int rc = p53_ixfr_apply(&base, &d, &out, err, sizeof(err));
		if (rc != -1 || strncmp(err, bad_rows[i].want, strlen(bad_rows[i].want)) != 0 ||
		    out.len != 0) {
			print_error("row %zu (%s): rc %d, error '%s'\n", i, bad_rows[i].msg, rc, err);
			failures++;
		}
		p53_rrs_free(&base);
		p53_ixfr_free(&d);
	}
	assert_int_equal(failures, 0);
}

/* Compile records into an image and read them back out: the same set, owners lowered. */
static void test_image_roundtrip(void **state)
{
	struct p53_rrs in = { 0 }, back = { 0 }, other = { 0 };
	char err[512];
	size_t len;

	(void)state;
	fill(&in, v1);
	add_text(&in, "sig.t.example. 300 IN RRSIG A 8 3 300 20300101000000 20200101000000 1 t.example. AAAA");
	add_text(&in, "sig.t.example. 300 IN A 192.0.2.1");
	struct p53_zone_src src[2] = {
		{ .name = "t.example.", .file = "t.example (test)", .rrs = in.buf, .rrs_len = in.len,
		  .flags = P53_ZONE_SECONDARY },
		{ .name = "nodata.example.", .rcode = 2, .flags = P53_ZONE_SECONDARY },
	};
	void *img = p53_image_build(src, 2, &len, err, sizeof(err), NULL, NULL);
	if (img == NULL)
		fail_msg("%s", err);
	assert_int_equal(p53_image_hdr(img)->n_zones, 2);
	assert_int_equal(p53_image_zone(img, 0)->serial, 1);
	assert_int_equal(p53_image_zone(img, 0)->flags, P53_ZONE_SECONDARY);
	assert_int_equal(p53_image_zone(img, 1)->rcode, 2);
	assert_int_equal(p53_image_zone(img, 1)->soa, P53_NONE);
	struct p53_rrs *outs[2] = { &back, &other };
	assert_int_equal(p53_image_zones_rrs(img, outs), 0);
	assert_int_equal(other.count, 0);
	char *a = as_text(&in), *b = as_text(&back);
	assert_string_equal(b, a);
	free(a);
	free(b);
	free(img);
	p53_rrs_free(&in);
	p53_rrs_free(&back);
}

/* A compile error in transferred records says which record: "name:N". */
static void test_compile_error_names_record(void **state)
{
	struct p53_rrs in = { 0 };
	char err[512];
	size_t len;

	(void)state;
	fill(&in, v1);
	add_text(&in, "www.t.example. 300 IN CNAME other.example.");
	struct p53_zone_src src = { .name = "t.example.", .file = "t.example. (transfer)",
				    .rrs = in.buf, .rrs_len = in.len };
	assert_null(p53_image_build(&src, 1, &len, err, sizeof(err), NULL, NULL));
	assert_string_equal(err, "t.example. (transfer):8: CNAME beside other data (A) at "
				 "'www.t.example.' (RFC 1034 §3.6.2, RFC 2181 §10.1)");
	p53_rrs_free(&in);
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* Compile one secondary zone t.example. from records; fails the test on an error. */
static void *compile_rrs(const struct p53_rrs *r, size_t *len)
{
	char err[512];
	struct p53_zone_src src = { .name = "t.example.", .file = "t.example. (transfer)",
				    .rrs = r->buf, .rrs_len = r->len, .flags = P53_ZONE_SECONDARY };
	void *img = p53_image_build(&src, 1, len, err, sizeof(err), quiet, NULL);
	if (img == NULL)
		fail_msg("%s", err);
	return img;
}

static void zone_of(const void *img, struct p53_rrs *out)
{
	struct p53_rrs *w[1] = { out };
	p53_rrs_free(out);
	assert_int_equal(p53_image_zones_rrs(img, w), 0);
}

/* Every node's RRsets one per type, in type order: records were sorted before they were cut. */
static void rrsets_in_order(const void *img)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	for (uint32_t n = 0; n < h->n_nodes; n++) {
		const struct p53_image_node *nd = p53_image_node(img, n);
		for (uint32_t i = nd->rrsets + 1; i < (uint32_t)nd->rrsets + nd->n_rrsets; i++)
			assert_true(p53_image_rrset(img, i - 1)->type < p53_image_rrset(img, i)->type);
	}
}

/* How many records of `type` at this owner (lower case, text) the image serves. */
static int served(const void *img, const char *owner, uint16_t type)
{
	ldns_rdf *o = NULL;
	assert_int_equal(ldns_str2rdf_dname(&o, owner), LDNS_STATUS_OK);
	uint32_t n = p53_image_find(img, ldns_rdf_data(o), ldns_rdf_size(o),
				    p53_name_hash(ldns_rdf_data(o), ldns_rdf_size(o)));
	ldns_rdf_deep_free(o);
	if (n == P53_NONE)
		return 0;
	uint32_t rs = p53_image_node_rrset(img, p53_image_node(img, n), type);
	return rs == P53_NONE ? 0 : p53_image_rrset(img, rs)->count;
}

/* The path of p53_zones_update() for a DIFF: records out of the served image, the steps
 * applied in place, a new image. Deletions whose RDATA names differ in case only, a record
 * added that the zone has (one record, RFC 2181 §5), a new owner, a TTL change, the SOA. */
static void test_inplace_through_image(void **state)
{
	struct p53_rrs zone = { 0 }, back = { 0 };
	struct p53_ixfr d = { 0 };
	char err[256];
	size_t len;

	(void)state;
	fill(&zone, v1);
	void *img = compile_rrs(&zone, &len);
	zone_of(img, &zone);
	step(&d, 1, 2,
	     (const char *const[]){ SOA(1), "WWW.t.example. 300 IN A 192.0.2.81",
				    "mail.t.example. 300 IN MX 10 www.T.EXAMPLE.", NULL },
	     (const char *const[]){ SOA(2), "www.t.example. 300 IN A 192.0.2.82",
				    "ns.t.example. 300 IN A 192.0.2.53", /* already there */
				    "aaa.new.t.example. 300 IN A 192.0.2.9",
				    "mail.t.example. 600 IN MX 10 www.t.example.", NULL });
	uint32_t before = zone.count;
	assert_int_equal(p53_ixfr_apply_inplace(&zone, &d, err, sizeof(err)), 0);
	assert_int_equal(zone.count, before - 3 + 5);
	void *img2 = compile_rrs(&zone, &len);
	rrsets_in_order(img2);
	assert_int_equal(p53_image_zone(img2, 0)->serial, 2);
	assert_int_equal(served(img2, "ns.t.example.", 1), 1);
	assert_int_equal(served(img2, "www.t.example.", 1), 2);
	assert_int_equal(served(img2, "aaa.new.t.example.", 1), 1);
	assert_int_equal(served(img2, "t.example.", 6), 1);
	zone_of(img2, &back);
	same_set(&back, (const char *const[]){
		SOA(2),
		"t.example. 300 IN NS ns.t.example.",
		"ns.t.example. 300 IN A 192.0.2.53",
		"www.t.example. 300 IN A 192.0.2.80",
		"www.t.example. 300 IN A 192.0.2.82",
		"aaa.new.t.example. 300 IN A 192.0.2.9",
		"mail.t.example. 600 IN MX 10 www.t.example.",
		"txt.t.example. 300 IN TXT \"hello\"",
		NULL });
	free(img);
	free(img2);
	p53_rrs_free(&zone);
	p53_rrs_free(&back);
	p53_ixfr_free(&d);
}

/* The contract on failure. A step that does not start at the zone's serial: the zone is left
 * as it was. A deletion of a record the zone does not have: the zone is emptied (records had
 * already moved) and the error names the record; the served image is another copy, untouched,
 * and the caller asks for AXFR (control/xfr/xfr.c). A duplicate deletion: refused. */
static void test_inplace_failures(void **state)
{
	struct p53_rrs zone = { 0 }, orig = { 0 };
	char err[256];

	(void)state;
	fill(&orig, v1);

	struct p53_ixfr d = { 0 };
	step(&d, 7, 8, (const char *const[]){ SOA(7), NULL }, (const char *const[]){ SOA(8), NULL });
	assert_int_equal(p53_rrs_append(&zone, &orig), 0);
	assert_int_equal(p53_ixfr_apply_inplace(&zone, &d, err, sizeof(err)), -1);
	assert_string_equal(err, "IXFR difference 0 starts at serial 7, the zone is at 1");
	assert_int_equal(zone.len, orig.len);
	assert_memory_equal(zone.buf, orig.buf, orig.len);
	p53_ixfr_free(&d);

	step(&d, 1, 2,
	     (const char *const[]){ SOA(1), "www.t.example. 300 IN A 192.0.2.80",
				    "gone.t.example. 300 IN A 192.0.2.99", NULL },
	     (const char *const[]){ SOA(2), NULL });
	assert_int_equal(p53_ixfr_apply_inplace(&zone, &d, err, sizeof(err)), -1);
	assert_string_equal(err, "IXFR deletes a record the zone does not have: gone.t.example. type 1");
	assert_int_equal(zone.len, 0);
	assert_int_equal(zone.count, 0);
	p53_ixfr_free(&d);

	p53_rrs_free(&zone);
	p53_rrs_free(&orig);
}

/* Differences that leave CNAME beside other data apply (apply does not judge content), but the
 * new zone does not compile: p53_zones_update() then publishes nothing (the old image keeps
 * serving) and the zone is transferred whole next (xfr.c, RFC 1995 §4). The error names the
 * record, as for a master file. */
static void test_inplace_cname_conflict(void **state)
{
	struct p53_rrs zone = { 0 };
	struct p53_ixfr d = { 0 };
	char err[512];
	size_t len;

	(void)state;
	fill(&zone, v1);
	step(&d, 1, 2, (const char *const[]){ SOA(1), NULL },
	     (const char *const[]){ SOA(2), "www.t.example. 300 IN CNAME other.example.", NULL });
	assert_int_equal(p53_ixfr_apply_inplace(&zone, &d, err, sizeof(err)), 0);
	struct p53_zone_src src = { .name = "t.example.", .file = "t.example. (transfer)",
				    .rrs = zone.buf, .rrs_len = zone.len, .flags = P53_ZONE_SECONDARY };
	assert_null(p53_image_build(&src, 1, &len, err, sizeof(err), NULL, NULL));
	assert_non_null(strstr(err, "CNAME beside other data (A) at 'www.t.example.'"));
	p53_rrs_free(&zone);
	p53_ixfr_free(&d);
}

/* A zone compiled from its master file (ldns reads it) and compiled again from the records
 * read back out of that image (the wire read without ldns for the common types, the records
 * nearly in order) is the same image, byte for byte: names in RDATA in mixed case, types the
 * wire path takes (SOA, NS, MX, SRV, CNAME, PTR, DNAME, TXT, A, AAAA, RRSIG) and some it
 * leaves to ldns (CAA, NAPTR, HINFO). */
static void test_image_same_from_records(void **state)
{
	static const char text[] =
		"$ORIGIN t.example.\n"
		"@ 300 IN SOA NS.t.example. Host.T.example. 1 7200 3600 1209600 300\n"
		"@ 300 IN NS ns\n"
		"@ 300 IN NS ns.Other.EXAMPLE.\n"
		"@ 300 IN MX 20 Mail\n"
		"@ 300 IN MX 10 mail\n"
		"@ 300 IN CAA 0 issue \"ca.example\"\n"
		"ns 300 IN A 192.0.2.53\n"
		"ns 300 IN AAAA 2001:db8::53\n"
		"Mail 300 IN A 192.0.2.25\n"
		"mail 300 IN TXT \"v=spf1 -all\" \"two\"\n"
		"_sip._tcp 300 IN SRV 0 5 5060 SIP.t.example.\n"
		"sip 300 IN A 192.0.2.60\n"
		"www 300 IN CNAME Mail\n"
		"z.y.x 300 IN PTR Ptr.Example.\n"
		"d 300 IN DNAME Target.Example.\n"
		"n 300 IN NAPTR 100 10 \"U\" \"E2U+sip\" \"!^.*$!sip:x@example!\" .\n"
		"h 300 IN HINFO \"PC\" \"Unix\"\n"
		"s 300 IN A 192.0.2.7\n"
		"s 300 IN RRSIG A 8 3 300 20300101000000 20200101000000 1 T.Example. AAAA\n"
		"sub 300 IN NS ns.sub\n"
		"ns.sub 300 IN A 192.0.2.99\n";
	char path[] = "/tmp/p53-test-rrs-XXXXXX", err[512];
	struct p53_rrs recs = { 0 };
	size_t l1, l2;

	(void)state;
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	setenv("POP53_ZONE_SCANNER", "ldns", 1);
	struct p53_zone_src src = { .name = "t.example.", .file = path, .flags = P53_ZONE_SECONDARY };
	void *a = p53_image_build(&src, 1, &l1, err, sizeof(err), quiet, NULL);
	unsetenv("POP53_ZONE_SCANNER");
	unlink(path);
	if (a == NULL)
		fail_msg("%s", err);
	zone_of(a, &recs);
	void *b = compile_rrs(&recs, &l2);
	assert_int_equal(l2, l1);
	assert_memory_equal(b, a, l1);
	/* The same records last to first: far from sorted, the compiler sorts them all; the
	 * same records are served, each node's RRsets in order. */
	struct p53_rr_view v;
	struct p53_rr_view *all = calloc(recs.count, sizeof(*all));
	struct p53_rrs rev = { 0 }, back = { 0 };
	size_t pos = 0, n = 0;
	while (p53_rrs_next(&recs, &pos, &v) == 1)
		all[n++] = v;
	while (n-- > 0)
		assert_int_equal(p53_rrs_add(&rev, all[n].owner, all[n].owner_len, all[n].type,
					     all[n].cls, all[n].ttl, all[n].rdata, all[n].rdlen), 0);
	void *c = compile_rrs(&rev, &l2);
	rrsets_in_order(c);
	zone_of(c, &back);
	char *x = as_text(&recs), *y = as_text(&back);
	assert_string_equal(y, x);
	free(x);
	free(y);
	free(all);
	free(c);
	p53_rrs_free(&rev);
	p53_rrs_free(&back);
	free(a);
	free(b);
	p53_rrs_free(&recs);
}

/* A node of the image by owner (text), or NULL. */
static const struct p53_image_node *node_of(const void *img, const char *owner)
{
	ldns_rdf *o = NULL;
	assert_int_equal(ldns_str2rdf_dname(&o, owner), LDNS_STATUS_OK);
	uint32_t n = p53_image_find(img, ldns_rdf_data(o), ldns_rdf_size(o),
				    p53_name_hash(ldns_rdf_data(o), ldns_rdf_size(o)));
	ldns_rdf_deep_free(o);
	return n == P53_NONE ? NULL : p53_image_node(img, n);
}

/*
 * RRSIGs that cover no RRset of their owner (knotd and BIND keep them: the name exists, NODATA
 * to other types). A name owning only such RRSIGs exists in the image compiled from the
 * transfer and in the one compiled from its records read back (it was NODATA, then NXDOMAIN
 * after the next IXFR); beside RRsets it has, they stay apart from the RRSIGs that go with
 * those RRsets. Both images are the same, byte for byte.
 */
static void test_orphan_rrsigs_read_back(void **state)
{
	static const char *const zone[] = {
		"t.example. 300 IN SOA ns.t.example. host.t.example. 1 7200 3600 1209600 300",
		"t.example. 300 IN NS ns.t.example.",
		"ns.t.example. 300 IN A 192.0.2.53",
		"only.t.example. 300 IN RRSIG A 8 3 300 20300101000000 20200101000000 1 t.example. AAAA",
		"only.t.example. 600 IN RRSIG MX 8 3 300 20300101000000 20200101000000 1 t.example. AAAB",
		"mix.t.example. 300 IN TXT \"x\"",
		"mix.t.example. 300 IN RRSIG AAAA 8 3 300 20300101000000 20200101000000 1 t.example. AAAC",
		"mix.t.example. 300 IN RRSIG TXT 8 3 300 20300101000000 20200101000000 1 t.example. AAAD",
		"mix.t.example. 300 IN RRSIG A 8 3 300 20300101000000 20200101000000 1 t.example. AAAE",
		NULL,
	};
	struct p53_rrs recs = { 0 }, back = { 0 };
	size_t l1, l2;

	(void)state;
	fill(&recs, zone);
	void *a = compile_rrs(&recs, &l1);
	const struct p53_image_node *only = node_of(a, "only.t.example.");
	assert_non_null(only);
	assert_int_equal(only->n_rrsets, 1);
	assert_int_equal(served(a, "only.t.example.", LDNS_RR_TYPE_RRSIG), 2);
	assert_int_equal(served(a, "only.t.example.", LDNS_RR_TYPE_A), 0);
	/* mix: TXT with its RRSIG, and the two that cover nothing there as their own RRset. */
	assert_int_equal(served(a, "mix.t.example.", LDNS_RR_TYPE_TXT), 1);
	assert_int_equal(served(a, "mix.t.example.", LDNS_RR_TYPE_RRSIG), 2);
	const struct p53_image_node *mix = node_of(a, "mix.t.example.");
	uint32_t txt = p53_image_node_rrset(a, mix, LDNS_RR_TYPE_TXT);
	assert_int_equal(p53_image_rrset(a, txt)->sig_count, 1);
	assert_int_equal(p53_image_hdr(a)->n_records, 9);
	/* Read back: every record again, and the same image. */
	zone_of(a, &back);
	char *x = as_text(&recs), *y = as_text(&back);
	assert_string_equal(y, x);
	free(x);
	free(y);
	void *b = compile_rrs(&back, &l2);
	assert_non_null(node_of(b, "only.t.example."));
	assert_int_equal(l2, l1);
	assert_memory_equal(b, a, l1);
	free(a);
	free(b);
	p53_rrs_free(&recs);
	p53_rrs_free(&back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_apply_fails),
		cmocka_unit_test(test_image_roundtrip),
		cmocka_unit_test(test_compile_error_names_record),
		cmocka_unit_test(test_inplace_through_image),
		cmocka_unit_test(test_inplace_failures),
		cmocka_unit_test(test_inplace_cname_conflict),
		cmocka_unit_test(test_image_same_from_records),
		cmocka_unit_test(test_orphan_rrsigs_read_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
