#!/usr/bin/python3
"""Hostile DNS messages for tests/integration/hostile.sh: one case per defect, each with the
response RFC says to give (an RCODE, or None for a counted silent drop), and after each a
normal query that must still be answered.

  hostile.py list                 the case names, one per line
  hostile.py run SERVER NAME      send the case, check the response, then check that
                                  www.example.com A is answered; exit 0 when both hold
"""
import socket
import struct
import sys

import dns.message
import dns.rcode

FORMERR, NOTIMP, NOTAUTH, REFUSED, BADVERS, NOERROR, NXDOMAIN = 1, 4, 9, 5, 16, 0, 3


def hdr(flags=0x0100, qd=1, an=0, ns=0, ar=0, qid=0x4242):
    return struct.pack("!HHHHHH", qid, flags, qd, an, ns, ar)


QNAME = b"\x03www\x07example\x03com\x00"
Q = QNAME + b"\x00\x01\x00\x01"
QOFF_END = 12 + len(Q)                       # where a record after the question starts


def opt(version=0, do=False, rdata=b""):
    return b"\x00" + struct.pack("!HHBBHH", 41, 1232, 0, version, 0x8000 if do else 0, len(rdata)) + rdata


def a_rr(owner):
    return owner + struct.pack("!HHIH", 1, 1, 0, 4) + b"\x01\x02\x03\x04"


CASES = [
    # (name, message, expected RCODE or None for a drop)
    ("empty UDP payload", b"", None),
] + [(f"{n}-byte message", (hdr() + Q)[:n], None if n < 12 else FORMERR) for n in range(1, 17)] + [
    ("header only, QDCOUNT 0", hdr(qd=0), FORMERR),
    ("QR=1 (a response)", hdr(flags=0x8100) + Q, None),
    ("question pointing at itself", hdr() + b"\xc0\x0c\x00\x01\x00\x01", FORMERR),
    ("question pointing forward", hdr() + b"\xc0\x10\x00\x01\x00\x01\x00", FORMERR),
    ("question pointing into the header", hdr() + b"\xc0\x02\x00\x01\x00\x01", FORMERR),
    ("question pointing past the end", hdr() + b"\xc0\xff\x00\x01\x00\x01", FORMERR),
    ("label type 0x40 in the question", hdr() + b"\x41a\x00\x00\x01\x00\x01", FORMERR),
    ("label type 0x80 in the question", hdr() + b"\x81a\x00\x00\x01\x00\x01", FORMERR),
    ("record owner pointing at itself", hdr(ar=1) + Q + a_rr(struct.pack("!H", 0xC000 | QOFF_END)), FORMERR),
    ("record owner looping", hdr(ar=1) + Q + a_rr(b"\x01a" + struct.pack("!H", 0xC000 | QOFF_END)), FORMERR),
    ("record owner pointing forward", hdr(ar=1) + Q + a_rr(struct.pack("!H", 0xC000 | (QOFF_END + 8))), FORMERR),
    ("record owner pointing into the header", hdr(ar=1) + Q + a_rr(b"\xc0\x04"), FORMERR),
    ("record owner pointing past the end", hdr(ar=1) + Q + a_rr(b"\xff\xff"), FORMERR),
    ("record owner with label type 0x40", hdr(ar=1) + Q + a_rr(b"\x41a\x00"), FORMERR),
    ("record owner with label type 0x80", hdr(ar=1) + Q + a_rr(b"\x80\x00"), FORMERR),
    ("RDLENGTH past the end", hdr(ar=1) + Q + b"\x00" + struct.pack("!HHIH", 1, 1, 0, 200) + b"\x01\x02", FORMERR),
    ("option longer than the OPT RDATA", hdr(ar=1) + Q + opt(rdata=b"\x00\x03\x00\x09\x01"), FORMERR),
    ("half an option header", hdr(ar=1) + Q + opt(rdata=b"\x00\x03"), FORMERR),
    ("EDNS version 1, DO, an unknown option", hdr(ar=1) + Q + opt(1, True, b"\xfe\xed\x00\x02\x09\x09"), BADVERS),
    ("opcode 15", hdr(flags=0x7900) + Q, NOTIMP),
    ("opcode UPDATE", hdr(flags=0x2800, qd=1) + QNAME[4:] + b"\x00\x06\x00\x01", NOTIMP),
    ("AXFR over UDP", hdr() + QNAME + b"\x00\xfc\x00\x01", NOTIMP),
    ("IXFR over UDP", hdr() + QNAME + b"\x00\xfb\x00\x01", NOTAUTH),
    ("TKEY over UDP", hdr() + QNAME + b"\x00\xf9\x00\x01", NOERROR),
    ("NUL byte inside a label", hdr() + b"\x03a\x00b\x07example\x03com\x00\x00\x01\x00\x01", NXDOMAIN),
    ("COOKIE of 7 bytes", hdr(ar=1) + Q + opt(rdata=b"\x00\x0a\x00\x07" + bytes(7)), FORMERR),
    ("COOKIE of 41 bytes", hdr(ar=1) + Q + opt(rdata=b"\x00\x0a\x00\x29" + bytes(41)), FORMERR),
    ("ECS with FAMILY 3", hdr(ar=1) + Q + opt(rdata=b"\x00\x08\x00\x05\x00\x03\x08\x00\x0a"), FORMERR),
    ("ECS with a non-zero SCOPE", hdr(ar=1) + Q + opt(rdata=b"\x00\x08\x00\x07\x00\x01\x18\x18\xc0\x00\x02"), FORMERR),
    ("QDCOUNT 2", hdr(qd=2) + Q + Q, FORMERR),
    ("ANCOUNT 65535", hdr(an=0xFFFF) + Q, FORMERR),
    ("class HS", hdr() + QNAME + b"\x00\x01\x00\x04", REFUSED),
    ("trailing garbage after the question", hdr() + Q + b"\xde\xad\xbe\xef", NOERROR),
]


def rcode_of(wire):
    rc = wire[3] & 0xF
    try:
        m = dns.message.from_wire(wire)
        return m.rcode()
    except Exception:
        return rc


def send(server, msg, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    s.sendto(msg, (server, 53))
    try:
        return s.recvfrom(4096)[0]
    except socket.timeout:
        return None


def run(server, name):
    case = [c for c in CASES if c[0] == name][0]
    _, msg, want = case
    r = send(server, msg, 0.5 if want is None else 2.0)
    if want is None:
        ok = r is None
        got = "no response" if r is None else f"a response (RCODE {rcode_of(r)})"
    else:
        got = "no response" if r is None else f"RCODE {rcode_of(r)}"
        ok = r is not None and rcode_of(r) == want and r[:2] == msg[:2] and r[2] & 0x80
    q = dns.message.make_query("www.example.com.", "A")
    r2 = send(server, q.to_wire(), 2.0)
    after = r2 is not None and dns.message.from_wire(r2).rcode() == 0 and len(dns.message.from_wire(r2).answer) > 0
    print(f"{name}: want {'a drop' if want is None else 'RCODE ' + str(want)}, got {got}; "
          f"normal query after it {'answered' if after else 'NOT answered'}")
    return 0 if ok and after else 1


if __name__ == "__main__":
    if sys.argv[1] == "list":
        for c in CASES:
            print(c[0])
    else:
        sys.exit(run(sys.argv[2], sys.argv[3]))
