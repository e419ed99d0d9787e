#!/usr/bin/python3
"""Differential test: ask the oracle (Knot DNS) and the target (pop53d) the same questions and
compare the answers field by field.

Run by tests/differential/run.sh inside the p53-client namespace; see README.md. Needs
dnspython (use /usr/bin/python3 on Debian). Prints one line per case (PASS/FAIL/XFAIL), every
difference as "query | field | oracle: ... | target: ...", and "N passed, N failed" last.
Exit status 0 only when no case has an unexplained difference.
"""

import argparse
import collections
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import dns.edns
import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.opcode
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.tsig
import dns.tsigkeyring

# ---------------------------------------------------------------------------------------------
# Allow-list: cases where pop53 deliberately differs from Knot DNS. label -> reason, citing the
# RFC section that makes pop53's answer correct. A case listed here still runs and its
# differences are still printed, but they do not fail the test. Keep it small; the lead owns it.
ALLOW = {
    "cd-bit": "RFC 4035 section 3.2.2: the name server MUST copy the CD bit from the query "
              "to the response; Knot 3.2 clears it",
    "rd-cd-do": "RFC 4035 section 3.2.2: CD is copied to the response (see cd-bit)",
    "dname-overflow": "RFC 6672 section 2.2: when the synthesized name is too long the answer "
                      "is YXDOMAIN with the DNAME; Knot 3.2 also adds the DNAME target's data",
    "dname-overflow-noedns": "RFC 6672 section 2.2 (see dname-overflow)",
}

# ---------------------------------------------------------------------------------------------
# The corpus. One entry per case: a short unique label, the question and how it is asked.
#   edns:    None (no OPT) or a dict: payload, version, do, options [(code, bytes)], nsid
#   rd, cd:  header bits to set in the query
#   v6:      ask over IPv6 (both the oracle and the target)
#   tsig:    sign the query with a key neither server knows (RFC 8945: BADKEY)
#   mangle:  a function bytes -> bytes applied to the query's wire (malformed messages)
#   expect:  what the oracle is expected to answer (rcode, aa, tc, answer=bool); a mismatch
#            is printed as a CORPUS warning (the case no longer tests what its label says)
#            but does not fail the run: the comparison is what counts.

EDNS = {"payload": 1232}            # a plain EDNS query, as resolvers send today
NSID = 3
UNKNOWN_OPT = 65001                 # local/experimental range (RFC 6891 section 9)


def dname_overflow_qname(extra):
    """A name under dname.diff.test. whose wire length is 255 - extra.

    dname.diff.test. (17 octets) is replaced by target.diff.test. (18 octets), so a 255-octet
    qname synthesises a 256-octet name (YXDOMAIN, RFC 6672 section 2.2) and a 254-octet one
    (extra=1) synthesises exactly 255 (allowed).
    """
    suffix = 17
    room = 255 - extra - suffix
    labels = []
    while room > 0:
        n = min(63, room - 1)
        if room - (n + 1) == 1:     # never leave exactly one octet: a label needs two
            n -= 1
        labels.append(b"l" * n)
        room -= n + 1
    return dns.name.Name(labels + [b"dname", b"diff", b"test", b""])


def Q(label, name, rdtype="A", rdclass="IN", edns=None, rd=False, cd=False, v6=False,
      opcode="QUERY", expect=None, tsig=False, mangle=None, anchor=None):
    """anchor: the zone whose trust anchor validates this name with delv (DNSSEC cases)."""
    return {"label": label, "name": name, "type": rdtype, "class": rdclass, "edns": edns,
            "rd": rd, "cd": cd, "v6": v6, "opcode": opcode, "expect": expect or {},
            "tsig": tsig, "mangle": mangle, "anchor": anchor}


UNKNOWN_KEY = dns.tsigkeyring.from_text({"unknown.": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="})


def skip_name(w, off):
    while True:
        n = w[off]
        if n & 0xC0 == 0xC0:
            return off + 2
        off += 1 + n
        if n == 0:
            return off


def records(w):
    """(offset, type) of every record after the question, by walking the wire."""
    qd, an, ns, ar = (int.from_bytes(w[i:i + 2], "big") for i in (4, 6, 8, 10))
    off, out = 12, []
    for _ in range(qd):
        off = skip_name(w, off) + 4
    for _ in range(an + ns + ar):
        start = off
        off = skip_name(w, off)
        t = int.from_bytes(w[off:off + 2], "big")
        off += 10 + int.from_bytes(w[off + 8:off + 10], "big")
        out.append((start, t, off))
    return out


def split_tsig(w):
    """A reply's last record, when it is a TSIG, cut off (ARCOUNT - 1) and decoded: dnspython
    refuses to read a TSIG it cannot verify, and these keys are unknown to everyone."""
    try:
        recs = records(w)
    except (IndexError, ValueError):
        return w, None      # malformed: dnspython says so below
    if not recs or recs[-1][1] != dns.rdatatype.TSIG:
        return w, None
    start, _, end = recs[-1]
    owner, o = dns.name.from_wire(w, start)
    rd = start + o + 10
    alg, a = dns.name.from_wire(w, rd)
    p = rd + a
    mac_len = int.from_bytes(w[p + 8:p + 10], "big")
    q = p + 10 + mac_len
    other_len = int.from_bytes(w[q + 4:q + 6], "big")
    fields = (owner.to_text().lower(), alg.to_text().lower(), w[p:p + 6].hex(),
              int.from_bytes(w[p + 6:p + 8], "big"), w[p + 10:q].hex(),
              int.from_bytes(w[q:q + 2], "big"), int.from_bytes(w[q + 2:q + 4], "big"),
              w[q + 6:q + 6 + other_len].hex())
    ar = int.from_bytes(w[10:12], "big") - 1
    return w[:10] + ar.to_bytes(2, "big") + w[12:start] + w[end:], fields


def tsig_last(w):
    """Move the TSIG (the last record) in front of the OPT before it: TSIG not last."""
    recs = records(w)
    (s1, _, e1), (s2, _, e2) = recs[-2], recs[-1]
    return w[:s1] + w[s2:e2] + w[s1:e1] + w[e2:]


def tsig_twice(w):
    """Repeat the TSIG (the last record): two TSIG records."""
    s, _, e = records(w)[-1]
    ar = int.from_bytes(w[10:12], "big") + 1
    return w[:10] + ar.to_bytes(2, "big") + w[12:] + w[s:e]


def cut_last_rdata(w):
    """Add an A record after the question whose RDATA is 2 octets short (cut short)."""
    ns = int.from_bytes(w[8:10], "big") + 1
    return w[:8] + ns.to_bytes(2, "big") + w[10:] + bytes.fromhex("c00c000100010000003c0004c000")


NOERROR = {"rcode": "NOERROR", "aa": True, "answer": True}
NODATA = {"rcode": "NOERROR", "aa": True, "answer": False}
NXDOMAIN = {"rcode": "NXDOMAIN", "aa": True, "answer": False}
REFERRAL = {"rcode": "NOERROR", "aa": False, "answer": False}
REFUSED = {"rcode": "REFUSED", "aa": False, "answer": False}
TC = {"tc": True}

CORPUS = [
    # apex
    Q("apex-soa", "diff.test.", "SOA", expect=NOERROR),
    Q("apex-ns", "diff.test.", "NS", expect=NOERROR),
    Q("apex-a", "diff.test.", "A", expect=NOERROR),
    Q("apex-aaaa-nodata", "diff.test.", "AAAA", expect=NODATA),
    Q("apex-mx", "diff.test.", "MX", expect=NOERROR),
    Q("apex-txt", "diff.test.", "TXT", expect=NOERROR),
    Q("apex-caa", "diff.test.", "CAA", expect=NOERROR),
    Q("apex-https", "diff.test.", "HTTPS", expect=NOERROR),
    Q("apex-soa-edns", "diff.test.", "SOA", edns=EDNS, expect=NOERROR),
    Q("apex-soa-mixedcase", "DiFf.TeSt.", "SOA", expect=NOERROR),
    # plain hosts
    Q("www-a", "www.diff.test.", "A", expect=NOERROR),
    Q("www-aaaa", "www.diff.test.", "AAAA", expect=NOERROR),
    Q("www-a-edns", "www.diff.test.", "A", edns=EDNS, expect=NOERROR),
    Q("ns1-a", "ns1.diff.test.", "A", expect=NOERROR),
    Q("ns2-aaaa", "ns2.diff.test.", "AAAA", expect=NOERROR),
    Q("mail-aaaa", "mail.diff.test.", "AAAA", expect=NOERROR),
    Q("ptr", "ptrhost.diff.test.", "PTR", expect=NOERROR),
    Q("hinfo", "hinfo.diff.test.", "HINFO", expect=NOERROR),
    # case: 0x20 in the question, mixed case owners in the file
    Q("case-www-0x20", "wWw.DiFf.TeSt.", "A", expect=NOERROR),
    Q("case-www-upper", "WWW.DIFF.TEST.", "AAAA", expect=NOERROR),
    Q("case-mixed-owner-lower", "mixed.diff.test.", "A", expect=NOERROR),
    Q("case-mixed-owner-upper", "MIXED.DIFF.TEST.", "AAAA", expect=NOERROR),
    Q("case-mixed-owner-exact", "MiXeD.diff.test.", "A", expect=NOERROR),
    Q("case-upper-case-owner", "upper.case.diff.test.", "A", expect=NOERROR),
    Q("case-nxdomain-0x20", "NoPe.DiFf.TeSt.", "A", expect=NXDOMAIN),
    # NXDOMAIN / NODATA
    Q("nxdomain", "nope.diff.test.", "A", expect=NXDOMAIN),
    Q("nxdomain-deep", "a.b.nope.diff.test.", "AAAA", expect=NXDOMAIN),
    Q("nxdomain-edns", "nope.diff.test.", "A", edns=EDNS, expect=NXDOMAIN),
    Q("nodata-www-txt", "www.diff.test.", "TXT", expect=NODATA),
    Q("nodata-mail-mx", "mail.diff.test.", "MX", expect=NODATA),
    Q("nodata-edns", "www.diff.test.", "SRV", edns=EDNS, expect=NODATA),
    # empty non-terminals
    Q("ent-a", "ent.diff.test.", "A", expect=NODATA),
    Q("ent-aaaa", "ent.diff.test.", "AAAA", expect=NODATA),
    Q("ent-child", "x.ent.diff.test.", "A", expect=NOERROR),
    Q("ent-nxdomain-under", "y.ent.diff.test.", "A", expect=NXDOMAIN),
    Q("ent-nxdomain-deeper", "z.y.ent.diff.test.", "A", expect=NXDOMAIN),
    Q("ent-chain-top", "deep.diff.test.", "TXT", expect=NODATA),
    Q("ent-chain-mid", "b.c.deep.diff.test.", "TXT", expect=NODATA),
    Q("ent-chain-leaf", "a.b.c.deep.diff.test.", "TXT", expect=NOERROR),
    # wildcards
    Q("wild-a", "foo.wild.diff.test.", "A", expect=NOERROR),
    Q("wild-txt", "foo.wild.diff.test.", "TXT", expect=NOERROR),
    Q("wild-nodata", "foo.wild.diff.test.", "AAAA", expect=NODATA),
    Q("wild-multilabel", "a.b.wild.diff.test.", "A", expect=NOERROR),
    Q("wild-0x20", "FoO.WiLd.DiFf.TeSt.", "A", expect=NOERROR),
    Q("wild-literal", "*.wild.diff.test.", "A", expect=NOERROR),
    Q("wild-parent-ent", "wild.diff.test.", "A", expect=NODATA),
    Q("wild-explicit", "explicit.wild.diff.test.", "A", expect=NOERROR),
    Q("wild-explicit-nodata", "explicit.wild.diff.test.", "TXT", expect=NODATA),
    Q("wild-under-explicit", "x.explicit.wild.diff.test.", "A", expect=NXDOMAIN),
    Q("wild-blocked-ent", "blocked.wild.diff.test.", "A", expect=NODATA),
    Q("wild-blocked-below", "foo.blocked.wild.diff.test.", "A", expect=NXDOMAIN),
    Q("wild-edns", "bar.wild.diff.test.", "TXT", edns=EDNS, expect=NOERROR),
    Q("wild-cname", "foo.wcname.diff.test.", "A", expect=NOERROR),
    Q("wild-cname-aaaa", "x.y.wcname.diff.test.", "AAAA", expect=NOERROR),
    Q("wild-cname-qtype-cname", "foo.wcname.diff.test.", "CNAME", expect=NOERROR),
    # a wildcard that owns NS: a referral from "*.wns" (its owner, not the name), AA=0, the
    # in-zone NS target's address in additional; DS is the wildcard's data (NODATA)
    Q("wildns-a", "a.wns.second.test.", "A", expect=REFERRAL),
    Q("wildns-deep", "x.y.wns.second.test.", "AAAA", expect=REFERRAL),
    Q("wildns-ns", "a.wns.second.test.", "NS", expect=REFERRAL),
    Q("wildns-ds", "a.wns.second.test.", "DS", expect=NODATA),
    Q("wildns-literal", "*.wns.second.test.", "A", expect=REFERRAL),
    Q("wildns-edns", "A.Wns.SECOND.test.", "TXT", edns=EDNS, expect=REFERRAL),
    Q("wildns-parent", "wns.second.test.", "A", expect=NODATA),
    Q("wildns-cname", "to-wns.second.test.", "A", expect={"rcode": "NOERROR", "aa": True, "answer": True}),
    # CNAMEs
    Q("cname-chain", "chain1.diff.test.", "A", expect=NOERROR),
    Q("cname-chain-aaaa", "chain1.diff.test.", "AAAA", expect=NOERROR),
    Q("cname-chain-nodata", "chain2.diff.test.", "MX", expect=NOERROR),
    Q("cname-chain-0x20", "ChAiN1.DiFf.TeSt.", "A", expect=NOERROR),
    Q("cname-qtype-cname", "chain1.diff.test.", "CNAME", expect=NOERROR),
    Q("cname-loop", "loop-a.diff.test.", "A", expect={"aa": True, "answer": True}),
    Q("cname-self", "self.diff.test.", "A", expect={"aa": True, "answer": True}),
    Q("cname-out-of-zone", "outside.diff.test.", "A", expect=NOERROR),
    Q("cname-to-wildcard", "to-wild.diff.test.", "A", expect=NOERROR),
    Q("cname-to-wildcard-txt", "to-wild.diff.test.", "TXT", expect=NOERROR),
    Q("cname-edns", "chain1.diff.test.", "A", edns=EDNS, expect=NOERROR),
    # DNAME (RFC 6672)
    Q("dname-synth-a", "host.dname.diff.test.", "A", expect=NOERROR),
    Q("dname-synth-aaaa", "host.dname.diff.test.", "AAAA", expect=NOERROR),
    Q("dname-synth-deeper", "deeper.host.dname.diff.test.", "TXT", expect=NOERROR),
    Q("dname-synth-0x20", "HoSt.DnAmE.diff.test.", "A", expect=NOERROR),
    Q("dname-synth-nxdomain", "nope.dname.diff.test.", "A", expect={"rcode": "NXDOMAIN", "answer": True}),
    Q("dname-qtype-dname", "dname.diff.test.", "DNAME", expect=NOERROR),
    Q("dname-owner-a", "dname.diff.test.", "A", expect=NODATA),
    Q("dname-qtype-cname", "host.dname.diff.test.", "CNAME", expect=NOERROR),
    Q("dname-overflow", dname_overflow_qname(0), "A", edns=EDNS, expect={"rcode": "YXDOMAIN"}),
    Q("dname-overflow-noedns", dname_overflow_qname(0), "A", expect={"rcode": "YXDOMAIN"}),
    Q("dname-fits-255", dname_overflow_qname(1), "A", edns=EDNS, expect={"rcode": "NXDOMAIN"}),
    Q("dname-target-host", "host.target.diff.test.", "A", expect=NOERROR),
    # delegation (referrals: AA=0, NS in authority, glue in additional)
    Q("deleg-below", "www.sub.diff.test.", "A", expect=REFERRAL),
    Q("deleg-below-deep", "a.b.c.sub.diff.test.", "AAAA", expect=REFERRAL),
    Q("deleg-sub-ns", "sub.diff.test.", "NS", expect=REFERRAL),
    Q("deleg-sub-a", "sub.diff.test.", "A", expect=REFERRAL),
    Q("deleg-sub-soa", "sub.diff.test.", "SOA", expect=REFERRAL),
    Q("deleg-sub-ds", "sub.diff.test.", "DS", expect=NODATA),
    Q("deleg-glue-a", "ns1.sub.diff.test.", "A", expect=REFERRAL),
    Q("deleg-glue-aaaa", "ns1.sub.diff.test.", "AAAA", expect=REFERRAL),
    Q("deleg-0x20", "WwW.SuB.DiFf.TeSt.", "A", expect=REFERRAL),
    Q("deleg-edns", "www.sub.diff.test.", "A", edns=EDNS, expect=REFERRAL),
    Q("deleg-do", "www.sub.diff.test.", "A", edns={"payload": 1232, "do": True}, expect=REFERRAL),
    # RFC 9471: in-domain glue all included or TC=1; sibling glue optional (second.test)
    Q("deleg-glue-9471-tc", "x.many.second.test.", "A", expect=dict(REFERRAL, tc=True)),
    Q("deleg-glue-9471-fits", "x.many.second.test.", "A", edns=EDNS, expect=dict(REFERRAL, tc=False)),
    Q("deleg-glue-9471-sibling", "x.sib.second.test.", "A", expect=dict(REFERRAL, tc=False)),
    Q("deleg-glue-9471-sibling-edns", "x.sib.second.test.", "A", edns=EDNS, expect=dict(REFERRAL, tc=False)),
    # other types
    Q("mx-additional", "diff.test.", "MX", edns=EDNS, expect=NOERROR),
    Q("srv", "_sip._udp.diff.test.", "SRV", expect=NOERROR),
    Q("srv-edns", "_sip._udp.diff.test.", "SRV", edns=EDNS, expect=NOERROR),
    Q("type1000", "t1000.diff.test.", "TYPE1000", expect=NOERROR),
    Q("type1000-nodata-a", "t1000.diff.test.", "A", expect=NODATA),
    Q("type1001-nodata", "t1000.diff.test.", "TYPE1001", expect=NODATA),
    Q("caa", "diff.test.", "CAA", edns=EDNS, expect=NOERROR),
    Q("tlsa", "_443._tcp.www.diff.test.", "TLSA", expect=NOERROR),
    Q("tlsa-ent", "_tcp.www.diff.test.", "TLSA", expect=NODATA),
    Q("svcb", "svc.diff.test.", "SVCB", expect=NOERROR),
    Q("svcb-edns", "svc.diff.test.", "SVCB", edns=EDNS, expect=NOERROR),
    Q("https", "https.diff.test.", "HTTPS", expect=NOERROR),
    Q("https-edns", "https.diff.test.", "HTTPS", edns=EDNS, expect=NOERROR),
    Q("rrsig-nodata", "www.diff.test.", "RRSIG", expect=NODATA),
    # ANY (RFC 8482)
    Q("any-apex", "diff.test.", "ANY", expect={"rcode": "NOERROR", "aa": True}),
    Q("any-www", "www.diff.test.", "ANY", expect={"rcode": "NOERROR", "aa": True}),
    Q("any-nxdomain", "nope.diff.test.", "ANY", expect=NXDOMAIN),
    Q("any-edns", "www.diff.test.", "ANY", edns=EDNS, expect={"rcode": "NOERROR", "aa": True}),
    # truncation: big (~990 octets) and huge (~1470 octets)
    Q("big-noedns-tc", "big.diff.test.", "A", expect=TC),
    Q("big-edns512-tc", "big.diff.test.", "A", edns={"payload": 512}, expect=TC),
    Q("big-edns100-tc", "big.diff.test.", "A", edns={"payload": 100}, expect=TC),
    Q("big-edns1232", "big.diff.test.", "A", edns={"payload": 1232}, expect={"tc": False, "answer": True}),
    Q("big-edns4096", "big.diff.test.", "A", edns={"payload": 4096}, expect={"tc": False, "answer": True}),
    Q("big-do", "big.diff.test.", "A", edns={"payload": 1232, "do": True}, expect={"tc": False}),
    Q("huge-noedns-tc", "huge.diff.test.", "TXT", expect=TC),
    Q("huge-edns1232-tc", "huge.diff.test.", "TXT", edns={"payload": 1232}, expect=TC),
    # both servers cap their own UDP payload at 1232 (knot udp-max-payload, pop53
    # server.edns_max_payload), so huge truncates even when the client offers 4096
    Q("huge-edns4096", "huge.diff.test.", "TXT", edns={"payload": 4096}, expect=TC),
    Q("huge-edns1400", "huge.diff.test.", "TXT", edns={"payload": 1400}, expect=TC),
    Q("edns100-small", "www.diff.test.", "A", edns={"payload": 100}, expect=NOERROR),
    # header bits and EDNS
    Q("do-bit", "www.diff.test.", "A", edns={"payload": 1232, "do": True}, expect=NOERROR),
    Q("do-bit-nxdomain", "nope.diff.test.", "A", edns={"payload": 1232, "do": True}, expect=NXDOMAIN),
    Q("rd-bit", "www.diff.test.", "A", rd=True, expect=NOERROR),
    Q("rd-bit-refused", "www.example.org.", "A", rd=True, expect=REFUSED),
    Q("cd-bit", "www.diff.test.", "A", cd=True, expect=NOERROR),
    Q("rd-cd-do", "www.diff.test.", "AAAA", rd=True, cd=True, edns={"payload": 1232, "do": True},
      expect=NOERROR),
    Q("edns-version1", "www.diff.test.", "A", edns={"payload": 1232, "version": 1},
      expect={"rcode": "BADVERS"}),
    Q("edns-unknown-option", "www.diff.test.", "A",
      edns={"payload": 1232, "options": [(UNKNOWN_OPT, b"\x01\x02\x03\x04")]}, expect=NOERROR),
    Q("edns-nsid", "www.diff.test.", "A", edns={"payload": 1232, "nsid": True}, expect=NOERROR),
    Q("edns-nsid-do", "nope.diff.test.", "A", edns={"payload": 1232, "nsid": True, "do": True},
      expect=NXDOMAIN),
    Q("edns-nsid-unknown", "www.diff.test.", "A",
      edns={"payload": 1232, "nsid": True, "options": [(UNKNOWN_OPT, b"")]}, expect=NOERROR),
    Q("edns-nsid-refused", "www.example.org.", "A", edns={"payload": 1232, "nsid": True},
      expect=REFUSED),
    # CHAOS (identity "diff-pop", version "pop53-test")
    Q("chaos-id-server", "id.server.", "TXT", "CH", expect={"rcode": "NOERROR", "answer": True}),
    Q("chaos-hostname-bind", "hostname.bind.", "TXT", "CH", expect={"rcode": "NOERROR", "answer": True}),
    Q("chaos-version-bind", "version.bind.", "TXT", "CH", expect={"rcode": "NOERROR", "answer": True}),
    Q("chaos-version-server", "version.server.", "TXT", "CH", expect={"rcode": "NOERROR", "answer": True}),
    Q("chaos-0x20", "ID.Server.", "TXT", "CH", expect={"rcode": "NOERROR", "answer": True}),
    Q("chaos-edns", "id.server.", "TXT", "CH", edns=EDNS, expect={"rcode": "NOERROR", "answer": True}),
    Q("chaos-wrong-type", "id.server.", "A", "CH"),
    Q("chaos-unknown-name", "foo.bind.", "TXT", "CH"),
    # outside every zone
    Q("refused-other", "www.example.org.", "A", expect=REFUSED),
    Q("refused-root", ".", "SOA", expect=REFUSED),
    Q("refused-parent", "test.", "SOA", expect=REFUSED),
    Q("refused-suffix", "xdiff.test.", "A", expect=REFUSED),
    Q("refused-edns", "www.example.org.", "A", edns=EDNS, expect=REFUSED),
    # second zone
    Q("second-soa", "second.test.", "SOA", expect=NOERROR),
    Q("second-a", "second.test.", "A", expect=NOERROR),
    Q("second-ns", "second.test.", "NS", expect=NOERROR),
    Q("second-nxdomain", "nope.second.test.", "A", expect=NXDOMAIN),
    Q("second-nodata", "second.test.", "MX", expect=NODATA),
    # classes, meta types, opcodes
    Q("qclass-any", "www.diff.test.", "A", "ANY"),
    Q("qclass-hs", "www.diff.test.", "A", "HS"),
    Q("qtype-axfr-udp", "diff.test.", "AXFR"),
    Q("qtype-ixfr-udp", "diff.test.", "IXFR"),
    Q("opcode-status", "www.diff.test.", "A", opcode="STATUS"),
    # malformed non-QUERY messages: a well-formed FORMERR
    Q("update-cut-record", "diff.test.", "SOA", opcode="UPDATE", mangle=cut_last_rdata),
    Q("notify-cut-record", "diff.test.", "SOA", opcode="NOTIFY", mangle=cut_last_rdata),
    # TSIG (RFC 8945): a key neither server knows; misplaced TSIG records
    Q("tsig-unknown-key", "www.diff.test.", "A", tsig=True, expect={"rcode": "NOTAUTH"}),
    Q("tsig-unknown-key-edns", "www.diff.test.", "A", edns=EDNS, tsig=True, expect={"rcode": "NOTAUTH"}),
    Q("tsig-unknown-key-refused", "www.example.org.", "A", tsig=True, expect=REFUSED),
    Q("tsig-unknown-key-notify", "diff.test.", "SOA", opcode="NOTIFY", tsig=True, expect={"rcode": "NOTAUTH"}),
    Q("tsig-not-last", "www.diff.test.", "A", edns=EDNS, tsig=True, mangle=tsig_last,
      expect={"rcode": "FORMERR"}),
    Q("tsig-twice", "www.diff.test.", "A", tsig=True, mangle=tsig_twice, expect={"rcode": "FORMERR"}),
    # IPv6 transport
    Q("v6-www-a", "www.diff.test.", "A", v6=True, expect=NOERROR),
    Q("v6-www-aaaa-edns", "wWw.diff.test.", "AAAA", edns=EDNS, v6=True, expect=NOERROR),
    Q("v6-nxdomain", "nope.diff.test.", "A", v6=True, expect=NXDOMAIN),
    Q("v6-referral", "www.sub.diff.test.", "A", edns=EDNS, v6=True, expect=REFERRAL),
    Q("v6-big-noedns-tc", "big.diff.test.", "A", v6=True, expect=TC),
    Q("v6-big-edns1232", "big.diff.test.", "A", edns=EDNS, v6=True, expect={"tc": False}),
    Q("v6-nsid", "www.diff.test.", "A", edns={"payload": 1232, "nsid": True}, v6=True, expect=NOERROR),
    Q("v6-chaos-id", "id.server.", "TXT", "CH", v6=True, expect={"rcode": "NOERROR", "answer": True}),
    Q("v6-refused", "www.example.org.", "A", v6=True, expect=REFUSED),
    Q("v6-second-a", "second.test.", "A", v6=True, expect=NOERROR),
]

# ---------------------------------------------------------------------------------------------
# DNSSEC: the zones tests/differential/sign.sh signs (source zones/signed.zone.in): nsec.test
# (ldns-signzone, NSEC, with the signed child zone child.nsec.test), nsec3.test (ldns-signzone,
# NSEC3 with opt-out, salt, 2 iterations), bind.test (dnssec-signzone, NSEC3, RFC 9276 values)
# and knot.test (kzonesign, NSEC3 with opt-out, RFC 9276 values).
# Cases with DO=1 are also validated with delv against each server (see validate()).

DO = {"payload": 1232, "do": True}
NODO = {"payload": 1232}


def dnssec_cases(z):
    a = z                                  # trust anchor of the zone
    p = z.split(".")[0] + "-"              # label prefix
    nsec3 = z != "nsec.test"
    c = [
        Q(p + "apex-soa", z + ".", "SOA", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "apex-dnskey", z + ".", "DNSKEY", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "apex-dnskey-nodo", z + ".", "DNSKEY", edns=NODO, expect=NOERROR),
        Q(p + "apex-ns", z + ".", "NS", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "apex-mx-additional", z + ".", "MX", edns=DO, expect=NOERROR, anchor=a),
        # no anchor: delv cannot validate the DS of its own trust anchor (no parent)
        Q(p + "apex-ds-noparent", z + ".", "DS", edns=DO, expect=NODATA),
        Q(p + "www-a", "www." + z + ".", "A", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "www-aaaa", "www." + z + ".", "AAAA", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "www-a-0x20", "WwW." + z.upper() + ".", "A", edns=DO, expect=NOERROR),
        Q(p + "www-a-nodo", "www." + z + ".", "A", edns=NODO, expect=NOERROR),
        Q(p + "www-a-noedns", "www." + z + ".", "A", expect=NOERROR),
        Q(p + "www-rrsig", "www." + z + ".", "RRSIG", edns=DO, expect=NOERROR),
        Q(p + "www-rrsig-nodo", "www." + z + ".", "RRSIG", edns=NODO, expect=NOERROR),
        Q(p + "www-rrsig-noedns", "www." + z + ".", "RRSIG", expect=NOERROR),
        Q(p + "www-nsec", "www." + z + ".", "NSEC", edns=DO,
          expect=NODATA if nsec3 else NOERROR, anchor=a),
        Q(p + "www-nsec-nodo", "www." + z + ".", "NSEC", edns=NODO),
        Q(p + "www-any", "www." + z + ".", "ANY", edns=DO, expect={"rcode": "NOERROR", "aa": True}),
        Q(p + "nodata", "www." + z + ".", "TXT", edns=DO, expect=NODATA, anchor=a),
        Q(p + "nodata-nodo", "www." + z + ".", "TXT", edns=NODO, expect=NODATA),
        Q(p + "nxdomain", "nope." + z + ".", "A", edns=DO, expect=NXDOMAIN, anchor=a),
        Q(p + "nxdomain-0x20", "NoPe." + z.upper() + ".", "A", edns=DO, expect=NXDOMAIN),
        Q(p + "nxdomain-deep", "a.b.nope." + z + ".", "AAAA", edns=DO, expect=NXDOMAIN, anchor=a),
        Q(p + "nxdomain-first", "0." + z + ".", "A", edns=DO, expect=NXDOMAIN, anchor=a),
        Q(p + "nxdomain-last", "zzzz." + z + ".", "A", edns=DO, expect=NXDOMAIN, anchor=a),
        Q(p + "nxdomain-nodo", "nope." + z + ".", "A", edns=NODO, expect=NXDOMAIN),
        Q(p + "nxdomain-below-ent", "y.ent." + z + ".", "A", edns=DO, expect=NXDOMAIN, anchor=a),
        Q(p + "nxdomain-below-deep-ent", "x.b.deep." + z + ".", "A", edns=DO, expect=NXDOMAIN, anchor=a),
        Q(p + "ent-nodata", "ent." + z + ".", "A", edns=DO, expect=NODATA, anchor=a),
        Q(p + "ent-deep-nodata", "b.deep." + z + ".", "TXT", edns=DO, expect=NODATA, anchor=a),
        Q(p + "wild-a", "foo.wild." + z + ".", "A", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "wild-txt", "foo.wild." + z + ".", "TXT", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "wild-multilabel", "a.b.wild." + z + ".", "A", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "wild-nodata", "foo.wild." + z + ".", "AAAA", edns=DO, expect=NODATA, anchor=a),
        Q(p + "wild-literal", "*.wild." + z + ".", "A", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "wild-explicit", "explicit.wild." + z + ".", "A", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "wild-explicit-nodata", "explicit.wild." + z + ".", "TXT", edns=DO, expect=NODATA, anchor=a),
        Q(p + "wild-under-explicit", "x.explicit.wild." + z + ".", "A", edns=DO, expect=NXDOMAIN, anchor=a),
        Q(p + "wild-nodo", "foo.wild." + z + ".", "A", edns=NODO, expect=NOERROR),
        Q(p + "cname", "alias." + z + ".", "A", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "cname-to-wild", "walias." + z + ".", "A", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "cname-to-wild-nodata", "walias." + z + ".", "AAAA", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "cname-rrsig", "alias." + z + ".", "RRSIG", edns=DO, expect=NOERROR),
        # no anchor: BIND's resolver (delv) repeats a DNAME answer that came without a server
        # cookie over TCP, which pop53 does not serve yet (the TCP and cookie work)
        Q(p + "dname-synth", "host.dname." + z + ".", "A", edns=DO, expect=NOERROR),
        Q(p + "dname-nxdomain", "nope.dname." + z + ".", "A", edns=DO,
          expect={"rcode": "NXDOMAIN", "answer": True}),
        Q(p + "dname-owner", "dname." + z + ".", "DNAME", edns=DO, expect=NOERROR),
        Q(p + "srv-additional", "_sip._udp." + z + ".", "SRV", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "deleg-secure", "www.secure." + z + ".", "A", edns=DO, expect=REFERRAL),
        Q(p + "deleg-secure-ds", "secure." + z + ".", "DS", edns=DO, expect=NOERROR, anchor=a),
        Q(p + "deleg-secure-nodo", "www.secure." + z + ".", "A", edns=NODO, expect=REFERRAL),
        Q(p + "deleg-insecure", "www.insecure." + z + ".", "A", edns=DO, expect=REFERRAL),
        Q(p + "deleg-insecure-ds", "insecure." + z + ".", "DS", edns=DO, expect=NODATA, anchor=a),
        Q(p + "deleg-insecure-glue", "ns.insecure." + z + ".", "A", edns=DO, expect=REFERRAL),
        Q(p + "deleg-optout", "www.a.b.unsafe." + z + ".", "A", edns=DO, expect=REFERRAL),
        Q(p + "deleg-optout-ds", "a.b.unsafe." + z + ".", "DS", edns=DO, expect=NODATA, anchor=a),
        Q(p + "deleg-optout-ent", "unsafe." + z + ".", "A", edns=DO, expect=NODATA, anchor=a),
        Q(p + "deleg-optout-ent2", "b.unsafe." + z + ".", "A", edns=DO, expect=NODATA, anchor=a),
        Q(p + "deleg-optout-nxdomain", "x.unsafe." + z + ".", "A", edns=DO, expect=NXDOMAIN, anchor=a),
        Q(p + "tight-do-tc", "tight." + z + ".", "TXT", edns=DO, expect=TC),
        Q(p + "tight-nodo", "tight." + z + ".", "TXT", edns=NODO, expect={"tc": False, "answer": True}),
        Q(p + "big-do-tc", "big." + z + ".", "TXT", edns=DO, expect=TC),
        Q(p + "do-small-buffer", "www." + z + ".", "A", edns={"payload": 512, "do": True}, expect=NOERROR),
        Q(p + "cd-do", "www." + z + ".", "A", cd=True, edns=DO, expect=NOERROR),
    ]
    if z != "bind.test":
        # a wildcard that owns NS (sign.sh; dnssec-signzone refuses one): a referral from
        # "*.wns" with the DS proof at it and the proof that the name does not exist
        c += [
            Q(p + "wildns-a", "a.wns." + z + ".", "A", edns=DO, expect=REFERRAL),
            Q(p + "wildns-deep", "x.y.wns." + z + ".", "TXT", edns=DO, expect=REFERRAL),
            Q(p + "wildns-ds", "a.wns." + z + ".", "DS", edns=DO, expect=NODATA),
            Q(p + "wildns-literal", "*.wns." + z + ".", "A", edns=DO, expect=REFERRAL),
            Q(p + "wildns-literal-ds", "*.wns." + z + ".", "DS", edns=DO, expect=NODATA),
            Q(p + "wildns-nodo", "a.wns." + z + ".", "A", edns=NODO, expect=REFERRAL),
        ]
    if z == "nsec.test":
        # one with a DS: in the referral, owned by "*.wds"; a DS question expands it
        c += [
            Q(p + "wildds-a", "a.wds." + z + ".", "A", edns=DO, expect=REFERRAL),
            Q(p + "wildds-ds", "a.wds." + z + ".", "DS", edns=DO, expect=NOERROR),
            Q(p + "wildds-literal-ds", "*.wds." + z + ".", "DS", edns=DO, expect=NOERROR),
        ]
    if nsec3:
        c.append(Q(p + "apex-nsec3param", z + ".", "NSEC3PARAM", edns=DO, expect=NOERROR, anchor=a))
        c.append(Q(p + "apex-nsec3param-nodo", z + ".", "NSEC3PARAM", edns=NODO, expect=NOERROR))
    else:
        c += [
            Q(p + "child-ds", "child.nsec.test.", "DS", edns=DO, expect=NOERROR, anchor=a),
            Q(p + "child-ds-nodo", "child.nsec.test.", "DS", edns=NODO, expect=NOERROR),
            Q(p + "child-dnskey", "child.nsec.test.", "DNSKEY", edns=DO, expect=NOERROR, anchor=a),
            Q(p + "child-soa", "child.nsec.test.", "SOA", edns=DO, expect=NOERROR, anchor=a),
            Q(p + "child-www", "www.child.nsec.test.", "A", edns=DO, expect=NOERROR, anchor=a),
            Q(p + "child-nxdomain", "nope.child.nsec.test.", "A", edns=DO, expect=NXDOMAIN, anchor=a),
            Q(p + "child-nodata", "www.child.nsec.test.", "TXT", edns=DO, expect=NODATA, anchor=a),
        ]
    return c


for _z in ("nsec.test", "nsec3.test", "bind.test", "knot.test"):
    CORPUS += dnssec_cases(_z)
for _z in ("nsec", "nsec3", "bind", "knot"):
    ALLOW[_z + "-cd-do"] = "RFC 4035 section 3.2.2: CD is copied to the response (see cd-bit)"

# ---------------------------------------------------------------------------------------------


def make_query(case):
    name = case["name"]
    if isinstance(name, str):
        name = dns.name.from_text(name)           # keeps the case as written (0x20)
    q = dns.message.Message()
    q.flags = 0
    if case["rd"]:
        q.flags |= dns.flags.RD
    if case["cd"]:
        q.flags |= dns.flags.CD
    q.set_opcode(dns.opcode.from_text(case["opcode"]))
    q.find_rrset(q.question, name, dns.rdataclass.from_text(case["class"]),
                 dns.rdatatype.from_text(case["type"]), create=True, force_unique=True)
    e = case["edns"]
    if e is not None:
        opts = [dns.edns.GenericOption(c, d) for c, d in e.get("options", [])]
        if e.get("nsid"):
            opts.insert(0, dns.edns.GenericOption(NSID, b""))
        q.use_edns(edns=e.get("version", 0), ednsflags=dns.flags.DO if e.get("do") else 0,
                   payload=e.get("payload", 1232), options=opts)
    if case["tsig"]:
        q.use_tsig(UNKNOWN_KEY, algorithm=dns.tsig.HMAC_SHA256)
    return q


def exchange(wire, qid, addr, port, timeout, tries=2):
    """Send a UDP query, return the reply wire or None. Retries once on timeout."""
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    for _ in range(tries):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        try:
            s.connect((addr, port))
            s.send(wire)
            deadline = time.monotonic() + timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                s.settimeout(left)
                try:
                    data = s.recv(65535)
                except socket.timeout:
                    break
                except ConnectionRefusedError:
                    time.sleep(min(left, 0.2))      # ICMP port unreachable: nobody there yet
                    break
                if len(data) >= 2 and int.from_bytes(data[:2], "big") == qid:
                    return data
        finally:
            s.close()
    return None


def parse(wire):
    """Wire -> (message or None, error text or None). A TSIG is cut off and kept as
    message.p53_tsig (its decoded fields)."""
    if wire is None:
        return None, "no response"
    wire, tsig = split_tsig(wire)
    try:
        m = dns.message.from_wire(wire, one_rr_per_rrset=True)
        m.p53_tsig = tsig
        return m, None
    except dns.message.Truncated as e:
        return e.message(), None
    except Exception as e:                          # malformed reply: that is a difference too
        return None, "unparseable (%s: %s)" % (type(e).__name__, e)


def rrs(section, exact_case=False):
    """A section as a sorted list of (owner, type, class, TTL, rdata text).

    Owners are lowercased (a server may echo the question's case or the zone's). Rdata is
    compared lowercased too (RFC 4343: names compare case-insensitively; e.g. a DNAME-synthesised
    CNAME target may keep the query's case or not); case-only rdata differences are reported as
    notes, not failures.
    """
    out = []
    for rrset in section:
        for rd in rrset:
            text = rd.to_text()
            out.append((rrset.name.to_text().lower(), dns.rdatatype.to_text(rrset.rdtype),
                        dns.rdataclass.to_text(rrset.rdclass), rrset.ttl,
                        text if exact_case else text.lower()))
    return sorted(out)


FLAGS = [("QR", dns.flags.QR), ("AA", dns.flags.AA), ("TC", dns.flags.TC), ("RD", dns.flags.RD),
         ("RA", dns.flags.RA), ("AD", dns.flags.AD), ("CD", dns.flags.CD)]


def summary(m):
    """The comparable view of a reply: field -> value. 'notes' fields only report."""
    v = collections.OrderedDict()
    v["opcode"] = dns.opcode.to_text(m.opcode())
    v["rcode"] = dns.rcode.to_text(m.rcode())
    for n, bit in FLAGS:
        v["flag " + n] = bool(m.flags & bit)
    v["question"] = [(r.name.to_text(), dns.rdatatype.to_text(r.rdtype),
                      dns.rdataclass.to_text(r.rdclass)) for r in m.question]
    # TSIG: key, algorithm, time signed, fudge, MAC, original ID, error, other data
    v["tsig"] = getattr(m, "p53_tsig", None)
    v["edns present"] = m.edns >= 0
    if m.edns >= 0:
        v["edns version"] = m.edns
        v["edns DO"] = bool(m.ednsflags & dns.flags.DO)
        v["edns Z flags"] = m.ednsflags & 0x7FFF & ~dns.flags.DO & 0xFFFF
        v["edns options"] = sorted((int(o.otype), o.to_wire().hex()) for o in m.options)
        v["edns payload"] = m.payload
    if not (m.flags & dns.flags.TC):
        v["answer"] = rrs(m.answer)
        v["authority"] = rrs(m.authority)
        v["additional"] = rrs(m.additional)
        v["rdata case"] = [rrs(m.answer, True), rrs(m.authority, True), rrs(m.additional, True)]
    return v


LOOSE = {"edns payload", "rdata case"}        # reported, never a failure


def describe(x):
    if isinstance(x, str):
        return x
    if isinstance(x, list) and x and isinstance(x[0], tuple) and len(x[0]) == 5:
        return "\n        " + "\n        ".join(" ".join(str(f) for f in r) for r in x) if x else "(empty)"
    return repr(x)


def compare(case, o_wire, t_wire):
    """Return (differences, notes): lists of (field, oracle, target)."""
    diffs, notes = [], []
    om, oerr = parse(o_wire)
    tm, terr = parse(t_wire)
    if oerr or terr:
        if oerr != terr:
            diffs.append(("response", oerr or "ok", terr or "ok"))
        return diffs, notes, om
    ov, tv = summary(om), summary(tm)
    if om.flags & dns.flags.TC or tm.flags & dns.flags.TC:
        for sec in ("answer", "authority", "additional", "rdata case"):       # TC=1: sections may differ
            ov.pop(sec, None)
            tv.pop(sec, None)
    for k in list(ov.keys()) + [k for k in tv if k not in ov]:
        a, b = ov.get(k, "(absent)"), tv.get(k, "(absent)")
        if a == b:
            continue
        if k in ("answer", "authority", "additional"):
            ca, cb = collections.Counter(a), collections.Counter(b)
            missing = sorted((ca - cb).elements())
            extra = sorted((cb - ca).elements())
            diffs.append((k, missing, extra))
        elif k == "rdata case":
            if ov.get("answer") == tv.get("answer") and ov.get("authority") == tv.get("authority") \
                    and ov.get("additional") == tv.get("additional"):
                fa = set(sum(a, [])) - set(sum(b, []))
                fb = set(sum(b, [])) - set(sum(a, []))
                notes.append((k, describe(sorted(fa)), describe(sorted(fb))))
        elif k in LOOSE:
            notes.append((k, a, b))
        else:
            diffs.append((k, a, b))
    return diffs, notes, om


DELV_STATUS = re.compile(r"^;;? ?(fully validated|negative response, fully validated|unsigned answer|"
                         r"negative response, unsigned answer|resolution failed: .*|"
                         r"validation failed.*|.*insecure.*|.*broken trust chain.*)$")


def validate(case, addr, port, anchors, timeout):
    """delv's verdict (RFC 4035 section 5 validation against the zone's trust anchor) on the
    answer `addr` gives for the case's name and type: its status lines, joined."""
    name = case["name"] if isinstance(case["name"], str) else case["name"].to_text()
    cmd = ["delv", "@" + addr, "-p", str(port), "-a", anchors, "+root=" + case["anchor"],
           "+nosplit", "+nottl", name, case["type"]]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout * 5)
    except subprocess.TimeoutExpired:
        return "delv timed out"
    lines = [l.strip() for l in (out.stdout + out.stderr).splitlines() if DELV_STATUS.match(l.strip())]
    return " / ".join(lines) if lines else "no verdict (rc %d)" % out.returncode


def check_expect(case, om):
    exp = case["expect"]
    if not exp or om is None:
        return []
    bad = []
    if "rcode" in exp and dns.rcode.to_text(om.rcode()) != exp["rcode"]:
        bad.append("rcode %s, expected %s" % (dns.rcode.to_text(om.rcode()), exp["rcode"]))
    if "aa" in exp and bool(om.flags & dns.flags.AA) != exp["aa"]:
        bad.append("AA=%d, expected %d" % (bool(om.flags & dns.flags.AA), exp["aa"]))
    if "tc" in exp and bool(om.flags & dns.flags.TC) != exp["tc"]:
        bad.append("TC=%d, expected %d" % (bool(om.flags & dns.flags.TC), exp["tc"]))
    if "answer" in exp and not (om.flags & dns.flags.TC) and bool(om.answer) != exp["answer"]:
        bad.append("answer %s, expected %s" % ("non-empty" if om.answer else "empty",
                                               "non-empty" if exp["answer"] else "empty"))
    return bad


def qtext(case):
    n = case["name"] if isinstance(case["name"], str) else case["name"].to_text()
    if len(n) > 60:
        n = n[:24] + "..." + n[-30:]
    bits = [n, case["class"], case["type"]]
    if case["opcode"] != "QUERY":
        bits.append("opcode=" + case["opcode"])
    e = case["edns"]
    if e is None:
        bits.append("noedns")
    else:
        bits.append("edns=%d" % e.get("payload", 1232))
        if e.get("version"):
            bits.append("ednsver=%d" % e["version"])
        if e.get("do"):
            bits.append("+do")
        if e.get("nsid"):
            bits.append("+nsid")
        for c, _ in e.get("options", []):
            bits.append("+opt%d" % c)
    if case["tsig"]:
        bits.append("+tsig(unknown key)")
    if case["mangle"]:
        bits.append("mangled:" + case["mangle"].__name__)
    if case["rd"]:
        bits.append("+rd")
    if case["cd"]:
        bits.append("+cd")
    bits.append("v6" if case["v6"] else "v4")
    return " ".join(bits)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oracle", default="127.0.0.1")
    ap.add_argument("--oracle6", default="::1")
    ap.add_argument("--oracle-port", type=int, default=5300)
    ap.add_argument("--target", default="192.0.2.53")
    ap.add_argument("--target6", default="2001:db8:53::53")
    ap.add_argument("--target-port", type=int, default=53)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--only", action="append", default=[],
                    help="run only cases whose label contains this (repeatable)")
    ap.add_argument("--list", action="store_true", help="print the corpus and exit")
    ap.add_argument("--dump", action="store_true", help="print both replies for every case")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    ap.add_argument("--anchors", default=None,
                    help="delv trust anchors (sign.sh's anchors.conf): validate DNSSEC cases")
    ap.add_argument("--rounds", type=int, default=1,
                    help="ask the corpus this many times (pop53's answer cache: the rounds after "
                         "the first are answered from it; delv validates in the first only)")
    args = ap.parse_args()

    labels = [c["label"] for c in CORPUS]
    dup = [l for l, n in collections.Counter(labels).items() if n > 1]
    assert not dup, "duplicate labels: %s" % dup
    unknown = [l for l in ALLOW if l not in labels]
    for l in unknown:
        print("WARNING: allow-list label %r is not in the corpus" % l)

    cases = [c for c in CORPUS if not args.only or any(s in c["label"] for s in args.only)]
    if args.list:
        for c in cases:
            print("%-28s %s" % (c["label"], qtext(c)))
        return 0

    passed = failed = explained = validated = 0
    warnings = []
    for rnd, case in ((r, c) for r in range(args.rounds) for c in cases):
        q = make_query(case)
        wire = q.to_wire()
        if case["mangle"]:
            wire = case["mangle"](wire)
        if case["v6"]:
            o = exchange(wire, q.id, args.oracle6, args.oracle_port, args.timeout)
            t = exchange(wire, q.id, args.target6, args.target_port, args.timeout)
        else:
            o = exchange(wire, q.id, args.oracle, args.oracle_port, args.timeout)
            t = exchange(wire, q.id, args.target, args.target_port, args.timeout)
        diffs, notes, om = compare(case, o, t)
        if rnd == 0 and args.anchors and case["anchor"] and shutil.which("delv"):
            # "Validates", not only "looks the same": delv fetches the DNSKEYs and DS itself
            # and validates each server's answer for this name and type; the verdicts must
            # agree, and the target's must never be a validation failure.
            ov = validate(case, args.oracle, args.oracle_port, args.anchors, args.timeout)
            tv = validate(case, args.target, args.target_port, args.anchors, args.timeout)
            validated += "fully validated" in tv
            if ov != tv:
                diffs.append(("delv verdict", ov, tv))
            elif "fully validated" not in tv and "unsigned answer" not in tv:
                diffs.append(("delv verdict (both)", ov, tv))
        if o is None:
            warnings.append("CORPUS %s: the oracle did not answer" % case["label"])
        for w in check_expect(case, om):
            warnings.append("CORPUS %s: oracle gave %s" % (case["label"], w))
        lab = case["label"]
        if diffs and lab in ALLOW:
            explained += 1
            passed += 1
            print("XFAIL %-28s %s  (allow-listed: %s)" % (lab, qtext(case), ALLOW[lab]))
        elif diffs:
            failed += 1
            print("FAIL  %-28s %s" % (lab, qtext(case)))
        else:
            passed += 1
            if lab in ALLOW:
                print("NOTE  allow-list entry %r no longer needed: no difference" % lab)
            if not args.quiet:
                print("PASS  %-28s %s" % (lab, qtext(case)))
        for field, a, b in diffs:
            if field in ("answer", "authority", "additional"):
                print("    %s | %s section differs" % (qtext(case), field))
                for who, rows in (("only in oracle", a), ("only in target", b)):
                    for r in rows:
                        print("        %s: %s" % (who, " ".join(str(f) for f in r)))
            else:
                print("    %s | %s | oracle: %s | target: %s" % (qtext(case), field, describe(a), describe(b)))
        for field, a, b in notes:
            print("    note: %s | %s | oracle: %s | target: %s (not a failure)" % (lab, field, a, b))
        if args.dump:
            for who, w in (("oracle", o), ("target", t)):
                m, err = parse(w)
                print("  --- %s (%s octets)" % (who, len(w) if w else 0))
                print("    " + (err or m.to_text()).replace("\n", "\n    "))
    for w in warnings:
        print(w)
    if explained:
        print("(%d of the passes are allow-listed differences)" % explained)
    if args.anchors:
        print("delv: %d target answers fully validated" % validated)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
