/*
 * Which primary zones' files changed since they were last compiled, so that a zones-only
 * reload (`pop53ctl reload` with the config unchanged, `zone reload`, SIGHUP, zone-file
 * watching) compiles those zones alone (control/reload.c) and leaves the others as they are.
 *
 * Per zone, the identity of every file its last compile read (the zone file and its
 * $INCLUDEs): device, inode, size, mtime and ctime in ns, and a 64-bit hash of the bytes.
 * rsync replaces a file (new inode) and `rsync -t` keeps its mtime, maybe in the same second:
 * any stat difference only leads to reading the file again, and an equal hash means
 * unchanged (reading is far cheaper than compiling). The identity is taken before the compile
 * reads the file (p53_file_id_before: any later change gives another stat) and kept when the
 * stat after the compile is the same; a file without one (an $INCLUDE new to the zone) is
 * identified after the compile, and one whose ctime is not before the compile started may
 * have changed under it: it counts as changed until compiled again.
 * Control thread (and unit tests); no DPDK; allocates with malloc.
 */
#ifndef P53_ZONE_FILES_H
#define P53_ZONE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One file as a compile read it. */
struct p53_file_id {
	char *path;
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	uint64_t hash;
	bool known;             /* stat and hash taken, and the file did not change during the
				   compile: else it counts as changed */
};

/* The files one zone's last compile read. */
struct p53_zone_files {
	char *zone;             /* as the config names it (ends in '.') */
	struct p53_file_id *f;
	size_t n;
};

struct p53_zone_files_set {
	struct p53_zone_files *z;
	size_t n;
};

/** Now on the clock the kernel stamps ctimes with (CLOCK_REALTIME_COARSE), in ns. */
int64_t p53_file_clock_ns(void);

/**
 * 64-bit hash of a file's bytes (not cryptographic: it tells a changed file from the same
 * one). @return 0, or -1 (cannot open or read it).
 */
int p53_file_hash(const char *path, uint64_t *hash, uint64_t *size);

/**
 * Identify `path` before a compile reads it: stat, hash, stat. A ctime the coarse clock has
 * not passed yet (a change within its tick, or a multigrain kernel's finer stamp) is waited
 * out first (one tick, 1-10 ms), so that any change after the stat stamps another ctime.
 * Unreadable or changing: not known. @return 0, or -1 (out of memory).
 */
int p53_file_id_before(struct p53_file_id *id, const char *path);

/**
 * Identify `path` as compiled. `before`: its identity taken before the compile (or NULL):
 * kept when known and the file's stat is still the same. Else stat and hash; `since`:
 * p53_file_clock_ns() taken before the compile; a ctime from then on leaves the file unknown
 * (it may have changed under the compile). A file that cannot be read is unknown too.
 * @return 0, or -1 (out of memory).
 */
int p53_file_id_take(struct p53_file_id *id, const char *path, int64_t since,
		     const struct p53_file_id *before);

/**
 * Has the file changed since `id` was taken? Stat first; when it differs, the bytes are
 * hashed: equal hash and size is unchanged, and the new stat is kept (so the next check does
 * not read it again) when its ctime is before `now` (p53_file_clock_ns() taken before the
 * check). @return 1 changed (or unknown, unreadable, gone), 0 unchanged.
 */
int p53_file_id_changed(struct p53_file_id *id, int64_t now);

void p53_file_id_free(struct p53_file_id *id);

/** The zone's entry (name compared without case, with or without the final dot), or NULL. */
struct p53_zone_files *p53_zone_files_find(struct p53_zone_files_set *s, const char *zone);

/**
 * Has any file of the zone changed? 1 (`which` = the first changed file's path, or "" when
 * the zone has no entry), 0.
 */
int p53_zone_files_changed(struct p53_zone_files_set *s, const char *zone, int64_t now,
			   char *which, size_t whichlen);

/**
 * Before a compile: into `before` (zone NULL, appended to), p53_file_id_before of every file
 * `zone`'s entry names (every zone's when NULL) and of `own` (its file; may be NULL), each
 * path once. @return 0, or -1 (out of memory).
 */
int p53_zone_files_before(const struct p53_zone_files_set *s, const char *zone, const char *own,
			  struct p53_zone_files *before);

void p53_zone_files_free(struct p53_zone_files *z);

/**
 * Replace (or add) one zone's entry: the files its compile read; `before` (or NULL) from
 * p53_zone_files_before, taken before the compile.
 * @return 0, or -1 (out of memory: the zone's entry is then removed, so it counts as changed).
 */
int p53_zone_files_set_zone(struct p53_zone_files_set *s, const char *zone, char *const *files,
			    size_t n, int64_t since, const struct p53_zone_files *before);

/**
 * After a compile of every zone: rebuild the set from the files it read, in the order read.
 * `zones` and `zone_files` are the primary zones in the compile's order and their files; a
 * compile reads a zone's file, then its $INCLUDEs, before the next zone's, so every file
 * after a zone's own up to the next zone's is its include. Files before the first zone's
 * are nobody's. A zone whose file is not found has no entry (it counts as changed).
 * @return 0, or -1 (out of memory: the set is then empty).
 */
int p53_zone_files_set_all(struct p53_zone_files_set *s, const char *const *zones,
			   const char *const *zone_files, size_t nz, char *const *files,
			   size_t n_files, int64_t since, const struct p53_zone_files *before);

/**
 * Every file of every zone, each path once (zone-file watching: p53_watch_set), malloc'd
 * (p53_image_files_free). @return 0, or -1 (out of memory).
 */
int p53_zone_files_list(const struct p53_zone_files_set *s, char ***files, size_t *n);

void p53_zone_files_clear(struct p53_zone_files_set *s);

#endif /* P53_ZONE_FILES_H */
