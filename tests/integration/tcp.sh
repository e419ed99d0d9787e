#!/usr/bin/env bash
# DNS over TCP and the TC fallback, on the lab in xdp mode (the XDP program passes TCP/53 to
# the kernel, where pop53d's TCP threads listen on the service addresses).
#
#   run 1 (one TCP thread, small limits and timeouts): RFC 7766 framing with a raw-socket
#          client (tcp_client.py): pipelining, split segments, several queries per segment,
#          bad input (length 0, short length + EOF), slowloris, a client that never reads,
#          idle timeout, per-client and total connection limits, the keepalive option, a
#          61 KB answer, a reload under an open connection, memory bounded under a client
#          that never reads, the counters in pop53ctl and Prometheus; then no fd left behind,
#          and SIGTERM with connections open exits cleanly
#   run 2 (two TCP threads, defaults): SO_REUSEPORT listeners per thread, IP_FREEBIND and
#          IPV6_FREEBIND for addresses not on any interface yet, and the TC fallback end to end: dig and kdig
#          with their default retry get the whole answer over TCP, IPv4 and IPv6, compared
#          with the zone file record by record; a config reload moves the listeners
. "$(dirname "$0")/lib.sh"
CTL="$BUILD/control/pop53ctl"
PY=/usr/bin/python3
CLIENT="$SRC/tests/integration/tcp_client.py"
SOCK=$TMP/control.sock
ZONE=$TMP/tc.test.zone
CFG=$TMP/pop53.yaml
HOLD_PID=
cleanup() {
	[ -z "$HOLD_PID" ] || kill "$HOLD_PID" 2>/dev/null || true
	ip -n "$CLIENT_NS" addr del 192.0.2.2/24 dev p53c 2>/dev/null || true
	ip -n "$CLIENT_NS" addr del 192.0.2.3/24 dev p53c 2>/dev/null || true
	ip -n "$POP_NS" addr del 192.0.2.54/32 dev lo 2>/dev/null || true
	ip -n "$POP_NS" addr del 2001:db8:53::54/128 dev p53p 2>/dev/null || true
	cleanup_common
}
trap cleanup EXIT
lab_lock

"$SRC/scripts/lab.sh" up >/dev/null
ip -n "$CLIENT_NS" addr replace 192.0.2.2/24 dev p53c
ip -n "$CLIENT_NS" addr replace 192.0.2.3/24 dev p53c

# The test zone plus a TXT RRset of about 61 KB: 230 records of 255 bytes, the largest that
# keeps the whole response under the 65535 bytes of a TCP length field.
HUGE=230
fresh_zone() {
	cp "$SRC/tests/integration/zones/tc.test.zone" "$ZONE"
	for i in $(seq 1 $HUGE); do
		printf 'huge\tIN TXT "%03d%0252d"\n' "$i" 0
	done >>"$ZONE"
}

# tcp_config THREADS ADDRESSES TCP_KEYS
tcp_config() {
	cat >"$CFG" <<YAML
server:
  identity: test-pop
  control_socket: $SOCK
metrics: {enabled: true, listen: "127.0.0.1:19155"}
dataplane:
  eal: ["-l", "1", "--no-pci", "--in-memory", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
  workers: 1
  addresses: [$2]
  idle: {mode: adaptive, max_sleep_us: 100}
zones:
  - {name: example.com, file: $SRC/zones/example.com.zone}
  - {name: tc.test, file: $ZONE}
tcp: {threads: $1$3}
YAML
}

ctl() { "$CTL" -s "$SOCK" "$@"; }
stat_of() { ctl --json stats | $PY -c "import json,sys; s=json.load(sys.stdin)['stats']; print(eval(sys.argv[1]))" "$1"; }
# Run one tcp_client.py case; its ok / not ok lines count as this test's checks.
client() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done < <(ip netns exec "$CLIENT_NS" timeout 120 $PY "$CLIENT" "$@" --ctl "$CTL" --sock "$SOCK" \
		--zone "$ZONE" --huge "$HUGE" 2>&1)
}
nfds() { ls "/proc/$POP53_PID/fd" 2>/dev/null | wc -l; }
listeners() { ip netns exec "$POP_NS" ss -Hltn "sport = :53" | awk -v a="$1" '$4 == a' | wc -l; }

# --- run 1 ------------------------------------------------------------------------------
IDLE=2000 IO=1000 PER_CLIENT=4 MAX_CONNS=6
fresh_zone
tcp_config 1 "$V4, \"$V6\"" ", idle_timeout_ms: $IDLE, io_timeout_ms: $IO, max_connections: $MAX_CONNS, max_per_client: $PER_CLIENT"
start_pop53_answering "$CFG"
FDS0=$(nfds)
check "one TCP thread listens on each service address" [ "$(listeners "$V4:53")" = 1 -a "$(listeners "[$V6]:53")" = 1 ]

ARGS=(--idle-ms "$IDLE" --io-ms "$IO" --per-client "$PER_CLIENT" --max-conns "$MAX_CONNS")
client pipeline --addr "$V4" "${ARGS[@]}"
client pipeline --addr "$V6" "${ARGS[@]}"
client split --addr "$V4" "${ARGS[@]}"
client bad-input --addr "$V4" "${ARGS[@]}"
client keepalive --addr "$V6" "${ARGS[@]}"
client big --addr "$V4" "${ARGS[@]}"
client slowloris --addr "$V4" "${ARGS[@]}"
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$POP53_PID/status"; }
rss0=$(rss)
client nonreader --addr "$V4" "${ARGS[@]}"
rss1=$(rss)
check "the client that never read asked for 18 MB of answers: pop53d grew by $((rss1 - rss0)) KiB (bounded buffers, < 8 MiB)" \
	[ $((rss1 - rss0)) -lt 8192 ]
client idle --addr "$V4" "${ARGS[@]}"
client limits --addr "$V4" "${ARGS[@]}"
client reload --addr "$V4" "${ARGS[@]}"

open_now=
for _ in $(seq 1 30); do
	open_now=$(stat_of "s['tcp']['open']")
	[ "$open_now" = 0 ] && break
	sleep 0.2
done
check "every connection closed: tcp.open is 0 ($open_now)" [ "$open_now" = 0 ]
check "no file descriptor left behind ($FDS0 at start, $(nfds) now)" [ "$(nfds)" = "$FDS0" ]
q=$(stat_of "s['tcp']['queries']"); r=$(stat_of "s['tcp']['responses']")
check "TCP queries and responses are counted ($q, $r)" [ "$q" -gt 50 -a "$r" -gt 50 ]
check "pop53ctl stats prints the TCP counters" bash -c "'$CTL' -s '$SOCK' stats | grep -q '^tcp closed: eof='"
prom=$(ip netns exec "$POP_NS" curl -s --max-time 5 http://127.0.0.1:19155/metrics)
for series in 'pop53_tcp_closed_total{reason="slow_message"} 2' 'pop53_tcp_closed_total{reason="write_stalled"} 1' \
	'pop53_tcp_refused_total{reason="per_client"} 1' 'pop53_tcp_open_connections 0'; do
	check "Prometheus: $series" grep -qxF "$series" <<<"$prom"
done

# SIGTERM while connections are open, one of them mid-message.
ip netns exec "$CLIENT_NS" $PY "$CLIENT" hold --addr "$V4" --ctl "$CTL" --sock "$SOCK" >"$TMP/hold.out" 2>&1 &
HOLD_PID=$!
for _ in $(seq 1 50); do grep -q holding "$TMP/hold.out" && break; sleep 0.1; done
check "three connections held open" [ "$(stat_of "s['tcp']['open']")" = 3 ]
check "SIGTERM with open TCP connections: pop53d exits 0" stop_pop53
check "the stop closed them (shutdown 3)" grep -q 'closed:.* shutdown 3' "$TMP/pop53d.log"
check "every mbuf back after the stop" grep -q 'no leak' "$TMP/pop53d.log"
kill "$HOLD_PID" 2>/dev/null; wait "$HOLD_PID" 2>/dev/null; HOLD_PID=

# --- run 2 ------------------------------------------------------------------------------
fresh_zone
tcp_config 2 "$V4, \"$V6\", 192.0.2.54, \"2001:db8:53::54\"" ""
start_pop53_answering "$CFG"
check "two TCP threads: two SO_REUSEPORT listeners on $V4 and on $V6" \
	[ "$(listeners "$V4:53")" = 2 -a "$(listeners "[$V6]:53")" = 2 ]
check "192.0.2.54 and 2001:db8:53::54 are on no interface, yet listened on (IP_FREEBIND, IPV6_FREEBIND)" \
	[ "$(listeners 192.0.2.54:53)" = 2 -a "$(listeners "[2001:db8:53::54]:53")" = 2 ]
# IPv4 on lo (the kernel answers ARP for it on any interface); IPv6 on the veth, since
# neighbour discovery only answers for the receiving interface's addresses.
ip -n "$POP_NS" addr add 192.0.2.54/32 dev lo
ip -n "$POP_NS" addr add 2001:db8:53::54/128 dev p53p nodad
for a in 192.0.2.54 2001:db8:53::54; do
	out=$(ip netns exec "$CLIENT_NS" kdig +tcp +time=2 +retry=1 @"$a" www.tc.test A 2>&1)
	check "once $a is added, it answers over TCP" grep -q 'www.tc.test.*192.0.2.80' <<<"$out"
done
served=0
for i in $(seq 1 20); do
	ip netns exec "$CLIENT_NS" kdig +tcp +time=2 +retry=0 @"$V4" www.tc.test A 2>/dev/null | grep -q '192.0.2.80' && served=$((served + 1))
done
check "20 connections in a row over two threads: all answered ($served)" [ "$served" = 20 ]

# TC fallback: the workers truncate, dig and kdig retry over TCP by themselves.
tc0=$(stat_of "s['tc']"); tq0=$(stat_of "s['tcp']['queries']")
canon() { awk '!/^;/ && NF { $1=tolower($1); out=$1; for (i=2;i<=NF;i++) out=out" "$i; print out }' | sort; }
for addr in "$V4" "$V6"; do
	for nt in "txt.tc.test TXT" "aaaa.tc.test AAAA" "huge.tc.test TXT"; do
		set -- $nt
		want=$(zone_rrset "$ZONE" "$1." "$2")
		n=$(wc -l <<<"$want")
		udp=$(ip netns exec "$CLIENT_NS" kdig +notcp +ignore +time=2 +retry=1 @"$addr" "$1" "$2" 2>&1)
		check "UDP to $addr: $1 $2 is truncated by the workers (TC=1)" grep -q 'Flags: qr aa tc' <<<"$udp"
		out=$(ip netns exec "$CLIENT_NS" dig +time=2 +tries=2 @"$addr" "$1" "$2" 2>&1)
		got=$(awk '/^;; ANSWER SECTION/{a=1;next} a&&/^$/{a=0} a' <<<"$out" | canon)
		check "dig @$addr $1 $2: truncated, retried over TCP, all $n records equal the zone's" \
			bash -c '[ -n "$1" ] && [ "$1" = "$2" ] && grep -q "Truncated, retrying in TCP mode" <<<"$3"' _ "$want" "$got" "$out"
		out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$addr" "$1" "$2" 2>&1)
		got=$(awk '/^;; ANSWER SECTION/{a=1;next} a&&/^$/{a=0} a' <<<"$out" | canon)
		check "kdig @$addr $1 $2: retried over TCP, all $n records equal the zone's" \
			bash -c '[ -n "$1" ] && [ "$1" = "$2" ] && grep -q "(TCP)" <<<"$3"' _ "$want" "$got" "$out"
	done
done
tc1=$(stat_of "s['tc']"); tq1=$(stat_of "s['tcp']['queries']")
check "the counters saw both halves: TC over UDP ($tc0 -> $tc1), then TCP ($tq0 -> $tq1)" \
	[ "$tc1" -ge $((tc0 + 12)) -a "$tq1" -ge $((tq0 + 12)) ]

# A config reload drops the .54 addresses: their listeners go, the others stay.
tcp_config 2 "$V4, \"$V6\"" ""
out=$(ctl reload 2>&1)
check "config reload without the .54 addresses succeeds ($(head -1 <<<"$out"))" grep -q '^reloaded in' <<<"$out"
check "their listeners are gone, the others kept" \
	[ "$(listeners 192.0.2.54:53)" = 0 -a "$(listeners "[2001:db8:53::54]:53")" = 0 -a "$(listeners "$V4:53")" = 2 -a "$(listeners "[$V6]:53")" = 2 ]
out=$(ip netns exec "$CLIENT_NS" kdig +tcp +time=2 +retry=1 @"$V6" www.tc.test A 2>&1)
check "TCP still answered on $V6 after the reload" grep -q 'www.tc.test.*192.0.2.80' <<<"$out"
check "pop53d exits 0" stop_pop53
check "every mbuf back after the stop" grep -q 'no leak' "$TMP/pop53d.log"

[ "$FAIL" -eq 0 ] || cat "$TMP/pop53d.log"
finish
