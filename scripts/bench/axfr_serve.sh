#!/usr/bin/env bash
# AXFR served by pop53d: how long a client takes to transfer a big zone from pop53 over TCP.
# See docs/BENCHMARKS.md (section "Zone transfers served").
#
# Usage: scripts/bench/axfr_serve.sh [--records N] [--runs R]
#   --records  big.test size (scripts/bench/genzone.py), default 100000
#   --runs     AXFRs measured, default 5 (after one warm-up)
# Environment: BUILD (default build), CACHE (generated zones, default /tmp/pop53-bigzone).
#
# pop53d (af_xdp on the lab veth, one worker, one TCP thread) serves big.test as a primary
# zone from its file, `transfer: {allow: [192.0.2.1/32], key: xfr.key}`; kdig in the client
# namespace asks for a signed AXFR (kdig verifies every message's TSIG). Printed per run: the
# wall time of kdig (start to exit, parsing included), and pop53d's own time from request to
# last message (its log line). Needs root, kdig.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
N=100000
RUNS=5
CACHE=${CACHE:-/tmp/pop53-bigzone}
while [ $# -gt 0 ]; do
	case "$1" in
		--records) N=${2:?}; shift 2 ;;
		--runs) RUNS=${2:?}; shift 2 ;;
		-h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "axfr_serve.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

set -- "$BUILD" "$ROOT"
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/integration/xfr_lib.sh"
. "$ROOT/scripts/bench/lib.sh"
set +u

cleanup() {
	stop_pop53 >/dev/null 2>&1 || true
	cleanup_common
}
trap cleanup EXIT
lab_lock

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
"$ROOT/scripts/lab.sh" up >/dev/null
bench_xdp_off
zone=$(CACHE=$CACHE bench_big_zone "$N" "$CACHE") || exit 1
xfr_config "$TMP/pop53.yaml" "  - name: big.test
    file: $zone
    transfer: {allow: [192.0.2.1/32], key: xfr.key}"
start_pop53_answering "$TMP/pop53.yaml" >/dev/null
wait_for 300 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 big.test SOA | grep -q ." ||
	{ echo "pop53d does not serve big.test" >&2; exit 1; }
KEY="hmac-sha256:xfr.key:$XFR_SECRET"
axfr() { ip netns exec "$CLIENT_NS" kdig +time=30 -y "$KEY" @"$V4" big.test AXFR >"$TMP/axfr.txt" 2>&1; }
axfr
echo "records in zone file: $(grep -vc '^\s*\(;\|$\|\$\)' "$zone"), in the AXFR: $(awk '$0 !~ /^;/ && NF >= 5 && $4 != "TSIG"' "$TMP/axfr.txt" | wc -l)"
grep '^;; Received' "$TMP/axfr.txt"
for r in $(seq 1 "$RUNS"); do
	t0=$(now_ms); axfr; t1=$(now_ms)
	grep -q '^;; ERROR' "$TMP/axfr.txt" && { echo "run $r: kdig failed" >&2; cat "$TMP/axfr.txt" | tail -3 >&2; exit 1; }
	srv=$(grep 'xfr: AXFR of big.test' "$TMP/pop53d.log" | tail -1 | sed 's/.*: //')
	echo "run $r: kdig $((t1 - t0)) ms; pop53d: $srv"
done
