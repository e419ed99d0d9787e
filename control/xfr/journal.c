/* The IXFR history of a zone; see journal.h. */
#include <stdlib.h>
#include <string.h>

#include "control/xfr/journal.h"

void p53_jstep_get(struct p53_jstep *s)
{
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void p53_jstep_put(struct p53_jstep *s)
{
	if (s == NULL || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	p53_rrs_free(&s->del);
	p53_rrs_free(&s->add);
	free(s);
}

void p53_journal_clear(struct p53_journal *j)
{
	for (size_t i = 0; i < j->n; i++)
		p53_jstep_put(j->steps[i]);
	free(j->steps);
	memset(j, 0, sizeof(*j));
}

static void drop_oldest(struct p53_journal *j)
{
	struct p53_jstep *s = j->steps[0];

	j->bytes -= s->del.len + s->add.len;
	memmove(j->steps, j->steps + 1, sizeof(*j->steps) * (j->n - 1));
	j->n--;
	p53_jstep_put(s);
}

int p53_journal_push(struct p53_journal *j, const struct p53_ixfr *d, uint64_t max_bytes)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct p53_ixfr_step *st = &d->steps[i];
		if (j->n > 0 && j->steps[j->n - 1]->to != st->from)
			p53_journal_clear(j);
		if (j->n == j->cap) {
			size_t cap = j->cap ? j->cap * 2 : 16;
			struct p53_jstep **ns = realloc(j->steps, cap * sizeof(*ns));
			if (ns == NULL)
				goto oom;
			j->steps = ns;
			j->cap = cap;
		}
		struct p53_jstep *s = calloc(1, sizeof(*s));
		if (s == NULL)
			goto oom;
		s->refs = 1;
		s->from = st->from;
		s->to = st->to;
		if (p53_rrs_append(&s->del, &st->del) != 0 || p53_rrs_append(&s->add, &st->add) != 0) {
			p53_jstep_put(s);
			goto oom;
		}
		j->steps[j->n++] = s;
		j->bytes += s->del.len + s->add.len;
	}
	while (j->n > 0 && j->bytes > max_bytes)
		drop_oldest(j);
	return 0;
oom:
	p53_journal_clear(j);
	return -1;
}

int p53_journal_chain(const struct p53_journal *j, uint32_t from, uint32_t to,
		      struct p53_jstep **out, size_t *n)
{
	size_t i = 0;

	while (i < j->n && j->steps[i]->from != from)
		i++;
	if (i == j->n)
		return -1;
	size_t k = i;
	while (k < j->n && j->steps[k]->to != to)
		k++;
	if (k == j->n)
		return -1;
	*n = 0;
	for (; i <= k; i++) {
		p53_jstep_get(j->steps[i]);
		out[(*n)++] = j->steps[i];
	}
	return 0;
}
