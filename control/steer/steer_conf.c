/* The `steering:` config section; see steer_conf.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "control/steer/steer_conf.h"

#define REC(f) P53_CONF_FIELD(struct p53_steer_record, f)
#define TGT(f) P53_CONF_FIELD(struct p53_steer_target, f)
#define SC(f) P53_CONF_FIELD(struct p53_steer_conf, f)

static const char *const type_names[] = { "A", "AAAA", "CNAME", NULL };
static const char *const policy_names[] = { "map", "geo", "nearest", "priority", "weighted",
					     "sticky", "asn", NULL };
static const char *const all_down_names[] = { "all", "fallback", "pool", NULL };

/* A domain name as written, "x.y.z." (the final dot optional), to canonical wire form
 * (letters lowered) in *out, malloc'd to its length; no escapes. */
static int name_of(struct p53_conf_ctx *c, yaml_node_t *v, const char *where, const char *s,
		   uint8_t **out, uint8_t *out_len)
{
	uint8_t w[255];
	size_t pos = 0;

	for (const char *p = s; *p != '\0';) {
		const char *dot = strchr(p, '.');
		size_t l = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (l == 0 || l > 63)
			return p53_conf_fail(c, v, "%s: '%s' is not a domain name (empty or long label)",
					     where, s);
		if (pos + 1 + l + 1 > 255)
			return p53_conf_fail(c, v, "%s: '%s' is longer than 255 bytes", where, s);
		w[pos++] = (uint8_t)l;
		for (size_t i = 0; i < l; i++)
			w[pos++] = (uint8_t)tolower((unsigned char)p[i]);
		p += l;
		if (*p == '.')
			p++;
	}
	w[pos++] = 0;
	free(*out);
	if ((*out = malloc(pos)) == NULL)
		return p53_conf_fail(c, v, "out of memory");
	memcpy(*out, w, pos);
	*out_len = (uint8_t)pos;
	return 0;
}

static int owner_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		    const char *where, void *base)
{
	struct p53_steer_record *r = base;
	const char *s;

	(void)k;
	if (p53_conf_string_of(c, v, where, &s) != 0 || p53_conf_set_string(c, v, &r->owner, s) != 0 ||
	    name_of(c, v, where, s, &r->lname, &r->lname_len) != 0)
		return -1;
	if (r->lname_len == 1)
		return p53_conf_fail(c, v, "%s: the root cannot be steered", where);
	return 0;
}

/* pool[].target: the name a CNAME record's target answers. */
static int target_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		     const char *where, void *base)
{
	struct p53_steer_target *t = base;
	const char *s;

	(void)k;
	if (p53_conf_string_of(c, v, where, &s) != 0 || p53_conf_set_string(c, v, &t->target, s) != 0)
		return -1;
	return name_of(c, v, where, s, &t->tname, &t->tname_len);
}

static int policy_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		     const char *where, void *base)
{
	struct p53_steer_record *r = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where,
				 "a list of policies (map, geo, nearest, priority, weighted, sticky)");

	(void)k;
	if (n < 0)
		return -1;
	if (n == 0 || n > 4)
		return p53_conf_fail(c, v, "%s: 1 to 4 policies, got %d", where, n);
	for (int i = 0; i < n; i++) {
		yaml_node_t *it = p53_conf_seq_item(c, v, i);
		const char *s;
		int found = -1;
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_conf_string_of(c, it, iw, &s) != 0)
			return -1;
		for (int j = 0; policy_names[j] != NULL; j++)
			if (strcmp(s, policy_names[j]) == 0)
				found = j;
		if (found < 0)
			return p53_conf_fail(c, it, "%s: unknown policy '%s' (map, geo, asn, nearest, "
					     "priority, weighted, sticky)", iw, s);
		for (int j = 0; j < r->n_policy; j++)
			if (r->policy[j] == found)
				return p53_conf_fail(c, it, "%s: policy '%s' twice", iw, s);
		r->policy[r->n_policy++] = found;
	}
	return 0;
}

static int address_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	struct p53_steer_target *t = base;
	const char *s;

	(void)k;
	if (p53_conf_string_of(c, v, where, &s) != 0 || p53_conf_set_string(c, v, &t->address, s) != 0)
		return -1;
	if (inet_pton(AF_INET, s, t->addr) == 1)
		t->family = 4;
	else if (inet_pton(AF_INET6, s, t->addr) == 1)
		t->family = 6;
	else
		return p53_conf_expected(c, v, where, "an IPv4 or IPv6 address");
	return 0;
}

static int coord_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		    const char *where, void *base)
{
	struct p53_steer_target *t = base;
	const char *s;
	char *end;

	if (p53_conf_string_of(c, v, where, &s) != 0)
		return -1;
	double x = strtod(s, &end);
	double lim = k->max;
	if (end == s || *end != '\0' || x < -lim || x > lim)
		return p53_conf_fail(c, v, "%s: expected degrees in [-%.0f, %.0f], got '%s'", where, lim,
				     lim, s);
	if (k->max == 90)
		t->latitude = x;
	else
		t->longitude = x;
	return p53_conf_set_string(c, v, k->max == 90 ? &t->lat : &t->lon, s);
}

/* pool[].check: a command (the short form) or a probe mapping (probe.h). */
static int check_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		    const char *where, void *base)
{
	struct p53_steer_target *t = base;

	if (v->type == YAML_SCALAR_NODE)
		return p53_conf_string(c, k, v, where, base);
	if (p53_probe_conf_map(c, v, where, &t->probe) != 0)
		return -1;
	if (t->probe.type == P53_PROBE_COMMAND)
		return p53_conf_set_string(c, v, &t->check, t->probe.command);
	return 0;
}

static const struct p53_conf_key target_keys[] = {
	{ .name = "name", .fn = p53_conf_string, TGT(name), .required = true },
	{ .name = "address", .fn = address_of },
	{ .name = "target", .fn = target_of },
	{ .name = "lat", .fn = coord_of, .max = 90 },
	{ .name = "lon", .fn = coord_of, .max = 180 },
	{ .name = "pop", .fn = p53_conf_string, TGT(pop) },
	{ .name = "weight", .fn = p53_conf_uint, TGT(weight), .max = 65535 },
	{ .name = "priority", .fn = p53_conf_uint, TGT(priority), .max = 65535 },
	{ .name = "check", .fn = check_of, TGT(check) },
	{ .name = "check_interval_ms", .fn = p53_conf_uint, TGT(check_interval_ms), .min = 100,
	  .max = 3600000 },
	{ .name = "check_timeout_ms", .fn = p53_conf_uint, TGT(check_timeout_ms), .min = 10,
	  .max = 60000 },
	{ .name = "rise", .fn = p53_conf_uint, TGT(rise), .min = 1, .max = 100 },
	{ .name = "fall", .fn = p53_conf_uint, TGT(fall), .min = 1, .max = 100 },
};

/* The check's timing: check.interval/timeout/rise/fall or the target's older keys, not both;
 * the probe's address defaults to the target's. */
static int timing_of(struct p53_conf_ctx *c, yaml_node_t *it, const char *iw,
		     struct p53_steer_target *t)
{
	struct p53_probe_conf *pc = &t->probe;
	static const char *const both = "%s: check.%s and %s both given (one place, please)";

	if (pc->interval_ms != 0 && t->check_interval_ms != 0)
		return p53_conf_fail(c, it, both, iw, "interval", "check_interval_ms");
	if (pc->timeout_ms != 0 && t->check_timeout_ms != 0)
		return p53_conf_fail(c, it, both, iw, "timeout", "check_timeout_ms");
	if (pc->rise != 0 && t->rise != 0)
		return p53_conf_fail(c, it, both, iw, "rise", "rise");
	if (pc->fall != 0 && t->fall != 0)
		return p53_conf_fail(c, it, both, iw, "fall", "fall");
	if (pc->interval_ms != 0)
		t->check_interval_ms = (unsigned int)pc->interval_ms;
	if (pc->timeout_ms != 0)
		t->check_timeout_ms = (unsigned int)pc->timeout_ms;
	if (pc->rise != 0)
		t->rise = pc->rise;
	if (pc->fall != 0)
		t->fall = pc->fall;
	if (t->check_interval_ms == 0)
		t->check_interval_ms = 1000;
	if (t->check_timeout_ms == 0) /* 1 s, or the interval when that is shorter */
		t->check_timeout_ms = t->check_interval_ms < 1000 ? t->check_interval_ms : 1000;
	if (t->rise == 0)
		t->rise = 2;
	if (t->fall == 0)
		t->fall = 2;
	if (pc->set && t->check_timeout_ms > t->check_interval_ms)
		return p53_conf_fail(c, it, "%s: check timeout %u ms is above its interval %u ms (a "
				     "probe must end before the next is due)", iw, t->check_timeout_ms,
				     t->check_interval_ms);
	if (pc->set && pc->address == NULL) {
		pc->family = t->family;
		memcpy(pc->addr, t->addr, sizeof(pc->addr));
	}
	return 0;
}

/* records[].pool and records[].fallback_pool: both into r->pool, names unique across them. */
static int targets_of(struct p53_conf_ctx *c, yaml_node_t *v, const char *where,
		      struct p53_steer_record *r, bool backup)
{
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of targets");

	if (n < 0)
		return -1;
	if (n == 0 || r->n_pool + n > P53_STEER_MAX_POOL)
		return p53_conf_fail(c, v, "%s: 1 to %d targets (pool and fallback_pool together), got %d",
				     where, P53_STEER_MAX_POOL, r->n_pool + n);
	/* Grown by this list (the other may be read already); zeroed, so the free of a record
	 * that fails half-way sees NULL strings in the targets not reached. */
	struct p53_steer_target *pool = realloc(r->pool, (size_t)(r->n_pool + n) * sizeof(*pool));
	if (pool == NULL)
		return p53_conf_fail(c, v, "out of memory");
	memset(pool + r->n_pool, 0, (size_t)n * sizeof(*pool));
	r->pool = pool;
	for (int i = 0; i < n; i++) {
		yaml_node_t *it = p53_conf_seq_item(c, v, i);
		struct p53_steer_target *t = &r->pool[r->n_pool++];
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		t->weight = 1;
		t->priority = (unsigned int)i + 1;
		t->backup = backup;
		r->n_backup += backup;
		t->line = (int)it->start_mark.line + 1;
		if (p53_conf_map(c, it, target_keys, P53_CONF_NKEYS(target_keys), iw, it, t) != 0 ||
		    timing_of(c, it, iw, t) != 0)
			return -1;
		if ((t->lat == NULL) != (t->lon == NULL))
			return p53_conf_fail(c, it, "%s: lat and lon go together", iw);
		t->has_pos = t->lat != NULL;
		for (int j = 0; j < r->n_pool - 1; j++)
			if (strcmp(r->pool[j].name, t->name) == 0)
				return p53_conf_fail(c, it, "%s: duplicate target name '%s' (first at line %d)",
						     iw, t->name, r->pool[j].line);
	}
	return 0;
}

static int pool_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		   const char *where, void *base)
{
	(void)k;
	return targets_of(c, v, where, base, false);
}

static int fallback_pool_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			    const char *where, void *base)
{
	(void)k;
	return targets_of(c, v, where, base, true);
}

static int labels_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		     const char *where, void *base)
{
	struct p53_steer_geo_rule *g = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of PoP labels");

	(void)k;
	if (n < 0)
		return -1;
	if (n == 0 || n > P53_STEER_MAX_LABELS)
		return p53_conf_fail(c, v, "%s: 1 to %d labels, got %d", where, P53_STEER_MAX_LABELS, n);
	for (int i = 0; i < n; i++) {
		yaml_node_t *it = p53_conf_seq_item(c, v, i);
		const char *s;
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_conf_string_of(c, it, iw, &s) != 0 ||
		    p53_conf_set_string(c, it, &g->labels[g->n_labels++], s) != 0)
			return -1;
	}
	return 0;
}

#define GEO(f) P53_CONF_FIELD(struct p53_steer_geo_rule, f)
static const struct p53_conf_key geo_keys[] = {
	{ .name = "country", .fn = p53_conf_string, GEO(country) },
	{ .name = "continent", .fn = p53_conf_string, GEO(continent) },
	{ .name = "subdivision", .fn = p53_conf_string, GEO(subdivision) },
	{ .name = "city", .fn = p53_conf_uint, GEO(city), .min = 1, .max = 4294967295u },
	{ .name = "asn", .fn = p53_conf_uint, GEO(asn), .min = 1, .max = 4294967295u },
	{ .name = "labels", .fn = labels_of, .required = true },
};

/* ISO 3166-2: the country's alpha-2 code, '-', then one to three letters or digits. */
static bool iso_3166_2(const char *s)
{
	size_t n = strlen(s);

	if (n < 4 || n > 6 || !isalpha((unsigned char)s[0]) || !isalpha((unsigned char)s[1]) || s[2] != '-')
		return false;
	for (size_t i = 3; i < n; i++)
		if (!isalnum((unsigned char)s[i]))
			return false;
	return true;
}

static int geo_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		  const char *where, void *base)
{
	struct p53_steer_record *r = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where,
				 "a list of {country|continent|subdivision|city|asn, labels}");

	(void)k;
	if (n < 0)
		return -1;
	if (n > P53_STEER_MAX_GEO)
		return p53_conf_fail(c, v, "%s: at most %d rules, got %d", where, P53_STEER_MAX_GEO, n);
	if (n > 0 && (r->geo = calloc((size_t)n, sizeof(*r->geo))) == NULL)
		return p53_conf_fail(c, v, "out of memory");
	for (int i = 0; i < n; i++) {
		yaml_node_t *it = p53_conf_seq_item(c, v, i);
		struct p53_steer_geo_rule *g = &r->geo[r->n_geo++];
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		g->line = (int)it->start_mark.line + 1;
		if (p53_conf_map(c, it, geo_keys, P53_CONF_NKEYS(geo_keys), iw, it, g) != 0)
			return -1;
		if ((g->country != NULL) + (g->continent != NULL) + (g->subdivision != NULL) +
		    (g->city != 0) + (g->asn != 0) != 1)
			return p53_conf_fail(c, it, "%s: exactly one of country, continent, subdivision, "
					     "city and asn", iw);
		if (g->subdivision != NULL && !iso_3166_2(g->subdivision))
			return p53_conf_fail(c, it, "%s.subdivision: expected an ISO 3166-2 code such as "
					     "US-CA, got '%s'", iw, g->subdivision);
	}
	return 0;
}

static const struct p53_conf_key nearest_keys[] = {
	{ .name = "count", .fn = p53_conf_uint, REC(nearest), .min = 1, .max = 8 },
	{ .name = "hybrid", .fn = p53_conf_bool, REC(hybrid) },
	{ .name = "ratio_pct", .fn = p53_conf_uint, REC(ratio_pct), .min = 100, .max = 100000 },
	{ .name = "miles", .fn = p53_conf_uint, REC(miles), .max = 30000 },
	{ .name = "ttl_single", .fn = p53_conf_uint, REC(ttl_single), .max = 2147483647 },
	{ .name = "ttl_multi", .fn = p53_conf_uint, REC(ttl_multi), .max = 2147483647 },
};

/* records[].fallback: the addresses answered when every target is down (all_down: fallback). */
static int fallback_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		       const char *where, void *base)
{
	struct p53_steer_record *r = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of addresses");

	(void)k;
	if (n < 0)
		return -1;
	if (n == 0 || n > P53_STEER_MAX_FALLBACK)
		return p53_conf_fail(c, v, "%s: 1 to %d addresses, got %d", where, P53_STEER_MAX_FALLBACK, n);
	r->fallback_line = (int)v->start_mark.line + 1;
	if ((r->fallback = calloc((size_t)n, sizeof(*r->fallback))) == NULL)
		return p53_conf_fail(c, v, "out of memory");
	for (int i = 0; i < n; i++) {
		yaml_node_t *it = p53_conf_seq_item(c, v, i);
		const char *s;
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_conf_string_of(c, it, iw, &s) != 0)
			return -1;
		/* The family is checked against the type once the record is read. */
		if (inet_pton(AF_INET, s, r->fallback[i].addr) == 1)
			r->fallback[i].family = 4;
		else if (inet_pton(AF_INET6, s, r->fallback[i].addr) == 1)
			r->fallback[i].family = 6;
		else
			return p53_conf_expected(c, it, iw, "an IPv4 or IPv6 address");
		r->n_fallback++;
	}
	return 0;
}

static const struct p53_conf_key record_keys[] = {
	{ .name = "owner", .fn = owner_of, .required = true },
	{ .name = "type", .fn = p53_conf_enum, REC(type_idx), .names = type_names, .required = true },
	{ .name = "policy", .fn = policy_of, .required = true },
	{ .name = "ttl", .fn = p53_conf_uint, REC(ttl), .max = 2147483647 },
	{ .name = "pool", .fn = pool_of, .required = true },
	{ .name = "geo", .fn = geo_of },
	{ .name = "nearest", P53_CONF_SECTION(nearest_keys) },
	{ .name = "all_down", .fn = p53_conf_enum, REC(all_down), .names = all_down_names },
	{ .name = "fallback", .fn = fallback_of },
	{ .name = "fallback_pool", .fn = fallback_pool_of },
};

/* How many of a record's geo rules are asn rules (asn) or the others. */
static int geo_rules(const struct p53_steer_record *r, bool asn)
{
	int n = 0;

	for (int i = 0; i < r->n_geo; i++)
		n += (r->geo[i].asn != 0) == asn;
	return n;
}

/* What a record needs that its keys alone do not say. */
static int record_check(struct p53_conf_ctx *c, const struct p53_steer_conf *s, const int *prev,
			int idx, yaml_node_t *item, const char *iw)
{
	const struct p53_steer_record *r = &s->records[idx];

	for (int i = 0, k[2] = { 0, 0 }; i < r->n_pool; k[r->pool[i].backup]++, i++) {
		const struct p53_steer_target *t = &r->pool[i];
		const char *list = t->backup ? "fallback_pool" : "pool";
		if (r->type == 5 && (t->target == NULL || t->address != NULL))
			return p53_conf_fail(c, item, "%s.%s[%d]: a CNAME record's target has a target: "
					     "(a name) and no address:", iw, list, k[t->backup]);
		if (r->type == 5 && t->probe.set && t->probe.type != P53_PROBE_COMMAND &&
		    t->probe.address == NULL)
			return p53_conf_fail(c, item, "%s.%s[%d]: check: a CNAME target has no address to "
					     "probe: give check.address", iw, list, k[t->backup]);
		if (r->type == 5)
			continue;
		if (t->address == NULL || t->target != NULL)
			return p53_conf_fail(c, item, "%s.%s[%d]: an %s record's target has an address: "
					     "and no target:", iw, list, k[t->backup], type_names[r->type_idx]);
		if (t->family != (r->type == 1 ? 4 : 6))
			return p53_conf_fail(c, item, "%s.%s[%d]: address %s is not an %s address", iw,
					     list, k[t->backup], t->address, r->type == 1 ? "IPv4" : "IPv6");
	}
	if (r->type == 5 && r->n_fallback > 0)
		return p53_conf_fail(c, item, "%s: fallback: holds addresses, not for a CNAME record "
				     "(all_down: pool with a fallback_pool of names)", iw);
	for (int i = 0; i < r->n_fallback; i++)
		if (r->fallback[i].family != (r->type == 1 ? 4 : 6))
			return p53_conf_fail(c, item, "%s.fallback[%d]: not an %s address", iw, i,
					     r->type == 1 ? "IPv4" : "IPv6");
	if (r->all_down == P53_ALL_DOWN_FALLBACK && r->n_fallback == 0)
		return p53_conf_fail(c, item, "%s: all_down: fallback needs a fallback: list of addresses", iw);
	if (r->all_down != P53_ALL_DOWN_FALLBACK && r->n_fallback > 0)
		return p53_conf_fail(c, item, "%s: fallback: is only answered with all_down: fallback", iw);
	if (r->all_down == P53_ALL_DOWN_POOL && r->n_backup == 0)
		return p53_conf_fail(c, item, "%s: all_down: pool needs a fallback_pool: list of targets", iw);
	if (r->all_down != P53_ALL_DOWN_POOL && r->n_backup > 0)
		return p53_conf_fail(c, item, "%s: fallback_pool: is only answered with all_down: pool", iw);
	for (int i = 0; i < r->n_policy; i++) {
		if (r->policy[i] == P53_POLICY_MAP && s->map == NULL)
			return p53_conf_fail(c, item, "%s: policy map needs steering.map", iw);
		if ((r->policy[i] == P53_POLICY_GEO || r->policy[i] == P53_POLICY_NEAREST) && s->geoip == NULL)
			return p53_conf_fail(c, item, "%s: policy %s needs steering.geoip", iw,
					     policy_names[r->policy[i]]);
		if (r->policy[i] == P53_POLICY_ASN && s->asn_db == NULL)
			return p53_conf_fail(c, item, "%s: policy asn needs steering.asn_db", iw);
		if (r->policy[i] == P53_POLICY_GEO && geo_rules(r, false) == 0)
			return p53_conf_fail(c, item, "%s: policy geo needs a geo: list with country, "
					     "continent, subdivision or city rules", iw);
		if (r->policy[i] == P53_POLICY_ASN && geo_rules(r, true) == 0)
			return p53_conf_fail(c, item, "%s: policy asn needs geo: rules with asn", iw);
		if (r->policy[i] == P53_POLICY_NEAREST) {
			int pos = 0;
			for (int j = 0; j < r->n_pool; j++)
				pos += r->pool[j].has_pos;
			if (pos == 0)
				return p53_conf_fail(c, item, "%s: policy nearest needs targets with lat/lon", iw);
		}
	}
	for (int i = 0; i < r->n_geo; i++) {
		bool asn = r->geo[i].asn != 0;
		bool used = false;
		for (int j = 0; j < r->n_policy; j++)
			used |= r->policy[j] == (asn ? P53_POLICY_ASN : P53_POLICY_GEO);
		if (!used)
			return p53_conf_fail(c, item, "%s.geo[%d]: never used: the policy has no %s step", iw, i,
					     asn ? "asn" : "geo");
	}
	/* The first earlier record of the owner that r may not stand beside, as a scan of the
	 * list in order would find it. */
	const struct p53_steer_record *o = NULL;
	for (int i = prev[idx]; i >= 0; i = prev[i])
		if (s->records[i].type == r->type || s->records[i].type == 5 || r->type == 5)
			o = &s->records[i];
	if (o != NULL) {
		if (o->type == r->type)
			return p53_conf_fail(c, item, "%s: %s %s is already steered at line %d", iw, r->owner,
					     type_names[r->type_idx], o->line);
		/* RFC 1034 §3.6.2: a CNAME owner has no other data. */
		if (o->type == 5 || r->type == 5)
			return p53_conf_fail(c, item, "%s: %s %s beside the steered %s at line %d (a CNAME "
					     "owner has no other data)", iw, r->owner, type_names[r->type_idx],
					     type_names[o->type_idx], o->line);
	}
	return 0;
}

/* The items are kept until the section is read: the sources' keys may come after them. */
static int records_of(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
		      const char *where, void *base)
{
	struct p53_steer_conf *s = base;
	char iw[P53_CONF_WHERE_MAX];
	int n = p53_conf_seq_len(c, v, where, "a list of steered records");

	(void)k;
	if (n < 0)
		return -1;
	s->records = calloc(n > 0 ? (size_t)n : 1, sizeof(*s->records));
	if (s->records == NULL)
		return p53_conf_fail(c, v, "out of memory");
	for (int i = 0; i < n; i++) {
		yaml_node_t *it = p53_conf_seq_item(c, v, i);
		struct p53_steer_record *r = &s->records[s->n_records++];
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		r->line = (int)it->start_mark.line + 1;
		r->ttl = 300;
		r->nearest = 2;
		r->hybrid = true;
		r->ratio_pct = 200;
		r->miles = 1000;
		r->ttl_single = 120;
		r->ttl_multi = 3600;
		if (p53_conf_map(c, it, record_keys, P53_CONF_NKEYS(record_keys), iw, it, r) != 0)
			return -1;
		r->type = r->type_idx == 0 ? 1 : r->type_idx == 1 ? 28 : 5;
	}
	return 0;
}

static const struct p53_conf_key steer_keys[] = {
	{ .name = "map", .fn = p53_conf_path, SC(map) },
	{ .name = "geoip", .fn = p53_conf_path, SC(geoip) },
	{ .name = "asn_db", .fn = p53_conf_path, SC(asn_db) },
	{ .name = "records", .fn = records_of },
};

struct owner_ref {
	const struct p53_steer_record *r;
	int i;
};

static int owner_ref_cmp(const void *x, const void *y)
{
	const struct owner_ref *p = x, *q = y;

	if (p->r->lname_len != q->r->lname_len)
		return p->r->lname_len < q->r->lname_len ? -1 : 1;
	int c = memcmp(p->r->lname, q->r->lname, p->r->lname_len);
	if (c != 0)
		return c;
	return p->i < q->i ? -1 : p->i > q->i;
}

int p53_steer_conf_owner_links(const struct p53_steer_conf *s, int *prev)
{
	struct owner_ref *ref = malloc((s->n_records > 0 ? (size_t)s->n_records : 1) * sizeof(*ref));

	if (ref == NULL)
		return -1;
	for (int i = 0; i < s->n_records; i++) {
		ref[i] = (struct owner_ref){ .r = &s->records[i], .i = i };
		prev[i] = -1;
	}
	qsort(ref, (size_t)s->n_records, sizeof(*ref), owner_ref_cmp);
	for (int k = 1; k < s->n_records; k++)
		if (ref[k].r->lname_len == ref[k - 1].r->lname_len &&
		    memcmp(ref[k].r->lname, ref[k - 1].r->lname, ref[k].r->lname_len) == 0)
			prev[ref[k].i] = ref[k - 1].i;
	free(ref);
	return 0;
}

int p53_steer_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			   const char *where, void *base)
{
	struct p53_steer_conf *s = (struct p53_steer_conf *)((char *)base + k->off);
	char iw[P53_CONF_WHERE_MAX];

	s->line = (int)v->start_mark.line + 1;
	if (p53_conf_map(c, v, steer_keys, P53_CONF_NKEYS(steer_keys), where, c->key, s) != 0)
		return -1;
	int *prev = malloc((s->n_records > 0 ? (size_t)s->n_records : 1) * sizeof(*prev));
	if (prev == NULL || p53_steer_conf_owner_links(s, prev) != 0) {
		free(prev);
		return p53_conf_fail(c, v, "out of memory");
	}
	for (int i = 0; i < s->n_records; i++) {
		yaml_node_t *it = NULL;
		yaml_node_pair_t *p;
		/* The records item for its line. */
		for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
			yaml_node_t *key = yaml_document_get_node(c->doc, p->key);
			if (key->type == YAML_SCALAR_NODE && strcmp((char *)key->data.scalar.value, "records") == 0)
				it = p53_conf_seq_item(c, yaml_document_get_node(c->doc, p->value), i);
		}
		snprintf(iw, sizeof(iw), "%s.records[%d]", where, i);
		if (record_check(c, s, prev, i, it, iw) != 0) {
			free(prev);
			return -1;
		}
	}
	free(prev);
	return 0;
}

void p53_steer_conf_free(struct p53_steer_conf *s)
{
	for (int i = 0; i < s->n_records; i++) {
		struct p53_steer_record *r = &s->records[i];
		free(r->owner);
		free(r->lname);
		for (int j = 0; j < r->n_pool; j++) {
			struct p53_steer_target *t = &r->pool[j];
			free(t->name);
			free(t->address);
			free(t->target);
			free(t->tname);
			free(t->lat);
			free(t->lon);
			free(t->pop);
			free(t->check);
			p53_probe_conf_free(&t->probe);
		}
		for (int j = 0; j < r->n_geo; j++) {
			free(r->geo[j].country);
			free(r->geo[j].continent);
			free(r->geo[j].subdivision);
			for (int l = 0; l < r->geo[j].n_labels; l++)
				free(r->geo[j].labels[l]);
		}
		free(r->pool);
		free(r->geo);
		free(r->fallback);
	}
	free(s->records);
	free(s->map);
	free(s->geoip);
	free(s->asn_db);
	memset(s, 0, sizeof(*s));
}

void p53_steer_conf_layout(struct p53_steer_conf *s, const struct p53_steer_conf *old)
{
	static uint64_t last; /* 0 is no layout (image.h) */

	if (old != NULL && old->layout != 0 && old->n_records == s->n_records) {
		int i;
		for (i = 0; i < s->n_records; i++) {
			const struct p53_steer_record *a = &s->records[i], *b = &old->records[i];
			if (a->type != b->type || a->lname_len != b->lname_len ||
			    memcmp(a->lname, b->lname, a->lname_len) != 0)
				break;
		}
		if (i == s->n_records) {
			s->layout = old->layout;
			return;
		}
	}
	s->layout = __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}
