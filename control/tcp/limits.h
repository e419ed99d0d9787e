/*
 * Connection admission for the TCP server: at most tcp.max_connections open in all, and at most
 * tcp.max_per_client from one client address (RFC 7766 §6.2.2 leaves both limits to the server).
 * Shared by the TCP threads, since SO_REUSEPORT spreads one client's connections over all of
 * them: one mutex, taken once per connection accepted or closed, never per message.
 *
 * The per-address counts live in an open-addressing table with linear probing, sized at
 * twice tcp.max_connections (a power of two), so it never fills; deletion shifts entries back
 * instead of leaving tombstones. Thread-safe.
 */
#ifndef P53_TCP_LIMITS_H
#define P53_TCP_LIMITS_H

#include <pthread.h>
#include <stdint.h>

#include "control/conf/config.h"
#include "control/tcp/tcp_stats.h"

struct p53_tcp_client {
	uint8_t family;                 /* AF_INET, AF_INET6; 0 = empty slot */
	uint8_t addr[16];
	uint32_t open;                  /* connections open from this address */
};

struct p53_tcp_limits {
	pthread_mutex_t lock;
	unsigned int max_total;
	unsigned int max_per_client;
	unsigned int total;             /* connections open, all threads */
	uint32_t mask;                  /* slots - 1 */
	struct p53_tcp_client *slots;
};

/** @return 0, or -1 (out of memory). */
int p53_tcp_limits_init(struct p53_tcp_limits *l, unsigned int max_total,
			unsigned int max_per_client);

/** Free the table; nobody may use it any more. */
void p53_tcp_limits_fini(struct p53_tcp_limits *l);

/**
 * Admit one more connection from `a`.
 * @return 0 (counted: call p53_tcp_limits_put() when it closes), or -1 with *why set.
 */
int p53_tcp_limits_take(struct p53_tcp_limits *l, const struct p53_addr *a,
			enum p53_tcp_refuse *why);

/** A connection that p53_tcp_limits_take() admitted has closed. */
void p53_tcp_limits_put(struct p53_tcp_limits *l, const struct p53_addr *a);

/** Connections open from `a` (tests and diagnostics). */
unsigned int p53_tcp_limits_open(struct p53_tcp_limits *l, const struct p53_addr *a);

#endif /* P53_TCP_LIMITS_H */
