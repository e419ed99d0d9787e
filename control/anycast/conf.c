/* The `anycast:` config section; see conf.h. */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/anycast/conf.h"
#include "control/health/conf.h"

static int key_prefixes(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			const char *where, void *base)
{
	struct p53_anycast_conf *ac = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of prefixes");

	(void)k;
	if (n < 0)
		return -1;
	if (n > P53_ANYCAST_MAX_PREFIXES)
		return p53_conf_fail(c, v, "%s: at most %d prefixes", where, P53_ANYCAST_MAX_PREFIXES);
	for (int i = 0; i < n; i++) {
		struct p53_prefix *p = &ac->prefixes[ac->n_prefixes];
		yaml_node_t *item = p53_conf_seq_item(c, v, i);

		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_conf_prefix_of(c, item, iw, &p->family, p->bytes, &p->len) != 0)
			return -1;
		for (int j = 0; j < ac->n_prefixes; j++)
			if (memcmp(&ac->prefixes[j], p, sizeof(*p)) == 0)
				return p53_conf_fail(c, item, "%s: duplicate prefix", iw);
		ac->n_prefixes++;
	}
	return 0;
}

/* A kernel interface name: what IFNAMSIZ and `ip link` accept. */
static int key_ifname(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	const char *s;

	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	if (s[0] == '\0' || strlen(s) >= IFNAMSIZ || strpbrk(s, "/: \t") != NULL)
		return p53_conf_expected(c, v, where, "an interface name (1..15 bytes, no '/', ':' or spaces)");
	return p53_conf_string(c, k, v, where, base);
}

/* A named sub-section: marks itself present, then walks its table. */
static int present_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base)
{
	bool *present = (bool *)((char *)base + k->off); /* `present` is each struct's first field */

	*present = true;
	return p53_conf_map(c, v, k->sub, k->nsub, where, c->key, present);
}

#define DUR(name_, field_, min_, max_) \
	{ .name = name_, .fn = p53_conf_duration, field_, .min = (min_), .max = (max_) }
#define FR(f) P53_CONF_FIELD(struct p53_frr_conf, f)
#define BI(f) P53_CONF_FIELD(struct p53_bird_conf, f)
#define EB(f) P53_CONF_FIELD(struct p53_exabgp_conf, f)
#define CM(f) P53_CONF_FIELD(struct p53_command_conf, f)
#define AC(f) P53_CONF_FIELD(struct p53_anycast_conf, f)
#define SUB(name_, field_, table_) \
	{ .name = name_, .fn = present_section, .off = offsetof(struct p53_anycast_conf, field_), \
	  .sub = (table_), .nsub = P53_CONF_NKEYS(table_) }

static const struct p53_conf_key frr_keys[] = {
	{ .name = "device", .fn = key_ifname, FR(device) },
	{ .name = "depref_device", .fn = key_ifname, FR(depref_device) },
	{ .name = "check", .fn = p53_conf_string, FR(check) },
	DUR("check_interval", FR(check_interval_ms), 100, 3600000),
	DUR("check_timeout", FR(check_timeout_ms), 10, 600000),
};

static const struct p53_conf_key bird_keys[] = {
	{ .name = "birdc", .fn = p53_conf_string, BI(birdc) },
	{ .name = "socket", .fn = p53_conf_string, BI(socket) },
	{ .name = "protocol", .fn = p53_conf_string, BI(protocol), .required = true },
	{ .name = "depref_protocol", .fn = p53_conf_string, BI(depref_protocol) },
	DUR("timeout", BI(timeout_ms), 10, 600000),
};

static const struct p53_conf_key exabgp_keys[] = {
	{ .name = "output", .fn = p53_conf_string, EB(output) },
	{ .name = "next_hop", .fn = p53_conf_string, EB(next_hop) },
	{ .name = "depref", .fn = p53_conf_string, EB(depref) },
};

static const struct p53_conf_key command_keys[] = {
	{ .name = "run", .fn = p53_conf_string, CM(run), .required = true },
	DUR("timeout", CM(timeout_ms), 10, 600000),
};

static const struct p53_conf_key anycast_keys[] = {
	{ .name = "prefixes", .fn = key_prefixes },
	DUR("retry", AC(retry_ms), 100, 3600000),
	SUB("frr", frr, frr_keys),
	SUB("bird", bird, bird_keys),
	SUB("exabgp", exabgp, exabgp_keys),
	SUB("command", command, command_keys),
};

static int set_default(struct p53_conf_ctx *c, yaml_node_t *v, char **field, const char *s)
{
	return *field != NULL ? 0 : p53_conf_set_string(c, v, field, s);
}

int p53_anycast_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			     const char *where, void *base)
{
	struct p53_anycast_conf *ac = (struct p53_anycast_conf *)((char *)base + k->off);

	memset(ac, 0, sizeof(*ac));
	ac->present = true;
	ac->retry_ms = 2000;
	ac->frr.check_interval_ms = 5000;
	ac->frr.check_timeout_ms = 2000;
	ac->bird.timeout_ms = 2000;
	ac->command.timeout_ms = 5000;
	if (p53_conf_map(c, v, anycast_keys, P53_CONF_NKEYS(anycast_keys), where, c->key, ac) != 0)
		return -1;
	/* No announcer named: FRR, the default. */
	if (!ac->frr.present && !ac->bird.present && !ac->exabgp.present && !ac->command.present)
		ac->frr.present = true;
	if (ac->frr.present &&
	    (set_default(c, v, &ac->frr.device, "p53any") != 0 ||
	     set_default(c, v, &ac->frr.depref_device, "p53any-dp") != 0))
		return -1;
	if (ac->frr.present && strcmp(ac->frr.device, ac->frr.depref_device) == 0)
		return p53_conf_fail(c, v, "%s.frr: device and depref_device must differ", where);
	if (ac->bird.present && set_default(c, v, &ac->bird.birdc, "/usr/sbin/birdc") != 0)
		return -1;
	if (ac->exabgp.present &&
	    (set_default(c, v, &ac->exabgp.output, "stdout") != 0 ||
	     set_default(c, v, &ac->exabgp.next_hop, "self") != 0 ||
	     set_default(c, v, &ac->exabgp.depref, "community [65535:0]") != 0))
		return -1;
	return 0;
}

static bool str_same(const char *a, const char *b)
{
	return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

bool p53_anycast_conf_same(const struct p53_anycast_conf *a, const struct p53_anycast_conf *b)
{
	return a->present == b->present && a->n_prefixes == b->n_prefixes &&
	       memcmp(a->prefixes, b->prefixes, sizeof(a->prefixes)) == 0 && a->retry_ms == b->retry_ms &&
	       a->frr.present == b->frr.present && str_same(a->frr.device, b->frr.device) &&
	       str_same(a->frr.depref_device, b->frr.depref_device) && str_same(a->frr.check, b->frr.check) &&
	       a->frr.check_interval_ms == b->frr.check_interval_ms &&
	       a->frr.check_timeout_ms == b->frr.check_timeout_ms &&
	       a->bird.present == b->bird.present && str_same(a->bird.birdc, b->bird.birdc) &&
	       str_same(a->bird.socket, b->bird.socket) && str_same(a->bird.protocol, b->bird.protocol) &&
	       str_same(a->bird.depref_protocol, b->bird.depref_protocol) &&
	       a->bird.timeout_ms == b->bird.timeout_ms &&
	       a->exabgp.present == b->exabgp.present && str_same(a->exabgp.output, b->exabgp.output) &&
	       str_same(a->exabgp.next_hop, b->exabgp.next_hop) && str_same(a->exabgp.depref, b->exabgp.depref) &&
	       a->command.present == b->command.present && str_same(a->command.run, b->command.run) &&
	       a->command.timeout_ms == b->command.timeout_ms;
}

void p53_anycast_conf_free(struct p53_anycast_conf *ac)
{
	free(ac->frr.device);
	free(ac->frr.depref_device);
	free(ac->frr.check);
	free(ac->bird.birdc);
	free(ac->bird.socket);
	free(ac->bird.protocol);
	free(ac->bird.depref_protocol);
	free(ac->exabgp.output);
	free(ac->exabgp.next_hop);
	free(ac->exabgp.depref);
	free(ac->command.run);
	memset(ac, 0, sizeof(*ac));
}
