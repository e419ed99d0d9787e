/* Outgoing NOTIFY to the servers we feed; see notify_out.h. Control thread only. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "control/daemon.h"
#include "control/log.h"
#include "control/text.h"
#include "control/xfr/notify_out.h"
#include "control/xfr/serve_conf.h"
#include "control/xfr/tsig.h"
#include "control/xfr/xfr.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#define NOUT_MSG_MAX 2048       /* header, question, SOA (at most 255 + 255 + 20 of RDATA), TSIG */
#define RECV_MAX 64             /* answers taken per socket per tick */

struct p53_nout_zone {
	uint8_t apex[P53_NAME_MAXLEN];
	uint8_t apex_len;
	uint32_t serial;
};

struct p53_nout_msg {
	uint8_t apex[P53_NAME_MAXLEN];
	uint8_t apex_len;
	uint32_t serial;
	uint8_t family;
	uint8_t addr[16];
	uint16_t port;
	bool has_key;
	struct p53_tsig_key key;        /* copy, name NULL: the config may be reloaded meanwhile */
	uint8_t mac[P53_TSIG_MAC_MAX];  /* of our request: the answer's TSIG covers it */
	uint16_t mac_len;
	uint16_t id;
	int tries;                      /* sent so far */
	uint64_t due_ms;                /* send again (or give up) at */
	uint64_t timeout_ms;
	size_t len;
	uint8_t wire[NOUT_MSG_MAX];
};

static uint64_t now_ms(void)
{
	return p53_xfr_now_us() / 1000u;
}

static int zone_cmp(const void *a, const void *b)
{
	const struct p53_nout_zone *x = a, *y = b;

	if (x->apex_len != y->apex_len)
		return x->apex_len < y->apex_len ? -1 : 1;
	return memcmp(x->apex, y->apex, x->apex_len);
}

static int sock_of(struct p53_nout *n, int family)
{
	int *fd = family == AF_INET ? &n->fd4 : &n->fd6;

	if (*fd < 0)
		*fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	return *fd;
}

static void drop_msg(struct p53_nout *n, size_t i)
{
	n->msgs[i] = n->msgs[--n->n_msgs];
}

/* The NOTIFY for one zone and server: the zone's SOA from the image in the answer section. */
static int build(struct p53_nout_msg *m, const void *img, uint32_t zi)
{
	const struct p53_image_zone *z = p53_image_zone(img, zi);
	const uint8_t *rd = p53_image_rdata(img, p53_image_zrrset(img, z, z->soa)) + P53_RR_OWNER_LEN;
	uint16_t rdlen = p53_get16(rd + 8);
	uint8_t *w = m->wire;
	size_t len = 0;
	uint16_t id;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != sizeof(id))
		id = (uint16_t)(now_ms() ^ (uintptr_t)m);
	m->id = id;
	p53_put16(w, id);
	p53_put16(w + 2, (uint16_t)(P53_OPCODE_NOTIFY << 11 | P53_F_AA));
	p53_put16(w + 4, 1);
	p53_put16(w + 6, 1);
	p53_put16(w + 8, 0);
	p53_put16(w + 10, 0);
	len = 12;
	memcpy(w + len, m->apex, m->apex_len);
	len += m->apex_len;
	p53_put16(w + len, P53_T_SOA);
	p53_put16(w + len + 2, P53_C_IN);
	len += 4;
	/* RFC 1996 §3.7: the SOA with the new serial, owner compressed to the question's name. */
	p53_put16(w + len, 0xc00c);
	memcpy(w + len + 2, rd, 10u + rdlen); /* type, class, TTL, RDLENGTH, RDATA */
	len += 12u + rdlen;
	m->len = len;
	m->mac_len = 0;
	if (m->has_key && p53_tsig_sign(w, &m->len, sizeof(m->wire), &m->key, NULL, 0, 0,
					(uint64_t)time(NULL), m->mac, &m->mac_len) != 0)
		return -1;
	return 0;
}

static void send_msg(struct p53_daemon *d, struct p53_nout_msg *m, uint64_t now)
{
	struct sockaddr_storage ss;
	socklen_t sl = p53_xfr_peer_sa(m->family, m->addr, m->port, &ss);
	int fd = sock_of(&d->xfr->nout, m->family);

	if (m->tries == 0)
		d->xfr_stats.notify_sent++;
	else
		d->xfr_stats.notify_retried++;
	m->tries++;
	m->due_ms = now + m->timeout_ms;
	if (fd < 0 || (sendto(fd, m->wire, m->len, 0, (struct sockaddr *)&ss, sl) < 0 &&
		       errno != EAGAIN && errno != EWOULDBLOCK)) {
		char p[INET6_ADDRSTRLEN + 16], z[1024];
		if (m->tries == 1) /* once per NOTIFY; the tries go on (a route may come back) */
			p53_warn("NOTIFY for %s to %s: %s", p53_name_to_str(z, sizeof(z), m->apex),
				 p53_xfr_peer_str(m->family, m->addr, m->port, p, sizeof(p)), strerror(errno));
	}
}

/* Queue (or replace) the NOTIFY of zone zi's serial to one server and send it. */
static void notify_one(struct p53_daemon *d, const void *img, uint32_t zi,
		       const struct p53_xfr_primary *to, uint64_t now)
{
	struct p53_nout *n = &d->xfr->nout;
	const struct p53_image_zone *z = p53_image_zone(img, zi);
	const uint8_t *apex = p53_image_name(img, z->name_off);
	struct p53_nout_msg *m = NULL;

	for (size_t i = 0; i < n->n_msgs && m == NULL; i++) {
		struct p53_nout_msg *o = &n->msgs[i];
		if (o->apex_len == z->name_len && memcmp(o->apex, apex, z->name_len) == 0 &&
		    o->family == to->family && memcmp(o->addr, to->addr, 16) == 0 && o->port == to->port)
			m = o; /* the newer serial replaces it */
	}
	if (m == NULL) {
		if (n->n_msgs == n->cap_msgs) {
			size_t cap = n->cap_msgs ? n->cap_msgs * 2 : 16;
			struct p53_nout_msg *g = cap <= P53_NOUT_MAX_PENDING
						 ? realloc(n->msgs, cap * sizeof(*g)) : NULL;
			if (g == NULL) {
				d->xfr_stats.notify_failed++;
				p53_err("NOTIFY: %zu waiting for an answer already; one dropped", n->n_msgs);
				return;
			}
			n->msgs = g;
			n->cap_msgs = cap;
		}
		m = &n->msgs[n->n_msgs++];
	}
	memset(m, 0, offsetof(struct p53_nout_msg, wire));
	memcpy(m->apex, apex, z->name_len);
	m->apex_len = z->name_len;
	m->serial = z->serial;
	m->family = to->family;
	memcpy(m->addr, to->addr, 16);
	m->port = to->port;
	if (to->key >= 0 && to->key < d->cfg.xfr.n_keys) {
		m->has_key = true;
		m->key = d->cfg.xfr.keys[to->key];
		m->key.name = NULL;
	}
	m->timeout_ms = P53_NOUT_FIRST_TIMEOUT_MS;
	if (build(m, img, zi) != 0) {
		char z2[1024];
		d->xfr_stats.notify_failed++;
		p53_err("NOTIFY for %s: cannot sign it", p53_name_to_str(z2, sizeof(z2), m->apex));
		drop_msg(n, (size_t)(m - n->msgs));
		return;
	}
	send_msg(d, m, now);
}

/* The zone's index in the image when it is served with data, else P53_NONE. */
static uint32_t served_zone(const void *img, const uint8_t *apex, size_t len)
{
	uint32_t ni = p53_image_find(img, apex, len, p53_name_hash(apex, len));

	if (ni == P53_NONE || !(p53_image_node(img, ni)->flags & P53_NODE_APEX))
		return P53_NONE;
	uint32_t zi = p53_image_node(img, ni)->zone;
	const struct p53_image_zone *z = p53_image_zone(img, zi);
	return z->rcode == 0 && z->soa != P53_NONE ? zi : P53_NONE;
}

/* One zone with targets: record its serial; NOTIFY when it is new or changed. */
static void zone_seen(struct p53_daemon *d, const void *img, const uint8_t *apex, size_t len,
		      const struct p53_xfr_notify_to *to, struct p53_nout_zone *seen, size_t *n_seen,
		      uint64_t now)
{
	struct p53_nout *n = &d->xfr->nout;
	uint32_t zi = served_zone(img, apex, len);

	if (to == NULL || to->n == 0 || zi == P53_NONE)
		return;
	struct p53_nout_zone *e = &seen[(*n_seen)++];
	memcpy(e->apex, apex, len);
	e->apex_len = (uint8_t)len;
	e->serial = p53_image_zone(img, zi)->serial;
	const struct p53_nout_zone *old = n->zones == NULL ? NULL
					  : bsearch(e, n->zones, n->n_zones, sizeof(*e), zone_cmp);
	if (old != NULL && old->serial == e->serial)
		return;
	for (int i = 0; i < to->n; i++)
		notify_one(d, img, zi, &to->to[i], now);
}

static const struct p53_xfr_notify_to *targets(const struct p53_config *cfg, int k)
{
	if (k < 0 || k >= cfg->n_zones)
		return NULL;
	return cfg->zones[k].notify_to != NULL ? cfg->zones[k].notify_to : cfg->xfr.notify_to;
}

/* A new image: which zones with targets are served at a serial we have not announced. */
static void scan(struct p53_daemon *d, uint64_t now)
{
	struct p53_nout *n = &d->xfr->nout;
	const struct p53_config *cfg = &d->cfg;
	const void *img = d->dp.image;
	bool any = cfg->xfr.notify_to != NULL && cfg->xfr.notify_to->n > 0;

	for (int k = 0; k < cfg->n_zones && !any; k++)
		any = cfg->zones[k].notify_to != NULL && cfg->zones[k].notify_to->n > 0;
	if (!any || img == NULL) {
		free(n->zones);
		n->zones = NULL;
		n->n_zones = 0;
		return;
	}
	struct p53_nout_zone *seen = calloc((size_t)cfg->n_zones + d->xfr->n + 1, sizeof(*seen));
	size_t n_seen = 0;
	if (seen == NULL) {
		p53_err("NOTIFY: out of memory comparing serials; no NOTIFY for this change");
		return;
	}
	for (int k = 0; k < cfg->n_zones; k++) {
		uint8_t apex[P53_NAME_MAXLEN], len;
		if ((cfg->zones[k].xfr != NULL && cfg->zones[k].xfr->catalog) ||
		    p53_xfr_name_wire(cfg->zones[k].name, apex, &len) != 0)
			continue; /* a catalog is not served; its members are, below */
		zone_seen(d, img, apex, len, targets(cfg, k), seen, &n_seen, now);
	}
	for (size_t i = 0; i < d->xfr->n; i++) {
		const struct p53_xfr_zone *z = d->xfr->zones[i];
		if (z->catalog != NULL && !z->removed)
			zone_seen(d, img, z->apex, z->apex_len, targets(cfg, z->cfg_index), seen, &n_seen, now);
	}
	qsort(seen, n_seen, sizeof(*seen), zone_cmp);
	free(n->zones);
	n->zones = seen;
	n->n_zones = n_seen;
}

/* One datagram from a downstream server: the answer to one of our NOTIFYs? */
static void answer_in(struct p53_daemon *d, const uint8_t *msg, size_t len,
		      const struct sockaddr_storage *ss)
{
	struct p53_nout *n = &d->xfr->nout;
	uint8_t fam = (uint8_t)ss->ss_family, addr[16] = { 0 };
	uint16_t port;
	char p[INET6_ADDRSTRLEN + 16], z[1024];

	if (len < 12)
		return;
	if (fam == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
		memcpy(addr, &s->sin_addr, 4);
		port = ntohs(s->sin_port);
	} else {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
		memcpy(addr, &s->sin6_addr, 16);
		port = ntohs(s->sin6_port);
	}
	uint16_t id = p53_get16(msg), flags = p53_get16(msg + 2);
	for (size_t i = 0; i < n->n_msgs; i++) {
		struct p53_nout_msg *m = &n->msgs[i];
		if (m->id != id || m->family != fam || m->port != port || memcmp(m->addr, addr, 16) != 0)
			continue;
		uint8_t qname[P53_NAME_MAXLEN];
		/* RFC 1996 §4.7: QR, opcode NOTIFY, our question. Anything else is not its answer. */
		if (!(flags & P53_F_QR) || P53_OPCODE(flags) != P53_OPCODE_NOTIFY ||
		    p53_get16(msg + 4) != 1 || len < 12u + m->apex_len + 4u)
			return;
		p53_name_lower(qname, msg + 12, m->apex_len);
		if (memcmp(qname, m->apex, m->apex_len) != 0)
			return;
		if (m->has_key) {
			struct p53_tsig_stream ts;
			p53_tsig_stream_init(&ts, &m->key, m->mac, m->mac_len);
			enum p53_tsig_status st = p53_tsig_stream_next(&ts, msg, len, (uint64_t)time(NULL));
			p53_tsig_stream_free(&ts);
			if (st != P53_TSIG_OK && st != P53_TSIG_ERROR)
				return; /* not verified: perhaps forged; the real answer may still come */
			if (st == P53_TSIG_ERROR) {
				d->xfr_stats.notify_failed++;
				p53_warn("NOTIFY for %s serial %u to %s: the server does not accept our TSIG "
					 "key", p53_name_to_str(z, sizeof(z), m->apex), m->serial,
					 p53_xfr_peer_str(m->family, m->addr, m->port, p, sizeof(p)));
				drop_msg(n, i);
				return;
			}
		}
		unsigned int rc = flags & 0x0fu;
		if (rc == P53_RCODE_NOERROR) {
			d->xfr_stats.notify_acked++;
			p53_info("NOTIFY for %s serial %u to %s: answered%s", p53_name_to_str(z, sizeof(z), m->apex),
				 m->serial, p53_xfr_peer_str(m->family, m->addr, m->port, p, sizeof(p)), m->has_key ? " (TSIG)" : "");
		} else {
			char b[32];
			d->xfr_stats.notify_failed++;
			p53_warn("NOTIFY for %s serial %u to %s: answered %s; not sent again",
				 p53_name_to_str(z, sizeof(z), m->apex), m->serial, p53_xfr_peer_str(m->family, m->addr, m->port, p, sizeof(p)),
				 p53_rcode_name(rc, b, sizeof(b)));
		}
		drop_msg(n, i);
		return;
	}
}

static void receive(struct p53_daemon *d, int fd)
{
	uint8_t buf[4096];

	for (int k = 0; fd >= 0 && k < RECV_MAX; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		ssize_t got = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&ss, &sl);
		if (got < 0)
			return; /* EAGAIN; ICMP errors are left to the timeout */
		answer_in(d, buf, (size_t)got, &ss);
	}
}

void p53_nout_tick(struct p53_daemon *d)
{
	struct p53_nout *n = &d->xfr->nout;
	uint64_t now = now_ms();

	receive(d, n->fd4);
	receive(d, n->fd6);
	if (n->generation != d->dp.generation) {
		n->generation = d->dp.generation;
		scan(d, now);
	}
	for (size_t i = 0; i < n->n_msgs;) {
		struct p53_nout_msg *m = &n->msgs[i];
		if (now < m->due_ms) {
			i++;
			continue;
		}
		if (m->tries < P53_NOUT_TRIES) {
			m->timeout_ms *= 2;
			send_msg(d, m, now);
			i++;
			continue;
		}
		char p[INET6_ADDRSTRLEN + 16], z[1024];
		d->xfr_stats.notify_failed++;
		p53_warn("NOTIFY for %s serial %u to %s: no answer after %d tries; the server will find "
			 "the serial by its own SOA refresh", p53_name_to_str(z, sizeof(z), m->apex),
			 m->serial, p53_xfr_peer_str(m->family, m->addr, m->port, p, sizeof(p)), m->tries);
		drop_msg(n, i);
	}
}

void p53_nout_free(struct p53_nout *n)
{
	if (n->fd4 >= 0)
		close(n->fd4);
	if (n->fd6 >= 0)
		close(n->fd6);
	for (size_t i = 0; i < n->n_msgs; i++)
		memset(&n->msgs[i].key, 0, sizeof(n->msgs[i].key));
	free(n->msgs);
	free(n->zones);
	memset(n, 0, sizeof(*n));
	n->fd4 = n->fd6 = -1;
}
