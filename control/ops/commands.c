/*
 * Control-socket commands: each takes the request's words and returns the reply JSON.
 * The words and replies are documented in docs/OPERATIONS.md (pop53ctl). Control thread only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "control/ops/ctl.h"
#include "control/daemon.h"
#include "control/dnssec/dnssec.h"
#include "control/log.h"
#include "control/ops/counters.h"
#include "control/steer/steer_explain.h"
#include "control/xfr/xfr.h"
#include "dataplane/image.h"
#include "control/text.h"

static char *dump(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);

	json_decref(o);
	return s;
}

static char *fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *fail(const char *fmt, ...)
{
	char msg[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dump(json_pack("{s:b, s:s}", "ok", 0, "error", msg));
}

static json_t *ok(void)
{
	return json_pack("{s:b}", "ok", 1);
}

/* Zones of the running image: name, serial, records are image facts; file from the config. */
static json_t *zones_json(const struct p53_daemon *d)
{
	json_t *a = json_array();
	const void *img = d->dp.image;

	if (img == NULL)
		return a;
	for (uint32_t i = 0; i < p53_image_hdr(img)->n_zones; i++) {
		const struct p53_image_zone *z = p53_image_zone(img, i);
		char name[1024];
		p53_name_to_str(name, sizeof(name), p53_image_name(img, z->name_off));
		const char *file = "";
		for (int k = 0; k < d->cfg.n_zones; k++)
			if (strcasecmp(d->cfg.zones[k].name, name) == 0)
				file = d->cfg.zones[k].file;
		struct p53_dnssec_state st;
		char why[1200];
		uint64_t now = (uint64_t)time(NULL);
		p53_dnssec_zone_state(img, i, now, &st);
		json_t *ds = json_pack("{s:b, s:s}", "signed", st.is_signed, "denial", st.denial);
		if (st.is_signed) {
			/* the health seam's verdict (control/dnssec/dnssec.h) */
			int fit = p53_dnssec_zone_check(img, i, now, d->cfg.dnssec.margin_s, why,
							sizeof(why)) == 0;
			json_object_set_new(ds, "expires", json_integer((json_int_t)st.expire));
			json_object_set_new(ds, "expires_in", json_integer((json_int_t)st.left));
			json_object_set_new(ds, "within_margin", json_boolean(!fit));
		}
		json_array_append_new(a, json_pack("{s:s, s:I, s:s, s:o}", "name", name,
						   "serial", (json_int_t)z->serial, "file", file,
						   "dnssec", ds));
	}
	return a;
}

static char *cmd_status(struct p53_daemon *d)
{
	json_t *o = ok();
	const struct p53_image_hdr *h = d->dp.image != NULL ? p53_image_hdr(d->dp.image) : NULL;

	json_object_set_new(o, "version", json_string(P53_VERSION));
	json_object_set_new(o, "identity", json_string(d->cfg.identity));
	json_object_set_new(o, "uptime_s", json_integer((json_int_t)(time(NULL) - d->started)));
	json_object_set_new(o, "workers", json_integer(d->dp.n_workers));
	json_object_set_new(o, "port", json_string(d->port.name));
	json_object_set_new(o, "replicas", json_string(d->dp.mode == P53_REPLICAS_PER_SOCKET ? "per-socket" : "per-core"));
	json_object_set_new(o, "image_bytes", json_integer((json_int_t)d->dp.image_len));
	json_object_set_new(o, "records", json_integer(h != NULL ? h->n_records : 0));
	json_object_set_new(o, "generation", json_integer(h != NULL ? (json_int_t)h->generation : 0));
	json_object_set_new(o, "zones", zones_json(d));
	json_object_set_new(o, "reloads", json_pack("{s:I, s:I, s:f, s:s}",
		"ok", (json_int_t)d->dp.reloads_ok, "failed", (json_int_t)d->dp.reloads_failed,
		"last_ms", d->dp.last_reload_ms, "last_error", d->dp.last_error));
	json_object_set_new(o, "health", p53_health_json(&d->health, true));
	return dump(o);
}

/* `stats` JSON: one value per scalar family, an object per labelled family; "a.b" keys nest. */
static void json_series(void *arg, const struct p53_family *fam, const char *label, uint64_t v)
{
	json_t *o = arg;
	const char *dot = strchr(fam->json, '.');
	const char *fam_key = fam->json;
	char outer[32];

	if (dot != NULL) {
		snprintf(outer, sizeof(outer), "%.*s", (int)(dot - fam->json), fam->json);
		json_t *sub = json_object_get(o, outer);
		if (sub == NULL) {
			sub = json_object();
			json_object_set_new(o, outer, sub);
		}
		if (label == NULL) {
			json_object_set_new(sub, dot + 1, json_integer((json_int_t)v));
			return;
		}
		o = sub; /* "a.b" with a label: b is an object of labels inside a */
		fam_key = dot + 1;
	}
	if (label == NULL) {
		json_object_set_new(o, fam->json, json_integer((json_int_t)v));
		return;
	}
	json_t *sub = json_object_get(o, fam_key);
	if (sub == NULL) {
		sub = json_object();
		json_object_set_new(o, fam_key, sub);
	}
	json_object_set_new(sub, label, json_integer((json_int_t)v));
}

static json_t *stats_json(struct p53_daemon *d)
{
	struct p53_totals t;
	struct p53_port_totals pt;
	json_t *o = json_object();

	struct p53_rrl_top top;
	p53_daemon_totals(d, &t);
	p53_daemon_port_totals(d, &pt);
	p53_rrl_top(&d->guard, &top);
	p53_counters_walk(&t, &pt, &top, json_series, o);
	return o;
}

static char *cmd_stats(struct p53_daemon *d, int reset)
{
	json_t *o = ok();

	json_object_set_new(o, "stats", stats_json(d));
	if (reset) {
		p53_daemon_stats_reset(d);
		json_object_set_new(o, "reset", json_true());
	}
	return dump(o);
}

static char *cmd_workers(struct p53_daemon *d)
{
	json_t *o = ok(), *a = json_array();
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();

	for (unsigned int i = 0; i < d->dp.n_workers; i++) {
		const struct p53_worker *w = &d->dp.workers[i];
		const struct p53_worker_stats *s = &w->stats;
		uint64_t drops = s->multiseg + s->no_answer;
		for (int k = 1; k < P53_PKT_DROP__MAX; k++)
			drops += s->drop[k];
		/* TSCs of different cores may differ by a hair: a heartbeat "from the future" is 0 ms
		 * old; a worker that never polled is -1. */
		uint64_t hb = s->heartbeat;
		double age = hb == 0 ? -1 : now > hb ? (double)(now - hb) * 1000.0 / (double)hz : 0;
		const struct p53_nsec3_cache_stats *nc = w->nsec3;
		const struct p53_qcache *qc = w->qcache;
		json_array_append_new(a, json_pack("{s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I}",
			"worker", i, "lcore", w->lcore, "queue", w->queue,
			"rx", (json_int_t)s->rx, "tx", (json_int_t)s->tx, "answered", (json_int_t)s->answered,
			"dropped", (json_int_t)drops, "tx_fail", (json_int_t)s->tx_fail,
			"heartbeat_age_ms", age,
			"idle_ratio", s->polls ? (double)s->idle_polls / (double)s->polls : 1.0,
			"nsec3_cache_hits", (json_int_t)(nc != NULL ? nc->hits : 0),
			"nsec3_cache_misses", (json_int_t)(nc != NULL ? nc->misses + nc->uncached : 0),
			"answer_cache_hits", (json_int_t)(qc != NULL ? qc->hits : 0),
			"answer_cache_misses", (json_int_t)(qc != NULL ? qc->misses : 0),
			"steer_pick_hits", (json_int_t)(qc != NULL ? qc->pick_hits : 0),
			"steer_pick_misses", (json_int_t)(qc != NULL ? qc->pick_misses : 0)));
	}
	json_object_set_new(o, "workers", a);
	return dump(o);
}

static char *cmd_reload(struct p53_daemon *d, int config, const char *zone)
{
	char err[1024], note[512];
	uint64_t t0 = rte_rdtsc();

	if (p53_daemon_reload(d, config, zone, err, sizeof(err), note, sizeof(note)) != 0)
		return fail("%s", err);
	json_t *o = ok();
	json_object_set_new(o, "ms", json_real((double)(rte_rdtsc() - t0) * 1000.0 / (double)rte_get_tsc_hz()));
	json_object_set_new(o, "zones", zones_json(d));
	/* What the image got: patched (the zones whose files changed, or `zone reload NAME`),
	 * spliced (a zone compiled alone where the patch declined, and why), unchanged, or
	 * compiled in full and why (control/reload.c). */
	json_object_set_new(o, "image", json_string(d->reload_image));
	if (note[0] != '\0')
		json_object_set_new(o, "note", json_string(note));
	return dump(o);
}

/* Secondary zones (control/xfr/): one, or all of them. */
static char *cmd_zone_status(struct p53_daemon *d, const char *name)
{
	char err[1200];
	json_t *z = p53_xfr_status_json(d, name, err, sizeof(err));

	if (z == NULL)
		return fail("%s", err);
	json_t *o = ok();
	json_object_set_new(o, name != NULL ? "zone" : "zones", z);
	return dump(o);
}

/* The transfer runs on a transfer thread: this only asks for it (zone status shows it). */
static char *cmd_zone_refresh(struct p53_daemon *d, const char *name, int retransfer)
{
	char err[1200];

	if (p53_xfr_refresh(d, name, retransfer, err, sizeof(err)) != 0)
		return fail("%s", err);
	json_t *o = ok();
	json_object_set_new(o, "queued", json_string(retransfer ? "AXFR" : "SOA check"));
	return dump(o);
}

/* The disk copy is written by a transfer thread: this only asks for it (the log says when). */
static char *cmd_zone_flush(struct p53_daemon *d, const char *name)
{
	char err[1200];

	if (p53_xfr_flush(d, name, err, sizeof(err)) != 0)
		return fail("%s", err);
	json_t *o = ok();
	json_object_set_new(o, "queued", json_string("disk copy write"));
	return dump(o);
}

/*
 * Test hooks, only when pop53d started with POP53_TEST_HOOKS=1 in its environment (the
 * integration tests do; production never does): `test stall-worker N on|off` makes worker N
 * hang as a stuck worker would (no polling, no heartbeat, no quiescent state).
 */
static char *cmd_test(struct p53_daemon *d, const char *const *argv, int argc)
{
	if (argc == 3 && strcmp(argv[0], "stall-worker") == 0 &&
	    (strcmp(argv[2], "on") == 0 || strcmp(argv[2], "off") == 0)) {
		char *end;
		unsigned long i = strtoul(argv[1], &end, 10);
		if (*end != '\0' || i >= d->dp.n_workers)
			return fail("no worker %s", argv[1]);
		d->dp.workers[i].stall = strcmp(argv[2], "on") == 0;
		p53_warn("test hook: worker %lu %s", i, d->dp.workers[i].stall ? "stalled" : "released");
		return dump(ok());
	}
	return fail("test hooks: stall-worker N on|off");
}

/* `health [set external up|down|auto]`, `drain`, `undrain` (control/health/health.h). */
static char *cmd_health(struct p53_daemon *d, const char *const *argv, int argc)
{
	if (argc == 4 && strcmp(argv[1], "set") == 0 && strcmp(argv[2], "external") == 0) {
		if (p53_health_set_external(&d->health, argv[3]) != 0)
			return fail("health set external: up, down or auto, not '%s'", argv[3]);
	} else if (argc != 1) {
		return fail("usage: health [set external up|down|auto]");
	}
	json_t *o = ok();
	json_object_set_new(o, "health", p53_health_json(&d->health, false));
	return dump(o);
}

/* `target list`, `target set NAME up|down|auto`: steered targets and their health
 * (control/steer/steer_pub.h). */
static json_t *targets_json(const struct p53_steer_pub *p)
{
	static const char *const forced[] = { "down", "auto", "up" };
	json_t *a = json_array();

	for (int i = 0; p->conf != NULL && i < p->st.n_records; i++) {
		const struct p53_steer_record *r = &p->conf->records[i];
		for (int j = 0; j < r->n_pool; j++) {
			const struct p53_steer_check *c = p53_steer_chk(&p->st, i, j);
			const struct p53_steer_target *t = &r->pool[j];
			const char *probe = p53_steer_check_kind(t);
			bool checked = strcmp(probe, "none") != 0;
			json_t *o = json_pack(
				"{s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:I}", "record", r->owner,
				"type", r->type == 28 ? "AAAA" : r->type == 5 ? "CNAME" : "A", "name", t->name,
				"address", t->address != NULL ? t->address : t->target, "pop", t->pop ? t->pop : "",
				"up", p53_steer_target_up(&p->st, i, j), "check",
				!checked ? "none" : c->up ? "up" : "down",
				"forced", forced[c->forced + 1], "changes", (json_int_t)c->changes);
			if (t->backup)
				json_object_set_new(o, "fallback_pool", json_true());
			/* The check itself: what runs, its last verdict and the counts rise/fall read. */
			json_object_set_new(o, "probe", json_string(probe));
			if (checked)
				json_object_set_new(o, "probe_state", json_pack(
					"{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
					"last", c->last_ms == 0 ? "pending" : c->last_ok ? "ok" : "fail",
					"reason", c->last, "ok_run", (json_int_t)c->ok_run,
					"fail_run", (json_int_t)c->fail_run, "rise", (json_int_t)t->rise,
					"fall", (json_int_t)t->fall, "oks", (json_int_t)c->oks,
					"fails", (json_int_t)c->fails,
					"interval_ms", (json_int_t)t->check_interval_ms,
					"timeout_ms", (json_int_t)t->check_timeout_ms));
			/* https: how its TLS handshakes went (resumed: the last session was taken). */
			if (checked && t->probe.set && t->probe.type == P53_PROBE_HTTPS) {
				json_t *ps = json_object_get(o, "probe_state");
				json_object_set_new(ps, "tls_full", json_integer((json_int_t)c->probe.tls_full));
				json_object_set_new(ps, "tls_resumed",
						    json_integer((json_int_t)c->probe.tls_resumed));
			}
			json_array_append_new(a, o);
		}
	}
	return a;
}

static char *cmd_target(struct p53_daemon *d, const char *const *argv, int argc)
{
	if (argc == 4 && strcmp(argv[1], "set") == 0) {
		int n = p53_steer_force(&d->steer, argv[2], argv[3]);
		if (n < 0)
			return fail("target set: up, down or auto, not '%s'", argv[3]);
		if (n == 0)
			return fail("target set: no steered target is called '%s' (see target list)", argv[2]);
		/* Publish now, so the reply's state is already the answers'. */
		p53_steer_tick(&d->steer, p53_mono_ms());
	} else if (!(argc == 2 && strcmp(argv[1], "list") == 0)) {
		return fail("usage: target list | target set NAME up|down|auto");
	}
	json_t *o = ok();
	json_object_set_new(o, "targets", targets_json(&d->steer));
	return dump(o);
}

/* What the steering table's sources hold: the reply of `steering reload` and `steering`. */
static json_t *steering_json(const struct p53_steer_pub *p)
{
	static const struct { int src; const char *key; } srcs[] = {
		{ P53_STEER_SRC_MAP, "map" }, { P53_STEER_SRC_GEO, "geoip" }, { P53_STEER_SRC_ASN, "asn_db" },
	};
	json_t *o = json_object();

	for (size_t k = 0; k < sizeof(srcs) / sizeof(srcs[0]); k++) {
		const char *file = p->conf == NULL ? NULL : srcs[k].src == P53_STEER_SRC_MAP ? p->conf->map :
				   srcs[k].src == P53_STEER_SRC_GEO ? p->conf->geoip : p->conf->asn_db;
		const struct p53_steer_source *s = &p->st.src.src[srcs[k].src];
		if (file == NULL)
			continue;
		json_t *x = json_pack("{s:s, s:I, s:I, s:I}", "file", file, "networks", (json_int_t)s->n_nets,
				      "blocks_v4", (json_int_t)s->n4, "blocks_v6", (json_int_t)s->n6);
		if (srcs[k].src == P53_STEER_SRC_MAP) {
			json_object_set_new(x, "entries", json_integer(s->n_locs));
		} else {
			json_object_set_new(x, "locations", json_integer(s->n_locs));
			json_object_set_new(x, "database_type", json_string(s->kind));
			json_object_set_new(x, "build_epoch", json_integer((json_int_t)s->build_epoch));
		}
		json_object_set_new(o, srcs[k].key, x);
	}
	const struct p53_steer_hdr *h = p->cur != NULL ? p53_steer_hdr(p->cur) : NULL;
	json_object_set_new(o, "records", json_integer(h != NULL ? h->n_records : 0));
	json_object_set_new(o, "variants", json_integer(h != NULL ? h->n_variants : 0));
	json_object_set_new(o, "table_bytes", json_integer((json_int_t)p->cur_len));
	json_object_set_new(o, "reloads", json_pack("{s:I, s:I, s:f}", "ok", (json_int_t)p->source_reloads,
						    "failed", (json_int_t)p->source_reloads_failed,
						    "last_ms", p->last_source_reload_ms));
	return o;
}

/* `steering reload`: the map and MaxMind DBs alone (steer_pub.h); `steering`: what they hold. */
static char *cmd_steering(struct p53_daemon *d, const char *const *argv, int argc)
{
	char err[1024];
	uint64_t t0 = rte_rdtsc();

	if (argc == 2 && strcmp(argv[1], "reload") == 0) {
		if (p53_steer_reload_sources(&d->steer, err, sizeof(err)) != 0)
			return fail("%s", err);
	} else if (argc != 1) {
		return fail("usage: steering [reload]");
	}
	json_t *o = ok();
	if (argc == 2)
		json_object_set_new(o, "ms", json_real((double)(rte_rdtsc() - t0) * 1000.0 /
						       (double)rte_get_tsc_hz()));
	json_object_set_new(o, "steering", steering_json(&d->steer));
	return dump(o);
}

/* `explain NAME TYPE [--client IP] [--ecs PREFIX]` (control/steer/steer_explain.h). */
static char *cmd_explain(struct p53_daemon *d, const char *const *argv, int argc)
{
	const char *client = NULL, *ecs = NULL;
	char err[512];

	if (argc < 3)
		return fail("usage: explain NAME TYPE [--client IP] [--ecs PREFIX]");
	for (int i = 3; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--client") == 0)
			client = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--ecs") == 0)
			ecs = argv[++i];
		else
			return fail("usage: explain NAME TYPE [--client IP] [--ecs PREFIX]");
	}
	json_t *e = p53_steer_explain(&d->steer, argv[1], argv[2], client, ecs, err, sizeof(err));
	if (e == NULL)
		return fail("%s", err);
	json_t *o = ok();
	json_object_set_new(o, "explain", e);
	return dump(o);
}

static char *cmd_drain(struct p53_daemon *d, bool on)
{
	if (!d->health.enabled)
		return fail("health is disabled (health.enabled: false): nothing to drain");
	p53_health_drain(&d->health, on);
	/* Step now, so the reply already shows the new state. */
	p53_health_tick(&d->health, d);
	json_t *o = ok();
	json_object_set_new(o, "health", p53_health_json(&d->health, true));
	return dump(o);
}

char *p53_ctl_dispatch(struct p53_daemon *d, const char *const *argv, int argc)
{
	const char *c = argv[0];

	if (strcmp(c, "status") == 0 && argc == 1)
		return cmd_status(d);
	if (strcmp(c, "stats") == 0 && (argc == 1 || (argc == 2 && strcmp(argv[1], "--reset") == 0)))
		return cmd_stats(d, argc == 2);
	if (strcmp(c, "workers") == 0 && argc == 1)
		return cmd_workers(d);
	if (strcmp(c, "reload") == 0 && argc == 1)
		return cmd_reload(d, P53_RELOAD_CONFIG, NULL);
	/* Every zone compiled, whatever changed: the operator's way out of any doubt. */
	if (strcmp(c, "reload") == 0 && argc == 2 && strcmp(argv[1], "--full") == 0)
		return cmd_reload(d, P53_RELOAD_CONFIG | P53_RELOAD_FULL, NULL);
	if (strcmp(c, "zone") == 0 && argc >= 2) {
		if (strcmp(argv[1], "list") == 0 && argc == 2) {
			json_t *o = ok();
			json_object_set_new(o, "zones", zones_json(d));
			return dump(o);
		}
		if (strcmp(argv[1], "reload") == 0 && argc <= 3)
			return cmd_reload(d, 0, argc == 3 ? argv[2] : NULL);
		if (strcmp(argv[1], "status") == 0 && argc <= 3)
			return cmd_zone_status(d, argc == 3 ? argv[2] : NULL);
		if ((strcmp(argv[1], "refresh") == 0 || strcmp(argv[1], "retransfer") == 0) && argc == 3)
			return cmd_zone_refresh(d, argv[2], strcmp(argv[1], "retransfer") == 0);
		if (strcmp(argv[1], "flush") == 0 && argc == 3)
			return cmd_zone_flush(d, argv[2]);
	}
	if (strcmp(c, "health") == 0)
		return cmd_health(d, argv, argc);
	if (strcmp(c, "explain") == 0)
		return cmd_explain(d, argv, argc);
	if (strcmp(c, "steering") == 0)
		return cmd_steering(d, argv, argc);
	if (strcmp(c, "target") == 0 && argc >= 2)
		return cmd_target(d, argv, argc);
	if (strcmp(c, "drain") == 0 && argc == 1)
		return cmd_drain(d, true);
	if (strcmp(c, "undrain") == 0 && argc == 1)
		return cmd_drain(d, false);
	if (strcmp(c, "rrl") == 0 && argc == 1) {
		json_t *o = ok();
		json_object_set_new(o, "rrl", p53_rrl_view_json(&d->guard));
		return dump(o);
	}
	if (strcmp(c, "test") == 0 && d->test_hooks)
		return cmd_test(d, argv + 1, argc - 1);
	if (strcmp(c, "config") == 0)
		return fail("config check runs in pop53ctl itself: the daemon does not open files "
			    "a client names");
	return fail("unknown command '%s' (commands: status, stats [--reset], workers, rrl, zone list, "
		    "zone reload [NAME], zone status [NAME], zone refresh NAME, zone retransfer NAME, "
		    "zone flush NAME, reload [--full], steering [reload], health [set external up|down|auto], target list, target set NAME up|down|auto, "
		    "explain NAME TYPE [--client IP] [--ecs PREFIX], drain, undrain)", c);
}

int p53_ctl_is_reload(const char *const *argv, int argc)
{
	return (argc == 1 && strcmp(argv[0], "reload") == 0) ||
	       (argc == 2 && strcmp(argv[0], "reload") == 0 && strcmp(argv[1], "--full") == 0) ||
	       (argc >= 2 && strcmp(argv[0], "zone") == 0 && strcmp(argv[1], "reload") == 0) ||
	       (argc == 2 && strcmp(argv[0], "steering") == 0 && strcmp(argv[1], "reload") == 0);
}
