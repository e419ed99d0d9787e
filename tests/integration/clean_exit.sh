#!/usr/bin/env bash
# Clean exit under load: pop53d on the lab takes a kxdpgun burst plus malformed datagrams,
# then SIGTERM. It must exit 0, with every mbuf back (in use == the driver's baseline), and
# the malformed input counted, never answered with garbage.
. "$(dirname "$0")/lib.sh"
trap cleanup_common EXIT
lab_lock

"$SRC/scripts/lab.sh" up >/dev/null
write_config "$TMP/pop53.yaml" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
start_pop53_answering "$TMP/pop53.yaml"

printf 'www.example.com A\napi.example.com AAAA\nnope.example.com A\ncdn.example.com A\n' >"$TMP/q.txt"
out=$(ip netns exec "$CLIENT_NS" timeout 20 kxdpgun -t 2 -Q 20000 -i "$TMP/q.txt" -I p53c "$V4" 2>&1)
check "kxdpgun burst ran" grep -q 'total replies' <<<"$out"

# Malformed datagrams from a plain socket: each must be dropped or answered per the RFC.
bad=$(ip netns exec "$CLIENT_NS" /usr/bin/python3 - "$V4" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.3)
hdr = bytes([0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0])
cases = {
    "short": b"\x12\x34\x01",                                  # dropped
    "qr": bytes([0x12, 0x34, 0x81, 0, 0, 1, 0, 0, 0, 0, 0, 0]) + b"\x00\x00\x01\x00\x01",  # dropped
    "trunc": hdr + b"\x03ww",                                   # FORMERR
    "ptr": hdr + b"\xc0\x0c\x00\x01\x00\x01",                   # FORMERR
    "counts": bytes([0x12, 0x34, 1, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 0]) + b"\x00\x00\x01\x00\x01",  # FORMERR
}
want = {"short": None, "qr": None, "trunc": 1, "ptr": 1, "counts": 1}
bad = 0
for name, msg in cases.items():
    s.sendto(msg, (sys.argv[1], 53))
    try:
        r, _ = s.recvfrom(4096)
        got = r[3] & 0xF
    except socket.timeout:
        got = None
    if got != want[name]:
        print(f"{name}: got {got} want {want[name]}")
        bad += 1
print(f"malformed-bad={bad}")
PY
)
check "malformed datagrams dropped or FORMERR as the RFC says" grep -q 'malformed-bad=0' <<<"$bad"
check "still answering after the malformed input" wait_answering

check "pop53d exits 0 on SIGTERM" stop_pop53
check "every mbuf back at the baseline" grep -q 'no leak' "$TMP/pop53d.log"
check "malformed frames counted" grep -qE 'dropped [1-9]' "$TMP/pop53d.log"
[ "$FAIL" -eq 0 ] || { echo "$out"; echo "$bad"; cat "$TMP/pop53d.log"; }
finish
