#!/usr/bin/env bash
# Traffic steering on the lab (docs/CONFIG.md, steering): a GeoIP and an ASN MaxMind DB built
# here by tests/steer/mmdb_build.pl with MaxMind's writer (read back with libmaxminddb's
# mmdblookup first, to prove they are real ones), a JSON subnet map, and pop53d answering
# steered records to kdig with and without +subnet from the client namespace: the chosen
# addresses, the TTL and the returned ECS scope for policies map, geo (city, subdivision,
# country, continent), asn and nearest (with the hybrid rule), IPv4 and IPv6; a target whose check fails leaving the answer and coming back without a reload; a
# static record for a steered owner refused at start-up with file:line; `pop53ctl target set`
# forcing a target down (it leaves the answer), up over a failing check, and back to auto;
# every target down with all_down: all (every target), all_down: fallback (its addresses) and
# all_down: pool (its fallback pool, under the same policy); policies priority and sticky (by
# weight over 200 client /24s); `pop53ctl explain` matching kdig's answers and naming the MMDB
# networks and their data (city, subdivisions, ASN and organization).
. "$(dirname "$0")/lib.sh"
trap cleanup_common EXIT
lab_lock

# --- the MaxMind DB ------------------------------------------------------------------------
cat >"$TMP/nets.json" <<'JSON'
[{"network": "198.51.100.0/24", "data": {"country": {"iso_code": "US"}, "continent": {"code": "NA"}, "subdivisions": [{"iso_code": "IL"}], "city": {"geoname_id": 4887398, "names": {"en": "Chicago"}}, "location": {"latitude": 41.88, "longitude": -87.63}}},
 {"network": "203.0.113.0/24", "data": {"country": {"iso_code": "MX"}, "continent": {"code": "NA"}, "subdivisions": [{"iso_code": "CMX"}], "location": {"latitude": 19.43, "longitude": -99.13}}},
 {"network": "192.0.2.0/24", "data": {"country": {"iso_code": "JP"}, "continent": {"code": "AS"}, "location": {"latitude": 35.68, "longitude": 139.69}}},
 {"network": "100.64.0.0/10", "data": {"country": {"iso_code": "DE"}, "continent": {"code": "EU"}, "location": {"latitude": 50.11, "longitude": 8.68}}},
 {"network": "2001:db8:53::/48", "data": {"country": {"iso_code": "JP"}, "continent": {"code": "AS"}, "location": {"latitude": 35.68, "longitude": 139.69}}},
 {"network": "2001:db8:e0::/44", "data": {"country": {"iso_code": "FR"}, "continent": {"code": "EU"}, "subdivisions": [{"iso_code": "IDF"}], "city": {"geoname_id": 2988507, "names": {"en": "Paris"}}, "location": {"latitude": 48.86, "longitude": 2.35}}},
 {"network": "2001:db8:f0::/44", "data": {"country": {"iso_code": "US"}, "continent": {"code": "NA"}, "subdivisions": [{"iso_code": "CA"}]}}]
JSON
perl "$SRC/tests/steer/mmdb_build.pl" "$TMP/geo.mmdb" "$TMP/nets.json"
check "mmdblookup reads the test MMDB: 198.51.100.7 is US" \
	grep -q '"US"' <(mmdblookup --file "$TMP/geo.mmdb" --ip 198.51.100.7 country iso_code)
check "mmdblookup reads the test MMDB: 2001:db8:53::1 is at latitude 35.68" \
	grep -q '35.680000' <(mmdblookup --file "$TMP/geo.mmdb" --ip 2001:db8:53::1 location latitude)
check "mmdblookup reads the test MMDB: 198.51.100.7 is in city 4887398" \
	grep -q '4887398 <uint32>' <(mmdblookup --file "$TMP/geo.mmdb" --ip 198.51.100.7 city geoname_id)
# The ASN database (GeoLite2-ASN's layout)
cat >"$TMP/asn.json" <<'JSON'
[{"network": "198.51.100.128/26", "data": {"autonomous_system_number": 64500, "autonomous_system_organization": "Example Transit"}},
 {"network": "2001:db8:e8::/45", "data": {"autonomous_system_number": 64501, "autonomous_system_organization": "Example Six"}}]
JSON
perl "$SRC/tests/steer/mmdb_build.pl" --type asn "$TMP/asn.mmdb" "$TMP/asn.json"
check "mmdblookup reads the test ASN DB: 198.51.100.130 is AS64500" \
	grep -q '64500 <uint32>' <(mmdblookup --file "$TMP/asn.mmdb" --ip 198.51.100.130 autonomous_system_number)
check "mmdblookup reads the test ASN DB: 2001:db8:e9::1 is AS64501" \
	grep -q '64501 <uint32>' <(mmdblookup --file "$TMP/asn.mmdb" --ip 2001:db8:e9::1 autonomous_system_number)

cat >"$TMP/map.json" <<'JSON'
[{"networks": ["198.51.100.0/25"], "labels": ["FRA"]},
 {"networks": ["203.0.113.0/24", "2001:db8:abcd::/48"], "labels": ["NRT", "ORD"]}]
JSON

"$SRC/scripts/lab.sh" up >/dev/null
write_config "$TMP/pop53.yaml" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
cat >>"$TMP/pop53.yaml" <<YAML
steering:
  map: $TMP/map.json
  geoip: $TMP/geo.mmdb
  asn_db: $TMP/asn.mmdb
  records:
    - owner: map.example.com.
      type: A
      policy: [map, geo]
      ttl: 300
      geo:
        - {country: JP, labels: [NRT]}
        - {continent: NA, labels: [LAX]}
      pool: &pool
        - {name: ord1, address: 10.0.0.1, pop: ORD, lat: "41.97", lon: "-87.90"}
        - {name: lax1, address: 10.0.0.2, pop: LAX, lat: "33.94", lon: "-118.41"}
        - {name: nrt1, address: 10.0.0.3, pop: NRT, lat: "35.77", lon: "140.39"}
        - {name: fra1, address: 10.0.0.4, pop: FRA, lat: "50.03", lon: "8.57"}
    - owner: city.example.com.
      type: A
      policy: [asn, geo]
      geo:
        - {asn: 64500, labels: [FRA]}
        - {continent: NA, labels: [NRT]}
        - {city: 4887398, labels: [ORD]}
        - {subdivision: MX-CMX, labels: [LAX]}
      pool: *pool
    - owner: city6.example.com.
      type: AAAA
      policy: [asn, geo]
      geo:
        - {asn: 64501, labels: [AMS]}
        - {city: 2988507, labels: [FRA]}
        - {subdivision: US-CA, labels: [LAX]}
      pool:
        - {name: fra6c, address: "2001:db8:2::2", pop: FRA}
        - {name: lax6c, address: "2001:db8:3::2", pop: LAX}
        - {name: ams6c, address: "2001:db8:4::2", pop: AMS}
    - owner: near.example.com.
      type: A
      policy: [nearest]
      nearest: {count: 2, hybrid: true, ratio_pct: 200, miles: 1000, ttl_single: 120, ttl_multi: 3600}
      pool: *pool
    - owner: v6.example.com.
      type: AAAA
      policy: [geo]
      geo:
        - {country: JP, labels: [NRT]}
        - {continent: EU, labels: [FRA]}
      pool:
        - {name: nrt6, address: "2001:db8:1::1", pop: NRT}
        - {name: fra6, address: "2001:db8:2::1", pop: FRA}
    - owner: health.example.com.
      type: A
      policy: [map]
      ttl: 60
      pool:
        - {name: a1, address: 10.0.1.1, pop: AMS, check: "test -e $TMP/a1.up", check_interval_ms: 200, rise: 1, fall: 1}
        - {name: a2, address: 10.0.1.2, pop: AMS}
    - owner: fb.example.com.
      type: A
      policy: [map]
      ttl: 30
      all_down: fallback
      fallback: [192.0.2.99, 192.0.2.98]
      pool:
        - {name: f1, address: 10.0.2.1, pop: AMS}
    - owner: sticky.example.com.
      type: A
      policy: [sticky]
      pool:
        - {name: s1, address: 10.0.3.1}
        - {name: s2, address: 10.0.3.2}
        - {name: s3, address: 10.0.3.3}
        - {name: s4, address: 10.0.3.4}
    - owner: prio.example.com.
      type: A
      policy: [priority]
      pool:
        - {name: p1, address: 10.0.4.1}
        - {name: p2, address: 10.0.4.2}
    - owner: fbp.example.com.
      type: A
      policy: [map]
      ttl: 30
      all_down: pool
      pool:
        - {name: g1, address: 10.0.5.1, pop: FRA}
      fallback_pool:
        - {name: g2, address: 10.0.5.2, pop: FRA}
        - {name: g3, address: 10.0.5.3, pop: AMS}
    - owner: cn.example.com.
      type: CNAME
      policy: [map]
      ttl: 60
      pool:
        - {name: cn-fra, target: www.example.com., pop: FRA}
        - {name: cn-nrt, target: cdn.example.net., pop: NRT}
        - {name: cn-ams, target: ns2.example.com., pop: AMS}
    - owner: wsticky.example.com.
      type: A
      policy: [sticky]
      pool:
        - {name: w1, address: 10.0.6.1, weight: 1}
        - {name: w3, address: 10.0.6.3, weight: 3}
YAML
touch "$TMP/a1.up"
start_pop53_answering "$TMP/pop53.yaml"
# Regression: pop53d compiles through the zone-transfer path (p53_xfr_compile), which once
# left the steered records out of the image: every steered name was NXDOMAIN.
check "steered names exist after start-up (xfr compile path carries steered records)" \
	grep -q 'status: NOERROR' <(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" map.example.com A 2>&1)


# map: the /25 entry, scope 25
expect "map: ECS 198.51.100.7/32 is in 198.51.100.0/25 -> FRA, scope 25" \
	"10.0.0.4 ttl=300 scope=25" "$(subnet_answer map.example.com A +subnet=198.51.100.7/32)"
# map misses (198.51.100.128/25 is the gap), geo: US -> continent NA -> LAX; the scope is the
# longer of the two blocks the decision read: 25
expect "map miss, geo fallback: ECS 198.51.100.200/32 -> continent NA -> LAX, scope 25" \
	"10.0.0.2 ttl=300 scope=25" "$(subnet_answer map.example.com A +subnet=198.51.100.200/32)"
expect "map: ECS 203.0.113.0/24 -> labels [NRT, ORD] -> NRT, scope 24" \
	"10.0.0.3 ttl=300 scope=24" "$(subnet_answer map.example.com A +subnet=203.0.113.0/24)"
expect "map, IPv6 ECS 2001:db8:abcd:1::/64 -> NRT, scope 48" \
	"10.0.0.3 ttl=300 scope=48" "$(subnet_answer map.example.com A +subnet=2001:db8:abcd:1::/64)"
# No ECS: the packet's source 192.0.2.1 (JP in the MMDB): map miss, geo country JP -> NRT
expect "no ECS: the source 192.0.2.1 -> geo JP -> NRT, no ECS option" \
	"10.0.0.3 ttl=300 scope=-" "$(subnet_answer map.example.com A)"
# ECS source prefix 0: the resolver's address (192.0.2.1, JP) decides, scope 0
expect "ECS 0.0.0.0/0: the resolver's address decides (JP -> NRT), scope 0" \
	"10.0.0.3 ttl=300 scope=0" "$(subnet_answer map.example.com A +subnet=0.0.0.0/0)"
# Not in any map entry nor MMDB network (10.9.9.9): every target, the gap's scope
got=$(subnet_answer map.example.com A +subnet=10.9.9.9/32)
expect "ECS 10.9.9.9 is nowhere: the fallback, every target" \
	"10.0.0.1 10.0.0.2 10.0.0.3 10.0.0.4 ttl=300" "${got% scope=*}"

# nearest-2 with the hybrid rule
expect "nearest: Chicago-like client (198.51.100.7) -> ORD alone, TTL 120, scope 24" \
	"10.0.0.1 ttl=120 scope=24" "$(subnet_answer near.example.com A +subnet=198.51.100.7/32)"
expect "nearest: Mexico-like client (203.0.113.9) -> LAX and ORD, TTL 3600, scope 24" \
	"10.0.0.1 10.0.0.2 ttl=3600 scope=24" "$(subnet_answer near.example.com A +subnet=203.0.113.9/32)"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" near.example.com A +subnet=203.0.113.9/32 2>&1)
expect "nearest: ...nearest first (LAX before ORD)" "10.0.0.2 10.0.0.1" \
	"$(awk '!/^;/ && $4=="A" {print $5}' <<<"$out" | tr '\n' ' ' | sed 's/ $//')"

# geo over IPv6, from the IPv6 client and with ECS
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V6" v6.example.com AAAA 2>&1)
expect "geo, IPv6 source 2001:db8:53::1 (JP) -> NRT" "2001:db8:1::1" "$(awk '!/^;/ && $4=="AAAA" {print $5}' <<<"$out")"
expect "geo, ECS 2001:db8:e1::/48 (FR -> continent EU) -> FRA, scope 44" \
	"2001:db8:2::1 ttl=300 scope=44" "$(subnet_answer v6.example.com AAAA +subnet=2001:db8:e1::/48)"

# geo's chain: city, subdivision, country, continent (the continent rule listed first loses
# to the city's); asn first in the policy. The scope is the longer of the blocks read: the ASN
# DB's network (or its empty block) and the GeoIP network.
expect "asn miss (empty 198.51.100.0/25), geo city Chicago -> ORD, scope 25" \
	"10.0.0.1 ttl=300 scope=25" "$(subnet_answer city.example.com A +subnet=198.51.100.7/32)"
expect "asn: ECS 198.51.100.130 is AS64500 -> FRA, scope 26 (the ASN network)" \
	"10.0.0.4 ttl=300 scope=26" "$(subnet_answer city.example.com A +subnet=198.51.100.130/32)"
expect "asn miss, geo subdivision MX-CMX -> LAX, scope 24" \
	"10.0.0.2 ttl=300 scope=24" "$(subnet_answer city.example.com A +subnet=203.0.113.9/32)"
expect "asn miss, geo: no city or subdivision rule for JP, continent AS has none: fallback" \
	"10.0.0.1 10.0.0.2 10.0.0.3 10.0.0.4 ttl=300 scope=24" "$(subnet_answer city.example.com A +subnet=192.0.2.1/32)"
expect "IPv6 ECS: asn miss (empty /45), geo city Paris -> FRA, scope 45" \
	"2001:db8:2::2 ttl=300 scope=45" "$(subnet_answer city6.example.com AAAA +subnet=2001:db8:e1::/48)"
expect "IPv6 ECS: AS64501 -> AMS, scope 45" \
	"2001:db8:4::2 ttl=300 scope=45" "$(subnet_answer city6.example.com AAAA +subnet=2001:db8:e9::/48)"
expect "IPv6 ECS: asn miss (empty /44), geo subdivision US-CA -> LAX, scope 44" \
	"2001:db8:3::2 ttl=300 scope=44" "$(subnet_answer city6.example.com AAAA +subnet=2001:db8:f1::/48)"

# Not steered: the ECS option comes back with scope 0
got=$(subnet_answer example.com SOA +subnet=198.51.100.7/32)
expect "a static answer echoes ECS with scope 0" "scope=0" "${got##* }"
got=$(subnet_answer ns1.example.com A +subnet=198.51.100.7/32)
expect "a static A answer is the zone's, scope 0" "192.0.2.53 ttl=3600 scope=0" "$got"

# Health: a1's check fails -> it leaves the answer; comes back -> returns; no reload
expect "health: both targets up" "10.0.1.1 10.0.1.2 ttl=60 scope=-" "$(subnet_answer health.example.com A)"
rm -f "$TMP/a1.up"
gone=
for _ in $(seq 1 30); do
	[ "$(subnet_answer health.example.com A)" = "10.0.1.2 ttl=60 scope=-" ] && { gone=1; break; }
	sleep 0.2
done
check "health: a1's check fails -> only a2 is answered" [ -n "$gone" ]
check "health: the change is logged" grep -q 'target a1 (10.0.1.1) of health.example.com. is down' "$TMP/pop53d.log"
touch "$TMP/a1.up"
back=
for _ in $(seq 1 30); do
	[ "$(subnet_answer health.example.com A)" = "10.0.1.1 10.0.1.2 ttl=60 scope=-" ] && { back=1; break; }
	sleep 0.2
done
check "health: a1 comes back -> both again" [ -n "$back" ]
check "health: no reload was needed" bash -c "! grep -q 'reload' '$TMP/pop53d.log'"

# An operator forces a target: a2 (no check) down -> it leaves the answer at once; the word
# shows in `pop53ctl target list`; `auto` hands it back to its check (none: up).
CTL="$BUILD/control/pop53ctl"
check "pop53ctl target set a2 down" "$CTL" -s "$TMP/control.sock" target set a2 down
expect "target set a2 down: only a1 is answered" "10.0.1.1 ttl=60 scope=-" "$(subnet_answer health.example.com A)"
check "target list shows a2 down, forced down, check none" \
	bash -c '"$0" -s "$1" --json target list | jq -e ".targets[] | select(.name == \"a2\") | select(.up == false and .forced == \"down\" and .check == \"none\")" >/dev/null' \
	"$CTL" "$TMP/control.sock"
check "target list (text) has a2's row" \
	grep -Eq '^health.example.com. +A +a2 +10.0.1.2 +AMS +down +none +down' <("$CTL" -s "$TMP/control.sock" target list)
check "target set an unknown name fails" bash -c '! "$0" -s "$1" target set nosuch down' "$CTL" "$TMP/control.sock"
check "pop53ctl target set a2 auto" "$CTL" -s "$TMP/control.sock" target set a2 auto
expect "target set a2 auto: both again" "10.0.1.1 10.0.1.2 ttl=60 scope=-" "$(subnet_answer health.example.com A)"
# The answer cache (on by default) keeps a steered answer's variant for the client's prefix:
# the same question again is answered from it (steer_pick_hits), and a forced change of a
# target (a new steering table) is picked again at once (steer_pick_misses), with the new answer.
picks() { "$CTL" -s "$TMP/control.sock" --json workers | jq "[.workers[].steer_pick_$1] | add"; }
h0=$(picks hits) m0=$(picks misses)
for _ in 1 2 3 4 5; do subnet_answer health.example.com A >/dev/null; done
h1=$(picks hits) m1=$(picks misses)
check "the answer cache keeps the steered variant: 5 questions, $((h1 - h0)) kept picks used, $((m1 - m0)) picked" \
	[ $((h1 - h0)) -ge 3 ]
"$CTL" -s "$TMP/control.sock" target set a2 down >/dev/null
expect "a target forced down after kept picks: only a1 at once" "10.0.1.1 ttl=60 scope=-" \
	"$(subnet_answer health.example.com A)"
check "...picked again from the new table (steer_pick_misses $m1 -> $(picks misses))" [ "$(picks misses)" -gt "$m1" ]
"$CTL" -s "$TMP/control.sock" target set a2 auto >/dev/null
expect "and auto again: both at once" "10.0.1.1 10.0.1.2 ttl=60 scope=-" "$(subnet_answer health.example.com A)"
# Queries with ECS go through the answer cache too: the same ECS question asked again gets the
# same variant (the ECS address's, picked per reply) and scope, from the cache
# (answer_cache_hits); a static answer echoes ECS with scope 0 from the cache as without it.
wsum() { "$CTL" -s "$TMP/control.sock" --json workers | jq "[.workers[].$1] | add"; }
a0=$(wsum answer_cache_hits)
for q in "map.example.com A +subnet=198.51.100.7/32|10.0.0.4 ttl=300 scope=25" \
	 "map.example.com A +subnet=203.0.113.0/24|10.0.0.3 ttl=300 scope=24" \
	 "map.example.com A +subnet=2001:db8:abcd:1::/64|10.0.0.3 ttl=300 scope=48" \
	 "map.example.com A +subnet=0.0.0.0/0|10.0.0.3 ttl=300 scope=0"; do
	for i in 1 2 3 4 5; do
		# shellcheck disable=SC2086
		expect "ECS, asked $i times: ${q%%|*}" "${q#*|}" "$(subnet_answer ${q%%|*})"
	done
done
for i in 1 2 3 4 5; do
	got=$(subnet_answer example.com SOA +subnet=198.51.100.7/32)
	expect "a static answer asked $i times echoes ECS with scope 0" "scope=0" "${got##* }"
done
a1=$(wsum answer_cache_hits)
check "ECS questions from the answer cache: 25 questions, $((a1 - a0)) answered from it" \
	[ $((a1 - a0)) -ge 12 ]
# Forced up overrides a failing check: a1's check fails, yet it stays in the answer.
"$CTL" -s "$TMP/control.sock" target set a1 up >/dev/null
rm -f "$TMP/a1.up"
sleep 1
expect "target set a1 up: a failing check does not take it out" "10.0.1.1 10.0.1.2 ttl=60 scope=-" \
	"$(subnet_answer health.example.com A)"
"$CTL" -s "$TMP/control.sock" target set a1 auto >/dev/null
expect "target set a1 auto: the failing check decides again" "10.0.1.2 ttl=60 scope=-" \
	"$(subnet_answer health.example.com A)"
touch "$TMP/a1.up"

# Every target down: all_down: all (the default) answers every target; all_down: fallback
# answers the fallback addresses, and the target again once it is back.
"$CTL" -s "$TMP/control.sock" target set a1 down >/dev/null
"$CTL" -s "$TMP/control.sock" target set a2 down >/dev/null
expect "all_down: all (default): both targets down -> both answered" "10.0.1.1 10.0.1.2 ttl=60 scope=-" \
	"$(subnet_answer health.example.com A)"
"$CTL" -s "$TMP/control.sock" target set a1 auto >/dev/null
"$CTL" -s "$TMP/control.sock" target set a2 auto >/dev/null
expect "all_down: fallback: the target up -> it is answered" "10.0.2.1 ttl=30 scope=-" "$(subnet_answer fb.example.com A)"
"$CTL" -s "$TMP/control.sock" target set f1 down >/dev/null
expect "all_down: fallback: the only target down -> the fallback addresses" \
	"192.0.2.98 192.0.2.99 ttl=30 scope=-" "$(subnet_answer fb.example.com A)"
"$CTL" -s "$TMP/control.sock" target set f1 auto >/dev/null
expect "all_down: fallback: the target back -> it again" "10.0.2.1 ttl=30 scope=-" "$(subnet_answer fb.example.com A)"

# all_down: pool: the fallback pool stands in when every target of the pool is down, with the
# same policy (map: FRA) over its healthy targets; with those down too, every one of them.
expect "all_down: pool: the pool's target up -> g1 (FRA), scope 25" "10.0.5.1 ttl=30 scope=25" \
	"$(subnet_answer fbp.example.com A +subnet=198.51.100.7/32)"
"$CTL" -s "$TMP/control.sock" target set g1 down >/dev/null
expect "all_down: pool: g1 down -> the fallback pool's FRA target g2, scope 25" "10.0.5.2 ttl=30 scope=25" \
	"$(subnet_answer fbp.example.com A +subnet=198.51.100.7/32)"
check "target list marks g2 as a fallback_pool target" \
	bash -c '"$0" -s "$1" --json target list | jq -e "[.targets[] | select(.record == \"fbp.example.com.\") | .fallback_pool // false] == [false, true, true]" >/dev/null' \
	"$CTL" "$TMP/control.sock"
"$CTL" -s "$TMP/control.sock" target set g2 down >/dev/null
expect "all_down: pool: g2 down too -> no FRA left: every healthy fallback target (g3)" \
	"10.0.5.3 ttl=30 scope=25" "$(subnet_answer fbp.example.com A +subnet=198.51.100.7/32)"
expect "explain agrees (fallback pool, g1 and g2 down)" "$(subnet_answer fbp.example.com A +subnet=198.51.100.7/32)" \
	"$("$CTL" -s "$TMP/control.sock" --json explain fbp.example.com A --ecs 198.51.100.7/32 |
	   jq -r '.explain.answer | ((.addresses | sort | join(" ")) + " ttl=\(.ttl) scope=\(.scope)")')"
"$CTL" -s "$TMP/control.sock" target set g3 down >/dev/null
got=$(subnet_answer fbp.example.com A +subnet=198.51.100.7/32)
expect "all_down: pool: everything down -> every fallback pool target" "10.0.5.2 10.0.5.3 ttl=30" "${got% scope=*}"
for n in g1 g2 g3; do "$CTL" -s "$TMP/control.sock" target set $n auto >/dev/null; done
expect "all_down: pool: g1 back -> g1 again" "10.0.5.1 ttl=30 scope=25" "$(subnet_answer fbp.example.com A +subnet=198.51.100.7/32)"

# A steered CNAME: the chosen target, chased into the zone like a static CNAME when it is
# in-zone (the A or AAAA after it), alone when it is not; the scope is the map's.
# cq TYPE ECS: "CNAME-target [A/AAAA...] ttl=T scope=S status=RCODE"
cq() {
	local out
	out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" cn.example.com "$1" ${2:++subnet=$2} 2>&1)
	echo "$(awk '!/^;/ && $4=="CNAME" {print $5}' <<<"$out" | tr '\n' ' ')$(awk -v t="$1" '!/^;/ && $4==t && t!="CNAME" {print $5}' <<<"$out" | tr '\n' ' ')ttl=$(awk '!/^;/ && $4=="CNAME" {print $2; exit}' <<<"$out") scope=$(sed -n 's/^;* *CLIENT-SUBNET: .*\/\([0-9]*\)$/\1/p' <<<"$out") status=$(sed -n 's/.*status: \([A-Z]*\).*/\1/p' <<<"$out")"
}
expect "CNAME pool: ECS 198.51.100.7 (map FRA) -> CNAME www.example.com., chased to its A, scope 25" \
	"www.example.com. 192.0.2.80 ttl=60 scope=25 status=NOERROR" "$(cq A 198.51.100.7/32)"
expect "CNAME pool: AAAA is chased the same way" \
	"www.example.com. 2001:db8:80::80 ttl=60 scope=25 status=NOERROR" "$(cq AAAA 198.51.100.7/32)"
expect "CNAME pool: ECS 203.0.113.9 (map NRT) -> CNAME cdn.example.net. (not ours: not chased), scope 24" \
	"cdn.example.net. ttl=60 scope=24 status=NOERROR" "$(cq A 203.0.113.9/32)"
expect "CNAME pool: a CNAME query gets the chosen CNAME alone" \
	"www.example.com. ttl=60 scope=25 status=NOERROR" "$(cq CNAME 198.51.100.7/32)"
expect "CNAME pool: no ECS (192.0.2.1, no map entry) -> the fallback: the first target up" \
	"www.example.com. 192.0.2.80 ttl=60 scope= status=NOERROR" "$(cq A)"
"$CTL" -s "$TMP/control.sock" target set cn-fra down >/dev/null
expect "CNAME pool: cn-fra down -> no FRA target: the first up, cdn.example.net." \
	"cdn.example.net. ttl=60 scope=25 status=NOERROR" "$(cq A 198.51.100.7/32)"
"$CTL" -s "$TMP/control.sock" target set cn-fra auto >/dev/null
for c in 198.51.100.7/32 203.0.113.9/32; do
	got=$("$CTL" -s "$TMP/control.sock" --json explain cn.example.com CNAME --ecs $c |
	      jq -r '.explain.answer | (.addresses | join(" ")) + " ttl=\(.ttl) scope=\(.scope)"')
	want=$(cq CNAME $c)
	expect "explain cn.example.com CNAME --ecs $c matches kdig" "${want% status=*}" "$got"
done

# sticky by weight: over 200 client /24s, w3 (weight 3) gets about 3/4; a /24 keeps its
# target whatever host inside it asks. One kdig, many queries.
args=() args2=()
for a in $(seq 1 200); do
	args+=(wsticky.example.com A +subnet=10.$((a / 50)).$((a % 50 * 5)).0/24)
	args2+=(wsticky.example.com A +subnet=10.$((a / 50)).$((a % 50 * 5)).77/32)
done
first=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" "${args[@]}" 2>&1 | awk '!/^;/ && $4=="A" {print $5}')
again=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" "${args2[@]}" 2>&1 | awk '!/^;/ && $4=="A" {print $5}')
n1=$(grep -c '^10.0.6.1$' <<<"$first")
n3=$(grep -c '^10.0.6.3$' <<<"$first")
check "sticky by weight: 200 answers, one target each ($n1 + $n3)" [ $((n1 + n3)) -eq 200 ]
check "sticky by weight: w3 (weight 3) has 120 to 180 of 200 client /24s ($n3; w1 $n1)" \
	[ "$n3" -ge 120 -a "$n3" -le 180 ]
check "sticky by weight: every /24 gets the same target for another host in it" [ "$first" = "$again" ]
for a in 7 77 177; do
	c=10.$((a / 50)).$((a % 50 * 5)).0/24
	expect "explain wsticky --ecs $c matches kdig" "$(subnet_answer wsticky.example.com A +subnet=$c)" \
		"$("$CTL" -s "$TMP/control.sock" --json explain wsticky.example.com A --ecs $c |
		   jq -r '.explain.answer | ((.addresses | sort | join(" ")) + " ttl=\(.ttl) scope=\(.scope)")')"
done

# explain: the decision path pop53d reports from its published table gives what kdig gets.
# ex NAME TYPE ARGS...: "ADDR... ttl=T scope=S" (addresses sorted) from `pop53ctl --json explain`
ex() {
	"$CTL" -s "$TMP/control.sock" --json explain "$@" |
		jq -r '.explain.answer | ((.addresses | sort | join(" ")) + " ttl=\(.ttl) scope=\(.scope)")'
}
for c in "map.example.com A 198.51.100.7/32" "map.example.com A 198.51.100.200/32" \
	 "map.example.com A 203.0.113.0/24" "map.example.com A 2001:db8:abcd:1::/64" \
	 "near.example.com A 198.51.100.7/32" "near.example.com A 203.0.113.9/32" \
	 "v6.example.com AAAA 2001:db8:e1::/48" "map.example.com A 10.9.9.9/32" \
	 "sticky.example.com A 198.51.100.7/32" "sticky.example.com A 203.0.113.9/32" \
	 "sticky.example.com A 100.64.1.0/24" "sticky.example.com A 2001:db8:77::/48" \
	 "prio.example.com A 198.51.100.7/32" "city.example.com A 198.51.100.7/32" \
	 "city.example.com A 198.51.100.130/32" "city.example.com A 203.0.113.9/32" \
	 "city6.example.com AAAA 2001:db8:e1::/48" "city6.example.com AAAA 2001:db8:e9::/48" \
	 "city6.example.com AAAA 2001:db8:f1::/48"; do
	set -- $c
	expect "explain $1 $2 --ecs $3 matches kdig +subnet=$3" "$(subnet_answer "$1" "$2" +subnet="$3")" "$(ex "$1" "$2" --ecs "$3")"
done
got=$(ex map.example.com A --client 192.0.2.1)
expect "explain --client 192.0.2.1 (no ECS) matches kdig from 192.0.2.1" "$(subnet_answer map.example.com A | sed 's/ scope=-$//')" "${got% scope=*}"
check "explain shows the map miss then the geo step's country" bash -c '"$0" -s "$1" --json explain map.example.com A --ecs 198.51.100.200/32 | jq -e ".explain.steps[0].location | type == \"string\"" >/dev/null && "$0" -s "$1" --json explain map.example.com A --ecs 198.51.100.200/32 | jq -e ".explain.steps[1].location.continent == \"NA\" and .explain.answer.by == \"geo\"" >/dev/null' "$CTL" "$TMP/control.sock"
# explain names the MMDB networks that decided, and their data
exj() { "$CTL" -s "$TMP/control.sock" --json explain "$@"; }
check "explain: Chicago's city, subdivision and network; the ASN DB's empty block" \
	jq -e '.explain.steps[0].block == "198.51.100.0/25" and (.explain.steps[0].location | type == "string") and
	       .explain.steps[1].block == "198.51.100.0/24" and .explain.steps[1].location.city == "Chicago" and
	       .explain.steps[1].location.city_geoname_id == 4887398 and
	       .explain.steps[1].location.subdivisions == ["US-IL"] and .explain.answer.by == "geo"' \
	<(exj city.example.com A --ecs 198.51.100.7/32)
check "explain: AS64500's network and organization decide" \
	jq -e '.explain.steps[0].policy == "asn" and .explain.steps[0].block == "198.51.100.128/26" and
	       .explain.steps[0].location.asn == 64500 and .explain.steps[0].location.as_organization == "Example Transit" and
	       .explain.answer.by == "asn" and .explain.answer.scope == 26' \
	<(exj city.example.com A --ecs 198.51.100.130/32)
check "explain: IPv6 AS64501 in 2001:db8:e8::/45" \
	jq -e '.explain.steps[0].block == "2001:db8:e8::/45" and .explain.steps[0].location.asn == 64501 and
	       .explain.answer.addresses == ["2001:db8:4::2"]' <(exj city6.example.com AAAA --ecs 2001:db8:e9::/48)
check "explain (text) shows the city" \
	grep -q 'step 2: geo (geoip) block 2001:db8:e0::/44 location .*"city":"Paris"' \
	<("$CTL" -s "$TMP/control.sock" explain city6.example.com AAAA --ecs 2001:db8:e1::/48)
check "explain (text) names the block and the answer" \
	grep -q 'step 1: map (map) block 198.51.100.0/25' <("$CTL" -s "$TMP/control.sock" explain map.example.com A --ecs 198.51.100.7/32)
# priority over kdig: p1 first; p1 down -> p2
expect "priority: p1 first" "10.0.4.1 ttl=300 scope=-" "$(subnet_answer prio.example.com A)"
"$CTL" -s "$TMP/control.sock" target set p1 down >/dev/null
expect "priority: p1 down -> p2" "10.0.4.2 ttl=300 scope=-" "$(subnet_answer prio.example.com A)"
# sticky over kdig: a /24's target going down moves it; the others' /24s keep theirs
before=$(subnet_answer sticky.example.com A +subnet=198.51.100.7/32)
victim=$("$CTL" -s "$TMP/control.sock" --json target list | jq -r ".targets[] | select(.address == \"${before%% *}\") | .name")
other=
for n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
	g=$(subnet_answer sticky.example.com A +subnet=100.64.$n.0/24)
	[ "${g%% *}" != "${before%% *}" ] && { other="100.64.$n.0/24 $g"; break; }
done
"$CTL" -s "$TMP/control.sock" target set "$victim" down >/dev/null
check "sticky: the /24's target down -> another target" [ "$(subnet_answer sticky.example.com A +subnet=198.51.100.7/32 | cut -d' ' -f1)" != "${before%% *}" ]
expect "sticky: a /24 on another target keeps it" "${other#* }" "$(subnet_answer sticky.example.com A +subnet="${other%% *}")"
"$CTL" -s "$TMP/control.sock" target set "$victim" auto >/dev/null
expect "sticky: the target back -> the /24 returns to it" "$before" "$(subnet_answer sticky.example.com A +subnet=198.51.100.7/32)"

check "pop53d stops cleanly" stop_pop53
check "no mbuf leaked" grep -q 'no leak' "$TMP/pop53d.log"

# Static data for a steered owner and type: refused with the config's file:line and the zone's
line=$(grep -n 'owner: map.example.com.' "$TMP/pop53.yaml" | cut -d: -f1)
sed 's/owner: map.example.com./owner: ns1.example.com./' "$TMP/pop53.yaml" >"$TMP/bad.yaml"
out=$("$POP53D" --check-config "$TMP/bad.yaml" 2>&1)
check "a steered owner with static A data is refused with file:line of both" \
	grep -q "$TMP/bad.yaml:$line: steering: ns1.example.com. A is steered, but the zone has A data for it at $SRC/zones/example.com.zone:15" <<<"$out"
# A steered CNAME whose owner has static data: refused with both places
line=$(grep -n 'owner: cn.example.com.' "$TMP/pop53.yaml" | cut -d: -f1)
sed 's/owner: cn.example.com./owner: api.example.com./' "$TMP/pop53.yaml" >"$TMP/bad2.yaml"
out=$("$POP53D" --check-config "$TMP/bad2.yaml" 2>&1)
check "a steered CNAME at an owner with static A data is refused with file:line of both ($out)" \
	grep -q "$TMP/bad2.yaml:$line: steering: api.example.com. CNAME is steered, but the zone has A data for it at $SRC/zones/example.com.zone:" <<<"$out"
[ "$FAIL" -eq 0 ] && [ -z "${VERBOSE:-}" ] || cat "$TMP/pop53d.log"
finish
