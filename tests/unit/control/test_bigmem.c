/*
 * control/bigmem.c: p53_bigmem_backing() tells 4 KiB pages, transparent huge pages and
 * hugetlbfs pages apart (p53-replay prints it; control/publish.c decides from it whether the
 * first worker answers from the compiled image or from a copy in the DPDK heap).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <malloc.h>

#include <cmocka.h>

#include "control/bigmem.h"

#define MIB ((size_t)1 << 20)

static void test_small_pages(void **state)
{
	(void)state;
	size_t len = 8 * MIB;
	void *p = NULL;
	struct p53_bigmem_backing b;

	assert_int_equal(posix_memalign(&p, 2 * MIB, len), 0);
	assert_int_equal(madvise(p, len, MADV_NOHUGEPAGE), 0);
	memset(p, 1, len);
	assert_int_equal(p53_bigmem_backing(p, len, &b), 0);
	assert_true(b.resident >= len - 64 * 1024 && b.resident <= len + 4096);
	assert_int_equal(b.huge, 0);
	assert_int_equal(b.page_size, 4096);
	/* Half of it: the resident bytes of the overlap only. */
	assert_int_equal(p53_bigmem_backing((char *)p + len / 2, len / 2, &b), 0);
	assert_true(b.resident >= len / 2 - 64 * 1024 && b.resident <= len / 2 + 4096);
	free(p);
}

static int thp_off(void)
{
	char line[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f == NULL)
		return 1;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	return strstr(line, "[never]") != NULL || line[0] == '\0';
}

static void test_transparent(void **state)
{
	(void)state;
	size_t len = 16 * MIB;
	struct p53_bigmem_backing b;

	if (thp_off())
		skip();
	/* mmap, not malloc: a sanitizer's allocator may hand out memory it has touched already. */
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	p53_bigmem_advise(p, len);
	memset(p, 1, len);
	assert_int_equal(p53_bigmem_backing(p, len, &b), 0);
	/* At least the 2 MiB-aligned middle in huge pages (all of it unless memory is too
	 * fragmented for the kernel to find 2 MiB pages), counted as huge but 4 KiB kernel pages. */
	assert_true(b.huge >= 2 * MIB);
	assert_true(b.huge <= len);
	assert_int_equal(b.page_size, 4096);
	munmap(p, len);
}

static void test_hugetlb(void **state)
{
	(void)state;
	size_t len = 4 * MIB;
	struct p53_bigmem_backing b;

	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED)
		skip(); /* no free 2 MiB pages on this host */
	memset(p, 1, len);
	assert_int_equal(p53_bigmem_backing(p, len, &b), 0);
	assert_int_equal(b.huge, len);
	assert_true(b.page_size >= 2 * MIB); /* the default hugepage size */
	munmap(p, len);
}

/* An image buffer (p53_bigmem_image) starts on a cache line whatever its size, on a 2 MiB
 * boundary from P53_BIGMEM_MIN on, holds len bytes, and free() takes it back (ASAN checks). */
static void test_image_buffers_aligned(void **state)
{
	static const size_t lens[] = { 0, 1, 24, 100, 4095, 8256, 65536, P53_BIGMEM_MIN - 1,
				       P53_BIGMEM_MIN, P53_BIGMEM_MIN + 5 };
	void *odd[8];
	(void)state;

	for (unsigned int i = 0; i < 8; i++)    /* leave malloc's free lists uneven */
		odd[i] = malloc(16 + 16 * i);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (unsigned int k = 0; k < 4; k++) {
			uint8_t *p = p53_bigmem_image(lens[i]);
			assert_non_null(p);
			assert_int_equal((uintptr_t)p % P53_IMAGE_ALIGN, 0);
			if (lens[i] >= P53_BIGMEM_MIN)
				assert_int_equal((uintptr_t)p % (2u << 20), 0);
			assert_true(malloc_usable_size(p) >= lens[i]);
			if (lens[i] > 0)
				memset(p, 0xa5, lens[i]);
			free(p);
		}
	}
	for (unsigned int i = 0; i < 8; i++)
		free(odd[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_pages),
		cmocka_unit_test(test_transparent),
		cmocka_unit_test(test_hugetlb),
		cmocka_unit_test(test_image_buffers_aligned),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
