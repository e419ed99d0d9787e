#!/usr/bin/env bash
# health.canary.dnssec (docs/CONFIG.md): the canary asks with DO=1 and validates the answer's
# RRSIGs against the DNSKEY of the zone pop53d serves. The zone is signed at test time with
# ldns-signzone; the anycast `command` announcer is a hook that logs what it is told, so the
# withdraw is seen as an operator's routing would see it.
#   - the signed zone: canary up, the prefix announced; an NSEC3 name error asked twice is
#     hashed once (the worker's next closer cache: pop53ctl --json workers), same answer
#   - a reload whose RRSIG over the canary's TXT is corrupted (one base64 digit changed):
#     the canary fails with "Bogus DNSSEC signature" in `pop53ctl health`, the node goes
#     down and the prefix is withdrawn; while kdig still gets that (bogus) answer
#   - the good zone again: canary up, announced again after hold-down
#   - an unsigned version of the zone: the canary fails saying the zone has no DNSKEY
#   - control: the same corrupted zone with dnssec off passes (it is the option that catches it)
. "$(dirname "$0")/lib.sh"
CTL="$BUILD/control/pop53ctl"
SOCK=$TMP/control.sock
ZONE=$TMP/example.com.zone
CFG=$TMP/pop53.yaml
HOOKLOG=$TMP/hook.log
PFX=198.51.100.0/24
EAL_PREFIX=p53cdnssec-test
PY=/usr/bin/python3

cleanup() {
	stop_pop53 >/dev/null 2>&1 || true
	rm -rf "/var/run/dpdk/$EAL_PREFIX"
	cleanup_common
}
trap cleanup EXIT
lab_lock

for t in ldns-keygen ldns-signzone kdig; do
	command -v "$t" >/dev/null || { echo "not ok - $t is not installed (scripts/deps.sh)"; exit 1; }
done

ctl() { "$CTL" -s "$SOCK" "$@"; }
jq_py() { $PY -c 'import json,sys; r=json.load(sys.stdin); v=eval(sys.argv[1]); print(v if not isinstance(v,(dict,list)) else json.dumps(v))' "$1"; }
health() { ctl --json health | jq_py "$1"; }
canary_state() { [ "$(health 'r["health"]["checks"]["canary"]["state"]')" = "$1" ]; }
node_state() { [ "$(health 'r["health"]["state"]')" = "$1" ]; }
hook_last() { [ "$(tail -1 "$HOOKLOG" 2>/dev/null)" = "$1" ]; }
# wait_for TIMEOUT_MS COMMAND...: poll every 50 ms
wait_for() {
	local end=$(( $(date +%s%3N) + $1 ))
	shift
	while ! "$@"; do
		[ "$(date +%s%3N)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# The zone with the canary's record, signed (KSK + ZSK, NSEC3), valid from an hour ago.
cp "$SRC/zones/example.com.zone" "$TMP/unsigned.zone"
printf 'canary\t60 IN TXT\t"pop53 canary"\n' >>"$TMP/unsigned.zone"
(cd "$TMP" && ksk=$(ldns-keygen -a ECDSAP256SHA256 -k example.com) &&
	zsk=$(ldns-keygen -a ECDSAP256SHA256 example.com) &&
	ldns-signzone -n -o example.com. -i "$(date -u -d '-1 hour' +%Y%m%d%H%M%S)" \
		-e "$(date -u -d '+30 days' +%Y%m%d%H%M%S)" -f "$TMP/good.zone" "$TMP/unsigned.zone" \
		"$ksk" "$zsk") || { echo "not ok - ldns-signzone"; exit 1; }
# The same, one base64 digit of the canary TXT's signature changed: it still parses.
awk '$1 == "canary.example.com." && $4 == "RRSIG" && $5 == "TXT" {
	c = substr($NF, 20, 1); $NF = substr($NF, 1, 19) (c == "A" ? "B" : "A") substr($NF, 21) } { print }' \
	"$TMP/good.zone" >"$TMP/bogus.zone"
check "the corrupted copy differs from the signed zone in one RRSIG line" \
	[ "$(diff "$TMP/good.zone" "$TMP/bogus.zone" | grep -c '^>.*RRSIG.*TXT')" = 1 ]

printf '#!/bin/sh\necho "$*" >>%s\n' "$HOOKLOG" >"$TMP/hook.sh"
chmod +x "$TMP/hook.sh"

write_cfg() { # write_cfg DNSSEC(true|false)
	cat >"$CFG" <<YAML
server:
  identity: canary-dnssec-test
  control_socket: $SOCK
metrics: {enabled: false}
dataplane:
  eal: ["-l", "1", "--no-pci", "--in-memory", "--file-prefix=$EAL_PREFIX", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
  workers: 1
  addresses: [$V4, "$V6"]
  idle: {mode: adaptive, max_sleep_us: 100}
zones:
  - {name: example.com, file: $ZONE}
health:
  hold_down: 1s
  min_announce_interval: 0
  stop_linger: 0
  canary: {name: canary.example.com, type: TXT, dnssec: $1, interval: 200ms, timeout: 150ms, fall: 3, rise: 2}
anycast:
  prefixes: [$PFX]
  retry: 300ms
  command: {run: $TMP/hook.sh, timeout: 2s}
YAML
}
use_zone() { cp "$TMP/$1.zone" "$ZONE" && ctl zone reload >/dev/null; }

"$SRC/scripts/lab.sh" up >/dev/null
cp "$TMP/good.zone" "$ZONE"
write_cfg true
start_pop53_answering "$CFG"
check "the start is logged with the canary validating" grep -q 'canary canary.example.com. TXT (DO=1, RRSIGs validated)' "$TMP/pop53d.log"
wait_for 5000 canary_state up
check "signed zone: canary up" canary_state up
check "...pop53ctl health --json says the canary asks with dnssec" [ "$(health 'r["health"]["checks"]["canary"]["query"]["dnssec"]')" = True ]
wait_for 5000 hook_last "announce $PFX"
check "...the prefix is announced (hook: announce $PFX)" hook_last "announce $PFX"

# An NSEC3 name error asked twice: the worker hashes the next closer name once, the second
# answer comes from its next closer cache (pop53ctl --json workers), byte for byte the first.
nx() { ip netns exec "$CLIENT_NS" kdig +time=1 +retry=1 +dnssec +noall +authority @"$V4" "$1" A; }
nc_count() { ctl --json workers | jq_py "r['workers'][0]['nsec3_cache_$1']"; }
h0=$(nc_count hits); m0=$(nc_count misses)
a1=$(nx nope-cache-test.example.com); a2=$(nx nope-cache-test.example.com)
h1=$(nc_count hits); m1=$(nc_count misses)
check "NSEC3 name error: three NSEC3 in the authority section" \
	[ "$(awk '$4 == "NSEC3"' <<<"$a1" | wc -l)" = 3 ]
check "...asked twice: one cache miss, then one hit (misses $m0 -> $m1, hits $h0 -> $h1)" \
	[ "$((m1 - m0)),$((h1 - h0))" = 1,1 ]
check "...the same authority section both times" [ "$a1" = "$a2" ]

use_zone bogus
wait_for 5000 canary_state down
check "corrupted RRSIG: canary down" canary_state down
out=$(ctl health)
check "...pop53ctl health gives the reason: the TXT's signature is bogus" \
	grep -qE '^canary +down .*dnssec: canary\.example\.com\. TXT: Bogus DNSSEC signature' <<<"$out"
wait_for 3000 node_state down
check "...the node is down" node_state down
wait_for 3000 hook_last "withdraw $PFX"
check "...and the prefix withdrawn (hook: withdraw $PFX)" hook_last "withdraw $PFX"
check "...counted as failed canary rounds" [ "$(health 'r["health"]["checks"]["canary"]["failures"]')" -ge 3 ]
check "...while a client still gets the bogus answer: the data was served, only the signature is wrong" \
	bash -c "ip netns exec $CLIENT_NS kdig +time=1 +retry=1 +dnssec @$V4 canary.example.com TXT | grep -q 'RRSIG'"

use_zone good
wait_for 5000 canary_state up
check "the signed zone again: canary up" canary_state up
wait_for 5000 hook_last "announce $PFX"
check "...announced again after hold-down" hook_last "announce $PFX"

use_zone unsigned
wait_for 5000 canary_state down
check "unsigned zone with canary.dnssec: canary down" canary_state down
check "...saying the zone has no DNSKEY" \
	bash -c "$(declare -f ctl); CTL=$CTL SOCK=$SOCK; ctl health | grep -qE '^canary +down .*the zone of canary\.example\.com\. has no DNSKEY'"
stop_pop53; rc=$?
check "SIGTERM: exit 0" [ $rc -eq 0 ]

# Control: without the option the corrupted zone is served as healthy.
: >"$HOOKLOG"
cp "$TMP/bogus.zone" "$ZONE"
write_cfg false
start_pop53_answering "$CFG"
wait_for 5000 canary_state up
check "canary.dnssec off: the corrupted zone passes the canary (only the option validates)" canary_state up
stop_pop53 >/dev/null
finish
