/*
 * The config schema: how a section of the YAML file is described and checked.
 *
 * A section is a table of struct p53_conf_key rows: the key's name, a handler that checks the
 * value and stores it, where it goes (an offset into the section's struct), and its limits.
 * walk (p53_conf_map) catches unknown, duplicate and missing required keys for every table
 * alike, so a concern (health, anycast, rrl, tcp...) describes its own section in its own file
 * with its own struct, and control/conf/config.c only names the section at the top level.
 *
 * Every error is "FILE:LINE: path.to.key: reason" (docs/CONFIG.md, Errors). Handlers either
 * store a value or fail; on failure the caller frees the whole config (p53_config_free), so a
 * handler never needs to undo what it stored. Control thread and start-up only; no global state.
 */
#ifndef P53_CONF_SCHEMA_H
#define P53_CONF_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <yaml.h>

#define P53_CONF_WHERE_MAX 96   /* longest dotted key path, e.g. "dataplane.addresses[63]" */
#define P53_CONF_MAX_KEYS  24   /* keys in the largest table */

/* Where the walk is: the file, the document, the key being handled (for its line). */
struct p53_conf_ctx {
	const char *path;       /* as the caller gave it: errors say what the operator typed */
	yaml_document_t *doc;
	const yaml_node_t *key; /* key of the value being handled */
	char *err;
	size_t errlen;
};

struct p53_conf_key;
typedef int (*p53_conf_fn)(struct p53_conf_ctx *c, const struct p53_conf_key *k,
			   yaml_node_t *v, const char *where, void *base);

struct p53_conf_key {
	const char *name;
	p53_conf_fn fn;
	size_t off;                     /* field offset in *base */
	size_t size;                    /* field size, for integers */
	unsigned long min, max;         /* integer range */
	bool required;
	const struct p53_conf_key *sub; /* nested section (p53_conf_section) */
	size_t nsub;
	const char *const *names;       /* p53_conf_enum: NULL-terminated words, stored as int */
};

/* A table row's field: CONF(struct type, field). */
#define P53_CONF_FIELD(type, f) .off = offsetof(type, f), .size = sizeof(((type *)0)->f)
#define P53_CONF_SECTION(t) .fn = p53_conf_section, .sub = (t), .nsub = sizeof(t) / sizeof((t)[0])
#define P53_CONF_NKEYS(t) (sizeof(t) / sizeof((t)[0]))

/* Failing. Each returns -1 with c->err = "FILE:LINE: ..." (LINE of node n). */
int p53_conf_fail(struct p53_conf_ctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** "WHERE: expected WHAT, got 'VALUE'" */
int p53_conf_expected(struct p53_conf_ctx *c, const yaml_node_t *n, const char *where,
		      const char *what);

/** YAML 1.1 null (`key:`, `~`, `null`) but not the quoted string "null". */
bool p53_conf_is_null(const yaml_node_t *n);

/** A non-null scalar without NUL bytes; *out points into the document. */
int p53_conf_string_of(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		       const char **out);

/** Decimal digits only, in [k->min, k->max]. */
int p53_conf_uint_of(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		     const struct p53_conf_key *k, unsigned long *out);

/** Number of items of a sequence node, or -1 with "expected WHAT" when it is not one. */
int p53_conf_seq_len(struct p53_conf_ctx *c, yaml_node_t *v, const char *where, const char *what);

/** Item i of a sequence node (0 <= i < p53_conf_seq_len). */
yaml_node_t *p53_conf_seq_item(struct p53_conf_ctx *c, yaml_node_t *v, int i);

/**
 * An IPv4 or IPv6 prefix "a.b.c.d/len" or "x::/len" (a bare address is a host prefix).
 * Bits set past the length are an error (a typo like 10.1.2.3/8 usually is).
 * @param bytes  16 bytes out, network order, IPv4 in the first 4
 * @return 0, or -1 with the error set.
 */
int p53_conf_prefix_of(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		       uint8_t *family, uint8_t bytes[16], uint8_t *len);

/** Check one mapping against its table (unknown, duplicate, missing keys), calling handlers. */
int p53_conf_map(struct p53_conf_ctx *c, yaml_node_t *map, const struct p53_conf_key *keys,
		 size_t nkeys, const char *where, const yaml_node_t *parent, void *base);

/* Handlers for table rows. Each stores into (char *)base + k->off. */
int p53_conf_uint(struct p53_conf_ctx *, const struct p53_conf_key *, yaml_node_t *, const char *, void *);
int p53_conf_pow2(struct p53_conf_ctx *, const struct p53_conf_key *, yaml_node_t *, const char *, void *);
int p53_conf_bool(struct p53_conf_ctx *, const struct p53_conf_key *, yaml_node_t *, const char *, void *);
/** A non-empty string, strdup'd into a char * field (freed by the section's owner). */
int p53_conf_string(struct p53_conf_ctx *, const struct p53_conf_key *, yaml_node_t *, const char *, void *);
/** A path, relative ones taken from the config file's directory; strdup'd. */
int p53_conf_path(struct p53_conf_ctx *, const struct p53_conf_key *, yaml_node_t *, const char *, void *);
/** A unix socket path (fits sun_path); strdup'd. */
int p53_conf_sockpath(struct p53_conf_ctx *, const struct p53_conf_key *, yaml_node_t *, const char *, void *);
/** "address:port" or "[v6]:port" with a literal address; strdup'd. */
int p53_conf_listen(struct p53_conf_ctx *, const struct p53_conf_key *, yaml_node_t *, const char *, void *);
/** One of k->names, stored as its index into an int (or enum) field. */
int p53_conf_enum(struct p53_conf_ctx *, const struct p53_conf_key *, yaml_node_t *, const char *, void *);
/** A nested section: k->sub walked over the same base. */
int p53_conf_section(struct p53_conf_ctx *, const struct p53_conf_key *, yaml_node_t *, const char *, void *);

/** Store an integer of k->size bytes (1, 2, 4 or 8). */
void p53_conf_store_uint(void *field, size_t size, unsigned long x);

/** strdup s into *field (freeing what was there); -1 with "out of memory" on failure. */
int p53_conf_set_string(struct p53_conf_ctx *c, yaml_node_t *v, char **field, const char *s);

/**
 * Open a file that a config names (the config itself, zone files, $INCLUDEs, maps) for
 * reading, refusing anything that is not a regular file without blocking on it: a FIFO or a
 * device would hang the reader, a directory gives vague errors later.
 * @return the stream, or NULL with errno set (EINVAL for "not a regular file").
 */
FILE *p53_fopen_regular(const char *path);

#endif /* P53_CONF_SCHEMA_H */
