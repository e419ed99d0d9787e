/* Transparent huge pages for large working buffers; see bigmem.h. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "control/bigmem.h"

#define HUGE_2M ((uintptr_t)2 << 20)

void p53_bigmem_advise(void *p, size_t len)
{
	if (p == NULL || len < P53_BIGMEM_MIN)
		return;
	uintptr_t start = ((uintptr_t)p + HUGE_2M - 1) & ~(HUGE_2M - 1);
	uintptr_t end = ((uintptr_t)p + len) & ~(HUGE_2M - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
}

void *p53_bigmem_image(size_t len)
{
	size_t align = len >= P53_BIGMEM_MIN ? HUGE_2M : P53_IMAGE_ALIGN;
	size_t alen = (len + align - 1) & ~(align - 1);
	void *p = NULL;

	if (alen < len)
		return NULL;
	if (posix_memalign(&p, align, alen ? alen : align) != 0)
		return NULL;
	p53_bigmem_advise(p, alen);
	return p;
}

void *p53_bigmem_grow(void *p, size_t old, size_t len)
{
	if (len < P53_BIGMEM_MIN)
		return realloc(p, len);
	void *q = malloc(len);
	if (q == NULL)
		return NULL;
	p53_bigmem_advise(q, len);
	if (p != NULL && old > 0)
		memcpy(q, p, old < len ? old : len);
	free(p);
	return q;
}

/* One mapping of smaps: its range and the fields counted. */
struct smap {
	uintptr_t lo, hi;
	size_t rss, anon_huge, page;
};

static void smap_add(const struct smap *m, uintptr_t lo, uintptr_t hi, struct p53_bigmem_backing *b)
{
	uintptr_t a = m->lo > lo ? m->lo : lo, z = m->hi < hi ? m->hi : hi;

	if (m->hi <= m->lo || z <= a)
		return;
	double part = (double)(z - a) / (double)(m->hi - m->lo);
	size_t rss = (size_t)((double)m->rss * part);
	b->resident += rss;
	/* hugetlbfs pages are not in Rss (they are in Private_Hugetlb): count the overlap. */
	if (m->page > 4096)
		b->huge += z - a;
	else
		b->huge += (size_t)((double)m->anon_huge * part);
	if (m->page > b->page_size)
		b->page_size = m->page;
}

int p53_bigmem_backing(const void *p, size_t len, struct p53_bigmem_backing *b)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	struct smap m = {0};
	char line[512];
	int have = 0;

	*b = (struct p53_bigmem_backing){0};
	FILE *f = fopen("/proc/self/smaps", "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		uintmax_t a, z, kb;
		char c;
		/* A mapping's first line: "lo-hi perms offset dev inode [path]". */
		if (sscanf(line, "%jx-%jx %c", &a, &z, &c) == 3) {
			if (have)
				smap_add(&m, lo, hi, b);
			m = (struct smap){.lo = (uintptr_t)a, .hi = (uintptr_t)z};
			have = 1;
		} else if (sscanf(line, "Rss: %ju kB", &kb) == 1) {
			m.rss = (size_t)kb << 10;
		} else if (sscanf(line, "AnonHugePages: %ju kB", &kb) == 1) {
			m.anon_huge = (size_t)kb << 10;
		} else if (sscanf(line, "KernelPageSize: %ju kB", &kb) == 1) {
			m.page = (size_t)kb << 10;
		}
	}
	if (have)
		smap_add(&m, lo, hi, b);
	fclose(f);
	return 0;
}
