/*
 * Response rate limiting (RRL) with BIND's semantics, per worker.
 *
 * An account is kept per (client prefix, response class, name, type): the name and type of
 * the question for answers, the zone for NXDOMAIN, NODATA and errors, the delegation point for
 * referrals, nothing for the all-responses account. Each account earns `rate` credits a second
 * and every prospective response debits it by one; while it is negative, responses are
 * dropped, every `slip`-th one sent as a minimal TC=1 reply instead. It holds at most `rate`
 * credits (a fresh client may burst one second's worth) and at least -window x rate, so a
 * client that floods must keep quiet for `window` seconds before it is answered again. This
 * is BIND's "credit or token bucket scheme" (ARM, rate-limit), credited continuously instead
 * of once a second.
 *
 * It is kept as a theoretical arrival time (GCRA): an account's TAT is when its balance would
 * be back at `rate`; a response at `now` is allowed when TAT - now < 1 s, and moves TAT on by
 * 1/rate s (per worker); TAT never runs more than window + 1 s ahead of now. No division,
 * multiplication or floating point per packet: one 64-bit add and three compares.
 *
 * Per worker: each worker owns one table (struct p53_rrl_table) and is the only writer; with
 * N workers every account gets rate / N per worker (see docs/CONFIG.md, rrl). The control
 * thread reads the tables racily for `pop53ctl rrl` and the top limited prefixes; a torn read
 * only blurs a diagnostic. The settings (struct p53_rrl_conf) are read-only, published with
 * the guard table (dataplane/guard.h).
 *
 * Per-packet safe: no allocation, no locks, no syscalls.
 */
#ifndef P53_RRL_H
#define P53_RRL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Response classes, BIND's: each has its own rate (rrl.<class>_per_second). */
enum p53_rrl_class {
	P53_RRL_RESPONSES = 0,  /* answers: keyed by question name and type */
	P53_RRL_REFERRALS,      /* keyed by the delegation point */
	P53_RRL_NODATA,         /* keyed by the zone */
	P53_RRL_NXDOMAINS,      /* keyed by the zone */
	P53_RRL_ERRORS,         /* every RCODE but NOERROR and NXDOMAIN; keyed by the zone, if any */
	P53_RRL_ALL,            /* every response, keyed by the prefix alone */
	P53_RRL__CLASSES
};

extern const char *const p53_rrl_class_names[P53_RRL__CLASSES];

#define P53_RRL_MAX_EXEMPT 64

struct p53_rrl_exempt {
	uint8_t family;                 /* 4 or 6 */
	uint64_t hi, lo;                /* prefix, host order: IPv4 in hi's low 32 bits */
	uint64_t mask_hi, mask_lo;
};

/* Settings as a worker uses them; built by p53_rrl_conf_set(). Read-only once published. */
struct p53_rrl_conf {
	uint8_t on;                     /* 0: nothing is accounted */
	uint8_t log_only;               /* account and count, but send everything */
	uint8_t slip;                   /* 0: drop all; n: every n-th limited response slips */
	uint8_t v4_bits, v6_bits;       /* prefix lengths; v6 at most 64 */
	uint64_t v4_mask, v6_mask;      /* of the address's first 32 / 64 bits, host order */
	uint64_t seed;                  /* hash seed: table positions cannot be predicted */
	uint64_t interval[P53_RRL__CLASSES]; /* TSC ticks per response per worker, 0 = unlimited */
	uint64_t burst;                 /* ticks: one second (an account holds `rate` credits) */
	uint64_t span;                  /* ticks: window + 1 s (the most an account owes) */
	uint32_t rate[P53_RRL__CLASSES];/* as configured, per second, all workers together */
	uint32_t window;                /* seconds */
	uint32_t n_exempt;
	struct p53_rrl_exempt exempt[P53_RRL_MAX_EXEMPT];
};

/* One account: 32 bytes, four to a set of two cache lines. */
struct p53_rrl_entry {
	uint64_t prefix;                /* client prefix (masked), host order */
	uint64_t tat;                   /* theoretical arrival time, TSC */
	uint32_t tag;                   /* the rest of the key's hash; 0 = free slot */
	uint32_t limited;               /* responses limited since the account was made */
	uint8_t cls;                    /* enum p53_rrl_class */
	uint8_t family;                 /* 4 or 6 */
	uint8_t slip;                   /* limited responses since the last slip */
	uint8_t pad[5];
};

#define P53_RRL_WAYS 4

struct p53_rrl_table {
	uint32_t n_sets;                /* power of two */
	uint32_t pad[15];
	struct p53_rrl_entry e[];       /* n_sets * P53_RRL_WAYS, 64-byte aligned */
};

/** Bytes a table of `entries` accounts needs (entries: a power of two, >= P53_RRL_WAYS). */
size_t p53_rrl_table_size(uint32_t entries);

/** Initialise a zeroed table of `entries` accounts (memory from p53_rrl_table_size()). */
void p53_rrl_table_init(struct p53_rrl_table *t, uint32_t entries);

/* The configuration as an operator writes it (rrl: in the config file). */
struct p53_rrl_settings {
	uint32_t rate[P53_RRL__CLASSES];        /* per second; 0 = unlimited */
	uint32_t window;                        /* seconds, 1..3600 */
	uint32_t slip;                          /* 0..10 */
	uint32_t v4_bits, v6_bits;              /* 0..32, 0..64 */
	int log_only;
	uint32_t n_exempt;
	struct { uint8_t family; uint8_t bytes[16]; uint8_t bits; } exempt[P53_RRL_MAX_EXEMPT];
};

/**
 * Build the per-worker settings: each of `workers` workers gets rate / workers per account.
 * Control thread (and tests); no allocation.
 *
 * @param hz  TSC ticks per second (rte_get_tsc_hz())
 */
void p53_rrl_conf_set(struct p53_rrl_conf *c, const struct p53_rrl_settings *s, uint64_t hz,
		      unsigned int workers, uint64_t seed);

/* The key of an account, computed once per response. */
struct p53_rrl_key {
	uint64_t prefix;
	uint32_t set;
	uint32_t tag;
	uint8_t cls;
	uint8_t family;
};

static inline uint64_t p53_rrl_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}

static inline uint64_t p53_rrl_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

/**
 * The key for a response to `addr`.
 *
 * @param addr  client address (4 bytes for IPv4, 16 for IPv6)
 * @param name  the name the class keys on (a p53_name_hash()), 0 for none
 * @param qtype the question type for P53_RRL_RESPONSES, else 0
 */
static inline void p53_rrl_key(const struct p53_rrl_conf *c, const struct p53_rrl_table *t,
			       struct p53_rrl_key *k, const uint8_t *addr, int ipv6,
			       enum p53_rrl_class cls, uint32_t name, uint16_t qtype)
{
	uint64_t h;

	if (ipv6) {
		k->prefix = p53_rrl_be64(addr) & c->v6_mask;
		k->family = 6;
	} else {
		k->prefix = p53_rrl_be32(addr) & c->v4_mask;
		k->family = 4;
	}
	k->cls = (uint8_t)cls;
	/* A seeded multiply-xorshift mix: cheap, and without the seed nobody can aim two keys at
	 * one set. */
	h = (k->prefix ^ c->seed) * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)name << 32 | (uint64_t)qtype << 16 | (uint64_t)cls << 8 | k->family;
	h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	k->set = (uint32_t)h & (t->n_sets - 1);
	k->tag = (uint32_t)(h >> 32) | 1u;
}

/** The account of `k`, or NULL. No side effects. */
static inline struct p53_rrl_entry *p53_rrl_find(struct p53_rrl_table *t, const struct p53_rrl_key *k)
{
	struct p53_rrl_entry *set = &t->e[(size_t)k->set * P53_RRL_WAYS];

	for (int i = 0; i < P53_RRL_WAYS; i++)
		if (set[i].tag == k->tag && set[i].prefix == k->prefix)
			return &set[i];
	return NULL;
}

/** Would a response on `e` at `now` be limited? No side effects. */
static inline int p53_rrl_owes(const struct p53_rrl_conf *c, const struct p53_rrl_entry *e, uint64_t now)
{
	return e->tat > now && e->tat - now >= c->burst;
}

enum p53_rrl_verdict { P53_RRL_OK = 0, P53_RRL_DROP, P53_RRL_SLIP };

/** Make the account of `k` (replacing the set's least recently used one when it is full):
 * a new account starts full, `rate` credits (BIND's fresh entry). */
struct p53_rrl_entry *p53_rrl_make(struct p53_rrl_table *t, const struct p53_rrl_key *k, uint64_t now);

/** The limited branch of p53_rrl_debit(): count it, and drop or slip. */
enum p53_rrl_verdict p53_rrl_limited(const struct p53_rrl_conf *c, struct p53_rrl_entry *e);

/**
 * Debit one response. `e` is what p53_rrl_find() returned for `k` (NULL makes the account).
 *
 * @return P53_RRL_OK, or P53_RRL_DROP / P53_RRL_SLIP when the account is in debt (log_only
 *         and exempt clients are the caller's business).
 */
static inline enum p53_rrl_verdict p53_rrl_debit(const struct p53_rrl_conf *c, struct p53_rrl_table *t,
						 const struct p53_rrl_key *k, struct p53_rrl_entry *e,
						 uint64_t now)
{
	uint64_t iv = c->interval[k->cls];

	if (iv == 0)
		return P53_RRL_OK;
	if (e == NULL)
		e = p53_rrl_make(t, k, now);
	uint64_t tat = e->tat > now ? e->tat : now;
	int limited = tat - now >= c->burst;

	/* Every prospective response debits, limited or not (BIND), but an account never owes
	 * more than `window` seconds of its rate. */
	tat += iv;
	if (tat - now > c->span)
		tat = now + c->span;
	e->tat = tat;
	return limited ? p53_rrl_limited(c, e) : P53_RRL_OK;
}

/** Is the client in rrl.exempt_clients? (Only asked when a response would be limited.) */
int p53_rrl_exempt(const struct p53_rrl_conf *c, const uint8_t *addr, int ipv6);

#endif /* P53_RRL_H */
