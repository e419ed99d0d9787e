/*
 * DNS message parser for queries: header, question and the OPT record (RFC 1035 §4, RFC 6891).
 *
 * Wire format only: it says "malformed", "not supported" or "fine" and never picks an RCODE;
 * the responder (answer.c) turns the result into FORMERR, NOTIMP, BADVERS or REFUSED. All
 * reads go through the bounds-checked cursor in wire.h. Runs per packet on worker lcores:
 * no allocation, no locks, no syscalls.
 */
#ifndef P53_DNSMSG_H
#define P53_DNSMSG_H

#include <stdint.h>
#include <stddef.h>

#include "dataplane/name.h"

#define P53_DNS_HDR_LEN 12

/* Header flag bits in the 16-bit flags word (RFC 1035 §4.1.1, RFC 4035 §3.2). */
#define P53_F_QR 0x8000u
#define P53_F_AA 0x0400u
#define P53_F_TC 0x0200u
#define P53_F_RD 0x0100u
#define P53_F_CD 0x0010u
#define P53_OPCODE(f) (((f) >> 11) & 0xfu)

enum { P53_OPCODE_QUERY = 0, P53_OPCODE_NOTIFY = 4, P53_OPCODE_UPDATE = 5 };

enum {
	P53_RCODE_NOERROR = 0, P53_RCODE_FORMERR = 1, P53_RCODE_SERVFAIL = 2,
	P53_RCODE_NXDOMAIN = 3, P53_RCODE_NOTIMP = 4, P53_RCODE_REFUSED = 5,
	P53_RCODE_YXDOMAIN = 6, P53_RCODE_NOTAUTH = 9, P53_RCODE_BADVERS = 16,
};

enum {
	P53_T_A = 1, P53_T_NS = 2, P53_T_CNAME = 5, P53_T_SOA = 6, P53_T_MX = 15,
	P53_T_TXT = 16, P53_T_AAAA = 28, P53_T_DNAME = 39, P53_T_OPT = 41,
	P53_T_DS = 43, P53_T_RRSIG = 46, P53_T_NSEC = 47, P53_T_TSIG = 250, P53_T_IXFR = 251,
	P53_T_AXFR = 252, P53_T_MAILB = 253, P53_T_MAILA = 254, P53_T_ANY = 255,
};

enum { P53_C_IN = 1, P53_C_CH = 3, P53_C_ANY = 255 };

/* EDNS option codes (IANA registry). */
enum {
	P53_EDNS_NSID = 3, P53_EDNS_ECS = 8, P53_EDNS_COOKIE = 10, P53_EDNS_TCP_KEEPALIVE = 11,
	P53_EDNS_EDE = 15,
};

/* TSIG error codes we send (RFC 8945 §3). */
enum { P53_TSIG_ERR_BADKEY = 17 };

/* Extended DNS Error INFO-CODEs we send (RFC 8914 §4). */
enum { P53_EDE_NOT_AUTHORITATIVE = 20 };

/* What the parser found. The order is the order of checks (see p53_msg_parse). */
enum p53_msg_status {
	P53_MSG_OK = 0,
	P53_MSG_SHORT,          /* shorter than a header: nothing to answer with, drop */
	P53_MSG_RESPONSE,       /* QR=1: never answer a response (loops), drop */
	P53_MSG_QDCOUNT,        /* QDCOUNT != 1 (RFC 9619 for QUERY) */
	P53_MSG_COUNTS,         /* AN/NS/AR counts cannot fit in the bytes left */
	P53_MSG_QNAME,          /* truncated, compressed, label > 63 or name > 255 */
	P53_MSG_QUESTION,       /* truncated QTYPE/QCLASS */
	P53_MSG_RR,             /* a record after the question is truncated or malformed */
	P53_MSG_OPT_PLACE,      /* OPT outside the additional section (RFC 6891 §6.1.1) */
	P53_MSG_OPT_DUP,        /* more than one OPT (RFC 6891 §6.1.1) */
	P53_MSG_OPT_OWNER,      /* OPT owner not the root (RFC 6891 §6.1.2) */
	P53_MSG_OPT_OPTION,     /* an EDNS option runs past RDLENGTH */
	P53_MSG_OPT_COOKIE,     /* a malformed COOKIE option (RFC 7873 §5.2.2) */
	P53_MSG_OPT_ECS,        /* a malformed ECS option (RFC 7871 §7.2.1) */
	P53_MSG_TSIG_PLACE,     /* TSIG not the last record of the additional section, or a
				   second one (RFC 8945 §5.1) */
	P53_MSG_TSIG,           /* TSIG malformed: owner, class ANY, TTL 0, or its RDATA fields */
	P53_MSG__MAX
};

extern const char *const p53_msg_status_names[P53_MSG__MAX];

struct p53_query {
	uint16_t id;
	uint16_t flags;                 /* header flags word, host order */
	uint16_t qdcount, ancount, nscount, arcount;
	uint16_t qtype, qclass;
	uint16_t question_end;          /* offset just past the question */
	uint16_t trailing;              /* bytes after the last record (ignored, counted) */
	uint32_t hash;                  /* p53_name_hash(lname): the image index key, computed once */
	uint8_t qname_len;              /* wire length incl. root */
	uint8_t qname_labels;           /* labels, root excluded */
	uint8_t label_off[P53_NAME_MAXLABELS + 1]; /* offset of each label in lname; [labels] = root */
	uint8_t lname[P53_NAME_MAXLEN]; /* qname, canonical (lower case) */

	/* EDNS (RFC 6891): valid when edns = 1 */
	uint8_t edns;
	uint8_t edns_version;
	uint8_t edns_do;                /* DO bit (RFC 3225) */
	uint8_t nsid;                   /* NSID requested (RFC 5001) */
	uint16_t edns_payload;          /* requestor's UDP payload size, as sent */
	uint8_t ecs;                    /* ECS option present and valid (RFC 7871, edns_opt.h) */
	uint8_t keepalive;              /* edns-tcp-keepalive (RFC 7828): 0 absent, 1 empty (what a
					   query carries), 2 with a TIMEOUT (RFC 7828 §3.2.1 forbids
					   that in queries: control/tcp/ answers it FORMERR, UDP
					   ignores the option, §3.3.1) */
	uint16_t ecs_off, ecs_len;      /* the option's data in the message */
	uint8_t cookie;                 /* COOKIE option present and well-formed (RFC 7873) */
	uint16_t cookie_off, cookie_len;/* the first COOKIE option's data in the message */

	/* TSIG (RFC 8945): valid when tsig = 1; offsets into the message. The key name is the
	 * owner, possibly compressed: p53_msg_name() reads it. The RDATA was checked field by
	 * field; its algorithm name is uncompressed (RFC 8945 §4.2, RFC 3597 §4). */
	uint8_t tsig;
	uint16_t tsig_owner;            /* the record's owner: the key name */
	uint16_t tsig_rdata;            /* its RDATA: algorithm, time signed, fudge, MAC... */
	uint16_t tsig_rdlen;
	uint16_t tsig_alg_len;          /* wire length of the algorithm name at tsig_rdata */
	uint16_t tsig_mac_len;          /* MAC size */

	/* Not from the message: the packet's source address, for steering (steer.h). The
	 * parser sets src to NULL; the worker and the TCP threads point it at the address. */
	const uint8_t *src;             /* 4 bytes (IPv4) or 16 (IPv6), or NULL: unknown */
	uint8_t src_v6;
};

/**
 * Parse a query message.
 *
 * Checks, in order: length of the header; QR; QDCOUNT == 1; that the other counts fit
 * (each record is at least 11 bytes, RFC 1035 §4.1.3); the question name (no compression:
 * the question is the first name, so a pointer can only point at itself or the header), QTYPE
 * and QCLASS; then every record after it, to find OPT: OPT only in additional, only once, with a
 * root owner; its options well-formed (each within RDLENGTH; COOKIE and ECS by edns_opt.h, a
 * second COOKIE or ECS ignored as BIND does); and TSIG: only as the last record of the
 * additional section, once (RFC 8945 §5.1), with a readable key name, class ANY, TTL 0 and
 * RDATA whose fields add up to RDLENGTH. Other records are skipped; their names may be
 * compressed, but every pointer must point back at a well-formed name (no loops, self-,
 * forward or out-of-message pointers; RFC 1035 §4.1.4). Bytes after the last record are not
 * an error: they are counted in `trailing` and ignored, as Knot does, since middleboxes pad.
 * The parser does not verify a TSIG: it says where it is.
 *
 * On P53_MSG_QDCOUNT or later errors, the header fields of `q` are valid; from P53_MSG_RR
 * on, the question is valid too (so the FORMERR response can echo it).
 *
 * @return P53_MSG_OK or the first problem found.
 */
enum p53_msg_status p53_msg_parse(const uint8_t *msg, size_t len, struct p53_query *q);

/**
 * Read a possibly compressed name of a message (RFC 1035 §4.1.4) into canonical wire form:
 * pointers are followed only backwards, labels checked, the whole at most 255 bytes.
 *
 * @param msg  the message (the query: call it before the response overwrites it)
 * @param off  where the name starts
 * @param out  P53_NAME_MAXLEN bytes
 * @return the name's length in `out`, or -1 when it is malformed or runs past `len`.
 */
int p53_msg_name(const uint8_t *msg, size_t len, size_t off, uint8_t *out);

#endif /* P53_DNSMSG_H */
