/*
 * Zone transfers on a TCP connection (server.h): the request decided by control/xfr/serve.c,
 * then its messages sent as the client reads them. Runs on the connection's TCP thread; the
 * image is read only in p53_tcp_xfr_start, inside the event's RCU online section; the stream
 * works from the copies it made, so a slow client never holds a reload back.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <time.h>

#include "control/log.h"
#include "control/tcp/server.h"
#include "control/xfr/serve.h"
#include "dataplane/wire.h"

#define OUT_CAP P53_TCP_TX_MAX

const char *const p53_xfr_served_names[P53_XFR_SERVED__MAX] = {
	[P53_XFR_SERVED_AXFR] = "axfr", [P53_XFR_SERVED_IXFR] = "ixfr",
	[P53_XFR_SERVED_IXFR_UPTODATE] = "ixfr_uptodate", [P53_XFR_SERVED_IXFR_AXFR] = "ixfr_axfr",
	[P53_XFR_SERVED_REFUSED_ACL] = "refused_acl", [P53_XFR_SERVED_REFUSED_TSIG] = "refused_tsig",
	[P53_XFR_SERVED_NOTAUTH] = "notauth", [P53_XFR_SERVED_NODATA] = "nodata",
	[P53_XFR_SERVED_FORMERR] = "formerr", [P53_XFR_SERVED_ABORTED] = "aborted",
};

/* A refusal (header, question, perhaps an unsigned TSIG error record), by what it says. */
static enum p53_xfr_served refusal_kind(const uint8_t *o)
{
	switch (o[3] & 0x0fu) {
	case P53_RCODE_REFUSED:
		return P53_XFR_SERVED_REFUSED_ACL;
	case P53_RCODE_NOTAUTH:
		return p53_get16(o + 10) != 0 ? P53_XFR_SERVED_REFUSED_TSIG : P53_XFR_SERVED_NOTAUTH;
	case P53_RCODE_SERVFAIL:
		return P53_XFR_SERVED_NODATA;
	default:
		return P53_XFR_SERVED_FORMERR;
	}
}

static const char *rcode_name(unsigned int rc)
{
	return rc == P53_RCODE_REFUSED ? "REFUSED" : rc == P53_RCODE_NOTAUTH ? "NOTAUTH (TSIG)"
	       : rc == P53_RCODE_FORMERR ? "FORMERR" : rc == P53_RCODE_SERVFAIL ? "SERVFAIL (no data)"
	       : "?";
}

int p53_tcp_xfr_start(struct p53_tcp_thread *th, struct conn *c, const void *img,
		      const uint8_t *msg, uint16_t len, const struct p53_query *q)
{
	size_t n = 0;
	uint8_t *o = th->out + th->out_len + 2;

	if (p53_xfr_serve_request(th->serve, img, msg, len, q, c->peer.family, c->peer.bytes, o,
				  OUT_CAP - th->out_len - 2, &n, &c->xo) != 0)
		return -1;
	if (c->xo != NULL) {
		c->xo->start_ms = p53_tcp_now_ms();
		return 0;
	}
	if (n > 0) {
		char peer[INET6_ADDRSTRLEN];
		inet_ntop(c->peer.family, c->peer.bytes, peer, sizeof(peer));
		p53_info("xfr: %s from %s refused: %s",
			 q->qtype == P53_T_AXFR ? "AXFR" : q->qtype == P53_T_IXFR ? "IXFR" : "SOA query", peer,
			 rcode_name(o[3] & 0x0fu));
		p53_put16(th->out + th->out_len, (uint16_t)n);
		th->out_len += 2u + (uint32_t)n;
		th->stats.responses++;
		if (q->qtype != P53_T_SOA)
			th->stats.xfr_served[refusal_kind(o)]++;
	}
	return 0;
}

int p53_tcp_xfr_pump(struct p53_tcp_thread *th, struct conn *c)
{
	struct p53_xfr_out *xo = c->xo;
	char peer[INET6_ADDRSTRLEN];
	long n = 0;

	while (th->out_len + 2u + P53_XFR_MSG_MAX <= OUT_CAP) {
		n = p53_xfr_stream_next(&xo->st, th->out + th->out_len + 2, P53_XFR_MSG_MAX,
					(uint64_t)time(NULL));
		if (n <= 0)
			break;
		p53_put16(th->out + th->out_len, (uint16_t)n);
		th->out_len += 2u + (uint32_t)n;
		th->stats.responses++;
		if (xo->served != P53_XFR_SERVED__MAX)
			th->stats.xfr_bytes += (uint64_t)n;
	}
	if (n > 0)
		return 0;
	if (xo->served != P53_XFR_SERVED__MAX)
		th->stats.xfr_served[n < 0 ? P53_XFR_SERVED_ABORTED : xo->served]++;
	inet_ntop(c->peer.family, c->peer.bytes, peer, sizeof(peer));
	if (n < 0)
		p53_err("xfr: %s to %s failed after %" PRIu64 " messages", xo->what, peer, xo->st.msgs);
	else if (!xo->soa_query)
		p53_info("xfr: %s to %s%s: %" PRIu64 " records in %" PRIu64 " messages, %" PRIu64 " ms",
			 xo->what, peer, xo->key.wire_len > 0 ? " (TSIG)" : "", xo->st.records,
			 xo->st.msgs, p53_tcp_now_ms() - xo->start_ms);
	p53_xfr_out_free(xo);
	c->xo = NULL;
	return n < 0 ? -1 : 0;
}
