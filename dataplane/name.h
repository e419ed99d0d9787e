/*
 * Domain names in wire form: hashing and comparison shared by the image writer (control/)
 * and the query path (dataplane/). A "canonical" name is uncompressed wire form with ASCII
 * letters lowered (RFC 4034 §6.2). Per-packet safe: no allocation, no syscalls.
 */
#ifndef P53_NAME_H
#define P53_NAME_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#define P53_NAME_MAXLEN   255 /* RFC 1035 §2.3.4 */
#define P53_LABEL_MAXLEN  63
#define P53_NAME_MAXLABELS 127

/*
 * The name-index hash: CRC32-C over the canonical name, 8 bytes at a time, then byte by byte.
 * Written as steps so the question parser can hash each word as it lower-cases it, in the
 * same order p53_name_hash() uses; both must give the same value for the same bytes.
 */
#define P53_NAME_HASH_SEED 0x9e3779b9u

#if defined(__SSE4_2__)
#include <nmmintrin.h>
static inline uint32_t p53_hash_step8(uint32_t crc, uint64_t word)
{
	return (uint32_t)_mm_crc32_u64(crc, word);
}

static inline uint32_t p53_hash_step1(uint32_t crc, uint8_t byte)
{
	return _mm_crc32_u8(crc, byte);
}

/* CRC32-C of a little-endian word is that of its bytes in order: 4 or 2 bytes in one step. */
static inline uint32_t p53_hash_step4(uint32_t crc, uint32_t word)
{
	return _mm_crc32_u32(crc, word);
}

static inline uint32_t p53_hash_step2(uint32_t crc, uint16_t word)
{
	return _mm_crc32_u16(crc, word);
}
#else
#include <rte_hash_crc.h>
static inline uint32_t p53_hash_step8(uint32_t crc, uint64_t word)
{
	return rte_hash_crc_8byte(word, crc);
}

static inline uint32_t p53_hash_step1(uint32_t crc, uint8_t byte)
{
	return rte_hash_crc_1byte(byte, crc);
}

static inline uint32_t p53_hash_step4(uint32_t crc, uint32_t word)
{
	return rte_hash_crc_4byte(word, crc);
}

static inline uint32_t p53_hash_step2(uint32_t crc, uint16_t word)
{
	return rte_hash_crc_2byte(word, crc);
}
#endif

/*
 * Lower-case 8 bytes at once (SWAR): bit 7 of each byte of `upper` is set where the byte is in
 * 'A'..'Z'. Label length bytes (0..63) and bytes >= 0x80 are never changed (RFC 4343 §3).
 */
static inline uint64_t p53_lower8(uint64_t x)
{
	uint64_t h = x & 0x7f7f7f7f7f7f7f7full;
	uint64_t upper = (h + 0x3f3f3f3f3f3f3f3full) & ~(h + 0x2525252525252525ull) & ~x &
			 0x8080808080808080ull;

	return x | (upper >> 2);
}

/*
 * p53_lower8() of 16 bytes from src into dst (the question parser's name copy): with SSE2 one
 * add, compare, and, or on a vector, the constants read from memory, instead of two words'
 * worth of 64-bit constants and steps.
 */
#if defined(__SSE2__)
#include <emmintrin.h>
static inline void p53_lower16(uint8_t *dst, const uint8_t *src)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)src);
	/* 'A'..'Z' + 0x3f is 0x80..0x99: as signed bytes, below -102 (0x9a) and nothing else */
	__m128i up = _mm_cmplt_epi8(_mm_add_epi8(x, _mm_set1_epi8(0x3f)), _mm_set1_epi8(-102));

	_mm_storeu_si128((__m128i *)(void *)dst, _mm_or_si128(x, _mm_and_si128(up, _mm_set1_epi8(0x20))));
}
#else
static inline void p53_lower16(uint8_t *dst, const uint8_t *src)
{
	uint64_t a, b;

	memcpy(&a, src, 8);
	memcpy(&b, src + 8, 8);
	a = p53_lower8(a);
	b = p53_lower8(b);
	memcpy(dst, &a, 8);
	memcpy(dst + 8, &b, 8);
}
#endif

/** Hash of a canonical wire name; the key of the image's name index. */
uint32_t p53_name_hash(const uint8_t *name, size_t len);

/** ASCII lower-case of one byte; other bytes unchanged (RFC 4343). */
static inline uint8_t p53_lower(uint8_t c)
{
	return (uint8_t)((unsigned int)c - 'A' < 26u ? c + 32 : c);
}

/** Lower-case `len` bytes of a wire name from src to dst (may alias). */
void p53_name_lower(uint8_t *dst, const uint8_t *src, size_t len);

/**
 * Length of an uncompressed, well-formed wire name at `name`, reading at most `max` bytes.
 *
 * @return bytes including the root label, or -1 when it runs past `max`, has a label over
 *         63 bytes, a compression pointer, or is longer than 255 bytes.
 */
int p53_name_len(const uint8_t *name, size_t max);

/** Number of labels of a well-formed wire name, root excluded. */
int p53_name_labels(const uint8_t *name);

/**
 * Is well-formed wire name t (tl bytes) at or below name o (ol bytes): o itself, or a suffix of t
 * on a label boundary? Both in the same case (canonical names, for instance).
 */
static inline bool p53_name_at_or_below(const uint8_t *t, size_t tl, const uint8_t *o, size_t ol)
{
	while (tl > ol) {
		tl -= 1u + t[0];
		t += 1u + t[0];
	}
	return tl == ol && memcmp(t, o, ol) == 0;
}

#endif /* P53_NAME_H */
