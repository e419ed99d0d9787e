/*
 * p53-ixfr-apply: what applying an IXFR costs pop53d's control thread, without the network,
 * the primary or the workers: the step p53_zones_update() takes for a DIFF (control/xfr/
 * update.c), through the same functions. The zone is compiled once from its file into an image
 * (as after its first AXFR); then, per run: its records are read back out of that image
 * (p53_image_zones_rrs, "extract"), the differences applied to them in place
 * (p53_ixfr_apply_inplace, "apply") and the image compiled again with the new records
 * (p53_image_build, "compile"). Publishing the image to the workers is not counted.
 *
 * The differences are those of scripts/bench/xfr.sh (100 changes to big.test of genzone.py):
 * 50 names added (addedN.region0 A 198.18.0.N), 25 A records deleted (host000100..124), 25 A
 * records changed (host000200..224 to 198.18.1.N), plus the SOA from serial S to S+1.
 *
 * A signed zone (genzone.py's signed with scripts/bench/sign_zone.sh, say) gets what a signing
 * primary sends instead: 100 A records changed (host000200..299 to 198.18.1.N), each with its
 * RRSIG replaced (the old one's fields, a new inception and expiration, other signature
 * bytes), plus the SOA and its RRSIG; no name added or removed (what the patch takes).
 *
 * Before timing, it checks that the zone's records read back out of the image compile to the
 * same image, byte for byte (exit 1 if not).
 *
 * Two ways of making the new image, each in its own forked process so its memory is its own:
 * mode=compile as above, and mode=patch: the same extract and apply, then the image patched
 * (p53_image_patch, control/zone/image_patch.c: what pop53d does for an IXFR it can patch)
 * instead of compiled; its compile_ms is the patch's time. The patched image must pass
 * p53_image_check and serve the new serial and record count, else exit 1. mode=patch-lazy:
 * what pop53d does for an IXFR alone: no extract and no apply of the whole zone, the image
 * patched from the diff alone (p53_image_patch with no result: it reads the touched owners'
 * records out of the image and applies the diff to them); its extract_ms and apply_ms are 0.
 * mode=patch-spare: patch-lazy writing each run's image into the previous run's (pop53d's
 * spare image, control/publish.c; the first run writes fresh memory): no fresh pages.
 *
 * With --cdn the differences are CNAME and MX target changes instead (cdn_changes); in a
 * signed zone what a signing primary sends for CNAMEs and the apex NS set (cdn_signed_changes:
 * 40 CNAME targets changed and a third apex NS, each RRset with its RRSIG replaced). With --names (an NSEC-signed zone) a signing primary's names coming and
 * going instead of the 100 A changes (names_changes): 50 names added and 25 removed, with
 * their NSECs and the neighbours' NSECs changed and signed again; in an NSEC3-signed zone
 * (names3_changes) their NSEC3s, and the NSEC3s whose next hash changes, signed again.
 *
 * With --dname, 50 DNAMEs added instead (dname_changes; on an NSEC- or NSEC3-signed zone
 * dname_changes_signed: at 50 hosts, with their RRSIGs and the hosts' NSECs/NSEC3s).
 *
 * With --glue-cname (a signed zone), 50 CNAMEs new below 50 delegations (glue_cname_changes).
 *
 * With --served-child, big.test. (unsigned) delegates kid.big.test. (NS ns.kid.big.test. and
 * ns1.big.test., glue ns.kid.big.test. A 198.18.2.1, added to the file's records) and the
 * child is served too (a small zone compiled beside it, zone 1: the parent's names there are
 * shadowed, its node the child apex's parent_side); the differences are the delegation's
 * (served_changes): a DS added, the NS set changed (ns1.big.test. for ns.other.example.), the
 * glue renumbered (198.18.2.2). The compile mode compiles both zones, as pop53d does.
 * --served-glue: the same two zones, the difference new glue below the child's apex (NS
 * ns2.kid.big.test. and its A: a name new in the parent there, made out of the name index
 * as the compiler makes it, shadow_new; one pass over the nodes finds the parent's names
 * below the apex).
 * --served-above: the child kid.mid.big.test. below the parent's mid.big.test. (a TXT), its
 * delegation and glue added to the file's records; the difference NS added at mid, above
 * the child's apex (its parent side and glue become glue: occ_above).
 * --served-flip (an NSEC-signed zone): its first delegation sub0000.region0.big.test.'s child
 * served beside it, the difference the delegation going while its glue stays, as a signing
 * primary sends it (flip_changes: the glue's NSEC and RRSIGs, the chain's NSEC before it).
 *
 * Usage: p53-ixfr-apply [--cdn | --names | --dname | --glue-cname | --served-child |
 * --served-glue | --served-above | --served-flip] ZONEFILE
 * [RUNS]  (the zone is big.test.; RUNS default 5)
 * P53_IXFR_MODES, when set, runs only the modes it names, comma-separated (e.g.
 * P53_IXFR_MODES=patch-lazy,patch-spare).
 * P53_IXFR_TURNS=N, with --served-child: no modes, the two zones patched in turn N times
 * instead (turns_run), a line per turn.
 * P53_IXFR_STEER_NEAR=K, with P53_IXFR_STEER and --names: K names more, each right after a
 * steered owner in the NSEC chain (near_changes): the patch signs those owners' NSECs again.
 * P53_IXFR_STEER_OWN=K, with P53_IXFR_STEER and --names on an NSEC3-signed zone: the first K
 * steered owners gain an AAAA (signed) and their own NSEC3 in the chain (names3_changes), whose
 * records take the nodes of those the compile signed for them (steer_n3_synth).
 * Prints one line of key=value per mode: records, the medians of extract_ms, apply_ms,
 * compile_ms and total_ms (CLOCK_MONOTONIC), compile_cpu_ms and total_cpu_ms (CLOCK_PROCESS_CPUTIME_ID: what the
 * machine's other load disturbs less), the image bytes, peak_rss_kb (getrusage: the process's
 * high-water mark) and rss_growth_kb (that mark less the resident size when the mode started,
 * the running image included: what the new image and the work for it cost at their peak).
 * Patch modes add the publish's referral templates for the new image (dataplane/fastpath.h):
 * ref_full_ms made from scratch (p53_fast_ref_size + p53_fast_ref_build, what every publish
 * did before), ref_from_ms from the running image's (p53_fast_ref_size_from +
 * p53_fast_ref_build_from, what the publish of a patch does), medians, and ref_templates; the two must be the same bytes (else
 * exit 1). Not inside total_ms. patch-lazy and patch-spare patch with a patch index of the
 * image (control/zone/patch_index.h), as pop53d keeps one from one IXFR to the next: made
 * once before the runs (index_build_cpu_ms, not inside total_ms) and copied for each run,
 * untimed; P53_IXFR_INDEX=0 patches without one (index=0), as before it existed.
 * Control-side tool; no DPDK.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control/dnssec/sign.h"
#include "control/xfr/rrs.h"
#include "dataplane/dnssec.h"
#include "control/zone/image_build.h"
#include "control/zone/image_patch.h"
#include "control/zone/patch_index.h"
#include "dataplane/fastpath.h"
#include "dataplane/image.h"
#include "dataplane/name.h"
#include "dataplane/wire.h"

#define ORIGIN "big.test."

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of this process: less disturbed than wall time on a shared machine. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Resident set size now, KiB. */
static long rss_kb(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &res) != 2)
		res = 0;
	fclose(f);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Wire form of a text name (lower case, absolute). */
static size_t wire_name(const char *txt, uint8_t *out)
{
	size_t o = 0;
	const char *p = txt;

	while (*p != '\0') {
		const char *dot = strchr(p, '.');
		size_t l = dot != NULL ? (size_t)(dot - p) : strlen(p);
		out[o++] = (uint8_t)l;
		memcpy(out + o, p, l);
		o += l;
		p += l + (dot != NULL);
	}
	out[o++] = 0;
	return o;
}

/* The first record of `type` owned by `owner` in r, or -1. */
static int find(const struct p53_rrs *r, const uint8_t *owner, size_t olen, uint16_t type,
		struct p53_rr_view *out)
{
	struct p53_rr_view v;
	size_t pos = 0;

	while (p53_rrs_next(r, &pos, &v) == 1)
		if (v.type == type && v.owner_len == olen && memcmp(v.owner, owner, olen) == 0) {
			*out = v;
			return 0;
		}
	return -1;
}

/* The SOA with its serial set to `serial`. */
static int add_soa(struct p53_rrs *to, const struct p53_rr_view *soa, uint32_t serial)
{
	uint8_t rd[1024];
	int m1 = p53_name_len(soa->rdata, soa->rdlen);
	int m2 = p53_name_len(soa->rdata + m1, soa->rdlen - (size_t)m1);

	memcpy(rd, soa->rdata, soa->rdlen);
	p53_put32(rd + m1 + m2, serial);
	return p53_rrs_add(to, soa->owner, soa->owner_len, 6, 1, soa->ttl, rd, soa->rdlen);
}

/* The first RRSIG over (owner, covered) in r, of at most `max` octets of RDATA: 0, or -1. */
static int sig_find(const struct p53_rrs *r, const uint8_t *owner, size_t olen, uint16_t covered,
		    size_t max, struct p53_rr_view *out)
{
	size_t pos = 0;

	while (p53_rrs_next(r, &pos, out) == 1)
		if (out->type == 46 && out->rdlen >= 18 && out->rdlen <= max &&
		    p53_get16(out->rdata) == covered && out->owner_len == olen &&
		    memcmp(out->owner, owner, olen) == 0)
			return 0;
	return -1;
}

/* The RRSIG over (owner, covered) in r deleted, and one added with a new inception,
 * expiration and signature bytes (nothing validates them here). */
static int resign(const struct p53_rrs *r, const uint8_t *owner, size_t olen, uint16_t covered,
		  struct p53_ixfr_step *st)
{
	struct p53_rr_view v;
	uint8_t rd[1024];

	if (sig_find(r, owner, olen, covered, sizeof(rd), &v) != 0)
		return -1;
	memcpy(rd, v.rdata, v.rdlen);
	for (int k = 8; k < 16; k++)
		rd[k] ^= 0x01; /* expiration and inception, a little later or earlier */
	for (size_t k = v.rdlen - 8; k < v.rdlen; k++)
		rd[k] ^= 0x5a;
	return p53_rrs_add(&st->del, v.owner, v.owner_len, 46, 1, v.ttl, v.rdata, v.rdlen) ||
	       p53_rrs_add(&st->add, v.owner, v.owner_len, 46, 1, v.ttl, rd, v.rdlen);
}


/* --cdn: what a CDN changes (the IXFR patch declined all of it before issue 13's widening):
 * 40 CNAME targets changed (alias000000..039 to edgeK.cdn.region0, 20 of which are new names
 * with an A below a new empty non-terminal cdn.region0), 20 MX targets changed (the MX of
 * host000006, 16, ... 196 to edgeK.cdn.region0: their additional lists made again). */
static int cdn_changes(const struct p53_rrs *base, struct p53_ixfr_step *st)
{
	struct p53_rr_view v;
	uint8_t name[256], rd[256];
	char txt[256];

	for (int k = 0; k < 20; k++) {
		uint8_t a[4] = { 198, 18, 2, (uint8_t)k };
		snprintf(txt, sizeof(txt), "edge%d.cdn.region0." ORIGIN, k);
		if (p53_rrs_add(&st->add, name, wire_name(txt, name), 1, 1, 300, a, 4) != 0)
			return -1;
	}
	for (int j = 0; j < 40; j++) {
		snprintf(txt, sizeof(txt), "alias%06d.region%d." ORIGIN, j, j % 128);
		size_t nl = wire_name(txt, name);
		if (find(base, name, nl, 5, &v) != 0 ||
		    p53_rrs_add(&st->del, v.owner, v.owner_len, 5, 1, v.ttl, v.rdata, v.rdlen) != 0)
			return -1;
		snprintf(txt, sizeof(txt), "edge%d.cdn.region0." ORIGIN, j);
		if (p53_rrs_add(&st->add, v.owner, v.owner_len, 5, 1, v.ttl, rd, wire_name(txt, rd)) != 0)
			return -1;
	}
	for (int k = 0; k < 20; k++) {
		int i = 6 + 10 * k;
		snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, i, i % 128);
		size_t nl = wire_name(txt, name);
		if (find(base, name, nl, 15, &v) != 0 ||
		    p53_rrs_add(&st->del, v.owner, v.owner_len, 15, 1, v.ttl, v.rdata, v.rdlen) != 0)
			return -1;
		snprintf(txt, sizeof(txt), "edge%d.cdn.region0." ORIGIN, k);
		rd[0] = 0;
		rd[1] = 10;
		if (p53_rrs_add(&st->add, v.owner, v.owner_len, 15, 1, v.ttl, rd,
				2 + wire_name(txt, rd + 2)) != 0)
			return -1;
	}
	return 0;
}

/*
 * --cdn in a signed zone (issue 13: a signed zone's CNAMEs and apex NS set are patched): 40
 * CNAME targets changed (alias000000..039 to host000500..539, names of the zone: no name
 * comes or goes, no bitmap changes), each CNAME's RRSIG replaced, and a third name server
 * in the apex NS set (host000600, a name of the zone with an address: the NS set's
 * additional list made again), the NS RRset's RRSIG replaced.
 */
static int cdn_signed_changes(const struct p53_rrs *base, struct p53_ixfr_step *st)
{
	struct p53_rr_view v;
	uint8_t name[256], rd[256], apex[256];
	char txt[256];
	size_t al = wire_name(ORIGIN, apex);

	for (int j = 0; j < 40; j++) {
		snprintf(txt, sizeof(txt), "alias%06d.region%d." ORIGIN, j, j % 128);
		size_t nl = wire_name(txt, name);
		if (find(base, name, nl, 5, &v) != 0 ||
		    p53_rrs_add(&st->del, v.owner, v.owner_len, 5, 1, v.ttl, v.rdata, v.rdlen) != 0)
			return -1;
		snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, 500 + j, (500 + j) % 128);
		if (p53_rrs_add(&st->add, v.owner, v.owner_len, 5, 1, v.ttl, rd, wire_name(txt, rd)) != 0 ||
		    resign(base, name, nl, 5, st) != 0)
			return -1;
	}
	if (find(base, apex, al, 2, &v) != 0)
		return -1;
	snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, 600, 600 % 128);
	if (p53_rrs_add(&st->add, apex, al, 2, 1, v.ttl, rd, wire_name(txt, rd)) != 0 ||
	    resign(base, apex, al, 2, st) != 0)
		return -1;
	return 0;
}

/*
 * --dname (an unsigned zone): 40 DNAMEs added at new names (movedNNN.regionR, one new name
 * each) and 10 at existing host names (host000300..309, beside their A: a name of the image
 * becoming a DNAME owner costs the patch one pass over the zone's nodes, image_patch.c
 * dname_links, to find that nothing stays below it).
 */
static int dname_changes(const struct p53_rrs *base, struct p53_ixfr_step *st)
{
	struct p53_rr_view v;
	uint8_t name[256], rd[256];
	char txt[256];

	for (int k = 0; k < 50; k++) {
		if (k < 40)
			snprintf(txt, sizeof(txt), "moved%03d.region%d." ORIGIN, k, k % 128);
		else
			snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, 260 + k, (260 + k) % 128);
		size_t nl = wire_name(txt, name);
		if (k >= 40 && find(base, name, nl, 1, &v) != 0)
			return -1;
		snprintf(txt, sizeof(txt), "region%d.example.net.", k % 128);
		if (p53_rrs_add(&st->add, name, nl, 39, 1, 300, rd, wire_name(txt, rd)) != 0)
			return -1;
	}
	return 0;
}

static int cdn, names, dnames, served;

/*
 * P53_IXFR_STEER=KEYSTEM (a signed zone; KEYSTEM a BIND-format key pair of big.test., say
 * ldns-keygen -a ED25519 big.test): P53_IXFR_STEER_N (default 100) steered owners
 * steerNNN.region0.big.test. (A, two addresses) attached to the zone in every compile, the
 * NSEC or NSEC3 the compile signs for each with that key (fixed validity: an Ed25519 key signs
 * the same bytes each time, so the read-back check holds), as pop53d compiles a signed zone
 * with steered owners (issue 13). The patch keeps those records where the compile would make
 * the same ones and signs an NSEC again, with that key, where the chain moves beside it.
 */
static struct p53_sign_key steer_key;
static struct p53_zone_extra *steer_ex;
static size_t n_steer;

static int steer_setup(void)
{
	const char *stem = getenv("P53_IXFR_STEER");
	char err[256];
	static const uint8_t addrs[8] = { 10, 0, 0, 1, 10, 0, 0, 2 };

	if (stem == NULL || stem[0] == '\0')
		return 0;
	if (p53_sign_key_load(stem, &steer_key, err, sizeof(err)) != 0) {
		fprintf(stderr, "p53-ixfr-apply: %s\n", err);
		return -1;
	}
	n_steer = getenv("P53_IXFR_STEER_N") != NULL ? (size_t)atoi(getenv("P53_IXFR_STEER_N")) : 100;
	steer_ex = calloc(n_steer ? n_steer : 1, sizeof(*steer_ex));
	if (steer_ex == NULL)
		return -1;
	for (size_t i = 0; i < n_steer; i++) {
		char txt[64];
		uint8_t *w = malloc(P53_NAME_MAXLEN);
		snprintf(txt, sizeof(txt), "steer%03zu.region0." ORIGIN, i);
		if (w == NULL)
			return -1;
		size_t o = 0;
		for (const char *q = txt; *q != '\0';) { /* labels, lower case already */
			const char *dot = strchr(q, '.');
			w[o] = (uint8_t)(dot - q);
			memcpy(w + o + 1, q, (size_t)(dot - q));
			o += 1u + (size_t)(dot - q);
			q = dot + 1;
		}
		w[o++] = 0;
		steer_ex[i] = (struct p53_zone_extra){ .lname = w,
			.lname_len = (uint8_t)o, .type = 1, .ttl = 300,
			.addrs = addrs, .rdlen = 4, .n = 2, .line = (int)i + 1, .owner = strdup(txt),
			.rec = (uint32_t)i };
	}
	return 0;
}

/* The steered owners and key (steer_setup) on zone source s, as every compile of pop53d's. */
static void steer_src(struct p53_zone_src *s)
{
	if (n_steer == 0)
		return;
	s->cfg_file = "pop53.yaml";
	s->extra = steer_ex;
	s->n_extra = n_steer;
	s->steer_layout = 1;
	s->sign_key = &steer_key;
	s->sign_inception = 1764500000u;
	s->sign_expiration = 2082758400u;
}
/* --served-child: the child zone's records (zone 1 of every image). */
static struct p53_rrs kid;
#define KID "kid." ORIGIN
#define DS_RD "\x30\x39\x0d\x02" "0123456789abcdef0123456789abcdef"

static int add_txt(struct p53_rrs *to, const char *owner, uint16_t type, const uint8_t *rd, size_t rl)
{
	uint8_t name[256];
	size_t nl = wire_name(owner, name);

	return p53_rrs_add(to, name, nl, type, 1, 3600, rd, rl);
}

static int add_name(struct p53_rrs *to, const char *owner, uint16_t type, const char *target)
{
	uint8_t rd[256];

	return add_txt(to, owner, type, rd, wire_name(target, rd));
}

/* --served-flip (an NSEC-signed genzone.py zone): the served child is genzone.py's first
 * delegation, whose glue stays when its NS go (flip_changes). */
static int served_flip;
#define FLIP_KID "sub0000.region0." ORIGIN

/* --served-above (issue 13, round 25): the served child is kid.mid.big.test., below the
 * parent's mid.big.test. (a TXT), delegated with glue; the difference NS added at mid (above
 * the child's apex: the parent's names there become glue, occ_above). */
static int served_above;
#define ABOVE_KID "kid.mid." ORIGIN

/* The served child's name: kid.big.test., or with --served-flip the delegation's. */
static const char *kid_name(void)
{
	return served_flip ? FLIP_KID : served_above ? ABOVE_KID : KID;
}

/* --served-above: mid's TXT, the delegation to kid.mid and its glue into the parent's
 * records; the child zone (kid_zone). */
static int kid_zone(const char *apex, const char *ns_label);

static int above_setup(struct p53_rrs *base)
{
	static const uint8_t a1[4] = { 198, 18, 2, 1 }, txt[2] = { 1, 'm' };

	return add_txt(base, "mid." ORIGIN, 16, txt, sizeof(txt)) ||
	       add_name(base, ABOVE_KID, 2, "ns." ABOVE_KID) ||
	       add_txt(base, "ns." ABOVE_KID, 1, a1, 4) || kid_zone(ABOVE_KID, "ns");
}

/* A served child zone at `apex` (--served-flip, --served-above): SOA, NS <ns_label>.<apex> and
 * its A, www. */
static int kid_zone(const char *apex, const char *ns_label)
{
	static const uint8_t a1[4] = { 198, 18, 2, 1 }, a2[4] = { 198, 18, 2, 3 };
	static const uint8_t tail[20] = { 0, 0, 0, 1, 0, 0, 0x1c, 0x20, 0, 0, 0x0e, 0x10,
					  0, 0x12, 0x75, 0, 0, 0, 1, 0x2c };
	char ns[256], host[256], www[256];
	uint8_t soa[600];

	snprintf(ns, sizeof(ns), "%s.%s", ns_label, apex);
	snprintf(host, sizeof(host), "host.%s", apex);
	snprintf(www, sizeof(www), "www.%s", apex);
	size_t l = wire_name(ns, soa);
	l += wire_name(host, soa + l);
	memcpy(soa + l, tail, sizeof(tail));
	return add_txt(&kid, apex, 6, soa, l + sizeof(tail)) || add_name(&kid, apex, 2, ns) ||
	       add_txt(&kid, ns, 1, a1, 4) || add_txt(&kid, www, 1, a2, 4);
}

/* --served-flip: the child zone sub0000.region0.big.test. (SOA, NS ns1 and its A, www). */
static int flip_setup(void)
{
	return kid_zone(FLIP_KID, "ns1");
}

/* --served-child: the delegation into the parent's records, and the child zone. */
static int served_setup(struct p53_rrs *base)
{
	if (served_flip)
		return flip_setup();
	if (served_above)
		return above_setup(base);
	static const uint8_t a1[4] = { 198, 18, 2, 1 }, a2[4] = { 198, 18, 2, 3 };
	static const uint8_t soa[] = "\2ns\3kid\3big\4test\0\4host\3kid\3big\4test\0"
				     "\0\0\0\1\0\0\x1c\x20\0\0\x0e\x10\0\x12\x75\0\0\0\1\x2c";

	return add_name(base, KID, 2, "ns.kid." ORIGIN) || add_name(base, KID, 2, "ns1." ORIGIN) ||
	       add_txt(base, "ns.kid." ORIGIN, 1, a1, 4) ||
	       add_txt(&kid, KID, 6, soa, sizeof(soa) - 1) || add_name(&kid, KID, 2, "ns.kid." ORIGIN) ||
	       add_txt(&kid, "ns.kid." ORIGIN, 1, a1, 4) || add_txt(&kid, "www.kid." ORIGIN, 1, a2, 4);
}

/* --served-glue: new glue, a name new in the parent below the served child's apex (NS
 * ns2.kid.big.test. added to the delegation, its A 198.18.2.9). */
static int served_glue;

/* --served-child: the delegation's changes (a DS added, the NS set, the glue renumbered). */
static int served_changes(struct p53_ixfr_step *st)
{
	static const uint8_t a1[4] = { 198, 18, 2, 1 }, a2[4] = { 198, 18, 2, 2 };
	static const uint8_t a9[4] = { 198, 18, 2, 9 };

	if (served_above)
		return add_name(&st->add, "mid." ORIGIN, 2, "ns.other.example.");
	if (served_glue)
		return add_name(&st->add, KID, 2, "ns2.kid." ORIGIN) ||
		       add_txt(&st->add, "ns2.kid." ORIGIN, 1, a9, 4);

	return add_txt(&st->add, KID, 43, (const uint8_t *)DS_RD, sizeof(DS_RD) - 1) ||
	       add_name(&st->del, KID, 2, "ns1." ORIGIN) ||
	       add_name(&st->add, KID, 2, "ns.other.example.") ||
	       add_txt(&st->del, "ns.kid." ORIGIN, 1, a1, 4) ||
	       add_txt(&st->add, "ns.kid." ORIGIN, 1, a2, 4);
}

static size_t n3_owner(const uint8_t h[P53_NSEC3_HASH_LEN], uint8_t *out);

/*
 * --dname on a signed zone (NSEC or NSEC3: issue 13, signed_dname): 50 host names
 * (host000300..349) each gain a DNAME beside their A, as a signing primary sends it: the
 * DNAME and its RRSIG, the host's NSEC (or the NSEC3 at its hash) with DNAME in its bitmap,
 * signed again. A name of the image becoming a DNAME owner: one pass over the zone's nodes
 * (dname_links) finds that nothing stays below them.
 */
static int dname_changes_signed(const struct p53_rrs *base, struct p53_ixfr_step *st)
{
	struct p53_rr_view v, param, den, sig;
	uint8_t apex[256], name[256], own[256], rd[2048];
	char txt[256];
	size_t al = wire_name(ORIGIN, apex);
	int n3 = find(base, apex, al, 51, &param) == 0;

	for (int k = 0; k < 50; k++) {
		snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, 300 + k, (300 + k) % 128);
		size_t nl = wire_name(txt, name);
		if (find(base, name, nl, 1, &v) != 0 || sig_find(base, name, nl, 1, sizeof(rd), &sig) != 0)
			return -1;
		snprintf(txt, sizeof(txt), "region%d.example.net.", k % 128);
		if (p53_rrs_add(&st->add, name, nl, 39, 1, v.ttl, rd, wire_name(txt, rd)) != 0)
			return -1;
		/* Its RRSIG: the A's, covering DNAME, other signature bytes. */
		memcpy(rd, sig.rdata, sig.rdlen);
		rd[0] = 0;
		rd[1] = 39;
		for (size_t b = sig.rdlen - 8; b < sig.rdlen; b++)
			rd[b] ^= 0x3c;
		if (p53_rrs_add(&st->add, name, nl, 46, 1, sig.ttl, rd, sig.rdlen) != 0)
			return -1;
		/* The denial record at the name (NSEC) or its hash (NSEC3): DNAME in window 0. */
		const uint8_t *on = name;
		size_t ol = nl;
		if (n3) {
			uint8_t h[P53_NSEC3_HASH_LEN];
			p53_nsec3_hash(name, nl, param.rdata + 5, param.rdata[4],
				       p53_get16(param.rdata + 2), h);
			ol = n3_owner(h, own);
			on = own;
		}
		if (find(base, on, ol, n3 ? 50 : 47, &den) != 0)
			return -1;
		int nh = p53_name_len(den.rdata, den.rdlen);
		size_t head = n3 ? 6u + den.rdata[4] + den.rdata[5 + den.rdata[4]] : (size_t)nh;
		if (nh < 0 || den.rdlen < head + 2 || den.rdata[head] != 0)
			return -1;
		uint8_t bl = den.rdata[head + 1], blk[32] = { 0 };
		memcpy(blk, den.rdata + head + 2, bl);
		blk[4] |= 0x01; /* type 39: byte 4, its last bit (RFC 4034 §4.1.2) */
		uint8_t nbl = bl < 5 ? 5 : bl;
		size_t l = head;
		memcpy(rd, den.rdata, head);
		rd[l++] = 0;
		rd[l++] = nbl;
		memcpy(rd + l, blk, nbl);
		l += nbl;
		memcpy(rd + l, den.rdata + head + 2 + bl, den.rdlen - head - 2 - bl);
		l += den.rdlen - head - 2 - bl;
		if (p53_rrs_add(&st->del, den.owner, den.owner_len, den.type, 1, den.ttl, den.rdata,
				den.rdlen) != 0 ||
		    p53_rrs_add(&st->add, den.owner, den.owner_len, den.type, 1, den.ttl, rd, l) != 0 ||
		    resign(base, den.owner, den.owner_len, den.type, st) != 0)
			return -1;
	}
	return 0;
}

/*
 * --glue-cname on a signed zone (issue 13, image_patch.c glue_cname): 50 delegations
 * (genzone.py's subNNNN.regionR, the first 50 in the zone) each get a CNAME at a new name
 * below the cut (www.subNNNN.regionR to a host of the zone), as a signing primary sends it:
 * the CNAME alone (occluded data, not signed, no NSEC or NSEC3: RFC 4035 §2.2) and the SOA
 * with its RRSIG. Each new name below a cut gets its occluder from the patch (cut_links: one
 * index probe per label), and an opt-out chain's proofs stay as they are.
 */
static int glue_cname_changes(const struct p53_rrs *base, struct p53_ixfr_step *st)
{
	struct p53_rr_view v;
	uint8_t name[256], tg[256], last[256];
	char txt[256];
	size_t pos = 0, ll = 0;
	int k = 0;

	while (k < 50 && p53_rrs_next(base, &pos, &v) == 1) {
		if (v.type != 2 || v.owner[0] < 4 || memcmp(v.owner + 1, "sub", 3) != 0 ||
		    (v.owner_len == ll && memcmp(v.owner, last, ll) == 0))
			continue;
		memcpy(last, v.owner, v.owner_len);
		ll = v.owner_len;
		name[0] = 3;
		memcpy(name + 1, "www", 3);
		memcpy(name + 4, v.owner, v.owner_len);
		snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, 400 + k, (400 + k) % 128);
		if (p53_rrs_add(&st->add, name, 4u + v.owner_len, 5, 1, 3600, tg, wire_name(txt, tg)) != 0)
			return -1;
		k++;
	}
	return k == 50 ? 0 : -1;
}

static int glue_cnames;

/* The RRSIG over (owner, covered) in r, copied to `to` (at new_owner, or owner) with other
 * signature bytes; -1 if none. */
static int sig_copy(const struct p53_rrs *r, const uint8_t *owner, size_t olen, uint16_t covered,
		    const uint8_t *new_owner, size_t nlen, struct p53_rrs *to)
{
	struct p53_rr_view v;
	uint8_t rd[1024];

	if (sig_find(r, owner, olen, covered, sizeof(rd), &v) != 0)
		return -1;
	memcpy(rd, v.rdata, v.rdlen);
	for (size_t k = v.rdlen - 8; k < v.rdlen; k++)
		rd[k] ^= 0xa5;
	return p53_rrs_add(to, new_owner, nlen, 46, 1, v.ttl, rd, v.rdlen);
}

/* An NSEC's RDATA with another next name. */
static size_t nsec_next(const struct p53_rr_view *nsec, const uint8_t *next, size_t nl, uint8_t *rd)
{
	int ol = p53_name_len(nsec->rdata, nsec->rdlen);

	memcpy(rd, next, nl);
	memcpy(rd + nl, nsec->rdata + ol, nsec->rdlen - (size_t)ol);
	return nl + nsec->rdlen - (size_t)ol;
}

/*
 * --served-flip (an NSEC-signed genzone.py zone beside its served child sub0000.region0): what
 * a signing primary sends when the delegation to the child goes while its glue stays: the
 * cut's NS (not signed) and its NSEC with its RRSIG removed (the name stays, an empty
 * non-terminal of the parent: no NSEC), ns1.sub0000.region0 signed (its A's RRSIG) and
 * given an NSEC (bitmap A RRSIG NSEC, the cut's next name, signed), the NSEC before the cut
 * pointing at it, signed again. The patch takes it as shadow_flips (the glue freed, out of
 * the name index, the proofs made again with the chain's).
 */
static int flip_changes(const struct p53_rrs *base, struct p53_ixfr_step *st)
{
	static const uint8_t bits[] = { 0, 6, 0x40, 0, 0, 0, 0, 0x03 }; /* A RRSIG NSEC */
	struct p53_rr_view v, nsec, sig, prev;
	uint8_t cut[256], glue[256], host[256], rd[2048];
	size_t cl = wire_name(FLIP_KID, cut), gl = wire_name("ns1." FLIP_KID, glue), pos = 0;
	size_t hl = wire_name("host000000.region0." ORIGIN, host);
	int n_ns = 0, have_prev = 0;

	if (find(base, cut, cl, 47, &nsec) != 0 || sig_find(base, cut, cl, 47, sizeof(rd), &sig) != 0 ||
	    find(base, glue, gl, 1, &v) != 0)
		return -1;
	while (p53_rrs_next(base, &pos, &v) == 1) {
		if (v.type == 2 && v.owner_len == cl && memcmp(v.owner, cut, cl) == 0) {
			if (p53_rrs_add(&st->del, v.owner, v.owner_len, 2, 1, v.ttl, v.rdata, v.rdlen) != 0)
				return -1;
			n_ns++;
		}
		if (v.type == 47 && p53_name_len(v.rdata, v.rdlen) == (int)cl &&
		    memcmp(v.rdata, cut, cl) == 0) {
			prev = v;
			have_prev = 1;
		}
	}
	int ol = p53_name_len(nsec.rdata, nsec.rdlen);
	if (n_ns == 0 || !have_prev || ol < 0)
		return -1;
	memcpy(rd, nsec.rdata, (size_t)ol);
	memcpy(rd + ol, bits, sizeof(bits));
	if (p53_rrs_add(&st->del, cut, cl, 47, 1, nsec.ttl, nsec.rdata, nsec.rdlen) != 0 ||
	    p53_rrs_add(&st->del, cut, cl, 46, 1, sig.ttl, sig.rdata, sig.rdlen) != 0 ||
	    p53_rrs_add(&st->add, glue, gl, 47, 1, nsec.ttl, rd, (size_t)ol + sizeof(bits)) != 0 ||
	    sig_copy(base, cut, cl, 47, glue, gl, &st->add) != 0 ||
	    sig_copy(base, host, hl, 1, glue, gl, &st->add) != 0 ||
	    p53_rrs_add(&st->del, prev.owner, prev.owner_len, 47, 1, prev.ttl, prev.rdata,
			prev.rdlen) != 0 ||
	    p53_rrs_add(&st->add, prev.owner, prev.owner_len, 47, 1, prev.ttl, rd,
			nsec_next(&prev, glue, gl, rd)) != 0 ||
	    resign(base, prev.owner, prev.owner_len, 47, st) != 0)
		return -1;
	return 0;
}

/*
 * The i-th of the 50 names that come with --names (i in 400..449): hostNa.regionR, right after
 * hostN.regionR in canonical order, gets an A (198.18.2.i-400) signed as hostN's A. Its wire
 * name goes to nn (xl), hostN's to name (hl).
 */
static int host_comes(const struct p53_rrs *base, int i, uint8_t *name, size_t *hl, uint8_t *nn,
		      size_t *xl, struct p53_ixfr_step *st)
{
	struct p53_rr_view v;
	char txt[256];
	uint8_t a[4] = { 198, 18, 2, (uint8_t)(i - 400) };

	snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, i, i % 128);
	*hl = wire_name(txt, name);
	snprintf(txt, sizeof(txt), "host%06da.region%d." ORIGIN, i, i % 128);
	*xl = wire_name(txt, nn);
	if (find(base, name, *hl, 1, &v) != 0 ||
	    p53_rrs_add(&st->add, nn, *xl, 1, 1, v.ttl, a, 4) != 0 ||
	    sig_copy(base, name, *hl, 1, nn, *xl, &st->add) != 0)
		return -1;
	return 0;
}

/*
 * --names (an NSEC-signed zone): what a signing primary sends when names come and go. 50 names
 * added (hostNa.regionR right after host000400..449 in canonical order: an A, its NSEC, both
 * signed; the NSEC before it points at it, signed again), 25 removed (host000100..124: every
 * record; the NSEC pointing at each points past it, signed again).
 */
static int names_changes(const struct p53_rrs *base, struct p53_ixfr_step *st)
{
	struct p53_rr_view v, nsec;
	uint8_t name[256], nn[256], rd[2048];
	char txt[256];

	for (int i = 400; i < 450; i++) {
		size_t hl, xl;
		static const uint8_t bits[] = { 0, 6, 0x40, 0, 0, 0, 0, 0x03 }; /* A RRSIG NSEC */
		if (host_comes(base, i, name, &hl, nn, &xl, st) != 0 ||
		    find(base, name, hl, 47, &nsec) != 0)
			return -1;
		int ol = p53_name_len(nsec.rdata, nsec.rdlen);
		memcpy(rd, nsec.rdata, (size_t)ol);
		memcpy(rd + ol, bits, sizeof(bits));
		if (p53_rrs_add(&st->add, nn, xl, 47, 1, nsec.ttl, rd, (size_t)ol + sizeof(bits)) != 0 ||
		    sig_copy(base, name, hl, 47, nn, xl, &st->add) != 0 ||
		    p53_rrs_add(&st->del, name, hl, 47, 1, nsec.ttl, nsec.rdata, nsec.rdlen) != 0 ||
		    p53_rrs_add(&st->add, name, hl, 47, 1, nsec.ttl, rd, nsec_next(&nsec, nn, xl, rd)) != 0 ||
		    resign(base, name, hl, 47, st) != 0)
			return -1;
	}
	/* The names that go, and the NSECs pointing at them (one pass). */
	uint8_t gone[25][256];
	size_t gl[25];
	struct p53_rr_view next_of[25], prev[25];
	int have_next[25] = { 0 }, have_prev[25] = { 0 };
	for (int k = 0; k < 25; k++) {
		snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, 100 + k, (100 + k) % 128);
		gl[k] = wire_name(txt, gone[k]);
	}
	size_t pos = 0;
	while (p53_rrs_next(base, &pos, &v) == 1) {
		for (int k = 0; k < 25; k++) {
			if (v.owner_len == gl[k] && memcmp(v.owner, gone[k], gl[k]) == 0) {
				if (p53_rrs_add(&st->del, v.owner, v.owner_len, v.type, v.cls, v.ttl,
						v.rdata, v.rdlen) != 0)
					return -1;
				if (v.type == 47) {
					next_of[k] = v;
					have_next[k] = 1;
				}
			}
			if (v.type == 47 && v.rdlen > gl[k] && memcmp(v.rdata, gone[k], gl[k]) == 0) {
				prev[k] = v;
				have_prev[k] = 1;
			}
		}
	}
	for (int k = 0; k < 25; k++) {
		if (!have_next[k] || !have_prev[k])
			return -1;
		for (int j = 0; j < 25; j++)
			if (prev[k].owner_len == gl[j] && memcmp(prev[k].owner, gone[j], gl[j]) == 0)
				return -1; /* two gone names in a row: not made here */
		int nl = p53_name_len(next_of[k].rdata, next_of[k].rdlen);
		if (p53_rrs_add(&st->del, prev[k].owner, prev[k].owner_len, 47, 1, prev[k].ttl,
				prev[k].rdata, prev[k].rdlen) != 0 ||
		    p53_rrs_add(&st->add, prev[k].owner, prev[k].owner_len, 47, 1, prev[k].ttl, rd,
				nsec_next(&prev[k], next_of[k].rdata, (size_t)nl, rd)) != 0 ||
		    resign(base, prev[k].owner, prev[k].owner_len, 47, st) != 0)
			return -1;
	}
	return 0;
}

/*
 * --names with P53_IXFR_STEER_NEAR=K (K of the steered owners, an NSEC-signed genzone.py zone):
 * K names more, steerNNNa.region0 (NNN < K) right after the steered owners steerNNN in
 * canonical order (an A, an NSEC each pointing at the next one, the last at sub0000.region0,
 * signed), the zone's NSEC covering the owners (the one naming sub0000.region0) pointing at
 * the first, signed again. Each of those K owners' NSEC, which pop53 signs, gets another next
 * name: the patch signs them again (round 21; compiled in full before).
 */
static int near_changes(const struct p53_rrs *base, struct p53_ixfr_step *st, size_t k)
{
	static const uint8_t bits[] = { 0, 6, 0x40, 0, 0, 0, 0, 0x03 }; /* A RRSIG NSEC */
	struct p53_rr_view v, cov;
	uint8_t sub[256], nn[256], nx[256], rd[2048];
	char txt[256];
	size_t sl = wire_name("sub0000.region0." ORIGIN, sub), pos = 0;
	int have = 0;

	while (!have && p53_rrs_next(base, &pos, &v) == 1)
		if (v.type == 47 && p53_name_len(v.rdata, v.rdlen) == (int)sl &&
		    memcmp(v.rdata, sub, sl) == 0) {
			cov = v;
			have = 1;
		}
	if (!have || k > n_steer)
		return -1;
	for (size_t i = 0; i < k; i++) {
		uint8_t a[4] = { 198, 18, 3, (uint8_t)i };
		size_t xl, nl = sl;
		snprintf(txt, sizeof(txt), "steer%03zua.region0." ORIGIN, i);
		xl = wire_name(txt, nn);
		memcpy(nx, sub, sl);
		if (i + 1 < k) {
			snprintf(txt, sizeof(txt), "steer%03zua.region0." ORIGIN, i + 1);
			nl = wire_name(txt, nx);
		}
		memcpy(rd, nx, nl);
		memcpy(rd + nl, bits, sizeof(bits));
		if (p53_rrs_add(&st->add, nn, xl, 1, 1, cov.ttl, a, 4) != 0 ||
		    sig_copy(base, cov.owner, cov.owner_len, 1, nn, xl, &st->add) != 0 ||
		    p53_rrs_add(&st->add, nn, xl, 47, 1, cov.ttl, rd, nl + sizeof(bits)) != 0 ||
		    sig_copy(base, cov.owner, cov.owner_len, 47, nn, xl, &st->add) != 0)
			return -1;
	}
	if (k == 0)
		return 0;
	size_t fl = wire_name("steer000a.region0." ORIGIN, nn);
	if (p53_rrs_add(&st->del, cov.owner, cov.owner_len, 47, 1, cov.ttl, cov.rdata, cov.rdlen) != 0 ||
	    p53_rrs_add(&st->add, cov.owner, cov.owner_len, 47, 1, cov.ttl, rd,
			nsec_next(&cov, nn, fl, rd)) != 0 ||
	    resign(base, cov.owner, cov.owner_len, 47, st) != 0)
		return -1;
	return 0;
}

/* --names in an NSEC3-signed zone: one NSEC3 of the chain, by hash. */
struct n3rec {
	uint8_t hash[P53_NSEC3_HASH_LEN];
	struct p53_rr_view v;   /* its record in base (owner_len 0: a new one) */
	int gone;
	int aaaa;               /* a new one's name has an AAAA, not an A (steer_own) */
};

static int n3rec_cmp(const void *a, const void *b)
{
	return memcmp(((const struct n3rec *)a)->hash, ((const struct n3rec *)b)->hash,
		      P53_NSEC3_HASH_LEN);
}

static size_t n3_owner(const uint8_t h[P53_NSEC3_HASH_LEN], uint8_t *out)
{
	char txt[128];

	p53_n3_b32hex(h, (uint8_t *)txt);
	snprintf(txt + 32, sizeof(txt) - 32, ".%s", ORIGIN);
	return wire_name(txt, out);
}

/*
 * --names in an NSEC3-signed zone: the same 50 names added (an A and its RRSIG, an NSEC3 at
 * the name's hash, bitmap A RRSIG, signed) and 25 removed (every record, and its NSEC3 with
 * its RRSIG), and every NSEC3 whose next hash changes replaced and signed again, as a signer
 * does (RFC 5155 §7.1).
 */
static int names3_changes(const struct p53_rrs *base, struct p53_ixfr_step *st)
{
	struct p53_rr_view v, param;
	uint8_t apex[256], name[256], nn[256], rd[2048], own[256];
	char txt[256];
	size_t al = wire_name(ORIGIN, apex), n = 0, cap = 1024, pos = 0;
	struct n3rec *c = malloc(cap * sizeof(*c));

	if (c == NULL || find(base, apex, al, 51, &param) != 0)
		return -1;
	const uint8_t *salt = param.rdata + 5, salt_len = param.rdata[4];
	uint16_t iter = p53_get16(param.rdata + 2);
	while (p53_rrs_next(base, &pos, &v) == 1) {
		if (v.type != 50)
			continue;
		if (n + 64 >= cap) {
			cap *= 2;
			struct n3rec *c2 = realloc(c, cap * sizeof(*c));
			if (c2 == NULL)
				return -1;
			c = c2;
		}
		memset(&c[n], 0, sizeof(c[n]));
		c[n].v = v;
		memcpy(c[n++].hash, v.rdata + 6 + v.rdata[4], P53_NSEC3_HASH_LEN);
	}
	if (n == 0)
		return -1;
	struct p53_rr_view proto = c[0].v;
	/* Own hashes from the owner names (base32hex). */
	for (size_t i = 0; i < n; i++) {
		uint64_t acc = 0;
		int bits = 0, o = 0;
		for (int k = 1; k <= 32; k++) {
			uint8_t ch = c[i].v.owner[k] | 0x20;
			acc = acc << 5 | (uint8_t)(ch <= '9' ? ch - '0' : ch - 'a' + 10);
			bits += 5;
			if (bits >= 8) {
				bits -= 8;
				c[i].hash[o++] = (uint8_t)(acc >> bits);
			}
		}
	}
	/* The names that go: every record of theirs and of their NSEC3's owner. */
	uint8_t gone[50][256];
	size_t gl[50];
	for (int k = 0; k < 25; k++) {
		uint8_t h[P53_NSEC3_HASH_LEN];
		snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, 100 + k, (100 + k) % 128);
		gl[k] = wire_name(txt, gone[k]);
		p53_nsec3_hash(gone[k], gl[k], salt, salt_len, iter, h);
		gl[25 + k] = n3_owner(h, gone[25 + k]);
	}
	pos = 0;
	while (p53_rrs_next(base, &pos, &v) == 1)
		for (int k = 0; k < 50; k++)
			if (v.owner_len == gl[k] && memcmp(v.owner, gone[k], gl[k]) == 0 &&
			    p53_rrs_add(&st->del, v.owner, v.owner_len, v.type, v.cls, v.ttl, v.rdata,
					v.rdlen) != 0)
				return -1;
	for (size_t i = 0; i < n; i++)
		for (int k = 25; k < 50; k++)
			c[i].gone |= c[i].v.owner_len == gl[k] && memcmp(c[i].v.owner, gone[k], gl[k]) == 0;
	/* The names that come. */
	for (int i = 400; i < 450; i++) {
		size_t hl, xl;
		if (host_comes(base, i, name, &hl, nn, &xl, st) != 0)
			return -1;
		memset(&c[n], 0, sizeof(c[n]));
		p53_nsec3_hash(nn, xl, salt, salt_len, iter, c[n++].hash);
	}
	/* P53_IXFR_STEER_OWN=K: the first K steered owners gain their own NSEC3. */
	const char *own_k = getenv("P53_IXFR_STEER_OWN");
	size_t k_own = own_k != NULL ? (size_t)atoi(own_k) : 0;
	if (k_own > n_steer || (k_own > 0 && n + k_own >= cap))
		return -1;
	for (size_t i = 0; i < k_own; i++) {
		uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = (uint8_t)i };
		size_t hl = wire_name("host000400.region16." ORIGIN, name), sl;
		if (sig_find(base, name, hl, 1, sizeof(rd), &v) != 0)
			return -1;
		memcpy(rd, v.rdata, v.rdlen);
		rd[0] = 0;
		rd[1] = 28; /* type covered: AAAA */
		for (size_t q = v.rdlen - 8; q < v.rdlen; q++)
			rd[q] ^= (uint8_t)(0x33 + i);
		snprintf(txt, sizeof(txt), "steer%03zu.region0." ORIGIN, i);
		sl = wire_name(txt, nn);
		if (p53_rrs_add(&st->add, nn, sl, 28, 1, v.ttl, a6, 16) != 0 ||
		    p53_rrs_add(&st->add, nn, sl, 46, 1, v.ttl, rd, v.rdlen) != 0)
			return -1;
		memset(&c[n], 0, sizeof(c[n]));
		c[n].aaaa = 1;
		p53_nsec3_hash(nn, sl, salt, salt_len, iter, c[n++].hash);
	}
	qsort(c, n, sizeof(*c), n3rec_cmp);
	/* The chain again: each NSEC3's next hash; the changed ones replaced, signed again. */
	for (size_t i = 0; i < n; i++) {
		if (c[i].gone)
			continue;
		size_t j = (i + 1) % n;
		while (c[j].gone)
			j = (j + 1) % n;
		if (c[i].v.owner_len == 0) {
			static const uint8_t b4[] = { 0, 6, 0x40, 0, 0, 0, 0, 0x02 }; /* A RRSIG */
			static const uint8_t b6[] = { 0, 6, 0, 0, 0, 0x08, 0, 0x02 }; /* AAAA RRSIG */
			const uint8_t *bits = c[i].aaaa ? b6 : b4;
			size_t l = 6u + salt_len;
			memcpy(rd, proto.rdata, l - 1);
			rd[l - 1] = P53_NSEC3_HASH_LEN;
			memcpy(rd + l, c[j].hash, P53_NSEC3_HASH_LEN);
			memcpy(rd + l + P53_NSEC3_HASH_LEN, bits, sizeof(b4));
			size_t ol = n3_owner(c[i].hash, own);
			if (p53_rrs_add(&st->add, own, ol, 50, 1, proto.ttl, rd,
					l + P53_NSEC3_HASH_LEN + sizeof(b4)) != 0 ||
			    sig_copy(base, proto.owner, proto.owner_len, 50, own, ol, &st->add) != 0)
				return -1;
			continue;
		}
		const struct p53_rr_view *x = &c[i].v;
		size_t ho = 6u + x->rdata[4];
		if (memcmp(x->rdata + ho, c[j].hash, P53_NSEC3_HASH_LEN) == 0)
			continue;
		memcpy(rd, x->rdata, x->rdlen);
		memcpy(rd + ho, c[j].hash, P53_NSEC3_HASH_LEN);
		if (p53_rrs_add(&st->del, x->owner, x->owner_len, 50, 1, x->ttl, x->rdata, x->rdlen) != 0 ||
		    p53_rrs_add(&st->add, x->owner, x->owner_len, 50, 1, x->ttl, rd, x->rdlen) != 0 ||
		    resign(base, x->owner, x->owner_len, 50, st) != 0)
			return -1;
	}
	free(c);
	return 0;
}

static int make_diff(const struct p53_rrs *base, struct p53_ixfr *d, int sgn)
{
	struct p53_rr_view soa, v;
	uint8_t apex[256], name[256];
	char txt[256];
	size_t al = wire_name(ORIGIN, apex);
	int64_t serial = p53_rrs_soa_serial(base);

	if (serial < 0 || find(base, apex, al, 6, &soa) != 0)
		return -1;
	struct p53_ixfr_step *st = p53_ixfr_push(d);
	if (st == NULL)
		return -1;
	st->from = (uint32_t)serial;
	st->to = (uint32_t)serial + 1;
	if (add_soa(&st->del, &soa, st->from) != 0 || add_soa(&st->add, &soa, st->to) != 0)
		return -1;
	if (sgn) {
		if (resign(base, apex, al, 6, st) != 0) {
			fprintf(stderr, "p53-ixfr-apply: the signed zone's SOA has no RRSIG\n");
			return -1;
		}
		if (served_flip) {
			if (flip_changes(base, st) != 0) {
				fprintf(stderr, "p53-ixfr-apply: --served-flip: the delegation, its glue, "
					"NSECs or RRSIGs missing (not an NSEC-signed genzone.py zone?)\n");
				return -1;
			}
			return 0;
		}
		if (glue_cnames) {
			if (glue_cname_changes(base, st) != 0) {
				fprintf(stderr, "p53-ixfr-apply: --glue-cname: fewer than 50 "
					"delegations (not a genzone.py zone?)\n");
				return -1;
			}
			return 0;
		}
		if (dnames) {
			if (dname_changes_signed(base, st) != 0) {
				fprintf(stderr, "p53-ixfr-apply: --dname: a host, its NSEC/NSEC3 or "
					"RRSIG missing (not a signed genzone.py zone?)\n");
				return -1;
			}
			return 0;
		}
		if (names) {
			const char *near = getenv("P53_IXFR_STEER_NEAR");
			if ((find(base, apex, al, 51, &v) == 0 ? names3_changes(base, st) :
			     names_changes(base, st) ||
			     near_changes(base, st, near != NULL ? (size_t)atoi(near) : 0)) != 0) {
				fprintf(stderr, "p53-ixfr-apply: --names: a name, its NSEC or RRSIGs "
					"missing (not an NSEC-signed genzone.py zone?)\n");
				return -1;
			}
			return 0;
		}
		if (cdn) {
			if (cdn_signed_changes(base, st) != 0) {
				fprintf(stderr, "p53-ixfr-apply: --cdn: an alias, the apex NS or their "
					"RRSIGs missing (not a signed genzone.py zone?)\n");
				return -1;
			}
			return 0;
		}
		for (int i = 200; i < 300; i++) {
			uint8_t a[4] = { 198, 18, 1, (uint8_t)(i - 200) };
			snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, i, i % 128);
			size_t nl = wire_name(txt, name);
			if (find(base, name, nl, 1, &v) != 0 ||
			    p53_rrs_add(&st->del, v.owner, v.owner_len, 1, 1, v.ttl, v.rdata, v.rdlen) != 0 ||
			    p53_rrs_add(&st->add, v.owner, v.owner_len, 1, 1, v.ttl, a, 4) != 0 ||
			    resign(base, name, nl, 1, st) != 0) {
				fprintf(stderr, "p53-ixfr-apply: %s has no signed A record\n", txt);
				return -1;
			}
		}
		return 0;
	}
	if (served)
		return served_changes(st);
	if (dnames) {
		if (dname_changes(base, st) != 0) {
			fprintf(stderr, "p53-ixfr-apply: --dname: a host is missing (not a genzone.py zone?)\n");
			return -1;
		}
		return 0;
	}
	if (cdn) {
		if (cdn_changes(base, st) != 0) {
			fprintf(stderr, "p53-ixfr-apply: --cdn: an alias or MX is missing (not a genzone.py zone?)\n");
			return -1;
		}
		return 0;
	}
	for (int i = 1; i <= 50; i++) {
		uint8_t a[4] = { 198, 18, 0, (uint8_t)i };
		snprintf(txt, sizeof(txt), "added%d.region0." ORIGIN, i);
		size_t nl = wire_name(txt, name);
		if (p53_rrs_add(&st->add, name, nl, 1, 1, 3600, a, 4) != 0)
			return -1;
	}
	for (int i = 100; i < 125; i++) {
		snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, i, i % 128);
		size_t nl = wire_name(txt, name);
		if (find(base, name, nl, 1, &v) != 0 ||
		    p53_rrs_add(&st->del, v.owner, v.owner_len, 1, 1, v.ttl, v.rdata, v.rdlen) != 0) {
			fprintf(stderr, "p53-ixfr-apply: %s has no A record (not a genzone.py zone?)\n", txt);
			return -1;
		}
	}
	for (int i = 200; i < 225; i++) {
		uint8_t a[4] = { 198, 18, 1, (uint8_t)(i - 200) };
		snprintf(txt, sizeof(txt), "host%06d.region%d." ORIGIN, i, i % 128);
		size_t nl = wire_name(txt, name);
		if (find(base, name, nl, 1, &v) != 0 ||
		    p53_rrs_add(&st->del, v.owner, v.owner_len, 1, 1, v.ttl, v.rdata, v.rdlen) != 0 ||
		    p53_rrs_add(&st->add, v.owner, v.owner_len, 1, 1, 3600, a, 4) != 0) {
			fprintf(stderr, "p53-ixfr-apply: %s has no A record (not a genzone.py zone?)\n", txt);
			return -1;
		}
	}
	return 0;
}

static const char *const mode_name[] = { "compile", "patch", "patch-lazy", "patch-spare" };

/* One mode's runs (0: compile, 1: patch, 2: patch-lazy, 3: patch-spare), in a forked child. */
static int run(const void *img, size_t len, const struct p53_ixfr *d, int runs, int patch)
{
	char err[1024];
	uint8_t apex[256];
	size_t al = wire_name(ORIGIN, apex);
	uint32_t records = p53_image_hdr(img)->n_records;
	long base_kb = rss_kb();

	double ex[100], ap[100], co[100], to[100], cp[100], cc[100], rf[100], rd[100];
	uint32_t after = 0, n_ref = 0;
	void *spare = NULL;
	/* The running image's referral templates, as its replica holds them. */
	size_t ro = p53_fast_ref_size(img);
	void *r_img = calloc(1, ro + 1);
	if (r_img == NULL)
		return 1;
	if (ro > 0)
		p53_fast_ref_build(img, r_img, ro);
	/* pop53d's patch index of the running image (patch_index.h), which it keeps from one
	 * patch to the next: made here once, not timed (index_build_ms), and copied, not
	 * timed, for each run (each patches the same image). P53_IXFR_INDEX=0: none. */
	struct p53_patch_index *ix = NULL;
	double ix_ms = 0;
	const char *ixe = getenv("P53_IXFR_INDEX");
	if (patch >= 2 && (ixe == NULL || strcmp(ixe, "0") != 0)) {
		if (p53_image_hdr(img)->generation == 0) /* as a publish gives it one */
			((struct p53_image_hdr *)(uintptr_t)img)->generation = 1;
		ix = p53_patch_index_new();
		double c0 = cpu_ms();
		if (ix == NULL || p53_patch_index_build(ix, img) != 0) {
			fprintf(stderr, "p53-ixfr-apply: out of memory\n");
			return 1;
		}
		ix_ms = cpu_ms() - c0;
	}
	for (int r = 0; r < runs; r++) {
		struct p53_rrs zone = { 0 };
		struct p53_rrs *w[2] = { &zone, NULL };
		size_t nlen = 0;
		double c0 = cpu_ms(), t0 = now_ms();
		if (patch < 2 && p53_image_zones_rrs(img, w) != 0) {
			fprintf(stderr, "p53-ixfr-apply: out of memory\n");
			return 1;
		}
		double t1 = now_ms();
		if (patch < 2 && p53_ixfr_apply_inplace(&zone, d, err, sizeof(err)) != 0) {
			fprintf(stderr, "p53-ixfr-apply: %s\n", err);
			return 1;
		}
		double t2 = now_ms(), c2 = cpu_ms();
		struct p53_zone_src s2[2] = {
			{ .name = ORIGIN, .file = "big.test (transfer)", .rrs = zone.buf,
			  .rrs_len = zone.len, .flags = P53_ZONE_SECONDARY },
			{ .name = kid_name(), .file = "kid (transfer)", .rrs = kid.buf, .rrs_len = kid.len,
			  .flags = P53_ZONE_SECONDARY },
		};
		steer_src(&s2[0]);
		void *ni;
		spare = patch == 3 ? spare : NULL;
		struct p53_patch_index *rx = NULL;
		if (ix != NULL && (rx = p53_patch_index_clone(ix)) == NULL) {
			fprintf(stderr, "p53-ixfr-apply: out of memory\n");
			return 1;
		}
		if (rx != NULL) { /* the copy is not the patch's work */
			t0 = t1 = t2 = now_ms();
			c0 = c2 = cpu_ms();
		}
		/* The steered owners' key (steer_src), as pop53d's update passes it. */
		const struct p53_patch_sign sign = { .key = s2[0].sign_key,
						     .inception = s2[0].sign_inception,
						     .expiration = s2[0].sign_expiration };
		if (patch)
			ni = p53_image_patch_indexed(img, apex, al, d, patch >= 2 ? NULL : &zone, &sign,
						     spare, rx, &nlen, err, sizeof(err));
		else
			ni = p53_image_build(s2, served ? 2 : 1, &nlen, err, sizeof(err), NULL, NULL);
		double t3 = now_ms(), c3 = cpu_ms();
		const char *why = NULL;
		if (ni == NULL || (patch && p53_image_check(ni, nlen, &why) != 0)) {
			fprintf(stderr, "p53-ixfr-apply: %s: %s\n", mode_name[patch],
				ni == NULL ? err : why);
			return 1;
		}
		after = p53_image_hdr(ni)->n_records;
		if (p53_image_zone(ni, 0)->serial != d->steps[0].to) {
			fprintf(stderr, "p53-ixfr-apply: the new image serves serial %u, not %u\n",
				p53_image_zone(ni, 0)->serial, d->steps[0].to);
			return 1;
		}
		/* The publish's referral templates for the new image: made from scratch (as any
		 * publish did before), and from the running image's (after a patch). */
		rf[r] = rd[r] = 0;
		if (patch) {
			double r0 = now_ms();
			size_t rz = p53_fast_ref_size(ni);
			void *full = calloc(1, rz + 1);
			if (full != NULL && rz > 0)
				p53_fast_ref_build(ni, full, rz);
			double r1 = now_ms();
			size_t rz2 = ro > 0 ? p53_fast_ref_size_from(ni, img, r_img) : p53_fast_ref_size(ni);
			void *fr = calloc(1, rz2 + 1);
			if (fr != NULL && rz2 > 0)
				p53_fast_ref_build_from(ni, fr, rz2, img, ro > 0 ? r_img : NULL);
			double r2 = now_ms();
			if (full == NULL || fr == NULL || rz != rz2 || memcmp(full, fr, rz) != 0) {
				fprintf(stderr, "p53-ixfr-apply: the referral templates made from the "
					"running image's differ from those made from scratch\n");
				return 1;
			}
			n_ref = p53_fast_ref_count(full);
			free(full);
			free(fr);
			rf[r] = r1 - r0;
			rd[r] = r2 - r1;
		}
		p53_patch_index_free(rx);
		len = nlen;
		if (patch == 3)
			spare = ni; /* the next run writes into this one (pop53d's spare image) */
		else
			free(ni);
		p53_rrs_free(&zone);
		ex[r] = t1 - t0;
		ap[r] = t2 - t1;
		co[r] = t3 - t2;
		to[r] = t3 - t0;
		cp[r] = c3 - c0;
		cc[r] = c3 - c2;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	free(spare);
	printf("mode=%s records=%u records_after=%u runs=%d extract_ms=%.1f apply_ms=%.1f "
	       "compile_ms=%.1f compile_cpu_ms=%.1f total_ms=%.1f total_cpu_ms=%.1f image_bytes=%zu "
	       "peak_rss_kb=%ld rss_growth_kb=%ld", mode_name[patch], records, after,
	       runs, median(ex, runs), median(ap, runs), median(co, runs), median(cc, runs),
	       median(to, runs), median(cp, runs), len, ru.ru_maxrss, ru.ru_maxrss - base_kb);
	if (patch)
		printf(" ref_templates=%u ref_full_ms=%.2f ref_from_ms=%.2f", n_ref,
		       median(rf, runs), median(rd, runs));
	if (patch >= 2)
		printf(" index=%d index_build_cpu_ms=%.1f", ix != NULL, ix_ms);
	printf("\n");
	p53_patch_index_free(ix);
	free(r_img);
	fflush(stdout);
	return 0;
}

/*
 * P53_IXFR_TURNS=N (with --served-child): big.test. and its served child kid.big.test. patched in
 * turn for N turns (even turns the parent, odd ones the child), as pop53d patches the IXFRs
 * of two zones that change alike: each a step of 100 changes, 50 names new (tNNNNnKK.<zone>
 * A) and the 50 its zone's turn before added deleted (the first turn of each zone: 50 names
 * more instead), the SOA moved on. Each patch is pop53d's (the diff alone, with the patch
 * index kept from one turn to the next, into the spare image). Prints a line per turn: its
 * zone, patch_ms and patch_cpu_ms, whether the zone moved (its node_base changed:
 * image_patch.c zone_to_end, when its room is used up), the zone's nodes and room left, the
 * image's bytes and garbage (pad_bytes). A declined patch ends the run (exit 1) with its reason.
 */
static int turn_diff(struct p53_ixfr *d, const struct p53_rr_view *soa, uint32_t serial,
		     const char *zone, int t, int prev)
{
	char txt[256];
	uint8_t name[256];

	struct p53_ixfr_step *st = p53_ixfr_push(d);
	if (st == NULL)
		return -1;
	st->from = serial;
	st->to = serial + 1;
	if (add_soa(&st->del, soa, st->from) != 0 || add_soa(&st->add, soa, st->to) != 0)
		return -1;
	for (int k = 0; k < (prev < 0 ? 100 : 50); k++) {
		uint8_t a[4] = { 10, (uint8_t)(t >> 8), (uint8_t)t, (uint8_t)k };
		snprintf(txt, sizeof(txt), "t%04dn%02d.%s", t, k, zone);
		if (p53_rrs_add(&st->add, name, wire_name(txt, name), 1, 1, 300, a, 4) != 0)
			return -1;
		if (prev < 0)
			continue;
		uint8_t b[4] = { 10, (uint8_t)(prev >> 8), (uint8_t)prev, (uint8_t)k };
		snprintf(txt, sizeof(txt), "t%04dn%02d.%s", prev, k, zone);
		if (p53_rrs_add(&st->del, name, wire_name(txt, name), 1, 1, 300, b, 4) != 0)
			return -1;
	}
	return 0;
}

static int turns_run(void *img, size_t len, int n)
{
	const char *zone[2] = { ORIGIN, KID };
	struct p53_rrs soas[2] = { { 0 }, { 0 } }, base = { 0 };
	struct p53_rr_view soa[2];
	uint8_t apex[2][256];
	size_t al[2];
	uint32_t serial[2];
	int prev[2] = { -1, -1 };
	char why[1024];
	void *spare = NULL;

	struct p53_rrs *want[2] = { &base, &soas[1] };
	if (p53_image_zones_rrs(img, want) != 0)
		return 1;
	for (int z = 0; z < 2; z++) {
		al[z] = wire_name(zone[z], apex[z]);
		struct p53_rr_view v;
		if (find(z == 0 ? &base : &soas[1], apex[z], al[z], 6, &v) != 0)
			return 1;
		p53_rrs_free(&soas[z]);
		if (p53_rrs_add(&soas[z], v.owner, v.owner_len, 6, 1, v.ttl, v.rdata, v.rdlen) != 0 ||
		    find(&soas[z], apex[z], al[z], 6, &soa[z]) != 0)
			return 1;
		serial[z] = p53_image_zone(img, (uint32_t)z)->serial;
	}
	p53_rrs_free(&base);
	((struct p53_image_hdr *)img)->generation = 1; /* as a publish gives it one */
	struct p53_patch_index *ix = p53_patch_index_new();
	if (ix == NULL || p53_patch_index_build(ix, img) != 0)
		return 1;
	printf("turn=-1 image_bytes=%zu pad_bytes=%u nodes=%u rrsets=%u\n", len,
	       p53_image_hdr(img)->pad, p53_image_hdr(img)->n_nodes, p53_image_hdr(img)->n_rrsets);
	for (int t = 0; t < n; t++) {
		const int z = t % 2;
		struct p53_ixfr d = { 0 };
		if (turn_diff(&d, &soa[z], serial[z], zone[z], t, prev[z]) != 0)
			return 1;
		const struct p53_image_zone zb = *p53_image_zone(img, (uint32_t)z);
		size_t nlen = 0;
		double c0 = cpu_ms(), t0 = now_ms();
		void *ni = p53_image_patch_indexed(img, apex[z], al[z], &d, NULL, NULL, spare, ix,
						   &nlen, why, sizeof(why));
		double t1 = now_ms(), c1 = cpu_ms();
		spare = NULL;
		p53_ixfr_free(&d);
		const char *bad = NULL;
		if (ni == NULL || p53_image_check(ni, nlen, &bad) != 0 ||
		    p53_image_zone(ni, (uint32_t)z)->serial != serial[z] + 1) {
			printf("turn=%d zone=%s declined=\"%s\"\n", t, zone[z], ni == NULL ? why :
			       bad != NULL ? bad : "wrong serial");
			return 1;
		}
		const struct p53_image_hdr *h = p53_image_hdr(ni);
		const struct p53_image_zone *zn = p53_image_zone(ni, (uint32_t)z);
		printf("turn=%d zone=%s patch_ms=%.1f patch_cpu_ms=%.1f moved=%d zone_nodes=%u "
		       "node_room=%u rrset_room=%u image_bytes=%zu pad_bytes=%u\n", t, zone[z], t1 - t0,
		       c1 - c0, zn->node_base != zb.node_base, zn->n_nodes, zn->node_room,
		       zn->rrset_room, nlen, h->pad);
		fflush(stdout);
		serial[z]++;
		prev[z] = t;
		spare = img; /* the running image, retired: the next patch writes into it */
		img = ni;
		len = nlen;
	}
	free(spare);
	free(img);
	p53_patch_index_free(ix);
	p53_rrs_free(&soas[0]);
	p53_rrs_free(&soas[1]);
	return 0;
}

int main(int argc, char **argv)
{
	char err[1024];
	size_t len = 0;
	if (argc > 1 && strcmp(argv[1], "--cdn") == 0) {
		cdn = 1;
		argc--;
		argv++;
	} else if (argc > 1 && strcmp(argv[1], "--names") == 0) {
		names = 1;
		argc--;
		argv++;
	} else if (argc > 1 && strcmp(argv[1], "--served-child") == 0) {
		served = 1;
		argc--;
		argv++;
	} else if (argc > 1 && strcmp(argv[1], "--served-glue") == 0) {
		served = served_glue = 1;
		argc--;
		argv++;
	} else if (argc > 1 && strcmp(argv[1], "--served-above") == 0) {
		served = served_above = 1;
		argc--;
		argv++;
	} else if (argc > 1 && strcmp(argv[1], "--served-flip") == 0) {
		served = served_flip = 1;
		argc--;
		argv++;
	} else if (argc > 1 && strcmp(argv[1], "--dname") == 0) {
		dnames = 1;
		argc--;
		argv++;
	} else if (argc > 1 && strcmp(argv[1], "--glue-cname") == 0) {
		glue_cnames = 1;
		argc--;
		argv++;
	}
	int runs = argc > 2 ? atoi(argv[2]) : 5;

	if (argc < 2 || argc > 3 || runs < 1 || runs > 100) {
		fprintf(stderr, "usage: p53-ixfr-apply [--cdn | --names | --dname | --glue-cname | "
			"--served-child | --served-glue | --served-above | --served-flip] ZONEFILE "
			"[RUNS]\n");
		return 2;
	}
	struct p53_zone_src src = { .name = ORIGIN, .file = argv[1], .flags = P53_ZONE_SECONDARY };
	if (steer_setup() != 0)
		return 1;
	steer_src(&src);
	void *img = p53_image_build(&src, 1, &len, err, sizeof(err), NULL, NULL);
	if (img == NULL) {
		fprintf(stderr, "p53-ixfr-apply: %s\n", err);
		return 1;
	}
	struct p53_rrs base = { 0 };
	struct p53_rrs *want[1] = { &base };
	struct p53_ixfr d = { 0 };
	if (served) {
		/* The delegation and the served child: compiled again, both zones. */
		if (p53_image_zones_rrs(img, want) != 0 || served_setup(&base) != 0) {
			fprintf(stderr, "p53-ixfr-apply: out of memory\n");
			return 1;
		}
		struct p53_zone_src s0[2] = {
			{ .name = ORIGIN, .file = argv[1], .rrs = base.buf, .rrs_len = base.len,
			  .flags = P53_ZONE_SECONDARY },
			{ .name = kid_name(), .file = "kid", .rrs = kid.buf, .rrs_len = kid.len,
			  .flags = P53_ZONE_SECONDARY },
		};
		free(img);
		img = p53_image_build(s0, 2, &len, err, sizeof(err), NULL, NULL);
		p53_rrs_free(&base);
		if (img == NULL) {
			fprintf(stderr, "p53-ixfr-apply: %s\n", err);
			return 1;
		}
	}
	const char *turns = getenv("P53_IXFR_TURNS");
	if (turns != NULL) {
		int n = atoi(turns);
		if (!served || served_glue || served_above || served_flip || n < 1) {
			fprintf(stderr, "p53-ixfr-apply: P53_IXFR_TURNS=N (N > 0) with --served-child\n");
			return 2;
		}
		return turns_run(img, len, n);
	}
	struct p53_rrs *want2[2] = { &base, NULL };
	if (p53_image_zones_rrs(img, want2) != 0 ||
	    make_diff(&base, &d, p53_image_zone(img, 0)->dnssec != 0) != 0) {
		fprintf(stderr, "p53-ixfr-apply: cannot make the differences\n");
		return 1;
	}
	/* Check first: the records read back out compile to the very image the file gave (the
	 * wire read without ldns, the records nearly in order; docs/ARCHITECTURE.md). */
	struct p53_zone_src s1 = { .name = ORIGIN, .file = "big.test (transfer)", .rrs = base.buf,
				   .rrs_len = base.len, .flags = P53_ZONE_SECONDARY };
	steer_src(&s1);
	size_t l1 = 0;
	void *again = served ? NULL : p53_image_build(&s1, 1, &l1, err, sizeof(err), NULL, NULL);
	if (!served && (again == NULL || l1 != len || memcmp(again, img, len) != 0)) {
		fprintf(stderr, "p53-ixfr-apply: the zone's records do not compile to the same image "
			"(%s)\n", again == NULL ? err : "bytes differ");
		return 1;
	}
	free(again);
	p53_rrs_free(&base);

	malloc_trim(0);
	fflush(stdout);
	const char *only = getenv("P53_IXFR_MODES");
	char list[256], key[32];
	snprintf(list, sizeof(list), ",%s,", only != NULL ? only : "");
	for (int mode = 0; mode < 4; mode++) {
		snprintf(key, sizeof(key), ",%s,", mode_name[mode]);
		if (only != NULL && strstr(list, key) == NULL)
			continue;
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			int rc = run(img, len, &d, runs, mode);
			p53_ixfr_free(&d);
			free(img);
			return rc;
		}
		int st = 0;
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
	}
	p53_ixfr_free(&d);
	free(img);
	return 0;
}
