#!/usr/bin/env bash
# Regression: after pop53d was killed (SIGKILL) in dpdk mode, libxdp's default program
# (xsk_def_prog) stayed on the veth and pop53d refused to start, as for any foreign program.
# Now a dpdk-mode run records the program it attached beside its control socket
# (xdp-<iface>.owner, control/net/xdp_owner.h) and the next run detaches that program, and
# only that one:
#   - run A records the id `ip link` shows, with its pid; killed with SIGKILL, the program
#     stays (the situation that broke);
#   - A again: detaches it (the log names it), answers, records the new id; SIGTERM: exit 0,
#     program and record gone;
#   - an xsk_def_prog left by ANOTHER instance (B, its own control socket directory) is
#     foreign to A: with no record, and with a record naming another program id, A refuses to
#     start and the program stays; B itself then detaches it and starts;
#   - B killed in dpdk mode and restarted in xdp mode: the left program is detached as well.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
TAP=p53x
cleanup() {
	cleanup_common
	ip netns exec "$POP_NS" sysctl -qw net.ipv6.conf.p53p.disable_ipv6=0 2>/dev/null || true
	"$SRC/scripts/lab.sh" up >/dev/null 2>&1 || true
}
trap cleanup EXIT
lab_lock

"$SRC/scripts/lab.sh" up >/dev/null
ip -n "$POP_NS" link set p53p xdp off 2>/dev/null || true
ip -n "$POP_NS" addr flush dev p53p
ip netns exec "$POP_NS" sysctl -qw net.ipv6.conf.p53p.disable_ipv6=1

cfg() { # cfg NAME: a dpdk-mode config whose control socket is in $TMP/NAME
	mkdir -p "$TMP/$1"
	cat >"$TMP/$1/pop53.yaml" <<YAML
server:
  identity: test-pop-$1
  control_socket: $TMP/$1/run/control.sock # run/ made by pop53d: the record is written before the control socket
dataplane:
  mode: dpdk
  eal: ["-l", "1", "--no-pci", "--in-memory", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
  workers: 1
  addresses: [$V4, "$V6"]
  exception:
    iface: $TAP
    addresses: [192.0.2.53/24]
zones:
  - {name: example.com, file: $SRC/zones/example.com.zone}
YAML
}
cfg a
cfg b
# The XDP program on p53p: "NAME ID", or "" when none.
prog() { ip -n "$POP_NS" link show p53p | grep -o 'prog/xdp id [0-9]* name [a-z_0-9]*' | awk '{print $5, $3}'; }
record() { cat "$TMP/$1/run/xdp-p53p.owner" 2>/dev/null; }
kill9() { kill -9 "$POP53_PID"; wait "$POP53_PID" 2>/dev/null; POP53_PID=; }
# start_refused NAME: pop53d must exit non-zero on its own (bounded 20 s)
start_refused() {
	start_pop53 "$TMP/$1/pop53.yaml"
	for _ in $(seq 1 40); do kill -0 "$POP53_PID" 2>/dev/null || break; sleep 0.5; done
	if kill -0 "$POP53_PID" 2>/dev/null; then kill9; return 1; fi
	wait "$POP53_PID"; local rc=$?; POP53_PID=
	[ $rc -ne 0 ]
}

# --- A, killed ---------------------------------------------------------------------------
start_pop53_answering "$TMP/a/pop53.yaml"
read -r name id1 <<<"$(prog)"
check "run A: libxdp's default program on p53p ($name id $id1)" [ "$name" = xsk_def_prog ]
check "run A recorded it with its pid ($(record a))" [ "$(record a)" = "prog $id1 pid $POP53_PID" ]
kill9
check "SIGKILL: xsk_def_prog id $id1 stays on p53p (what used to block the restart)" [ "$(prog)" = "xsk_def_prog $id1" ]
check "SIGKILL: the tap went with the process" bash -c "! ip -n $POP_NS link show $TAP >/dev/null 2>&1"

# --- A again: detaches its own program -----------------------------------------------------
start_pop53_answering "$TMP/a/pop53.yaml"
check "run A again: the log says it detached the program its earlier run left" \
	grep -q "detached libxdp's program 'xsk_def_prog' id $id1 from p53p, left by pop53d's earlier dpdk-mode run" "$TMP/pop53d.log"
read -r name id2 <<<"$(prog)"
check "a new xsk_def_prog is attached ($id1 -> $id2) and recorded ($(record a))" \
	[ "$name" = xsk_def_prog -a "$id2" != "$id1" -a "$(record a)" = "prog $id2 pid $POP53_PID" ]
check "UDP DNS answered" bash -c "ip netns exec $CLIENT_NS kdig +time=2 +retry=1 @$V4 www.example.com A | grep -q 'status: NOERROR'"
check "ping through the tap" ip netns exec "$CLIENT_NS" ping -c 1 -W 2 "$V4"
stop_pop53; rc=$?
check "SIGTERM: exit 0" [ $rc -eq 0 ]
check "SIGTERM: no program left on p53p, the record removed" bash -c '[ -z "$1" ] && [ ! -e "$2" ]' _ "$(prog)" "$TMP/a/run/xdp-p53p.owner"

# --- B's program is foreign to A -----------------------------------------------------------
start_pop53_answering "$TMP/b/pop53.yaml"
read -r name idb <<<"$(prog)"
kill9
check "run B killed: its xsk_def_prog id $idb stays, recorded in B's directory" \
	[ "$(prog)" = "xsk_def_prog $idb" -a "$(record b)" = "prog $idb pid $(awk '{print $4}' <<<"$(record b)")" ]
check "A without a record: refuses to start" start_refused a
check "...naming the foreign program" grep -q "xdp: p53p has a foreign XDP program 'xsk_def_prog' (id $idb" "$TMP/pop53d.log"
check "...which stays on p53p" [ "$(prog)" = "xsk_def_prog $idb" ]
echo "prog $((idb + 1000)) pid 1" >"$TMP/a/run/xdp-p53p.owner"
check "A with a record of another program id: refuses to start" start_refused a
check "...and the program stays" [ "$(prog)" = "xsk_def_prog $idb" ]
rm -f "$TMP/a/run/xdp-p53p.owner"
start_pop53_answering "$TMP/b/pop53.yaml"
check "B detaches its own program and starts" grep -q "detached libxdp's program 'xsk_def_prog' id $idb" "$TMP/pop53d.log"
kill9
read -r name idb <<<"$(prog)"
# --- B killed in dpdk mode, restarted in xdp mode: the left program goes too ---------------
sed -i 's/^  mode: dpdk$/  mode: xdp/' "$TMP/b/pop53.yaml"
start_pop53 "$TMP/b/pop53.yaml"
for _ in $(seq 1 40); do grep -q "ready: " "$TMP/pop53d.log" && break; kill -0 "$POP53_PID" 2>/dev/null || break; sleep 0.5; done
check "B restarted in xdp mode detaches the xsk_def_prog id $idb its dpdk-mode run left" \
	grep -q "detached libxdp's program 'xsk_def_prog' id $idb" "$TMP/pop53d.log"
check "...and runs with its steering program ($(prog))" bash -c '[[ "$1" == p53_steer* ]]' _ "$(prog)"
stop_pop53; rc=$?
check "B: SIGTERM, exit 0, nothing left" bash -c '[ "$1" = 0 ] && [ -z "$2" ]' _ "$rc" "$(prog)"
finish
