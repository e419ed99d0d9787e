/*
 * control/dnssec/sign.c and the signed steering table (control/steer/steer_build.c,
 * dataplane/steer.c): RRSIGs made for ECDSA P-256 and Ed25519 keys written here in BIND's
 * format are validated by ldns (an independent implementation of RFC 4034/4035), whatever the
 * order of the records; a changed record or signature does not validate; a signed table
 * passes its check and one whose signature bytes are off does not; the health margin covers
 * the table's signatures; a table of bad key files, each with its message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ldns/ldns.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "control/dnssec/sign.h"
#include "control/steer/steer_build.h"
#include "control/steer/steer_pub.h"
#include "dataplane/steer.h"

static char dir[] = "/tmp/p53sign.XXXXXX";

static void b64(const uint8_t *in, size_t n, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

/* Write K<name> (.key, .private) for a fresh key of `alg`; returns the stem. */
static const char *keygen(int alg, const char *stem)
{
	static char path[512];
	uint8_t pub[65], priv[32];
	size_t pl = 0, vl = 0;
	char pb[128], vb[128];
	EVP_PKEY *k;

	if (alg == P53_SIGN_ALG_ED25519) {
		k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
		pl = 32;
		vl = 32;
		assert_int_equal(EVP_PKEY_get_raw_public_key(k, pub, &pl), 1);
		assert_int_equal(EVP_PKEY_get_raw_private_key(k, priv, &vl), 1);
		b64(pub, 32, pb);
	} else {
		BIGNUM *d = NULL;
		k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		assert_int_equal(EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, pub,
								 sizeof(pub), &pl), 1);
		assert_int_equal(pl, 65);
		assert_int_equal(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_PRIV_KEY, &d), 1);
		assert_int_equal(BN_bn2binpad(d, priv, 32), 32);
		BN_free(d);
		b64(pub + 1, 64, pb); /* x || y (RFC 6605 §4) */
	}
	EVP_PKEY_free(k);
	b64(priv, 32, vb);
	snprintf(path, sizeof(path), "%s/%s.key", dir, stem);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "; a comment, as dnssec-keygen writes\nexample.com.\tIN\tDNSKEY\t257 3 %d %s\n", alg, pb);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s.private", dir, stem);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "Private-key-format: v1.3\nAlgorithm: %d\nPrivateKey: %s\n", alg, vb);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s", dir, stem);
	return path;
}

static const uint8_t owner[] = "\003www\007example\003com"; /* + the root's 0 */

/* Pre-encoded A records (image.h) for the addresses 10.0.0.x. */
static size_t recs_of(uint8_t *out, const uint8_t *last, int n)
{
	size_t o = 0;

	for (int i = 0; i < n; i++) {
		static const uint8_t h[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 10, 0, 0};
		memcpy(out + o, h, sizeof(h));
		out[o + sizeof(h)] = last[i];
		o += sizeof(h) + 1;
	}
	return o;
}

/* ldns' verdict on our RRSIG over the records (owner www.example.com.) with the key file. */
static ldns_status ldns_check(const char *stem, const uint8_t *recs, int n, const uint8_t *rrsig,
			      size_t len)
{
	char path[600], line[512];
	ldns_rr *key = NULL, *sig = NULL;
	ldns_rr_list *set = ldns_rr_list_new(), *keys = ldns_rr_list_new();

	snprintf(path, sizeof(path), "%s.key", stem);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (line[0] != ';')
			assert_int_equal(ldns_rr_new_frm_str(&key, line, 0, NULL, NULL), LDNS_STATUS_OK);
	fclose(f);
	ldns_rr_list_push_rr(keys, key);
	for (int i = 0; i < n; i++) {
		char txt[128];
		const uint8_t *a = recs + (size_t)i * 16 + 12;
		snprintf(txt, sizeof(txt), "www.example.com. 300 IN A %u.%u.%u.%u", a[0], a[1], a[2], a[3]);
		ldns_rr *rr = NULL;
		assert_int_equal(ldns_rr_new_frm_str(&rr, txt, 0, NULL, NULL), LDNS_STATUS_OK);
		ldns_rr_list_push_rr(set, rr);
	}
	/* The RRSIG as a message would carry it: the owner in full instead of the pointer. */
	uint8_t wire[600];
	size_t pos = 0, ol = sizeof(owner);
	memcpy(wire, owner, ol);
	memcpy(wire + ol, rrsig + 2, len - 2);
	assert_int_equal(ldns_wire2rr(&sig, wire, ol + len - 2, &pos, LDNS_SECTION_ANSWER), LDNS_STATUS_OK);
	ldns_status st = ldns_verify_rrsig_keylist(set, sig, keys, NULL);
	ldns_rr_free(sig);
	ldns_rr_list_deep_free(set);
	ldns_rr_list_deep_free(keys);
	return st;
}

static void test_sign_validates(void **state)
{
	static const int algs[] = {P53_SIGN_ALG_ECDSAP256, P53_SIGN_ALG_ED25519};
	uint32_t now = (uint32_t)time(NULL);
	char err[600];

	(void)state;
	for (size_t a = 0; a < 2; a++) {
		struct p53_sign_key k;
		const char *stem = keygen(algs[a], algs[a] == 13 ? "Kp256" : "Ked");
		assert_int_equal(p53_sign_key_load(stem, &k, err, sizeof(err)), 0);
		assert_int_equal(k.alg, algs[a]);
		assert_int_equal(k.flags, 257);
		uint8_t recs[64], rev[64], sig[300];
		size_t rl = recs_of(recs, (const uint8_t *)"\003\001\002", 3);
		recs_of(rev, (const uint8_t *)"\001\002\003", 3);
		int sl = p53_sign_rrset(&k, owner, sizeof(owner), recs, 3, now - 60, now + 3600, sig, sizeof(sig));
		assert_int_equal(sl, (int)p53_sign_rr_len(&k));
		/* Same RRset in another order: one canonical form, one signature for both. */
		assert_int_equal(p53_sign_verify(&k, owner, sizeof(owner), recs, 3, sig, (size_t)sl), 0);
		assert_int_equal(p53_sign_verify(&k, owner, sizeof(owner), rev, 3, sig, (size_t)sl), 0);
		if (ldns_check(stem, recs, 3, sig, (size_t)sl) != LDNS_STATUS_OK)
			fail_msg("alg %d: ldns does not validate our RRSIG", algs[a]);
		/* A changed address, or a changed signature octet, does not validate. */
		recs[rl - 1] ^= 0x40;
		assert_int_not_equal(p53_sign_verify(&k, owner, sizeof(owner), recs, 3, sig, (size_t)sl), 0);
		assert_int_not_equal(ldns_check(stem, recs, 3, sig, (size_t)sl), LDNS_STATUS_OK);
		recs[rl - 1] ^= 0x40;
		sig[sl - 5] ^= 1;
		assert_int_not_equal(p53_sign_verify(&k, owner, sizeof(owner), recs, 3, sig, (size_t)sl), 0);
		p53_sign_key_free(&k);
	}
}

static void test_bad_keys(void **state)
{
	char err[600], path[600], cmd[1400];
	const char *ed = keygen(P53_SIGN_ALG_ED25519, "Kbad");
	static const struct { const char *key, *priv, *msg; } rows[] = {
		{ "example.com. IN DNSKEY 257 3 8 AwEAAQ==", NULL, "algorithm not supported" },
		{ "example.com. IN DNSKEY 1 3 15 AAAA", NULL, "not a zone key" },
		{ "example.com. IN DNSKEY 257 3 15 AAAA", NULL, "public key of the wrong size" },
		{ "example.com. IN A 192.0.2.1", NULL, "expected a DNSKEY record" },
		{ NULL, "Private-key-format: v1.3\nAlgorithm: 15\n", "no PrivateKey line" },
		{ NULL, "Private-key-format: v1.3\nAlgorithm: 13\nPrivateKey: AAAA\n",
		  "algorithm or key size differs" },
		{ NULL, "Private-key-format: v1.3\nAlgorithm: 15\nPrivateKey: AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n",
		  "does not match the DNSKEY" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct p53_sign_key k;
		/* A fresh good pair, then one file replaced by the row's. */
		snprintf(cmd, sizeof(cmd), "cp %s.key %s/Krow.key && cp %s.private %s/Krow.private", ed, dir, ed, dir);
		assert_int_equal(system(cmd), 0);
		snprintf(path, sizeof(path), "%s/Krow.%s", dir, rows[i].key != NULL ? "key" : "private");
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(rows[i].key != NULL ? rows[i].key : rows[i].priv, f);
		fclose(f);
		snprintf(path, sizeof(path), "%s/Krow.private", dir);
		if (p53_sign_key_load(path, &k, err, sizeof(err)) == 0) {
			p53_sign_key_free(&k);
			fail_msg("row %zu accepted; want \"%s\"", i, rows[i].msg);
		}
		if (strstr(err, rows[i].msg) == NULL)
			fail_msg("row %zu: want \"%s\" in \"%s\"", i, rows[i].msg, err);
	}
}

/* A one-record steering config over the sources' locations (none: the fallback only). */
static void *signed_table(struct p53_sign_key *k, size_t *len, uint32_t expire)
{
	static struct p53_steer_record r;
	struct p53_steer_conf c = { .records = &r, .n_records = 1 };
	struct p53_steer_sources s;
	bool up[1][P53_STEER_MAX_POOL];
	char err[300];

	memset(&r, 0, sizeof(r));
	memset(&s, 0, sizeof(s));
	memset(up, 1, sizeof(up));
	r.owner = "www.example.com.";
	memcpy(r.lname, owner, sizeof(owner));
	r.lname_len = sizeof(owner);
	r.type = 1;
	r.ttl = 300;
	r.n_policy = 0;
	for (int i = 0; i < 3; i++) {
		r.pool[i].name = "t";
		r.pool[i].weight = 1;
		r.pool[i].addr[0] = 10;
		r.pool[i].addr[3] = (uint8_t)(3 - i);
	}
	r.n_pool = 3;
	struct p53_steer_signing sg = { .keys = k, .n_keys = 1, .inception = expire - 7200,
					.expiration = expire };
	void *t = p53_steer_build_signed(&c, &s, up, &sg, len, err, sizeof(err));
	if (t == NULL)
		fail_msg("%s", err);
	assert_int_equal(sg.n_signed, 1);
	assert_int_equal(sg.n_verified, 1);
	return t;
}

static void test_signed_table(void **state)
{
	struct p53_sign_key k;
	char err[600];
	size_t len;
	uint32_t now = (uint32_t)time(NULL);

	(void)state;
	const char *stem = keygen(P53_SIGN_ALG_ECDSAP256, "Ktable");
	assert_int_equal(p53_sign_key_load(stem, &k, err, sizeof(err)), 0);
	uint8_t *t = signed_table(&k, &len, now + 3600);
	const char *why = NULL;
	assert_int_equal(p53_steer_check(t, len, &why), 0);
	const struct p53_steer_variant *v = p53_steer_variant(t, 0);
	assert_int_equal(v->count, 3);
	assert_int_equal(v->sig_count, 1);
	assert_int_equal(v->sig_len, p53_sign_rr_len(&k));
	assert_int_equal(p53_steer_hdr(t)->sig_expire, now + 3600);
	/* The signature after the records is the variant's, and ldns validates it. */
	const uint8_t *rd = p53_steer_rdata(t, v);
	assert_int_equal(ldns_check(stem, rd, 3, rd + v->rdata_len, v->sig_len), LDNS_STATUS_OK);

	/* Signature bytes that do not add up are refused before any worker reads them. */
	struct p53_steer_variant *w = (struct p53_steer_variant *)v;
	w->sig_len += 1;
	assert_int_not_equal(p53_steer_check(t, len, &why), 0);
	w->sig_len -= 1;
	w->sig_count = 2;
	assert_int_not_equal(p53_steer_check(t, len, &why), 0);
	assert_string_equal(why, "variant records do not fill their bytes");
	w->sig_count = 1;

	/* The health margin covers the variants: 3600 s left fails a 7200 s margin only. */
	struct p53_steer_pub p;
	char msg[200];
	memset(&p, 0, sizeof(p));
	p.cur = t;
	assert_int_equal(p53_steer_sig_check(&p, now, 1800, msg, sizeof(msg)), 0);
	assert_int_equal(p53_steer_sig_check(&p, now, 7200, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "steering: variant signatures expire in 3600 s"));
	assert_int_equal(p53_steer_sig_check(&p, now + 4000, 0, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "expired 400 s ago"));
	free(t);
	p53_sign_key_free(&k);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sign_validates),
		cmocka_unit_test(test_bad_keys),
		cmocka_unit_test(test_signed_table),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
