/*
 * One TCP connection of the DNS server (server.h): RFC 7766 framing, answering, buffering.
 * Runs on its TCP thread only, inside the thread's RCU online section.
 *
 * A connection is a receive buffer and, while the client reads slower than we answer, the
 * output it has not taken yet. Each event: send what is pending; if nothing is, answer every
 * whole message already received, then read once (the socket is level-triggered, so a busy
 * client cannot starve the others) and answer again. Responses of one event are gathered in
 * the thread's `out` buffer and sent with one send(). While output is pending nothing more is
 * read: memory per connection stays bounded and the kernel's socket buffers absorb the
 * pipelining a reading client needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "control/tcp/server.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/notify.h"
#include "control/xfr/serve.h"
#include "dataplane/wire.h"

#define OUT_CAP P53_TCP_TX_MAX  /* room for one largest response plus 16 KiB of small ones */
#define KEEP 0                  /* p53_tcp_conn_event: keep the connection */
#define CLOSE(why) (1 + (int)(why))
#define XFR_MSGS_PER_EVENT 8    /* transfer messages (up to 64 KiB each) sent per event */

uint64_t p53_tcp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void p53_tcp_conn_touch(struct p53_tcp_thread *th, struct conn *c, uint64_t now)
{
	c->active_ms = now;
	TAILQ_REMOVE(&th->idle, c, idle_link);
	TAILQ_INSERT_TAIL(&th->idle, c, idle_link);
}

static void set_events(struct p53_tcp_thread *th, struct conn *c, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = c};

	if (c->events == events)
		return;
	/* MOD on a registered fd only fails if the fd is gone, and then its close is coming. */
	epoll_ctl(th->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	c->events = events;
}

struct conn *p53_tcp_conn_new(struct p53_tcp_thread *th, int fd, const struct p53_addr *peer,
			      uint16_t port, uint64_t now)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

	if (c == NULL)
		return NULL;
	c->rx = malloc(P53_TCP_RX_SMALL);
	ev.data.ptr = c;
	if (c->rx == NULL || epoll_ctl(th->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		free(c->rx);
		free(c);
		return NULL;
	}
	c->kind = EV_CONN;
	c->fd = fd;
	c->peer = *peer;
	c->peer_port = port;
	c->events = EPOLLIN;
	c->rx_cap = P53_TCP_RX_SMALL;
	c->active_ms = now;
	TAILQ_INSERT_TAIL(&th->idle, c, idle_link);
	th->n_conns++;
	th->stats.accepted++;
	return c;
}

void p53_tcp_conn_close(struct p53_tcp_thread *th, struct conn *c, enum p53_tcp_close why)
{
	/* Closing leaves the epoll set only when nobody else holds the socket: a connection
	 * handed to the control thread (a dup) leaves it explicitly. */
	if (why == P53_TCP_CLOSE_NOTIFY_HANDOFF)
		epoll_ctl(th->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	TAILQ_REMOVE(&th->idle, c, idle_link);
	if (c->in_msg)
		TAILQ_REMOVE(&th->msgs, c, msg_link);
	if (c->in_write)
		TAILQ_REMOVE(&th->writes, c, write_link);
	p53_tcp_limits_put(th->limits, &c->peer);
	th->stats.closed[why]++;
	th->n_conns--;
	free(c->rx);
	free(c->tx);
	p53_xfr_out_free(c->xo);
	free(c);
}

/* Send the pending output. */
static int flush_tx(struct p53_tcp_thread *th, struct conn *c, uint64_t now)
{
	uint32_t before = c->tx_off;

	while (c->tx_off < c->tx_len) {
		ssize_t n = send(c->fd, c->tx + c->tx_off, c->tx_len - c->tx_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c->tx_off += (uint32_t)n;
			th->stats.bytes_out += (uint64_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			break;
		} else {
			return CLOSE(P53_TCP_CLOSE_ERROR);
		}
	}
	if (c->tx_off == before)
		return KEEP;
	p53_tcp_conn_touch(th, c, now);
	TAILQ_REMOVE(&th->writes, c, write_link);
	if (c->tx_off < c->tx_len) {
		/* It moved: the client reads, slowly. Its deadline starts again. */
		c->write_ms = now;
		TAILQ_INSERT_TAIL(&th->writes, c, write_link);
		return KEEP;
	}
	c->in_write = 0;
	free(c->tx);
	c->tx = NULL;
	c->tx_off = c->tx_len = 0;
	return KEEP;
}

/* Send the thread's gathered responses; what the socket does not take waits in c->tx. */
static int send_out(struct p53_tcp_thread *th, struct conn *c, uint64_t now)
{
	uint32_t sent = 0;

	while (sent < th->out_len) {
		ssize_t n = send(c->fd, th->out + sent, th->out_len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0)
			sent += (uint32_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		else
			return CLOSE(P53_TCP_CLOSE_ERROR);
	}
	th->stats.bytes_out += sent;
	if (sent > 0)
		p53_tcp_conn_touch(th, c, now);
	if (sent < th->out_len) {
		uint32_t rest = th->out_len - sent;
		c->tx = malloc(rest);
		if (c->tx == NULL)
			return CLOSE(P53_TCP_CLOSE_NO_MEMORY);
		memcpy(c->tx, th->out + sent, rest);
		c->tx_off = 0;
		c->tx_len = rest;
		c->write_ms = now;
		c->in_write = 1;
		TAILQ_INSERT_TAIL(&th->writes, c, write_link);
	}
	th->out_len = 0;
	return KEEP;
}

/* A NOTIFY (RFC 1996) as an event for the control thread (dataplane/notify.h). */
static void notify_event(struct p53_notify_event *ev, const struct conn *c,
			 const struct p53_query *q, const uint8_t *msg, uint16_t len)
{
	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
	ev->tcp = 1;
	ev->port = c->peer_port;
	ev->id = q->id;
	ev->ipv6 = c->peer.family == AF_INET6;
	memcpy(ev->src, c->peer.bytes, 16);
	ev->zone_len = q->qname_len;
	memcpy(ev->zone, q->lname, q->qname_len);
	if (len <= P53_NOTIFY_MSG_MAX) {
		memcpy(ev->msg, msg, len);
		ev->msg_len = len;
	}
}

static int notify_enqueue(struct p53_tcp_thread *th, struct p53_notify_event *ev)
{
	if (th->notify_ring != NULL &&
	    rte_ring_mp_enqueue_elem(th->notify_ring, ev, sizeof(*ev)) == 0) {
		th->stats.notify++;
		return 0;
	}
	th->stats.notify_lost++;
	return -1;
}

/* The connection of a NOTIFY for a secondary zone goes to the control thread, which checks
 * its sender and TSIG and answers on it (control/xfr/notify_tcp.c). Called once the answers
 * before it were sent, so they stay in order on the wire. */
static void notify_handoff(struct p53_tcp_thread *th, const struct conn *c)
{
	th->handoff.fd = fcntl(c->fd, F_DUPFD_CLOEXEC, 0);
	th->handoff.handoff = th->handoff.fd >= 0;
	if (th->handoff.fd < 0 || notify_enqueue(th, &th->handoff) != 0) {
		if (th->handoff.fd >= 0)
			close(th->handoff.fd); /* the primary retries its NOTIFY */
	}
}

/* Answer one message into th->out (room for the largest response is there). Returns KEEP, or
 * CLOSE(P53_TCP_CLOSE_NOTIFY_HANDOFF) with th->handoff filled for a NOTIFY the control thread
 * answers. */
static int answer(struct p53_tcp_thread *th, struct conn *c, const struct p53_replica *r,
		  const struct p53_answer_conf *cf, const uint8_t *msg, uint16_t len)
{
	uint8_t *q = th->out + th->out_len + 2;
	struct p53_query pq;

	th->stats.queries++;
	memcpy(q, msg, len);
	enum p53_msg_status ms = p53_msg_parse(q, len, &pq);
	/* RFC 7828 §3.2.1: a query's edns-tcp-keepalive has no TIMEOUT; over TCP one that has is
	 * a malformed option, FORMERR (UDP ignores the option, §3.3.1). */
	if (ms == P53_MSG_OK && pq.keepalive > 1)
		ms = P53_MSG_OPT_OPTION;
	pq.src = c->peer.bytes;                 /* steering decides by it (steer.h) */
	pq.src_v6 = c->peer.family == AF_INET6;
	/* Transfers, and signed SOA queries (a downstream secondary's refresh check: the TSIG
	 * keys are the transfer table's, control/xfr/serve.h). */
	if (ms == P53_MSG_OK && P53_OPCODE(pq.flags) == P53_OPCODE_QUERY && th->serve != NULL &&
	    (pq.qtype == P53_T_AXFR || pq.qtype == P53_T_IXFR || (pq.qtype == P53_T_SOA && pq.tsig)))
		return p53_tcp_xfr_start(th, c, r != NULL ? r->image : NULL, msg, len, &pq) == 0
			       ? KEEP
			       : CLOSE(P53_TCP_CLOSE_NO_MEMORY);
	int is_notify = ms == P53_MSG_OK && P53_OPCODE(pq.flags) == P53_OPCODE_NOTIFY;
	if (is_notify)
		notify_event(&th->handoff, c, &pq, msg, len);
	uint16_t n = p53_answer_parsed(r != NULL ? r->image : NULL, cf, q, UINT16_MAX, &th->stats.ans,
				       &pq, ms);
	if (is_notify) {
		/* Answered here (NOTAUTH: not a secondary zone) and logged by the control thread,
		 * or not answered: a secondary zone's apex, the control thread answers. */
		if (n == 0)
			return CLOSE(P53_TCP_CLOSE_NOTIFY_HANDOFF);
		th->handoff.answered = 1;
		notify_enqueue(th, &th->handoff);
	}
	if (n == 0)
		return KEEP; /* not answered (shorter than a header, or a response): counted as a drop */
	p53_put16(th->out + th->out_len, n);
	th->out_len += 2u + n;
	th->stats.responses++;
	return KEEP;
}

/* Is the start of rx (rx_len > 0) a partial message? */
static int partial(const struct conn *c)
{
	return c->rx_len < 2 || c->rx_len < 2u + p53_get16(c->rx);
}

/*
 * Answer every whole message in rx while no output is pending. Then keep the partial one at the
 * start of rx, with room for all of it, and its deadline.
 */
static int frames(struct p53_tcp_thread *th, struct conn *c, uint64_t now)
{
	const struct p53_replica *r = __atomic_load_n(th->replica, __ATOMIC_ACQUIRE);
	struct p53_answer_conf cf;
	uint32_t pos = 0;
	int rc = KEEP;

	if (r != NULL)
		cf = r->conf;
	else
		memset(&cf, 0, sizeof(cf));
	cf.tcp_limit = UINT16_MAX;
	cf.keepalive = th->conf->idle_timeout_ms / 100 > UINT16_MAX ? UINT16_MAX
			: (uint16_t)(th->conf->idle_timeout_ms / 100);
	th->out_len = 0;
	while (c->tx == NULL && c->xo == NULL && c->rx_len - pos >= 2) {
		uint16_t len = p53_get16(c->rx + pos);
		if (len == 0) {
			/* RFC 7766 §8 frames messages; a message is at least a header: nothing to
			 * answer, and nothing after it can be trusted to be framed. */
			rc = CLOSE(P53_TCP_CLOSE_ZERO_LENGTH);
			break;
		}
		if (c->rx_len - pos - 2 < len)
			break;
		if (th->out_len + 2u + UINT16_MAX > OUT_CAP) {
			rc = send_out(th, c, now);
			if (rc != KEEP || c->tx != NULL)
				break;
		}
		rc = answer(th, c, r, &cf, c->rx + pos + 2, len);
		pos += 2u + len;
		if (rc != KEEP)
			break;
	}
	/* Answers to the messages before a bad one still go out before the close. */
	if (th->out_len > 0) {
		int sent = send_out(th, c, now);
		if (rc == KEEP)
			rc = sent;
	}
	th->out_len = 0;
	if (rc == CLOSE(P53_TCP_CLOSE_NOTIFY_HANDOFF))
		notify_handoff(th, c);
	if (rc != KEEP)
		return rc;
	if (pos > 0) {
		memmove(c->rx, c->rx + pos, c->rx_len - pos);
		c->rx_len -= pos;
	}
	/* The slowloris deadline runs from the first byte of a message to its last. */
	int part = c->rx_len > 0 && partial(c);
	if (part && (!c->in_msg || pos > 0)) {
		if (c->in_msg)
			TAILQ_REMOVE(&th->msgs, c, msg_link);
		c->msg_ms = now;
		c->in_msg = 1;
		TAILQ_INSERT_TAIL(&th->msgs, c, msg_link);
	} else if (!part && c->in_msg) {
		TAILQ_REMOVE(&th->msgs, c, msg_link);
		c->in_msg = 0;
	}
	uint32_t need = c->rx_len >= 2 ? 2u + p53_get16(c->rx) : 2;
	if (need > c->rx_cap || (c->rx_len == 0 && c->rx_cap > P53_TCP_RX_SMALL)) {
		uint32_t cap = need > P53_TCP_RX_SMALL ? need : P53_TCP_RX_SMALL;
		uint8_t *nrx = realloc(c->rx, cap);
		if (nrx == NULL)
			return CLOSE(P53_TCP_CLOSE_NO_MEMORY);
		c->rx = nrx;
		c->rx_cap = cap;
	}
	return KEEP;
}

/* One recv() into the free end of rx. */
static int read_in(struct p53_tcp_thread *th, struct conn *c, uint64_t now)
{
	/* frames() left room for the whole partial message; a full rx would read as EOF. */
	if (c->rx_len == c->rx_cap)
		return KEEP;
	for (;;) {
		ssize_t n = recv(c->fd, c->rx + c->rx_len, c->rx_cap - c->rx_len, MSG_DONTWAIT);
		if (n > 0) {
			c->rx_len += (uint32_t)n;
			th->stats.bytes_in += (uint64_t)n;
			p53_tcp_conn_touch(th, c, now);
		} else if (n == 0) {
			c->eof = 1;
		} else if (errno == EINTR) {
			continue;
		} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
			return CLOSE(P53_TCP_CLOSE_ERROR);
		}
		return KEEP;
	}
}

int p53_tcp_conn_event(struct p53_tcp_thread *th, struct conn *c, uint32_t events, uint64_t now)
{
	int rc;

	if (events & EPOLLERR)
		return CLOSE(P53_TCP_CLOSE_ERROR);
	if (c->tx != NULL && (rc = flush_tx(th, c, now)) != KEEP)
		return rc;
	/* A zone transfer: the next messages as the socket takes them, a few per event so the
	 * thread's other connections get their turn. */
	for (int i = 0; i < XFR_MSGS_PER_EVENT && c->tx == NULL && c->xo != NULL; i++) {
		th->out_len = 0;
		if (p53_tcp_xfr_pump(th, c) != 0)
			return CLOSE(P53_TCP_CLOSE_ERROR);
		if (th->out_len > 0 && (rc = send_out(th, c, now)) != KEEP)
			return rc;
	}
	if (c->tx == NULL && c->xo == NULL) {
		/* Whole messages may have waited for the output to drain. */
		if ((rc = frames(th, c, now)) != KEEP)
			return rc;
		if (c->tx == NULL && !c->eof && (events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP))) {
			if ((rc = read_in(th, c, now)) != KEEP || (rc = frames(th, c, now)) != KEEP)
				return rc;
		}
	}
	if (c->eof && c->tx == NULL && c->xo == NULL) {
		/* Everything whole is answered and sent: what is left is a message cut short. */
		return CLOSE(c->rx_len > 0 ? P53_TCP_CLOSE_EOF_MID_MESSAGE : P53_TCP_CLOSE_EOF);
	}
	set_events(th, c, c->tx != NULL || c->xo != NULL ? EPOLLOUT : EPOLLIN);
	return KEEP;
}
