#!/usr/bin/env bash
# Memory benchmark of the answer engine: how many bytes one pop53 replica (the compiled zone
# image) takes per record of a big, realistic zone, how long the compile takes and how much
# memory it needs, next to what knotd and NSD hold after loading the same zone.
# See docs/BENCHMARKS.md (section "Big zone: memory per record").
#
# Usage: scripts/bench/bigzone.sh [--records N] [--signed] [--skip-knot] [--skip-nsd] [--no-write]
#   --records N   about how many records the generated zone has (default 1000000)
#   --signed      sign the zone first (ldns-signzone, ECDSA P-256, NSEC3 without salt or extra
#                 iterations; cached next to it) and write the "Big zone, signed" section
#   --skip-knot   do not load the zone into knotd
#   --skip-nsd    do not run nsd-checkzone / nsd
#   --no-write    print the section, leave docs/BENCHMARKS.md alone
# Environment: BUILD (meson build dir holding control/pop53d, default build-big),
# CACHE (where generated zones are kept and reused, default /tmp/pop53-bigzone),
# LOAD_TIMEOUT (seconds to wait for knotd/nsd to answer, default 600), COMPILE_RUNS (how many
# times pop53d compiles the zone; the median wall time is reported, default 3),
# KNOT_PORT (default 53535), NSD_PORT (default 53536).
# Needs /usr/bin/time (package time), python3; knotd + kdig (knot, knot-dnsutils), kzonecheck;
# nsd, nsd-checkzone. Servers listen on 127.0.0.1 only and are stopped before the script ends.
# Exits 0 when it completes, even if a peer could not be measured (its row says why); 1 when
# pop53d cannot compile the zone (the error is printed and goes into the section).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/scripts/bench"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$HERE/lib.sh"

RECORDS=1000000
WRITE=1
SKIP_KNOT=0
SKIP_NSD=0
SIGNED=0
ORIG_ARGS="$*"
BUILD=${BUILD:-$ROOT/build-big}
CACHE=${CACHE:-/tmp/pop53-bigzone}
LOAD_TIMEOUT=${LOAD_TIMEOUT:-600}
COMPILE_RUNS=${COMPILE_RUNS:-3}
KNOT_PORT=${KNOT_PORT:-53535}
NSD_PORT=${NSD_PORT:-53536}
DOC="$ROOT/docs/BENCHMARKS.md"
BEGIN_MARK='<!-- bigzone:begin -->'
END_MARK='<!-- bigzone:end -->'
GOAL=100 # bytes per record per replica

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
	case "$1" in
		--records) RECORDS=${2:?}; shift 2 ;;
		--records=*) RECORDS=${1#*=}; shift ;;
		--skip-knot) SKIP_KNOT=1; shift ;;
		--signed) SIGNED=1; shift ;;
		--skip-nsd) SKIP_NSD=1; shift ;;
		--no-write) WRITE=0; shift ;;
		-h | --help) usage 0 ;;
		*) echo "bigzone.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
case "$RECORDS" in '' | *[!0-9]*) echo "bigzone.sh: --records wants a number" >&2; exit 2 ;; esac

POP53D="$BUILD/control/pop53d"
[ -x "$POP53D" ] || {
	echo "bigzone.sh: $POP53D not found; build it: meson setup ${BUILD#"$ROOT"/} -Dbuildtype=release && ninja -C ${BUILD#"$ROOT"/} control/pop53d" >&2
	exit 1
}
[ -x /usr/bin/time ] || { echo "bigzone.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
PY=$(command -v python3) || { echo "bigzone.sh: python3 missing" >&2; exit 1; }

TMP=$(mktemp -d /tmp/pop53-bigzone-run.XXXXXX)
SERVER_PID=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	bench_stop_pid "$SERVER_PID" 20
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'bench_log "interrupted"; exit 130' INT TERM

# --- helpers -----------------------------------------------------------------------------------
# /usr/bin/time -v fields: "Elapsed (wall clock) time (h:mm:ss or m:ss): 0:01.23" -> seconds.
tv_wall() {
	awk -F': ' '/Elapsed \(wall clock\)/ { n = split($NF, p, ":"); s = 0
		for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f\n", s }' "$1"
}
tv_maxrss_kb() { awk -F': ' '/Maximum resident set size/ { print $NF }' "$1"; }
proc_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
per_rec() { awk -v b="$1" -v n="$2" 'BEGIN { printf "%.1f", n ? b / n : 0 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", b ? a / b : 0 }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }


# --- the zone ----------------------------------------------------------------------------------
ZONE=$(bench_big_zone "$RECORDS" "$CACHE") || exit 1
COUNTS="$ZONE.counts"
TITLE="Big zone: memory per record"
SIGN_NOTE=""
if [ "$SIGNED" = 1 ]; then
	BEGIN_MARK='<!-- bigzone-signed:begin -->'
	END_MARK='<!-- bigzone-signed:end -->'
	TITLE="Big zone, signed (NSEC3): memory per record"
	SZ="$ZONE.signed"
	if [ ! -s "$SZ" ] || [ "$SZ" -ot "$ZONE" ]; then
		bench_log "signing $ZONE with ldns-signzone (NSEC3, ECDSA P-256; minutes)"
		mkdir -p "$CACHE/keys"
		if ! (cd "$CACHE/keys" && rm -f K* &&
			ksk=$(ldns-keygen -a ECDSAP256SHA256 -k big.test) &&
			zsk=$(ldns-keygen -a ECDSAP256SHA256 big.test) &&
			/usr/bin/time -v -o "$SZ.time" ldns-signzone -n -t 0 -o big.test. \
				-e "$(date -u -d '+1 year' +%Y%m%d)" -f "$SZ.tmp" "$ZONE" "$ksk" "$zsk"); then
			echo "bigzone.sh: ldns-signzone failed" >&2
			exit 1
		fi
		mv "$SZ.tmp" "$SZ"
	fi
	SIGN_NOTE="Signed with \`ldns-signzone -n -t 0\` (ECDSA P-256 KSK and ZSK, NSEC3 without salt or extra iterations) in $(tv_wall "$SZ.time") s, max RSS $(mib "$(tv_maxrss_kb "$SZ.time")"); the record counts below include the RRSIGs, NSEC3s and DNSKEYs."
	ZONE=$SZ
	UNSIGNED_RECS=$(awk '$1 == "total" { print $2 }' "$COUNTS")
fi
ZONE_BYTES=$(stat -c %s "$ZONE")
ZONE_RECS=$(awk '$1 == "total" { print $2 }' "$COUNTS")
if [ "$SIGNED" = 1 ]; then
	# every record of the signed file, comments and directives aside
	ZONE_RECS=$(grep -cv '^[[:space:]]*\(;\|\$\|$\)' "$ZONE")
fi
bench_log "zone: $ZONE_RECS records, $ZONE_BYTES bytes of text"
sed 's/^/    /' "$COUNTS" >&2
SHAPE=$(sed -n 's/^# //p' "$COUNTS")
MIX=$(awk '$1 != "total" && $1 != "#" { printf "%s%s %s", sep, $1, $3; sep = ", " }' "$COUNTS")

KZC="not run (kzonecheck missing)"
if command -v kzonecheck >/dev/null; then
	if /usr/bin/time -v -o "$TMP/kzc.time" kzonecheck -o big.test. "$ZONE" >"$TMP/kzc.out" 2>&1; then
		KZC="no errors ($(tv_wall "$TMP/kzc.time") s)"
	else
		KZC="FAILED: $(grep -v '^$' "$TMP/kzc.out" | head -3 | tr '\n' ' ')"
	fi
	bench_log "kzonecheck: $KZC"
fi

# --- pop53: compile the zone into an image ------------------------------------------------------
cat >"$TMP/pop53.yaml" <<EOF
# generated by scripts/bench/bigzone.sh (only --check-config reads it)
server:
  identity: bigzone
dataplane:
  port: "net_null0"
  workers: 1
  addresses:
    - 192.0.2.53
zones:
  - name: big.test
    file: $ZONE
EOF
# The compile runs COMPILE_RUNS times (the machine is shared; the median wall time is
# reported); max RSS and the image size are the same every time.
P_WALLS=()
for ((run = 1; run <= COMPILE_RUNS; run++)); do
	bench_log "pop53d --check-config (compiling, run $run of $COMPILE_RUNS)"
	/usr/bin/time -v -o "$TMP/pop53.time" "$POP53D" --check-config "$TMP/pop53.yaml" \
		>"$TMP/pop53.out" 2>&1
	POP53_RC=$?
	cat "$TMP/pop53.out" >&2
	[ "$POP53_RC" = 0 ] || break
	P_WALLS+=("$(tv_wall "$TMP/pop53.time")")
done
POP53_OK=0
if [ "$POP53_RC" = 0 ] && grep -q ': ok (' "$TMP/pop53.out"; then
	POP53_OK=1
	P_RECS=$(sed -n 's/.*zone(s), \([0-9]*\) records, image \([0-9]*\) bytes.*/\1/p' "$TMP/pop53.out")
	P_IMG=$(sed -n 's/.*zone(s), \([0-9]*\) records, image \([0-9]*\) bytes.*/\2/p' "$TMP/pop53.out")
	P_WALL=$(bench_median_f "${P_WALLS[@]}")
	P_RSS=$(tv_maxrss_kb "$TMP/pop53.time")
	P_BPR=$(per_rec "$P_IMG" "$P_RECS")
	P_VERDICT=$(awk -v b="$P_BPR" -v g="$GOAL" 'BEGIN { print (b <= g) ? "meets" : "MISSES" }')
	bench_log "pop53: $P_RECS records, image $P_IMG bytes = $P_BPR B/record ($P_VERDICT the ${GOAL} B goal), compile ${P_WALL} s (median of ${P_WALLS[*]}), peak RSS $(mib "$P_RSS")"
else
	P_ERR=$(grep -v '^\s*$' "$TMP/pop53.out" | grep -v 'Command exited' | head -5)
	bench_log "pop53d --check-config FAILED (exit $POP53_RC)"
fi

# --- knotd and NSD -------------------------------------------------------------------------------
# Each server is started twice: on a three-record zone (its baseline: code, libraries, buffers)
# and on the big zone; "zone memory" is the difference. Servers listen on 127.0.0.1 only.
TINY="$TMP/tiny.zone"
cat >"$TINY" <<EOF
\$ORIGIN big.test.
\$TTL 3600
@	SOA	ns1.big.test. hostmaster.big.test. 2024010101 7200 3600 1209600 300
@	NS	ns1.big.test.
ns1	A	192.0.2.53
EOF

# Sum over a process and all its descendants of a /proc/PID/smaps_rollup field (kB).
tree_pids() {
	local p=$1 c
	echo "$p"
	# shellcheck disable=SC2013 # the children files hold space-separated PIDs
	for c in $(cat "/proc/$p/task/"*/children 2>/dev/null); do tree_pids "$c"; done
}
tree_sum_kb() {
	local p t=0 v
	for p in $(tree_pids "$1"); do
		v=$(awk -v k="$2:" '$1 == k { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null)
		t=$((t + ${v:-0}))
	done
	echo "$t"
}
tree_max_hwm_kb() {
	local p m=0 v
	for p in $(tree_pids "$1"); do
		v=$(proc_kb "$p" VmHWM)
		((${v:-0} > m)) && m=$v
	done
	echo "$m"
}

# Usage: run_server knot|nsd ZONEFILE DIR. Sets S_LOAD (s), S_PSS, S_RSS, S_HWM (kB, whole
# process tree: PSS and RSS summed, HWM the largest process), S_LOG; or S_ERR on failure.
run_server() {
	local kind=$1 zone=$2 dir=$3 port pid t0 reason
	S_ERR="" S_LOAD="" S_PSS="" S_RSS="" S_HWM="" S_LOG=""
	mkdir -p "$dir"
	if [ "$kind" = knot ]; then
		port=$KNOT_PORT
		bench_knot_big_conf "$dir" "$port" "$zone"
		S_LOG="$dir/log"
		t0=$(now)
		knotd -c "$dir/knot.conf" >"$S_LOG" 2>&1 </dev/null &
	else
		port=$NSD_PORT
		bench_nsd_big_conf "$dir" "$port" "$zone" >/dev/null
		S_LOG="$dir/nsd.log"
		t0=$(now)
		nsd -d -c "$dir/nsd.conf" >"$dir/out" 2>&1 </dev/null &
	fi
	pid=$!
	SERVER_PID=$pid
	if reason=$(bench_wait_soa "$pid" "$port" "$LOAD_TIMEOUT"); then
		S_LOAD=$(since "$t0")
		sleep 2 # let the load's temporary allocations go, and NSD finish forking
		S_PSS=$(tree_sum_kb "$pid" Pss)
		S_RSS=$(tree_sum_kb "$pid" Rss)
		S_HWM=$(tree_max_hwm_kb "$pid")
	else
		S_ERR=$reason
		tail -5 "$S_LOG" "$dir/out" >&2 2>/dev/null
	fi
	bench_stop_pid "$pid" 20
	SERVER_PID=""
}

# Usage: measure knot|nsd NAME. Sets <NAME>_ROW (why it was not measured) or <NAME>_* figures.
measure() {
	local kind=$1 v=$2 b_pss b_err
	bench_log "$kind: baseline on a three-record zone"
	run_server "$kind" "$TINY" "$TMP/$kind-tiny"
	b_pss=$S_PSS b_err=$S_ERR
	bench_log "$kind: loading the big zone (up to ${LOAD_TIMEOUT}s)"
	run_server "$kind" "$ZONE" "$TMP/$kind-big"
	if [ -n "$S_ERR" ]; then
		printf -v "${v}_ROW" '%s' "not measured: $S_ERR"
		bench_log "$kind: $S_ERR"
		return
	fi
	printf -v "${v}_LOAD" '%s' "$S_LOAD"
	printf -v "${v}_PSS" '%s' "$S_PSS"
	printf -v "${v}_RSS" '%s' "$S_RSS"
	printf -v "${v}_HWM" '%s' "$S_HWM"
	printf -v "${v}_LOGF" '%s' "$S_LOG"
	if [ -z "$b_err" ] && [ -n "$b_pss" ]; then
		printf -v "${v}_BASE" '%s' "$b_pss"
		printf -v "${v}_ZMEM" '%s' $((S_PSS - b_pss))
	fi
	local zm=$(((S_PSS - ${b_pss:-0}) * 1024))
	bench_log "$kind: answered after ${S_LOAD} s; PSS $(mib "$S_PSS") (RSS sum $(mib "$S_RSS"), VmHWM $(mib "$S_HWM")); baseline PSS $(mib "${b_pss:-0}"); zone memory $(mib $((zm / 1024))) = $(per_rec "$zm" "$ZONE_RECS") B/record, $(ratio "$zm" "$ZONE_BYTES") zone text"
}

K_ROW="" N_ROW=""
if [ "$SKIP_KNOT" = 1 ]; then
	K_ROW="skipped (--skip-knot)"
elif ! command -v knotd >/dev/null || ! command -v kdig >/dev/null; then
	K_ROW="not measured: knotd or kdig missing"
else
	measure knot K
	K_SIZE=$(grep -o 'loaded, serial[^,]*, [0-9]* bytes' "${K_LOGF:-/dev/null}" 2>/dev/null | grep -o '[0-9]*' | tail -1)
fi

if [ "$SKIP_NSD" = 1 ]; then
	N_ROW="skipped (--skip-nsd)"
elif ! command -v nsd >/dev/null || ! command -v kdig >/dev/null; then
	N_ROW="not measured: nsd or kdig missing"
else
	if command -v nsd-checkzone >/dev/null; then
		if /usr/bin/time -v -o "$TMP/nsdcz.time" nsd-checkzone big.test "$ZONE" >"$TMP/nsdcz.out" 2>&1; then
			NC_WALL=$(tv_wall "$TMP/nsdcz.time")
			NC_RSS=$(tv_maxrss_kb "$TMP/nsdcz.time")
			bench_log "nsd-checkzone: ${NC_WALL} s, peak RSS $(mib "$NC_RSS")"
		else
			NC_ERR=$(head -3 "$TMP/nsdcz.out" | tr '\n' ' ')
			bench_log "nsd-checkzone FAILED: $NC_ERR"
		fi
	fi
	measure nsd N
fi

# --- the section ---------------------------------------------------------------------------------
MEM_KB=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
peer_row() { # NAME PREFIX ROW
	local name=$1 v=$2 row=$3 pss zm base load hwm
	if [ -n "$row" ]; then
		echo "| $name | $row | | | | | |"
		return
	fi
	pss=${v}_PSS zm=${v}_ZMEM base=${v}_BASE load=${v}_LOAD hwm=${v}_HWM
	local z=${!zm:-}
	if [ -n "$z" ] && ((z <= 0)); then
		echo "| $name | below the noise of the baseline | | | $(mib "${!pss}") (baseline $(mib "${!base}")) | ${!load} s (start to first SOA answer) | $(mib "${!hwm}") (VmHWM) |"
	elif [ -n "$z" ]; then
		echo "| $name | $(mib "$z") | $(per_rec $((z * 1024)) "$ZONE_RECS") B | $(ratio $((z * 1024)) "$ZONE_BYTES") | $(mib "${!pss}") (baseline $(mib "${!base}")) | ${!load} s (start to first SOA answer) | $(mib "${!hwm}") (VmHWM) |"
	else
		echo "| $name | (no baseline) | | | $(mib "${!pss}") | ${!load} s (start to first SOA answer) | $(mib "${!hwm}") (VmHWM) |"
	fi
}
{
	echo
	echo "## $TITLE"
	echo
	echo "\`scripts/bench/bigzone.sh\` generates a realistic zone (\`scripts/bench/genzone.py\`: hosts"
	echo "with A, AAAA, TXT and MX, CNAME aliases, wildcards, delegations with glue; deterministic),"
	echo "compiles it with \`pop53d --check-config\` under \`/usr/bin/time -v\`, and loads it into knotd and"
	echo "NSD on 127.0.0.1. **Goal: one pop53 replica (the compiled image) takes at most $GOAL bytes per"
	echo "record.** A running pop53d holds the image once per worker (\`server.replicas: per-core\`) or"
	echo "once per socket (\`per-socket\`), so that figure times the number of copies is what a PoP"
	echo "server needs for its zones; a reload needs the compiler's working set and the new replicas"
	echo "next to the old ones for a moment (see Reload)."
	echo
	echo "For knotd and NSD, \"zone memory\" is the proportional set size (PSS, summed over the server's"
	echo "processes: NSD forks xfrd and its server process) after the zone answers, minus the same"
	echo "server's PSS serving a three-record zone. Load time is from the server's start to its first"
	echo "answer to \`big.test SOA\` (polled every 0.2 s). knotd: \`zonefile-load: whole\`,"
	echo "\`journal-content: none\`, \`semantic-checks: off\`, one UDP worker; NSD: \`server-count: 1\`,"
	echo "no database."
	echo
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(bench_commit "$ROOT"), $(bench_machine), $(awk -v k="$MEM_KB" 'BEGIN { printf "%.0f GiB RAM", k / 1048576 }'):"
	echo
	echo '```'
	[ "$BUILD" = "$ROOT/build-big" ] || printf 'BUILD=%s ' "${BUILD#"$ROOT"/}"
	echo "scripts/bench/bigzone.sh${ORIG_ARGS:+ $ORIG_ARGS}"
	echo '```'
	echo
	# shellcheck disable=SC2016 # the backquotes are Markdown
	printf 'Zone `big.test.` from `scripts/bench/genzone.py %s`: ' "$RECORDS"
	echo "$(bench_fmt_int "$ZONE_RECS") records, $(bench_fmt_int "$ZONE_BYTES") bytes of master-file text ($(per_rec "$ZONE_BYTES" "$ZONE_RECS") B/record); mix${UNSIGNED_RECS:+ before signing ($(bench_fmt_int "$UNSIGNED_RECS") records)}: $MIX ($SHAPE). kzonecheck: $KZC."
	[ -z "$SIGN_NOTE" ] || { echo; echo "$SIGN_NOTE"; }
	echo
	echo "| server | zone memory | per record | vs zone text | process PSS | load / compile time | peak during load |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	if [ "$POP53_OK" = 1 ]; then
		echo "| **pop53**, one replica (image) | $(mib $((P_IMG / 1024))) ($(bench_fmt_int "$P_IMG") B) | **$P_BPR B** ($P_VERDICT ≤ $GOAL B) | $(ratio "$P_IMG" "$ZONE_BYTES") | (not started) | **${P_WALL} s** compile (median of ${#P_WALLS[@]} runs: ${P_WALLS[*]} s; \`--check-config\`, $(bench_fmt_int "$P_RECS") records) | $(mib "$P_RSS") (compiler max RSS) |"
	else
		echo "| pop53 | compile FAILED (exit $POP53_RC): $(tr '\n|' ' /' <<<"$P_ERR") | | | | | |"
	fi
	peer_row "knotd $(knotd -V 2>/dev/null | awk '{print $NF; exit}')" K "$K_ROW"
	peer_row "nsd $(nsd -v 2>&1 | awk '/^NSD version/ {print $3; exit}')" N "$N_ROW"
	echo
	if [ -n "${K_SIZE:-}" ]; then
		echo "knotd's own estimate of the zone's size (its \"loaded\" log line): $(bench_fmt_int "$K_SIZE") bytes ($(per_rec "$K_SIZE" "$ZONE_RECS") B/record)."
	fi
	if [ -n "${NC_WALL:-}" ]; then
		echo "\`nsd-checkzone big.test ZONE\`: ${NC_WALL} s, max RSS $(mib "$NC_RSS")."
	fi
	if [ -n "${NC_ERR:-}" ]; then
		echo "\`nsd-checkzone\` failed: $NC_ERR"
	fi
	echo
} >"$TMP/section.md"

echo >&2
cat "$TMP/section.md"
if [ "$WRITE" = 1 ]; then
	bench_md_replace "$DOC" "$BEGIN_MARK" "$END_MARK" "$TMP/section.md"
	bench_log "wrote the results into ${DOC#"$ROOT"/}"
fi
[ "$POP53_OK" = 1 ] || exit 1
exit 0
