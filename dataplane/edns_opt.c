/* EDNS option parsers (COOKIE, ECS); see edns_opt.h. */
#include <string.h>

#include "dataplane/edns_opt.h"
#include "dataplane/wire.h"

int p53_edns_cookie_parse(const uint8_t *data, size_t len, struct p53_cookie_opt *out)
{
	/* RFC 7873 §4: 8 bytes, or 8 + 8..32. */
	if (len != P53_COOKIE_CLIENT_LEN &&
	    (len < P53_COOKIE_CLIENT_LEN + P53_COOKIE_SERVER_MIN ||
	     len > P53_COOKIE_CLIENT_LEN + P53_COOKIE_SERVER_MAX))
		return -1;
	out->client = data;
	out->server_len = (uint8_t)(len - P53_COOKIE_CLIENT_LEN);
	out->server = out->server_len != 0 ? data + P53_COOKIE_CLIENT_LEN : NULL;
	return 0;
}

const char *const p53_ecs_status_names[P53_ECS__MAX] = {
	[P53_ECS_OK] = "ok",
	[P53_ECS_SHORT] = "short",
	[P53_ECS_FAMILY] = "family",
	[P53_ECS_SOURCE] = "source_prefix",
	[P53_ECS_SCOPE] = "scope_prefix",
	[P53_ECS_ADDR_LEN] = "address_length",
	[P53_ECS_ADDR_BITS] = "address_bits",
};

enum p53_ecs_status p53_edns_ecs_parse(const uint8_t *data, size_t len, struct p53_ecs_opt *out)
{
	if (len < 4)
		return P53_ECS_SHORT;
	out->family = p53_get16(data);
	out->source = data[2];
	out->scope = data[3];
	unsigned int max_bits;
	if (out->family == P53_ECS_FAMILY_IPV4)
		max_bits = 32;
	else if (out->family == P53_ECS_FAMILY_IPV6)
		max_bits = 128;
	else
		return P53_ECS_FAMILY;
	if (out->source > max_bits)
		return P53_ECS_SOURCE;
	if (out->scope != 0)
		return P53_ECS_SCOPE;
	/* §6: ADDRESS is the prefix truncated to whole bytes, no more, no fewer. */
	size_t bytes = (out->source + 7u) / 8u;
	if (len - 4 != bytes)
		return P53_ECS_ADDR_LEN;
	memset(out->addr, 0, sizeof(out->addr));
	memcpy(out->addr, data + 4, bytes);
	/* §6: the bits past SOURCE PREFIX-LENGTH in the last byte MUST be 0. */
	if ((out->source & 7u) != 0) {
		uint8_t past = (uint8_t)(0xffu >> (out->source & 7u));
		if (out->addr[bytes - 1] & past)
			return P53_ECS_ADDR_BITS;
	}
	return P53_ECS_OK;
}
