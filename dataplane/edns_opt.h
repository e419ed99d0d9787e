/*
 * Parsers for the data of two EDNS options (RFC 6891 §6.1.2), as pure wire functions: the
 * bytes of one option's data in, a verdict and the fields out. Like dnsmsg.h they never pick
 * an RCODE; the responder answers FORMERR for what they reject (RFC 7873 §5.2.2, RFC 7871
 * §7.2.1).
 *
 *   COOKIE (10, RFC 7873 §4): a client cookie of 8 bytes, then optionally a server cookie of
 *   8 to 32 bytes. Whether a server cookie is ours is cookie.h's question, not this one's.
 *
 *   EDNS Client Subnet (8, RFC 7871 §6): FAMILY (1 IPv4, 2 IPv6), SOURCE PREFIX-LENGTH,
 *   SCOPE PREFIX-LENGTH, ADDRESS truncated to the source prefix. The steering work reads the
 *   address from here.
 *
 * Per-packet safe: no allocation, no locks, no syscalls; each reads exactly `len` bytes.
 * Thread-safe (no state).
 */
#ifndef P53_EDNS_OPT_H
#define P53_EDNS_OPT_H

#include <stddef.h>
#include <stdint.h>

#define P53_COOKIE_CLIENT_LEN 8
#define P53_COOKIE_SERVER_MIN 8
#define P53_COOKIE_SERVER_MAX 32

struct p53_cookie_opt {
	const uint8_t *client;          /* the 8-byte client cookie (points into the message) */
	const uint8_t *server;          /* the server cookie, or NULL when only a client cookie */
	uint8_t server_len;             /* 0, or 8..32 */
};

/**
 * Parse the data of a COOKIE option.
 *
 * RFC 7873 §5.2.2: a length under 8 (no whole client cookie), 9 to 15 (a server cookie
 * shorter than 8) or over 40 (longer than 32) is malformed.
 *
 * @param data  the option data (after OPTION-CODE and OPTION-LENGTH)
 * @param len   OPTION-LENGTH
 * @param out   filled on success; its pointers point into `data`
 * @return 0, or -1 when malformed.
 */
int p53_edns_cookie_parse(const uint8_t *data, size_t len, struct p53_cookie_opt *out);

/* ECS address families (IANA Address Family Numbers). */
enum { P53_ECS_FAMILY_IPV4 = 1, P53_ECS_FAMILY_IPV6 = 2 };

/* What p53_edns_ecs_parse() found, in the order it checks. */
enum p53_ecs_status {
	P53_ECS_OK = 0,
	P53_ECS_SHORT,          /* fewer than 4 bytes: no FAMILY and prefix lengths */
	P53_ECS_FAMILY,         /* FAMILY neither 1 nor 2 (RFC 7871 §7.2.1: "e.g., an unknown FAMILY") */
	P53_ECS_SOURCE,         /* SOURCE PREFIX-LENGTH over 32 (IPv4) or 128 (IPv6) */
	P53_ECS_SCOPE,          /* SCOPE PREFIX-LENGTH not 0: it MUST be 0 in queries (§6) */
	P53_ECS_ADDR_LEN,       /* ADDRESS not exactly ceil(SOURCE / 8) bytes (§6) */
	P53_ECS_ADDR_BITS,      /* ADDRESS bits set past SOURCE PREFIX-LENGTH (§6) */
	P53_ECS__MAX
};

/** Names of enum p53_ecs_status, for tests and logs. */
extern const char *const p53_ecs_status_names[P53_ECS__MAX];

struct p53_ecs_opt {
	uint16_t family;                /* P53_ECS_FAMILY_IPV4 or _IPV6 */
	uint8_t source;                 /* SOURCE PREFIX-LENGTH */
	uint8_t scope;                  /* SCOPE PREFIX-LENGTH (0 when valid in a query) */
	uint8_t addr[16];               /* the address, zero-filled past the prefix; 4 bytes
					   used for IPv4 */
};

/**
 * Parse and validate the data of an ECS option in a query (RFC 7871 §6, §7.2.1).
 *
 * @param data  the option data
 * @param len   OPTION-LENGTH
 * @param out   filled when P53_ECS_OK (and partly otherwise; do not use it then)
 * @return P53_ECS_OK or the first defect found.
 */
enum p53_ecs_status p53_edns_ecs_parse(const uint8_t *data, size_t len, struct p53_ecs_opt *out);

#endif /* P53_EDNS_OPT_H */
