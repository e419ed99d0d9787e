#!/usr/bin/python3
"""A paced DNS-over-UDP client for the RRL and cookie tests: sends one query name at a given
rate from a given source address and counts what came back, response by response.

  dns_client.py rate SERVER SRC NAME QTYPE QPS SECONDS [--cookie HEX] [--no-edns] [--drain S]
      NAME may be a comma-separated list, asked in turn (a resolver's mix of names)
      -> one JSON line: sent, answered (full, TC=0), tc (TC=1), badcookie, rcodes seen,
         the last server cookie seen, and how many of the first answers came in a row
  dns_client.py cookie SERVER SRC NAME  -> the client+server cookie (hex) the server gives

Every query has its own ID; responses are matched by ID, so late ones still count.
"""
import json
import os
import select
import socket
import sys
import time

import dns.edns
import dns.flags
import dns.message
import dns.rcode

BADCOOKIE = 23


def make_query(name, qtype, qid, cookie, edns):
    opts = []
    if cookie is not None:
        opts.append(dns.edns.GenericOption(dns.edns.COOKIE, cookie))
    q = dns.message.make_query(name, qtype, use_edns=0 if edns else False, payload=1232,
                               options=opts)
    q.id = qid
    q.flags &= ~dns.flags.RD
    return q.to_wire()


def classify(wire, stats):
    m = dns.message.from_wire(wire)
    rc = m.rcode()
    stats["rcodes"][str(rc)] = stats["rcodes"].get(str(rc), 0) + 1
    for o in m.options:
        if o.otype == dns.edns.COOKIE:
            stats["cookie"] = o.data.hex()
    if rc == BADCOOKIE:
        stats["badcookie"] += 1
        return "b"
    if m.flags & dns.flags.TC:
        stats["tc"] += 1
        return "t"
    stats["answered"] += 1
    return "a"


def rate(server, src, name, qtype, qps, seconds, cookie=None, edns=True, drain_s=1.0):
    s = socket.socket(socket.AF_INET6 if ":" in server else socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    s.setblocking(False)
    stats = {"sent": 0, "answered": 0, "tc": 0, "badcookie": 0, "rcodes": {}, "cookie": None}
    seen = {}
    n = int(qps * seconds)
    t0 = time.monotonic()
    base = int.from_bytes(os.urandom(2), "big")
    names = name.split(",")

    def drain(timeout):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            r, _, _ = select.select([s], [], [], max(left, 0))
            if not r:
                return
            try:
                wire, _ = s.recvfrom(4096)
            except BlockingIOError:
                continue
            qid = int.from_bytes(wire[:2], "big")
            if qid in seen and seen[qid] is None:
                seen[qid] = classify(wire, stats)

    for i in range(n):
        due = t0 + i / qps
        now = time.monotonic()
        if due > now:
            drain(due - now)
        qid = (base + i) & 0xFFFF
        seen[qid] = None
        s.sendto(make_query(names[i % len(names)], qtype, qid, cookie, edns), (server, 53))
        if i == 0:
            stats["t_first"] = time.time()
        stats["sent"] += 1
    stats["t_last"] = time.time()
    drain(drain_s)
    order = [seen[(base + i) & 0xFFFF] for i in range(n)]
    run = 0
    for v in order:
        if v != "a":
            break
        run += 1
    stats["first_run"] = run
    stats["lost"] = sum(1 for v in order if v is None)
    stats["seconds"] = round(time.monotonic() - t0, 3)
    return stats


def main():
    a = sys.argv[1:]
    cookie = None
    edns = True
    if "--cookie" in a:
        i = a.index("--cookie")
        cookie = bytes.fromhex(a[i + 1])
        del a[i:i + 2]
    if "--no-edns" in a:
        a.remove("--no-edns")
        edns = False
    drain_s = 1.0
    if "--drain" in a:
        i = a.index("--drain")
        drain_s = float(a[i + 1])
        del a[i:i + 2]
    if a[0] == "rate":
        print(json.dumps(rate(a[1], a[2], a[3], a[4], float(a[5]), float(a[6]), cookie, edns, drain_s)))
    elif a[0] == "cookie":
        st = rate(a[1], a[2], a[3], "A", 10, 0.1, os.urandom(8), True, 0.3)
        print(st["cookie"] or "none")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
