#!/usr/bin/env bash
# Instructions per answered query of the whole process, side by side: pop53d (on net_pcap,
# so valgrind can run it: no AF_XDP, no kernel bypass), knotd (UDP on loopback) and NSD (UDP on
# loopback), each under callgrind answering the same N queries (the replay's small-a mix on
# zones/example.com.zone, made by instr_peers.py).
#
# Each server runs twice for HOLD seconds from its start, under callgrind with every thread
# (and NSD's children) counted: once answering the N queries, once answering none. The
# difference of the two totals, divided by the queries answered, is what answering costs in
# user space: start-up (EAL, zone load) and what runs by the clock (timers, health checks,
# idle polls) are in both runs and cancel out. Kernel work (sockets, the pcap file) is not
# counted: callgrind sees user space only.
#
# Usage: scripts/bench/instr_peers.sh [--no-write]
# Environment: BUILD (meson build dir, default build-replay), N (default 20000), HOLD (seconds
# per run, default 90). Writes a table into docs/BENCHMARKS.md between
# <!-- instr-peers:begin --> and <!-- instr-peers:end -->.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
. "$ROOT/scripts/bench/lib.sh"

BUILD=${BUILD:-build-replay}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
N=${N:-20000}
HOLD=${HOLD:-90}
PY=/usr/bin/python3
ZONE=$ROOT/zones/example.com.zone
PORT=53531
WRITE=1
[ "${1:-}" = --no-write ] && WRITE=0
CMDLINE="scripts/bench/instr_peers.sh${*:+ $*}"

TMP=$(mktemp -d /tmp/p53-instr.XXXXXX)
SERVER_PID=
cleanup() {
	[ -n "$SERVER_PID" ] && bench_stop_pid "$SERVER_PID" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

for t in valgrind knotd nsd kdig; do
	command -v "$t" >/dev/null || { echo "instr_peers.sh: $t not installed" >&2; exit 1; }
done
if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD" "$ROOT" -Dbuildtype=release >"$TMP/meson.log" 2>&1 ||
		{ cat "$TMP/meson.log" >&2; exit 1; }
fi
ninja -C "$BUILD" control/pop53d control/pop53ctl >"$TMP/ninja.log" 2>&1 || { cat "$TMP/ninja.log" >&2; exit 1; }
"$PY" "$ROOT/scripts/bench/instr_peers.py" make "$ZONE" example.com. "$N" "$TMP" >&2

# Wait for an SOA answer on 127.0.0.1:PORT (bounded by the hold time).
wait_soa() {
	local start=$1
	while :; do
		kill -0 "$SERVER_PID" 2>/dev/null || return 1
		kdig +timeout=2 +retry=0 @127.0.0.1 -p "$PORT" example.com SOA 2>/dev/null | grep -q 'status: NOERROR' && return 0
		(($(date +%s) - start < HOLD)) || return 1
		sleep 1
	done
}

# Total Ir of every callgrind output file PREFIX.* (one per process).
total_ir() {
	cat "$1".* | awk '/^(summary|totals):/ { s += $2 } END { printf "%d", s }'
}

# run NAME WITH_QUERIES(0|1): sets ANSWERED, and writes $TMP/NAME.WITH.*
run() {
	local name=$1 with=$2 dir="$TMP/$1.$2" start out="$TMP/$1.$2.cg"
	mkdir -p "$dir"
	ANSWERED=0
	start=$(date +%s)
	case $name in
	pop53)
		local pcap="$TMP/empty.pcap"
		[ "$with" = 1 ] && pcap="$TMP/q.pcap"
		cat >"$dir/pop53.yaml" <<YAML
server:
  identity: bench-pop
  control_socket: $dir/control.sock
dataplane:
  eal: ["-l", "1", "--no-pci", "--in-memory", "--no-huge", "-m", "256", "--log-level=*:notice"]
  port: "net_pcap0,rx_pcap=$pcap,tx_pcap=$dir/r.pcap"
  workers: 1
  addresses: [192.0.2.53]
  idle: {mode: adaptive, max_sleep_us: 1000}
zones:
  - {name: example.com, file: $ZONE}
YAML
		valgrind --tool=callgrind --callgrind-out-file="$out.%p" \
			"$BUILD/control/pop53d" -c "$dir/pop53.yaml" >"$dir/log" 2>&1 &
		SERVER_PID=$!
		if [ "$with" = 1 ]; then
			while (($(date +%s) - start < HOLD)); do
				ANSWERED=$("$BUILD/control/pop53ctl" -s "$dir/control.sock" stats 2>/dev/null |
					awk '/^queries/ { gsub(",", ""); print $4; exit }' || true)
				[ "${ANSWERED:-0}" -ge "$N" ] && break
				sleep 1
			done
		fi
		;;
	knot)
		cat >"$dir/knot.conf" <<CONF
server:
    rundir: "$dir"
    listen: 127.0.0.1@$PORT
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
log:
  - target: stderr
    any: warning
database:
    storage: "$dir"
template:
  - id: default
    storage: "$dir"
    zonefile-sync: -1
    journal-content: none
zone:
  - domain: example.com
    file: "$ZONE"
CONF
		valgrind --tool=callgrind --callgrind-out-file="$out.%p" \
			knotd -c "$dir/knot.conf" >"$dir/log" 2>&1 </dev/null &
		SERVER_PID=$!
		;;
	nsd)
		cat >"$dir/nsd.conf" <<CONF
server:
    server-count: 1
    ip-address: 127.0.0.1
    port: $PORT
    username: ""
    chroot: ""
    zonesdir: "$dir"
    database: ""
    zonelistfile: "$dir/zone.list"
    xfrdfile: "$dir/xfrd.state"
    xfrdir: "$dir"
    pidfile: "$dir/nsd.pid"
    logfile: "$dir/nsd.log"
    verbosity: 0
remote-control:
    control-enable: no
zone:
    name: example.com
    zonefile: "$ZONE"
CONF
		valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$out.%p" \
			nsd -d -c "$dir/nsd.conf" >"$dir/log" 2>&1 </dev/null &
		SERVER_PID=$!
		;;
	esac
	if [ "$name" != pop53 ]; then
		wait_soa "$start" || { tail -5 "$dir/log" >&2; echo "instr_peers.sh: $name did not answer" >&2; exit 1; }
		if [ "$with" = 1 ]; then
			ANSWERED=$("$PY" "$ROOT/scripts/bench/instr_peers.py" send "$TMP/q.bin" "$PORT" | sed 's/answered=//' || true)
		fi
	fi
	if (($(date +%s) - start >= HOLD)); then
		echo "instr_peers.sh: $name took longer than HOLD=${HOLD}s; raise HOLD" >&2
		exit 1
	fi
	sleep $((start + HOLD - $(date +%s)))
	bench_stop_pid "$SERVER_PID" >/dev/null 2>&1 || true
	SERVER_PID=
	sleep 2 # NSD's children write their callgrind files as they exit
}

declare -A PERQ TOT0 TOT1 ANS
BURST=0
for s in pop53 knot nsd; do
	bench_log "$s: $N queries under callgrind (${HOLD}s)"
	run "$s" 1
	ANS[$s]=$ANSWERED
	TOT1[$s]=$(total_ir "$TMP/$s.1.cg")
	if [ "$s" = pop53 ]; then
		# pop53's own per-packet code, inclusive, from the same run (the rest is mostly
		# the pcap PMD reading and writing the capture files, and mbuf handling).
		BURST=$(for f in "$TMP/pop53.1.cg".*; do callgrind_annotate --auto=no --threshold=100 --inclusive=yes "$f" 2>/dev/null; done |
			awk '/:p53_worker_burst([ 	]|$)/ && !/=>/ { gsub(",", "", $1); s += $1 } END { printf "%d", s }')
	fi
	bench_log "$s: no queries under callgrind (${HOLD}s)"
	run "$s" 0
	TOT0[$s]=$(total_ir "$TMP/$s.0.cg")
	if [ "${ANS[$s]}" -lt "$N" ]; then
		echo "instr_peers.sh: $s answered ${ANS[$s]} of $N" >&2
		exit 1
	fi
	PERQ[$s]=$(awk -v a="${TOT1[$s]}" -v b="${TOT0[$s]}" -v n="${ANS[$s]}" 'BEGIN { printf "%.0f", (a - b) / n }')
	bench_log "$s: ${PERQ[$s]} instructions per answered query (${TOT1[$s]} - ${TOT0[$s]}, ${ANS[$s]} answered)"
done

table() {
	echo "## Instructions per query, whole process: pop53, knotd, NSD"
	echo
	echo "\`$CMDLINE\` (commit $(bench_commit "$ROOT"), $(bench_machine); $(date -u '+%Y-%m-%d %H:%M UTC'))."
	echo "Each server answers the same $N queries (the replay's small-a mix: A/AAAA of random owners of"
	echo "zones/example.com.zone, EDNS 1232, DO=0) under \`valgrind --tool=callgrind\`, every thread and"
	echo "child process counted, and runs again for the same ${HOLD}s answering none; the difference of"
	echo "the two totals over the answers is the user-space cost of answering. pop53d runs on"
	echo "**net_pcap** (queries read from a pcap file, responses written to one; software UDP"
	echo "checksums), knotd and NSD on UDP sockets on loopback (one UDP worker / server-count 1): the"
	echo "kernel's socket work, which pop53 does not have on AF_XDP, is not in these figures."
	echo
	echo "Of pop53d's figure, $(awk -v b="$BURST" -v n="${ANS[pop53]}" 'BEGIN { printf "%.0f", b / n }') instructions per query are its own per-packet code"
	echo "(\`p53_worker_burst\`, inclusive, in the same run); the rest is net_pcap's reading and writing of"
	echo "the capture files and mbuf handling, which a NIC port does not have."
	echo
	echo "| server | instructions / answered query | ratio to pop53 | answered | Ir with queries | Ir without |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: |"
	for s in pop53 knot nsd; do
		local label=$s
		[ "$s" = pop53 ] && label="pop53d (net_pcap)"
		[ "$s" = knot ] && label="knotd $(knotd --version | awk '{print $NF}') (UDP)"
		[ "$s" = nsd ] && label="NSD $(nsd -v 2>&1 | awk 'NR==1 {print $NF}') (UDP)"
		echo "| $label | ${PERQ[$s]} | $(awk -v a="${PERQ[$s]}" -v b="${PERQ[pop53]}" 'BEGIN { printf "%.2f", a / b }') | ${ANS[$s]} | ${TOT1[$s]} | ${TOT0[$s]} |"
	done
}
table | tee "$TMP/table.md"
if [ "$WRITE" = 1 ]; then
	bench_md_replace "$ROOT/docs/BENCHMARKS.md" '<!-- instr-peers:begin -->' '<!-- instr-peers:end -->' "$TMP/table.md"
fi
