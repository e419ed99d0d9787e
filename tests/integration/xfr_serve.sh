#!/usr/bin/env bash
# pop53d serving AXFR and IXFR (tiered distribution): pop53d is a secondary of a hidden
# primary (knotd, tests/integration/xfr_lib.sh) and serves its zones onwards over TCP to
# allowed clients. kdig from the lab client: AXFR equal to the primary's, IXFR with the
# differences pop53 applied, the single SOA when up to date; refused outside the ACL
# (REFUSED), without the zone's key (REFUSED), with a wrong secret (NOTAUTH, TSIG BADSIG), an
# unknown key (NOTAUTH, TSIG BADKEY); a signed SOA query over TCP answered signed, and over UDP
# too (the worker hands it to the control thread, which holds the keys); AXFR over UDP NOTIMP
# as before; the transfer counters (stats xfr.served) by outcome. Then a second knotd (a lower tier, in the primary's namespace on its own
# address) is a secondary of pop53d and serves the primary's new serial after a change made at
# the hidden primary without its own refresh timer (refresh-min-interval 3600 s): pop53
# NOTIFYs it (notify_to, signed with xfr.key), it checks the SOA (signed, over TCP) and takes an
# IXFR from pop53's journal. The NOTIFY counters (stats) say sent and acked.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfr_lib.sh"

xfr_begin

xfr_lab_up
knotd_conf sec.test sig.test
ZONE_REFRESH=2 knot_zone sec.test 1 "old IN A 192.0.2.7" "mx IN MX 10 www.sec.test." "txt IN TXT \"hello world\""
ZONE_REFRESH=2 knot_zone sig.test 1 "a IN A 192.0.2.8"
knotd_up

# prim.test: a primary zone of pop53 (a file), fed to the lower tier as well.
prim_zone() {
	cat >"$TMP/prim.test.zone" <<EOF2
\$ORIGIN prim.test.
\$TTL 300
@ IN SOA ns.prim.test. h.prim.test. $1 3600 600 86400 300
@ IN NS ns.prim.test.
ns IN A 192.0.2.53
v IN TXT "v$1"
EOF2
}
prim_zone 1
xfr_config "$TMP/pop53.yaml" "  - name: prim.test
    file: $TMP/prim.test.zone
    transfer: {allow: [198.51.100.0/24], key: xfr.key}
    notify_to: [{address: $TIER_V4, key: xfr.key}]
  - name: sec.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
    transfer: {allow: [192.0.2.1/32, \"2001:db8:53::1/128\"]}
    notify_to: [{address: $PRIMARY_V4}]
  - name: sig.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
    transfer: {allow: [192.0.2.0/24, 198.51.100.0/24], key: xfr.key}
    notify_to: [{address: $TIER_V4, key: xfr.key}]"
start_pop53_answering "$TMP/pop53.yaml"
check "both zones transferred from the primary" \
	wait_for 10 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 a.sig.test A)\" = 192.0.2.8 ] && \
	                   [ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 www.sec.test A)\" = 192.0.2.80 ]"

# served: pop53's transfer counters (stats xfr.served by result, and xfr.served_bytes) as JSON.
served() {
	CTL --json stats | /usr/bin/python3 -c "import json,sys; x = json.load(sys.stdin)['stats']['xfr']
x['served']['bytes'] = x['served_bytes']; print(json.dumps(x['served']))"
}
served >"$TMP/served0.json"

KEY="hmac-sha256:xfr.key:$XFR_SECRET"
BAD="hmac-sha256:xfr.key:YmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkYmFkMTI="
# axfr NS ARGS...: the records of a transfer, TSIG left out, one per line, normalised.
records() { awk '$0 !~ /^;/ && NF >= 5 && $4 != "TSIG" { $1 = tolower($1); print }' | sort; }
# answer KEY QTYPE ZONE: "RCODE TSIG-ERROR" of pop53's answer over TCP to a request signed with
# KEY (hmac-sha256:name:secret), read from the wire: kdig reports only the TSIG error when the
# answer's signature does not verify, and dnspython refuses to parse it.
answer() {
	ip netns exec "$CLIENT_NS" /usr/bin/python3 - "$V4" "$@" <<'PY'
import socket, struct, sys
import dns.message, dns.rcode, dns.tsig, dns.tsigkeyring
server, key, qtype, zone = sys.argv[1:5]
_, name, secret = key.split(":")
q = dns.message.make_query(zone, qtype)
q.use_tsig(dns.tsigkeyring.from_text({name: secret}), name, algorithm=dns.tsig.HMAC_SHA256)
w = q.to_wire()
s = socket.create_connection((server, 53), timeout=2)
s.sendall(struct.pack("!H", len(w)) + w)
buf = b""
while len(buf) < 2 or len(buf) < 2 + struct.unpack("!H", buf[:2])[0]:
    chunk = s.recv(65535)
    if not chunk:
        break
    buf += chunk
r = buf[2:]
# The TSIG record is the message's last; its RDATA ends with original ID, error, other length.
err = struct.unpack("!H", r[-4:-2])[0] if struct.unpack("!H", r[10:12])[0] and r[-2:] == b"\0\0" else 0
print(dns.rcode.to_text(r[3] & 15), {16: "BADSIG", 17: "BADKEY", 18: "BADTIME"}.get(err, str(err)))
PY
}

# 1. AXFR, unsigned where the ACL takes no key: the primary's zone, record for record.
ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 @"$V4" sec.test AXFR >"$TMP/pop_axfr.txt" 2>&1
ip netns exec "$PRIMARY_NS" kdig +time=2 -y "$KEY" @"$PRIMARY_V4" sec.test AXFR 2>&1 | records >"$TMP/knot_axfr.txt"
records <"$TMP/pop_axfr.txt" >"$TMP/pop_axfr.sorted"
check "AXFR of sec.test from pop53 equals the primary's ($(wc -l <"$TMP/knot_axfr.txt") records)" \
	sh -c "[ \$(wc -l <$TMP/knot_axfr.txt) -ge 6 ] && diff $TMP/knot_axfr.txt $TMP/pop_axfr.sorted"
check "the AXFR starts and ends with the SOA" \
	sh -c "awk '\$0 !~ /^;/ && NF >= 5' $TMP/pop_axfr.txt | sed -n '1p;\$p' | awk '\$4 == \"SOA\"' | wc -l | grep -qx 2"
axfr_v6() { ip netns exec "$CLIENT_NS" kdig +time=2 @"$V6" sec.test AXFR | records | diff - "$TMP/knot_axfr.txt"; }
check "AXFR over IPv6 from an allowed address" axfr_v6

# 2. Refusals.
out=$(ip netns exec "$PRIMARY_NS" kdig +time=2 +retry=0 @"$V4" sec.test AXFR 2>&1)
check "AXFR from outside the ACL: REFUSED" sh -c "echo '$out' | grep -q 'REFUSED'"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 @"$V4" sig.test AXFR 2>&1)
check "AXFR of sig.test unsigned (its ACL wants xfr.key): REFUSED" sh -c "echo '$out' | grep -q 'REFUSED'"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 -y "$BAD" @"$V4" sig.test AXFR 2>&1)
check "AXFR of sig.test with a wrong secret: kdig reports BADSIG" grep -q "error 'BADSIG'" <<<"$out"
check "...on the wire: NOTAUTH, TSIG error BADSIG ($(answer "$BAD" AXFR sig.test))" \
	[ "$(answer "$BAD" AXFR sig.test)" = "NOTAUTH BADSIG" ]
NOKEY=hmac-sha256:nokey.:$XFR_SECRET
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 -y "$NOKEY" @"$V4" sig.test AXFR 2>&1)
check "AXFR signed with an unknown key: kdig reports BADKEY" grep -q "error 'BADKEY'" <<<"$out"
check "...on the wire: NOTAUTH, TSIG error BADKEY ($(answer "$NOKEY" AXFR sig.test))" \
	[ "$(answer "$NOKEY" AXFR sig.test)" = "NOTAUTH BADKEY" ]
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 @"$V4" nowhere.test AXFR 2>&1)
check "AXFR of a zone we do not have: NOTAUTH" sh -c "echo '$out' | grep -q NOTAUTH"

# 3. Signed AXFR: kdig verifies every message's TSIG (it fails the transfer otherwise).
signed_axfr() {
	local out
	out=$(ip netns exec "$CLIENT_NS" kdig +time=2 -y "$KEY" @"$V4" sig.test AXFR 2>&1) || return 1
	! echo "$out" | grep -q '^;; \(ERROR\|WARNING\)' &&
		echo "$out" | records | diff - <(ip netns exec "$PRIMARY_NS" kdig +time=2 -y "$KEY" @"$PRIMARY_V4" sig.test AXFR | records)
}
check "signed AXFR of sig.test: verified by kdig, equal to the primary's" signed_axfr
# Regression: the TCP threads answered every signed query BADKEY, a downstream knotd's SOA
# check too (its refresh failed "failed to verify TSIG").
signed_soa() {
	local out
	out=$(ip netns exec "$CLIENT_NS" kdig +tcp +time=2 -y "$KEY" @"$V4" sig.test SOA 2>&1) || return 1
	! echo "$out" | grep -q '^;; \(ERROR\|WARNING\)' && echo "$out" | grep -q 'status: NOERROR' &&
		echo "$out" | awk '$4 == "SOA"' | grep -q ' 1 2 600'
}
check "signed SOA query over TCP: NOERROR, the SOA, signed answer verified by kdig" signed_soa
# A signed SOA query over UDP (BIND's and NSD's refresh check): the worker hands it to the
# control thread, which holds the transfer keys and answers it signed.
signed_soa_udp() {
	local out
	out=$(ip netns exec "$CLIENT_NS" kdig +notcp +time=2 +retry=0 -y "$KEY" @"$V4" sig.test SOA 2>&1) || return 1
	! echo "$out" | grep -q '^;; \(ERROR\|WARNING\)' && echo "$out" | grep -q 'status: NOERROR' &&
		echo "$out" | grep -q '(UDP)' && echo "$out" | awk '$4 == "SOA"' | grep -q ' 1 2 600'
}
check "signed SOA query over UDP: NOERROR, the SOA, signed answer verified by kdig" signed_soa_udp
out=$(ip netns exec "$CLIENT_NS" kdig +notcp +time=2 +retry=0 -y "$BAD" @"$V4" sig.test SOA 2>&1)
check "...with a wrong secret: NOTAUTH with TSIG error BADSIG (kdig: status BADSIG)" grep -q "status: BADSIG" <<<"$out"
out=$(ip netns exec "$PRIMARY_NS" kdig +notcp +time=2 +retry=0 -y "$KEY" @"$V4" sec.test SOA 2>&1)
check "signed SOA over UDP for sec.test (its transfers take no key): BADKEY from the worker, as before" \
	grep -q "status: BADKEY" <<<"$out"
check "unsigned SOA over UDP for sig.test: answered by the worker" \
	sh -c "ip netns exec $CLIENT_NS kdig +notcp +time=1 +retry=0 +short @$V4 sig.test SOA | grep -q ' 1 2 600'"
# 4. UDP stays as before (no transfer over UDP).
# kdig names RCODE 4 NOTIMPL.
check "AXFR over UDP: NOTIMP, as before" \
	sh -c "ip netns exec $CLIENT_NS kdig +notcp +time=1 +retry=0 @$V4 sec.test AXFR 2>&1 | grep -q \"error 'NOTIMPL'\""

# 5. Changes at the primary reach pop53 by IXFR; pop53 then serves IXFR from its journal.
for i in 1 2 3; do
	knotc zone-begin sec.test >/dev/null
	knotc zone-set sec.test "n$i" 300 A "192.0.2.$((10 + i))" >/dev/null
	[ "$i" -ne 2 ] || knotc zone-unset sec.test old A >/dev/null
	knotc zone-commit sec.test >/dev/null
	check "pop53 serves serial $((1 + i))" wait_for 5 serial_is "$CLIENT_NS" "$V4" sec.test $((1 + i))
done
check "pop53 applied the 3 changes by IXFR (serial 4)" \
	sh -c "grep -q 'IXFR to serial 2' $TMP/pop53d.log && grep -q 'IXFR to serial 3' $TMP/pop53d.log && grep -q 'IXFR to serial 4' $TMP/pop53d.log"
ip netns exec "$CLIENT_NS" kdig +time=2 @"$V4" sec.test IXFR=1 >"$TMP/ixfr.txt" 2>&1
ip netns exec "$PRIMARY_NS" kdig +time=2 -y "$KEY" @"$PRIMARY_V4" sec.test IXFR=1 2>&1 | records >"$TMP/knot_ixfr.txt"
ixfr_from_1() { records <"$TMP/ixfr.txt" | diff - "$TMP/knot_ixfr.txt" && [ "$(grep -c 'SOA' "$TMP/ixfr.txt")" -eq 8 ]; }
check "IXFR from serial 1: the differences (3 steps, as the primary sends them)" ixfr_from_1
# sec.test NOTIFYs the hidden primary itself, unsigned: knotd takes no NOTIFY for a zone it is
# the primary of and says so; pop53 does not send that one again.
check "a NOTIFY answered with an error RCODE is given up at once (logged)" \
	wait_for 5 grep -q "NOTIFY for sec.test. serial 4 to $PRIMARY_V4:53: answered [A-Z]*; not sent again" "$TMP/pop53d.log"
check "pop53 logged an IXFR with differences" grep -q "IXFR of sec.test. serial 4 (differences) to 192.0.2.1" "$TMP/pop53d.log"
check "IXFR from the current serial: the single SOA" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=2 @$V4 sec.test IXFR=4 | awk '\$0 !~ /^;/ && NF >= 5' | awk '\$4 == \"SOA\"' | wc -l | grep -qx 1"
axfr_in_ixfr() {
	ip netns exec "$CLIENT_NS" kdig +time=2 @"$V4" sec.test IXFR=0 | records |
		diff - <(ip netns exec "$PRIMARY_NS" kdig +time=2 -y "$KEY" @"$PRIMARY_V4" sec.test AXFR | records)
}
check "IXFR from a serial not in the journal: the whole zone (AXFR-in-IXFR)" axfr_in_ixfr

# The transfer counters, for what sections 1-5 asked of pop53 over TCP: 3 AXFRs (v4, v6,
# signed), 3 IXFRs (differences, up to date, whole zone); REFUSED twice (ACL), TSIG errors
# 6 times (kdig and answer() twice each for BADSIG and BADKEY), NOTAUTH once (not our zone);
# the signed SOA query is not a transfer. Bytes: at least the two unsigned AXFRs of sec.test.
axfr_bytes=$(sed -n 's/^;; Received \([0-9]*\) B.*/\1/p' "$TMP/pop_axfr.txt" | head -1)
served >"$TMP/served1.json"
served_diff() {
	/usr/bin/python3 - "$TMP/served0.json" "$TMP/served1.json" "${axfr_bytes:-0}" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
d = {k: b[k] - a[k] for k in b}
want = {"axfr": 3, "ixfr": 1, "ixfr_uptodate": 1, "ixfr_axfr": 1, "refused_acl": 2,
        "refused_tsig": 6, "notauth": 1, "nodata": 0, "formerr": 0, "aborted": 0}
got = {k: v for k, v in d.items() if k != "bytes"}
print(got, "bytes", d["bytes"], file=sys.stderr)
sys.exit(0 if got == want and int(sys.argv[3]) > 0 and d["bytes"] >= 2 * int(sys.argv[3]) else 1)
PY
}
check "stats xfr.served counts each transfer by outcome, and the bytes sent" served_diff
CTL stats >"$TMP/stats.txt"
check "pop53ctl stats (text) shows the transfer counters" \
	sh -c "grep -q '^xfr served: axfr=[1-9]' $TMP/stats.txt && grep -q '^xfr notify_out: sent=' $TMP/stats.txt"

# 6. Tiered distribution: a second knotd, secondary of pop53 for sig.test with xfr.key.
tier_up "acl:
  - id: from_pop
    address: [$V4]
    key: xfr.key
    action: notify
zone:
  - domain: sig.test
    storage: $TIER_DIR
    master: pop
    acl: from_pop
    zonefile-sync: -1
    semantic-checks: off
    refresh-min-interval: 3600
    retry-min-interval: 3600
  - domain: prim.test
    storage: $TIER_DIR
    master: pop
    acl: from_pop
    zonefile-sync: -1
    refresh-min-interval: 3600
    retry-min-interval: 3600"
check "the lower-tier knotd transfers sig.test from pop53 (serial 1)" \
	wait_for 10 serial_is "$PRIMARY_NS" "$TIER_V4" sig.test 1
# notify_out RESULT: pop53's count of NOTIFYs sent downstream with that result (stats).
notify_out() {
	"$BUILD/control/pop53ctl" -s "$TMP/control.sock" --json stats |
		/usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['stats']['xfr']['notify_out']['$1'])"
}
# The NOTIFY of serial 1 went out before the lower tier existed: let its tries end (answered
# by a retry, or given up after 5 tries in 31 s) so that the counts below are serial 2's.
nout_idle() { [ "$(notify_out sent)" -eq $(($(notify_out acked) + $(notify_out failed))) ]; }
wait_for 35 nout_idle
acked0=$(notify_out acked)
sent0=$(notify_out sent)
knotc zone-begin sig.test >/dev/null
knotc zone-set sig.test b 300 A 192.0.2.9 >/dev/null
knotc zone-commit sig.test >/dev/null
check "a change at the hidden primary reaches pop53 (serial 2)" \
	wait_for 5 serial_is "$CLIENT_NS" "$V4" sig.test 2
# No `knotc zone-refresh` and no refresh timer: only pop53's NOTIFY tells the lower tier.
tier_has_b() {
	serial_is "$PRIMARY_NS" "$TIER_V4" sig.test 2 &&
		[ "$(ip netns exec "$PRIMARY_NS" kdig +time=1 +short @"$TIER_V4" b.sig.test A)" = 192.0.2.9 ]
}
check "...and the lower tier serves serial 2 and the new record within 5 s, notified by pop53" \
	wait_for 5 tier_has_b
check "stats: xfr.notify_out sent and acked each grew by 1 ($sent0/$acked0 -> $(notify_out sent)/$(notify_out acked))" \
	sh -c "[ $(notify_out sent) -eq $((sent0 + 1)) ] && [ $(notify_out acked) -eq $((acked0 + 1)) ]"
check "stats: xfr.notify_out failed counts sec.test's refused NOTIFYs ($(notify_out failed))" \
	[ "$(notify_out failed)" -ge 1 ]
# A primary zone of pop53: its file changed and reloaded, the lower tier is NOTIFYed.
check "the lower tier has pop53's primary zone prim.test (serial 1)" \
	wait_for 10 serial_is "$PRIMARY_NS" "$TIER_V4" prim.test 1
prim_zone 2
CTL zone reload prim.test >/dev/null
check "a reload of prim.test at serial 2 reaches the lower tier within 5 s by NOTIFY" \
	wait_for 5 sh -c "[ \"\$(ip netns exec $PRIMARY_NS kdig +time=1 +short @$TIER_V4 v.prim.test TXT)\" = '\"v2\"' ]"
check "pop53 logged the NOTIFY of prim.test serial 2 answered" \
	wait_for 2 grep -q "NOTIFY for prim.test. serial 2 to $TIER_V4:53: answered (TSIG)" "$TMP/pop53d.log"
check "the lower tier took serial 2 by IXFR from pop53 (its log)" \
	grep -q "IXFR, incoming, remote $V4@53, finished" "$TIER_DIR/knotd.log"
check "the lower tier accepted pop53's signed NOTIFY (its log)" \
	grep -q "\[sig.test.\] notify, incoming, remote $V4@[0-9]*, serial 2" "$TIER_DIR/knotd.log"
check "pop53 logged the NOTIFY of serial 2 answered, signed" \
	grep -q "NOTIFY for sig.test. serial 2 to $TIER_V4:53: answered (TSIG)" "$TMP/pop53d.log"
check "the lower tier's transfers from pop53 were TSIG-signed (pop53 log)" \
	grep -q "xfr: [AI]XFR of sig.test. serial [12].* to $PRIMARY_V4 (TSIG)\|xfr: [AI]XFR of sig.test. serial [12].* to $TIER_V4 (TSIG)" "$TMP/pop53d.log"
tierc stop >/dev/null 2>&1 || true

stop_pop53
check "pop53d stops cleanly (exit 0, no mbuf leak)" sh -c "grep -q 'no leak' $TMP/pop53d.log"
finish
