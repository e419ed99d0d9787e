#!/usr/bin/env bash
# dpdk mode and its exception path, on the lab. The pop-side veth p53p keeps no kernel address
# (IPv4 flushed, IPv6 off) and is opened by pop53d through net_af_xdp WITHOUT pop53's steering
# program: libxdp's default program sends every frame to the AF_XDP socket, so the kernel never
# sees the veth's traffic, as with a vfio-pci NIC. pop53d creates the exception interface
# (net_tap p53x) with the veth's MAC and the service addresses; from the client namespace:
#   - ARP and ND for the service addresses are answered through the tap (neighbour caches
#     flushed first), ping over IPv4 and IPv6;
#   - UDP DNS answered by the worker, TCP DNS (kdig +tcp) by the TCP thread through the tap;
#   - the TC fallback: kdig without +tcp gets a truncated UDP answer and the whole RRset over
#     TCP (4 KB and 61 KB answers), IPv4 and IPv6, compared with the zone record by record;
#   - the exception counters in pop53ctl stats and Prometheus, both directions;
#   - a flood of non-DNS frames (a bounded count from a raw socket) against a small exception
#     queue: frames dropped and counted, every flood frame accounted for, DNS still answered
#     during it;
#   - SIGTERM: exit 0, no mbuf leaked in the NIC's pools or the tap's, the tap and the XDP
#     program gone.
. "$(dirname "$0")/lib.sh"
CTL="$BUILD/control/pop53ctl"
PY=/usr/bin/python3
SOCK=$TMP/control.sock
ZONE=$TMP/tc.test.zone
CFG=$TMP/pop53.yaml
TAP=p53x
FLOOD_N=${FLOOD_N:-1000000} # a few seconds from one Python raw socket
FLOOD_PID=
cleanup() {
	[ -z "$FLOOD_PID" ] || kill "$FLOOD_PID" 2>/dev/null || true
	cleanup_common
	# Give the lab back as lab.sh makes it: kernel addresses and IPv6 on p53p.
	ip netns exec "$POP_NS" sysctl -qw net.ipv6.conf.p53p.disable_ipv6=0 2>/dev/null || true
	"$SRC/scripts/lab.sh" up >/dev/null 2>&1 || true
}
trap cleanup EXIT
lab_lock

"$SRC/scripts/lab.sh" up >/dev/null
# "DPDK owns the NIC": no kernel address on it, so nothing but the tap can answer.
ip -n "$POP_NS" link set p53p xdp off 2>/dev/null || true
ip -n "$POP_NS" addr flush dev p53p
ip netns exec "$POP_NS" sysctl -qw net.ipv6.conf.p53p.disable_ipv6=1
ip -n "$CLIENT_NS" neigh flush dev p53c
MAC=$(ip netns exec "$POP_NS" cat /sys/class/net/p53p/address)

HUGE=230 # a TXT RRset of about 61 KB, as tcp.sh
cp "$SRC/tests/integration/zones/tc.test.zone" "$ZONE"
for i in $(seq 1 $HUGE); do printf 'huge\tIN TXT "%03d%0252d"\n' "$i" 0; done >>"$ZONE"

cat >"$CFG" <<YAML
server:
  identity: test-pop
  control_socket: $SOCK
metrics: {enabled: true, listen: "127.0.0.1:19156"}
dataplane:
  mode: dpdk
  eal: ["-l", "1", "--no-pci", "--in-memory", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
  workers: 1
  addresses: [$V4, "$V6"]
  idle: {mode: adaptive, max_sleep_us: 100}
  exception:
    iface: $TAP
    addresses: [192.0.2.53/24, "2001:db8:53::53/64"]
    queue: 64           # small, so the flood below overflows it
    max_sleep_us: 2000
zones:
  - {name: example.com, file: $SRC/zones/example.com.zone}
  - {name: tc.test, file: $ZONE}
YAML

ctl() { "$CTL" -s "$SOCK" "$@"; }
stat_of() { ctl --json stats | $PY -c "import json,sys; s=json.load(sys.stdin)['stats']; print(eval(sys.argv[1]))" "$1"; }

start_pop53_answering "$CFG"
check "the log says dpdk mode" grep -q "(dpdk mode)" "$TMP/pop53d.log"
prog=$(ip -n "$POP_NS" link show p53p | grep -o 'prog/xdp id [0-9]* name [a-z_0-9]*' || true)
check "p53p carries libxdp's default program, not pop53's steering ($prog)" \
	bash -c '[[ "$1" == *xsk_def_prog* ]]' _ "$prog"
check "p53p has no kernel address" \
	bash -c '[ -z "$(ip -n '"$POP_NS"' -o addr show dev p53p)" ]'
tap=$(ip -n "$POP_NS" -o link show "$TAP" 2>&1)
check "the exception interface $TAP exists with the NIC's MAC $MAC" grep -q "link/ether $MAC" <<<"$tap"
taddr=$(ip -n "$POP_NS" -o addr show dev "$TAP" 2>&1)
check "$TAP carries 192.0.2.53/24 and 2001:db8:53::53/64" \
	bash -c 'grep -q "inet 192.0.2.53/24" <<<"$1" && grep -q "inet6 2001:db8:53::53/64" <<<"$1"' _ "$taddr"

# ARP and ND through the tap, then ICMP.
check "ping $V4 (ICMP through the tap)" ip netns exec "$CLIENT_NS" ping -c 3 -i 0.2 -W 2 "$V4"
check "ping -6 $V6 (ICMPv6 through the tap)" ip netns exec "$CLIENT_NS" ping -6 -c 3 -i 0.2 -W 2 "$V6"
n4=$(ip -n "$CLIENT_NS" neigh show "$V4" dev p53c)
n6=$(ip -n "$CLIENT_NS" neigh show "$V6" dev p53c)
check "ARP resolved $V4 to $MAC ($n4)" grep -q "lladdr $MAC" <<<"$n4"
check "ND resolved $V6 to $MAC ($n6)" grep -q "lladdr $MAC" <<<"$n6"

canon() { awk '!/^;/ && NF { $1=tolower($1); out=$1; for (i=2;i<=NF;i++) out=out" "$i; print out }' | sort; }
answer_of() { awk '/^;; ANSWER SECTION/{a=1;next} a&&/^$/{a=0} a' | canon; }
want_www=$(zone_rrset "$SRC/zones/example.com.zone" www.example.com. A)
r0=$(stat_of "s['responses']"); t0=$(stat_of "s['tcp']['queries']")
for addr in "$V4" "$V6"; do
	got=$(ip netns exec "$CLIENT_NS" kdig +notcp +time=2 +retry=1 @"$addr" www.example.com A 2>&1 | answer_of)
	check "kdig UDP @$addr www.example.com A answered as the zone says" \
		bash -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$want_www" "$got"
	got=$(ip netns exec "$CLIENT_NS" kdig +tcp +time=2 +retry=1 @"$addr" www.example.com A 2>&1 | answer_of)
	check "kdig +tcp @$addr www.example.com A answered through the exception path" \
		bash -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$want_www" "$got"
done
t1=$(stat_of "s['tcp']['queries']")
check "the TCP thread answered the +tcp queries ($t0 -> $t1)" [ "$t1" -ge $((t0 + 2)) ]

# TC fallback, as tcp.sh does it in xdp mode.
tc0=$(stat_of "s['tc']")
for addr in "$V4" "$V6"; do
	for nt in "txt.tc.test TXT" "huge.tc.test TXT"; do
		set -- $nt
		want=$(zone_rrset "$ZONE" "$1." "$2")
		n=$(wc -l <<<"$want")
		udp=$(ip netns exec "$CLIENT_NS" kdig +notcp +ignore +time=2 +retry=1 @"$addr" "$1" "$2" 2>&1)
		check "UDP to $addr: $1 $2 is truncated by the worker (TC=1)" grep -q 'Flags: qr aa tc' <<<"$udp"
		out=$(ip netns exec "$CLIENT_NS" kdig +time=3 +retry=1 @"$addr" "$1" "$2" 2>&1)
		got=$(answer_of <<<"$out")
		check "kdig @$addr $1 $2: retried over TCP, all $n records equal the zone's" \
			bash -c '[ -n "$1" ] && [ "$1" = "$2" ] && grep -q "(TCP)" <<<"$3"' _ "$want" "$got" "$out"
	done
done
tc1=$(stat_of "s['tc']")
check "the worker truncated ($tc0 -> $tc1)" [ "$tc1" -ge $((tc0 + 8)) ]

k=$(stat_of "s['exception']['frames']['to_kernel']"); w=$(stat_of "s['exception']['frames']['to_wire']")
check "exception frames counted both ways (to_kernel $k, to_wire $w)" [ "$k" -gt 20 -a "$w" -gt 20 ]
check "pop53ctl stats prints the exception counters" bash -c "'$CTL' -s '$SOCK' stats | grep -q '^exception frames: '"
prom=$(ip netns exec "$POP_NS" curl -s --max-time 5 http://127.0.0.1:19156/metrics)
check "Prometheus has pop53_exception_frames_total and pop53_exception_drops_total" \
	bash -c 'grep -q "^pop53_exception_frames_total{direction=\"to_kernel\"} [1-9]" <<<"$1" &&
		 grep -q "^pop53_exception_drops_total{reason=\"to_kernel_queue_full\"} " <<<"$1"' _ "$prom"

# The flood: FLOOD_N UDP datagrams to port 9 of the service address, as fast as a raw socket
# sends them. None is DNS, so each goes to the exception path: handed to the kernel or dropped
# at the full queue, and counted either way.
cat >"$TMP/flood.py" <<'PY'
import socket, struct, sys
iface, dst_mac, src_mac, src, dst, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
payload = b"not dns, exception" * 2
udp = struct.pack("!HHHH", 40000, 9, 8 + len(payload), 0) + payload
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, socket.inet_aton(src), socket.inet_aton(dst))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
eth = bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", "")) + b"\x08\x00"
frame = eth + ip + udp
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
sent = 0
while sent < n:
    try:
        s.send(frame); sent += 1
    except BlockingIOError:
        pass
print(sent)
PY
CMAC=$(ip netns exec "$CLIENT_NS" cat /sys/class/net/p53c/address)
# One stats reading, all the counters the accounting needs (rx, responses, exception, drops).
counts() {
	ctl --json stats | $PY -c 'import json,sys
s = json.load(sys.stdin)["stats"]; e = s["exception"]
print(s["rx"], s["responses"], e["frames"]["to_kernel"],
      e["drops"]["to_kernel_queue_full"] + e["drops"]["to_kernel_tap_refused"], sum(s["drops"].values()))'
}
vdrop() { ip netns exec "$POP_NS" cat /sys/class/net/p53p/statistics/rx_dropped; }
read -r rx0 r0 k0 d0 w0 < <(counts)
vd0=$(vdrop)
ip netns exec "$CLIENT_NS" $PY "$TMP/flood.py" p53c "$MAC" "$CMAC" 192.0.2.1 "$V4" "$FLOOD_N" >"$TMP/flood.out" 2>&1 &
FLOOD_PID=$!
sleep 0.5
# Queries while the flood runs: one started every 0.2 s while it is still sending (at most
# 50), each in the background, so a query the veth drops and kdig retries does not hold back
# the next (on a loaded machine the flood may last only a second or two).
asked=0; qpids=()
while kill -0 "$FLOOD_PID" 2>/dev/null && [ $asked -lt 50 ]; do
	asked=$((asked + 1))
	ip netns exec "$CLIENT_NS" kdig +notcp +time=1 +retry=2 @"$V4" www.example.com A \
		>"$TMP/q.$asked" 2>/dev/null &
	qpids+=($!)
	sleep 0.2
done
wait "$FLOOD_PID"; FLOOD_PID=
[ ${#qpids[@]} -eq 0 ] || wait "${qpids[@]}" # (no pids: a bare wait would wait for every job)
answered=$(cat "$TMP"/q.* 2>/dev/null | grep -c 'status: NOERROR')
sent=$(cat "$TMP/flood.out")
sleep 1 # the exception thread empties the rings
read -r rx1 r1 k1 d1 w1 < <(counts)
vd=$(( $(vdrop) - vd0 ))
rx=$((rx1 - rx0)); k=$((k1 - k0)); d=$((d1 - d0)); r=$((r1 - r0)); w=$((w1 - w0))
echo "# flood: $sent frames sent, $rx reached the worker (the rest the veth dropped before the AF_XDP ring); to the kernel $k, dropped at the exception queue $d; DNS answered $answered of $asked queries asked while it ran"
check "the flood was sent whole ($sent of $FLOOD_N frames)" [ "$sent" = "$FLOOD_N" ]
# A query the veth drops on every try (it drops most of the flood before the AF_XDP ring, $vd
# below) never reaches pop53, so not every one is answered; the accounting below proves the
# worker answered every DNS query it received while it was flooded.
check "DNS was answered during the flood ($answered of $asked queries, at least 2 asked, at least half answered)" \
	[ "$asked" -ge 2 -a "$answered" -ge 1 -a $((answered * 2)) -ge "$asked" ]
check "flood frames were dropped at the bounded queue and counted ($d)" [ "$d" -gt 0 ]
# How much of the flood the veth carries depends on the CPU left to its receive work (a busy
# machine drops more), so the check is that every frame is accounted for: it reached the
# worker or the veth counted it dropped; and that the worker got a real share of it.
check "every flood frame reached the worker ($rx) or was counted dropped by the veth ($vd), of $sent" \
	[ $((rx + vd)) -ge $((sent * 99 / 100)) ]
check "a real share of the flood reached the worker ($rx of $sent, at least a tenth)" [ "$rx" -ge $((sent / 10)) ]
check "every frame the worker received is accounted for: to the kernel + dropped there + responses + worker drops = received ($k + $d + $r + $w = $rx)" \
	[ $((k + d + r + w)) -eq "$rx" ]
check "no flood frame counted as a worker drop ($w)" [ "$w" -eq 0 ]
check "after the flood: ping $V4 and TCP DNS still work" bash -c \
	"ip netns exec $CLIENT_NS ping -c 1 -W 2 $V4 >/dev/null && ip netns exec $CLIENT_NS kdig +tcp +time=2 @$V4 www.example.com A | grep -q 'status: NOERROR'"

check "SIGTERM: pop53d exits 0" stop_pop53
check "clean exit: no mbuf leaked in the NIC's pools" grep -q "info\]: mempool: .*: no leak" "$TMP/pop53d.log"
check "clean exit: no mbuf leaked in the exception pool" grep -q "exception mempool: .*: no leak" "$TMP/pop53d.log"
check "the exception interface is gone" bash -c "! ip -n $POP_NS link show $TAP >/dev/null 2>&1"
check "no XDP program left on p53p" bash -c "! ip -n $POP_NS link show p53p | grep -q prog/xdp"
grep -E "exception|mempool|LEAK" "$TMP/pop53d.log" | sed 's/^/# /'
finish
