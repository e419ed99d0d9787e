/*
 * Malformed and unusual messages: what the parser reports and what the responder sends back.
 * One table row per case, each saying what it breaks. Run without a zone image: the point is
 * the RCODE (or the silent drop) and that nothing reads or writes out of bounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/answer.h"
#include "dataplane/dnsmsg.h"

#define NO_RESPONSE (-1)

struct row {
	const char *what;
	const uint8_t *msg;
	size_t len;
	enum p53_msg_status status;     /* what the parser must say */
	int rcode;                      /* RCODE of the response, or NO_RESPONSE */
	int qdcount;                    /* QDCOUNT of the response */
};

/* "www.example." A IN, RD set */
#define HDR(flags_hi, flags_lo, qd, an, ns, ar) \
	0x12, 0x34, flags_hi, flags_lo, 0, qd, 0, an, 0, ns, 0, ar
#define QNAME 3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0
#define QTAIL 0, 1, 0, 1
#define OPT(ver, rdlen) 0, 0, 41, 0x10, 0, 0, ver, 0x80, 0, 0, rdlen

static const uint8_t ok_plain[] = {HDR(1, 0, 1, 0, 0, 0), QNAME, QTAIL};
static const uint8_t ok_edns[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 0)};
static const uint8_t short_hdr[] = {0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0};
static const uint8_t qr_set[] = {HDR(0x81, 0, 1, 0, 0, 0), QNAME, QTAIL};
static const uint8_t qd0[] = {HDR(1, 0, 0, 0, 0, 0)};
static const uint8_t qd2[] = {HDR(1, 0, 2, 0, 0, 0), QNAME, QTAIL, QNAME, QTAIL};
static const uint8_t trunc_qname[] = {HDR(1, 0, 1, 0, 0, 0), 3, 'w', 'w'};
static const uint8_t trunc_qtype[] = {HDR(1, 0, 1, 0, 0, 0), QNAME, 0};
static const uint8_t ptr_qname[] = {HDR(1, 0, 1, 0, 0, 0), 3, 'w', 'w', 'w', 0xc0, 12, QTAIL};
static const uint8_t label64[] = {HDR(1, 0, 1, 0, 0, 0), 64,
	'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
	'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
	'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
	'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
	0, QTAIL};
static const uint8_t big_counts[] = {HDR(1, 0, 1, 0xff, 0, 0), QNAME, QTAIL};
static const uint8_t opt_in_answer[] = {HDR(1, 0, 1, 1, 0, 0), QNAME, QTAIL, OPT(0, 0)};
static const uint8_t opt_twice[] = {HDR(1, 0, 1, 0, 0, 2), QNAME, QTAIL, OPT(0, 0), OPT(0, 0)};
static const uint8_t opt_owner[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL,
	1, 'x', 0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0};
static const uint8_t opt_option_overrun[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 4),
	0, 3, 0, 9};
static const uint8_t opt_rdlen_overrun[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 20), 0, 3};
static const uint8_t edns_v1[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(1, 0)};
static const uint8_t opcode_status[] = {HDR(0x11, 0, 1, 0, 0, 0), QNAME, QTAIL};
static const uint8_t opcode_update[] = {HDR(0x29, 0, 1, 0, 0, 0), QNAME, QTAIL};
static const uint8_t opcode_notify[] = {HDR(0x20, 0, 1, 0, 0, 0), QNAME, 0, 6, 0, 1};
static const uint8_t trailing[] = {HDR(1, 0, 1, 0, 0, 0), QNAME, QTAIL, 0xde, 0xad};
static const uint8_t axfr_udp[] = {HDR(1, 0, 1, 0, 0, 0), QNAME, 0, 252, 0, 1};
static const uint8_t class_hs[] = {HDR(1, 0, 1, 0, 0, 0), QNAME, 0, 1, 0, 4};
static const uint8_t trunc_rr[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0};
static const uint8_t root_q[] = {HDR(1, 0, 1, 0, 0, 0), 0, QTAIL};
/* A record that claims 4 bytes of RDATA and has 2: owner pointer, A IN, TTL 60. */
#define CUT_RR 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0
static const uint8_t update_cut_rr[] = {HDR(0x28, 0, 1, 0, 1, 0), QNAME, 0, 6, 0, 1, CUT_RR};
static const uint8_t notify_cut_rr[] = {HDR(0x20, 0, 1, 1, 0, 0), QNAME, 0, 6, 0, 1, CUT_RR};
static const uint8_t update_counts[] = {HDR(0x28, 0, 1, 0, 5, 0), QNAME, 0, 6, 0, 1, CUT_RR};
static const uint8_t update_zone_cut[] = {HDR(0x28, 0, 1, 0, 0, 0), 3, 'w', 'w', 'w', 7, 'e'};
static const uint8_t notify_qd0[] = {HDR(0x20, 0, 0, 0, 0, 0)};
static const uint8_t status_qd0[] = {HDR(0x10, 0, 0, 0, 0, 0)};
static const uint8_t dso_no_question[] = {HDR(0x30, 0, 0, 0, 0, 0), 0, 0x40, 0, 0};
static const uint8_t status_cut_rr[] = {HDR(0x10, 0, 1, 0, 0, 1), QNAME, QTAIL, CUT_RR};
/* TSIG (RFC 8945 §4.2): key "key.", hmac-sha256, time 0x00006b0dfe28, fudge 300, a 4-byte
 * MAC, original ID 0x1234, no error, no other data. */
#define TSIG_RDATA 11, 'h', 'm', 'a', 'c', '-', 's', 'h', 'a', '2', '5', '6', 0, \
	0, 0, 0x6b, 0x0d, 0xfe, 0x28, 0x01, 0x2c, 0, 4, 0xde, 0xad, 0xbe, 0xef, 0x12, 0x34, 0, 0, 0, 0
#define TSIG_TAIL(cls) 0, 250, 0, cls, 0, 0, 0, 0, 0, 33, TSIG_RDATA
#define TSIG_RR 3, 'k', 'e', 'y', 0, TSIG_TAIL(255)
static const uint8_t tsig_unknown_key[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, TSIG_RR};
static const uint8_t tsig_edns[] = {HDR(1, 0, 1, 0, 0, 2), QNAME, QTAIL, OPT(0, 0), TSIG_RR};
static const uint8_t tsig_owner_ptr[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0xc0, 16,
	TSIG_TAIL(255)};
static const uint8_t tsig_notify[] = {HDR(0x20, 0, 1, 0, 0, 1), QNAME, 0, 6, 0, 1, TSIG_RR};
static const uint8_t tsig_not_last[] = {HDR(1, 0, 1, 0, 0, 2), QNAME, QTAIL, TSIG_RR, OPT(0, 0)};
static const uint8_t tsig_twice[] = {HDR(1, 0, 1, 0, 0, 2), QNAME, QTAIL, TSIG_RR, TSIG_RR};
static const uint8_t tsig_in_answer[] = {HDR(1, 0, 1, 1, 0, 0), QNAME, QTAIL, TSIG_RR};
static const uint8_t tsig_in_authority[] = {HDR(1, 0, 1, 0, 1, 0), QNAME, QTAIL, TSIG_RR};
static const uint8_t tsig_class_in[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 3, 'k', 'e', 'y', 0,
	TSIG_TAIL(1)};
static const uint8_t tsig_mac_overrun[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 3, 'k', 'e', 'y', 0,
	0, 250, 0, 255, 0, 0, 0, 0, 0, 33, 11, 'h', 'm', 'a', 'c', '-', 's', 'h', 'a', '2', '5', '6', 0,
	0, 0, 0x6b, 0x0d, 0xfe, 0x28, 0x01, 0x2c, 0, 9, 0xde, 0xad, 0xbe, 0xef, 0x12, 0x34, 0, 0, 0, 0};
static const uint8_t tsig_alg_compressed[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 3, 'k', 'e', 'y',
	0, 0, 250, 0, 255, 0, 0, 0, 0, 0, 18, 0xc0, 16,
	0, 0, 0x6b, 0x0d, 0xfe, 0x28, 0x01, 0x2c, 0, 0, 0x12, 0x34, 0, 0, 0, 0};

/* Hostile input (issue 10): compression pointers, label types, lengths, options. A record
 * after the question starts at 12 + 13 + 4 = 29; ARR(owner...) is an A record there. */
#define ARR_TAIL 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4
static const uint8_t hdr_only_qd1[] = {HDR(1, 0, 1, 0, 0, 0)};
static const uint8_t q_self_ptr[] = {HDR(1, 0, 1, 0, 0, 0), 0xc0, 12, QTAIL};
static const uint8_t q_fwd_ptr[] = {HDR(1, 0, 1, 0, 0, 0), 0xc0, 16, QTAIL, 0};
static const uint8_t q_hdr_ptr[] = {HDR(1, 0, 1, 0, 0, 0), 0xc0, 2, QTAIL};
static const uint8_t q_past_ptr[] = {HDR(1, 0, 1, 0, 0, 0), 0xc0, 0xff, QTAIL};
static const uint8_t q_label40[] = {HDR(1, 0, 1, 0, 0, 0), 0x41, 'a', 0, QTAIL};
static const uint8_t q_label80[] = {HDR(1, 0, 1, 0, 0, 0), 0x81, 'a', 0, QTAIL};
static const uint8_t ar_ptr_back[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0xc0, 12, ARR_TAIL};
static const uint8_t ar_ptr_self[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0xc0, 29, ARR_TAIL};
static const uint8_t ar_ptr_loop[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 1, 'a', 0xc0, 29, ARR_TAIL};
static const uint8_t ar_ptr_fwd[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0xc0, 40, ARR_TAIL};
static const uint8_t ar_ptr_hdr[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0xc0, 4, ARR_TAIL};
static const uint8_t ar_ptr_past[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0xff, 0xff, ARR_TAIL};
static const uint8_t ar_ptr_mid_label[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0xc0, 13, ARR_TAIL};
static const uint8_t ar_ptr_to_ptr_fwd[] = {HDR(1, 0, 1, 0, 0, 2), QNAME, QTAIL, 0xc0, 45, ARR_TAIL,
	0xc0, 29, ARR_TAIL};
static const uint8_t ar_label40[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0x41, 'a', 0, ARR_TAIL};
static const uint8_t ar_label80[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0x80, 0, ARR_TAIL};
static const uint8_t ar_rdlen_past[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, 0, 0, 1, 0, 1, 0, 0, 0, 0,
	0, 200, 1, 2, 3, 4};
static const uint8_t opt_partial_hdr[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 2), 0, 3};
static const uint8_t opt_partial_len[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 3), 0, 3, 0};
static const uint8_t edns_v1_do_unknown[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(1, 8),
	0xfe, 0xed, 0, 4, 1, 2, 3, 4};
static const uint8_t opcode15[] = {HDR(0x79, 0, 1, 0, 0, 0), QNAME, QTAIL};
static const uint8_t ixfr_udp[] = {HDR(1, 0, 1, 0, 0, 0), QNAME, 0, 251, 0, 1};
static const uint8_t cookie_short[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 11), 0, 10, 0, 7,
	1, 2, 3, 4, 5, 6, 7};
static const uint8_t cookie_server_short[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 16), 0, 10, 0, 12,
	1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4};
static const uint8_t cookie_long[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 45), 0, 10, 0, 41,
	1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8,
	1, 2, 3, 4, 5, 6, 7, 8, 9};
static const uint8_t cookie_ok[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 12), 0, 10, 0, 8,
	1, 2, 3, 4, 5, 6, 7, 8};
static const uint8_t ecs_family3[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 9), 0, 8, 0, 5,
	0, 3, 8, 0, 10};
static const uint8_t ecs_scope[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 11), 0, 8, 0, 7,
	0, 1, 24, 24, 192, 0, 2};
static const uint8_t ecs_bits[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 11), 0, 8, 0, 7,
	0, 1, 20, 0, 10, 1, 0xff};

#define ROW(w, m, st, rc, qd) {w, m, sizeof(m), st, rc, qd}

static const struct row rows[] = {
	ROW("plain query outside any zone is refused", ok_plain, P53_MSG_OK, P53_RCODE_REFUSED, 1),
	ROW("EDNS query outside any zone is refused", ok_edns, P53_MSG_OK, P53_RCODE_REFUSED, 1),
	ROW("header shorter than 12 bytes is dropped", short_hdr, P53_MSG_SHORT, NO_RESPONSE, 0),
	ROW("QR=1 (a response) is dropped, never answered", qr_set, P53_MSG_RESPONSE, NO_RESPONSE, 0),
	ROW("QDCOUNT 0 is FORMERR", qd0, P53_MSG_QDCOUNT, P53_RCODE_FORMERR, 0),
	ROW("QDCOUNT 2 is FORMERR", qd2, P53_MSG_QDCOUNT, P53_RCODE_FORMERR, 0),
	ROW("question name cut short is FORMERR", trunc_qname, P53_MSG_COUNTS, P53_RCODE_FORMERR, 0),
	ROW("QTYPE cut short is FORMERR", trunc_qtype, P53_MSG_QUESTION, P53_RCODE_FORMERR, 0),
	ROW("compression pointer in the question is FORMERR", ptr_qname, P53_MSG_QNAME, P53_RCODE_FORMERR, 0),
	ROW("64-byte label is FORMERR", label64, P53_MSG_QNAME, P53_RCODE_FORMERR, 0),
	ROW("ANCOUNT larger than the packet can hold is FORMERR", big_counts, P53_MSG_COUNTS, P53_RCODE_FORMERR, 0),
	ROW("OPT in the answer section is FORMERR", opt_in_answer, P53_MSG_OPT_PLACE, P53_RCODE_FORMERR, 1),
	ROW("two OPT records are FORMERR", opt_twice, P53_MSG_OPT_DUP, P53_RCODE_FORMERR, 1),
	ROW("OPT with a non-root owner is FORMERR", opt_owner, P53_MSG_OPT_OWNER, P53_RCODE_FORMERR, 1),
	ROW("EDNS option longer than the OPT RDATA is FORMERR", opt_option_overrun, P53_MSG_OPT_OPTION, P53_RCODE_FORMERR, 1),
	ROW("OPT RDLENGTH past the end is FORMERR", opt_rdlen_overrun, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("truncated additional record is FORMERR", trunc_rr, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("EDNS version 1 is BADVERS", edns_v1, P53_MSG_OK, P53_RCODE_BADVERS, 1),
	ROW("opcode STATUS is NOTIMP", opcode_status, P53_MSG_OK, P53_RCODE_NOTIMP, 1),
	ROW("opcode UPDATE is NOTIMP", opcode_update, P53_MSG_OK, P53_RCODE_NOTIMP, 1),
	ROW("NOTIFY without a transfer source configured is NOTAUTH", opcode_notify, P53_MSG_OK, P53_RCODE_NOTAUTH, 1),
	ROW("trailing bytes are ignored, the query answered", trailing, P53_MSG_OK, P53_RCODE_REFUSED, 1),
	ROW("AXFR over UDP is NOTIMP", axfr_udp, P53_MSG_OK, P53_RCODE_NOTIMP, 1),
	ROW("class HS is REFUSED", class_hs, P53_MSG_OK, P53_RCODE_REFUSED, 1),
	ROW("root name query is parsed", root_q, P53_MSG_OK, P53_RCODE_REFUSED, 1),
	/* Regression: a malformed non-QUERY message got QDCOUNT 0 with the question bytes kept. */
	ROW("UPDATE whose update record is cut short is FORMERR with its zone section echoed",
	    update_cut_rr, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("NOTIFY whose answer record is cut short is FORMERR with its question echoed",
	    notify_cut_rr, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("UPDATE whose counts cannot fit is FORMERR, header only", update_counts, P53_MSG_COUNTS,
	    P53_RCODE_FORMERR, 0),
	ROW("UPDATE whose zone name is cut short is FORMERR, header only", update_zone_cut,
	    P53_MSG_QNAME, P53_RCODE_FORMERR, 0),
	ROW("NOTIFY without a question is FORMERR, header only", notify_qd0, P53_MSG_QDCOUNT,
	    P53_RCODE_FORMERR, 0),
	ROW("STATUS without a question is NOTIMP (its format is not ours to judge), header only",
	    status_qd0, P53_MSG_QDCOUNT, P53_RCODE_NOTIMP, 0),
	ROW("DSO (opcode 6, no question by design) is NOTIMP, header only", dso_no_question,
	    P53_MSG_QDCOUNT, P53_RCODE_NOTIMP, 0),
	ROW("STATUS with a cut record is NOTIMP with the question it carried", status_cut_rr,
	    P53_MSG_RR, P53_RCODE_NOTIMP, 1),
	/* TSIG, RFC 8945: pop53 knows no key yet. No zone is loaded here, and like Knot a
	 * signed query for a name no zone holds is REFUSED, unsigned (BADKEY: test_answer.c). */
	ROW("signed query outside every zone is REFUSED, as Knot", tsig_unknown_key, P53_MSG_OK,
	    P53_RCODE_REFUSED, 1),
	ROW("signed query after OPT, outside every zone, is REFUSED", tsig_edns, P53_MSG_OK,
	    P53_RCODE_REFUSED, 1),
	ROW("TSIG whose key name is compressed is read; outside every zone: REFUSED",
	    tsig_owner_ptr, P53_MSG_OK, P53_RCODE_REFUSED, 1),
	ROW("signed NOTIFY with an unknown key is NOTAUTH (BADKEY)", tsig_notify, P53_MSG_OK,
	    P53_RCODE_NOTAUTH, 1),
	ROW("TSIG not the last record of the additional section is FORMERR", tsig_not_last,
	    P53_MSG_TSIG_PLACE, P53_RCODE_FORMERR, 1),
	ROW("two TSIG records are FORMERR", tsig_twice, P53_MSG_TSIG_PLACE, P53_RCODE_FORMERR, 1),
	ROW("TSIG in the answer section is FORMERR", tsig_in_answer, P53_MSG_TSIG_PLACE,
	    P53_RCODE_FORMERR, 1),
	ROW("TSIG as the last record of the authority section is FORMERR", tsig_in_authority,
	    P53_MSG_TSIG_PLACE, P53_RCODE_FORMERR, 1),
	ROW("TSIG in class IN is FORMERR", tsig_class_in, P53_MSG_TSIG, P53_RCODE_FORMERR, 1),
	ROW("TSIG whose MAC size runs past its RDATA is FORMERR", tsig_mac_overrun, P53_MSG_TSIG,
	    P53_RCODE_FORMERR, 1),
	ROW("TSIG with a compressed algorithm name is FORMERR", tsig_alg_compressed, P53_MSG_TSIG,
	    P53_RCODE_FORMERR, 1),
	/* Hostile input (issue 10) */
	ROW("header only, QDCOUNT 1: no room for the question, FORMERR", hdr_only_qd1, P53_MSG_COUNTS, P53_RCODE_FORMERR, 0),
	ROW("question name pointing at itself is FORMERR", q_self_ptr, P53_MSG_QNAME, P53_RCODE_FORMERR, 0),
	ROW("question name pointing forward is FORMERR", q_fwd_ptr, P53_MSG_QNAME, P53_RCODE_FORMERR, 0),
	ROW("question name pointing into the header is FORMERR", q_hdr_ptr, P53_MSG_QNAME, P53_RCODE_FORMERR, 0),
	ROW("question name pointing past the end is FORMERR", q_past_ptr, P53_MSG_QNAME, P53_RCODE_FORMERR, 0),
	ROW("label type 0x40 (extended, RFC 6891 §5) in the question is FORMERR", q_label40, P53_MSG_QNAME, P53_RCODE_FORMERR, 0),
	ROW("label type 0x80 (reserved) in the question is FORMERR", q_label80, P53_MSG_QNAME, P53_RCODE_FORMERR, 0),
	ROW("a record owner pointing back at the question is fine", ar_ptr_back, P53_MSG_OK, P53_RCODE_REFUSED, 1),
	ROW("a record owner pointing at itself is FORMERR", ar_ptr_self, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("a record owner looping (label, then a pointer back to that label) is FORMERR", ar_ptr_loop, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("a record owner pointing forward is FORMERR", ar_ptr_fwd, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("a record owner pointing into the header is FORMERR", ar_ptr_hdr, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("a record owner pointing past the end is FORMERR", ar_ptr_past, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("a record owner pointing into the middle of a label is FORMERR", ar_ptr_mid_label, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("a record owner pointing at a later pointer is FORMERR", ar_ptr_to_ptr_fwd, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("label type 0x40 in a record owner is FORMERR", ar_label40, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("label type 0x80 in a record owner is FORMERR", ar_label80, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("RDLENGTH past the end of the message is FORMERR", ar_rdlen_past, P53_MSG_RR, P53_RCODE_FORMERR, 1),
	ROW("OPT with half an option header (2 of 4 bytes) is FORMERR", opt_partial_hdr, P53_MSG_OPT_OPTION, P53_RCODE_FORMERR, 1),
	ROW("OPT with 3 of an option header's 4 bytes is FORMERR", opt_partial_len, P53_MSG_OPT_OPTION, P53_RCODE_FORMERR, 1),
	ROW("EDNS version 1 with DO and an unknown option is BADVERS", edns_v1_do_unknown, P53_MSG_OK, P53_RCODE_BADVERS, 1),
	ROW("opcode 15 (unassigned) is NOTIMP", opcode15, P53_MSG_OK, P53_RCODE_NOTIMP, 1),
	ROW("IXFR over UDP is NOTAUTH (as Knot)", ixfr_udp, P53_MSG_OK, P53_RCODE_NOTAUTH, 1),
	ROW("COOKIE of 7 bytes (no whole client cookie) is FORMERR (RFC 7873 §5.2.2)", cookie_short, P53_MSG_OPT_COOKIE, P53_RCODE_FORMERR, 1),
	ROW("COOKIE with a 4-byte server cookie is FORMERR", cookie_server_short, P53_MSG_OPT_COOKIE, P53_RCODE_FORMERR, 1),
	ROW("COOKIE of 41 bytes is FORMERR", cookie_long, P53_MSG_OPT_COOKIE, P53_RCODE_FORMERR, 1),
	ROW("COOKIE with a client cookie only is well-formed", cookie_ok, P53_MSG_OK, P53_RCODE_REFUSED, 1),
	ROW("ECS with FAMILY 3 is FORMERR (RFC 7871 §7.2.1)", ecs_family3, P53_MSG_OPT_ECS, P53_RCODE_FORMERR, 1),
	ROW("ECS with a non-zero SCOPE in a query is FORMERR", ecs_scope, P53_MSG_OPT_ECS, P53_RCODE_FORMERR, 1),
	ROW("ECS with address bits past the source prefix is FORMERR", ecs_bits, P53_MSG_OPT_ECS, P53_RCODE_FORMERR, 1),
};

/* A response must be what its header says: the question when QDCOUNT is 1, then exactly
 * ANCOUNT + NSCOUNT + ARCOUNT records, ending at the returned length. An independent walk. */
static void assert_wellformed(const uint8_t *m, uint16_t n, const char *what)
{
	size_t off = 12;
	uint16_t qd = (uint16_t)(m[4] << 8 | m[5]);
	unsigned int rrs = (unsigned int)(m[6] << 8 | m[7]) + (unsigned int)(m[8] << 8 | m[9]) +
			   (unsigned int)(m[10] << 8 | m[11]);

	if (n < 12 || qd > 1)
		fail_msg("%s: length %u, QDCOUNT %u", what, n, qd);
	for (unsigned int i = 0; i < qd + rrs; i++) {
		/* name: labels, or labels ending in a pointer */
		for (;;) {
			if (off >= n)
				fail_msg("%s: record %u runs past the %u bytes returned", what, i, n);
			uint8_t l = m[off];
			if ((l & 0xc0) == 0xc0) {
				off += 2;
				break;
			}
			off += 1u + l;
			if (l == 0)
				break;
		}
		off += i < qd ? 4 : 10;
		if (off > n)
			fail_msg("%s: record %u runs past the %u bytes returned", what, i, n);
		if (i >= qd)
			off += (size_t)(m[off - 2] << 8 | m[off - 1]);
	}
	if (off != n)
		fail_msg("%s: %zu bytes of sections, %u returned (QDCOUNT %u)", what, off, n, qd);
}

static void test_table(void **state)
{
	(void)state;
	struct p53_answer_conf conf = {.edns_max_payload = 1232};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct p53_query q;
		uint8_t buf[2048];
		struct p53_answer_stats st;

		memset(&st, 0, sizeof(st));
		print_message("case: %s\n", r->what);
		assert_int_equal(p53_msg_parse(r->msg, r->len, &q), r->status);

		memset(buf, 0xee, sizeof(buf));
		memcpy(buf, r->msg, r->len);
		uint16_t n = p53_answer(NULL, &conf, buf, (uint16_t)r->len, sizeof(buf), &st);
		if (r->rcode == NO_RESPONSE) {
			assert_int_equal(n, 0);
			assert_int_equal(st.kind[P53_ANS_DROP], 1);
			continue;
		}
		assert_true(n >= 12);
		assert_int_equal(buf[0], 0x12);                 /* ID kept */
		assert_int_equal(buf[1], 0x34);
		assert_true(buf[2] & 0x80);                     /* QR */
		assert_int_equal(buf[2] & 0x78, r->msg[2] & 0x78); /* opcode kept */
		assert_int_equal(buf[5], r->qdcount);
		assert_wellformed(buf, n, r->what);
		int rcode = buf[3] & 0xf;
		if (r->rcode == P53_RCODE_BADVERS) {
			/* RFC 6891 §6.1.3: header RCODE 0, upper bits 1 in the OPT TTL. */
			assert_int_equal(rcode, 0);
			assert_int_equal(buf[11], 1);            /* ARCOUNT: the OPT */
			size_t opt = n - 11;
			assert_int_equal(buf[opt + 2], 41);
			assert_int_equal(buf[opt + 5], 1);       /* extended RCODE */
			assert_int_equal(buf[opt + 6], 0);       /* version 0 */
		} else {
			assert_int_equal(rcode, r->rcode);
		}
		assert_int_equal(buf[2] & 0x04, 0);              /* never AA here */
		assert_int_equal(st.rcode[r->rcode], 1);
		/* The response never runs past what it says it is. */
		assert_int_equal(buf[n], r->len > n ? r->msg[n] : 0xee);
	}
}

/* Messages of 0 to 16 bytes: under a header, a counted drop; a header and a partial question,
 * FORMERR without a question. */
static void test_tiny_messages(void **state)
{
	(void)state;
	static const uint8_t full[] = {HDR(1, 0, 1, 0, 0, 0), 0, 0, 1, 0, 1};
	struct p53_answer_conf conf = {.edns_max_payload = 1232};

	for (size_t len = 0; len <= 16; len++) {
		struct p53_answer_stats st;
		uint8_t buf[64];
		memset(&st, 0, sizeof(st));
		memset(buf, 0xee, sizeof(buf));
		memcpy(buf, full, len);
		uint16_t n = p53_answer(NULL, &conf, buf, (uint16_t)len, sizeof(buf), &st);
		print_message("%zu-byte message: %s\n", len, len < 12 ? "dropped" : "FORMERR");
		if (len < 12) {
			assert_int_equal(n, 0);
			assert_int_equal(st.kind[P53_ANS_DROP], 1);
			assert_int_equal(st.msg[P53_MSG_SHORT], 1);
			continue;
		}
		assert_int_equal(n, 12);
		assert_int_equal(buf[3] & 0xf, P53_RCODE_FORMERR);
		assert_int_equal(buf[5], 0);
	}
}

/* Every prefix of a valid EDNS query parses without reading past its end (run under ASAN
 * or valgrind) and gets a response or a drop. */
static void test_prefixes(void **state)
{
	(void)state;
	struct p53_answer_conf conf = {.edns_max_payload = 1232};
	struct p53_answer_stats st;

	memset(&st, 0, sizeof(st));
	/* QUERY, STATUS, NOTIFY, UPDATE, DSO: every error path, well-formed responses only. */
	static const uint8_t opcodes[] = {0x00, 0x10, 0x20, 0x28, 0x30};
	for (size_t o = 0; o < sizeof(opcodes); o++) {
		for (size_t len = 0; len <= sizeof(ok_edns); len++) {
			uint8_t buf[512];
			char what[64];
			memcpy(buf, ok_edns, len);
			if (len > 2)
				buf[2] = (uint8_t)(opcodes[o] | (ok_edns[2] & 0x07));
			uint16_t n = p53_answer(NULL, &conf, buf, (uint16_t)len, sizeof(buf), &st);
			snprintf(what, sizeof(what), "opcode %u, %zu-byte prefix", opcodes[o] >> 3, len);
			if (len < 12) {
				assert_int_equal(n, 0);
				continue;
			}
			assert_wellformed(buf, n, what);
		}
	}
}

/* The parser says where the TSIG is and its key name (for signed NOTIFYs, later). */
static void test_tsig_located(void **state)
{
	struct p53_query q;
	uint8_t key[255];
	(void)state;

	assert_int_equal(p53_msg_parse(tsig_notify, sizeof(tsig_notify), &q), P53_MSG_OK);
	assert_true(q.tsig);
	assert_int_equal(q.tsig_owner, 12 + 13 + 4);
	assert_int_equal(p53_msg_name(tsig_notify, sizeof(tsig_notify), q.tsig_owner, key), 5);
	assert_memory_equal(key, "\3key\0", 5);
	assert_int_equal(q.tsig_rdlen, 33);
	assert_int_equal(q.tsig_alg_len, 13);
	assert_int_equal(q.tsig_mac_len, 4);
	assert_int_equal(p53_msg_parse(ok_edns, sizeof(ok_edns), &q), P53_MSG_OK);
	assert_false(q.tsig);                                   /* unsigned: unaffected */
	/* A pointer to itself or forwards is refused (loops). */
	static const uint8_t loop[] = {0xc0, 0};
	assert_int_equal(p53_msg_name(loop, sizeof(loop), 0, key), -1);
}

/* The EDNS flags other than DO and unknown options are not echoed (RFC 6891 §6.1.4). */
static void test_opt_echo(void **state)
{
	(void)state;
	static const uint8_t q[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL,
		0, 0, 41, 0x02, 0x00, 0, 0, 0x80 | 0x40, 0x7f, 0, 8, 0xfe, 0xed, 0, 4, 1, 2, 3, 4};
	struct p53_answer_conf conf = {.edns_max_payload = 1232};
	struct p53_answer_stats st;
	uint8_t buf[512];

	memset(&st, 0, sizeof(st));
	memcpy(buf, q, sizeof(q));
	uint16_t n = p53_answer(NULL, &conf, buf, sizeof(q), sizeof(buf), &st);
	assert_int_equal(n, 12 + 17 + 11 + 6);
	const uint8_t *opt = buf + n - 17;
	assert_int_equal(opt[0], 0);
	assert_int_equal(opt[1] << 8 | opt[2], 41);
	assert_int_equal(opt[3] << 8 | opt[4], 1232);    /* our size, not theirs */
	assert_int_equal(opt[7], 0x80);                  /* DO echoed, the unknown flag not */
	assert_int_equal(opt[8], 0);                     /* nor Z */
	/* The unknown option is not echoed; the only option is our Extended DNS Error 20,
	 * "Not Authoritative" (RFC 8914 §4.21), since no zone is loaded. */
	assert_int_equal(opt[9] << 8 | opt[10], 6);
	assert_int_equal(opt[11] << 8 | opt[12], 15);
	assert_int_equal(opt[13] << 8 | opt[14], 2);
	assert_int_equal(opt[15] << 8 | opt[16], 20);
}

/* edns-tcp-keepalive (RFC 7828) is reported, not judged: empty (as a query must send it), with a
 * TIMEOUT (which only TCP refuses), absent; each row says what it carries. */
static void test_keepalive_option(void **state)
{
	(void)state;
	static const uint8_t none[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 0)};
	static const uint8_t empty[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 4), 0, 11, 0, 0};
	static const uint8_t timeout[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 6), 0, 11, 0, 2,
		0, 100};
	static const uint8_t after_nsid[] = {HDR(1, 0, 1, 0, 0, 1), QNAME, QTAIL, OPT(0, 8), 0, 3, 0, 0,
		0, 11, 0, 0};
	static const struct {
		const char *what;
		const uint8_t *msg;
		size_t len;
		uint8_t keepalive;
	} kr[] = {
		{"OPT without options: no keepalive", none, sizeof(none), 0},
		{"keepalive with length 0: present, as a query sends it", empty, sizeof(empty), 1},
		{"keepalive with a TIMEOUT: reported for the transport to judge", timeout, sizeof(timeout), 2},
		{"keepalive after NSID is found too", after_nsid, sizeof(after_nsid), 1},
	};

	for (size_t i = 0; i < sizeof(kr) / sizeof(kr[0]); i++) {
		struct p53_query q;
		print_message("case: %s\n", kr[i].what);
		memset(&q, 0x55, sizeof(q)); /* the parser must clear it itself */
		assert_int_equal(p53_msg_parse(kr[i].msg, kr[i].len, &q), P53_MSG_OK);
		assert_int_equal(q.keepalive, kr[i].keepalive);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_tiny_messages),
		cmocka_unit_test(test_prefixes),
		cmocka_unit_test(test_opt_echo),
		cmocka_unit_test(test_tsig_located),
		cmocka_unit_test(test_keepalive_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
