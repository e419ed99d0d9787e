/*
 * Unit tests for control/xfr/journal.c: the IXFR history served to lower tiers. Steps chain,
 * a chain is found from any kept serial to the newest, the byte bound drops the oldest, a
 * step that does not follow clears the journal, and a step a client still holds outlives the
 * journal (references). The journal file: written and read back byte for byte, cut back to
 * the disk copy's serial, bounded on load, and ignored with a reason when it is corrupt,
 * truncated, another zone's or does not chain; no steps removes it. A lazy disk copy: the
 * journal running past the copy's serial rolls the copy's records forward at start-up (only
 * the steps after the copy's serial, a torn last step left out, the file untouched), and a
 * journal that does not lead from the copy is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/xfr/journal.h"
#include "control/xfr/store.h"

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

/* ---- the file ---- */

static const uint8_t APEX[] = "\x04zone\x04test";      /* with its final 0: sizeof(APEX) */

static void soa(struct p53_rrs *r, uint32_t serial)
{
	uint8_t rd[2 + 2 + 20] = { 1, 'a', 0, 0 };

	rd[4] = (uint8_t)(serial >> 24);
	rd[5] = (uint8_t)(serial >> 16);
	rd[6] = (uint8_t)(serial >> 8);
	rd[7] = (uint8_t)serial;
	assert_int_equal(p53_rrs_add(r, APEX, sizeof(APEX), 6, 1, 300, rd, sizeof(rd)), 0);
}

/* A real-looking step: the SOAs of from and to, a record deleted and one added. */
static void push_soa(struct p53_journal *j, uint32_t from, uint32_t to, uint64_t max)
{
	struct p53_ixfr d = { 0 };
	struct p53_ixfr_step *s = p53_ixfr_push(&d);
	uint8_t a[4] = { 192, 0, 2, (uint8_t)from };

	assert_non_null(s);
	s->from = from;
	s->to = to;
	soa(&s->del, from);
	soa(&s->add, to);
	assert_int_equal(p53_rrs_add(&s->del, APEX, sizeof(APEX), 1, 1, 300, a, 4), 0);
	a[3] = (uint8_t)to;
	assert_int_equal(p53_rrs_add(&s->add, APEX, sizeof(APEX), 1, 1, 300, a, 4), 0);
	assert_int_equal(p53_journal_push(j, &d, max), 0);
	p53_ixfr_free(&d);
}

static char *tmp_path(void)
{
	char *p = strdup("/tmp/p53-test-journal-XXXXXX");
	int fd = mkstemp(p);

	assert_true(fd >= 0);
	close(fd);
	return p;
}

static void write_journal(const char *path, const struct p53_journal *j)
{
	char err[512];

	assert_int_equal(p53_journal_write(path, APEX, sizeof(APEX), j->steps, j->n, err, sizeof(err)), 0);
}

static void same_step(const struct p53_jstep *a, const struct p53_jstep *b)
{
	assert_int_equal(a->from, b->from);
	assert_int_equal(a->to, b->to);
	assert_int_equal(a->del.count, b->del.count);
	assert_int_equal(a->add.count, b->add.count);
	assert_int_equal(a->del.len, b->del.len);
	assert_int_equal(a->add.len, b->add.len);
	assert_memory_equal(a->del.buf, b->del.buf, a->del.len);
	assert_memory_equal(a->add.buf, b->add.buf, a->add.len);
}

static void test_crc32c(void **state)
{
	(void)state;
	/* The check value of CRC-32C (RFC 3720 B.4's polynomial). */
	assert_int_equal(p53_crc32c(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(p53_crc32c(p53_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
}

static void test_file_roundtrip(void **state)
{
	struct p53_journal j = { 0 }, r = { 0 };
	char *path = tmp_path(), err[512];
	struct p53_jstep *out[8];
	size_t n;

	(void)state;
	for (uint32_t s = 10; s < 13; s++)
		push_soa(&j, s, s + 1, 1u << 20);
	write_journal(path, &j);
	assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 13, 1u << 20, NULL, err, sizeof(err)), 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.bytes, j.bytes);
	for (size_t i = 0; i < 3; i++)
		same_step(j.steps[i], r.steps[i]);
	assert_int_equal(p53_journal_chain(&r, 10, 13, out, &n), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		p53_jstep_put(out[i]);
	/* The journal written before a newer disk copy that never made it: cut back to the copy. */
	assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 12, 1u << 20, NULL, err, sizeof(err)), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.steps[1]->to, 12);
	/* ... and cut from the file, so the next step is appended after serial 12. */
	assert_non_null(strstr(err, "1 step(s) past serial 12"));
	assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 13, 1u << 20, NULL, err, sizeof(err)), -1);
	write_journal(path, &j);
	/* Bounded on load like in memory: the oldest go. */
	assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 13, j.bytes - 1, NULL, err, sizeof(err)), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.steps[0]->from, 11);
	/* No steps: the file goes; a missing file is not an error. */
	assert_int_equal(p53_journal_write(path, APEX, sizeof(APEX), NULL, 0, err, sizeof(err)), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 13, 1u << 20, NULL, err, sizeof(err)), 1);
	assert_int_equal(r.n, 0);
	p53_journal_clear(&j);
	free(path);
}

/* Rewrite the file as the first `len` bytes of `data`, with byte `at` xor'ed by `x`. */
static void put_file(const char *path, const uint8_t *data, size_t len, size_t at, uint8_t x)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	for (size_t i = 0; i < len; i++)
		fputc(data[i] ^ (i == at ? x : 0), f);
	fclose(f);
}

static void test_file_rejected(void **state)
{
	struct p53_journal j = { 0 }, r = { 0 };
	char *path = tmp_path(), err[512];
	uint8_t buf[4096];
	size_t len;

	(void)state;
	for (uint32_t s = 10; s < 13; s++)
		push_soa(&j, s, s + 1, 1u << 20);
	write_journal(path, &j);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_true(len > 100 && len < sizeof(buf));
	static const struct {
		size_t len, at;         /* 0 len: the whole file */
		uint8_t x;
		uint32_t serial;
		const char *reason;
	} rows[] = {
		{ 0, 2, 0x01, 13, "bad header" },
		{ 0, 11, 0x02, 13, "journal version" },
		{ 0, 15, 0x20, 13, "another zone" },            /* a letter of the apex */
		{ 0, 40, 0x01, 13, "checksum mismatch" },       /* inside step 1's records */
		{ 0, 0, 0, 99, "do not lead to serial 99" },
		{ 0, 0, 0, 10, "do not lead to serial 10" },   /* 10 is where it starts */
		{ 1, 0, 0, 13, "bad header" },
		{ 50, 0, 0, 13, "torn (26 bytes), no step before it" },
		/* The last byte missing: the steps before it lead to 12, not 13. */
		{ (size_t)-1, 0, 0, 13, "do not lead to serial 13, the disk copy's; step 3" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t l = rows[i].len == 0 ? len : rows[i].len == (size_t)-1 ? len - 1 : rows[i].len;
		put_file(path, buf, l, rows[i].x ? rows[i].at : (size_t)-1, rows[i].x);
		err[0] = '\0';
		int rc = p53_journal_load(&r, path, APEX, sizeof(APEX), rows[i].serial, 1u << 20, NULL, err,
					  sizeof(err));
		if (rc != -1 || strstr(err, rows[i].reason) == NULL || strstr(err, path) == NULL)
			fail_msg("row %zu: rc %d, '%s', wanted '%s'", i, rc, err, rows[i].reason);
		assert_int_equal(r.n, 0);
	}
	/* A step whose serials disagree with its SOA records (its checksum right): malformed. */
	j.steps[0]->from = 9;
	write_journal(path, &j);
	assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 13, 1u << 20, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "step 1 (9 -> 11): malformed records"));
	/* Steps that do not chain: 10 -> 11, then 12 -> 13. */
	j.steps[0]->from = 10;
	struct p53_jstep *gap[2] = { j.steps[0], j.steps[2] };
	assert_int_equal(p53_journal_write(path, APEX, sizeof(APEX), gap, 2, err, sizeof(err)), 0);
	assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 13, 1u << 20, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "step 2 (12 -> 13) does not follow serial 11"));
	unlink(path);
	p53_journal_clear(&j);
	free(path);
}

/* ---- appending ---- */

static off_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static int store(const char *path, const struct p53_journal *j, uint64_t max, struct p53_jfile *f,
		 uint64_t *written)
{
	char err[512] = "";
	int how = p53_journal_store(path, APEX, sizeof(APEX), j->steps, j->n, j->epoch, max, f,
				    written, err, sizeof(err));

	if (how < 0)
		fail_msg("store: %s", err);
	return how;
}

/* The file read back is the journal in memory, and says of itself what the writer knows. */
static void load_same(const char *path, const struct p53_journal *j, const struct p53_jfile *f)
{
	struct p53_journal r = { 0 };
	struct p53_jfile lf;
	char err[512];

	assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), j->steps[j->n - 1]->to,
					  1u << 20, &lf, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(r.n, j->n);
	for (size_t i = 0; i < r.n; i++)
		same_step(j->steps[i], r.steps[i]);
	assert_true(lf.known);
	assert_int_equal(lf.n, f->n);
	assert_int_equal(lf.first, f->first);
	assert_int_equal(lf.last, f->last);
	assert_int_equal(lf.bytes, f->bytes);
	assert_int_equal(lf.size, f->size);
	assert_int_equal((uint64_t)file_size(path), f->size);
	p53_journal_clear(&r);
}

static void test_store_append(void **state)
{
	struct p53_journal j = { 0 };
	struct p53_jfile f = { 0 };
	char *path = tmp_path();
	uint64_t w, before;

	(void)state;
	unlink(path);
	push_soa(&j, 10, 11, 1u << 20);
	assert_int_equal(store(path, &j, 1u << 20, &f, &w), P53_JSTORE_REWRITE);
	assert_int_equal(w, (uint64_t)file_size(path));
	load_same(path, &j, &f);
	/* One more step: appended, only its record written. */
	before = f.size;
	push_soa(&j, 11, 12, 1u << 20);
	assert_int_equal(store(path, &j, 1u << 20, &f, &w), P53_JSTORE_APPEND);
	assert_int_equal(w, 28 + j.steps[1]->del.len + j.steps[1]->add.len + 4);
	assert_int_equal((uint64_t)file_size(path), before + w);
	load_same(path, &j, &f);
	/* Nothing new: nothing written. */
	assert_int_equal(store(path, &j, 1u << 20, &f, &w), P53_JSTORE_NONE);
	assert_int_equal(w, 0);
	/* Two steps at once (an IXFR of two differences). */
	push_soa(&j, 12, 13, 1u << 20);
	push_soa(&j, 13, 14, 1u << 20);
	assert_int_equal(store(path, &j, 1u << 20, &f, NULL), P53_JSTORE_APPEND);
	load_same(path, &j, &f);
	assert_int_equal(f.n, 4);
	/* The file changed behind the writer: written anew. */
	FILE *x = fopen(path, "ab");
	assert_non_null(x);
	fputc(0, x);
	fclose(x);
	push_soa(&j, 14, 15, 1u << 20);
	assert_int_equal(store(path, &j, 1u << 20, &f, NULL), P53_JSTORE_REWRITE);
	load_same(path, &j, &f);
	/* The chain reset (an AXFR): rewritten even though 15 -> 16 would follow. */
	p53_journal_clear(&j);
	push_soa(&j, 15, 16, 1u << 20);
	assert_int_equal(store(path, &j, 1u << 20, &f, NULL), P53_JSTORE_REWRITE);
	load_same(path, &j, &f);
	assert_int_equal(f.n, 1);
	/* No steps: no file; the first step after that rewrites it. */
	p53_journal_clear(&j);
	assert_int_equal(store(path, &j, 1u << 20, &f, NULL), P53_JSTORE_REMOVE);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(store(path, &j, 1u << 20, &f, NULL), P53_JSTORE_NONE);
	push_soa(&j, 16, 17, 1u << 20);
	assert_int_equal(store(path, &j, 1u << 20, &f, NULL), P53_JSTORE_REWRITE);
	load_same(path, &j, &f);
	unlink(path);
	p53_journal_clear(&j);
	free(path);
}

static void test_store_torn(void **state)
{
	struct p53_journal j = { 0 }, r = { 0 };
	struct p53_jfile f = { 0 }, lf;
	char *path = tmp_path(), err[512];

	(void)state;
	unlink(path);
	for (uint32_t s = 10; s < 13; s++) {
		push_soa(&j, s, s + 1, 1u << 20);
		store(path, &j, 1u << 20, &f, NULL);
	}
	uint64_t two = f.size - (28 + j.steps[2]->del.len + j.steps[2]->add.len + 4);
	/* A crash while 12 -> 13 was appended: its copy never made it (the copy is at 12). */
	static const struct {
		int how;        /* 0 cut short by `by` bytes, 1 zeros for data, 2 a flipped byte */
		size_t by;
	} rows[] = { { 0, 3 }, { 0, 30 }, { 0, 40 }, { 1, 0 }, { 2, 0 } };
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		f.known = 0;
		store(path, &j, 1u << 20, &f, NULL);
		assert_int_equal(f.n, 3);
		int fd = open(path, O_RDWR);
		assert_true(fd >= 0);
		if (rows[i].how == 0) {
			assert_int_equal(ftruncate(fd, (off_t)(f.size - rows[i].by)), 0);
		} else {
			uint8_t z[256] = { 0 };
			size_t n = rows[i].how == 1 ? (size_t)(f.size - two) : 1;
			off_t at = rows[i].how == 1 ? (off_t)two : (off_t)f.size - 10;
			if (rows[i].how == 2) {
				assert_int_equal(pread(fd, z, 1, at), 1);
				z[0] ^= 0x40;
			}
			assert_true(n <= sizeof(z));
			assert_int_equal(pwrite(fd, z, n, at), (ssize_t)n);
		}
		close(fd);
		assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 12, 1u << 20, &lf, err,
						  sizeof(err)), 0);
		if (strstr(err, "torn") == NULL || strstr(err, "kept the 2 step(s)") == NULL)
			fail_msg("row %zu: '%s'", i, err);
		assert_int_equal(r.n, 2);
		same_step(j.steps[1], r.steps[1]);
		assert_int_equal((uint64_t)file_size(path), two);
		assert_true(lf.known);
		assert_int_equal(lf.size, two);
		assert_int_equal(lf.last, 12);
		/* The next start reads it clean; the step appended next follows serial 12. */
		assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 12, 1u << 20, &lf, err,
						  sizeof(err)), 0);
		assert_string_equal(err, "");
		assert_int_equal(lf.size, two);
		push_soa(&r, 12, 13, 1u << 20);
		assert_int_equal(store(path, &r, 1u << 20, &lf, NULL), P53_JSTORE_APPEND);
		load_same(path, &r, &lf);
	}
	/* Torn, and the steps before it do not lead to the copy's serial: ignored. */
	assert_int_equal(truncate(path, (off_t)(f.size - 3)), 0);
	assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 13, 1u << 20, NULL, err,
					  sizeof(err)), -1);
	assert_non_null(strstr(err, "do not lead to serial 13"));
	assert_non_null(strstr(err, "torn"));
	/* A bad checksum that is not in the last step still ignores the whole file. */
	f.known = 0;
	store(path, &j, 1u << 20, &f, NULL);
	int fd = open(path, O_RDWR);
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, 40), 1);
	b ^= 1;
	assert_int_equal(pwrite(fd, &b, 1, 40), 1);
	close(fd);
	assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), 12, 1u << 20, NULL, err,
					  sizeof(err)), -1);
	assert_non_null(strstr(err, "step 1 (10 -> 11): checksum mismatch"));
	unlink(path);
	p53_journal_clear(&r);
	p53_journal_clear(&j);
	free(path);
}

static void test_store_compact(void **state)
{
	struct p53_journal j = { 0 };
	struct p53_jfile f = { 0 };
	char *path = tmp_path();
	int appends = 0, rewrites = 0;

	(void)state;
	unlink(path);
	push_soa(&j, 1, 2, 1u << 20);
	uint64_t step = j.bytes, max = 4 * step;   /* four steps in memory, eight in the file */
	p53_journal_clear(&j);
	for (uint32_t s = 1; s <= 40; s++) {
		push_soa(&j, s, s + 1, max);
		int how = store(path, &j, max, &f, NULL);
		appends += how == P53_JSTORE_APPEND;
		rewrites += how == P53_JSTORE_REWRITE;
		assert_true(j.bytes <= max);
		assert_true(f.bytes <= 2 * max);
		assert_int_equal(f.last, s + 1);
		if (how == P53_JSTORE_REWRITE)
			assert_int_equal(f.bytes, j.bytes);
		/* Read back: the newest steps, bounded by max. */
		struct p53_journal r = { 0 };
		char err[512];
		assert_int_equal(p53_journal_load(&r, path, APEX, sizeof(APEX), s + 1, max, NULL, err,
						  sizeof(err)), 0);
		assert_int_equal(r.n, j.n);
		for (size_t i = 0; i < r.n; i++)
			same_step(j.steps[i], r.steps[i]);
		p53_journal_clear(&r);
	}
	/* The first write; the file grows to 8 steps, the 9th rewrites it with the 4 in memory,
	 * then every 5th: steps 1, 9, 14, 19, 24, 29, 34, 39. */
	assert_int_equal(rewrites, 8);
	assert_int_equal(appends, 40 - rewrites);
	unlink(path);
	p53_journal_clear(&j);
	free(path);
}

/* ---- the lazy disk copy: the journal past the copy's serial ---- */

/* The disk copy of zone.test. at `serial`: its SOA and A 192.0.2.<serial>. */
static void write_copy(const char *path, uint32_t serial)
{
	struct p53_rrs r = { 0 };
	uint8_t a[4] = { 192, 0, 2, (uint8_t)serial };
	char err[512];

	soa(&r, serial);
	assert_int_equal(p53_rrs_add(&r, APEX, sizeof(APEX), 1, 1, 300, a, 4), 0);
	assert_int_equal(p53_store_write(path, "zone.test.", &r, err, sizeof(err)), 0);
	p53_rrs_free(&r);
}

/* rrs holds exactly the SOA of `serial` and A 192.0.2.<serial>. */
static void holds(const struct p53_rrs *r, uint32_t serial)
{
	struct p53_rr_view v;
	size_t pos = 0;
	int soas = 0, as = 0;

	assert_int_equal(r->count, 2);
	assert_int_equal(p53_rrs_soa_serial(r), serial);
	while (p53_rrs_next(r, &pos, &v) == 1) {
		if (v.type == 6) {
			soas++;
		} else {
			assert_int_equal(v.type, 1);
			assert_int_equal(v.rdlen, 4);
			assert_int_equal(v.rdata[3], (uint8_t)serial);
			as++;
		}
	}
	assert_int_equal(soas, 1);
	assert_int_equal(as, 1);
}

static void test_roll_forward(void **state)
{
	struct p53_journal j = { 0 };
	struct p53_rrs r = { 0 };
	char *copy = tmp_path(), *jpath = p53_journal_path(copy), err[1400];
	uint32_t serial = 0;

	(void)state;
	for (uint32_t s = 10; s < 13; s++)
		push_soa(&j, s, s + 1, 1u << 20);
	/* No journal file: the copy as it is. */
	write_copy(copy, 10);
	assert_int_equal(p53_journal_roll_forward(copy, "zone.test.", APEX, sizeof(APEX), &r, &serial,
						  err, sizeof(err)), 0);
	assert_int_equal(r.count, 0);
	write_journal(jpath, &j);
	off_t size = file_size(jpath);
	/* The copy three steps behind: all three applied. */
	assert_int_equal(p53_journal_roll_forward(copy, "zone.test.", APEX, sizeof(APEX), &r, &serial,
						  err, sizeof(err)), 3);
	assert_int_equal(serial, 13);
	holds(&r, 13);
	/* One behind the middle: the steps from its serial on only. */
	write_copy(copy, 11);
	assert_int_equal(p53_journal_roll_forward(copy, "zone.test.", APEX, sizeof(APEX), &r, &serial,
						  err, sizeof(err)), 2);
	holds(&r, 13);
	/* The copy at the journal's end: nothing to apply, the copy is served as it is. */
	write_copy(copy, 13);
	assert_int_equal(p53_journal_roll_forward(copy, "zone.test.", APEX, sizeof(APEX), &r, &serial,
						  err, sizeof(err)), 0);
	assert_int_equal(r.count, 0);
	assert_string_equal(err, "");
	/* A journal that does not lead from the copy's serial is refused, with the reason. */
	write_copy(copy, 9);
	assert_int_equal(p53_journal_roll_forward(copy, "zone.test.", APEX, sizeof(APEX), &r, &serial,
						  err, sizeof(err)), -1);
	assert_int_equal(r.count, 0);
	assert_non_null(strstr(err, "do not lead from serial 9"));
	/* A torn last step (a crash while appending): the good prefix is applied, the file left
	 * as it is (the daemon's own load cuts it later). */
	write_copy(copy, 10);
	assert_int_equal(truncate(jpath, size - 5), 0);
	assert_int_equal(p53_journal_roll_forward(copy, "zone.test.", APEX, sizeof(APEX), &r, &serial,
						  err, sizeof(err)), 2);
	assert_int_equal(serial, 12);
	holds(&r, 12);
	assert_non_null(strstr(err, "torn"));
	assert_int_equal(file_size(jpath), size - 5);
	/* A step that does not apply (its deletion is not in the copy): refused, copy as it is. */
	write_journal(jpath, &j);
	{
		struct p53_rrs b = { 0 };
		uint8_t a[4] = { 192, 0, 2, 99 };
		soa(&b, 10);
		assert_int_equal(p53_rrs_add(&b, APEX, sizeof(APEX), 1, 1, 300, a, 4), 0);
		assert_int_equal(p53_store_write(copy, "zone.test.", &b, err, sizeof(err)), 0);
		p53_rrs_free(&b);
	}
	assert_int_equal(p53_journal_roll_forward(copy, "zone.test.", APEX, sizeof(APEX), &r, &serial,
						  err, sizeof(err)), -1);
	assert_int_equal(r.count, 0);
	assert_non_null(strstr(err, "do not apply"));
	/* The daemon's load with the served (rolled forward) serial keeps every step. */
	struct p53_journal l = { 0 };
	assert_int_equal(p53_journal_load(&l, jpath, APEX, sizeof(APEX), 13, 1u << 20, NULL, err,
					  sizeof(err)), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(file_size(jpath), size);
	p53_journal_clear(&l);
	p53_rrs_free(&r);
	unlink(jpath);
	unlink(copy);
	free(jpath);
	free(copy);
	p53_journal_clear(&j);
}

/* What the disk job decides from the journal file's state (p53_journal_plan). */
static void test_plan(void **state)
{
	struct p53_journal j = { 0 };
	struct p53_jfile f = { 0 };
	size_t first = 99;

	(void)state;
	for (uint32_t s = 1; s < 4; s++)
		push_soa(&j, s, s + 1, 1u << 20);
	/* Unknown file: rewrite. */
	assert_int_equal(p53_journal_plan(&f, j.steps, j.n, j.epoch, 1u << 20, NULL), P53_JSTORE_REWRITE);
	/* The file holds the first two steps of this chain: append from the third. */
	f = (struct p53_jfile){ .known = 1, .epoch = j.epoch, .n = 2, .first = 1, .last = 3,
				.bytes = j.steps[0]->del.len + j.steps[0]->add.len +
					 j.steps[1]->del.len + j.steps[1]->add.len };
	assert_int_equal(p53_journal_plan(&f, j.steps, j.n, j.epoch, 1u << 20, &first), P53_JSTORE_APPEND);
	assert_int_equal(first, 2);
	/* Past twice the bound: compaction (a rewrite: the copy is written first). */
	assert_int_equal(p53_journal_plan(&f, j.steps, j.n, j.epoch, f.bytes / 2, NULL), P53_JSTORE_REWRITE);
	/* Another epoch (an AXFR cleared the chain): rewrite; no steps: remove. */
	assert_int_equal(p53_journal_plan(&f, j.steps, j.n, j.epoch + 1, 1u << 20, NULL), P53_JSTORE_REWRITE);
	assert_int_equal(p53_journal_plan(&f, j.steps, 0, j.epoch, 1u << 20, NULL), P53_JSTORE_REMOVE);
	/* Nothing new. */
	f.last = 4;
	assert_int_equal(p53_journal_plan(&f, j.steps, j.n, j.epoch, 1u << 20, NULL), P53_JSTORE_NONE);
	/* Whether a rewrite of steps 1 -> 2 -> 3 -> 4 keeps leading from a copy's serial (the
	 * lazy copy then need not be written first): a step from it, or the chain's end. */
	assert_true(p53_journal_holds(j.steps, j.n, 1));
	assert_true(p53_journal_holds(j.steps, j.n, 3));
	assert_true(p53_journal_holds(j.steps, j.n, 4));
	assert_false(p53_journal_holds(j.steps, j.n, 5));
	assert_false(p53_journal_holds(j.steps, j.n, 0));
	/* A compaction that dropped the copy's step: no. No steps: no. */
	assert_false(p53_journal_holds(j.steps + 1, j.n - 1, 1));
	assert_false(p53_journal_holds(j.steps, 0, 1));
	/* The first IXFR after an AXFR at serial 1 (a new epoch: the file is rewritten) leads
	 * from the copy the AXFR wrote. */
	struct p53_jfile after_axfr = { .known = 1, .epoch = j.epoch, .n = 0 };
	assert_int_equal(p53_journal_plan(&after_axfr, j.steps, 1, j.epoch, 1u << 20, NULL),
			 P53_JSTORE_REWRITE);
	assert_true(p53_journal_holds(j.steps, 1, 1));
	p53_journal_clear(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_gap_clears),
		cmocka_unit_test(test_refs_outlive),
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_file_roundtrip),
		cmocka_unit_test(test_file_rejected),
		cmocka_unit_test(test_store_append),
		cmocka_unit_test(test_store_torn),
		cmocka_unit_test(test_store_compact),
		cmocka_unit_test(test_roll_forward),
		cmocka_unit_test(test_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
