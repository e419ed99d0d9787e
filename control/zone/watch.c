/* Zone-file watching; see watch.h. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "control/daemon.h"
#include "control/log.h"
#include "control/zone/watch.h"

static uint64_t due_ms;  /* 0: nothing pending */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Is `name` in `dir` one of our zone files? */
static int is_zone_file(const struct p53_daemon *d, const char *name)
{
	for (int i = 0; i < d->cfg.n_zones; i++) {
		const char *f = d->cfg.zones[i].file;
		const char *base = strrchr(f, '/');
		if (strcmp(base != NULL ? base + 1 : f, name) == 0)
			return 1;
	}
	return 0;
}

int p53_watch_open(struct p53_daemon *d)
{
	d->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d->watch_fd < 0) {
		p53_err("zone watching: inotify: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < d->cfg.n_zones; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s", d->cfg.zones[i].file);
		const char *dir = dirname(path);
		/* Directories, not files: rsync and editors replace the file by a rename. */
		if (inotify_add_watch(d->watch_fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0) {
			p53_err("zone watching: %s: %s", dir, strerror(errno));
			close(d->watch_fd);
			d->watch_fd = -1;
			return -1;
		}
	}
	p53_info("watching %d zone file(s), reload after %u ms of quiet", d->cfg.n_zones,
		 d->cfg.watch_debounce_ms);
	return 0;
}

int p53_watch_due(struct p53_daemon *d)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	if (d->watch_fd < 0)
		return 0;
	for (;;) {
		ssize_t n = read(d->watch_fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			if (ev->len > 0 && is_zone_file(d, ev->name)) {
				due_ms = now_ms() + d->cfg.watch_debounce_ms;
				p53_info("zone file %s changed; reload in %u ms unless it changes again",
					 ev->name, d->cfg.watch_debounce_ms);
			}
			p += sizeof(*ev) + ev->len;
		}
	}
	if (due_ms != 0 && now_ms() >= due_ms) {
		due_ms = 0;
		return 1;
	}
	return 0;
}

void p53_watch_close(struct p53_daemon *d)
{
	if (d->watch_fd >= 0)
		close(d->watch_fd);
	d->watch_fd = -1;
	due_ms = 0;
}
