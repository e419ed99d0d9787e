#!/usr/bin/env bash
# Integration test of the XDP steering split (dataplane/bpf/steer.bpf.c, control/net/xdp.c):
# dpdk-testpmd binds the lab's pop veth through net_af_xdp with xdp_prog=steer.bpf.o, the
# service addresses go into p53_addrs via p53_xdp_set_addrs(), and then
#   - UDP/53 to 192.0.2.53 and 2001:db8:53::53 reaches testpmd, and the kernel never answers;
#   - UDP/54 to those addresses, UDP/53 to a second (non-service) address and ping stay with
#     the kernel;
#   - an emptied map steers nothing; p53_xdp_detach_stale() removes a left-over program.
# Before the lab part, xdp_verdicts runs the program on hand-made frames (802.1Q, QinQ,
# fragments, IPv6 extension headers, truncations) through BPF_PROG_TEST_RUN.
#
# Usage: xdp_steer.sh BUILD_DIR SOURCE_DIR   (root; the lab must not be in use by others:
# testpmd takes every UDP/53 packet to the service addresses while it runs)
# Env: XDP_STEER_DEVARGS  extra net_af_xdp devargs, e.g. ",busy_budget=0,force_copy=1"
set -uo pipefail

BUILD=${1:?usage: $0 BUILD_DIR SOURCE_DIR}
SRC=${2:?usage: $0 BUILD_DIR SOURCE_DIR}
BUILD=$(cd "$BUILD" && pwd)
SRC=$(cd "$SRC" && pwd)
OBJ=$BUILD/dataplane/bpf/steer.bpf.o
POP_NS=p53-pop
CLIENT_NS=p53-client
IFACE=p53p
V4=192.0.2.53
V6=2001:db8:53::53
OTHER_V4=192.0.2.54              # on the interface, not a service address
OTHER_V6=2001:db8:53::54
DEVARGS="net_af_xdp0,iface=$IFACE,start_queue=0,queue_count=1,xdp_prog=$OBJ${XDP_STEER_DEVARGS:-}"

passed=0
failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

TMP=$(mktemp -d /tmp/p53-xdp-steer.XXXXXX)
TP_PID=
RESP_PID=
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	if [ -n "$TP_PID" ] && kill -0 "$TP_PID" 2>/dev/null; then
		echo quit >&3 2>/dev/null
		for _ in $(seq 1 20); do kill -0 "$TP_PID" 2>/dev/null || break; sleep 0.25; done
		kill "$TP_PID" 2>/dev/null
		wait "$TP_PID" 2>/dev/null
	fi
	exec 3>&- 2>/dev/null
	if [ -n "$RESP_PID" ]; then kill "$RESP_PID" 2>/dev/null; wait "$RESP_PID" 2>/dev/null; fi
	ip -n "$POP_NS" link set "$IFACE" xdp off 2>/dev/null
	ip -n "$POP_NS" addr del "$OTHER_V4/32" dev "$IFACE" 2>/dev/null
	ip -n "$POP_NS" addr del "$OTHER_V6/128" dev "$IFACE" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
# A testpmd that died must fail the checks with a message, not kill the script on SIGPIPE.
trap '' PIPE

for tool in dpdk-testpmd kdig cc pkg-config python3 ip timeout flock stdbuf; do
	command -v "$tool" >/dev/null || { echo "FAIL $tool not installed"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "FAIL needs root (XDP, AF_XDP, namespaces)"; exit 1; }
[ -f "$OBJ" ] || { echo "FAIL $OBJ missing: ninja -C $BUILD dataplane/bpf/steer.bpf.o"; exit 1; }

# The helpers are built here, not by meson, so the test only needs steer.bpf.o and control/net/xdp.c.
CFLAGS=(-O1 -g -Wall -Wextra -std=c11 -D_GNU_SOURCE -Wno-missing-field-initializers "-I$SRC")
# shellcheck disable=SC2046
cc "${CFLAGS[@]}" -o "$TMP/xdp_fill" "$SRC/tests/integration/xdp_fill.c" "$SRC/control/net/xdp.c" \
	$(pkg-config --cflags --libs libbpf) || { echo "FAIL cannot build xdp_fill"; exit 1; }
# shellcheck disable=SC2046
cc "${CFLAGS[@]}" -o "$TMP/xdp_verdicts" "$SRC/tests/integration/xdp_verdicts.c" \
	$(pkg-config --cflags --libs libbpf) || { echo "FAIL cannot build xdp_verdicts"; exit 1; }

# --- the program alone, no lab -------------------------------------------------------------
check "steer.bpf.o verdicts on hand-made frames (BPF_PROG_TEST_RUN)" \
	"$TMP/xdp_verdicts" "$OBJ"

check "p53_xdp_iface_from_devargs" \
	[ "$("$TMP/xdp_fill" iface "net_af_xdp0,iface=p53p,start_queue=0")" = p53p ]
check "p53_xdp_iface_from_devargs rejects non-af_xdp" \
	[ "$("$TMP/xdp_fill" iface "net_pcap0,iface=p53p")" = "(null)" ]

# --- the lab -------------------------------------------------------------------------------
# Lab users that take this lock run one at a time (scripts/lab.sh down kills everything in
# the namespaces, and testpmd takes every UDP/53 packet to the service addresses).
mkdir -p /run/lock && exec 9>/run/lock/pop53-lab.lock
flock -w 300 9 || { echo "FAIL lab lock /run/lock/pop53-lab.lock held for 300 s"; exit 1; }
"$SRC/scripts/lab.sh" up >/dev/null || { echo "FAIL scripts/lab.sh up"; finish; }
others=$( { ip netns pids "$POP_NS"; ip netns pids "$CLIENT_NS"; } 2>/dev/null | tr '\n' ' ')
[ -z "$others" ] || echo "warning: the lab is in use by pids $others; counts may be off"
ip -n "$POP_NS" addr replace "$OTHER_V4/32" dev "$IFACE"
ip -n "$POP_NS" addr replace "$OTHER_V6/128" dev "$IFACE" nodad

pop() { ip netns exec "$POP_NS" "$@"; }
client() { ip netns exec "$CLIENT_NS" "$@"; }

# A stale program (as a crashed run leaves) must be detached and logged. Whatever an earlier
# run left goes first, so the attach below cannot collide with it.
pop "$TMP/xdp_fill" "$IFACE" detach
if ip -n "$POP_NS" link set "$IFACE" xdp obj "$OBJ" sec xdp 2>"$TMP/iplink.err"; then
	pop "$TMP/xdp_fill" "$IFACE" detach 2>"$TMP/detach.err"
	check "p53_xdp_detach_stale logs the stale program" \
		grep -q "xdp: detached stale XDP program id [0-9]* from $IFACE" "$TMP/detach.err"
	check "p53_xdp_detach_stale leaves no program" \
		bash -c "! ip -n $POP_NS link show $IFACE | grep -q prog/xdp"
else
	bad "cannot attach a stale program with ip link: $(cat "$TMP/iplink.err")"
	pop "$TMP/xdp_fill" "$IFACE" detach
fi
check "p53_xdp_detach_stale with nothing attached" pop "$TMP/xdp_fill" "$IFACE" detach

# Regression: the stale-program clean-up removed whatever was attached, knotd's XDP program
# or anybody else's included. A foreign program stays, and pop53d refuses to start over it.
cat >"$TMP/foreign.bpf.c" <<'BPF'
#include <linux/bpf.h>
__attribute__((section("xdp"), used)) int foreign_pass(struct xdp_md *ctx) { return XDP_PASS; }
__attribute__((section("license"), used)) char _license[] = "GPL";
BPF
if clang -O2 -target bpf -I"/usr/include/$(uname -m)-linux-gnu" -c "$TMP/foreign.bpf.c" -o "$TMP/foreign.bpf.o" 2>"$TMP/clang.err" &&
   ip -n "$POP_NS" link set "$IFACE" xdp obj "$TMP/foreign.bpf.o" sec xdp 2>"$TMP/iplink.err"; then
	pop "$TMP/xdp_fill" "$IFACE" detach 2>"$TMP/foreign.err"
	check "p53_xdp_detach_stale refuses a foreign program (exit $?)" [ $? -ne 0 ]
	check "...and names it: $(head -c 160 "$TMP/foreign.err")" \
		grep -q "foreign XDP program 'foreign_pass'" "$TMP/foreign.err"
	check "...and leaves it attached" bash -c "ip -n $POP_NS link show $IFACE | grep -q prog/xdp"
	cat >"$TMP/pop53.yaml" <<YAML
server: {identity: xdp-steer-test, control_socket: $TMP/ctl.sock}
metrics: {enabled: false}
dataplane:
  eal: ["-l", "1", "--no-pci", "--in-memory", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=$IFACE,start_queue=0,queue_count=1"
  addresses: [$V4]
zones: [{name: example.com, file: $SRC/zones/example.com.zone}]
YAML
	timeout 60 ip netns exec "$POP_NS" "$BUILD/control/pop53d" -c "$TMP/pop53.yaml" >"$TMP/pop53d.log" 2>&1
	rc=$?
	check "pop53d refuses to start over a foreign XDP program (exit $rc)" [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
	check "...saying why" grep -q "already has another program's XDP program attached" "$TMP/pop53d.log"
	check "...and the foreign program is still there" bash -c "ip -n $POP_NS link show $IFACE | grep -q prog/xdp"
	ip -n "$POP_NS" link set "$IFACE" xdp off
else
	bad "cannot build or attach a foreign XDP program: $(cat "$TMP/clang.err" "$TMP/iplink.err")"
fi

# The kernel side: a stub that answers REFUSED, also on the service addresses' port 53, so a
# query that is not steered gets an answer instead of a silent port-unreachable.
# ip netns exec execs the command, so $! is the process itself (a shell function would not be).
ip netns exec "$POP_NS" python3 "$SRC/tests/integration/xdp_responder.py" --seconds 120 \
	"$V4" 53 "$V6" 53 "$V4" 54 "$V6" 54 "$OTHER_V4" 53 "$OTHER_V6" 53 >"$TMP/resp.log" 2>&1 &
RESP_PID=$!

mkfifo "$TMP/tp.in"
# --in-memory: no hugepage files left behind by a killed run; a small pool is plenty.
# stdbuf: testpmd's stdout is a file, and the statistics must show up as they are asked for.
ip netns exec "$POP_NS" timeout 120 stdbuf -oL dpdk-testpmd -l 0-1 --no-pci --in-memory --vdev "$DEVARGS" -- \
	-i --forward-mode=rxonly --total-num-mbufs=4096 <"$TMP/tp.in" >"$TMP/tp.log" 2>&1 &
TP_PID=$!
exec 3>"$TMP/tp.in"
echo start >&3

attached=0
for _ in $(seq 1 60); do
	if ip -n "$POP_NS" link show "$IFACE" | grep -q 'prog/xdp'; then attached=1; break; fi
	kill -0 "$TP_PID" 2>/dev/null || break
	sleep 0.25
done
for _ in $(seq 1 40); do grep -q ready "$TMP/resp.log" && break; sleep 0.25; done
for _ in $(seq 1 40); do grep -q 'testpmd> start' "$TMP/tp.log" && break; sleep 0.25; done
sleep 0.5
if grep -q -E 'Start ports failed|Not all ports were started|Failed to create xsk' "$TMP/tp.log"; then
	attached=0
fi
if [ "$attached" -ne 1 ]; then
	bad "testpmd attached steer.bpf.o to $IFACE and started the port (devargs $DEVARGS)"
	sed 's/^/    testpmd: /' "$TMP/tp.log" | tail -20
	finish
fi
ok "testpmd attached steer.bpf.o to $IFACE and started the port"
grep -q ready "$TMP/resp.log" || { bad "kernel stub did not start: $(cat "$TMP/resp.log")"; finish; }

alive() {
	kill -0 "$TP_PID" 2>/dev/null && return 0
	bad "testpmd is gone (killed by another lab user's scripts/lab.sh down?)"
	sed 's/^/    testpmd: /' "$TMP/tp.log" | tail -20
	finish
}

# RX-packets of port 0 from "show port stats 0" into RX; waits for the new stats block.
# Not used inside $(...): a dead testpmd must end the test from the main shell.
nstats=0
RX=0
rx_count() {
	local n
	alive
	nstats=$((nstats + 1))
	echo "show port stats 0" >&3
	for _ in $(seq 1 40); do
		n=$(grep -c 'NIC statistics for port 0' "$TMP/tp.log")
		[ "$n" -ge "$nstats" ] && break
		sleep 0.1
	done
	[ "$n" -ge "$nstats" ] || { bad "testpmd printed no port statistics"; finish; }
	RX=$(awk '/RX-packets:/ && /RX-missed:/ { v = $2 } END { print v + 0 }' "$TMP/tp.log")
}

# kdig outcome: "answer" (someone replied), "none" (timeout: the query was taken away).
query() {
	local out
	out=$(client kdig "@$1" -p "$2" +timeout=1 +retry=0 example.com 2>&1)
	# A match in the shell, not echo | grep -q: with pipefail a grep that exits at its first
	# match can fail the pipeline through echo's broken pipe (seen in CI).
	if [[ $out == *status:* ]]; then echo answer; else echo none; fi
}

check "p53_xdp_set_addrs fills p53_addrs" pop "$TMP/xdp_fill" "$IFACE" set "$V4" "$V6"
alive

# Steered: counted by testpmd, unanswered by the kernel.
rx_count; before=$RX
r4=$(query "$V4" 53)
r6=$(query "$V6" 53)
rx_count; after=$RX
check "UDP/53 to $V4 not answered by the kernel" [ "$r4" = none ]
check "UDP/53 to $V6 not answered by the kernel" [ "$r6" = none ]
check "UDP/53 to service addresses reached testpmd (rx $before -> $after, want +2)" \
	[ $((after - before)) -eq 2 ]

# Not steered: the kernel answers, testpmd counts nothing.
rx_count; before=$RX
check "UDP/54 to $V4 reaches the kernel" [ "$(query "$V4" 54)" = answer ]
check "UDP/54 to $V6 reaches the kernel" [ "$(query "$V6" 54)" = answer ]
check "UDP/53 to non-service $OTHER_V4 reaches the kernel" [ "$(query "$OTHER_V4" 53)" = answer ]
check "UDP/53 to non-service $OTHER_V6 reaches the kernel" [ "$(query "$OTHER_V6" 53)" = answer ]
check "ping $V4 answered by the kernel" client ping -c2 -W1 -q "$V4" >/dev/null
check "ping $V6 answered by the kernel" client ping -6 -c2 -W1 -q "$V6" >/dev/null
rx_count; after=$RX
check "nothing else reached testpmd (rx $before -> $after)" [ "$after" -eq "$before" ]

# An empty map steers nothing (the safe state before pop53d fills it).
check "p53_xdp_set_addrs with no addresses" pop "$TMP/xdp_fill" "$IFACE" set
rx_count; before=$RX
r4=$(query "$V4" 53)
rx_count; after=$RX
check "emptied map: UDP/53 to $V4 answered by the kernel" [ "$r4" = answer ]
check "emptied map: nothing steered (rx $before -> $after)" [ "$after" -eq "$before" ]

# Replacing the set: only the new address is steered.
check "p53_xdp_set_addrs replaces the set" pop "$TMP/xdp_fill" "$IFACE" set "$V6"
rx_count; before=$RX
r4=$(query "$V4" 53)
rx_count; mid=$RX
r6=$(query "$V6" 53)
rx_count; after=$RX
check "replaced set: $V4 answered by the kernel" [ "$r4" = answer ]
check "replaced set: $V6 not answered by the kernel" [ "$r6" = none ]
check "replaced set: $V4 no longer steered, $V6 steered (rx $before -> $mid -> $after)" \
	[ "$mid" -eq "$before" -a $((after - mid)) -eq 1 ]

check "p53_xdp_set_addrs rejects a missing interface" \
	bash -c "! ip netns exec $POP_NS $TMP/xdp_fill nosuch0 set $V4 2>/dev/null"

echo quit >&3
for _ in $(seq 1 40); do kill -0 "$TP_PID" 2>/dev/null || break; sleep 0.25; done
if kill -0 "$TP_PID" 2>/dev/null; then
	bad "testpmd did not quit"
else
	wait "$TP_PID"
	check "testpmd exited cleanly" [ $? -eq 0 ]
fi
TP_PID=
check "no XDP program left on $IFACE after testpmd quit" \
	bash -c "! ip -n $POP_NS link show $IFACE | grep -q prog/xdp"
finish
