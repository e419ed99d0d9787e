/*
 * Zone-transfer configuration (docs/CONFIG.md: tsig_keys, xfr, and the secondary-zone keys of
 * a zones[] entry): TSIG keys (RFC 8945), the transfer settings, and per secondary zone its
 * primaries, who may NOTIFY it, and what an expired zone answers.
 *
 * Parsed by the config loader (control/conf/config.c names the rows; the handlers are here),
 * so pop53ctl's `config check` runs it too: no DPDK. Start-up and control thread only.
 * Secrets are kept decoded in memory and never logged or shown (p53_xfr_conf_* never print
 * them either; a bad secret is reported without its value).
 */
#ifndef P53_XFR_CONF_H
#define P53_XFR_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "control/conf/schema.h"

#define P53_TSIG_SECRET_MAX 128 /* bytes, decoded (HMAC-SHA512's block) */
#define P53_XFR_MAX_PRIMARIES 8
#define P53_XFR_MAX_ACL 32

enum p53_tsig_alg {
	P53_TSIG_HMAC_SHA1 = 0,
	P53_TSIG_HMAC_SHA224,
	P53_TSIG_HMAC_SHA256,
	P53_TSIG_HMAC_SHA384,
	P53_TSIG_HMAC_SHA512,
};

struct p53_tsig_key {
	char *name;                     /* as written, ending in '.' */
	uint8_t wire[256];              /* canonical wire form of the name */
	uint8_t wire_len;
	enum p53_tsig_alg alg;
	uint8_t secret[P53_TSIG_SECRET_MAX];
	uint16_t secret_len;
	int line;
};

struct p53_xfr_primary {
	uint8_t family;                 /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint16_t port;                  /* default 53 */
	char *key_name;                 /* NULL: unsigned */
	int key;                        /* index into tsig_keys, -1 unsigned (set by the check) */
	int line;
};

struct p53_xfr_acl {
	uint8_t family;
	uint8_t addr[16];
	uint8_t len;                    /* prefix length */
	int key;                        /* index into tsig_keys, -1: no TSIG required */
};

enum p53_on_expire {
	P53_EXPIRE_SERVFAIL = 0,        /* default: RFC 1035 §4.3.5, stop answering for it */
	P53_EXPIRE_REFUSE,
	P53_EXPIRE_KEEP,                /* keep serving the last data (not what the RFC says) */
};

/* A zones[] entry that is a secondary (has `primaries:`). */
struct p53_xfr_zone_conf {
	struct p53_xfr_primary primaries[P53_XFR_MAX_PRIMARIES];
	int n_primaries;
	bool has_notify;                /* `notify:` given; else NOTIFY is allowed from each
					   primary's address with that primary's key */
	char *notify_key;               /* notify.key, NULL: unsigned NOTIFY accepted */
	int notify_line;
	struct p53_xfr_acl acl[P53_XFR_MAX_ACL]; /* notify.from, or the primaries by default; keys
						    resolved by the check */
	int n_acl;
	bool ixfr;                      /* ask for IXFR (default true); AXFR otherwise */
	int on_expire;                  /* enum p53_on_expire */
	bool catalog;                   /* a catalog zone (RFC 9432): its members are served */
	bool file_given;                /* `file:` was written; else the default under xfr.directory */
};

struct p53_xfr_conf {
	struct p53_tsig_key *keys;      /* tsig_keys */
	int n_keys;
	char *directory;                /* xfr.directory, default /var/lib/pop53/zones */
	unsigned int threads;           /* xfr.threads, default 2 */
	unsigned int timeout_ms;        /* xfr.timeout_ms: one SOA query try, one TCP wait */
	unsigned int refresh_min_s, refresh_max_s; /* bounds on the SOA timers, RFC 1035 §4.3.5 */
	unsigned int retry_min_s, retry_max_s;
	unsigned int expire_min_s;
	struct p53_xfr_transfer_conf *transfer; /* xfr.transfer: the default for zones without
						   their own `transfer`, NULL: nobody */
	struct p53_xfr_notify_to *notify_to; /* xfr.notify_to: the default for zones without
						their own `notify_to`, NULL: none */
	uint64_t journal_max_bytes;     /* xfr.journal_max_bytes: IXFR history kept per zone
					   (default 16 MiB, 0: none; control/xfr/journal.h) */
	bool journal_set;
	unsigned int copy_sync_s;       /* xfr.copy_sync_s: the disk copy may trail the journal
					   this long (default 300, 0: rewritten at every change) */
	bool copy_sync_set;
};

/** The `tsig_keys:` top-level row handler (base: struct p53_config). */
int p53_xfr_conf_keys(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base);

/** The `xfr:` section's table (base: struct p53_xfr_conf), P53_XFR_CONF_NKEYS rows. */
#define P53_XFR_CONF_NKEYS 12
extern const struct p53_conf_key p53_xfr_conf_keys_table[P53_XFR_CONF_NKEYS];

/* zones[] row handlers (base: struct p53_config_zone). */
int p53_xfr_conf_primaries(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base);
int p53_xfr_conf_notify(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			const char *where, void *base);
int p53_xfr_conf_ixfr(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base);
int p53_xfr_conf_on_expire(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base);
int p53_xfr_conf_catalog(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			 const char *where, void *base);

struct p53_config;
struct p53_xfr_transfer_conf;
struct p53_xfr_notify_to;

/** One `{address, port, key}` map (a primary, a NOTIFY target) into p (defaults set). */
int p53_xfr_conf_remote(struct p53_conf_ctx *c, yaml_node_t *item, const char *where,
			struct p53_xfr_primary *p);

/**
 * After the whole file is read: defaults (xfr.*), key names resolved, NOTIFY ACLs built, the
 * default disk copy of secondary zones without `file:`, and the rules across keys (a zone has
 * a file or primaries; secondary keys only with primaries; min <= max).
 * @return 0, or -1 with c->err = "FILE:LINE: reason".
 */
int p53_xfr_conf_check(struct p53_conf_ctx *c, struct p53_config *cfg);

/** Index of a key by name (case-insensitive, with or without the final dot), or -1. */
int p53_xfr_key_find(const struct p53_xfr_conf *x, const char *name);

/** Name of an algorithm as in the TSIG record ("hmac-sha256."). */
const char *p53_tsig_alg_name(enum p53_tsig_alg alg);

void p53_xfr_zone_conf_free(struct p53_xfr_zone_conf *z);
void p53_xfr_conf_free(struct p53_xfr_conf *x);

/**
 * The disk copy path of a zone without `file:`: DIR/NAME.zone, with '/' and bytes that are not
 * printable ASCII written as %XX. malloc'd, NULL when out of memory.
 */
char *p53_xfr_default_file(const char *dir, const char *zone);

/** A domain name to canonical (lower-case) wire form, at most 255 octets; -1 when it is not one. */
int p53_xfr_name_wire(const char *s, uint8_t *out, uint8_t *len);

/** The socket address of a peer (family AF_INET or AF_INET6, addr 4 or 16 octets). */
socklen_t p53_xfr_peer_sa(int family, const uint8_t *addr, uint16_t port,
			  struct sockaddr_storage *ss);

/** A peer as "192.0.2.1:53" or "[2001:db8::1]:53", written into buf; returns buf. */
const char *p53_xfr_peer_str(int family, const uint8_t *addr, uint16_t port, char *buf,
			     size_t cap);

#endif /* P53_XFR_CONF_H */
