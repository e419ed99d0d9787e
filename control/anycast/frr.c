/*
 * The frr announcer: the service prefixes as addresses on pop53d's own tun devices, which
 * FRR's zebra sees as connected routes and bgpd announces (configs/frr/: `network` with
 * import-check, or `redistribute connected` with a route-map that marks the second device's
 * routes de-preferred). See anycast.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "control/anycast/anycast.h"
#include "control/anycast/netlink.h"

enum { MAIN = 0, DEPREF = 1, NOWHERE = -1 };

struct frr {
	const struct p53_frr_conf *fc;
	struct mnl_socket *nl;
	int fd[2];
	int ifindex[2];
	int where[P53_ANYCAST_MAX_PREFIXES];
	struct p53_proc check;
	uint64_t next_check_ms;
};

/* Create what is missing: the netlink socket, the devices (up). */
static int ensure_open(struct p53_announcer *a)
{
	struct frr *f = a->priv;
	const char *names[2] = { f->fc->device, f->fc->depref_device };

	if (f->nl == NULL && (f->nl = p53_nl_open(a->err, sizeof(a->err))) == NULL)
		return -1;
	for (int i = 0; i < 2; i++) {
		if (f->fd[i] >= 0)
			continue;
		f->fd[i] = p53_tun_open(names[i], &f->ifindex[i], a->err, sizeof(a->err));
		if (f->fd[i] < 0)
			return -1;
		if (p53_nl_link_up(f->nl, f->ifindex[i], a->err, sizeof(a->err)) != 0) {
			close(f->fd[i]);
			f->fd[i] = -1;
			return -1;
		}
	}
	return 0;
}

static int frr_apply(struct p53_announcer *a, enum p53_announce level, uint64_t now_ms)
{
	struct frr *f = a->priv;
	int target = level == P53_ANNOUNCE_FULL ? MAIN : level == P53_ANNOUNCE_DEPREF ? DEPREF : NOWHERE;

	(void)now_ms;
	if (ensure_open(a) != 0)
		return -1;
	for (int i = 0; i < a->n_prefixes; i++) {
		if (f->where[i] == target)
			continue;
		/* Delete first, then add: zebra keeps one connected route per prefix and gets it
		 * wrong when the same address is briefly on both devices. bgpd handles the delete
		 * and the add of the prefix in one pass, so the router sees an update, not a
		 * withdraw (tests/integration/anycast_bgp.sh checks what BIRD sees). */
		if (f->where[i] != NOWHERE &&
		    p53_nl_addr(f->nl, false, f->ifindex[f->where[i]], &a->prefixes[i], a->err, sizeof(a->err)) != 0)
			return -1;
		f->where[i] = NOWHERE;
		if (target != NOWHERE &&
		    p53_nl_addr(f->nl, true, f->ifindex[target], &a->prefixes[i], a->err, sizeof(a->err)) != 0)
			return -1;
		f->where[i] = target;
	}
	return 1;
}

static int frr_poll(struct p53_announcer *a, uint64_t now_ms)
{
	struct frr *f = a->priv;

	for (int i = 0; i < 2; i++)
		if (f->fd[i] >= 0)
			p53_tun_discard(f->fd[i]);
	if (f->fc->check == NULL)
		return 0;
	if (p53_proc_running(&f->check)) {
		if (p53_proc_poll(&f->check, now_ms)) {
			bool ok = f->check.status == 0 && !f->check.timed_out;
			if (!ok) {
				char how[200];
				p53_proc_describe(&f->check, how, sizeof(how));
				snprintf(a->err, sizeof(a->err), "check '%s': %s", f->fc->check, how);
			}
			if (!ok && !a->check_failed)
				a->failures++;
			a->check_failed = !ok;
		}
	} else if (now_ms >= f->next_check_ms) {
		char *argv[] = { "/bin/sh", "-c", f->fc->check, NULL };
		f->next_check_ms = now_ms + f->fc->check_interval_ms;
		if (p53_proc_start(&f->check, argv, f->fc->check_timeout_ms, now_ms, a->err, sizeof(a->err)) != 0) {
			if (!a->check_failed)
				a->failures++;
			a->check_failed = true;
		}
	}
	return 0;
}

static void frr_close(struct p53_announcer *a)
{
	struct frr *f = a->priv;

	if (f == NULL)
		return;
	p53_proc_kill(&f->check);
	/* Closing the devices deletes them, their addresses and FRR's routes for them. */
	for (int i = 0; i < 2; i++)
		if (f->fd[i] >= 0)
			close(f->fd[i]);
	if (f->nl != NULL)
		mnl_socket_close(f->nl);
	free(f);
	a->priv = NULL;
}

static const struct p53_announcer_ops frr_ops = {
	.name = "frr", .apply = frr_apply, .poll = frr_poll, .close = frr_close,
};

int p53_frr_init(struct p53_announcer *a, const struct p53_frr_conf *fc)
{
	struct frr *f = calloc(1, sizeof(*f));

	a->ops = &frr_ops;
	if (f == NULL)
		return -1;
	f->fc = fc;
	f->fd[0] = f->fd[1] = -1;
	for (int i = 0; i < P53_ANYCAST_MAX_PREFIXES; i++)
		f->where[i] = NOWHERE;
	p53_proc_init(&f->check);
	a->priv = f;
	/* The devices exist from the start (without addresses): FRR can be configured against
	 * them, and a first failure (no CAP_NET_ADMIN) shows at once. */
	if (ensure_open(a) != 0)
		return -1;
	return 0;
}
