/*
 * Bounds-checked reader over packet bytes with a sticky error, in the manner of Knot's
 * wire_ctx_t and NSD's buffer: read several fields, check `err` once. Past the end, reads
 * return 0 and set err; nothing ever reads outside [start, end).
 * Per-packet safe: inline, no allocation, no syscalls.
 */
#ifndef P53_WIRE_H
#define P53_WIRE_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

struct p53_wire {
	const uint8_t *start;
	const uint8_t *pos;
	const uint8_t *end;
	int err;                /* sticky: set by the first read past the end */
};

static inline void p53_wire_init(struct p53_wire *w, const uint8_t *buf, size_t len)
{
	w->start = buf;
	w->pos = buf;
	w->end = buf + len;
	w->err = 0;
}

static inline size_t p53_wire_left(const struct p53_wire *w)
{
	return (size_t)(w->end - w->pos);
}

static inline size_t p53_wire_off(const struct p53_wire *w)
{
	return (size_t)(w->pos - w->start);
}

static inline int p53_wire_need(struct p53_wire *w, size_t n)
{
	if (w->err != 0 || p53_wire_left(w) < n) {
		w->err = 1;
		w->pos = w->end;
		return 0;
	}
	return 1;
}

static inline uint8_t p53_wire_u8(struct p53_wire *w)
{
	if (!p53_wire_need(w, 1))
		return 0;
	return *w->pos++;
}

static inline uint16_t p53_wire_u16(struct p53_wire *w)
{
	if (!p53_wire_need(w, 2))
		return 0;
	uint16_t v = (uint16_t)(w->pos[0] << 8 | w->pos[1]);
	w->pos += 2;
	return v;
}

static inline uint32_t p53_wire_u32(struct p53_wire *w)
{
	if (!p53_wire_need(w, 4))
		return 0;
	uint32_t v = (uint32_t)w->pos[0] << 24 | (uint32_t)w->pos[1] << 16 |
		     (uint32_t)w->pos[2] << 8 | w->pos[3];
	w->pos += 4;
	return v;
}

static inline void p53_wire_skip(struct p53_wire *w, size_t n)
{
	if (p53_wire_need(w, n))
		w->pos += n;
}

/** Pointer to the next n bytes and advance, or NULL (err set). */
static inline const uint8_t *p53_wire_take(struct p53_wire *w, size_t n)
{
	if (!p53_wire_need(w, n))
		return NULL;
	const uint8_t *p = w->pos;
	w->pos += n;
	return p;
}

/* Big-endian stores and loads for the response writer (bounds are the writer's job): one
 * unaligned access and a byte swap, not a store per byte (which compilers do not merge). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define P53_BE16(v) __builtin_bswap16(v)
#define P53_BE32(v) __builtin_bswap32(v)
#else
#define P53_BE16(v) (v)
#define P53_BE32(v) (v)
#endif

static inline void p53_put16(uint8_t *p, uint16_t v)
{
	uint16_t b = P53_BE16(v);

	memcpy(p, &b, 2);
}

static inline void p53_put32(uint8_t *p, uint32_t v)
{
	uint32_t b = P53_BE32(v);

	memcpy(p, &b, 4);
}

static inline uint16_t p53_get16(const uint8_t *p)
{
	uint16_t b;

	memcpy(&b, p, 2);
	return P53_BE16(b);
}

#endif /* P53_WIRE_H */
