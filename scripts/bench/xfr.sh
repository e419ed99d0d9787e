#!/usr/bin/env bash
# Zone-transfer benchmark: NOTIFY-to-served latency, and an IXFR of 100 changes against zone
# size, with pop53d as the secondary of a knotd hidden primary. See docs/BENCHMARKS.md
# (section "Zone transfers").
#
# Usage: scripts/bench/xfr.sh [--records "N ..."] [--notifies N] [--ixfrs N] [--no-write]
#   --records   big.test sizes (scripts/bench/genzone.py), default "100000 1000000"
#   --notifies  one-record changes of a small zone measured for the latency, default 10
#   --ixfrs     IXFRs of 100 changes per size, one row each, default 1 (each patch writes
#               into a spare image, control/publish.c: the first into one made ahead after
#               the AXFR, the next ones into the image the previous one replaced)
#   --no-write  print the section, leave docs/BENCHMARKS.md alone
# Environment: BUILD (meson build dir, default build), CACHE (generated zones, default
# /tmp/pop53-bigzone, shared with bigzone.sh and reload.sh).
#
# The lab of tests/integration/xfr_lib.sh: knotd in its own namespace behind the client
# namespace, pop53d on the pop veth (af_xdp, one worker). Per size: a fresh pop53d transfers
# big.test by AXFR; then knotc commits 100 changes (50 names added, 25 A deleted, 25 A
# changed) and knotd NOTIFYs. Measured: "commit to served", from knotc zone-commit returning
# to the first answer with the new serial seen from the client namespace (kdig every 10 ms);
# pop53d's own NOTIFY-to-served, transfer and apply times (`pop53ctl --json zone status`);
# pop53d's VmRSS + HugetlbPages before, and the peak during the IXFR (20 ms samples, and
# VmHWM reset before it). Needs root, knotd/knotc/kdig.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
SIZES="100000 1000000"
NOTIFIES=10
IXFRS=1
WRITE=1
ORIG_ARGS="$*"
CACHE=${CACHE:-/tmp/pop53-bigzone}
DOC="$ROOT/docs/BENCHMARKS.md"
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
	case "$1" in
		--records) SIZES=${2:?}; shift 2 ;;
		--notifies) NOTIFIES=${2:?}; shift 2 ;;
		--ixfrs) IXFRS=${2:?}; shift 2 ;;
		--no-write) WRITE=0; shift ;;
		-h | --help) usage 0 ;;
		*) echo "xfr.sh: unknown argument '$1'" >&2; usage 2 ;;
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

# The lab lock (/run/lock/pop53-lab.lock, as tests/integration/*.sh take it) first: the
# cleanup below tears the lab's knotd and pop53d down, so it is armed only once the lab is ours.
lab_lock
cleanup() {
	stop_pop53 >/dev/null 2>&1 || true
	primary_down
	cleanup_common
}
trap cleanup EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
mem_kb() { awk '$1 == "VmRSS:" || $1 == "HugetlbPages:" { s += $2 } END { print s }' "/proc/$POP53_PID/status"; }
status_json() { "$BUILD/control/pop53ctl" -s "$TMP/control.sock" --json zone status "$1"; }
jget() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); d=d.get('zone', d)
for k in sys.argv[1].split('.'): d=d.get(k) if isinstance(d,dict) else None
print(d)" "$1"; }
soa_serial() { ip netns exec "$CLIENT_NS" kdig +time=1 +retry=0 +short @"$V4" "$1" SOA 2>/dev/null | awk '{ print $3 }'; }
# wait_serial ZONE SERIAL LIMIT_S: poll every 10 ms; prints ms waited.
wait_serial() {
	local t0 end
	t0=$(now_ms); end=$((t0 + $3 * 1000))
	while [ "$(now_ms)" -lt "$end" ]; do
		[ "$(soa_serial "$1")" = "$2" ] && { echo $(( $(now_ms) - t0 )); return 0; }
		sleep 0.01
	done
	echo timeout; return 1
}

"$ROOT/scripts/lab.sh" up >/dev/null
bench_xdp_off
primary_up
knotd_conf sec.test big.test
knot_zone sec.test 1
OUT=$TMP/section.md
ROWS=$TMP/rows
: >"$ROWS"

for n in $SIZES; do
	zone=$(CACHE=$CACHE bench_big_zone "$n" "$CACHE") || exit 1
	knotd_stop
	rm -rf "$KNOT_DIR/db" "$TMP/xfr"; mkdir -p "$KNOT_DIR/db"
	cp "$zone" "$KNOT_DIR/big.test.zone"
	knotd_start || { echo "knotd does not start" >&2; exit 1; }
	wait_for 300 sh -c "ip netns exec $PRIMARY_NS kdig +time=1 +short @$PRIMARY_V4 big.test SOA | grep -q ." ||
		{ echo "knotd does not serve big.test" >&2; exit 1; }
	serial=$(ip netns exec "$PRIMARY_NS" kdig +short @"$PRIMARY_V4" big.test SOA | awk '{ print $3 }')
	XFR_TIMEOUT_MS=30000 xfr_config "$TMP/pop53.yaml" "  - {name: sec.test, primaries: [{address: $PRIMARY_V4, key: xfr.key}]}
  - {name: big.test, primaries: [{address: $PRIMARY_V4, key: xfr.key}]}"
	t0=$(now_ms)
	start_pop53_answering "$TMP/pop53.yaml" >/dev/null
	wait_serial big.test "$serial" 900 >/dev/null || { echo "big.test ($n) not transferred" >&2; exit 1; }
	axfr_wall=$(( $(now_ms) - t0 ))
	js=$(status_json big.test)
	axfr_res=$(jget last_transfer.result <<<"$js")
	# Let the disk copy be written and memory settle.
	wait_for 300 sh -c "[ -s $TMP/xfr/big.test.zone ] && ! $BUILD/control/pop53ctl -s $TMP/control.sock --json zone status big.test | grep -q '\"busy\": *true'"
	sleep 2
	copies_seen=$(grep -cE 'journal file was rewritten|disk copy' "$TMP/pop53d.log")
	for round in $(seq 1 "$IXFRS"); do
	mem0=$(mem_kb)
	echo 5 >"/proc/$POP53_PID/clear_refs"
	( peak=0; while kill -0 "$POP53_PID" 2>/dev/null; do m=$(mem_kb); [ "${m:-0}" -gt "$peak" ] && { peak=$m; echo "$peak" >"$TMP/peak"; }; sleep 0.02; done ) &
	sampler=$!
	knotc zone-begin big.test >/dev/null
	if [ "$round" -eq 1 ]; then
		for i in $(seq 1 50); do knotc zone-set big.test "added$i.region0" 3600 A "198.18.0.$i" >/dev/null; done
		for i in $(seq 100 124); do knotc zone-unset big.test "$(printf 'host%06d.region%d' "$i" $((i % 128)))" A >/dev/null; done
	else
		# Later rounds: 50 new names, 25 of the previous round's names go.
		for i in $(seq 1 50); do knotc zone-set big.test "r${round}added$i.region0" 3600 A "198.18.$round.$i" >/dev/null; done
		p=$([ "$round" -eq 2 ] && echo "" || echo "r$((round - 1))")
		for i in $(seq 1 25); do knotc zone-unset big.test "${p}added$i.region0" A >/dev/null; done
	fi
	for i in $(seq 200 224); do
		h=$(printf 'host%06d.region%d' "$i" $((i % 128)))
		knotc zone-unset big.test "$h" A >/dev/null
		knotc zone-set big.test "$h" 3600 A "198.18.$((100 + round)).$((i - 200))" >/dev/null
	done
	knotc zone-commit big.test >/dev/null
	served=$(wait_serial big.test $((serial + round)) 120)
	sleep 1
	kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
	hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$POP53_PID/status")
	huge=$(awk '$1 == "HugetlbPages:" { print $2 }' "/proc/$POP53_PID/status")
	peak=$(cat "$TMP/peak" 2>/dev/null || echo 0)
	[ $((hwm + huge)) -gt "$peak" ] && peak=$((hwm + huge))
	js=$(status_json big.test)
	res=$(jget last_transfer.result <<<"$js")
	img=$(jget last_ixfr_image <<<"$js")
	[ -z "$img" ] || res="$res; image $img"
	[ "$IXFRS" -eq 1 ] || res="IXFR $round of $IXFRS: $res"
	bench_log "$(grep 'xfr: published' "$TMP/pop53d.log" | tail -1)"
	# What else this IXFR set off: a disk copy (its records read out of the image) shows in
	# the memory figures.
	grep -E 'journal file was rewritten|disk copy' "$TMP/pop53d.log" | sed -n "$((${copies_seen:-0} + 1)),\$p" |
		while read -r l; do bench_log "$l"; done
	copies_seen=$(grep -cE 'journal file was rewritten|disk copy' "$TMP/pop53d.log")
	n2s=$(jget notify_to_served_ms <<<"$js")
	recs=$(awk '{ s += $2 } END { print s }' "$zone.counts" 2>/dev/null)
	printf '| %s | %s | %.1f s | %s ms | %.0f ms | %s | %.1f MiB | %.1f MiB (+%.1f) |\n' \
		"$(bench_fmt_int "$n")" "$axfr_res" "$(echo "$axfr_wall / 1000" | bc -l)" "$served" \
		"$n2s" "$res" "$(echo "$mem0 / 1024" | bc -l)" "$(echo "$peak / 1024" | bc -l)" \
		"$(echo "($peak - $mem0) / 1024" | bc -l)" | tee -a "$ROWS"
	done
	: "$recs"
	stop_pop53 >/dev/null
done

# NOTIFY to served for a small zone: one record changed per commit.
lat=()
n2s_all=()
base=$(ip netns exec "$PRIMARY_NS" kdig +short @"$PRIMARY_V4" sec.test SOA | awk '{ print $3 }')
XFR_TIMEOUT_MS=5000 xfr_config "$TMP/pop53.yaml" "  - {name: sec.test, primaries: [{address: $PRIMARY_V4, key: xfr.key}]}"
rm -rf "$TMP/xfr"
start_pop53_answering "$TMP/pop53.yaml" >/dev/null
wait_serial sec.test "$base" 30 >/dev/null
for i in $(seq 1 "$NOTIFIES"); do
	knotc zone-begin sec.test >/dev/null
	knotc zone-set sec.test "n$i" 300 A "192.0.2.$i" >/dev/null
	knotc zone-commit sec.test >/dev/null
	lat+=("$(wait_serial sec.test $((base + i)) 10)")
	n2s_all+=("$(status_json sec.test | jget notify_to_served_ms)")
	sleep 0.3
done
stop_pop53 >/dev/null

{
	echo
	echo "## Zone transfers"
	echo
	echo "\`scripts/bench/xfr.sh\` runs pop53d (one worker, af_xdp on the lab veth) as the secondary of"
	echo "a knotd hidden primary in its own namespace (tests/integration/xfr_lib.sh), with TSIG"
	echo "hmac-sha256 on NOTIFY, SOA queries and transfers. **Commit to served** is from \`knotc"
	echo "zone-commit\` returning to the first answer with the new serial in the client namespace"
	echo "(kdig every 10 ms): knotd's NOTIFY, pop53d's SOA query, IXFR, apply, publish."
	echo "**NOTIFY to served** is pop53d's own figure (NOTIFY accepted on the control thread to the"
	echo "new image published). **Memory** is pop53d's VmRSS + HugetlbPages before the IXFR and"
	echo "the peak during it (20 ms samples, or VmHWM reset before it + hugetlb, whichever is larger)."
	echo "Goals (issue 13): a change served < 1 s after the NOTIFY; an IXFR of 100 changes to a"
	echo "1M-record zone serving in < 200 ms with memory growth bounded by the diff plus one zone's replica."
	echo
	echo "Run $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(bench_commit "$ROOT"), $(bench_machine), build $(basename "$BUILD") (-O2):"
	echo
	echo '```'
	echo "scripts/bench/xfr.sh${ORIG_ARGS:+ $ORIG_ARGS}"
	echo '```'
	echo
	echo "One record changed in a 4-record zone, $NOTIFIES times: commit to served (ms) ${lat[*]},"
	echo "median **$(bench_median "${lat[@]}") ms**; pop53d NOTIFY to served (ms) $(printf '%.1f ' "${n2s_all[@]}")."
	echo
	echo "IXFR of 100 changes (50 names added, 25 A deleted, 25 A changed) to big.test:"
	echo
	echo "| records | first AXFR (pop53d's result) | start to AXFR served | commit to served | NOTIFY to served | the IXFR (pop53d's result) | RSS + hugetlb before | peak during the IXFR |"
	echo "| ---: | --- | ---: | ---: | ---: | --- | ---: | ---: |"
	cat "$ROWS"
	echo
	echo "Where the time goes: pop53d's log line per IXFR (\`xfr: published ...\`) splits the control"
	echo "thread's time into the patch (control/zone/image_patch.c) and the publish (check, replicas,"
	echo "grace, free); NOTIFY to served ends at the replicas' swap (docs/ARCHITECTURE.md, \"IXFR:"
	echo "patching the image\"). An IXFR the patch declines compiles every zone, as a reload does."
	echo
} >"$OUT"
cat "$OUT"
if [ "$WRITE" = 1 ]; then
	bench_md_replace "$DOC" '<!-- xfr:begin -->' '<!-- xfr:end -->' "$OUT"
	echo "written to $DOC" >&2
fi
