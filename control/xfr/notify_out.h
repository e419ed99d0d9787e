/*
 * Outgoing NOTIFY (RFC 1996): pop53 as the primary of the servers it feeds (tiered
 * distribution, docs/OPERATIONS.md "Feeding another PoP"). Whenever the serial a zone is served
 * at changes (a transfer applied, a reload of a primary zone, pop53d started), each server in
 * the zone's `notify_to` (or `xfr.notify_to`) gets a NOTIFY over UDP: opcode NOTIFY, AA, the
 * zone's SOA as the question and the new SOA in the answer section, TSIG-signed when the entry
 * names a key. An unanswered NOTIFY is sent again after 1, 2, 4 and 8 s (RFC 1996 §3.6), five
 * tries in all; a NOERROR answer (verified when signed) ends it, an error RCODE gives up. A
 * newer serial replaces a NOTIFY still waiting for the same zone and server.
 *
 * Runs on the control thread, inside p53_xfr_tick: it notices a new image by its generation,
 * then compares the serials of the zones with targets; sends and receives on two unbound
 * non-blocking UDP sockets (IPv4, IPv6). Never blocks, never waits for a downstream server.
 */
#ifndef P53_XFR_NOTIFY_OUT_H
#define P53_XFR_NOTIFY_OUT_H

#include <stddef.h>
#include <stdint.h>

struct p53_daemon;
struct p53_nout_msg;
struct p53_nout_zone;

#define P53_NOUT_TRIES 5
#define P53_NOUT_FIRST_TIMEOUT_MS 1000
#define P53_NOUT_MAX_PENDING 65536      /* NOTIFYs waiting for an answer, all zones */

struct p53_nout {
	int fd4, fd6;                   /* -1 until the first NOTIFY of that family */
	uint64_t generation;            /* of the image whose serials were compared last */
	struct p53_nout_zone *zones;    /* served serial per zone with targets, sorted by apex */
	size_t n_zones;
	struct p53_nout_msg *msgs;      /* NOTIFYs waiting for an answer */
	size_t n_msgs, cap_msgs;
};

/** Every control tick: new serials -> NOTIFYs; answers; retries. */
void p53_nout_tick(struct p53_daemon *d);

/** Close the sockets, drop what is pending. */
void p53_nout_free(struct p53_nout *n);

#endif /* P53_XFR_NOTIFY_OUT_H */
