/*
 * xdp_fill: drive control/net/xdp.c by hand or from tests/integration/xdp_steer.sh.
 *
 *   xdp_fill IFACE detach            p53_xdp_detach_stale(IFACE, 0)
 *   xdp_fill IFACE set ADDR...       p53_xdp_set_addrs(IFACE, ADDR...) (none = empty the map)
 *   xdp_fill iface DEVSTR            print p53_xdp_iface_from_devargs(DEVSTR)
 *
 * Run it in the interface's namespace (ip netns exec). Exit 0 on success, 1 on failure.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "control/net/xdp.h"

static int parse_addr(const char *s, struct p53_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, a->bytes) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->bytes) == 1) {
		a->family = AF_INET6;
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct p53_addr addrs[P53_CONFIG_MAX_ADDRS];
	char buf[64];
	int i, n = 0;

	if (argc >= 3 && strcmp(argv[1], "iface") == 0) {
		const char *name = p53_xdp_iface_from_devargs(argv[2], buf, sizeof(buf));

		printf("%s\n", name != NULL ? name : "(null)");
		return name != NULL ? 0 : 1;
	}
	if (argc == 3 && strcmp(argv[2], "detach") == 0)
		return p53_xdp_detach_stale(argv[1], 0) == 0 ? 0 : 1;
	if (argc >= 3 && strcmp(argv[2], "set") == 0) {
		for (i = 3; i < argc; i++) {
			if (n == P53_CONFIG_MAX_ADDRS || parse_addr(argv[i], &addrs[n]) < 0) {
				fprintf(stderr, "xdp_fill: bad or too many addresses at %s\n", argv[i]);
				return 1;
			}
			n++;
		}
		return p53_xdp_set_addrs(argv[1], addrs, n) == 0 ? 0 : 1;
	}
	fprintf(stderr, "usage: %s IFACE detach | IFACE set ADDR... | iface DEVSTR\n", argv[0]);
	return 2;
}
