/*
 * Validating what a worker answered, for the health canary (control/health/canary.c,
 * health.canary.dnssec): the zone's DNSKEY RRset is taken from the served image (the zone
 * as compiled, not from the answer under test), and every RRset of a response section must
 * carry at least one RRSIG that ldns verifies with one of those keys at the given time
 * (RFC 4035 §5.3: signature, signer, labels, inception and expiration).
 *
 * Verifying allocates inside ldns and OpenSSL: control thread and tests only, never a worker.
 */
#ifndef P53_DNSSEC_VERIFY_H
#define P53_DNSSEC_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <ldns/ldns.h>

/**
 * The zone of the image that answers for `name` (canonical wire form): the deepest served
 * zone at or above it.
 * @return its index, or UINT32_MAX (P53_NONE) when no served zone holds it.
 */
uint32_t p53_dnssec_zone_of(const void *img, const uint8_t *name, size_t len);

/**
 * The DNSKEY RRset at the apex of zone `zone` of an image that passed p53_image_check(),
 * as ldns records (the caller frees it with ldns_rr_list_deep_free).
 * @return the list, or NULL when the apex has no DNSKEY (an unsigned zone) or a record does
 *         not decode.
 */
ldns_rr_list *p53_dnssec_image_keys(const void *img, uint32_t zone);

/**
 * Check every RRset of `section` (grouped by owner and type; RRSIGs aside) against `keys`
 * at time `now`: each must have an RRSIG covering it that verifies. RRsets of type
 * `skip_type` (0: none) are not checked (the unsigned NS of a referral).
 * @param why  on failure "OWNER TYPE: reason" (no RRSIG; the ldns verdict of the last
 *             RRSIG tried: bogus signature, expired, not yet valid, no matching key...)
 * @return the number of RRsets checked (>= 0, all valid), or -1 with why set.
 */
int p53_dnssec_verify_section(const ldns_rr_list *section, const ldns_rr_list *keys, time_t now,
			      uint16_t skip_type, char *why, size_t cap);

#endif /* P53_DNSSEC_VERIFY_H */
