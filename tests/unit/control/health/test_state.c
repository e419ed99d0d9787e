/*
 * The health state machine (control/health/state.c), driven by tables: each row is a moment
 * (ms), the results of the two checks at that moment (canary: fall 3, rise 2; workers:
 * critical on failure), an operator or daemon event, and the node state and announcement
 * expected after the step. A row's message says what it shows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "control/health/state.h"

enum ev { NONE = 0, DRAIN, UNDRAIN, STOP };

struct row {
	uint64_t t;
	char canary;            /* 'P' pass, 'F' fail, '-' no result at this moment */
	char workers;           /* 'P', 'F' (a dead worker: critical), '-' */
	enum ev ev;
	enum p53_node_state want;
	enum p53_announce ann;
	const char *msg;
};

struct run {
	struct p53_check_track canary, workers;
	struct p53_hsm m;
};

static void run_table(const struct p53_hsm_conf *conf, const struct row *rows, size_t n)
{
	struct run r;

	memset(&r, 0, sizeof(r));
	r.canary.fall = 3;
	r.canary.rise = 2;
	r.workers.fall = 3;
	r.workers.rise = 1;
	p53_hsm_init(&r.m, conf, 0);
	for (size_t i = 0; i < n; i++) {
		const struct row *w = &rows[i];
		if (w->canary != '-')
			p53_check_record(&r.canary, w->canary == 'P', false, "canary: NXDOMAIN", w->t);
		if (w->workers != '-')
			p53_check_record(&r.workers, w->workers == 'P', true, "worker 0: no heartbeat", w->t);
		if (w->ev == DRAIN)
			p53_hsm_drain(&r.m, true);
		else if (w->ev == UNDRAIN)
			p53_hsm_drain(&r.m, false);
		else if (w->ev == STOP)
			p53_hsm_stop(&r.m);
		struct p53_hsm_in in = {
			.all_up = r.canary.state == P53_CHECK_UP && r.workers.state == P53_CHECK_UP,
			.any_down = r.canary.state == P53_CHECK_DOWN || r.workers.state == P53_CHECK_DOWN,
			.why = r.workers.state == P53_CHECK_DOWN ? "workers" : "canary",
		};
		for (int k = 0; k < 8 && p53_hsm_step(&r.m, &in, w->t); k++)
			;
		if (r.m.state != w->want || p53_hsm_announce(&r.m) != w->ann)
			fail_msg("row %zu (t=%llu ms, %s): state %s/%s, expected %s/%s (reason: %s)", i,
				 (unsigned long long)w->t, w->msg, p53_node_state_names[r.m.state],
				 p53_announce_names[p53_hsm_announce(&r.m)], p53_node_state_names[w->want],
				 p53_announce_names[w->ann], r.m.reason);
	}
}

#define N(t) (sizeof(t) / sizeof((t)[0]))
#define S(x) P53_NODE_##x
#define A(x) P53_ANNOUNCE_##x

static const struct p53_hsm_conf base = {
	.hold_down_ms = 10000, .min_announce_ms = 5000, .warmup_ms = 0, .drain_ms = 3000,
	.stop_drain_ms = 2000, .stop_drain = false,
};

static void test_startup(void **state)
{
	static const struct row rows[] = {
		{ 0, '-', '-', NONE, S(STARTING), A(NONE), "nothing known yet" },
		{ 100, 'P', 'P', NONE, S(STARTING), A(NONE), "one canary pass is not rise=2" },
		{ 200, 'F', 'P', NONE, S(STARTING), A(NONE), "a failure resets the run of passes" },
		{ 300, 'P', 'P', NONE, S(STARTING), A(NONE), "one pass again" },
		{ 400, 'P', 'P', NONE, S(UP), A(FULL), "second pass in a row: announced at once (no hold-down at start)" },
	};
	(void)state;
	run_table(&base, rows, N(rows));
}

static void test_fall_hold_down(void **state)
{
	static const struct row rows[] = {
		{ 0, 'P', 'P', NONE, S(STARTING), A(NONE), "first pass" },
		{ 1000, 'P', 'P', NONE, S(UP), A(FULL), "announced" },
		{ 2000, 'F', 'P', NONE, S(UP), A(FULL), "one failure: still announced" },
		{ 3000, 'F', 'P', NONE, S(UP), A(FULL), "two failures: still announced" },
		{ 4000, 'F', 'P', NONE, S(DOWN), A(NONE), "third failure crosses fall=3: withdrawn" },
		{ 5000, 'P', 'P', NONE, S(DOWN), A(NONE), "one pass" },
		{ 6000, 'P', 'P', NONE, S(DOWN), A(NONE), "rise reached, but hold-down (10 s from 4000) holds" },
		{ 13999, 'P', 'P', NONE, S(DOWN), A(NONE), "1 ms before the hold-down ends" },
		{ 14000, 'P', 'P', NONE, S(UP), A(FULL), "hold-down over, checks up: announced again" },
	};
	(void)state;
	run_table(&base, rows, N(rows));
}

static void test_min_announce_interval(void **state)
{
	/* hold_down short, min_announce long: the interval since the last announce decides. */
	static const struct p53_hsm_conf conf = {
		.hold_down_ms = 1000, .min_announce_ms = 20000, .drain_ms = 3000,
	};
	static const struct row rows[] = {
		{ 0, 'P', 'P', NONE, S(STARTING), A(NONE), "first pass" },
		{ 100, 'P', 'P', NONE, S(UP), A(FULL), "announced at 100" },
		{ 200, '-', 'F', NONE, S(DOWN), A(NONE), "dead worker: withdrawn at once, without fall" },
		{ 300, '-', 'P', NONE, S(DOWN), A(NONE), "worker back (rise=1)" },
		{ 1300, 'P', 'P', NONE, S(DOWN), A(NONE), "hold-down over, but the last announce was 1.2 s ago" },
		{ 20099, 'P', 'P', NONE, S(DOWN), A(NONE), "1 ms before min_announce_interval" },
		{ 20100, 'P', 'P', NONE, S(UP), A(FULL), "20 s after the last announce: announced" },
	};
	(void)state;
	run_table(&conf, rows, N(rows));
}

static void test_flapping_canary(void **state)
{
	/* A canary failing every other second (fall 3 never reached by alternation), then
	 * failing 3 in a row twice within one hold-down window: one withdraw only. */
	static const struct row rows[] = {
		{ 0, 'P', 'P', NONE, S(STARTING), A(NONE), "first pass" },
		{ 1000, 'P', 'P', NONE, S(UP), A(FULL), "announced" },
		{ 2000, 'F', 'P', NONE, S(UP), A(FULL), "alternating: fail" },
		{ 3000, 'P', 'P', NONE, S(UP), A(FULL), "alternating: pass" },
		{ 4000, 'F', 'P', NONE, S(UP), A(FULL), "alternating: fail" },
		{ 5000, 'F', 'P', NONE, S(UP), A(FULL), "two in a row" },
		{ 6000, 'F', 'P', NONE, S(DOWN), A(NONE), "three in a row: withdrawn (flap 1)" },
		{ 7000, 'P', 'P', NONE, S(DOWN), A(NONE), "pass" },
		{ 8000, 'P', 'P', NONE, S(DOWN), A(NONE), "rise reached; hold-down until 16000" },
		{ 9000, 'F', 'P', NONE, S(DOWN), A(NONE), "failing again inside hold-down: nothing to withdraw" },
		{ 10000, 'P', 'P', NONE, S(DOWN), A(NONE), "pass" },
		{ 11000, 'F', 'P', NONE, S(DOWN), A(NONE), "fail" },
		{ 15000, 'P', 'P', NONE, S(DOWN), A(NONE), "pass" },
		{ 16000, 'P', 'P', NONE, S(UP), A(FULL), "hold-down over and rise=2 passes: announced" },
	};
	struct p53_hsm_conf conf = base;
	(void)state;
	run_table(&conf, rows, N(rows));
}

static void test_warmup(void **state)
{
	static const struct p53_hsm_conf conf = {
		.hold_down_ms = 1000, .min_announce_ms = 0, .warmup_ms = 5000, .drain_ms = 3000,
	};
	static const struct row rows[] = {
		{ 0, 'P', 'P', NONE, S(STARTING), A(NONE), "first pass" },
		{ 100, 'P', 'P', NONE, S(WARMING), A(DEPREF), "announced de-preferred first" },
		{ 5099, 'P', 'P', NONE, S(WARMING), A(DEPREF), "still warming 1 ms before the end" },
		{ 5100, 'P', 'P', NONE, S(UP), A(FULL), "warm-up over: full announce" },
		{ 5200, '-', 'F', NONE, S(DOWN), A(NONE), "dead worker: withdrawn" },
		{ 7000, 'P', 'P', NONE, S(WARMING), A(DEPREF), "re-announce warms up again" },
		{ 7100, '-', 'F', NONE, S(DOWN), A(NONE), "a failure during warm-up withdraws" },
	};
	(void)state;
	run_table(&conf, rows, N(rows));
}

static void test_drain(void **state)
{
	static const struct row rows[] = {
		{ 0, 'P', 'P', NONE, S(STARTING), A(NONE), "first pass" },
		{ 100, 'P', 'P', NONE, S(UP), A(FULL), "announced" },
		{ 20000, '-', '-', DRAIN, S(DRAINING), A(DEPREF), "drain: de-preferred" },
		{ 22999, 'P', 'P', NONE, S(DRAINING), A(DEPREF), "1 ms before drain_time" },
		{ 23000, 'P', 'P', NONE, S(DRAINED), A(NONE), "drain time over: withdrawn" },
		{ 24000, 'P', 'P', UNDRAIN, S(DOWN), A(NONE), "undrain: hold-down from 23000 still holds" },
		{ 32999, 'P', 'P', NONE, S(DOWN), A(NONE), "1 ms before hold-down ends" },
		{ 33000, 'P', 'P', NONE, S(UP), A(FULL), "announced after hold-down" },
		{ 40000, '-', '-', DRAIN, S(DRAINING), A(DEPREF), "drain again" },
		{ 41000, '-', '-', UNDRAIN, S(UP), A(FULL), "undrain before the withdraw: full again, nothing withdrawn" },
		{ 42000, '-', '-', DRAIN, S(DRAINING), A(DEPREF), "drain again" },
		{ 42100, '-', 'F', NONE, S(DRAINED), A(NONE), "a dead worker while draining: withdrawn now" },
		{ 50000, 'P', 'P', NONE, S(DRAINED), A(NONE), "healthy again, still drained by the operator" },
	};
	(void)state;
	run_table(&base, rows, N(rows));
}

static void test_drain_before_start(void **state)
{
	static const struct row rows[] = {
		{ 0, '-', '-', DRAIN, S(DRAINED), A(NONE), "drained before anything was announced" },
		{ 100, 'P', 'P', NONE, S(DRAINED), A(NONE), "checks pass: still drained" },
		{ 200, 'P', 'P', UNDRAIN, S(UP), A(FULL), "undrain: never withdrawn, so no hold-down" },
	};
	(void)state;
	run_table(&base, rows, N(rows));
}

static void test_stop_withdraws(void **state)
{
	static const struct row rows[] = {
		{ 0, 'P', 'P', NONE, S(STARTING), A(NONE), "first pass" },
		{ 100, 'P', 'P', NONE, S(UP), A(FULL), "announced" },
		{ 200, '-', '-', STOP, S(STOPPED), A(NONE), "SIGTERM with on_stop withdraw: withdrawn at once" },
		{ 300, 'P', 'P', UNDRAIN, S(STOPPED), A(NONE), "nothing brings a stopping node back" },
	};
	(void)state;
	run_table(&base, rows, N(rows));
}

static void test_stop_drains(void **state)
{
	struct p53_hsm_conf conf = base;
	static const struct row rows[] = {
		{ 0, 'P', 'P', NONE, S(STARTING), A(NONE), "first pass" },
		{ 100, 'P', 'P', NONE, S(UP), A(FULL), "announced" },
		{ 200, '-', '-', STOP, S(STOPPING), A(DEPREF), "SIGTERM with on_stop drain: de-preferred" },
		{ 2199, '-', '-', NONE, S(STOPPING), A(DEPREF), "1 ms before stop_drain_time" },
		{ 2200, '-', '-', NONE, S(STOPPED), A(NONE), "withdrawn" },
	};
	static const struct row early[] = {
		{ 0, 'P', 'P', NONE, S(STARTING), A(NONE), "first pass" },
		{ 100, 'P', 'P', NONE, S(UP), A(FULL), "announced" },
		{ 200, '-', '-', STOP, S(STOPPING), A(DEPREF), "SIGTERM: de-preferred" },
		{ 300, '-', 'F', NONE, S(STOPPED), A(NONE), "a dead worker while stopping: withdrawn at once" },
	};
	static const struct row never[] = {
		{ 0, '-', '-', STOP, S(STOPPED), A(NONE), "SIGTERM before the first announce: nothing to drain" },
	};
	(void)state;
	conf.stop_drain = true;
	run_table(&conf, rows, N(rows));
	run_table(&conf, early, N(early));
	run_table(&conf, never, N(never));
}

static void test_check_hysteresis(void **state)
{
	struct p53_check_track c = { .fall = 2, .rise = 3 };
	(void)state;
	assert_int_equal(p53_check_record(&c, false, false, "x", 1), 0);
	assert_int_equal(c.state, P53_CHECK_UNKNOWN);
	assert_int_equal(p53_check_record(&c, false, false, "y", 2), 1);
	assert_int_equal(c.state, P53_CHECK_DOWN);
	assert_string_equal(c.last_error, "y");
	assert_int_equal(p53_check_record(&c, true, false, NULL, 3), 0);
	assert_int_equal(p53_check_record(&c, true, false, NULL, 4), 0);
	assert_int_equal(p53_check_record(&c, true, false, NULL, 5), 1);
	assert_int_equal(c.state, P53_CHECK_UP);
	assert_int_equal(c.since_ms, 5);
	assert_int_equal(p53_check_record(&c, false, true, "dead", 6), 1);
	assert_int_equal(c.state, P53_CHECK_DOWN);
	assert_int_equal(c.downs, 2);
	assert_int_equal(c.results, 6);
	assert_int_equal(c.failures, 3);
	assert_int_equal(p53_check_force(&c, P53_CHECK_UP, "set up", 7), 1);
	assert_int_equal(c.state, P53_CHECK_UP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_startup),
		cmocka_unit_test(test_fall_hold_down),
		cmocka_unit_test(test_min_announce_interval),
		cmocka_unit_test(test_flapping_canary),
		cmocka_unit_test(test_warmup),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_drain_before_start),
		cmocka_unit_test(test_stop_withdraws),
		cmocka_unit_test(test_stop_drains),
		cmocka_unit_test(test_check_hysteresis),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
