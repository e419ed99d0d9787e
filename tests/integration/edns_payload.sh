#!/usr/bin/env bash
# server.edns_max_payload larger than the port carries: clamped at start-up with a log line
# (configured value, effective value, why), and large answers come back whole up to the
# port's limit, with TC beyond it, never silently lost. The lab veth has MTU 1500, so the
# limit is 1452 (IPv6 + UDP headers, the binding case).
. "$(dirname "$0")/lib.sh"
trap cleanup_common EXIT
lab_lock
LARGE=$SRC/tests/integration/zones/large.test.zone

"$SRC/scripts/lab.sh" up >/dev/null
write_config "$TMP/pop53.yaml" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
sed -i 's/^server:$/server:\n  edns_max_payload: 4096/' "$TMP/pop53.yaml"
echo "  - {name: large.test, file: $LARGE}" >>"$TMP/pop53.yaml"
start_pop53_answering "$TMP/pop53.yaml"

check "start-up says the configured 4096 is clamped to 1452 and why" \
	grep -q 'server.edns_max_payload 4096 is more than the port carries (MTU 1500 less 48 bytes of IPv6 and UDP headers): using 1452' "$TMP/pop53d.log"

dig_large() { # ADDR NAME BUFSIZE: one UDP try, no TCP fallback on TC
	ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 +ignore +bufsize="$3" @"$1" "$2" TXT 2>&1
}
for addr in "$V4" "$V6"; do
	out=$(dig_large "$addr" fits.large.test 4096)
	check "[$addr] a 1360-octet answer asked with +bufsize=4096 comes back" grep -q 'status: NOERROR' <<<"$out"
	check "[$addr] ...whole, without TC" grep -qE 'Flags: qr aa( rd)?;' <<<"$out"
	want=$(zone_rrset "$LARGE" fits.large.test. TXT)
	got=$(kdig_section answer +ignore +bufsize=4096 @"$addr" fits.large.test TXT)
	check "[$addr] ...with all 5 TXT records, as in the zone" [ -n "$want" -a "$want" = "$got" ]
	check "[$addr] ...advertising the port's limit, 1452" grep -q 'UDP size: 1452 B' <<<"$out"
	size=$(sed -n 's/^;; Received \([0-9]*\) B$/\1/p' <<<"$out")
	check "[$addr] ...in no more than 1452 octets (got ${size:-none})" [ -n "$size" ] && [ "$size" -le 1452 ]
	out=$(dig_large "$addr" toobig.large.test 4096)
	check "[$addr] an answer over the port's limit is answered with TC=1, not lost" \
		grep -qE 'Flags: qr aa tc( rd)?;' <<<"$out"
	out=$(dig_large "$addr" fits.large.test 1232)
	check "[$addr] the client's smaller buffer still counts: TC=1 at +bufsize=1232" \
		grep -qE 'Flags: qr aa tc( rd)?;' <<<"$out"
done
check "pop53d stops cleanly" stop_pop53
check "no mbuf leaked" grep -q 'no leak' "$TMP/pop53d.log"
[ "$FAIL" -eq 0 ] && [ -z "${VERBOSE:-}" ] || cat "$TMP/pop53d.log"
finish
