#!/usr/bin/env bash
# Side-by-side benchmark: pop53d, knotd (kernel UDP), knotd (XDP) and NSD serve the same zone
# in the lab, one after the other, on the same pinned CPU; kxdpgun in the client namespace
# offers a saturating rate and counts the answers. See docs/BENCHMARKS.md.
#
# Usage: scripts/bench/compare.sh [--duration N] [--runs N] [--rate QPS]
#            [--only pop53,knotd,knotd-xdp,nsd] [--napi threaded|softirq] [--no-write] [--keep-lab]
# Environment: ZONE (zone file, default zones/example.com.zone), BUILD (meson build dir with
# control/pop53d, default build), QUERIES (kxdpgun query file; default: made from the zone),
# KXDPGUN_ARGS (extra kxdpgun arguments, e.g. "-b 32").
# Needs root, knotd, kxdpgun, kdig, nsd. Exits 0 when it completes, even if a server could not
# be measured (that server's row says why): it is a benchmark, not a test.
# --napi threaded (default): each veth's receive path runs in a NAPI kthread pinned to its own
# side's CPU (pop: the server CPU, client: the generator CPU); softirq: the kernel default,
# where it runs on whichever CPU wins a race, and results flip between runs (see lib.sh).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/scripts/bench"
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DURATION=5
RUNS=3
RATE=2000000
ONLY="pop53,knotd,knotd-xdp,nsd"
WRITE=1
KEEP_LAB=0
BENCH_NAPI=threaded
ORIG_ARGS="$*"
ZONE=${ZONE:-$ROOT/zones/example.com.zone}
BUILD=${BUILD:-$ROOT/build}
QUERIES=${QUERIES:-}
KXDPGUN_ARGS=${KXDPGUN_ARGS:-}
DOC="$ROOT/docs/BENCHMARKS.md"
BEGIN_MARK='<!-- compare:begin -->'
END_MARK='<!-- compare:end -->'
CHECK_NAME=www.example.com
CHECK_TYPE=A
CHECK_EXPECT=192.0.2.80

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
	case "$1" in
		--duration) DURATION=${2:?}; shift 2 ;;
		--runs) RUNS=${2:?}; shift 2 ;;
		--rate) RATE=${2:?}; shift 2 ;;
		--only) ONLY=${2:?}; shift 2 ;;
		--no-write) WRITE=0; shift ;;
		--keep-lab) KEEP_LAB=1; shift ;;
		--napi) BENCH_NAPI=${2:?}; shift 2 ;;
		-h|--help) usage 0 ;;
		*) echo "compare.sh: unknown argument: $1" >&2; usage 2 ;;
	esac
done
for v in DURATION RUNS RATE; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: --${v,,} needs a positive integer" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "compare.sh: needs root (namespaces, XDP)" >&2; exit 2; }
for tool in kxdpgun kdig taskset; do
	command -v "$tool" >/dev/null || { echo "compare.sh: $tool not found" >&2; exit 2; }
done
case "$BENCH_NAPI" in threaded|softirq) ;; *) echo "compare.sh: --napi threaded|softirq" >&2; exit 2 ;; esac
IFS=, read -r -a PEERS <<<"$ONLY"
for p in "${PEERS[@]}"; do
	case "$p" in pop53|knotd|knotd-xdp|nsd) ;; *) echo "compare.sh: unknown server '$p' in --only" >&2; exit 2 ;; esac
done

if [ ! -r "$ZONE" ]; then
	if [ "$ZONE" = "$ROOT/zones/example.com.zone" ]; then
		bench_log "$ZONE not found; using the fallback copy scripts/bench/peers/example.com.zone"
		ZONE="$HERE/peers/example.com.zone"
	else
		echo "compare.sh: zone file $ZONE not readable" >&2; exit 2
	fi
fi
ZONE=$(readlink -f "$ZONE")

TMP=$(mktemp -d /tmp/pop53-compare.XXXXXX)
chmod 755 "$TMP" # NSD/knotd may drop privileges in some setups; the zone copy must be readable
BENCH_SERVER_PID=
LAB_UP=0

# shellcheck disable=SC2317 # invoked by the trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "${BENCH_SERVER_PID:-}" ]; then bench_stop_pid "$BENCH_SERVER_PID" 10; fi
	bench_xdp_off
	[ "$LAB_UP" = 1 ] && [ "$BENCH_NAPI" = threaded ] && bench_napi_setup off
	if [ "$LAB_UP" = 1 ] && [ "$KEEP_LAB" = 0 ]; then "$ROOT/scripts/lab.sh" down >/dev/null 2>&1 || true; fi
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'bench_log "interrupted"; exit 130' INT TERM

# --- the query file ----------------------------------------------------------------------------
# "name type" lines for kxdpgun: the positive names of the zone (A, AAAA, MX, TXT, the apex SOA
# and NS), skipping wildcards and anything at or below a delegation. Falls back to a fixed list.
make_queries() {
	local out=$1
	if command -v ldns-read-zone >/dev/null && ldns-read-zone -z "$ZONE" >"$TMP/zone.canon" 2>/dev/null; then
		awk '
			$4 == "SOA" { apex = $1 }
			{ own[NR] = $1; typ[NR] = $4 }
			$4 == "NS" { ns[$1] = 1 }
			END {
				for (i = 1; i <= NR; i++) {
					o = own[i]; t = typ[i]
					if (o ~ /^\*/) continue
					if (t != "A" && t != "AAAA" && t != "MX" && t != "TXT" && t != "SOA" && t != "NS") continue
					if (t == "NS" && o != apex) continue
					cut = 0
					for (d in ns) if (d != apex && (o == d || substr(o, length(o) - length(d)) == "." d)) cut = 1
					if (cut) continue
					sub(/\.$/, "", o)
					k = o " " t
					if (!(k in seen)) { seen[k] = 1; print k }
				}
			}' "$TMP/zone.canon" | head -n 200 >"$out"
	fi
	if [ ! -s "$out" ]; then
		printf '%s\n' "www.example.com A" "www.example.com AAAA" "example.com SOA" "example.com NS" >"$out"
	fi
	grep -qx "$CHECK_NAME $CHECK_TYPE" "$out" || echo "$CHECK_NAME $CHECK_TYPE" >>"$out"
}
if [ -n "$QUERIES" ]; then
	cp "$QUERIES" "$TMP/queries.txt"
else
	make_queries "$TMP/queries.txt"
fi
QFILE="$TMP/queries.txt"
cp "$ZONE" "$TMP/example.com.zone"
SZONE="$TMP/example.com.zone"

# --- per-server start functions: each starts the server (BENCH_SERVER_PID) or sets START_ERR
# and returns 1. NOTE[peer] collects remarks for the docs.
declare -A NOTE MODE SENT ANS RATIO RUNLIST REASON

start_pop53() {
	local bin="$BUILD/control/pop53d" conf="$TMP/pop53/pop53d.yaml"
	mkdir -p "$TMP/pop53"
	[ -x "$bin" ] || { START_ERR="$bin not built"; return 1; }
	cat >"$conf" <<EOF
server: {identity: bench, control_socket: "$TMP/pop53/control.sock"}
metrics: {enabled: false}
dataplane:
  eal: ["-l", "$BENCH_SERVER_CPU", "--no-pci", "--in-memory"]
  port: "net_af_xdp0,iface=$BENCH_POP_IF,start_queue=0,queue_count=1${POP53_DEVARGS:+,$POP53_DEVARGS}"
  workers: 1
  addresses: ["$BENCH_SERVER_V4", "$BENCH_SERVER_V6"]
  idle: {mode: ${POP53_IDLE:-adaptive}}
zones: [{name: example.com, file: "$SZONE"}]
EOF
	bench_start_server "$TMP/pop53/log" "$bin" -c "$conf"
}

start_knotd() { # [xdp]
	local dir="$TMP/knotd${1:+-xdp}" xdp=""
	mkdir -p "$dir"
	command -v knotd >/dev/null || { START_ERR="knotd not installed"; return 1; }
	if [ "${1:-}" = xdp ]; then
		# One XDP worker per queue of the interface (a veth has one); route-check off so the
		# reply goes straight back out of p53p; TCP stays on the kernel sockets.
		xdp="xdp:\n    listen: $BENCH_POP_IF@53\n    udp: on\n    tcp: off\n    route-check: off\n"
	fi
	sed -e "s|@RUNDIR@|$dir|g" -e "s|@ZONE@|$SZONE|g" -e "s|@XDP@|$xdp|" \
		"$HERE/peers/knotd.conf.in" >"$dir/knot.conf"
	# Checked inside the pop namespace: the xdp listen interface only exists there.
	local err
	if ! err=$(ip netns exec "$BENCH_POP_NS" knotc -c "$dir/knot.conf" conf-check 2>&1); then
		START_ERR="knot.conf rejected: $(tail -1 <<<"$err")"; return 1
	fi
	bench_start_server "$dir/log" knotd -c "$dir/knot.conf"
}

start_nsd() {
	local dir="$TMP/nsd" err
	mkdir -p "$dir"
	command -v nsd >/dev/null || { START_ERR="nsd not installed"; return 1; }
	sed -e "s|@RUNDIR@|$dir|g" -e "s|@ZONE@|$SZONE|g" -e "s|@RRL@|    rrl-ratelimit: 0|" \
		"$HERE/peers/nsd.conf.in" >"$dir/nsd.conf"
	if ! err=$(nsd-checkconf "$dir/nsd.conf" 2>&1); then
		# A build without --enable-ratelimit rejects the RRL options: it has no RRL to turn off.
		sed -e "s|@RUNDIR@|$dir|g" -e "s|@ZONE@|$SZONE|g" -e "s|@RRL@||" \
			"$HERE/peers/nsd.conf.in" >"$dir/nsd.conf"
		NOTE[nsd]="rrl-ratelimit rejected by this NSD build ($(tail -1 <<<"$err")), dropped"
		err=$(nsd-checkconf "$dir/nsd.conf" 2>&1) || { START_ERR="nsd.conf rejected: $(tail -1 <<<"$err")"; return 1; }
	fi
	bench_start_server "$dir/log" nsd -d -c "$dir/nsd.conf"
}

MODE[pop53]="AF_XDP (DPDK net_af_xdp), 1 worker, idle ${POP53_IDLE:-adaptive}"
MODE[knotd]="kernel UDP, 1 UDP worker"
MODE[knotd-xdp]="XDP (AF_XDP), 1 queue"
MODE[nsd]="kernel UDP, server-count 1"

server_log_tail() { local f; for f in "$TMP"/"$1"/log "$TMP"/"$1"/*.log; do [ -s "$f" ] && tail -3 "$f"; done 2>/dev/null | tr '\n' ' ' | cut -c1-200; }

measure() {
	local peer=$1 reason i out sent rep noerr dur
	local -a sents=() answers=()
	bench_log "== $peer: ${MODE[$peer]}"
	bench_xdp_off # a stale program (crashed run) makes AF_XDP set-up fail on p53p
	START_ERR=""; BENCH_SERVER_PID=""
	case "$peer" in
		pop53) start_pop53 ;;
		knotd) start_knotd ;;
		knotd-xdp) start_knotd xdp ;;
		nsd) start_nsd ;;
	esac
	if [ -n "$START_ERR" ] || [ -z "$BENCH_SERVER_PID" ]; then
		REASON[$peer]="${START_ERR:-could not start}"; bench_log "$peer: not measured: ${REASON[$peer]}"; return
	fi
	if ! reason=$(bench_wait_ready "$BENCH_SERVER_PID" 10 "$BENCH_SERVER_V4" "$CHECK_NAME" "$CHECK_TYPE" "$CHECK_EXPECT"); then
		local tail; tail=$(server_log_tail "$peer")
		REASON[$peer]="$reason${tail:+ — log: $tail}"
		bench_log "$peer: not measured: ${REASON[$peer]}"
		bench_stop_pid "$BENCH_SERVER_PID" 10; BENCH_SERVER_PID=
		bench_xdp_off
		return
	fi
	[ "$BENCH_NAPI" = threaded ] && bench_napi_pin >/dev/null # an XDP attach may re-create a NAPI
	reason=$(bench_check_answer "$BENCH_SERVER_V6" "$CHECK_NAME" "$CHECK_TYPE" "$CHECK_EXPECT") ||
		NOTE[$peer]="${NOTE[$peer]:+${NOTE[$peer]}; }IPv6 check failed: $reason"
	if [ "$peer" = knotd-xdp ] && ! bench_xdp_attached "$BENCH_POP_NS" "$BENCH_POP_IF"; then
		NOTE[$peer]="${NOTE[$peer]:+${NOTE[$peer]}; }no XDP program on $BENCH_POP_IF: answered by kernel sockets"
	fi
	for ((i = 1; i <= RUNS; i++)); do
		out="$TMP/$peer.run$i.txt"
		# shellcheck disable=SC2086
		if ! bench_kxdpgun "$out" "$DURATION" "$RATE" "$QFILE" $KXDPGUN_ARGS; then
			bench_log "$peer run $i: kxdpgun failed: $(tail -1 "$out")"
			continue
		fi
		read -r sent rep noerr dur < <(bench_parse_kxdpgun "$out")
		[[ ${dur:-} =~ ^[0-9]+$ ]] && [ "$dur" -gt 0 ] || dur=$DURATION
		sents+=($((sent / dur)))
		answers+=($((rep / dur)))
		[ "$noerr" = "$rep" ] || NOTE[$peer]="${NOTE[$peer]:+${NOTE[$peer]}; }run $i: only $noerr of $rep replies NOERROR"
		bench_log "$peer run $i/$RUNS: offered $(bench_fmt_int $((sent / dur))) qps, answered $(bench_fmt_int $((rep / dur))) qps"
		if ! kill -0 "$BENCH_SERVER_PID" 2>/dev/null; then
			NOTE[$peer]="${NOTE[$peer]:+${NOTE[$peer]}; }server died during run $i"
			break
		fi
	done
	bench_stop_pid "$BENCH_SERVER_PID" 10; BENCH_SERVER_PID=
	bench_xdp_off # knotd-xdp and pop53d leave their program on p53p
	if [ ${#answers[@]} -eq 0 ]; then
		REASON[$peer]="kxdpgun produced no result"; return
	fi
	SENT[$peer]=$(bench_median "${sents[@]}")
	ANS[$peer]=$(bench_median "${answers[@]}")
	RUNLIST[$peer]=$(printf '%s ' "${answers[@]}")
	RATIO[$peer]=$(awk -v a="${ANS[$peer]}" -v s="${SENT[$peer]}" 'BEGIN { printf "%.1f%%", s ? 100 * a / s : 0 }')
}

# --- run -----------------------------------------------------------------------------------------
bench_log "zone $ZONE, $(wc -l <"$QFILE") query templates, ${RUNS}x${DURATION}s at -Q $RATE per server"
bench_lab_lock 600 || { echo "compare.sh: the lab is busy ($BENCH_LAB_LOCK)" >&2; exit 1; }
LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
awk -v l="$LOAD_START" 'BEGIN { exit !(l > 0.5) }' &&
	bench_log "warning: 1-min load average is $LOAD_START before starting: other work on the machine skews the results"
bench_xdp_off # a stale program from a crashed run would make AF_XDP set-up fail
"$ROOT/scripts/lab.sh" up >&2 || { echo "compare.sh: lab up failed" >&2; exit 1; }
LAB_UP=1
if [ "$BENCH_NAPI" = threaded ]; then
	bench_napi_setup on
	n=$(bench_napi_pin)
	if [ "$n" -lt 2 ]; then
		bench_log "threaded NAPI not available on the veths ($n kthreads); results may flip between runs"
		BENCH_NAPI="softirq (threaded NAPI unavailable)"
	else
		bench_log "veth receive paths: threaded NAPI, $BENCH_POP_IF on CPU $BENCH_SERVER_CPU, $BENCH_CLIENT_IF on CPU $BENCH_CLIENT_CPU"
	fi
fi

for p in "${PEERS[@]}"; do measure "$p"; done

# --- report ------------------------------------------------------------------------------------
DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
COMMIT=$(bench_commit "$ROOT")
MACHINE=$(bench_machine)
LOAD_END=$(cut -d' ' -f1 /proc/loadavg)
CMD="scripts/bench/compare.sh${ORIG_ARGS:+ $ORIG_ARGS}"
GUN="ip netns exec $BENCH_CLIENT_NS taskset -c $BENCH_CLIENT_CPU kxdpgun -t $DURATION -Q $RATE -i QUERIES -I $BENCH_CLIENT_IF${KXDPGUN_ARGS:+ $KXDPGUN_ARGS} $BENCH_SERVER_V4"
versions() {
	local v=()
	command -v knotd >/dev/null && v+=("$(knotd --version 2>&1 | grep -o 'version [0-9.]*' | sed 's/version /knotd /')")
	command -v nsd >/dev/null && v+=("$(nsd -v 2>&1 | head -1 | sed 's/ version / /')")
	command -v kxdpgun >/dev/null && v+=("$(kxdpgun -V 2>&1 | grep -o 'version [0-9.]*' | sed 's/version /kxdpgun /')")
	local IFS=,; echo "${v[*]}" | sed 's/,/, /g'
}

{
	echo
	echo "- Date: $DATE"
	echo "- Commit: $COMMIT"
	echo "- Machine: $MACHINE; 1-min load average $LOAD_START before, $LOAD_END after (the benchmark itself adds about 2; more means other work shared the cores)"
	echo "- Software: $(versions)"
	echo "- Command: \`$CMD\` (${RUNS} runs of ${DURATION} s per server; the median run is reported)"
	echo "- Generator: \`$GUN\`"
	if [ "$BENCH_NAPI" = threaded ]; then
		echo "- veth receive paths: threaded NAPI, \`napi/$BENCH_POP_IF-*\` pinned to CPU $BENCH_SERVER_CPU with the server, \`napi/$BENCH_CLIENT_IF-*\` to CPU $BENCH_CLIENT_CPU with the generator (GRO on both veths)"
	else
		echo "- veth receive paths: $BENCH_NAPI (kernel default; the CPU that runs each side's receive path is decided by a race, results vary between runs)"
	fi
	echo "- Zone: \`${ZONE#"$ROOT"/}\`, $(wc -l <"$QFILE") query templates (\`$(head -3 "$QFILE" | paste -sd, | sed 's/,/, /g'), ...\`)"
	echo
	echo "| server | mode | offered qps (median) | answered qps (median) | answered/offered | vs knotd-XDP |"
	echo "| --- | --- | ---: | ---: | ---: | ---: |"
	for p in "${PEERS[@]}"; do
		if [ -n "${ANS[$p]:-}" ]; then
			vs="—"
			[ -n "${ANS[knotd-xdp]:-}" ] && [ "${ANS[knotd-xdp]}" -gt 0 ] &&
				vs=$(awk -v a="${ANS[$p]}" -v b="${ANS[knotd-xdp]}" 'BEGIN { printf "%.2fx", a / b }')
			echo "| $p | ${MODE[$p]} | $(bench_fmt_int "${SENT[$p]}") | $(bench_fmt_int "${ANS[$p]}") | ${RATIO[$p]} | $vs |"
		else
			echo "| $p | ${MODE[$p]} | not measured: $(tr '|\n' '/ ' <<<"${REASON[$p]:-unknown}") | | | |"
		fi
	done
	echo
	for p in "${PEERS[@]}"; do
		[ -n "${RUNLIST[$p]:-}" ] && echo "- $p answered qps per run: $(for x in ${RUNLIST[$p]}; do bench_fmt_int "$x"; printf ' '; done | sed 's/ $//; s/ /, /g')${NOTE[$p]:+; ${NOTE[$p]}}"
		[ -z "${RUNLIST[$p]:-}" ] && [ -n "${NOTE[$p]:-}" ] && echo "- $p: ${NOTE[$p]}"
	done
	echo
} >"$TMP/section.md"

cat "$TMP/section.md"

if [ "$WRITE" = 1 ]; then
	if [ ! -f "$DOC" ]; then
		mkdir -p "$(dirname "$DOC")"
		cat >"$DOC" <<'EOF'
# Benchmarks

## Lab comparison

`scripts/bench/compare.sh` serves the same zone from pop53d and from its peers (see the
section's notes) in the lab and measures each with kxdpgun. The section between the markers
below is rewritten by each run.

<!-- compare:begin -->
<!-- compare:end -->
EOF
	fi
	bench_md_replace "$DOC" "$BEGIN_MARK" "$END_MARK" "$TMP/section.md"
	bench_log "wrote the results into ${DOC#"$ROOT"/}"
fi
exit 0
