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

struct p53_daemon;
struct p53_xfr;

/** Open (or re-open after a reload) one socket per service address. */
void p53_xfr_notify_sockets(struct p53_daemon *d);

/** NOTIFYs that arrived on the kernel sockets (every tick; never blocks). */
void p53_xfr_notify_poll(struct p53_daemon *d);

void p53_xfr_notify_close(struct p53_xfr *x);

#endif /* P53_XFR_NOTIFY_H */
