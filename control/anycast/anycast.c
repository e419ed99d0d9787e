/* Announcers: what they share (levels, retries, status); see anycast.h. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/anycast/anycast.h"
#include "control/log.h"

void p53_prefix_str(const struct p53_prefix *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(p->family, p->bytes, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, p->len);
}

struct p53_anycast *p53_anycast_open(const struct p53_config *cfg)
{
	const struct p53_anycast_conf *ac = &cfg->anycast;
	struct p53_anycast *any;

	if (!ac->present)
		return NULL;
	any = calloc(1, sizeof(*any));
	if (any == NULL) {
		p53_err("anycast: out of memory: nothing will be announced");
		return NULL;
	}
	any->retry_ms = ac->retry_ms;
	if (ac->n_prefixes > 0) {
		memcpy(any->prefixes, ac->prefixes, sizeof(any->prefixes));
		any->n_prefixes = ac->n_prefixes;
	} else {
		/* The service addresses, as host routes. */
		for (int i = 0; i < cfg->n_addrs && any->n_prefixes < P53_ANYCAST_MAX_PREFIXES; i++) {
			struct p53_prefix *p = &any->prefixes[any->n_prefixes++];
			p->family = cfg->addrs[i].family;
			p->len = p->family == AF_INET ? 32 : 128;
			memcpy(p->bytes, cfg->addrs[i].bytes, 16);
		}
	}
	for (int k = 0; k < 4; k++) {
		struct p53_announcer *a = &any->a[any->n];
		int rc;
		a->ac = ac;
		a->prefixes = any->prefixes;
		a->n_prefixes = any->n_prefixes;
		if (k == 0 && ac->frr.present)
			rc = p53_frr_init(a, &ac->frr);
		else if (k == 1 && ac->bird.present)
			rc = p53_bird_init(a, &ac->bird);
		else if (k == 2 && ac->exabgp.present)
			rc = p53_exabgp_init(a, &ac->exabgp);
		else if (k == 3 && ac->command.present)
			rc = p53_command_init(a, &ac->command);
		else
			continue;
		any->n++;
		if (rc != 0) {
			/* Logged, counted and retried like any failure: pop53d serves regardless. */
			if (a->err[0] == '\0')
				snprintf(a->err, sizeof(a->err), "out of memory");
			a->failed = true;
			a->failures++;
			p53_err("anycast: %s: %s (retried every %" PRIu64 " ms)", a->ops->name, a->err,
				any->retry_ms);
		}
	}
	char list[512];
	size_t o = 0;
	for (int i = 0; i < any->n_prefixes && o < sizeof(list); i++) {
		char p[64];
		p53_prefix_str(&any->prefixes[i], p, sizeof(p));
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? " " : "", p);
	}
	p53_info("anycast: %d announcer(s) for %s", any->n, list);
	return any;
}

static void done(struct p53_announcer *a, enum p53_announce level)
{
	if (a->failed)
		p53_info("anycast: %s works again", a->ops->name);
	if (!a->known || a->have != level)
		p53_info("anycast: %s: %s", a->ops->name, p53_announce_names[level]);
	a->have = level;
	a->known = true;
	a->failed = false;
}

static void failed(struct p53_anycast *any, struct p53_announcer *a, uint64_t now_ms)
{
	/* Every failure is counted; the log says the first of a run and then every tenth. */
	if (!a->failed || a->failures % 10 == 0)
		p53_err("anycast: %s: cannot make it %s: %s (failure %" PRIu64 "; retrying every %" PRIu64 " ms)",
			a->ops->name, p53_announce_names[a->want], a->err, a->failures + 1, any->retry_ms);
	a->failed = true;
	a->failures++;
	a->retry_ms = now_ms + any->retry_ms;
}

static void attempt(struct p53_anycast *any, struct p53_announcer *a, uint64_t now_ms)
{
	a->applies++;
	int r = a->ops->apply(a, a->want, now_ms);
	if (r == 1) {
		done(a, a->want);
	} else if (r == 0) {
		a->busy = true;
		a->busy_level = a->want;
	} else {
		failed(any, a, now_ms);
	}
}

void p53_anycast_set(struct p53_anycast *any, enum p53_announce level, uint64_t now_ms)
{
	for (int i = 0; i < any->n; i++) {
		struct p53_announcer *a = &any->a[i];
		a->want = level;
		a->retry_ms = now_ms; /* a new level is tried at once, even after failures */
		if (!a->busy)
			attempt(any, a, now_ms);
	}
}

void p53_anycast_poll(struct p53_anycast *any, uint64_t now_ms)
{
	for (int i = 0; i < any->n; i++) {
		struct p53_announcer *a = &any->a[i];
		bool check_before = a->check_failed;
		int r = a->ops->poll(a, now_ms);

		if (a->check_failed != check_before) {
			if (a->check_failed)
				p53_err("anycast: %s: %s", a->ops->name, a->err);
			else
				p53_info("anycast: %s: its check passes again", a->ops->name);
		}
		if (a->busy && r != 0) {
			a->busy = false;
			if (r == 1)
				done(a, a->busy_level);
			else
				failed(any, a, now_ms);
		}
		if (!a->busy && (!a->known || a->have != a->want || a->failed) && now_ms >= a->retry_ms)
			attempt(any, a, now_ms);
	}
}

bool p53_anycast_settled(const struct p53_anycast *any)
{
	for (int i = 0; i < any->n; i++) {
		const struct p53_announcer *a = &any->a[i];
		if (a->busy || (!a->failed && (!a->known || a->have != a->want)))
			return false;
	}
	return true;
}

void p53_anycast_close(struct p53_anycast *any)
{
	for (int i = 0; i < any->n; i++)
		if (any->a[i].ops != NULL && any->a[i].ops->close != NULL)
			any->a[i].ops->close(&any->a[i]);
	free(any);
}

static const char *status_of(const struct p53_announcer *a)
{
	return a->failed || a->check_failed ? "failed" : a->busy ? "busy" : "ok";
}

json_t *p53_anycast_json(const struct p53_anycast *any)
{
	json_t *arr = json_array();

	for (int i = 0; i < any->n; i++) {
		const struct p53_announcer *a = &any->a[i];
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:s}",
			"type", a->ops->name, "status", status_of(a),
			"applied", a->known ? p53_announce_names[a->have] : "unknown",
			"wanted", p53_announce_names[a->want], "applies", (json_int_t)a->applies,
			"failures", (json_int_t)a->failures,
			"last_error", a->failed || a->check_failed ? a->err : ""));
	}
	return arr;
}

enum { AF_OK, AF_APPLIED, AF_FAILURES, AF__MAX };

static const struct p53_family afam[AF__MAX] = {
	[AF_OK] = { "pop53_anycast_announcer_ok", "anycast_announcer_ok", "announcer", P53_GAUGE, "1 when the announcer's last apply and check succeeded" },
	[AF_APPLIED] = { "pop53_anycast_announcer_applied", "anycast_announcer_applied", "announcer", P53_GAUGE, "what the announcer has in effect: 0 withdrawn, 1 de-preferred, 2 announced" },
	[AF_FAILURES] = { "pop53_anycast_announcer_failures_total", "anycast_announcer_failures", "announcer", P53_COUNTER, "failed applies and checks of the announcer" },
};

void p53_anycast_walk(const struct p53_anycast *any, p53_counter_fn fn, void *arg)
{
	for (int i = 0; i < any->n; i++)
		fn(arg, &afam[AF_OK], any->a[i].ops->name, !any->a[i].failed && !any->a[i].check_failed);
	for (int i = 0; i < any->n; i++)
		fn(arg, &afam[AF_APPLIED], any->a[i].ops->name, any->a[i].known ? any->a[i].have : 0);
	for (int i = 0; i < any->n; i++)
		fn(arg, &afam[AF_FAILURES], any->a[i].ops->name, any->a[i].failures);
}
