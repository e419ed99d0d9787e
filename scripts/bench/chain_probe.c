/*
 * p53-chain-probe: what a chain of dependent cache lines per query costs when it is
 * prefetched across a burst, as dataplane/worker.c's prefetch_chain does, by how many lines
 * the chain has, how many pages they lie on, how far apart the pages are and how the buffer
 * is mapped. No pop53 code: it isolates the memory system of the machine the replay runs on
 * (docs/BENCHMARKS.md, "Big zone, round 14").
 *
 * Each query is a chain of LINES distinct 64-byte lines on PAGES random 4 KiB pages of the
 * first REGION MiB of a 96 MiB buffer; each line holds the offset of the next. QUERIES
 * distinct chains are cycled 2,000,000 times in bursts of 32: pass 1 prefetches every
 * chain's first line, each next pass reads the line the previous one prefetched and
 * prefetches the next, the last pass reads the last line. Prints thread CPU time per query.
 *
 *   p53-chain-probe MAPPING LINES PAGES [QUERIES [REGION]]
 *   MAPPING: 4k (MADV_NOHUGEPAGE), thp (MADV_HUGEPAGE), hugetlb (MAP_HUGETLB)
 *   QUERIES: default 65536 (as p53-replay's frames); REGION: default 96
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define BURST  32
#define SIZE   ((size_t)96 << 20)
#define HUGE   ((size_t)2 << 20)
#define TOTAL  2000000L
#define MAXLEN 16

static uint64_t state = 88172645463325252ull;

static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static double cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint8_t *map(const char *how)
{
	if (strcmp(how, "hugetlb") == 0) {
		void *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	if (strcmp(how, "thp") != 0 && strcmp(how, "4k") != 0)
		return NULL;
	void *p = mmap(NULL, SIZE + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	uint8_t *b = (uint8_t *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	madvise(b, SIZE, strcmp(how, "thp") == 0 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	return b;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: p53-chain-probe 4k|thp|hugetlb LINES PAGES [QUERIES [REGION_MIB]]\n");
		return 2;
	}
	int lines = atoi(argv[2]), pages = atoi(argv[3]);
	size_t queries = argc > 4 ? strtoul(argv[4], NULL, 0) : 65536;
	size_t region = argc > 5 ? strtoul(argv[5], NULL, 0) << 20 : SIZE;
	if (lines < 1 || lines > MAXLEN || pages < 1 || pages > lines || queries < 1 ||
	    region < 4096 || region > SIZE) {
		fprintf(stderr, "p53-chain-probe: 1 <= PAGES <= LINES <= %d, 4 KiB <= REGION <= 96 MiB\n", MAXLEN);
		return 2;
	}
	uint8_t *buf = map(argv[1]);
	uint32_t *head = malloc(queries * sizeof(*head));
	if (buf == NULL || head == NULL) {
		fprintf(stderr, "p53-chain-probe: no memory (%s)\n", argv[1]);
		return 1;
	}
	memset(buf, 1, SIZE);
	size_t n_pages = region / 4096;
	for (size_t q = 0; q < queries; q++) {
		uint64_t pg[MAXLEN];
		uint32_t off[MAXLEN];
		for (int p = 0; p < pages; p++)
			pg[p] = rnd() % n_pages;
		for (int k = 0; k < lines; k++) {
			int taken;
			do {    /* a line of its page that this chain does not use yet */
				off[k] = (uint32_t)(pg[k * pages / lines] * 4096 + (rnd() % 64) * 64);
				taken = 0;
				for (int j = 0; j < k; j++)
					taken |= off[j] == off[k];
			} while (taken);
		}
		for (int k = 0; k + 1 < lines; k++)
			memcpy(buf + off[k], &off[k + 1], sizeof(off[k + 1]));
		head[q] = off[0];
	}
	uint64_t sink = 0;
	double t0 = cpu_ns();
	for (long done = 0; done < TOTAL; done += BURST) {
		uint32_t cur[BURST];
		for (int i = 0; i < BURST; i++) {
			cur[i] = head[((size_t)done + (size_t)i) % queries];
			__builtin_prefetch(buf + cur[i]);
		}
		for (int k = 1; k < lines; k++)
			for (int i = 0; i < BURST; i++) {
				cur[i] = *(volatile uint32_t *)(buf + cur[i]);
				__builtin_prefetch(buf + cur[i]);
			}
		for (int i = 0; i < BURST; i++)
			sink += *(volatile uint32_t *)(buf + cur[i]);
	}
	double ns = (cpu_ns() - t0) / (double)TOTAL;
	printf("RESULT mapping=%s lines=%d pages=%d queries=%zu region_mib=%zu cpu_ns=%.1f check=%u\n",
	       argv[1], lines, pages, queries, region >> 20, ns, (unsigned)(sink & 1));
	return 0;
}
