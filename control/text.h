/*
 * Text forms for logs and replies: what the control thread prints about data-plane objects
 * (domain names in wire form, for now). Uses stdio, so it lives here and not in dataplane/.
 * Control thread and start-up only.
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

#endif /* P53_TEXT_H */
