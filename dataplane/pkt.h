/*
 * L2/L3/L4 framing of a DNS-over-UDP packet: parse Ethernet (optionally one 802.1Q tag),
 * IPv4 or IPv6, and UDP; then turn the same buffer into the reply in place (swap MACs,
 * addresses and ports, set lengths, fix the IPv4 header checksum and the UDP checksum).
 *
 * Works on a flat byte buffer so that unit tests and the replay benchmark use the exact code
 * the workers run; the worker passes rte_pktmbuf_mtod() and the mbuf's data/tail room.
 * Runs on worker lcores per packet: no allocation, no locks, no syscalls.
 */
#ifndef P53_PKT_H
#define P53_PKT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Why a frame was dropped. Each has a per-worker counter (p53_worker_stats.drop, worker.h). */
enum p53_pkt_drop {
	P53_PKT_OK = 0,
	P53_PKT_DROP_SHORT_L2,      /* truncated Ethernet or 802.1Q header */
	P53_PKT_DROP_ETHERTYPE,     /* not IPv4/IPv6 (or QinQ: more than one tag) */
	P53_PKT_DROP_SHORT_L3,      /* truncated IPv4/IPv6 header */
	P53_PKT_DROP_IP_HDR,        /* IPv4 version/IHL wrong, IPv4 options (IHL != 5), IPv6 version */
	P53_PKT_DROP_IP_LEN,        /* IP total/payload length disagrees with the frame */
	P53_PKT_DROP_FRAGMENT,      /* IPv4 MF or offset set; IPv6 fragment header */
	P53_PKT_DROP_PROTO,         /* not UDP (IPv6 extension headers included) */
	P53_PKT_DROP_SHORT_L4,      /* truncated UDP header */
	P53_PKT_DROP_UDP_LEN,       /* UDP length disagrees with the IP payload */
	P53_PKT_DROP_PORT,          /* destination port not 53; source port 0 */
	P53_PKT_DROP_SRC_ADDR,      /* source is broadcast, multicast, unspecified or loopback;
				       source MAC is multicast/broadcast */
	P53_PKT_DROP_UDP_CSUM,      /* UDP checksum wrong (port offload or software), or zero
				       over IPv6 (RFC 8200 §8.1) */
	P53_PKT_DROP_DST_MAC,       /* destination MAC not the port's (group addresses too) */
	P53_PKT_DROP_DST_ADDR,      /* destination IP not a service address (dataplane.addresses) */
	P53_PKT_DROP__MAX
};

/** Names of enum p53_pkt_drop, for counters and logs ("short_l2", ...). */
extern const char *const p53_pkt_drop_names[P53_PKT_DROP__MAX];

/* A parsed frame. Offsets are from the start of the frame buffer. */
struct p53_pkt {
	uint16_t l3_off;            /* IP header */
	uint16_t l4_off;            /* UDP header */
	uint16_t dns_off;           /* DNS message = UDP payload */
	uint16_t dns_len;           /* UDP payload bytes (from the UDP length field) */
	uint8_t  ipv6;              /* 1 for IPv6 */
	uint8_t  vlan;              /* 1 when one 802.1Q tag is present */
	uint8_t  src_addr[16];      /* client address: 4 bytes for IPv4, 16 for IPv6 */
	uint16_t src_port;          /* host order */
};

/**
 * Parse a received frame.
 *
 * Checks, in order: L2 length and ethertype (one 802.1Q tag allowed), source MAC not
 * group; IP version, IPv4 IHL == 5 (options are refused: RFC 791 allows them but no DNS client
 * sends them and they only cost), IP lengths against the frame (trailing Ethernet padding
 * beyond the IP total length is allowed), fragments, protocol UDP, UDP length against the IP
 * payload, an IPv6 UDP checksum that is not zero (RFC 8200 §8.1), destination port 53,
 * source port not 0, source address not broadcast (IPv4 255.255.255.255 or the limited
 * class), multicast, unspecified or loopback.
 * Does not verify the UDP checksum itself: the port may have done it (receive offload), else
 * the caller runs p53_pkt_udp_csum_ok().
 *
 * @param frame  first byte of the Ethernet header
 * @param len    bytes in the frame
 * @param out    filled on success
 * @return P53_PKT_OK, or the drop reason.
 */
enum p53_pkt_drop p53_pkt_parse(const uint8_t *frame, size_t len, struct p53_pkt *out);

#define P53_PKT_MAX_ADDRS 64 /* as P53_CONFIG_MAX_ADDRS */

/* The addresses queries may be sent to: the port's MAC and the service addresses. The MAC is
 * the port's for its lifetime; the addresses change on a config reload, so they travel in
 * the replica (replica.h). */
struct p53_pkt_addrs {
	uint16_t n4, n6;
	uint32_t v4[P53_PKT_MAX_ADDRS];         /* as on the wire (network order) */
	uint8_t v6[P53_PKT_MAX_ADDRS][16];
};

/**
 * Is a frame p53_pkt_parse() accepted addressed to us? Ports other than net_af_xdp (whose XDP
 * program steers only the service addresses) hand us whatever the wire carries: broadcast
 * and multicast frames, frames for other hosts in promiscuous mode, other local addresses.
 * A reply to those would come from an address that is not ours (ff:ff:ff:ff:ff:ff for a
 * broadcast query).
 *
 * @param mac   the port's unicast MAC; a group destination MAC never equals it
 * @param addrs the service addresses
 * @return P53_PKT_OK, P53_PKT_DROP_DST_MAC or P53_PKT_DROP_DST_ADDR.
 */
enum p53_pkt_drop p53_pkt_for_us(const uint8_t *frame, const struct p53_pkt *pkt,
				 const uint8_t mac[6], const struct p53_pkt_addrs *addrs);

/**
 * Verify the UDP checksum of a frame p53_pkt_parse() accepted, in software (RFC 768, RFC
 * 1071): the one's complement sum of the pseudo-header and the whole datagram, checksum
 * included, must be all ones. An IPv4 checksum of 0 means the sender computed none (RFC 768)
 * and passes; over IPv6 the parser already refused 0.
 *
 * @return true when the datagram is intact.
 */
bool p53_pkt_udp_csum_ok(const uint8_t *frame, const struct p53_pkt *pkt);

/* Checksum work p53_pkt_reply() may leave to the NIC. */
#define P53_PKT_TX_IP_CKSUM  0x1   /* port offloads the IPv4 header checksum */
#define P53_PKT_TX_UDP_CKSUM 0x2   /* port offloads the UDP checksum (pseudo-header is set) */

/**
 * Turn a parsed query frame into its reply, in place.
 *
 * The DNS response must already be written at frame + pkt->dns_off with `dns_len` bytes.
 * Swaps MACs, IP addresses and UDP ports; sets IPv4 total length, TTL 64, ID 0, TOS (DSCP and
 * ECN) 0 and DF unchanged, or IPv6 payload length, hop limit 64, traffic class and flow label 0; sets the UDP length and computes the
 * IPv4 header checksum and the UDP checksum (always, as IPv6 requires it; RFC 8200 §8.1) in
 * software unless `tx_offload` says the port does it, in which case the pseudo-header
 * checksum is written as the NIC expects (rte_ipv4_phdr_cksum / rte_ipv6_phdr_cksum).
 *
 * @return the new frame length (L2 header + IP + UDP + dns_len).
 */
size_t p53_pkt_reply(uint8_t *frame, const struct p53_pkt *pkt, uint16_t dns_len,
		     unsigned int tx_offload);

#endif /* P53_PKT_H */
