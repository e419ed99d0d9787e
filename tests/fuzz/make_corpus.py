#!/usr/bin/python3
"""Writes the seed corpus of tests/fuzz/fuzz_answer.c: DNS queries for every lookup case of
the differential zones, with and without EDNS and options, and the same as full frames
(Ethernet, 802.1Q, IPv4, IPv6, UDP); then the hardening cases (h-*.bin), one per defect
fixed. Run once; the files are committed (the output is deterministic)."""
import os
import struct
import sys

import dns.edns
import dns.message

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from pcap_tool import frame  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "corpus")
QS = [("www.diff.test.", "A"), ("chain1.diff.test.", "A"), ("loop-a.diff.test.", "A"),
      ("x.wild.diff.test.", "TXT"), ("host.dname.diff.test.", "A"), ("host.sub.diff.test.", "A"),
      ("sub.diff.test.", "DS"), ("nope.diff.test.", "A"), ("ent.diff.test.", "A"),
      ("big.diff.test.", "A"), ("diff.test.", "ANY"), ("diff.test.", "MX"), ("id.server.", "TXT"),
      ("example.org.", "A"), ("svc.diff.test.", "SVCB"),
      ("x.many.second.test.", "A"), ("x.sib.second.test.", "A")]   # RFC 9471 glue, TC or not

os.makedirs(OUT, exist_ok=True)
n = 0
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
        open(os.path.join(OUT, f"q{i:02d}-{j}.bin"), "wb").write(wire)
        n += 1
        if j == 1:
            open(os.path.join(OUT, f"f{i:02d}-v4.bin"), "wb").write(frame(wire))
            open(os.path.join(OUT, f"f{i:02d}-v6vlan.bin"), "wb").write(frame(wire, v6=True, vlan=7))
            n += 2


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
    open(os.path.join(OUT, name + ".bin"), "wb").write(data)
    n += 1
print(f"{n} seeds in {OUT}")
