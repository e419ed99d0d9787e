/*
 * Domain names in wire form: hashing and comparison shared by the image writer (control/)
 * and the query path (dataplane/). A "canonical" name is uncompressed wire form with ASCII
 * letters lowered (RFC 4034 §6.2). Per-packet safe: no allocation, no syscalls.
 */
#ifndef P53_NAME_H
#define P53_NAME_H

#include <stdint.h>
#include <stddef.h>

#define P53_NAME_MAXLEN   255 /* RFC 1035 §2.3.4 */
#define P53_LABEL_MAXLEN  63
#define P53_NAME_MAXLABELS 127

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
 * Compare two wire names ignoring ASCII case.
 * @return 1 when equal, else 0.
 */
int p53_name_equal(const uint8_t *a, const uint8_t *b);

/** Write a wire name as text with a trailing dot (for logs and errors); returns dst. */
char *p53_name_to_str(char *dst, size_t cap, const uint8_t *name);

#endif /* P53_NAME_H */
