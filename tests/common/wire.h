/*
 * Byte helpers the tests share: big-endian 16-bit reads and writes, and an RFC 1071 one's
 * complement sum of their own (a byte loop), so a test checks pkt.c's and fastpath.c's sums
 * against code that shares nothing with them.
 */
#ifndef P53_TESTS_WIRE_H
#define P53_TESTS_WIRE_H

#include <stddef.h>
#include <stdint.h>

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* s plus the big-endian 16-bit words of p[0..n), an odd last byte padded with zero. */
static inline uint32_t sum_be(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

/* The carries folded back in: the 16-bit one's complement sum, not complemented. */
static inline uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	return (uint16_t)s;
}

#endif
