/* The IXFR history of a zone, in memory and in its file; see journal.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control/xfr/journal.h"
#include "control/xfr/store.h"

#define JNL_MAGIC "POP53JNL"
#define JNL_VERSION 1
#define JNL_STEP_HDR 28                 /* "STEP" and six u32 */
#define JNL_MAX_FILE (UINT64_C(1) << 32)/* a file larger than this is not ours */

void p53_jstep_get(struct p53_jstep *s)
{
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void p53_jstep_put(struct p53_jstep *s)
{
	if (s == NULL || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	p53_rrs_free(&s->del);
	p53_rrs_free(&s->add);
	free(s);
}

void p53_journal_clear(struct p53_journal *j)
{
	uint64_t epoch = j->epoch;

	for (size_t i = 0; i < j->n; i++)
		p53_jstep_put(j->steps[i]);
	free(j->steps);
	memset(j, 0, sizeof(*j));
	j->epoch = epoch + 1;
}

static void drop_oldest(struct p53_journal *j)
{
	struct p53_jstep *s = j->steps[0];

	j->bytes -= s->del.len + s->add.len;
	memmove(j->steps, j->steps + 1, sizeof(*j->steps) * (j->n - 1));
	j->n--;
	p53_jstep_put(s);
}

int p53_journal_push(struct p53_journal *j, const struct p53_ixfr *d, uint64_t max_bytes)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct p53_ixfr_step *st = &d->steps[i];
		if (j->n > 0 && j->steps[j->n - 1]->to != st->from)
			p53_journal_clear(j);
		if (j->n == j->cap) {
			size_t cap = j->cap ? j->cap * 2 : 16;
			struct p53_jstep **ns = realloc(j->steps, cap * sizeof(*ns));
			if (ns == NULL)
				goto oom;
			j->steps = ns;
			j->cap = cap;
		}
		struct p53_jstep *s = calloc(1, sizeof(*s));
		if (s == NULL)
			goto oom;
		s->refs = 1;
		s->from = st->from;
		s->to = st->to;
		if (p53_rrs_append(&s->del, &st->del) != 0 || p53_rrs_append(&s->add, &st->add) != 0) {
			p53_jstep_put(s);
			goto oom;
		}
		j->steps[j->n++] = s;
		j->bytes += s->del.len + s->add.len;
	}
	while (j->n > 0 && j->bytes > max_bytes)
		drop_oldest(j);
	return 0;
oom:
	p53_journal_clear(j);
	return -1;
}

int p53_journal_chain(const struct p53_journal *j, uint32_t from, uint32_t to,
		      struct p53_jstep **out, size_t *n)
{
	size_t i = 0;

	while (i < j->n && j->steps[i]->from != from)
		i++;
	if (i == j->n)
		return -1;
	size_t k = i;
	while (k < j->n && j->steps[k]->to != to)
		k++;
	if (k == j->n)
		return -1;
	*n = 0;
	for (; i <= k; i++) {
		p53_jstep_get(j->steps[i]);
		out[(*n)++] = j->steps[i];
	}
	return 0;
}

/* ---- the file ---- */

uint32_t p53_crc32c(uint32_t crc, const void *p, size_t n)
{
	static uint32_t table[256];
	static int ready;
	const uint8_t *b = p;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		/* Idempotent: two threads that race write the same values. */
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
			table[i] = c;
		}
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	crc = ~crc;
	for (size_t i = 0; i < n; i++)
		crc = table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

char *p53_journal_path(const char *copy)
{
	char *p = NULL;

	return asprintf(&p, "%s.journal", copy) < 0 ? NULL : p;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int write_all(FILE *f, const void *p, size_t n, uint32_t *crc)
{
	if (crc != NULL)
		*crc = p53_crc32c(*crc, p, n);
	return n == 0 || fwrite(p, 1, n, f) == n ? 0 : -1;
}

static size_t file_header(uint8_t *hdr, const uint8_t *apex, size_t apex_len)
{
	memcpy(hdr, JNL_MAGIC, 8);
	put32(hdr + 8, JNL_VERSION);
	hdr[12] = (uint8_t)apex_len;
	memcpy(hdr + 13, apex, apex_len);
	return 13 + apex_len;
}

/* One step record: header, records, checksum. @return 0, -1 errno set, -2 too large. */
static int write_step(FILE *f, const struct p53_jstep *s)
{
	uint8_t sh[JNL_STEP_HDR], tail[4];
	uint32_t crc = 0;

	if (s->del.len > UINT32_MAX || s->add.len > UINT32_MAX)
		return -2;
	memcpy(sh, "STEP", 4);
	put32(sh + 4, s->from);
	put32(sh + 8, s->to);
	put32(sh + 12, s->del.count);
	put32(sh + 16, s->add.count);
	put32(sh + 20, (uint32_t)s->del.len);
	put32(sh + 24, (uint32_t)s->add.len);
	if (write_all(f, sh, sizeof(sh), &crc) != 0 ||
	    write_all(f, s->del.buf, s->del.len, &crc) != 0 ||
	    write_all(f, s->add.buf, s->add.len, &crc) != 0)
		return -1;
	put32(tail, crc);
	return write_all(f, tail, 4, NULL);
}

static uint64_t step_size(const struct p53_jstep *s)
{
	return JNL_STEP_HDR + s->del.len + s->add.len + 4;
}

int p53_journal_write(const char *path, const uint8_t *apex, size_t apex_len,
		      struct p53_jstep *const *steps, size_t n, char *err, size_t errlen)
{
	char *tmp = NULL;
	FILE *f = NULL;
	uint8_t hdr[13 + 255];

	if (n == 0) {
		if (unlink(path) != 0 && errno != ENOENT) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		return 0;
	}
	f = p53_store_tmp_open(path, &tmp, err, errlen);
	if (f == NULL)
		return -1;
	if (write_all(f, hdr, file_header(hdr, apex, apex_len), NULL) != 0)
		goto io;
	for (size_t i = 0; i < n; i++) {
		int rc = write_step(f, steps[i]);
		if (rc == -2) {
			snprintf(err, errlen, "%s: a step of %u -> %u is too large", tmp, steps[i]->from,
				 steps[i]->to);
			goto fail;
		}
		if (rc != 0)
			goto io;
	}
	return p53_store_tmp_commit(f, tmp, path, err, errlen);
io:
	snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
fail:
	p53_store_tmp_abort(f, tmp);
	return -1;
}

/* Append steps[0..n) at the file's end, f->size; fsync. @return 0, 1 not as left, -1 err. */
static int append_steps(const char *path, struct p53_jstep *const *steps, size_t n,
			const struct p53_jfile *jf, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	struct stat st;
	FILE *f;

	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* Someone else's file, or not the length its writer left: write it anew. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != jf->size) {
		close(fd);
		return 1;
	}
	f = fdopen(fd, "w");
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	if (fseeko(f, (off_t)jf->size, SEEK_SET) != 0)
		goto io;
	for (size_t i = 0; i < n; i++) {
		int rc = write_step(f, steps[i]);
		if (rc == -2) {
			snprintf(err, errlen, "%s: a step of %u -> %u is too large", path,
				 steps[i]->from, steps[i]->to);
			goto cut;
		}
		if (rc != 0)
			goto io;
	}
	if (fflush(f) != 0 || fdatasync(fileno(f)) != 0)
		goto io;
	if (fclose(f) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
io:
	snprintf(err, errlen, "%s: append: %s", path, strerror(errno));
cut:
	/* Best effort: the file as it was (a torn step would be cut at the next start anyway). */
	fflush(f);
	if (ftruncate(fileno(f), (off_t)jf->size) != 0) {
		/* nothing more to do: known = 0 makes the next store rewrite it */
	}
	fclose(f);
	return -1;
}

int p53_journal_plan(const struct p53_jfile *f, struct p53_jstep *const *steps, size_t n,
		     uint64_t epoch, uint64_t max_bytes, size_t *first)
{
	if (n == 0)
		return f->known && f->epoch == epoch && f->n == 0 ? P53_JSTORE_NONE : P53_JSTORE_REMOVE;
	if (f->known && f->epoch == epoch && f->n > 0) {
		if (steps[n - 1]->to == f->last)
			return P53_JSTORE_NONE;
		/* The file's chain goes on with steps[i..n): the one from its last serial on (the
		 * steps before it are in the file; none: the journal moved past it, rewrite). */
		size_t i = n;
		while (i > 0 && steps[i - 1]->from != f->last)
			i--;
		i = i > 0 ? i - 1 : n;
		uint64_t recs = 0;
		for (size_t k = i; k < n; k++)
			recs += steps[k]->del.len + steps[k]->add.len;
		if (i < n && f->bytes + recs <= 2 * max_bytes) {
			if (first != NULL)
				*first = i;
			return P53_JSTORE_APPEND;
		}
	}
	return P53_JSTORE_REWRITE;
}

bool p53_journal_holds(struct p53_jstep *const *steps, size_t n, uint32_t copy)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (steps[i]->from == copy)
			return true;
	return steps[n - 1]->to == copy;
}

int p53_journal_store(const char *path, const uint8_t *apex, size_t apex_len,
		      struct p53_jstep *const *steps, size_t n, uint64_t epoch, uint64_t max_bytes,
		      struct p53_jfile *f, uint64_t *written, char *err, size_t errlen)
{
	struct p53_jfile nf = { .known = 1, .epoch = epoch };
	uint64_t w = 0;
	size_t i = 0;
	int how = p53_journal_plan(f, steps, n, epoch, max_bytes, &i);

	if (written != NULL)
		*written = 0;
	if (how == P53_JSTORE_NONE)
		return how;
	if (how == P53_JSTORE_REMOVE) {
		f->known = 0;
		if (p53_journal_write(path, apex, apex_len, steps, 0, err, errlen) != 0)
			return -1;
		*f = nf;
		return P53_JSTORE_REMOVE;
	}
	if (how == P53_JSTORE_APPEND) {
		uint64_t add = 0, recs = 0;
		for (size_t k = i; k < n; k++) {
			add += step_size(steps[k]);
			recs += steps[k]->del.len + steps[k]->add.len;
		}
		struct p53_jfile old = *f;
		f->known = 0;
		int rc = append_steps(path, steps + i, n - i, &old, err, errlen);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			*f = old;
			f->n += (uint32_t)(n - i);
			f->last = steps[n - 1]->to;
			f->bytes += recs;
			f->size += add;
			if (written != NULL)
				*written = add;
			return P53_JSTORE_APPEND;
		}
	}
	f->known = 0;
	if (p53_journal_write(path, apex, apex_len, steps, n, err, errlen) != 0)
		return -1;
	nf.n = (uint32_t)n;
	nf.first = steps[0]->from;
	nf.last = steps[n - 1]->to;
	w = 13 + apex_len;
	for (size_t k = 0; k < n; k++) {
		w += step_size(steps[k]);
		nf.bytes += steps[k]->del.len + steps[k]->add.len;
	}
	nf.size = w;
	*f = nf;
	if (written != NULL)
		*written = w;
	return P53_JSTORE_REWRITE;
}

/* Records in buf[0..len): exactly `count` well-framed ones, the first a SOA of `serial`. */
static int records_ok(const uint8_t *buf, size_t len, uint32_t count, uint32_t serial)
{
	struct p53_rrs r = { .buf = (uint8_t *)buf, .len = len, .cap = len, .count = count };
	struct p53_rr_view v;
	size_t pos = 0;
	uint32_t k = 0;
	int rc;

	while ((rc = p53_rrs_next(&r, &pos, &v)) == 1) {
		if (k == 0 && v.type != 6 /* SOA */)
			return -1;
		k++;
	}
	return rc == 0 && k == count && count > 0 && p53_rrs_soa_serial(&r) == (int64_t)serial ? 0 : -1;
}

static int jfail(char *err, size_t errlen, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int jfail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "%s: ", path);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A new step with copies of its records. */
static struct p53_jstep *step_new(uint32_t from, uint32_t to, const uint8_t *del, size_t dlen,
				  uint32_t dcount, const uint8_t *add, size_t alen, uint32_t acount)
{
	struct p53_jstep *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->refs = 1;
	s->from = from;
	s->to = to;
	s->del.buf = malloc(dlen);
	s->add.buf = malloc(alen);
	if (s->del.buf == NULL || s->add.buf == NULL) {
		p53_jstep_put(s);
		return NULL;
	}
	memcpy(s->del.buf, del, dlen);
	memcpy(s->add.buf, add, alen);
	s->del.len = s->del.cap = dlen;
	s->add.len = s->add.cap = alen;
	s->del.count = dcount;
	s->add.count = acount;
	return s;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

/* p53_journal_load, or with `all` p53_journal_read: every good step kept, the file untouched. */
static int load_file(struct p53_journal *j, const char *path, const uint8_t *apex,
		     size_t apex_len, uint32_t serial, uint64_t max_bytes, struct p53_jfile *jf,
		     bool all, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *buf = NULL;
	int rc = -1;
	FILE *f;
	char torn[400] = "";

	p53_journal_clear(j);
	if (jf != NULL)
		memset(jf, 0, sizeof(*jf));
	err[0] = '\0';
	f = fopen(path, "rbe");
	if (f == NULL) {
		if (errno == ENOENT) {
			if (jf != NULL)
				*jf = (struct p53_jfile){ .known = 1, .epoch = j->epoch };
			return 1;
		}
		return jfail(err, errlen, path, "%s", strerror(errno));
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		jfail(err, errlen, path, "not a regular file");
		goto out;
	}
	if ((uint64_t)st.st_size >= JNL_MAX_FILE) {
		jfail(err, errlen, path, "too large (%lld bytes)", (long long)st.st_size);
		goto out;
	}
	size_t len = (size_t)st.st_size;
	buf = malloc(len ? len : 1);
	if (buf == NULL) {
		jfail(err, errlen, path, "out of memory");
		goto out;
	}
	if (len > 0 && fread(buf, 1, len, f) != len) {
		jfail(err, errlen, path, "read error");
		goto out;
	}
	if (len < 13 || memcmp(buf, JNL_MAGIC, 8) != 0) {
		jfail(err, errlen, path, "not a pop53 journal (bad header)");
		goto out;
	}
	if (get32(buf + 8) != JNL_VERSION) {
		jfail(err, errlen, path, "journal version %u, not %u", get32(buf + 8), JNL_VERSION);
		goto out;
	}
	if (buf[12] != apex_len || len < 13u + apex_len || memcmp(buf + 13, apex, apex_len) != 0) {
		jfail(err, errlen, path, "the journal of another zone");
		goto out;
	}
	size_t pos = 13u + apex_len, keep = SIZE_MAX, keep_end = pos;
	uint64_t keep_bytes = 0;
	for (size_t k = 0; pos < len; k++) {
		const uint8_t *h = buf + pos;
		size_t left = len - pos;
		/*
		 * The last step, cut short or not checksummed right, or zeros to the end: a crash
		 * while it was appended (the file's length made durable before its data). The
		 * steps before it are good; anything else wrong ignores the whole file.
		 */
		if (left < JNL_STEP_HDR + 4 || all_zero(h, left)) {
			if (memcmp(h, "STEP", left < 4 ? left : 4) != 0 && !all_zero(h, left)) {
				jfail(err, errlen, path, "step %zu at byte %zu: bad marker", k + 1, pos);
				goto fail;
			}
			snprintf(torn, sizeof(torn), "step %zu at byte %zu: torn (%zu bytes)", k + 1, pos,
				 left);
			break;
		}
		if (memcmp(h, "STEP", 4) != 0) {
			jfail(err, errlen, path, "step %zu at byte %zu: bad marker", k + 1, pos);
			goto fail;
		}
		uint32_t from = get32(h + 4), to = get32(h + 8), dc = get32(h + 12), ac = get32(h + 16);
		size_t dl = get32(h + 20), al = get32(h + 24);
		if (dl > left - JNL_STEP_HDR - 4 || al > left - JNL_STEP_HDR - 4 - dl) {
			snprintf(torn, sizeof(torn), "step %zu (%u -> %u) at byte %zu: torn (%zu of %zu bytes)",
				 k + 1, from, to, pos, left, (size_t)JNL_STEP_HDR + dl + al + 4);
			break;
		}
		const uint8_t *del = h + JNL_STEP_HDR, *add = del + dl;
		size_t end = pos + JNL_STEP_HDR + dl + al + 4;
		if (p53_crc32c(0, h, JNL_STEP_HDR + dl + al) != get32(add + al)) {
			if (end == len) {
				snprintf(torn, sizeof(torn), "step %zu (%u -> %u) at byte %zu: torn "
					 "(checksum mismatch in the last step)", k + 1, from, to, pos);
				break;
			}
			jfail(err, errlen, path, "step %zu (%u -> %u): checksum mismatch", k + 1, from, to);
			goto fail;
		}
		if (records_ok(del, dl, dc, from) != 0 || records_ok(add, al, ac, to) != 0) {
			jfail(err, errlen, path, "step %zu (%u -> %u): malformed records", k + 1, from, to);
			goto fail;
		}
		if (j->n > 0 && j->steps[j->n - 1]->to != from) {
			jfail(err, errlen, path, "step %zu (%u -> %u) does not follow serial %u", k + 1,
			      from, to, j->steps[j->n - 1]->to);
			goto fail;
		}
		if (j->n == j->cap) {
			size_t cap = j->cap ? j->cap * 2 : 16;
			struct p53_jstep **ns = realloc(j->steps, cap * sizeof(*ns));
			if (ns == NULL) {
				jfail(err, errlen, path, "out of memory");
				goto fail;
			}
			j->steps = ns;
			j->cap = cap;
		}
		struct p53_jstep *s = step_new(from, to, del, dl, dc, add, al, ac);
		if (s == NULL) {
			jfail(err, errlen, path, "out of memory");
			goto fail;
		}
		j->steps[j->n++] = s;
		j->bytes += dl + al;
		pos = end;
		if (to == serial && keep == SIZE_MAX) {
			keep = j->n;
			keep_end = pos;
			keep_bytes = j->bytes;
		}
	}
	if (j->n == 0 && torn[0] == '\0') {
		/* A header alone: nothing to serve, the file as it is can be appended to. */
		if (jf != NULL)
			*jf = (struct p53_jfile){ .known = 1, .epoch = j->epoch, .size = len };
		rc = 1;
		goto out;
	}
	if (all) {
		if (j->n == 0) {
			jfail(err, errlen, path, "%s, no step before it", torn);
			goto fail;
		}
		if (torn[0] != '\0')
			jfail(err, errlen, path, "%s", torn);
		rc = 0;
		goto out;
	}
	if (keep == SIZE_MAX) {
		if (j->n == 0)
			jfail(err, errlen, path, "%s, no step before it", torn);
		else
			jfail(err, errlen, path, "its steps (%u -> %u) do not lead to serial %u, the disk "
			      "copy's%s%s", j->steps[0]->from, j->steps[j->n - 1]->to, serial,
			      torn[0] ? "; " : "", torn);
		goto fail;
	}
	/* Steps past the disk copy's serial: the journal was written, the copy after it was not. */
	size_t cut = j->n - keep;
	while (j->n > keep) {
		struct p53_jstep *s = j->steps[--j->n];
		j->bytes -= s->del.len + s->add.len;
		p53_jstep_put(s);
	}
	/* Cut the file to what is kept, so the next step is appended right after it. */
	int trunc_ok = 1;
	if (keep_end < len) {
		trunc_ok = truncate(path, (off_t)keep_end) == 0;
		char more[64] = "";
		if (cut > 0)
			snprintf(more, sizeof(more), "%s%zu step(s) past serial %u", torn[0] ? "; " : "",
				 cut, serial);
		jfail(err, errlen, path, "%s%s: kept the %zu step(s) before (to serial %u); %s %zu bytes",
		      torn, more, keep, serial, trunc_ok ? "file truncated to" : "could not truncate to",
		      keep_end);
	}
	if (jf != NULL && trunc_ok)
		*jf = (struct p53_jfile){ .known = 1, .epoch = j->epoch, .n = (uint32_t)keep,
					  .first = j->steps[0]->from, .last = serial,
					  .bytes = keep_bytes, .size = keep_end };
	while (j->n > 0 && j->bytes > max_bytes)
		drop_oldest(j);
	rc = 0;
	goto out;
fail:
	p53_journal_clear(j);
out:
	free(buf);
	fclose(f);
	return rc;
}

int p53_journal_load(struct p53_journal *j, const char *path, const uint8_t *apex,
		     size_t apex_len, uint32_t serial, uint64_t max_bytes, struct p53_jfile *jf,
		     char *err, size_t errlen)
{
	return load_file(j, path, apex, apex_len, serial, max_bytes, jf, false, err, errlen);
}

int p53_journal_read(struct p53_journal *j, const char *path, const uint8_t *apex,
		     size_t apex_len, char *err, size_t errlen)
{
	return load_file(j, path, apex, apex_len, 0, UINT64_MAX, NULL, true, err, errlen);
}

int p53_journal_roll_forward(const char *copy, const char *zone, const uint8_t *apex,
			     size_t apex_len, struct p53_rrs *rrs, uint32_t *serial, char *err,
			     size_t errlen)
{
	struct p53_journal j = { 0 };
	uint32_t have, expire;
	time_t mtime;
	char *path = p53_journal_path(copy);
	int rc;

	err[0] = '\0';
	p53_rrs_free(rrs);
	if (path == NULL) {
		snprintf(err, errlen, "%s: out of memory", copy);
		return -1;
	}
	if (p53_store_soa(copy, zone, &have, &expire, &mtime) != 0) {
		free(path);
		return 0; /* the compile says what is wrong with the copy */
	}
	rc = p53_journal_read(&j, path, apex, apex_len, err, errlen);
	if (rc != 0) {
		rc = rc > 0 ? 0 : -1; /* no file, or no step: the copy as it is */
		goto out;
	}
	size_t i = 0;
	while (i < j.n && j.steps[i]->from != have)
		i++;
	if (i == j.n) {
		/* Ends at the copy's serial (nothing to apply), or does not chain to it. */
		if (j.steps[j.n - 1]->to != have) {
			snprintf(err, errlen, "%s: its steps (%u -> %u) do not lead from serial %u, the "
				 "disk copy's", path, j.steps[0]->from, j.steps[j.n - 1]->to, have);
			rc = -1;
		}
		goto out;
	}
	struct p53_ixfr d = { .n = j.n - i, .cap = j.n - i };
	struct p53_rrs base = { 0 };
	if (p53_store_read(copy, zone, &base, err, errlen) != 0) {
		rc = -1;
		goto out;
	}
	d.steps = calloc(d.n, sizeof(*d.steps));
	if (d.steps == NULL) {
		p53_rrs_free(&base);
		snprintf(err, errlen, "%s: out of memory", path);
		rc = -1;
		goto out;
	}
	for (size_t k = 0; k < d.n; k++) {
		/* Views of the steps' records: the journal keeps them. */
		d.steps[k].from = j.steps[i + k]->from;
		d.steps[k].to = j.steps[i + k]->to;
		d.steps[k].del = j.steps[i + k]->del;
		d.steps[k].add = j.steps[i + k]->add;
	}
	char aerr[400];
	rc = p53_ixfr_apply_inplace(&base, &d, aerr, sizeof(aerr));
	free(d.steps);
	if (rc != 0) {
		snprintf(err, errlen, "%s: steps %u -> %u do not apply to the disk copy: %s", path,
			 j.steps[i]->from, j.steps[j.n - 1]->to, aerr);
		p53_rrs_free(&base);
		rc = -1;
		goto out;
	}
	p53_rrs_move(rrs, &base);
	*serial = j.steps[j.n - 1]->to;
	rc = (int)(j.n - i);
out:
	p53_journal_clear(&j);
	free(path);
	return rc;
}
