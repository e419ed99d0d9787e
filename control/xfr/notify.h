/*
 * NOTIFY (RFC 1996) on the control thread: the sender is checked against the zone's ACL
 * (zones[].notify, or its primaries) and TSIG (RFC 8945), the answer goes out through a kernel
 * UDP socket bound to the service address the NOTIFY was sent to (IP_FREEBIND, so the address
 * need not be on a kernel interface), and an accepted NOTIFY makes the zone refresh at once.
 *
 * NOTIFYs reach us two ways: from a worker (the data plane's ring, dataplane/notify.h) when
 * they arrive on the DPDK port, and on those same kernel sockets when they arrive on an
 * interface the kernel owns (a management network). Control thread only.
 */
#ifndef P53_XFR_NOTIFY_H
#define P53_XFR_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/notify.h"

struct p53_daemon;
struct p53_xfr;

/**
 * The answer to one NOTIFY, and what it does (an accepted NOTIFY makes the zone refresh):
 * whatever transport it came on writes `out` back (UDP: p53_xfr_notify; TCP: notify_tcp.c,
 * and the TCP server once control/tcp/ hands NOTIFYs here).
 * @return the answer's length, or 0 when there is none to send.
 */
size_t p53_xfr_notify_answer(struct p53_daemon *d, const struct p53_notify_event *ev, uint8_t *out,
			     size_t cap);

/**
 * A TSIG-signed SOA query over UDP a worker handed over (ev->soa_query; dataplane/answer.h,
 * p53_answer_signed_soa_handoff): decided like one over TCP (control/xfr/serve.c: the zone's
 * `transfer` ACL and key) and answered from the kernel socket of the service address it was
 * sent to: the SOA alone, signed; or the refusal (REFUSED, NOTAUTH with the TSIG error).
 */
void p53_xfr_soa_query(struct p53_daemon *d, const struct p53_notify_event *ev);

/** Open (or re-open after a reload) one socket per service address. */
void p53_xfr_notify_sockets(struct p53_daemon *d);

/** NOTIFYs that arrived on the kernel sockets (every tick; never blocks). */
void p53_xfr_notify_poll(struct p53_daemon *d);

void p53_xfr_notify_close(struct p53_xfr *x);

/** A socket (SOCK_DGRAM, or SOCK_STREAM listening) on port 53 of a service address. */
struct p53_addr;
int p53_xfr_sock_open(const struct p53_addr *a, int type);

/*
 * NOTIFY over TCP (notify_tcp.c): Knot sends its NOTIFYs over TCP only. Until the TCP server
 * (control/tcp/) hands NOTIFY messages to p53_xfr_notify_answer, the control thread listens
 * on TCP port 53 of the service addresses itself, when any secondary zone is configured, and
 * takes only NOTIFY on those connections (anything else closes the connection).
 */
void p53_xfr_notify_tcp_listen(struct p53_daemon *d);
void p53_xfr_notify_tcp_poll(struct p53_daemon *d);
void p53_xfr_notify_tcp_close(struct p53_xfr *x, bool conns_only);
/* A TCP connection a TCP thread handed over with the NOTIFY it read (ev->handoff, ev->fd): answer
 * it there and keep serving NOTIFYs on it like one accepted here. Closes ev->fd when it can't. */
void p53_xfr_notify_tcp_adopt(struct p53_daemon *d, const struct p53_notify_event *ev);

#endif /* P53_XFR_NOTIFY_H */
