/*
 * The fast path of the master-file loader: see zone_scan.h. Every rule below is ldns 1.8's
 * (rr.c ldns_rr_new_frm_str_internal, str2host.c) for the subset it takes; at the first thing
 * outside that subset it declines and ldns reads the line instead.
 */
#include <arpa/inet.h>
#include <string.h>

#include "control/zone/zone_scan.h"

#define LDNS_TTL_DEFAULT 3600   /* ldns' TTL when neither the line nor $TTL gives one */
#define TYPE_A     1
#define TYPE_NS    2
#define TYPE_CNAME 5
#define TYPE_PTR   12
#define TYPE_MX    15
#define TYPE_TXT   16
#define TYPE_AAAA  28

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Characters a name token may hold here; escapes, quotes and the rest go to ldns. */
static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '*';
}

/* Does a token end at p (a blank, the end of the line or of the text)? */
static int token_end(const char *p, const char *end)
{
	return p == end || blank(*p) || *p == '\n';
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && blank(*p))
		p++;
	return p;
}

/*
 * A name at p: '@' (the origin) or labels of name_char separated by dots, absolute with a
 * final dot, else relative to the origin (ldns_dname_cat). Sets *q past it.
 * @return wire length, 0 to decline.
 */
static size_t name_scan(const struct p53_scan *s, const char *p, const char *end, const char **q,
			uint8_t *out)
{
	size_t w = 1, start = 0, len = 0;

	if (p < end && *p == '@') {
		if (!token_end(p + 1, end))
			return 0;
		*q = p + 1;
		memcpy(out, s->origin, s->origin_len);
		return s->origin_len;
	}
	for (; p < end && !token_end(p, end); p++) {
		if (*p == '.') {
			if (len == 0)
				return 0; /* an empty label, or "." alone: ldns' business */
			out[start] = (uint8_t)len;
			if (token_end(p + 1, end)) {
				if (w >= P53_NAME_MAXLEN)
					return 0;
				out[w++] = 0;
				*q = p + 1;
				return w;
			}
			start = w++;
			len = 0;
			continue;
		}
		if (!name_char(*p) || ++len > 63 || w >= P53_NAME_MAXLEN)
			return 0;
		out[w++] = (uint8_t)*p;
	}
	if (len == 0)
		return 0;
	out[start] = (uint8_t)len;
	if (w + s->origin_len > P53_NAME_MAXLEN)
		return 0;
	memcpy(out + w, s->origin, s->origin_len);
	*q = p;
	return w + s->origin_len;
}

/* A decimal number of at most `digits` digits ending a token; -1 to decline. */
static long number(const char *p, const char *end, const char **q, int digits)
{
	long v = 0;
	int n = 0;

	for (; p < end && *p >= '0' && *p <= '9'; p++, n++) {
		if (n == digits)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (n == 0 || !token_end(p, end))
		return -1;
	*q = p;
	return v;
}

static int word_is(const char *p, const char *end, const char *w)
{
	size_t l = strlen(w);

	if ((size_t)(end - p) < l || !token_end(p + l, end))
		return 0;
	for (size_t i = 0; i < l; i++)
		if ((p[i] | 0x20) != (w[i] | 0x20))
			return 0;
	return 1;
}

static uint16_t type_of(const char *p, const char *end, const char **q)
{
	static const struct { const char *w; uint16_t t; } types[] = {
		{ "A", TYPE_A }, { "AAAA", TYPE_AAAA }, { "CNAME", TYPE_CNAME }, { "TXT", TYPE_TXT },
		{ "MX", TYPE_MX }, { "NS", TYPE_NS }, { "PTR", TYPE_PTR },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (word_is(p, end, types[i].w)) {
			*q = p + strlen(types[i].w);
			return types[i].t;
		}
	return 0;
}

/* An address token through inet_pton, as ldns_str2rdf_a/aaaa do. */
static int addr(int af, const char *p, const char *end, const char **q, uint8_t *out)
{
	char buf[48];
	size_t l = 0;

	while (p + l < end && !token_end(p + l, end)) {
		char c = p[l];
		if (!((c >= '0' && c <= '9') || c == '.' || c == ':' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')) ||
		    l + 1 >= sizeof(buf))
			return -1;
		buf[l] = c;
		l++;
	}
	buf[l] = '\0';
	if (l == 0 || inet_pton(af, buf, out) != 1)
		return -1;
	*q = p + l;
	return af == AF_INET ? 4 : 16;
}

/* TXT: one or more quoted strings without escapes, blanks between them. */
static int txt(const char *p, const char *end, const char **q, uint8_t *out)
{
	size_t w = 0;

	for (;;) {
		size_t l = 0;
		if (p >= end || *p != '"')
			return -1;
		for (p++; p < end && *p != '"'; p++, l++) {
			/* Printable ASCII only: ldns splits lines at \f, \r and \v, even in quotes. */
			if (*p < 0x20 || *p > 0x7e || *p == '\\' || l >= 255 ||
			    w + 1 + l + 1 > P53_SCAN_RDATA_MAX)
				return -1;
			out[w + 1 + l] = (uint8_t)*p;
		}
		if (p == end || l == 0)
			return -1;
		out[w] = (uint8_t)l;
		w += 1 + l;
		p++; /* the closing quote */
		if (!token_end(p, end))
			return -1;
		const char *n = skip_blanks(p, end);
		if (n == end || *n != '"') {
			*q = p;
			return (int)w;
		}
		p = n;
	}
}

/* RFC 4034 §6.2: the names in NS, CNAME, PTR and MX RDATA are lower-cased. */
static uint16_t canon(struct p53_scan_rr *rr)
{
	int upper = 0;

	for (size_t i = 0; i < rr->rdlen; i++)
		upper |= rr->rdata[i] >= 'A' && rr->rdata[i] <= 'Z';
	if (!upper)
		return 0;
	memcpy(rr->canon, rr->rdata, rr->rdlen);
	if (rr->type == TYPE_MX)
		p53_name_lower(rr->canon + 2, rr->rdata + 2, rr->rdlen - 2u);
	else
		p53_name_lower(rr->canon, rr->rdata, rr->rdlen);
	return rr->rdlen;
}

/* The end of a line after its data: blanks, maybe a comment, then '\n' or the end of text. */
static const char *line_end(const char *p, const char *end, int eof)
{
	p = skip_blanks(p, end);
	if (p < end && *p == ';')
		for (; p < end && *p != '\n'; p++)
			if ((unsigned char)*p < 0x20 && *p != '\t')
				return NULL; /* ldns' line ends at \f, \r, \v: its business */
	if (p < end && *p == '\n')
		return p + 1;
	return p == end && eof ? p : NULL;
}

enum p53_scan_res p53_scan_line(struct p53_scan *s, const char *p, size_t n, int eof,
				struct p53_scan_rr *rr, size_t *used)
{
	const char *start = p, *end = p + n, *e;
	size_t olen, dl;
	long v;
	int explicit_owner = !blank(*p) && *p != '\n';
	int r;

	if (n == 0 || s->origin_len == 0)
		return P53_SCAN_DECLINE;
	if (!explicit_owner || *p == ';') {
		e = line_end(p, end, eof);
		if (e != NULL) {
			*used = (size_t)(e - start);
			return P53_SCAN_EMPTY;
		}
		if (*p == ';')
			return P53_SCAN_DECLINE;
	}
	if (explicit_owner) {
		olen = name_scan(s, p, end, &p, rr->owner);
		if (olen == 0)
			return P53_SCAN_DECLINE;
	} else if (s->prev_len > 0) {
		olen = s->prev_len;
		memcpy(rr->owner, s->prev, olen);
	} else {
		olen = s->origin_len;
		memcpy(rr->owner, s->origin, olen);
	}
	p = skip_blanks(p, end);
	/* ldns: a token starting with a digit is the TTL, then maybe a class, then the type. */
	rr->ttl = s->ttl == 0 ? LDNS_TTL_DEFAULT : s->ttl;
	if (p < end && *p >= '0' && *p <= '9') {
		v = number(p, end, &p, 9);
		if (v < 0)
			return P53_SCAN_DECLINE;
		rr->ttl = (uint32_t)v;
		p = skip_blanks(p, end);
	}
	if (word_is(p, end, "IN"))
		p = skip_blanks(p + 2, end);
	rr->type = type_of(p, end, &p);
	if (rr->type == 0 || p == end || !blank(*p))
		return P53_SCAN_DECLINE;
	p = skip_blanks(p, end);
	rr->clen = 0;
	switch (rr->type) {
	case TYPE_A:
	case TYPE_AAAA:
		r = addr(rr->type == TYPE_A ? AF_INET : AF_INET6, p, end, &p, rr->rdata);
		if (r < 0)
			return P53_SCAN_DECLINE;
		rr->rdlen = (uint16_t)r;
		break;
	case TYPE_NS:
	case TYPE_CNAME:
	case TYPE_PTR:
		dl = name_scan(s, p, end, &p, rr->rdata);
		if (dl == 0)
			return P53_SCAN_DECLINE;
		rr->rdlen = (uint16_t)dl;
		rr->clen = canon(rr);
		break;
	case TYPE_MX:
		v = number(p, end, &p, 5);
		if (v < 0 || v > 65535)
			return P53_SCAN_DECLINE;
		rr->rdata[0] = (uint8_t)(v >> 8);
		rr->rdata[1] = (uint8_t)v;
		p = skip_blanks(p, end);
		dl = name_scan(s, p, end, &p, rr->rdata + 2);
		if (dl == 0)
			return P53_SCAN_DECLINE;
		rr->rdlen = (uint16_t)(dl + 2);
		rr->clen = canon(rr);
		break;
	case TYPE_TXT:
		r = txt(p, end, &p, rr->rdata);
		if (r < 0)
			return P53_SCAN_DECLINE;
		rr->rdlen = (uint16_t)r;
		break;
	default:
		return P53_SCAN_DECLINE;
	}
	e = line_end(p, end, eof);
	if (e == NULL)
		return P53_SCAN_DECLINE;
	rr->olen = (uint8_t)olen;
	if (explicit_owner) {
		/* ldns: an owner written out, '@' included, becomes the previous owner. */
		memcpy(s->prev, rr->owner, olen);
		s->prev_len = (uint8_t)olen;
	}
	*used = (size_t)(e - start);
	return P53_SCAN_RR;
}
