/*
 * What the IXFR patch keeps about an image between IXFRs (patch_index.h): additional-section
 * targets backwards (a chained hash table of (target hash, node)) and per-zone counts of
 * RRSIGs by expiration (open addressing on the 32-bit field, with the earliest remembered).
 * Control thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "control/zone/patch_index.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

/* One (target, node) pair: `next` chains the pairs of a bucket (index + 1, 0 ends). */
struct tgt {
	uint32_t hash, node, next;
};

/* A zone's RRSIGs by expiration (the 32-bit field): exp[] and cnt[] by slot, linear probing
 * (a slot once used keeps its field, its count may fall to 0; the table is made again
 * without those when it fills). `min` is the earliest field counted, in serial-number order
 * (RFC 1982: every field of a zone lies within 68 years of the others), when min_ok; it is
 * looked for again (a pass over the distinct fields, not the records) only when its count
 * falls to 0. */
struct sigs {
	uint32_t *exp, *cnt;
	uint8_t *used;
	size_t used_n, mask;            /* slots used (counted or not), slot count - 1 */
	size_t n_sigs;                  /* RRSIGs counted */
	size_t last;                    /* the slot counted last: most RRSIGs of a zone share
					   their expiration with the one before */
	uint32_t min;
	bool min_ok, made;
};

struct p53_patch_index {
	uint64_t gen;                   /* the generation of the image described; 0: none */
	bool tgt_made;
	uint32_t *head;                 /* per bucket: first pair + 1, 0 for none */
	uint32_t mask;
	struct tgt *e;
	size_t n_e, cap_e;
	struct sigs *z;
	size_t n_z;
};

/* A case-folded hash of a name (ASCII letters fold; a few other bytes collide, which the
 * caller's exact check of the records takes care of). */
static uint32_t fold_hash(const uint8_t *p, size_t len)
{
	uint64_t h = (uint64_t)len * 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint64_t)(p[i] | 0x20)) * 0xff51afd7ed558ccdull;
	h ^= h >> 32;
	return (uint32_t)h;
}

struct p53_patch_index *p53_patch_index_new(void)
{
	return calloc(1, sizeof(struct p53_patch_index));
}

static void tgt_drop(struct p53_patch_index *ix)
{
	free(ix->head);
	free(ix->e);
	ix->head = NULL;
	ix->e = NULL;
	ix->n_e = ix->cap_e = 0;
	ix->mask = 0;
	ix->tgt_made = false;
}

static void sigs_drop(struct sigs *s)
{
	free(s->exp);
	free(s->cnt);
	free(s->used);
	memset(s, 0, sizeof(*s));
}

void p53_patch_index_reset(struct p53_patch_index *ix)
{
	tgt_drop(ix);
	for (size_t i = 0; i < ix->n_z; i++)
		sigs_drop(&ix->z[i]);
	free(ix->z);
	ix->z = NULL;
	ix->n_z = 0;
	ix->gen = 0;
}

void p53_patch_index_free(struct p53_patch_index *ix)
{
	if (ix == NULL)
		return;
	p53_patch_index_reset(ix);
	free(ix);
}

static void *dup_mem(const void *p, size_t n)
{
	void *q = malloc(n ? n : 1);

	if (q != NULL && n > 0)
		memcpy(q, p, n);
	return q;
}

struct p53_patch_index *p53_patch_index_clone(const struct p53_patch_index *ix)
{
	struct p53_patch_index *c = p53_patch_index_new();

	if (c == NULL)
		return NULL;
	c->gen = ix->gen;
	if (ix->tgt_made) {
		c->head = dup_mem(ix->head, ((size_t)ix->mask + 1) * sizeof(*ix->head));
		c->e = dup_mem(ix->e, ix->cap_e * sizeof(*ix->e));
		c->mask = ix->mask;
		c->n_e = ix->n_e;
		c->cap_e = ix->cap_e;
		c->tgt_made = true;
		if (c->head == NULL || c->e == NULL)
			goto fail;
	}
	if (ix->n_z > 0) {
		c->z = calloc(ix->n_z, sizeof(*c->z));
		if (c->z == NULL)
			goto fail;
		c->n_z = ix->n_z;
		for (size_t i = 0; i < ix->n_z; i++) {
			const struct sigs *s = &ix->z[i];
			if (!s->made)
				continue;
			struct sigs *d = &c->z[i];
			*d = *s;
			d->exp = d->cnt = NULL;
			d->used = NULL;
			if (s->used == NULL)
				continue;
			d->exp = dup_mem(s->exp, (s->mask + 1) * sizeof(uint32_t));
			d->cnt = dup_mem(s->cnt, (s->mask + 1) * sizeof(uint32_t));
			d->used = dup_mem(s->used, s->mask + 1);
			if (d->exp == NULL || d->cnt == NULL || d->used == NULL)
				goto fail;
		}
	}
	return c;
fail:
	p53_patch_index_free(c);
	return NULL;
}

bool p53_patch_index_of(struct p53_patch_index *ix, const void *img)
{
	uint64_t g = p53_image_hdr(img)->generation;

	if (ix->gen != 0 && ix->gen == g)
		return true;
	p53_patch_index_reset(ix);
	return false;
}

/* Tokens have the top bit set: a publish's generations (wall-clock microseconds) never do. */
void p53_patch_index_bind(struct p53_patch_index *ix, void *ni)
{
	static uint64_t seq;

	ix->gen = 1ull << 63 | ++seq;
	((struct p53_image_hdr *)ni)->generation = ix->gen;
}

void p53_patch_index_published(struct p53_patch_index *ix, uint64_t was, uint64_t gen)
{
	if (ix != NULL && ix->gen != 0 && ix->gen == was)
		ix->gen = gen;
}

bool p53_patch_index_has_targets(const struct p53_patch_index *ix)
{
	return ix->tgt_made;
}

static int tgt_grow(struct p53_patch_index *ix)
{
	size_t nb = ((size_t)ix->mask + 1) * 2;
	uint32_t *head = calloc(nb, sizeof(*head));

	if (head == NULL)
		return -1;
	for (size_t i = 0; i < ix->n_e; i++) {
		uint32_t b = ix->e[i].hash & (uint32_t)(nb - 1);
		ix->e[i].next = head[b];
		head[b] = (uint32_t)i + 1;
	}
	free(ix->head);
	ix->head = head;
	ix->mask = (uint32_t)(nb - 1);
	return 0;
}

/* Pair (hash, node), unless it is the last one put in its bucket (a node naming a target
 * twice). Only that one is looked at: thousands of MX records may name one mail host, and
 * walking its chain for each would make the index O(n^2) to build. A node touched again by
 * a later patch may so be listed twice, which the caller's sort takes away. */
static int tgt_put(struct p53_patch_index *ix, uint32_t hash, uint32_t node)
{
	uint32_t k = ix->head[hash & ix->mask];

	if (k != 0 && ix->e[k - 1].hash == hash && ix->e[k - 1].node == node)
		return 0;
	if (ix->n_e == ix->cap_e) {
		size_t c = ix->cap_e ? 2 * ix->cap_e : 1024;
		struct tgt *e = realloc(ix->e, c * sizeof(*e));
		if (e == NULL)
			return -1;
		ix->e = e;
		ix->cap_e = c;
	}
	if (ix->n_e >= (size_t)ix->mask + 1 && tgt_grow(ix) != 0)
		return -1;
	uint32_t b = hash & ix->mask;
	ix->e[ix->n_e] = (struct tgt){ hash, node, ix->head[b] };
	ix->head[b] = (uint32_t)++ix->n_e;
	return 0;
}

/* Node n's targets. */
static int tgt_node(struct p53_patch_index *ix, const void *img, uint32_t n)
{
	const struct p53_image_node *nd = p53_image_node(img, n);

	for (uint32_t r = nd->rrsets; r < (uint32_t)nd->rrsets + nd->n_rrsets; r++) {
		const struct p53_image_rrset *rs = p53_image_nrrset(img, nd, r);
		int skip = p53_target_skip(rs->type);
		if (skip < 0)
			continue;
		const uint8_t *rd = p53_image_rdata(img, rs);
		for (uint32_t k = 0; k < rs->count; k++) {
			const uint8_t *t;
			size_t tl;
			rd = p53_target_rr(rd, skip, &t, &tl);
			if (tl > 0 && tgt_put(ix, fold_hash(t, tl), n) != 0)
				return -1;
		}
	}
	return 0;
}

int p53_patch_index_targets_build(struct p53_patch_index *ix, const void *img)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);

	tgt_drop(ix);
	ix->head = calloc(1024, sizeof(*ix->head));
	if (ix->head == NULL)
		return -1;
	ix->mask = 1023;
	/* Each zone's range of nodes[] (image.h): the entries outside every range are garbage. */
	for (uint32_t z = 0; z < h->n_zones; z++) {
		const struct p53_image_zone *zn = p53_image_zone(img, z);
		for (uint32_t n = zn->node_base; n < zn->node_base + zn->n_nodes; n++) {
			if (tgt_node(ix, img, n) != 0) {
				tgt_drop(ix);
				return -1;
			}
		}
	}
	ix->tgt_made = true;
	return 0;
}

int p53_patch_index_targets_add(struct p53_patch_index *ix, const void *img, uint32_t n)
{
	if (!ix->tgt_made)
		return 0;
	if (tgt_node(ix, img, n) != 0) {
		tgt_drop(ix);
		return -1;
	}
	return 0;
}

int p53_patch_index_targets_find(const struct p53_patch_index *ix, const uint8_t *name,
				 size_t len, uint32_t **out, size_t *n, size_t *cap)
{
	uint32_t hash = fold_hash(name, len);

	for (uint32_t k = ix->head[hash & ix->mask]; k != 0; k = ix->e[k - 1].next) {
		if (ix->e[k - 1].hash != hash)
			continue;
		if (*n == *cap) {
			size_t c = *cap ? 2 * *cap : 16;
			uint32_t *o = realloc(*out, c * sizeof(*o));
			if (o == NULL)
				return -1;
			*out = o;
			*cap = c;
		}
		(*out)[(*n)++] = ix->e[k - 1].node;
	}
	return 0;
}

/* ---- RRSIGs by expiration ---- */

static struct sigs *zsigs(struct p53_patch_index *ix, uint32_t z, bool make)
{
	if (z < ix->n_z)
		return &ix->z[z];
	if (!make)
		return NULL;
	struct sigs *s = realloc(ix->z, ((size_t)z + 1) * sizeof(*s));
	if (s == NULL)
		return NULL;
	memset(s + ix->n_z, 0, ((size_t)z + 1 - ix->n_z) * sizeof(*s));
	ix->z = s;
	ix->n_z = (size_t)z + 1;
	return &ix->z[z];
}

bool p53_patch_index_has_sigs(const struct p53_patch_index *ix, uint32_t z)
{
	return z < ix->n_z && ix->z[z].made;
}

static size_t slot_of(uint32_t e, size_t mask)
{
	return (size_t)((e * 0x9e3779b1u) ^ (e >> 16)) & mask;
}

/* The slot table made again with room for twice the fields counted (and those of count 0
 * left out). */
static int sigs_rehash(struct sigs *s)
{
	size_t live = 0;

	for (size_t i = 0; s->used != NULL && i <= s->mask; i++)
		live += s->used[i] && s->cnt[i] > 0;
	size_t cap = 64;
	while (cap < 4 * (live + 1))
		cap *= 2;
	uint32_t *exp = malloc(cap * sizeof(*exp)), *cnt = malloc(cap * sizeof(*cnt));
	uint8_t *used = calloc(cap, 1);
	if (exp == NULL || cnt == NULL || used == NULL) {
		free(exp);
		free(cnt);
		free(used);
		return -1;
	}
	for (size_t i = 0; s->used != NULL && i <= s->mask; i++) {
		if (!s->used[i] || s->cnt[i] == 0)
			continue;
		size_t k = slot_of(s->exp[i], cap - 1);
		while (used[k])
			k = (k + 1) & (cap - 1);
		used[k] = 1;
		exp[k] = s->exp[i];
		cnt[k] = s->cnt[i];
	}
	free(s->exp);
	free(s->cnt);
	free(s->used);
	s->exp = exp;
	s->cnt = cnt;
	s->used = used;
	s->mask = cap - 1;
	s->last = 0;
	s->used_n = live;
	return 0;
}

/* Whether field a expires before field b (serial-number order). */
static bool before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* Count one RRSIG at expiration e (add), or uncount it. -1: uncounting what is not there,
 * or out of memory. */
static int sigs_count(struct sigs *s, uint32_t e, bool add)
{
	if (add && s->used != NULL && s->used[s->last] && s->exp[s->last] == e && s->cnt[s->last] > 0) {
		s->cnt[s->last]++; /* min stays: e is counted already */
		s->n_sigs++;
		return 0;
	}
	if (s->used == NULL || (add && 2 * (s->used_n + 1) > s->mask + 1)) {
		if (sigs_rehash(s) != 0)
			return -1;
	}
	size_t k = slot_of(e, s->mask);
	while (s->used[k] && s->exp[k] != e)
		k = (k + 1) & s->mask;
	if (!add) {
		if (!s->used[k] || s->cnt[k] == 0)
			return -1;
		s->n_sigs--;
		if (--s->cnt[k] == 0 && s->min_ok && s->min == e)
			s->min_ok = false; /* looked for again when asked */
		return 0;
	}
	if (!s->used[k]) {
		s->used[k] = 1;
		s->exp[k] = e;
		s->cnt[k] = 0;
		s->used_n++;
	}
	s->last = k;
	s->cnt[k]++;
	s->n_sigs++;
	if (s->n_sigs == 1 || (s->min_ok && before(e, s->min))) {
		s->min = e;
		s->min_ok = true;
	}
	return 0;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The RRSIGs pre-encoded after node n's RRsets, counted d. */
static int sigs_of(struct sigs *s, const void *img, uint32_t n, int d)
{
	const struct p53_image_node *nd = p53_image_node(img, n);

	for (uint32_t r = nd->rrsets; r < (uint32_t)nd->rrsets + nd->n_rrsets; r++) {
		const struct p53_image_rrset *rs = p53_image_nrrset(img, nd, r);
		const uint8_t *q = p53_image_rdata(img, rs) + rs->rdata_len;
		for (uint32_t k = 0; k < rs->sig_count; k++) {
			/* owner pointer, TYPE CLASS TTL RDLENGTH, then covered(2) alg labels
			 * ttl(4), the expiration */
			if (sigs_count(s, be32(q + P53_RR_OWNER_LEN + 10 + 8), d > 0) != 0)
				return -1;
			q += P53_RR_OWNER_LEN + 10u + p53_get16(q + P53_RR_OWNER_LEN + 8);
		}
	}
	return 0;
}

int p53_patch_index_sigs_build(struct p53_patch_index *ix, const void *img, uint32_t z)
{
	const struct p53_image_zone *zn = p53_image_zone(img, z);
	struct sigs *s = zsigs(ix, z, true);

	if (s == NULL)
		return -1;
	sigs_drop(s);
	/* The zone's range of nodes[] (image.h). */
	for (uint32_t n = zn->node_base; n < zn->node_base + zn->n_nodes; n++) {
		if (sigs_of(s, img, n, 1) != 0) {
			sigs_drop(s);
			return -1;
		}
	}
	s->made = true;
	return 0;
}

void p53_patch_index_sigs_drop(struct p53_patch_index *ix, uint32_t z)
{
	if (z < ix->n_z)
		sigs_drop(&ix->z[z]);
}

int p53_patch_index_sigs_node(struct p53_patch_index *ix, const void *img, uint32_t n,
			      uint32_t z, bool add)
{
	struct sigs *s = zsigs(ix, z, false);

	if (s == NULL || !s->made || p53_image_node(img, n)->zone != z)
		return 0;
	if (sigs_of(s, img, n, add ? 1 : -1) != 0) {
		sigs_drop(s);
		return -1;
	}
	return 0;
}

uint64_t p53_patch_index_sigs_min(struct p53_patch_index *ix, uint32_t z, time_t now)
{
	if (!p53_patch_index_has_sigs(ix, z) || ix->z[z].n_sigs == 0)
		return 0;
	struct sigs *s = &ix->z[z];
	if (!s->min_ok) {
		/* Its earliest went: the distinct fields read again. */
		bool any = false;
		for (size_t i = 0; i <= s->mask; i++) {
			if (!s->used[i] || s->cnt[i] == 0)
				continue;
			if (!any || before(s->exp[i], s->min))
				s->min = s->exp[i];
			any = true;
		}
		s->min_ok = true;
	}
	/* Resolved around now as the compiler resolves each (RFC 4034 §3.1.5). */
	int64_t t = (int64_t)now + (int32_t)(s->min - (uint32_t)now);
	return t > 0 ? (uint64_t)t : 1;
}

int p53_patch_index_spliced(struct p53_patch_index *ix, const void *img, void *ni, uint32_t z)
{
	/* J's nodes: the zone's range in ni, after img's tables (its room free: not nodes). */
	const uint32_t first = p53_image_zone(ni, z)->node_base,
		       end = first + p53_image_zone(ni, z)->n_nodes;

	if (!p53_patch_index_of(ix, img))
		return -1;
	p53_patch_index_sigs_drop(ix, z);
	struct sigs *s = NULL;
	if (p53_image_zone(ni, z)->dnssec != 0 && (s = zsigs(ix, z, true)) == NULL) {
		p53_patch_index_reset(ix);
		return -1;
	}
	for (uint32_t n = first; n < end; n++) {
		if ((ix->tgt_made && tgt_node(ix, ni, n) != 0) ||
		    (s != NULL && sigs_of(s, ni, n, 1) != 0)) {
			p53_patch_index_reset(ix);
			return -1;
		}
	}
	if (s != NULL)
		s->made = true;
	p53_patch_index_bind(ix, ni);
	return 0;
}

int p53_patch_index_build(struct p53_patch_index *ix, const void *img)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);

	p53_patch_index_reset(ix);
	if (h->generation == 0 || p53_patch_index_targets_build(ix, img) != 0)
		return -1;
	for (uint32_t z = 0; z < h->n_zones; z++)
		if (p53_image_zone(img, z)->dnssec != 0 && p53_patch_index_sigs_build(ix, img, z) != 0)
			return -1;
	ix->gen = h->generation;
	return 0;
}
