/*
 * Unit tests for control/xfr/tsig.c, with ldns as the independent implementation: what we
 * sign ldns verifies, what ldns signs we verify (a request, and a response stream chained
 * over several messages, RFC 8945 §5.3.1), and wrong keys, secrets, times and tampered
 * messages fail with the RFC's error. Malformed TSIG records are a table, one row per defect.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include <ldns/ldns.h>

#include "control/xfr/tsig.h"

#define SECRET_B64 "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="

static struct p53_tsig_key key_of(const char *name, const char *secret, enum p53_tsig_alg alg)
{
	struct p53_tsig_key k = { .alg = alg };
	ldns_rdf *r = NULL;

	assert_int_equal(ldns_str2rdf_dname(&r, name), LDNS_STATUS_OK);
	memcpy(k.wire, ldns_rdf_data(r), ldns_rdf_size(r));
	k.wire_len = (uint8_t)ldns_rdf_size(r);
	ldns_dname2canonical(r);
	memcpy(k.wire, ldns_rdf_data(r), ldns_rdf_size(r));
	ldns_rdf_deep_free(r);
	k.secret_len = (uint16_t)strlen(secret);
	memcpy(k.secret, secret, k.secret_len);
	return k;
}

static size_t query_wire(uint8_t *buf, size_t cap, uint16_t id)
{
	ldns_pkt *p = NULL;
	uint8_t *w = NULL;
	size_t len = 0;

	assert_int_equal(ldns_pkt_query_new_frm_str(&p, "example.com.", LDNS_RR_TYPE_SOA,
						    LDNS_RR_CLASS_IN, 0), LDNS_STATUS_OK);
	ldns_pkt_set_id(p, id);
	assert_int_equal(ldns_pkt2wire(&w, p, &len), LDNS_STATUS_OK);
	assert_true(len <= cap);
	memcpy(buf, w, len);
	free(w);
	ldns_pkt_free(p);
	return len;
}

/* Ours signs, ldns verifies. */
static void test_sign_ldns_verifies(void **state)
{
	static const enum p53_tsig_alg algs[] = { P53_TSIG_HMAC_SHA1, P53_TSIG_HMAC_SHA256,
						  P53_TSIG_HMAC_SHA512 };
	static const char *const names[] = { "hmac-sha1.", "hmac-sha256.", "hmac-sha512." };
	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct p53_tsig_key k = key_of("xfr.key.", "secretsecretsecretsecretsecret12", algs[i]);
		uint8_t buf[1024], mac[P53_TSIG_MAC_MAX];
		uint16_t mac_len = 0;
		size_t len = query_wire(buf, sizeof(buf), 4242);
		ldns_pkt *p = NULL;

		assert_int_equal(p53_tsig_sign(buf, &len, sizeof(buf), &k, NULL, 0, 0,
					       (uint64_t)time(NULL), mac, &mac_len), 0);
		assert_int_equal(ldns_wire2pkt(&p, buf, len), LDNS_STATUS_OK);
		assert_non_null(ldns_pkt_tsig(p));
		print_message("%s: MAC %u bytes\n", names[i], mac_len);
		assert_true(ldns_pkt_tsig_verify(p, buf, len, "xfr.key.", SECRET_B64, NULL));
		assert_false(ldns_pkt_tsig_verify(p, buf, len, "xfr.key.", "YmFkYmFk", NULL));
		ldns_pkt_free(p);
	}
}

/* ldns signs a request, we verify; then the ways it must fail. */
static void test_ldns_signs_we_verify(void **state)
{
	struct p53_tsig_key k = key_of("xfr.key.", "secretsecretsecretsecretsecret12", P53_TSIG_HMAC_SHA256);
	struct p53_tsig_key bad = key_of("xfr.key.", "badbadbadbadbadbadbadbadbadbad12", P53_TSIG_HMAC_SHA256);
	struct p53_tsig_key other = key_of("other.key.", "secretsecretsecretsecretsecret12", P53_TSIG_HMAC_SHA256);
	struct p53_tsig_key alg = key_of("xfr.key.", "secretsecretsecretsecretsecret12", P53_TSIG_HMAC_SHA512);
	struct p53_tsig_rr t;
	ldns_pkt *p = NULL;
	uint8_t *w = NULL;
	size_t len = 0;
	uint64_t now = (uint64_t)time(NULL);

	(void)state;
	assert_int_equal(ldns_pkt_query_new_frm_str(&p, "example.com.", LDNS_RR_TYPE_SOA,
						    LDNS_RR_CLASS_IN, 0), LDNS_STATUS_OK);
	ldns_pkt_set_opcode(p, LDNS_PACKET_NOTIFY);
	assert_int_equal(ldns_pkt_tsig_sign(p, "xfr.key.", SECRET_B64, 300, "hmac-sha256.", NULL),
			 LDNS_STATUS_OK);
	assert_int_equal(ldns_pkt2wire(&w, p, &len), LDNS_STATUS_OK);
	assert_int_equal(p53_tsig_find(w, len, &t), P53_TSIG_OK);
	assert_int_equal(t.mac_len, 32);
	/* ldns reads the clock itself, a second after `now` when one ends in between (the
	 * check at now + 301 then fell inside the fudge): the window from its time signed. */
	assert_true(t.time_signed >= now && t.time_signed <= now + 1);
	now = t.time_signed;
	assert_int_equal(p53_tsig_verify(w, len, &t, &k, now), P53_TSIG_OK);
	assert_int_equal(p53_tsig_verify(w, len, &t, &bad, now), P53_TSIG_BADSIG);
	assert_int_equal(p53_tsig_verify(w, len, &t, &other, now), P53_TSIG_BADKEY);
	assert_int_equal(p53_tsig_verify(w, len, &t, &alg, now), P53_TSIG_BADKEY);
	assert_int_equal(p53_tsig_verify(w, len, &t, &k, now + 301), P53_TSIG_BADTIME);
	assert_int_equal(p53_tsig_verify(w, len, &t, &k, now - 301), P53_TSIG_BADTIME);
	/* One flipped bit in the question. */
	w[14] ^= 0x20;
	assert_int_equal(p53_tsig_verify(w, len, &t, &k, now), P53_TSIG_BADSIG);
	free(w);
	ldns_pkt_free(p);
}

/* An unsigned error answer (BADKEY) that ldns parses with the request's names. */
static void test_error_record(void **state)
{
	struct p53_tsig_key k = key_of("xfr.key.", "secretsecretsecretsecretsecret12", P53_TSIG_HMAC_SHA256);
	uint8_t buf[1024];
	size_t len = query_wire(buf, sizeof(buf), 7), qlen;
	struct p53_tsig_rr t, e;

	(void)state;
	assert_int_equal(p53_tsig_sign(buf, &len, sizeof(buf), &k, NULL, 0, 0, 1000, NULL, NULL), 0);
	assert_int_equal(p53_tsig_find(buf, len, &t), P53_TSIG_OK);
	qlen = t.rr_off;
	buf[11]--; /* ARCOUNT back to the query's */
	assert_int_equal(p53_tsig_append_error(buf, &qlen, sizeof(buf), &t, P53_TSIG_E_BADKEY, 1000), 0);
	assert_int_equal(p53_tsig_find(buf, qlen, &e), P53_TSIG_OK);
	assert_int_equal(e.error, P53_TSIG_E_BADKEY);
	assert_int_equal(e.mac_len, 0);
	assert_int_equal(e.orig_id, 7);
	assert_memory_equal(e.name, k.wire, k.wire_len);
}

/* A response stream: ldns signs message 1 with the request MAC, 2 and 3 with timers only. */
static void test_stream(void **state)
{
	struct p53_tsig_key k = key_of("xfr.key.", "secretsecretsecretsecretsecret12", P53_TSIG_HMAC_SHA256);
	uint8_t req[1024], mac[P53_TSIG_MAC_MAX];
	uint16_t mac_len;
	size_t rlen = query_wire(req, sizeof(req), 99);
	uint64_t now = (uint64_t)time(NULL);
	uint8_t *msgs[3];
	size_t lens[3];
	ldns_rdf *prior;

	(void)state;
	assert_int_equal(p53_tsig_sign(req, &rlen, sizeof(req), &k, NULL, 0, 0, now, mac, &mac_len), 0);
	prior = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_INT16_DATA, 0, NULL);
	{
		/* ldns wants the prior MAC as an int16_data rdf: length, then the MAC. */
		uint8_t d[2 + P53_TSIG_MAC_MAX];
		d[0] = (uint8_t)(mac_len >> 8);
		d[1] = (uint8_t)mac_len;
		memcpy(d + 2, mac, mac_len);
		ldns_rdf_deep_free(prior);
		prior = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_INT16_DATA, 2u + mac_len, d);
	}
	for (int i = 0; i < 3; i++) {
		ldns_pkt *p = NULL;
		ldns_rr *rr = NULL;
		char txt[128];

		assert_int_equal(ldns_pkt_query_new_frm_str(&p, "example.com.", LDNS_RR_TYPE_AXFR,
							    LDNS_RR_CLASS_IN, 0), LDNS_STATUS_OK);
		ldns_pkt_set_id(p, 99);
		ldns_pkt_set_qr(p, true);
		snprintf(txt, sizeof(txt), "h%d.example.com. 300 IN A 192.0.2.%d", i, i);
		assert_int_equal(ldns_rr_new_frm_str(&rr, txt, 0, NULL, NULL), LDNS_STATUS_OK);
		ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, rr);
		assert_int_equal(ldns_pkt_tsig_sign_next(p, "xfr.key.", SECRET_B64, 300,
							 "hmac-sha256.", prior, i > 0), LDNS_STATUS_OK);
		assert_int_equal(ldns_pkt2wire(&msgs[i], p, &lens[i]), LDNS_STATUS_OK);
		ldns_rdf_deep_free(prior);
		prior = ldns_rdf_clone(ldns_rr_rdf(ldns_pkt_tsig(p), 3));
		ldns_pkt_free(p);
	}
	ldns_rdf_deep_free(prior);

	struct p53_tsig_stream s;
	p53_tsig_stream_init(&s, &k, mac, mac_len);
	for (int i = 0; i < 3; i++)
		assert_int_equal(p53_tsig_stream_next(&s, msgs[i], lens[i], now), P53_TSIG_OK);
	assert_int_equal(p53_tsig_stream_end(&s), P53_TSIG_OK);
	p53_tsig_stream_free(&s);

	/* Message 2 changed in transit: BADSIG there. */
	p53_tsig_stream_init(&s, &k, mac, mac_len);
	assert_int_equal(p53_tsig_stream_next(&s, msgs[0], lens[0], now), P53_TSIG_OK);
	msgs[1][14] ^= 0x20; /* the question name's case */
	assert_int_equal(p53_tsig_stream_next(&s, msgs[1], lens[1], now), P53_TSIG_BADSIG);
	p53_tsig_stream_free(&s);

	/* A wrong request MAC (another request's answer): BADSIG on the first message. */
	mac[0] ^= 1;
	p53_tsig_stream_init(&s, &k, mac, mac_len);
	assert_int_equal(p53_tsig_stream_next(&s, msgs[0], lens[0], now), P53_TSIG_BADSIG);
	p53_tsig_stream_free(&s);
	for (int i = 0; i < 3; i++)
		free(msgs[i]);
}

/* An unsigned first response (the primary has no key configured): refused. */
static void test_stream_unsigned_first(void **state)
{
	struct p53_tsig_key k = key_of("xfr.key.", "secretsecretsecretsecretsecret12", P53_TSIG_HMAC_SHA256);
	uint8_t msg[512], mac[32] = { 0 };
	size_t len = query_wire(msg, sizeof(msg), 5);
	struct p53_tsig_stream s;

	(void)state;
	p53_tsig_stream_init(&s, &k, mac, sizeof(mac));
	assert_int_equal(p53_tsig_stream_next(&s, msg, len, 0), P53_TSIG_UNSIGNED);
	assert_int_equal(p53_tsig_stream_end(&s), P53_TSIG_UNSIGNED);
	p53_tsig_stream_free(&s);
}

/* Malformed TSIG placement and records: one row per defect. */
struct bad_tsig {
	const char *msg;
	const char *hex;        /* the message after the 12-byte header's ID and flags */
	enum p53_tsig_status want;
};

/* Header counts QD AN NS AR, then question "x." A IN, then records. */
#define Q "0001" "0000" "0000" "0001" "01780000010001"
#define TSIG_RR(cls, ttl, rdlen, rd) "00" "00fa" cls ttl rdlen rd
#define TSIG_RD "0b686d61632d73686132353600" "000000000001" "012c" "0000" "0007" "0000" "0000"

static const struct bad_tsig bad_rows[] = {
	{ "a good minimal TSIG (empty MAC)", Q TSIG_RR("00ff", "00000000", "001d", TSIG_RD), P53_TSIG_OK },
	{ "class not ANY", Q TSIG_RR("0001", "00000000", "001d", TSIG_RD), P53_TSIG_FORMERR },
	{ "TTL not 0", Q TSIG_RR("00ff", "00000001", "001d", TSIG_RD), P53_TSIG_FORMERR },
	{ "RDLENGTH past the end", Q TSIG_RR("00ff", "00000000", "001e", TSIG_RD), P53_TSIG_FORMERR },
	{ "RDLENGTH short of the end", Q TSIG_RR("00ff", "00000000", "001c", TSIG_RD), P53_TSIG_FORMERR },
	{ "MAC size past RDATA", Q TSIG_RR("00ff", "00000000", "001e",
		"0b686d61632d73686132353600" "000000000001" "012c" "0040" "0007" "0000" "0000"),
	  P53_TSIG_FORMERR },
	{ "no TSIG (an A record in additional)", "0001" "0000" "0000" "0001" "01780000010001"
	  "00" "0001" "0001" "00000000" "0004" "c0000201", P53_TSIG_NONE },
	{ "TSIG not last in additional", "0001" "0000" "0000" "0002" "01780000010001"
	  TSIG_RR("00ff", "00000000", "001d", TSIG_RD) "00" "0001" "0001" "00000000" "0004" "c0000201",
	  P53_TSIG_FORMERR },
	{ "TSIG in the answer section", "0001" "0001" "0000" "0000" "01780000010001"
	  TSIG_RR("00ff", "00000000", "001d", TSIG_RD), P53_TSIG_FORMERR },
	{ "truncated record header", Q "0000fa00ff", P53_TSIG_FORMERR },
	{ "compression loop in the key name", Q "c013" "00fa00ff00000000001d" TSIG_RD, P53_TSIG_FORMERR },
};

static void test_find_malformed(void **state)
{
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		uint8_t msg[512] = { 0x00, 0x07, 0x20, 0x00 };
		size_t n = strlen(bad_rows[i].hex) / 2;
		struct p53_tsig_rr t;
		for (size_t j = 0; j < n; j++) {
			unsigned int b;
			sscanf(bad_rows[i].hex + 2 * j, "%2x", &b);
			msg[4 + j] = (uint8_t)b;
		}
		enum p53_tsig_status st = p53_tsig_find(msg, 4 + n, &t);
		if (st != bad_rows[i].want) {
			print_error("row %zu (%s): want %s, got %s\n", i, bad_rows[i].msg,
				    p53_tsig_status_str(bad_rows[i].want), p53_tsig_status_str(st));
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sign_ldns_verifies),
		cmocka_unit_test(test_ldns_signs_we_verify),
		cmocka_unit_test(test_error_record),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_stream_unsigned_first),
		cmocka_unit_test(test_find_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
