/*
 * XDP steering, user-space side: the interface's XDP program (dataplane/bpf/steer.bpf.c) and
 * its service-address map.
 *
 * In xdp mode the net_af_xdp PMD loads and attaches steer.bpf.o itself (xdp_prog= devarg) and
 * fills xsks_map with its sockets; pop53 only has to
 *   - before the port starts: remove an XDP program a crashed run or knotd left on the
 *     interface, or the PMD cannot attach ("Existing program is not using a dispatcher");
 *   - after rte_eth_dev_start(): put the service addresses into the program's p53_addrs map,
 *     found through the attached program (the PMD does not pin or export it). An empty map
 *     steers nothing, so until this runs the kernel keeps all traffic.
 *
 * Control thread only (netlink and bpf syscalls; not thread-safe against itself). The calling
 * thread must be in the network namespace of the interface. Needs CAP_NET_ADMIN and
 * CAP_BPF/CAP_SYS_ADMIN. Errors are also written to stderr, prefixed "xdp: ".
 */
#ifndef P53_XDP_H
#define P53_XDP_H

#include <stddef.h>
#include <stdint.h>

#include "control/conf/config.h"

/**
 * Detach a stale pop53 steering program (one a crashed pop53d left) from an interface, in
 * any mode (skb, driver, hw), logging "xdp: detached stale XDP program id N from IFACE".
 * Also detached: libxdp's default program (xsk_def_prog, or its xdp_dispatcher) when its id
 * is left_id, the program our own earlier dpdk-mode run recorded (control/net/xdp_owner.h),
 * logging "xdp: detached libxdp's program 'xsk_def_prog' id N from IFACE, left by pop53d's
 * earlier dpdk-mode run".
 * A foreign program (knotd's, kxdpgun's, another AF_XDP application's xsk_def_prog, anything
 * else) is never removed: that is -EEXIST, with a message naming it, and pop53d refuses to
 * start.
 *
 * @param ifname  interface name, e.g. "p53p"
 * @param left_id the program id an earlier dpdk-mode run left (0: none)
 * @return 0 (also when nothing was attached), -ENODEV if there is no such interface,
 *         -EEXIST for a foreign program, or the negative errno of the failed netlink
 *         query/detach (-EBUSY when the program is held by a bpf_link, which only its owner
 *         can release).
 */
int p53_xdp_detach_stale(const char *ifname, uint32_t left_id);

/**
 * Make the service addresses of the XDP program attached to ifname exactly addrs[0..n).
 * Adds the new addresses before removing the old ones, so a reload never has a moment when
 * a kept address is not steered. IPv4 is stored as ::ffff:a.b.c.d.
 *
 * @param ifname  interface the PMD attached steer.bpf.o to
 * @param addrs   AF_INET or AF_INET6 addresses
 * @param n       0..P53_CONFIG_MAX_ADDRS (the map holds 64)
 * @return 0, or
 *         -ENODEV  no such interface,
 *         -ENOENT  no XDP program attached, or it has no map named p53_addrs
 *                  (not our steer.bpf.o),
 *         -EINVAL  bad family, n out of range, or the map has the wrong key/value size,
 *         -E2BIG   more addresses than the map holds,
 *         other negative errno from the bpf syscalls.
 */
int p53_xdp_set_addrs(const char *ifname, const struct p53_addr *addrs, int n);

/**
 * Interface name of a net_af_xdp device string, e.g. "p53p" from
 * "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1".
 *
 * @return buf holding the name, or NULL if devstr is not a net_af_xdp vdev, has no iface=,
 *         or the name does not fit in len bytes. Pure string work, any thread.
 */
const char *p53_xdp_iface_from_devargs(const char *devstr, char *buf, size_t len);

#endif /* P53_XDP_H */
