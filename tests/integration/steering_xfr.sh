#!/usr/bin/env bash
# IXFRs of a secondary zone with steered records (issue 13): knotd, the hidden primary
# (tests/integration/xfr_lib.sh), serves sec.test; pop53d steers edge.sec.test A (a TXT beside
# it in the zone) and map.sec.test A (no data in the zone) by a JSON subnet map. A change at
# the primary touching the steered owners' other records (edge's TXT changed, a TXT added at
# map) and a new name is patched into the running image (zone status: last_ixfr_image
# "patched"), kdig gets the new records and the steered names still answer per client subnet
# (ECS) as before. A static A added at a steered owner cannot be served with the steering:
# the patch declines, the full compile refuses it, and the served data stays.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfr_lib.sh"

xfr_begin

xfr_lab_up
knotd_conf sec.test
knot_zone sec.test 1 'edge IN TXT "v1"'
knotd_up
ok "knotd (primary) starts in $PRIMARY_NS"

cat >"$TMP/map.json" <<'JSON'
[{"networks": ["198.51.100.0/25"], "labels": ["FRA"]},
 {"networks": ["203.0.113.0/24"], "labels": ["NRT"]}]
JSON
xfr_config "$TMP/pop53.yaml" "  - name: sec.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]"
cat >>"$TMP/pop53.yaml" <<YAML
steering:
  map: $TMP/map.json
  records:
    - owner: edge.sec.test.
      type: A
      policy: [map]
      ttl: 300
      pool: &pool
        - {name: nrt1, address: 10.0.0.3, pop: NRT}
        - {name: fra1, address: 10.0.0.4, pop: FRA}
    - owner: map.sec.test.
      type: A
      policy: [map]
      ttl: 300
      pool: *pool
YAML
start_pop53_answering "$TMP/pop53.yaml"

steered() {
	for n in edge map; do
		expect "$1: $n.sec.test ECS 198.51.100.7/32 -> FRA" \
			"10.0.0.4 ttl=300 scope=25" "$(subnet_answer $n.sec.test A +subnet=198.51.100.7/32)"
		expect "$1: $n.sec.test ECS 203.0.113.0/24 -> NRT" \
			"10.0.0.3 ttl=300 scope=24" "$(subnet_answer $n.sec.test A +subnet=203.0.113.0/24)"
	done
}
status() { CTL --json zone status sec.test; }
zfield() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.argv[1])['zone'][sys.argv[2]])" "$(status)" "$1"; }

check "sec.test transferred: www.sec.test A 192.0.2.80" \
	wait_for 10 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 www.sec.test A)\" = 192.0.2.80 ]"
steered "after the AXFR"

# 1. TXT changed beside a steered A, a TXT at a steered owner, a new name: patched.
knotc zone-begin sec.test >/dev/null
knotc zone-unset sec.test edge TXT >/dev/null
knotc zone-set sec.test edge 300 TXT v2 >/dev/null
knotc zone-set sec.test map 300 TXT beside >/dev/null
knotc zone-set sec.test new 300 A 192.0.2.123 >/dev/null
knotc zone-commit sec.test >/dev/null
check "the IXFR is served: new.sec.test A 192.0.2.123" \
	wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 new.sec.test A)\" = 192.0.2.123 ]"
expect "the IXFR touching steered owners was patched, not compiled in full (zone status)" \
	patched "$(zfield last_ixfr_image)"
expect "edge.sec.test TXT beside its steered A changed" '"v2"' "$(dig_rr edge.sec.test TXT)"
expect "map.sec.test TXT added at a steered owner" '"beside"' "$(dig_rr map.sec.test TXT)"
steered "after the patched IXFR"

# 2. A static A at a steered owner: not patched; the full compile refuses it.
knotc zone-begin sec.test >/dev/null
knotc zone-set sec.test edge 300 A 192.0.2.5 >/dev/null
knotc zone-commit sec.test >/dev/null
check "the IXFR with a static A at a steered owner is not patched, and the log says why" \
	wait_for 5 grep -q "IXFR compiled in full, not patched: edge.sec.test. gains A data beside its steered records" "$TMP/pop53d.log"
check "... and the full compile refuses it (steering: edge.sec.test. A is steered)" \
	wait_for 5 grep -q "steering: edge.sec.test. A is steered" "$TMP/pop53d.log"
expect "the served data stays: edge.sec.test TXT" '"v2"' "$(dig_rr edge.sec.test TXT)"
steered "after the refused IXFR"

check "pop53d stops cleanly" stop_pop53
finish
