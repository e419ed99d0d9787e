#!/usr/bin/env bash
# A primary outage up to SOA EXPIRE (RFC 1035 §4.3.5), and restarts from the disk copy.
#
# Three secondary zones with SOA refresh 2 s, retry 1 s, expire 6 s, one per on_expire
# behaviour (servfail, refuse, keep), and rst.test with a long expire. knotd stops: the zones
# are served until they expire, then answer SERVFAIL / REFUSED / still NOERROR (keep), and
# zone status says expired (the health check's seam, p53_xfr_zone_expired). knotd comes back:
# they are transferred again. Then pop53d restarts with knotd down: rst.test is served at once
# from its disk copy, before any primary answers (there is none); exp.test's disk copy is
# older than its expire and is not served. knotd back: refreshed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfr_lib.sh"

xfr_begin

xfr_lab_up
knotd_conf exp.test ref.test keep.test rst.test
for z in exp.test ref.test keep.test; do
	ZONE_REFRESH=2 ZONE_RETRY=1 ZONE_EXPIRE=6 knot_zone "$z" 1
done
ZONE_REFRESH=2 ZONE_RETRY=1 knot_zone rst.test 1 "disk IN TXT \"from the disk copy\""
knotd_up

XFR_TIMEOUT_MS=500 xfr_config "$TMP/pop53.yaml" "  - name: exp.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
  - name: ref.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
    on_expire: refuse
  - name: keep.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
    on_expire: keep
  - name: rst.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]"
start_pop53_answering "$TMP/pop53.yaml"
expired() { CTL --json zone status "$1" | grep -q '"expired":true'; }
state() { CTL --json zone status "$1" | sed -n 's/.*"state":"\([a-z ]*\)".*/\1/p'; }
rcode_is() { [ "$(dig_rcode "$1" A)" = "$2" ]; }
a_is() { [ "$(dig_rr "$1")" = "$2" ]; }
status_has() { CTL zone status "$1" | grep -q "$2"; }
for z in exp.test ref.test keep.test rst.test; do
	check "$z transferred" wait_for 10 a_is "www.$z" 192.0.2.80
done

# The outage.
knotd_stop
t0=$(date +%s)
sleep 2
check "2 s into the outage, exp.test is still served" [ "$(dig_rcode www.exp.test A)" = NOERROR ]
check "2 s into the outage, zone status is still loaded" [ "$(state exp.test)" = loaded ]
check "refreshes fail meanwhile, and zone status says why" status_has exp.test 'failed: 198.51.100.2:53: SOA query'
check "exp.test expires: SERVFAIL" wait_for 10 rcode_is www.exp.test SERVFAIL
el=$(( $(date +%s) - t0 ))
check "it expired about 6 s after its last refresh (${el} s into the outage, at most 9)" [ "$el" -le 9 ]
check "ref.test expires: REFUSED (on_expire: refuse)" wait_for 5 rcode_is www.ref.test REFUSED
check "keep.test is still answered after its expire (on_expire: keep)" [ "$(dig_rr www.keep.test)" = 192.0.2.80 ]
check "zone status: exp.test expired" wait_for 5 expired exp.test
check "zone status: ref.test expired" wait_for 5 expired ref.test
check "zone status: keep.test expired (still served)" wait_for 5 expired keep.test
check "zone status: rst.test (long expire) not expired" [ "$(state rst.test)" = loaded ]
check "the expiry is logged" grep -q "zone exp.test.: expired: no primary confirmed serial 1 for 6 s (SOA EXPIRE); answering SERVFAIL" "$TMP/pop53d.log"
check "the other zones still answer (example.com)" [ "$(dig_rcode www.example.com A)" = NOERROR ]

# The primary comes back: the expired zones are transferred again.
knotd_start || not_ok "knotd restarts"
check "exp.test served again after the primary is back" wait_for 10 a_is www.exp.test 192.0.2.80
check "ref.test served again" wait_for 10 a_is www.ref.test 192.0.2.80
check "keep.test no longer expired (its serial confirmed)" wait_for 10 status_has keep.test "keep.test.: loaded"

# Restart with the primary down: the last good version is served at once.
knotd_stop
stop_pop53
check "pop53d stopped cleanly" grep -q "no leak" "$TMP/pop53d.log"
sleep 7 # exp.test's disk copy is now older than its 6 s expire; rst.test's is not
start_pop53 "$TMP/pop53.yaml"
check "after a restart with the primary down, rst.test answers from its disk copy" \
	wait_for 20 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 disk.rst.test TXT 2>/dev/null)\" = '\"from the disk copy\"' ]"
check "it was served from the disk copy before any refresh (the primary is down)" \
	sh -c "grep -q 'zone rst.test.: serving serial 1 from its disk copy' $TMP/pop53d.log && \
	       ! grep -q 'zone rst.test.: \(IXFR\|AXFR\)' $TMP/pop53d.log"
check "exp.test's expired disk copy is not served: SERVFAIL" rcode_is www.exp.test SERVFAIL
check "zone status says exp.test expired after the restart" wait_for 5 expired exp.test
knotd_start || not_ok "knotd restarts"
check "rst.test refreshed from the primary once it is back" wait_for 10 status_has rst.test 'up to date at serial 1'
check "exp.test transferred again" wait_for 10 a_is www.exp.test 192.0.2.80

finish
