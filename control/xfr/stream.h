/*
 * The messages of one outgoing zone transfer (RFC 5936 §2.2 for AXFR, RFC 1995 §4 for IXFR):
 * a sequence of record lists (segments: SOA, the zone, SOA; or SOA, then per IXFR step the
 * deletions and the additions, then SOA) cut into DNS messages of at most `cap` bytes, each
 * with the request's ID, QR and AA, the question in the first message only, records
 * uncompressed, and when a key is set a TSIG record on every message (RFC 8945 §5.3.1).
 * Pure wire work: no sockets, no image, no locks; the caller owns the segments' memory.
 * One stream belongs to one thread.
 */
#ifndef P53_XFR_STREAM_H
#define P53_XFR_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "control/xfr/rrs.h"
#include "control/xfr/tsig.h"

#define P53_XFR_MSG_MAX 65535   /* a TCP message (RFC 7766 §8: two-byte length) */
#define P53_XFR_MAX_SEGS 4096

struct p53_xfr_stream {
	uint8_t query[12 + 256 + 4];    /* the request's header and question */
	size_t qlen;
	const struct p53_rrs *segs[P53_XFR_MAX_SEGS];
	size_t n_segs;
	size_t seg, pos;                /* next record: segs[seg] at byte pos */
	uint64_t msgs, records;         /* sent so far */
	const struct p53_tsig_key *key; /* NULL: unsigned */
	uint8_t prior[P53_TSIG_MAC_MAX];/* the request's MAC, then the last one sent */
	uint16_t prior_len;
};

/**
 * Start a stream answering `query` (its header and question: qlen bytes).
 * @param key  sign with it (kept by pointer: must outlive the stream), or NULL
 * @param req_mac  the request's MAC when key is set
 * @return 0, or -1 when qlen does not fit.
 */
int p53_xfr_stream_init(struct p53_xfr_stream *s, const uint8_t *query, size_t qlen,
			const struct p53_tsig_key *key, const uint8_t *req_mac, uint16_t req_mac_len);

/** Append a segment (kept by pointer). @return 0 or -1 when there are too many. */
int p53_xfr_stream_add(struct p53_xfr_stream *s, const struct p53_rrs *seg);

/**
 * The next message into out (cap bytes, at most P53_XFR_MSG_MAX are used): as many whole
 * records as fit, signed when the stream has a key.
 * @param now  time signed (seconds since the epoch)
 * @return the message length, 0 when every record was sent, -1 on error (a record larger
 *         than a message, malformed segment, signing failed).
 */
long p53_xfr_stream_next(struct p53_xfr_stream *s, uint8_t *out, size_t cap, uint64_t now);

#endif /* P53_XFR_STREAM_H */
