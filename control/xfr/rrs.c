/* Records in memory and IXFR application; see rrs.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/bigmem.h"
#include "control/text.h"
#include "control/xfr/rrs.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

static int grow(struct p53_rrs *r, size_t need)
{
	size_t cap = r->cap ? r->cap : 4096;
	uint8_t *b;

	if (r->len + need <= r->cap)
		return 0;
	while (cap < r->len + need)
		cap *= 2;
	b = p53_bigmem_grow(r->buf, r->len, cap);
	if (b == NULL)
		return -1;
	r->buf = b;
	r->cap = cap;
	return 0;
}

int p53_rrs_add(struct p53_rrs *r, const uint8_t *owner, size_t owner_len, uint16_t type,
		uint16_t cls, uint32_t ttl, const uint8_t *rdata, size_t rdlen)
{
	if (owner_len == 0 || owner_len > P53_NAME_MAXLEN || rdlen > UINT16_MAX ||
	    r->count == UINT32_MAX || grow(r, owner_len + 10 + rdlen) != 0)
		return -1;
	uint8_t *p = r->buf + r->len;
	memcpy(p, owner, owner_len);
	p += owner_len;
	p53_put16(p, type);
	p53_put16(p + 2, cls);
	p53_put32(p + 4, ttl);
	p53_put16(p + 8, (uint16_t)rdlen);
	if (rdlen > 0)
		memcpy(p + 10, rdata, rdlen);
	r->len += owner_len + 10 + rdlen;
	r->count++;
	return 0;
}

int p53_rrs_add_ldns(struct p53_rrs *r, const ldns_rr *rr)
{
	const ldns_rdf *owner = ldns_rr_owner(rr);
	ldns_buffer *b = ldns_buffer_new(512);
	int rc = -1;

	if (b == NULL)
		return -1;
	if (owner != NULL && ldns_rr_rdata2buffer_wire(b, rr) == LDNS_STATUS_OK)
		rc = p53_rrs_add(r, ldns_rdf_data(owner), ldns_rdf_size(owner),
				 (uint16_t)ldns_rr_get_type(rr), (uint16_t)ldns_rr_get_class(rr),
				 ldns_rr_ttl(rr), ldns_buffer_begin(b), ldns_buffer_position(b));
	ldns_buffer_free(b);
	return rc;
}

int p53_rrs_append(struct p53_rrs *r, const struct p53_rrs *from)
{
	if (from->len == 0)
		return 0;
	if (grow(r, from->len) != 0)
		return -1;
	memcpy(r->buf + r->len, from->buf, from->len);
	r->len += from->len;
	r->count += from->count;
	return 0;
}

int p53_rrs_next(const struct p53_rrs *r, size_t *pos, struct p53_rr_view *v)
{
	if (*pos >= r->len)
		return 0;
	const uint8_t *p = r->buf + *pos;
	int ol = p53_name_len(p, r->len - *pos);
	if (ol < 0 || *pos + (size_t)ol + 10 > r->len)
		return -1;
	v->rr = p;
	v->owner = p;
	v->owner_len = (uint8_t)ol;
	p += ol;
	v->type = p53_get16(p);
	v->cls = p53_get16(p + 2);
	v->ttl = (uint32_t)p53_get16(p + 4) << 16 | p53_get16(p + 6);
	v->rdlen = p53_get16(p + 8);
	v->rdata = p + 10;
	v->rr_len = (size_t)ol + 10 + v->rdlen;
	if (*pos + v->rr_len > r->len)
		return -1;
	*pos += v->rr_len;
	return 1;
}

ldns_rr *p53_rr_view_ldns(const struct p53_rr_view *v)
{
	ldns_rr *rr = NULL;
	size_t pos = 0;

	if (ldns_wire2rr(&rr, v->rr, v->rr_len, &pos, LDNS_SECTION_ANSWER) != LDNS_STATUS_OK)
		return NULL;
	return rr;
}

void p53_rrs_free(struct p53_rrs *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

void p53_rrs_move(struct p53_rrs *dst, struct p53_rrs *src)
{
	p53_rrs_free(dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

int64_t p53_rrs_soa_serial(const struct p53_rrs *r)
{
	struct p53_rr_view v;
	size_t pos = 0;

	while (p53_rrs_next(r, &pos, &v) == 1) {
		if (v.type != 6 /* SOA */)
			continue;
		int m1 = p53_name_len(v.rdata, v.rdlen);
		int m2 = m1 < 0 ? -1 : p53_name_len(v.rdata + m1, v.rdlen - (size_t)m1);
		if (m2 < 0 || (size_t)m1 + (size_t)m2 + 20 != v.rdlen)
			return -1;
		const uint8_t *s = v.rdata + m1 + m2;
		return (int64_t)((uint32_t)p53_get16(s) << 16 | p53_get16(s + 2));
	}
	return -1;
}

struct p53_ixfr_step *p53_ixfr_push(struct p53_ixfr *d)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 4;
		struct p53_ixfr_step *s = realloc(d->steps, cap * sizeof(*s));
		if (s == NULL)
			return NULL;
		d->steps = s;
		d->cap = cap;
	}
	memset(&d->steps[d->n], 0, sizeof(d->steps[0]));
	return &d->steps[d->n++];
}

void p53_ixfr_free(struct p53_ixfr *d)
{
	for (size_t i = 0; i < d->n; i++) {
		p53_rrs_free(&d->steps[i].del);
		p53_rrs_free(&d->steps[i].add);
	}
	free(d->steps);
	memset(d, 0, sizeof(*d));
}

void p53_ixfr_counts(const struct p53_ixfr *d, uint64_t *del, uint64_t *add)
{
	*del = *add = 0;
	for (size_t i = 0; i < d->n; i++) {
		*del += d->steps[i].del.count;
		*add += d->steps[i].add.count;
	}
}

/* ---- applying ---- */

/* Owner (lowered) and type: which base records may be deleted. */
static uint32_t owner_type_hash(const struct p53_rr_view *v)
{
	uint8_t low[P53_NAME_MAXLEN];

	p53_name_lower(low, v->owner, v->owner_len);
	return p53_name_hash(low, v->owner_len) ^ (uint32_t)v->type * 0x9e3779b1u;
}

/* Owner, type and class, then the RDATA in canonical form (RFC 4034 §6.2); malloc'd. */
static uint8_t *canon_key(const struct p53_rr_view *v, size_t *len)
{
	ldns_rr *rr = p53_rr_view_ldns(v);
	ldns_buffer *b = ldns_buffer_new(512);
	uint8_t *key = NULL;

	if (rr != NULL && b != NULL) {
		ldns_rr2canonical(rr);
		if (ldns_rr_rdata2buffer_wire(b, rr) == LDNS_STATUS_OK) {
			size_t rl = ldns_buffer_position(b);
			key = malloc(v->owner_len + 4 + rl);
			if (key != NULL) {
				p53_name_lower(key, v->owner, v->owner_len);
				p53_put16(key + v->owner_len, v->type);
				p53_put16(key + v->owner_len + 2, v->cls);
				memcpy(key + v->owner_len + 4, ldns_buffer_begin(b), rl);
				*len = v->owner_len + 4 + rl;
			}
		}
	}
	if (b != NULL)
		ldns_buffer_free(b);
	if (rr != NULL)
		ldns_rr_free(rr);
	return key;
}

struct entry {
	uint8_t *key;
	size_t key_len;
	uint32_t hash;
	uint8_t base_del;               /* deleted from the base: must be found there */
	uint8_t found;
	const uint8_t *add;             /* the added record (in a step's buffer), or NULL */
	size_t add_len;
};

struct table {
	struct entry *e;
	size_t mask, n;
	uint32_t *filter;               /* owner/type hashes | 1, open addressing */
	size_t fmask;
};

static uint32_t key_hash(const uint8_t *k, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 16777619u;
	return h;
}

static struct entry *lookup(struct table *t, const uint8_t *k, size_t len, uint32_t h, int create)
{
	size_t i = h & t->mask;

	for (; t->e[i].key != NULL; i = (i + 1) & t->mask)
		if (t->e[i].hash == h && t->e[i].key_len == len && memcmp(t->e[i].key, k, len) == 0)
			return &t->e[i];
	if (!create || (t->n + 1) * 2 > t->mask + 1)
		return NULL;
	t->e[i].key = malloc(len);
	if (t->e[i].key == NULL)
		return NULL;
	memcpy(t->e[i].key, k, len);
	t->e[i].key_len = len;
	t->e[i].hash = h;
	t->n++;
	return &t->e[i];
}

static void filter_add(struct table *t, uint32_t h)
{
	size_t i = h & t->fmask;

	h |= 1;
	while (t->filter[i] != 0 && t->filter[i] != h)
		i = (i + 1) & t->fmask;
	t->filter[i] = h;
}

static int filter_has(const struct table *t, uint32_t h)
{
	size_t i = h & t->fmask;

	h |= 1;
	for (; t->filter[i] != 0; i = (i + 1) & t->fmask)
		if (t->filter[i] == h)
			return 1;
	return 0;
}

static size_t pow2_at_least(size_t n)
{
	size_t p = 16;

	while (p < n)
		p *= 2;
	return p;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static void table_free(struct table *t)
{
	if (t->e != NULL)
		for (size_t i = 0; i <= t->mask; i++)
			free(t->e[i].key);
	free(t->e);
	free(t->filter);
}

int p53_ixfr_apply_inplace(struct p53_rrs *zone, const struct p53_ixfr *d, char *err,
			   size_t errlen)
{
	struct table t = { 0 };
	struct p53_rr_view v;
	uint64_t n_del = 0, n_add = 0;
	size_t pos, w = 0;
	uint32_t kept = 0;
	int rc = -1;

	if (d->n == 0)
		return fail(err, errlen, "IXFR without differences");
	int64_t serial = p53_rrs_soa_serial(zone);
	if (serial < 0)
		return fail(err, errlen, "the zone has no SOA to apply differences to");
	p53_ixfr_counts(d, &n_del, &n_add);
	t.mask = pow2_at_least(2 * (n_del + n_add) + 2) - 1;
	t.fmask = pow2_at_least(2 * n_del + 2) - 1;
	t.e = calloc(t.mask + 1, sizeof(*t.e));
	t.filter = calloc(t.fmask + 1, sizeof(*t.filter));
	if (t.e == NULL || t.filter == NULL) {
		fail(err, errlen, "out of memory");
		goto out;
	}
	/* Fold the steps into one set of deletions from the zone and additions. Nothing of the
	 * zone has moved yet: a failure here leaves it as it was. */
	for (size_t s = 0; s < d->n; s++) {
		const struct p53_ixfr_step *st = &d->steps[s];
		uint32_t want = s == 0 ? (uint32_t)serial : d->steps[s - 1].to;
		if (st->from != want) {
			fail(err, errlen, "IXFR difference %zu starts at serial %u, the zone is at %u", s,
			     st->from, want);
			goto out;
		}
		for (int pass = 0; pass < 2; pass++) {
			const struct p53_rrs *set = pass == 0 ? &st->del : &st->add;
			pos = 0;
			int k;
			while ((k = p53_rrs_next(set, &pos, &v)) == 1) {
				size_t klen;
				uint8_t *key = canon_key(&v, &klen);
				if (key == NULL) {
					fail(err, errlen, "IXFR record not understood (type %u)", v.type);
					goto out;
				}
				struct entry *e = lookup(&t, key, klen, key_hash(key, klen), 1);
				free(key);
				if (e == NULL) {
					fail(err, errlen, "out of memory");
					goto out;
				}
				if (pass == 1) {
					e->add = v.rr;
					e->add_len = v.rr_len;
				} else if (e->add != NULL) {
					e->add = NULL; /* added by an earlier step, deleted again */
				} else if (!e->base_del) {
					e->base_del = 1;
					filter_add(&t, owner_type_hash(&v));
				} else {
					fail(err, errlen, "IXFR deletes the same record twice (type %u)", v.type);
					goto out;
				}
			}
			if (k < 0) {
				fail(err, errlen, "malformed IXFR records");
				goto out;
			}
		}
	}
	/* One pass over the zone: what is not deleted slides down over what is; only records
	 * whose owner and type some deletion names get their canonical form made. */
	pos = 0;
	int k;
	while ((k = p53_rrs_next(zone, &pos, &v)) == 1) {
		if (filter_has(&t, owner_type_hash(&v))) {
			size_t klen;
			uint8_t *key = canon_key(&v, &klen);
			if (key == NULL) {
				fail(err, errlen, "zone record not understood (type %u)", v.type);
				goto bad;
			}
			struct entry *e = lookup(&t, key, klen, key_hash(key, klen), 0);
			free(key);
			if (e != NULL && e->base_del) {
				e->found = 1; /* every copy: records are a set (RFC 2181 §5) */
				continue;
			}
		}
		size_t at = (size_t)(v.rr - zone->buf);
		if (at != w)
			memmove(zone->buf + w, v.rr, v.rr_len);
		w += v.rr_len;
		kept++;
	}
	if (k < 0) {
		fail(err, errlen, "malformed zone records");
		goto bad;
	}
	zone->len = w;
	zone->count = kept;
	for (size_t i = 0; i <= t.mask; i++) {
		struct entry *e = &t.e[i];
		if (e->key == NULL)
			continue;
		if (e->base_del && !e->found) {
			char txt[1024];
			fail(err, errlen, "IXFR deletes a record the zone does not have: %s type %u",
			     p53_name_to_str(txt, sizeof(txt), e->key), p53_get16(e->key + p53_name_len(e->key, e->key_len)));
			goto bad;
		}
		if (e->add != NULL) {
			if (grow(zone, e->add_len) != 0) {
				fail(err, errlen, "out of memory");
				goto bad;
			}
			memcpy(zone->buf + zone->len, e->add, e->add_len);
			zone->len += e->add_len;
			zone->count++;
		}
	}
	rc = 0;
	goto out;
bad:
	p53_rrs_free(zone); /* part of it moved: nothing of it is usable */
out:
	table_free(&t);
	return rc;
}

int p53_ixfr_apply(const struct p53_rrs *base, const struct p53_ixfr *d, struct p53_rrs *out,
		   char *err, size_t errlen)
{
	p53_rrs_free(out);
	if (p53_rrs_append(out, base) != 0)
		return fail(err, errlen, "out of memory");
	int rc = p53_ixfr_apply_inplace(out, d, err, errlen);
	if (rc != 0)
		p53_rrs_free(out);
	return rc;
}

/* ---- out of an image ---- */

/* Append the records of one image RRset: its own (sigs 0) or its RRSIGs (sigs 1). */
static int rrset_out(struct p53_rrs *r, const void *img, const struct p53_image_node *nd,
		     const struct p53_image_rrset *rs, int sigs)
{
	const uint8_t *owner = p53_image_node_name(img, nd);
	const uint8_t *rd = p53_image_rdata(img, rs);
	/* The RRset's records, then the RRSIGs covering it, encoded the same way right after
	 * them (image.h): a signed zone keeps its signatures. */
	for (uint32_t k = 0; k < (uint32_t)rs->count + rs->sig_count; k++) {
		rd += P53_RR_OWNER_LEN;
		uint16_t rdlen = p53_get16(rd + 8);
		if ((k >= rs->count) == (sigs != 0)) {
			if (grow(r, nd->name_len + 10u + rdlen) != 0)
				return -1;
			memcpy(r->buf + r->len, owner, nd->name_len);
			memcpy(r->buf + r->len + nd->name_len, rd, 10u + rdlen);
			r->len += nd->name_len + 10u + rdlen;
			r->count++;
		}
		rd += 10u + rdlen;
	}
	return 0;
}

int p53_image_zones_rrs(const void *img, struct p53_rrs **out)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	size_t *need = calloc(h->n_zones ? h->n_zones : 1, sizeof(*need));

	if (need == NULL)
		return -1;
	/* Sizes first, so each buffer is allocated once (no regrowing copies of a big zone).
	 * Each zone's nodes are its range of nodes[] (image.h; garbage outside every range). */
	for (uint32_t z = 0; z < h->n_zones; z++) {
		const struct p53_image_zone *zn = p53_image_zone(img, z);
		for (uint32_t n = 0; out[z] != NULL && n < zn->n_nodes; n++) {
			const struct p53_image_node *nd = p53_image_znode(img, zn, n);
			for (uint32_t i = nd->rrsets; i < (uint32_t)nd->rrsets + nd->n_rrsets; i++) {
				const struct p53_image_rrset *rs = p53_image_zrrset(img, zn, i);
				size_t k = (size_t)rs->count + rs->sig_count;
				if (!(rs->flags & P53_RRSET_STEERED))
					need[z] += (size_t)rs->rdata_len + rs->sig_len +
						   k * nd->name_len - k * P53_RR_OWNER_LEN;
			}
		}
	}
	for (uint32_t z = 0; z < h->n_zones; z++) {
		if (out[z] != NULL && need[z] > 0 && grow(out[z], need[z]) != 0) {
			free(need);
			return -1;
		}
	}
	free(need);
	for (uint32_t z = 0; z < h->n_zones; z++) {
		const struct p53_image_zone *zn = p53_image_zone(img, z);
		if (out[z] == NULL || zn->rcode != 0)
			continue;
		for (uint32_t n = 0; n < zn->n_nodes; n++)
			if (p53_image_node_rrs(img, zn->node_base + n, out[z]) != 0)
				return -1;
	}
	return 0;
}

int p53_image_node_rrs(const void *img, uint32_t n, struct p53_rrs *r)
{
	const struct p53_image_node *nd = p53_image_node(img, n);

	/* In the compiler's order (control/zone/image_build.c, sort_recs), so compiling
	 * them again sorts almost nothing: the node's RRsets by type, with every RRSIG
	 * where type 46 goes, in the order of the types they cover (those that cover no
	 * RRset of the node, kept as an RRset of type 46, where that RRset is). A steered RRset
	 * comes from the config (steering:), not from the zone's content: every compile
	 * adds it again (p53_steer_extras_attach). */
	uint32_t end = (uint32_t)nd->rrsets + nd->n_rrsets;
	for (int part = 0; part < 3; part++) {
		for (uint32_t i = nd->rrsets; i < end; i++) {
			const struct p53_image_rrset *rs = p53_image_nrrset(img, nd, i);
			if (rs->flags & P53_RRSET_STEERED)
				continue;
			int rc = 0;
			if (part == 0 && rs->type < 46)
				rc = rrset_out(r, img, nd, rs, 0);
			else if (part == 1 && rs->sig_count > 0)
				rc = rrset_out(r, img, nd, rs, 1);
			else if (part == 1 && rs->type == 46) /* RRSIGs covering no RRset */
				rc = rrset_out(r, img, nd, rs, 0);
			else if (part == 2 && rs->type > 46)
				rc = rrset_out(r, img, nd, rs, 0);
			if (rc != 0)
				return -1;
		}
	}
	return 0;
}
