#!/usr/bin/env bash
# The demo: install, build, bring up the lab, start pop53d on the lab veth in af_xdp mode with
# configs/lab.yaml and the zones in zones/, show real answers over IPv4 and IPv6, run a short
# kxdpgun load, print the answered rate, and stop everything cleanly.
#   --keep   leave pop53d (and the lab) running; stop it later with:
#            kill $(cat /run/pop53/demo.pid); scripts/lab.sh down
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
KEEP=0
[ "${1:-}" = "--keep" ] && KEEP=1
BUILD=${BUILD:-build}
LOG=/run/pop53/demo.log
mkdir -p /run/pop53

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Installing dependencies (Debian packages, hugepages, bpffs)"
./scripts/deps.sh

say "Building"
if [ -f "$BUILD/build.ninja" ]; then meson setup --reconfigure "$BUILD" >/dev/null; else meson setup "$BUILD" >/dev/null; fi
ninja -C "$BUILD" control/pop53d control/pop53ctl dataplane/bpf/steer.bpf.o >/dev/null
echo "built $BUILD/control/pop53d"

say "Lab: namespaces p53-client and p53-pop joined by a veth pair"
# One lab user at a time (tests and benchmarks take the same lock).
mkdir -p /run/lock && exec 9>/run/lock/pop53-lab.lock
if ! flock -n 9; then
	echo "waiting for the lab (a test or benchmark is using it)..."
	flock -w 900 9
fi
./scripts/lab.sh up

PID=
stop() {
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill -TERM "$PID"
		for _ in $(seq 1 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
		wait "$PID" 2>/dev/null || true
		echo "pop53d stopped; its last words:"
		tail -n 8 "$LOG"
	fi
	./scripts/lab.sh down >/dev/null 2>&1 || true
}
[ "$KEEP" = 1 ] || trap stop EXIT

say "Starting pop53d on p53p (net_af_xdp) with configs/lab.yaml"
if [ -S /run/pop53/control.sock ] && pop53ctl_out=$("$BUILD/control/pop53ctl" status 2>/dev/null); then
	echo "another pop53d is running (control socket /run/pop53/control.sock): stop it first" >&2
	exit 1
fi
ip netns exec p53-pop "$BUILD/control/pop53d" -c configs/lab.yaml >"$LOG" 2>&1 &
PID=$!
echo "$PID" >/run/pop53/demo.pid
for _ in $(seq 1 40); do
	ip netns exec p53-client kdig +time=1 +retry=0 @192.0.2.53 example.com SOA 2>/dev/null | grep -q NOERROR && break
	kill -0 "$PID" 2>/dev/null || { cat "$LOG"; echo "pop53d exited"; exit 1; }
	sleep 0.5
done
grep -E 'compiled|port|ready' "$LOG" || true

q() { echo; echo "\$ kdig $*"; ip netns exec p53-client kdig +time=2 +noall +answer +authority +comments "$@" | grep -vE '^;; (Received|Time|From)' ; }
say "Real answers from the DPDK worker"
q @192.0.2.53 www.example.com A
q @2001:db8:53::53 www.example.com AAAA
q @192.0.2.53 cdn.example.com A
q @2001:db8:53::53 logo.img.example.com A
q @192.0.2.53 nope.example.com A
q @192.0.2.53 +nsid -c CH id.server TXT

say "The kernel still answers ping on the service address"
ip netns exec p53-client ping -c 2 -q 192.0.2.53 | tail -2

say "kxdpgun: 3 seconds at 100k qps from the client namespace"
QF=$(mktemp)
printf 'www.example.com A\napi.example.com AAAA\ncdn.example.com A\nnope.example.com A\n' >"$QF"
ip netns exec p53-client taskset -c 0 kxdpgun -t 3 -Q 100000 -i "$QF" -I p53c 192.0.2.53 2>&1 |
	grep -E 'total queries|total replies|average|responded' || true
rm -f "$QF"

say "The control socket: pop53ctl status / stats"
"$BUILD/control/pop53ctl" status
"$BUILD/control/pop53ctl" stats | head -4

if [ "$KEEP" = 1 ]; then
	say "pop53d keeps running (pid $PID, log $LOG); stop with: kill $PID; scripts/lab.sh down"
fi
