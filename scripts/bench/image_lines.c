/*
 * p53-image-lines: how many distinct cache lines (64 bytes) and pages (4 KiB, 2 MiB) of a
 * compiled image a positive answer's lookup chain touches, on average over random owners
 * (docs/BENCHMARKS.md, "Big zone: node-major layout"). The chain is what the fast path reads
 * for a query of one type at its owner (dataplane/fastpath.c): the name-index slots probed,
 * the node's fields, the owner name (compared), the RRset headers scanned up to the match, and
 * the records copied. A big image's replicas have no RRset checksum sums (control/publish.c;
 * a small one's p53_answer_conf.sums, outside the image, would be one more line).
 *
 *   p53-image-lines -z big.test=ZONEFILE [-t A] [-n 100000] [-a] [-s]
 *
 * -s projects the next layout step instead (the node's fields in its block, in front of its
 * name; the slot leading to the block; see main): the same blocks and answers, counted at
 * the offsets that layout would give them. A projection from this image, not an image.
 *
 * Compiles the zone with p53_image_build() and prints one
 * line of figures. The image is measured in a 2 MiB-aligned copy, as pop53d's heap replicas
 * are; with -a in the compiler's own buffer, as it is (pop53d's first worker adopts it,
 * control/publish.c); `base%64` says where that buffer starts in its cache line. A tool, not
 * a test: prints, asserts nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/zone/image_build.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

#define MAXU 64
#define SIM_NODE 28u    /* -s: a node's fields in its block (see main) */

struct set {
	uint64_t v[MAXU];
	int n;
};

static void add(struct set *s, uint64_t x)
{
	for (int i = 0; i < s->n; i++)
		if (s->v[i] == x)
			return;
	if (s->n < MAXU)
		s->v[s->n++] = x;
}

/* Every unit of `shift` bits that [p, p + len) touches, into s. */
static void span(struct set *s, const void *p, size_t len, int shift)
{
	uintptr_t a = (uintptr_t)p, e = a + (len ? len : 1) - 1;

	for (uintptr_t u = a >> shift; u <= e >> shift; u++)
		add(s, u);
}

static void touch(struct set s[3], const void *p, size_t len)
{
	span(&s[0], p, len, 6);
	span(&s[1], p, len, 12);
	span(&s[2], p, len, 21);
}

int main(int argc, char **argv)
{
	struct p53_zone_src z = { 0 };
	char zname[256];
	uint16_t qtype = 1;
	long samples = 100000;
	int adopt = 0, sim = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-z") == 0 && i + 1 < argc) {
			const char *eq = strchr(argv[++i], '=');
			if (eq == NULL || (size_t)(eq - argv[i]) >= sizeof(zname) - 1)
				return 2;
			memcpy(zname, argv[i], (size_t)(eq - argv[i]));
			zname[eq - argv[i]] = 0;
			z.name = zname;
			z.file = eq + 1;
		} else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
			i++;
			qtype = strcmp(argv[i], "AAAA") == 0 ? 28 : strcmp(argv[i], "TXT") == 0 ? 16 :
				(uint16_t)atoi(argv[i]) ? (uint16_t)atoi(argv[i]) : 1;
		} else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
			samples = atol(argv[++i]);
		} else if (strcmp(argv[i], "-a") == 0) {
			adopt = 1;
		} else if (strcmp(argv[i], "-s") == 0) {
			sim = 1;
		} else {
			fprintf(stderr, "usage: %s -z ZONE=FILE [-t A|AAAA|TXT|N] [-n SAMPLES] [-a] [-s]\n",
				argv[0]);
			return 2;
		}
	}
	if (z.name == NULL)
		return 2;
	char err[512];
	size_t len;
	void *img = p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL);
	if (img == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	/* A replica copy is page-aligned (pop53d's heap copies, p53-replay --replica hugetlb);
	 * with -a the compiler's buffer is measured where it is. */
	if (!adopt) {
		void *rep = aligned_alloc(2u << 20, (len + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1));
		if (rep == NULL)
			return 1;
		memcpy(rep, img, len);
		free(img);
		img = rep;
	}
	const struct p53_image_hdr *h = p53_image_hdr(img);
	uint32_t *cand = malloc(h->n_nodes * sizeof(*cand)), nc = 0;
	for (uint32_t i = 0; i < h->n_nodes; i++) {
		const struct p53_image_node *n = p53_image_node(img, i);
		if (!(n->flags & (P53_NODE_NSEC3 | P53_NODE_GLUE | P53_NODE_ENT)) &&
		    p53_image_node_rrset(img, n, qtype) != P53_NONE)
			cand[nc++] = i;
	}
	if (nc == 0) {
		fprintf(stderr, "no owner of that type\n");
		return 1;
	}
	/* -s: where each node's block would start were the node's fields in it (the next
	 * format step, docs/BENCHMARKS.md "Big zone, round 16"): SIM_NODE bytes of fields
	 * (name_off implied, parent_side in the zone, the node's own index added), 4-byte
	 * aligned, in front of its name and RRsets, the same blocks in the same order; nodes[]
	 * a 4-byte table of offsets; the slot holding the block's offset. blk[i]: node i's
	 * block offset in that section; the image is counted 2 MiB-aligned as above. */
	uint64_t *blk = NULL, sim_sec = 0, sim_len = 0, sim_base = 0;
	if (sim) {
		blk = malloc(h->n_nodes * sizeof(*blk));
		if (blk == NULL)
			return 1;
		for (uint32_t i = 0; i < h->n_nodes; i++) {
			const struct p53_image_node *n = p53_image_node(img, i);
			if (i > 0 && p53_image_node_name_off(img, n) <=
				     p53_image_node_name_off(img, p53_image_node(img, i - 1))) {
				fprintf(stderr, "-s: blocks not in node order (a patched image?)\n");
				return 1;
			}
			sim_sec = p53_image_rrset_at(sim_sec);
			blk[i] = sim_sec;
			uint64_t at = sim_sec + SIM_NODE + n->name_len;
			const struct p53_image_rrset *rs = p53_image_node_first(img, n);
			for (uint32_t r = 0; r < n->n_rrsets; r++, rs = p53_image_rrset_next(img, rs))
				at = p53_image_rrset_at(at) + p53_image_rrset_span(rs);
			sim_sec = at;
		}
		uint64_t old_sec = h->adds_off - h->rdata_off;
		sim_base = h->rdata_off - (uint64_t)h->n_nodes * (sizeof(struct p53_image_node) - 4);
		sim_len = len - (uint64_t)h->n_nodes * (sizeof(struct p53_image_node) - 4) -
			  old_sec + sim_sec;
	}
	double sum[3] = { 0 }, part[5] = { 0 };
	unsigned long long seed = 88172645463325252ull;
	for (long k = 0; k < samples; k++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		uint32_t ni = cand[seed % nc];
		const struct p53_image_node *n = p53_image_node(img, ni);
		const uint8_t *nm = p53_image_node_name(img, n);
		struct set s[3] = { 0 };
		/* The slots probed until the node. */
		uint32_t hash = p53_name_hash(nm, n->name_len);
		const uint64_t *slots = p53_image_slots(img);
		for (uint32_t i = hash & h->hash_mask;; i = (i + 1) & h->hash_mask) {
			touch(s, &slots[i], 8);
			if ((uint32_t)slots[i] == ni + 1 || slots[i] == 0)
				break;
		}
		int at = s[0].n;
		if (sim) {
			/* The block from its start: fields, name, the headers walked, the records. */
			const uint8_t *b0 = (const uint8_t *)img + sim_base + blk[ni];
			uint64_t o = SIM_NODE + n->name_len;
			touch(s, b0, SIM_NODE);
			int after_node = s[0].n;
			touch(s, b0 + SIM_NODE, n->name_len);
			int after_name = s[0].n;
			const struct p53_image_rrset *rs = p53_image_node_first(img, n);
			for (;;) {
				o = p53_image_rrset_at(o);
				touch(s, b0 + o, sizeof(*rs));
				if (rs->type == qtype)
					break;
				o += p53_image_rrset_span(rs);
				rs = p53_image_rrset_next(img, rs);
			}
			int after_rs = s[0].n;
			touch(s, b0 + o + sizeof(*rs), rs->rdata_len);
			part[0] += at;
			part[1] += after_node - at;
			part[2] += after_name - after_node;
			part[3] += after_rs - after_name;
			part[4] += s[0].n - after_rs;
			for (int j = 0; j < 3; j++)
				sum[j] += s[j].n;
			continue;
		}
		/* name_off .. occluder: what the fast path reads of every node it answers from */
		touch(s, n, offsetof(struct p53_image_node, occluder) + sizeof(n->occluder));
		int after_node = s[0].n;
		touch(s, nm, n->name_len);
		int after_name = s[0].n;
		/* The headers walked from the node to the one of qtype (in the node's block,
		   image.h), as p53_image_node_find() reads them. */
		const struct p53_image_rrset *rs = p53_image_node_first(img, n);
		for (;;) {
			touch(s, rs, sizeof(*rs));
			if (rs->type == qtype)
				break;
			rs = p53_image_rrset_next(img, rs);
		}
		int after_rs = s[0].n;
		touch(s, p53_image_rdata(img, rs), rs->rdata_len);
		part[0] += at;
		part[1] += after_node - at;
		part[2] += after_name - after_node;
		part[3] += after_rs - after_name;
		part[4] += s[0].n - after_rs;
		for (int j = 0; j < 3; j++)
			sum[j] += s[j].n;
	}
	if (sim)
		len = sim_len;
	printf("image=%s base%%64=%u layout=%s nodes_off%%64=%u owners=%u samples=%ld lines=%.3f (slot %.3f node %.3f "
	       "name %.3f rrset %.3f rdata %.3f new lines each) pages4k=%.3f pages2m=%.3f "
	       "image=%zu B records=%u (%.1f B/record)\n",
	       adopt ? "compiled" : "copy", (unsigned int)((uintptr_t)img % 64),
	       sim ? "node-in-block(-s, projected)" : "node-major", h->nodes_off % 64, nc,
	       samples, sum[0] / samples, part[0] / samples, part[1] / samples, part[2] / samples,
	       part[3] / samples, part[4] / samples, sum[1] / samples, sum[2] / samples, len,
	       h->n_records, (double)len / (h->n_records ? h->n_records : 1));
	free(blk);
	free(cand);
	free(img);
	return 0;
}
