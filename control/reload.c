/*
 * Reload: re-read the config and/or recompile the zones, then publish (control/publish.c).
 * All or nothing: any error leaves the running config, replicas and XDP steering as they
 * were. Control thread only.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_cycles.h>

#include "control/conf/config_diff.h"
#include "control/daemon.h"
#include "control/log.h"
#include "control/net/xdp.h"
#include "control/xfr/serve_conf.h"
#include "control/xfr/xfr.h"
#include "control/zone/compile.h"
#include "control/zone/zone_files.h"
#include "control/zone/zone_repatch.h"
#include "dataplane/image.h"

static int str_differs(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a != b;
	return strcmp(a, b) != 0;
}

/* What a reload cannot change without restarting the data plane. */
static void restart_needed(const struct p53_config *old, const struct p53_config *new,
			   char *note, size_t len)
{
	size_t o = 0;
	int eal = old->n_eal != new->n_eal;

	for (int i = 0; !eal && i < old->n_eal; i++)
		eal = strcmp(old->eal[i], new->eal[i]) != 0;
	note[0] = '\0';
#define NOTE(cond, key) \
	if ((cond) && o < len) \
		o += (size_t)snprintf(note + o, len - o, "%s%s", o ? ", " : "", key)
	NOTE(eal, "dataplane.eal");
	NOTE(strcmp(old->port, new->port) != 0, "dataplane.port");
	NOTE(old->workers != new->workers, "dataplane.workers");
	NOTE(str_differs(old->xdp_prog, new->xdp_prog), "dataplane.xdp_prog");
	NOTE(old->rx_desc != new->rx_desc || old->tx_desc != new->tx_desc || old->mbufs != new->mbufs,
	     "dataplane queue sizes");
	NOTE(old->idle != new->idle || old->idle_max_us != new->idle_max_us ||
	     old->idle_spin_polls != new->idle_spin_polls, "dataplane.idle");
	NOTE(old->burst != new->burst, "dataplane.burst");
	NOTE(old->answer_cache != new->answer_cache, "dataplane.answer_cache");
	NOTE(old->af_xdp_busy_budget != new->af_xdp_busy_budget ||
	     old->af_xdp_force_copy != new->af_xdp_force_copy ||
	     old->af_xdp_tx_budget != new->af_xdp_tx_budget, "dataplane.af_xdp");
	NOTE(strcmp(old->control_socket, new->control_socket) != 0 ||
	     str_differs(old->control_group, new->control_group), "server.control_*");
	NOTE(old->replicas != new->replicas, "server.replicas");
	NOTE(str_differs(old->metrics_listen, new->metrics_listen) ||
	     old->metrics_enabled != new->metrics_enabled, "metrics.*");
	NOTE(old->watch_zones != new->watch_zones, "server.watch_zones");
	NOTE(!p53_health_conf_same(&old->health, &new->health), "health.*");
	NOTE(!p53_anycast_conf_same(&old->anycast, &new->anycast), "anycast.*");
	NOTE(memcmp(&old->tcp, &new->tcp, sizeof(old->tcp)) != 0, "tcp.*");
	NOTE(old->xfr.threads != new->xfr.threads, "xfr.threads");
	NOTE(old->mode != new->mode, "dataplane.mode");
	NOTE(!p53_exc_conf_same(&old->exc, &new->exc), "dataplane.exception");
#undef NOTE
	if (o > 0 && o < len)
		snprintf(note + o, len - o, ": changed, applied at the next restart");
}

/* What needs a restart keeps its running value until then: swap those fields so `fresh`
 * carries the running ones and `run` (about to be freed) the unapplied ones. */
static void keep_running(struct p53_config *run, struct p53_config *fresh)
{
#define KEEP(f) do { __typeof__(run->f) t_ = run->f; run->f = fresh->f; fresh->f = t_; } while (0)
	KEEP(eal);
	KEEP(n_eal);
	KEEP(port);
	KEEP(workers);
	KEEP(xdp_prog);
	KEEP(idle);
	KEEP(idle_max_us);
	KEEP(idle_spin_polls);
	KEEP(burst);
	KEEP(answer_cache);
	KEEP(af_xdp_busy_budget);
	KEEP(af_xdp_force_copy);
	KEEP(af_xdp_tx_budget);
	KEEP(rx_desc);
	KEEP(tx_desc);
	KEEP(mbufs);
	KEEP(control_socket);
	KEEP(control_group);
	KEEP(replicas);
	KEEP(metrics_enabled);
	KEEP(metrics_listen);
	KEEP(watch_zones);
	KEEP(health);
	KEEP(anycast);
	KEEP(tcp);
	KEEP(xfr.threads);
	KEEP(mode);
	KEEP(exc);
#undef KEEP
}

/* The config's zone by name (as an operator typed it, with or without the final dot). */
static const struct p53_config_zone *zone_conf(const struct p53_config *cfg, const char *zone)
{
	size_t zl = strlen(zone);

	for (int i = 0; i < cfg->n_zones; i++) {
		const char *n = cfg->zones[i].name;
		size_t nl = strlen(n);
		if (strcasecmp(n, zone) == 0 ||
		    (nl == zl + 1 && n[nl - 1] == '.' && strncasecmp(n, zone, zl) == 0))
			return &cfg->zones[i];
	}
	return NULL;
}

/* The identity of a zone's files (those its last compile read, and its own) before a compile
 * reads them (control/zone/zone_files.h): out of memory leaves some out, identified after. */
static void before_of(struct p53_daemon *d, const struct p53_config_zone *cz,
		      struct p53_zone_files *before)
{
	if (p53_zone_files_before(&d->zfiles, cz->name, cz->file, before) != 0)
		p53_warn("reload: out of memory for zone %s's file identities", cz->name);
}

void p53_daemon_zones_before(struct p53_daemon *d, const struct p53_config *cfg,
			     struct p53_zone_files *before)
{
	for (int i = 0; i < cfg->n_zones; i++)
		if (cfg->zones[i].xfr == NULL && cfg->zones[i].file != NULL)
			before_of(d, &cfg->zones[i], before);
}

/* One primary zone compiled alone and patched into `cur` (control/zone/zone_repatch.h). */
static enum p53_repatch patch_zone(const struct p53_config *cfg, const struct p53_config_zone *cz,
				   const void *cur, void *spare, void **img, size_t *len,
				   uint64_t st[2], char *why, size_t whylen, char *err, size_t errlen,
				   char ***files, size_t *n_files)
{
	struct p53_zone_src src = { .name = cz->name, .file = cz->file, .cfg_file = cfg->path,
				    .cfg_line = cz->line };
	if (p53_xfr_transfer_signed(cfg, cz))
		src.flags |= P53_ZONE_XFR_SIGNED;
	void *extras = p53_steer_extras_attach(cfg, &src, 1, err, errlen);
	if (extras == NULL) {
		free(spare);
		return P53_REPATCH_BAD;
	}
	enum p53_repatch rc = p53_zone_repatch(cur, &src, false, spare, img, len, st, why, whylen,
					       err, errlen, p53_log_warn_cb, NULL, files, n_files);
	free(extras);
	return rc;
}

/* What a reload's patch did to one zone, kept until the publish for the zone's file record. */
struct zone_done {
	const char *name;
	enum p53_repatch rc;
	char why[200];                  /* P53_REPATCH_SPLICED: why the patch declined */
	uint64_t st[2];
	char **files;
	size_t n_files;
	struct p53_zone_files before;   /* its files' identity before the compile */
};

struct patch_run {
	struct zone_done *z;
	size_t n;
	size_t unchanged;               /* zones whose files are as compiled: not compiled */
};

static void run_free(struct patch_run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		p53_image_files_free(r->z[i].files, r->z[i].n_files);
		p53_zone_files_free(&r->z[i].before);
	}
	free(r->z);
	memset(r, 0, sizeof(*r));
}

/*
 * `zone reload NAME` of a primary zone: that zone alone compiled (all the checks of the full
 * compile, its errors), compared with what the image serves and patched into it as one IXFR
 * step (control/zone/zone_repatch.h). Returns P53_REPATCH_PATCHED (*img), _SAME (nothing to
 * publish), _BAD (err: the reload is rejected as a full compile would reject it) or
 * _DECLINED (d->reload_image says why: compile in full). The spare image is taken in every
 * case (a reload that publishes nothing leaves the next patch none).
 */
static enum p53_repatch one_zone(struct p53_daemon *d, const char *zone, void **img, size_t *len,
				 struct patch_run *run, char *err, size_t errlen)
{
	const struct p53_config *cfg = &d->cfg;
	const struct p53_config_zone *cz = zone_conf(cfg, zone);
	char why[256];
	struct zone_done z = { 0 };

	if (cz == NULL || d->dp.image == NULL) {
		snprintf(d->reload_image, sizeof(d->reload_image), "compiled in full: no running image");
		return P53_REPATCH_DECLINED;
	}
	if (cz->xfr != NULL) {
		snprintf(d->reload_image, sizeof(d->reload_image),
			 "compiled in full: %s is a secondary zone (it keeps what it serves)", cz->name);
		return P53_REPATCH_DECLINED;
	}
	z.name = cz->name;
	before_of(d, cz, &z.before);
	z.rc = patch_zone(cfg, cz, d->dp.image, p53_dataplane_spare_take(&d->dp), img, len, z.st,
			  why, sizeof(why), err, errlen, &z.files, &z.n_files);
	switch (z.rc) {
	case P53_REPATCH_PATCHED:
		snprintf(d->reload_image, sizeof(d->reload_image), "patched: zone %s, %" PRIu64
			 " record(s) deleted and %" PRIu64 " added (SOAs included)", cz->name, z.st[0],
			 z.st[1]);
		break;
	case P53_REPATCH_SAME:
		snprintf(d->reload_image, sizeof(d->reload_image),
			 "unchanged: zone %s serves its file's content already, nothing published",
			 cz->name);
		break;
	case P53_REPATCH_SPLICED:
		snprintf(d->reload_image, sizeof(d->reload_image), "spliced: zone %s compiled alone "
			 "(the patch declined: %s)", cz->name, why);
		p53_info("reload: zone %s spliced, compiled alone (the patch declined: %s)",
			 cz->name, why);
		break;
	case P53_REPATCH_DECLINED:
		snprintf(d->reload_image, sizeof(d->reload_image), "compiled in full: %s", why);
		p53_info("reload: zone %s compiled in full, not patched: %s", cz->name, why);
		break;
	case P53_REPATCH_BAD:
		break;
	}
	if ((z.rc == P53_REPATCH_PATCHED || z.rc == P53_REPATCH_SAME ||
	     z.rc == P53_REPATCH_SPLICED) &&
	    (run->z = malloc(sizeof(*run->z))) != NULL)
		run->z[run->n++] = z;
	else {
		p53_image_files_free(z.files, z.n_files);
		p53_zone_files_free(&z.before);
	}
	/* A spliced image is published as a patched one is (checked where it differs, the
	 * image it replaces kept as the next edit's spare). */
	return z.rc == P53_REPATCH_SPLICED ? P53_REPATCH_PATCHED : z.rc;
}

/* Append to the reply line, or note that it was cut. */
static void say(char *buf, size_t len, size_t *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void say(char *buf, size_t len, size_t *o, const char *fmt, ...)
{
	va_list ap;

	if (*o >= len)
		return;
	va_start(ap, fmt);
	int k = vsnprintf(buf + *o, len - *o, fmt, ap);
	va_end(ap);
	*o += k > 0 ? (size_t)k : 0;
}

/* Names of run's zones with outcome rc, "a., b. and N more" within the reply's room. */
static void names_of(char *buf, size_t len, size_t *o, const struct patch_run *r,
		     enum p53_repatch rc, bool counts)
{
	size_t said = 0, total = 0;

	for (size_t i = 0; i < r->n; i++)
		total += r->z[i].rc == rc;
	for (size_t i = 0; i < r->n; i++) {
		if (r->z[i].rc != rc)
			continue;
		if (*o + 120 > len - 80 && said + 1 < total) {
			say(buf, len, o, " and %zu more", total - said);
			return;
		}
		say(buf, len, o, "%s%s", said ? ", " : "", r->z[i].name);
		if (counts)
			say(buf, len, o, " (-%" PRIu64 " +%" PRIu64 ")", r->z[i].st[0], r->z[i].st[1]);
		said++;
	}
}

/* d->reload_image for a zones-only reload that patched, spliced (or found unchanged) every
 * zone. */
static void run_say(struct p53_daemon *d, const struct patch_run *r)
{
	char *b = d->reload_image;
	size_t len = sizeof(d->reload_image), o = 0, np = 0, ns = 0, nsp = 0;

	for (size_t i = 0; i < r->n; i++) {
		np += r->z[i].rc == P53_REPATCH_PATCHED;
		ns += r->z[i].rc == P53_REPATCH_SAME;
		nsp += r->z[i].rc == P53_REPATCH_SPLICED;
	}
	/* Spliced zones first: what cost a compile of the zone alone, and why. */
	for (size_t i = 0; i < r->n; i++)
		if (r->z[i].rc == P53_REPATCH_SPLICED)
			say(b, len, &o, "%sspliced: zone %s compiled alone (the patch declined: %s)",
			    o > 0 ? "; " : "", r->z[i].name, r->z[i].why);
	if (np == 1) {
		for (size_t i = 0; i < r->n; i++)
			if (r->z[i].rc == P53_REPATCH_PATCHED)
				say(b, len, &o, "%spatched: zone %s, %" PRIu64 " record(s) deleted and %"
				    PRIu64 " added (SOAs included)", o > 0 ? "; " : "", r->z[i].name,
				    r->z[i].st[0], r->z[i].st[1]);
	} else if (np > 1) {
		say(b, len, &o, "%spatched: %zu zones: ", o > 0 ? "; " : "", np);
		names_of(b, len, &o, r, P53_REPATCH_PATCHED, true);
		say(b, len, &o, " record(s) deleted/added (SOAs included)");
	} else if (nsp == 0) {
		say(b, len, &o, "unchanged: nothing published");
	}
	if (ns > 0) {
		say(b, len, &o, "; %zu zone(s) compiled, their content as served: ", ns);
		names_of(b, len, &o, r, P53_REPATCH_SAME, false);
	}
	if (np + ns + nsp == 0)
		say(b, len, &o, ": no zone file changed since its compile (%zu zone(s) not compiled)",
		    r->unchanged);
	else
		say(b, len, &o, "; %zu other zone(s) not compiled (files as compiled)", r->unchanged);
	if (o >= len && len > 4)
		memcpy(b + len - 4, "...", 4);
}

/*
 * A zones-only reload: the primary zones whose files changed since their compile
 * (control/zone/zone_files.h), each compiled alone and patched onto the image the previous
 * one made (the first onto the running image, into the spare); the other zones are not
 * compiled, secondary zones keep what they serve. Returns P53_REPATCH_PATCHED (*img: every
 * patch), _SAME (no file changed, or no content: nothing to publish), _BAD (err: rejected as
 * a full compile would be) or _DECLINED (the first zone the patch declines: d->reload_image
 * says which and why; compile every zone). `run` gets each compiled zone's outcome and files.
 */
static enum p53_repatch changed_zones(struct p53_daemon *d, const struct p53_config *cfg,
				      int64_t since, void **img, size_t *len,
				      struct patch_run *run, char *err, size_t errlen)
{
	const void *cur = d->dp.image;
	void *mine = NULL, *spare = NULL;
	bool spare_taken = false;
	char which[512], what[540], why[256];

	run->z = calloc((size_t)cfg->n_zones + 1, sizeof(*run->z));
	if (run->z == NULL) {
		snprintf(d->reload_image, sizeof(d->reload_image), "compiled in full: out of memory");
		return P53_REPATCH_DECLINED;
	}
	for (int i = 0; i < cfg->n_zones; i++) {
		const struct p53_config_zone *cz = &cfg->zones[i];
		if (cz->xfr != NULL)
			continue;
		if (!p53_zone_files_changed(&d->zfiles, cz->name, since, which, sizeof(which))) {
			run->unchanged++;
			continue;
		}
		snprintf(what, sizeof(what), "%s%s", which[0] ? which : "no record of its files",
			 which[0] ? " changed" : "");
		struct zone_done *z = &run->z[run->n++];
		void *out = NULL;
		size_t olen = 0;
		z->name = cz->name;
		before_of(d, cz, &z->before);
		if (!spare_taken) {
			spare = p53_dataplane_spare_take(&d->dp);
			spare_taken = true;
		}
		z->rc = patch_zone(cfg, cz, cur, spare, &out, &olen, z->st, why, sizeof(why), err,
				   errlen, &z->files, &z->n_files);
		spare = NULL; /* taken */
		switch (z->rc) {
		case P53_REPATCH_SPLICED:
			snprintf(z->why, sizeof(z->why), "%.199s", why);
			p53_info("reload: zone %s spliced (%s), compiled alone: the patch declined: %s",
				 cz->name, what, why);
			__attribute__((fallthrough)); /* onto the next zone's as a patched image is */
		case P53_REPATCH_PATCHED:
			if (z->rc == P53_REPATCH_PATCHED)
				p53_info("reload: zone %s patched (%s): %" PRIu64 " record(s) deleted, %"
					 PRIu64 " added (SOAs included)", cz->name, what, z->st[0],
					 z->st[1]);
			/* The image before is free once the next one is made from this one. */
			spare = mine;
			mine = out;
			cur = out;
			*len = olen;
			break;
		case P53_REPATCH_SAME:
			p53_info("reload: zone %s compiled (%s), its content is what is served",
				 cz->name, what);
			break;
		case P53_REPATCH_DECLINED:
			snprintf(d->reload_image, sizeof(d->reload_image),
				 "compiled in full: zone %s: %s", cz->name, why);
			p53_info("reload: zone %s compiled in full, not patched: %s", cz->name, why);
			/* fallthrough */
		case P53_REPATCH_BAD:
			free(mine);
			return z->rc;
		}
	}
	free(spare);
	run_say(d, run);
	*img = mine;
	return mine != NULL ? P53_REPATCH_PATCHED : P53_REPATCH_SAME;
}

/* The signing keys a config loaded: the same ones (zone, flags, algorithm, tag)? */
static bool keys_same(const struct p53_dnssec_conf *a, const struct p53_dnssec_conf *b)
{
	if (a->n_keys != b->n_keys)
		return false;
	for (int i = 0; i < a->n_keys; i++) {
		const struct p53_sign_key *x = &a->keys[i], *y = &b->keys[i];
		if (x->owner_len != y->owner_len || memcmp(x->owner, y->owner, x->owner_len) != 0 ||
		    x->flags != y->flags || x->alg != y->alg || x->tag != y->tag)
			return false;
	}
	return true;
}

/* The zones' file records after a compile of every zone: the primaries, in the config's
 * order (the compile's, control/xfr/update.c), own the files read from theirs on. */
static void zones_compiled(struct p53_daemon *d, const struct p53_config *cfg, char *const *files,
			   size_t n, int64_t since, const struct p53_zone_files *before)
{
	const char **names = calloc((size_t)cfg->n_zones + 1, sizeof(*names));
	const char **own = calloc((size_t)cfg->n_zones + 1, sizeof(*own));
	size_t nz = 0;

	if (names == NULL || own == NULL) {
		p53_zone_files_clear(&d->zfiles);
	} else {
		for (int i = 0; i < cfg->n_zones; i++)
			if (cfg->zones[i].xfr == NULL && cfg->zones[i].file != NULL) {
				names[nz] = cfg->zones[i].name;
				own[nz++] = cfg->zones[i].file;
			}
		if (p53_zone_files_set_all(&d->zfiles, names, own, nz, files, n, since,
					   before) != 0)
			p53_warn("reload: out of memory for the zones' file records: the next zones-only "
				 "reload compiles every zone");
	}
	free(names);
	free(own);
}

void p53_daemon_zones_compiled(struct p53_daemon *d, char *const *files, size_t n, int64_t since,
			       const struct p53_zone_files *before)
{
	zones_compiled(d, &d->cfg, files, n, since, before);
}

/* What a config edit means for the image. */
enum cfg_edit {
	CFG_SAME,       /* the same text */
	CFG_RUNTIME,    /* runtime settings only: the zones-only path */
	CFG_IMAGE,      /* something the image depends on, or unsure: compile every zone */
};

/*
 * The config edit (control/conf/config_diff.h), with why: "config: runtime settings only" or
 * "config: <the first difference the image depends on>". `text` is the new file's (NULL: not
 * known).
 */
static enum cfg_edit cfg_diff(const struct p53_daemon *d, const char *text, size_t len,
			      char *why, size_t whylen)
{
	char what[360];

	why[0] = '\0';
	if (text == NULL) {
		snprintf(why, whylen, "config: the file changed while it was read");
		return CFG_IMAGE;
	}
	if (d->cfg_text == NULL) {
		snprintf(why, whylen, "config: the running config's text is not known");
		return CFG_IMAGE;
	}
	if (len == d->cfg_text_len && memcmp(text, d->cfg_text, len) == 0)
		return CFG_SAME;
	if (p53_config_compile_diff(d->cfg.path, d->cfg_text, d->cfg_text_len, text, len, what,
				    sizeof(what)) == 0) {
		snprintf(why, whylen, "config: runtime settings only");
		return CFG_RUNTIME;
	}
	snprintf(why, whylen, "config: %s", what);
	return CFG_IMAGE;
}

/* buf = "p; " buf, cut to its room. */
static void prefix(char *buf, size_t len, const char *p)
{
	size_t pl = strlen(p) + 2, bl = strnlen(buf, len);

	if (pl >= len)
		return;
	if (bl > len - 1 - pl)
		bl = len - 1 - pl; /* the tail of what the zones got goes */
	memmove(buf + pl, buf, bl);
	memcpy(buf, p, pl - 2);
	memcpy(buf + pl - 2, "; ", 2);
	buf[pl + bl] = '\0';
}

int p53_daemon_reload(struct p53_daemon *d, int flags, const char *zone, char *err,
		      size_t errlen, char *note, size_t notelen)
{
	struct p53_config fresh = {0};
	const struct p53_config *use = &d->cfg;
	const int config = flags & P53_RELOAD_CONFIG;
	uint64_t t0 = rte_rdtsc();
	char **files = NULL;
	size_t n_files = 0, len;
	void *img = NULL;
	int addrs_changed = 0, tcp_changed = 0, exc_changed = 0;
	struct p53_guard_next guard_next = {0};
	struct p53_steer_next steer_next = {0};
	struct patch_run run = {0};
	struct p53_zone_files before = {0};
	/* Before anything is read: a file written from now on counts as changed next time. */
	const int64_t since = p53_file_clock_ns();
	char *cfg_text = NULL;
	size_t cfg_text_len = 0;
	char cfg_why[400] = "";
	enum cfg_edit edit = CFG_SAME;

	note[0] = '\0';
	if (config) {
		/* Read before and after the load: a change in between makes this reload and the
		 * next config reload full (the text kept must be what d->cfg was read from). */
		if (p53_config_text_read(d->cfg.path, &cfg_text, &cfg_text_len) != 0)
			cfg_text = NULL;
		if (p53_config_load(d->cfg.path, &fresh, err, errlen) != 0)
			goto fail;
		/* The same steered records keep their layout: the running image's node indices
		 * stay valid for the table built from them (dataplane/steer.h p53_steer_node). */
		p53_steer_conf_layout(&fresh.steer, &d->cfg.steer);
		use = &fresh;
		char *again = NULL;
		size_t again_len = 0;
		if (cfg_text != NULL &&
		    (p53_config_text_read(d->cfg.path, &again, &again_len) != 0 ||
		     again_len != cfg_text_len || memcmp(again, cfg_text, again_len) != 0)) {
			free(cfg_text);
			cfg_text = NULL;
		}
		free(again);
		edit = cfg_diff(d, cfg_text, cfg_text_len, cfg_why, sizeof(cfg_why));
	}
	if (zone != NULL && zone_conf(use, zone) == NULL) {
		/* A typo, not a failed reload: nothing was attempted, no alert should fire. */
		snprintf(err, errlen, "zone '%s' is not in %s", zone, use->path);
		free(cfg_text);
		p53_config_free(&fresh);
		return -1;
	}
	/* One zone named: patched into the running image when the patch takes it. No zone
	 * named: the zones whose files changed, each patched, when the config is as it was. */
	enum p53_repatch how = P53_REPATCH_DECLINED;
	snprintf(d->reload_image, sizeof(d->reload_image), "compiled in full");
	uint64_t t_patch = 0, t_pub = 0;
	if (zone != NULL && !config) {
		t_patch = rte_rdtsc();
		how = one_zone(d, zone, &img, &len, &run, err, errlen);
		t_patch = rte_rdtsc() - t_patch;
		if (how == P53_REPATCH_BAD)
			goto fail;
	} else if (zone == NULL && !(flags & P53_RELOAD_FULL)) {
		const char *full = NULL;
		if (d->dp.image == NULL)
			full = "no running image";
		else if (config && edit == CFG_IMAGE)
			full = cfg_why;
		else if (config && !keys_same(&fresh.dnssec, &d->cfg.dnssec))
			full = "the signing keys (dnssec.signing_keys) changed";
		if (full != NULL) {
			snprintf(d->reload_image, sizeof(d->reload_image), "compiled in full: %s", full);
		} else {
			t_patch = rte_rdtsc();
			how = changed_zones(d, use, since, &img, &len, &run, err, errlen);
			t_patch = rte_rdtsc() - t_patch;
			if (how == P53_REPATCH_BAD)
				goto fail;
			/* What the config edit was, before what the zones got (an unchanged
			 * file says nothing: the reply is a zones-only reload's). */
			if (config && how != P53_REPATCH_DECLINED && edit == CFG_RUNTIME)
				prefix(d->reload_image, sizeof(d->reload_image), cfg_why);
		}
	} else if (zone == NULL) {
		snprintf(d->reload_image, sizeof(d->reload_image), "compiled in full: %s",
			 config ? "asked for (reload --full)" : "asked for (re-signing)");
	}
	/* Secondary zones keep what they serve (control/xfr/update.c). */
	if (how == P53_REPATCH_DECLINED) {
		p53_daemon_zones_before(d, use, &before);
		img = p53_xfr_compile(d->xfr, use, d->dp.image, NULL, 0, &len, err, errlen, &files,
				      &n_files);
		if (img == NULL)
			goto fail;
	}
	/* New service addresses are steered before the replicas are swapped and rolled back if
	 * the swap fails, so steering and data never disagree after the reload returns. Adding
	 * before removing (p53_xdp_set_addrs) keeps the kept addresses steered throughout. */
	addrs_changed = config && d->port.steer &&
			(fresh.n_addrs != d->cfg.n_addrs ||
			 memcmp(fresh.addrs, d->cfg.addrs, sizeof(fresh.addrs)) != 0);
	if (addrs_changed && p53_xdp_set_addrs(d->port.iface, fresh.addrs, fresh.n_addrs) != 0) {
		snprintf(err, errlen, "cannot update the service addresses of the XDP program on %s",
			 d->port.iface);
		addrs_changed = 0; /* set_addrs left the map as it was or partly updated: restore */
		p53_xdp_set_addrs(d->port.iface, d->cfg.addrs, d->cfg.n_addrs);
		goto fail;
	}
	/* The TCP listeners follow the same addresses, opened before the swap as well. */
	tcp_changed = config && (fresh.n_addrs != d->cfg.n_addrs ||
				 memcmp(fresh.addrs, d->cfg.addrs, sizeof(fresh.addrs)) != 0);
	if (tcp_changed && p53_tcp_set_addrs(&d->tcp, fresh.addrs, fresh.n_addrs, err, errlen) != 0) {
		tcp_changed = 0;
		goto fail_addrs;
	}
	/* dpdk mode: the exception interface carries the service addresses for the kernel (ARP,
	 * ND, ICMP, TCP); added before the swap like the rest, removed ones after. */
	exc_changed = tcp_changed && d->exc.opened;
	if (exc_changed && p53_exc_set_addrs(&d->exc, fresh.addrs, fresh.n_addrs, err, errlen) != 0) {
		exc_changed = 0;
		goto fail_addrs;
	}
	/* The cookie and RRL settings are built before anything is published, so a failure
	 * (out of memory for new RRL tables) leaves everything as it was. */
	if (p53_guard_prepare(&d->guard, use, &guard_next, err, errlen) != 0)
		goto fail_addrs;
	/* The steering sources (map, MaxMind DB) are re-read and the table built likewise. */
	if (p53_steer_prepare(&d->steer, &use->steer, &use->dnssec, &steer_next, err, errlen) != 0) {
		p53_guard_discard(&guard_next);
		goto fail_addrs;
	}
	/* The compiler's working set is free()d by now, but glibc keeps freed heap pages: give
	 * them back before the replicas are copied, so they do not add to the reload's peak. */
	malloc_trim(0);
	int prc = 0;
	if (how != P53_REPATCH_SAME) {
		/* A patched image is published as an IXFR's is (control/xfr/update.c): checked
		 * where it differs, the image it replaces kept as the next patch's spare. */
		d->dp.keep_spare = d->dp.patch_of_running = how == P53_REPATCH_PATCHED;
		t_pub = rte_rdtsc();
		prc = p53_dataplane_publish(&d->dp, img, len, use, err, errlen);
		t_pub = rte_rdtsc() - t_pub;
		d->dp.keep_spare = d->dp.patch_of_running = false;
		img = NULL; /* the publish took it, published or not */
	}
	if (prc != 0 && how == P53_REPATCH_PATCHED && d->dp.stuck < 0) {
		/* Never expected (the patch keeps what the publish checks): compile in full. A
		 * stuck reader fails any publish alike: its error (err) is the reload's. */
		p53_warn("reload: the patched image was not published (%s); compiling in full", err);
		how = P53_REPATCH_DECLINED;
		snprintf(d->reload_image, sizeof(d->reload_image),
			 "compiled in full: the patched image was not published");
		img = p53_xfr_compile(d->xfr, use, d->dp.image, NULL, 0, &len, err, errlen, &files,
				      &n_files);
		prc = img != NULL ? p53_dataplane_publish(&d->dp, img, len, use, err, errlen) : -1;
		img = NULL;
	}
	if (prc != 0) {
		p53_guard_discard(&guard_next);
		p53_steer_discard(&steer_next);
		goto fail_addrs;
	}
	p53_guard_commit(&d->guard, &guard_next);
	p53_steer_commit(&d->steer, &steer_next);
	if (config) {
		restart_needed(&d->cfg, &fresh, note, notelen);
		keep_running(&d->cfg, &fresh);
		p53_config_free(&d->cfg);
		d->cfg = fresh;
	}
	p53_xfr_reconciled(d);
	if (config) {
		free(d->cfg_text);
		d->cfg_text = cfg_text;
		d->cfg_text_len = cfg_text_len;
		cfg_text = NULL;
	}
	/* What each zone's compile read, with the files' identity as of `since`: every primary
	 * zone's after a full compile, else the zones patched or found the same. */
	if (how == P53_REPATCH_DECLINED) {
		zones_compiled(d, &d->cfg, files, n_files, since, &before);
	} else {
		for (size_t i = 0; i < run.n; i++)
			if (p53_zone_files_set_zone(&d->zfiles, run.z[i].name, run.z[i].files,
						    run.z[i].n_files, since, &run.z[i].before) != 0)
				p53_warn("reload: out of memory for zone %s's file record: its next "
					 "reload compiles it", run.z[i].name);
	}
	/* New, moved or newly included zone files: watch what the compiles read (after a patch,
	 * the patched zones' files in place of what their last compile read). */
	if (d->watch.fd >= 0 && how == P53_REPATCH_DECLINED) {
		p53_watch_set(&d->watch, files, n_files, d->cfg.watch_debounce_ms);
	} else if (d->watch.fd >= 0 && run.n > 0) {
		char **all = NULL;
		size_t n_all = 0;
		if (p53_zone_files_list(&d->zfiles, &all, &n_all) == 0)
			p53_watch_set(&d->watch, all, n_all, d->cfg.watch_debounce_ms);
		p53_image_files_free(all, n_all);
	}
	run_free(&run);
	p53_zone_files_free(&before);
	p53_image_files_free(files, n_files);
	d->dp.reloads_ok++;
	d->dp.last_reload_ms = (double)(rte_rdtsc() - t0) * 1000.0 / (double)rte_get_tsc_hz();
	const struct p53_image_hdr *h = p53_image_hdr(d->dp.image);
	double hz = (double)rte_get_tsc_hz() / 1000.0;
	p53_info("reload%s: %u zone(s), %u records, generation %" PRIu64 ", %.1f ms (zones' "
		 "compile, diff and patch %.1f ms, publish %.1f ms), %s%s%s",
		 config ? " (config and zones)" : "", h->n_zones, h->n_records, h->generation,
		 d->dp.last_reload_ms, (double)t_patch / hz, (double)t_pub / hz, d->reload_image,
		 note[0] ? "; " : "", note);
	/* The compiler's working set was freed; give it back to the system now, not at the
	 * next reload (glibc keeps freed arenas otherwise). */
	malloc_trim(0);
	return 0;
fail_addrs:
	/* Steering and listeners back to the running addresses: what was set up for the new ones
	 * goes, so steering and data agree again. */
	if (exc_changed) {
		char terr[256];
		if (p53_exc_set_addrs(&d->exc, d->cfg.addrs, d->cfg.n_addrs, terr, sizeof(terr)) != 0)
			p53_err("reload: could not restore the exception interface's addresses: %s", terr);
	}
	if (addrs_changed && p53_xdp_set_addrs(d->port.iface, d->cfg.addrs, d->cfg.n_addrs) != 0)
		p53_err("reload: could not restore the XDP service addresses on %s", d->port.iface);
	if (tcp_changed) {
		char terr[256];
		if (p53_tcp_set_addrs(&d->tcp, d->cfg.addrs, d->cfg.n_addrs, terr, sizeof(terr)) != 0)
			p53_err("reload: could not restore the TCP listeners: %s", terr);
	}
fail:
	free(img);
	free(cfg_text);
	run_free(&run);
	p53_zone_files_free(&before);
	p53_image_files_free(files, n_files);
	p53_config_free(&fresh);
	d->dp.reloads_failed++;
	snprintf(d->dp.last_error, sizeof(d->dp.last_error), "%s", err);
	p53_err("reload rejected, still serving generation %" PRIu64 ": %s",
		d->dp.image != NULL ? p53_image_hdr(d->dp.image)->generation : 0, err);
	return -1;
}
