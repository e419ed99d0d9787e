#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/<target>.in/). Run once; the files
are committed. Existing files are left as they are, so seeds that found something stay.

  fuzz_answer.in  DNS queries for every lookup case of the differential zones, with and without
                  EDNS and options, and the same as full frames (Ethernet, 802.1Q, IPv4, IPv6);
                  the hardening cases (h-*.bin), one per defect fixed
  fuzz_dnsmsg.in  the queries above, the hostile cases of tests/integration/hostile.py, and
                  queries with COOKIE and ECS options
  fuzz_ecs.in     ECS option data, valid and each defect of RFC 7871 §6
  fuzz_cookie.in  COOKIE option data of every length class, and one server cookie that
                  fuzz_cookie.c's fixed secret and clock accept
  fuzz_zone.in    master files for fuzz.test.: every record type and case the compiler knows,
                  and broken ones
  fuzz_xfr.in     record streams as a transfer leaves them (uncompressed wire, one record
                  after another): the repository's zones (signed ones too) moved to fuzz.test.,
                  in mixed case, and records the wire reader must leave to ldns

fuzz_burst.in is written by make_corpus_burst.py (no dnspython needed).
"""
import os
import struct
import sys

import dns.edns
import dns.exception
import dns.message

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from pcap_tool import frame  # noqa: E402
import hostile  # noqa: E402


def put(target, name, data):
    d = os.path.join(HERE, target + ".in")
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, name)
    if not os.path.exists(p):
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())


QS = [("www.diff.test.", "A"), ("chain1.diff.test.", "A"), ("loop-a.diff.test.", "A"),
      ("x.wild.diff.test.", "TXT"), ("host.dname.diff.test.", "A"), ("host.sub.diff.test.", "A"),
      ("sub.diff.test.", "DS"), ("nope.diff.test.", "A"), ("ent.diff.test.", "A"),
      ("big.diff.test.", "A"), ("diff.test.", "ANY"), ("diff.test.", "MX"), ("id.server.", "TXT"),
      ("example.org.", "A"), ("svc.diff.test.", "SVCB"),
      ("x.many.second.test.", "A"), ("x.sib.second.test.", "A")]   # RFC 9471 glue, TC or not

for i, (name, t) in enumerate(QS):
    variants = [
        dns.message.make_query(name, t, use_edns=False),
        dns.message.make_query(name, t, use_edns=0, payload=4096, want_dnssec=True),
        dns.message.make_query(name, t, use_edns=0, options=[
            dns.edns.GenericOption(3, b""), dns.edns.ECSOption("192.0.2.0", 24)]),
    ]
    if name.startswith("id.server"):
        variants = [dns.message.make_query(name, t, rdclass="CH")]
    for j, q in enumerate(variants):
        q.id = 0x1000 + i * 4 + j
        wire = q.to_wire()
        put("fuzz_answer", f"q{i:02d}-{j}.bin", wire)
        put("fuzz_dnsmsg", f"q{i:02d}-{j}.bin", wire)
        if j == 1:
            put("fuzz_answer", f"f{i:02d}-v4.bin", frame(wire))
            put("fuzz_answer", f"f{i:02d}-v6vlan.bin", frame(wire, v6=True, vlan=7))


# Hardening cases (issue 8), one file each, named for what they exercise.
def udp_off(fr):
    off = 14 + (4 if fr[12:14] == b"\x81\x00" else 0)
    return off + (40 if fr[off - 2:off] == b"\x86\xdd" else 20)


def with_udp_csum(fr, value):
    u = udp_off(fr)
    return fr[:u + 6] + struct.pack("!H", value) + fr[u + 8:]


def flip(fr, at, mask):
    return fr[:at] + bytes([fr[at] ^ mask]) + fr[at + 1:]


www = dns.message.make_query("www.diff.test.", "A", use_edns=0)
www.id = 0x2000
w = www.to_wire()
HARD = {
    # a flipped bit in the question: the checksum no longer matches (dropped udp_csum)
    "h-udp-csum-bad-v4": flip(frame(w), udp_off(frame(w)) + 8 + 13, 0x20),  # "www" -> "Www"
    # IPv6 UDP checksum 0 (RFC 8200 section 8.1: dropped udp_csum)
    "h-udp-csum-zero-v6": with_udp_csum(frame(w, v6=True), 0),
    # IPv4 UDP checksum 0: none computed (RFC 768), answered
    "h-udp-csum-zero-v4": with_udp_csum(frame(w), 0),
    # not addressed to us (dropped dst_mac / dst_addr on ports other than af_xdp)
    "h-dst-mac-broadcast": frame(w, dmac=b"\xff" * 6),
    "h-dst-addr-other-v6": frame(w, v6=True, dst=bytes.fromhex("20010db8005300000000000000000054")),
}
# malformed non-QUERY messages: FORMERR, header and question consistent with QDCOUNT
CUT_RR = bytes.fromhex("c00c000100010000003c0004c000")    # claims 4 bytes of RDATA, has 2
soa_q = dns.message.make_query("diff.test.", "SOA").to_wire()[12:]
HARD["h-update-cut-rr"] = bytes.fromhex("30002800000100000001" "0000") + soa_q + CUT_RR
HARD["h-notify-cut-rr"] = bytes.fromhex("30012000000100010000" "0000") + soa_q + CUT_RR
# TSIG (RFC 8945): signed with a key nobody knows (BADKEY), two TSIGs. Built by hand with a
# fixed time and MAC, so the files do not change from run to run.
TSIG = (b"\x07unknown\x00" + bytes.fromhex("00fa00ff000000000021") + b"\x0bhmac-sha256\x00"
        + bytes.fromhex("00006b0dfe28012c0004deadbeef30020000") + b"\x00\x00")


def signed(wire, n=1):
    ar = int.from_bytes(wire[10:12], "big") + n
    return wire[:10] + ar.to_bytes(2, "big") + wire[12:] + TSIG * n


sq = dns.message.make_query("www.diff.test.", "A", use_edns=0)
sq.id = 0x3002
HARD["h-tsig-unknown-key"] = signed(sq.to_wire())
HARD["h-tsig-twice"] = signed(sq.to_wire(), 2)
HARD["h-tsig-frame"] = frame(signed(sq.to_wire()))
# the deepest names: 120 labels under diff.test (NXDOMAIN), 127 under no zone (REFUSED)
deep_nx = dns.name.from_text(".".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(118)) + ".diff.test.")
deep_ref = dns.name.from_text(".".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(127)) + ".")
for label, nm in (("h-deep-nx", deep_nx), ("h-deep-refused", deep_ref)):
    m = dns.message.make_query(nm, "A", use_edns=0)
    m.id = 0x4000
    HARD[label] = m.to_wire()
for name, data in HARD.items():
    put("fuzz_answer", name + ".bin", data)

# Cookies and RRL in fuzz_answer: a client cookie, a client + server cookie.
for j, ck in enumerate([bytes(range(8)), bytes(range(24))]):
    q = dns.message.make_query("www.diff.test.", "A", use_edns=0,
                               options=[dns.edns.GenericOption(10, ck)])
    q.id = 0x2000 + j
    put("fuzz_answer", f"cookie{j}.bin", q.to_wire())
    put("fuzz_dnsmsg", f"cookie{j}.bin", q.to_wire())

for k, (name, msg, _) in enumerate(hostile.CASES):
    put("fuzz_dnsmsg", f"hostile{k:02d}.bin", msg)
    put("fuzz_answer", f"hostile{k:02d}.bin", msg)

ECS = [b"\x00\x01\x18\x00\xc0\x00\x02", b"\x00\x01\x20\x00\xc0\x00\x02\x01", b"\x00\x01\x00\x00",
       b"\x00\x02\x38\x00\x20\x01\x0d\xb8\x00\x00\x12", b"\x00\x02\x80\x00" + bytes(16),
       b"\x00\x01\x14\x00\x0a\x01\xf0", b"\x00\x00\x00\x00", b"\x00\x03\x08\x00\x0a",
       b"\x00\x01\x21\x00\x01\x02\x03\x04\x05", b"\x00\x01\x18\x18\xc0\x00\x02",
       b"\x00\x01\x18\x00\xc0\x00\x02\x00", b"\x00\x01\x14\x00\x0a\x01\xf8", b"\x00\x01\x18"]
for k, d in enumerate(ECS):
    put("fuzz_ecs", f"ecs{k:02d}.bin", d)


# SipHash-2-4 (for one valid server cookie in the cookie corpus).
def siphash24(key, msg):
    M = (1 << 64) - 1
    rotl = lambda x, b: ((x << b) | (x >> (64 - b))) & M
    k0, k1 = struct.unpack("<QQ", key)
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rnd():
        v[0] = (v[0] + v[1]) & M; v[1] = rotl(v[1], 13); v[1] ^= v[0]; v[0] = rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & M; v[3] = rotl(v[3], 16); v[3] ^= v[2]
        v[0] = (v[0] + v[3]) & M; v[3] = rotl(v[3], 21); v[3] ^= v[0]
        v[2] = (v[2] + v[1]) & M; v[1] = rotl(v[1], 17); v[1] ^= v[2]; v[2] = rotl(v[2], 32)
    full = len(msg) & ~7
    for i in range(0, full, 8):
        m = struct.unpack("<Q", msg[i:i + 8])[0]
        v[3] ^= m; rnd(); rnd(); v[0] ^= m
    b = (len(msg) & 0xFF) << 56
    for i, c in enumerate(msg[full:]):
        b |= c << (8 * i)
    v[3] ^= b; rnd(); rnd(); v[0] ^= b
    v[2] ^= 0xFF
    for _ in range(4):
        rnd()
    return struct.pack("<Q", v[0] ^ v[1] ^ v[2] ^ v[3])


assert siphash24(bytes(range(16)), bytes(range(15))) == struct.pack("<Q", 0xA129CA6149BE45E5)
for n in (0, 7, 8, 12, 16, 24, 40, 41):
    put("fuzz_cookie", f"len{n:02d}.bin", bytes((i * 37) & 0xFF for i in range(n)))
# fuzz_cookie.c: secret 0x11 * 16, IPv4 address 20.01.0d.b8 for a 24-byte option, clock
# 1700000000 + last byte * 97. Find a timestamp whose cookie's last byte puts the clock inside
# the cookie's hour.
client = bytes(range(1, 9))
for ts in range(1700000000, 1700030000, 7):
    head = bytes([1, 0, 0, 0]) + struct.pack("!I", ts)
    h = siphash24(bytes([0x11] * 16), client + head + bytes([0x20, 0x01, 0x0D, 0xB8]))
    now = 1700000000 + h[-1] * 97
    if -300 <= now - ts <= 3600:
        put("fuzz_cookie", "valid.bin", client + head + h)
        break

ZONE = """$ORIGIN fuzz.test.
$TTL 300
@       IN SOA ns1 hostmaster 2024010101 3600 900 604800 300
@       IN NS  ns1
@       IN NS  ns2.example.net.
@       IN MX  10 mail
@       IN TXT "v=spf1 -all"
ns1     IN A   192.0.2.53
ns1     IN AAAA 2001:db8::53
www     IN A   192.0.2.80
www     IN AAAA 2001:db8::80
mail    IN A   192.0.2.25
alias   IN CNAME www
*       IN A   192.0.2.99
a.b     IN TXT "empty non-terminal above"
old     IN DNAME new.fuzz.test.
sub     IN NS  ns.sub
ns.sub  IN A   192.0.2.54
_sip._udp IN SRV 10 5 5060 www
"""
put("fuzz_zone", "full.zone", ZONE)
put("fuzz_zone", "minimal.zone", "fuzz.test. 300 IN SOA a. b. 1 2 3 4 5\n")
put("fuzz_zone", "no-soa.zone", "www.fuzz.test. 300 IN A 192.0.2.1\n")
put("fuzz_zone", "two-soa.zone", "@ 300 IN SOA a. b. 1 2 3 4 5\n@ 300 IN SOA a. b. 2 2 3 4 5\n")
put("fuzz_zone", "cname-and-data.zone", ZONE + "alias IN A 192.0.2.7\n")
put("fuzz_zone", "below-dname.zone", ZONE + "x.old IN A 192.0.2.7\n")
put("fuzz_zone", "out-of-zone.zone", ZONE + "www.example.org. IN A 192.0.2.7\n")
put("fuzz_zone", "include.zone", ZONE + "$INCLUDE /nonexistent/file.zone\n")
put("fuzz_zone", "syntax.zone", ZONE + "www IN A 300.1.2.3\n")
put("fuzz_zone", "escapes.zone", ZONE + "w\\046x IN A 192.0.2.8\n\\# IN TXT \"\\000\"\n")
put("fuzz_zone", "generic.zone", ZONE + "gen IN TYPE65280 \\# 4 01020304\n")
# The fast scanner's edges (control/zone/zone_scan.c): what it takes and what it must leave to
# ldns; fuzz_zone compiles each input both ways and compares.
FAST = (
    "$ORIGIN fuzz.test.\n$TTL 0\n@ 300 IN SOA ns1 hm 1 2 3 4 5\n@\tIN\tNS\tNS1\n"
    "ns1 A 192.0.2.1 ; comment\n\t\tAAAA 2001:DB8::1\n  ; only a comment\n\n"
    "Host 0300 in a 192.0.2.2\nhost.fuzz.test. MX 10 @\nhost MX 65535 Mail.Fuzz.Test.\n"
    "t TXT \"a  b\"\t\"c;d\"\nt TXT x\nt TXT \"e\\\"f\"\n"
    "c CNAME host\nc2 300 CNAME c.\np PTR host.other.\n$TTL 60\nlate A 192.0.2.3\n"
    "long 1h A 192.0.2.5\nw\\. A 192.0.2.6\n*.w A 192.0.2.7\n"
    "$ORIGIN sub.fuzz.test.\nx A 192.0.2.8\n@ NS ns1\n A 10.0.0.1\n"
    "last A 192.0.2.10"
)
FAST_BAD = ["e..x A 192.0.2.4\n", "host MX 65536 mail\n", "r A 192.0.2.7\r\n", " A 010.0.0.1\n",
            "q IN 300 A 192.0.2.9\n", "t TXT \"\"\n", "x A 1.2.3.4 5\n", "y AAAA 1.2.3.4\n"]
put("fuzz_zone", "fast-scanner.zone", FAST)
# ldns keeps or swallows a \r after a blank line depending on where its last read stopped:
# such files go to ldns whole (control/zone/zone_load.c, odd_bytes).
put("fuzz_zone", "fast-scanner-cr-after-blank.zone", "@ 300 IN SOA ns1 hm 1 2 3 4 5\n  ; c\n\n\rost 0300 in a 192.0.2.2\n")
for i, line in enumerate(FAST_BAD):
    put("fuzz_zone", "fast-scanner-bad%d.zone" % i, FAST + "\n" + line)


# fuzz_xfr: zones as a transfer hands them to the compiler (control/xfr/rrs.h).
def xfr_stream(text, origin, mixed=False):
    """The zone's records as uncompressed wire, SOA first, owners moved from origin to fuzz.test.;
    mixed: upper-case letters in owners and in the names of NS CNAME PTR MX DNAME RDATA."""
    import dns.name
    import dns.zone
    org = dns.name.from_text(origin)
    target = dns.name.from_text("fuzz.test.")
    soa, rest = [], []
    z = dns.zone.from_text(text, origin=origin, relativize=False, check_origin=False)
    for owner, rds in z.iterate_rdatasets():
        if owner.is_subdomain(org):
            owner = owner.relativize(org).derelativize(target)
        for rd in rds:
            w, rdw = owner.to_wire(), rd.to_wire()
            if mixed:
                w = bytes(c ^ 0x20 if 0x61 <= c <= 0x7a and i % 2 else c for i, c in enumerate(w))
                if rds.rdtype in (2, 5, 12, 15, 39):
                    rdw = bytes(c ^ 0x20 if 0x61 <= c <= 0x7a and i % 3 == 0 else c
                                for i, c in enumerate(rdw))
            rr = w + struct.pack(">HHIH", rds.rdtype, 1, rds.ttl, len(rdw)) + rdw
            (soa if rds.rdtype == 6 else rest).append(rr)
    return b"".join(soa + rest)


def zone_text(path):
    with open(path) as f:
        return f.read()


ROOT = os.path.join(HERE, "..", "..")
XFR_ZONES = [("example-com", os.path.join(ROOT, "zones", "example.com.zone"), "example.com."),
             ("signed-example-com", os.path.join(ROOT, "tests", "unit", "control", "zones", "example.com.zone"), "example.com."),
             ("nsec", os.path.join(ROOT, "tests", "unit", "dataplane", "zones", "nsec.test.zone"), "nsec.test."),
             ("tc", os.path.join(ROOT, "tests", "integration", "zones", "tc.test.zone"), "tc.test."),
             ("large", os.path.join(ROOT, "tests", "integration", "zones", "large.test.zone"), "large.test.")]
for tag, path, origin in XFR_ZONES:
    text = zone_text(path)
    try:
        xfr_stream(text, origin)
    except dns.exception.DNSException as e:  # dnspython refuses what pop53 may take
        print("fuzz_xfr: %s left out: %s" % (path, e))
        continue
    put("fuzz_xfr", tag + ".rrs", xfr_stream(text, origin))
    put("fuzz_xfr", tag + "-mixed-case.rrs", xfr_stream(text, origin, mixed=True))
full = xfr_stream(ZONE, "fuzz.test.")
put("fuzz_xfr", "full.rrs", full)
put("fuzz_xfr", "full-mixed-case.rrs", xfr_stream(ZONE, "fuzz.test.", mixed=True))
# Records the wire reader declines (wrong RDATA sizes, compression pointers, trailing bytes,
# other classes), each after the full zone so the rest compiles.
APEX = b"\x04fuzz\x04test\x00"
WWW = b"\x03www" + APEX
EDGE = {
    "a-short": WWW + struct.pack(">HHIH", 1, 1, 300, 3) + b"\x01\x02\x03",
    "a-empty": WWW + struct.pack(">HHIH", 1, 1, 300, 0),
    "aaaa-long": WWW + struct.pack(">HHIH", 28, 1, 300, 17) + bytes(17),
    "ns-pointer": APEX + struct.pack(">HHIH", 2, 1, 300, 2) + b"\xc0\x00",
    "ns-trailing": APEX + struct.pack(">HHIH", 2, 1, 300, 4) + b"\x01a\x00\x00",
    "mx-short": APEX + struct.pack(">HHIH", 15, 1, 300, 1) + b"\x00",
    "txt-empty": WWW + struct.pack(">HHIH", 16, 1, 300, 0),
    "txt-overrun": WWW + struct.pack(">HHIH", 16, 1, 300, 2) + b"\x05a",
    "rrsig-no-sig": WWW + struct.pack(">HHIH", 46, 1, 300, 18 + len(APEX)) + bytes(18) + APEX,
    "rrsig": WWW + struct.pack(">HHIH", 46, 1, 300, 18 + len(APEX) + 4) + bytes(18) + b"\x04FUZZ\x04test\x00" + b"sig!",
    "srv-upper": b"\x04_sip\x04_udp" + APEX + struct.pack(">HHIH", 33, 1, 300, 6 + len(WWW)) + b"\x00\x01\x00\x02\x13\xc4" + WWW.upper(),
    "soa-upper": APEX + struct.pack(">HHIH", 6, 1, 300, 2 * len(APEX) + 20) + APEX.upper() + APEX + bytes(20),
    "class-ch": WWW + struct.pack(">HHIH", 1, 3, 300, 4) + b"\x01\x02\x03\x04",
    "owner-pointer": b"\xc0\x00" + struct.pack(">HHIH", 1, 1, 300, 4) + b"\x01\x02\x03\x04",
    "dname-upper": b"\x03OLD" + APEX + struct.pack(">HHIH", 39, 1, 300, len(WWW)) + WWW.upper(),
    "rrsig-alone": b"\x05alone" + APEX + struct.pack(">HHIH", 46, 1, 300, 18 + len(APEX) + 4) + b"\x00\x01" + bytes(16) + APEX + b"sig!",
    "generic": WWW + struct.pack(">HHIH", 65280, 1, 300, 3) + b"abc",
    "truncated": WWW + struct.pack(">HHIH", 1, 1, 300, 4) + b"\x01",
}
for tag, rr in EDGE.items():
    put("fuzz_xfr", "edge-" + tag + ".rrs", full + rr)


# Transfer messages (names compressed, as primaries send them): fuzz_xfr also takes an input
# that parses as a message as the transfer client does.
def axfr_message(text, origin, qtype="AXFR"):
    import dns.zone
    org = dns.name.from_text(origin)
    target = dns.name.from_text("fuzz.test.")
    z = dns.zone.from_text(text, origin=origin, relativize=False, check_origin=False)
    q = dns.message.make_query(target, qtype)
    r = dns.message.make_response(q)
    soa = None
    for owner, rds in z.iterate_rdatasets():
        if owner.is_subdomain(org):
            owner = owner.relativize(org).derelativize(target)
        rrset = r.find_rrset(r.answer, owner, rds.rdclass, rds.rdtype, create=True)
        rrset.update(rds)
        if rds.rdtype == 6:
            soa = rrset
    r.answer.remove(soa)
    r.answer.insert(0, soa)
    return r.to_wire()


import dns.name  # noqa: E402
import dns.message  # noqa: E402
put("fuzz_xfr", "msg-axfr-full.bin", axfr_message(ZONE, "fuzz.test."))
put("fuzz_xfr", "msg-axfr-example-com.bin", axfr_message(zone_text(os.path.join(ROOT, "zones", "example.com.zone")), "example.com."))
print("corpora written under", HERE)
