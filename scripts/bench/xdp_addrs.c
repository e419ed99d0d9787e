/*
 * p53-xdp-addrs: fill the service-address map of the steering program attached to an
 * interface, the way pop53d does after its port starts (p53_xdp_set_addrs).
 *
 * For the I/O floor in scripts/bench/compare.sh: dpdk-testpmd loads pop53's steer.bpf.o
 * through the same net_af_xdp devarg (xdp_prog=) but knows nothing of p53_addrs, and an
 * empty map steers nothing to the socket. With this helper testpmd's port sees exactly the
 * traffic pop53d's port sees, through the same XDP program, while ARP and ND stay with the
 * kernel.
 *
 * Usage: p53-xdp-addrs IFACE ADDR...   (run in the interface's network namespace, as root)
 * Exits 0 when the map holds exactly ADDR..., 1 on any error (message on stderr), 2 on bad
 * usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "control/conf/config.h"
#include "control/net/xdp.h"

int main(int argc, char **argv)
{
	struct p53_addr addrs[P53_CONFIG_MAX_ADDRS];
	int n = argc - 2, i, ret;

	if (argc < 3 || n > P53_CONFIG_MAX_ADDRS) {
		fprintf(stderr, "usage: p53-xdp-addrs IFACE ADDR... (1..%d addresses)\n",
			P53_CONFIG_MAX_ADDRS);
		return 2;
	}
	memset(addrs, 0, sizeof(addrs));
	for (i = 0; i < n; i++) {
		const char *s = argv[i + 2];

		if (inet_pton(AF_INET, s, addrs[i].bytes) == 1) {
			addrs[i].family = AF_INET;
		} else if (inet_pton(AF_INET6, s, addrs[i].bytes) == 1) {
			addrs[i].family = AF_INET6;
		} else {
			fprintf(stderr, "p53-xdp-addrs: not an IPv4/IPv6 address: %s\n", s);
			return 2;
		}
	}
	ret = p53_xdp_set_addrs(argv[1], addrs, n);
	if (ret < 0) {
		fprintf(stderr, "p53-xdp-addrs: %s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	return 0;
}
