/*
 * XDP steering, user-space side: detach stale programs, fill p53_addrs. See control/net/xdp.h.
 * Control thread only.
 */
#include "control/net/xdp.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define ADDRS_MAP_NAME  "p53_addrs"
#define STEER_PROG_NAME "p53_steer"
#define XSK_PROG_NAME   "xsk_def_prog"   /* libxdp's default AF_XDP program */
#define DISPATCHER_NAME "xdp_dispatcher" /* libxdp's multi-program dispatcher */
#define KEY_SIZE        16
#define MAX_VALUE_SIZE  8
#define MAX_PROG_MAPS   64

/* Each attach mode holds its own program; a crashed run may have used any of them. */
static const struct {
	uint32_t flag;
	const char *name;
} modes[] = {
	{ XDP_FLAGS_DRV_MODE, "drv" },
	{ XDP_FLAGS_SKB_MODE, "skb" },
	{ XDP_FLAGS_HW_MODE, "hw" },
};

#define N_MODES (sizeof(modes) / sizeof(modes[0]))

static int ifindex_of(const char *ifname)
{
	unsigned int idx = if_nametoindex(ifname);

	if (idx == 0) {
		fprintf(stderr, "xdp: no interface %s: %s\n", ifname, strerror(errno));
		return -ENODEV;
	}
	return (int)idx;
}

/* libbpf 1.x returns -errno; older conventions return -1 with errno set. */
static int neg_errno(int ret)
{
	if (ret < -1)
		return ret;
	return errno != 0 ? -errno : -EIO;
}

static int find_prog_map(int prog_fd, const char *name, struct bpf_map_info *out);

enum { FOREIGN, STEER, LEFT_BY_DPDK_RUN };

/*
 * Is program `id` ours to remove? STEER when it is named p53_steer (the function in
 * dataplane/bpf/steer.bpf.c) and uses a map called p53_addrs; LEFT_BY_DPDK_RUN when it is
 * libxdp's default program or dispatcher AND has the id our earlier dpdk-mode run recorded
 * (left_id, control/net/xdp_owner.h): the name alone proves nothing, every AF_XDP application
 * gets the same program. A knotd or kxdpgun program is FOREIGN. Negative errno on failure;
 * name is filled in every other case.
 */
static int ours(uint32_t id, uint32_t left_id, char name[BPF_OBJ_NAME_LEN])
{
	struct bpf_prog_info info;
	struct bpf_map_info minfo;
	uint32_t len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id), ret;

	if (fd < 0)
		return neg_errno(fd);
	memset(&info, 0, sizeof(info));
	ret = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (ret < 0) {
		ret = neg_errno(ret);
		close(fd);
		return ret;
	}
	memcpy(name, info.name, BPF_OBJ_NAME_LEN);
	name[BPF_OBJ_NAME_LEN - 1] = '\0';
	ret = FOREIGN;
	if (strcmp(name, STEER_PROG_NAME) == 0) {
		int mfd = find_prog_map(fd, ADDRS_MAP_NAME, &minfo);
		if (mfd >= 0) {
			close(mfd);
			ret = STEER;
		}
	} else if (left_id != 0 && id == left_id &&
		   (strcmp(name, XSK_PROG_NAME) == 0 || strcmp(name, DISPATCHER_NAME) == 0)) {
		ret = LEFT_BY_DPDK_RUN;
	}
	close(fd);
	return ret;
}

int p53_xdp_detach_stale(const char *ifname, uint32_t left_id)
{
	int ifindex = ifindex_of(ifname);
	size_t i;

	if (ifindex < 0)
		return ifindex;
	for (i = 0; i < N_MODES; i++) {
		uint32_t id = 0;
		int ret = bpf_xdp_query_id(ifindex, (int)modes[i].flag, &id);

		if (ret < 0) {
			ret = neg_errno(ret);
			/* Hardware mode is simply unsupported on most devices. */
			if (modes[i].flag == XDP_FLAGS_HW_MODE && ret == -EOPNOTSUPP)
				continue;
			fprintf(stderr, "xdp: cannot query %s XDP program on %s: %s\n",
				modes[i].name, ifname, strerror(-ret));
			return ret;
		}
		if (id == 0)
			continue;
		char name[BPF_OBJ_NAME_LEN];
		int kind = ours(id, left_id, name);
		ret = kind;
		if (ret < 0) {
			fprintf(stderr, "xdp: cannot inspect %s XDP program id %u on %s: %s\n",
				modes[i].name, id, ifname, strerror(-ret));
			return ret;
		}
		if (kind == FOREIGN) {
			fprintf(stderr, "xdp: %s has a foreign XDP program '%s' (id %u, %s mode) attached; "
				"pop53d removes only its own (its steering program, or the libxdp program its "
				"earlier dpdk-mode run recorded). Detach it yourself "
				"(ip link set %s xdp off) if nothing else needs it\n",
				ifname, name, id, modes[i].name, ifname);
			return -EEXIST;
		}
		ret = bpf_xdp_detach(ifindex, modes[i].flag, NULL);
		if (ret < 0) {
			ret = neg_errno(ret);
			fprintf(stderr, "xdp: cannot detach %s XDP program id %u from %s: %s\n",
				modes[i].name, id, ifname, strerror(-ret));
			return ret;
		}
		if (kind == LEFT_BY_DPDK_RUN)
			fprintf(stderr, "xdp: detached libxdp's program '%s' id %u from %s, left by "
				"pop53d's earlier dpdk-mode run\n", name, id, ifname);
		else
			fprintf(stderr, "xdp: detached stale XDP program id %u from %s\n", id, ifname);
	}
	return 0;
}

/* fd of the map called name among the maps prog_fd uses, or a negative errno. */
static int find_prog_map(int prog_fd, const char *name, struct bpf_map_info *out)
{
	uint32_t ids[MAX_PROG_MAPS];
	struct bpf_prog_info pinfo;
	uint32_t len = sizeof(pinfo);
	uint32_t i, n;
	int ret;

	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.nr_map_ids = MAX_PROG_MAPS;
	pinfo.map_ids = (uint64_t)(uintptr_t)ids;
	ret = bpf_obj_get_info_by_fd(prog_fd, &pinfo, &len);
	if (ret < 0)
		return neg_errno(ret);
	/* The kernel reports the real count even when it is more than the room we gave. */
	n = pinfo.nr_map_ids < MAX_PROG_MAPS ? pinfo.nr_map_ids : MAX_PROG_MAPS;
	for (i = 0; i < n; i++) {
		uint32_t mlen = sizeof(*out);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;       /* the map went away with a detached program */
		memset(out, 0, sizeof(*out));
		if (bpf_obj_get_info_by_fd(fd, out, &mlen) == 0 && strcmp(out->name, name) == 0)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* fd of p53_addrs of the program attached to ifindex in any mode, or a negative errno. */
static int find_addrs_map(const char *ifname, int ifindex, struct bpf_map_info *info)
{
	int ret = -ENOENT;
	uint32_t seen = 0;
	size_t i;

	for (i = 0; i < N_MODES; i++) {
		uint32_t id = 0;
		int prog_fd, fd;

		if (bpf_xdp_query_id(ifindex, (int)modes[i].flag, &id) < 0 || id == 0)
			continue;
		seen = id;
		prog_fd = bpf_prog_get_fd_by_id(id);
		if (prog_fd < 0) {
			ret = neg_errno(prog_fd);
			fprintf(stderr, "xdp: cannot open XDP program id %u on %s: %s\n",
				id, ifname, strerror(-ret));
			continue;
		}
		fd = find_prog_map(prog_fd, ADDRS_MAP_NAME, info);
		close(prog_fd);
		if (fd >= 0)
			return fd;
		ret = fd;
	}
	if (seen == 0)
		fprintf(stderr, "xdp: no XDP program attached to %s (is the af_xdp port started "
			"with xdp_prog=steer.bpf.o?)\n", ifname);
	else if (ret == -ENOENT)
		fprintf(stderr, "xdp: XDP program id %u on %s has no map named %s "
			"(not pop53's steer.bpf.o)\n", seen, ifname, ADDRS_MAP_NAME);
	return ret;
}

static int addr_key(const struct p53_addr *a, uint8_t key[KEY_SIZE])
{
	memset(key, 0, KEY_SIZE);
	if (a->family == AF_INET6) {
		memcpy(key, a->bytes, KEY_SIZE);
		return 0;
	}
	if (a->family == AF_INET) {
		/* IPv4-mapped IPv6 (RFC 4291 section 2.5.5.2), as steer.bpf.c builds it. */
		key[10] = 0xff;
		key[11] = 0xff;
		memcpy(key + 12, a->bytes, 4);
		return 0;
	}
	return -EINVAL;
}

static int in_set(const uint8_t key[KEY_SIZE], const struct p53_addr *addrs, int n)
{
	uint8_t k[KEY_SIZE];
	int i;

	for (i = 0; i < n; i++)
		if (addr_key(&addrs[i], k) == 0 && memcmp(k, key, KEY_SIZE) == 0)
			return 1;
	return 0;
}

/* Delete every key not in addrs. Bounded: the map never holds more than max_entries. */
static int prune(int fd, const struct bpf_map_info *info, const struct p53_addr *addrs, int n)
{
	uint8_t key[KEY_SIZE], next[KEY_SIZE];
	uint8_t *prev = NULL;
	uint32_t steps;

	for (steps = 0; steps <= info->max_entries; steps++) {
		if (bpf_map_get_next_key(fd, prev, next) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (in_set(next, addrs, n)) {
			memcpy(key, next, KEY_SIZE);
			prev = key;
			continue;
		}
		/* Deleting the current key would restart a hash walk; prev stays valid. */
		if (bpf_map_delete_elem(fd, next) < 0 && errno != ENOENT)
			return -errno;
	}
	return -EOVERFLOW;
}

int p53_xdp_set_addrs(const char *ifname, const struct p53_addr *addrs, int n)
{
	uint8_t key[KEY_SIZE], value[MAX_VALUE_SIZE] = { 1 };
	struct bpf_map_info info;
	int ifindex, fd = -1, ret, i;

	if (n < 0 || n > P53_CONFIG_MAX_ADDRS || (n > 0 && addrs == NULL)) {
		fprintf(stderr, "xdp: bad address count %d for %s\n", n, ifname);
		return -EINVAL;
	}
	ifindex = ifindex_of(ifname);
	if (ifindex < 0)
		return ifindex;
	fd = find_addrs_map(ifname, ifindex, &info);
	if (fd < 0)
		return fd;
	if (info.key_size != KEY_SIZE || info.value_size == 0 || info.value_size > MAX_VALUE_SIZE) {
		fprintf(stderr, "xdp: map %s on %s has key/value size %u/%u, want %u/1..%u\n",
			ADDRS_MAP_NAME, ifname, info.key_size, info.value_size, KEY_SIZE,
			MAX_VALUE_SIZE);
		ret = -EINVAL;
		goto cleanup;
	}
	if ((uint32_t)n > info.max_entries) {
		fprintf(stderr, "xdp: %d addresses, map %s holds %u\n", n, ADDRS_MAP_NAME,
			info.max_entries);
		ret = -E2BIG;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		if (addr_key(&addrs[i], key) < 0) {
			fprintf(stderr, "xdp: address %d has family %u, want AF_INET/AF_INET6\n",
				i, addrs[i].family);
			ret = -EINVAL;
			goto cleanup;
		}
		if (bpf_map_update_elem(fd, key, value, BPF_ANY) < 0) {
			ret = -errno;
			/* A full map: old addresses still take room; prune, then retry once. */
			if (ret == -E2BIG && prune(fd, &info, addrs, n) == 0 &&
			    bpf_map_update_elem(fd, key, value, BPF_ANY) == 0)
				continue;
			fprintf(stderr, "xdp: cannot add address %d to %s on %s: %s\n",
				i, ADDRS_MAP_NAME, ifname, strerror(-ret));
			goto cleanup;
		}
	}
	ret = prune(fd, &info, addrs, n);
	if (ret < 0)
		fprintf(stderr, "xdp: cannot remove old addresses from %s on %s: %s\n",
			ADDRS_MAP_NAME, ifname, strerror(-ret));
cleanup:
	close(fd);
	return ret;
}

const char *p53_xdp_iface_from_devargs(const char *devstr, char *buf, size_t len)
{
	static const char *const prefixes[] = { "net_af_xdp", "eth_af_xdp" };
	const char *p = NULL, *end;
	size_t i, n;

	if (devstr == NULL || buf == NULL || len == 0)
		return NULL;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && p == NULL; i++)
		if (strncmp(devstr, prefixes[i], strlen(prefixes[i])) == 0)
			p = devstr;
	if (p == NULL)
		return NULL;
	/* Devargs are "name,key=value,key=value"; match iface= only at the start of a pair. */
	for (p = strchr(p, ','); p != NULL; p = strchr(p, ',')) {
		p++;
		if (strncmp(p, "iface=", 6) != 0)
			continue;
		p += 6;
		end = strchr(p, ',');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n == 0 || n >= len || n >= IF_NAMESIZE)
			return NULL;
		memcpy(buf, p, n);
		buf[n] = '\0';
		return buf;
	}
	return NULL;
}
