/*
 * What the image editors' tests share (test_image_patch.c, test_image_splice.c): a seeded
 * random source, zone files in /tmp, wire names, and the comparison that matters to a user:
 * byte-identical answers from two images (an edited one and a full compile) to every name
 * and type asked through the general responder (p53_answer).
 */
#ifndef P53_TEST_IMAGE_COMPARE_H
#define P53_TEST_IMAGE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/xfr/rrs.h"

/* xorshift state; seed() moves a test's seed by P53_PATCH_SEED (other chains, for a longer
 * hunt). */
extern uint64_t rng;
uint64_t seed(uint64_t s);
uint32_t rnd(uint32_t n);

/* A zone file in /tmp holding text (the caller unlinks and frees the path). */
char *tmp_zone(const char *text);

/* genzone.py's big.test. of about `records` records in a file in /tmp (the caller unlinks
 * and frees the path). */
char *gen_zone(unsigned records);

/* A second NSEC zone, small.test. (made-up signatures: answers are compared, nothing
 * validates). */
extern const char *const ZONE_SMALL_NSEC;

/* A wire name from text (absolute, ASCII); its length. */
size_t wname(const char *txt, uint8_t *out);

struct p53_answer_conf;
/* The responder settings ask() answers with. */
extern const struct p53_answer_conf ask_conf;

/* The query NAME TYPE (edns: 0 none, 1 EDNS, 2 EDNS with DO) written into buf; its length. */
uint16_t query_make(uint8_t *buf, const uint8_t *name, size_t nl, uint16_t type, int edns);

/* The answer of img to NAME TYPE (edns: 0 none, 1 EDNS, 2 EDNS with DO) into buf; its length. */
uint16_t ask(const void *img, const uint8_t *name, size_t nl, uint16_t type, int edns,
	     uint8_t *buf, size_t cap);

/* Every name to ask: owners of contents, one below and one beside each. */
struct names {
	uint8_t (*n)[256];
	uint8_t *len;
	size_t count, cap;
};

void names_add(struct names *s, const uint8_t *name, size_t len);
/* The owners of rrs, "zz-nx.<owner>" below each, "zz-sib.<a wildcard's parent>" and the
 * first label with "q" appended beside each. */
void names_of(struct names *s, const struct p53_rrs *rrs);
void names_free(struct names *s);

/* The first N_PLAIN for every zone; the last four (DNSKEY, NSEC, NSEC3, NSEC3PARAM) for
 * signed zones only (ask_do_too). */
extern const uint16_t QTYPES[22];
#define N_PLAIN 18

/* Signed zones: every question with DO too, and the DNSSEC types. */
extern int ask_do_too;
/* Called before a failure of same_answers with the name asked (NULL: nothing). */
extern void (*same_report)(const uint8_t *nm, size_t nl);

/* Byte-identical answers from both images for every name of s and type; fails the test
 * (with both answers printed) where they differ. `what` names the edit. */
void same_answers(const void *a, const void *b, const struct names *s, const char *what);

/* The publish's check of an image made from `prev` (control/publish.c): it passes the check
 * from its source, and its RRset sums made from prev's are those made from scratch (fails
 * the test otherwise). Returns p53_image_check_from()'s `from`. */
int checked_from(const void *prev, const void *ni, size_t len);

/* A p53_warn_fn that says nothing. */
void quiet(void *arg, const char *msg);

#endif /* P53_TEST_IMAGE_COMPARE_H */
