/*
 * The responder: one query message in, its response written over it, from a zone image.
 *
 * Implements RFC 1034 §4.3.2 over the compiled image (dataplane/image.h): exact matches,
 * CNAME chasing inside the zone, DNAME synthesis (RFC 6672), referrals with glue, wildcards
 * (RFC 4592), negative answers with the SOA (RFC 2308), minimal responses, ANY (RFC 8482),
 * CHAOS identity queries, EDNS (RFC 6891) with NSID (RFC 5001), and truncation. It picks the
 * RCODE for what the parser (dnsmsg.h) reports.
 *
 * Runs per packet on worker lcores: no allocation, no locks, no syscalls. Thread-safe given
 * per-caller `stats`; the image and conf are read-only.
 */
#ifndef P53_ANSWER_H
#define P53_ANSWER_H

#include <stdint.h>
#include <stddef.h>

#include "dataplane/dnsmsg.h"

struct p53_fast_neg;

#define P53_UDP_MIN 512 /* RFC 1035 §4.2.1, RFC 6891 §6.2.5 */

/** Our EDNS UDP payload size (RFC 6891 §6.2.5) from the configured one: never under 512. */
static inline uint16_t p53_our_payload(uint16_t edns_max_payload)
{
	return edns_max_payload < P53_UDP_MIN ? P53_UDP_MIN : edns_max_payload;
}

struct p53_answer_conf {
	const uint8_t *identity;        /* PoP identity for id.server/hostname.bind and NSID */
	uint8_t identity_len;           /* 0: those names get REFUSED and NSID is not sent */
	const uint8_t *version;         /* version.bind/version.server answer */
	uint8_t version_len;            /* 0: REFUSED, the default (do not advertise versions) */
	uint16_t edns_max_payload;      /* our UDP payload size, 512..4096 (RFC 6891 §6.2.5) */
	/* TCP (control/tcp/); both 0 on UDP. */
	uint16_t tcp_limit;             /* 65535: a response may use all a TCP length field allows,
					   whatever the client's EDNS size (RFC 7766 §8). OR-ed into
					   the size limit, so UDP pays one instruction, no branch */
	uint16_t keepalive;             /* idle timeout in units of 100 ms, sent in
					   edns-tcp-keepalive to a query that carried the option
					   (RFC 7828 §3.3.2) */
	/* Steering (steer.h): where the published steering table's pointer lives, loaded with
	 * acquire only when a steered RRset is answered; NULL: none (the static RRset). */
	void *const *steer;
	/* The fast path's negative-answer templates, one per zone of the image (fastpath.h), or
	 * NULL with n_neg 0: it then writes the SOA record per query. */
	const struct p53_fast_neg *neg;
	uint32_t n_neg;
	/* The fast path's referral templates, one per delegation of the image up to a bound
	 * (fastpath.h, p53_fast_ref_build()), or NULL: it then writes each referral per query. */
	const void *ref;
	/* The fast path's checksum sums of each RRset's pre-encoded records (and the OPT after
	 * them), one per RRset of the image (fastpath.h, p53_fast_sum_build()), or NULL with
	 * n_sums 0: the reply then sums the records it wrote. */
	const uint64_t *sums;
	uint32_t n_sums;
};

/* Outcome classes beyond the RCODE, for counters. */
enum p53_answer_kind {
	P53_ANS_DROP = 0,       /* no response sent */
	P53_ANS_ANSWER,         /* positive authoritative answer */
	P53_ANS_NODATA,
	P53_ANS_NXDOMAIN,
	P53_ANS_REFERRAL,
	P53_ANS_REFUSED,
	P53_ANS_ERROR,          /* FORMERR, SERVFAIL, NOTIMP, NOTAUTH (IXFR), BADVERS, YXDOMAIN */
	P53_ANS_CHAOS,
	P53_ANS_NOTIFY,         /* NOTIFY (RFC 1996): answered NOTAUTH, or left to the control thread
				   (no response here) for a secondary zone's apex */
	P53_ANS_HANDOFF,        /* a TSIG-signed SOA query for the apex of a zone whose transfers
				   want a key: left to the control thread (no response here) */
	P53_ANS__MAX
};

#define P53_QTYPE_BUCKETS 64    /* per-qtype counters: types < 63 each, 63 = all others */

struct p53_answer_stats {
	uint64_t queries;
	uint64_t rcode[17];             /* by response RCODE; [16] = BADVERS */
	uint64_t kind[P53_ANS__MAX];
	uint64_t qtype[P53_QTYPE_BUCKETS];
	uint64_t msg[P53_MSG__MAX];     /* parser outcomes (msg[0] = well-formed) */
	uint64_t tc;                    /* responses sent with TC=1 */
	uint64_t trailing;              /* queries with bytes after the last record */
};

/**
 * Answer one DNS query in place.
 *
 * @param img    zone image (p53_image_check() passed), or NULL before the first load
 *               (every query in class IN is then REFUSED)
 * @param conf   responder settings
 * @param msg    the query on entry; the response on return
 * @param len    query length
 * @param cap    bytes writable at msg (the response may grow past len up to cap)
 * @param stats  per-worker counters, updated
 * @return response length, or 0 when no response is sent here: the query is dropped, or it is a
 *         NOTIFY for a secondary zone, or a signed SOA query p53_answer_signed_soa_handoff()
 *         accepts, which the control thread answers (worker.c hands them on).
 */
uint16_t p53_answer(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
		    uint16_t len, uint16_t cap, struct p53_answer_stats *stats);

/**
 * Is this a TSIG-signed SOA query (QUERY, class IN) for the apex of a zone flagged
 * P53_ZONE_XFR_SIGNED? Such a query is a downstream secondary's refresh check over UDP; the
 * workers hold no keys, so p53_answer() leaves it unanswered and the worker hands it to the
 * control thread (control/xfr/notify.c), which verifies and answers it signed. Only called for
 * signed messages: unsigned queries never reach it.
 */
int p53_answer_signed_soa_handoff(const void *img, const struct p53_query *q);

/**
 * The same, for a query the caller already parsed with p53_msg_parse() (the worker parses a
 * whole burst first, to prefetch the image while it does).
 *
 * @param q   the parsed query of `msg` (the parser bounded every read, so no length here)
 * @param ms  what p53_msg_parse() returned for it
 */
uint16_t p53_answer_parsed(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			   uint16_t cap, struct p53_answer_stats *stats, const struct p53_query *q,
			   enum p53_msg_status ms);

struct p53_image_node;

/*
 * What the guard (guard.h) adds to a response and needs to know about it: options to add to
 * our OPT record (the COOKIE option), and the response's class and the names RRL keys on.
 */
struct p53_answer_ext {
	/* in */
	const uint8_t *opt_extra;       /* whole EDNS options (code, length, data) for our OPT, or NULL */
	uint16_t opt_extra_len;         /* room is kept for them, as for NSID */
	/* out */
	uint8_t kind;                   /* enum p53_answer_kind of the response */
	uint8_t rcode;                  /* its full RCODE (BADVERS = 16) */
	uint32_t zone;                  /* the zone it came from, P53_NONE (image.h) when none */
	const struct p53_image_node *cut; /* for a referral, the delegation point; else NULL */
};

/**
 * p53_answer_parsed() with an extension (NULL: the same as p53_answer_parsed()).
 */
uint16_t p53_answer_ext(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			uint16_t cap, struct p53_answer_stats *stats, const struct p53_query *q,
			enum p53_msg_status ms, struct p53_answer_ext *x);

#endif /* P53_ANSWER_H */
