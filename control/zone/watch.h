/*
 * Zone-file watching (server.watch_zones): inotify on the directories of the zone files and
 * of every file they $INCLUDE, so an rsync that writes a temp file and renames it over any of
 * them is seen; a burst of events becomes one reload after server.watch_debounce_ms of quiet.
 * Control thread only; the state lives in struct p53_daemon.
 */
#ifndef P53_WATCH_H
#define P53_WATCH_H

#include <stddef.h>
#include <stdint.h>

/* A watched file: the inotify watch of its directory and its name there. */
struct p53_watch_file {
	int wd;
	char *name;
};

struct p53_watch {
	int fd;                         /* inotify, -1 if zone watching is off */
	uint64_t due_ms;                /* when the debounced reload is due; 0: nothing pending */
	unsigned int debounce_ms;
	struct p53_watch_file *files;
	size_t n_files;
};

/** Not watching yet (fd -1). */
void p53_watch_init(struct p53_watch *w);

/**
 * Watch these files (zone files and their $INCLUDEs, as the last compile read them),
 * replacing whatever was watched before. The inotify instance is kept when already open, so
 * events queued meanwhile (a file replaced during a reload) are still read; directories no
 * file is in any more stop being watched.
 * @return 0, or -1 (logged; watching is then off).
 */
int p53_watch_set(struct p53_watch *w, char *const *files, size_t n, unsigned int debounce_ms);

/** Drain inotify events; return 1 when a debounced zone reload is due now. */
int p53_watch_due(struct p53_watch *w);

/** Stop watching and free the list. */
void p53_watch_close(struct p53_watch *w);

#endif /* P53_WATCH_H */
