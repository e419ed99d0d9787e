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
#include "control/zone/image_build.h"
#include "control/steer/steer_pub.h"
#include "dataplane/image.h"
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
	static struct p53_steer_target pool[3];
	struct p53_steer_conf c = { .records = &r, .n_records = 1 };
	struct p53_steer_sources s;
	char err[300];

	memset(&r, 0, sizeof(r));
	memset(pool, 0, sizeof(pool));
	memset(&s, 0, sizeof(s));
	r.pool = pool;
	r.owner = "www.example.com.";
	r.lname = (uint8_t *)(uintptr_t)owner;
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
	void *t = p53_steer_build_signed(&c, &s, NULL, &sg, len, err, sizeof(err));
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
	/* So are checksum sums (steer.h) that are not those of the bytes: of the records, and
	   of the records with their RRSIG. */
	w->sum ^= 1;
	assert_int_not_equal(p53_steer_check(t, len, &why), 0);
	assert_string_equal(why, "variant sums do not match its bytes");
	w->sum ^= 1;
	w->sig_sum ^= 0x100;
	assert_int_not_equal(p53_steer_check(t, len, &why), 0);
	assert_string_equal(why, "variant sums do not match its bytes");
	w->sig_sum ^= 0x100;
	assert_int_equal(p53_steer_check(t, len, &why), 0);

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

/*
 * The denial the compiler makes for a steered owner its zone's chain lacks
 * (control/zone/dnssec_build.c, p53_dnssec_steer_denial): its bytes, and its RRSIG verified
 * with the key's DNSKEY.
 */
static const uint8_t map_owner[] = "\003map\007example\003com";

static void no_warn(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* Compile `zone` with a steered A at map.example.com. signed by k; the node named `name`. */
static void *denial_image(const char *zone, const struct p53_sign_key *k, const uint8_t *name,
			  size_t name_len, const struct p53_image_node **nd)
{
	static const uint8_t addr[4] = {10, 0, 0, 1};
	char path[600], err[600];
	size_t len;
	uint32_t now = (uint32_t)time(NULL);

	snprintf(path, sizeof(path), "%s/example.com.zone", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(zone, f);
	fclose(f);
	struct p53_zone_extra ex = { .lname = map_owner, .lname_len = sizeof(map_owner), .type = 1,
				     .ttl = 300, .addrs = addr, .rdlen = 4, .n = 1, .line = 7,
				     .owner = "map.example.com." };
	struct p53_zone_src src = { .name = "example.com.", .file = path, .cfg_file = "pop53.yaml",
				    .extra = &ex, .n_extra = 1, .sign_key = k,
				    .sign_inception = now - 3600, .sign_expiration = now + 86400 };
	void *img = p53_image_build(&src, 1, &len, err, sizeof(err), no_warn, NULL);
	if (img == NULL)
		fail_msg("%s", err);
	*nd = NULL;
	for (uint32_t i = 0; i < p53_image_hdr(img)->n_nodes; i++) {
		const struct p53_image_node *n = p53_image_node(img, i);
		if (n->name_len == name_len && memcmp(p53_image_node_name(img, n), name, name_len) == 0)
			*nd = n;
	}
	assert_non_null(*nd);
	return img;
}

/* The node's RRset of `type`: one record whose TTL and RDATA are these, and one RRSIG over it
 * that verifies with k. */
static void denial_check(const void *img, const struct p53_image_node *nd, const struct p53_sign_key *k,
			 uint16_t type, const uint8_t *rdata, size_t rdlen)
{
	uint32_t rsi = p53_image_node_rrset(img, nd, type);
	assert_int_not_equal(rsi, P53_NONE);
	const struct p53_image_rrset *rs = p53_image_rrset(img, rsi);
	const uint8_t *r = p53_image_rdata(img, rs);
	assert_int_equal(rs->count, 1);
	assert_int_equal(rs->sig_count, 1);
	assert_true(rs->flags & P53_RRSET_STEERED); /* from the config: not transferred */
	assert_int_equal(rs->rdata_len, 2 + 10 + rdlen);
	static const uint8_t head[] = {0xc0, 0x0c, 0, 0, 0, 1, 0, 0, 1, 44}; /* TTL 300 */
	assert_memory_equal(r + 4, head + 4, 6);
	assert_int_equal(r[2] << 8 | r[3], type);
	assert_int_equal(r[10] << 8 | r[11], rdlen);
	assert_memory_equal(r + 12, rdata, rdlen);
	assert_int_equal(p53_sign_verify(k, p53_image_node_name(img, nd), nd->name_len, r, 1,
					 r + rs->rdata_len, rs->sig_len), 0);
}

static void test_steered_denial(void **state)
{
	struct p53_sign_key k;
	char err[600];
	const struct p53_image_node *nd;

	(void)state;
	assert_int_equal(p53_sign_key_load(keygen(P53_SIGN_ALG_ED25519, "Kdenial"), &k, err, sizeof(err)), 0);
	/* NSEC, TTL 300 (the zone's NSECs'): the next name is that of the NSEC covering map
	 * (the apex's: ns1), types A RRSIG NSEC. */
	static const char nsec_zone[] =
		"$ORIGIN example.com.\n$TTL 3600\n"
		"@ SOA ns1 host 1 7200 900 1209600 300\n@ NS ns1\n"
		"@ 300 NSEC ns1 NS SOA RRSIG NSEC\n"
		"@ RRSIG SOA 15 2 3600 20300101000000 20200101000000 1 example.com. AAAA\n"
		"ns1 A 192.0.2.1\nns1 300 NSEC example.com. A RRSIG NSEC\n";
	void *img = denial_image(nsec_zone, &k, map_owner, sizeof(map_owner), &nd);
	static const uint8_t nsec_rd[] = "\003ns1\007example\003com\000" "\000\006\100\000\000\000\000\003";
	denial_check(img, nd, &k, 47, nsec_rd, sizeof(nsec_rd) - 1);
	free(img);

	/* NSEC3 (algorithm 1, flags 0, 5 iterations, salt aabb): at the hash of map.example.com.,
	 * next hash = that + 1, types A RRSIG. The hash from ldns. */
	static const char nsec3_zone[] =
		"$ORIGIN example.com.\n$TTL 3600\n"
		"@ SOA ns1 host 1 7200 900 1209600 300\n@ NS ns1\n@ NSEC3PARAM 1 0 5 aabb\n"
		"@ RRSIG SOA 15 2 3600 20300101000000 20200101000000 1 example.com. AAAA\n"
		"ns1 A 192.0.2.1\n"
		"0123456789abcdefghijklmnopqrstuv 300 NSEC3 1 0 5 aabb 0123456789abcdefghijklmnopqrstuv A\n";
	static const uint8_t salt[] = {0xaa, 0xbb};
	ldns_rdf *dn = ldns_dname_new_frm_str("map.example.com.");
	ldns_rdf *h = ldns_nsec3_hash_name(dn, 1, 5, 2, salt);
	assert_non_null(h);
	uint8_t hname[64];
	/* ldns gives the hash label alone: lower case it and add the zone. */
	const uint8_t *hl = ldns_rdf_data(h);
	assert_int_equal(hl[0], 32);
	for (int i = 0; i <= 32; i++)
		hname[i] = (uint8_t)(i == 0 ? 32 : (hl[i] >= 'A' && hl[i] <= 'Z' ? hl[i] + 32 : hl[i]));
	memcpy(hname + 33, "\007example\003com", 13);
	uint8_t bin[20] = {0};
	for (int c = 0; c < 32; c++) { /* base32hex back to the 20 octets */
		uint8_t ch = hname[1 + c];
		int v = ch <= '9' ? ch - '0' : ch - 'a' + 10;
		for (int q = 0; q < 5; q++)
			if (v & (0x10 >> q))
				bin[(c * 5 + q) / 8] |= (uint8_t)(0x80 >> ((c * 5 + q) % 8));
	}
	for (int q = 19; q >= 0 && ++bin[q] == 0; q--)
		;
	uint8_t rd[64] = {1, 0, 0, 5, 2, 0xaa, 0xbb, 20};
	memcpy(rd + 8, bin, 20);
	static const uint8_t bm[] = {0, 6, 0x40, 0, 0, 0, 0, 0x02};
	memcpy(rd + 28, bm, sizeof(bm));
	img = denial_image(nsec3_zone, &k, hname, 46, &nd);
	denial_check(img, nd, &k, 50, rd, 28 + sizeof(bm));
	free(img);
	ldns_rdf_deep_free(h);
	ldns_rdf_deep_free(dn);
	p53_sign_key_free(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sign_validates),
		cmocka_unit_test(test_bad_keys),
		cmocka_unit_test(test_signed_table),
		cmocka_unit_test(test_steered_denial),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
