/*
 * Serving AXFR (RFC 5936) and IXFR (RFC 1995) to other servers: a PoP feeding another
 * (tiered distribution). The TCP threads (control/tcp/conn.c) hand every transfer request
 * here; the answer is a refusal (REFUSED, NOTAUTH with the TSIG error), a single SOA (the
 * client is up to date), or a stream of messages (stream.h) sent as the socket drains.
 *
 * Who may transfer what is in a table the control thread rebuilds after every config or zone
 * change (p53_xfr_serve_publish): per zone its ACL (`transfer:`, docs/CONFIG.md), the TSIG
 * keys, and references to the zone's journal steps (journal.h). TCP threads look it up under
 * its mutex (a few microseconds per transfer request; queries never touch it).
 *
 * The records come from the image the TCP thread reads under RCU: the request copies the
 * zone's records out of it in one pass (p53_xfr_serve_request), so the stream sent to a slow
 * client holds no RCU reader and no reload waits for it. Memory: one copy of the zone per
 * AXFR in progress (about the zone's wire size); IXFR holds references to journal steps only.
 */
#ifndef P53_XFR_SERVE_H
#define P53_XFR_SERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/tcp/tcp_stats.h"
#include "control/xfr/journal.h"
#include "control/xfr/stream.h"
#include "dataplane/dnsmsg.h"

struct p53_config;
struct p53_xfr;
struct p53_xfr_serve_table;

struct p53_xfr_serve {
	pthread_mutex_t lock;
	struct p53_xfr_serve_table *cur; /* under lock; NULL: nothing may be transferred */
	bool init;
};

/* One transfer in progress on a TCP connection. */
struct p53_xfr_out {
	struct p53_xfr_stream st;
	struct p53_tsig_key key;        /* copy: the config may be reloaded meanwhile */
	struct p53_rrs soa, body;       /* copies out of the image */
	struct p53_jstep **steps;       /* IXFR: references */
	size_t n_steps;
	char what[80];                  /* "AXFR of example.com. serial 7" for the log */
	bool soa_query;                 /* a signed SOA query answered this way: not logged */
	enum p53_xfr_served served;     /* what it counts as once sent; __MAX: not counted (SOA) */
	uint64_t start_ms;
};

/** A zeroed struct: nothing may be transferred until the first publish. */
void p53_xfr_serve_init(struct p53_xfr_serve *sv);

/**
 * Rebuild the table from the config (zones[].transfer, xfr.transfer) and the journals of the
 * secondary zones. On out of memory the old table stays. Control thread.
 */
void p53_xfr_serve_publish(struct p53_xfr_serve *sv, const struct p53_config *cfg,
			   const struct p53_xfr *x);

void p53_xfr_serve_fini(struct p53_xfr_serve *sv);

/**
 * Decide a transfer request (q parsed from msg, qtype AXFR or IXFR, opcode QUERY), from a
 * TCP thread inside its RCU read section (img: the image it reads, may be NULL). A signed SOA
 * query (qtype SOA with a TSIG record) is decided the same way and answered like an up-to-date
 * IXFR, the SOA alone, signed: it is how a downstream secondary (Knot, over TCP) checks the
 * serial before it transfers, and the workers know no TSIG keys.
 * @param out  a short answer (refusal), cap bytes
 * @param xo   set to the transfer to stream when the return is 0 and *out_len is 0
 * @return 0 (either *out_len > 0: send out, or *xo set), -1 out of memory (close).
 */
int p53_xfr_serve_request(struct p53_xfr_serve *sv, const void *img, const uint8_t *msg,
			  size_t len, const struct p53_query *q, int family, const uint8_t *peer,
			  uint8_t *out, size_t cap, size_t *out_len, struct p53_xfr_out **xo);

void p53_xfr_out_free(struct p53_xfr_out *o);

/** The IXFR request's serial (the SOA in its authority section). @return 0 or -1. */
int p53_xfr_ixfr_serial(const uint8_t *msg, size_t len, const struct p53_query *q,
			uint32_t *serial);

/** One zone's records out of an image: its SOA alone in soa, every other record in body. */
int p53_image_zone_rrs(const void *img, uint32_t zone, struct p53_rrs *soa, struct p53_rrs *body);

#endif /* P53_XFR_SERVE_H */
