/* The guard publisher; see guard_pub.h. Control thread only. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "control/abuse/guard_pub.h"
#include "control/log.h"
#include "dataplane/siphash.h"

static uint64_t unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec;
}

static void random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* Cannot happen on Linux >= 3.17 with a valid buffer; never leave it zero. */
			p53_err("getrandom: %s", strerror(errno));
			n = 0;
			for (size_t i = 0; i < len; i++)
				p[i] = (uint8_t)(rte_rdtsc() >> (i % 8));
			return;
		}
		p += n;
		len -= (size_t)n;
	}
}

/* The secret of rotation period k under the shared master: two SipHash outputs. */
static void derive(const uint8_t master[16], uint64_t k, uint8_t out[16])
{
	uint8_t in[9];

	for (int i = 0; i < 8; i++)
		in[i] = (uint8_t)(k >> (8 * i));
	for (int half = 0; half < 2; half++) {
		in[8] = (uint8_t)half;
		uint64_t h = p53_siphash24(master, in, sizeof(in));
		for (int i = 0; i < 8; i++)
			out[8 * half + i] = (uint8_t)(h >> (8 * i));
	}
}

/* The workers' wall clock: unix seconds at a TSC reading (guard.h). */
static void set_clock(struct p53_guard *g)
{
	struct timespec ts;
	uint64_t hz = rte_get_tsc_hz();

	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t tsc = rte_rdtsc();
	g->clock_hz = hz;
	g->clock_unix = (uint32_t)ts.tv_sec;
	g->clock_tsc = tsc - (uint64_t)((double)ts.tv_nsec * (double)hz / 1e9);
}

void p53_guard_pub_init(struct p53_guard_pub *p, struct p53_worker *workers, unsigned int n,
			struct rte_rcu_qsbr *qsbr)
{
	memset(p, 0, sizeof(*p));
	p->workers = workers;
	p->n_workers = n;
	p->qsbr = qsbr;
	random_bytes(&p->seed, sizeof(p->seed));
}

/* Free the retired guards every worker is done with. */
static void reap(struct p53_guard_pub *p)
{
	unsigned int keep = 0;

	for (unsigned int i = 0; i < p->n_retired; i++) {
		struct p53_guard_retired *r = &p->retired[i];
		if (p->qsbr != NULL && rte_rcu_qsbr_check(p->qsbr, r->token, false) != 1) {
			p->retired[keep++] = *r;
			continue;
		}
		for (unsigned int w = 0; w < P53_GUARD_MAX_WORKERS; w++)
			rte_free(r->tables[w]);
		rte_free(r->g);
	}
	p->n_retired = keep;
}

/* Secrets for a new guard: kept while the cookie settings and the period are the same. */
static void secrets_for(const struct p53_guard_pub *p, const struct p53_cookie_config *ck,
			uint64_t period, int force_new, struct p53_cookie_secrets *s)
{
	if (ck->have_master) {
		derive(ck->master, period, s->cur);
		derive(ck->master, period - 1, s->prev);
		s->have_prev = 1;
		return;
	}
	if (!force_new && p->cur != NULL && p->period == period && p->rotation == ck->secret_rotation) {
		*s = p->secrets;
		return;
	}
	/* A random secret per period; the one before stays accepted until the next rotation. */
	int had = p->cur != NULL && p->cur->cookies;
	memcpy(s->prev, p->secrets.cur, sizeof(s->prev));
	s->have_prev = (uint8_t)had;
	random_bytes(s->cur, sizeof(s->cur));
}

int p53_guard_prepare(struct p53_guard_pub *p, const struct p53_config *cfg,
		      struct p53_guard_next *next, char *err, size_t errlen)
{
	const struct p53_abuse_config *a = &cfg->abuse;
	struct p53_guard *g;

	memset(next, 0, sizeof(*next));
	reap(p);
	if (p->n_retired == P53_GUARD_RETIRED) {
		snprintf(err, errlen, "%u earlier cookie/RRL tables are still held by a worker that has "
			 "not passed a quiescent state (stuck?)", p->n_retired);
		return -1;
	}
	if (!a->rrl.enabled && !a->cookies.enabled)
		return 0; /* publish NULL: neither, at no cost per query */
	g = rte_zmalloc("p53_guard", sizeof(*g), RTE_CACHE_LINE_SIZE);
	if (g == NULL)
		goto oom;
	next->g = g;
	if (a->rrl.enabled) {
		struct p53_rrl_settings s;
		p53_rrl_config_settings(&a->rrl, &s);
		p53_rrl_conf_set(&g->rrl, &s, rte_get_tsc_hz(), p->n_workers, p->seed);
		next->entries = a->rrl.table_size;
		for (unsigned int i = 0; i < p->n_workers && i < P53_GUARD_MAX_WORKERS; i++) {
			if (p->table_entries == next->entries) {
				g->tables[i] = p->tables[i]; /* accounts survive a reload */
				continue;
			}
			int socket = (int)rte_lcore_to_socket_id(p->workers[i].lcore);
			struct p53_rrl_table *t = rte_zmalloc_socket("p53_rrl", p53_rrl_table_size(next->entries),
								     RTE_CACHE_LINE_SIZE, socket);
			if (t == NULL)
				goto oom;
			p53_rrl_table_init(t, next->entries);
			next->fresh[i] = t;
			g->tables[i] = t;
		}
	}
	g->cookies = a->cookies.enabled;
	next->rotation = a->cookies.secret_rotation;
	next->period = unix_now() / next->rotation;
	if (g->cookies)
		secrets_for(p, &a->cookies, next->period, 0, &next->secrets);
	g->secrets = next->secrets;
	set_clock(g);
	return 0;
oom:
	p53_guard_discard(next);
	snprintf(err, errlen, "out of memory for the RRL tables (%u workers x %u accounts of %zu bytes)",
		 p->n_workers, a->rrl.table_size, sizeof(struct p53_rrl_entry));
	return -1;
}

void p53_guard_discard(struct p53_guard_next *next)
{
	for (unsigned int i = 0; i < P53_GUARD_MAX_WORKERS; i++)
		rte_free(next->fresh[i]);
	rte_free(next->g);
	memset(next, 0, sizeof(*next));
}

void p53_guard_commit(struct p53_guard_pub *p, struct p53_guard_next *next)
{
	struct p53_guard_retired r;
	int new_tables = next->g == NULL || next->g->rrl.on == 0 || next->entries != p->table_entries;

	memset(&r, 0, sizeof(r));
	r.g = p->cur;
	for (unsigned int i = 0; i < p->n_workers; i++)
		__atomic_store_n(&p->workers[i].guard, next->g, __ATOMIC_RELEASE);
	if (new_tables) {
		/* The old tables go with the old guard; the new ones (or none) are ours now. */
		memcpy(r.tables, p->tables, sizeof(r.tables));
		memset(p->tables, 0, sizeof(p->tables));
		for (unsigned int i = 0; i < P53_GUARD_MAX_WORKERS; i++)
			p->tables[i] = next->fresh[i];
		p->table_entries = next->g != NULL && next->g->rrl.on ? next->entries : 0;
	}
	if (r.g != NULL || new_tables) {
		r.token = p->qsbr != NULL ? rte_rcu_qsbr_start(p->qsbr) : 0;
		p->retired[p->n_retired++] = r; /* prepare made sure there is room */
	}
	p->cur = next->g;
	p->secrets = next->secrets;
	p->period = next->period;
	p->rotation = next->rotation;
	p->rebased = unix_now();
	memset(next, 0, sizeof(*next));
	reap(p);
}

/* Publish a copy of the current guard with new secrets and/or a fresh clock. */
static void republish(struct p53_guard_pub *p, const struct p53_config *cfg, int rotate)
{
	struct p53_guard_next next;
	uint64_t now = unix_now();

	reap(p);
	if (p->n_retired == P53_GUARD_RETIRED)
		return; /* a stuck worker: try again next tick */
	memset(&next, 0, sizeof(next));
	next.g = rte_zmalloc("p53_guard", sizeof(*next.g), RTE_CACHE_LINE_SIZE);
	if (next.g == NULL)
		return;
	*next.g = *p->cur;
	next.entries = p->table_entries;
	next.rotation = p->rotation;
	next.period = rotate ? now / p->rotation : p->period;
	next.secrets = p->secrets;
	if (rotate) {
		secrets_for(p, &cfg->abuse.cookies, next.period, 1, &next.secrets);
		next.g->secrets = next.secrets;
		p->rotations++;
		p53_info("cookies: secret rotated (period %" PRIu64 " of %u s%s)", next.period, p->rotation,
			 cfg->abuse.cookies.have_master ? ", derived from the shared secret_file" : "");
	}
	set_clock(next.g);
	p53_guard_commit(p, &next);
}

void p53_guard_tick(struct p53_guard_pub *p, const struct p53_config *cfg)
{
	reap(p);
	if (p->cur == NULL)
		return;
	uint64_t now = unix_now();
	if (p->cur->cookies && p->rotation != 0 && now / p->rotation != p->period)
		republish(p, cfg, 1);
	else if (now - p->rebased >= P53_GUARD_REBASE_S)
		republish(p, cfg, 0);
}

void p53_guard_pub_fini(struct p53_guard_pub *p)
{
	for (unsigned int i = 0; i < p->n_workers; i++)
		p->workers[i].guard = NULL;
	for (unsigned int i = 0; i < p->n_retired; i++) {
		for (unsigned int w = 0; w < P53_GUARD_MAX_WORKERS; w++)
			rte_free(p->retired[i].tables[w]);
		rte_free(p->retired[i].g);
	}
	p->n_retired = 0;
	for (unsigned int w = 0; w < P53_GUARD_MAX_WORKERS; w++)
		rte_free(p->tables[w]);
	rte_free(p->cur);
	memset(p->tables, 0, sizeof(p->tables));
	p->cur = NULL;
}
