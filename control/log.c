/* Control-thread logging; see log.h. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "control/log.h"

static enum p53_log_level max_level = P53_LOG_INFO;

void p53_log_set_level(enum p53_log_level level)
{
	max_level = level;
}

void p53_log(enum p53_log_level level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	char line[1024];
	char stamp[32];
	struct timespec ts;
	struct tm tm;
	va_list ap;

	if (level > max_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One fprintf per line keeps lines whole when several threads log. */
	fprintf(stderr, "%s.%03ldZ pop53d[%s]: %s\n", stamp, ts.tv_nsec / 1000000, names[level], line);
}

void p53_log_warn_cb(void *arg, const char *msg)
{
	(void)arg;
	p53_log(P53_LOG_WARN, "%s", msg);
}
