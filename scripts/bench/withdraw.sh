#!/usr/bin/env bash
# Fault to withdraw, as the upstream router sees it: pop53d with real FRR in the pop
# namespace, BIRD 2 in the client namespace (tests/integration/bgp_lib.sh), canary every
# 200 ms. For each fault, TRIALS times: the time from the fault to the moment BIRD removes
# 192.0.2.53/32 from its RIB (BIRD's own log timestamp of the removal, same clock), then the
# median and the maximum.
#   canary    `pop53ctl zone reload` of the zone without the canary name (fault = reload done)
#   worker    `pop53ctl test stall-worker 0 on` (fault = the command is sent)
#   sigterm   kill -TERM pop53d
#   sigkill   kill -KILL pop53d
# Writes the table into docs/BENCHMARKS.md between <!-- withdraw:begin --> and
# <!-- withdraw:end --> unless --no-write.
#
# Usage: scripts/bench/withdraw.sh [--trials N] [--no-write]
# Environment: BUILD (meson build dir, default build).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
TRIALS=10
WRITE=1
CMDLINE="scripts/bench/withdraw.sh${*:+ $*}"
while [ $# -gt 0 ]; do
	case $1 in
	--trials) TRIALS=$2; shift ;;
	--no-write) WRITE=0 ;;
	-h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "withdraw.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
# shellcheck source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh" "$BUILD" "$ROOT"
BGP_DIR=$TMP
# shellcheck source=tests/integration/bgp_lib.sh
. "$ROOT/tests/integration/bgp_lib.sh"
CTL="$BUILD/control/pop53ctl"
SOCK=$TMP/control.sock
ZONE=$TMP/example.com.zone
CFG=$TMP/pop53.yaml
EAL_PREFIX=p53withdraw
DOC="$ROOT/docs/BENCHMARKS.md"

cleanup() {
	stop_pop53 >/dev/null 2>&1 || true
	bgp_cleanup
	rm -rf "/var/run/dpdk/$EAL_PREFIX"
	cleanup_common
}
trap cleanup EXIT
lab_lock
log() { printf '[withdraw %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
ctl() { "$CTL" -s "$SOCK" "$@"; }
set_canary() {
	cp "$ROOT/zones/example.com.zone" "$ZONE.new"
	[ "$1" = on ] && printf 'canary\t60 IN TXT\t"pop53 canary"\n' >>"$ZONE.new"
	cat "$ZONE.new" >"$ZONE"
	rm -f "$ZONE.new"
	[ "${2:-}" = noreload ] || ctl zone reload >/dev/null
}
cat >"$CFG" <<YAML
server:
  identity: withdraw-bench
  control_socket: $SOCK
metrics: {enabled: false}
dataplane:
  eal: ["-l", "1", "--no-pci", "--in-memory", "--file-prefix=$EAL_PREFIX", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
  workers: 1
  addresses: [$V4, "$V6"]
  idle: {mode: adaptive, max_sleep_us: 100}
zones:
  - {name: example.com, file: $ZONE}
health:
  hold_down: 1s
  min_announce_interval: 0
  stop_linger: 0
  canary: {name: canary.example.com, type: TXT, expect: ['"pop53 canary"'], interval: 200ms, timeout: 100ms, fall: 3, rise: 2}
  workers: {heartbeat: 100ms}
anycast:
  frr: {}
YAML

# The removal BIRD logged first after T0 (ms since the epoch), minus T0.
withdraw_ms() {
	local t0=$1 t
	t=$(bgp_removed_times "$BGP_P4" | awk -v t0="$t0" '$1 >= t0 - 5 { print; exit }')
	[ -n "$t" ] && echo $(( t - t0 ))
}
announced() { wait_ms 10000 bgp_full "$BGP_P4" >/dev/null; }
start() {
	POP53_TEST_HOOKS=1 start_pop53 "$CFG"
	wait_answering && announced || { log "pop53d did not come up"; cat "$TMP/pop53d.log" >&2; exit 1; }
}
declare -A RES
trial() { # trial FAULT MS
	if [ -z "$2" ]; then log "$1: no removal in BIRD's log"; exit 1; fi
	RES[$1]="${RES[$1]:-} $2"
	log "$1: $2 ms"
}

"$ROOT/scripts/lab.sh" up >/dev/null
ip -n "$POP_NS" link set lo up
bgp_setup "$ROOT/configs/frr/frr-redistribute.conf"
bgp_start_frr && bgp_start_bird || { log "FRR or BIRD did not start"; exit 1; }
wait_ms 20000 bgp_established >/dev/null || { log "no BGP session"; exit 1; }
set_canary on noreload
start
for i in $(seq 1 "$TRIALS"); do
	announced
	set_canary off
	t0=$(now_ms)
	wait_ms 5000 bgp_gone "$BGP_P4" >/dev/null
	trial canary "$(withdraw_ms "$t0")"
	set_canary on
done
for i in $(seq 1 "$TRIALS"); do
	announced
	t0=$(now_ms)
	ctl test stall-worker 0 on >/dev/null
	wait_ms 5000 bgp_gone "$BGP_P4" >/dev/null
	trial worker "$(withdraw_ms "$t0")"
	ctl test stall-worker 0 off >/dev/null
done
stop_pop53
for sig in TERM KILL; do
	for i in $(seq 1 "$TRIALS"); do
		start
		t0=$(now_ms)
		kill -"$sig" "$POP53_PID"
		wait_ms 5000 bgp_gone "$BGP_P4" >/dev/null
		trial "sig${sig,,}" "$(withdraw_ms "$t0")"
		wait "$POP53_PID" 2>/dev/null
		POP53_PID=
	done
done

stats() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%s %s", m, a[NR]}'; }
table=$(
	echo "| fault | median | max | goal | trials (ms) |"
	echo "| --- | ---: | ---: | --- | --- |"
	for f in canary worker sigterm sigkill; do
		read -r med max <<<"$(stats "${RES[$f]}")"
		case $f in
		canary) what="canary fails (zone reloaded without the canary name)"; goal="< 1000 ms" ;;
		worker) what="worker stalls (test hook)"; goal="< 250 ms" ;;
		sigterm) what="pop53d stopped with SIGTERM"; goal="< 250 ms" ;;
		sigkill) what="pop53d killed with SIGKILL"; goal="< 250 ms" ;;
		esac
		echo "| $what | $med ms | $max ms | $goal |$(tr -s ' ' <<<"${RES[$f]}" | sed 's/ /, /g; s/^, / /') |"
	done
)
echo "$table"
if [ "$WRITE" = 1 ]; then
	cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
	block=$(
		echo "<!-- withdraw:begin -->"
		echo "Measured $(date -u +%Y-%m-%d) with \`$CMDLINE\` ($TRIALS trials per fault) on $(nproc) x $cpu,"
		echo "Linux $(uname -r), $(/usr/lib/frr/zebra --version 2>/dev/null | head -1 | sed 's/ version//'), BIRD $(bird --version 2>&1 | awk '{print $NF}')."
		echo "Canary every 200 ms (fall 3, timeout 100 ms), heartbeat bound 100 ms, FRR timers as in"
		echo "configs/frr/frr-redistribute.conf (advertisement-interval 0)."
		echo
		echo "$table"
		echo "<!-- withdraw:end -->"
	)
	BLOCK="$block" /usr/bin/python3 - "$DOC" <<'PY'
import os, re, sys
p = sys.argv[1]; s = open(p).read(); b = os.environ["BLOCK"]
s2, n = re.subn(r"<!-- withdraw:begin -->.*?<!-- withdraw:end -->", lambda m: b, s, flags=re.S)
if n == 0:
    sys.exit("withdraw.sh: no <!-- withdraw:begin --> marker in " + p)
open(p, "w").write(s2)
PY
	log "wrote docs/BENCHMARKS.md"
fi
