/* RFC 9018 server cookies; see cookie.h. */
#include <string.h>

#include "dataplane/cookie.h"

/* Hash input: client cookie, the server cookie's first 8 bytes, the address: <= 32 bytes. */
static uint64_t cookie_hash(const uint8_t secret[P53_COOKIE_SECRET_LEN], const uint8_t client[8],
			    const uint8_t head[8], const uint8_t *addr, size_t addr_len)
{
	uint8_t in[8 + 8 + 16];

	memcpy(in, client, 8);
	memcpy(in + 8, head, 8);
	memcpy(in + 16, addr, addr_len);
	return p53_siphash24(secret, in, 16 + addr_len);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void p53_cookie_make(const uint8_t secret[P53_COOKIE_SECRET_LEN], const uint8_t client[8],
		     const uint8_t *addr, size_t addr_len, uint32_t now, uint8_t out[P53_COOKIE_SERVER_LEN])
{
	out[0] = P53_COOKIE_VERSION;
	out[1] = out[2] = out[3] = 0;
	out[4] = (uint8_t)(now >> 24);
	out[5] = (uint8_t)(now >> 16);
	out[6] = (uint8_t)(now >> 8);
	out[7] = (uint8_t)now;
	/* SipHash's 64-bit output goes on the wire little-endian, as RFC 9018 Appendix A shows. */
	put_le64(out + 8, cookie_hash(secret, client, out, addr, addr_len));
}

enum p53_cookie_check p53_cookie_check(const struct p53_cookie_secrets *s, const uint8_t client[8],
				       const uint8_t *server, size_t server_len, const uint8_t *addr,
				       size_t addr_len, uint32_t now)
{
	uint8_t want[8];

	if (server_len != P53_COOKIE_SERVER_LEN || server[0] != P53_COOKIE_VERSION)
		return P53_COOKIE_BAD;
	uint32_t ts = (uint32_t)server[4] << 24 | (uint32_t)server[5] << 16 |
		      (uint32_t)server[6] << 8 | server[7];
	/* RFC 1982 serial arithmetic: the age is signed, so the epoch wrap in 2106 is harmless. */
	int32_t age = (int32_t)(now - ts);
	if (age > P53_COOKIE_PAST_S || age < -P53_COOKIE_FUTURE_S)
		return P53_COOKIE_BAD;
	/* Reserved bytes are hashed as received (RFC 9018 §4.2), so no need to check them. */
	put_le64(want, cookie_hash(s->cur, client, server, addr, addr_len));
	if (memcmp(want, server + 8, 8) == 0)
		return age > P53_COOKIE_REISSUE_S ? P53_COOKIE_OK_REISSUE : P53_COOKIE_OK;
	if (!s->have_prev)
		return P53_COOKIE_BAD;
	put_le64(want, cookie_hash(s->prev, client, server, addr, addr_len));
	return memcmp(want, server + 8, 8) == 0 ? P53_COOKIE_OK_REISSUE : P53_COOKIE_BAD;
}
