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

/* An image larger than this (bytes) does not stay in L2/L3: the worker prefetches each burst's
 * lookup chain (worker.c prefetch_chain), and the publish builds no RRset checksum sums for it
 * (control/publish.c): on a big image the sum is one more cache miss per answer, dearer than
 * summing the few bytes of records written (docs/BENCHMARKS.md, "Big zone: no RRset sums"). */
#define P53_PREFETCH_MIN_IMAGE (4u << 20)

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
