#!/usr/bin/python3
"""Frames for the pcap test: write query frames, then check the response frames pop53d wrote.

  pcap_tool.py make OUT.pcap ZONEFILE     writes queries (and bad frames) + OUT.pcap.json
  pcap_tool.py check RESP.pcap OUT.pcap.json ZONEFILE

The checks recompute every checksum independently and compare each answer with the zone
file read by dnspython, so nothing expected is written down here by hand.
"""
import json
import struct
import sys

import dns.flags
import dns.message
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.zone

CLIENT_MAC = bytes.fromhex("020000000001")
# DPDK's net_pcap gives its first port 02:70:63:61:70:00 ("pcap"); pop53d drops frames to any
# other MAC, and pcap_answers.sh checks the start-up line names this one.
POP_MAC = bytes.fromhex("027063617000")
C4, S4 = bytes([192, 0, 2, 1]), bytes([192, 0, 2, 53])
C6 = bytes.fromhex("20010db8005300000000000000000001")
S6 = bytes.fromhex("20010db8005300000000000000000053")


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(payload, v6=False, vlan=None, sport=40000, dport=53, src=None, dst=None, dmac=POP_MAC):
    udp_len = 8 + len(payload)
    if v6:
        src, dst = src or C6, dst or S6
        ph = src + dst + struct.pack("!IxxxB", udp_len, 17)
        udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
        c = csum(ph + udp) or 0xFFFF
        udp = udp[:6] + struct.pack("!H", c) + udp[8:]
        ip = struct.pack("!IHBB", 6 << 28, udp_len, 17, 64) + src + dst
        etype = 0x86DD
    else:
        src, dst = src or C4, dst or S4
        ph = src + dst + struct.pack("!BBH", 0, 17, udp_len)
        udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
        c = csum(ph + udp) or 0xFFFF
        udp = udp[:6] + struct.pack("!H", c) + udp[8:]
        hdr = struct.pack("!BBHHHBBH", 0x45, 0, 20 + udp_len, 1, 0x4000, 64, 17, 0) + src + dst
        ip = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
        etype = 0x0800
    l2 = dmac + CLIENT_MAC
    if vlan is not None:
        l2 += struct.pack("!HH", 0x8100, vlan)
    return l2 + struct.pack("!H", etype) + ip + udp


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1, i, len(fr), len(fr)) + fr)


def read_pcap(path):
    out = []
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), "not a pcap file"
    off = 24
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack("<IIII", data[off:off + 16])
        out.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return out


QUERIES = [
    ("www.example.com.", "A", False, None, True),
    ("www.example.com.", "AAAA", True, None, True),
    ("api.example.com.", "A", False, 42, True),
    ("example.com.", "MX", True, 7, False),
    ("nope.example.com.", "A", False, None, True),
    ("www.example.com.", "TXT", True, None, False),
    ("example.org.", "A", False, None, False),
]


def make(out, zonefile):
    frames, meta = [], []
    for i, (name, rtype, v6, vlan, edns) in enumerate(QUERIES):
        q = dns.message.make_query(name, rtype, use_edns=0 if edns else False)
        q.id = 1000 + i
        frames.append(frame(q.to_wire(), v6=v6, vlan=vlan, sport=40000 + i))
        meta.append({"id": q.id, "name": name, "type": rtype, "v6": v6, "vlan": vlan, "edns": edns,
                     "sport": 40000 + i})
    good = dns.message.make_query("www.example.com.", "A").to_wire()
    bad = [
        frame(good, dport=5353),                          # not port 53
        frame(good, src=bytes([255, 255, 255, 255])),     # broadcast source
        frame(good, src=bytes([224, 0, 0, 1])),           # multicast source
        frame(good)[:30],                                 # truncated IPv4 header
        frame(good, v6=True)[:50],                        # truncated IPv6 header
    ]
    fr = bytearray(frame(good))                           # IPv4 fragment (MF set)
    fr[20] |= 0x20
    bad.append(bytes(fr))
    # Not addressed to us (ports other than af_xdp see these): counted dst_mac / dst_addr.
    dst_bad = [
        frame(good, dmac=b"\xff" * 6),                    # broadcast MAC
        frame(good, v6=True, dmac=bytes.fromhex("333300000001")),  # IPv6 all-nodes MAC
        frame(good, dmac=bytes.fromhex("027063617001")),  # another host's MAC
        frame(good, dst=bytes([192, 0, 2, 54])),          # not a service address
        frame(good, v6=True, dst=bytes.fromhex("20010db8005300000000000000000054")),
    ]
    # UDP checksums are verified: a flipped bit in the question is counted udp_csum.
    fr = bytearray(frame(good))
    fr[14 + 20 + 8 + 13] ^= 0x20
    csum_bad = [bytes(fr)]
    bad += dst_bad + csum_bad
    frames += bad
    write_pcap(out, frames)
    with open(out + ".json", "w") as f:
        json.dump({"queries": meta, "bad": len(bad), "dst_mac": 3, "dst_addr": 2, "udp_csum": 1}, f)


def check(resp_path, meta_path, zonefile):
    zone = dns.zone.from_file(zonefile, origin="example.com.", relativize=False)
    meta = json.load(open(meta_path))
    frames = read_pcap(resp_path)
    fails = []
    want = {m["id"]: m for m in meta["queries"]}
    if len(frames) != len(want):
        fails.append(f"{len(frames)} responses for {len(want)} good queries "
                     f"(the {meta['bad']} bad frames must be dropped)")
    seen = set()
    for fr in frames:
        assert fr[:6] == CLIENT_MAC and fr[6:12] == POP_MAC, "MACs not swapped"
        off, vlan = 12, None
        etype = struct.unpack("!H", fr[off:off + 2])[0]
        if etype == 0x8100:
            vlan = struct.unpack("!H", fr[14:16])[0]
            off = 16
            etype = struct.unpack("!H", fr[off:off + 2])[0]
        off += 2
        if etype == 0x0800:
            ip = fr[off:off + 20]
            if csum(ip) != 0:
                fails.append("bad IPv4 header checksum")
            if ip[12:16] != S4 or ip[16:20] != C4:
                fails.append("IPv4 addresses not swapped")
            tot = struct.unpack("!H", ip[2:4])[0]
            udp = fr[off + 20:off + tot]
            ph = S4 + C4 + struct.pack("!BBH", 0, 17, len(udp))
        else:
            ip = fr[off:off + 40]
            if ip[8:24] != S6 or ip[24:40] != C6:
                fails.append("IPv6 addresses not swapped")
            plen = struct.unpack("!H", ip[4:6])[0]
            udp = fr[off + 40:off + 40 + plen]
            ph = S6 + C6 + struct.pack("!IxxxB", len(udp), 17)
        sport, dport, ulen, uck = struct.unpack("!HHHH", udp[:8])
        if sport != 53 or ulen != len(udp):
            fails.append(f"UDP ports/length wrong: {sport}->{dport} len {ulen}/{len(udp)}")
        if uck == 0 or csum(ph + udp) != 0:
            fails.append(f"bad UDP checksum on response to port {dport}")
        r = dns.message.from_wire(udp[8:])
        m = want.get(r.id)
        if m is None:
            fails.append(f"response with unknown id {r.id}")
            continue
        seen.add(r.id)
        if dport != m["sport"] or vlan != m["vlan"] or (etype == 0x86DD) != m["v6"]:
            fails.append(f"{m['name']} {m['type']}: wrong port, VLAN or family")
        if (r.edns >= 0) != m["edns"]:
            fails.append(f"{m['name']} {m['type']}: EDNS not echoed as sent")
        name = dns.name.from_text(m["name"])
        rtype = dns.rdatatype.from_text(m["type"])
        if not name.is_subdomain(zone.origin):
            if r.rcode() != dns.rcode.REFUSED or r.flags & dns.flags.AA:
                fails.append(f"{m['name']}: expected REFUSED without AA, got {dns.rcode.to_text(r.rcode())}")
            continue
        node = zone.get_node(name)
        rds = node.get_rdataset(dns.rdataclass.IN, rtype) if node else None
        if node is None:
            exp_rcode = dns.rcode.NXDOMAIN
        else:
            exp_rcode = dns.rcode.NOERROR
        if r.rcode() != exp_rcode or not r.flags & dns.flags.AA:
            fails.append(f"{m['name']} {m['type']}: rcode {dns.rcode.to_text(r.rcode())}, AA {bool(r.flags & dns.flags.AA)}")
        got = {(rr.name, rr.rdtype, rd.to_text()) for rr in r.answer for rd in rr}
        exp = {(name, rtype, rd.to_text()) for rd in rds} if rds else set()
        if got != exp:
            fails.append(f"{m['name']} {m['type']}: answer {sorted(got)} != zone {sorted(exp)}")
        if not rds and not any(rr.rdtype == dns.rdatatype.SOA for rr in r.authority):
            fails.append(f"{m['name']} {m['type']}: negative answer without SOA")
    for i in set(want) - seen:
        fails.append(f"no response to {want[i]['name']} {want[i]['type']}")
    for f in fails:
        print("FAIL:", f)
    print(f"checked {len(frames)} responses, {len(fails)} problems")
    return 1 if fails else 0


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4]))
