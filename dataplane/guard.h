/*
 * The guard: what a worker checks around answering a query — DNS cookies (RFC 7873, RFC 9018)
 * and response rate limiting (rrl.h) — and the small replies it sends instead of an answer
 * (a slipped TC=1 reply, BADCOOKIE).
 *
 * The settings and cookie secrets are one read-only table, struct p53_guard, published by the
 * control thread with RCU like a replica (control/abuse/guard.c): a worker loads its pointer
 * once per burst; a reload (new rrl: or cookies: settings) or a secret rotation publishes a
 * new one. The RRL tables it points at are per worker and written only by their worker.
 *
 * Per query (p53_guard_answer): the COOKIE option is checked; the question's account is
 * looked up, and when it is already in debt the query is limited there, before any answering
 * work, so a flood costs less than the answers it asks for; else the responder answers and the
 * account of the response's class is debited. Either step may drop the response or send
 * p53_guard_minimal()'s small reply instead.
 *
 * Per-packet safe: no allocation, no locks, no syscalls.
 */
#ifndef P53_GUARD_H
#define P53_GUARD_H

#include <stdint.h>

#include "dataplane/answer.h"
#include "dataplane/cookie.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/rrl.h"

#define P53_GUARD_MAX_WORKERS 64

struct p53_guard {
	struct p53_rrl_conf rrl;                /* rrl.on = 0: no rate limiting */
	struct p53_rrl_table *tables[P53_GUARD_MAX_WORKERS]; /* by worker index; each worker's own */
	uint8_t cookies;                        /* cookies.enabled: answer COOKIE options */
	struct p53_cookie_secrets secrets;
	/* Wall clock for cookie timestamps, without a syscall: unix = clock_unix +
	 * (tsc - clock_tsc) / clock_hz, once per burst. Rebased at every publish. */
	uint64_t clock_tsc;
	uint64_t clock_hz;
	uint32_t clock_unix;
};

/* Per worker, written only by it, read racily by the control thread. */
struct p53_guard_stats {
	uint64_t rrl_dropped;           /* limited responses not sent */
	uint64_t rrl_slipped;           /* limited responses sent as TC=1, BADCOOKIE, or (errors) leaked */
	uint64_t rrl_exempt;            /* would have been limited; client in rrl.exempt_clients */
	uint64_t rrl_cookie;            /* not accounted: the client showed a valid server cookie */
	uint64_t rrl_would_drop;        /* rrl.log_only: would have been dropped */
	uint64_t rrl_would_slip;        /* rrl.log_only: would have slipped */
	uint64_t rrl_early;             /* limited before answering (of dropped + slipped) */
	uint64_t cookie_client;         /* a client cookie only (a new server cookie is sent) */
	uint64_t cookie_valid;          /* a server cookie of ours */
	uint64_t cookie_invalid;        /* a server cookie not ours, or too old: treated as client only */
	uint64_t cookie_badcookie;      /* BADCOOKIE sent (RFC 7873 §5.2.3, on a limited response) */
};

/* The time of one burst. */
struct p53_guard_now {
	uint64_t tsc;
	uint32_t unix_s;
};

static inline void p53_guard_clock(const struct p53_guard *g, uint64_t tsc, struct p53_guard_now *now)
{
	now->tsc = tsc;
	now->unix_s = g->clock_hz != 0 && tsc >= g->clock_tsc ?
		      g->clock_unix + (uint32_t)((tsc - g->clock_tsc) / g->clock_hz) : g->clock_unix;
}

#define P53_GUARD_OPT_LEN (4 + 8 + P53_COOKIE_SERVER_LEN) /* our COOKIE option, whole */

enum p53_guard_action {
	P53_GUARD_SEND = 0,             /* send the answer */
	P53_GUARD_DROP,                 /* send nothing */
	P53_GUARD_SLIP,                 /* send p53_guard_minimal(): TC=1, question only */
	P53_GUARD_BADCOOKIE,            /* send p53_guard_minimal(): BADCOOKIE with our cookie */
};

/**
 * Write the reply for P53_GUARD_SLIP or P53_GUARD_BADCOOKIE over the message: the header
 * (ID, opcode, RD, CD kept), the question as the client sent it, and an OPT when the query
 * had one (our payload size, DO copied; for BADCOOKIE our COOKIE option).
 *
 * @param aa_rcode    for SLIP: the AA flag and RCODE of the answer it replaces (a header flags
 *                    word; P53_F_AA | 0 when it is decided before answering)
 * @param cookie_opt  for BADCOOKIE: our whole COOKIE option (P53_GUARD_OPT_LEN bytes)
 * @param payload     our EDNS UDP payload size
 * @param cap         bytes writable at msg
 * @return the reply's length, or 0 when it cannot be made (then drop).
 */
uint16_t p53_guard_minimal(uint8_t *msg, uint16_t cap, const struct p53_query *q,
			   enum p53_guard_action a, uint16_t aa_rcode, const uint8_t *cookie_opt,
			   uint16_t payload);

/* Helpers of the inline p53_guard_answer() below (guard.c); not for other callers. */
enum p53_guard_cookie {
	P53_GUARD_NO_COOKIE = 0,
	P53_GUARD_COOKIE_CLIENT,        /* client cookie only */
	P53_GUARD_COOKIE_INVALID,       /* with a server cookie that is not (or no longer) ours */
	P53_GUARD_COOKIE_VALID,
};

/* Check the query's COOKIE option; write our option (to send back) into `opt`. */
enum p53_guard_cookie p53_guard_cookie(const struct p53_guard *g, struct p53_guard_stats *st,
				       const uint8_t *msg, const struct p53_query *q,
				       const uint8_t *addr, int ipv6, const struct p53_guard_now *now,
				       uint8_t opt[P53_GUARD_OPT_LEN]);

/* What to do with a response RRL says to limit: exempt, log-only, drop or slip. */
enum p53_guard_action p53_guard_limited(const struct p53_guard *g, struct p53_guard_stats *st,
					enum p53_rrl_verdict v, enum p53_rrl_class cls,
					enum p53_guard_cookie ck, const uint8_t *addr, int ipv6);

/* The class of a response other than an answer, and the name its account keys on. */
enum p53_rrl_class p53_guard_classify(const void *img, const struct p53_answer_ext *x, uint32_t *name);

/* Accounting after the answer for everything but the fast path's case. */
enum p53_guard_action p53_guard_after(const struct p53_guard *g, struct p53_rrl_table *t,
				      struct p53_guard_stats *st, const void *img,
				      const struct p53_query *q, const struct p53_answer_ext *x,
				      struct p53_rrl_key *key, int keyed, struct p53_rrl_entry *e,
				      enum p53_guard_cookie ck, const uint8_t *addr, int ipv6,
				      uint64_t now);

/**
 * Answer one query with cookies and RRL around it (see the top of this file), and
 * p53_guard_minimal() when a small reply replaces the answer. This is the worker's path
 * whenever a guard is published and has something to do (RRL on, or a COOKIE option); tests
 * and the replay benchmark call it the same way. Inline: the common case (an answer whose
 * account is in good standing) costs a key, a lookup and a debit, and no extra call.
 *
 * @param t    this worker's RRL table (g->tables[worker index]; NULL: no RRL)
 * @param st   this worker's guard counters
 * @param img, conf, msg, cap, ast, q, ms  as for p53_answer_parsed()
 * @param addr client address, 4 or 16 bytes as `ipv6` says
 * @return the response length, or 0 to send nothing.
 */
static inline uint16_t p53_guard_answer(const struct p53_guard *g, struct p53_rrl_table *t,
					struct p53_guard_stats *st, const void *img,
					const struct p53_answer_conf *conf, uint8_t *msg, uint16_t cap,
					struct p53_answer_stats *ast, const struct p53_query *q,
					enum p53_msg_status ms, const uint8_t *addr, int ipv6,
					const struct p53_guard_now *now)
{
	uint8_t opt[P53_GUARD_OPT_LEN];
	struct p53_answer_ext x;
	enum p53_guard_cookie ck = P53_GUARD_NO_COOKIE;
	struct p53_rrl_key key;
	struct p53_rrl_entry *e = NULL;
	enum p53_guard_action a;
	int keyed = 0;

	x.opt_extra = NULL;
	x.opt_extra_len = 0;
	if (ms == P53_MSG_OK && q->cookie && g->cookies) {
		ck = p53_guard_cookie(g, st, msg, q, addr, ipv6, now, opt);
		if (ck != P53_GUARD_NO_COOKIE) {
			x.opt_extra = opt;
			x.opt_extra_len = P53_GUARD_OPT_LEN;
		}
	}
	int rrl = g->rrl.on && t != NULL;
	/* A valid server cookie proves the address is the client's: no amplification, so no
	 * rate limit (as BIND and Knot). */
	if (rrl && ck == P53_GUARD_COOKIE_VALID) {
		st->rrl_cookie++;
		rrl = 0;
	}
	if (rrl && ms == P53_MSG_OK && g->rrl.interval[P53_RRL_RESPONSES] != 0) {
		/* An answer's account is keyed by the question, so it is known before answering:
		 * when it is in debt, decide now. The answer is assumed to be an answer again; a
		 * reload that changed that only matters while the account is in debt. */
		p53_rrl_key(&g->rrl, t, &key, addr, ipv6, P53_RRL_RESPONSES, q->hash, q->qtype);
		keyed = 1;
		e = p53_rrl_find(t, &key);
		if (e != NULL && p53_rrl_owes(&g->rrl, e, now->tsc)) {
			a = p53_guard_limited(g, st, p53_rrl_debit(&g->rrl, t, &key, e, now->tsc),
					      P53_RRL_RESPONSES, ck, addr, ipv6);
			if (a != P53_GUARD_SEND) {
				st->rrl_early++;
				return a == P53_GUARD_DROP ? 0 :
				       p53_guard_minimal(msg, cap, q, a, P53_F_AA, opt, conf->edns_max_payload);
			}
			rrl = 0; /* exempt or log-only: debited already */
		}
	}
	uint16_t len = p53_answer_ext(img, conf, msg, cap, ast, q, ms, &x);
	if (len == 0 || !rrl)
		return len;
	/* The common case: an answer, its account (found, or made now) debited. */
	if (keyed && x.rcode == P53_RCODE_NOERROR && x.kind == P53_ANS_ANSWER &&
	    g->rrl.interval[P53_RRL_ALL] == 0) {
		enum p53_rrl_verdict v = p53_rrl_debit(&g->rrl, t, &key, e, now->tsc);
		if (v == P53_RRL_OK)
			return len;
		a = p53_guard_limited(g, st, v, P53_RRL_RESPONSES, ck, addr, ipv6);
	} else {
		a = p53_guard_after(g, t, st, img, q, &x, &key, keyed, e, ck, addr, ipv6, now->tsc);
	}
	if (a == P53_GUARD_SEND)
		return len;
	if (a == P53_GUARD_DROP)
		return 0;
	return p53_guard_minimal(msg, cap, q, a, (uint16_t)(msg[2] << 8 | msg[3]), opt,
				 conf->edns_max_payload);
}

#endif /* P53_GUARD_H */
