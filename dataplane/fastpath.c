/*
 * The fast path; see fastpath.h. Each check below names the general responder's step
 * (answer.c) that it stands for, so the two stay byte-identical.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "dataplane/csum.h"
#include "dataplane/dnssec.h"
#include "dataplane/edns_opt.h"
#include "dataplane/fastpath.h"
#include "dataplane/image.h"
#include "dataplane/mbuf_read.h"
#include "dataplane/name.h"
#include "dataplane/qcache.h"
#include "dataplane/steer.h"
#include "dataplane/wire.h"

#define OPT_LEN 11

/* Which steps of the burst path ran (fastpath.h p53_fast_step), counted only in a build that
 * defines P53_FAST_STEPS (tests/fuzz/fuzz_burst.c compiles this file so, to prove its frame
 * sequences reach each step); otherwise nothing, and no instruction. */
#ifdef P53_FAST_STEPS
uint64_t p53_fast_steps[P53_FAST_STEP__MAX];
#define STEP(s) (p53_fast_steps[P53_FAST_STEP_##s]++)
#else
#define STEP(s) ((void)0)
#endif

/* The offsets of the fast shape's frames (Ethernet II without a tag, IPv4 without options,
 * IPv6 without extension headers): defined once, set in `p53_pkt` by the parse and taken as
 * constants by p53_fast_frame(). */
enum {
	L3_OFF = 14,                    /* the IP header, after Ethernet II */
	V4_L4_OFF = L3_OFF + 20,        /* UDP */
	V4_DNS_OFF = V4_L4_OFF + 8,     /* the DNS message */
	V6_L4_OFF = L3_OFF + 40,
	V6_DNS_OFF = V6_L4_OFF + 8,
};

/* answer.c size_limit() on UDP (tcp_limit 0): the response's size limit, OPT included;
 * `ours`: p53_our_payload(). */
static inline uint16_t limit_of(uint16_t ours, const struct p53_query *q, uint16_t cap)
{
	uint16_t max = P53_UDP_MIN;

	if (q->edns) {
		max = q->edns_payload < P53_UDP_MIN ? P53_UDP_MIN : q->edns_payload;
		if (max > ours)
			max = ours;
	}
	return max > cap ? cap : max;
}

/* The closest encloser remembered before any was found (p53_fast_nx): no name has 0 bytes. */
static const struct p53_image_node no_node = { .name_len = 0 };

int p53_fast_ctx_init(struct p53_fast_ctx *c, const uint8_t *mac, const struct p53_pkt_addrs *addrs,
		      const void *img, const struct p53_answer_conf *conf,
		      struct p53_answer_stats *st)
{
	/* fast_answer()'s first check, made here once: no image, or TCP's size limit */
	if (img == NULL || conf->tcp_limit != 0)
		return -EINVAL;
	c->mac = mac;
	c->addrs = addrs;
	c->img = img;
	c->conf = conf;
	c->st = st;
	c->ours = p53_our_payload(conf->edns_max_payload);
	c->qc = NULL;
	c->gen = 0;
	c->nx_last.ce = &no_node;
	c->nx_last.qlen = 0;
	c->nx_last.flen = 0;
	c->nx = &c->nx_last;
	return 0;
}

void p53_fast_ctx_nx(struct p53_fast_ctx *c, struct p53_fast_nx *nx)
{
	uint64_t gen = p53_image_hdr(c->img)->generation;

	if (gen == 0)
		return;
	if (nx->img != c->img || nx->gen != gen || nx->ours != c->ours || nx->ce == NULL) {
		nx->img = c->img;
		nx->gen = gen;
		nx->ours = c->ours;
		nx->ce = &no_node;
		nx->qlen = 0;
		nx->flen = 0;
	}
	c->nx = nx;
}

void p53_fast_ctx_cache(struct p53_fast_ctx *c, struct p53_qcache *qc)
{
	c->gen = p53_image_hdr(c->img)->generation;
	c->qc = c->gen != 0 ? qc : NULL;
}

/* The sum (RFC 1071, from an even offset) of the OPT put_opt() writes without options, after
 * `odd` = 1 bytes of an odd length: of its 16-bit words as loaded (little-endian), 00 00 |
 * 29 P | P' 00 | 00 D | 00 00 | 00 (P P': our payload size, D: DO), three are not 0. */
static inline uint64_t opt_sum(uint16_t ours, int dnssec, unsigned int odd)
{
	uint64_t s = 0x29u + (uint64_t)ours + (dnssec ? 0x8000u : 0u);

	return odd ? p53_csum_odd(s) : s;
}

/* The sum (from an even offset) of 16 bytes: one A record as the answer writes it. */
static inline uint64_t rr16_sum(const uint8_t *p)
{
	uint64_t a, b;

	memcpy(&a, p, 8);
	memcpy(&b, p + 8, 8);
	return p53_csum_addc(a, b);
}

/*
 * answer.c put_name() with the apex as the hint, for a name whose suffix is the apex: its
 * labels before the apex, then a pointer to the apex in the question. Returns the bytes
 * written at `out`, or -1 when the name does not end in the apex (the general path then
 * searches the compression table).
 */
static inline int apex_name(uint8_t *out, const uint8_t *name, const uint8_t *apex,
			    uint8_t apex_len, uint16_t apex_ptr, int *len)
{
	size_t total = 0;
	const uint8_t *t;

	for (t = name; *t != 0; t += 1 + *t)
		total += 1u + *t;
	*len = (int)total + 1;
	total++;
	for (t = name; total > apex_len; t += 1 + *t)
		total -= 1u + *t;
	if (total != apex_len)
		return -1;
	if (memcmp(t, apex, apex_len) != 0)
		for (uint8_t i = 0; i < apex_len; i++)
			if (p53_lower(t[i]) != apex[i])
				return -1;
	size_t prefix = (size_t)(t - name);
	memcpy(out, name, prefix);
	p53_put16(out + prefix, (uint16_t)(0xc000 | apex_ptr));
	return (int)prefix + 2;
}

/*
 * The zone's SOA as answer.c negative() writes it for DO=0 (RFC 2308 §3, §5): owner a pointer
 * to the apex in the question (`ptr`), the negative TTL, MNAME and RNAME compressed to the
 * apex. Writes at `out` (room for two names and more); returns its length, or 0 when a name
 * does not end in the apex (the general path then searches its table). *mp and *rp: where the
 * MNAME and RNAME pointers are in it.
 */
static int soa_rr(const void *img, uint32_t zone, uint16_t ptr, uint8_t *out, int *mp, int *rp)
{
	const struct p53_image_zone *z = p53_image_zone(img, zone);
	const struct p53_image_node *apex = p53_image_znode(img, z, z->apex);
	const struct p53_image_rrset *rs = p53_image_zrrset(img, z, z->soa);
	const uint8_t *an = p53_image_node_name(img, apex);

	if (rs->count != 1 || rs->adds != P53_NONE)
		return 0;
	const uint8_t *rd = p53_image_rdata(img, rs) + P53_RR_OWNER_LEN;
	uint16_t rdlen = p53_get16(rd + 8);
	int ml, rl;
	p53_put16(out, (uint16_t)(0xc000 | ptr));
	memcpy(out + 2, rd, 10);
	p53_put32(out + 2 + 4, z->neg_ttl);
	int mw = apex_name(out + 12, rd + 10, an, apex->name_len, ptr, &ml);
	if (mw < 0)
		return 0;
	int rw = apex_name(out + 12 + mw, rd + 10 + ml, an, apex->name_len, ptr, &rl);
	if (rw < 0 || ml + rl + 20 != rdlen)
		return 0;
	memcpy(out + 12 + mw + rw, rd + 10 + ml + rl, 20);
	int n = 12 + mw + rw + 20;
	p53_put16(out + 2 + 8, (uint16_t)(n - 12));
	*mp = 12 + mw - 2;
	*rp = 12 + mw + rw - 2;
	return n;
}

size_t p53_fast_neg_count(const void *img)
{
	return img != NULL ? p53_image_hdr(img)->n_zones : 0;
}

void p53_fast_neg_build(const void *img, struct p53_fast_neg *t)
{
	uint8_t rr[P53_NAME_MAXLEN * 2 + 2 + 10 + 20 + 8];

	for (uint32_t i = 0; i < p53_fast_neg_count(img); i++) {
		int mp, rp, n = 0;
		memset(&t[i], 0, sizeof(t[i]));
		if (p53_image_zone(img, i)->soa != P53_NONE)
			n = soa_rr(img, i, P53_DNS_HDR_LEN, rr, &mp, &rp);
		if (n <= 0 || n > (int)sizeof(t[i].bytes))
			continue;       /* written per query instead */
		memcpy(t[i].bytes, rr, (size_t)n);
		t[i].len = (uint8_t)n;
		t[i].mptr = (uint8_t)mp;
		t[i].rptr = (uint8_t)rp;
		t[i].labels = p53_image_znode(img, p53_image_zone(img, i), p53_image_zone(img, i)->apex)->labels;
		t[i].mult = (uint16_t)(256u + ((mp & 1) ? 1u : 256u) + ((rp & 1) ? 1u : 256u));
		/* The sum with the three pointers as 0 (soa() adds them per query). */
		memset(rr, 0, 2);
		memset(rr + mp, 0, 2);
		memset(rr + rp, 0, 2);
		t[i].sum = p53_csum_fold(p53_csum_add(rr, (size_t)n, 0));
		if (n + OPT_LEN > (int)sizeof(t[i].bytes))
			continue;
		/* The OPT put_opt() writes for DO=0 without options, its payload size as 0:
		   00 | 00 29 | 00 00 | 00 | 00 | 00 00 | 00 00. The payload size's bytes are at
		   n + 3: a word of the sum as they are at an even offset, swapped at an odd one. */
		uint8_t *o = t[i].bytes + n;
		memset(o, 0, OPT_LEN);
		p53_put16(o + 1, P53_T_OPT);
		memset(rr + n, 0, OPT_LEN);
		p53_put16(rr + n + 1, P53_T_OPT);
		t[i].olen = (uint8_t)(n + OPT_LEN);
		t[i].osum = p53_csum_fold(p53_csum_add(rr, (size_t)n + OPT_LEN, 0));
		t[i].omult = (n + 3) & 1 ? 1 : 256;
	}
}

#define SOA_SUM (1ull << 16)
#define SOA_OPT (1ull << 17)
#define SOA_SHIFT 18
/* soa()'s `pl`: the write position, the size limit, the zone. */
#define SOA_PL(pos, limit, zone) ((uint32_t)(pos) | (uint32_t)(limit) << 16 | (uint64_t)(zone) << 32)

/* answer.c negative() for DO=0: the record written here (the zone has no template, or less
 * room than the template's fixed copy needs). Returns as soa(), with no sum. */
static __attribute__((noinline)) uint64_t soa_slow(const void *img, const struct p53_query *q,
						   uint8_t *msg, uint64_t pl)
{
	uint32_t zone = (uint32_t)(pl >> 32);
	uint16_t pos = (uint16_t)pl, limit = (uint16_t)(pl >> 16);
	const struct p53_image_zone *z = p53_image_zone(img, zone);
	const struct p53_image_node *apex = p53_image_znode(img, z, z->apex);
	uint8_t rr[P53_NAME_MAXLEN * 2 + 2 + 10 + 20 + 8];
	int mp, rp, n;

	if (apex->labels > q->qname_labels)
		return 0;
	uint16_t ptr = (uint16_t)(P53_DNS_HDR_LEN + q->label_off[q->qname_labels - apex->labels]);
	n = soa_rr(img, zone, ptr, rr, &mp, &rp);
	if (n == 0 || (uint32_t)pos + n > limit)
		return 0;
	memcpy(msg + pos, rr, (size_t)n);
	return (uint16_t)(pos + n);
}

/*
 * answer.c negative() for DO=0: the zone's template with the apex pointer patched in, or the
 * record written by soa_slow(). `pl`: SOA_PL(). `ours`: our payload size when the query has
 * EDNS, DO=0 and no ECS, else 0: then the OPT put_opt() writes may come from the template
 * too. Returns the new write position in the low 16 bits (0 to decline) and, when the sum of
 * what it wrote is known (a template), SOA_SUM with that sum above bit SOA_SHIFT; SOA_OPT:
 * the OPT was written (the position is after it, the sum counts it). Six arguments in
 * registers, one return value, the slow way a tail call: the template's path saves no
 * register but the ones it uses (not cloned: a clone took the zone on the stack).
 */
static __attribute__((noinline, noclone)) uint64_t soa(const void *img,
						       const struct p53_answer_conf *conf,
						       const struct p53_query *q, uint8_t *msg,
						       uint64_t pl, uint32_t ours)
{
	uint32_t zone = (uint32_t)(pl >> 32);
	const struct p53_fast_neg *t = conf->neg + zone;
	uint32_t pos = (uint16_t)pl, limit = (uint16_t)(pl >> 16);

	/* The copy is of a fixed size (inline moves): room for all of `bytes`, which holds the
	   record (len) and the OPT (olen) */
	if (__builtin_expect(zone >= conf->n_neg || t->len == 0 || pos + sizeof(t->bytes) > limit, 0))
		return soa_slow(img, q, msg, pl);
	/* The apex is the question's ancestor (the node's zone's, the node's the question's or
	   its encloser): no more labels than it, t->labels <= q->qname_labels. */
	uint16_t ptr = (uint16_t)(0xc000 | (P53_DNS_HDR_LEN + q->label_off[q->qname_labels - t->labels]));
	uint8_t *o = msg + pos;
	memcpy(o, t->bytes, sizeof(t->bytes));
	p53_put16(o, ptr);
	p53_put16(o + t->mptr, ptr);
	p53_put16(o + t->rptr, ptr);
	/* The template's sum and the three pointers (their bytes swapped at an even offset:
	   times 256 modulo 0xffff, RFC 1071). */
	uint64_t ptrs = (uint64_t)ptr * t->mult;
	if (ours != 0 && t->olen != 0) {
		/* The OPT the copy wrote, our payload size put in it. */
		p53_put16(o + t->len + 3, (uint16_t)ours);
		uint64_t sum = t->osum + ptrs + (uint64_t)ours * t->omult;
		return (uint16_t)(pos + t->olen) | SOA_SUM | SOA_OPT | sum << SOA_SHIFT;
	}
	return (uint16_t)(pos + t->len) | SOA_SUM | (t->sum + ptrs) << SOA_SHIFT;
}

/*
 * answer.c put_denial() for DO=1: the NSEC or NSEC3 RRset of each node of a proof (dnssec.c),
 * its RRSIGs after it. put_name() with the apex hint writes the first owner as its labels
 * above the apex and a pointer to the apex in the question (`aptr`; the apex itself: the
 * pointer alone); the later records point at that owner. Returns the new write position, or
 * 0 to decline (it does not fit: TC is the general path's). *ns: plus the records written.
 */
static uint16_t put_proof(const void *img, uint32_t zone, const struct p53_denial *d,
			  uint8_t *msg, uint16_t pos, uint16_t limit, uint16_t aptr, uint16_t *ns)
{
	const struct p53_image_zone *z = p53_image_zone(img, zone);
	const struct p53_image_node *apex = p53_image_znode(img, z, z->apex);

	for (uint8_t i = 0; i < d->n; i++) {
		uint32_t rsi = p53_dnssec_rrset(img, zone, d->node[i]);
		if (rsi == P53_NONE)
			continue;
		const struct p53_image_node *on = p53_image_znode(img, z, d->node[i]);
		const struct p53_image_rrset *r = p53_image_zrrset(img, z, rsi);
		const uint8_t *name = p53_image_node_name(img, on);
		/* The labels above the apex (put_name()'s hint_suffix(): at a label boundary); a
		   node of the zone ends in its apex. */
		size_t prefix = 0;
		for (uint8_t k = on->labels; k > apex->labels; k--)
			prefix += 1u + name[prefix];
		if (on->zone != zone || on->labels < apex->labels ||
		    prefix + apex->name_len != on->name_len || pos >= 0x4000)
			return 0;
		uint32_t len = (uint32_t)r->rdata_len + r->sig_len;
		uint16_t count = (uint16_t)(r->count + r->sig_count);
		if ((uint32_t)pos + prefix + len > limit)
			return 0;
		uint8_t *o = msg + pos;
		memcpy(o, name, prefix);
		memcpy(o + prefix, p53_image_rdata(img, r), len);
		p53_put16(o + prefix, aptr);
		uint16_t self = prefix != 0 ? (uint16_t)(0xc000 | pos) : aptr;
		uint32_t off = prefix + P53_RR_OWNER_LEN + 10 + p53_get16(o + prefix + P53_RR_OWNER_LEN + 8);
		for (uint16_t k = 1; k < count; k++) {
			p53_put16(o + off, self);
			off += P53_RR_OWNER_LEN + 10u + p53_get16(o + off + P53_RR_OWNER_LEN + 8);
		}
		pos = (uint16_t)(pos + prefix + len);
		*ns = (uint16_t)(*ns + count);
	}
	return pos;
}

/*
 * answer.c negative() for DO=1 in a signed zone (RFC 4035 §3.1.3, RFC 5155 §7.2): the SOA as
 * soa() writes it, its RRSIGs with the owner pointer and the negative TTL (RFC 4034 §3: an
 * RRSIG's TTL is its RRset's), then the proof: a name error below closest encloser `at`, or
 * no data at node `at`. Returns the new write position, or 0 to decline. *ns: the records.
 */
static __attribute__((noinline)) uint16_t signed_negative(const void *img,
							  const struct p53_answer_conf *conf,
							  const struct p53_query *q, uint8_t *msg,
							  uint16_t pos, uint16_t limit, uint32_t zone,
							  uint32_t at, int nxdomain, uint16_t *ns)
{
	const struct p53_image_zone *z = p53_image_zone(img, zone);
	const struct p53_image_node *apex = p53_image_znode(img, z, z->apex);
	const struct p53_image_rrset *rs = p53_image_zrrset(img, z, z->soa);

	pos = (uint16_t)soa(img, conf, q, msg, SOA_PL(pos, limit, zone), 0);
	if (pos == 0 || (uint32_t)pos + rs->sig_len > limit)
		return 0;
	uint16_t aptr = (uint16_t)(0xc000 | (P53_DNS_HDR_LEN + q->label_off[q->qname_labels - apex->labels]));
	const uint8_t *sig = p53_image_rdata(img, rs) + rs->rdata_len;
	uint8_t *o = msg + pos;
	memcpy(o, sig, rs->sig_len);
	for (uint16_t i = 0, off = 0; i < rs->sig_count; i++) {
		p53_put16(o + off, aptr);
		p53_put32(o + off + P53_RR_OWNER_LEN + 4, z->neg_ttl);
		off = (uint16_t)(off + P53_RR_OWNER_LEN + 10 + p53_get16(o + off + P53_RR_OWNER_LEN + 8));
	}
	pos = (uint16_t)(pos + rs->sig_len);
	*ns = (uint16_t)(1 + rs->sig_count);
	if (!(z->dnssec & (P53_ZONE_NSEC | P53_ZONE_NSEC3)))
		return pos;
	struct p53_dname nm = { .name = q->lname, .loff = q->label_off, .len = q->qname_len,
				.labels = q->qname_labels, .hash = q->hash };
	struct p53_denial d = { .n = 0 };
	if (nxdomain)
		p53_dnssec_nxdomain(img, zone, at, &nm, &d);
	else
		p53_dnssec_nodata(img, zone, at, P53_NONE, &nm, &d);
	return put_proof(img, zone, &d, msg, pos, limit, aptr, ns);
}

/* answer.c p53_answer_parsed() after a wildcard answer with DO=1 (RFC 4035 §3.1.3.3, RFC 5155
 * §7.2.6): the NSEC or NSEC3 covering the name (its next closer name) below `ce`. */
static __attribute__((noinline)) uint16_t wildcard_proof(const void *img, const struct p53_query *q,
							 uint8_t *msg, uint16_t pos, uint16_t limit,
							 uint32_t zone, uint32_t ce, uint16_t *ns)
{
	const struct p53_image_zone *z = p53_image_zone(img, zone);
	const struct p53_image_node *apex = p53_image_znode(img, z, z->apex);
	struct p53_dname nm = { .name = q->lname, .loff = q->label_off, .len = q->qname_len,
				.labels = q->qname_labels, .hash = q->hash };
	struct p53_denial d = { .n = 0 };

	if (!(z->dnssec & (P53_ZONE_NSEC | P53_ZONE_NSEC3)))
		return pos;
	d.node[0] = p53_dnssec_wildcard(img, zone, ce, &nm);
	d.n = d.node[0] != P53_NONE;
	uint16_t aptr = (uint16_t)(0xc000 | (P53_DNS_HDR_LEN + q->label_off[q->qname_labels - apex->labels]));
	return put_proof(img, zone, &d, msg, pos, limit, aptr, ns);
}

#define CTAB_MAX  48    /* answer.c: names remembered for compression */
#define MAX_ADDED 32    /* answer.c: distinct nodes in the additional section */
#define MAX_NS    16    /* NS records a fast referral writes; more: general */

/* Is `a` (zone-file case, `n` bytes at label boundaries) equal to canonical `b`? Length bytes
 * (<= 63) never equal a lowered letter, so equal bytes mean equal labels. */
static inline int same_ci(const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p53_lower(a[i]) != b[i])
			return 0;
	return 1;
}

/* Case-insensitive equality of two names' bytes (answer.c name_at_equal on flat names). */
static inline int eq_ci(const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p53_lower(a[i]) != p53_lower(b[i]))
			return 0;
	return 1;
}

/* A name written in full or in part, as answer.c's compression table holds it. */
struct far {
	uint16_t off;           /* where its first label is in the message */
	uint8_t len;            /* the name's length (the rest may be a pointer) */
	const uint8_t *name;    /* its bytes, uncompressed */
};

/*
 * answer.c put_name() for an NS target that does not end in the cut: its longest suffix
 * already in the table (the question's suffixes, root-most first, then names written before;
 * targets that end in the cut cannot equal it), else the whole name. Writes at `o`, which is
 * message offset `at`; returns the bytes written and adds the labels written to `fars`.
 */
static int far_name(const struct p53_query *q, const uint8_t *name, uint8_t *o, uint16_t at,
		    struct far *fars, unsigned int *n_far, unsigned int *nc)
{
	int len = 0;
	const uint8_t *s;

	for (s = name; *s != 0; s += 1 + *s)
		len += 1 + *s;
	len++;
	uint16_t ptr = 0;
	for (s = name; *s != 0 && ptr == 0; s += 1 + *s) {
		size_t sl = (size_t)len - (size_t)(s - name);
		int first = q->qname_labels > CTAB_MAX ? q->qname_labels - CTAB_MAX : 0;
		for (int i = q->qname_labels - 1; i >= first && ptr == 0; i--)
			if ((size_t)(q->qname_len - q->label_off[i]) == sl &&
			    eq_ci(q->lname + q->label_off[i], s, sl))
				ptr = (uint16_t)(P53_DNS_HDR_LEN + q->label_off[i]);
		for (unsigned int f = 0; f < *n_far && ptr == 0; f++)
			if (fars[f].len == sl && eq_ci(fars[f].name, s, sl))
				ptr = fars[f].off;
		if (ptr != 0)
			break;
	}
	size_t prefix = (size_t)(s - name);
	for (const uint8_t *p = name; p < s; p += 1 + *p) {
		if (*n_far < CTAB_MAX && (*nc)++ < CTAB_MAX)
			fars[(*n_far)++] = (struct far){ (uint16_t)(at + (p - name)),
							 (uint8_t)(len - (p - name)), p };
	}
	memcpy(o, name, prefix);
	if (ptr != 0) {
		p53_put16(o + prefix, (uint16_t)(0xc000 | ptr));
		return (int)prefix + 2;
	}
	o[prefix] = 0;
	return (int)prefix + 1;
}

/*
 * answer.c referral() and additionals() for DO=0 (RFC 1034 §4.3.2 step 3b, RFC 9471), when
 * every NS target ends in the cut and every glue name is one of them: NS records owned by a
 * pointer to the cut in the question, each target its labels and a pointer to the cut; glue
 * owners one pointer to the target in the NS RDATA (what answer.c's before_hint() finds).
 * Whatever else (targets outside the cut, too many names for the compression table,
 * anything that does not fit) is declined. Returns the new position, or 0.
 */
static __attribute__((noinline)) uint16_t referral(const void *img, const struct p53_query *q, uint8_t *msg, uint16_t pos,
			 uint16_t limit, const struct p53_image_node *cut, uint16_t *ns, uint16_t *ar)
{
	uint32_t nsi = p53_image_node_rrset(img, cut, P53_T_NS);
	const uint8_t *cn = p53_image_node_name(img, cut);
	uint16_t at[MAX_NS];                    /* where each target's labels went */
	uint8_t plen[MAX_NS];                   /* and how many bytes of labels */
	struct far fars[CTAB_MAX];              /* labels of targets outside the cut */
	unsigned int n_far = 0;

	if (nsi == P53_NONE || cut->labels > q->qname_labels)
		return 0;
	const struct p53_image_zone *z = p53_image_zone(img, cut->zone);
	const struct p53_image_rrset *rs = p53_image_zrrset(img, z, nsi);
	if (rs->count > MAX_NS)
		return 0;
	uint16_t cptr = (uint16_t)(P53_DNS_HDR_LEN + q->label_off[q->qname_labels - cut->labels]);
	const uint8_t *rd = p53_image_rdata(img, rs);
	unsigned int nc = q->qname_labels;      /* the question's labels are in the table first */
	for (uint16_t i = 0; i < rs->count; i++) {
		rd += P53_RR_OWNER_LEN;
		uint16_t rdlen = p53_get16(rd + 8);
		uint8_t *o = msg + pos;
		int nl;
		if ((uint32_t)pos + 12 + rdlen + 1 > limit)
			return 0;
		p53_put16(o, (uint16_t)(0xc000 | cptr));
		memcpy(o + 2, rd, 10);
		int w = apex_name(o + 12, rd + 10, cn, cut->name_len, cptr, &nl);
		if (w >= 0) {
			at[i] = (uint16_t)(pos + 12);
			plen[i] = (uint8_t)(w - 2);
			for (int k = 0; k < w - 2; k += 1 + o[12 + k])
				nc++;
		} else {
			w = far_name(q, rd + 10, o + 12, (uint16_t)(pos + 12), fars, &n_far, &nc);
			nl = rdlen;
			plen[i] = 0;    /* no glue can be owned by it */
		}
		if (nl != rdlen || (uint32_t)pos + 12 + w > limit)
			return 0;
		p53_put16(o + 10, (uint16_t)w);
		pos = (uint16_t)(pos + 12 + w);
		rd += 10u + rdlen;
	}
	/* Every target's labels must have gone into answer.c's table for its glue to find them. */
	if (nc > CTAB_MAX)
		return 0;
	*ns = rs->count;
	if (rs->adds == P53_NONE)
		return pos;

	const uint32_t *list = p53_image_adds(img, rs->adds);
	uint32_t count = P53_ADDS_COUNT(list[0]), req = P53_ADDS_REQUIRED(list[0]);
	if (count > MAX_ADDED)
		return 0;
	for (uint32_t i = 1; i <= count; i++) {
		uint32_t ni = list[i], k;
		for (k = 1; k < i && list[k] != ni; k++)
			;
		if (k < i)
			continue;
		const struct p53_image_node *n = p53_image_znode(img, z, ni);
		const uint8_t *nm = p53_image_node_name(img, n);
		if (n->name_len < cut->name_len ||
		    memcmp(nm + n->name_len - cut->name_len, cn, cut->name_len) != 0)
			return 0;
		/* The owner: the first target in the table whose labels (from one of its labels
		 * on) are the glue name's labels before the cut; the cut itself when none. */
		size_t gl = (size_t)(n->name_len - cut->name_len);
		uint16_t optr = 0;
		if (gl == 0)
			optr = cptr;
		for (uint16_t t = 0; t < rs->count && optr == 0; t++) {
			const uint8_t *b = msg + at[t];
			for (int j = 0; j < plen[t]; j += 1 + b[j])
				if ((size_t)(plen[t] - j) == gl && same_ci(b + j, nm, gl)) {
					optr = (uint16_t)(at[t] + j);
					break;
				}
		}
		if (optr == 0)
			return 0;
		for (int tt = 0; tt < 2; tt++) {
			uint32_t gi = p53_image_node_rrset(img, n, tt == 0 ? P53_T_A : P53_T_AAAA);
			if (gi == P53_NONE)
				continue;
			const struct p53_image_rrset *g = p53_image_zrrset(img, z, gi);
			if ((uint32_t)pos + g->rdata_len > limit) {
				if (i <= req)
					return 0;       /* RFC 9471 §3: TC=1, general */
				return pos;             /* optional glue left out, as answer.c */
			}
			uint8_t *o = msg + pos;
			memcpy(o, p53_image_rdata(img, g), g->rdata_len);
			/* Each record's owner: a pointer to the target (pre-encoded as C0 0C). */
			for (uint32_t off = 0; off < g->rdata_len;
			     off += P53_RR_OWNER_LEN + 10u + p53_get16(o + off + P53_RR_OWNER_LEN + 8))
				p53_put16(o + off, (uint16_t)(0xc000 | optr));
			pos = (uint16_t)(pos + g->rdata_len);
			*ar = (uint16_t)(*ar + g->count);
		}
	}
	return pos;
}

/*
 * Referral templates (fastpath.h). The table: a power-of-two array of slots keyed by the cut's
 * node index (linear probing), then the templates. A template: referral()'s bytes for a
 * question that is the cut itself, and a list of where the compression pointers are in them.
 * Every pointer points into the question (at the cut or one of its ancestors) or into the
 * referral itself, so for a question with L bytes of labels before the cut every pointer is
 * the template's plus L (the cut is L bytes further in the question, and the referral, which
 * starts right after the question, too): a copy and one add per pointer.
 */
struct ref_slot {
	uint32_t node;          /* P53_NONE: empty */
	uint32_t off;           /* the template, from the table's start */
};

struct ref_tab {
	uint32_t mask;
	uint32_t n;
	struct ref_slot slot[];
};

struct ref_tpl {
	uint16_t len;           /* bytes written */
	uint16_t need;          /* the size limit referral() needs past the question to write them */
	uint16_t ns, ar;        /* records in the authority and additional sections */
	uint8_t nc;             /* names it adds to answer.c's compression table */
	uint8_t n_patch;
	uint16_t sum;           /* RFC 1071 sum of its bytes from an even offset, as they are */
	uint32_t mult;          /* what L adds to the sum: 256 per pointer at an even offset,
				   1 per pointer at an odd one (RFC 1071: a byte swap of a
				   16-bit word is a multiplication by 256 modulo 0xffff) */
	/* ref_answer()'s masked copy (REF_MASKED): */
	uint32_t w[2];          /* len | ns << 16 | ar << 32: its result less the position */
	uint16_t need128;       /* need, at least 128 (the copy's fixed size) */
	uint16_t lcap;          /* L below it: no pointer's low byte carries (0: never) */
	uint8_t lab_max;        /* CTAB_MAX - nc: the question's labels at most */
	uint8_t hi_plain;       /* no pointer past its first 64 bytes: those copied as they are */
	uint16_t base;          /* P53_DNS_HDR_LEN + the cut's name length + 4: pos - base = L */
	uint16_t patch[];       /* where each pointer is; the bytes follow, then the mask
				   (0xff at each pointer's low byte, 0 elsewhere) */
};

#define REF_TPL_MAX  1024u      /* bytes of a template at most: a bigger referral is written */
#define REF_PAD      128u       /* bytes after the last template: the copies read 128 */

/* referral() from a template: the same bytes, or 0 when there is none for this cut or it does
 * not stand for what referral() would write here. Returns the new position in the low 16 bits
 * and the number of additional records above them (32..47); *ts the sum of what it wrote. */
static inline __attribute__((always_inline)) uint64_t ref_put(const struct ref_tab *t, uint32_t node,
						  const struct p53_query *q, uint8_t *msg,
						  uint32_t pos_limit, const struct p53_image_node *cut,
						  uint64_t *ts)
{
	uint32_t i = node & t->mask;
	const struct ref_slot *sl;
	uint16_t pos = (uint16_t)pos_limit, limit = (uint16_t)(pos_limit >> 16);

	for (;; i = (i + 1) & t->mask) {
		sl = &t->slot[i];
		if (sl->node == node)
			break;
		if (sl->node == P53_NONE)
			return 0;
	}
	const struct ref_tpl *p = (const struct ref_tpl *)((const uint8_t *)t + sl->off);
	/* L: the question's bytes before the cut; the referral starts L bytes after the
	   template's start too (right after the question). */
	uint32_t L = (uint32_t)q->qname_len - cut->name_len;
	if (cut->labels > q->qname_labels || q->qname_labels + p->nc > CTAB_MAX ||
	    (uint32_t)pos + p->need > limit || (uint32_t)pos + p->len > 0x3fff ||
	    pos != P53_DNS_HDR_LEN + q->qname_len + 4)
		return 0;
	uint8_t *o = msg + pos;
	const uint8_t *b = (const uint8_t *)(p->patch + p->n_patch);
	if ((uint32_t)pos + 128 <= limit && p->len <= 128) {
		/* a fixed size: inline moves (referral() may write up to the limit) */
		memcpy(o, b, 64);
		if (p->len > 64)
			memcpy(o + 64, b + 64, 64);
	} else {
		memcpy(o, b, p->len);
	}
	/* n_patch and the list in locals: the stores below may alias them otherwise */
	const uint16_t *pt = p->patch, *pe = pt + p->n_patch;
	for (; pt < pe; pt++) {
		uint8_t *at = o + *pt;
		p53_put16(at, (uint16_t)(p53_get16(at) + L));
	}
	*ts = p->sum + (uint64_t)L * p->mult;
	return (uint64_t)(uint16_t)(pos + p->len) | (uint64_t)p->ns << 16 | (uint64_t)p->ar << 32;
}

/* An upper bound of a template's size for cut node `n` (0: it gets none). */
static size_t ref_bound(const void *img, const struct p53_image_node *n)
{
	if (!(n->flags & P53_NODE_CUT))
		return 0;
	uint32_t nsi = p53_image_node_rrset(img, n, P53_T_NS);
	if (nsi == P53_NONE)
		return 0;
	const struct p53_image_rrset *rs = p53_image_nrrset(img, n, nsi);
	if (rs->count > MAX_NS)
		return 0;
	size_t len = rs->rdata_len, recs = 2u * rs->count;
	if (rs->adds != P53_NONE) {
		const uint32_t *list = p53_image_adds(img, rs->adds);
		uint32_t count = P53_ADDS_COUNT(list[0]);
		if (count > MAX_ADDED)
			return 0;
		for (uint32_t i = 1; i <= count; i++) {
			const struct p53_image_node *g = p53_image_nnode(img, n, list[i]);
			for (int tt = 0; tt < 2; tt++) {
				uint32_t gi = p53_image_node_rrset(img, g, tt == 0 ? P53_T_A : P53_T_AAAA);
				if (gi == P53_NONE)
					continue;
				len += p53_image_nrrset(img, n, gi)->rdata_len;
				recs += p53_image_nrrset(img, n, gi)->count;
			}
		}
	}
	if (len > REF_TPL_MAX || recs > 255)
		return 0;
	return (sizeof(struct ref_tpl) + 2 * recs + 2 * len + 3) & ~(size_t)3;
}

/*
 * After the slots, the table lists every cut node of its image, in node order (a count, how
 * many had a bound, up to P53_FAST_REF_MAX, then the indices; read by the control thread only): the nodes the table of a patch of that image
 * looks at. The templates follow it.
 *
 * The nodes that may be cuts: every node of a zone's range (image.h, p53_image_zone.node_base;
 * the entries outside every range are garbage a splice or a patch left, whose stale flags and
 * indices relative to where their zone's range was are never read), or for an image patched
 * from prev (whose table is prev_buf): prev's cuts, then, zone by zone in node order, the part
 * of its range prev lacks (after prev's range, in the zone's room or at the tables' ends, or
 * the whole range when it moved: ref_new_from). A node that was not a cut in prev becomes one
 * only by gaining an NS RRset, whose header a patch appends after the zone's RRset range (never
 * in place): when one is appended that is not a zone apex's, every node again.
 */
struct ref_range {
	uint32_t base, n, z;    /* a zone's node_base and n_nodes, the zone */
};

struct ref_iter {
	const void *img;
	const void *prev;       /* NULL: every node; else ... */
	const uint32_t *list;   /* prev's cuts, then ... */
	uint32_t n_list, k;
	uint32_t next, end;     /* ... the nodes of one zone's range (its part prev lacks), then ... */
	struct ref_range *r;    /* ... of the next ones, in node order (r[kr] next), or NULL */
	uint32_t n_r, kr;       /* n_r: the zones */
};

static const uint32_t *ref_cuts(const struct ref_tab *t)
{
	return (const uint32_t *)&t->slot[t->mask + 1];
}

/* Whether RRset `i` is a zone apex's (a patch appends the apex's RRsets with its SOA). */
static int ref_apex_ns(const void *img, uint32_t i)
{
	for (uint32_t z = 0; z < p53_image_hdr(img)->n_zones; z++) {
		const struct p53_image_zone *zn = p53_image_zone(img, z);
		const struct p53_image_node *a = p53_image_znode(img, zn, zn->apex);
		uint32_t first = zn->rrset_base + a->rrsets;
		if (!(a->flags & P53_NODE_CUT) && i >= first && i - first < a->n_rrsets)
			return 1;
	}
	return 0;
}

/* Where zone z's part of img's nodes[] (rrsets[] when `rrsets`) that prev lacks starts: after
 * prev's range when the range starts where it did (a patch appends into the zone's room or at
 * the tables' ends), else at the range's start (the zone moved: image_patch.c zone_to_end). */
static uint32_t ref_new_from(const void *img, const void *prev, uint32_t z, int rrsets)
{
	const struct p53_image_zone *zn = p53_image_zone(img, z), *pz = p53_image_zone(prev, z);

	if (rrsets)
		return zn->rrset_base == pz->rrset_base ? pz->rrset_base + pz->n_rrsets : zn->rrset_base;
	return zn->node_base == pz->node_base ? pz->node_base + pz->n_nodes : zn->node_base;
}

static int ref_range_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct ref_range *)a)->base, y = ((const struct ref_range *)b)->base;

	return (x > y) - (x < y);
}

/* Whether node i lies in its zone's range (else garbage or room: struct ref_iter). */
static int ref_in_range(const void *img, uint32_t i)
{
	const struct p53_image_zone *zn = p53_image_zone(img, p53_image_node(img, i)->zone);

	return i - zn->node_base < zn->n_nodes;
}

/*
 * The nodes are walked zone range by zone range in node order, so the garbage and the room
 * between and after the ranges are never read: a garbage entry's node is a cache miss of its
 * own, and a patch that moved a 1M-record zone leaves as many garbage entries as the zone has
 * nodes. The ranges are sorted by base once (a zone a patch or a splice moved lies after the
 * zones that follow it in the zone table); the sorted copy is allocated here (control thread
 * only: the publish) and freed by ref_iter_fini(). Without it, each next range is the
 * zones' least base past the last one (a pass over the zones per range). prev's cuts are
 * tested one by one (a few; those of a moved or spliced zone are garbage now).
 */
static void ref_iter_init(struct ref_iter *it, const void *img, const void *prev, const void *prev_buf)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);

	*it = (struct ref_iter){ .img = img, .n_r = h->n_zones };
	if (prev != NULL && prev_buf != NULL) {
		const struct p53_image_hdr *hp = p53_image_hdr(prev);
		int appended = hp->n_nodes <= h->n_nodes && hp->n_rrsets <= h->n_rrsets &&
			       hp->n_zones == h->n_zones;
		for (uint32_t z = 0; appended && z < h->n_zones; z++) {
			const struct p53_image_zone *zn = p53_image_zone(img, z);
			for (uint32_t i = ref_new_from(img, prev, z, 1); i < zn->rrset_base + zn->n_rrsets; i++)
				if (p53_image_rrset(img, i)->type == P53_T_NS && !ref_apex_ns(img, i)) {
					appended = 0;
					break;
				}
		}
		if (appended) {
			const uint32_t *cuts = ref_cuts(prev_buf);
			it->list = cuts + 2;
			it->n_list = cuts[0];
			it->prev = prev;
		}
	}
	it->r = h->n_zones > 0 ? malloc((size_t)h->n_zones * sizeof(*it->r)) : NULL;
	if (it->r == NULL)
		return;
	for (uint32_t z = 0; z < h->n_zones; z++)
		it->r[z] = (struct ref_range){ p53_image_zone(img, z)->node_base,
					       p53_image_zone(img, z)->n_nodes, z };
	qsort(it->r, h->n_zones, sizeof(*it->r), ref_range_cmp);
}

static void ref_iter_fini(struct ref_iter *it)
{
	free(it->r);
}

/* The range after the one that ended at it->end (the ranges do not overlap), or 0 when none
 * is left; its part prev lacks when the table is made from prev's. */
static int ref_iter_range(struct ref_iter *it)
{
	struct ref_range g = { P53_NONE, 0, 0 };

	if (it->r != NULL) {
		if (it->kr == it->n_r)
			return 0;
		g = it->r[it->kr++];
	} else {
		for (uint32_t z = 0; z < it->n_r; z++) {
			const struct p53_image_zone *zn = p53_image_zone(it->img, z);
			if (zn->node_base >= it->end && (g.n == 0 || zn->node_base < g.base))
				g = (struct ref_range){ zn->node_base, zn->n_nodes, z };
		}
		if (g.n == 0)
			return 0;
	}
	it->end = g.base + g.n;
	it->next = it->prev != NULL ? ref_new_from(it->img, it->prev, g.z, 0) : g.base;
	if (it->next > it->end)
		it->next = it->end;     /* all of it was prev's */
	return 1;
}

static inline uint32_t ref_iter_next(struct ref_iter *it)
{
	while (it->next == it->end) {
		if (it->k < it->n_list) {
			uint32_t i = it->list[it->k++];
			if (ref_in_range(it->img, i))
				return i;
		} else if (!ref_iter_range(it)) {
			return P53_NONE;
		}
	}
	return it->next++;
}

/* The delegations that get a slot (the first P53_FAST_REF_MAX cuts, in node order, with a
 * bound), one pass over the nodes that may be cuts: how many; *bytes their bounds add up to,
 * *n_cut the cuts. */
static uint32_t ref_scan(const void *img, const void *prev, const void *prev_buf, size_t *bytes,
			 uint32_t *n_cut)
{
	struct ref_iter it;
	uint32_t n = 0, nc = 0;
	size_t sum = 0;

	ref_iter_init(&it, img, prev, prev_buf);
	for (uint32_t i; (i = ref_iter_next(&it)) != P53_NONE;) {
		const struct p53_image_node *nd = p53_image_node(img, i);
		if (!(nd->flags & P53_NODE_CUT))
			continue;
		nc++;
		if (n >= P53_FAST_REF_MAX)
			continue;
		size_t b = ref_bound(img, nd);
		if (b != 0) {
			sum += b;
			n++;
		}
	}
	ref_iter_fini(&it);
	*bytes = sum;
	*n_cut = nc;
	return n;
}

static uint32_t ref_slots_of(uint32_t n)
{
	uint32_t slots = 1;

	while (slots < 2 * n)
		slots <<= 1;
	return n != 0 ? slots : 0;
}

static size_t ref_size(const void *img, const void *prev, const void *prev_buf)
{
	if (img == NULL)
		return 0;
	size_t bytes = 0;
	uint32_t n_cut = 0, slots = ref_slots_of(ref_scan(img, prev, prev_buf, &bytes, &n_cut));
	if (slots == 0)
		return 0;
	return sizeof(struct ref_tab) + slots * sizeof(struct ref_slot) +
	       ((size_t)n_cut + 2) * sizeof(uint32_t) + bytes + REF_PAD;
}

size_t p53_fast_ref_size(const void *img)
{
	return ref_size(img, NULL, NULL);
}

size_t p53_fast_ref_size_from(const void *img, const void *prev, const void *prev_buf)
{
	return ref_size(img, prev, prev_buf);
}

#define REF_NO_PTR SIZE_MAX

/* One name in a template at `o + off` (`len` bytes written): its labels, then a pointer or the
 * root. Returns the offset past it, or 0 when it runs past the end; *labels, *ptr (the
 * pointer's offset, or REF_NO_PTR). */
static size_t ref_name(const uint8_t *o, size_t off, size_t len, unsigned int *labels, size_t *ptr)
{
	*ptr = REF_NO_PTR;
	while (off < len) {
		uint8_t b = o[off];
		if (b >= 0xc0) {
			if (off + 2 > len)
				return 0;
			*ptr = off;
			return off + 2;
		}
		if (b == 0)
			return off + 1;
		off += 1u + b;
		(*labels)++;
	}
	return 0;
}

/* The template of cut node `ci` at `p` (ref_bound() bytes); 0 when it gets none. */
static int ref_make(const void *img, uint32_t ci, struct ref_tpl *p, size_t room)
{
	const struct p53_image_node *cut = p53_image_node(img, ci);
	const uint8_t *cn = p53_image_node_name(img, cut);
	struct p53_query sq;
	uint8_t msg[P53_DNS_HDR_LEN + P53_NAME_MAXLEN + 4 + 2 * REF_TPL_MAX];

	/* The question: the cut itself, at P53_DNS_HDR_LEN. */
	memset(&sq, 0, sizeof(sq));
	memcpy(sq.lname, cn, cut->name_len);
	sq.qname_len = cut->name_len;
	sq.qname_labels = cut->labels;
	for (size_t off = 0, k = 0; k <= cut->labels; off += 1u + cn[off], k++)
		sq.label_off[k] = (uint8_t)off;
	sq.question_end = (uint16_t)(P53_DNS_HDR_LEN + cut->name_len + 4);
	memset(msg, 0, sizeof(msg));
	memcpy(msg + P53_DNS_HDR_LEN, cn, cut->name_len);
	uint16_t pos0 = sq.question_end, ns = 0, ar = 0;
	uint16_t end = referral(img, &sq, msg, pos0, (uint16_t)(pos0 + 2 * REF_TPL_MAX), cut, &ns, &ar);
	if (end == 0 || (unsigned int)(end - pos0) > REF_TPL_MAX)
		return 0;
	size_t len = (size_t)(end - pos0), off = 0, n_patch = 0, need = len;
	uint8_t *o = msg + pos0;
	uint16_t patch[256];
	unsigned int labels = 0;
	const struct p53_image_rrset *nsr = p53_image_nrrset(img, cut, p53_image_node_rrset(img, cut, P53_T_NS));
	const uint8_t *rd = p53_image_rdata(img, nsr);
	for (unsigned int r = 0; r < (unsigned int)ns + ar; r++) {
		size_t at[2], rec = off;
		unsigned int lab = 0;
		off = ref_name(o, off, len, &lab, &at[0]);
		if (off == 0 || lab != 0 || off + 10 > len)
			return 0;       /* owners are pointers (referral()) */
		uint16_t type = p53_get16(o + off), rdlen = p53_get16(o + off + 8);
		off += 10;
		at[1] = REF_NO_PTR;
		if (r < ns) {
			/* referral() checks room for the target as the image has it first. */
			uint16_t ilen = p53_get16(rd + P53_RR_OWNER_LEN + 8);
			if (rec + 12 + ilen + 1 > need)
				need = rec + 12 + ilen + 1;
			rd += P53_RR_OWNER_LEN + 10u + ilen;
			if (type != P53_T_NS || ref_name(o, off, off + rdlen, &labels, &at[1]) != off + rdlen)
				return 0;
		}
		off += rdlen;
		if (off > len)
			return 0;
		for (int k = 0; k < 2; k++) {
			if (at[k] == REF_NO_PTR)
				continue;
			/* into the cut in the question, or into the referral (ref_put) */
			uint16_t v = p53_get16(o + at[k]) & 0x3fff;
			if (v < P53_DNS_HDR_LEN || (v >= P53_DNS_HDR_LEN + cut->name_len && v < pos0) ||
			    n_patch == 255)
				return 0;
			patch[n_patch++] = (uint16_t)at[k];
		}
	}
	if (off != len || cut->labels + labels > CTAB_MAX ||
	    sizeof(*p) + 2 * n_patch + len > room)
		return 0;
	uint32_t mult = 0;
	for (size_t k = 0; k < n_patch; k++)
		mult += (patch[k] & 1u) ? 1u : 256u;
	p->len = (uint16_t)len;
	p->need = (uint16_t)need;
	p->ns = ns;
	p->ar = ar;
	p->nc = (uint8_t)labels;
	p->n_patch = (uint8_t)n_patch;
	p->mult = mult;
	memcpy(p->patch, patch, 2 * n_patch);
	uint8_t *b = (uint8_t *)(p->patch + n_patch), *m = b + len;
	memcpy(b, o, len);
	p->sum = p53_csum_fold(p53_csum_add(o, len, 0));
	/* The masked copy: a pointer's low byte plus L stays below 256 for L < lcap, so adding
	   L to that byte alone is adding it to the pointer. */
	unsigned int lo_max = 0;
	memset(m, 0, len);
	for (size_t k = 0; k < n_patch; k++) {
		unsigned int lo = o[patch[k] + 1];
		if (lo > lo_max)
			lo_max = lo;
		m[patch[k] + 1] = 0xff;
	}
	uint64_t w = (uint64_t)len | (uint64_t)ns << 16 | (uint64_t)ar << 32;
	memcpy(p->w, &w, sizeof(w));
	p->need128 = (uint16_t)(need > 128 ? need : 128);
	p->lcap = (uint16_t)(len <= 128 ? 256 - lo_max : 0);
	p->base = (uint16_t)(P53_DNS_HDR_LEN + cut->name_len + 4);
	p->lab_max = (uint8_t)(CTAB_MAX - labels);
	p->hi_plain = 1;
	for (size_t k = 0; k < n_patch; k++)
		if (patch[k] + 1u >= 64)
			p->hi_plain = 0;
	return 1;
}

uint32_t p53_fast_ref_count(const void *buf)
{
	return buf != NULL ? ((const struct ref_tab *)buf)->n : 0;
}

/* The template of cut `ci` in `t` (at `ref`, from the table's start): where it is, or 0. */
static const struct ref_tpl *ref_tpl_of(const struct ref_tab *t, uint32_t ci)
{
	if (t == NULL || t->n == 0)
		return NULL;
	for (uint32_t i = ci & t->mask;; i = (i + 1) & t->mask) {
		if (t->slot[i].node == ci)
			return (const struct ref_tpl *)((const uint8_t *)t + t->slot[i].off);
		if (t->slot[i].node == P53_NONE)
			return NULL;
	}
}

/*
 * The referral for cut node `ci`: from its template (ref_put), else written (referral()).
 * `pl`: the write position, the size limit above it, our payload size above that (the OPT's
 * sum). Out of line, with its results in two registers: fast_answer()'s register allocation
 * does not depend on what the referral writers keep live.
 */
struct ref_ret {
	uint64_t w;             /* the new position (0: declined), NS records << 16, AR << 32 */
	uint64_t ts;            /* the sum of what it wrote and the OPT, or P53_FAST_NO_SUM */
};

static __attribute__((noinline)) struct ref_ret ref_answer_slow(const void *img,
								const struct p53_answer_conf *conf,
								const struct p53_query *q, uint8_t *msg,
								uint64_t pl, uint32_t ci)
{
	const struct p53_image_node *cut = p53_image_node(img, ci);
	uint16_t pos = (uint16_t)pl, limit = (uint16_t)(pl >> 16), ours = (uint16_t)(pl >> 32);
	struct ref_ret r = { 0, P53_FAST_NO_SUM };
	uint64_t ts = 0;

	if (conf->ref != NULL)
		r.w = ref_put(conf->ref, ci, q, msg, (uint32_t)pos | (uint32_t)limit << 16, cut, &ts);
	if (r.w != 0) {
		r.ts = ts;
		if (q->edns)
			r.ts += opt_sum(ours, 0, ((uint16_t)r.w - pos) & 1u);
		return r;
	}
	uint16_t ns = 0, ar = 0;
	uint16_t end = referral(img, q, msg, pos, limit, cut, &ns, &ar);
	r.w = end == 0 ? 0 : (uint64_t)end | (uint64_t)ns << 16 | (uint64_t)ar << 32;
	return r;
}

/* 16 bytes of a template plus L at its mask's bytes (a vector of 16 where the target has one:
 * SSE2 on x86-64, the compiler's pieces elsewhere). */
typedef uint8_t ref_v16 __attribute__((vector_size(16)));
static inline __attribute__((always_inline)) void ref_add16(uint8_t *o, const uint8_t *b,
							   const uint8_t *m, ref_v16 l)
{
	ref_v16 x, y;

	memcpy(&x, b, 16);
	memcpy(&y, m, 16);
	x += y & l;
	memcpy(o, &x, 16);
}

/*
 * The referral for cut node `ci` (a strict ancestor of the question name or the name itself,
 * fast_answer(), at `pos` = q->question_end): the template's bytes in 4, 6 or 8 moves of
 * 16 bytes, each plus L at the pointers' low bytes (its mask) when none carries (L < lcap, a
 * template of at most 128 bytes and room for 128), else ref_answer_slow(): the template's copy
 * and one add per pointer (ref_put), or referral() when the cut has none. `pl`: the write
 * position, the size limit above it, our payload size above that (the OPT's sum). Out of line,
 * with its results in two registers: fast_answer()'s register allocation does not depend on
 * what the referral writers keep live; the slow one is a tail call, so this one saves no
 * registers.
 */
static __attribute__((noinline)) struct ref_ret ref_answer(const void *img,
							   const struct p53_answer_conf *conf,
							   const struct p53_query *q, uint8_t *msg,
							   uint64_t pl, uint32_t ci)
{
	const struct ref_tab *t = conf->ref;

	if (t == NULL)
		return ref_answer_slow(img, conf, q, msg, pl, ci);
	uint32_t i = ci & t->mask;
	const struct ref_slot *sl;
	for (;; i = (i + 1) & t->mask) {
		sl = &t->slot[i];
		if (sl->node == ci)
			break;
		if (sl->node == P53_NONE)
			return ref_answer_slow(img, conf, q, msg, pl, ci);
	}
	const struct ref_tpl *p = (const struct ref_tpl *)((const uint8_t *)t + sl->off);
	uint16_t pos = (uint16_t)pl, limit = (uint16_t)(pl >> 16);
	uint32_t L = (uint32_t)pos - p->base;
	if (q->qname_labels > p->lab_max || (uint32_t)pos + p->need128 > limit || L >= p->lcap ||
	    pos != P53_DNS_HDR_LEN + q->qname_len + 4)
		return ref_answer_slow(img, conf, q, msg, pl, ci);
	uint8_t *o = msg + pos;
	const uint8_t *b = (const uint8_t *)(p->patch + p->n_patch);
	const uint8_t *m = b + p->len;
	ref_v16 l = { 0 };
	l += (uint8_t)L;
	ref_add16(o, b, m, l);
	ref_add16(o + 16, b + 16, m + 16, l);
	ref_add16(o + 32, b + 32, m + 32, l);
	ref_add16(o + 48, b + 48, m + 48, l);
	if (p->len > 64 && p->hi_plain) {
		memcpy(o + 64, b + 64, 32);
		if (p->len > 96)
			memcpy(o + 96, b + 96, 32);
	} else if (p->len > 64) {
		ref_add16(o + 64, b + 64, m + 64, l);
		ref_add16(o + 80, b + 80, m + 80, l);
		if (p->len > 96) {
			ref_add16(o + 96, b + 96, m + 96, l);
			ref_add16(o + 112, b + 112, m + 112, l);
		}
	}
	struct ref_ret r;
	memcpy(&r.w, p->w, sizeof(r.w));
	r.w += pos;
	r.ts = p->sum + (uint64_t)L * p->mult;
	if (q->edns)
		r.ts += opt_sum((uint16_t)(pl >> 32), 0, p->len & 1u);
	return r;
}

/* Whether node `ni`, its name and its block's RRsets (headers, records, signatures) are
 * prev's at the same index, byte for byte. */
static int ref_node_same(const void *img, const void *prev, uint32_t ni)
{
	if (ni >= p53_image_hdr(prev)->n_nodes)
		return 0;
	const struct p53_image_node *n = p53_image_node(img, ni), *pn = p53_image_node(prev, ni);
	if (memcmp(n, pn, sizeof(*n)) != 0 ||
	    memcmp(p53_image_node_name(img, n), p53_image_node_name(prev, pn), n->name_len) != 0)
		return 0;
	/* prev's node passed its check there: its block is prev's (image.h, Co-location) */
	const struct p53_image_rrset *rs = p53_image_node_first(img, n);
	const struct p53_image_rrset *ps = p53_image_node_first(prev, pn);
	for (uint32_t r = 0; r < n->n_rrsets; r++) {
		if (memcmp(rs, ps, sizeof(*rs)) != 0 ||
		    memcmp(p53_image_rdata(img, rs), p53_image_rdata(prev, ps),
			   (size_t)rs->rdata_len + rs->sig_len) != 0)
			return 0;
		rs = p53_image_rrset_next(img, rs);
		ps = p53_image_rrset_next(prev, ps);
	}
	return 1;
}

/*
 * Whether everything cut `ci`'s template is made from in `img` is what it was in `prev` (an
 * image whose additional lists are img's first bytes, p53_image_check_from): the cut's node
 * and RRsets (its NS records, their additional list) and each glue node's (its name, its A
 * and AAAA records), compared with their bytes (ref_node_same), so ref_bound() and
 * ref_make() give what they gave for prev. A glue
 * address the patch changed, added or removed changes the glue node's headers or the list.
 */
static int ref_same(const void *img, const void *prev, uint32_t ci)
{
	if (!ref_node_same(img, prev, ci))
		return 0;
	const struct p53_image_node *cut = p53_image_node(img, ci);
	const struct p53_image_zone *z = p53_image_zone(img, cut->zone);
	uint32_t nsi = p53_image_node_rrset(img, cut, P53_T_NS);
	if (nsi == P53_NONE)
		return 1;
	const struct p53_image_rrset *rs = p53_image_zrrset(img, z, nsi);
	if (rs->adds == P53_NONE)
		return 1;
	const uint32_t *list = p53_image_adds(img, rs->adds);
	uint32_t count = P53_ADDS_COUNT(list[0]);
	if (count > MAX_ADDED)
		return 1;       /* no template (ref_bound), in either */
	for (uint32_t i = 1; i <= count; i++)
		if (!ref_node_same(img, prev, z->node_base + list[i]))
			return 0;
	return 1;
}

/* p53_fast_ref_build(), and with prev: the nodes that may be cuts (ref_iter), and a template
 * whose inputs are prev's (ref_same) copied from prev_buf instead of made. */
static void ref_build(const void *img, void *buf, size_t size, const void *prev, const void *prev_buf)
{
	struct ref_tab *t = buf;
	struct ref_iter it;
	size_t bytes = 0;
	uint32_t n_cut = 0, ref_scan_n = ref_scan(img, prev, prev_buf, &bytes, &n_cut);
	uint32_t slots = ref_slots_of(ref_scan_n), n = 0;
	size_t off = sizeof(struct ref_tab) + slots * sizeof(struct ref_slot);

	if (size < REF_PAD)
		return;
	size -= REF_PAD;        /* ref_put() reads up to 128 bytes of a template */
	if (slots == 0 || off + ((size_t)n_cut + 2) * sizeof(uint32_t) > size)
		return;
	t->mask = slots - 1;
	t->n = 0;
	for (uint32_t i = 0; i < slots; i++)
		t->slot[i] = (struct ref_slot){ P53_NONE, 0 };
	uint32_t *cuts = (uint32_t *)((uint8_t *)buf + off), *list = cuts + 2, k_cut = 0;
	/* prev made every template it had a bound for (not stopped by P53_FAST_REF_MAX) */
	int all = prev != NULL && ref_cuts(prev_buf)[1] < P53_FAST_REF_MAX;
	cuts[0] = n_cut;
	cuts[1] = ref_scan_n;
	off += ((size_t)n_cut + 2) * sizeof(uint32_t);
	ref_iter_init(&it, img, prev, prev_buf);
	for (uint32_t ci; (ci = ref_iter_next(&it)) != P53_NONE;) {
		const struct p53_image_node *nd = p53_image_node(img, ci);
		if (!(nd->flags & P53_NODE_CUT) || k_cut >= n_cut)
			continue;
		list[k_cut++] = ci;
		if (n >= P53_FAST_REF_MAX)
			continue;
		size_t b = ref_bound(img, nd);
		if (b == 0)
			continue;
		n++;
		if (off + b > size)
			continue;
		struct ref_tpl *p = (struct ref_tpl *)((uint8_t *)buf + off);
		if (prev != NULL && ref_same(img, prev, ci)) {
			/* prev's table has it (in b bytes too) when ref_make() gave one there:
			 * none, and prev tried, is none here too; else it is made (a delegation
			 * past prev's P53_FAST_REF_MAX). */
			const struct ref_tpl *q = ref_tpl_of(prev_buf, ci);
			if (q != NULL)
				memcpy(p, q, b);
			else if (all || !ref_make(img, ci, p, b))
				continue;
		} else if (!ref_make(img, ci, p, b)) {
			continue;
		}
		uint32_t k = ci & t->mask;
		while (t->slot[k].node != P53_NONE)
			k = (k + 1) & t->mask;
		t->slot[k] = (struct ref_slot){ ci, (uint32_t)off };
		t->n++;
		off += b;
	}
	ref_iter_fini(&it);
}

void p53_fast_ref_build(const void *img, void *buf, size_t size)
{
	ref_build(img, buf, size, NULL, NULL);
}

void p53_fast_ref_build_from(const void *img, void *buf, size_t size, const void *prev,
			     const void *prev_buf)
{
	ref_build(img, buf, size, prev_buf != NULL ? prev : NULL, prev_buf);
}

/* p53_image_find() inlined, the names compared 8 bytes at a time (the last word overlapping):
 * image names and the parsed name have at least 8 readable bytes when they are that long.
 * Returns the node itself (the slot leads to its block), or NULL. */
/* `hit` (a statement: a return) when node `node`'s name is `name` (canonical, `len` bytes). A
 * macro, so that find() keeps the code it had: the comparison as a function returning a flag
 * changed fast_frame()'s code, and a name error and a referral cost 5 instructions more. */
#define NODE_IS(node, name, len, hit)							\
	do {										\
		const uint8_t *nm_ = p53_image_node_name(NULL, (node));			\
		if ((node)->name_len == (len) && (len) >= 8) {				\
			uint64_t a_, b_, x_ = 0;					\
			size_t k_;							\
			/* 8..16 bytes (most names): the first word and the last */	\
			memcpy(&a_, nm_, 8);						\
			memcpy(&b_, (name), 8);						\
			x_ = a_ ^ b_;							\
			for (k_ = 8; k_ + 8 < (len); k_ += 8) {				\
				memcpy(&a_, nm_ + k_, 8);				\
				memcpy(&b_, (name) + k_, 8);				\
				x_ |= a_ ^ b_;						\
			}								\
			memcpy(&a_, nm_ + (len) - 8, 8);				\
			memcpy(&b_, (name) + (len) - 8, 8);				\
			if ((x_ | (a_ ^ b_)) == 0)					\
				hit;							\
		} else if ((node)->name_len == (len)) {					\
			/* under 8 bytes: compared inline (a memcmp() call made the	\
			   caller keep its values on the stack around find()'s loop) */	\
			size_t k_ = 0;							\
			while (k_ < (len) && nm_[k_] == (name)[k_])			\
				k_++;							\
			if (k_ == (len))						\
				hit;							\
		}									\
	} while (0)

/* Whether node `node`'s name is `name`: for a node found before (p53_fast_found). */
static inline __attribute__((always_inline)) int node_is(const struct p53_image_node *node,
							  const uint8_t *name, size_t len)
{
	NODE_IS(node, name, len, return 1);
	return 0;
}

static inline __attribute__((always_inline)) const struct p53_image_node *
find_body(const void *img, const uint8_t *name, size_t len, uint32_t hash)
{
	const struct p53_image_hdr *h = img;
	const uint64_t *slots = p53_image_slots(img);
	uint32_t i = hash & h->hash_mask;

	for (;;) {
		uint64_t s = slots[i];
		if (s == 0)
			return NULL;
		if ((uint32_t)(s >> 32) == hash) {
			const struct p53_image_node *node = p53_image_slot_node(img, s);
			NODE_IS(node, name, len, return node);
		}
		i = (i + 1) & h->hash_mask;
	}
}
#undef NODE_IS

/* find_body() where the compiler judges (out of line in the cache's burst step); nx_frame()
 * takes the body inline. */
static inline const struct p53_image_node *find(const void *img, const uint8_t *name, size_t len,
						uint32_t hash)
{
	return find_body(img, name, len, hash);
}

/* answer.c encloser(): the deepest existing ancestor of a name not in the image (its node, or
 * NULL). `last` (fast_frame(); else NULL, a constant): the last encloser found with this
 * image (p53_fast_ctx.nx->ce), compared with each candidate before it is hashed and looked up:
 * the candidates deeper than it were looked up and missed, so a candidate that is its name
 * is the deepest that exists. */
static inline __attribute__((always_inline)) const struct p53_image_node *
encloser_body(const void *img, const struct p53_query *q, const struct p53_image_node **last)
{
	uint32_t deepest = p53_image_hdr(img)->max_labels;
	int from = q->qname_labels > deepest ? q->qname_labels - (int)deepest : 1;
	const struct p53_image_node *m = last != NULL ? *last : NULL;

	for (int k = from; k <= q->qname_labels; k++) {
		const uint8_t *s = q->lname + q->label_off[k];
		size_t sl = (size_t)q->qname_len - q->label_off[k];
		if (last != NULL && node_is(m, s, sl)) {
			STEP(CE);
			return m;
		}
		const struct p53_image_node *n = find(img, s, sl, p53_name_hash(s, sl));
		if (n != NULL) {
			if (last != NULL)
				*last = n;
			return n;
		}
	}
	return NULL;
}

/* encloser_body() out of line, for p53_fast_answer*() and ecs_answer(). */
static __attribute__((noinline)) const struct p53_image_node *encloser(const void *img,
								      const struct p53_query *q)
{
	return encloser_body(img, q, NULL);
}

/* memcpy() for records: 16..32 bytes (one A, AAAA or a pair) in two overlapping 16-byte moves
 * inline instead of a call. */
static inline __attribute__((always_inline)) void copy_rrs(uint8_t *d, const uint8_t *s, uint32_t len)
{
	if (len >= 16 && len <= 32) {
		memcpy(d, s, 16);
		memcpy(d + len - 16, s + len - 16, 16);
		return;
	}
	memcpy(d, s, len);
}

/*
 * answer.c steered() for an RRset owned by the query name: the variant the published table
 * picks for the client (the ECS address when SOURCE PREFIX-LENGTH is above 0, else the
 * packet's source; RFC 7871 §7.1.2), its records (and with DO=1 its RRSIGs) pre-encoded with
 * the owner pointer C0 0C, written in one memcpy as put_rrset_rd() writes them; with no table
 * or no steered record there, the image's RRset (every target), as answer.c. Returns the new
 * position in the low 16 bits (0 to decline: it does not fit, TC is the general path's) and,
 * for a variant written without ECS, STEER_SUM with above it the sum of what it wrote: its
 * records' (steer.h) and the OPT's (`ours`); the image's RRset or an ECS echo: summed by the
 * reply. One return value: the caller keeps its sum in a register. *an: the records;
 * *scope: the ECS scope (0 when the client is the source of a query with ECS source 0).
 */
#define STEER_SUM (1ull << 16)
static inline __attribute__((always_inline)) uint64_t
steered_rrs(const void *img, void *const *steer, const struct p53_query *q,
	    const struct p53_image_rrset *rs, uint8_t *msg, uint16_t pos, uint16_t limit, int dnssec,
	    const uint8_t *ecs, uint16_t *an, uint8_t *scope, uint16_t ours, uint32_t at)
{
	uint64_t sum = 0;
	/* answer.c declines an RRset with additional records (the general path's), and our
	   OPT's part of a variant's sum (opt_sum()) is known: both before the pick, so fewer
	   values stay alive across it */
	if (rs->adds != P53_NONE)
		return 0;
	const uint64_t osum = q->edns ? 0x29u + (uint64_t)ours + (dnssec ? 0x8000u : 0u) : 0;
	const void *t = __atomic_load_n(steer, __ATOMIC_ACQUIRE);
	/* By the node's index (no name compared), by name when it does not hold. */
	const struct p53_steer_rec *r = t != NULL ?
		p53_steer_node(t, p53_image_hdr(img)->steer_layout, at, q->lname, q->qname_len,
			       q->hash, q->qtype) : NULL;
	const uint8_t *rd = p53_image_rdata(img, rs);
	uint32_t len = rs->rdata_len + (dnssec ? rs->sig_len : 0u);

	if (r != NULL) {
		uint8_t ea[16];
		const struct p53_steer_variant *v;
		/* The ECS data was validated by the parser (edns_opt.c): FAMILY 1 or 2, ADDRESS
		 * ceil(SOURCE / 8) bytes, nothing set past SOURCE. The packet's source is read in
		 * place (4 or 16 bytes), for a query whose answer echoes no scope (no ECS, or
		 * SOURCE 0: scope 0), so the lookups skip a gap's extent (steer_pick.h). */
		if (ecs != NULL && ecs[2] > 0) {
			memset(ea, 0, sizeof(ea));
			memcpy(ea, ecs + 4, (ecs[2] + 7u) / 8u);
			v = p53_steer_pick_addr_s(t, r, p53_get16(ecs) == P53_ECS_FAMILY_IPV6, ea,
						  scope, 1);
		} else {
			if (__builtin_expect(q->src != NULL, 1))
				v = p53_steer_pick_addr_s(t, r, q->src_v6, q->src, scope, 0);
			else
				v = p53_steer_pick(t, r, NULL, scope);
			*scope = 0;
		}
		rd = p53_steer_rdata(t, v);
		len = v->rdata_len + (dnssec ? v->sig_len : 0u);
		*an = (uint16_t)(v->count + (dnssec ? v->sig_count : 0u));
		if (ecs == NULL) {
			sum = (dnssec ? v->sig_sum : v->sum) + ((len & 1u) ? p53_csum_odd(osum) : osum);
			sum = STEER_SUM | sum << 17;
		}
	}
	if ((uint32_t)pos + len > limit)
		return 0;
	copy_rrs(msg + pos, rd, len);
	return sum | (uint16_t)(pos + len);
}

/* steered_rrs() out of line, one copy per case: a query without ECS (the most common), DO=0
 * (steered()) and DO=1 (steered_do()), and one with ECS. The copies without ECS take six
 * arguments, all in registers: no ECS pointer, no scope, the table's pointer's address for
 * the answer configuration, and `pl` = pos | limit << 16 | ours << 32 | the node's steering
 * index << 48 (image.h; 15 bits, a larger one is passed as 0: looked up by name); a variant's
 * record count comes back in bits 48..63 of the result (with STEER_SUM set: the image's RRset
 * keeps the caller's count). DO a constant in each copy: with it a bit of `pl`, it was kept on
 * the stack across the pick, with the OPT's sum (round 28: the steered IPv6 query 4
 * instructions dearer without ECS, the IPv4 one 10). */
#define STEER_PL(pos, limit, ours, at) \
	((uint64_t)(pos) | (uint64_t)(limit) << 16 | (uint64_t)(ours) << 32 | \
	 (uint64_t)((at) < 0x8000u ? (at) : 0u) << 48)
static inline __attribute__((always_inline)) uint64_t steered_k(const void *img, void *const *steer,
								  const struct p53_query *q,
								  const struct p53_image_rrset *rs,
								  uint8_t *msg, uint64_t pl, const int dnssec)
{
	uint8_t scope;
	uint16_t an = 0;
	uint64_t w = steered_rrs(img, steer, q, rs, msg, (uint16_t)pl, (uint16_t)(pl >> 16),
				 dnssec, NULL, &an, &scope, (uint16_t)(pl >> 32),
				 (uint32_t)(pl >> 48));

	return w | (uint64_t)an << 48;
}

static __attribute__((noinline)) uint64_t steered(const void *img, void *const *steer,
						  const struct p53_query *q,
						  const struct p53_image_rrset *rs, uint8_t *msg, uint64_t pl)
{
	return steered_k(img, steer, q, rs, msg, pl, 0);
}

static __attribute__((noinline)) uint64_t steered_do(const void *img, void *const *steer,
						     const struct p53_query *q,
						     const struct p53_image_rrset *rs, uint8_t *msg, uint64_t pl)
{
	return steered_k(img, steer, q, rs, msg, pl, 1);
}

static __attribute__((noinline)) uint64_t steered_ecs(const void *img, const struct p53_answer_conf *conf,
						      const struct p53_query *q,
						      const struct p53_image_rrset *rs, uint8_t *msg,
						      uint16_t pos, uint16_t limit, int dnssec,
						      const uint8_t *ecs, uint16_t *an, uint8_t *scope,
						      uint16_t ours, uint32_t at)
{
	return steered_rrs(img, conf->steer, q, rs, msg, pos, limit, dnssec, ecs, an, scope, ours,
			   at);
}

/* Where the kept tail (a SOA record, then the OPT) points at the apex in the question: its
 * owner (a pointer, as soa() writes it) and the MNAME's and RNAME's ends when they point there
 * too, so that nx_frame_any() moves them for a first label of another length. A tail with
 * any other pointer (one that would not move with them) keeps none (`pmult` 0). Once per
 * kept reply, out of line. */
static __attribute__((noinline, cold)) void nx_ptrs(struct p53_fast_nx *x)
{
	const uint8_t *t = x->tail;
	uint8_t z[P53_FAST_NX_TAIL];
	uint32_t at = 12, n = 1, mult = 256;    /* the owner at offset 0 */

	x->pmult = 0;
	if (x->len < 12 + 2 + 2 + 20 || (t[0] & 0xc0) != 0xc0)
		return;
	uint16_t ptr = p53_get16(t);
	x->pat[0] = x->pat[1] = x->pat[2] = 0;
	for (int k = 0; k < 2; k++) {           /* MNAME, RNAME (RFC 1035 §3.3.13) */
		while (at < x->len && t[at] != 0 && t[at] < 64)
			at += 1u + t[at];
		if (at + 1 >= x->len)
			return;
		if (t[at] == 0) {
			at++;
			continue;
		}
		if (p53_get16(t + at) != ptr)
			return;
		x->pat[n++] = (uint8_t)at;
		mult += (at & 1) ? 1u : 256u;
		at += 2;
	}
	memcpy(z, t, x->len);
	for (uint32_t i = 0; i < n; i++)
		memset(z + x->pat[i], 0, 2);
	x->psum = p53_csum_fold(p53_csum_add(z, x->len, 0));
	x->adelta = (uint16_t)((ptr & 0x3fff) - x->flab);
	x->pmult = (uint16_t)mult;
}

/* Keep a name error's reply after its question (`pos`: its end; `ts`: its sum) for the next
 * question of its length below `ce` (p53_fast_nx), when it fits any size limit. */
static inline __attribute__((always_inline)) void nx_keep(struct p53_fast_nx *x, const struct p53_image_node *ce,
					      const struct p53_query *q, const uint8_t *msg,
					      uint16_t pos, uint64_t ts)
{
	uint16_t qe = q->question_end;

	STEP(NX_KEEP);
	x->qlen = 0;
	x->flen = 0;
	if (pos > P53_UDP_MIN || (uint32_t)(pos - qe) > sizeof(x->tail) || ts == P53_FAST_NO_SUM)
		return;
	memcpy(x->tail, msg + qe, (size_t)(pos - qe));
	x->len = (uint8_t)(pos - qe);
	x->sum = ts;
	x->at = ce;
	x->qlen = q->qname_len;
	/* the length of an IPv4 frame with that question and an OPT without options (its 11
	   bytes last, fast_udp()), whichever family this one came in, and its first label's
	   length: nx_frame(), for a question whose parent is `ce` (a flood of deep names, whose
	   parents differ, keeps none) */
	if (q->lname[0] == q->qname_len - 1 - ce->name_len) {
		x->flen = (uint16_t)(V4_DNS_OFF + qe + OPT_LEN);
		x->flab = q->lname[0];
		nx_ptrs(x);
	}
}

/* The kept reply (nx_keep()) after a question of its length, at `o`, in 16-byte moves (a
 * fixed 96-byte memcpy() is `rep movs`): the tail's bytes past its length are its own, and
 * the caller checked the room for all 96. Returns the bytes that count. */
static inline __attribute__((always_inline)) uint32_t nx_put(uint8_t *o, const struct p53_fast_nx *x)
{
	uint32_t len = x->len;

	memcpy(o, x->tail, 16);
	memcpy(o + 16, x->tail + 16, 16);
	memcpy(o + 32, x->tail + 32, 16);
	memcpy(o + 48, x->tail + 48, 16);
	if (len > 64) {
		memcpy(o + 64, x->tail + 64, 16);
		memcpy(o + 80, x->tail + 80, 16);
	}
	return len;
}

/* answer.c finish() (the header last), answer() and count() for fast_answer(). */
static inline __attribute__((always_inline)) uint16_t
finish(uint8_t *msg, struct p53_answer_stats *st, const struct p53_query *q, uint64_t *tail,
       uint64_t ts, uint16_t pos, uint16_t aa, uint8_t rcode, uint16_t an, uint16_t ns,
       uint16_t ar, uint8_t kind, int checked, uint16_t qt)
{
	uint16_t flags = (uint16_t)(P53_F_QR | aa | (q->flags & (0x7800u | P53_F_RD | P53_F_CD)) |
				    rcode);
	p53_put16(msg + 2, flags);
	/* QDCOUNT 1 and the three counts in one 8-byte store, big-endian. */
	uint64_t counts = __builtin_bswap64(1ull << 48 | (uint64_t)an << 32 | (uint64_t)ns << 16 | ar);
	memcpy(msg + 4, &counts, 8);

	/* fast_frame()'s callers count the queries and their parse once for all the frames
	   answered (checked 2). */
	if (checked != 2) {
		st->queries++;
		st->msg[P53_MSG_OK]++;
	}
	if (!checked && q->trailing != 0)
		st->trailing++;
	st->qtype[qt < P53_QTYPE_BUCKETS - 1 ? qt : P53_QTYPE_BUCKETS - 1]++;
	st->rcode[rcode]++;
	st->kind[kind]++;
	*tail = ts;
	return pos;
}

/*
 * The fast answer; `ecs`: a copy of the query's ECS option data (RFC 7871 §6), or NULL when it
 * has none (then a constant: the instance without ECS keeps none of its code). `found`: what
 * the prefetch passes found for q (fastpath.h, p53_fast_write()), or NULL (a constant but in
 * p53_fast_write()'s instance). `nx`: what fast_frame()'s name errors left (p53_fast_ctx.nx),
 * else NULL (a constant).
 */
static inline __attribute__((always_inline)) uint16_t
fast_answer(const void *img, const struct p53_answer_conf *conf, uint8_t *msg, uint16_t cap,
	    struct p53_answer_stats *st, const struct p53_query *q, const uint8_t *ecs,
	    uint16_t ecs_len, uint64_t *tail, int checked, uint16_t ours,
	    const struct p53_fast_found *found, struct p53_fast_nx *nx, const int tails)
{
	uint16_t qt = q->qtype;
	/* The sum of the records written after the question (from an even offset), when known
	   without reading them (p53_fast_answer_sum()). */
	uint64_t ts = P53_FAST_NO_SUM;
	uint8_t scope = 0;      /* RFC 7871 §7.2.1: 0 unless the answer depended on the client */

	/* The shape (fastpath.h). QUERY opcode; EDNS version 0, no option we act on but one ECS.
	   DO=1 is answered here in a signed zone for an RRset with its RRSIGs, a name error,
	   NODATA at the name and a wildcard answer with their proofs; a DO=1 referral or wildcard
	   NODATA goes to the general path (below). No image, or TCP's limit: the callers'
	   check (p53_fast_ctx_init(), p53_fast_answer*()), which give `ours`. */
	/* `checked`: p53_fast_parse() made these checks (and left the fields unread); 2: and the
	   caller is fast_frame(), which searches the closest encloser inline (below) and whose
	   callers count the query and its parse (st->queries, st->msg) for all frames answered. */
	if (!checked && (P53_OPCODE(q->flags) != P53_OPCODE_QUERY || q->tsig || q->qclass != P53_C_IN))
		return 0;
	if (!checked && q->edns && (q->edns_version != 0 || q->nsid || q->cookie || q->keepalive))
		return 0;
	int dnssec = q->edns && q->edns_do;
	/* Types with their own rules: DS (parent side), RRSIG, ANY (RFC 8482), meta types. */
	if (!checked && (qt == P53_T_DS || qt == P53_T_RRSIG || qt == P53_T_OPT || qt >= 249 || qt == 0))
		return 0;

	uint16_t max = limit_of(ours, q, cap);
	/* answer.c: room for our OPT, and the ECS echoed in it */
	uint16_t reserve = q->edns ? (uint16_t)(OPT_LEN + (ecs != NULL ? 4 + ecs_len : 0)) : 0;
	uint16_t pos = q->question_end;
	if ((uint32_t)pos + reserve > max)
		return 0;                                           /* SERVFAIL: general */
	uint16_t limit = (uint16_t)(max - reserve);

	/* RFC 1034 §4.3.2 steps 1-4: the name, or (step 5) its closest encloser. The node the
	   prefetch passes found, when its name is the question's (`known`: its RRset too). */
	const struct p53_image_node *n;
	int known = found != NULL && found->node != NULL &&
		    node_is(found->node, q->lname, q->qname_len);
	if (known)
		n = found->node;
	else
		n = q->qname_labels <= p53_image_hdr(img)->max_labels ?
		    find(img, q->lname, q->qname_len, q->hash) : NULL;
	uint8_t rcode = P53_RCODE_NOERROR, kind;
	uint16_t an = 0, ns = 0, ar = 0, aa = P53_F_AA;
	int hit = n != NULL;
	int ede = 0;
	if (!hit) {
		/* The last name error's reply, for a question of its length below its encloser
		   (p53_fast_nx): EDNS, DO=0, no ECS (the instance without it), and room for the
		   fixed copy (within max: within the room). It fits whatever the payload size:
		   nx_keep() keeps a reply of at most 512 bytes (P53_UDP_MIN, the least
		   limit_of() gives but the room). */
		if (tails && nx->qlen == q->qname_len && q->edns && !dnssec && ecs == NULL &&
		    (uint32_t)pos + sizeof(nx->tail) <= max &&
		    node_is(nx->at, q->lname + q->label_off[1], (size_t)q->qname_len - q->label_off[1])) {
			STEP(NX_PUT);
			pos = (uint16_t)(pos + nx_put(msg + pos, nx));
			ts = nx->sum;
			rcode = P53_RCODE_NXDOMAIN;
			kind = P53_ANS_NXDOMAIN;
			goto neg_opt;
		}
		/* Inline in fast_frame() (a name error: 20 instructions fewer, the call's saved
		   registers); out of line for the passes (inline, a big image's hits paid 7). */
		n = nx != NULL ? encloser_body(img, q, &nx->ce) : encloser(img, q);
		if (n == NULL) {
			/* answer.c resolve(): no served zone holds the name. REFUSED, AA clear, and
			 * with EDNS the Extended DNS Error "Not Authoritative" (RFC 8914 §4.21). */
			rcode = P53_RCODE_REFUSED;
			kind = P53_ANS_REFUSED;
			aa = 0;
			ede = 1;
			ts = q->edns ? P53_FAST_NO_SUM : 0;     /* the EDE: summed */
			goto opt;
		}
	}
	uint32_t ni = p53_image_node_index(img, n);
	const struct p53_image_zone *z = p53_image_zone(img, n->zone);
	if (z->rcode != 0)
		return 0;
	/* DO=1 in a signed zone: RRSIGs with each RRset (answer.c put_rrset_rd()), and the
	   proofs a negative or wildcard answer needs, which only an NSEC3 name error has here. */
#define SIGNED_DO (__builtin_expect(dnssec, 0) && z->dnssec != 0)
	/* soa() may write the OPT from its template: EDNS, DO=0 (put_opt()'s DO bit 0), no ECS
	   echoed (a constant in the instance without ECS). */
#define SOA_OPT_OK (q->edns && !dnssec && ecs == NULL ? ours : 0u)
	/* Step 3b: a cut above the name, or at it, gives a referral (a DNAME: general). */
	const struct p53_image_node *cut = NULL;
	if (n->occluder != P53_NONE)
		cut = p53_image_znode(img, z, n->occluder);
	else if (n->flags & P53_NODE_CUT)
		cut = n;
	if (__builtin_expect(cut != NULL, 0)) {
		if (!(cut->flags & P53_NODE_CUT) || dnssec)
			return 0;
		struct ref_ret r = ref_answer(img, conf, q, msg,
					      (uint64_t)pos | (uint64_t)limit << 16 | (uint64_t)ours << 32,
					      z->node_base + (n->occluder != P53_NONE ? n->occluder : ni));
		pos = (uint16_t)r.w;
		if (pos == 0)
			return 0;
		ns = (uint16_t)(r.w >> 16);
		ar = (uint16_t)(r.w >> 32);
		ts = r.ts;
		aa = 0;
		kind = P53_ANS_REFERRAL;
	} else if (!hit && (n->flags & P53_NODE_DNAME)) {
		return 0;                                           /* DNAME synthesis: general */
	} else if (!hit && n->wildcard == P53_NONE) {
		/* Step 5: below the closest encloser, no wildcard: NXDOMAIN (RFC 2308 §3). With
		   DO=1 in a signed zone the SOA's RRSIGs and the NSEC or NSEC3 proof. */
		if (SIGNED_DO) {
			uint16_t ns1 = 0;
			pos = signed_negative(img, conf, q, msg, pos, limit, n->zone, ni, 1, &ns1);
			ns = ns1;
		} else {
			uint64_t w = soa(img, conf, q, msg, SOA_PL(pos, limit, n->zone), SOA_OPT_OK);
			pos = (uint16_t)w;
			ns = 1;
			rcode = P53_RCODE_NXDOMAIN;
			kind = P53_ANS_NXDOMAIN;
			if (w & SOA_OPT) {
				/* the template's OPT too: the header is all that is left */
				ts = w >> SOA_SHIFT;
				ar = 1;
				if (tails)
					nx_keep(nx, n, q, msg, (uint16_t)w, ts);
				goto neg_opt;
			}
			if (w & SOA_SUM)
				ts = w >> SOA_SHIFT;
			if (q->edns && ts != P53_FAST_NO_SUM)
				ts += opt_sum(ours, dnssec, (pos - q->question_end) & 1u);
		}
		if (pos == 0)
			return 0;
		rcode = P53_RCODE_NXDOMAIN;
		kind = P53_ANS_NXDOMAIN;
	} else {
		/* Step 5 with a wildcard: its child answers, owner the query name (RFC 4592
		 * §3.3.3), which the pre-encoded records already point at. */
		uint32_t ce = ni;
		if (!hit)
			n = p53_image_znode(img, z, n->wildcard);
		/* A CNAME, or a wildcard that is a cut (a referral from it: answer.c
		   wild_referral()): general. A hit here is no cut (above). */
		if (n->flags & (P53_NODE_CNAME | P53_NODE_CUT))
			return 0;
		uint32_t rsi;
		const struct p53_image_rrset *rs;
		if (known) {
			/* a hit: n is found->node */
			rs = found->rs;
			rsi = found->rsi;
		} else {
			rs = p53_image_node_find(img, n, qt, &rsi);
		}
		if (rs != NULL) {
			/* Step 4: an RRset owned by the query name, pre-encoded (image.h), with DO=1
			   its RRSIGs after it: one memcpy. */
			uint32_t len = rs->rdata_len;
			an = rs->count;
			if (__builtin_expect(dnssec, 0)) {
				len += rs->sig_len;
				an = (uint16_t)(an + rs->sig_count);
			}
			if (__builtin_expect((rs->flags & (P53_RRSET_COMPRESS | P53_RRSET_STEERED)) != 0, 0)) {
				/* answer.c answer_node() -> steered(); a wildcard's: general */
				if ((rs->flags & P53_RRSET_COMPRESS) || conf->steer == NULL || !hit)
					return 0;
				uint16_t an1 = an;
				uint8_t scope1 = 0;
				uint64_t w;
				if (ecs == NULL) {
					w = (dnssec ? steered_do : steered)(img, conf->steer, q, rs, msg,
									    STEER_PL(pos, limit, ours, n->steer));
					if (w & STEER_SUM)
						an = (uint16_t)(w >> 48);
					w &= (1ull << 48) - 1;
				} else {
					w = steered_ecs(img, conf, q, rs, msg, pos, limit, dnssec, ecs,
							&an1, &scope1, ours, n->steer);
					an = an1;
					scope = scope1;
				}
				pos = (uint16_t)w;
				if (pos == 0)
					return 0;
				if (w & STEER_SUM)
					ts = w >> 17;
			} else {
				if (rs->adds != P53_NONE || (uint32_t)pos + len > limit)
					return 0;
				copy_rrs(msg + pos, p53_image_rdata(img, rs), len);
				pos = (uint16_t)(pos + len);
				/* PROTOTYPE: n_sums is 0 or the image's n_rrsets, which the checked
				   image's zone base plus rsi stays below */
				if (rsi < conf->n_sums)      /* with the OPT, for DO=1 the RRSIGs */
					ts = (conf->sums[z->rrset_base + rsi] >> (16 * (q->edns + dnssec))) & 0xffffu;
				else if (checked == 1 && ecs == NULL && len == 16)
					/* the passes' (a big image, no sums): one A record */
					ts = rr16_sum(msg + pos - 16) + (q->edns ? opt_sum(ours, dnssec, 0) : 0);
			}
			if (!hit && SIGNED_DO) {
				ts = P53_FAST_NO_SUM;
				uint16_t ns1 = ns;
				pos = wildcard_proof(img, q, msg, pos, limit, n->zone, ce, &ns1);
				ns = ns1;
				if (pos == 0)
					return 0;
			}
			kind = P53_ANS_ANSWER;
		} else {
			if (SIGNED_DO) {
				if (!hit)
					return 0;   /* wildcard NODATA: two proofs, general */
				uint16_t ns1 = 0;
				pos = signed_negative(img, conf, q, msg, pos, limit, n->zone, ni, 0, &ns1);
				ns = ns1;
			} else {
				uint64_t w = soa(img, conf, q, msg, SOA_PL(pos, limit, n->zone),
						 0);  /* NODATA: its OPT below (see neg_opt) */
				pos = (uint16_t)w;
				ns = 1;
				if (w & SOA_SUM)
					ts = w >> SOA_SHIFT;
				if (q->edns && ts != P53_FAST_NO_SUM)
					ts += opt_sum(ours, dnssec, (pos - q->question_end) & 1u);
			}
			if (pos == 0)
				return 0;
			kind = P53_ANS_NODATA;
		}
	}

opt:
	/* answer.c put_opt(): our payload, version 0, DO echoed, no options but the ECS echoed
	   and an EDE. */
	if (q->edns) {
		uint8_t *o = msg + pos;
		/* The 11 bytes in two stores: 00 | 00 29 | P P' | 00 | 00 | D, then D 00 | 00 00
		   (D: DO; the second store rewrites the byte the first ended with). pos + 11 is
		   within max, checked above. */
		uint32_t d = dnssec ? 0x80u : 0u;
		uint64_t w = (uint64_t)P53_T_OPT << 16 | (uint64_t)P53_BE16(ours) << 24 |
			     (uint64_t)d << 56;
		memcpy(o, &w, 8);
		memcpy(o + 7, &d, 4);
		pos = (uint16_t)(pos + OPT_LEN);
		if (ecs != NULL) {
			/* RFC 7871 §7.2.1: FAMILY, SOURCE and ADDRESS as sent, our SCOPE. */
			p53_put16(o + 9, (uint16_t)(4 + ecs_len));
			p53_put16(o + 11, P53_EDNS_ECS);
			p53_put16(o + 13, ecs_len);
			memcpy(o + 15, ecs, ecs_len);
			o[15 + 3] = scope;
			pos = (uint16_t)(pos + 4 + ecs_len);
			ts = P53_FAST_NO_SUM;
		}
		if (ede && (uint32_t)pos + 6 <= max) {
			uint8_t *e = msg + pos;
			p53_put16(o + 9, (uint16_t)(p53_get16(o + 9) + 6));
			p53_put16(e, P53_EDNS_EDE);
			p53_put16(e + 2, 2);
			p53_put16(e + 4, P53_EDE_NOT_AUTHORITATIVE);
			pos = (uint16_t)(pos + 6);
		}
		ar++;
	}
	return finish(msg, st, q, tail, ts, pos, aa, rcode, an, ns, ar, kind, checked, qt);
neg_opt:
	/* A name error whose OPT soa() wrote. Its header apart from the one above: a jump into
	   that one (and NODATA's too) changed fast_frame()'s registers, and static answers
	   paid 2 more without the answer cache, steered ones too (issue 12's ratio 1.300x). */
	return finish(msg, st, q, tail, ts, pos, P53_F_AA, rcode, 0, 1, 1, kind, checked, qt);
#undef SIGNED_DO
#undef SOA_OPT_OK
}

/* A query with ECS: the option lies where the answer is written, so it is copied first, and
 * put back when the general path is left to answer (answer.c reads it from the message). */
static __attribute__((noinline)) uint16_t ecs_answer(const void *img, const struct p53_answer_conf *conf,
						     uint8_t *msg, uint16_t cap,
						     struct p53_answer_stats *st, const struct p53_query *q,
						     uint64_t *tail, int checked, uint16_t ours)
{
	uint8_t ecs[4 + 16];

	if (!q->edns || q->ecs_len > sizeof(ecs))
		return 0;
	memcpy(ecs, msg + q->ecs_off, q->ecs_len);
	uint16_t n = fast_answer(img, conf, msg, cap, st, q, ecs, q->ecs_len, tail, checked, ours,
				 NULL, NULL, 0);
	if (n == 0)
		memcpy(msg + q->ecs_off, ecs, q->ecs_len);
	return n;
}

uint16_t p53_fast_answer_ecs(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			     uint16_t cap, struct p53_answer_stats *st, const struct p53_query *q,
			     uint64_t *tail)
{
	if (img == NULL || conf->tcp_limit != 0)
		return 0;
	return ecs_answer(img, conf, msg, cap, st, q, tail, 1, p53_our_payload(conf->edns_max_payload));
}

uint16_t p53_fast_answer_noecs(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			       uint16_t cap, struct p53_answer_stats *st, const struct p53_query *q,
			       uint64_t *tail)
{
	if (img == NULL || conf->tcp_limit != 0)
		return 0;
	return fast_answer(img, conf, msg, cap, st, q, NULL, 0, tail, 1, p53_our_payload(conf->edns_max_payload),
			   NULL, NULL, 0);
}

uint16_t p53_fast_answer(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			 uint16_t cap, struct p53_answer_stats *st, const struct p53_query *q)
{
	uint64_t tail;

	if (img == NULL || conf->tcp_limit != 0)
		return 0;
	if (__builtin_expect(q->ecs, 0))
		return ecs_answer(img, conf, msg, cap, st, q, &tail, 0, p53_our_payload(conf->edns_max_payload));
	return fast_answer(img, conf, msg, cap, st, q, NULL, 0, &tail, 0, p53_our_payload(conf->edns_max_payload),
			   NULL, NULL, 0);
}

size_t p53_fast_sum_count(const void *img)
{
	return img != NULL ? p53_image_hdr(img)->n_rrsets : 0;
}

static void sum_range(const void *img, uint16_t payload, uint64_t *t, uint32_t from, uint32_t to)
{
	uint16_t ours = p53_our_payload(payload);

	for (uint32_t i = from; i < to; i++) {
		const struct p53_image_rrset *rs = p53_image_rrset(img, i);
		if (rs->count == 0) { /* a free entry: the section's zero head (image.h, node_room) */
			t[i] = 0;
			continue;
		}
		const uint8_t *rd = p53_image_rdata(img, rs);
		uint64_t s = p53_csum_add(rd, rs->rdata_len, 0);
		uint64_t g = p53_csum_add(rd + rs->rdata_len, rs->sig_len, 0);
		if (rs->rdata_len & 1)
			g = p53_csum_odd(g);
		g = p53_csum_addc(s, g);
		uint64_t o0 = p53_csum_addc(s, opt_sum(ours, 0, rs->rdata_len & 1u));
		uint64_t o1 = p53_csum_addc(g, opt_sum(ours, 1, (rs->rdata_len + rs->sig_len) & 1u));
		t[i] = p53_csum_fold(s) | (uint64_t)p53_csum_fold(o0) << 16 |
		       (uint64_t)p53_csum_fold(o1) << 32;
	}
}

void p53_fast_sum_build(const void *img, uint16_t payload, uint64_t *t)
{
	sum_range(img, payload, t, 0, (uint32_t)p53_fast_sum_count(img));
}

void p53_fast_sum_build_from(const void *img, uint16_t payload, uint64_t *t, const void *prev,
			     const uint64_t *prev_t)
{
	uint32_t n = (uint32_t)p53_fast_sum_count(img), np = (uint32_t)p53_fast_sum_count(prev);
	const uint8_t *sec = (const uint8_t *)img + p53_image_hdr(img)->rdata_off;
	const uint8_t *psec = (const uint8_t *)prev + p53_image_hdr(prev)->rdata_off;

	for (uint32_t i = 0; i < n; i++) {
		/* At the same place in the section, over as many bytes: prev's records (a patch
		 * appends, never rewrites them: image_patch.c). */
		const struct p53_image_rrset *rs = p53_image_rrset(img, i);
		const struct p53_image_rrset *ps = i < np ? p53_image_rrset(prev, i) : NULL;
		if (ps != NULL && (const uint8_t *)ps - psec == (const uint8_t *)rs - sec &&
		    ps->rdata_len == rs->rdata_len && ps->sig_len == rs->sig_len)
			t[i] = prev_t[i];
		else
			sum_range(img, payload, t, i, i + 1);
	}
}

/* fast_qname()'s second half: the name of `pos` bytes at `name` (its labels walked) lowered
 * into q->lname and hashed (the hash returned), and its words with QTYPE and QCLASS added to
 * *sum. nx_frame() takes it for a name whose labels it knows. */
static inline __attribute__((always_inline)) uint32_t qname_fold(const uint8_t *name, size_t pos,
								 struct p53_query *q, uint64_t *sum)
{
	uint32_t crc = P53_NAME_HASH_SEED;
	uint64_t s = *sum;
	size_t i = 0;
	/* 16 bytes at a time lowered as a vector (p53_lower16), then 8 at most once more. */
	for (; i + 16 <= pos; i += 16) {
		uint64_t a, b;
		memcpy(&a, name + i, 8);
		memcpy(&b, name + i + 8, 8);
		s = p53_csum_addc(p53_csum_addc(s, a), b);
		p53_lower16(q->lname + i, name + i);
		memcpy(&a, q->lname + i, 8);
		memcpy(&b, q->lname + i + 8, 8);
		crc = p53_hash_step8(p53_hash_step8(crc, a), b);
	}
	if (i + 8 <= pos) {
		uint64_t x;
		memcpy(&x, name + i, 8);
		s = p53_csum_addc(s, x);
		x = p53_lower8(x);
		memcpy(q->lname + i, &x, 8);
		crc = p53_hash_step8(crc, x);
		i += 8;
	}
	/* The question's last r = 4..11 bytes, from i (a multiple of 8, so an even offset): in
	   one word, or two, zero-padded. A word that would run past the question is read ending
	   at its end instead (the bytes before it are the message's, at worst its header) and
	   shifted down. */
	size_t r = pos + 4 - i;
	uint64_t x, y = 0;
	if (r > 8) {
		memcpy(&x, name + i, 8);
		memcpy(&y, name + pos + 4 - 8, 8);
		y >>= 8 * (16 - r);
	} else {
		memcpy(&x, name + pos + 4 - 8, 8);
		x >>= 8 * (8 - r);
	}
	*sum = p53_csum_addc(p53_csum_addc(s, x), y);
	size_t t = pos - i;     /* the name's last 0..7 bytes: the low bytes of x */
	if (t != 0) {
		x = p53_lower8(x);
		if (i + 8 <= P53_NAME_MAXLEN)
			memcpy(q->lname + i, &x, 8);    /* past pos: unused bytes of lname */
		else
			memcpy(q->lname + i, &x, t);
		if (t & 4) {
			crc = p53_hash_step4(crc, (uint32_t)x);
			x >>= 32;
		}
		if (t & 2) {
			crc = p53_hash_step2(crc, (uint16_t)x);
			x >>= 16;
		}
		if (t & 1)
			crc = p53_hash_step1(crc, (uint8_t)x);
	}
	return crc;
}

/*
 * The question name as dnsmsg.c parse_qname() reads it (the same label_off, lname, hash),
 * lowered and hashed 8 bytes at a time with the tail in 4-, 2- and 1-byte steps: CRC32-C of a
 * little-endian word is that of its bytes in order, so the hash is p53_name_hash()'s. The
 * same words, as received, are added to *sum: the whole question (the name, QTYPE and QCLASS;
 * it starts at an even offset of the datagram), which the reply echoes (fast_udp()).
 * `left`: the bytes the name may take, with at least 4 more (QTYPE, QCLASS) after them inside
 * the message, which has its 12-byte header before `name`.
 * Returns the name's length, or 0 for a name the general parser must judge (*sum then unset).
 */
static inline __attribute__((always_inline)) size_t fast_qname(const uint8_t *name, size_t left,
							       struct p53_query *q, uint64_t *sum)
{
	size_t pos = 0, labels = 0;
	/* Each length byte inside the message and the name at most 255 bytes (RFC 1035 §2.3.4)
	   in one test: a label running past 255 leaves the next length byte at 255 or later. */
	size_t lim = left < P53_NAME_MAXLEN ? left : P53_NAME_MAXLEN;

	for (;;) {
		if (pos >= lim)
			return 0;
		size_t l = name[pos];
		q->label_off[labels] = (uint8_t)pos;
		/* the root label (0) and a length above 63 in one test */
		if (__builtin_expect(l - 1 >= P53_LABEL_MAXLEN, 0)) {
			if (l != 0)
				return 0;
			break;
		}
		pos += 1 + l;
		labels++;
	}
	pos++;                  /* the root label */
	uint32_t crc = qname_fold(name, pos, q, sum);
	q->qname_len = (uint8_t)pos;
	q->qname_labels = labels;
	q->hash = crc;
	return pos;
}

/*
 * dnsmsg.c parse_opt() for an OPT holding exactly one option, an ECS (RFC 7871 §6) that
 * edns_opt.c p53_edns_ecs_parse() accepts: FAMILY 1 or 2, SOURCE PREFIX-LENGTH at most 32 or
 * 128, SCOPE 0, ADDRESS ceil(SOURCE / 8) bytes with no bit set past SOURCE. The name is read
 * first (the OPT's length follows from it), then the OPT must end the message. Sets
 * q->ecs_off, ecs_len and *op (the OPT); returns the name's length, or 0: anything else, a bad
 * ECS included, for the general parser (which answers FORMERR, answer.c).
 */
/* The OPT at `o`, after a name of nl bytes and its QTYPE and QCLASS, as opt_ecs() takes it,
 * ending the message (`rest` bytes after the header): its ECS's length (8..20), else 0. */
static inline __attribute__((always_inline)) size_t ecs_check(const uint8_t *o, size_t nl, size_t rest)
{
	size_t rdlen = p53_get16(o + 9);
	if (o[0] != 0 || p53_get16(o + 1) != P53_T_OPT || nl + 4 + OPT_LEN + rdlen != rest ||
	    rdlen < 8 || p53_get16(o + 11) != P53_EDNS_ECS || p53_get16(o + 13) != rdlen - 4)
		return 0;
	const uint8_t *e = o + 15;
	unsigned int family = p53_get16(e), source = e[2];
	unsigned int max = family == P53_ECS_FAMILY_IPV4 ? 32 : family == P53_ECS_FAMILY_IPV6 ? 128 : 0;
	if (source > max || max == 0 || e[3] != 0 || rdlen - 8 != (source + 7) / 8 ||
	    ((source & 7) != 0 && (e[4 + source / 8] & (0xffu >> (source & 7))) != 0))
		return 0;
	return rdlen - 4;
}

static __attribute__((noinline)) size_t opt_ecs(const uint8_t *d, size_t dlen, struct p53_query *q,
						const uint8_t **op, uint64_t *sum)
{
	size_t rest = dlen - P53_DNS_HDR_LEN;

	if (rest < 4u + 1 + OPT_LEN + 8)
		return 0;
	size_t nl = fast_qname(d + P53_DNS_HDR_LEN, rest - 4 - OPT_LEN - 8, q, sum);
	if (nl == 0)
		return 0;
	const uint8_t *o = d + P53_DNS_HDR_LEN + nl + 4;
	size_t el = ecs_check(o, nl, rest);
	if (el == 0)
		return 0;
	q->ecs_off = (uint16_t)(o + 15 - d);
	q->ecs_len = (uint16_t)el;
	*op = o;
	return nl;
}

/* pkt.c bad_src4(): sources that are never a unicast client (RFC 1122 §3.2.1.3). */
static inline int bad_src4(const uint8_t a[4])
{
	return a[0] == 0 || a[0] == 127 || a[0] >= 224;
}

/* pkt.c bad_src6(): unspecified ::, loopback ::1, multicast ff00::/8 (RFC 4291 §2.5.2, §2.5.3,
 * §2.7), and an IPv4-mapped address (§2.5.5.2) judged as IPv4. */
static inline int bad_src6(const uint8_t a[16])
{
	uint64_t hi, lo;

	memcpy(&hi, a, 8);
	memcpy(&lo, a + 8, 8);
	lo = rte_be_to_cpu_64(lo);
	if (a[0] == 0xff || (hi == 0 && lo <= 1))
		return 1;
	return hi == 0 && (lo >> 32) == 0xffffu && bad_src4(a + 12);
}

/* pkt.c p53_pkt_for_us(): the destination one of the service addresses. IPv4's first is
 * compared without the loop (most setups have one address per family; the loop and its
 * end test cost the hit path 4 instructions); IPv6's loop as it was (the first compared
 * apart cost its parse 6 with ECS, BENCHMARKS.md round 23). */
static inline __attribute__((always_inline)) int ours4(const struct p53_pkt_addrs *addrs, uint32_t dst)
{
	if (__builtin_expect(addrs->n4 != 0 && addrs->v4[0] == dst, 1))
		return 1;
	for (uint16_t a = 1; a < addrs->n4; a++)
		if (addrs->v4[a] == dst)
			return 1;
	return 0;
}

static inline __attribute__((always_inline)) int ours6(const struct p53_pkt_addrs *addrs,
							const uint8_t dst[16])
{
	uint16_t a;

	for (a = 0; a < addrs->n6 && memcmp(addrs->v6[a], dst, 16) != 0; a++)
		;
	return a != addrs->n6;
}

/*
 * The UDP datagram at `u` (ulen bytes, inside the frame) of either family: the DNS query
 * (dnsmsg.c p53_msg_parse for the fast shape) into `q`, the checksum verified when `verify`
 * (a zero one is the caller's: "none" over IPv4, refused over IPv6), and *keep. `addr`: the
 * pseudo-header's source and destination addresses, `alen` bytes (8 or 32, a constant at each
 * call). Returns 1, or 0 with nothing written but `q`.
 */
/* The answer cache's lookup (qcache.h), made by the parse for fast_frame() before it walks
 * the name: the entry answering the question of `qlen` bytes (5..P53_QCACHE_KEY) at `qs`, its
 * `seed` qlen | key bits << 8 (P53_QC_KEY_BITS, compared; opt_ecs_qc() hashes the ECS
 * option's length above them, qc_store()'s seed); else (a miss, counted) QC_STORE when the question missed in this slot just before (fast_frame()
 * stores its answer), or NULL. The question is read once, as 8-byte words hashed and then
 * compared with the slot's key. A steered entry's record is checked by the answer
 * (qc_steered_answer()). The lookup without ECS is a leaf. */
typedef uint64_t qc_v16 __attribute__((vector_size(16)));

/* name.h p53_hash_step8(), the same value, kept in 64 bits: the crc32 instruction zeroes the
 * high half it leaves, so no step truncates it again. */
static inline uint64_t qc_hash_step(uint64_t h, uint64_t w)
{
#if defined(__SSE4_2__)
	return _mm_crc32_u64(h, w);
#else
	return p53_hash_step8((uint32_t)h, w);
#endif
}
#define QC_STORE ((const struct p53_qcache_entry *)1)
#define QC_HIT(e) ((uintptr_t)(e) > (uintptr_t)QC_STORE)
static inline __attribute__((always_inline)) const struct p53_qcache_entry *
qc_find_body(struct p53_qcache *c, uint64_t gen, const uint8_t *qs, size_t qlen, uint32_t seed)
{
	/* The key's words: the whole ones (n8 bytes), then the last, read ending at the
	   question's end (the bytes before it are the message's) and shifted down: zero-padded,
	   as p53_qcache_key() makes them (a whole word when qlen is a multiple of 8). */
	const size_t n8 = (qlen - 1) & ~(size_t)7;
	const uint32_t want = seed & 0xffffu;   /* qlen and the key bits */
	uint64_t h = seed;
	uint64_t x, last;
	size_t i;

	memcpy(&last, qs + qlen - 8, 8);
	last >>= (64 - 8 * qlen) & 63;
	/* two words a step: half the loop's tests */
	for (i = 0; i + 16 <= n8; i += 16) {
		uint64_t y;
		memcpy(&x, qs + i, 8);
		memcpy(&y, qs + i + 8, 8);
		h = qc_hash_step(qc_hash_step(h, x), y);
	}
	if (i < n8) {
		memcpy(&x, qs + i, 8);
		h = qc_hash_step(h, x);
	}
	h = qc_hash_step(h, last);
	const uint8_t *e = (const uint8_t *)&c->e[h & c->mask];
	const struct p53_qcache_entry *const ent = (const struct p53_qcache_entry *)e;
	/* qlen and bits in one load (adjacent, qcache.h), the key bits of bits kept */
	uint16_t lb;
	memcpy(&lb, &ent->qlen, 2);
	memcpy(&x, e + offsetof(struct p53_qcache_entry, key) + n8, 8);
	uint64_t d = (ent->gen ^ gen) | ((lb & (0xffu | P53_QC_KEY_BITS << 8)) ^ want) | (last ^ x);
	if (d != 0)
		goto miss;      /* another length, shape or last word: the rest not compared */
	/* the whole words (the key holds the question's bytes, zero-padded) in 16-byte
	   compares, the last one ending at n8 (it may overlap the one before) */
	const uint8_t *key = e + offsetof(struct p53_qcache_entry, key);
	if (n8 >= 16) {
		qc_v16 a, b, acc;
		memcpy(&a, qs + n8 - 16, 16);
		memcpy(&b, key + n8 - 16, 16);
		acc = a ^ b;
		for (i = 0; i + 16 < n8; i += 16) {
			memcpy(&a, qs + i, 16);
			memcpy(&b, key + i, 16);
			acc |= a ^ b;
		}
#if defined(__SSE4_1__)
		d = !_mm_testz_si128((__m128i)acc, (__m128i)acc);
#else
		d = acc[0] | acc[1];
#endif
	} else if (n8 != 0) {
		memcpy(&x, qs, 8);
		memcpy(&d, key, 8);
		d ^= x;
	}
	if (d == 0)
		return ent;
miss:
	c->misses++;
	if ((uint32_t)c->hits != c->seen) {     /* a hit since the run began: a new one */
		c->seen = (uint32_t)c->hits;
		c->run = 0;
		c->klim = P53_QCACHE_KEY;
	}
	if (++c->run >= P53_QCACHE_RUN)
		c->klim = 0;                    /* qc_skip() */
	struct p53_qcache_entry *w = &c->e[h & c->mask];
	if (w->cand == (uint32_t)h)
		return QC_STORE;
	w->cand = (uint32_t)h;
	return NULL;
}

/* A question not looked up in a run of misses (klim 0: P53_QCACHE_RUN misses in a row, names
 * asked once as in a random-subdomain flood), counted as a miss: after P53_QCACHE_RUN of them
 * the next is looked up again, and after a hit every one (its miss, if it misses, ends the
 * lookups again: qc_find_body()). The hit's way pays nothing for it: its length is compared
 * with `klim` instead of P53_QCACHE_KEY. */
static inline void qc_skip(struct p53_qcache *c)
{
	c->misses++;
	if ((++c->run & (P53_QCACHE_RUN - 1)) == 0)
		c->klim = P53_QCACHE_KEY;
}

/* The lookup of a question without ECS, its seed the key's length and bits (qc_store()'s). */
static __attribute__((noinline)) const struct p53_qcache_entry *
qc_find(struct p53_qcache *c, uint64_t gen, const uint8_t *qs, size_t qlen, unsigned int bits)
{
	return qc_find_body(c, gen, qs, qlen, (uint32_t)(qlen | bits << 8));
}

/*
 * opt_ecs() with the answer cache (fast_frame()): the name's length found first (its labels
 * walked, nothing lowered or hashed: the OPT's place follows from it), the OPT and ECS checked
 * as opt_ecs() checks them, then the question looked up (qc_find(), with P53_QC_ECS: the key is
 * the question and the OPT's DO, not the ECS data, which each reply echoes). A hit adds the
 * question's sum it keeps to *sum; a miss reads the name as opt_ecs() does. *hit: qc_find()'s.
 */
static __attribute__((noinline)) size_t opt_ecs_qc(const uint8_t *d, size_t dlen, struct p53_query *q,
						   const uint8_t **op, uint64_t *sum,
						   const struct p53_fast_ctx *cx,
						   const struct p53_qcache_entry **hit)
{
	const uint8_t *name = d + P53_DNS_HDR_LEN;
	size_t rest = dlen - P53_DNS_HDR_LEN, nl = 0;

	if (rest < 4u + 1 + OPT_LEN + 8)
		return 0;
	/* fast_qname()'s bounds: each length byte inside the message, at most 255 bytes */
	size_t left = rest - 4 - OPT_LEN - 8;
	size_t lim = left < P53_NAME_MAXLEN ? left : P53_NAME_MAXLEN;
	for (;;) {
		if (nl >= lim || name[nl] > P53_LABEL_MAXLEN)
			return 0;
		if (name[nl] == 0)
			break;
		nl += 1u + name[nl];
	}
	nl++;
	const uint8_t *o = name + nl + 4;
	size_t el = ecs_check(o, nl, rest);
	if (el == 0)
		return 0;
	const struct p53_qcache_entry *e = NULL;
	if (nl + 4 <= P53_QCACHE_KEY) {
		/* the option's length in the hash, compared on a hit (qcache.h elen) */
		unsigned int bits = P53_QC_EDNS | P53_QC_ECS | (o[7] & P53_QC_DO);
		e = qc_find_body(cx->qc, cx->gen, name, nl + 4,
				      (uint32_t)((nl + 4) | bits << 8 | el << 16));
		if (QC_HIT(e) && e->elen != el) {
			cx->qc->misses++;       /* another length in its slot */
			e = NULL;
		}
		*hit = e;
	}
	if (QC_HIT(e))
		*sum = p53_csum_addc(*sum, e->qsum);
	else if (fast_qname(name, left, q, sum) != nl)
		return 0;       /* not reached: the same walk */
	q->ecs_off = (uint16_t)(o + 15 - d);
	q->ecs_len = (uint16_t)el;
	*op = o;
	return nl;
}

/* fast_udp()'s checksum check: the rest of the datagram at `u` (ulen bytes: the length and
 * checksum, the header at d, the OPT of ol bytes at o after a name of nl bytes; `ar * OPT_LEN`
 * when not `ecs`, a constant length the compiler unrolls) added to `k`, what the reply keeps
 * (addresses, protocol, ports, question). 1: the sum is right. */
static inline __attribute__((always_inline)) int udp_sum_ok(const uint8_t *u, const uint8_t *d,
							    uint16_t ulen, uint64_t k,
							    const uint8_t *o, size_t ol, size_t ar,
							    size_t nl, int ecs)
{
	uint64_t s = p53_csum_add(u + 4, 4, k);                 /* length, checksum */
	s = p53_csum_add(d, P53_DNS_HDR_LEN, s);
	s = p53_csum_addc(s, (uint64_t)rte_cpu_to_be_16(ulen)); /* pseudo-header length */
	uint64_t r = __builtin_expect(ecs, 0) ? p53_csum_add(o, ol, 0)
					      : p53_csum_add(o, ar * OPT_LEN, 0);
	if (nl & 1)
		r = p53_csum_odd(r);
	return p53_csum_fold(p53_csum_addc(s, r)) == 0xffff;
}

/* What the reply keeps of the query's checksum before the question: the pseudo-header's
 * addresses (`alen` bytes at `addr`) and next header, the ports. Summed in each of
 * fast_udp()'s ways where it is needed: a cache hit's after the lookup's call, which would
 * otherwise keep it across. */
static inline __attribute__((always_inline)) uint64_t udp_keep0(const uint8_t *u, const uint8_t *addr,
								size_t alen)
{
	return p53_csum_add(u, 4, p53_csum_add(addr, alen, (uint64_t)rte_cpu_to_be_16(17)));
}

/* udp_sum_ok() for a cache hit without ECS: the query's counts, question and OPT but one word
 * are the entry's (their sum its `vsum`, qc_store()), so only the length and checksum, the ID
 * and flags, the pseudo-header's length and the OPT's word from an even offset (payload size,
 * extended RCODE, version, flags: bytes 2..9 of an OPT at an even offset, 3..10 at an odd one;
 * the bytes before it and after are 00 00 29 or zeros) are added to `k`. */
static inline __attribute__((always_inline)) int qc_sum_ok(const uint8_t *u, const uint8_t *d,
							   uint64_t k, const struct p53_qcache_entry *e,
							   size_t qlen, size_t ar)
{
	uint32_t lc, idf;
	uint64_t w = 0;

	memcpy(&lc, u + 4, 4);          /* the length (its low half as loaded: the pseudo-header's
					   too) and checksum */
	memcpy(&idf, d, 4);
	if (ar)
		memcpy(&w, d + P53_DNS_HDR_LEN + ((qlen + 3) & ~(size_t)1), 8);
	/* four values below 2^32: no carry */
	uint64_t s = p53_csum_addc(k, (uint64_t)e->vsum + lc + idf + (lc & 0xffffu));
	return p53_csum_fold(p53_csum_addc(s, w)) == 0xffff;
}

static inline __attribute__((always_inline)) int fast_udp(const uint8_t *u, uint16_t ulen,
							  const uint8_t *addr, size_t alen, int verify,
							  struct p53_query *q, uint64_t *keep,
							  const struct p53_fast_ctx *cx,
							  const struct p53_qcache_entry **hit)
{
	/* DNS: a QUERY, one question, nothing else but one OPT (dnsmsg.c p53_msg_parse). */
	const uint8_t *d = u + 8;
	size_t dlen = (size_t)ulen - 8;
	uint16_t flags = p53_get16(d + 2);
	/* QDCOUNT 1, ANCOUNT 0, NSCOUNT 0, ARCOUNT 0 or 1: the four counts in one load, as bytes
	   00 01 00 00 00 00 00 0x (little-endian: 0x100, ARCOUNT in the top byte). */
	uint64_t counts;
	memcpy(&counts, d + 4, 8);
	counts = rte_le_to_cpu_64(counts);
	uint16_t ar = (uint16_t)(counts >> 56);
	if ((flags & (P53_F_QR | 0x7800u)) != 0 || (counts & ~(1ull << 56)) != 0x100u)
		return 0;
	size_t rest = dlen - P53_DNS_HDR_LEN;       /* after the header */
	if (rest < 4u + 1 + 4 + ar * OPT_LEN)        /* OPT (or QTYPE, QCLASS) past the name */
		return 0;
	/* The OPT, if any, is the message's last 11 bytes when it has no option: checked before
	 * the name. Else it may hold one ECS option (opt_ecs); any other option leaves for the
	 * general parser. */
	const uint8_t *o = d + dlen - ar * OPT_LEN;
	size_t ol = ar * OPT_LEN, nl;
	int ecs = 0;
	/* The UDP checksum (RFC 768; RFC 8200 §8.1): what the reply keeps (addresses, protocol,
	 * ports, the question) is summed apart, for the reply's checksum (p53_fast_reply); the
	 * question by fast_qname(), as it reads the name. The question starts at an even offset
	 * of the datagram; what follows it at the parity of its length. The pseudo-header's
	 * lengths and next header are 16-bit words in IPv4's and 32-bit ones with zero high
	 * halves in IPv6's: the same sum. */
	uint64_t k;
	if (ar == 1 && (o[0] != 0 || p53_get16(o + 1) != P53_T_OPT || p53_get16(o + 9) != 0)) {
		k = udp_keep0(u, addr, alen);
		/* with the answer cache, looked up too (opt_ecs_qc()) */
		nl = cx != NULL && cx->qc != NULL ? opt_ecs_qc(d, dlen, q, &o, &k, cx, hit)
						  : opt_ecs(d, dlen, q, &o, &k);
		if (nl == 0)
			return 0;
		ol = rest - nl - 4;
		ecs = 1;
	} else {
		/* The answer cache (fast_frame()): the question as received, up to the OPT or the
		   message's end, looked up before its name is walked; a hit's question is one
		   that was walked and answered before, byte for byte, whose sum it keeps. */
		size_t qlen = rest - ol;
		const struct p53_qcache_entry *e = NULL;
		if (cx != NULL && cx->qc != NULL) {
			if (qlen <= cx->qc->klim) {
				/* DO as read: P53_QC_DO is the flags byte's bit */
				unsigned int bits = ar ? P53_QC_EDNS | (o[7] & P53_QC_DO) : 0u;
				e = *hit = qc_find(cx->qc, cx->gen, d + P53_DNS_HDR_LEN, qlen, bits);
			} else if (__builtin_expect(cx->qc->klim == 0, 1)) {
				qc_skip(cx->qc);        /* in a run of misses */
			}
		}
		if (QC_HIT(e)) {
			/* A hit: its question's class and type are those of one the fast answer
			   answered (the key); its OPT's version is not in the key. The checksum
			   verified; what its answer reads (qc_answer(); a steered one the source,
			   fast_parse()) written, nothing else. */
			if (ar && o[6] != 0)
				return 0;
			/* what the lookup's call left: read again, not kept across it */
			k = udp_keep0(u, addr, alen);
			if (verify && (u[6] | u[7]) != 0 && !qc_sum_ok(u, d, k, e, qlen, ar))
				return 0;
			*keep = p53_csum_addc(k, e->qsum);
			q->flags = p53_get16(d + 2);
			q->question_end = (uint16_t)(P53_DNS_HDR_LEN + qlen);
			return 1;
		} else {
			k = udp_keep0(u, addr, alen);
			nl = fast_qname(d + P53_DNS_HDR_LEN, rest - 4 - ol, q, &k);
			if (nl == 0 || nl + 4 + ol != rest)
				return 0;
		}
	}
	const uint8_t *qe = d + P53_DNS_HDR_LEN + nl;
	/* The shape the fast answer (checked) takes without looking again: class IN, EDNS version
	   0, none of the types with their own rules (DS, RRSIG, OPT, meta types and ANY, 0).
	   Anything else: the general parser and responder (BADVERS, CHAOS, RFC 8482...). */
	uint16_t qt = p53_get16(qe);
	if (p53_get16(qe + 2) != P53_C_IN || (ar && o[6] != 0) || qt == P53_T_DS ||
	    qt == P53_T_RRSIG || qt == P53_T_OPT || qt >= 249 || qt == 0)
		return 0;

	/* The checksum verified: the rest of the datagram added to what the reply keeps. */
	if (verify && (u[6] | u[7]) != 0 && !udp_sum_ok(u, d, ulen, k, o, ol, ar, nl, ecs))
		return 0;
	*keep = k;

	/* What the fast answer reads (the rest: p53_fast_complete(); the ID and class, which
	   only the general path reads: p53_fast_parse()'s packet fields, fast_pkt()). */
	q->flags = flags;
	q->qtype = qt;
	q->question_end = (uint16_t)(P53_DNS_HDR_LEN + nl + 4);
	q->ecs = 0;
	q->edns = (uint8_t)ar;
	if (ar) {
		q->edns_payload = p53_get16(o + 3);
		q->edns_do = (o[7] & 0x80u) != 0;
	}
	if (__builtin_expect(ecs, 0))
		q->ecs = 1;     /* ecs_off and ecs_len: opt_ecs() */
	return 1;
}

/*
 * p53_fast_parse() for an IPv6 frame (pkt.c parse_ipv6): the fixed header and UDP right after
 * it (an extension header, a fragment header included, leaves for the general checks, which
 * drop it), the UDP checksum not zero (RFC 8200 §8.1: the general checks drop it and count
 * it), to a service address. Out of line: IPv4 frames do not pay for its code.
 */
static inline __attribute__((always_inline)) int parse6(const uint8_t *frame, uint16_t len, int verify,
							 const uint8_t mac[6],
							 const struct p53_pkt_addrs *addrs,
							 struct p53_query *q, uint64_t *keep,
							 const struct p53_fast_ctx *cx,
							 const struct p53_qcache_entry **hit)
{
	if (len < V6_DNS_OFF + P53_DNS_HDR_LEN || p53_get16(frame + 12) != 0x86dd ||
	    (frame[6] & 1) || memcmp(frame, mac, 6) != 0)
		return 0;
	const uint8_t *ip = frame + L3_OFF;
	uint16_t plen = p53_get16(ip + 4);
	/* Any traffic class and flow label; payload length at most what the frame holds (the
	 * rest is Ethernet padding); next header UDP. */
	if ((ip[0] >> 4) != 6 || plen > len - (unsigned int)V6_L4_OFF || ip[6] != 17 || bad_src6(ip + 8))
		return 0;
	const uint8_t *u = ip + 40;
	uint16_t ulen = p53_get16(u + 4);
	if (ulen != plen || ulen < 8 + P53_DNS_HDR_LEN || (u[6] | u[7]) == 0 ||
	    p53_get16(u + 2) != 53 || p53_get16(u) == 0)
		return 0;
	if (!ours6(addrs, ip + 24) || !fast_udp(u, ulen, ip + 8, 32, verify, q, keep, cx, hit))
		return 0;
	q->src = ip + 8;        /* in the frame (fast_pkt() points it at pkt->src_addr) */
	q->src_v6 = 1;
	return 2;
}

/* parse6() without the answer cache (seven arguments, as before it) and with it. */
static __attribute__((noinline)) int fast_parse6(const uint8_t *frame, uint16_t len, int verify,
						 const uint8_t mac[6], const struct p53_pkt_addrs *addrs,
						 struct p53_query *q, uint64_t *keep)
{
	return parse6(frame, len, verify, mac, addrs, q, keep, NULL, NULL);
}

static __attribute__((noinline)) int fast_parse6_qc(const uint8_t *frame, uint16_t len, int verify,
						    const uint8_t mac[6],
						    const struct p53_pkt_addrs *addrs,
						    struct p53_query *q, uint64_t *keep,
						    const struct p53_fast_ctx *cx,
						    const struct p53_qcache_entry **hit)
{
	return parse6(frame, len, verify, mac, addrs, q, keep, cx, hit);
}

/* The packet fields (pkt.c p53_pkt_parse) of a frame fast_parse() read as family `fam`
 * without `pkt`, for the general path and the reply: read from the frame again, only for a
 * frame the fast answer does not answer (p53_fast_frame()). q->src then points at
 * pkt->src_addr, as p53_fast_parse() leaves it. */
static void fast_pkt(const uint8_t *frame, int fam, struct p53_pkt *pkt, struct p53_query *q)
{
	const uint8_t *ip = frame + L3_OFF;
	const uint8_t *u = frame + (fam == 2 ? V6_L4_OFF : V4_L4_OFF);

	pkt->l3_off = L3_OFF;
	pkt->l4_off = (uint16_t)(u - frame);
	pkt->dns_off = (uint16_t)(pkt->l4_off + 8);
	pkt->dns_len = (uint16_t)(p53_get16(u + 4) - 8);
	pkt->ipv6 = fam == 2;
	pkt->vlan = 0;
	memset(pkt->src_addr, 0, sizeof(pkt->src_addr));
	if (fam == 2)
		memcpy(pkt->src_addr, ip + 8, 16);
	else
		memcpy(pkt->src_addr, ip + 12, 4);
	pkt->src_port = p53_get16(u);
	q->src = pkt->src_addr;
	q->id = p53_get16(u + 8);
	q->qclass = P53_C_IN;
}

/* fast_parse6() with the packet fields (p53_fast_parse()): out of line, so that the IPv4
 * parse keeps a tail call to it (as a call, with what the fields need kept across it, it
 * cost p53_fast_parse() 9 instructions per IPv4 query). */
static __attribute__((noinline)) int fast_parse6_pkt(const uint8_t *frame, uint16_t len, int verify,
						     const uint8_t mac[6],
						     const struct p53_pkt_addrs *addrs,
						     struct p53_pkt *pkt, struct p53_query *q,
						     uint64_t *keep)
{
	int fam = fast_parse6(frame, len, verify, mac, addrs, q, keep);

	if (fam != 0)
		fast_pkt(frame, fam, pkt, q);
	return fam;
}

/* p53_fast_parse(): 1 for an IPv4 frame of the shape, 2 for an IPv6 one, 0 for any other.
 * `pkt` NULL (p53_fast_frame(), a constant there): the packet fields are left for fast_pkt(),
 * and q->src points at the source address in the frame, which the answer reads before the
 * reply swaps the addresses. */
static inline __attribute__((always_inline)) int parse_frame(const uint8_t *frame, uint16_t len,
							     int verify, const uint8_t mac[6],
							     const struct p53_pkt_addrs *addrs,
							     struct p53_pkt *pkt, struct p53_query *q,
							     uint64_t *keep, const struct p53_fast_ctx *cx,
							     const struct p53_qcache_entry **hit,
							     const int only)
{
	/* Ethernet II, no tag, IPv4 without options (pkt.c p53_pkt_parse, p53_pkt_for_us);
	 * IPv6: fast_parse6(). `only` (a constant): 0 either family; 2 IPv6 alone (parse6()
	 * inlined); 1 IPv4 alone (its caller took any other EtherType elsewhere). */
	if (only == 2)
		return parse6(frame, len, verify, mac, addrs, q, keep, cx, hit);
	if (len < V4_DNS_OFF + P53_DNS_HDR_LEN)
		return 0;
	if (only == 0 && __builtin_expect(p53_get16(frame + 12) != 0x0800, 0)) {
		if (pkt != NULL)
			return fast_parse6_pkt(frame, len, verify, mac, addrs, pkt, q, keep);
		if (cx != NULL)
			return fast_parse6_qc(frame, len, verify, mac, addrs, q, keep, cx, hit);
		return fast_parse6(frame, len, verify, mac, addrs, q, keep);
	}
	if ((frame[6] & 1) || memcmp(frame, mac, 6) != 0)
		return 0;
	const uint8_t *ip = frame + L3_OFF;
	uint16_t total = p53_get16(ip + 2), frag;
	/* MF and the fragment offset tested as loaded (no byte swap) */
	memcpy(&frag, ip + 6, 2);
	if (ip[0] != 0x45 || total > len - (unsigned int)L3_OFF || (frag & RTE_BE16(0x3fff)) != 0 ||
	    ip[9] != 17 || bad_src4(ip + 12))
		return 0;
	const uint8_t *u = ip + 20;
	uint16_t ulen = p53_get16(u + 4);
	if (ulen != total - 20u || ulen < 8 + P53_DNS_HDR_LEN || p53_get16(u + 2) != 53 ||
	    p53_get16(u) == 0)
		return 0;
	uint32_t dst;
	memcpy(&dst, ip + 16, 4);
	if (!ours4(addrs, dst) || !fast_udp(u, ulen, ip + 12, 8, verify, q, keep, cx, hit))
		return 0;
	if (pkt != NULL) {
		pkt->l3_off = L3_OFF;
		pkt->l4_off = V4_L4_OFF;
		pkt->dns_off = V4_DNS_OFF;
		pkt->dns_len = (uint16_t)(ulen - 8);
		pkt->ipv6 = 0;
		pkt->vlan = 0;
		memcpy(pkt->src_addr, ip + 12, 4);
		memset(pkt->src_addr + 4, 0, sizeof(pkt->src_addr) - 4);
		pkt->src_port = p53_get16(u);
		q->id = p53_get16(u + 8);
		q->qclass = P53_C_IN;
	}
	q->src = pkt != NULL ? pkt->src_addr : ip + 12;
	q->src_v6 = 0;
	return 1;
}


static inline __attribute__((always_inline)) int fast_parse(const uint8_t *frame, uint16_t len,
							    int verify, const uint8_t mac[6],
							    const struct p53_pkt_addrs *addrs,
							    struct p53_pkt *pkt, struct p53_query *q,
							    uint64_t *keep, const struct p53_fast_ctx *cx,
							    const struct p53_qcache_entry **hit)
{
	return parse_frame(frame, len, verify, mac, addrs, pkt, q, keep, cx, hit, 0);
}

/* The UDP header and checksum of the reply, either family: ports swapped, the length, the
 * checksum from what the query left (`keep`: addresses, ports, question) and what the
 * response wrote (the header, the lengths, the records after the question). `hit` (a
 * constant at each call): a cache hit's, `tail` then qc_answer()'s rest (all but the ID and
 * flags, summed here as written). */
static inline __attribute__((always_inline)) void reply_udp(uint8_t *u, const uint8_t *d,
							    uint16_t dns_len,
							    const struct p53_query *q, uint64_t keep,
							    uint64_t tail, const int hit)
{
	uint16_t ulen = (uint16_t)(8 + dns_len);
	const uint16_t qe = hit ? 0 : q->question_end;  /* before the stores, as in fast_reply() */
	uint8_t t[2];
	uint32_t idf;

	memcpy(t, u, 2);
	memcpy(u, u + 2, 2);
	memcpy(u + 2, t, 2);
	p53_put16(u + 4, ulen);
	uint64_t s, r;
	if (hit) {
		memcpy(&idf, d, 4);
		s = p53_csum_addc(keep, idf);
		r = tail;
	} else {
		s = p53_csum_add(d, P53_DNS_HDR_LEN, keep);
		s = p53_csum_addc(s, (uint64_t)rte_cpu_to_be_16(ulen) * 2);
		r = tail != P53_FAST_NO_SUM ? tail : p53_csum_add(d + qe, (size_t)dns_len - qe, 0);
		if (qe & 1)
			r = p53_csum_odd(r);
	}
	uint16_t c = (uint16_t)~p53_csum_fold(p53_csum_addc(s, r));
	if (c == 0)
		c = 0xffff;             /* RFC 768: zero means no checksum */
	memcpy(u + 6, &c, 2);
}

/* The frame's destination and source MACs swapped, its first 16 bytes moved as one (a byte
 * shuffle: the 12 bytes through the stack took 10 moves). */
typedef uint8_t qc_b16 __attribute__((vector_size(16)));
static inline __attribute__((always_inline)) void swap_macs(uint8_t *frame)
{
	qc_b16 v;

	memcpy(&v, frame, 16);
#ifdef __clang__        /* scripts/fuzz.sh's build: clang has no __builtin_shuffle */
	v = __builtin_shufflevector(v, v, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
#else
	const qc_b16 m = {6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15};
	v = __builtin_shuffle(v, m);
#endif
	memcpy(frame, &v, 16);
}

/* p53_fast_reply() over IPv6 (pkt.c p53_pkt_reply): swap MACs and addresses; version 6 with
 * our traffic class and flow label (none), the payload length, hop limit 64. Out of line, as
 * fast_parse6(). */
static inline __attribute__((always_inline)) size_t reply6(uint8_t *frame, uint16_t dns_len,
							   const struct p53_query *q, uint64_t keep,
							   uint64_t tail, const int hit)
{
	uint8_t *ip = frame + L3_OFF;
	uint8_t t[16];

	swap_macs(frame);
	memcpy(t, ip + 8, 16);
	memcpy(ip + 8, ip + 24, 16);
	memcpy(ip + 24, t, 16);
	p53_put32(ip, 6u << 28);
	p53_put16(ip + 4, (uint16_t)(8 + dns_len));
	ip[7] = 64;
	reply_udp(frame + V6_L4_OFF, frame + V6_DNS_OFF, dns_len, q, keep, tail, hit);
	return V6_DNS_OFF + (size_t)dns_len;
}

static __attribute__((noinline)) size_t fast_reply6(uint8_t *frame, uint16_t dns_len,
						    const struct p53_query *q, uint64_t keep,
						    uint64_t tail)
{
	return reply6(frame, dns_len, q, keep, tail, 0);
}

/* reply6() for a cache hit (`rest`: qc_answer()'s) */
static __attribute__((noinline)) size_t qc_reply6(uint8_t *frame, uint16_t dns_len, uint64_t keep,
						  uint64_t rest)
{
	return reply6(frame, dns_len, NULL, keep, rest, 1);
}

/* fast_reply() for IPv4 with the offsets given (constants in p53_fast_frame()). */
static inline __attribute__((always_inline)) size_t fast_reply4(uint8_t *frame, size_t l3_off,
								size_t l4_off, size_t dns_off,
								uint16_t dns_len,
								const struct p53_query *q,
								uint64_t keep, uint64_t tail,
								const int hit)
{
	uint8_t *ip = frame + l3_off;
	uint8_t *u = frame + l4_off;
	uint8_t *d = frame + dns_off;
	uint16_t ulen = (uint16_t)(8 + dns_len);
	uint32_t addr;

	/* pkt.c p53_pkt_reply(): swap MACs, addresses and ports; our TOS, ID, TTL, lengths. */
	swap_macs(frame);
	memcpy(&addr, ip + 12, 4);
	memcpy(ip + 12, ip + 16, 4);
	memcpy(ip + 16, &addr, 4);
	ip[1] = 0;
	p53_put16(ip + 2, (uint16_t)(20 + ulen));
	p53_put16(ip + 4, 0);
	ip[8] = 64;
	/* The header's checksum from its words: version and IHL 0x45 with TOS 0, the total
	 * length, ID 0, the query's flags and fragment offset (0, or DF), TTL 64 with protocol
	 * 17, the addresses (one 8-byte word: their sum does not depend on the swap). */
	uint64_t a;
	uint16_t frag;
	memcpy(&a, ip + 12, 8);
	memcpy(&frag, ip + 6, 2);
	uint64_t hs = (uint64_t)rte_cpu_to_be_16(0x4500) + rte_cpu_to_be_16((uint16_t)(20 + ulen)) +
		      frag + rte_cpu_to_be_16(64u << 8 | 17u);
	uint16_t ic = (uint16_t)~p53_csum_fold(p53_csum_addc(a, hs));
	memcpy(ip + 10, &ic, 2);
	reply_udp(u, d, dns_len, q, keep, tail, hit);
	return dns_off + dns_len;
}

static inline __attribute__((always_inline)) size_t fast_reply(uint8_t *frame,
							       const struct p53_pkt *pkt,
							       uint16_t dns_len,
							       const struct p53_query *q,
							       uint64_t keep, uint64_t tail)
{
	if (__builtin_expect(pkt->ipv6, 0))
		return fast_reply6(frame, dns_len, q, keep, tail);
	/* The offsets read once, before the stores: for the compiler a store through `frame` may
	 * alias *pkt, and it would load pkt (and the fields) again after them. */
	return fast_reply4(frame, pkt->l3_off, pkt->l4_off, pkt->dns_off, dns_len, q, keep, tail, 0);
}

int p53_fast_parse(const uint8_t *frame, uint16_t len, int verify, const uint8_t mac[6],
		   const struct p53_pkt_addrs *addrs, struct p53_pkt *pkt, struct p53_query *q,
		   uint64_t *keep)
{
	return fast_parse(frame, len, verify, mac, addrs, pkt, q, keep, NULL, NULL);
}

size_t p53_fast_reply_sum(uint8_t *frame, const struct p53_pkt *pkt, uint16_t dns_len,
			  const struct p53_query *q, uint64_t keep, uint64_t tail)
{
	return fast_reply(frame, pkt, dns_len, q, keep, tail);
}

size_t p53_fast_reply(uint8_t *frame, const struct p53_pkt *pkt, uint16_t dns_len,
		      const struct p53_query *q, uint64_t keep)
{
	return fast_reply(frame, pkt, dns_len, q, keep, P53_FAST_NO_SUM);
}

/* answer.c count(): the counters a cached answer updates, as fast_answer() would. */
_Static_assert(P53_QTYPE_BUCKETS <= 256, "a type's counter fits qcache.h qbucket");
static inline __attribute__((always_inline)) void qc_count(struct p53_answer_stats *st,
							   const struct p53_qcache_entry *e)
{
	st->qtype[e->qbucket]++;        /* the type's counter, found by qc_store() */
	st->rcode[e->rcode]++;
	st->kind[e->kind]++;
}

/* The client address `a` (4 or 16 bytes, network order) cut to its first `len` bits (at most
 * 32 or 128), host order: IPv4 in *hi's low 32 bits, *lo 0. */
static inline __attribute__((always_inline)) void pick_prefix(int v6, const uint8_t *a, unsigned int len,
							       uint64_t *hi, uint64_t *lo)
{
	if (!v6) {
		uint32_t x = p53_steer_be32(a);
		*hi = len == 0 ? 0 : x & (~0u << (32 - len));
		*lo = 0;
		return;
	}
	uint64_t h = p53_steer_be64(a), l = p53_steer_be64(a + 8);
	*hi = len >= 64 ? h : len == 0 ? 0 : h & (~0ull << (64 - len));
	*lo = len <= 64 ? 0 : l & (~0ull << (128 - len));
}

static inline uint32_t pick_hash(uint64_t id, uint64_t hi, uint64_t lo)
{
	return p53_hash_step8(p53_hash_step8((uint32_t)(id ^ id >> 29), hi), lo);
}

/* What the reply's UDP checksum takes from a hit's response but its first four bytes (ID and
 * flags, summed as written: reply_udp()): the counts as written (`counts`, the 8 bytes as
 * loaded), the UDP length twice (pseudo-header and header) for a response of rlen bytes, and
 * `tail`, the sum of what follows the question (at qe, from an even offset): the entry's `sum`
 * for one without ECS, made once by qc_store(). */
static inline uint64_t qc_rest(uint64_t counts, uint32_t rlen, uint16_t qe, uint64_t tail)
{
	uint64_t s = p53_csum_addc(counts, (uint64_t)rte_cpu_to_be_16((uint16_t)(8 + rlen)) * 2);

	return p53_csum_addc(s, (qe & 1) ? p53_csum_odd(tail) : tail);
}

/* A steered entry's pick ids (qcache.h: in its ans, unused otherwise), IPv4 [0] and IPv6 [1]:
 * P53_QCACHE_PICK_ID() of its record, type, hint for the family and bits, made by qc_store()
 * and again when a hint grows (qc_pick_miss()). */
static inline uint64_t qc_pick_id(const struct p53_qcache_entry *e, int v6)
{
	uint64_t id;

	memcpy(&id, e->ans + 8 * v6, 8);
	return id;
}

static inline void qc_pick_id_set(struct p53_qcache_entry *e, int v6)
{
	uint64_t id = P53_QCACHE_PICK_ID(e->at, e->qtype, e->hint[v6], v6, e->bits);

	memcpy(e->ans + 8 * v6, &id, 8);
}

/* A steered entry's OPT (qcache.h: in its ans after the pick ids), 16 bytes: answer.c
 * put_opt() as fast_answer() writes it (00 | 00 29 | P P' | 00 | 00 | D | 00 | 00 00) and
 * zeros; made by qc_store() (our payload size is the generation's). */
#define QC_STEER_OPT 16

static inline void qc_steer_opt_set(const struct p53_fast_ctx *c, struct p53_qcache_entry *e)
{
	uint64_t w[2] = {
		(uint64_t)P53_T_OPT << 16 | (uint64_t)P53_BE16(c->ours) << 24 |
			(uint64_t)((e->bits & P53_QC_DO) ? 0x80u : 0u) << 56,
		0,
	};

	memcpy(e->ans + QC_STEER_OPT, w, 16);
}

/* A steered entry's record (qcache.h: in its ans after the OPT), for qc_ecs_answer(): the
 * generation of the table it was found in (p53_steer_at(), from the entry's index) and its
 * offset there, so a hit in the same table reads it without the lookup. ~0 (qc_store()): none;
 * not kept for a table never published (generation 0). The entry's image is the cache's. */
#define QC_STEER_REC P53_QCACHE_STEER_REC

static inline void qc_steer_rec_set(struct p53_qcache_entry *e, uint64_t tg, const void *t,
				    const struct p53_steer_rec *r)
{
	uint64_t rec[2] = {tg != 0 ? tg : ~0ull, (uint64_t)((const uint8_t *)r - (const uint8_t *)t)};

	memcpy(e->ans + QC_STEER_REC, rec, 16);
}

/* A word's first n bytes as loaded: x & qc_keep[n + 8] for n from -8 to 16 (none for n <= 0,
 * all for n >= 8), no clamp. */
static const uint64_t qc_keep[25] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xffff, 0xffffff, 0xffffffffull, 0xffffffffffull,
	0xffffffffffffull, 0xffffffffffffffull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull,
	~0ull, ~0ull,
};

/* The `len` bytes at s to d (len up to P53_QCACHE_MAX_RESPONSE), in 16-byte moves, the last
 * one ending at len: no call (the steered hit stays a leaf), nothing read past s + len. */
static inline __attribute__((always_inline)) void qc_copy(uint8_t *d, const uint8_t *s, uint32_t len)
{
	if (__builtin_expect(len < 16, 0)) {
		for (uint32_t i = 0; i < len; i++)
			d[i] = s[i];
		return;
	}
	for (uint32_t i = 16; i < len; i += 16) {
		uint8_t x[16];
		memcpy(x, s + i - 16, 16);
		memcpy(d + i - 16, x, 16);
	}
	memcpy(d + len - 16, s + len - 16, 16);
}

/* A pick's records (with DO=1 their RRSIGs) from table `t` and our OPT after the question, as
 * steered_rrs() writes them without ECS. Returns the answer count << 16 | the response's
 * length (qc_steered_answer()'s); *rest (qc_answer()'s) from the pick. */
static inline __attribute__((always_inline)) uint32_t qc_pick_put(const struct p53_qcache_entry *e,
								   const void *t, uint16_t qe,
								   const struct p53_qcache_pick *p,
								   uint8_t *msg, uint64_t *rest)
{
	uint32_t len = p->len, opt = (e->bits & P53_QC_EDNS) ? OPT_LEN : 0u;

	qc_copy(msg + qe, (const uint8_t *)t + p->off, len);
	if (opt != 0)
		memcpy(msg + qe + len, e->ans + QC_STEER_OPT, 16);      /* the room was checked */
	*rest = p->rest;
	return (uint32_t)p->an << 16 | (qe + len + opt);
}

/* qc_steered_answer() when the pick cache has no variant for the client: the record at the
 * entry's index in table `t` (qc_find() saw it in this table or an earlier one: a table
 * published since may have none there, then 0: the general checks answer), the variant the
 * table picks for the client with its scope: where its bytes are, their length, record count
 * and qc_answer()'s rest for them with our OPT, written as a hit's (qc_pick_put()). Kept at
 * the entry's hint for the family, raised to the scope when longer (qcache.h), for this
 * image and table; not when the scope is past P53_QCACHE_PICK_MAX4 / _MAX6 or the table was
 * never published (generation 0). */
static __attribute__((noinline)) uint32_t qc_pick_miss(const struct p53_fast_ctx *c,
						       struct p53_qcache_entry *e, const void *t,
						       const struct p53_query *q, uint8_t *msg,
						       uint64_t *rest)
{
	STEP(QC_PICK_MISS);
	const struct p53_steer_rec *r = NULL;
	const int v6 = q->src_v6, dnssec = (e->bits & P53_QC_DO) != 0;
	const uint16_t qe = q->question_end;
	struct p53_qcache *qc = c->qc;
	struct p53_qcache_pick m, *p = &m;
	uint8_t sc;

	if (!p53_steer_at(t, p53_image_hdr(c->img)->steer_layout, e->at, e->qtype, &r) || r == NULL)
		return 0;
	const struct p53_steer_variant *v = p53_steer_pick_addr_s(t, r, v6, q->src, &sc, 1);
	uint32_t len = v->rdata_len + (dnssec ? v->sig_len : 0u);
	uint32_t opt = (e->bits & P53_QC_EDNS) ? OPT_LEN : 0u;
	if (qe + len + opt > P53_QCACHE_MAX_RESPONSE)
		return 0;
	uint64_t sum = dnssec ? v->sig_sum : v->sum, counts;
	if (opt != 0)
		sum += opt_sum(c->ours, dnssec, len & 1u);
	m.off = (uint32_t)(p53_steer_rdata(t, v) - (const uint8_t *)t);
	m.len = (uint16_t)len;
	m.an = (uint16_t)(v->count + (dnssec ? v->sig_count : 0u));
	memcpy(&counts, e->counts, 8);
	counts |= (uint64_t)rte_cpu_to_be_16(m.an) << 16;
	m.rest = qc_rest(counts, qe + len + opt, qe, sum);
	qc->pick_misses++;
	uint64_t tg = p53_steer_hdr(t)->generation;
	if (tg != 0 && sc <= (v6 ? P53_QCACHE_PICK_MAX6 : P53_QCACHE_PICK_MAX4)) {
		if (sc > e->hint[v6]) {
			e->hint[v6] = sc;
			qc_pick_id_set(e, v6);
		}
		uint64_t hi, lo, id = qc_pick_id(e, v6);
		pick_prefix(v6, q->src, e->hint[v6], &hi, &lo);
		p = &qc->pick[pick_hash(id, hi, lo) & qc->mask];
		*p = m;
		p->igen = c->gen;
		p->tgen = tg;
		p->hi = hi;
		p->lo = lo;
		p->id = id;
		p->scope = sc;
	}
	return qc_pick_put(e, t, qe, p, msg, rest);
}

/* A steered entry's answer (qc_answer()): the variant the table published now picks for the
 * client, from the pick cache (qcache.h) when it holds one for the client's prefix at the
 * entry's hint, for this image and table generation, else qc_pick_miss(); its records (and
 * with DO=1 its RRSIGs) and our OPT, as steered_rrs() writes them without ECS; the answer
 * count and qc_answer()'s rest. 0: the general checks answer (no record at the index, or
 * more than P53_QCACHE_MAX_RESPONSE bytes: the client's size could matter). `e`: the
 * worker's own entry (its pick hints are written). */
static __attribute__((noinline)) uint32_t qc_steered_answer(const struct p53_fast_ctx *c,
							    struct p53_qcache_entry *e,
							    const struct p53_query *q, uint8_t *msg,
							    uint64_t *rest)
{
	STEP(QC_STEERED);
	const void *t = __atomic_load_n(c->conf->steer, __ATOMIC_ACQUIRE);
	const int v6 = q->src_v6;
	const struct p53_qcache_pick *p;

	if (t == NULL)
		return 0;
	uint64_t hi, lo, id = qc_pick_id(e, v6);
	pick_prefix(v6, q->src, e->hint[v6], &hi, &lo);
	p = &c->qc->pick[pick_hash(id, hi, lo) & c->qc->mask];
	/* an empty pick's image generation (0) is never the cache's: no test for it */
	if (((p->igen ^ c->gen) | (p->tgen ^ p53_steer_hdr(t)->generation) | (p->hi ^ hi) |
	     (p->lo ^ lo) | (p->id ^ id)) != 0)
		return qc_pick_miss(c, e, t, q, msg, rest);
	c->qc->pick_hits++;
	return qc_pick_put(e, t, q->question_end, p, msg, rest);
}

/* x's first n bytes as loaded (little-endian: its low ones), the rest zero; n may be out of
 * 0..8. */
static inline uint64_t qc_low_bytes(uint64_t x, int n)
{
	static const uint64_t keep[9] = {
		0, 0xff, 0xffff, 0xffffff, 0xffffffffull, 0xffffffffffull, 0xffffffffffffull,
		0xffffffffffffffull, ~0ull,
	};

	return x & keep[n < 0 ? 0 : n > 8 ? 8 : n];
}

/*
 * An entry's answer (qc_answer()) for a query with ECS (P53_QC_ECS): the records, the entry's
 * or (steered) the variant qc_pick() gives for the ECS address at its SOURCE PREFIX-LENGTH (the
 * packet's source for SOURCE 0, RFC 7871 §7.1.2), then our OPT with the ECS echoed (§7.2.1:
 * FAMILY, SOURCE and ADDRESS as received, the pick's SCOPE, 0 for SOURCE 0 and a static
 * answer), as fast_answer() writes them; the counts and the sum after the question. The
 * query's OPT ends the message, where the records go: read first (40 bytes, the most its OPT
 * takes and more: the room after the message is the buffer's, checked). Its ECS option, in
 * place in the echo: the query's with the SCOPE (0 in a query) set. 0: the general checks
 * answer (nothing written): no record at a steered entry's index, or more than
 * P53_QCACHE_MAX_RESPONSE bytes with this query's ECS (the client's size could matter).
 */
static __attribute__((noinline)) uint16_t qc_ecs_answer(const struct p53_fast_ctx *c,
							struct p53_qcache_entry *e,
							const struct p53_query *q, uint8_t *msg,
							uint16_t cap, uint16_t *an, uint64_t *tail)
{
	STEP(QC_ECS);
	uint16_t qe = q->question_end;
	/* the OPT: 00 | 00 29 | payload | ext-rcode, version | flags | RDLENGTH | 00 08 | length |
	   FAMILY | SOURCE | SCOPE | ADDRESS: bytes 0..7, 8..15 (FAMILY's first byte last), 16..
	   (its second first: 1 or 2), as words w[0..4] */
	uint64_t w[5];
	memcpy(w, msg + qe, sizeof(w));
	const unsigned int source = (uint8_t)(w[2] >> 8);
	uint32_t len = e->len;
	uint64_t sum = e->sum;
	uint8_t scope = 0;
	const uint8_t *rd = e->ans;

	if (e->bits & P53_QC_STEERED) {
		/* steered_rrs() with ECS: the record at the entry's index (none: the general
		   checks), the variant for the ECS ADDRESS zero-padded past SOURCE (nothing set
		   past it: opt_ecs()), FAMILY 2 IPv6, with its scope; for SOURCE 0 the packet's
		   source, SCOPE 0. Not from the pick cache: resolvers' ECS prefixes are many, most
		   asked once (its lookup and store cost more than they saved, BENCHMARKS.md). */
		const void *t = __atomic_load_n(c->conf->steer, __ATOMIC_ACQUIRE);
		const struct p53_steer_rec *r = NULL;
		const struct p53_steer_variant *v;
		const int dnssec = (e->bits & P53_QC_DO) != 0;
		if (t == NULL)
			return 0;
		uint64_t rec[2], tg = p53_steer_hdr(t)->generation;
		memcpy(rec, e->ans + QC_STEER_REC, 16);
		if (__builtin_expect(rec[0] == tg, 1)) {
			r = (const struct p53_steer_rec *)((const uint8_t *)t + rec[1]);
		} else {
			if (!p53_steer_at(t, p53_image_hdr(c->img)->steer_layout, e->at, e->qtype, &r) ||
			    r == NULL)
				return 0;
			qc_steer_rec_set(e, tg, t, r);
		}
		if (source > 0) {
			uint64_t ea[2];
			int n = q->ecs_len - 4;         /* the ADDRESS's bytes, 0..16 */
			ea[0] = (w[2] >> 24 | w[3] << 40) & qc_keep[n + 8];
			ea[1] = (w[3] >> 24 | w[4] << 40) & qc_keep[n];
			v = p53_steer_pick_addr_s(t, r, (uint8_t)w[2] == P53_ECS_FAMILY_IPV6,
						  (const uint8_t *)ea, &scope, 1);
		} else {
			v = p53_steer_pick_addr_s(t, r, q->src_v6, q->src, &scope, 0);
			scope = 0;
		}
		len = v->rdata_len + (dnssec ? v->sig_len : 0u);
		sum = dnssec ? v->sig_sum : v->sum;
		rd = p53_steer_rdata(t, v);
		*an = (uint16_t)(v->count + (dnssec ? v->sig_count : 0u));
	}
	/* read after the pick: one register fewer across it */
	const int olen = OPT_LEN + 4 + q->ecs_len;      /* 19..35 */
	if ((uint32_t)qe + len + (uint32_t)olen > P53_QCACHE_MAX_RESPONSE || (uint32_t)qe + len + 40 > cap)
		return 0;
	if (e->bits & P53_QC_STEERED) {
		copy_rrs(msg + qe, rd, len);
	} else {
		/* in 16-byte moves: the entry's bytes past len are its own, the room was checked */
		for (uint32_t i = 0; i < len; i += 16)
			memcpy(msg + qe + i, rd + i, 16);
	}
	/* answer.c put_opt() as fast_answer(): 00 | 00 29 | P P' | 00 | 00 | D, then 00 and the
	   query's RDLENGTH, option code and length, FAMILY; SOURCE, our SCOPE, ADDRESS */
	uint64_t d = (e->bits & P53_QC_DO) ? 0x80u : 0u;
	uint64_t o[5] = {
		(uint64_t)P53_T_OPT << 16 | (uint64_t)P53_BE16(c->ours) << 24 | d << 56,
		w[1] & ~0xffull,
		w[2] | (uint64_t)scope << 16,
		w[3],
		w[4],
	};
	memcpy(msg + qe + len, o, sizeof(o));
	/* its sum: olen bytes from the records' end (after len bytes: odd or even) */
	uint64_t s = p53_csum_addc(p53_csum_addc(o[0], o[1]), qc_low_bytes(o[2], olen - 16));
	s = p53_csum_addc(s, qc_low_bytes(o[3], olen - 24));
	s = p53_csum_addc(s, qc_low_bytes(o[4], olen - 32));
	if (len & 1)
		s = p53_csum_odd(s);
	*tail = p53_csum_addc(sum, s);
	return (uint16_t)(qe + len + (uint32_t)olen);
}

/* The response of a cache hit: what follows the question, the header's flags (the query's
 * opcode, RD and CD with the entry's QR, AA and RCODE, as fast_answer()) and counts, the
 * counters fast_answer() adds; *rest: qc_rest()'s sum for it. Returns its length, 0 when it
 * does not fit `cap` (or, steered, could depend on the client's size): the general checks
 * read the frame again. `r`: the room after msg as cap before its clamp to 16 bits. */
static inline __attribute__((always_inline)) uint16_t qc_answer(const struct p53_fast_ctx *c,
								const struct p53_qcache_entry *e,
								const struct p53_query *q, uint8_t *msg,
								uint16_t cap, uint32_t r, uint64_t *rest)
{
	uint16_t qe = q->question_end, rlen;

	/* r: the room from msg, cap's before its clamp (the test's constants folded) */
	if ((uint32_t)qe + P53_QCACHE_ANS + 16 > r)
		return 0;                       /* not for an mbuf: at least 2 KB of room */
	if (__builtin_expect(e->bits & (P53_QC_STEERED | P53_QC_ECS), 0)) {
		/* the worker's own table, found through the parse's const pointer */
		struct p53_qcache_entry *w = (struct p53_qcache_entry *)(uintptr_t)e;
		uint16_t an = 0;        /* steered: the pick's (the entry's counts have 0) */
		uint64_t tail, counts;
		if (e->bits & P53_QC_ECS) {
			rlen = qc_ecs_answer(c, w, q, msg, cap, &an, &tail);
		} else {
			uint64_t sr;    /* a local of its own: `rest` not taken by the call */
			uint32_t r = qc_steered_answer(c, w, q, msg, &sr);
			rlen = (uint16_t)r;
			an = (uint16_t)(r >> 16);
			*rest = sr;
		}
		if (rlen == 0)
			return 0;
		memcpy(&counts, e->counts, 8);
		counts |= (uint64_t)rte_cpu_to_be_16(an) << 16;
		memcpy(msg + 4, &counts, 8);
		if (e->bits & P53_QC_ECS)
			*rest = qc_rest(counts, rlen, qe, tail);
	} else {
		/* in 16-byte moves, the first two whatever len (most answers fit them): the
		   entry's bytes past len are its own, the room was checked */
		uint32_t len = e->len;  /* read once: the stores below may alias it */
		memcpy(msg + qe, e->ans, 16);
		memcpy(msg + qe + 16, e->ans + 16, 16);
		for (uint32_t i = 32; i < len; i += 16)
			memcpy(msg + qe + i, e->ans + i, 16);
		memcpy(msg + 4, e->counts, 8);
		*rest = e->sum;
		rlen = (uint16_t)(qe + len);
	}
	p53_put16(msg + 2, (uint16_t)(e->hflags | (q->flags & (0x7800u | P53_F_RD | P53_F_CD))));
	qc_count(c->st, e);
	c->qc->hits++;
	return rlen;
}

/* The steered record's index (image.h node steer) when the positive answer fast_answer()
 * gave to `q` is a steered RRset picked from the table (answer.c steered()), else 0. Its node
 * and RRset looked up again: only for a store, with a steering table published. */
static uint32_t qc_steered(const struct p53_fast_ctx *c, const struct p53_query *q)
{
	const void *img = c->img;
	const void *t = c->conf->steer != NULL ? __atomic_load_n(c->conf->steer, __ATOMIC_ACQUIRE) : NULL;

	if (t == NULL || q->qname_labels > p53_image_hdr(img)->max_labels)
		return 0;
	const struct p53_image_node *n = find(img, q->lname, q->qname_len, q->hash);
	if (n == NULL)
		return 0;       /* a wildcard's: the fast answer declines a steered one */
	uint32_t rsi;
	const struct p53_image_rrset *rs = p53_image_node_find(img, n, q->qtype, &rsi);
	return rs != NULL && (rs->flags & P53_RRSET_STEERED) != 0 ? (n->steer < 0x8000u ? n->steer : UINT32_MAX)
								 : 0;
}

/* Store the response fast_answer() wrote for `q` (rlen bytes at msg; `tail`: the sum of what
 * follows the question, or P53_FAST_NO_SUM) in the answer cache, when the client's payload
 * size could not have changed it (qcache.h). A steered answer is stored as its record's index
 * (the variant is picked per hit) when the table holds it there, else not at all. */
static __attribute__((noinline)) void qc_store(const struct p53_fast_ctx *c, const struct p53_query *q,
					       const uint8_t *msg, uint16_t rlen, uint64_t tail)
{
	struct p53_qcache *qc = c->qc;
	uint16_t qe = q->question_end;
	size_t qlen = (size_t)qe - P53_DNS_HDR_LEN;
	uint16_t alen = (uint16_t)(rlen - qe);

	if (rlen > P53_QCACHE_MAX_RESPONSE || alen > P53_QCACHE_ANS || qlen > P53_QCACHE_KEY)
		return;
	uint16_t flags = p53_get16(msg + 2);
	uint8_t rcode = (uint8_t)(flags & 0xfu);
	uint16_t an = p53_get16(msg + 6);
	uint8_t kind = rcode == P53_RCODE_REFUSED ? P53_ANS_REFUSED :
		       rcode == P53_RCODE_NXDOMAIN ? P53_ANS_NXDOMAIN :
		       an > 0 ? P53_ANS_ANSWER : (flags & P53_F_AA) ? P53_ANS_NODATA : P53_ANS_REFERRAL;
	unsigned int bits = q->edns ? P53_QC_EDNS | (q->edns_do ? P53_QC_DO : 0u) : 0u;
	/* A referral leaves optional glue out when it does not fit (referral()): one made with
	 * less room than another query with the key may get (a smaller payload size than ours) is
	 * not stored. Without EDNS every query gets 512 bytes; with ECS the key holds the option's
	 * length, so the OPT's. */
	if (kind == P53_ANS_REFERRAL && q->edns && limit_of(c->ours, q, UINT16_MAX) < c->ours)
		return;
	unsigned int hb = bits;         /* hashed: qc_find()'s seed, opt_ecs_qc()'s with ECS */
	if (q->ecs) {
		/* The records alone (the OPT and the ECS echoed: per reply, qc_ecs_answer()); not
		 * REFUSED, whose EDE follows the ECS. */
		if (kind == P53_ANS_REFUSED)
			return;
		bits |= P53_QC_ECS;
		hb = bits | (unsigned int)q->ecs_len << 8;
		alen = (uint16_t)(alen - OPT_LEN - 4u - q->ecs_len);
		tail = P53_FAST_NO_SUM;
	}
	uint32_t at = kind == P53_ANS_ANSWER ? qc_steered(c, q) : 0;
	if (at != 0) {
		const struct p53_steer_rec *r;
		const void *t = __atomic_load_n(c->conf->steer, __ATOMIC_ACQUIRE);
		if (at == UINT32_MAX || !p53_steer_at(t, p53_image_hdr(c->img)->steer_layout, at,
						      q->qtype, &r) || r == NULL)
			return;         /* looked up by name, or the image's RRset: not cached */
		bits |= P53_QC_STEERED;
	}
	uint64_t k[P53_QCACHE_KEY / 8];
	p53_qcache_key(msg + P53_DNS_HDR_LEN, qlen, k);
	struct p53_qcache_entry *e = &qc->e[p53_qcache_hash(k, qlen, hb) & qc->mask];
	e->gen = c->gen;
	uint64_t qs = p53_csum_add(msg + P53_DNS_HDR_LEN, qlen, 0);
	e->qsum = p53_csum_fold(qs);
	if (!q->ecs) {
		/* qc_sum_ok()'s: the query's counts and question, and of an OPT at an odd offset
		   its 00 00 29 before the word a hit loads (at an even one: 00 00, zeros) */
		const uint8_t qd[8] = {0, 1, 0, 0, 0, 0, 0, q->edns}, opt[3] = {0, 0, P53_T_OPT};
		uint64_t v = p53_csum_add(qd, 8, qs);
		if (q->edns && (qlen & 1))
			v = p53_csum_addc(v, p53_csum_odd(p53_csum_add(opt, 3, 0)));
		e->vsum = p53_csum_fold(v);
	}
	if (tail == P53_FAST_NO_SUM)
		tail = p53_csum_add(msg + qe, alen, 0);
	uint64_t counts;
	memcpy(&counts, msg + 4, 8);
	if (at != 0)
		counts &= ~(0xffffull << 16);   /* ANCOUNT: the pick's, per reply */
	memcpy(e->counts, &counts, 8);
	/* ECS: the records' sum (the OPT is the reply's); else qc_answer()'s, as sent */
	e->sum = q->ecs ? tail : at != 0 ? 0 : qc_rest(counts, rlen, qe, tail);
	e->len = alen;
	e->hflags = (uint16_t)(flags & ~(0x7800u | P53_F_RD | P53_F_CD));
	e->qtype = q->qtype;
	e->qbucket = (uint8_t)(q->qtype < P53_QTYPE_BUCKETS - 1 ? q->qtype : P53_QTYPE_BUCKETS - 1);
	e->qlen = (uint8_t)qlen;
	e->bits = (uint8_t)bits;
	e->kind = kind;
	e->rcode = rcode;
	e->at = at;
	e->elen = q->ecs ? (uint8_t)q->ecs_len : 0;
	e->hint[0] = e->hint[1] = 0;
	memcpy(e->key, k, sizeof(k));
	if (at == 0) {
		memcpy(e->ans, msg + qe, alen);
	} else {
		uint64_t none[2] = {~0ull, 0};
		qc_pick_id_set(e, 0);
		qc_pick_id_set(e, 1);
		qc_steer_opt_set(c, e);
		memcpy(e->ans + QC_STEER_REC, none, 16);
	}
	qc->stores++;
	/* a question asked again: the run of misses (qc_skip()) ends */
	qc->run = 0;
	qc->klim = P53_QCACHE_KEY;
}

/* p53_fast_frame() without `pkt`: the reply's length, 0 (not read), or minus the family of a
 * frame read and declined (its caller fills `pkt`: fast_pkt()). Six arguments, all in
 * registers, and no pointer alive across the answer for the declined case. Out of line:
 * p53_fast_burst() calls it per frame (inlined there, the loop's state took registers from
 * it: +12 instructions per query). With an answer cache (qcache.h) the parse looks the
 * question up first; a hit is answered from it, a miss answered here is stored. `only`
 * (parse_frame()'s, a constant): 1 or 2, the family is a constant after the parse. */
static inline __attribute__((always_inline)) int frame_step(const struct p53_fast_ctx *c,
							     struct p53_query *q, uint8_t *frame,
							     uint16_t len, uint32_t room, int verify,
							     const int cached, const struct rte_mbuf *m,
							     const int only, const int tails)
{
	uint64_t keep, tail;
	const struct p53_qcache_entry *hit = NULL;

	int fam = parse_frame(frame, len, verify, c->mac, c->addrs, NULL, q, &keep,
			      cached ? c : NULL, cached ? &hit : NULL, only);
	if (fam == 0)
		return P53_FAST_NOT_READ;
	if (only != 0)
		fam = only;
	/* m (fast_mbuf_qc()): the room read after the parse, one register fewer across it */
	if (m != NULL)
		room = (uint16_t)(m->buf_len - rte_pktmbuf_headroom(m));
	/* The offsets fast_parse() set, as constants for the family (not read back from pkt). The
	   response may grow into the room after the message (worker.c reply()). */
	const uint32_t dns_off = fam == 2 ? V6_DNS_OFF : V4_DNS_OFF;
	uint32_t r = room - dns_off;
	/* an mbuf's room is below 2^16 */
	uint16_t cap = m == NULL && r > UINT16_MAX ? UINT16_MAX : (uint16_t)r;
	uint8_t *msg = frame + dns_off;
	uint16_t rlen;
	if (QC_HIT(hit)) {
		uint64_t rest = 0;      /* not `tail`, whose address the miss's calls take */
		rlen = qc_answer(c, hit, q, msg, cap, r, &rest);
		if (rlen == 0)
			return P53_FAST_NOT_READ;       /* the general checks read it all again */
		STEP(QC_HIT);
		if (__builtin_expect(fam == 2, 0))
			return (int)qc_reply6(frame, rlen, keep, rest);
		return (int)fast_reply4(frame, L3_OFF, V4_L4_OFF, V4_DNS_OFF, rlen, q, keep, rest, 1);
	} else {
		rlen = __builtin_expect(q->ecs, 0) ? ecs_answer(c->img, c->conf, msg, cap, c->st, q, &tail, 2,
								c->ours)
						   : fast_answer(c->img, c->conf, msg, cap, c->st, q, NULL, 0,
								 &tail, 2, c->ours, NULL, c->nx, tails);
		if (rlen == 0)
			return -fam;
		/* a miss answered, the second in a row for its question: stored */
		if (__builtin_expect(hit == QC_STORE, 0)) {
			STEP(QC_STORE);
			qc_store(c, q, msg, rlen, tail);
		}
	}
	if (__builtin_expect(fam == 2, 0))
		return (int)fast_reply6(frame, rlen, q, keep, tail);
	return (int)fast_reply4(frame, L3_OFF, V4_L4_OFF, V4_DNS_OFF, rlen, q, keep, tail, 0);
}

/* The frame step without an answer cache (its code has none of the cache's) and with one,
 * for a question of a run of misses that is looked up (fast_burst_look(), fast_frame_run()).
 * Both answer a name error from the one kept (`tails`, p53_fast_nx); the cache's step for a
 * burst (mbuf_step()) does not: its hits paid 9 instructions for it (round 26). */
static __attribute__((noinline)) int fast_frame(const struct p53_fast_ctx *c, struct p53_query *q,
						uint8_t *frame, uint16_t len, uint32_t room, int verify)
{
	STEP(FRAME);
	return frame_step(c, q, frame, len, room, verify, 0, NULL, 0, 1);
}

static __attribute__((noinline)) int fast_frame_qc(const struct p53_fast_ctx *c, struct p53_query *q,
						   uint8_t *frame, uint16_t len, uint32_t room,
						   int verify)
{
	STEP(FRAME_QC);
	return frame_step(c, q, frame, len, room, verify, 1, NULL, 0, 1);
}

/*
 * A frame tried as one more question of the kept name error's shape (p53_fast_nx `flen`): a
 * random-subdomain flood asks names of one length below one encloser, with EDNS and DO=0, and
 * fast_answer() answers each with the kept reply. For a frame of the kept query's length in
 * family `fam` (a constant: 1 IPv4, 2 IPv6, whose frame is 20 bytes longer), the checks of
 * parse_frame() (parse6()) and fast_udp() for that shape alone, at the offsets the length
 * fixes: no label walk (the first label's length is the kept question's less its parent's,
 * and the parent must be the encloser's name, compared lowered), the name lowered, hashed and
 * looked up, and a miss answered with the kept reply and fast_answer()'s header and counters.
 * `vary` (a constant): a frame whose length differs from the kept one's by as much as its
 * first label's does (1 to 63 bytes), answered from the same tail with its pointers to the
 * apex in the question moved (nx_ptrs()); its own instances (nx_frame_any(), IPv6
 * nx_frame_any6()), so that the kept length's keep their code (a shared one cost nxdomain 25
 * instructions). The family is checked first: an IPv4 frame's length may be any IPv6
 * instance's and the other way round (a first label 20 bytes longer), and a frame of the
 * other family at a kept length goes to that family's instance for any length.
 * Anything else, a name in the index included, goes to fast_frame() (a tail call), which
 * reads the frame again: nothing has been written but `q`; or to fast_frame_qc() for the
 * question a run of misses looks up (`klim` not 0: fast_burst_look(), fast_frame_run()).
 * fast_frame()'s own code is not touched (its registers: every earlier step inside it moved
 * the other mixes).
 */
static int nx_frame_any(const struct p53_fast_ctx *c, struct p53_query *q, uint8_t *frame,
			uint16_t len, uint32_t room, int verify);
static int nx_frame_any6(const struct p53_fast_ctx *c, struct p53_query *q, uint8_t *frame,
			 uint16_t len, uint32_t room, int verify);

static inline __attribute__((always_inline)) int nx_step(const struct p53_fast_ctx *c,
							  struct p53_query *q, uint8_t *frame,
							  uint16_t len, uint32_t room, int verify,
							  const int fam, const int vary)
{
	const struct p53_fast_nx *x = c->nx;
	const uint32_t l4_off = fam == 2 ? V6_L4_OFF : V4_L4_OFF;
	const uint32_t dns_off = l4_off + 8;

	STEP(NX_FRAME);
	if (vary && fam == 2)
		STEP(NX_ANY6);
	else if (vary)
		STEP(NX_ANY);
	/* the family first: a frame of the other one, whose length may be of any instance's,
	   goes to that family's instance for any length (nx_frame_any(), nx_frame_any6()) */
	if (p53_get16(frame + 12) != (fam == 2 ? 0x86dd : 0x0800))
		goto other;
	/* the length, then the first label's (the kept question's, whose parent is the
	   encloser: with the parent compared below, the name's labels are known) */
	uint32_t lab = vary ? (uint32_t)len - x->flen - dns_off + V4_DNS_OFF + x->flab : x->flab;
	if (vary ? lab - 1 > 62 || frame[dns_off + P53_DNS_HDR_LEN] != lab || x->pmult == 0
		 : len != x->flen + dns_off - V4_DNS_OFF || frame[dns_off + P53_DNS_HDR_LEN] != x->flab)
		goto general;
	const uint8_t *ip = frame + L3_OFF;
	const uint8_t *u = frame + l4_off;
	uint8_t *d = frame + dns_off;
	size_t pl = x->at->name_len, nl = vary ? lab + 1 + pl : x->qlen;
	if (fam == 2) {
		/* parse6(): Ethernet II to our address from a unicast one, IPv6 with UDP next
		   (any traffic class and flow label), the lengths the frame's, a checksum (RFC
		   8200 §8.1), UDP to port 53 from a port not 0, to a service address */
		if ((frame[6] & 1) || memcmp(frame, c->mac, 6) != 0 ||
		    (ip[0] >> 4) != 6 || p53_get16(ip + 4) != len - V6_L4_OFF || ip[6] != 17 ||
		    bad_src6(ip + 8) || p53_get16(u + 4) != len - V6_L4_OFF || (u[6] | u[7]) == 0 ||
		    p53_get16(u + 2) != 53 || p53_get16(u) == 0 || !ours6(c->addrs, ip + 24))
			goto general;
	} else {
		uint16_t frag;
		uint32_t dst;
		/* parse_frame(): Ethernet II to our address from a unicast one, IPv4 without
		   options, no fragment, UDP to port 53 from a port not 0, the lengths the frame's */
		memcpy(&frag, ip + 6, 2);
		memcpy(&dst, ip + 16, 4);
		if ((frame[6] & 1) || memcmp(frame, c->mac, 6) != 0 || ip[0] != 0x45 ||
		    p53_get16(ip + 2) != len - L3_OFF || (frag & RTE_BE16(0x3fff)) != 0 ||
		    ip[9] != 17 || bad_src4(ip + 12) || p53_get16(u + 4) != len - V4_L4_OFF ||
		    p53_get16(u + 2) != 53 || p53_get16(u) == 0 || !ours4(c->addrs, dst))
			goto general;
	}
	/* fast_udp(): a QUERY, one question, one OPT (its 11 bytes last: no option, version 0,
	   DO=0), class IN and none of the types with their own rules */
	const uint8_t *name = d + P53_DNS_HDR_LEN;
	const uint8_t *qe = name + nl;
	const uint8_t *o = qe + 4;
	uint16_t flags = p53_get16(d + 2), qt = p53_get16(qe);
	uint64_t counts;
	memcpy(&counts, d + 4, 8);
	if ((flags & (P53_F_QR | 0x7800u)) != 0 || rte_le_to_cpu_64(counts) != (0x100u | 1ull << 56) ||
	    p53_get16(qe + 2) != P53_C_IN || qt == P53_T_DS ||
	    qt == P53_T_RRSIG || qt == P53_T_OPT || qt >= 249 || qt == 0 || o[0] != 0 ||
	    p53_get16(o + 1) != P53_T_OPT || o[6] != 0 || (o[7] & 0x80u) != 0 || p53_get16(o + 9) != 0)
		goto general;
	/* fast_answer(): room for the kept reply's fixed copy (its limit is at least 512, more
	   than a question and the copy take) */
	uint16_t pos = (uint16_t)(P53_DNS_HDR_LEN + nl + 4);
	if (room < dns_off + (uint32_t)pos + P53_FAST_NX_TAIL ||
	    (vary && (nl > P53_NAME_MAXLEN || pos + x->len > P53_UDP_MIN)))
		goto general;
	uint64_t k = fam == 2 ? udp_keep0(u, ip + 8, 32) : udp_keep0(u, ip + 12, 8);
	uint32_t hash = qname_fold(name, nl, q, &k);
	/* the parent the encloser (its labels so the name's), the name not in the index */
	if (!node_is(x->at, q->lname + 1 + name[0], pl))
		goto general;
	/* a zero checksum: none over IPv4 (RFC 768), refused above over IPv6 */
	if (verify && (fam == 2 || (u[6] | u[7]) != 0) &&
	    !udp_sum_ok(u, d, (uint16_t)(len - l4_off), k, o, OPT_LEN, 1, nl, 0))
		goto general;
	if (find_body(c->img, q->lname, nl, hash) != NULL)
		goto general;
	uint64_t ts;
	q->flags = flags;
	q->question_end = pos;
	STEP(NX_FRAME_ANSWER);
	uint8_t *w = d + pos;
	pos = (uint16_t)(pos + nx_put(w, x));
	uint64_t sum = x->sum;
	if (vary && lab != x->flab) {
		uint16_t ptr = (uint16_t)(0xc000 | (lab + x->adelta));
		p53_put16(w, ptr);
		p53_put16(w + x->pat[1], ptr);
		p53_put16(w + x->pat[2], ptr);
		sum = x->psum + (uint64_t)ptr * x->pmult;
	}
	pos = finish(d, c->st, q, &ts, sum, pos, P53_F_AA, P53_RCODE_NXDOMAIN, 0, 1, 1,
		     P53_ANS_NXDOMAIN, 2, qt);
	if (fam == 2)
		return (int)fast_reply6(frame, pos, q, k, sum);
	return (int)fast_reply4(frame, L3_OFF, V4_L4_OFF, V4_DNS_OFF, pos, q, k, sum, 0);
other:
	if (!vary)
		return (fam == 2 ? nx_frame_any : nx_frame_any6)(c, q, frame, len, room, verify);
general:
	/* the question a run of misses looks up (nx_look(): `klim` not 0) is looked up */
	if (c->qc != NULL && c->qc->klim != 0)
		return fast_frame_qc(c, q, frame, len, room, verify);
	return fast_frame(c, q, frame, len, room, verify);
}

static __attribute__((noinline)) int nx_frame(const struct p53_fast_ctx *c, struct p53_query *q,
					      uint8_t *frame, uint16_t len, uint32_t room, int verify)
{
	return nx_step(c, q, frame, len, room, verify, 1, 0);
}

static __attribute__((noinline)) int nx_frame_any(const struct p53_fast_ctx *c, struct p53_query *q,
						  uint8_t *frame, uint16_t len, uint32_t room, int verify)
{
	return nx_step(c, q, frame, len, room, verify, 1, 1);
}

/* nx_frame() over IPv6, its own instance: the IPv4 one keeps its code. */
static __attribute__((noinline)) int nx_frame6(const struct p53_fast_ctx *c, struct p53_query *q,
					       uint8_t *frame, uint16_t len, uint32_t room, int verify)
{
	return nx_step(c, q, frame, len, room, verify, 2, 0);
}

/* nx_frame_any() over IPv6: its lengths overlap the IPv4 ones (p53_fast_burst() sends a
 * frame of either family here, by its length, and the family sorts it: nx_step()). */
static __attribute__((noinline)) int nx_frame_any6(const struct p53_fast_ctx *c, struct p53_query *q,
						   uint8_t *frame, uint16_t len, uint32_t room, int verify)
{
	return nx_step(c, q, frame, len, room, verify, 2, 1);
}

/* The frame step with the answer cache for one received mbuf (fast_burst_qc()): its checks
 * (one segment, no bad L4 checksum flag), the step, and an answer's lengths set, all here:
 * the loop passes the mbuf alone and keeps less (round 21: the loop 16 instructions per
 * query cheaper, the step a few dearer). */
static inline __attribute__((always_inline)) int mbuf_step(const struct p53_fast_ctx *c,
							    struct p53_query *q, struct rte_mbuf *m,
							    const int only)
{
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	if (!p53_mbuf_readable(m))
		return P53_FAST_NOT_READ;
	int r = frame_step(c, q, rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), 0,
			   l4 == RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN, 1, m, only, 0);
	if (r >= P53_FAST_ANSWERED) {
		m->data_len = (uint16_t)r;
		m->pkt_len = (uint32_t)r;
	}
	return r;
}

/* fast_mbuf_qc() for a frame that is not IPv4: the IPv6 parse inlined, the family a constant. */
static __attribute__((noinline)) int fast_mbuf_qc6(const struct p53_fast_ctx *c, struct p53_query *q,
						   struct rte_mbuf *m)
{
	STEP(MBUF_QC6);
	return mbuf_step(c, q, m, 2);
}

/* IPv4 here and IPv6 in fast_mbuf_qc6(), each step's family a constant after the parse:
 * merged, the family was kept across the answer and tested again (8 instructions per IPv4
 * hit, round 23). */
static __attribute__((noinline)) int fast_mbuf_qc(const struct p53_fast_ctx *c, struct p53_query *q,
						  struct rte_mbuf *m)
{
	if (__builtin_expect(p53_get16(rte_pktmbuf_mtod(m, uint8_t *) + 12) != 0x0800, 0))
		return fast_mbuf_qc6(c, q, m);
	STEP(MBUF_QC);
	return mbuf_step(c, q, m, 1);
}

/* The frame step for a frame of `len` bytes with a kept name error's frame length (p53_fast_nx
 * `flen`; `frame` its first bytes): nx_frame() for one of that length, nx_frame6() for one 20
 * bytes longer (its IPv6 frame's), nx_frame_any() or nx_frame_any6() by the EtherType's first
 * byte for one whose first label would be 1 to 63 bytes over either family (their lengths
 * overlap: each instance checks the family, nx_step()); `other` for the rest. */
typedef int frame_fn(const struct p53_fast_ctx *c, struct p53_query *q, uint8_t *frame,
		     uint16_t len, uint32_t room, int verify);
static inline __attribute__((always_inline)) frame_fn *nx_pick(const struct p53_fast_nx *x,
								const uint8_t *frame, uint16_t len,
								frame_fn *other)
{
	return len == x->flen ? nx_frame
	       : len == x->flen + V6_DNS_OFF - V4_DNS_OFF ? nx_frame6
	       : (uint32_t)(len - x->flen + x->flab) - 1 < 63 + V6_DNS_OFF - V4_DNS_OFF
		       ? (frame[12] == 0x86 ? nx_frame_any6 : nx_frame_any)
		       : other;
}

/* The question a run of misses looks up (fast_frame_run(), fast_burst_run()) answered from the
 * kept name error (nx_pick(): no lookup, `hits` and `misses` as they were): counted as one not
 * looked up (qc_skip()), the run goes on. A flood of random names repeats its short ones (36
 * first labels of one character), and a hit on one of them ended the run: every question
 * looked up again, through the cache's step, until P53_QCACHE_RUN misses in a row; the kept
 * reply answers them as cheaply as the cache would. */
static inline void qc_kept(struct p53_qcache *qc, uint64_t was)
{
	if (qc->hits + qc->misses != was)
		return;
	STEP(RUN_KEPT);
	qc->klim = 0;
	qc_skip(qc);
}

/* In a run of misses (qc_skip()), a question not looked up goes through the frame step
 * without the cache's code: the cache's frame step keeps more values across the answer, and
 * a name error cost about 40 instructions more there (a random-subdomain flood: every name
 * new). Counted as a miss before it is read (with ECS or not; a frame that is no query too),
 * as qc_skip() counts them; the one question in P53_QCACHE_RUN goes to fast_frame_qc(), or
 * first to the kept name error's step (nx_pick(), qc_kept()). A tail call but for that one.
 * p53_fast_frame()'s with the cache; a burst that begins in a run makes the same choice per
 * stretch of frames (fast_burst_run()). */
static __attribute__((noinline)) int fast_frame_run(const struct p53_fast_ctx *c, struct p53_query *q,
						    uint8_t *frame, uint16_t len, uint32_t room,
						    int verify)
{
	struct p53_qcache *qc = c->qc;

	if (qc->klim == 0) {
		qc_skip(qc);
		return fast_frame(c, q, frame, len, room, verify);
	}
	if (qc->run >= P53_QCACHE_RUN && (uint32_t)qc->hits == qc->seen) {
		uint64_t was = qc->hits + qc->misses;
		int r = (c->nx->flen != 0 ? nx_pick(c->nx, frame, len, fast_frame_qc)
					  : fast_frame_qc)(c, q, frame, len, room, verify);
		if (r >= P53_FAST_ANSWERED)
			qc_kept(qc, was);
		return r;
	}
	return fast_frame_qc(c, q, frame, len, room, verify);
}

int p53_fast_frame(const struct p53_fast_ctx *c, struct p53_query *q, uint8_t *frame, uint16_t len,
		   uint32_t room, int verify, struct p53_pkt *pkt)
{
	int r = c->qc != NULL ? fast_frame_run(c, q, frame, len, room, verify)
			      : fast_frame(c, q, frame, len, room, verify);

	if (r > 0) {
		c->st->queries++;
		c->st->msg[P53_MSG_OK]++;
	}
	if (r >= 0)
		return r;
	fast_pkt(frame, -r, pkt, q);
	return P53_FAST_DECLINED;
}

/* A frame p53_fast_burst()'s loop stops at (r: below P53_FAST_ANSWERED): *k, and for one read
 * and declined the general responder's packet fields. */
static __attribute__((noinline, cold)) void burst_stop(struct rte_mbuf *m, int r, struct p53_query *q,
							struct p53_pkt *pkt, int *k)
{
	if (r < 0) {
		fast_pkt(rte_pktmbuf_mtod(m, uint8_t *), -r, pkt, q);
		r = P53_FAST_DECLINED;
	}
	*k = r;
}

/* p53_fast_burst() with the answer cache: its own loop, the mbuf's fields read in the step. */
static __attribute__((noinline)) uint16_t fast_burst_qc(const struct p53_fast_ctx *c,
							struct rte_mbuf **pkts, uint16_t n,
							struct rte_mbuf **out, struct p53_query *q,
							struct p53_pkt *pkt, int *k)
{
	/* pointers and a count down, no index: with the context, the five fit the registers a
	   call keeps, and the count is the prefetch's test too */
	struct rte_mbuf **p = pkts;
	unsigned int left;

	for (left = n; left != 0; left--, p++, q++, out++) {
		struct rte_mbuf *m = *p;
		if (left > 4)
			rte_prefetch0(rte_pktmbuf_mtod(p[4], void *));
		int r = fast_mbuf_qc(c, q, m);
		if (__builtin_expect(r < P53_FAST_ANSWERED, 0)) {
			burst_stop(m, r, q, &pkt[p - pkts], k);
			break;
		}
		*out = m;
	}
	uint16_t i = (uint16_t)(n - left);
	c->st->queries += i;
	c->st->msg[P53_MSG_OK] += i;
	return i;
}

/* p53_fast_burst()'s loop without the answer cache's burst step: `look` 0, fast_frame() (none
 * of the cache's code) for a burst without the cache, and for the frames of a run of misses
 * that are not looked up; 2, the kept name error's steps first (nx_pick(): fast_burst()); 1,
 * fast_frame_qc() for the one that is looked up (fast_burst_run()), 3 for that one with a
 * kept name error (nx_pick() first, fast_frame_qc() for the rest). */
static inline __attribute__((always_inline)) uint16_t burst_loop(const struct p53_fast_ctx *c,
								  struct rte_mbuf **pkts, uint16_t n,
								  struct rte_mbuf **out,
								  struct p53_query *q,
								  struct p53_pkt *pkt, int *k,
								  const int look)
{
	unsigned int i;         /* not uint16_t: no copy of it per frame */

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		if (i + 4 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
		int r = P53_FAST_NOT_READ;
		if (p53_mbuf_readable(m))
			/* room: the data and the tailroom, i.e. the buffer after the headroom; a
			   frame not of the kept name error's length goes to fast_frame() at once */
			r = (look >= 2 ? nx_pick(c->nx, rte_pktmbuf_mtod(m, uint8_t *),
						 rte_pktmbuf_data_len(m), look == 3 ? fast_frame_qc : fast_frame)
			     : look == 1 ? fast_frame_qc : fast_frame)(c, &q[i], rte_pktmbuf_mtod(m, uint8_t *),
								rte_pktmbuf_data_len(m),
								(uint32_t)(uint16_t)(m->buf_len -
										     rte_pktmbuf_headroom(m)),
								l4 == RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN);
		if (__builtin_expect(r < P53_FAST_ANSWERED, 0)) {
			if (r < 0) {    /* read and declined: the general responder's packet fields */
				fast_pkt(rte_pktmbuf_mtod(m, uint8_t *), -r, &pkt[i], &q[i]);
				r = P53_FAST_DECLINED;
			}
			*k = r;
			break;
		}
		m->data_len = (uint16_t)r;
		m->pkt_len = (uint32_t)r;
		out[i] = m;
	}
	/* answer.c count() for the frames answered (fast_answer() leaves it here) */
	c->st->queries += i;
	c->st->msg[P53_MSG_OK] += i;
	return (uint16_t)i;
}

static __attribute__((noinline)) uint16_t fast_burst_nx(const struct p53_fast_ctx *c,
							struct rte_mbuf **pkts, uint16_t n,
							struct rte_mbuf **out, struct p53_query *q,
							struct p53_pkt *pkt, int *k)
{
	STEP(BURST_NX);
	return burst_loop(c, pkts, n, out, q, pkt, k, 2);
}

/* With a kept name error's frame length (p53_fast_nx `flen`), each frame tried as one more
 * first (nx_pick()); chosen per burst, so that a burst without one pays nothing per frame. */
static __attribute__((noinline)) uint16_t fast_burst(const struct p53_fast_ctx *c,
						     struct rte_mbuf **pkts, uint16_t n,
						     struct rte_mbuf **out, struct p53_query *q,
						     struct p53_pkt *pkt, int *k)
{
	if (c->nx->flen != 0)
		return fast_burst_nx(c, pkts, n, out, q, pkt, k);
	return burst_loop(c, pkts, n, out, q, pkt, k, 0);
}

/* The question a run of misses looks up: first as the kept name error's (look 3: nx_pick(),
 * the rest and what it leaves to fast_frame_qc()), as fast_frame_run() does. */
static __attribute__((noinline)) uint16_t fast_burst_look(const struct p53_fast_ctx *c,
							  struct rte_mbuf **pkts, uint16_t n,
							  struct rte_mbuf **out, struct p53_query *q,
							  struct p53_pkt *pkt, int *k)
{
	if (c->nx->flen != 0)
		return burst_loop(c, pkts, n, out, q, pkt, k, 3);
	return burst_loop(c, pkts, n, out, q, pkt, k, 1);
}

/* qc_skip() for `k` questions not looked up, counted at once: `klim` is 0 for all but the
 * last, which may end a stretch of P53_QCACHE_RUN (fast_burst_run() counts at most that). */
static inline void qc_skipped(struct p53_qcache *qc, uint32_t k)
{
	if (k == 0)
		return;
	qc->misses += k;
	qc->run += k;
	if ((qc->run & (P53_QCACHE_RUN - 1)) == 0)
		qc->klim = P53_QCACHE_KEY;
}

/*
 * A burst that begins in a run of misses (qc_skip()), in stretches: the frames up to the next
 * question looked up through fast_burst()'s loop, counted as misses after it (qc_skipped();
 * where fast_burst() stops, the frame is counted too if fast_frame() read it, as qc_skip()
 * counted it before it was read); the one looked up through fast_burst_look(), alone; the
 * rest of the burst through fast_burst_qc() once a hit or a store has ended the run. The
 * counts and replies are those of fast_frame_run() per frame (p53_fast_frame()), which cost
 * a random-subdomain flood about 12 instructions a query (its call, the test and the counts
 * per frame), and the frame looked up ~80 more (the cache's step, no kept name error). The
 * one looked up is tried as the kept name error first (qc_kept()): a flood of random names
 * of 1 to 20 characters (replay.sh nx-lens) stays in the run, 533 instructions a query
 * where hits on its short names ended it (607; 528 without the cache, round 31).
 */
static __attribute__((noinline)) uint16_t fast_burst_run(const struct p53_fast_ctx *c,
							 struct rte_mbuf **pkts, uint16_t n,
							 struct rte_mbuf **out, struct p53_query *q,
							 struct p53_pkt *pkt, int *k)
{
	struct p53_qcache *qc = c->qc;
	uint16_t i = 0;

	while (i < n) {
		uint16_t left = (uint16_t)(n - i), m, a;
		if (qc->klim != 0 && qc->run >= P53_QCACHE_RUN && (uint32_t)qc->hits == qc->seen) {
			/* the one question in P53_QCACHE_RUN looked up, or answered from the kept
			   name error first (qc_kept(): then counted as one not looked up) */
			uint64_t was = qc->hits + qc->misses;
			m = 1;
			STEP(RUN_LOOK);
			a = fast_burst_look(c, pkts + i, m, out + i, q + i, pkt + i, k);
			if (a == 1)
				qc_kept(qc, was);
		} else if (qc->klim != 0) {
			/* the run has ended: the cache's own loop */
			m = left;
			a = fast_burst_qc(c, pkts + i, m, out + i, q + i, pkt + i, k);
		} else {
			uint32_t skip = P53_QCACHE_RUN - (qc->run & (P53_QCACHE_RUN - 1));
			m = skip < left ? (uint16_t)skip : left;
			/* the four after them, as a loop over the whole burst would */
			for (uint16_t j = (uint16_t)(i + m); j < n && j < i + m + 4; j++)
				rte_prefetch0(rte_pktmbuf_mtod(pkts[j], void *));
			STEP(RUN_SKIP);
			a = fast_burst(c, pkts + i, m, out + i, q + i, pkt + i, k);
			qc_skipped(qc, a + (a < m && p53_mbuf_readable(pkts[i + a])));
		}
		i = (uint16_t)(i + a);
		if (a < m)
			break;
	}
	return i;
}

/* Each loop in its own function, chosen once per burst: a jump (no registers saved here). A
 * burst that begins in a run of misses takes fast_burst_run() (its lookup may fall on the
 * burst's first question: klim is not 0 then); the hit's loop does not pay its test. */
uint16_t p53_fast_burst(const struct p53_fast_ctx *c, struct rte_mbuf **pkts, uint16_t n,
			struct rte_mbuf **out, struct p53_query *q, struct p53_pkt *pkt, int *k)
{
	if (c->qc == NULL)
		return fast_burst(c, pkts, n, out, q, pkt, k);
	if (__builtin_expect(c->qc->run >= P53_QCACHE_RUN, 0))
		return fast_burst_run(c, pkts, n, out, q, pkt, k);
	return fast_burst_qc(c, pkts, n, out, q, pkt, k);
}

/* p53_fast_frame() in two steps, for a burst read in passes (worker.c, a large image): the
 * frame read and its question hashed in the first pass, answered in the last, after the
 * prefetch passes: nothing is read again but the query's fields the answer needs. */
int p53_fast_read(const struct p53_fast_ctx *c, struct p53_query *q, const uint8_t *frame,
		  uint16_t len, int verify, uint64_t *keep)
{
	int fam = fast_parse(frame, len, verify, c->mac, c->addrs, NULL, q, keep, NULL, NULL);

	if (fam != 0)
		STEP(READ);
	return fam;
}

int p53_fast_write(const struct p53_fast_ctx *c, struct p53_query *q, uint8_t *frame, int fam,
		   uint32_t room, uint64_t keep, struct p53_pkt *pkt,
		   const struct p53_fast_found *found)
{
	/* frame_step()'s answer and reply, the offsets constants for the family; the answer
	   counts the query (checked 1), searches a closest encloser out of line and starts from
	   what the prefetch passes found (with ECS: looked up again, ecs_answer() shared). */
	const uint32_t dns_off = fam == 2 ? V6_DNS_OFF : V4_DNS_OFF;
	uint32_t r = room - dns_off;
	uint16_t cap = r > UINT16_MAX ? UINT16_MAX : (uint16_t)r;
	uint8_t *msg = frame + dns_off;
	uint64_t tail;
	uint16_t rlen = __builtin_expect(q->ecs, 0) ?
			ecs_answer(c->img, c->conf, msg, cap, c->st, q, &tail, 1, c->ours) :
			fast_answer(c->img, c->conf, msg, cap, c->st, q, NULL, 0, &tail, 1, c->ours, found,
				    NULL, 0);

	if (rlen == 0) {
		fast_pkt(frame, fam, pkt, q);   /* for the general responder */
		return P53_FAST_DECLINED;
	}
	STEP(WRITE);
	if (__builtin_expect(fam == 2, 0))
		return (int)fast_reply6(frame, rlen, q, keep, tail);
	return (int)fast_reply4(frame, L3_OFF, V4_L4_OFF, V4_DNS_OFF, rlen, q, keep, tail, 0);
}
