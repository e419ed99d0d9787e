/*
 * The control socket: a Unix stream socket (default /run/pop53/control.sock, mode 0660,
 * optional group) where pop53ctl sends one request per connection.
 *
 * Framing, both ways: a 4-byte big-endian length, then that many bytes. A request is a JSON
 * array of strings (the command words, e.g. ["zone","reload","example.com"]); a reply is a
 * JSON object with "ok": true and the data, or "ok": false and "error". Requests over
 * P53_CTL_MAX_REQUEST bytes, bad JSON, or clients that stall get an error reply or are
 * dropped; the control thread never blocks on a client (non-blocking I/O, 2 s deadline) and
 * the workers never wait for it. Control thread only.
 */
#ifndef P53_CTL_H
#define P53_CTL_H

#include <stddef.h>
#include <stdint.h>

#define P53_CTL_MAX_REQUEST 4096
#define P53_CTL_MAX_REPLY (1u << 20)

struct p53_daemon;

/**
 * Create the listening socket. A stale socket file (nobody listening) is replaced; one with
 * a live listener is an error (another pop53d).
 * @return listening fd, or -1 with err set.
 */
int p53_ctl_listen(const char *path, const char *group, char *err, size_t errlen);

/** Serve the socket for up to `timeout_ms`: accept, read, dispatch, reply. */
void p53_ctl_poll(struct p53_daemon *d, int timeout_ms);

/** Close the clients and the socket, remove the socket file. */
void p53_ctl_close(struct p53_daemon *d);

/**
 * Run one command (the words of a request) and return the reply JSON (malloc'd text).
 * Exposed for the tests; the socket calls it.
 */
char *p53_ctl_dispatch(struct p53_daemon *d, const char *const *argv, int argc);

#endif /* P53_CTL_H */
