/* The daemon's state and its small operations; see daemon.h. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "control/daemon.h"
#include "control/log.h"
#include "control/text.h"
#include "control/xfr/notify.h"
#include "control/xfr/xfr.h"
#include "dataplane/name.h"
#include "dataplane/notify.h"

void p53_daemon_init(struct p53_daemon *d)
{
	memset(d, 0, sizeof(*d));
	p53_ctl_init(&d->ctl);
	p53_watch_init(&d->watch);
	pthread_mutex_init(&d->stats_lock, NULL);
	d->started = time(NULL);
	const char *hooks = getenv("POP53_TEST_HOOKS");
	d->test_hooks = hooks != NULL && strcmp(hooks, "1") == 0;
}

void p53_daemon_notify_drain(struct p53_daemon *d)
{
	struct p53_notify_event ev;

	if (d->notify_ring == NULL)
		return;
	while (rte_ring_sc_dequeue_elem(d->notify_ring, &ev, sizeof(ev)) == 0) {
		char zone[1024], addr[INET6_ADDRSTRLEN];
		if (ev.soa_query) {
			p53_xfr_soa_query(d, &ev); /* signed SOA over UDP, control/xfr/notify.h */
			continue;
		}
		if (ev.handoff) {
			p53_xfr_notify_tcp_adopt(d, &ev); /* a TCP connection, now ours */
			continue;
		}
		if (!ev.answered) {
			p53_xfr_notify(d, &ev);
			continue;
		}
		/* Log the first few and then every 1000th: a NOTIFY flood must not flood the log. */
		if (++d->notify_seen > 10 && d->notify_seen % 1000 != 0)
			continue;
		p53_name_to_str(zone, sizeof(zone), ev.zone);
		inet_ntop(ev.ipv6 ? AF_INET6 : AF_INET, ev.src, addr, sizeof(addr));
		p53_info("NOTIFY for %s from %s port %u (id %u, #%" PRIu64 "): not a secondary zone "
			 "here, answered NOTAUTH", zone, addr, ev.port, ev.id, d->notify_seen);
	}
}

static void totals_now(struct p53_daemon *d, struct p53_totals *out)
{
	struct p53_tcp_stats tcp;

	p53_totals_sum(d->dp.workers, d->dp.n_workers, out);
	p53_tcp_totals(&d->tcp, &tcp);
	p53_totals_add_tcp(out, &tcp);
	p53_totals_add_exc(out, &d->exc.stats);
	out->xfr = d->xfr_stats;
	if (d->xfr != NULL)
		p53_xfr_totals(d->xfr, &out->xfr);
}

void p53_daemon_totals(struct p53_daemon *d, struct p53_totals *out)
{
	totals_now(d, out);
	pthread_mutex_lock(&d->stats_lock);
	p53_totals_sub(out, &d->stats_base);
	pthread_mutex_unlock(&d->stats_lock);
}

void p53_daemon_stats_reset(struct p53_daemon *d)
{
	struct p53_totals now;

	/* Summed outside the lock: the lock only keeps a reader from seeing half a baseline. */
	totals_now(d, &now);
	pthread_mutex_lock(&d->stats_lock);
	d->stats_base = now;
	pthread_mutex_unlock(&d->stats_lock);
}

void p53_daemon_port_totals(const struct p53_daemon *d, struct p53_port_totals *out)
{
	struct rte_eth_stats es;

	memset(out, 0, sizeof(*out));
	if (rte_eth_stats_get(d->port.id, &es) != 0)
		return;
	out->valid = 1;
	out->ipackets = es.ipackets;
	out->opackets = es.opackets;
	out->imissed = es.imissed;
	out->ierrors = es.ierrors;
	out->oerrors = es.oerrors;
	out->rx_nombuf = es.rx_nombuf;
	struct p53_xsk_stats x;
	if (p53_port_xsk_stats(&d->port, &x) != 0) {
		out->xsk = 1;
		out->xsk_rx_ring_full = x.rx_ring_full;
		out->xsk_rx_dropped = x.rx_dropped;
		out->xsk_rx_invalid = x.rx_invalid_descs;
		out->xsk_tx_invalid = x.tx_invalid_descs;
		out->xsk_fill_empty = x.rx_fill_ring_empty;
		out->xsk_tx_empty = x.tx_ring_empty;
	}
}
