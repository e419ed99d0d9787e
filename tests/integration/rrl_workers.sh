#!/usr/bin/env bash
# What a configured RRL rate means with several workers, on net_pcap (no namespaces): each
# worker allows rate / N per account, so a flood that RSS spreads over the workers' queues
# gets `rate` in all, and one that lands on a single queue gets rate / N (docs/CONFIG.md, rrl).
#
# The pcap PMD replays each file at once, so a flood here is an instant burst: a fresh
# account answers exactly its credit (rate per second, BIND's cap), then slips every other
# response (slip 2). Cases, rate 50:
#   1 worker,  400 queries from one /24 on its queue             -> 50 answers
#   2 workers, 200 + 200 (one file per queue, as RSS spreads it) -> 25 + 25 = 50 answers
#   2 workers, 400 on queue 0 only (one 5-tuple)                 -> 25 answers
# each within +-20%, every other limited response a TC=1 slip, and no mbuf leaked.
. "$(dirname "$0")/lib.sh"
trap cleanup_common EXIT
lab_lock
PY=/usr/bin/python3

# frames FILE COUNT: COUNT queries for www.example.com A from hosts of 192.0.2.0/24
frames() {
	$PY - "$1" "$2" "$SRC/tests/integration" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
import dns.message
from pcap_tool import frame, write_pcap
out = []
for i in range(int(sys.argv[2])):
    q = dns.message.make_query("www.example.com.", "A", use_edns=0)
    q.id = i
    out.append(frame(q.to_wire(), sport=20000 + i, src=bytes([192, 0, 2, 1 + i % 250])))
write_pcap(sys.argv[1], out)
PY
}

# count FILE...: "answers tc" over the response frames
count() {
	$PY - "$SRC/tests/integration" "$@" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from pcap_tool import read_pcap
ans = tc = 0
for f in sys.argv[2:]:
    for fr in read_pcap(f):
        dns = fr[14 + 20 + 8:]
        if dns[2] & 0x02:
            tc += 1
        elif dns[7] > 0:
            ans += 1
print(ans, tc)
PY
}

# run NAME WORKERS RX_FILES...: start pop53d on net_pcap, wait, stop; prints "answers tc"
run() {
	local name=$1 workers=$2 dev="net_pcap0" tx=() i=0
	shift 2
	for f in "$@"; do
		dev="$dev,rx_pcap=$f,tx_pcap=$TMP/$name-out$i.pcap"
		tx+=("$TMP/$name-out$i.pcap")
		i=$((i + 1))
	done
	write_config "$TMP/$name.yaml" "$dev"
	sed -i "s/\"-l\", \"1\"/\"-l\", \"0-$((workers - 1))\"/; s/workers: 1/workers: $workers/" "$TMP/$name.yaml"
	cat >>"$TMP/$name.yaml" <<YAML
rrl:
  responses_per_second: 50
  slip: 2
YAML
	start_pop53 "$TMP/$name.yaml" ""
	for _ in $(seq 1 50); do
		grep -q 'ready' "$TMP/pop53d.log" 2>/dev/null && break
		sleep 0.1
	done
	sleep 1
	stop_pop53 || echo "pop53d exited non-zero" >&2
	cp "$TMP/pop53d.log" "$TMP/$name.log"
	count "${tx[@]}"
}
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

frames "$TMP/all.pcap" 400
frames "$TMP/half.pcap" 200
touch_empty() { $PY -c "import sys; sys.path.insert(0, '$SRC/tests/integration'); from pcap_tool import write_pcap; write_pcap('$1', [])"; }
touch_empty "$TMP/none.pcap"

read -r a t <<<"$(run one 1 "$TMP/all.pcap")"
check "1 worker, 400 queries from one /24: $a answers, rate 50 +-20%" between "$a" 40 60
check "1 worker: the limited ones slip every other time ($t TC=1 of $((400 - a)))" between "$t" $(( (400 - a) / 2 - 2 )) $(( (400 - a) / 2 + 2 ))
check "1 worker: no mbuf leaked" grep -q 'no leak' "$TMP/one.log"
read -r a t <<<"$(run spread 2 "$TMP/half.pcap" "$TMP/half.pcap")"
check "2 workers, the flood spread over both queues: $a answers in all, rate 50 +-20%" between "$a" 40 60
check "2 workers: no mbuf leaked" grep -q 'no leak' "$TMP/spread.log"
read -r a t <<<"$(run single 2 "$TMP/all.pcap" "$TMP/none.pcap")"
check "2 workers, the flood on one queue only: $a answers, rate / 2 = 25 +-20%" between "$a" 20 30
check "2 workers, one queue: no mbuf leaked" grep -q 'no leak' "$TMP/single.log"
[ "$FAIL" -eq 0 ] || cat "$TMP"/*.log
finish
