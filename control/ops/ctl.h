/*
 * The control socket: a Unix stream socket (default /run/pop53/control.sock, mode 0660,
 * optional group) where pop53ctl sends one request per connection.
 *
 * Framing, both ways: a 4-byte big-endian length, then that many bytes. A request is a JSON
 * array of strings (the command words, e.g. ["zone","reload","example.com"]); a reply is a
 * JSON object with "ok": true and the data, or "ok": false and "error". Requests over
 * P53_CTL_MAX_REQUEST bytes, bad JSON, or clients that stall get an error reply or are
 * dropped; the control thread never blocks on a client (non-blocking I/O, 2 s deadline) and
 * the workers never wait for it.
 *
 * Fairness: at most P53_CTL_MAX_CLIENTS connections, of which one uid may hold
 * P53_CTL_MAX_PER_UID (so one stuck script cannot lock everyone out); each uid has a request
 * budget (burst 40, 20 per second) and may not start a reload sooner after its last one than
 * that reload took. A refused request gets {"ok": false, "busy": true, "retry_ms": N} and
 * pop53ctl waits and retries. The daemon never opens a path a client names (`config check`
 * runs in pop53ctl itself). Control thread only.
 */
#ifndef P53_CTL_H
#define P53_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define P53_CTL_MAX_REQUEST 4096
#define P53_CTL_MAX_REPLY (1u << 20)
#define P53_CTL_MAX_CLIENTS 16          /* connections served at once */
#define P53_CTL_MAX_PER_UID 8           /* ...of which one user may hold */
#define P53_CTL_MAX_UIDS 16             /* users tracked for rate limiting */

struct p53_daemon;

/* One connection: one request, one reply. */
struct p53_ctl_client {
	int fd;
	uid_t uid;              /* peer's uid (SO_PEERCRED) */
	uint64_t deadline;      /* ms (CLOCK_MONOTONIC): dropped when still here then */
	uint8_t in[4 + P53_CTL_MAX_REQUEST];
	size_t in_len;
	char *out;              /* framed reply being written */
	size_t out_len, out_off;
};

/* Per-user budget: a token bucket for requests, and for reloads a duty cycle (a user may not
 * start a reload sooner after the last one finished than that one took). */
struct p53_ctl_user {
	uid_t uid;
	double tokens;
	uint64_t refilled_ms;
	uint64_t reload_allowed_ms;
};

struct p53_ctl {
	int fd;                                 /* listening socket, -1 if none */
	int wake_fd;                            /* an eventfd that ends the wait early (the transfer
						 * threads' results), -1 if none; drained here */
	struct p53_ctl_client clients[P53_CTL_MAX_CLIENTS];
	int n_clients;
	struct p53_ctl_user users[P53_CTL_MAX_UIDS];
	uint64_t refused_busy;                  /* connections refused: all slots or the user's taken */
	uint64_t refused_rate;                  /* requests refused by the rate limit */
};

/** Zero the state; no socket yet. */
void p53_ctl_init(struct p53_ctl *ctl);

/**
 * Create the listening socket. A stale socket file (nobody listening) is replaced; one with
 * a live listener is an error (another pop53d).
 * @return 0 (ctl->fd set), or -1 with err set.
 */
int p53_ctl_listen(struct p53_ctl *ctl, const char *path, const char *group, char *err,
		   size_t errlen);

/** Serve the socket for up to `timeout_ms`: accept, read, dispatch, reply. */
void p53_ctl_poll(struct p53_daemon *d, int timeout_ms);

/** Close the clients and the socket, remove the socket file. */
void p53_ctl_close(struct p53_daemon *d);

/**
 * Run one command (the words of a request) and return the reply JSON (malloc'd text).
 * Exposed for the tests; the socket calls it. Commands are in control/ops/commands.c.
 */
char *p53_ctl_dispatch(struct p53_daemon *d, const char *const *argv, int argc);

/** Is this request a reload (the expensive kind, limited by duty cycle)? */
int p53_ctl_is_reload(const char *const *argv, int argc);

#endif /* P53_CTL_H */
