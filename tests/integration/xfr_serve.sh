#!/usr/bin/env bash
# pop53d serving AXFR and IXFR (tiered distribution): pop53d is a secondary of a hidden
# primary (knotd, tests/integration/xfr_lib.sh) and serves its zones onwards over TCP to
# allowed clients. kdig from the lab client: AXFR equal to the primary's, IXFR with the
# differences pop53 applied, the single SOA when up to date; refused outside the ACL
# (REFUSED), without the zone's key (REFUSED), with a wrong secret (NOTAUTH, TSIG BADSIG);
# AXFR/IXFR over UDP answered as before. Then a second knotd (a lower tier, in the primary's
# namespace on its own address) is a secondary of pop53d and serves the primary's new serial
# after a change made at the hidden primary.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfr_lib.sh"

TIER_DIR=
TIER_V4=198.51.100.3
tierc() { ip netns exec "$PRIMARY_NS" /usr/sbin/knotc -c "$TIER_DIR/knot.conf" -s "$TIER_DIR/knot.sock" "$@"; }
cleanup() {
	[ -z "$TIER_DIR" ] || [ ! -S "$TIER_DIR/knot.sock" ] || tierc stop >/dev/null 2>&1 || true
	stop_pop53 >/dev/null 2>&1 || true
	primary_down
	cleanup_common
}
trap cleanup EXIT
lab_lock

"$SRC/scripts/lab.sh" up >/dev/null
primary_up
knotd_conf sec.test sig.test
ZONE_REFRESH=2 knot_zone sec.test 1 "old IN A 192.0.2.7" "mx IN MX 10 www.sec.test." "txt IN TXT \"hello world\""
ZONE_REFRESH=2 knot_zone sig.test 1 "a IN A 192.0.2.8"
knotd_start || { not_ok "knotd starts"; finish; exit 1; }

xfr_config "$TMP/pop53.yaml" "  - name: sec.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
    transfer: {allow: [192.0.2.1/32, \"2001:db8:53::1/128\"]}
  - name: sig.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
    transfer: {allow: [192.0.2.0/24, 198.51.100.0/24], key: xfr.key}"
start_pop53_answering "$TMP/pop53.yaml"
check "both zones transferred from the primary" \
	wait_for 10 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 a.sig.test A)\" = 192.0.2.8 ] && \
	                   [ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 www.sec.test A)\" = 192.0.2.80 ]"

KEY="hmac-sha256:xfr.key:$XFR_SECRET"
BAD="hmac-sha256:xfr.key:YmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkMTI="
# axfr NS ARGS...: the records of a transfer, TSIG left out, one per line, normalised.
records() { awk '$0 !~ /^;/ && NF >= 5 && $4 != "TSIG" { $1 = tolower($1); print }' | sort; }
status() { sed -n 's/.*status: \([A-Z]*\).*/\1/p' | head -1; }

# 1. AXFR, unsigned where the ACL takes no key: the primary's zone, record for record.
ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 @"$V4" sec.test AXFR >"$TMP/pop_axfr.txt" 2>&1
ip netns exec "$PRIMARY_NS" kdig +time=2 -y "$KEY" @"$PRIMARY_V4" sec.test AXFR 2>&1 | records >"$TMP/knot_axfr.txt"
records <"$TMP/pop_axfr.txt" >"$TMP/pop_axfr.sorted"
check "AXFR of sec.test from pop53 equals the primary's ($(wc -l <"$TMP/knot_axfr.txt") records)" \
	sh -c "[ \$(wc -l <$TMP/knot_axfr.txt) -ge 6 ] && diff $TMP/knot_axfr.txt $TMP/pop_axfr.sorted"
check "the AXFR starts and ends with the SOA" \
	sh -c "awk '\$0 !~ /^;/ && NF >= 5' $TMP/pop_axfr.txt | sed -n '1p;\$p' | awk '\$4 == \"SOA\"' | wc -l | grep -qx 2"
check "AXFR over IPv6 from an allowed address" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=2 @$V6 sec.test AXFR | records | diff - $TMP/knot_axfr.txt"

# 2. Refusals.
out=$(ip netns exec "$PRIMARY_NS" kdig +time=2 +retry=0 @"$V4" sec.test AXFR 2>&1)
check "AXFR from outside the ACL: REFUSED" sh -c "echo '$out' | grep -q 'REFUSED'"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 @"$V4" sig.test AXFR 2>&1)
check "AXFR of sig.test unsigned (its ACL wants xfr.key): REFUSED" sh -c "echo '$out' | grep -q 'REFUSED'"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 -y "$BAD" @"$V4" sig.test AXFR 2>&1)
check "AXFR of sig.test with a wrong secret: NOTAUTH, TSIG BADSIG ($(echo "$out" | grep -o 'NOTAUTH\|BADSIG' | sort -u | tr '\n' ' '))" \
	sh -c "echo '$out' | grep -q NOTAUTH && echo '$out' | grep -q BADSIG"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 -y hmac-sha256:nokey.:"$XFR_SECRET" @"$V4" sig.test AXFR 2>&1)
check "AXFR signed with an unknown key: NOTAUTH, BADKEY" sh -c "echo '$out' | grep -q NOTAUTH && echo '$out' | grep -q BADKEY"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 @"$V4" nowhere.test AXFR 2>&1)
check "AXFR of a zone we do not have: NOTAUTH" sh -c "echo '$out' | grep -q NOTAUTH"

# 3. Signed AXFR: kdig verifies every message's TSIG (it fails the transfer otherwise).
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 -y "$KEY" @"$V4" sig.test AXFR 2>&1)
check "signed AXFR of sig.test: verified by kdig, equal to the primary's" \
	sh -c "echo '$out' | records | diff - <(ip netns exec $PRIMARY_NS kdig +time=2 -y '$KEY' @$PRIMARY_V4 sig.test AXFR | records) && \
	       ! echo '$out' | grep -qi 'failed\|error\|bad'"

# 4. UDP stays as before (no transfer over UDP).
check "AXFR over UDP: NOTIMP, as before" \
	[ "$(ip netns exec "$CLIENT_NS" kdig +notcp +time=1 @"$V4" sec.test AXFR 2>&1 | status)" = NOTIMP ]

# 5. Changes at the primary reach pop53 by IXFR; pop53 then serves IXFR from its journal.
for i in 1 2 3; do
	knotc zone-begin sec.test >/dev/null
	knotc zone-set sec.test "n$i" 300 A "192.0.2.$((10 + i))" >/dev/null
	[ "$i" -ne 2 ] || knotc zone-unset sec.test old A >/dev/null
	knotc zone-commit sec.test >/dev/null
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 sec.test SOA | grep -q ' $((1 + i)) '"
done
check "pop53 applied the 3 changes by IXFR (serial 4)" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 sec.test SOA | grep -q ' 4 ' && grep -q 'IXFR to serial 4' $TMP/pop53d.log"
ip netns exec "$CLIENT_NS" kdig +time=2 @"$V4" sec.test IXFR=1 >"$TMP/ixfr.txt" 2>&1
ip netns exec "$PRIMARY_NS" kdig +time=2 -y "$KEY" @"$PRIMARY_V4" sec.test IXFR=1 2>&1 | records >"$TMP/knot_ixfr.txt"
check "IXFR from serial 1: the differences (3 steps, as the primary sends them)" \
	sh -c "records <$TMP/ixfr.txt | diff - $TMP/knot_ixfr.txt && grep -c 'SOA' $TMP/ixfr.txt | grep -qx 8"
check "pop53 logged an IXFR with differences" grep -q "IXFR of sec.test. serial 4 (differences) to 192.0.2.1" "$TMP/pop53d.log"
check "IXFR from the current serial: the single SOA" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=2 @$V4 sec.test IXFR=4 | awk '\$0 !~ /^;/ && NF >= 5' | awk '\$4 == \"SOA\"' | wc -l | grep -qx 1"
check "IXFR from a serial not in the journal: the whole zone (AXFR-in-IXFR)" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=2 @$V4 sec.test IXFR=100000 | records | diff - <(ip netns exec $PRIMARY_NS kdig +time=2 -y '$KEY' @$PRIMARY_V4 sec.test AXFR | records)"

# 6. Tiered distribution: a second knotd, secondary of pop53 for sig.test with xfr.key.
TIER_DIR=$TMP/tier
mkdir -p "$TIER_DIR/db"
ip -n "$PRIMARY_NS" addr add "$TIER_V4/24" dev p53r
cat >"$TIER_DIR/knot.conf" <<EOF2
server:
  rundir: $TIER_DIR
  listen: [$TIER_V4@53]
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
log:
  - target: $TIER_DIR/knotd.log
    any: info
key:
  - id: xfr.key
    algorithm: hmac-sha256
    secret: $XFR_SECRET
remote:
  - id: pop
    address: $V4@53
    via: $TIER_V4
    key: xfr.key
acl:
  - id: from_pop
    address: [$V4]
    action: notify
database:
  storage: $TIER_DIR/db
zone:
  - domain: sig.test
    storage: $TIER_DIR
    master: pop
    acl: from_pop
    zonefile-sync: -1
    semantic-checks: off
EOF2
ip netns exec "$PRIMARY_NS" knotd -c "$TIER_DIR/knot.conf" -d
check "the lower-tier knotd transfers sig.test from pop53 (serial 1)" \
	wait_for 10 sh -c "ip netns exec $PRIMARY_NS kdig +time=1 +short @$TIER_V4 sig.test SOA | grep -q ' 1 '"
knotc zone-begin sig.test >/dev/null
knotc zone-set sig.test b 300 A 192.0.2.9 >/dev/null
knotc zone-commit sig.test >/dev/null
check "a change at the hidden primary reaches pop53 (serial 2)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 sig.test SOA | grep -q ' 2 '"
tierc zone-refresh sig.test >/dev/null 2>&1 || true
check "...and the lower tier serves serial 2 and the new record, through pop53" \
	wait_for 10 sh -c "ip netns exec $PRIMARY_NS kdig +time=1 +short @$TIER_V4 sig.test SOA | grep -q ' 2 ' && \
	                   [ \"\$(ip netns exec $PRIMARY_NS kdig +time=1 +short @$TIER_V4 b.sig.test A)\" = 192.0.2.9 ]"
check "the lower tier's transfers from pop53 were TSIG-signed (pop53 log)" \
	grep -q "xfr: [AI]XFR of sig.test. serial [12].* to $PRIMARY_V4 (TSIG)\|xfr: [AI]XFR of sig.test. serial [12].* to $TIER_V4 (TSIG)" "$TMP/pop53d.log"
tierc stop >/dev/null 2>&1 || true

stop_pop53
check "pop53d stops cleanly (exit 0, no mbuf leak)" sh -c "grep -q 'no leak' $TMP/pop53d.log"
finish
