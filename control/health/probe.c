/* Network probes without blocking; see probe.h. Control thread only. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/health/probe.h"

enum { CONNECTING = 0, SENDING, READING };

void p53_probe_init(struct p53_probe *p)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}

static int finish(struct p53_probe *p, bool ok, uint64_t now_ms, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int finish(struct p53_probe *p, bool ok, uint64_t now_ms, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	p->ok = ok;
	p->took_ms = now_ms - p->started_ms;
	p53_probe_kill(p);
	return 1;
}

void p53_probe_kill(struct p53_probe *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	free(p->buf);
	p->buf = NULL;
	p->len = p->sent = 0;
}

/* The HTTP request: HTTP/1.1 with Connection: close, so the server's close ends the body. */
static int http_request(struct p53_probe *p, const struct p53_probe_conf *c)
{
	char host[64];
	int n;

	if (c->host == NULL) {
		char a[INET6_ADDRSTRLEN];
		inet_ntop(c->family == 4 ? AF_INET : AF_INET6, c->addr, a, sizeof(a));
		if (c->family == 4)
			snprintf(host, sizeof(host), "%s", a);
		else
			snprintf(host, sizeof(host), "[%s]", a);
	}
	p->buf = malloc(P53_PROBE_HTTP_MAX);
	if (p->buf == NULL)
		return -1;
	n = snprintf((char *)p->buf, P53_PROBE_HTTP_MAX,
		     "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: pop53-probe\r\nAccept: */*\r\n"
		     "Connection: close\r\n\r\n", c->path, c->host != NULL ? c->host : host);
	if (n < 0 || n >= P53_PROBE_HTTP_MAX)
		return -1;
	p->len = (size_t)n;
	return 0;
}

/* A DNS query (RFC 1035 §4.1): random ID, RD clear (we ask an authority), one question, IN. */
static int dns_query(struct p53_probe *p, const struct p53_probe_conf *c)
{
	uint8_t *q;

	p->buf = malloc(12 + c->qwire_len + 4);
	if (p->buf == NULL)
		return -1;
	q = p->buf;
	/* An unpredictable ID (RFC 5452 §9.2); the kernel picks a random source port. */
	if (getrandom(&p->id, sizeof(p->id), GRND_NONBLOCK) != (ssize_t)sizeof(p->id))
		p->id = (uint16_t)random();
	memset(q, 0, 12);
	q[0] = (uint8_t)(p->id >> 8);
	q[1] = (uint8_t)p->id;
	q[5] = 1; /* QDCOUNT */
	memcpy(q + 12, c->qwire, c->qwire_len);
	q += 12 + c->qwire_len;
	q[0] = (uint8_t)(c->qtype >> 8);
	q[1] = (uint8_t)c->qtype;
	q[2] = 0;
	q[3] = 1; /* IN */
	p->len = 12 + c->qwire_len + 4;
	return 0;
}

int p53_probe_start(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t timeout_ms,
		    uint64_t now_ms)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int type = c->type == P53_PROBE_DNS ? SOCK_DGRAM : SOCK_STREAM;

	p53_probe_kill(p);
	p->started_ms = now_ms;
	p->deadline_ms = now_ms + timeout_ms;
	p->phase = CONNECTING;
	memset(&ss, 0, sizeof(ss));
	if (c->family == 4) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)c->port);
		memcpy(&s4->sin_addr, c->addr, 4);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)c->port);
		memcpy(&s6->sin6_addr, c->addr, 16);
		sl = sizeof(*s6);
	}
	if ((c->type == P53_PROBE_HTTP && http_request(p, c) != 0) ||
	    (c->type == P53_PROBE_DNS && dns_query(p, c) != 0))
		return finish(p, false, now_ms, "out of memory");
	p->fd = socket(ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		return finish(p, false, now_ms, "socket: %s", strerror(errno));
	/* UDP: connect() only fixes the peer (replies from elsewhere are dropped by the kernel). */
	if (connect(p->fd, (struct sockaddr *)&ss, sl) != 0 && errno != EINPROGRESS)
		return finish(p, false, now_ms, "connect: %s", strerror(errno));
	if (type == SOCK_DGRAM)
		p->phase = SENDING;
	return 0;
}

/* The verdict on an HTTP response so far; `eof`: the server closed (or the buffer is full). */
static int http_verdict(struct p53_probe *p, const struct p53_probe_conf *c, bool eof,
			uint64_t now_ms)
{
	const char *r = (const char *)p->buf;
	const char *eol = memchr(r, '\n', p->len);
	size_t ll = eol != NULL ? (size_t)(eol - r) : 0;
	unsigned int st;

	if (eol == NULL)
		return eof ? finish(p, false, now_ms, "no HTTP status line (%zu bytes)", p->len) : 0;
	/* The status line (RFC 9112 §4): "HTTP/d.d ddd[ reason]", read within its bytes. */
	if (ll < 12 || memcmp(r, "HTTP/", 5) != 0 || !isdigit((unsigned char)r[5]) || r[6] != '.' ||
	    !isdigit((unsigned char)r[7]) || r[8] != ' ' || !isdigit((unsigned char)r[9]) ||
	    !isdigit((unsigned char)r[10]) || !isdigit((unsigned char)r[11]) ||
	    (ll > 12 && r[12] != ' ' && r[12] != '\r') || r[9] < '1' || r[9] > '5') {
		char show[61];
		size_t n = ll < sizeof(show) - 1 ? ll : sizeof(show) - 1;
		for (size_t i = 0; i < n; i++)
			show[i] = isprint((unsigned char)r[i]) ? r[i] : '?';
		show[n] = '\0';
		return finish(p, false, now_ms, "not an HTTP status line: '%s'", show);
	}
	st = (unsigned int)(r[9] - '0') * 100 + (unsigned int)(r[10] - '0') * 10 + (unsigned int)(r[11] - '0');
	if (st != c->status)
		return finish(p, false, now_ms, "HTTP %u, want %u", st, c->status);
	if (c->body == NULL)
		return finish(p, true, now_ms, "HTTP %u in %llu ms", st,
			      (unsigned long long)(now_ms - p->started_ms));
	const char *hend = memmem(r, p->len, "\r\n\r\n", 4);
	if (hend != NULL && memmem(hend + 4, p->len - (size_t)(hend + 4 - r), c->body,
				   strlen(c->body)) != NULL)
		return finish(p, true, now_ms, "HTTP %u, body has '%s'", st, c->body);
	if (!eof)
		return 0;
	return finish(p, false, now_ms, "HTTP %u, body (%zu bytes read) lacks '%s'", st, p->len,
		      c->body);
}

/* Read what the server sent; decide when it is enough. */
static int http_read(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms)
{
	for (;;) {
		/* One byte kept for the terminator is not needed: the parse is length-bounded. */
		ssize_t n = recv(p->fd, p->buf + p->len, P53_PROBE_HTTP_MAX - p->len, 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return http_verdict(p, c, false, now_ms);
			if (errno == EINTR)
				continue;
			return finish(p, false, now_ms, "recv: %s", strerror(errno));
		}
		p->len += (size_t)n;
		if (n == 0 || p->len == P53_PROBE_HTTP_MAX)
			return http_verdict(p, c, true, now_ms);
	}
}

static const char *const rcode_text[16] = {
	"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET",
	"NXRRSET", "NOTAUTH", "NOTZONE", "RCODE11", "RCODE12", "RCODE13", "RCODE14", "RCODE15",
};

/* Read replies until ours: a stray or spoofed datagram (wrong ID, not a response, another
 * question) is skipped, not a failure. */
static int dns_read(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms)
{
	uint8_t r[512];

	for (;;) {
		ssize_t n = recv(p->fd, r, sizeof(r), 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			/* ICMP port unreachable comes back as ECONNREFUSED on a connected socket. */
			return finish(p, false, now_ms, "recv: %s", strerror(errno));
		}
		size_t qlen = 12 + c->qwire_len + 4;
		if ((size_t)n < qlen || r[0] != (uint8_t)(p->id >> 8) || r[1] != (uint8_t)p->id ||
		    (r[2] & 0x80) == 0 || r[4] != 0 || r[5] != 1 ||
		    memcmp(r + 12, p->buf + 12, qlen - 12) != 0)
			continue;
		int rcode = r[3] & 0x0f;
		unsigned int ancount = (unsigned int)r[6] << 8 | r[7];
		if (rcode != c->rcode)
			return finish(p, false, now_ms, "rcode %s, want %s", rcode_text[rcode],
				      rcode_text[c->rcode]);
		if (c->answer && ancount == 0)
			return finish(p, false, now_ms, "rcode %s but no answer", rcode_text[rcode]);
		return finish(p, true, now_ms, "rcode %s, %u answer(s) in %llu ms", rcode_text[rcode],
			      ancount, (unsigned long long)(now_ms - p->started_ms));
	}
}

int p53_probe_poll(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms)
{
	struct pollfd pfd;

	if (p->fd < 0)
		return 0;
	if (now_ms >= p->deadline_ms)
		return finish(p, false, now_ms, "timed out after %llu ms while %s",
			      (unsigned long long)(now_ms - p->started_ms),
			      p->phase == CONNECTING ? "connecting" : p->phase == SENDING ? "sending" :
			      "waiting for the answer");
	pfd.fd = p->fd;
	pfd.events = p->phase == READING ? POLLIN : POLLOUT;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	if (p->phase == CONNECTING) {
		int e = 0;
		socklen_t el = sizeof(e);
		if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
			e = errno;
		if (e != 0)
			return finish(p, false, now_ms, "connect: %s", strerror(e));
		if (c->type == P53_PROBE_TCP)
			return finish(p, true, now_ms, "connected in %llu ms",
				      (unsigned long long)(now_ms - p->started_ms));
		p->phase = SENDING;
	}
	if (p->phase == SENDING) {
		ssize_t n = send(p->fd, p->buf + p->sent, p->len - p->sent, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return 0;
			return finish(p, false, now_ms, "send: %s", strerror(errno));
		}
		p->sent += (size_t)n;
		if (p->sent < p->len)
			return 0;
		p->phase = READING;
		if (c->type == P53_PROBE_HTTP)
			p->len = 0; /* the buffer now takes the response */
		return 0;
	}
	return c->type == P53_PROBE_HTTP ? http_read(p, c, now_ms) : dns_read(p, c, now_ms);
}
