/* The transfer client; see client.h. Transfer threads only. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ldns/ldns.h>

#include "control/text.h"
#include "control/xfr/client.h"
#include "control/xfr/store.h"
#include "control/xfr/tsig.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#define T_SOA  6
#define T_IXFR 251
#define T_AXFR 252
#define MSG_MAX 65535
#define UDP_TRIES 2
#define SLICE_MS 100    /* poll slices, so a stopping daemon is noticed */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void jerr(struct p53_xfr_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void jerr(struct p53_xfr_job *j, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->err, sizeof(j->err), fmt, ap);
	va_end(ap);
}

/* Wait for fd; 1 ready, 0 timed out, -1 stopping. */
static int wait_fd(int fd, short events, uint64_t deadline, volatile int *stop)
{
	for (;;) {
		uint64_t now = now_ms();
		if (stop != NULL && *stop)
			return -1;
		if (now >= deadline)
			return 0;
		struct pollfd p = { .fd = fd, .events = events };
		uint64_t left = deadline - now;
		int rc = poll(&p, 1, (int)(left < SLICE_MS ? left : SLICE_MS));
		if (rc > 0)
			return 1;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

/* A query: no RD (RFC 1996 §3.7 asks nothing else); IXFR carries our SOA in authority. */
struct query {
	uint8_t buf[1024];
	size_t len;
	uint16_t id;
	uint8_t mac[P53_TSIG_MAC_MAX];
	uint16_t mac_len;
	bool is_signed;
	const struct p53_tsig_key *key;
};

static int query_build(struct query *q, const struct p53_xfr_job *j, const struct p53_xfr_peer *p,
		       uint16_t qtype)
{
	uint8_t *b = q->buf;
	size_t o;

	if (getrandom(&q->id, sizeof(q->id), 0) != sizeof(q->id))
		q->id = (uint16_t)now_ms();
	memset(b, 0, 12);
	p53_put16(b, q->id);
	p53_put16(b + 4, 1);
	p53_put16(b + 8, qtype == T_IXFR ? 1 : 0);
	memcpy(b + 12, j->apex, j->apex_len);
	o = 12u + j->apex_len;
	p53_put16(b + o, qtype);
	p53_put16(b + o + 2, 1);
	o += 4;
	if (qtype == T_IXFR) {
		/* RFC 1995 §3: the client's SOA; only its serial matters. */
		memcpy(b + o, j->apex, j->apex_len);
		o += j->apex_len;
		p53_put16(b + o, T_SOA);
		p53_put16(b + o + 2, 1);
		p53_put32(b + o + 4, 0);
		p53_put16(b + o + 8, 22);
		o += 10;
		b[o++] = 0;
		b[o++] = 0;
		p53_put32(b + o, j->serial);
		memset(b + o + 4, 0, 16);
		o += 20;
	}
	q->len = o;
	q->is_signed = p->has_key;
	q->key = &p->key;
	if (p->has_key && p53_tsig_sign(q->buf, &q->len, sizeof(q->buf), &p->key, NULL, 0, 0,
					(uint64_t)time(NULL), q->mac, &q->mac_len) != 0)
		return -1;
	return 0;
}

/* The common checks of a response: ours, a response, NOERROR. */
static int response_check(struct p53_xfr_job *j, const char *peer, const struct query *q,
			  const ldns_pkt *pkt, const char *what)
{
	if (ldns_pkt_id(pkt) != q->id || !ldns_pkt_qr(pkt)) {
		jerr(j, "%s: %s: response does not match the query", peer, what);
		return -1;
	}
	if (ldns_pkt_get_rcode(pkt) != LDNS_RCODE_NOERROR) {
		ldns_lookup_table *rc = ldns_lookup_by_id(ldns_rcodes, (int)ldns_pkt_get_rcode(pkt));
		jerr(j, "%s: %s: %s", peer, what, rc != NULL ? rc->name : "error");
		return -1;
	}
	return 0;
}

static uint32_t rdf32(const ldns_rr *rr, size_t i)
{
	return ldns_rdf2native_int32(ldns_rr_rdf(rr, i));
}

static bool is_apex_soa(const struct p53_xfr_job *j, const ldns_rr *rr)
{
	const ldns_rdf *o = ldns_rr_owner(rr);
	uint8_t low[256];

	if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_SOA || ldns_rr_rd_count(rr) != 7 ||
	    ldns_rdf_size(o) != j->apex_len)
		return false;
	p53_name_lower(low, ldns_rdf_data(o), j->apex_len);
	return memcmp(low, j->apex, j->apex_len) == 0;
}

static void take_timers(struct p53_xfr_job *j, const ldns_rr *soa)
{
	j->new_serial = rdf32(soa, 2);
	j->refresh = rdf32(soa, 3);
	j->retry = rdf32(soa, 4);
	j->expire = rdf32(soa, 5);
}

static int tcp_connect(struct p53_xfr_job *j, const struct p53_xfr_peer *p, const char *peer)
{
	struct sockaddr_storage ss;
	socklen_t sl = p53_xfr_peer_sa(p->family, p->addr, p->port, &ss);
	int fd = socket(p->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0) {
		jerr(j, "%s: socket: %s", peer, strerror(errno));
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&ss, sl) != 0 && errno != EINPROGRESS) {
		jerr(j, "%s: connect: %s", peer, strerror(errno));
		close(fd);
		return -1;
	}
	int w = wait_fd(fd, POLLOUT, now_ms() + j->timeout_ms, j->stop);
	int e = 0;
	socklen_t el = sizeof(e);
	if (w <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0 || e != 0) {
		jerr(j, "%s: connect: %s", peer, w == 0 ? "timed out" : w < 0 ? "stopped" : strerror(e));
		close(fd);
		return -1;
	}
	return fd;
}

static int tcp_io(struct p53_xfr_job *j, int fd, uint8_t *buf, size_t len, int writing)
{
	size_t off = 0;

	while (off < len) {
		int w = wait_fd(fd, writing ? POLLOUT : POLLIN, now_ms() + j->timeout_ms, j->stop);
		if (w <= 0) {
			errno = w == 0 ? ETIMEDOUT : ECANCELED;
			return -1;
		}
		ssize_t n = writing ? send(fd, buf + off, len - off, MSG_NOSIGNAL)
				    : recv(fd, buf + off, len - off, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ECONNRESET;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

static int tcp_send_query(struct p53_xfr_job *j, int fd, struct query *q)
{
	uint8_t l[2];

	p53_put16(l, (uint16_t)q->len);
	return tcp_io(j, fd, l, 2, 1) == 0 && tcp_io(j, fd, q->buf, q->len, 1) == 0 ? 0 : -1;
}

/* One framed message (RFC 1035 §4.2.2); its length, or -1. */
static int tcp_read_msg(struct p53_xfr_job *j, int fd, uint8_t *buf)
{
	uint8_t l[2];

	if (tcp_io(j, fd, l, 2, 0) != 0)
		return -1;
	uint16_t len = p53_get16(l);
	if (len < 12) {
		errno = EPROTO;
		return -1;
	}
	return tcp_io(j, fd, buf, len, 0) == 0 ? (int)len : -1;
}

static const char *tsig_error_name(uint16_t e)
{
	switch (e) {
	case P53_TSIG_E_BADSIG: return "BADSIG";
	case P53_TSIG_E_BADKEY: return "BADKEY";
	case P53_TSIG_E_BADTIME: return "BADTIME";
	case P53_TSIG_E_BADTRUNC: return "BADTRUNC";
	default: return "error";
	}
}

/* Verify the TSIG of one response message (stream for a transfer, one for a query). */
static int tsig_check(struct p53_xfr_job *j, const char *peer, struct p53_tsig_stream *ts,
		      const uint8_t *msg, size_t len, const char *what)
{
	char key[1024];

	if (ts == NULL)
		return 0;
	enum p53_tsig_status st = p53_tsig_stream_next(ts, msg, len, (uint64_t)time(NULL));
	if (st == P53_TSIG_OK)
		return 0;
	p53_name_to_str(key, sizeof(key), ts->key->wire);
	if (st == P53_TSIG_ERROR) {
		/* RFC 8945 §5.3.2: the primary did not accept our signature. */
		struct p53_tsig_rr t;
		ldns_lookup_table *rc = ldns_lookup_by_id(ldns_rcodes, msg[3] & 0xf);
		p53_tsig_find(msg, len, &t);
		jerr(j, "%s: %s: %s, TSIG %s: the primary does not accept key %s", peer, what,
		     rc != NULL ? rc->name : "error", tsig_error_name(t.error), key);
	} else {
		jerr(j, "%s: %s: TSIG %s (key %s)", peer, what, p53_tsig_status_str(st), key);
	}
	return -1;
}

/* The SOA of the zone at one primary: UDP, then TCP when truncated. */
static int soa_query(struct p53_xfr_job *j, const struct p53_xfr_peer *p, const char *peer)
{
	struct query q;
	uint8_t *resp = malloc(MSG_MAX);
	struct sockaddr_storage ss;
	socklen_t sl = p53_xfr_peer_sa(p->family, p->addr, p->port, &ss);
	int fd = -1, rc = -1, n = -1, tcp = 0;
	ldns_pkt *pkt = NULL;

	if (resp == NULL || query_build(&q, j, p, T_SOA) != 0) {
		jerr(j, "%s: SOA query: out of memory", peer);
		goto out;
	}
	fd = socket(p->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sl) != 0) {
		jerr(j, "%s: SOA query: %s", peer, strerror(errno));
		goto out;
	}
	for (int t = 0; t < UDP_TRIES && n < 0; t++) {
		if (send(fd, q.buf, q.len, 0) < 0) {
			jerr(j, "%s: SOA query: %s", peer, strerror(errno));
			goto out;
		}
		uint64_t deadline = now_ms() + j->timeout_ms;
		while (n < 0) {
			int w = wait_fd(fd, POLLIN, deadline, j->stop);
			if (w <= 0) {
				jerr(j, "%s: SOA query: %s", peer, w == 0 ? "timed out" : "stopped");
				if (w < 0)
					goto out;
				break;
			}
			ssize_t got = recv(fd, resp, MSG_MAX, 0);
			if (got < 0) {
				if (errno == EAGAIN || errno == EINTR)
					continue;
				/* ICMP port unreachable and the like: this primary is down. */
				jerr(j, "%s: SOA query: %s", peer, strerror(errno));
				goto out;
			}
			if (got >= 12 && p53_get16(resp) == q.id && (resp[2] & 0x80))
				n = (int)got; /* else another answer (a late retry's): ignore */
		}
	}
	if (n < 0)
		goto out;
	if (resp[2] & 0x02) { /* TC: ask again over TCP */
		close(fd);
		tcp = 1;
		fd = tcp_connect(j, p, peer);
		if (fd < 0 || query_build(&q, j, p, T_SOA) != 0 || tcp_send_query(j, fd, &q) != 0 ||
		    (n = tcp_read_msg(j, fd, resp)) < 0) {
			if (fd >= 0)
				jerr(j, "%s: SOA query over TCP: %s", peer, strerror(errno));
			goto out;
		}
	}
	/* An unsigned error answer (Knot REFUSES an SOA query for a catalog it generates):
	 * report the RCODE; the caller may still ask for the transfer, which is signed. */
	struct p53_tsig_rr tr;
	if (q.is_signed && (resp[3] & 0xf) != 0 && p53_tsig_find(resp, (size_t)n, &tr) == P53_TSIG_NONE) {
		ldns_lookup_table *rcn = ldns_lookup_by_id(ldns_rcodes, resp[3] & 0xf);
		jerr(j, "%s: SOA query: %s (unsigned)", peer, rcn != NULL ? rcn->name : "error");
		rc = -2;
		goto out;
	}
	if (q.is_signed) {
		struct p53_tsig_stream ts;
		p53_tsig_stream_init(&ts, q.key, q.mac, q.mac_len);
		int bad = tsig_check(j, peer, &ts, resp, (size_t)n, "SOA query");
		p53_tsig_stream_free(&ts);
		if (bad)
			goto out;
	}
	if (ldns_wire2pkt(&pkt, resp, (size_t)n) != LDNS_STATUS_OK) {
		jerr(j, "%s: SOA query: malformed response", peer);
		goto out;
	}
	if (response_check(j, peer, &q, pkt, tcp ? "SOA query over TCP" : "SOA query") != 0) {
		if (ldns_pkt_get_rcode(pkt) != LDNS_RCODE_NOERROR)
			rc = -2;
		goto out;
	}
	ldns_rr_list *an = ldns_pkt_answer(pkt);
	for (size_t i = 0; i < ldns_rr_list_rr_count(an); i++) {
		ldns_rr *rr = ldns_rr_list_rr(an, i);
		if (is_apex_soa(j, rr)) {
			take_timers(j, rr);
			rc = 0;
			break;
		}
	}
	if (rc != 0)
		jerr(j, "%s: SOA query: no SOA for %s in the answer (%s)", peer, j->zone,
		     ldns_pkt_aa(pkt) ? "AA" : "not authoritative");
out:
	ldns_pkt_free(pkt);
	if (fd >= 0)
		close(fd);
	free(resp);
	return rc;
}

/* Reading a transfer's records (RFC 5936 §2.2, RFC 1995 §4). */
enum { X_START, X_SECOND, X_FULL, X_DEL, X_ADD, X_DONE };

struct xfr_parse {
	int state;
	int ixfr;
	uint32_t last;                  /* the serial of the first SOA: the version we get */
	ldns_rr *first;                 /* that SOA, until we know where it goes */
	struct p53_ixfr_step *step;
	uint64_t n;
};

/* One record; 0 on, 1 done, -1 error (j->err set). */
static int feed(struct p53_xfr_job *j, struct xfr_parse *x, const char *peer, ldns_rr *rr)
{
	bool soa = is_apex_soa(j, rr);
	uint32_t serial = soa ? rdf32(rr, 2) : 0;

	x->n++;
	switch (x->state) {
	case X_START:
		if (!soa) {
			jerr(j, "%s: %s: does not start with the zone's SOA", peer, x->ixfr ? "IXFR" : "AXFR");
			return -1;
		}
		x->last = serial;
		x->first = ldns_rr_clone(rr);
		take_timers(j, rr);
		x->state = x->ixfr ? X_SECOND : X_FULL;
		if (!x->ixfr && p53_rrs_add_ldns(&j->rrs, rr) != 0)
			goto oom;
		return x->first == NULL ? -1 : 0;
	case X_SECOND:
		/* RFC 1995 §4: a second SOA other than the last version starts differences;
		 * anything else (or SOA, SOA of one version) is the whole zone, AXFR-style. */
		if (soa && serial != x->last) {
			x->step = p53_ixfr_push(&j->diff);
			if (x->step == NULL)
				goto oom;
			x->step->from = serial;
			x->state = X_DEL;
			return p53_rrs_add_ldns(&x->step->del, rr) == 0 ? 0 : -1;
		}
		if (p53_rrs_add_ldns(&j->rrs, x->first) != 0)
			goto oom;
		x->state = X_FULL;
		if (soa) {
			x->state = X_DONE;
			return 1;
		}
		return p53_rrs_add_ldns(&j->rrs, rr) == 0 ? 0 : -1;
	case X_FULL:
		if (soa && serial == x->last) {
			x->state = X_DONE;
			return 1;
		}
		if (soa) {
			jerr(j, "%s: transfer: a second SOA (serial %u) inside the zone", peer, serial);
			return -1;
		}
		return p53_rrs_add_ldns(&j->rrs, rr) == 0 ? 0 : -1;
	case X_DEL:
		if (soa) {
			x->step->to = serial;
			x->state = X_ADD;
			return p53_rrs_add_ldns(&x->step->add, rr) == 0 ? 0 : -1;
		}
		return p53_rrs_add_ldns(&x->step->del, rr) == 0 ? 0 : -1;
	case X_ADD:
		if (soa && serial == x->last && x->step->to == x->last) {
			x->state = X_DONE;
			return 1;
		}
		if (soa) {
			if (serial != x->step->to) {
				jerr(j, "%s: IXFR: difference from %u follows one ending at %u", peer,
				     serial, x->step->to);
				return -1;
			}
			x->step = p53_ixfr_push(&j->diff);
			if (x->step == NULL)
				goto oom;
			x->step->from = serial;
			x->state = X_DEL;
			return p53_rrs_add_ldns(&x->step->del, rr) == 0 ? 0 : -1;
		}
		return p53_rrs_add_ldns(&x->step->add, rr) == 0 ? 0 : -1;
	default:
		jerr(j, "%s: transfer: records after the final SOA", peer);
		return -1;
	}
oom:
	jerr(j, "%s: transfer: out of memory", peer);
	return -1;
}

/* One transfer over TCP. 0 with the outcome set, -1 with j->err. */
static int transfer(struct p53_xfr_job *j, const struct p53_xfr_peer *p, const char *peer, int ixfr)
{
	const char *what = ixfr ? "IXFR" : "AXFR";
	struct xfr_parse x = { .state = X_START, .ixfr = ixfr };
	struct p53_tsig_stream ts;
	struct query q;
	uint8_t *buf = malloc(MSG_MAX);
	int fd = -1, rc = -1, done = 0;

	p53_rrs_free(&j->rrs);
	p53_ixfr_free(&j->diff);
	if (buf == NULL || query_build(&q, j, p, ixfr ? T_IXFR : T_AXFR) != 0) {
		jerr(j, "%s: %s: out of memory", peer, what);
		free(buf);
		return -1;
	}
	if (q.is_signed)
		p53_tsig_stream_init(&ts, q.key, q.mac, q.mac_len);
	fd = tcp_connect(j, p, peer);
	if (fd < 0)
		goto out;
	if (tcp_send_query(j, fd, &q) != 0) {
		jerr(j, "%s: %s: sending the query: %s", peer, what, strerror(errno));
		goto out;
	}
	while (!done) {
		ldns_pkt *pkt = NULL;
		int n = tcp_read_msg(j, fd, buf);
		if (n < 0) {
			jerr(j, "%s: %s: after %" PRIu64 " records: %s", peer, what, x.n,
			     errno == ECONNRESET ? "connection closed" : strerror(errno));
			goto out;
		}
		j->bytes += (uint64_t)n;
		j->msgs++;
		if (tsig_check(j, peer, q.is_signed ? &ts : NULL, buf, (size_t)n, what) != 0)
			goto out;
		if (ldns_wire2pkt(&pkt, buf, (size_t)n) != LDNS_STATUS_OK) {
			jerr(j, "%s: %s: malformed message after %" PRIu64 " records", peer, what, x.n);
			goto out;
		}
		if (response_check(j, peer, &q, pkt, what) != 0) {
			ldns_pkt_free(pkt);
			goto out;
		}
		ldns_rr_list *an = ldns_pkt_answer(pkt);
		size_t cnt = ldns_rr_list_rr_count(an);
		for (size_t i = 0; i < cnt; i++) {
			if (done) {
				jerr(j, "%s: %s: records after the final SOA", peer, what);
				ldns_pkt_free(pkt);
				goto out;
			}
			int f = feed(j, &x, peer, ldns_rr_list_rr(an, i));
			if (f < 0) {
				if (j->err[0] == '\0')
					jerr(j, "%s: %s: out of memory", peer, what);
				ldns_pkt_free(pkt);
				goto out;
			}
			done = f == 1;
		}
		ldns_pkt_free(pkt);
		/* RFC 1995 §4: the lone SOA of "you are up to date". */
		if (!done && ixfr && x.state == X_SECOND && x.n == 1) {
			if (j->have_data && !p53_serial_newer(x.last, j->serial)) {
				j->outcome = P53_XFR_UPTODATE;
				rc = 0;
				goto out;
			}
			jerr(j, "%s: IXFR: only an SOA with the newer serial %u", peer, x.last);
			goto out;
		}
		if (cnt == 0 && !done) {
			jerr(j, "%s: %s: empty message after %" PRIu64 " records", peer, what, x.n);
			goto out;
		}
	}
	if (q.is_signed && p53_tsig_stream_end(&ts) != P53_TSIG_OK) {
		jerr(j, "%s: %s: TSIG: the last message is not signed", peer, what);
		goto out;
	}
	j->outcome = j->diff.n > 0 ? P53_XFR_DIFF : P53_XFR_FULL;
	if (j->outcome == P53_XFR_DIFF)
		p53_rrs_free(&j->rrs);
	rc = 0;
out:
	if (rc != 0) {
		p53_rrs_free(&j->rrs);
		p53_ixfr_free(&j->diff);
	}
	if (x.first != NULL)
		ldns_rr_free(x.first);
	if (q.is_signed)
		p53_tsig_stream_free(&ts);
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* Every primary's reason, "; " between them. */
static void errs_add(char *errs, size_t cap, const char *e)
{
	size_t o = strlen(errs);

	if (e[0] == '\0' || o + 3 >= cap)
		return;
	if (o > 0) {
		memcpy(errs + o, "; ", 3);
		o += 2;
	}
	size_t n = strnlen(e, cap - o - 1);
	memcpy(errs + o, e, n);
	errs[o + n] = '\0';
}

static void refresh(struct p53_xfr_job *j)
{
	char peer[64], errs[sizeof(j->err)] = "";

	j->outcome = P53_XFR_FAILED;
	for (int i = 0; i < j->n_peers; i++) {
		const struct p53_xfr_peer *p = &j->peers[i];
		p53_xfr_peer_str(p->family, p->addr, p->port, peer, sizeof(peer));
		j->err[0] = '\0';
		int sq = soa_query(j, p, peer);
		if (sq == -1)
			goto next;
		/* sq == -2: the primary answered the SOA query with an error but may still
		 * transfer (Knot REFUSES SOA queries for the catalogs it generates): the transfer
		 * tells us the serial too (IXFR answers a lone SOA when we are up to date). */
		if (sq == -2)
			errs_add(errs, sizeof(errs), j->err);
		j->peer = i;
		snprintf(j->how, sizeof(j->how), "SOA");
		if (sq == 0 && j->have_data && !j->force && !p53_serial_newer(j->new_serial, j->serial)) {
			j->outcome = P53_XFR_UPTODATE;
			return;
		}
		if (j->have_data && j->ixfr && !j->force) {
			snprintf(j->how, sizeof(j->how), "IXFR");
			j->err[0] = '\0';
			if (transfer(j, p, peer, 1) == 0)
				return;
			/* RFC 1995 §4: a primary that cannot give us IXFR is asked for AXFR. */
			errs_add(errs, sizeof(errs), j->err);
			snprintf(j->how, sizeof(j->how), "IXFR->AXFR");
		} else {
			snprintf(j->how, sizeof(j->how), "AXFR");
		}
		j->err[0] = '\0';
		if (transfer(j, p, peer, 0) == 0)
			return;
next:
		errs_add(errs, sizeof(errs), j->err);
		if (j->stop != NULL && *j->stop)
			break;
	}
	snprintf(j->err, sizeof(j->err), "%s", j->n_peers > 0 ? errs : "no primaries");
	j->peer = -1;
}

void p53_xfr_job_run(struct p53_xfr_job *j)
{
	uint64_t t0 = now_ms();

	j->err[0] = '\0';
	j->peer = -1;
	switch (j->kind) {
	case P53_JOB_REFRESH:
		refresh(j);
		break;
	case P53_JOB_WRITE: {
		/*
		 * The invariant (docs/ARCHITECTURE.md, the lazy disk copy): the journal file holds
		 * a chain of steps from the disk copy's serial, or ends at it. An append keeps the
		 * file's steps, so it goes first and the copy, when due, after it: a crash between
		 * leaves the copy older and the journal leading from it past it (start-up applies
		 * those steps). A rewrite that still holds a step from the copy's serial
		 * (p53_journal_holds: the control thread then leaves the copy out) keeps it through
		 * the rename. Any other rewrite or a removal drops steps the copy may still need, so
		 * the copy (at the newest serial) goes first: a crash between leaves the new copy and
		 * the old journal, which does not lead to its serial and is ignored (the newest
		 * version is served; only older IXFR history is lost). A copy that cannot be
		 * written stops the rewrite.
		 */
		char jerr[sizeof(j->err)] = "";
		int plan = j->jpath == NULL ? P53_JSTORE_NONE
			   : p53_journal_plan(&j->jfile, j->jsteps, j->n_jsteps, j->jepoch, j->jmax, NULL);
		bool copy_first = j->copy && (plan == P53_JSTORE_REWRITE || plan == P53_JSTORE_REMOVE);
		int src = 0, jrc = 0;
		if (copy_first)
			src = p53_store_write(j->path, j->zone, &j->rrs, j->err, sizeof(j->err));
		if (src == 0 && j->jpath != NULL) {
			jrc = p53_journal_store(j->jpath, j->apex, j->apex_len, j->jsteps, j->n_jsteps,
						j->jepoch, j->jmax, &j->jfile, NULL, jerr, sizeof(jerr));
			if (!j->copy && (jrc == P53_JSTORE_REWRITE || jrc == P53_JSTORE_REMOVE) &&
			    !(j->copy_known &&
			      p53_journal_holds(j->jsteps, j->n_jsteps, j->copy_serial)))
				j->copy_stale = true;
			jrc = jrc < 0 ? -1 : 0;
		}
		if (j->copy && !copy_first) {
			/* A journal that could not be appended to does not keep the copy from being
			 * written: the next job rewrites the journal from the new copy's serial. */
			src = p53_store_write(j->path, j->zone, &j->rrs, j->err, sizeof(j->err));
		} else if (!j->copy && jrc == 0) {
			/* The copy's mtime is the last good refresh (store.h), its serial older. */
			p53_store_touch(j->path);
		}
		if (jrc != 0) {
			char cerr[sizeof(j->err)];
			memcpy(cerr, j->err, sizeof(cerr));
			snprintf(j->err, sizeof(j->err), "journal %.*s%s%.*s", 240, jerr,
				 src != 0 ? "; copy " : "", 240, src != 0 ? cerr : "");
		}
		j->outcome = jrc == 0 && src == 0 ? P53_XFR_DONE : P53_XFR_FAILED;
		j->rrs_count = j->rrs.count;
		p53_rrs_free(&j->rrs);
		break;
	}
	case P53_JOB_REMOVE:
		j->outcome = p53_store_remove(j->path, j->err, sizeof(j->err)) == 0 ? P53_XFR_DONE
										      : P53_XFR_FAILED;
		break;
	}
	j->ms = (double)(now_ms() - t0);
}

void p53_xfr_job_free(struct p53_xfr_job *j)
{
	if (j == NULL)
		return;
	p53_rrs_free(&j->rrs);
	p53_ixfr_free(&j->diff);
	free(j->path);
	free(j->jpath);
	for (size_t i = 0; i < j->n_jsteps; i++)
		p53_jstep_put(j->jsteps[i]);
	free(j->jsteps);
	for (int i = 0; i < j->n_peers; i++)
		memset(j->peers[i].key.secret, 0, sizeof(j->peers[i].key.secret));
	free(j);
}
