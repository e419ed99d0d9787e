/*
 * Fuzz target for the zone compiler from text: the input is a master file for zone
 * fuzz.test. (ldns parses it, control/zone/ compiles it). Whatever the input, the compiler
 * either fails with a message or returns an image that passes p53_image_check() (the check
 * publish makes before workers read an image without bounds checks), and the responder then
 * answers the apex SOA, NS and ANY and a few names under it from that image within the
 * usual invariants (a header at least, never past the buffer, ID kept, QR set).
 *
 * The text is handed over as a memfd (/proc/self/fd/N), a regular file, so the compiler reads
 * it exactly as it reads a zone file on disk.
 *
 * libFuzzer build: scripts/fuzz.sh. Without a fuzzer, main() (fuzz_main.h) replays
 * tests/fuzz/fuzz_zone.in/ plus deterministic mutations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "control/zone/image_build.h"
#include "dataplane/answer.h"
#include "dataplane/image.h"

#define FUZZ_NAME "fuzz_zone"
#define FUZZ_MAX_LEN 16384

static unsigned long long compiled, rejected;
static struct p53_answer_stats st;

static void ask(const void *img, const char *name, uint16_t qtype)
{
	uint8_t buf[1500];
	size_t off = 12;
	struct p53_answer_conf conf = {.edns_max_payload = 1232};

	memset(buf, 0, 12);
	buf[0] = 0x77;
	buf[5] = 1;
	for (const char *p = name; *p != '\0';) {
		const char *dot = strchr(p, '.');
		size_t l = (size_t)(dot - p);
		buf[off++] = (uint8_t)l;
		memcpy(buf + off, p, l);
		off += l;
		p = dot + 1;
	}
	buf[off++] = 0;
	buf[off++] = (uint8_t)(qtype >> 8);
	buf[off++] = (uint8_t)qtype;
	buf[off++] = 0;
	buf[off++] = 1;
	uint16_t n = p53_answer(img, &conf, buf, (uint16_t)off, sizeof(buf), &st);
	if (n < 12 || n > sizeof(buf) || buf[0] != 0x77 || !(buf[2] & 0x80))
		abort();
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[1024];
	size_t len;

	if (size > FUZZ_MAX_LEN)
		return 0;
	int fd = memfd_create("fuzz-zone", 0);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct p53_zone_src z = {.name = "fuzz.test.", .file = path};
	void *img = p53_image_build(&z, 1, &len, err, sizeof(err), quiet, NULL);
	close(fd);
	if (img == NULL) {
		if (err[0] == '\0')
			abort(); /* a failure always says why */
		rejected++;
		return 0;
	}
	compiled++;
	if (p53_image_check(img, len, NULL) != 0)
		abort();
	static const char *const names[] = {"fuzz.test.", "www.fuzz.test.", "a.b.fuzz.test.", "*.fuzz.test.", "nope.fuzz.test."};
	static const uint16_t types[] = {6, 2, 255, 1, 28, 5, 39, 43, 15};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
			ask(img, names[i], types[t]);
	free(img);
	return 0;
}

#define FUZZ_REPORT() printf(", %llu compiled, %llu rejected with a reason", compiled, rejected)
#include "fuzz_main.h"
