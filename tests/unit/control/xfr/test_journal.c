/*
 * Unit tests for control/xfr/journal.c: the IXFR history served to lower tiers. Steps chain,
 * a chain is found from any kept serial to the newest, the byte bound drops the oldest, a
 * step that does not follow clears the journal, and a step a client still holds outlives the
 * journal (references).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "control/xfr/journal.h"

/* An IXFR of one step from -> to with `bytes` bytes of deletions. */
static void diff(struct p53_ixfr *d, uint32_t from, uint32_t to, size_t bytes)
{
	static uint8_t rdata[4096];
	struct p53_ixfr_step *s = p53_ixfr_push(d);

	assert_non_null(s);
	s->from = from;
	s->to = to;
	assert_int_equal(p53_rrs_add(&s->del, (const uint8_t *)"\0", 1, 16, 1, 0, rdata, bytes), 0);
	assert_int_equal(p53_rrs_add(&s->add, (const uint8_t *)"\0", 1, 16, 1, 0, rdata, 10), 0);
}

static void push(struct p53_journal *j, uint32_t from, uint32_t to, size_t bytes, uint64_t max)
{
	struct p53_ixfr d = { 0 };

	diff(&d, from, to, bytes);
	assert_int_equal(p53_journal_push(j, &d, max), 0);
	p53_ixfr_free(&d);
}

static void test_chain(void **state)
{
	struct p53_journal j = { 0 };
	struct p53_jstep *out[16];
	size_t n;

	(void)state;
	for (uint32_t s = 1; s < 6; s++)
		push(&j, s, s + 1, 100, 1u << 20);
	assert_int_equal(j.n, 5);
	assert_int_equal(p53_journal_chain(&j, 1, 6, out, &n), 0);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(out[i]->from, 1 + i);
		p53_jstep_put(out[i]);
	}
	assert_int_equal(p53_journal_chain(&j, 4, 6, out, &n), 0);
	assert_int_equal(n, 2);
	p53_jstep_put(out[0]);
	p53_jstep_put(out[1]);
	/* rows: chains the journal cannot give */
	assert_int_equal(p53_journal_chain(&j, 0, 6, out, &n), -1);   /* older than kept */
	assert_int_equal(p53_journal_chain(&j, 6, 6, out, &n), -1);   /* nothing to send */
	assert_int_equal(p53_journal_chain(&j, 2, 9, out, &n), -1);   /* newer than kept */
	p53_journal_clear(&j);
	assert_int_equal(j.n, 0);
}

static void test_bound(void **state)
{
	struct p53_journal j = { 0 };
	struct p53_jstep *out[16];
	size_t n;

	(void)state;
	for (uint32_t s = 1; s <= 10; s++)
		push(&j, s, s + 1, 1000, 3500);
	assert_true(j.bytes <= 3500);
	assert_int_equal(j.n, 3);
	assert_int_equal(j.steps[0]->from, 8);
	assert_int_equal(p53_journal_chain(&j, 1, 11, out, &n), -1);
	assert_int_equal(p53_journal_chain(&j, 8, 11, out, &n), 0);
	for (size_t i = 0; i < n; i++)
		p53_jstep_put(out[i]);
	/* max 0: nothing kept */
	push(&j, 11, 12, 10, 0);
	assert_int_equal(j.n, 0);
	p53_journal_clear(&j);
}

static void test_gap_clears(void **state)
{
	struct p53_journal j = { 0 };

	(void)state;
	push(&j, 1, 2, 10, 1u << 20);
	push(&j, 2, 3, 10, 1u << 20);
	push(&j, 7, 8, 10, 1u << 20); /* does not follow 3: the old steps would lie */
	assert_int_equal(j.n, 1);
	assert_int_equal(j.steps[0]->from, 7);
	p53_journal_clear(&j);
}

static void test_refs_outlive(void **state)
{
	struct p53_journal j = { 0 };
	struct p53_jstep *out[4];
	size_t n;

	(void)state;
	push(&j, 1, 2, 300, 1u << 20);
	assert_int_equal(p53_journal_chain(&j, 1, 2, out, &n), 0);
	p53_journal_clear(&j);
	/* a client still sending it: the step is intact (ASAN would catch a use after free) */
	assert_int_equal(out[0]->from, 1);
	assert_int_equal(out[0]->del.count, 1);
	assert_true(out[0]->del.len > 300);
	p53_jstep_put(out[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_gap_clears),
		cmocka_unit_test(test_refs_outlive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
