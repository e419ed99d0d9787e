#!/usr/bin/env bash
# systemd's notify protocol as configs/pop53d.service uses it (Type=notify, WatchdogSec=):
# pop53d, started with NOTIFY_SOCKET and WATCHDOG_USEC as systemd sets them, sends READY=1
# once it serves, WATCHDOG=1 from the control loop at least every half watchdog period, and
# STOPPING=1 at SIGTERM. The socket is a real AF_UNIX datagram socket read by Python.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
EAL_PREFIX=p53notify-test
cleanup() {
	[ -n "${LISTENER:-}" ] && kill "$LISTENER" 2>/dev/null
	rm -rf "/var/run/dpdk/$EAL_PREFIX"
	cleanup_common
}
trap cleanup EXIT
lab_lock

"$SRC/scripts/lab.sh" up >/dev/null
NSOCK=$TMP/notify.sock
# Every datagram as "<ms since start> <payload with newlines as |>".
$PY - "$NSOCK" >"$TMP/notify.log" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
t0 = time.monotonic()
while True:
    d = s.recv(4096).decode(errors="replace").strip().replace("\n", "|")
    print(f"{int((time.monotonic() - t0) * 1000)} {d}", flush=True)
PY
LISTENER=$!
for _ in $(seq 1 50); do [ -S "$NSOCK" ] && break; sleep 0.1; done
write_config "$TMP/pop53.yaml" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
sed -i "s/\"--in-memory\"/\"--in-memory\", \"--file-prefix=$EAL_PREFIX\"/" "$TMP/pop53.yaml"
NOTIFY_SOCKET=$NSOCK WATCHDOG_USEC=400000 start_pop53_answering "$TMP/pop53.yaml"
sleep 2
check "READY=1 sent" grep -q ' READY=1' "$TMP/notify.log"
n=$(grep -c ' WATCHDOG=1$' "$TMP/notify.log")
check "WATCHDOG=1 at least every 200 ms (half of WATCHDOG_USEC): $n in about 2 s" [ "$n" -ge 8 ]
gaps=$(awk '/ WATCHDOG=1$/ { if (p != "") { g = $1 - p; if (g > m) m = g } p = $1 } END { print m + 0 }' "$TMP/notify.log")
check "largest gap between two pings ${gaps} ms, under the 400 ms watchdog" [ "$gaps" -lt 400 ]
check "the log names the watchdog" grep -q 'systemd watchdog: 400 ms' "$TMP/pop53d.log"
stop_pop53; rc=$?
check "pop53d exits 0 on SIGTERM" [ $rc -eq 0 ]
check "STOPPING=1 sent" grep -q ' STOPPING=1' "$TMP/notify.log"
finish
