/*
 * What a config edit means for the zone image: does the new config file differ from the
 * running one in anything the image compile (control/zone/compile.c, control/xfr/update.c)
 * or the replicas' publish (control/publish.c) read?
 *
 * Both files are composed by libyaml and their node trees compared, so comments, blank lines,
 * key order in a mapping and moved lines do not count; a value, a list item or a key added or
 * removed does, unless it sits where nothing the image holds comes from. Runtime-only (a
 * reload applies them without touching the image): metrics, health, anycast, tcp, rrl, cookies,
 * server.{control_socket,control_group,replicas,watch_zones,watch_debounce_ms} and every
 * dataplane key but `addresses` (those need a restart and keep their running value).
 * Everything else counts, whole, including a top-level key this file does not know: zones,
 * steering, dnssec, xfr, tsig_keys, server.{identity,version,edns_max_payload} and
 * dataplane.addresses (the last four travel with the replicas, so they need a publish).
 *
 * Control thread (or any thread: no shared state); allocates only while it compares.
 */
#ifndef P53_CONFIG_DIFF_H
#define P53_CONFIG_DIFF_H

#include <stddef.h>

/**
 * Read a whole (regular) file into a malloc'd buffer, NUL-terminated.
 * @return 0, or -1 (errno set; *buf NULL).
 */
int p53_config_text_read(const char *path, char **buf, size_t *len);

/**
 * Compare two texts of the config file `path` (as loaded before, as it is now).
 *
 * @param why  on 1: the first compile-relevant difference, "zones[1] (b.test.).file changed
 *             (path:LINE)" (LINE in the new text); on -1: why the texts could not be compared
 * @return 0 (the image needs nothing new), 1 (it does: compile in full) or -1 (a text does not
 *         parse, or out of memory: treat as 1).
 */
int p53_config_compile_diff(const char *path, const char *old_text, size_t old_len,
			    const char *new_text, size_t new_len, char *why, size_t whylen);

#endif /* P53_CONFIG_DIFF_H */
