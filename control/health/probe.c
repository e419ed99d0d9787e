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

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "control/health/probe.h"

enum { CONNECTING = 0, HANDSHAKE, SENDING, READING };

static void conn_close(struct p53_probe *p);

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
	/* After the handshake, the run ends as the server's close ended it: OpenSSL would make
	 * the session unresumable when freeing a connection that sent no close_notify, and
	 * sending one now could only meet a closed socket. A fatal TLS error has already done
	 * so (its alert), and a failed handshake drops the session (tls_wait_or_fail). */
	if (p->ssl != NULL && p->phase == READING)
		SSL_set_shutdown(p->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	/* Leave no TLS failure queued for the thread's other OpenSSL users (DNSSEC signing). */
	ERR_clear_error();
	p->ok = ok;
	p->took_ms = now_ms - p->started_ms;
	conn_close(p);
	return 1;
}

/* The connection of one run: its TLS, socket and buffer (the TLS context stays). */
static void conn_close(struct p53_probe *p)
{
	SSL_free(p->ssl); /* also its socket BIO; the socket is ours to close */
	p->ssl = NULL;
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	free(p->buf);
	p->buf = NULL;
	p->len = p->sent = p->rlen = 0;
	p->want = 0;
}

static void session_drop(struct p53_probe *p)
{
	SSL_SESSION_free(p->session);
	p->session = NULL;
	p->session_key = 0;
}

void p53_probe_kill(struct p53_probe *p)
{
	conn_close(p);
	session_drop(p);
	SSL_CTX_free(p->tls);
	p->tls = NULL;
}

/* OpenSSL hands over each session the server gives (TLS 1.3: the tickets that follow the
 * handshake; TLS 1.2: at its end): keep the last resumable one for the next run. */
static int session_new(SSL *ssl, SSL_SESSION *sess)
{
	struct p53_probe *p = SSL_get_app_data(ssl);

	if (p == NULL || SSL_SESSION_is_resumable(sess) != 1)
		return 0;
	SSL_SESSION_free(p->session);
	p->session = sess;
	p->session_key = p->tls_key;
	return 1; /* the reference is ours */
}

/* OpenSSL's reason for the last failure on this thread, or `dflt`. */
static const char *tls_reason(const char *dflt)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e != 0 ? ERR_reason_error_string(e) : NULL;

	return r != NULL ? r : dflt;
}

/* The TLS context of an https check: its trust (a CA file or the system store) is loaded once
 * and kept in the probe until p53_probe_kill (a reload makes a new one). */
static int tls_context(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms)
{
	SSL_CTX *x;

	if (p->tls != NULL)
		return 0;
	ERR_clear_error();
	x = SSL_CTX_new(TLS_client_method());
	if (x == NULL)
		return finish(p, false, now_ms, "TLS: %s", tls_reason("no context"));
	SSL_CTX_set_min_proto_version(x, TLS1_2_VERSION);
	/* Sessions go to session_new and live in the probe, one per check: no cache of OpenSSL's
	 * own, which would key them by context, not by target. */
	SSL_CTX_set_session_cache_mode(x, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(x, session_new);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
	/* A server that closes without close_notify ends the body, as plain HTTP's close does. */
	SSL_CTX_set_options(x, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
	if (c->tls_verify) {
		if (c->ca_file != NULL && SSL_CTX_load_verify_locations(x, c->ca_file, NULL) != 1) {
			finish(p, false, now_ms, "TLS: ca_file %s: %s", c->ca_file,
			       tls_reason("no certificate in it"));
			SSL_CTX_free(x);
			return 1;
		}
		/* The system store as OpenSSL's hashed folder, read at verification for the
		 * issuers a chain needs: SSL_CTX_set_default_verify_paths() would also parse the
		 * whole bundle file here, measured at 55-100 ms of the control thread per check. */
		const char *dir = getenv(X509_get_default_cert_dir_env());
		if (dir == NULL || dir[0] == '\0')
			dir = X509_get_default_cert_dir();
		if (c->ca_file == NULL && SSL_CTX_load_verify_locations(x, NULL, dir) != 1) {
			finish(p, false, now_ms, "TLS: the system CA folder %s: %s", dir,
			       tls_reason("not usable"));
			SSL_CTX_free(x);
			return 1;
		}
		SSL_CTX_set_verify(x, SSL_VERIFY_PEER, NULL);
	} else {
		SSL_CTX_set_verify(x, SSL_VERIFY_NONE, NULL);
	}
	p->tls = x;
	return 0;
}

/* What a session is made under, hashed (FNV-1a): tls_verify, ca_file, and the name (SNI and
 * the name verified) or the IP address verified. */
static uint64_t tls_key(const struct p53_probe_conf *c, const char *name, int iplen,
			const uint8_t *ip)
{
	uint64_t h = 1469598103934665603ull;
	const char *ca = c->ca_file != NULL ? c->ca_file : "";
	size_t calen = strlen(ca);

	h = (h ^ (c->tls_verify ? 1u : 2u)) * 1099511628211ull;
	for (size_t i = 0; i <= calen; i++) /* its NUL too: the name cannot extend it */
		h = (h ^ (uint8_t)ca[i]) * 1099511628211ull;
	h = (h ^ (uint8_t)iplen) * 1099511628211ull;
	for (size_t i = 0, n = iplen != 0 ? (size_t)iplen : strlen(name); i < n; i++)
		h = (h ^ (iplen != 0 ? ip[i] : (uint8_t)name[i])) * 1099511628211ull;
	return h;
}

/* The name the server is asked for (SNI) and its certificate must hold: check.host without a
 * port. An IP literal there, or no host, is checked against the certificate's IP addresses and
 * sent no SNI (RFC 6066 §3 allows only host names). */
static int tls_begin(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms)
{
	char name[256];
	uint8_t ip[16];
	int iplen = 0;

	ERR_clear_error();
	p->ssl = SSL_new(p->tls);
	if (p->ssl == NULL || SSL_set_fd(p->ssl, p->fd) != 1)
		return finish(p, false, now_ms, "TLS: %s", tls_reason("out of memory"));
	SSL_set_connect_state(p->ssl);
	name[0] = '\0';
	if (c->host != NULL) {
		const char *h = c->host, *end;
		if (h[0] == '[') {
			h++;
			end = strchr(h, ']');
		} else if (inet_pton(AF_INET6, h, ip) == 1) {
			end = NULL; /* an IPv6 address without brackets: no port to take off */
		} else {
			end = strchr(h, ':');
		}
		size_t n = end != NULL ? (size_t)(end - h) : strlen(h);
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, h, n);
		name[n] = '\0';
		if (inet_pton(AF_INET, name, ip) == 1)
			iplen = 4;
		else if (inet_pton(AF_INET6, name, ip) == 1)
			iplen = 16;
	} else {
		iplen = c->family == 4 ? 4 : 16;
		memcpy(ip, c->addr, (size_t)iplen);
	}
	if (iplen == 0 && SSL_set_tlsext_host_name(p->ssl, name) != 1)
		return finish(p, false, now_ms, "TLS: SNI '%s': %s", name, tls_reason("refused"));
	/* Resume only what the same checks made: a session carries the verification of the
	 * handshake that made it, so one made with other settings or for another name is
	 * dropped. (A reload with another check makes a new probe anyway.) */
	p->tls_key = tls_key(c, name, iplen, ip);
	if (p->session != NULL && (p->session_key != p->tls_key ||
				   SSL_SESSION_is_resumable(p->session) != 1))
		session_drop(p);
	SSL_set_app_data(p->ssl, p);
	if (p->session != NULL && SSL_set_session(p->ssl, p->session) != 1)
		session_drop(p); /* a full handshake then */
	if (c->tls_verify) {
		X509_VERIFY_PARAM *vp = SSL_get0_param(p->ssl);
		X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
		if ((iplen != 0 && X509_VERIFY_PARAM_set1_ip(vp, ip, (size_t)iplen) != 1) ||
		    (iplen == 0 && SSL_set1_host(p->ssl, name) != 1))
			return finish(p, false, now_ms, "TLS: name to verify: %s",
				      tls_reason("refused"));
	}
	p->phase = HANDSHAKE;
	p->want = POLLOUT;
	return 0;
}

/* After an SSL_* call returned `r` <= 0: 0 when it only waits for the socket (p->want set),
 * else the probe fails with `what` and the reason. */
static int tls_wait_or_fail(struct p53_probe *p, const struct p53_probe_conf *c, int r,
			    const char *what, uint64_t now_ms)
{
	int e = SSL_get_error(p->ssl, r);
	long vr;

	if (e == SSL_ERROR_WANT_READ) {
		p->want = POLLIN;
		return 0;
	}
	if (e == SSL_ERROR_WANT_WRITE) {
		p->want = POLLOUT;
		return 0;
	}
	/* A handshake that failed may have failed on the offered session: none next time. */
	if (p->phase == HANDSHAKE)
		session_drop(p);
	vr = SSL_get_verify_result(p->ssl);
	if (p->phase == HANDSHAKE && c->tls_verify && vr != X509_V_OK)
		return finish(p, false, now_ms, "TLS certificate: %s",
			      X509_verify_cert_error_string(vr));
	if (e == SSL_ERROR_SYSCALL && ERR_peek_last_error() == 0)
		return finish(p, false, now_ms, "%s: %s", what,
			      r == 0 || errno == 0 ? "connection closed by the server" : strerror(errno));
	return finish(p, false, now_ms, "%s: %s", what, tls_reason("failed"));
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
	size_t qlen = 12 + c->qwire_len + 4, pre = c->tcp ? 2 : 0;
	uint8_t *q;

	/* TCP: the query after its length (RFC 7766 §8), then room for the reply's head. */
	p->buf = malloc(pre + qlen + (c->tcp ? 2 + P53_PROBE_DNS_HEAD : 0));
	if (p->buf == NULL)
		return -1;
	if (c->tcp) {
		p->buf[0] = (uint8_t)(qlen >> 8);
		p->buf[1] = (uint8_t)qlen;
	}
	q = p->buf + pre;
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
	p->len = pre + qlen;
	return 0;
}

int p53_probe_start(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t timeout_ms,
		    uint64_t now_ms)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int type = c->type == P53_PROBE_DNS && !c->tcp ? SOCK_DGRAM : SOCK_STREAM;

	conn_close(p);
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
	if (((c->type == P53_PROBE_HTTP || c->type == P53_PROBE_HTTPS) && http_request(p, c) != 0) ||
	    (c->type == P53_PROBE_DNS && dns_query(p, c) != 0))
		return finish(p, false, now_ms, "out of memory");
	if (c->type == P53_PROBE_HTTPS && tls_context(p, c, now_ms) != 0)
		return 1;
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

/* Read what the server sent over TLS; decide when it is enough. */
static int https_read(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms)
{
	for (;;) {
		ERR_clear_error();
		int n = SSL_read(p->ssl, p->buf + p->len, (int)(P53_PROBE_HTTP_MAX - p->len));
		if (n > 0) {
			p->len += (size_t)n;
			if (p->len == P53_PROBE_HTTP_MAX)
				return http_verdict(p, c, true, now_ms);
			continue;
		}
		int e = SSL_get_error(p->ssl, n);
		if (e == SSL_ERROR_ZERO_RETURN ||
		    (e == SSL_ERROR_SYSCALL && ERR_peek_last_error() == 0 && n == 0))
			return http_verdict(p, c, true, now_ms);
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
			p->want = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
			return http_verdict(p, c, false, now_ms);
		}
		return tls_wait_or_fail(p, c, n, "TLS read", now_ms);
	}
}

/* Read what the server sent; decide when it is enough. */
static int http_read(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms)
{
	if (c->type == P53_PROBE_HTTPS)
		return https_read(p, c, now_ms);
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

/* The verdict on a reply `r` of `n` bytes (or its first `n` over TCP). @return -1 when it is
 * not the reply to our query (wrong ID, not a response, another question), else 1. */
static int dns_verdict(struct p53_probe *p, const struct p53_probe_conf *c, const uint8_t *r,
		       size_t n, uint64_t now_ms)
{
	size_t qlen = 12 + c->qwire_len + 4;
	const uint8_t *q = p->buf + (c->tcp ? 2 : 0);

	if (n < qlen || r[0] != q[0] || r[1] != q[1] || (r[2] & 0x80) == 0 || r[4] != 0 ||
	    r[5] != 1 || memcmp(r + 12, q + 12, qlen - 12) != 0)
		return -1;
	int rcode = r[3] & 0x0f;
	unsigned int ancount = (unsigned int)r[6] << 8 | r[7];
	if (rcode != c->rcode)
		return finish(p, false, now_ms, "rcode %s, want %s", rcode_text[rcode],
			      rcode_text[c->rcode]);
	if (c->answer && ancount == 0)
		return finish(p, false, now_ms, "rcode %s but no answer%s", rcode_text[rcode],
			      (r[2] & 0x02) != 0 ? " (truncated: TC set; transport: tcp gets it all)" :
			      "");
	return finish(p, true, now_ms, "rcode %s, %u answer(s) in %llu ms%s", rcode_text[rcode],
		      ancount, (unsigned long long)(now_ms - p->started_ms),
		      c->tcp ? " over tcp" : "");
}

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
		if (dns_verdict(p, c, r, (size_t)n, now_ms) == 1)
			return 1;
	}
}

/* DNS over TCP (RFC 7766 §8): the reply's 2-byte length, then its first bytes (the header and
 * question are all the verdict reads); the connection is ours alone, so anything but the reply
 * to our query is a failure. */
static int dns_tcp_read(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms)
{
	uint8_t *r = p->buf + p->len; /* after the query */

	for (;;) {
		size_t mlen = p->rlen >= 2 ? ((size_t)r[0] << 8 | r[1]) : 0;
		size_t need = p->rlen < 2 ? 2 :
			      2 + (mlen < P53_PROBE_DNS_HEAD ? mlen : P53_PROBE_DNS_HEAD);
		if (p->rlen >= 2 && p->rlen == need) {
			if (dns_verdict(p, c, r + 2, p->rlen - 2, now_ms) == 1)
				return 1;
			return finish(p, false, now_ms, "the reply (%zu bytes) is not to our query "
				      "(ID, flags or question differ)", mlen);
		}
		ssize_t n = recv(p->fd, r + p->rlen, need - p->rlen, 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return finish(p, false, now_ms, "recv: %s", strerror(errno));
		}
		if (n == 0)
			return finish(p, false, now_ms, "connection closed by the server after %zu "
				      "byte(s) of the reply", p->rlen);
		p->rlen += (size_t)n;
	}
}

/* One step of a running probe: 1 when it finished, 0 while it waits for the socket. */
static int step(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms)
{
	struct pollfd pfd;

	pfd.fd = p->fd;
	if (p->ssl != NULL)
		pfd.events = p->want;
	else
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
		if (c->type == P53_PROBE_HTTPS) {
			if (tls_begin(p, c, now_ms) != 0)
				return 1;
		} else {
			p->phase = SENDING;
		}
	}
	if (p->phase == HANDSHAKE) {
		ERR_clear_error();
		int r = SSL_connect(p->ssl);
		if (r != 1)
			return tls_wait_or_fail(p, c, r, "TLS handshake", now_ms);
		if (SSL_session_reused(p->ssl))
			p->tls_resumed++;
		else
			p->tls_full++;
		p->phase = SENDING;
		p->want = POLLOUT;
	}
	if (p->phase == SENDING) {
		ssize_t n;
		if (p->ssl != NULL) {
			/* A retry after WANT_* repeats the same bytes, as SSL_write requires. */
			ERR_clear_error();
			int r = SSL_write(p->ssl, p->buf + p->sent, (int)(p->len - p->sent));
			if (r <= 0)
				return tls_wait_or_fail(p, c, r, "TLS write", now_ms);
			n = r;
		} else {
			n = send(p->fd, p->buf + p->sent, p->len - p->sent, MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
					return 0;
				return finish(p, false, now_ms, "send: %s", strerror(errno));
			}
		}
		p->sent += (size_t)n;
		if (p->sent < p->len)
			return 0;
		p->phase = READING;
		p->want = POLLIN;
		if (c->type == P53_PROBE_HTTP || c->type == P53_PROBE_HTTPS)
			p->len = 0; /* the buffer now takes the response */
		return 0;
	}
	if (c->type == P53_PROBE_HTTP || c->type == P53_PROBE_HTTPS)
		return http_read(p, c, now_ms);
	return c->tcp ? dns_tcp_read(p, c, now_ms) : dns_read(p, c, now_ms);
}

int p53_probe_poll(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms)
{
	static const char *const doing[] = { "connecting", "in the TLS handshake", "sending",
					     "waiting for the answer" };

	if (p->fd < 0)
		return 0;
	/* A step first, the deadline after: an answer that came while the control thread was
	 * busy elsewhere (a reload) is taken, not timed out. */
	if (step(p, c, now_ms) == 1)
		return 1;
	if (now_ms >= p->deadline_ms) {
		if (p->phase == HANDSHAKE)
			session_drop(p); /* as after a failed handshake (tls_wait_or_fail) */
		return finish(p, false, now_ms, "timed out after %llu ms while %s",
			      (unsigned long long)(now_ms - p->started_ms), doing[p->phase]);
	}
	return 0;
}
