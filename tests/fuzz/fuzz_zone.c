/*
 * Fuzz target for the zone compiler from text: the input is a master file for zone
 * fuzz.test. (ldns parses it, control/zone/ compiles it). Whatever the input, the compiler
 * either fails with a message or returns an image that passes p53_image_check() (the check
 * publish makes before workers read an image without bounds checks), and the responder then
 * answers the apex SOA, NS and ANY and a few names under it from that image within the
 * usual invariants (a header at least, never past the buffer, ID kept, QR set).
 *
 * Each input is compiled twice, by the fast scanner (control/zone/zone_scan.c, ldns for what it
 * declines) and by ldns alone (POP53_ZONE_SCANNER=ldns): both must reject it with the same
 * message or build the same image, with the same warnings. Line numbers are left out of that
 * comparison: the fast loader counts the newlines of the text, while ldns' own count drifts
 * after some malformed lines (a quote left open over a comment: "x f\"(;\n;\n$IN" is wrong
 * on line 3, ldns alone says 2). test_image_build.c checks the lines of every rejection.
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

/* The input that failed, escaped, for a new corpus file or a test row. */
static void p53_fuzz_dump(const char *path)
{
	FILE *f = fopen(path, "rb");
	int c;

	fprintf(stderr, "input: \"");
	while (f != NULL && (c = getc(f)) != EOF)
		fprintf(stderr, c >= 32 && c < 127 && c != '"' && c != '\\' ? "%c" : "\\x%02x", c);
	fprintf(stderr, "\"\n");
	if (f != NULL)
		fclose(f);
}

#include "fuzz_warns.h"

/* "file:12: reason" -> "file:: reason", on every line of msg. */
static void unline(char *msg)
{
	char *o = msg;

	for (const char *p = msg; *p != '\0';) {
		const char *c = strchr(p, ':'), *nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p);
		if (c != NULL && c < nl) {
			const char *d = c + 1;
			while (*d >= '0' && *d <= '9')
				d++;
			if (*d == ':') {
				size_t k = (size_t)(c + 1 - p);
				memmove(o, p, k);
				o += k;
				p = d;
			}
		}
		size_t k = (size_t)(nl - p) + (*nl == '\n');
		memmove(o, p, k);
		o += k;
		p += k;
	}
	*o = '\0';
}

/* The same text through ldns alone: the same outcome, bytes, message and warnings. */
static void same_with_ldns(const struct p53_zone_src *z, const void *img, size_t len,
			   const char *err, const struct warns *w)
{
	char err2[1024];
	struct warns w2 = {0};
	size_t len2 = 0;

	setenv("POP53_ZONE_SCANNER", "ldns", 1);
	void *img2 = p53_image_build(z, 1, &len2, err2, sizeof(err2), collect, &w2);
	unsetenv("POP53_ZONE_SCANNER");
	char e1[1024], t1[sizeof(w->text)];
	snprintf(e1, sizeof(e1), "%s", err);
	snprintf(t1, sizeof(t1), "%s", w->text);
	unline(e1);
	unline(err2);
	unline(t1);
	unline(w2.text);
	if ((img == NULL) != (img2 == NULL) || strcmp(t1, w2.text) != 0 ||
	    (img == NULL && strcmp(e1, err2) != 0) ||
	    (img != NULL && (len != len2 || memcmp(img, img2, len) != 0))) {
		fprintf(stderr, "fast scanner and ldns differ:\n  fast: %s\n%s  ldns: %s\n%s",
			img == NULL ? err : "compiled", w->text, img2 == NULL ? err2 : "compiled", w2.text);
		p53_fuzz_dump(z->file);
		abort();
	}
	free(img2);
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
	struct warns w = {0};
	void *img = p53_image_build(&z, 1, &len, err, sizeof(err), collect, &w);
	same_with_ldns(&z, img, len, err, &w);
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
