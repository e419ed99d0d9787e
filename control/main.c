/*
 * pop53d: start-up, the control thread, and orderly shutdown.
 *
 * Order: read the config and compile every zone before touching DPDK (a config or zone
 * error exits non-zero with "file:line: reason" and no side effects); EAL init; one replica
 * of the image per worker on the worker's NUMA socket; port and queues; workers on their
 * lcores (worker 0 on the main lcore); the control thread (an rte_ctrl_thread, off the
 * worker cores) watches heartbeats and signals. SIGTERM/SIGINT: run the stop hooks (the
 * BGP work withdraws the route here first), stop the workers, close the port, check the
 * mempools are back at their baseline, exit.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "control/config.h"
#include "control/image_build.h"
#include "control/log.h"
#include "control/port.h"
#include "dataplane/image.h"
#include "dataplane/worker.h"

static volatile sig_atomic_t got_stop;
static volatile int workers_stop;

static void on_signal(int sig)
{
	if (sig == SIGTERM || sig == SIGINT)
		got_stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: pop53d -c FILE [--log-level err|warn|info|debug]\n"
		   "       pop53d --check-config FILE\n"
		   "       pop53d --version\n");
}

static void warn_cb(void *arg, const char *msg)
{
	(void)arg;
	p53_warn("%s", msg);
}

/* Compile every zone the config names; NULL with the reason logged on any error. */
static void *compile(const struct p53_config *cfg, size_t *len)
{
	struct p53_zone_src *src = calloc((size_t)cfg->n_zones, sizeof(*src));
	char err[1024] = "";
	void *img;

	if (src == NULL)
		return NULL;
	for (int i = 0; i < cfg->n_zones; i++) {
		src[i].name = cfg->zones[i].name;
		src[i].file = cfg->zones[i].file;
		src[i].cfg_file = cfg->path;
		src[i].cfg_line = cfg->zones[i].line;
	}
	img = p53_image_build(src, (size_t)cfg->n_zones, len, err, sizeof(err), warn_cb, NULL);
	if (img == NULL)
		p53_err("%s", err);
	free(src);
	return img;
}

static int check_config(const char *path)
{
	struct p53_config cfg = {0};
	char err[1024];
	size_t len;
	void *img;

	if (p53_config_load(path, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	img = compile(&cfg, &len);
	if (img == NULL) {
		p53_config_free(&cfg);
		return 1;
	}
	printf("%s: ok (%d zone(s), %" PRIu32 " records, image %zu bytes)\n", path, cfg.n_zones,
	       p53_image_hdr(img)->n_records, len);
	free(img);
	p53_config_free(&cfg);
	return 0;
}

/* EAL argv: ours, then the config's; no hugepages on this host means --no-huge. */
static int eal_args(const struct p53_config *cfg, char **argv, int max)
{
	int n = 0;
	int has_mem = 0;

	argv[n++] = "pop53d";
	for (int i = 0; i < cfg->n_eal && n < max - 4; i++) {
		argv[n++] = cfg->eal[i];
		if (strcmp(cfg->eal[i], "--no-huge") == 0 || strcmp(cfg->eal[i], "-m") == 0)
			has_mem = 1;
	}
	if (!has_mem && access("/run/pop53/no-huge", F_OK) == 0) {
		p53_warn("no hugepages on this host (scripts/deps.sh said so): running with --no-huge -m 512");
		argv[n++] = "--no-huge";
		argv[n++] = "-m";
		argv[n++] = "512";
	}
	argv[n] = NULL;
	return n;
}

/* Copy the image into a worker's replica, on the worker's socket. */
static void *replica(const void *img, size_t len, unsigned int lcore)
{
	void *r = rte_malloc_socket("p53_replica", len, RTE_CACHE_LINE_SIZE,
				    (int)rte_lcore_to_socket_id(lcore));
	if (r != NULL)
		memcpy(r, img, len);
	return r;
}

static void log_worker(const struct p53_worker *w)
{
	const struct p53_worker_stats *s = &w->stats;
	uint64_t drops = s->multiseg + s->no_answer;

	for (int d = 1; d < P53_PKT_DROP__MAX; d++)
		drops += s->drop[d];
	p53_info("worker %u (lcore %u): rx %" PRIu64 " tx %" PRIu64 " answered %" PRIu64
		 " dropped %" PRIu64 " tx_fail %" PRIu64 " idle %.1f%%",
		 w->index, w->lcore, s->rx, s->tx, s->answered, drops, s->tx_fail,
		 s->polls ? 100.0 * (double)s->idle_polls / (double)s->polls : 100.0);
	for (int d = 1; d < P53_PKT_DROP__MAX; d++)
		if (s->drop[d] != 0)
			p53_info("worker %u: dropped %s %" PRIu64, w->index, p53_pkt_drop_names[d], s->drop[d]);
}

struct control {
	struct p53_worker *workers;
	unsigned int n;
};

/* The control thread: heartbeats and signals. Later issues add the socket, reload, health. */
static void *control_main(void *arg)
{
	struct control *ctl = arg;
	uint64_t hz = rte_get_tsc_hz();
	uint64_t last_warn = 0;

	while (!got_stop) {
		rte_delay_us_sleep(100 * 1000);
		uint64_t now = rte_rdtsc();
		for (unsigned int i = 0; i < ctl->n; i++) {
			uint64_t hb = ctl->workers[i].stats.heartbeat;
			if (hb != 0 && now > hb && now - hb > hz && now - last_warn > 10 * hz) {
				p53_warn("worker %u: no heartbeat for %.1f s", i, (double)(now - hb) / (double)hz);
				last_warn = now;
			}
		}
	}
	/* Orderly stop: hooks that must run before the data plane stops go here (BGP withdraw). */
	p53_info("stopping: workers first");
	workers_stop = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"check-config", required_argument, NULL, 'C'},
		{"log-level", required_argument, NULL, 'l'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *path = NULL;
	struct p53_config cfg = {0};
	struct p53_port port;
	struct p53_worker *workers = NULL;
	unsigned int lcores[P53_MAX_WORKERS];
	char err[1024];
	char *eal_argv[P53_CONFIG_MAX_EAL + 8];
	size_t img_len = 0;
	void *img = NULL;
	int rc = 1, opt;

	while ((opt = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 'C':
			return check_config(optarg);
		case 'l':
			if (strcmp(optarg, "debug") == 0)
				p53_log_set_level(P53_LOG_DEBUG);
			else if (strcmp(optarg, "warn") == 0)
				p53_log_set_level(P53_LOG_WARN);
			else if (strcmp(optarg, "err") == 0)
				p53_log_set_level(P53_LOG_ERR);
			break;
		case 'V':
			printf("pop53d %s\n", P53_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (path == NULL) {
		usage(stderr);
		return 2;
	}
	if (p53_config_load(path, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	img = compile(&cfg, &img_len);
	if (img == NULL)
		goto out_cfg;
	p53_info("compiled %d zone(s): %" PRIu32 " records, %zu bytes (%.1f B/record)", cfg.n_zones,
		 p53_image_hdr(img)->n_records, img_len,
		 (double)img_len / (double)(p53_image_hdr(img)->n_records ? p53_image_hdr(img)->n_records : 1));

	int eal_argc = eal_args(&cfg, eal_argv, (int)(sizeof(eal_argv) / sizeof(eal_argv[0])));
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		p53_err("EAL init failed: %s", rte_strerror(rte_errno));
		goto out_img;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);

	if (rte_lcore_count() < cfg.workers) {
		p53_err("%u workers need %u lcores; the EAL has %u (dataplane.eal -l)", cfg.workers,
			cfg.workers, rte_lcore_count());
		goto out_eal;
	}
	/* Worker 0 runs on the main lcore, the others on the next worker lcores. */
	lcores[0] = rte_get_main_lcore();
	unsigned int lc = rte_get_main_lcore();
	for (unsigned int i = 1; i < cfg.workers; i++) {
		lc = rte_get_next_lcore(lc, 1, 0);
		lcores[i] = lc;
	}
	workers = rte_zmalloc("p53_workers", sizeof(*workers) * cfg.workers, RTE_CACHE_LINE_SIZE);
	if (workers == NULL) {
		p53_err("out of memory for workers");
		goto out_eal;
	}
	if (p53_port_open(&port, &cfg, lcores) != 0)
		goto out_workers;

	for (unsigned int i = 0; i < cfg.workers; i++) {
		struct p53_worker *w = &workers[i];
		w->index = i;
		w->lcore = lcores[i];
		w->port = port.id;
		w->queue = (uint16_t)i;
		w->tx_offload = port.tx_offload;
		w->idle_adaptive = cfg.idle == P53_IDLE_ADAPTIVE;
		w->idle_max_us = cfg.idle_max_us;
		w->stop = &workers_stop;
		w->conf.identity = (const uint8_t *)cfg.identity;
		w->conf.identity_len = (uint8_t)strnlen(cfg.identity, 255);
		w->conf.version = (const uint8_t *)cfg.version;
		w->conf.version_len = cfg.version != NULL ? (uint8_t)strnlen(cfg.version, 255) : 0;
		w->conf.edns_max_payload = cfg.edns_max_payload;
		w->image = replica(img, img_len, w->lcore);
		if (w->image == NULL) {
			p53_err("out of memory for the replica of worker %u (%zu bytes)", i, img_len);
			goto out_port;
		}
	}

	struct control ctl = {.workers = workers, .n = cfg.workers};
	pthread_t ctl_thread;
	if (rte_ctrl_thread_create(&ctl_thread, "p53-control", NULL,
				   control_main, &ctl) != 0) {
		p53_err("cannot start the control thread");
		goto out_port;
	}
	for (unsigned int i = 1; i < cfg.workers; i++)
		rte_eal_remote_launch(p53_worker_main, &workers[i], workers[i].lcore);
	p53_info("ready: %s serving %d zone(s) with %u worker(s), identity '%s'", port.name,
		 cfg.n_zones, cfg.workers, cfg.identity);
	p53_worker_main(&workers[0]);
	rte_eal_mp_wait_lcore();
	pthread_join(ctl_thread, NULL);

	for (unsigned int i = 0; i < cfg.workers; i++)
		log_worker(&workers[i]);
	p53_port_log_xstats(&port);
	rc = 0;
out_port:
	p53_port_close(&port);
	for (unsigned int i = 0; i < cfg.workers; i++)
		rte_free((void *)(uintptr_t)workers[i].image);
out_workers:
	rte_free(workers);
out_eal:
	rte_eal_cleanup();
out_img:
	free(img);
out_cfg:
	p53_config_free(&cfg);
	p53_info("exit %d", rc);
	return rc;
}
