/*
 * The journal: a bounded history of one zone's IXFR differences (RFC 1995 §4), kept in
 * memory so pop53 can serve IXFR to the PoPs below it (control/xfr/serve.h). Each step is
 * immutable once pushed and reference-counted: the control thread owns the journal (pushes
 * after an IXFR it applied was published, clears after a whole-zone change, drops the oldest
 * steps past the bound), a TCP thread serving an IXFR holds references to the steps it sends,
 * so a step outlives the journal while a slow client still reads it.
 *
 * Journal: control thread only. Steps: p53_jstep_get/put from any thread.
 */
#ifndef P53_XFR_JOURNAL_H
#define P53_XFR_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "control/xfr/rrs.h"

struct p53_jstep {
	uint32_t refs;                  /* atomic */
	uint32_t from, to;              /* serials */
	struct p53_rrs del;             /* starts with the SOA of `from` */
	struct p53_rrs add;             /* starts with the SOA of `to` */
};

struct p53_journal {
	struct p53_jstep **steps;       /* oldest first; steps[i]->to == steps[i + 1]->from */
	size_t n, cap;
	size_t bytes;                   /* del.len + add.len over the steps */
};

/**
 * Append the steps of an applied IXFR (their records copied). A step that does not follow the newest one clears the journal first.
 * Then the oldest steps go until the journal holds at most max_bytes (0: nothing is kept).
 * @return 0, or -1 out of memory (the journal is then cleared: never a gap in it).
 */
int p53_journal_push(struct p53_journal *j, const struct p53_ixfr *d, uint64_t max_bytes);

/** Forget every step (a whole-zone change: AXFR, reload). */
void p53_journal_clear(struct p53_journal *j);

/**
 * The steps from serial `from` to serial `to`, with a reference taken on each.
 * @param out  room for j->n pointers; *n the count
 * @return 0, or -1 when the journal has no such chain (the caller sends the whole zone).
 */
int p53_journal_chain(const struct p53_journal *j, uint32_t from, uint32_t to,
		      struct p53_jstep **out, size_t *n);

void p53_jstep_get(struct p53_jstep *s);
void p53_jstep_put(struct p53_jstep *s);

#endif /* P53_XFR_JOURNAL_H */
