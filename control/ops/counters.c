/* The counters, described once; see counters.h. */
#include <stdio.h>
#include <string.h>

#include "control/ops/counters.h"

const char *const p53_kind_names[P53_ANS__MAX] = {
	[P53_ANS_DROP] = "dropped", [P53_ANS_ANSWER] = "answer", [P53_ANS_NODATA] = "nodata",
	[P53_ANS_NXDOMAIN] = "nxdomain", [P53_ANS_REFERRAL] = "referral",
	[P53_ANS_REFUSED] = "refused", [P53_ANS_ERROR] = "error", [P53_ANS_CHAOS] = "chaos",
	[P53_ANS_NOTIFY] = "notify", [P53_ANS_HANDOFF] = "handoff",
};

/* The families, in the order they are walked and rendered. */
enum {
	F_RX, F_TX, F_TX_FAIL, F_QUERIES, F_ANSWERED, F_TC, F_TRAILING, F_NOTIFY, F_NOTIFY_LOST,
	F_RCODE, F_QTYPE, F_KIND, F_DROPS, F_MALFORMED, F_RRL, F_COOKIES, F_RRL_TOP,
	F_TCP_ACCEPTED, F_TCP_OPEN, F_TCP_REFUSED, F_TCP_CLOSED, F_TCP_QUERIES, F_TCP_RESPONSES,
	F_TCP_BYTES_IN, F_TCP_BYTES_OUT, F_XFR_SERVED, F_XFR_BYTES, F_XFR_NOTIFY_OUT,
	F_XFR_NOTIFY_IN, F_XFR_APPLIED, F_XFR_IXFR_IMAGE, F_XFR_AXFR_IMAGE, F_EXC_FRAMES, F_EXC_DROPS,
	F_PORT_IN, F_PORT_OUT, F_PORT_MISSED, F_PORT_IERR, F_PORT_OERR, F_PORT_NOMBUF,
	F_PORT_XSK_DROPS, F_PORT_XSK_EMPTY,
	F__MAX
};

static const struct p53_family families[F__MAX] = {
	[F_RX] = { "pop53_rx_packets_total", "rx", NULL, P53_COUNTER, "frames received by the workers" },
	[F_TX] = { "pop53_tx_packets_total", "tx", NULL, P53_COUNTER, "responses the port took" },
	[F_TX_FAIL] = { "pop53_tx_fail_total", "tx_fail", NULL, P53_COUNTER, "responses the port refused (freed)" },
	[F_QUERIES] = { "pop53_queries_total", "queries", NULL, P53_COUNTER, "DNS messages handed to the responder" },
	[F_ANSWERED] = { "pop53_answered_total", "responses", NULL, P53_COUNTER, "responses built, any RCODE" },
	[F_TC] = { "pop53_truncated_total", "tc", NULL, P53_COUNTER, "responses sent with TC=1" },
	[F_TRAILING] = { "pop53_trailing_bytes_total", "trailing", NULL, P53_COUNTER, "queries with bytes after the last record" },
	[F_NOTIFY] = { "pop53_notify_total", "notify", NULL, P53_COUNTER, "NOTIFY messages handed to the control thread" },
	[F_NOTIFY_LOST] = { "pop53_notify_lost_total", "notify_lost", NULL, P53_COUNTER, "NOTIFY events lost to a full ring" },
	[F_RCODE] = { "pop53_responses_total", "rcode", "rcode", P53_COUNTER, "responses by RCODE" },
	[F_QTYPE] = { "pop53_queries_by_type_total", "qtype", "qtype", P53_COUNTER, "queries by QTYPE" },
	[F_KIND] = { "pop53_answers_total", "answers", "kind", P53_COUNTER, "responses by outcome" },
	[F_DROPS] = { "pop53_drops_total", "drops", "reason", P53_COUNTER, "frames and messages dropped without a response, by reason" },
	[F_MALFORMED] = { "pop53_malformed_total", "malformed", "reason", P53_COUNTER, "malformed queries answered FORMERR, by defect" },
	[F_TCP_ACCEPTED] = { "pop53_tcp_connections_total", "tcp.accepted", NULL, P53_COUNTER, "TCP connections taken on" },
	[F_TCP_OPEN] = { "pop53_tcp_open_connections", "tcp.open", NULL, P53_GAUGE, "TCP connections open now" },
	[F_TCP_REFUSED] = { "pop53_tcp_refused_total", "tcp.refused", "reason", P53_COUNTER, "TCP connections closed as soon as accepted, by reason" },
	[F_TCP_CLOSED] = { "pop53_tcp_closed_total", "tcp.closed", "reason", P53_COUNTER, "TCP connections closed, by reason" },
	[F_TCP_QUERIES] = { "pop53_tcp_queries_total", "tcp.queries", NULL, P53_COUNTER, "DNS messages received over TCP" },
	[F_TCP_RESPONSES] = { "pop53_tcp_responses_total", "tcp.responses", NULL, P53_COUNTER, "DNS responses sent over TCP" },
	[F_TCP_BYTES_IN] = { "pop53_tcp_received_bytes_total", "tcp.bytes_in", NULL, P53_COUNTER, "bytes received on TCP connections, length fields included" },
	[F_TCP_BYTES_OUT] = { "pop53_tcp_sent_bytes_total", "tcp.bytes_out", NULL, P53_COUNTER, "bytes sent on TCP connections" },
	[F_XFR_SERVED] = { "pop53_xfr_served_total", "xfr.served", "result", P53_COUNTER, "AXFR/IXFR requests over TCP, by outcome: axfr, ixfr (differences from the journal), ixfr_uptodate (the single SOA), ixfr_axfr (fell back to the whole zone), refused_acl (REFUSED), refused_tsig (NOTAUTH, TSIG error), notauth (not our zone), nodata (SERVFAIL), formerr, aborted (failed part-way)" },
	[F_XFR_BYTES] = { "pop53_xfr_served_bytes_total", "xfr.served_bytes", NULL, P53_COUNTER, "bytes of AXFR/IXFR messages sent (TCP length fields not counted)" },
	[F_XFR_NOTIFY_OUT] = { "pop53_xfr_notify_out_total", "xfr.notify_out", "result", P53_COUNTER, "NOTIFYs sent to the servers pop53 feeds (notify_to): sent (first tries), retried (no answer in time), acked (answered NOERROR), failed (given up: no answer after 5 tries, an error RCODE, TSIG refused)" },
	[F_XFR_NOTIFY_IN] = { "pop53_xfr_notify_in_total", "xfr.notify_in", "result", P53_COUNTER, "NOTIFYs for pop53's secondary zones: ok (answered NOERROR, an SOA check follows), refused (not an allowed source, bad TSIG, not a secondary zone here...)" },
	[F_XFR_APPLIED] = { "pop53_xfr_applied_total", "xfr.applied", "result", P53_COUNTER, "secondary zones' new content (a transfer, or no data at expiry) put into the served image: ok (published), failed (not published: the old data keeps serving)" },
	[F_XFR_IXFR_IMAGE] = { "pop53_xfr_ixfr_image_total", "xfr.ixfr_image", "way", P53_COUNTER, "IXFRs published, by how they got into the image: patched (the running image patched), spliced (the zone compiled alone and spliced in), compiled (every zone compiled)" },
	[F_XFR_AXFR_IMAGE] = { "pop53_xfr_axfr_image_total", "xfr.axfr_image", "way", P53_COUNTER, "whole zones published (an AXFR, or an IXFR answered with the whole zone), by how they got into the image: patched (compared with the zone served and the running image patched), spliced (the zone compiled alone and spliced in), compiled (every zone compiled)" },
	[F_RRL] = { "pop53_rrl_responses_total", "rrl", "action", P53_COUNTER, "responses rate limiting acted on: dropped, slipped (TC=1, BADCOOKIE or a leaked error), exempt (exempt_clients), cookie (valid server cookie, not accounted), would_drop and would_slip (log_only), early (limited before answering)" },
	[F_COOKIES] = { "pop53_cookies_total", "cookies", "cookie", P53_COUNTER, "queries with a COOKIE option, by what it held; badcookie: BADCOOKIE replies sent" },
	[F_RRL_TOP] = { "pop53_rrl_top_limited", "rrl_top", "prefix", P53_GAUGE, "the most rate-limited client prefixes now held in the RRL tables: responses limited" },
	[F_EXC_FRAMES] = { "pop53_exception_frames_total", "exception.frames", "direction", P53_COUNTER, "dpdk mode: frames passed through the exception interface, by direction (to_kernel: from the NIC to the tap; to_wire: from the tap out of the NIC)" },
	[F_EXC_DROPS] = { "pop53_exception_drops_total", "exception.drops", "reason", P53_COUNTER, "dpdk mode: exception frames dropped, by direction and reason" },
	[F_PORT_IN] = { "pop53_port_rx_packets_total", "port.ipackets", NULL, P53_COUNTER, "packets the port received" },
	[F_PORT_OUT] = { "pop53_port_tx_packets_total", "port.opackets", NULL, P53_COUNTER, "packets the port sent" },
	[F_PORT_MISSED] = { "pop53_port_rx_missed_total", "port.imissed", NULL, P53_COUNTER, "packets the port dropped for lack of room" },
	[F_PORT_IERR] = { "pop53_port_rx_errors_total", "port.ierrors", NULL, P53_COUNTER, "receive errors" },
	[F_PORT_OERR] = { "pop53_port_tx_errors_total", "port.oerrors", NULL, P53_COUNTER, "transmit errors" },
	[F_PORT_NOMBUF] = { "pop53_port_rx_nombuf_total", "port.rx_nombuf", NULL, P53_COUNTER, "receive failures for lack of mbufs" },
	[F_PORT_XSK_DROPS] = { "pop53_port_xsk_drops_total", "port.xsk_drops", "reason", P53_COUNTER, "net_af_xdp: frames the kernel dropped at the AF_XDP sockets (XDP_STATISTICS), by reason: rx_ring_full (the worker had not emptied the socket's RX ring; not in imissed), rx_dropped (no fill-ring buffer or too long; the PMD's imissed), rx_invalid_desc, tx_invalid_desc" },
	[F_PORT_XSK_EMPTY] = { "pop53_port_xsk_ring_empty_total", "port.xsk_ring_empty", "ring", P53_COUNTER, "net_af_xdp: times the kernel found a ring of the AF_XDP sockets empty: fill (a receive without a buffer, also counted in rx_dropped), tx (a transmit wakeup with nothing to send)" },
};

void p53_counters_walk(const struct p53_totals *t, const struct p53_port_totals *port,
		       const struct p53_rrl_top *top, p53_counter_fn fn, void *arg)
{
	const struct p53_family *f = families;
	char buf[32];

	fn(arg, &f[F_RX], NULL, t->rx);
	fn(arg, &f[F_TX], NULL, t->tx);
	fn(arg, &f[F_TX_FAIL], NULL, t->tx_fail);
	fn(arg, &f[F_QUERIES], NULL, t->ans.queries);
	fn(arg, &f[F_ANSWERED], NULL, t->answered);
	fn(arg, &f[F_TC], NULL, t->ans.tc);
	fn(arg, &f[F_TRAILING], NULL, t->ans.trailing);
	fn(arg, &f[F_NOTIFY], NULL, t->notify);
	fn(arg, &f[F_NOTIFY_LOST], NULL, t->notify_lost);
	/* The common RCODEs always, so dashboards see zeros; rare ones once they happen. */
	for (unsigned int i = 0; i <= 16; i++)
		if (t->ans.rcode[i] != 0 || i <= 5)
			fn(arg, &f[F_RCODE], p53_rcode_name(i, buf, sizeof(buf)), t->ans.rcode[i]);
	for (unsigned int i = 0; i < P53_QTYPE_BUCKETS; i++) {
		if (t->ans.qtype[i] == 0)
			continue;
		const char *n = p53_qtype_name(i);
		if (n == NULL) {
			snprintf(buf, sizeof(buf), "TYPE%u", i);
			n = buf;
		}
		fn(arg, &f[F_QTYPE], n, t->ans.qtype[i]);
	}
	for (int i = 1; i < P53_ANS__MAX; i++)
		fn(arg, &f[F_KIND], p53_kind_names[i], t->ans.kind[i]);
	for (int i = 1; i < P53_PKT_DROP__MAX; i++)
		fn(arg, &f[F_DROPS], p53_pkt_drop_names[i], t->drop[i]);
	fn(arg, &f[F_DROPS], "multiseg", t->multiseg);
	fn(arg, &f[F_DROPS], "dns_short", t->ans.msg[P53_MSG_SHORT]);
	fn(arg, &f[F_DROPS], "dns_qr", t->ans.msg[P53_MSG_RESPONSE]);
	for (int i = P53_MSG_QDCOUNT; i < P53_MSG__MAX; i++)
		fn(arg, &f[F_MALFORMED], p53_msg_status_names[i], t->ans.msg[i]);
	fn(arg, &f[F_TCP_ACCEPTED], NULL, t->tcp.accepted);
	fn(arg, &f[F_TCP_OPEN], NULL, t->tcp_open);
	for (int i = 0; i < P53_TCP_REFUSE__MAX; i++)
		fn(arg, &f[F_TCP_REFUSED], p53_tcp_refuse_names[i], t->tcp.refused[i]);
	for (int i = 0; i < P53_TCP_CLOSE__MAX; i++)
		fn(arg, &f[F_TCP_CLOSED], p53_tcp_close_names[i], t->tcp.closed[i]);
	fn(arg, &f[F_TCP_QUERIES], NULL, t->tcp.queries);
	fn(arg, &f[F_TCP_RESPONSES], NULL, t->tcp.responses);
	fn(arg, &f[F_TCP_BYTES_IN], NULL, t->tcp.bytes_in);
	fn(arg, &f[F_TCP_BYTES_OUT], NULL, t->tcp.bytes_out);
	for (int i = 0; i < P53_XFR_SERVED__MAX; i++)
		fn(arg, &f[F_XFR_SERVED], p53_xfr_served_names[i], t->tcp.xfr_served[i]);
	fn(arg, &f[F_XFR_BYTES], NULL, t->tcp.xfr_bytes);
	fn(arg, &f[F_XFR_NOTIFY_OUT], "sent", t->xfr.notify_sent);
	fn(arg, &f[F_XFR_NOTIFY_OUT], "retried", t->xfr.notify_retried);
	fn(arg, &f[F_XFR_NOTIFY_OUT], "acked", t->xfr.notify_acked);
	fn(arg, &f[F_XFR_NOTIFY_OUT], "failed", t->xfr.notify_failed);
	const struct p53_xfr_secondary_stats *sec = &t->xfr.secondary;
	fn(arg, &f[F_XFR_NOTIFY_IN], "ok", sec->notify_ok);
	fn(arg, &f[F_XFR_NOTIFY_IN], "refused", sec->notify_refused);
	fn(arg, &f[F_XFR_APPLIED], "ok", sec->applied);
	fn(arg, &f[F_XFR_APPLIED], "failed", sec->apply_failed);
	for (int w = 0; w < P53_WAYS; w++)
		fn(arg, &f[F_XFR_IXFR_IMAGE], p53_update_way_name(w), sec->ixfr.n[w]);
	for (int w = 0; w < P53_WAYS; w++)
		fn(arg, &f[F_XFR_AXFR_IMAGE], p53_update_way_name(w), sec->axfr.n[w]);
	const struct p53_guard_stats *g = &t->guard;
	fn(arg, &f[F_RRL], "dropped", g->rrl_dropped);
	fn(arg, &f[F_RRL], "slipped", g->rrl_slipped);
	fn(arg, &f[F_RRL], "exempt", g->rrl_exempt);
	fn(arg, &f[F_RRL], "cookie", g->rrl_cookie);
	fn(arg, &f[F_RRL], "would_drop", g->rrl_would_drop);
	fn(arg, &f[F_RRL], "would_slip", g->rrl_would_slip);
	fn(arg, &f[F_RRL], "early", g->rrl_early);
	fn(arg, &f[F_COOKIES], "client_only", g->cookie_client);
	fn(arg, &f[F_COOKIES], "valid", g->cookie_valid);
	fn(arg, &f[F_COOKIES], "invalid", g->cookie_invalid);
	fn(arg, &f[F_COOKIES], "badcookie", g->cookie_badcookie);
	for (unsigned int i = 0; top != NULL && i < top->n; i++)
		fn(arg, &f[F_RRL_TOP], top->e[i].prefix, top->e[i].limited);
	static const char *const dirs[] = { "to_kernel", "to_wire" };
	static const char *const exc_drops[] = { "to_kernel_queue_full", "to_kernel_tap_refused",
						  "to_wire_queue_full", "to_wire_nic_refused" };
	for (int i = 0; i < 2; i++)
		fn(arg, &f[F_EXC_FRAMES], dirs[i], t->exc_frames[i]);
	for (int i = 0; i < 4; i++)
		fn(arg, &f[F_EXC_DROPS], exc_drops[i], t->exc_drops[i]);
	if (port != NULL && port->valid) {
		fn(arg, &f[F_PORT_IN], NULL, port->ipackets);
		fn(arg, &f[F_PORT_OUT], NULL, port->opackets);
		fn(arg, &f[F_PORT_MISSED], NULL, port->imissed);
		fn(arg, &f[F_PORT_IERR], NULL, port->ierrors);
		fn(arg, &f[F_PORT_OERR], NULL, port->oerrors);
		fn(arg, &f[F_PORT_NOMBUF], NULL, port->rx_nombuf);
	}
	if (port != NULL && port->xsk) {
		fn(arg, &f[F_PORT_XSK_DROPS], "rx_ring_full", port->xsk_rx_ring_full);
		fn(arg, &f[F_PORT_XSK_DROPS], "rx_dropped", port->xsk_rx_dropped);
		fn(arg, &f[F_PORT_XSK_DROPS], "rx_invalid_desc", port->xsk_rx_invalid);
		fn(arg, &f[F_PORT_XSK_DROPS], "tx_invalid_desc", port->xsk_tx_invalid);
		fn(arg, &f[F_PORT_XSK_EMPTY], "fill", port->xsk_fill_empty);
		fn(arg, &f[F_PORT_XSK_EMPTY], "tx", port->xsk_tx_empty);
	}
}

/* The totals are plain arrays of uint64_t; adding them word by word keeps the two in step. */
#define N64(x) (sizeof(x) / sizeof(uint64_t))
_Static_assert(sizeof(struct p53_totals) % sizeof(uint64_t) == 0, "totals are uint64_t only");

static void add(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] += src[i];
}

void p53_totals_sum(const struct p53_worker *workers, unsigned int n, struct p53_totals *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < n; i++) {
		const struct p53_worker_stats *s = &workers[i].stats;
		out->rx += s->rx;
		out->tx += s->tx;
		out->tx_fail += s->tx_fail;
		out->answered += s->answered;
		out->no_answer += s->no_answer;
		out->multiseg += s->multiseg;
		out->notify += s->notify;
		out->notify_lost += s->notify_lost;
		add(out->drop, s->drop, P53_PKT_DROP__MAX);
		out->exc_frames[P53_EXC_TO_WIRE] += s->exc_tx;
		out->exc_drops[P53_EXC_DROP_KERNEL_QUEUE] += s->exc_full;
		out->exc_drops[P53_EXC_DROP_WIRE_NIC] += s->exc_tx_fail;
		add((uint64_t *)&out->ans, (const uint64_t *)&s->ans, N64(s->ans));
		add((uint64_t *)&out->guard, (const uint64_t *)&s->guard, N64(s->guard));
	}
}

void p53_totals_add_tcp(struct p53_totals *t, const struct p53_tcp_stats *tcp)
{
	uint64_t closed = 0;

	t->tcp = *tcp;
	add((uint64_t *)&t->ans, (const uint64_t *)&tcp->ans, N64(tcp->ans));
	t->answered += tcp->responses;
	t->notify += tcp->notify;
	t->notify_lost += tcp->notify_lost;
	for (int i = 0; i < P53_TCP_CLOSE__MAX; i++)
		closed += tcp->closed[i];
	/* Read racily while threads run: never show a negative count. */
	t->tcp_open = tcp->accepted > closed ? tcp->accepted - closed : 0;
}

void p53_totals_add_exc(struct p53_totals *t, const struct p53_exc_stats *x)
{
	t->exc_frames[P53_EXC_TO_KERNEL] += x->to_kernel;
	t->exc_drops[P53_EXC_DROP_KERNEL_TAP] += x->tap_refused;
	t->exc_drops[P53_EXC_DROP_WIRE_QUEUE] += x->to_wire_full;
}

void p53_totals_sub(struct p53_totals *t, const struct p53_totals *base)
{
	uint64_t *d = (uint64_t *)t;
	const uint64_t *b = (const uint64_t *)base;
	uint64_t open = t->tcp_open;

	for (size_t i = 0; i < N64(*t); i++)
		d[i] -= b[i];
	t->tcp_open = open;
}

const char *p53_rcode_name(unsigned int rcode, char *buf, size_t len)
{
	static const char *const names[] = {
		"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN",
		"YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE",
	};

	if (rcode < sizeof(names) / sizeof(names[0]))
		return names[rcode];
	if (rcode == 16)
		return "BADVERS";
	snprintf(buf, len, "RCODE%u", rcode);
	return buf;
}

const char *p53_qtype_name(unsigned int bucket)
{
	static const char *const names[P53_QTYPE_BUCKETS] = {
		[1] = "A", [2] = "NS", [5] = "CNAME", [6] = "SOA", [12] = "PTR", [15] = "MX",
		[16] = "TXT", [28] = "AAAA", [33] = "SRV", [35] = "NAPTR", [39] = "DNAME",
		[43] = "DS", [46] = "RRSIG", [47] = "NSEC", [48] = "DNSKEY", [50] = "NSEC3",
		[52] = "TLSA", [P53_QTYPE_BUCKETS - 1] = "other",
	};

	return bucket < P53_QTYPE_BUCKETS ? names[bucket] : NULL;
}
