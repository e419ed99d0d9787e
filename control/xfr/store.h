/*
 * The disk copy of a secondary zone (docs/ARCHITECTURE.md, zone transfers): a master file
 * (RFC 1035 §5), SOA first, written as a whole to a temporary file in the same directory,
 * fsync'd, then renamed over the old copy (and the directory fsync'd), so a crash leaves the
 * old copy or the new one, never half of one. It is lazy (xfr.copy_sync_s): written after a
 * whole-zone change, before its journal file (journal.h) is rewritten, copy_sync_s after the
 * first change it lacks, on `zone flush` and at a clean stop; in between the journal carries
 * the IXFR steps past its serial. A restart serves it with those steps applied
 * (p53_journal_roll_forward), or compiles it like any zone file when there are none. Its mtime
 * is the time a primary last confirmed what the copy and its journal hold (touched after
 * every SOA check that reached a primary and every journal-only disk job), so a restart knows
 * whether the copy has expired (SOA EXPIRE, RFC 1035 §4.3.5).
 *
 * Transfer threads (write, remove) and the control thread (reads at start-up and reload).
 */
#ifndef P53_XFR_STORE_H
#define P53_XFR_STORE_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "control/xfr/rrs.h"

/** Write `rrs` as the zone's master file at `path`, atomically. @return 0 or -1 with err. */
int p53_store_write(const char *path, const char *zone, const struct p53_rrs *rrs, char *err,
		    size_t errlen);

/**
 * A file replaced atomically: p53_store_tmp_open() opens PATH.tmp.XXXXXX for writing (1 MiB
 * buffer) and sets *tmp to its name; p53_store_tmp_commit() flushes it to disk, closes it,
 * renames it over PATH and fsyncs the directory, so a crash leaves the old file or the new one.
 * Commit and abort close F and free TMP in every case (TMP is unlinked unless the rename
 * happened). The disk copy and its journal file (journal.h) are written this way.
 */
FILE *p53_store_tmp_open(const char *path, char **tmp, char *err, size_t errlen);
int p53_store_tmp_commit(FILE *f, char *tmp, const char *path, char *err, size_t errlen);
void p53_store_tmp_abort(FILE *f, char *tmp);

/** Delete the copy and its journal file (journal.h); missing files are fine. @return 0 or -1 with err. */
int p53_store_remove(const char *path, char *err, size_t errlen);

/** Set the copy's mtime to now (a refresh succeeded); a missing file is fine. */
void p53_store_touch(const char *path);

/**
 * The first SOA of a master file, and the file's mtime: to tell at start-up whether a copy
 * has expired. @return 0, or -1 (missing, unreadable, no SOA).
 */
int p53_store_soa(const char *path, const char *zone, uint32_t *serial, uint32_t *expire,
		  time_t *mtime);

/** Read a master file into records (catalog zones). @return 0 or -1 with err. */
int p53_store_read(const char *path, const char *zone, struct p53_rrs *rrs, char *err,
		   size_t errlen);

#endif /* P53_XFR_STORE_H */
