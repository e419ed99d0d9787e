/*
 * DNS over TCP (RFC 7766), served from kernel sockets bound to the service addresses.
 *
 * Whatever brought TCP/53 to the kernel (in xdp mode the steering program passes it; in dpdk
 * mode the exception path carries it), tcp.threads threads made with rte_ctrl_thread_create
 * (so on the control CPUs, never a worker lcore) accept and serve it. Each thread has its own
 * listening socket on port 53 of every service address (SO_REUSEPORT spreads connections over
 * the threads; IP_FREEBIND / IPV6_FREEBIND so an address not on an interface yet does not stop
 * start-up), one epoll set, and non-blocking connections: one slow client never holds up
 * another, or another thread.
 *
 * Answers come from the same responder (p53_msg_parse, p53_answer_parsed) and the same
 * RCU-published replica as the workers (worker 0's; see p53_dataplane_reader_slot): the TCP
 * threads are RCU readers, report a quiescent state after every event and are offline while
 * they wait in epoll_wait, so a reload swaps what TCP answers from too and waits at most for
 * one event's work, never for a slow client.
 *
 * Framing (connection handling in conn.c): two-byte lengths; pipelined queries answered in
 * order as they arrive whole, whether split across segments or several to a segment; responses
 * never truncated below 65535 bytes; edns-tcp-keepalive (RFC 7828) answered with
 * tcp.idle_timeout_ms. Bad input closes the connection, counted by reason (tcp_stats.h).
 * Memory per connection is bounded (P53_TCP_RX_MAX + P53_TCP_TX_MAX).
 *
 * p53_tcp_start, p53_tcp_set_addrs and p53_tcp_stop: start-up and the control thread.
 * p53_tcp_totals: any thread.
 */
#ifndef P53_TCP_H
#define P53_TCP_H

#include <stddef.h>

#include <rte_ring.h>

#include "control/conf/config.h"
#include "control/publish.h"
#include "control/tcp/limits.h"
#include "control/tcp/tcp_conf.h"
#include "control/tcp/tcp_stats.h"

#define P53_TCP_RX_SMALL 4096           /* a connection's receive buffer, at first */
#define P53_TCP_RX_MAX (2 + 65535)      /* ...grown to hold one whole message at most */
#define P53_TCP_TX_MAX (2 + 65535 + 16384) /* responses waiting for a slow reader, at most */

struct p53_tcp_thread;
struct p53_xfr_serve;

struct p53_tcp {
	struct p53_tcp_conf conf;       /* as started (tcp.* changes need a restart) */
	unsigned int n_threads;
	struct p53_tcp_thread *threads; /* NULL when never started or freed */
	int running;                    /* threads started and not stopped */
	struct p53_tcp_limits limits;   /* shared by the threads */
	struct p53_addr addrs[P53_CONFIG_MAX_ADDRS]; /* listened on */
	int n_addrs;
	struct p53_tcp_stats stopped;   /* counters of threads already stopped */
};

/**
 * Open the listening sockets and start the threads. The data plane must be set up with
 * `conf->threads` readers (p53_dataplane_init) and a replica published. Does nothing when
 * tcp.enabled is false.
 *
 * @param notify_ring  where NOTIFY messages go (dataplane/notify.h), or NULL
 * @param serve  who may transfer zones from us (control/xfr/serve.h); AXFR/IXFR requests are
 *               served from it
 * @return 0, or -1 with err set ("cannot listen on TCP 192.0.2.53 port 53: ...") and nothing
 *         left running.
 */
int p53_tcp_start(struct p53_tcp *t, const struct p53_tcp_conf *conf, const struct p53_addr *addrs,
		  int n_addrs, struct p53_dataplane *dp, struct rte_ring *notify_ring,
		  struct p53_xfr_serve *serve, char *err, size_t errlen);

/**
 * Listen on a new set of service addresses (a config reload): sockets for new addresses are
 * opened here, so an error leaves the old set; the threads then drop the listeners of removed
 * addresses (connections already open on them go on). Control thread.
 * @return 0, or -1 with err set.
 */
int p53_tcp_set_addrs(struct p53_tcp *t, const struct p53_addr *addrs, int n_addrs, char *err,
		      size_t errlen);

/**
 * Stop the threads: each closes its connections (counted as shutdown), and unregisters from
 * RCU before this returns, so the replicas may be freed after it; then the listeners close.
 * The counters stay readable. Idempotent; safe on a zeroed struct. Control thread.
 */
void p53_tcp_stop(struct p53_tcp *t);

/**
 * Stop (if running) and free everything; p53_tcp_totals() goes on returning the final counts.
 * Call once no other thread reads the counters (after telemetry is unregistered).
 */
void p53_tcp_free(struct p53_tcp *t);

/** out = the sum of the threads' counters (zeros when not running). Any thread. */
void p53_tcp_totals(const struct p53_tcp *t, struct p53_tcp_stats *out);

#endif /* P53_TCP_H */
