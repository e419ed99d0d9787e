/* Worker lcore loop; see worker.h. */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_prefetch.h>

#include "dataplane/dnsmsg.h"
#include "dataplane/notify.h"
#include "dataplane/wire.h"
#include "dataplane/worker.h"

#define IDLE_SPIN_POLLS 64      /* empty polls before the first sleep */
#define IDLE_MIN_US     1

/* RFC 1996 NOTIFY: rare, so parsed twice (here for the event, then by the responder). */
static void notify(struct p53_worker *w, const uint8_t *msg, uint16_t len, const struct p53_pkt *pkt)
{
	struct p53_notify_event ev;
	struct p53_query q;

	if (w->notify_ring == NULL || p53_msg_parse(msg, len, &q) != P53_MSG_OK)
		return;
	memset(&ev, 0, sizeof(ev));
	memcpy(ev.zone, q.lname, q.qname_len);
	ev.zone_len = q.qname_len;
	ev.ipv6 = pkt->ipv6;
	memcpy(ev.src, pkt->src_addr, sizeof(ev.src));
	ev.port = pkt->src_port;
	ev.id = q.id;
	if (rte_ring_mp_enqueue_elem(w->notify_ring, &ev, sizeof(ev)) == 0)
		w->stats.notify++;
	else
		w->stats.notify_lost++;
}

static inline struct rte_mbuf *reply(struct p53_worker *w, const struct p53_replica *r,
				     struct rte_mbuf *m)
{
	struct p53_pkt pkt;
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
	enum p53_pkt_drop d;

	if (unlikely(m->nb_segs != 1)) {
		w->stats.multiseg++;
		goto drop;
	}
	d = p53_pkt_parse(frame, rte_pktmbuf_data_len(m), &pkt);
	if (d != P53_PKT_OK) {
		w->stats.drop[d]++;
		goto drop;
	}
	/* The response may grow into the tailroom; the first byte past it is not ours. */
	const uint8_t *dns = frame + pkt.dns_off;
	if (unlikely(pkt.dns_len >= P53_DNS_HDR_LEN && P53_OPCODE(p53_get16(dns + 2)) == P53_OPCODE_NOTIFY &&
		     !(dns[2] & 0x80)))
		notify(w, dns, pkt.dns_len, &pkt);
	uint32_t room = (uint32_t)rte_pktmbuf_data_len(m) - pkt.dns_off + rte_pktmbuf_tailroom(m);
	uint16_t cap = room > UINT16_MAX ? UINT16_MAX : (uint16_t)room;
	uint16_t rlen = p53_answer(r->image, &r->conf, frame + pkt.dns_off, pkt.dns_len, cap,
				   &w->stats.ans);
	if (rlen == 0) {
		w->stats.no_answer++;
		goto drop;
	}
	size_t flen = p53_pkt_reply(frame, &pkt, rlen, w->tx_offload);
	m->data_len = (uint16_t)flen;
	m->pkt_len = (uint32_t)flen;
	if (w->tx_offload != 0) {
		m->l2_len = pkt.l3_off;
		m->l3_len = (uint16_t)(pkt.l4_off - pkt.l3_off);
		m->ol_flags = (pkt.ipv6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM) |
			      RTE_MBUF_F_TX_UDP_CKSUM;
	}
	w->stats.answered++;
	return m;
drop:
	rte_pktmbuf_free(m);
	return NULL;
}

uint16_t p53_worker_burst(struct p53_worker *w, struct rte_mbuf **pkts, uint16_t n,
			  struct rte_mbuf **out)
{
	uint16_t n_out = 0;
	/* One replica for the whole burst: a swap takes effect at the next burst. */
	const struct p53_replica *r = __atomic_load_n(&w->replica, __ATOMIC_ACQUIRE);

	for (uint16_t i = 0; i < n && i < 4; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (uint16_t i = 0; i < n; i++) {
		if (i + 4 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		struct rte_mbuf *m = reply(w, r, pkts[i]);
		if (m != NULL)
			out[n_out++] = m;
	}
	return n_out;
}

int p53_worker_main(void *arg)
{
	struct p53_worker *w = arg;
	struct rte_mbuf *rx[P53_BURST], *tx[P53_BURST];
	unsigned int empty = 0;
	unsigned int sleep_us = IDLE_MIN_US;

	if (w->qsbr != NULL) {
		rte_rcu_qsbr_thread_register(w->qsbr, w->index);
		rte_rcu_qsbr_thread_online(w->qsbr, w->index);
	}
	while (*w->stop == 0) {
		if (w->qsbr != NULL)
			rte_rcu_qsbr_quiescent(w->qsbr, w->index);
		uint16_t n = rte_eth_rx_burst(w->port, w->queue, rx, P53_BURST);
		w->stats.polls++;
		w->stats.heartbeat = rte_rdtsc();
		if (n == 0) {
			w->stats.idle_polls++;
			if (w->idle_adaptive && ++empty > IDLE_SPIN_POLLS) {
				/* Only when the queue is empty: back off so the core can be shared,
				 * offline so a reload does not wait for the sleep. */
				if (w->qsbr != NULL)
					rte_rcu_qsbr_thread_offline(w->qsbr, w->index);
				rte_delay_us_sleep(sleep_us);
				if (w->qsbr != NULL)
					rte_rcu_qsbr_thread_online(w->qsbr, w->index);
				if (sleep_us < w->idle_max_us)
					sleep_us = RTE_MIN(sleep_us * 2, w->idle_max_us);
			}
			continue;
		}
		empty = 0;
		sleep_us = IDLE_MIN_US;
		w->stats.rx += n;
		uint16_t n_out = p53_worker_burst(w, rx, n, tx);
		if (n_out == 0)
			continue;
		uint16_t sent = rte_eth_tx_burst(w->port, w->queue, tx, n_out);
		w->stats.tx += sent;
		if (unlikely(sent < n_out)) {
			/* Whoever does not hand an mbuf to the NIC frees it. */
			w->stats.tx_fail += (uint64_t)(n_out - sent);
			rte_pktmbuf_free_bulk(&tx[sent], n_out - sent);
		}
	}
	if (w->qsbr != NULL) {
		rte_rcu_qsbr_thread_offline(w->qsbr, w->index);
		rte_rcu_qsbr_thread_unregister(w->qsbr, w->index);
	}
	return 0;
}
