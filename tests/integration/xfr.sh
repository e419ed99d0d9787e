#!/usr/bin/env bash
# pop53d as a secondary of a hidden primary (knotd in its own namespace, tests/integration/
# xfr_lib.sh): the first AXFR, a change at the primary (knotc zone-set/zone-commit) served
# within one second of knotd's NOTIFY by IXFR, the zone's records equal to the primary's after
# a series of changes, pop53ctl zone status/refresh/retransfer, the disk copy, and TSIG:
# NOTIFYs with a bad key, a bad secret, no signature or from a stranger are refused with the
# RFC's answer, and a transfer with a wrong secret is refused by the primary and leaves the
# zone without data (SERVFAIL), as Knot would.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfr_lib.sh"

xfr_begin

xfr_lab_up
knotd_conf sec.test bad.test
knot_zone sec.test 1 "old IN A 192.0.2.7" "mx IN MX 10 www.sec.test." "cdn IN CNAME www.sec.test."
knot_zone bad.test 1
knotd_up
ok "knotd (primary) starts in $PRIMARY_NS"

xfr_config "$TMP/pop53.yaml" "  - name: sec.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
  - name: bad.test
    primaries: [{address: $PRIMARY_V4, key: wrong.key}]
    notify: {from: [$PRIMARY_V4/32], key: wrong.key}"
cat >>"$TMP/pop53.yaml" <<YAML
  - name: open.test
    primaries: [{address: $PRIMARY_V4}]
    notify: {from: [192.0.2.0/24]}
YAML
# The Prometheus endpoint, in pop53d's namespace: the secondary side's totals are there too.
METRICS=127.0.0.1:19253
sed -i "s|^metrics: {enabled: false}|metrics: {enabled: true, listen: \"$METRICS\"}|" "$TMP/pop53.yaml"
# The same key name with another secret: the primary must refuse it (BADSIG).
sed -i "s|^tsig_keys:|tsig_keys:\n  - {name: wrong.key, algorithm: hmac-sha256, secret: \"YmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkMTI=\"}|" "$TMP/pop53.yaml"
start_pop53_answering "$TMP/pop53.yaml"

# 1. The first transfer (AXFR: no data yet).
check "sec.test transferred: www.sec.test A 192.0.2.80" \
	wait_for 10 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 www.sec.test A)\" = 192.0.2.80 ]"
st=$(CTL --json zone status sec.test)
check "zone status: loaded, serial 1, AXFR from the primary" \
	/usr/bin/python3 -c "import json,sys; z=json.loads(sys.argv[1])['zone']; \
assert z['state']=='loaded' and z['serial']==1 and z['last_transfer']['type']=='AXFR' \
and z['primary'].startswith('$PRIMARY_V4:53 key xfr.key'), z" "$st"
# A zone served without data (SERVFAIL) takes its first AXFR by a splice: zone status counts
# it where an operator looks for an AXFR's way in, apart from the IXFRs.
check "zone status: the first AXFR was spliced in (the zone had no data), no IXFR yet" \
	/usr/bin/python3 -c "import json,sys; z=json.loads(sys.argv[1])['zone']; \
assert z['axfr_image']=={'patched':0,'spliced':1,'compiled':0} and z['last_axfr_image']== \
'spliced: zone sec.test. compiled alone (the patch declined: the zone had no data)' and \
z['ixfr_image']=={'patched':0,'spliced':0,'compiled':0} and z['last_ixfr_image'] is None, z" "$st"
check "the disk copy holds the zone, SOA first" \
	sh -c "grep -v '^;' $TMP/xfr/sec.test.zone | head -1 | grep -q 'SOA.*ns1.sec.test. hostmaster.sec.test. 1 '"
check "answers are authoritative (AA) from the transferred zone" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 mx.sec.test MX | grep -qi 'flags: qr aa'"

# 2. A change at the primary, served within one second of knotd's NOTIFY (over TCP).
knotc zone-begin sec.test >/dev/null
knotc zone-unset sec.test www A >/dev/null
knotc zone-set sec.test www 300 A 192.0.2.99 >/dev/null
knotc zone-commit sec.test >/dev/null
t0=$(date +%s%N)
if wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 www.sec.test A)\" = 192.0.2.99 ]"; then
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	check "the change is served ${ms} ms after zone-commit (knotd's NOTIFY), under 1000 ms" [ "$ms" -lt 1000 ]
else
	not_ok "the change at the primary is served (www.sec.test A 192.0.2.99)"
fi
check "knotd's NOTIFY was accepted (TCP, signed) and the zone refreshed by IXFR" \
	sh -c "grep -q 'NOTIFY for sec.test. from $PRIMARY_V4 over TCP key xfr.key.: refreshing' $TMP/pop53d.log && \
	       grep -q 'IXFR to serial 2: 2 deleted, 2 added' $TMP/pop53d.log"
check "knotd logs the NOTIFY answered" grep -q "notify, outgoing, remote 192.0.2.53@53, serial 2" "$KNOT_DIR/knotd.log"
check "the IXFR was patched into the running image, not compiled (zone status, log)" \
	sh -c "$BUILD/control/pop53ctl -s $TMP/control.sock --json zone status sec.test | grep -q '\"last_ixfr_image\":\"patched\"' && \
	       grep -q 'published 1 zone update(s) in .* patch ' $TMP/pop53d.log"

# 2b. What a CDN changes all day: a CNAME's target and an MX's target, both to a new name
#     with an address, in one IXFR: patched too, and served as a user sees it. With them a
#     new delegation with its glue (sub.sec.test), patched as well: answered as a referral.
knotc zone-begin sec.test >/dev/null
knotc zone-set sec.test sub 300 NS ns.sub.sec.test. >/dev/null
knotc zone-set sec.test ns.sub 300 A 192.0.2.77 >/dev/null
knotc zone-unset sec.test cdn CNAME >/dev/null
knotc zone-set sec.test cdn 300 CNAME edge.sec.test. >/dev/null
knotc zone-set sec.test edge 300 A 192.0.2.44 >/dev/null
knotc zone-unset sec.test mx MX >/dev/null
knotc zone-set sec.test mx 300 MX 10 edge.sec.test. >/dev/null
knotc zone-commit sec.test >/dev/null
check "the CNAME's new target is served and followed (cdn.sec.test -> edge.sec.test 192.0.2.44)" \
	wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 cdn.sec.test A | tr '\n' ' ')\" = 'edge.sec.test. 192.0.2.44 ' ]"
check "the MX names the new target, its address in the additional section" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 mx.sec.test MX +noall +answer +additional | tr -s ' \t' ' ' | \
	       grep -q '^mx.sec.test. 300 IN MX 10 edge.sec.test.' && \
	       ip netns exec $CLIENT_NS kdig +time=1 @$V4 mx.sec.test MX +noall +additional | tr -s ' \t' ' ' | \
	       grep -q '^edge.sec.test. 300 IN A 192.0.2.44'"
check "the new delegation is a referral: NS in the authority section, its glue, no AA" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=1 +norec @$V4 host.sub.sec.test A >$TMP/ref.txt; \
	       grep -q 'status: NOERROR' $TMP/ref.txt && ! grep -qi 'flags: qr aa' $TMP/ref.txt && \
	       tr -s ' \t' ' ' <$TMP/ref.txt | grep -q '^sub.sec.test. 300 IN NS ns.sub.sec.test.' && \
	       tr -s ' \t' ' ' <$TMP/ref.txt | grep -q '^ns.sub.sec.test. 300 IN A 192.0.2.77'"
check "the CNAME, MX and delegation change was patched, no IXFR compiled in full (zone status)" \
	/usr/bin/python3 -c "import json,sys; z=json.loads(sys.argv[1])['zone']; \
assert z['serial']==3 and z['last_ixfr_image']=='patched' and \
z['ixfr_image']=={'patched':2,'spliced':0,'compiled':0}, z" \
	"$(CTL --json zone status sec.test)"

# 3. Several changes in a row; the zone as pop53 serves it equals the primary's.
for i in 1 2 3 4 5; do
	knotc zone-begin sec.test >/dev/null
	knotc zone-set sec.test "h$i" 300 A "192.0.2.$((100 + i))" >/dev/null
	knotc zone-set sec.test "h$i" 300 TXT "\"v$i\"" >/dev/null
	[ "$i" -ne 3 ] || knotc zone-unset sec.test old A >/dev/null
	if [ "$i" -eq 2 ]; then # the delegation goes again, glue and all
		knotc zone-unset sec.test sub NS >/dev/null
		knotc zone-unset sec.test ns.sub A >/dev/null
	fi
	[ "$i" -ne 4 ] || knotc zone-set sec.test mx 600 MX 20 h4.sec.test. >/dev/null
	# A DNAME comes, then its target changes (issue 13: patched, RFC 6672 synthesis served).
	[ "$i" -ne 3 ] || knotc zone-set sec.test moved 300 DNAME example.net. >/dev/null
	if [ "$i" -eq 5 ]; then
		knotc zone-unset sec.test moved DNAME >/dev/null
		knotc zone-set sec.test moved 300 DNAME example.org. >/dev/null
	fi
	knotc zone-commit sec.test >/dev/null
done
check "the last change arrived (serial 8)" \
	wait_for 10 serial_is "$CLIENT_NS" "$V4" sec.test 8
# Every owner and type of the primary's zone, asked of pop53, must give the primary's RRset.
# The primary's records of sec.test, one per line, into $TMP/primary.txt.
primary_records() {
	ip netns exec "$PRIMARY_NS" kdig +time=2 @"$PRIMARY_V4" -y "hmac-sha256:xfr.key:$XFR_SECRET" sec.test AXFR +noall +answer 2>/dev/null |
		awk '$4 != "TSIG" { $1=tolower($1); print }' | sort -u >"$TMP/primary.txt"
}
primary_records
: >"$TMP/pop.txt"
awk '{ print $1, $4 }' "$TMP/primary.txt" | sort -u | while read -r owner type; do
	kdig_section answer @"$V4" "$owner" "$type" >>"$TMP/pop.txt"
done
sort -u -o "$TMP/pop.txt" "$TMP/pop.txt"
check "pop53 serves exactly the primary's records after 7 IXFRs ($(wc -l <"$TMP/primary.txt") records)" \
	sh -c "[ \$(wc -l <$TMP/primary.txt) -ge 15 ] && diff $TMP/primary.txt $TMP/pop.txt"
check "the deleted record is gone (old.sec.test NXDOMAIN)" [ "$(dig_rcode old.sec.test A)" = NXDOMAIN ]
check "the removed delegation is gone (host.sub.sec.test NXDOMAIN)" [ "$(dig_rcode host.sub.sec.test A)" = NXDOMAIN ]
check "the DNAME's new target is synthesised (host.moved.sec.test CNAME host.example.org)" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 host.moved.sec.test A +noall +answer | \
	       tr -s ' \t' ' ' | grep -q '^host.moved.sec.test. 300 IN CNAME host.example.org.'"
# Five commits in a row: knotd may answer one IXFR query with two of them (one image).
check "every IXFR was patched, the DNAME ones too, none compiled in full (zone status)" \
	/usr/bin/python3 -c "import json,sys; z=json.loads(sys.argv[1])['zone']; \
assert z['serial']==8 and z['last_ixfr_image']=='patched' and z['ixfr_image']['compiled']==0 and \
3 <= z['ixfr_image']['patched'] <= 7, z" \
	"$(CTL --json zone status sec.test)"

# 3b. An IXFR the patch declines (an RRSIG in an unsigned zone: it turns signed): spliced,
#     the zone compiled alone replacing its nodes in the image (control/zone/image_splice.c),
#     the other zones not compiled; zone status and the log say so and why.
SIG=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==
knotc zone-begin sec.test >/dev/null
knotc zone-set sec.test h1 300 RRSIG "A 13 3 300 20300101000000 20250101000000 4242 sec.test. $SIG" >/dev/null
knotc zone-commit sec.test >/dev/null
check "the IXFR with an RRSIG arrived (serial 9)" wait_for 10 serial_is "$CLIENT_NS" "$V4" sec.test 9
check "zone status: that IXFR was spliced, and why the patch declined ($(CTL --json zone status sec.test | grep -o '"last_ixfr_image":"[^"]*"'))" \
	/usr/bin/python3 -c "import json,sys; z=json.loads(sys.argv[1])['zone']; \
assert z['last_ixfr_image']=='spliced: zone sec.test. compiled alone (the patch declined: the zone\'s DNSSEC state \
changes (unsigned to signed: RRSIG records at h1.sec.test.))', z" \
	"$(CTL --json zone status sec.test)"
check "zone status counts it spliced, not compiled (ixfr_image $(CTL --json zone status sec.test | grep -o '"ixfr_image":{[^}]*}'))" \
	/usr/bin/python3 -c "import json,sys; c=json.loads(sys.argv[1])['zone']['ixfr_image']; \
assert c['spliced']==1 and c['compiled']==0 and 3 <= c['patched'] <= 7, c" \
	"$(CTL --json zone status sec.test)"
check "the log says the IXFR was spliced, and not that it was compiled in full" \
	sh -c "grep -q 'xfr: zone sec.test.: IXFR spliced into the image, compiled alone (the patch declined: ' $TMP/pop53d.log && \
	       ! grep -q 'xfr: zone sec.test.: IXFR compiled in full' $TMP/pop53d.log"
check "the RRSIG goes out with h1.sec.test A when DO=1" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=1 +dnssec @$V4 h1.sec.test A +noall +answer | tr -s ' \t' ' ' | \
	       grep -q '^h1.sec.test. 300 IN RRSIG A 13 3 300'"
check "the rest of the zone is served as before (cdn.sec.test -> edge.sec.test 192.0.2.44)" \
	sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 cdn.sec.test A | tr '\n' ' ')\" = 'edge.sec.test. 192.0.2.44 ' ]"
knotc zone-begin sec.test >/dev/null
knotc zone-unset sec.test h1 RRSIG >/dev/null
knotc zone-commit sec.test >/dev/null
check "the IXFR removing it arrived (serial 10)" wait_for 10 serial_is "$CLIENT_NS" "$V4" sec.test 10
check "no RRSIG goes out any more (spliced again)" \
	sh -c "! ip netns exec $CLIENT_NS kdig +time=1 +dnssec @$V4 h1.sec.test A +noall +answer | grep -q RRSIG && \
	       $BUILD/control/pop53ctl -s $TMP/control.sock --json zone status sec.test | grep -q '\"last_ixfr_image\":\"spliced: '"
check "zone status counts two IXFRs spliced, none compiled" \
	/usr/bin/python3 -c "import json,sys; c=json.loads(sys.argv[1])['zone']['ixfr_image']; \
assert c['spliced']==2 and c['compiled']==0, c" "$(CTL --json zone status sec.test)"
# xstat KEY: pop53ctl stats' xfr.KEY (a JSON object: result or way -> count).
xstat() { CTL --json stats | /usr/bin/python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)['stats']['xfr']['$1']))"; }
check "stats: xfr.ixfr_image counts the same IXFRs as sec.test's zone status ($(xstat ixfr_image))" \
	/usr/bin/python3 -c "import json,sys; s=json.loads(sys.argv[1]); z=json.loads(sys.argv[2])['zone']['ixfr_image']; \
assert s==z and s['spliced']==2, (s, z)" "$(xstat ixfr_image)" "$(CTL --json zone status sec.test)"
check "stats: xfr.applied counts the AXFR and every IXFR published, none failed ($(xstat applied))" \
	/usr/bin/python3 -c "import json,sys; a=json.loads(sys.argv[1]); i=json.loads(sys.argv[2]); \
assert a['failed']==0 and a['ok'] >= 1 + sum(i.values()), (a, i)" "$(xstat applied)" "$(xstat ixfr_image)"
CTL stats >"$TMP/stats_xfr.txt"
check "pop53ctl stats prints the secondary side's counters ($(grep '^xfr ixfr_image' "$TMP/stats_xfr.txt"))" \
	sh -c "grep -q '^xfr ixfr_image: .*spliced=2' $TMP/stats_xfr.txt && grep -q '^xfr applied: ok=[1-9].*failed=0' $TMP/stats_xfr.txt && \
	       grep -q '^xfr notify_in: ok=[1-9]' $TMP/stats_xfr.txt"
primary_records

# 4. pop53ctl zone refresh (up to date) and retransfer (AXFR).
CTL zone refresh sec.test >/dev/null
check "zone refresh: the SOA check finds the zone up to date" \
	wait_for 5 sh -c "$BUILD/control/pop53ctl -s $TMP/control.sock zone status sec.test | grep -q 'up to date at serial 10'"
CTL zone retransfer sec.test >/dev/null
check "zone retransfer: a full AXFR of serial 10" \
	wait_for 5 sh -c "$BUILD/control/pop53ctl -s $TMP/control.sock --json zone status sec.test | grep -q '\"type\":\"AXFR\",\"result\":\"AXFR to serial 10'"
# An AXFR of a zone already served is compiled alone, diffed against the image and patched
# in (control/zone/zone_repatch.c); it still serves exactly the primary's records.
check "the retransfer's AXFR was patched into the image ($(grep -o 'xfr: zone sec.test.: AXFR [^(]*' "$TMP/pop53d.log" | tail -1))" \
	wait_for 5 grep -q "xfr: zone sec.test.: AXFR patched into the image" "$TMP/pop53d.log"
: >"$TMP/pop.txt"
awk '{ print $1, $4 }' "$TMP/primary.txt" | sort -u | while read -r owner type; do
	kdig_section answer @"$V4" "$owner" "$type" >>"$TMP/pop.txt"
done
sort -u -o "$TMP/pop.txt" "$TMP/pop.txt"
check "after the patched AXFR pop53 serves exactly the primary's records" diff "$TMP/primary.txt" "$TMP/pop.txt"
st=$(CTL --json zone status sec.test)
check "zone status: the retransfer's AXFR counted patched, last_axfr_image patched, the IXFRs' as they were ($(echo "$st" | grep -o '"axfr_image":{[^}]*}'))" \
	/usr/bin/python3 -c "import json,sys; z=json.loads(sys.argv[1])['zone']; \
assert z['axfr_image']=={'patched':1,'spliced':1,'compiled':0} and z['last_axfr_image']=='patched' and \
z['ixfr_image']['spliced']==2 and z['last_ixfr_image'].startswith('spliced: '), z" "$st"
check "stats: xfr.axfr_image counts the same whole zones as sec.test's zone status ($(xstat axfr_image))" \
	/usr/bin/python3 -c "import json,sys; s=json.loads(sys.argv[1]); z=json.loads(sys.argv[2])['zone']; \
assert s==z['axfr_image'] and s['patched']==1, (s, z)" "$(xstat axfr_image)" "$st"
CTL zone status sec.test >"$TMP/status_human.txt"
CTL stats >"$TMP/stats_xfr.txt"
check "pop53ctl zone status prints each kind's way into the image ($(grep 'AXFRs into' "$TMP/status_human.txt"))" \
	sh -c "grep -qx '  AXFRs into the image: patched 1, spliced 1, compiled 0; last patched' $TMP/status_human.txt && \
	       grep -q '^  IXFRs into the image: patched [0-9]*, spliced 2, compiled 0; last spliced: ' $TMP/status_human.txt"
check "pop53ctl stats prints xfr axfr_image ($(grep '^xfr axfr_image' "$TMP/stats_xfr.txt"))" \
	sh -c "grep '^xfr axfr_image: ' $TMP/stats_xfr.txt | grep ' patched=1' | grep ' spliced=1' | grep -q ' compiled=0'"
ip netns exec "$POP_NS" curl -s --max-time 5 "http://$METRICS/metrics" | grep '^pop53_xfr_axfr_image_total' >"$TMP/metrics_axfr.txt"
check "metrics: pop53_xfr_axfr_image_total{way} as stats says ($(tr '\n' ' ' <"$TMP/metrics_axfr.txt"))" \
	sh -c "grep -qx 'pop53_xfr_axfr_image_total{way=\"patched\"} 1' $TMP/metrics_axfr.txt && \
	       grep -qx 'pop53_xfr_axfr_image_total{way=\"spliced\"} 1' $TMP/metrics_axfr.txt && \
	       grep -qx 'pop53_xfr_axfr_image_total{way=\"compiled\"} 0' $TMP/metrics_axfr.txt"
check "zone status of a zone that is not a secondary fails" sh -c "! $BUILD/control/pop53ctl -s $TMP/control.sock zone status example.com 2>/dev/null"

# 5. NOTIFY and TSIG, from the client namespace (through a worker) with dnspython.
cat >"$TMP/notify.py" <<'PY'
import sys
import dns.flags, dns.message, dns.opcode, dns.query, dns.rcode, dns.tsig, dns.tsigkeyring
server, zone, keyname, secret = sys.argv[1:5]
m = dns.message.make_query(zone, "SOA")
m.set_opcode(dns.opcode.NOTIFY)
m.flags &= ~dns.flags.RD
m.flags |= dns.flags.AA
if keyname != "-":
    m.use_tsig(dns.tsigkeyring.from_text({keyname: ("hmac-sha256", secret)}), keyname=keyname)
try:
    r = dns.query.udp(m, server, timeout=2, source_port=1053)
    print(dns.rcode.to_text(r.rcode()), "aa" if r.flags & dns.flags.AA else "-",
          "signed" if r.had_tsig else "unsigned", r.id == m.id and r.question == m.question)
except dns.tsig.PeerBadKey:
    print("BADKEY")
except dns.tsig.PeerBadSignature:
    print("BADSIG")
except dns.exception.Timeout:
    print("TIMEOUT")
PY
notify() { ip netns exec "$CLIENT_NS" /usr/bin/python3 "$TMP/notify.py" "$V4" "$@" 2>&1; }
BAD_SECRET="YmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkMTI="
nin() { xstat notify_in | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
nin_ok0=$(nin ok); nin_ref0=$(nin refused)
# open.test allows 192.0.2.0/24 unsigned: the client may notify it.
check "NOTIFY for open.test from an allowed prefix, unsigned: NOERROR, AA, same ID and question" \
	[ "$(notify open.test - -)" = "NOERROR aa unsigned True" ]
# sec.test allows only the primary, with xfr.key.
check "NOTIFY for sec.test from a stranger: NOTAUTH (as Knot)" [ "$(notify sec.test - -)" = "NOTAUTH aa unsigned True" ]
check "NOTIFY for an unknown zone: NOTAUTH from the worker" [ "$(notify nowhere.test - -)" = "NOTAUTH - unsigned True" ]
check "NOTIFY for a primary zone here: NOTAUTH from the worker" [ "$(notify example.com - -)" = "NOTAUTH - unsigned True" ]
check "NOTIFY for open.test signed with a key we do not have: BADKEY" [ "$(notify open.test nokey.key "$XFR_SECRET")" = BADKEY ]
check "NOTIFY for open.test signed with xfr.key but a wrong secret: BADSIG" [ "$(notify open.test xfr.key "$BAD_SECRET")" = BADSIG ]
check "NOTIFY for open.test signed with xfr.key: NOERROR, answer signed" \
	[ "$(notify open.test xfr.key "$XFR_SECRET")" = "NOERROR aa signed True" ]
check "refused NOTIFYs are logged with the reason" \
	sh -c "grep -q 'NOTIFY for sec.test. from 192.0.2.1 port 1053 refused.*sender not allowed' $TMP/pop53d.log && \
	       grep -q 'NOTIFY for open.test. from 192.0.2.1 port 1053 refused.*TSIG BADSIG' $TMP/pop53d.log"
# From the primary's address over UDP, signed: accepted (its ACL), through a worker.
out=$(ip netns exec "$PRIMARY_NS" /usr/bin/python3 "$TMP/notify.py" "$V4" sec.test xfr.key "$XFR_SECRET" 2>&1)
check "NOTIFY for sec.test from the primary over UDP, signed: NOERROR signed ($out)" [ "$out" = "NOERROR aa signed True" ]
out=$(ip netns exec "$PRIMARY_NS" /usr/bin/python3 "$TMP/notify.py" "$V4" sec.test - - 2>&1)
check "NOTIFY for sec.test from the primary, unsigned: NOTAUTH (the ACL wants xfr.key)" [ "$out" = "NOTAUTH aa unsigned True" ]
check "stats: xfr.notify_in counts the 4 NOTIFYs refused here and the 3 accepted ($nin_ref0/$nin_ok0 -> $(nin refused)/$(nin ok))" \
	sh -c "[ $(nin refused) -ge $((nin_ref0 + 4)) ] && [ $(nin ok) -ge $((nin_ok0 + 3)) ]"

# 6. Requests signed with a key knotd has under another secret: knotd answers BADSIG, pop53
# has no data for bad.test; and knotd's NOTIFY for it (signed with xfr.key, which bad.test's
# ACL does not take) is refused with BADKEY.
check "bad.test: knotd refuses our SOA query (TSIG BADSIG), as zone status says" \
	wait_for 10 sh -c "$BUILD/control/pop53ctl -s $TMP/control.sock zone status bad.test | grep -q 'failed:.*SOA query: NOTAUTH, TSIG BADSIG: the primary does not accept key wrong.key.'"
check "bad.test: no data, answered SERVFAIL" [ "$(dig_rcode www.bad.test A)" = SERVFAIL ]
knotc zone-begin bad.test >/dev/null; knotc zone-set bad.test x 300 A 192.0.2.1 >/dev/null; knotc zone-commit bad.test >/dev/null
check "knotd's NOTIFY for bad.test (key xfr.key, not bad.test's) is refused: BADKEY" \
	wait_for 5 sh -c "grep -q 'NOTIFY for bad.test. from $PRIMARY_V4 port [0-9]* refused.*TSIG BADKEY' $TMP/pop53d.log"
check "knotd sees the refusal" wait_for 5 sh -c "grep 'bad.test.*notify, outgoing' $KNOT_DIR/knotd.log | tail -1 | grep -q -i 'badkey\|notauth\|error'"
check "no disk copy for bad.test" [ ! -e "$TMP/xfr/bad.test.zone" ]

# 7. A clean stop with the transfer threads running.
stop_pop53
check "pop53d stops cleanly (exit 0, no mbuf leak)" sh -c "grep -q 'no leak' $TMP/pop53d.log"

finish
