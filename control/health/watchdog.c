/* systemd notification and watchdog; see watchdog.h. */
#include <systemd/sd-daemon.h>

#include "control/health/watchdog.h"
#include "control/log.h"

void p53_watchdog_init(struct p53_watchdog *w)
{
	uint64_t usec = 0;

	w->every_ms = 0;
	w->next_ms = 0;
	w->pings = 0;
	/* 0 = unset the variables: children (health commands) must not ping for us. */
	if (sd_watchdog_enabled(1, &usec) > 0 && usec > 0) {
		w->every_ms = usec / 2000;
		if (w->every_ms == 0)
			w->every_ms = 1;
		p53_info("systemd watchdog: %llu ms, pinged every %llu ms from the control loop",
			 (unsigned long long)(usec / 1000), (unsigned long long)w->every_ms);
	}
}

void p53_watchdog_ready(void)
{
	sd_notify(0, "READY=1\nSTATUS=serving");
}

void p53_watchdog_tick(struct p53_watchdog *w, uint64_t now_ms)
{
	if (w->every_ms == 0 || now_ms < w->next_ms)
		return;
	sd_notify(0, "WATCHDOG=1");
	w->pings++;
	w->next_ms = now_ms + w->every_ms;
}

void p53_watchdog_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: withdrawing the anycast routes");
}
