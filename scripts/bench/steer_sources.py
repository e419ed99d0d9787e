#!/usr/bin/env python3
"""The steered replay mix's location sources (scripts/bench/replay.sh): a subnet map and the
networks of a MaxMind DB (written by tests/steer/mmdb_build.pl), deterministic, sized like
a small real deployment: every IPv4 /8 of 1..223 and every 2000::/16..20ff::/16 in the GeoIP
data (each with a country, continent and position), a few thousand more specific networks
inside them, and about a thousand map prefixes. Every client address of the replay frames
(ECS 1.x.x.0/24..223.x.x.0/24 and 2000::/56s; sources 10.a.b.1 and 2001:db8:a:b::1) falls in
some GeoIP network, some in map prefixes.

Usage: steer_sources.py MAP.json NETWORKS.json
"""
import json
import random
import sys

COUNTRIES = [  # ISO code, continent, latitude, longitude
    ("US", "NA", 41.88, -87.63), ("MX", "NA", 19.43, -99.13), ("JP", "AS", 35.68, 139.69),
    ("DE", "EU", 50.11, 8.68), ("FR", "EU", 48.86, 2.35), ("GB", "EU", 51.51, -0.13),
    ("BR", "SA", -23.55, -46.63), ("AU", "OC", -33.87, 151.21), ("ZA", "AF", -26.20, 28.05),
    ("IN", "AS", 19.08, 72.88), ("CA", "NA", 43.65, -79.38), ("NG", "AF", 6.52, 3.38),
]
POPS = ["ORD", "LAX", "NRT", "FRA", "GRU", "SYD", "JNB", "LHR"]


def data(rng):
    cc, cont, lat, lon = rng.choice(COUNTRIES)
    return {"country": {"iso_code": cc}, "continent": {"code": cont},
            "location": {"latitude": round(lat + rng.uniform(-2, 2), 2),
                         "longitude": round(lon + rng.uniform(-2, 2), 2)}}


def main():
    rng = random.Random(53)
    nets = []
    for a in range(1, 224):
        if a != 127:
            nets.append({"network": "%d.0.0.0/8" % a, "data": data(rng)})
    for _ in range(3000):
        a = rng.randrange(1, 224)
        if a in (10, 127):
            continue
        nets.append({"network": "%d.%d.%d.0/20" % (a, rng.randrange(256), rng.randrange(0, 256, 16)),
                     "data": data(rng)})
    for b in range(256):
        nets.append({"network": "20%02x::/16" % b, "data": data(rng)})
    for _ in range(1000):
        nets.append({"network": "20%02x:%x::/32" % (rng.randrange(256), rng.randrange(65536)),
                     "data": data(rng)})
    # The frames' own sources (no ECS): 10.a.b.1 and 2001:db8:a:b::1.
    nets.append({"network": "10.0.0.0/8", "data": data(rng)})
    for b in range(0, 256, 16):
        nets.append({"network": "10.%d.0.0/12" % b, "data": data(rng)})
    nets.append({"network": "2001:db8::/32", "data": data(rng)})
    # The first insert of a network wins in the MMDB writer; duplicates change nothing.
    seen, uniq = set(), []
    for n in nets:
        if n["network"] not in seen:
            seen.add(n["network"])
            uniq.append(n)

    smap = []
    for _ in range(1000):
        smap.append({"networks": ["%d.%d.%d.0/18" % (rng.randrange(1, 224), rng.randrange(256),
                                                     rng.randrange(0, 256, 64))],
                     "labels": rng.sample(POPS, 2)})
    smap.append({"networks": ["10.0.0.0/10", "2001:db8::/40"], "labels": ["FRA", "LHR"]})
    with open(sys.argv[1], "w") as f:
        json.dump(smap, f)
    with open(sys.argv[2], "w") as f:
        json.dump(uniq, f)


if __name__ == "__main__":
    main()
