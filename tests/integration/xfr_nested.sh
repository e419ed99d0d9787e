#!/usr/bin/env bash
# pop53d as a secondary of a hidden primary (knotd, tests/integration/xfr_lib.sh) for zones
# nested with zones it serves from its own files, as a CDN serves a customer's delegated
# subzone beside its own zone (issue 13: a transfer's way into the image). A zone transferred
# alone is compiled alone and spliced into the running image; the splice declines a zone
# nested with another served zone (control/zone/image_splice.c), and the transfer is compiled
# with every zone. What the operator reads then: `zone status` (text and JSON) and the log say
# why the patch did not take it and why the splice did not either, stats count it compiled,
# and kdig gets the transferred data from pop53 all the same:
#   kid.prim.test (secondary) below prim.test (pop53's file): its first AXFR (the zone had no
#     data), an IXFR the patch takes (patched), an IXFR the patch declines (an NSEC3PARAM in
#     an unsigned zone) that the splice declines too (the zone lies below another served zone);
#   outer.test (secondary, added by a reload) above in.outer.test (pop53's file): its first
#     AXFR, which the splice declines (a served zone's apex lies below it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfr_lib.sh"

xfr_begin

xfr_lab_up
knotd_conf kid.prim.test outer.test
knot_zone kid.prim.test 1 "host IN A 192.0.2.61"
knot_zone outer.test 1 "in IN NS ns1.in" "ns1.in IN A 192.0.2.53" "host IN A 192.0.2.62"
knotd_up
ok "knotd (primary of kid.prim.test and outer.test) starts in $PRIMARY_NS"

# pop53's own zones: prim.test delegates kid to pop53 (its glue on the parent side), and
# in.outer.test, which outer.test delegates.
primary_file() { # NAME [records...]
	local z=$1; shift
	{
		echo "\$ORIGIN $z."
		echo "\$TTL 300"
		echo "@ IN SOA ns1.$z. hostmaster.$z. 1 3600 600 1209600 300"
		echo "@ IN NS ns1.$z."
		echo "ns1 IN A 192.0.2.53"
		for r in "$@"; do echo "$r"; done
	} >"$TMP/$z.zone"
}
primary_file prim.test "www IN A 192.0.2.90" "kid IN NS ns1.kid" "ns1.kid IN A 192.0.2.53"
primary_file in.outer.test "www IN A 192.0.2.91"

KID="  - {name: prim.test, file: $TMP/prim.test.zone}
  - name: kid.prim.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]"
OUTER="  - {name: in.outer.test, file: $TMP/in.outer.test.zone}
  - name: outer.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]"
xfr_config "$TMP/pop53.yaml" "$KID"
start_pop53_answering "$TMP/pop53.yaml"

status_json() { CTL --json zone status "$1"; }
# The "into the image" line pop53ctl zone status prints for KIND (IXFRs or AXFRs) of ZONE.
status_line() { CTL zone status "$1" | grep "^  $2 into the image: "; }
NESTED="zone kid.prim.test. lies below another served zone (its parent side)"
ABOVE="in.outer.test., a served zone's apex, lies below zone outer.test. (its parent side)"

# 1. kid.prim.test's first AXFR: the zone had no data; the splice declines (nested).
check "kid.prim.test transferred: host.kid.prim.test A 192.0.2.61, authoritative" \
	wait_for 10 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 host.kid.prim.test A | \
		grep -qi 'flags: qr aa' && [ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 host.kid.prim.test A)\" = 192.0.2.61 ]"
check "the parent's own names are served beside it (www.prim.test A 192.0.2.90)" \
	sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 www.prim.test A)\" = 192.0.2.90 ]"
want="compiled in full: the zone had no data; not spliced: $NESTED"
check "zone status --json: the first AXFR compiled in full, the splice's reason given" \
	/usr/bin/python3 -c "import json,sys; z=json.loads(sys.argv[1])['zone']; \
assert z['axfr_image']=={'patched':0,'spliced':0,'compiled':1} and z['last_axfr_image']==sys.argv[2], z" \
	"$(status_json kid.prim.test)" "$want"
expect "zone status: the AXFRs line" "  AXFRs into the image: patched 0, spliced 0, compiled 1; last $want" \
	"$(status_line kid.prim.test AXFRs)"
check "the log says the splice declined and why" \
	grep -qF "xfr: zone kid.prim.test.: compiled in full, not spliced: $NESTED" "$TMP/pop53d.log"

# 2. An IXFR of plain data: patched (being nested does not stop the patch).
knotc zone-begin kid.prim.test >/dev/null
knotc zone-set kid.prim.test new 300 A 192.0.2.63 >/dev/null
knotc zone-commit kid.prim.test >/dev/null
check "the IXFR is served (new.kid.prim.test A 192.0.2.63)" \
	wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 new.kid.prim.test A)\" = 192.0.2.63 ]"
check "zone status: that IXFR was patched" zone_patched kid.prim.test 1 0

# 3. An IXFR the patch declines (an NSEC3PARAM in an unsigned zone is data the patch does not
#    write): the splice declines it too, and it is compiled with every zone.
knotc zone-begin kid.prim.test >/dev/null
knotc zone-set kid.prim.test @ 300 NSEC3PARAM 1 0 0 - >/dev/null
knotc zone-commit kid.prim.test >/dev/null
nsec3param_served() { [ "$(dig_rr kid.prim.test NSEC3PARAM)" = "1 0 0 -" ] && serial_is "$CLIENT_NS" "$V4" kid.prim.test 3; }
check "the IXFR is served (kid.prim.test NSEC3PARAM, serial 3)" wait_for 5 nsec3param_served
want="compiled in full: the diff changes NSEC3PARAM records at kid.prim.test.; not spliced: $NESTED"
check "zone status --json: that IXFR compiled in full, the patch's and the splice's reasons given" \
	/usr/bin/python3 -c "import json,sys; z=json.loads(sys.argv[1])['zone']; \
assert z['ixfr_image']=={'patched':1,'spliced':0,'compiled':1} and z['last_ixfr_image']==sys.argv[2], z" \
	"$(status_json kid.prim.test)" "$want"
expect "zone status: the IXFRs line" "  IXFRs into the image: patched 1, spliced 0, compiled 1; last $want" \
	"$(status_line kid.prim.test IXFRs)"
check "the records of both IXFRs stay served (host, new)" \
	sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 host.kid.prim.test A)\" = 192.0.2.61 ] && \
		[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 new.kid.prim.test A)\" = 192.0.2.63 ]"

# 4. outer.test added by a reload (served without data until its first transfer), above
#    pop53's in.outer.test: its first AXFR, which the splice declines.
xfr_config "$TMP/pop53.yaml" "$KID
$OUTER"
reload_quiet() { CTL reload >"$TMP/reload.out"; }
check "pop53ctl reload (outer.test and in.outer.test added)" reload_quiet
check "outer.test transferred: host.outer.test A 192.0.2.62" \
	wait_for 10 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 host.outer.test A)\" = 192.0.2.62 ]"
check "in.outer.test stays pop53's own zone (www.in.outer.test A 192.0.2.91, authoritative)" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 www.in.outer.test A | grep -qi 'flags: qr aa' && \
		[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 www.in.outer.test A)\" = 192.0.2.91 ]"
want="compiled in full: the zone had no data; not spliced: $ABOVE"
check "zone status --json: outer.test's first AXFR compiled in full, the splice's reason given" \
	/usr/bin/python3 -c "import json,sys; z=json.loads(sys.argv[1])['zone']; \
assert z['axfr_image']=={'patched':0,'spliced':0,'compiled':1} and z['last_axfr_image']==sys.argv[2], z" \
	"$(status_json outer.test)" "$want"
expect "zone status: outer.test's AXFRs line" "  AXFRs into the image: patched 0, spliced 0, compiled 1; last $want" \
	"$(status_line outer.test AXFRs)"
check "stats: xfr.axfr_image and xfr.ixfr_image count what zone status says" \
	/usr/bin/python3 -c "import json,sys; x=json.loads(sys.argv[1])['stats']['xfr']; \
assert x['axfr_image']=={'patched':0,'spliced':0,'compiled':2} and x['ixfr_image']=={'patched':1,'spliced':0,'compiled':1}, x" \
	"$(CTL --json stats)"

stop_pop53
check "pop53d stops cleanly (exit 0, no mbuf leak)" grep -q 'no leak' "$TMP/pop53d.log"

finish
