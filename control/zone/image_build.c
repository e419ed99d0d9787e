/*
 * Zone compiler: master files to one zone image (dataplane/image.h).
 *
 * Build steps:
 *  1. Zones: parse each origin; sort the apexes by name so duplicate zones are found and "is
 *     this name a served apex?" is a binary search.
 *  2. Load (control/zone/zone_load.c), zone by zone, each zone's apex node made first
 *     (apex_make: so each zone's nodes, and their RRsets, are one range of the image's
 *     tables): ldns parses each master file and its $INCLUDEs one RR at a
 *     time; each RR becomes wire bytes (after the owner) plus its canonical RDATA, and its
 *     owner a node in a (zone, name) hash map, missing ancestors created as we go (they end
 *     up as empty non-terminals). Out-of-zone records are dropped with a warning.
 *  3. RRsets: records sorted by (node, type, canonical RDATA, order of appearance; one qsort,
 *     or only the few out of order when they come nearly sorted, sort_recs)
 *     makes each node's RRsets contiguous and sorted by type, each RRset's RRs in RFC 4034
 *     §6.3 order with duplicates adjacent (dropped). The RRset TTL is the first one seen.
 *     3c. RRSIGs go with the RRsets they cover (control/zone/dnssec_build.c).
 *  4. Nodes, top-down in index order (a parent always precedes its children): flags,
 *     occluder, wildcard links, the RFC checks (CNAME alone, DNAME without descendants) and
 *     whether a deeper served zone shadows the node.
 *  5. Zones' SOA facts; DNSSEC denial facts (NSEC chain, NSEC3 hashes, per-node proofs,
 *     dnssec_build.c); parent_side links; additional-section lists for NS, MX, SRV, SVCB,
 *     HTTPS; then, with the node map freed, the name index (only unshadowed nodes and no
 *     NSEC3 owners, so each name once, from its deepest zone).
 *  6. Layout: sizes are all known now; one calloc and a copy of each section.
 * Everything is O(n log n) in the number of records; no ldns object outlives its line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <ldns/ldns.h>

#include "control/bigmem.h"
#include "control/zone/image_build.h"
#include "control/zone/zone_build.h"
#include "dataplane/image.h"
#include "control/text.h"
#include "dataplane/name.h"

#define IMAGE_WHERE "(image):0" /* for limits of the whole image, not of one file */

static const uint8_t *canon(const struct p53_zb *b, const struct p53_zb_rec *r, size_t *len)
{
	if (r->clen > 0) {
		*len = r->clen;
		return b->arena + r->off + r->wlen;
	}
	*len = r->wlen - 10;
	return b->arena + r->off + 10;
}

/* RFC 4034 §6.3: RDATA as a left-justified octet string, shorter first on a tie. */
static int rdcmp(const struct p53_zb *b, const struct p53_zb_rec *x, const struct p53_zb_rec *y)
{
	size_t lx, ly;
	const uint8_t *a = canon(b, x, &lx), *c = canon(b, y, &ly);
	int d = memcmp(a, c, lx < ly ? lx : ly);

	if (d != 0)
		return d;
	return (lx > ly) - (lx < ly);
}

static int rec_cmp(const void *pa, const void *pb, void *arg)
{
	const struct p53_zb_rec *x = pa, *y = pb;
	int d;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	d = rdcmp(arg, x, y);
	if (d != 0)
		return d;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int ord_cmp(const void *pa, const void *pb, void *arg)
{
	const struct p53_zb *b = arg;

	return rec_cmp(&b->recs[*(const uint32_t *)pa], &b->recs[*(const uint32_t *)pb], arg);
}

/*
 * Records in rec_cmp order. An index is sorted and the records then moved in place, cycle by
 * cycle: qsort of the records themselves took a scratch copy of them all (glibc's merge sort,
 * 48 MB at 1M records), the index's scratch is 4 bytes a record.
 */
static int sort_all(struct p53_zb *b)
{
	struct p53_zb_rec *r = b->recs;
	size_t n = b->n_recs;
	uint32_t *ord = malloc(n * sizeof(*ord));

	if (ord == NULL)
		return -1;
	p53_bigmem_advise(ord, n * sizeof(*ord));
	for (size_t i = 0; i < n; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, n, sizeof(*ord), ord_cmp, b);
	/* r[j] becomes the old r[ord[j]]; a position's ord is set to itself once it is done. */
	for (size_t i = 0; i < n; i++) {
		if (ord[i] == i)
			continue;
		struct p53_zb_rec tmp = r[i];
		size_t j = i;
		for (;;) {
			size_t k = ord[j];
			ord[j] = (uint32_t)j;
			if (k == i) {
				r[j] = tmp;
				break;
			}
			r[j] = r[k];
			j = k;
		}
	}
	free(ord);
	return 0;
}

static int stray_cmp(const void *pa, const void *pb, void *arg)
{
	return rec_cmp(pa, pb, arg);
}

/*
 * Records in rec_cmp order, cheaply when they are nearly there. A secondary zone read back
 * out of its image arrives in that order (nodes in index order, parents first, so each new
 * owner gets the next node; RRsets by type; records in canonical order), except what an IXFR
 * added at the end and RRSIGs: one pass keeps the records that follow in order where they are
 * (slid down) and takes the others ("strays") aside; the strays alone are sorted and merged
 * in from the back. O(n + k log k) for k strays instead of O(n log n). When more than one
 * record in 16 is a stray (a master file in no particular order), the whole array is sorted.
 */
static int sort_recs(struct p53_zb *b)
{
	struct p53_zb_rec *r = b->recs, *st;
	size_t n = b->n_recs, w = 0, k = 0, max = n / 16 + 1;

	st = malloc(max * sizeof(*st));
	if (st == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (w == 0 || rec_cmp(&r[w - 1], &r[i], b) <= 0) {
			if (w != i)
				r[w] = r[i];
			w++;
			continue;
		}
		if (k == max) {
			/* Not nearly sorted: the strays back into the gap between the records kept
			 * (w of them) and r[i] (w + k == i), then sort everything. */
			memcpy(&r[w], st, k * sizeof(*r));
			free(st);
			return sort_all(b);
		}
		st[k++] = r[i];
	}
	if (k > 0) {
		qsort_r(st, k, sizeof(*st), stray_cmp, b);
		size_t i = w, j = k, o = n;
		while (j > 0) {
			if (i > 0 && rec_cmp(&r[i - 1], &st[j - 1], b) > 0)
				r[--o] = r[--i];
			else
				r[--o] = st[--j];
		}
	}
	free(st);
	return 0;
}

static int name_cmp(const uint8_t *a, size_t la, const uint8_t *c, size_t lc)
{
	if (la != lc)
		return la < lc ? -1 : 1;
	return memcmp(a, c, la);
}

static int apex_cmp(const void *pa, const void *pb, void *arg)
{
	const struct p53_zb *b = arg;
	const struct p53_image_zone *x = &b->zones[*(const uint32_t *)pa];
	const struct p53_image_zone *y = &b->zones[*(const uint32_t *)pb];

	return name_cmp(b->names + x->name_off, x->name_len, b->names + y->name_off, y->name_len);
}

/* Zone whose apex is this canonical name, or P53_NONE. */
static uint32_t apex_zone(struct build *s, const uint8_t *name, size_t len)
{
	size_t lo = 0, hi = s->zb.n_zones;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct p53_image_zone *zn = &s->zb.zones[s->apexes[mid]];
		int d = name_cmp(s->zb.names + zn->name_off, zn->name_len, name, len);
		if (d == 0)
			return s->apexes[mid];
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return P53_NONE;
}

static void where_zone(const struct p53_zone_src *src, char *where, size_t cap)
{
	if (src->cfg_file != NULL)
		snprintf(where, cap, "%s:%d", src->cfg_file, src->cfg_line);
	else
		snprintf(where, cap, "%s:0", src->file ? src->file : "(null)");
}

/* Step 1. */
static int zones_init(struct build *s)
{
	struct p53_zb *b = &s->zb;
	char where[4200];

	for (size_t z = 0; z < b->n_zones; z++) {
		const struct p53_zone_src *src = &b->src[z];
		ldns_rdf *o = NULL;
		char *txt = NULL;
		uint8_t name[P53_NAME_MAXLEN];
		int bad;

		where_zone(src, where, sizeof(where));
		if (src->name == NULL)
			return p53_zb_err(b, where, "zone without a name");
		/* Zone names are absolute whether or not the configuration wrote the dot. */
		if (asprintf(&txt, "%s%s", src->name, ldns_dname_str_absolute(src->name) ? "" : ".") < 0)
			return p53_zb_err(b, where, "out of memory");
		bad = ldns_str2rdf_dname(&o, txt) != LDNS_STATUS_OK;
		free(txt);
		if (bad || ldns_rdf_size(o) > P53_NAME_MAXLEN) {
			ldns_rdf_deep_free(o);
			return p53_zb_err(b, where, "bad zone name '%s'", src->name);
		}
		b->zones[z].name_len = (uint8_t)ldns_rdf_size(o);
		p53_name_lower(name, ldns_rdf_data(o), ldns_rdf_size(o));
		ldns_rdf_deep_free(o);
		b->zones[z].labels = (uint8_t)p53_name_labels(name);
		b->zones[z].soa = P53_NONE;
		b->zones[z].parent_side = P53_NONE;
		/* The name alone: the apex node comes with the zone's other nodes (apex_make). */
		if (p53_zb_grow((void **)&b->names, &b->names_cap, b->names_len + b->zones[z].name_len,
				1) < 0)
			return p53_zb_err(b, where, "out of memory");
		memcpy(b->names + b->names_len, name, b->zones[z].name_len);
		b->zones[z].name_off = (uint32_t)b->names_len;
		b->names_len += b->zones[z].name_len;
		b->zones[z].flags = src->flags;
		b->zones[z].rcode = src->rcode;
		s->apexes[z] = (uint32_t)z;
	}
	qsort_r(s->apexes, b->n_zones, sizeof(*s->apexes), apex_cmp, b);
	for (size_t i = 1; i < b->n_zones; i++) {
		if (apex_cmp(&s->apexes[i - 1], &s->apexes[i], b) == 0) {
			const struct p53_zone_src *src = &b->src[s->apexes[i]];
			where_zone(src, where, sizeof(where));
			return p53_zb_err(b, where, "zone '%s' is defined twice", src->name);
		}
	}
	return 0;
}

/*
 * Zone z's apex node, made right before the zone's records are read: every node of a zone is
 * made while its zone is read (p53_zone_load(), extras_add(), p53_dnssec_steer_denial()), so
 * the nodes come zone by zone, each zone's a range of nodes[] starting at its apex, and its
 * RRsets, made in node order (rrsets_make), a range of rrsets[] (layout() checks it).
 */
static int apex_make(struct build *s, uint32_t z)
{
	struct p53_zb *b = &s->zb;
	uint8_t name[P53_NAME_MAXLEN];
	uint32_t apex;

	memcpy(name, b->names + b->zones[z].name_off, b->zones[z].name_len);
	apex = p53_zb_node_get(b, z, name, b->zones[z].name_len);
	if (apex == P53_NONE)
		return p53_zb_err(b, IMAGE_WHERE, "out of memory");
	b->zones[z].apex = apex;
	b->zones[z].name_off = b->nodes[apex].name_off;
	b->nodes[apex].flags |= P53_NODE_APEX;
	return 0;
}

static uint16_t rrset_flags(uint16_t type)
{
	switch (type) {
	/* RFC 3597 §4: the well-known types whose RDATA names may be compressed. */
	case LDNS_RR_TYPE_NS: case LDNS_RR_TYPE_MD: case LDNS_RR_TYPE_MF:
	case LDNS_RR_TYPE_CNAME: case LDNS_RR_TYPE_SOA: case LDNS_RR_TYPE_MB:
	case LDNS_RR_TYPE_MG: case LDNS_RR_TYPE_MR: case LDNS_RR_TYPE_PTR:
	case LDNS_RR_TYPE_MINFO: case LDNS_RR_TYPE_MX:
		return P53_RRSET_COMPRESS;
	default:
		return 0;
	}
}

static int push_rrset(struct build *s, uint32_t node, uint16_t type, uint32_t start,
		      uint32_t count, uint32_t ttl, uint32_t first, size_t bytes)
{
	struct p53_zb *b = &s->zb;
	struct p53_zb_node *nd = &b->nodes[node];

	char tb[16];

	if (count > UINT16_MAX)
		return p53_zb_rec_err(b, &b->recs[first], "more than %u %s records at one owner",
				      UINT16_MAX, p53_type_to_str(tb, sizeof(tb), type));
	if (nd->n_rrsets == UINT16_MAX)
		return p53_zb_rec_err(b, &b->recs[first], "too many RRsets at one owner");
	if (p53_zb_grow((void **)&s->rrsets, &s->rrsets_cap, s->n_rrsets + 1, sizeof(*s->rrsets)) < 0 ||
	    p53_zb_grow((void **)&s->rs_rec, &s->rs_rec_cap, s->n_rrsets + 1, sizeof(*s->rs_rec)) < 0)
		return p53_zb_rec_err(b, &b->recs[first], "out of memory");
	if (nd->n_rrsets == 0)
		nd->rrsets = (uint32_t)s->n_rrsets;
	nd->n_rrsets++;
	s->rrsets[s->n_rrsets] = (struct p53_image_rrset){
		.type = type, .count = (uint16_t)count, .ttl = ttl, .rdata_len = (uint32_t)bytes,
		.adds = P53_NONE, .flags = rrset_flags(type),
	};
	s->rs_rec[s->n_rrsets] = start;
	s->n_rrsets++;
	s->rdata_len += bytes;
	if (b->nx[node].first_rec == P53_NONE || b->recs[first].seq < b->recs[b->nx[node].first_rec].seq)
		b->nx[node].first_rec = first;
	return 0;
}

/* Kept record seen second in an RRset that must hold only one. */
static uint32_t second(const struct build *s, uint32_t rs)
{
	const struct p53_zb_rec *r = s->zb.recs;
	uint32_t first = p53_rs_first(s, rs), best = P53_NONE;

	for (uint32_t i = s->rs_rec[rs]; i < s->rs_rec[rs] + s->rrsets[rs].count; i++)
		if (i != first && (best == P53_NONE || r[i].seq < r[best].seq))
			best = i;
	return best;
}

/* Step 3: sort, drop duplicates, cut into RRsets. */
static int rrsets_make(struct build *s)
{
	struct p53_zb *b = &s->zb;
	struct p53_zb_rec *r = b->recs;
	size_t out = 0, i = 0, n = b->n_recs;
	char txt[1024], tb[16];

	if (n > 0 && sort_recs(b) < 0)
		return p53_zb_err(b, IMAGE_WHERE, "out of memory");
	while (i < n) {
		size_t j = i, start = out, bytes = 0, first;
		uint32_t ttl, min = i;

		while (j < n && r[j].node == r[i].node && r[j].type == r[i].type) {
			if (r[j].seq < r[min].seq)
				min = (uint32_t)j;
			j++;
		}
		/* RFC 2181 §5.2: one TTL per RRset; like Knot, keep the first and warn. RRSIG
		   RRsets mix signatures of several types whose TTLs legitimately differ. */
		ttl = r[min].ttl;
		for (size_t k = i; k < j; k++)
			if (r[k].ttl != ttl && r[k].type != LDNS_RR_TYPE_RRSIG)
				p53_zb_rec_warn(b, &r[k], "TTL %u of '%s' %s differs from the RRset's "
						"TTL %u, using %u (RFC 2181 §5.2)", r[k].ttl,
						p53_name_to_str(txt, sizeof(txt), b->names +
								b->nodes[r[k].node].name_off),
						p53_type_to_str(tb, sizeof(tb), r[k].type), ttl, ttl);
		/* The earliest record always survives: duplicates sort by appearance. */
		first = out;
		for (size_t k = i; k < j; k++) {
			/* RFC 2181 §5: identical records are one record. */
			if (out > start && rdcmp(b, &r[out - 1], &r[k]) == 0)
				continue;
			if (k == min)
				first = out;
			r[out++] = r[k];
			bytes += P53_RR_OWNER_LEN + r[k].wlen;
		}
		if (push_rrset(s, r[start].node, r[start].type, (uint32_t)start,
			       (uint32_t)(out - start), ttl, (uint32_t)first, bytes) < 0)
			return -1;
		i = j;
	}
	s->n_kept = out;
	return 0;
}

/* Step 3b: per-node facts that come from its own RRsets. */
static int rrsets_check(struct build *s)
{
	struct p53_zb *b = &s->zb;
	char txt[1024];

	for (size_t i = 0; i < s->n_rrsets; i++) {
		const struct p53_image_rrset *rs = &s->rrsets[i];
		uint32_t node = b->recs[s->rs_rec[i]].node;
		struct p53_zb_node *nd = &b->nodes[node];
		/* The owner as text only for a message: per RRset it cost 3% of a big compile. */
#define owner p53_name_to_str(txt, sizeof(txt), b->names + nd->name_off)

		switch (rs->type) {
		case LDNS_RR_TYPE_SOA:
			if (rs->count > 1)
				return p53_zb_rec_err(b, &b->recs[second(s, (uint32_t)i)],
						      "more than one SOA record at the zone apex '%s'",
						      owner);
			break;
		case LDNS_RR_TYPE_CNAME:
			/* RFC 2181 §10.1: one CNAME per name. */
			if (rs->count > 1)
				return p53_zb_rec_err(b, &b->recs[second(s, (uint32_t)i)],
						      "more than one CNAME record at '%s' "
						      "(RFC 2181 §10.1)", owner);
			nd->flags |= P53_NODE_CNAME;
			break;
		case LDNS_RR_TYPE_DNAME:
			/* RFC 6672 §2.4: one DNAME per name. */
			if (rs->count > 1)
				return p53_zb_rec_err(b, &b->recs[second(s, (uint32_t)i)],
						      "more than one DNAME record at '%s' "
						      "(RFC 6672 §2.4)", owner);
			nd->flags |= P53_NODE_DNAME;
			/* A node's RRsets come by type, NS first. A cut's DNAME would be the
			 * child's data, occluded (RFC 4035 §2.2: at a cut the parent holds NS,
			 * DS and their proofs): a delegation's owner cannot redirect its subtree
			 * too. knotd refuses such a zone ("NS record exists beside DNAME"). The
			 * apex's NS is no cut. */
			if (nd->flags & P53_NODE_CUT)
				return p53_zb_rec_err(b, &b->recs[p53_rs_first(s, (uint32_t)i)],
						      "NS beside DNAME at '%s' (below the apex: the "
						      "delegation would occlude the DNAME)", owner);
			break;
		case LDNS_RR_TYPE_NS:
			if (!(nd->flags & P53_NODE_APEX))
				nd->flags |= P53_NODE_CUT;
			break;
		case LDNS_RR_TYPE_A:
		case LDNS_RR_TYPE_AAAA:
			b->nx[node].has_addr = 1;
			break;
		default:
			break;
		}
#undef owner
	}
	return 0;
}

/* RFC 1034 §3.6.2, RFC 2181 §10.1: a CNAME owner holds nothing else but DNSSEC's own
   RRSIG and NSEC (RFC 4035 §2.5). Reported at whichever of the two came later. */
static int cname_alone(struct build *s, uint32_t n)
{
	struct p53_zb *b = &s->zb;
	const struct p53_zb_node *nd = &b->nodes[n];
	uint32_t cn = P53_NONE;
	char txt[1024], tb[16];

	for (uint32_t i = nd->rrsets; i < nd->rrsets + nd->n_rrsets; i++)
		if (s->rrsets[i].type == LDNS_RR_TYPE_CNAME)
			cn = i;
	for (uint32_t i = nd->rrsets; i < nd->rrsets + nd->n_rrsets; i++) {
		uint16_t t = s->rrsets[i].type;
		const struct p53_zb_rec *x, *y;
		if (t == LDNS_RR_TYPE_CNAME || t == LDNS_RR_TYPE_RRSIG || t == LDNS_RR_TYPE_NSEC)
			continue;
		x = &b->recs[p53_rs_first(s, cn)];
		y = &b->recs[p53_rs_first(s, i)];
		return p53_zb_rec_err(b, x->seq > y->seq ? x : y,
				      "CNAME beside other data (%s) at '%s' "
				      "(RFC 1034 §3.6.2, RFC 2181 §10.1)",
				      p53_type_to_str(tb, sizeof(tb), t),
				      p53_name_to_str(txt, sizeof(txt), b->names + nd->name_off));
	}
	return 0;
}

/* Whether node n, a child of the apex (parent `p`), owns an NSEC3: a hash of a name, not a
 * name of the zone (RFC 5155 §7.1), so no data below a DNAME at the apex (RFC 6672 §2.4
 * speaks of the names below the owner) and occluded by nothing. Whether it is alone there
 * and one label below the apex is p53_dnssec_build()'s to say. */
static bool nsec3_owner(const struct build *s, uint32_t n, uint32_t p)
{
	const struct p53_zb_node *nd = &s->zb.nodes[n];

	if (s->zb.nx[p].parent != P53_NONE)
		return false;
	for (uint32_t i = nd->rrsets; i < nd->rrsets + nd->n_rrsets; i++)
		if (s->rrsets[i].type == 50 /* NSEC3 */)
			return true;
	return false;
}

/* Step 4: top-down over nodes; parents precede children (p53_zb_node_get). */
static int nodes_link(struct build *s)
{
	struct p53_zb *b = &s->zb;
	char txt[1024], txt2[1024];

	for (uint32_t n = 0; n < b->n_nodes; n++) {
		struct p53_zb_node *nd = &b->nodes[n];
		struct p53_zb_nodex *x = &b->nx[n];
		const uint8_t *name = b->names + nd->name_off;
		uint32_t p = x->parent;

		if (nd->n_rrsets == 0) {
			nd->flags |= P53_NODE_ENT;
			nd->rrsets = 0;
		}
		if ((nd->flags & P53_NODE_CNAME) && cname_alone(s, n) < 0)
			return -1;
		if (p == P53_NONE)
			continue; /* the apex */
		const struct p53_zb_node *pd = &b->nodes[p];
		/* A hash below a DNAME at the apex is not below it (nsec3_owner). */
		bool hashed = (pd->flags & P53_NODE_DNAME) && nsec3_owner(s, n, p);
		x->below_cut = b->nx[p].below_cut || (pd->flags & P53_NODE_CUT);
		x->below_dname = !hashed && (b->nx[p].below_dname || (pd->flags & P53_NODE_DNAME));
		nd->occluder = hashed ? P53_NONE :
			       (pd->flags & (P53_NODE_CUT | P53_NODE_DNAME)) ? p : pd->occluder;
		if (x->below_cut)
			nd->flags |= P53_NODE_GLUE;
		if (x->below_dname && nd->n_rrsets > 0) {
			uint32_t d = p;
			while (!(b->nodes[d].flags & P53_NODE_DNAME))
				d = b->nx[d].parent;
			/* RFC 6672 §2.4: a DNAME owner has no descendants. */
			return p53_zb_rec_err(b, &b->recs[x->first_rec],
					      "data at '%s' below the DNAME at '%s' (RFC 6672 §2.4)",
					      p53_name_to_str(txt, sizeof(txt), name),
					      p53_name_to_str(txt2, sizeof(txt2),
							      b->names + b->nodes[d].name_off));
		}
		if (name[0] == 1 && name[1] == '*') {
			nd->flags |= P53_NODE_WILD;
			b->nodes[p].wildcard = n;
		}
		x->shadowed = b->nx[p].shadowed || apex_zone(s, name, nd->name_len) != P53_NONE;
	}
	return 0;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Step 5a: SOA facts, and the parent zone's node of each apex. */
static int zones_finish(struct build *s)
{
	struct p53_zb *b = &s->zb;
	char where[4200], txt[1024];

	for (uint32_t z = 0; z < b->n_zones; z++) {
		struct p53_image_zone *zn = &b->zones[z];
		const struct p53_zb_node *apex = &b->nodes[zn->apex];
		const uint8_t *name = b->names + zn->name_off;
		size_t len = zn->name_len, rl;
		const uint8_t *rd;
		int m1, m2;

		for (uint32_t i = apex->rrsets; i < apex->rrsets + apex->n_rrsets; i++)
			if (s->rrsets[i].type == LDNS_RR_TYPE_SOA)
				zn->soa = i;
		if (zn->rcode != 0)
			goto parent; /* no data here, no SOA (image.h) */
		if (zn->soa == P53_NONE) {
			/* Point at the zone's first record, where RFC 1035 §5.2 wants the SOA. */
			const struct p53_zb_rec *first = NULL;
			for (size_t i = 0; i < s->n_kept; i++)
				if (b->nodes[b->recs[i].node].zone == z &&
				    (first == NULL || b->recs[i].seq < first->seq))
					first = &b->recs[i];
			p53_name_to_str(txt, sizeof(txt), name);
			if (first != NULL)
				return p53_zb_rec_err(b, first, "no SOA record at the zone apex '%s'", txt);
			snprintf(where, sizeof(where), "%s:1", b->src[z].file);
			return p53_zb_err(b, where, "no SOA record at the zone apex '%s'", txt);
		}
		rd = canon(b, &b->recs[s->rs_rec[zn->soa]], &rl);
		m1 = p53_name_len(rd, rl);
		m2 = m1 < 0 ? -1 : p53_name_len(rd + m1, rl - (size_t)m1);
		if (m2 < 0 || rl != (size_t)m1 + (size_t)m2 + 20)
			return p53_zb_rec_err(b, &b->recs[s->rs_rec[zn->soa]], "malformed SOA RDATA");
		rd += m1 + m2;
		zn->serial = get32(rd);
		/* RFC 2308 §5: negative answers live min(SOA TTL, SOA MINIMUM). */
		zn->neg_ttl = get32(rd + 16) < s->rrsets[zn->soa].ttl ? get32(rd + 16)
								     : s->rrsets[zn->soa].ttl;
parent:
		/* The closest enclosing served zone holds the parent side (DS, RFC 4035 §3.1.4.1). */
		while (len > 1) {
			uint32_t pz;
			len -= 1u + name[0];
			name += 1u + name[0];
			pz = apex_zone(s, name, len);
			if (pz != P53_NONE) {
				zn->parent_side =
					p53_zb_node_find(b, pz, b->names + zn->name_off, zn->name_len);
				break;
			}
		}
	}
	return 0;
}

/* The node the name index (slots_make) holds for this canonical name: the one in the deepest
 * served zone at or above the name (the others are shadowed, nodes_link), unless it is an
 * NSEC3 owner; or P53_NONE. Found through the node map, so adds_make can run, and the map be
 * freed, before the index is built. */
static uint32_t indexed_node(struct build *s, const uint8_t *name, size_t len)
{
	const uint8_t *p = name;
	size_t l = len;

	for (;;) {
		uint32_t z = apex_zone(s, p, l);
		if (z != P53_NONE) {
			uint32_t n = p53_zb_node_find(&s->zb, z, name, len);
			return n != P53_NONE && !(s->zb.nodes[n].flags & P53_NODE_NSEC3) ? n : P53_NONE;
		}
		if (l <= 1 || p[0] == 0)
			return P53_NONE;
		l -= 1u + p[0];
		p += 1u + p[0];
	}
}

/* Step 5b: the name index, each name once (image.h). */
static int slots_make(struct build *s)
{
	struct p53_zb *b = &s->zb;
	size_t count = 16;

	/* The load factor (image_build.h): 0.4 to 0.8, 0.2 to 0.4 for a small index. */
	count = p53_image_slot_count(count, b->n_nodes);
	if (count > (size_t)1 << 32)
		return p53_zb_err(b, IMAGE_WHERE, "too many names");
	s->slots = calloc(count, sizeof(*s->slots));
	if (s->slots == NULL)
		return p53_zb_err(b, IMAGE_WHERE, "out of memory");
	p53_bigmem_advise(s->slots, count * sizeof(*s->slots));
	s->hash_mask = (uint32_t)(count - 1);
	for (uint32_t n = 0; n < b->n_nodes; n++) {
		uint32_t h = b->nx[n].hash, i;
		if (b->nx[n].shadowed || (b->nodes[n].flags & P53_NODE_NSEC3))
			continue;
		for (i = h & s->hash_mask; s->slots[i] != 0; i = (i + 1) & s->hash_mask)
			;
		s->slots[i] = (uint64_t)h << 32 | (n + 1);
	}
	return 0;
}

/* Step 5c: nodes whose A/AAAA go with an NS, MX, SRV, SVCB or HTTPS RRset (RFC 1034 §4.3.2 step 3b and
   6, RFC 2782 "Target"): the same zone's node first (glue below a cut included), else the
   indexed node of another served zone. Out-of-bailiwick unserved targets get nothing.
   For a CUT's NS, the targets at or below the cut (in-domain name servers, RFC 9471 §2.1)
   go first and are counted as required: a referral carries all of their glue or sets TC. */
static int adds_make(struct build *s)
{
	struct p53_zb *b = &s->zb;

	for (size_t i = 0; i < s->n_rrsets; i++) {
		struct p53_image_rrset *rs = &s->rrsets[i];
		uint32_t z, skip, at = (uint32_t)s->n_adds, n = 0;

		if (rs->type == LDNS_RR_TYPE_NS)
			skip = 0;
		else if (rs->type == LDNS_RR_TYPE_MX)
			skip = 2;
		else if (rs->type == LDNS_RR_TYPE_SRV)
			skip = 6;
		else if (rs->type == 64 || rs->type == 65)
			skip = 2; /* SVCB/HTTPS SvcPriority, then TargetName (RFC 9460 §4.1: MAY add) */
		else
			continue;
		const struct p53_zb_node *owner = &b->nodes[b->recs[s->rs_rec[i]].node];
		int cut = rs->type == LDNS_RR_TYPE_NS && (owner->flags & P53_NODE_CUT);
		uint32_t req = 0;
		z = owner->zone;
		for (uint32_t k = s->rs_rec[i]; k < s->rs_rec[i] + rs->count; k++) {
			uint8_t t[P53_NAME_MAXLEN];
			size_t rl;
			const uint8_t *rd = canon(b, &b->recs[k], &rl);
			int tl = rl > skip ? p53_name_len(rd + skip, rl - skip) : -1;
			uint32_t tn, dup = 0;

			if (tl < 0)
				continue;
			p53_name_lower(t, rd + skip, (size_t)tl);
			tn = p53_zb_node_find(b, z, t, (size_t)tl);
			if (tn == P53_NONE || !b->nx[tn].has_addr) {
				tn = indexed_node(s, t, (size_t)tl);
				if (tn != P53_NONE && (b->nodes[tn].zone == z || !b->nx[tn].has_addr))
					tn = P53_NONE;
			}
			if (tn == P53_NONE)
				continue;
			for (uint32_t q = 0; q < n; q++)
				dup |= s->adds[at + 1 + q] == tn;
			if (dup)
				continue;
			if (p53_zb_grow((void **)&s->adds, &s->adds_cap, at + n + 2, sizeof(*s->adds)) < 0)
				return p53_zb_rec_err(b, &b->recs[k], "out of memory");
			if (cut && p53_name_at_or_below(t, (size_t)tl, b->names + owner->name_off, owner->name_len)) {
				/* In-domain: in front, after the ones before it (order kept). */
				memmove(&s->adds[at + 2 + req], &s->adds[at + 1 + req], (n - req) * sizeof(*s->adds));
				s->adds[at + 1 + req++] = tn;
				n++;
			} else {
				s->adds[at + 1 + n++] = tn;
			}
		}
		if (n > 0) {
			s->adds[at] = n | req << 16;
			rs->adds = at;
			s->n_adds = at + 1 + n;
		}
	}
	return 0;
}

static size_t align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

/* Copy a working array of n bytes into the image, giving its pages back as they are copied
 * (it is freed right after), so a move never holds the array twice: the compile's peak stays
 * its working set, not that plus its largest array. */
static void move_out(uint8_t *dst, void *src, size_t n)
{
	const size_t step = (size_t)2 << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	const uintptr_t base = (uintptr_t)src;
	uintptr_t released = (base + page - 1) & ~(uintptr_t)(page - 1);

	for (size_t done = 0; done < n;) {
		size_t c = n - done < step ? n - done : step;
		memcpy(dst + done, (const uint8_t *)src + done, c);
		done += c;
		uintptr_t hi = (base + done) & ~(uintptr_t)(page - 1);
		if (hi > released) {
			(void)madvise((void *)released, hi - released, MADV_DONTNEED);
			released = hi;
		}
	}
}

/* An index of zone z's range relative to the range's start `base` (P53_NONE kept). */
static uint32_t rel(uint32_t i, uint32_t base)
{
	return i == P53_NONE ? P53_NONE : i - base;
}

/* Working node i as the image's node (struct p53_image_node: its block holds its name), its
 * indices relative to its zone's ranges (zn). */
static struct p53_image_node node_out(const struct p53_zb_node *w, uint32_t i,
				      const struct p53_image_zone *zn)
{
	return (struct p53_image_node){
		.name_len = w->name_len, .labels = w->labels, .flags = w->flags, .zone = w->zone,
		.rrsets = w->n_rrsets > 0 ? w->rrsets - zn->rrset_base : 0,
		.n_rrsets = w->n_rrsets, .steer = w->steer,
		.wildcard = rel(w->wildcard, zn->node_base), .occluder = rel(w->occluder, zn->node_base),
		.self = i - zn->node_base,
	};
}

/* The node indices the DNSSEC tables and the additional lists hold, relative to their zone's
 * range (image.h): a proof's and a chain's or NSEC3 entry's to its node's zone, a list's to
 * the zone of its RRset's owner, one naming another zone's node modulo 2^32
 * (p53_image_znode()). */
static void indices_relative(struct build *s, const uint32_t *nsh)
{
	struct p53_zb *b = &s->zb;
	const struct p53_image_zone *zs = b->zones;

	for (size_t n = 0; s->proofs != NULL && n < b->n_nodes; n++) {
		struct p53_image_proof *p = &s->proofs[n];
		uint32_t base = zs[b->nodes[n].zone].node_base;
		p->match = rel(p->match, base);
		p->wild = rel(p->wild, base);
		p->encl = rel(p->encl, base);
		p->nc = rel(p->nc, base);
	}
	for (size_t i = 0; i < s->n_chain; i++)
		s->chain[i] -= zs[b->nodes[s->chain[i]].zone].node_base;
	for (size_t i = 0; i < s->n_nsec3; i++)
		s->nsec3[i].node -= zs[b->nodes[s->nsec3[i].node].zone].node_base;
	for (size_t i = 0; i < s->n_rrsets; i++) {
		const struct p53_image_rrset *rs = &s->rrsets[i];
		if (rs->adds == P53_NONE)
			continue;
		uint32_t lz = b->nodes[b->recs[s->rs_rec[i]].node].zone;
		for (uint32_t k = 1; k <= P53_ADDS_COUNT(s->adds[rs->adds]); k++) {
			uint32_t t = s->adds[rs->adds + k];
			/* Where the target and the list's zone lie in the image: after the
			 * rooms of the zones before each (layout()). */
			s->adds[rs->adds + k] = t + nsh[b->nodes[t].zone] - (zs[lz].node_base + nsh[lz]);
		}
	}
	/* parent_side is an index in the image (image.h). */
	for (size_t z = 0; z < b->n_zones; z++)
		if (b->zones[z].parent_side != P53_NONE)
			b->zones[z].parent_side += nsh[b->nodes[b->zones[z].parent_side].zone];
}

/* Each zone's room after its ranges (image.h, p53_image_zone.node_room) and where the
 * ranges then lie in the image: nsh[z], rsh[z] the room of the zones before zone z, which
 * the image's nodes[] (and proofs[]) and rrsets[] hold before zone z's range. The tables'
 * lengths in *n_nodes, *n_rrsets. */
static void rooms(struct p53_zb *b, uint32_t *nsh, uint32_t *rsh, size_t *n_nodes,
		  size_t *n_rrsets)
{
	uint32_t nr = 0, rr = 0;

	for (size_t z = 0; z < b->n_zones; z++) {
		struct p53_image_zone *zn = &b->zones[z];
		nsh[z] = nr;
		rsh[z] = rr;
		/* A zone without data here (rcode) is never patched: no room. */
		zn->node_room = zn->rcode == 0 ? p53_image_room(zn->n_nodes) : 0;
		zn->rrset_room = zn->rcode == 0 && zn->n_rrsets > 0 ? p53_image_room(zn->n_rrsets) : 0;
		nr += zn->node_room;
		rr += zn->rrset_room;
	}
	*n_nodes += nr;
	*n_rrsets += rr;
}

/* A working table of `esz`-byte entries (indexed as in the build) into the image's, each
 * zone's range after the rooms before it (sh) and its own room zeroed after it. */
static void spread(uint8_t *dst, const uint8_t *src, size_t esz, const struct p53_zb *b,
		   const uint32_t *sh, bool rrsets)
{
	for (size_t z = 0; z < b->n_zones; z++) {
		const struct p53_image_zone *zn = &b->zones[z];
		size_t base = rrsets ? zn->rrset_base : zn->node_base;
		size_t n = rrsets ? zn->n_rrsets : zn->n_nodes;
		size_t room = rrsets ? zn->rrset_room : zn->node_room;
		memcpy(dst + (base + sh[z]) * esz, src + base * esz, n * esz);
		memset(dst + (base + sh[z] + n) * esz, 0, room * esz);
	}
}

/* Give back the pages of a working array [base, base + done) not given back yet (*released
 * and up), in steps of 2 MiB: it is read in order and freed once read. */
static void release_read(uintptr_t base, size_t done, size_t page, uintptr_t *released)
{
	uintptr_t hi = (base + done) & ~(uintptr_t)(page - 1);

	if (hi >= *released + ((size_t)2 << 20)) {
		(void)madvise((void *)*released, hi - *released, MADV_DONTNEED);
		*released = hi;
	}
}

/* A section of the image: its offset and the bytes written there. */
struct span {
	size_t off, used;
};

/* Zero what lies between the sections (n of them, in the order of their offsets) and after
 * the last up to `size`. */
static void zero_gaps(uint8_t *img, const struct span *sec, size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		size_t end = sec[i].off + sec[i].used, next = i + 1 < n ? sec[i + 1].off : size;
		if (next > end)
			memset(img + end, 0, next - end);
	}
}

/*
 * Node-major (image.h, "Co-location"): a positive answer reads the node, its owner name, then
 * the header and records of its first RRset (the A RRset of a host: RRsets are sorted by
 * type), its hot bytes. When they would cross a cache line and at most P53_IMAGE_PACK_PAD
 * bytes are left before it, the block starts on the next line instead: the bytes skipped buy
 * one line fewer for that answer (docs/BENCHMARKS.md, "Big zone: the node's line"). Returns
 * how many bytes to skip before the block of a node (its name's length, its RRsets) at image
 * offset `at` (4-byte aligned; the image starts on a line).
 */
static size_t block_pad(const struct build *s, size_t name_len, uint32_t rrsets,
			uint16_t n_rrsets, size_t at)
{
	size_t hot = sizeof(struct p53_image_node) + name_len, room = 64 - at % 64;

	if (n_rrsets > 0 && rrsets < s->n_rrsets)
		hot = p53_image_rrset_at(at + hot) - at + sizeof(struct p53_image_rrset) +
		      s->rrsets[rrsets].rdata_len;
	return hot > room && hot <= 64 && room <= P53_IMAGE_PACK_PAD ? room : 0;
}

/*
 * Where the block of node `nd` lies (image.h, Co-location), from section offset `pos` (the
 * section starts at image offset `base`, 8-aligned): 4-byte aligned, after block_pad(), the
 * node there (*noff), its name after it, then the RRsets it places, each header 4-byte
 * aligned. roff[r] is P53_NONE until RRset r is placed (by the first node that lists it; none
 * is listed twice). layout() copies the nodes and names along the same walk. Returns the
 * block's end.
 */
static size_t block_place(const struct build *s, const struct p53_zb_node *nd, size_t base,
			  size_t pos, uint32_t *noff, uint32_t *roff)
{
	pos = p53_image_rrset_at(pos);
	pos += block_pad(s, nd->name_len, nd->rrsets, nd->n_rrsets, base + pos);
	*noff = (uint32_t)pos;
	pos += sizeof(struct p53_image_node) + nd->name_len;
	for (uint32_t r = nd->rrsets; r < (uint32_t)nd->rrsets + nd->n_rrsets; r++) {
		if (r >= s->n_rrsets || roff[r] != P53_NONE)
			continue;
		pos = p53_image_rrset_at(pos);
		roff[r] = (uint32_t)pos;
		pos += p53_image_rrset_span(&s->rrsets[r]);
	}
	return pos;
}

/* Each zone's ranges of nodes[] and rrsets[] (image.h, p53_image_zone.node_base), or false
 * when the nodes do not come zone by zone, each zone's apex first, and their RRsets in node
 * order (apex_make). */
static bool zone_ranges(struct build *s)
{
	struct p53_zb *b = &s->zb;
	uint32_t next_rrset = 0;

	for (size_t i = 0; i < b->n_nodes; i++) {
		const struct p53_zb_node *nd = &b->nodes[i];
		bool first = i == 0 || b->nodes[i - 1].zone != nd->zone;
		if ((i > 0 && b->nodes[i - 1].zone > nd->zone) || nd->zone >= b->n_zones ||
		    first != (b->zones[nd->zone].apex == i))
			return false;
		struct p53_image_zone *zn = &b->zones[nd->zone];
		if (first) {
			zn->node_base = (uint32_t)i;
			zn->rrset_base = next_rrset;
		}
		zn->n_nodes++;
		if (nd->n_rrsets == 0)
			continue;
		if (nd->rrsets != next_rrset)
			return false;
		next_rrset = nd->rrsets + nd->n_rrsets;
		zn->n_rrsets = next_rrset - zn->rrset_base;
	}
	return next_rrset == s->n_rrsets;
}

/* Step 6. */
static void *layout(struct build *s, size_t *len)
{
	struct p53_zb *b = &s->zb;
	struct p53_image_hdr h = {
		.magic = P53_IMAGE_MAGIC,
		.version = P53_IMAGE_VERSION,
		.n_zones = (uint32_t)b->n_zones,
		.n_nodes = (uint32_t)b->n_nodes,
		.n_rrsets = (uint32_t)s->n_rrsets,
		.hash_mask = s->hash_mask,
		.n_records = (uint32_t)(s->n_kept - s->n_ignored),
		/* The nodes' steering indices (extras_flag) count in this list of steered records;
		 * sources from different lists (never made) get none that match. */
		.steer_layout = b->n_zones > 0 ? b->src[0].steer_layout : 0,
	};
	for (size_t z = 1; z < b->n_zones; z++)
		if (b->src[z].steer_layout != h.steer_layout)
			h.steer_layout = 0;
	for (size_t i = 0; i < b->n_nodes; i++)
		if (b->nodes[i].labels > h.max_labels)
			h.max_labels = b->nodes[i].labels;
	if (!zone_ranges(s)) {
		p53_zb_err(b, IMAGE_WHERE, "internal error: the nodes are not zone by zone");
		return NULL;
	}
	size_t off = align8(sizeof(h)), size, pos;
	size_t n_tnodes = b->n_nodes, n_trrsets = s->n_rrsets; /* the tables, room included */
	uint8_t *img;
	/* Node-major (image.h, "Co-location"): each node's block, its owner name, then its
	 * RRsets' headers and records, in one names-and-RDATA section (names_off == rdata_off);
	 * rrsets[] their headers' offsets there. */
	uint32_t *roff = malloc(s->n_rrsets ? s->n_rrsets * sizeof(*roff) : 1);
	/* nodes[]: each node's offset in the section, where its block starts */
	uint32_t *noff = malloc(b->n_nodes ? b->n_nodes * sizeof(*noff) : 1);
	/* The room before each zone's ranges (rooms()) */
	uint32_t *nsh = malloc((b->n_zones + 1) * 2 * sizeof(*nsh));
	if (roff == NULL || noff == NULL || nsh == NULL) {
		free(roff);
		free(noff);
		free(nsh);
		p53_zb_err(b, IMAGE_WHERE, "out of memory");
		return NULL;
	}
	uint32_t *rsh = nsh + b->n_zones + 1;
	rooms(b, nsh, rsh, &n_tnodes, &n_trrsets);
	indices_relative(s, nsh);
	h.n_nodes = (uint32_t)n_tnodes;
	h.n_rrsets = (uint32_t)n_trrsets;
	int names_in_order = 1;         /* node i's name before node i + 1's in b->names */
	for (size_t i = 1; i < b->n_nodes; i++)
		if (b->nodes[i].name_off < b->nodes[i - 1].name_off)
			names_in_order = 0;

	h.zones_off = (uint32_t)off;
	off = align8(off + b->n_zones * sizeof(struct p53_image_zone));
	h.nodes_off = (uint32_t)off;
	off = align8(off + n_tnodes * sizeof(uint32_t));
	h.rrsets_off = (uint32_t)off;
	off = align8(off + n_trrsets * sizeof(uint32_t));
	h.slots_off = (uint32_t)off;
	off = align8(off + ((size_t)s->hash_mask + 1) * sizeof(uint64_t));
	h.names_off = (uint32_t)off;
	h.rdata_off = (uint32_t)off;
	/* The blocks: the placement, dry (the copy below walks the same way); an RRset no node
	 * lists (none should) goes after them all. */
	size_t sec_len = P53_IMAGE_RDATA_HEAD;
	for (size_t i = 0; i < s->n_rrsets; i++)
		roff[i] = P53_NONE;
	for (size_t i = 0; i < b->n_nodes; i++)
		sec_len = block_place(s, &b->nodes[i], off, sec_len, &noff[i], roff);
	for (size_t i = 0; i < s->n_rrsets; i++) {
		if (roff[i] != P53_NONE)
			continue;
		sec_len = p53_image_rrset_at(sec_len);
		roff[i] = (uint32_t)sec_len;
		sec_len += p53_image_rrset_span(&s->rrsets[i]);
	}
	off = align8(off + sec_len);
	h.adds_off = (uint32_t)off;
	off = align8(off + s->n_adds * sizeof(uint32_t));
	if (s->proofs != NULL) {
		h.proofs_off = (uint32_t)off;
		off = align8(off + n_tnodes * sizeof(struct p53_image_proof));
	}
	h.n_chain = (uint32_t)s->n_chain;
	h.chain_off = (uint32_t)off;
	off = align8(off + s->n_chain * sizeof(uint32_t));
	h.n_nsec3 = (uint32_t)s->n_nsec3;
	h.nsec3_off = (uint32_t)off;
	size = align8(off + s->n_nsec3 * sizeof(struct p53_image_nsec3));
	/* Offsets are 32-bit (image.h). */
	if (size > UINT32_MAX) {
		free(roff);
		free(noff);
		free(nsh);
		p53_zb_err(b, IMAGE_WHERE, "image of %zu bytes exceeds the 4 GiB format limit", size);
		return NULL;
	}
	/* A big image gets 1/64 of room past its end, as a fresh patched one does
	 * (image_patch.c): when an IXFR patch replaces it, it is kept as the spare the next
	 * patched image is written into (control/publish.c), and each patched image is a little
	 * bigger than this one. A big buffer is mapped, not touched: the room costs no RSS
	 * until a patch writes it. */
	size_t room = size >= P53_BIGMEM_MIN ? size / 64 : 0;
	/* The image becomes the first worker's replica as it is (control/publish.c): 64-byte
	 * aligned at least, as the heap copies are, so that no node crosses a cache line its
	 * offset keeps it in; a big one 2 MiB-aligned with transparent huge pages asked for
	 * before anything is written (fewer TLB misses per lookup). */
	img = p53_bigmem_image(size + room);
	if (img == NULL) {
		free(roff);
		free(noff);
		free(nsh);
		p53_zb_err(b, IMAGE_WHERE, "out of memory (image of %zu bytes)", size);
		return NULL;
	}
	/* Each section goes in and its working copy is freed at once: a fresh image only takes
	 * memory as it is written, so the compile's peak is its working set, not the working
	 * set plus the image (docs/BENCHMARKS.md, reload of a big zone). The buffer is not
	 * zeroed: every byte up to `size` is written, the padding after each section by
	 * zero_gaps() at the end. */
	h.size = size;
	memcpy(img, &h, sizeof(h));
	/* The name index made each slot (hash, node + 1) (slots_make): it holds the node's
	 * block offset (image.h). */
	for (size_t i = 0; i <= s->hash_mask; i++)
		if (s->slots[i] != 0)
			s->slots[i] = p53_image_slot((uint32_t)(s->slots[i] >> 32),
						     noff[(uint32_t)s->slots[i] - 1]);
	move_out(img + h.slots_off, s->slots, ((size_t)s->hash_mask + 1) * sizeof(uint64_t));
	free(s->slots);
	s->slots = NULL;
	if (s->n_adds > 0)
		memcpy(img + h.adds_off, s->adds, s->n_adds * sizeof(uint32_t));
	if (s->proofs != NULL)
		spread(img + h.proofs_off, (const uint8_t *)s->proofs, sizeof(struct p53_image_proof),
		       b, nsh, false);
	if (s->n_chain > 0)
		memcpy(img + h.chain_off, s->chain, s->n_chain * sizeof(uint32_t));
	if (s->n_nsec3 > 0)
		memcpy(img + h.nsec3_off, s->nsec3, s->n_nsec3 * sizeof(struct p53_image_nsec3));
	/* Only each record's place in the arena is read from here on: pack the records down to
	 * (off, wlen), 8 of their 32 bytes, in place (an element only overwrites earlier ones,
	 * already read; memcpy stores, so no aliasing assumption reorders them), and give the
	 * rest back before the records are written (the compile's peak: 24 MB at 1M records). */
	uint8_t *packed = (uint8_t *)b->recs;
	for (size_t k = 0; k < b->n_recs; k++) {
		const uint32_t ow[2] = { b->recs[k].off, b->recs[k].wlen };
		memcpy(packed + k * sizeof(ow), ow, sizeof(ow));
	}
	void *shrunk = realloc(packed, b->n_recs ? b->n_recs * 2 * sizeof(uint32_t) : 1);
	const uint32_t *span = shrunk != NULL ? shrunk : (void *)packed;
	b->recs = NULL;
	/* Node-major: every node and its name, where the dry walk put them (its RRsets' headers
	 * and records are written below, at roff). Here, after the records were packed, so the
	 * section's pages are not touched before that gave memory back (the compile's peak). */
	uint8_t *sec = img + h.rdata_off;
	/* The working nodes' pages go back as they are read, as move_out() does, and b->names'
	   when the nodes read them in order (they are made in that order: zone_load.c) */
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t released = ((uintptr_t)b->names + page - 1) & ~(uintptr_t)(page - 1);
	uintptr_t nreleased = ((uintptr_t)b->nodes + page - 1) & ~(uintptr_t)(page - 1);
	memset(sec, 0, P53_IMAGE_RDATA_HEAD);
	pos = P53_IMAGE_RDATA_HEAD;
	for (size_t i = 0; i < b->n_nodes; i++) {
		const struct p53_zb_node *w = &b->nodes[i];
		size_t at = noff[i];
		struct p53_image_node nd = node_out(w, (uint32_t)i, &b->zones[w->zone]);
		memset(sec + pos, 0, at - pos);
		memcpy(sec + at, &nd, sizeof(nd));
		at += sizeof(nd);
		memcpy(sec + at, b->names + w->name_off, w->name_len);
		if (names_in_order)
			release_read((uintptr_t)b->names, w->name_off, page, &released);
		release_read((uintptr_t)b->nodes, i * sizeof(*w), page, &nreleased);
		pos = at + nd.name_len;
		/* Its RRsets: those the dry walk placed here (at or past pos), in order, each
		 * after up to 3 zero bytes (a header is 4-byte aligned). */
		for (uint32_t r = w->rrsets; r < (uint32_t)w->rrsets + w->n_rrsets; r++)
			if (r < s->n_rrsets && roff[r] >= pos) {
				memset(sec + pos, 0, roff[r] - pos);
				pos = roff[r] + p53_image_rrset_span(&s->rrsets[r]);
			}
	}
	for (size_t i = 0; i < s->n_rrsets; i++)
		if (roff[i] >= pos) { /* after every block: listed by no node */
			memset(sec + pos, 0, roff[i] - pos);
			pos = roff[i] + p53_image_rrset_span(&s->rrsets[i]);
		}
	for (size_t z = 0; z < b->n_zones; z++)
		b->zones[z].name_off = noff[b->zones[z].apex] + (uint32_t)sizeof(struct p53_image_node);
	free(b->names);
	b->names = NULL;
	free(b->nodes);
	b->nodes = NULL;
	for (size_t i = 0; i < s->n_rrsets; i++) {
		struct p53_image_rrset *rs = &s->rrsets[i];
		/* Its header, then its records. */
		memcpy(sec + roff[i], rs, sizeof(*rs));
		pos = roff[i] + sizeof(*rs);
		for (uint32_t k = s->rs_rec[i]; k < s->rs_rec[i] + rs->count; k++) {
			uint32_t off = span[2 * k], wlen = span[2 * k + 1];
			/* The owner as a pointer to the question (image.h): C0 0C. */
			sec[pos] = 0xc0;
			sec[pos + 1] = 12;
			pos += P53_RR_OWNER_LEN;
			uint8_t *w = sec + pos;
			memcpy(w, b->arena + off, wlen);
			if (rs->type != LDNS_RR_TYPE_RRSIG) { /* one TTL per RRset */
				w[4] = (uint8_t)(rs->ttl >> 24);
				w[5] = (uint8_t)(rs->ttl >> 16);
				w[6] = (uint8_t)(rs->ttl >> 8);
				w[7] = (uint8_t)rs->ttl;
			}
			pos += wlen;
		}
		/* Its RRSIGs right after it, each with its own TTL (image.h). */
		for (uint32_t k = s->rs_sig[i]; k < s->rs_sig[i] + rs->sig_count; k++) {
			uint32_t off = span[2 * k], wlen = span[2 * k + 1];
			sec[pos] = 0xc0;
			sec[pos + 1] = 12;
			memcpy(sec + pos + P53_RR_OWNER_LEN, b->arena + off, wlen);
			pos += P53_RR_OWNER_LEN + wlen;
		}
	}
	free(b->arena);
	b->arena = NULL;
	free((void *)(uintptr_t)span);
	/* NSEC3 salts point into their zone's NSEC3PARAM RDATA: algorithm, flags, iterations,
	   salt length, salt (RFC 5155 §4.2). */
	for (size_t z = 0; z < b->n_zones; z++)
		if (s->n3param != NULL && s->n3param[z] != P53_NONE)
			b->zones[z].salt_off = roff[s->n3param[z]] + (uint32_t)sizeof(struct p53_image_rrset) +
					       P53_RR_OWNER_LEN + 10 + 5;
	spread(img + h.rrsets_off, (const uint8_t *)roff, sizeof(uint32_t), b, rsh, true);
	free(roff);
	spread(img + h.nodes_off, (const uint8_t *)noff, sizeof(uint32_t), b, nsh, false);
	free(noff);
	for (size_t z = 0; z < b->n_zones; z++) {
		b->zones[z].apex -= b->zones[z].node_base;
		b->zones[z].soa = rel(b->zones[z].soa, b->zones[z].rrset_base);
		b->zones[z].node_base += nsh[z];
		b->zones[z].rrset_base += rsh[z];
	}
	free(nsh);
	memcpy(img + h.zones_off, b->zones, b->n_zones * sizeof(struct p53_image_zone));
	/* Every section's bytes, in the order of their offsets (layout above): the padding
	 * after each, up to the next one (or the end), is zeroed, as a calloc'd image had it. */
	const struct span sect[] = {
		{ 0, sizeof(h) },
		{ h.zones_off, b->n_zones * sizeof(struct p53_image_zone) },
		{ h.nodes_off, n_tnodes * sizeof(uint32_t) },
		{ h.rrsets_off, n_trrsets * sizeof(uint32_t) },
		{ h.slots_off, ((size_t)s->hash_mask + 1) * sizeof(uint64_t) },
		{ h.names_off, 0 },
		{ h.rdata_off, sec_len },
		{ h.adds_off, s->n_adds * sizeof(uint32_t) },
		{ s->proofs != NULL ? h.proofs_off : h.chain_off,
		  s->proofs != NULL ? n_tnodes * sizeof(struct p53_image_proof) : 0 },
		{ h.chain_off, s->n_chain * sizeof(uint32_t) },
		{ h.nsec3_off, s->n_nsec3 * sizeof(struct p53_image_nsec3) },
	};
	zero_gaps(img, sect, sizeof(sect) / sizeof(sect[0]), size);
	p53_image_zones_place(img);
	*len = size;
	return img;
}

/* Steered records (p53_zone_extra): after the zone's files, so static data is known. */
static int extras_add(struct build *s, uint32_t z)
{
	struct p53_zb *b = &s->zb;
	const struct p53_zone_src *src = &b->src[z];
	char where[4200], txt[1024];

	for (size_t i = 0; i < src->n_extra; i++) {
		const struct p53_zone_extra *e = &src->extra[i];
		unsigned int alen = e->rdlen;
		bool cname = e->type == LDNS_RR_TYPE_CNAME;
		const char *tn = cname ? "CNAME" : e->type == LDNS_RR_TYPE_A ? "A" : "AAAA";
		snprintf(where, sizeof(where), "%s:%d", src->cfg_file != NULL ? src->cfg_file : "config",
			 e->line);
		uint32_t node = p53_zb_node_find(b, z, e->lname, e->lname_len);
		for (size_t k = 0; node != P53_NONE && k < b->n_recs; k++) {
			const struct p53_zb_rec *r = &b->recs[k];
			/* A steered CNAME owner has no other data at all (RFC 1034 §3.6.2); the
			 * other steered records of this owner were refused with the config. */
			if (r->node != node || (!cname && r->type != e->type && r->type != LDNS_RR_TYPE_CNAME))
				continue;
			char rb[16];
			snprintf(txt, sizeof(txt), "%s:%u", b->files[r->file], p53_zb_rec_line(b, r));
			return p53_zb_err(b, where, "steering: %s %s is steered, but the zone has %s data "
					  "for it at %s (static data for a steered owner and type is an error%s)",
					  e->owner, tn, p53_type_to_str(rb, sizeof(rb), r->type), txt,
					  cname ? "; a CNAME owner has no other data" : "");
		}
		if (b->cfg_file == 0) {
			int id = p53_zb_file_add(b, src->cfg_file != NULL ? src->cfg_file : "config");
			if (id < 0)
				return p53_zb_err(b, where, "out of memory");
			b->cfg_file = (size_t)id + 1;
		}
		node = p53_zb_node_get(b, z, e->lname, e->lname_len);
		for (int a = 0; a < e->n; a++) {
			size_t wlen = 10 + alen;
			if (node == P53_NONE ||
			    p53_zb_grow((void **)&b->arena, &b->arena_cap, b->arena_len + wlen, 1) < 0 ||
			    p53_zb_grow((void **)&b->recs, &b->recs_cap, b->n_recs + 1, sizeof(*b->recs)) < 0)
				return p53_zb_err(b, where, "out of memory");
			uint8_t *w = b->arena + b->arena_len;
			w[0] = (uint8_t)(e->type >> 8);
			w[1] = (uint8_t)e->type;
			w[2] = 0;
			w[3] = 1;
			w[4] = (uint8_t)(e->ttl >> 24);
			w[5] = (uint8_t)(e->ttl >> 16);
			w[6] = (uint8_t)(e->ttl >> 8);
			w[7] = (uint8_t)e->ttl;
			w[8] = 0;
			w[9] = (uint8_t)alen;
			memcpy(w + 10, e->addrs + (size_t)a * alen, alen);
			b->recs[b->n_recs] = (struct p53_zb_rec){
				.node = node, .seq = (uint32_t)b->n_recs, .off = (uint32_t)b->arena_len,
				.wlen = (uint32_t)wlen, .ttl = e->ttl, .type = e->type,
				.file = (uint16_t)(b->cfg_file - 1), .line = (uint32_t)e->line };
			b->n_recs++;
			b->arena_len += wlen;
		}
	}
	return 0;
}

/* Flag the RRsets of steered records, once they are made. */
static void extras_flag(struct build *s)
{
	struct p53_zb *b = &s->zb;

	for (uint32_t z = 0; z < b->n_zones; z++)
		for (size_t i = 0; i < b->src[z].n_extra; i++) {
			const struct p53_zone_extra *e = &b->src[z].extra[i];
			uint32_t n = p53_zb_node_find(b, z, e->lname, e->lname_len);
			if (n == P53_NONE)
				continue;
			struct p53_zb_node *nd = &b->nodes[n];
			for (uint32_t r = nd->rrsets; r < nd->rrsets + nd->n_rrsets; r++)
				if (s->rrsets[r].type == e->type)
					s->rrsets[r].flags |= P53_RRSET_STEERED;
			/* The owner's first record in the table: the workers follow its chain
			 * (dataplane/steer.h p53_steer_node), no name compared. */
			if (b->src[z].steer_layout != 0 && e->rec + 1 < UINT16_MAX &&
			    (nd->steer == 0 || e->rec + 1 < nd->steer))
				nd->steer = (uint16_t)(e->rec + 1);
		}
}

void *p53_image_build(const struct p53_zone_src *zones, size_t n, size_t *len,
		      char *err, size_t errlen, p53_warn_fn warn, void *warn_arg)
{
	return p53_image_build_files(zones, n, len, err, errlen, warn, warn_arg, NULL, NULL);
}

void *p53_image_build_files(const struct p53_zone_src *zones, size_t n, size_t *len,
			    char *err, size_t errlen, p53_warn_fn warn, void *warn_arg,
			    char ***files, size_t *n_files)
{
	struct build s = { .zb = { .src = zones, .n_zones = n, .err = err, .errlen = errlen,
				   .warn = warn, .warn_arg = warn_arg } };
	struct p53_zb *b = &s.zb;
	void *img = NULL;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	else
		b->errlen = 0;
	if (n >= UINT32_MAX) {
		p53_zb_err(b, "config", "too many zones");
		goto cleanup;
	}
	b->zones = calloc(n ? n : 1, sizeof(*b->zones));
	s.apexes = calloc(n ? n : 1, sizeof(*s.apexes));
	if (b->zones == NULL || s.apexes == NULL) {
		p53_zb_err(b, "config", "out of memory");
		goto cleanup;
	}
	if (zones_init(&s) < 0)
		goto cleanup;
	for (uint32_t z = 0; z < n; z++)
		if (apex_make(&s, z) < 0 || (zones[z].rcode == 0 && p53_zone_load(b, z) < 0) ||
		    extras_add(&s, z) < 0 ||
		    p53_dnssec_steer_denial(&s, z) < 0)
			goto cleanup;
	if (rrsets_make(&s) < 0)
		goto cleanup;
	extras_flag(&s);
	if ( p53_dnssec_attach(&s) < 0 || rrsets_check(&s) < 0 ||
	    nodes_link(&s) < 0 || zones_finish(&s) < 0 || p53_dnssec_build(&s) < 0)
		goto cleanup;
	/* Each working array goes as soon as nothing reads it any more, so the name index,
	 * the compile's last big allocation, does not add to its peak (docs/BENCHMARKS.md). */
	if (adds_make(&s) < 0)
		goto cleanup;
	free(b->map);
	b->map = NULL;
	if (slots_make(&s) < 0)
		goto cleanup;
	free(b->nx);
	b->nx = NULL;
	img = layout(&s, len);
	if (img != NULL && files != NULL) {
		/* Hand the list of files read over instead of freeing it (the config file that
		 * named steered records is not one of the zones' files). */
		if (b->cfg_file != 0) {
			free(b->files[b->cfg_file - 1]);
			memmove(&b->files[b->cfg_file - 1], &b->files[b->cfg_file],
				(b->n_files - b->cfg_file) * sizeof(*b->files));
			b->n_files--;
		}
		*files = b->files;
		*n_files = b->n_files;
		b->files = NULL;
		b->n_files = 0;
	}
cleanup:
	free(s.nsec3);
	free(s.chain);
	free(s.proofs);
	free(s.n3param);
	free(s.rs_sig);
	free(s.adds);
	free(s.slots);
	free(s.rs_rec);
	free(s.rrsets);
	free(s.apexes);
	for (size_t i = 0; i < b->n_files; i++)
		free(b->files[i]);
	free(b->files);
	free(b->arena);
	free(b->recs);
	free(b->map);
	free(b->names);
	free(b->nx);
	free(b->nodes);
	free(b->zones);
	return img;
}

void p53_image_files_free(char **files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
}
