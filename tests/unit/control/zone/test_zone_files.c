/*
 * Which zones' files changed since their compile (control/zone/zone_files.c), on real files
 * in a temporary directory, replaced the ways rsync and editors replace them: a rename over
 * the file (new inode), with the old mtime kept (`rsync -t`, `touch -r`), in place.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/zone/zone_files.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/p53-zf-XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name)
{
	static char paths[8][128];
	static int k;

	k = (k + 1) % 8;
	snprintf(paths[k], sizeof(paths[k]), "%s/%s", dir, name);
	return paths[k];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* Write a temp file and rename it over `path` (rsync's way); keep_mtime: `touch -r`. */
static void replace(const char *path, const char *text, int keep_mtime)
{
	char tmp[160];
	struct stat st;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(stat(path, &st), 0);
	put(tmp, text);
	if (keep_mtime) {
		struct timespec ts[2] = { st.st_atim, st.st_mtim };
		assert_int_equal(utimensat(AT_FDCWD, tmp, ts, 0), 0);
	}
	assert_int_equal(rename(tmp, path), 0);
}

/* A `since` after everything written so far (the ctime clock moves in ticks). */
static int64_t settled(void)
{
	usleep(30 * 1000);
	return p53_file_clock_ns();
}

static void test_hash(void **state)
{
	(void)state;
	uint64_t h1, h2, s1, s2;
	size_t big = (1u << 20) + 13; /* past one read chunk, not a multiple of 8 */
	char *a = malloc(big + 1);

	assert_non_null(a);
	memset(a, 'x', big);
	a[big] = '\0';
	put(at("big1"), a);
	put(at("big2"), a);
	assert_int_equal(p53_file_hash(at("big1"), &h1, &s1), 0);
	assert_int_equal(p53_file_hash(at("big2"), &h2, &s2), 0);
	assert_int_equal(s1, big);
	assert_true(h1 == h2);
	a[big - 1] = 'y'; /* the last byte, in the tail word of the second chunk */
	put(at("big2"), a);
	assert_int_equal(p53_file_hash(at("big2"), &h2, &s2), 0);
	assert_true(h1 != h2);
	/* A byte moved between two words changes the hash too; an empty file hashes. */
	put(at("w1"), "abcdefgh12345678");
	put(at("w2"), "12345678abcdefgh");
	assert_int_equal(p53_file_hash(at("w1"), &h1, &s1), 0);
	assert_int_equal(p53_file_hash(at("w2"), &h2, &s2), 0);
	assert_true(h1 != h2);
	put(at("empty"), "");
	assert_int_equal(p53_file_hash(at("empty"), &h1, &s1), 0);
	assert_int_equal(s1, 0);
	assert_int_equal(p53_file_hash(at("missing"), &h1, &s1), -1);
	free(a);
}

static void test_changed(void **state)
{
	(void)state;
	struct p53_file_id id;
	const char *z = at("a.zone");

	put(z, "www 300 IN A 192.0.2.1\n");
	assert_int_equal(p53_file_id_take(&id, z, settled(), NULL), 0);
	assert_true(id.known);
	assert_int_equal(p53_file_id_changed(&id, settled()), 0);

	/* The same bytes renamed over it, mtime kept: a new inode, the same content. */
	replace(z, "www 300 IN A 192.0.2.1\n", 1);
	assert_int_equal(p53_file_id_changed(&id, settled()), 0);
	struct stat st;
	assert_int_equal(stat(z, &st), 0);
	assert_true(id.ino == (uint64_t)st.st_ino); /* the new stat kept: not read again */

	/* Other bytes of the same size, renamed over it with the same mtime (`rsync -t`). */
	replace(z, "www 300 IN A 192.0.2.2\n", 1);
	assert_int_equal(p53_file_id_changed(&id, settled()), 1);
	p53_file_id_free(&id);

	/* Written in place, same size, mtime put back: the ctime tells, the hash confirms. */
	put(z, "www 300 IN A 192.0.2.3\n");
	assert_int_equal(p53_file_id_take(&id, z, settled(), NULL), 0);
	assert_int_equal(stat(z, &st), 0);
	put(z, "www 300 IN A 192.0.2.4\n");
	struct timespec ts[2] = { st.st_atim, st.st_mtim };
	assert_int_equal(utimensat(AT_FDCWD, z, ts, 0), 0);
	assert_int_equal(p53_file_id_changed(&id, settled()), 1);

	/* Gone. */
	assert_int_equal(unlink(z), 0);
	assert_int_equal(p53_file_id_changed(&id, settled()), 1);
	p53_file_id_free(&id);
}

/* A file whose ctime is not before the compile started may have changed under it. */
static void test_written_during_compile(void **state)
{
	(void)state;
	struct p53_file_id id;
	const char *z = at("b.zone");

	int64_t since = settled();
	put(z, "www 300 IN A 192.0.2.1\n");
	assert_int_equal(p53_file_id_take(&id, z, since, NULL), 0);
	assert_false(id.known);
	assert_int_equal(p53_file_id_changed(&id, settled()), 1);
	p53_file_id_free(&id);
	/* Unreadable: unknown. */
	assert_int_equal(p53_file_id_take(&id, at("nothing"), settled(), NULL), 0);
	assert_false(id.known);
	assert_int_equal(p53_file_id_changed(&id, settled()), 1);
	p53_file_id_free(&id);
}

/* Written in place: same size, the mtime put back (the ctime alone tells). */
static void rewrite(const char *path, const char *text)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	put(path, text);
	struct timespec ts[2] = { st.st_atim, st.st_mtim };
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* What a compile does with a file: read it (its bytes are what gets served). */
static void compile_reads(const char *path)
{
	uint64_t h, n;

	assert_int_equal(p53_file_hash(path, &h, &n), 0);
}

/*
 * The identity taken before the compile reads the file: a file replaced right before a
 * reload (its ctime in the coarse clock's current tick, or ahead of it: a multigrain kernel
 * stamps a change after a stat from the fine clock) is known after the compile, so the next
 * reload does not compile it again; a change during or right after the read, in the same
 * tick, is never taken for the bytes the compile read. Many rounds: most fall in one tick.
 */
static void test_before(void **state)
{
	(void)state;
	const char *z = at("c.zone");
	int known = 0;

	put(z, "www 300 IN A 192.0.2.1\n");
	for (int round = 0; round < 200; round++) {
		struct p53_file_id pre, id;
		char text[64];
		/* Replaced and reloaded at once. */
		snprintf(text, sizeof(text), "www 300 IN A 192.0.2.%d\n", 100 + round % 100);
		int64_t since = p53_file_clock_ns();
		replace(z, text, round & 1);
		assert_int_equal(p53_file_id_before(&pre, z), 0);
		compile_reads(z);
		assert_int_equal(p53_file_id_take(&id, z, since, &pre), 0);
		/* Known (the file did not change between), and unchanged at the next reload. */
		assert_true(id.known);
		known += id.known;
		assert_int_equal(p53_file_id_changed(&id, p53_file_clock_ns()), 0);
		p53_file_id_free(&pre);
		p53_file_id_free(&id);

		/* Written during the read (after the identity was taken): never known as read. */
		since = p53_file_clock_ns();
		assert_int_equal(p53_file_id_before(&pre, z), 0);
		rewrite(z, round & 1 ? "www 300 IN A 192.0.2.201\n" : "www 300 IN A 192.0.2.202\n");
		compile_reads(z);
		assert_int_equal(p53_file_id_take(&id, z, since, &pre), 0);
		assert_true(!id.known || id.hash != pre.hash);
		p53_file_id_free(&pre);
		p53_file_id_free(&id);

		/* Written right after the read (and after the identity was kept): changed. */
		since = p53_file_clock_ns();
		assert_int_equal(p53_file_id_before(&pre, z), 0);
		assert_true(pre.known);
		compile_reads(z);
		assert_int_equal(p53_file_id_take(&id, z, since, &pre), 0);
		assert_true(id.known);
		rewrite(z, round & 1 ? "www 300 IN A 192.0.2.203\n" : "www 300 IN A 192.0.2.204\n");
		assert_int_equal(p53_file_id_changed(&id, p53_file_clock_ns()), 1);
		p53_file_id_free(&pre);
		p53_file_id_free(&id);
	}
	assert_int_equal(known, 200);
}

/* A zone's identities before its compile: its entry's files and its own, each once. */
static void test_zone_before(void **state)
{
	(void)state;
	struct p53_zone_files_set s = { 0 };
	struct p53_zone_files pre = { 0 };
	char buf[256];
	char *files[] = { strdup(at("e.zone")), strdup(at("e.inc")) };

	put(files[0], "$INCLUDE e.inc\n");
	put(files[1], "www 300 IN A 192.0.2.1\n");
	assert_int_equal(p53_zone_files_set_zone(&s, "e.test.", files, 2, settled(), NULL), 0);
	/* The include replaced, reloaded at once: the identities before the compile ... */
	int64_t since = p53_file_clock_ns();
	replace(files[1], "www 300 IN A 192.0.2.2\n", 0);
	assert_int_equal(p53_zone_files_changed(&s, "e.test.", since, buf, sizeof(buf)), 1);
	assert_int_equal(p53_zone_files_before(&s, "e.test", files[0], &pre), 0);
	assert_int_equal(pre.n, 2);
	compile_reads(files[0]);
	compile_reads(files[1]);
	/* ... kept after it: the next reload finds nothing changed. */
	assert_int_equal(p53_zone_files_set_zone(&s, "e.test.", files, 2, since, &pre), 0);
	assert_int_equal(p53_zone_files_changed(&s, "e.test.", p53_file_clock_ns(), buf,
						sizeof(buf)), 0);
	/* Without them (since alone), the same reload counts it changed until the next. */
	assert_int_equal(p53_zone_files_set_zone(&s, "e.test.", files, 2, since, NULL), 0);
	assert_int_equal(p53_zone_files_changed(&s, "e.test.", p53_file_clock_ns(), buf,
						sizeof(buf)), 1);
	p53_zone_files_free(&pre);
	p53_zone_files_clear(&s);
	free(files[0]);
	free(files[1]);
}

/* A compile reads a zone's file, then its $INCLUDEs, then the next zone's file. */
static void test_set_all(void **state)
{
	(void)state;
	struct p53_zone_files_set s = { 0 };
	const char *names[] = { "a.test.", "b.test.", "c.test.", "d.test." };
	char *zf[4], *files[7];
	char buf[256];

	zf[0] = strdup(at("a.zone"));
	zf[1] = strdup(at("b.zone"));
	zf[2] = strdup(at("c.zone"));
	zf[3] = strdup(at("d.zone")); /* not read: no entry */
	files[0] = strdup(at("before"));
	files[1] = zf[0];
	files[2] = strdup(at("a.inc"));
	files[3] = zf[1];
	files[4] = strdup(at("b.inc1"));
	files[5] = strdup(at("b.inc2"));
	files[6] = zf[2];
	for (size_t i = 0; i < 7; i++)
		put(files[i], "x\n");
	int64_t since = settled();
	assert_int_equal(p53_zone_files_set_all(&s, names, (const char *const *)zf, 4, files, 7,
						since, NULL), 0);
	assert_int_equal(s.n, 3);
	struct p53_zone_files *a = p53_zone_files_find(&s, "A.test");
	struct p53_zone_files *b = p53_zone_files_find(&s, "b.test.");
	struct p53_zone_files *c = p53_zone_files_find(&s, "c.test");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_null(p53_zone_files_find(&s, "d.test"));
	assert_int_equal(a->n, 2);
	assert_string_equal(a->f[1].path, files[2]);
	assert_int_equal(b->n, 3);
	assert_string_equal(b->f[2].path, files[5]);
	assert_int_equal(c->n, 1);

	int64_t now = settled();
	assert_int_equal(p53_zone_files_changed(&s, "a.test.", now, buf, sizeof(buf)), 0);
	assert_int_equal(p53_zone_files_changed(&s, "d.test.", now, buf, sizeof(buf)), 1);
	/* An include replaced: its zone alone changed, and says which file. */
	replace(files[5], "y\n", 1);
	now = settled();
	assert_int_equal(p53_zone_files_changed(&s, "b.test.", now, buf, sizeof(buf)), 1);
	assert_string_equal(buf, files[5]);
	assert_int_equal(p53_zone_files_changed(&s, "a.test.", now, buf, sizeof(buf)), 0);
	assert_int_equal(p53_zone_files_changed(&s, "c.test.", now, buf, sizeof(buf)), 0);

	/* b compiled again, without its first include: replaced, the rest kept. */
	char *b_now[] = { zf[1], files[5] };
	assert_int_equal(p53_zone_files_set_zone(&s, "b.test.", b_now, 2, settled(), NULL), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(p53_zone_files_changed(&s, "b.test.", settled(), buf, sizeof(buf)), 0);
	/* The watch list: every file once. */
	char **all = NULL;
	size_t n_all = 0;
	char *again[] = { zf[2], zf[2], files[2] };
	assert_int_equal(p53_zone_files_set_zone(&s, "c.test.", again, 3, settled(), NULL), 0);
	assert_int_equal(p53_zone_files_find(&s, "c.test.")->n, 2);
	assert_int_equal(p53_zone_files_list(&s, &all, &n_all), 0);
	assert_int_equal(n_all, 5); /* a.zone a.inc b.zone b.inc2 c.zone */
	for (size_t i = 0; i < n_all; i++)
		free(all[i]);
	free(all);
	p53_zone_files_clear(&s);
	assert_int_equal(s.n, 0);
	for (size_t i = 0; i < 7; i++)
		free(files[i]);
	free(zf[3]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_changed),
		cmocka_unit_test(test_written_during_compile),
		cmocka_unit_test(test_set_all),
		cmocka_unit_test(test_before),
		cmocka_unit_test(test_zone_before),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
