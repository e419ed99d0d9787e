/*
 * The fast path: the responder for the shape almost every query has, without the general
 * responder's set-up (answer.c).
 *
 * The shape: a QUERY with one question of class IN, no OPT or one OPT of version 0 with DO=0
 * and no options (so no NSID, ECS, COOKIE or keepalive), no TSIG, over UDP; and an answer
 * that is either an RRset owned by the query name that needs no compression and no
 * additional section (A, AAAA, TXT...), or a negative answer (NXDOMAIN below the closest
 * encloser, NODATA at the name) whose SOA names end in the zone's apex. Everything else
 * (CNAME, referral, DNAME, wildcard, steered RRsets, DNSSEC with DO=1, truncation, REFUSED,
 * CHAOS, errors) is declined and goes to the general responder, which gives the same bytes:
 * tests/unit/dataplane/test_fastpath.c runs both over the replay's query shapes and the fuzz
 * corpus and compares the responses byte for byte.
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
 *         the general responder reads nothing there for a query of this shape).
 * Thread-safe with per-caller stats; any lcore.
 */
uint16_t p53_fast_answer(const void *img, const struct p53_answer_conf *conf, uint8_t *msg,
			 uint16_t cap, struct p53_answer_stats *stats, const struct p53_query *q);

#endif /* P53_FASTPATH_H */
