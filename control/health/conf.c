/* The `health:` config section; see conf.h. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "control/conf/config.h"
#include "control/health/conf.h"

#define DAY_MS (24ul * 3600 * 1000)

static const struct p53_health_conf defaults = {
	.enabled = true,
	.hold_down_ms = 300000,
	.min_announce_ms = 300000,
	.warmup_ms = 0,
	.drain_ms = 30000,
	.on_stop = 0,
	.stop_drain_ms = 5000,
	.stop_linger_ms = 500,
	.canary = { .check = { 1000, 0, 3, 2 }, .qtype = LDNS_RR_TYPE_SOA, .rcode = 0 },
	.workers = { .check = { 50, 0, 1, 2 }, .heartbeat_ms = 100 },
	.zones = { .check = { 1000, 0, 1, 1 } },
	.external = { .check = { 5000, 0, 3, 2 } },
};

/* Without a health: section: the defaults, with the timeouts the section would compute. */
static const struct p53_health_conf absent = {
	.enabled = true,
	.hold_down_ms = 300000,
	.min_announce_ms = 300000,
	.drain_ms = 30000,
	.stop_drain_ms = 5000,
	.stop_linger_ms = 500,
	.canary = { .check = { 1000, 250, 3, 2 }, .qtype = LDNS_RR_TYPE_SOA, .rcode = 0 },
	.workers = { .check = { 50, 0, 1, 2 }, .heartbeat_ms = 100 },
	.zones = { .check = { 1000, 0, 1, 1 } },
	.external = { .check = { 5000, 2000, 3, 2 } },
};

const struct p53_health_conf *p53_health_conf_of(const struct p53_health_conf *hc)
{
	return hc->present ? hc : &absent;
}

int p53_conf_duration(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	static const struct { const char *unit; uint64_t ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	};
	char what[96];
	const char *s;
	char *end;
	int found = 0;
	uint64_t ms = 0;

	if (k->max >= 1000)
		snprintf(what, sizeof(what), "a duration like 250ms, 2s or 5m (%lums..%lus)", k->min,
			 k->max / 1000);
	else
		snprintf(what, sizeof(what), "a duration like 250ms (%lums..%lums)", k->min, k->max);
	if (v->type != YAML_SCALAR_NODE || p53_conf_is_null(v))
		return p53_conf_expected(c, v, where, what);
	s = (const char *)v->data.scalar.value;
	size_t digits = strspn(s, "0123456789");
	if (digits == 0 || digits > 9)
		return p53_conf_expected(c, v, where, what);
	unsigned long long x = strtoull(s, &end, 10);
	if (*end == '\0' && x == 0)
		found = 1; /* "0" needs no unit */
	for (size_t i = 0; !found && i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			ms = x * units[i].ms;
			found = 1;
		}
	}
	if (!found || ms < k->min || ms > k->max)
		return p53_conf_expected(c, v, where, what);
	*(uint64_t *)((char *)base + k->off) = ms;
	return 0;
}

int p53_conf_qtype(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		   const char *where, void *base)
{
	const char *s;
	ldns_rr_type t;

	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	t = ldns_get_rr_type_by_name(s);
	if (t == 0 || t == LDNS_RR_TYPE_OPT || t == LDNS_RR_TYPE_AXFR || t == LDNS_RR_TYPE_IXFR ||
	    t == LDNS_RR_TYPE_ANY)
		return p53_conf_expected(c, v, where, "a record type (A, AAAA, TXT, SOA...)");
	*(uint16_t *)((char *)base + k->off) = (uint16_t)t;
	return 0;
}

static int key_name(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		    const char *where, void *base)
{
	const char *s;
	ldns_rdf *d = NULL;

	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	if (ldns_str2rdf_dname(&d, s) != LDNS_STATUS_OK)
		return p53_conf_expected(c, v, where, "a domain name");
	ldns_rdf_deep_free(d);
	return p53_conf_string(c, k, v, where, base);
}

static int key_expect(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	struct p53_canary_conf *cc = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of RDATA strings");

	(void)k;
	if (n < 0)
		return -1;
	if (n > P53_CANARY_MAX_EXPECT)
		return p53_conf_fail(c, v, "%s: at most %d records", where, P53_CANARY_MAX_EXPECT);
	for (int i = 0; i < n; i++) {
		yaml_node_t *item = p53_conf_seq_item(c, v, i);
		const char *s;

		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_conf_string_of(c, item, iw, &s) != 0)
			return -1;
		if (p53_conf_set_string(c, item, &cc->expect[cc->n_expect], s) != 0)
			return -1;
		cc->n_expect++;
	}
	return 0;
}

const char *const p53_conf_rcode_names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP", "REFUSED", NULL };
static const char *const family_names[] = { "auto", "ipv4", "ipv6", NULL };
static const char *const on_stop_names[] = { "withdraw", "drain", NULL };

#define DUR(name_, field_, min_, max_) \
	{ .name = name_, .fn = p53_conf_duration, field_, .min = (min_), .max = (max_) }
#define CHECK_KEYS(T) \
	DUR("interval", P53_CONF_FIELD(T, check.interval_ms), 10, DAY_MS), \
	{ .name = "fall", .fn = p53_conf_uint, P53_CONF_FIELD(T, check.fall), .min = 1, .max = 100 }, \
	{ .name = "rise", .fn = p53_conf_uint, P53_CONF_FIELD(T, check.rise), .min = 1, .max = 100 }
#define CA(f) P53_CONF_FIELD(struct p53_canary_conf, f)

static const struct p53_conf_key canary_keys[] = {
	CHECK_KEYS(struct p53_canary_conf),
	DUR("timeout", CA(check.timeout_ms), 1, 60000),
	{ .name = "name", .fn = key_name, CA(name) },
	{ .name = "type", .fn = p53_conf_qtype, CA(qtype) },
	{ .name = "rcode", .fn = p53_conf_enum, CA(rcode), .names = p53_conf_rcode_names },
	{ .name = "expect", .fn = key_expect },
	{ .name = "family", .fn = p53_conf_enum, CA(family), .names = family_names },
	{ .name = "dnssec", .fn = p53_conf_bool, CA(dnssec) },
};

/*
 * The canary's expected records are checked once the whole section is read, against the
 * type it names wherever `type:` stands: each as "NAME 0 IN TYPE RDATA" through ldns, so a
 * typo fails the load with the line of that record.
 */
static int canary_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			  const char *where, void *base)
{
	struct p53_canary_conf *cc = (struct p53_canary_conf *)((char *)base + k->off);
	yaml_node_t *expect = NULL;

	if (p53_conf_map(c, v, k->sub, k->nsub, where, c->key, cc) != 0)
		return -1;
	if (cc->check.timeout_ms == 0) /* not given: 250 ms, or the interval if shorter */
		cc->check.timeout_ms = cc->check.interval_ms < 250 ? cc->check.interval_ms : 250;
	if (cc->check.timeout_ms > cc->check.interval_ms)
		return p53_conf_fail(c, v, "%s: timeout (%lu ms) is longer than interval (%lu ms)", where,
				     (unsigned long)cc->check.timeout_ms, (unsigned long)cc->check.interval_ms);
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(c->doc, p->key);
		if (kn->type == YAML_SCALAR_NODE && strcmp((char *)kn->data.scalar.value, "expect") == 0)
			expect = yaml_document_get_node(c->doc, p->value);
	}
	char *t = ldns_rr_type2str((ldns_rr_type)cc->qtype);
	for (int i = 0; i < cc->n_expect; i++) {
		char line[1200];
		ldns_rr *rr = NULL;
		snprintf(line, sizeof(line), "canary.invalid. 0 IN %s %s", t != NULL ? t : "TYPE0",
			 cc->expect[i]);
		if (ldns_rr_new_frm_str(&rr, line, 0, NULL, NULL) != LDNS_STATUS_OK) {
			char w[P53_CONF_WHERE_MAX + 16], what[64];
			snprintf(w, sizeof(w), "%s.expect[%d]", where, i);
			snprintf(what, sizeof(what), "RDATA of a %s record", t != NULL ? t : "?");
			free(t);
			return p53_conf_expected(c, expect != NULL ? p53_conf_seq_item(c, expect, i) : v, w, what);
		}
		ldns_rr_free(rr);
	}
	free(t);
	return 0;
}

#define WK(f) P53_CONF_FIELD(struct p53_workers_conf, f)
#define EX(f) P53_CONF_FIELD(struct p53_external_conf, f)

static const struct p53_conf_key workers_keys[] = {
	CHECK_KEYS(struct p53_workers_conf),
	DUR("heartbeat", WK(heartbeat_ms), 5, 60000),
};

static const struct p53_conf_key zones_keys[] = {
	CHECK_KEYS(struct p53_zones_conf),
};

static const struct p53_conf_key external_keys[] = {
	CHECK_KEYS(struct p53_external_conf),
	DUR("timeout", EX(check.timeout_ms), 1, 600000),
	{ .name = "command", .fn = p53_conf_string, EX(command) },
};

#define H(f) P53_CONF_FIELD(struct p53_health_conf, f)

static const struct p53_conf_key health_keys[] = {
	{ .name = "enabled", .fn = p53_conf_bool, H(enabled) },
	DUR("hold_down", H(hold_down_ms), 0, DAY_MS),
	DUR("min_announce_interval", H(min_announce_ms), 0, DAY_MS),
	DUR("warmup", H(warmup_ms), 0, DAY_MS),
	DUR("drain_time", H(drain_ms), 0, DAY_MS),
	{ .name = "on_stop", .fn = p53_conf_enum, H(on_stop), .names = on_stop_names },
	DUR("stop_drain_time", H(stop_drain_ms), 0, 600000),
	DUR("stop_linger", H(stop_linger_ms), 0, 60000),
	{ .name = "canary", .fn = canary_section, .off = offsetof(struct p53_health_conf, canary),
	  .sub = canary_keys, .nsub = P53_CONF_NKEYS(canary_keys) },
	{ .name = "workers", .off = offsetof(struct p53_health_conf, workers), P53_CONF_SECTION(workers_keys) },
	{ .name = "zones", .off = offsetof(struct p53_health_conf, zones), P53_CONF_SECTION(zones_keys) },
	{ .name = "external", .off = offsetof(struct p53_health_conf, external), P53_CONF_SECTION(external_keys) },
};

int p53_health_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			    const char *where, void *base)
{
	struct p53_health_conf *hc = (struct p53_health_conf *)((char *)base + k->off);

	*hc = defaults;
	hc->present = true;
	if (p53_conf_map(c, v, health_keys, P53_CONF_NKEYS(health_keys), where, c->key, hc) != 0)
		return -1;
	if (hc->external.check.timeout_ms == 0) /* not given: 2 s, or the interval if shorter */
		hc->external.check.timeout_ms = hc->external.check.interval_ms < 2000 ? hc->external.check.interval_ms : 2000;
	if (hc->external.check.timeout_ms > hc->external.check.interval_ms)
		return p53_conf_fail(c, v, "%s.external: timeout is longer than interval", where);
	return 0;
}

static bool str_same(const char *a, const char *b)
{
	return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

bool p53_health_conf_same(const struct p53_health_conf *a, const struct p53_health_conf *b)
{
	const struct p53_health_conf *x = p53_health_conf_of(a), *y = p53_health_conf_of(b);

	if (x->enabled != y->enabled || x->hold_down_ms != y->hold_down_ms ||
	    x->min_announce_ms != y->min_announce_ms || x->warmup_ms != y->warmup_ms ||
	    x->drain_ms != y->drain_ms || x->on_stop != y->on_stop ||
	    x->stop_drain_ms != y->stop_drain_ms || x->stop_linger_ms != y->stop_linger_ms ||
	    memcmp(&x->canary.check, &y->canary.check, sizeof(x->canary.check)) != 0 ||
	    !str_same(x->canary.name, y->canary.name) || x->canary.qtype != y->canary.qtype ||
	    x->canary.rcode != y->canary.rcode || x->canary.n_expect != y->canary.n_expect ||
	    x->canary.family != y->canary.family || x->canary.dnssec != y->canary.dnssec ||
	    memcmp(&x->workers, &y->workers, sizeof(x->workers)) != 0 ||
	    memcmp(&x->zones, &y->zones, sizeof(x->zones)) != 0 ||
	    memcmp(&x->external.check, &y->external.check, sizeof(x->external.check)) != 0 ||
	    !str_same(x->external.command, y->external.command))
		return false;
	for (int i = 0; i < x->canary.n_expect; i++)
		if (!str_same(x->canary.expect[i], y->canary.expect[i]))
			return false;
	return true;
}

void p53_health_conf_free(struct p53_health_conf *hc)
{
	free(hc->canary.name);
	for (int i = 0; i < hc->canary.n_expect; i++)
		free(hc->canary.expect[i]);
	free(hc->external.command);
	memset(hc, 0, sizeof(*hc));
}
