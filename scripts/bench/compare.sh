#!/usr/bin/env bash
# Side-by-side benchmark: pop53d, knotd (kernel UDP), knotd (XDP) and NSD serve the same zone
# in the lab, one after the other, on the same pinned CPU; kxdpgun in the client namespace
# offers a saturating rate and counts the answers, then dnsperf (kernel sockets, the tool
# users run) measures completed qps and latency. See docs/BENCHMARKS.md.
#
# Usage: scripts/bench/compare.sh [--duration N] [--runs N] [--rate QPS]
#            [--dnsperf-rate QPS|0] [--dnsperf-outstanding N] [--no-dnsperf] [--wait-quiet SECONDS]
#            [--limits-only]
#            [--only pop53,knotd,knotd-xdp,nsd] [--napi threaded|softirq] [--no-write] [--keep-lab]
# Environment: ZONE (zone file, default zones/example.com.zone), BUILD (meson build dir with
# control/pop53d, default build), QUERIES (kxdpgun/dnsperf query file; default: made from the
# zone), KXDPGUN_ARGS (extra kxdpgun arguments, e.g. "-b 32"), DNSPERF_ARGS (extra dnsperf
# arguments, e.g. "-e"), POP53_IDLE (busy|adaptive, default adaptive), POP53_DEVARGS, PLOT_OUT
# (with --no-write: write the plot there instead of docs/bench-compare.png).
# Writes docs/BENCHMARKS.md (compare and limits sections) and docs/bench-compare.png.
# Needs root, knotd, kxdpgun, kdig, nsd, dnsperf, gnuplot. Exits 0 when it completes, even if a server could not
# be measured (that server's row says why): it is a benchmark, not a test.
# --napi threaded (default): each veth's receive path runs in a NAPI kthread pinned to its own
# side's CPU (pop: the server CPU, client: the generator CPU); softirq: the kernel default,
# where it runs on whichever CPU wins a race, and results flip between runs (see lib.sh).
# Before each server it looks for other processes above 20 % of a CPU, waits up to
# --wait-quiet seconds (default 120) for them to end, and lists any left in the report.
# --limits-only: no lab; rewrite only the physical-limits section from the replay figures.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/scripts/bench"
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DURATION=5
RUNS=3
RATE=2000000
DNSPERF=1
QUIET_WAIT=120
LIMITS_ONLY=0
DNSPERF_RATE=0
DNSPERF_OUTST=100
DNSPERF_ARGS=${DNSPERF_ARGS:-}
PNG="$ROOT/docs/bench-compare.png"
LIMITS_BEGIN='<!-- limits:begin -->'
LIMITS_END='<!-- limits:end -->'
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

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
	case "$1" in
		--duration) DURATION=${2:?}; shift 2 ;;
		--runs) RUNS=${2:?}; shift 2 ;;
		--rate) RATE=${2:?}; shift 2 ;;
		--dnsperf-rate) DNSPERF_RATE=${2:?}; shift 2 ;;
		--dnsperf-outstanding) DNSPERF_OUTST=${2:?}; shift 2 ;;
		--no-dnsperf) DNSPERF=0; shift ;;
		--wait-quiet) QUIET_WAIT=${2:?}; shift 2 ;;
		--limits-only) LIMITS_ONLY=1; shift ;;
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
[[ $QUIET_WAIT =~ ^[0-9]+$ ]] || { echo "compare.sh: --wait-quiet needs seconds (0: do not wait)" >&2; exit 2; }
[[ $DNSPERF_RATE =~ ^[0-9]+$ ]] || { echo "compare.sh: --dnsperf-rate needs an integer (0: no -Q)" >&2; exit 2; }
[[ $DNSPERF_OUTST =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: --dnsperf-outstanding needs a positive integer" >&2; exit 2; }
if [ "$DNSPERF" = 1 ] && ! command -v dnsperf >/dev/null; then
	echo "compare.sh: dnsperf not found: measuring with kxdpgun only" >&2; DNSPERF=0
fi
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
LOCKED=0

# shellcheck disable=SC2317 # invoked by the trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "${BENCH_SERVER_PID:-}" ]; then bench_stop_pid "$BENCH_SERVER_PID" 10; fi
	# Only with the lab lock held: without it the lab (and its XDP programs) is someone else's.
	[ "$LOCKED" = 1 ] && bench_xdp_off
	[ "$LAB_UP" = 1 ] && [ "$BENCH_NAPI" = threaded ] && bench_napi_setup off
	if [ "$LAB_UP" = 1 ] && [ "$KEEP_LAB" = 0 ]; then "$ROOT/scripts/lab.sh" down >/dev/null 2>&1 || true; fi
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'bench_log "interrupted"; exit 130' INT TERM

# --- physical limits: line rate vs the replay benchmark's cost per query ----------------------------
# The net ns/query of small-a and big-a come from the replay section of $DOC (its timed table);
# the fallbacks are the figures measured when this was written.
replay_ns() { # MIX -> net ns/q from the replay section's timed table, or nothing
	[ -f "$DOC" ] || return 0
	awk -v mix="$1" '
		$0 == "<!-- replay:begin -->" { in_r = 1; next }
		$0 == "<!-- replay:end -->" { in_r = 0 }
		in_r && /^### Timed/ { timed = 1 }
		in_r && /^### Instructions/ { timed = 0 }
		in_r && timed && index($0, "| " mix " |") == 1 {
			n = split($0, f, "|"); v = f[6]; gsub(/ /, "", v)
			if (v ~ /^[0-9.]+$/) { print v; exit } }' "$DOC"
}
replay_date() { [ -f "$DOC" ] && awk '$0 == "<!-- replay:begin -->" { r = 1 } r && /^- Date:/ { sub(/^- Date: /, ""); print; exit }' "$DOC"; }
write_limits() { # -> the limits section on stdout
	local small big src date
	small=$(replay_ns small-a); big=$(replay_ns big-a); date=$(replay_date)
	if [ -n "$small" ] && [ -n "$big" ]; then
		src="net ns/query of \`small-a\` and \`big-a\` in the replay section,\nrun ${date:-undated}"
	else
		small=${small:-105}; big=${big:-760}
		src="figures measured when this section was written: no replay table found in this file"
	fi
	echo
	echo "## Physical limits: line rate and cores"
	echo
	echo "How many queries a link can carry, and how many pop53 worker cores that takes at the cost"
	echo -e "per query measured by the replay benchmark ($src): **$small ns** for a positive answer from"
	echo "the small zone, **$big ns** from the 1M-record zone, where cache misses dominate. A frame on"
	echo "the wire also takes 8 bytes of preamble and 12 of inter-frame gap, so"
	echo
	echo '```'
	echo 'pps = link bits/s / ((frame + 20) * 8)        frame: Ethernet header to FCS, at least 64 bytes'
	echo 'cores = pps * ns per query / 1e9'
	echo '```'
	echo
	echo "Frames: a query is Ethernet 14 + IPv4 20 + UDP 8 + DNS 30–45 + FCS 4 = 76–91 bytes, about 80"
	echo "(the lab's dnsperf queries carry 31 bytes of DNS without EDNS; an OPT record adds 11). 64 bytes is"
	echo "the minimum frame, the worst case for a flood of tiny packets. A response is 100–150 bytes (the"
	echo "replay's small-a response: a 110-byte frame before the FCS). IPv6 adds 20 bytes to each."
	echo
	echo "| link | frame (bytes) | on the wire (bytes) | pps at line rate | pop53 cores at $small ns/q (small zone) | pop53 cores at $big ns/q (1M-record zone) |"
	echo "| --- | ---: | ---: | --- | ---: | ---: |"
	local g f
	for g in 10 25 100; do
		for f in 64 80 100 150; do
			awk -v g="$g" -v f="$f" -v s="$small" -v b="$big" 'BEGIN {
				w = f + 20; pps = g * 1e9 / (w * 8)
				what = (f == 64 ? " (minimum)" : (f == 80 ? " (query)" : " (response)"))
				printf "| %d GbE | %d%s | %d | %de9 / (%d * 8) = **%.2f M** | %.1f | %.1f |\n",
					g, f, what, w, g, w, pps / 1e6, pps * s / 1e9, pps * b / 1e9 }'
		done
	done
	echo
	awk -v s="$small" -v b="$big" 'function pps(g, f) { return g * 1e9 / ((f + 20) * 8) }
		function rng(g, ns) { return sprintf("%.1f–%.1f", pps(g, 150) * ns / 1e9, pps(g, 100) * ns / 1e9) }
		BEGIN {
		print "Each query gets one response, and a link is full duplex: queries arrive at the receive line"
		print "rate and responses leave at the transmit line rate, so with responses larger than queries the"
		printf "transmit side binds first: 100–150-byte responses cap one 10 GbE port at %.1f–%.1f M answers/s\n", pps(10, 150) / 1e6, pps(10, 100) / 1e6
		printf "(25 GbE: %.1f–%.1f M; 100 GbE: %.1f–%.1f M), while its receive side could bring in %.1f M\n", pps(25, 150) / 1e6, pps(25, 100) / 1e6, pps(100, 150) / 1e6, pps(100, 100) / 1e6, pps(10, 80) / 1e6
		printf "80-byte queries/s (%.2f M minimum frames). At %s ns/query one pop53 core answers %.1f M\n", pps(10, 64) / 1e6, s, 1000 / s
		printf "queries/s, so a port full of 100–150-byte answers needs %s cores at 10 GbE, %s at 25 GbE\n", rng(10, s), rng(25, s)
		printf "and %s at 100 GbE (a flood of minimum frames at 100 GbE: %.1f cores just to parse them).\n", rng(100, s), pps(100, 64) * s / 1e9
		printf "From a zone too big for the caches (%s ns/query) it is %s, %s and %s cores.\n", b, rng(10, b), rng(25, b), rng(100, b)
		print "These are lower bounds on the cores and upper bounds on what a core does: the replay figure"
		}'
	echo "leaves out the NIC driver's receive and transmit work (and, with af_xdp, the kernel's), and"
	echo "real traffic, skewed towards popular names, misses the caches less than the replay's uniform"
	echo "random owners."
	echo
}

# Insert or replace the limits section: right after the compare section when it is new.
limits_replace() { # FILE: puts $TMP/limits.md in FILE
	local file=$1 tmp
	if grep -qxF "$LIMITS_BEGIN" "$file" && grep -qxF "$LIMITS_END" "$file"; then
		bench_md_replace "$file" "$LIMITS_BEGIN" "$LIMITS_END" "$TMP/limits.md"
		return
	fi
	tmp=$(mktemp "$file.XXXXXX")
	awk -v e="$END_MARK" -v b="$LIMITS_BEGIN" -v le="$LIMITS_END" -v nf="$TMP/limits.md" '
		{ print }
		$0 == e && !done { print ""; print b; while ((getline l < nf) > 0) print l; print le; done = 1 }
		END { if (!done) { print ""; print b; while ((getline l < nf) > 0) print l; print le } }' "$file" >"$tmp"
	chmod --reference="$file" "$tmp" 2>/dev/null || true
	mv "$tmp" "$file"
}

if [ "$LIMITS_ONLY" = 1 ]; then # no lab: recompute the limits section from the replay figures
	write_limits >"$TMP/limits.md"
	cat "$TMP/limits.md"
	[ "$WRITE" = 1 ] && [ -f "$DOC" ] && limits_replace "$DOC" && bench_log "wrote the limits section into ${DOC#"$ROOT"/}"
	exit 0
fi

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
declare -A DP_QPS DP_LOST DP_AVG DP_SD DP_MAX DP_RUNLIST DP_REASON DP_REQ DP_RESP

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
	check_busy "before $peer"
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
	if [ "$DNSPERF" = 1 ]; then
		if kill -0 "$BENCH_SERVER_PID" 2>/dev/null; then
			measure_dnsperf "$peer"
		else
			DP_REASON[$peer]="server not running"
		fi
	fi
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

# dnsperf against the running server, RUNS times; medians of each figure over the runs.
measure_dnsperf() {
	local peer=$1 i out qps lost avg sd max sent compl rq rs
	local -a qpss=() losts=() avgs=() sds=() maxs=() rqs=() rss=()
	sleep 1 # let the last kxdpgun's queries drain
	for ((i = 1; i <= RUNS; i++)); do
		out="$TMP/$peer.dnsperf$i.txt"
		# shellcheck disable=SC2086
		if ! bench_dnsperf "$out" "$DURATION" "$DNSPERF_RATE" "$DNSPERF_OUTST" "$QFILE" $DNSPERF_ARGS; then
			bench_log "$peer dnsperf run $i: failed: $(tail -1 "$out")"
			continue
		fi
		read -r qps lost avg sd max sent compl rq rs < <(bench_parse_dnsperf "$out")
		qpss+=("$qps"); losts+=("$lost"); avgs+=("$avg"); sds+=("$sd"); maxs+=("$max")
		rqs+=("$rq"); rss+=("$rs")
		grep -q 'NOERROR' "$out" || NOTE[$peer]="${NOTE[$peer]:+${NOTE[$peer]}; }dnsperf run $i: no NOERROR responses"
		bench_log "$peer dnsperf run $i/$RUNS: $(printf '%.0f' "$qps") qps completed ($compl of $sent), lost $lost%, latency avg $(awk -v a="$avg" 'BEGIN { printf "%.3f", a * 1000 }') ms, stddev $(awk -v a="$sd" 'BEGIN { printf "%.3f", a * 1000 }') ms, max $(awk -v a="$max" 'BEGIN { printf "%.3f", a * 1000 }') ms"
		if ! kill -0 "$BENCH_SERVER_PID" 2>/dev/null; then
			NOTE[$peer]="${NOTE[$peer]:+${NOTE[$peer]}; }server died during dnsperf run $i"
			break
		fi
	done
	if [ ${#qpss[@]} -eq 0 ]; then DP_REASON[$peer]="dnsperf produced no result"; return; fi
	DP_QPS[$peer]=$(bench_median_f "${qpss[@]}")
	DP_LOST[$peer]=$(bench_median_f "${losts[@]}")
	DP_AVG[$peer]=$(bench_median_f "${avgs[@]}")
	DP_SD[$peer]=$(bench_median_f "${sds[@]}")
	DP_MAX[$peer]=$(bench_median_f "${maxs[@]}")
	DP_REQ[$peer]=$(bench_median_f "${rqs[@]}")
	DP_RESP[$peer]=$(bench_median_f "${rss[@]}")
	DP_RUNLIST[$peer]=$(printf '%.0f ' "${qpss[@]}")
}

# Other work on the cores, sampled while none of ours runs; listed in the report.
DISTURB=""
check_busy() {
	local busy waited=0
	busy=$(bench_busy_procs 20)
	[ -n "$busy" ] || return 0
	if [ "$QUIET_WAIT" -gt 0 ]; then
		bench_log "other work on the machine $1 ($busy): waiting up to ${QUIET_WAIT}s for it to end"
		while [ -n "$busy" ] && [ "$waited" -lt "$QUIET_WAIT" ]; do
			sleep 5; waited=$((waited + 6))
			busy=$(bench_busy_procs 20)
		done
		[ -n "$busy" ] || { bench_log "quiet after ${waited}s"; return 0; }
	fi
	bench_log "warning: other work on the machine $1: $busy"
	DISTURB="${DISTURB:+$DISTURB; }$1: $busy"
}

# --- run -----------------------------------------------------------------------------------------
bench_log "zone $ZONE, $(wc -l <"$QFILE") query templates, ${RUNS}x${DURATION}s at -Q $RATE per server"
bench_lab_lock 600 || { echo "compare.sh: the lab is busy ($BENCH_LAB_LOCK)" >&2; exit 1; }
LOCKED=1
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
check_busy "at the end"

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
	command -v dnsperf >/dev/null && v+=("$(dnsperf -h 2>&1 | grep -o 'Version [0-9.]*' | sed 's/Version /dnsperf /')")
	local IFS=,; echo "${v[*]}" | sed 's/,/, /g'
}
ms() { awk -v a="$1" 'BEGIN { printf "%.3f", a * 1000 }'; } # seconds -> "0.123" (ms)
DPCMD="ip netns exec $BENCH_CLIENT_NS taskset -c $BENCH_CLIENT_CPU dnsperf -s $BENCH_SERVER_V4 -d QUERIES -l $DURATION -c 8$([ "$DNSPERF_RATE" -gt 0 ] && echo " -Q $DNSPERF_RATE") -q $DNSPERF_OUTST -t 1${DNSPERF_ARGS:+ $DNSPERF_ARGS}"

# --- the plot: answered qps per server, kxdpgun and dnsperf side by side --------------------------
PLOTTED=0
make_plot() {
	local out=$1 p k d
	command -v gnuplot >/dev/null || { bench_log "gnuplot not found: no plot"; return 1; }
	: >"$TMP/plot.dat"
	for p in "${PEERS[@]}"; do
		k=${ANS[$p]:-0}; d=${DP_QPS[$p]:-0}
		printf '"%s" %s %.0f\n' "$p" "$k" "$d" >>"$TMP/plot.dat"
	done
	cat >"$TMP/plot.gp" <<EOF
set terminal pngcairo noenhanced size 900,520 font "DejaVu Sans,11"
set output "$out"
set title "pop53 vs peers in the lab: answered queries per second (median of $RUNS x ${DURATION} s)\n$DATE, commit $COMMIT, one server core (CPU $BENCH_SERVER_CPU), generator on CPU $BENCH_CLIENT_CPU" font ",11"
set style data histogram
set style histogram clustered gap 1.5
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top right
set grid ytics
set ylabel "answered qps"
set format y "%.0s%c"
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set xtics nomirror
plot "$TMP/plot.dat" using 2:xtic(1) title "kxdpgun (AF_XDP generator, saturating -Q $RATE)" lc rgb "#1f77b4", \\
     "" using 3 title "dnsperf (kernel UDP, -c 8 -q $DNSPERF_OUTST$([ "$DNSPERF_RATE" -gt 0 ] && echo " -Q $DNSPERF_RATE"))" lc rgb "#ff7f0e", \\
     "" using (\$0 - 0.15):2:(sprintf("%.0fk", \$2 / 1000)) with labels offset 0,0.7 font ",9" notitle, \\
     "" using (\$0 + 0.15):3:(sprintf("%.0fk", \$3 / 1000)) with labels offset 0,0.7 font ",9" notitle
EOF
	gnuplot "$TMP/plot.gp" 2>"$TMP/plot.err" || { bench_log "gnuplot failed: $(tail -1 "$TMP/plot.err")"; return 1; }
	PLOTTED=1
}
if [ "$WRITE" = 1 ]; then make_plot "$PNG"; elif [ -n "${PLOT_OUT:-}" ]; then make_plot "$PLOT_OUT"; fi

{
	echo
	echo "- Date: $DATE"
	echo "- Commit: $COMMIT"
	echo "- Machine: $MACHINE; 1-min load average $LOAD_START before, $LOAD_END after (the benchmark itself adds about 2; more means other work shared the cores)"
	echo "- Other processes above 20 % of a CPU, sampled before each server (after waiting up to ${QUIET_WAIT} s for quiet) and at the end: ${DISTURB:-none}"
	echo "- Software: $(versions)"
	echo "- Command: \`$CMD\` (${RUNS} run$([ "$RUNS" -gt 1 ] && echo s) of ${DURATION} s per server with each tool; each figure is the median of its runs)"
	echo "- Generator: \`$GUN\`"
	[ "$DNSPERF" = 1 ] && echo "- dnsperf: \`$DPCMD\` (after the kxdpgun runs, against the same server process)"
	if [ "$BENCH_NAPI" = threaded ]; then
		echo "- veth receive paths: threaded NAPI, \`napi/$BENCH_POP_IF-*\` pinned to CPU $BENCH_SERVER_CPU with the server, \`napi/$BENCH_CLIENT_IF-*\` to CPU $BENCH_CLIENT_CPU with the generator (GRO on both veths)"
	else
		echo "- veth receive paths: $BENCH_NAPI (kernel default; the CPU that runs each side's receive path is decided by a race, results vary between runs)"
	fi
	echo "- Zone: \`${ZONE#"$ROOT"/}\`, $(wc -l <"$QFILE") query templates (\`$(head -3 "$QFILE" | paste -sd, | sed 's/,/, /g'), ...\`)"
	echo
	if [ "$DNSPERF" = 1 ]; then
		echo "| server | mode | kxdpgun offered qps | kxdpgun answered qps | answered/offered | vs knotd-XDP | dnsperf qps | dnsperf lost | dnsperf avg latency ms | latency stddev / max ms |"
		echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	else
		echo "| server | mode | kxdpgun offered qps | kxdpgun answered qps | answered/offered | vs knotd-XDP |"
		echo "| --- | --- | ---: | ---: | ---: | ---: |"
	fi
	for p in "${PEERS[@]}"; do
		dp=""
		if [ "$DNSPERF" = 1 ]; then
			if [ -n "${DP_QPS[$p]:-}" ]; then
				dp=" $(bench_fmt_int "$(printf '%.0f' "${DP_QPS[$p]}")") | ${DP_LOST[$p]}% | $(ms "${DP_AVG[$p]}") | $(ms "${DP_SD[$p]}") / $(ms "${DP_MAX[$p]}") |"
			else
				dp=" not measured: $(tr '|\n' '/ ' <<<"${DP_REASON[$p]:-${REASON[$p]:-unknown}}") | | | |"
			fi
		fi
		if [ -n "${ANS[$p]:-}" ]; then
			vs="—"
			[ -n "${ANS[knotd-xdp]:-}" ] && [ "${ANS[knotd-xdp]}" -gt 0 ] &&
				vs=$(awk -v a="${ANS[$p]}" -v b="${ANS[knotd-xdp]}" 'BEGIN { printf "%.2fx", a / b }')
			echo "| $p | ${MODE[$p]} | $(bench_fmt_int "${SENT[$p]}") | $(bench_fmt_int "${ANS[$p]}") | ${RATIO[$p]} | $vs |$dp"
		else
			echo "| $p | ${MODE[$p]} | not measured: $(tr '|\n' '/ ' <<<"${REASON[$p]:-unknown}") | | | |$dp"
		fi
	done
	echo
	for p in "${PEERS[@]}"; do
		line=""
		[ -n "${RUNLIST[$p]:-}" ] && line="kxdpgun answered qps per run: $(for x in ${RUNLIST[$p]}; do bench_fmt_int "$x"; printf ' '; done | sed 's/ $//; s/ /, /g')"
		[ -n "${DP_RUNLIST[$p]:-}" ] && line="${line:+$line; }dnsperf qps per run: $(for x in ${DP_RUNLIST[$p]}; do bench_fmt_int "$x"; printf ' '; done | sed 's/ $//; s/ /, /g') (average packet size: query ${DP_REQ[$p]} B, response ${DP_RESP[$p]} B of DNS)"
		[ -n "${NOTE[$p]:-}" ] && line="${line:+$line; }${NOTE[$p]}"
		[ -n "$line" ] && echo "- $p: $line"
	done
	echo
	if [ "$PLOTTED" = 1 ]; then
		echo "![Answered qps per server, kxdpgun and dnsperf, from this run]($(basename "$PNG"))"
		echo
	fi
	if [ "$DNSPERF" = 1 ]; then
		echo "**kxdpgun and dnsperf measure different things.** kxdpgun offers far more than any server"
		echo "answers here and counts replies: what the server keeps answering on one core while overloaded,"
		echo "minus what the generator's own core leaves. dnsperf is what operators run: one thread on kernel"
		if [ "$DNSPERF_RATE" -gt 0 ]; then
			echo "UDP sockets (8 sockets, at most $DNSPERF_OUTST queries in flight, paced to $DNSPERF_RATE qps),"
		else
			echo "UDP sockets (8 sockets, at most $DNSPERF_OUTST queries in flight, a new one sent as each answer arrives),"
		fi
		echo "so it does not overload a server, and from its one core (shared with the client veth's receive"
		echo "path) it completes at most about 180k qps on this machine: the XDP servers are faster than it can"
		echo "show. The kernel-socket servers answer more under dnsperf than under kxdpgun's overload, where their"
		echo "socket buffer overflows and the core goes to receiving packets that are then dropped. dnsperf's"
		echo "latency is loaded latency (a query waits behind up to $DNSPERF_OUTST others in the sockets and the server),"
		echo "not one query's service time. Lost = no answer within 1 s."
		echo "The servers do not send the same answers: the per-server lines give dnsperf's average response"
		echo "size, larger for a server that adds authority NS and glue records to positive answers."
		echo
	fi
	echo "**pop53's idle mode in the lab is \`adaptive\`** (\`POP53_IDLE=busy\` to change it): on a veth the"
	echo "kernel's receive work for \`$BENCH_POP_IF\` (the XDP program and the copy into the AF_XDP ring) runs in a"
	echo "NAPI thread on the server's own CPU, and a busy-polling worker took that CPU from it, starving its own"
	echo "receive path (62k qps busy against about 300k adaptive). Adaptive idle sleeps 1–200 µs when the ring"
	echo "is empty, which hands the core to the kernel side; with a NIC whose interrupts and NAPI run on another"
	echo "core, \`busy\` is the mode for a dedicated core."
	echo
} >"$TMP/section.md"
write_limits >"$TMP/limits.md"

cat "$TMP/section.md" "$TMP/limits.md"

if [ "$WRITE" = 1 ]; then
	if [ ! -f "$DOC" ]; then
		mkdir -p "$(dirname "$DOC")"
		cat >"$DOC" <<'EOF'
# Benchmarks

## Lab comparison

`scripts/bench/compare.sh` serves the same zone from pop53d and from its peers (see the
section's notes) in the lab and measures each with kxdpgun and dnsperf. The section between
the markers below is rewritten by each run.

<!-- compare:begin -->
<!-- compare:end -->
EOF
	fi
	bench_md_replace "$DOC" "$BEGIN_MARK" "$END_MARK" "$TMP/section.md"
	limits_replace "$DOC"
	bench_log "wrote the results into ${DOC#"$ROOT"/}${PLOTTED:+ and }$([ "$PLOTTED" = 1 ] && echo "${PNG#"$ROOT"/}")"
fi
exit 0
