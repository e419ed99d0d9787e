/* The control socket; see ctl.h. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "control/ops/ctl.h"
#include "control/daemon.h"
#include "control/log.h"

#define CLIENT_DEADLINE_MS 2000
#define MAX_ARGS 16
#define RATE_BURST 40.0         /* requests a user may send at once */
#define RATE_PER_S 20.0         /* ...and per second after that */
#define RETRY_BUSY_MS 200       /* what a refused connection is told to wait */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int mkdir_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

void p53_ctl_init(struct p53_ctl *ctl)
{
	memset(ctl, 0, sizeof(*ctl));
	ctl->fd = -1;
	ctl->wake_fd = -1;
}

int p53_ctl_listen(struct p53_ctl *ctl, const char *path, const char *group, char *err,
		   size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket %s: path too long", path);
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (mkdir_parent(path) != 0) {
		snprintf(err, errlen, "control socket %s: cannot create its directory: %s", path, strerror(errno));
		return -1;
	}
	/* Never remove what is not a socket: a config pointing at a real file is a mistake. */
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "control socket %s: exists and is not a socket", path);
		return -1;
	}
	/* A socket file with a live listener belongs to another pop53d; a dead one is stale. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		snprintf(err, errlen, "control socket %s: another process is listening on it", path);
		return -1;
	}
	if (fd >= 0)
		close(fd);
	unlink(path);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto fail;
	/* Created 0660 from the start: no window where anyone else can connect. */
	mode_t old = umask(0117);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc != 0)
		goto fail;
	if (group != NULL) {
		struct group *g = getgrnam(group);
		if (g == NULL) {
			snprintf(err, errlen, "control socket %s: unknown group '%s'", path, group);
			close(fd);
			unlink(path);
			return -1;
		}
		if (chown(path, (uid_t)-1, g->gr_gid) != 0)
			goto fail;
	}
	if (chmod(path, 0660) != 0 || listen(fd, SOMAXCONN) != 0)
		goto fail;
	ctl->fd = fd;
	return 0;
fail:
	snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

static void drop_client(struct p53_ctl *ctl, int i)
{
	close(ctl->clients[i].fd);
	free(ctl->clients[i].out);
	ctl->clients[i] = ctl->clients[--ctl->n_clients];
	memset(&ctl->clients[ctl->n_clients], 0, sizeof(ctl->clients[ctl->n_clients]));
}

/* The user's budget, created on first use; the least recently refilled entry is reused. */
static struct p53_ctl_user *user_of(struct p53_ctl *ctl, uid_t uid, uint64_t now)
{
	struct p53_ctl_user *oldest = &ctl->users[0];

	for (int i = 0; i < P53_CTL_MAX_UIDS; i++) {
		struct p53_ctl_user *u = &ctl->users[i];
		if (u->refilled_ms != 0 && u->uid == uid)
			return u;
		if (u->refilled_ms < oldest->refilled_ms)
			oldest = u;
	}
	memset(oldest, 0, sizeof(*oldest));
	oldest->uid = uid;
	oldest->tokens = RATE_BURST;
	oldest->refilled_ms = now;
	return oldest;
}

/* 0 when the user may run this request now, else how many ms to wait. */
static uint64_t admit(struct p53_ctl *ctl, uid_t uid, int reload, uint64_t now)
{
	struct p53_ctl_user *u = user_of(ctl, uid, now);

	u->tokens += (double)(now - u->refilled_ms) * RATE_PER_S / 1000.0;
	if (u->tokens > RATE_BURST)
		u->tokens = RATE_BURST;
	u->refilled_ms = now;
	if (reload && now < u->reload_allowed_ms)
		return u->reload_allowed_ms - now;
	if (u->tokens < 1.0)
		return (uint64_t)((1.0 - u->tokens) * 1000.0 / RATE_PER_S) + 1;
	u->tokens -= 1.0;
	return 0;
}

static char *busy_json(const char *why, uint64_t retry_ms)
{
	json_t *o = json_pack("{s:b, s:b, s:s, s:I}", "ok", 0, "busy", 1, "error", why,
			      "retry_ms", (json_int_t)retry_ms);
	char *s = json_dumps(o, JSON_COMPACT);

	json_decref(o);
	return s;
}

static void set_reply(struct p53_ctl_client *c, char *json)
{
	size_t len = json != NULL ? strlen(json) : 0;

	c->out = malloc(4 + len);
	if (c->out == NULL) {
		free(json);
		c->out_len = 0;
		return;
	}
	c->out[0] = (char)(len >> 24);
	c->out[1] = (char)(len >> 16);
	c->out[2] = (char)(len >> 8);
	c->out[3] = (char)len;
	if (len > 0)
		memcpy(c->out + 4, json, len);
	c->out_len = 4 + len;
	c->out_off = 0;
	free(json);
}

static char *error_json(const char *msg)
{
	json_t *o = json_pack("{s:b, s:s}", "ok", 0, "error", msg);
	char *s = json_dumps(o, JSON_COMPACT);

	json_decref(o);
	return s;
}

/* A complete request is in c->in: decode, run, queue the reply. */
static void handle(struct p53_daemon *d, struct p53_ctl_client *c, size_t len)
{
	json_error_t jerr;
	const char *argv[MAX_ARGS];
	json_t *req = json_loadb((const char *)c->in + 4, len, JSON_REJECT_DUPLICATES, &jerr);
	size_t argc;

	if (req == NULL || !json_is_array(req)) {
		set_reply(c, error_json("malformed request: expected a JSON array of strings"));
		goto out;
	}
	argc = json_array_size(req);
	if (argc == 0 || argc > MAX_ARGS) {
		set_reply(c, error_json("malformed request: 1 to 16 words expected"));
		goto out;
	}
	for (size_t i = 0; i < argc; i++) {
		json_t *a = json_array_get(req, i);
		if (!json_is_string(a)) {
			set_reply(c, error_json("malformed request: every word must be a string"));
			goto out;
		}
		argv[i] = json_string_value(a);
	}
	int reload = p53_ctl_is_reload(argv, (int)argc);
	uint64_t wait = admit(&d->ctl, c->uid, reload, now_ms());
	if (wait != 0) {
		d->ctl.refused_rate++;
		set_reply(c, busy_json(reload ? "busy: reloads from this user are limited to half the "
					 "control thread's time; retry later"
				       : "busy: request rate limit for this user; retry later", wait));
		goto out;
	}
	uint64_t t0 = now_ms();
	set_reply(c, p53_ctl_dispatch(d, argv, (int)argc));
	if (reload) {
		/* Duty cycle: the next reload of this user waits as long as this one took. */
		uint64_t t1 = now_ms();
		user_of(&d->ctl, c->uid, t1)->reload_allowed_ms = t1 + (t1 - t0);
	}
out:
	json_decref(req);
}

/* Read what is there; returns -1 when the client is to be dropped. */
static int readable(struct p53_daemon *d, struct p53_ctl_client *c)
{
	for (;;) {
		size_t want;
		if (c->in_len < 4) {
			want = 4 - c->in_len;
		} else {
			uint32_t len = (uint32_t)c->in[0] << 24 | (uint32_t)c->in[1] << 16 |
				       (uint32_t)c->in[2] << 8 | c->in[3];
			if (len > P53_CTL_MAX_REQUEST) {
				set_reply(c, error_json("request too large"));
				shutdown(c->fd, SHUT_RD);
				return 0;
			}
			if (c->in_len == 4 + len) {
				handle(d, c, len);
				return 0;
			}
			want = 4 + len - c->in_len;
		}
		ssize_t n = read(c->fd, c->in + c->in_len, want);
		if (n > 0) {
			c->in_len += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		return -1; /* EOF before a whole request, or an error */
	}
}

static int writable(struct p53_ctl_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		return -1;
	}
	return -1; /* all sent: one request per connection */
}

/* Refuse a connection with one busy frame (best effort, never blocking), then close it. */
static void refuse(int fd, const char *why)
{
	char *json = busy_json(why, RETRY_BUSY_MS);
	size_t len = json != NULL ? strlen(json) : 0;
	char frame[4 + 256];

	if (len > 0 && len <= sizeof(frame) - 4) {
		frame[0] = frame[1] = 0;
		frame[2] = (char)(len >> 8);
		frame[3] = (char)len;
		memcpy(frame + 4, json, len);
		ssize_t sent = send(fd, frame, 4 + len, MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)sent;
	}
	free(json);
	close(fd);
}

static void accept_all(struct p53_ctl *ctl)
{
	for (;;) {
		int fd = accept4(ctl->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cred;
		socklen_t cl = sizeof(cred);
		int mine = 0;

		if (fd < 0)
			break;
		/* Linux fills the peer's credentials at connect(); anything else is not a local
		 * client we can account for. */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0) {
			close(fd);
			continue;
		}
		for (int i = 0; i < ctl->n_clients; i++)
			mine += ctl->clients[i].uid == cred.uid;
		if (ctl->n_clients == P53_CTL_MAX_CLIENTS || mine >= P53_CTL_MAX_PER_UID) {
			ctl->refused_busy++;
			refuse(fd, ctl->n_clients == P53_CTL_MAX_CLIENTS ? "busy: too many control clients"
					: "busy: too many control clients of this user");
			continue;
		}
		struct p53_ctl_client *c = &ctl->clients[ctl->n_clients++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->uid = cred.uid;
		c->deadline = now_ms() + CLIENT_DEADLINE_MS;
	}
}

static void wake_drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) > 0) {
	}
}

void p53_ctl_poll(struct p53_daemon *d, int timeout_ms)
{
	struct p53_ctl *ctl = &d->ctl;
	struct pollfd pfd[P53_CTL_MAX_CLIENTS + 2];
	int n = 0;

	if (ctl->fd < 0) {
		struct pollfd w = {.fd = ctl->wake_fd, .events = POLLIN};
		if (poll(&w, ctl->wake_fd >= 0 ? 1 : 0, timeout_ms) > 0)
			wake_drain(ctl->wake_fd);
		return;
	}
	pfd[n++] = (struct pollfd){.fd = ctl->fd, .events = POLLIN};
	for (int i = 0; i < ctl->n_clients; i++)
		pfd[n++] = (struct pollfd){.fd = ctl->clients[i].fd,
					   .events = ctl->clients[i].out != NULL ? POLLOUT : POLLIN};
	/* Last, so the clients keep their index + 1. */
	pfd[n] = (struct pollfd){.fd = ctl->wake_fd, .events = POLLIN};
	n += ctl->wake_fd >= 0;
	if (poll(pfd, (nfds_t)n, timeout_ms) <= 0)
		goto deadlines;
	if (ctl->wake_fd >= 0 && (pfd[n - 1].revents & POLLIN))
		wake_drain(ctl->wake_fd);

	for (int i = ctl->n_clients - 1; i >= 0; i--) {
		short ev = pfd[i + 1].revents;
		struct p53_ctl_client *c = &ctl->clients[i];
		int drop = 0;
		if (ev == 0)
			continue;
		if (c->out == NULL && (ev & (POLLIN | POLLHUP | POLLERR)))
			drop = readable(d, c) != 0;
		if (!drop && c->out != NULL)
			drop = writable(c) != 0;
		if (drop)
			drop_client(ctl, i);
	}
	if (pfd[0].revents & POLLIN)
		accept_all(ctl);
deadlines:
	for (int i = ctl->n_clients - 1; i >= 0; i--)
		if (now_ms() > ctl->clients[i].deadline)
			drop_client(ctl, i);
}

void p53_ctl_close(struct p53_daemon *d)
{
	struct p53_ctl *ctl = &d->ctl;

	while (ctl->n_clients > 0)
		drop_client(ctl, ctl->n_clients - 1);
	if (ctl->fd >= 0) {
		close(ctl->fd);
		ctl->fd = -1;
		unlink(d->cfg.control_socket);
	}
}
