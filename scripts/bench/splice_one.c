/*
 * p53-splice-one: what a change the IXFR patch declines costs pop53d's control thread for a
 * small zone beside a big one, compiled in full (every zone, as before round 26) against
 * spliced (the zone compiled alone, the patch tried and declined, the zone's image spliced
 * into the running one: control/zone/zone_repatch.c p53_zone_repatch, image_splice.c).
 *
 * Usage: p53-splice-one BIG_ZONE_FILE [runs]   (BIG_ZONE_FILE: genzone.py's big.test.)
 *
 * The small zone (small.test., 10 names) beside big.test. gets the change the patch declines
 * on main: it turns signed (an RRSIG added at www: "the zone's DNSSEC state changes
 * (unsigned to signed: RRSIG records at www.small.test.)"). Per run, each timed in CPU ms of this process (CLOCK_PROCESS_CPUTIME_ID) and
 * wall ms: full = p53_image_build() of both zones with the new content; splice =
 * p53_zone_repatch() of the small zone onto the image of the old content (compile alone,
 * read, diff, patch declined, splice); splice_only = p53_image_splice() given the small
 * zone's image. The spliced image must pass p53_image_check and serve the new content's
 * SOA serial (exit 1 if not). Prints the medians and both images' bytes. Then the patch
 * index (patch_index.h) after the splice, in CPU ms: index_made = its target part made
 * from the spliced image (the pass over the image's nodes the next IXFR's patch made before
 * round 27), index_handed = p53_patch_index_spliced() of an index of the running image
 * (what pop53d does since).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control/zone/image_build.h"
#include "control/zone/image_splice.h"
#include "control/zone/patch_index.h"
#include "control/zone/zone_repatch.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

#define SIG "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw=="
static const char *SMALL =
	"$ORIGIN small.test.\n$TTL 300\n"
	"@ SOA ns hostmaster %u 7200 3600 1209600 300\n@ NS ns\nns A 192.0.2.53\n"
	"www A 192.0.2.80\nmail A 192.0.2.25\n@ MX 10 mail\nalias CNAME www\n"
	"a A 192.0.2.1\nb A 192.0.2.2\nc A 192.0.2.3\nd TXT \"d\"\n%s";

static double now_ms(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static char *small_file(unsigned serial, bool sgn)
{
	char *path = strdup("/tmp/p53-splice-one.XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (f == NULL) {
		perror("p53-splice-one: tmp file");
		exit(2);
	}
	fprintf(f, SMALL, serial, sgn ? "www RRSIG A 13 3 300 20300101000000 20250101000000 4242 "
				       "small.test. " SIG "\n" : "");
	fclose(f);
	return path;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: p53-splice-one BIG_ZONE_FILE [runs]\n");
		return 2;
	}
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	if (runs < 1 || runs > 100)
		runs = 5;
	char *old = small_file(1, false), *new = small_file(2, true);
	struct p53_zone_src srcs[2] = {
		{ .name = "big.test.", .file = argv[1], .flags = P53_ZONE_SECONDARY },
		{ .name = "small.test.", .file = old },
	};
	char err[1024], why[512];
	size_t len = 0, flen = 0, slen = 0, olen = 0;
	void *img = p53_image_build(srcs, 2, &len, err, sizeof(err), quiet, NULL);
	if (img == NULL) {
		fprintf(stderr, "p53-splice-one: %s\n", err);
		return 1;
	}
	srcs[1].file = new;
	double full[100], full_cpu[100], sp[100], sp_cpu[100], so_cpu[100];
	void *fresh = NULL, *spliced = NULL;
	for (int r = 0; r < runs; r++) {
		double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
		free(fresh);
		fresh = p53_image_build(srcs, 2, &flen, err, sizeof(err), quiet, NULL);
		full[r] = now_ms(CLOCK_MONOTONIC) - w0;
		full_cpu[r] = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		if (fresh == NULL) {
			fprintf(stderr, "p53-splice-one: %s\n", err);
			return 1;
		}
		w0 = now_ms(CLOCK_MONOTONIC);
		c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
		free(spliced);
		spliced = NULL;
		enum p53_repatch rc = p53_zone_repatch(img, &srcs[1], false, NULL, &spliced, &slen,
						       NULL, why, sizeof(why), err, sizeof(err),
						       quiet, NULL, NULL, NULL);
		sp[r] = now_ms(CLOCK_MONOTONIC) - w0;
		sp_cpu[r] = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		if (rc != P53_REPATCH_SPLICED) {
			fprintf(stderr, "p53-splice-one: not spliced (%d): %s%s\n", rc, why, err);
			return 1;
		}
		void *one = p53_image_build(&srcs[1], 1, &olen, err, sizeof(err), quiet, NULL);
		c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
		char why2[512];
		void *again = p53_image_splice(img, one, NULL, &olen, why2, sizeof(why2));
		if (again == NULL) {
			fprintf(stderr, "p53-splice-one: %s\n", why2);
			return 1;
		}
		so_cpu[r] = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		free(one);
		free(again);
	}
	const char *bad = NULL;
	if (p53_image_check(spliced, slen, &bad) != 0) {
		fprintf(stderr, "p53-splice-one: the spliced image fails the check: %s\n", bad);
		return 1;
	}
	uint8_t apex[] = "\5small\4test";
	uint32_t ai = p53_image_find(spliced, apex, sizeof(apex), p53_name_hash(apex, sizeof(apex)));
	if (ai == P53_NONE || p53_image_zone(spliced, p53_image_node(spliced, ai)->zone)->serial != 2) {
		fprintf(stderr, "p53-splice-one: the spliced image does not serve serial 2\n");
		return 1;
	}
	/* The patch index after the splice: made from the spliced image, or handed on. */
	double made_cpu[100], handed_cpu[100];
	const uint32_t z = p53_image_node(spliced, ai)->zone;
	for (int r = 0; r < runs; r++) {
		struct p53_patch_index *ix = p53_patch_index_new();
		((struct p53_image_hdr *)img)->generation = 1;
		if (ix == NULL || p53_patch_index_build(ix, img) != 0) {
			fprintf(stderr, "p53-splice-one: out of memory\n");
			return 1;
		}
		double c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
		if (p53_patch_index_targets_build(ix, spliced) != 0)
			return 1;
		made_cpu[r] = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		p53_patch_index_reset(ix);
		if (p53_patch_index_build(ix, img) != 0)
			return 1;
		c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
		if (p53_patch_index_spliced(ix, img, spliced, z) != 0) {
			fprintf(stderr, "p53-splice-one: the index was not handed on\n");
			return 1;
		}
		handed_cpu[r] = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		p53_patch_index_free(ix);
	}
	printf("records=%u runs=%d patch_declined=\"%s\" full_ms=%.1f full_cpu_ms=%.1f "
	       "splice_ms=%.1f splice_cpu_ms=%.1f splice_only_cpu_ms=%.2f image_bytes=%zu "
	       "full_image_bytes=%zu spliced_image_bytes=%zu garbage_kib=%u "
	       "index_made_cpu_ms=%.2f index_handed_cpu_ms=%.3f\n",
	       p53_image_hdr(img)->n_records, runs, why, median(full, runs), median(full_cpu, runs),
	       median(sp, runs), median(sp_cpu, runs), median(so_cpu, runs), len, flen, slen,
	       p53_image_hdr(spliced)->pad / 1024, median(made_cpu, runs), median(handed_cpu, runs));
	free(img);
	free(fresh);
	free(spliced);
	unlink(old);
	unlink(new);
	free(old);
	free(new);
	return 0;
}
