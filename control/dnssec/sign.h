/*
 * Online signing on the control thread: the keys of `dnssec.signing_keys` (docs/CONFIG.md)
 * and RRSIG records (RFC 4034 §3) over pre-encoded RRsets, for the steering variants
 * (control/steer/steer_build.c). Zones themselves stay signed elsewhere; this signs only
 * what pop53 makes up per client and therefore no signer elsewhere can see.
 *
 * A key is a BIND-format pair as dnssec-keygen and ldns-keygen write it: K<zone>+<alg>+<tag>.key
 * (the DNSKEY record) and .private (v1.2/1.3, "PrivateKey: <base64>"). Algorithms 13
 * (ECDSAP256SHA256, RFC 6605) and 15 (ED25519, RFC 8080), through OpenSSL's EVP interface.
 * The key's owner is the zone it signs for (the RRSIG's Signer's Name).
 *
 * Signing and verifying allocate inside OpenSSL: control thread, start-up and pop53ctl only,
 * never a worker. Not thread-safe per key (one EVP context at a time is enough here).
 */
#ifndef P53_DNSSEC_SIGN_H
#define P53_DNSSEC_SIGN_H

#include <stddef.h>
#include <stdint.h>

#define P53_SIGN_ALG_ECDSAP256 13
#define P53_SIGN_ALG_ED25519   15
#define P53_SIGN_SIG_LEN       64  /* both: r || s (RFC 6605 §4), or the EdDSA signature */
#define P53_SIGN_MAX_KEYS      16

struct p53_sign_key {
	char *path;                     /* as configured, for messages */
	uint8_t owner[255];             /* canonical wire form: the zone */
	uint8_t owner_len;
	uint16_t flags;                 /* DNSKEY flags (256 ZSK, 257 KSK) */
	uint8_t alg;
	uint16_t tag;                   /* key tag, RFC 4034 Appendix B */
	void *priv;                     /* EVP_PKEY with the private key */
	void *pub;                      /* EVP_PKEY from the DNSKEY alone: verifies */
};

/**
 * Load a key pair. `path` is the .private file, the .key file, or their common stem.
 * @return 0, or -1 with err = "path: reason" (nothing to free then).
 */
int p53_sign_key_load(const char *path, struct p53_sign_key *k, char *err, size_t errlen);

void p53_sign_key_free(struct p53_sign_key *k);

/** Bytes of one pre-encoded RRSIG record made by this key (owner pointer, header, RDATA). */
size_t p53_sign_rr_len(const struct p53_sign_key *k);

/**
 * Sign an RRset held as the image pre-encodes it (image.h: per record C0 0C, TYPE, CLASS,
 * TTL, RDLENGTH, RDATA; RDATA without domain names, as A and AAAA), owned by `owner`
 * (canonical wire form, at or below the key's zone, no wildcard).
 * Writes one pre-encoded RRSIG record (C0 0C, 46, IN, the RRset's TTL, RDLENGTH, RDATA:
 * Type Covered, Algorithm, Labels, Original TTL, Expiration, Inception, Key Tag, Signer's
 * Name, Signature) to out.
 * @return its length (p53_sign_rr_len), or -1 (bad input, out too small, OpenSSL failure).
 */
int p53_sign_rrset(const struct p53_sign_key *k, const uint8_t *owner, uint8_t owner_len,
		   const uint8_t *recs, uint16_t count, uint32_t inception, uint32_t expiration,
		   uint8_t *out, size_t cap);

/**
 * Verify a pre-encoded RRSIG record over the same pre-encoded RRset with the DNSKEY's public
 * key only (RFC 4035 §5.3), so a mismatched private key is caught.
 * @return 0 when it validates, -1 when not.
 */
int p53_sign_verify(const struct p53_sign_key *k, const uint8_t *owner, uint8_t owner_len,
		    const uint8_t *recs, uint16_t count, const uint8_t *rrsig, size_t rrsig_len);

#endif /* P53_DNSSEC_SIGN_H */
