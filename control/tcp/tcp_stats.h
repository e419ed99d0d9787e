/*
 * Counters of the DNS-over-TCP server (control/tcp/tcp.h): one set per TCP thread, written only
 * by that thread, read (plain 64-bit loads, as the workers' counters are) by the control and
 * telemetry threads, summed by p53_tcp_totals() and described once in control/ops/counters.c.
 * Plain uint64_t only: the totals are added and subtracted word by word.
 */
#ifndef P53_TCP_STATS_H
#define P53_TCP_STATS_H

#include <stdint.h>

#include "dataplane/answer.h"

/* Why a connection was closed. */
enum p53_tcp_close {
	P53_TCP_CLOSE_EOF = 0,          /* the client closed between messages */
	P53_TCP_CLOSE_EOF_MID_MESSAGE,  /* the client closed inside a message: a length larger
					   than what followed */
	P53_TCP_CLOSE_ZERO_LENGTH,      /* a message length of 0 */
	P53_TCP_CLOSE_IDLE,             /* nothing pending for tcp.idle_timeout_ms */
	P53_TCP_CLOSE_SLOW_MESSAGE,     /* a message not whole within tcp.io_timeout_ms of its
					   first byte (slowloris) */
	P53_TCP_CLOSE_WRITE_STALLED,    /* responses not draining for tcp.io_timeout_ms: the
					   client does not read */
	P53_TCP_CLOSE_ERROR,            /* reset by the client, or another socket error */
	P53_TCP_CLOSE_NO_MEMORY,        /* a buffer could not be allocated */
	P53_TCP_CLOSE_SHUTDOWN,         /* pop53d is stopping */
	P53_TCP_CLOSE_NOTIFY_HANDOFF,   /* a NOTIFY for a secondary zone: the connection went to
					   the control thread, which checks it and answers there */
	P53_TCP_CLOSE__MAX
};

/* Why an accepted connection was closed at once. */
enum p53_tcp_refuse {
	P53_TCP_REFUSE_MAX_CONNECTIONS = 0, /* tcp.max_connections open already */
	P53_TCP_REFUSE_PER_CLIENT,      /* tcp.max_per_client open from that address already */
	P53_TCP_REFUSE_NO_MEMORY,       /* no memory for the connection */
	P53_TCP_REFUSE_ACCEPT_ERROR,    /* accept() failed (out of file descriptors...) */
	P53_TCP_REFUSE__MAX
};

extern const char *const p53_tcp_close_names[P53_TCP_CLOSE__MAX];
extern const char *const p53_tcp_refuse_names[P53_TCP_REFUSE__MAX];

struct p53_tcp_stats {
	uint64_t accepted;              /* connections taken on */
	uint64_t refused[P53_TCP_REFUSE__MAX];
	uint64_t closed[P53_TCP_CLOSE__MAX];
	uint64_t queries;               /* whole messages received */
	uint64_t responses;             /* responses written (or queued to write) */
	uint64_t bytes_in;              /* bytes read, length fields included */
	uint64_t bytes_out;             /* bytes sent */
	uint64_t notify, notify_lost;   /* NOTIFY events handed to the control thread (or lost) */
	struct p53_answer_stats ans;    /* the responder's counters for TCP queries */
};

#endif /* P53_TCP_STATS_H */
