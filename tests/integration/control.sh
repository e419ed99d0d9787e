#!/usr/bin/env bash
# The control plane on the lab: pop53d in af_xdp mode with its control socket, SIGHUP and
# inotify reloads, the Prometheus endpoint and DPDK telemetry, driven by pop53ctl, curl,
# kdig and raw socket clients (control_sock.py).
#
#   run 1: every pop53ctl command, socket permissions, malformed socket input, SIGHUP reload,
#          a rejected reload, Prometheus counters, DPDK telemetry, a config reload, clean stop
#   run 2: server.watch_zones: a zone file replaced by rename (as rsync does) is reloaded
#   a signed zone (nsec.test, tests/unit/dataplane/zones): zone list shows its DNSSEC state;
#   kdig +dnssec gets RRSIGs and NSEC proofs over af_xdp
. "$(dirname "$0")/lib.sh"
CTL="$BUILD/control/pop53ctl"
PY=/usr/bin/python3
HELPER="$SRC/tests/integration/control_sock.py"
GROUP=p53test
GROUP_MADE=
METRICS=127.0.0.1:19153
EAL_PREFIX=p53ctl-test
cleanup() {
	cleanup_common
	rm -rf "/var/run/dpdk/$EAL_PREFIX"
	[ -z "$GROUP_MADE" ] || groupdel "$GROUP" 2>/dev/null || true
}
trap cleanup EXIT
lab_lock

SOCK=$TMP/ctl/control.sock
ZDIR=$TMP/zones
ZONE=$ZDIR/example.com.zone
CFG=$TMP/pop53.yaml
mkdir -p "$ZDIR"
cp "$SRC/zones/example.com.zone" "$ZONE"
if ! getent group "$GROUP" >/dev/null; then
	groupadd "$GROUP" && GROUP_MADE=1
fi

# control_config FILE WATCH(true|false) [WORKERS] [RX_DESC]
control_config() {
	cat >"$1" <<YAML
server:
  identity: test-pop
  version: "pop53-test"
  control_socket: $SOCK
  control_group: $GROUP
  watch_zones: $2
  watch_debounce_ms: 200
metrics:
  enabled: true
  listen: $METRICS
dataplane:
  eal: ["-l", "1", "--no-pci", "--in-memory", "--file-prefix=$EAL_PREFIX", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
  workers: ${3:-1}
  addresses: [$V4, "$V6"]
  idle: {mode: adaptive, max_sleep_us: 100, spin_polls: 128}
  burst: 16
  af_xdp: {busy_budget: 32, tx_budget: 16}
${4:+  rx_desc: $4
}zones:
  - {name: example.com, file: $ZONE}
  - {name: nsec.test, file: $SRC/tests/unit/dataplane/zones/nsec.test.zone}
YAML
}

ctl() { "$CTL" -s "$SOCK" "$@"; }
# The SOA serial in the zone file; the serial pop53d serves (kdig); the one status reports.
file_serial() { zone_rrset "$ZONE" example.com. SOA | awk '{print $7}'; }
dns_serial() { kdig_section answer @"$V4" example.com SOA | awk '$4=="SOA" {print $7}'; }
serial_is() { [ "$(dns_serial)" = "$1" ]; }
www_a() { kdig_section answer @"$V4" www.example.com A | awk '{print $5}'; }
status_json() { ctl --json status; }
jq_py() { # jq_py EXPR < json: evaluate a Python expression on the parsed reply `r`
	$PY -c 'import json,sys; r=json.load(sys.stdin); v=eval(sys.argv[1]); print(v if not isinstance(v,(dict,list)) else json.dumps(v))' "$1"
}
metrics() { ip netns exec "$POP_NS" curl -s --max-time 5 "http://$METRICS/metrics"; }
metric() { # metric 'NAME{labels}' < scrape
	awk -v k="$1" '$1==k {print $2; f=1} END {if (!f) print "missing"}'
}
# wait_for SECONDS COMMAND...: poll every 0.2 s until it succeeds
wait_for() {
	local n=$(( $1 * 5 )); shift
	for _ in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}
# set_zone SERIAL WWW_ADDR [extra line]: rewrite the zone copy in place
set_zone() {
	sed -e "s/^\(\t*\)[0-9]\{10\} ; serial/\1$1 ; serial/" \
	    -e "s/^\(www\t\+300 IN A\t\).*/\1$2/" "$SRC/zones/example.com.zone" >"$ZONE.new"
	[ -z "${3:-}" ] || printf '%s\n' "$3" >>"$ZONE.new"
	cat "$ZONE.new" >"$ZONE"   # same inode, as an editor saving in place
	rm -f "$ZONE.new"
}
start_or_die() {
	start_pop53 "$CFG"
	if ! wait_answering || ! wait_for 5 test -S "$SOCK"; then
		not_ok "pop53d answers on the lab ($1)"
		cat "$TMP/pop53d.log"
		finish
		exit 1
	fi
	ok "pop53d answers on the lab ($1)"
}

"$SRC/scripts/lab.sh" up >/dev/null
ip -n "$POP_NS" link set lo up
control_config "$CFG" false
SERIAL0=$(file_serial)
start_or_die "run 1"

# --- 1. every command -------------------------------------------------------------------
out=$(ctl status 2>&1); rc=$?
check "status exits 0" [ $rc -eq 0 ]
check "status shows the identity" grep -q 'identity test-pop' <<<"$out"
check "status shows the port" grep -q '^port net_af_xdp0' <<<"$out"
check "dataplane.af_xdp.busy_budget reaches the device string (log: $(grep -o 'probing .*' "$TMP/pop53d.log" | head -1))" \
	grep -qE 'port net_af_xdp0: probing net_af_xdp0,iface=p53p,start_queue=0,queue_count=1,busy_budget=32,xdp_prog=' "$TMP/pop53d.log"
# dataplane.af_xdp.tx_budget: below the kernel's floor of 32, raised to it with a warning, then
# set on the PMD's socket (XDP_MAX_TX_SKB_BUDGET, Linux 6.17 or later).
check "dataplane.af_xdp.tx_budget 16 is raised to 32 with a warning" \
	grep -q 'dataplane.af_xdp.tx_budget 16: the kernel takes 32..1024 (the TX ring.s size), using 32' "$TMP/pop53d.log"
check "dataplane.af_xdp.tx_budget reaches the socket (log: $(grep -o 'AF_XDP TX budget.*\|tx_budget .* not applied.*' "$TMP/pop53d.log" | head -1))" \
	grep -q 'port net_af_xdp0: AF_XDP TX budget 32 frames per wakeup' "$TMP/pop53d.log"
# dataplane.rx_desc's default fills net_af_xdp's RX ring with every buffer the PMD holds for it.
check "rx_desc default: the port has 2048 rx descriptors and the PMD 2048 buffers (log: $(grep -o '[0-9]* rx / [0-9]* tx descriptors.*held by the driver' "$TMP/pop53d.log" | head -1))" \
	grep -qE 'port net_af_xdp0 \(id [0-9]+\): .* 2048 rx / 1024 tx descriptors, .*, 2048 mbufs held by the driver' "$TMP/pop53d.log"
check "rx_desc default: no warning about descriptors without buffers" \
	bash -c '! grep -q "rx descriptors, but net_af_xdp holds only" "$0"' "$TMP/pop53d.log"
check "status shows the zone and its serial $SERIAL0" grep -qE "^  example\.com\. +serial $SERIAL0 +$ZONE\$" <<<"$out"
js=$(status_json)
check "status --json parses, ok:true" [ "$(jq_py 'r["ok"]' <<<"$js")" = True ]
check "status --json: 1 worker" [ "$(jq_py 'r["workers"]' <<<"$js")" = 1 ]
check "status --json: zones[0].serial is the SOA serial of the file" [ "$(jq_py 'r["zones"][0]["serial"]' <<<"$js")" = "$SERIAL0" ]
check "status --json: per-core replicas by default" [ "$(jq_py 'r["replicas"]' <<<"$js")" = per-core ]
RELOADS_OK=$(jq_py 'r["reloads"]["ok"]' <<<"$js")
RELOADS_FAILED=$(jq_py 'r["reloads"]["failed"]' <<<"$js")

out=$(ctl workers 2>&1); rc=$?
check "workers exits 0 with a header and one row" [ $rc -eq 0 -a "$(wc -l <<<"$out")" -eq 2 ]
js=$(ctl --json workers)
check "workers: one worker, heartbeat age under 500 ms ($(jq_py 'r["workers"][0]["heartbeat_age_ms"]' <<<"$js") ms)" \
	$PY -c 'import json,sys; w=json.loads(sys.argv[1])["workers"]; sys.exit(not (len(w)==1 and 0 <= w[0]["heartbeat_age_ms"] < 500))' "$js"

out=$(ctl zone list 2>&1); rc=$?
check "zone list exits 0 and lists example.com. with serial $SERIAL0" \
	bash -c '[ $0 -eq 0 ] && grep -qE "^  example\.com\. +serial $1 " <<<"$2"' "$rc" "$SERIAL0" "$out"

# DNSSEC: a signed zone (signed until 2037-12-31 00:00 UTC) and the health seam's facts
check "zone list shows nsec.test. signed (nsec) and not within the signature margin" \
	bash -c 'grep -qE "^  nsec\.test\. .*signed \(nsec\), RRSIGs expire in [0-9]+ h$" <<<"$0"' "$out"
js=$(ctl --json zone list)
check "zone list --json: nsec.test. dnssec {signed, nsec, expires 2145830400, within_margin false}; example.com. unsigned" \
	$PY -c 'import json,sys; z={x["name"]: x["dnssec"] for x in json.loads(sys.argv[1])["zones"]}; d=z["nsec.test."]
sys.exit(not (d["signed"] and d["denial"] == "nsec" and d["expires"] == 2145830400 and not d["within_margin"]
              and d["expires_in"] > 0 and z["example.com."] == {"signed": False, "denial": "none"}))' "$js"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 +dnssec @"$V4" www.nsec.test A 2>&1)
check "kdig +dnssec www.nsec.test A: the A and its RRSIG, AD not set" \
	bash -c 'grep -qE "RRSIG[[:space:]]+A 13 3" <<<"$0" && grep -qiE "flags: qr aa" <<<"$0" && ! grep -qiE "flags:[^;]* ad[ ;]" <<<"$0"' "$out"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 +dnssec @"$V4" nope.nsec.test A 2>&1)
check "kdig +dnssec nope.nsec.test A: NXDOMAIN with NSEC records and their RRSIGs" \
	bash -c 'grep -q "status: NXDOMAIN" <<<"$0" && grep -qE "[[:space:]]NSEC[[:space:]]" <<<"$0" && grep -qE "RRSIG[[:space:]]+NSEC " <<<"$0"' "$out"

for i in $(seq 1 5); do ip netns exec "$CLIENT_NS" kdig +time=1 +retry=0 @"$V4" www.example.com A >/dev/null 2>&1; done
out=$(ctl stats 2>&1); rc=$?
check "stats exits 0 and counts queries" bash -c '[ $0 -eq 0 ] && grep -qE "^queries [1-9]" <<<"$1"' "$rc" "$out"
before=$(ctl --json stats | jq_py 'r["stats"]["queries"]')
# The kernel's AF_XDP socket counters (XDP_STATISTICS): where a frame lost before pop53 saw it
# is counted (a full RX ring, an empty fill ring); numbers, 0 here at a few queries.
js=$(ctl --json stats)
check "stats --json: port.xsk_drops has rx_ring_full and rx_dropped, port.xsk_ring_empty fill and tx" \
	$PY -c 'import json,sys; p=json.loads(sys.argv[1])["stats"]["port"]; d=p["xsk_drops"]; e=p["xsk_ring_empty"]
sys.exit(not all(isinstance(v, int) and v >= 0 for v in (d["rx_ring_full"], d["rx_dropped"], d["rx_invalid_desc"], d["tx_invalid_desc"], e["fill"], e["tx"])))' "$js"
out=$(ctl stats --reset 2>&1); rc=$?
check "stats --reset exits 0 and says so" bash -c '[ $0 -eq 0 ] && grep -q "counters reset" <<<"$1"' "$rc" "$out"
after=$(ctl --json stats | jq_py 'r["stats"]["queries"]')
check "after stats --reset the query counter is back near 0 ($before -> $after)" [ "$after" -le 2 -a "$before" -ge 5 ]

out=$(ctl zone reload example.com 2>&1); rc=$?
check "zone reload example.com exits 0" bash -c '[ $0 -eq 0 ] && grep -q "^reloaded in" <<<"$1"' "$rc" "$out"
out=$(ctl zone reload example.com. 2>&1); rc=$?
check "zone reload example.com. (absolute) exits 0" [ $rc -eq 0 ]
out=$(ctl zone reload nope.org 2>/dev/null); rc=$?
err=$(ctl zone reload nope.org 2>&1 >/dev/null)
check "zone reload nope.org exits 1, nothing on stdout" [ $rc -eq 1 -a -z "$out" ]
check "zone reload nope.org says the zone is not configured ($err)" grep -q "zone 'nope.org' is not in $CFG" <<<"$err"
out=$(ctl reload 2>&1); rc=$?
check "reload exits 0" bash -c '[ $0 -eq 0 ] && grep -q "^reloaded in" <<<"$1"' "$rc" "$out"

check "config check of the running config exits 0" bash -c '"$0" -s "$1" config check "$2" | grep -q "^ok: [0-9]* records"' "$CTL" "$SOCK" "$CFG"
check "config check with a relative path exits 0" bash -c 'cd "$(dirname "$2")" && "$0" -s "$1" config check "$(basename "$2")" >/dev/null' "$CTL" "$SOCK" "$CFG"
# Regression (security): `config check` made the root daemon open a path the client chose.
# It runs in pop53ctl now: it works with no daemon at all, the daemon refuses the command,
# and a FIFO is refused without hanging anyone.
check "config check works with no pop53d to talk to" \
	bash -c '"$0" -s /nonexistent/sock config check "$1" | grep -q "^ok: "' "$CTL" "$CFG"
out=$($PY "$HELPER" "$SOCK" request config check "$CFG" 2>&1)
check "the daemon refuses config check over the socket ($out)" grep -q "runs in pop53ctl itself" <<<"$out"
mkfifo "$TMP/fifo.yaml"
err=$(timeout 5 "$CTL" config check "$TMP/fifo.yaml" 2>&1); rc=$?
check "config check of a FIFO exits 1 at once: not a regular file ($err)" \
	bash -c '[ $0 -eq 1 ] && grep -q "not a regular file" <<<"$1"' "$rc" "$err"
sed 's/^  workers: 1$/  workers: lots/' "$CFG" >"$TMP/bad.yaml"
err=$(ctl config check "$TMP/bad.yaml" 2>&1); rc=$?
check "config check of a bad config exits 1 with file:line: ($err)" \
	bash -c '[ $0 -eq 1 ] && grep -qE "$1:[0-9]+: " <<<"$2"' "$rc" "$TMP/bad.yaml" "$err"
sed "s#file: $ZONE#file: $TMP/badzone.zone#" "$CFG" >"$TMP/badzone.yaml"
printf '$ORIGIN example.com.\n$TTL 60\n@ IN SOA ns1 h 1 2 3 4 5\n@ IN NS ns1\nns1 IN A 192.0.2.1\nwww IN A 192.0.2.2\nwww IN CNAME ns1\n' >"$TMP/badzone.zone"
err=$(ctl config check "$TMP/badzone.yaml" 2>&1); rc=$?
check "config check of a config with a bad zone exits 1 with zonefile:line: ($err)" \
	bash -c '[ $0 -eq 1 ] && grep -qE "$1:[0-9]+: " <<<"$2"' "$rc" "$TMP/badzone.zone" "$err"
err=$(ctl config check "$TMP/missing.yaml" 2>&1); rc=$?
check "config check of a missing file exits 1 ($err)" [ $rc -eq 1 ]

err=$(ctl frobnicate 2>&1); rc=$?
check "unknown command exits 1 and lists the commands" bash -c '[ $0 -eq 1 ] && grep -q "unknown command .frobnicate." <<<"$1"' "$rc" "$err"
err=$(ctl zone 2>&1); rc=$?
check "incomplete command (zone) exits 1" [ $rc -eq 1 ]
err=$("$CTL" 2>&1); rc=$?
check "no command: usage, exit 2" bash -c '[ $0 -eq 2 ] && grep -q "^usage: pop53ctl" <<<"$1"' "$rc" "$err"
err=$("$CTL" -s "$TMP/ctl/nobody.sock" status 2>&1); rc=$?
check "wrong socket path: exit 2, says cannot connect ($err)" \
	bash -c '[ $0 -eq 2 ] && grep -q "cannot connect to .*nobody.sock.*is pop53d running" <<<"$1"' "$rc" "$err"

# --- 2. socket permissions --------------------------------------------------------------
perm=$(stat -c '%A %G' "$SOCK")
check "control socket is srw-rw---- group $GROUP ($perm)" [ "$perm" = "srw-rw---- $GROUP" ]

# --- 3. malformed socket input ----------------------------------------------------------
for mode in oversized badjson object nonstring empty-array truncated idle; do
	out=$($PY "$HELPER" "$SOCK" "$mode" 2>&1); rc=$?
	check "raw socket: $out" [ $rc -eq 0 ]
done
out=$($PY "$HELPER" "$SOCK" concurrent 20 2>&1); rc=$?
n_ok=$(grep -o 'ok=[0-9]*' <<<"$out" | cut -d= -f2)
n_busy=$(grep -o 'busy=[0-9]*' <<<"$out" | cut -d= -f2)
check "raw socket: $out (no hang, no garbage)" [ $rc -eq 0 ]
# Regression: one client could hold every slot. One uid gets at most 8 of the 16 at once; the
# others are told "busy" with a retry time, never left hanging.
check "raw socket: 20 concurrent clients of one uid: at least 8 answered, the rest told busy" \
	[ "${n_ok:-0}" -ge 8 -a $(( ${n_ok:-0} + ${n_busy:-0} )) -eq 20 -a "${n_busy:-0}" -ge 1 ]
# ...and while root holds its 8 slots with silent clients, another user is still served.
chmod 711 "$TMP" # so that user can reach the socket (mode 0660, group $GROUP)
$PY "$HELPER" "$SOCK" hold 8 1.5 >"$TMP/hold.out" 2>&1 &
hold_pid=$!
sleep 0.3
out=$(setpriv --reuid=nobody --regid=nogroup --groups="$(getent group "$GROUP" | cut -d: -f3)" \
	$PY "$HELPER" "$SOCK" request status 2>&1)
check "another uid is served while root holds its 8 slots ($out)" grep -q '"ok": true' <<<"$out"
out=$($PY "$HELPER" "$SOCK" request status 2>&1)
check "root's 9th connection meanwhile is told busy with retry_ms ($out)" \
	bash -c 'grep -q "\"busy\": true" <<<"$0" && grep -q "retry_ms" <<<"$0"' "$out"
wait $hold_pid
# 20 pop53ctl processes at once, as 20 operators' scripts would: pop53ctl waits and retries
# when told busy, so every one is answered.
pids=
for i in $(seq 1 20); do ctl status >"$TMP/par.$i" 2>&1 & pids="$pids $!"; done
wait $pids
par_ok=$(grep -l 'identity test-pop' "$TMP"/par.* | wc -l)
check "20 pop53ctl status in parallel: all answered ($par_ok)" [ "$par_ok" -eq 20 ]
# Rate: a burst of 40 requests, then 20 per second, per uid (after a pause that refills it).
sleep 2.5
out=$($PY "$HELPER" "$SOCK" burst 80 2>&1)
n_ok=$(grep -o 'ok=[0-9]*' <<<"$out" | cut -d= -f2); n_busy=$(grep -o 'busy=[0-9]*' <<<"$out" | cut -d= -f2)
check "80 back-to-back requests: the burst is served, the excess told busy ($out)" \
	[ "${n_ok:-0}" -ge 40 -a "${n_busy:-0}" -ge 1 -a $(( ${n_ok:-0} + ${n_busy:-0} )) -eq 80 ]
sleep 2.5 # the budget refills
check "pop53d still running after the malformed input" kill -0 "$POP53_PID"
check "status still answered after the malformed input" bash -c '"$0" -s "$1" status >/dev/null' "$CTL" "$SOCK"
check "DNS still answered after the malformed input" [ "$(dns_serial)" = "$SERIAL0" ]

# --- 4. SIGHUP --------------------------------------------------------------------------
RELOADS_OK=$(status_json | jq_py 'r["reloads"]["ok"]')
SERIAL1=$((SERIAL0 + 1))
set_zone "$SERIAL1" 192.0.2.181
kill -HUP "$POP53_PID"
check "SIGHUP: kdig sees the new serial $SERIAL1 within 5 s" wait_for 5 serial_is "$SERIAL1"
check "SIGHUP: www A is the new address" [ "$(www_a)" = 192.0.2.181 ]
js=$(status_json)
check "SIGHUP: reloads ok incremented ($RELOADS_OK -> $(jq_py 'r["reloads"]["ok"]' <<<"$js"))" \
	[ "$(jq_py 'r["reloads"]["ok"]' <<<"$js")" -eq $((RELOADS_OK + 1)) ]
check "SIGHUP: status shows serial $SERIAL1" [ "$(jq_py 'r["zones"][0]["serial"]' <<<"$js")" = "$SERIAL1" ]
check "SIGHUP: logged" grep -q 'SIGHUP: reloading config and zones' "$TMP/pop53d.log"

# --- 5. a bad zone on reload: rejected, the old data still served -----------------------
RELOADS_FAILED=$(jq_py 'r["reloads"]["failed"]' <<<"$js")
set_zone $((SERIAL1 + 1)) 192.0.2.182 $'www\t300 IN CNAME\tapi.example.com.'
err=$(ctl zone reload 2>&1); rc=$?
check "bad zone (CNAME and A at www): zone reload exits 1" [ $rc -eq 1 ]
check "bad zone: the message is file:line: reason ($err)" grep -qE "$ZONE:[0-9]+: .*[Cc][Nn][Aa][Mm][Ee]" <<<"$err"
check "bad zone: kdig still gets the old serial $SERIAL1" [ "$(dns_serial)" = "$SERIAL1" ]
check "bad zone: www A is still the old address" [ "$(www_a)" = 192.0.2.181 ]
js=$(status_json)
check "bad zone: reloads failed incremented" [ "$(jq_py 'r["reloads"]["failed"]' <<<"$js")" -eq $((RELOADS_FAILED + 1)) ]
check "bad zone: last_error set" bash -c 'grep -qE "$0:[0-9]+: " <<<"$1"' "$ZONE" "$(jq_py 'r["reloads"]["last_error"]' <<<"$js")"
check "bad zone: status (text) shows the last error" bash -c '"$0" -s "$1" status | grep -q "failed; last error: $2"' "$CTL" "$SOCK" "$ZONE"
# No SOA: rejected too; SIGHUP rejected the same way (nothing to read but the log).
awk '/IN SOA/ {skip = 1} !skip {print} skip && /\)/ {skip = 0}' "$SRC/zones/example.com.zone" >"$ZONE.tmp"
cat "$ZONE.tmp" >"$ZONE"; rm -f "$ZONE.tmp"
err=$(ctl zone reload example.com 2>&1); rc=$?
check "zone without SOA: reload exits 1 with file:line: no SOA ($err)" \
	bash -c '[ $0 -eq 1 ] && grep -qE "$1:[0-9]+: no SOA" <<<"$2"' "$rc" "$ZONE" "$err"
rejected=$(grep -c "reload rejected, still serving" "$TMP/pop53d.log")
kill -HUP "$POP53_PID"
check "SIGHUP with a bad zone: rejection logged" wait_for 5 bash -c '[ $(grep -c "reload rejected, still serving" "$0") -gt "$1" ]' "$TMP/pop53d.log" "$rejected"
check "after the rejected reloads: old serial still served" [ "$(dns_serial)" = "$SERIAL1" ]

# --- 7. Prometheus ----------------------------------------------------------------------
set_zone "$SERIAL1" 192.0.2.181
ctl stats --reset >/dev/null
m0=$(metrics)
curl_h=$(ip netns exec "$POP_NS" curl -s --max-time 5 -o /dev/null -w '%{http_code} %{content_type}' "http://$METRICS/metrics")
check "metrics: 200 text/plain ($curl_h)" grep -qE '^200 text/plain' <<<"$curl_h"
noerr0=$(metric 'pop53_responses_total{rcode="NOERROR"}' <<<"$m0")
nx0=$(metric 'pop53_responses_total{rcode="NXDOMAIN"}' <<<"$m0")
got_ok=0; got_nx=0
for i in $(seq 1 25); do
	case $((i % 5)) in
	0) q="www.example.com A" ;; 1) q="example.com SOA" ;; 2) q="api.example.com AAAA" ;;
	3) q="mail.example.com MX" ;; 4) q="x$i.img.example.com A" ;;
	esac
	ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 @"$V4" $q 2>/dev/null | grep -q 'status: NOERROR' && got_ok=$((got_ok + 1))
done
for i in $(seq 1 10); do
	ip netns exec "$CLIENT_NS" kdig +time=2 +retry=0 @"$V6" "nx$i.example.com" A 2>/dev/null | grep -q 'status: NXDOMAIN' && got_nx=$((got_nx + 1))
done
check "metrics: the 25 + 10 queries were answered ($got_ok NOERROR, $got_nx NXDOMAIN)" [ $got_ok -eq 25 -a $got_nx -eq 10 ]
m1=$(metrics)
check "metrics: the AF_XDP socket drops are exported (pop53_port_xsk_drops_total{reason=\"rx_ring_full\"})" \
	grep -qE '^pop53_port_xsk_drops_total\{reason="rx_ring_full"\} [0-9]+$' <<<"$m1"
noerr1=$(metric 'pop53_responses_total{rcode="NOERROR"}' <<<"$m1")
nx1=$(metric 'pop53_responses_total{rcode="NXDOMAIN"}' <<<"$m1")
check "metrics: NOERROR responses +25 ($noerr0 -> $noerr1)" [ $((noerr1 - noerr0)) -eq 25 ]
check "metrics: NXDOMAIN responses +10 ($nx0 -> $nx1)" [ $((nx1 - nx0)) -eq 10 ]
check "metrics: pop53_zone_serial{zone=\"example.com.\"} is $SERIAL1" [ "$(metric 'pop53_zone_serial{zone="example.com."}' <<<"$m1")" = "$SERIAL1" ]
check "metrics: pop53_up with the identity" grep -q '^pop53_up{identity="test-pop",' <<<"$m1"
check "metrics: failed reloads counted" [ "$(metric 'pop53_reloads_total{result="failed"}' <<<"$m1")" -ge 3 ]
check "metrics: every sample line is NAME[{labels}] NUMBER" bash -c '! grep -vE "^(# (HELP|TYPE) .*|[a-z_0-9]+(\{[^}]*\})? [0-9.e+-]+)$" <<<"$0"' "$m1"
code=$(ip netns exec "$POP_NS" curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://$METRICS/nope")
check "metrics: /nope is 404 ($code)" [ "$code" = 404 ]
code=$(ip netns exec "$POP_NS" curl -s --max-time 5 -o /dev/null -w '%{http_code}' -X POST "http://$METRICS/metrics")
check "metrics: POST is 405 ($code)" [ "$code" = 405 ]
js=$(ctl --json stats)
check "stats agree with the endpoint: NXDOMAIN $nx1" [ "$(jq_py 'r["stats"]["rcode"]["NXDOMAIN"]' <<<"$js")" = "$nx1" ]

# --- 8. DPDK telemetry ------------------------------------------------------------------
TEL=/var/run/dpdk/$EAL_PREFIX/dpdk_telemetry.v2
if [ -S "$TEL" ]; then
	out=$($PY "$HELPER" "$TEL" telemetry /pop53/stats 2>&1)
	q=$(jq_py 'r["queries"]' <<<"$out" 2>/dev/null)
	check "telemetry /pop53/stats: queries > 0 ($q)" [ "${q:-0}" -gt 0 ]
	out=$($PY "$HELPER" "$TEL" telemetry /pop53/workers 2>&1)
	rx=$(jq_py 'r["worker0_rx"]' <<<"$out" 2>/dev/null)
	check "telemetry /pop53/workers: worker0_rx > 0 ($rx)" [ "${rx:-0}" -gt 0 ]
	if [ -x /usr/bin/dpdk-telemetry.py ]; then
		out=$(timeout 10 /usr/bin/dpdk-telemetry.py -f "$EAL_PREFIX" <<<"/pop53/stats" 2>&1)
		check "dpdk-telemetry.py -f $EAL_PREFIX reads /pop53/stats" grep -q '"queries"' <<<"$out"
	fi
else
	echo "# SKIP telemetry: no socket at $TEL with --in-memory (ls: $(ls "/var/run/dpdk/$EAL_PREFIX" 2>&1 | tr '\n' ' '))"
fi

# --- config reload: a restart-only change is reported, not applied ----------------------
control_config "$CFG" false 2
out=$(ctl reload 2>&1); rc=$?
check "reload with dataplane.workers changed: ok, with a restart note ($(grep note <<<"$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^note: dataplane.workers: changed, applied at the next restart" <<<"$1"' "$rc" "$out"
check "after that reload: status still shows 1 worker" [ "$(status_json | jq_py 'r["workers"]')" = 1 ]
check "after that reload: DNS still answered" [ "$(dns_serial)" = "$SERIAL1" ]

# --- 9. clean stop ----------------------------------------------------------------------
check "run 1: SIGTERM -> exit 0" stop_pop53
check "run 1: socket file removed" [ ! -e "$SOCK" ]
err=$(ctl status 2>&1); rc=$?
check "no daemon: status exits 2 and says cannot connect ($err)" \
	bash -c '[ $0 -eq 2 ] && grep -q "cannot connect to" <<<"$1"' "$rc" "$err"
check "run 1: no mbuf leak" grep -q 'no leak' "$TMP/pop53d.log"
# dataplane.workers changed to 2 by the reload above: the exit log must still report the one
# worker that ran (not read a second, nonexistent one).
check "run 1: the exit log reports only the 1 worker that ran" [ "$(grep -cE 'worker [0-9]+ \(lcore' "$TMP/pop53d.log")" -eq 1 ]
[ "$FAIL" -eq 0 ] || cat "$TMP/pop53d.log"
cp "$TMP/pop53d.log" "$TMP/pop53d.run1.log"

# --- a control_socket path that is not a socket: refuse, never delete the file -----------
control_config "$CFG" false
NOTSOCK=$TMP/ctl/not-a-socket
echo "precious" >"$NOTSOCK"
sed -i "s#control_socket: $SOCK#control_socket: $NOTSOCK#" "$CFG"
start_pop53 "$CFG"
# Bounded: pop53d either exits (refused) or gets as far as listening.
wait_for 10 bash -c '! kill -0 "$0" 2>/dev/null || grep -q "ready:" "$1"' "$POP53_PID" "$TMP/pop53d.log"
refused=0; kill -0 "$POP53_PID" 2>/dev/null || refused=1
check "control_socket naming a regular file: the file is left alone" [ -f "$NOTSOCK" ]
check "control_socket naming a regular file: pop53d refuses to start" [ $refused -eq 1 ]
stop_pop53 >/dev/null 2>&1 || true
POP53_PID=
rm -f "$NOTSOCK"

# --- 6. zone watching (run 2) -----------------------------------------------------------
set_zone "$SERIAL0" 192.0.2.80
control_config "$CFG" true "" 4096
start_or_die "run 2, watch_zones"
check "run 2: rx_desc 4096 above the PMD's 2048 buffers is warned about" \
	grep -q 'port net_af_xdp0: 4096 rx descriptors, but net_af_xdp holds only 2048 buffers per queue' "$TMP/pop53d.log"
check "run 2: watching logged" grep -q 'watching 2 zone file(s), reload after 200 ms' "$TMP/pop53d.log"
SERIAL2=$((SERIAL0 + 7))
sed -e "s/$SERIAL0 ; serial/$SERIAL2 ; serial/" -e "s/^\(www\t\+300 IN A\t\).*/\1192.0.2.183/" \
	"$SRC/zones/example.com.zone" >"$ZDIR/.example.com.zone.rsync-tmp"
mv "$ZDIR/.example.com.zone.rsync-tmp" "$ZONE"
check "watch: kdig sees serial $SERIAL2 within 3 s of the rename" wait_for 3 serial_is "$SERIAL2"
check "watch: www A is the new address" [ "$(www_a)" = 192.0.2.183 ]
# A burst of writes in place is one reload after the quiet period.
r0=$(status_json | jq_py 'r["reloads"]["ok"]')
for s in 1 2 3 4 5; do set_zone $((SERIAL2 + s)) 192.0.2.183; sleep 0.05; done
check "watch: in-place edits reloaded (serial $((SERIAL2 + 5)))" wait_for 3 serial_is "$((SERIAL2 + 5))"
sleep 0.5
r1=$(status_json | jq_py 'r["reloads"]["ok"]')
check "watch: a burst of 5 writes is debounced into 1-2 reloads ($r0 -> $r1)" [ $((r1 - r0)) -ge 1 -a $((r1 - r0)) -le 2 ]
# An unrelated file in the watched directory does not reload.
r0=$r1
echo x >"$ZDIR/other.txt"
sleep 0.6
check "watch: an unrelated file in the directory does not reload" [ "$(status_json | jq_py 'r["reloads"]["ok"]')" = "$r0" ]
# A broken file is rejected and the last good data stays.
set_zone $((SERIAL2 + 9)) 192.0.2.184 $'www\t300 IN CNAME\tapi.example.com.'
check "watch: a broken zone is rejected (logged)" wait_for 3 grep -q 'reload rejected, still serving' "$TMP/pop53d.log"
check "watch: old serial still served" [ "$(dns_serial)" = "$((SERIAL2 + 5))" ]
check "run 2: SIGTERM -> exit 0" stop_pop53
check "run 2: socket file removed" [ ! -e "$SOCK" ]
check "run 2: no mbuf leak" grep -q 'no leak' "$TMP/pop53d.log"
[ "$FAIL" -eq 0 ] || cat "$TMP/pop53d.log"
finish
