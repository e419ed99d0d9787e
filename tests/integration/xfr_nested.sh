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

NESTED="zone kid.prim.test. lies below another served zone (its parent side)"
ABOVE="in.outer.test., a served zone's apex, lies below zone outer.test. (its parent side)"
# a_is NAME ADDR: pop53 answers NAME A with ADDR alone; aa_is also with the AA flag.
a_is() { [ "$(ip netns exec "$CLIENT_NS" kdig +time=1 +short @"$V4" "$1" A)" = "$2" ]; }
aa_is() { ip netns exec "$CLIENT_NS" kdig +time=1 @"$V4" "$1" A | grep -qi 'flags: qr aa' && a_is "$@"; }
# way_said WHAT ZONE KIND PATCHED SPLICED COMPILED TEXT: zone status counts ZONE's KIND
# (IXFR or AXFR) updates so and says the last one's way in is TEXT, in --json
# (ixfr_image/last_ixfr_image...) and in its text ("  IXFRs into the image: ...").
way_said() {
	local what=$1 zone=$2 kind=$3 p=$4 s=$5 c=$6 text=$7 k
	k=$(tr 'A-Z' 'a-z' <<<"$kind")
	check "zone status --json: $what" /usr/bin/python3 -c "import json,sys; z=json.loads(sys.argv[1])['zone']; \
assert z['${k}_image']=={'patched':$p,'spliced':$s,'compiled':$c} and z['last_${k}_image']==sys.argv[2], z" \
		"$(CTL --json zone status "$zone")" "$text"
	expect "zone status: $what" "  ${kind}s into the image: patched $p, spliced $s, compiled $c; last $text" \
		"$(CTL zone status "$zone" | grep "^  ${kind}s into the image: ")"
}

# 1. kid.prim.test's first AXFR: the zone had no data; the splice declines (nested).
check "kid.prim.test transferred: host.kid.prim.test A 192.0.2.61, authoritative" \
	wait_for 10 aa_is host.kid.prim.test 192.0.2.61
check "the parent's own names are served beside it (www.prim.test A 192.0.2.90)" \
	aa_is www.prim.test 192.0.2.90
way_said "the first AXFR compiled in full, the splice's reason given" kid.prim.test AXFR 0 0 1 \
	"compiled in full: the zone had no data; not spliced: $NESTED"
check "the log says the splice declined and why" \
	grep -qF "xfr: zone kid.prim.test.: compiled in full, not spliced: $NESTED" "$TMP/pop53d.log"

# 2. An IXFR of plain data: patched (being nested does not stop the patch).
knotc zone-begin kid.prim.test >/dev/null
knotc zone-set kid.prim.test new 300 A 192.0.2.63 >/dev/null
knotc zone-commit kid.prim.test >/dev/null
check "the IXFR is served (new.kid.prim.test A 192.0.2.63)" wait_for 5 a_is new.kid.prim.test 192.0.2.63
check "zone status: that IXFR was patched" zone_patched kid.prim.test 1 0

# 3. An IXFR the patch declines (an NSEC3PARAM in an unsigned zone is data the patch does not
#    write): the splice declines it too, and it is compiled with every zone.
knotc zone-begin kid.prim.test >/dev/null
knotc zone-set kid.prim.test @ 300 NSEC3PARAM 1 0 0 - >/dev/null
knotc zone-commit kid.prim.test >/dev/null
nsec3param_served() { [ "$(dig_rr kid.prim.test NSEC3PARAM)" = "1 0 0 -" ] && serial_is "$CLIENT_NS" "$V4" kid.prim.test 3; }
check "the IXFR is served (kid.prim.test NSEC3PARAM, serial 3)" wait_for 5 nsec3param_served
way_said "that IXFR compiled in full, the patch's and the splice's reasons given" kid.prim.test \
	IXFR 1 0 1 "compiled in full: the diff changes NSEC3PARAM records at kid.prim.test.; not spliced: $NESTED"
earlier_served() { a_is host.kid.prim.test 192.0.2.61 && a_is new.kid.prim.test 192.0.2.63; }
check "the records of the first AXFR and the IXFR before stay served (host, new)" earlier_served

# 4. outer.test added by a reload (served without data until its first transfer), above
#    pop53's in.outer.test: its first AXFR, which the splice declines.
xfr_config "$TMP/pop53.yaml" "$KID
$OUTER"
reload_quiet() { CTL reload >"$TMP/reload.out"; }
check "pop53ctl reload (outer.test and in.outer.test added)" reload_quiet
check "outer.test transferred: host.outer.test A 192.0.2.62, authoritative" \
	wait_for 10 aa_is host.outer.test 192.0.2.62
check "in.outer.test stays pop53's own zone (www.in.outer.test A 192.0.2.91, authoritative)" \
	aa_is www.in.outer.test 192.0.2.91
way_said "outer.test's first AXFR compiled in full, the splice's reason given" outer.test AXFR \
	0 0 1 "compiled in full: the zone had no data; not spliced: $ABOVE"
check "stats: xfr.axfr_image and xfr.ixfr_image count what zone status says" \
	/usr/bin/python3 -c "import json,sys; x=json.loads(sys.argv[1])['stats']['xfr']; \
assert x['axfr_image']=={'patched':0,'spliced':0,'compiled':2} and x['ixfr_image']=={'patched':1,'spliced':0,'compiled':1}, x" \
	"$(CTL --json stats)"

stop_pop53
check "pop53d stops cleanly (exit 0, no mbuf leak)" grep -q 'no leak' "$TMP/pop53d.log"

finish
