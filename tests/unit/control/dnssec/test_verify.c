/*
 * control/dnssec/verify.c, what the health canary validates with (health.canary.dnssec):
 * the DNSKEY RRset read back from a compiled image verifies the zone file's own RRSIGs
 * (tests/unit/dataplane/zones/nsec.test.zone, signed with ldns-signzone until 2037); an
 * unsigned zone has no keys; names find their zone. Then a table of responses signed here
 * by ldns, one row per defect the canary must catch, each with the reason it reports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "control/dnssec/verify.h"
#include "control/zone/image_build.h"
#include "dataplane/image.h"

#define EXPIRE 2145830400u /* 2037-12-31 00:00:00 UTC */
#define DAY    86400u

static void *img;

static int setup(void **state)
{
	char err[512], f1[512], f2[512];
	size_t len;

	(void)state;
	snprintf(f1, sizeof(f1), "%s/tests/unit/dataplane/zones/nsec.test.zone", P53_SRCDIR);
	snprintf(f2, sizeof(f2), "%s/tests/differential/zones/second.test.zone", P53_SRCDIR);
	struct p53_zone_src zones[2] = {{.name = "nsec.test.", .file = f1},
					{.name = "second.test.", .file = f2}};
	img = p53_image_build(zones, 2, &len, err, sizeof(err), NULL, NULL);
	assert_non_null(img);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(img);
	return 0;
}

static uint32_t zone_of(const char *name)
{
	ldns_rdf *d = NULL;

	assert_int_equal(ldns_str2rdf_dname(&d, name), LDNS_STATUS_OK);
	uint32_t z = p53_dnssec_zone_of(img, ldns_rdf_data(d), ldns_rdf_size(d));
	ldns_rdf_deep_free(d);
	return z;
}

static void test_zone_of(void **state)
{
	(void)state;
	assert_int_equal(zone_of("nsec.test."), 0);
	assert_int_equal(zone_of("does.not.exist.nsec.test."), 0);
	assert_int_equal(zone_of("second.test."), 1);
	assert_int_equal(zone_of("example.org."), P53_NONE);
}

/* The zone file's records of one owner and type (RRSIGs of it too), from ldns's own parser. */
static ldns_rr_list *from_file(const char *owner, ldns_rr_type type)
{
	char f[512];
	ldns_zone *z = NULL;
	ldns_rdf *o = NULL;
	ldns_rr_list *out = ldns_rr_list_new();

	snprintf(f, sizeof(f), "%s/tests/unit/dataplane/zones/nsec.test.zone", P53_SRCDIR);
	FILE *fp = fopen(f, "r");
	assert_non_null(fp);
	assert_int_equal(ldns_zone_new_frm_fp(&z, fp, NULL, 0, LDNS_RR_CLASS_IN), LDNS_STATUS_OK);
	fclose(fp);
	ldns_str2rdf_dname(&o, owner);
	ldns_rr_list *all = ldns_rr_list_clone(ldns_zone_rrs(z));
	ldns_rr_list_push_rr(all, ldns_rr_clone(ldns_zone_soa(z)));
	for (size_t i = 0; i < ldns_rr_list_rr_count(all); i++) {
		ldns_rr *rr = ldns_rr_list_rr(all, i);
		if (ldns_dname_compare(ldns_rr_owner(rr), o) != 0)
			continue;
		if (ldns_rr_get_type(rr) == type ||
		    (ldns_rr_get_type(rr) == LDNS_RR_TYPE_RRSIG &&
		     ldns_rdf2rr_type(ldns_rr_rrsig_typecovered(rr)) == type))
			ldns_rr_list_push_rr(out, ldns_rr_clone(rr));
	}
	ldns_rr_list_deep_free(all);
	ldns_rdf_deep_free(o);
	ldns_zone_deep_free(z);
	return out;
}

static void test_image_keys(void **state)
{
	char why[300] = "";

	(void)state;
	ldns_rr_list *keys = p53_dnssec_image_keys(img, 0);
	assert_non_null(keys);
	assert_int_equal(ldns_rr_list_rr_count(keys), 2);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(ldns_rr_get_type(ldns_rr_list_rr(keys, i)), LDNS_RR_TYPE_DNSKEY);
	/* The keys as the image holds them verify what ldns-signzone signed. */
	ldns_rr_list *soa = from_file("nsec.test.", LDNS_RR_TYPE_SOA);
	assert_int_equal(p53_dnssec_verify_section(soa, keys, EXPIRE - DAY, 0, why, sizeof(why)), 1);
	ldns_rr_list *mx = from_file("nsec.test.", LDNS_RR_TYPE_MX);
	assert_int_equal(p53_dnssec_verify_section(mx, keys, EXPIRE - DAY, 0, why, sizeof(why)), 1);
	/* ...until they expire. */
	assert_int_equal(p53_dnssec_verify_section(soa, keys, EXPIRE + DAY, 0, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "nsec.test. SOA: DNSSEC signature has expired"));
	ldns_rr_list_deep_free(soa);
	ldns_rr_list_deep_free(mx);
	ldns_rr_list_deep_free(keys);
	/* An unsigned zone has nothing to validate with. */
	assert_null(p53_dnssec_image_keys(img, 1));
}

/* A fresh ECDSA P-256 ZSK of test. valid from `inc` to `exp`. */
static ldns_key *keygen(time_t inc, time_t exp)
{
	ldns_key *k = ldns_key_new_frm_algorithm(LDNS_SIGN_ECDSAP256SHA256, 256);
	ldns_rdf *o = NULL;

	assert_non_null(k);
	ldns_str2rdf_dname(&o, "test.");
	ldns_key_set_pubkey_owner(k, o);
	ldns_key_set_flags(k, 256);
	ldns_key_set_inception(k, (uint32_t)inc);
	ldns_key_set_expiration(k, (uint32_t)exp);
	ldns_rr *dk = ldns_key2rr(k);
	ldns_key_set_keytag(k, ldns_calc_keytag(dk));
	ldns_rr_free(dk);
	return k;
}

static ldns_rr *rr(const char *s)
{
	ldns_rr *r = NULL;

	assert_int_equal(ldns_rr_new_frm_str(&r, s, 0, NULL, NULL), LDNS_STATUS_OK);
	return r;
}

enum defect { NONE, NO_RRSIG, SIG_BYTE, RECORD, EXPIRED, NOT_YET, OTHER_KEY, ONE_GOOD, UNSIGNED_NS };

static const struct {
	const char *what;
	enum defect d;
	int want;               /* RRsets checked, or -1 */
	const char *why;        /* reported on -1 */
} rows[] = {
	{ "signed by the zone's key, valid now", NONE, 1, NULL },
	{ "the RRSIG is missing", NO_RRSIG, -1, "www.test. A: no RRSIG" },
	{ "a byte of the signature is changed", SIG_BYTE, -1, "www.test. A: Bogus DNSSEC signature" },
	{ "a record changed after signing", RECORD, -1, "www.test. A: Bogus DNSSEC signature" },
	{ "the signature expired", EXPIRED, -1, "www.test. A: DNSSEC signature has expired" },
	{ "the signature is not valid yet", NOT_YET, -1, "www.test. A: DNSSEC signature not incepted yet" },
	{ "signed by a key not in the zone's DNSKEY", OTHER_KEY, -1,
	  "www.test. A: No keys with the keytag and algorithm from the RRSIG found" },
	{ "one bad and one good RRSIG (a validator takes the good one)", ONE_GOOD, 1, NULL },
	{ "a referral's unsigned NS is not checked", UNSIGNED_NS, 0, NULL },
};

static void test_defects(void **state)
{
	time_t now = time(NULL);

	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		time_t inc = now - 3600, exp = now + 3600;
		if (rows[r].d == EXPIRED)
			exp = now - 60;
		if (rows[r].d == NOT_YET)
			inc = now + 600;
		ldns_key *zsk = keygen(now - 3600, now + 3600), *signer = zsk, *other = NULL;
		if (rows[r].d == OTHER_KEY)
			signer = other = keygen(now - 3600, now + 3600);
		ldns_key_set_inception(signer, (uint32_t)inc);
		ldns_key_set_expiration(signer, (uint32_t)exp);
		ldns_key_list *kl = ldns_key_list_new();
		ldns_key_list_push_key(kl, signer);
		ldns_rr_list *rrset = ldns_rr_list_new(), *section = ldns_rr_list_new();
		ldns_rr_list *keys = ldns_rr_list_new();
		ldns_rr_list_push_rr(keys, ldns_key2rr(zsk));
		ldns_rr_list_push_rr(rrset, rr("www.test. 300 IN A 192.0.2.1"));
		ldns_rr_list_push_rr(rrset, rr("www.test. 300 IN A 192.0.2.2"));
		ldns_rr_list *sigs = ldns_sign_public(rrset, kl);
		assert_non_null(sigs);
		if (rows[r].d == SIG_BYTE) {
			ldns_rdf *s = ldns_rr_rdf(ldns_rr_list_rr(sigs, 0), 8);
			ldns_rdf_data(s)[5] ^= 0x01;
		}
		if (rows[r].d == RECORD)
			ldns_rdf_data(ldns_rr_rdf(ldns_rr_list_rr(rrset, 1), 0))[3] = 99;
		if (rows[r].d == ONE_GOOD) {
			ldns_rr *bad = ldns_rr_clone(ldns_rr_list_rr(sigs, 0));
			ldns_rdf_data(ldns_rr_rdf(bad, 8))[5] ^= 0x01;
			ldns_rr_list_push_rr(section, bad);
		}
		if (rows[r].d == UNSIGNED_NS) {
			ldns_rr_list_push_rr(section, rr("sub.test. 300 IN NS ns.sub.test."));
		} else {
			ldns_rr_list_cat(section, rrset);
			if (rows[r].d != NO_RRSIG)
				ldns_rr_list_cat(section, sigs);
		}
		char why[300] = "";
		int got = p53_dnssec_verify_section(section, keys, now,
						    rows[r].d == UNSIGNED_NS ? LDNS_RR_TYPE_NS : 0, why, sizeof(why));
		if (got != rows[r].want || (rows[r].why != NULL && strcmp(why, rows[r].why) != 0))
			fail_msg("%s: got %d '%s', want %d '%s'", rows[r].what, got, why, rows[r].want,
				 rows[r].why != NULL ? rows[r].why : "");
		/* ldns_rr_list_cat copied only the pointers: the records belong to rrset and sigs. */
		if (rows[r].d == ONE_GOOD)
			ldns_rr_free(ldns_rr_list_rr(section, 0));
		if (rows[r].d == UNSIGNED_NS)
			ldns_rr_free(ldns_rr_list_rr(section, 0));
		ldns_rr_list_free(section);
		ldns_rr_list_deep_free(rrset);
		ldns_rr_list_deep_free(sigs);
		ldns_rr_list_deep_free(keys);
		ldns_key_list_free(kl); /* and the signer in it */
		if (other != NULL)
			ldns_key_deep_free(zsk);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zone_of),
		cmocka_unit_test(test_image_keys),
		cmocka_unit_test(test_defects),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
