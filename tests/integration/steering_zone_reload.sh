#!/usr/bin/env bash
# `pop53ctl zone reload NAME` of a zone with steered records (issue 13): the zone is compiled
# alone with its steered records attached and patched into the running image, beside a
# genzone.py zone (SZR_BIG_N records, default 20,000), as long as the steering stays. The
# steering is real: a GeoIP MMDB built by tests/steer/mmdb_build.pl and a JSON subnet map,
# policy [map, geo]. What a user sees:
#   - the file edited at plain names, beside a steered A (a TXT changed) and at a steered
#     owner with no data of its own (a TXT added): the reply says "image: patched: ...",
#     kdig gets the new records, and the steered names still answer per client subnet (ECS)
#     as before the reload, with the same scope;
#   - a static A at a steered owner: the reload is rejected with file:line: reason (as the
#     full compile rejects it), the running data keeps answering.
. "$(dirname "$0")/lib.sh"
BIG_N=${SZR_BIG_N:-20000}
trap '[ "$FAIL" -eq 0 ] || grep -E "reload|patch|error|steer" "$TMP/pop53d.log" | tail -20; cleanup_common' EXIT
lab_lock

cat >"$TMP/nets.json" <<'JSON'
[{"network": "198.51.100.0/24", "data": {"country": {"iso_code": "US"}, "continent": {"code": "NA"}}},
 {"network": "192.0.2.0/24", "data": {"country": {"iso_code": "JP"}, "continent": {"code": "AS"}}}]
JSON
perl "$SRC/tests/steer/mmdb_build.pl" "$TMP/geo.mmdb" "$TMP/nets.json"
check "mmdblookup reads the test MMDB: 198.51.100.200 is NA" \
	grep -q '"NA"' <(mmdblookup --file "$TMP/geo.mmdb" --ip 198.51.100.200 continent code)
cat >"$TMP/map.json" <<'JSON'
[{"networks": ["198.51.100.0/25"], "labels": ["FRA"]},
 {"networks": ["203.0.113.0/24"], "labels": ["NRT"]}]
JSON

ZONE=$TMP/example.com.zone
CFG=$TMP/pop53.yaml
cp "$SRC/zones/example.com.zone" "$ZONE"
printf 'edge\t300 IN TXT\t"v1"\n' >>"$ZONE"
reload_test_init "$TMP/big.test.zone" "$BIG_N"
reload_test_config "$CFG" "$ZONE"
cat >>"$CFG" <<YAML
steering:
  map: $TMP/map.json
  geoip: $TMP/geo.mmdb
  records:
    - owner: map.example.com.
      type: A
      policy: [map, geo]
      ttl: 300
      geo:
        - {country: JP, labels: [NRT]}
        - {continent: NA, labels: [LAX]}
      pool: &pool
        - {name: lax1, address: 10.0.0.2, pop: LAX}
        - {name: nrt1, address: 10.0.0.3, pop: NRT}
        - {name: fra1, address: 10.0.0.4, pop: FRA}
    - owner: edge.example.com.
      type: A
      policy: [map, geo]
      ttl: 300
      geo:
        - {country: JP, labels: [NRT]}
        - {continent: NA, labels: [LAX]}
      pool: *pool
YAML

# steered WHEN: each steered name answers each client subnet with its own target
steered() {
	for n in map edge; do
		expect "$1: $n ECS 198.51.100.7/32 -> map FRA" \
			"10.0.0.4 ttl=300 scope=25" "$(subnet_answer $n.example.com A +subnet=198.51.100.7/32)"
		expect "$1: $n ECS 198.51.100.200/32 -> map miss, geo NA -> LAX" \
			"10.0.0.2 ttl=300 scope=25" "$(subnet_answer $n.example.com A +subnet=198.51.100.200/32)"
		expect "$1: $n ECS 203.0.113.0/24 -> map NRT" \
			"10.0.0.3 ttl=300 scope=24" "$(subnet_answer $n.example.com A +subnet=203.0.113.0/24)"
	done
}
txt_of() { kdig_section answer @"$V4" "$1" TXT | awk '$4=="TXT" {print $5}'; }
SERIAL=$(awk '/; serial/ {print $1}' "$ZONE")
edit() { # edit SED-EXPR [extra line]: the zone copy rewritten in place, its serial + 1
	SERIAL=$((SERIAL + 1))
	sed -e "s/^\(\t*\)[0-9]\{10\} ; serial/\1$SERIAL ; serial/" -e "$1" "$ZONE" >"$ZONE.new"
	[ -z "${2:-}" ] || printf '%s\n' "$2" >>"$ZONE.new"
	cat "$ZONE.new" >"$ZONE"
	rm -f "$ZONE.new"
}

"$SRC/scripts/lab.sh" up >/dev/null
start_pop53_answering "$CFG"
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.2; done
BIG_A0=$(a_of "$BIG_HOST")
check "the big zone answers $BIG_HOST A ($BIG_A0)" [ -n "$BIG_A0" ]
steered "before the reload"
expect "edge.example.com TXT beside its steered A" '"v1"' "$(txt_of edge.example.com)"

# --- 1. plain names, a TXT beside a steered A, a TXT at a steered owner: patched ----------
edit 's/^\(www\t\+300 IN A\t\).*/\1192.0.2.99/;s/"v1"/"v2"/' \
	$'new\t300 IN A\t192.0.2.123\nmap\t300 IN TXT\t"beside"'
gen0=$(generation)
out=$(ctl zone reload example.com 2>&1); rc=$?
echo "$out" | sed 's/^/# /' | head -3
check "zone reload example.com exits 0" [ $rc -eq 0 ]
check "the reply says the steered zone was patched, not compiled in full ($(image_of "$out"))" \
	grep -qE '^image: patched: zone example\.com\., [0-9]+ record\(s\) deleted and [0-9]+ added' <<<"$out"
check "the generation moved" [ "$(generation)" != "$gen0" ]
check "the log has the reload as patched" grep -q "reload: .*patched: zone example.com." "$TMP/pop53d.log"
expect "new.example.com A is served" 192.0.2.123 "$(a_of new.example.com)"
expect "www.example.com A is the new address" 192.0.2.99 "$(a_of www.example.com)"
expect "edge.example.com TXT beside its steered A changed" '"v2"' "$(txt_of edge.example.com)"
expect "map.example.com TXT added at a steered owner" '"beside"' "$(txt_of map.example.com)"
steered "after the patch"
check "the big zone still answers $BIG_HOST A" [ "$(a_of "$BIG_HOST")" = "$BIG_A0" ]

# --- 2. a static A at a steered owner: rejected as the full compile rejects it ------------
cp "$ZONE" "$ZONE.good"
edit 's/^x//' $'edge\t300 IN A\t192.0.2.5'
gen1=$(generation)
err=$(ctl zone reload example.com 2>&1); rc=$?
check "a static A at a steered owner: exits 1 with file:line: steering: ... ($err)" \
	bash -c '[ $0 -eq 1 ] && grep -qE "steering: edge\.example\.com\. A is steered" <<<"$1"' "$rc" "$err"
check "rejected: the generation stays $gen1" [ "$(generation)" = "$gen1" ]
steered "after the rejected reload"
cat "$ZONE.good" >"$ZONE"

check "pop53d stops cleanly" stop_pop53
finish
