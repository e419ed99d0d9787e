#!/usr/bin/env bash
# The other announcers, each against a real BGP speaker on the pop side and BIRD 2 as the
# upstream router in the client namespace; assertions read the upstream's RIB.
#
#   run 1: bird (`birdc enable|disable` of static protocols in a second BIRD, the PoP's own
#          speaker) and command (a hook script logging its arguments): announced, drain
#          (de-preferred, then withdrawn), the PoP's BIRD stopped (bird announcer failed,
#          pop53d keeps serving, the hook still runs), SIGTERM
#   run 2: exabgp (API lines into a FIFO that ExaBGP's process reads): announced, drain
#          (GRACEFUL_SHUTDOWN community), SIGTERM withdraws
. "$(dirname "$0")/lib.sh"
BGP_DIR=$TMP
. "$(dirname "$0")/bgp_lib.sh"
CTL="$BUILD/control/pop53ctl"
SOCK=$TMP/control.sock
ZONE=$TMP/example.com.zone
CFG=$TMP/pop53.yaml
EAL_PREFIX=p53ann-test
POPBIRD=$TMP/popbird.ctl
FIFO=$TMP/exabgp.fifo
HOOKLOG=$TMP/hook.log
P4=$BGP_P4
EXA_PID=

cleanup() {
	stop_pop53 >/dev/null 2>&1 || true
	[ -f "$TMP/popbird.pid" ] && kill "$(cat "$TMP/popbird.pid")" 2>/dev/null
	[ -n "$EXA_PID" ] && kill "$EXA_PID" 2>/dev/null
	bgp_cleanup
	rm -rf "/var/run/dpdk/$EAL_PREFIX"
	cleanup_common
}
trap cleanup EXIT
lab_lock

ctl() { "$CTL" -s "$SOCK" "$@"; }
up4() { birdc_ show protocols 2>/dev/null | grep -qE '^pop4 .*Established'; }
community() { bgp_route "$P4" | grep -q 'BGP.community:.*(65535,0)'; }
hook_has() { grep -qx "$1" "$HOOKLOG" 2>/dev/null; }

cp "$SRC/zones/example.com.zone" "$ZONE"
printf 'canary\t60 IN TXT\t"pop53 canary"\n' >>"$ZONE"
printf '#!/bin/sh\necho "$*" >>%s\n' "$HOOKLOG" >"$TMP/hook.sh"
chmod +x "$TMP/hook.sh"

write_cfg() { # write_cfg ANNOUNCER-YAML
	cat >"$CFG" <<YAML
server:
  identity: announcers-test
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
  drain_time: 2s
  stop_linger: 200ms
  canary: {name: canary.example.com, type: TXT, expect: ['"pop53 canary"'], interval: 200ms, timeout: 100ms}
anycast:
  prefixes: [$P4]
  retry: 300ms
$1
  command: {run: $TMP/hook.sh, timeout: 2s}
YAML
}

"$SRC/scripts/lab.sh" up >/dev/null
ip -n "$POP_NS" link set lo up
bgp_setup "$SRC/configs/frr/frr-redistribute.conf"
bgp_start_bird || { not_ok "upstream BIRD starts"; finish; exit 1; }

# --- run 1: bird + command ------------------------------------------------------------------
# The PoP's own BIRD: two static protocols pop53d enables and disables; its export filter
# marks the second one's route de-preferred (65535:0, AS path prepended).
cat >"$TMP/popbird.conf" <<CONF
log "$TMP/popbird.log" all;
router id $BGP_HOST4;
protocol device { scan time 1; }
protocol static p53_anycast { disabled; ipv4; route $P4 unreachable; }
protocol static p53_anycast_dp { disabled; ipv4; route $P4 unreachable; }
protocol bgp up4 {
	local $BGP_HOST4 as 65053;
	neighbor 192.0.2.1 as 65000;
	hold time 3; keepalive time 1; connect retry time 1; error wait time 1, 2;
	ipv4 {
		import none;
		export filter {
			if proto = "p53_anycast_dp" then {
				bgp_community.add((65535, 0));
				bgp_path.prepend(65053); bgp_path.prepend(65053); bgp_path.prepend(65053);
				accept;
			}
			if proto = "p53_anycast" then accept;
			reject;
		};
	};
}
CONF
ip netns exec "$POP_NS" bird -s "$POPBIRD" -c "$TMP/popbird.conf" -P "$TMP/popbird.pid" || { not_ok "PoP BIRD starts"; finish; exit 1; }
t=$(wait_ms 20000 up4); check "upstream BIRD peers with the PoP's BIRD (${t} ms)" up4
write_cfg "  bird: {socket: $POPBIRD, protocol: p53_anycast, depref_protocol: p53_anycast_dp, timeout: 2s}"
start_pop53_answering "$CFG"
t=$(wait_ms 5000 bgp_full "$P4"); check "bird: upstream learns $P4 (${t} ms)" bgp_full "$P4"
t=$(wait_ms 3000 hook_has "announce $P4"); check "command: hook ran with 'announce $P4' (${t} ms)" hook_has "announce $P4"
check "PoP BIRD: p53_anycast enabled, p53_anycast_dp disabled" bash -c "birdc -s $POPBIRD show protocols | grep -qE '^p53_anycast +Static .* up ' && birdc -s $POPBIRD show protocols | grep -qE '^p53_anycast_dp +Static .* down '"
ctl drain >/dev/null
t=$(wait_ms 3000 bgp_depref "$P4"); check "bird drain: upstream sees $P4 de-preferred (${t} ms)" bgp_depref "$P4"
t=$(wait_ms 3000 hook_has "depref $P4"); check "command: hook ran with 'depref $P4'" hook_has "depref $P4"
t=$(wait_ms 4000 bgp_gone "$P4"); check "bird drain: withdrawn after drain_time (${t} ms)" bgp_gone "$P4"
t=$(wait_ms 3000 hook_has "withdraw $P4"); check "command: hook ran with 'withdraw $P4'" hook_has "withdraw $P4"
# birdc cannot reach BIRD: the bird announcer fails, the hook and the DNS go on.
kill "$(cat "$TMP/popbird.pid")"
wait_ms 3000 bash -c "! [ -S $POPBIRD ]" >/dev/null
: >"$HOOKLOG"
ctl undrain >/dev/null
t=$(wait_ms 4000 bash -c "$CTL -s $SOCK health | grep -qE '^announcer bird +failed .*birdc enable p53_anycast'")
check "PoP BIRD stopped: pop53ctl health shows the bird announcer failed with birdc's error (${t} ms)" [ "${t%+}" = "$t" ]
t=$(wait_ms 3000 hook_has "announce $P4"); check "...while the command announcer still applied 'announce' (${t} ms)" hook_has "announce $P4"
check "...and pop53d still answers" bash -c "ip netns exec $CLIENT_NS kdig +time=1 +retry=1 @$V4 canary.example.com TXT | grep -q 'pop53 canary'"
check "the failure is logged" grep -q 'anycast: bird: cannot make it announced' "$TMP/pop53d.log"
stop_pop53; rc=$?
check "SIGTERM: exit 0" [ $rc -eq 0 ]
check "SIGTERM: the hook ran with 'withdraw $P4' last" [ "$(tail -1 "$HOOKLOG")" = "withdraw $P4" ]

# --- run 2: exabgp --------------------------------------------------------------------------
birdc_ show protocols >/dev/null
mkfifo "$FIFO"
cat >"$TMP/exabgp.conf" <<CONF
process pop53 {
	run /bin/cat $FIFO;
	encoder text;
}
neighbor 192.0.2.1 {
	router-id $BGP_HOST4;
	local-address $BGP_HOST4;
	local-as 65053;
	peer-as 65000;
	hold-time 3;
	api { processes [ pop53 ]; }
}
CONF
exabgp_daemon_user=root exabgp_daemon_daemonize=false exabgp_log_destination="$TMP/exabgp.log" \
	exabgp_tcp_bind='' exabgp_api_ack=false \
	ip netns exec "$POP_NS" exabgp "$TMP/exabgp.conf" >"$TMP/exabgp.out" 2>&1 &
EXA_PID=$!
t=$(wait_ms 20000 up4); check "upstream BIRD peers with ExaBGP (${t} ms)" up4
write_cfg "  exabgp: {output: $FIFO}"
: >"$HOOKLOG"
start_pop53_answering "$CFG"
t=$(wait_ms 5000 bgp_has "$P4"); check "exabgp: upstream learns $P4 (${t} ms)" bash -c "$(declare -f bgp_route birdc_); BGP_BIRD_SOCK=$BGP_BIRD_SOCK; bgp_route $P4 | grep -q unicast && ! bgp_route $P4 | grep -q 65535,0"
ctl drain >/dev/null
t=$(wait_ms 3000 community); check "exabgp drain: upstream sees the GRACEFUL_SHUTDOWN community (${t} ms)" community
t=$(wait_ms 4000 bgp_gone "$P4"); check "exabgp drain: withdrawn after drain_time (${t} ms)" bgp_gone "$P4"
ctl undrain >/dev/null
t=$(wait_ms 4000 bgp_has "$P4"); check "exabgp undrain: announced again after hold-down (${t} ms)" bgp_has "$P4"
kill -TERM "$POP53_PID"
t=$(wait_ms 2000 bgp_gone "$P4"); check "exabgp SIGTERM: $P4 withdrawn (${t} ms)" bgp_gone "$P4"
stop_pop53
finish
