/*
 * p53-journal-store: what keeping a secondary zone's IXFR journal file costs the disk job per
 * applied IXFR, with the journal at its bound (xfr.journal_max_bytes), in the two ways pop53
 * has written it (control/xfr/journal.c):
 *   rewrite  the whole file after each step (p53_journal_write: temporary file, fsync, rename),
 *            what pop53 did before the journal was appended to;
 *   append   p53_journal_store, as the disk job does now: the step appended and fsync'd, the
 *            file rewritten (compacted) when appending would take it past 2 * max_bytes.
 * Each step is like scripts/bench/xfr.sh's IXFR (100 changes): the two SOAs, CHANGES A records
 * deleted and CHANGES added (names hostNNNNNN.region0.big.test.). The journal is first filled
 * in memory to its bound; each run then pushes one more step (the oldest going) and writes it.
 *
 * With COPY_RECORDS > 0, the whole disk job per applied IXFR too, with a disk copy (master
 * file, store.c) of a zone of COPY_RECORDS records (the SOA and A records like the steps'):
 *   job-copy  xfr.copy_sync_s: 0 (what pop53 did before the lazy copy): the step appended,
 *             then the whole copy rewritten (p53_store_write: temporary file, fsync, rename);
 *   job-lazy  the lazy copy (default copy_sync_s 300): the step appended, the copy's mtime
 *             touched (p53_store_touch); the copy is written once per copy_sync_s instead
 *             (its cost is job-copy's minus the append).
 *
 * Usage: p53-journal-store DIR [REWRITE_RUNS [APPEND_STEPS [MAX_BYTES [CHANGES
 *                              [COPY_RECORDS [COPY_RUNS]]]]]]
 *   (defaults 20, 4096, 16777216, 50, 0, 3). DIR must be on the disk being measured (not tmpfs).
 * Prints one line per mode: runs, bytes written per step (mean), ms per step (median, p99 and
 * mean: the mean of append includes its compactions), compactions.
 * Control-side tool; no DPDK.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control/xfr/journal.h"
#include "control/xfr/store.h"

static const uint8_t APEX[] = "\003big\004test";

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void soa(struct p53_rrs *r, uint32_t serial)
{
	uint8_t rd[] = { 2, 'n', 's', 0, 4, 'h', 'o', 's', 't', 0, 0, 0, 0, 0, 0, 0, 0x0e, 0x10,
			 0, 0, 0x02, 0x58, 0, 0x01, 0x51, 0x80, 0, 0, 0x01, 0x2c };

	rd[10] = (uint8_t)(serial >> 24);
	rd[11] = (uint8_t)(serial >> 16);
	rd[12] = (uint8_t)(serial >> 8);
	rd[13] = (uint8_t)serial;
	if (p53_rrs_add(r, APEX, sizeof(APEX), 6, 1, 300, rd, sizeof(rd)) != 0)
		abort();
}

static void host(struct p53_rrs *r, uint32_t n, uint8_t last)
{
	uint8_t name[64], a[4] = { 198, 18, (uint8_t)(n >> 8), last };
	int l = snprintf((char *)name + 1, sizeof(name) - 1, "host%06u", n % 1000000);

	name[0] = (uint8_t)l;
	memcpy(name + 1 + l, "\007region0\003big\004test", 18);
	if (p53_rrs_add(r, name, (size_t)l + 1 + 18, 1, 1, 300, a, 4) != 0)
		abort();
}

static void push(struct p53_journal *j, uint32_t from, unsigned int changes, uint64_t max)
{
	struct p53_ixfr d = { 0 };
	struct p53_ixfr_step *s = p53_ixfr_push(&d);

	if (s == NULL)
		abort();
	s->from = from;
	s->to = from + 1;
	soa(&s->del, from);
	soa(&s->add, from + 1);
	for (unsigned int i = 0; i < changes; i++) {
		host(&s->del, from * changes + i, (uint8_t)from);
		host(&s->add, from * changes + i, (uint8_t)(from + 1));
	}
	if (p53_journal_push(j, &d, max) != 0)
		abort();
	p53_ixfr_free(&d);
}

static void report(const char *mode, double *ms, size_t n, double bytes, unsigned int compactions)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += ms[i];
	qsort(ms, n, sizeof(*ms), dcmp);
	printf("mode=%s steps=%zu bytes_per_step=%.0f ms_median=%.3f ms_p99=%.3f ms_mean=%.3f "
	       "compactions=%u\n", mode, n, bytes / (double)n, ms[n / 2], ms[(n * 99) / 100],
	       sum / (double)n, compactions);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [REWRITE_RUNS [APPEND_STEPS [MAX_BYTES [CHANGES "
			"[COPY_RECORDS [COPY_RUNS]]]]]]\n", argv[0]);
		return 2;
	}
	size_t rewrite_runs = argc > 2 ? strtoul(argv[2], NULL, 10) : 20;
	size_t append_steps = argc > 3 ? strtoul(argv[3], NULL, 10) : 4096;
	uint64_t max = argc > 4 ? strtoull(argv[4], NULL, 10) : UINT64_C(16) << 20;
	unsigned int changes = argc > 5 ? (unsigned int)strtoul(argv[5], NULL, 10) : 50;
	size_t copy_records = argc > 6 ? strtoul(argv[6], NULL, 10) : 0;
	size_t copy_runs = argc > 7 ? strtoul(argv[7], NULL, 10) : 3;
	char path[4096], err[512];
	struct p53_journal j = { 0 };
	uint32_t serial = 1;

	if (rewrite_runs == 0 || append_steps == 0) {
		fprintf(stderr, "runs must be > 0\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/p53-journal-bench.zone.journal", argv[1]);
	while (j.bytes + 2 * (j.n > 0 ? j.steps[0]->del.len : 0) <= max)
		push(&j, serial++, changes, max);
	printf("journal: %zu steps, %zu bytes of records (max_bytes %llu), step %zu bytes, "
	       "%u changes\n", j.n, j.bytes, (unsigned long long)max,
	       j.steps[0]->del.len + j.steps[0]->add.len, 2 * changes);

	double *ms = calloc(rewrite_runs > append_steps ? rewrite_runs : append_steps, sizeof(*ms));
	double bytes = 0;
	if (ms == NULL)
		return 1;
	/* Before: the whole file after each step. */
	for (size_t i = 0; i < rewrite_runs; i++) {
		push(&j, serial++, changes, max);
		uint64_t w = 13 + sizeof(APEX);
		for (size_t k = 0; k < j.n; k++)
			w += 28 + j.steps[k]->del.len + j.steps[k]->add.len + 4;
		double t0 = now_ms();
		if (p53_journal_write(path, APEX, sizeof(APEX), j.steps, j.n, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		ms[i] = now_ms() - t0;
		bytes += (double)w;
	}
	report("rewrite", ms, rewrite_runs, bytes, (unsigned int)rewrite_runs);
	/* After: appended, compacted past 2 * max. The first store writes the file as it is. */
	struct p53_jfile f = { 0 };
	uint64_t w;
	unsigned int compactions = 0;
	if (p53_journal_store(path, APEX, sizeof(APEX), j.steps, j.n, j.epoch, max, &f, &w, err,
			      sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	bytes = 0;
	for (size_t i = 0; i < append_steps; i++) {
		push(&j, serial++, changes, max);
		double t0 = now_ms();
		int how = p53_journal_store(path, APEX, sizeof(APEX), j.steps, j.n, j.epoch, max, &f,
					    &w, err, sizeof(err));
		ms[i] = now_ms() - t0;
		if (how < 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		compactions += how == P53_JSTORE_REWRITE;
		bytes += (double)w;
	}
	report("append", ms, append_steps, bytes, compactions);
	if (copy_records > 0 && copy_runs > 0) {
		/* The whole disk job: the step appended, then the copy written or only touched. */
		char copy[4096];
		struct p53_rrs zone = { 0 };
		struct stat st;
		snprintf(copy, sizeof(copy), "%s/p53-journal-bench.zone", argv[1]);
		soa(&zone, serial);
		for (size_t i = 1; i < copy_records; i++)
			host(&zone, (uint32_t)i, 1);
		size_t lazy_runs = append_steps < 200 ? append_steps : 200;
		double *jm = calloc(lazy_runs > copy_runs ? lazy_runs : copy_runs, sizeof(*jm));
		if (jm == NULL)
			return 1;
		for (int lazy = 0; lazy < 2; lazy++) {
			size_t runs = lazy ? lazy_runs : copy_runs;
			bytes = 0;
			compactions = 0;
			for (size_t i = 0; i < runs; i++) {
				push(&j, serial++, changes, max);
				double t0 = now_ms();
				int how = p53_journal_store(path, APEX, sizeof(APEX), j.steps, j.n, j.epoch,
							    max, &f, &w, err, sizeof(err));
				if (how < 0 || (!lazy && p53_store_write(copy, "big.test.", &zone, err,
									 sizeof(err)) != 0)) {
					fprintf(stderr, "%s\n", err);
					return 1;
				}
				if (lazy)
					p53_store_touch(copy);
				jm[i] = now_ms() - t0;
				compactions += how == P53_JSTORE_REWRITE;
				bytes += (double)w;
				if (!lazy && stat(copy, &st) == 0)
					bytes += (double)st.st_size;
			}
			if (!lazy && stat(copy, &st) == 0)
				printf("copy: %zu records, %lld bytes\n", copy_records, (long long)st.st_size);
			report(lazy ? "job-lazy" : "job-copy", jm, runs, bytes, compactions);
		}
		unlink(copy);
		p53_rrs_free(&zone);
		free(jm);
	}
	unlink(path);
	p53_journal_clear(&j);
	free(ms);
	return 0;
}
