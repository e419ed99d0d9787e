/* NOTIFY on the control thread; see notify.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "control/text.h"
#include "control/daemon.h"
#include "control/log.h"
#include "control/xfr/notify.h"
#include "control/xfr/serve.h"
#include "control/xfr/stream.h"
#include "control/xfr/tsig.h"
#include "control/xfr/xfr.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#define POLL_MAX 64     /* kernel-socket messages taken per tick */

static int addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

void p53_xfr_notify_close(struct p53_xfr *x)
{
	for (int i = 0; i < x->n_socks; i++)
		if (x->socks[i] >= 0)
			close(x->socks[i]);
	x->n_socks = 0;
	p53_xfr_notify_tcp_close(x, false);
}

int p53_xfr_sock_open(const struct p53_addr *a, int type)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int one = 1;
	int fd = socket(a->family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;
		/* The service address may live only in the XDP map (or nowhere, dpdk mode). */
		setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
		s->sin_family = AF_INET;
		s->sin_port = htons(53);
		memcpy(&s->sin_addr, a->bytes, 4);
		sl = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one));
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(53);
		memcpy(&s->sin6_addr, a->bytes, 16);
		sl = sizeof(*s);
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 16) != 0)) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

void p53_xfr_notify_sockets(struct p53_daemon *d)
{
	struct p53_xfr *x = d->xfr;
	bool any = x->n > 0;

	/* Keep the sockets whose address stays; open the new ones. */
	int socks[P53_XFR_MAX_SOCKS];
	struct p53_addr addrs[P53_XFR_MAX_SOCKS];
	int n = 0;
	for (int i = 0; any && i < d->cfg.n_addrs && n < P53_XFR_MAX_SOCKS; i++) {
		const struct p53_addr *a = &d->cfg.addrs[i];
		int fd = -1;
		for (int k = 0; k < x->n_socks; k++)
			if (x->socks[k] >= 0 && memcmp(&x->sock_addrs[k], a, sizeof(*a)) == 0) {
				fd = x->socks[k];
				x->socks[k] = -1;
			}
		if (fd < 0) {
			char txt[INET6_ADDRSTRLEN];
			inet_ntop(a->family, a->bytes, txt, sizeof(txt));
			fd = p53_xfr_sock_open(a, SOCK_DGRAM);
			if (fd < 0) {
				p53_warn("xfr: cannot bind UDP %s port 53 for NOTIFY answers: %s", txt,
					 strerror(errno));
				continue;
			}
		}
		socks[n] = fd;
		addrs[n++] = *a;
	}
	for (int i = 0; i < x->n_socks; i++)
		if (x->socks[i] >= 0)
			close(x->socks[i]);
	memcpy(x->socks, socks, sizeof(int) * (size_t)n);
	memcpy(x->sock_addrs, addrs, sizeof(addrs[0]) * (size_t)n);
	x->n_socks = n;
	p53_xfr_notify_tcp_listen(d);
}

static int sock_for(const struct p53_xfr *x, const struct p53_notify_event *ev)
{
	int fam = ev->ipv6 ? AF_INET6 : AF_INET;

	for (int i = 0; i < x->n_socks; i++)
		if (x->sock_addrs[i].family == fam &&
		    memcmp(x->sock_addrs[i].bytes, ev->dst, (size_t)addr_len(fam)) == 0)
			return x->socks[i];
	return -1;
}

static bool prefix_match(const struct p53_xfr_acl *a, int family, const uint8_t *addr)
{
	if (a->family != family)
		return false;
	unsigned int full = a->len / 8, rest = a->len % 8;
	if (memcmp(a->addr, addr, full) != 0)
		return false;
	return rest == 0 || ((a->addr[full] ^ addr[full]) & (0xffu << (8 - rest)) & 0xffu) == 0;
}

/* Header and question of the NOTIFY, our RCODE (RFC 1996 §4.7: QR, same ID, the question). */
static size_t response(const struct p53_notify_event *ev, size_t qend, uint8_t rcode, uint8_t *out)
{
	memcpy(out, ev->msg, qend);
	uint16_t flags = (uint16_t)(P53_F_QR | (P53_OPCODE_NOTIFY << 11) | P53_F_AA | rcode);
	p53_put16(out + 2, flags);
	p53_put16(out + 4, 1);
	memset(out + 6, 0, 6);
	return qend;
}

static void send_to(struct p53_daemon *d, const struct p53_notify_event *ev, const uint8_t *msg,
		    size_t len)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int fd = sock_for(d->xfr, ev);

	if (ev->ipv6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(ev->port);
		memcpy(&s->sin6_addr, ev->src, 16);
		sl = sizeof(*s);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;
		s->sin_family = AF_INET;
		s->sin_port = htons(ev->port);
		memcpy(&s->sin_addr, ev->src, 4);
		sl = sizeof(*s);
	}
	if (fd < 0 || sendto(fd, msg, len, 0, (struct sockaddr *)&ss, sl) < 0)
		p53_warn("xfr: cannot send the NOTIFY answer: %s",
			 fd < 0 ? "no socket for that service address" : strerror(errno));
}

static void refused(struct p53_daemon *d, const struct p53_notify_event *ev, const char *zone,
		    const char *why)
{
	char src[INET6_ADDRSTRLEN];

	d->xfr->totals.notify_refused++;
	if (d->xfr->totals.notify_refused > 10 && d->xfr->totals.notify_refused % 100 != 0)
		return; /* a flood must not flood the log */
	inet_ntop(ev->ipv6 ? AF_INET6 : AF_INET, ev->src, src, sizeof(src));
	p53_warn("NOTIFY for %s from %s port %u refused (#%" PRIu64 "): %s", zone, src, ev->port,
		 d->xfr->totals.notify_refused, why);
}

size_t p53_xfr_notify_answer(struct p53_daemon *d, const struct p53_notify_event *ev, uint8_t *out,
			     size_t cap)
{
	struct p53_xfr *x = d->xfr;
	char zone[1024];
	struct p53_tsig_rr t;
	uint64_t now = (uint64_t)time(NULL);
	size_t len, qend = 12u + ev->zone_len + 4;

	if (cap < qend + 256)
		return 0;

	p53_name_to_str(zone, sizeof(zone), ev->zone);
	if (x == NULL || ev->msg_len < qend) {
		if (x != NULL)
			x->notify_lost_events++;
		return 0; /* too large to keep: the primary retries */
	}
	struct p53_xfr_zone *z = p53_xfr_find_wire(x, ev->zone, ev->zone_len);
	const struct p53_config_zone *cz = z != NULL && !z->removed ? p53_xfr_zone_conf(&d->cfg, z) : NULL;
	if (cz == NULL) {
		/* Removed since the image the worker read: as the worker would answer now. */
		refused(d, ev, zone, "not a secondary zone here");
		return response(ev, qend, P53_RCODE_NOTAUTH, out);
	}
	enum p53_tsig_status ts = p53_tsig_find(ev->msg, ev->msg_len, &t);
	if (ts == P53_TSIG_FORMERR) {
		refused(d, ev, zone, "malformed TSIG record (FORMERR)");
		return response(ev, qend, P53_RCODE_FORMERR, out);
	}
	/* The ACL: entries whose prefix holds the sender, and the keys they accept. */
	bool matched = false, unsigned_ok = false;
	uint64_t keys = 0;
	for (int i = 0; i < cz->xfr->n_acl; i++) {
		const struct p53_xfr_acl *a = &cz->xfr->acl[i];
		if (!prefix_match(a, ev->ipv6 ? AF_INET6 : AF_INET, ev->src))
			continue;
		matched = true;
		if (a->key < 0)
			unsigned_ok = true;
		else if (a->key < 64)
			keys |= 1ull << a->key;
	}
	if (!matched) {
		/* As Knot: NOTAUTH for a sender no ACL allows. */
		refused(d, ev, zone, "sender not allowed (zones[].notify / primaries)");
		return response(ev, qend, P53_RCODE_NOTAUTH, out);
	}
	const struct p53_tsig_key *key = NULL;
	if (ts == P53_TSIG_OK) {
		int k = -1;
		for (int i = 0; i < d->cfg.xfr.n_keys && k < 0; i++)
			if (d->cfg.xfr.keys[i].wire_len == t.name_len &&
			    memcmp(d->cfg.xfr.keys[i].wire, t.name, t.name_len) == 0)
				k = i;
		enum p53_tsig_status vs = k < 0 ? P53_TSIG_BADKEY
					: p53_tsig_verify(ev->msg, ev->msg_len, &t, &d->cfg.xfr.keys[k], now);
		if (vs == P53_TSIG_OK && !unsigned_ok && (k >= 64 || !(keys & (1ull << k))))
			vs = P53_TSIG_BADKEY; /* a key we know, not one this zone takes */
		if (vs != P53_TSIG_OK) {
			/* RFC 8945 §5.2: NOTAUTH with the TSIG error, unsigned. */
			uint16_t e = vs == P53_TSIG_BADKEY ? P53_TSIG_E_BADKEY
				     : vs == P53_TSIG_BADTIME ? P53_TSIG_E_BADTIME
				     : vs == P53_TSIG_BADTRUNC ? P53_TSIG_E_BADTRUNC : P53_TSIG_E_BADSIG;
			len = response(ev, qend, P53_RCODE_NOTAUTH, out);
			p53_tsig_append_error(out, &len, cap, &t, e, now);
			char why[128];
			snprintf(why, sizeof(why), "TSIG %s", p53_tsig_status_str(vs));
			refused(d, ev, zone, why);
			return len;
		}
		key = &d->cfg.xfr.keys[k];
	} else if (!unsigned_ok) {
		refused(d, ev, zone, "unsigned; the zone's NOTIFY ACL wants a TSIG key");
		return response(ev, qend, P53_RCODE_NOTAUTH, out);
	}
	len = response(ev, qend, P53_RCODE_NOERROR, out);
	if (key != NULL && p53_tsig_sign(out, &len, cap, key, t.mac, t.mac_len, 0, now, NULL,
					 NULL) != 0) {
		p53_err("NOTIFY for %s: cannot sign the answer", zone);
		return 0;
	}
	x->totals.notify_ok++;
	z->notifies++;
	z->notified = true;
	if (z->notify_us == 0)
		z->notify_us = p53_xfr_now_us();
	char src[INET6_ADDRSTRLEN];
	inet_ntop(ev->ipv6 ? AF_INET6 : AF_INET, ev->src, src, sizeof(src));
	p53_info("NOTIFY for %s from %s%s%s%s: refreshing", zone, src, ev->tcp ? " over TCP" : "",
		 key != NULL ? " key " : "", key != NULL ? key->name : "");
	return len;
}

void p53_xfr_soa_query(struct p53_daemon *d, const struct p53_notify_event *ev)
{
	uint8_t out[4096];
	size_t len = 0;
	struct p53_query q;
	struct p53_xfr_out *xo = NULL;
	char src[INET6_ADDRSTRLEN];

	inet_ntop(ev->ipv6 ? AF_INET6 : AF_INET, ev->src, src, sizeof(src));
	if (ev->msg_len == 0 || p53_msg_parse(ev->msg, ev->msg_len, &q) != P53_MSG_OK) {
		d->xfr->notify_lost_events++;
		return; /* over P53_NOTIFY_MSG_MAX: the client retries (over TCP, or gives up) */
	}
	/* Decided as over TCP (serve.c): the zone's `transfer` ACL and key; the SOA alone, signed. */
	if (p53_xfr_serve_request(&d->serve, d->dp.image, ev->msg, ev->msg_len, &q,
				  ev->ipv6 ? AF_INET6 : AF_INET, ev->src, out, sizeof(out), &len, &xo) != 0) {
		p53_err("signed SOA query from %s: out of memory", src);
		return;
	}
	if (xo != NULL) {
		long n = p53_xfr_stream_next(&xo->st, out, sizeof(out), (uint64_t)time(NULL));
		len = n > 0 ? (size_t)n : 0;
		p53_xfr_out_free(xo);
	} else if (len > 0 && ++d->xfr->soa_refused % 100 == 1) {
		char zone[1024];
		p53_info("signed SOA query over UDP for %s from %s refused: RCODE %u (#%" PRIu64 ")",
			 p53_name_to_str(zone, sizeof(zone), ev->zone), src, out[3] & 0x0fu,
			 d->xfr->soa_refused);
	}
	if (len == 0)
		return;
	d->xfr->soa_answered++;
	send_to(d, ev, out, len);
}

void p53_xfr_notify(struct p53_daemon *d, const struct p53_notify_event *ev)
{
	uint8_t out[P53_NOTIFY_MSG_MAX + 512];
	size_t len = p53_xfr_notify_answer(d, ev, out, sizeof(out));

	if (len > 0)
		send_to(d, ev, out, len);
}



void p53_xfr_notify_poll(struct p53_daemon *d)
{
	struct p53_xfr *x = d->xfr;

	p53_xfr_notify_tcp_poll(d);
	for (int i = 0; i < x->n_socks; i++) {
		for (int k = 0; k < POLL_MAX; k++) {
			struct p53_notify_event ev;
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);
			struct p53_query q;
			ssize_t n = recvfrom(x->socks[i], ev.msg, sizeof(ev.msg), MSG_TRUNC,
					     (struct sockaddr *)&ss, &sl);
			if (n < 0)
				break;
			if ((size_t)n > sizeof(ev.msg) || p53_msg_parse(ev.msg, (size_t)n, &q) != P53_MSG_OK ||
			    P53_OPCODE(q.flags) != P53_OPCODE_NOTIFY)
				continue; /* only NOTIFY is ours on this socket */
			memset(&ev, 0, offsetof(struct p53_notify_event, msg));
			ev.msg_len = (uint16_t)n;
			ev.id = q.id;
			ev.zone_len = q.qname_len;
			memcpy(ev.zone, q.lname, q.qname_len);
			ev.ipv6 = ss.ss_family == AF_INET6;
			if (ev.ipv6) {
				const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)&ss;
				memcpy(ev.src, &s->sin6_addr, 16);
				ev.port = ntohs(s->sin6_port);
			} else {
				const struct sockaddr_in *s = (const struct sockaddr_in *)&ss;
				memcpy(ev.src, &s->sin_addr, 4);
				ev.port = ntohs(s->sin_port);
			}
			memcpy(ev.dst, x->sock_addrs[i].bytes, 16);
			x->notify_kernel++;
			p53_xfr_notify(d, &ev);
		}
	}
}
