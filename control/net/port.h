/*
 * The service port: any DPDK ethdev (net_af_xdp on a veth in the lab, af_packet, pcap, null,
 * or a PCI NIC) with one RX/TX queue pair per worker and RSS when there is more than one.
 *
 * Control thread only: open and start before the workers run, stop and close after they
 * returned.
 */
#ifndef P53_PORT_H
#define P53_PORT_H

#include <stdint.h>

#include <rte_mempool.h>

#include "control/conf/config.h"

#define P53_MAX_WORKERS 64

struct p53_port {
	uint16_t id;
	uint16_t n_queues;
	unsigned int tx_offload;                /* P53_PKT_TX_* the port offers */
	int rx_csum;                            /* the port verifies UDP checksums on receive */
	uint8_t mac[6];                         /* the port's MAC (queries to others are dropped) */
	uint16_t mtu;                           /* the port's MTU (and the interface's for af_xdp) */
	uint16_t max_payload;                   /* the largest DNS payload a reply can carry: the
						   IPv6 binding case of the MTU, the mbuf room and
						   the largest frame the port takes */
	char max_payload_why[160];              /* how max_payload was found, for the log */
	char name[128];                         /* ethdev name, e.g. net_af_xdp0 */
	char iface[64];                         /* kernel interface for af_xdp, else "" */
	int steer;                              /* pop53's XDP steering program is on iface (xdp
						   mode on net_af_xdp): its address map follows
						   the service addresses */
	char owner[256];                        /* dpdk mode on af_xdp: the record of libxdp's
						   program we attached (control/net/xdp_owner.h),
						   removed on close; "" when none was written */
	struct rte_mempool *pools[P53_MAX_WORKERS]; /* one per queue, on the worker's socket */
	int xsk_fd[P53_MAX_WORKERS];            /* net_af_xdp: the PMD's AF_XDP sockets (found in
						   /proc/self/fd after start), read for their
						   kernel drop counters; owned by the PMD */
	unsigned int n_xsk;                     /* how many; 0 on other ports and after close */
	unsigned int in_use_baseline;           /* mbufs held by the driver after start */
};

/**
 * Probe, configure and start the port named by cfg->port, with one queue per worker; for
 * net_af_xdp, detach a stale XDP program first and, in xdp mode, add the steering program and
 * fill its service-address map (dpdk mode: no steering; the port takes every frame, through
 * libxdp's default program, whose id is recorded beside the control socket so that the next
 * run may detach it after a SIGKILL; see control/net/xdp_owner.h).
 *
 * @param lcores  lcore of each worker, to put its pool and rings on that socket
 * @return 0, or -1 with the reason logged.
 */
int p53_port_open(struct p53_port *p, const struct p53_config *cfg, const unsigned int *lcores);

/** Mbufs in use across the port's pools now. */
unsigned int p53_port_in_use(const struct p53_port *p);

/* The kernel's counters of an AF_XDP socket (getsockopt SOL_XDP XDP_STATISTICS, Linux 5.9+),
 * summed over the port's sockets. The PMD folds only rx_dropped into rte_eth_stats' imissed:
 * a frame the XDP program redirected while the socket's RX ring was full (the worker did not
 * drain it in time) is counted in rx_ring_full and nowhere else. */
struct p53_xsk_stats {
	uint64_t rx_dropped;            /* dropped on receive: no fill-ring buffer, or too long */
	uint64_t rx_invalid_descs;
	uint64_t tx_invalid_descs;
	uint64_t rx_ring_full;          /* dropped on receive: the RX ring was full */
	uint64_t rx_fill_ring_empty;    /* the kernel found the fill ring empty (each such receive
					   is dropped and counted in rx_dropped too, copy mode) */
	uint64_t tx_ring_empty;         /* a TX wakeup found the TX ring empty */
};

/** Sum the XDP_STATISTICS of the port's AF_XDP sockets into out (zeroed first). Any thread.
 * @return the number of sockets read; 0 when the port has none (not net_af_xdp). */
unsigned int p53_port_xsk_stats(const struct p53_port *p, struct p53_xsk_stats *out);

/** Log the port's extended statistics (rx/tx, rx_nombuf, missed). */
void p53_port_log_xstats(const struct p53_port *p);

/** Stop and close the port and free its pools; logs mbufs still in use before and after.
 * dpdk mode: the driver detached libxdp's program, so its record is removed. */
void p53_port_close(struct p53_port *p);

#endif /* P53_PORT_H */
