/*
 * Fuzz target for the burst path over sequences of frames: each input is a configuration and
 * a sequence of bursts of Ethernet frames (IPv4 and IPv6 UDP to port 53, with and without
 * EDNS, DO, ECS and cookies; names that hit, miss below an encloser, repeat, differ in one
 * byte from a frame sent before; bad checksums, fragments, truncated frames, other ports,
 * chained mbufs...), built from the input bytes, answered by p53_worker_burst() over a real
 * compiled image (the differential test's zones and the signed ones, as fuzz_answer.c) with a
 * worker that keeps its state across the bursts of an input as pop53d's does: the answer
 * cache (qcache.h), the kept name error and closest encloser (fastpath.h p53_fast_nx), so the
 * one-pass burst path (p53_fast_burst(): the cache's steps, nx_frame(), the run of misses) or,
 * with the large-image flag, the passes (p53_fast_read()/p53_fast_write()) take each frame,
 * and what they decline goes to the general responder as in pop53d.
 *
 * The oracle is the general path, one frame at a time, with no state: p53_pkt_parse(),
 * p53_pkt_for_us(), the UDP checksum (the port's verdict, else software), p53_msg_parse(),
 * p53_answer_parsed(), p53_pkt_reply(). Checked for every frame: the same outcome (answered
 * or dropped) and, answered, the same frame byte for byte, in the same mbuf, in order; the
 * worker's counters (answered, no_answer, multiseg, drops by reason, the responder's) those
 * of the general path; every mbuf handed back or freed exactly once (the pool's count);
 * and the response invariants of fuzz_check.h.
 *
 * The burst path's steps are counted (fastpath.c compiled here with P53_FAST_STEPS:
 * p53_fast_steps[]): main() (fuzz_main.h) fails unless the corpus and its mutations took each
 * at least once, so the oracle cannot stop covering one silently.
 *
 * Input: byte 0 the configuration (bit 0: an answer cache; bit 2: of 64 entries, else 1024;
 * bit 1: the large-image flag, the replica's image_len above P53_PREFETCH_MIN_IMAGE, without
 * RRset sums as publish.c; bit 3: the port computes the checksums, so the fast parse and answer
 * with pkt.c's reply take the frames instead; bit 5: the port's checksum verdict GOOD, else
 * none), then records (next_frame()): frames, the ends of bursts, republished steering
 * tables and reloads.
 *
 * libFuzzer build: scripts/fuzz.sh fuzz_burst. Needs the EAL (a mempool): started once with
 * --no-huge --no-pci, a file prefix of its own.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "control/steer/steer_build.h"
#include "control/steer/steer_conf.h"
#include "control/zone/image_build.h"
#include "dataplane/fastpath.h"
#include "dataplane/image.h"
#include "dataplane/qcache.h"
#include "dataplane/steer.h"
#include "dataplane/worker.h"
#include "fuzz_check.h"
#include "tests/common/wire.h"

#define FUZZ_NAME "fuzz_burst"
#define FUZZ_MAX_LEN 4096
#define FRAME_MAX 1536          /* bytes of a frame built here at most */
#define ROOM 2048               /* the mbuf's bytes after its headroom (the default size) */
#define BURST_MAX 64            /* frames per burst (p53_worker_burst() splits at P53_BURST) */
#define FRAMES_MAX 512          /* frames per input */
#define HIST 64                 /* frames remembered for repeats and variants */

static const uint8_t SRV_MAC[6] = {0x02, 0, 0, 0, 0, 0x53};
static const uint8_t CLI_MAC[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t SRV4[2][4] = {{192, 0, 2, 53}, {198, 51, 100, 53}};
static const uint8_t SRV6[2][16] = {{0x20, 0x01, 0x0d, 0xb8, 0, 0x53, [15] = 0x53},
				    {0x20, 0x01, 0x0d, 0xb8, 0, 0x54, [15] = 0x53}};

static struct rte_mempool *mp;
static struct p53_worker w;
/* [image][large]: image 1 (generation 2) is image 0 (generation 1) without second.test.,
 * published between bursts by the input (a reload) */
static struct p53_replica reps[2][2];
static int cur_img, cur_large;  /* the input's: w.replica is reps[cur_img][cur_large] */
static struct p53_qcache *qc_big, *qc_small;

/* Steering (steer.h), as test_fastpath.c's: steered.example.com. A, policy [map, weighted]
 * over three targets in two PoPs, the map's subnets nested; republished with a target down
 * (a health change) by the input, and with every target up at each input's start. */
static void *steer_slot;        /* the published table; conf.steer points here */
static int steer_down = -2;     /* the target the published table has down; -1: none */
static uint64_t steer_gen;
static struct p53_steer_record steer_rec;
static struct p53_steer_target steer_pool[3];
static struct p53_steer_conf steer_conf;
static struct p53_steer_sources steer_src;      /* the map, loaded once */

static void steer_publish(int down)
{
	char err[600];
	size_t len;
	bool up[P53_STEER_MAX_POOL];

	if (down == steer_down)
		return;
	memset(up, 1, sizeof(up));
	if (down >= 0)
		up[down] = false;
	void *t = p53_steer_build(&steer_conf, &steer_src, up, &len, err, sizeof(err));
	if (t == NULL) {
		fprintf(stderr, "fuzz_burst: steering table: %s\n", err);
		abort();
	}
	((struct p53_steer_hdr *)t)->generation = ++steer_gen;  /* as steer_pub.c publishes */
	void *old = steer_slot;
	steer_slot = t;
	free(old);
	steer_down = down;
}

/* The steering configuration and the steered record for the zone example.com. (*e). */
static void steer_setup(struct p53_zone_extra *e)
{
	static uint8_t addrs[3 * 4];
	static const char *const pops[] = {"AMS", "AMS", "FRA"};
	char dir[] = "/tmp/p53fuzzburst.XXXXXX", path[300], err[600];
	struct p53_steer_record *r = &steer_rec;

	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(path, sizeof(path), "%s/map.json", dir);
	FILE *f = fopen(path, "w");
	if (f == NULL)
		abort();
	fputs("[{\"networks\": [\"198.51.100.0/24\", \"10.1.0.0/16\", \"2001:db8:1::/48\"], \"labels\": [\"AMS\"]},"
	      " {\"networks\": [\"203.0.113.0/25\", \"10.0.0.0/8\", \"2001:db8::/32\"], \"labels\": [\"FRA\"]},"
	      " {\"networks\": [\"198.51.100.128/26\", \"2001:db8:1:2::/64\"], \"labels\": [\"FRA\", \"AMS\"]}]\n", f);
	fclose(f);
	steer_conf.map = strdup(path);
	steer_conf.records = r;
	steer_conf.n_records = 1;
	r->pool = steer_pool;
	r->owner = (char *)(uintptr_t)"steered.example.com.";
	r->lname = (uint8_t *)(uintptr_t)"\x07steered\x07" "example\x03" "com";
	r->lname_len = 21;
	r->type = 1;
	r->policy[0] = P53_POLICY_MAP;
	r->policy[1] = P53_POLICY_WEIGHTED;
	r->n_policy = 2;
	r->ttl = 300;
	for (int i = 0; i < 3; i++) {
		struct p53_steer_target *t = &r->pool[r->n_pool++];
		t->name = (char *)(uintptr_t)pops[i];
		t->family = 4;
		t->addr[0] = 10;
		t->addr[3] = (uint8_t)(i + 1);
		t->pop = (char *)(uintptr_t)pops[i];
		t->weight = 1;
		t->priority = (unsigned int)i + 1;
		memcpy(addrs + 4 * i, t->addr, 4);
	}
	p53_steer_conf_layout(&steer_conf, NULL);       /* as p53_config_load */
	if (p53_steer_sources_load(&steer_conf, &steer_src, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_burst: steering sources: %s\n", err);
		abort();
	}
	steer_publish(-1);
	unlink(path);
	rmdir(dir);
	/* the image's every-target RRset, flagged steered (compile.c) */
	*e = (struct p53_zone_extra){.lname = r->lname, .lname_len = r->lname_len, .type = 1,
				     .ttl = r->ttl, .addrs = addrs, .rdlen = 4, .n = 3, .line = 1,
				     .owner = r->owner, .rec = 0};
}

/* ---- set-up ------------------------------------------------------------------------------ */

static void conf_of(struct p53_replica *r, void *img, size_t len, int large)
{
	struct p53_fast_neg *neg = calloc(p53_fast_neg_count(img), sizeof(*neg));

	r->image = img;
	r->image_len = large ? P53_PREFETCH_MIN_IMAGE + 1 : len;
	r->conf.identity = (const uint8_t *)"fuzz";
	r->conf.identity_len = 4;
	r->conf.version = (const uint8_t *)"v";
	r->conf.version_len = 1;
	r->conf.edns_max_payload = 1232;
	r->conf.steer = &steer_slot;
	for (int i = 0; i < 2; i++) {
		memcpy(&r->addrs.v4[r->addrs.n4++], SRV4[i], 4);
		memcpy(r->addrs.v6[r->addrs.n6++], SRV6[i], 16);
	}
	/* the fast path's templates and sums, as control/publish.c builds them (no sums for a
	   large image) */
	if (neg == NULL)
		abort();
	p53_fast_neg_build(img, neg);
	r->conf.neg = neg;
	r->conf.n_neg = (uint32_t)p53_fast_neg_count(img);
	size_t rz = p53_fast_ref_size(img);
	if (rz > 0) {
		void *ref = aligned_alloc(64, (rz + 63) & ~(size_t)63);
		p53_fast_ref_build(img, ref, rz);
		r->conf.ref = ref;
	}
	size_t ns = large ? 0 : p53_fast_sum_count(img);
	if (ns > 0) {
		uint64_t *sums = malloc(ns * sizeof(*sums));
		p53_fast_sum_build(img, r->conf.edns_max_payload, sums);
		r->conf.sums = sums;
		r->conf.n_sums = (uint32_t)ns;
	}
}

static struct p53_qcache *cache_of(uint32_t entries)
{
	struct p53_qcache *c = aligned_alloc(64, (p53_qcache_size(entries) + 63) & ~(size_t)63);

	if (c == NULL || p53_qcache_init(c, entries) != 0)
		abort();
	return c;
}

static void setup(void)
{
	static const char *const zones[6][2] = {
		{"diff.test.", "tests/differential/zones/diff.test.zone"},
		{"second.test.", "tests/differential/zones/second.test.zone"},
		{"nsec.test.", "tests/unit/dataplane/zones/nsec.test.zone"},
		{"nsec3.test.", "tests/unit/dataplane/zones/nsec3.test.zone"},
		{"optout.test.", "tests/unit/dataplane/zones/optout.test.zone"},
		{"example.com.", "zones/example.com.zone"},     /* with the steered record */
	};
	char files[6][512], err[512], cpu[16], prefix[64];
	struct p53_zone_src z[6];
	struct p53_zone_extra steered;
	cpu_set_t set;
	int first = 0;
	size_t len;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		while (first < CPU_SETSIZE - 1 && !CPU_ISSET(first, &set))
			first++;
	snprintf(cpu, sizeof(cpu), "%d", first);
	snprintf(prefix, sizeof(prefix), "--file-prefix=p53-fuzz-burst-%d", (int)getpid());
	char *argv[] = {"fuzz_burst", "-l", cpu, "--no-huge", "-m", "64", "--no-shconf", prefix,
			"--no-telemetry", "--no-pci", "--log-level=*:warning", NULL};
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "fuzz_burst: the EAL did not start\n");
		abort();
	}
	/* 2 mbufs per frame at most (a chain), no per-lcore cache: the in-use count is exact */
	mp = rte_pktmbuf_pool_create("fuzz_burst", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (mp == NULL || RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM != ROOM)
		abort();
	steer_setup(&steered);
	for (int i = 0; i < 6; i++) {
		snprintf(files[i], sizeof(files[i]), "%s/%s", P53_SRCDIR, zones[i][1]);
		z[i] = (struct p53_zone_src){.name = zones[i][0], .file = files[i],
					     .steer_layout = steer_conf.layout};
	}
	z[5].extra = &steered;
	z[5].n_extra = 1;
	for (int k = 0; k < 2; k++) {
		if (k == 1)
			z[1] = z[5];    /* second.test. gone */
		void *img = p53_image_build(z, k == 0 ? 6 : 5, &len, err, sizeof(err), NULL, NULL);
		if (img == NULL) {
			fprintf(stderr, "fuzz_burst: cannot compile the zones: %s\n", err);
			abort();
		}
		/* a published generation: the answer cache and the kept name error key on it */
		((struct p53_image_hdr *)img)->generation = 1 + (uint64_t)k;
		conf_of(&reps[k][0], img, len, 0);
		conf_of(&reps[k][1], img, len, 1);
	}
	qc_big = cache_of(1024);
	qc_small = cache_of(64);
	memcpy(w.mac, SRV_MAC, 6);
}

/* ---- frames ------------------------------------------------------------------------------ */

struct frm {
	uint8_t b[FRAME_MAX];
	uint16_t len;
	uint64_t ol;            /* the port's L4 checksum verdict (ol_flags) */
	uint8_t segs;           /* 1, or 2: a chain */
};

/* The IPv4 header checksum and the UDP checksum of frame f made right again (after a change),
 * as far as the frame has them: an independent RFC 1071 sum, not pkt.c's. */
static void fix_sums(struct frm *f, int ip_sum, int udp_sum)
{
	size_t l3 = f->len >= 18 && f->b[12] == 0x81 && f->b[13] == 0 ? 18 : 14;
	if (f->len < l3 + 40)
		return;
	uint8_t *ip = f->b + l3;
	int v6 = (ip[0] >> 4) == 6;
	size_t hl = v6 ? 40 : (size_t)(ip[0] & 15) * 4;
	if (hl < 20 || l3 + hl + 8 > f->len)
		return;
	uint8_t *u = ip + hl;
	if (!v6 && ip_sum) {
		put16(ip + 10, 0);
		put16(ip + 10, (uint16_t)~fold(sum_be(ip, hl, 0)));
	}
	size_t ulen = (size_t)(u[4] << 8 | u[5]);
	if (!udp_sum || ulen < 8 || u + ulen > f->b + f->len || (v6 ? ip[6] : ip[9]) != 17)
		return;
	uint32_t ph = v6 ? sum_be(ip + 8, 32, 0) : sum_be(ip + 12, 8, 0);
	put16(u + 6, 0);
	uint16_t c = (uint16_t)~fold(ph + (uint32_t)ulen + 17 + sum_be(u, ulen, 0));
	put16(u + 6, c == 0 ? 0xffff : c);
}

/* A query for `name` (wire form): Ethernet, IPv4 or IPv6, UDP to 53, the message. */
struct spec {
	int v6, dst, edns, dobit, ecs, cookie;
	uint16_t id, flags, qtype, qclass, payload, sport;
	uint8_t ecs_src, ecs_fam, ecs_addr, src_last;
	const uint8_t *name;
	size_t nlen;
};

static void build(struct frm *f, const struct spec *s)
{
	size_t l3 = 14, u = l3 + (s->v6 ? 40 : 20), d = u + 8, n = 12;
	uint8_t *dns = f->b + d, *ip = f->b + l3;

	memset(f->b, 0, d + 12);
	memcpy(f->b, SRV_MAC, 6);
	memcpy(f->b + 6, CLI_MAC, 6);
	put16(f->b + 12, s->v6 ? 0x86dd : 0x0800);
	put16(dns, s->id);
	put16(dns + 2, s->flags);
	put16(dns + 4, 1);
	memcpy(dns + n, s->name, s->nlen);
	n += s->nlen;
	put16(dns + n, s->qtype);
	put16(dns + n + 2, s->qclass);
	n += 4;
	if (s->edns) {
		size_t o = n, rd = 0;
		uint8_t *opt = dns + n;
		memset(opt, 0, 11);
		put16(opt + 1, 41);
		put16(opt + 3, s->payload);
		opt[7] = s->dobit ? 0x80 : 0;
		n += 11;
		if (s->ecs) {
			/* ECS (RFC 7871): family, SOURCE, SCOPE 0, the address's bytes */
			size_t al = (s->ecs_src + 7u) / 8u;
			put16(dns + n, 8);
			put16(dns + n + 2, (uint16_t)(4 + al));
			put16(dns + n + 4, s->ecs_fam);
			dns[n + 6] = s->ecs_src;
			dns[n + 7] = 0;
			/* in the steering map's subnets, nested, or in none */
			static const uint8_t a4[4][4] = {{192, 0, 2, 1}, {198, 51, 100, 150},
							 {10, 1, 2, 3}, {203, 0, 113, 5}};
			static const uint8_t a6[4][16] = {{0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, [15] = 1},
							  {0x20, 0x01, 0x0d, 0xb8, 0, 5, [15] = 1},
							  {0x20, 0x01, 0x0d, 0xb9, [15] = 1},
							  {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 3}};
			const uint8_t *a = s->ecs_fam == 2 ? a6[s->ecs_addr & 3] : a4[s->ecs_addr & 3];
			for (size_t i = 0; i < al; i++)
				dns[n + 8 + i] = a[i];
			if (al > 0 && (s->ecs_src & 7) != 0)
				dns[n + 8 + al - 1] &= (uint8_t)(0xff << (8 - (s->ecs_src & 7)));
			n += 8 + al;
			rd += 8 + al;
		}
		if (s->cookie) {
			/* a client cookie alone (RFC 7873) */
			put16(dns + n, 10);
			put16(dns + n + 2, 8);
			for (int i = 0; i < 8; i++)
				dns[n + 4 + i] = (uint8_t)(0xc0 + i);
			n += 12;
			rd += 12;
		}
		put16(dns + o + 9, (uint16_t)rd);
		put16(dns + 10, 1);
	}
	uint16_t ulen = (uint16_t)(8 + n);
	put16(f->b + u, s->sport);
	put16(f->b + u + 2, 53);
	put16(f->b + u + 4, ulen);
	if (s->v6) {
		ip[0] = 0x60;
		put16(ip + 4, ulen);
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, SRV6[0], 16);
		ip[13] = 0x99;
		ip[23] = s->src_last;
		memcpy(ip + 24, SRV6[s->dst], 16);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(20 + ulen));
		ip[8] = 64;
		ip[9] = 17;
		ip[12] = 203;
		ip[13] = 0;
		ip[14] = 113;
		ip[15] = s->src_last;
		memcpy(ip + 16, SRV4[s->dst], 4);
	}
	f->len = (uint16_t)(d + n);
	fix_sums(f, 1, 1);
}

/* The input read a byte at a time; past its end, 0. */
struct cur {
	const uint8_t *p;
	size_t n, i;
};

static uint8_t next(struct cur *c)
{
	return c->i < c->n ? c->p[c->i++] : 0;
}

/* Names of each kind the zones hold (hits, wildcards, CNAMEs, DNAME, referrals and glue,
 * empty non-terminals, name errors, signed zones, no zone). */
static const char *const names[] = {
	"www.diff.test", "diff.test", "ns1.diff.test", "mail.diff.test", "x.wild.diff.test",
	"explicit.wild.diff.test", "host.blocked.wild.diff.test", "chain1.diff.test",
	"loop-a.diff.test", "outside.diff.test", "to-wild.diff.test", "a.wcname.diff.test",
	"sub.diff.test", "host.sub.diff.test", "ns1.sub.diff.test", "x.ent.diff.test",
	"ent.diff.test", "a.b.c.deep.diff.test", "c.deep.diff.test", "host.dname.diff.test",
	"target.diff.test", "big.diff.test", "huge.diff.test", "t1000.diff.test",
	"_sip._udp.diff.test", "svc.diff.test", "https.diff.test", "nope.diff.test",
	"MiXeD.diff.test", "second.test", "ns.second.test", "x.many.second.test",
	"many.second.test", "nsec.test", "nope.nsec.test", "nsec3.test", "nope.nsec3.test",
	"big.nsec3.test", "alias.nsec3.test", "optout.test", "x.optout.test", "other.example",
	"test", "", "steered.example.com", "www.example.com", "example.com", "nope.example.com",
};
#define N_NAMES (sizeof(names) / sizeof(names[0]))
/* Parents of the random names (a random-subdomain flood below an encloser). */
static const char *const parents[] = {
	"diff.test", "nsec3.test", "second.test", "deep.diff.test", "wild.diff.test",
	"sub.diff.test", "nsec.test", "optout.test", "other.example", "host.target.diff.test",
};
#define N_PARENTS (sizeof(parents) / sizeof(parents[0]))
static const uint16_t qtypes[] = {1, 28, 1, 28, 16, 15, 2, 6, 5, 33, 43, 46, 47, 48, 50, 65,
				  64, 257, 255, 252, 251, 0, 41, 1000, 248, 249, 250, 62, 99, 12};
#define N_QTYPES (sizeof(qtypes) / sizeof(qtypes[0]))

static size_t wire_name(uint8_t *o, const char *dotted)
{
	size_t n = 0;

	for (const char *p = dotted; *p != '\0';) {
		const char *dot = strchr(p, '.');
		size_t l = dot != NULL ? (size_t)(dot - p) : strlen(p);
		o[n++] = (uint8_t)l;
		memcpy(o + n, p, l);
		n += l;
		p += l + (dot != NULL);
	}
	o[n++] = 0;
	return n;
}

/* A random label of `l` bytes from the input (letters and digits, mostly lower case). */
static size_t label(uint8_t *o, struct cur *c, size_t l)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789-_ABCDEFGHIJKLMNOPQRSTUVWXYZ";

	o[0] = (uint8_t)l;
	for (size_t i = 0; i < l; i++)
		o[1 + i] = (uint8_t)chars[next(c) % (sizeof(chars) - 1)];
	return 1 + l;
}

/* Damage to a frame sent before (op 6), each a check of pkt.c or fastpath.c's parse. */
static void damage(struct frm *f, uint8_t how, uint8_t arg)
{
	size_t l3 = 14, ul = f->b[14] >> 4 == 6 ? 54 : 34;

	switch (how % 20) {
	case 0: /* truncated */
		f->len = (uint16_t)(f->len > arg ? f->len - arg % 64 - 1 : f->len / 2);
		break;
	case 1: /* trailing bytes past the IP length (Ethernet padding) */
		if (f->len + 1 + arg % 32 <= FRAME_MAX) {
			memset(f->b + f->len, arg, 1 + arg % 32u);
			f->len = (uint16_t)(f->len + 1 + arg % 32);
		}
		break;
	case 2: /* a bad UDP checksum */
		f->b[ul + 6] ^= (uint8_t)(1 + arg);
		break;
	case 3: /* no UDP checksum (0) */
		put16(f->b + ul + 6, 0);
		break;
	case 4: /* a fragment: MF or an offset */
		if (ul == 34) {
			f->b[l3 + 6] |= arg & 1 ? 0x20 : 0x01;
			fix_sums(f, 1, 0);
		}
		break;
	case 5: /* another destination port */
		put16(f->b + ul + 2, (uint16_t)(arg | 0x100));
		fix_sums(f, 1, 1);
		break;
	case 6: /* source port 0 */
		put16(f->b + ul, 0);
		fix_sums(f, 1, 1);
		break;
	case 7: /* the port says BAD */
		f->ol = RTE_MBUF_F_RX_L4_CKSUM_BAD;
		break;
	case 8: /* the port says GOOD, the data changed after (trusted) */
		f->ol = RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		if (f->len > 8)
			f->b[f->len - 1 - arg % 8] ^= 0x20;
		break;
	case 9: /* the port says NONE */
		f->ol = RTE_MBUF_F_RX_L4_CKSUM_NONE;
		break;
	case 10: /* two segments */
		f->segs = 2;
		break;
	case 11: /* to a group MAC */
		f->b[0] |= 1;
		break;
	case 12: /* to another service address, or none of ours */
		f->b[ul == 34 ? l3 + 19 : l3 + 39] ^= (uint8_t)(arg & 1 ? 0 : 0x77);
		f->b[ul == 34 ? l3 + 16 : l3 + 29] ^= (uint8_t)(arg & 1 ? 0x3d : 0);
		fix_sums(f, 1, 1);
		break;
	case 13: /* not UDP */
		f->b[ul == 34 ? l3 + 9 : l3 + 6] = arg & 1 ? 6 : 0;
		fix_sums(f, 1, 0);
		break;
	case 14: /* an 802.1Q tag */
		if (f->len + 4 <= FRAME_MAX) {
			memmove(f->b + 16, f->b + 12, f->len - 12u);
			put16(f->b + 12, 0x8100);
			put16(f->b + 14, arg);
			f->len = (uint16_t)(f->len + 4);
		}
		break;
	case 15: /* IPv4 options (IHL 6) */
		if (ul == 34 && f->len + 4 <= FRAME_MAX) {
			memmove(f->b + 38, f->b + 34, f->len - 34u);
			memset(f->b + 34, 1, 4);
			f->b[l3] = 0x46;
			put16(f->b + l3 + 2, (uint16_t)(f->len + 4 - 14));
			f->len = (uint16_t)(f->len + 4);
			fix_sums(f, 1, 1);
		}
		break;
	case 16: /* a source address that is no client's (broadcast, loopback, multicast) */
		if (ul == 34)
			memset(f->b + l3 + 12, arg & 1 ? 255 : 127, arg & 2 ? 4 : 1);
		else
			f->b[l3 + 8] = 0xff;
		fix_sums(f, 1, 1);
		break;
	case 17: /* QR set, or another opcode (NOTIFY) */
		f->b[ul + 10] |= arg & 1 ? 0x80 : 0x20;
		fix_sums(f, 1, 1);
		break;
	case 18: /* a second question, answer or additional count */
		f->b[ul + 8 + 5 + 2 * (arg % 4)] += 1;
		fix_sums(f, 1, 1);
		break;
	default: /* an IP length that disagrees */
		f->b[ul == 34 ? l3 + 3 : l3 + 5] += (uint8_t)(1 + arg % 4);
		fix_sums(f, 1, 0);
		break;
	}
}

/* ---- the oracle -------------------------------------------------------------------------- */

/* What the general path gives a frame: the reply (len 0: none) and its counters. */
struct want {
	uint8_t b[ROOM];
	uint16_t len;
};

struct ref_stats {
	uint64_t answered, no_answer, multiseg, drop[P53_PKT_DROP__MAX];
	struct p53_answer_stats ans;
};

static void general(const struct p53_replica *r, const struct frm *f, struct want *o,
		    struct ref_stats *rs)
{
	struct p53_pkt pkt;
	struct p53_query q;
	uint64_t l4 = f->ol & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	o->len = 0;
	if (f->segs != 1) {
		rs->multiseg++;
		return;
	}
	memcpy(o->b, f->b, f->len);
	enum p53_pkt_drop d = p53_pkt_parse(o->b, f->len, &pkt);
	if (d == P53_PKT_OK)
		d = p53_pkt_for_us(o->b, &pkt, SRV_MAC, &r->addrs);
	if (d == P53_PKT_OK && (l4 == RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN ? !p53_pkt_udp_csum_ok(o->b, &pkt)
							     : l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD))
		d = P53_PKT_DROP_UDP_CSUM;
	if (d != P53_PKT_OK) {
		rs->drop[d]++;
		return;
	}
	enum p53_msg_status ms = p53_msg_parse(o->b + pkt.dns_off, pkt.dns_len, &q);
	q.src = pkt.src_addr;
	q.src_v6 = pkt.ipv6;
	uint16_t rlen = p53_answer_parsed(r->image, &r->conf, o->b + pkt.dns_off,
					  (uint16_t)(ROOM - pkt.dns_off), &rs->ans, &q, ms);
	if (rlen == 0) {
		rs->no_answer++;
		return;
	}
	check(f->b + pkt.dns_off, o->b + pkt.dns_off, rlen, (uint16_t)(ROOM - pkt.dns_off));
	o->len = (uint16_t)p53_pkt_reply(o->b, &pkt, rlen, w.tx_offload);
	rs->answered++;
}

static struct frm burst_f[BURST_MAX];
static struct want burst_w[BURST_MAX];
static unsigned int n_burst;
static struct ref_stats ref;
static unsigned long long n_frames, n_answered, n_bursts, n_dropped, n_unanswered;

static void fail(const char *what, unsigned int i)
{
	fprintf(stderr, "fuzz_burst: burst %llu, frame %u of %u: %s\n", n_bursts, i, n_burst, what);
	abort();
}

/* The burst through p53_worker_burst(), each frame through general(): the same. */
static void flush(void)
{
	const struct p53_replica *r = w.replica;
	struct rte_mbuf *pkts[BURST_MAX], *out[BURST_MAX];
	unsigned int held = 0;

	if (n_burst == 0)
		return;
	for (unsigned int i = 0; i < n_burst; i++) {
		struct frm *f = &burst_f[i];
		general(r, f, &burst_w[i], &ref);
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		if (m == NULL)
			abort();
		held++;
		uint16_t first = f->segs == 2 ? (uint16_t)(f->len / 2) : f->len;
		memcpy(rte_pktmbuf_mtod(m, uint8_t *), f->b, first);
		m->data_len = first;
		m->pkt_len = first;
		if (f->segs == 2) {
			struct rte_mbuf *t = rte_pktmbuf_alloc(mp);
			if (t == NULL)
				abort();
			held++;
			memcpy(rte_pktmbuf_mtod(t, uint8_t *), f->b + first, f->len - first);
			t->data_len = (uint16_t)(f->len - first);
			t->pkt_len = t->data_len;
			if (rte_pktmbuf_chain(m, t) != 0)
				abort();
		}
		m->ol_flags = f->ol;
		pkts[i] = m;
	}
	if (rte_mempool_in_use_count(mp) != held)
		fail("mbufs in use before the burst", 0);
	uint16_t n = p53_worker_burst(&w, pkts, (uint16_t)n_burst, out);
	/* the answered frames, in order, in place, each the general path's reply */
	unsigned int j = 0;
	for (unsigned int i = 0; i < n_burst; i++) {
		const struct want *x = &burst_w[i];
		int answered = j < n && out[j] == pkts[i];
		if (answered != (x->len != 0))
			fail(answered ? "answered by the worker, not by the general path"
				      : "answered by the general path, not by the worker", i);
		if (!answered)
			continue;
		const uint8_t *b = rte_pktmbuf_mtod(out[j], const uint8_t *);
		if (out[j]->nb_segs != 1 || out[j]->data_len != x->len || out[j]->pkt_len != x->len)
			fail("a reply of another length than the general path's", i);
		if (memcmp(b, x->b, x->len) != 0)
			fail("a reply of other bytes than the general path's", i);
		j++;
	}
	if (j != n)
		fail("the worker handed back frames not in order, or not its own", n_burst);
	/* every frame not answered freed (a chain's both mbufs), none twice */
	if (rte_mempool_in_use_count(mp) != n)
		fail("an mbuf leaked or freed twice", n_burst);
	for (unsigned int i = 0; i < n; i++)
		rte_pktmbuf_free(out[i]);
	if (rte_mempool_in_use_count(mp) != 0)
		fail("mbufs in use after the burst", n_burst);
	/* the worker's counters, the general path's */
	if (w.stats.answered != ref.answered || w.stats.no_answer != ref.no_answer ||
	    w.stats.multiseg != ref.multiseg || memcmp(w.stats.drop, ref.drop, sizeof(ref.drop)) != 0)
		fail("the worker's frame counters differ from the general path's", n_burst);
	if (memcmp(&w.stats.ans, &ref.ans, sizeof(ref.ans)) != 0)
		fail("the responder's counters differ from the general path's", n_burst);
	n_frames += n_burst;
	n_answered += n;
	n_bursts++;
	n_burst = 0;
}

/* ---- the input --------------------------------------------------------------------------- */

static struct frm hist[HIST];
static unsigned int n_hist;

static void add(const struct frm *f)
{
	burst_f[n_burst++] = *f;
	hist[n_hist++ % HIST] = *f;
	if (n_burst == BURST_MAX)
		flush();
}

/* One record of the input: a frame (or the burst's end). Its first byte `op`: op & 7 the
 * kind: 0..3 a fresh query (0 a name of the table, 1 a random label below a parent, 2 two
 * random labels below a parent, 3 a name of the table with its case changed), 4 a frame sent
 * before again, 5 one of them with one byte set (and its checksums made right, or not), 6
 * one of them damaged (damage()), 7 the burst ends (op & 0x80: and the steering table is
 * published again with target (op >> 3 & 3) - 1 down, -1 none; op & 0x40: and the other
 * image, a reload, which the cache and the kept name error must not answer from). */
static void next_frame(struct cur *c, uint64_t ol)
{
	static uint16_t id;
	uint8_t op = next(c), kind = op & 7;
	struct frm f;

	f.ol = ol;
	f.segs = 1;
	if (kind == 7) {
		flush();
		/* a health change between bursts: the steering table again, a target down */
		if (op & 0x80)
			steer_publish((int)((op >> 3) & 3) - 1);
		/* a reload: the other image (second.test. gone or back) */
		if (op & 0x40) {
			cur_img ^= 1;
			w.replica = &reps[cur_img][cur_large];
		}
		return;
	}
	if (kind >= 4) {
		if (n_hist == 0)
			return;
		unsigned int back = next(c) % (n_hist < HIST ? n_hist : HIST);
		f = hist[(n_hist - 1 - back) % HIST];
		f.ol = ol;
		f.segs = 1;
		if (kind == 5 && f.len > 0) {
			uint16_t at = (uint16_t)((next(c) << 8 | next(c)) % f.len);
			f.b[at] = next(c);
			uint8_t fix = next(c);
			fix_sums(&f, fix & 1, fix & 2);
		} else if (kind == 6) {
			uint8_t how = next(c);
			damage(&f, how, next(c));
		}
		add(&f);
		return;
	}
	uint8_t fl = next(c), nb = next(c), tb = next(c);
	uint8_t name[300];
	size_t nl = 0;
	if (kind == 1 || kind == 2) {
		nl += label(name, c, 1 + next(c) % 24);
		if (kind == 2)
			nl += label(name + nl, c, 1 + next(c) % 8);
		nl += wire_name(name + nl, parents[nb % N_PARENTS]);
	} else {
		nl = wire_name(name, names[nb % N_NAMES]);
		uint8_t mask = kind == 3 ? next(c) : 0;       /* the letters whose case flips */
		for (size_t i = 0; mask != 0 && i < nl; i++)
			if ((name[i] | 0x20) >= 'a' && (name[i] | 0x20) <= 'z' && (mask >> (i % 8) & 1))
				name[i] ^= 0x20;
	}
	static const uint16_t payloads[4] = {1232, 512, 4096, 1400};
	struct spec s = {
		.v6 = fl & 1, .edns = (fl >> 1) & 1, .dobit = (fl >> 2) & 1, .ecs = (fl >> 3) & 1,
		.cookie = (fl >> 4) & 1, .flags = fl & 0x20 ? 0x0100 : 0, .dst = (fl >> 6) & 1,
		.id = (uint16_t)(++id * 7919u), .qtype = qtypes[tb % N_QTYPES], .qclass = 1,
		.payload = payloads[(op >> 3) & 3], .sport = (uint16_t)(1024 + (op >> 5) * 1000 + id),
		.src_last = (uint8_t)(1 + (fl >> 7) * 2), .name = name, .nlen = nl,
	};
	if (s.ecs) {
		uint8_t e = next(c);
		s.ecs_fam = e & 0x80 ? 2 : 1;
		s.ecs_src = (uint8_t)(e % (s.ecs_fam == 2 ? 57 : 33));
		s.ecs_addr = (uint8_t)(e >> 5);
	}
	build(&f, &s);
	add(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cur c = {data, size, 0};

	if (mp == NULL)
		setup();
	if (size > FUZZ_MAX_LEN || size == 0)
		return 0;
	/* a worker as pop53d starts one, its state from this input alone */
	uint8_t cfg = next(&c);
	struct p53_qcache *qc = cfg & 4 ? qc_small : qc_big;
	if (p53_qcache_init(qc, cfg & 4 ? 64 : 1024) != 0)
		abort();
	w.qcache = cfg & 1 ? qc : NULL;
	cur_img = 0;
	cur_large = (cfg >> 1) & 1;
	w.replica = &reps[cur_img][cur_large];
	/* a port that computes the checksums: not the one-pass path (worker.c burst()), the
	   fast parse and answer with pkt.c's reply */
	w.tx_offload = cfg & 8 ? P53_PKT_TX_IP_CKSUM | P53_PKT_TX_UDP_CKSUM : 0;
	memset(&w.nx, 0, sizeof(w.nx));
	steer_publish(-1);
	memset(&w.stats, 0, sizeof(w.stats));
	n_hist = 0;
	n_burst = 0;
	uint64_t ol = cfg & 0x20 ? RTE_MBUF_F_RX_L4_CKSUM_GOOD : RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN;
	for (unsigned int k = 0; k < FRAMES_MAX && c.i < c.n; k++)
		next_frame(&c, ol);
	flush();
	for (int d = 0; d < P53_PKT_DROP__MAX; d++)
		n_dropped += ref.drop[d];
	n_dropped += ref.multiseg;
	n_unanswered += ref.no_answer;
	memset(&ref, 0, sizeof(ref));
	return 0;
}

static const char *const step_names[P53_FAST_STEP__MAX] = {
	"mbuf_qc", "mbuf_qc6", "qc_hit", "qc_store", "qc_ecs", "qc_steered", "qc_pick_miss", "frame", "frame_qc", "burst_nx", "nx_frame",
	"nx_frame_answer", "nx_any", "nx_any6", "nx_keep", "nx_put", "ce", "run_skip", "run_look", "run_kept", "read", "write",
};

/* The steps each taken (fastpath.c P53_FAST_STEPS), printed; any not taken fails. */
static void report(void)
{
	int missing = 0;

	printf(", %llu bursts, %llu frames: %llu answered, %llu dropped, %llu not answered; steps:",
	       n_bursts, n_frames, n_answered, n_dropped, n_unanswered);
	for (int s = 0; s < P53_FAST_STEP__MAX; s++) {
		printf(" %s %llu", step_names[s], (unsigned long long)p53_fast_steps[s]);
		missing += p53_fast_steps[s] == 0;
	}
	if (missing) {
		printf("\n%s: %d steps of the burst path never taken\n", FUZZ_NAME, missing);
		exit(1);
	}
}

#define FUZZ_REPORT() report()
#include "fuzz_main.h"
