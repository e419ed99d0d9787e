#!/usr/bin/env python3
"""Kernel-side UDP DNS stub for tests/integration/xdp_steer.sh.

Answers every query on the given ADDR:PORT sockets with REFUSED (QR set, same ID and
question), so kdig shows whether a query reached the kernel rather than the AF_XDP socket.
Exits by itself after --seconds so a failed test never leaves it behind.

usage: xdp_responder.py --seconds N ADDR PORT [ADDR PORT ...]
"""
import select
import socket
import sys
import time


def main(argv):
    if len(argv) < 5 or argv[1] != "--seconds" or (len(argv) - 3) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    deadline = time.monotonic() + float(argv[2])
    socks = []
    for addr, port in zip(argv[3::2], argv[4::2]):
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind((addr, int(port)))
        socks.append(s)
    print("ready", flush=True)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return 0
        ready, _, _ = select.select(socks, [], [], left)
        for s in ready:
            q, peer = s.recvfrom(4096)
            if len(q) < 12:
                continue
            # RFC 1035 section 4.1.1: QR=1, keep opcode and RD, RCODE=5 (REFUSED).
            flags = bytes([0x80 | (q[2] & 0x79), 0x05])
            s.sendto(q[:2] + flags + q[4:], peer)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
