/* The steering publisher and the targets' health checks; see steer_pub.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_malloc.h>

#include "control/log.h"
#include "control/steer/steer_pub.h"

void p53_steer_pub_init(struct p53_steer_pub *p, void **slot, struct rte_rcu_qsbr *qsbr,
			const struct p53_steer_conf *conf, const struct p53_dnssec_conf *dnssec)
{
	memset(p, 0, sizeof(*p));
	p->slot = slot;
	p->qsbr = qsbr;
	p->conf = conf;
	p->dnssec = dnssec;
}

static void reap(struct p53_steer_pub *p)
{
	unsigned int keep = 0;

	for (unsigned int i = 0; i < p->n_retired; i++) {
		if (p->qsbr != NULL && rte_rcu_qsbr_check(p->qsbr, p->retired[i].token, false) != 1) {
			p->retired[keep++] = p->retired[i];
			continue;
		}
		rte_free(p->retired[i].t);
	}
	p->n_retired = keep;
}

static void state_free(struct p53_steer_state *s)
{
	for (int k = 0; s->chk != NULL && k < (s->n_records > 0 ? s->first[s->n_records] : 0); k++) {
		p53_proc_kill(&s->chk[k].proc);
		p53_probe_kill(&s->chk[k].probe);
	}
	free(s->first);
	free(s->chk);
	p53_steer_sources_free(&s->src);
	memset(s, 0, sizeof(*s));
}

/* Build the table of `conf` with the health in `s` into rte_malloc memory, its variants
 * signed with the keys of `dc` from now for signature_validity. */
static void *build(const struct p53_steer_conf *conf, const struct p53_dnssec_conf *dc,
		   struct p53_steer_state *s, struct p53_steer_signing *sg, size_t *len, char *err,
		   size_t errlen)
{
	uint64_t now = (uint64_t)time(NULL);
	void *m, *t;
	bool *up = NULL;

	/* An hour back for resolvers whose clocks lag (RFC 4035 §5.3.1 checks inception). */
	*sg = (struct p53_steer_signing){ .keys = dc->keys, .n_keys = dc->n_keys,
					  .inception = (uint32_t)(now - 3600),
					  .expiration = (uint32_t)(now + dc->validity_s),
					  .refresh_s = dc->refresh_s };
	if (s->n_records > 0) {
		/* One flag per check, in the checks' order: records in config order, each
		 * record's pool in order, as p53_steer_build reads them. */
		up = calloc((size_t)s->first[s->n_records] + 1, sizeof(*up));
		if (up == NULL) {
			snprintf(err, errlen, "steering: out of memory");
			return NULL;
		}
		for (int i = 0; i < s->n_records; i++)
			for (int j = 0; j < s->first[i + 1] - s->first[i]; j++)
				up[s->first[i] + j] = p53_steer_target_up(s, i, j);
	}
	m = p53_steer_build_signed(conf, &s->src, up, sg, len, err, errlen);
	free(up);
	if (m == NULL)
		return NULL;
	if (sg->n_signed > 0)
		p53_info("steering: signed %u variant(s) in %.3f ms (%.1f us each), %u verified with "
			 "the DNSKEY; valid until %u", sg->n_signed, (double)sg->sign_ns / 1e6,
			 (double)sg->sign_ns / 1e3 / sg->n_signed, sg->n_verified, sg->expiration);
	t = rte_malloc("p53_steer", *len, 64);
	if (t == NULL)
		snprintf(err, errlen, "steering: out of memory for a %zu-byte table", *len);
	else
		memcpy(t, m, *len);
	free(m);
	return t;
}

static bool same_check(const struct p53_steer_target *a, const struct p53_steer_target *b)
{
	return (a->check == NULL) == (b->check == NULL) &&
	       (a->check == NULL || strcmp(a->check, b->check) == 0) &&
	       p53_probe_conf_same(&a->probe, &b->probe);
}

/* A record of the running config, found by owner and type. */
struct rec_ref {
	const struct p53_steer_record *r;
	int i;
};

static int rec_ref_cmp(const void *x, const void *y)
{
	const struct p53_steer_record *a = ((const struct rec_ref *)x)->r, *b = ((const struct rec_ref *)y)->r;

	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->lname_len != b->lname_len)
		return a->lname_len < b->lname_len ? -1 : 1;
	return memcmp(a->lname, b->lname, a->lname_len);
}

int p53_steer_prepare(struct p53_steer_pub *p, const struct p53_steer_conf *conf,
		      const struct p53_dnssec_conf *dnssec, struct p53_steer_next *next, char *err,
		      size_t errlen)
{
	struct p53_steer_state *s = &next->st;
	struct rec_ref *old = NULL;
	int n = conf->n_records, n_targets = 0;

	memset(next, 0, sizeof(*next));
	reap(p);
	if (p->n_retired == P53_STEER_RETIRED) {
		snprintf(err, errlen, "%u earlier steering tables are still held by a reader that has "
			 "not passed a quiescent state (stuck?)", p->n_retired);
		return -1;
	}
	if (n == 0)
		return 0;
	s->first = malloc((size_t)(n + 1) * sizeof(*s->first));
	if (s->first == NULL) {
		snprintf(err, errlen, "steering: out of memory");
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		s->first[i] = n_targets;
		n_targets += conf->records[i].n_pool;
	}
	s->first[n] = n_targets;
	s->chk = calloc(n_targets > 0 ? (size_t)n_targets : 1, sizeof(*s->chk));
	if (s->chk == NULL) {
		snprintf(err, errlen, "steering: out of memory");
		goto fail;
	}
	for (int k = 0; k < n_targets; k++) {
		p53_proc_init(&s->chk[k].proc);
		p53_probe_init(&s->chk[k].probe);
		s->chk[k].up = true; /* up until a check says otherwise */
	}
	/* Counted only now: state_free must not "kill" the zeroed checks (fd 0) of a failed calloc. */
	s->n_records = n;
	/* The running config's records by owner and type, for the carry-over: a lookup per
	 * record, not a scan of the old list (tens of thousands of names on each side). */
	int n_old = p->conf != NULL ? p->st.n_records : 0;
	if (n_old > 0 && (old = malloc((size_t)n_old * sizeof(*old))) == NULL) {
		snprintf(err, errlen, "steering: out of memory");
		goto fail;
	}
	for (int oi = 0; oi < n_old; oi++)
		old[oi] = (struct rec_ref){ .r = &p->conf->records[oi], .i = oi };
	if (n_old > 0)
		qsort(old, (size_t)n_old, sizeof(*old), rec_ref_cmp);
	for (int i = 0; i < n; i++) {
		const struct p53_steer_record *r = &conf->records[i];
		const struct rec_ref key = { .r = r }, *f = NULL;
		if (n_old > 0)
			f = bsearch(&key, old, (size_t)n_old, sizeof(*old), rec_ref_cmp);
		/* Carry health over from the running config: same record (one per owner and type),
		 * target and check. */
		if (f != NULL) {
			const struct p53_steer_record *o = f->r;
			int oi = f->i;
			for (int j = 0; j < r->n_pool; j++)
				for (int oj = 0; oj < o->n_pool; oj++)
					if (strcmp(o->pool[oj].name, r->pool[j].name) == 0 &&
					    same_check(&o->pool[oj], &r->pool[j])) {
						const struct p53_steer_check *oc = p53_steer_chk(&p->st, oi, oj);
						struct p53_steer_check *nc = p53_steer_chk(s, i, j);
						nc->up = oc->up;
						nc->ok_run = oc->ok_run;
						nc->fail_run = oc->fail_run;
						nc->oks = oc->oks;
						nc->fails = oc->fails;
						nc->changes = oc->changes;
						nc->last_ok = oc->last_ok;
						nc->last_ms = oc->last_ms;
						memcpy(nc->last, oc->last, sizeof(nc->last));
					}
			/* The operator's word is about the target, whatever its check. */
			for (int j = 0; j < r->n_pool; j++)
				for (int oj = 0; oj < o->n_pool; oj++)
					if (strcmp(o->pool[oj].name, r->pool[j].name) == 0)
						p53_steer_chk(s, i, j)->forced = p53_steer_chk(&p->st, oi, oj)->forced;
		}
	}
	free(old);
	old = NULL;
	if (p53_steer_sources_load(conf, &s->src, err, errlen) != 0)
		goto fail;
	next->t = build(conf, dnssec, s, &next->sign, &next->len, err, errlen);
	if (next->t == NULL)
		goto fail;
	return 0;
fail:
	free(old);
	p53_steer_discard(next);
	return -1;
}

void p53_steer_discard(struct p53_steer_next *next)
{
	rte_free(next->t);
	state_free(&next->st);
	memset(next, 0, sizeof(*next));
}

/* The generations stamped on the tables published (steer.h p53_steer_hdr.generation): one
 * number per publish in the process, on which the workers' pick caches (qcache.h) key.
 * Control thread only. */
static uint64_t generations;

static void publish(struct p53_steer_pub *p, void *t, size_t len, const struct p53_steer_signing *sg)
{
	void *old = p->cur;

	if (t != NULL)  /* before the store that hands it to the readers */
		((struct p53_steer_hdr *)t)->generation = ++generations;
	uint64_t expire = t != NULL ? p53_steer_hdr(t)->sig_expire : 0;

	/* Re-sign when signature_refresh is left; the config check keeps it above the margin. */
	p->resign_at = expire != 0 ? expire - sg->refresh_s : 0;
	p->last_sign = *sg;

	__atomic_store_n(p->slot, t, __ATOMIC_RELEASE);
	p->cur = t;
	p->cur_len = len;
	p->publishes++;
	if (old != NULL) {
		p->retired[p->n_retired].t = old;
		p->retired[p->n_retired].token = p->qsbr != NULL ? rte_rcu_qsbr_start(p->qsbr) : 0;
		p->n_retired++;
	}
	reap(p);
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int p53_steer_reload_sources(struct p53_steer_pub *p, char *err, size_t errlen)
{
	struct p53_steer_sources fresh, old;
	struct p53_steer_signing sg;
	uint64_t t0 = mono_us();
	size_t len;
	void *t;

	reap(p);
	if (p->conf == NULL || p->conf->n_records == 0 || p->cur == NULL) {
		snprintf(err, errlen, "steering: no steered records in the config in force: nothing "
			 "to reload");
		goto fail;
	}
	if (p->conf->map == NULL && p->conf->geoip == NULL && p->conf->asn_db == NULL) {
		snprintf(err, errlen, "steering: the config names no map, geoip or asn_db to reload");
		goto fail;
	}
	if (p->n_retired == P53_STEER_RETIRED) {
		snprintf(err, errlen, "%u earlier steering tables are still held by a reader that has "
			 "not passed a quiescent state (stuck?)", p->n_retired);
		goto fail;
	}
	if (p53_steer_sources_load(p->conf, &fresh, err, errlen) != 0)
		goto fail;
	/* Built from the fresh sources and the health in force; the old sources come back if
	 * the build fails. */
	old = p->st.src;
	p->st.src = fresh;
	t = build(p->conf, p->dnssec, &p->st, &sg, &len, err, errlen);
	if (t == NULL) {
		p->st.src = old;
		p53_steer_sources_free(&fresh);
		goto fail;
	}
	p53_steer_sources_free(&old);
	publish(p, t, len, &sg);
	p->source_reloads++;
	p->last_source_reload_ms = (double)(mono_us() - t0) / 1000.0;
	p53_info("steering reload: map %u network(s) in %u entries, geoip %u network(s), asn %u "
		 "network(s); %zu bytes, %.1f ms", fresh.src[P53_STEER_SRC_MAP].n_nets,
		 fresh.src[P53_STEER_SRC_MAP].n_locs, fresh.src[P53_STEER_SRC_GEO].n_nets,
		 fresh.src[P53_STEER_SRC_ASN].n_nets, len, p->last_source_reload_ms);
	return 0;
fail:
	p->source_reloads_failed++;
	p53_err("steering reload rejected, the running table keeps serving: %s", err);
	return -1;
}

/* The gauge of targets out of the answers, kept as one integer so the telemetry thread reads
 * it without touching the state a reload frees. */
static void count_down(struct p53_steer_pub *p)
{
	uint64_t down = 0;

	for (int i = 0; p->conf != NULL && i < p->st.n_records; i++)
		for (int j = 0; j < p->conf->records[i].n_pool; j++)
			down += !p53_steer_target_up(&p->st, i, j);
	__atomic_store_n(&p->targets_down, down, __ATOMIC_RELAXED);
}

void p53_steer_commit(struct p53_steer_pub *p, struct p53_steer_next *next)
{
	/* Checks still running belong to the old state: stop them (the new state starts its own). */
	state_free(&p->st);
	p->st = next->st;
	publish(p, next->t, next->len, &next->sign);
	count_down(p);
	if (next->t != NULL) {
		const struct p53_steer_hdr *h = next->t;
		p53_info("steering: %u record(s), %u variant(s); map %u+%u blocks, geoip %u+%u blocks, "
			 "asn %u+%u blocks; %zu bytes", h->n_records, h->n_variants,
			 h->src[P53_STEER_SRC_MAP].n4, h->src[P53_STEER_SRC_MAP].n6,
			 h->src[P53_STEER_SRC_GEO].n4, h->src[P53_STEER_SRC_GEO].n6,
			 h->src[P53_STEER_SRC_ASN].n4, h->src[P53_STEER_SRC_ASN].n6, next->len);
	}
	memset(next, 0, sizeof(*next));
}

static bool has_probe(const struct p53_steer_target *t)
{
	return t->probe.set && t->probe.type != P53_PROBE_COMMAND;
}

/* Run a command or probe when due; poll the one in flight. @return 1 with c->last and
 * c->last_ok set once a run has finished, else 0. */
static int run(struct p53_steer_check *c, const struct p53_steer_target *t, uint64_t now)
{
	if (has_probe(t)) {
		int done;
		if (p53_probe_running(&c->probe)) {
			done = p53_probe_poll(&c->probe, &t->probe, now);
		} else {
			if (now < c->next_ms)
				return 0;
			c->next_ms = now + t->check_interval_ms;
			done = p53_probe_start(&c->probe, &t->probe, t->check_timeout_ms, now);
			/* A peer on the same host may have answered already: look at once. */
			if (done == 0)
				done = p53_probe_poll(&c->probe, &t->probe, now);
		}
		if (done == 0)
			return 0;
		c->last_ok = c->probe.ok;
		memcpy(c->last, c->probe.why, sizeof(c->probe.why)); /* both NUL-terminated, last larger */
		return 1;
	}
	if (p53_proc_running(&c->proc)) {
		if (p53_proc_poll(&c->proc, now) == 0)
			return 0;
	} else {
		char err[256];
		if (now < c->next_ms)
			return 0;
		char *argv[] = { "sh", "-c", t->check, NULL };
		c->next_ms = now + t->check_interval_ms;
		if (p53_proc_start(&c->proc, argv, t->check_timeout_ms, now, err, sizeof(err)) == 0)
			return 0;
		c->last_ok = false;
		snprintf(c->last, sizeof(c->last), "%s", err);
		return 1;
	}
	c->last_ok = c->proc.status == 0 && !c->proc.timed_out;
	p53_proc_describe(&c->proc, c->last, sizeof(c->last));
	return 1;
}

/* One target's check: its verdict into the rise/fall counts. @return 1 on a change of state. */
static int check(struct p53_steer_pub *p, int i, int j, uint64_t now)
{
	const struct p53_steer_target *t = &p->conf->records[i].pool[j];
	struct p53_steer_check *c = p53_steer_chk(&p->st, i, j);
	bool *up = &c->up;

	if (strcmp(p53_steer_check_kind(t), "none") == 0)
		return 0;
	if (run(c, t, now) == 0)
		return 0;
	c->last_ms = now;
	int kind = has_probe(t) ? t->probe.type : P53_PROBE_COMMAND;
	if (c->last_ok)
		p->probe_ok[kind]++;
	else
		p->probe_fail[kind]++;
	if (c->last_ok) {
		c->oks++;
		c->fail_run = 0;
		c->ok_run++;
	} else {
		c->fails++;
		c->ok_run = 0;
		c->fail_run++;
	}
	if (*up && c->fail_run >= t->fall) {
		*up = false;
	} else if (!*up && c->ok_run >= t->rise) {
		*up = true;
	} else {
		return 0;
	}
	c->changes++;
	p->target_changes++;
	p53_info("steering: target %s (%s) of %s is %s (%s)", t->name, t->address != NULL ? t->address : t->target,
		 p->conf->records[i].owner, *up ? "up" : "down", c->last);
	return 1;
}

void p53_steer_tick(struct p53_steer_pub *p, uint64_t now_ms)
{
	int changed = 0, resign = 0;
	char err[512];

	reap(p);
	for (int i = 0; i < p->st.n_records; i++)
		for (int j = 0; j < p->conf->records[i].n_pool; j++)
			changed |= check(p, i, j, now_ms);
	/* The re-signing timer: wall clock, as the signatures' validity is. */
	resign = p->resign_at != 0 && (uint64_t)time(NULL) >= p->resign_at;
	if (p->dirty) {
		p->dirty = false;
		changed = 1;
	}
	if (!changed && !resign)
		return;
	if (changed) {
		p->health_changes++;
		count_down(p);
	}
	if (p->n_retired == P53_STEER_RETIRED) {
		p53_err("steering: %s but a reader holds %u old tables; next tick",
			changed ? "health changed" : "variants are due for re-signing", p->n_retired);
		p->dirty = p->dirty || changed;
		return;
	}
	size_t len;
	struct p53_steer_signing sg;
	void *t = build(p->conf, p->dnssec, &p->st, &sg, &len, err, sizeof(err));
	if (t == NULL) {
		/* Tried again next tick; the health zone check fails once the margin is reached. */
		p53_err("%s", err);
		p->dirty = p->dirty || changed;
		return;
	}
	if (resign && !changed) {
		p->resigns++;
		p53_info("steering: variants re-signed (signature_refresh %u s)", p->dnssec->refresh_s);
	}
	publish(p, t, len, &sg);
}

int p53_steer_sig_check(const struct p53_steer_pub *p, uint64_t now, unsigned int margin,
			char *why, size_t cap)
{
	uint64_t expire = p->cur != NULL ? p53_steer_hdr(p->cur)->sig_expire : 0;

	if (expire == 0 || (expire > now && expire - now >= margin))
		return 0;
	if (expire <= now)
		snprintf(why, cap, "steering: variant signatures expired %llu s ago",
			 (unsigned long long)(now - expire));
	else
		snprintf(why, cap, "steering: variant signatures expire in %llu s "
			 "(dnssec.signature_margin %u s)", (unsigned long long)(expire - now), margin);
	return -1;
}

const char *p53_steer_check_kind(const struct p53_steer_target *t)
{
	if (has_probe(t))
		return p53_probe_type_names[t->probe.type];
	return t->check != NULL ? "command" : "none";
}

bool p53_steer_target_up(const struct p53_steer_state *s, int i, int j)
{
	const struct p53_steer_check *c = p53_steer_chk(s, i, j);

	return c->forced != 0 ? c->forced > 0 : c->up;
}

int p53_steer_force(struct p53_steer_pub *p, const char *name, const char *state)
{
	int8_t f;
	int n = 0;

	if (strcmp(state, "up") == 0)
		f = 1;
	else if (strcmp(state, "down") == 0)
		f = -1;
	else if (strcmp(state, "auto") == 0)
		f = 0;
	else
		return -1;
	for (int i = 0; i < p->st.n_records; i++)
		for (int j = 0; j < p->conf->records[i].n_pool; j++) {
			if (strcmp(p->conf->records[i].pool[j].name, name) != 0)
				continue;
			n++;
			if (p53_steer_chk(&p->st, i, j)->forced == f)
				continue;
			p53_steer_chk(&p->st, i, j)->forced = f;
			p->dirty = true;
			p53_info("steering: target %s (%s) of %s set %s by the operator", name,
				 p->conf->records[i].pool[j].address != NULL ? p->conf->records[i].pool[j].address :
				 p->conf->records[i].pool[j].target, p->conf->records[i].owner, state);
		}
	return n;
}

enum { SF_OK = 0, SF_FAIL, SF_CHANGES, SF_DOWN, SF__MAX };
static const struct p53_family sfam[SF__MAX] = {
	[SF_OK] = { "pop53_steer_probe_ok_total", "steer_probe_ok", "type", P53_COUNTER, "steering target checks that passed, by check type" },
	[SF_FAIL] = { "pop53_steer_probe_failed_total", "steer_probe_failed", "type", P53_COUNTER, "steering target checks that failed, by check type" },
	[SF_CHANGES] = { "pop53_steer_target_changes_total", "steer_target_changes", NULL, P53_COUNTER, "steering targets that went down (fall) or up (rise)" },
	[SF_DOWN] = { "pop53_steer_targets_down", "steer_targets_down", NULL, P53_GAUGE, "steering targets left out of the answers now (check or operator)" },
};

void p53_steer_walk(const struct p53_steer_pub *p, p53_counter_fn fn, void *arg)
{
	for (int k = 0; k < P53_PROBE_NTYPES; k++)
		fn(arg, &sfam[SF_OK], p53_probe_type_names[k], p->probe_ok[k]);
	for (int k = 0; k < P53_PROBE_NTYPES; k++)
		fn(arg, &sfam[SF_FAIL], p53_probe_type_names[k], p->probe_fail[k]);
	fn(arg, &sfam[SF_CHANGES], NULL, p->target_changes);
	fn(arg, &sfam[SF_DOWN], NULL, p->targets_down);
}

void p53_steer_pub_fini(struct p53_steer_pub *p)
{
	if (p->slot != NULL)
		*p->slot = NULL;
	for (unsigned int i = 0; i < p->n_retired; i++)
		rte_free(p->retired[i].t);
	rte_free(p->cur);
	state_free(&p->st);
	memset(p, 0, sizeof(*p));
}
