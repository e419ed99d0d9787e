#!/usr/bin/env bash
# How knotd and NSD reload the 1M-record big zone, for comparison with pop53's reload figures
# (docs/BENCHMARKS.md, section "Reload of a big zone: knotd and NSD").
#
# Usage: scripts/bench/reload_peers.sh [--runs N] [--records N] [--skip-knot] [--skip-nsd] [--no-write]
#   --runs N      reloads per server, each on a freshly started server (default 3; medians)
#   --records N   zone size, as for bigzone.sh (default 1000000)
#   --skip-knot   do not measure knotd
#   --skip-nsd    do not measure NSD
#   --no-write    print the section, leave docs/BENCHMARKS.md alone
# Environment: CACHE (generated zones, shared with bigzone.sh, default /tmp/pop53-bigzone),
# LOAD_TIMEOUT (seconds to wait for a server's first answer or for the new serial, default
# 600), KNOT_PORT (default 53535), NSD_PORT (default 53536), NSD_CTL_PORT (nsd-control,
# default 53537).
# Each run: copy the zone into a temp dir, start the server on 127.0.0.1 on that copy, wait for
# `kdig big.test SOA`, sample the memory of its processes (steady), bump the SOA serial in the
# copy (only the serial changes; checked with diff), trigger the reload (knotd: knotc
# zone-reload; NSD: nsd-control reload, SIGHUP to the main process if nsd-control cannot be set
# up), poll big.test SOA every 10 ms until the new serial is answered while sampling the
# memory every 20 ms, stop the server. Needs knotd, knotc, kdig, nsd, python3 with dnspython.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/scripts/bench"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$HERE/lib.sh"

RUNS=3
RECORDS=1000000
WRITE=1
SKIP_KNOT=0
SKIP_NSD=0
ORIG_ARGS="$*"
CACHE=${CACHE:-/tmp/pop53-bigzone}
LOAD_TIMEOUT=${LOAD_TIMEOUT:-600}
KNOT_PORT=${KNOT_PORT:-53535}
NSD_PORT=${NSD_PORT:-53536}
NSD_CTL_PORT=${NSD_CTL_PORT:-53537}
DOC="$ROOT/docs/BENCHMARKS.md"
BEGIN_MARK='<!-- reload-peers:begin -->'
END_MARK='<!-- reload-peers:end -->'

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
	case "$1" in
		--runs) RUNS=${2:?}; shift 2 ;;
		--runs=*) RUNS=${1#*=}; shift ;;
		--records) RECORDS=${2:?}; shift 2 ;;
		--records=*) RECORDS=${1#*=}; shift ;;
		--skip-knot) SKIP_KNOT=1; shift ;;
		--skip-nsd) SKIP_NSD=1; shift ;;
		--no-write) WRITE=0; shift ;;
		-h | --help) usage 0 ;;
		*) echo "reload_peers.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
case "$RUNS$RECORDS" in '' | *[!0-9]*) echo "reload_peers.sh: --runs/--records want numbers" >&2; exit 2 ;; esac
[ "$RUNS" -ge 1 ] || { echo "reload_peers.sh: --runs must be >= 1" >&2; exit 2; }

PY=/usr/bin/python3
if ! [ -x "$PY" ] || ! "$PY" -c 'import dns.message, dns.query' 2>/dev/null; then
	echo "reload_peers.sh: /usr/bin/python3 with dnspython needed (python3-dnspython)" >&2
	exit 1
fi
command -v kdig >/dev/null || { echo "reload_peers.sh: kdig missing" >&2; exit 1; }

TMP=$(mktemp -d /tmp/pop53-reload-peers.XXXXXX)
SERVER_PID=""
SERVER_MATCH=""
# Stop the server: its main PID, then any process left whose command line names this run's
# config file (NSD's reload process becomes the new main one and outlives the PID we started).
stop_server() {
	local p
	[ -n "$SERVER_PID" ] && bench_stop_pid "$SERVER_PID" 20
	if [ -n "$SERVER_MATCH" ]; then
		for p in $(server_pids "$SERVER_MATCH"); do
			kill -TERM "$p" 2>/dev/null
		done
		for _ in $(seq 50); do
			[ -z "$(server_pids "$SERVER_MATCH")" ] && break
			sleep 0.1
		done
		for p in $(server_pids "$SERVER_MATCH"); do
			bench_log "pid $p still running; SIGKILL"
			kill -KILL "$p" 2>/dev/null
		done
	fi
	SERVER_PID="" SERVER_MATCH=""
}
# PIDs of knotd/nsd processes whose command line contains STRING.
server_pids() {
	local d c
	for d in /proc/[0-9]*; do
		c=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null) || continue
		case "$c" in knotd*"$1"* | nsd*"$1"* | */knotd*"$1"* | */nsd*"$1"*) echo "${d#/proc/}" ;; esac
	done
}
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	stop_server
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'bench_log "interrupted"; exit 130' INT TERM

mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

# --- the zone (the same file bigzone.sh generates and caches) ------------------------------------
ZONE=$(bench_big_zone "$RECORDS" "$CACHE") || exit 1
COUNTS="$ZONE.counts"
ZONE_RECS=$(awk '$1 == "total" { print $2 }' "$COUNTS")
OLD_SERIAL=$(awk '$2 == "SOA" { print $5; exit }' "$ZONE")
case "$OLD_SERIAL" in '' | *[!0-9]*) echo "reload_peers.sh: no SOA serial found in $ZONE" >&2; exit 1 ;; esac
NEW_SERIAL=$((OLD_SERIAL + 1))
bench_log "zone: $ZONE_RECS records, serial $OLD_SERIAL -> $NEW_SERIAL on reload"

# --- the probe: memory sampler + serial poller around the trigger ---------------------------------
cat >"$TMP/probe.py" <<'EOF'
# Usage: probe.py MATCH PORT NEW_SERIAL TIMEOUT -- TRIGGER...
# Samples PSS and RSS (kB, from /proc/PID/smaps_rollup) summed over the knotd/nsd processes
# whose command line contains MATCH, every 20 ms in a thread. Takes the steady state (median of
# 10 samples), runs TRIGGER, polls big.test SOA on 127.0.0.1:PORT every 10 ms until the answer
# carries NEW_SERIAL, keeps polling and sampling 3 s more. Prints key=value lines.
import os, sys, time, threading, subprocess, statistics
import dns.message, dns.query, dns.rdatatype

match, port, new_serial, timeout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
trigger = sys.argv[sys.argv.index("--") + 1:]

def pids():
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        name = os.path.basename(argv[0]).decode(errors="replace")
        if name in ("knotd", "nsd") and match.encode() in b" ".join(argv):
            out.append(int(d))
    return out

def sample():
    pss = rss = n = 0
    for p in pids():
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    k, v = line.split(":", 1)
                    if k == "Pss":
                        pss += int(v.split()[0])
                    elif k == "Rss":
                        rss += int(v.split()[0])
            n += 1
        except (OSError, ValueError):
            pass
    return pss, rss, n

samples = []  # (t, pss, rss, nprocs)
stop = threading.Event()
def sampler():
    while not stop.is_set():
        t = time.monotonic()
        samples.append((t,) + sample())
        d = 0.02 - (time.monotonic() - t)
        if d > 0:
            time.sleep(d)

def serial_now():
    q = dns.message.make_query("big.test.", dns.rdatatype.SOA)
    try:
        r = dns.query.udp(q, "127.0.0.1", port=port, timeout=0.1)
    except Exception:
        return None
    for rr in r.answer:
        if rr.rdtype == dns.rdatatype.SOA:
            return rr[0].serial
    return None

steady = []
for _ in range(10):
    steady.append(sample())
    time.sleep(0.02)
st_pss = int(statistics.median(s[0] for s in steady))
st_rss = int(statistics.median(s[1] for s in steady))
st_n = max(s[2] for s in steady)

th = threading.Thread(target=sampler, daemon=True)
th.start()
t0 = time.monotonic()
tr = subprocess.run(trigger, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
t_trig = time.monotonic() - t0
seen = None
unanswered = polls = 0
while True:
    s = serial_now()
    polls += 1
    if s is None:
        unanswered += 1
    elif s == new_serial:
        seen = time.monotonic() - t0
        break
    if time.monotonic() - t0 > timeout:
        break
    time.sleep(0.01)
# Keep polling (and sampling) for 3 s after the switch: the old zone is freed in that time.
late_unanswered = late_polls = 0
if seen is not None:
    while time.monotonic() - t0 < seen + 3.0:
        late_polls += 1
        if serial_now() is None:
            late_unanswered += 1
        time.sleep(0.01)
stop.set()
th.join()
after = sample()
during = [s for s in samples if s[0] >= t0]
if seen is not None:
    half = [s for s in samples if s[0] >= t0 + seen + 0.5]
    after05 = half[0][1:] if half else after
else:
    after05 = after
pk_pss = max([s[1] for s in during] + [st_pss])
pk_rss = max([s[2] for s in during] + [st_rss])
print(f"steady_pss={st_pss}\nsteady_rss={st_rss}\nsteady_procs={st_n}")
print(f"peak_pss={pk_pss}\npeak_rss={pk_rss}\nmax_procs={max([s[3] for s in during] + [st_n])}")
print(f"after_pss={after05[0]}\nafter_rss={after05[1]}\nafter3_pss={after[0]}\nsamples={len(during)}")
print(f"late_polls={late_polls}\nlate_unanswered={late_unanswered}")
print(f"trigger_rc={tr.returncode}\ntrigger_s={t_trig:.3f}\npolls={polls}\nunanswered={unanswered}")
print("trigger_out=" + " ".join(tr.stdout.split())[:200])
print(f"reload_s={seen:.3f}" if seen is not None else "reload_s=")
EOF


# Bump the serial on the (first) SOA line of FILE, and check that nothing else changed.
bump_serial() {
	local f=$1 d
	cp "$f" "$f.before"
	sed -i -E "0,/^[^;]*[[:space:]]SOA[[:space:]]/s/^([^;]*[[:space:]]SOA[[:space:]]+[^[:space:]]+[[:space:]]+[^[:space:]]+[[:space:]]+)$OLD_SERIAL([[:space:]])/\\1$NEW_SERIAL\\2/" "$f"
	d=$(diff "$f.before" "$f")
	rm -f "$f.before"
	if [ "$(grep -c '^[<>]' <<<"$d")" != 2 ] || ! grep -q "^> .*SOA.* $NEW_SERIAL " <<<"$d"; then
		echo "serial bump changed more (or less) than the serial: $(head -4 <<<"$d" | tr '\n' ' ')"
		return 1
	fi
}

# Usage: one_run knot|nsd RUN. Sets R_* (probe output) or R_ERR.
one_run() {
	local kind=$1 run=$2 dir port pid reason trig=() out key val
	R_ERR="" R_HOW=""
	dir="$TMP/$kind-$run"
	mkdir -p "$dir"
	cp "$ZONE" "$dir/big.test.zone"
	if [ "$kind" = knot ]; then
		port=$KNOT_PORT
		bench_knot_big_conf "$dir" "$port" "$dir/big.test.zone"
		knotd -c "$dir/knot.conf" >"$dir/log" 2>&1 </dev/null &
		SERVER_MATCH="$dir/knot.conf"
		trig=(knotc -s "$dir/knot.sock" zone-reload big.test)
		R_HOW="\`knotc -s SOCK zone-reload big.test\`"
	else
		port=$NSD_PORT
		local ctl
		ctl=$(bench_nsd_big_conf "$dir" "$port" "$dir/big.test.zone" "$NSD_CTL_PORT")
		nsd -d -c "$dir/nsd.conf" >"$dir/out" 2>&1 </dev/null &
		SERVER_MATCH="$dir/nsd.conf"
	fi
	pid=$!
	SERVER_PID=$pid
	if ! reason=$(bench_wait_soa "$pid" "$port" "$LOAD_TIMEOUT"); then
		R_ERR="did not start: $reason"
		tail -5 "$dir/log" "$dir/out" "$dir/nsd.log" >&2 2>/dev/null
		stop_server
		return
	fi
	if [ "$kind" = nsd ]; then
		if [ "$ctl" = yes ] && nsd-control -c "$dir/nsd.conf" status >"$dir/ctl.out" 2>&1; then
			trig=(nsd-control -c "$dir/nsd.conf" reload big.test)
			R_HOW="\`nsd-control -c CONF reload big.test\`"
		else
			bench_log "nsd-control not usable ($(tail -1 "$dir/ctl.out" "$dir/setup.out" 2>/dev/null | tr '\n' ' ')); SIGHUP instead"
			trig=(kill -HUP "$pid")
			R_HOW="SIGHUP to the main nsd process"
		fi
	fi
	sleep 2 # let the load's temporary allocations go, and NSD finish forking
	if ! reason=$(bump_serial "$dir/big.test.zone"); then
		R_ERR=$reason
		stop_server
		return
	fi
	sleep 1.1 # a new mtime second for servers that compare mtimes
	out=$("$PY" "$TMP/probe.py" "$SERVER_MATCH" "$port" "$NEW_SERIAL" "$LOAD_TIMEOUT" -- "${trig[@]}")
	echo "$out" >"$dir/probe.out"
	# shellcheck disable=SC1090
	while IFS='=' read -r key val; do printf -v "R_$key" '%s' "$val"; done <<<"$out"
	[ -n "${R_reload_s:-}" ] || R_ERR="new serial not answered within ${LOAD_TIMEOUT}s (trigger rc ${R_trigger_rc:-?}: ${R_trigger_out:-})"
	stop_server
}

# shellcheck disable=SC2154 # the R_* figures are set by one_run from the probe's output
# Usage: measure knot|nsd PREFIX. Sets PREFIX_{SPSS,PPSS,SRSS,PRSS,TIME,HOW,LIST_*} or PREFIX_ERR.
measure() {
	local kind=$1 v=$2 run spss=() ppss=() srss=() prss=() tim=() ratios=() trg=() unans=() aft=() aft3=() late=() errs=""
	for ((run = 1; run <= RUNS; run++)); do
		bench_log "$kind: run $run of $RUNS: start, wait for the zone"
		one_run "$kind" "$run"
		if [ -n "$R_ERR" ]; then
			bench_log "$kind run $run: $R_ERR"
			errs="$errs run $run: $R_ERR;"
			continue
		fi
		bench_log "$kind run $run: steady PSS $(mib "$R_steady_pss") (RSS sum $(mib "$R_steady_rss"), $R_steady_procs procs), peak PSS $(mib "$R_peak_pss") (RSS sum $(mib "$R_peak_rss"), up to $R_max_procs procs), new serial after ${R_reload_s} s (trigger returned after ${R_trigger_s} s, rc $R_trigger_rc; $R_unanswered of $R_polls polls unanswered); PSS 0.5 s after: $(mib "$R_after_pss"), 3 s after: $(mib "$R_after3_pss"); $R_late_unanswered of $R_late_polls polls unanswered in those 3 s"
		spss+=("$R_steady_pss") ppss+=("$R_peak_pss") srss+=("$R_steady_rss") prss+=("$R_peak_rss")
		tim+=("$R_reload_s") trg+=("$R_trigger_s") unans+=("$R_unanswered") aft+=("$R_after_pss") aft3+=("$R_after3_pss") late+=("$R_late_unanswered/$R_late_polls")
		ratios+=("$(awk -v a="$R_peak_pss" -v b="$R_steady_pss" 'BEGIN { printf "%.2f", a / b }')")
		printf -v "${v}_HOW" '%s' "$R_HOW"
	done
	printf -v "${v}_ERRS" '%s' "$errs"
	if [ "${#tim[@]}" = 0 ]; then
		printf -v "${v}_ERR" '%s' "not measured:$errs"
		return
	fi
	printf -v "${v}_ERR" '%s' ""
	printf -v "${v}_N" '%s' "${#tim[@]}"
	printf -v "${v}_SPSS" '%s' "$(bench_median "${spss[@]}")"
	printf -v "${v}_PPSS" '%s' "$(bench_median "${ppss[@]}")"
	printf -v "${v}_SRSS" '%s' "$(bench_median "${srss[@]}")"
	printf -v "${v}_PRSS" '%s' "$(bench_median "${prss[@]}")"
	printf -v "${v}_RATIO" '%s' "$(bench_median_f "${ratios[@]}")"
	printf -v "${v}_TIME" '%s' "$(bench_median_f "${tim[@]}")"
	printf -v "${v}_TRIG" '%s' "$(bench_median_f "${trg[@]}")"
	printf -v "${v}_L_TIME" '%s' "${tim[*]}"
	printf -v "${v}_L_TRIG" '%s' "${trg[*]}"
	printf -v "${v}_L_RATIO" '%s' "${ratios[*]}"
	printf -v "${v}_L_UNANS" '%s' "${unans[*]}"
	printf -v "${v}_AFTER" '%s' "$(bench_median "${aft[@]}")"
	printf -v "${v}_AFTER3" '%s' "$(bench_median "${aft3[@]}")"
	printf -v "${v}_L_LATE" '%s' "${late[*]}"
	local l="" i
	for i in "${!spss[@]}"; do l="$l$(mib "${spss[$i]}") → $(mib "${ppss[$i]}"); "; done
	printf -v "${v}_L_MEM" '%s' "$l"
}

# shellcheck disable=SC2034 # K_ERR and N_ERR are read through ${!e} in row() and detail()
K_ERR="skipped (--skip-knot)" N_ERR="skipped (--skip-nsd)"
if [ "$SKIP_KNOT" = 0 ]; then
	if command -v knotd >/dev/null && command -v knotc >/dev/null; then
		measure knot K
	else
		# shellcheck disable=SC2034
		K_ERR="not measured: knotd or knotc missing"
	fi
fi
if [ "$SKIP_NSD" = 0 ]; then
	if command -v nsd >/dev/null; then
		measure nsd N
	else
		# shellcheck disable=SC2034
		N_ERR="not measured: nsd missing"
	fi
fi

# --- the section ---------------------------------------------------------------------------------
KVER=$(knotd -V 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1)
NVER=$(nsd -v 2>&1 | grep -o '[0-9][0-9.]*' | head -1)
MEM_KB=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
# pop53d's figures from its reload section (written by reload.sh), for the comparison line.
reload_cell() { # ROW-LABEL-PREFIX -> the median cell, ** removed
	sed -n '/^<!-- reload:begin -->$/,/^<!-- reload:end -->$/p' "$DOC" |
		awk -F' [|] ' -v l="$1" 'index($1, l) == 3 || index($1, "| **" l) == 1 { gsub(/\*\*/, "", $2); sub(/ \(.*/, "", $2); print $2; exit }'
}
P_TIME=$(reload_cell "reload command to new serial answered")
P_STEADY=$(reload_cell "steady state, RSS + hugetlb")
P_PEAK=$(reload_cell "peak during the reload, RSS + hugetlb")
P_RATIO=$(reload_cell "peak / steady")
row() { # NAME PREFIX
	local name=$1 v=$2 e
	e=${v}_ERR
	if [ -n "${!e}" ]; then
		echo "| $name | ${!e} | | | |"
		return
	fi
	local s=${v}_SPSS p=${v}_PPSS r=${v}_RATIO t=${v}_TIME
	printf '| %s | %s | %s | %.2fx | %.3f s |\n' "$name" "$(mib "${!s}")" "$(mib "${!p}")" "${!r}" "${!t}"
}
detail() { # NAME PREFIX
	local name=$1 v=$2 e
	e=${v}_ERR
	[ -n "${!e}" ] && return
	local n=${v}_N how=${v}_HOW lt=${v}_L_TIME ltr=${v}_L_TRIG lm=${v}_L_MEM lr=${v}_L_RATIO \
		sr=${v}_SRSS pr=${v}_PRSS lu=${v}_L_UNANS errs=${v}_ERRS af=${v}_AFTER af3=${v}_AFTER3 ll=${v}_L_LATE
	echo "- **$name** (${!n} runs), reload triggered by ${!how}."
	echo "  New serial answered after ${!lt} s; the trigger command returned after ${!ltr} s."
	echo "  PSS steady → peak per run: ${!lm% } peak/steady ${!lr}."
	echo "  PSS 0.5 s after the new serial: $(mib "${!af}"), 3 s after: $(mib "${!af3}") (medians)."
	echo "  RSS summed over the processes (counts shared pages once per process): $(mib "${!sr}") → $(mib "${!pr}")."
	echo "  Polls unanswered (100 ms timeout): ${!lu} from the trigger to the new serial; ${!ll} in the"
	echo "  3 s after it.${!errs:+ Failed runs:${!errs}}"
}
{
	echo
	echo "## Reload of a big zone: knotd and NSD"
	echo
	echo "\`scripts/bench/reload_peers.sh\` does for knotd and NSD what \`scripts/bench/reload.sh\` does"
	echo "for pop53d (section \"Reload of a big zone\"): each run starts the server on 127.0.0.1 on a copy"
	echo "of the \`genzone.py $RECORDS\` zone ($(bench_fmt_int "$ZONE_RECS") records), waits for \`big.test SOA\`,"
	echo "bumps the SOA serial in the copy ($OLD_SERIAL → $NEW_SERIAL; only that number changes, checked"
	echo "with diff; not timed), triggers the reload and polls \`big.test SOA\` with dnspython every 10 ms"
	echo "(100 ms timeout). **Reload time** is from the trigger to the first answer with the new serial."
	echo "**Memory** is the proportional set size (PSS, \`/proc/PID/smaps_rollup\`) summed over the"
	echo "server's processes (knotd: one; NSD: main, xfrd, the serving child, and the process it forks to"
	echo "load the new zone, which then becomes the main one), sampled every 20 ms from the trigger until"
	echo "3 s after the new serial (polling goes on meanwhile); **steady** is the median of 10 samples just before the trigger (2 s"
	echo "after the first answer), **peak** the largest sample. A 20 ms sampler can miss a short peak."
	echo "knotd: one UDP, TCP and background worker, \`zonefile-load: whole\`, \`journal-content: none\`,"
	echo "\`semantic-checks: off\`, a control socket in the temp dir; NSD: \`server-count: 1\`, no database,"
	echo "nsd-control keys from \`nsd-control-setup -d TMPDIR\`. A fresh server for every run."
	echo
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(bench_commit "$ROOT"), $(bench_machine), $(awk -v k="$MEM_KB" 'BEGIN { printf "%.0f GiB RAM", k / 1048576 }'):"
	echo
	echo '```'
	echo "scripts/bench/reload_peers.sh${ORIG_ARGS:+ $ORIG_ARGS}"
	echo '```'
	echo
	echo "Medians of $RUNS runs per server:"
	echo
	echo "| server | steady (PSS) | peak (PSS) | peak/steady | reload time (trigger → new serial answered) |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	row "knotd ${KVER:-?}" K
	row "nsd ${NVER:-?}" N
	echo
	detail "knotd" K
	detail "NSD" N
	echo
	if [ -n "$P_TIME" ]; then
		echo "pop53d (genzone.py 1000000), from the \"Reload of a big zone\" section as it stood when this ran"
		echo "(af_xdp, one worker; memory is RSS + hugetlb): $P_TIME from \`pop53ctl zone reload\` to the"
		echo "new serial; steady $P_STEADY, peak $P_PEAK, peak/steady $P_RATIO."
	fi
	echo
} >"$TMP/section.md"

echo >&2
cat "$TMP/section.md"
if [ "$WRITE" = 1 ]; then
	bench_md_replace "$DOC" "$BEGIN_MARK" "$END_MARK" "$TMP/section.md"
	bench_log "wrote the results into ${DOC#"$ROOT"/}"
fi
exit 0
