// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * XDP steering program: the split between the DPDK workers and the kernel.
 *
 * Loaded by the net_af_xdp PMD through its xdp_prog= devarg (one copy per interface). A frame
 * goes to the AF_XDP socket of its receive queue only when it is UDP to port 53 on one of the
 * service addresses; everything else (ARP, ND, ICMP, TCP/53, BGP, SSH, UDP to other ports or
 * addresses, fragments) passes to the kernel, which is why the appliance needs no exception
 * path in xdp mode.
 *
 * Maps, found by name from user space:
 *   xsks_map   the PMD inserts its AF_XDP socket at key = rx queue index (name fixed by DPDK).
 *   p53_addrs  service addresses, filled by the control thread (control/net/xdp.c) after the port
 *              starts; key is 16 bytes, IPv4 as the IPv4-mapped IPv6 address ::ffff:a.b.c.d.
 *              Empty map = nothing is steered (safe default: the kernel keeps everything).
 *
 * Runs in the kernel per packet; every read is checked against data_end for the verifier.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define P53_XSKS_MAX    64
#define P53_ADDRS_MAX   64
#define P53_DNS_PORT    53

#ifndef ETH_P_8021Q
#define ETH_P_8021Q     0x8100
#endif

/* IPv4 flags/offset field: a nonzero offset carries no UDP header, and a first fragment
 * (MF set) cannot be answered by a worker (it does not reassemble), so every fragment goes
 * to the kernel, which can reassemble the whole datagram. */
#define P53_IP_MF       0x2000
#define P53_IP_OFFMASK  0x1fff

struct p53_addr_key {
	__u8 bytes[16];
};

struct vlan_tag {
	__be16 tci;
	__be16 proto;           /* the encapsulated ethertype */
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, P53_XSKS_MAX);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, P53_ADDRS_MAX);
	__type(key, struct p53_addr_key);
	__type(value, __u32);
} p53_addrs SEC(".maps");

static __always_inline int is_dns(const struct udphdr *udp)
{
	return udp->dest == bpf_htons(P53_DNS_PORT);
}

static __always_inline int is_service(const struct p53_addr_key *key)
{
	return bpf_map_lookup_elem(&p53_addrs, key) != NULL;
}

/* IPv4 at l3; returns 1 when the frame is UDP/53 to a service address. */
static __always_inline int steer_ipv4(void *l3, void *data_end)
{
	struct iphdr *ip = l3;
	struct p53_addr_key key = {};
	struct udphdr *udp;
	__u32 ihl;

	if ((void *)(ip + 1) > data_end)
		return 0;
	if (ip->version != 4 || ip->ihl < 5 || ip->protocol != IPPROTO_UDP)
		return 0;
	if (ip->frag_off & bpf_htons(P53_IP_MF | P53_IP_OFFMASK))
		return 0;
	/* Options are steered too: the worker counts and drops them (dataplane/pkt.h), which
	 * is more visible than the kernel's port-unreachable. */
	ihl = ip->ihl * 4;
	udp = l3 + ihl;
	if ((void *)(udp + 1) > data_end)
		return 0;
	if (!is_dns(udp))
		return 0;
	key.bytes[10] = 0xff;
	key.bytes[11] = 0xff;
	__builtin_memcpy(&key.bytes[12], &ip->daddr, 4);
	return is_service(&key);
}

/* IPv6 at l3. Only UDP as the first next header is steered: the worker drops extension
 * headers (and fragment headers, RFC 8200 section 4.5), the kernel handles them properly. */
static __always_inline int steer_ipv6(void *l3, void *data_end)
{
	struct ipv6hdr *ip6 = l3;
	struct p53_addr_key key;
	struct udphdr *udp;

	if ((void *)(ip6 + 1) > data_end)
		return 0;
	if (ip6->version != 6 || ip6->nexthdr != IPPROTO_UDP)
		return 0;
	udp = (void *)(ip6 + 1);
	if ((void *)(udp + 1) > data_end)
		return 0;
	if (!is_dns(udp))
		return 0;
	__builtin_memcpy(key.bytes, &ip6->daddr, 16);
	return is_service(&key);
}

SEC("xdp")
int p53_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	void *l3;
	__be16 proto;
	int hit;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	proto = eth->h_proto;
	l3 = eth + 1;
	/* One 802.1Q tag, as the worker parses; QinQ stays with the kernel. */
	if (proto == bpf_htons(ETH_P_8021Q)) {
		struct vlan_tag *tag = l3;

		if ((void *)(tag + 1) > data_end)
			return XDP_PASS;
		proto = tag->proto;
		l3 = tag + 1;
	}

	if (proto == bpf_htons(ETH_P_IP))
		hit = steer_ipv4(l3, data_end);
	else if (proto == bpf_htons(ETH_P_IPV6))
		hit = steer_ipv6(l3, data_end);
	else
		hit = 0;
	if (!hit)
		return XDP_PASS;
	/* No socket on this queue (the PMD uses fewer queues than the NIC has): the flags
	 * argument makes the kernel keep the packet instead of dropping it. */
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
