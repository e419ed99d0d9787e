/* Prometheus endpoint and DPDK telemetry; see metrics.h. */
#include <arpa/inet.h>
#include <pthread.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "control/daemon.h"
#include "control/log.h"
#include "control/ops/metrics.h"
#include "control/ops/counters.h"
#include "dataplane/image.h"
#include "control/text.h"

/* DPDK telemetry callbacks take no context argument, so the daemon they read is this one
 * pointer; it is taken away under the lock before the workers are freed at exit. */
static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct p53_daemon *tel_daemon;

/* Prometheus text format: a label value escapes backslash, double quote and newline. */
static void label_value(FILE *f, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f), fputc(*v, f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

struct prom {
	FILE *f;
	const struct p53_family *last;
};

static void prom_series(void *arg, const struct p53_family *fam, const char *label, uint64_t v)
{
	struct prom *p = arg;

	if (fam != p->last) {
		family(p->f, fam->prom, fam->type == P53_GAUGE ? "gauge" : "counter", fam->help);
		p->last = fam;
	}
	fputs(fam->prom, p->f);
	if (label != NULL) {
		fprintf(p->f, "{%s=\"", fam->label);
		label_value(p->f, label);
		fputs("\"}", p->f);
	}
	fprintf(p->f, " %" PRIu64 "\n", v);
}

char *p53_metrics_text(struct p53_daemon *d)
{
	struct p53_totals t;
	struct p53_port_totals pt;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct prom p = { .f = f };

	if (f == NULL)
		return NULL;
	p53_daemon_totals(d, &t);
	p53_daemon_port_totals(d, &pt);
	family(f, "pop53_up", "gauge", "1 while pop53d serves");
	fputs("pop53_up{identity=\"", f);
	label_value(f, d->cfg.identity);
	fprintf(f, "\",version=\"%s\"} 1\n", P53_VERSION);
	family(f, "pop53_uptime_seconds", "gauge", "seconds since start");
	fprintf(f, "pop53_uptime_seconds %ld\n", (long)(time(NULL) - d->started));
	struct p53_rrl_top top;
	p53_rrl_top(&d->guard, &top);
	p53_counters_walk(&t, &pt, &top, prom_series, &p);
	p53_health_walk(&d->health, prom_series, &p);
	p53_steer_walk(&d->steer, prom_series, &p);

	family(f, "pop53_worker_rx_packets_total", "counter", "frames received, per worker");
	for (unsigned int i = 0; i < d->dp.n_workers; i++)
		fprintf(f, "pop53_worker_rx_packets_total{worker=\"%u\",lcore=\"%u\"} %" PRIu64 "\n", i,
			d->dp.workers[i].lcore, d->dp.workers[i].stats.rx);
	family(f, "pop53_worker_heartbeat_age_seconds", "gauge", "time since the worker last polled");
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
	for (unsigned int i = 0; i < d->dp.n_workers; i++) {
		uint64_t hb = d->dp.workers[i].stats.heartbeat;
		fprintf(f, "pop53_worker_heartbeat_age_seconds{worker=\"%u\"} %.6f\n", i,
			hb != 0 && now > hb ? (double)(now - hb) / (double)hz : 0.0);
	}
	family(f, "pop53_control_refused_total", "counter", "control socket requests refused, by reason");
	fprintf(f, "pop53_control_refused_total{reason=\"busy\"} %" PRIu64 "\n", d->ctl.refused_busy);
	fprintf(f, "pop53_control_refused_total{reason=\"rate\"} %" PRIu64 "\n", d->ctl.refused_rate);

	family(f, "pop53_reloads_total", "counter", "reloads by result");
	fprintf(f, "pop53_reloads_total{result=\"ok\"} %" PRIu64 "\n", d->dp.reloads_ok);
	fprintf(f, "pop53_reloads_total{result=\"failed\"} %" PRIu64 "\n", d->dp.reloads_failed);
	if (d->dp.image != NULL) {
		const struct p53_image_hdr *h = p53_image_hdr(d->dp.image);
		family(f, "pop53_image_bytes", "gauge", "bytes of one replica");
		fprintf(f, "pop53_image_bytes %zu\n", d->dp.image_len);
		family(f, "pop53_records", "gauge", "records served");
		fprintf(f, "pop53_records %" PRIu32 "\n", h->n_records);
		family(f, "pop53_zone_serial", "gauge", "SOA serial of each served zone");
		for (uint32_t i = 0; i < h->n_zones; i++) {
			const struct p53_image_zone *z = p53_image_zone(d->dp.image, i);
			char name[1024];
			p53_name_to_str(name, sizeof(name), p53_image_name(d->dp.image, z->name_off));
			fputs("pop53_zone_serial{zone=\"", f);
			label_value(f, name);
			fprintf(f, "\"} %" PRIu32 "\n", z->serial);
		}
	}
	fclose(f);
	return buf;
}

static enum MHD_Result http_handler(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_len, void **state)
{
	struct p53_daemon *d = cls;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	unsigned int status = MHD_HTTP_OK;
	char *text = NULL;
	static const char notfound[] = "pop53: only /metrics is served\n";

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)state;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		ret = MHD_queue_response(conn, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	if (strcmp(url, "/metrics") == 0)
		text = p53_metrics_text(d);
	if (text == NULL) {
		status = MHD_HTTP_NOT_FOUND;
		resp = MHD_create_response_from_buffer(sizeof(notfound) - 1, (void *)notfound,
						       MHD_RESPMEM_PERSISTENT);
	} else {
		resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
		MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	}
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

int p53_metrics_start(struct p53_daemon *d, char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *s = d->cfg.metrics_listen, *colon = strrchr(s, ':');
	struct sockaddr_storage ss;
	unsigned int flags = MHD_USE_ERROR_LOG;
	uint16_t port = (uint16_t)atoi(colon + 1);

	memset(&ss, 0, sizeof(ss));
	if (s[0] == '[')
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s - 2), s + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		flags |= MHD_USE_IPv6;
	} else {
		snprintf(err, errlen, "metrics.listen %s: not an address:port", s);
		return -1;
	}
	/* No internal thread: served from the control loop (p53_metrics_poll). */
	d->metrics = MHD_start_daemon(flags, port, NULL, NULL, http_handler, d,
				      MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				      MHD_OPTION_CONNECTION_LIMIT, 16u,
				      MHD_OPTION_CONNECTION_TIMEOUT, 5u, MHD_OPTION_END);
	if (d->metrics == NULL) {
		snprintf(err, errlen, "metrics.listen %s: cannot listen (address in use?)", s);
		return -1;
	}
	p53_info("metrics: Prometheus endpoint on http://%s/metrics", s);
	return 0;
}

void p53_metrics_poll(struct p53_daemon *d)
{
	if (d->metrics != NULL)
		MHD_run(d->metrics);
}

void p53_metrics_stop(struct p53_daemon *d)
{
	if (d->metrics != NULL)
		MHD_stop_daemon(d->metrics);
	d->metrics = NULL;
}

/* Telemetry keys: the JSON key with dots as underscores, then "_" and the label. */
static void tel_series(void *arg, const struct p53_family *fam, const char *label, uint64_t v)
{
	char key[RTE_TEL_MAX_STRING_LEN];
	int n = snprintf(key, sizeof(key), "%s%s%s", fam->json, label != NULL ? "_" : "",
			 label != NULL ? label : "");

	if (n < 0 || (size_t)n >= sizeof(key))
		return;
	for (char *k = key; *k != '\0'; k++)
		if (*k == '.')
			*k = '_';
	rte_tel_data_add_dict_u64(arg, key, v);
}

static int tel_stats(const char *cmd, const char *params, struct rte_tel_data *out)
{
	struct p53_totals t;

	(void)cmd;
	(void)params;
	pthread_mutex_lock(&tel_lock);
	if (tel_daemon == NULL) {
		pthread_mutex_unlock(&tel_lock);
		return -1;
	}
	p53_daemon_totals(tel_daemon, &t);
	pthread_mutex_unlock(&tel_lock);
	rte_tel_data_start_dict(out);
	/* No RRL top list here: this thread must not read tables the control thread may free. */
	p53_counters_walk(&t, NULL, NULL, tel_series, out);
	return 0;
}

/* Fill a fresh dict from the daemon while holding tel_lock; -1 once the daemon is gone. */
static int tel_locked(struct rte_tel_data *out,
		      void (*fill)(const struct p53_daemon *d, struct rte_tel_data *out))
{
	pthread_mutex_lock(&tel_lock);
	if (tel_daemon == NULL) {
		pthread_mutex_unlock(&tel_lock);
		return -1;
	}
	rte_tel_data_start_dict(out);
	fill(tel_daemon, out);
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

static void fill_workers(const struct p53_daemon *d, struct rte_tel_data *out)
{
	for (unsigned int i = 0; i < d->dp.n_workers; i++) {
		char k[32];
		snprintf(k, sizeof(k), "worker%u_rx", i);
		rte_tel_data_add_dict_u64(out, k, d->dp.workers[i].stats.rx);
		snprintf(k, sizeof(k), "worker%u_tx", i);
		rte_tel_data_add_dict_u64(out, k, d->dp.workers[i].stats.tx);
	}
}

static void fill_health(const struct p53_daemon *d, struct rte_tel_data *out)
{
	p53_health_walk(&d->health, tel_series, out);
	p53_steer_walk(&d->steer, tel_series, out);
}

static int tel_workers(const char *cmd, const char *params, struct rte_tel_data *out)
{
	(void)cmd;
	(void)params;
	return tel_locked(out, fill_workers);
}

static int tel_health(const char *cmd, const char *params, struct rte_tel_data *out)
{
	(void)cmd;
	(void)params;
	return tel_locked(out, fill_health);
}

void p53_telemetry_unregister(void)
{
	pthread_mutex_lock(&tel_lock);
	tel_daemon = NULL;
	pthread_mutex_unlock(&tel_lock);
}

void p53_telemetry_register(struct p53_daemon *d)
{
	pthread_mutex_lock(&tel_lock);
	tel_daemon = d;
	pthread_mutex_unlock(&tel_lock);
	rte_telemetry_register_cmd("/pop53/stats", tel_stats, "pop53 totals: queries, rcodes, drops. No parameters");
	rte_telemetry_register_cmd("/pop53/workers", tel_workers, "pop53 per-worker rx/tx. No parameters");
	rte_telemetry_register_cmd("/pop53/health", tel_health, "pop53 health: node state, checks, announcers. No parameters");
}
