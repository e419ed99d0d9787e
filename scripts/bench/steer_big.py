#!/usr/bin/env python3
"""Large steering sources for scripts/bench/steer_compile.sh, deterministic (seed 53).

  steer_big.py map N OUT.json
      a subnet map (docs/CONFIG.md, steering.map) of N distinct networks in entries of 100:
      80 % IPv4 /24s anywhere in 1.0.0.0-223.255.255.255, 20 % IPv6 /48s clustered 100 to a
      /32 in 2000::/8 (as measured maps of real client space are); each entry names 2 or 3
      of 30 PoP labels.
  steer_big.py geo N OUT.json
      the networks of a GeoLite2-City-sized MaxMind DB (for tests/steer/mmdb_writer.py or
      mmdb_build.pl): N networks, 75 % IPv4 (lengths /16 to /28 packed left to right through
      1.0.0.0/8..223.0.0.0/8, so none overlaps), 25 % IPv6 (/32 to /64 in 2000::/8), with
      about N/40 distinct data records (city, subdivision, country, continent, position).
      The IPv4 packing runs out of space at 287,662 networks, so a large N is mostly IPv6.
  steer_big.py city N OUT.json
      shaped like GeoLite2-City: 75 % IPv4 (lengths /20 to /32, mostly /24 and longer, packed
      left to right, so 3M fit), 25 % IPv6 (/32 to /64 packed from 2400::, clear of 6to4's
      2002::/16 that MaxMind aliases to IPv4), the same kind and number of data records.
  The geo and city lists are written one entry per line (still one JSON array), which
  scripts/bench/mmdb_write.c reads line by line.
"""
import ipaddress
import json
import random
import sys

POPS = ["ORD", "LAX", "NRT", "FRA", "GRU", "SYD", "JNB", "LHR", "AMS", "CDG", "IAD", "DFW",
        "SEA", "MIA", "ATL", "SJC", "HKG", "SIN", "ICN", "BOM", "DXB", "MAD", "MXP", "WAW",
        "ARN", "HEL", "YYZ", "SCL", "BOG", "AKL"]
COUNTRIES = [("US", "NA"), ("MX", "NA"), ("JP", "AS"), ("DE", "EU"), ("FR", "EU"), ("GB", "EU"),
             ("BR", "SA"), ("AU", "OC"), ("ZA", "AF"), ("IN", "AS"), ("CA", "NA"), ("NG", "AF")]


def gen_map(n, rng):
    n4 = n * 8 // 10
    v4 = set()
    while len(v4) < n4:
        a = rng.randrange(1, 224)
        if a in (10, 127):
            continue
        v4.add((a << 16) | rng.randrange(65536))
    nets = ["%d.%d.%d.0/24" % (x >> 16, (x >> 8) & 255, x & 255) for x in v4]
    v6 = set()
    blocks = [rng.randrange(1 << 24) for _ in range((n - n4) // 100 + 1)]
    while len(v6) < n - n4:
        v6.add((rng.choice(blocks), rng.randrange(65536)))
    nets += ["20%02x:%04x:%04x::/48" % (b >> 16, b & 0xffff, s) for b, s in v6]
    rng.shuffle(nets)
    return [{"networks": nets[i:i + 100], "labels": rng.sample(POPS, rng.choice((2, 3)))}
            for i in range(0, len(nets), 100)]


def gen_geo(n, rng, city=False):
    recs = []
    for i in range(max(1, n // 40)):
        cc, cont = rng.choice(COUNTRIES)
        recs.append({"country": {"iso_code": cc}, "continent": {"code": cont},
                     "subdivisions": [{"iso_code": "S%d" % rng.randrange(60)}],
                     "city": {"geoname_id": 100000 + i},
                     "location": {"latitude": round(rng.uniform(-60, 70), 4),
                                  "longitude": round(rng.uniform(-180, 180), 4)}})
    out = []
    n4 = n * 3 // 4
    # IPv4: walk the space left to right, each network a random length, skipping gaps.
    at = 1 << 24
    while len(out) < n4 and at < 224 << 24:
        if city:
            plen = rng.choice((20, 22, 23, 24, 24, 24, 25, 26, 27, 28, 29, 30, 32))
        else:
            plen = rng.choice((16, 20, 22, 23, 24, 24, 24, 25, 26, 27, 28))
        size = 1 << (32 - plen)
        at = (at + size - 1) // size * size
        if at >> 24 in (10, 127):
            at = ((at >> 24) + 1) << 24
            continue
        out.append({"network": "%s/%d" % (ipaddress.IPv4Address(at), plen), "data": rng.choice(recs)})
        at += size * rng.choice((1, 1, 1, 2))
    at = 0x2400 << 112 if city else 0x20 << 120
    while len(out) < n:
        plen = rng.choice((32, 36, 40, 44, 48, 48, 48, 56, 64))
        size = 1 << (128 - plen)
        at = (at + size - 1) // size * size
        out.append({"network": "%s/%d" % (ipaddress.IPv6Address(at), plen), "data": rng.choice(recs)})
        at += size * rng.choice((1, 1, 2, 5))
    return out


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("map", "geo", "city"):
        sys.exit("usage: steer_big.py map|geo|city N OUT.json")
    rng = random.Random(53)
    n = int(sys.argv[2])
    with open(sys.argv[3], "w") as f:
        if sys.argv[1] == "map":
            json.dump(gen_map(n, rng), f, separators=(",", ":"))
            return
        data = gen_geo(n, rng, sys.argv[1] == "city")
        f.write("[\n")
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in data))
        f.write("\n]\n")


if __name__ == "__main__":
    main()
