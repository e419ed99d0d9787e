/* DNSSEC record selection; see dnssec.h. No allocation, lock or syscall. */
#include <errno.h>
#include <string.h>

/* SHA1_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but EVP fetches the
 * algorithm under a lock and allocates its context: not on a worker. The low-level functions
 * run the same (SHA-NI/AVX2) code with the context on our stack. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include "dataplane/dnssec.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

#define SHA1_LEN P53_NSEC3_HASH_LEN

/* SHA-1 of data || salt. Most NSEC3 inputs (a name under ~40 octets plus a short or no salt,
   and every iteration's 20-octet digest plus the salt) fit in one 64-octet block: then we pad
   it ourselves (FIPS 180-4 §5.1.1) and run the block function once, skipping the streaming
   bookkeeping of SHA1_Update/SHA1_Final. */
static void sha1(const uint8_t *data, size_t len, const uint8_t *salt, uint8_t salt_len,
		 uint8_t out[SHA1_LEN])
{
	SHA_CTX sc;
	size_t n = len + salt_len;

	SHA1_Init(&sc);
	if (n <= 55) {
		uint8_t blk[64];
		/* Fixed sizes (inline stores), the length and the digest words byte-swapped
		   whole: big-endian, as FIPS 180-4 wants. */
		uint64_t bits = __builtin_bswap64((uint64_t)n * 8);
		memset(blk, 0, sizeof(blk));
		memcpy(blk, data, len);
		if (salt_len != 0)
			memcpy(blk + len, salt, salt_len);
		blk[n] = 0x80;
		memcpy(blk + 56, &bits, 8);
		SHA1_Transform(&sc, blk);
		const uint32_t h[5] = {__builtin_bswap32(sc.h0), __builtin_bswap32(sc.h1),
				       __builtin_bswap32(sc.h2), __builtin_bswap32(sc.h3),
				       __builtin_bswap32(sc.h4)};
		memcpy(out, h, SHA1_LEN);
		return;
	}
	SHA1_Update(&sc, data, len);
	SHA1_Update(&sc, salt, salt_len);
	SHA1_Final(out, &sc);
}

void p53_nsec3_hash(const uint8_t *name, size_t len, const uint8_t *salt, uint8_t salt_len,
		    uint16_t iter, uint8_t out[SHA1_LEN])
{
	sha1(name, len, salt, salt_len, out);
	for (uint16_t i = 0; i < iter; i++) {
		uint8_t prev[SHA1_LEN];
		memcpy(prev, out, SHA1_LEN);
		sha1(prev, SHA1_LEN, salt, salt_len, out);
	}
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

uint32_t p53_nsec3_find(const void *img, const struct p53_image_zone *z,
			const uint8_t hash[SHA1_LEN], int *exact)
{
	const struct p53_image_nsec3 *t = p53_image_nsec3(img) + z->proof_lo;
	uint32_t lo = 0, hi = z->proof_n;

	*exact = 0;
	if (z->proof_n == 0)
		return P53_NONE;
	/* First entry whose hash is above ours: the one before it matches or covers. The
	   leading 8 octets, big-endian, settle almost every comparison without memcmp. */
	uint64_t key = be64(hash);
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t k = be64(t[mid].hash);
		if (k < key || (k == key && memcmp(t[mid].hash, hash, SHA1_LEN) <= 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return t[z->proof_n - 1].node; /* below the first hash: the last NSEC3 wraps */
	*exact = memcmp(t[lo - 1].hash, hash, SHA1_LEN) == 0;
	return t[lo - 1].node;
}

/* RFC 4034 §6.1: labels compare as lower-cased octet strings, a prefix first. */
static int label_cmp(const uint8_t *a, const uint8_t *b)
{
	uint8_t la = a[0], lb = b[0];
	int d = memcmp(a + 1, b + 1, la < lb ? la : lb);

	if (d != 0)
		return d;
	return (la > lb) - (la < lb);
}

uint32_t p53_nsec_cover(const void *img, const struct p53_image_zone *z, uint32_t ce,
			const uint8_t *label)
{
	const struct p53_image_proof *p = p53_image_proof(img, z->node_base + ce);
	const uint32_t *chain = p53_image_chain(img);
	uint8_t depth = (uint8_t)(p53_image_znode(img, z, ce)->labels + 1);
	uint32_t lo = p->lo, hi = p->hi;

	/* The owners below ce are in canonical order, so sorted by their label at ce's depth
	   + 1: the last one whose label there is smaller precedes the name. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct p53_image_node *n = p53_image_znode(img, z, chain[mid]);
		const uint8_t *l = p53_image_node_name(img, n);
		for (int skip = n->labels - depth; skip > 0 && *l != 0; skip--)
			l += 1 + *l;
		if (label_cmp(l, label) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > p->lo ? chain[lo - 1] : p->match;
}

static inline __attribute__((always_inline)) void add(struct p53_denial *d, uint32_t node)
{
	if (node == P53_NONE || d->n == P53_DENIAL_MAX)
		return;
	for (uint8_t i = 0; i < d->n; i++)
		if (d->node[i] == node)
			return;
	d->node[d->n++] = node;
}

/*
 * The next closer cache (dnssec.h): per thread, so a worker's is its own (no sharing, no
 * lock). NC_SETS sets of NC_WAYS entries of 128 octets, the least recently used replaced; the
 * set is picked by the name's p53_name_hash. An entry holds the hash of one (name, salt,
 * iterations): its key is those very bytes, compared in full, so it is right for any image,
 * before or after any reload. Next to it, the NSEC3 that hash falls on in one image, with
 * that image's generation (unique per publish, control/publish.c) and zone, used only while
 * both are the same; generation 0 (an image never published) keeps no node.
 */
#define NC_SETS ((uint32_t)P53_NSEC3_CACHE_SETS)
#define NC_WAYS 2u                      /* lru[] is a bit: two */
#define NC_KEY_MAX 80u                  /* name || salt octets an entry holds */

struct nc_entry {
	uint64_t head;                  /* name hash | iter << 32 | name len << 48 | salt len
					   << 56; 0: empty (a next closer name is never the root) */
	uint64_t gen;                   /* image generation `node` is of; 0: none */
	const struct p53_image_zone *zone; /* ... and zone */
	uint32_t node;
	uint8_t hash[SHA1_LEN];
	uint8_t key[NC_KEY_MAX];        /* the name, then the salt */
};

struct nc_cache {
	struct nc_entry set[NC_SETS][NC_WAYS];
	uint8_t lru[NC_SETS];           /* the way a miss replaces: the one used least recently */
	struct p53_nsec3_cache_stats st;
	uint8_t off;                    /* p53_nsec3_cache_enable(0) */
};

_Static_assert(sizeof(struct nc_entry) == 128, "two cache lines per entry");

static __thread struct nc_cache nc __attribute__((tls_model("initial-exec")));

void p53_nsec3_cache_enable(int on)
{
	memset(nc.set, 0, sizeof(nc.set));
	memset(nc.lru, 0, sizeof(nc.lru));
	nc.off = !on;
}

void p53_nsec3_cache_stats(struct p53_nsec3_cache_stats *st)
{
	*st = nc.st;
}

const struct p53_nsec3_cache_stats *p53_nsec3_cache_counters(void)
{
	return &nc.st;
}

/* `len` octets at a and b equal; len <= NC_KEY_MAX. Words, the last one overlapping, so
   neither side is read past its end; no call on the hit path. */
static inline int key_eq(const uint8_t *a, const uint8_t *b, size_t len)
{
	uint64_t x, y, d = 0;

	if (len < 8)
		return memcmp(a, b, len) == 0;
	for (size_t i = 0; i + 8 < len; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		d |= x ^ y;
	}
	memcpy(&x, a + len - 8, 8);
	memcpy(&y, b + len - 8, 8);
	return (d | (x ^ y)) == 0;
}

/* key_eq()'s copy: a[0..len) = b[0..len), len <= NC_KEY_MAX, in words without a call. */
static inline void key_put(uint8_t *a, const uint8_t *b, size_t len)
{
	if (len < 8) {
		memcpy(a, b, len);
		return;
	}
	for (size_t i = 0; i + 8 < len; i += 8)
		memcpy(a + i, b + i, 8);
	memcpy(a + len - 8, b + len - 8, 8);
}

/* A hit whose NSEC3 is of another image or zone: find it in this one. */
static __attribute__((noinline)) uint32_t nc_refind(struct nc_entry *e, const void *img,
						    const struct p53_image_zone *z)
{
	int exact;

	e->node = p53_nsec3_find(img, z, e->hash, &exact);
	e->gen = p53_image_hdr(img)->generation;
	e->zone = z;
	return e->node;
}

/* A miss: hash, find, and keep both in the least recently used way of set `si`. */
static __attribute__((noinline)) uint32_t nc_miss(const void *img, const struct p53_image_zone *z,
						  const uint8_t *name, size_t len, const uint8_t *salt,
						  uint64_t head, uint32_t si)
{
	uint8_t h[SHA1_LEN];
	int exact;

	p53_nsec3_hash(name, len, salt, z->salt_len, z->nsec3_iter, h);
	uint32_t node = p53_nsec3_find(img, z, h, &exact);
	if (nc.off || len + z->salt_len > NC_KEY_MAX) {
		nc.st.uncached++;
		return node;
	}
	nc.st.misses++;
	struct nc_entry *e = &nc.set[si][nc.lru[si]];
	nc.lru[si] ^= 1;
	e->head = head;
	e->gen = p53_image_hdr(img)->generation;
	e->zone = z;
	e->node = node;
	memcpy(e->hash, h, SHA1_LEN);
	key_put(e->key, name, len);
	if (z->salt_len != 0)
		memcpy(e->key + len, salt, z->salt_len);
	return node;
}

/* The NSEC3 of `z` covering (or matching) the hash of `name`, whose p53_name_hash is `nh`. */
static inline uint32_t nsec3_of(const void *img, const struct p53_image_zone *z,
				const uint8_t *name, size_t len, uint32_t nh)
{
	const struct p53_image_hdr *hdr = p53_image_hdr(img);
	const uint8_t *salt = (const uint8_t *)img + hdr->rdata_off + z->salt_off;
	uint8_t slen = z->salt_len;
	uint64_t head = nh | (uint64_t)z->nsec3_iter << 32 | (uint64_t)len << 48 | (uint64_t)slen << 56;
	uint32_t si = nh & (NC_SETS - 1);
	struct nc_entry *s = nc.set[si];

	for (unsigned int w = 0; w < NC_WAYS; w++) {
		struct nc_entry *e = &s[w];
		if (e->head != head || !key_eq(e->key, name, len) ||
		    (slen != 0 && memcmp(e->key + len, salt, slen) != 0))
			continue;
		nc.st.hits++;
		nc.lru[si] = (uint8_t)(w ^ 1);
		if (__builtin_expect(e->gen != hdr->generation || e->zone != z || e->gen == 0, 0))
			return nc_refind(e, img, z);
		return e->node;
	}
	return nc_miss(img, z, name, len, salt, head, si);
}

/* The NSEC3 covering the next closer name of `nm` below an encloser of `elabels` labels. */
static uint32_t next_closer3(const void *img, const struct p53_image_zone *z,
			     const struct p53_dname *nm, uint8_t elabels)
{
	if (nm->labels <= elabels)
		return P53_NONE;
	uint8_t off = nm->loff[nm->labels - elabels - 1];
	const uint8_t *name = nm->name + off;
	size_t len = (size_t)nm->len - off;
	/* The common case, <label>.<encloser>: the next closer name is the query name, whose
	   hash the parser computed. */
	uint32_t nh = off == 0 && nm->hash != 0 ? nm->hash : p53_name_hash(name, len);
	return nsec3_of(img, z, name, len, nh);
}

/* RFC 5155 §7.2.1: the NSEC3 of the closest provable encloser, and the one covering the next
   closer name (precomputed when the encloser is an ancestor of ce: opt-out). */
static inline __attribute__((always_inline)) void
encloser_proof(const void *img, const struct p53_image_zone *z, uint32_t ce,
	       const struct p53_dname *nm, struct p53_denial *d)
{
	const struct p53_image_proof *p = p53_image_proof(img, z->node_base + ce);

	add(d, p->encl);
	add(d, p->match != P53_NONE ? next_closer3(img, z, nm, p->encl_labels) : p->nc);
}

/* The NSEC covering `nm`, whose closest encloser is ce. */
static uint32_t cover(const void *img, const struct p53_image_zone *z, uint32_t ce,
		      const struct p53_dname *nm)
{
	uint8_t depth = (uint8_t)(p53_image_znode(img, z, ce)->labels + 1);

	if (nm->labels < depth)
		return P53_NONE;
	return p53_nsec_cover(img, z, ce, nm->name + nm->loff[nm->labels - depth]);
}

void p53_dnssec_nxdomain(const void *img, uint32_t zone, uint32_t ce, const struct p53_dname *nm,
			 struct p53_denial *d)
{
	const struct p53_image_zone *z = p53_image_zone(img, zone);

	if (z->dnssec & P53_ZONE_NSEC3) {
		encloser_proof(img, z, ce, nm, d);
		add(d, p53_image_proof(img, z->node_base + ce)->wild);
	} else if (z->dnssec & P53_ZONE_NSEC) {
		add(d, cover(img, z, ce, nm));
		add(d, p53_image_proof(img, z->node_base + ce)->wild);
	}
}

void p53_dnssec_nodata(const void *img, uint32_t zone, uint32_t n, uint32_t ce,
		       const struct p53_dname *nm, struct p53_denial *d)
{
	const struct p53_image_zone *z = p53_image_zone(img, zone);
	const struct p53_image_proof *p = p53_image_proof(img, z->node_base + n);

	if (z->dnssec & P53_ZONE_NSEC3) {
		add(d, p->match);
		if (ce != P53_NONE)
			encloser_proof(img, z, ce, nm, d); /* §7.2.5: wildcard NODATA */
		else if (p->match == P53_NONE)
			encloser_proof(img, z, n, nm, d);  /* §7.2.4, §7.2.7: opt-out */
	} else if (z->dnssec & P53_ZONE_NSEC) {
		add(d, p->match);
		/* An empty non-terminal owns no NSEC: prove it as a name error is proven
		   (RFC 4035 §3.1.3.2), its NSEC covering it and the one covering its wildcard. */
		if (p53_image_znode(img, z, n)->flags & P53_NODE_ENT)
			add(d, p->wild);
	}
}

uint32_t p53_dnssec_wildcard(const void *img, uint32_t zone, uint32_t ce, const struct p53_dname *nm)
{
	const struct p53_image_zone *z = p53_image_zone(img, zone);
	const struct p53_image_proof *p = p53_image_proof(img, z->node_base + ce);

	if (z->dnssec & P53_ZONE_NSEC3)
		return p->match != P53_NONE ? next_closer3(img, z, nm, p->encl_labels) : p->nc;
	if (z->dnssec & P53_ZONE_NSEC)
		return cover(img, z, ce, nm);
	return P53_NONE;
}

static int in_bounds(uint64_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

/* A node index relative to a zone of n_nodes nodes, or P53_NONE. */
static int node_ok(uint32_t n_nodes, uint32_t n)
{
	return n == P53_NONE || n < n_nodes;
}

int p53_dnssec_image_check(const void *img, size_t len)
{
	const struct p53_image_hdr *h = img;
	uint64_t rdata_size = h->adds_off >= h->rdata_off ? h->adds_off - h->rdata_off : 0;

	const uint32_t *roff = (const uint32_t *)((const uint8_t *)img + h->rrsets_off);
	for (uint32_t i = 0; i < h->n_rrsets; i++) {
		if (roff[i] == 0)
			continue; /* free: a zone's room (image.h, node_room), held by image.c */
		/* The header, then its records and RRSIGs (image.h). */
		if ((uint64_t)roff[i] + sizeof(struct p53_image_rrset) > rdata_size)
			return -EINVAL;
		const struct p53_image_rrset *rs = p53_image_rrset(img, i);
		if ((uint64_t)roff[i] + p53_image_rrset_span(rs) > rdata_size)
			return -EINVAL;
	}
	if (h->n_chain > 0 &&
	    !in_bounds(len, h->chain_off, (uint64_t)h->n_chain * sizeof(uint32_t)))
		return -EINVAL;
	if (h->n_nsec3 > 0 &&
	    !in_bounds(len, h->nsec3_off, (uint64_t)h->n_nsec3 * sizeof(struct p53_image_nsec3)))
		return -EINVAL;
	/* Chain and NSEC3 entries are relative to their zone (image.h), so below the image's
	 * node count too; by zone below, what the zone's proofs search. */
	for (uint32_t i = 0; i < h->n_chain; i++)
		if (p53_image_chain(img)[i] >= h->n_nodes)
			return -EINVAL;
	for (uint32_t i = 0; i < h->n_nsec3; i++)
		if (p53_image_nsec3(img)[i].node >= h->n_nodes)
			return -EINVAL;
	for (uint32_t z = 0; z < h->n_zones; z++) {
		const struct p53_image_zone *zn = p53_image_zone(img, z);
		if (zn->dnssec == 0)
			continue;
		if (h->proofs_off == 0)
			return -EINVAL;
		if ((zn->dnssec & P53_ZONE_NSEC3) &&
		    ((uint64_t)zn->proof_lo + zn->proof_n > h->n_nsec3 ||
		     (uint64_t)zn->salt_off + zn->salt_len > rdata_size))
			return -EINVAL;
		for (uint32_t k = 0; (zn->dnssec & P53_ZONE_NSEC3) && k < zn->proof_n; k++)
			if (p53_image_nsec3(img)[zn->proof_lo + k].node >= zn->n_nodes)
				return -EINVAL;
	}
	if (h->proofs_off == 0)
		return 0;
	if (!in_bounds(len, h->proofs_off, (uint64_t)h->n_nodes * sizeof(struct p53_image_proof)))
		return -EINVAL;
	/* Each zone's proofs (its range of proofs[], image.h) and the part of the chain they
	 * name, relative to the zone; proofs outside every range are garbage, never read. */
	for (uint32_t z = 0; z < h->n_zones; z++) {
		const struct p53_image_zone *zn = p53_image_zone(img, z);
		uint32_t lo = h->n_chain, hi = 0;
		for (uint32_t n = 0; n < zn->n_nodes; n++) {
			const struct p53_image_proof *p = p53_image_proof(img, zn->node_base + n);
			if (!node_ok(zn->n_nodes, p->match) || !node_ok(zn->n_nodes, p->wild) ||
			    !node_ok(zn->n_nodes, p->encl) || !node_ok(zn->n_nodes, p->nc) ||
			    p->lo > p->hi || p->hi > h->n_chain)
				return -EINVAL;
			if (p->lo < p->hi) {
				lo = p->lo < lo ? p->lo : lo;
				hi = p->hi > hi ? p->hi : hi;
			}
		}
		/* The chain entries its proofs search (p53_nsec_cover(): chain[lo, hi)). */
		for (uint32_t k = lo; k < hi; k++)
			if (p53_image_chain(img)[k] >= zn->n_nodes)
				return -EINVAL;
	}
	return 0;
}
