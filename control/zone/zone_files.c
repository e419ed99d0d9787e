/* Which zones' files changed since their compile; see zone_files.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control/zone/zone_files.h"

int64_t p53_file_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* A word at a time: multiply-rotate, then murmur3's finalizer. Reading dominates. */
static uint64_t mix(uint64_t h, uint64_t w)
{
	h ^= w * 0x9E3779B97F4A7C15ull;
	return rotl(h, 29) * 0xBF58476D1CE4E5B9ull;
}

#define CHUNK (1u << 20)

int p53_file_hash(const char *path, uint64_t *hash, uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	uint8_t *buf = NULL;
	uint64_t h = 0x243F6A8885A308D3ull, total = 0;
	int rc = -1;

	if (fd < 0)
		return -1;
	buf = malloc(CHUNK);
	if (buf == NULL)
		goto out;
	for (;;) {
		size_t got = 0;
		/* Whole chunks (a multiple of 8 bytes), so the hash does not depend on how the
		 * reads were split. */
		while (got < CHUNK) {
			ssize_t r = read(fd, buf + got, CHUNK - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				goto out;
			if (r == 0)
				break;
			got += (size_t)r;
		}
		size_t i = 0;
		for (; i + 8 <= got; i += 8) {
			uint64_t w;
			memcpy(&w, buf + i, 8);
			h = mix(h, w);
		}
		if (i < got) {
			uint64_t w = 0;
			memcpy(&w, buf + i, got - i);
			h = mix(h, w);
		}
		total += got;
		if (got < CHUNK)
			break;
	}
	h ^= total;
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDull;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53ull;
	h ^= h >> 33;
	*hash = h;
	*size = total;
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static void stat_keep(struct p53_file_id *id, const struct stat *st)
{
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_ns = ts_ns(&st->st_mtim);
	id->ctime_ns = ts_ns(&st->st_ctim);
}

static bool stat_same(const struct p53_file_id *id, const struct stat *st)
{
	return id->dev == (uint64_t)st->st_dev && id->ino == (uint64_t)st->st_ino &&
	       id->size == (uint64_t)st->st_size && id->mtime_ns == ts_ns(&st->st_mtim) &&
	       id->ctime_ns == ts_ns(&st->st_ctim);
}

/* The coarse clock's tick: how long a ctime may stay ahead of it. */
static int64_t tick_ns(void)
{
	struct timespec r;

	if (clock_getres(CLOCK_REALTIME_COARSE, &r) != 0)
		return 4000000;
	return ts_ns(&r);
}

int p53_file_id_before(struct p53_file_id *id, const char *path)
{
	struct stat a, b;
	uint64_t size = 0;
	int64_t now = p53_file_clock_ns(), waited = 0;
	const int64_t cap = 2 * tick_ns() + 2000000;

	memset(id, 0, sizeof(*id));
	id->path = strdup(path);
	if (id->path == NULL)
		return -1;
	if (stat(path, &a) != 0)
		return 0;
	/* A ctime the coarse clock has not passed yet (changed within this tick, or stamped
	 * finer by a multigrain kernel) could be given again to a change made after the stat:
	 * wait out the tick. Then every later change stamps a later ctime. */
	while (ts_ns(&a.st_ctim) >= now && waited < cap) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
		waited += 1000000;
		now = p53_file_clock_ns();
		if (stat(path, &a) != 0)
			return 0;
	}
	if (ts_ns(&a.st_ctim) >= now || p53_file_hash(path, &id->hash, &size) != 0 ||
	    stat(path, &b) != 0)
		return 0;
	stat_keep(id, &b);
	id->known = stat_same(id, &a) && size == id->size;
	return 0;
}

int p53_file_id_take(struct p53_file_id *id, const char *path, int64_t since,
		     const struct p53_file_id *before)
{
	struct stat a, b;
	uint64_t size = 0;

	memset(id, 0, sizeof(*id));
	id->path = strdup(path);
	if (id->path == NULL)
		return -1;
	/* Taken before the compile read it, and the stat is the same now: the file did not
	 * change in between (any change stamps a ctime past the one kept). */
	if (before != NULL && before->known && stat(path, &a) == 0 && stat_same(before, &a)) {
		char *keep = id->path;
		*id = *before;
		id->path = keep;
		return 0;
	}
	/* Else stat, read, stat: a file replaced or written while it was read is not known. */
	if (stat(path, &a) != 0 || p53_file_hash(path, &id->hash, &size) != 0 || stat(path, &b) != 0)
		return 0;
	stat_keep(id, &b);
	id->known = stat_same(id, &a) && size == id->size && ts_ns(&b.st_ctim) < since;
	return 0;
}

int p53_file_id_changed(struct p53_file_id *id, int64_t now)
{
	struct stat st;
	uint64_t hash, size;

	if (!id->known || stat(id->path, &st) != 0)
		return 1;
	if (stat_same(id, &st))
		return 0;
	if ((uint64_t)st.st_size != id->size || p53_file_hash(id->path, &hash, &size) != 0 ||
	    size != id->size || hash != id->hash)
		return 1;
	/* The same bytes under a new stat (rsync's rename, a touch): remember the stat, unless
	 * its ctime is so recent that the file may be written again with the same one. A write
	 * between the stat and the read gives a later ctime: the next check reads it again. */
	if (ts_ns(&st.st_ctim) < now)
		stat_keep(id, &st);
	return 0;
}

void p53_file_id_free(struct p53_file_id *id)
{
	free(id->path);
	id->path = NULL;
}

void p53_zone_files_free(struct p53_zone_files *z)
{
	for (size_t i = 0; i < z->n; i++)
		p53_file_id_free(&z->f[i]);
	free(z->f);
	free(z->zone);
	memset(z, 0, sizeof(*z));
}

static bool name_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la > 0 && a[la - 1] == '.')
		la--;
	if (lb > 0 && b[lb - 1] == '.')
		lb--;
	return la == lb && strncasecmp(a, b, la) == 0;
}

static const struct p53_file_id *file_of(const struct p53_zone_files *z, const char *path)
{
	for (size_t i = 0; z != NULL && i < z->n; i++)
		if (strcmp(z->f[i].path, path) == 0)
			return &z->f[i];
	return NULL;
}

/* Take the identity of each of f[0..n) (and `own`) not in `before` yet. */
static int before_add(struct p53_zone_files *before, const struct p53_file_id *f, size_t n,
		      const char *own)
{
	for (size_t i = 0; i <= n; i++) {
		const char *path = i < n ? f[i].path : own;
		if (path == NULL || file_of(before, path) != NULL)
			continue;
		struct p53_file_id *g = realloc(before->f, (before->n + 1) * sizeof(*g));
		if (g == NULL)
			return -1;
		before->f = g;
		if (p53_file_id_before(&g[before->n], path) != 0) {
			p53_file_id_free(&g[before->n]);
			return -1;
		}
		before->n++;
	}
	return 0;
}

struct p53_zone_files *p53_zone_files_find(struct p53_zone_files_set *s, const char *zone)
{
	for (size_t i = 0; i < s->n; i++)
		if (name_eq(s->z[i].zone, zone))
			return &s->z[i];
	return NULL;
}

int p53_zone_files_changed(struct p53_zone_files_set *s, const char *zone, int64_t now,
			   char *which, size_t whichlen)
{
	struct p53_zone_files *z = p53_zone_files_find(s, zone);

	if (whichlen > 0)
		which[0] = '\0';
	if (z == NULL || z->n == 0)
		return 1; /* which stays "": no record of its files */
	for (size_t i = 0; i < z->n; i++)
		if (p53_file_id_changed(&z->f[i], now)) {
			snprintf(which, whichlen, "%s", z->f[i].path);
			return 1;
		}
	return 0;
}

static void zone_remove(struct p53_zone_files_set *s, struct p53_zone_files *z)
{
	size_t i = (size_t)(z - s->z);

	p53_zone_files_free(z);
	memmove(&s->z[i], &s->z[i + 1], (s->n - i - 1) * sizeof(*s->z));
	s->n--;
}

int p53_zone_files_before(const struct p53_zone_files_set *s, const char *zone, const char *own,
			  struct p53_zone_files *before)
{
	for (size_t i = 0; i < s->n; i++)
		if ((zone == NULL || name_eq(s->z[i].zone, zone)) &&
		    before_add(before, s->z[i].f, s->z[i].n, NULL) != 0)
			return -1;
	return before_add(before, NULL, 0, own);
}

/* Fill z (empty, zone set) with files[0..n), each path once. */
static int zone_fill(struct p53_zone_files *z, char *const *files, size_t n, int64_t since,
		     const struct p53_zone_files *before)
{
	z->f = calloc(n ? n : 1, sizeof(*z->f));
	if (z->f == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		bool dup = false;
		for (size_t k = 0; k < z->n && !dup; k++)
			dup = strcmp(z->f[k].path, files[i]) == 0;
		if (dup)
			continue;
		if (p53_file_id_take(&z->f[z->n], files[i], since, file_of(before, files[i])) != 0) {
			p53_file_id_free(&z->f[z->n]);
			return -1;
		}
		z->n++;
	}
	return 0;
}

int p53_zone_files_set_zone(struct p53_zone_files_set *s, const char *zone, char *const *files,
			    size_t n, int64_t since, const struct p53_zone_files *before)
{
	struct p53_zone_files *z = p53_zone_files_find(s, zone);

	if (z == NULL) {
		struct p53_zone_files *g = realloc(s->z, (s->n + 1) * sizeof(*s->z));
		if (g == NULL)
			return -1;
		s->z = g;
		z = &s->z[s->n++];
		memset(z, 0, sizeof(*z));
	} else {
		char *keep = z->zone;
		z->zone = NULL;
		p53_zone_files_free(z);
		z->zone = keep;
	}
	if ((z->zone == NULL && (z->zone = strdup(zone)) == NULL) || zone_fill(z, files, n, since, before) != 0) {
		zone_remove(s, z);
		return -1;
	}
	return 0;
}

int p53_zone_files_set_all(struct p53_zone_files_set *s, const char *const *zones,
			   const char *const *zone_files, size_t nz, char *const *files,
			   size_t n_files, int64_t since, const struct p53_zone_files *before)
{
	size_t next = 0, start = 0, cur = nz;

	p53_zone_files_clear(s);
	/* A file that is the own file of a zone not met yet opens that zone's run (zones
	 * between get no entry); any other file belongs to the run it is in. */
	for (size_t i = 0; i <= n_files; i++) {
		size_t k = next;
		while (i < n_files && k < nz && strcmp(files[i], zone_files[k]) != 0)
			k++;
		if (i < n_files && k == nz)
			continue;
		if (cur < nz && p53_zone_files_set_zone(s, zones[cur], &files[start], i - start,
							since, before) != 0) {
			p53_zone_files_clear(s);
			return -1;
		}
		cur = k;
		start = i;
		next = k + 1;
	}
	return 0;
}

int p53_zone_files_list(const struct p53_zone_files_set *s, char ***files, size_t *n)
{
	size_t cap = 0, k = 0;
	char **out;

	for (size_t i = 0; i < s->n; i++)
		cap += s->z[i].n;
	out = calloc(cap ? cap : 1, sizeof(*out));
	if (out == NULL)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; j < s->z[i].n; j++) {
			bool dup = false;
			for (size_t m = 0; m < k && !dup; m++)
				dup = strcmp(out[m], s->z[i].f[j].path) == 0;
			if (dup)
				continue;
			if ((out[k] = strdup(s->z[i].f[j].path)) == NULL) {
				for (size_t m = 0; m < k; m++)
					free(out[m]);
				free(out);
				return -1;
			}
			k++;
		}
	*files = out;
	*n = k;
	return 0;
}

void p53_zone_files_clear(struct p53_zone_files_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		p53_zone_files_free(&s->z[i]);
	free(s->z);
	s->z = NULL;
	s->n = 0;
}
