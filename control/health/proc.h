/*
 * Child processes that must never block the control loop: the external health check, the
 * FRR check, birdc and the announce hook. Started with posix_spawn (no fork of a process with
 * gigabytes of hugepage mappings), in their own process group, stdin from /dev/null, stdout
 * and stderr into a pipe we read without blocking, every other descriptor closed (a child
 * must never hold the anycast tun device open past pop53d). Reaped with waitpid(WNOHANG)
 * every tick; killed (the whole group) when the timeout passes. Control thread only.
 */
#ifndef P53_HEALTH_PROC_H
#define P53_HEALTH_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define P53_PROC_OUT_MAX 512

struct p53_proc {
	pid_t pid;                      /* 0 when nothing runs */
	int out_fd;                     /* read end of the child's stdout/stderr, or -1 */
	uint64_t deadline_ms;
	bool timed_out;
	int status;                     /* exit code once finished; -1 killed or failed to start */
	char out[P53_PROC_OUT_MAX];     /* first bytes of its output */
	size_t out_len;
};

void p53_proc_init(struct p53_proc *p);

/**
 * Start argv[0] (searched in PATH) with `argv`.
 * @return 0, or -1 with err set (nothing runs: p->status = -1).
 */
int p53_proc_start(struct p53_proc *p, char *const argv[], uint64_t timeout_ms, uint64_t now_ms,
		   char *err, size_t errlen);

/**
 * Read its output, reap it if it exited, kill it if the deadline passed.
 * @return 1 when it has finished (p->status, p->timed_out, p->out set), 0 while it runs or
 *         when nothing was started.
 */
int p53_proc_poll(struct p53_proc *p, uint64_t now_ms);

/** Is a child running? */
static inline bool p53_proc_running(const struct p53_proc *p)
{
	return p->pid > 0;
}

/** Kill (SIGKILL to the group) and reap a running child; safe when none runs. */
void p53_proc_kill(struct p53_proc *p);

/** One line saying how it ended: "exit 1: <first output line>", "timed out after N ms"... */
void p53_proc_describe(const struct p53_proc *p, char *buf, size_t len);

/** Milliseconds on CLOCK_MONOTONIC: the control thread's clock for health and anycast. */
uint64_t p53_mono_ms(void);

#endif /* P53_HEALTH_PROC_H */
