#!/usr/bin/env bash
# BGP through the exception path in dpdk mode, end to end. pop53d owns the lab veth p53p as in
# dpdk_mode.sh (no kernel address on it, libxdp's default program sends every frame to DPDK);
# its exception interface p53x carries the host's own addresses (192.0.2.179/24 and
# 2001:db8:53::179/64, dataplane.exception.addresses) and the service addresses. FRR (zebra +
# bgpd) in the pop namespace peers from the host addresses, through the tap, the exception
# thread and the worker's queue, with BIRD 2 in the client namespace; pop53's frr announcer
# puts the service prefixes on its tun devices. Every assertion about routes reads BIRD's RIB.
#   - BGP sessions over IPv4 and IPv6 come up through the tap;
#   - the canary passes: BIRD learns 192.0.2.53/32 and 2001:db8:53::53/128, not de-preferred;
#   - an SSH-like TCP session to a management address (a banner server on 192.0.2.179:2222 in
#     the pop namespace): connect, read the banner, send a line, read its echo;
#   - the canary breaks (zone reload without it): both prefixes gone within fall x interval
#     + 1 s; fixed: back after hold-down;
#   - the exception counters show the BGP and TCP traffic both ways;
#   - SIGTERM: withdrawn within 2 s (the UPDATE leaves during stop_linger), exit 0, no mbuf
#     leaked, the tap gone; the sessions stay down with it (the host addresses went with the
#     tap).
. "$(dirname "$0")/lib.sh"
BGP_DIR=$TMP
BGP_DEV= # pop53d puts the host addresses on its tap
. "$(dirname "$0")/bgp_lib.sh"
CTL="$BUILD/control/pop53ctl"
PY=/usr/bin/python3
FRR=$TMP/frr
SOCK=$TMP/control.sock
ZONE=$TMP/example.com.zone
CFG=$TMP/pop53.yaml
TAP=p53x
P4=$BGP_P4
P6=$BGP_P6
HOLD_S=1
INTERVAL_MS=200
FALL=3
BANNER_PID=

cleanup() {
	[ -z "$BANNER_PID" ] || kill "$BANNER_PID" 2>/dev/null || true
	stop_pop53 >/dev/null 2>&1 || true
	bgp_cleanup
	cleanup_common
	ip netns exec "$POP_NS" sysctl -qw net.ipv6.conf.p53p.disable_ipv6=0 2>/dev/null || true
	"$SRC/scripts/lab.sh" up >/dev/null 2>&1 || true
}
trap cleanup EXIT
lab_lock

ctl() { "$CTL" -s "$SOCK" "$@"; }
# What zebra, bgpd and the kernel hold for the IPv6 prefix, shown when a check on it fails.
routes() {
	{ vtysh --vty_socket "$FRR" -c "show ipv6 route $P6" -c "show bgp ipv6 unicast"
	  ip -n "$POP_NS" -6 addr; } 2>&1 | sed 's/^/# /'
	return 1
}
bgp_diag() { # what a session that did not come up looked like, for the log
	{ birdc_ show protocols all 2>&1 | grep -E '^pop|State|Last error|Neighbor address'
	  vtysh --vty_socket "$FRR" -c "show bgp summary" 2>&1
	  echo "pop neighbours:"; ip -n "$POP_NS" neigh 2>&1
	  echo "client neighbours:"; ip -n "$CLIENT_NS" neigh 2>&1
	  ip -n "$POP_NS" -6 addr show dev "$TAP" 2>&1
	  ctl --json stats 2>&1 | $PY -c 'import json,sys; print("exception:", json.load(sys.stdin)["stats"].get("exception"))'
	  tail -n 15 "$FRR/bgpd.log" "$BGP_DIR/bird.log" 2>&1; } | sed 's/^/# /'
}
stat_of() { ctl --json stats | $PY -c "import json,sys; s=json.load(sys.stdin)['stats']; print(eval(sys.argv[1]))" "$1"; }

set_canary() { # set_canary on|off [noreload]
	cp "$SRC/zones/example.com.zone" "$ZONE.new"
	[ "$1" = on ] && printf 'canary\t60 IN TXT\t"pop53 canary"\n' >>"$ZONE.new"
	cat "$ZONE.new" >"$ZONE"
	rm -f "$ZONE.new"
	[ "${2:-}" = noreload ] || ctl zone reload >/dev/null
}

"$SRC/scripts/lab.sh" up >/dev/null
ip -n "$POP_NS" link set lo up
ip -n "$POP_NS" link set p53p xdp off 2>/dev/null || true
ip -n "$POP_NS" addr flush dev p53p
ip netns exec "$POP_NS" sysctl -qw net.ipv6.conf.p53p.disable_ipv6=1
ip -n "$CLIENT_NS" neigh flush dev p53c
bgp_setup "$SRC/configs/frr/frr-redistribute.conf"
bgp_start_bird || { not_ok "BIRD starts"; finish; exit 1; }

set_canary on noreload
cat >"$CFG" <<YAML
server:
  identity: dpdk-bgp-test
  control_socket: $SOCK
dataplane:
  mode: dpdk
  eal: ["-l", "1", "--no-pci", "--in-memory", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
  workers: 1
  addresses: [$V4, "$V6"]
  idle: {mode: adaptive, max_sleep_us: 100}
  exception:
    iface: $TAP
    addresses: [$BGP_HOST4/24, "$BGP_HOST6/64"]
zones:
  - {name: example.com, file: $ZONE}
health:
  hold_down: ${HOLD_S}s
  min_announce_interval: 1s
  warmup: 0
  stop_linger: 1s
  canary:
    name: canary.example.com
    type: TXT
    expect: ['"pop53 canary"']
    interval: ${INTERVAL_MS}ms
    timeout: 100ms
    fall: $FALL
    rise: 2
anycast:
  frr:
    check: "vtysh --vty_socket $FRR -c 'show bgp summary json' | grep -q Established"
    check_interval: 300ms
    check_timeout: 2s
YAML

start_pop53_answering "$CFG"
check "the log says dpdk mode" grep -q "(dpdk mode)" "$TMP/pop53d.log"
check "p53p has no kernel address (only the tap can answer)" \
	bash -c '[ -z "$(ip -n '"$POP_NS"' -o addr show dev p53p)" ]'
taddr=$(ip -n "$POP_NS" -o addr show dev "$TAP" 2>&1)
check "$TAP carries the host addresses $BGP_HOST4/24 and $BGP_HOST6/64" \
	bash -c 'grep -q "inet $1/24" <<<"$3" && grep -q "inet6 $2/64" <<<"$3"' _ "$BGP_HOST4" "$BGP_HOST6" "$taddr"

read -r k0 w0 < <(ctl --json stats | $PY -c 'import json,sys; f=json.load(sys.stdin)["stats"]["exception"]["frames"]; print(f["to_kernel"], f["to_wire"])')
bgp_start_frr || { not_ok "FRR starts"; finish; exit 1; }
t=$(wait_ms 20000 bgp_established)
check "BGP sessions FRR <-> BIRD over IPv4 and IPv6 through the tap are Established (${t} ms)" bgp_established
bgp_established || bgp_diag
t=$(wait_ms 5000 bgp_full "$P4"); check "canary passing: BIRD learns $P4 from pop53's announcer (${t} ms)" bgp_full "$P4"
t=$(wait_ms 3000 bgp_full "$P6"); check "...and $P6 (${t} ms)" bgp_full "$P6"
check "BIRD's next hop for $P4 is the host address $BGP_HOST4" \
	bash -c "$(declare -f bgp_route birdc_); BGP_BIRD_SOCK=$BGP_BIRD_SOCK; bgp_route $P4 | grep -q 'via $BGP_HOST4'"

# SSH-like: a TCP service on a management address of the pop namespace, reached from outside.
cat >"$TMP/banner.py" <<'PY'
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(4)
s.settimeout(30)
c, _ = s.accept(); c.settimeout(5)
c.sendall(b"SSH-2.0-p53-lab\r\n")
c.sendall(b"echo:" + c.recv(100)); c.close()
PY
ip netns exec "$POP_NS" $PY "$TMP/banner.py" "$BGP_HOST4" 2222 &
BANNER_PID=$!
sleep 0.3
got=$(ip netns exec "$CLIENT_NS" $PY -c '
import socket, sys
c = socket.create_connection((sys.argv[1], 2222), timeout=3)
b = c.recv(100); c.sendall(b"hello"); e = c.recv(100)
print((b + e).decode().replace("\r\n", "|"))' "$BGP_HOST4" 2>&1)
wait "$BANNER_PID" 2>/dev/null; BANNER_PID=
check "TCP to the management address $BGP_HOST4:2222 through the tap: banner and echo ($got)" \
	[ "$got" = "SSH-2.0-p53-lab|echo:hello" ]

# The canary breaks: withdrawn; fixed: back after hold-down.
limit=$(( FALL * INTERVAL_MS + 1000 ))
set_canary off
t=$(wait_ms $limit bgp_gone "$P4"); check "canary broken: $P4 gone from BIRD within ${limit} ms (${t} ms)" bgp_gone "$P4"
t=$(wait_ms $limit bgp_gone "$P6"); check "...and $P6 (${t} ms after $P4)" bgp_gone "$P6"
bgp_gone "$P6" || routes
check "the sessions stayed up meanwhile" bgp_established
bgp_established || bgp_diag
set_canary on
t=$(wait_ms 6000 bgp_full "$P4"); check "canary fixed: $P4 back after hold-down (${t} ms)" bgp_full "$P4"
t=$(wait_ms 3000 bgp_full "$P6"); check "...and $P6 (${t} ms)" bgp_full "$P6"
out=$(ip netns exec "$CLIENT_NS" kdig +notcp +time=2 +retry=2 @"$V4" canary.example.com TXT 2>&1)
check "DNS over UDP still answered by the worker" grep -q 'pop53 canary' <<<"$out"
grep -q 'pop53 canary' <<<"$out" || { echo "$out"; ip -n "$CLIENT_NS" neigh; ctl stats; } | sed 's/^/# /'

read -r k1 w1 < <(ctl --json stats | $PY -c 'import json,sys; f=json.load(sys.stdin)["stats"]["exception"]["frames"]; print(f["to_kernel"], f["to_wire"])')
check "BGP and TCP went through the exception path both ways (to_kernel +$((k1 - k0)), to_wire +$((w1 - w0)))" \
	[ $((k1 - k0)) -ge 10 -a $((w1 - w0)) -ge 10 ]

# The withdraw rides the exception path too: it must leave while the workers still serve
# (stop_linger), or BIRD drops the routes only when its 3 s hold timer expires.
kill -TERM "$POP53_PID"
t=$(wait_ms 2000 bgp_gone "$P4"); check "SIGTERM: $P4 gone from BIRD within 2 s, by the withdraw, not the hold timer (${t} ms)" bgp_gone "$P4"
t=$(wait_ms 1000 bgp_gone "$P6"); check "SIGTERM: ...and $P6 (${t} ms)" bgp_gone "$P6"
stop_pop53; rc=$?
check "pop53d exits 0" [ $rc -eq 0 ]
check "log: withdrawn before the workers stopped" bash -c "grep -n 'stopping: withdrawn' $TMP/pop53d.log | head -1 | cut -d: -f1 | { read a; b=\$(grep -n 'control socket closed, .*workers next' $TMP/pop53d.log | cut -d: -f1); [ -n \"\$a\" ] && [ \"\$a\" -lt \"\$b\" ]; }"
check "no mbuf leaked in the NIC's pools" grep -q "info\]: mempool: .*: no leak" "$TMP/pop53d.log"
check "no mbuf leaked in the exception pool" grep -q "exception mempool: .*: no leak" "$TMP/pop53d.log"
check "the tap is gone" bash -c "! ip -n $POP_NS link show $TAP >/dev/null 2>&1"
grep -E "exception|anycast|health" "$TMP/pop53d.log" | head -20 | sed 's/^/# /'
finish
