/*
 * Text forms for logs and replies: what the control thread prints about data-plane objects
 * (domain names in wire form, record types). Uses stdio and ldns, so it lives here and not
 * in dataplane/. Control thread and start-up only.
 */
#ifndef P53_TEXT_H
#define P53_TEXT_H

#include <stddef.h>
#include <stdint.h>

/**
 * Write a wire name as presentation text with a trailing dot (RFC 1035 §5.1 escapes: "\."
 * and "\\" for those bytes in a label, "\DDD" for bytes outside printable ASCII).
 *
 * @param dst   output buffer; always NUL-terminated when cap > 0 (cut short when too small)
 * @param cap   its size
 * @param name  uncompressed wire name
 * @return dst
 */
char *p53_name_to_str(char *dst, size_t cap, const uint8_t *name);

/**
 * A record type's mnemonic for messages ("A", "RRSIG", "OPT"), ldns's, or the RFC 3597 §5
 * form "TYPEnnn" where ldns has none.
 *
 * @param dst   buffer for the TYPEnnn form (cap 16 holds any)
 * @param cap   its size
 * @param type  the type's number
 * @return the mnemonic: a static string, or dst
 */
const char *p53_type_to_str(char *dst, size_t cap, uint16_t type);

#endif /* P53_TEXT_H */
