/*
 * The responder; see answer.h.
 *
 * The response is written over the query: the header is rewritten last, the question stays
 * where the client put it (with the client's case, RFC 4343 §4.1 and the 0x20 practice), and
 * records are appended after it through `struct wr`, which compresses owner names and the
 * names inside NS/CNAME/SOA/PTR/MX RDATA (RFC 1035 §4.1.4, RFC 3597 §4) and rolls back a whole
 * RRset that does not fit, so a response never carries part of an RRset (RFC 2181 §9).
 */
#include <string.h>

#include "dataplane/answer.h"
#include "dataplane/edns_opt.h"
#include "dataplane/steer.h"
#include "dataplane/dnssec.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#define CTAB_MAX  48    /* names remembered for compression */
#define MAX_CHAIN 8     /* CNAME/DNAME links followed inside a zone */
#define MAX_ADDS  16    /* RRsets whose additional-section targets are added */
#define MAX_ADDED 32    /* distinct nodes added to the additional section */
#define OPT_LEN   11    /* root owner, type, class, ttl, rdlength */
#define KEEPALIVE_LEN 6 /* edns-tcp-keepalive with a TIMEOUT (RFC 7828 §3.1) */

enum { SEC_AN = 0, SEC_NS = 1, SEC_AR = 2 };
enum { DONE = 0, NEXT = 1 };

/* Response writer. `limit` keeps room for the OPT record. */
struct wr {
	uint8_t *buf;
	uint16_t pos;
	uint16_t limit;
	uint16_t cnt[3];
	uint8_t tc;
	uint8_t nc;
	uint8_t q_pending;      /* question labels not yet in ctab (added on first need) */
	uint8_t dnssec;         /* DO=1: RRSIGs go with their RRsets (RFC 4035 §3.1.1) */
	uint8_t hint_len;
	uint8_t additional;     /* writing the additional section (see put_name) */
	uint16_t hint_ptr;      /* where `hint` is in the message, 0 for no hint */
	const uint8_t *hint;    /* canonical name most written names end in (zone apex, cut) */
	const struct p53_query *q;
	uint16_t ctab[CTAB_MAX];
};

struct ctx {
	const void *img;
	const struct p53_answer_conf *conf;
	const struct p53_query *q;
	struct wr w;
	uint16_t aa;
	uint8_t rcode;
	uint8_t kind;
	uint32_t zone;
	/* the name being resolved: the question, then CNAME/DNAME targets */
	const uint8_t *name;
	uint8_t len;
	uint8_t labels;
	uint16_t ptr;           /* where that name already is in the message, 0 if unknown */
	const uint8_t *loff;    /* label offsets of `name`: the question's, or loff_buf */
	uint8_t loff_buf[P53_NAME_MAXLABELS + 1];
	uint8_t nbuf[P53_NAME_MAXLEN];
	uint32_t adds[MAX_ADDS];
	uint32_t adds_base[MAX_ADDS]; /* PROTOTYPE: node_base of each list's zone */
	uint8_t n_adds;
	uint16_t ede;           /* Extended DNS Error INFO-CODE to send, 0 for none */
	/* DNSSEC: NSEC/NSEC3 owners already in authority, and the proofs of wildcard
	   expansions, written once the answer section is complete (RFC 4035 §3.1.3.3) */
	uint8_t n_denied;
	uint8_t n_wild;
	uint32_t denied[2 * P53_DENIAL_MAX];
	uint32_t wild[MAX_CHAIN + 1];
	uint16_t max;           /* response size limit, OPT included */
	uint8_t has_q;          /* the question is echoed: it lies before w.pos, QDCOUNT is 1 */
	struct p53_answer_ext *x; /* the guard's extension, or NULL */
	/* ECS (RFC 7871): the query's option data, copied before the response overwrites it,
	   echoed in our OPT with SCOPE PREFIX-LENGTH = scope (§7.2.1) */
	uint8_t ecs_len;        /* 0: no ECS to echo */
	uint8_t scope;
	uint8_t ecs[4 + 16];
	const struct p53_image_node *cut; /* the delegation point of a referral */
};

/* Does uncompressed `name` equal the (possibly compressed) name at buf[off]? */
static int name_at_equal(const uint8_t *buf, uint16_t off, const uint8_t *name)
{
	for (int hops = 0; hops < P53_NAME_MAXLABELS; hops++) {
		uint8_t l = buf[off];
		if ((l & 0xc0) == 0xc0) {
			off = (uint16_t)((l & 0x3f) << 8 | buf[off + 1]);
			continue;
		}
		if (l != *name)
			return 0;
		if (l == 0)
			return 1;
		for (uint8_t i = 1; i <= l; i++)
			if (p53_lower(buf[off + i]) != p53_lower(name[i]))
				return 0;
		off = (uint16_t)(off + 1 + l);
		name += 1 + l;
	}
	return 0;
}

static void remember(struct wr *w, uint16_t off)
{
	if (w->nc < CTAB_MAX && off < 0x4000)
		w->ctab[w->nc++] = off;
}

/* The question's labels are compression targets; most answers never compress anything, so
 * they are entered only when a name is first written. Callers that may roll back call this
 * before they save `nc`, so a rollback never drops them. Root-most first, and no more than
 * the table holds: the suffixes other names share (apex, cut) are kept, and a 127-label
 * question costs no more than a 48-label one. */
static void question_labels(struct wr *w)
{
	if (!w->q_pending)
		return;
	w->q_pending = 0;
	for (int i = w->q->qname_labels - 1; i >= 0 && w->nc < CTAB_MAX; i--)
		remember(w, (uint16_t)(P53_DNS_HDR_LEN + w->q->label_off[i]));
}

/* Does the name end, at a label boundary, with the hint? Returns that suffix or NULL. */
static const uint8_t *hint_suffix(const struct wr *w, const uint8_t *name)
{
	size_t total = 0;
	const uint8_t *t;

	for (t = name; *t != 0; t += 1 + *t)
		total += 1u + *t;
	total++;
	for (t = name; total > w->hint_len; t += 1 + *t)
		total -= 1u + *t;
	if (total != w->hint_len)
		return NULL;
	/* Image owner names are canonical, and zone files are mostly lower case: try the
	   plain comparison first. */
	if (memcmp(t, w->hint, w->hint_len) == 0)
		return t;
	for (uint8_t i = 0; i < w->hint_len; i++)
		if (p53_lower(t[i]) != w->hint[i])
			return NULL;
	return t;
}

/*
 * Where the whole of `name` (labels before `h`, its hint suffix) was written already as those
 * labels and then a pointer to the hint; 0 if nowhere. Additional-section owners are the
 * NS/MX/SRV targets that the RDATA above wrote that way: one pointer to them instead of their
 * first labels again (3-4 bytes per glue owner; RFC 9471 glue must fit or set TC).
 */
static uint16_t before_hint(const struct wr *w, const uint8_t *name, const uint8_t *h)
{
	for (uint8_t i = 0; i < w->nc; i++) {
		uint16_t off = w->ctab[i];
		const uint8_t *p = name;
		while (p < h && w->buf[off] == *p) {
			uint8_t l = *p, k;
			for (k = 1; k <= l && p53_lower(w->buf[off + k]) == p53_lower(p[k]); k++)
				;
			if (k <= l)
				break;
			off = (uint16_t)(off + 1 + l);
			p += 1 + l;
		}
		/* Labels are followed by a root byte or a pointer, then more message. */
		if (p == h && p53_get16(w->buf + off) == (0xc000 | w->hint_ptr))
			return w->ctab[i];
	}
	return 0;
}

/* Write a name, compressed against the longest suffix already in the message. Names of the
 * zone being answered from usually end in its apex (or the cut of a referral), which the
 * caller placed in the question: that suffix is tried first, without searching. */
static int put_name(struct wr *w, const uint8_t *name)
{
	const uint8_t *s = name;
	uint16_t ptr = 0;

	if (w->hint_ptr != 0) {
		const uint8_t *h = hint_suffix(w, name);
		if (h != NULL) {
			s = h;
			ptr = w->hint_ptr;
			if (w->additional && h != name) {
				uint16_t whole = before_hint(w, name, h);
				if (whole != 0) {
					s = name;
					ptr = whole;
				}
			}
			goto write;
		}
	}
	question_labels(w);
	while (*s != 0 && ptr == 0) {
		for (uint8_t i = 0; i < w->nc; i++) {
			/* Entries start at a label we wrote (never a pointer): its length byte is
			 * a cheap first filter. */
			if (w->buf[w->ctab[i]] == *s && name_at_equal(w->buf, w->ctab[i], s)) {
				ptr = w->ctab[i];
				break;
			}
		}
		if (ptr == 0)
			s += 1 + *s;
	}
write:;
	uint16_t prefix = (uint16_t)(s - name);
	if ((uint32_t)w->pos + prefix + (ptr != 0 ? 2 : 1) > w->limit)
		return -1;
	for (const uint8_t *p = name; p < s; p += 1 + *p)
		remember(w, (uint16_t)(w->pos + (p - name)));
	memcpy(w->buf + w->pos, name, prefix);
	w->pos = (uint16_t)(w->pos + prefix);
	if (ptr != 0) {
		p53_put16(w->buf + w->pos, (uint16_t)(0xc000 | ptr));
		w->pos = (uint16_t)(w->pos + 2);
	} else {
		w->buf[w->pos++] = 0;
	}
	return 0;
}

static int put_bytes(struct wr *w, const uint8_t *p, size_t n)
{
	if ((size_t)w->pos + n > w->limit)
		return -1;
	memcpy(w->buf + w->pos, p, n);
	w->pos = (uint16_t)(w->pos + n);
	return 0;
}

/* RDATA with names that may be compressed (RFC 3597 §4): NS, CNAME, PTR, MB/MD/MF/MG/MR,
 * MX (preference first), SOA and MINFO (two names). Names in the image are uncompressed. */
static int put_rdata_names(struct wr *w, uint16_t type, const uint8_t *rd, uint16_t rdlen)
{
	size_t skip = type == P53_T_MX ? 2 : 0;
	int names = (type == P53_T_SOA || type == 14 /* MINFO */) ? 2 : 1;
	size_t off = skip;

	if (skip > rdlen || put_bytes(w, rd, skip) != 0)
		return -1;
	for (int i = 0; i < names; i++) {
		int nl = p53_name_len(rd + off, rdlen - off);
		if (nl < 0)
			return -1;
		if (put_name(w, rd + off) != 0)
			return -1;
		off += (size_t)nl;
	}
	return put_bytes(w, rd + off, rdlen - off);
}

/*
 * Append a whole RRset to a section, or nothing; with DO=1 its RRSIGs too, or neither (RFC 4035
 * §3.1.1: an RRset travels with its signatures). The first owner is `owner_ptr` when the
 * name is already in the message, else `owner` compressed; later owners point at the first.
 * An RRset owned by the query name, with no names to compress and its own TTL, is the
 * pre-encoded bytes as they are (image.h), signatures included: one memcpy.
 */
static int put_rrset_rd(struct wr *w, const struct p53_image_rrset *rs, const uint8_t *rd,
			const uint8_t *owner, uint16_t owner_ptr, int sec, uint32_t ttl)
{
	uint16_t save_pos = w->pos;
	uint8_t save_nc = w->nc;
	uint16_t sigs = w->dnssec ? rs->sig_count : 0;

	if (owner_ptr == P53_DNS_HDR_LEN && ttl == P53_NONE && !(rs->flags & P53_RRSET_COMPRESS)) {
		if (put_bytes(w, rd, rs->rdata_len + (sigs ? rs->sig_len : 0u)) != 0)
			return -1;
		w->cnt[sec] = (uint16_t)(w->cnt[sec] + rs->count + sigs);
		return 0;
	}
	question_labels(w);
	save_nc = w->nc;
	for (uint16_t i = 0; i < rs->count + sigs; i++) {
		int sig = i >= rs->count;
		rd += P53_RR_OWNER_LEN;
		uint16_t rdlen = p53_get16(rd + 8);
		if (owner_ptr != 0) {
			if ((uint32_t)w->pos + 2 > w->limit)
				goto full;
			p53_put16(w->buf + w->pos, (uint16_t)(0xc000 | owner_ptr));
			w->pos = (uint16_t)(w->pos + 2);
		} else {
			uint16_t at = w->pos;
			if (put_name(w, owner) != 0)
				goto full;
			if ((w->buf[at] & 0xc0) == 0xc0)
				owner_ptr = p53_get16(w->buf + at) & 0x3fff;
			else if (at < 0x4000)
				owner_ptr = at;
		}
		uint16_t rr = w->pos;
		if (sig || !(rs->flags & P53_RRSET_COMPRESS)) {
			if (put_bytes(w, rd, 10u + rdlen) != 0)
				goto full;
		} else {
			if (put_bytes(w, rd, 10) != 0 || put_rdata_names(w, rs->type, rd + 10, rdlen) != 0)
				goto full;
			p53_put16(w->buf + rr + 8, (uint16_t)(w->pos - rr - 10));
		}
		/* A TTL set for the RRset (negative SOA, RFC 2308 §5) is its RRSIGs' too (RFC
		   4034 §3: an RRSIG's TTL is the covered RRset's). */
		if (ttl != P53_NONE)
			p53_put32(w->buf + rr + 4, ttl);
		rd += 10u + rdlen;
	}
	w->cnt[sec] = (uint16_t)(w->cnt[sec] + rs->count + sigs);
	return 0;
full:
	w->pos = save_pos;
	w->nc = save_nc;
	return -1;
}

static inline int put_rrset(struct wr *w, const void *img, const struct p53_image_rrset *rs,
			    const uint8_t *owner, uint16_t owner_ptr, int sec, uint32_t ttl)
{
	return put_rrset_rd(w, rs, p53_image_rdata(img, rs), owner, owner_ptr, sec, ttl);
}

/* PROTOTYPE: node i and RRset i of the current zone (indices relative to its bases). */
static inline const struct p53_image_node *cnode(const struct ctx *c, uint32_t i)
{
	return p53_image_znode(c->img, p53_image_zone(c->img, c->zone), i);
}

static inline const struct p53_image_rrset *crrset(const struct ctx *c, uint32_t i)
{
	return p53_image_zrrset(c->img, p53_image_zone(c->img, c->zone), i);
}

/* Answer and authority must be complete: a whole RRset that does not fit sets TC. */
static int put_or_tc(struct ctx *c, uint32_t rsi, const uint8_t *owner, uint16_t ptr, int sec,
		     uint32_t ttl)
{
	const struct p53_image_zone *z = p53_image_zone(c->img, c->zone);
	const struct p53_image_rrset *rs = p53_image_zrrset(c->img, z, rsi);

	if (put_rrset(&c->w, c->img, rs, owner, ptr, sec, ttl) == 0) {
		if (rs->adds != P53_NONE && c->n_adds < MAX_ADDS) {
			c->adds_base[c->n_adds] = z->node_base;
			c->adds[c->n_adds++] = rs->adds;
		}
		return 0;
	}
	c->w.tc = 1; /* RFC 2181 §9, RFC 1035 §4.1.1 */
	return -1;
}

static const uint8_t *node_name(const struct ctx *c, const struct p53_image_node *n)
{
	return p53_image_node_name(c->img, n);
}

/* Switch resolution to a new name (a CNAME or synthesized target), lowered into nbuf. */
static int set_name(struct ctx *c, const uint8_t *name)
{
	int len = p53_name_len(name, P53_NAME_MAXLEN);
	uint8_t pos = 0, labels = 0;

	if (len < 0)
		return -1;
	p53_name_lower(c->nbuf, name, (size_t)len);
	while (c->nbuf[pos] != 0) {
		c->loff_buf[labels++] = pos;
		pos = (uint8_t)(pos + 1 + c->nbuf[pos]);
	}
	c->loff_buf[labels] = pos;
	c->loff = c->loff_buf;
	c->name = c->nbuf;
	c->len = (uint8_t)len;
	c->labels = labels;
	c->ptr = 0;
	return 0;
}

/*
 * Where an ancestor of the current name (its zone apex, a cut or DNAME above it) already is in
 * the message: inside the current name, when that is at a known offset (the question). Saves
 * the compression search for the owners of SOA, referral NS and DNAME records. 0 if unknown.
 */
static uint16_t ancestor_ptr(const struct ctx *c, const struct p53_image_node *n)
{
	if (c->ptr == 0 || n->labels > c->labels)
		return 0;
	return (uint16_t)(c->ptr + c->loff[c->labels - n->labels]);
}

/* Names written from now on are first tried against `n`, an ancestor of the question. */
static void set_hint(struct ctx *c, const struct p53_image_node *n)
{
	uint16_t ptr = ancestor_ptr(c, n);

	c->w.hint_ptr = ptr;
	c->w.hint = ptr != 0 ? p53_image_node_name(c->img, n) : NULL;
	c->w.hint_len = n->name_len;
}

/* Before writing names of the zone (only then: most answers write none), hint its apex. */
static void hint_apex(struct ctx *c)
{
	if (c->w.hint_ptr == 0)
		set_hint(c, cnode(c, p53_image_zone(c->img, c->zone)->apex));
}

/* Is a DNSSEC denial wanted: DO=1 and the current zone has NSEC or NSEC3 (dnssec.h)? */
static int denying(const struct ctx *c)
{
	return c->w.dnssec &&
	       (p53_image_zone(c->img, c->zone)->dnssec & (P53_ZONE_NSEC | P53_ZONE_NSEC3));
}

static struct p53_dname cur_name(const struct ctx *c)
{
	return (struct p53_dname){ .name = c->name, .loff = c->loff, .len = c->len,
				   .labels = c->labels };
}

/* The NSEC/NSEC3 RRsets of a denial, with their RRSIGs, in authority; each owner once. */
static void put_denial(struct ctx *c, const struct p53_denial *d)
{
	for (uint8_t i = 0; i < d->n && !c->w.tc; i++) {
		uint32_t ni = d->node[i], k;
		for (k = 0; k < c->n_denied && c->denied[k] != ni; k++)
			;
		uint32_t rsi = p53_dnssec_rrset(c->img, c->zone, ni);
		if (k < c->n_denied || rsi == P53_NONE)
			continue;
		hint_apex(c);
		if (put_or_tc(c, rsi, node_name(c, cnode(c, ni)), 0, SEC_NS, P53_NONE) == 0 &&
		    c->n_denied < sizeof(c->denied) / sizeof(c->denied[0]))
			c->denied[c->n_denied++] = ni;
	}
}

/*
 * RFC 2308 §3: the zone's SOA in authority, TTL = min(SOA TTL, MINIMUM) (§5); with DNSSEC
 * the proof (RFC 4035 §3.1.3): a name error below closest encloser `at`, or no data at node
 * `at` (`ce`: the closest encloser when `at` is the wildcard that expanded the name).
 */
static void negative(struct ctx *c, uint8_t rcode, uint8_t kind, uint32_t at, uint32_t ce)
{
	const struct p53_image_zone *z = p53_image_zone(c->img, c->zone);
	const struct p53_image_node *apex = p53_image_znode(c->img, z, z->apex);

	hint_apex(c);
	c->rcode = rcode;
	c->kind = kind;
	if (put_or_tc(c, z->soa, node_name(c, apex), ancestor_ptr(c, apex), SEC_NS, z->neg_ttl) != 0 ||
	    !denying(c))
		return;
	struct p53_denial d = { .n = 0 };
	struct p53_dname nm = cur_name(c);
	if (kind == P53_ANS_NXDOMAIN)
		p53_dnssec_nxdomain(c->img, c->zone, at, &nm, &d);
	else
		p53_dnssec_nodata(c->img, c->zone, at, ce, &nm, &d);
	put_denial(c, &d);
}

/* RFC 1034 §4.3.2 step 3b: a referral, not authoritative, NS in authority, glue in additional.
   With DO=1 the DS RRset and its RRSIG, or the proof that there is none (RFC 4035 §3.1.4).
   `hint`: an ancestor of the name that the cut's names end in, `ptr`: where the cut's name
   is in the message (0: written, compressed against the hint); `ce`: the closest encloser
   when the cut is a wildcard expanding the name, else P53_NONE. */
static inline __attribute__((always_inline)) void
referral_from(struct ctx *c, const struct p53_image_node *cut, const struct p53_image_node *hint,
	      uint16_t ptr, uint32_t ce, int hop)
{
	if (hop == 0)
		set_hint(c, hint); /* in-bailiwick NS targets and glue end in the cut */
	uint32_t ns = p53_image_node_rrset(c->img, cut, P53_T_NS);

	if (hop == 0)
		c->aa = 0;
	c->kind = P53_ANS_REFERRAL;
	c->cut = cut;
	uint16_t at = c->w.pos;
	if (ns == P53_NONE ||
	    put_or_tc(c, ns, node_name(c, cut), ptr, SEC_NS, P53_NONE) != 0 ||
	    !c->w.dnssec)
		return;
	if (ce != P53_NONE && at < 0x4000)
		ptr = at;       /* the wildcard, just written as the NS owner */
	uint32_t ds = p53_image_node_rrset(c->img, cut, P53_T_DS);
	if (ds != P53_NONE) {
		put_or_tc(c, ds, node_name(c, cut), ptr, SEC_NS, P53_NONE);
	} else if (denying(c)) {
		struct p53_denial d = { .n = 0 };
		struct p53_dname nm = cur_name(c);
		p53_dnssec_nodata(c->img, c->zone, p53_image_node_index(c->img, cut), ce, &nm, &d);
		put_denial(c, &d);
	}
}

/* A cut at or above the name. */
static void referral(struct ctx *c, const struct p53_image_node *cut, int hop)
{
	referral_from(c, cut, cut, ancestor_ptr(c, cut), P53_NONE, hop);
}

/*
 * A wildcard that is a cut, expanding the name below closest encloser `ce` (its parent).
 * RFC 4592 §4.2 leaves NS at a wildcard undefined; like Knot, the expansion is a referral
 * from the wildcard itself: its NS (and DS or the proof of none) owned by "*.<ce>", not by the
 * name, since only answers are synthesized. The name is no descendant of the wildcard, so its
 * owner is written whole, compressed against the encloser in the question. With DNSSEC the
 * proof that the wildcard has no DS is a wildcard NODATA proof (RFC 5155 §7.2.5: with NSEC3 the
 * closest encloser's too), as Knot sends it.
 */
static __attribute__((noinline)) void wild_referral(struct ctx *c, const struct p53_image_node *wild,
						    uint32_t ce, int hop)
{
	referral_from(c, wild, cnode(c, ce), 0, ce, hop);
}

/* RFC 6672 §3.3: DNAME in the answer, then a synthesized CNAME; `keep` labels stay. */
static int dname(struct ctx *c, const struct p53_image_node *d, int keep)
{
	uint32_t rsi = p53_image_node_rrset(c->img, d, P53_T_DNAME);
	const struct p53_image_rrset *rs;
	uint8_t target[P53_NAME_MAXLEN];

	if (rsi == P53_NONE)
		return DONE;
	rs = crrset(c, rsi);
	/* What the answer is, whether or not it fits: a truncated one is still an answer (TC is
	 * counted on its own). */
	c->kind = P53_ANS_ANSWER;
	if (put_or_tc(c, rsi, node_name(c, d), ancestor_ptr(c, d), SEC_AN, P53_NONE) != 0)
		return DONE;

	const uint8_t *rd = p53_image_rdata(c->img, rs) + P53_RR_OWNER_LEN;
	uint16_t rdlen = p53_get16(rd + 8);
	size_t prefix = c->loff[keep];
	if (prefix + rdlen > P53_NAME_MAXLEN) {
		c->rcode = P53_RCODE_YXDOMAIN; /* RFC 6672 §2.2 */
		c->kind = P53_ANS_ERROR;
		return DONE;
	}
	memcpy(target, c->name, prefix);
	memcpy(target + prefix, rd + 10, rdlen);

	/* The synthesized CNAME: owner is the current name, TTL the DNAME's. */
	struct wr *w = &c->w;
	question_labels(w);
	uint16_t save_pos = w->pos;
	uint8_t save_nc = w->nc;
	uint8_t fixed[10];
	p53_put16(fixed, P53_T_CNAME);
	p53_put16(fixed + 2, P53_C_IN);
	p53_put32(fixed + 4, rs->ttl);
	p53_put16(fixed + 8, 0);
	int err = c->ptr != 0 ? (w->pos + 2u > w->limit ? -1 : 0) : put_name(w, c->name);
	if (err == 0 && c->ptr != 0) {
		p53_put16(w->buf + w->pos, (uint16_t)(0xc000 | c->ptr));
		w->pos = (uint16_t)(w->pos + 2);
	}
	uint16_t rr = w->pos;
	if (err != 0 || put_bytes(w, fixed, sizeof(fixed)) != 0 || put_name(w, target) != 0) {
		w->pos = save_pos;
		w->nc = save_nc;
		w->tc = 1;
		return DONE;
	}
	p53_put16(w->buf + rr + 8, (uint16_t)(w->pos - rr - 10));
	w->cnt[SEC_AN]++;
	if (c->q->qtype == P53_T_CNAME)
		return DONE; /* the synthesized CNAME is what was asked for */
	return set_name(c, target) == 0 ? NEXT : DONE;
}

/* QTYPE RRSIG: asked for by type, so sent whatever DO says. Like Knot, and in the spirit of
   RFC 8482, not every RRSIG of the node: those of its first signed RRset (pre-encoded after
   it). Returns the records written, -1 when full. */
static int put_sigs(struct ctx *c, const struct p53_image_node *n)
{
	struct wr *w = &c->w;
	uint16_t save = w->pos, count = 0;
	uint8_t save_nc;

	question_labels(w);
	save_nc = w->nc;
	for (uint32_t i = n->rrsets; i < n->rrsets + n->n_rrsets; i++) {
		const struct p53_image_rrset *rs = crrset(c, i);
		const uint8_t *sig = p53_image_rdata(c->img, rs) + rs->rdata_len;
		if (rs->sig_count == 0)
			continue;
		if (c->ptr == P53_DNS_HDR_LEN) {
			if (put_bytes(w, sig, rs->sig_len) != 0)
				goto full;
		} else {
			for (uint8_t k = 0; k < rs->sig_count; k++) {
				uint16_t l = (uint16_t)(10 + p53_get16(sig + P53_RR_OWNER_LEN + 8));
				if (c->ptr == 0) {
					if (put_name(w, c->name) != 0)
						goto full;
				} else {
					if (w->pos + 2u > w->limit)
						goto full;
					p53_put16(w->buf + w->pos, (uint16_t)(0xc000 | c->ptr));
					w->pos = (uint16_t)(w->pos + 2);
				}
				if (put_bytes(w, sig + P53_RR_OWNER_LEN, l) != 0)
					goto full;
				sig += P53_RR_OWNER_LEN + l;
			}
		}
		count = rs->sig_count;
		break;
	}
	w->cnt[SEC_AN] = (uint16_t)(w->cnt[SEC_AN] + count);
	return count;
full:
	w->pos = save;
	w->nc = save_nc;
	w->tc = 1; /* RFC 2181 §9 */
	return -1;
}

/*
 * A steered RRset (steer.h): the variant the published steering table picks for this client
 * instead of the image's records (every target). The client is the ECS address when the
 * query carried one with a SOURCE PREFIX-LENGTH above 0, else the packet's source (RFC 7871
 * §7.1.2: source 0 asks for the resolver's own address; the answer then has scope 0). Out of
 * line: only steered answers pay for it.
 * @param rd  set to the variant's first record (its owner pointer, TYPE..., RDATA at +12),
 *            for a steered CNAME's chase
 * @return 1 when written, 2 when TC was set instead, 0 to send the image's RRset.
 */
static __attribute__((noinline)) int steered(struct ctx *c, const struct p53_image_node *n,
					     const struct p53_image_rrset *rs, const uint8_t **rd)
{
	const void *t = __atomic_load_n(c->conf->steer, __ATOMIC_ACQUIRE);
	struct p53_steer_client cl, *clp = NULL;
	struct p53_ecs_opt ecs;
	int src0 = 0;

	if (t == NULL)
		return 0;
	const struct p53_steer_rec *r;
	/* By the node's index (no name compared), or by name when it does not hold. */
	if (!p53_steer_at(t, p53_image_hdr(c->img)->steer_layout, n->steer, rs->type, &r)) {
		const uint8_t *name = node_name(c, n);
		uint32_t hash = n->name_len == c->q->qname_len && c->name == c->q->lname ?
				c->q->hash : p53_name_hash(name, n->name_len);
		r = p53_steer_find(t, name, n->name_len, hash, rs->type);
	}
	if (r == NULL)
		return 0;
	if (c->ecs_len != 0 && p53_edns_ecs_parse(c->ecs, c->ecs_len, &ecs) == P53_ECS_OK &&
	    ecs.source > 0) {
		cl.v6 = ecs.family == P53_ECS_FAMILY_IPV6;
		memcpy(cl.addr, ecs.addr, 16);
		clp = &cl;
	} else if (c->q->src != NULL) {
		src0 = c->ecs_len != 0;
		cl.v6 = c->q->src_v6;
		memcpy(cl.addr, c->q->src, cl.v6 ? 16 : 4);
		clp = &cl;
	}
	uint8_t scope = 0;
	const struct p53_steer_variant *v = p53_steer_pick(t, r, clp, &scope);
	/* The longest prefix any steered step of the answer depended on (a steered CNAME may
	 * lead to another steered record). */
	if (!src0 && scope > c->scope)
		c->scope = scope;
	struct p53_image_rrset vrs = *rs;
	vrs.count = v->count;
	vrs.ttl = v->ttl;
	vrs.rdata_len = v->rdata_len;
	vrs.sig_count = (uint8_t)v->sig_count; /* signed by the control thread (dnssec.signing_keys); */
	vrs.sig_len = (uint16_t)v->sig_len;    /* p53_steer_check bounds both */
	vrs.flags = 0;
	*rd = p53_steer_rdata(t, v);
	if (put_rrset_rd(&c->w, &vrs, *rd, c->name, c->ptr, SEC_AN, P53_NONE) != 0) {
		c->w.tc = 1;
		return 2;
	}
	return 1;
}

/* Data at a node (exact match or wildcard expansion, owner = the current name). `ni` is the
   node; `ce` the closest encloser when it is a wildcard expanding the name, else P53_NONE. */
static int answer_node(struct ctx *c, const struct p53_image_node *n, uint32_t ni, uint32_t ce)
{
	uint16_t qtype = c->q->qtype;

	/* Like Knot: RRSIG and NSEC questions at a CNAME owner are answered there. */
	if ((n->flags & P53_NODE_CNAME) && qtype != P53_T_CNAME && qtype != P53_T_RRSIG &&
	    qtype != P53_T_NSEC) {
		uint32_t rsi = p53_image_node_rrset(c->img, n, P53_T_CNAME);
		const struct p53_image_rrset *rs = crrset(c, rsi);
		const uint8_t *rd = p53_image_rdata(c->img, rs);
		int st;
		hint_apex(c);
		c->kind = P53_ANS_ANSWER; /* truncated or not */
		/* A steered CNAME: the variant's target is written and chased like a static one. */
		if (__builtin_expect((rs->flags & P53_RRSET_STEERED) != 0, 0) && c->conf->steer != NULL &&
		    (st = steered(c, n, rs, &rd)) != 0) {
			if (st == 2)
				return DONE;
		} else if (put_or_tc(c, rsi, c->name, c->ptr, SEC_AN, P53_NONE) != 0) {
			return DONE;
		}
		if (qtype == P53_T_ANY)
			return DONE;
		return set_name(c, rd + P53_RR_OWNER_LEN + 10) == 0 ? NEXT : DONE;
	}
	uint32_t rsi = P53_NONE;
	if (qtype == P53_T_ANY) {
		/* RFC 8482 §4.2: one RRset of the responder's choosing, never the whole node. */
		if (n->n_rrsets > 0)
			rsi = n->rrsets;
	} else if (qtype == P53_T_RRSIG) {
		int k = put_sigs(c, n);
		if (k > 0)
			c->kind = P53_ANS_ANSWER;
		if (k != 0)
			return DONE;
		/* No signed RRset here: RRSIGs that cover none of the node's RRsets, which the
		   compiler keeps as an RRset of type RRSIG (control/zone/dnssec_build.c), if any. */
		rsi = p53_image_node_rrset(c->img, n, qtype);
	} else {
		rsi = p53_image_node_rrset(c->img, n, qtype);
	}
	if (rsi == P53_NONE) {
		negative(c, c->rcode, P53_ANS_NODATA, ni, ce);
		return DONE;
	}
	const struct p53_image_rrset *rs = crrset(c, rsi);
	if ((rs->flags & P53_RRSET_COMPRESS) || rs->adds != P53_NONE)
		hint_apex(c);
	c->kind = P53_ANS_ANSWER; /* truncated or not: TC is counted on its own */
	const uint8_t *rd;
	if (__builtin_expect((rs->flags & P53_RRSET_STEERED) != 0, 0) && c->conf->steer != NULL &&
	    steered(c, n, rs, &rd))
		return DONE;
	put_or_tc(c, rsi, c->name, c->ptr, SEC_AN, P53_NONE);
	return DONE;
}

/* A cut or DNAME above the node: referral or synthesis. */
static int occluded(struct ctx *c, uint32_t occ, int hop)
{
	const struct p53_image_node *o = cnode(c, occ);

	if (o->flags & P53_NODE_CUT) {
		referral(c, o, hop);
		return DONE;
	}
	return dname(c, o, c->labels - o->labels);
}

/* The closest encloser of a name that is not in the image itself: its deepest existing
 * ancestor (ENTs exist as nodes), *keep = the labels below it; P53_NONE when no served zone
 * holds the name. No node has more labels than the image's deepest name, so the walk starts
 * at that depth: a 127-label query costs as many probes as the image is deep, not 126. */
static uint32_t encloser(const void *img, const uint8_t *name, uint8_t len, uint8_t labels,
			 const uint8_t *loff, int *keep)
{
	uint32_t deepest = p53_image_hdr(img)->max_labels;
	int from = labels > deepest ? labels - (int)deepest : 1;

	for (int k = from; k <= labels; k++) {
		const uint8_t *s = name + loff[k];
		size_t sl = (size_t)len - loff[k];
		uint32_t ni = p53_image_find(img, s, sl, p53_name_hash(s, sl));
		if (ni != P53_NONE) {
			*keep = k;
			return ni;
		}
	}
	return P53_NONE;
}

/* RFC 1034 §4.3.2, over the image. `hop` counts CNAME/DNAME links followed. */
static void resolve(struct ctx *c)
{
	const void *img = c->img;

	uint64_t seen[MAX_CHAIN + 1];

	for (int hop = 0; hop <= MAX_CHAIN; hop++) {
		uint32_t h = hop == 0 ? c->q->hash : p53_name_hash(c->name, c->len);
		uint32_t ni = c->labels <= p53_image_hdr(img)->max_labels ?
			      p53_image_find(img, c->name, c->len, h) : P53_NONE;
		const struct p53_image_node *n;
		uint32_t ce = P53_NONE;
		int keep = 0;

		/* Like Knot, a chain stops when a name repeats: a CNAME loop is answered with
		 * each link once (RFC 1034 §3.6.2 asks resolvers to detect loops; we do not
		 * spin on them either). */
		seen[hop] = (uint64_t)h << 8 | c->len;
		for (int i = 0; i < hop; i++)
			if (seen[i] == seen[hop])
				return;

		if (ni == P53_NONE) {
			ni = encloser(img, c->name, c->len, c->labels, c->loff, &keep);
			if (ni == P53_NONE) {
				if (hop == 0) {
					c->rcode = P53_RCODE_REFUSED; /* not authoritative for it */
					c->aa = 0;
					c->kind = P53_ANS_REFUSED;
					c->ede = P53_EDE_NOT_AUTHORITATIVE; /* RFC 8914 §4.21 */
				}
				return;
			}
		}
		n = p53_image_node(img, ni);
		/* RFC 4035 §3.1.4.1: DS at a child apex is the parent's data. */
		if (keep == 0 && hop == 0 && c->q->qtype == P53_T_DS && (n->flags & P53_NODE_APEX) &&
		    p53_image_node_parent_side(img, n) != P53_NONE) {
			ni = p53_image_node_parent_side(img, n);
			n = p53_image_node(img, ni);
		}
		ni = p53_image_node_index(img, n);      /* PROTOTYPE: relative from here on */
		/* Like Knot, a CNAME chain is only followed inside the zone it starts in. */
		if (hop > 0 && n->zone != c->zone)
			return;
		c->zone = n->zone;
		/* A zone without data here (secondary not transferred yet or expired, catalog):
		 * its RCODE for everything at or below its apex (image.h). */
		if (hop == 0 && p53_image_zone(img, n->zone)->rcode != 0) {
			c->rcode = p53_image_zone(img, n->zone)->rcode;
			c->aa = 0;
			c->kind = c->rcode == P53_RCODE_REFUSED ? P53_ANS_REFUSED : P53_ANS_ERROR;
			return;
		}

		if (n->occluder != P53_NONE) {
			if (occluded(c, n->occluder, hop) == NEXT)
				continue;
			return;
		}
		if ((n->flags & P53_NODE_CUT) && !(keep == 0 && c->q->qtype == P53_T_DS)) {
			referral(c, n, hop);
			return;
		}
		if (keep > 0) {
			if (n->flags & P53_NODE_DNAME) {
				if (dname(c, n, keep) == NEXT)
					continue;
				return;
			}
			if (n->wildcard == P53_NONE) {
				negative(c, P53_RCODE_NXDOMAIN, P53_ANS_NXDOMAIN, ni, P53_NONE);
				return;
			}
			ce = ni;
			ni = n->wildcard;
			n = cnode(c, ni); /* RFC 4592 §3.3.3 */
			if (denying(c) && c->n_wild <= MAX_CHAIN) {
				struct p53_dname nm = cur_name(c);
				c->wild[c->n_wild++] = p53_dnssec_wildcard(img, c->zone, ce, &nm);
			}
			/* A wildcard cut: a referral (DS: its data, as at any cut). The proof
			   that the name does not exist goes with it, as Knot sends. */
			if (__builtin_expect((n->flags & P53_NODE_CUT) != 0, 0) &&
			    c->q->qtype != P53_T_DS) {
				wild_referral(c, n, ce, hop);
				return;
			}
		}
		if (answer_node(c, n, ni, ce) != NEXT)
			return;
	}
}

/* Additional section (RFC 1034 §4.3.2 step 6): A and AAAA of NS/MX/SRV targets and glue.
 * Whatever does not fit is left out without TC (RFC 2181 §9), except a referral's in-domain
 * glue (the `required` head of its list): RFC 9471 §3 wants all of it, or TC=1. Sibling
 * and other glue stays optional (§2.2). */
static void additionals(struct ctx *c)
{
	uint32_t added[MAX_ADDED];
	unsigned int n_added = 0;
	static const uint16_t types[2] = {P53_T_A, P53_T_AAAA};

	for (unsigned int a = 0; a < c->n_adds; a++) {
		const uint32_t *list = p53_image_adds(c->img, c->adds[a]);
		uint32_t count = P53_ADDS_COUNT(list[0]), req = P53_ADDS_REQUIRED(list[0]);
		for (uint32_t i = 1; i <= count; i++) {
			uint32_t ni = list[i];
			unsigned int k;
			for (k = 0; k < n_added && added[k] != ni; k++)
				;
			if (k < n_added)
				continue;
			if (n_added == MAX_ADDED) {
				c->w.tc |= i <= req;
				return;
			}
			added[n_added++] = ni;
			const struct p53_image_node *n = p53_image_node(c->img, c->adds_base[a] + ni);
			uint16_t owner = 0;     /* where the A's owner went: the AAAA points there */
			for (int t = 0; t < 2; t++) {
				uint32_t rsi = p53_image_node_rrset(c->img, n, types[t]);
				if (rsi == P53_NONE)
					continue;
				uint16_t at = c->w.pos;
				if (put_rrset(&c->w, c->img, p53_image_nrrset(c->img, n, rsi), node_name(c, n),
					      owner, SEC_AR, P53_NONE) != 0) {
					c->w.tc |= i <= req; /* RFC 9471 §3 */
					return;
				}
				if (owner == 0)
					owner = (c->w.buf[at] & 0xc0) == 0xc0 ? p53_get16(c->w.buf + at) & 0x3fff
									      : (at < 0x4000 ? at : 0);
			}
		}
	}
}

/* CHAOS class: the identity names operators use to map anycast catchments. */
static void chaos(struct ctx *c)
{
	static const uint8_t id_server[] = "\x02id\x06server";
	static const uint8_t hostname_bind[] = "\x08hostname\x04" "bind";
	static const uint8_t version_bind[] = "\x07version\x04" "bind";
	static const uint8_t version_server[] = "\x07version\x06server";
	const uint8_t *txt = NULL;
	uint8_t txt_len = 0;
	const uint8_t *name = c->q->lname;

	c->kind = P53_ANS_CHAOS;
	if (memcmp(name, id_server, sizeof(id_server)) == 0 ||
	    memcmp(name, hostname_bind, sizeof(hostname_bind)) == 0) {
		txt = c->conf->identity;
		txt_len = c->conf->identity_len;
	} else if (memcmp(name, version_bind, sizeof(version_bind)) == 0 ||
		   memcmp(name, version_server, sizeof(version_server)) == 0) {
		txt = c->conf->version;
		txt_len = c->conf->version_len;
	}
	if (txt_len == 0 || (c->q->qtype != P53_T_TXT && c->q->qtype != P53_T_ANY)) {
		c->rcode = P53_RCODE_REFUSED;
		c->aa = 0;
		return;
	}
	uint8_t rr[12];
	p53_put16(rr, 0xc000 | P53_DNS_HDR_LEN);
	p53_put16(rr + 2, P53_T_TXT);
	p53_put16(rr + 4, P53_C_CH);
	p53_put32(rr + 6, 0);
	p53_put16(rr + 10, (uint16_t)(txt_len + 1));
	uint16_t save = c->w.pos;
	if (put_bytes(&c->w, rr, sizeof(rr)) != 0 || put_bytes(&c->w, &txt_len, 1) != 0 ||
	    put_bytes(&c->w, txt, txt_len) != 0) {
		c->w.pos = save;
		c->w.tc = 1;
		return;
	}
	c->w.cnt[SEC_AN]++;
}

/* RFC 6891 §6.1.2: our OPT; the extended RCODE's upper bits go in its TTL. */
static inline __attribute__((always_inline)) void put_opt(struct ctx *c, uint16_t payload)
{
	struct wr *w = &c->w;
	uint8_t *p = w->buf + w->pos;
	int nsid = c->q->nsid && c->conf->identity_len > 0;
	uint16_t rdlen = nsid ? (uint16_t)(4 + c->conf->identity_len) : 0;

	p[0] = 0;
	p53_put16(p + 1, P53_T_OPT);
	p53_put16(p + 3, payload);
	/* ext-rcode, version 0, DO echoed (RFC 3225 §3); other flags and Z are not copied. */
	p53_put32(p + 5, (uint32_t)(c->rcode >> 4) << 24 | (c->q->edns_do ? 0x8000u : 0));
	p53_put16(p + 9, rdlen);
	if (nsid) {
		p53_put16(p + 11, P53_EDNS_NSID);
		p53_put16(p + 13, c->conf->identity_len);
		memcpy(p + 15, c->conf->identity, c->conf->identity_len);
	}
	if (c->x != NULL && c->x->opt_extra_len != 0) {
		/* The guard's option (a server cookie): room was kept for it (`reserve`), as for
		 * NSID. */
		memcpy(p + OPT_LEN + rdlen, c->x->opt_extra, c->x->opt_extra_len);
		rdlen = (uint16_t)(rdlen + c->x->opt_extra_len);
		p53_put16(p + 9, rdlen);
	}
	/* RFC 7871 §7.2.1: ECS echoed, FAMILY, SOURCE and ADDRESS as sent, our SCOPE; room was
	 * kept for it (`reserve`). */
	if (c->ecs_len != 0) {
		uint8_t *e = p + OPT_LEN + rdlen;
		p53_put16(e, P53_EDNS_ECS);
		p53_put16(e + 2, c->ecs_len);
		memcpy(e + 4, c->ecs, c->ecs_len);
		e[4 + 3] = c->scope;
		rdlen = (uint16_t)(rdlen + 4 + c->ecs_len);
		p53_put16(p + 9, rdlen);
	}
	/* RFC 7828 §3.3.2: on TCP, a query with the option learns our idle timeout (when it fits:
	 * the option is a MAY, and a response that fills 65535 bytes has no room left for it). */
	if (c->q->keepalive && c->conf->tcp_limit != 0 &&
	    (uint32_t)w->pos + OPT_LEN + rdlen + KEEPALIVE_LEN <= c->max) {
		uint8_t *k = p + OPT_LEN + rdlen;
		p53_put16(k, P53_EDNS_TCP_KEEPALIVE);
		p53_put16(k + 2, 2);
		p53_put16(k + 4, c->conf->keepalive);
		rdlen = (uint16_t)(rdlen + KEEPALIVE_LEN);
		p53_put16(p + 9, rdlen);
	}
	/* EDE only goes on answers that carry no records, so it always fits in `max`. */
	if (c->ede != 0 && (uint32_t)w->pos + OPT_LEN + rdlen + 6 <= c->max) {
		uint8_t *e = p + OPT_LEN + rdlen;
		p53_put16(e, P53_EDNS_EDE);
		p53_put16(e + 2, 2);
		p53_put16(e + 4, c->ede);
		rdlen = (uint16_t)(rdlen + 6);
		p53_put16(p + 9, rdlen);
	}
	w->pos = (uint16_t)(w->pos + OPT_LEN + rdlen);
	w->cnt[SEC_AR]++;
}

/* The header over the records written: QDCOUNT says whether the question bytes before the
 * records are there (c->has_q), so what is returned always parses as what it says. */
static uint16_t finish(struct ctx *c, int with_opt, uint16_t payload)
{
	uint8_t *h = c->w.buf;
	uint16_t flags = (uint16_t)(P53_F_QR | (c->q->flags & (0x7800u | P53_F_RD | P53_F_CD)));

	if (with_opt)
		put_opt(c, payload);
	if (c->aa)
		flags |= P53_F_AA;
	if (c->w.tc)
		flags |= P53_F_TC;
	flags |= c->rcode & 0xfu;
	p53_put16(h + 2, flags);
	p53_put16(h + 4, c->has_q);
	p53_put16(h + 6, c->w.cnt[SEC_AN]);
	p53_put16(h + 8, c->w.cnt[SEC_NS]);
	p53_put16(h + 10, c->w.cnt[SEC_AR]);
	if (c->x != NULL) {
		c->x->kind = c->kind;
		c->x->rcode = c->rcode;
		c->x->zone = c->zone;
		c->x->cut = c->cut;
	}
	return c->w.pos;
}

/* A query no served zone holds (answered REFUSED): Knot looks at a key in the context of a zone,
 * so a signed query for a name outside every zone is REFUSED, unsigned; pop53 does the same. */
static __attribute__((noinline, cold)) int not_ours(const void *img, const struct p53_query *q)
{
	int keep;

	if (img == NULL || (q->qclass != P53_C_IN && q->qclass != P53_C_ANY))
		return img == NULL;
	return (q->qname_labels > p53_image_hdr(img)->max_labels ||
		p53_image_find(img, q->lname, q->qname_len, q->hash) == P53_NONE) &&
	       encloser(img, q->lname, q->qname_len, q->qname_labels, q->label_off, &keep) == P53_NONE;
}

/* Response size: RFC 6891 §6.2.3-5, clamped to [512, our maximum] and to the buffer; on TCP
 * the 16-bit length field is the only limit. */
static uint16_t size_limit(const struct p53_answer_conf *conf, const struct p53_query *q,
			   uint16_t cap)
{
	uint16_t max = P53_UDP_MIN;

	if (q->edns) {
		max = q->edns_payload < P53_UDP_MIN ? P53_UDP_MIN : q->edns_payload;
		if (max > p53_our_payload(conf->edns_max_payload))
			max = p53_our_payload(conf->edns_max_payload);
	}
	max |= conf->tcp_limit; /* 65535 on TCP (RFC 7766 §8), 0 on UDP */
	return max > cap ? cap : max;
}

/*
 * RFC 8945 §5.2: a signed message is checked before it is processed, and pop53 holds no keys
 * (the transfer work adds them on the control side): every key is unknown. §5.3.2: NOTAUTH,
 * and an unsigned TSIG RR with error BADKEY and an empty MAC, with the request's key name,
 * algorithm, time signed, fudge and original ID (as Knot answers). The request's TSIG is where
 * the response is written, so its fields are copied out first.
 */
static __attribute__((noinline, cold)) uint16_t tsig_badkey(struct ctx *c, uint16_t max,
							       uint16_t ours)
{
	const struct p53_query *q = c->q;
	const uint8_t *rd = c->w.buf + q->tsig_rdata;
	uint8_t key[P53_NAME_MAXLEN], alg[P53_NAME_MAXLEN], tf[8], oid[2];
	int kl = p53_msg_name(c->w.buf, (size_t)q->tsig_rdata, q->tsig_owner, key);
	uint16_t al = q->tsig_alg_len;

	memcpy(alg, rd, al);
	memcpy(tf, rd + al, 8);                         /* time signed, fudge */
	memcpy(oid, rd + al + 10 + q->tsig_mac_len, 2); /* original ID */
	c->rcode = P53_RCODE_NOTAUTH;
	c->kind = P53_ANS_ERROR;
	c->max = max;
	c->w.limit = max;
	uint16_t nsid = q->nsid && c->conf->identity_len ? (uint16_t)(4 + c->conf->identity_len) : 0;
	if (q->edns && (uint32_t)c->w.pos + OPT_LEN + nsid <= max)
		put_opt(c, ours);
	uint16_t rdlen = (uint16_t)(al + 16);
	uint8_t fixed[10], tail[8];
	p53_put16(fixed, P53_T_TSIG);
	p53_put16(fixed + 2, P53_C_ANY);
	p53_put32(fixed + 4, 0);
	p53_put16(fixed + 8, rdlen);
	p53_put16(tail, 0);                             /* MAC size: unsigned */
	memcpy(tail + 2, oid, 2);
	p53_put16(tail + 4, P53_TSIG_ERR_BADKEY);
	p53_put16(tail + 6, 0);                         /* other len */
	uint16_t save = c->w.pos;
	if (kl < 0 || put_bytes(&c->w, key, (size_t)kl) != 0 || put_bytes(&c->w, fixed, 10) != 0 ||
	    put_bytes(&c->w, alg, al) != 0 || put_bytes(&c->w, tf, 8) != 0 ||
	    put_bytes(&c->w, tail, 8) != 0) {
		c->w.pos = save;
		c->w.tc = 1;    /* key and algorithm names too long for the size limit */
	} else {
		c->w.cnt[SEC_AR]++;
	}
	return finish(c, 0, 0);
}

static void count(struct p53_answer_stats *st, const struct ctx *c)
{
	st->rcode[c->rcode <= 16 ? c->rcode : 16]++;
	st->kind[c->kind]++;
	if (c->w.tc)
		st->tc++;
}

/* Is the NOTIFY's zone the apex of a secondary zone of the image (control/xfr/ answers)? */
static int notify_is_ours(const void *img, const struct p53_query *q)
{
	if (img == NULL || q->qclass != P53_C_IN)
		return 0;
	uint32_t ni = p53_image_find(img, q->lname, q->qname_len, q->hash);
	if (ni == P53_NONE)
		return 0;
	const struct p53_image_node *n = p53_image_node(img, ni);
	return (n->flags & P53_NODE_APEX) && (p53_image_zone(img, n->zone)->flags & P53_ZONE_SECONDARY);
}

int p53_answer_signed_soa_handoff(const void *img, const struct p53_query *q)
{
	if (img == NULL || !q->tsig || P53_OPCODE(q->flags) != P53_OPCODE_QUERY ||
	    q->qtype != P53_T_SOA || q->qclass != P53_C_IN)
		return 0;
	uint32_t ni = p53_image_find(img, q->lname, q->qname_len, q->hash);
	if (ni == P53_NONE)
		return 0;
	const struct p53_image_node *n = p53_image_node(img, ni);
	return (n->flags & P53_NODE_APEX) && (p53_image_zone(img, n->zone)->flags & P53_ZONE_XFR_SIGNED);
}

uint16_t p53_answer(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
		    uint16_t len, uint16_t cap, struct p53_answer_stats *st)
{
	struct p53_query q;
	enum p53_msg_status ms = p53_msg_parse(msg, len, &q);

	return p53_answer_parsed(img, conf, msg, cap, st, &q, ms);
}

/* The body of p53_answer_parsed() and p53_answer_ext(), inlined into each so the common
 * path (no extension) pays nothing for the guard's. */
static inline __attribute__((always_inline)) uint16_t
answer(const void *img, const struct p53_answer_conf *conf, uint8_t *msg, uint16_t cap,
       struct p53_answer_stats *st, const struct p53_query *qp, enum p53_msg_status ms,
       struct p53_answer_ext *x)
{
	struct ctx c;

	st->queries++;
	st->msg[ms]++;
	if (ms == P53_MSG_SHORT || ms == P53_MSG_RESPONSE) {
		st->kind[P53_ANS_DROP]++;
		if (x != NULL)
			x->kind = P53_ANS_DROP;
		return 0;
	}
	if (qp->trailing != 0)
		st->trailing++;

	c.img = img;
	c.conf = conf;
	c.q = qp;
	c.x = x;
	c.cut = NULL;
	c.aa = 0;
	c.rcode = P53_RCODE_NOERROR;
	c.kind = P53_ANS_ERROR;
	c.zone = P53_NONE;
	c.n_adds = 0;
	c.n_denied = 0;
	c.n_wild = 0;
	c.ede = 0;
	c.max = 0;
	c.ecs_len = 0;
	c.scope = 0;
	c.w.buf = msg;
	c.w.tc = 0;
	c.w.nc = 0;
	c.w.q_pending = 0;
	c.w.dnssec = qp->edns && qp->edns_do;
	c.w.hint_ptr = 0;
	c.w.additional = 0;
	c.w.q = qp;
	c.w.cnt[0] = c.w.cnt[1] = c.w.cnt[2] = 0;

	/* The parser says the question is valid (qname_len != 0) from P53_MSG_RR on: then it is
	 * echoed, else the response is the header alone (dnsmsg.h). */
	c.has_q = qp->qname_len != 0;
	c.w.pos = c.has_q ? (uint16_t)(P53_DNS_HDR_LEN + qp->qname_len + 4) : P53_DNS_HDR_LEN;
	c.w.limit = c.w.pos; /* error responses carry nothing but the header and question */

	/* NSD's order: opcode first (RFC 1035 §4.1.1), then the message's structure. QUERY,
	 * NOTIFY (RFC 1996 §3) and UPDATE (RFC 2136 §2) share the sections the parser reads, so a
	 * malformed one of them is FORMERR; an opcode we do not implement is NOTIMP whatever
	 * its body, since its format may differ (DSO, RFC 8490, has no question). */
	unsigned int opcode = P53_OPCODE(qp->flags);
	int sections_known = opcode == P53_OPCODE_QUERY || opcode == P53_OPCODE_NOTIFY ||
			     opcode == P53_OPCODE_UPDATE;
	/* A signed NOTIFY for a secondary zone's apex is the control thread's to verify against
	 * the keys it holds (control/xfr/notify.c); any other signed message names a key the
	 * workers do not know. */
	if (ms == P53_MSG_OK && qp->tsig && !(opcode == P53_OPCODE_QUERY && not_ours(img, qp)) &&
	    !(opcode == P53_OPCODE_NOTIFY && notify_is_ours(img, qp))) {
		/* A signed SOA query for a zone fed with a key: the control thread verifies and
		 * answers it (the worker hands it over, worker.c). */
		if (p53_answer_signed_soa_handoff(img, qp)) {
			st->kind[P53_ANS_HANDOFF]++;
			return 0;
		}
		uint16_t n = tsig_badkey(&c, size_limit(conf, qp, cap), p53_our_payload(conf->edns_max_payload));
		count(st, &c);
		return n;
	}
	if (opcode == P53_OPCODE_NOTIFY && ms == P53_MSG_OK) {
		/* RFC 1996: the worker hands every NOTIFY to the control thread (worker.c). For
		 * the apex of a secondary zone the control thread checks the sender and TSIG and
		 * answers; for anything else nobody may notify us: NOTAUTH, as Knot answers a
		 * NOTIFY for a zone it does not have or that no ACL allows. */
		if (notify_is_ours(img, qp)) {
			st->kind[P53_ANS_NOTIFY]++;
			return 0;
		}
		c.rcode = P53_RCODE_NOTAUTH;
		c.kind = P53_ANS_NOTIFY;
		count(st, &c);
		return finish(&c, 0, 0);
	}
	if (ms != P53_MSG_OK && sections_known) {
		c.rcode = P53_RCODE_FORMERR;
		count(st, &c);
		/* RFC 6891 §6.1.1: when the OPT itself was read, the response has one too (as Knot
		 * answers a malformed option). It fits: the query's OPT was longer. */
		int opt = qp->edns && (ms == P53_MSG_OPT_OPTION || ms == P53_MSG_OPT_COOKIE ||
				       ms == P53_MSG_OPT_ECS);
		return finish(&c, opt, p53_our_payload(conf->edns_max_payload));
	}
	if (opcode != P53_OPCODE_QUERY) {
		c.rcode = P53_RCODE_NOTIMP;
		c.kind = P53_ANS_ERROR;
		count(st, &c);
		return finish(&c, 0, 0);
	}
	st->qtype[qp->qtype < P53_QTYPE_BUCKETS - 1 ? qp->qtype : P53_QTYPE_BUCKETS - 1]++;

	uint16_t ours = p53_our_payload(conf->edns_max_payload);
	uint16_t max = size_limit(conf, qp, cap);
	uint16_t reserve = 0;
	if (qp->edns)
		reserve = (uint16_t)(OPT_LEN + (qp->nsid && conf->identity_len ? 4 + conf->identity_len : 0) +
				     (x != NULL ? x->opt_extra_len : 0));
	if (__builtin_expect(qp->ecs, 0) && qp->edns && qp->ecs_len <= sizeof(c.ecs)) {
		/* The option lies where the answer is about to be written: keep a copy. */
		memcpy(c.ecs, msg + qp->ecs_off, qp->ecs_len);
		c.ecs_len = (uint8_t)qp->ecs_len;
		reserve = (uint16_t)(reserve + 4 + qp->ecs_len);
	}
	if (c.w.pos + reserve > max) {
		c.rcode = P53_RCODE_SERVFAIL; /* a buffer this small cannot happen on a real port */
		count(st, &c);
		return finish(&c, 0, 0);
	}
	c.w.limit = (uint16_t)(max - reserve);
	c.max = max;

	/* RFC 6891 §6.1.3: an EDNS version we do not implement gets BADVERS, with version 0. */
	if (qp->edns && qp->edns_version > 0) {
		c.rcode = P53_RCODE_BADVERS;
		count(st, &c);
		return finish(&c, 1, ours);
	}

	switch (qp->qclass) {
	case P53_C_IN:
	case P53_C_ANY: /* RFC 1035 §3.2.5: QCLASS * matches our only data class */
		break;
	case P53_C_CH:
		chaos(&c); /* not authoritative data: AA stays clear, as in Knot */
		count(st, &c);
		return finish(&c, qp->edns, ours);
	default:
		c.rcode = P53_RCODE_REFUSED;
		c.kind = P53_ANS_REFUSED;
		count(st, &c);
		return finish(&c, qp->edns, ours);
	}
	switch (qp->qtype) {
	case P53_T_AXFR:
	case P53_T_IXFR:
	case P53_T_MAILA:
	case P53_T_MAILB:
	case P53_T_OPT:
	case P53_T_TSIG:
		/* Transfers need TCP (and a later issue); meta types are not answered from data. */
		if (qp->qtype == P53_T_OPT || qp->qtype == P53_T_TSIG)
			c.rcode = P53_RCODE_FORMERR;
		else if (qp->qtype == P53_T_IXFR)
			c.rcode = P53_RCODE_NOTAUTH; /* not a transfer source for anyone (as Knot) */
		else
			c.rcode = P53_RCODE_NOTIMP;
		count(st, &c);
		return finish(&c, qp->edns, ours);
	default:
		break;
	}
	if (img == NULL) {
		c.rcode = P53_RCODE_REFUSED;
		c.kind = P53_ANS_REFUSED;
		c.ede = P53_EDE_NOT_AUTHORITATIVE;
		count(st, &c);
		return finish(&c, qp->edns, ours);
	}

	c.aa = P53_F_AA;
	c.name = qp->lname;
	c.len = qp->qname_len;
	c.labels = qp->qname_labels;
	c.ptr = P53_DNS_HDR_LEN;
	c.loff = qp->label_off;
	c.w.q = qp;
	c.w.q_pending = 1;

	resolve(&c);
	if (c.n_wild > 0 && !c.w.tc) {
		/* Proofs of the wildcard expansions, once the answer section is complete. */
		struct p53_denial d = { .n = 0 };
		for (uint8_t i = 0; i < c.n_wild && d.n < P53_DENIAL_MAX; i++)
			if (c.wild[i] != P53_NONE)
				d.node[d.n++] = c.wild[i];
		put_denial(&c, &d);
	}
	if (!c.w.tc) {
		c.w.additional = 1;
		additionals(&c);
	}
	count(st, &c);
	return finish(&c, qp->edns, ours);
}

uint16_t p53_answer_parsed(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			   uint16_t cap, struct p53_answer_stats *st, const struct p53_query *qp,
			   enum p53_msg_status ms)
{
	return answer(img, conf, msg, cap, st, qp, ms, NULL);
}

uint16_t p53_answer_ext(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			uint16_t cap, struct p53_answer_stats *st, const struct p53_query *qp,
			enum p53_msg_status ms, struct p53_answer_ext *x)
{
	return answer(img, conf, msg, cap, st, qp, ms, x);
}
