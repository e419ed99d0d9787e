/* The health state machine; see state.h. Pure: no clock, no I/O. */
#include <stdio.h>
#include <string.h>

#include "control/health/state.h"

const char *const p53_node_state_names[P53_NODE__MAX] = {
	[P53_NODE_STARTING] = "starting", [P53_NODE_WARMING] = "warming", [P53_NODE_UP] = "up",
	[P53_NODE_DOWN] = "down", [P53_NODE_DRAINING] = "draining", [P53_NODE_DRAINED] = "drained",
	[P53_NODE_STOPPING] = "stopping", [P53_NODE_STOPPED] = "stopped",
};

const char *const p53_announce_names[3] = { "withdrawn", "de-preferred", "announced" };

const char *p53_check_state_name(enum p53_check_state s)
{
	return s == P53_CHECK_UP ? "up" : s == P53_CHECK_DOWN ? "down" : "unknown";
}

static int check_set(struct p53_check_track *c, enum p53_check_state s, uint64_t now_ms)
{
	if (c->state == s)
		return 0;
	if (s == P53_CHECK_DOWN)
		c->downs++;
	c->state = s;
	c->since_ms = now_ms;
	return 1;
}

int p53_check_record(struct p53_check_track *c, bool ok, bool critical, const char *err,
		     uint64_t now_ms)
{
	if (c->results++ == 0)
		c->since_ms = now_ms;
	if (ok) {
		c->fail_run = 0;
		c->ok_run++;
		/* UNKNOWN needs `rise` passes like DOWN does: nothing is announced on one lucky
		 * answer at start-up. */
		if (c->state != P53_CHECK_UP && c->ok_run >= c->rise)
			return check_set(c, P53_CHECK_UP, now_ms);
		return 0;
	}
	c->failures++;
	c->ok_run = 0;
	c->fail_run++;
	snprintf(c->last_error, sizeof(c->last_error), "%s", err != NULL ? err : "failed");
	if (c->state != P53_CHECK_DOWN && (critical || c->fail_run >= c->fall))
		return check_set(c, P53_CHECK_DOWN, now_ms);
	return 0;
}

int p53_check_force(struct p53_check_track *c, enum p53_check_state s, const char *why,
		    uint64_t now_ms)
{
	c->ok_run = s == P53_CHECK_UP ? c->rise : 0;
	c->fail_run = s == P53_CHECK_DOWN ? c->fall : 0;
	if (s == P53_CHECK_DOWN)
		snprintf(c->last_error, sizeof(c->last_error), "%s", why);
	return check_set(c, s, now_ms);
}

void p53_hsm_init(struct p53_hsm *m, const struct p53_hsm_conf *conf, uint64_t now_ms)
{
	memset(m, 0, sizeof(*m));
	m->conf = *conf;
	m->state = P53_NODE_STARTING;
	m->since_ms = now_ms;
	m->entered[P53_NODE_STARTING] = 1;
	snprintf(m->reason, sizeof(m->reason), "start-up: waiting for every check to pass");
}

void p53_hsm_drain(struct p53_hsm *m, bool on)
{
	m->drain = on;
}

void p53_hsm_stop(struct p53_hsm *m)
{
	m->stop = true;
}

enum p53_announce p53_hsm_announce(const struct p53_hsm *m)
{
	switch (m->state) {
	case P53_NODE_UP:
		return P53_ANNOUNCE_FULL;
	case P53_NODE_WARMING:
	case P53_NODE_DRAINING:
	case P53_NODE_STOPPING:
		return P53_ANNOUNCE_DEPREF;
	default:
		return P53_ANNOUNCE_NONE;
	}
}

uint64_t p53_hsm_next_announce(const struct p53_hsm *m)
{
	uint64_t t = 0;

	if (m->withdrawn_once && m->last_withdraw_ms + m->conf.hold_down_ms > t)
		t = m->last_withdraw_ms + m->conf.hold_down_ms;
	if (m->announced_once && m->last_announce_ms + m->conf.min_announce_ms > t)
		t = m->last_announce_ms + m->conf.min_announce_ms;
	return t;
}

/* Enter `s`, keeping the announce/withdraw bookkeeping in step with the level it wants. */
static int go(struct p53_hsm *m, enum p53_node_state s, uint64_t now_ms, const char *fmt,
	      const char *arg)
{
	enum p53_announce before = p53_hsm_announce(m);

	m->state = s;
	m->since_ms = now_ms;
	m->entered[s]++;
	snprintf(m->reason, sizeof(m->reason), fmt, arg != NULL ? arg : "");
	enum p53_announce after = p53_hsm_announce(m);
	if (before == P53_ANNOUNCE_NONE && after != P53_ANNOUNCE_NONE) {
		m->announced_once = true;
		m->last_announce_ms = now_ms;
		m->announces++;
	} else if (before != P53_ANNOUNCE_NONE && after == P53_ANNOUNCE_NONE) {
		m->withdrawn_once = true;
		m->last_withdraw_ms = now_ms;
		m->withdraws++;
	}
	return 1;
}

/* From a withdrawn state: announce (warm-up first when configured). */
static int announce(struct p53_hsm *m, uint64_t now_ms, const char *why)
{
	if (m->conf.warmup_ms > 0)
		return go(m, P53_NODE_WARMING, now_ms, "%s; warming up de-preferred", why);
	return go(m, P53_NODE_UP, now_ms, "%s", why);
}

/* A check failed while announced: withdraw now. */
static int fail(struct p53_hsm *m, const struct p53_hsm_in *in, uint64_t now_ms,
		enum p53_node_state to)
{
	m->flaps++;
	return go(m, to, now_ms, "withdrawn: %s", in->why != NULL ? in->why : "a check failed");
}

int p53_hsm_step(struct p53_hsm *m, const struct p53_hsm_in *in, uint64_t now_ms)
{
	uint64_t in_state = now_ms - m->since_ms;

	if (m->stop) {
		switch (m->state) {
		case P53_NODE_STOPPED:
			return 0;
		case P53_NODE_STOPPING:
			if (in->any_down)
				return go(m, P53_NODE_STOPPED, now_ms, "stopping: withdrawn early, %s", in->why);
			if (in_state >= m->conf.stop_drain_ms)
				return go(m, P53_NODE_STOPPED, now_ms, "stopping: drained, withdrawn%s", NULL);
			return 0;
		default:
			if (m->conf.stop_drain && p53_hsm_announce(m) != P53_ANNOUNCE_NONE)
				return go(m, P53_NODE_STOPPING, now_ms, "stopping: de-preferred before the withdraw%s", NULL);
			return go(m, P53_NODE_STOPPED, now_ms, "stopping: withdrawn%s", NULL);
		}
	}
	switch (m->state) {
	case P53_NODE_STARTING:
		if (m->drain)
			return go(m, P53_NODE_DRAINED, now_ms, "drained by the operator before the first announce%s", NULL);
		if (in->all_up)
			return announce(m, now_ms, "start-up: every check passed");
		return 0;
	case P53_NODE_WARMING:
		if (in->any_down)
			return fail(m, in, now_ms, P53_NODE_DOWN);
		if (m->drain)
			return go(m, P53_NODE_DRAINING, now_ms, "drain requested by the operator%s", NULL);
		if (in_state >= m->conf.warmup_ms)
			return go(m, P53_NODE_UP, now_ms, "warm-up over: announced%s", NULL);
		return 0;
	case P53_NODE_UP:
		if (in->any_down)
			return fail(m, in, now_ms, P53_NODE_DOWN);
		if (m->drain)
			return go(m, P53_NODE_DRAINING, now_ms, "drain requested by the operator%s", NULL);
		return 0;
	case P53_NODE_DOWN:
		if (m->drain)
			return go(m, P53_NODE_DRAINED, now_ms, "drained by the operator%s", NULL);
		if (in->all_up && now_ms >= p53_hsm_next_announce(m))
			return announce(m, now_ms, "every check passed `rise` times and hold-down is over");
		return 0;
	case P53_NODE_DRAINING:
		if (in->any_down)
			return fail(m, in, now_ms, P53_NODE_DRAINED);
		if (!m->drain)
			return go(m, P53_NODE_UP, now_ms, "undrained before the withdraw: announced again%s", NULL);
		if (in_state >= m->conf.drain_ms)
			return go(m, P53_NODE_DRAINED, now_ms, "drain time over: withdrawn%s", NULL);
		return 0;
	case P53_NODE_DRAINED:
		if (!m->drain)
			return go(m, P53_NODE_DOWN, now_ms, "undrained: announce once the checks pass and hold-down is over%s", NULL);
		return 0;
	default:
		return 0;
	}
}
