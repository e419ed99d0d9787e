/* Node health on the control thread; see health.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <ldns/ldns.h>
#include <rte_cycles.h>

#include "control/anycast/anycast.h"
#include "control/daemon.h"
#include "control/dnssec/dnssec.h"
#include "control/health/health.h"
#include "control/log.h"
#include "control/text.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

#define STOP_BOUND_MS 3000      /* the stop waits at most this past drain + linger */

const char *const p53_check_names[P53_HC__MAX] = {
	[P53_HC_CANARY] = "canary", [P53_HC_WORKERS] = "workers", [P53_HC_ZONES] = "zones",
	[P53_HC_EXTERNAL] = "external",
};

static const char *const ext_mode_names[] = { "auto", "up", "down" };

static const struct p53_health_conf *conf_of(const struct p53_daemon *d)
{
	return p53_health_conf_of(&d->cfg.health);
}

static const struct p53_check_conf *check_conf(const struct p53_health_conf *hc, int i)
{
	switch (i) {
	case P53_HC_CANARY:
		return &hc->canary.check;
	case P53_HC_WORKERS:
		return &hc->workers.check;
	case P53_HC_ZONES:
		return &hc->zones.check;
	default:
		return &hc->external.check;
	}
}

int p53_health_attach(struct p53_health *h, struct p53_daemon *d, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	p53_proc_init(&h->ext);
	h->attached = true;
	return p53_canary_attach(&h->canary, d->dp.workers, d->dp.n_workers, d->port.pools, err, errlen);
}

int p53_health_start(struct p53_health *h, struct p53_daemon *d, char *err, size_t errlen)
{
	const struct p53_health_conf *hc = conf_of(d);
	uint64_t now = p53_mono_ms();
	struct p53_hsm_conf mc = {
		.hold_down_ms = hc->hold_down_ms, .min_announce_ms = hc->min_announce_ms,
		.warmup_ms = hc->warmup_ms, .drain_ms = hc->drain_ms,
		.stop_drain_ms = hc->stop_drain_ms, .stop_drain = hc->on_stop == 1,
	};

	h->enabled = hc->enabled;
	h->started_ms = now;
	p53_hsm_init(&h->m, &mc, now);
	for (int i = 0; i < P53_HC__MAX; i++) {
		const struct p53_check_conf *cc = check_conf(hc, i);
		h->chk[i].fall = cc->fall;
		h->chk[i].rise = cc->rise;
		h->next_ms[i] = now;
		h->active[i] = i != P53_HC_EXTERNAL || hc->external.command != NULL;
	}
	h->ext_command = hc->external.command != NULL;
	h->linger_ms = hc->stop_linger_ms;
	if (!h->enabled) {
		p53_warn("health: disabled (health.enabled: false): nothing is checked or announced");
		return 0;
	}
	if (p53_canary_configure(&h->canary, &d->cfg, err, errlen) != 0)
		return -1;
	h->canary_ready = true;
	/* The idle sleep must fit well inside the heartbeat bound, or an idle worker looks dead. */
	if (hc->workers.heartbeat_ms * 1000u < 2u * d->cfg.idle_max_us)
		p53_warn("health.workers.heartbeat (%" PRIu64 " ms) is less than twice "
			 "dataplane.idle.max_sleep_us (%u us): idle workers may look dead",
			 hc->workers.heartbeat_ms, d->cfg.idle_max_us);
	h->anycast = p53_anycast_open(&d->cfg);
	h->level = P53_ANNOUNCE_NONE;
	if (h->anycast != NULL)
		p53_anycast_set(h->anycast, P53_ANNOUNCE_NONE, now);
	p53_info("health: canary %s %s%s to every worker every %" PRIu64 " ms (fall %u, rise %u); "
		 "hold-down %" PRIu64 " s; %s", h->canary.qname_str,
		 ldns_rr_descript(h->canary.qtype) != NULL ? ldns_rr_descript(h->canary.qtype)->_name : "?",
		 h->canary.dnssec ? " (DO=1, RRSIGs validated)" : "", hc->canary.check.interval_ms, hc->canary.check.fall, hc->canary.check.rise,
		 hc->hold_down_ms / 1000, h->anycast != NULL ? "announcing" : "no anycast: section, nothing announced");
	return 0;
}

/* Workers alive: heartbeat younger than the bound, nobody stuck in a grace period. */
static bool workers_ok(const struct p53_daemon *d, uint64_t bound_ms, bool *critical, char *err,
		       size_t len)
{
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();

	*critical = true;
	if (d->dp.stuck >= 0) {
		/* qsbr ids past the workers are TCP threads: a reload is stuck on them all the same. */
		if ((unsigned int)d->dp.stuck < d->dp.n_workers)
			snprintf(err, len, "worker %d is stuck: it missed an RCU grace period",
				 d->dp.stuck);
		else
			snprintf(err, len, "TCP thread %u is stuck: it missed an RCU grace period",
				 (unsigned int)d->dp.stuck - d->dp.n_workers);
		return false;
	}
	for (unsigned int i = 0; i < d->dp.n_workers; i++) {
		uint64_t hb = __atomic_load_n(&d->dp.workers[i].stats.heartbeat, __ATOMIC_RELAXED);
		if (hb == 0) {
			/* Starting: not a dead worker, just not yet a healthy one. */
			*critical = false;
			snprintf(err, len, "worker %u has not polled yet", i);
			return false;
		}
		if (now > hb && (now - hb) * 1000 / hz > bound_ms) {
			snprintf(err, len, "worker %u: no heartbeat for %" PRIu64 " ms (bound %" PRIu64 " ms)",
				 i, (now - hb) * 1000 / hz, bound_ms);
			return false;
		}
	}
	return true;
}

/* Zones fresh: every configured zone is in the served image and has not expired. */
static bool zones_ok(const struct p53_health *h, const struct p53_daemon *d, char *err, size_t len)
{
	const void *img = d->dp.image;

	if (img == NULL) {
		snprintf(err, len, "no zone image published");
		return false;
	}
	for (int k = 0; k < d->cfg.n_zones; k++) {
		const char *want = d->cfg.zones[k].name;
		uint32_t zone = P53_NONE;
		for (uint32_t i = 0; i < p53_image_hdr(img)->n_zones && zone == P53_NONE; i++) {
			char name[1024];
			p53_name_to_str(name, sizeof(name), p53_image_name(img, p53_image_zone(img, i)->name_off));
			if (strcasecmp(name, want) == 0)
				zone = i;
		}
		if (zone == P53_NONE) {
			snprintf(err, len, "zone %s is not loaded", want);
			return false;
		}
		char why[160];
		/* A signed zone whose signatures run out within the margin would be bogus soon. */
		if (p53_dnssec_zone_check(img, zone, (uint64_t)time(NULL), d->cfg.dnssec.margin_s, why,
					  sizeof(why)) != 0) {
			snprintf(err, len, "%s", why);
			return false;
		}
		if (h->zone_expired != NULL && h->zone_expired(h->zone_expired_arg, want, why, sizeof(why))) {
			snprintf(err, len, "zone %s expired: %s", want, why);
			return false;
		}
	}
	/* Steered answers of signed zones carry RRSIGs pop53 made: the same margin covers them
	 * (the re-signing timer runs at signature_refresh, above it; failing here means it
	 * could not sign). */
	char why[160];
	if (p53_steer_sig_check(&d->steer, (uint64_t)time(NULL), d->cfg.dnssec.margin_s, why,
				sizeof(why)) != 0) {
		snprintf(err, len, "%s", why);
		return false;
	}
	return true;
}

static void record(struct p53_health *h, int i, bool ok, bool critical, const char *err, uint64_t now)
{
	enum p53_check_state before = h->chk[i].state;

	if (p53_check_record(&h->chk[i], ok, critical, err, now))
		p53_log(h->chk[i].state == P53_CHECK_DOWN ? P53_LOG_WARN : P53_LOG_INFO,
			"health: check %s %s -> %s%s%s", p53_check_names[i], p53_check_state_name(before),
			p53_check_state_name(h->chk[i].state), ok ? "" : ": ", ok ? "" : err);
}

static void run_checks(struct p53_health *h, struct p53_daemon *d, uint64_t now)
{
	const struct p53_health_conf *hc = conf_of(d);
	char err[P53_REASON_MAX];

	if (h->canary.open) {
		int r = p53_canary_collect(&h->canary, d->dp.image, err, sizeof(err));
		if (r >= 0)
			record(h, P53_HC_CANARY, r == 1, false, err, now);
	}
	if (!h->canary.open && now >= h->next_ms[P53_HC_CANARY]) {
		p53_canary_send(&h->canary, hc->canary.check.timeout_ms);
		h->next_ms[P53_HC_CANARY] = now + hc->canary.check.interval_ms;
		/* Queries that could not even be queued fail now, not at the deadline. */
		int r = p53_canary_collect(&h->canary, d->dp.image, err, sizeof(err));
		if (r >= 0)
			record(h, P53_HC_CANARY, r == 1, false, err, now);
	}
	if (now >= h->next_ms[P53_HC_WORKERS]) {
		bool critical;
		bool ok = workers_ok(d, hc->workers.heartbeat_ms, &critical, err, sizeof(err));
		record(h, P53_HC_WORKERS, ok, critical, err, now);
		h->next_ms[P53_HC_WORKERS] = now + hc->workers.check.interval_ms;
	}
	if (now >= h->next_ms[P53_HC_ZONES]) {
		bool ok = zones_ok(h, d, err, sizeof(err));
		record(h, P53_HC_ZONES, ok, false, err, now);
		h->next_ms[P53_HC_ZONES] = now + hc->zones.check.interval_ms;
	}
	if (h->ext_mode == P53_EXT_AUTO && hc->external.command != NULL) {
		if (p53_proc_running(&h->ext)) {
			if (p53_proc_poll(&h->ext, now)) {
				char how[200];
				p53_proc_describe(&h->ext, how, sizeof(how));
				snprintf(err, sizeof(err), "command: %.180s", how);
				record(h, P53_HC_EXTERNAL, h->ext.status == 0 && !h->ext.timed_out, false, err, now);
			}
		} else if (now >= h->next_ms[P53_HC_EXTERNAL]) {
			char *argv[] = { "/bin/sh", "-c", hc->external.command, NULL };
			h->next_ms[P53_HC_EXTERNAL] = now + hc->external.check.interval_ms;
			if (p53_proc_start(&h->ext, argv, hc->external.check.timeout_ms, now, err, sizeof(err)) != 0)
				record(h, P53_HC_EXTERNAL, false, false, err, now);
		}
	}
}

static void step(struct p53_health *h, uint64_t now)
{
	struct p53_hsm_in in = { .all_up = true };
	char why[P53_REASON_MAX * 2];

	for (int i = 0; i < P53_HC__MAX; i++) {
		if (!h->active[i])
			continue;
		in.all_up &= h->chk[i].state == P53_CHECK_UP;
		if (h->chk[i].state == P53_CHECK_DOWN && !in.any_down) {
			in.any_down = true;
			snprintf(why, sizeof(why), "check %s failed: %s", p53_check_names[i], h->chk[i].last_error);
			in.why = why;
		}
	}
	for (int k = 0; k < 8; k++) {
		enum p53_node_state before = h->m.state;
		if (!p53_hsm_step(&h->m, &in, now))
			break;
		h->transitions++;
		p53_log(p53_hsm_announce(&h->m) == P53_ANNOUNCE_NONE ? P53_LOG_WARN : P53_LOG_INFO,
			"health: node %s -> %s (%s): %s", p53_node_state_names[before],
			p53_node_state_names[h->m.state], p53_announce_names[p53_hsm_announce(&h->m)],
			h->m.reason);
		if (h->m.state == P53_NODE_STOPPED)
			h->stopped_ms = now;
	}
}

void p53_health_tick(struct p53_health *h, struct p53_daemon *d)
{
	uint64_t now = p53_mono_ms();

	if (!h->enabled)
		return;
	run_checks(h, d, now);
	step(h, now);
	enum p53_announce want = p53_hsm_announce(&h->m);
	if (h->anycast != NULL) {
		if (want != h->level)
			p53_anycast_set(h->anycast, want, now);
		p53_anycast_poll(h->anycast, now);
	}
	h->level = want;
}

int p53_health_wait_ms(const struct p53_health *h, int max_ms)
{
	uint64_t now = p53_mono_ms(), due = now + (uint64_t)max_ms;

	if (!h->enabled)
		return max_ms;
	/* While a canary round is out, look at the reply rings often: its latency is measured
	 * when the control thread sees the answer. */
	if (h->canary.open)
		return 2 < max_ms ? 2 : max_ms;
	for (int i = 0; i < P53_HC__MAX; i++)
		if ((i != P53_HC_EXTERNAL || h->active[i]) && h->next_ms[i] < due)
			due = h->next_ms[i];
	return due <= now ? 0 : (int)(due - now);
}

void p53_health_stop(struct p53_health *h)
{
	h->stop_ms = p53_mono_ms();
	p53_hsm_stop(&h->m);
	if (!h->enabled)
		return;
	/* Step now rather than at the next tick: the withdraw is the first thing a stop does. */
	struct p53_hsm_in in = { .any_down = false, .all_up = false };
	if (p53_hsm_step(&h->m, &in, h->stop_ms)) {
		h->transitions++;
		p53_warn("health: node stopping -> %s (%s): %s", p53_node_state_names[h->m.state],
			 p53_announce_names[p53_hsm_announce(&h->m)], h->m.reason);
		if (h->m.state == P53_NODE_STOPPED)
			h->stopped_ms = h->stop_ms;
	}
	if (h->anycast != NULL) {
		p53_anycast_set(h->anycast, p53_hsm_announce(&h->m), h->stop_ms);
		p53_anycast_poll(h->anycast, h->stop_ms);
	}
	h->level = p53_hsm_announce(&h->m);
}

bool p53_health_stop_done(const struct p53_health *h)
{
	uint64_t now = p53_mono_ms();

	if (!h->enabled || h->stop_ms == 0)
		return true;
	if (h->m.state != P53_NODE_STOPPED)
		return false;
	/* An announcer that cannot finish (birdc hanging until its timeout) holds the stop for
	 * at most STOP_BOUND_MS; then keep answering for the linger time, as routers take a
	 * moment to move the traffic elsewhere. */
	bool settled = h->anycast == NULL || p53_anycast_settled(h->anycast);
	return (settled || now >= h->stopped_ms + STOP_BOUND_MS) && now >= h->stopped_ms + h->linger_ms;
}

void p53_health_fini(struct p53_health *h)
{
	if (!h->attached)
		return;
	p53_proc_kill(&h->ext);
	if (h->anycast != NULL)
		p53_anycast_close(h->anycast);
	h->anycast = NULL;
	p53_canary_fini(&h->canary);
}

void p53_health_drain(struct p53_health *h, bool on)
{
	if (h->m.drain != on)
		p53_info("health: %s requested by the operator", on ? "drain" : "undrain");
	p53_hsm_drain(&h->m, on);
}

int p53_health_set_external(struct p53_health *h, const char *mode)
{
	uint64_t now = p53_mono_ms();
	struct p53_check_track *c = &h->chk[P53_HC_EXTERNAL];

	for (int i = 0; i < 3; i++) {
		if (strcmp(mode, ext_mode_names[i]) != 0)
			continue;
		if (h->ext_mode != (enum p53_external_mode)i)
			p53_info("health: external check set to %s by the operator", mode);
		h->ext_mode = (enum p53_external_mode)i;
		p53_proc_kill(&h->ext);
		if (i == P53_EXT_AUTO) {
			/* Back to the command (its results start afresh), or out of the picture. */
			h->active[P53_HC_EXTERNAL] = h->ext_command;
			c->state = P53_CHECK_UNKNOWN;
			c->ok_run = c->fail_run = 0;
			c->since_ms = now;
			h->next_ms[P53_HC_EXTERNAL] = now;
		} else {
			h->active[P53_HC_EXTERNAL] = true;
			p53_check_force(c, i == P53_EXT_UP ? P53_CHECK_UP : P53_CHECK_DOWN,
					"set down by the operator (pop53ctl health set external down)", now);
		}
		return 0;
	}
	return -1;
}

void p53_health_zone_expiry(struct p53_health *h, p53_zone_expired_fn fn, void *arg)
{
	h->zone_expired = fn;
	h->zone_expired_arg = arg;
}

static json_t *check_json(const struct p53_health *h, int i, uint64_t now)
{
	const struct p53_check_track *c = &h->chk[i];

	return json_pack("{s:s, s:b, s:i, s:i, s:i, s:i, s:f, s:I, s:I, s:s}",
			 "state", p53_check_state_name(c->state), "active", h->active[i],
			 "passes_in_a_row", c->ok_run, "failures_in_a_row", c->fail_run,
			 "fall", c->fall, "rise", c->rise,
			 "seconds_in_state", (double)(now - (c->since_ms ? c->since_ms : h->started_ms)) / 1000.0,
			 "results", (json_int_t)c->results, "failures", (json_int_t)c->failures,
			 "last_error", c->last_error);
}

json_t *p53_health_json(const struct p53_health *h, bool brief)
{
	uint64_t now = p53_mono_ms();
	uint64_t next = p53_hsm_next_announce(&h->m);
	json_t *o;

	if (!h->enabled)
		return json_pack("{s:b}", "enabled", 0);
	o = json_pack("{s:b, s:s, s:s, s:s, s:f, s:b, s:I, s:I, s:I}", "enabled", 1,
		      "state", p53_node_state_names[h->m.state],
		      "announce", p53_announce_names[p53_hsm_announce(&h->m)], "reason", h->m.reason,
		      "seconds_in_state", (double)(now - h->m.since_ms) / 1000.0, "drain", h->m.drain,
		      "flaps", (json_int_t)h->m.flaps, "announces", (json_int_t)h->m.announces,
		      "withdraws", (json_int_t)h->m.withdraws);
	json_object_set_new(o, "next_announce_in_s",
			    json_real(next > now ? (double)(next - now) / 1000.0 : 0.0));
	json_t *checks = json_object();
	for (int i = 0; i < P53_HC__MAX; i++) {
		if (brief)
			json_object_set_new(checks, p53_check_names[i],
					    json_string(h->active[i] ? p53_check_state_name(h->chk[i].state) : "off"));
		else
			json_object_set_new(checks, p53_check_names[i], check_json(h, i, now));
	}
	json_object_set_new(o, "checks", checks);
	if (!brief) {
		json_t *cw = json_array();
		for (unsigned int i = 0; i < h->canary.n; i++)
			json_array_append_new(cw, json_pack("{s:i, s:b, s:f, s:s}", "worker", i,
				"ok", !h->canary.w[i].failed, "latency_ms", h->canary.w[i].last_ms,
				"error", h->canary.w[i].err));
		json_object_set_new(json_object_get(checks, "canary"), "workers", cw);
		json_object_set_new(json_object_get(checks, "canary"), "query",
				    json_pack("{s:s, s:s, s:b}", "name", h->canary.qname_str, "type",
					      ldns_rr_descript(h->canary.qtype) != NULL ?
					      ldns_rr_descript(h->canary.qtype)->_name : "?",
					      "dnssec", h->canary.dnssec));
		json_object_set_new(json_object_get(checks, "external"), "mode",
				    json_string(ext_mode_names[h->ext_mode]));
	}
	json_object_set_new(o, "announcers", h->anycast != NULL ? p53_anycast_json(h->anycast) : json_array());
	return o;
}

/* The families of the health facts, rendered like the worker counters (counters.h). */
enum { HF_STATE, HF_ANNOUNCE, HF_ENTERED, HF_FLAPS, HF_CHECK_UP, HF_CHECK_RESULTS, HF_CHECK_FAILURES,
       HF_CHECK_DOWNS, HF_CANARY_LATE, HF_CANARY_RING_FULL, HF_DRAIN, HF__MAX };

static const struct p53_family hfam[HF__MAX] = {
	[HF_STATE] = { "pop53_health_state", "health_state", "state", P53_GAUGE, "1 for the node's current health state" },
	[HF_ANNOUNCE] = { "pop53_health_announce", "health_announce", NULL, P53_GAUGE, "what the node asks its announcers for: 0 withdrawn, 1 de-preferred, 2 announced" },
	[HF_ENTERED] = { "pop53_health_transitions_total", "health_transitions", "to", P53_COUNTER, "state machine transitions, by the state entered" },
	[HF_FLAPS] = { "pop53_health_flaps_total", "health_flaps", NULL, P53_COUNTER, "withdraws forced by a failed check" },
	[HF_CHECK_UP] = { "pop53_health_check_up", "health_check_up", "check", P53_GAUGE, "1 when the check is up (0 down or unknown)" },
	[HF_CHECK_RESULTS] = { "pop53_health_check_results_total", "health_check_results", "check", P53_COUNTER, "check results" },
	[HF_CHECK_FAILURES] = { "pop53_health_check_failures_total", "health_check_failures", "check", P53_COUNTER, "failed check results" },
	[HF_CHECK_DOWNS] = { "pop53_health_check_downs_total", "health_check_downs", "check", P53_COUNTER, "times a check went down (crossed fall)" },
	[HF_CANARY_LATE] = { "pop53_health_canary_late_total", "health_canary_late", NULL, P53_COUNTER, "canary answers that came after their round's timeout" },
	[HF_CANARY_RING_FULL] = { "pop53_health_canary_ring_full_total", "health_canary_ring_full", NULL, P53_COUNTER, "canary queries freed because a worker's ring was full" },
	[HF_DRAIN] = { "pop53_health_drain", "health_drain", NULL, P53_GAUGE, "1 while the operator's drain is on" },
};

void p53_health_walk(const struct p53_health *h, p53_counter_fn fn, void *arg)
{
	if (!h->enabled)
		return;
	for (int s = 0; s < P53_NODE__MAX; s++)
		fn(arg, &hfam[HF_STATE], p53_node_state_names[s], h->m.state == (enum p53_node_state)s);
	fn(arg, &hfam[HF_ANNOUNCE], NULL, p53_hsm_announce(&h->m));
	for (int s = 0; s < P53_NODE__MAX; s++)
		fn(arg, &hfam[HF_ENTERED], p53_node_state_names[s], h->m.entered[s]);
	fn(arg, &hfam[HF_FLAPS], NULL, h->m.flaps);
	for (int i = 0; i < P53_HC__MAX; i++)
		fn(arg, &hfam[HF_CHECK_UP], p53_check_names[i], h->chk[i].state == P53_CHECK_UP);
	for (int i = 0; i < P53_HC__MAX; i++)
		fn(arg, &hfam[HF_CHECK_RESULTS], p53_check_names[i], h->chk[i].results);
	for (int i = 0; i < P53_HC__MAX; i++)
		fn(arg, &hfam[HF_CHECK_FAILURES], p53_check_names[i], h->chk[i].failures);
	for (int i = 0; i < P53_HC__MAX; i++)
		fn(arg, &hfam[HF_CHECK_DOWNS], p53_check_names[i], h->chk[i].downs);
	fn(arg, &hfam[HF_CANARY_LATE], NULL, h->canary.late);
	fn(arg, &hfam[HF_CANARY_RING_FULL], NULL, h->canary.ring_full);
	fn(arg, &hfam[HF_DRAIN], NULL, h->m.drain);
	if (h->anycast != NULL)
		p53_anycast_walk(h->anycast, fn, arg);
}
