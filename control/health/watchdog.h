/*
 * systemd notification (Type=notify): READY=1 once pop53d serves, WATCHDOG=1 from the control
 * loop (so a hung control thread is restarted by systemd after WatchdogSec=), STOPPING=1 when
 * the orderly stop begins. Harmless without systemd: sd_notify does nothing when
 * NOTIFY_SOCKET is unset. Control thread (and main, for READY).
 */
#ifndef P53_HEALTH_WATCHDOG_H
#define P53_HEALTH_WATCHDOG_H

#include <stdint.h>

struct p53_watchdog {
	uint64_t every_ms;      /* ping interval (half of WatchdogSec), 0 when not asked */
	uint64_t next_ms;
	uint64_t pings;
};

/** Read WATCHDOG_USEC (sd_watchdog_enabled). */
void p53_watchdog_init(struct p53_watchdog *w);

void p53_watchdog_ready(void);

/** Call every control-loop iteration; pings when due. */
void p53_watchdog_tick(struct p53_watchdog *w, uint64_t now_ms);

void p53_watchdog_stopping(void);

#endif /* P53_HEALTH_WATCHDOG_H */
