/*
 * New zone content to the workers: p53_zones_update() and the compile it shares with start-up
 * and reload (p53_xfr_compile). See xfr.h. Control thread only.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "control/daemon.h"
#include "control/log.h"
#include "control/xfr/catalog.h"
#include "control/xfr/journal.h"
#include "control/xfr/serve_conf.h"
#include "control/xfr/store.h"
#include "control/xfr/serve.h"
#include "control/xfr/xfr.h"
#include "control/zone/compile.h"
#include "control/zone/image_patch.h"
#include "control/zone/zone_repatch.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

/* The image's zone whose apex is this name, or P53_NONE. */
static uint32_t image_zone(const void *img, const uint8_t *apex, size_t len)
{
	if (img == NULL)
		return P53_NONE;
	uint32_t ni = p53_image_find(img, apex, len, p53_name_hash(apex, len));
	if (ni == P53_NONE)
		return P53_NONE;
	const struct p53_image_node *nd = p53_image_node(img, ni);
	if (!(nd->flags & P53_NODE_APEX))
		return P53_NONE;
	return nd->zone;
}

static uint8_t expire_rcode(int on_expire)
{
	return on_expire == P53_EXPIRE_REFUSE ? P53_RCODE_REFUSED : P53_RCODE_SERVFAIL;
}

/* The zones[] entry of the catalog that lists `z`, when it is a catalog zone of cfg. */
static const struct p53_config_zone *member_of(const struct p53_config *cfg,
					       const struct p53_xfr_zone *z)
{
	const struct p53_xfr_zone *c = z->catalog;

	for (int i = 0; c != NULL && i < cfg->n_zones; i++)
		if (cfg->zones[i].xfr != NULL && cfg->zones[i].xfr->catalog &&
		    strcasecmp(cfg->zones[i].name, c->name) == 0)
			return &cfg->zones[i];
	return NULL;
}

/* A disk copy older than the zone's SOA EXPIRE is not served after a restart. */
static bool copy_expired(const struct p53_config *cfg, const char *name, const char *file)
{
	uint32_t serial, expire;
	time_t mtime;

	if (p53_store_soa(file, name, &serial, &expire, &mtime) != 0)
		return false;
	if (expire < cfg->xfr.expire_min_s)
		expire = cfg->xfr.expire_min_s;
	return mtime + (time_t)expire <= time(NULL);
}

struct plan {
	struct p53_zone_src *src;
	bool *from_image;               /* records read out of the running image into own[] */
	struct p53_xfr_zone **zs;       /* the state behind each source, NULL for primary zones */
	struct p53_rrs *own;            /* records extracted for this compile, one per source */
	size_t n;
	void *extras;                   /* the steered records the sources point into */
};

static void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		p53_rrs_free(&p->own[i]);
	free(p->own);
	free(p->from_image);
	free(p->zs);
	free(p->src);
	free(p->extras);
	memset(p, 0, sizeof(*p));
}

static struct p53_zone_update *update_of(struct p53_zone_update *u, size_t n,
					 const struct p53_xfr_zone *z)
{
	for (size_t i = 0; z != NULL && i < n; i++)
		if (u[i].z == z && u[i].rc == 0)
			return &u[i];
	return NULL;
}

/* Where one secondary zone's records come from in this compile (see p53_xfr_compile).
 * Returns 1 when they are to be read out of the running image (into *own). */
static int secondary_src(const struct p53_config *cfg, const struct p53_xfr_zone_conf *zc,
			  bool catalog, struct p53_xfr_zone *z, const void *cur_img,
			  struct p53_zone_update *u, size_t n, struct p53_zone_src *src,
			  struct p53_rrs **want, struct p53_rrs *own)
{
	struct p53_zone_update *up = update_of(u, n, z);

	src->flags = P53_ZONE_SECONDARY;
	if (catalog) {
		src->rcode = P53_RCODE_REFUSED; /* RFC 9432 §1: not for resolution */
		return 0;
	}
	if (up != NULL) {
		if (up->kind == P53_UPDATE_NODATA) {
			src->rcode = up->rcode;
		} else {
			src->rrs = up->result.buf;
			src->rrs_len = up->result.len;
		}
		return 0;
	}
	if (z != NULL && (z->state == P53_XFR_LOADED || z->state == P53_XFR_EXPIRED)) {
		uint32_t iz = image_zone(cur_img, z->apex, z->apex_len);
		if (iz != P53_NONE && p53_image_zone(cur_img, iz)->rcode == 0) {
			want[iz] = own; /* filled by one pass over the image, below */
			return 1;
		}
		src->rcode = z->state == P53_XFR_EXPIRED ? expire_rcode(zc->on_expire) : P53_RCODE_SERVFAIL;
		return 0;
	}
	if (z != NULL && z->state == P53_XFR_NODATA) {
		src->rcode = P53_RCODE_SERVFAIL; /* as Knot answers a zone it has not loaded */
		return 0;
	}
	/* Not compiled before (start-up, a zone a reload adds): its disk copy, if good. */
	if ((z != NULL && z->bad_copy) || access(src->file, F_OK) != 0) {
		src->rcode = P53_RCODE_SERVFAIL;
		return 0;
	}
	if (zc->on_expire != P53_EXPIRE_KEEP && copy_expired(cfg, src->name, src->file)) {
		src->rcode = expire_rcode(zc->on_expire);
		return 0;
	}
	/* A lazy copy (xfr.copy_sync_s): its journal may run past it; then serve the newest. */
	if (z == NULL || z->no_roll)
		return 0;
	char err[1400];
	uint32_t serial = 0;
	int steps = p53_journal_roll_forward(src->file, src->name, z->apex, z->apex_len, own,
					     &serial, err, sizeof(err));
	if (steps > 0) {
		p53_info("zone %s: disk copy %s and %d journal step(s) after it: serial %u", z->name,
			 src->file, steps, serial);
		z->rolled = true;
		return 1; /* own[] holds the records */
	}
	if (steps < 0)
		p53_warn("zone %s: serving its disk copy as it is: %s", z->name, err);
	return 0;
}

static int plan_make(struct p53_xfr *x, const struct p53_config *cfg, const void *cur_img,
		     struct p53_zone_update *u, size_t n, struct plan *p)
{
	size_t cap = (size_t)cfg->n_zones + (x != NULL ? x->n : 0);
	uint32_t nz = cur_img != NULL ? p53_image_hdr(cur_img)->n_zones : 0;
	struct p53_rrs **want = calloc(nz + 1, sizeof(*want));

	p->src = calloc(cap + 1, sizeof(*p->src));
	p->zs = calloc(cap + 1, sizeof(*p->zs));
	p->own = calloc(cap + 1, sizeof(*p->own));
	p->from_image = calloc(cap + 1, sizeof(*p->from_image));
	p->n = 0;
	if (want == NULL || p->src == NULL || p->zs == NULL || p->own == NULL || p->from_image == NULL) {
		free(want);
		return -1;
	}
	for (int i = 0; i < cfg->n_zones; i++) {
		const struct p53_config_zone *cz = &cfg->zones[i];
		struct p53_zone_src *src = &p->src[p->n];
		src->name = cz->name;
		src->file = cz->file;
		src->cfg_file = cfg->path;
		src->cfg_line = cz->line;
		if (cz->xfr != NULL) {
			struct p53_xfr_zone *z = x != NULL ? p53_xfr_find(x, cz->name) : NULL;
			bool members_copy = false;
			if (z != NULL && z->member_id != NULL) {
				/* A catalog member this config names (a reload): its state and disk
				 * copy are the member's (p53_xfr_reconciled forgets both), not this
				 * zone's, which starts from a copy of its own or without data. */
				members_copy = strcmp(z->file, cz->file) == 0;
				z = NULL;
			}
			p->zs[p->n] = z;
			if (members_copy && !cz->xfr->catalog) {
				src->flags = P53_ZONE_SECONDARY;
				src->rcode = P53_RCODE_SERVFAIL;
			} else {
				p->from_image[p->n] = secondary_src(cfg, cz->xfr, cz->xfr->catalog, z,
								    cur_img, u, n, src, want,
								    &p->own[p->n]);
			}
		}
		if (p53_xfr_transfer_signed(cfg, cz))
			src->flags |= P53_ZONE_XFR_SIGNED;
		p->n++;
	}
	for (size_t i = 0; x != NULL && i < x->n; i++) {
		struct p53_xfr_zone *z = x->zones[i];
		const struct p53_config_zone *cz = z->removed ? NULL : member_of(cfg, z);
		/* RFC 9432 §5.4: a zone of the config wins over a member of its name. */
		if (cz == NULL || p53_xfr_conf_named(cfg, z->name) != NULL)
			continue;
		struct p53_zone_src *src = &p->src[p->n];
		src->name = z->name;
		src->file = z->file;
		src->cfg_file = cfg->path;
		src->cfg_line = cz->line;
		p->zs[p->n] = z;
		/* Members take their catalog's settings (cz), but are zones, not catalogs. */
		p->from_image[p->n] = secondary_src(cfg, cz->xfr, false, z, cur_img, u, n, src, want,
						    &p->own[p->n]);
		if (p53_xfr_transfer_signed(cfg, cz))
			src->flags |= P53_ZONE_XFR_SIGNED;
		p->n++;
	}
	int rc = 0;
	if (cur_img != NULL && nz > 0)
		rc = p53_image_zones_rrs(cur_img, want);
	free(want);
	for (size_t i = 0; i < p->n; i++) {
		if (p->from_image[i]) {
			p->src[i].rrs = p->own[i].buf;
			p->src[i].rrs_len = p->own[i].len;
		}
	}
	return rc;
}

/* Drop secondary disk copies from the files a compile read: nobody edits them but us. */
static void files_filter(const struct plan *p, char **files, size_t *n)
{
	size_t o = 0;

	for (size_t i = 0; i < *n; i++) {
		bool ours = false;
		for (size_t k = 0; k < p->n && !ours; k++)
			ours = (p->src[k].flags & P53_ZONE_SECONDARY) && strcmp(p->src[k].file, files[i]) == 0;
		if (ours)
			free(files[i]);
		else
			files[o++] = files[i];
	}
	*n = o;
}

void *p53_xfr_compile(struct p53_xfr *x, const struct p53_config *cfg, const void *cur_img,
		      struct p53_zone_update *u, size_t n, size_t *len, char *err, size_t errlen,
		      char ***files, size_t *n_files)
{
	for (int attempt = 0; attempt < 64; attempt++) {
		struct plan p = { 0 };
		void *img = NULL;

		if (plan_make(x, cfg, cur_img, u, n, &p) != 0) {
			snprintf(err, errlen, "%s: out of memory", cfg->path);
			plan_free(&p);
			return NULL;
		}
		/* Steered records go into their zones on every compile (compile.h). */
		p.extras = p53_steer_extras_attach(cfg, p.src, p.n, err, errlen);
		if (p.extras == NULL) {
			plan_free(&p);
			return NULL;
		}
		img = p53_image_build_files(p.src, p.n, len, err, errlen, p53_log_warn_cb, NULL, files,
					    n_files);
		if (img != NULL) {
			if (files != NULL)
				files_filter(&p, *files, n_files);
			plan_free(&p);
			return img;
		}
		/* A disk copy that does not compile (edited, truncated) must not stop a start or
		 * a reload: leave that zone without data (it is transferred again) and retry. */
		struct p53_xfr_zone *bad = NULL;
		for (size_t i = 0; i < p.n && bad == NULL; i++) {
			size_t fl = p.src[i].file != NULL ? strlen(p.src[i].file) : 0;
			if (p.zs[i] != NULL && p.src[i].rrs == NULL && p.src[i].rcode == 0 && fl > 0 &&
			    strncmp(err, p.src[i].file, fl) == 0 && err[fl] == ':')
				bad = p.zs[i];
		}
		/* Records rolled forward by a journal that do not compile: the copies as they are
		 * (every rolled zone, once: the error need not name the zone). */
		size_t off = 0;
		for (size_t i = 0; i < p.n && bad == NULL; i++)
			if (p.zs[i] != NULL && p.zs[i]->state == P53_XFR_UNKNOWN && p.zs[i]->rolled &&
			    !p.zs[i]->no_roll) {
				p53_err("zone %s: its disk copy with its journal's steps does not compile, "
					"the copy served as it is: %s", p.zs[i]->name, err);
				p.zs[i]->no_roll = true;
				p.zs[i]->rolled = false;
				off++;
			}
		plan_free(&p);
		if (off > 0)
			continue;
		if (bad == NULL || bad->bad_copy)
			return NULL;
		p53_err("zone %s: its disk copy does not compile, ignored (a transfer replaces it): %s",
			bad->name, err);
		bad->bad_copy = true;
	}
	return NULL;
}

/* CPU time of the control thread: what the machine's other load disturbs less than the
 * wall time (the control thread may share its CPU with a worker). */
static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t tsc_ms(uint64_t t0)
{
	return (rte_rdtsc() - t0) * 1000u / rte_get_tsc_hz();
}

/* A DIFF's base, into *into: the catalog's records (a copy: the catalog keeps its own until
 * the new ones are good), or the zone's records out of the running image. */
static int diff_base(struct p53_daemon *d, struct p53_xfr_zone *z, struct p53_rrs *into,
		     char *err, size_t errlen)
{
	p53_rrs_free(into);
	if (z->is_catalog) {
		if (p53_rrs_append(into, &z->cat) != 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	uint32_t iz = image_zone(d->dp.image, z->apex, z->apex_len);
	if (iz == P53_NONE || p53_image_zone(d->dp.image, iz)->rcode != 0) {
		snprintf(err, errlen, "IXFR for a zone that has no data here");
		return -1;
	}
	struct p53_rrs **want = calloc(p53_image_hdr(d->dp.image)->n_zones, sizeof(*want));
	if (want == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	want[iz] = into;
	int rc = p53_image_zones_rrs(d->dp.image, want);
	free(want);
	if (rc != 0) {
		p53_rrs_free(into);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* Stage 1: each update's new records (or why not). */
static void prepare(struct p53_daemon *d, struct p53_zone_update *up)
{
	struct p53_xfr_zone *z = up->z;

	up->rc = 0;
	up->err[0] = '\0';
	if (up->kind == P53_UPDATE_NODATA)
		return;
	if (up->kind == P53_UPDATE_FULL) {
		p53_rrs_move(&up->result, &up->rrs);
	} else if (up->lazy) {
		return; /* the patch tries first; made in full only if it declines (materialize) */
	} else {
		/* The zone's records once, the differences applied to them where they are. */
		if (diff_base(d, z, &up->result, up->err, sizeof(up->err)) != 0 ||
		    p53_ixfr_apply_inplace(&up->result, up->diff, up->err, sizeof(up->err)) != 0) {
			p53_rrs_free(&up->result);
			up->rc = -1;
			return;
		}
	}
	if (p53_rrs_soa_serial(&up->result) < 0) {
		snprintf(up->err, sizeof(up->err), "the new content has no SOA for %s", z->name);
		up->rc = -1;
		return;
	}
	if (z->is_catalog) {
		struct p53_catalog_member *m = NULL;
		size_t nm = 0;
		if (p53_catalog_parse(&up->result, z->apex, z->apex_len, &m, &nm, up->err,
				      sizeof(up->err), p53_log_warn_cb, NULL) != 0) {
			up->rc = -1;
			return;
		}
		struct p53_rrs copy = { 0 };
		if (p53_rrs_append(&copy, &up->result) != 0) {
			free(m);
			snprintf(up->err, sizeof(up->err), "out of memory");
			up->rc = -1;
			return;
		}
		p53_rrs_move(&z->cat, &copy);
		p53_catalog_reconcile(d->xfr, &d->cfg, z, m, nm, false);
		free(m);
	}
}

/* The patch declined: the zone's new records of a lazy DIFF made now, as prepare() makes
 * them for any other (its checks and errors the same). Returns how many updates are left
 * to publish. */
static size_t materialize(struct p53_daemon *d, struct p53_zone_update *u, size_t n)
{
	size_t live = 0;

	for (size_t i = 0; i < n; i++) {
		if (u[i].rc == 0 && u[i].lazy) {
			u[i].lazy = false;
			prepare(d, &u[i]);
		}
		live += u[i].rc == 0;
	}
	return live;
}

/* Where an update's time went, for the log (docs/BENCHMARKS.md, zone transfers). */
struct timing {
	uint64_t compile, publish;      /* TSC ticks */
	double compile_cpu, publish_cpu; /* the control thread's CPU ms */
	bool patched;                   /* the image was patched, not compiled */
};

/* Why update up was not patched (and how it went in then), cut to the room zone status's
 * texts leave. */
static void say_why(struct p53_zone_update *up, const char *why)
{
	snprintf(up->why, sizeof(up->why), "%.*s", (int)sizeof(up->why) - 1, why);
}

/* Why the IXFRs of this publish were not patched, for the splice, the log when they are
 * compiled in full (publish) and `zone status` (way_text). */
static void not_patched(struct p53_zone_update *u, size_t n, const char *why)
{
	for (size_t i = 0; i < n; i++)
		if (u[i].rc == 0 && u[i].kind == P53_UPDATE_DIFF)
			say_why(&u[i], why);
}

/*
 * IXFRs alone in this publish (one per zone, zones with data here): the running image
 * patched (control/zone/image_patch.c), one IXFR after another, instead of every zone
 * compiled again, when the patch takes every one; NULL (the reason kept for `zone status`,
 * for each of them) when it does not.
 */
static void *try_patch(struct p53_daemon *d, struct p53_zone_update *u, size_t n, size_t *len)
{
	size_t live = 0;

	for (size_t i = 0; i < n; i++) {
		if (u[i].rc != 0)
			continue;
		if (u[i].kind != P53_UPDATE_DIFF || u[i].diff == NULL || u[i].z->is_catalog) {
			/* A whole zone (or no data, or a catalog): one compile for all. */
			not_patched(u, n, "a whole zone, a catalog's or a zone without data was "
				    "updated in the same publish");
			return NULL;
		}
		for (size_t k = 0; k < i; k++) {
			if (u[k].rc == 0 && u[k].z == u[i].z) {
				not_patched(u, n, "two updates of one zone in the same publish");
				return NULL;
			}
		}
		live++;
	}
	if (live == 0 || d->dp.image == NULL)
		return NULL;
	/* Several IXFRs (of different zones) in one publish: patched one after another, each
	 * onto the image the one before made; the image a step read becomes the next one's
	 * spare. One that declines sends them all to the full compile. */
	void *img = NULL, *spare = p53_dataplane_spare_take(&d->dp);
	struct p53_zone_update *no = NULL;
	/* What the patch keeps about the running image between IXFRs (patch_index.h): made
	 * the first time a patch needs it, then following every patched image published. */
	if (d->xfr->pix == NULL)
		d->xfr->pix = p53_patch_index_new();
	for (size_t i = 0; i < n && no == NULL; i++) {
		if (u[i].rc != 0)
			continue;
		/* The key and window a compile of the zone would sign its steered owners' NSECs
		 * with (p53_steer_extras_attach sets them): the patch signs them as it would. */
		struct p53_zone_src src = { .name = u[i].z->name };
		struct p53_patch_sign sign = { 0 };
		char err[256];
		void *extras = p53_steer_extras_attach(&d->cfg, &src, 1, err, sizeof(err));
		if (extras != NULL)
			sign = (struct p53_patch_sign){ .key = src.sign_key,
							.inception = src.sign_inception,
							.expiration = src.sign_expiration };
		free(extras);
		void *next = p53_image_patch_indexed(img != NULL ? img : d->dp.image, u[i].z->apex,
						     u[i].z->apex_len, u[i].diff,
						     u[i].lazy ? NULL : &u[i].result, &sign, spare,
						     d->xfr->pix, len, u[i].why, sizeof(u[i].why));
		spare = img;
		img = next;
		if (next == NULL)
			no = &u[i];
	}
	free(spare);
	if (no == NULL) {
		for (size_t i = 0; i < n; i++)
			if (u[i].rc == 0)
				u[i].way = P53_WAY_PATCHED;
		return img;
	}
	for (size_t i = 0; i < n; i++)
		if (u[i].rc == 0 && &u[i] != no)
			snprintf(u[i].why, sizeof(u[i].why), "zone %.100s in the same publish was not "
				 "patched", no->z->name);
	return NULL;
}

/* A secondary zone's new content (up->result) as the compile's source for it alone, as
 * p53_xfr_compile() makes it. -1: the config does not name the zone, which no transfer
 * meets: the config changes only by a reload, whose p53_xfr_reconciled() drops at once
 * every zone it does not name as a secondary zone (or a member of a catalog it names), and
 * a transfer of a dropped zone is thrown away (p53_xfr_tick). Kept so that a state the
 * config lost is compiled in full (the compile reads the config) rather than alone. */
static int zone_src_of(const struct p53_config *cfg, const struct p53_xfr_zone *z,
		       const struct p53_zone_update *up, struct p53_zone_src *out)
{
	const struct p53_config_zone *cz = member_of(cfg, z);
	for (int i = 0; cz == NULL && i < cfg->n_zones; i++)
		if (cfg->zones[i].xfr != NULL && strcasecmp(cfg->zones[i].name, z->name) == 0)
			cz = &cfg->zones[i];
	if (cz == NULL)
		return -1;
	*out = (struct p53_zone_src){ .name = z->name, .file = z->file, .cfg_file = cfg->path,
				    .cfg_line = cz->line, .rrs = up->result.buf,
				    .rrs_len = up->result.len, .flags = P53_ZONE_SECONDARY };
	if (p53_xfr_transfer_signed(cfg, cz))
		out->flags |= P53_ZONE_XFR_SIGNED;
	return 0;
}

/* The patch index of the running image made to follow image ni, zone z spliced into it, so
 * that the next IXFR's patch does not make it again from ni (patch_index.h). */
static void index_spliced(struct p53_daemon *d, void *ni, uint32_t z)
{
	if (d->xfr->pix != NULL)
		(void)p53_patch_index_spliced(d->xfr->pix, d->dp.image, ni, z);
}

/* The one update of this publish (a whole zone or a DIFF, not a catalog) when it is alone and
 * an image is served; else NULL. */
static struct p53_zone_update *alone(struct p53_daemon *d, struct p53_zone_update *u, size_t n)
{
	struct p53_zone_update *up = NULL;

	for (size_t i = 0; i < n; i++) {
		if (u[i].rc != 0)
			continue;
		if (up != NULL || u[i].kind == P53_UPDATE_NODATA || u[i].z->is_catalog)
			return NULL;
		up = &u[i];
	}
	return d->dp.image != NULL ? up : NULL;
}

/*
 * An AXFR (a whole zone) alone in this publish, of a zone the image serves with data: the
 * zone compiled alone, compared with what the image holds and patched into it as one IXFR
 * step (control/zone/zone_repatch.h), instead of every zone compiled again; NULL (the reason
 * logged) when the patch declines. The journal and the disk copy take the update as a
 * whole zone all the same (p53_zones_update).
 */
static void *try_patch_full(struct p53_daemon *d, struct p53_zone_update *u, size_t n, size_t *len)
{
	struct p53_zone_update *up = alone(d, u, n);
	const struct p53_config *cfg = &d->cfg;

	if (up == NULL) {
		for (size_t i = 0; i < n; i++)
			if (u[i].rc == 0 && u[i].kind == P53_UPDATE_FULL)
				say_why(&u[i], u[i].z->is_catalog
					? "a catalog zone (compiled with every zone)"
					: "other zones were updated in the same publish");
		return NULL;
	}
	if (up->kind != P53_UPDATE_FULL)
		return NULL;
	struct p53_xfr_zone *z = up->z;
	uint32_t iz = image_zone(d->dp.image, z->apex, z->apex_len);
	if (iz == P53_NONE || p53_image_zone(d->dp.image, iz)->rcode != 0)
		return NULL; /* a first transfer: nothing to patch (try_splice says so) */
	struct p53_zone_src src;
	if (zone_src_of(cfg, z, up, &src) != 0) {
		say_why(up, "the config does not name the zone");
		return NULL;
	}
	char why[256], err[1024];
	uint64_t st[2];
	void *img = NULL;
	void *extras = p53_steer_extras_attach(cfg, &src, 1, err, sizeof(err));
	enum p53_repatch rc = P53_REPATCH_BAD;
	if (extras != NULL)
		rc = p53_zone_repatch(d->dp.image, &src, true, p53_dataplane_spare_take(&d->dp),
				      &img, len, st, why, sizeof(why), err, sizeof(err),
				      p53_log_warn_cb, NULL, NULL, NULL);
	free(extras);
	if (rc == P53_REPATCH_PATCHED) {
		up->way = P53_WAY_PATCHED;
		p53_info("xfr: zone %s: AXFR patched into the image (%" PRIu64 " record(s) deleted, %"
			 PRIu64 " added, SOAs included)", z->name, st[0], st[1]);
		return img;
	}
	say_why(up, rc == P53_REPATCH_BAD ? err : why);
	if (rc == P53_REPATCH_SPLICED) {
		up->way = P53_WAY_SPLICED;
		index_spliced(d, img, iz);
		p53_info("xfr: zone %s: AXFR spliced into the image, compiled alone (the patch "
			 "declined: %s)", z->name, why);
		return img;
	}
	/* The full compile gives a bad zone's error as it always did. */
	p53_info("xfr: zone %s: AXFR compiled in full, not patched: %s", z->name,
		 rc == P53_REPATCH_BAD ? err : why);
	return NULL;
}

/*
 * One zone's update alone in this publish that the patch did not take (an IXFR it declined,
 * the first transfer of a zone served without data): the zone compiled alone and spliced
 * into the running image (control/zone/image_splice.h) instead of every zone compiled
 * again; NULL (the reason logged) when the splice declines too. A whole zone of a zone with
 * data went through try_patch_full(), which splices what its patch declines.
 */
static void *try_splice(struct p53_daemon *d, struct p53_zone_update *u, size_t n, size_t *len)
{
	struct p53_zone_update *up = alone(d, u, n);

	if (up == NULL)
		return NULL;
	struct p53_xfr_zone *z = up->z;
	/* An IXFR keeps what the patch said (try_patch) for the log and `zone status`; a whole
	 * zone says here why it is compiled in full. */
	bool full = up->kind == P53_UPDATE_FULL;
	uint32_t iz = image_zone(d->dp.image, z->apex, z->apex_len);
	if (iz == P53_NONE) {
		if (full)
			say_why(up, "the zone is new to the image");
		return NULL;
	}
	bool first = p53_image_zone(d->dp.image, iz)->rcode != 0;
	if (full && !first)
		return NULL; /* try_patch_full spliced it or said why not */
	if (materialize(d, u, n) == 0)
		return NULL; /* a lazy DIFF that does not apply: its own error */
	struct p53_zone_src src;
	if (zone_src_of(&d->cfg, z, up, &src) != 0) {
		if (full)
			say_why(up, "the config does not name the zone");
		return NULL;
	}
	char why[256], err[1024];
	if (first)
		say_why(up, "the zone had no data");
	void *img = NULL;
	void *extras = p53_steer_extras_attach(&d->cfg, &src, 1, err, sizeof(err));
	enum p53_repatch rc = P53_REPATCH_BAD;
	if (extras != NULL)
		rc = p53_zone_splice(d->dp.image, &src, p53_dataplane_spare_take(&d->dp), &img,
				     len, why, sizeof(why), err, sizeof(err), p53_log_warn_cb, NULL);
	free(extras);
	if (rc == P53_REPATCH_SPLICED) {
		up->way = P53_WAY_SPLICED;
		index_spliced(d, img, iz);
		p53_info("xfr: zone %s: %s spliced into the image, compiled alone (the patch "
			 "declined: %s)", z->name, up->kind == P53_UPDATE_DIFF ? "IXFR" : "AXFR", up->why);
		return img;
	}
	p53_info("xfr: zone %s: compiled in full, not spliced: %s", z->name,
		 rc == P53_REPATCH_BAD ? err : why);
	if (rc == P53_REPATCH_BAD) {
		if (full)
			say_why(up, err);
	} else {
		/* Why the patch declined (or the zone had no data), then why the splice did,
		 * as zone_repatch.c says it for an AXFR of a zone with data. */
		size_t k = strlen(up->why);
		snprintf(up->why + k, sizeof(up->why) - k, "; not spliced: %s", why);
	}
	return NULL;
}

/* The updates of this publish (rc 0; others may be published already, one at a time) go in
 * with every zone compiled unless a patch or a splice takes them (and say why not). */
static void ways_compiled(struct p53_zone_update *u, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (u[i].rc == 0) {
			u[i].way = P53_WAY_COMPILED;
			u[i].why[0] = '\0';
		}
	}
}

/* How update up got into the image, for `zone status` (last_ixfr_image, last_axfr_image). */
static void way_text(const struct p53_zone_update *up, char *buf, size_t len)
{
	switch (up->way) {
	case P53_WAY_PATCHED:
		snprintf(buf, len, "patched");
		break;
	case P53_WAY_SPLICED: {
		/* The patch's reason whole where the zone's name leaves room. */
		size_t k = (size_t)snprintf(buf, len, "spliced: zone %.60s compiled alone (the "
					    "patch declined: ", up->z->name);
		snprintf(buf + k, len - k, "%.*s)", (int)(len - k - 2), up->why);
		break;
	}
	case P53_WAY_COMPILED:
		snprintf(buf, len, P53_COMPILED_IN_FULL "%s", up->why);
		break;
	}
}

/* Stage 2: one compile (or patch) and one publish for the updates marked 0 in u. */
static int publish(struct p53_daemon *d, struct p53_zone_update *u, size_t n, char *err,
		   size_t errlen, struct timing *tm)
{
	size_t len;
	uint64_t t0 = rte_rdtsc();
	double c0 = thread_cpu_ms();
	ways_compiled(u, n);
	void *img = try_patch(d, u, n, &len);
	if (img == NULL)
		img = try_patch_full(d, u, n, &len);
	if (img == NULL)
		img = try_splice(d, u, n, &len);
	if (img == NULL) {
		if (materialize(d, u, n) == 0) {
			/* The lazy DIFF did not apply: its own error (rc -1), nothing published. */
			tm->compile += rte_rdtsc() - t0;
			tm->compile_cpu += thread_cpu_ms() - c0;
			return 1;
		}
		for (size_t i = 0; i < n; i++)
			if (u[i].rc == 0 && u[i].kind == P53_UPDATE_DIFF)
				p53_info("xfr: zone %s: IXFR compiled in full, not patched: %s",
					 u[i].z->name, u[i].why);
		img = p53_xfr_compile(d->xfr, &d->cfg, d->dp.image, u, n, &len, err, errlen, NULL, NULL);
	} else {
		tm->patched = true;
	}
	uint64_t t1 = rte_rdtsc();
	double c1 = thread_cpu_ms();

	tm->compile += t1 - t0;
	tm->compile_cpu += c1 - c0;
	if (img == NULL)
		return -1;
	/* The publish takes the image, published or not, and keeps the one it replaces (faulted
	 * in) as the next patch's spare: a secondary zone's update, patched or compiled, is
	 * followed by IXFRs. */
	d->dp.keep_spare = true;
	d->dp.patch_of_running = tm->patched;
	/* A patched image carries its patch index's token until the publish gives it a
	 * generation: the index follows it (patch_index.h). */
	uint64_t token = p53_image_hdr(img)->generation;
	int rc = p53_dataplane_publish(&d->dp, img, len, &d->cfg, err, errlen);
	if (rc == 0 && tm->patched)
		p53_patch_index_published(d->xfr->pix, token, d->dp.generation);
	d->dp.keep_spare = d->dp.patch_of_running = false;
	if (rc != 0 && tm->patched && d->dp.stuck < 0) {
		/* Never expected (the patch keeps what the publish checks): compile in full. A
		 * stuck reader fails any publish alike: its error (err) is the update's. */
		p53_warn("xfr: a patched image was not published (%s); compiling in full", err);
		tm->patched = false;
		ways_compiled(u, n);
		not_patched(u, n, "the patched image was not published");
		if (materialize(d, u, n) == 0)
			return -1;
		img = p53_xfr_compile(d->xfr, &d->cfg, d->dp.image, u, n, &len, err, errlen, NULL, NULL);
		rc = img != NULL ? p53_dataplane_publish(&d->dp, img, len, &d->cfg, err, errlen) : -1;
	}
	tm->publish += rte_rdtsc() - t1;
	tm->publish_cpu += thread_cpu_ms() - c1;
	return rc != 0 ? -1 : 0;
}

/* An IXFR or a whole zone published: counted by its way into the image, in the totals and
 * the zone's, and that way said (`zone status` ixfr_image and last_ixfr_image, or
 * axfr_image and last_axfr_image). */
static void count_way(struct p53_xfr *x, const struct p53_zone_update *up)
{
	struct p53_xfr_zone *z = up->z;

	if (up->kind == P53_UPDATE_DIFF) {
		x->totals.ixfr.n[up->way]++;
		z->ixfr_ways.n[up->way]++;
		way_text(up, z->last_ixfr_image, sizeof(z->last_ixfr_image));
	} else {
		x->totals.axfr.n[up->way]++;
		z->axfr_ways.n[up->way]++;
		way_text(up, z->last_axfr_image, sizeof(z->last_axfr_image));
	}
}

size_t p53_zones_update(struct p53_daemon *d, struct p53_zone_update *u, size_t n)
{
	struct p53_xfr *x = d->xfr;
	uint64_t t0 = rte_rdtsc();
	double cpu0 = thread_cpu_ms();
	char err[1024];
	size_t ok = 0, live = 0;
	struct timing tm = { 0 };

	/* DIFFs alone (what try_patch can patch): their records are not made unless the patch
	 * declines; nothing else needs them (the journal takes the diff, the disk copy when due
	 * reads the running image, serving reads the image and the journal). */
	bool diffs = d->dp.image != NULL;
	for (size_t i = 0; i < n; i++)
		diffs &= u[i].kind == P53_UPDATE_DIFF && u[i].diff != NULL && !u[i].z->is_catalog;
	for (size_t i = 0; i < n && diffs; i++)
		u[i].lazy = true;
	for (size_t i = 0; i < n; i++) {
		prepare(d, &u[i]);
		live += u[i].rc == 0;
	}
	uint64_t t_prep = rte_rdtsc() - t0;
	double cpu_prep = thread_cpu_ms() - cpu0;
	/* 1: every lazy DIFF failed to apply (each has its own error), nothing to publish. */
	err[0] = '\0';
	if (live > 0 && publish(d, u, n, err, sizeof(err), &tm) < 0) {
		if (live == 1) {
			for (size_t i = 0; i < n; i++)
				if (u[i].rc == 0) {
					u[i].rc = -1;
					snprintf(u[i].err, sizeof(u[i].err), "%.590s", err);
				}
		} else {
			/* One bad zone must not hold the others back: one at a time. */
			p53_warn("xfr: publishing %zu zone updates together failed (%s); one at a time",
				 live, err);
			for (size_t i = 0; i < n; i++) {
				if (u[i].rc != 0)
					continue;
				/* Only update i counts in this compile: park the others. */
				for (size_t k = 0; k < n; k++)
					if (k != i && u[k].rc == 0)
						u[k].rc = 1;
				if (publish(d, u, n, err, sizeof(err), &tm) != 0) {
					u[i].rc = -1;
					snprintf(u[i].err, sizeof(u[i].err), "%.590s", err);
				} else {
					u[i].rc = 2; /* published */
					p53_xfr_sync(x, &d->cfg, d->dp.image);
				}
				for (size_t k = 0; k < n; k++)
					if (u[k].rc == 1)
						u[k].rc = 0;
			}
			for (size_t i = 0; i < n; i++)
				if (u[i].rc == 2)
					u[i].rc = 0;
		}
	}
	double ms = (double)tsc_ms(t0);
	for (size_t i = 0; i < n; i++) {
		if (u[i].rc != 0) {
			x->totals.apply_failed++;
			p53_err("xfr: zone %s: not published: %s", u[i].z->name, u[i].err);
			continue;
		}
		ok++;
		x->totals.applied++;
		u[i].z->last_apply_ms = ms;
		if (u[i].kind != P53_UPDATE_NODATA)
			count_way(x, &u[i]);
		/* The journal follows what is served: differences we applied, or nothing after a
		 * whole new zone (serve.h falls back to the whole zone for older serials). */
		if (u[i].kind == P53_UPDATE_DIFF && u[i].diff != NULL)
			p53_journal_push(&u[i].z->journal, u[i].diff, d->cfg.xfr.journal_max_bytes);
		else
			p53_journal_clear(&u[i].z->journal);
	}
	if (ok > 0)
		p53_xfr_serve_publish(&d->serve, &d->cfg, x);
	if (ok > 0) {
		p53_xfr_sync(x, &d->cfg, d->dp.image);
		const struct p53_image_hdr *h = p53_image_hdr(d->dp.image);
		double hz = (double)rte_get_tsc_hz() / 1000.0;
		p53_info("xfr: published %zu zone update(s) in %.1f ms, %.1f ms of CPU (records and "
			 "differences %.1f ms, %.1f CPU; %s %.1f ms, %.1f CPU; publish %.1f ms, %.1f "
			 "CPU: check %.1f, replicas %.1f, grace %.1f, free %.1f ms): %u zone(s), %u "
			 "records, generation %" PRIu64, ok, ms,
			 thread_cpu_ms() - cpu0, (double)t_prep / hz, cpu_prep,
			 tm.patched ? "patch" : "compile", (double)tm.compile / hz, tm.compile_cpu,
			 (double)tm.publish / hz, tm.publish_cpu, (double)d->dp.us_check / 1000.0,
			 (double)d->dp.us_replicas / 1000.0, (double)d->dp.us_grace / 1000.0,
			 (double)d->dp.us_free / 1000.0, h->n_zones, h->n_records, h->generation);
	}
	/* Members a catalog no longer lists are out of the image now: forget them. */
	for (size_t i = 0; i < x->n;) {
		struct p53_xfr_zone *z = x->zones[i];
		if (z->removed && !z->busy && !z->writing && ok > 0) {
			p53_xfr_member_forget(x, z);
			continue;
		}
		i++;
	}
	malloc_trim(0);
	return ok;
}
