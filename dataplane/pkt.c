/*
 * L2/L3/L4 framing of DNS-over-UDP: parse a received frame, turn it into its reply in place.
 * See pkt.h. Worker lcores, per packet: no allocation, no locks, no syscalls, no copies of
 * the packet.
 *
 * Parsing reads the frame only through the house cursor (dataplane/wire.h, sticky error),
 * checked once per layer so that each layer reports its own drop reason. The reply path
 * trusts the struct p53_pkt that a successful parse produced and the caller's promise that
 * the buffer holds dns_off + dns_len bytes.
 */
#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/csum.h"
#include "dataplane/pkt.h"
#include "dataplane/wire.h"

const char *const p53_pkt_drop_names[P53_PKT_DROP__MAX] = {
	[P53_PKT_OK] = "ok",
	[P53_PKT_DROP_SHORT_L2] = "short_l2",
	[P53_PKT_DROP_ETHERTYPE] = "ethertype",
	[P53_PKT_DROP_SHORT_L3] = "short_l3",
	[P53_PKT_DROP_IP_HDR] = "ip_hdr",
	[P53_PKT_DROP_IP_LEN] = "ip_len",
	[P53_PKT_DROP_FRAGMENT] = "fragment",
	[P53_PKT_DROP_PROTO] = "proto",
	[P53_PKT_DROP_SHORT_L4] = "short_l4",
	[P53_PKT_DROP_UDP_LEN] = "udp_len",
	[P53_PKT_DROP_PORT] = "port",
	[P53_PKT_DROP_SRC_ADDR] = "src_addr",
	[P53_PKT_DROP_UDP_CSUM] = "udp_csum",
	[P53_PKT_DROP_DST_MAC] = "dst_mac",
	[P53_PKT_DROP_DST_ADDR] = "dst_addr",
};

#define IPV4_HLEN     20u
#define UDP_HLEN      8u
#define ETYPE_IPV4    0x0800u
#define ETYPE_IPV6    0x86DDu
#define ETYPE_VLAN    0x8100u   /* IEEE 802.1Q C-tag */
#define PROTO_UDP     17u
#define PROTO_FRAG6   44u       /* RFC 8200 §4.5 */
#define DNS_PORT      53u
#define REPLY_HOPS    64u

/* RFC 6890 special-purpose sources that can never be a real client for a unicast reply:
 * "this network" 0/8, loopback 127/8 (RFC 1122 §3.2.1.3: must not appear outside a host),
 * multicast 224/4 and reserved 240/4, which holds limited broadcast 255.255.255.255
 * (RFC 1122 §3.2.1.3: a source address must be a unicast address). */
static bool bad_src4(const uint8_t a[4])
{
	return a[0] == 0 || a[0] == 127 || a[0] >= 224;
}

/* RFC 4291 §2.5.2 unspecified ::, §2.5.3 loopback ::1 (never a source off-host), §2.7
 * multicast ff00::/8 (never a source). An IPv4-mapped source (§2.5.5.2) is judged by the
 * IPv4 rules so that ::ffff:127.0.0.1 cannot reach us as a spoofed loopback client. */
static bool bad_src6(const uint8_t a[16])
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint8_t any = 0;

	if (a[0] == 0xff)
		return true;
	for (int i = 0; i < 15; i++)
		any |= a[i];
	if (any == 0 && (a[15] == 0 || a[15] == 1))
		return true;
	if (memcmp(a, mapped, sizeof(mapped)) == 0)
		return bad_src4(a + 12);
	return false;
}

/* IPv4 header at the cursor (RFC 791 §3.1); on success the cursor is on the UDP header and
 * *l4_len holds the IP payload bytes. */
static enum p53_pkt_drop parse_ipv4(struct p53_wire *w, struct p53_pkt *out, size_t *l4_len)
{
	size_t l3_left = p53_wire_left(w);
	/* One bounds check for the whole fixed header, then fields from that span. */
	const uint8_t *h = p53_wire_take(w, IPV4_HLEN);
	if (h == NULL)
		return P53_PKT_DROP_SHORT_L3;
	uint8_t vihl = h[0];
	uint16_t total = p53_get16(h + 2);
	uint16_t frag = p53_get16(h + 6);
	uint8_t proto = h[9];
	/* Header checksum (h + 10) not verified: the Ethernet FCS covers the last hop, and the
	 * UDP pseudo-header checksum covers addresses and length. The destination (h + 16) is
	 * checked by p53_pkt_for_us(). */
	const uint8_t *src = h + 12;
	/* Options (IHL > 5) are legal but no DNS client sends them; refusing them keeps the
	 * UDP header at a fixed offset. */
	if (vihl != 0x45)
		return P53_PKT_DROP_IP_HDR;
	/* Total length covers header + payload; Ethernet may pad beyond it (60-byte minimum
	 * frame), so only "more than the frame holds" and "less than the header" are errors. */
	if (total < IPV4_HLEN || total > l3_left)
		return P53_PKT_DROP_IP_LEN;
	/* MF or a non-zero fragment offset means a fragment; DF alone is fine. */
	if ((frag & 0x3FFFu) != 0)
		return P53_PKT_DROP_FRAGMENT;
	if (proto != PROTO_UDP)
		return P53_PKT_DROP_PROTO;
	memcpy(out->src_addr, src, 4);
	/* Zero the rest so that users may hash or compare all 16 bytes (RRL, ECS). */
	memset(out->src_addr + 4, 0, sizeof(out->src_addr) - 4);
	*l4_len = total - IPV4_HLEN;
	return P53_PKT_OK;
}

/* IPv6 fixed header at the cursor (RFC 8200 §3); same contract as parse_ipv4(). */
static enum p53_pkt_drop parse_ipv6(struct p53_wire *w, struct p53_pkt *out, size_t *l4_len)
{
	const uint8_t *h = p53_wire_take(w, 40);
	if (h == NULL)
		return P53_PKT_DROP_SHORT_L3;
	uint8_t ver = h[0];
	uint16_t plen = p53_get16(h + 4);
	uint8_t next = h[6];
	const uint8_t *src = h + 8;             /* destination at h + 24: p53_pkt_for_us() */
	if ((ver >> 4) != 6)
		return P53_PKT_DROP_IP_HDR;
	/* Payload length excludes the fixed header; padding may follow it. A zero payload
	 * length (jumbogram, RFC 2675) comes only with a hop-by-hop header, refused below. */
	if (plen > p53_wire_left(w))
		return P53_PKT_DROP_IP_LEN;
	/* RFC 8200 §4.5 */
	if (next == PROTO_FRAG6)
		return P53_PKT_DROP_FRAGMENT;
	/* Extension headers are refused: UDP must follow the fixed header directly. */
	if (next != PROTO_UDP)
		return P53_PKT_DROP_PROTO;
	memcpy(out->src_addr, src, 16);
	*l4_len = plen;
	return P53_PKT_OK;
}

enum p53_pkt_drop p53_pkt_parse(const uint8_t *frame, size_t len, struct p53_pkt *out)
{
	struct p53_wire w;
	enum p53_pkt_drop rc;
	size_t l4_len = 0;

	p53_wire_init(&w, frame, len);

	/* L2: destination(6) source(6) ethertype(2), then at most one 802.1Q tag. */
	const uint8_t *eth = p53_wire_take(&w, 14);
	if (eth == NULL)
		return P53_PKT_DROP_SHORT_L2;
	uint8_t smac0 = eth[6];
	uint16_t etype = p53_get16(eth + 12);
	out->vlan = etype == ETYPE_VLAN;
	if (out->vlan) {
		const uint8_t *tag = p53_wire_take(&w, 4); /* TCI (the reply keeps it), ethertype */
		if (tag == NULL)
			return P53_PKT_DROP_SHORT_L2;
		etype = p53_get16(tag + 2);
	}
	if (etype != ETYPE_IPV4 && etype != ETYPE_IPV6)
		return P53_PKT_DROP_ETHERTYPE; /* ARP, LLDP, 802.1ad S-tag 0x88A8, a second C-tag */
	/* IEEE 802: the I/G bit set in a source MAC is invalid; a reply would go to a group. */
	if (smac0 & 0x01u)
		return P53_PKT_DROP_SRC_ADDR;

	out->l3_off = (uint16_t)p53_wire_off(&w);
	out->ipv6 = etype == ETYPE_IPV6;
	if (out->ipv6)
		rc = parse_ipv6(&w, out, &l4_len);
	else
		rc = parse_ipv4(&w, out, &l4_len);
	if (rc != P53_PKT_OK)
		return rc;

	/* UDP, RFC 768. The IP layer said how many bytes follow; all of them are the datagram. */
	out->l4_off = (uint16_t)p53_wire_off(&w);
	if (l4_len < UDP_HLEN)
		return P53_PKT_DROP_SHORT_L4;
	const uint8_t *u = p53_wire_take(&w, UDP_HLEN);
	if (u == NULL)
		return P53_PKT_DROP_SHORT_L4;
	uint16_t sport = p53_get16(u);
	uint16_t dport = p53_get16(u + 2);
	uint16_t ulen = p53_get16(u + 4);
	if (ulen < UDP_HLEN || ulen != l4_len)
		return P53_PKT_DROP_UDP_LEN;
	/* RFC 8200 §8.1: over IPv6 the checksum is mandatory, and a zero one is discarded.
	 * Its value is verified by the port or p53_pkt_udp_csum_ok() (pkt.h). */
	if (out->ipv6 && u[6] == 0 && u[7] == 0)
		return P53_PKT_DROP_UDP_CSUM;
	if (dport != DNS_PORT)
		return P53_PKT_DROP_PORT;
	/* Port 0 is reserved (RFC 6335 §6); a reply to it is never wanted. */
	if (sport == 0)
		return P53_PKT_DROP_PORT;
	if (out->ipv6 ? bad_src6(out->src_addr) : bad_src4(out->src_addr))
		return P53_PKT_DROP_SRC_ADDR;

	out->dns_off = (uint16_t)p53_wire_off(&w);
	out->dns_len = (uint16_t)(ulen - UDP_HLEN);
	out->src_port = sport;
	return P53_PKT_OK;
}

/* Swap two non-overlapping fields of at most 16 bytes; fixed sizes become a few moves. */
static inline void swap_bytes(uint8_t *a, uint8_t *b, size_t n)
{
	uint8_t t[16];

	memcpy(t, a, n);
	memcpy(a, b, n);
	memcpy(b, t, n);
}

/* UDP checksum over the pseudo-header and the datagram; 0 goes out as 0xFFFF (RFC 768). */
static inline uint16_t udp_cksum(uint64_t pseudo, const struct rte_udp_hdr *udp, uint16_t ulen)
{
	uint16_t c = (uint16_t)~p53_csum_fold(p53_csum_add((const uint8_t *)udp, ulen, pseudo));

	return c == 0 ? 0xffff : c;
}

enum p53_pkt_drop p53_pkt_for_us(const uint8_t *frame, const struct p53_pkt *pkt,
				 const uint8_t mac[6], const struct p53_pkt_addrs *addrs)
{
	const uint8_t *ip = frame + pkt->l3_off;

	/* The frame holds at least an Ethernet header (parse checked). */
	if (memcmp(frame, mac, 6) != 0)
		return P53_PKT_DROP_DST_MAC;
	if (pkt->ipv6) {
		for (uint16_t i = 0; i < addrs->n6; i++)
			if (memcmp(ip + 24, addrs->v6[i], 16) == 0)
				return P53_PKT_OK;
	} else {
		uint32_t dst;
		memcpy(&dst, ip + 16, 4);
		for (uint16_t i = 0; i < addrs->n4; i++)
			if (dst == addrs->v4[i])
				return P53_PKT_OK;
	}
	return P53_PKT_DROP_DST_ADDR;
}

bool p53_pkt_udp_csum_ok(const uint8_t *frame, const struct p53_pkt *pkt)
{
	const uint8_t *udp = frame + pkt->l4_off;
	const uint8_t *ip = frame + pkt->l3_off;
	uint16_t ulen = (uint16_t)(UDP_HLEN + pkt->dns_len);
	uint64_t sum;

	/* Pseudo-header (RFC 768; RFC 8200 §8.1), summed in native order like the reply's. */
	if (pkt->ipv6) {
		sum = p53_csum_add(ip + 8, 32, (uint64_t)rte_cpu_to_be_32(ulen) + rte_cpu_to_be_32(IPPROTO_UDP));
	} else {
		if (udp[6] == 0 && udp[7] == 0)
			return true; /* RFC 768: the sender computed no checksum */
		sum = p53_csum_add(ip + 12, 8, (uint64_t)rte_cpu_to_be_16(IPPROTO_UDP) + rte_cpu_to_be_16(ulen));
	}
	/* All ones in either byte order: native-order summing does not matter here. */
	return p53_csum_fold(p53_csum_add(udp, ulen, sum)) == 0xffff;
}

size_t p53_pkt_reply(uint8_t *frame, const struct p53_pkt *pkt, uint16_t dns_len,
		     unsigned int tx_offload)
{
	/* DPDK's IP and UDP header structs are packed, so these casts carry no alignment
	 * assumption about the frame buffer. */
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(frame + pkt->l4_off);
	uint16_t ulen = (uint16_t)(UDP_HLEN + dns_len);
	uint16_t port = udp->src_port;

	swap_bytes(frame, frame + 6, 6);
	udp->src_port = udp->dst_port;
	udp->dst_port = port;
	udp->dgram_len = rte_cpu_to_be_16(ulen);
	udp->dgram_cksum = 0;

	if (pkt->ipv6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(frame + pkt->l3_off);

		swap_bytes(ip6->src_addr, ip6->dst_addr, 16);
		/* Traffic class and flow label are the client's, for its flow (RFC 8200 §7, RFC
		 * 6437): ours start clean, and ECN marks are never echoed (RFC 3168 §6.1). */
		ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
		ip6->payload_len = rte_cpu_to_be_16(ulen);
		ip6->hop_limits = REPLY_HOPS;
		/* RFC 8200 §8.1: a zero UDP checksum is not allowed over IPv6. */
		if (tx_offload & P53_PKT_TX_UDP_CKSUM)
			udp->dgram_cksum = rte_ipv6_phdr_cksum(ip6, 0);
		else
			udp->dgram_cksum = udp_cksum(p53_csum_add(ip6->src_addr, 32,
				(uint64_t)rte_cpu_to_be_32(ulen) + rte_cpu_to_be_32(IPPROTO_UDP)), udp, ulen);
	} else {
		struct rte_ipv4_hdr *ip4 = (struct rte_ipv4_hdr *)(frame + pkt->l3_off);
		uint32_t a = ip4->src_addr;

		ip4->src_addr = ip4->dst_addr;
		ip4->dst_addr = a;
		/* DSCP and ECN were the client's marking of its query (RFC 2474, RFC 3168 §6.1:
		 * a reply must not echo ECT/CE): send ours with both clear. */
		ip4->type_of_service = 0;
		ip4->total_length = rte_cpu_to_be_16((uint16_t)(IPV4_HLEN + ulen));
		/* RFC 6864 §4.1 lets an atomic datagram carry any ID; DF is left as the client
		 * set it (parse refused MF and offsets, so only DF can be there). */
		ip4->packet_id = 0;
		ip4->time_to_live = REPLY_HOPS;
		ip4->hdr_checksum = 0;
		if ((tx_offload & P53_PKT_TX_IP_CKSUM) == 0)
			ip4->hdr_checksum = (uint16_t)~p53_csum_fold(p53_csum_add((const uint8_t *)ip4, IPV4_HLEN, 0));
		/* The helpers read total_length set above, and send a zero sum as 0xFFFF
		 * (RFC 768: zero means "no checksum"). */
		if (tx_offload & P53_PKT_TX_UDP_CKSUM)
			udp->dgram_cksum = rte_ipv4_phdr_cksum(ip4, 0);
		else
			udp->dgram_cksum = udp_cksum((uint64_t)ip4->src_addr + ip4->dst_addr +
				rte_cpu_to_be_16(IPPROTO_UDP) + rte_cpu_to_be_16(ulen), udp, ulen);
	}
	return (size_t)pkt->dns_off + dns_len;
}
