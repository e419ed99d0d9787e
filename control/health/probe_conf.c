/* A probe's `check:` mapping; see probe.h. Config loader and pop53ctl; no DPDK. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "control/health/conf.h"
#include "control/health/probe.h"

#define PC(f) P53_CONF_FIELD(struct p53_probe_conf, f)

const char *const p53_probe_type_names[] = { "command", "tcp", "http", "dns", "https", NULL };
static const char *const transport_names[] = { "udp", "tcp", NULL };

static int key_address(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		       const char *where, void *base)
{
	struct p53_probe_conf *pc = base;
	const char *s;

	(void)k;
	if (p53_conf_string_of(c, v, where, &s) != 0 || p53_conf_set_string(c, v, &pc->address, s) != 0)
		return -1;
	if (inet_pton(AF_INET, s, pc->addr) == 1)
		pc->family = 4;
	else if (inet_pton(AF_INET6, s, pc->addr) == 1)
		pc->family = 6;
	else
		return p53_conf_expected(c, v, where, "an IPv4 or IPv6 address");
	return 0;
}

/* Path and Host go into the request as they are: no bytes that would end or split a line. */
static int key_request_part(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			    const char *where, void *base)
{
	const char *s;

	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	for (const char *p = s; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return p53_conf_fail(c, v, "%s: '%s' has a space or control character (it goes "
					     "into the HTTP request line or header as is)", where, s);
	if (k->max == 1 && s[0] != '/')
		return p53_conf_fail(c, v, "%s: '%s' does not start with '/'", where, s);
	return p53_conf_string(c, k, v, where, base);
}

static int key_qname(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		     const char *where, void *base)
{
	struct p53_probe_conf *pc = base;
	ldns_rdf *d = NULL;
	const char *s;

	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	if (ldns_str2rdf_dname(&d, s) != LDNS_STATUS_OK || ldns_rdf_size(d) > 255) {
		ldns_rdf_deep_free(d);
		return p53_conf_expected(c, v, where, "a domain name");
	}
	free(pc->qwire);
	if ((pc->qwire = malloc(ldns_rdf_size(d))) == NULL) {
		ldns_rdf_deep_free(d);
		return p53_conf_fail(c, v, "out of memory");
	}
	memcpy(pc->qwire, ldns_rdf_data(d), ldns_rdf_size(d));
	pc->qwire_len = (uint8_t)ldns_rdf_size(d);
	ldns_rdf_deep_free(d);
	return p53_conf_string(c, k, v, where, base);
}

/* https: the CA file (relative: to the config's folder) must be a readable file now; its PEM
 * is parsed by the first probe (pop53ctl's config check links no TLS). */
static int key_ca_file(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		       const char *where, void *base)
{
	struct p53_probe_conf *pc = base;
	FILE *f;

	if (p53_conf_path(c, k, v, where, base) != 0)
		return -1;
	f = p53_fopen_regular(pc->ca_file);
	if (f == NULL)
		return p53_conf_fail(c, v, "%s: %s: %s", where, pc->ca_file,
				     errno == EINVAL ? "not a regular file" : strerror(errno));
	fclose(f);
	return 0;
}

static int key_transport(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			 const char *where, void *base)
{
	struct p53_probe_conf *pc = base;
	int t = 0;
	struct p53_conf_key ek = *k;

	ek.off = 0;
	if (p53_conf_enum(c, &ek, v, where, &t) != 0)
		return -1;
	pc->tcp = t == 1;
	return 0;
}

#define DUR(name_, field_, min_, max_) \
	{ .name = name_, .fn = p53_conf_duration, field_, .min = (min_), .max = (max_) }

static const struct p53_conf_key probe_keys[] = {
	{ .name = "type", .fn = p53_conf_enum, PC(type), .names = p53_probe_type_names, .required = true },
	{ .name = "address", .fn = key_address },
	{ .name = "port", .fn = p53_conf_uint, PC(port), .min = 1, .max = 65535 },
	{ .name = "path", .fn = key_request_part, PC(path), .max = 1 },
	{ .name = "host", .fn = key_request_part, PC(host) },
	{ .name = "status", .fn = p53_conf_uint, PC(status), .min = 100, .max = 599 },
	{ .name = "body", .fn = p53_conf_string, PC(body) },
	{ .name = "tls_verify", .fn = p53_conf_bool, PC(tls_verify) },
	{ .name = "ca_file", .fn = key_ca_file, PC(ca_file) },
	{ .name = "transport", .fn = key_transport, .names = transport_names },
	{ .name = "qname", .fn = key_qname, PC(qname) },
	{ .name = "qtype", .fn = p53_conf_qtype, PC(qtype) },
	{ .name = "rcode", .fn = p53_conf_enum, PC(rcode), .names = p53_conf_rcode_names },
	{ .name = "answer", .fn = p53_conf_bool, PC(answer) },
	{ .name = "command", .fn = p53_conf_string, PC(command) },
	DUR("interval", PC(interval_ms), 100, 3600000),
	DUR("timeout", PC(timeout_ms), 10, 60000),
	{ .name = "rise", .fn = p53_conf_uint, PC(rise), .min = 1, .max = 100 },
	{ .name = "fall", .fn = p53_conf_uint, PC(fall), .min = 1, .max = 100 },
};

/* Which types each key belongs to (bit per enum p53_probe_type); the rest are for all. */
#define NET (1u << P53_PROBE_TCP | 1u << P53_PROBE_HTTP | 1u << P53_PROBE_DNS | 1u << P53_PROBE_HTTPS)
#define WEB (1u << P53_PROBE_HTTP | 1u << P53_PROBE_HTTPS)
static const struct { const char *key; unsigned int types; } only_for[] = {
	{ "address", NET }, { "port", NET },
	{ "path", WEB }, { "host", WEB }, { "status", WEB }, { "body", WEB },
	{ "tls_verify", 1u << P53_PROBE_HTTPS }, { "ca_file", 1u << P53_PROBE_HTTPS },
	{ "qname", 1u << P53_PROBE_DNS }, { "qtype", 1u << P53_PROBE_DNS },
	{ "rcode", 1u << P53_PROBE_DNS }, { "answer", 1u << P53_PROBE_DNS },
	{ "transport", 1u << P53_PROBE_DNS },
	{ "command", 1u << P53_PROBE_COMMAND },
};

int p53_probe_conf_map(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		       struct p53_probe_conf *pc)
{
	const char *type;

	pc->set = true;
	pc->line = (int)v->start_mark.line + 1;
	pc->qtype = LDNS_RR_TYPE_SOA;
	pc->tls_verify = true;
	if (v->type != YAML_MAPPING_NODE)
		return p53_conf_expected(c, v, where, "a command or a mapping with a type (tcp, http, "
					 "https, dns, command)");
	if (p53_conf_map(c, v, probe_keys, P53_CONF_NKEYS(probe_keys), where, v, pc) != 0)
		return -1;
	type = p53_probe_type_names[pc->type];
	/* A key of another type is a mistake (a `path` on a dns check does nothing). */
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(c->doc, p->key);
		for (size_t i = 0; i < sizeof(only_for) / sizeof(only_for[0]); i++)
			if (strcmp((const char *)kn->data.scalar.value, only_for[i].key) == 0 &&
			    (only_for[i].types & 1u << pc->type) == 0)
				return p53_conf_fail(c, kn, "%s: '%s' is not a key of a %s check", where,
						     only_for[i].key, type);
	}
	switch (pc->type) {
	case P53_PROBE_COMMAND:
		if (pc->command == NULL)
			return p53_conf_fail(c, v, "%s: a command check needs a command", where);
		break;
	case P53_PROBE_TCP:
		if (pc->port == 0)
			return p53_conf_fail(c, v, "%s: a tcp check needs a port", where);
		break;
	case P53_PROBE_HTTP:
	case P53_PROBE_HTTPS:
		if (pc->port == 0)
			pc->port = pc->type == P53_PROBE_HTTPS ? 443 : 80;
		if (pc->status == 0)
			pc->status = 200;
		if (pc->path == NULL && p53_conf_set_string(c, v, &pc->path, "/") != 0)
			return -1;
		break;
	case P53_PROBE_DNS:
		if (pc->qname == NULL)
			return p53_conf_fail(c, v, "%s: a dns check needs a qname", where);
		if (pc->port == 0)
			pc->port = 53;
		break;
	}
	if (pc->interval_ms != 0 && pc->timeout_ms > pc->interval_ms)
		return p53_conf_fail(c, v, "%s: timeout %llu ms is above interval %llu ms (a probe must "
				     "end before the next is due)", where,
				     (unsigned long long)pc->timeout_ms, (unsigned long long)pc->interval_ms);
	return 0;
}

static bool str_same(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

bool p53_probe_conf_same(const struct p53_probe_conf *a, const struct p53_probe_conf *b)
{
	return a->set == b->set && a->type == b->type && a->family == b->family &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0 && a->port == b->port &&
	       str_same(a->path, b->path) && str_same(a->host, b->host) && a->status == b->status &&
	       str_same(a->body, b->body) && a->tls_verify == b->tls_verify &&
	       str_same(a->ca_file, b->ca_file) && a->tcp == b->tcp && a->qwire_len == b->qwire_len &&
	       (a->qwire_len == 0 || memcmp(a->qwire, b->qwire, a->qwire_len) == 0) && a->qtype == b->qtype &&
	       a->rcode == b->rcode && a->answer == b->answer && str_same(a->command, b->command);
}

void p53_probe_conf_free(struct p53_probe_conf *pc)
{
	free(pc->address);
	free(pc->path);
	free(pc->host);
	free(pc->body);
	free(pc->ca_file);
	free(pc->qname);
	free(pc->qwire);
	free(pc->command);
	memset(pc, 0, sizeof(*pc));
}
