/* The record of the XDP program a dpdk-mode run attached; see xdp_owner.h. */
#include "control/net/xdp_owner.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <unistd.h>
#include <sys/stat.h>

#include <linux/if_link.h>
#include <bpf/libbpf.h>

int p53_xdp_owner_path(char *out, size_t len, const char *control_socket, const char *ifname)
{
	const char *slash = strrchr(control_socket, '/');
	int n;

	if (slash == NULL) /* a name without a directory: the current one */
		n = snprintf(out, len, "./xdp-%s.owner", ifname);
	else
		n = snprintf(out, len, "%.*s/xdp-%s.owner", (int)(slash - control_socket),
			     control_socket, ifname);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Does pid run a process called pop53d (not us)? */
static int pop53d_runs(long pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (pid <= 0 || pid == (long)getpid())
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fgets(comm, sizeof(comm), f) == NULL)
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, "pop53d") == 0;
}

int p53_xdp_owner_left(const char *path, uint32_t *id, long *pid)
{
	FILE *f = fopen(path, "r");
	uint32_t i = 0;
	long p = 0;
	int n;

	*id = 0;
	*pid = 0;
	if (f == NULL)
		return 0;
	n = fscanf(f, "prog %" SCNu32 " pid %ld", &i, &p);
	fclose(f);
	if (n != 2 || i == 0)
		return -EINVAL;
	*pid = p;
	if (pop53d_runs(p))
		return -EBUSY;
	*id = i;
	return 0;
}

int p53_xdp_owner_write(const char *path, const char *ifname)
{
	static const uint32_t modes[] = { XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE, XDP_FLAGS_HW_MODE };
	char tmp[4200];
	int ifindex = (int)if_nametoindex(ifname);
	uint32_t id = 0;
	FILE *f;

	if (ifindex == 0)
		return -ENODEV;
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]) && id == 0; m++)
		if (bpf_xdp_query_id(ifindex, (int)modes[m], &id) < 0)
			id = 0;
	if (id == 0)
		return -ENOENT;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* The port starts before the control socket's directory is made (p53_ctl_listen): on
	 * the first start after boot /run/pop53 may not exist yet. */
	char *slash = strrchr(tmp, '/');
	if (slash != NULL && slash != tmp) {
		*slash = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
			int e = errno;
			fprintf(stderr, "xdp: cannot make %s: %s\n", tmp, strerror(e));
			return -e;
		}
		*slash = '/';
	}
	f = fopen(tmp, "w");
	if (f == NULL) {
		int e = errno;
		fprintf(stderr, "xdp: cannot write %s: %s\n", tmp, strerror(e));
		return -e;
	}
	fprintf(f, "prog %" PRIu32 " pid %ld\n", id, (long)getpid());
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		int e = errno;
		fprintf(stderr, "xdp: cannot write %s: %s\n", path, strerror(e));
		unlink(tmp);
		return -e;
	}
	return 0;
}

void p53_xdp_owner_remove(const char *path)
{
	if (unlink(path) != 0 && errno != ENOENT)
		fprintf(stderr, "xdp: cannot remove %s: %s\n", path, strerror(errno));
}
