/*
 * The exabgp announcer: ExaBGP API lines, one per prefix, written to pop53d's stdout (when
 * ExaBGP runs pop53d as its `process`, or through a pipe) or into a FIFO that an ExaBGP
 * process reads (`run cat FIFO`). Writes never block: a full pipe or a FIFO without a reader
 * is a failure, retried with the whole state (ExaBGP takes a repeated announce as a no-op).
 *   announce route P next-hop NH                  announced
 *   announce route P next-hop NH <depref attrs>   de-preferred (default community [65535:0])
 *   withdraw route P next-hop NH                  withdrawn
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/anycast/anycast.h"

struct exabgp {
	const struct p53_exabgp_conf *ec;
	int fd;                         /* 1 for stdout, the FIFO, or -1 */
	bool is_stdout;
};

static int exabgp_apply(struct p53_announcer *a, enum p53_announce level, uint64_t now_ms)
{
	struct exabgp *x = a->priv;
	char buf[4096];
	size_t o = 0;

	(void)now_ms;
	for (int i = 0; i < a->n_prefixes && o < sizeof(buf); i++) {
		char p[64];
		p53_prefix_str(&a->prefixes[i], p, sizeof(p));
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s route %s next-hop %s%s%s\n",
				      level == P53_ANNOUNCE_NONE ? "withdraw" : "announce", p,
				      x->ec->next_hop, level == P53_ANNOUNCE_DEPREF ? " " : "",
				      level == P53_ANNOUNCE_DEPREF ? x->ec->depref : "");
	}
	if (o >= sizeof(buf)) {
		snprintf(a->err, sizeof(a->err), "exabgp: too many prefixes for one write");
		return -1;
	}
	if (x->fd < 0) {
		/* O_NONBLOCK: ENXIO at once when nobody reads the FIFO, instead of hanging. */
		x->fd = open(x->ec->output, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (x->fd < 0) {
			snprintf(a->err, sizeof(a->err), "exabgp: %s: %s", x->ec->output,
				 errno == ENXIO ? "no reader on the FIFO (is ExaBGP running?)" : strerror(errno));
			return -1;
		}
	}
	struct pollfd pf = { .fd = x->fd, .events = POLLOUT };
	ssize_t n = -1;
	if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLOUT))
		n = write(x->fd, buf, o);
	if (n != (ssize_t)o) {
		snprintf(a->err, sizeof(a->err), "exabgp: %s: %s", x->is_stdout ? "stdout" : x->ec->output,
			 n < 0 && errno != 0 && errno != EAGAIN ? strerror(errno) : "reader not keeping up");
		if (!x->is_stdout) {
			close(x->fd);
			x->fd = -1;
		}
		return -1;
	}
	return 1;
}

static int exabgp_poll(struct p53_announcer *a, uint64_t now_ms)
{
	(void)a;
	(void)now_ms;
	return 0;
}

static void exabgp_close(struct p53_announcer *a)
{
	struct exabgp *x = a->priv;

	if (x == NULL)
		return;
	if (x->fd >= 0 && !x->is_stdout)
		close(x->fd);
	free(x);
	a->priv = NULL;
}

static const struct p53_announcer_ops exabgp_ops = {
	.name = "exabgp", .apply = exabgp_apply, .poll = exabgp_poll, .close = exabgp_close,
};

int p53_exabgp_init(struct p53_announcer *a, const struct p53_exabgp_conf *ec)
{
	struct exabgp *x = calloc(1, sizeof(*x));

	a->ops = &exabgp_ops;
	if (x == NULL)
		return -1;
	x->ec = ec;
	x->is_stdout = strcmp(ec->output, "stdout") == 0;
	x->fd = x->is_stdout ? 1 : -1;
	a->priv = x;
	return 0;
}
