/*
 * The TCP server's threads: listening sockets, the epoll loop, timers, RCU; see tcp.h.
 * Connections are in conn.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "control/log.h"
#include "control/tcp/server.h"

#define EVENTS 64               /* epoll events per wait */
#define ACCEPTS 64              /* connections accepted per listener event */
#define ACCEPT_PAUSE_MS 100     /* out of file descriptors: stop accepting this long */
#define BACKLOG 1024
#define BOX_WAIT_MS 2000        /* longest p53_tcp_set_addrs waits for a thread */

const char *const p53_tcp_close_names[P53_TCP_CLOSE__MAX] = {
	[P53_TCP_CLOSE_EOF] = "eof",
	[P53_TCP_CLOSE_EOF_MID_MESSAGE] = "eof_mid_message",
	[P53_TCP_CLOSE_ZERO_LENGTH] = "zero_length",
	[P53_TCP_CLOSE_IDLE] = "idle",
	[P53_TCP_CLOSE_SLOW_MESSAGE] = "slow_message",
	[P53_TCP_CLOSE_WRITE_STALLED] = "write_stalled",
	[P53_TCP_CLOSE_ERROR] = "error",
	[P53_TCP_CLOSE_NO_MEMORY] = "no_memory",
	[P53_TCP_CLOSE_SHUTDOWN] = "shutdown",
	[P53_TCP_CLOSE_NOTIFY_HANDOFF] = "notify_handoff",
};

const char *const p53_tcp_refuse_names[P53_TCP_REFUSE__MAX] = {
	[P53_TCP_REFUSE_MAX_CONNECTIONS] = "max_connections",
	[P53_TCP_REFUSE_PER_CLIENT] = "per_client",
	[P53_TCP_REFUSE_NO_MEMORY] = "no_memory",
	[P53_TCP_REFUSE_ACCEPT_ERROR] = "accept_error",
};

static void addr_str(const struct p53_addr *a, char *buf, size_t len)
{
	inet_ntop(a->family, a->bytes, buf, (socklen_t)len);
}

/* A listening socket on port 53 of `a`, shared with the other threads' (SO_REUSEPORT). */
static int listen_on(const struct p53_addr *a, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1, fd;
	const char *what;

	memset(&ss, 0, sizeof(ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(53);
		memcpy(&s4->sin_addr, a->bytes, 4);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(53);
		memcpy(&s6->sin6_addr, a->bytes, 16);
		sl = sizeof(*s6);
	}
	fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		what = "socket";
		goto fail;
	}
	what = "setsockopt";
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0)
		goto fail;
	/* FREEBIND: an anycast address may reach the interface only after we start. */
	if (a->family == AF_INET && setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)) != 0)
		goto fail;
	if (a->family == AF_INET6 &&
	    (setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one)) != 0 ||
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0))
		goto fail;
	what = "bind";
	if (bind(fd, (struct sockaddr *)&ss, sl) != 0)
		goto fail;
	what = "listen";
	if (listen(fd, BACKLOG) != 0)
		goto fail;
	return fd;
fail:;
	int e = errno;
	char as[INET6_ADDRSTRLEN];
	addr_str(a, as, sizeof(as));
	snprintf(err, errlen, "cannot listen on TCP %s port 53: %s: %s", as, what, strerror(e));
	if (fd >= 0)
		close(fd);
	return -1;
}

static void listeners_watch(struct p53_tcp_thread *th, int on)
{
	for (int i = 0; i < th->n_lst; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &th->lst[i]};
		epoll_ctl(th->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, th->lst[i].fd, &ev);
	}
}

/* Adopt the listening sockets the control thread put in the mailbox; close the dropped ones. */
static void take_mailbox(struct p53_tcp_thread *th)
{
	int fds[P53_CONFIG_MAX_ADDRS], n = -1;

	pthread_mutex_lock(&th->box_lock);
	if (th->box_pending) {
		n = th->box_n;
		memcpy(fds, th->box_fds, sizeof(int) * (size_t)n);
		th->box_pending = 0;
	}
	pthread_mutex_unlock(&th->box_lock);
	if (n < 0)
		return;
	if (th->accept_paused_until == 0)
		listeners_watch(th, 0);
	for (int i = 0; i < th->n_lst; i++) {
		int kept = 0;
		for (int j = 0; j < n; j++)
			kept |= fds[j] == th->lst[i].fd;
		if (!kept)
			close(th->lst[i].fd);
	}
	for (int j = 0; j < n; j++) {
		th->lst[j].kind = EV_LISTENER;
		th->lst[j].fd = fds[j];
	}
	th->n_lst = n;
	if (th->accept_paused_until == 0)
		listeners_watch(th, 1);
}

static void peer_of(const struct sockaddr_storage *ss, struct p53_addr *a, uint16_t *port)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		a->family = AF_INET;
		memcpy(a->bytes, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		a->family = AF_INET6;
		memcpy(a->bytes, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
	}
}

static void accept_some(struct p53_tcp_thread *th, const struct listener *l, uint64_t now)
{
	for (int k = 0; k < ACCEPTS; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct p53_addr peer;
		enum p53_tcp_refuse why;
		uint16_t port;
		int one = 1;

		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/* Out of descriptors or memory: the backlog stays readable, so stop watching
			 * the listeners a moment rather than spin on them. */
			th->stats.refused[P53_TCP_REFUSE_ACCEPT_ERROR]++;
			if (th->accept_paused_until == 0)
				listeners_watch(th, 0);
			th->accept_paused_until = now + ACCEPT_PAUSE_MS;
			return;
		}
		peer_of(&ss, &peer, &port);
		if (p53_tcp_limits_take(th->limits, &peer, &why) != 0) {
			th->stats.refused[why]++;
			close(fd);
			continue;
		}
		/* Responses are whole messages written at once: Nagle would only delay them. */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (p53_tcp_conn_new(th, fd, &peer, port, now) == NULL) {
			p53_tcp_limits_put(th->limits, &peer);
			th->stats.refused[P53_TCP_REFUSE_NO_MEMORY]++;
			close(fd);
		}
	}
}

/* Close what timed out; resume accepting after a pause. */
static void sweep(struct p53_tcp_thread *th, uint64_t now)
{
	const struct p53_tcp_conf *cf = th->conf;
	struct conn *c;

	while ((c = TAILQ_FIRST(&th->msgs)) != NULL && now >= c->msg_ms + cf->io_timeout_ms)
		p53_tcp_conn_close(th, c, P53_TCP_CLOSE_SLOW_MESSAGE);
	while ((c = TAILQ_FIRST(&th->writes)) != NULL && now >= c->write_ms + cf->io_timeout_ms)
		p53_tcp_conn_close(th, c, P53_TCP_CLOSE_WRITE_STALLED);
	while ((c = TAILQ_FIRST(&th->idle)) != NULL && now >= c->active_ms + cf->idle_timeout_ms) {
		/* RFC 7766 §6.2.3: idle means nothing outstanding. A message arriving or output
		 * draining is watched by the io timeout instead. */
		if (c->tx != NULL || c->rx_len > 0 || c->xo != NULL)
			p53_tcp_conn_touch(th, c, now);
		else
			p53_tcp_conn_close(th, c, P53_TCP_CLOSE_IDLE);
	}
	if (th->accept_paused_until != 0 && now >= th->accept_paused_until) {
		th->accept_paused_until = 0;
		listeners_watch(th, 1);
	}
}

/* Milliseconds until the next deadline, for epoll_wait; -1 when there is none. */
static int next_timeout(const struct p53_tcp_thread *th, uint64_t now)
{
	const struct p53_tcp_conf *cf = th->conf;
	uint64_t d = UINT64_MAX;
	const struct conn *c;

	if ((c = TAILQ_FIRST(&th->msgs)) != NULL && c->msg_ms + cf->io_timeout_ms < d)
		d = c->msg_ms + cf->io_timeout_ms;
	if ((c = TAILQ_FIRST(&th->writes)) != NULL && c->write_ms + cf->io_timeout_ms < d)
		d = c->write_ms + cf->io_timeout_ms;
	if ((c = TAILQ_FIRST(&th->idle)) != NULL && c->active_ms + cf->idle_timeout_ms < d)
		d = c->active_ms + cf->idle_timeout_ms;
	if (th->accept_paused_until != 0 && th->accept_paused_until < d)
		d = th->accept_paused_until;
	if (d == UINT64_MAX)
		return -1;
	if (d <= now)
		return 0;
	/* The coarse clock ticks every few ms: wake just after the deadline, not just before. */
	return d - now > INT_MAX - 10 ? INT_MAX : (int)(d - now) + 5;
}

static void *thread_main(void *arg)
{
	struct p53_tcp_thread *th = arg;
	struct epoll_event evs[EVENTS];

	rte_rcu_qsbr_thread_register(th->qsbr, th->qsbr_id);
	while (!th->stop) {
		int wake = 0;
		int timeout = next_timeout(th, p53_tcp_now_ms());

		/* Offline while blocked: a publish never waits for a thread with nothing to do. */
		rte_rcu_qsbr_thread_offline(th->qsbr, th->qsbr_id);
		int n = epoll_wait(th->epfd, evs, EVENTS, timeout);
		rte_rcu_qsbr_thread_online(th->qsbr, th->qsbr_id);
		uint64_t now = p53_tcp_now_ms();
		for (int i = 0; i < n; i++) {
			uint8_t kind = *(const uint8_t *)evs[i].data.ptr;
			if (kind == EV_CONN) {
				struct conn *c = evs[i].data.ptr;
				int rc = p53_tcp_conn_event(th, c, evs[i].events, now);
				if (rc != 0)
					p53_tcp_conn_close(th, c, (enum p53_tcp_close)(rc - 1));
			} else if (kind == EV_LISTENER) {
				accept_some(th, evs[i].data.ptr, now);
			} else {
				wake = 1;
			}
			/* Nothing of the replica is held between events. */
			rte_rcu_qsbr_quiescent(th->qsbr, th->qsbr_id);
		}
		/* After the batch: later events of it may point at the listener array. */
		if (wake) {
			uint64_t v;
			if (read(th->wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				p53_warn("tcp thread %u: eventfd: %s", th->index, strerror(errno));
			take_mailbox(th);
		}
		sweep(th, now);
	}
	struct conn *c;
	while ((c = TAILQ_FIRST(&th->idle)) != NULL)
		p53_tcp_conn_close(th, c, P53_TCP_CLOSE_SHUTDOWN);
	rte_rcu_qsbr_thread_offline(th->qsbr, th->qsbr_id);
	rte_rcu_qsbr_thread_unregister(th->qsbr, th->qsbr_id);
	return NULL;
}

/* Raise the open-files limit to what max_connections needs, if the hard limit allows. */
static void fd_budget(const struct p53_tcp_conf *conf, int n_listeners)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)conf->max_connections + (rlim_t)n_listeners + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
		return;
	rlim_t was = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < want)
		p53_warn("tcp: open files limit %llu (was %llu) is below tcp.max_connections + %u; "
			 "connections past it are refused (accept_error)", (unsigned long long)rl.rlim_cur,
			 (unsigned long long)was, (unsigned int)(want - conf->max_connections));
}

int p53_tcp_start(struct p53_tcp *t, const struct p53_tcp_conf *conf, const struct p53_addr *addrs,
		  int n_addrs, struct p53_dataplane *dp, struct rte_ring *notify_ring,
		  struct p53_xfr_serve *serve, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->conf = *conf;
	memcpy(t->addrs, addrs, sizeof(*addrs) * (size_t)n_addrs);
	t->n_addrs = n_addrs;
	if (!conf->enabled)
		return 0;
	if (dp->n_readers < conf->threads) {
		snprintf(err, errlen, "tcp: RCU was set up for %u TCP threads, not %u", dp->n_readers,
			 conf->threads);
		return -1;
	}
	if (p53_tcp_limits_init(&t->limits, conf->max_connections, conf->max_per_client) != 0) {
		snprintf(err, errlen, "tcp: out of memory for the connection table");
		return -1;
	}
	size_t sz = sizeof(struct p53_tcp_thread) * conf->threads;
	t->threads = aligned_alloc(RTE_CACHE_LINE_SIZE, sz);
	if (t->threads == NULL) {
		snprintf(err, errlen, "tcp: out of memory for %u threads", conf->threads);
		goto fail;
	}
	memset(t->threads, 0, sz);
	t->n_threads = conf->threads;
	t->running = 1;
	for (unsigned int i = 0; i < t->n_threads; i++) {
		t->threads[i].epfd = t->threads[i].wakefd = -1;
		pthread_mutex_init(&t->threads[i].box_lock, NULL);
	}
	fd_budget(conf, n_addrs * (int)conf->threads);
	for (unsigned int i = 0; i < t->n_threads; i++) {
		struct p53_tcp_thread *th = &t->threads[i];
		th->index = i;
		th->conf = &t->conf;
		th->limits = &t->limits;
		th->qsbr = dp->qsbr;
		th->qsbr_id = p53_dataplane_reader_id(dp, i);
		th->replica = p53_dataplane_reader_slot(dp);
		th->notify_ring = notify_ring;
		th->serve = serve;
		th->wake_kind = EV_WAKE;
		TAILQ_INIT(&th->idle);
		TAILQ_INIT(&th->msgs);
		TAILQ_INIT(&th->writes);
		for (int j = 0; j < P53_CONFIG_MAX_ADDRS; j++)
			th->handed[j] = -1;
		th->epfd = epoll_create1(EPOLL_CLOEXEC);
		th->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		th->out = malloc(P53_TCP_TX_MAX);
		if (th->epfd < 0 || th->wakefd < 0 || th->out == NULL) {
			snprintf(err, errlen, "tcp: cannot set up thread %u: %s", i, strerror(errno));
			goto fail;
		}
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &th->wake_kind};
		epoll_ctl(th->epfd, EPOLL_CTL_ADD, th->wakefd, &ev);
		for (int j = 0; j < n_addrs; j++) {
			int fd = listen_on(&addrs[j], err, errlen);
			if (fd < 0)
				goto fail;
			th->handed[j] = fd;
			th->lst[j].kind = EV_LISTENER;
			th->lst[j].fd = fd;
			th->n_lst = j + 1;
		}
		listeners_watch(th, 1);
	}
	for (unsigned int i = 0; i < t->n_threads; i++) {
		struct p53_tcp_thread *th = &t->threads[i];
		char name[RTE_MAX_THREAD_NAME_LEN];
		snprintf(name, sizeof(name), "p53-tcp-%u", i % 64u); /* tcp.threads <= 64 */
		if (rte_ctrl_thread_create(&th->tid, name, NULL, thread_main, th) != 0) {
			snprintf(err, errlen, "tcp: cannot start thread %u", i);
			goto fail;
		}
		th->started = 1;
	}
	p53_info("tcp: %u thread(s) listening on %d address(es), port 53; idle timeout %u ms, "
		 "io timeout %u ms, at most %u connections, %u per client", t->n_threads, n_addrs,
		 conf->idle_timeout_ms, conf->io_timeout_ms, conf->max_connections,
		 conf->max_per_client);
	return 0;
fail:
	p53_tcp_free(t);
	return -1;
}

int p53_tcp_set_addrs(struct p53_tcp *t, const struct p53_addr *addrs, int n_addrs, char *err,
		      size_t errlen)
{
	int fresh[P53_CONFIG_MAX_ADDRS * 2];
	unsigned int i;
	int j;

	if (t->threads == NULL || !t->running) {
		memcpy(t->addrs, addrs, sizeof(*addrs) * (size_t)n_addrs);
		t->n_addrs = n_addrs;
		return 0;
	}
	/* Open every new socket first: an error changes nothing. */
	for (i = 0; i < t->n_threads; i++) {
		struct p53_tcp_thread *th = &t->threads[i];
		for (j = 0; j < n_addrs; j++) {
			int k;
			for (k = 0; k < t->n_addrs; k++)
				if (memcmp(&t->addrs[k], &addrs[j], sizeof(addrs[j])) == 0)
					break;
			int fd = k < t->n_addrs ? th->handed[k] : listen_on(&addrs[j], err, errlen);
			if (fd < 0)
				goto undo;
			fresh[j] = fd;
		}
		pthread_mutex_lock(&th->box_lock);
		memcpy(th->box_fds, fresh, sizeof(int) * (size_t)n_addrs);
		th->box_n = n_addrs;
		th->box_pending = 1;
		pthread_mutex_unlock(&th->box_lock);
	}
	/* Hand over, and wait until every thread took its set (one loop turn): the next call
	 * then starts from what the threads hold. */
	for (i = 0; i < t->n_threads; i++) {
		uint64_t one = 1;
		if (write(t->threads[i].wakefd, &one, sizeof(one)) < 0)
			p53_warn("tcp thread %u: eventfd: %s", i, strerror(errno));
	}
	for (i = 0; i < t->n_threads; i++) {
		struct p53_tcp_thread *th = &t->threads[i];
		int pending = 1;
		for (int waited = 0; pending && waited < BOX_WAIT_MS; waited++) {
			pthread_mutex_lock(&th->box_lock);
			pending = th->box_pending;
			pthread_mutex_unlock(&th->box_lock);
			if (pending)
				usleep(1000);
		}
		if (pending)
			p53_warn("tcp thread %u has not taken its new listeners after %d ms", i, BOX_WAIT_MS);
		for (j = 0; j < n_addrs; j++)
			th->handed[j] = th->box_fds[j];
		for (; j < P53_CONFIG_MAX_ADDRS; j++)
			th->handed[j] = -1;
	}
	memcpy(t->addrs, addrs, sizeof(*addrs) * (size_t)n_addrs);
	t->n_addrs = n_addrs;
	return 0;
undo:
	/* Close the sockets opened for this call only; kept ones stay the threads'. */
	for (unsigned int u = 0; u <= i && u < t->n_threads; u++) {
		struct p53_tcp_thread *th = &t->threads[u];
		int upto = u < i ? n_addrs : j;
		pthread_mutex_lock(&th->box_lock);
		int *set = u < i ? th->box_fds : fresh;
		for (int x = 0; x < upto; x++) {
			int kept = 0;
			for (int k = 0; k < t->n_addrs; k++)
				kept |= set[x] == th->handed[k];
			if (!kept)
				close(set[x]);
		}
		th->box_pending = 0;
		pthread_mutex_unlock(&th->box_lock);
	}
	return -1;
}

void p53_tcp_stop(struct p53_tcp *t)
{
	if (t->threads == NULL || !t->running)
		return;
	for (unsigned int i = 0; i < t->n_threads; i++) {
		struct p53_tcp_thread *th = &t->threads[i];
		uint64_t one = 1;
		th->stop = 1;
		if (th->wakefd >= 0 && write(th->wakefd, &one, sizeof(one)) < 0)
			p53_warn("tcp thread %u: eventfd: %s", i, strerror(errno));
	}
	for (unsigned int i = 0; i < t->n_threads; i++) {
		struct p53_tcp_thread *th = &t->threads[i];
		if (th->started)
			pthread_join(th->tid, NULL);
		th->started = 0;
		/* Listeners handed over but never taken (a thread that missed a set_addrs). */
		for (int j = 0; th->box_pending && j < th->box_n; j++) {
			int taken = 0;
			for (int k = 0; k < th->n_lst; k++)
				taken |= th->lst[k].fd == th->box_fds[j];
			if (!taken)
				close(th->box_fds[j]);
		}
		th->box_pending = 0;
		for (int j = 0; j < th->n_lst; j++)
			close(th->lst[j].fd);
		th->n_lst = 0;
		if (th->epfd >= 0)
			close(th->epfd);
		if (th->wakefd >= 0)
			close(th->wakefd);
		th->epfd = th->wakefd = -1;
		free(th->out);
		th->out = NULL;
	}
	t->running = 0;
}

void p53_tcp_free(struct p53_tcp *t)
{
	p53_tcp_stop(t);
	if (t->threads != NULL) {
		p53_tcp_totals(t, &t->stopped);
		for (unsigned int i = 0; i < t->n_threads; i++)
			pthread_mutex_destroy(&t->threads[i].box_lock);
		free(t->threads);
		t->threads = NULL;
		t->n_threads = 0;
	}
	p53_tcp_limits_fini(&t->limits);
}

void p53_tcp_totals(const struct p53_tcp *t, struct p53_tcp_stats *out)
{
	uint64_t *o = (uint64_t *)out;
	const size_t words = sizeof(*out) / sizeof(uint64_t);

	_Static_assert(sizeof(struct p53_tcp_stats) % sizeof(uint64_t) == 0, "uint64_t only");
	*out = t->stopped;
	for (unsigned int i = 0; i < t->n_threads && t->threads != NULL; i++) {
		const uint64_t *s = (const uint64_t *)&t->threads[i].stats;
		for (size_t k = 0; k < words; k++)
			o[k] += s[k];
	}
}
