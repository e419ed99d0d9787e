#!/usr/bin/python3
"""Queries for scripts/bench/instr_peers.sh: the same N queries as a pcap (for pop53d on
net_pcap) and as DNS messages (for knotd and NSD over UDP), and the UDP client.

  instr_peers.py make ZONEFILE ORIGIN N OUTDIR   OUTDIR/q.pcap, OUTDIR/empty.pcap, OUTDIR/q.bin
  instr_peers.py send Q.BIN PORT                 send each, wait for its answer; prints answered=N

The queries are the replay's small-a mix (scripts/bench/replay.c): a random owner of the zone
that has A or AAAA, that type, RD=0, an OPT with payload 1232 and DO=0.
"""
import random
import socket
import struct
import sys

import dns.zone
import dns.rdatatype

POP_MAC = bytes.fromhex("027063617000")  # net_pcap's first port (tests/integration/pcap_tool.py)
CLIENT_MAC = bytes.fromhex("020000000001")
C4, S4 = bytes([192, 0, 2, 1]), bytes([192, 0, 2, 53])


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def wire_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def message(qid, name, qtype):
    hdr = struct.pack("!HHHHHH", qid, 0, 1, 0, 0, 1)
    opt = b"\0" + struct.pack("!HHIH", 41, 1232, 0, 0)
    return hdr + wire_name(name) + struct.pack("!HH", qtype, 1) + opt


def frame(payload, sport):
    ulen = 8 + len(payload)
    pseudo = C4 + S4 + struct.pack("!BBH", 0, 17, ulen)
    udp = struct.pack("!HHHH", sport, 53, ulen, 0) + payload
    c = csum(pseudo + udp) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, 0, 0x4000, 64, 17, 0, C4, S4)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return POP_MAC + CLIENT_MAC + b"\x08\x00" + ip + udp


def pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i // 1000000, i % 1000000, len(fr), len(fr)))
            f.write(fr)


def make(zonefile, origin, n, outdir):
    z = dns.zone.from_file(zonefile, origin=origin, relativize=False)
    picks = []
    for name, node in z.nodes.items():
        for rds in node.rdatasets:
            if rds.rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
                picks.append((name.to_text(), int(rds.rdtype)))
    picks.sort()
    rnd = random.Random(53)
    msgs = []
    for i in range(n):
        name, qtype = picks[rnd.randrange(len(picks))]
        msgs.append(message(i & 0xFFFF, name, qtype))
    pcap(outdir + "/q.pcap", [frame(m, 1024 + i % 60000) for i, m in enumerate(msgs)])
    pcap(outdir + "/empty.pcap", [])
    with open(outdir + "/q.bin", "wb") as f:
        for m in msgs:
            f.write(struct.pack("!H", len(m)) + m)
    print("made %d queries over %d owner/type pairs" % (n, len(picks)))


def send(path, port):
    data = open(path, "rb").read()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2.0)
    answered = off = 0
    while off < len(data):
        (l,) = struct.unpack("!H", data[off:off + 2])
        m = data[off + 2:off + 2 + l]
        off += 2 + l
        for _ in range(5):
            s.sendto(m, ("127.0.0.1", port))
            try:
                while True:
                    r = s.recv(4096)
                    if r[:2] == m[:2]:
                        answered += 1
                        break
                break
            except socket.timeout:
                continue
    print("answered=%d" % answered)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        send(sys.argv[2], int(sys.argv[3]))
