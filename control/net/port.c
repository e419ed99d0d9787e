/* Service port set-up; see port.h. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "control/log.h"
#include "control/net/port.h"
#include "control/net/xdp.h"
#include "control/net/xdp_owner.h"
#include "dataplane/pkt.h"

#ifndef P53_STEER_OBJ
#define P53_STEER_OBJ "/usr/local/lib/pop53/steer.bpf.o"
#endif

#define MBUF_CACHE 256

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

/* xdp mode: for net_af_xdp without xdp_prog=, add ours: only UDP/53 to the service addresses
 * is steered to the AF_XDP socket and the kernel keeps ARP, ND, ICMP, TCP and BGP. dpdk mode:
 * the device string as given; net_af_xdp then loads libxdp's default program, which sends
 * every frame of the queue to the socket, so DPDK owns the interface as it would a vfio-pci
 * NIC and the kernel sees its traffic only through the exception interface (control/exc/).
 * Returns whether our steering program is on the port. */
static int devargs(char *out, size_t len, const struct p53_config *cfg, char *iface, size_t iflen)
{
	const char *prog = cfg->xdp_prog != NULL ? cfg->xdp_prog : P53_STEER_OBJ;
	size_t o;

	iface[0] = '\0';
	if (p53_xdp_iface_from_devargs(cfg->port, iface, iflen) == NULL) {
		snprintf(out, len, "%s", cfg->port);
		return 0;
	}
	/* dataplane.af_xdp: what the port string does not say itself. */
	o = (size_t)snprintf(out, len, "%s", cfg->port);
	if (strstr(cfg->port, "busy_budget=") == NULL && o < len)
		o += (size_t)snprintf(out + o, len - o, ",busy_budget=%u", cfg->af_xdp_busy_budget);
	if (cfg->af_xdp_force_copy && strstr(cfg->port, "force_copy=") == NULL && o < len)
		o += (size_t)snprintf(out + o, len - o, ",force_copy=1");
	if (cfg->mode == P53_MODE_DPDK)
		return 0;
	if (strstr(cfg->port, "xdp_prog=") == NULL && o < len)
		snprintf(out + o, len - o, ",xdp_prog=%s", prog);
	return 1;
}

/* The kernel interface's MTU (af_xdp: frames over it are dropped on the way out), or -1. */
static int iface_mtu(const char *iface)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	if (strlen(iface) >= sizeof(ifr.ifr_name)) {
		close(fd);
		return -1;
	}
	memcpy(ifr.ifr_name, iface, strlen(iface) + 1);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
		mtu = ifr.ifr_mtu;
	close(fd);
	return mtu;
}

#define L2_MAX   (RTE_ETHER_HDR_LEN + 4)        /* Ethernet and one 802.1Q tag */
#define L3L4_MAX (40 + 8)                       /* IPv6 (the binding case) and UDP */

/*
 * The largest DNS payload a reply can carry on this port: the MTU (IP packet) less the IPv6
 * and UDP headers; the mbuf's data room (the reply is written in the received mbuf) less
 * Ethernet, a VLAN tag, IPv6 and UDP; the largest frame the port takes, likewise.
 */
static void payload_limit(struct p53_port *p, const struct rte_eth_dev_info *info)
{
	uint16_t mtu = RTE_ETHER_MTU;
	int kmtu = p->iface[0] != '\0' ? iface_mtu(p->iface) : -1;

	if (rte_eth_dev_get_mtu(p->id, &mtu) != 0)
		mtu = RTE_ETHER_MTU;
	if (kmtu > 0 && kmtu < mtu)
		mtu = (uint16_t)kmtu;
	p->mtu = mtu;
	uint32_t best = mtu > L3L4_MAX ? mtu - L3L4_MAX : 0;
	snprintf(p->max_payload_why, sizeof(p->max_payload_why),
		 "MTU %u less %u bytes of IPv6 and UDP headers", mtu, L3L4_MAX);
	uint32_t room = rte_pktmbuf_data_room_size(p->pools[0]) - RTE_PKTMBUF_HEADROOM;
	if (room > L2_MAX + L3L4_MAX && room - L2_MAX - L3L4_MAX < best) {
		best = room - L2_MAX - L3L4_MAX;
		snprintf(p->max_payload_why, sizeof(p->max_payload_why), "mbuf data room %u less %u "
			 "bytes of Ethernet, VLAN, IPv6 and UDP headers", room, L2_MAX + L3L4_MAX);
	}
	if (info->max_rx_pktlen > L2_MAX + L3L4_MAX && info->max_rx_pktlen - L2_MAX - L3L4_MAX < best) {
		best = info->max_rx_pktlen - L2_MAX - L3L4_MAX;
		snprintf(p->max_payload_why, sizeof(p->max_payload_why), "largest frame %u less %u "
			 "bytes of Ethernet, VLAN, IPv6 and UDP headers", info->max_rx_pktlen,
			 L2_MAX + L3L4_MAX);
	}
	p->max_payload = (uint16_t)(best > UINT16_MAX ? UINT16_MAX : best);
}

static int find_port(const char *name, uint16_t *id)
{
	if (rte_eth_dev_get_port_by_name(name, id) == 0)
		return 0;
	/* PCI devices may be named differently from the address the operator gave. */
	uint16_t pid;
	RTE_ETH_FOREACH_DEV(pid) {
		struct rte_eth_dev_info info;
		if (rte_eth_dev_info_get(pid, &info) == 0 && info.device != NULL &&
		    strcmp(rte_dev_name(info.device), name) == 0) {
			*id = pid;
			return 0;
		}
	}
	return -ENODEV;
}

static int left_program(struct p53_port *p, const struct p53_config *cfg, uint32_t *left);

static int fd_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * net_af_xdp keeps its AF_XDP sockets to itself (no API gives their fds, and its xstats carry
 * only rx_dropped, as imissed). They are this process's only AF_XDP sockets (one per queue,
 * created by queue set-up): find them among our fds, so their kernel counters can be read.
 */
static void find_xsks(struct p53_port *p)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;

	p->n_xsk = 0;
	if (dir == NULL)
		return;
	while ((e = readdir(dir)) != NULL && p->n_xsk < P53_MAX_WORKERS) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		int dom = 0;
		socklen_t len = sizeof(dom);
		if (*e->d_name == '\0' || *end != '\0' || fd < 0 || fd == dirfd(dir))
			continue;
		if (getsockopt((int)fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) == 0 && dom == AF_XDP)
			p->xsk_fd[p->n_xsk++] = (int)fd;
	}
	closedir(dir);
	qsort(p->xsk_fd, p->n_xsk, sizeof(p->xsk_fd[0]), fd_cmp);
}

#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9 /* Linux 6.17's <linux/if_xdp.h> */
#endif

/*
 * dataplane.af_xdp.tx_budget: how many frames the kernel takes from an AF_XDP socket's TX ring
 * per wakeup in copy mode (a veth is copy mode). The kernel's default is 32: net_af_xdp then
 * makes one more `sendto` (its kick_tx loop on EAGAIN) per 32 frames of a transmit burst.
 * The kernel takes 32..the TX ring's size (Linux 6.17 or later); anything else is refused and
 * the kernel's default stays, with a warning.
 */
static void tx_budget(const struct p53_port *p, unsigned int want, unsigned int txd)
{
	unsigned int v = RTE_MIN(RTE_MAX(want, 32u), txd);

	if (v != want)
		p53_warn("port %s: dataplane.af_xdp.tx_budget %u: the kernel takes 32..%u (the TX "
			 "ring's size), using %u", p->name, want, txd, v);
	for (unsigned int i = 0; i < p->n_xsk; i++)
		if (setsockopt(p->xsk_fd[i], SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &v, sizeof(v)) != 0) {
			p53_warn("port %s: dataplane.af_xdp.tx_budget %u not applied: %s (the kernel's "
				 "32 frames per wakeup stay; XDP_MAX_TX_SKB_BUDGET needs Linux 6.17)",
				 p->name, v, strerror(errno));
			return;
		}
	p53_info("port %s: AF_XDP TX budget %u frames per wakeup", p->name, v);
}

unsigned int p53_port_xsk_stats(const struct p53_port *p, struct p53_xsk_stats *out)
{
	unsigned int n = 0;

	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < p->n_xsk; i++) {
		struct xdp_statistics st;
		socklen_t len = sizeof(st);
		memset(&st, 0, sizeof(st)); /* a kernel before 5.9 fills only the first three */
		if (getsockopt(p->xsk_fd[i], SOL_XDP, XDP_STATISTICS, &st, &len) != 0)
			continue;
		out->rx_dropped += st.rx_dropped;
		out->rx_invalid_descs += st.rx_invalid_descs;
		out->tx_invalid_descs += st.tx_invalid_descs;
		out->rx_ring_full += st.rx_ring_full;
		out->rx_fill_ring_empty += st.rx_fill_ring_empty_descs;
		out->tx_ring_empty += st.tx_ring_empty_descs;
		n++;
	}
	return n;
}

int p53_port_open(struct p53_port *p, const struct p53_config *cfg, const unsigned int *lcores)
{
	char dev[1024];
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	unsigned int nq = cfg->workers;
	int ret;

	memset(p, 0, sizeof(*p));
	p->steer = devargs(dev, sizeof(dev), cfg, p->iface, sizeof(p->iface));
	snprintf(p->name, sizeof(p->name), "%.*s", (int)strcspn(dev, ","), dev);
	if (p->iface[0] != '\0') {
		uint32_t left = 0;
		/* Read in both modes: a crashed dpdk-mode run may be followed by an xdp-mode one. */
		if (left_program(p, cfg, &left) != 0)
			return -1;
		if (cfg->mode != P53_MODE_DPDK)
			p->owner[0] = '\0'; /* our steering program needs no record */
		ret = p53_xdp_detach_stale(p->iface, left);
		if (ret == -EEXIST) {
			p53_err("port %s: %s already has another program's XDP program attached: not "
				"starting (see the xdp: line above)", p->name, p->iface);
			return -1;
		}
	}

	p53_info("port %s: probing %s", p->name, dev);
	ret = rte_dev_probe(dev);
	if (ret != 0 && ret != -EEXIST) {
		p53_err("port %s: probe failed: %s", dev, rte_strerror(-ret));
		return -1;
	}
	if (find_port(p->name, &p->id) != 0) {
		p53_err("port %s: no ethdev after probe", p->name);
		return -1;
	}
	ret = rte_eth_dev_info_get(p->id, &info);
	if (ret != 0) {
		p53_err("port %s: info: %s", p->name, rte_strerror(-ret));
		return -1;
	}
	if (nq > info.max_rx_queues || nq > info.max_tx_queues) {
		p53_err("port %s: %u workers need %u queue pairs, the port has %u rx / %u tx",
			p->name, nq, nq, info.max_rx_queues, info.max_tx_queues);
		return -1;
	}

	memset(&conf, 0, sizeof(conf));
	if (nq > 1) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
	}
	/* Use the checksum offloads the port has; pkt.c computes them in software otherwise.
	 * On receive the worker trusts the mbuf's L4 checksum flags and verifies in software
	 * when they say UNKNOWN (dataplane/worker.c). */
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_UDP_CKSUM) {
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
		p->rx_csum = 1;
	}
	uint64_t want = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	if ((info.tx_offload_capa & want) == want) {
		conf.txmode.offloads = want;
		p->tx_offload = P53_PKT_TX_IP_CKSUM | P53_PKT_TX_UDP_CKSUM;
	}
	ret = rte_eth_dev_configure(p->id, (uint16_t)nq, (uint16_t)nq, &conf);
	if (ret != 0) {
		p53_err("port %s: configure: %s", p->name, rte_strerror(-ret));
		return -1;
	}
	uint16_t rxd = (uint16_t)cfg->rx_desc, txd = (uint16_t)cfg->tx_desc;
	rte_eth_dev_adjust_nb_rx_tx_desc(p->id, &rxd, &txd);

	for (unsigned int q = 0; q < nq; q++) {
		char pool_name[RTE_MEMPOOL_NAMESIZE];
		int socket = (int)rte_lcore_to_socket_id(lcores[q]);
		snprintf(pool_name, sizeof(pool_name), "p53_mbuf_%u", q);
		p->pools[q] = rte_pktmbuf_pool_create(pool_name, cfg->mbufs, MBUF_CACHE, 0,
						      RTE_MBUF_DEFAULT_BUF_SIZE, socket);
		if (p->pools[q] == NULL) {
			p53_err("port %s: mbuf pool for queue %u: %s", p->name, q, rte_strerror(rte_errno));
			goto fail;
		}
		ret = rte_eth_rx_queue_setup(p->id, (uint16_t)q, rxd, (unsigned int)socket, NULL, p->pools[q]);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(p->id, (uint16_t)q, txd, (unsigned int)socket, NULL);
		if (ret != 0) {
			p53_err("port %s: queue %u: %s", p->name, q, rte_strerror(-ret));
			goto fail;
		}
		p->n_queues = (uint16_t)(q + 1);
	}
	ret = rte_eth_dev_start(p->id);
	if (ret != 0) {
		p53_err("port %s: start: %s", p->name, rte_strerror(-ret));
		goto fail;
	}
	if (p->steer && p53_xdp_set_addrs(p->iface, cfg->addrs, cfg->n_addrs) != 0) {
		p53_err("port %s: cannot fill the steering program's address map on %s", p->name, p->iface);
		rte_eth_dev_stop(p->id);
		goto fail;
	}
	struct rte_ether_addr ea;
	ret = rte_eth_macaddr_get(p->id, &ea);
	if (ret != 0) {
		p53_err("port %s: MAC address: %s", p->name, rte_strerror(-ret));
		rte_eth_dev_stop(p->id);
		goto fail;
	}
	memcpy(p->mac, ea.addr_bytes, sizeof(p->mac));
	payload_limit(p, &info);
	if (p->iface[0] != '\0') {
		find_xsks(p);
		if (p->n_xsk != nq)
			p53_warn("port %s: found %u AF_XDP sockets for %u queues: the ring-full and "
				 "fill-ring drop counters (port.xsk_drops) %s", p->name, p->n_xsk, nq,
				 p->n_xsk == 0 ? "are not available" : "may be incomplete");
	}
	p->in_use_baseline = p53_port_in_use(p);
	/* net_af_xdp puts a fixed number of mbufs (2048 in DPDK 22.11) in its fill ring at start
	 * and one back per frame received, so at most that many frames can wait in the socket's
	 * RX ring for a worker that is off its CPU: a ring as large uses them all, a larger one
	 * only turns ring-full drops into fill-ring-empty ones (port.xsk_drops). */
	unsigned int held = p->in_use_baseline / nq;    /* per queue */
	if (p->iface[0] != '\0' && held > 0 && rxd > held)
		p53_warn("port %s: %u rx descriptors, but net_af_xdp holds only %u buffers per queue "
			 "for its RX ring: at most %u frames wait, the others are dropped (port.xsk_drops "
			 "rx_dropped); a dataplane.rx_desc above %u adds nothing", p->name, rxd, held,
			 held, held);
	if (cfg->af_xdp_tx_budget > 0 && p->n_xsk > 0)
		tx_budget(p, cfg->af_xdp_tx_budget, txd);
	if (p->owner[0] != '\0' && p53_xdp_owner_write(p->owner, p->iface) != 0) {
		p53_warn("port %s: cannot record libxdp's program on %s in %s: after a crash, "
			 "`ip link set %s xdp off` before restarting", p->name, p->iface, p->owner, p->iface);
		p->owner[0] = '\0';
	}
	p53_info("port %s (id %u): MAC %02x:%02x:%02x:%02x:%02x:%02x, MTU %u, DNS payload up to %u, "
		 "%u queue pair(s), %u rx / %u tx descriptors, UDP checksums verified %s, computed %s, "
		 "%u mbufs held by the driver",
		 p->name, p->id, p->mac[0], p->mac[1], p->mac[2], p->mac[3], p->mac[4], p->mac[5],
		 p->mtu, p->max_payload, nq, rxd, txd,
		 p->rx_csum ? "by the port" : "in software", p->tx_offload ? "by the port" : "in software",
		 p->in_use_baseline);
	return 0;
fail:
	rte_eth_dev_close(p->id);
	for (unsigned int q = 0; q < nq; q++) {
		rte_mempool_free(p->pools[q]);
		p->pools[q] = NULL;
	}
	return -1;
}

/* dpdk mode on af_xdp: the program our earlier run recorded (0: none), and where this run
 * records its own. -1 (logged) when another pop53d still runs on the interface. */
static int left_program(struct p53_port *p, const struct p53_config *cfg, uint32_t *left)
{
	long pid;
	int ret;

	if (p53_xdp_owner_path(p->owner, sizeof(p->owner), cfg->control_socket, p->iface) != 0) {
		p->owner[0] = '\0';
		return 0;
	}
	ret = p53_xdp_owner_left(p->owner, left, &pid);
	if (ret == -EBUSY) {
		p53_err("port %s: %s records that pop53d pid %ld runs on %s: not starting",
			p->name, p->owner, pid, p->iface);
		p->owner[0] = '\0';
		return -1;
	}
	if (ret == -EINVAL)
		p53_warn("port %s: %s does not parse: ignored", p->name, p->owner);
	return 0;
}

unsigned int p53_port_in_use(const struct p53_port *p)
{
	unsigned int n = 0;

	for (unsigned int q = 0; q < P53_MAX_WORKERS; q++)
		if (p->pools[q] != NULL)
			n += rte_mempool_in_use_count(p->pools[q]);
	return n;
}

void p53_port_log_xstats(const struct p53_port *p)
{
	struct rte_eth_stats st;

	struct p53_xsk_stats x;

	if (rte_eth_stats_get(p->id, &st) == 0)
		p53_info("port %s: ipackets %" PRIu64 " opackets %" PRIu64 " imissed %" PRIu64
			 " ierrors %" PRIu64 " oerrors %" PRIu64 " rx_nombuf %" PRIu64,
			 p->name, st.ipackets, st.opackets, st.imissed, st.ierrors, st.oerrors, st.rx_nombuf);
	if (p53_port_xsk_stats(p, &x) != 0)
		p53_info("port %s: AF_XDP sockets: rx_ring_full %" PRIu64 " rx_dropped %" PRIu64
			 " rx_fill_ring_empty %" PRIu64 " rx_invalid %" PRIu64 " tx_invalid %" PRIu64
			 " tx_ring_empty %" PRIu64, p->name, x.rx_ring_full, x.rx_dropped,
			 x.rx_fill_ring_empty, x.rx_invalid_descs, x.tx_invalid_descs, x.tx_ring_empty);
}

/* Let the driver reap transmit completions, so mbufs it still holds for sent packets go back
 * to the pool before we count (net_af_xdp reaps its completion ring on the next tx call). */
static void drain_tx(const struct p53_port *p)
{
	for (uint16_t q = 0; q < p->n_queues; q++) {
		if (rte_eth_tx_done_cleanup(p->id, q, 0) == -ENOTSUP) {
			struct rte_mbuf *none[1];
			rte_eth_tx_burst(p->id, q, none, 0);
		}
	}
}

void p53_port_close(struct p53_port *p)
{
	drain_tx(p);
	unsigned int before = p53_port_in_use(p);

	rte_eth_dev_stop(p->id);
	rte_eth_dev_close(p->id);
	p->n_xsk = 0;   /* closed with the port: the numbers may be reused */
	if (p->owner[0] != '\0')
		p53_xdp_owner_remove(p->owner);
	unsigned int after = p53_port_in_use(p);
	/* The verdict compares with the baseline taken right after start (what the driver holds
	 * for its RX ring). After close, net_af_xdp keeps its fill ring's mbufs with the UMEM it
	 * tears down, so that figure is informational. */
	p53_info("mempool: %u mbufs in use after the workers stopped (baseline %u after start)%s; %u after close",
		 before, p->in_use_baseline, before == p->in_use_baseline ? ": no leak" : ": LEAK", after);
	for (unsigned int q = 0; q < P53_MAX_WORKERS; q++) {
		rte_mempool_free(p->pools[q]);
		p->pools[q] = NULL;
	}
}
