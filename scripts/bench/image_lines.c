/*
 * p53-image-lines: how many distinct cache lines (64 bytes) and pages (4 KiB, 2 MiB) of a
 * compiled image a positive answer's lookup chain touches, on average over random owners
 * (docs/BENCHMARKS.md, "Big zone: node-major layout"). The chain is what the fast path reads
 * for a query of one type at its owner (dataplane/fastpath.c): the name-index slots probed,
 * the node's fields (heading its block since image format 9), the owner name (compared), the
 * RRset headers scanned up to the match, and the records copied. A big image's replicas have
 * no RRset checksum sums (control/publish.c; a small one's p53_answer_conf.sums, outside the
 * image, would be one more line).
 *
 *   p53-image-lines -z big.test=ZONEFILE [-t A] [-n 100000] [-a]
 *
 * (-s, the projection of the node in its block that rounds 16 and 17 printed, went with
 * format 9, which is that layout.)
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
	int adopt = 0;

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
		} else {
			fprintf(stderr, "usage: %s -z ZONE=FILE [-t A|AAAA|TXT|N] [-n SAMPLES] [-a]\n",
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
		if (p53_image_node_off(img, i) == 0)
			continue; /* a zone's room (image.h, node_room) */
		const struct p53_image_node *n = p53_image_node(img, i);
		if (!(n->flags & (P53_NODE_NSEC3 | P53_NODE_GLUE | P53_NODE_ENT)) &&
		    p53_image_node_rrset(img, n, qtype) != P53_NONE)
			cand[nc++] = i;
	}
	if (nc == 0) {
		fprintf(stderr, "no owner of that type\n");
		return 1;
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
			if ((uint32_t)slots[i] == p53_image_node_off(img, ni) || slots[i] == 0)
				break;
		}
		int at = s[0].n;
		/* The node: what the fast path reads of every node it answers from (up to its
		   occluder, and its own index) */
		touch(s, n, sizeof(*n));
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
	printf("image=%s base%%64=%u layout=%s owners=%u samples=%ld lines=%.3f (slot %.3f node %.3f "
	       "name %.3f rrset %.3f rdata %.3f new lines each) pages4k=%.3f pages2m=%.3f "
	       "image=%zu B records=%u (%.1f B/record)\n",
	       adopt ? "compiled" : "copy", (unsigned int)((uintptr_t)img % 64),
	       "node-in-block", nc,
	       samples, sum[0] / samples, part[0] / samples, part[1] / samples, part[2] / samples,
	       part[3] / samples, part[4] / samples, sum[1] / samples, sum[2] / samples, len,
	       h->n_records, (double)len / (h->n_records ? h->n_records : 1));
	free(cand);
	free(img);
	return 0;
}
