/*
 * Metrics for scrapers: a Prometheus text endpoint (libmicrohttpd, GET /metrics on
 * metrics.listen, default 127.0.0.1:9153) and the same counters as DPDK telemetry commands
 * (/pop53/stats, /pop53/workers) for dpdk-telemetry.py.
 *
 * The HTTP server runs inside the control thread's loop (MHD external polling, served every
 * control tick), so it reads the zone table without racing a reload. Telemetry callbacks run
 * on DPDK's telemetry thread and read only counters (plain 64-bit loads, racy by design).
 */
#ifndef P53_METRICS_H
#define P53_METRICS_H

#include <stddef.h>

struct p53_daemon;

/** Start the Prometheus endpoint. @return 0, or -1 with err set. */
int p53_metrics_start(struct p53_daemon *d, char *err, size_t errlen);

/** Serve pending HTTP requests without blocking; called from the control loop. */
void p53_metrics_poll(struct p53_daemon *d);

void p53_metrics_stop(struct p53_daemon *d);

/** Register the telemetry commands (once per process). */
void p53_telemetry_register(struct p53_daemon *d);

/** Make the telemetry commands answer "unavailable" from now on (before freeing workers). */
void p53_telemetry_unregister(void);

/** The Prometheus exposition text (malloc'd), also used by the tests. */
char *p53_metrics_text(struct p53_daemon *d);

#endif /* P53_METRICS_H */
