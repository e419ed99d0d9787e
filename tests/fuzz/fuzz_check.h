/*
 * The response invariants the fuzz targets over the responder check (fuzz_answer.c,
 * fuzz_burst.c): a response is 0 bytes (dropped) or at least a header, never longer than the
 * buffer it may use, keeps the query ID, has QR set, and holds exactly the question and the
 * records its header counts.
 */
#ifndef P53_FUZZ_CHECK_H
#define P53_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The response is what its header says: the question when QDCOUNT is 1, then exactly the
 * counted records, ending at the returned length. */
static int wellformed(const uint8_t *m, uint16_t n)
{
	size_t off = 12;
	unsigned int qd = (unsigned int)(m[4] << 8 | m[5]);
	unsigned int rrs = (unsigned int)(m[6] << 8 | m[7]) + (unsigned int)(m[8] << 8 | m[9]) +
			   (unsigned int)(m[10] << 8 | m[11]);

	if (qd > 1)
		return 0;
	for (unsigned int i = 0; i < qd + rrs; i++) {
		for (;;) {
			if (off >= n)
				return 0;
			uint8_t l = m[off];
			if ((l & 0xc0) == 0xc0) {
				off += 2;
				break;
			}
			off += 1u + l;
			if (l == 0)
				break;
		}
		off += i < qd ? 4 : 10;
		if (off > n)
			return 0;
		if (i >= qd)
			off += (size_t)(m[off - 2] << 8 | m[off - 1]);
	}
	return off == n;
}

/* A response of `n` bytes in `buf` (at most `cap`) to the query `data`: aborts unless it
 * holds the invariants above. */
static void check(const uint8_t *data, const uint8_t *buf, uint16_t n, uint16_t cap)
{
	if (n == 0)
		return;
	if (n < 12 || n > cap)
		abort();
	if (buf[0] != data[0] || buf[1] != data[1] || !(buf[2] & 0x80))
		abort();
	if (!wellformed(buf, n))
		abort();
}

#endif /* P53_FUZZ_CHECK_H */
