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

#include "control/log.h"
#include "control/zone/watch.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void p53_watch_init(struct p53_watch *w)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}

/* Is watch descriptor wd among the n files? */
static int wd_used(const struct p53_watch_file *f, size_t n, int wd)
{
	for (size_t i = 0; i < n; i++)
		if (f[i].wd == wd)
			return 1;
	return 0;
}

static void files_free(struct p53_watch_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

int p53_watch_set(struct p53_watch *w, char *const *files, size_t n, unsigned int debounce_ms)
{
	struct p53_watch_file *nf = calloc(n ? n : 1, sizeof(*nf));
	size_t nn = 0;

	w->debounce_ms = debounce_ms;
	/* The inotify instance stays across reloads: an event queued while a reload ran (a file
	 * replaced during its compile) is still read, and its reload still comes. */
	if (w->fd < 0)
		w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0 || nf == NULL) {
		p53_err("zone watching: %s", w->fd < 0 ? strerror(errno) : "out of memory");
		free(nf);
		p53_watch_close(w);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX], base[PATH_MAX];
		snprintf(path, sizeof(path), "%s", files[i]);
		snprintf(base, sizeof(base), "%s", files[i]);
		const char *dir = dirname(path);
		/* Directories, not files: rsync and editors replace the file by a rename. A
		 * directory watched twice gives the same wd. */
		int wd = inotify_add_watch(w->fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE);
		nf[i].name = strdup(basename(base));
		nn = i + 1;
		if (wd < 0 || nf[i].name == NULL) {
			p53_err("zone watching: %s: %s", dir, wd < 0 ? strerror(errno) : "out of memory");
			files_free(nf, nn);
			p53_watch_close(w);
			return -1;
		}
		nf[i].wd = wd;
	}
	/* Directories nothing is read from any more are no longer watched. */
	for (size_t i = 0; i < w->n_files; i++)
		if (!wd_used(nf, nn, w->files[i].wd) && !wd_used(w->files, i, w->files[i].wd))
			inotify_rm_watch(w->fd, w->files[i].wd);
	files_free(w->files, w->n_files);
	w->files = nf;
	w->n_files = nn;
	p53_info("watching %zu zone file(s), reload after %u ms of quiet (the files the config "
		 "names and their $INCLUDEs)", n, debounce_ms);
	return 0;
}

static int watched(const struct p53_watch *w, int wd, const char *name)
{
	for (size_t i = 0; i < w->n_files; i++)
		if (w->files[i].wd == wd && strcmp(w->files[i].name, name) == 0)
			return 1;
	return 0;
}

int p53_watch_due(struct p53_watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	if (w->fd < 0)
		return 0;
	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			if (ev->len > 0 && watched(w, ev->wd, ev->name)) {
				w->due_ms = now_ms() + w->debounce_ms;
				p53_info("zone file %s changed; reload in %u ms unless it changes again",
					 ev->name, w->debounce_ms);
			}
			p += sizeof(*ev) + ev->len;
		}
	}
	if (w->due_ms != 0 && now_ms() >= w->due_ms) {
		w->due_ms = 0;
		return 1;
	}
	return 0;
}

void p53_watch_close(struct p53_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	files_free(w->files, w->n_files);
	w->files = NULL;
	w->n_files = 0;
	w->fd = -1;
	w->due_ms = 0;
}
