/*
 * The fast path: the responder for the shape almost every query has, without the general
 * responder's set-up (answer.c).
 *
 * The shape: a QUERY with one question of class IN, no OPT or one OPT of version 0 with no
 * option or one valid EDNS Client Subnet option (so no NSID, COOKIE or keepalive), no TSIG,
 * over UDP; and an answer that is an RRset owned by the query name (or its wildcard's) that
 * needs no compression and no additional section (A, AAAA, TXT...); a steered RRset owned by
 * the query name (steer.h: the variant the published table picks for the ECS address or the
 * packet's source, with DO=1 its RRSIG; the ECS echoed with the SCOPE of the blocks
 * consulted, 0 for any other answer, RFC 7871 §7.2.1); a negative answer (NXDOMAIN below the closest
 * encloser, NODATA) whose SOA names end in the zone's apex; a referral whose NS targets end in
 * the cut or compress as answer.c would, with glue owned by those targets; or REFUSED for a
 * name no zone holds. With DO=1 in a signed zone: the RRset owned by the query name with its
 * RRSIGs (one memcpy, as answer.c), and a name error in an NSEC3 zone (the SOA and its RRSIGs,
 * then the NSEC3 RRsets of the proof, dnssec.c, with theirs: one NSEC3 hash per query).
 * Everything else (CNAME, DNAME, ANY, RRSIG, DS, steered RRsets at a wildcard, NODATA,
 * wildcard, NSEC and referral proofs with DO=1, truncation, CHAOS, errors) is declined and goes
 * to the general responder, which
 * gives the same bytes: tests/unit/dataplane/test_fastpath.c runs both over the replay's
 * query shapes and the fuzz corpus and compares the responses byte for byte.
 *
 * With an answer cache (qcache.h, p53_fast_ctx_cache()), p53_fast_frame() and p53_fast_burst()
 * answer a question seen before, byte for byte, from the worker's last answer to it, before
 * the name is walked; what they answer otherwise is stored there.
 *
 * The guard (cookies, RRL) is not consulted here: the worker takes the fast path only when
 * the guard has nothing to do for the query (guard.h; a query with a COOKIE is declined).
 *
 * Runs per packet on worker lcores: no allocation, no locks, no syscalls.
 */
#ifndef P53_FASTPATH_H
#define P53_FASTPATH_H

#include <stdint.h>

#include "dataplane/answer.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/pkt.h"

/**
 * Answer a parsed, well-formed (P53_MSG_OK) query in place when it has the fast shape.
 *
 * @param img    zone image, or NULL (declined)
 * @param conf   responder settings (a TCP conf, tcp_limit != 0, is declined)
 * @param msg    the query; the response on return, when answered
 * @param cap    bytes writable at msg
 * @param stats  per-worker counters, updated as p53_answer_parsed() would when answered
 * @param q      what p53_msg_parse() made of msg
 * @return the response length, or 0: declined, `stats` untouched, and the header and
 *         question of msg untouched (bytes after the question may have been written over:
 *         the general responder reads nothing there for a query of this shape but the ECS
 *         option, which is put back).
 * Thread-safe with per-caller stats; any lcore.
 */
uint16_t p53_fast_answer(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			 uint16_t cap, struct p53_answer_stats *stats, const struct p53_query *q);

/*
 * A zone's negative-answer SOA record (RFC 2308 §3: the SOA in authority, TTL min(SOA TTL,
 * MINIMUM)) as the fast path writes it, built once per replica by the control thread: the
 * owner and the MNAME and RNAME end in pointers to the apex inside the question, patched in
 * per query (three stores) instead of compressing the two names again.
 */
struct p53_fast_neg {
	uint8_t len;            /* bytes; 0: none, the fast path writes the record itself */
	uint8_t mptr, rptr;     /* where the MNAME's and the RNAME's apex pointers are */
	uint8_t labels;         /* the apex's labels (the pointers point at it in the question) */
	uint8_t bytes[92];      /* the owner pointer first */
	uint16_t sum;           /* RFC 1071 sum of `bytes` (from an even offset), the three
				   pointers counted as 0: the reply adds them per query */
	uint16_t mult;          /* what the pointer P adds to the sum, divided by P: 256 per
				   pointer at an even offset (its bytes swapped: times 256 modulo
				   0xffff), 1 per pointer at an odd one */
	/* A name error with EDNS, DO=0 and no ECS: the OPT record (answer.c put_opt())
	   follows the record in `bytes` with its payload size as 0, patched in per query, so
	   the copy writes both. */
	uint8_t olen;           /* len + 11 when the OPT fits in `bytes`, else 0 (written apart) */
	uint16_t osum;          /* `sum` with the OPT's bytes in it */
	uint16_t omult;         /* what the payload size adds to osum, divided by it: 1 or 256 */
};

/** How many entries p53_fast_neg_build() writes for `img`: one per zone. */
size_t p53_fast_neg_count(const void *img);

/**
 * Build the negative-answer templates of every zone of `img` into `t` (p53_fast_neg_count()
 * entries), for p53_answer_conf.neg. A zone whose SOA names do not end in the apex, or whose
 * record is longer than a template, gets len 0. Control thread, at publish; no allocation.
 */
void p53_fast_neg_build(const void *img, struct p53_fast_neg *t);

/*
 * Referral templates (RFC 1034 §4.3.2 step 3b): what the fast path's referral writer gives for
 * a delegation, built once per replica by the control thread, so a referral is one copy and a
 * few two-byte stores instead of compressing the NS targets and finding each glue owner again.
 * The compression pointers are the only bytes that depend on the query: each points either
 * into the question (at the cut or one of its ancestors) or into what the referral itself
 * wrote. The template holds them for a question that is the cut itself; a question with L
 * bytes of labels before the cut moves both by L, so each gets L added (and the checksum's
 * sum L times a per-template multiplier): by the copy itself, which adds L at a mask of the
 * pointers' low bytes when none carries, else one add per pointer. A
 * template is used only where the writer it stands for would give the same bytes (the size
 * limit leaves room for what the writer checks, the question's labels and the template's fit
 * answer.c's compression table); otherwise the writer runs, as without a template.
 */
#define P53_FAST_REF_MAX 16384u /* delegations that get a template (the first, in node order) */

/** Bytes p53_fast_ref_build() needs for `img` (an upper bound, with 128 bytes of padding after
 * the last template: the fast path copies a short template in 16-byte moves), or 0: no
 * template to build. */
size_t p53_fast_ref_size(const void *img);

/**
 * Build the referral templates of `img` into `buf` (`size` bytes, from p53_fast_ref_size()),
 * for p53_answer_conf.ref. A delegation the fast path would decline gets none. Control thread,
 * at publish; no allocation.
 */
void p53_fast_ref_build(const void *img, void *buf, size_t size);

/**
 * p53_fast_ref_size() and p53_fast_ref_build() for an image whose names, RDATA and additional
 * lists start with `prev`'s (p53_image_check_from() said so: an IXFR patch of prev),
 * `prev_buf` being prev's templates (built by either, for prev; NULL: none). The nodes looked
 * at are prev's cuts (the table lists them) and the nodes appended, not every node (every
 * node when the patch appended an NS RRset other than a zone apex's: a new cut). A delegation whose cut node, RRset
 * headers and glue nodes (with theirs) are prev's at the same indices gets prev's template
 * copied; the others (a glue address changed, added or removed; a changed cut) are made.
 * The same bytes as p53_fast_ref_size()/p53_fast_ref_build() (the padding after a template
 * aside). Control thread, at publish; no allocation.
 */
size_t p53_fast_ref_size_from(const void *img, const void *prev, const void *prev_buf);
void p53_fast_ref_build_from(const void *img, void *buf, size_t size, const void *prev,
			     const void *prev_buf);

/** How many delegations got a template in `buf` (built by p53_fast_ref_build()). */
uint32_t p53_fast_ref_count(const void *buf);

/*
 * Checksum sums of the pre-encoded records (RFC 1071), built once per replica by the control
 * thread, so the reply's UDP checksum adds a record set's sum instead of reading its bytes
 * again. Per RRset, three folded sums from an even offset, 16 bits each from the lowest: its
 * records; its records and the OPT the fast path writes after them with DO=0 (our payload
 * size is the replica's); its records, its RRSIGs and the OPT with DO=1. The negative and
 * referral templates carry their own (their pointers are added per query).
 */

/** Entries p53_fast_sum_build() writes for `img`: one per RRset (0: none). */
size_t p53_fast_sum_count(const void *img);

/** Build the RRset sums of `img` into `t` (p53_fast_sum_count() entries) for a replica whose
 * p53_answer_conf.edns_max_payload is `payload`, for p53_answer_conf.sums. Control thread, at
 * publish; no allocation. */
void p53_fast_sum_build(const void *img, uint16_t payload, uint64_t *t);

/** p53_fast_sum_build() for an image whose RDATA starts with `prev`'s (p53_image_check_from()
 * said so): an RRset whose header places its records and RRSIGs where prev's at the same
 * index did takes prev_t's entry (built for prev with the same payload); the others are
 * computed. */
void p53_fast_sum_build_from(const void *img, uint16_t payload, uint64_t *t, const void *prev,
			     const uint64_t *prev_t);

#define P53_FAST_NO_SUM UINT64_MAX /* p53_fast_answer_sum(): the reply sums what was written */

/**
 * p53_fast_answer() for a query p53_fast_parse() read (and nothing filled since), which takes
 * its shape as checked there; and *tail: the one's complement sum of what the response holds after the
 * question, as if it started at an even offset, when it is known without reading those bytes
 * again (a plain RRset, a negative or referral template, each with its OPT), else
 * P53_FAST_NO_SUM. For p53_fast_reply_sum().
 */
static inline uint16_t p53_fast_answer_sum(const void *img, const struct p53_answer_conf *conf,
					   uint8_t *msg, uint16_t cap, struct p53_answer_stats *stats,
					   const struct p53_query *q, uint64_t *tail);

/* p53_fast_answer_sum() for a query with an ECS option, and without (the common case, whose
 * code then saves no registers for the other). */
uint16_t p53_fast_answer_ecs(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			     uint16_t cap, struct p53_answer_stats *stats, const struct p53_query *q,
			     uint64_t *tail);
uint16_t p53_fast_answer_noecs(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			       uint16_t cap, struct p53_answer_stats *stats,
			       const struct p53_query *q, uint64_t *tail);

static inline uint16_t p53_fast_answer_sum(const void *img, const struct p53_answer_conf *conf,
					   uint8_t *msg, uint16_t cap, struct p53_answer_stats *stats,
					   const struct p53_query *q, uint64_t *tail)
{
	if (__builtin_expect(q->ecs, 0))
		return p53_fast_answer_ecs(img, conf, msg, cap, stats, q, tail);
	return p53_fast_answer_noecs(img, conf, msg, cap, stats, q, tail);
}

/**
 * Fill the fields of a query p53_fast_parse() read that it leaves for later (the counts,
 * trailing, TSIG, NSID, cookie, keepalive, EDNS version): after it, `q` is what
 * p53_msg_parse() gives, for the general responder or the guard. Any lcore.
 */
static inline void p53_fast_complete(struct p53_query *q)
{
	q->qdcount = 1;
	q->ancount = 0;
	q->nscount = 0;
	q->arcount = q->edns;
	q->trailing = 0;
	q->tsig = 0;
	q->nsid = 0;
	q->keepalive = 0;
	q->cookie = 0;
	q->edns_version = 0;
}

/**
 * Read a received frame of the fast shape in one pass: Ethernet II without a tag, IPv4
 * without options or IPv6 without extension headers, UDP to port 53, to our MAC and a
 * service address, the UDP checksum right (when `verify`; over IPv6 a zero one is always
 * declined, RFC 8200 §8.1: the general checks drop and count it), a QUERY with one question
 * and at most one OPT, without options or with one ECS option that edns_opt.c would accept
 * (an invalid one: the general parser, FORMERR), nothing after it; class IN, EDNS version 0,
 * a QTYPE that is not DS, RRSIG, OPT, 0 or 249..255 (the general path answers those). Fills
 * `pkt` as p53_pkt_parse() would, `q` as p53_msg_parse() would but for the fields
 * p53_fast_complete() fills (q->src pointing at pkt->src_addr, as the worker sets it), and
 * `keep`, the one's complement sum of what the reply keeps, for p53_fast_reply().
 *
 * @param verify  1: check the UDP checksum in software (the port gave no verdict); 0: the
 *                port verified it (the caller sends a frame the port found bad elsewhere)
 * @return 1 (IPv4: pkt's offsets 14, 34, 42), 2 (IPv6: 14, 54, 62), or 0: anything else (an IPv6 extension header, a VLAN tag, other records, any
 *         error): the caller runs the general checks, which count what they drop. Nothing
 *         is written to the frame.
 */
int p53_fast_parse(const uint8_t *frame, uint16_t len, int verify, const uint8_t mac[6],
		   const struct p53_pkt_addrs *addrs, struct p53_pkt *pkt, struct p53_query *q,
		   uint64_t *keep);

/**
 * p53_pkt_reply() for a frame p53_fast_parse() read and whose DNS response (dns_len bytes)
 * is written: the same frame, byte for byte, with the UDP checksum summed from `keep` and
 * only the bytes the response changed (the header and what follows the question), not
 * from the whole datagram again. Software checksums only (tx_offload 0).
 *
 * @return the new frame length.
 */
size_t p53_fast_reply(uint8_t *frame, const struct p53_pkt *pkt, uint16_t dns_len,
		      const struct p53_query *q, uint64_t keep);

/** p53_fast_reply() with the sum of what follows the question known (`tail`, from
 * p53_fast_answer_sum(); P53_FAST_NO_SUM: summed here): the same frame. */
size_t p53_fast_reply_sum(uint8_t *frame, const struct p53_pkt *pkt, uint16_t dns_len,
			  const struct p53_query *q, uint64_t keep, uint64_t tail);

/* p53_fast_frame()'s outcomes; above P53_FAST_DECLINED: answered, the reply's frame length. */
enum { P53_FAST_NOT_READ = 0, P53_FAST_DECLINED, P53_FAST_ANSWERED };

/** What p53_fast_frame() reads for every frame of a burst, set once per burst (worker.c,
 * p53_fast_ctx_init()): one pointer instead of five arguments per frame, and what the answer
 * would otherwise compute per query from the replica's configuration. */
/*
 * What a burst's name errors leave for the next ones (p53_fast_frame(); a random-subdomain flood
 * asks below the same encloser every query):
 * - `ce`: the closest encloser the last search found, which the next search compares with its
 *   candidates before it hashes and looks them up (the deeper ones were looked up and missed,
 *   so a candidate with its name is the deepest that exists).
 * - the last name error's reply after its question (the SOA and the OPT: EDNS, DO=0, no
 *   ECS), for a question of the same length whose parent is `at`: the question missed, so
 *   `at` is its closest encloser and the reply is the same bytes (the SOA's pointers point at
 *   the apex in the question, at the same offset). `qlen` 0: none.
 * - `flen`: the length of an IPv4 frame with a question of that length and an OPT without
 *   options (Ethernet, IPv4 without options, UDP, the message with its OPT last), whichever
 *   family the kept one came in, when its parent is `at`: p53_fast_burst() then tries each
 *   frame of that length, and each IPv6 frame of 20 bytes more (no extension header), whose
 *   first label has `flab` bytes as one more such question first (fastpath.c nx_frame(),
 *   nx_frame6()). 0: none.
 * - `pat`, `adelta`, `pmult`, `psum`: where the kept tail points at the apex in the question
 *   (the SOA's owner, and its MNAME and RNAME when they end there), so that an IPv4 frame
 *   whose first label has another length (its frame length as much longer or shorter) is
 *   answered from the same tail with those pointers moved (nx_frame_any()). `pmult` 0: the
 *   tail has another pointer, none kept.
 */
#define P53_FAST_NX_TAIL 96     /* bytes of a reply's tail kept at most (a template's fit) */
struct p53_fast_nx {
	const void *img;                        /* kept for this image (p53_fast_ctx_nx()), */
	uint64_t gen;                           /* of this generation, */
	uint16_t ours;                          /* and our payload size */
	const struct p53_image_node *ce;
	const struct p53_image_node *at;        /* the encloser of the kept reply */
	uint64_t sum;                           /* the tail's sum (RFC 1071, an even offset) */
	uint8_t qlen;                           /* its question's name length; 0: none */
	uint8_t len;                            /* the tail's bytes */
	uint16_t flen;                          /* an IPv4 frame's length for it; 0: none */
	uint8_t flab;                           /* its question's first label's length */
	uint8_t pat[3];                         /* the tail's pointers to the apex, */
	uint16_t adelta;                        /* their offset less the first label's length, */
	uint16_t pmult;                         /* their sum's multiplier (0: none kept) */
	uint64_t psum;                          /* and the tail's sum with them 0 */
	uint8_t tail[P53_FAST_NX_TAIL];
};

struct p53_fast_ctx {
	const uint8_t *mac;                     /* the port's address (6 bytes) */
	const struct p53_pkt_addrs *addrs;
	const void *img;                        /* not NULL */
	const struct p53_answer_conf *conf;     /* UDP's: tcp_limit 0 */
	struct p53_answer_stats *st;
	uint16_t ours;                          /* our EDNS payload size (p53_our_payload()) */
	struct p53_qcache *qc;                  /* the worker's answer cache, or NULL: none */
	uint64_t gen;                           /* the image's generation (the cache's key) */
	/* What the last name errors answered through this context left (of `img`: a context
	   lives for one burst; struct p53_fast_nx). `nx` points at `nx_last`, which the fast
	   path writes through a const context; p53_fast_ctx_init() sets both (a copy of the
	   context points at the original's). */
	struct p53_fast_nx *nx;
	struct p53_fast_nx nx_last;
};

/**
 * Fill a p53_fast_ctx for p53_fast_frame() and p53_fast_burst(). Any lcore; no allocation.
 *
 * @return 0, or -EINVAL when the fast answer cannot answer with this replica (no image, or
 *         conf->tcp_limit set): do not call p53_fast_frame() or p53_fast_burst() with `c`
 *         then (the general path answers, as the fast answer would have declined).
 */
int p53_fast_ctx_init(struct p53_fast_ctx *c, const uint8_t *mac, const struct p53_pkt_addrs *addrs,
		      const void *img, const struct p53_answer_conf *conf,
		      struct p53_answer_stats *st);

struct p53_qcache;

/**
 * Have p53_fast_frame() and p53_fast_burst() keep what name errors leave in `nx` (the
 * worker's, which outlives the context) instead of the context: what it holds is used when
 * it was kept for the context's image, of the same generation (not 0: a published image;
 * an image of generation 0 keeps the context's own) and our payload size, else it is
 * emptied first. Call after p53_fast_ctx_init(); the worker's lcore only.
 */
void p53_fast_ctx_nx(struct p53_fast_ctx *c, struct p53_fast_nx *nx);

/**
 * Have p53_fast_frame() and p53_fast_burst() answer from `qc` (qcache.h; NULL: none) what
 * it holds for the image of `c`, and store there what they answer. An image of generation 0
 * (never published: tools, tests) is not cached. Call after p53_fast_ctx_init(); the worker's
 * lcore only (the cache is not shared).
 */
void p53_fast_ctx_cache(struct p53_fast_ctx *c, struct p53_qcache *qc);

/**
 * A received frame from the frame to the reply in one pass, for a worker without checksum
 * offload on transmit: p53_fast_parse(), p53_fast_answer_sum() and p53_fast_reply_sum() in
 * one function (nothing filled and read back between them but what the answer needs).
 *
 * @param room   bytes writable from the frame's start (the frame, then the tailroom)
 * @return above P53_FAST_DECLINED (at least P53_FAST_ANSWERED): the reply is in place, that
 *         many bytes; P53_FAST_DECLINED: the frame was read (`pkt` and `q` as
 *         p53_fast_parse() fills them) but the fast answer declined (as p53_fast_answer()
 *         declines: the general responder gives the answer, after p53_fast_complete());
 *         P53_FAST_NOT_READ: not the fast shape, nothing written.
 */
int p53_fast_frame(const struct p53_fast_ctx *c, struct p53_query *q, uint8_t *frame, uint16_t len,
		   uint32_t room, int verify, struct p53_pkt *pkt);

struct rte_mbuf;

/**
 * p53_fast_frame() over the frames of a burst, in order, until one is not answered: the loop
 * and the call per frame in one function (worker.c, a small image). Frame i's query and packet
 * go to q[i] and pkt[i], its answered mbuf (data and packet length set) to out[i]. The
 * answered frames' `queries` and `msg[P53_MSG_OK]` counts are added once, at the end.
 *
 * @return the frames answered, i; when i < n, *k is frame i's p53_fast_frame() outcome
 *         (P53_FAST_NOT_READ also for a frame of more than one segment or with a bad L4
 *         checksum flag: the caller's checks judge it)
 */
uint16_t p53_fast_burst(const struct p53_fast_ctx *c, struct rte_mbuf **pkts, uint16_t n,
			struct rte_mbuf **out, struct p53_query *q, struct p53_pkt *pkt, int *k);

/**
 * p53_fast_frame() in two calls, for a burst read in passes (worker.c, a large image, whose
 * prefetch passes run between them): p53_fast_read() reads the frame as p53_fast_frame()
 * does (the question lowered and hashed, `keep` as p53_fast_parse() gives it, `pkt` not
 * filled, q->src pointing into the frame) and returns 1 (IPv4), 2 (IPv6) or 0 (not the fast
 * shape, nothing written: the general checks judge it). No answer cache.
 */
int p53_fast_read(const struct p53_fast_ctx *c, struct p53_query *q, const uint8_t *frame,
		  uint16_t len, int verify, uint64_t *keep);

struct p53_image_node;
struct p53_image_rrset;

/*
 * What the prefetch passes found for a question read by p53_fast_read() (worker.c
 * prefetch_chain()), for its answer not to look it up again: the node of the first name-index
 * slot, in the lookup's probe order, whose hash is the question's (its name not compared: the
 * answer compares it, and on a mismatch looks the name up), and that node's RRset of the
 * question's type (p53_image_node_find(): NULL, none) and its index. node NULL: nothing
 * found, the answer looks the name up.
 */
struct p53_fast_found {
	const struct p53_image_node *node;
	const struct p53_image_rrset *rs;
	uint32_t rsi;
};

/**
 * The answer and reply of a frame p53_fast_read() read (`fam` its return, `keep` its sum,
 * the frame and `q` untouched since): above P53_FAST_DECLINED, the reply is in place, that
 * many bytes, and the query counted; P53_FAST_DECLINED: the fast answer declined (as
 * p53_fast_answer() declines), `pkt` is filled as p53_fast_parse() fills it and q->src
 * points at it: the general responder answers, after p53_fast_complete().
 *
 * @param room   bytes writable from the frame's start (the frame, then the tailroom)
 * @param found  what the prefetch passes found in the replica's image for q (see above), or
 *               NULL: the answer looks the name up
 */
int p53_fast_write(const struct p53_fast_ctx *c, struct p53_query *q, uint8_t *frame, int fam,
		   uint32_t room, uint64_t keep, struct p53_pkt *pkt,
		   const struct p53_fast_found *found);

/*
 * The steps of the burst path (p53_fast_burst(), p53_fast_read()/p53_fast_write()), counted in
 * p53_fast_steps[] only in a build of fastpath.c with P53_FAST_STEPS defined (tests/fuzz/
 * fuzz_burst.c: each must be reached by its corpus); pop53d counts none.
 */
enum p53_fast_step {
	P53_FAST_STEP_MBUF_QC,          /* fast_mbuf_qc(): an IPv4 frame, the cache's burst step */
	P53_FAST_STEP_MBUF_QC6,         /* fast_mbuf_qc6(): the same, IPv6 */
	P53_FAST_STEP_QC_HIT,           /* a question answered from the answer cache */
	P53_FAST_STEP_QC_STORE,         /* an answer stored in it */
	P53_FAST_STEP_QC_ECS,           /* qc_ecs_answer(): a hit with ECS */
	P53_FAST_STEP_QC_STEERED,       /* qc_steered_answer(): a steered entry's hit */
	P53_FAST_STEP_QC_PICK_MISS,     /* qc_pick_miss(): ...whose pick the pick cache has not */
	P53_FAST_STEP_FRAME,            /* fast_frame(): the step without the cache */
	P53_FAST_STEP_FRAME_QC,         /* fast_frame_qc(): the cache's frame step */
	P53_FAST_STEP_BURST_NX,         /* fast_burst_nx(): a burst with a kept name error's frame length */
	P53_FAST_STEP_NX_FRAME,         /* nx_frame() tried */
	P53_FAST_STEP_NX_FRAME_ANSWER,  /* ...and answered with the kept reply itself */
	P53_FAST_STEP_NX_ANY,           /* nx_frame_any() tried (a first label of any length) */
	P53_FAST_STEP_NX_ANY6,          /* nx_frame_any6() tried (the same, IPv6) */
	P53_FAST_STEP_NX_KEEP,          /* nx_keep(): a name error's reply kept */
	P53_FAST_STEP_NX_PUT,           /* fast_answer(): a name error answered with the kept reply */
	P53_FAST_STEP_CE,               /* the kept closest encloser matched a candidate */
	P53_FAST_STEP_RUN_SKIP,         /* fast_burst_run(): a stretch not looked up (a run of misses) */
	P53_FAST_STEP_RUN_LOOK,         /* ...the one question in P53_QCACHE_RUN looked up */
	P53_FAST_STEP_RUN_KEPT,         /* ...answered from the kept name error instead (qc_kept()) */
	P53_FAST_STEP_READ,             /* p53_fast_read(): a frame of the large image's passes read */
	P53_FAST_STEP_WRITE,            /* p53_fast_write(): ...and answered */
	P53_FAST_STEP__MAX
};
extern uint64_t p53_fast_steps[P53_FAST_STEP__MAX];

#endif /* P53_FASTPATH_H */
