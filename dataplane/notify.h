/*
 * NOTIFY hand-off (RFC 1996): a worker that receives a NOTIFY puts one small event on a
 * multi-producer ring; the control thread takes it from there (today it logs and counts it;
 * the zone-transfer work turns it into an SOA check and IXFR). Enqueueing is lock-free and
 * never blocks: when the ring is full the event is dropped and counted.
 */
#ifndef P53_NOTIFY_H
#define P53_NOTIFY_H

#include <stdint.h>

#include "dataplane/name.h"

struct p53_notify_event {
	uint16_t port;                  /* sender port, host order */
	uint16_t id;                    /* message ID */
	uint8_t src[16];                /* sender address (4 bytes used for IPv4) */
	uint8_t ipv6;
	uint8_t zone_len;
	uint8_t zone[P53_NAME_MAXLEN];  /* canonical wire name from the question */
	uint8_t pad[3];
};

_Static_assert(sizeof(struct p53_notify_event) % 4 == 0, "rte_ring elements are 4-byte multiples");

#define P53_NOTIFY_RING_SIZE 1024

#endif /* P53_NOTIFY_H */
