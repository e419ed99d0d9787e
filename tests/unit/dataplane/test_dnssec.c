/*
 * DNSSEC answers over a compiled image, one test per proof shape (RFC 4035 §3.1, RFC 5155
 * §7.2): the zones are the differential test's source zone signed by ldns-signzone
 * (tests/unit/dataplane/zones/sign.sh), NSEC and NSEC3 with the opt-out flag, and by kzonesign,
 * NSEC3 with opt-out that leaves insecure delegations out of the chain. Proofs are checked by
 * what they prove, with the test's own canonical ordering and ldns's NSEC3 hash, not by
 * comparing with pop53's own tables: an NSEC covers the name, an NSEC3's owner hash matches
 * or its span covers the hash of the right name.
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <ldns/ldns.h>

#include "control/zone/image_build.h"
#include "dataplane/answer.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/dnssec.h"
#include "dataplane/fastpath.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

enum { T_A = 1, T_NS = 2, T_SOA = 6, T_TXT = 16, T_AAAA = 28, T_DS = 43, T_RRSIG = 46,
       T_NSEC = 47, T_NSEC3 = 50 };
enum { AN = 0, NS = 1, AR = 2 };

static void *img;
static struct p53_answer_conf conf = { .edns_max_payload = 1232 };

struct rr {
	char owner[256];
	uint16_t type;
	uint32_t ttl;
	uint16_t rdlen;
	uint8_t rdata[1024];
};

struct resp {
	uint16_t flags;
	uint16_t count[4];
	struct rr rrs[3][64];
};

static int get_name(const uint8_t *m, uint16_t len, uint16_t off, char *out, uint16_t *next)
{
	int jumped = 0, hops = 0;
	size_t o = 0;

	out[0] = '\0';
	for (;;) {
		if (off >= len || hops++ > 100)
			return -1;
		uint8_t l = m[off];
		if ((l & 0xc0) == 0xc0) {
			if (!jumped)
				*next = (uint16_t)(off + 2);
			jumped = 1;
			off = (uint16_t)((l & 0x3f) << 8 | m[off + 1]);
			continue;
		}
		if (l == 0) {
			if (!jumped)
				*next = (uint16_t)(off + 1);
			if (o == 0)
				strcpy(out, ".");
			return 0;
		}
		for (uint8_t i = 0; i < l; i++)
			out[o++] = (char)tolower(m[off + 1 + i]);
		out[o++] = '.';
		out[o] = '\0';
		off = (uint16_t)(off + 1 + l);
	}
}

static void decode(const uint8_t *m, uint16_t len, struct resp *r)
{
	uint16_t off = 12;
	char q[256];

	memset(r, 0, sizeof(*r));
	r->flags = (uint16_t)(m[2] << 8 | m[3]);
	for (int i = 0; i < 4; i++)
		r->count[i] = (uint16_t)(m[4 + 2 * i] << 8 | m[5 + 2 * i]);
	assert_int_equal(get_name(m, len, off, q, &off), 0);
	off += 4;
	for (int s = 0; s < 3; s++) {
		assert_true(r->count[s + 1] <= 64);
		for (int i = 0; i < r->count[s + 1]; i++) {
			struct rr *rr = &r->rrs[s][i];
			assert_int_equal(get_name(m, len, off, rr->owner, &off), 0);
			assert_true(off + 10 <= len);
			rr->type = (uint16_t)(m[off] << 8 | m[off + 1]);
			rr->ttl = (uint32_t)m[off + 4] << 24 | (uint32_t)m[off + 5] << 16 |
				  (uint32_t)m[off + 6] << 8 | m[off + 7];
			rr->rdlen = (uint16_t)(m[off + 8] << 8 | m[off + 9]);
			off += 10;
			assert_true(off + rr->rdlen <= len && rr->rdlen <= sizeof(rr->rdata));
			memcpy(rr->rdata, m + off, rr->rdlen);
			off = (uint16_t)(off + rr->rdlen);
		}
	}
	assert_int_equal(off, len);
}

/* Ask name/type with EDNS (payload, DO) or without (payload 0); flags are extra header bits. */
static uint16_t ask_flags(const char *name, uint16_t type, uint16_t payload, int dnssec,
			  uint16_t hflags, struct resp *r)
{
	static uint8_t buf[8192];
	struct p53_answer_stats st;
	uint16_t off = 12;

	memset(&st, 0, sizeof(st));
	memset(buf, 0, 12);
	buf[0] = 0x12;
	buf[1] = 0x34;
	buf[2] = (uint8_t)(hflags >> 8);
	buf[3] = (uint8_t)hflags;
	buf[5] = 1;
	while (*name != '\0') {
		const char *dot = strchr(name, '.');
		size_t l = dot != NULL ? (size_t)(dot - name) : strlen(name);
		buf[off++] = (uint8_t)l;
		memcpy(buf + off, name, l);
		off = (uint16_t)(off + l);
		name += l + (dot != NULL);
	}
	buf[off++] = 0;
	buf[off++] = (uint8_t)(type >> 8);
	buf[off++] = (uint8_t)type;
	buf[off++] = 0;
	buf[off++] = 1;
	if (payload != 0) {
		uint8_t opt[11] = {0, 0, 41, (uint8_t)(payload >> 8), (uint8_t)payload, 0, 0,
				   dnssec ? 0x80 : 0, 0, 0, 0};
		buf[11] = 1;
		memcpy(buf + off, opt, sizeof(opt));
		off += sizeof(opt);
	}
	uint16_t n = p53_answer(img, &conf, buf, off, sizeof(buf), &st);
	assert_true(n >= 12);
	decode(buf, n, r);
	return n;
}

static uint16_t ask(const char *name, uint16_t type, int dnssec, struct resp *r)
{
	return ask_flags(name, type, 1232, dnssec, 0, r);
}

#define RCODE(r) ((r)->flags & 0xf)
#define TC(r) (((r)->flags & 0x0200) != 0)

static int count(const struct resp *r, int sec, const char *owner, uint16_t type)
{
	int n = 0;

	for (int i = 0; i < r->count[sec + 1]; i++)
		if ((owner == NULL || strcmp(r->rrs[sec][i].owner, owner) == 0) &&
		    r->rrs[sec][i].type == type)
			n++;
	return n;
}

/* RRSIGs of a section covering `type` at `owner` (NULL: any owner). */
static int sigs(const struct resp *r, int sec, const char *owner, uint16_t type)
{
	int n = 0;

	for (int i = 0; i < r->count[sec + 1]; i++) {
		const struct rr *rr = &r->rrs[sec][i];
		if (rr->type == T_RRSIG && (owner == NULL || strcmp(rr->owner, owner) == 0) &&
		    (rr->rdata[0] << 8 | rr->rdata[1]) == type)
			n++;
	}
	return n;
}

/* Every NSEC/NSEC3 of the authority section has its RRSIG. */
static void each_signed(const struct resp *r, uint16_t type)
{
	for (int i = 0; i < r->count[NS + 1]; i++)
		if (r->rrs[NS][i].type == type)
			assert_int_equal(sigs(r, NS, r->rrs[NS][i].owner, type), 1);
}

/* ---- canonical order (RFC 4034 §6.1), the test's own ------------------------------------ */

static int labels(const char *name, char lab[][64])
{
	int n = 0;

	while (*name != '\0' && strcmp(name, ".") != 0) {
		const char *dot = strchr(name, '.');
		size_t l = (size_t)(dot - name);
		memcpy(lab[n], name, l);
		lab[n][l] = '\0';
		n++;
		name = dot + 1;
	}
	return n;
}

static int canon_cmp(const char *a, const char *b)
{
	char la[128][64], lb[128][64];
	int na = labels(a, la), nb = labels(b, lb);

	while (na > 0 && nb > 0) {
		const char *x = la[--na], *y = lb[--nb];
		size_t lx = strlen(x), ly = strlen(y);
		int d = memcmp(x, y, lx < ly ? lx : ly);
		if (d != 0)
			return d;
		if (lx != ly)
			return lx < ly ? -1 : 1;
	}
	return (na > 0) - (nb > 0);
}

/* The NSEC of the authority section that covers `name` (owner < name < next). */
static int nsec_covers(const struct resp *r, const char *name)
{
	for (int i = 0; i < r->count[NS + 1]; i++) {
		const struct rr *rr = &r->rrs[NS][i];
		char next[256];
		uint16_t end;
		if (rr->type != T_NSEC)
			continue;
		assert_int_equal(get_name(rr->rdata, rr->rdlen, 0, next, &end), 0);
		int before = canon_cmp(rr->owner, name) < 0;
		int after = canon_cmp(name, next) < 0;
		/* the last NSEC's next name is the apex: it covers everything after it */
		int last = canon_cmp(next, rr->owner) <= 0;
		if (before && (after || last))
			return 1;
	}
	return 0;
}

/* ---- NSEC3 (RFC 5155), hashes from ldns ------------------------------------------------ */

/* nsec3.test: salt 1a2b3c4d, 2 iterations; optout.test: no salt, none (sign.sh) */
static void hash_of(const char *name, char out[64])
{
	ldns_rdf *n = ldns_dname_new_frm_str(name);
	uint8_t salt[4] = {0x1a, 0x2b, 0x3c, 0x4d};
	int optout = strstr(name, "optout.test.") != NULL;
	ldns_rdf *h = ldns_nsec3_hash_name(n, 1, optout ? 0 : 2, optout ? 0 : 4, salt);
	char *s = ldns_rdf2str(h);

	snprintf(out, 64, "%.32s", s);
	for (char *p = out; *p; p++)
		*p = (char)tolower(*p);
	free(s);
	ldns_rdf_deep_free(h);
	ldns_rdf_deep_free(n);
}

static void b32hex(const uint8_t *in, size_t n, char *out)
{
	static const char a[] = "0123456789abcdefghijklmnopqrstuv";
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		acc = acc << 8 | in[i];
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			out[o++] = a[(acc >> bits) & 31];
		}
	}
	out[o] = '\0';
}

/* NSEC3s of the authority section: 1 = one matches `name`'s hash, 2 = one covers it. With
   `optout` the covering one must have the opt-out flag. */
static int nsec3_proves(const struct resp *r, const char *name, int want, int optout)
{
	char h[64];

	hash_of(name, h);
	for (int i = 0; i < r->count[NS + 1]; i++) {
		const struct rr *rr = &r->rrs[NS][i];
		char own[64], next[64];
		if (rr->type != T_NSEC3)
			continue;
		snprintf(own, sizeof(own), "%.32s", rr->owner);
		size_t salt = rr->rdata[4];
		b32hex(rr->rdata + 6 + salt, rr->rdata[5 + salt], next);
		if (want == 1 && strcmp(own, h) == 0)
			return 1;
		int wraps = strcmp(next, own) <= 0;
		int covers = wraps ? (strcmp(h, own) > 0 || strcmp(h, next) < 0)
				   : (strcmp(h, own) > 0 && strcmp(h, next) < 0);
		if (want == 2 && covers && (!optout || (rr->rdata[1] & 1)))
			return 1;
	}
	return 0;
}

/* ---- fixtures ------------------------------------------------------------------------------ */

static int setup(void **state)
{
	char err[512], f1[512], f2[512], f3[512];
	size_t len;

	(void)state;
	snprintf(f1, sizeof(f1), "%s/tests/unit/dataplane/zones/nsec.test.zone", P53_SRCDIR);
	snprintf(f2, sizeof(f2), "%s/tests/unit/dataplane/zones/nsec3.test.zone", P53_SRCDIR);
	snprintf(f3, sizeof(f3), "%s/tests/unit/dataplane/zones/optout.test.zone", P53_SRCDIR);
	struct p53_zone_src zones[3] = {{.name = "nsec.test.", .file = f1},
					{.name = "nsec3.test.", .file = f2},
					{.name = "optout.test.", .file = f3}};
	img = p53_image_build(zones, 3, &len, err, sizeof(err), NULL, NULL);
	if (img == NULL)
		fprintf(stderr, "build failed: %s\n", err);
	assert_non_null(img);
	assert_int_equal(p53_image_check(img, len, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(img);
	return 0;
}

/* ---- the image -------------------------------------------------------------------------- */

static void test_image_zone_facts(void **state)
{
	(void)state;
	const struct p53_image_zone *z0 = p53_image_zone(img, 0), *z1 = p53_image_zone(img, 1);

	assert_int_equal(z0->dnssec, P53_ZONE_SIGNED | P53_ZONE_NSEC);
	assert_int_equal(z1->dnssec, P53_ZONE_SIGNED | P53_ZONE_NSEC3 | P53_ZONE_OPTOUT);
	assert_int_equal(z1->nsec3_iter, 2);
	assert_int_equal(z1->salt_len, 4);
	assert_memory_equal((const uint8_t *)img + p53_image_hdr(img)->rdata_off + z1->salt_off,
			    "\x1a\x2b\x3c\x4d", 4);
	/* sign.sh signs until 2037-12-31 00:00 UTC: the health hook's figure */
	assert_int_equal(z0->sig_expire, 2145830400u);
	assert_int_equal(z1->sig_expire, 2145830400u);
	assert_true(z1->proof_n > 10);
}

static void test_image_check_rejects_bad_proof_index(void **state)
{
	(void)state;
	const struct p53_image_hdr *h = p53_image_hdr(img);
	uint8_t *copy = malloc(h->size);

	memcpy(copy, img, h->size);
	((struct p53_image_proof *)(copy + h->proofs_off))[3].wild = h->n_nodes; /* out of range */
	assert_int_equal(p53_image_check(copy, h->size, NULL), -EINVAL);
	memcpy(copy, img, h->size);
	((uint32_t *)(copy + h->chain_off))[0] = h->n_nodes + 7;
	assert_int_equal(p53_image_check(copy, h->size, NULL), -EINVAL);
	memcpy(copy, img, h->size);
	((struct p53_image_rrset *)(uintptr_t)p53_image_rrset(copy, 0))->sig_len = 0xffff;
	assert_int_equal(p53_image_check(copy, h->size, NULL), -EINVAL);
	free(copy);
}

/* NSEC3 owners are not names of the zone: asking for one is a name error. */
static void test_nsec3_owner_not_indexed(void **state)
{
	(void)state;
	struct resp r;
	char h[64], q[128];

	hash_of("www.nsec3.test.", h);
	snprintf(q, sizeof(q), "%s.nsec3.test", h);
	ask(q, T_NSEC3, 1, &r);
	assert_int_equal(RCODE(&r), 3);
}

/* ---- positive answers, DO and the RRSIGs ------------------------------------------------ */

static void test_positive_with_and_without_do(void **state)
{
	(void)state;
	struct resp r;

	ask("www.nsec.test", T_A, 1, &r);
	assert_int_equal(r.count[1], 2);
	assert_int_equal(count(&r, AN, "www.nsec.test.", T_A), 1);
	assert_int_equal(sigs(&r, AN, "www.nsec.test.", T_A), 1);
	assert_int_equal(r.flags & 0x0020, 0); /* AD never set by an authority */
	ask("www.nsec.test", T_A, 0, &r);
	assert_int_equal(r.count[1], 1);
	assert_int_equal(count(&r, AN, NULL, T_RRSIG), 0);
	ask_flags("www.nsec.test", T_A, 0, 0, 0, &r); /* no EDNS */
	assert_int_equal(r.count[1], 1);
	/* CD echoed, AD in the query not copied (RFC 4035 §3.2.2, RFC 6840 §5.7) */
	ask_flags("www.nsec.test", T_A, 1232, 1, 0x0030, &r);
	assert_int_equal(r.flags & 0x0030, 0x0010);
}

static void test_rrsig_in_every_section(void **state)
{
	(void)state;
	struct resp r;

	/* MX: the target's A and its RRSIG in additional */
	ask("nsec.test", 15, 1, &r);
	assert_int_equal(sigs(&r, AN, "nsec.test.", 15), 1);
	assert_int_equal(count(&r, AR, "mail.nsec.test.", T_A), 1);
	assert_int_equal(sigs(&r, AR, "mail.nsec.test.", T_A), 1);
	/* DNSKEY at the apex, signed */
	ask("nsec.test", 48, 1, &r);
	assert_int_equal(count(&r, AN, "nsec.test.", 48), 2);
	assert_true(sigs(&r, AN, "nsec.test.", 48) >= 1);
	/* negative: the SOA's RRSIG carries the negative TTL too (RFC 4034 §3) */
	ask("www.nsec.test", T_TXT, 1, &r);
	assert_int_equal(count(&r, NS, "nsec.test.", T_SOA), 1);
	assert_int_equal(sigs(&r, NS, "nsec.test.", T_SOA), 1);
	for (int i = 0; i < r.count[2]; i++)
		if (r.rrs[NS][i].type == T_SOA || (r.rrs[NS][i].type == T_RRSIG &&
						     r.rrs[NS][i].rdata[1] == T_SOA))
			assert_int_equal(r.rrs[NS][i].ttl, 300);
}

/* QTYPE RRSIG is asked for by type: answered without DO, one RRset's signatures (as Knot). */
static void test_qtype_rrsig(void **state)
{
	(void)state;
	struct resp r;

	ask("www.nsec.test", T_RRSIG, 0, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 1);
	assert_int_equal(sigs(&r, AN, "www.nsec.test.", T_A), 1);
	ask("www.nsec.test", T_NSEC, 0, &r); /* and NSEC, by type */
	assert_int_equal(count(&r, AN, "www.nsec.test.", T_NSEC), 1);
	assert_int_equal(count(&r, AN, NULL, T_RRSIG), 0);
}

/* RFC 4035 §3.1.1: an RRset and its RRSIGs fit together or neither goes, and then TC. */
static void test_truncation_keeps_rrsig_with_rrset(void **state)
{
	(void)state;
	struct resp r;

	ask("tight.nsec.test", T_TXT, 0, &r);
	assert_false(TC(&r));
	assert_int_equal(r.count[1], 16);
	ask("tight.nsec.test", T_TXT, 1, &r);
	assert_true(TC(&r));
	assert_int_equal(r.count[1], 0);
	/* a negative answer whose proof does not fit: TC, never a partial proof */
	ask_flags("a.b.nope.nsec3.test", T_A, 512, 1, 0, &r);
	if (TC(&r)) {
		assert_int_equal(count(&r, NS, NULL, T_NSEC3), sigs(&r, NS, NULL, T_NSEC3));
	} else {
		assert_true(nsec3_proves(&r, "nsec3.test.", 1, 0));
	}
}

/* ---- NSEC (RFC 4035 §3.1.3) ------------------------------------------------------------- */

static void test_nsec_nodata(void **state)
{
	(void)state;
	struct resp r;

	ask("www.nsec.test", T_TXT, 1, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(r.count[1], 0);
	assert_int_equal(count(&r, NS, "www.nsec.test.", T_NSEC), 1); /* §3.1.3.1: its own NSEC */
	assert_int_equal(count(&r, NS, NULL, T_NSEC), 1);
	each_signed(&r, T_NSEC);
	ask("www.nsec.test", T_TXT, 0, &r);
	assert_int_equal(r.count[2], 1); /* DO=0: the SOA only */
}

static void test_nsec_nxdomain(void **state)
{
	(void)state;
	struct resp r;
	const char *names[] = {"nope.nsec.test.", "0.nsec.test.", "zzzz.nsec.test.", "a.b.nope.nsec.test.",
			       "y.ent.nsec.test.", "x.b.deep.nsec.test."};
	const char *wild[] = {"*.nsec.test.", "*.nsec.test.", "*.nsec.test.", "*.nsec.test.",
			      "*.ent.nsec.test.", "*.b.deep.nsec.test."};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ask(names[i], T_A, 1, &r);
		assert_int_equal(RCODE(&r), 3);
		assert_true(nsec_covers(&r, names[i]));     /* §3.1.3.2: no such name */
		assert_true(nsec_covers(&r, wild[i]));      /* and no wildcard to expand */
		assert_true(count(&r, NS, NULL, T_NSEC) <= 2);
		each_signed(&r, T_NSEC);
	}
}

/* An empty non-terminal has no NSEC: proven like a name error, minus the RCODE. */
static void test_nsec_ent_nodata(void **state)
{
	(void)state;
	struct resp r;

	ask("ent.nsec.test", T_A, 1, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_true(nsec_covers(&r, "ent.nsec.test."));
	each_signed(&r, T_NSEC);
}

static void test_nsec_wildcard(void **state)
{
	(void)state;
	struct resp r;

	/* §3.1.3.3: the expanded answer (RRSIG labels 3 < 4 tells it) and the NSEC covering
	   the query name */
	ask("foo.wild.nsec.test", T_A, 1, &r);
	assert_int_equal(count(&r, AN, "foo.wild.nsec.test.", T_A), 1);
	assert_int_equal(sigs(&r, AN, "foo.wild.nsec.test.", T_A), 1);
	assert_int_equal(r.rrs[AN][1].rdata[3], 3);
	assert_true(nsec_covers(&r, "foo.wild.nsec.test."));
	assert_int_equal(count(&r, NS, NULL, T_NSEC), 1);
	each_signed(&r, T_NSEC);
	/* §3.1.3.4: wildcard no data: the wildcard's NSEC and the one covering the name */
	ask("foo.wild.nsec.test", T_AAAA, 1, &r);
	assert_int_equal(count(&r, NS, "*.wild.nsec.test.", T_NSEC), 1);
	assert_true(nsec_covers(&r, "foo.wild.nsec.test."));
	each_signed(&r, T_NSEC);
	/* CNAME to a wildcard: the proof follows the chain */
	ask("walias.nsec.test", T_A, 1, &r);
	assert_int_equal(sigs(&r, AN, "walias.nsec.test.", 5), 1);
	assert_int_equal(sigs(&r, AN, "x.wild.nsec.test.", T_A), 1);
	assert_true(nsec_covers(&r, "x.wild.nsec.test."));
}

static void test_nsec_referrals(void **state)
{
	(void)state;
	struct resp r;

	/* RFC 4035 §3.1.4: DS and its RRSIG with the NS */
	ask("www.secure.nsec.test", T_A, 1, &r);
	assert_int_equal(count(&r, NS, "secure.nsec.test.", T_NS), 1);
	assert_int_equal(count(&r, NS, "secure.nsec.test.", T_DS), 1);
	assert_int_equal(sigs(&r, NS, "secure.nsec.test.", T_DS), 1);
	assert_int_equal(sigs(&r, NS, NULL, T_NS), 0);    /* the delegation NS is not signed */
	assert_int_equal(count(&r, AR, "ns.secure.nsec.test.", T_A), 1);
	assert_int_equal(count(&r, AR, NULL, T_RRSIG), 0); /* neither is glue */
	ask("www.secure.nsec.test", T_A, 0, &r);
	assert_int_equal(count(&r, NS, NULL, T_DS), 0);
	/* no DS: the delegation's NSEC proves it (its bitmap has NS, not DS) */
	ask("www.insecure.nsec.test", T_A, 1, &r);
	assert_int_equal(count(&r, NS, "insecure.nsec.test.", T_NSEC), 1);
	each_signed(&r, T_NSEC);
	ask("insecure.nsec.test", T_DS, 1, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_int_equal(count(&r, NS, "insecure.nsec.test.", T_NSEC), 1);
}

/* ---- NSEC3 (RFC 5155 §7.2) -------------------------------------------------------------- */

static void test_nsec3_nxdomain(void **state)
{
	(void)state;
	struct resp r;

	/* §7.2.2: closest encloser proof, and the NSEC3 covering the wildcard */
	ask("nope.nsec3.test", T_A, 1, &r);
	assert_int_equal(RCODE(&r), 3);
	assert_true(nsec3_proves(&r, "nsec3.test.", 1, 0));
	assert_true(nsec3_proves(&r, "nope.nsec3.test.", 2, 0));
	assert_true(nsec3_proves(&r, "*.nsec3.test.", 2, 0));
	each_signed(&r, T_NSEC3);
	/* deeper: the next closer name is the one just below the closest encloser */
	ask("a.b.y.ent.nsec3.test", T_A, 1, &r);
	assert_true(nsec3_proves(&r, "ent.nsec3.test.", 1, 0));
	assert_true(nsec3_proves(&r, "y.ent.nsec3.test.", 2, 0));
	assert_true(nsec3_proves(&r, "*.ent.nsec3.test.", 2, 0));
	assert_true(count(&r, NS, NULL, T_NSEC3) <= 3);
}

static void test_nsec3_nodata(void **state)
{
	(void)state;
	struct resp r;

	ask("www.nsec3.test", T_TXT, 1, &r);          /* §7.2.3 */
	assert_true(nsec3_proves(&r, "www.nsec3.test.", 1, 0));
	assert_int_equal(count(&r, NS, NULL, T_NSEC3), 1);
	each_signed(&r, T_NSEC3);
	ask("ent.nsec3.test", T_A, 1, &r);            /* an ENT has its NSEC3 */
	assert_true(nsec3_proves(&r, "ent.nsec3.test.", 1, 0));
}

static void test_nsec3_wildcard(void **state)
{
	(void)state;
	struct resp r;

	/* §7.2.6: the NSEC3 covering the next closer name */
	ask("a.b.wild.nsec3.test", T_A, 1, &r);
	assert_int_equal(sigs(&r, AN, "a.b.wild.nsec3.test.", T_A), 1);
	assert_true(nsec3_proves(&r, "b.wild.nsec3.test.", 2, 0));
	assert_int_equal(count(&r, NS, NULL, T_NSEC3), 1);
	/* §7.2.5: wildcard no data: the wildcard's NSEC3, the closest encloser proof */
	ask("foo.wild.nsec3.test", T_AAAA, 1, &r);
	assert_true(nsec3_proves(&r, "*.wild.nsec3.test.", 1, 0));
	assert_true(nsec3_proves(&r, "wild.nsec3.test.", 1, 0));
	assert_true(nsec3_proves(&r, "foo.wild.nsec3.test.", 2, 0));
	each_signed(&r, T_NSEC3);
}

/* §7.2.7 and §7.2.4 with opt-out: no NSEC3 for an insecure delegation (kzonesign leaves it
   out); the closest provable encloser's, and the opt-out NSEC3 covering the next closer
   name. ldns-signzone -p still gives it one, with the opt-out flag: that one matches. */
static void test_nsec3_optout(void **state)
{
	(void)state;
	struct resp r;

	ask("www.insecure.optout.test", T_A, 1, &r);
	assert_int_equal(count(&r, NS, "insecure.optout.test.", T_NS), 1);
	assert_false(nsec3_proves(&r, "insecure.optout.test.", 1, 0));
	assert_true(nsec3_proves(&r, "optout.test.", 1, 0));
	assert_true(nsec3_proves(&r, "insecure.optout.test.", 2, 1));
	assert_int_equal(count(&r, NS, NULL, T_NSEC3), 2);
	each_signed(&r, T_NSEC3);
	ask("insecure.optout.test", T_DS, 1, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_true(nsec3_proves(&r, "optout.test.", 1, 0));
	assert_true(nsec3_proves(&r, "insecure.optout.test.", 2, 1));
	/* two empty non-terminals without NSEC3 above the cut: the next closer name is the
	   topmost, unsafe.optout.test., below the apex */
	ask("www.a.b.unsafe.optout.test", T_A, 1, &r);
	assert_int_equal(count(&r, NS, "a.b.unsafe.optout.test.", T_NS), 1);
	assert_true(nsec3_proves(&r, "optout.test.", 1, 0));
	assert_true(nsec3_proves(&r, "unsafe.optout.test.", 2, 1));
	ask("b.unsafe.optout.test", T_A, 1, &r);
	assert_int_equal(RCODE(&r), 0);
	assert_true(nsec3_proves(&r, "unsafe.optout.test.", 2, 1));
	/* a name error below them: the encloser proof from the apex, with opt-out */
	ask("x.b.unsafe.optout.test", T_A, 1, &r);
	assert_int_equal(RCODE(&r), 3);
	assert_true(nsec3_proves(&r, "optout.test.", 1, 0));
	assert_true(nsec3_proves(&r, "unsafe.optout.test.", 2, 1));
	assert_true(nsec3_proves(&r, "*.optout.test.", 2, 0));
	/* ldns-signzone -p: the delegation has its NSEC3 (opt-out flag set), which proves it */
	ask("www.insecure.nsec3.test", T_A, 1, &r);
	assert_true(nsec3_proves(&r, "insecure.nsec3.test.", 1, 0));
	assert_int_equal(count(&r, NS, NULL, T_NSEC3), 1);
	/* and the secure delegation: DS */
	ask("www.secure.optout.test", T_A, 1, &r);
	assert_int_equal(sigs(&r, NS, "secure.optout.test.", T_DS), 1);
	assert_int_equal(count(&r, NS, NULL, T_NSEC3), 0);
}


/* ---- the next closer cache (dnssec.h) ------------------------------------------------------ */

/* The wire form of a dotted name, lower-cased; returns its length. */
static size_t wire_of(const char *name, uint8_t *out)
{
	size_t off = 0;

	while (*name != '\0') {
		const char *dot = strchr(name, '.');
		size_t l = dot != NULL ? (size_t)(dot - name) : strlen(name);
		out[off++] = (uint8_t)l;
		for (size_t i = 0; i < l; i++)
			out[off++] = (uint8_t)tolower((unsigned char)name[i]);
		name += l + (dot != NULL);
	}
	out[off++] = 0;
	return off;
}

/* The response of image `im` to name/type with DO=1, from the general path (fast 0) or as a
 * worker answers (the fast path, the general one when it declines), into out[4096]. */
static uint16_t raw(const void *im, const char *name, uint16_t type, int fast, uint8_t *out)
{
	struct p53_answer_stats st;
	struct p53_query q;
	uint16_t off = 12;

	memset(&st, 0, sizeof(st));
	memset(out, 0, 12);
	out[0] = 0xab;
	out[5] = 1;
	out[11] = 1;
	while (*name != '\0') {     /* as sent: the case kept */
		const char *dot = strchr(name, '.');
		size_t l = dot != NULL ? (size_t)(dot - name) : strlen(name);
		out[off++] = (uint8_t)l;
		memcpy(out + off, name, l);
		off = (uint16_t)(off + l);
		name += l + (dot != NULL);
	}
	out[off++] = 0;
	const uint8_t tail[] = {(uint8_t)(type >> 8), (uint8_t)type, 0, 1,
				0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0};
	memcpy(out + off, tail, sizeof(tail));
	off = (uint16_t)(off + sizeof(tail));
	if (!fast)
		return p53_answer(im, &conf, out, off, 4096, &st);
	enum p53_msg_status ms = p53_msg_parse(out, off, &q);
	assert_int_equal(ms, P53_MSG_OK);
	uint16_t n = p53_fast_answer(im, &conf, out, 4096, &st, &q);
	return n != 0 ? n : p53_answer_parsed(im, &conf, out, 4096, &st, &q, ms);
}

/* Denials whose proofs hash a next closer name (and a few that do not), in the three zones. */
static const struct { const char *name; uint16_t type; } nc_queries[] = {
	{"nope.nsec3.test", T_A},               /* name error: the next closer name is the qname */
	{"NoPe.NSEC3.test", T_A},               /* the same name in other case: the same key */
	{"other.nsec3.test", T_TXT},
	{"a.b.y.ent.nsec3.test", T_A},          /* next closer y.ent.nsec3.test.: hashed here */
	{"a.b.wild.nsec3.test", T_A},           /* wildcard answer: next closer b.wild */
	{"foo.wild.nsec3.test", T_AAAA},        /* wildcard no data: CE's encloser proof */
	{"www.insecure.nsec3.test", T_A},
	/* name and salt over the cache's 80 octets: hashed every time, never kept */
	{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.www.nsec3.test", T_A},
	{"nope.optout.test", T_A},              /* no salt, no extra iteration */
	{"x.b.unsafe.optout.test", T_A},        /* opt-out: the precomputed cover */
	{"nope.nsec.test", T_A},                /* NSEC: no hash at all */
};
#define NC_N (sizeof(nc_queries) / sizeof(nc_queries[0]))

struct nc_ref {
	uint16_t len[2][NC_N];
	uint8_t bytes[2][NC_N][4096];
};

/* Every nc_queries answer of `im`, general and fast, with the cache off: the reference. */
static void nc_reference(const void *im, struct nc_ref *ref)
{
	p53_nsec3_cache_enable(0);
	for (int f = 0; f < 2; f++)
		for (size_t i = 0; i < NC_N; i++) {
			ref->len[f][i] = raw(im, nc_queries[i].name, nc_queries[i].type, f,
					     ref->bytes[f][i]);
			assert_true(ref->len[f][i] > 12);
		}
	p53_nsec3_cache_enable(1);
}

/* Every nc_queries answer of `im`, general and fast, is the reference's byte for byte. */
static void nc_same(const void *im, const struct nc_ref *ref)
{
	static uint8_t out[4096];

	for (int f = 0; f < 2; f++)
		for (size_t i = 0; i < NC_N; i++) {
			uint16_t n = raw(im, nc_queries[i].name, nc_queries[i].type, f, out);
			if (n != ref->len[f][i] || memcmp(out, ref->bytes[f][i], n) != 0)
				fail_msg("%s %s path: the cache changed the answer (%u vs %u bytes)",
					 nc_queries[i].name, f ? "fast" : "general", n, ref->len[f][i]);
		}
}

static struct nc_ref nc_ref_a, nc_ref_b, nc_ref_c;

/* Misses, then hits, give the answers of no cache, byte for byte; with a generation (the
 * NSEC3 kept) and without (found again from the cached hash). */
static void test_nsec3_cache_hit_and_miss(void **state)
{
	(void)state;
	struct p53_nsec3_cache_stats s0, s1, s2;
	struct p53_image_hdr *h = (struct p53_image_hdr *)img;

	for (uint64_t gen = 0; gen < 2; gen++) {
		h->generation = gen * 11;
		nc_reference(img, &nc_ref_a);
		p53_nsec3_cache_stats(&s0);
		nc_same(img, &nc_ref_a);                /* the first of each name misses */
		p53_nsec3_cache_stats(&s1);
		nc_same(img, &nc_ref_a);                /* then every one hits */
		p53_nsec3_cache_stats(&s2);
		assert_true(s1.misses > s0.misses);
		assert_int_equal(s2.misses, s1.misses);
		assert_true(s2.hits - s1.hits >= 2 * 7); /* both paths, at least 7 hashed names */
		assert_true(s1.uncached > s0.uncached);  /* the long name */
		assert_int_equal(s2.uncached - s1.uncached, s1.uncached - s0.uncached);
	}
	h->generation = 0;
}

/* A reload: the same zone signed with another salt and iteration count (its hashes all
 * differ), and the same NSEC3 parameters in an image where every node index moved. */
static void test_nsec3_cache_reload(void **state)
{
	(void)state;
	char err[512], f1[512], f2[512], f3[512];
	size_t lb, lc;

	snprintf(f1, sizeof(f1), "%s/tests/unit/dataplane/zones/nsec3-resalted.test.zone", P53_SRCDIR);
	snprintf(f2, sizeof(f2), "%s/tests/unit/dataplane/zones/optout.test.zone", P53_SRCDIR);
	snprintf(f3, sizeof(f3), "%s/tests/unit/dataplane/zones/nsec3.test.zone", P53_SRCDIR);
	struct p53_zone_src zb[1] = {{.name = "nsec3.test.", .file = f1}};
	struct p53_zone_src zc[2] = {{.name = "optout.test.", .file = f2},
				     {.name = "nsec3.test.", .file = f3}};
	void *ib = p53_image_build(zb, 1, &lb, err, sizeof(err), NULL, NULL);
	void *ic = p53_image_build(zc, 2, &lc, err, sizeof(err), NULL, NULL);
	assert_non_null(ib);
	assert_non_null(ic);
	assert_int_equal(p53_image_zone(ib, 0)->salt_len, 2);
	assert_int_equal(p53_image_zone(ib, 0)->nsec3_iter, 1);
	const struct p53_image_zone *za = p53_image_zone(img, 1), *zcz = p53_image_zone(ic, 1);
	assert_int_equal(zcz->salt_len, za->salt_len);
	/* in each image (their indices relative to their zone, format 10) */
	assert_int_not_equal(zcz->node_base + p53_image_nsec3(ic)[zcz->proof_lo].node,
			     za->node_base + p53_image_nsec3(img)[za->proof_lo].node);

	for (uint64_t gen = 0; gen < 2; gen++) {
		struct p53_image_hdr *ha = (struct p53_image_hdr *)img;
		ha->generation = gen * 21;
		((struct p53_image_hdr *)ib)->generation = gen * 22;
		((struct p53_image_hdr *)ic)->generation = gen * 23;
		nc_reference(img, &nc_ref_a);
		nc_reference(ib, &nc_ref_b);
		nc_reference(ic, &nc_ref_c);
		/* Back and forth, as reloads would (and as replicas of two generations could be
		   seen by one thread): each image's own answers every time. */
		for (int round = 0; round < 3; round++) {
			nc_same(img, &nc_ref_a);
			nc_same(ib, &nc_ref_b);
			nc_same(ic, &nc_ref_c);
		}
		/* The new salt's hashes are not the old ones: the resalted zone's answers differ. */
		assert_true(nc_ref_a.len[0][0] != nc_ref_b.len[0][0] ||
			    memcmp(nc_ref_a.bytes[0][0], nc_ref_b.bytes[0][0], nc_ref_a.len[0][0]) != 0);
	}
	((struct p53_image_hdr *)img)->generation = 0;
	free(ib);
	free(ic);
}

/* Names that share a set: the least recently used of the two ways goes, and an evicted name
 * comes back right. */
static void test_nsec3_cache_collision(void **state)
{
	(void)state;
	char names[3][64];
	int n = 0;
	uint32_t want = 0;
	uint8_t w[256];
	static uint8_t ref[3][4096], out[4096];
	uint16_t rlen[3];
	struct p53_nsec3_cache_stats s0, s1;

	for (int i = 0; n < 3 && i < 100000; i++) {
		char nm[64];
		snprintf(nm, sizeof(nm), "c%d.nsec3.test", i);
		uint32_t set = p53_name_hash(w, wire_of(nm, w)) % P53_NSEC3_CACHE_SETS;
		if (n == 0)
			want = set;
		if (set == want)
			snprintf(names[n++], sizeof(names[0]), "%s", nm);
	}
	assert_int_equal(n, 3);
	p53_nsec3_cache_enable(0);
	for (int i = 0; i < 3; i++)
		rlen[i] = raw(img, names[i], T_A, 1, ref[i]);
	p53_nsec3_cache_enable(1);
	/* Round robin over three names in two ways: each query evicts the next one's entry. */
	p53_nsec3_cache_stats(&s0);
	for (int k = 0; k < 9; k++) {
		uint16_t l = raw(img, names[k % 3], T_A, 1, out);
		assert_int_equal(l, rlen[k % 3]);
		assert_memory_equal(out, ref[k % 3], l);
	}
	p53_nsec3_cache_stats(&s1);
	assert_int_equal(s1.misses - s0.misses, 9);
	assert_int_equal(s1.hits, s0.hits);
	/* The last two stay: hits, the same bytes; then the first is back in. */
	const int order[] = {2, 1, 2, 1, 0, 0};
	for (int k = 0; k < 6; k++) {
		uint16_t l = raw(img, names[order[k]], T_A, 1, out);
		assert_int_equal(l, rlen[order[k]]);
		assert_memory_equal(out, ref[order[k]], l);
	}
	p53_nsec3_cache_stats(&s0);
	assert_int_equal(s0.hits - s1.hits, 5);
	assert_int_equal(s0.misses - s1.misses, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image_zone_facts),
		cmocka_unit_test(test_image_check_rejects_bad_proof_index),
		cmocka_unit_test(test_nsec3_owner_not_indexed),
		cmocka_unit_test(test_positive_with_and_without_do),
		cmocka_unit_test(test_rrsig_in_every_section),
		cmocka_unit_test(test_qtype_rrsig),
		cmocka_unit_test(test_truncation_keeps_rrsig_with_rrset),
		cmocka_unit_test(test_nsec_nodata),
		cmocka_unit_test(test_nsec_nxdomain),
		cmocka_unit_test(test_nsec_ent_nodata),
		cmocka_unit_test(test_nsec_wildcard),
		cmocka_unit_test(test_nsec_referrals),
		cmocka_unit_test(test_nsec3_nxdomain),
		cmocka_unit_test(test_nsec3_nodata),
		cmocka_unit_test(test_nsec3_wildcard),
		cmocka_unit_test(test_nsec3_optout),
		cmocka_unit_test(test_nsec3_cache_hit_and_miss),
		cmocka_unit_test(test_nsec3_cache_reload),
		cmocka_unit_test(test_nsec3_cache_collision),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
