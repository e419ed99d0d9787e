/*
 * Fuzz target for the DNS message parser (p53_msg_parse) alone, with what it promises checked
 * on every input: it reads nothing past `size` (the input lives in a heap block of exactly
 * that size, so ASAN sees any over-read), and what it reports is consistent: the question
 * name is a well-formed lower-cased wire name whose label offsets and hash match it, the
 * question ends inside the message, and the ECS/COOKIE option data it points at lies inside
 * the message and passes edns_opt.h's own checks.
 *
 * libFuzzer build: scripts/fuzz.sh. Without a fuzzer, main() (fuzz_main.h) replays
 * tests/fuzz/fuzz_dnsmsg.in/ plus deterministic mutations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/dnsmsg.h"
#include "dataplane/edns_opt.h"
#include "dataplane/name.h"

#define FUZZ_NAME "fuzz_dnsmsg"
#define FUZZ_MAX_LEN 65535

static unsigned long long outcomes[P53_MSG__MAX];

static void check_query(const uint8_t *msg, size_t len, const struct p53_query *q)
{
	if (q->qname_len == 0 || q->question_end > len)
		abort();
	if (p53_name_len(q->lname, q->qname_len) != q->qname_len)
		abort();
	if (p53_name_labels(q->lname) != q->qname_labels || q->label_off[q->qname_labels] != q->qname_len - 1)
		abort();
	for (uint8_t i = 0; i < q->qname_len; i++)
		if (q->lname[i] != p53_lower(msg[P53_DNS_HDR_LEN + i]))
			abort();
	if (q->hash != p53_name_hash(q->lname, q->qname_len))
		abort();
	if ((size_t)q->question_end + q->trailing > len)
		abort();
	if (q->ecs) {
		struct p53_ecs_opt e;
		if ((size_t)q->ecs_off + q->ecs_len > len ||
		    p53_edns_ecs_parse(msg + q->ecs_off, q->ecs_len, &e) != P53_ECS_OK)
			abort();
	}
	if (q->cookie) {
		struct p53_cookie_opt c;
		if ((size_t)q->cookie_off + q->cookie_len > len ||
		    p53_edns_cookie_parse(msg + q->cookie_off, q->cookie_len, &c) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct p53_query q;
	uint8_t *msg;

	if (size > FUZZ_MAX_LEN)
		return 0;
	msg = malloc(size ? size : 1);
	memcpy(msg, data, size);
	enum p53_msg_status ms = p53_msg_parse(msg, size, &q);
	if ((int)ms < 0 || ms >= P53_MSG__MAX)
		abort();
	outcomes[ms]++;
	if (ms == P53_MSG_SHORT && size >= P53_DNS_HDR_LEN)
		abort();
	if (ms == P53_MSG_OK)
		check_query(msg, size, &q);
	free(msg);
	return 0;
}

#define FUZZ_REPORT() printf(", %llu parsed ok, %llu FORMERR-class", outcomes[P53_MSG_OK], \
	outcomes[P53_MSG_QDCOUNT] + outcomes[P53_MSG_COUNTS] + outcomes[P53_MSG_QNAME] + \
	outcomes[P53_MSG_QUESTION] + outcomes[P53_MSG_RR] + outcomes[P53_MSG_OPT_PLACE] + \
	outcomes[P53_MSG_OPT_DUP] + outcomes[P53_MSG_OPT_OWNER] + outcomes[P53_MSG_OPT_OPTION] + \
	outcomes[P53_MSG_OPT_COOKIE] + outcomes[P53_MSG_OPT_ECS])
#include "fuzz_main.h"
