/* Worker lcore loop; see worker.h. */
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

#include "dataplane/dnsmsg.h"
#include "dataplane/fastpath.h"
#include "dataplane/guard.h"
#include "dataplane/image.h"
#include "dataplane/mbuf_read.h"
#include "dataplane/notify.h"
#include "dataplane/worker.h"

#define IDLE_MIN_US     1

/*
 * The event the control thread gets for a message it answers (or is told about): who sent
 * it, to which service address, and the message as it arrived (copied before the responder
 * writes over it). Never blocks: a full ring is counted in notify_lost.
 */
static void handoff_fill(struct p53_notify_event *ev, const uint8_t *frame,
			 const struct p53_pkt *pkt, const struct p53_query *q)
{
	const uint8_t *l3 = frame + pkt->l3_off;

	memset(ev, 0, sizeof(*ev));
	memcpy(ev->zone, q->lname, q->qname_len);
	ev->zone_len = q->qname_len;
	ev->ipv6 = pkt->ipv6;
	memcpy(ev->src, pkt->src_addr, sizeof(ev->src));
	memcpy(ev->dst, l3 + (pkt->ipv6 ? 24 : 16), pkt->ipv6 ? 16 : 4);
	ev->port = pkt->src_port;
	ev->id = q->id;
	if (pkt->dns_len <= P53_NOTIFY_MSG_MAX) {
		memcpy(ev->msg, frame + pkt->dns_off, pkt->dns_len);
		ev->msg_len = pkt->dns_len;
	}
}

static void handoff_send(struct p53_worker *w, struct p53_notify_event *ev)
{
	if (w->notify_ring == NULL)
		return;
	if (rte_ring_mp_enqueue_elem(w->notify_ring, ev, sizeof(*ev)) == 0)
		w->stats.notify++;
	else
		w->stats.notify_lost++;
}

/*
 * RFC 1996 NOTIFY (rare): answer it (NOTAUTH, or nothing when the control thread answers:
 * answer.c), then hand the event to the control thread. Out of line so the event stays off
 * the common path's stack.
 */
static __rte_noinline uint16_t notify(struct p53_worker *w, const struct p53_replica *r,
				      uint8_t *frame, uint16_t cap, const struct p53_pkt *pkt,
				      const struct p53_query *q)
{
	struct p53_notify_event ev;

	handoff_fill(&ev, frame, pkt, q);
	uint16_t rlen = p53_answer_parsed(r->image, &r->conf, frame + pkt->dns_off, cap,
					  &w->stats.ans, q, P53_MSG_OK);
	ev.answered = rlen != 0;
	handoff_send(w, &ev);
	return rlen;
}

/*
 * A TSIG-signed SOA query the responder left unanswered for the control thread
 * (p53_answer_signed_soa_handoff): the message goes on the NOTIFY ring as it arrived (the
 * responder wrote nothing), marked `soa_query`. Rare; out of line, off the common path.
 */
static __rte_noinline void signed_soa(struct p53_worker *w, const struct p53_replica *r,
				      const uint8_t *frame, const struct p53_pkt *pkt,
				      const struct p53_query *q)
{
	struct p53_notify_event ev;

	if (!p53_answer_signed_soa_handoff(r->image, q))
		return;
	handoff_fill(&ev, frame, pkt, q);
	ev.soa_query = 1;
	handoff_send(w, &ev);
}

/*
 * The UDP checksum (RFC 768; RFC 1122 §4.1.3.4: discard a datagram whose checksum is wrong):
 * trust the port's verdict when it gave one, check in software when it did not. NONE means
 * the port verified the data though the field in the packet is not filled in (virtio passes
 * on a guest's partial checksum that way), so software would wrongly refuse it.
 */
static inline bool udp_csum_bad(const struct rte_mbuf *m, const uint8_t *frame,
				const struct p53_pkt *pkt)
{
	uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	if (f == RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN)
		return !p53_pkt_udp_csum_ok(frame, pkt);
	return f == RTE_MBUF_F_RX_L4_CKSUM_BAD;
}

/*
 * A frame that is not a UDP/53 query to us. In dpdk mode (a reason in exc_mask) it goes to the
 * exception thread, which writes it to the kernel's tap; that never waits: what does not fit
 * in the bounded ring is dropped and counted, so a flood of ARP, ICMP or TCP costs a worker a
 * parse and a ring slot, never a stall. Otherwise it is freed and counted. Out of line, one
 * frame at a time: with this branch inline in burst() (and a per-burst array of exception
 * frames) the DNS path cost 4 to 6 more instructions per query (replay --callgrind); out of
 * line it costs none.
 */
static __rte_noinline void not_ours(struct p53_worker *w, struct rte_mbuf *m, enum p53_pkt_drop d)
{
	if (w->exc_mask & (1u << d)) {
		if (rte_ring_sp_enqueue(w->exc_out, m) == 0) {
			w->stats.exc_queued++;
			return;
		}
		w->stats.exc_full++;
	} else {
		w->stats.drop[d]++;
	}
	rte_pktmbuf_free(m);
}

#define FRAME_DROPPED 0xff /* in `ms`: the frame was freed in pass 1 */
#define FRAME_DECLINED 0xfe /* read by p53_fast_frame, whose answer declined: P53_MSG_OK */
#define FRAME_FAST    0xfd /* in `ms`: read by p53_fast_parse (fastpath.h), P53_MSG_OK */
#define FRAME_READ4   0xfc /* read by p53_fast_read (a large image), IPv4: P53_MSG_OK */
#define FRAME_READ6   0xfb /* the same, IPv6; the lowest: below it, a p53_msg_status */

/* A frame whose question is looked up in the image (the prefetch passes' frames). */
static inline int frame_asks(uint8_t st)
{
	return st == P53_MSG_OK || (uint8_t)(st - FRAME_READ6) <= FRAME_FAST - FRAME_READ6;
}
#ifndef P53_PREFETCH_DEPTH
/* Links of the lookup chain prefetched across a burst: 1 slot, 2 (3) the node's block (the
 * node, its owner name and first RRset header: one link since image format 9, the node in its
 * block), 4 RDATA. Each link measured faster than the one before it on the 1M-record zone
 * (docs/BENCHMARKS.md, "Big zone: prefetching"); a build may set fewer to compare. */
#define P53_PREFETCH_DEPTH 4
#endif
#ifndef P53_PREFETCH_PROBES
/* Slots prefetch_chain() looks at for a name: its home slot and the next ones (the lookup's
 * linear probing), up to an empty slot. 1 follows the home slot only (main before round 19:
 * the block of about a quarter of the 1M-record zone's names then went unprefetched). */
#define P53_PREFETCH_PROBES 8
#endif

/*
 * On a large image each lookup is a chain of dependent cache misses: name-index slot, then
 * the node's block (image.h, Co-location): the node, its owner name right after it, RRset
 * headers and RDATA, the first RRset's right after the name. The slot holds the block's
 * offset, so the block's first lines are prefetched from the slot, their span from the
 * query name's length (the node's name has it when it matches). A large image has no RRset
 * checksum sums (conf->sums, replica.h), which were one more miss: the reply sums the records
 * written. Pass 1 of burst() prefetched every frame's slot; each pass here reads what the
 * previous one brought in and prefetches the next link for the whole burst, so the misses of
 * 32 frames overlap instead of queueing one frame at a time. A name, RRset header or RDATA that crosses a cache line gets both lines.
 * The name's slot is found as the lookup finds it (slot_of()): a block not prefetched is a
 * miss the answer pass waits for, one frame at a time.
 */
static inline void prefetch_span(const void *p, uint32_t len)
{
	rte_prefetch0(p);
	if ((((uintptr_t)p & 63) + len) > 64)
		rte_prefetch0((const uint8_t *)p + len - 1);
}

/*
 * The slot of a name with this hash, or 0: its home slot or one of the next ones, as the
 * lookup probes them (linear probing), up to an empty slot or P53_PREFETCH_PROBES. At the
 * index's load (1.25 to 2 slots a name) a name lies past its home slot often (a quarter of
 * the 1M-record zone's answers), mostly in the same line, which the parse pass prefetched.
 */
static inline uint64_t slot_of(const uint64_t *slots, uint32_t mask, uint32_t hash)
{
	uint32_t j = hash & mask;
	uint64_t s = slots[j];

	for (unsigned int p = 1; p < P53_PREFETCH_PROBES && s != 0 && (uint32_t)(s >> 32) != hash; p++) {
		j = (j + 1) & mask;
		s = slots[j];
	}
	return s != 0 && (uint32_t)(s >> 32) == hash ? s : 0;
}

/* `fd` (not NULL: the passes of read frames, whose answer takes them): each frame's node and
 * RRset found on the way (fastpath.h p53_fast_found), for the answer not to look them up. */
static inline __attribute__((always_inline)) void prefetch_chain(const void *img,
								  const struct p53_query *q,
								  const uint8_t *ms, uint16_t n,
								  struct p53_fast_found *fd)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	const uint64_t *slots = p53_image_slots(img);
	const struct p53_image_node *node[P53_BURST];

	for (uint16_t i = 0; i < n; i++) {
		node[i] = NULL;
		if (!frame_asks(ms[i]))
			continue;
		uint64_t s = slot_of(slots, h->hash_mask, q[i].hash);
		if (s != 0) {
			node[i] = p53_image_slot_node(img, s);
			/* The node, the name, the first RRset's header after it and its first
			   record (an A record: 16 bytes) */
			const uint8_t *nm = p53_image_node_name(img, node[i]);
			uint32_t hot = (uint32_t)(p53_image_rrset_at((uintptr_t)(nm + q[i].qname_len)) -
						  (uintptr_t)node[i]);
			prefetch_span(node[i], hot + (uint32_t)sizeof(struct p53_image_rrset) + 16u);
		}
	}
#if P53_PREFETCH_DEPTH >= 4
	for (uint16_t i = 0; i < n; i++) {
		uint32_t rsi;
		if (fd != NULL)
			fd[i].node = node[i];
		if (node[i] == NULL)
			continue;
		const struct p53_image_rrset *rs = p53_image_node_find(img, node[i], q[i].qtype,
								       fd != NULL ? &rsi : NULL);
		if (fd != NULL) {
			fd[i].rs = rs;
			fd[i].rsi = rsi;
		}
		if (rs == NULL)
			continue;
		prefetch_span(p53_image_rdata(img, rs), rs->rdata_len);
	}
#else
	for (uint16_t i = 0; fd != NULL && i < n; i++)
		fd[i].node = NULL;      /* no RRset found: the answer looks the name up */
#endif
}

#ifndef P53_PREFETCH_PIPE
#define P53_PREFETCH_PIPE 0
#endif
#if P53_PREFETCH_PIPE > 0
/* The pipelined schedule (P53_PREFETCH_PIPE = D > 0, build time; 0, the default, is the
 * whole-burst passes of prefetch_chain): while frame i is answered, frame i+D's RDATA, frame
 * i+2D's owner name and RRset header and frame i+3D's node are prefetched, so each link has D
 * answers of lead time instead of one pass over the burst. Measured no better than the passes
 * on the 1M-record zone (docs/BENCHMARKS.md, "Big zone: page size and prefetch schedule"). */
static inline const struct p53_image_node *pipe_node(const void *img, const uint64_t *slots,
						     uint32_t mask, const struct p53_query *q,
						     uint8_t ms)
{
	if (!frame_asks(ms))
		return NULL;
	uint64_t s = slot_of(slots, mask, q->hash);
	if (s == 0)
		return NULL;
	const struct p53_image_node *nd = p53_image_slot_node(img, s);
	rte_prefetch0(nd);
	return nd;
}

static inline void pipe_name(const void *img, const struct p53_image_node *nd)
{
	if (nd == NULL)
		return;
	rte_prefetch0(p53_image_node_name(img, nd));
	rte_prefetch0(p53_image_node_first(img, nd));
}

static inline void pipe_rdata(const void *img, const struct p53_image_node *nd, uint16_t qtype)
{
	if (nd == NULL)
		return;
	const struct p53_image_rrset *rs = p53_image_node_find(img, nd, qtype, NULL);
	if (rs != NULL)
		rte_prefetch0(p53_image_rdata(img, rs));
}
#endif

/* Answer one parsed frame in place; NULL when it was freed instead. With a guard, cookies
 * and RRL are checked around the answer (guard.h) and may drop it or send a small reply. */
static inline __attribute__((always_inline)) struct rte_mbuf *reply(struct p53_worker *w, const struct p53_replica *r,
				     const struct p53_guard *g, const struct p53_guard_now *now,
				     struct rte_mbuf *m, const struct p53_pkt *pkt,
				     struct p53_query *q, uint8_t st, uint64_t keep)
{
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
	enum p53_msg_status ms = st >= FRAME_READ6 ? P53_MSG_OK : (enum p53_msg_status)st;
	uint16_t rlen;
	size_t flen;

	/* The response may grow into the tailroom; the first byte past it is not ours. */
	uint32_t room = (uint32_t)rte_pktmbuf_data_len(m) - pkt->dns_off + rte_pktmbuf_tailroom(m);
	uint16_t cap = room > UINT16_MAX ? UINT16_MAX : (uint16_t)room;
	/* The fast parse's frames (a QUERY without a COOKIE): the fast answer unless RRL is on. */
	if (st == FRAME_FAST && (g == NULL || !g->rrl.on)) {
		uint64_t tail;
		rlen = p53_fast_answer_sum(r->image, &r->conf, frame + pkt->dns_off, cap, &w->stats.ans,
					   q, &tail);
		if (likely(rlen != 0) && w->tx_offload == 0) {
			flen = p53_fast_reply_sum(frame, pkt, rlen, q, keep, tail);
			goto sent;
		}
		if (rlen == 0) {
			p53_fast_complete(q);   /* what the fast parse left unfilled */
			rlen = p53_answer_parsed(r->image, &r->conf, frame + pkt->dns_off, cap,
						 &w->stats.ans, q, ms);
		}
	} else if (st == FRAME_DECLINED) {
		/* p53_fast_frame() declined it: the general responder, on what it left. */
		p53_fast_complete(q);
		rlen = p53_answer_parsed(r->image, &r->conf, frame + pkt->dns_off, cap,
					 &w->stats.ans, q, ms);
	} else if (st == FRAME_FAST) {
		p53_fast_complete(q);           /* RRL on: the guard reads the whole query */
		rlen = p53_guard_answer(g, g->tables[w->index], &w->stats.guard, r->image, &r->conf,
					frame + pkt->dns_off, cap, &w->stats.ans, q, ms, pkt->src_addr,
					pkt->ipv6, now);
	} else if (unlikely(ms == P53_MSG_OK && P53_OPCODE(q->flags) == P53_OPCODE_NOTIFY))
		rlen = notify(w, r, frame, cap, pkt, q);
	/* The guard only when it has something to do for this query: RRL, or a cookie to check. */
	else if (g != NULL && (g->rrl.on || (q->cookie && g->cookies)))
		rlen = p53_guard_answer(g, g->tables[w->index], &w->stats.guard, r->image, &r->conf,
					frame + pkt->dns_off, cap, &w->stats.ans, q, ms, pkt->src_addr,
					pkt->ipv6, now);
	else {
		/* The common shape first (fastpath.h); what it declines, the general responder. The
		 * frame was read by the general checks here (the fast parse's are above). */
		rlen = ms == P53_MSG_OK ? p53_fast_answer(r->image, &r->conf, frame + pkt->dns_off,
							  cap, &w->stats.ans, q) : 0;
		if (rlen == 0)
			rlen = p53_answer_parsed(r->image, &r->conf, frame + pkt->dns_off, cap,
						 &w->stats.ans, q, ms);
	}
	if (rlen == 0) {
		if (unlikely(q->tsig) && ms == P53_MSG_OK)
			signed_soa(w, r, frame, pkt, q);
		w->stats.no_answer++;
		rte_pktmbuf_free(m);
		return NULL;
	}
	flen = p53_pkt_reply(frame, pkt, rlen, w->tx_offload);
sent:
	m->data_len = (uint16_t)flen;
	m->pkt_len = (uint32_t)flen;
	if (w->tx_offload != 0) {
		m->l2_len = pkt->l3_off;
		m->l3_len = (uint16_t)(pkt->l4_off - pkt->l3_off);
		m->ol_flags = (pkt->ipv6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM) |
			      RTE_MBUF_F_TX_UDP_CKSUM;
	}
	w->stats.answered++;
	return m;
}

/* Answer a frame of the answer pass (a large image): one p53_fast_read() read, by
 * p53_fast_write() from what the prefetch passes found, `fd` (what it declines, the general
 * responder), any other by reply(). `fc` NULL (a constant in burst()): no frame was read so. */
static inline __attribute__((always_inline)) struct rte_mbuf *answer(struct p53_worker *w,
				      const struct p53_replica *r, const struct p53_guard *g,
				      const struct p53_guard_now *now, const struct p53_fast_ctx *fc,
				      struct rte_mbuf *m, struct p53_pkt *pkt, struct p53_query *q,
				      uint8_t st, uint64_t keep, const struct p53_fast_found *fd)
{
	if (fc != NULL && (st == FRAME_READ4 || st == FRAME_READ6)) {
		/* room: the data and the tailroom, i.e. the buffer after the headroom */
		int k = p53_fast_write(fc, q, rte_pktmbuf_mtod(m, uint8_t *), st == FRAME_READ6 ? 2 : 1,
				       (uint32_t)(uint16_t)(m->buf_len - rte_pktmbuf_headroom(m)), keep,
				       pkt, fd);
		if (likely(k > P53_FAST_DECLINED)) {
			m->data_len = (uint16_t)k;
			m->pkt_len = (uint32_t)k;
			w->stats.answered++;
			return m;
		}
		st = FRAME_DECLINED;
	}
	return reply(w, r, g, now, m, pkt, q, st, keep);
}

/* The general checks of a frame the fast parse did not read: its p53_msg_status, or
 * FRAME_DROPPED (freed, counted). */
static inline __attribute__((always_inline)) uint8_t checks(struct p53_worker *w,
							     const struct p53_replica *r,
							     struct rte_mbuf *m, struct p53_pkt *pkt,
							     struct p53_query *q)
{
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
	enum p53_pkt_drop d = p53_pkt_parse(frame, rte_pktmbuf_data_len(m), pkt);

	if (d == P53_PKT_OK)
		d = p53_pkt_for_us(frame, pkt, w->mac, &r->addrs);
	if (d == P53_PKT_OK && udp_csum_bad(m, frame, pkt))
		d = P53_PKT_DROP_UDP_CSUM;
	if (d != P53_PKT_OK) {
		not_ours(w, m, d);      /* dropped, or the kernel's: ARP, ND, ICMP, TCP... */
		return FRAME_DROPPED;
	}
	uint8_t st = (uint8_t)p53_msg_parse(frame + pkt->dns_off, pkt->dns_len, q);
	q->src = pkt->src_addr;
	q->src_v6 = pkt->ipv6;
	return st;
}

/* A large image's later passes: the lookup chain prefetched for the burst (prefetch_chain,
 * or the pipelined schedule), then each frame answered (answer()), in order. */
static inline __attribute__((always_inline)) uint16_t
chain_answer(struct p53_worker *w, const struct p53_replica *r, const struct p53_guard *g,
	     const struct p53_guard_now *now, const struct p53_fast_ctx *fc,
	     struct rte_mbuf **pkts, struct p53_pkt *pkt, struct p53_query *q, const uint8_t *ms,
	     const uint64_t *keep, uint16_t n, struct rte_mbuf **out, uint16_t n_out)
{
	const void *img = r->image;
#if P53_PREFETCH_PIPE > 0
	const uint64_t *slots = p53_image_slots(img);
	uint32_t mask = p53_image_hdr(img)->hash_mask;
	enum { D = P53_PREFETCH_PIPE };
	const struct p53_image_node *node[P53_BURST];
	for (int k = 0; k < (int)n + 3 * D; k++) {
		int i = k;
		if (i < n)
			node[i] = pipe_node(img, slots, mask, &q[i], ms[i]);
		i = k - D;
		if (i >= 0 && i < n)
			pipe_name(img, node[i]);
		i = k - 2 * D;
		if (i >= 0 && i < n)
			pipe_rdata(img, node[i], q[i].qtype);
		i = k - 3 * D;
		if (i >= 0 && i < n && ms[i] != FRAME_DROPPED) {
			struct rte_mbuf *m = answer(w, r, g, now, fc, pkts[i], &pkt[i], &q[i], ms[i],
						    keep[i], NULL);
			if (m != NULL)
				out[n_out++] = m;
		}
	}
	return n_out;
#else
	/* the read frames' nodes and RRsets, found by prefetch_chain() (fc NULL: none read) */
	struct p53_fast_found fd[P53_BURST];
#if P53_PREFETCH_DEPTH >= 2
	prefetch_chain(img, q, ms, n, fc != NULL ? fd : NULL);
#else
	for (uint16_t i = 0; fc != NULL && i < n; i++)
		fd[i].node = NULL;
#endif
	for (uint16_t i = 0; i < n; i++) {
		if (ms[i] == FRAME_DROPPED)
			continue;
		struct rte_mbuf *m = answer(w, r, g, now, fc, pkts[i], &pkt[i], &q[i], ms[i], keep[i],
					    &fd[i]);
		if (m != NULL)
			out[n_out++] = m;
	}
	return n_out;
#endif
}

/*
 * A large image's first pass over the fast shape: frames read by p53_fast_read() (their
 * question lowered and hashed, the reply's sums kept), their name-index slot prefetched, in
 * order until one is not read (its outcome left to the caller's general checks). Returns the
 * frames read. The loop apart from burst()'s: it carries none of the general checks' state.
 */
static inline uint16_t read_run(const struct p53_fast_ctx *fc, const uint64_t *slots, uint32_t mask,
				struct rte_mbuf **pkts, uint16_t n, struct p53_query *q,
				uint64_t *keep, uint8_t *ms)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		if (i + 4 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
		int fam = 0;
		if (p53_mbuf_readable(m))
			fam = p53_fast_read(fc, &q[i], rte_pktmbuf_mtod(m, uint8_t *),
					    rte_pktmbuf_data_len(m), l4 == RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN,
					    &keep[i]);
		if (unlikely(fam == 0))
			break;
		ms[i] = fam == 2 ? FRAME_READ6 : FRAME_READ4;
		rte_prefetch0(slots + (q[i].hash & mask));
	}
	return i;
}

/*
 * A large image's burst with software checksums and no RRL: the fast shape read in the first
 * pass (p53_fast_read, in read_run()'s loop: no p53_pkt filled, the question lowered and
 * hashed, the reply's sums kept) and answered and replied to in the last (p53_fast_write)
 * from what the read kept, without reading the question again or reply()'s checks. Out of
 * burst(): a small image's one pass keeps none of its state.
 */
static __rte_noinline uint16_t passes(struct p53_worker *w, const struct p53_replica *r,
				      const struct p53_guard *g, const struct p53_guard_now *now,
				      const struct p53_fast_ctx *fc, struct rte_mbuf **pkts,
				      uint16_t n, struct rte_mbuf **out)
{
	struct p53_pkt pkt[P53_BURST];
	struct p53_query q[P53_BURST];
	uint8_t ms[P53_BURST];
	uint64_t keep[P53_BURST];
	const uint64_t *slots = p53_image_slots(r->image);
	uint32_t mask = p53_image_hdr(r->image)->hash_mask;

	if (fc == NULL)
		__builtin_unreachable();        /* burst()'s &fc: chain_answer() tests it no more */
	if (n == 0)
		return 0;
	for (uint16_t i = 0; i < n && i < 4; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (uint16_t i = 0; i < n; i++) {
		i = (uint16_t)(i + read_run(fc, slots, mask, pkts + i, (uint16_t)(n - i), q + i, keep + i,
					    ms + i));
		if (i == n)
			break;
		/* Not the fast shape (read_run() prefetched frame i + 4): the general checks. */
		struct rte_mbuf *m = pkts[i];
		ms[i] = FRAME_DROPPED;
		if (unlikely(m->nb_segs != 1)) {
			w->stats.multiseg++;
			rte_pktmbuf_free(m);
			continue;
		}
		ms[i] = checks(w, r, m, &pkt[i], &q[i]);
		if (frame_asks(ms[i]))
			rte_prefetch0(slots + (q[i].hash & mask));
	}
	return chain_answer(w, r, g, now, fc, pkts, pkt, q, ms, keep, n, out, 0);
}

/*
 * One burst. On an image above P53_PREFETCH_MIN_IMAGE in passes, in the manner of l3fwd: parse
 * every frame and question first and prefetch the name-index slot each will read; then, with
 * the slots in cache, prefetch the next links of the lookup chain (prefetch_chain); then
 * answer. On a large image each lookup is a chain of cache misses; this overlaps them across
 * the burst instead of paying them one packet at a time. With software checksums and no RRL
 * that is passes(). A smaller image stays in cache: each frame is parsed, answered and its
 * reply written in one pass, in the order received.
 */
static uint16_t burst(struct p53_worker *w, const struct p53_replica *r, const struct p53_guard *g,
		      const struct p53_guard_now *now, struct rte_mbuf **pkts, uint16_t n,
		      struct rte_mbuf **out)
{
	struct p53_pkt pkt[P53_BURST];
	struct p53_query q[P53_BURST];
	uint8_t ms[P53_BURST];
	uint64_t keep[P53_BURST];
	const void *img = r->image;
	uint16_t n_out = 0, later = 0;  /* frames left for the answer pass */
	/* The name-index slots, prefetched only for a large image: a small one stays in cache. */
	const uint64_t *slots = img != NULL && r->image_len > P53_PREFETCH_MIN_IMAGE ? p53_image_slots(img) : NULL;
	uint32_t mask = slots != NULL ? p53_image_hdr(img)->hash_mask : 0;
	/* Software checksums and no RRL: the fast shape without reply()'s checks; a small image
	   from the frame to the reply in one call (p53_fast_frame), a large one in passes(). */
	struct p53_fast_ctx fc;
	int direct = w->tx_offload == 0 && (g == NULL || !g->rrl.on) &&
		     p53_fast_ctx_init(&fc, w->mac, &r->addrs, img, &r->conf, &w->stats.ans) == 0;
	if (direct && slots != NULL)
		return passes(w, r, g, now, &fc, pkts, n, out);
	if (direct && w->qcache != NULL)
		p53_fast_ctx_cache(&fc, w->qcache);     /* the answer cache (qcache.h) */
	if (direct)
		p53_fast_ctx_nx(&fc, &w->nx);           /* name errors, from the last burst */

	for (uint16_t i = 0; i < n && i < 4; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (uint16_t i = 0; i < n; i++) {
		/* The common shape in one pass (fastpath.h), the frames in order until one is not
		   answered; that one, the checks below. */
		int k = P53_FAST_NOT_READ;
		if (direct) {
			uint16_t a = p53_fast_burst(&fc, pkts + i, (uint16_t)(n - i), out + n_out, q + i,
						    pkt + i, &k);
			w->stats.answered += a;
			n_out = (uint16_t)(n_out + a);
			i = (uint16_t)(i + a);
			if (i == n)
				break;
		}
		struct rte_mbuf *m = pkts[i];
		/* p53_fast_burst() prefetched frame i + 4 before it read frame i */
		if (!direct && i + 4 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		ms[i] = FRAME_DROPPED;
		if (unlikely(m->nb_segs != 1)) {
			w->stats.multiseg++;
			rte_pktmbuf_free(m);
			continue;
		}
		uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
		uint8_t st = k == P53_FAST_DECLINED ? FRAME_DECLINED : FRAME_FAST;
		uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
		if (k == P53_FAST_DECLINED) {
			/* answered below by the general responder */
		} else if (l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD || direct ||
			   !p53_fast_parse(frame, rte_pktmbuf_data_len(m), l4 == RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN,
					   w->mac, &r->addrs, &pkt[i], &q[i], &keep[i])) {
			st = checks(w, r, m, &pkt[i], &q[i]);
			if (st == FRAME_DROPPED)
				continue;
		}
		if (slots == NULL) {
			/* A small image: answered now, while the frame is in cache (no prefetch
			   pass to wait for). */
			m = reply(w, r, g, now, m, &pkt[i], &q[i], st, keep[i]);
			if (m != NULL)
				out[n_out++] = m;
			continue;
		}
		ms[i] = st;
		if (frame_asks(st))
			rte_prefetch0(slots + (q[i].hash & mask));
		later++;
	}
	if (later == 0)
		return n_out;
	/* A small image stays in cache: the later passes would only cost. */
	return chain_answer(w, r, g, now, NULL, pkts, pkt, q, ms, keep, n, out, n_out);
}

uint16_t p53_worker_burst(struct p53_worker *w, struct rte_mbuf **pkts, uint16_t n,
			  struct rte_mbuf **out)
{
	/* One replica and one guard for the whole burst: a swap takes effect at the next one. */
	const struct p53_replica *r = __atomic_load_n(&w->replica, __ATOMIC_ACQUIRE);
	const struct p53_guard *g = __atomic_load_n(&w->guard, __ATOMIC_ACQUIRE);
	struct p53_guard_now now = {0, 0};
	uint16_t n_out = 0;

	/* One clock reading per burst, for RRL and cookie timestamps. */
	if (g != NULL)
		p53_guard_clock(g, rte_rdtsc(), &now);
	for (uint16_t done = 0; done < n; done = (uint16_t)(done + P53_BURST)) {
		uint16_t k = (uint16_t)RTE_MIN(n - done, P53_BURST);
		n_out = (uint16_t)(n_out + burst(w, r, g, &now, pkts + done, k, out + n_out));
	}
	return n_out;
}

/*
 * Health canary: answer the queued query frames with the same burst code as NIC traffic, on
 * a twin worker (its own counters, this worker's replica), and hand the responses back
 * instead of transmitting them. Cold: a few frames per second, out of line.
 */
static __rte_noinline void canary(struct p53_worker *w)
{
	struct rte_mbuf *in[P53_BURST], *out[P53_BURST];
	struct p53_worker *t = w->canary;
	unsigned int n = rte_ring_sc_dequeue_burst(w->canary_in, (void **)in, P53_BURST, NULL);

	t->replica = __atomic_load_n(&w->replica, __ATOMIC_ACQUIRE);
	t->stats.rx += n;
	uint16_t k = p53_worker_burst(t, in, (uint16_t)n, out);
	unsigned int q = rte_ring_sp_enqueue_burst(w->canary_out, (void **)out, k, NULL);
	t->stats.tx += q;
	if (unlikely(q < k)) {
		t->stats.tx_fail += k - q;
		rte_pktmbuf_free_bulk(&out[q], k - q);
	}
}

/*
 * dpdk mode: transmit what the kernel sent on the exception interface, on this worker's own TX
 * queue (a queue is not shared between threads). One burst per loop iteration at most, so the
 * kernel's traffic can take only a bounded share of the worker. Cold, out of line.
 */
static __rte_noinline void exc_transmit(struct p53_worker *w)
{
	struct rte_mbuf *m[P53_BURST];
	unsigned int n = rte_ring_sc_dequeue_burst(w->exc_in, (void **)m, P53_BURST, NULL);
	uint16_t sent = rte_eth_tx_burst(w->port, w->queue, m, (uint16_t)n);

	w->stats.exc_tx += sent;
	if (unlikely(sent < n)) {
		w->stats.exc_tx_fail += n - sent;
		rte_pktmbuf_free_bulk(&m[sent], n - sent);
	}
}

int p53_worker_main(void *arg)
{
	struct p53_worker *w = arg;
	struct rte_mbuf *rx[P53_RX_MAX], *tx[P53_RX_MAX];
	uint16_t want = w->burst >= 1 && w->burst <= P53_RX_MAX ? w->burst : P53_BURST;
	unsigned int empty = 0;
	unsigned int sleep_us = IDLE_MIN_US;

	/* Idle sleeps should end when asked: the default 50 µs timer slack would add that much
	 * latency to the first packet after every idle period. One syscall, at start. */
	if (w->idle_adaptive)
		(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	w->nsec3 = p53_nsec3_cache_counters();
	if (w->qsbr != NULL) {
		rte_rcu_qsbr_thread_register(w->qsbr, w->index);
		rte_rcu_qsbr_thread_online(w->qsbr, w->index);
	}
	while (*w->stop == 0) {
		if (unlikely(w->stall)) {
			rte_pause();
			continue;
		}
		if (w->qsbr != NULL)
			rte_rcu_qsbr_quiescent(w->qsbr, w->index);
		if (unlikely(!rte_ring_empty(w->canary_in)))
			canary(w);
		if (w->exc_in != NULL && !rte_ring_empty(w->exc_in))
			exc_transmit(w);
		uint16_t n = rte_eth_rx_burst(w->port, w->queue, rx, want);
		w->stats.polls++;
		w->stats.heartbeat = rte_rdtsc();
		if (n == 0) {
			w->stats.idle_polls++;
			if (w->idle_adaptive && ++empty > w->idle_spin_polls) {
				/* Only when the queue is empty: back off so the core can be shared,
				 * offline so a reload does not wait for the sleep. */
				if (w->qsbr != NULL)
					rte_rcu_qsbr_thread_offline(w->qsbr, w->index);
				rte_delay_us_sleep(sleep_us);
				if (w->qsbr != NULL)
					rte_rcu_qsbr_thread_online(w->qsbr, w->index);
				if (sleep_us < w->idle_max_us)
					sleep_us = RTE_MIN(sleep_us * 2, w->idle_max_us);
			}
			continue;
		}
		empty = 0;
		sleep_us = IDLE_MIN_US;
		w->stats.rx += n;
		uint16_t n_out = p53_worker_burst(w, rx, n, tx);
		if (n_out == 0)
			continue;
		uint16_t sent = rte_eth_tx_burst(w->port, w->queue, tx, n_out);
		w->stats.tx += sent;
		if (unlikely(sent < n_out)) {
			/* Whoever does not hand an mbuf to the NIC frees it. */
			w->stats.tx_fail += (uint64_t)(n_out - sent);
			rte_pktmbuf_free_bulk(&tx[sent], n_out - sent);
		}
	}
	if (w->qsbr != NULL) {
		rte_rcu_qsbr_thread_offline(w->qsbr, w->index);
		rte_rcu_qsbr_thread_unregister(w->qsbr, w->index);
	}
	return 0;
}
