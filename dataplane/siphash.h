/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012): a keyed
 * 64-bit hash, the one RFC 9018 §4.4 prescribes for interoperable DNS server cookies.
 * Written from the paper's description; checked against its test vector and against
 * libknot's RFC 9018 cookies (tests/unit/dataplane/test_cookie.c).
 *
 * Per-packet safe: no allocation, no locks, no syscalls; reads exactly `len` bytes.
 */
#ifndef P53_SIPHASH_H
#define P53_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define P53_SIPHASH_KEY_LEN 16

/**
 * SipHash-2-4 of `len` bytes at `data` under a 128-bit key.
 *
 * @param key   16 bytes; k0 and k1 are its two halves read little-endian (as in the paper)
 * @return the 64-bit tag. Serialised little-endian it is the byte string the paper's test
 *         vectors and RFC 9018 show.
 */
uint64_t p53_siphash24(const uint8_t key[P53_SIPHASH_KEY_LEN], const void *data, size_t len);

#endif /* P53_SIPHASH_H */
