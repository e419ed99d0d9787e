/*
 * RFC 1071 one's complement sums for the UDP and IPv4 checksums, shared by the frame code
 * (pkt.c) and the fast path (fastpath.c). Inline, per packet: no allocation, no syscalls.
 */
#ifndef P53_CSUM_H
#define P53_CSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One's complement add in 64 bits: the carry out goes back in (end-around carry, RFC 1071
 * §2(A)); with the overflow builtin compilers emit add + adc $0. */
static inline uint64_t p53_csum_addc(uint64_t sum, uint64_t x)
{
	uint64_t r;
	unsigned int c = __builtin_add_overflow(sum, x, &r);

	return r + c;
}

/*
 * RFC 1071 one's complement sum, 64 bits at a time with end-around carry (§2(C): any word
 * size folds to the same 16-bit sum, and byte order only swaps the result, which the
 * native-order store undoes). DPDK's __rte_raw_cksum adds 16 bits at a time; this takes a
 * fraction of the instructions for a typical 50..100-byte datagram.
 */
static inline __attribute__((always_inline)) uint64_t p53_csum_add(const uint8_t *p, size_t len, uint64_t sum)
{
	uint64_t a, b;
	uint32_t w;
	uint16_t h;

	for (; len >= 16; p += 16, len -= 16) {
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		sum = p53_csum_addc(p53_csum_addc(sum, a), b);
	}
	if (len >= 8) {
		memcpy(&a, p, 8);
		sum = p53_csum_addc(sum, a);
		p += 8;
		len -= 8;
	}
	if (len >= 4) {
		memcpy(&w, p, 4);
		sum = p53_csum_addc(sum, w);
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		memcpy(&h, p, 2);
		sum = p53_csum_addc(sum, h);
		p += 2;
		len -= 2;
	}
	if (len == 1) {
		h = 0;
		memcpy(&h, p, 1); /* the odd byte is the high half of a zero-padded word */
		sum = p53_csum_addc(sum, h);
	}
	return sum;
}

/*
 * Fold a 64-bit sum to the 16-bit one's complement sum. Adding a word to itself rotated by half
 * its width leaves the end-around-carry sum of its halves in the high half (the carry out of
 * the low half lands in it): 64 -> 32 -> 16 bits in two rotate-and-add steps. 0 only for 0;
 * otherwise the value in 1..0xffff congruent to `sum` modulo 0xffff (RFC 1071 §2(B)).
 */
static inline __attribute__((always_inline)) uint16_t p53_csum_fold(uint64_t sum)
{
	uint64_t t = sum + (sum << 32 | sum >> 32);
	uint32_t h = (uint32_t)(t >> 32);

	h += h << 16 | h >> 16;
	return (uint16_t)(h >> 16);
}

/*
 * The sum of bytes that sit at an odd offset of the datagram, from their sum as if at an even
 * one: byte-swapped 16-bit words (RFC 1071 §2(B)), i.e. times 2^8 modulo 0xffff, which a
 * 64-bit rotate by 8 is (2^64 - 1 is a multiple of 0xffff). No fold needed first.
 */
static inline __attribute__((always_inline)) uint64_t p53_csum_odd(uint64_t sum)
{
	return sum << 8 | sum >> 56;
}

#endif /* P53_CSUM_H */
