/* Cutting a zone transfer into messages; see stream.h. */
#include <string.h>

#include "control/xfr/stream.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/wire.h"

int p53_xfr_stream_init(struct p53_xfr_stream *s, const uint8_t *query, size_t qlen,
			const struct p53_tsig_key *key, const uint8_t *req_mac, uint16_t req_mac_len)
{
	memset(s, 0, sizeof(*s));
	s->key = key;
	if (qlen < 12 || qlen > sizeof(s->query) || req_mac_len > sizeof(s->prior))
		return -1;
	memcpy(s->query, query, qlen);
	s->qlen = qlen;
	if (key != NULL && req_mac_len > 0)
		memcpy(s->prior, req_mac, req_mac_len);
	s->prior_len = key != NULL ? req_mac_len : 0;
	return 0;
}

int p53_xfr_stream_add(struct p53_xfr_stream *s, const struct p53_rrs *seg)
{
	if (s->n_segs == P53_XFR_MAX_SEGS)
		return -1;
	s->segs[s->n_segs++] = seg;
	return 0;
}

/* Length of the record at p (n bytes left), or 0 when it is malformed. */
static size_t rr_len(const uint8_t *p, size_t n)
{
	size_t o = 0;

	while (o < n && p[o] != 0) {
		if (p[o] > 63)
			return 0;
		o += 1u + p[o];
	}
	o++;
	if (o + 10 > n || o + 10 + p53_get16(p + o + 8) > n)
		return 0;
	return o + 10 + p53_get16(p + o + 8);
}

long p53_xfr_stream_next(struct p53_xfr_stream *s, uint8_t *out, size_t cap, uint64_t now)
{
	size_t room = cap < P53_XFR_MSG_MAX ? cap : P53_XFR_MSG_MAX;
	size_t tsig = s->key != NULL ? p53_tsig_size(s->key) : 0;
	int first = s->msgs == 0;
	size_t len;
	uint16_t an = 0;

	while (s->seg < s->n_segs && s->pos >= s->segs[s->seg]->len) {
		s->seg++;
		s->pos = 0;
	}
	if (s->seg == s->n_segs)
		return 0;
	len = first ? s->qlen : 12;
	if (len + tsig > room)
		return -1;
	memcpy(out, s->query, 12);
	if (first)
		memcpy(out + 12, s->query + 12, s->qlen - 12);
	/* RFC 5936 §2.2.1: ID and RD copied, QR and AA set, opcode QUERY, NOERROR. */
	uint16_t flags = (uint16_t)(P53_F_QR | P53_F_AA | (p53_get16(s->query + 2) & P53_F_RD));
	p53_put16(out + 2, flags);
	p53_put16(out + 4, first ? 1 : 0);
	memset(out + 6, 0, 6);
	while (s->seg < s->n_segs) {
		const struct p53_rrs *r = s->segs[s->seg];
		if (s->pos >= r->len) {
			s->seg++;
			s->pos = 0;
			continue;
		}
		size_t n = rr_len(r->buf + s->pos, r->len - s->pos);
		if (n == 0)
			return -1;
		if (len + n + tsig > room || an == UINT16_MAX) {
			if (an == 0)
				return -1; /* one record larger than a message */
			break;
		}
		memcpy(out + len, r->buf + s->pos, n);
		len += n;
		s->pos += n;
		an++;
	}
	p53_put16(out + 6, an);
	if (s->key != NULL) {
		uint8_t mac[P53_TSIG_MAC_MAX];
		uint16_t mac_len = 0;
		int rc = s->msgs == 0
			 ? p53_tsig_sign(out, &len, room, s->key, s->prior, s->prior_len, 0, now, mac, &mac_len)
			 : p53_tsig_sign_next(out, &len, room, s->key, s->prior, s->prior_len, now, mac,
					      &mac_len);
		if (rc != 0)
			return -1;
		memcpy(s->prior, mac, mac_len);
		s->prior_len = mac_len;
	}
	s->msgs++;
	s->records += an;
	return (long)len;
}
