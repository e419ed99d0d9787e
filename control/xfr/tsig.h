/*
 * TSIG (RFC 8945) on DNS messages in wire form: signing our requests (SOA queries, IXFR and
 * AXFR) and NOTIFY responses, verifying NOTIFYs and the primary's responses, including a
 * transfer's stream of messages where only every Nth may be signed (§5.3.1). HMAC from
 * OpenSSL (EVP_MAC). Keys come from the config (control/xfr/conf.h); their secrets are never
 * logged.
 *
 * Control thread and transfer threads; no shared state (each exchange has its own struct).
 */
#ifndef P53_XFR_TSIG_H
#define P53_XFR_TSIG_H

#include <stddef.h>
#include <stdint.h>

#include "control/xfr/conf.h"

#define P53_TSIG_MAC_MAX  64    /* HMAC-SHA512 */
#define P53_TSIG_FUDGE    300   /* seconds, RFC 8945 §10 recommends 300 */
#define P53_TSIG_MAX_UNSIGNED 99 /* unsigned messages allowed between signed ones, §5.3.1 */

/* TSIG error codes (RFC 8945 §3) and what went wrong in a verification. */
enum p53_tsig_status {
	P53_TSIG_OK = 0,
	P53_TSIG_NONE,          /* no TSIG record in the message */
	P53_TSIG_FORMERR,       /* TSIG malformed, not last, or not in additional */
	P53_TSIG_BADKEY,        /* unknown key or algorithm (TSIG error 17) */
	P53_TSIG_BADSIG,        /* MAC does not verify (16) */
	P53_TSIG_BADTIME,       /* time signed outside the fudge (18) */
	P53_TSIG_BADTRUNC,      /* MAC truncated (22): we do not accept truncation */
	P53_TSIG_ERROR,         /* the peer's TSIG carries an error code (it rejected ours) */
	P53_TSIG_UNSIGNED,      /* transfer: too many unsigned messages, or the last unsigned */
};

enum { P53_TSIG_E_BADSIG = 16, P53_TSIG_E_BADKEY = 17, P53_TSIG_E_BADTIME = 18,
       P53_TSIG_E_BADTRUNC = 22 };

/** What a TSIG record says (p53_tsig_find). Pointers into the message. */
struct p53_tsig_rr {
	size_t rr_off;          /* where the TSIG RR starts (the message before it is signed) */
	uint8_t name[256];      /* key name, canonical wire form */
	uint8_t name_len;
	uint8_t alg[256];       /* algorithm name, canonical wire form */
	uint8_t alg_len;
	uint64_t time_signed;
	uint16_t fudge;
	const uint8_t *mac;
	uint16_t mac_len;
	uint16_t orig_id;
	uint16_t error;
	uint16_t other_len;
	const uint8_t *other;
};

/**
 * Find and parse the TSIG record: it must be the last record of the additional section, and
 * only one (RFC 8945 §5.1).
 * @return P53_TSIG_OK, P53_TSIG_NONE, or P53_TSIG_FORMERR.
 */
enum p53_tsig_status p53_tsig_find(const uint8_t *msg, size_t len, struct p53_tsig_rr *t);

/**
 * Sign a message in place: append the TSIG record and bump ARCOUNT. A request is signed with
 * req_mac NULL; a response with the request's MAC.
 *
 * @param len      message length in, signed length out
 * @param cap      bytes available at msg
 * @param error    TSIG error to send (0 normally)
 * @param now      time signed (seconds since the epoch)
 * @param mac      when not NULL, the MAC written (P53_TSIG_MAC_MAX bytes), *mac_len its length
 * @return 0, or -1 (no room, crypto failure).
 */
int p53_tsig_sign(uint8_t *msg, size_t *len, size_t cap, const struct p53_tsig_key *key,
		  const uint8_t *req_mac, uint16_t req_mac_len, uint16_t error, uint64_t now,
		  uint8_t *mac, uint16_t *mac_len);

/**
 * Sign the next message of a response stream (an AXFR or IXFR we serve), RFC 8945 §5.3.1: the
 * digest covers the prior MAC (the request's for the first message, p53_tsig_sign; the last
 * one sent for the others), the message and the timers only. We sign every message.
 * Same parameters and return as p53_tsig_sign.
 */
int p53_tsig_sign_next(uint8_t *msg, size_t *len, size_t cap, const struct p53_tsig_key *key,
		       const uint8_t *prior_mac, uint16_t prior_len, uint64_t now, uint8_t *mac,
		       uint16_t *mac_len);

/** Bytes the TSIG record p53_tsig_sign appends with this key (room to keep free). */
size_t p53_tsig_size(const struct p53_tsig_key *key);

/**
 * Append an unsigned TSIG error record (empty MAC) for a request that failed verification
 * with BADKEY or BADSIG (RFC 8945 §5.3.2: such errors are not signed), echoing the request's
 * key and algorithm names.
 * @return 0, or -1 when there is no room.
 */
int p53_tsig_append_error(uint8_t *msg, size_t *len, size_t cap, const struct p53_tsig_rr *req,
			  uint16_t error, uint64_t now);

/**
 * Verify one request (NOTIFY) against a key: key name and algorithm, time within the fudge,
 * then the MAC over the message without its TSIG (original ID, ARCOUNT - 1).
 * @return P53_TSIG_OK, or BADKEY (name or algorithm differ), BADTIME, BADSIG, BADTRUNC.
 */
enum p53_tsig_status p53_tsig_verify(const uint8_t *msg, size_t len, const struct p53_tsig_rr *t,
				     const struct p53_tsig_key *key, uint64_t now);

/* The responses to one signed request: a stream (one message for an SOA query). */
struct p53_tsig_stream {
	const struct p53_tsig_key *key;
	uint8_t prior[P53_TSIG_MAC_MAX]; /* the request's MAC, then the last verified one */
	uint16_t prior_len;
	int signed_seen;                /* messages verified so far */
	int unsigned_run;               /* unsigned messages since the last signed one */
	void *acc;                      /* EVP_MAC_CTX digesting them, or NULL */
};

/** Start with the signed request's MAC. */
void p53_tsig_stream_init(struct p53_tsig_stream *s, const struct p53_tsig_key *key,
			  const uint8_t *req_mac, uint16_t req_mac_len);

/**
 * The next response message. The first must be signed; later ones may be unsigned (their
 * bytes then go into the next signed one's digest), at most P53_TSIG_MAX_UNSIGNED in a row.
 * @return P53_TSIG_OK or the failure (the transfer is then to be thrown away).
 */
enum p53_tsig_status p53_tsig_stream_next(struct p53_tsig_stream *s, const uint8_t *msg,
					  size_t len, uint64_t now);

/** The stream ended: its last message must have been signed. */
enum p53_tsig_status p53_tsig_stream_end(const struct p53_tsig_stream *s);

void p53_tsig_stream_free(struct p53_tsig_stream *s);

/** "BADSIG", "BADKEY"... for logs. */
const char *p53_tsig_status_str(enum p53_tsig_status st);

#endif /* P53_XFR_TSIG_H */
