/*
 * Fuzz target for the whole per-packet path: a frame goes through p53_pkt_parse, and the
 * bytes (as a frame's DNS payload, and as a bare DNS message) through p53_answer over a real
 * compiled image (the differential test's zones).
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize=alignment -DP53_LIBFUZZER \
 *     -DP53_SRCDIR='"'$PWD'"' -D_GNU_SOURCE -I. $(pkg-config --cflags libdpdk) \
 *     tests/fuzz/fuzz_answer.c dataplane/{name,image,pkt,dnsmsg,answer}.c \
 *     control/zone/{image_build,zone_load}.c control/text.c -o fuzz $(pkg-config --libs libdpdk ldns)
 *   ./fuzz -max_len=1500 CORPUS_COPY/
 * Without a fuzzer, as BIND does, main() replays the committed corpus (tests/fuzz/corpus)
 * and a fixed number of deterministic mutations of it, so `meson test` runs it on every
 * change. Each input is answered as UDP (two buffer sizes) and as TCP (tcp_limit, 64 KiB
 * buffer). Invariants checked on every input: a response is 0 bytes (dropped) or at least a
 * header, never longer than the buffer it may use, keeps the query ID, has QR set, and holds
 * exactly the question and records its header counts.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/zone/image_build.h"
#include "dataplane/answer.h"
#include "dataplane/pkt.h"

#define CAP 1500

static void *img;
static struct p53_answer_conf conf = {
	.identity = (const uint8_t *)"fuzz", .identity_len = 4,
	.version = (const uint8_t *)"v", .version_len = 1, .edns_max_payload = 1232,
};
/* What control/tcp/ passes: no UDP size limit, the keepalive option answered. */
static struct p53_answer_conf tcp_conf = {
	.identity = (const uint8_t *)"fuzz", .identity_len = 4,
	.version = (const uint8_t *)"v", .version_len = 1, .edns_max_payload = 1232,
	.tcp_limit = 65535, .keepalive = 100,
};
static struct p53_answer_stats st;

static void load_image(void)
{
	char f1[512], f2[512], f3[512], f4[512], f5[512], err[512];
	size_t len;

	snprintf(f1, sizeof(f1), "%s/tests/differential/zones/diff.test.zone", P53_SRCDIR);
	snprintf(f2, sizeof(f2), "%s/tests/differential/zones/second.test.zone", P53_SRCDIR);
	/* signed zones: DO=1 queries in the corpus (d*.bin) reach the DNSSEC proofs */
	snprintf(f3, sizeof(f3), "%s/tests/unit/dataplane/zones/nsec.test.zone", P53_SRCDIR);
	snprintf(f4, sizeof(f4), "%s/tests/unit/dataplane/zones/nsec3.test.zone", P53_SRCDIR);
	snprintf(f5, sizeof(f5), "%s/tests/unit/dataplane/zones/optout.test.zone", P53_SRCDIR);
	struct p53_zone_src z[5] = {{.name = "diff.test.", .file = f1}, {.name = "second.test.", .file = f2},
				    {.name = "nsec.test.", .file = f3}, {.name = "nsec3.test.", .file = f4},
				    {.name = "optout.test.", .file = f5}};
	img = p53_image_build(z, 5, &len, err, sizeof(err), NULL, NULL);
	if (img == NULL) {
		fprintf(stderr, "fuzz: cannot compile the zones: %s\n", err);
		abort();
	}
}

/* The response is what its header says: the question when QDCOUNT is 1, then exactly the
 * counted records, ending at the returned length. */
static int wellformed(const uint8_t *m, uint16_t n)
{
	size_t off = 12;
	unsigned int qd = (unsigned int)(m[4] << 8 | m[5]);
	unsigned int rrs = (unsigned int)(m[6] << 8 | m[7]) + (unsigned int)(m[8] << 8 | m[9]) +
			   (unsigned int)(m[10] << 8 | m[11]);

	if (qd > 1)
		return 0;
	for (unsigned int i = 0; i < qd + rrs; i++) {
		for (;;) {
			if (off >= n)
				return 0;
			uint8_t l = m[off];
			if ((l & 0xc0) == 0xc0) {
				off += 2;
				break;
			}
			off += 1u + l;
			if (l == 0)
				break;
		}
		off += i < qd ? 4 : 10;
		if (off > n)
			return 0;
		if (i >= qd)
			off += (size_t)(m[off - 2] << 8 | m[off - 1]);
	}
	return off == n;
}

static void check_dns(const uint8_t *data, size_t size, uint16_t cap, const struct p53_answer_conf *cf)
{
	/* Exactly `size` bytes live in a heap block of that size plus room to answer, so an
	 * over-read of the query shows under ASAN as a read past what was initialised. */
	uint8_t *buf = malloc(cap);
	uint16_t len = size > cap ? cap : (uint16_t)size;

	memcpy(buf, data, len);
	uint16_t n = p53_answer(img, cf, buf, len, cap, &st);
	if (n != 0) {
		if (n < 12 || n > cap)
			abort();
		if (buf[0] != data[0] || buf[1] != data[1] || !(buf[2] & 0x80))
			abort();
		if (!wellformed(buf, n))
			abort();
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct p53_pkt pkt;

	if (img == NULL)
		load_image();
	if (size > 4096)
		return 0;
	check_dns(data, size, CAP, &conf);
	check_dns(data, size, (uint16_t)(size > 512 ? size : 512), &conf); /* tight buffers too */
	check_dns(data, size, 65535, &tcp_conf); /* a TCP message buffer */
	/* As a frame: if it parses, answer its payload and rewrite it in place. */
	uint8_t *frame = malloc(CAP + 64);
	memcpy(frame, data, size > CAP ? CAP : size);
	if (size <= CAP && p53_pkt_parse(frame, size, &pkt) == P53_PKT_OK) {
		static const struct p53_pkt_addrs addrs = {.n4 = 1, .v4 = {0x3502000cu}, .n6 = 1};
		(void)p53_pkt_for_us(frame, &pkt, frame, &addrs); /* reads only parsed headers */
		(void)p53_pkt_udp_csum_ok(frame, &pkt); /* reads only inside the parsed datagram */
		uint16_t n = p53_answer(img, &conf, frame + pkt.dns_off, pkt.dns_len,
					(uint16_t)(CAP + 64 - pkt.dns_off), &st);
		if (n != 0)
			p53_pkt_reply(frame, &pkt, n, 0);
	}
	free(frame);
	return 0;
}

#ifndef P53_LIBFUZZER
static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* One deterministic mutation: flip bits, overwrite bytes, truncate, or grow. */
static size_t mutate(uint8_t *b, size_t len, size_t max)
{
	switch (next() % 5) {
	case 0:
		if (len > 0)
			b[next() % len] ^= (uint8_t)(1u << (next() % 8));
		break;
	case 1:
		if (len > 0)
			b[next() % len] = (uint8_t)next();
		break;
	case 2:
		if (len > 0)
			len = next() % len;
		break;
	case 3:
		if (len < max)
			b[len++] = (uint8_t)next();
		break;
	default:
		/* counts and flags are where parsers go wrong */
		if (len >= 12)
			b[2 + next() % 10] = (uint8_t)next();
		break;
	}
	return len;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : P53_SRCDIR "/tests/fuzz/corpus";
	unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000;
	struct dirent *e;
	size_t files = 0, runs = 0;
	DIR *d = opendir(dir);

	if (d == NULL) {
		perror(dir);
		return 1;
	}
	while ((e = readdir(d)) != NULL) {
		char path[1024];
		uint8_t seed[4096], b[4096];
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
			for (int k = 1 + (int)(next() % 4); k > 0; k--)
				l = mutate(b, l, sizeof(b));
			LLVMFuzzerTestOneInput(b, l);
			runs++;
		}
	}
	closedir(d);
	free(img);
	printf("fuzz_answer: %zu corpus files, %zu inputs, %llu responses, 0 crashes\n", files, runs,
	       (unsigned long long)(st.queries - st.kind[P53_ANS_DROP]));
	return files > 0 ? 0 : 1;
}
#endif
