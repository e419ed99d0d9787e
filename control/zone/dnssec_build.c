/*
 * Zone compiler, DNSSEC part: serves zones signed elsewhere (dnssec-signzone, ldns-signzone,
 * Knot). Runs on the control thread (and in pop53ctl's config check); allocates with malloc.
 *
 * Three steps of image_build.c's pipeline:
 *  2b. p53_dnssec_steer_denial: for steered owners of a keyed zone that its chain lacks, an
 *      NSEC or NSEC3 made and signed here (zone_build.h), so NODATA there can be proven.
 *  3c. p53_dnssec_attach: each RRSIG goes with the RRset it covers (RRSIGs sort by Type
 *      Covered, the first field of their RDATA, so each RRset's are one run of records), the
 *      RRSIG RRsets leave the RRset list, and each zone's earliest expiration is kept.
 *  5d. p53_dnssec_build: NSEC3 owners leave the name index; for NSEC zones the canonical
 *      order (RFC 4034 §6.1) gives the chain and, per node, its own or covering NSEC, the
 *      NSEC covering its wildcard and the range of NSEC owners below it; for NSEC3 zones each
 *      name is hashed once and matched against the sorted hashes, giving per node its
 *      matching NSEC3, its closest provable encloser's, the one covering that encloser's
 *      wildcard and, under opt-out, the one covering its next closer name (RFC 5155 §7.2).
 * The worker then only searches what depends on the query name (dataplane/dnssec.c).
 *
 * Checks, as errors (file:line, the zone is not served): NSEC3 records without an NSEC3PARAM,
 * several NSEC3PARAMs, a hash algorithm other than SHA-1, NSEC3 owners that are not one base32hex
 * label below the apex, NSEC3s of another chain than the NSEC3PARAM's, NSEC3 beside other data,
 * more than 255 RRSIGs on one RRset. As warnings: RRSIGs covering no RRset, signed RRsets left
 * unsigned, names without their NSEC/NSEC3, a signed zone without DNSKEY or denial records,
 * signatures already expired.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ldns/ldns.h>

#include "control/dnssec/sign.h"
#include "control/text.h"
#include "control/zone/image_build.h"
#include "control/zone/zone_build.h"
#include "dataplane/dnssec.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

#define T_SOA        6
#define T_RRSIG      46
#define T_NSEC       47
#define T_DNSKEY     48
#define T_NSEC3      50
#define T_NSEC3PARAM 51
#define T_DS         43
#define T_NS         2
#define WARN_MAX     5   /* warnings of one kind per zone before a summary */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static const char *owner(const struct p53_zb *b, uint32_t node, char *buf, size_t cap)
{
	return p53_name_to_str(buf, cap, b->names + b->nodes[node].name_off);
}

/* RRset of a type at a node, in the build arrays; P53_NONE. */
static uint32_t node_rrset(const struct build *s, uint32_t n, uint16_t type)
{
	const struct p53_zb_node *nd = &s->zb.nodes[n];

	for (uint32_t i = nd->rrsets; i < nd->rrsets + nd->n_rrsets; i++)
		if (s->rrsets[i].type == type)
			return i;
	return P53_NONE;
}

/* A node owning a steered record. */
static int steered_node(const struct build *s, uint32_t n)
{
	const struct p53_zb_node *nd = &s->zb.nodes[n];

	for (uint32_t i = nd->rrsets; i < nd->rrsets + nd->n_rrsets; i++)
		if ((s->rrsets[i].flags & P53_RRSET_STEERED) && s->rrsets[i].type != T_NSEC)
			return 1;
	return 0;
}

/* RFC 4034 §3.1.5: expiration is serial-number time; resolve it around `now`. */
static uint64_t expiry(const struct p53_zb_rec *r, const uint8_t *arena, time_t now)
{
	uint32_t e = get32(arena + r->off + 10 + 8);
	int64_t t = (int64_t)now + (int32_t)(e - (uint32_t)now);

	return t > 0 ? (uint64_t)t : 1;
}

int p53_dnssec_sigs_set(struct build *s, uint32_t rrset, uint32_t first, uint32_t count)
{
	struct p53_zb *b = &s->zb;
	const struct p53_zb_rec *r = &b->recs[first];
	struct p53_image_zone *zn = &b->zones[b->nodes[r->node].zone];
	time_t now = time(NULL);
	size_t bytes = 0;
	char txt[1024], tb[16];

	for (uint32_t q = first; q < first + count; q++)
		bytes += P53_RR_OWNER_LEN + b->recs[q].wlen;
	if (count > UINT8_MAX || bytes > UINT16_MAX)
		return p53_zb_rec_err(b, r, "more than %u RRSIGs (or %u bytes of them) cover %s at "
				      "'%s'", UINT8_MAX, UINT16_MAX,
				      p53_type_to_str(tb, sizeof(tb), s->rrsets[rrset].type),
				      owner(b, r->node, txt, sizeof(txt)));
	s->rs_sig[rrset] = first;
	s->rrsets[rrset].sig_count = (uint8_t)count;
	s->rrsets[rrset].sig_len = (uint16_t)bytes;
	if (count == 0)
		return 0;
	zn->dnssec |= P53_ZONE_SIGNED;
	for (uint32_t q = first; q < first + count; q++) {
		uint64_t e = expiry(&b->recs[q], b->arena, now);
		if (zn->sig_expire == 0 || e < zn->sig_expire)
			zn->sig_expire = e;
	}
	return 0;
}

/* The type an RRSIG covers, or -1 when it is too short to have one. */
static int covered_of(const struct p53_zb *b, const struct p53_zb_rec *r)
{
	return r->wlen >= 12 ? (b->arena[r->off + 10] << 8 | b->arena[r->off + 11]) : -1;
}

/* Whether an RRSIG at nd covers one of its RRsets; too short to cover anything counts as yes
   (p53_dnssec_attach ignores it). */
static int covers_here(const struct build *s, const struct p53_zb_node *nd,
		       const struct p53_zb_rec *r)
{
	int c = covered_of(&s->zb, r);

	if (c < 0)
		return 1;
	for (uint32_t i = nd->rrsets; c != T_RRSIG && i < nd->rrsets + nd->n_rrsets; i++)
		if (s->rrsets[i].type == c)
			return 1;
	return 0;
}

/*
 * The RRSIGs at node n, recs[first, first + count) sorted by Type Covered: reorder them (stably)
 * so that those covering an RRset of the node come first, and count those that do not (the
 * orphans, last). @return 0, or -1 out of memory.
 */
static int orphans_last(struct build *s, uint32_t n, uint32_t first, uint32_t count,
			struct p53_zb_rec **tmp, size_t *tmp_cap, uint32_t *orphans)
{
	struct p53_zb *b = &s->zb;
	const struct p53_zb_node *nd = &b->nodes[n];
	uint32_t o = 0, k;

	for (k = first; k < first + count; k++)
		o += !covers_here(s, nd, &b->recs[k]);
	*orphans = o;
	if (o == 0)
		return 0;
	if (p53_zb_grow((void **)tmp, tmp_cap, count, sizeof(**tmp)) < 0)
		return -1;
	uint32_t in = 0, out = count - o;
	uint32_t fr = b->nx[n].first_rec, fr_new = fr;
	for (k = first; k < first + count; k++) {
		uint32_t to = covers_here(s, nd, &b->recs[k]) ? in++ : out++;
		if (k == fr)
			fr_new = first + to;
		(*tmp)[to] = b->recs[k];
	}
	memcpy(&b->recs[first], *tmp, count * sizeof(**tmp));
	b->nx[n].first_rec = fr_new; /* the node's earliest record, where it moved (messages) */
	return 0;
}

/*
 * Step 3c: each RRSIG goes with the RRset it covers (pre-encoded after it). RRSIGs that cover
 * no RRset of their owner stay what they are, records of that name: an RRset of type RRSIG
 * (like Knot and BIND, which keep them: the name exists, NODATA to other types, they go out
 * in transfers). A read-back of the image (xfr/rrs.c) has them again, so an image compiled
 * from it is the same.
 */
int p53_dnssec_attach(struct build *s)
{
	struct p53_zb *b = &s->zb;
	size_t keep = 0, tmp_cap = 0;
	struct p53_zb_rec *tmp = NULL;
	char txt[1024], tb[16];
	unsigned int orphans = 0;
	int rc = -1;

	s->rs_sig = calloc(s->n_rrsets ? s->n_rrsets : 1, sizeof(*s->rs_sig));
	if (s->rs_sig == NULL)
		return p53_zb_err(b, "(image):0", "out of memory");
	for (uint32_t n = 0; n < b->n_nodes; n++) {
		struct p53_zb_node *nd = &b->nodes[n];
		uint32_t sig = P53_NONE, sig_rec = 0, sig_n = 0, start = (uint32_t)keep, orph = 0;

		if (nd->n_rrsets == 0)
			continue;
		for (uint32_t i = nd->rrsets; i < nd->rrsets + nd->n_rrsets; i++)
			if (s->rrsets[i].type == T_RRSIG) {
				sig_rec = s->rs_rec[i];
				sig_n = s->rrsets[i].count;
				if (orphans_last(s, n, sig_rec, sig_n, &tmp, &tmp_cap, &orph) < 0) {
					p53_zb_err(b, "(image):0", "out of memory");
					goto out;
				}
			}
		for (uint32_t i = nd->rrsets; i < nd->rrsets + nd->n_rrsets; i++) {
			if (s->rrsets[i].type == T_RRSIG) {
				/* Kept aside: compaction may overwrite its slot below. */
				sig = i;
				if (orph == 0)
					continue;
				/* The orphans, last of the node's RRSIGs: an RRset of their own. Its
				 * TTL is the first's in their (canonical) order; each keeps its own. */
				struct p53_image_rrset rs = s->rrsets[i];
				uint32_t o0 = sig_rec + sig_n - orph;
				rs.count = (uint16_t)orph;
				rs.ttl = b->recs[o0].ttl;
				rs.rdata_len = 0;
				for (uint32_t k = o0; k < sig_rec + sig_n; k++)
					rs.rdata_len += P53_RR_OWNER_LEN + b->recs[k].wlen;
				s->rrsets[keep] = rs;
				s->rs_rec[keep] = o0;
				keep++;
				continue;
			}
			s->rrsets[keep] = s->rrsets[i];
			s->rrsets[keep].sig_count = 0;
			s->rrsets[keep].sig_len = 0;
			s->rs_rec[keep] = s->rs_rec[i];
			/* rs_sig[keep] is still calloc's 0 (only kept RRsets before keep got
			 * signatures): not writing it keeps an unsigned zone's rs_sig pages unbacked. */
			keep++;
		}
		nd->rrsets = start;
		nd->n_rrsets = (uint16_t)(keep - start);
		if (sig == P53_NONE)
			continue;
		if (orph > 0) {
			const struct p53_zb_rec *r = &b->recs[sig_rec + sig_n - orph];
			if (orphans++ < WARN_MAX)
				p53_zb_rec_warn(b, r, "RRSIG at '%s' covers %s, which '%s' does not have: "
						"kept as a record of that name (answered to RRSIG and "
						"ANY queries, sent in transfers)", owner(b, n, txt, sizeof(txt)),
						p53_type_to_str(tb, sizeof(tb), (uint16_t)covered_of(b, r)),
						owner(b, n, txt, sizeof(txt)));
			sig_n -= orph;
		}
		/* Runs of RRSIGs with one Type Covered (they sort by it). */
		uint32_t k = sig_rec, end = sig_rec + sig_n;
		while (k < end) {
			int covered = covered_of(b, &b->recs[k]);
			uint32_t j = k, target = P53_NONE;

			while (j < end && covered >= 0 && covered_of(b, &b->recs[j]) == covered)
				j++;
			if (j == k) { /* too short to have a Type Covered: ldns would not parse it */
				s->n_ignored++;
				k++;
				continue;
			}
			for (uint32_t i = start; i < keep; i++)
				if (s->rrsets[i].type == covered && covered != T_RRSIG)
					target = i;
			if (target == P53_NONE) { /* cannot be: orphans_last() put them apart */
				s->n_ignored += j - k;
				k = j;
				continue;
			}
			if (p53_dnssec_sigs_set(s, target, k, j - k) < 0)
				goto out;
			k = j;
		}
	}
	if (orphans > WARN_MAX)
		p53_zb_rec_warn(b, &b->recs[0], "%u names in all own RRSIGs that cover no RRset of "
				"theirs, kept as records", orphans);
	s->n_rrsets = keep;
	s->rdata_len = 0;
	for (size_t i = 0; i < keep; i++)
		s->rdata_len += s->rrsets[i].rdata_len + s->rrsets[i].sig_len;
	rc = 0;
out:
	free(tmp);
	return rc;
}

/* ---- canonical order (RFC 4034 §6.1) ------------------------------------------------ */

static int label_cmp(const uint8_t *a, const uint8_t *c)
{
	int d = memcmp(a + 1, c + 1, a[0] < c[0] ? a[0] : c[0]);

	if (d != 0)
		return d;
	return (a[0] > c[0]) - (a[0] < c[0]);
}

static int offsets(const uint8_t *name, uint8_t *off)
{
	int n = 0;

	for (uint8_t p = 0; name[p] != 0 && n < P53_NAME_MAXLABELS; p = (uint8_t)(p + 1 + name[p]))
		off[n++] = p;
	return n;
}

/* Canonical names (already lower case): labels compared from the root down. */
static int canon_cmp(const uint8_t *a, const uint8_t *c)
{
	uint8_t oa[P53_NAME_MAXLABELS], oc[P53_NAME_MAXLABELS];
	int na = offsets(a, oa), nc = offsets(c, oc);

	while (na > 0 && nc > 0) {
		int d = label_cmp(a + oa[--na], c + oc[--nc]);
		if (d != 0)
			return d;
	}
	return (na > 0) - (nc > 0);
}

static int node_cmp(const void *pa, const void *pb, void *arg)
{
	const struct p53_zb *b = arg;

	return canon_cmp(b->names + b->nodes[*(const uint32_t *)pa].name_off,
			 b->names + b->nodes[*(const uint32_t *)pb].name_off);
}

/* ---- denial for steered owners (step 2b) ------------------------------------------- */

/* Made by p53_dnssec_steer_denial: an NSEC or NSEC3 RRset whose records came from the config. */
static int synth_rs(const struct build *s, uint32_t rsi)
{
	const struct p53_zb *b = &s->zb;
	const struct p53_zb_rec *r = &b->recs[s->rs_rec[rsi]];

	return b->cfg_file != 0 && r->file == b->cfg_file - 1 &&
	       (r->type == T_NSEC || r->type == T_NSEC3);
}

/* Append a record at node n (wire TYPE CLASS TTL RDLENGTH RDATA, `wire` holding it). */
static int rec_add(struct p53_zb *b, uint32_t n, const uint8_t *wire, size_t wlen, int line)
{
	if (p53_zb_grow((void **)&b->arena, &b->arena_cap, b->arena_len + wlen, 1) < 0 ||
	    p53_zb_grow((void **)&b->recs, &b->recs_cap, b->n_recs + 1, sizeof(*b->recs)) < 0)
		return -1;
	memcpy(b->arena + b->arena_len, wire, wlen);
	b->recs[b->n_recs] = (struct p53_zb_rec){
		.node = n, .seq = (uint32_t)b->n_recs, .off = (uint32_t)b->arena_len,
		.wlen = (uint32_t)wlen, .ttl = get32(wire + 4), .type = (uint16_t)(wire[0] << 8 | wire[1]),
		.file = (uint16_t)(b->cfg_file - 1), .line = (uint32_t)line };
	b->n_recs++;
	b->arena_len += wlen;
	return 0;
}

size_t p53_type_bitmap(const uint8_t *bits, uint8_t *out)
{
	size_t o = 0;

	for (int w = 0; w < 256; w++) {
		int len = 32;
		while (len > 0 && bits[w * 32 + len - 1] == 0)
			len--;
		if (len == 0)
			continue;
		out[o++] = (uint8_t)w;
		out[o++] = (uint8_t)len;
		memcpy(out + o, bits + w * 32, (size_t)len);
		o += (size_t)len;
	}
	return o;
}

static void bit_set(uint8_t *bits, uint16_t t)
{
	bits[t >> 3] |= (uint8_t)(0x80 >> (t & 7));
}

/* Octets of an uncompressed wire name. */
static size_t name_len(const uint8_t *nm)
{
	size_t l = 0;

	while (nm[l] != 0)
		l += 1u + nm[l];
	return l + 1;
}

/*
 * The next owner of an NSEC made for steered owner `o` of zone z: the next name of the zone's
 * NSEC covering `o`, or the next steered owner before it, so the record joins the chain
 * (names below `o` and beside it are proven by it too) and denies no name the zone serves.
 * NULL when no NSEC covers `o` (its next owner is then \000.o).
 */
static const uint8_t *next_served(const struct build *s, uint32_t z, const uint8_t *o)
{
	const struct p53_zb *b = &s->zb;
	const struct p53_zone_src *src = &b->src[z];
	const uint8_t *x = NULL;

	for (size_t k = 0; k < b->n_recs && x == NULL; k++) {
		const struct p53_zb_rec *r = &b->recs[k];
		if (r->type != T_NSEC || b->nodes[r->node].zone != z || r->file == b->cfg_file - 1 ||
		    r->wlen < 11)
			continue;
		const uint8_t *own = b->names + b->nodes[r->node].name_off;
		const uint8_t *nx = b->arena + r->off + (r->clen > 0 ? r->wlen : 10);
		/* own < o < next, or the last NSEC (next at or before own) with own < o */
		if (canon_cmp(own, o) < 0 && (canon_cmp(o, nx) < 0 || canon_cmp(nx, own) <= 0))
			x = nx;
	}
	if (x == NULL)
		return NULL;
	int wraps = canon_cmp(x, o) <= 0;
	for (size_t i = 0; i < src->n_extra; i++) {
		const uint8_t *t = src->extra[i].lname;
		if (canon_cmp(o, t) < 0 && (wraps || canon_cmp(t, x) < 0)) {
			x = t;
			wraps = 0;
		}
	}
	return x;
}

int p53_steer_denial_sign(const struct p53_sign_key *key, uint32_t inception,
			  uint32_t expiration, const uint8_t *owner, uint8_t owner_len,
			  uint16_t type, uint32_t ttl, uint8_t *rr, size_t rdlen, uint8_t *sig,
			  size_t cap)
{
	rr[0] = 0xc0;
	rr[1] = 0x0c;
	rr[2] = (uint8_t)(type >> 8);
	rr[3] = (uint8_t)type;
	rr[4] = 0;
	rr[5] = 1;
	rr[6] = (uint8_t)(ttl >> 24);
	rr[7] = (uint8_t)(ttl >> 16);
	rr[8] = (uint8_t)(ttl >> 8);
	rr[9] = (uint8_t)ttl;
	rr[10] = (uint8_t)(rdlen >> 8);
	rr[11] = (uint8_t)rdlen;
	return p53_sign_rrset(key, owner, owner_len, rr, 1, inception, expiration, sig, cap);
}

int p53_dnssec_steer_denial(struct build *s, uint32_t z)
{
	struct p53_zb *b = &s->zb;
	const struct p53_zone_src *src = &b->src[z];
	size_t pk = SIZE_MAX; /* the zone's record the denials copy, by index: rec_add grows recs */
	uint32_t ttl = UINT32_MAX;
	uint8_t apex[P53_NAME_MAXLEN]; /* a copy: p53_zb_node_get grows the names */
	uint8_t apex_len;
	char where[4200];

	if (src->sign_key == NULL || src->n_extra == 0 || b->cfg_file == 0)
		return 0;
	for (size_t k = 0; k < b->n_recs; k++) {
		const struct p53_zb_rec *r = &b->recs[k];
		/* RFC 9077 §3 (knotd signs so since 3.1): the TTL of the NSEC or NSEC3 made here
		 * is min(SOA TTL, SOA MINIMUM), the zone's negative TTL, whatever TTL the
		 * chain's records have. */
		if (r->type == T_SOA && r->node == b->zones[z].apex && r->wlen >= 10u + 22u &&
		    r->file != b->cfg_file - 1) {
			uint32_t m = get32(b->arena + r->off + r->wlen - 4);
			ttl = m < r->ttl ? m : r->ttl;
			break;
		}
	}
	/* The zone's denial: NSEC3 (its parameters and flags from a record of the chain,
	 * which step 5d checks against the NSEC3PARAM) or NSEC. */
	for (size_t k = 0; k < b->n_recs; k++) {
		const struct p53_zb_rec *r = &b->recs[k];
		if (b->nodes[r->node].zone != z || (r->type != T_NSEC && r->type != T_NSEC3) ||
		    r->file == b->cfg_file - 1)
			continue;
		if (r->type == T_NSEC3) {
			const uint8_t *p = b->arena + r->off + 10;
			if (r->wlen < 10u + 6u || r->wlen < 10u + 6u + p[4])
				continue;
			pk = k;
			break;
		}
		if (pk == SIZE_MAX)
			pk = k;
	}
	if (pk == SIZE_MAX || ttl == UINT32_MAX)
		return 0; /* (no SOA: the compile fails later) */
	apex_len = b->nodes[b->zones[z].apex].name_len;
	memcpy(apex, b->names + b->nodes[b->zones[z].apex].name_off, apex_len);
	uint8_t *bits = malloc(8192);
	if (bits == NULL)
		return p53_zb_err(b, "(image):0", "out of memory");
	for (size_t i = 0; i < src->n_extra; i++) {
		const struct p53_zone_extra *e = &src->extra[i];
		const struct p53_zb_rec *proto = &b->recs[pk];
		int dup = 0;
		for (size_t j = 0; j < i && !dup; j++)
			dup = src->extra[j].lname_len == e->lname_len &&
			      memcmp(src->extra[j].lname, e->lname, e->lname_len) == 0;
		uint32_t node = p53_zb_node_find(b, z, e->lname, e->lname_len);
		if (dup || node == P53_NONE)
			continue;
		/* The owner's types: the steered ones, any static ones, RRSIG, and NSEC itself. */
		int has_own = 0;
		memset(bits, 0, 8192);
		for (size_t j = 0; j < src->n_extra; j++)
			if (src->extra[j].lname_len == e->lname_len &&
			    memcmp(src->extra[j].lname, e->lname, e->lname_len) == 0)
				bit_set(bits, src->extra[j].type);
		for (size_t k = 0; k < b->n_recs; k++) {
			const struct p53_zb_rec *r = &b->recs[k];
			if (r->node != node)
				continue;
			if (r->type == T_NSEC)
				has_own = 1;
			bit_set(bits, r->type);
		}
		bit_set(bits, T_RRSIG);
		uint8_t rr[2 + 10 + 6 + 2 * P53_NAME_MAXLEN + 256 * 34], hname[P53_NAME_MAXLEN];
		const uint8_t *owner = e->lname;
		uint8_t owner_len = e->lname_len;
		size_t rd = 0;
		uint8_t *w = rr + 2 + 10;
		uint32_t n = node;
		if (proto->type == T_NSEC) {
			if (has_own || e->lname_len + 2u > P53_NAME_MAXLEN)
				continue;
			bit_set(bits, T_NSEC);
			const uint8_t *nx = next_served(s, z, e->lname);
			if (nx == NULL) {
				/* No NSEC covers it: \000.OWNER, right after OWNER in canonical order. */
				w[rd++] = 1;
				w[rd++] = 0;
				memcpy(w + rd, e->lname, e->lname_len);
				rd += e->lname_len;
			} else {
				size_t nl = name_len(nx);
				memcpy(w + rd, nx, nl);
				rd += nl;
			}
		} else {
			const uint8_t *p = b->arena + proto->off + 10;
			uint8_t h[P53_NSEC3_HASH_LEN];
			if (apex_len + 33u > P53_NAME_MAXLEN)
				continue;
			p53_nsec3_hash(e->lname, e->lname_len, p + 5, p[4], (uint16_t)(p[2] << 8 | p[3]), h);
			hname[0] = 32;
			p53_n3_b32hex(h, hname + 1);
			memcpy(hname + 33, apex, apex_len);
			if (p53_zb_node_find(b, z, hname, 33u + apex_len) != P53_NONE)
				continue; /* the chain has the owner's NSEC3 */
			owner = hname;
			owner_len = (uint8_t)(33u + apex_len);
			memcpy(w, p, 5u + p[4]); /* algorithm, flags, iterations, salt */
			rd = 5u + p[4];
			w[rd++] = P53_NSEC3_HASH_LEN;
			/* Next hashed owner: the hash + 1, so the record covers no other name. */
			memcpy(w + rd, h, P53_NSEC3_HASH_LEN);
			for (int q = P53_NSEC3_HASH_LEN - 1; q >= 0 && ++w[rd + q] == 0; q--)
				;
			rd += P53_NSEC3_HASH_LEN;
			n = p53_zb_node_get(b, z, hname, owner_len);
			if (n == P53_NONE) {
				free(bits);
				return p53_zb_err(b, "(image):0", "out of memory");
			}
		}
		rd += p53_type_bitmap(bits, w + rd);
		uint8_t sig[1024];
		int sl = p53_steer_denial_sign(src->sign_key, src->sign_inception,
					       src->sign_expiration, owner, owner_len, proto->type,
					       ttl, rr, rd, sig, sizeof(sig));
		snprintf(where, sizeof(where), "%s:%d", src->cfg_file != NULL ? src->cfg_file : "config",
			 e->line);
		if (sl < 2) {
			free(bits);
			return p53_zb_err(b, where, "steering: %s: signing its %s with %s failed", e->owner,
					  proto->type == T_NSEC ? "NSEC" : "NSEC3", src->sign_key->path);
		}
		if (rec_add(b, n, rr + 2, 10 + rd, e->line) < 0 ||
		    rec_add(b, n, sig + 2, (size_t)sl - 2, e->line) < 0) {
			free(bits);
			return p53_zb_err(b, where, "out of memory");
		}
	}
	free(bits);
	return 0;
}

/* ---- NSEC ---------------------------------------------------------------------------- */

/* The chain and per-node facts of NSEC zone z. `ord` holds its nodes in canonical order. */
static int nsec_zone(struct build *s, uint32_t z, uint32_t *ord, size_t n_ord, uint32_t *last)
{
	struct p53_zb *b = &s->zb;
	uint32_t *stack = malloc((n_ord + 1) * sizeof(*stack));
	size_t top = 0;
	uint32_t prev = P53_NONE;
	unsigned int missing = 0;
	char txt[1024];

	if (stack == NULL)
		return p53_zb_err(b, "(image):0", "out of memory");
	for (size_t i = 0; i < n_ord; i++) {
		uint32_t n = ord[i];
		const struct p53_zb_node *nd = &b->nodes[n];
		/* Close the subtrees this name is not in: parents precede children here. */
		while (top > 0 && stack[top - 1] != b->nx[n].parent)
			s->proofs[stack[--top]].hi = (uint32_t)s->n_chain;
		if (node_rrset(s, n, T_NSEC) != P53_NONE) {
			s->chain[s->n_chain++] = n;
			prev = n;
		} else if (!(nd->flags & (P53_NODE_ENT | P53_NODE_GLUE)) && missing++ < WARN_MAX) {
			p53_zb_rec_warn(b, &b->recs[b->nx[n].first_rec], "no NSEC at '%s' in a signed "
					"zone: negative answers there cannot be proven",
					owner(b, n, txt, sizeof(txt)));
		}
		s->proofs[n].match = prev;
		s->proofs[n].lo = (uint32_t)s->n_chain;
		last[i] = prev;
		stack[top++] = n;
	}
	while (top > 0)
		s->proofs[stack[--top]].hi = (uint32_t)s->n_chain;
	free(stack);
	if (missing > WARN_MAX)
		p53_zb_rec_warn(b, &b->recs[s->rs_rec[b->zones[z].soa]], "%u names in all lack their "
				"NSEC in zone '%s'", missing, owner(b, b->zones[z].apex, txt, sizeof(txt)));
	/* The NSEC covering "*.<name>": the last owner at or before it in canonical order. */
	for (size_t i = 0; i < n_ord; i++) {
		uint32_t n = ord[i];
		const struct p53_zb_node *nd = &b->nodes[n];
		uint8_t w[P53_NAME_MAXLEN];
		size_t lo = 0, hi = n_ord;

		if (nd->name_len + 2u > P53_NAME_MAXLEN || (nd->flags & P53_NODE_GLUE))
			continue;
		w[0] = 1;
		w[1] = '*';
		memcpy(w + 2, b->names + nd->name_off, nd->name_len);
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (canon_cmp(b->names + b->nodes[ord[mid]].name_off, w) <= 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		s->proofs[n].wild = lo > 0 ? last[lo - 1] : P53_NONE;
	}
	return 0;
}

/* ---- NSEC3 --------------------------------------------------------------------------- */

/* RFC 4648 §7 base32hex, lower case (canonical owner names are). */
static int b32hex(const uint8_t *label, uint8_t out[P53_NSEC3_HASH_LEN])
{
	uint64_t acc = 0;
	int bits = 0, o = 0;

	if (label[0] != 32)
		return -1;
	for (int i = 1; i <= 32; i++) {
		uint8_t c = label[i], v;
		if (c >= '0' && c <= '9')
			v = (uint8_t)(c - '0');
		else if (c >= 'a' && c <= 'v')
			v = (uint8_t)(c - 'a' + 10);
		else
			return -1;
		acc = acc << 5 | v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	return o == P53_NSEC3_HASH_LEN ? 0 : -1;
}

static int hash_cmp(const void *a, const void *c)
{
	return memcmp(((const struct p53_image_nsec3 *)a)->hash,
		      ((const struct p53_image_nsec3 *)c)->hash, P53_NSEC3_HASH_LEN);
}

void p53_n3_b32hex(const uint8_t *hash, uint8_t out[32])
{
	static const char al[] = "0123456789abcdefghijklmnopqrstuv";
	uint64_t acc = 0;
	int bits = 0, o = 0;

	for (int i = 0; i < P53_NSEC3_HASH_LEN; i++) {
		acc = acc << 8 | hash[i];
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			out[o++] = (uint8_t)al[(acc >> bits) & 31];
		}
	}
}

uint32_t p53_n3_find(const struct p53_n3_set *c, const uint8_t *name, size_t len, bool *exact)
{
	uint8_t h[P53_NSEC3_HASH_LEN];
	size_t lo = 0, hi = c->n;

	*exact = false;
	if (c->n == 0)
		return P53_NONE;
	p53_nsec3_hash(name, len, c->salt, c->salt_len, c->iter, h);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (memcmp(c->t[mid].hash, h, P53_NSEC3_HASH_LEN) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return c->t[c->n - 1].node;
	*exact = memcmp(c->t[lo - 1].hash, h, P53_NSEC3_HASH_LEN) == 0;
	return c->t[lo - 1].node;
}

/* NSEC3PARAM and the hashes of zone z; the zone's entries end up in s->nsec3. */
static int nsec3_table(struct build *s, uint32_t z, uint32_t *n3nodes, size_t n_n3)
{
	struct p53_zb *b = &s->zb;
	struct p53_image_zone *zn = &b->zones[z];
	const struct p53_image_rrset *prs = &s->rrsets[s->n3param[z]];
	const struct p53_zb_rec *pr = &b->recs[s->rs_rec[s->n3param[z]]];
	const uint8_t *p = b->arena + pr->off + 10;
	char txt[1024];

	if (prs->count > 1)
		return p53_zb_rec_err(b, &b->recs[s->rs_rec[s->n3param[z]] + 1], "more than one "
				      "NSEC3PARAM at '%s': pop53 serves one NSEC3 chain",
				      owner(b, zn->apex, txt, sizeof(txt)));
	if (pr->wlen < 15 || pr->wlen < 15u + p[4])
		return p53_zb_rec_err(b, pr, "malformed NSEC3PARAM");
	if (p[0] != 1)
		return p53_zb_rec_err(b, pr, "NSEC3PARAM hash algorithm %u not supported (only "
				      "1, SHA-1: RFC 5155 §11)", p[0]);
	zn->nsec3_iter = (uint16_t)(p[2] << 8 | p[3]);
	zn->salt_len = p[4];
	zn->proof_lo = (uint32_t)s->n_nsec3;
	for (size_t i = 0; i < n_n3; i++) {
		uint32_t n = n3nodes[i], rsi = node_rrset(s, n, T_NSEC3);
		const struct p53_zb_node *nd = &b->nodes[n];
		const struct p53_zb_rec *r = &b->recs[s->rs_rec[rsi]];
		struct p53_image_nsec3 *e = &s->nsec3[s->n_nsec3];

		if (b->nx[n].parent != zn->apex || b32hex(b->names + nd->name_off, e->hash) < 0)
			return p53_zb_rec_err(b, r, "NSEC3 owner '%s' is not a base32hex SHA-1 hash "
					      "one label below the apex (RFC 5155 §3)",
					      owner(b, n, txt, sizeof(txt)));
		for (uint32_t k = s->rs_rec[rsi]; k < s->rs_rec[rsi] + s->rrsets[rsi].count; k++) {
			const uint8_t *q = b->arena + b->recs[k].off + 10;
			if (b->recs[k].wlen < 15u + q[4] || q[0] != p[0] || q[2] != p[2] ||
			    q[3] != p[3] || q[4] != p[4] || memcmp(q + 5, p + 5, p[4]) != 0)
				return p53_zb_rec_err(b, &b->recs[k], "NSEC3 at '%s' has another algorithm, "
						      "iteration count or salt than the NSEC3PARAM "
						      "(another chain)", owner(b, n, txt, sizeof(txt)));
			if (q[1] & 1)
				zn->dnssec |= P53_ZONE_OPTOUT;
		}
		e->node = n;
		s->n_nsec3++;
	}
	qsort(s->nsec3 + zn->proof_lo, n_n3, sizeof(*s->nsec3), hash_cmp);
	for (size_t i = zn->proof_lo + 1; i < s->n_nsec3; i++)
		if (memcmp(s->nsec3[i - 1].hash, s->nsec3[i].hash, P53_NSEC3_HASH_LEN) == 0)
			return p53_zb_rec_err(b, &b->recs[s->rs_rec[node_rrset(s, s->nsec3[i].node, T_NSEC3)]],
					      "two NSEC3 owners with the same hash");
	zn->proof_n = (uint32_t)n_n3;
	return 0;
}

/* Per-node facts of NSEC3 zone z, parents first (node index order). */
static int nsec3_zone(struct build *s, uint32_t z, const uint32_t *synth, size_t n_synth)
{
	struct p53_zb *b = &s->zb;
	struct p53_image_zone *zn = &b->zones[z];
	struct p53_n3_set c = { .t = s->nsec3 + zn->proof_lo, .n = zn->proof_n, .salt_len = zn->salt_len,
			.iter = zn->nsec3_iter };
	unsigned int missing = 0;
	char txt[1024];
	bool exact;

	c.salt = b->arena + b->recs[s->rs_rec[s->n3param[z]]].off + 10 + 5;
	for (uint32_t n = 0; n < b->n_nodes; n++) {
		const struct p53_zb_node *nd = &b->nodes[n];
		struct p53_image_proof *p = &s->proofs[n];
		const uint8_t *name = b->names + nd->name_off;
		uint32_t parent = b->nx[n].parent;

		if (nd->zone != z || (nd->flags & (P53_NODE_NSEC3 | P53_NODE_GLUE)))
			continue;
		uint32_t m = p53_n3_find(&c, name, nd->name_len, &exact);
		if (!exact && n_synth > 0 && steered_node(s, n)) {
			/* A steered owner the chain lacks: its own NSEC3 (p53_dnssec_steer_denial),
			 * outside the hash table, matches it. */
			uint8_t h[P53_NSEC3_HASH_LEN], sh[P53_NSEC3_HASH_LEN];
			p53_nsec3_hash(name, nd->name_len, c.salt, c.salt_len, c.iter, h);
			for (size_t i = 0; i < n_synth && !exact; i++)
				if (b32hex(b->names + b->nodes[synth[i]].name_off, sh) == 0 &&
				    memcmp(sh, h, sizeof(h)) == 0) {
					m = synth[i];
					exact = true;
				}
		}
		if (exact) {
			uint8_t w[P53_NAME_MAXLEN];
			p->match = m;
			p->encl = m;
			p->encl_labels = nd->labels;
			if (nd->name_len + 2u <= P53_NAME_MAXLEN) {
				w[0] = 1;
				w[1] = '*';
				memcpy(w + 2, name, nd->name_len);
				p->wild = p53_n3_find(&c, w, nd->name_len + 2u, &exact);
			}
			continue;
		}
		/* Opt-out (RFC 5155 §6) leaves insecure delegations, and empty non-terminals
		   leading only to them, without NSEC3: anything else is a gap in the chain. */
		if (!((zn->dnssec & P53_ZONE_OPTOUT) &&
		      (((nd->flags & P53_NODE_CUT) && node_rrset(s, n, T_DS) == P53_NONE) ||
		       (nd->flags & P53_NODE_ENT))) &&
		    missing++ < WARN_MAX)
			p53_zb_rec_warn(b, &b->recs[nd->flags & P53_NODE_ENT ? s->rs_rec[zn->soa]
							: b->nx[n].first_rec],
					"no NSEC3 matches '%s' in a signed zone: negative answers "
					"there cannot be proven", owner(b, n, txt, sizeof(txt)));
		if (parent == P53_NONE)
			continue;
		const struct p53_image_proof *pp = &s->proofs[parent];
		p->encl = pp->encl;
		p->encl_labels = pp->encl_labels;
		p->wild = pp->wild;
		/* The next closer name is this node when the parent is the provable encloser. */
		p->nc = pp->match != P53_NONE ? p53_n3_find(&c, name, nd->name_len, &exact) : pp->nc;
	}
	if (missing > WARN_MAX)
		p53_zb_rec_warn(b, &b->recs[s->rs_rec[zn->soa]], "%u names in all lack their NSEC3 "
				"in zone '%s'", missing, owner(b, zn->apex, txt, sizeof(txt)));
	return 0;
}

/* Signed zones: RRsets that should carry RRSIGs and do not; DNSKEY; expiry. */
static void signed_checks(struct build *s, uint32_t z)
{
	struct p53_zb *b = &s->zb;
	const struct p53_image_zone *zn = &b->zones[z];
	unsigned int unsigned_sets = 0;
	char txt[1024], tb[16];

	if (node_rrset(s, zn->apex, T_DNSKEY) == P53_NONE)
		p53_zb_rec_warn(b, &b->recs[s->rs_rec[zn->soa]], "zone '%s' has RRSIGs but no DNSKEY "
				"at its apex", owner(b, zn->apex, txt, sizeof(txt)));
	if (!(zn->dnssec & (P53_ZONE_NSEC | P53_ZONE_NSEC3)))
		p53_zb_rec_warn(b, &b->recs[s->rs_rec[zn->soa]], "zone '%s' is signed but has neither "
				"NSEC nor NSEC3: negative answers cannot be proven",
				owner(b, zn->apex, txt, sizeof(txt)));
	if (zn->sig_expire != 0 && zn->sig_expire <= (uint64_t)time(NULL))
		p53_zb_rec_warn(b, &b->recs[s->rs_rec[zn->soa]], "zone '%s': a signature has already "
				"expired (at %llu): validating resolvers will fail on it",
				owner(b, zn->apex, txt, sizeof(txt)), (unsigned long long)zn->sig_expire);
	for (uint32_t n = 0; n < b->n_nodes; n++) {
		const struct p53_zb_node *nd = &b->nodes[n];
		if (nd->zone != z || (nd->flags & P53_NODE_GLUE))
			continue;
		for (uint32_t i = nd->rrsets; i < nd->rrsets + nd->n_rrsets; i++) {
			/* RRSIGs that cover no RRset (p53_dnssec_attach) are not signed either. */
			if (s->rrsets[i].sig_count > 0 || s->rrsets[i].type == T_RRSIG)
				continue;
			/* Steered RRsets are answered from the steering table, whose variants are
			 * signed with dnssec.signing_keys (the config check warns when none is). */
			if (s->rrsets[i].flags & P53_RRSET_STEERED)
				continue;
			/* RFC 4035 §2.2: the delegation NS (and glue) are not signed. */
			if ((nd->flags & P53_NODE_CUT) && s->rrsets[i].type == T_NS)
				continue;
			if (unsigned_sets++ < WARN_MAX)
				p53_zb_rec_warn(b, &b->recs[p53_rs_first(s, i)], "%s at '%s' has no RRSIG in "
						"a signed zone",
						p53_type_to_str(tb, sizeof(tb), s->rrsets[i].type),
						owner(b, n, txt, sizeof(txt)));
		}
	}
	if (unsigned_sets > WARN_MAX)
		p53_zb_rec_warn(b, &b->recs[s->rs_rec[zn->soa]], "%u RRsets in all lack an RRSIG in "
				"zone '%s'", unsigned_sets, owner(b, zn->apex, txt, sizeof(txt)));
}

/* Step 5d. */
int p53_dnssec_build(struct build *s)
{
	struct p53_zb *b = &s->zb;
	uint32_t *ord = NULL, *last = NULL, *n3nodes = NULL;
	size_t n_n3_all = 0;
	int any = 0, rc = -1;
	char txt[1024], tb[16];

	s->n3param = malloc((b->n_zones ? b->n_zones : 1) * sizeof(*s->n3param));
	if (s->n3param == NULL)
		return p53_zb_err(b, "(image):0", "out of memory");
	/* The denial made for steered owners comes from the config, as their records do. */
	if (b->cfg_file != 0)
		for (size_t i = 0; i < s->n_rrsets; i++)
			if (synth_rs(s, (uint32_t)i))
				s->rrsets[i].flags |= P53_RRSET_STEERED;
	/* NSEC3 owners: alone at their name, out of the index. */
	for (uint32_t n = 0; n < b->n_nodes; n++) {
		struct p53_zb_node *nd = &b->nodes[n];
		uint32_t r = node_rrset(s, n, T_NSEC3);
		if (r == P53_NONE)
			continue;
		for (uint32_t i = nd->rrsets; i < nd->rrsets + nd->n_rrsets; i++)
			if (s->rrsets[i].type != T_NSEC3)
				return p53_zb_rec_err(b, &b->recs[p53_rs_first(s, i)], "%s beside NSEC3 at "
						      "'%s': an NSEC3 owner is a hash, not a name of the zone",
						      p53_type_to_str(tb, sizeof(tb), s->rrsets[i].type),
						      owner(b, n, txt, sizeof(txt)));
		nd->flags |= P53_NODE_NSEC3;
		n_n3_all++;
	}
	for (uint32_t z = 0; z < b->n_zones; z++) {
		struct p53_image_zone *zn = &b->zones[z];
		s->n3param[z] = node_rrset(s, zn->apex, T_NSEC3PARAM);
		if (!(zn->dnssec & P53_ZONE_SIGNED))
			continue;
		if (s->n3param[z] != P53_NONE)
			zn->dnssec |= P53_ZONE_NSEC3;
		else
			for (uint32_t n = 0; n < b->n_nodes && !(zn->dnssec & P53_ZONE_NSEC); n++)
				if (b->nodes[n].zone == z && node_rrset(s, n, T_NSEC) != P53_NONE)
					zn->dnssec |= P53_ZONE_NSEC;
		any |= (zn->dnssec & (P53_ZONE_NSEC | P53_ZONE_NSEC3)) != 0;
	}
	for (uint32_t n = 0; n < b->n_nodes; n++) {
		const struct p53_zb_node *nd = &b->nodes[n];
		if ((nd->flags & P53_NODE_NSEC3) && s->n3param[nd->zone] == P53_NONE)
			return p53_zb_rec_err(b, &b->recs[b->nx[n].first_rec], "NSEC3 at '%s' but no "
					      "NSEC3PARAM at the zone apex (RFC 5155 §4)",
					      owner(b, n, txt, sizeof(txt)));
	}
	for (uint32_t z = 0; z < b->n_zones; z++)
		if (b->zones[z].dnssec & P53_ZONE_SIGNED) {
			signed_checks(s, z);
			/* A zone with RRSIGs but neither NSEC nor NSEC3 (warned about) needs the
			 * proofs too, all empty: p53_image_check wants them for every signed zone
			 * (fuzz_xfr found such a zone compiled into an image it refuses). */
			any = 1;
		}
	if (!any)
		return 0;

	s->proofs = malloc(b->n_nodes * sizeof(*s->proofs));
	s->chain = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof(*s->chain));
	s->nsec3 = malloc((n_n3_all ? n_n3_all : 1) * sizeof(*s->nsec3));
	ord = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof(*ord));
	last = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof(*last));
	n3nodes = malloc((n_n3_all ? n_n3_all : 1) * sizeof(*n3nodes));
	if (s->proofs == NULL || s->chain == NULL || s->nsec3 == NULL || ord == NULL ||
	    last == NULL || n3nodes == NULL) {
		p53_zb_err(b, "(image):0", "out of memory");
		goto cleanup;
	}
	for (uint32_t n = 0; n < b->n_nodes; n++)
		s->proofs[n] = (struct p53_image_proof){ .match = P53_NONE, .wild = P53_NONE,
							 .encl = P53_NONE, .nc = P53_NONE };
	for (uint32_t z = 0; z < b->n_zones; z++) {
		uint16_t kind = b->zones[z].dnssec;
		size_t k = 0;

		if (kind & P53_ZONE_NSEC3) {
			size_t m = 0;
			for (uint32_t n = 0; n < b->n_nodes; n++)
				if (b->nodes[n].zone == z && (b->nodes[n].flags & P53_NODE_NSEC3) &&
				    !synth_rs(s, node_rrset(s, n, T_NSEC3)))
					n3nodes[k++] = n;
			for (uint32_t n = 0; n < b->n_nodes; n++)
				if (b->nodes[n].zone == z && (b->nodes[n].flags & P53_NODE_NSEC3) &&
				    synth_rs(s, node_rrset(s, n, T_NSEC3)))
					n3nodes[k + m++] = n;
			if (nsec3_table(s, z, n3nodes, k) < 0 || nsec3_zone(s, z, n3nodes + k, m) < 0)
				goto cleanup;
		} else if (kind & P53_ZONE_NSEC) {
			for (uint32_t n = 0; n < b->n_nodes; n++)
				if (b->nodes[n].zone == z && !(b->nodes[n].flags & P53_NODE_NSEC3))
					ord[k++] = n;
			qsort_r(ord, k, sizeof(*ord), node_cmp, b);
			if (nsec_zone(s, z, ord, k, last) < 0)
				goto cleanup;
		}
	}
	rc = 0;
cleanup:
	free(n3nodes);
	free(last);
	free(ord);
	return rc;
}
