/*
 * Fuzz target for the ECS option parser (p53_edns_ecs_parse, RFC 7871 §6): reads only `size`
 * bytes; what it accepts is valid by the RFC's rules (family 1 or 2, source prefix within the
 * family, exactly ceil(source / 8) address bytes, no bits past the prefix, scope 0), and
 * libknot's independent parser (Debian's libknot13) accepts it too with the same fields.
 * What it rejects, it rejects for a reason that holds.
 *
 * libFuzzer build: scripts/fuzz.sh. Without a fuzzer, main() (fuzz_main.h) replays
 * tests/fuzz/fuzz_ecs.in/ plus deterministic mutations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/libknot.h>

#include "dataplane/edns_opt.h"

#define FUZZ_NAME "fuzz_ecs"
#define FUZZ_MAX_LEN 64

static unsigned long long outcomes[P53_ECS__MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct p53_ecs_opt e;
	uint8_t *opt;

	if (size > FUZZ_MAX_LEN)
		return 0;
	opt = malloc(size ? size : 1);
	memcpy(opt, data, size);
	enum p53_ecs_status s = p53_edns_ecs_parse(opt, size, &e);
	if ((int)s < 0 || s >= P53_ECS__MAX)
		abort();
	outcomes[s]++;
	switch (s) {
	case P53_ECS_OK: {
		unsigned int max = e.family == P53_ECS_FAMILY_IPV4 ? 32 : 128;
		size_t bytes = (e.source + 7u) / 8u;
		if ((e.family != 1 && e.family != 2) || e.source > max || e.scope != 0 || size != 4 + bytes)
			abort();
		for (unsigned int bit = e.source; bit < 128; bit++)
			if (e.addr[bit / 8] & (0x80u >> (bit % 8)))
				abort();
		knot_edns_client_subnet_t k;
		if (knot_edns_client_subnet_parse(&k, opt, (uint16_t)size) != KNOT_EOK ||
		    k.family != e.family || k.source_len != e.source || memcmp(k.address, e.addr, bytes) != 0)
			abort();
		break;
	}
	case P53_ECS_SHORT:
		if (size >= 4)
			abort();
		break;
	case P53_ECS_FAMILY:
		if (size < 4 || (data[0] == 0 && (data[1] == 1 || data[1] == 2)))
			abort();
		break;
	case P53_ECS_SCOPE:
		if (data[3] == 0)
			abort();
		break;
	default:
		break;
	}
	free(opt);
	return 0;
}

#define FUZZ_REPORT() printf(", %llu valid, %llu rejected", outcomes[P53_ECS_OK], \
	outcomes[P53_ECS_SHORT] + outcomes[P53_ECS_FAMILY] + outcomes[P53_ECS_SOURCE] + \
	outcomes[P53_ECS_SCOPE] + outcomes[P53_ECS_ADDR_LEN] + outcomes[P53_ECS_ADDR_BITS])
#include "fuzz_main.h"
