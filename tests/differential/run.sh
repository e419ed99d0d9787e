#!/usr/bin/env bash
# Differential test: pop53d against Knot DNS on the same zones. See README.md.
#
# Usage: tests/differential/run.sh [BUILD_DIR] [SOURCE_DIR]      (root; Debian: knot, dnspython)
#
#   oracle  knotd in namespace p53-client on 127.0.0.1@5300 and [::1]@5300
#   target  pop53d in namespace p53-pop on 192.0.2.53@53 and [2001:db8:53::53]@53 (net_af_xdp)
#   driver  compare.py in p53-client asks both the same questions and compares the replies
#
# Environment:
#   TARGET=pop53d   (default) the target is $BUILD/control/pop53d
#   TARGET=knot2    the target is a second knotd on the service addresses (proves the harness:
#                   it must report zero differences)
#   PLANT=1         serve the target a deliberately altered copy of the zones (proves the harness
#                   finds differences: the run must fail)
#   ONLY=label      run only cases whose label contains this
#   COMPARE_ARGS="--dump"  extra compare.py arguments (word-split): --dump prints both replies
#   POP53_EAL="-l 1 --no-pci --in-memory"   EAL arguments for pop53d (space separated)
#   KEEP=1          keep the work directory (configs, logs) after the run
#   LAB_DOWN=1      take the lab down afterwards if this run brought it up (default: leave it,
#                   other tests share it)
#
# Exit 0 only with zero unexplained differences; 77 (skip) when the pop53d binary is missing.
# The last line printed is "N passed, N failed".
set -uo pipefail

SRC_DEFAULT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC_DEFAULT/build}" 2>/dev/null && pwd || echo "${1:-$SRC_DEFAULT/build}")
SRC=$(cd "${2:-$SRC_DEFAULT}" && pwd)
HERE="$SRC/tests/differential"
TARGET=${TARGET:-pop53d}
PY=/usr/bin/python3
CLIENT_NS=p53-client
POP_NS=p53-pop
POP_IF=p53p
ORACLE_PORT=5300
TARGET_V4=192.0.2.53
TARGET_V6=2001:db8:53::53
ZONES="diff.test second.test nsec.test child.nsec.test nsec3.test bind.test knot.test"
SIGNED="nsec.test child.nsec.test nsec3.test bind.test knot.test"   # signed by sign.sh at each run

say() { echo "differential: $*" >&2; }
summary_fail() { echo "0 passed, 1 failed"; }

if [ "$(id -u)" != 0 ]; then say "needs root (network namespaces)"; summary_fail; exit 1; fi
for t in knotd kdig kzonesign ldns-signzone ldns-keygen ldns-key2ds dnssec-signzone dnssec-keygen delv "$PY"; do
	command -v "$t" >/dev/null || { say "missing $t"; summary_fail; exit 1; }
done
"$PY" -c 'import dns.message' 2>/dev/null || { say "$PY lacks dnspython (apt install python3-dnspython)"; summary_fail; exit 1; }

POP53D="$BUILD/control/pop53d"
case "$TARGET" in
	pop53d)
		if [ ! -x "$POP53D" ]; then
			say "SKIP: $POP53D not built (TARGET=knot2 runs the harness against a second knotd)"
			echo "0 passed, 0 failed"
			exit 77
		fi ;;
	knot2) ;;
	*) say "TARGET must be pop53d or knot2"; summary_fail; exit 2 ;;
esac

WORK=$(mktemp -d /tmp/p53-diff.XXXXXX)
ORACLE_PID=
TARGET_PID=
LAB_STARTED=0

STOP_RC=0
stop_pid() {   # stop one process we started, by pid: TERM, then KILL after 10 s; STOP_RC = its status
	local pid=$1 i
	STOP_RC=0
	[ -n "$pid" ] || return 0
	if kill -TERM "$pid" 2>/dev/null; then
		for i in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			say "pid $pid did not stop on TERM, killing"
			kill -KILL "$pid" 2>/dev/null
		fi
	fi
	wait "$pid" 2>/dev/null
	STOP_RC=$?
	return 0
}

cleanup() {
	stop_pid "$TARGET_PID"
	if [ -n "$TARGET_PID" ] && [ "$TARGET" = pop53d ] && [ "$STOP_RC" -ge 128 ] && [ "$STOP_RC" != 143 ]; then
		# pop53d detaches its XDP program when it exits; a crash or KILL leaves it attached.
		say "pop53d ended with status $STOP_RC: detaching XDP from $POP_IF"
		ip -n "$POP_NS" link set "$POP_IF" xdp off 2>/dev/null || true
	fi
	TARGET_PID=
	stop_pid "$ORACLE_PID"; ORACLE_PID=
	# The lab is shared with the other tests and the benchmarks: leave it up unless asked.
	if [ "$LAB_STARTED" = 1 ] && [ "${LAB_DOWN:-0}" = 1 ]; then
		"$SRC/scripts/lab.sh" down >/dev/null 2>&1 || true
	fi
	LAB_STARTED=0
	if [ "${KEEP:-0}" = 1 ]; then say "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap 'cleanup' EXIT
trap 'say "interrupted"; exit 130' INT TERM

show_log() { [ -f "$1" ] && { say "--- last lines of $1"; tail -n 30 "$1" >&2; }; }


# --- the lab --------------------------------------------------------------------------------
# One lab user at a time (see tests/integration/lib.sh): held on fd 9 until exit.
mkdir -p /run/lock && exec 9>/run/lock/pop53-lab.lock
flock -w 900 9 || { say "lab lock /run/lock/pop53-lab.lock held for too long"; summary_fail; exit 1; }
if ! "$SRC/scripts/lab.sh" status >/dev/null 2>&1; then
	"$SRC/scripts/lab.sh" up >&2 || { say "lab up failed"; summary_fail; exit 1; }
	LAB_STARTED=1
fi

# --- zones: the oracle serves the files as they are; the target serves copies (PLANT alters) --
# The DNSSEC zones are signed now, with fresh keys (sign.sh: ldns-signzone and kzonesign).
mkdir -p "$WORK/zones-oracle" "$WORK/zones-target"
if ! "$HERE/sign.sh" "$WORK/signed" "$HERE/zones" >"$WORK/sign.log" 2>&1; then
	say "signing the DNSSEC zones failed"; show_log "$WORK/sign.log"; summary_fail; exit 1
fi
for z in $ZONES; do
	src="$HERE/zones/$z.zone"
	case " $SIGNED " in *" $z "*) src="$WORK/signed/$z.zone" ;; esac
	cp "$src" "$WORK/zones-oracle/$z.zone"
	cp "$src" "$WORK/zones-target/$z.zone"
done
if [ "${PLANT:-0}" = 1 ]; then
	say "PLANT=1: the target serves altered zones (www A 192.0.2.80 -> .81, diff.test SOA MINIMUM 300 -> 600)"
	[ "$TARGET" = knot2 ] && say "PLANT=1: the second knotd also has identity/NSID planted-pop"
	sed -i -e 's/^\(www[[:space:]].*IN A[[:space:]]*\)192\.0\.2\.80/\1192.0.2.81/' \
	       -e 's/^\([[:space:]]*\)300 )\([[:space:]]*; minimum\)/\1600 )\2/' \
	       "$WORK/zones-target/diff.test.zone"
	if cmp -s "$WORK/zones-oracle/diff.test.zone" "$WORK/zones-target/diff.test.zone"; then
		say "PLANT=1 changed nothing (zone file edited?)"; summary_fail; exit 1
	fi
fi

knot_conf() {   # $1 rundir, $2 zone dir, $3 identity, $4.. listen addresses
	local run=$1 zdir=$2 ident=$3; shift 3
	local listen="" a
	for a in "$@"; do listen="$listen${listen:+, }$a"; done
	mkdir -p "$run"
	cat > "$run/knot.conf" <<EOF
server:
    rundir: "$run"
    identity: $ident
    version: pop53-test
    nsid: $ident
    listen: [ $listen ]
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
    udp-max-payload: 1232

control:
    listen: "$run/knot.sock"

log:
  - target: "$run/knotd.log"
    any: info

database:
    storage: "$run"

template:
  - id: default
    storage: "$run"
    file: "$zdir/%s.zone"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
    semantic-checks: on

zone:
EOF
	for z in $ZONES; do echo "  - domain: $z" >> "$run/knot.conf"; done
	echo "$run/knot.conf"
}

# wait_answer NS SERVER PORT: until SERVER answers SOA for every zone (bounded: ~TRIES x 0.2 s)
wait_answer() {
	local ns=$1 srv=$2 port=$3 tries=$4 pid=$5 i z ok
	for i in $(seq 1 "$tries"); do
		kill -0 "$pid" 2>/dev/null || return 1
		ok=1
		for z in $ZONES; do
			out=$(ip netns exec "$ns" kdig @"$srv" -p "$port" "$z" SOA +short +time=1 +retry=0 2>/dev/null)
			[ -n "$out" ] || { ok=0; break; }
		done
		[ "$ok" = 1 ] && return 0
		sleep 0.2
	done
	return 1
}

# --- the oracle: knotd on loopback in the client namespace -----------------------------------
OCONF=$(knot_conf "$WORK/oracle" "$WORK/zones-oracle" diff-pop "127.0.0.1@$ORACLE_PORT" "::1@$ORACLE_PORT")
ip netns exec "$CLIENT_NS" knotd -c "$OCONF" > "$WORK/oracle/stdout.log" 2>&1 &
ORACLE_PID=$!
if ! wait_answer "$CLIENT_NS" 127.0.0.1 "$ORACLE_PORT" 50 "$ORACLE_PID"; then
	say "oracle knotd did not come up"; show_log "$WORK/oracle/knotd.log"; show_log "$WORK/oracle/stdout.log"
	summary_fail; exit 1
fi
say "oracle: knotd (pid $ORACLE_PID) in $CLIENT_NS on 127.0.0.1@$ORACLE_PORT, [::1]@$ORACLE_PORT"

# --- the target ----------------------------------------------------------------------------
# Something already answering on the service address (another test, a benchmark) would be
# compared instead of our target, or make it fail to bind: refuse to run.
if ip netns exec "$CLIENT_NS" kdig @"$TARGET_V4" -p 53 diff.test SOA +time=1 +retry=0 2>/dev/null | grep -q 'status:'; then
	say "something already answers on $TARGET_V4@53 (another test or benchmark running?)"
	ip netns pids "$POP_NS" 2>/dev/null | while read -r p; do ps -o pid=,args= -p "$p"; done | head -5 >&2
	summary_fail; exit 1
fi
# An XDP program on p53p belongs to someone else's af_xdp run (pop53d, testpmd, knotd XDP): it
# would steal UDP/53 from knot2, and pop53d would detach it as stale. Refuse (a crashed run:
# `ip -n p53-pop link set p53p xdp off` or scripts/lab.sh down).
if ip -n "$POP_NS" link show "$POP_IF" 2>/dev/null | grep -q 'prog/xdp'; then
	say "an XDP program is attached to $POP_IF (another af_xdp test running?)"
	summary_fail; exit 1
fi
if [ "$TARGET" = knot2 ]; then
	# PLANT=1 also gives the second knotd another identity (CHAOS and NSID must then differ)
	TCONF=$(knot_conf "$WORK/target" "$WORK/zones-target" "$([ "${PLANT:-0}" = 1 ] && echo planted-pop || echo diff-pop)" "$TARGET_V4@53" "$TARGET_V6@53")
	ip netns exec "$POP_NS" ip link set lo up
	ip netns exec "$POP_NS" knotd -c "$TCONF" > "$WORK/target/stdout.log" 2>&1 &
	TARGET_PID=$!
	TLOG="$WORK/target/knotd.log"
	TRIES=50
else
	mkdir -p "$WORK/target"
	read -r -a EAL <<< "${POP53_EAL:--l 1 --no-pci --in-memory}"
	{
		echo "server: {identity: diff-pop, version: \"pop53-test\", edns_max_payload: 1232, control_socket: \"$WORK/target/control.sock\"}"
		echo "metrics: {enabled: false}"
		echo "dataplane:"
		printf '  eal: ['; sep=""; for a in "${EAL[@]}"; do printf '%s"%s"' "$sep" "$a"; sep=", "; done; echo ']'
		echo "  port: \"net_af_xdp0,iface=$POP_IF,start_queue=0,queue_count=1\""
		echo "  workers: 1"
		# the answer cache on (POP53_ANSWER_CACHE=0: off); compare.py asks the corpus three times
		echo "  answer_cache: ${POP53_ANSWER_CACHE:-1024}"
		echo "  addresses: [$TARGET_V4, \"$TARGET_V6\"]"
		echo "zones:"
		for z in $ZONES; do echo "  - {name: $z, file: \"$WORK/zones-target/$z.zone\"}"; done
	} > "$WORK/target/pop53.yaml"
	ip netns exec "$POP_NS" "$POP53D" -c "$WORK/target/pop53.yaml" > "$WORK/target/pop53d.log" 2>&1 &
	TARGET_PID=$!
	TLOG="$WORK/target/pop53d.log"
	TRIES=150
fi
if ! wait_answer "$CLIENT_NS" "$TARGET_V4" 53 "$TRIES" "$TARGET_PID"; then
	say "target $TARGET did not answer on $TARGET_V4@53"; show_log "$TLOG"; show_log "$WORK/target/stdout.log"
	summary_fail; exit 1
fi
say "target: $TARGET (pid $TARGET_PID) in $POP_NS on $TARGET_V4@53, [$TARGET_V6]@53"

# --- compare -------------------------------------------------------------------------------
ARGS=(--oracle 127.0.0.1 --oracle6 ::1 --oracle-port "$ORACLE_PORT"
      --target "$TARGET_V4" --target6 "$TARGET_V6" --target-port 53
      --anchors "$WORK/signed/anchors.conf")
[ -n "${ONLY:-}" ] && ARGS+=(--only "$ONLY")
# pop53 with its answer cache: the corpus three times (a question is stored when it misses
# twice), the third answered from the cache
[ "$TARGET" != knot2 ] && [ "${POP53_ANSWER_CACHE:-1024}" != 0 ] && ARGS+=(--rounds 3)
ip netns exec "$CLIENT_NS" "$PY" "$HERE/compare.py" "${ARGS[@]}" ${COMPARE_ARGS:-} > "$WORK/compare.out" 2>&1
RC=$?
# Still alive? A target that crashed mid-run is a failure whatever compare.py saw.
LAST=$(tail -n 1 "$WORK/compare.out")
if ! kill -0 "$TARGET_PID" 2>/dev/null; then
	say "target $TARGET exited during the run"; show_log "$TLOG"; RC=1
	if [[ "$LAST" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		LAST="${BASH_REMATCH[1]} passed, $((BASH_REMATCH[2] + 1)) failed"
	fi
fi
sed '$d' "$WORK/compare.out"
cleanup
trap - EXIT
if ! [[ "$LAST" =~ ^[0-9]+\ passed,\ [0-9]+\ failed$ ]]; then
	echo "$LAST"; LAST="0 passed, 1 failed"; RC=1
fi
echo "$LAST"
exit $RC
