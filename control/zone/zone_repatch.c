/*
 * A zone's whole new content patched into the running image as one IXFR step (zone_repatch.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "control/text.h"
#include "control/zone/image_patch.h"
#include "control/zone/image_splice.h"
#include "control/zone/zone_repatch.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

#define T_SOA 6

/* One record of a buffer: where it starts and its parts, for sorting. */
struct rec {
	const uint8_t *rr;
	uint32_t rr_len;
	uint8_t owner_len;
	uint16_t type, cls, rdlen;
	uint32_t ttl;
	const uint8_t *rdata;
};

static int rec_cmp(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	int c;

	if (a->owner_len != b->owner_len)
		return a->owner_len < b->owner_len ? -1 : 1;
	if ((c = memcmp(a->rr, b->rr, a->owner_len)) != 0)
		return c;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	if (a->rdlen != b->rdlen)
		return a->rdlen < b->rdlen ? -1 : 1;
	if (a->rdlen > 0 && (c = memcmp(a->rdata, b->rdata, a->rdlen)) != 0)
		return c;
	if (a->ttl != b->ttl)
		return a->ttl < b->ttl ? -1 : 1;
	return 0;
}

/* The records of r, sorted; *soa the (first) SOA's index in the sorted array. */
static struct rec *recs_sorted(const struct p53_rrs *r, size_t *n, size_t *soa)
{
	struct rec *a = malloc(((size_t)r->count + 1) * sizeof(*a));
	struct p53_rr_view v;
	size_t pos = 0, k = 0;
	int rc;

	if (a == NULL)
		return NULL;
	while ((rc = p53_rrs_next(r, &pos, &v)) == 1 && k < r->count)
		a[k++] = (struct rec){ .rr = v.rr, .rr_len = (uint32_t)v.rr_len,
				       .owner_len = v.owner_len, .type = v.type, .cls = v.cls,
				       .rdlen = v.rdlen, .ttl = v.ttl, .rdata = v.rdata };
	if (rc < 0) {
		free(a);
		return NULL;
	}
	qsort(a, k, sizeof(*a), rec_cmp);
	*n = k;
	*soa = k;
	for (size_t i = 0; i < k && *soa == k; i++)
		if (a[i].type == T_SOA)
			*soa = i;
	return a;
}

static uint32_t soa_serial(const struct rec *r)
{
	const uint8_t *p = r->rdata + r->rdlen - 20; /* MNAME RNAME SERIAL ...: RFC 1035 §3.3.13 */

	return r->rdlen < 22 ? 0 : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int put(struct p53_rrs *to, const struct rec *r)
{
	return p53_rrs_add(to, r->rr, r->owner_len, r->type, r->cls, r->ttl, r->rdata, r->rdlen);
}

long p53_rrs_diff(const struct p53_rrs *old, const struct p53_rrs *new, struct p53_ixfr *out,
		  char *err, size_t errlen)
{
	size_t no = 0, nn = 0, so = 0, sn = 0;
	struct rec *a = recs_sorted(old, &no, &so);
	struct rec *b = recs_sorted(new, &nn, &sn);
	struct p53_ixfr_step *st;
	long differ = 0;

	p53_ixfr_free(out);
	if (a == NULL || b == NULL) {
		snprintf(err, errlen, "out of memory or a malformed record buffer");
		goto fail;
	}
	if (so == no || sn == nn) {
		snprintf(err, errlen, "%s content has no SOA", so == no ? "the served" : "the new");
		goto fail;
	}
	/* The SOAs open the step (RFC 1995 §4); the rest is a merge of the sorted records. */
	if ((st = p53_ixfr_push(out)) == NULL || put(&st->del, &a[so]) != 0 || put(&st->add, &b[sn]) != 0)
		goto oom;
	st->from = soa_serial(&a[so]);
	st->to = soa_serial(&b[sn]);
	size_t i = 0, k = 0;
	while (i < no || k < nn) {
		if (i == so) {
			i++;
			continue;
		}
		if (k == sn) {
			k++;
			continue;
		}
		int c = i == no ? 1 : k == nn ? -1 : rec_cmp(&a[i], &b[k]);
		if (c == 0) {
			i++;
			k++;
		} else if (c < 0) {
			if (put(&st->del, &a[i++]) != 0)
				goto oom;
			differ++;
		} else {
			if (put(&st->add, &b[k++]) != 0)
				goto oom;
			differ++;
		}
	}
	if (differ == 0 && rec_cmp(&a[so], &b[sn]) == 0)
		p53_ixfr_free(out);
	free(a);
	free(b);
	return differ;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	p53_ixfr_free(out);
	free(a);
	free(b);
	return -1;
}

/* The zone's records read out of an image (zone index z). */
static int zone_read(const void *img, uint32_t z, struct p53_rrs *into)
{
	struct p53_rrs **want = calloc(p53_image_hdr(img)->n_zones + 1, sizeof(*want));

	if (want == NULL)
		return -1;
	want[z] = into;
	int rc = p53_image_zones_rrs(img, want);
	free(want);
	return rc;
}

/*
 * How many of the image's nodes are zone `name`'s (its range's, image.h), or 0 when it is not
 * served with data: what the zone alone costs against every zone.
 */
static uint32_t zone_nodes(const void *img, const char *name, uint32_t *total)
{
	ldns_rdf *r = ldns_dname_new_frm_str(name);
	uint8_t apex[P53_NAME_MAXLEN];
	size_t len = 0;
	uint32_t mine = 0;

	*total = 0; /* the zones' ranges (the tables hold their room too: image.h) */
	for (uint32_t z = 0; z < p53_image_hdr(img)->n_zones; z++)
		*total += p53_image_zone(img, z)->n_nodes;
	if (r != NULL && ldns_rdf_size(r) <= sizeof(apex)) {
		len = ldns_rdf_size(r);
		p53_name_lower(apex, ldns_rdf_data(r), len);
	}
	ldns_rdf_deep_free(r);
	if (len == 0)
		return 0;
	uint32_t ai = p53_image_find(img, apex, len, p53_name_hash(apex, len));
	if (ai == P53_NONE || !(p53_image_node(img, ai)->flags & P53_NODE_APEX))
		return 0;
	/* The zone's range of nodes[] (image.h). */
	mine = p53_image_zone(img, p53_image_node(img, ai)->zone)->n_nodes;
	return mine;
}

/*
 * Past this many names, a zone that is most of the image goes straight to the full compile:
 * compiling it alone, reading it and the served copy out and comparing them costs ~1.5x its
 * compile (a 1M-record zone's `zone reload`: 4.1-4.7 s against 2.8-3.0 s compiled with the
 * rest, and a higher peak), so the patch only pays when the other zones are the larger part.
 * Below it both ways take milliseconds.
 */
#define P53_REPATCH_BIG_ZONE 65536u

/* Whether zone `name` is most of a big image (P53_REPATCH_BIG_ZONE), why set if so. */
static bool most_of(const void *cur, const char *name, char *why, size_t whylen)
{
	uint32_t total, mine = zone_nodes(cur, name, &total);

	if (mine > P53_REPATCH_BIG_ZONE && (uint64_t)mine * 2 > total) {
		snprintf(why, whylen, "zone %s holds %u of the image's %u names: compiling every zone "
			 "costs no more than compiling it alone, reading and comparing it", name,
			 mine, total);
		return true;
	}
	return false;
}

/* The steered RRsets of node n of image a: how many, and each the same in node m of b. */
static uint32_t steered_in(const void *a, uint32_t n, const void *b, uint32_t m, bool *same)
{
	const struct p53_image_node *na = p53_image_node(a, n);
	const struct p53_image_node *nb = m != P53_NONE ? p53_image_node(b, m) : NULL;
	uint32_t k = 0;

	for (uint32_t r = na->rrsets; r < (uint32_t)na->rrsets + na->n_rrsets; r++) {
		const struct p53_image_rrset *x = p53_image_nrrset(a, na, r);
		bool found = false;
		/* The denial the compile signs for a steered owner (NSEC at the owner, NSEC3 at
		 * its hash) is signed anew by each compile: the patch checks it (steer_denials). */
		if (!(x->flags & P53_RRSET_STEERED) || x->type == 47 || x->type == 50)
			continue;
		k++;
		for (uint32_t q = nb != NULL ? nb->rrsets : 0;
		     nb != NULL && q < (uint32_t)nb->rrsets + nb->n_rrsets && !found; q++) {
			const struct p53_image_rrset *y = p53_image_nrrset(b, nb, q);
			found = x->type == y->type && x->flags == y->flags && x->count == y->count &&
				x->ttl == y->ttl && x->rdata_len == y->rdata_len &&
				x->sig_count == y->sig_count && x->sig_len == y->sig_len &&
				memcmp(p53_image_rdata(a, x), p53_image_rdata(b, y),
				       (size_t)x->rdata_len + x->sig_len) == 0;
		}
		*same &= found;
	}
	if (k > 0)
		*same &= nb != NULL && na->steer == nb->steer;
	return k;
}

/*
 * Whether the zone compiled alone (`one`, zone 0) has the steered RRsets and node steer
 * indices zone z of `cur` serves: the patch keeps those, so it may only run when the
 * steering the compile attached is the one served (the same config; an owner whose steered
 * type the new file also holds is already a compile error). One pass over cur's nodes.
 */
static bool steer_same(const void *cur, uint32_t z, const void *one, char *why, size_t whylen)
{
	uint32_t n_one = 0, n_cur = 0;
	bool same = p53_image_hdr(cur)->steer_layout == p53_image_hdr(one)->steer_layout;
	char txt[1024];

	if (!same)
		snprintf(why, whylen, "the steering layout changes (reload the config)");
	for (uint32_t n = 0; n < p53_image_zone(one, 0)->n_nodes && same; n++) { /* (its range) */
		const struct p53_image_node *nd = p53_image_node(one, n);
		bool any = false;
		for (uint32_t r = nd->rrsets; r < (uint32_t)nd->rrsets + nd->n_rrsets && !any; r++) {
			const struct p53_image_rrset *x = p53_image_nrrset(one, nd, r);
			any = (x->flags & P53_RRSET_STEERED) && x->type != 47 && x->type != 50;
		}
		if (!any)
			continue;
		const uint8_t *nm = p53_image_node_name(one, nd);
		uint32_t m = p53_image_find(cur, nm, nd->name_len, p53_name_hash(nm, nd->name_len));
		uint32_t k = steered_in(one, n, cur, m, &same);
		n_one += k;
		if (!same)
			snprintf(why, whylen, "the steered records of %s change (reload the config)",
				 p53_name_to_str(txt, sizeof(txt), nm));
	}
	const struct p53_image_zone *zn = p53_image_zone(cur, z);
	for (uint32_t n = zn->node_base; n < zn->node_base + zn->n_nodes && same; n++) {
		bool ignored = true;
		n_cur += steered_in(cur, n, cur, n, &ignored);
	}
	if (same && n_cur != n_one)
		snprintf(why, whylen, "the zone serves %u steered RRset(s), its compile attaches %u "
			 "(reload the config)", n_cur, n_one);
	return same && n_cur == n_one;
}

/* A zone's DNSSEC state in words (p53_image_zone.dnssec). */
static const char *dnssec_words(uint16_t d)
{
	if (!(d & P53_ZONE_SIGNED))
		return "unsigned";
	if (d & P53_ZONE_NSEC3)
		return d & P53_ZONE_OPTOUT ? "signed with NSEC3 opt-out" : "signed with NSEC3";
	return d & P53_ZONE_NSEC ? "signed with NSEC" : "signed";
}

/* Why a zone whose DNSSEC state was `was` and is now zone image one's is not patched: an
 * unsigned zone turning signed in the IXFR patch's words (image_patch.h), with the first
 * owner of an RRSIG; else the states in words. */
static void dnssec_change(uint16_t was, const void *one, char *why, size_t whylen)
{
	const uint16_t now = p53_image_zone(one, 0)->dnssec;
	char txt[1024];

	for (uint32_t n = 0; !(was & P53_ZONE_SIGNED) && n < p53_image_zone(one, 0)->n_nodes; n++) {
		const struct p53_image_node *nd = p53_image_node(one, n);
		const struct p53_image_rrset *rs = p53_image_node_first(one, nd);
		for (uint32_t i = 0; i < nd->n_rrsets; i++, rs = p53_image_rrset_next(one, rs)) {
			if (rs->sig_count == 0 && rs->type != P53_T_RRSIG)
				continue;
			snprintf(why, whylen, P53_PATCH_TURNS_SIGNED,
				 p53_name_to_str(txt, sizeof(txt), p53_image_node_name(one, nd)));
			return;
		}
	}
	snprintf(why, whylen, "the zone's DNSSEC state changes (%s to %s)", dnssec_words(was),
		 dnssec_words(now));
}

#define DECLINE(...) do { snprintf(why, whylen, __VA_ARGS__); rc = P53_REPATCH_DECLINED; goto out; } while (0)

enum p53_repatch p53_zone_repatch(const void *cur, const struct p53_zone_src *src, bool same_too,
				  void *spare, void **img, size_t *len, uint64_t stats[2],
				  char *why, size_t whylen, char *err, size_t errlen,
				  p53_warn_fn warn, void *warn_arg, char ***files, size_t *n_files)
{
	enum p53_repatch rc = P53_REPATCH_DECLINED;
	struct p53_rrs was = { 0 }, now = { 0 };
	struct p53_ixfr diff = { 0 };
	char **fl = NULL;
	size_t nfl = 0, one_len;
	void *one = NULL;

	*img = NULL;
	why[0] = '\0';
	if (stats != NULL)
		stats[0] = stats[1] = 0;
	/* Steered records are the config's, attached by every compile (the caller's src->extra,
	 * as the full compile's) and left out of the read-back: the patch keeps them as they are
	 * (steer_same). In a signed zone the compile also makes and signs the NSEC or NSEC3 of
	 * steered owners its chain lacks: the patch keeps the served one where the compile would
	 * make the same record, signs it again as the compile would when the chain moves beside
	 * it (src's key and window), and declines otherwise (image_patch.c steer_denials). */
	if (src->rcode != 0)
		DECLINE("the zone has no data");
	if (most_of(cur, src->name, why, whylen)) {
		rc = P53_REPATCH_DECLINED;
		goto out;
	}
	/* The zone alone through the full compiler: every check it makes, its errors. */
	one = p53_image_build_files(src, 1, &one_len, err, errlen, warn, warn_arg, &fl, &nfl);
	if (one == NULL) {
		rc = P53_REPATCH_BAD;
		goto out;
	}
	const struct p53_image_zone *oz = p53_image_zone(one, 0);
	uint8_t apex[P53_NAME_MAXLEN];
	size_t apex_len = oz->name_len;
	memcpy(apex, p53_image_name(one, oz->name_off), apex_len);
	uint32_t ai = p53_image_find(cur, apex, apex_len, p53_name_hash(apex, apex_len));
	if (ai == P53_NONE || !(p53_image_node(cur, ai)->flags & P53_NODE_APEX))
		DECLINE("the zone is not in the running image");
	uint32_t z = p53_image_node(cur, ai)->zone;
	const struct p53_image_zone *cz = p53_image_zone(cur, z);
	if (cz->rcode != 0) {
		snprintf(why, whylen, "the zone has no data in the running image");
		goto splice;
	}
	/* What the zone is (its flags, signed or not) is fixed by its compile, not patched. */
	if (cz->dnssec != oz->dnssec) {
		dnssec_change(cz->dnssec, one, why, whylen);
		goto splice;
	}
	if (cz->flags != oz->flags) {
		snprintf(why, whylen, "the zone's transfer flags change (%#x to %#x)", cz->flags,
			 oz->flags);
		goto splice;
	}
	if (src->n_extra > 0 && !steer_same(cur, z, one, why, whylen)) {
		rc = P53_REPATCH_DECLINED;
		goto out;
	}
	if (zone_read(cur, z, &was) != 0 || zone_read(one, 0, &now) != 0)
		DECLINE("out of memory");
	char derr[256];
	long differ = p53_rrs_diff(&was, &now, &diff, derr, sizeof(derr));
	if (differ < 0)
		DECLINE("%s", derr);
	if (diff.n == 0) {
		if (!same_too) {
			rc = P53_REPATCH_SAME;
			goto out;
		}
		/* Same content, a new image all the same: the apex's SOA deleted and added. */
		struct p53_ixfr_step *st = p53_ixfr_push(&diff);
		struct p53_rr_view v;
		size_t pos = 0;
		if (st == NULL)
			DECLINE("out of memory");
		while (p53_rrs_next(&now, &pos, &v) == 1)
			if (v.type == T_SOA)
				break;
		if (p53_rrs_add(&st->del, v.owner, v.owner_len, v.type, v.cls, v.ttl, v.rdata, v.rdlen) != 0 ||
		    p53_rrs_add(&st->add, v.owner, v.owner_len, v.type, v.cls, v.ttl, v.rdata, v.rdlen) != 0)
			DECLINE("out of memory");
		st->from = st->to = cz->serial;
	}
	if (stats != NULL) {
		stats[0] = diff.steps[0].del.count;
		stats[1] = diff.steps[0].add.count;
	}
	/* The big buffer goes before the patch's copy of the image (the zone's own image
	 * stays: the splice takes it when the patch declines). */
	p53_rrs_free(&was);
	/* The steered owners' NSECs the patch signs again, as this compile signed them. */
	const struct p53_patch_sign sign = { .key = src->sign_key, .inception = src->sign_inception,
					     .expiration = src->sign_expiration };
	*img = p53_image_patch_spare(cur, apex, apex_len, &diff, &now, &sign, &spare, len, why,
				     whylen);
	if (*img != NULL) {
		rc = P53_REPATCH_PATCHED;
		goto out;
	}
splice:
	/* What the patch declines, the zone compiled alone spliced in (why stays the patch's). */
	p53_rrs_free(&was);
	p53_rrs_free(&now);
	char swhy[256];
	*img = p53_image_splice(cur, one, spare, len, swhy, sizeof(swhy));
	spare = NULL;
	if (*img != NULL) {
		rc = P53_REPATCH_SPLICED;
	} else {
		size_t wl = strlen(why);
		snprintf(why + wl, whylen - wl, "; not spliced: %s", swhy);
		rc = P53_REPATCH_DECLINED;
	}
out:
	if ((rc == P53_REPATCH_PATCHED || rc == P53_REPATCH_SAME || rc == P53_REPATCH_SPLICED) &&
	    files != NULL) {
		*files = fl;
		*n_files = nfl;
		fl = NULL;
		nfl = 0;
	}
	p53_image_files_free(fl, nfl);
	free(spare);
	free(one);
	p53_rrs_free(&was);
	p53_rrs_free(&now);
	p53_ixfr_free(&diff);
	return rc;
}

enum p53_repatch p53_zone_splice(const void *cur, const struct p53_zone_src *src, void *spare,
				 void **img, size_t *len, char *why, size_t whylen, char *err,
				 size_t errlen, p53_warn_fn warn, void *warn_arg)
{
	size_t one_len;

	*img = NULL;
	why[0] = '\0';
	/* As for the patch: a zone that is most of a big image costs as much alone, and its own
	 * image beside the running one and the new one makes a higher peak. */
	if (most_of(cur, src->name, why, whylen)) {
		free(spare);
		return P53_REPATCH_DECLINED;
	}
	void *one = p53_image_build(src, 1, &one_len, err, errlen, warn, warn_arg);
	if (one == NULL) {
		free(spare);
		return P53_REPATCH_BAD;
	}
	*img = p53_image_splice(cur, one, spare, len, why, whylen);
	free(one);
	return *img != NULL ? P53_REPATCH_SPLICED : P53_REPATCH_DECLINED;
}
