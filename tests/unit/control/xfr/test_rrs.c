/*
 * Unit tests for control/xfr/rrs.c: IXFR differences applied to a zone's records (RFC 1995),
 * compared as sets of canonical text records; the failures that must make the caller fall
 * back to AXFR, one row each; and a zone read back out of a compiled image equals what was
 * compiled in (the image is the store of a secondary zone).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "control/xfr/rrs.h"
#include "control/zone/image_build.h"
#include "dataplane/image.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_apply_fails),
		cmocka_unit_test(test_image_roundtrip),
		cmocka_unit_test(test_compile_error_names_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
