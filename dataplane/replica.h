/*
 * A replica: what one worker answers from. The zone image plus the responder settings that a
 * reload may change, published together so a worker never pairs an image with another
 * reload's settings.
 *
 * Workers only read a replica, through one pointer they load once per burst; the control
 * thread builds a new replica, swaps the pointer, waits with rte_rcu_qsbr until every worker
 * has passed a quiescent state, and only then frees the old one (control/publish.c).
 *
 * One replica per publish answers from the compiled image itself (malloc'd by the compiler,
 * image_malloced = 1, released with free()); the others are copies in the DPDK heap
 * (image_malloced = 0, rte_free()), or, for a big image when the heap has no hugepages
 * (--no-huge), in transparent-huge-page malloc memory (image_malloced = 1). See
 * docs/ARCHITECTURE.md, "Replicas".
 */
#ifndef P53_REPLICA_H
#define P53_REPLICA_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/answer.h"
#include "dataplane/pkt.h"

struct p53_replica {
	const void *image;              /* zone image (dataplane/image.h), or NULL: REFUSED */
	size_t image_len;
	struct p53_pkt_addrs addrs;     /* service addresses: queries to others are dropped */
	struct p53_answer_conf conf;    /* points into the buffers below */
	uint8_t identity[256];
	uint8_t version[256];
	uint8_t image_malloced;         /* image is the compiler's malloc'd buffer: free(), not
					   rte_free(); last, so no field the workers read moves */
};

#endif /* P53_REPLICA_H */
