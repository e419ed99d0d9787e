#!/usr/bin/env bash
# pop53d on net_pcap, no namespaces: query frames in (rx_pcap), response frames out (tx_pcap),
# decoded and checked against the zone; bad frames in the same capture must be dropped.
. "$(dirname "$0")/lib.sh"
trap cleanup_common EXIT
ZONE=$SRC/zones/example.com.zone

/usr/bin/python3 "$SRC/tests/integration/pcap_tool.py" make "$TMP/q.pcap" "$ZONE"
write_config "$TMP/pop53.yaml" "net_pcap0,rx_pcap=$TMP/q.pcap,tx_pcap=$TMP/r.pcap"
start_pop53 "$TMP/pop53.yaml" ""
# The capture is read in one go; give it time to be answered, then stop (bounded).
for _ in $(seq 1 50); do
	grep -q 'ready' "$TMP/pop53d.log" 2>/dev/null && break
	sleep 0.1
done
sleep 1
check "pop53d stops cleanly on SIGTERM" stop_pop53
check "responses decoded and match the zone" /usr/bin/python3 "$SRC/tests/integration/pcap_tool.py" check "$TMP/r.pcap" "$TMP/q.pcap.json" "$ZONE"
check "bad frames counted as drops" grep -qE 'dropped [1-9]' "$TMP/pop53d.log"
# Frames not addressed to the port (broadcast, multicast, another MAC; an address that is not
# in dataplane.addresses) and one with a bad UDP checksum are counted by reason.
check "the port's MAC is the one the frames are sent to" grep -q 'MAC 02:70:63:61:70:00' "$TMP/pop53d.log"
check "3 frames to other MACs dropped as dst_mac" grep -q 'dropped dst_mac 3$' "$TMP/pop53d.log"
check "2 frames to non-service addresses dropped as dst_addr" grep -q 'dropped dst_addr 2$' "$TMP/pop53d.log"
check "1 frame with a bad UDP checksum dropped as udp_csum" grep -q 'dropped udp_csum 1$' "$TMP/pop53d.log"
check "no mbuf leaked" grep -q 'no leak' "$TMP/pop53d.log"
[ "$FAIL" -eq 0 ] && [ -z "${VERBOSE:-}" ] || cat "$TMP/pop53d.log"
finish
