/*
 * The command announcer: `sh -c 'RUN "$@"' pop53-anycast STATE PREFIX...` with STATE one of
 * announce, depref, withdraw; exit 0 means applied. One child at a time (see anycast.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/anycast/anycast.h"

struct command {
	const struct p53_command_conf *cc;
	struct p53_proc proc;
	char script[1024];
	char prefixes[P53_ANYCAST_MAX_PREFIXES][64];
};

static int command_apply(struct p53_announcer *a, enum p53_announce level, uint64_t now_ms)
{
	static const char *const states[] = { "withdraw", "depref", "announce" };
	struct command *c = a->priv;
	char *argv[5 + P53_ANYCAST_MAX_PREFIXES];
	int n = 0;

	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = c->script;
	argv[n++] = "pop53-anycast";
	argv[n++] = (char *)states[level];
	for (int i = 0; i < a->n_prefixes; i++)
		argv[n++] = c->prefixes[i];
	argv[n] = NULL;
	return p53_proc_start(&c->proc, argv, c->cc->timeout_ms, now_ms, a->err, sizeof(a->err)) == 0 ? 0 : -1;
}

static int command_poll(struct p53_announcer *a, uint64_t now_ms)
{
	struct command *c = a->priv;

	if (!p53_proc_running(&c->proc) || !p53_proc_poll(&c->proc, now_ms))
		return 0;
	if (c->proc.status == 0 && !c->proc.timed_out)
		return 1;
	char how[200];
	p53_proc_describe(&c->proc, how, sizeof(how));
	snprintf(a->err, sizeof(a->err), "'%s': %s", c->cc->run, how);
	return -1;
}

static void command_close(struct p53_announcer *a)
{
	struct command *c = a->priv;

	if (c == NULL)
		return;
	p53_proc_kill(&c->proc);
	free(c);
	a->priv = NULL;
}

static const struct p53_announcer_ops command_ops = {
	.name = "command", .apply = command_apply, .poll = command_poll, .close = command_close,
};

int p53_command_init(struct p53_announcer *a, const struct p53_command_conf *cc)
{
	struct command *c = calloc(1, sizeof(*c));

	a->ops = &command_ops;
	if (c == NULL)
		return -1;
	c->cc = cc;
	p53_proc_init(&c->proc);
	snprintf(c->script, sizeof(c->script), "%s \"$@\"", cc->run);
	for (int i = 0; i < a->n_prefixes; i++)
		p53_prefix_str(&a->prefixes[i], c->prefixes[i], sizeof(c->prefixes[i]));
	a->priv = c;
	return 0;
}
