/*
 * pop53d: start-up, the control thread, and orderly shutdown.
 *
 * Order: read the config and compile every zone before touching DPDK (a config or zone
 * error exits non-zero with "file:line: reason" and no side effects); EAL init; one replica
 * of the image per worker on the worker's NUMA socket; port and queues; workers on their
 * lcores (worker 0 on the main lcore); the control thread (an rte_ctrl_thread, off the
 * worker cores) watches heartbeats and signals and runs health (control/health/), which
 * drives the anycast announcers. SIGTERM/SIGINT: withdraw (or drain) the anycast prefixes
 * and keep serving until that is done (health.on_stop, stop_linger), stop the workers,
 * close the port, check the mempools are back at their baseline, exit.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "control/conf/config.h"
#include "control/conf/config_diff.h"
#include "control/daemon.h"
#include "control/health/health.h"
#include "control/health/watchdog.h"
#include "control/ops/ctl.h"
#include "control/log.h"
#include "control/ops/metrics.h"
#include "control/net/port.h"
#include "control/tcp/tcp.h"
#include "control/zone/compile.h"
#include "control/zone/watch.h"
#include "control/xfr/xfr.h"
#include "dataplane/image.h"
#include "dataplane/notify.h"
#include "dataplane/worker.h"

_Static_assert(P53_CONFIG_BURST_MAX == P53_RX_MAX, "dataplane.burst and the worker's rx array");

static volatile sig_atomic_t got_stop;
static volatile sig_atomic_t got_hup;
static volatile int workers_stop;

static void on_signal(int sig)
{
	if (sig == SIGTERM || sig == SIGINT)
		got_stop = 1;
	else if (sig == SIGHUP)
		got_hup = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: pop53d -c FILE [--log-level err|warn|info|debug]\n"
		   "       pop53d --check-config FILE\n"
		   "       pop53d --version\n");
}

static int check_config(const char *path)
{
	struct p53_check_result res;
	char err[1024];

	if (p53_config_check(path, &res, err, sizeof(err), NULL, NULL) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("%s: ok (%d zone(s), %" PRIu32 " records, image %zu bytes", path, res.zones,
	       res.records, res.image_bytes);
	if (res.variants_signed > 0)
		printf("; %" PRIu32 " steering variant(s), %" PRIu32 " signed in %.3f ms", res.variants,
		       res.variants_signed, (double)res.sign_ns / 1e6);
	printf(")\n");
	return 0;
}

/*
 * EAL argv: ours, then the config's. No hugepages on this host (scripts/deps.sh leaves
 * /run/pop53/no-huge) means --no-huge -m 512. DPDK 22.11 refuses --no-huge together with
 * --in-memory, which the shipped configs use so that instances share no files; with
 * --no-huge that becomes --no-shconf, which keeps that property.
 */
static int eal_args(const struct p53_config *cfg, char **argv, int max)
{
	int n = 0;
	int no_huge = 0, has_mem = 0, in_memory = 0;

	for (int i = 0; i < cfg->n_eal; i++) {
		no_huge |= strcmp(cfg->eal[i], "--no-huge") == 0;
		has_mem |= strcmp(cfg->eal[i], "-m") == 0 || strncmp(cfg->eal[i], "--socket-mem", 12) == 0;
		in_memory |= strcmp(cfg->eal[i], "--in-memory") == 0;
	}
	int add_no_huge = !no_huge && !has_mem && access("/run/pop53/no-huge", F_OK) == 0;
	if (add_no_huge)
		p53_warn("no hugepages on this host (scripts/deps.sh said so): running with --no-huge -m 512");
	argv[n++] = "pop53d";
	for (int i = 0; i < cfg->n_eal && n < max - 5; i++) {
		if (in_memory && (no_huge || add_no_huge) && strcmp(cfg->eal[i], "--in-memory") == 0) {
			p53_warn("EAL: --in-memory does not work with --no-huge; using --no-shconf instead");
			argv[n++] = "--no-shconf";
			continue;
		}
		argv[n++] = cfg->eal[i];
	}
	if (add_no_huge) {
		argv[n++] = "--no-huge";
		argv[n++] = "-m";
		argv[n++] = "512";
	}
	argv[n] = NULL;
	return n;
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

static void log_tcp(const struct p53_tcp *t)
{
	struct p53_tcp_stats s;
	char closed[512];
	size_t o = 0;

	if (!t->conf.enabled)
		return;
	p53_tcp_totals(t, &s);
	closed[0] = '\0';
	for (int i = 0; i < P53_TCP_CLOSE__MAX && o < sizeof(closed); i++)
		if (s.closed[i] != 0)
			o += (size_t)snprintf(closed + o, sizeof(closed) - o, " %s %" PRIu64,
					      p53_tcp_close_names[i], s.closed[i]);
	p53_info("tcp: accepted %" PRIu64 " refused %" PRIu64 " queries %" PRIu64 " responses %" PRIu64
		 "; closed:%s", s.accepted, s.refused[0] + s.refused[1] + s.refused[2] + s.refused[3],
		 s.queries, s.responses, closed[0] ? closed : " none");
}

static void check_heartbeats(struct p53_daemon *d)
{
	uint64_t hz = rte_get_tsc_hz(), now = rte_rdtsc();

	for (unsigned int i = 0; i < d->dp.n_workers; i++) {
		uint64_t hb = d->dp.workers[i].stats.heartbeat;
		if (hb != 0 && now > hb && now - hb > hz && now - d->hb_warned_tsc > 10 * hz) {
			p53_warn("worker %u: no heartbeat for %.1f s", i, (double)(now - hb) / (double)hz);
			d->hb_warned_tsc = now;
		}
	}
}

/* The control thread: control socket, SIGHUP, zone watching, heartbeats, health, orderly stop. */
/* Health's "zones fresh": a secondary zone no primary confirmed within SOA EXPIRE. */
static int zone_expired(void *arg, const char *zone, char *why, size_t len)
{
	const struct p53_daemon *d = arg;

	if (d->xfr == NULL || !p53_xfr_zone_expired(d->xfr, zone))
		return 0;
	snprintf(why, len, "no primary confirmed it within its SOA EXPIRE");
	return 1;
}

/*
 * The NSEC/NSEC3 the compiler makes and signs for steered owners (dnssec_build.c) are as old
 * as the last compile: recompile the zones (which re-signs them) once signature_refresh is
 * left of their signature_validity, as the steering table is re-signed; a failure is tried
 * again a minute later. Zones without steered owners and a key have none: no timer.
 */
static void denial_resign_tick(struct p53_daemon *d, uint64_t *signed_at)
{
	const struct p53_dnssec_conf *dc = &d->cfg.dnssec;
	uint64_t now = (uint64_t)time(NULL);
	char err[1024], note[512] = "";

	if (dc->n_keys == 0 || d->cfg.steer.n_records == 0 || dc->validity_s <= dc->refresh_s ||
	    now < *signed_at + (dc->validity_s - dc->refresh_s))
		return;
	p53_info("steering: re-signing the steered owners' NSEC/NSEC3: recompiling the zones "
		 "(signature_refresh %u s)", dc->refresh_s);
	if (p53_daemon_reload(d, P53_RELOAD_FULL, NULL, err, sizeof(err), note, sizeof(note)) == 0)
		*signed_at = now;
	else
		*signed_at = now + 60 - (dc->validity_s - dc->refresh_s);
}

static void *control_main(void *arg)
{
	struct p53_daemon *d = arg;
	char err[1024], note[512];
	uint64_t denial_signed_at = (uint64_t)time(NULL); /* the start's compile */

	while (!got_stop) {
		p53_ctl_poll(d, p53_health_wait_ms(&d->health, 50));
		p53_metrics_poll(d);
		p53_daemon_notify_drain(d);
		p53_xfr_tick(d);
		p53_dataplane_poll(&d->dp);
		p53_guard_tick(&d->guard, &d->cfg);
		p53_steer_tick(&d->steer, p53_mono_ms());
		denial_resign_tick(d, &denial_signed_at);
		if (got_hup) {
			got_hup = 0;
			/* The config read again; the zones whose files changed patched (all
			 * compiled when the config file changed: control/reload.c). */
			p53_info("SIGHUP: reloading config and zones");
			p53_daemon_reload(d, P53_RELOAD_CONFIG, NULL, err, sizeof(err), note,
					  sizeof(note));
		}
		/* Zones only: the changed files' zones are patched (control/reload.c). */
		if (p53_watch_due(&d->watch))
			p53_daemon_reload(d, 0, NULL, err, sizeof(err), note, sizeof(note));
		check_heartbeats(d);
		p53_health_tick(&d->health, d);
		p53_watchdog_tick(&d->watchdog, p53_mono_ms());
	}
	/* Orderly stop: withdraw (or drain) the anycast prefixes while the workers still serve,
	 * and keep serving until the announcers applied it and stop_linger passed; then the
	 * workers. The control socket stays up meanwhile (`pop53ctl health` shows it). */
	p53_watchdog_stopping();
	p53_info("stopping: withdrawing the anycast prefixes first");
	p53_health_stop(&d->health);
	while (!p53_health_stop_done(&d->health)) {
		p53_ctl_poll(d, p53_health_wait_ms(&d->health, 10));
		p53_metrics_poll(d);
		p53_dataplane_poll(&d->dp);
		p53_health_tick(&d->health, d);
		p53_watchdog_tick(&d->watchdog, p53_mono_ms());
	}
	p53_info("stopping: control socket closed, TCP and workers next");
	p53_ctl_close(d);
	p53_metrics_stop(d);
	/* TCP threads are RCU readers too: they leave before the replicas are freed. */
	p53_tcp_stop(&d->tcp);
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
	static struct p53_daemon d;
	const char *path = NULL;
	struct p53_worker *workers = NULL;
	unsigned int lcores[P53_MAX_WORKERS];
	char err[1024];
	char *eal_argv[P53_CONFIG_MAX_EAL + 8];
	size_t img_len = 0, n_zone_files = 0;
	char **zone_files = NULL;
	void *img = NULL;
	int rc = 1, opt;
	pthread_t ctl_thread;

	/* The zone compiler's big arrays (records, nodes, names: tens of MB each for a big zone)
	 * are then always mmap'd, so each free() gives its memory back at once. glibc's default
	 * threshold rises to the size of the last such block freed (up to 32 MB), after which the
	 * next reload's arrays come from the heap and stay there until malloc_trim: the reload's
	 * peak memory (docs/BENCHMARKS.md) then depends on the previous one. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);

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
	/* Before anything slow: a SIGHUP or SIGTERM during start-up must not kill us by default. */
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	p53_daemon_init(&d);
	p53_xfr_serve_init(&d.serve);
	/* What a zones-only reload compares against: the config file's text as read (read
	 * before and after the load: a change in between makes the next config reload full)
	 * and, after the compile, every zone's files as of before it (control/zone/zone_files.h). */
	const int64_t compiled_since = p53_file_clock_ns();
	if (path != NULL && p53_config_text_read(path, &d.cfg_text, &d.cfg_text_len) != 0)
		d.cfg_text = NULL;
	if (p53_config_load(path, &d.cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		free(d.cfg_text);
		return 1;
	}
	if (d.cfg_text != NULL) {
		char *again = NULL;
		size_t again_len = 0;
		if (p53_config_text_read(path, &again, &again_len) != 0 || again_len != d.cfg_text_len ||
		    memcmp(again, d.cfg_text, again_len) != 0) {
			free(d.cfg_text);
			d.cfg_text = NULL;
		}
		free(again);
	}
	const struct p53_config *cfg = &d.cfg;
	/* Secondary zones start from their disk copies (control/xfr/): served at once. */
	d.xfr = p53_xfr_new(cfg);
	if (d.xfr == NULL) {
		fprintf(stderr, "out of memory for the zone transfer state\n");
		goto out_cfg;
	}
	struct p53_zone_files before = { 0 };
	p53_daemon_zones_before(&d, cfg, &before);
	img = p53_xfr_compile(d.xfr, cfg, NULL, NULL, 0, &img_len, err, sizeof(err), &zone_files,
			      &n_zone_files);
	if (img == NULL) {
		fprintf(stderr, "%s\n", err);
		p53_zone_files_free(&before);
		goto out_cfg;
	}
	p53_daemon_zones_compiled(&d, zone_files, n_zone_files, compiled_since, &before);
	p53_zone_files_free(&before);
	p53_info("compiled %d zone(s): %" PRIu32 " records, %zu bytes (%.1f B/record)", cfg->n_zones,
		 p53_image_hdr(img)->n_records, img_len,
		 (double)img_len / (double)(p53_image_hdr(img)->n_records ? p53_image_hdr(img)->n_records : 1));

	int eal_argc = eal_args(cfg, eal_argv, (int)(sizeof(eal_argv) / sizeof(eal_argv[0])));
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		p53_err("EAL init failed: %s", rte_strerror(rte_errno));
		goto out_img;
	}

	if (rte_lcore_count() < cfg->workers) {
		p53_err("%u workers need %u lcores; the EAL has %u (dataplane.eal -l)", cfg->workers,
			cfg->workers, rte_lcore_count());
		goto out_eal;
	}
	/* Worker 0 runs on the main lcore, the others on the next worker lcores. */
	lcores[0] = rte_get_main_lcore();
	unsigned int lc = rte_get_main_lcore();
	for (unsigned int i = 1; i < cfg->workers; i++) {
		lc = rte_get_next_lcore(lc, 1, 0);
		lcores[i] = lc;
	}
	workers = rte_zmalloc("p53_workers", sizeof(*workers) * cfg->workers, RTE_CACHE_LINE_SIZE);
	if (workers == NULL) {
		p53_err("out of memory for workers");
		goto out_eal;
	}
	d.notify_ring = rte_ring_create_elem("p53_notify", sizeof(struct p53_notify_event),
					     P53_NOTIFY_RING_SIZE, (int)rte_socket_id(), RING_F_SC_DEQ);
	if (d.notify_ring == NULL) {
		p53_err("cannot create the NOTIFY ring: %s", rte_strerror(rte_errno));
		goto out_workers;
	}
	if (p53_port_open(&d.port, cfg, lcores) != 0)
		goto out_workers;
	for (unsigned int i = 0; i < cfg->workers; i++) {
		struct p53_worker *w = &workers[i];
		w->index = i;
		w->lcore = lcores[i];
		w->port = d.port.id;
		w->queue = (uint16_t)i;
		w->tx_offload = d.port.tx_offload;
		memcpy(w->mac, d.port.mac, sizeof(w->mac));
		w->idle_adaptive = cfg->idle == P53_IDLE_ADAPTIVE;
		w->idle_max_us = cfg->idle_max_us;
		w->idle_spin_polls = cfg->idle_spin_polls;
		w->burst = (uint16_t)cfg->burst;
		if (cfg->answer_cache != 0) {
			/* dataplane.answer_cache: the worker's own, on its socket (qcache.h) */
			int sock = (int)rte_lcore_to_socket_id(w->lcore);
			w->qcache = rte_malloc_socket("p53_qcache", p53_qcache_size(cfg->answer_cache),
						      RTE_CACHE_LINE_SIZE, sock);
			if (w->qcache == NULL || p53_qcache_init(w->qcache, cfg->answer_cache) != 0) {
				p53_err("out of memory for worker %u's answer cache (%u entries)", i,
					cfg->answer_cache);
				goto out_port;
			}
		}
		w->stop = &workers_stop;
		w->notify_ring = d.notify_ring;
	}
	/* dpdk mode: the kernel's traffic goes through the exception interface, which must be up
	 * (with the service addresses the TCP threads listen on) before anything is served. */
	if (cfg->mode == P53_MODE_DPDK &&
	    (p53_exc_open(&d.exc, cfg, &d.port, workers, cfg->workers, err, sizeof(err)) != 0 ||
	     p53_exc_start(&d.exc, err, sizeof(err)) != 0)) {
		p53_err("%s", err);
		goto out_port;
	}
	if (p53_dataplane_init(&d.dp, workers, cfg->workers, cfg->tcp.enabled ? cfg->tcp.threads : 0,
			       cfg->replicas) != 0) {
		p53_err("out of memory for RCU");
		goto out_port;
	}
	d.dp.payload_limit = d.port.max_payload;
	snprintf(d.dp.payload_why, sizeof(d.dp.payload_why), "%s", d.port.max_payload_why);
	int published = p53_dataplane_publish(&d.dp, img, img_len, cfg, err, sizeof(err)) == 0;
	img = NULL; /* the data plane took it, published or not */
	if (!published) {
		p53_err("%s", err);
		goto out_dp;
	}
	struct p53_guard_next guard_next;
	p53_guard_pub_init(&d.guard, workers, cfg->workers, d.dp.qsbr);
	if (p53_guard_prepare(&d.guard, cfg, &guard_next, err, sizeof(err)) != 0) {
		p53_err("%s", err);
		goto out_dp;
	}
	p53_guard_commit(&d.guard, &guard_next);
	struct p53_steer_next steer_next;
	p53_steer_pub_init(&d.steer, &d.dp.steer, d.dp.qsbr, &d.cfg.steer, &d.cfg.dnssec);
	if (p53_steer_prepare(&d.steer, &d.cfg.steer, &d.cfg.dnssec, &steer_next, err, sizeof(err)) != 0) {
		p53_err("%s", err);
		goto out_dp;
	}
	p53_steer_commit(&d.steer, &steer_next);
	if (p53_health_attach(&d.health, &d, err, sizeof(err)) != 0 ||
	    p53_health_start(&d.health, &d, err, sizeof(err)) != 0) {
		p53_err("%s", err);
		goto out_dp;
	}
	p53_health_zone_expiry(&d.health, zone_expired, &d);

	if (p53_xfr_start(&d) != 0)
		goto out_dp;
	if (p53_ctl_listen(&d.ctl, cfg->control_socket, cfg->control_group, err, sizeof(err)) != 0) {
		p53_err("%s", err);
		goto out_dp;
	}
	if (cfg->watch_zones &&
	    p53_watch_set(&d.watch, zone_files, n_zone_files, cfg->watch_debounce_ms) != 0)
		goto out_ctl;
	if (cfg->metrics_enabled && p53_metrics_start(&d, err, sizeof(err)) != 0) {
		p53_err("%s", err);
		goto out_watch;
	}
	p53_telemetry_register(&d);
	if (d.test_hooks)
		p53_warn("POP53_TEST_HOOKS=1: test commands are enabled (never in production)");
	p53_watchdog_init(&d.watchdog);
	if (p53_tcp_start(&d.tcp, &cfg->tcp, cfg->addrs, cfg->n_addrs, &d.dp, d.notify_ring,
			  &d.serve, err, sizeof(err)) != 0) {
		p53_err("%s", err);
		goto out_metrics;
	}
	if (rte_ctrl_thread_create(&ctl_thread, "p53-control", NULL, control_main, &d) != 0) {
		p53_err("cannot start the control thread");
		goto out_metrics;
	}
	for (unsigned int i = 1; i < cfg->workers; i++)
		rte_eal_remote_launch(p53_worker_main, &workers[i], workers[i].lcore);
	p53_info("ready: %s (%s mode) serving %d zone(s) with %u worker(s), identity '%s', control socket %s",
		 d.port.name, cfg->mode == P53_MODE_DPDK ? "dpdk" : "xdp", cfg->n_zones, cfg->workers,
		 cfg->identity, cfg->control_socket);
	p53_watchdog_ready();
	p53_worker_main(&workers[0]);
	rte_eal_mp_wait_lcore();
	pthread_join(ctl_thread, NULL);

	/* d.dp, not d.cfg: a reload may have read a different worker count (applied only at
	 * the next restart). */
	for (unsigned int i = 0; i < d.dp.n_workers; i++)
		log_worker(&workers[i]);
	log_tcp(&d.tcp);
	p53_port_log_xstats(&d.port);
	rc = 0;
out_metrics:
	p53_telemetry_unregister();
	p53_metrics_stop(&d);
	p53_tcp_free(&d.tcp); /* stopped already, except on a failed start */
out_watch:
	p53_watch_close(&d.watch);
out_ctl:
	p53_ctl_close(&d);
out_dp:
	/* The transfer threads stop first: nothing they do touches the data plane. Disk copies
	 * behind what is served (xfr.copy_sync_s) are written from the image before it goes. */
	p53_xfr_shutdown(&d);
	p53_xfr_free(d.xfr);
	d.xfr = NULL;
	/* The workers have stopped: the canary's mbufs go back before the port counts them. */
	p53_health_fini(&d.health);
	p53_guard_pub_fini(&d.guard);
	p53_steer_pub_fini(&d.steer);
	p53_dataplane_fini(&d.dp);
out_port:
	/* The exception rings hold the workers' mbufs: back to their pools before the check. */
	p53_exc_stop(&d.exc);
	p53_port_close(&d.port);
	p53_exc_close(&d.exc);
out_workers:
	rte_ring_free(d.notify_ring);
	for (unsigned int i = 0; workers != NULL && i < cfg->workers; i++)
		rte_free(workers[i].qcache);
	rte_free(workers);
out_eal:
	rte_eal_cleanup();
out_img:
	free(img);
	p53_image_files_free(zone_files, n_zone_files);
	p53_zone_files_clear(&d.zfiles);
out_cfg:
	p53_xfr_free(d.xfr);
	p53_xfr_serve_fini(&d.serve); /* the TCP threads that read it are gone */
	p53_config_free(&d.cfg);
	free(d.cfg_text);
	p53_info("exit %d", rc);
	return rc;
}
