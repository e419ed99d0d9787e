/* Cookies and RRL around the answer; see guard.h. */
#include <string.h>

#include "dataplane/edns_opt.h"
#include "dataplane/guard.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#define RCODE_BADCOOKIE 23 /* RFC 7873 §8 */

/* RFC 7873 §5.2.3-5.2.5: every response to a query with a COOKIE carries the client cookie
 * and a server cookie of ours; an invalid server cookie is treated as if only the client
 * cookie had come. Writes our option into `opt` (copied now: the answer overwrites the query). */
enum p53_guard_cookie p53_guard_cookie(const struct p53_guard *g, struct p53_guard_stats *st,
					const uint8_t *msg, const struct p53_query *q, const uint8_t *addr,
					int ipv6, const struct p53_guard_now *now,
					uint8_t opt[P53_GUARD_OPT_LEN])
{
	struct p53_cookie_opt c;
	size_t alen = ipv6 ? 16 : 4;

	/* The parser validated it (dnsmsg.c); a failure here cannot happen. */
	if (p53_edns_cookie_parse(msg + q->cookie_off, q->cookie_len, &c) != 0)
		return P53_GUARD_NO_COOKIE;
	p53_put16(opt, P53_EDNS_COOKIE);
	p53_put16(opt + 2, 8 + P53_COOKIE_SERVER_LEN);
	memcpy(opt + 4, c.client, 8);
	enum p53_cookie_check v = P53_COOKIE_BAD;
	if (c.server != NULL)
		v = p53_cookie_check(&g->secrets, c.client, c.server, c.server_len, addr, alen, now->unix_s);
	if (v == P53_COOKIE_OK)
		memcpy(opt + 12, c.server, P53_COOKIE_SERVER_LEN); /* still fresh: echo it */
	else
		p53_cookie_make(g->secrets.cur, c.client, addr, alen, now->unix_s, opt + 12);
	if (v != P53_COOKIE_BAD) {
		st->cookie_valid++;
		return P53_GUARD_COOKIE_VALID;
	}
	if (c.server != NULL) {
		st->cookie_invalid++;
		return P53_GUARD_COOKIE_INVALID;
	}
	st->cookie_client++;
	return P53_GUARD_COOKIE_CLIENT;
}

/* A response RRL would limit: exempt, log-only, or dropped / slipped (BIND's behaviour). */
enum p53_guard_action p53_guard_limited(const struct p53_guard *g, struct p53_guard_stats *st,
					enum p53_rrl_verdict v, enum p53_rrl_class cls,
					enum p53_guard_cookie ck, const uint8_t *addr, int ipv6)
{
	if (g->rrl.n_exempt != 0 && p53_rrl_exempt(&g->rrl, addr, ipv6)) {
		st->rrl_exempt++;
		return P53_GUARD_SEND;
	}
	if (g->rrl.log_only) {
		if (v == P53_RRL_DROP)
			st->rrl_would_drop++;
		else
			st->rrl_would_slip++;
		return P53_GUARD_SEND;
	}
	if (v == P53_RRL_DROP) {
		st->rrl_dropped++;
		return P53_GUARD_DROP;
	}
	st->rrl_slipped++;
	/* An error cannot be made any smaller: BIND "leaks" it at the slip rate instead. */
	if (cls == P53_RRL_ERRORS)
		return P53_GUARD_SEND;
	/* A client that sent a cookie learns ours and is exempt on its retry (RFC 7873 §5.2.3,
	 * choice 2): better than TC=1, which costs it a TCP connection. */
	if (ck == P53_GUARD_COOKIE_CLIENT || ck == P53_GUARD_COOKIE_INVALID) {
		st->cookie_badcookie++;
		return P53_GUARD_BADCOOKIE;
	}
	return P53_GUARD_SLIP;
}

enum p53_rrl_class p53_guard_classify(const void *img, const struct p53_answer_ext *x, uint32_t *name)
{
	const struct p53_image_node *n = NULL;
	enum p53_rrl_class cls;

	if (x->rcode == P53_RCODE_NXDOMAIN)
		cls = P53_RRL_NXDOMAINS;
	else if (x->rcode != P53_RCODE_NOERROR)
		cls = P53_RRL_ERRORS;
	else if (x->kind == P53_ANS_REFERRAL)
		cls = P53_RRL_REFERRALS;
	else if (x->kind == P53_ANS_NODATA)
		cls = P53_RRL_NODATA;
	else
		return P53_RRL_RESPONSES;
	if (cls == P53_RRL_REFERRALS && x->cut != NULL)
		n = x->cut;
	else if (img != NULL && x->zone != P53_NONE)
		n = p53_image_znode(img, p53_image_zone(img, x->zone), p53_image_zone(img, x->zone)->apex);
	*name = n != NULL ? p53_name_hash(p53_image_node_name(img, n), n->name_len) : 0;
	return cls;
}

/* The accounting after the answer, for everything but an answer whose account was found
 * in good standing (the inline fast path of p53_guard_answer). */
enum p53_guard_action p53_guard_after(const struct p53_guard *g, struct p53_rrl_table *t,
				      struct p53_guard_stats *st, const void *img,
				      const struct p53_query *q, const struct p53_answer_ext *x,
				      struct p53_rrl_key *key, int keyed, struct p53_rrl_entry *e,
				      enum p53_guard_cookie ck, const uint8_t *addr, int ipv6,
				      uint64_t now)
{
	enum p53_rrl_verdict v = P53_RRL_OK, va;
	enum p53_rrl_class cls = P53_RRL_RESPONSES;
	uint32_t name = 0;

	if (x->rcode != P53_RCODE_NOERROR || (x->kind != P53_ANS_ANSWER && x->kind != P53_ANS_CHAOS))
		cls = p53_guard_classify(img, x, &name);
	if (g->rrl.interval[cls] != 0) {
		if (cls == P53_RRL_RESPONSES && keyed) {
			v = p53_rrl_debit(&g->rrl, t, key, e, now);
		} else {
			p53_rrl_key(&g->rrl, t, key, addr, ipv6, cls, cls == P53_RRL_RESPONSES ? q->hash : name,
				    cls == P53_RRL_RESPONSES ? q->qtype : 0);
			v = p53_rrl_debit(&g->rrl, t, key, p53_rrl_find(t, key), now);
		}
	}
	if (g->rrl.interval[P53_RRL_ALL] != 0) {
		p53_rrl_key(&g->rrl, t, key, addr, ipv6, P53_RRL_ALL, 0, 0);
		va = p53_rrl_debit(&g->rrl, t, key, p53_rrl_find(t, key), now);
		/* The worse of the two. */
		if (va == P53_RRL_DROP || (va == P53_RRL_SLIP && v == P53_RRL_OK))
			v = va;
	}
	return v == P53_RRL_OK ? P53_GUARD_SEND : p53_guard_limited(g, st, v, cls, ck, addr, ipv6);
}

uint16_t p53_guard_minimal(uint8_t *msg, uint16_t cap, const struct p53_query *q,
			   enum p53_guard_action a, uint16_t aa_rcode, const uint8_t *cookie_opt,
			   uint16_t payload)
{
	int badcookie = a == P53_GUARD_BADCOOKIE;
	unsigned int rcode = badcookie ? RCODE_BADCOOKIE : (aa_rcode & 0xfu);
	uint16_t rdlen = badcookie ? P53_GUARD_OPT_LEN : 0;
	uint16_t pos = (uint16_t)(P53_DNS_HDR_LEN + q->qname_len + 4);

	if (q->qname_len == 0 || (badcookie && (!q->edns || cookie_opt == NULL)) ||
	    (uint32_t)pos + (q->edns ? 11u + rdlen : 0u) > cap)
		return 0;
	uint16_t flags = (uint16_t)(P53_F_QR | (q->flags & (0x7800u | P53_F_RD | P53_F_CD)) |
				    (aa_rcode & P53_F_AA) | (rcode & 0xfu));
	if (a == P53_GUARD_SLIP)
		flags |= P53_F_TC; /* RFC 1035 §4.1.1: retry over TCP */
	p53_put16(msg + 2, flags);
	p53_put16(msg + 4, 1);
	p53_put16(msg + 6, 0);
	p53_put16(msg + 8, 0);
	p53_put16(msg + 10, q->edns ? 1 : 0);
	if (!q->edns)
		return pos;
	/* RFC 6891 §6.1.1: an OPT in the query, one in the response; the RCODE's upper bits go
	 * in its TTL (§6.1.3), which for BADCOOKIE (23) is 1. */
	uint8_t *p = msg + pos;
	p[0] = 0;
	p53_put16(p + 1, P53_T_OPT);
	p53_put16(p + 3, payload);
	p53_put32(p + 5, (uint32_t)(rcode >> 4) << 24 | (q->edns_do ? 0x8000u : 0));
	p53_put16(p + 9, rdlen);
	if (badcookie)
		memcpy(p + 11, cookie_opt, P53_GUARD_OPT_LEN);
	return (uint16_t)(pos + 11 + rdlen);
}
