/* dpdk mode's exception path; see exc.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "control/anycast/netlink.h"
#include "control/exc/exc.h"
#include "control/log.h"

#define EXC_DEV      "net_tap_exc"
#define EXC_DESC     512        /* the tap's RX and TX descriptors */
#define EXC_BURST    32
#define SPIN_LOOPS   64         /* idle loops before the first sleep */
/* The route metric of the service addresses on the tap. The frr announcer puts the same
 * addresses (as /32 and /128) on its tun devices, and zebra makes a connected route of each:
 * with equal metrics it may pick the tap's as best and redistribute that one, which the
 * announcer's route-map (match interface p53any) denies, so nothing is announced. A higher
 * metric here lets the tun device's route win whenever it exists (tests/integration/
 * dpdk_bgp.sh); the kernel delivers to a local address whatever its metric. */
#define SERVICE_METRIC 1000

/* Frames the workers hand to the kernel instead of dropping: everything p53_pkt_parse() or
 * p53_pkt_for_us() says is not a UDP/53 query to a service address. Still dropped: UDP/53
 * frames with a bad checksum or a source no reply may go to, and frames to another MAC (a
 * UDP/53 broadcast): the kernel would drop those as well, and has no UDP/53 socket. */
static const uint32_t exc_mask =
	1u << P53_PKT_DROP_SHORT_L2 | 1u << P53_PKT_DROP_ETHERTYPE | 1u << P53_PKT_DROP_SHORT_L3 |
	1u << P53_PKT_DROP_IP_HDR | 1u << P53_PKT_DROP_IP_LEN | 1u << P53_PKT_DROP_FRAGMENT |
	1u << P53_PKT_DROP_PROTO | 1u << P53_PKT_DROP_SHORT_L4 | 1u << P53_PKT_DROP_UDP_LEN |
	1u << P53_PKT_DROP_PORT | 1u << P53_PKT_DROP_DST_ADDR;

static void addr_prefix(const struct p53_addr *a, struct p53_prefix *p)
{
	memset(p, 0, sizeof(*p));
	p->family = a->family;
	p->len = a->family == AF_INET ? 32 : 128;
	memcpy(p->bytes, a->bytes, sizeof(p->bytes));
}

/* Is a service address also a management address (then it is on the tap with that prefix)? */
static int is_mgmt(const struct p53_exc *x, const struct p53_addr *a)
{
	for (int i = 0; i < x->conf->n_addrs; i++)
		if (x->conf->addrs[i].family == a->family &&
		    memcmp(x->conf->addrs[i].bytes, a->bytes, sizeof(a->bytes)) == 0)
			return 1;
	return 0;
}

static int in_set(const struct p53_addr *a, const struct p53_addr *set, int n)
{
	for (int i = 0; i < n; i++)
		if (set[i].family == a->family && memcmp(set[i].bytes, a->bytes, sizeof(a->bytes)) == 0)
			return 1;
	return 0;
}

static int service_addr(struct p53_exc *x, int add, const struct p53_addr *a, char *err, size_t errlen)
{
	struct p53_prefix p;

	if (is_mgmt(x, a))
		return 0;
	addr_prefix(a, &p);
	return p53_nl_addr_metric(x->nl, add != 0, x->ifindex, &p, SERVICE_METRIC, err, errlen);
}

int p53_exc_set_addrs(struct p53_exc *x, const struct p53_addr *addrs, int n, char *err,
		      size_t errlen)
{
	char e2[256];
	int i;

	for (i = 0; i < n; i++)
		if (!in_set(&addrs[i], x->service, x->n_service) &&
		    service_addr(x, 1, &addrs[i], err, errlen) != 0)
			goto undo;
	for (int j = 0; j < x->n_service; j++)
		if (!in_set(&x->service[j], addrs, n) && service_addr(x, 0, &x->service[j], e2, sizeof(e2)) != 0)
			p53_warn("exception: %s", e2); /* a stale extra address, logged; serving goes on */
	memcpy(x->service, addrs, sizeof(*addrs) * (size_t)n);
	x->n_service = n;
	return 0;
undo:
	while (--i >= 0)
		if (!in_set(&addrs[i], x->service, x->n_service))
			service_addr(x, 0, &addrs[i], e2, sizeof(e2));
	return -1;
}

static int make_rings(struct p53_exc *x, unsigned int size, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < x->n_workers; i++) {
		char name[RTE_RING_NAMESIZE];
		int socket = (int)rte_lcore_to_socket_id(x->workers[i].lcore);

		snprintf(name, sizeof(name), "p53_exc_k%u", i);
		x->to_kernel[i] = rte_ring_create(name, size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "p53_exc_w%u", i);
		x->to_wire[i] = rte_ring_create(name, size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (x->to_kernel[i] == NULL || x->to_wire[i] == NULL) {
			snprintf(err, errlen, "exception: rings for worker %u: %s", i, rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

static int make_tap(struct p53_exc *x, const struct p53_config *cfg, const struct p53_port *port,
		    char *err, size_t errlen)
{
	char dev[160], pool_name[RTE_MEMPOOL_NAMESIZE];
	const uint8_t *mac = port->mac;
	struct rte_eth_conf conf;
	int ret;

	snprintf(dev, sizeof(dev), EXC_DEV ",iface=%s,mac=%02x:%02x:%02x:%02x:%02x:%02x",
		 cfg->exc.iface, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	ret = rte_dev_probe(dev);
	if (ret != 0) {
		snprintf(err, errlen, "exception: cannot create %s: %s", dev, rte_strerror(-ret));
		return -1;
	}
	if (rte_eth_dev_get_port_by_name(EXC_DEV, &x->port_id) != 0) {
		snprintf(err, errlen, "exception: no ethdev %s after probe", EXC_DEV);
		rte_eal_hotplug_remove("vdev", EXC_DEV);
		return -1;
	}
	x->opened = 1;
	/* Room for the tap's RX ring, a full ring towards every worker and a burst in hand. */
	unsigned int n = rte_align32pow2(EXC_DESC + x->n_workers * cfg->exc.queue + 2 * EXC_BURST) - 1;
	snprintf(pool_name, sizeof(pool_name), "p53_exc");
	x->pool = rte_pktmbuf_pool_create(pool_name, n, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (x->pool == NULL) {
		snprintf(err, errlen, "exception: mbuf pool: %s", rte_strerror(rte_errno));
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(x->port_id, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(x->port_id, 0, EXC_DESC, rte_socket_id(), NULL, x->pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(x->port_id, 0, EXC_DESC, rte_socket_id(), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(x->port_id);
	if (ret != 0) {
		snprintf(err, errlen, "exception: tap %s: %s", cfg->exc.iface, rte_strerror(-ret));
		return -1;
	}
	x->pool_baseline = rte_mempool_in_use_count(x->pool);
	return 0;
}

int p53_exc_open(struct p53_exc *x, const struct p53_config *cfg, const struct p53_port *port,
		 struct p53_worker *workers, unsigned int n_workers, char *err, size_t errlen)
{
	memset(x, 0, sizeof(*x));
	x->workers = workers;
	x->n_workers = n_workers;
	x->conf = &cfg->exc;
	x->idle_max_us = cfg->exc.idle_max_us;
	snprintf(x->iface, sizeof(x->iface), "%s", cfg->exc.iface);
	if (make_rings(x, cfg->exc.queue, err, errlen) != 0 || make_tap(x, cfg, port, err, errlen) != 0)
		return -1;
	x->ifindex = (int)if_nametoindex(x->iface);
	if (x->ifindex == 0) {
		snprintf(err, errlen, "exception: no interface %s after the tap started: %s", x->iface,
			 strerror(errno));
		return -1;
	}
	x->nl = p53_nl_open(err, errlen);
	if (x->nl == NULL || p53_nl_link_up(x->nl, x->ifindex, err, errlen) != 0)
		return -1;
	for (int i = 0; i < cfg->exc.n_addrs; i++)
		if (p53_nl_addr(x->nl, true, x->ifindex, &cfg->exc.addrs[i], err, errlen) != 0)
			return -1;
	if (p53_exc_set_addrs(x, cfg->addrs, cfg->n_addrs, err, errlen) != 0)
		return -1;
	for (unsigned int i = 0; i < n_workers; i++) {
		workers[i].exc_mask = exc_mask;
		workers[i].exc_out = x->to_kernel[i];
		workers[i].exc_in = x->to_wire[i];
	}
	p53_info("exception: %s (port %u) with the NIC's MAC %02x:%02x:%02x:%02x:%02x:%02x, %d "
		 "management and %d service address(es), rings of %u frames per worker and direction",
		 x->iface, x->port_id, port->mac[0], port->mac[1], port->mac[2], port->mac[3],
		 port->mac[4], port->mac[5], cfg->exc.n_addrs, x->n_service, cfg->exc.queue);
	return 0;
}

/* The worker whose queue sends a frame: by destination address, so one flow keeps one queue
 * and its order (TCP); worker 0 for what is not IP (ARP, with no flow to keep). */
static unsigned int pick(const struct rte_mbuf *m, unsigned int n)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);

	if (n == 1 || len < 14)
		return 0;
	uint16_t et = (uint16_t)(f[12] << 8 | f[13]);
	if (et == 0x0800 && len >= 34)
		return rte_hash_crc(f + 30, 4, 0) % n;
	if (et == 0x86dd && len >= 54)
		return rte_hash_crc(f + 38, 16, 0) % n;
	return 0;
}

static void *exc_main(void *arg)
{
	struct p53_exc *x = arg;
	struct rte_mbuf *m[EXC_BURST];
	unsigned int empty = 0, sleep_us = 1;

	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		unsigned int work = 0;

		/* Wire -> kernel: each worker's ring to the tap. */
		for (unsigned int i = 0; i < x->n_workers; i++) {
			unsigned int n = rte_ring_sc_dequeue_burst(x->to_kernel[i], (void **)m, EXC_BURST, NULL);
			if (n == 0)
				continue;
			uint16_t sent = rte_eth_tx_burst(x->port_id, 0, m, (uint16_t)n);
			x->stats.to_kernel += sent;
			if (sent < n) {
				x->stats.tap_refused += n - sent;
				rte_pktmbuf_free_bulk(&m[sent], n - sent);
			}
			work += n;
		}
		/* Kernel -> wire: the tap to the workers' rings. */
		uint16_t n = rte_eth_rx_burst(x->port_id, 0, m, EXC_BURST);
		for (uint16_t k = 0; k < n; k++) {
			if (rte_ring_sp_enqueue(x->to_wire[pick(m[k], x->n_workers)], m[k]) == 0) {
				x->stats.from_kernel++;
			} else {
				x->stats.to_wire_full++;
				rte_pktmbuf_free(m[k]);
			}
		}
		work += n;
		if (work != 0) {
			empty = 0;
			sleep_us = 1;
		} else if (x->idle_max_us > 0 && ++empty > SPIN_LOOPS) {
			rte_delay_us_sleep(sleep_us);
			if (sleep_us < x->idle_max_us)
				sleep_us = RTE_MIN(sleep_us * 2, x->idle_max_us);
		}
	}
	return NULL;
}

int p53_exc_start(struct p53_exc *x, char *err, size_t errlen)
{
	if (rte_ctrl_thread_create(&x->thread, "p53-exc", NULL, exc_main, x) != 0) {
		snprintf(err, errlen, "exception: cannot start its thread");
		return -1;
	}
	x->running = 1;
	return 0;
}

static void drain(struct rte_ring *r)
{
	void *m[EXC_BURST];
	unsigned int n;

	if (r == NULL)
		return;
	while ((n = rte_ring_dequeue_burst(r, m, EXC_BURST, NULL)) != 0)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)m, n);
}

void p53_exc_stop(struct p53_exc *x)
{
	if (x->running) {
		__atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
		pthread_join(x->thread, NULL);
		x->running = 0;
	}
	for (unsigned int i = 0; i < P53_MAX_WORKERS; i++) {
		drain(x->to_kernel[i]);
		drain(x->to_wire[i]);
	}
}

void p53_exc_close(struct p53_exc *x)
{
	uint64_t full = 0, tx = 0, tx_fail = 0;

	p53_exc_stop(x);
	for (unsigned int i = 0; i < x->n_workers && x->workers != NULL; i++) {
		full += x->workers[i].stats.exc_full;
		tx += x->workers[i].stats.exc_tx;
		tx_fail += x->workers[i].stats.exc_tx_fail;
	}
	if (x->opened && x->pool != NULL) {
		/* The rings are drained and the NIC is closed (a PCI NIC holds what it sends until
		 * the transmit completes): only the tap's RX ring may hold mbufs now. */
		unsigned int in_use = rte_mempool_in_use_count(x->pool);
		p53_info("exception: to the kernel %" PRIu64 " (queue full %" PRIu64 ", tap refused %"
			 PRIu64 "); to the wire %" PRIu64 " (queue full %" PRIu64 ", NIC refused %" PRIu64 ")",
			 x->stats.to_kernel, full, x->stats.tap_refused, tx, x->stats.to_wire_full, tx_fail);
		p53_info("exception mempool: %u mbufs in use (baseline %u after start)%s", in_use,
			 x->pool_baseline, in_use == x->pool_baseline ? ": no leak" : ": LEAK");
	}
	if (x->opened) {
		rte_eth_dev_stop(x->port_id);
		rte_eth_dev_close(x->port_id);
		rte_eal_hotplug_remove("vdev", EXC_DEV);
		x->opened = 0;
	}
	rte_mempool_free(x->pool);
	x->pool = NULL;
	for (unsigned int i = 0; i < P53_MAX_WORKERS; i++) {
		rte_ring_free(x->to_kernel[i]);
		rte_ring_free(x->to_wire[i]);
		x->to_kernel[i] = x->to_wire[i] = NULL;
	}
	if (x->nl != NULL) {
		mnl_socket_close(x->nl);
		x->nl = NULL;
	}
}
