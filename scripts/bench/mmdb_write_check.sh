#!/usr/bin/env bash
# Checks the benchmark's MMDB writer (scripts/bench/mmdb_write.c, build/scripts/bench/
# p53-mmdb-write) against MaxMind's own (tests/steer/mmdb_build.pl, libmaxmind-db-writer-perl):
# both write the same networks (scripts/bench/steer_big.py city N, seed 53) with 24-, 28- and
# 32-bit records, with and without --alias; then libmaxminddb reads every pair back for the
# same addresses and the answers must be equal: the network's prefix length and the entry's
# data (p53-mmdb-write --lookup, libmaxminddb's MMDB_lookup_string and
# MMDB_dump_entry_data_list), and mmdblookup's output for the first 20 addresses.
# Addresses: inside random networks of the list (IPv4 and IPv6), random ones around them (many
# in no network), and with --alias the same IPv4 addresses as ::ffff:a.b.c.d and 2002:AABB:CCDD::.
#
# Usage: scripts/bench/mmdb_write_check.sh [N [ADDRESSES]]   (defaults 3000 and 400)
# Environment: BUILD (meson build dir, default build). Exit 0 when every answer matches.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
N=${1:-3000}
A=${2:-400}
BIN="$BUILD/scripts/bench/p53-mmdb-write"
[ -x "$BIN" ] || { echo "mmdb_write_check.sh: build $BIN first (ninja -C $BUILD)" >&2; exit 1; }
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT

python3 "$ROOT/scripts/bench/steer_big.py" city "$N" "$D/nets.json"
python3 - "$D/nets.json" "$A" >"$D/addrs" <<'PY'
import ipaddress, json, random, sys
rng = random.Random(12)
nets = [ipaddress.ip_network(e["network"]) for e in json.load(open(sys.argv[1]))]
v4 = [n for n in nets if n.version == 4]
v6 = [n for n in nets if n.version == 6]
out = []
n = int(sys.argv[2])
for i in range(n):
    k = i % 4
    if k == 0 or k == 1:
        net = rng.choice(v4 if k == 0 else v6)
        out.append(net.network_address + rng.randrange(net.num_addresses))
    elif k == 2:  # around the IPv4 networks, gaps included
        lo, hi = int(v4[0].network_address), int(v4[-1].broadcast_address)
        out.append(ipaddress.IPv4Address(rng.randrange(lo, hi + 1)))
    else:
        lo, hi = int(v6[0].network_address), int(v6[-1].broadcast_address)
        out.append(ipaddress.IPv6Address(rng.randrange(lo, hi + 1)))
for a in out:
    print(a)
for a in out[: n // 4]:  # the aliases (found only with --alias)
    if a.version == 4:
        print("::ffff:%s" % a)
        x = int(a)
        print("2002:%x:%x::1" % (x >> 16, x & 0xffff))
PY

fail=0
for rs in 24 28 32; do
	for alias in "" --alias; do
		perl "$ROOT/tests/steer/mmdb_build.pl" --record-size "$rs" $alias "$D/perl.mmdb" "$D/nets.json"
		"$BIN" --record-size "$rs" $alias "$D/ours.mmdb" "$D/nets.json" 2>/dev/null
		"$BIN" --lookup "$D/perl.mmdb" <"$D/addrs" >"$D/perl.out"
		"$BIN" --lookup "$D/ours.mmdb" <"$D/addrs" >"$D/ours.out"
		for a in $(head -20 "$D/addrs"); do
			mmdblookup --file "$D/perl.mmdb" --ip "$a" >>"$D/perl.tool" 2>&1 || true
			mmdblookup --file "$D/ours.mmdb" --ip "$a" >>"$D/ours.tool" 2>&1 || true
		done
		found=$(grep -vc 'not found' "$D/ours.out" || true)
		if cmp -s "$D/perl.out" "$D/ours.out" && cmp -s "$D/perl.tool" "$D/ours.tool"; then
			echo "record size $rs ${alias:-(no alias)}: $(wc -l <"$D/addrs") addresses, $found found, same answers"
		else
			echo "record size $rs ${alias:-(no alias)}: DIFFERENT answers:"
			diff "$D/perl.out" "$D/ours.out" | head -10
			diff "$D/perl.tool" "$D/ours.tool" | head -10
			fail=1
		fi
		rm -f "$D/perl.tool" "$D/ours.tool"
	done
done
exit $fail
