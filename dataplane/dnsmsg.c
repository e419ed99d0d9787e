/* DNS query parser; see dnsmsg.h. */
#include <string.h>

#include "dataplane/dnsmsg.h"
#include "dataplane/edns_opt.h"
#include "dataplane/wire.h"

#define RR_MIN_LEN 11 /* root owner + type, class, ttl, rdlength */

const char *const p53_msg_status_names[P53_MSG__MAX] = {
	[P53_MSG_OK] = "ok",
	[P53_MSG_SHORT] = "short_header",
	[P53_MSG_RESPONSE] = "qr_set",
	[P53_MSG_QDCOUNT] = "qdcount",
	[P53_MSG_COUNTS] = "counts",
	[P53_MSG_QNAME] = "qname",
	[P53_MSG_QUESTION] = "question",
	[P53_MSG_RR] = "record",
	[P53_MSG_OPT_PLACE] = "opt_place",
	[P53_MSG_OPT_DUP] = "opt_duplicate",
	[P53_MSG_OPT_OWNER] = "opt_owner",
	[P53_MSG_OPT_OPTION] = "opt_option",
	[P53_MSG_OPT_COOKIE] = "opt_cookie",
	[P53_MSG_OPT_ECS] = "opt_ecs",
	[P53_MSG_TSIG_PLACE] = "tsig_place",
	[P53_MSG_TSIG] = "tsig",
};

/* Question name: uncompressed, lowered into q->lname, label offsets recorded. The labels are
 * walked first (one length byte each), then the whole name is copied and lowered 8 bytes at
 * a time: the common query name costs two or three words instead of a loop per byte. */
static int parse_qname(struct p53_wire *w, struct p53_query *q)
{
	size_t left = p53_wire_left(w);
	const uint8_t *name = w->pos;
	size_t pos = 0;
	uint8_t labels = 0;

	for (;;) {
		if (pos >= left)
			return -1;
		uint8_t l = name[pos];
		if (l > P53_LABEL_MAXLEN) /* RFC 1035 §4.1.4: pointers refused here */
			return -1;
		if (pos + 1 + l > P53_NAME_MAXLEN)
			return -1;
		q->label_off[labels] = (uint8_t)pos;
		pos += 1u + l;
		if (l == 0)
			break;
		labels++;
	}
	/* pos bytes are the name; all of them lie inside the message (checked above). */
	const uint8_t *src = p53_wire_take(w, pos);
	if (src == NULL)
		return -1;
	/* Lower-case and hash in the same pass (the hash steps of name.h, in its order). */
	uint32_t crc = P53_NAME_HASH_SEED;
	size_t i = 0;
	for (; i + 8 <= pos; i += 8) {
		uint64_t x;
		memcpy(&x, src + i, 8);
		x = p53_lower8(x);
		memcpy(q->lname + i, &x, 8);
		crc = p53_hash_step8(crc, x);
	}
	for (; i < pos; i++) {
		q->lname[i] = p53_lower(src[i]);
		crc = p53_hash_step1(crc, q->lname[i]);
	}
	q->qname_len = (uint8_t)pos;
	q->qname_labels = labels;
	q->hash = crc;
	return 0;
}

/*
 * A compression pointer in a record's name (RFC 1035 §4.1.4) at `at`, pointing at `to`: it
 * must point back (before itself), past the header, at a well-formed name whose own pointers
 * point further back still. So no loop, self-pointer, forward pointer, pointer into the
 * header or past the end gets through, and the walk ends: every step goes backwards.
 */
static int check_pointer(const uint8_t *msg, size_t at, size_t to)
{
	size_t limit = at, total = 0;

	for (;;) {
		if (to < P53_DNS_HDR_LEN || to >= limit)
			return -1;
		size_t pos = to;
		for (;;) {
			uint8_t l = msg[pos];   /* pos < limit <= the message's length */
			if ((l & 0xc0) == 0xc0) {
				if (pos + 1 >= limit)
					return -1;
				limit = pos;
				to = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
				break;
			}
			if (l > P53_LABEL_MAXLEN) /* label types 0x40 and 0x80 (RFC 6891 §5) */
				return -1;
			if (l == 0)
				return 0;
			total += 1u + l;
			pos += 1u + l;
			if (total > P53_NAME_MAXLEN || pos >= limit)
				return -1;
		}
	}
}

/* Skip a possibly compressed name of a record; a pointer ends it, after check_pointer(). */
static int skip_name(struct p53_wire *w, int *is_root)
{
	size_t total = 0;

	*is_root = 0;
	for (int first = 1;; first = 0) {
		uint8_t l = p53_wire_u8(w);
		if (w->err != 0)
			return -1;
		if ((l & 0xc0) == 0xc0) {
			size_t at = p53_wire_off(w) - 1;
			uint8_t lo = p53_wire_u8(w);
			if (w->err != 0)
				return -1;
			return check_pointer(w->start, at, (size_t)(l & 0x3f) << 8 | lo);
		}
		if (l > P53_LABEL_MAXLEN)
			return -1;
		if (l == 0) {
			*is_root = first;
			return 0;
		}
		total += 1u + l;
		if (total > P53_NAME_MAXLEN)
			return -1;
		p53_wire_skip(w, l);
	}
}

int p53_msg_name(const uint8_t *msg, size_t len, size_t off, uint8_t *out)
{
	size_t n = 0, limit = off; /* a pointer must go before the label that holds it */

	for (;;) {
		if (off >= len)
			return -1;
		uint8_t l = msg[off];
		if ((l & 0xc0) == 0xc0) {
			if (off + 1 >= len)
				return -1;
			size_t to = (size_t)(l & 0x3f) << 8 | msg[off + 1];
			if (to >= limit)
				return -1; /* forwards or to itself: a loop */
			off = limit = to;
			continue;
		}
		if (l > P53_LABEL_MAXLEN || off + 1 + l > len || n + 1 + l > P53_NAME_MAXLEN)
			return -1;
		out[n] = l;
		for (uint8_t i = 1; i <= l; i++)
			out[n + i] = p53_lower(msg[off + i]);
		n += 1u + l;
		off += 1u + l;
		if (l == 0)
			return (int)n;
	}
}

/* TSIG (RFC 8945 §4.2) at the cursor's record: class ANY, TTL 0, a readable owner, and RDATA
 * whose fields add up: algorithm name (uncompressed), time signed (6), fudge (2), MAC size
 * (2), MAC, original ID (2), error (2), other len (2), other data. */
static enum p53_msg_status parse_tsig(struct p53_wire *w, struct p53_query *q, size_t owner,
				      uint16_t rclass, uint32_t ttl, uint16_t rdlen)
{
	uint8_t key[P53_NAME_MAXLEN];
	const uint8_t *rd = p53_wire_take(w, rdlen);
	struct p53_wire r;

	if (rd == NULL)
		return P53_MSG_RR;
	if (rclass != P53_C_ANY || ttl != 0 || p53_msg_name(w->start, p53_wire_off(w), owner, key) < 0)
		return P53_MSG_TSIG;
	int al = p53_name_len(rd, rdlen);
	if (al < 0)
		return P53_MSG_TSIG;
	p53_wire_init(&r, rd + al, rdlen - (size_t)al);
	p53_wire_skip(&r, 8);                   /* time signed, fudge */
	uint16_t mac = p53_wire_u16(&r);
	p53_wire_skip(&r, (size_t)mac + 4);     /* MAC, original ID, error */
	uint16_t other = p53_wire_u16(&r);
	p53_wire_skip(&r, other);
	if (r.err != 0 || p53_wire_left(&r) != 0)
		return P53_MSG_TSIG;
	q->tsig = 1;
	q->tsig_owner = (uint16_t)owner;
	q->tsig_rdata = (uint16_t)(rd - w->start);
	q->tsig_rdlen = rdlen;
	q->tsig_alg_len = (uint16_t)al;
	q->tsig_mac_len = mac;
	return P53_MSG_OK;
}

static enum p53_msg_status parse_opt(struct p53_wire *w, struct p53_query *q, uint16_t rdlen)
{
	const uint8_t *rd = p53_wire_take(w, rdlen);
	struct p53_wire o;

	if (rd == NULL)
		return P53_MSG_RR;
	p53_wire_init(&o, rd, rdlen);
	while (p53_wire_left(&o) > 0) {
		uint16_t code = p53_wire_u16(&o);
		uint16_t olen = p53_wire_u16(&o);
		const uint8_t *data = p53_wire_take(&o, olen);
		if (o.err != 0 || data == NULL)
			return P53_MSG_OPT_OPTION;
		switch (code) {
		case P53_EDNS_NSID:
			q->nsid = 1; /* RFC 5001 §2.1: a request carries no data; ignore any */
			break;
		case P53_EDNS_ECS: {
			struct p53_ecs_opt e;
			if (q->ecs)
				break;
			if (p53_edns_ecs_parse(data, olen, &e) != P53_ECS_OK)
				return P53_MSG_OPT_ECS;
			q->ecs = 1;
			q->ecs_off = (uint16_t)(data - w->start);
			q->ecs_len = olen;
			break;
		}
		case P53_EDNS_TCP_KEEPALIVE:
			q->keepalive = olen == 0 ? 1 : 2;
			break;
		case P53_EDNS_COOKIE: {
			struct p53_cookie_opt c;
			if (q->cookie)
				break;
			if (p53_edns_cookie_parse(data, olen, &c) != 0)
				return P53_MSG_OPT_COOKIE;
			q->cookie = 1;
			q->cookie_off = (uint16_t)(data - w->start);
			q->cookie_len = olen;
			break;
		}
		default:
			break; /* RFC 6891 §6.1.2: unknown options are ignored */
		}
	}
	return P53_MSG_OK;
}

enum p53_msg_status p53_msg_parse(const uint8_t *msg, size_t len, struct p53_query *q)
{
	struct p53_wire w;

	q->edns = 0;
	q->tsig = 0;
	q->nsid = 0;
	q->ecs = 0;
	q->keepalive = 0; /* beside ecs: the two stores merge into one */
	q->cookie = 0;
	q->trailing = 0;
	q->qname_len = 0;
	q->src = NULL;
	if (len < P53_DNS_HDR_LEN)
		return P53_MSG_SHORT;
	p53_wire_init(&w, msg, len);
	/* The header is the 12 bytes just checked for. */
	const uint8_t *h = p53_wire_take(&w, P53_DNS_HDR_LEN);
	q->id = p53_get16(h);
	q->flags = p53_get16(h + 2);
	q->qdcount = p53_get16(h + 4);
	q->ancount = p53_get16(h + 6);
	q->nscount = p53_get16(h + 8);
	q->arcount = p53_get16(h + 10);

	/* RFC 1035 §4.1.1: a message with QR=1 is a response; answering it invites loops. */
	if (q->flags & P53_F_QR)
		return P53_MSG_RESPONSE;
	/* RFC 9619: QUERY (and NOTIFY, RFC 1996 §3.7) carry exactly one question. */
	if (q->qdcount != 1)
		return P53_MSG_QDCOUNT;
	/* Check counts against the bytes left before trusting them: question >= 5 bytes. */
	size_t rrs = (size_t)q->ancount + q->nscount + q->arcount;
	if (5 + rrs * RR_MIN_LEN > p53_wire_left(&w))
		return P53_MSG_COUNTS;

	if (parse_qname(&w, q) != 0)
		return P53_MSG_QNAME;
	q->qtype = p53_wire_u16(&w);
	q->qclass = p53_wire_u16(&w);
	if (w.err != 0) {
		q->qname_len = 0;
		return P53_MSG_QUESTION;
	}
	q->question_end = (uint16_t)p53_wire_off(&w);

	/* The shape almost every query has: nothing after the question but one OPT with a root
	 * owner. Read it in place; anything else takes the general loop below. */
	if (rrs == 1 && q->arcount == 1 && p53_wire_left(&w) >= 11 && w.pos[0] == 0 &&
	    p53_get16(w.pos + 1) == P53_T_OPT) {
		const uint8_t *o = p53_wire_take(&w, 11);
		uint16_t rdlen = p53_get16(o + 9);
		q->edns = 1;
		q->edns_payload = p53_get16(o + 3);
		q->edns_version = o[5 + 1];
		q->edns_do = (o[5 + 2] & 0x80u) != 0;
		if (rdlen != 0) {
			enum p53_msg_status st = parse_opt(&w, q, rdlen);
			if (st != P53_MSG_OK)
				return st;
		}
		q->trailing = (uint16_t)p53_wire_left(&w);
		return P53_MSG_OK;
	}

	for (size_t i = 0; i < rrs; i++) {
		int root;
		size_t owner = p53_wire_off(&w);
		if (skip_name(&w, &root) != 0)
			return P53_MSG_RR;
		uint16_t type = p53_wire_u16(&w);
		uint16_t rclass = p53_wire_u16(&w);
		uint32_t ttl = p53_wire_u32(&w);
		uint16_t rdlen = p53_wire_u16(&w);
		if (w.err != 0)
			return P53_MSG_RR;
		if (type == P53_T_TSIG) {
			/* RFC 8945 §5.1: the last record of the additional section, and only one
			 * (a second TSIG makes the first not last). */
			if (i != rrs - 1 || q->arcount == 0)
				return P53_MSG_TSIG_PLACE;
			enum p53_msg_status st = parse_tsig(&w, q, owner, rclass, ttl, rdlen);
			if (st != P53_MSG_OK)
				return st;
			continue;
		}
		if (type != P53_T_OPT) {
			p53_wire_skip(&w, rdlen);
			if (w.err != 0)
				return P53_MSG_RR;
			continue;
		}
		if (i < (size_t)q->ancount + q->nscount)
			return P53_MSG_OPT_PLACE;
		if (q->edns)
			return P53_MSG_OPT_DUP;
		if (!root)
			return P53_MSG_OPT_OWNER;
		q->edns = 1;
		q->edns_payload = rclass;
		q->edns_version = (uint8_t)(ttl >> 16);
		q->edns_do = (ttl & 0x8000u) != 0;
		enum p53_msg_status st = parse_opt(&w, q, rdlen);
		if (st != P53_MSG_OK)
			return st;
	}
	q->trailing = (uint16_t)p53_wire_left(&w);
	return P53_MSG_OK;
}
