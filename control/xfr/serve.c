/* Serving AXFR and IXFR; see serve.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <ldns/ldns.h>

#include "control/conf/config.h"
#include "control/text.h"
#include "control/xfr/serve.h"
#include "control/xfr/serve_conf.h"
#include "control/xfr/xfr.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

struct serve_zone {
	uint8_t apex[P53_NAME_MAXLEN];
	uint8_t apex_len;
	struct p53_xfr_acl acl[P53_XFR_MAX_ACL];
	int n_acl;
	struct p53_jstep **steps;       /* a reference each */
	size_t n_steps;
};

struct p53_xfr_serve_table {
	struct p53_tsig_key *keys;      /* copies; names not kept */
	int n_keys;
	struct serve_zone *zones;
	size_t n;
};

static void table_free(struct p53_xfr_serve_table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++) {
		for (size_t k = 0; k < t->zones[i].n_steps; k++)
			p53_jstep_put(t->zones[i].steps[k]);
		free(t->zones[i].steps);
	}
	if (t->keys != NULL)
		memset(t->keys, 0, sizeof(*t->keys) * (size_t)t->n_keys);
	free(t->keys);
	free(t->zones);
	free(t);
}

void p53_xfr_serve_init(struct p53_xfr_serve *sv)
{
	memset(sv, 0, sizeof(*sv));
	pthread_mutex_init(&sv->lock, NULL);
	sv->init = true;
}

void p53_xfr_serve_fini(struct p53_xfr_serve *sv)
{
	if (!sv->init)
		return;
	table_free(sv->cur);
	sv->cur = NULL;
	pthread_mutex_destroy(&sv->lock);
	sv->init = false;
}

static int apex_of(const char *name, uint8_t *out, uint8_t *len)
{
	ldns_rdf *r = ldns_dname_new_frm_str(name);
	int rc = -1;

	if (r != NULL && ldns_rdf_size(r) <= P53_NAME_MAXLEN) {
		p53_name_lower(out, ldns_rdf_data(r), ldns_rdf_size(r));
		*len = (uint8_t)ldns_rdf_size(r);
		rc = 0;
	}
	ldns_rdf_deep_free(r);
	return rc;
}

/* The zone's entry: its ACL, and its journal when it is a secondary. */
static int zone_entry(struct serve_zone *e, const char *name, const struct p53_xfr_transfer_conf *tc,
		      const struct p53_xfr_zone *xz)
{
	memset(e, 0, sizeof(*e));
	if (apex_of(name, e->apex, &e->apex_len) != 0)
		return -1;
	memcpy(e->acl, tc->acl, sizeof(tc->acl[0]) * (size_t)tc->n_acl);
	e->n_acl = tc->n_acl;
	if (xz == NULL || xz->journal.n == 0)
		return 0;
	e->steps = malloc(sizeof(*e->steps) * xz->journal.n);
	if (e->steps == NULL)
		return -1;
	for (size_t k = 0; k < xz->journal.n; k++) {
		p53_jstep_get(xz->journal.steps[k]);
		e->steps[e->n_steps++] = xz->journal.steps[k];
	}
	return 0;
}

void p53_xfr_serve_publish(struct p53_xfr_serve *sv, const struct p53_config *cfg,
			   const struct p53_xfr *x)
{
	struct p53_xfr_serve_table *t = calloc(1, sizeof(*t));
	size_t max = (size_t)cfg->n_zones + (x != NULL ? x->n : 0);

	if (t == NULL)
		goto oom;
	t->zones = calloc(max + 1, sizeof(*t->zones));
	t->keys = calloc((size_t)cfg->xfr.n_keys + 1, sizeof(*t->keys));
	if (t->zones == NULL || t->keys == NULL)
		goto oom;
	for (int i = 0; i < cfg->xfr.n_keys; i++) {
		t->keys[i] = cfg->xfr.keys[i];
		t->keys[i].name = NULL;
	}
	t->n_keys = cfg->xfr.n_keys;
	for (int i = 0; i < cfg->n_zones; i++) {
		const struct p53_config_zone *z = &cfg->zones[i];
		const struct p53_xfr_transfer_conf *tc = z->transfer != NULL ? z->transfer : cfg->xfr.transfer;
		if (tc == NULL || (z->xfr != NULL && z->xfr->catalog))
			continue; /* catalog zones are not served (their members are, below) */
		if (zone_entry(&t->zones[t->n], z->name, tc, x != NULL ? p53_xfr_find(x, z->name) : NULL) != 0)
			goto oom;
		t->n++;
	}
	for (size_t i = 0; x != NULL && i < x->n; i++) {
		const struct p53_xfr_zone *m = x->zones[i];
		if (m->catalog == NULL || m->cfg_index < 0 || m->cfg_index >= cfg->n_zones)
			continue;
		const struct p53_config_zone *cz = &cfg->zones[m->cfg_index];
		const struct p53_xfr_transfer_conf *tc = cz->transfer != NULL ? cz->transfer : cfg->xfr.transfer;
		if (tc == NULL)
			continue;
		if (zone_entry(&t->zones[t->n], m->name, tc, m) != 0)
			goto oom;
		t->n++;
	}
	pthread_mutex_lock(&sv->lock);
	struct p53_xfr_serve_table *old = sv->cur;
	sv->cur = t;
	pthread_mutex_unlock(&sv->lock);
	table_free(old);
	return;
oom:
	table_free(t);
}

void p53_xfr_out_free(struct p53_xfr_out *o)
{
	if (o == NULL)
		return;
	for (size_t i = 0; i < o->n_steps; i++)
		p53_jstep_put(o->steps[i]);
	free(o->steps);
	p53_rrs_free(&o->soa);
	p53_rrs_free(&o->body);
	memset(&o->key, 0, sizeof(o->key));
	free(o);
}

int p53_image_zone_rrs(const void *img, uint32_t zone, struct p53_rrs *soa, struct p53_rrs *body)
{
	uint32_t soa_set = p53_image_zone(img, zone)->soa;

	const struct p53_image_zone *z = p53_image_zone(img, zone);

	/* The zone's range of nodes[] (image.h), its indices relative to it. */
	for (uint32_t n = body != NULL ? 0 : z->apex; n < z->n_nodes; n++) {
		const struct p53_image_node *nd = p53_image_znode(img, z, n);
		const uint8_t *owner = p53_image_node_name(img, nd);
		for (uint32_t i = nd->rrsets; i < (uint32_t)nd->rrsets + nd->n_rrsets; i++) {
			const struct p53_image_rrset *rs = p53_image_zrrset(img, z, i);
			const uint8_t *rd = p53_image_rdata(img, rs);
			/* The RRset's records, then the RRSIGs covering it (image.h). */
			for (uint32_t k = 0; k < (uint32_t)rs->count + rs->sig_count; k++) {
				rd += P53_RR_OWNER_LEN;
				uint16_t rdlen = p53_get16(rd + 8);
				struct p53_rrs *to = i == soa_set && k < rs->count ? soa : body;
				if (to != NULL && p53_rrs_add(to, owner, nd->name_len, p53_get16(rd), p53_get16(rd + 2),
						(uint32_t)p53_get16(rd + 4) << 16 | p53_get16(rd + 6), rd + 10,
						rdlen) != 0)
					return -1;
				rd += 10u + rdlen;
			}
		}
		if (body == NULL)
			break; /* the SOA alone: the apex node */
	}
	return soa->count == 1 ? 0 : -1;
}

/* Skip a name that may be compressed (RFC 1035 §4.1.4). */
static void skip_name(struct p53_wire *w)
{
	for (;;) {
		uint8_t l = p53_wire_u8(w);
		if (w->err || l == 0)
			return;
		if ((l & 0xc0) == 0xc0) {
			p53_wire_u8(w);
			return;
		}
		if (l > 63) {
			w->err = 1;
			return;
		}
		p53_wire_skip(w, l);
	}
}

int p53_xfr_ixfr_serial(const uint8_t *msg, size_t len, const struct p53_query *q,
			uint32_t *serial)
{
	struct p53_wire w;

	/* RFC 1995 §3: the client's version is the SOA in the authority section. */
	if (q->ancount != 0 || q->nscount < 1)
		return -1;
	p53_wire_init(&w, msg, len);
	p53_wire_skip(&w, 12u + q->qname_len + 4u);
	skip_name(&w);
	uint16_t type = p53_wire_u16(&w);
	p53_wire_skip(&w, 6);
	uint16_t rdlen = p53_wire_u16(&w);
	size_t rd_end = p53_wire_off(&w) + rdlen;
	skip_name(&w);
	skip_name(&w);
	uint32_t s = p53_wire_u32(&w);
	if (w.err || type != P53_T_SOA || p53_wire_off(&w) + 16 > rd_end)
		return -1;
	*serial = s;
	return 0;
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

/* Header and question with an RCODE: a refusal. */
static size_t refusal(const uint8_t *msg, const struct p53_query *q, uint8_t rcode, uint8_t *out)
{
	size_t qend = 12u + q->qname_len + 4u;

	memcpy(out, msg, qend);
	p53_put16(out + 2, (uint16_t)(P53_F_QR | (p53_get16(msg + 2) & P53_F_RD) | rcode));
	p53_put16(out + 4, 1);
	memset(out + 6, 0, 6);
	return qend;
}

static int zone_index(const void *img, const struct p53_query *q, uint32_t *zi)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);

	for (uint32_t i = 0; i < h->n_zones; i++) {
		const struct p53_image_zone *z = p53_image_zone(img, i);
		if (z->name_len == q->qname_len &&
		    memcmp(p53_image_name(img, z->name_off), q->lname, q->qname_len) == 0) {
			*zi = i;
			return 0;
		}
	}
	return -1;
}

/* RFC 1982: is a at or after b? */
static bool serial_ge(uint32_t a, uint32_t b)
{
	return a == b || (int32_t)(a - b) > 0;
}

int p53_xfr_serve_request(struct p53_xfr_serve *sv, const void *img, const uint8_t *msg,
			  size_t len, const struct p53_query *q, int family, const uint8_t *peer,
			  uint8_t *out, size_t cap, size_t *out_len, struct p53_xfr_out **xo)
{
	uint64_t now = (uint64_t)time(NULL);
	struct p53_tsig_rr t;
	struct p53_xfr_out *o = NULL;
	uint32_t zi, client = 0;
	bool ixfr = q->qtype == P53_T_IXFR;
	bool soa_query = q->qtype == P53_T_SOA; /* a signed refresh check (serve.h) */
	int k = -1;

	*xo = NULL;
	*out_len = 0;
	if (cap < 12u + q->qname_len + 4u + 512u)
		return -1;
	enum p53_tsig_status ts = p53_tsig_find(msg, len, &t);
	if (ts == P53_TSIG_FORMERR) {
		*out_len = refusal(msg, q, P53_RCODE_FORMERR, out);
		return 0;
	}
	if (ixfr && p53_xfr_ixfr_serial(msg, ts == P53_TSIG_OK ? t.rr_off : len, q, &client) != 0) {
		*out_len = refusal(msg, q, P53_RCODE_FORMERR, out); /* RFC 1995 §3 */
		return 0;
	}
	if (img == NULL || zone_index(img, q, &zi) != 0) {
		*out_len = refusal(msg, q, P53_RCODE_NOTAUTH, out); /* not a zone of ours (as Knot) */
		return 0;
	}
	if (p53_image_zone(img, zi)->rcode != 0) {
		*out_len = refusal(msg, q, P53_RCODE_SERVFAIL, out); /* no data to give */
		return 0;
	}
	uint32_t serial = p53_image_zone(img, zi)->serial;

	pthread_mutex_lock(&sv->lock);
	const struct p53_xfr_serve_table *tb = sv->cur;
	const struct serve_zone *e = NULL;
	for (size_t i = 0; tb != NULL && i < tb->n && e == NULL; i++)
		if (tb->zones[i].apex_len == q->qname_len &&
		    memcmp(tb->zones[i].apex, q->lname, q->qname_len) == 0)
			e = &tb->zones[i];
	if (ts == P53_TSIG_OK) {
		/* RFC 8945 §5.2: the signature first, whatever the ACL says. */
		for (int i = 0; tb != NULL && i < tb->n_keys && k < 0; i++)
			if (tb->keys[i].wire_len == t.name_len && memcmp(tb->keys[i].wire, t.name, t.name_len) == 0)
				k = i;
		enum p53_tsig_status vs = k < 0 ? P53_TSIG_BADKEY : p53_tsig_verify(msg, len, &t, &tb->keys[k], now);
		bool wanted = false;
		for (int i = 0; vs == P53_TSIG_OK && e != NULL && i < e->n_acl; i++)
			wanted |= prefix_match(&e->acl[i], family, peer) && (e->acl[i].key < 0 || e->acl[i].key == k);
		if (vs == P53_TSIG_OK && e != NULL && !wanted) {
			for (int i = 0; i < e->n_acl; i++)
				if (prefix_match(&e->acl[i], family, peer))
					vs = P53_TSIG_BADKEY; /* a key we know, not the one this zone takes */
		}
		if (vs != P53_TSIG_OK) {
			pthread_mutex_unlock(&sv->lock);
			uint16_t err = vs == P53_TSIG_BADKEY ? P53_TSIG_E_BADKEY
				       : vs == P53_TSIG_BADTIME ? P53_TSIG_E_BADTIME
				       : vs == P53_TSIG_BADTRUNC ? P53_TSIG_E_BADTRUNC : P53_TSIG_E_BADSIG;
			*out_len = refusal(msg, q, P53_RCODE_NOTAUTH, out);
			p53_tsig_append_error(out, out_len, cap, &t, err, now);
			return 0;
		}
	}
	bool allowed = false;
	for (int i = 0; e != NULL && i < e->n_acl && !allowed; i++)
		allowed = prefix_match(&e->acl[i], family, peer) && (e->acl[i].key < 0 || e->acl[i].key == k);
	if (!allowed) {
		pthread_mutex_unlock(&sv->lock);
		*out_len = refusal(msg, q, P53_RCODE_REFUSED, out);
		if (k >= 0) {
			/* A verified request gets a signed answer (RFC 8945 §5.3). */
			pthread_mutex_lock(&sv->lock);
			if (sv->cur != NULL && k < sv->cur->n_keys)
				p53_tsig_sign(out, out_len, cap, &sv->cur->keys[k], t.mac, t.mac_len, 0, now,
					      NULL, NULL);
			pthread_mutex_unlock(&sv->lock);
		}
		return 0;
	}
	o = calloc(1, sizeof(*o));
	if (o == NULL)
		goto oom_locked;
	if (k >= 0)
		o->key = tb->keys[k];
	/* IXFR: the journal's steps from the client's serial to the one served, if it has them. */
	bool uptodate = (ixfr && serial_ge(client, serial)) || soa_query;
	bool diffs = false;
	if (ixfr && !uptodate && e->n_steps > 0 && e->n_steps <= (P53_XFR_MAX_SEGS - 2) / 2) {
		o->steps = malloc(sizeof(*o->steps) * e->n_steps);
		if (o->steps == NULL)
			goto oom_locked;
		struct p53_journal view = { .steps = e->steps, .n = e->n_steps };
		diffs = p53_journal_chain(&view, client, serial, o->steps, &o->n_steps) == 0;
	}
	pthread_mutex_unlock(&sv->lock);

	if (p53_image_zone_rrs(img, zi, &o->soa, uptodate || diffs ? NULL : &o->body) != 0)
		goto oom;
	size_t qlen = 12u + q->qname_len + 4u;
	if (p53_xfr_stream_init(&o->st, msg, qlen, k >= 0 ? &o->key : NULL, t.mac,
				k >= 0 ? t.mac_len : 0) != 0)
		goto oom;
	int rc = p53_xfr_stream_add(&o->st, &o->soa);
	if (!uptodate) {
		for (size_t i = 0; diffs && i < o->n_steps; i++) {
			rc |= p53_xfr_stream_add(&o->st, &o->steps[i]->del);
			rc |= p53_xfr_stream_add(&o->st, &o->steps[i]->add);
		}
		if (!diffs)
			rc |= p53_xfr_stream_add(&o->st, &o->body);
		rc |= p53_xfr_stream_add(&o->st, &o->soa);
	}
	if (rc != 0)
		goto oom;
	char zone[1024];
	p53_name_to_str(zone, sizeof(zone), q->lname);
	snprintf(o->what, sizeof(o->what), "%s of %.40s serial %u%s",
		 soa_query ? "SOA" : ixfr ? "IXFR" : "AXFR", zone, serial,
		 soa_query ? "" : uptodate ? " (up to date)" : ixfr && diffs ? " (differences)"
		 : ixfr ? " (whole zone)" : "");
	o->soa_query = soa_query;
	o->served = soa_query ? P53_XFR_SERVED__MAX : !ixfr ? P53_XFR_SERVED_AXFR
		    : uptodate ? P53_XFR_SERVED_IXFR_UPTODATE : diffs ? P53_XFR_SERVED_IXFR
		    : P53_XFR_SERVED_IXFR_AXFR;
	*xo = o;
	return 0;
oom_locked:
	pthread_mutex_unlock(&sv->lock);
oom:
	p53_xfr_out_free(o);
	return -1;
}
