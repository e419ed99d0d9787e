/* The `dataplane.exception:` config section; see exc_conf.h. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "control/exc/exc_conf.h"

#define EXC(f) P53_CONF_FIELD(struct p53_exc_conf, f)

/* An interface address with its prefix length, "192.0.2.53/24" or "2001:db8::53/64": unlike
 * p53_conf_prefix_of, the host bits are the point (they are the address). */
static int key_addrs(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		     const char *where, void *base)
{
	struct p53_exc_conf *x = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of address/length");

	(void)k;
	if (n < 0)
		return -1;
	if (n > P53_EXC_MAX_ADDRS)
		return p53_conf_fail(c, v, "%s: at most %d addresses", where, P53_EXC_MAX_ADDRS);
	for (int i = 0; i < n; i++) {
		yaml_node_t *item = p53_conf_seq_item(c, v, i);
		struct p53_prefix *p = &x->addrs[x->n_addrs];
		char buf[INET6_ADDRSTRLEN + 8], *slash, *end;

		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (item == NULL || item->type != YAML_SCALAR_NODE ||
		    item->data.scalar.length >= sizeof(buf))
			return p53_conf_expected(c, item != NULL ? item : v, iw, "an address/length");
		memcpy(buf, item->data.scalar.value, item->data.scalar.length);
		buf[item->data.scalar.length] = '\0';
		slash = strchr(buf, '/');
		if (slash == NULL)
			return p53_conf_fail(c, item, "%s: '%s' has no prefix length (e.g. 192.0.2.53/24)",
					     iw, buf);
		*slash = '\0';
		memset(p, 0, sizeof(*p));
		if (inet_pton(AF_INET, buf, p->bytes) == 1)
			p->family = AF_INET;
		else if (inet_pton(AF_INET6, buf, p->bytes) == 1)
			p->family = AF_INET6;
		else
			return p53_conf_fail(c, item, "%s: '%s' is not an IPv4 or IPv6 address", iw, buf);
		long len = strtol(slash + 1, &end, 10);
		if (slash[1] == '\0' || *end != '\0' || len < 1 || len > (p->family == AF_INET ? 32 : 128))
			return p53_conf_fail(c, item, "%s: bad prefix length '%s'", iw, slash + 1);
		p->len = (uint8_t)len;
		for (int j = 0; j < x->n_addrs; j++)
			if (x->addrs[j].family == p->family &&
			    memcmp(x->addrs[j].bytes, p->bytes, sizeof(p->bytes)) == 0)
				return p53_conf_fail(c, item, "%s: duplicate address", iw);
		x->n_addrs++;
	}
	return 0;
}

static const struct p53_conf_key exc_keys[] = {
	{ .name = "iface", .fn = p53_conf_string, EXC(iface) },
	{ .name = "addresses", .fn = key_addrs },
	{ .name = "queue", .fn = p53_conf_pow2, EXC(queue), .min = 64, .max = 65536 },
	{ .name = "max_sleep_us", .fn = p53_conf_uint, EXC(idle_max_us), .min = 0, .max = 100000 },
};

void p53_exc_conf_defaults(struct p53_exc_conf *x)
{
	x->queue = 1024;
	x->idle_max_us = 100;
}

int p53_exc_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			 const char *where, void *base)
{
	struct p53_exc_conf *x = (struct p53_exc_conf *)((char *)base + k->off);

	if (p53_conf_map(c, v, exc_keys, P53_CONF_NKEYS(exc_keys), where, c->key, x) != 0)
		return -1;
	/* IFNAMSIZ: the kernel refuses longer names, and net_tap would fail late. */
	if (x->iface != NULL && (x->iface[0] == '\0' || strlen(x->iface) > 15 ||
				 strpbrk(x->iface, "/ ,=") != NULL))
		return p53_conf_fail(c, v, "%s.iface: '%s' is not an interface name (1 to 15 "
				     "characters, no '/', ' ', ',' or '=')", where, x->iface);
	return 0;
}

static bool str_same(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

bool p53_exc_conf_same(const struct p53_exc_conf *a, const struct p53_exc_conf *b)
{
	return str_same(a->iface, b->iface) && a->n_addrs == b->n_addrs &&
	       memcmp(a->addrs, b->addrs, sizeof(a->addrs)) == 0 && a->queue == b->queue &&
	       a->idle_max_us == b->idle_max_us;
}

void p53_exc_conf_free(struct p53_exc_conf *x)
{
	free(x->iface);
	x->iface = NULL;
}
