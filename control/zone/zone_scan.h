/*
 * The fast path of the master-file loader (control/zone/zone_load.c): one line of RFC 1035 §5
 * text to wire bytes, for the shapes that make up nearly all of a big zone: an owner (a plain
 * name, '@' or blank), an optional decimal TTL, an optional class IN, and A, AAAA, NS, CNAME,
 * PTR, MX or TXT data, on one line, with an optional comment. Blank and comment-only lines
 * are taken too.
 *
 * It gives exactly what ldns gives for those lines (the loader's differential test and the
 * fuzz_zone target compare both); anything else, including every malformed line, it declines
 * untouched and the loader hands the line to ldns, so what is rejected and the reason come
 * from ldns as before. It never allocates. Control thread only (the zone compiler).
 */
#ifndef P53_ZONE_SCAN_H
#define P53_ZONE_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/name.h"

#define P53_SCAN_RDATA_MAX 1024 /* longer RDATA goes to ldns */

/* What a line carries over to the next: ldns' origin, previous owner and default TTL. */
struct p53_scan {
	uint8_t origin[P53_NAME_MAXLEN];
	uint8_t prev[P53_NAME_MAXLEN];  /* owner of a line that starts with a blank */
	uint8_t origin_len;             /* 0: no origin (never, from zone_load.c) */
	uint8_t prev_len;               /* 0: none, the origin stands in (as in ldns) */
	uint32_t ttl;                   /* $TTL; 0 means ldns' default of 3600 */
};

/* One record, owner as written (not lower-cased), RDATA in wire form. */
struct p53_scan_rr {
	uint8_t owner[P53_NAME_MAXLEN];
	uint8_t olen;
	uint16_t type;
	uint32_t ttl;
	uint16_t rdlen;
	uint16_t clen;          /* canonical RDATA (RFC 4034 §6.2) when it differs, else 0 */
	uint8_t rdata[P53_SCAN_RDATA_MAX];
	uint8_t canon[P53_SCAN_RDATA_MAX];
};

enum p53_scan_res {
	P53_SCAN_DECLINE = 0,   /* not a line this scanner takes: nothing consumed */
	P53_SCAN_EMPTY,         /* a blank or comment-only line */
	P53_SCAN_RR,            /* a record, in *rr */
};

/**
 * Scan the line at p[0..n). The line must end with '\n' inside the n bytes unless `eof` says
 * the text ends at n.
 * @param used  bytes consumed, the '\n' included (set unless declined)
 * @return P53_SCAN_RR (s->prev updated as ldns does), P53_SCAN_EMPTY, or P53_SCAN_DECLINE
 *         (s and *rr unchanged as far as the caller can tell).
 */
enum p53_scan_res p53_scan_line(struct p53_scan *s, const char *p, size_t n, int eof,
				struct p53_scan_rr *rr, size_t *used);

#endif /* P53_ZONE_SCAN_H */
