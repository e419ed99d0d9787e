/* Domain-name helpers; see name.h. */
#include <string.h>

#include "dataplane/name.h"

uint32_t p53_name_hash(const uint8_t *name, size_t len)
{
	uint32_t crc = P53_NAME_HASH_SEED;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, name + i, 8);
		crc = p53_hash_step8(crc, w);
	}
	/* The tail in 4-, 2- and 1-byte steps: CRC32-C of a little-endian word is that of its
	 * bytes in order, so the hash is the byte-at-a-time one. */
	if (len - i >= 4) {
		uint32_t w;
		memcpy(&w, name + i, 4);
		crc = p53_hash_step4(crc, w);
		i += 4;
	}
	if (len - i >= 2) {
		uint16_t w;
		memcpy(&w, name + i, 2);
		crc = p53_hash_step2(crc, w);
		i += 2;
	}
	if (i < len)
		crc = p53_hash_step1(crc, name[i]);
	return crc;
}

void p53_name_lower(uint8_t *dst, const uint8_t *src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		dst[i] = p53_lower(src[i]);
}

int p53_name_len(const uint8_t *name, size_t max)
{
	size_t pos = 0;

	for (;;) {
		if (pos >= max)
			return -1;
		uint8_t l = name[pos];
		if (l > P53_LABEL_MAXLEN) /* 0xC0 pointers and the reserved 0x40/0x80 types */
			return -1;
		pos += 1u + l;
		if (pos > P53_NAME_MAXLEN)
			return -1;
		if (l == 0)
			return (int)pos;
	}
}

int p53_name_labels(const uint8_t *name)
{
	int n = 0;

	while (*name != 0) {
		name += 1u + *name;
		n++;
	}
	return n;
}
