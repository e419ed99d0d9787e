/*
 * dpdk mode's exception path: with the NIC owned by DPDK, every frame that is not UDP/53 to a
 * service address (ARP, ND, ICMP, TCP, BGP, SSH, UDP to other ports or addresses) reaches
 * the kernel through a net_tap port, "the exception interface", which carries the NIC's MAC
 * and the service and management addresses; what the kernel sends there leaves by the NIC.
 *
 *   NIC queue q -> worker q: p53_pkt_parse says "not ours" (w->exc_mask)
 *     -> exc_out ring of worker q (SP/SC, bounded; full: drop, exc_full) -> exception thread
 *     -> rte_eth_tx_burst on the tap -> kernel
 *   kernel -> tap -> exception thread: rte_eth_rx_burst, a worker chosen by destination
 *     address -> exc_in ring of that worker (full: drop, to_wire_full)
 *     -> the worker transmits it on its own TX queue, one burst per loop iteration
 *
 * Workers make no syscall and never wait for it: two ring operations, out of line, only when
 * there is something. The tap's own reads and writes (syscalls) happen on the exception
 * thread `p53-exc`, an rte_ctrl_thread on the control CPUs, polling with an adaptive sleep
 * (dataplane.exception.max_sleep_us) when both directions are idle.
 *
 * Control thread (open, addresses, stop, close) and the exception thread (its loop).
 */
#ifndef P53_EXC_H
#define P53_EXC_H

#include <pthread.h>
#include <stdint.h>

#include <rte_mempool.h>
#include <rte_ring.h>

#include "control/conf/config.h"
#include "control/exc/exc_stats.h"
#include "control/net/port.h"
#include "dataplane/worker.h"

struct mnl_socket;

struct p53_exc {
	int opened;                     /* the tap port exists (close it) */
	uint16_t port_id;               /* the tap's ethdev */
	char iface[16];                 /* the kernel interface */
	int ifindex;
	struct rte_mempool *pool;       /* the tap's receive mbufs */
	unsigned int pool_baseline;     /* in use right after start (the tap's RX ring) */
	unsigned int n_workers;
	struct p53_worker *workers;
	struct rte_ring *to_kernel[P53_MAX_WORKERS]; /* = workers[i].exc_out */
	struct rte_ring *to_wire[P53_MAX_WORKERS];   /* = workers[i].exc_in */
	unsigned int idle_max_us;
	struct mnl_socket *nl;
	const struct p53_exc_conf *conf; /* management addresses (the config in force at start) */
	struct p53_addr service[P53_CONFIG_MAX_ADDRS]; /* service addresses on the tap now */
	int n_service;
	pthread_t thread;
	int running;
	volatile int stop;
	struct p53_exc_stats stats __rte_cache_aligned; /* written by the exception thread */
};

/**
 * Create the exception interface for dpdk mode: a net_tap port named cfg->exc.iface with the
 * NIC's MAC, one queue and its own mbuf pool, started; then the management addresses
 * (cfg->exc.addresses) and the service addresses (cfg->addrs, as /32 and /128, unless listed
 * among the management ones) put on it, IPv6 without DAD; then one ring per worker and
 * direction (cfg->exc.queue frames), set in each worker with its exc_mask.
 *
 * Control thread, before the workers start. The calling thread must be in the network
 * namespace the NIC is in.
 * @return 0, or -1 with err set (what was made is undone by p53_exc_close()).
 */
int p53_exc_open(struct p53_exc *x, const struct p53_config *cfg, const struct p53_port *port,
		 struct p53_worker *workers, unsigned int n_workers, char *err, size_t errlen);

/** Start the exception thread. @return 0 or -1 with err set. */
int p53_exc_start(struct p53_exc *x, char *err, size_t errlen);

/**
 * Make the tap's service addresses exactly addrs[0..n): add the new ones first, then remove
 * the ones no longer served (management addresses stay). Control thread (reload).
 * @return 0, or -1 with err set (the addresses added so far are removed again).
 */
int p53_exc_set_addrs(struct p53_exc *x, const struct p53_addr *addrs, int n, char *err,
		      size_t errlen);

/**
 * Stop and join the exception thread, then free every frame still in the rings, so the
 * mempool checks see them back. Call after the workers returned. Safe when never started.
 */
void p53_exc_stop(struct p53_exc *x);

/**
 * Log the counters, stop and close the tap (the kernel interface goes with it), log the tap
 * pool's mbufs in use against its baseline ("no leak" or "LEAK"), free rings and pool.
 * Call after p53_port_close() (a NIC may hold the tap's mbufs until it is stopped). Safe on
 * a zeroed or half-opened struct.
 */
void p53_exc_close(struct p53_exc *x);

#endif /* P53_EXC_H */
