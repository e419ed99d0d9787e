/*
 * p53-steer-compile: what compiling a config's steering sources costs, through the entry
 * points pop53d's publisher calls (control/steer/steer_pub.c): p53_config_load,
 * p53_steer_sources_load (map JSON and MMDB walks into blocks), p53_steer_build (decisions,
 * variants, the one table every worker reads). Every target is up.
 *
 * Usage: p53-steer-compile CONFIG.yaml
 * Prints one line of key=value: load_s build_s (CLOCK_MONOTONIC), cpu_s (user + system time
 * of both, getrusage: less disturbed than wall time on a shared machine), the blocks and locations
 * per source, table_bytes (the published table; one copy is shared by every worker, so this
 * is also the bytes per replica) and peak_rss_kb (getrusage, the whole process).
 * Control-side tool; no DPDK.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "control/conf/config.h"
#include "control/steer/steer_build.h"

static double cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct p53_config cfg;
	struct p53_steer_sources src;
	struct rusage ru;
	char err[1024];
	size_t len = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: p53-steer-compile CONFIG.yaml\n");
		return 2;
	}
	if (p53_config_load(argv[1], &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "p53-steer-compile: %s\n", err);
		return 1;
	}
	double c0 = cpu(), t0 = now();
	if (p53_steer_sources_load(&cfg.steer, &src, err, sizeof(err)) != 0) {
		fprintf(stderr, "p53-steer-compile: %s\n", err);
		return 1;
	}
	double t1 = now();
	void *t = p53_steer_build(&cfg.steer, &src, NULL, &len, err, sizeof(err));
	double t2 = now(), c2 = cpu();
	if (t == NULL) {
		fprintf(stderr, "p53-steer-compile: %s\n", err);
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("load_s=%.3f build_s=%.3f cpu_s=%.3f", t1 - t0, t2 - t1, c2 - c0);
	static const char *const name[P53_STEER_SRCS] = { "map", "geo", "any", "client", "asn" };
	for (int k = 0; k < P53_STEER_SRCS; k++)
		if (src.src[k].n4 + src.src[k].n6 > 0)
			printf(" %s_blocks4=%u %s_blocks6=%u %s_locs=%u", name[k], src.src[k].n4, name[k],
			       src.src[k].n6, name[k], src.src[k].n_locs);
	printf(" table_bytes=%zu peak_rss_kb=%ld\n", len, ru.ru_maxrss);
	free(t);
	p53_steer_sources_free(&src);
	p53_config_free(&cfg);
	return 0;
}
