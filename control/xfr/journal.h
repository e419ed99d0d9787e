/*
 * The journal: a bounded history of one zone's IXFR differences (RFC 1995 §4), kept in
 * memory so pop53 can serve IXFR to the PoPs below it (control/xfr/serve.h). Each step is
 * immutable once pushed and reference-counted: the control thread owns the journal (pushes
 * after an IXFR it applied was published, clears after a whole-zone change, drops the oldest
 * steps past the bound), a TCP thread serving an IXFR holds references to the steps it sends,
 * so a step outlives the journal while a slow client still reads it.
 *
 * The journal survives restarts in a file next to the zone's disk copy (store.h), named
 * after it with ".journal" added. A transfer thread writes it after each change that was
 * published (p53_journal_store; the lazy disk copy, when due, after an append and before a
 * rewrite: the file always leads from the copy's serial, docs/ARCHITECTURE.md): the new steps are appended, one framed and
 * checksummed record each, then fsync'd; the file is rewritten whole (compacted: temporary
 * file, fsync, rename, so a crash leaves the old file or the new one) only when its chain was
 * reset (AXFR, a whole new zone, a file not as its writer left it) or when appending would take
 * it past twice max_bytes of records (it then holds the steps kept in memory, at most
 * max_bytes). At start-up its steps past the disk copy's serial are applied to the copy
 * (p53_journal_roll_forward), then it is read back up to the served serial, so a restart
 * serves the newest version and IXFR from the serials it served before (p53_journal_load).
 *
 * File layout (integers big-endian):
 *   header  "POP53JNL" | u32 version (1) | u8 apex length | apex (wire, lower case)
 *   step    "STEP" | u32 from | u32 to | u32 del count | u32 add count | u32 del bytes |
 *           u32 add bytes | del records | add records | u32 CRC-32C of the step before it
 * A last step cut short or not checksummed right (a crash while it was appended) is dropped:
 * the steps before it are kept and the file truncated to them, with the reason logged. Any
 * other step whose checksum, sizes, records or serials do not hold makes the whole file
 * ignored, with the reason logged (the zone is then served AXFR to older serials until new
 * differences arrive).
 *
 * Journal: control thread only. Steps: p53_jstep_get/put from any thread. Files: whichever
 * thread, one writer per zone at a time (the disk job, xfr.c).
 */
#ifndef P53_XFR_JOURNAL_H
#define P53_XFR_JOURNAL_H

#include <stdbool.h>
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
	uint64_t epoch;                 /* +1 at each clear: a chain that restarts (the file is
					   then rewritten, not appended to) */
};

/*
 * The journal file as its writer left it. The control thread keeps it between disk jobs (one
 * at a time per zone) and hands it to the next one, which appends when it can.
 */
struct p53_jfile {
	int known;                      /* the fields below describe the file; 0: rewrite it */
	uint64_t epoch;                 /* of the journal (p53_journal.epoch) its steps are from */
	uint32_t n;                     /* steps in the file; 0: no file */
	uint32_t first, last;           /* the first step's `from`, the last one's `to` */
	uint64_t bytes;                 /* del.len + add.len over its steps */
	uint64_t size;                  /* the file's length */
};

enum p53_jstore_how {
	P53_JSTORE_NONE = 0,            /* nothing new */
	P53_JSTORE_APPEND,              /* the new steps appended */
	P53_JSTORE_REWRITE,             /* written whole (compacted, or the chain was reset) */
	P53_JSTORE_REMOVE,              /* no steps: the file removed */
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

/**
 * Write steps[0..n) as the journal file at `path` for zone `apex`, atomically: a temporary
 * file in the same directory, fsync'd, renamed over the old one. No steps: the file is removed.
 * @return 0, or -1 with err.
 */
int p53_journal_write(const char *path, const uint8_t *apex, size_t apex_len,
		      struct p53_jstep *const *steps, size_t n, char *err, size_t errlen);

/**
 * Bring the journal file at `path` to steps[0..n) (the journal of `epoch`, as served now):
 * append the steps after the file's last one when *f says the file is the same chain (same
 * epoch, its last serial one of the steps' `from`, its length as left) and the file stays
 * within 2 * max_bytes of records; otherwise rewrite it whole (p53_journal_write). *f is
 * updated to what the file holds (known = 0 after a failure: the next call rewrites).
 * @param written  if not NULL, the bytes written to the file (appended, or the new file)
 * @return a p53_jstore_how, or -1 with err.
 */
int p53_journal_store(const char *path, const uint8_t *apex, size_t apex_len,
		      struct p53_jstep *const *steps, size_t n, uint64_t epoch, uint64_t max_bytes,
		      struct p53_jfile *f, uint64_t *written, char *err, size_t errlen);

/**
 * What p53_journal_store would do with these arguments (no I/O): a p53_jstore_how; for
 * P53_JSTORE_APPEND, *first (if not NULL) is the first step it appends. A disk job asks this
 * first: a journal that is rewritten or removed no longer carries the steps after the disk
 * copy's serial, so the copy is written first (docs/ARCHITECTURE.md, the lazy disk copy).
 */
int p53_journal_plan(const struct p53_jfile *f, struct p53_jstep *const *steps, size_t n,
		     uint64_t epoch, uint64_t max_bytes, size_t *first);

/**
 * Whether a journal file holding steps[0..n) keeps the lazy disk copy's invariant for a copy
 * at serial `copy` (docs/ARCHITECTURE.md): one of the steps starts at `copy`, or the last one
 * ends at it. A rewrite of the file that holds it needs no copy written first (the first
 * journal after an AXFR, a compaction that keeps the copy's step); no steps: false.
 */
bool p53_journal_holds(struct p53_jstep *const *steps, size_t n, uint32_t copy);

/**
 * Read the journal file at `path` into j (cleared first): the steps up to the one that ends at
 * `serial` (the disk copy's; later ones were written before a newer copy that never made it),
 * then the oldest dropped until it holds at most max_bytes. A torn last step, and steps past
 * `serial`, are cut from the file (truncated), so it can be appended to again.
 * @param f  if not NULL, set to what the file holds after that (known = 0 when ignored)
 * @return 1 no file, 0 loaded (j->n steps; err is "" or says what was cut), -1 ignored with
 *         the reason in err (j empty).
 */
int p53_journal_load(struct p53_journal *j, const char *path, const uint8_t *apex,
		     size_t apex_len, uint32_t serial, uint64_t max_bytes, struct p53_jfile *f,
		     char *err, size_t errlen);

/**
 * Every good step of the journal file at `path` into j (cleared first), whatever serial they
 * start from; a torn last step is left out (err says so), the file is not changed.
 * @return 1 no file (or no step), 0 read, -1 unusable with the reason in err.
 */
int p53_journal_read(struct p53_journal *j, const char *path, const uint8_t *apex,
		     size_t apex_len, char *err, size_t errlen);

/**
 * Start-up with a lazy disk copy (xfr.copy_sync_s): the journal file of the disk copy `copy`
 * runs past the copy's serial when the copy was not rewritten since those steps. Then the
 * copy is read into `rrs` and the steps after its serial applied to it (the copy's file is
 * read only when there is something to apply); *serial is set to the serial reached.
 * @return the steps applied (0: no journal, or it ends at the copy's serial: rrs empty, serve
 *         the copy as it is), or -1 when the journal is unusable, does not lead from the
 *         copy's serial or does not apply (rrs empty, the reason in err).
 */
int p53_journal_roll_forward(const char *copy, const char *zone, const uint8_t *apex,
			     size_t apex_len, struct p53_rrs *rrs, uint32_t *serial, char *err,
			     size_t errlen);

/** The journal file of the disk copy at `copy`: malloc'd "<copy>.journal", or NULL. */
char *p53_journal_path(const char *copy);

/** CRC-32C (Castagnoli) of n bytes, continuing from crc (0 to start). */
uint32_t p53_crc32c(uint32_t crc, const void *p, size_t n);

void p53_jstep_get(struct p53_jstep *s);
void p53_jstep_put(struct p53_jstep *s);

#endif /* P53_XFR_JOURNAL_H */
