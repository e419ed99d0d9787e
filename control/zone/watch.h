/*
 * Zone-file watching (server.watch_zones): inotify on the directories of the zone files, so
 * an rsync that writes a temp file and renames it over the zone is seen; a burst of events
 * becomes one reload after server.watch_debounce_ms of quiet. Control thread only.
 */
#ifndef P53_WATCH_H
#define P53_WATCH_H

struct p53_daemon;

/** Start watching the zone files of d->cfg. @return 0, or -1 (logged). */
int p53_watch_open(struct p53_daemon *d);

/** Drain inotify events; return 1 when a debounced zone reload is due now. */
int p53_watch_due(struct p53_daemon *d);

void p53_watch_close(struct p53_daemon *d);

#endif /* P53_WATCH_H */
