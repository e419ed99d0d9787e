/*
 * Network probes (GSLB monitors): a TCP connect, an HTTP GET, an HTTPS GET (HTTP over TLS,
 * OpenSSL) and a DNS query over UDP or TCP, each run from one non-blocking socket that
 * p53_probe_poll() advances every control tick (connect, TLS handshake, send, read) until it
 * has a verdict or its deadline passes. Nothing here waits: every socket call is non-blocking,
 * the TLS calls are driven by the WANT_READ/WANT_WRITE they return, and a poll() has a zero
 * timeout, so a probe to a host that never answers costs the control loop nothing but its
 * socket until the timeout.
 *
 * The same shape as the child processes of proc.h (start, poll, kill, describe), so the
 * scheduler that runs a command check (control/steer/steer_pub.c for steering targets) runs a
 * probe the same way: one in flight per check, started every interval, its verdict fed into
 * the rise/fall counts.
 *
 * The config half (struct p53_probe_conf, p53_probe_conf_map) is parsed by the config loader
 * and linked into pop53ctl's `config check` (probe_conf.c, no DPDK, no sockets); the runtime
 * half (probe.c) runs on the control thread only.
 */
#ifndef P53_HEALTH_PROBE_H
#define P53_HEALTH_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/conf/schema.h"

#define P53_PROBE_HTTP_MAX 16384        /* bytes of an HTTP response read at most */
#define P53_PROBE_WHY_MAX  200
#define P53_PROBE_DNS_HEAD 512          /* dns over tcp: bytes of a reply read at most */

/* check.type; the order is the config's word list (probe_conf.c). */
enum p53_probe_type { P53_PROBE_COMMAND = 0, P53_PROBE_TCP, P53_PROBE_HTTP, P53_PROBE_DNS,
		      P53_PROBE_HTTPS, P53_PROBE_NTYPES };

extern const char *const p53_probe_type_names[];

/* A `check:` mapping (docs/CONFIG.md, steering: .pool[].check). */
struct p53_probe_conf {
	bool set;                       /* the check was a mapping (else a command string or none) */
	int type;                       /* enum p53_probe_type */
	char *address;                  /* check.address as written; NULL: the target's */
	uint8_t family;                 /* 4 or 6, filled from the target's when NULL */
	uint8_t addr[16];
	unsigned int port;              /* tcp: required; http 80, https 443, dns 53 */
	char *path;                     /* http(s): default "/" */
	char *host;                     /* http(s): Host header, default the address; https: the
					 * SNI and the name the certificate must hold */
	unsigned int status;            /* http(s): expected status, default 200 */
	char *body;                     /* http(s): a substring the body must hold, or NULL */
	bool tls_verify;                /* https: verify the certificate (default true) */
	char *ca_file;                  /* https: trusted CAs (PEM), NULL: the system store */
	bool tcp;                       /* dns: transport tcp (RFC 7766 length prefix) */
	char *qname;                    /* dns: required */
	uint8_t *qwire;                 /* dns: qname in wire form (qwire_len bytes), malloc'd */
	uint8_t qwire_len;
	uint16_t qtype;                 /* dns: default SOA */
	int rcode;                      /* dns: expected RCODE, default NOERROR */
	bool answer;                    /* dns: the answer section must not be empty */
	char *command;                  /* command: run with sh -c, exit 0 = healthy */
	uint64_t interval_ms;           /* 0: not given (the target's check_interval_ms) */
	uint64_t timeout_ms;            /* 0: not given (the target's check_timeout_ms) */
	unsigned int rise, fall;        /* 0: not given (the target's rise, fall) */
	int line;
};

/**
 * The `check:` mapping's handler: the keys of docs/CONFIG.md into `pc` (base), with the
 * per-type rules checked (a key of another type, a missing port or qname, timeout above
 * interval...). The address, when absent, is the caller's to fill.
 * @return 0, or -1 with c->err = "file:line: reason".
 */
int p53_probe_conf_map(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		       struct p53_probe_conf *pc);

/** Equal in every key (a reload keeps a target's health only for the same check). */
bool p53_probe_conf_same(const struct p53_probe_conf *a, const struct p53_probe_conf *b);

void p53_probe_conf_free(struct p53_probe_conf *pc);

struct ssl_st;
struct ssl_ctx_st;
struct ssl_session_st;

/* One probe in flight. */
struct p53_probe {
	int fd;                         /* -1 when nothing runs */
	int phase;                      /* probe.c: connecting, handshaking, sending, reading */
	short want;                     /* https: the poll events OpenSSL last asked for */
	uint64_t started_ms, deadline_ms;
	uint8_t *buf;                   /* http(s): the request, then the response; dns: the
					 * query (tcp: length-prefixed, then the reply's head) */
	size_t len, sent;
	size_t rlen;                    /* dns over tcp: reply bytes read (prefix included) */
	struct ssl_st *ssl;             /* https: this connection's TLS, NULL otherwise */
	struct ssl_ctx_st *tls;         /* https: the context (CA store loaded once), kept across
					 * runs of the same check; freed by p53_probe_kill */
	/* https: the TLS session the server gave on the last successful handshake, offered on
	 * the next run (resumption: no certificate chain, one round trip less for TLS 1.2);
	 * dropped by p53_probe_kill (reload, target removed), after a failed handshake, and
	 * before a run whose verification settings or server name differ from its own. */
	struct ssl_session_st *session;
	uint64_t tls_key;               /* this run's verification settings and name (hashed) */
	uint64_t session_key;           /* the session's */
	uint64_t tls_full, tls_resumed; /* https: completed handshakes, full or resumed */
	uint16_t id;                    /* dns: the query's ID */
	bool ok;                        /* the verdict, once finished */
	uint64_t took_ms;               /* how long the finished probe took */
	char why[P53_PROBE_WHY_MAX];    /* how it ended: "HTTP 503", "connect: refused"... */
};

void p53_probe_init(struct p53_probe *p);

/**
 * Start a probe of `c` (not a command one). Opens a non-blocking socket and begins the connect.
 * @return 0 while it runs; 1 when it finished at once (a socket error: p->ok false, p->why).
 */
int p53_probe_start(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t timeout_ms,
		    uint64_t now_ms);

/**
 * Advance a running probe without blocking; fail it once the deadline passed.
 * @return 1 when it has finished (p->ok, p->why, p->took_ms set; the socket closed), 0 while
 *         it runs or when none runs.
 */
int p53_probe_poll(struct p53_probe *p, const struct p53_probe_conf *c, uint64_t now_ms);

static inline bool p53_probe_running(const struct p53_probe *p)
{
	return p->fd >= 0;
}

/**
 * Abandon a running probe (close its socket, free its TLS) and free the TLS context and the
 * session kept for the check: call it when the check goes away (reload, shutdown). Safe when
 * none runs.
 */
void p53_probe_kill(struct p53_probe *p);

#endif /* P53_HEALTH_PROBE_H */
