#!/usr/bin/env bash
# Amplification, measured (issue 10): from the client namespace, a bounded flood of queries
# with forged source addresses inside a victim /24 (203.0.113.0/24) for a large response
# (a ~1 KB TXT RRset, EDNS 4096) and for ANY; bytes sent to the victim divided by bytes
# received from it, counted at the client veth (amplify.py). Meanwhile a legitimate client in
# another /24 (192.0.2.1) asks at 20/s, a resolver's mix of eight names (2.5/s each, under the
# per-name rate), and must get every answer.
#   RRL off: the factor is what an open reflector gives (reported; must be > 1)
#   RRL on (responses_per_second 10, slip 2, as operators run it): factor <= 1.0
# Figures: docs/BENCHMARKS.md, "Amplification".
. "$(dirname "$0")/lib.sh"
trap cleanup_common EXIT
lab_lock
PY=/usr/bin/python3
QPS=${AMP_QPS:-1000}
SECS=${AMP_SECONDS:-5}
LEGIT_NAMES=www.example.com,api.example.com,mail.example.com,ns1.example.com,ns2.example.com,sip.example.com,example.com,x.img.example.com

"$SRC/scripts/lab.sh" up >/dev/null
# The zone with one large answer: eight 120-byte TXT strings at amp.example.com.
ZONE=$TMP/example.com.zone
cp "$SRC/zones/example.com.zone" "$ZONE"
for i in 1 2 3 4 5 6 7 8; do
	printf 'amp\t300 IN TXT\t"%s"\n' "$(head -c 120 /dev/zero | tr '\0' "$i")" >>"$ZONE"
done

# run LABEL: flood a large answer, then ANY, with the legitimate client alongside
run() {
	local label=$1 name qtype out legit
	for q in "amp.example.com TXT" "example.com ANY"; do
		set -- $q
		name=$1 qtype=$2
		ip netns exec "$CLIENT_NS" $PY "$SRC/tests/integration/dns_client.py" rate "$V4" 192.0.2.1 \
			"$LEGIT_NAMES" A 20 "$SECS" >"$TMP/legit.json" &
		local lp=$!
		out=$(ip netns exec "$CLIENT_NS" $PY "$SRC/tests/integration/amplify.py" p53c "$V4" 203.0.113 \
			"$name" "$qtype" "$QPS" "$SECS")
		wait "$lp"
		legit=$(cat "$TMP/legit.json")
		echo "$label $name $qtype: $out"
		echo "$label $name $qtype: legitimate client: $legit"
		eval "F_${label}_${qtype}=$(jq -r .factor <<<"$out")"
		check "[$label] $name $qtype: the legitimate client got all $(jq -r .sent <<<"$legit") answers" \
			[ "$(jq -r .answered <<<"$legit")" = "$(jq -r .sent <<<"$legit")" ]
		check "[$label] $name $qtype: the flood was measured ($(jq -r .sent <<<"$out") queries, $(jq -r .query_bytes <<<"$out") bytes)" \
			[ "$(jq -r .query_bytes <<<"$out")" -gt 0 ]
	done
}

write_config "$TMP/pop53.yaml" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1" "$ZONE"
start_pop53_answering "$TMP/pop53.yaml"
run off
check "RRL off, TXT: a reflector's factor ($F_off_TXT x) > 1" awk -v f="$F_off_TXT" 'BEGIN { exit !(f > 1) }'
check "RRL off, ANY: factor $F_off_ANY x > 1" awk -v f="$F_off_ANY" 'BEGIN { exit !(f > 1) }'
check "pop53d exits 0 (RRL off)" stop_pop53
check "no mbuf leaked (RRL off)" grep -q 'no leak' "$TMP/pop53d.log"

cat >>"$TMP/pop53.yaml" <<YAML
rrl:
  responses_per_second: 10
  slip: 2
YAML
start_pop53_answering "$TMP/pop53.yaml"
run on
check "RRL on, TXT: factor $F_on_TXT x <= 1.0" awk -v f="$F_on_TXT" 'BEGIN { exit !(f <= 1.0) }'
check "RRL on, ANY: factor $F_on_ANY x <= 1.0" awk -v f="$F_on_ANY" 'BEGIN { exit !(f <= 1.0) }'
check "pop53ctl rrl names the victim /24" bash -c '"$0" -s "$1" --json rrl | jq -e ".rrl.limited[] | select(.prefix == \"203.0.113.0/24\")" >/dev/null' \
	"$BUILD/control/pop53ctl" "$TMP/control.sock"
check "pop53d exits 0 (RRL on)" stop_pop53
check "no mbuf leaked (RRL on)" grep -q 'no leak' "$TMP/pop53d.log"
echo "amplification factor (bytes to the victim / bytes from it, $QPS qps x $SECS s): TXT off $F_off_TXT on $F_on_TXT; ANY off $F_off_ANY on $F_on_ANY"
[ "$FAIL" -eq 0 ] || cat "$TMP/pop53d.log"
finish
