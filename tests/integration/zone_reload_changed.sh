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
#   - the config file changed: every zone compiled, the reply says why;
#   run 2 (server.watch_zones):
#   - a file replaced: the watcher's reload patches it, the new answer is served;
#   - the zone's $INCLUDE now names another file: patched, and that file is watched from
#     then on (replacing it is seen), the one it left is not.
. "$(dirname "$0")/lib.sh"
CTL="$BUILD/control/pop53ctl"
PY=/usr/bin/python3
BIG_N=${ZRC_BIG_N:-100000}
trap '[ "$FAIL" -eq 0 ] || grep -E "reload|patch|error|watch" "$TMP/pop53d.log" | tail -30; cleanup_common' EXIT
lab_lock

SOCK=$TMP/control.sock
ZDIR=$TMP/zones
mkdir -p "$ZDIR"
EX=$ZDIR/example.com.zone
OTHER=$ZDIR/other.test.zone
INC=$ZDIR/inc.test.zone
BIG=$ZDIR/big.test.zone
CFG=$TMP/pop53.yaml
cp "$SRC/zones/example.com.zone" "$EX"
$PY "$SRC/scripts/bench/genzone.py" "$BIG_N" "$BIG" 2>/dev/null

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
	write_config "$CFG" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1" "$EX"
	cat >>"$CFG" <<YAML
  - {name: other.test, file: $OTHER}
  - {name: inc.test, file: $INC}
  - {name: big.test, file: $BIG}
YAML
	sed -i "s|^server:|server:\n  watch_zones: $1\n  watch_debounce_ms: 200|" "$CFG"
}

ctl() { "$CTL" -s "$SOCK" "$@"; }
jq_py() { $PY -c 'import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
generation() { ctl --json status | jq_py 'r["generation"]'; }
a_of() { kdig_section answer @"$V4" "$1" A | awk '$4=="A" {print $5}' | sort | tr '\n' ' ' | sed 's/ $//'; }
a_is() { [ "$(a_of "$1")" = "$2" ]; }
image_of() { grep '^image' <<<"$1"; }
# wait_for SECONDS COMMAND...: poll every 0.2 s until it succeeds
wait_for() {
	local n=$(($1 * 5)); shift
	for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 0.2; done
	return 1
}
BIG_HOST=$(awk '$3=="A" || $4=="A" {print $1; exit}' <(grep -E '^host[0-9]+\.region' "$BIG"))
BIG_HOST=${BIG_HOST%.}
case "$BIG_HOST" in *.big.test) ;; *) BIG_HOST=$BIG_HOST.big.test ;; esac

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

# --- a config change: every zone compiled ----------------------------------------------------
echo "# changed" >>"$CFG"
out=$(ctl reload 2>&1); rc=$?
check "the config file changed: compiled in full, said why ($(image_of "$out"))" \
	bash -c '[ $0 -eq 0 ] && grep -q "^image: compiled in full: the config file changed" <<<"$1"' "$rc" "$out"
check "after the full compile the big zone answers" a_is "$BIG_HOST" "$BIG_A0"
out=$(ctl reload 2>&1)
check "and the next reload finds nothing changed ($(image_of "$out"))" grep -q "^image: unchanged: nothing published" <<<"$out"
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
