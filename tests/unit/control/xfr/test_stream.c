/*
 * Unit tests for control/xfr/stream.c: a zone transfer cut into messages. Every record goes
 * out once, in order, no message over its limit, question only in the first, and each
 * message parses with ldns; a signed stream verifies, message after message, with the TSIG
 * stream verifier the transfer client uses (tsig.c, itself checked against ldns); malformed
 * inputs fail, one row each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ldns/ldns.h>

#include "control/xfr/stream.h"
#include "dataplane/wire.h"

static void add_text(struct p53_rrs *r, const char *txt)
{
	ldns_rr *rr = NULL;

	assert_int_equal(ldns_rr_new_frm_str(&rr, txt, 3600, NULL, NULL), LDNS_STATUS_OK);
	assert_int_equal(p53_rrs_add_ldns(r, rr), 0);
	ldns_rr_free(rr);
}

/* An AXFR query for example.com. with ID 0x1234, RD clear. */
static size_t query(uint8_t *q)
{
	static const uint8_t hdr[] = { 0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
				       7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
				       0, 252, 0, 1 };
	memcpy(q, hdr, sizeof(hdr));
	return sizeof(hdr);
}

struct zone {
	struct p53_rrs soa, body;
};

static void make_zone(struct zone *z, int n)
{
	char txt[256];

	memset(z, 0, sizeof(*z));
	add_text(&z->soa, "example.com. 300 IN SOA ns1.example.com. h.example.com. 7 3600 600 86400 300");
	for (int i = 0; i < n; i++) {
		snprintf(txt, sizeof(txt), "host%d.example.com. 300 IN TXT \"record number %d of the zone, "
			 "with some padding to make the messages fill up sooner\"", i, i);
		add_text(&z->body, txt);
	}
}

static void free_zone(struct zone *z)
{
	p53_rrs_free(&z->soa);
	p53_rrs_free(&z->body);
}

/* Run the stream with message limit cap; count messages and records, check each one. */
static void run(struct zone *z, size_t cap, const struct p53_tsig_key *key, uint64_t *msgs,
		uint64_t *records)
{
	static struct p53_xfr_stream s;
	uint8_t q[64], out[P53_XFR_MSG_MAX], mac[P53_TSIG_MAC_MAX] = { 1, 2, 3 };
	size_t qlen = query(q);
	struct p53_tsig_stream vs;
	uint64_t now = (uint64_t)time(NULL);
	long n;

	assert_int_equal(p53_xfr_stream_init(&s, q, qlen, key, mac, key ? 32 : 0), 0);
	assert_int_equal(p53_xfr_stream_add(&s, &z->soa), 0);
	assert_int_equal(p53_xfr_stream_add(&s, &z->body), 0);
	assert_int_equal(p53_xfr_stream_add(&s, &z->soa), 0);
	if (key != NULL)
		p53_tsig_stream_init(&vs, key, mac, 32);
	*msgs = *records = 0;
	uint16_t last_type = 0;
	while ((n = p53_xfr_stream_next(&s, out, cap, now)) > 0) {
		assert_true((size_t)n <= cap);
		assert_int_equal(p53_get16(out), 0x1234);
		assert_true(out[2] & 0x80);                              /* QR */
		assert_true(out[2] & 0x04);                              /* AA */
		assert_int_equal(p53_get16(out + 4), *msgs == 0 ? 1 : 0); /* question: first only */
		ldns_pkt *p = NULL;
		assert_int_equal(ldns_wire2pkt(&p, out, (size_t)n), LDNS_STATUS_OK);
		ldns_rr_list *an = ldns_pkt_answer(p);
		assert_true(ldns_rr_list_rr_count(an) > 0);
		if (*msgs == 0)
			assert_int_equal(ldns_rr_get_type(ldns_rr_list_rr(an, 0)), LDNS_RR_TYPE_SOA);
		last_type = (uint16_t)ldns_rr_get_type(ldns_rr_list_rr(an, ldns_rr_list_rr_count(an) - 1));
		*records += ldns_rr_list_rr_count(an);
		if (key != NULL) {
			assert_non_null(ldns_pkt_tsig(p));
			assert_int_equal(p53_tsig_stream_next(&vs, out, (size_t)n, now), P53_TSIG_OK);
		}
		ldns_pkt_free(p);
		(*msgs)++;
	}
	assert_int_equal(n, 0);
	assert_int_equal(last_type, LDNS_RR_TYPE_SOA);
	if (key != NULL) {
		assert_int_equal(p53_tsig_stream_end(&vs), P53_TSIG_OK);
		p53_tsig_stream_free(&vs);
	}
}

static void test_split(void **state)
{
	struct zone z;
	uint64_t msgs, records;

	(void)state;
	make_zone(&z, 3000);
	run(&z, P53_XFR_MSG_MAX, NULL, &msgs, &records);
	assert_int_equal(records, 3002);
	assert_true(msgs >= 4); /* ~300 KB of records */
	/* Small messages: many more of them, the same records. */
	uint64_t small;
	run(&z, 1024, NULL, &small, &records);
	assert_int_equal(records, 3002);
	assert_true(small > 10 * msgs);
	free_zone(&z);
}

static void test_one_message(void **state)
{
	struct zone z;
	uint64_t msgs, records;

	(void)state;
	make_zone(&z, 3);
	run(&z, P53_XFR_MSG_MAX, NULL, &msgs, &records);
	assert_int_equal(msgs, 1);
	assert_int_equal(records, 5);
	free_zone(&z);
}

static void test_signed(void **state)
{
	struct p53_tsig_key key;
	struct zone z;
	uint64_t msgs, records;
	static const uint8_t name[] = { 7, 'x', 'f', 'r', '-', 'k', 'e', 'y', 0 };

	(void)state;
	memset(&key, 0, sizeof(key));
	memcpy(key.wire, name, sizeof(name));
	key.wire_len = sizeof(name);
	key.alg = P53_TSIG_HMAC_SHA256;
	memset(key.secret, 0x5a, 32);
	key.secret_len = 32;
	make_zone(&z, 2000);
	run(&z, P53_XFR_MSG_MAX, &key, &msgs, &records);
	assert_int_equal(records, 2002);
	assert_true(msgs > 1);
	free_zone(&z);
}

/* Rows: inputs the stream must refuse rather than send something broken. */
static void test_bad(void **state)
{
	static struct p53_xfr_stream s;
	uint8_t q[64], out[P53_XFR_MSG_MAX];
	size_t qlen = query(q);
	struct p53_rrs big = { 0 }, junk = { 0 };
	uint8_t rdata[2000];

	(void)state;
	memset(rdata, 'x', sizeof(rdata));
	assert_int_equal(p53_rrs_add(&big, (const uint8_t *)"\0", 1, 16, 1, 0, rdata, sizeof(rdata)), 0);
	/* a record larger than the message limit */
	assert_int_equal(p53_xfr_stream_init(&s, q, qlen, NULL, NULL, 0), 0);
	assert_int_equal(p53_xfr_stream_add(&s, &big), 0);
	assert_int_equal(p53_xfr_stream_next(&s, out, 512, 0), -1);
	/* a segment whose record runs past its end */
	junk.buf = (uint8_t *)"\0\0\20\0\1\0\0\0\0\0\50";
	junk.len = 11;
	assert_int_equal(p53_xfr_stream_init(&s, q, qlen, NULL, NULL, 0), 0);
	assert_int_equal(p53_xfr_stream_add(&s, &junk), 0);
	assert_int_equal(p53_xfr_stream_next(&s, out, sizeof(out), 0), -1);
	/* a question longer than the stream keeps */
	assert_int_equal(p53_xfr_stream_init(&s, out, sizeof(s.query) + 1, NULL, NULL, 0), -1);
	/* nothing to send: done at once */
	assert_int_equal(p53_xfr_stream_init(&s, q, qlen, NULL, NULL, 0), 0);
	assert_int_equal(p53_xfr_stream_next(&s, out, sizeof(out), 0), 0);
	p53_rrs_free(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_one_message),
		cmocka_unit_test(test_signed),
		cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
