/* Child processes run asynchronously; see proc.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control/health/proc.h"

extern char **environ;

uint64_t p53_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void p53_proc_init(struct p53_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->out_fd = -1;
}

int p53_proc_start(struct p53_proc *p, char *const argv[], uint64_t timeout_ms, uint64_t now_ms,
		   char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	int pfd[2], rc;
	pid_t pid;

	p53_proc_kill(p);
	p->status = -1;
	p->timed_out = false;
	p->out_len = 0;
	p->out[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) != 0) {
		snprintf(err, errlen, "%s: pipe: %s", argv[0], strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	/* Nothing of ours past stderr: above all not the tun devices that carry the routes. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGHUP);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				 POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_USEVFORK);
	rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(pfd[1]);
	if (rc != 0) {
		close(pfd[0]);
		snprintf(err, errlen, "%s: cannot run: %s", argv[0], strerror(rc));
		return -1;
	}
	p->pid = pid;
	p->out_fd = pfd[0];
	p->deadline_ms = now_ms + timeout_ms;
	return 0;
}

static void drain(struct p53_proc *p)
{
	char buf[512];

	while (p->out_fd >= 0) {
		ssize_t n = read(p->out_fd, buf, sizeof(buf));
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				close(p->out_fd);
				p->out_fd = -1;
			}
			return;
		}
		size_t room = sizeof(p->out) - 1 - p->out_len;
		size_t k = (size_t)n < room ? (size_t)n : room;
		memcpy(p->out + p->out_len, buf, k);
		p->out_len += k;
		p->out[p->out_len] = '\0';
	}
}

static void finished(struct p53_proc *p, int wstatus)
{
	drain(p);
	if (p->out_fd >= 0)
		close(p->out_fd);
	p->out_fd = -1;
	p->pid = 0;
	p->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
}

int p53_proc_poll(struct p53_proc *p, uint64_t now_ms)
{
	int ws;

	if (p->pid <= 0)
		return 0;
	drain(p);
	pid_t r = waitpid(p->pid, &ws, WNOHANG);
	if (r == p->pid) {
		finished(p, ws);
		return 1;
	}
	if (r < 0 && errno == ECHILD) {
		/* Reaped by someone else (a SIGCHLD=SIG_IGN parent would do that): the result is
		 * lost, call it a failure rather than wait for ever. */
		finished(p, 0x7f00);
		p->status = -1;
		return 1;
	}
	if (now_ms >= p->deadline_ms) {
		p->timed_out = true;
		p53_proc_kill(p);
		return 1;
	}
	return 0;
}

void p53_proc_kill(struct p53_proc *p)
{
	int ws;

	if (p->pid > 0) {
		kill(-p->pid, SIGKILL);
		/* SIGKILL cannot be caught: the wait is short. */
		while (waitpid(p->pid, &ws, 0) < 0 && errno == EINTR)
			;
		finished(p, ws);
		p->status = -1;
	}
	if (p->out_fd >= 0) {
		close(p->out_fd);
		p->out_fd = -1;
	}
}

void p53_proc_describe(const struct p53_proc *p, char *buf, size_t len)
{
	size_t line = strcspn(p->out, "\n");

	if (p->timed_out)
		snprintf(buf, len, "timed out, killed");
	else if (p->status < 0)
		snprintf(buf, len, "killed by a signal%s%.*s", line ? ": " : "", (int)line, p->out);
	else
		snprintf(buf, len, "exit %d%s%.*s", p->status, line ? ": " : "", (int)line, p->out);
}
