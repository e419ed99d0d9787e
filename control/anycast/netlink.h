/*
 * The kernel side of the frr announcer: non-persistent tun devices that pop53d holds open
 * (the kernel deletes a tun device without IFF_PERSIST when its last descriptor closes, so
 * the addresses on it, and FRR's connected routes for them, never outlive the process), and
 * netlink (libmnl) requests to bring a link up and add or remove an address. Each request
 * waits for the kernel's ack, which comes at once. Control thread only.
 */
#ifndef P53_ANYCAST_NETLINK_H
#define P53_ANYCAST_NETLINK_H

#include <stdbool.h>
#include <stddef.h>

#include "control/anycast/conf.h"

struct mnl_socket;

/**
 * Create (or take over and make non-persistent) the tun device `name`, non-blocking and
 * close-on-exec.
 * @return its fd (ifindex set), or -1 with err set.
 */
int p53_tun_open(const char *name, int *ifindex, char *err, size_t errlen);

/** A NETLINK_ROUTE socket, or NULL with err set. */
struct mnl_socket *p53_nl_open(char *err, size_t errlen);

/** Set IFF_UP on ifindex. @return 0 or -1 with err set. */
int p53_nl_link_up(struct mnl_socket *nl, int ifindex, char *err, size_t errlen);

/**
 * Add (replace) or delete the address of prefix p (its length as the prefix length) on
 * ifindex; IPv6 without duplicate address detection. Deleting an absent address succeeds.
 * @return 0 or -1 with err set.
 */
int p53_nl_addr(struct mnl_socket *nl, bool add, int ifindex, const struct p53_prefix *p,
		char *err, size_t errlen);

/**
 * p53_nl_addr() adding with a route metric (IFA_RT_PRIORITY, `ip addr add ... metric N`):
 * the metric of the address's prefix route, which zebra also gives the connected route it
 * makes of the address. 0 is the kernel's default.
 */
int p53_nl_addr_metric(struct mnl_socket *nl, bool add, int ifindex, const struct p53_prefix *p,
		       uint32_t metric, char *err, size_t errlen);

/** Read and drop whatever the kernel routed into the tun device (IPv6 RS, MLD). */
void p53_tun_discard(int fd);

#endif /* P53_ANYCAST_NETLINK_H */
