#!/usr/bin/python3
"""A bounded spoofed-source flood for tests/integration/amplification.sh, measured at the
client's veth: queries go out through a raw IP socket with source addresses inside a
"victim" /24 (as a reflection attack forges them), and an AF_PACKET socket on the same
interface counts every frame: the spoofed queries leaving (bytes received from the victim,
as the server sees it) and the responses coming back to the victim's addresses (bytes sent
to the victim). Sizes are IP packet lengths, the same layer both ways.

  amplify.py IFACE SERVER VICTIM_NET NAME QTYPE QPS SECONDS
     VICTIM_NET like 203.0.113 (a /24); prints one JSON line with the counts and the factor
"""
import json
import os
import random
import select
import socket
import struct
import sys
import time

import dns.message

ETH_P_ALL = 0x0003 # outgoing frames reach only ETH_P_ALL taps


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def packet(src, dst, sport, payload):
    udp_len = 8 + len(payload)
    ph = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 17, udp_len)
    udp = struct.pack("!HHHH", sport, 53, udp_len, 0) + payload
    c = csum(ph + udp) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, random.getrandbits(16), 0x4000, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + udp


def main():
    iface, server, net, name, qtype, qps, seconds = sys.argv[1:8]
    qps, seconds = float(qps), float(seconds)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sniff.bind((iface, ETH_P_ALL))
    sniff.setblocking(False)
    srv = socket.inet_aton(server)
    victim = socket.inet_aton(net + ".0")[:3]
    st = {"sent": 0, "query_bytes": 0, "responses": 0, "tc": 0, "response_bytes": 0}

    def drain(timeout):
        end = time.monotonic() + timeout
        while True:
            r, _, _ = select.select([sniff], [], [], max(end - time.monotonic(), 0))
            if not r:
                return
            try:
                fr, addr = sniff.recvfrom(65535)
            except BlockingIOError:
                continue
            if len(fr) < 14 + 28 or fr[12:14] != b"\x08\x00":
                continue
            ip = fr[14:]
            if ip[9] != 17:
                continue
            tot = struct.unpack("!H", ip[2:4])[0]
            src, dst = ip[12:16], ip[16:20]
            if addr[2] == socket.PACKET_OUTGOING and src[:3] == victim and dst == srv:
                st["query_bytes"] += tot
            elif addr[2] != socket.PACKET_OUTGOING and src == srv and dst[:3] == victim:
                st["responses"] += 1
                st["response_bytes"] += tot
                dns_hdr = ip[28:40]
                if len(dns_hdr) >= 4 and dns_hdr[2] & 0x02:
                    st["tc"] += 1

    n = int(qps * seconds)
    t0 = time.monotonic()
    for i in range(n):
        due = t0 + i / qps
        if due > time.monotonic():
            drain(due - time.monotonic())
        q = dns.message.make_query(name, qtype, use_edns=0, payload=4096)
        q.id = random.getrandbits(16)
        src = f"{net}.{random.randint(1, 254)}"
        raw.sendto(packet(src, server, random.randint(1024, 65535), q.to_wire()), (server, 0))
        st["sent"] += 1
    drain(1.0)
    st["factor"] = round(st["response_bytes"] / st["query_bytes"], 3) if st["query_bytes"] else None
    st["seconds"] = round(time.monotonic() - t0, 2)
    print(json.dumps(st))


if __name__ == "__main__":
    main()
