/*
 * Inside the TCP server (tcp.h): a thread and its connections. tcp.c runs the threads
 * (listeners, epoll loop, timers, RCU), conn.c one connection (framing, answering, buffering).
 * Everything here belongs to one TCP thread, except the mailbox (under its lock) and the
 * counters (read racily by the control thread).
 */
#ifndef P53_TCP_SERVER_H
#define P53_TCP_SERVER_H

#include <pthread.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "control/tcp/tcp.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/notify.h"
#include "dataplane/replica.h"

/* What an epoll event points at: the first member of each of these. */
enum ev_kind { EV_WAKE = 1, EV_LISTENER, EV_CONN };

struct listener {
	uint8_t kind;                   /* EV_LISTENER */
	int fd;
};

struct conn {
	uint8_t kind;                   /* EV_CONN */
	uint8_t in_msg;                 /* on the thread's msg list */
	uint8_t in_write;               /* on the thread's write list */
	uint8_t eof;                    /* the client closed its side */
	uint32_t events;                /* epoll interest now */
	int fd;
	struct p53_addr peer;
	uint16_t peer_port;
	uint64_t active_ms;             /* last byte read or written */
	uint64_t msg_ms;                /* first byte of the partial message in rx */
	uint64_t write_ms;              /* since the pending output last moved */
	TAILQ_ENTRY(conn) idle_link;    /* every connection, by active_ms */
	TAILQ_ENTRY(conn) msg_link;     /* with a partial message, by msg_ms */
	TAILQ_ENTRY(conn) write_link;   /* with output pending, by write_ms */
	uint8_t *rx;                    /* received bytes not answered yet */
	uint32_t rx_len, rx_cap;
	uint8_t *tx;                    /* output the socket did not take: [tx_off, tx_len) */
	uint32_t tx_off, tx_len;
	struct p53_xfr_out *xo;         /* a zone transfer being sent (xfr_conn.c), or NULL */
};

TAILQ_HEAD(conn_list, conn);

struct p53_tcp_thread {
	struct p53_tcp_stats stats;     /* this thread writes, others read */
	unsigned int index;
	pthread_t tid;
	int started;
	volatile int stop;
	int epfd;
	int wakefd;                     /* eventfd: stop, or new listeners in the mailbox */
	uint8_t wake_kind;              /* EV_WAKE, what epoll points at for wakefd */
	const struct p53_tcp_conf *conf;
	struct p53_tcp_limits *limits;
	struct rte_rcu_qsbr *qsbr;
	unsigned int qsbr_id;
	struct p53_replica *const *replica;
	struct rte_ring *notify_ring;
	struct p53_xfr_serve *serve;
	struct p53_notify_event handoff; /* a NOTIFY whose connection goes to the control thread,
					    enqueued once the answers before it are sent */

	struct listener lst[P53_CONFIG_MAX_ADDRS]; /* listening now (the thread's own) */
	int n_lst;
	int handed[P53_CONFIG_MAX_ADDRS]; /* control thread's view: the fds it handed over last,
					     one per p53_tcp.addrs */
	uint64_t accept_paused_until;   /* ms; out of file descriptors: stop accepting a moment */

	/* Mailbox from the control thread (p53_tcp_set_addrs): the listening sockets to use. */
	pthread_mutex_t box_lock;
	int box_pending;
	int box_fds[P53_CONFIG_MAX_ADDRS];
	int box_n;

	struct conn_list idle, msgs, writes;
	unsigned int n_conns;
	uint8_t *out;                   /* responses of one event, sent with one send() */
	uint32_t out_len;
} __rte_cache_aligned;

/* conn.c */

/** Monotonic milliseconds (coarse clock: timeouts, not measurements). */
uint64_t p53_tcp_now_ms(void);

/**
 * Serve one epoll event of connection c: flush pending output, read what arrived, answer the
 * whole messages, set the epoll interest and the timer lists.
 * @return 0 to keep it, or 1 + the close reason (enum p53_tcp_close) when it must close.
 */
int p53_tcp_conn_event(struct p53_tcp_thread *th, struct conn *c, uint32_t events, uint64_t now);

/** Something moved on c now: it goes to the end of the idle list. */
void p53_tcp_conn_touch(struct p53_tcp_thread *th, struct conn *c, uint64_t now);

/** Close c, count why, free it. */
void p53_tcp_conn_close(struct p53_tcp_thread *th, struct conn *c, enum p53_tcp_close why);

/* xfr_conn.c */

/**
 * An AXFR or IXFR request (q parsed from msg): answered into th->out, or c->xo set to the
 * transfer to stream. @return 0, or -1 (out of memory: close).
 */
int p53_tcp_xfr_start(struct p53_tcp_thread *th, struct conn *c, const void *img,
		      const uint8_t *msg, uint16_t len, const struct p53_query *q);

/**
 * The next messages of c's transfer into th->out (up to its capacity); frees c->xo and logs
 * the transfer at its end. @return 0, or -1 (a message could not be built: close).
 */
int p53_tcp_xfr_pump(struct p53_tcp_thread *th, struct conn *c);

/** Take a freshly accepted socket on (already admitted by the limits). NULL: out of memory. */
struct conn *p53_tcp_conn_new(struct p53_tcp_thread *th, int fd, const struct p53_addr *peer,
			      uint16_t port, uint64_t now);

#endif /* P53_TCP_SERVER_H */
