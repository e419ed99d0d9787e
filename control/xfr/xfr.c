/*
 * The secondary zones' state machine: timers (RFC 1035 §4.3.5), refresh jobs, their results,
 * expiry, disk copies, and the control socket's view. See xfr.h. Control thread only.
 *
 *   UNKNOWN --first compile--> LOADED (disk copy) | NODATA | EXPIRED (old disk copy)
 *   any --refresh due / NOTIFY--> job: SOA; IXFR/AXFR when newer or no data
 *     UPTODATE: timers restart, expire moves on      FULL/DIFF: p53_zones_update -> LOADED
 *     FAILED: retry in SOA RETRY                      DIFF not applicable: AXFR at once
 *   LOADED --expire without a primary--> EXPIRED (SERVFAIL/REFUSED, or still served: keep)
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "control/daemon.h"
#include "control/log.h"
#include "control/xfr/catalog.h"
#include "control/xfr/notify.h"
#include "control/xfr/store.h"
#include "control/xfr/xfr.h"
#include "control/zone/patch_index.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#define MAX_UPDATES 4096  /* zone updates applied in one tick */

uint64_t p53_xfr_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct p53_xfr_zone *p53_xfr_find_wire(const struct p53_xfr *x, const uint8_t *apex, size_t len)
{
	for (size_t i = 0; x != NULL && i < x->n; i++)
		if (x->zones[i]->apex_len == len && memcmp(x->zones[i]->apex, apex, len) == 0)
			return x->zones[i];
	return NULL;
}

struct p53_xfr_zone *p53_xfr_find(const struct p53_xfr *x, const char *name)
{
	uint8_t w[P53_NAME_MAXLEN];
	uint8_t len;

	if (p53_xfr_name_wire(name, w, &len) != 0)
		return NULL;
	return p53_xfr_find_wire(x, w, len);
}

const struct p53_config_zone *p53_xfr_zone_conf(const struct p53_config *cfg,
						const struct p53_xfr_zone *z)
{
	if (z->cfg_index < 0 || z->cfg_index >= cfg->n_zones || cfg->zones[z->cfg_index].xfr == NULL)
		return NULL;
	return &cfg->zones[z->cfg_index];
}

struct p53_xfr_zone *p53_xfr_zone_add(struct p53_xfr *x, const char *name, int cfg_index,
				      const char *file)
{
	struct p53_xfr_zone *z = calloc(1, sizeof(*z));

	if (z == NULL)
		return NULL;
	z->name = strdup(name);
	z->file = strdup(file);
	z->cfg_index = cfg_index;
	z->last_primary = -1;
	if (z->name == NULL || z->file == NULL || p53_xfr_name_wire(name, z->apex, &z->apex_len) != 0)
		goto fail;
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 16;
		struct p53_xfr_zone **g = realloc(x->zones, cap * sizeof(*g));
		if (g == NULL)
			goto fail;
		x->zones = g;
		x->cap = cap;
	}
	x->zones[x->n++] = z;
	return z;
fail:
	free(z->name);
	free(z->file);
	free(z);
	return NULL;
}

static void zone_free(struct p53_xfr_zone *z)
{
	free(z->name);
	free(z->file);
	free(z->member_id);
	p53_rrs_free(&z->cat);
	p53_rrs_free(&z->write_next);
	p53_journal_clear(&z->journal);
	free(z);
}

void p53_xfr_zone_drop(struct p53_xfr *x, struct p53_xfr_zone *z)
{
	for (size_t i = 0; i < x->n; i++) {
		if (x->zones[i] != z)
			continue;
		/* Members of a catalog that goes away go with it. */
		for (size_t k = 0; k < x->n; k++)
			if (x->zones[k]->catalog == z)
				x->zones[k]->catalog = NULL;
		memmove(&x->zones[i], &x->zones[i + 1], (x->n - i - 1) * sizeof(*x->zones));
		x->n--;
		zone_free(z);
		return;
	}
}

static struct p53_xfr_job *job_new(enum p53_xfr_job_kind kind, const struct p53_xfr_zone *z)
{
	struct p53_xfr_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->kind = kind;
	snprintf(j->zone, sizeof(j->zone), "%s", z->name);
	memcpy(j->apex, z->apex, z->apex_len);
	j->apex_len = z->apex_len;
	j->peer = -1;
	return j;
}

static uint32_t image_zone(const void *img, const uint8_t *apex, size_t len);

/* The zone's records out of the running image, into *out. */
static int zone_records(const void *img, const struct p53_xfr_zone *z, struct p53_rrs *out)
{
	uint32_t iz = image_zone(img, z->apex, z->apex_len);

	p53_rrs_free(out);
	if (iz == P53_NONE || p53_image_zone(img, iz)->rcode != 0)
		return -1;
	struct p53_rrs **want = calloc(p53_image_hdr(img)->n_zones, sizeof(*want));
	if (want == NULL)
		return -1;
	want[iz] = out;
	int rc = p53_image_zones_rrs(img, want);
	free(want);
	if (rc != 0)
		p53_rrs_free(out);
	return rc;
}

/* Whether the next disk job writes the disk copy too (docs/ARCHITECTURE.md, lazy copy). */
static bool copy_due(const struct p53_xfr *x, const struct p53_xfr_zone *z, time_t now)
{
	if (z->copy_need || z->is_catalog || x->copy_sync_s == 0 || !z->copy_known)
		return true;
	/* A journal file rewritten or removed may no longer lead from the copy's serial: the
	 * copy goes first then, unless the new file still holds a step from it (the first
	 * IXFR after an AXFR starts a new file at the copy's serial; a compaction that keeps
	 * that step), when the invariant holds through the rename without the copy. */
	int plan = p53_journal_plan(&z->jfile, z->journal.steps, z->journal.n, z->journal.epoch,
				    x->journal_max, NULL);
	if ((plan == P53_JSTORE_REWRITE || plan == P53_JSTORE_REMOVE) &&
	    !p53_journal_holds(z->journal.steps, z->journal.n, z->copy_serial))
		return true;
	return z->copy_behind_since != 0 && now - z->copy_behind_since >= (time_t)x->copy_sync_s;
}

void p53_xfr_store_later(struct p53_xfr *x, struct p53_xfr_zone *z, struct p53_rrs *content,
			 const void *img, bool whole)
{
	time_t now = time(NULL);

	if (whole)
		z->copy_need = true;
	if (z->writing || !x->started) {
		/* The newest content wins; the job in flight writes an older one first. Content
		 * is kept only when the copy is to be written (else it is read from the image). */
		if (content != NULL && (z->copy_need || copy_due(x, z, now)))
			p53_rrs_move(&z->write_next, content);
		else if (content != NULL)
			p53_rrs_free(content);
		z->write_pending = true;
		if (z->copy_behind_since == 0)
			z->copy_behind_since = now;
		return;
	}
	struct p53_rrs rrs = { 0 };
	if (content != NULL)
		p53_rrs_move(&rrs, content);
	bool copy = copy_due(x, z, now);
	struct p53_xfr_job *j = job_new(P53_JOB_WRITE, z);
	if (j == NULL || (j->path = strdup(z->file)) == NULL) {
		p53_err("zone %s: out of memory writing its disk copy", z->name);
		p53_xfr_job_free(j);
		p53_rrs_free(&rrs);
		return;
	}
	if (copy) {
		/* The copy is written at the served serial: content older than it (waiting while
		 * a job ran) is replaced by the image's records. */
		if (rrs.count == 0 || p53_rrs_soa_serial(&rrs) != (int64_t)z->serial) {
			if (z->is_catalog) {
				p53_rrs_free(&rrs);
				if (p53_rrs_append(&rrs, &z->cat) != 0)
					p53_rrs_free(&rrs);
			} else if (img == NULL || zone_records(img, z, &rrs) != 0) {
				p53_rrs_free(&rrs);
			}
		}
		if (rrs.count == 0) {
			/* Not served now (expired): tried again in copy_sync_s. */
			p53_warn("zone %s: its records for the disk copy are not available; the journal "
				 "only", z->name);
			copy = false;
			z->copy_need = false;
			z->copy_behind_since = now;
		}
	}
	/* The journal as served now: it ends at the served serial (the newest published). */
	j->jpath = p53_journal_path(z->file);
	j->jsteps = z->journal.n > 0 ? malloc(z->journal.n * sizeof(*j->jsteps)) : NULL;
	if (j->jpath == NULL || (z->journal.n > 0 && j->jsteps == NULL)) {
		p53_err("zone %s: out of memory writing its disk copy", z->name);
		p53_xfr_job_free(j);
		p53_rrs_free(&rrs);
		return;
	}
	for (size_t i = 0; i < z->journal.n; i++) {
		p53_jstep_get(z->journal.steps[i]);
		j->jsteps[j->n_jsteps++] = z->journal.steps[i];
	}
	j->jepoch = z->journal.epoch;
	j->jmax = x->journal_max;
	j->jfile = z->jfile;
	j->copy_known = z->copy_known;
	j->copy_serial = z->copy_serial;
	j->copy = copy;
	j->serial = copy ? (uint32_t)p53_rrs_soa_serial(&rrs) : z->serial;
	if (copy)
		p53_rrs_move(&j->rrs, &rrs);
	else if (z->copy_behind_since == 0)
		z->copy_behind_since = now;
	p53_rrs_free(&rrs);
	j->token = ++x->next_token;
	z->wtoken = j->token;
	z->writing = true;
	p53_xfr_pool_submit(&x->pool, j, false);
}

/* A member's disk copy and journal deleted by a disk job, after its write in flight if one is
 * (two threads could run both at once). @return the job's token, 0 if none went out (not
 * started, out of memory). */
static uint64_t member_files_remove(struct p53_xfr *x, const struct p53_xfr_zone *z)
{
	struct p53_xfr_job *j = job_new(P53_JOB_REMOVE, z);

	if (j == NULL || (j->path = strdup(z->file)) == NULL || !x->started) {
		p53_xfr_job_free(j);
		return 0;
	}
	j->token = ++x->next_token;
	if (z->writing) {
		j->after = z->wtoken;
		j->next = x->held;
		x->held = j;
	} else {
		p53_xfr_pool_submit(&x->pool, j, false);
	}
	return j->token;
}

/* The disk job with this token is done: the jobs held back for it go out. */
static void held_release(struct p53_xfr *x, uint64_t token)
{
	for (struct p53_xfr_job **p = &x->held; *p != NULL;) {
		struct p53_xfr_job *j = *p;
		if (j->after != token) {
			p = &j->next;
			continue;
		}
		*p = j->next;
		p53_xfr_pool_submit(&x->pool, j, false);
	}
}

void p53_xfr_member_forget(struct p53_xfr *x, struct p53_xfr_zone *z)
{
	member_files_remove(x, z);
	p53_info("zone %s: dropped (no longer in catalog %s)", z->name,
		 z->catalog != NULL ? z->catalog->name : "?");
	p53_xfr_zone_drop(x, z);
}

const struct p53_config_zone *p53_xfr_conf_named(const struct p53_config *cfg, const char *name)
{
	for (int i = 0; i < cfg->n_zones; i++)
		if (strcasecmp(cfg->zones[i].name, name) == 0)
			return &cfg->zones[i];
	return NULL;
}

/* ---- SOA timers ---- */

struct soa {
	uint32_t serial, refresh, retry, expire;
};

static int soa_rdata(const uint8_t *rd, size_t len, struct soa *s)
{
	int m1 = p53_name_len(rd, len);
	int m2 = m1 < 0 ? -1 : p53_name_len(rd + m1, len - (size_t)m1);

	if (m2 < 0 || (size_t)m1 + (size_t)m2 + 20 != len)
		return -1;
	rd += m1 + m2;
	struct p53_wire w;
	p53_wire_init(&w, rd, 20);
	s->serial = p53_wire_u32(&w);
	s->refresh = p53_wire_u32(&w);
	s->retry = p53_wire_u32(&w);
	s->expire = p53_wire_u32(&w);
	return 0;
}

static int image_soa(const void *img, uint32_t iz, struct soa *s)
{
	const struct p53_image_zone *zn = p53_image_zone(img, iz);

	if (zn->soa == P53_NONE)
		return -1;
	const uint8_t *rd = p53_image_rdata(img, p53_image_zrrset(img, zn, zn->soa)) + P53_RR_OWNER_LEN;
	return soa_rdata(rd + 10, p53_get16(rd + 8), s);
}

static int rrs_soa(const struct p53_rrs *r, struct soa *s)
{
	struct p53_rr_view v;
	size_t pos = 0;

	while (p53_rrs_next(r, &pos, &v) == 1)
		if (v.type == 6)
			return soa_rdata(v.rdata, v.rdlen, s);
	return -1;
}

static uint32_t clamp(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void set_timers(const struct p53_config *cfg, struct p53_xfr_zone *z, const struct soa *s)
{
	z->serial = s->serial;
	z->refresh = clamp(s->refresh, cfg->xfr.refresh_min_s, cfg->xfr.refresh_max_s);
	z->retry = clamp(s->retry, cfg->xfr.retry_min_s, cfg->xfr.retry_max_s);
	z->expire = s->expire < cfg->xfr.expire_min_s ? cfg->xfr.expire_min_s : s->expire;
}

static uint32_t zone_retry(const struct p53_config *cfg, const struct p53_xfr_zone *z)
{
	return z->retry != 0 ? z->retry : cfg->xfr.retry_min_s;
}

static int on_expire(const struct p53_config *cfg, const struct p53_xfr_zone *z)
{
	const struct p53_config_zone *cz = p53_xfr_zone_conf(cfg, z);

	return cz != NULL ? cz->xfr->on_expire : P53_EXPIRE_SERVFAIL;
}

static bool has_data(const struct p53_config *cfg, const struct p53_xfr_zone *z)
{
	if (z->is_catalog)
		return z->cat.count > 0;
	return z->state == P53_XFR_LOADED ||
	       (z->state == P53_XFR_EXPIRED && on_expire(cfg, z) == P53_EXPIRE_KEEP);
}

/* ---- what the image serves ---- */

static uint32_t image_zone(const void *img, const uint8_t *apex, size_t len)
{
	if (img == NULL)
		return P53_NONE;
	uint32_t ni = p53_image_find(img, apex, len, p53_name_hash(apex, len));
	if (ni == P53_NONE || !(p53_image_node(img, ni)->flags & P53_NODE_APEX))
		return P53_NONE;
	return p53_image_node(img, ni)->zone;
}

/* The IXFR history served before the restart, when its file chains to the disk copy. */
static void journal_from_disk(const struct p53_config *cfg, struct p53_xfr_zone *z)
{
	char *path = p53_journal_path(z->file), err[1200];

	if (path == NULL)
		return;
	int rc = p53_journal_load(&z->journal, path, z->apex, z->apex_len, z->serial,
				  cfg->xfr.journal_max_bytes, &z->jfile, err, sizeof(err));
	if (rc == 0 && err[0] != '\0')
		p53_warn("zone %s: journal cut back: %s", z->name, err);
	if (rc == 0 && z->journal.n > 0)
		p53_info("zone %s: IXFR history from %s: %zu step(s), serial %u to %u", z->name, path,
			 z->journal.n, z->journal.steps[0]->from, z->journal.steps[z->journal.n - 1]->to);
	else if (rc < 0)
		p53_warn("zone %s: journal ignored (IXFR to older serials is served as AXFR until new "
			 "differences arrive): %s", z->name, err);
	free(path);
}

void p53_xfr_sync(struct p53_xfr *x, const struct p53_config *cfg, const void *img)
{
	time_t now = time(NULL);

	x->journal_max = cfg->xfr.journal_max_bytes;
	x->copy_sync_s = cfg->xfr.copy_sync_s;

	for (size_t i = 0; i < x->n; i++) {
		struct p53_xfr_zone *z = x->zones[i];
		struct soa s;
		if (z->is_catalog && z->state == P53_XFR_UNKNOWN) {
			/* A catalog's records live here, not in the image (catalog_from_disk). */
			z->state = z->cat.count > 0 ? P53_XFR_LOADED : P53_XFR_NODATA;
			z->next_refresh = now;
		}
		if (z->is_catalog || z->removed)
			continue;
		uint32_t iz = image_zone(img, z->apex, z->apex_len);
		bool data = iz != P53_NONE && p53_image_zone(img, iz)->rcode == 0 && image_soa(img, iz, &s) == 0;
		if (data) {
			set_timers(cfg, z, &s);
			if (z->state == P53_XFR_UNKNOWN) {
				/* Served from its disk copy: its mtime is the last good refresh. */
				struct stat st;
				z->last_refresh = stat(z->file, &st) == 0 ? st.st_mtime : now;
				z->expire_at = z->last_refresh + (time_t)z->expire;
				z->state = z->expire_at <= now ? P53_XFR_EXPIRED : P53_XFR_LOADED;
				z->next_refresh = now;
				p53_info("zone %s: serving serial %u from its disk copy %s (refreshing now)",
					 z->name, z->serial, z->file);
				uint32_t cs, ce;
				time_t cm;
				z->copy_known = p53_store_soa(z->file, z->name, &cs, &ce, &cm) == 0;
				z->copy_serial = z->copy_known ? cs : 0;
				if (!z->copy_known || cs != z->serial)
					z->copy_behind_since = now; /* rolled forward by its journal */
				journal_from_disk(cfg, z);
			} else if (z->state == P53_XFR_NODATA) {
				z->state = P53_XFR_LOADED;
			}
		} else if (z->state == P53_XFR_UNKNOWN || z->state == P53_XFR_LOADED) {
			uint32_t serial, expire;
			time_t mtime;
			/* A disk copy left out because it had expired makes the zone EXPIRED. */
			bool old = z->state == P53_XFR_UNKNOWN && !z->bad_copy &&
				   p53_store_soa(z->file, z->name, &serial, &expire, &mtime) == 0 &&
				   mtime + (time_t)(expire < cfg->xfr.expire_min_s ? cfg->xfr.expire_min_s
										    : expire) <= now;
			z->state = old ? P53_XFR_EXPIRED : P53_XFR_NODATA;
			z->next_refresh = now;
			if (old)
				p53_warn("zone %s: its disk copy has expired; not served until transferred",
					 z->name);
		}
	}
}

/* ---- start-up ---- */

/* A catalog zone's records from its disk copy, and its members. */
static void catalog_from_disk(struct p53_xfr *x, const struct p53_config *cfg, struct p53_xfr_zone *z)
{
	struct p53_catalog_member *m = NULL;
	size_t nm = 0;
	char err[600];
	struct soa s;
	struct stat st;

	if (access(z->file, F_OK) != 0)
		return;
	if (p53_store_read(z->file, z->name, &z->cat, err, sizeof(err)) != 0 ||
	    rrs_soa(&z->cat, &s) != 0 ||
	    p53_catalog_parse(&z->cat, z->apex, z->apex_len, &m, &nm, err, sizeof(err),
			      p53_log_warn_cb, NULL) != 0) {
		p53_err("catalog %s: its disk copy %s is not usable, ignored: %s", z->name, z->file, err);
		p53_rrs_free(&z->cat);
		return;
	}
	set_timers(cfg, z, &s);
	z->last_refresh = stat(z->file, &st) == 0 ? st.st_mtime : time(NULL);
	z->expire_at = z->last_refresh + (time_t)z->expire;
	z->state = P53_XFR_LOADED;
	p53_catalog_reconcile(x, cfg, z, m, nm, false);
	p53_info("catalog %s: %zu member(s) from its disk copy (serial %u)", z->name, nm, z->serial);
	free(m);
}

/* The members of a catalog as its records kept here list them, quietly: what they said was
 * logged when they came. */
static void catalog_reread(struct p53_xfr *x, const struct p53_config *cfg, struct p53_xfr_zone *z)
{
	struct p53_catalog_member *m = NULL;
	size_t nm = 0;
	char err[600];

	if (p53_catalog_parse(&z->cat, z->apex, z->apex_len, &m, &nm, err, sizeof(err), NULL,
			      NULL) == 0)
		p53_catalog_reconcile(x, cfg, z, m, nm, true);
	free(m);
}

/* States for the config's secondary zones (catalog members come from their catalogs). */
static int add_configured(struct p53_xfr *x, const struct p53_config *cfg)
{
	for (int i = 0; i < cfg->n_zones; i++) {
		const struct p53_config_zone *cz = &cfg->zones[i];
		if (cz->xfr == NULL)
			continue;
		/* (A member of this name went before: member_taken.) */
		struct p53_xfr_zone *z = p53_xfr_find(x, cz->name);
		if (z == NULL && (z = p53_xfr_zone_add(x, cz->name, i, cz->file)) == NULL)
			return -1;
		z->cfg_index = i;
		if (strcmp(z->file, cz->file) != 0) {
			char *f = strdup(cz->file);
			if (f == NULL)
				return -1;
			free(z->file);
			z->file = f;
		}
		if (cz->xfr->catalog && !z->is_catalog) {
			z->is_catalog = true;
			catalog_from_disk(x, cfg, z);
		}
	}
	return 0;
}

struct p53_xfr *p53_xfr_new(const struct p53_config *cfg)
{
	struct p53_xfr *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return NULL;
	for (int i = 0; i < P53_XFR_MAX_SOCKS; i++)
		x->socks[i] = x->tcp_socks[i] = -1;
	for (int i = 0; i < P53_XFR_TCP_CONNS; i++)
		x->conns[i].fd = -1;
	x->nout.fd4 = x->nout.fd6 = -1;
	if (add_configured(x, cfg) != 0) {
		p53_xfr_free(x);
		return NULL;
	}
	return x;
}

int p53_xfr_start(struct p53_daemon *d)
{
	struct p53_xfr *x = d->xfr;
	time_t now = time(NULL);

	p53_xfr_sync(x, &d->cfg, d->dp.image);
	for (size_t i = 0; i < x->n; i++)
		x->zones[i]->next_refresh = now; /* a restart refreshes at once */
	p53_xfr_notify_sockets(d);
	p53_xfr_serve_publish(&d->serve, &d->cfg, x);
	if (p53_xfr_pool_start(&x->pool, d->cfg.xfr.threads) != 0) {
		p53_err("cannot start the zone transfer threads");
		return -1;
	}
	d->ctl.wake_fd = x->pool.wake_fd; /* a finished job ends the control thread's wait */
	x->started = true;
	/* Disk copies that waited for the threads. */
	for (size_t i = 0; i < x->n; i++)
		if (x->zones[i]->write_pending) {
			x->zones[i]->write_pending = false;
			p53_xfr_store_later(x, x->zones[i], &x->zones[i]->write_next, d->dp.image,
					    false);
		}
	size_t sec = 0;
	for (size_t i = 0; i < x->n; i++)
		sec += !x->zones[i]->is_catalog;
	if (x->n > 0)
		p53_info("xfr: %zu secondary zone(s) (%zu catalog(s)), %u transfer thread(s)", sec,
			 x->n - sec, d->cfg.xfr.threads);
	return 0;
}

/* ---- jobs ---- */

static void submit_refresh(struct p53_daemon *d, struct p53_xfr_zone *z)
{
	struct p53_xfr *x = d->xfr;
	const struct p53_config_zone *cz = p53_xfr_zone_conf(&d->cfg, z);
	struct p53_xfr_job *j;

	if (cz == NULL || (j = job_new(P53_JOB_REFRESH, z)) == NULL)
		return;
	for (int i = 0; i < cz->xfr->n_primaries; i++) {
		const struct p53_xfr_primary *p = &cz->xfr->primaries[i];
		struct p53_xfr_peer *peer = &j->peers[j->n_peers++];
		peer->family = p->family;
		memcpy(peer->addr, p->addr, 16);
		peer->port = p->port;
		if (p->key >= 0 && p->key < d->cfg.xfr.n_keys) {
			peer->has_key = true;
			peer->key = d->cfg.xfr.keys[p->key];
			peer->key.name = NULL; /* the config's string may go with a reload */
		}
	}
	j->have_data = has_data(&d->cfg, z);
	j->serial = z->serial;
	j->ixfr = cz->xfr->ixfr;
	j->force = z->force;
	j->timeout_ms = d->cfg.xfr.timeout_ms;
	j->token = ++x->next_token;
	z->token = j->token;
	z->busy = true;
	bool urgent = z->notified;
	z->notified = false;
	p53_xfr_pool_submit(&x->pool, j, urgent);
}

static struct p53_xfr_zone *zone_of_token(struct p53_xfr *x, uint64_t token, bool write)
{
	for (size_t i = 0; i < x->n; i++) {
		struct p53_xfr_zone *z = x->zones[i];
		if (write ? (z->writing && z->wtoken == token) : (z->busy && z->token == token))
			return z;
	}
	return NULL;
}

static void result_text(struct p53_xfr_zone *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void result_text(struct p53_xfr_zone *z, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(z->last_result, sizeof(z->last_result), fmt, ap);
	va_end(ap);
}

static void refresh_failed(struct p53_daemon *d, struct p53_xfr_zone *z, const char *why, time_t now)
{
	z->xfr_failed++;
	z->next_refresh = now + (time_t)zone_retry(&d->cfg, z);
	result_text(z, "failed: %s", why);
	p53_warn("zone %s: refresh failed, retry in %u s: %s", z->name, zone_retry(&d->cfg, z), why);
}

/* A confirmed serial (SOA check or transfer): the timers start again (RFC 1035 §4.3.5). */
static void confirmed(struct p53_daemon *d, struct p53_xfr_zone *z, time_t now)
{
	z->last_refresh = now;
	z->expire_at = now + (time_t)z->expire;
	z->next_refresh = now + (time_t)z->refresh;
	if (z->state == P53_XFR_EXPIRED && has_data(&d->cfg, z)) {
		z->state = P53_XFR_LOADED;
		p53_info("zone %s: a primary confirmed serial %u again; no longer expired", z->name, z->serial);
	}
}

struct pending {
	struct p53_xfr_job *j;
	struct p53_xfr_zone *z;
};

static void handle_refresh(struct p53_daemon *d, struct p53_xfr_zone *z, struct p53_xfr_job *j,
			   time_t now, struct p53_zone_update *u, struct pending *pend, size_t *n)
{
	z->busy = false;
	z->last_xfr = now;
	z->last_xfr_ms = j->ms;
	z->last_primary = j->peer;
	snprintf(z->last_how, sizeof(z->last_how), "%s", j->how);
	switch (j->outcome) {
	case P53_XFR_FAILED:
		z->notify_us = 0;
		refresh_failed(d, z, j->err, now);
		break;
	case P53_XFR_UPTODATE: {
		struct soa s = { .serial = z->serial, .refresh = j->refresh, .retry = j->retry,
				 .expire = j->expire };
		z->notify_us = 0;
		set_timers(&d->cfg, z, &s);
		confirmed(d, z, now);
		result_text(z, "up to date at serial %u (primary serial %u)", z->serial, j->new_serial);
		p53_store_touch(z->file);
		break;
	}
	case P53_XFR_FULL:
	case P53_XFR_DIFF:
		if (*n >= MAX_UPDATES) { /* next tick */
			z->notified = true;
			break;
		}
		memset(&u[*n], 0, sizeof(u[*n]));
		u[*n].z = z;
		u[*n].kind = j->outcome == P53_XFR_FULL ? P53_UPDATE_FULL : P53_UPDATE_DIFF;
		p53_rrs_move(&u[*n].rrs, &j->rrs);
		u[*n].diff = &j->diff;
		pend[*n].j = j;
		pend[*n].z = z;
		(*n)++;
		return; /* the job lives until the update is done */
	default:
		break;
	}
	p53_xfr_job_free(j);
}

/* After p53_zones_update: what each transfer became. */
static void transfers_done(struct p53_daemon *d, struct p53_zone_update *u, struct pending *pend,
			   size_t n, time_t now)
{
	for (size_t i = 0; i < n; i++) {
		struct p53_xfr_zone *z = u[i].z;
		struct p53_xfr_job *j = pend[i].j;
		if (u[i].kind == P53_UPDATE_NODATA) {
			if (u[i].rc == 0)
				z->state = P53_XFR_EXPIRED;
			continue;
		}
		uint64_t del = 0, add = 0;
		p53_ixfr_counts(&j->diff, &del, &add);
		if (u[i].rc != 0) {
			if (u[i].kind == P53_UPDATE_DIFF) {
				/* RFC 1995 §4: differences that do not fit: ask for the whole zone. */
				z->force = true;
				z->notified = true;
				result_text(z, "IXFR to serial %u not applied (%s); AXFR next", j->new_serial,
					    u[i].err);
				p53_warn("zone %s: %s", z->name, z->last_result);
			} else {
				z->notify_us = 0;
				refresh_failed(d, z, u[i].err, now);
			}
			p53_rrs_free(&u[i].result);
			p53_xfr_job_free(j);
			continue;
		}
		struct soa s = { .serial = j->new_serial, .refresh = j->refresh, .retry = j->retry,
				 .expire = j->expire };
		set_timers(&d->cfg, z, &s);
		z->state = P53_XFR_LOADED;
		/* A retransfer asked for while this job (not a forced one) ran still gets its AXFR. */
		if (j->force)
			z->force = false;
		z->bad_copy = false;
		z->xfr_ok++;
		confirmed(d, z, now);
		if (u[i].kind == P53_UPDATE_DIFF)
			result_text(z, "%s to serial %u: %" PRIu64 " deleted, %" PRIu64 " added; transfer "
				    "%.0f ms, apply %.0f ms", j->how, j->new_serial, del, add, j->ms,
				    z->last_apply_ms);
		else
			result_text(z, "%s to serial %u: %u records, %" PRIu64 " bytes; transfer %.0f ms, "
				    "apply %.0f ms", j->how, j->new_serial, u[i].result.count, j->bytes,
				    j->ms, z->last_apply_ms);
		if (z->notify_us != 0) {
			/* Served from the replicas' swap on (the publish's grace period and
			 * freeing, the journal and the log come after it). */
			uint64_t served = d->dp.swapped_us > z->notify_us ? d->dp.swapped_us
									  : p53_xfr_now_us();
			z->notify_to_served_ms = (double)(served - z->notify_us) / 1000.0;
			z->notify_us = 0;
			p53_info("zone %s: serial %u served %.1f ms after the NOTIFY (%s)", z->name,
				 z->serial, z->notify_to_served_ms, z->last_result);
		} else {
			p53_info("zone %s: %s", z->name, z->last_result);
		}
		p53_xfr_store_later(d->xfr, z, &u[i].result, d->dp.image, u[i].kind != P53_UPDATE_DIFF);
		p53_xfr_job_free(j);
	}
}

static void handle_disk(struct p53_daemon *d, struct p53_xfr_job *j)
{
	struct p53_xfr *x = d->xfr;
	struct p53_xfr_zone *z = zone_of_token(x, j->token, true);

	if (j->outcome != P53_XFR_DONE)
		p53_err("zone %s: disk copy: %s", j->zone, j->err);
	if (z != NULL) {
		z->writing = false;
		if (j->kind == P53_JOB_WRITE) {
			z->jfile = j->jfile;
			if (j->copy && j->outcome == P53_XFR_DONE) {
				p53_info("zone %s: disk copy written at serial %u (%zu records, %.0f ms)",
					 z->name, j->serial, j->rrs_count, j->ms);
				z->copy_known = true;
				z->copy_serial = j->serial;
				if (j->serial == z->serial) {
					z->copy_behind_since = 0;
					z->copy_need = false;
				}
			}
			if (j->copy_stale) {
				p53_warn("zone %s: its journal file was rewritten; the disk copy follows",
					 z->name);
				z->copy_need = true;
				z->write_pending = true;
			}
		}
		if (z->write_pending) {
			z->write_pending = false;
			p53_xfr_store_later(x, z, &z->write_next, d->dp.image, false);
		}
	}
	held_release(x, j->token);
	bool copy = j->kind == P53_JOB_WRITE && j->copy;
	p53_xfr_job_free(j);
	/* A copy's records (read out of the image: ~50 MiB at 1M records) go back to the
	 * kernel now, not at the next update's trim (docs/BENCHMARKS.md, zone transfers). */
	if (copy)
		malloc_trim(0);
}

/* Disk copies behind the journal past xfr.copy_sync_s (or flushed): written now. */
static void copies_due(struct p53_daemon *d, time_t now)
{
	struct p53_xfr *x = d->xfr;

	for (size_t i = 0; i < x->n; i++) {
		struct p53_xfr_zone *z = x->zones[i];
		if (z->writing || z->removed || z->is_catalog || !has_data(&d->cfg, z))
			continue;
		if (!z->copy_need && (z->copy_behind_since == 0 ||
				      now - z->copy_behind_since < (time_t)x->copy_sync_s))
			continue;
		if (z->copy_known && z->copy_serial == z->serial && !z->copy_need) {
			z->copy_behind_since = 0;
			continue;
		}
		if (!z->copy_need)
			p53_info("zone %s: disk copy %lld s behind (xfr.copy_sync_s %u): writing serial %u",
				 z->name, (long long)(now - z->copy_behind_since), x->copy_sync_s, z->serial);
		z->copy_need = true;
		p53_xfr_store_later(x, z, NULL, d->dp.image, false);
	}
}

int p53_xfr_flush(struct p53_daemon *d, const char *name, char *err, size_t errlen)
{
	struct p53_xfr_zone *z = d->xfr != NULL ? p53_xfr_find(d->xfr, name) : NULL;

	if (z == NULL || z->removed) {
		snprintf(err, errlen, "zone '%s' is not a secondary zone here", name);
		return -1;
	}
	if (!has_data(&d->cfg, z)) {
		snprintf(err, errlen, "zone '%s' has no data served to write", name);
		return -1;
	}
	z->copy_need = true;
	if (!z->writing && d->xfr->started)
		p53_xfr_store_later(d->xfr, z, NULL, d->dp.image, false);
	else
		z->write_pending = true;
	p53_info("zone %s: disk copy flush requested (serial %u)", z->name, z->serial);
	return 0;
}

void p53_xfr_shutdown(struct p53_daemon *d)
{
	struct p53_xfr *x = d->xfr;

	if (x == NULL || !x->started)
		return;
	/* Disk jobs done are taken in (nothing new is started: started is off); the job running
	 * finishes at the stop, the ones queued are dropped, and both are made up for below
	 * (their zones still `writing`: the journal file is rewritten). */
	x->started = false;
	d->ctl.wake_fd = -1;
	struct p53_xfr_job *j;
	while ((j = p53_xfr_pool_done(&x->pool)) != NULL) {
		if (j->kind != P53_JOB_REFRESH)
			handle_disk(d, j);
		else
			p53_xfr_job_free(j);
	}
	p53_xfr_pool_stop(&x->pool);
	for (size_t i = 0; i < x->n; i++) {
		struct p53_xfr_zone *z = x->zones[i];
		if (z->removed || (z->state != P53_XFR_LOADED && z->state != P53_XFR_EXPIRED))
			continue;
		if (z->copy_known && z->copy_serial == z->serial && !z->write_pending && !z->writing &&
		    !z->copy_need)
			continue;
		/* Clean stop: the copy at the served serial, then the journal (ends at it). */
		struct p53_rrs rrs = { 0 };
		char err[1024];
		if (z->is_catalog ? p53_rrs_append(&rrs, &z->cat) != 0
				  : zone_records(d->dp.image, z, &rrs) != 0) {
			p53_rrs_free(&rrs);
			continue;
		}
		if (p53_store_write(z->file, z->name, &rrs, err, sizeof(err)) != 0) {
			p53_err("zone %s: disk copy at shutdown: %s", z->name, err);
			p53_rrs_free(&rrs);
			continue;
		}
		p53_rrs_free(&rrs);
		char *jpath = p53_journal_path(z->file);
		if (z->writing)
			z->jfile.known = 0; /* a job was dropped: the file is rewritten */
		if (jpath != NULL &&
		    p53_journal_store(jpath, z->apex, z->apex_len, z->journal.steps, z->journal.n,
				      z->journal.epoch, x->journal_max, &z->jfile, NULL, err,
				      sizeof(err)) < 0)
			p53_err("zone %s: journal at shutdown: %s", z->name, err);
		free(jpath);
		z->writing = z->write_pending = false;
		p53_info("zone %s: disk copy written at shutdown (serial %u)", z->name, z->serial);
	}
}

/*
 * A big image serving a secondary zone with data and no spare (after the start, an AXFR, a
 * reload, an IXFR compiled in full): make one ahead, off this thread, so that the next IXFR's
 * patch writes into pages already there (control/publish.c). 1/64 of room, as a patched
 * image gets: the next patched images are a little bigger than this one.
 */
static void spare_ahead(struct p53_daemon *d)
{
	struct p53_xfr *x = d->xfr;
	size_t len = d->dp.image_len;

	if (d->dp.spare != NULL || d->dp.image == NULL || len < P53_SPARE_MIN)
		return;
	for (size_t i = 0; i < x->n; i++) {
		const struct p53_xfr_zone *z = x->zones[i];
		if (!z->is_catalog && !z->removed && z->state == P53_XFR_LOADED && has_data(&d->cfg, z)) {
			p53_dataplane_spare_prepare(&d->dp, len + len / 64);
			return;
		}
	}
}

void p53_xfr_tick(struct p53_daemon *d)
{
	struct p53_xfr *x = d->xfr;
	static struct p53_zone_update u[MAX_UPDATES];
	static struct pending pend[MAX_UPDATES];
	struct p53_xfr_job *j;
	time_t now = time(NULL);
	size_t n = 0;

	if (x == NULL || !x->started)
		return;
	while ((j = p53_xfr_pool_done(&x->pool)) != NULL) {
		if (j->kind != P53_JOB_REFRESH) {
			handle_disk(d, j);
			continue;
		}
		struct p53_xfr_zone *z = zone_of_token(x, j->token, false);
		if (z == NULL) { /* the zone went away meanwhile */
			p53_xfr_job_free(j);
			continue;
		}
		handle_refresh(d, z, j, now, u, pend, &n);
	}
	/* RFC 1035 §4.3.5: no primary confirmed the data within EXPIRE. */
	for (size_t i = 0; i < x->n && n < MAX_UPDATES; i++) {
		struct p53_xfr_zone *z = x->zones[i];
		if (z->state != P53_XFR_LOADED || z->expire_at == 0 || now < z->expire_at || z->removed)
			continue;
		int act = on_expire(&d->cfg, z);
		p53_warn("zone %s: expired: no primary confirmed serial %u for %u s (SOA EXPIRE); %s",
			 z->name, z->serial, z->expire,
			 act == P53_EXPIRE_KEEP ? "still served (on_expire: keep)"
			 : act == P53_EXPIRE_REFUSE ? "answering REFUSED" : "answering SERVFAIL");
		if (act == P53_EXPIRE_KEEP || z->is_catalog) {
			z->state = P53_XFR_EXPIRED;
			continue;
		}
		memset(&u[n], 0, sizeof(u[n]));
		u[n].z = z;
		u[n].kind = P53_UPDATE_NODATA;
		u[n].rcode = act == P53_EXPIRE_REFUSE ? P53_RCODE_REFUSED : P53_RCODE_SERVFAIL;
		pend[n].j = NULL;
		pend[n].z = z;
		n++;
	}
	if (n > 0) {
		p53_zones_update(d, u, n);
		transfers_done(d, u, pend, n, now);
	}
	copies_due(d, now);
	spare_ahead(d);
	/* NOTIFYs first: a notified zone's refresh goes out in this tick, not the next one
	 * (up to the control thread's 50 ms wait later). */
	p53_xfr_notify_poll(d);
	/* Due refreshes. */
	for (size_t i = 0; i < x->n; i++) {
		struct p53_xfr_zone *z = x->zones[i];
		if (z->busy || z->removed || z->state == P53_XFR_UNKNOWN)
			continue;
		if (z->notified || now >= z->next_refresh)
			submit_refresh(d, z);
	}
	p53_nout_tick(d); /* after the updates above: their new serials go out this tick */
}

/* ---- reload, commands, health ---- */

static bool configured(const struct p53_config *cfg, const char *name, bool catalog)
{
	for (int k = 0; k < cfg->n_zones; k++)
		if (cfg->zones[k].xfr != NULL && (!catalog || cfg->zones[k].xfr->catalog) &&
		    strcasecmp(cfg->zones[k].name, name) == 0)
			return true;
	return false;
}

/*
 * A catalog member the new config names as a zone of its own: the config's zone wins (RFC
 * 9432 §5.4; Knot does the same), so the member goes as a removed one does (its disk copy and
 * journal deleted, its state dropped; the compile already left it out: update.c). A secondary
 * zone whose disk copy is that file gets its state now, its first disk job after the removal.
 */
static void member_taken(struct p53_xfr *x, const struct p53_config *cfg, struct p53_xfr_zone *z,
			 const struct p53_config_zone *cz)
{
	bool same_file = strcmp(z->file, cz->file) == 0;
	/* A primary zone whose file is the member's disk copy keeps it: it is the zone's now. */
	bool keep = same_file && cz->xfr == NULL;
	p53_info("catalog %s: member %s is now a configured zone; %s (%s)",
		 z->catalog != NULL ? z->catalog->name : "?", z->name,
		 cz->xfr == NULL ? "served from its file, not transferred"
				 : "transferred from its own primaries",
		 keep ? "its disk copy as a member is that file: kept"
		      : "its disk copy as a member deleted");
	uint64_t token = keep ? 0 : member_files_remove(x, z);
	p53_xfr_zone_drop(x, z);
	if (cz->xfr == NULL || !same_file || token == 0)
		return;
	struct p53_xfr_zone *n = p53_xfr_zone_add(x, cz->name, (int)(cz - cfg->zones), cz->file);
	if (n == NULL)
		return; /* add_configured tries again */
	n->writing = true; /* handle_disk ends it with the removal's result */
	n->wtoken = token;
}

void p53_xfr_reconciled(struct p53_daemon *d)
{
	struct p53_xfr *x = d->xfr;

	if (x == NULL)
		return;
	for (size_t i = 0; i < x->n;) {
		struct p53_xfr_zone *z = x->zones[i];
		const struct p53_config_zone *cz = z->member_id != NULL
						   ? p53_xfr_conf_named(&d->cfg, z->name) : NULL;
		if (cz != NULL)
			member_taken(x, &d->cfg, z, cz); /* drops z: zones[i] is the next one */
		else
			i++;
	}
	/* Zones no longer configured first, then members of catalogs that went. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < x->n;) {
			struct p53_xfr_zone *z = x->zones[i];
			bool member = z->member_id != NULL;
			bool keep = member ? z->catalog != NULL && configured(&d->cfg, z->catalog->name, true)
					   : configured(&d->cfg, z->name, false);
			if ((pass == 0) == member || keep) {
				i++;
				continue;
			}
			p53_info("zone %s: no longer a secondary zone here", z->name);
			p53_xfr_zone_drop(x, z);
		}
	}
	if (add_configured(x, &d->cfg) != 0)
		p53_err("xfr: out of memory taking the new config");
	/* The catalogs' member lists read again (their records are kept here): a member that a
	 * zone of the old config held back, or that another catalog which went held, is a
	 * member from now on (transferred at once, as a new one is). */
	for (size_t i = 0; i < x->n; i++)
		if (x->zones[i]->is_catalog && x->zones[i]->cat.count > 0)
			catalog_reread(x, &d->cfg, x->zones[i]);
	/* Catalog members use their catalog's zones[] entry, by index. */
	for (size_t i = 0; i < x->n; i++)
		if (x->zones[i]->catalog != NULL)
			x->zones[i]->cfg_index = x->zones[i]->catalog->cfg_index;
	p53_xfr_sync(x, &d->cfg, d->dp.image);
	p53_xfr_notify_sockets(d);
	p53_xfr_serve_publish(&d->serve, &d->cfg, x);
}

int p53_xfr_refresh(struct p53_daemon *d, const char *name, bool retransfer, char *err,
		    size_t errlen)
{
	struct p53_xfr_zone *z = p53_xfr_find(d->xfr, name);

	if (z == NULL || z->removed) {
		snprintf(err, errlen, "zone '%s' is not a secondary zone here", name);
		return -1;
	}
	z->notified = true;
	if (retransfer)
		z->force = true;
	p53_info("zone %s: %s requested", z->name, retransfer ? "retransfer (AXFR)" : "refresh");
	return 0;
}

static const char *state_name(enum p53_xfr_state s)
{
	static const char *const n[] = { "unknown", "no data", "loaded", "expired" };

	return n[s];
}

static json_t *time_json(time_t t)
{
	char buf[64];

	if (t == 0)
		return json_null();
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	return json_string(buf);
}

static json_t *ways_json(const struct p53_xfr_ways *w)
{
	json_t *o = json_object();

	for (int k = 0; k < P53_WAYS; k++)
		json_object_set_new(o, p53_update_way_name(k), json_integer((json_int_t)w->n[k]));
	return o;
}

static json_t *zone_json(const struct p53_daemon *d, const struct p53_xfr_zone *z)
{
	const struct p53_config_zone *cz = p53_xfr_zone_conf(&d->cfg, z);
	json_t *o = json_object(), *prim = json_array();
	time_t now = time(NULL);

	json_object_set_new(o, "name", json_string(z->name));
	json_object_set_new(o, "state", json_string(state_name(z->state)));
	json_object_set_new(o, "serial", z->state == P53_XFR_NODATA || z->state == P53_XFR_UNKNOWN
					 ? json_null() : json_integer(z->serial));
	json_object_set_new(o, "expired", json_boolean(z->state == P53_XFR_EXPIRED));
	if (z->is_catalog) {
		json_int_t members = 0;
		for (size_t i = 0; i < d->xfr->n; i++)
			members += d->xfr->zones[i]->catalog == z && !d->xfr->zones[i]->removed;
		json_object_set_new(o, "catalog", json_true());
		json_object_set_new(o, "members", json_integer(members));
	}
	if (z->catalog != NULL)
		json_object_set_new(o, "member_of", json_string(z->catalog->name));
	for (int i = 0; cz != NULL && i < cz->xfr->n_primaries; i++) {
		const struct p53_xfr_primary *p = &cz->xfr->primaries[i];
		char a[INET6_ADDRSTRLEN], s[INET6_ADDRSTRLEN + 64];
		inet_ntop(p->family, p->addr, a, sizeof(a));
		snprintf(s, sizeof(s), p->family == AF_INET6 ? "[%s]:%u%s%s" : "%s:%u%s%s", a, p->port,
			 p->key_name != NULL ? " key " : "", p->key_name != NULL ? p->key_name : "");
		json_array_append_new(prim, json_string(s));
	}
	json_object_set_new(o, "primaries", prim);
	json_object_set_new(o, "primary", z->last_primary >= 0 && z->last_primary < (int)json_array_size(prim)
					  ? json_incref(json_array_get(prim, (size_t)z->last_primary)) : json_null());
	json_object_set_new(o, "last_refresh", time_json(z->last_refresh));
	json_object_set_new(o, "next_refresh", time_json(z->busy ? now : z->next_refresh));
	json_object_set_new(o, "next_refresh_in_s", json_integer(z->busy ? 0 :
				(json_int_t)(z->next_refresh > now ? z->next_refresh - now : 0)));
	json_object_set_new(o, "expire", time_json(z->expire_at));
	json_object_set_new(o, "expire_in_s", z->expire_at == 0 ? json_null()
					      : json_integer((json_int_t)(z->expire_at - now)));
	json_object_set_new(o, "soa_timers", json_pack("{s:I, s:I, s:I}", "refresh", (json_int_t)z->refresh,
						       "retry", (json_int_t)z->retry, "expire", (json_int_t)z->expire));
	json_object_set_new(o, "busy", json_boolean(z->busy));
	json_object_set_new(o, "last_transfer", json_pack("{s:o, s:s, s:s, s:f, s:f}",
		"time", time_json(z->last_xfr), "type", z->last_how, "result", z->last_result,
		"transfer_ms", z->last_xfr_ms, "apply_ms", z->last_apply_ms));
	json_object_set_new(o, "transfers", json_pack("{s:I, s:I}", "ok", (json_int_t)z->xfr_ok,
						      "failed", (json_int_t)z->xfr_failed));
	json_object_set_new(o, "notifies", json_integer((json_int_t)z->notifies));
	json_object_set_new(o, "last_ixfr_image", z->last_ixfr_image[0] != '\0'
						  ? json_string(z->last_ixfr_image) : json_null());
	json_object_set_new(o, "ixfr_image", ways_json(&z->ixfr_ways));
	json_object_set_new(o, "last_axfr_image", z->last_axfr_image[0] != '\0'
						  ? json_string(z->last_axfr_image) : json_null());
	json_object_set_new(o, "axfr_image", ways_json(&z->axfr_ways));
	json_object_set_new(o, "notify_to_served_ms", z->notify_to_served_ms > 0
					? json_real(z->notify_to_served_ms) : json_null());
	json_object_set_new(o, "file", json_string(z->file));
	return o;
}

json_t *p53_xfr_status_json(const struct p53_daemon *d, const char *name, char *err, size_t errlen)
{
	const struct p53_xfr *x = d->xfr;

	if (name != NULL) {
		struct p53_xfr_zone *z = x != NULL ? p53_xfr_find(x, name) : NULL;
		if (z == NULL) {
			snprintf(err, errlen, "zone '%s' is not a secondary zone here (`zone list` shows "
				 "every zone)", name);
			return NULL;
		}
		return zone_json(d, z);
	}
	json_t *a = json_array();
	for (size_t i = 0; x != NULL && i < x->n; i++)
		json_array_append_new(a, zone_json(d, x->zones[i]));
	return a;
}

bool p53_xfr_zone_expired(const struct p53_xfr *x, const char *name)
{
	const struct p53_xfr_zone *z = p53_xfr_find(x, name);

	return z != NULL && z->state == P53_XFR_EXPIRED;
}

size_t p53_xfr_zones_stale(const struct p53_xfr *x, size_t *expired, size_t *nodata)
{
	*expired = *nodata = 0;
	for (size_t i = 0; x != NULL && i < x->n; i++) {
		*expired += x->zones[i]->state == P53_XFR_EXPIRED;
		*nodata += x->zones[i]->state == P53_XFR_NODATA;
	}
	return *expired + *nodata;
}

void p53_xfr_totals(const struct p53_xfr *x, struct p53_xfr_stats *out)
{
	out->secondary = x->totals;
}

void p53_xfr_free(struct p53_xfr *x)
{
	if (x == NULL)
		return;
	if (x->started)
		p53_xfr_pool_stop(&x->pool);
	p53_xfr_notify_close(x);
	p53_nout_free(&x->nout);
	for (size_t i = 0; i < x->n; i++)
		zone_free(x->zones[i]);
	while (x->held != NULL) {
		struct p53_xfr_job *j = x->held;
		x->held = j->next;
		p53_xfr_job_free(j);
	}
	free(x->zones);
	p53_patch_index_free(x->pix);
	free(x);
}
