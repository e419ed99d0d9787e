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

/* Zone transfers served (AXFR/IXFR requests over TCP, control/tcp/xfr_conn.c), by outcome. */
enum p53_xfr_served {
	P53_XFR_SERVED_AXFR = 0,        /* AXFR: the whole zone sent */
	P53_XFR_SERVED_IXFR,            /* IXFR: the differences from the journal sent */
	P53_XFR_SERVED_IXFR_UPTODATE,   /* IXFR: the client is up to date, the single SOA sent */
	P53_XFR_SERVED_IXFR_AXFR,       /* IXFR that fell back to the whole zone (AXFR-in-IXFR) */
	P53_XFR_SERVED_REFUSED_ACL,     /* REFUSED: the client or its key is not in `transfer` */
	P53_XFR_SERVED_REFUSED_TSIG,    /* NOTAUTH with a TSIG error: BADKEY, BADSIG, BADTIME */
	P53_XFR_SERVED_NOTAUTH,         /* NOTAUTH: not a zone of ours */
	P53_XFR_SERVED_NODATA,          /* SERVFAIL: a secondary zone with no data (expired...) */
	P53_XFR_SERVED_FORMERR,         /* FORMERR: malformed TSIG or IXFR without its SOA */
	P53_XFR_SERVED_ABORTED,         /* a stream that failed part-way (no memory, signing) */
	P53_XFR_SERVED__MAX
};

extern const char *const p53_xfr_served_names[P53_XFR_SERVED__MAX];
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
	uint64_t xfr_served[P53_XFR_SERVED__MAX]; /* AXFR/IXFR requests, by outcome */
	uint64_t xfr_bytes;             /* bytes of transfer messages sent (length fields not
					   counted; also in bytes_out) */
	struct p53_answer_stats ans;    /* the responder's counters for TCP queries */
};

#endif /* P53_TCP_STATS_H */
