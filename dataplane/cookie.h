/*
 * DNS server cookies (RFC 7873) in the interoperable format of RFC 9018, so every node of an
 * anycast service that shares the secret accepts the cookies the others issued.
 *
 *   Server Cookie = Version (1) | Reserved (3, zero) | Timestamp (4) | Hash (8)    16 bytes
 *   Hash = SipHash-2-4(Client Cookie | Version | Reserved | Timestamp | Client-IP, Secret)
 *
 * Version is 1, Timestamp is seconds since the epoch (serial number arithmetic, RFC 1982),
 * Client-IP is the source address as 4 or 16 bytes. A server cookie is valid when it has
 * this shape, its hash matches under the current secret or the previous one (accepted during
 * rollover), and its timestamp lies at most an hour in the past and at most five minutes in
 * the future (RFC 9018 §4.3).
 *
 * Per-packet safe: no allocation, no locks, no syscalls; the secrets are read-only (they live
 * in the RCU-published guard table, dataplane/guard.h). Thread-safe.
 */
#ifndef P53_COOKIE_H
#define P53_COOKIE_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/siphash.h"

#define P53_COOKIE_SECRET_LEN P53_SIPHASH_KEY_LEN
#define P53_COOKIE_SERVER_LEN 16        /* what we issue (RFC 9018 §4.1) */
#define P53_COOKIE_VERSION 1
#define P53_COOKIE_PAST_S 3600          /* RFC 9018 §4.3: valid for an hour back... */
#define P53_COOKIE_FUTURE_S 300         /* ...and five minutes ahead (clock skew) */
#define P53_COOKIE_REISSUE_S 1800       /* §4.3: issue a fresh one past half an hour */

struct p53_cookie_secrets {
	uint8_t cur[P53_COOKIE_SECRET_LEN];     /* issues and checks */
	uint8_t prev[P53_COOKIE_SECRET_LEN];    /* only checks, during rollover */
	uint8_t have_prev;
};

/**
 * Make the 16-byte server cookie for a client cookie and client address at time `now`.
 *
 * @param addr      client address, `addr_len` 4 (IPv4) or 16 (IPv6) bytes
 * @param now       seconds since the epoch
 * @param out       16 bytes written
 */
void p53_cookie_make(const uint8_t secret[P53_COOKIE_SECRET_LEN], const uint8_t client[8],
		     const uint8_t *addr, size_t addr_len, uint32_t now, uint8_t out[P53_COOKIE_SERVER_LEN]);

enum p53_cookie_check {
	P53_COOKIE_BAD = 0,     /* not ours: wrong length, version, hash, or out of its time */
	P53_COOKIE_OK,          /* ours, under the current secret, recent: may be echoed */
	P53_COOKIE_OK_REISSUE,  /* ours, but under the previous secret or older than half an
				   hour: valid, answer with a fresh one */
};

/**
 * Check a server cookie a client sent back.
 *
 * @param server      the server cookie, `server_len` bytes (8..32 as parsed)
 * @return enum p53_cookie_check.
 */
enum p53_cookie_check p53_cookie_check(const struct p53_cookie_secrets *s, const uint8_t client[8],
				       const uint8_t *server, size_t server_len, const uint8_t *addr,
				       size_t addr_len, uint32_t now);

#endif /* P53_COOKIE_H */
