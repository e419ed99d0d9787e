/* TSIG, RFC 8945; see tsig.h. */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "control/xfr/tsig.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#define T_TSIG 250
#define C_ANY  255

static const char *const digests[] = { "SHA1", "SHA224", "SHA256", "SHA384", "SHA512" };
static const uint16_t mac_sizes[] = { 20, 28, 32, 48, 64 };

const char *p53_tsig_status_str(enum p53_tsig_status st)
{
	static const char *const s[] = { "ok", "no TSIG", "malformed TSIG", "BADKEY", "BADSIG",
					 "BADTIME", "BADTRUNC", "TSIG error from the peer",
					 "unsigned messages" };

	return (unsigned int)st < sizeof(s) / sizeof(s[0]) ? s[st] : "?";
}

static EVP_MAC_CTX *mac_new(const struct p53_tsig_key *key)
{
	EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = m != NULL ? EVP_MAC_CTX_new(m) : NULL;
	OSSL_PARAM params[2];

	EVP_MAC_free(m); /* the context keeps its own reference */
	if (ctx == NULL)
		return NULL;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						     (char *)digests[key->alg], 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_MAC_init(ctx, key->secret, key->secret_len, params) != 1) {
		EVP_MAC_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put48(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 6; i++)
		p[i] = (uint8_t)(v >> (40 - 8 * i));
}

/* Canonical wire name of an algorithm (lower case). */
static size_t alg_wire(enum p53_tsig_alg alg, uint8_t *out)
{
	const char *s = p53_tsig_alg_name(alg);
	size_t o = 0;

	while (*s != '\0') {
		const char *dot = strchr(s, '.');
		size_t l = (size_t)(dot - s);
		out[o++] = (uint8_t)l;
		memcpy(out + o, s, l);
		o += l;
		s = dot + 1;
	}
	out[o++] = 0;
	return o;
}

/* A possibly compressed name at off, lowered into out; *next is just past it in place. */
static int read_name(const uint8_t *msg, size_t len, size_t off, uint8_t *out, uint8_t *out_len,
		     size_t *next)
{
	size_t o = 0, pos = off;
	int jumps = 0;

	*next = 0;
	for (;;) {
		if (pos >= len)
			return -1;
		uint8_t l = msg[pos];
		if ((l & 0xc0) == 0xc0) {
			if (pos + 1 >= len || ++jumps > 64)
				return -1;
			if (*next == 0)
				*next = pos + 2;
			pos = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
			continue;
		}
		if ((l & 0xc0) != 0 || pos + 1 + l > len || o + 1 + l > P53_NAME_MAXLEN)
			return -1;
		out[o++] = l;
		for (uint8_t i = 0; i < l; i++)
			out[o++] = p53_lower(msg[pos + 1 + i]);
		pos += 1u + l;
		if (l == 0)
			break;
	}
	if (*next == 0)
		*next = pos;
	*out_len = (uint8_t)o;
	return 0;
}

static int skip_name(struct p53_wire *w)
{
	for (;;) {
		uint8_t l = p53_wire_u8(w);
		if (w->err)
			return -1;
		if ((l & 0xc0) == 0xc0) {
			p53_wire_skip(w, 1);
			return w->err ? -1 : 0;
		}
		if ((l & 0xc0) != 0)
			return -1;
		if (l == 0)
			return 0;
		p53_wire_skip(w, l);
	}
}

enum p53_tsig_status p53_tsig_find(const uint8_t *msg, size_t len, struct p53_tsig_rr *t)
{
	struct p53_wire w;
	uint16_t qd, an, ns, ar;
	size_t last = 0;

	memset(t, 0, sizeof(*t));
	p53_wire_init(&w, msg, len);
	p53_wire_skip(&w, 4);
	qd = p53_wire_u16(&w);
	an = p53_wire_u16(&w);
	ns = p53_wire_u16(&w);
	ar = p53_wire_u16(&w);
	if (w.err)
		return P53_TSIG_FORMERR;
	for (uint16_t i = 0; i < qd; i++) {
		if (skip_name(&w) != 0)
			return P53_TSIG_FORMERR;
		p53_wire_skip(&w, 4);
	}
	uint32_t total = (uint32_t)an + ns + ar;
	for (uint32_t i = 0; i < total; i++) {
		size_t at = p53_wire_off(&w);
		if (skip_name(&w) != 0)
			return P53_TSIG_FORMERR;
		uint16_t type = p53_wire_u16(&w);
		p53_wire_skip(&w, 6);
		uint16_t rdlen = p53_wire_u16(&w);
		p53_wire_skip(&w, rdlen);
		if (w.err)
			return P53_TSIG_FORMERR;
		if (type == T_TSIG) {
			/* §5.1: only as the last record of the additional section. */
			if (i != total - 1 || i < (uint32_t)an + ns)
				return P53_TSIG_FORMERR;
			last = at;
		}
	}
	if (last == 0)
		return P53_TSIG_NONE;
	/* Parse it. */
	size_t next;
	if (read_name(msg, len, last, t->name, &t->name_len, &next) != 0)
		return P53_TSIG_FORMERR;
	p53_wire_init(&w, msg, len);
	p53_wire_skip(&w, next);
	p53_wire_skip(&w, 2); /* type */
	uint16_t cls = p53_wire_u16(&w);
	uint32_t ttl = p53_wire_u32(&w);
	uint16_t rdlen = p53_wire_u16(&w);
	size_t rd = p53_wire_off(&w);
	if (w.err || cls != C_ANY || ttl != 0 || rd + rdlen != len)
		return P53_TSIG_FORMERR;
	/* RFC 8945 §4.2: the algorithm name is not compressed; read it as a name anyway. */
	if (read_name(msg, rd + rdlen, rd, t->alg, &t->alg_len, &next) != 0)
		return P53_TSIG_FORMERR;
	p53_wire_init(&w, msg, rd + rdlen);
	p53_wire_skip(&w, next);
	uint16_t hi = p53_wire_u16(&w);
	uint32_t lo = p53_wire_u32(&w);
	t->time_signed = (uint64_t)hi << 32 | lo;
	t->fudge = p53_wire_u16(&w);
	t->mac_len = p53_wire_u16(&w);
	t->mac = p53_wire_take(&w, t->mac_len);
	t->orig_id = p53_wire_u16(&w);
	t->error = p53_wire_u16(&w);
	t->other_len = p53_wire_u16(&w);
	t->other = p53_wire_take(&w, t->other_len);
	if (w.err || p53_wire_left(&w) != 0)
		return P53_TSIG_FORMERR;
	t->rr_off = last;
	return P53_TSIG_OK;
}

/* The TSIG variables of RFC 8945 §4.3.3 (all of them, or the timers only). */
static size_t variables(uint8_t *buf, const uint8_t *name, size_t name_len, const uint8_t *alg,
			size_t alg_len, uint64_t time_signed, uint16_t fudge, uint16_t error,
			const uint8_t *other, uint16_t other_len, int timers_only)
{
	size_t o = 0;

	if (!timers_only) {
		memcpy(buf, name, name_len);
		o = name_len;
		put16(buf + o, C_ANY);
		memset(buf + o + 2, 0, 4); /* TTL */
		o += 6;
		memcpy(buf + o, alg, alg_len);
		o += alg_len;
	}
	put48(buf + o, time_signed);
	put16(buf + o + 6, fudge);
	o += 8;
	if (!timers_only) {
		put16(buf + o, error);
		put16(buf + o + 2, other_len);
		o += 4;
		if (other_len > 0)
			memcpy(buf + o, other, other_len);
		o += other_len;
	}
	return o;
}

/* The message as the digest sees it: without the TSIG, ARCOUNT - 1, the original ID. */
static int digest_msg(EVP_MAC_CTX *ctx, const uint8_t *msg, const struct p53_tsig_rr *t)
{
	uint8_t hdr[12];

	memcpy(hdr, msg, 12);
	put16(hdr, t->orig_id);
	put16(hdr + 10, (uint16_t)(p53_get16(msg + 10) - 1));
	return EVP_MAC_update(ctx, hdr, 12) == 1 &&
	       EVP_MAC_update(ctx, msg + 12, t->rr_off - 12) == 1 ? 0 : -1;
}

static int digest_prior(EVP_MAC_CTX *ctx, const uint8_t *mac, uint16_t len)
{
	uint8_t l[2];

	put16(l, len);
	return EVP_MAC_update(ctx, l, 2) == 1 && (len == 0 || EVP_MAC_update(ctx, mac, len) == 1)
	       ? 0 : -1;
}

static int sign(uint8_t *msg, size_t *len, size_t cap, const struct p53_tsig_key *key,
		const uint8_t *req_mac, uint16_t req_mac_len, uint16_t error, uint64_t now,
		uint8_t *mac, uint16_t *mac_len, int timers_only);

int p53_tsig_sign(uint8_t *msg, size_t *len, size_t cap, const struct p53_tsig_key *key,
		  const uint8_t *req_mac, uint16_t req_mac_len, uint16_t error, uint64_t now,
		  uint8_t *mac, uint16_t *mac_len)
{
	return sign(msg, len, cap, key, req_mac, req_mac_len, error, now, mac, mac_len, 0);
}

int p53_tsig_sign_next(uint8_t *msg, size_t *len, size_t cap, const struct p53_tsig_key *key,
		       const uint8_t *prior_mac, uint16_t prior_len, uint64_t now, uint8_t *mac,
		       uint16_t *mac_len)
{
	/* RFC 8945 §5.3.1: prior MAC, the message, then the timers only. */
	return sign(msg, len, cap, key, prior_mac, prior_len, 0, now, mac, mac_len, 1);
}

size_t p53_tsig_size(const struct p53_tsig_key *key)
{
	uint8_t alg[64];

	return key->wire_len + 10u + alg_wire(key->alg, alg) + 16u + mac_sizes[key->alg];
}

static int sign(uint8_t *msg, size_t *len, size_t cap, const struct p53_tsig_key *key,
		const uint8_t *req_mac, uint16_t req_mac_len, uint16_t error, uint64_t now,
		uint8_t *mac, uint16_t *mac_len, int timers_only)
{
	uint8_t alg[64], vars[600], out[EVP_MAX_MD_SIZE];
	size_t alen = alg_wire(key->alg, alg), vlen, olen = 0, n = *len;
	uint16_t msize = mac_sizes[key->alg];
	EVP_MAC_CTX *ctx;
	int ok;

	if (n < 12 || n + key->wire_len + 10 + alen + 16 + msize > cap)
		return -1;
	ctx = mac_new(key);
	if (ctx == NULL)
		return -1;
	vlen = variables(vars, key->wire, key->wire_len, alg, alen, now, P53_TSIG_FUDGE, error,
			 NULL, 0, timers_only);
	ok = (req_mac == NULL || digest_prior(ctx, req_mac, req_mac_len) == 0) &&
	     EVP_MAC_update(ctx, msg, n) == 1 && EVP_MAC_update(ctx, vars, vlen) == 1 &&
	     EVP_MAC_final(ctx, out, &olen, sizeof(out)) == 1 && olen == msize;
	EVP_MAC_CTX_free(ctx);
	if (!ok)
		return -1;
	/* The record: NAME TYPE CLASS TTL RDLENGTH, then ALG TIME FUDGE MAC ORIGID ERROR OTHER. */
	uint8_t *p = msg + n;
	memcpy(p, key->wire, key->wire_len);
	p += key->wire_len;
	put16(p, T_TSIG);
	put16(p + 2, C_ANY);
	memset(p + 4, 0, 4);
	put16(p + 8, (uint16_t)(alen + 16 + msize));
	p += 10;
	memcpy(p, alg, alen);
	p += alen;
	put48(p, now);
	put16(p + 6, P53_TSIG_FUDGE);
	put16(p + 8, msize);
	memcpy(p + 10, out, msize);
	p += 10 + msize;
	memcpy(p, msg, 2); /* original ID */
	put16(p + 2, error);
	put16(p + 4, 0);
	p += 6;
	put16(msg + 10, (uint16_t)(p53_get16(msg + 10) + 1));
	*len = (size_t)(p - msg);
	if (mac != NULL) {
		memcpy(mac, out, msize);
		*mac_len = msize;
	}
	return 0;
}

int p53_tsig_append_error(uint8_t *msg, size_t *len, size_t cap, const struct p53_tsig_rr *req,
			  uint16_t error, uint64_t now)
{
	size_t n = *len;
	uint8_t *p = msg + n;

	if (n + req->name_len + 10 + req->alg_len + 16 > cap)
		return -1;
	memcpy(p, req->name, req->name_len);
	p += req->name_len;
	put16(p, T_TSIG);
	put16(p + 2, C_ANY);
	memset(p + 4, 0, 4);
	put16(p + 8, (uint16_t)(req->alg_len + 16));
	p += 10;
	memcpy(p, req->alg, req->alg_len);
	p += req->alg_len;
	/* §5.2.3: BADTIME would carry our time in Other Data; we only send BADKEY/BADSIG here. */
	put48(p, now);
	put16(p + 6, req->fudge);
	put16(p + 8, 0);         /* MAC size 0: unsigned */
	put16(p + 10, req->orig_id);
	put16(p + 12, error);
	put16(p + 14, 0);
	p += 16;
	put16(msg + 10, (uint16_t)(p53_get16(msg + 10) + 1));
	*len = (size_t)(p - msg);
	return 0;
}

/* Key name and algorithm, then the time (§5.2: key first, then MAC, then time; a wrong MAC
 * with a wrong time is BADSIG, so the time is checked by the caller after the MAC). */
static enum p53_tsig_status key_matches(const struct p53_tsig_rr *t, const struct p53_tsig_key *key)
{
	uint8_t alg[64];
	size_t alen = alg_wire(key->alg, alg);

	if (t->name_len != key->wire_len || memcmp(t->name, key->wire, key->wire_len) != 0 ||
	    t->alg_len != alen || memcmp(t->alg, alg, alen) != 0)
		return P53_TSIG_BADKEY;
	return P53_TSIG_OK;
}

static enum p53_tsig_status mac_check(const struct p53_tsig_rr *t, const uint8_t *mac, size_t len)
{
	if (t->mac_len < len)
		return t->mac_len == 0 ? P53_TSIG_BADSIG : P53_TSIG_BADTRUNC;
	if (t->mac_len > len || CRYPTO_memcmp(t->mac, mac, len) != 0)
		return P53_TSIG_BADSIG;
	return P53_TSIG_OK;
}

static enum p53_tsig_status time_check(const struct p53_tsig_rr *t, uint64_t now)
{
	uint64_t d = now > t->time_signed ? now - t->time_signed : t->time_signed - now;

	return d > t->fudge ? P53_TSIG_BADTIME : P53_TSIG_OK;
}

enum p53_tsig_status p53_tsig_verify(const uint8_t *msg, size_t len, const struct p53_tsig_rr *t,
				     const struct p53_tsig_key *key, uint64_t now)
{
	uint8_t vars[600], out[EVP_MAX_MD_SIZE];
	size_t vlen, olen = 0;
	enum p53_tsig_status st = key_matches(t, key);
	EVP_MAC_CTX *ctx;
	int ok;

	(void)len;
	if (st != P53_TSIG_OK)
		return st;
	ctx = mac_new(key);
	if (ctx == NULL)
		return P53_TSIG_BADSIG;
	vlen = variables(vars, t->name, t->name_len, t->alg, t->alg_len, t->time_signed, t->fudge,
			 t->error, t->other, t->other_len, 0);
	ok = digest_msg(ctx, msg, t) == 0 && EVP_MAC_update(ctx, vars, vlen) == 1 &&
	     EVP_MAC_final(ctx, out, &olen, sizeof(out)) == 1;
	EVP_MAC_CTX_free(ctx);
	if (!ok)
		return P53_TSIG_BADSIG;
	st = mac_check(t, out, olen);
	return st != P53_TSIG_OK ? st : time_check(t, now);
}

void p53_tsig_stream_init(struct p53_tsig_stream *s, const struct p53_tsig_key *key,
			  const uint8_t *req_mac, uint16_t req_mac_len)
{
	memset(s, 0, sizeof(*s));
	s->key = key;
	memcpy(s->prior, req_mac, req_mac_len);
	s->prior_len = req_mac_len;
}

enum p53_tsig_status p53_tsig_stream_next(struct p53_tsig_stream *s, const uint8_t *msg,
					  size_t len, uint64_t now)
{
	struct p53_tsig_rr t;
	enum p53_tsig_status st = p53_tsig_find(msg, len, &t);
	uint8_t vars[600], out[EVP_MAX_MD_SIZE];
	size_t olen = 0;

	if (st == P53_TSIG_FORMERR)
		return st;
	if (s->acc == NULL) {
		s->acc = mac_new(s->key);
		if (s->acc == NULL || digest_prior(s->acc, s->prior, s->prior_len) != 0)
			return P53_TSIG_BADSIG;
	}
	if (st == P53_TSIG_NONE) {
		/* §5.3.1: the first response must be signed; then at least every 100th. */
		if (s->signed_seen == 0 || ++s->unsigned_run > P53_TSIG_MAX_UNSIGNED)
			return P53_TSIG_UNSIGNED;
		return EVP_MAC_update(s->acc, msg, len) == 1 ? P53_TSIG_OK : P53_TSIG_BADSIG;
	}
	st = key_matches(&t, s->key);
	if (st != P53_TSIG_OK)
		return st;
	if (t.error != 0)
		return P53_TSIG_ERROR;
	size_t vlen = variables(vars, t.name, t.name_len, t.alg, t.alg_len, t.time_signed, t.fudge,
				t.error, t.other, t.other_len, s->signed_seen > 0);
	int ok = digest_msg(s->acc, msg, &t) == 0 && EVP_MAC_update(s->acc, vars, vlen) == 1 &&
		 EVP_MAC_final(s->acc, out, &olen, sizeof(out)) == 1;
	EVP_MAC_CTX_free(s->acc);
	s->acc = NULL;
	if (!ok)
		return P53_TSIG_BADSIG;
	st = mac_check(&t, out, olen);
	if (st == P53_TSIG_OK)
		st = time_check(&t, now);
	if (st != P53_TSIG_OK)
		return st;
	memcpy(s->prior, t.mac, t.mac_len);
	s->prior_len = t.mac_len;
	s->signed_seen++;
	s->unsigned_run = 0;
	return P53_TSIG_OK;
}

enum p53_tsig_status p53_tsig_stream_end(const struct p53_tsig_stream *s)
{
	return s->signed_seen > 0 && s->unsigned_run == 0 ? P53_TSIG_OK : P53_TSIG_UNSIGNED;
}

void p53_tsig_stream_free(struct p53_tsig_stream *s)
{
	EVP_MAC_CTX_free(s->acc);
	s->acc = NULL;
}
