#!/usr/bin/env bash
# `pop53ctl zone reload NAME` patches that zone into the running image (control/reload.c,
# control/zone/zone_repatch.c) instead of compiling every zone: a small zone beside a
# genzone.py zone (ZRP_BIG_N records, default 100,000). What a user sees:
#   - a changed, an added and a removed record of the small zone are served after the reload,
#     the reply says "image: patched: ..." and the big zone still answers;
#   - a reload with nothing changed publishes nothing ("image: unchanged", same generation);
#   - a bad zone file is rejected with file:line: reason, the running data keeps serving;
#   - a new delegation (NS with its glue) is patched and answered as a referral;
#   - a DNAME, a DS at a cut, a DS at the apex and a record of a private-use type (BIND's
#     TYPE65534) are patched and served; a change the patch declines (the zone turning
#     signed, then unsigned) is spliced: the zone compiled alone replaces its nodes
#     (control/zone/image_splice.c), the reply and the log say so and why, the new data is
#     served and the big zone keeps answering; `pop53ctl reload` too.
. "$(dirname "$0")/lib.sh"
BIG_N=${ZRP_BIG_N:-100000}
trap '[ "$FAIL" -eq 0 ] || grep -E "reload|patch|error" "$TMP/pop53d.log" | tail -20; cleanup_common' EXIT
lab_lock

ZONE=$TMP/example.com.zone
CFG=$TMP/pop53.yaml
cp "$SRC/zones/example.com.zone" "$ZONE"
reload_test_init "$TMP/big.test.zone" "$BIG_N"
reload_test_config "$CFG" "$ZONE"

rcode_of() { ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" "$1" "${2:-A}" 2>/dev/null |
	sed -n 's/.*status: \([A-Z]*\).*/\1/p'; }
serial_of() { kdig_section answer @"$V4" "$1" SOA | awk '$4=="SOA" {print $7}'; }
# edit SED-EXPR [extra line]: the zone copy rewritten in place with its serial + 1
SERIAL=$(awk '/; serial/ {print $1}' "$ZONE")
edit() {
	SERIAL=$((SERIAL + 1))
	sed -e "s/^\(\t*\)[0-9]\{10\} ; serial/\1$SERIAL ; serial/" -e "$1" "$ZONE" >"$ZONE.new"
	[ -z "${2:-}" ] || printf '%s\n' "$2" >>"$ZONE.new"
	cat "$ZONE.new" >"$ZONE"
	rm -f "$ZONE.new"
}
BIG_A0=

"$SRC/scripts/lab.sh" up >/dev/null
start_pop53_answering "$CFG"
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.2; done
BIG_A0=$(a_of "$BIG_HOST")
check "the big zone answers $BIG_HOST A ($BIG_A0)" [ -n "$BIG_A0" ]

# --- 1. a changed value: patched ---------------------------------------------------------
edit 's/^\(www\t\+300 IN A\t\).*/\1192.0.2.99/'
gen0=$(generation)
out=$(ctl zone reload example.com 2>&1); rc=$?
echo "$out" | sed 's/^/# /' | head -3
check "zone reload example.com exits 0" [ $rc -eq 0 ]
check "the reply says the image was patched ($(grep '^image' <<<"$out"))" \
	grep -qE '^image: patched: zone example\.com\., [0-9]+ record\(s\) deleted and [0-9]+ added' <<<"$out"
check "www.example.com A is the new address" [ "$(a_of www.example.com)" = 192.0.2.99 ]
check "the new serial $SERIAL is served" [ "$(serial_of example.com)" = "$SERIAL" ]
check "cdn.example.com (CNAME to www) follows to the new address" \
	bash -c 'grep -q "192.0.2.99" <<<"$0"' "$(kdig_section answer @"$V4" cdn.example.com A)"
check "the big zone still answers $BIG_HOST A" [ "$(a_of "$BIG_HOST")" = "$BIG_A0" ]
check "the generation moved" [ "$(generation)" != "$gen0" ]
check "the log has the reload as patched" grep -q "reload: .*patched: zone example.com." "$TMP/pop53d.log"

# --- 2. a name added and one removed: patched --------------------------------------------
edit '/^sip\t/d' $'new\t300 IN A\t192.0.2.123'
out=$(ctl zone reload example.com 2>&1); rc=$?
check "added and removed names: patched ($(grep '^image' <<<"$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: patched" <<<"$1"' "$rc" "$out"
check "new.example.com A 192.0.2.123 is served" [ "$(a_of new.example.com)" = 192.0.2.123 ]
check "sip.example.com is NXDOMAIN now" [ "$(rcode_of sip.example.com)" = NXDOMAIN ]

# --- 3. nothing changed: nothing published -----------------------------------------------
gen1=$(generation)
out=$(ctl zone reload example.com 2>&1); rc=$?
check "no change: exits 0 and says unchanged ($(grep '^image' <<<"$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: unchanged" <<<"$1"' "$rc" "$out"
check "no change: the generation stays $gen1" [ "$(generation)" = "$gen1" ]

# --- 4. a bad file: rejected as before ---------------------------------------------------
cp "$ZONE" "$ZONE.good"
edit 's/^x//' $'www\t300 IN CNAME\tapi.example.com.'
err=$(ctl zone reload example.com 2>&1); rc=$?
check "bad zone (CNAME beside A at www): exits 1 with file:line: reason ($err)" \
	bash -c '[ $0 -eq 1 ] && grep -qE "$1:[0-9]+: .*[Cc][Nn][Aa][Mm][Ee]" <<<"$2"' "$rc" "$ZONE" "$err"
check "bad zone: www still 192.0.2.99" [ "$(a_of www.example.com)" = 192.0.2.99 ]
check "bad zone: the generation stays $gen1" [ "$(generation)" = "$gen1" ]
cat "$ZONE.good" >"$ZONE"
SERIAL=$((SERIAL - 1))

# --- 5. a delegation: patched, answered as a referral -------------------------------------
edit 's/^x//' $'sub\t300 IN NS\tns.sub.example.com.\nns.sub\t300 IN A\t192.0.2.77'
out=$(ctl zone reload example.com 2>&1); rc=$?
check "a new delegation: patched ($(grep '^image' <<<"$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: patched: zone example\.com\." <<<"$1"' "$rc" "$out"
check "the delegation is served (referral with the glue)" \
	bash -c 'grep -q "ns.sub.example.com. 300 IN A 192.0.2.77" <<<"$0"' \
	"$(kdig_section additional +norec @"$V4" host.sub.example.com A)"
check "the referral names the cut in the authority section" \
	bash -c 'grep -q "sub.example.com. 300 IN NS ns.sub.example.com." <<<"$0"' \
	"$(kdig_section authority +norec @"$V4" host.sub.example.com A)"
check "the big zone still answers $BIG_HOST A" [ "$(a_of "$BIG_HOST")" = "$BIG_A0" ]

# --- 5b. a DNAME: patched (issue 13), synthesis served ---------------------------------
edit 's/^x//' $'moved\t300 IN DNAME\texample.net.'
out=$(ctl zone reload example.com 2>&1); rc=$?
check "a new DNAME: patched ($(grep '^image' <<<"$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: patched: zone example\.com\." <<<"$1"' "$rc" "$out"
check "the DNAME is served (host.moved.example.com synthesised to host.example.net)" \
	bash -c 'grep -q "host.moved.example.com. 300 IN CNAME host.example.net." <<<"$0"' \
	"$(kdig_section answer @"$V4" host.moved.example.com A)"

# --- 5c. DS at a cut of an unsigned zone: patched (issue 13), served ---------------------
edit 's/^x//' $'sub\t300 IN DS\t12345 13 2 8c9c4c5c7a7e3c46e7b4c2a3fc55e4b3b5a2ad1c9f3a24a3c1f1d5c0e2b7a911'
out=$(ctl zone reload example.com 2>&1); rc=$?
check "DS at a cut of an unsigned zone: patched ($(grep '^image' <<<"$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: patched: zone example\.com\." <<<"$1"' "$rc" "$out"
check "the DS is served" \
	bash -c 'grep -q "sub.example.com. 300 IN DS 12345 13 2" <<<"$0"' \
	"$(kdig_section answer +norec @"$V4" sub.example.com DS)"

# --- 5d. DS at the apex of an unsigned zone: patched (issue 13, round 24), served ---------
edit 's/^x//' $'@\t300 IN DS\t23456 13 2 8c9c4c5c7a7e3c46e7b4c2a3fc55e4b3b5a2ad1c9f3a24a3c1f1d5c0e2b7a911'
out=$(ctl zone reload example.com 2>&1); rc=$?
check "DS at the apex of an unsigned zone: patched ($(grep '^image' <<<"$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: patched: zone example\.com\." <<<"$1"' "$rc" "$out"
check "the apex's DS is served" \
	bash -c 'grep -q "example.com. 300 IN DS 23456 13 2" <<<"$0"' \
	"$(kdig_section answer +norec @"$V4" example.com DS)"

# --- 5e. a private-use type (BIND's TYPE65534 signing state): patched (round 26), served --
edit 's/^x//' $'priv\t300 IN TYPE65534\t\\# 4 0a0b0c0d'
out=$(ctl zone reload example.com 2>&1); rc=$?
check "a TYPE65534 record: patched ($(grep '^image' <<<"$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: patched: zone example\.com\." <<<"$1"' "$rc" "$out"
check "the TYPE65534 record is served" \
	bash -c 'grep -qiE "priv.example.com. 300 IN TYPE65534 .*4 0A0B0C0D" <<<"$0"' \
	"$(kdig_section answer +norec @"$V4" priv.example.com TYPE65534)"
check "an AMTRELAY-typed query at it is NODATA (NOERROR, no answer)" \
	bash -c '[ "$0" = NOERROR ] && [ -z "$1" ]' "$(rcode_of priv.example.com TYPE260)" \
	"$(kdig_section answer +norec @"$V4" priv.example.com TYPE260)"

# --- 5f. a change the patch declines (the zone turns signed): spliced, said why ----------
# The zone compiled alone replaces its nodes in the running image (control/zone/
# image_splice.c); the big zone is not compiled and keeps serving.
SIG=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==
edit 's/^x//' "www	300 IN RRSIG	A 13 3 300 20300101000000 20250101000000 4242 example.com. $SIG"
gen2=$(generation)
out=$(ctl zone reload example.com 2>&1); rc=$?
check "the zone turning signed: spliced, the reply says why ($(grep -E '^(image|reloaded)' <<<"$out" | tr '\n' ' '))" \
	bash -c '[ $0 -eq 0 ] && grep -qE "^image: spliced: zone example\.com\. compiled alone \(the patch declined: the zone.s DNSSEC state changes \(unsigned to signed: RRSIG records at www\.example\.com\.\)\)" <<<"$1"' "$rc" "$out"
check "the log says it was spliced" \
	grep -qE "reload: zone example\.com\. spliced, compiled alone \(the patch declined: " "$TMP/pop53d.log"
check "the generation moved" [ "$(generation)" != "$gen2" ]
check "the RRSIG goes out with www.example.com A when DO=1" \
	bash -c 'grep -q "www.example.com. 300 IN RRSIG A 13 3 300" <<<"$0"' \
	"$(kdig_section answer +dnssec @"$V4" www.example.com A)"
check "the apex's DS still is served" \
	bash -c 'grep -q "example.com. 300 IN DS 23456 13 2" <<<"$0"' \
	"$(kdig_section answer +norec @"$V4" example.com DS)"
check "the DNAME still is (host.moved.example.com synthesised)" \
	bash -c 'grep -q "host.moved.example.com. 300 IN CNAME host.example.net." <<<"$0"' \
	"$(kdig_section answer @"$V4" host.moved.example.com A)"
check "the delegation still is (referral with the glue)" \
	bash -c 'grep -q "ns.sub.example.com. 300 IN A 192.0.2.77" <<<"$0"' \
	"$(kdig_section additional +norec @"$V4" host.sub.example.com A)"
check "the big zone still answers $BIG_HOST A" [ "$(a_of "$BIG_HOST")" = "$BIG_A0" ]

# --- 5f. unsigned again, through the zones-only reload: spliced there too ----------------
edit '/ RRSIG\t/d'
out=$(ctl reload 2>&1); rc=$?
check "pop53ctl reload: the zone turning unsigned is spliced ($(grep -E '^(image|reloaded)' <<<"$out" | tr '\n' ' '))" \
	bash -c '[ $0 -eq 0 ] && grep -qE "^image: spliced: zone example\.com\. compiled alone \(the patch declined: the zone.s DNSSEC state changes \(signed to unsigned\)\).*; 1 other zone\(s\) not compiled" <<<"$1"' "$rc" "$out"
check "no RRSIG goes out any more" \
	bash -c '! grep -q "RRSIG" <<<"$0"' "$(kdig_section answer +dnssec @"$V4" www.example.com A)"
check "the big zone still answers $BIG_HOST A" [ "$(a_of "$BIG_HOST")" = "$BIG_A0" ]

# --- 6. and the next value change is patched again ---------------------------------------
edit 's/^\(www\t\+300 IN A\t\).*/\1192.0.2.100/'
out=$(ctl zone reload example.com. 2>&1); rc=$?
check "after the splices, a value change is patched again" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: patched" <<<"$1"' "$rc" "$out"
check "www.example.com A is 192.0.2.100" [ "$(a_of www.example.com)" = 192.0.2.100 ]
out=$(ctl zone reload 2>&1)
check "zone reload without a name: no file changed since the patch, nothing compiled ($(grep '^image' <<<"$out"))" \
	grep -q "^image: unchanged: nothing published: no zone file changed since its compile (2 zone(s) not compiled)" <<<"$out"

# What the splices saved: every zone compiled (the big one with them), for the reply's time.
out=$(ctl reload --full 2>&1); rc=$?
check "reload --full compiles every zone ($(grep -E '^(image|reloaded)' <<<"$out" | tr '\n' ' '))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: compiled in full: asked for (reload --full)" <<<"$1"' "$rc" "$out"
check "after it, www.example.com A is still 192.0.2.100" [ "$(a_of www.example.com)" = 192.0.2.100 ]

check "pop53d stops cleanly" stop_pop53
finish
