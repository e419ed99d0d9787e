/*
 * Fuzz target for the whole per-packet path: a frame goes through p53_pkt_parse, and the
 * bytes (as a frame's DNS payload, and as a bare DNS message) through p53_answer over a real
 * compiled image (the differential test's zones), and through p53_guard_answer with cookies
 * and RRL on (a simulated clock moving on by a millisecond per input).
 *
 * libFuzzer build: scripts/fuzz.sh (meson -Dfuzzer=true with clang, ASAN and UBSAN).
 * Without a fuzzer, main() (fuzz_main.h) replays tests/fuzz/fuzz_answer.in/ plus
 * deterministic mutations of it, so `meson test` runs it on every change. Invariants checked
 * on every input: a response is 0 bytes (dropped) or at least a header, never longer than the
 * buffer it may use, keeps the query ID, has QR set, and holds exactly the question and
 * records its header counts (fuzz_check.h); and what the fast path (fastpath.h) answers is the general
 * path's response byte for byte. Each input is answered as UDP (two buffer sizes, and
 * through the guard) and as TCP (tcp_limit, 64 KiB buffer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/zone/image_build.h"
#include "dataplane/answer.h"
#include "dataplane/fastpath.h"
#include "dataplane/guard.h"
#include "dataplane/pkt.h"
#include "fuzz_check.h"

#define FUZZ_NAME "fuzz_answer"
#define FUZZ_MAX_LEN 4096
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
static struct p53_guard guard;
static struct p53_guard_stats gst;
static uint64_t tick;

static void setup(void)
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
	/* A guard as pop53d publishes one: cookies on, RRL 5/s, slip 2, small table. */
	struct p53_rrl_settings s;
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < P53_RRL__CLASSES; i++)
		s.rate[i] = 5;
	s.window = 15;
	s.slip = 2;
	s.v4_bits = 24;
	s.v6_bits = 56;
	p53_rrl_conf_set(&guard.rrl, &s, 1000000000ull, 1, 53);
	guard.tables[0] = calloc(1, p53_rrl_table_size(256));
	p53_rrl_table_init(guard.tables[0], 256);
	guard.cookies = 1;
	memset(guard.secrets.cur, 0x53, sizeof(guard.secrets.cur));
	guard.clock_hz = 1000000000ull;
	guard.clock_unix = 1700000000u;
}

static void check_dns(const uint8_t *data, size_t size, uint16_t cap,
		      const struct p53_answer_conf *cf, int guarded)
{
	/* Exactly `size` bytes live in a heap block of that size plus room to answer, so an
	 * over-read of the query shows under ASAN as a read past what was initialised. */
	uint8_t *buf = malloc(cap);
	uint16_t len = size > cap ? cap : (uint16_t)size;
	uint16_t n;

	memcpy(buf, data, len);
	if (guarded) {
		struct p53_query q;
		struct p53_guard_now now;
		/* A few client addresses, from the input, so accounts fill and collide. */
		uint8_t addr[16] = {192, 0, 2, (uint8_t)(size & 7)};
		enum p53_msg_status ms = p53_msg_parse(buf, len, &q);
		p53_guard_clock(&guard, tick, &now);
		n = p53_guard_answer(&guard, guard.tables[0], &gst, img, cf, buf, cap, &st, &q, ms,
				     addr, size & 8 ? 1 : 0, &now);
	} else {
		n = p53_answer(img, cf, buf, len, cap, &st);
	}
	check(data, buf, n, cap);
	free(buf);
}

/* The fast path (fastpath.h) answers what it answers byte for byte as the general one does,
 * with the same counters, and touches neither header nor question when it declines. */
static void check_fast(const uint8_t *data, size_t size)
{
	static uint8_t a[CAP], b[CAP];
	static struct p53_answer_stats sa, sb;
	struct p53_query q;
	uint16_t len = size > CAP ? CAP : (uint16_t)size;

	memcpy(a, data, len);
	memcpy(b, data, len);
	if (p53_msg_parse(b, len, &q) != P53_MSG_OK)
		return;
	memset(&sa, 0, sizeof(sa));
	memset(&sb, 0, sizeof(sb));
	uint16_t nb = p53_fast_answer(img, &conf, b, CAP, &sb, &q);
	if (nb == 0) {
		if (memcmp(a, b, q.question_end) != 0 || sb.queries != 0)
			abort();
		return;
	}
	uint16_t na = p53_answer(img, &conf, a, len, CAP, &sa);
	if (na != nb || memcmp(a, b, na) != 0 || memcmp(&sa, &sb, sizeof(sa)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct p53_pkt pkt;

	if (img == NULL)
		setup();
	if (size > FUZZ_MAX_LEN)
		return 0;
	tick += 1000000; /* 1 ms of the simulated clock per input */
	check_dns(data, size, CAP, &conf, 0);
	check_dns(data, size, (uint16_t)(size > 512 ? size : 512), &conf, 0); /* tight buffers too */
	check_dns(data, size, CAP, &conf, 1);
	check_dns(data, size, 65535, &tcp_conf, 0); /* a TCP message buffer */
	check_fast(data, size);
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

#define FUZZ_REPORT() printf(", %llu responses, %llu RRL-limited, %llu cookies", \
	(unsigned long long)(st.queries - st.kind[P53_ANS_DROP]), \
	(unsigned long long)(gst.rrl_dropped + gst.rrl_slipped), \
	(unsigned long long)(gst.cookie_client + gst.cookie_valid + gst.cookie_invalid))
#include "fuzz_main.h"
