/*
 * Large working buffers of the control thread (a zone's records, the compiler's arrays, an
 * image before it is published) are written once, right after they are allocated: with 4 KiB
 * pages that is one page fault per 4 KiB, which on a virtual machine cost a compile of a
 * 1M-record zone more than its own work (docs/BENCHMARKS.md, IXFR apply). Transparent huge
 * pages make it one fault per 2 MiB. Any thread; no DPDK.
 */
#ifndef P53_BIGMEM_H
#define P53_BIGMEM_H

#include <stddef.h>

/** Buffers from this size on are worth it. */
#define P53_BIGMEM_MIN ((size_t)4 << 20)

/**
 * Ask for transparent huge pages (madvise MADV_HUGEPAGE) on the 2 MiB-aligned part of
 * p[0..len) when len >= P53_BIGMEM_MIN; pages already there stay as they are. A hint only:
 * where THP is off ("never") or the call fails nothing changes.
 */
void p53_bigmem_advise(void *p, size_t len);

/**
 * Where every image buffer that workers read starts, at least: a cache line. The image's own
 * offsets then decide what shares a line (a 32-byte node at a multiple of 32 never crosses
 * one); in malloc's 16-byte alignment half the nodes would (docs/BENCHMARKS.md, "Big zone:
 * an aligned image for the first worker").
 */
#define P53_IMAGE_ALIGN 64

/**
 * Memory for a zone image, or for a buffer one is written into later (an IXFR spare):
 * P53_IMAGE_ALIGN-aligned; from P53_BIGMEM_MIN on 2 MiB-aligned, len rounded up to 2 MiB and
 * transparent huge pages asked for (p53_bigmem_advise). Not zeroed; mapped, not touched,
 * when it is big (the pages come as they are written). Freed with free();
 * malloc_usable_size() of it is at least len.
 * @return the buffer, or NULL (len 0 gives a buffer of P53_IMAGE_ALIGN bytes).
 */
void *p53_bigmem_image(size_t len);

/**
 * realloc() for a buffer that grows by doubling: from P53_BIGMEM_MIN on, a new buffer is
 * advised before the old bytes are copied into it, so they land in huge pages too (realloc
 * copies, or moves pages, before any advice could be given).
 * @param old  bytes of p that matter (its allocated size)
 * @return the new buffer (p is freed), or NULL with p untouched.
 */
void *p53_bigmem_grow(void *p, size_t old, size_t len);

/**
 * How p[0..len) is backed, from /proc/self/smaps: bytes resident, bytes in huge pages
 * (transparent: AnonHugePages; hugetlbfs: the whole of a mapping whose KernelPageSize is
 * over 4 KiB) and the largest kernel page size seen (bytes). Counted per mapping, for the
 * part of each mapping that overlaps the range (a partly overlapped mapping's resident and
 * huge bytes are scaled to the overlap). Any thread; reads a file: not for the data path.
 * @return 0, or -1 when smaps cannot be read (the outputs are then 0).
 */
struct p53_bigmem_backing {
	size_t resident;
	size_t huge;
	size_t page_size;
};
int p53_bigmem_backing(const void *p, size_t len, struct p53_bigmem_backing *b);

#endif /* P53_BIGMEM_H */
