#!/usr/bin/env bash
# DNS over TCP: `dnsperf -m tcp` against pop53d's TCP server (ONE TCP thread) and knotd's
# TCP (one tcp-worker), one after the other in the same lab session, each pinned to the same
# server CPU with every one of its threads; the generator on the other CPU.
#
# Usage: scripts/bench/tcp.sh [--duration N] [--runs N] [--clients N] [--outstanding N]
#                             [--rate QPS] [--only pop53,knotd] [--wait-quiet SECONDS]
#                             [--no-write] [--keep-lab]
#   --clients N      dnsperf -c: TCP connections (default 8)
#   --outstanding N  dnsperf -q: queries in flight over all connections (default 100)
#   --rate QPS       the latency runs' fixed offered rate, dnsperf -Q (default 5000)
#   --wait-quiet S   before each server, wait up to S seconds (default 300) for other processes
#                    above 20 % of a CPU to end; those still there are listed in the report
# Environment: ZONE (default zones/example.com.zone), BUILD (default build).
# RUNS rounds; in each, each server in turn is started and gets one saturating run (queries per
# second, latency under load) and one run at --rate (latency and CPU per query when not
# saturated); each figure is the median of its rounds. Writes the
# section between <!-- tcp:begin --> and <!-- tcp:end --> of docs/BENCHMARKS.md and prints it.
# Needs root, dnsperf, knotd, kdig. A benchmark, not a test: exits 0 when it completes even if a
# server could not be measured (its row says why).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/scripts/bench"
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DURATION=10
RUNS=5
CLIENTS=8
OUTST=100
LRATE=5000
ONLY="pop53,knotd"
WRITE=1
KEEP_LAB=0
QUIET_WAIT=300
DISTURB=
ORIG_ARGS="$*"
ZONE=${ZONE:-$ROOT/zones/example.com.zone}
BUILD=${BUILD:-$ROOT/build}
DOC="$ROOT/docs/BENCHMARKS.md"
BEGIN_MARK='<!-- tcp:begin -->'
END_MARK='<!-- tcp:end -->'

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
	case "$1" in
		--duration) DURATION=${2:?}; shift 2 ;;
		--runs) RUNS=${2:?}; shift 2 ;;
		--clients) CLIENTS=${2:?}; shift 2 ;;
		--outstanding) OUTST=${2:?}; shift 2 ;;
		--rate) LRATE=${2:?}; shift 2 ;;
		--only) ONLY=${2:?}; shift 2 ;;
		--wait-quiet) QUIET_WAIT=${2:?}; shift 2 ;;
		--no-write) WRITE=0; shift ;;
		--keep-lab) KEEP_LAB=1; shift ;;
		-h|--help) usage 0 ;;
		*) echo "tcp.sh: unknown argument: $1" >&2; usage 2 ;;
	esac
done
for v in DURATION RUNS CLIENTS OUTST LRATE; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "tcp.sh: $v needs a positive integer" >&2; exit 2; }
done
[[ $QUIET_WAIT =~ ^[0-9]+$ ]] || { echo "tcp.sh: --wait-quiet needs seconds" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "tcp.sh: needs root (namespaces, XDP)" >&2; exit 2; }
for tool in dnsperf kdig taskset; do
	command -v "$tool" >/dev/null || { echo "tcp.sh: $tool not found" >&2; exit 2; }
done
IFS=, read -r -a PEERS <<<"$ONLY"
for p in "${PEERS[@]}"; do
	case "$p" in pop53|knotd) ;; *) echo "tcp.sh: unknown server '$p' in --only" >&2; exit 2 ;; esac
done

TMP=$(mktemp -d /tmp/pop53-tcpbench.XXXXXX)
chmod 755 "$TMP"
BENCH_SERVER_PID=
LAB_UP=0
LOCKED=0
# shellcheck disable=SC2317 # invoked by the trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -n "${BENCH_SERVER_PID:-}" ] && bench_stop_pid "$BENCH_SERVER_PID" 10
	[ "$LOCKED" = 1 ] && bench_xdp_off
	[ "$LAB_UP" = 1 ] && bench_napi_setup off
	if [ "$LAB_UP" = 1 ] && [ "$KEEP_LAB" = 0 ]; then "$ROOT/scripts/lab.sh" down >/dev/null 2>&1 || true; fi
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'bench_log "interrupted"; exit 130' INT TERM

# The query mix: every positive A, AAAA, MX, TXT name of the zone, plus its SOA and NS.
ldns-read-zone -z "$ZONE" 2>/dev/null | awk '
	$4 == "SOA" { apex = $1; print substr($1, 1, length($1) - 1), "SOA"; next }
	$4 == "NS" && $1 == apex { if (!ns++) print substr($1, 1, length($1) - 1), "NS"; next }
	$1 ~ /^\*/ { next }
	$4 == "A" || $4 == "AAAA" || $4 == "MX" || $4 == "TXT" { k = $1 " " $4; if (!(k in s)) { s[k] = 1; print substr($1, 1, length($1) - 1), $4 } }' \
	>"$TMP/queries.txt"
[ -s "$TMP/queries.txt" ] || printf '%s\n' "www.example.com A" "example.com SOA" >"$TMP/queries.txt"
cp "$ZONE" "$TMP/zone"

start_pop53() {
	cat >"$TMP/pop53.yaml" <<EOF
server: {identity: bench, control_socket: "$TMP/pop53.sock"}
metrics: {enabled: false}
dataplane:
  eal: ["-l", "$BENCH_SERVER_CPU", "--no-pci", "--in-memory"]
  port: "net_af_xdp0,iface=$BENCH_POP_IF,start_queue=0,queue_count=1"
  workers: 1
  addresses: ["$BENCH_SERVER_V4", "$BENCH_SERVER_V6"]
  idle: {mode: adaptive, max_sleep_us: 10000}
zones: [{name: example.com, file: "$TMP/zone"}]
tcp: {threads: 1, max_per_client: 4096, max_connections: 4096}
EOF
	bench_start_server "$TMP/pop53.log" "$BUILD/control/pop53d" -c "$TMP/pop53.yaml"
}

start_knotd() {
	mkdir -p "$TMP/knotd"
	sed -e "s|@RUNDIR@|$TMP/knotd|g" -e "s|@ZONE@|$TMP/zone|g" -e "s|@XDP@||" \
		"$HERE/peers/knotd.conf.in" >"$TMP/knotd/knot.conf"
	bench_start_server "$TMP/knotd.log" knotd -c "$TMP/knotd/knot.conf"
}

# Other work on the two cores skews everything: wait for it to end, else list it in the report.
check_busy() { # WHEN [max seconds to wait, default --wait-quiet]
	local busy waited=0 max=${2:-$QUIET_WAIT}
	busy=$(bench_busy_procs 20)
	while [ -n "$busy" ] && [ "$waited" -lt "$max" ]; do
		[ "$waited" = 0 ] && bench_log "other work on the machine $1 ($busy): waiting up to ${max}s"
		sleep 5; waited=$((waited + 6))
		busy=$(bench_busy_procs 20)
	done
	[ -z "$busy" ] && return 0
	bench_log "warning: other work on the machine $1: $busy"
	DISTURB="${DISTURB:+$DISTURB; }$1: $busy"
}

declare -A QPS LOST AVG SD MAX LQPS LAVG LSD LMAX AFF REASON RUNQ CPUQ CPUL

# CPU time (ns, from schedstat: exact, where utime/stime are sampled at ticks and miss short
# runs) of the threads that serve TCP: pop53d's p53-tcp-* threads (its worker polls UDP and is
# left out), every thread of knotd.
tcp_cpu_ns() { # PEER PID
	local t sum=0 comm
	for t in /proc/"$2"/task/*; do
		comm=$(cat "$t/comm" 2>/dev/null) || continue
		[ "$1" = pop53 ] && [[ $comm != p53-tcp-* ]] && continue
		sum=$((sum + $(awk '{print $1}' "$t/schedstat" 2>/dev/null || echo 0)))
	done
	echo "$sum"
}
run_dnsperf() { # OUT [extra args]: one run; prints the parsed figures
	local out=$1
	shift
	timeout -k 2 $((DURATION + 20)) ip netns exec "$BENCH_CLIENT_NS" taskset -c "$BENCH_CLIENT_CPU" \
		dnsperf -m tcp -s "$BENCH_SERVER_V4" -d "$TMP/queries.txt" -l "$DURATION" -c "$CLIENTS" -t 2 "$@" \
		>"$out" 2>&1
	bench_parse_dnsperf "$out"
}

# Per-server lists of per-round figures, space-separated (medians at the end).
declare -A L_Q L_L L_A L_S L_M L_LQ L_LA L_LS L_LM L_CQ

# One round for one server: start it, one saturating run and one run at --rate, stop it. The
# servers take turns round by round, so both meet the same weather on a shared machine.
measure_round() { # PEER ROUND
	local peer=$1 r=$2 reason fig t0 t1 compl qps lost avg sd max
	bench_log "== $peer, round $r of $RUNS"
	[ -n "${REASON[$peer]:-}" ] && return # failed to start before: not again
	if [ "$r" = 1 ]; then check_busy "before $peer"; else check_busy "before $peer round $r" 0; fi
	bench_xdp_off
	BENCH_SERVER_PID=
	"start_$peer"
	if ! reason=$(bench_wait_ready "$BENCH_SERVER_PID" 15 "$BENCH_SERVER_V4" www.example.com A 192.0.2.80); then
		REASON[$peer]=$reason
		bench_log "$peer: not measured: $reason"
		bench_stop_pid "$BENCH_SERVER_PID" 10; BENCH_SERVER_PID=
		return
	fi
	if ! ip netns exec "$BENCH_CLIENT_NS" kdig +tcp +time=2 +retry=1 @"$BENCH_SERVER_V4" www.example.com A 2>&1 |
		grep -q '192.0.2.80'; then
		REASON[$peer]="no answer over TCP"
		bench_stop_pid "$BENCH_SERVER_PID" 10; BENCH_SERVER_PID=
		return
	fi
	# Every thread of the server on the server CPU (knotd pins its workers itself at start).
	taskset -a -p -c "$BENCH_SERVER_CPU" "$BENCH_SERVER_PID" >/dev/null 2>&1
	bench_napi_pin >/dev/null
	AFF[$peer]=$(bench_thread_affinity "$BENCH_SERVER_PID")
	[ "$r" = 1 ] && bench_log "$peer threads: ${AFF[$peer]}"
	if fig=$(run_dnsperf "$TMP/$peer.sat$r" -q "$OUTST"); then
		read -r qps lost avg sd max _ _ _ _ <<<"$fig"
		L_Q[$peer]+="$qps "; L_L[$peer]+="$lost "; L_A[$peer]+="$avg "; L_S[$peer]+="$sd "; L_M[$peer]+="$max "
		bench_log "$peer saturating: $(printf '%.0f' "$qps") qps, lost $lost%, avg $(awk -v x="$avg" 'BEGIN{printf "%.3f", x*1000}') ms"
	else
		bench_log "$peer saturating run failed: $(tail -2 "$TMP/$peer.sat$r" | tr '\n' ' ')"
	fi
	t0=$(tcp_cpu_ns "$peer" "$BENCH_SERVER_PID")
	if fig=$(run_dnsperf "$TMP/$peer.lat$r" -q "$OUTST" -Q "$LRATE"); then
		t1=$(tcp_cpu_ns "$peer" "$BENCH_SERVER_PID")
		read -r qps lost avg sd max _ compl _ _ <<<"$fig"
		L_LQ[$peer]+="$qps "; L_LA[$peer]+="$avg "; L_LS[$peer]+="$sd "; L_LM[$peer]+="$max "
		[ "${compl:-0}" -gt 0 ] && L_CQ[$peer]+="$(awk -v t=$((t1 - t0)) -v n="$compl" 'BEGIN { printf "%.2f", t / 1000 / n }') "
		bench_log "$peer at -Q $LRATE: $(printf '%.0f' "$qps") qps, avg $(awk -v x="$avg" 'BEGIN{printf "%.3f", x*1000}') ms"
	fi
	kill -0 "$BENCH_SERVER_PID" 2>/dev/null || bench_log "$peer died during round $r"
	bench_stop_pid "$BENCH_SERVER_PID" 10; BENCH_SERVER_PID=
	bench_xdp_off
}

summarize() { # PEER: the medians of its rounds
	local peer=$1
	[ -n "${L_Q[$peer]:-}" ] || { REASON[$peer]=${REASON[$peer]:-"dnsperf produced no result"}; return; }
	# shellcheck disable=SC2086 # the lists are space-separated numbers
	{
		QPS[$peer]=$(bench_median_f ${L_Q[$peer]}); LOST[$peer]=$(bench_median_f ${L_L[$peer]})
		AVG[$peer]=$(bench_median_f ${L_A[$peer]}); SD[$peer]=$(bench_median_f ${L_S[$peer]})
		MAX[$peer]=$(bench_median_f ${L_M[$peer]})
		RUNQ[$peer]=$(printf '%.0f ' ${L_Q[$peer]})
		if [ -n "${L_LQ[$peer]:-}" ]; then
			LQPS[$peer]=$(bench_median_f ${L_LQ[$peer]}); LAVG[$peer]=$(bench_median_f ${L_LA[$peer]})
			LSD[$peer]=$(bench_median_f ${L_LS[$peer]}); LMAX[$peer]=$(bench_median_f ${L_LM[$peer]})
		fi
		[ -n "${L_CQ[$peer]:-}" ] && CPUQ[$peer]=$(bench_median_f ${L_CQ[$peer]})
		CPUL[$peer]=${L_CQ[$peer]:-}
	}
}

bench_lab_lock 600 || { echo "tcp.sh: the lab is busy ($BENCH_LAB_LOCK)" >&2; exit 1; }
LOCKED=1
LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
bench_xdp_off
"$ROOT/scripts/lab.sh" up >&2 || { echo "tcp.sh: lab up failed" >&2; exit 1; }
LAB_UP=1
bench_napi_setup on
bench_napi_pin >/dev/null
for ((round = 1; round <= RUNS; round++)); do
	for p in "${PEERS[@]}"; do measure_round "$p" "$round"; done
done
for p in "${PEERS[@]}"; do summarize "$p"; done
check_busy "at the end" 0

ms() { awk -v a="$1" 'BEGIN { printf "%.3f", a * 1000 }'; }
DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
DP="ip netns exec $BENCH_CLIENT_NS taskset -c $BENCH_CLIENT_CPU dnsperf -m tcp -s $BENCH_SERVER_V4 -d QUERIES -l $DURATION -c $CLIENTS -t 2 -q $OUTST"
{
	echo
	echo "## DNS over TCP: pop53 (one TCP thread) and knotd"
	echo
	echo "\`scripts/bench/tcp.sh\` runs \`dnsperf -m tcp\` against pop53d's TCP server with **one TCP"
	echo "thread** (\`tcp.threads: 1\`) and against knotd with one TCP worker (\`tcp-workers: 1\`), taking"
	echo "turns round by round in one lab session (each round restarts the server for one saturating and"
	echo "one fixed-rate run), so both meet the same conditions on a shared machine. Each server starts pinned to CPU $BENCH_SERVER_CPU and every one of its threads"
	echo "is re-pinned there after start (\`taskset -a -p\`); dnsperf runs on CPU $BENCH_CLIENT_CPU; the veth"
	echo "receive paths are threaded NAPI kthreads pinned to their own side's CPU. TCP/53 is passed to"
	echo "the kernel by pop53d's XDP program and served by the TCP thread from kernel sockets. pop53d's"
	echo "UDP worker shares the CPU (the lab has two: one is the generator's), idle during these runs"
	echo "with adaptive sleeps of up to 10 ms (\`idle.max_sleep_us: 10000\`) so its wake-ups take little"
	echo "from the TCP thread; at a PoP the worker has its own core and the TCP threads run on the"
	echo "control CPUs. knotd's UDP worker blocks in the kernel while idle."
	echo
	echo "- Date: $DATE"
	echo "- Commit: $(bench_commit "$ROOT")"
	echo "- Machine: $(bench_machine); 1-min load average $LOAD_START before, $(cut -d' ' -f1 /proc/loadavg) after"
	echo "- Other processes above 20 % of a CPU, sampled before each server (after waiting up to ${QUIET_WAIT} s for quiet) and at the end: ${DISTURB:-none}"
	echo "- Software: $(knotd --version 2>&1 | grep -o 'version [0-9.]*' | sed 's/version /knotd /'), $(dnsperf -h 2>&1 | grep -o 'Version [0-9.]*' | sed 's/Version /dnsperf /')"
	echo "- Command: \`scripts/bench/tcp.sh${ORIG_ARGS:+ $ORIG_ARGS}\` ($RUNS rounds; per round and server one run of $DURATION s at each load; medians)"
	echo "- Saturating load: \`$DP\`"
	echo "- Fixed load: the same with \`-Q $LRATE\`"
	echo "- Zone: \`${ZONE#"$ROOT"/}\`, $(wc -l <"$TMP/queries.txt") query templates"
	echo "- CPU µs/query: time on CPU of the threads serving TCP during the fixed-load runs (pop53d: its \`p53-tcp-*\` threads; knotd: the whole process) over the queries completed, from /proc/PID/task/*/schedstat; it includes the kernel's TCP work done in their system calls, not the receive path run by the NAPI kthread. It holds up better than qps when other work shares the cores"
	for p in "${PEERS[@]}"; do
		echo "- $p threads (name(tid) CPUs): ${AFF[$p]:-not started}"
	done
	echo
	echo "| server | saturating qps | lost | avg latency ms | stddev / max ms | qps at -Q $LRATE | avg latency ms | stddev / max ms | CPU µs/query at -Q $LRATE | saturating runs (qps) | CPU µs/query per round |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"
	for p in "${PEERS[@]}"; do
		name=$p
		[ "$p" = pop53 ] && name="pop53 (1 TCP thread)"
		[ "$p" = knotd ] && name="knotd (1 tcp-worker)"
		if [ -n "${QPS[$p]:-}" ]; then
			lat="| | |"
			[ -n "${LQPS[$p]:-}" ] && lat="$(bench_fmt_int "$(printf '%.0f' "${LQPS[$p]}")") | $(ms "${LAVG[$p]}") | $(ms "${LSD[$p]}") / $(ms "${LMAX[$p]}") |"
			echo "| $name | $(bench_fmt_int "$(printf '%.0f' "${QPS[$p]}")") | ${LOST[$p]}% | $(ms "${AVG[$p]}") | $(ms "${SD[$p]}") / $(ms "${MAX[$p]}") | $lat ${CPUQ[$p]:-} | ${RUNQ[$p]}| ${CPUL[$p]:-}|"
		else
			echo "| $name | not measured: ${REASON[$p]:-unknown} | | | | | | | | | |"
		fi
	done
} >"$TMP/section.md"
cat "$TMP/section.md"
if [ "$WRITE" = 1 ]; then
	bench_md_replace "$DOC" "$BEGIN_MARK" "$END_MARK" "$TMP/section.md"
	bench_log "wrote the tcp section into ${DOC#"$ROOT"/}"
fi
