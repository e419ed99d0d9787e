/*
 * control/health/probe.c against servers on the loopback, driven from this thread: the probe
 * is non-blocking, so the test plays the server between polls. Tables of what a server sends
 * (HTTP responses, DNS datagrams), one row per case with the verdict and the reason an
 * operator reads in `pop53ctl target list`; the request the probe sends is checked too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/health/probe.h"
#include "control/health/proc.h"

/* A socket of `type` on 127.0.0.1, any port (listening for TCP); its port in *port. */
static int server(int type, unsigned int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, type, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (type == SOCK_STREAM)
		assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static void conf_of(struct p53_probe_conf *c, int type, unsigned int port)
{
	memset(c, 0, sizeof(*c));
	c->set = true;
	c->type = type;
	c->family = 4;
	inet_pton(AF_INET, "127.0.0.1", c->addr);
	c->port = port;
}

/* Poll until the probe finishes (bounded by its own timeout and then some). */
static void run_out(struct p53_probe *p, const struct p53_probe_conf *c)
{
	uint64_t until = p53_mono_ms() + 5000;

	while (p53_probe_running(p)) {
		if (p53_probe_poll(p, c, p53_mono_ms()) == 1)
			return;
		assert_true(p53_mono_ms() < until);
		usleep(1000);
	}
}

static void test_http(void **state)
{
	static char big[20000 + 64];
	static const struct {
		const char *resp;
		size_t len;             /* 0: strlen(resp) */
		const char *body;       /* check.body */
		bool ok;
		const char *why;
	} rows[] = {
		{ "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, NULL, true, "HTTP 200 in " },
		{ "HTTP/1.0 200 OK\r\n\r\nall ok\n", 0, "ok", true, "HTTP 200, body has 'ok'" },
		{ "HTTP/1.1 200\r\n\r\n", 0, NULL, true, "HTTP 200 in " },                  /* no reason phrase */
		{ "HTTP/1.1 200 OK\n\n", 0, NULL, true, "HTTP 200 in " },                   /* bare LF */
		{ "HTTP/1.1 503 Service Unavailable\r\n\r\n", 0, NULL, false, "HTTP 503, want 200" },
		{ "HTTP/1.1 301 Moved\r\nLocation: /x\r\n\r\n", 0, NULL, false, "HTTP 301, want 200" }, /* not followed */
		{ "", 0, NULL, false, "no HTTP status line (0 bytes)" },                     /* closed at once */
		{ "HTTP/1.1 200 OK", 0, NULL, false, "no HTTP status line (15 bytes)" },     /* no line end */
		{ "SSH-2.0-OpenSSH_9.2\r\n", 0, NULL, false, "not an HTTP status line: 'SSH-2.0-OpenSSH_9.2?'" },
		{ "HTTP/1.1 2000 OK\r\n\r\n", 0, NULL, false, "not an HTTP status line" },   /* four digits */
		{ "HTTP/1.1 700 X\r\n\r\n", 0, NULL, false, "not an HTTP status line" },     /* no such class */
		{ "HTTP/1.1 2\0000 OK\r\n\r\n", 19, NULL, false, "not an HTTP status line: 'HTTP/1.1 2?0 OK?'" },
		{ "HTTP/11 200 OK\r\n\r\n", 0, NULL, false, "not an HTTP status line" },
		{ "HTTP/1.1 200 OK\r\n\r\nmaintenance\n", 0, "ok", false,
		  "HTTP 200, body (31 bytes read) lacks 'ok'" },
		{ "HTTP/1.1 200 OK\r\nX-State: ok\r\n\r\nnope\n", 0, "ok", false, "lacks 'ok'" }, /* a header is not the body */
		{ big, 0, "needle", false, "HTTP 200, body (16384 bytes read) lacks 'needle'" }, /* past 16 KiB */
	};
	char req[2048];

	(void)state;
	memcpy(big, "HTTP/1.1 200 OK\r\n\r\n", 19);
	memset(big + 19, 'x', 20000);
	memcpy(big + 19 + 20000, "needle", 7);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct p53_probe_conf c;
		struct p53_probe p;
		unsigned int port;
		int ls = server(SOCK_STREAM, &port), cs;
		size_t rl = 0, len = rows[i].len != 0 ? rows[i].len : strlen(rows[i].resp);

		conf_of(&c, P53_PROBE_HTTP, port);
		c.path = "/health";
		c.host = "www.example.com";
		c.status = 200;
		c.body = (char *)rows[i].body;
		p53_probe_init(&p);
		assert_int_equal(p53_probe_start(&p, &c, 2000, p53_mono_ms()), 0);
		cs = accept(ls, NULL, NULL);
		assert_true(cs >= 0);
		fcntl(cs, F_SETFL, O_NONBLOCK);
		/* Play the server: read the whole request while the probe sends it. */
		while (rl < 4 || memcmp(req + rl - 4, "\r\n\r\n", 4) != 0) {
			assert_int_equal(p53_probe_poll(&p, &c, p53_mono_ms()), 0);
			ssize_t n = recv(cs, req + rl, sizeof(req) - 1 - rl, 0);
			if (n > 0)
				rl += (size_t)n;
			else
				usleep(1000);
		}
		req[rl] = '\0';
		assert_non_null(strstr(req, "GET /health HTTP/1.1\r\n"));
		assert_non_null(strstr(req, "\r\nHost: www.example.com\r\n"));
		assert_non_null(strstr(req, "\r\nConnection: close\r\n"));
		fcntl(cs, F_SETFL, 0);
		assert_int_equal(send(cs, rows[i].resp, len, MSG_NOSIGNAL), (ssize_t)len);
		close(cs);
		run_out(&p, &c);
		if (p.ok != rows[i].ok || strstr(p.why, rows[i].why) == NULL)
			fail_msg("http row %zu: want %s \"%s\", got %s \"%s\"", i, rows[i].ok ? "ok" : "fail",
				 rows[i].why, p.ok ? "ok" : "fail", p.why);
		assert_false(p53_probe_running(&p));
		close(ls);
	}
}

/* A DNS reply to `q` (the probe's query, qlen bytes): header fields changed as asked. */
static size_t reply(uint8_t *r, const uint8_t *q, size_t qlen, int id_delta, bool qr, int rcode,
		    unsigned int ancount)
{
	memcpy(r, q, qlen);
	uint16_t id = (uint16_t)((q[0] << 8 | q[1]) + id_delta);
	r[0] = (uint8_t)(id >> 8);
	r[1] = (uint8_t)id;
	r[2] = (uint8_t)(qr ? 0x84 : 0x00);
	r[3] = (uint8_t)rcode;
	r[6] = (uint8_t)(ancount >> 8);
	r[7] = (uint8_t)ancount;
	return qlen;
}

static void test_dns(void **state)
{
	enum { GOOD, BAD_ID, NOT_QR, OTHER_Q, SHORT, NXD, NODATA, REFUSED };
	static const struct {
		int send[3];            /* datagrams, in order; -1 ends */
		bool answer;            /* check.answer */
		bool ok;
		const char *why;
	} rows[] = {
		{ { GOOD, -1 }, true, true, "rcode NOERROR, 1 answer(s) in " },
		{ { NXD, -1 }, false, false, "rcode NXDOMAIN, want NOERROR" },
		{ { REFUSED, -1 }, false, false, "rcode REFUSED, want NOERROR" },
		{ { NODATA, -1 }, true, false, "rcode NOERROR but no answer" },
		{ { NODATA, -1 }, false, true, "rcode NOERROR, 0 answer(s)" },
		{ { BAD_ID, -1 }, false, false, "timed out after" },            /* not ours: ignored */
		{ { NOT_QR, -1 }, false, false, "timed out after" },            /* our query echoed */
		{ { OTHER_Q, -1 }, false, false, "timed out after" },           /* another question */
		{ { SHORT, -1 }, false, false, "timed out after" },             /* 5 bytes */
		{ { BAD_ID, SHORT, GOOD }, false, true, "rcode NOERROR, 1 answer(s)" }, /* ours after strays */
	};
	static const uint8_t qname[] = "\3www\7example\3com";

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct p53_probe_conf c;
		struct p53_probe p;
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		unsigned int port;
		uint8_t q[512], r[512];
		int us = server(SOCK_DGRAM, &port);

		conf_of(&c, P53_PROBE_DNS, port);
		c.qwire = (uint8_t *)(uintptr_t)qname;
		c.qwire_len = sizeof(qname);
		c.qtype = 1;
		c.answer = rows[i].answer;
		p53_probe_init(&p);
		assert_int_equal(p53_probe_start(&p, &c, 200, p53_mono_ms()), 0);
		assert_int_equal(p53_probe_poll(&p, &c, p53_mono_ms()), 0); /* sends */
		ssize_t ql = recvfrom(us, q, sizeof(q), 0, (struct sockaddr *)&from, &fl);
		assert_int_equal(ql, 12 + sizeof(qname) + 4);
		assert_int_equal(q[2] & 0x81, 0);                            /* a query, RD clear */
		assert_int_equal(q[5], 1);
		assert_memory_equal(q + 12, qname, sizeof(qname));
		for (int k = 0; k < 3 && rows[i].send[k] >= 0; k++) {
			size_t n;
			switch (rows[i].send[k]) {
			case GOOD: n = reply(r, q, (size_t)ql, 0, true, 0, 1); break;
			case BAD_ID: n = reply(r, q, (size_t)ql, 1, true, 0, 1); break;
			case NOT_QR: n = reply(r, q, (size_t)ql, 0, false, 0, 1); break;
			case OTHER_Q: n = reply(r, q, (size_t)ql, 0, true, 0, 1); r[13] = 'x'; break;
			case SHORT: n = 5; memcpy(r, q, 5); break;
			case NXD: n = reply(r, q, (size_t)ql, 0, true, 3, 0); break;
			case NODATA: n = reply(r, q, (size_t)ql, 0, true, 0, 0); break;
			default: n = reply(r, q, (size_t)ql, 0, true, 5, 0); break;
			}
			assert_int_equal(sendto(us, r, n, 0, (struct sockaddr *)&from, fl), (ssize_t)n);
		}
		run_out(&p, &c);
		if (p.ok != rows[i].ok || strstr(p.why, rows[i].why) == NULL)
			fail_msg("dns row %zu: want %s \"%s\", got %s \"%s\"", i, rows[i].ok ? "ok" : "fail",
				 rows[i].why, p.ok ? "ok" : "fail", p.why);
		close(us);
	}
}

/* DNS over TCP (RFC 7766): the query goes with its 2-byte length; the reply is read in
 * whatever pieces it comes; on a connection of its own anything but our reply is a failure. */
static void test_dns_tcp(void **state)
{
	enum { GOOD, BAD_ID, REFUSED, NODATA_TC, LONG };
	static const struct {
		int reply;
		size_t split;           /* bytes sent before a pause (0: all at once) */
		size_t cut;             /* close after this many bytes (0: send all) */
		bool ok;
		const char *why;
	} rows[] = {
		{ GOOD, 0, 0, true, "rcode NOERROR, 1 answer(s) in " },
		{ GOOD, 1, 0, true, " over tcp" },                                /* length split */
		{ GOOD, 5, 0, true, "rcode NOERROR" },                            /* header split */
		{ LONG, 0, 0, true, "rcode NOERROR, 1 answer(s)" },               /* 1000 bytes, head read */
		{ BAD_ID, 0, 0, false, "is not to our query" },
		{ REFUSED, 0, 0, false, "rcode REFUSED, want NOERROR" },
		{ NODATA_TC, 0, 0, false, "rcode NOERROR but no answer" },
		{ GOOD, 0, 1, false, "connection closed by the server after 1 byte(s)" },
		{ GOOD, 0, 9, false, "connection closed by the server after 9 byte(s)" },
	};
	static const uint8_t qname[] = "\3www\7example\3com";

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct p53_probe_conf c;
		struct p53_probe p;
		unsigned int port;
		uint8_t q[512], r[1024 + 2];
		size_t ql = 0, want = 2 + 12 + sizeof(qname) + 4, n;
		int ls = server(SOCK_STREAM, &port), cs;

		conf_of(&c, P53_PROBE_DNS, port);
		c.tcp = true;
		c.qwire = (uint8_t *)(uintptr_t)qname;
		c.qwire_len = sizeof(qname);
		c.qtype = 1;
		c.answer = true;
		p53_probe_init(&p);
		assert_int_equal(p53_probe_start(&p, &c, 2000, p53_mono_ms()), 0);
		cs = accept(ls, NULL, NULL);
		assert_true(cs >= 0);
		fcntl(cs, F_SETFL, O_NONBLOCK);
		while (ql < want) {
			assert_int_equal(p53_probe_poll(&p, &c, p53_mono_ms()), 0);
			ssize_t k = recv(cs, q + ql, want - ql, 0);
			if (k > 0)
				ql += (size_t)k;
			else
				usleep(1000);
		}
		fcntl(cs, F_SETFL, 0);
		assert_int_equal((q[0] << 8 | q[1]), want - 2);                 /* the length prefix */
		assert_memory_equal(q + 2 + 12, qname, sizeof(qname));
		n = reply(r + 2, q + 2, want - 2, rows[i].reply == BAD_ID ? 1 : 0, true,
			  rows[i].reply == REFUSED ? 5 : 0, rows[i].reply == NODATA_TC ? 0 : 1);
		if (rows[i].reply == NODATA_TC)
			r[2 + 2] |= 0x02;
		if (rows[i].reply == LONG) {
			memset(r + 2 + n, 0, 1000 - n);
			n = 1000;
		}
		r[0] = (uint8_t)(n >> 8);
		r[1] = (uint8_t)n;
		n += 2;
		if (rows[i].cut != 0)
			n = rows[i].cut;
		size_t first = rows[i].split != 0 ? rows[i].split : n;
		assert_int_equal(send(cs, r, first, MSG_NOSIGNAL), (ssize_t)first);
		if (first < n) {
			usleep(20000);
			assert_int_equal(p53_probe_poll(&p, &c, p53_mono_ms()), 0); /* waits for the rest */
			assert_int_equal(send(cs, r + first, n - first, MSG_NOSIGNAL), (ssize_t)(n - first));
		}
		if (rows[i].cut != 0)
			close(cs);
		run_out(&p, &c);
		if (p.ok != rows[i].ok || strstr(p.why, rows[i].why) == NULL)
			fail_msg("dns/tcp row %zu: want %s \"%s\", got %s \"%s\"", i,
				 rows[i].ok ? "ok" : "fail", rows[i].why, p.ok ? "ok" : "fail", p.why);
		assert_false(p53_probe_running(&p));
		if (rows[i].cut == 0)
			close(cs);
		close(ls);
	}
}

/* HTTPS to a listener that never speaks TLS: the handshake waits without blocking and times
 * out with a reason that says where; a server that speaks plain HTTP fails the handshake;
 * a probe killed mid-handshake frees its TLS (ASAN). */
static void test_https_handshake(void **state)
{
	struct p53_probe_conf c;
	struct p53_probe p;
	unsigned int port;
	int ls = server(SOCK_STREAM, &port), cs;

	(void)state;
	conf_of(&c, P53_PROBE_HTTPS, port);
	c.path = "/";
	c.status = 200;
	c.host = "www.example.com:8443";
	c.tls_verify = true;
	p53_probe_init(&p);
	assert_int_equal(p53_probe_start(&p, &c, 150, p53_mono_ms()), 0);
	run_out(&p, &c);
	assert_false(p.ok);
	if (strstr(p.why, "while in the TLS handshake") == NULL)
		fail_msg("silent server: got \"%s\"", p.why);
	cs = accept(ls, NULL, NULL);
	assert_true(cs >= 0);
	close(cs);

	/* A plain HTTP server answers the ClientHello with text. */
	assert_int_equal(p53_probe_start(&p, &c, 2000, p53_mono_ms()), 0);
	cs = accept(ls, NULL, NULL);
	assert_true(cs >= 0);
	static const char plain[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
	assert_int_equal(send(cs, plain, sizeof(plain) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(plain) - 1);
	run_out(&p, &c);
	assert_false(p.ok);
	/* OpenSSL's words for a record that is not TLS ("wrong version number" in 3.0). */
	if (strstr(p.why, "TLS handshake: ") == NULL || strstr(p.why, "wrong version number") == NULL)
		fail_msg("plain server: got \"%s\"", p.why);
	close(cs);

	/* Killed mid-handshake, twice; the context goes with the kill. */
	assert_int_equal(p53_probe_start(&p, &c, 2000, p53_mono_ms()), 0);
	for (int k = 0; k < 20 && p.ssl == NULL; k++) {
		assert_int_equal(p53_probe_poll(&p, &c, p53_mono_ms()), 0);
		usleep(1000);
	}
	assert_non_null(p.ssl);
	p53_probe_kill(&p);
	assert_null(p.ssl);
	assert_null(p.tls);
	assert_false(p53_probe_running(&p));
	p53_probe_kill(&p);
	cs = accept(ls, NULL, NULL);
	close(cs);
	close(ls);
}

/* Nothing listens: TCP and HTTP are refused, DNS gets ICMP port unreachable. TCP to a
 * listener connects. */
static void test_refused_and_tcp(void **state)
{
	static const struct { int type; const char *why; } rows[] = {
		{ P53_PROBE_TCP, "connect: Connection refused" },
		{ P53_PROBE_HTTP, "connect: Connection refused" },
		{ P53_PROBE_DNS, "Connection refused" },
	};
	struct p53_probe_conf c;
	struct p53_probe p;
	unsigned int port;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int s = server(rows[i].type == P53_PROBE_DNS ? SOCK_DGRAM : SOCK_STREAM, &port);
		close(s); /* the port is free now: nothing answers on it */
		conf_of(&c, rows[i].type, port);
		c.path = "/";
		c.status = 200;
		c.qwire = (uint8_t *)(uintptr_t)"";
		c.qwire_len = 1;
		p53_probe_init(&p);
		if (p53_probe_start(&p, &c, 1000, p53_mono_ms()) == 0)
			run_out(&p, &c);
		if (p.ok || strstr(p.why, rows[i].why) == NULL)
			fail_msg("refused row %zu: want \"%s\", got %s \"%s\"", i, rows[i].why,
				 p.ok ? "ok" : "fail", p.why);
	}
	int ls = server(SOCK_STREAM, &port);
	conf_of(&c, P53_PROBE_TCP, port);
	p53_probe_init(&p);
	if (p53_probe_start(&p, &c, 1000, p53_mono_ms()) == 0)
		run_out(&p, &c);
	assert_true(p.ok);
	assert_non_null(strstr(p.why, "connected in "));
	close(ls);
	/* Kill while running: the socket is closed, nothing leaks (ASAN), safe twice. */
	ls = server(SOCK_STREAM, &port);
	conf_of(&c, P53_PROBE_HTTP, port);
	c.path = "/";
	p53_probe_init(&p);
	assert_int_equal(p53_probe_start(&p, &c, 1000, p53_mono_ms()), 0);
	p53_probe_kill(&p);
	assert_false(p53_probe_running(&p));
	p53_probe_kill(&p);
	close(ls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_dns_tcp),
		cmocka_unit_test(test_https_handshake),
		cmocka_unit_test(test_refused_and_tcp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
