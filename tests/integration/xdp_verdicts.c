/*
 * xdp_verdicts: run dataplane/bpf/steer.bpf.o on hand-made frames with BPF_PROG_TEST_RUN and
 * check which ones it steers. Covers what the veth lab cannot easily send: 802.1Q tags, QinQ,
 * fragments, IPv4 options, IPv6 extension headers, truncated headers.
 *
 * A redirect into an XSKMAP needs a bound AF_XDP socket; without one bpf_redirect_map()
 * returns its XDP_PASS fallback and a steered frame would look like a passed one. So before
 * loading, xsks_map is turned into a DEVMAP (same key/value sizes, also valid for
 * bpf_redirect_map) holding loopback at every queue: "steered" then reads XDP_REDIRECT.
 * The program's code is unchanged.
 *
 *   xdp_verdicts STEER_OBJ     prints one line per case and "N passed, N failed"; exit 0 if all pass
 *
 * Needs root (CAP_BPF). Test-only; not part of pop53d.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

enum { L2_PLAIN, L2_VLAN, L2_QINQ };

struct frame_spec {
	const char *what;
	int l2;
	int v6;
	uint8_t proto;          /* 17 UDP, 6 TCP, 1 ICMP */
	const char *dst;
	uint16_t dport;
	uint16_t frag;          /* IPv4 flags/offset field, host order */
	int ihl;                /* IPv4 header words (5 = no options) */
	uint8_t v6_ext;         /* IPv6: extension header before UDP (0 = none) */
	int truncate;           /* cut the frame to this many bytes (0 = whole) */
	uint16_t ethertype;     /* 0 = from v6; else raw ethertype (e.g. ARP) */
	int want_steer;
};

static const struct frame_spec cases[] = {
	{ "IPv4 UDP/53 to service", L2_PLAIN, 0, 17, "192.0.2.53", 53, 0, 5, 0, 0, 0, 1 },
	{ "IPv6 UDP/53 to service", L2_PLAIN, 1, 17, "2001:db8:53::53", 53, 0, 5, 0, 0, 0, 1 },
	{ "802.1Q IPv4 UDP/53 to service", L2_VLAN, 0, 17, "192.0.2.53", 53, 0, 5, 0, 0, 0, 1 },
	{ "802.1Q IPv6 UDP/53 to service", L2_VLAN, 1, 17, "2001:db8:53::53", 53, 0, 5, 0, 0, 0, 1 },
	{ "IPv4 with options UDP/53 (worker counts the drop)", L2_PLAIN, 0, 17, "192.0.2.53", 53, 0, 6, 0, 0, 0, 1 },
	{ "IPv4 DF set UDP/53", L2_PLAIN, 0, 17, "192.0.2.53", 53, 0x4000, 5, 0, 0, 0, 1 },
	{ "second service address 198.51.100.7", L2_PLAIN, 0, 17, "198.51.100.7", 53, 0, 5, 0, 0, 0, 1 },
	{ "QinQ passes", L2_QINQ, 0, 17, "192.0.2.53", 53, 0, 5, 0, 0, 0, 0 },
	{ "IPv4 UDP/54 passes", L2_PLAIN, 0, 17, "192.0.2.53", 54, 0, 5, 0, 0, 0, 0 },
	{ "IPv6 UDP/54 passes", L2_PLAIN, 1, 17, "2001:db8:53::53", 54, 0, 5, 0, 0, 0, 0 },
	{ "IPv4 UDP/53 to other address passes", L2_PLAIN, 0, 17, "192.0.2.54", 53, 0, 5, 0, 0, 0, 0 },
	{ "IPv6 UDP/53 to other address passes", L2_PLAIN, 1, 17, "2001:db8:53::54", 53, 0, 5, 0, 0, 0, 0 },
	{ "IPv4 TCP/53 passes", L2_PLAIN, 0, 6, "192.0.2.53", 53, 0, 5, 0, 0, 0, 0 },
	{ "IPv6 TCP/53 passes", L2_PLAIN, 1, 6, "2001:db8:53::53", 53, 0, 5, 0, 0, 0, 0 },
	{ "ICMP passes", L2_PLAIN, 0, 1, "192.0.2.53", 0, 0, 5, 0, 0, 0, 0 },
	{ "IPv4 fragment offset!=0 passes", L2_PLAIN, 0, 17, "192.0.2.53", 53, 0x00b9, 5, 0, 0, 0, 0 },
	{ "IPv4 first fragment (MF) passes", L2_PLAIN, 0, 17, "192.0.2.53", 53, 0x2000, 5, 0, 0, 0, 0 },
	{ "IPv6 fragment header passes", L2_PLAIN, 1, 17, "2001:db8:53::53", 53, 0, 5, 44, 0, 0, 0 },
	{ "IPv6 hop-by-hop header passes", L2_PLAIN, 1, 17, "2001:db8:53::53", 53, 0, 5, 0, 0, 0, 0 },
	{ "ARP passes", L2_PLAIN, 0, 0, "192.0.2.53", 0, 0, 5, 0, 0, 0x0806, 0 },
	/* No truncated-Ethernet row: BPF_PROG_TEST_RUN refuses frames under ETH_HLEN. */
	{ "truncated 802.1Q tag passes", L2_VLAN, 0, 17, "192.0.2.53", 53, 0, 5, 0, 16, 0, 0 },
	{ "truncated IPv4 header passes", L2_PLAIN, 0, 17, "192.0.2.53", 53, 0, 5, 0, 30, 0, 0 },
	{ "truncated UDP header passes", L2_PLAIN, 0, 17, "192.0.2.53", 53, 0, 5, 0, 38, 0, 0 },
	{ "truncated IPv6 header passes", L2_PLAIN, 1, 17, "2001:db8:53::53", 53, 0, 5, 0, 50, 0, 0 },
	{ "IPv4 options, UDP header cut off, passes", L2_PLAIN, 0, 17, "192.0.2.53", 53, 0, 15, 0, 60, 0, 0 },
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* Build a frame; returns its length. UDP payload is a few bytes (content is not looked at). */
static int build(const struct frame_spec *c, uint8_t *f, size_t room)
{
	int off = 12, l3, l4, ext;

	memset(f, 0, room);
	memcpy(f, "\x02\x00\x00\x00\x00\x53\x02\x00\x00\x00\x00\x01", 12);
	if (c->l2 == L2_QINQ) {
		put16(f + off, 0x88a8);
		put16(f + off + 2, 10);
		off += 4;
	}
	if (c->l2 != L2_PLAIN) {
		put16(f + off, 0x8100);
		put16(f + off + 2, 100);
		off += 4;
	}
	put16(f + off, c->ethertype ? c->ethertype : (c->v6 ? 0x86dd : 0x0800));
	off += 2;
	l3 = off;
	if (c->ethertype == 0x0806)
		return off + 28;
	if (!c->v6) {
		f[l3] = 0x40 | c->ihl;
		f[l3 + 8] = 64;
		f[l3 + 9] = c->proto;
		put16(f + l3 + 6, c->frag);
		inet_pton(AF_INET, "192.0.2.1", f + l3 + 12);
		inet_pton(AF_INET, c->dst, f + l3 + 16);
		l4 = l3 + c->ihl * 4;
		put16(f + l3 + 2, l4 - l3 + 8 + 12);
	} else {
		int hbh = strstr(c->what, "hop-by-hop") != NULL;

		f[l3] = 0x60;
		f[l3 + 7] = 64;
		inet_pton(AF_INET6, "2001:db8:53::1", f + l3 + 8);
		inet_pton(AF_INET6, c->dst, f + l3 + 24);
		ext = l3 + 40;
		l4 = ext;
		if (c->v6_ext == 44 || hbh) {
			f[l3 + 6] = hbh ? 0 : 44;
			f[ext] = c->proto;      /* next header after the extension */
			l4 = ext + 8;
		} else {
			f[l3 + 6] = c->proto;
		}
		put16(f + l3 + 4, l4 - ext + 8 + 12);
	}
	put16(f + l4, 40000);
	put16(f + l4 + 2, c->dport);
	put16(f + l4 + 4, 8 + 12);
	return l4 + 8 + 12;
}

static int set_addr(int fd, const char *s)
{
	uint8_t key[16] = { 0 };
	uint32_t one = 1;

	if (strchr(s, ':') != NULL) {
		inet_pton(AF_INET6, s, key);
	} else {
		key[10] = key[11] = 0xff;
		inet_pton(AF_INET, s, key + 12);
	}
	return bpf_map_update_elem(fd, key, &one, BPF_ANY);
}

int main(int argc, char **argv)
{
	struct bpf_object *obj = NULL;
	struct bpf_program *prog;
	struct bpf_map *xsks, *addrs;
	int pass = 0, fail = 0, prog_fd, ret = 1;
	uint32_t q, lo;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s steer.bpf.o\n", argv[0]);
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (obj == NULL || libbpf_get_error(obj)) {
		fprintf(stderr, "xdp_verdicts: cannot open %s\n", argv[1]);
		return 1;
	}
	xsks = bpf_object__find_map_by_name(obj, "xsks_map");
	addrs = bpf_object__find_map_by_name(obj, "p53_addrs");
	prog = bpf_object__next_program(obj, NULL);
	if (xsks == NULL || addrs == NULL || prog == NULL) {
		fprintf(stderr, "xdp_verdicts: %s lacks xsks_map, p53_addrs or a program\n", argv[1]);
		goto cleanup;
	}
	if (bpf_map__type(xsks) != BPF_MAP_TYPE_XSKMAP || bpf_map__key_size(addrs) != 16) {
		fprintf(stderr, "xdp_verdicts: xsks_map is not an XSKMAP or p53_addrs key is not 16 bytes\n");
		goto cleanup;
	}
	bpf_map__set_type(xsks, BPF_MAP_TYPE_DEVMAP);
	if (bpf_object__load(obj) != 0) {
		fprintf(stderr, "xdp_verdicts: load failed (verifier?)\n");
		goto cleanup;
	}
	prog_fd = bpf_program__fd(prog);
	lo = if_nametoindex("lo");
	for (q = 0; q < bpf_map__max_entries(xsks); q++)
		bpf_map_update_elem(bpf_map__fd(xsks), &q, &lo, BPF_ANY);
	if (set_addr(bpf_map__fd(addrs), "192.0.2.53") || set_addr(bpf_map__fd(addrs), "2001:db8:53::53") ||
	    set_addr(bpf_map__fd(addrs), "198.51.100.7")) {
		fprintf(stderr, "xdp_verdicts: cannot fill p53_addrs: %s\n", strerror(errno));
		goto cleanup;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct frame_spec *c = &cases[i];
		uint8_t frame[256];
		int len = build(c, frame, sizeof(frame));
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
			    .data_size_in = c->truncate ? c->truncate : len, .repeat = 1);
		int want = c->want_steer ? XDP_REDIRECT : XDP_PASS;

		if (bpf_prog_test_run_opts(prog_fd, &opts) != 0) {
			printf("FAIL %s: test run: %s\n", c->what, strerror(errno));
			fail++;
		} else if ((int)opts.retval != want) {
			printf("FAIL %s: verdict %u, want %d\n", c->what, opts.retval, want);
			fail++;
		} else {
			printf("ok   %s\n", c->what);
			pass++;
		}
	}
	printf("%d passed, %d failed\n", pass, fail);
	ret = fail == 0 ? 0 : 1;
cleanup:
	bpf_object__close(obj);
	return ret;
}
