/*
 * `pop53ctl explain NAME TYPE [--client IP] [--ecs PREFIX]`: the decision a worker makes for a
 * steered record, step by step, read from the published table itself (the same lookups and
 * decision arrays as dataplane/steer.c's p53_steer_pick) with the loaded sources' location
 * data and the targets' health beside it. Control thread only.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "control/steer/steer_explain.h"
#include "control/text.h"
#include "dataplane/name.h"

static const char *const policy_word[] = { "map", "geo", "nearest", "priority", "weighted", "sticky",
					   "asn" };
static const char *const source_word[] = { "map", "geoip", "none", "client block", "asn" };

/* "addr/len" of the block of `len` bits holding the client. */
static void block_of(const struct p53_steer_client *cl, unsigned int len, char *out, size_t cap)
{
	uint8_t a[16] = {0};
	unsigned int bytes = cl->v6 ? 16 : 4;
	char s[INET6_ADDRSTRLEN];

	for (unsigned int i = 0; i < bytes; i++) {
		unsigned int keep = len >= 8 * (i + 1) ? 8 : len > 8 * i ? len - 8 * i : 0;
		a[i] = keep == 0 ? 0 : (uint8_t)(cl->addr[i] & (0xff << (8 - keep)));
	}
	inet_ntop(cl->v6 ? AF_INET6 : AF_INET, a, s, sizeof(s));
	snprintf(out, cap, "%s/%u", s, len);
}

static json_t *addresses_of(const void *t, const struct p53_steer_variant *v)
{
	json_t *a = json_array();
	const uint8_t *p = p53_steer_rdata(t, v);

	for (unsigned int k = 0; k < v->count; k++) {
		unsigned int rdlen = (unsigned int)p[10] << 8 | p[11];
		uint16_t type = (uint16_t)(p[2] << 8 | p[3]);
		char s[1024];
		if (type == 5)
			p53_name_to_str(s, sizeof(s), p + 12); /* a CNAME's target */
		else
			inet_ntop(rdlen == 4 ? AF_INET : AF_INET6, p + 12, s, sizeof(s));
		json_array_append_new(a, json_string(s));
		p += 12 + rdlen;
	}
	return a;
}

static json_t *location_json(const struct p53_steer_pub *p, unsigned int src, uint32_t loc)
{
	if (loc == P53_STEER_NOLOC)
		return json_string("none (no entry holds the client)");
	if (src == P53_STEER_SRC_ANY)
		return json_string("every client");
	if (src == P53_STEER_SRC_CLIENT)
		return json_pack("{s:I}", "bucket", (json_int_t)loc);
	const struct p53_steer_source *s = &p->st.src.src[src];
	if (loc >= s->n_locs)
		return json_string("?");
	const struct p53_steer_loc *l = &s->locs[loc];
	json_t *o = json_object();
	if (l->n_labels > 0) {
		json_t *a = json_array();
		for (int i = 0; i < l->n_labels; i++)
			json_array_append_new(a, json_string(l->labels[i]));
		json_object_set_new(o, "labels", a);
	}
	if (l->country[0] != '\0')
		json_object_set_new(o, "country", json_string(l->country));
	if (l->continent[0] != '\0')
		json_object_set_new(o, "continent", json_string(l->continent));
	if (l->subdivision[0][0] != '\0') {
		json_t *a = json_array();
		for (int i = 0; i < 2 && l->subdivision[i][0] != '\0'; i++) {
			char iso[8];
			snprintf(iso, sizeof(iso), "%s-%s", l->country, l->subdivision[i]);
			json_array_append_new(a, json_string(iso));
		}
		json_object_set_new(o, "subdivisions", a);
	}
	if (l->city_id != 0)
		json_object_set_new(o, "city_geoname_id", json_integer(l->city_id));
	if (l->city != NULL)
		json_object_set_new(o, "city", json_string(l->city));
	if (l->asn != 0)
		json_object_set_new(o, "asn", json_integer(l->asn));
	if (l->org != NULL)
		json_object_set_new(o, "as_organization", json_string(l->org));
	if (l->has_pos) {
		json_object_set_new(o, "latitude", json_real(l->lat));
		json_object_set_new(o, "longitude", json_real(l->lon));
	}
	return o;
}

json_t *p53_steer_explain(const struct p53_steer_pub *p, const char *name, const char *type,
			  const char *client, const char *ecs, char *err, size_t errlen)
{
	const void *t = p->cur;
	uint8_t lname[255];
	size_t len = 0;
	uint16_t qtype;

	if (t == NULL || p->conf == NULL) {
		snprintf(err, errlen, "explain: no steering table is published");
		return NULL;
	}
	if (strcasecmp(type, "A") == 0)
		qtype = 1;
	else if (strcasecmp(type, "AAAA") == 0)
		qtype = 28;
	else if (strcasecmp(type, "CNAME") == 0)
		qtype = 5;
	else {
		snprintf(err, errlen, "explain: type A, AAAA or CNAME, not '%s'", type);
		return NULL;
	}
	/* The name to canonical wire form (the trailing dot optional). */
	for (const char *s = name; *s != '\0';) {
		const char *dot = strchr(s, '.');
		size_t l = dot != NULL ? (size_t)(dot - s) : strlen(s);
		if (l == 0 || l > 63 || len + l + 2 > sizeof(lname)) {
			snprintf(err, errlen, "explain: '%s' is not a domain name", name);
			return NULL;
		}
		lname[len++] = (uint8_t)l;
		for (size_t i = 0; i < l; i++)
			lname[len++] = (uint8_t)tolower((unsigned char)s[i]);
		s += l + (dot != NULL);
	}
	lname[len++] = 0;
	const struct p53_steer_rec *r = p53_steer_find(t, lname, (uint8_t)len,
						       p53_name_hash(lname, len), qtype);
	if (r == NULL) {
		snprintf(err, errlen, "explain: %s %s is not steered", name, type);
		return NULL;
	}
	const struct p53_steer_hdr *h = p53_steer_hdr(t);
	uint32_t ri = (uint32_t)(r - (const struct p53_steer_rec *)((const uint8_t *)t + h->records_off));
	const struct p53_steer_record *cr = &p->conf->records[ri];

	/* Where the client is: as answer.c decides it. */
	struct p53_steer_client cl = {0};
	const char *from;
	int src0 = 0;
	if (ecs != NULL) {
		char a[64];
		const char *slash = strchr(ecs, '/');
		char *end;
		if (slash == NULL || (size_t)(slash - ecs) >= sizeof(a)) {
			snprintf(err, errlen, "explain: --ecs ADDRESS/LENGTH, not '%s'", ecs);
			return NULL;
		}
		memcpy(a, ecs, (size_t)(slash - ecs));
		a[slash - ecs] = '\0';
		cl.v6 = strchr(a, ':') != NULL;
		unsigned long plen = strtoul(slash + 1, &end, 10);
		if (inet_pton(cl.v6 ? AF_INET6 : AF_INET, a, cl.addr) != 1 || *end != '\0' ||
		    end == slash + 1 || plen > (cl.v6 ? 128u : 32u)) {
			snprintf(err, errlen, "explain: --ecs ADDRESS/LENGTH, not '%s'", ecs);
			return NULL;
		}
		if (plen > 0) {
			char b[80];
			block_of(&cl, (unsigned int)plen, b, sizeof(b));
			*strchr(b, '/') = '\0';
			inet_pton(cl.v6 ? AF_INET6 : AF_INET, b, cl.addr);
			from = "ECS";
		} else {
			src0 = 1;
			memset(&cl, 0, sizeof(cl));
		}
	}
	if (ecs == NULL || src0) {
		if (client == NULL) {
			snprintf(err, errlen, "explain: %s", src0 ? "ECS source prefix 0 means the resolver's "
				 "address: give it with --client" : "give --client IP or --ecs PREFIX");
			return NULL;
		}
		cl.v6 = strchr(client, ':') != NULL;
		if (inet_pton(cl.v6 ? AF_INET6 : AF_INET, client, cl.addr) != 1) {
			snprintf(err, errlen, "explain: --client IP, not '%s'", client);
			return NULL;
		}
		from = src0 ? "packet source (ECS source prefix 0)" : "packet source (no ECS)";
	}
	char caddr[INET6_ADDRSTRLEN];
	inet_ntop(cl.v6 ? AF_INET6 : AF_INET, cl.addr, caddr, sizeof(caddr));

	json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "record", cr->owner, "type", type, "client", caddr,
			      "from", from);
	const uint32_t *dec = (const uint32_t *)((const uint8_t *)t + h->dec_off);
	json_t *steps = json_array();
	const struct p53_steer_variant *v = NULL;
	uint8_t sc = 0;
	const char *by = "fallback";
	for (unsigned int i = 0; i < r->n_steps && v == NULL; i++) {
		const struct p53_steer_step *st = &r->steps[i];
		uint32_t ll = st->src == P53_STEER_SRC_CLIENT ? p53_steer_bucket(cl.v6, cl.addr)
			    : st->src == P53_STEER_SRC_ANY ? 0 : p53_steer_lookup(t, st->src, &cl);
		uint32_t loc = ll >> 8;
		char blk[80];
		if ((uint8_t)ll > sc)
			sc = (uint8_t)ll;
		block_of(&cl, (uint8_t)ll, blk, sizeof(blk));
		json_t *s = json_pack("{s:s, s:s, s:s, s:o}", "policy", policy_word[cr->policy[i]],
				      "source", source_word[st->src], "block", blk, "location",
				      location_json(p, st->src, loc));
		uint32_t vi = loc == P53_STEER_NOLOC ? UINT32_MAX : dec[st->dec + loc];
		if (vi != UINT32_MAX) {
			v = p53_steer_variant(t, vi);
			json_object_set_new(s, "decision", addresses_of(t, v));
			by = policy_word[cr->policy[i]];
		} else {
			json_object_set_new(s, "decision", json_string("no healthy target: next step"));
		}
		json_array_append_new(steps, s);
	}
	if (v == NULL)
		v = p53_steer_variant(t, r->fallback);
	json_object_set_new(o, "steps", steps);

	json_t *cand = json_array();
	for (int j = 0; j < cr->n_pool; j++) {
		const struct p53_steer_target *x = &cr->pool[j];
		const struct p53_steer_check *c = p53_steer_chk(&p->st, (int)ri, j);
		int8_t f = c->forced;
		json_array_append_new(cand, json_pack(
			"{s:s, s:s, s:s, s:I, s:I, s:b, s:s, s:s, s:s}", "name", x->name, "address",
			x->address != NULL ? x->address : x->target,
			"pop", x->pop != NULL ? x->pop : "", "weight", (json_int_t)x->weight, "priority",
			(json_int_t)x->priority, "up", p53_steer_target_up(&p->st, (int)ri, j), "check",
			strcmp(p53_steer_check_kind(x), "none") == 0 ? "none" : c->up ? "up" : "down",
			"forced", f > 0 ? "up" : f < 0 ? "down" : "auto", "probe", p53_steer_check_kind(x)));
		if (x->backup)
			json_object_set_new(json_array_get(cand, json_array_size(cand) - 1),
					    "fallback_pool", json_true());
	}
	json_object_set_new(o, "targets", cand);
	json_object_set_new(o, "answer", json_pack("{s:s, s:o, s:I, s:I}", "by", by, "addresses",
						   addresses_of(t, v), "ttl", (json_int_t)v->ttl,
						   "scope", (json_int_t)(src0 ? 0 : sc)));
	if (cr->all_down == P53_ALL_DOWN_FALLBACK)
		json_object_set_new(o, "all_down", json_string("fallback"));
	else if (cr->all_down == P53_ALL_DOWN_POOL)
		json_object_set_new(o, "all_down", json_string("pool"));
	return o;
}
