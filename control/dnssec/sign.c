/* RRSIGs over pre-encoded RRsets with OpenSSL; see sign.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "control/conf/schema.h"
#include "control/dnssec/sign.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#define RRSIG_FIXED 18  /* Type Covered .. Key Tag (RFC 4034 §3.1) */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int fail(char *err, size_t errlen, const char *path, const char *what)
{
	snprintf(err, errlen, "%s: %s", path, what);
	return -1;
}

/* "stem", "stem.key" or "stem.private" -> stem + suffix */
static void sibling(char *out, size_t cap, const char *path, const char *suffix)
{
	size_t n = strlen(path);

	if (n > 4 && strcmp(path + n - 4, ".key") == 0)
		n -= 4;
	else if (n > 8 && strcmp(path + n - 8, ".private") == 0)
		n -= 8;
	snprintf(out, cap, "%.*s%s", (int)n, path, suffix);
}

/* The DNSKEY record of the .key file: the first line that is not blank or a comment. */
static ldns_rr *read_dnskey(const char *path, char *err, size_t errlen)
{
	FILE *f = p53_fopen_regular(path);
	char line[4096];
	ldns_rr *rr = NULL;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == ';')
			continue;
		if (ldns_rr_new_frm_str(&rr, p, 0, NULL, NULL) != LDNS_STATUS_OK ||
		    ldns_rr_get_type(rr) != LDNS_RR_TYPE_DNSKEY || ldns_rr_rd_count(rr) != 4) {
			ldns_rr_free(rr);
			rr = NULL;
			fail(err, errlen, path, "expected a DNSKEY record");
		}
		break;
	}
	fclose(f);
	if (rr == NULL && err[0] == '\0')
		fail(err, errlen, path, "no DNSKEY record");
	return rr;
}

/* "PrivateKey: <base64>" of a BIND private-key file, decoded. */
static int read_private(const char *path, uint8_t *key, size_t cap, size_t *len, int *alg,
			char *err, size_t errlen)
{
	FILE *f = p53_fopen_regular(path);
	char line[4096];
	int found = 0;

	*alg = -1;
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (strncmp(line, "Algorithm:", 10) == 0)
			*alg = atoi(line + 10);
		if (strncmp(line, "PrivateKey:", 11) != 0)
			continue;
		const char *b = line + 11;
		while (*b == ' ' || *b == '\t')
			b++;
		uint8_t buf[256];
		size_t bl = strlen(b);
		while (bl > 0 && isspace((unsigned char)b[bl - 1]))
			bl--;
		int n = bl > 0 && bl % 4 == 0 && bl / 4 * 3 <= sizeof(buf) ?
			EVP_DecodeBlock(buf, (const unsigned char *)b, (int)bl) : -1;
		/* EVP_DecodeBlock counts the padding as zero octets. */
		for (size_t j = bl; n > 0 && j > 0 && b[j - 1] == '='; j--)
			n--;
		if (n <= 0 || (size_t)n > cap) {
			fclose(f);
			OPENSSL_cleanse(line, sizeof(line));
			return fail(err, errlen, path, "PrivateKey is not base64 of a key this size");
		}
		memcpy(key, buf, (size_t)n);
		OPENSSL_cleanse(buf, sizeof(buf));
		*len = (size_t)n;
		found = 1;
	}
	OPENSSL_cleanse(line, sizeof(line));
	fclose(f);
	if (!found)
		return fail(err, errlen, path, "no PrivateKey line (ECDSAP256SHA256 and ED25519 keys only)");
	return 0;
}

static EVP_PKEY *ec_key(const uint8_t *pub64, const uint8_t *priv32)
{
	uint8_t point[65];
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	EVP_PKEY *pk = NULL;
	BIGNUM *d = NULL;

	point[0] = 0x04; /* uncompressed: the DNSKEY holds x || y (RFC 6605 §4) */
	memcpy(point + 1, pub64, 64);
	if (bld == NULL || ctx == NULL ||
	    !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) ||
	    !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point)))
		goto out;
	if (priv32 != NULL && ((d = BN_bin2bn(priv32, 32, NULL)) == NULL ||
			       !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d)))
		goto out;
	if ((params = OSSL_PARAM_BLD_to_param(bld)) == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pk, priv32 != NULL ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
			      params) <= 0)
		pk = NULL;
out:
	BN_clear_free(d);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	EVP_PKEY_CTX_free(ctx);
	return pk;
}

int p53_sign_key_load(const char *path, struct p53_sign_key *k, char *err, size_t errlen)
{
	char kpath[4096], ppath[4096];
	uint8_t priv[64];
	size_t priv_len = 0;
	int palg;
	ldns_rr *rr;

	memset(k, 0, sizeof(*k));
	err[0] = '\0';
	sibling(kpath, sizeof(kpath), path, ".key");
	sibling(ppath, sizeof(ppath), path, ".private");
	if ((rr = read_dnskey(kpath, err, errlen)) == NULL)
		return -1;
	ldns_rdf *owner = ldns_rdf_clone(ldns_rr_owner(rr));
	ldns_dname2canonical(owner);
	if (ldns_rdf_size(owner) > sizeof(k->owner)) {
		ldns_rdf_deep_free(owner);
		ldns_rr_free(rr);
		return fail(err, errlen, kpath, "owner name too long");
	}
	k->owner_len = (uint8_t)ldns_rdf_size(owner);
	memcpy(k->owner, ldns_rdf_data(owner), k->owner_len);
	ldns_rdf_deep_free(owner);
	k->flags = ldns_rdf2native_int16(ldns_rr_rdf(rr, 0));
	k->alg = ldns_rdf2native_int8(ldns_rr_rdf(rr, 2));
	k->tag = ldns_calc_keytag(rr);
	const uint8_t *pub = ldns_rdf_data(ldns_rr_rdf(rr, 3));
	size_t pub_len = ldns_rdf_size(ldns_rr_rdf(rr, 3));
	uint8_t pubc[64];
	if (pub_len <= sizeof(pubc))
		memcpy(pubc, pub, pub_len);
	ldns_rr_free(rr);
	if (k->alg != P53_SIGN_ALG_ECDSAP256 && k->alg != P53_SIGN_ALG_ED25519)
		return fail(err, errlen, kpath, "algorithm not supported (13 ECDSAP256SHA256 and 15 ED25519 are)");
	if ((k->flags & 0x0100) == 0)
		return fail(err, errlen, kpath, "not a zone key (DNSKEY flags bit 7, RFC 4034 §2.1.1)");
	if (pub_len != (k->alg == P53_SIGN_ALG_ED25519 ? 32u : 64u))
		return fail(err, errlen, kpath, "public key of the wrong size for its algorithm");
	if (read_private(ppath, priv, sizeof(priv), &priv_len, &palg, err, errlen) != 0)
		return -1;
	if (palg != k->alg || priv_len != 32) {
		OPENSSL_cleanse(priv, sizeof(priv));
		return fail(err, errlen, ppath, "algorithm or key size differs from the .key file");
	}
	if (k->alg == P53_SIGN_ALG_ED25519) {
		k->priv = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, priv, 32);
		k->pub = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pubc, 32);
	} else {
		k->priv = ec_key(pubc, priv);
		k->pub = ec_key(pubc, NULL);
	}
	OPENSSL_cleanse(priv, sizeof(priv));
	if (k->priv == NULL || k->pub == NULL) {
		p53_sign_key_free(k);
		return fail(err, errlen, ppath, "OpenSSL refused the key");
	}
	/* A .private that does not belong to the .key signs what nobody can validate: try one. */
	static const uint8_t probe[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1};
	uint8_t sig[512];
	int sl = p53_sign_rrset(k, k->owner, k->owner_len, probe, 1, 0, 1, sig, sizeof(sig));
	if (sl < 0 || p53_sign_verify(k, k->owner, k->owner_len, probe, 1, sig, (size_t)sl) != 0) {
		p53_sign_key_free(k);
		return fail(err, errlen, ppath, "the private key does not match the DNSKEY in the .key file");
	}
	k->path = strdup(path);
	if (k->path == NULL) {
		p53_sign_key_free(k);
		return fail(err, errlen, path, "out of memory");
	}
	return 0;
}

void p53_sign_key_free(struct p53_sign_key *k)
{
	EVP_PKEY_free(k->priv);
	EVP_PKEY_free(k->pub);
	free(k->path);
	memset(k, 0, sizeof(*k));
}

size_t p53_sign_rr_len(const struct p53_sign_key *k)
{
	return P53_RR_OWNER_LEN + 10 + RRSIG_FIXED + k->owner_len + P53_SIGN_SIG_LEN;
}

/* RFC 4034 §6.3: RRs of an RRset sort by their canonical RDATA as unsigned octet strings. */
struct rd {
	const uint8_t *p;
	uint16_t len;
};

static int rd_cmp(const void *a, const void *b)
{
	const struct rd *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);

	return c != 0 ? c : (int)x->len - (int)y->len;
}

/* Labels of a canonical wire name, the root not counted (RFC 4034 §3.1.3). */
static uint8_t labels_of(const uint8_t *n)
{
	uint8_t c = 0;

	while (*n != 0) {
		c++;
		n += 1 + *n;
	}
	return c;
}

/*
 * The data a signature covers (RFC 4034 §3.1.8.1): the RRSIG RDATA without the signature,
 * then every RR in canonical form and order with the Original TTL. Returns its length in a
 * malloc'd buffer, or -1.
 */
static long signed_data(const uint8_t *rrsig_fixed, size_t fixed_len, const uint8_t *owner,
			uint8_t owner_len, const uint8_t *recs, uint16_t count, uint8_t **out)
{
	struct rd rds[256];
	const uint8_t *p = recs;
	size_t total = fixed_len;
	uint16_t type = p53_get16(rrsig_fixed);
	uint32_t ttl = get32(rrsig_fixed + 4);

	if (count == 0 || count > 256)
		return -1;
	for (uint16_t i = 0; i < count; i++) {
		p += P53_RR_OWNER_LEN;
		if (p53_get16(p) != type)
			return -1;
		rds[i].len = p53_get16(p + 8);
		rds[i].p = p + 10;
		p += 10u + rds[i].len;
		total += owner_len + 10u + rds[i].len;
	}
	qsort(rds, count, sizeof(rds[0]), rd_cmp);
	uint8_t *b = malloc(total), *w = b;
	if (b == NULL)
		return -1;
	memcpy(w, rrsig_fixed, fixed_len);
	w += fixed_len;
	for (uint16_t i = 0; i < count; i++) {
		if (i > 0 && rd_cmp(&rds[i], &rds[i - 1]) == 0) {
			total -= owner_len + 10u + rds[i].len; /* duplicates are one RR (RFC 2181 §5) */
			continue;
		}
		memcpy(w, owner, owner_len);
		w += owner_len;
		p53_put16(w, type);
		p53_put16(w + 2, 1);
		p53_put32(w + 4, ttl);
		p53_put16(w + 8, rds[i].len);
		memcpy(w + 10, rds[i].p, rds[i].len);
		w += 10u + rds[i].len;
	}
	*out = b;
	return (long)total;
}

int p53_sign_rrset(const struct p53_sign_key *k, const uint8_t *owner, uint8_t owner_len,
		   const uint8_t *recs, uint16_t count, uint32_t inception, uint32_t expiration,
		   uint8_t *out, size_t cap)
{
	size_t rr_len = p53_sign_rr_len(k);
	uint8_t *rd = out + P53_RR_OWNER_LEN + 10, *data = NULL;
	EVP_MD_CTX *md = NULL;
	int rc = -1;

	if (cap < rr_len || count == 0)
		return -1;
	uint16_t type = p53_get16(recs + P53_RR_OWNER_LEN);
	uint32_t ttl = get32(recs + P53_RR_OWNER_LEN + 4);
	out[0] = 0xc0;
	out[1] = 0x0c;
	p53_put16(out + 2, P53_T_RRSIG);
	p53_put16(out + 4, 1);
	p53_put32(out + 6, ttl);        /* RFC 4034 §3: the covered RRset's TTL */
	p53_put16(out + 10, (uint16_t)(rr_len - P53_RR_OWNER_LEN - 10));
	p53_put16(rd, type);
	rd[2] = k->alg;
	rd[3] = labels_of(owner);
	p53_put32(rd + 4, ttl);
	p53_put32(rd + 8, expiration);
	p53_put32(rd + 12, inception);
	p53_put16(rd + 16, k->tag);
	memcpy(rd + RRSIG_FIXED, k->owner, k->owner_len);
	long dl = signed_data(rd, RRSIG_FIXED + k->owner_len, owner, owner_len, recs, count, &data);
	if (dl < 0 || (md = EVP_MD_CTX_new()) == NULL)
		goto out;
	uint8_t *sig = rd + RRSIG_FIXED + k->owner_len;
	if (k->alg == P53_SIGN_ALG_ED25519) {
		size_t sl = P53_SIGN_SIG_LEN;
		if (EVP_DigestSignInit(md, NULL, NULL, NULL, k->priv) <= 0 ||
		    EVP_DigestSign(md, sig, &sl, data, (size_t)dl) <= 0 || sl != P53_SIGN_SIG_LEN)
			goto out;
	} else {
		/* OpenSSL gives DER; the RRSIG holds r and s, 32 octets each (RFC 6605 §4). */
		uint8_t der[80];
		size_t sl = sizeof(der);
		if (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, k->priv) <= 0 ||
		    EVP_DigestSign(md, der, &sl, data, (size_t)dl) <= 0)
			goto out;
		const uint8_t *dp = der;
		ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &dp, (long)sl);
		if (es == NULL)
			goto out;
		int ok = BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, 32) == 32 &&
			 BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + 32, 32) == 32;
		ECDSA_SIG_free(es);
		if (!ok)
			goto out;
	}
	rc = (int)rr_len;
out:
	EVP_MD_CTX_free(md);
	free(data);
	return rc;
}

int p53_sign_verify(const struct p53_sign_key *k, const uint8_t *owner, uint8_t owner_len,
		    const uint8_t *recs, uint16_t count, const uint8_t *rrsig, size_t rrsig_len)
{
	uint8_t *data = NULL, der[80];
	EVP_MD_CTX *md = NULL;
	ECDSA_SIG *es = NULL;
	int rc = -1;

	if (rrsig_len != p53_sign_rr_len(k) || p53_get16(rrsig + 2) != P53_T_RRSIG)
		return -1;
	const uint8_t *rd = rrsig + P53_RR_OWNER_LEN + 10;
	const uint8_t *sig = rd + RRSIG_FIXED + k->owner_len;
	if (rd[2] != k->alg || p53_get16(rd + 16) != k->tag ||
	    memcmp(rd + RRSIG_FIXED, k->owner, k->owner_len) != 0 || rd[3] != labels_of(owner))
		return -1;
	long dl = signed_data(rd, RRSIG_FIXED + k->owner_len, owner, owner_len, recs, count, &data);
	if (dl < 0 || (md = EVP_MD_CTX_new()) == NULL)
		goto out;
	if (k->alg == P53_SIGN_ALG_ED25519) {
		if (EVP_DigestVerifyInit(md, NULL, NULL, NULL, k->pub) <= 0 ||
		    EVP_DigestVerify(md, sig, P53_SIGN_SIG_LEN, data, (size_t)dl) != 1)
			goto out;
	} else {
		BIGNUM *r = BN_bin2bn(sig, 32, NULL), *s = BN_bin2bn(sig + 32, 32, NULL);
		if ((es = ECDSA_SIG_new()) == NULL || r == NULL || s == NULL || !ECDSA_SIG_set0(es, r, s)) {
			BN_free(r);
			BN_free(s);
			goto out;
		}
		uint8_t *dp = der;
		int n = i2d_ECDSA_SIG(es, &dp);
		if (n <= 0 || EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, k->pub) <= 0 ||
		    EVP_DigestVerify(md, der, (size_t)n, data, (size_t)dl) != 1)
			goto out;
	}
	rc = 0;
out:
	ECDSA_SIG_free(es);
	EVP_MD_CTX_free(md);
	free(data);
	return rc;
}
