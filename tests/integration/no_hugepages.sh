#!/usr/bin/env bash
# Regression: on a host without hugepages pop53d runs with --no-huge, which DPDK 22.11 refuses
# together with --in-memory (the shipped configs use it). pop53d must start anyway (it swaps
# --in-memory for --no-shconf and says so), answer, and stop cleanly. Uses net_pcap: no lab.
. "$(dirname "$0")/lib.sh"
trap cleanup_common EXIT
ZONE=$SRC/zones/example.com.zone

/usr/bin/python3 "$SRC/tests/integration/pcap_tool.py" make "$TMP/q.pcap" "$ZONE"
cat >"$TMP/pop53.yaml" <<YAML
server: {identity: test-pop, control_socket: $TMP/control.sock}
metrics: {enabled: false}
dataplane:
  eal: ["-l", "1", "--no-pci", "--in-memory", "--no-huge", "-m", "256", "--log-level=*:notice"]
  port: "net_pcap0,rx_pcap=$TMP/q.pcap,tx_pcap=$TMP/r.pcap"
  addresses: [$V4, "$V6"]
zones: [{name: example.com, file: $ZONE}]
YAML
start_pop53 "$TMP/pop53.yaml" ""
for _ in $(seq 1 50); do
	grep -q 'ready' "$TMP/pop53d.log" 2>/dev/null && break
	kill -0 "$POP53_PID" 2>/dev/null || break
	sleep 0.1
done
check "pop53d starts with --no-huge and --in-memory in the config" grep -q 'ready' "$TMP/pop53d.log"
check "it says it used --no-shconf instead of --in-memory" grep -q 'using --no-shconf instead' "$TMP/pop53d.log"
sleep 1
check "pop53d stops cleanly on SIGTERM" stop_pop53
check "responses decoded and match the zone" /usr/bin/python3 "$SRC/tests/integration/pcap_tool.py" check "$TMP/r.pcap" "$TMP/q.pcap.json" "$ZONE"
check "no mbuf leaked" grep -q 'no leak' "$TMP/pop53d.log"
[ "$FAIL" -eq 0 ] || cat "$TMP/pop53d.log"
finish
