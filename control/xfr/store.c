/* Disk copies of secondary zones; see store.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <ldns/ldns.h>

#include "control/conf/schema.h"
#include "control/xfr/journal.h"
#include "control/xfr/store.h"

/* mkdir -p of the directory holding `path`. */
static int make_dir(const char *path)
{
	char *d = strdup(path), *p;

	if (d == NULL)
		return -1;
	p = strrchr(d, '/');
	if (p == NULL || p == d) {
		free(d);
		return 0;
	}
	*p = '\0';
	for (p = d + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(d, 0750) != 0 && errno != EEXIST)
			goto fail;
		*p = '/';
	}
	if (mkdir(d, 0750) != 0 && errno != EEXIST)
		goto fail;
	free(d);
	return 0;
fail:
	free(d);
	return -1;
}

static int put_rr(FILE *f, const struct p53_rr_view *v)
{
	ldns_rr *rr = p53_rr_view_ldns(v);
	char *s = rr != NULL ? ldns_rr2str(rr) : NULL;
	int rc = s != NULL && fputs(s, f) >= 0 ? 0 : -1;

	free(s);
	if (rr != NULL)
		ldns_rr_free(rr);
	return rc;
}

FILE *p53_store_tmp_open(const char *path, char **tmp, char *err, size_t errlen)
{
	FILE *f;
	int fd;

	if (asprintf(tmp, "%s.tmp.XXXXXX", path) < 0) {
		*tmp = NULL;
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	fd = mkstemp(*tmp);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "%s: %s", *tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

void p53_store_tmp_abort(FILE *f, char *tmp)
{
	if (f != NULL)
		fclose(f);
	if (tmp != NULL)
		unlink(tmp);
	free(tmp);
}

int p53_store_tmp_commit(FILE *f, char *tmp, const char *path, char *err, size_t errlen)
{
	int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;

	if (fclose(f) != 0 || bad) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		p53_store_tmp_abort(NULL, tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "%s: rename to %s: %s", tmp, path, strerror(errno));
		p53_store_tmp_abort(NULL, tmp);
		return -1;
	}
	free(tmp);
	/* The rename itself is durable once the directory is. */
	char *dcopy = strdup(path);
	if (dcopy != NULL) {
		int dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dcopy);
	}
	return 0;
}

int p53_store_write(const char *path, const char *zone, const struct p53_rrs *rrs, char *err,
		    size_t errlen)
{
	char *tmp = NULL;
	FILE *f = NULL;
	struct p53_rr_view v;
	size_t pos;
	time_t now = time(NULL);
	char when[64];

	if (make_dir(path) != 0) {
		snprintf(err, errlen, "%s: cannot create its directory: %s", path, strerror(errno));
		return -1;
	}
	f = p53_store_tmp_open(path, &tmp, err, errlen);
	if (f == NULL)
		return -1;
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
	fprintf(f, "; %s: last good version, written by pop53d at %s (%u records).\n"
		   "; pop53d rewrites this file after every transfer; do not edit it.\n",
		zone, when, rrs->count);
	/* RFC 1035 §5.2: the SOA first. */
	for (int pass = 0; pass < 2; pass++) {
		int k;
		pos = 0;
		while ((k = p53_rrs_next(rrs, &pos, &v)) == 1) {
			if ((v.type == LDNS_RR_TYPE_SOA) != (pass == 0))
				continue;
			if (put_rr(f, &v) != 0) {
				snprintf(err, errlen, "%s: cannot write a record of type %u", tmp, v.type);
				goto fail;
			}
			if (pass == 0)
				break;
		}
		if (k < 0) {
			snprintf(err, errlen, "%s: malformed records", tmp);
			goto fail;
		}
	}
	return p53_store_tmp_commit(f, tmp, path, err, errlen);
fail:
	p53_store_tmp_abort(f, tmp);
	return -1;
}

int p53_store_remove(const char *path, char *err, size_t errlen)
{
	char *jpath = p53_journal_path(path);

	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(jpath);
		return -1;
	}
	if (jpath == NULL || (unlink(jpath) != 0 && errno != ENOENT)) {
		snprintf(err, errlen, "%s: %s", jpath ? jpath : path, jpath ? strerror(errno) : "out of memory");
		free(jpath);
		return -1;
	}
	free(jpath);
	return 0;
}

void p53_store_touch(const char *path)
{
	(void)utimensat(AT_FDCWD, path, NULL, 0);
}

/* Records of a master file one by one, handed to `fn` until it returns non-zero. */
static int each_rr(const char *path, const char *zone, int (*fn)(void *, ldns_rr *), void *arg,
		   char *err, size_t errlen)
{
	FILE *f = p53_fopen_regular(path);
	ldns_rdf *origin = NULL, *prev = NULL;
	uint32_t ttl = 3600;
	int line = 0, rc = -1;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, errno == EINVAL ? "not a regular file" : strerror(errno));
		return -1;
	}
	if (ldns_str2rdf_dname(&origin, zone) != LDNS_STATUS_OK) {
		snprintf(err, errlen, "%s: bad zone name '%s'", path, zone);
		goto out;
	}
	prev = ldns_rdf_clone(origin);
	while (!feof(f)) {
		ldns_rr *rr = NULL;
		ldns_status st = ldns_rr_new_frm_fp_l(&rr, f, &ttl, &origin, &prev, &line);
		if (st == LDNS_STATUS_SYNTAX_EMPTY || st == LDNS_STATUS_SYNTAX_TTL ||
		    st == LDNS_STATUS_SYNTAX_ORIGIN)
			continue;
		if (st != LDNS_STATUS_OK) {
			snprintf(err, errlen, "%s:%d: %s", path, line, ldns_get_errorstr_by_id(st));
			goto out;
		}
		int stop = fn(arg, rr);
		ldns_rr_free(rr);
		if (stop < 0) {
			snprintf(err, errlen, "%s:%d: out of memory", path, line);
			goto out;
		}
		if (stop > 0)
			break;
	}
	rc = 0;
out:
	ldns_rdf_deep_free(origin);
	ldns_rdf_deep_free(prev);
	fclose(f);
	return rc;
}

struct soa_find {
	uint32_t serial, expire;
	int found;
};

static int soa_fn(void *arg, ldns_rr *rr)
{
	struct soa_find *s = arg;

	if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_SOA || ldns_rr_rd_count(rr) != 7)
		return 0;
	s->serial = ldns_rdf2native_int32(ldns_rr_rdf(rr, 2));
	s->expire = ldns_rdf2native_int32(ldns_rr_rdf(rr, 5));
	s->found = 1;
	return 1;
}

int p53_store_soa(const char *path, const char *zone, uint32_t *serial, uint32_t *expire,
		  time_t *mtime)
{
	struct soa_find s = { 0 };
	struct stat st;
	char err[256];

	if (stat(path, &st) != 0 || each_rr(path, zone, soa_fn, &s, err, sizeof(err)) != 0 || !s.found)
		return -1;
	*serial = s.serial;
	*expire = s.expire;
	*mtime = st.st_mtime;
	return 0;
}

static int add_fn(void *arg, ldns_rr *rr)
{
	return p53_rrs_add_ldns(arg, rr) == 0 ? 0 : -1;
}

int p53_store_read(const char *path, const char *zone, struct p53_rrs *rrs, char *err,
		   size_t errlen)
{
	p53_rrs_free(rrs);
	if (each_rr(path, zone, add_fn, rrs, err, errlen) != 0) {
		p53_rrs_free(rrs);
		return -1;
	}
	return 0;
}
