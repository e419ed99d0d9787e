#!/usr/bin/env bash
# Hostile input on the lab (af_xdp): every case of tests/integration/hostile.py (one per
# defect: tiny messages, compression pointer loops and strays, label types 0x40/0x80,
# RDLENGTH past the end, truncated options, EDNS version 1, opcode 15, transfers and TKEY
# over UDP, a NUL in a label, malformed COOKIE and ECS...) gets the RFC's response or a
# counted drop, and a normal query right after each is still answered. After the whole
# suite the mempool is back at its baseline (pop53d's exit log says "no leak") and the
# drops and FORMERRs were counted.
. "$(dirname "$0")/lib.sh"
trap cleanup_common EXIT
lab_lock
PY=/usr/bin/python3
HOSTILE="$SRC/tests/integration/hostile.py"

"$SRC/scripts/lab.sh" up >/dev/null
write_config "$TMP/pop53.yaml" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
start_pop53_answering "$TMP/pop53.yaml"

while IFS= read -r name; do
	out=$(ip netns exec "$CLIENT_NS" $PY "$HOSTILE" run "$V4" "$name" 2>&1)
	check "$out" [ $? -eq 0 ]
done < <($PY "$HOSTILE" list)

check "pop53d exits 0 on SIGTERM" stop_pop53
check "every mbuf back at the baseline after the whole suite" grep -q 'no leak' "$TMP/pop53d.log"
check "the dropped messages were counted" grep -qE 'dropped [1-9]' "$TMP/pop53d.log"
[ "$FAIL" -eq 0 ] || cat "$TMP/pop53d.log"
finish
