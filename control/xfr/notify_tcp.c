/*
 * NOTIFY over TCP on the control thread: Knot 3.2 sends its NOTIFYs over TCP only (its
 * requestor has no UDP mode for them), so a Knot primary needs this. Listening sockets on
 * port 53 of the service addresses (the XDP program passes TCP to the kernel), at most
 * P53_XFR_TCP_CONNS connections, 2 s each, only NOTIFY messages (RFC 1996 §3.x allows TCP);
 * anything else closes the connection. Polled every control tick, never blocking.
 * See notify.h for how this goes away once control/tcp/ serves TCP/53.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "control/daemon.h"
#include "control/log.h"
#include "control/xfr/notify.h"
#include "control/xfr/xfr.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/wire.h"

#define CONN_MS 2000    /* a connection's whole life */
#define ACCEPTS 8       /* per listener per tick */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void p53_xfr_notify_tcp_close(struct p53_xfr *x, bool conns_only)
{
	for (int i = 0; i < P53_XFR_TCP_CONNS; i++) {
		if (x->conns[i].fd >= 0)
			close(x->conns[i].fd);
		x->conns[i].fd = -1;
	}
	if (conns_only)
		return;
	for (int i = 0; i < x->n_tcp; i++)
		if (x->tcp_socks[i] >= 0)
			close(x->tcp_socks[i]);
	x->n_tcp = 0;
}

void p53_xfr_notify_tcp_listen(struct p53_daemon *d)
{
	struct p53_xfr *x = d->xfr;
	int socks[P53_XFR_MAX_SOCKS];
	struct p53_addr addrs[P53_XFR_MAX_SOCKS];
	int n = 0;

	/* With DNS over TCP on (control/tcp/), its threads own TCP/53 and hand NOTIFY
	 * connections for secondary zones over (p53_xfr_notify_tcp_adopt): no listener here. */
	for (int i = 0; x->n > 0 && !d->cfg.tcp.enabled && i < d->cfg.n_addrs && n < P53_XFR_MAX_SOCKS; i++) {
		const struct p53_addr *a = &d->cfg.addrs[i];
		int fd = -1;
		for (int k = 0; k < x->n_tcp; k++)
			if (x->tcp_socks[k] >= 0 && memcmp(&x->tcp_addrs[k], a, sizeof(*a)) == 0) {
				fd = x->tcp_socks[k];
				x->tcp_socks[k] = -1;
			}
		if (fd < 0 && (fd = p53_xfr_sock_open(a, SOCK_STREAM)) < 0) {
			char txt[INET6_ADDRSTRLEN];
			inet_ntop(a->family, a->bytes, txt, sizeof(txt));
			p53_warn("xfr: cannot listen on TCP %s port 53 for NOTIFY: %s", txt, strerror(errno));
			continue;
		}
		socks[n] = fd;
		addrs[n++] = *a;
	}
	for (int k = 0; k < x->n_tcp; k++)
		if (x->tcp_socks[k] >= 0)
			close(x->tcp_socks[k]);
	memcpy(x->tcp_socks, socks, sizeof(int) * (size_t)n);
	memcpy(x->tcp_addrs, addrs, sizeof(addrs[0]) * (size_t)n);
	x->n_tcp = n;
}

static void conn_close(struct p53_ntcp_conn *c)
{
	close(c->fd);
	c->fd = -1;
	c->len = 0;
}

/* Every whole message in the buffer: NOTIFY answered, anything else ends the connection. */
static int frames(struct p53_daemon *d, struct p53_ntcp_conn *c)
{
	while (c->len >= 2) {
		size_t mlen = p53_get16(c->buf);
		if (mlen < 12 || mlen > P53_NOTIFY_MSG_MAX)
			return -1;
		if (c->len < 2 + mlen)
			return 0;
		struct p53_notify_event ev;
		struct p53_query q;
		memset(&ev, 0, sizeof(ev));
		memcpy(ev.msg, c->buf + 2, mlen);
		if (p53_msg_parse(ev.msg, mlen, &q) != P53_MSG_OK || P53_OPCODE(q.flags) != P53_OPCODE_NOTIFY)
			return -1; /* only NOTIFY is served here */
		ev.msg_len = (uint16_t)mlen;
		ev.tcp = 1;
		ev.id = q.id;
		ev.zone_len = q.qname_len;
		memcpy(ev.zone, q.lname, q.qname_len);
		ev.ipv6 = c->ipv6;
		memcpy(ev.src, c->peer, 16);
		ev.port = c->peer_port;
		memcpy(ev.dst, c->local, 16);
		d->xfr->notify_tcp++;
		uint8_t out[2 + P53_NOTIFY_MSG_MAX + 512];
		size_t n = p53_xfr_notify_answer(d, &ev, out + 2, sizeof(out) - 2);
		if (n > 0) {
			p53_put16(out, (uint16_t)n);
			if (send(c->fd, out, n + 2, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(n + 2))
				return -1;
		}
		memmove(c->buf, c->buf + 2 + mlen, c->len - 2 - mlen);
		c->len -= 2 + mlen;
	}
	return 0;
}

static struct p53_ntcp_conn *conn_slot(struct p53_xfr *x)
{
	for (int s = 0; s < P53_XFR_TCP_CONNS; s++)
		if (x->conns[s].fd < 0)
			return &x->conns[s];
	return NULL;
}

void p53_xfr_notify_tcp_adopt(struct p53_daemon *d, const struct p53_notify_event *ev)
{
	struct p53_ntcp_conn *c = d->xfr != NULL ? conn_slot(d->xfr) : NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (c == NULL || ev->msg_len < 12 || getsockname(ev->fd, (struct sockaddr *)&ss, &sl) != 0) {
		close(ev->fd); /* full, or not ours to answer: the primary retries its NOTIFY */
		return;
	}
	memset(c, 0, sizeof(*c));
	c->fd = ev->fd;
	c->deadline_ms = now_ms() + CONN_MS;
	c->ipv6 = ev->ipv6;
	memcpy(c->peer, ev->src, 16);
	c->peer_port = ev->port;
	if (ss.ss_family == AF_INET6)
		memcpy(c->local, &((const struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	else
		memcpy(c->local, &((const struct sockaddr_in *)&ss)->sin_addr, 4);
	/* The message the TCP thread read, framed as it came; what follows is read here. */
	p53_put16(c->buf, ev->msg_len);
	memcpy(c->buf + 2, ev->msg, ev->msg_len);
	c->len = 2u + ev->msg_len;
	if (frames(d, c) != 0)
		conn_close(c);
}

void p53_xfr_notify_tcp_poll(struct p53_daemon *d)
{
	struct p53_xfr *x = d->xfr;
	uint64_t now = now_ms();

	for (int i = 0; i < x->n_tcp; i++) {
		for (int k = 0; k < ACCEPTS; k++) {
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);
			int fd = accept4(x->tcp_socks[i], (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				break;
			struct p53_ntcp_conn *c = NULL;
			for (int s = 0; s < P53_XFR_TCP_CONNS && c == NULL; s++)
				if (x->conns[s].fd < 0)
					c = &x->conns[s];
			if (c == NULL) {
				close(fd); /* full: the primary retries its NOTIFY */
				continue;
			}
			memset(c, 0, sizeof(*c));
			c->fd = fd;
			c->deadline_ms = now + CONN_MS;
			c->ipv6 = ss.ss_family == AF_INET6;
			if (c->ipv6) {
				const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
				memcpy(c->peer, &s6->sin6_addr, 16);
				c->peer_port = ntohs(s6->sin6_port);
			} else {
				const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
				memcpy(c->peer, &s4->sin_addr, 4);
				c->peer_port = ntohs(s4->sin_port);
			}
			memcpy(c->local, x->tcp_addrs[i].bytes, 16);
		}
	}
	for (int s = 0; s < P53_XFR_TCP_CONNS; s++) {
		struct p53_ntcp_conn *c = &x->conns[s];
		if (c->fd < 0)
			continue;
		for (;;) {
			ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
			if (n > 0) {
				c->len += (size_t)n;
				if (frames(d, c) != 0) {
					conn_close(c);
					break;
				}
				continue;
			}
			if (n == 0 || (errno != EAGAIN && errno != EINTR) || now >= c->deadline_ms)
				conn_close(c);
			break;
		}
	}
}
