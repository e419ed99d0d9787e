#!/usr/bin/env bash
# Reload benchmark: how long a `pop53ctl zone reload` of a big zone takes until clients get the
# new version, and how much memory pop53d needs while it reloads, next to what it holds in
# steady state. See docs/BENCHMARKS.md (section "Reload of a big zone").
#
# Usage: scripts/bench/reload.sh [--records N] [--runs N] [--no-write]
#   --records N   about how many records the zone has (default 1000000; scripts/bench/genzone.py)
#   --runs N      how many reloads are measured; medians are reported (default 3)
#   --no-write    print the section, leave docs/BENCHMARKS.md alone
# Environment: BUILD (meson build dir with control/pop53d and control/pop53ctl, default
# build-big), CACHE (generated zones, shared with bigzone.sh, default /tmp/pop53-bigzone),
# START_TIMEOUT (seconds for pop53d to compile the zone and answer, default 300).
#
# pop53d runs on the lab (scripts/lab.sh; af_xdp on the pop veth, worker on CPU 1, its control
# thread on the other CPU), serving a copy of the zone. For each run: the copy's SOA serial is
# bumped (written beside it, renamed into place; not timed), then `pop53ctl zone reload` starts
# the clock. A dnspython poller in the client namespace asks `big.test SOA` every 10 ms
# (a 100 ms timeout per query); the reload time is from the start of pop53ctl to the first
# answer carrying the new serial. Memory: /proc/PID/status of pop53d sampled every 20 ms during
# the reload: VmRSS (the compiler's working memory and the compiled image, the first worker's
# replica) plus HugetlbPages (the DPDK heap: other workers' replicas, the mbuf pools); VmHWM is reset
# before each reload (clear_refs 5) and read after it. Steady state is the same sum before
# the reload. Needs root, /usr/bin/python3 with dnspython, kdig.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/scripts/bench"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$HERE/lib.sh"

RECORDS=1000000
RUNS=3
WRITE=1
ORIG_ARGS="$*"
BUILD=${BUILD:-$ROOT/build-big}
CACHE=${CACHE:-/tmp/pop53-bigzone}
START_TIMEOUT=${START_TIMEOUT:-300}
DOC="$ROOT/docs/BENCHMARKS.md"
BEGIN_MARK='<!-- reload:begin -->'
END_MARK='<!-- reload:end -->'
GOAL_S=2       # seconds from the reload command to the new version answered
GOAL_RATIO=2   # peak memory during a reload / steady state
PY=/usr/bin/python3
PREFIX=p53reload # EAL --file-prefix (its own runtime dir and telemetry socket)

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
	case "$1" in
		--records) RECORDS=${2:?}; shift 2 ;;
		--records=*) RECORDS=${1#*=}; shift ;;
		--runs) RUNS=${2:?}; shift 2 ;;
		--runs=*) RUNS=${1#*=}; shift ;;
		--no-write) WRITE=0; shift ;;
		-h | --help) usage 0 ;;
		*) echo "reload.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
case "$RECORDS$RUNS" in '' | *[!0-9]*) echo "reload.sh: --records and --runs want numbers" >&2; exit 2 ;; esac
[ "$RUNS" -ge 1 ] || { echo "reload.sh: --runs must be at least 1" >&2; exit 2; }

case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
POP53D="$BUILD/control/pop53d"
CTL="$BUILD/control/pop53ctl"
for f in "$POP53D" "$CTL" "$BUILD/dataplane/bpf/steer.bpf.o"; do
	[ -e "$f" ] || {
		echo "reload.sh: $f not found; build it: meson setup ${BUILD#"$ROOT"/} -Dbuildtype=release && ninja -C ${BUILD#"$ROOT"/} control/pop53d control/pop53ctl dataplane/bpf/steer.bpf.o" >&2
		exit 1
	}
done
"$PY" -c 'import dns.query' 2>/dev/null || { echo "reload.sh: $PY has no dnspython (apt-get install python3-dnspython)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "reload.sh: needs root (network namespaces, af_xdp)" >&2; exit 1; }

TMP=$(mktemp -d /tmp/pop53-reload-run.XXXXXX)
SERVER_PID=""
SAMPLER_PID=""
POLLER_PID=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[ -z "$POLLER_PID" ] || { kill "$POLLER_PID" 2>/dev/null; wait "$POLLER_PID" 2>/dev/null; }
	[ -z "$SAMPLER_PID" ] || { kill "$SAMPLER_PID" 2>/dev/null; wait "$SAMPLER_PID" 2>/dev/null; }
	bench_stop_pid "$SERVER_PID" 30
	bench_xdp_off
	rm -rf "$TMP" "/var/run/dpdk/$PREFIX"
}
trap cleanup EXIT
trap 'bench_log "interrupted"; exit 130' INT TERM

mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
now() { date +%s.%N; }
kb_of() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$SERVER_PID/status" 2>/dev/null; }
# Resident memory of pop53d in kB: VmRSS + HugetlbPages.
mem_kb() { awk '$1 == "VmRSS:" || $1 == "HugetlbPages:" { s += $2 } END { print s + 0 }' "/proc/$SERVER_PID/status" 2>/dev/null; }

# --- the zone (the same cache and name as bigzone.sh) -----------------------------------------
SRCZONE=$(bench_big_zone "$RECORDS" "$CACHE") || exit 1
ZONE_RECS=$(awk '$1 == "total" { print $2 }' "$SRCZONE.counts")
SERIAL0=$(awk '$2 == "SOA" { print $5; exit }' "$SRCZONE")
case "$SERIAL0" in '' | *[!0-9]*) echo "reload.sh: no SOA serial found in $SRCZONE" >&2; exit 1 ;; esac
ZONE="$TMP/zones/big.test.zone"
mkdir -p "$TMP/zones"
cp "$SRCZONE" "$ZONE"

# set_serial N: the zone copy with serial N, written beside it and renamed into place.
set_serial() {
	awk -v s="$1" '!done && $2 == "SOA" { $5 = s; done = 1 } { print }' OFS='\t' "$ZONE" >"$ZONE.tmp" &&
		mv "$ZONE.tmp" "$ZONE"
}

cat >"$TMP/pop53.yaml" <<YAML
# generated by scripts/bench/reload.sh
server:
  identity: reload-bench
  control_socket: $TMP/ctl.sock
dataplane:
  eal: ["-l", "$BENCH_SERVER_CPU", "--no-pci", "--in-memory", "--file-prefix", "$PREFIX", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=$BENCH_POP_IF,start_queue=0,queue_count=1"
  workers: 1
  addresses: [$BENCH_SERVER_V4, "$BENCH_SERVER_V6"]
  idle: {mode: adaptive, max_sleep_us: 100}
zones:
  - {name: big.test, file: $ZONE}
YAML

# The poller: asks SOA every 10 ms until it sees serial WANT (or 120 s pass); prints the
# wall-clock time (time.time()) of the first answer with it, and how many queries it sent.
cat >"$TMP/poll.py" <<'PY'
import sys, time
import dns.message, dns.query, dns.rdatatype, dns.exception
server, want, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
open(ready, "w").close()
deadline = time.monotonic() + 120
n = lost = 0
while time.monotonic() < deadline:
    n += 1
    q = dns.message.make_query("big.test.", "SOA")
    try:
        r = dns.query.udp(q, server, timeout=0.1, source_port=1053)
        t = time.time()
        for rs in r.answer:
            if rs.rdtype == dns.rdatatype.SOA and rs[0].serial == want:
                print(f"{t:.6f} {n} {lost}")
                sys.exit(0)
    except dns.exception.Timeout:
        lost += 1
    time.sleep(0.01)
print(f"timeout {n} {lost}")
sys.exit(1)
PY

# The sampler: every 20 ms, the largest VmRSS, HugetlbPages and their sum seen, until STOP exists.
sampler() {
	local stop=$1 out=$2 i rss hug max_r=0 max_h=0 max_s=0
	for ((i = 0; i < 6000; i++)); do # bounded: 120 s
		read -r rss hug < <(awk '$1 == "VmRSS:" { r = $2 } $1 == "HugetlbPages:" { h = $2 } END { print r + 0, h + 0 }' "/proc/$SERVER_PID/status" 2>/dev/null)
		((rss > max_r)) && max_r=$rss
		((hug > max_h)) && max_h=$hug
		((rss + hug > max_s)) && max_s=$((rss + hug))
		echo "$max_r $max_h $max_s" >"$out"
		[ -e "$stop" ] && break
		sleep 0.02
	done
}

# --- run ---------------------------------------------------------------------------------------
bench_lab_lock || { echo "reload.sh: could not take the lab lock" >&2; exit 1; }
"$ROOT/scripts/lab.sh" up >/dev/null
bench_xdp_off
# A fresh pop53d for every run: after a reload glibc keeps the compiler's freed memory in the
# control thread's arena, so a second reload would start from an inflated "steady state".
start_server() {
	local t0
	bench_xdp_off
	ip netns exec "$BENCH_POP_NS" "$POP53D" -c "$TMP/pop53.yaml" >"$TMP/pop53d.log" 2>&1 </dev/null 9>&- &
	SERVER_PID=$!
	t0=$(date +%s)
	until bench_kdig "$BENCH_SERVER_V4" big.test SOA | grep -q "SOA.*$1"; do
		if ! kill -0 "$SERVER_PID" 2>/dev/null || (($(date +%s) - t0 > START_TIMEOUT)); then
			bench_log "pop53d did not answer; its log:"; cat "$TMP/pop53d.log" >&2; exit 1
		fi
		sleep 0.5
	done
	bench_log "pop53d answers after $(($(date +%s) - t0)) s"
	sleep 2
}
SAMPLED=() RELOAD_S=() CTL_S=() DAEMON_MS=() PEAK=() PEAK_RSS=() PEAK_HUG=() HWM=() STEADY=() STEADY_RSS=() STEADY_HUG=() AFTER=() LOST=()
for ((run = 1; run <= RUNS; run++)); do
	serial=$((SERIAL0 + 2 * run))
	set_serial $((serial - 1)) && start_server $((serial - 1))
	set_serial "$serial" || { bench_log "cannot write the zone copy"; exit 1; }
	sync
	sleep 1
	s_rss=$(kb_of VmRSS) s_hug=$(kb_of HugetlbPages)
	STEADY_RSS+=("$s_rss") STEADY_HUG+=("$s_hug") STEADY+=($((s_rss + s_hug)))
	echo 5 >"/proc/$SERVER_PID/clear_refs" # reset VmHWM
	rm -f "$TMP/stop" "$TMP/ready"
	sampler "$TMP/stop" "$TMP/peak" &
	SAMPLER_PID=$!
	ip netns exec "$BENCH_CLIENT_NS" taskset -c "$BENCH_CLIENT_CPU" "$PY" "$TMP/poll.py" \
		"$BENCH_SERVER_V4" "$serial" "$TMP/ready" >"$TMP/poll.out" 2>&1 &
	POLLER_PID=$!
	for _ in $(seq 1 100); do [ -e "$TMP/ready" ] && break; sleep 0.05; done
	sleep 0.2
	ts=$(now)
	"$CTL" -s "$TMP/ctl.sock" --json zone reload big.test >"$TMP/reload.json" 2>&1
	rc=$?
	te=$(now)
	wait "$POLLER_PID"
	POLLER_PID=
	sleep 0.5 # the sampler sees the old image freed
	touch "$TMP/stop"
	wait "$SAMPLER_PID"
	SAMPLER_PID=
	if [ "$rc" != 0 ]; then
		bench_log "run $run: pop53ctl zone reload failed (exit $rc): $(cat "$TMP/reload.json")"
		exit 1
	fi
	read -r t_new n_q n_lost <"$TMP/poll.out"
	if [ "$t_new" = timeout ]; then
		bench_log "run $run: serial $serial never answered"; exit 1
	fi
	read -r p_rss p_hug p_sum <"$TMP/peak"
	SAMPLED+=("$p_sum")
	# A 20 ms sampler misses short peaks of the compiler; VmHWM does not. The peak counted is
	# the larger of the sampled sum and VmHWM + the sampled hugetlb peak (an upper bound).
	hwm=$(kb_of VmHWM)
	((hwm > p_rss)) && p_rss=$hwm
	((p_rss + p_hug > p_sum)) && p_sum=$((p_rss + p_hug))
	RELOAD_S+=("$(awk -v a="$ts" -v b="$t_new" 'BEGIN { printf "%.3f", b - a }')")
	CTL_S+=("$(awk -v a="$ts" -v b="$te" 'BEGIN { printf "%.3f", b - a }')")
	DAEMON_MS+=("$("$PY" -c 'import json, sys; print("%.0f" % json.load(open(sys.argv[1]))["ms"])' "$TMP/reload.json")")
	PEAK+=("$p_sum") PEAK_RSS+=("$p_rss") PEAK_HUG+=("$p_hug") HWM+=("$hwm") LOST+=("$n_lost")
	AFTER+=($(($(kb_of VmRSS) + $(kb_of HugetlbPages))))
	grep 'reload' "$TMP/pop53d.log" | sed 's/^/    /' >&2
	bench_stop_pid "$SERVER_PID" 30
	SERVER_PID=
	bench_log "run $run: serial $serial answered $(printf '%s' "${RELOAD_S[-1]}") s after the reload command (pop53ctl returned after ${CTL_S[-1]} s, daemon ${DAEMON_MS[-1]} ms; poller $n_q queries, $n_lost timed out); memory steady $(mib "${STEADY[-1]}") (RSS $(mib "$s_rss") + hugetlb $(mib "$s_hug")), peak $(mib "$p_sum") (RSS $(mib "$p_rss"), hugetlb $(mib "$p_hug")), VmHWM $(mib "${HWM[-1]}"), after $(mib "${AFTER[-1]}")"
done
M_RELOAD=$(bench_median_f "${RELOAD_S[@]}")
M_CTL=$(bench_median_f "${CTL_S[@]}")
M_DAEMON=$(bench_median_f "${DAEMON_MS[@]}")
M_STEADY=$(bench_median_f "${STEADY[@]}")
M_STEADY_RSS=$(bench_median_f "${STEADY_RSS[@]}")
M_STEADY_HUG=$(bench_median_f "${STEADY_HUG[@]}")
M_PEAK=$(bench_median_f "${PEAK[@]}")
M_PEAK_RSS=$(bench_median_f "${PEAK_RSS[@]}")
M_PEAK_HUG=$(bench_median_f "${PEAK_HUG[@]}")
M_HWM=$(bench_median_f "${HWM[@]}")
M_AFTER=$(bench_median_f "${AFTER[@]}")
RATIO=$(awk -v p="$M_PEAK" -v s="$M_STEADY" 'BEGIN { printf "%.2f", p / s }')
RATIO_RSS=$(awk -v p="$M_PEAK_RSS" -v s="$M_STEADY_RSS" 'BEGIN { printf "%.2f", p / s }')
V_TIME=$(awk -v t="$M_RELOAD" -v g="$GOAL_S" 'BEGIN { print (t < g) ? "meets" : "MISSES" }')
V_MEM=$(awk -v r="$RATIO" -v g="$GOAL_RATIO" 'BEGIN { print (r <= g) ? "meets" : "MISSES" }')
IMG=$(grep -o 'image [0-9]* bytes\|[0-9]* bytes (' "$TMP/pop53d.log" | head -1 | grep -o '[0-9]*')
MEM_KB=$(awk '/^MemTotal/ { print $2 }' /proc/meminfo)
bench_log "median reload $M_RELOAD s ($V_TIME < ${GOAL_S} s); peak/steady $RATIO ($V_MEM <= ${GOAL_RATIO}x); RSS only $RATIO_RSS"

{
	echo
	echo "## Reload of a big zone"
	echo
	echo "\`scripts/bench/reload.sh\` runs pop53d on the lab (af_xdp on the pop veth, one worker on"
	echo "CPU $BENCH_SERVER_CPU, the control thread on the other CPU) serving \`big.test.\` from"
	echo "\`scripts/bench/genzone.py $RECORDS\`, bumps the zone file's SOA serial (not timed) and runs"
	echo "\`pop53ctl zone reload big.test\`. **Reload time** is from the start of pop53ctl to the first"
	echo "answer carrying the new serial, seen by a dnspython poller in the client namespace asking"
	echo "\`big.test SOA\` every 10 ms. **Memory** is pop53d's VmRSS (the compiler's working memory and"
	echo "the compiled image, which the first worker answers from) plus HugetlbPages (the DPDK heap: the"
	echo "other workers' replicas and the mbuf pools), sampled every 20 ms during the reload. Each run starts a fresh pop53d,"
	echo "so **steady state** is that sum after start-up, just before the reload. VmHWM is reset before"
	echo "each reload (\`clear_refs\` 5); the **peak** counted is the larger of the sampled sum and"
	echo "VmHWM + the sampled hugetlb peak (an upper bound: a 20 ms sampler misses the compiler's short"
	echo "peaks). **Goals: the new version answered in under ${GOAL_S} s; peak memory at most"
	echo "${GOAL_RATIO}x the steady state.** The worker keeps answering from the old replica while the"
	echo "new one is built (tests/integration/reload_zero_loss.sh checks that no query is lost)."
	echo
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(bench_commit "$ROOT"), $(bench_machine), $(awk -v k="$MEM_KB" 'BEGIN { printf "%.0f GiB RAM", k / 1048576 }'):"
	echo
	echo '```'
	[ "$BUILD" = "$ROOT/build-big" ] || printf 'BUILD=%s ' "${BUILD#"$ROOT"/}"
	echo "scripts/bench/reload.sh${ORIG_ARGS:+ $ORIG_ARGS}"
	echo '```'
	echo
	echo "Zone: $(bench_fmt_int "$ZONE_RECS") records${IMG:+, image $(bench_fmt_int "$IMG") bytes}. Medians of $RUNS reloads (each run's value in brackets):"
	echo
	echo "| measure | median | runs |"
	echo "| --- | ---: | --- |"
	echo "| **reload command to new serial answered** | **$M_RELOAD s** ($V_TIME < ${GOAL_S} s) | ${RELOAD_S[*]} |"
	echo "| pop53ctl returned (compile + replicas + swap + RCU wait + free) | $M_CTL s | ${CTL_S[*]} |"
	echo "| reload time reported by pop53d | $M_DAEMON ms | ${DAEMON_MS[*]} |"
	echo "| steady state, RSS + hugetlb | $(mib "$M_STEADY") ($(mib "$M_STEADY_RSS") + $(mib "$M_STEADY_HUG")) | $(for v in "${STEADY[@]}"; do printf '%s; ' "$(mib "$v")"; done) |"
	echo "| **peak during the reload, RSS + hugetlb** | **$(mib "$M_PEAK")** | $(for v in "${PEAK[@]}"; do printf '%s; ' "$(mib "$v")"; done) |"
	echo "| peak of the 20 ms samples alone (RSS + hugetlb at the same instant) | $(mib "$(bench_median_f "${SAMPLED[@]}")") = $(awk -v p="$(bench_median_f "${SAMPLED[@]}")" -v s="$M_STEADY" 'BEGIN { printf "%.2f", p / s }')x steady | $(for v in "${SAMPLED[@]}"; do printf '%s; ' "$(mib "$v")"; done) |"
	echo "| **peak / steady** | **${RATIO}x** ($V_MEM ≤ ${GOAL_RATIO}x) | |"
	echo "| peak RSS alone (max of samples, VmHWM) / steady RSS alone | $(mib "$M_PEAK_RSS") / $(mib "$M_STEADY_RSS") = ${RATIO_RSS}x | |"
	echo "| peak hugetlb (replicas, mbufs) | $(mib "$M_PEAK_HUG") (steady $(mib "$M_STEADY_HUG")) | |"
	echo "| VmHWM during the reload (reset before it) | $(mib "$M_HWM") | $(for v in "${HWM[@]}"; do printf '%s; ' "$(mib "$v")"; done) |"
	echo "| RSS + hugetlb 0.5 s after the reload | $(mib "$M_AFTER") | $(for v in "${AFTER[@]}"; do printf '%s; ' "$(mib "$v")"; done) |"
	echo "| poller queries unanswered during the reload (100 ms timeout) | $(bench_median_f "${LOST[@]}") | ${LOST[*]} |"
	echo
	echo "For comparison: knotd and NSD also build the new zone next to the old one on a reload;"
	echo "\`scripts/bench/reload_peers.sh\` measures them on the same zone ("Reload of a big zone: knotd and NSD" below)."
	echo
} >"$TMP/section.md"

echo >&2
cat "$TMP/section.md"
if [ "$WRITE" = 1 ]; then
	bench_md_replace "$DOC" "$BEGIN_MARK" "$END_MARK" "$TMP/section.md"
	bench_log "wrote the results into ${DOC#"$ROOT"/}"
fi
exit 0
