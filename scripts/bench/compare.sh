#!/usr/bin/env bash
# Fair side-by-side benchmark in the lab: dpdk-testpmd (the I/O floor), pop53d, knotd (XDP),
# knotd (kernel UDP) and NSD serve the same queries on the same CPU, kxdpgun in the client
# namespace offers a saturating rate on the other CPU and counts the replies.
#
# Usage: scripts/bench/compare.sh [--duration N] [--rounds N] [--rate QPS]
#            [--napi both|default|threaded] [--only testpmd,pop53,knotd-xdp,knotd,nsd]
#            [--variant NAME='dataplane keys'] ...
#            [--dnsperf] [--dnsperf-rate QPS|0] [--dnsperf-outstanding N]
#            [--wait-quiet SECONDS] [--max-time SECONDS] [--limits-only] [--no-write] [--keep-lab]
# Environment: ZONE (zone file, default zones/example.com.zone), BUILD (meson build dir with
# control/pop53d, dataplane/bpf/steer.bpf.o and scripts/bench/p53-xdp-addrs, default build),
# QUERIES (kxdpgun/dnsperf query file; default: made from the zone), KXDPGUN_ARGS (extra
# kxdpgun arguments), DNSPERF_ARGS, POP53_IDLE (busy|adaptive, default adaptive), POP53_DEVARGS
# (extra net_af_xdp devargs, given to pop53d AND testpmd: the same port), PLOT_OUT (with
# --no-write: write the plot there instead of docs/bench-compare.png).
# Writes docs/BENCHMARKS.md (compare and limits sections) and docs/bench-compare.png.
#
# What makes it fair (docs/BENCHMARKS.md, /work/shared/design.md "measuring traps"):
# - Every thread of every server on the server CPU: after a server answers, all its threads
#   (and NSD's child processes' threads) are re-pinned with `taskset -a -p -c CPU`, because
#   knotd pins its own workers to CPUs 0..N whatever taskset said at start; each thread's
#   Cpus_allowed_list is then read back, printed in the report, and checked again after every
#   run. A thread off its CPU stops the benchmark: exit 3, nothing is written.
# - kxdpgun on the client CPU (its threads re-pinned and read back too), servers on the other.
# - Both NAPI modes in one run (--napi both, the default): the kernel default (veth receive
#   work in softirq, on whichever CPU schedules it) and threaded NAPI with each veth's kthread
#   pinned to its side's CPU; each mode has its own table and ratios.
# - Rounds: in each round every server is started, checked, measured once and stopped, in a
#   rotated order, so all meet the same machine conditions (the machine is shared); figures
#   are medians over --rounds (default 3).
# - testpmd: `dpdk-testpmd --forward-mode=5tswap` on the same net_af_xdp port (same devargs,
#   same steer.bpf.o, its service addresses filled by p53-xdp-addrs) and the same CPU as pop53d;
#   it returns each query with MAC, IP and ports swapped, which kxdpgun counts as a reply: what
#   the port carries when the application does nothing.
# Exit: 0 when it completes, even if a server could not be measured (its row says why; it is a
# benchmark, not a test); 1 for set-up failures (lab lock, lab); 2 for bad usage; 3 when a
# server's thread is off its CPU; 4 when --max-time runs out.
# --limits-only: no lab; rewrite only the physical-limits section from the replay figures.
# --variant NAME='KEYS' (repeatable): one more row, pop53-NAME: pop53d with these dataplane
#   keys (YAML, `;` between keys) over the bench config, measured in the same rounds as the
#   others, e.g. --variant bb0='af_xdp: {busy_budget: 0}' --variant busy='idle: {mode: busy}'
#   --variant b64='burst: 64;idle: {mode: adaptive, spin_polls: 1000}' (docs/CONFIG.md).
# Per round, in each row's notes (load-independent evidence, unlike the rates): the server's
#   system calls per answered query while kxdpgun runs (perf stat on the syscall tracepoints:
#   sendto, recvfrom, poll/ppoll, sleeps, all), the NET_RX softirqs on each CPU (where the veth
#   receive work ran); for pop53 also its AF_XDP socket's drop counters at exit (rx_ring_full:
#   the worker had not emptied the RX ring; rx_dropped: no fill-ring buffer). --no-perf skips
#   perf (needs perf and tracefs).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/scripts/bench"
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DURATION=5
ROUNDS=3
RATE=2000000
DNSPERF=0
PERF=1
QUIET_WAIT=120
MAX_TIME=3600
LIMITS_ONLY=0
DNSPERF_RATE=0
DNSPERF_OUTST=100
DNSPERF_ARGS=${DNSPERF_ARGS:-}
PNG="$ROOT/docs/bench-compare.png"
LIMITS_BEGIN='<!-- limits:begin -->'
LIMITS_END='<!-- limits:end -->'
ONLY="testpmd,pop53,knotd-xdp,knotd,nsd"
WRITE=1
KEEP_LAB=0
NAPI_ARG=both
VARIANTS=()
declare -A VARIANT_KEYS
ORIG_ARGS=""
for a in "$@"; do # as typed: an argument with spaces (a --variant's keys) quoted again
	[[ $a == *[[:space:]]* ]] && a="'$a'"
	ORIG_ARGS+="${ORIG_ARGS:+ }$a"
done
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

usage() { sed -n '2,49p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
	case "$1" in
		--duration) DURATION=${2:?}; shift 2 ;;
		--rounds|--runs) ROUNDS=${2:?}; shift 2 ;;
		--rate) RATE=${2:?}; shift 2 ;;
		--dnsperf) DNSPERF=1; shift ;;
		--no-dnsperf) DNSPERF=0; shift ;;
		--no-perf) PERF=0; shift ;;
		--dnsperf-rate) DNSPERF_RATE=${2:?}; shift 2 ;;
		--dnsperf-outstanding) DNSPERF_OUTST=${2:?}; shift 2 ;;
		--wait-quiet) QUIET_WAIT=${2:?}; shift 2 ;;
		--max-time) MAX_TIME=${2:?}; shift 2 ;;
		--limits-only) LIMITS_ONLY=1; shift ;;
		--only) ONLY=${2:?}; shift 2 ;;
		--no-write) WRITE=0; shift ;;
		--keep-lab) KEEP_LAB=1; shift ;;
		--napi) NAPI_ARG=${2:?}; shift 2 ;;
		--variant) VARIANTS+=("${2:?}"); shift 2 ;;
		-h|--help) usage 0 ;;
		*) echo "compare.sh: unknown argument: $1" >&2; usage 2 ;;
	esac
done
for v in DURATION ROUNDS RATE MAX_TIME; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: --${v,,} needs a positive integer" >&2; exit 2; }
done
[ "$ROUNDS" -le 20 ] || { echo "compare.sh: --rounds at most 20" >&2; exit 2; }
[ "$DURATION" -le 120 ] || { echo "compare.sh: --duration at most 120 s" >&2; exit 2; }
[[ $QUIET_WAIT =~ ^[0-9]+$ ]] || { echo "compare.sh: --wait-quiet needs seconds (0: do not wait)" >&2; exit 2; }
[[ $DNSPERF_RATE =~ ^[0-9]+$ ]] || { echo "compare.sh: --dnsperf-rate needs an integer (0: no -Q)" >&2; exit 2; }
[[ $DNSPERF_OUTST =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: --dnsperf-outstanding needs a positive integer" >&2; exit 2; }
case "$NAPI_ARG" in
	both) NAPI_MODES=(default threaded) ;;
	default|softirq) NAPI_MODES=(default) ;;
	threaded) NAPI_MODES=(threaded) ;;
	*) echo "compare.sh: --napi both|default|threaded" >&2; exit 2 ;;
esac
IFS=, read -r -a PEERS <<<"$ONLY"
for p in "${PEERS[@]}"; do
	case "$p" in testpmd|pop53|knotd|knotd-xdp|nsd) ;; *) echo "compare.sh: unknown server '$p' in --only" >&2; exit 2 ;; esac
done
for v in "${VARIANTS[@]}"; do
	name=${v%%=*}
	[[ $v == *=* && $name =~ ^[a-z0-9_]{1,16}$ && -n ${v#*=} ]] ||
		{ echo "compare.sh: --variant NAME='dataplane keys' (NAME: a-z0-9_, up to 16)" >&2; exit 2; }
	[ -z "${VARIANT_KEYS[$name]:-}" ] || { echo "compare.sh: --variant $name given twice" >&2; exit 2; }
	VARIANT_KEYS[$name]=${v#*=}
	PEERS+=("pop53-$name")
done

if [ "$LIMITS_ONLY" = 0 ]; then
	if [ "$DNSPERF" = 1 ] && ! command -v dnsperf >/dev/null; then
		echo "compare.sh: dnsperf not found: measuring with kxdpgun only" >&2; DNSPERF=0
	fi
	[ "$(id -u)" = 0 ] || { echo "compare.sh: needs root (namespaces, XDP)" >&2; exit 2; }
	for tool in kxdpgun kdig taskset ethtool; do
		command -v "$tool" >/dev/null || { echo "compare.sh: $tool not found" >&2; exit 2; }
	done
fi

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
GUN_PID=
LAB_UP=0
LOCKED=0
BENCH_NAPI=default
NAPI_DEFAULT_GRO=
NAPI_DEFAULT_THREADED=

# Put the veths back in the kernel-default NAPI state recorded when the lab came up.
napi_restore() {
	local ns_if ns ifc
	for ns_if in "$BENCH_POP_NS:$BENCH_POP_IF" "$BENCH_CLIENT_NS:$BENCH_CLIENT_IF"; do
		ns=${ns_if%%:*} ifc=${ns_if##*:}
		ip netns exec "$ns" sh -c "echo ${NAPI_DEFAULT_THREADED:-0} > /sys/class/net/$ifc/threaded" 2>/dev/null || true
		ip netns exec "$ns" ethtool -K "$ifc" gro "${NAPI_DEFAULT_GRO:-off}" >/dev/null 2>&1 || true
	done
}

# shellcheck disable=SC2317 # invoked by the trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "${GUN_PID:-}" ]; then bench_stop_pid "$GUN_PID" 5; fi
	if [ -n "${BENCH_SERVER_PID:-}" ]; then bench_stop_pid "$BENCH_SERVER_PID" 10; fi
	# Only with the lab lock held: without it the lab (and its XDP programs) is someone else's.
	[ "$LOCKED" = 1 ] && bench_xdp_off
	[ "$LAB_UP" = 1 ] && napi_restore
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
# and returns 1. NOTE[mode/peer] collects remarks for the docs.
declare -A NOTE MODE REASON SENTS ANSS RATIOS AFF GUN_AFF DPQS DPLOSTS DPAVGS
# pop53d, or a variant (pop53-NAME): the variant's dataplane keys replace the bench config's
# (idle) or are added to it.
start_pop53() { # [VARIANT]
	local bin="$BUILD/control/pop53d" dir="$TMP/pop53${1:+-$1}" extra="" idle k line
	local conf="$dir/pop53d.yaml"
	mkdir -p "$dir"
	[ -x "$bin" ] || { START_ERR="$bin not built"; return 1; }
	idle="{mode: ${POP53_IDLE:-adaptive}}"
	if [ -n "${1:-}" ]; then
		while IFS= read -r line; do
			line=$(sed 's/^ *//; s/ *$//' <<<"$line"); [ -n "$line" ] || continue
			k=${line%%:*}
			if [ "$k" = idle ]; then idle=$(sed 's/^idle: *//' <<<"$line"); else extra+="  $line"$'\n'; fi
		done < <(tr ';' '\n' <<<"${VARIANT_KEYS[$1]}")
	fi
	cat >"$conf" <<EOF
server: {identity: bench, control_socket: "$dir/control.sock"}
metrics: {enabled: false}
dataplane:
  eal: ["-l", "$BENCH_SERVER_CPU", "--no-pci", "--in-memory"]
  port: "net_af_xdp0,iface=$BENCH_POP_IF,start_queue=0,queue_count=1${POP53_DEVARGS:+,$POP53_DEVARGS}"
  workers: 1
  addresses: ["$BENCH_SERVER_V4", "$BENCH_SERVER_V6"]
  idle: $idle
${extra}zones: [{name: example.com, file: "$SZONE"}]
EOF
	bench_start_server "$dir/log" "$bin" -c "$conf"
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


# The I/O floor: dpdk-testpmd in 5tswap mode on pop53d's port (same vdev, devargs, XDP program,
# descriptors, burst and mbuf count) and CPU. It needs two lcores (main + one forwarding), both
# mapped onto the server CPU. --stats-period keeps it running without reading stdin (with
# stdin at EOF it would exit at once); stdbuf makes its log readable while it runs.
start_testpmd() {
	local obj="$BUILD/dataplane/bpf/steer.bpf.o" dir="$TMP/testpmd"
	mkdir -p "$dir"
	command -v dpdk-testpmd >/dev/null || { START_ERR="dpdk-testpmd not installed (Debian package dpdk)"; return 1; }
	[ -r "$obj" ] || { START_ERR="$obj not built"; return 1; }
	[ -x "$XDP_ADDRS" ] || { START_ERR="$XDP_ADDRS not built"; return 1; }
	bench_start_server "$dir/log" stdbuf -oL dpdk-testpmd \
		--lcores "0@$BENCH_SERVER_CPU,1@$BENCH_SERVER_CPU" --no-pci --in-memory --log-level='*:notice' \
		--vdev "net_af_xdp0,iface=$BENCH_POP_IF,start_queue=0,queue_count=1,xdp_prog=$obj${POP53_DEVARGS:+,$POP53_DEVARGS}" \
		-- --forward-mode=5tswap --nb-cores=1 --rxq=1 --txq=1 --rxd=2048 --txd=1024 --burst=32 \
		--total-num-mbufs=8191 --stats-period=60
}

# testpmd is ready when the PMD has attached steer.bpf.o and the service addresses are in its
# map (p53-xdp-addrs fails until the program is there). Bounded: 20 s.
wait_testpmd() { # PID -> 0, or prints why not
	local pid=$1 i
	for ((i = 0; i < 40; i++)); do
		kill -0 "$pid" 2>/dev/null || { echo "exited before forwarding"; return 1; }
		if grep -q 'start packet forwarding' "$TMP/testpmd/log" 2>/dev/null &&
			ip netns exec "$BENCH_POP_NS" "$XDP_ADDRS" "$BENCH_POP_IF" "$BENCH_SERVER_V4" "$BENCH_SERVER_V6" \
				2>"$TMP/testpmd/addrs.err"; then
			return 0
		fi
		sleep 0.5
	done
	echo "not forwarding after 20 s: $(tail -1 "$TMP/testpmd/addrs.err" 2>/dev/null)"
	return 1
}

XDP_ADDRS="$BUILD/scripts/bench/p53-xdp-addrs"
MODE[testpmd]="dpdk-testpmd 5tswap on pop53's net_af_xdp port (the I/O floor), 1 forwarding lcore"
MODE[pop53]="AF_XDP (DPDK net_af_xdp), 1 worker, idle ${POP53_IDLE:-adaptive}"
MODE[knotd]="kernel UDP, 1 UDP worker"
MODE[knotd-xdp]="XDP (AF_XDP), 1 queue"
MODE[nsd]="kernel UDP, server-count 1"
for v in "${!VARIANT_KEYS[@]}"; do MODE[pop53-$v]="pop53 as above, dataplane: \`${VARIANT_KEYS[$v]}\`"; done

server_log_tail() { local f; for f in "$TMP"/"$1"/log "$TMP"/"$1"/*.log; do [ -s "$f" ] && tail -3 "$f"; done 2>/dev/null | tr '\n' ' ' | cut -c1-200; }
note() { local k=$1; shift; NOTE[$k]="${NOTE[$k]:+${NOTE[$k]}; }$*"; }

# --- where every thread runs ----------------------------------------------------------------------
# A process and all its descendants (NSD forks its server children), one PID a line. Bounded by
# the process tree; children come from /proc/PID/task/TID/children.
proc_tree() {
	local pid=$1 c
	[ -d "/proc/$pid" ] || return 0
	echo "$pid"
	for c in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do proc_tree "$c"; done
}

# Pin every thread of ROOT and of its descendants to CPU (taskset -a: all threads).
pin_tree() { # ROOT CPU
	local pid
	for pid in $(proc_tree "$1"); do
		taskset -a -p -c "$2" "$pid" >/dev/null 2>&1 ||
			bench_log "taskset -a -p -c $2 $pid ($(cat /proc/"$pid"/comm 2>/dev/null)) failed"
	done
}

# Each thread of ROOT's tree as "comm<TAB>Cpus_allowed_list", read back from /proc.
thread_affinity() { # ROOT
	local pid t
	for pid in $(proc_tree "$1"); do
		for t in /proc/"$pid"/task/*; do
			[ -r "$t/status" ] || continue
			printf '%s\t%s\n' "$(cat "$t/comm" 2>/dev/null)" \
				"$(awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status" 2>/dev/null)"
		done
	done
}

# "comm<TAB>cpus" lines -> "comm: CPU cpus, comm: CPU cpus x3" (identical threads counted).
affinity_summary() {
	sort | uniq -c | awk '{ n = $1; sub(/^ *[0-9]+ /, ""); split($0, f, "\t")
		s = s (s ? ", " : "") f[1] " on CPU " f[2] (n > 1 ? " (x" n ")" : "") } END { print s }'
}

# Refuse to measure when a thread of ROOT's tree is allowed anywhere but CPU: exit 3 (the
# trap stops everything). Sets AFF_LAST to the summary of all threads.
verify_pinned() { # WHAT ROOT CPU
	local what=$1 root=$2 cpu=$3 aff off
	aff=$(thread_affinity "$root")
	off=$(awk -F'\t' -v c="$cpu" '$2 != c' <<<"$aff" | affinity_summary)
	if [ -n "$off" ]; then
		bench_log "refusing to measure: $what has threads off CPU $cpu: $off"
		echo "compare.sh: $what (pid $root): threads not on CPU $cpu after taskset -a -p -c $cpu: $off; all threads: $(affinity_summary <<<"$aff")" >&2
		exit 3
	fi
	AFF_LAST=$(affinity_summary <<<"$aff")
}

# --- one kxdpgun run ----------------------------------------------------------------------------
# kxdpgun from the client namespace on the client CPU. About a second in, its threads are
# re-pinned to the client CPU and read back (GUN_AFF). kxdpgun 3.2 exits 0 even when it cannot
# set up its XDP socket ("requested resource is busy" right after a previous instance), so:
# detach its old program, pause, retry up to 3 times until the output has the totals.
# `timeout` only guards against a hang: kxdpgun stops itself after -t seconds.
run_gun() { # OUTFILE -> 0 when OUTFILE has the totals
	local out=$1 try kp i
	for try in 1 2 3; do
		ip -n "$BENCH_CLIENT_NS" link set "$BENCH_CLIENT_IF" xdp off 2>/dev/null || true
		sleep 0.5
		[ "$BENCH_NAPI" = threaded ] && bench_napi_pin >/dev/null
		# shellcheck disable=SC2086 # KXDPGUN_ARGS is a list of words
		timeout -k 2 $((DURATION + 15)) ip netns exec "$BENCH_CLIENT_NS" taskset -c "$BENCH_CLIENT_CPU" \
			kxdpgun -t "$DURATION" -Q "$RATE" -i "$QFILE" -I "$BENCH_CLIENT_IF" $KXDPGUN_ARGS \
			"$BENCH_SERVER_V4" >"$out" 2>&1 &
		GUN_PID=$!
		kp=""
		for ((i = 0; i < 40; i++)); do
			kp=$(pgrep -P "$GUN_PID" -x kxdpgun | head -1)
			[ -n "$kp" ] && break
			sleep 0.05
		done
		if [ -n "$kp" ]; then
			sleep 1 # its XDP threads start after the socket set-up
			pin_tree "$kp" "$BENCH_CLIENT_CPU"
			verify_pinned kxdpgun "$kp" "$BENCH_CLIENT_CPU"
			[ -n "$AFF_LAST" ] && GUN_AFF[$BENCH_NAPI]=$AFF_LAST
		fi
		wait "$GUN_PID"; GUN_PID=
		grep -q '^total replies:' "$out" && break
		bench_log "kxdpgun attempt $try failed: $(tail -1 "$out")"
		sleep 1
	done
	ip -n "$BENCH_CLIENT_NS" link set "$BENCH_CLIENT_IF" xdp off 2>/dev/null || true
	grep -q '^total replies:' "$out"
}

# Drop counters of both veth ends, "rx_dropped tx_dropped" of p53p then p53c: where queries or
# replies are lost on the way (a full veth ring, an XDP redirect to a full AF_XDP ring).
veth_drops() {
	local ns_if ns ifc
	for ns_if in "$BENCH_POP_NS:$BENCH_POP_IF" "$BENCH_CLIENT_NS:$BENCH_CLIENT_IF"; do
		ns=${ns_if%%:*} ifc=${ns_if##*:}
		ip netns exec "$ns" cat "/sys/class/net/$ifc/statistics/rx_dropped" "/sys/class/net/$ifc/statistics/tx_dropped" 2>/dev/null || echo "0 0"
	done | paste -sd' '
}

# --- load-independent counts while kxdpgun runs -------------------------------------------------
# perf stat on the server's processes (syscalls) and on every CPU (NET_RX softirqs), for
# PERF_SECS seconds from about when kxdpgun starts sending. Runs in the background; perf_read
# turns its output into a note. Off with --no-perf or without perf/tracefs.
PERF_EV_PROC="raw_syscalls:sys_enter,syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom,syscalls:sys_enter_poll,syscalls:sys_enter_ppoll,syscalls:sys_enter_nanosleep,syscalls:sys_enter_clock_nanosleep"
perf_start() { # ROOT OUT
	local pids
	PERF_PID=""
	[ "$PERF" = 1 ] || return 0
	pids=$(proc_tree "$1" | paste -sd,)
	PERF_SECS=$((DURATION > 3 ? DURATION - 2 : 1))
	( sleep 1.5
	  perf stat -x, -o "$2.proc" -e "$PERF_EV_PROC" -p "$pids" -- sleep "$PERF_SECS" 2>/dev/null &
	  perf stat -x, -o "$2.cpu" -a -A -e irq:softirq_entry --filter 'vec == 3' -- sleep "$PERF_SECS" 2>/dev/null &
	  wait ) &
	PERF_PID=$!
}
perf_wait() { [ -z "${PERF_PID:-}" ] || wait "$PERF_PID" 2>/dev/null; PERF_PID=""; }

# -> "syscalls per answered query: sendto S, recvfrom R, poll P, sleep Z, all A; NET_RX softirqs
# CPU0 N, CPU1 M (per second)". ANSWERED_QPS: the round's answered rate. After perf_wait.
perf_read() { # OUT ANSWERED_QPS
	[ -s "$1.proc" ] || return 0
	awk -F, -v q="$2" -v t="$PERF_SECS" -v cpuf="$1.cpu" '
		$3 ~ /sys_enter/ { n[$3] += $1 }
		END {
			d = q * t; if (d <= 0) d = 1
			printf "syscalls per answered query: sendto %.3f, recvfrom %.3f, poll %.3f, sleep %.3f, all %.3f",
				n["syscalls:sys_enter_sendto"] / d, n["syscalls:sys_enter_recvfrom"] / d,
				(n["syscalls:sys_enter_poll"] + n["syscalls:sys_enter_ppoll"]) / d,
				(n["syscalls:sys_enter_nanosleep"] + n["syscalls:sys_enter_clock_nanosleep"]) / d,
				n["raw_syscalls:sys_enter"] / d
			s = ""
			while ((getline line < cpuf) > 0) {
				split(line, f, ",")
				if (f[1] ~ /^CPU[0-9]+$/ && f[2] ~ /^[0-9]+$/) s = s (s ? ", " : "") f[1] " " int(f[2] / t) "/s"
			}
			if (s != "") printf "; NET_RX softirqs %s", s
		}' "$1.proc"
}

# --- one server, one round ------------------------------------------------------------------------
# Start, wait until it answers, pin and check every thread, one kxdpgun run (and one dnsperf
# run with --dnsperf), check the threads again, stop. Per-round figures are appended to the
# lists keyed "mode/peer".
slot() { # PEER ROUND
	local peer=$1 round=$2 key="$BENCH_NAPI/$1" reason out sent rep noerr dur line
	bench_log "== [$BENCH_NAPI, round $round/$ROUNDS] $peer: ${MODE[$peer]}"
	bench_xdp_off # a stale program (crashed run) makes AF_XDP set-up fail on p53p
	START_ERR=""; BENCH_SERVER_PID=""
	case "$peer" in
		testpmd) start_testpmd ;;
		pop53) start_pop53 ;;
		pop53-*) start_pop53 "${peer#pop53-}" ;;
		knotd) start_knotd ;;
		knotd-xdp) start_knotd xdp ;;
		nsd) start_nsd ;;
	esac
	if [ -n "$START_ERR" ] || [ -z "$BENCH_SERVER_PID" ]; then
		REASON[$key]="${START_ERR:-could not start}"; bench_log "$peer: not measured: ${REASON[$key]}"; return
	fi
	if [ "$peer" = testpmd ]; then
		reason=$(wait_testpmd "$BENCH_SERVER_PID")
	else
		reason=$(bench_wait_ready "$BENCH_SERVER_PID" 10 "$BENCH_SERVER_V4" "$CHECK_NAME" "$CHECK_TYPE" "$CHECK_EXPECT")
	fi
	# shellcheck disable=SC2181 # the status of the assignment above
	if [ $? -ne 0 ]; then
		local tail; tail=$(server_log_tail "$peer")
		REASON[$key]="round $round: $reason${tail:+ — log: $tail}"
		bench_log "$peer: not measured this round: ${REASON[$key]}"
		bench_stop_pid "$BENCH_SERVER_PID" 10; BENCH_SERVER_PID=
		bench_xdp_off
		return
	fi
	pin_tree "$BENCH_SERVER_PID" "$BENCH_SERVER_CPU"
	verify_pinned "$peer" "$BENCH_SERVER_PID" "$BENCH_SERVER_CPU"
	[ -n "${AFF[$key]:-}" ] || AFF[$key]=$AFF_LAST
	[ "$BENCH_NAPI" = threaded ] && bench_napi_pin >/dev/null # an XDP attach may re-create a NAPI
	if [ "$round" = 1 ] && [ "$peer" != testpmd ]; then
		reason=$(bench_check_answer "$BENCH_SERVER_V6" "$CHECK_NAME" "$CHECK_TYPE" "$CHECK_EXPECT") ||
			note "$key" "IPv6 check failed: $reason"
	fi
	if [ "$peer" = knotd-xdp ] && [ "$round" = 1 ] && ! bench_xdp_attached "$BENCH_POP_NS" "$BENCH_POP_IF"; then
		note "$key" "no XDP program on $BENCH_POP_IF: answered by kernel sockets"
	fi
	out="$TMP/$BENCH_NAPI.$peer.round$round.txt"
	local d0 d1
	d0=$(veth_drops)
	perf_start "$BENCH_SERVER_PID" "$out"
	run_gun "$out"; local gun_ok=$?
	perf_wait
	if [ "$gun_ok" = 0 ] && read -r sent rep noerr dur < <(bench_parse_kxdpgun "$out"); then
		[[ ${dur:-} =~ ^[0-9]+$ ]] && [ "$dur" -gt 0 ] || dur=$DURATION
		SENTS[$key]+="$((sent / dur)) "
		ANSS[$key]+="$((rep / dur)) "
		RATIOS[$key]+="$(awk -v a="$rep" -v s="$sent" 'BEGIN { printf "%.4f", s ? a / s : 0 }') "
		[ "$noerr" = "$rep" ] || note "$key" "round $round: only $noerr of $rep replies NOERROR"
		bench_log "$peer round $round: sent $(bench_fmt_int $((sent / dur))) qps, answered $(bench_fmt_int $((rep / dur))) qps ($(awk -v a="$rep" -v s="$sent" 'BEGIN { printf "%.1f", s ? 100 * a / s : 0 }')%)"
		d1=$(veth_drops)
		note "$key" "round $round veth drops (p53p rx/tx, p53c rx/tx): $(awk -v a="$d0" -v b="$d1" 'BEGIN { n = split(a, x, " "); split(b, y, " "); for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? (i == 3 ? ", " : "/") : ""), y[i] - x[i] }')"
		line=$(perf_read "$out" $((rep / dur)))
		[ -n "$line" ] && note "$key" "round $round $line"
	else
		bench_log "$peer round $round: kxdpgun failed: $(tail -1 "$out")"
		note "$key" "round $round: kxdpgun failed"
	fi
	if kill -0 "$BENCH_SERVER_PID" 2>/dev/null; then
		verify_pinned "$peer" "$BENCH_SERVER_PID" "$BENCH_SERVER_CPU" # new threads during the run?
		if [ "$DNSPERF" = 1 ] && [ "$peer" != testpmd ]; then run_dnsperf "$key" "$round"; fi
	else
		note "$key" "server died during round $round"
	fi
	bench_stop_pid "$BENCH_SERVER_PID" 10; BENCH_SERVER_PID=
	if [[ $peer == pop53* ]]; then # the worker's own counts, logged at exit
		line=$(grep -o 'worker 0 (lcore [0-9]*): .*' "$TMP/$peer/log" 2>/dev/null | tail -1 | sed 's/worker 0 (lcore [0-9]*): //')
		[ -n "$line" ] && note "$key" "round $round worker: $line"
		line=$(grep -o 'port [^ ]*: ipackets .*' "$TMP/$peer/log" 2>/dev/null | tail -1 | sed 's/^port [^ ]*: //')
		[ -n "$line" ] && note "$key" "round $round port: $line"
		line=$(grep -o '[0-9]* rx / [0-9]* tx descriptors\|[0-9]* mbufs held by the driver' "$TMP/$peer/log" 2>/dev/null | head -2 | paste -sd' ' | sed 's/ tx descriptors / tx descriptors, /')
		[ -n "$line" ] && [ "$round" = 1 ] && note "$key" "port set-up: $line"
		line=$(grep -o 'port [^ ]*: AF_XDP sockets: .*' "$TMP/$peer/log" 2>/dev/null | tail -1 | sed 's/^port [^ ]*: //')
		[ -n "$line" ] && note "$key" "round $round port: $line"
	fi
	bench_xdp_off # knotd-xdp, testpmd and pop53d leave their program on p53p
}

# dnsperf against the running server, once (--dnsperf).
run_dnsperf() { # KEY ROUND
	local key=$1 round=$2 out qps lost avg sent compl
	out="$TMP/${key/\//.}.dnsperf$round.txt"
	sleep 1 # let the last kxdpgun's queries drain
	# shellcheck disable=SC2086
	if ! bench_dnsperf "$out" "$DURATION" "$DNSPERF_RATE" "$DNSPERF_OUTST" "$QFILE" $DNSPERF_ARGS; then
		bench_log "${key#*/} dnsperf round $round: failed: $(tail -1 "$out")"; return
	fi
	read -r qps lost avg _ _ sent compl _ < <(bench_parse_dnsperf "$out")
	DPQS[$key]+="$qps "; DPLOSTS[$key]+="$lost "; DPAVGS[$key]+="$avg "
	bench_log "${key#*/} dnsperf round $round: $(printf '%.0f' "$qps") qps completed ($compl of $sent), lost $lost%"
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
bench_lab_lock 600 || { echo "compare.sh: the lab is busy ($BENCH_LAB_LOCK)" >&2; exit 1; }
LOCKED=1
bench_log "zone $ZONE, $(wc -l <"$QFILE") query templates; ${ROUNDS} rounds of ${DURATION}s at -Q $RATE per server and NAPI mode (${NAPI_MODES[*]})"
LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
awk -v l="$LOAD_START" 'BEGIN { exit !(l > 0.5) }' &&
	bench_log "warning: 1-min load average is $LOAD_START before starting: other work on the machine skews the results"
bench_xdp_off # a stale program from a crashed run would make AF_XDP set-up fail
"$ROOT/scripts/lab.sh" up >&2 || { echo "compare.sh: lab up failed" >&2; exit 1; }
LAB_UP=1
NAPI_DEFAULT_GRO=$(ip netns exec "$BENCH_POP_NS" ethtool -k "$BENCH_POP_IF" 2>/dev/null | awk '/^generic-receive-offload:/ { print $2 }')
NAPI_DEFAULT_THREADED=$(ip netns exec "$BENCH_POP_NS" cat "/sys/class/net/$BENCH_POP_IF/threaded" 2>/dev/null)
declare -A NAPI_DESC NAPI_SKIP
NAPI_DESC[default]="kernel default: threaded NAPI ${NAPI_DEFAULT_THREADED:-0}, GRO ${NAPI_DEFAULT_GRO:-unknown} on the veths; the receive work of a veth runs in softirq on whichever CPU schedules it (with an XDP program attached, usually the sender's)"
NAPI_DESC[threaded]="threaded NAPI: GRO on, \`napi/$BENCH_POP_IF-*\` pinned to CPU $BENCH_SERVER_CPU with the server, \`napi/$BENCH_CLIENT_IF-*\` to CPU $BENCH_CLIENT_CPU with the generator"

START_TIME=$SECONDS
for BENCH_NAPI in "${NAPI_MODES[@]}"; do
	if [ "$BENCH_NAPI" = threaded ]; then
		bench_napi_setup on
		n=$(bench_napi_pin)
		if [ "$n" -lt 2 ]; then
			NAPI_SKIP[threaded]="threaded NAPI not available on the veths ($n kthreads)"
			bench_log "${NAPI_SKIP[threaded]}: mode skipped"
			napi_restore
			continue
		fi
	else
		napi_restore
	fi
	bench_log "NAPI mode: ${NAPI_DESC[$BENCH_NAPI]}"
	for ((r = 1; r <= ROUNDS; r++)); do
		check_busy "before $BENCH_NAPI round $r"
		n=${#PEERS[@]}
		for ((j = 0; j < n; j++)); do
			if ((SECONDS - START_TIME > MAX_TIME)); then
				echo "compare.sh: --max-time ${MAX_TIME}s ran out in $BENCH_NAPI round $r: stopping, nothing written" >&2
				exit 4
			fi
			slot "${PEERS[$(((j + r - 1) % n))]}" "$r"
		done
	done
done
napi_restore
check_busy "at the end"

# --- report ------------------------------------------------------------------------------------
DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
COMMIT=$(bench_commit "$ROOT")
MACHINE=$(bench_machine)
LOAD_END=$(cut -d' ' -f1 /proc/loadavg)
CMD="scripts/bench/compare.sh${ORIG_ARGS:+ $ORIG_ARGS}"
GUN="ip netns exec $BENCH_CLIENT_NS taskset -c $BENCH_CLIENT_CPU kxdpgun -t $DURATION -Q $RATE -i QUERIES -I $BENCH_CLIENT_IF${KXDPGUN_ARGS:+ $KXDPGUN_ARGS} $BENCH_SERVER_V4"
TESTPMD="dpdk-testpmd --lcores 0@$BENCH_SERVER_CPU,1@$BENCH_SERVER_CPU --no-pci --in-memory --vdev net_af_xdp0,iface=$BENCH_POP_IF,start_queue=0,queue_count=1,xdp_prog=steer.bpf.o${POP53_DEVARGS:+,$POP53_DEVARGS} -- --forward-mode=5tswap --nb-cores=1 --rxq=1 --txq=1 --rxd=2048 --txd=1024 --burst=32 --total-num-mbufs=8191"
versions() {
	local v=()
	command -v knotd >/dev/null && v+=("$(knotd --version 2>&1 | grep -o 'version [0-9.]*' | sed 's/version /knotd /')")
	command -v nsd >/dev/null && v+=("$(nsd -v 2>&1 | head -1 | sed 's/ version / /')")
	command -v kxdpgun >/dev/null && v+=("$(kxdpgun -V 2>&1 | grep -o 'version [0-9.]*' | sed 's/version /kxdpgun /')")
	command -v dpdk-testpmd >/dev/null && v+=("DPDK $(dpkg-query -W -f='${Version}' dpdk 2>/dev/null | sed 's/-.*//')")
	[ "$DNSPERF" = 1 ] && v+=("$(dnsperf -h 2>&1 | grep -o 'Version [0-9.]*' | sed 's/Version /dnsperf /')")
	local IFS=,; echo "${v[*]}" | sed 's/,/, /g'
}
# shellcheck disable=SC2086 # the lists are split into numbers on purpose
med() { [ -n "${1:-}" ] && bench_median $1; }   # "a b c" -> median (ints)
# shellcheck disable=SC2086
medf() { [ -n "${1:-}" ] && bench_median_f $1; } # "a b c" -> median (decimals)
pct() { awk -v r="$1" 'BEGIN { printf "%.1f%%", 100 * r }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "—" }'; }
# "a1 a2" "r1 r2" -> "a1 (r1%), a2 (r2%)": each round's answered qps and answered/sent.
round_list() {
	local -a a r
	local i out=""
	read -r -a a <<<"$1"; read -r -a r <<<"$2"
	for i in "${!a[@]}"; do
		out+="${out:+, }$(bench_fmt_int "${a[$i]}") ($(awk -v x="${r[$i]:-0}" 'BEGIN { printf "%.0f", 100 * x }')%)"
	done
	echo "$out"
}

# --- the plot: answered qps per server, one bar per NAPI mode ----------------------------------
PLOTTED=0
make_plot() {
	local out=$1 p m line cols=() i=2
	command -v gnuplot >/dev/null || { bench_log "gnuplot not found: no plot"; return 1; }
	: >"$TMP/plot.dat"
	for p in "${PEERS[@]}"; do
		line="\"$p\""
		for m in "${NAPI_MODES[@]}"; do line+=" $(med "${ANSS[$m/$p]:-}" || echo 0)"; done
		echo "$line" >>"$TMP/plot.dat"
	done
	for m in "${NAPI_MODES[@]}"; do
		[ "$i" = 2 ] && cols+=("\"$TMP/plot.dat\" using $i:xtic(1) title \"NAPI $m\"") ||
			cols+=("\"\" using $i title \"NAPI $m\"")
		i=$((i + 1))
	done
	cat >"$TMP/plot.gp" <<GP
set terminal pngcairo noenhanced size 900,520 font "DejaVu Sans,11"
set output "$out"
set title "Answered qps per server, kxdpgun on CPU $BENCH_CLIENT_CPU at -Q $RATE, every server thread on CPU $BENCH_SERVER_CPU\n(median of $ROUNDS rounds of ${DURATION} s) $DATE, commit $COMMIT" font ",11"
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
plot $(IFS=,; echo "${cols[*]}")
GP
	gnuplot "$TMP/plot.gp" 2>"$TMP/plot.err" || { bench_log "gnuplot failed: $(tail -1 "$TMP/plot.err")"; return 1; }
	PLOTTED=1
}
if [ "$WRITE" = 1 ]; then make_plot "$PNG"; elif [ -n "${PLOT_OUT:-}" ]; then make_plot "$PLOT_OUT"; fi

# One table per NAPI mode.
mode_table() { # MODE
	local m=$1 p key ans sent r tp kx dp
	local tp_ans kx_ans
	tp_ans=$(med "${ANSS[$m/testpmd]:-}"); kx_ans=$(med "${ANSS[$m/knotd-xdp]:-}")
	echo "### NAPI: $m"
	echo
	echo "${NAPI_DESC[$m]}."
	echo
	if [ -n "${NAPI_SKIP[$m]:-}" ]; then echo "Not measured: ${NAPI_SKIP[$m]}."; echo; return; fi
	local hdr="| server | how it runs | sent qps | answered qps | answered/sent | vs testpmd | vs knotd-XDP | per round: answered qps (answered/sent) |"
	local sep="| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
	[ "$DNSPERF" = 1 ] && hdr+=" dnsperf qps | dnsperf lost | dnsperf avg ms |" && sep+=" ---: | ---: | ---: |"
	echo "$hdr"; echo "$sep"
	for p in "${PEERS[@]}"; do
		key="$m/$p"
		dp=""
		if [ "$DNSPERF" = 1 ]; then
			if [ -n "${DPQS[$key]:-}" ]; then
				dp=" $(bench_fmt_int "$(printf '%.0f' "$(medf "${DPQS[$key]}")")") | $(medf "${DPLOSTS[$key]}")% | $(awk -v a="$(medf "${DPAVGS[$key]}")" 'BEGIN { printf "%.3f", a * 1000 }') |"
			else
				dp=" — | | |"
			fi
		fi
		if [ -z "${ANSS[$key]:-}" ]; then
			echo "| $p | ${MODE[$p]} | not measured: $(tr '|\n' '/ ' <<<"${REASON[$key]:-no result}") | | | | | |$dp"
			continue
		fi
		ans=$(med "${ANSS[$key]}"); sent=$(med "${SENTS[$key]}"); r=$(medf "${RATIOS[$key]}")
		tp="—"; [ -n "$tp_ans" ] && tp=$(ratio "$ans" "$tp_ans")
		kx="—"; [ -n "$kx_ans" ] && kx=$(ratio "$ans" "$kx_ans")
		echo "| $p | ${MODE[$p]} | $(bench_fmt_int "$sent") | **$(bench_fmt_int "$ans")** | **$(pct "$r")** | $tp | $kx | $(round_list "${ANSS[$key]}" "${RATIOS[$key]}") |$dp"
	done
	echo
	echo "Threads, re-pinned after start and read back from \`/proc/PID/task/*/status\` (Cpus_allowed_list), checked again after every round:"
	echo
	for p in "${PEERS[@]}"; do
		key="$m/$p"
		[ -n "${AFF[$key]:-}" ] && echo "- $p: ${AFF[$key]}"
	done
	[ -n "${GUN_AFF[$m]:-}" ] && echo "- kxdpgun: ${GUN_AFF[$m]}"
	for p in "${PEERS[@]}"; do
		key="$m/$p"
		[ -n "${NOTE[$key]:-}" ] && echo "- note, $p: ${NOTE[$key]}"
		[ -n "${REASON[$key]:-}" ] && [ -n "${ANSS[$key]:-}" ] && echo "- note, $p: a round was not measured: ${REASON[$key]}"
	done
	echo
}

{
	echo
	echo "- Date: $DATE"
	echo "- Commit: $COMMIT"
	echo "- Machine: $MACHINE; 1-min load average $LOAD_START before, $LOAD_END after (the benchmark itself adds about 2; more means other work shared the cores)"
	echo "- Other processes above 20 % of a CPU, sampled before each round (after waiting up to ${QUIET_WAIT} s for quiet) and at the end: ${DISTURB:-none}"
	echo "- Software: $(versions)"
	echo "- Command: \`$CMD\` ($ROUNDS rounds per NAPI mode; in each round every server is started, measured for ${DURATION} s and stopped, in a rotated order; each figure is the median over the rounds, answered/sent the median of the rounds' ratios)"
	echo "- Generator: \`$GUN\` (kxdpgun's own counts: sent = total queries, answered = total replies, per second of its duration)"
	echo "- Floor: \`$TESTPMD\`, the service addresses put in steer.bpf.o's map by \`p53-xdp-addrs\`"
	[ "$DNSPERF" = 1 ] && echo "- dnsperf: \`ip netns exec $BENCH_CLIENT_NS taskset -c $BENCH_CLIENT_CPU dnsperf -s $BENCH_SERVER_V4 -d QUERIES -l $DURATION -c 8 -q $DNSPERF_OUTST -t 1\` after kxdpgun, same server process"
	echo "- Zone: \`${ZONE#"$ROOT"/}\`, $(wc -l <"$QFILE") query templates (\`$(head -3 "$QFILE" | paste -sd, | sed 's/,/, /g'), ...\`)"
	echo
	for m in "${NAPI_MODES[@]}"; do mode_table "$m"; done
	if [ "$PLOTTED" = 1 ]; then
		echo "![Answered qps per server and NAPI mode, from this run]($(basename "$PNG"))"
		echo
	fi
	echo "**Reading the table.** testpmd answers what the port carries when the application does"
	echo "nothing: a server at testpmd's answered/sent is limited by the generator and the veth, not by"
	echo "itself, and then only instructions per query (scripts/bench/replay.sh) tell servers apart;"
	echo "a server below it is the bottleneck. \"vs\" columns divide answered qps. pop53's idle mode is"
	echo "\`${POP53_IDLE:-adaptive}\` (\`POP53_IDLE=busy\` to change it): with the receive work of \`$BENCH_POP_IF\`"
	echo "on the server's CPU (threaded NAPI), a busy-polling worker starves it."
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
