/* Steering decisions over the published table; see steer.h. */
#include <errno.h>
#include <string.h>

#include "dataplane/csum.h"
#include "dataplane/image.h"
#include "dataplane/steer.h"
#include "dataplane/steer_pick.h"
#include "dataplane/wire.h"

/* An IPv6 address whose high half equals that of the last block starting at or below it
 * (`at`; steer.h, struct p53_steer_b6x): blocks longer than /64 may share that half, so the
 * search is redone over whole starts, from `from` (a block starting at or below the address)
 * to `at`, and a gap's scope computed from 128-bit ends. Out of line: the common lookup never
 * comes here. */
__attribute__((noinline, cold)) uint32_t p53_steer_lookup6_long(const struct p53_steer_src *s, const uint64_t *key,
								const struct p53_steer_b6x *x, uint32_t from, uint32_t at,
								uint64_t hi, uint64_t lw)
{
	uint32_t lo = from, n = at - from + 1;

	while (n > 1) {
		uint32_t half = n / 2;
		if (key[lo + half] < hi || (key[lo + half] == hi && x[lo + half].lo <= lw))
			lo += half;
		n -= half;
	}
	if (x[lo].loc_len >> 8 != P53_STEER_NOLOC)
		return x[lo].loc_len;
	unsigned int len = 0;
	if (key[lo] != 0 || x[lo].lo != 0)
		len = p53_steer_split128(hi, lw, key[lo] - (x[lo].lo == 0), x[lo].lo - 1);
	if (lo + 1 < s->n6)
		len = p53_steer_max_u(len, p53_steer_split128(hi, lw, key[lo + 1], x[lo + 1].lo));
	return P53_STEER_NOLOC << 8 | len;
}

_Static_assert(P53_STEER_SRC_MAP == 0 && P53_STEER_SRC_GEO == 1,
	       "p53_steer_pick_fam takes the map's and the GeoIP's loc_len from one word by source");

/* The merged search's block starts in the address's /64: both sources' own lookups (each
 * handles a block longer than /64). */
__attribute__((noinline, cold)) uint64_t p53_steer_mlookup6_long(const void *t, uint64_t hi, const uint8_t *addr,
								  int want_scope)
{
	const struct p53_steer_hdr *h = p53_steer_hdr(t);
	uint32_t llm, llg;

	if (want_scope) {
		llm = p53_steer_lookup6(t, h->src + P53_STEER_SRC_MAP, hi, addr, 0, 1);
		llg = p53_steer_lookup6(t, h->src + P53_STEER_SRC_GEO, hi, addr, 0, 1);
	} else {
		llm = p53_steer_lookup6(t, h->src + P53_STEER_SRC_MAP, hi, addr, 0, 0);
		llg = p53_steer_lookup6(t, h->src + P53_STEER_SRC_GEO, hi, addr, 0, 0);
	}
	return (uint64_t)llg << 32 | llm;
}

uint64_t p53_steer_lookup_mrg(const void *t, const struct p53_steer_client *cl)
{
	const struct p53_steer_hdr *h = p53_steer_hdr(t);

	return cl->v6 ? p53_steer_mlookup6(t, h, p53_steer_be64(cl->addr), cl->addr, 0, 1)
		      : p53_steer_mlookup4(t, h, p53_steer_be32(cl->addr), 1);
}

uint32_t p53_steer_lookup(const void *t, unsigned int src, const struct p53_steer_client *cl)
{
	const struct p53_steer_src *s = &p53_steer_hdr(t)->src[src];

	return cl->v6 ? p53_steer_lookup6(t, s, p53_steer_be64(cl->addr), cl->addr, 0, 1) : p53_steer_lookup4(t, s, p53_steer_be32(cl->addr), 1);
}

void p53_steer_variant_sums(const void *t, const struct p53_steer_variant *v, uint16_t *sum,
			    uint16_t *sig_sum)
{
	const uint8_t *rd = p53_steer_rdata(t, v);
	uint64_t s = p53_csum_add(rd, v->rdata_len, 0);
	uint64_t g = p53_csum_add(rd + v->rdata_len, v->sig_len, 0);

	if (v->rdata_len & 1u)
		g = p53_csum_odd(g);   /* the RRSIGs start at an odd offset */
	*sum = p53_csum_fold(s);
	*sig_sum = p53_csum_fold(p53_csum_addc(s, g));
}

/* p53_steer_pick_addr for an IPv6 address outside 2000::/3: the lookups test where it is. */
__attribute__((noinline, cold)) const struct p53_steer_variant *
p53_steer_pick6_other(const void *t, const struct p53_steer_rec *r, const uint8_t *addr, uint8_t *scope)
{
	return p53_steer_pick_fam(t, r, addr, 1, 0, scope, 1);
}

static int inside(size_t len, uint64_t off, uint64_t n, uint64_t sz)
{
	return off <= len && n <= (len - off) / (sz ? sz : 1);
}

int p53_steer_check(const void *t, size_t len, const char **why)
{
	const struct p53_steer_hdr *h = t;
	const char *w = NULL;

	if (len < sizeof(*h) || h->magic != P53_STEER_MAGIC || h->size != len) {
		w = "bad header";
		goto bad;
	}
	if (!inside(len, h->records_off, h->n_records, sizeof(struct p53_steer_rec)) ||
	    !inside(len, h->variants_off, h->n_variants, sizeof(struct p53_steer_variant)) ||
	    h->dec_off > len || h->rdata_off > len || h->names_off > len) {
		w = "section outside the table";
		goto bad;
	}
	uint64_t n_dec = (len - h->dec_off) / 4;
	/* The sources without blocks have fixed locations: the picker indexes them unchecked. */
	if (h->src[P53_STEER_SRC_ANY].n_locs != 1 || h->src[P53_STEER_SRC_CLIENT].n_locs != P53_STEER_BUCKETS) {
		w = "a source without blocks has the wrong number of locations";
		goto bad;
	}
	for (unsigned int s = 0; s < P53_STEER_SRCS; s++) {
		const struct p53_steer_src *src = &h->src[s];
		if (!inside(len, src->off4, src->n4, sizeof(struct p53_steer_b4)) ||
		    !inside(len, src->off6, src->n6, sizeof(uint64_t)) ||
		    !inside(len, src->aux6_off, src->n6, sizeof(struct p53_steer_b6x))) {
			w = "prefix table outside the table";
			goto bad;
		}
		/* The indices: inside, each entry a block, never decreasing (the lookup's
		 * range idx[k]..idx[k + 1] must not wrap). */
		for (int fam = 0; fam < 2; fam++) {
			uint32_t nb = fam ? src->n6 : src->n4, io = fam ? src->idx6_off : src->idx4_off;
			if (nb == 0)
				continue;
			uint32_t ni = fam ? P53_STEER_IDX6 : P53_STEER_IDX;
			if ((io & 3) != 0 || !inside(len, io, ni, 4)) {
				w = "prefix index outside the table";
				goto bad;
			}
			const uint32_t *idx = (const void *)((const uint8_t *)t + io);
			for (uint32_t k = 0; k < ni; k++)
				if (idx[k] >= nb || (k > 0 && idx[k] < idx[k - 1])) {
					w = "prefix index out of order";
					goto bad;
				}
		}
		const struct p53_steer_b4 *b4 = (const void *)((const uint8_t *)t + src->off4);
		for (uint32_t i = 0; i < src->n4; i++)
			if ((b4[i].loc_len >> 8) != P53_STEER_NOLOC && (b4[i].loc_len >> 8) >= src->n_locs) {
				w = "block names a location that is not there";
				goto bad;
			}
		const struct p53_steer_b6x *b6 = (const void *)((const uint8_t *)t + src->aux6_off);
		for (uint32_t i = 0; i < src->n6; i++)
			if ((b6[i].loc_len >> 8) != P53_STEER_NOLOC && (b6[i].loc_len >> 8) >= src->n_locs) {
				w = "block names a location that is not there";
				goto bad;
			}
	}
	/* The merged table: inside, its index as a source's, and each block naming a block of
	 * each source that carries the same loc_len (the picker reads them unchecked). */
	for (int fam = 0; fam < 2; fam++) {
		const struct p53_steer_mrg *m = &h->mrg;
		const struct p53_steer_src *sm = &h->src[P53_STEER_SRC_MAP], *sg = &h->src[P53_STEER_SRC_GEO];
		uint32_t nb = fam ? m->n6 : m->n4;
		if (nb == 0)
			continue;
		uint32_t nm = fam ? sm->n6 : sm->n4, ng = fam ? sg->n6 : sg->n4;
		uint32_t io = fam ? m->idx6_off : m->idx4_off, ni = fam ? P53_STEER_IDX6 : P53_STEER_IDX;
		if ((fam ? !inside(len, m->off6, nb, sizeof(uint64_t)) || !inside(len, m->aux6_off, nb, sizeof(struct p53_steer_m6x))
			 : !inside(len, m->start4_off, nb, sizeof(uint32_t)) || !inside(len, m->aux4_off, nb, sizeof(struct p53_steer_mx))) ||
		    (io & 3) != 0 || !inside(len, io, ni, 4) || nm == 0 || ng == 0) {
			w = "merged table outside the table";
			goto bad;
		}
		const uint32_t *idx = (const void *)((const uint8_t *)t + io);
		for (uint32_t k = 0; k < ni; k++)
			if (idx[k] >= nb || (k > 0 && idx[k] < idx[k - 1])) {
				w = "merged index out of order";
				goto bad;
			}
		for (uint32_t i = 0; i < nb; i++) {
			uint32_t im, ig, llm, llg;
			if (fam) {
				const struct p53_steer_m6x *x6 = (const struct p53_steer_m6x *)((const uint8_t *)t + m->aux6_off) + i;
				im = x6->im, ig = x6->ig, llm = x6->ll_m, llg = x6->ll_g;
			} else {
				const struct p53_steer_mx *x4 = (const struct p53_steer_mx *)((const uint8_t *)t + m->aux4_off) + i;
				im = x4->im, ig = x4->ig, llm = x4->ll_m, llg = x4->ll_g;
			}
			if (im >= nm || ig >= ng) {
				w = "merged block names a block that is not there";
				goto bad;
			}
			uint32_t wm = fam ? ((const struct p53_steer_b6x *)((const uint8_t *)t + sm->aux6_off))[im].loc_len
					  : ((const struct p53_steer_b4 *)((const uint8_t *)t + sm->off4))[im].loc_len;
			uint32_t wg = fam ? ((const struct p53_steer_b6x *)((const uint8_t *)t + sg->aux6_off))[ig].loc_len
					  : ((const struct p53_steer_b4 *)((const uint8_t *)t + sg->off4))[ig].loc_len;
			if (llm != wm || llg != wg) {
				w = "merged block disagrees with its sources";
				goto bad;
			}
		}
	}
	const struct p53_steer_rec *r = (const void *)((const uint8_t *)t + h->records_off);
	const uint32_t *dec = (const uint32_t *)((const uint8_t *)t + h->dec_off);
	for (uint32_t i = 0; i < h->n_records; i++) {
		if (r[i].n_steps > P53_STEER_STEPS || r[i].fallback >= h->n_variants ||
		    r[i].zero != 0 || r[i].name_off < h->names_off ||
		    ((r[i].mrg & P53_STEER_MRG4) && h->mrg.n4 == 0) || ((r[i].mrg & P53_STEER_MRG6) && h->mrg.n6 == 0) ||
		    (r[i].mrg & ~(P53_STEER_MRG4 | P53_STEER_MRG6)) != 0 ||
		    (uint64_t)r[i].name_off + r[i].name_len > len) {
			w = "record out of range";
			goto bad;
		}
		/* An owner's chain (p53_steer_node): forward only, and the same owner. */
		if (r[i].next != 0 &&
		    (r[i].next <= i + 1 || r[i].next > h->n_records ||
		     r[r[i].next - 1].name_len != r[i].name_len ||
		     (uint64_t)r[r[i].next - 1].name_off + r[i].name_len > len ||
		     memcmp((const uint8_t *)t + r[r[i].next - 1].name_off,
			    (const uint8_t *)t + r[i].name_off, r[i].name_len) != 0)) {
			w = "record chain out of range";
			goto bad;
		}
		for (unsigned int k = 0; k < r[i].n_steps; k++) {
			const struct p53_steer_step *st = &r[i].steps[k];
			if (st->src >= P53_STEER_SRCS ||
			    (uint64_t)st->dec + h->src[st->src].n_locs > n_dec) {
				w = "policy step out of range";
				goto bad;
			}
			for (uint32_t l = 0; l < h->src[st->src].n_locs; l++)
				if (dec[st->dec + l] != UINT32_MAX && dec[st->dec + l] >= h->n_variants) {
					w = "decision names a variant that is not there";
					goto bad;
				}
		}
	}
	for (uint32_t i = 0; i < h->n_variants; i++) {
		const struct p53_steer_variant *v = p53_steer_variant(t, i);
		if ((uint64_t)h->rdata_off + v->rdata_off + v->rdata_len + v->sig_len > len) {
			w = "variant outside the table";
			goto bad;
		}
		/* Records, then signatures: each a pointer, 10 octets of header and its RDATA. */
		const uint8_t *p = p53_steer_rdata(t, v);
		uint64_t at = 0, end = (uint64_t)v->rdata_len + v->sig_len;
		int ok = 1;
		for (uint32_t k = 0; ok && k < (uint32_t)v->count + v->sig_count; k++) {
			ok = at + P53_RR_OWNER_LEN + 10 <= end && (k != v->count || at == v->rdata_len);
			if (ok)
				at += P53_RR_OWNER_LEN + 10 + p53_get16(p + at + P53_RR_OWNER_LEN + 8);
		}
		if (!ok || at != end || (v->sig_count == 0 && v->sig_len != 0) ||
		    v->sig_count > UINT8_MAX || v->sig_len > UINT16_MAX) {
			w = "variant records do not fill their bytes";
			goto bad;
		}
		uint16_t sum, sig_sum;
		p53_steer_variant_sums(t, v, &sum, &sig_sum);
		if (sum != v->sum || sig_sum != v->sig_sum) {
			w = "variant sums do not match its bytes";
			goto bad;
		}
	}
	return 0;
bad:
	if (why != NULL)
		*why = w;
	return -EINVAL;
}
