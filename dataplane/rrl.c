/* Response rate limiting; see rrl.h. */
#include <string.h>

#include "dataplane/rrl.h"

const char *const p53_rrl_class_names[P53_RRL__CLASSES] = {
	[P53_RRL_RESPONSES] = "responses", [P53_RRL_REFERRALS] = "referrals",
	[P53_RRL_NODATA] = "nodata", [P53_RRL_NXDOMAINS] = "nxdomains",
	[P53_RRL_ERRORS] = "errors", [P53_RRL_ALL] = "all",
};

size_t p53_rrl_table_size(uint32_t entries)
{
	return sizeof(struct p53_rrl_table) + (size_t)entries * sizeof(struct p53_rrl_entry);
}

void p53_rrl_table_init(struct p53_rrl_table *t, uint32_t entries)
{
	t->n_sets = entries / P53_RRL_WAYS;
}

static uint64_t be_bytes(const uint8_t *p, int n) /* control side only */
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint64_t top_bits(unsigned int bits, unsigned int width)
{
	if (bits == 0)
		return 0;
	uint64_t all = width == 64 ? ~0ull : (1ull << width) - 1;
	return (all << (width - bits)) & all;
}

void p53_rrl_conf_set(struct p53_rrl_conf *c, const struct p53_rrl_settings *s, uint64_t hz,
		      unsigned int workers, uint64_t seed)
{
	memset(c, 0, sizeof(*c));
	c->on = 1;
	c->log_only = s->log_only != 0;
	c->slip = (uint8_t)s->slip;
	c->v4_bits = (uint8_t)s->v4_bits;
	c->v6_bits = (uint8_t)s->v6_bits;
	c->v4_mask = top_bits(s->v4_bits, 32);
	c->v6_mask = top_bits(s->v6_bits, 64);
	c->seed = seed;
	c->window = s->window;
	c->burst = hz;
	c->span = (uint64_t)(s->window + 1) * hz;
	for (int i = 0; i < P53_RRL__CLASSES; i++) {
		c->rate[i] = s->rate[i];
		/* Each worker allows rate / workers: an interval `workers` times as long. */
		c->interval[i] = s->rate[i] != 0 ? hz * (workers != 0 ? workers : 1) / s->rate[i] : 0;
	}
	for (uint32_t i = 0; i < s->n_exempt && i < P53_RRL_MAX_EXEMPT; i++) {
		struct p53_rrl_exempt *x = &c->exempt[c->n_exempt++];
		unsigned int bits = s->exempt[i].bits;
		x->family = s->exempt[i].family;
		if (x->family == 4) {
			x->mask_hi = top_bits(bits, 32);
			x->hi = be_bytes(s->exempt[i].bytes, 4) & x->mask_hi;
		} else {
			x->mask_hi = top_bits(bits > 64 ? 64 : bits, 64);
			x->mask_lo = top_bits(bits > 64 ? bits - 64 : 0, 64);
			x->hi = be_bytes(s->exempt[i].bytes, 8) & x->mask_hi;
			x->lo = be_bytes(s->exempt[i].bytes + 8, 8) & x->mask_lo;
		}
	}
}

/* A free slot, else the account due back soonest: idle ones before those in debt. */
struct p53_rrl_entry *p53_rrl_make(struct p53_rrl_table *t, const struct p53_rrl_key *k, uint64_t now)
{
	struct p53_rrl_entry *set = &t->e[(size_t)k->set * P53_RRL_WAYS];
	struct p53_rrl_entry *e = &set[0];

	for (int i = 0; i < P53_RRL_WAYS; i++) {
		if (set[i].tag == 0) {
			e = &set[i];
			break;
		}
		if (set[i].tat < e->tat)
			e = &set[i];
	}
	e->prefix = k->prefix;
	e->tag = k->tag;
	e->cls = k->cls;
	e->family = k->family;
	e->tat = now;
	e->limited = 0;
	e->slip = 0;
	return e;
}

enum p53_rrl_verdict p53_rrl_limited(const struct p53_rrl_conf *c, struct p53_rrl_entry *e)
{
	e->limited++;
	if (c->slip == 0)
		return P53_RRL_DROP;
	if (++e->slip >= c->slip) {
		e->slip = 0;
		return P53_RRL_SLIP;
	}
	return P53_RRL_DROP;
}

int p53_rrl_exempt(const struct p53_rrl_conf *c, const uint8_t *addr, int ipv6)
{
	uint64_t hi = ipv6 ? p53_rrl_be64(addr) : p53_rrl_be32(addr);
	uint64_t lo = ipv6 ? p53_rrl_be64(addr + 8) : 0;

	for (uint32_t i = 0; i < c->n_exempt; i++) {
		const struct p53_rrl_exempt *x = &c->exempt[i];
		if (x->family == (ipv6 ? 6 : 4) && (hi & x->mask_hi) == x->hi && (lo & x->mask_lo) == x->lo)
			return 1;
	}
	return 0;
}
