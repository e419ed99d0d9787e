#!/usr/bin/env bash
# Catalog pickup benchmark (RFC 9432, consumer side): how long pop53d takes to serve every
# member of a large catalog. See docs/BENCHMARKS.md ("Catalog pickup").
#
# Usage: scripts/bench/catalog.sh [--members N] [--threads T]
#   --members  member zones in the catalog, default 1000
#   --threads  xfr.threads of pop53d, default 2 (its default)
# Environment: BUILD (meson build dir, default build).
#
# The lab of tests/integration/xfr_lib.sh: knotd as the hidden primary in its own namespace,
# generating catalog.invalid from its member zones (catalog-role generate/member), TSIG
# hmac-sha256 on NOTIFY, SOA queries and transfers; pop53d (one worker, af_xdp on the lab veth)
# configured with the catalog only.
#   1. commit: pop53d runs with the catalog holding one member; the N members are added at the
#      primary in one config change (knot.conf rewritten, `knotc reload`: knotd regenerates the
#      catalog and NOTIFYs it). Timed from `knotc reload` returning until `pop53ctl zone status`
#      shows all N members loaded (polled every 100 ms), i.e. published to the workers.
#   2. cold start: pop53d restarted with its disk copies deleted. Timed from pop53d answering
#      until all N are loaded.
# After each, every member is queried once from the client namespace (one UDP socket, 50
# queries in flight) and must answer its own TXT record. Needs root, knotd/knotc/kdig.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
N=1000
THREADS=2
usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
	case "$1" in
		--members) N=${2:?}; shift 2 ;;
		--threads) THREADS=${2:?}; shift 2 ;;
		-h | --help) usage 0 ;;
		*) echo "catalog.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done

set -- "$BUILD" "$ROOT"
# shellcheck source=../../tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh"
# shellcheck source=../../tests/integration/xfr_lib.sh
. "$ROOT/tests/integration/xfr_lib.sh"
# shellcheck source=lib.sh
. "$ROOT/scripts/bench/lib.sh"
set +u

cleanup() {
	stop_pop53 >/dev/null 2>&1 || true
	primary_down
	cleanup_common
}
trap cleanup EXIT
lab_lock

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# loaded: how many catalog members pop53d serves now (zone status, state loaded).
loaded() {
	"$BUILD/control/pop53ctl" -s "$TMP/control.sock" --json zone status 2>/dev/null |
		/usr/bin/python3 -c "import json,sys
d = json.load(sys.stdin); d = d.get('zones', d) if isinstance(d, dict) else d
print(sum(1 for z in d if z.get('member_of') and z.get('state') == 'loaded'))" 2>/dev/null || echo 0
}
# wait_loaded COUNT LIMIT_S: prints the ms waited, or "timeout".
wait_loaded() {
	local t0 end
	t0=$(now_ms); end=$((t0 + $2 * 1000))
	while [ "$(now_ms)" -lt "$end" ]; do
		[ "$(loaded)" -ge "$1" ] && { echo $(( $(now_ms) - t0 )); return 0; }
		sleep 0.1
	done
	echo timeout; return 1
}
# answered FIRST LAST: members mFIRST..mLAST.test that answer their own TXT (50 in flight).
answered() {
	ip netns exec "$CLIENT_NS" /usr/bin/python3 - "$V4" "$1" "$2" <<'PY'
import socket, sys, time
import dns.message, dns.rdatatype
server, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
ok = 0
# 50 in flight at a time: a burst of 1000 overflows the one worker's 256-frame ring.
for lo in range(first, last + 1, 50):
    want = {}
    for i in range(lo, min(lo + 50, last + 1)):
        q = dns.message.make_query(f"id.m{i}.test", "TXT")
        q.id = i % 65536  # distinct within a window (random IDs may collide)
        want[q.id] = f"m{i}.test"
        s.sendto(q.to_wire(), (server, 53))
    try:
        while want:
            r = dns.message.from_wire(s.recv(4096))
            z = want.pop(r.id, None)
            if z is not None and r.answer and r.answer[0][0].strings[0].decode() == z:
                ok += 1
            elif z is not None:
                print("wrong answer for", z, r.rcode(), file=sys.stderr)
    except socket.timeout:
        print("no answer:", " ".join(sorted(want.values())), file=sys.stderr)
print(ok)
PY
}

"$ROOT/scripts/lab.sh" up >/dev/null
bench_xdp_off
primary_up
members=()
for i in $(seq 1 "$N"); do members+=("m$i.test"); done
# knot.conf for the first K members (and the catalog).
knot_conf_members() {
	KNOT_EXTRA_ZONE_CONF="    catalog-role: member
    catalog-zone: catalog.invalid" knotd_conf "${members[@]:0:$1}"
	cat >>"$KNOT_DIR/knot.conf" <<EOF
  - domain: catalog.invalid
    catalog-role: generate
EOF
}
knot_conf_members 1
for z in "${members[@]}"; do knot_zone "$z" 1 "id IN TXT \"$z\""; done
knotd_start || { echo "knotd does not start" >&2; exit 1; }

XFR_THREADS=$THREADS xfr_config "$TMP/pop53.yaml" "  - name: catalog.invalid
    catalog: true
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]"
start_pop53_answering "$TMP/pop53.yaml" >/dev/null
[ "$(wait_loaded 1 30)" != timeout ] || { echo "the first member was not picked up" >&2; exit 1; }

# 1. The N members added in one commit at the primary.
knot_conf_members "$N"
t0=$(now_ms)
knotc reload >/dev/null || { echo "knotc reload failed" >&2; exit 1; }
reload_ms=$(( $(now_ms) - t0 ))
commit_ms=$(wait_loaded "$N" 120)
commit_ms=$([ "$commit_ms" = timeout ] && echo timeout || echo $((commit_ms + reload_ms)))
commit_ok=$(answered 1 "$N")
rss_kb=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$POP53_PID/status")
bench_log "commit: $N members served ${commit_ms} ms after knotc reload (reload itself ${reload_ms} ms); $commit_ok/$N answer"

# 2. Cold start: no disk copies, the whole catalog from the primary.
stop_pop53 >/dev/null
rm -rf "$TMP/xfr"
t0=$(now_ms)
start_pop53_answering "$TMP/pop53.yaml" >/dev/null
answering_ms=$(( $(now_ms) - t0 ))
cold_ms=$(wait_loaded "$N" 120)
cold_ok=$(answered 1 "$N")
bench_log "cold start: $N members served ${cold_ms} ms after pop53d answered (${answering_ms} ms to answer); $cold_ok/$N answer"

cat <<EOF

| members | xfr.threads | catalog commit to all served | cold start: answering to all served | members answering | pop53d VmRSS |
| --- | --- | --- | --- | --- | --- |
| $N | $THREADS | $commit_ms ms | $cold_ms ms | $commit_ok/$N, $cold_ok/$N | $((rss_kb / 1024)) MiB |
EOF
