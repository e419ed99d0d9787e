#!/usr/bin/env bash
# The exception path in dpdk mode (control/exc/): how many frames per second the tap path
# carries each way, and what a flood of non-DNS frames costs the DNS answer rate.
#
# pop53d in dpdk mode on the lab veth, as tests/integration/dpdk_mode.sh runs it (p53p without
# kernel addresses, libxdp's default program, the tap p53x with 192.0.2.179/24 as management
# address). Each measurement runs RUNS times; the median is reported.
#   to kernel   a raw socket in p53-client sends UDP frames to 192.0.2.179:9 (102 bytes) as
#               fast as it can for SECONDS: the rate the exception thread wrote them to the tap
#               (exception to_kernel counter / sending time), and the share the bounded queue
#               dropped of what reached the worker
#   to wire     a UDP socket in p53-pop sends datagrams from 192.0.2.179 to 192.0.2.1:9 for
#               SECONDS: the rate the client's veth received them, and the share dropped at
#               the worker's ring
#   ping -f     10000 ICMP echoes from the client to 192.0.2.179 through the tap and back
#   DNS         kxdpgun -t SECONDS -Q RATE (www.example.com A) alone, then with the raw-socket
#               flood running the whole time: answers per second, and the flood's rate
# Bounded: each sender stops after SECONDS (+ 2 s beside kxdpgun), kxdpgun after SECONDS.
# Writes the result into docs/BENCHMARKS.md between <!-- exception:begin --> and
# <!-- exception:end --> unless --no-write.
#
# Usage: scripts/bench/exception.sh [--runs N] [--seconds S] [--rate QPS] [--no-write]
# Environment: BUILD (meson build dir, default build), POP53_IDLE (the worker's dataplane.idle.mode,
# adaptive or busy, default adaptive).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
RUNS=3
SECONDS_=5
RATE=2000000
WRITE=1
CMDLINE="scripts/bench/exception.sh${*:+ $*}"
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift ;;
	--seconds) SECONDS_=$2; shift ;;
	--rate) RATE=$2; shift ;;
	--no-write) WRITE=0 ;;
	-h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "exception.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
# shellcheck source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh" "$BUILD" "$ROOT"
# shellcheck source=scripts/bench/lib.sh
. "$ROOT/scripts/bench/lib.sh"
CTL="$BUILD/control/pop53ctl"
PY=/usr/bin/python3
SOCK=$TMP/control.sock
CFG=$TMP/pop53.yaml
MGMT=192.0.2.179
DOC="$ROOT/docs/BENCHMARKS.md"
SENDER=

cleanup() {
	[ -z "$SENDER" ] || kill "$SENDER" 2>/dev/null || true
	bench_xdp_off
	cleanup_common
	ip netns exec "$POP_NS" sysctl -qw net.ipv6.conf.p53p.disable_ipv6=0 2>/dev/null || true
	"$ROOT/scripts/lab.sh" up >/dev/null 2>&1 || true
}
trap cleanup EXIT
lab_lock
log() { printf '[exception %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
ctl() { "$CTL" -s "$SOCK" "$@"; }
exc() { # "to_kernel to_wire queue_full tap_refused to_wire_full rx"
	ctl --json stats | $PY -c 'import json,sys
s = json.load(sys.stdin)["stats"]; e = s["exception"]
print(e["frames"]["to_kernel"], e["frames"]["to_wire"], e["drops"]["to_kernel_queue_full"],
      e["drops"]["to_kernel_tap_refused"], e["drops"]["to_wire_queue_full"], s["rx"])'
}

# flood.py IFACE DST_MAC SRC_MAC SRC DST N SECONDS: raw frames until N are sent or SECONDS
# passed; prints "SENT ELAPSED".
cat >"$TMP/flood.py" <<'PY'
import socket, struct, sys, time
iface, dmac, smac, src, dst, n, secs = sys.argv[1:8]; n = int(n); secs = float(secs)
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
payload = (b"exception-bench-" * 4)[:60]
udp = struct.pack("!HHHH", 40000, 9, 8 + len(payload), 0) + payload
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, socket.inet_aton(src), socket.inet_aton(dst))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
frame = bytes.fromhex(dmac.replace(":", "")) + bytes.fromhex(smac.replace(":", "")) + b"\x08\x00" + ip + udp
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind((iface, 0))
sent = 0; t0 = time.monotonic(); end = t0 + secs
while sent < n:
    try: s.send(frame); sent += 1
    except BlockingIOError: pass
    if sent % 1000 == 0 and time.monotonic() > end: break
print(sent, "%.3f" % (time.monotonic() - t0))
PY
# udpsend.py SRC DST N SECONDS: kernel UDP datagrams; prints "SENT ELAPSED".
cat >"$TMP/udpsend.py" <<'PY'
import socket, sys, time
src, dst, n, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((src, 0))
data = (b"exception-bench-" * 4)[:60]
sent = 0; t0 = time.monotonic(); end = t0 + secs
while sent < n:
    try: s.sendto(data, (dst, 9)); sent += 1
    except OSError: time.sleep(0.0001)  # ENOBUFS: the tap's queue is full
    if sent % 1000 == 0 and time.monotonic() > end: break
print(sent, "%.3f" % (time.monotonic() - t0))
PY

"$ROOT/scripts/lab.sh" up >/dev/null
bench_xdp_off
ip -n "$POP_NS" addr flush dev p53p
ip netns exec "$POP_NS" sysctl -qw net.ipv6.conf.p53p.disable_ipv6=1
ip -n "$CLIENT_NS" neigh flush dev p53c
MAC=$(ip netns exec "$POP_NS" cat /sys/class/net/p53p/address)
CMAC=$(ip netns exec "$CLIENT_NS" cat /sys/class/net/p53c/address)
cat >"$CFG" <<YAML
server:
  identity: exception-bench
  control_socket: $SOCK
metrics: {enabled: false}
dataplane:
  mode: dpdk
  eal: ["-l", "$BENCH_SERVER_CPU", "--no-pci", "--in-memory", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
  workers: 1
  addresses: [$V4, "$V6"]
  idle: {mode: ${POP53_IDLE:-adaptive}, max_sleep_us: 100}
  exception:
    iface: p53x
    addresses: [$MGMT/24]
zones:
  - {name: example.com, file: $ROOT/zones/example.com.zone}
YAML
start_pop53 "$CFG"
wait_answering || { log "pop53d did not come up"; cat "$TMP/pop53d.log" >&2; exit 1; }
QUEUE=$(grep -o 'rings of [0-9]* frames' "$TMP/pop53d.log" | awk '{print $3}')
echo "www.example.com A" >"$TMP/queries.txt"
ip netns exec "$CLIENT_NS" ping -c 1 -W 2 "$MGMT" >/dev/null || { log "no ping to $MGMT"; exit 1; }

rx_client() { ip netns exec "$CLIENT_NS" cat /sys/class/net/p53c/statistics/rx_packets; }
declare -a TK TKD TKS TW TWD TWS PING DNS0 DNS1 PCT0 PCT1 SENT0 SENT1 FL
ratio() { awk -v a="$1" -v b="$2" -v f="${3:-%d}" 'BEGIN { printf f, (b > 0) ? a / b : 0 }'; }
for run in $(seq 1 "$RUNS"); do
	# NIC to kernel: a flood of SECONDS_ seconds; the exception thread's rate over it.
	read -r k0 w0 q0 r0 f0 x0 < <(exc)
	read -r sent el < <(ip netns exec "$CLIENT_NS" taskset -c "$BENCH_CLIENT_CPU" $PY "$TMP/flood.py" p53c "$MAC" "$CMAC" 192.0.2.1 "$MGMT" 1000000000 "$SECONDS_")
	sleep 0.3
	read -r k1 w1 q1 r1 f1 x1 < <(exc)
	TK+=("$(ratio $((k1 - k0)) "$el")"); TKS+=("$(ratio "$sent" "$el")")
	TKD+=("$(ratio $((100 * (q1 - q0 + r1 - r0))) $((x1 - x0)) %.1f)")
	log "run $run to kernel: sent $sent in $el s, the worker received $((x1 - x0)), to the tap $((k1 - k0)), dropped $((q1 - q0)) queue full + $((r1 - r0)) tap refused"
	# Kernel to NIC: a UDP socket on the tap for SECONDS_ seconds; what the client received.
	c0=$(rx_client)
	read -r k0 w0 q0 r0 f0 x0 < <(exc)
	read -r sent el < <(ip netns exec "$POP_NS" taskset -c "$BENCH_CLIENT_CPU" $PY "$TMP/udpsend.py" "$MGMT" 192.0.2.1 1000000000 "$SECONDS_")
	sleep 0.3
	c1=$(rx_client)
	read -r k1 w1 q1 r1 f1 x1 < <(exc)
	TW+=("$(ratio $((c1 - c0)) "$el")"); TWS+=("$(ratio "$sent" "$el")")
	TWD+=("$(ratio $((100 * (f1 - f0))) $((w1 - w0 + f1 - f0)) %.1f)")
	log "run $run to wire: sent $sent in $el s, from the tap $((w1 - w0)) + $((f1 - f0)) dropped at the worker's ring, the client received $((c1 - c0))"
	# Echo both ways.
	p=$(ip netns exec "$CLIENT_NS" ping -f -c 10000 -q "$MGMT" 2>&1 | awk '/packets transmitted/ { for (i = 1; i <= NF; i++) if ($i ~ /ms$/) t = $i; sub("ms", "", t); print int($4 * 1000 / t) }')
	PING+=("${p:-0}")
	log "run $run ping -f: $p echoes/s"
	# DNS alone, then DNS with the flood.
	bench_kxdpgun "$TMP/gun0" "$SECONDS_" "$RATE" "$TMP/queries.txt" || { log "kxdpgun failed"; exit 1; }
	read -r s r n d < <(bench_parse_kxdpgun "$TMP/gun0")
	DNS0+=($((r / d))); SENT0+=($((s / d))); PCT0+=("$(ratio $((100 * r)) "$s" %.1f)")
	ip netns exec "$CLIENT_NS" taskset -c "$BENCH_CLIENT_CPU" $PY "$TMP/flood.py" p53c "$MAC" "$CMAC" 192.0.2.1 "$MGMT" 1000000000 $((SECONDS_ + 2)) >"$TMP/flood.out" &
	SENDER=$!
	sleep 0.5
	read -r k0 _ q0 _ < <(exc)
	bench_kxdpgun "$TMP/gun1" "$SECONDS_" "$RATE" "$TMP/queries.txt" || { log "kxdpgun failed"; exit 1; }
	read -r k1 _ q1 _ < <(exc)
	wait "$SENDER"; SENDER=
	read -r fs fe <"$TMP/flood.out"
	read -r s1 r1 n1 d1 < <(bench_parse_kxdpgun "$TMP/gun1")
	DNS1+=($((r1 / d1))); SENT1+=($((s1 / d1))); PCT1+=("$(ratio $((100 * r1)) "$s1" %.1f)")
	FL+=("$(ratio "$fs" "$fe")")
	log "run $run DNS: alone $((r / d)) answers/s of $((s / d)) sent/s; with the flood $((r1 / d1)) of $((s1 / d1)) sent/s, flood $fs frames in $fe s, to the tap $((k1 - k0)) and $((q1 - q0)) dropped while kxdpgun ran"
done
med() { bench_median "$@"; }
medf() { bench_median_f "$@"; }
tk=$(med "${TK[@]}"); tks=$(med "${TKS[@]}"); tkd=$(medf "${TKD[@]}")
tw=$(med "${TW[@]}"); tws=$(med "${TWS[@]}"); twd=$(medf "${TWD[@]}"); pg=$(med "${PING[@]}")
d0=$(med "${DNS0[@]}"); d1=$(med "${DNS1[@]}"); fl=$(med "${FL[@]}")
s0=$(med "${SENT0[@]}"); s1=$(med "${SENT1[@]}"); p0=$(medf "${PCT0[@]}"); p1=$(medf "${PCT1[@]}")
cost=$(awk -v a="$d0" -v b="$d1" 'BEGIN { printf "%.0f", (a > 0) ? 100 * (a - b) / a : 0 }')
table=$(
	echo "| measurement | median of $RUNS | runs |"
	echo "| --- | ---: | --- |"
	echo "| NIC to kernel: frames/s the exception thread wrote to the tap (102-byte UDP frames) | $(bench_fmt_int "$tk") | ${TK[*]} |"
	echo "| ...while the raw socket sent (frames/s) | $(bench_fmt_int "$tks") | ${TKS[*]} |"
	echo "| ...share of what reached the worker dropped at the bounded queue ($QUEUE frames) or by the tap | $tkd % | ${TKD[*]} |"
	echo "| kernel to NIC: UDP datagrams/s from a socket on the tap received by the client | $(bench_fmt_int "$tw") | ${TW[*]} |"
	echo "| ...while the socket sent (datagrams/s) | $(bench_fmt_int "$tws") | ${TWS[*]} |"
	echo "| ...share of what left the tap dropped at the worker's ring ($QUEUE frames) | $twd % | ${TWD[*]} |"
	echo "| ping -f through the tap: echoes/s (each one both ways) | $(bench_fmt_int "$pg") | ${PING[*]} |"
	echo "| DNS alone: kxdpgun answers/s (of queries sent/s; answered share) | $(bench_fmt_int "$d0") of $(bench_fmt_int "$s0"); $p0 % | ${DNS0[*]} |"
	echo "| DNS during a non-DNS flood: kxdpgun answers/s (of queries sent/s; answered share) | $(bench_fmt_int "$d1") of $(bench_fmt_int "$s1"); $p1 % | ${DNS1[*]} |"
	echo "| ...the flood's rate (frames/s sent beside kxdpgun) | $(bench_fmt_int "$fl") | ${FL[*]} |"
	echo "| DNS answers/s lost during the flood | $cost % | |"
)
echo "$table"
if [ "$WRITE" = 1 ]; then
	cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
	{
		echo "Measured $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git -C "$ROOT" rev-parse --short HEAD), with \`$CMDLINE\`"
		echo "on $(nproc) x $cpu, Linux $(uname -r), load average $(cut -d' ' -f1 /proc/loadavg) at the end."
		echo "pop53d's worker on CPU $BENCH_SERVER_CPU (idle mode ${POP53_IDLE:-adaptive}); its exception thread, the senders and kxdpgun on CPU $BENCH_CLIENT_CPU."
		echo "kxdpgun: \`ip netns exec p53-client taskset -c $BENCH_CLIENT_CPU kxdpgun -t $SECONDS_ -Q $RATE -i QUERIES -I p53c 192.0.2.53\`."
		echo
		echo "$table"
	} >"$TMP/block.md"
	bench_md_replace "$DOC" "<!-- exception:begin -->" "<!-- exception:end -->" "$TMP/block.md"
	log "wrote docs/BENCHMARKS.md"
fi
stop_pop53 >/dev/null 2>&1
grep -E "^.*exception: to the kernel" "$TMP/pop53d.log" >&2 || true
