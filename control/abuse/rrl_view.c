/* What operators see of the RRL tables; see rrl_view.h. Control thread only. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "control/abuse/guard_pub.h"
#include "control/abuse/rrl_view.h"

/* One prefix, gathered over its accounts in every worker's table. */
struct agg {
	uint64_t prefix;
	uint8_t family;
	uint8_t classes;                /* bit per enum p53_rrl_class limited now */
	uint64_t limited;
	uint64_t owed;                  /* ticks until the last of its accounts is out of debt */
};

static void prefix_text(const struct p53_rrl_conf *c, uint8_t family, uint64_t prefix, char *buf,
			size_t len)
{
	uint8_t b[16] = {0};
	char a[INET6_ADDRSTRLEN];

	if (family == 4) {
		for (int i = 0; i < 4; i++)
			b[i] = (uint8_t)(prefix >> (24 - 8 * i));
		inet_ntop(AF_INET, b, a, sizeof(a));
		snprintf(buf, len, "%s/%u", a, c->v4_bits);
	} else {
		for (int i = 0; i < 8; i++)
			b[i] = (uint8_t)(prefix >> (56 - 8 * i));
		inet_ntop(AF_INET6, b, a, sizeof(a));
		snprintf(buf, len, "%s/%u", a, c->v6_bits);
	}
}

static int by_limited(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;

	return x->limited < y->limited ? 1 : x->limited > y->limited ? -1 : 0;
}

static int by_prefix(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return x->prefix < y->prefix ? -1 : x->prefix > y->prefix ? 1 : 0;
}

/* Gather the accounts with limited responses into one entry per prefix, most limited first:
 * collect, sort by prefix, merge, sort by count (O(n log n) in the accounts, whatever the
 * number of prefixes). `now_only`: only accounts in debt now. *out is malloc'd. */
static size_t gather(const struct p53_guard_pub *p, int now_only, struct agg **out)
{
	const struct p53_guard *g = p->cur;
	size_t n = 0, cap = 0;
	struct agg *a = NULL;
	uint64_t now = rte_rdtsc();

	*out = NULL;
	if (g == NULL || !g->rrl.on)
		return 0;
	for (unsigned int w = 0; w < p->n_workers; w++) {
		const struct p53_rrl_table *t = p->tables[w];
		if (t == NULL)
			continue;
		for (size_t i = 0; i < (size_t)t->n_sets * P53_RRL_WAYS; i++) {
			const struct p53_rrl_entry *e = &t->e[i];
			uint32_t limited = __atomic_load_n(&e->limited, __ATOMIC_RELAXED);
			uint64_t tat = __atomic_load_n(&e->tat, __ATOMIC_RELAXED);
			int owes = tat > now && tat - now >= g->rrl.burst;
			if (e->tag == 0 || limited == 0 || (now_only && !owes))
				continue;
			if (n == cap) {
				size_t ncap = cap != 0 ? cap * 2 : 256;
				struct agg *na = realloc(a, ncap * sizeof(*a));
				if (na == NULL)
					goto merge;
				a = na;
				cap = ncap;
			}
			a[n].prefix = e->prefix;
			a[n].family = e->family;
			a[n].limited = limited;
			a[n].classes = owes ? (uint8_t)(1u << (e->cls < P53_RRL__CLASSES ? e->cls : 0)) : 0;
			a[n].owed = owes ? tat - now - g->rrl.burst : 0;
			n++;
		}
	}
merge:
	if (n == 0) {
		free(a);
		return 0;
	}
	qsort(a, n, sizeof(*a), by_prefix);
	size_t m = 0;
	for (size_t i = 1; i < n; i++) {
		if (by_prefix(&a[m], &a[i]) == 0) {
			a[m].limited += a[i].limited;
			a[m].classes |= a[i].classes;
			if (a[i].owed > a[m].owed)
				a[m].owed = a[i].owed;
		} else {
			a[++m] = a[i];
		}
	}
	n = m + 1;
	qsort(a, n, sizeof(*a), by_limited);
	*out = a;
	return n;
}

void p53_rrl_top(const struct p53_guard_pub *p, struct p53_rrl_top *out)
{
	struct agg *a;
	size_t n = gather(p, 0, &a);

	out->n = 0;
	for (size_t i = 0; i < n && out->n < P53_RRL_TOP; i++) {
		prefix_text(&p->cur->rrl, a[i].family, a[i].prefix, out->e[out->n].prefix,
			    sizeof(out->e[out->n].prefix));
		out->e[out->n].limited = a[i].limited;
		out->n++;
	}
	free(a);
}

json_t *p53_rrl_view_json(const struct p53_guard_pub *p)
{
	const struct p53_guard *g = p->cur;
	json_t *o = json_object(), *lim = json_array();
	double hz = (double)rte_get_tsc_hz();
	struct agg *a;
	char text[64];

	json_object_set_new(o, "enabled", json_boolean(g != NULL && g->rrl.on));
	if (g != NULL && g->rrl.on) {
		const struct p53_rrl_conf *c = &g->rrl;
		json_t *rates = json_object();
		for (int i = 0; i < P53_RRL__CLASSES; i++)
			json_object_set_new(rates, p53_rrl_class_names[i], json_integer(c->rate[i]));
		json_object_set_new(o, "per_second", rates);
		json_object_set_new(o, "window", json_integer(c->window));
		json_object_set_new(o, "slip", json_integer(c->slip));
		json_object_set_new(o, "ipv4_prefix_length", json_integer(c->v4_bits));
		json_object_set_new(o, "ipv6_prefix_length", json_integer(c->v6_bits));
		json_object_set_new(o, "log_only", json_boolean(c->log_only));
		json_object_set_new(o, "exempt_clients", json_integer(c->n_exempt));
		json_object_set_new(o, "workers", json_integer(p->n_workers));
		json_object_set_new(o, "table_size", json_integer(p->table_entries));
	}
	size_t n = gather(p, 1, &a);
	for (size_t i = 0; i < n; i++) {
		json_t *cls = json_array();
		for (int c = 0; c < P53_RRL__CLASSES; c++)
			if (a[i].classes & (1u << c))
				json_array_append_new(cls, json_string(p53_rrl_class_names[c]));
		prefix_text(&g->rrl, a[i].family, a[i].prefix, text, sizeof(text));
		json_array_append_new(lim, json_pack("{s:s, s:o, s:I, s:f}", "prefix", text, "classes", cls,
						     "limited", (json_int_t)a[i].limited,
						     "released_in_s", (double)a[i].owed / hz));
	}
	free(a);
	json_object_set_new(o, "limited", lim);
	json_t *ck = json_object();
	json_object_set_new(ck, "enabled", json_boolean(g != NULL && g->cookies));
	json_object_set_new(ck, "secret_rotation", json_integer(p->rotation));
	json_object_set_new(ck, "rotations", json_integer((json_int_t)p->rotations));
	json_object_set_new(o, "cookies", ck);
	return o;
}
