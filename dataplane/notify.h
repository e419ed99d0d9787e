/*
 * NOTIFY hand-off (RFC 1996): a worker that receives a NOTIFY puts one event on a
 * multi-producer ring, with the message as it arrived (the control thread verifies its TSIG,
 * RFC 8945, which covers the whole message). The control thread (control/xfr/notify.c) checks
 * the sender against the zone's ACL and answers from a kernel socket bound to the service
 * address the NOTIFY was sent to, then checks the primary's SOA. The worker answers only a
 * NOTIFY that is not for a secondary zone's apex (NOTAUTH, answer.c) and says so in
 * `answered`. A TCP thread (control/tcp/) does the same with a NOTIFY that comes over DNS over
 * TCP, answering it itself unless it is for a secondary zone's apex: then the connection goes
 * to the control thread with the event (`handoff`, `fd`), which answers on it. Enqueueing is lock-free and never blocks: when the ring is full the event is
 * dropped and counted, and the primary's NOTIFY retry comes through later.
 */
#ifndef P53_NOTIFY_H
#define P53_NOTIFY_H

#include <stdint.h>

#include "dataplane/name.h"

#define P53_NOTIFY_MSG_MAX 512  /* NOTIFY bytes kept; a NOTIFY with TSIG is about 200 */

struct p53_notify_event {
	uint16_t port;                  /* sender port, host order */
	uint16_t id;                    /* message ID */
	uint8_t src[16];                /* sender address (4 bytes used for IPv4) */
	uint8_t dst[16];                /* the service address it was sent to */
	uint8_t ipv6;
	uint8_t answered;               /* the worker answered it (NOTAUTH) */
	uint16_t msg_len;               /* bytes in msg; 0 when it was over P53_NOTIFY_MSG_MAX */
	uint8_t tcp;                    /* came over TCP (the control thread's listener) */
	uint8_t zone_len;
	uint8_t zone[P53_NAME_MAXLEN];  /* canonical wire name from the question */
	uint8_t msg[P53_NOTIFY_MSG_MAX]; /* the DNS message as received */
	uint8_t handoff;                /* over TCP for a secondary zone: `fd` is the connection,
					   now the control thread's (control/tcp/conn.c) */
	uint8_t soa_query;              /* not a NOTIFY: a TSIG-signed SOA query over UDP for a
					   zone whose transfers want a key (answer.h,
					   p53_answer_signed_soa_handoff); the control thread
					   verifies and answers it */
	uint8_t pad[1];
	int32_t fd;                     /* with handoff: a duplicate of the connection's socket */
};

_Static_assert(sizeof(struct p53_notify_event) % 4 == 0, "rte_ring elements are 4-byte multiples");

#define P53_NOTIFY_RING_SIZE 1024

#endif /* P53_NOTIFY_H */
