#!/usr/bin/env bash
# Transfers while the workers are under load, and an IXFR of 100 changes on a large zone.
#
# 1. No query lost to transfers: kxdpgun sends a fixed rate of queries (the primary zone
#    example.com and the secondary sec.test) twice: once without transfers (the baseline),
#    once while knotd changes sec.test 20 times (NOTIFY, IXFR, publish each) and pop53ctl asks
#    for 2 AXFRs. Every run must lose no more queries than the baseline, and answer no fewer
#    NOERROR (a SERVFAIL or a missing zone during a publish would show here).
# 2. A larger secondary zone (scripts/bench/genzone.py, XFR_BIG_N records, default 20,000):
#    the first AXFR, then one IXFR of 100 changes (50 names added, 25 A deleted, 25 A changed)
#    while kxdpgun runs: it arrives as one IXFR, is patched into the running image (not
#    compiled: control/zone/image_patch.c), every change is served, untouched records are
#    unchanged, no query is lost. The same at 1M records, with times and memory, is
#    scripts/bench/xfr.sh (speed is measured there, not here).
#
# Environment: XFR_LOAD_SECONDS (each kxdpgun run, default 8), XFR_LOAD_QPS (default 20000),
# XFR_BIG_N (default 20000; 0 skips part 2).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfr_lib.sh"
# shellcheck source=../../scripts/bench/lib.sh
. "$SRC/scripts/bench/lib.sh" # bench_kxdpgun, bench_parse_kxdpgun, bench_big_zone, bench_xdp_off

SECS=${XFR_LOAD_SECONDS:-8}
QPS=${XFR_LOAD_QPS:-20000}
BIG_N=${XFR_BIG_N:-20000}
CHANGER_PID=

xfr_cleanup_test() {
	[ -z "$CHANGER_PID" ] || { kill "$CHANGER_PID" 2>/dev/null; wait "$CHANGER_PID" 2>/dev/null; }
	bench_xdp_off
}
xfr_begin

BIG=
if [ "$BIG_N" -gt 0 ]; then
	BIG=$(bench_big_zone "$BIG_N" "$BUILD/bench") || { not_ok "big zone generated"; finish; exit 1; }
fi
xfr_lab_up
bench_xdp_off
zones=(sec.test)
[ -z "$BIG" ] || zones+=(big.test)
knotd_conf "${zones[@]}"
knot_zone sec.test 1
# knotd reads big.test from the generated file; its changes stay in knotd's journal.
[ -z "$BIG" ] || cp "$BIG" "$KNOT_DIR/big.test.zone"
knotd_up
[ -z "$BIG" ] || wait_for 60 sh -c "ip netns exec $PRIMARY_NS kdig +time=1 +short @$PRIMARY_V4 big.test SOA | grep -q ." ||
	not_ok "knotd serves big.test"

sec="  - name: sec.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]"
[ -z "$BIG" ] || sec="$sec
  - name: big.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]"
XFR_TIMEOUT_MS=10000 xfr_config "$TMP/pop53.yaml" "$sec"
start_pop53_answering "$TMP/pop53.yaml"
check "sec.test transferred" wait_for 10 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 www.sec.test A)\" = 192.0.2.80 ]"

printf '%s\n' "www.sec.test A" "sec.test SOA" "nope.sec.test A" "www.example.com A" \
	"example.com MX" "www.sec.test AAAA" >"$TMP/queries"
# run_load OUT: one kxdpgun run; OUT.parsed holds "sent replies noerror seconds".
run_load() {
	bench_kxdpgun "$1" "$SECS" "$QPS" "$TMP/queries" && bench_parse_kxdpgun "$1" >"$1.parsed"
}
field() { awk -v f="$2" '{ print $f }' "$1.parsed"; }   # field OUT 1..4
lost_of() { awk '{ print $1 - $2 }' "$1.parsed"; }
# no_worse_than_baseline WHAT OUT: lost and NOERROR-answered counts against the baseline's.
no_worse_than_baseline() {
	local what=$1 out=$2 b x
	[ -s "$out.parsed" ] && [ -s "$TMP/base.out.parsed" ] || { not_ok "$what: no kxdpgun figures"; return; }
	b=$(lost_of "$TMP/base.out"); x=$(lost_of "$out")
	check "$what: no query lost (lost $x of $(field "$out" 1), baseline $b)" [ "$x" -le "$b" ]
	# The same queries in the same order: the share answered other than NOERROR (1 in 6 is
	# NXDOMAIN) must be the baseline's, give or take one query; a SERVFAIL or a missing zone
	# during a publish would raise it.
	b=$(awk '{ print $2 - $3 }' "$TMP/base.out.parsed"); x=$(awk '{ print $2 - $3 }' "$out.parsed")
	check "$what: answered as without transfers ($x of $(field "$out" 2) not NOERROR, baseline $b of $(field "$TMP/base.out" 2))" \
		[ $((x * $(field "$TMP/base.out" 2))) -le $((b * $(field "$out" 2) + $(field "$TMP/base.out" 2))) ]
}

# 1. Baseline, then the same load during 20 IXFRs and 2 AXFRs of sec.test.
if run_load "$TMP/base.out"; then
	ok "baseline load run: $(cat "$TMP/base.out.parsed") (sent replies noerror seconds)"
else
	not_ok "baseline load run"; cat "$TMP/base.out"
fi
(
	sleep 0.5
	for i in $(seq 1 20); do
		knotc zone-begin sec.test >/dev/null
		knotc zone-set sec.test "load$i" 300 A "192.0.2.$i" >/dev/null
		knotc zone-commit sec.test >/dev/null
		[ $((i % 10)) -ne 5 ] || CTL zone retransfer sec.test >/dev/null
		sleep 0.3
	done
) &
CHANGER_PID=$!
run_load "$TMP/xfr.out" || { not_ok "load run during transfers"; cat "$TMP/xfr.out"; }
wait "$CHANGER_PID"
CHANGER_PID=
no_worse_than_baseline "during 20 IXFRs and 2 AXFRs" "$TMP/xfr.out"
check "all 20 changes arrived (serial 21)" \
	wait_for 10 serial_is "$CLIENT_NS" "$V4" sec.test 21
check "load20.sec.test is served" [ "$(dig_rr load20.sec.test)" = 192.0.2.20 ]
# NOTIFYs that arrive during a transfer are folded into the next one, so fewer than 20.
n_ixfr=$(grep -c "zone sec.test.: .*IXFR to serial" "$TMP/pop53d.log")
n_axfr=$(( $(grep -c "zone sec.test.: .*AXFR to serial" "$TMP/pop53d.log") - 1 ))
check "transfers happened during the load ($n_ixfr IXFRs, $n_axfr AXFRs after the first)" \
	test "$n_ixfr" -ge 5 -a "$n_axfr" -ge 1

# 2. The larger zone.
if [ -n "$BIG" ]; then
	serial=$(ip netns exec "$PRIMARY_NS" kdig +short @"$PRIMARY_V4" big.test SOA | awk '{ print $3 }')
	check "big.test ($BIG_N records) transferred by AXFR" \
		wait_for 120 serial_is "$CLIENT_NS" "$V4" big.test "$serial"
	# Records the changes leave alone, as the generator wrote them.
	untouched=(host000001.region1 host000150.region22 host000300.region44)
	want=()
	for n in "${untouched[@]}"; do
		want+=("$(awk -v o="$n" '$1 == o && $2 == "A" { print $3; exit }' "$BIG")")
	done
	# 100 changes: 50 names added, 25 A records deleted, 25 A records changed.
	{
		echo "zone-begin big.test"
		for i in $(seq 1 50); do echo "zone-set big.test added$i.region0 3600 A 198.18.0.$i"; done
		for i in $(seq 100 124); do printf 'zone-unset big.test host%06d.region%d A\n' "$i" $((i % 128)); done
		for i in $(seq 200 224); do
			printf 'zone-unset big.test host%06d.region%d A\n' "$i" $((i % 128))
			printf 'zone-set big.test host%06d.region%d 3600 A 198.18.1.%d\n' "$i" $((i % 128)) $((i - 200))
		done
		echo "zone-commit big.test"
	} >"$TMP/changes"
	( sleep 1; while read -r cmd; do knotc $cmd >/dev/null || echo "knotc $cmd failed" >&2; done <"$TMP/changes" ) &
	CHANGER_PID=$!
	run_load "$TMP/big.out" || { not_ok "load run during the big IXFR"; cat "$TMP/big.out"; }
	wait "$CHANGER_PID"
	CHANGER_PID=
	new=$((serial + 1))
	check "the 100 changes arrived (serial $new)" \
		wait_for 30 serial_is "$CLIENT_NS" "$V4" big.test "$new"
	st=$(CTL zone status big.test | grep 'last transfer')
	echo "# $st"
	check "it was one IXFR: 51 records deleted, 76 added (the SOAs included)" \
		grep -q "IXFR to serial $new: 51 deleted, 76 added" <<<"$st"
	check "the IXFR was patched into the running image, not compiled (zone status last_ixfr_image)" \
		sh -c "$BUILD/control/pop53ctl -s $TMP/control.sock --json zone status big.test | grep -q '\"last_ixfr_image\":\"patched\"'"
	good=0
	for i in 1 17 50; do [ "$(dig_rr "added$i.region0.big.test")" = "198.18.0.$i" ] && good=$((good + 1)); done
	for i in 100 113 124; do
		n=$(printf 'host%06d.region%d.big.test' "$i" $((i % 128)))
		rc=$(dig_rcode "$n" A)
		{ [ "$rc" = NOERROR ] || [ "$rc" = NXDOMAIN ]; } && [ -z "$(dig_rr "$n")" ] && good=$((good + 1))
	done
	for i in 200 212 224; do [ "$(dig_rr "$(printf 'host%06d.region%d.big.test' "$i" $((i % 128)))")" = "198.18.1.$((i - 200))" ] && good=$((good + 1)); done
	check "added, deleted and changed records are served as the primary has them ($good/9 sampled)" [ "$good" -eq 9 ]
	same=0
	for k in 0 1 2; do
		[ -n "${want[$k]}" ] && [ "$(dig_rr "${untouched[$k]}.big.test")" = "${want[$k]}" ] && same=$((same + 1))
	done
	check "untouched records are unchanged ($same/3: ${untouched[*]})" [ "$same" -eq 3 ]
	no_worse_than_baseline "during the big.test IXFR" "$TMP/big.out"
fi

stop_pop53
check "clean exit" grep -q "no leak" "$TMP/pop53d.log"
finish
