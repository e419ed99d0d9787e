/*
 * The main() of every fuzz target when no fuzzer is linked, as BIND's fuzz targets do: it
 * replays a committed corpus (tests/fuzz/<target>.in/) and a fixed number of deterministic
 * mutations of each file through LLVMFuzzerTestOneInput(), so `meson test` runs every target
 * on every change. A target includes this after defining LLVMFuzzerTestOneInput(),
 * FUZZ_NAME and FUZZ_MAX_LEN.
 *
 * Built with -fsanitize=fuzzer (scripts/fuzz.sh, meson -Dfuzzer=true) libFuzzer brings its
 * own main() and P53_LIBFUZZER leaves this one out. A target may define FUZZ_REPORT() (a
 * statement printing its own figures after the summary).
 */
#ifndef P53_FUZZ_MAIN_H
#define P53_FUZZ_MAIN_H

#ifndef P53_LIBFUZZER
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fuzz_rng = 0x9e3779b97f4a7c15u;

static uint64_t fuzz_next(void)
{
	fuzz_rng ^= fuzz_rng << 13;
	fuzz_rng ^= fuzz_rng >> 7;
	fuzz_rng ^= fuzz_rng << 17;
	return fuzz_rng;
}

/* One deterministic mutation: flip a bit, overwrite a byte, truncate, grow, or (where
 * parsers go wrong most) overwrite one of the first 12 bytes. */
static size_t fuzz_mutate(uint8_t *b, size_t len, size_t max)
{
	switch (fuzz_next() % 5) {
	case 0:
		if (len > 0)
			b[fuzz_next() % len] ^= (uint8_t)(1u << (fuzz_next() % 8));
		break;
	case 1:
		if (len > 0)
			b[fuzz_next() % len] = (uint8_t)fuzz_next();
		break;
	case 2:
		if (len > 0)
			len = fuzz_next() % len;
		break;
	case 3:
		if (len < max)
			b[len++] = (uint8_t)fuzz_next();
		break;
	default:
		if (len >= 12)
			b[2 + fuzz_next() % 10] = (uint8_t)fuzz_next();
		break;
	}
	return len;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : NULL;
	unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
	static uint8_t seed[FUZZ_MAX_LEN], b[FUZZ_MAX_LEN];
	size_t files = 0, runs = 0;
	struct dirent *e;
	DIR *d;

	if (dir == NULL || (d = opendir(dir)) == NULL) {
		fprintf(stderr, "%s: usage: %s CORPUS_DIR [ROUNDS]\n", FUZZ_NAME, argv[0]);
		return 1;
	}
	while ((e = readdir(d)) != NULL) {
		char path[1024];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		if (f == NULL)
			continue;
		size_t len = fread(seed, 1, sizeof(seed), f);
		fclose(f);
		files++;
		LLVMFuzzerTestOneInput(seed, len);
		runs++;
		for (unsigned long r = 0; r < rounds; r++) {
			size_t l = len;
			memcpy(b, seed, len);
			for (int k = 1 + (int)(fuzz_next() % 4); k > 0; k--)
				l = fuzz_mutate(b, l, sizeof(b));
			LLVMFuzzerTestOneInput(b, l);
			runs++;
		}
	}
	closedir(d);
	printf("%s: %zu corpus files, %zu inputs, 0 crashes", FUZZ_NAME, files, runs);
#ifdef FUZZ_REPORT
	FUZZ_REPORT();
#endif
	printf("\n");
	return files > 0 ? 0 : 1;
}
#endif

#endif /* P53_FUZZ_MAIN_H */
