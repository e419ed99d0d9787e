/*
 * The running daemon as the control thread sees it: config, port, data plane, and the
 * operations the control socket, signals and the zone watcher trigger. Control thread only.
 */
#ifndef P53_DAEMON_H
#define P53_DAEMON_H

#include <time.h>

#include <rte_ring.h>

#include "control/conf/config.h"
#include "control/publish.h"
#include "control/net/port.h"

struct p53_daemon {
	struct p53_config cfg;          /* the config in force */
	struct p53_port port;
	struct p53_dataplane dp;
	time_t started;
	int ctl_fd;                     /* listening control socket, -1 if none */
	int watch_fd;                   /* inotify, -1 if zone watching is off */
	void *metrics;                  /* Prometheus endpoint, NULL if off */
	struct rte_ring *notify_ring;   /* NOTIFY events from the workers (dataplane/notify.h) */
};

/**
 * Take the NOTIFY events the workers queued and log them (rate-limited). The zone-transfer
 * work turns them into SOA checks and IXFR; until then they are counted and answered
 * NOTAUTH by the workers.
 */
void p53_daemon_notify_drain(struct p53_daemon *d);

/**
 * Compile the zones of `cfg` into a new image.
 * @return malloc'd image, or NULL with err = "file:line: reason".
 */
void *p53_daemon_compile(const struct p53_config *cfg, size_t *len, char *err, size_t errlen);

/** What a successful p53_daemon_check() found. */
struct p53_check_result {
	int zones;
	uint32_t records;
	size_t image_bytes;
};

/**
 * Load a config file and compile its zones exactly as a start or reload would, then throw the
 * result away (`pop53d --check-config`, `pop53ctl config check`).
 * @return 0, or -1 with err = "file:line: reason".
 */
int p53_daemon_check(const char *path, struct p53_check_result *res, char *err, size_t errlen);

/**
 * Reload: zones only (`config` = 0) or the config file and zones (`config` = 1). With
 * `zone` set, that zone must be in the config (all zones are recompiled: the image is one
 * unit). Transactional: any error leaves the running replicas and config untouched.
 *
 * @param note  on success, what was not applied (dataplane.* changes need a restart), or ""
 * @return 0 or -1 with err set.
 */
int p53_daemon_reload(struct p53_daemon *d, int config, const char *zone, char *err,
		      size_t errlen, char *note, size_t notelen);

#endif /* P53_DAEMON_H */
