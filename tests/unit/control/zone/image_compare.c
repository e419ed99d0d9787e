/*
 * What the image editors' tests share (image_compare.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dataplane/answer.h"
#include "dataplane/fastpath.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#include "image_compare.h"

/* A second NSEC zone (made-up signatures: answers are compared, nothing validates). */
#define SIG "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw=="
const char *const ZONE_SMALL_NSEC =
	"$ORIGIN small.test.\n"
	"@ 300 IN SOA ns.small.test. h.small.test. 1 3600 600 86400 300\n"
	"@ 300 IN RRSIG SOA 13 2 300 20300101000000 20250101000000 4242 small.test. " SIG "\n"
	"@ 300 IN NS ns.small.test.\n"
	"@ 300 IN RRSIG NS 13 2 300 20300101000000 20250101000000 4242 small.test. " SIG "\n"
	"@ 300 IN NSEC a.small.test. NS SOA RRSIG NSEC\n"
	"@ 300 IN RRSIG NSEC 13 2 300 20300101000000 20250101000000 4242 small.test. " SIG "\n"
	"a 300 IN A 192.0.2.1\n"
	"a 300 IN RRSIG A 13 3 300 20300101000000 20250101000000 4242 small.test. " SIG "\n"
	"a 300 IN NSEC b.a.small.test. A RRSIG NSEC\n"
	"a 300 IN RRSIG NSEC 13 3 300 20300101000000 20250101000000 4242 small.test. " SIG "\n"
	"b.a 300 IN TXT \"x\"\n"
	"b.a 300 IN RRSIG TXT 13 4 300 20300101000000 20250101000000 4242 small.test. " SIG "\n"
	"b.a 300 IN NSEC ns.small.test. TXT RRSIG NSEC\n"
	"b.a 300 IN RRSIG NSEC 13 4 300 20300101000000 20250101000000 4242 small.test. " SIG "\n"
	"ns 300 IN A 192.0.2.2\n"
	"ns 300 IN RRSIG A 13 3 300 20300101000000 20250101000000 4242 small.test. " SIG "\n"
	"ns 300 IN NSEC small.test. A RRSIG NSEC\n"
	"ns 300 IN RRSIG NSEC 13 3 300 20300101000000 20250101000000 4242 small.test. " SIG "\n";
#undef SIG

int ask_do_too;
const struct p53_answer_conf ask_conf = { .identity = (const uint8_t *)"unit", .identity_len = 4,
					  .edns_max_payload = 1232 };
void (*same_report)(const uint8_t *nm, size_t nl);

uint64_t rng = 0x9e3779b97f4a7c15ull;

/* The tests' seeds, moved by P53_PATCH_SEED (other chains, for a longer hunt). */
uint64_t seed(uint64_t s)
{
	const char *e = getenv("P53_PATCH_SEED");

	return e != NULL ? s * 0x9e3779b97f4a7c15ull + strtoull(e, NULL, 10) + 1 : s;
}

uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

char *tmp_zone(const char *text)
{
	char *path = strdup("/tmp/test_image_patch.XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* A wire name from text (absolute, ASCII). */
char *gen_zone(unsigned records)
{
	char *path = strdup("/tmp/test_image_gen.XXXXXX"), cmd[600];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 %s/scripts/bench/genzone.py %u %s 2>/dev/null",
		 P53_SRCDIR, records, path);
	assert_int_equal(system(cmd), 0);
	return path;
}

size_t wname(const char *txt, uint8_t *out)
{
	size_t o = 0;

	while (*txt != '\0') {
		const char *dot = strchr(txt, '.');
		size_t l = dot != NULL ? (size_t)(dot - txt) : strlen(txt);
		out[o++] = (uint8_t)l;
		memcpy(out + o, txt, l);
		o += l;
		txt += l + (dot != NULL);
	}
	out[o++] = 0;
	return o;
}

uint16_t query_make(uint8_t *buf, const uint8_t *name, size_t nl, uint16_t type, int edns)
{
	uint16_t off = 12;

	memset(buf, 0, 12);
	buf[0] = 0x12;
	buf[1] = 0x34;
	buf[5] = 1;
	memcpy(buf + off, name, nl);
	off = (uint16_t)(off + nl);
	p53_put16(buf + off, type);
	p53_put16(buf + off + 2, 1);
	off += 4;
	if (edns) {
		buf[11] = 1;
		uint8_t opt[11] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };
		if (edns == 2)
			opt[7] = 0x80; /* DO: RRSIGs and denial proofs */
		memcpy(buf + off, opt, sizeof(opt));
		off += sizeof(opt);
	}
	return off;
}

uint16_t ask(const void *img, const uint8_t *name, size_t nl, uint16_t type, int edns,
	     uint8_t *buf, size_t cap)
{
	struct p53_answer_stats st = { 0 };
	uint16_t off = query_make(buf, name, nl, type, edns);

	return p53_answer(img, &ask_conf, buf, off, (uint16_t)cap, &st);
}

void names_add(struct names *s, const uint8_t *name, size_t len)
{
	if (len > 255)
		return;
	if (s->count == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->n = realloc(s->n, s->cap * sizeof(*s->n));
		s->len = realloc(s->len, s->cap);
	}
	p53_name_lower(s->n[s->count], name, len);
	s->len[s->count++] = (uint8_t)len;
}

void names_of(struct names *s, const struct p53_rrs *rrs)
{
	struct p53_rr_view v;
	size_t pos = 0;

	while (p53_rrs_next(rrs, &pos, &v) == 1) {
		uint8_t x[300];
		names_add(s, v.owner, v.owner_len);
		/* Below: "zz-nx.<owner>" */
		x[0] = 5;
		memcpy(x + 1, "zz-nx", 5);
		memcpy(x + 6, v.owner, v.owner_len);
		names_add(s, x, 6u + v.owner_len);
		/* Beside a wildcard at or above the owner: "zz-sib.<the wildcard's parent>"
		 * (matched by it while it exists, even as an empty non-terminal). */
		for (size_t at = 0; at < v.owner_len && v.owner[at] != 0; at += 1u + v.owner[at])
			if (v.owner[at] == 1 && v.owner[at + 1] == '*') {
				size_t rl = v.owner_len - at - 2;
				x[0] = 6;
				memcpy(x + 1, "zz-sib", 6);
				memcpy(x + 7, v.owner + at + 2, rl);
				names_add(s, x, 7 + rl);
			}
		/* Beside: the first label with "q" appended. */
		if (v.owner[0] > 0 && v.owner[0] < 63) {
			x[0] = (uint8_t)(v.owner[0] + 1);
			memcpy(x + 1, v.owner + 1, v.owner[0]);
			x[1 + v.owner[0]] = 'q';
			memcpy(x + 2 + v.owner[0], v.owner + 1 + v.owner[0], v.owner_len - 1u - v.owner[0]);
			names_add(s, x, v.owner_len + 1u);
		}
	}
}

const uint16_t QTYPES[22] = { 1, 28, 16, 15, 2, 6, 5, 255, 43, 12, 99, 33, 64, 65,
				   256, 260, 1000, 65534, 48, 47, 50, 51 };

/* Byte-identical answers from both images for every name and type. */
void same_answers(const void *a, const void *b, const struct names *s, const char *what)
{
	static uint8_t qa[4096], qb[4096];

	const size_t nt = ask_do_too ? sizeof(QTYPES) / sizeof(QTYPES[0]) : N_PLAIN;

	for (size_t i = 0; i < s->count; i++) {
		for (size_t t = 0; t < (ask_do_too ? 2 : 1) * nt; t++) {
			/* none, EDNS, EDNS with DO; then (signed zones) DO again for each */
			int edns = t < nt ? (int)((i + t) % 3) : 2;
			uint16_t qt = QTYPES[t % nt];
			uint16_t la = ask(a, s->n[i], s->len[i], qt, edns, qa, sizeof(qa));
			uint16_t lb = ask(b, s->n[i], s->len[i], qt, edns, qb, sizeof(qb));
			if (la != lb || memcmp(qa, qb, la) != 0) {
				char txt[300];
				size_t o = 0;
				for (size_t k = 0; k < s->len[i]; k++)
					o += (size_t)snprintf(txt + o, sizeof(txt) - o, "%c",
							      s->n[i][k] > 32 && s->n[i][k] < 127 ? s->n[i][k] : '.');
				for (uint16_t k = 0; k < la || k < lb; k++)
					print_message("%3u %02x %02x %c%c\n", k, k < la ? qa[k] : 0, k < lb ? qb[k] : 0,
						      k < la && qa[k] > 32 && qa[k] < 127 ? qa[k] : '.',
						      k < lb && qb[k] > 32 && qb[k] < 127 ? qb[k] : '.');
				if (same_report != NULL)
					same_report(s->n[i], s->len[i]);
				fail_msg("%s: %s type %u edns %d: the edited image answers %u bytes, the "
					 "compiled one %u (or different bytes)", what, txt,
					 qt, edns, la, lb);
			}
		}
	}
}

void names_free(struct names *s)
{
	free(s->n);
	free(s->len);
	memset(s, 0, sizeof(*s));
}

int checked_from(const void *prev, const void *ni, size_t len)
{
	const char *bad = NULL;
	int from = 0;

	if (p53_image_check_from(ni, len, prev, &from, &bad) != 0)
		fail_msg("the edited image fails the check from its source: %s", bad);
	size_t n = p53_fast_sum_count(ni), no = p53_fast_sum_count(prev);
	uint64_t *t_old = calloc(no + 1, sizeof(uint64_t)), *t_full = calloc(n + 1, sizeof(uint64_t));
	uint64_t *t_from = calloc(n + 1, sizeof(uint64_t));
	assert_non_null(t_old);
	assert_non_null(t_full);
	assert_non_null(t_from);
	p53_fast_sum_build(prev, 1232, t_old);
	p53_fast_sum_build(ni, 1232, t_full);
	p53_fast_sum_build_from(ni, 1232, t_from, prev, t_old);
	assert_memory_equal(t_full, t_from, n * sizeof(uint64_t));
	free(t_old);
	free(t_full);
	free(t_from);
	return from;
}

void quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}
