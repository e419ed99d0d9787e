/*
 * Unit tests for dataplane/pkt.c: parse of good frames (every field of struct p53_pkt), a
 * table of malformed frames each with its exact drop reason, Ethernet padding, and the reply
 * rewrite checked against an independent RFC 1071 checksum written here (big-endian word
 * sums, no DPDK helpers), so a bug shared with rte_ip.h cannot hide.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dataplane/pkt.h"
#include "tests/common/wire.h"

/* ---- frame builder ---------------------------------------------------------------- */

static const uint8_t CLI_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t SRV_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t CLI4[4] = { 192, 0, 2, 1 };        /* RFC 5737 TEST-NET-1 */
static const uint8_t SRV4[4] = { 198, 51, 100, 53 };    /* RFC 5737 TEST-NET-2 */
static const uint8_t CLI6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };  /* RFC 3849 */
static const uint8_t SRV6[16] = { 0x20, 0x01, 0x0d, 0xb8, [14] = 0x00, [15] = 0x53 };
#define CLI_PORT 40000u
#define VLAN_TCI 0x0123u
#define FLOW_WORD 0x6a312345u   /* version 6, traffic class 0xa3 (DSCP AF11 + ECN CE), flow label 0x12345 */

struct spec {
	int v6;
	int vlan;           /* one 802.1Q tag */
	int qinq;           /* two 802.1Q tags */
	uint16_t dns_len;   /* UDP payload bytes */
	uint16_t pad_to;    /* pad the frame with zeros up to this length (0: none) */
};

/* Where the layers of a built frame start. */
struct lay {
	size_t l3, l4, dns, len;
};

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7u + 3u);
}

static struct lay build(uint8_t *buf, const struct spec *s)
{
	struct lay l;
	size_t off = 12;

	memcpy(buf, SRV_MAC, 6);
	memcpy(buf + 6, CLI_MAC, 6);
	for (int t = 0; t < (s->qinq ? 2 : s->vlan ? 1 : 0); t++) {
		put16(buf + off, 0x8100);
		put16(buf + off + 2, VLAN_TCI);
		off += 4;
	}
	put16(buf + off, s->v6 ? 0x86DD : 0x0800);
	l.l3 = off + 2;
	uint8_t *ip = buf + l.l3;
	if (s->v6) {
		ip[0] = (uint8_t)(FLOW_WORD >> 24);
		ip[1] = (uint8_t)(FLOW_WORD >> 16);
		ip[2] = (uint8_t)(FLOW_WORD >> 8);
		ip[3] = (uint8_t)FLOW_WORD;
		put16(ip + 4, (uint16_t)(8 + s->dns_len));
		ip[6] = 17;
		ip[7] = 51;
		memcpy(ip + 8, CLI6, 16);
		memcpy(ip + 24, SRV6, 16);
		l.l4 = l.l3 + 40;
	} else {
		ip[0] = 0x45;
		ip[1] = 0x2B;                       /* DSCP AF11 + ECN CE: the reply clears both */
		put16(ip + 2, (uint16_t)(28 + s->dns_len));
		put16(ip + 4, 0x1234);
		put16(ip + 6, 0x4000);              /* DF */
		ip[8] = 57;
		ip[9] = 17;
		put16(ip + 10, 0xBEEF);             /* parse does not check it */
		memcpy(ip + 12, CLI4, 4);
		memcpy(ip + 16, SRV4, 4);
		l.l4 = l.l3 + 20;
	}
	uint8_t *udp = buf + l.l4;
	put16(udp, CLI_PORT);
	put16(udp + 2, 53);
	put16(udp + 4, (uint16_t)(8 + s->dns_len));
	put16(udp + 6, 0x1111);
	l.dns = l.l4 + 8;
	for (size_t i = 0; i < s->dns_len; i++)
		buf[l.dns + i] = pattern(i);
	l.len = l.dns + s->dns_len;
	while (l.len < s->pad_to)
		buf[l.len++] = 0;
	return l;
}

/* ---- independent checksum (RFC 1071; sum_be and fold in tests/common/wire.h) ------ */

/* One's complement sum of the pseudo-header (RFC 768 / RFC 8200 §8.1), not complemented. */
static uint32_t pseudo_sum(const uint8_t *frame, const struct lay *l, int v6, uint16_t ulen)
{
	const uint8_t *ip = frame + l->l3;

	if (v6)
		return sum_be(ip + 8, 32, 0) + ulen + 17;
	return sum_be(ip + 12, 8, 0) + ulen + 17;
}

/* Sum over pseudo-header and the whole UDP datagram, checksum field included: a correct
 * checksum makes it 0xFFFF. */
static uint16_t udp_verify(const uint8_t *frame, const struct lay *l, int v6)
{
	uint16_t ulen = get16(frame + l->l4 + 4);

	return fold(pseudo_sum(frame, l, v6, ulen) + sum_be(frame + l->l4, ulen, 0));
}

/* ---- parse: good frames ---------------------------------------------------------- */

static uint8_t buf[4096] __attribute__((aligned(64)));

static void check_parse(const struct spec *s)
{
	struct p53_pkt p;
	struct lay l;

	memset(&p, 0xAA, sizeof(p)); /* catch fields parse forgets to set */
	l = build(buf, s);
	assert_int_equal(p53_pkt_parse(buf, l.len, &p), P53_PKT_OK);
	assert_int_equal(p.l3_off, s->vlan ? 18 : 14);
	assert_int_equal(p.l3_off, l.l3);
	assert_int_equal(p.l4_off, l.l4);
	assert_int_equal(p.l4_off, p.l3_off + (s->v6 ? 40 : 20));
	assert_int_equal(p.dns_off, l.dns);
	assert_int_equal(p.dns_off, p.l4_off + 8);
	assert_int_equal(p.dns_len, s->dns_len);
	assert_int_equal(p.ipv6, s->v6 ? 1 : 0);
	assert_int_equal(p.vlan, s->vlan ? 1 : 0);
	assert_int_equal(p.src_port, CLI_PORT);
	if (s->v6) {
		assert_memory_equal(p.src_addr, CLI6, 16);
	} else {
		static const uint8_t zero[12];

		assert_memory_equal(p.src_addr, CLI4, 4);
		assert_memory_equal(p.src_addr + 4, zero, 12);
	}
}

static void test_parse_ipv4(void **state)
{
	(void)state;
	check_parse(&(struct spec){ .dns_len = 29 });
}

static void test_parse_ipv4_vlan(void **state)
{
	(void)state;
	check_parse(&(struct spec){ .vlan = 1, .dns_len = 40 });
}

static void test_parse_ipv6(void **state)
{
	(void)state;
	check_parse(&(struct spec){ .v6 = 1, .dns_len = 33 });
}

static void test_parse_ipv6_vlan(void **state)
{
	(void)state;
	check_parse(&(struct spec){ .v6 = 1, .vlan = 1, .dns_len = 512 });
}

/* A UDP datagram with no payload is well framed; the DNS parser rejects it, not us. */
static void test_parse_empty_payload(void **state)
{
	(void)state;
	check_parse(&(struct spec){ .dns_len = 0 });
	check_parse(&(struct spec){ .v6 = 1, .dns_len = 0 });
}

/* Ethernet pads short frames to 60 bytes (64 with FCS); the IP length, not the frame,
 * gives the payload size. */
static void test_parse_padded(void **state)
{
	static const struct spec specs[] = {
		{ .dns_len = 12, .pad_to = 60 },            /* 54-byte query padded to 60 */
		{ .dns_len = 0, .pad_to = 60 },
		{ .vlan = 1, .dns_len = 12, .pad_to = 64 },
		{ .v6 = 1, .dns_len = 12, .pad_to = 80 },   /* padding beyond IPv6 payload */
		{ .v6 = 1, .vlan = 1, .dns_len = 1, .pad_to = 90 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct p53_pkt p;
		struct lay l = build(buf, &specs[i]);

		assert_true(l.len == specs[i].pad_to);
		assert_int_equal(p53_pkt_parse(buf, l.len, &p), P53_PKT_OK);
		assert_int_equal(p.dns_len, specs[i].dns_len);
		assert_int_equal(p.dns_off, l.dns);
	}
}

/* DF is not a fragment (RFC 791); clients set it for PMTUD. Build sets DF already; clear it
 * and check both. */
static void test_parse_df_and_no_df(void **state)
{
	struct p53_pkt p;
	struct lay l = build(buf, &(struct spec){ .dns_len = 20 });
	(void)state;

	assert_int_equal(p53_pkt_parse(buf, l.len, &p), P53_PKT_OK);
	put16(buf + l.l3 + 6, 0x0000);
	assert_int_equal(p53_pkt_parse(buf, l.len, &p), P53_PKT_OK);
}

static void test_drop_names(void **state)
{
	(void)state;
	for (int i = 0; i < P53_PKT_DROP__MAX; i++) {
		assert_non_null(p53_pkt_drop_names[i]);
		assert_true(strlen(p53_pkt_drop_names[i]) > 0);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(p53_pkt_drop_names[i], p53_pkt_drop_names[j]);
	}
	assert_string_equal(p53_pkt_drop_names[P53_PKT_OK], "ok");
	assert_string_equal(p53_pkt_drop_names[P53_PKT_DROP_SHORT_L2], "short_l2");
	assert_string_equal(p53_pkt_drop_names[P53_PKT_DROP_SRC_ADDR], "src_addr");
	assert_string_equal(p53_pkt_drop_names[P53_PKT_DROP_UDP_CSUM], "udp_csum");
}

/* ---- parse: the table of bad frames ---------------------------------------------- */

enum where { L2, L3, L4 };

struct patch {
	enum where at;
	uint8_t off;
	uint8_t n;           /* 0: unused */
	uint8_t bytes[16];
};

#define P8(w, o, v)  { (w), (o), 1, { (v) } }
#define P16(w, o, v) { (w), (o), 2, { (uint8_t)((v) >> 8), (uint8_t)((v) & 0xFF) } }
#define PB(w, o, n, ...) { (w), (o), (n), { __VA_ARGS__ } }

/* Adjust the frame length: cut it to layer start + cut_off when cut is set. */
struct bad {
	const char *msg;
	struct spec spec;
	struct patch patch[2];
	int cut;
	enum where cut_at;
	uint16_t cut_off;
	enum p53_pkt_drop want;
};

/* dns_len used by the table; some rows below compute lengths from it. */
#define DL 20

static const struct bad bad[] = {
	{ "truncated Ethernet header (13 bytes)", { .dns_len = DL },
	  { { 0 } }, 1, L2, 13, P53_PKT_DROP_SHORT_L2 },
	{ "empty frame", { .dns_len = DL }, { { 0 } }, 1, L2, 0, P53_PKT_DROP_SHORT_L2 },
	{ "truncated 802.1Q tag: frame ends inside the inner ethertype", { .vlan = 1, .dns_len = DL },
	  { { 0 } }, 1, L2, 17, P53_PKT_DROP_SHORT_L2 },
	{ "QinQ: two 802.1Q tags", { .qinq = 1, .dns_len = DL }, { { 0 } }, 0, L2, 0,
	  P53_PKT_DROP_ETHERTYPE },
	{ "802.1ad S-tag 0x88A8 (QinQ outer tag)", { .vlan = 1, .dns_len = DL },
	  { P16(L2, 12, 0x88A8) }, 0, L2, 0, P53_PKT_DROP_ETHERTYPE },
	{ "ARP ethertype 0x0806", { .dns_len = DL }, { P16(L2, 12, 0x0806) }, 0, L2, 0,
	  P53_PKT_DROP_ETHERTYPE },
	{ "ARP ethertype inside a VLAN tag", { .vlan = 1, .dns_len = DL }, { P16(L2, 16, 0x0806) },
	  0, L2, 0, P53_PKT_DROP_ETHERTYPE },
	{ "truncated IPv4 header (19 bytes)", { .dns_len = DL }, { { 0 } }, 1, L3, 19,
	  P53_PKT_DROP_SHORT_L3 },
	{ "truncated IPv4 header, ends before the source address", { .vlan = 1, .dns_len = DL },
	  { { 0 } }, 1, L3, 10, P53_PKT_DROP_SHORT_L3 },
	{ "truncated IPv6 header (39 bytes)", { .v6 = 1, .dns_len = DL }, { { 0 } }, 1, L3, 39,
	  P53_PKT_DROP_SHORT_L3 },
	{ "IPv4 options (IHL 6)", { .dns_len = DL }, { P8(L3, 0, 0x46) }, 0, L2, 0,
	  P53_PKT_DROP_IP_HDR },
	{ "IPv4 IHL 4 (< 5)", { .dns_len = DL }, { P8(L3, 0, 0x44) }, 0, L2, 0, P53_PKT_DROP_IP_HDR },
	{ "IPv4 ethertype, IP version 6", { .dns_len = DL }, { P8(L3, 0, 0x65) }, 0, L2, 0,
	  P53_PKT_DROP_IP_HDR },
	{ "IPv6 ethertype, IP version 4", { .v6 = 1, .dns_len = DL }, { P8(L3, 0, 0x4a) }, 0, L2, 0,
	  P53_PKT_DROP_IP_HDR },
	{ "IPv4 total length one more than the frame holds", { .dns_len = DL },
	  { P16(L3, 2, 28 + DL + 1) }, 0, L2, 0, P53_PKT_DROP_IP_LEN },
	{ "IPv4 total length 19, less than its own header", { .dns_len = DL },
	  { P16(L3, 2, 19) }, 0, L2, 0, P53_PKT_DROP_IP_LEN },
	{ "IPv4 total length 27, less than header + UDP header", { .dns_len = DL },
	  { P16(L3, 2, 27) }, 0, L2, 0, P53_PKT_DROP_SHORT_L4 },
	{ "IPv6 payload length one more than the frame holds", { .v6 = 1, .dns_len = DL },
	  { P16(L3, 4, 8 + DL + 1) }, 0, L2, 0, P53_PKT_DROP_IP_LEN },
	{ "IPv4 fragment: MF set", { .dns_len = DL }, { P16(L3, 6, 0x2000) }, 0, L2, 0,
	  P53_PKT_DROP_FRAGMENT },
	{ "IPv4 fragment: offset 8 bytes, last fragment", { .dns_len = DL }, { P16(L3, 6, 0x0001) },
	  0, L2, 0, P53_PKT_DROP_FRAGMENT },
	{ "IPv4 fragment: DF with an offset", { .dns_len = DL }, { P16(L3, 6, 0x4001) },
	  0, L2, 0, P53_PKT_DROP_FRAGMENT },
	{ "IPv6 fragment header (next header 44)", { .v6 = 1, .dns_len = DL }, { P8(L3, 6, 44) },
	  0, L2, 0, P53_PKT_DROP_FRAGMENT },
	{ "IPv4 protocol TCP", { .dns_len = DL }, { P8(L3, 9, 6) }, 0, L2, 0, P53_PKT_DROP_PROTO },
	{ "IPv6 next header TCP", { .v6 = 1, .dns_len = DL }, { P8(L3, 6, 6) }, 0, L2, 0,
	  P53_PKT_DROP_PROTO },
	{ "IPv6 hop-by-hop extension header before UDP", { .v6 = 1, .dns_len = DL },
	  { P8(L3, 6, 0) }, 0, L2, 0, P53_PKT_DROP_PROTO },
	{ "truncated UDP header: IPv4 total length 24 and the frame ends there",
	  { .dns_len = DL }, { P16(L3, 2, 24) }, 1, L3, 24, P53_PKT_DROP_SHORT_L4 },
	{ "truncated UDP header: IPv6 payload length 4 and the frame ends there",
	  { .v6 = 1, .vlan = 1, .dns_len = DL }, { P16(L3, 4, 4) }, 1, L4, 4,
	  P53_PKT_DROP_SHORT_L4 },
	{ "truncated UDP header: frame cut, IPv4 total length still claims it",
	  { .dns_len = DL }, { { 0 } }, 1, L4, 5, P53_PKT_DROP_IP_LEN },
	{ "UDP length one more than the IP payload", { .dns_len = DL },
	  { P16(L4, 4, 8 + DL + 1) }, 0, L2, 0, P53_PKT_DROP_UDP_LEN },
	{ "UDP length 7 (< 8)", { .dns_len = DL }, { P16(L4, 4, 7) }, 0, L2, 0,
	  P53_PKT_DROP_UDP_LEN },
	{ "UDP length 0 on IPv6 (jumbogram form)", { .v6 = 1, .dns_len = DL }, { P16(L4, 4, 0) },
	  0, L2, 0, P53_PKT_DROP_UDP_LEN },
	{ "UDP length one less than the IPv4 payload", { .dns_len = DL },
	  { P16(L4, 4, 8 + DL - 1) }, 0, L2, 0, P53_PKT_DROP_UDP_LEN },
	{ "UDP length one less than the IPv6 payload", { .v6 = 1, .dns_len = DL },
	  { P16(L4, 4, 8 + DL - 1) }, 0, L2, 0, P53_PKT_DROP_UDP_LEN },
	{ "destination port 5353 (mDNS)", { .dns_len = DL }, { P16(L4, 2, 5353) }, 0, L2, 0,
	  P53_PKT_DROP_PORT },
	{ "destination port 53 byte-swapped (13568)", { .v6 = 1, .dns_len = DL },
	  { P16(L4, 2, 0x3500) }, 0, L2, 0, P53_PKT_DROP_PORT },
	{ "source port 0", { .dns_len = DL }, { P16(L4, 0, 0) }, 0, L2, 0, P53_PKT_DROP_PORT },
	{ "source port 0 over IPv6", { .v6 = 1, .dns_len = DL }, { P16(L4, 0, 0) }, 0, L2, 0,
	  P53_PKT_DROP_PORT },
	{ "broadcast source 255.255.255.255", { .dns_len = DL }, { PB(L3, 12, 4, 255, 255, 255, 255) },
	  0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "multicast source 224.0.0.1", { .dns_len = DL }, { PB(L3, 12, 4, 224, 0, 0, 1) },
	  0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "multicast source 239.255.255.250", { .dns_len = DL },
	  { PB(L3, 12, 4, 239, 255, 255, 250) }, 0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "reserved source 240.0.0.1", { .dns_len = DL }, { PB(L3, 12, 4, 240, 0, 0, 1) },
	  0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "loopback source 127.0.0.1", { .dns_len = DL }, { PB(L3, 12, 4, 127, 0, 0, 1) },
	  0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "loopback source 127.255.0.9", { .vlan = 1, .dns_len = DL },
	  { PB(L3, 12, 4, 127, 255, 0, 9) }, 0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "unspecified source 0.0.0.0", { .dns_len = DL }, { PB(L3, 12, 4, 0, 0, 0, 0) },
	  0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "'this network' source 0.1.2.3", { .dns_len = DL }, { PB(L3, 12, 4, 0, 1, 2, 3) },
	  0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "IPv6 multicast source ff02::1", { .v6 = 1, .dns_len = DL },
	  { PB(L3, 8, 16, 0xff, 0x02, [15] = 1) }, 0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "IPv6 loopback source ::1", { .v6 = 1, .dns_len = DL }, { PB(L3, 8, 16, [15] = 1) },
	  0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "IPv6 unspecified source ::", { .v6 = 1, .dns_len = DL }, { PB(L3, 8, 16, 0) },
	  0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "IPv4-mapped loopback source ::ffff:127.0.0.1", { .v6 = 1, .dns_len = DL },
	  { PB(L3, 8, 16, [10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1) }, 0, L2, 0,
	  P53_PKT_DROP_SRC_ADDR },
	{ "IPv4-mapped broadcast source ::ffff:255.255.255.255", { .v6 = 1, .dns_len = DL },
	  { PB(L3, 8, 16, [10] = 0xff, [11] = 0xff, [12] = 255, 255, 255, 255) }, 0, L2, 0,
	  P53_PKT_DROP_SRC_ADDR },
	{ "multicast source MAC 01:00:5e:00:00:01", { .dns_len = DL },
	  { PB(L2, 6, 6, 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01) }, 0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "broadcast source MAC", { .v6 = 1, .dns_len = DL },
	  { PB(L2, 6, 6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) }, 0, L2, 0, P53_PKT_DROP_SRC_ADDR },
	{ "IPv6 UDP checksum 0: forbidden over IPv6 (RFC 8200 §8.1)", { .v6 = 1, .dns_len = DL },
	  { P16(L4, 6, 0) }, 0, L2, 0, P53_PKT_DROP_UDP_CSUM },
	{ "IPv6 UDP checksum 0 behind a VLAN tag", { .v6 = 1, .vlan = 1, .dns_len = DL },
	  { P16(L4, 6, 0) }, 0, L2, 0, P53_PKT_DROP_UDP_CSUM },
};

static size_t layer_start(const struct lay *l, enum where w)
{
	return w == L2 ? 0 : w == L3 ? l->l3 : l->l4;
}

static void test_parse_bad_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct bad *b = &bad[i];
		struct p53_pkt p;
		struct lay l = build(buf, &b->spec);
		size_t len = l.len;

		for (size_t k = 0; k < 2; k++)
			if (b->patch[k].n != 0)
				memcpy(buf + layer_start(&l, b->patch[k].at) + b->patch[k].off,
				       b->patch[k].bytes, b->patch[k].n);
		if (b->cut)
			len = layer_start(&l, b->cut_at) + b->cut_off;
		enum p53_pkt_drop got = p53_pkt_parse(buf, len, &p);
		if (got != b->want)
			fail_msg("row %zu \"%s\": got %s, want %s", i, b->msg,
				 p53_pkt_drop_names[got], p53_pkt_drop_names[b->want]);
		assert_int_not_equal(got, P53_PKT_OK);
	}
}

/* Every prefix of a good frame shorter than the whole must be refused, never read past:
 * each prefix sits in its own exact-size heap block, so valgrind or ASan flag a one-byte
 * over-read. */
static void test_parse_every_truncation(void **state)
{
	static const struct spec specs[] = {
		{ .dns_len = 13 }, { .vlan = 1, .dns_len = 13 },
		{ .v6 = 1, .dns_len = 13 }, { .v6 = 1, .vlan = 1, .dns_len = 13 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		uint8_t tmp[256];
		struct lay l = build(tmp, &specs[i]);

		for (size_t n = 0; n < l.len; n++) {
			uint8_t *win = test_malloc(n ? n : 1);
			struct p53_pkt p;

			memcpy(win, tmp, n);
			assert_int_not_equal(p53_pkt_parse(win, n, &p), P53_PKT_OK);
			test_free(win);
		}
	}
}

/* ---- receive checksum ------------------------------------------------------------- */

/* Fill in the frame's UDP checksum with the independent RFC 1071 code above. */
static void set_udp_cksum(uint8_t *frame, const struct lay *l, int v6)
{
	uint16_t ulen = get16(frame + l->l4 + 4);

	put16(frame + l->l4 + 6, 0);
	uint16_t c = (uint16_t)~fold(pseudo_sum(frame, l, v6, ulen) + sum_be(frame + l->l4, ulen, 0));
	put16(frame + l->l4 + 6, c == 0 ? 0xFFFF : c);
}

/* Regression: checksums were never verified on receive, so a corrupted datagram was answered
 * (possibly for a bit-flipped name). A correct checksum passes; any single flipped bit in the
 * pseudo-header addresses or anywhere in the datagram fails (one's complement sums catch
 * every single-bit error). */
static void test_udp_csum_verify(void **state)
{
	static const struct spec specs[] = {
		{ .dns_len = 29 }, { .dns_len = 30 }, { .vlan = 1, .dns_len = 1 },
		{ .v6 = 1, .dns_len = 33 }, { .v6 = 1, .vlan = 1, .dns_len = 512 },
		{ .dns_len = 12, .pad_to = 60 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		const struct spec *s = &specs[i];
		struct p53_pkt p;
		struct lay l = build(buf, s);

		set_udp_cksum(buf, &l, s->v6);
		assert_int_equal(p53_pkt_parse(buf, l.len, &p), P53_PKT_OK);
		assert_true(p53_pkt_udp_csum_ok(buf, &p));
		/* Source and destination addresses are in the pseudo-header. */
		size_t addr = l.l3 + (s->v6 ? 8 : 12), addr_len = s->v6 ? 32 : 8;
		for (size_t b = addr; b < addr + addr_len; b++) {
			buf[b] ^= 0x10;
			assert_false(p53_pkt_udp_csum_ok(buf, &p));
			buf[b] ^= 0x10;
		}
		/* Every bit of the datagram but the length field (which parse holds to the IP
		 * length, so a flip there is a udp_len drop). */
		for (size_t b = l.l4; b < l.dns + s->dns_len; b++) {
			if (b == l.l4 + 4 || b == l.l4 + 5)
				continue;
			for (int bit = 0; bit < 8; bit++) {
				buf[b] ^= (uint8_t)(1u << bit);
				if (p53_pkt_udp_csum_ok(buf, &p))
					fail_msg("spec %zu: flipped bit %d of byte %zu not detected", i, bit, b - l.l4);
				buf[b] ^= (uint8_t)(1u << bit);
			}
		}
		assert_true(p53_pkt_udp_csum_ok(buf, &p));
	}
}

/* RFC 768: an IPv4 checksum of 0 means none was computed, and is accepted; a computed zero is
 * sent as 0xFFFF and verifies. */
static void test_udp_csum_zero_ipv4_accepted(void **state)
{
	struct p53_pkt p;
	struct lay l = build(buf, &(struct spec){ .dns_len = 20 });
	(void)state;

	put16(buf + l.l4 + 6, 0);
	assert_int_equal(p53_pkt_parse(buf, l.len, &p), P53_PKT_OK);
	assert_true(p53_pkt_udp_csum_ok(buf, &p));
	buf[l.dns] ^= 1;        /* no checksum, nothing to detect it with */
	assert_true(p53_pkt_udp_csum_ok(buf, &p));
	/* Make the computed sum 0 by choosing the last payload word: it must then be 0xFFFF. */
	put16(buf + l.dns + 18, 0);
	put16(buf + l.l4 + 6, 0);
	uint16_t s = fold(pseudo_sum(buf, &l, 0, 28) + sum_be(buf + l.l4, 28, 0));
	put16(buf + l.dns + 18, (uint16_t)(0xFFFF - s));
	put16(buf + l.l4 + 6, 0xFFFF);
	assert_true(p53_pkt_udp_csum_ok(buf, &p));
	put16(buf + l.l4 + 6, 0x0001);
	assert_false(p53_pkt_udp_csum_ok(buf, &p));
}

/* Random payloads of random lengths, both families: the receive check and the reply's
 * checksum agree with the independent RFC 1071 code here on every one (the 64-bit sum with
 * end-around carry must never lose a carry, whatever the bytes). */
static void test_csum_random_payloads(void **state)
{
	uint64_t r = 0x9e3779b97f4a7c15u;
	(void)state;

	for (int i = 0; i < 4000; i++) {
		int v6 = i & 1;
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		uint16_t dl = (uint16_t)(r % 1473);
		struct p53_pkt p;
		struct lay l = build(buf, &(struct spec){ .v6 = v6, .vlan = (i >> 1) & 1, .dns_len = dl });

		for (uint16_t k = 0; k < dl; k++) {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			/* Mostly 0xFF and 0xFE bytes: sums near the top of the word. */
			buf[l.dns + k] = (uint8_t)((r & 3) ? 0xFF - ((r >> 2) & 1) : r >> 8);
		}
		set_udp_cksum(buf, &l, v6);
		assert_int_equal(p53_pkt_parse(buf, l.len, &p), P53_PKT_OK);
		assert_true(p53_pkt_udp_csum_ok(buf, &p));
		buf[l.dns + (dl ? r % dl : 0)] ^= dl ? 0x01 : 0;
		if (dl)
			assert_false(p53_pkt_udp_csum_ok(buf, &p));
		p53_pkt_reply(buf, &p, dl, 0);
		assert_int_equal(udp_verify(buf, &l, v6), 0xFFFF);
		if (!v6)
			assert_int_equal(fold(sum_be(buf + l.l3, 20, 0)), 0xFFFF);
	}
}

/* ---- reply ------------------------------------------------------------------------ */

struct reply_case {
	struct spec q;
	uint16_t resp_len;
	unsigned int offload;
	size_t align;        /* frame start offset in buf, to show no alignment assumption */
};

static void check_reply(const struct reply_case *c)
{
	uint8_t *f = buf + c->align;
	uint8_t before[128];
	struct p53_pkt p;
	struct lay l = build(f, &c->q);
	int v6 = c->q.v6;

	memcpy(before, f, l.dns);
	assert_int_equal(p53_pkt_parse(f, l.len, &p), P53_PKT_OK);
	for (size_t i = 0; i < c->resp_len; i++)
		f[p.dns_off + i] = (uint8_t)(pattern(i) ^ 0x5A);

	size_t n = p53_pkt_reply(f, &p, c->resp_len, c->offload);
	assert_int_equal(n, l.dns + c->resp_len);

	/* L2: MACs swapped, tag and ethertype untouched. */
	assert_memory_equal(f, CLI_MAC, 6);
	assert_memory_equal(f + 6, SRV_MAC, 6);
	assert_memory_equal(f + 12, before + 12, l.l3 - 12);

	uint8_t *ip = f + l.l3;
	uint16_t ulen = (uint16_t)(8 + c->resp_len);
	if (v6) {
		/* Version 6; the query's traffic class (with its ECN bits) and flow label are
		 * not echoed. */
		assert_int_equal(ip[0], 0x60);
		assert_int_equal(ip[1], 0);
		assert_int_equal(get16(ip + 2), 0);
		assert_int_equal(get16(ip + 4), ulen);
		assert_int_equal(ip[6], 17);
		assert_int_equal(ip[7], 64);
		assert_memory_equal(ip + 8, SRV6, 16);
		assert_memory_equal(ip + 24, CLI6, 16);
	} else {
		assert_int_equal(ip[0], 0x45);
		assert_int_equal(ip[1], 0);                     /* TOS: DSCP and ECN cleared */
		assert_int_equal(get16(ip + 2), 20 + ulen);
		assert_int_equal(get16(ip + 4), 0);             /* ID 0 */
		assert_int_equal(get16(ip + 6), 0x4000);        /* DF kept */
		assert_int_equal(ip[8], 64);
		assert_int_equal(ip[9], 17);
		assert_memory_equal(ip + 12, SRV4, 4);
		assert_memory_equal(ip + 16, CLI4, 4);
		if (c->offload & P53_PKT_TX_IP_CKSUM)
			assert_int_equal(get16(ip + 10), 0);
		else
			assert_int_equal(fold(sum_be(ip, 20, 0)), 0xFFFF);
	}

	uint8_t *udp = f + l.l4;
	assert_int_equal(get16(udp), 53);
	assert_int_equal(get16(udp + 2), CLI_PORT);
	assert_int_equal(get16(udp + 4), ulen);
	uint16_t ck = get16(udp + 6);
	if (c->offload & P53_PKT_TX_UDP_CKSUM) {
		/* The NIC wants the non-complemented pseudo-header sum in the field. */
		assert_int_equal(ck, fold(pseudo_sum(f, &l, v6, ulen)));
	} else {
		assert_int_not_equal(ck, 0);      /* RFC 768: 0 would mean "no checksum" */
		assert_int_equal(udp_verify(f, &l, v6), 0xFFFF);
	}

	/* The payload is not touched. */
	for (size_t i = 0; i < c->resp_len; i++)
		assert_int_equal(f[p.dns_off + i], (uint8_t)(pattern(i) ^ 0x5A));
}

static void test_reply_ipv4(void **state)
{
	(void)state;
	check_reply(&(struct reply_case){ .q = { .dns_len = 30 }, .resp_len = 46 });
}

static void test_reply_ipv6(void **state)
{
	(void)state;
	check_reply(&(struct reply_case){ .q = { .v6 = 1, .dns_len = 30 }, .resp_len = 46 });
}

static void test_reply_vlan(void **state)
{
	(void)state;
	check_reply(&(struct reply_case){ .q = { .vlan = 1, .dns_len = 30 }, .resp_len = 60 });
	check_reply(&(struct reply_case){ .q = { .v6 = 1, .vlan = 1, .dns_len = 30 },
					 .resp_len = 60 });
}

static void test_reply_odd_lengths(void **state)
{
	static const uint16_t lens[] = { 1, 3, 17, 29, 33, 511, 1231 };
	(void)state;

	for (int v6 = 0; v6 <= 1; v6++)
		for (int vlan = 0; vlan <= 1; vlan++)
			for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
				check_reply(&(struct reply_case){
					.q = { .v6 = v6, .vlan = vlan, .dns_len = 27 },
					.resp_len = lens[i] });
}

/* Regression: replies echoed the query's TOS byte (DSCP and ECN CE) and IPv6 traffic class
 * and flow label. check_reply() asserts all of them clear; the queries carry them set. */
static void test_reply_clears_tos_ecn_traffic_class_flow_label(void **state)
{
	(void)state;
	for (int v6 = 0; v6 <= 1; v6++)
		for (unsigned int o = 0; o <= 3; o++)
			check_reply(&(struct reply_case){ .q = { .v6 = v6, .dns_len = 30 },
							 .resp_len = 50, .offload = o });
}

/* The response is usually longer than the query (answers, additional records). */
static void test_reply_grows(void **state)
{
	(void)state;
	for (int v6 = 0; v6 <= 1; v6++) {
		check_reply(&(struct reply_case){ .q = { .v6 = v6, .dns_len = 12 },
						 .resp_len = 1400 });
		check_reply(&(struct reply_case){ .q = { .v6 = v6, .vlan = 1, .dns_len = 40 },
						 .resp_len = 1441 });
		check_reply(&(struct reply_case){ .q = { .v6 = v6, .dns_len = 100 },
						 .resp_len = 12 });  /* and shrinks */
	}
}

/* A padded 60-byte query: the reply length comes from dns_len, not the padded frame. */
static void test_reply_padded_query(void **state)
{
	(void)state;
	check_reply(&(struct reply_case){ .q = { .dns_len = 12, .pad_to = 60 }, .resp_len = 12 });
	check_reply(&(struct reply_case){ .q = { .dns_len = 12, .pad_to = 60 }, .resp_len = 4 });
}

static void test_reply_unaligned(void **state)
{
	(void)state;
	check_reply(&(struct reply_case){ .q = { .dns_len = 30 }, .resp_len = 45, .align = 1 });
	check_reply(&(struct reply_case){ .q = { .v6 = 1, .vlan = 1, .dns_len = 30 },
					 .resp_len = 45, .align = 3 });
}

static void test_reply_offload(void **state)
{
	(void)state;
	for (int v6 = 0; v6 <= 1; v6++)
		for (unsigned int o = 1; o <= 3; o++)
			check_reply(&(struct reply_case){ .q = { .v6 = v6, .vlan = 1, .dns_len = 30 },
							 .resp_len = 77, .offload = o });
}

/* RFC 768: a computed UDP checksum of zero goes out as 0xFFFF. Choose the last two payload
 * bytes so that the sum over pseudo-header + datagram (checksum field 0) is 0xFFFF, i.e. the
 * complemented checksum is 0. */
static void check_zero_cksum(int v6)
{
	struct reply_case c = { .q = { .v6 = v6, .dns_len = 30 }, .resp_len = 40 };
	uint8_t *f = buf;
	struct p53_pkt p;
	struct lay l = build(f, &c.q);

	assert_int_equal(p53_pkt_parse(f, l.len, &p), P53_PKT_OK);
	for (size_t i = 0; i < c.resp_len; i++)
		f[p.dns_off + i] = (uint8_t)(pattern(i) ^ 0x5A);
	f[p.dns_off + 38] = 0;
	f[p.dns_off + 39] = 0;
	p53_pkt_reply(f, &p, c.resp_len, 0);
	put16(f + l.l4 + 6, 0);
	uint16_t s = fold(pseudo_sum(f, &l, v6, 48) + sum_be(f + l.l4, 48, 0));
	uint16_t x = (uint16_t)(0xFFFF - s);

	/* Rebuild the query with the chosen bytes and answer it again. */
	l = build(f, &c.q);
	assert_int_equal(p53_pkt_parse(f, l.len, &p), P53_PKT_OK);
	for (size_t i = 0; i < c.resp_len; i++)
		f[p.dns_off + i] = (uint8_t)(pattern(i) ^ 0x5A);
	put16(f + p.dns_off + 38, x);
	p53_pkt_reply(f, &p, c.resp_len, 0);
	assert_int_equal(get16(f + l.l4 + 6), 0xFFFF);
	assert_int_equal(udp_verify(f, &l, v6), 0xFFFF);
}

static void test_reply_zero_cksum_sent_as_ffff(void **state)
{
	(void)state;
	check_zero_cksum(0);
	check_zero_cksum(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ipv4),
		cmocka_unit_test(test_parse_ipv4_vlan),
		cmocka_unit_test(test_parse_ipv6),
		cmocka_unit_test(test_parse_ipv6_vlan),
		cmocka_unit_test(test_parse_empty_payload),
		cmocka_unit_test(test_parse_padded),
		cmocka_unit_test(test_parse_df_and_no_df),
		cmocka_unit_test(test_drop_names),
		cmocka_unit_test(test_parse_bad_table),
		cmocka_unit_test(test_parse_every_truncation),
		cmocka_unit_test(test_udp_csum_verify),
		cmocka_unit_test(test_udp_csum_zero_ipv4_accepted),
		cmocka_unit_test(test_csum_random_payloads),
		cmocka_unit_test(test_reply_ipv4),
		cmocka_unit_test(test_reply_ipv6),
		cmocka_unit_test(test_reply_vlan),
		cmocka_unit_test(test_reply_odd_lengths),
		cmocka_unit_test(test_reply_clears_tos_ecn_traffic_class_flow_label),
		cmocka_unit_test(test_reply_grows),
		cmocka_unit_test(test_reply_padded_query),
		cmocka_unit_test(test_reply_unaligned),
		cmocka_unit_test(test_reply_offload),
		cmocka_unit_test(test_reply_zero_cksum_sent_as_ffff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
