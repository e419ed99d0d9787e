/*
 * The worker: one per lcore, each owning one RX/TX queue pair of the service port.
 *
 * Loop: rx_burst -> frame parse and UDP checksum (pkt.h; the port's verdict, else software) ->
 * answer from this worker's replica (answer.h) ->
 * rewrite in place -> tx_burst; what the NIC does not take is freed and counted. When the
 * queue is empty the worker backs off (busy-poll or adaptive sleep), so several instances
 * can share a small machine. Per packet, this code makes no allocation, lock or syscall; its
 * only syscalls are the idle sleeps, taken when there is no traffic. The port's driver may
 * make its own inside rx/tx bursts (net_af_xdp: recvfrom on an empty RX ring, sendto to kick
 * TX; docs/ARCHITECTURE.md, "Syscalls on the packet path").
 *
 * Counters are per worker, in their own cache lines, written only by the worker and read
 * (racily, as plain 64-bit loads) by the control thread.
 *
 * RCU: the worker holds its replica only inside one loop iteration. It reports a quiescent
 * state after each iteration and goes offline while it sleeps, so a reload waits at most one
 * burst for a busy worker and not at all for an idle one.
 */
#ifndef P53_WORKER_H
#define P53_WORKER_H

#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "dataplane/answer.h"
#include "dataplane/dnssec.h"
#include "dataplane/fastpath.h"
#include "dataplane/guard.h"
#include "dataplane/pkt.h"
#include "dataplane/qcache.h"
#include "dataplane/replica.h"

#ifndef P53_BURST
#define P53_BURST 32 /* frames answered together (burst()'s arrays); a build may override it */
#endif
#define P53_RX_MAX 256 /* largest `burst` (frames per rx_burst), dataplane.burst */

struct p53_worker_stats {
	uint64_t rx;                    /* frames received */
	uint64_t tx;                    /* responses the NIC took */
	uint64_t tx_fail;               /* responses the NIC refused, freed */
	uint64_t answered;              /* responses built */
	uint64_t no_answer;             /* well-formed frames the responder chose not to answer */
	uint64_t multiseg;              /* chained mbufs, dropped */
	uint64_t notify;                /* NOTIFY events handed to the control thread */
	uint64_t notify_lost;           /* ...lost because the ring was full */
	uint64_t drop[P53_PKT_DROP__MAX]; /* frame drops by reason */
	uint64_t polls;                 /* rx_burst calls */
	uint64_t idle_polls;            /* ...that returned nothing */
	uint64_t heartbeat;             /* rte_rdtsc() at the last loop iteration */
	/* dpdk mode, the exception path (control/exc/exc.h) */
	uint64_t exc_queued;            /* frames for the kernel put on exc_out */
	uint64_t exc_full;              /* ...dropped because exc_out was full */
	uint64_t exc_tx;                /* frames from the kernel the NIC took */
	uint64_t exc_tx_fail;           /* ...the NIC refused, freed */
	struct p53_answer_stats ans;
	struct p53_guard_stats guard;   /* cookies and RRL */
} __rte_cache_aligned;

struct p53_worker {
	unsigned int index;
	unsigned int lcore;
	uint16_t port;
	uint16_t queue;
	unsigned int tx_offload;        /* P53_PKT_TX_* the port does for us */
	uint8_t mac[6];                 /* the port's MAC: frames to any other are dropped */
	int idle_adaptive;              /* 0: busy-poll */
	unsigned int idle_max_us;
	unsigned int idle_spin_polls;   /* empty polls before the first sleep */
	uint16_t burst;                 /* frames per rx_burst, 1..P53_RX_MAX */
	struct p53_replica *replica;    /* this worker's replica: loaded with acquire once per
					   burst, swapped by the control thread (RCU) */
	struct rte_rcu_qsbr *qsbr;      /* where the worker reports quiescent states; NULL in
					   tools that never swap replicas */
	struct p53_guard *guard;        /* cookies and RRL (guard.h), or NULL for neither: loaded
					   with acquire once per burst, swapped by the control
					   thread (RCU, as the replica) */
	struct rte_ring *notify_ring;   /* NOTIFY events to the control thread, or NULL */
	/* Health canary (control/health/canary.h). p53_worker_main needs both rings: it tests
	 * canary_in for emptiness once per loop iteration. */
	struct rte_ring *canary_in;     /* query frames from the control thread */
	struct rte_ring *canary_out;    /* their responses, instead of the NIC */
	struct p53_worker *canary;      /* twin answering them: its counters keep canary
					   queries out of the served totals */
	/* dpdk mode: frames that are not UDP/53 to a service address go to the kernel through
	 * the exception thread (control/exc/exc.h) instead of being dropped. Both rings are
	 * single-producer single-consumer; a full ring drops and counts, never waits. */
	uint32_t exc_mask;              /* 1 << drop reason: hand the frame to the kernel; 0 in
					   xdp mode (the XDP program already sent it there) */
	struct rte_ring *exc_out;       /* frames for the kernel, to the exception thread */
	struct rte_ring *exc_in;        /* frames the kernel sent, for this worker's TX queue,
					   or NULL (xdp mode) */
	volatile int *stop;             /* set by the control thread */
	volatile int stall;             /* test hook (pop53ctl test stall-worker, only with
					   POP53_TEST_HOOKS=1): the loop spins without polling,
					   heartbeat or quiescent state, as a hung worker would */
	/* The worker thread's NSEC3 next closer cache counters (dataplane/dnssec.h), set by
	 * p53_worker_main; NULL before it runs. Read racily, as the stats. */
	const struct p53_nsec3_cache_stats *nsec3;
	/* The answer cache (dataplane/qcache.h): repeated questions answered from this worker's
	 * last answers, on the one-pass fast path (a small image, software checksums, no RRL);
	 * NULL: none (dataplane.answer_cache 0). Allocated by the control thread before the
	 * worker runs; its counters read racily, as the stats. */
	struct p53_qcache *qcache;
	/* What the one-pass fast path's name errors left (fastpath.h p53_fast_ctx_nx()): kept
	 * from burst to burst while the replica's image and our payload size stay. */
	struct p53_fast_nx nx;
	struct p53_worker_stats stats;
} __rte_cache_aligned;

/**
 * Handle a burst of received frames: every mbuf is either placed in `out` (to transmit),
 * handed to the kernel through exc_out (dpdk mode, a reason in exc_mask), or freed and
 * counted. Used by the worker loop, the tests and the replay benchmark.
 *
 * @return how many responses are in `out` (at most n).
 */
uint16_t p53_worker_burst(struct p53_worker *w, struct rte_mbuf **pkts, uint16_t n,
			  struct rte_mbuf **out);

/**
 * The lcore entry point (rte_eal_remote_launch); returns 0 when *stop becomes non-zero.
 */
int p53_worker_main(void *arg);

#endif /* P53_WORKER_H */
