#!/usr/bin/env bash
# A zones-only reload (`pop53ctl reload` with the config unchanged, `zone reload`, SIGHUP,
# server.watch_zones) compiles only the primary zones whose files changed since their compile
# and patches each into the running image (control/reload.c, control/zone/zone_files.c). Four
# zones: example.com, other.test, inc.test (its www in an $INCLUDE) and a genzone.py big.test
# (ZRC_BIG_N records, default 100,000). What a user sees:
#   run 1 (no watching):
#   - a file replaced (temp + mv), and again with the old mtime and size kept (touch -r):
#     `pop53ctl reload` says that zone was patched and the other three not compiled; kdig
#     sees the new answer, the big zone still answers;
#   - SIGHUP does the same;
#   - nothing changed: nothing published, the reply says so, the generation stays;
#   - an $INCLUDE'd file replaced: its zone is patched;
#   - a bad file: rejected with file:line: reason, the old data serves; the good file back:
#     not compiled (the bytes last compiled); other bytes with the same records: compiled,
#     its content is what is served, nothing published;
#   - the config edited in runtime settings only (a comment, rrl) with one zone file changed:
#     that zone alone patched, the reply says "config: runtime settings only", `pop53ctl rrl`
#     shows the new settings; rrl alone: nothing published; a bad config: rejected with
#     file:line: reason, the data and settings stay; a zone's file changed in the config:
#     every zone compiled, the reply names zones[1] (other.test).file and its line;
#     `reload --full`: every zone compiled;
#   run 2 (server.watch_zones):
#   - a file replaced: the watcher's reload patches it, the new answer is served;
#   - the zone's $INCLUDE now names another file: patched, and that file is watched from
#     then on (replacing it is seen), the one it left is not.
. "$(dirname "$0")/lib.sh"
BIG_N=${ZRC_BIG_N:-100000}
trap '[ "$FAIL" -eq 0 ] || grep -E "reload|patch|error|watch" "$TMP/pop53d.log" | tail -30; cleanup_common' EXIT
lab_lock

ZDIR=$TMP/zones
mkdir -p "$ZDIR"
EX=$ZDIR/example.com.zone
OTHER=$ZDIR/other.test.zone
INC=$ZDIR/inc.test.zone
CFG=$TMP/pop53.yaml
cp "$SRC/zones/example.com.zone" "$EX"
reload_test_init "$ZDIR/big.test.zone" "$BIG_N"

# soa ORIGIN SERIAL: the head of a small zone
soa() {
	printf '$ORIGIN %s.\n$TTL 300\n@ IN SOA ns1.%s. hostmaster.%s. %s 7200 900 1209600 300\n' "$1" "$1" "$1" "$2"
	printf '@ IN NS ns1.%s.\nns1 IN A 192.0.2.53\n' "$1"
}
# rsync's way: a temp file in the directory, renamed over the file. keep=1: the old mtime
# on the new file (rsync -t, touch -r).
replace() { # replace FILE keep < content
	local f=$1 keep=${2:-0} tmp
	tmp=$(dirname "$1")/.$(basename "$1").tmp
	cat >"$tmp"
	[ "$keep" = 0 ] || touch -r "$f" "$tmp"
	mv "$tmp" "$f"
}
{ soa other.test 2026120101; echo 'www IN A 192.0.2.1'; } >"$OTHER"
{ soa inc.test 2026120101; echo '$INCLUDE inc-a.inc'; } >"$INC"
echo 'www 300 IN A 192.0.2.10' >"$ZDIR/inc-a.inc"
echo 'www 300 IN A 192.0.2.20' >"$ZDIR/inc-b.inc"

# config WATCH
config() {
	reload_test_config "$CFG" "$EX" "{name: other.test, file: $OTHER}" "{name: inc.test, file: $INC}"
	sed -i "s|^server:|server:\n  watch_zones: $1\n  watch_debounce_ms: 200|" "$CFG"
}
# wait_for SECONDS COMMAND...: poll every 0.2 s until it succeeds
wait_for() {
	local n=$(($1 * 5)); shift
	for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 0.2; done
	return 1
}
a_is() { [ "$(a_of "$1")" = "$2" ]; }

"$SRC/scripts/lab.sh" up >/dev/null
config false
start_pop53_answering "$CFG"
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.2; done
BIG_A0=$(a_of "$BIG_HOST")
check "the big zone answers $BIG_HOST A ($BIG_A0)" [ -n "$BIG_A0" ]
check "other.test and inc.test (its \$INCLUDE) answer" \
	[ "$(a_of www.other.test)" = 192.0.2.1 -a "$(a_of www.inc.test)" = 192.0.2.10 ]

# --- (a) a replaced file: `pop53ctl reload` patches that zone alone ------------------------
{ soa other.test 2026120102; echo 'www IN A 192.0.2.111'; } | replace "$OTHER"
gen0=$(generation)
out=$(ctl reload 2>&1); rc=$?
check "reload exits 0 and says reloaded" bash -c '[ $0 -eq 0 ] && grep -q "^reloaded in" <<<"$1"' "$rc" "$out"
check "reload: other.test patched, the 3 other zones not compiled ($(image_of "$out"))" \
	grep -qE '^image: patched: zone other\.test\., [0-9]+ record\(s\) deleted and [0-9]+ added .*; 3 other zone\(s\) not compiled' <<<"$out"
check "www.other.test A is the new address" a_is www.other.test 192.0.2.111
check "the big zone still answers $BIG_HOST A" a_is "$BIG_HOST" "$BIG_A0"
check "the generation moved" [ "$(generation)" != "$gen0" ]
check "the log names the zone and the file that changed" \
	grep -q "reload: zone other.test. patched ($OTHER changed)" "$TMP/pop53d.log"

# The same size and the old mtime kept (rsync -t): the new inode and the bytes tell.
{ soa other.test 2026120103; echo 'www IN A 192.0.2.112'; } | replace "$OTHER" 1
out=$(ctl reload 2>&1); rc=$?
check "same size, mtime kept (touch -r): patched ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: patched: zone other\.test\." <<<"$1"' "$rc" "$out"
check "www.other.test A is 192.0.2.112" a_is www.other.test 192.0.2.112

# --- (b) SIGHUP ---------------------------------------------------------------------------
sed -e "s/2026113001 ; serial/2026113002 ; serial/" -e "s/^\(www\t\+300 IN A\t\).*/\1192.0.2.181/" \
	"$SRC/zones/example.com.zone" | replace "$EX"
kill -HUP "$POP53_PID"
check "SIGHUP: www.example.com A is the new address within 5 s" wait_for 5 a_is www.example.com 192.0.2.181
check "SIGHUP: the reload patched example.com alone (log)" wait_for 2 bash -c \
	'[ $(grep -c "reload (config and zones): .*patched: zone example.com.,.*; 3 other zone(s) not compiled" "$0") -gt 0 ]' \
	"$TMP/pop53d.log"
check "SIGHUP: the big zone still answers" a_is "$BIG_HOST" "$BIG_A0"

# --- (e) nothing changed: nothing published ------------------------------------------------
gen1=$(generation)
out=$(ctl reload 2>&1); rc=$?
check "no change: exits 0, nothing published ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: unchanged: nothing published: no zone file changed since its compile (4 zone(s) not compiled)" <<<"$1"' "$rc" "$out"
check "no change: the generation stays $gen1" [ "$(generation)" = "$gen1" ]
# The same bytes renamed over a file with a new mtime: read, found the same, not compiled.
cat "$OTHER" | replace "$OTHER"
out=$(ctl zone reload 2>&1); rc=$?
check "the same bytes renamed over a file: not compiled, nothing published ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: unchanged: nothing published: no zone file changed" <<<"$1"' "$rc" "$out"
check "the generation still stays $gen1" [ "$(generation)" = "$gen1" ]

# --- (f) an $INCLUDE'd file replaced --------------------------------------------------------
echo 'www 300 IN A 192.0.2.11' | replace "$ZDIR/inc-a.inc"
out=$(ctl zone reload 2>&1); rc=$?
check "an \$INCLUDE'd file replaced: inc.test patched ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: patched: zone inc\.test\." <<<"$1"' "$rc" "$out"
check "www.inc.test A is 192.0.2.11" a_is www.inc.test 192.0.2.11
check "the log names the include" grep -q "reload: zone inc.test. patched ($ZDIR/inc-a.inc changed)" "$TMP/pop53d.log"

# --- (d) a bad file: rejected, the old data serves -----------------------------------------
cp "$OTHER" "$TMP/other.good"
gen2=$(generation)
{ soa other.test 2026120104; echo 'www IN A 192.0.2.113'; echo 'www IN CNAME ns1.other.test.'; } | replace "$OTHER"
err=$(ctl reload 2>&1); rc=$?
check "bad file (CNAME beside A): exits 1 with file:line: reason ($err)" \
	bash -c '[ $0 -eq 1 ] && grep -qE "$1:[0-9]+: .*[Cc][Nn][Aa][Mm][Ee]" <<<"$2"' "$rc" "$OTHER" "$err"
check "bad file: www.other.test still 192.0.2.112" a_is www.other.test 192.0.2.112
check "bad file: the generation stays $gen2" [ "$(generation)" = "$gen2" ]
replace "$OTHER" <"$TMP/other.good"
out=$(ctl reload 2>&1); rc=$?
check "the good file back (the bytes last compiled): nothing compiled, nothing published ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: unchanged: nothing published: no zone file changed since its compile (4 zone(s) not compiled)" <<<"$1"' "$rc" "$out"
{ cat "$TMP/other.good"; echo '; a comment: other bytes, the same records'; } | replace "$OTHER"
out=$(ctl reload 2>&1); rc=$?
check "other bytes, the same records: compiled, its content as served, nothing published ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: unchanged: nothing published; 1 zone(s) compiled, their content as served: other\.test\.; 3 other zone(s) not compiled" <<<"$1"' "$rc" "$out"
check "the generation still stays $gen2" [ "$(generation)" = "$gen2" ]

# --- config edits: only what the image depends on compiles every zone ---------------------
# A comment and an rrl section (runtime settings) and one changed zone file: that zone alone.
gen3=$(generation)
printf '# tuning rate limiting\nrrl:\n  responses_per_second: 1000\n  window: 7\n  log_only: true\n' >>"$CFG"
{ soa other.test 2026120106; echo 'www IN A 192.0.2.115'; } | replace "$OTHER"
out=$(ctl reload 2>&1); rc=$?
check "rrl and a comment added, other.test changed: runtime settings only, other.test patched alone ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -qE "^image: config: runtime settings only; patched: zone other\.test\., .*; 3 other zone\(s\) not compiled" <<<"$1"' "$rc" "$out"
check "www.other.test A is 192.0.2.115" a_is www.other.test 192.0.2.115
check "the new rrl settings are in effect (pop53ctl rrl: on, window 7)" \
	[ "$(ctl --json rrl | jq_py 'str(r["rrl"]["enabled"]) + " " + str(r["rrl"]["window"])')" = "True 7" ]
check "the big zone still answers $BIG_HOST A" a_is "$BIG_HOST" "$BIG_A0"
check "the generation moved" [ "$(generation)" != "$gen3" ]
# An rrl value changed, no zone file: nothing compiled, nothing published, the setting applied.
gen4=$(generation)
sed -i 's/^  window: 7$/  window: 9/' "$CFG"
out=$(ctl reload 2>&1); rc=$?
check "rrl.window changed alone: runtime settings only, nothing published ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: config: runtime settings only; unchanged: nothing published: no zone file changed since its compile (4 zone(s) not compiled)" <<<"$1"' "$rc" "$out"
check "rrl window is 9 now" [ "$(ctl --json rrl | jq_py 'r["rrl"]["window"]')" = 9 ]
check "the generation stays $gen4" [ "$(generation)" = "$gen4" ]
# A bad config: rejected with file:line: reason, the running data and settings stay.
sed -i 's/^  window: 9$/  window: 0/' "$CFG"
LINE=$(grep -n '^  window: 0$' "$CFG" | cut -d: -f1)
err=$(ctl reload 2>&1); rc=$?
check "a bad config (rrl.window 0): exits 1 with $CFG:$LINE: reason ($err)" \
	bash -c '[ $0 -eq 1 ] && grep -q "$1:$2: .*window" <<<"$3"' "$rc" "$CFG" "$LINE" "$err"
check "bad config: the generation stays $gen4" [ "$(generation)" = "$gen4" ]
check "bad config: www.other.test A still 192.0.2.115" a_is www.other.test 192.0.2.115
check "bad config: rrl window still 9" [ "$(ctl --json rrl | jq_py 'r["rrl"]["window"]')" = 9 ]
sed -i 's/^  window: 0$/  window: 9/' "$CFG"
# A zone option changed (other.test's file: another file, the same records): every zone
# compiled, the reply names the difference with its line.
cp "$OTHER" "$ZDIR/other2.test.zone"
sed -i "s|{name: other.test, file: $OTHER}|{name: other.test, file: $ZDIR/other2.test.zone}|" "$CFG"
LINE=$(grep -n 'other2.test.zone' "$CFG" | cut -d: -f1)
out=$(ctl reload 2>&1); rc=$?
check "a zone's file changed in the config: compiled in full, says zones[1] (other.test).file at $CFG:$LINE ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -qF "image: compiled in full: config: zones[1] (other.test).file changed ($1:$2)" <<<"$3"' "$rc" "$CFG" "$LINE" "$out"
check "after the full compile the big zone answers" a_is "$BIG_HOST" "$BIG_A0"
check "after the full compile www.other.test A is 192.0.2.115" a_is www.other.test 192.0.2.115
out=$(ctl reload 2>&1)
check "and the next reload finds nothing changed ($(image_of "$out"))" grep -q "^image: unchanged: nothing published" <<<"$out"
# reload --full: every zone compiled whatever changed.
gen5=$(generation)
out=$(ctl reload --full 2>&1); rc=$?
check "reload --full: compiled in full, says it was asked for ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: compiled in full: asked for (reload --full)" <<<"$1"' "$rc" "$out"
check "reload --full: the generation moved" [ "$(generation)" != "$gen5" ]
check "reload --full: the big zone answers" a_is "$BIG_HOST" "$BIG_A0"
check "the log says why (config and zones, asked for)" \
	grep -q "reload (config and zones): .*compiled in full: asked for (reload --full)" "$TMP/pop53d.log"
check "pop53d stops cleanly" stop_pop53

# --- run 2: server.watch_zones ----------------------------------------------------------------
config true
start_pop53_answering "$CFG"
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.2; done
check "run 2: watching 5 files" grep -q 'watching 5 zone file(s), reload after 200 ms' "$TMP/pop53d.log"
{ soa other.test 2026120105; echo 'www IN A 192.0.2.114'; } | replace "$OTHER"
check "(c) watch: www.other.test A is 192.0.2.114 within 5 s" wait_for 5 a_is www.other.test 192.0.2.114
check "(c) watch: the watcher's reload patched other.test alone" wait_for 2 grep -q \
	"reload: .*patched: zone other.test.,.*; 3 other zone(s) not compiled" "$TMP/pop53d.log"
check "(c) watch: the big zone still answers" a_is "$BIG_HOST" "$BIG_A0"
# The $INCLUDE set changes: the patched zone's files are watched in place of its old ones.
{ soa inc.test 2026120102; echo '$INCLUDE inc-b.inc'; } | replace "$INC"
check "watch: inc.test now includes inc-b.inc: www.inc.test A 192.0.2.20 within 5 s" \
	wait_for 5 a_is www.inc.test 192.0.2.20
check "watch: the watch list follows the patched zone (5 files: inc-b in place of inc-a)" \
	wait_for 2 bash -c '[ $(grep -c "watching 5 zone file(s)" "$0") -ge 2 ]' "$TMP/pop53d.log"
echo 'www 300 IN A 192.0.2.21' | replace "$ZDIR/inc-b.inc"
check "watch: the newly included file replaced: www.inc.test A 192.0.2.21 within 5 s" \
	wait_for 5 a_is www.inc.test 192.0.2.21
r0=$(ctl --json status | jq_py 'r["reloads"]["ok"]')
echo 'www 300 IN A 192.0.2.12' | replace "$ZDIR/inc-a.inc"
sleep 0.8
check "watch: the file the zone no longer includes does not reload" \
	[ "$(ctl --json status | jq_py 'r["reloads"]["ok"]')" = "$r0" ]
check "watch: www.inc.test A stays 192.0.2.21" a_is www.inc.test 192.0.2.21
check "run 2: pop53d stops cleanly" stop_pop53
finish
