/*
 * The bird announcer: `birdc [-s SOCKET] enable|disable PROTOCOL`, one child at a time,
 * never waited for (see anycast.h). Announced: the protocol enabled (and the de-preferred
 * one disabled); de-preferred: the other way round (without depref_protocol, the same as
 * announced); withdrawn: both disabled. birdc exits 0 even when BIRD refuses a command, so
 * its answer is read too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/anycast/anycast.h"

struct bird {
	const struct p53_bird_conf *bc;
	struct p53_proc proc;
	const char *steps[2][2];        /* {verb, protocol} to run in order */
	int n_steps, step;
};

static int start_step(struct p53_announcer *a, uint64_t now_ms)
{
	struct bird *b = a->priv;
	char *argv[8];
	int n = 0;

	argv[n++] = b->bc->birdc;
	if (b->bc->socket != NULL) {
		argv[n++] = "-s";
		argv[n++] = b->bc->socket;
	}
	argv[n++] = (char *)b->steps[b->step][0];
	argv[n++] = (char *)b->steps[b->step][1];
	argv[n] = NULL;
	return p53_proc_start(&b->proc, argv, b->bc->timeout_ms, now_ms, a->err, sizeof(a->err));
}

static int bird_apply(struct p53_announcer *a, enum p53_announce level, uint64_t now_ms)
{
	struct bird *b = a->priv;
	const char *main = b->bc->protocol, *dp = b->bc->depref_protocol;

	b->n_steps = b->step = 0;
	if (level == P53_ANNOUNCE_DEPREF && dp != NULL) {
		/* enable first: the route is never withdrawn on the way */
		b->steps[b->n_steps][0] = "enable", b->steps[b->n_steps++][1] = dp;
		b->steps[b->n_steps][0] = "disable", b->steps[b->n_steps++][1] = main;
	} else if (level != P53_ANNOUNCE_NONE) {
		b->steps[b->n_steps][0] = "enable", b->steps[b->n_steps++][1] = main;
		if (dp != NULL)
			b->steps[b->n_steps][0] = "disable", b->steps[b->n_steps++][1] = dp;
	} else {
		b->steps[b->n_steps][0] = "disable", b->steps[b->n_steps++][1] = main;
		if (dp != NULL)
			b->steps[b->n_steps][0] = "disable", b->steps[b->n_steps++][1] = dp;
	}
	return start_step(a, now_ms) == 0 ? 0 : -1;
}

/* birdc prints "NAME: enabled", "NAME: already disabled"... or an error and still exits 0. */
static bool bird_said_ok(const struct p53_proc *p, const char *verb)
{
	char want[16];

	snprintf(want, sizeof(want), "%sd", verb); /* enabled, disabled */
	return p->status == 0 && !p->timed_out && strstr(p->out, want) != NULL &&
	       strstr(p->out, "No protocols match") == NULL && strstr(p->out, "rror") == NULL;
}

static int bird_poll(struct p53_announcer *a, uint64_t now_ms)
{
	struct bird *b = a->priv;

	if (!p53_proc_running(&b->proc) || !p53_proc_poll(&b->proc, now_ms))
		return 0;
	if (!bird_said_ok(&b->proc, b->steps[b->step][0])) {
		char how[200];
		p53_proc_describe(&b->proc, how, sizeof(how));
		snprintf(a->err, sizeof(a->err), "birdc %s %s: %s", b->steps[b->step][0],
			 b->steps[b->step][1], how);
		return -1;
	}
	if (++b->step < b->n_steps)
		return start_step(a, now_ms) == 0 ? 0 : -1;
	return 1;
}

static void bird_close(struct p53_announcer *a)
{
	struct bird *b = a->priv;

	if (b == NULL)
		return;
	p53_proc_kill(&b->proc);
	free(b);
	a->priv = NULL;
}

static const struct p53_announcer_ops bird_ops = {
	.name = "bird", .apply = bird_apply, .poll = bird_poll, .close = bird_close,
};

int p53_bird_init(struct p53_announcer *a, const struct p53_bird_conf *bc)
{
	struct bird *b = calloc(1, sizeof(*b));

	a->ops = &bird_ops;
	if (b == NULL)
		return -1;
	b->bc = bc;
	p53_proc_init(&b->proc);
	a->priv = b;
	return 0;
}
