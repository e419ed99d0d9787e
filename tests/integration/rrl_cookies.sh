#!/usr/bin/env bash
# Response rate limiting and DNS cookies on the lab (af_xdp), as clients see them:
#   - kdig +cookie gets a COOKIE back (client cookie + a 16-byte RFC 9018 server cookie) and
#     its own full cookie echoed; kdig +badcookie recovers from BADCOOKIE
#   - a flood from one /24 gets BIND's share (rate x F / (F - rate) answers) within +-20%,
#     then only TC=1 slips (every other response), while another /24 at the same time and
#     a client under the rate get every answer; after `window` seconds it is answered again
#   - pop53ctl rrl lists the /24, stats and Prometheus count drops, slips and the top prefix
#   - a valid server cookie is never limited; a client cookie alone gets BADCOOKIE when limited
#   - reloads change the settings: exempt_clients, log_only, enabled: false, a 2 s secret
#     rotation (the previous secret still accepted, then not)
#   - no mbuf leaked
. "$(dirname "$0")/lib.sh"
CTL="$BUILD/control/pop53ctl"
PY=/usr/bin/python3
CLIENT="$SRC/tests/integration/dns_client.py"
OTHER=198.51.100.10     # a second client /24, on the client veth
EAL_PREFIX=p53rrl-test
cleanup() {
	ip -n "$CLIENT_NS" addr del "$OTHER/32" dev p53c 2>/dev/null || true
	cleanup_common
	rm -rf "/var/run/dpdk/$EAL_PREFIX"
}
trap cleanup EXIT
lab_lock

"$SRC/scripts/lab.sh" up >/dev/null
ip -n "$CLIENT_NS" addr replace "$OTHER/32" dev p53c
CFG=$TMP/pop53.yaml
# rrl_config EXTRA_RRL_LINES [SECRET_ROTATION]
rrl_config() {
	write_config "$CFG" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
	sed -i "s/--in-memory/--in-memory\", \"--file-prefix=$EAL_PREFIX/" "$CFG"
	cat >>"$CFG" <<YAML
rrl:
  responses_per_second: 20
  window: 2
  slip: 2
$1
cookies:
  secret_rotation: ${2:-3600}
YAML
}
ctl() { "$CTL" -s "$TMP/control.sock" "$@"; }
check_reload() { check "pop53ctl reload accepted the new rrl:/cookies: settings" ctl reload >/dev/null; }
C="ip netns exec $CLIENT_NS"
flood() { $C $PY "$CLIENT" rate "$V4" "$@"; }
j() { jq -r "$1" <<<"$2"; }
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
stat() { ctl --json stats | jq -r ".stats.$1"; }

rrl_config "" ""
start_pop53_answering "$CFG"

# --- cookies with kdig (knot-dnsutils) ---------------------------------------------------
out=$($C kdig +time=2 +retry=1 +cookie @"$V4" www.example.com A 2>&1)
ck=$(sed -n 's/^;; COOKIE: \([0-9A-F]*\).*/\1/p' <<<"$out" | tr 'A-F' 'a-f')
check "kdig +cookie: answered NOERROR" grep -q 'status: NOERROR' <<<"$out"
check "kdig +cookie: a COOKIE of 8 + 16 bytes comes back, version 1 (RFC 9018)" \
	bash -c '[ ${#0} -eq 48 ] && [ "${0:16:8}" = 01000000 ]' "$ck"
out=$($C kdig +time=2 +retry=1 +cookie="$ck" @"$V4" www.example.com A 2>&1)
check "kdig +cookie=FULL: our fresh server cookie is echoed" grep -qi ";; COOKIE: $ck" <<<"$out"

# --- RRL: BIND's share, then slips; another /24 and a slow client unaffected ----------------
$C $PY "$CLIENT" rate "$V4" "$OTHER" api.example.com A 16 3 >"$TMP/other.json" &
other_pid=$!
f=$(flood 192.0.2.1 api.example.com A 80 3)
wait "$other_pid"
other=$(cat "$TMP/other.json")
ans=$(j .answered "$f")
# A fresh account holds 20 credits and earns 20/s while 80/s debit it: 20 * 80 / 60 = 26.7.
check "flood 80/s from 192.0.2.1 for 3 s: $ans answers, BIND's share 26.7 +-20% (21..32)" between "$ans" 21 32
check "those answers are the first ones, in a row ($(j .first_run "$f"))" [ "$(j .first_run "$f")" = "$ans" ]
lim=$(( $(j .sent "$f") - ans ))
check "the limited ones slip every other time: $(j .tc "$f") TC=1 of $lim (slip 2)" \
	between "$(j .tc "$f")" $(( lim / 2 - 3 )) $(( lim / 2 + 3 ))
check "another /24 asking the same name at 16/s meanwhile: all $(j .sent "$other") answered" \
	[ "$(j .answered "$other")" = "$(j .sent "$other")" ]
f1=$f
f=$(flood 192.0.2.1 api.example.com A 80 2)
# The account ends the first flood at its floor (-window x rate = -40) and earns 20/s until the
# second starts: none back while the pause is under the window (the usual case, about a second);
# a machine slow to start the second client earns the pause's credits back (20/s past 2 s).
# Those credits c then drain at 80 - 20 = 60/s while every query is answered, so the flood gets
# c * 80/60 answers before it is limited again (one more for rounding each way).
gap_ms=$(jq -n --argjson a "$f1" --argjson b "$f" '($b.t_first - $a.t_last) * 1000 | floor')
earned=$(( gap_ms > 2000 ? (gap_ms - 2000) * 20 * 80 / (60 * 1000) + 2 : 0 ))
ans=$(j .answered "$f"); lim=$(( $(j .sent "$f") - ans ))
check "still flooding ${gap_ms} ms after the first flood: no full answer beyond the credits of that pause ($ans, at most $earned), TC=1 for half of the rest ($(j .tc "$f") of $lim)" \
	bash -c '[ "$0" -le "$1" ] && [ "$2" -ge $(( $3 / 2 - 10 )) ] && [ "$2" -le $(( $3 / 2 + 10 )) ]' \
	"$ans" "$earned" "$(j .tc "$f")" "$lim"
# The text first: a prefix stays limited only while its debt lasts (a slow machine may take a
# second between two calls), and what the JSON lists after the text still listed it before.
ctl rrl >"$TMP/rrl.txt"
r=$(ctl --json rrl)
check "pop53ctl rrl lists 192.0.2.0/24 as limited now, class responses" \
	bash -c 'jq -e ".rrl.limited[] | select(.prefix == \"192.0.2.0/24\" and (.classes | index(\"responses\")))" <<<"$0" >/dev/null' "$r"
check "pop53ctl rrl does not list the other /24" bash -c '! jq -e ".rrl.limited[] | select(.prefix == \"198.51.100.0/24\")" <<<"$0" >/dev/null' "$r"
check "pop53ctl rrl (text) shows the prefix" grep -q '192.0.2.0/24' "$TMP/rrl.txt"
check "stats: dropped, slipped, early counted" bash -c '[ "$0" -gt 0 ] && [ "$1" -gt 0 ] && [ "$2" -gt 0 ]' \
	"$(stat rrl.dropped)" "$(stat rrl.slipped)" "$(stat rrl.early)"
check "stats: rrl_top has 192.0.2.0/24" [ "$(stat 'rrl_top["192.0.2.0/24"]')" -gt 100 ]
m=$(ip netns exec "$POP_NS" curl -s http://127.0.0.1:19153/metrics)
check "metrics: pop53_rrl_responses_total{action=\"dropped\"}" grep -qE '^pop53_rrl_responses_total\{action="dropped"\} [1-9]' <<<"$m"
check "metrics: pop53_rrl_top_limited{prefix=\"192.0.2.0/24\"}" grep -qE '^pop53_rrl_top_limited\{prefix="192.0.2.0/24"\} [1-9]' <<<"$m"
sleep 2.5 # the window: the account owed 2 s of its rate
f=$(flood 192.0.2.1 api.example.com A 16 3)
check "after the window, under the rate (16/s): all $(j .sent "$f") answered" [ "$(j .answered "$f")" = "$(j .sent "$f")" ]

# --- cookies and RRL ------------------------------------------------------------------------
full=$($C $PY "$CLIENT" cookie "$V4" 192.0.2.1 www.example.com)
f=$(flood 192.0.2.1 cdn.example.com A 200 2 --cookie "$full")
check "a valid server cookie is exempt: 200/s for 2 s, all $(j .sent "$f") answered" \
	[ "$(j .answered "$f")" = "$(j .sent "$f")" ]
check "stats: cookie-exempt responses counted" [ "$(stat rrl.cookie)" -ge 400 ]
f=$(flood 192.0.2.1 www.example.com AAAA 200 2 --cookie 0102030405060708)
check "a client cookie alone, limited: BADCOOKIE instead of TC=1 ($(j .badcookie "$f") BADCOOKIE, $(j .tc "$f") TC)" \
	bash -c '[ "$0" -gt 100 ] && [ "$1" = 0 ]' "$(j .badcookie "$f")" "$(j .tc "$f")"
check "the BADCOOKIE carries our cookie for that client cookie" bash -c '[ "${0:0:16}" = 0102030405060708 ] && [ ${#0} -eq 48 ]' "$(j .cookie "$f")"
out=$($C kdig +time=1 +retry=3 +cookie +badcookie @"$V4" www.example.com AAAA 2>&1)
check "kdig +badcookie during the limit: retried with our cookie, answered" grep -q 'status: NOERROR' <<<"$out"

# --- reloads change the settings -------------------------------------------------------------
rrl_config "  exempt_clients: [192.0.2.1/32]" ""
check_reload
f=$(flood 192.0.2.1 mail.example.com A 80 2)
check "reload with exempt_clients [192.0.2.1/32]: all $(j .sent "$f") answered" [ "$(j .answered "$f")" = "$(j .sent "$f")" ]
check "stats: exempt counted" [ "$(stat rrl.exempt)" -gt 50 ]
rrl_config "  log_only: true" ""
check_reload
f=$(flood 192.0.2.1 ns1.example.com A 80 2)
check "reload with log_only: all $(j .sent "$f") answered" [ "$(j .answered "$f")" = "$(j .sent "$f")" ]
check "stats: would_drop counted" [ "$(stat rrl.would_drop)" -gt 50 ]
rrl_config "  enabled: false" 2
check_reload
check "reload with enabled: false: pop53ctl rrl says off" bash -c 'ctl() { "$1" -s "$2" "$3"; }; ctl "$0" "$1" rrl | grep -q "rrl: off"' "$CTL" "$TMP/control.sock"
f=$(flood 192.0.2.1 ns2.example.com A 80 2)
check "RRL off: all $(j .sent "$f") answered" [ "$(j .answered "$f")" = "$(j .sent "$f")" ]
# secret_rotation 2 s: a cookie stays valid for the next period (previous secret), not after.
# Periods start at even unix seconds; each step below is timed from the start of one, so they
# fall into periods k, k+1 and k+2 whatever the clock.
k0=$($PY -c 'import time; t = time.time(); s = t - t % 2 + 2; time.sleep(s + 0.1 - t); print(s)')
at() { $PY -c 'import sys, time; d = float(sys.argv[1]) + float(sys.argv[2]) - time.time(); time.sleep(max(d, 0))' "$k0" "$1"; }
short() { flood 192.0.2.1 www.example.com A 20 0.3 --drain 0.3 --cookie "$1"; }
full=$($C $PY "$CLIENT" cookie "$V4" 192.0.2.1 www.example.com)
v0=$(stat cookies.valid)
short "$full" >/dev/null
check "a fresh cookie is valid" [ "$(stat cookies.valid)" -ge $(( v0 + 5 )) ]
at 2.3
v0=$(stat cookies.valid)
short "$full" >/dev/null
check "one rotation later it is still valid (the previous secret)" [ "$(stat cookies.valid)" -ge $(( v0 + 5 )) ]
at 4.3
i0=$(stat cookies.invalid)
f=$(short "$full")
check "two rotations later it is invalid, and a new cookie is sent" \
	bash -c '[ "$0" -ge $(( $1 + 5 )) ] && [ "${2:16}" != "${3:16}" ]' "$(stat cookies.invalid)" "$i0" "$(j .cookie "$f")" "$full"
check "the rotations are logged" grep -q 'cookies: secret rotated' "$TMP/pop53d.log"
check "pop53d still answers" wait_answering

check "pop53d exits 0 on SIGTERM" stop_pop53
check "no mbuf leaked" grep -q 'no leak' "$TMP/pop53d.log"
[ "$FAIL" -eq 0 ] || cat "$TMP/pop53d.log"
finish
