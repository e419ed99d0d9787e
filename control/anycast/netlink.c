/* tun devices and netlink address changes; see netlink.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "control/anycast/netlink.h"

int p53_tun_open(const char *name, int *ifindex, char *err, size_t errlen)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		snprintf(err, errlen, "tun %s: /dev/net/tun: %s", name, strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
		snprintf(err, errlen, "tun %s: %s%s", name, strerror(errno),
			 errno == EBUSY ? " (another process holds it: a second pop53d?)" : "");
		close(fd);
		return -1;
	}
	/* A device left persistent by hand (ip tuntap add) would outlive us: make it ours. */
	if (ioctl(fd, TUNSETPERSIST, 0) != 0) {
		snprintf(err, errlen, "tun %s: cannot clear IFF_PERSIST: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	*ifindex = (int)if_nametoindex(name);
	if (*ifindex == 0) {
		snprintf(err, errlen, "tun %s: no ifindex: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void p53_tun_discard(int fd)
{
	char buf[2048];

	for (int i = 0; i < 64 && read(fd, buf, sizeof(buf)) > 0; i++)
		;
}

struct mnl_socket *p53_nl_open(char *err, size_t errlen)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	struct timeval tv = { .tv_sec = 1 };

	if (nl == NULL || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "netlink: %s", strerror(errno));
		if (nl != NULL)
			mnl_socket_close(nl);
		return NULL;
	}
	/* The kernel acks at once; the bound only guards against the impossible. */
	setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return nl;
}

/* Send one request and wait for its ack. */
static int talk(struct mnl_socket *nl, struct nlmsghdr *nlh)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int seq = (unsigned int)time(NULL) ^ (unsigned int)nlh->nlmsg_type << 16;
	int ret;

	nlh->nlmsg_seq = seq;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	ret = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf));
	while (ret > 0) {
		ret = mnl_cb_run(buf, (size_t)ret, seq, mnl_socket_get_portid(nl), NULL, NULL);
		if (ret <= MNL_CB_STOP)
			break;
		ret = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf));
	}
	return ret < 0 ? -1 : 0;
}

int p53_nl_link_up(struct mnl_socket *nl, int ifindex, char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	if (talk(nl, nlh) != 0) {
		snprintf(err, errlen, "netlink: link %d up: %s", ifindex, strerror(errno));
		return -1;
	}
	return 0;
}

int p53_nl_addr(struct mnl_socket *nl, bool add, int ifindex, const struct p53_prefix *p,
		char *err, size_t errlen)
{
	return p53_nl_addr_metric(nl, add, ifindex, p, 0, err, errlen);
}

int p53_nl_addr_metric(struct mnl_socket *nl, bool add, int ifindex, const struct p53_prefix *p,
		       uint32_t metric, char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;
	size_t alen = p->family == AF_INET ? 4 : 16;

	nlh->nlmsg_type = add ? RTM_NEWADDR : RTM_DELADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_REPLACE : 0);
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = p->family;
	ifa->ifa_prefixlen = p->len;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (unsigned int)ifindex;
	mnl_attr_put(nlh, IFA_LOCAL, alen, p->bytes);
	mnl_attr_put(nlh, IFA_ADDRESS, alen, p->bytes);
	if (p->family == AF_INET6) {
		/* No DAD: a tentative address is not a route FRR would announce. */
		ifa->ifa_flags = IFA_F_NODAD;
		mnl_attr_put_u32(nlh, IFA_FLAGS, IFA_F_NODAD);
	}
	if (add && metric != 0)
		mnl_attr_put_u32(nlh, IFA_RT_PRIORITY, metric);
	if (talk(nl, nlh) != 0) {
		if (!add && (errno == EADDRNOTAVAIL || errno == ENOENT || errno == ENODEV))
			return 0;
		char a[INET6_ADDRSTRLEN];
		inet_ntop(p->family, p->bytes, a, sizeof(a));
		snprintf(err, errlen, "netlink: %s %s/%u on ifindex %d: %s", add ? "add" : "delete", a,
			 p->len, ifindex, strerror(errno));
		return -1;
	}
	return 0;
}
