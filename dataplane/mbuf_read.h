/*
 * Whether the fast path reads a received mbuf at all, asked in one place by every loop that
 * hands mbufs to it (fastpath.c's burst loops and its count of a run's stretch, worker.c's
 * first pass over a large image), so they cannot disagree on which frames were read. Inline,
 * per packet: no allocation, no lock, no syscall.
 */
#ifndef P53_MBUF_READ_H
#define P53_MBUF_READ_H

#include <rte_mbuf.h>

/* 1 when `m` is one segment without a bad L4 checksum flag from the port; 0: the fast path
 * leaves it to the general checks (a frame of several segments, or one the port found
 * damaged). The hints are inside: on the result of the call, GCC laid out fastpath.c's
 * fast_mbuf_qc() otherwise (25 instructions more in its code). */
static inline __attribute__((always_inline)) int p53_mbuf_readable(const struct rte_mbuf *m)
{
	return __builtin_expect(m->nb_segs == 1, 1) &&
	       __builtin_expect((m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != RTE_MBUF_F_RX_L4_CKSUM_BAD, 1);
}

#endif /* P53_MBUF_READ_H */
