/* Transparent huge pages for large working buffers; see bigmem.h. */
#include <stdint.h>
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
