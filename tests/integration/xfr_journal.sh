#!/usr/bin/env bash
# pop53d's IXFR history survives a restart (control/xfr/journal.h): pop53d is a secondary of a
# hidden primary (knotd, xfr_lib.sh) and a primary to a lower-tier knotd. The lower tier takes
# serial 1; the primary changes twice (serials 2 and 3, applied by pop53 as IXFRs); pop53d is
# restarted; then kdig's IXFR=1 over TCP gets the two differences (not the whole zone), equal
# to the primary's, and the lower tier's refresh takes them by IXFR from pop53 too. A journal
# file corrupted while pop53d is down is ignored with the reason in the log, and IXFR=1 is then
# answered with the whole zone (AXFR-style), as before this existed.
# Appending (journal.h): three more IXFRs in a row grow the same file in place (its inode kept),
# a restart serves all five steps; a crash while the last step was appended (its disk copy not
# yet renamed: the old copy put back, the journal cut a few bytes short) keeps the good prefix,
# says why and truncates the file to it, serves IXFR from it, and appends after it again.
# Those parts run with xfr.copy_sync_s: 0 (the disk copy rewritten at every change).
# The lazy disk copy (xfr.copy_sync_s: 300, the default): after an IXFR only the journal step
# is appended (the copy keeps its serial, its mtime is touched); a journal file rewritten with
# a step from the copy's serial (the first IXFR after the journal was reset) leaves the copy as
# it is; pop53d killed (-9, no clean stop) with the primary down serves the newest serial at
# once (copy + journal steps), and the lower tier's IXFR from pop53 still gets differences; a
# clean stop writes the copy; `pop53ctl zone flush` writes it on demand; with copy_sync_s: 2 (a
# reload) it catches up by itself; a compaction (journal_max_bytes: 600) that drops the copy's
# step writes the copy first, and a kill -9 after it still serves the newest serial.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfr_lib.sh"

xfr_begin

xfr_lab_up
knotd_conf jnl.test
ZONE_REFRESH=2 knot_zone jnl.test 1 "old IN A 192.0.2.7" "t IN TXT \"one\""
knotd_up

XFR_COPY_SYNC=0 xfr_config "$TMP/pop53.yaml" "  - name: jnl.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
    transfer: {allow: [192.0.2.0/24, 198.51.100.0/24], key: xfr.key}"
start_pop53_answering "$TMP/pop53.yaml"
soa_is() { serial_is "$CLIENT_NS" "$V4" jnl.test "$1"; }
check "pop53 transfers jnl.test from the primary (serial 1)" wait_for 10 soa_is 1

# The lower tier: a knotd secondary of pop53 that refreshes only when told (no NOTIFY from
# pop53, refresh-min-interval 3600 s), so it stays at serial 1 until after the restart.
tier_up "zone:
  - domain: jnl.test
    storage: $TIER_DIR
    master: pop
    zonefile-sync: -1
    semantic-checks: off
    refresh-min-interval: 3600
    retry-min-interval: 3600"
tier_soa_is() { serial_is "$PRIMARY_NS" "$TIER_V4" jnl.test "$1"; }
check "the lower-tier knotd transfers jnl.test from pop53 (serial 1)" wait_for 10 tier_soa_is 1

# Two changes at the primary: pop53 applies each as an IXFR.
change() {
	knotc zone-begin jnl.test >/dev/null
	knotc zone-set jnl.test "n$1" 300 A "192.0.2.$((10 + $1))" >/dev/null
	[ "$1" -ne 2 ] || knotc zone-unset jnl.test old A >/dev/null
	knotc zone-commit jnl.test >/dev/null
}
change 1
check "pop53 serves serial 2" wait_for 5 soa_is 2
change 2
check "pop53 serves serial 3" wait_for 5 soa_is 3
check "...applied by IXFR (its log)" \
	sh -c "grep -q 'IXFR to serial 2' $TMP/pop53d.log && grep -q 'IXFR to serial 3' $TMP/pop53d.log"
# The disk job writes it after the publish: wait for it (JNL is set in this shell).
JNL=
jnl_ready() { JNL=$(ls "$TMP"/xfr/*jnl.test*.journal 2>/dev/null | head -1); [ -n "$JNL" ] && [ -s "$JNL" ] && [ -s "${JNL%.journal}" ]; }
check "the journal file is next to the disk copy" wait_for 5 jnl_ready
echo "# journal: ${JNL#$TMP/}"
# The journal is written before the copy: a copy at serial 3 has its journal at 3 too.
check "the disk copy holds serial 3" wait_for 5 grep -q 'SOA.* 3 ' "${JNL%.journal}"

stop_pop53 || true
cp "$TMP/pop53d.log" "$TMP/pop53d.log.1"
start_pop53_answering "$TMP/pop53.yaml"
check "after the restart pop53 serves serial 3 from its disk copy" wait_for 5 soa_is 3
check "...and logged the IXFR history it read back (2 steps, serial 1 to 3)" \
	grep -q "zone jnl.test.*IXFR history from .*jnl.test.*journal: 2 step(s), serial 1 to 3" "$TMP/pop53d.log"
grep 'journal' "$TMP/pop53d.log" | sed 's/^/# /'

KEY="hmac-sha256:xfr.key:$XFR_SECRET"
# jsteps FILE: the journal file's steps, "from-to" each, space-separated (journal.h layout).
jsteps() {
	/usr/bin/python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
at = 13 + b[12]
out = []
while at + 28 <= len(b) and b[at:at + 4] == b"STEP":
    f, t, _, _, db, ab = struct.unpack(">IIIIII", b[at + 4:at + 28])
    out.append("%d-%d" % (f, t))
    at += 28 + db + ab + 4
print(" ".join(out))
PY
}
# records: the transfer's records, TSIG left out, one per line, normalised, sorted.
records() { awk '$0 !~ /^;/ && NF >= 5 && $4 != "TSIG" { $1 = tolower($1); print }' | sort; }
ip netns exec "$CLIENT_NS" kdig +tcp +time=2 -y "$KEY" @"$V4" jnl.test IXFR=1 >"$TMP/ixfr.txt" 2>&1
ip netns exec "$PRIMARY_NS" kdig +tcp +time=2 -y "$KEY" @"$PRIMARY_V4" jnl.test IXFR=1 2>&1 | records >"$TMP/knot_ixfr.txt"
soas() { awk '$0 !~ /^;/ && NF >= 5 && $4 == "SOA"' "$1" | wc -l; }
incremental() {
	[ "$(soas "$TMP/ixfr.txt")" -eq 6 ] && records <"$TMP/ixfr.txt" | diff - "$TMP/knot_ixfr.txt" &&
		! grep -q '^;; \(ERROR\|WARNING\)' "$TMP/ixfr.txt"
}
check "kdig IXFR=1 over TCP after the restart: incremental (6 SOAs: 2 steps), the primary's differences" \
	incremental
check "pop53 logged an IXFR with differences after the restart" \
	grep -q "IXFR of jnl.test. serial 3 (differences) to 192.0.2.1" "$TMP/pop53d.log"
tierc zone-refresh jnl.test >/dev/null
check "the lower tier refreshes to serial 3" wait_for 10 tier_soa_is 3
check "...by IXFR from pop53 (its log: IXFR finished, no AXFR-style answer)" \
	sh -c "grep -q 'IXFR, incoming, remote $V4@53, finished' $TIER_DIR/knotd.log && \
	       ! grep -q 'AXFR-style' $TIER_DIR/knotd.log"
check "...and pop53 logged it sent differences" \
	grep -q "IXFR of jnl.test. serial 3 (differences) to $TIER_V4 (TSIG)" "$TMP/pop53d.log"

# Three more IXFRs in a row: each appended to the same file (no rename: its inode stays).
COPY=${JNL%.journal}
ino=$(stat -c %i "$JNL")
size0=$(stat -c %s "$JNL")
change 3
check "pop53 serves serial 4" wait_for 5 soa_is 4
change 4
check "pop53 serves serial 5" wait_for 5 soa_is 5
check "the disk copy holds serial 5" wait_for 5 grep -q 'SOA.* 5 ' "$COPY"
cp "$COPY" "$TMP/copy.5"
size5=$(stat -c %s "$JNL")
ip netns exec "$PRIMARY_NS" kdig +tcp +time=2 -y "$KEY" @"$PRIMARY_V4" jnl.test IXFR=1 2>&1 | records >"$TMP/knot_ixfr5.txt"
change 5
check "pop53 serves serial 6" wait_for 5 soa_is 6
check "the disk copy holds serial 6" wait_for 5 grep -q 'SOA.* 6 ' "$COPY"
in_place() { [ "$(stat -c %i "$JNL")" = "$ino" ] && [ "$(stat -c %s "$JNL")" -gt "$1" ]; }
check "the journal grew with the IXFRs to 4 and 5 in place (inode $ino, $size0 -> $size5 bytes)" \
	in_place "$size0"
check "...and with the one to 6" wait_for 5 in_place "$size5"
stop_pop53 || true
cp "$TMP/pop53d.log" "$TMP/pop53d.log.2"
start_pop53_answering "$TMP/pop53.yaml"
check "after a restart: the IXFR history read back is the 5 steps (serial 1 to 6)" \
	grep -q "zone jnl.test.*IXFR history from .*journal: 5 step(s), serial 1 to 6" "$TMP/pop53d.log"
ip netns exec "$PRIMARY_NS" kdig +tcp +time=2 -y "$KEY" @"$PRIMARY_V4" jnl.test IXFR=1 2>&1 | records >"$TMP/knot_ixfr.txt"
ixfr_steps() { # STEPS COMPARE: pop53's IXFR=1 is STEPS differences equal to the file COMPARE
	ip netns exec "$CLIENT_NS" kdig +tcp +time=2 -y "$KEY" @"$V4" jnl.test IXFR=1 >"$TMP/ixfr.txt" 2>&1
	[ "$(soas "$TMP/ixfr.txt")" -eq $((2 + 2 * $1)) ] && records <"$TMP/ixfr.txt" | diff - "$2" &&
		! grep -q '^;; \(ERROR\|WARNING\)' "$TMP/ixfr.txt"
}
check "...and IXFR=1 gets the 5 differences, equal to the primary's" ixfr_steps 5 "$TMP/knot_ixfr.txt"

# A crash while the step to serial 6 was appended, before the copy at 6 was renamed: the copy
# at 5 back, the journal a few bytes short. The primary is down, so pop53 stays at serial 5.
stop_pop53 || true
knotd_stop
cp "$TMP/pop53d.log" "$TMP/pop53d.log.3"
cp "$TMP/copy.5" "$COPY"
truncate -s -3 "$JNL"
start_pop53_answering "$TMP/pop53.yaml"
check "torn journal: pop53 serves serial 5 from its disk copy" wait_for 5 soa_is 5
check "...keeps the 4 steps before the torn one, says why and truncates the file to them" \
	grep -q "zone jnl.test.*journal cut back: .*journal: step 5 (5 -> 6) at byte [0-9]*: torn .*kept the 4 step(s) before (to serial 5); file truncated to $size5 bytes" "$TMP/pop53d.log"
check "...the file is that long ($size5 bytes)" sh -c "[ \$(stat -c %s '$JNL') = $size5 ]"
grep 'journal' "$TMP/pop53d.log" | sed 's/^/# /'
check "...and IXFR=1 gets those 4 differences, equal to the primary's at serial 5" \
	ixfr_steps 4 "$TMP/knot_ixfr5.txt"
knotd_start || not_ok "knotd restarts"
CTL zone refresh jnl.test >/dev/null
check "the primary back: pop53 takes serial 6 again" wait_for 10 soa_is 6
appended_again() { [ "$(stat -c %i "$JNL")" = "$ino" ] && ixfr_steps 5 "$TMP/knot_ixfr.txt"; }
check "...appended after the kept steps (same file), IXFR=1 gets the 5 differences" \
	wait_for 5 appended_again

# A corrupted journal (a byte of its first step flipped while pop53d is down): ignored, said why.
stop_pop53 || true
cp "$TMP/pop53d.log" "$TMP/pop53d.log.4"
/usr/bin/python3 - "$JNL" 60 <<'PY'
import sys
path, at = sys.argv[1], int(sys.argv[2])
b = bytearray(open(path, "rb").read())
b[at] ^= 0x40
open(path, "wb").write(b)
PY
start_pop53_answering "$TMP/pop53.yaml"
check "a corrupted journal is ignored with the reason logged" \
	grep -q "zone jnl.test.*journal ignored.*step 1 (1 -> 2): checksum mismatch" "$TMP/pop53d.log"
grep 'journal' "$TMP/pop53d.log" | sed 's/^/# /'
check "...the zone is still served from its disk copy (serial 6)" wait_for 5 soa_is 6
axfr_style() {
	ip netns exec "$CLIENT_NS" kdig +tcp +time=2 -y "$KEY" @"$V4" jnl.test IXFR=1 >"$TMP/ixfr2.txt" 2>&1
	[ "$(soas "$TMP/ixfr2.txt")" -eq 2 ] && records <"$TMP/ixfr2.txt" |
		diff - <(ip netns exec "$PRIMARY_NS" kdig +time=2 -y "$KEY" @"$PRIMARY_V4" jnl.test AXFR | records)
}
check "...and IXFR=1 gets the whole zone (AXFR-style), equal to the primary's" axfr_style

# ---- The lazy disk copy (copy_sync_s: 300). ----
stop_pop53 || true
cp "$TMP/pop53d.log" "$TMP/pop53d.log.5"
XFR_COPY_SYNC=300 xfr_config "$TMP/pop53-lazy.yaml" "  - name: jnl.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
    transfer: {allow: [192.0.2.0/24, 198.51.100.0/24], key: xfr.key}"
start_pop53_answering "$TMP/pop53-lazy.yaml"
check "lazy copy: pop53 serves serial 6 from its disk copy" wait_for 5 soa_is 6
# The journal was ignored (corrupted above): the first IXFR rewrites it (a new chain). The new
# file starts at the copy's serial (6): it still leads from the copy, so the copy (1M records
# read out of the image for a big zone) is not written again (docs/ARCHITECTURE.md).
copy_ino=$(stat -c %i "$COPY")
change 6
check "pop53 serves serial 7" wait_for 5 soa_is 7
one_step_from_6() { [ "$(jsteps "$JNL")" = "6-7" ]; }
check "...the journal was rewritten: its one step leads from the copy's serial (6-7)" \
	wait_for 5 one_step_from_6
sleep 0.5
check "...and the disk copy was not written again: serial 6, same inode" \
	sh -c "grep -v '^;' '$COPY' | head -1 | grep -q 'SOA.* 6 ' && [ \$(stat -c %i '$COPY') = $copy_ino ] && \
	       ! grep -q 'zone jnl.test.*disk copy written at serial 7' $TMP/pop53d.log"
tierc zone-refresh jnl.test >/dev/null
check "the lower tier refreshes to serial 7" wait_for 10 tier_soa_is 7
jsize=$(stat -c %s "$JNL")
sleep 1.1
t_before=$(date +%s)
for k in 7 8 9; do
	change "$k"
	check "pop53 serves serial $((k + 1)) (IXFR)" wait_for 5 soa_is $((k + 1))
done
journal_at_10() { [ "$(stat -c %s "$JNL")" -gt "$jsize" ] && grep -q 'IXFR to serial 10' "$TMP/pop53d.log"; }
check "the journal grew with the 3 steps" wait_for 5 journal_at_10
sleep 0.5
check "...the disk copy was not rewritten: serial 6, same inode" \
	sh -c "grep -v '^;' '$COPY' | head -1 | grep -q 'SOA.* 6 ' && [ \$(stat -c %i '$COPY') = $copy_ino ]"
check "...but its mtime follows the refreshes (touched: SOA EXPIRE is judged from it)" \
	sh -c "[ \$(stat -c %Y '$COPY') -ge $t_before ]"
ip netns exec "$PRIMARY_NS" kdig +tcp +time=2 -y "$KEY" @"$PRIMARY_V4" jnl.test IXFR=7 2>&1 | records >"$TMP/knot_ixfr7.txt"
# A crash: no clean stop. The primary is down, so the newest serial can only come from disk.
knotd_stop
kill -9 "$POP53_PID"; wait "$POP53_PID" 2>/dev/null; POP53_PID=
cp "$TMP/pop53d.log" "$TMP/pop53d.log.6"
start_pop53_answering "$TMP/pop53-lazy.yaml"
check "after kill -9 and a restart (primary down): serial 10 served at once" soa_is 10
check "...the disk copy (serial 6) rolled forward by the 4 journal steps after it (its log)" \
	grep -q "zone jnl.test.*disk copy .*jnl.test.* and 4 journal step(s) after it: serial 10" "$TMP/pop53d.log"
check "...and the IXFR history read back is the 4 steps since the rewrite (serial 6 to 10)" \
	grep -q "zone jnl.test.*IXFR history from .*journal: 4 step(s), serial 6 to 10" "$TMP/pop53d.log"
grep 'journal\|disk copy' "$TMP/pop53d.log" | sed 's/^/# /'
ixfr7() {
	ip netns exec "$CLIENT_NS" kdig +tcp +time=2 -y "$KEY" @"$V4" jnl.test IXFR=7 >"$TMP/ixfr7.txt" 2>&1
	[ "$(soas "$TMP/ixfr7.txt")" -eq 8 ] && records <"$TMP/ixfr7.txt" | diff - "$TMP/knot_ixfr7.txt"
}
check "...IXFR=7 gets the 3 differences, equal to the primary's" ixfr7
# (Its refresh to 7 above was AXFR-style: pop53's journal then started at 6.)
n_axfr_style=$(grep -c 'AXFR-style' "$TIER_DIR/knotd.log")
tierc zone-refresh jnl.test >/dev/null
check "the lower tier refreshes to serial 10 from pop53" wait_for 10 tier_soa_is 10
check "...by IXFR (pop53 sent differences, knotd got no new AXFR-style answer)" \
	sh -c "grep -q 'IXFR of jnl.test. serial 10 (differences) to $TIER_V4 (TSIG)' $TMP/pop53d.log && \
	       [ \$(grep -c 'AXFR-style' $TIER_DIR/knotd.log) = $n_axfr_style ]"
check "the disk copy is still at serial 6 (the kill -9 wrote nothing)" \
	sh -c "grep -v '^;' '$COPY' | head -1 | grep -q 'SOA.* 6 '"
stop_pop53
check "a clean stop (SIGTERM) writes the disk copy at serial 10" \
	sh -c "grep -v '^;' '$COPY' | head -1 | grep -q 'SOA.* 10 '"
check "...and says so" grep -q "zone jnl.test.*disk copy written at shutdown (serial 10)" "$TMP/pop53d.log"
check "...and stops cleanly (no mbuf leak)" grep -q 'no leak' "$TMP/pop53d.log"
cp "$TMP/pop53d.log" "$TMP/pop53d.log.7"

# `pop53ctl zone flush`: the copy written now, not in copy_sync_s.
knotd_start || not_ok "knotd restarts"
start_pop53_answering "$TMP/pop53-lazy.yaml"
check "restart after the clean stop: serial 10" wait_for 5 soa_is 10
check "...from the copy alone (no journal step after it)" \
	sh -c "grep -q 'serving serial 10 from its disk copy' $TMP/pop53d.log && ! grep -q 'journal step(s) after it' $TMP/pop53d.log"
change 10
check "pop53 serves serial 11" wait_for 10 soa_is 11
sleep 0.5
check "...its disk copy stays at 10" sh -c "grep -v '^;' '$COPY' | head -1 | grep -q 'SOA.* 10 '"
CTL zone flush jnl.test >"$TMP/flush.txt" 2>&1
check "pop53ctl zone flush jnl.test is accepted" grep -q 'queued' "$TMP/flush.txt"
check "...and the disk copy is written at serial 11" \
	wait_for 5 sh -c "grep -v '^;' '$COPY' | head -1 | grep -q 'SOA.* 11 '"
check "zone flush of a zone that is not a secondary here: an error" \
	sh -c "! '$BUILD/control/pop53ctl' -s '$TMP/control.sock' zone flush nope.test"
# copy_sync_s reached: the copy catches up by itself (the knot taken on a reload).
XFR_COPY_SYNC=2 xfr_config "$TMP/pop53-lazy.yaml" "  - name: jnl.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
    transfer: {allow: [192.0.2.0/24, 198.51.100.0/24], key: xfr.key}"
CTL reload >/dev/null
change 11
check "copy_sync_s 2 (reloaded): pop53 serves serial 12" wait_for 10 soa_is 12
check "...and its disk copy follows within copy_sync_s (serial 12)" \
	wait_for 6 sh -c "grep -v '^;' '$COPY' | head -1 | grep -q 'SOA.* 12 '"
check "...logged as the copy being behind" \
	grep -q "zone jnl.test.*disk copy [0-9]* s behind (xfr.copy_sync_s 2): writing serial 12" "$TMP/pop53d.log"

# A compaction (journal_max_bytes small: the file is rewritten past twice it) drops steps the
# copy needs (the copy's step is past the bound), so the copy is written first (copy_sync_s
# 300: nothing else writes it). Then a crash still serves the newest serial: the journal leads
# from the copy's serial. (Detected by the file's first step moving on, not by its inode,
# which a new file may reuse.)
XFR_COPY_SYNC=300 xfr_config "$TMP/pop53-lazy.yaml" "  - name: jnl.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
    transfer: {allow: [192.0.2.0/24, 198.51.100.0/24], key: xfr.key}"
sed -i 's/^  copy_sync_s: 300$/  copy_sync_s: 300\n  journal_max_bytes: 600/' "$TMP/pop53-lazy.yaml"
CTL reload >/dev/null
jfirst=$(jsteps "$JNL" | awk '{ split($1, s, "-"); print s[1] }')
for k in 12 13 14 15 16 17; do
	change "$k"
	check "journal_max_bytes 600: pop53 serves serial $((k + 1))" wait_for 10 soa_is $((k + 1))
done
copy_serial() { grep -v '^;' "$COPY" | head -1 | awk '{ print $7 }'; }
jfirst_now() { jsteps "$JNL" | awk '{ split($1, s, "-"); print s[1] }'; }
compacted() { [ "$(jfirst_now)" -gt "$jfirst" ] && [ "$(copy_serial)" -gt 12 ]; }
check "the journal was compacted (its first step past $jfirst, the copy's serial past 12)" \
	wait_for 5 compacted
# The lazy copy's invariant on disk: a step from the copy's serial, or the journal ends at it.
leads() { c=$(copy_serial); jsteps "$JNL" | tr ' ' '\n' | grep -q "^$c-\|-$c\$"; }
check "...the journal leads from the copy's serial ($(jsteps "$JNL"))" leads
echo "# copy at serial $(copy_serial), journal $(stat -c %s "$JNL") bytes: $(jsteps "$JNL")"
knotd_stop
kill -9 "$POP53_PID"; wait "$POP53_PID" 2>/dev/null; POP53_PID=
cp "$TMP/pop53d.log" "$TMP/pop53d.log.8"
start_pop53_answering "$TMP/pop53-lazy.yaml"
check "kill -9 after compactions, primary down: serial 18 served at once" soa_is 18
check "...no journal ignored" sh -c "! grep -q 'journal ignored\|serving its disk copy as it is' $TMP/pop53d.log"
grep 'journal\|disk copy' "$TMP/pop53d.log" | sed 's/^/# /'

tierc stop >/dev/null 2>&1 || true
stop_pop53
check "pop53d stops cleanly (exit 0, no mbuf leak)" sh -c "grep -q 'no leak' $TMP/pop53d.log"
finish
