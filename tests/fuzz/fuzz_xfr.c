/*
 * Fuzz target for the records of a zone transfer as the zone compiler reads them: the input is
 * a record stream for zone fuzz.test. in the form a transfer leaves it (struct p53_rrs,
 * control/xfr/rrs.h: uncompressed wire records one after another, OWNER TYPE CLASS TTL
 * RDLENGTH RDATA), what an AXFR or an IXFR applied in place hands to the compiler
 * (p53_zone_src.rrs).
 *
 * The compiler reads A AAAA NS CNAME PTR DNAME MX SRV SOA TXT RRSIG straight from the wire
 * (control/zone/zone_load.c load_wire, wire_rdata) and every other or malformed record through
 * ldns_wire2rr. Each input is compiled twice, that way and with every record through ldns
 * (POP53_ZONE_SCANNER=ldns): both must reject it with the same message (the Nth record is
 * "line" N in both) or build the same image, with the same warnings. One reader accepting a
 * record the other rejects, or storing other bytes or another canonical form, aborts.
 *
 * When the input parses as a DNS message, its answer section is also taken as a transfer
 * message: its records kept as the transfer client keeps them (control/xfr/client.c:
 * ldns_wire2pkt, compressed names expanded, p53_rrs_add_ldns) and that stream checked the
 * same way.
 *
 * An image built is then read back into records (p53_image_zones_rrs, what an IXFR is applied
 * to and what pop53 serves downstream) and compiled again: the same image again, and it passes
 * p53_image_check(). That holds for a name that owns only RRSIGs covering no RRset of its own
 * too: they are kept as an RRset of type RRSIG (control/zone/dnssec_build.c
 * p53_dnssec_attach), so the read-back has them and the name exists (NODATA) in both images.
 *
 * libFuzzer build: scripts/fuzz.sh. Without a fuzzer, main() (fuzz_main.h) replays
 * tests/fuzz/fuzz_xfr.in/ (records of real transfers, tests/fuzz/make_corpus.py) plus
 * deterministic mutations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/xfr/rrs.h"
#include "control/zone/image_build.h"
#include "dataplane/image.h"

#define FUZZ_NAME "fuzz_xfr"
#define FUZZ_MAX_LEN 16384

static unsigned long long compiled, rejected, messages;

#include "fuzz_warns.h"

static void dump(const uint8_t *data, size_t size)
{
	fprintf(stderr, "input: \"");
	for (size_t i = 0; i < size; i++)
		fprintf(stderr, "\\x%02x", data[i]);
	fprintf(stderr, "\"\n");
}

struct outcome {
	void *img;
	size_t len;
	char err[1024];
	struct warns w;
};

static void build(struct outcome *o, const uint8_t *rrs, size_t len, int ldns_only)
{
	struct p53_zone_src z = {.name = "fuzz.test.", .file = "xfr", .rrs = rrs, .rrs_len = len};

	memset(o, 0, sizeof(*o));
	if (ldns_only)
		setenv("POP53_ZONE_SCANNER", "ldns", 1);
	o->img = p53_image_build(&z, 1, &o->len, o->err, sizeof(o->err), collect, &o->w);
	if (ldns_only)
		unsetenv("POP53_ZONE_SCANNER");
}

static int same(const struct outcome *a, const struct outcome *b)
{
	if ((a->img == NULL) != (b->img == NULL) || strcmp(a->w.text, b->w.text) != 0)
		return 0;
	if (a->img == NULL)
		return strcmp(a->err, b->err) == 0;
	return a->len == b->len && memcmp(a->img, b->img, a->len) == 0;
}

static void differ(const char *what, const struct outcome *a, const struct outcome *b,
		   const uint8_t *data, size_t size)
{
	fprintf(stderr, "%s:\n  wire: %s\n%s  ldns: %s\n%s", what,
		a->img == NULL ? a->err : "compiled", a->w.text,
		b->img == NULL ? b->err : "compiled", b->w.text);
	dump(data, size);
	abort();
}

/* One record stream through both readers, then read back (see the top). */
static void check(const uint8_t *stream, size_t len, const uint8_t *data, size_t size)
{
	static struct outcome wire, ldns, again;

	/* A copy of exactly `len` bytes, so ASAN sees any read past the stream. */
	uint8_t *rrs = malloc(len ? len : 1);
	if (rrs == NULL)
		abort();
	if (len > 0)
		memcpy(rrs, stream, len);
	build(&wire, rrs, len, 0);
	build(&ldns, rrs, len, 1);
	if (!same(&wire, &ldns))
		differ("the wire reader and ldns differ", &wire, &ldns, data, size);
	free(ldns.img);
	free(rrs);
	if (wire.img == NULL) {
		if (wire.err[0] == '\0')
			abort(); /* a failure always says why */
		rejected++;
		return;
	}
	compiled++;
	const char *why = NULL;
	if (p53_image_check(wire.img, wire.len, &why) != 0) {
		fprintf(stderr, "the image fails p53_image_check: %s\n", why ? why : "?");
		dump(data, size);
		abort();
	}

	/* Read back out of the image (an IXFR's base, what is served downstream): the same image
	 * again, through the wire reader and through ldns. */
	struct p53_rrs back = {0}, *outs[1] = {&back};
	if (p53_image_zones_rrs(wire.img, outs) != 0)
		abort();
	for (int l = 0; l < 2; l++) {
		build(&again, back.buf, back.len, l);
		if (again.img == NULL || again.len != wire.len || memcmp(again.img, wire.img, wire.len) != 0) {
			size_t at = 0;
			while (again.img != NULL && at < wire.len && at < again.len &&
			       ((uint8_t *)again.img)[at] == ((uint8_t *)wire.img)[at])
				at++;
			fprintf(stderr, "records read back out of the image (%s) compile to another image: "
				"%s (%zu bytes, then %zu; first difference at byte %zu)\n", l ? "ldns" : "wire",
				again.img == NULL ? again.err : "differs", wire.len, again.len, at);
			dump(data, size);
			abort();
		}
		free(again.img);
	}
	p53_rrs_free(&back);
	free(wire.img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_LEN)
		return 0;
	check(data, size, data, size);

	/* The input as a transfer's message: its answer records as the transfer client keeps
	 * them (client.c: ldns_wire2pkt, names decompressed, then p53_rrs_add_ldns). */
	ldns_pkt *pkt = NULL;
	if (ldns_wire2pkt(&pkt, data, size) != LDNS_STATUS_OK)
		return 0;
	struct p53_rrs r = {0};
	ldns_rr_list *an = ldns_pkt_answer(pkt);
	int ok = 1;
	for (size_t i = 0; ok && i < ldns_rr_list_rr_count(an); i++)
		ok = p53_rrs_add_ldns(&r, ldns_rr_list_rr(an, i)) == 0;
	ldns_pkt_free(pkt);
	if (ok) {
		messages++;
		check(r.buf, r.len, data, size);
	}
	p53_rrs_free(&r);
	return 0;
}

#define FUZZ_REPORT() printf(", %llu compiled, %llu rejected with a reason; %llu inputs were messages too", \
				     compiled, rejected, messages)
#include "fuzz_main.h"
