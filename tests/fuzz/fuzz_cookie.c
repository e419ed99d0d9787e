/*
 * Fuzz target for DNS cookies: the COOKIE option parser (p53_edns_cookie_parse, RFC 7873 §4)
 * and the server cookie check (p53_cookie_check, RFC 9018). Every input is an option's data;
 * the parser accepts exactly the lengths 8 and 16..40 and reads nothing past `size`. The check
 * runs on what was parsed with secrets and a clock taken from the input's end, never reads
 * out of bounds, and accepts a server cookie only when p53_cookie_make() would have made it
 * (under the current or the previous secret, within its time window). A cookie made from the
 * input is always accepted back.
 *
 * libFuzzer build: scripts/fuzz.sh. Without a fuzzer, main() (fuzz_main.h) replays
 * tests/fuzz/fuzz_cookie.in/ plus deterministic mutations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/cookie.h"
#include "dataplane/edns_opt.h"
#include "dataplane/siphash.h"

#define FUZZ_NAME "fuzz_cookie"
#define FUZZ_MAX_LEN 128

static unsigned long long parsed, accepted, rejected;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct p53_cookie_opt c;
	struct p53_cookie_secrets s;
	uint8_t *opt, made[P53_COOKIE_SERVER_LEN];
	static const uint8_t addr[16] = {0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

	if (size > FUZZ_MAX_LEN)
		return 0;
	opt = malloc(size ? size : 1);
	memcpy(opt, data, size);
	int ok = p53_edns_cookie_parse(opt, size, &c) == 0;
	if (ok != (size == 8 || (size >= 16 && size <= 40)))
		abort();
	memset(&s, 0, sizeof(s));
	memset(s.cur, 0x11, sizeof(s.cur));
	memset(s.prev, 0x22, sizeof(s.prev));
	s.have_prev = size & 1;
	uint32_t now = 1700000000u + (size > 0 ? data[size - 1] * 97u : 0);
	size_t alen = size & 2 ? 16 : 4;
	if (ok) {
		parsed++;
		if (c.client != opt || (c.server != NULL && (c.server != opt + 8 || c.server_len != size - 8)))
			abort();
		if (c.server != NULL) {
			enum p53_cookie_check v = p53_cookie_check(&s, c.client, c.server, c.server_len, addr, alen, now);
			if (v != P53_COOKIE_BAD) {
				/* It must be one of ours: RFC 9018 §4.4's hash over the cookie's own
				 * first 8 bytes, under one of the secrets, restated here. */
				uint8_t in[32];
				memcpy(in, c.client, 8);
				memcpy(in + 8, c.server, 8);
				memcpy(in + 16, addr, alen);
				int match = 0;
				for (int k = 0; k < 1 + s.have_prev; k++) {
					uint64_t h = p53_siphash24(k == 0 ? s.cur : s.prev, in, 16 + alen);
					uint8_t le[8];
					for (int i = 0; i < 8; i++)
						le[i] = (uint8_t)(h >> (8 * i));
					match |= memcmp(le, c.server + 8, 8) == 0;
				}
				if (c.server_len != 16 || c.server[0] != 1 || !match)
					abort();
				accepted++;
			} else {
				rejected++;
			}
		}
		/* Round trip: what we make for this client cookie is accepted back. */
		p53_cookie_make(s.cur, c.client, addr, alen, now, made);
		if (p53_cookie_check(&s, c.client, made, sizeof(made), addr, alen, now) != P53_COOKIE_OK)
			abort();
	}
	free(opt);
	return 0;
}

#define FUZZ_REPORT() printf(", %llu parsed, %llu server cookies accepted, %llu rejected", \
	parsed, accepted, rejected)
#include "fuzz_main.h"
