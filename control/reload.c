/*
 * Reload: re-read the config and/or recompile the zones, then publish (control/publish.c).
 * All or nothing: any error leaves the running config, replicas and XDP steering as they
 * were. Control thread only.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_cycles.h>

#include "control/daemon.h"
#include "control/log.h"
#include "control/net/xdp.h"
#include "control/xfr/serve_conf.h"
#include "control/xfr/xfr.h"
#include "control/zone/compile.h"
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
	NOTE(old->af_xdp_busy_budget != new->af_xdp_busy_budget ||
	     old->af_xdp_force_copy != new->af_xdp_force_copy, "dataplane.af_xdp");
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
	KEEP(af_xdp_busy_budget);
	KEEP(af_xdp_force_copy);
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

/* Is `zone` (as an operator typed it, with or without the final dot) in the config? */
static int has_zone(const struct p53_config *cfg, const char *zone)
{
	size_t zl = strlen(zone);

	for (int i = 0; i < cfg->n_zones; i++) {
		const char *n = cfg->zones[i].name;
		size_t nl = strlen(n);
		if (strcasecmp(n, zone) == 0 ||
		    (nl == zl + 1 && n[nl - 1] == '.' && strncasecmp(n, zone, zl) == 0))
			return 1;
	}
	return 0;
}

/*
 * `zone reload NAME` of a primary zone: that zone alone compiled (all the checks of the full
 * compile, its errors), compared with what the image serves and patched into it as one IXFR
 * step (control/zone/zone_repatch.h). Returns P53_REPATCH_PATCHED (*img), _SAME (nothing to
 * publish), _BAD (err: the reload is rejected as a full compile would reject it) or
 * _DECLINED (d->reload_image says why: compile in full). The files the zone's compile read
 * are not watched anew: the watch keeps the last full compile's list. The spare image is
 * taken in every case (a reload that publishes nothing leaves the next patch none).
 */
static enum p53_repatch one_zone(struct p53_daemon *d, const char *zone, void **img, size_t *len,
				 char *err, size_t errlen)
{
	const struct p53_config *cfg = &d->cfg;
	const struct p53_config_zone *cz = NULL;
	size_t zl = strlen(zone);
	char why[256];
	uint64_t st[2];

	for (int i = 0; i < cfg->n_zones && cz == NULL; i++) {
		const char *n = cfg->zones[i].name;
		size_t nl = strlen(n);
		if (strcasecmp(n, zone) == 0 ||
		    (nl == zl + 1 && n[nl - 1] == '.' && strncasecmp(n, zone, zl) == 0))
			cz = &cfg->zones[i];
	}
	if (cz == NULL || d->dp.image == NULL) {
		snprintf(d->reload_image, sizeof(d->reload_image), "compiled in full: no running image");
		return P53_REPATCH_DECLINED;
	}
	if (cz->xfr != NULL) {
		snprintf(d->reload_image, sizeof(d->reload_image),
			 "compiled in full: %s is a secondary zone (it keeps what it serves)", cz->name);
		return P53_REPATCH_DECLINED;
	}
	struct p53_zone_src src = { .name = cz->name, .file = cz->file, .cfg_file = cfg->path,
				    .cfg_line = cz->line };
	if (p53_xfr_transfer_signed(cfg, cz))
		src.flags |= P53_ZONE_XFR_SIGNED;
	void *extras = p53_steer_extras_attach(cfg, &src, 1, err, errlen);
	if (extras == NULL)
		return P53_REPATCH_BAD;
	char **files = NULL;
	size_t n_files = 0;
	enum p53_repatch rc = p53_zone_repatch(d->dp.image, &src, false,
					       p53_dataplane_spare_take(&d->dp), img, len, st, why,
					       sizeof(why), err, errlen, p53_log_warn_cb, NULL,
					       &files, &n_files);
	p53_image_files_free(files, n_files);
	free(extras);
	switch (rc) {
	case P53_REPATCH_PATCHED:
		snprintf(d->reload_image, sizeof(d->reload_image), "patched: zone %s, %" PRIu64
			 " record(s) deleted and %" PRIu64 " added (SOAs included)", cz->name, st[0],
			 st[1]);
		break;
	case P53_REPATCH_SAME:
		snprintf(d->reload_image, sizeof(d->reload_image),
			 "unchanged: zone %s serves its file's content already, nothing published",
			 cz->name);
		break;
	case P53_REPATCH_DECLINED:
		snprintf(d->reload_image, sizeof(d->reload_image), "compiled in full: %s", why);
		p53_info("reload: zone %s compiled in full, not patched: %s", cz->name, why);
		break;
	case P53_REPATCH_BAD:
		break;
	}
	return rc;
}

int p53_daemon_reload(struct p53_daemon *d, int config, const char *zone, char *err,
		      size_t errlen, char *note, size_t notelen)
{
	struct p53_config fresh = {0};
	const struct p53_config *use = &d->cfg;
	uint64_t t0 = rte_rdtsc();
	char **files = NULL;
	size_t n_files = 0, len;
	void *img = NULL;
	int addrs_changed = 0, tcp_changed = 0, exc_changed = 0;
	struct p53_guard_next guard_next = {0};
	struct p53_steer_next steer_next = {0};

	note[0] = '\0';
	if (config) {
		if (p53_config_load(d->cfg.path, &fresh, err, errlen) != 0)
			goto fail;
		use = &fresh;
	}
	if (zone != NULL && !has_zone(use, zone)) {
		/* A typo, not a failed reload: nothing was attempted, no alert should fire. */
		snprintf(err, errlen, "zone '%s' is not in %s", zone, use->path);
		p53_config_free(&fresh);
		return -1;
	}
	/* One zone named: patched into the running image when the patch takes it. */
	enum p53_repatch how = P53_REPATCH_DECLINED;
	snprintf(d->reload_image, sizeof(d->reload_image), "compiled in full");
	uint64_t t_patch = 0, t_pub = 0;
	if (zone != NULL && !config) {
		t_patch = rte_rdtsc();
		how = one_zone(d, zone, &img, &len, err, errlen);
		t_patch = rte_rdtsc() - t_patch;
		if (how == P53_REPATCH_BAD)
			goto fail;
	}
	/* Secondary zones keep what they serve (control/xfr/update.c). */
	if (how == P53_REPATCH_DECLINED) {
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
	if (prc != 0 && how == P53_REPATCH_PATCHED) {
		/* Never expected (the patch keeps what the publish checks): compile in full. */
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
	/* New, moved or newly included zone files: watch what this compile read (a patched
	 * zone's compile read its files alone: the list stays). */
	if (d->watch.fd >= 0 && how == P53_REPATCH_DECLINED)
		p53_watch_set(&d->watch, files, n_files, d->cfg.watch_debounce_ms);
	p53_image_files_free(files, n_files);
	d->dp.reloads_ok++;
	d->dp.last_reload_ms = (double)(rte_rdtsc() - t0) * 1000.0 / (double)rte_get_tsc_hz();
	const struct p53_image_hdr *h = p53_image_hdr(d->dp.image);
	double hz = (double)rte_get_tsc_hz() / 1000.0;
	p53_info("reload%s: %u zone(s), %u records, generation %" PRIu64 ", %.1f ms (zone's "
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
	p53_image_files_free(files, n_files);
	p53_config_free(&fresh);
	d->dp.reloads_failed++;
	snprintf(d->dp.last_error, sizeof(d->dp.last_error), "%s", err);
	p53_err("reload rejected, still serving generation %" PRIu64 ": %s",
		d->dp.image != NULL ? p53_image_hdr(d->dp.image)->generation : 0, err);
	return -1;
}
