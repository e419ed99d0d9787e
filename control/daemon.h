/*
 * The running daemon as the control thread sees it: the config in force, the port, the data
 * plane and every piece of process state the control thread keeps (control socket clients,
 * counter baseline, zone watching, metrics endpoint, NOTIFY events). One struct, owned by
 * pop53d's main(), so no module hides state in file statics. Control thread only, except
 * where a field says otherwise.
 */
#ifndef P53_DAEMON_H
#define P53_DAEMON_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <rte_ring.h>

#include "control/abuse/guard_pub.h"
#include "control/steer/steer_pub.h"
#include "control/conf/config.h"
#include "control/exc/exc.h"
#include "control/health/health.h"
#include "control/health/watchdog.h"
#include "control/net/port.h"
#include "control/ops/ctl.h"
#include "control/ops/counters.h"
#include "control/publish.h"
#include "control/tcp/tcp.h"
#include "control/xfr/serve.h"
#include "control/xfr/xfr_stats.h"
#include "control/zone/watch.h"
#include "control/zone/zone_files.h"

struct p53_xfr;

struct p53_daemon {
	struct p53_config cfg;          /* the config in force */
	struct p53_port port;
	struct p53_dataplane dp;
	struct p53_guard_pub guard;     /* cookies and RRL: what the workers check (control/abuse/) */
	struct p53_steer_pub steer;     /* steering table and target health (control/steer/) */
	time_t started;
	struct p53_ctl ctl;             /* control socket and its clients */
	struct p53_watch watch;         /* zone-file watching (server.watch_zones) */
	struct p53_tcp tcp;             /* DNS over TCP: its threads and counters */
	struct p53_xfr_serve serve;     /* who may transfer what from us (TCP threads read it) */
	struct p53_exc exc;             /* dpdk mode: the exception interface and its thread */
	void *metrics;                  /* Prometheus endpoint, NULL if off */
	struct rte_ring *notify_ring;   /* NOTIFY events from the workers (dataplane/notify.h) */
	struct p53_xfr *xfr;            /* secondary zones (control/xfr/xfr.h) */
	uint64_t notify_seen;           /* NOTIFY events taken from the ring */
	struct p53_xfr_stats xfr_stats; /* NOTIFYs we send (control/xfr/notify_out.c); the
					   secondary side's totals are in xfr (p53_xfr_totals:
					   main.c stops the stats renderers before freeing it) */
	uint64_t hb_warned_tsc;         /* last "no heartbeat" warning */
	/* What the last good reload did to the image: "patched: ...", "unchanged: ...",
	 * "compiled in full: why" (control/reload.c: a zones-only reload patches the zones
	 * whose files changed). */
	char reload_image[640];
	/* The files each primary zone's last compile read, with their identity (what a
	 * zones-only reload compares), and the config file's text d->cfg was read from (NULL
	 * when unsure: the next config reload compiles every zone); a config reload whose edit
	 * reaches nothing the image holds (control/conf/config_diff.h) is zones-only too.
	 * Control thread. */
	struct p53_zone_files_set zfiles;
	char *cfg_text;
	size_t cfg_text_len;
	int test_hooks;                 /* POP53_TEST_HOOKS=1 at start: `pop53ctl test ...` works */
	struct p53_health health;       /* checks, state machine, announcers (control/health/) */
	struct p53_watchdog watchdog;   /* systemd notify/watchdog */

	/* `stats --reset` baseline. The telemetry thread reads it too, hence the lock; the
	 * workers never see it (they own their counters and nobody else writes them). */
	pthread_mutex_t stats_lock;
	struct p53_totals stats_base;
};

/** Zero a daemon struct and set the fields that are not zero when idle (fds to -1). */
void p53_daemon_init(struct p53_daemon *d);

/**
 * Take the NOTIFY events the workers queued: those the worker answered (NOTAUTH, not a
 * secondary zone's apex) are logged, rate-limited; the others go to the zone-transfer state
 * (p53_xfr_notify), which checks, answers and refreshes.
 */
void p53_daemon_notify_drain(struct p53_daemon *d);

/** Current counters minus the last reset (any thread but the workers). */
void p53_daemon_totals(struct p53_daemon *d, struct p53_totals *out);

/** The port's counters (rte_eth_stats); out->valid = 0 when the port has none. */
void p53_daemon_port_totals(const struct p53_daemon *d, struct p53_port_totals *out);

/** Make the current counters the new zero (control thread). */
void p53_daemon_stats_reset(struct p53_daemon *d);

/* p53_daemon_reload()'s flags. */
#define P53_RELOAD_CONFIG 1     /* read the config file again */
#define P53_RELOAD_FULL 2       /* compile every zone, changed or not (re-signing,
				   `pop53ctl reload --full`) */

/**
 * Reload: zones only (`flags` 0), or the config file and zones (P53_RELOAD_CONFIG). Without
 * `zone`, and with the config file as it was or changed only in runtime settings
 * (control/conf/config_diff.h; the signing keys it loads the same), the runtime settings are
 * applied and only the primary zones whose files changed since their compile
 * (control/zone/zone_files.h) are compiled, each alone, and patched into the running image one
 * after the other; the first the patch declines, a config change the image depends on or
 * P53_RELOAD_FULL compiles every zone. With `zone` set (zones only), that
 * zone must be in the config and is patched alone whether its files changed or not.
 * Transactional: any error leaves the running replicas and config untouched; d->reload_image
 * says what the image got. (control/reload.c)
 *
 * @param note  on success, what was not applied (dataplane.* changes need a restart), or ""
 * @return 0 or -1 with err set.
 */
int p53_daemon_reload(struct p53_daemon *d, int flags, const char *zone, char *err,
		      size_t errlen, char *note, size_t notelen);

/**
 * Before a compile of every zone: the identity of the primary zones' files (theirs and those
 * their last compile read) into `before` (control/zone/zone_files.h p53_zone_files_before).
 */
void p53_daemon_zones_before(struct p53_daemon *d, const struct p53_config *cfg,
			     struct p53_zone_files *before);

/**
 * After the start's compile: what each primary zone's compile read (`files`, as
 * p53_xfr_compile gave them), identified as of `since` (p53_file_clock_ns() before it) or by
 * `before` (p53_daemon_zones_before, taken before it).
 */
void p53_daemon_zones_compiled(struct p53_daemon *d, char *const *files, size_t n, int64_t since,
			       const struct p53_zone_files *before);

#endif /* P53_DAEMON_H */
