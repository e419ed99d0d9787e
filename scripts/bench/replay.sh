#!/usr/bin/env bash
# Replay benchmark: what one query costs on one core, with no NIC and no kernel.
#
# Runs build/scripts/bench/p53-replay (scripts/bench/replay.c) for each query mix: pre-built
# query frames go through p53_worker_burst (the worker's real per-burst path) in bursts of
# 32, and it reports ns/query (timed) and instructions/query (callgrind). Writes the results
# into docs/BENCHMARKS.md between <!-- replay:begin --> and <!-- replay:end -->.
#
# Usage: scripts/bench/replay.sh [--timed | --callgrind] [--runs N] [-n COUNT]
#                                [--no-write] [MIX ...]
#   MIX: small-a nxdomain nxdomain6 nx-lens nx-lens6 referral big-a small-zipf big-zipf ecs steered signed-steered wildcard signed-a nsec3-nxdomain
#        nsec3-repeat signed-wildcard deep-nx deep-refused guard rrl flood (default: all of them; the
#        signed-* and nsec3-* mixes ask with DO=1 of zones/example.com.zone signed with
#        ldns-signzone, NSEC3; guard, rrl and flood are small-a's frames through the guard)
#   --timed       only the timed runs (RUNS runs per mix, the median is reported)
#   --callgrind   only the callgrind runs (instructions/query and the top functions)
#   (default: both)
# Environment: BUILD (meson build dir, default build-replay), CPU (default 1), BIG_ZONE and
# BIG_ZONE_NAME (the big-a zone; default: scripts/bench/genzone.py BIG_N records into
# $BUILD/bench/big.test.zone, zone big.test.), BIG_N (default 1000000), FRAMES (distinct query
# frames, default 65536), CG_COUNT (queries under callgrind, default 20000), P53_ANSWER_CACHE
# (the worker's answer cache, dataplane/qcache.h: entries as `dataplane.answer_cache`; 0:
# none; default 1024, as pop53d's default).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
. "$ROOT/scripts/bench/lib.sh"

BUILD=${BUILD:-build-replay}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
CPU=${CPU:-1}
BIG_N=${BIG_N:-1000000}
FRAMES=${FRAMES:-65536}
CG_COUNT=${CG_COUNT:-20000}
DOC="$ROOT/docs/BENCHMARKS.md"
BEGIN_MARK='<!-- replay:begin -->'
END_MARK='<!-- replay:end -->'
ALL_MIXES="small-a nxdomain nxdomain6 nx-lens nx-lens6 referral big-a small-zipf big-zipf ecs steered signed-steered wildcard signed-a nsec3-nxdomain nsec3-repeat signed-wildcard deep-nx deep-refused guard rrl flood"

RUNS=3
COUNT=2000000
WRITE=1
DO_TIMED=1
DO_CG=1
MIXES=()
CMDLINE="scripts/bench/replay.sh${*:+ $*}"

while [ $# -gt 0 ]; do
	case $1 in
	--timed) DO_CG=0 ;;
	--callgrind) DO_TIMED=0 ;;
	--runs) RUNS=$2; shift ;;
	-n) COUNT=$2; shift ;;
	--no-write) WRITE=0 ;;
	-h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "replay.sh: unknown option $1" >&2; exit 2 ;;
	*) MIXES+=("$1") ;;
	esac
	shift
done
[ ${#MIXES[@]} -gt 0 ] || read -r -a MIXES <<<"$ALL_MIXES"
for m in "${MIXES[@]}"; do
	case " $ALL_MIXES " in *" $m "*) ;; *) echo "replay.sh: unknown mix $m" >&2; exit 2 ;; esac
done

TMP=$(mktemp -d /tmp/p53-replay.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# ---- build -----------------------------------------------------------------------------
BIN="$BUILD/scripts/bench/p53-replay"
if [ ! -f "$BUILD/build.ninja" ]; then
	bench_log "configuring $BUILD (release)"
	meson setup "$BUILD" "$ROOT" -Dbuildtype=release >"$TMP/meson.log" 2>&1 ||
		{ cat "$TMP/meson.log" >&2; exit 1; }
fi
if ! ninja -C "$BUILD" scripts/bench/p53-replay >"$TMP/ninja.log" 2>&1; then
	cat "$TMP/ninja.log" >&2
	grep -q "subdir('scripts/bench')" "$ROOT/meson.build" ||
		echo "replay.sh: the root meson.build has no subdir('scripts/bench')" >&2
	exit 1
fi

# ---- zones per mix -------------------------------------------------------------------------
SMALL="example.com=$ROOT/zones/example.com.zone"
DIFF="diff.test=$ROOT/tests/differential/zones/diff.test.zone"
big_zone() {
	if [ -n "${BIG_ZONE:-}" ]; then
		echo "${BIG_ZONE_NAME:-big.test}=$BIG_ZONE"
		return
	fi
	local f="$BUILD/bench/big.test.zone"
	if [ ! -s "$f" ] || [ "$(cat "$f.n" 2>/dev/null)" != "$BIG_N" ]; then
		bench_log "generating $BIG_N-record big.test zone (scripts/bench/genzone.py)"
		mkdir -p "$BUILD/bench"
		python3 "$ROOT/scripts/bench/genzone.py" "$BIG_N" "$f" 2>/dev/null
		echo "$BIG_N" >"$f.n"
	fi
	echo "big.test=$f"
}
# The small zone signed (ldns-signzone, ECDSA P-256, NSEC3 without salt or extra iterations,
# RFC 9276), once per build directory: the DNSSEC mixes ask it with DO=1.
signed_zone() {
	local d="$BUILD/bench/signed" f="$BUILD/bench/signed/example.com.zone"
	if [ ! -s "$f" ] || [ "$f" -ot "$ROOT/zones/example.com.zone" ]; then
		mkdir -p "$d"
		(cd "$d" && rm -f K*.key K*.private &&
			ksk=$(ldns-keygen -a ECDSAP256SHA256 -k example.com) &&
			zsk=$(ldns-keygen -a ECDSAP256SHA256 example.com) && echo "$d/$zsk" >"$d/zsk" &&
			ldns-signzone -n -t 0 -o example.com. -e "$(date -u -d '+1 year' +%Y%m%d)" \
				-f "$f" "$ROOT/zones/example.com.zone" "$ksk" "$zsk") >&2 ||
			{ echo "replay.sh: ldns-signzone failed" >&2; exit 1; }
	fi
	echo "example.com=$f"
}
# The steered mix's sources, once per build directory: a subnet map and a MaxMind DB
# (scripts/bench/steer_sources.py, written by tests/steer/mmdb_build.pl).
steer_sources() {
	local d="$BUILD/bench/steer"
	if [ ! -s "$d/geo.mmdb" ] || [ "$d/geo.mmdb" -ot "$ROOT/scripts/bench/steer_sources.py" ] ||
	   [ "$d/geo.mmdb" -ot "$ROOT/tests/steer/mmdb_build.pl" ]; then
		mkdir -p "$d"
		python3 "$ROOT/scripts/bench/steer_sources.py" "$d/map.json" "$d/nets.json" &&
			perl "$ROOT/tests/steer/mmdb_build.pl" "$d/geo.mmdb" "$d/nets.json" ||
			{ echo "replay.sh: writing the steering sources failed" >&2; exit 1; }
	fi
	echo "--steer-map $d/map.json --steer-geo $d/geo.mmdb"
}
zone_of() {
	case $1 in
	referral) echo "$DIFF" ;;
	big-a|big-zipf) big_zone ;;
	signed-*|nsec3-*) signed_zone ;;
	*) echo "$SMALL" ;;
	esac
}
# p53-replay's arguments for a mix: the DNSSEC mixes are the plain ones with DO=1; the abuse
# mixes are small-a's frames with a guard.
mix_args() {
	case $1 in
	signed-a) echo "-m small-a --do" ;;
	small-zipf) echo "-m small-a --zipf 1" ;;
	big-zipf) echo "-m big-a --zipf 1" ;;
	nxdomain6) echo "-m nxdomain -6 100" ;;
	nx-lens) echo "-m nxdomain --label-lens 1-20" ;;
	nx-lens6) echo "-m nxdomain --label-lens 1-20 -6 100" ;;
	nsec3-nxdomain) echo "-m nxdomain --do" ;;
	nsec3-repeat) echo "-m nxdomain --do --names 100" ;;
	signed-wildcard) echo "-m wildcard --do" ;;
	guard) echo "-m small-a --guard --clients 65536" ;;
	rrl) echo "-m small-a --rrl 1000 --clients 65536" ;;
	flood) echo "-m small-a --rrl 10 --flood" ;;
	steered) echo "-m steered $(steer_sources) --clients 65536 -6 20 --ecs-pct 50" ;;
	signed-steered) echo "-m steered --do --sign-key $(cat "$BUILD/bench/signed/zsk") $(steer_sources) --clients 65536 -6 20 --ecs-pct 50" ;;
	*) echo "-m $1" ;;
	esac
}
zone_label() { # the zone file path relative to the repo, for the table
	local z=${1#*=}
	echo "${z#"$ROOT"/}"
}

# key=value from a RESULT line
field() { sed -n "s/.*\<$2=\([^ ]*\).*/\1/p" <<<"$1"; }

median_line() { # FILE of RESULT lines -> the line with the median net_ns
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^net_ns=/) { split($i, a, "="); print a[2], $0 } }' "$1" |
		sort -n | awk '{ l[NR] = $0 } END { if (NR) print l[int((NR + 1) / 2)] }' | cut -d' ' -f2-
}

# ---- timed runs ---------------------------------------------------------------------------
declare -A T_LINE T_RUNS NOTE
if [ "$DO_TIMED" = 1 ]; then
	for m in "${MIXES[@]}"; do
		z=$(zone_of "$m")
		: >"$TMP/$m.timed"
		for ((r = 1; r <= RUNS; r++)); do
			bench_log "$m: timed run $r/$RUNS (zone $(zone_label "$z"), $COUNT queries, CPU $CPU)"
			# shellcheck disable=SC2046 # the mix's arguments are words
			if ! taskset -c "$CPU" "$BIN" -z "$z" $(mix_args "$m") -n "$COUNT" -f "$FRAMES" \
				>"$TMP/$m.out" 2>"$TMP/$m.err"; then
				cat "$TMP/$m.err" "$TMP/$m.out" >&2
				echo "replay.sh: $m FAILED (see above): no figure is reported for it" >&2
				exit 1
			fi
			grep '^RESULT ' "$TMP/$m.out" >>"$TMP/$m.timed"
		done
		T_LINE[$m]=$(median_line "$TMP/$m.timed")
		T_RUNS[$m]=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^net_ns=/) { split($i, a, "="); printf "%s%.1f", sep, a[2]; sep = ", " } }' "$TMP/$m.timed")
		bench_log "$m: median net $(field "${T_LINE[$m]}" net_ns) ns/query (runs: ${T_RUNS[$m]})"
	done
fi

# ---- callgrind runs -----------------------------------------------------------------------
declare -A CG_LOOP CG_COPY CG_BURST CG_TOP
if [ "$DO_CG" = 1 ]; then
	command -v valgrind >/dev/null || { echo "replay.sh: valgrind not installed" >&2; exit 1; }
	for m in "${MIXES[@]}"; do
		z=$(zone_of "$m")
		out="$TMP/$m.cg"
		bench_log "$m: callgrind ($CG_COUNT queries; zone $(zone_label "$z"))"
		if ! taskset -c "$CPU" valgrind --tool=callgrind --collect-atstart=no \
			--toggle-collect=replay_loop --toggle-collect=replay_copy_loop \
			--callgrind-out-file="$out" \
			"$BIN" -z "$z" $(mix_args "$m") -n "$CG_COUNT" -f "$FRAMES" -t 3600 \
			>"$TMP/$m.cgout" 2>"$TMP/$m.cgerr"; then
			cat "$TMP/$m.cgerr" "$TMP/$m.cgout" >&2
			echo "replay.sh: $m FAILED under callgrind" >&2
			exit 1
		fi
		q=$(field "$(grep '^RESULT ' "$TMP/$m.cgout")" queries)
		callgrind_annotate --threshold=100 --inclusive=yes "$out" >"$TMP/$m.incl"
		callgrind_annotate --threshold=100 "$out" >"$TMP/$m.self"
		ir_of() { # FILE FUNCTION -> Ir
			awk -v f="$2" '$0 ~ ":" f " " { gsub(",", "", $1); print $1; exit }' "$1"
		}
		CG_LOOP[$m]=$(awk -v a="$(ir_of "$TMP/$m.incl" replay_loop)" -v q="$q" 'BEGIN { printf "%.0f", a / q }')
		CG_COPY[$m]=$(awk -v a="$(ir_of "$TMP/$m.incl" replay_copy_loop)" -v q="$q" 'BEGIN { printf "%.0f", a / q }')
		CG_BURST[$m]=$(awk -v a="$(ir_of "$TMP/$m.incl" p53_worker_burst)" -v q="$q" 'BEGIN { printf "%.0f", a / q }')
		# Top 10 by inclusive Ir under the measured loops (the program's wrappers and the
		# copy-only loop left out), with their self Ir; per query.
		CG_TOP[$m]=$(awk -v q="$q" '
			FNR == 1 { file++ }
			/^ *[0-9,]+ \(/ && /:/ {
				ir = $1; gsub(",", "", ir)
				fn = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", fn); sub(/ \[.*$/, "", fn)
				sub(/^.*:/, "", fn)
				if (file == 1) { if (!(fn in incl)) { incl[fn] = ir; order[++n] = fn } }
				else if (!(fn in self)) self[fn] = ir
			}
			END {
				k = 0
				for (i = 1; i <= n && k < 10; i++) {
					fn = order[i]
					if (fn ~ /^(main|\(below main\)|__libc_start_main.*|0x[0-9a-f]+|replay_copy_loop)$/) continue
					printf "| %s | %.0f | %.0f |\n", fn, incl[fn] / q, (fn in self ? self[fn] : 0) / q
					k++
				}
			}' "$TMP/$m.incl" "$TMP/$m.self")
		bench_log "$m: ${CG_BURST[$m]} instructions/query in p53_worker_burst, ${CG_LOOP[$m]} for the whole loop"
	done
fi

# ---- the section ----------------------------------------------------------------------------
target_of() {
	case $1 in
	small-a) echo "≥ 10 Mqps per core" ;;
	big-a) echo "≤ 1.5x small-a" ;;
	big-zipf) echo "≤ 1.5x small-zipf" ;;
	deep-nx|deep-refused) echo "≤ 3x nxdomain" ;;
	signed-a|signed-steered) echo "≤ 1.3x $( [ "$1" = signed-a ] && echo small-a || echo steered )" ;;
	nsec3-nxdomain|nsec3-repeat) echo "≤ 2x nxdomain" ;;
	rrl) echo "≤ 1.15x guard (RRL off)" ;;
	flood) echo "< small-a (answering it)" ;;
	*) echo "-" ;;
	esac
}
desc_of() {
	case $1 in
	small-a) echo "positive A/AAAA, random owners of the small zone" ;;
	nxdomain) echo "random names under the apex that do not exist (the random part 10 characters: every frame one length, as a random-subdomain flood's often are)" ;;
	nxdomain6) echo "nxdomain over IPv6 (\`-6 100\`): names drawn as nxdomain's, one length, every frame IPv6" ;;
	nx-lens) echo "nxdomain with the random part 1 to 20 characters long, drawn per frame (\`--label-lens 1-20\`): name errors of many lengths" ;;
	nx-lens6) echo "nx-lens over IPv6 (\`--label-lens 1-20 -6 100\`): name errors of many lengths, every frame IPv6" ;;
	referral) echo "names below the delegation \`sub\`" ;;
	big-a) echo "positive A, random owners of the big zone" ;;
	small-zipf) echo "small-a with the owners drawn by a Zipf law (exponent 1, seeded): names repeat, as resolvers ask them" ;;
	big-zipf) echo "big-a with the owners drawn by a Zipf law (exponent 1, seeded) over the 515,002 A owners" ;;
	ecs) echo "small-a plus an EDNS Client Subnet option (no steered name: this measures parsing the option)" ;;
	steered) echo "\`steered.example.com\` A, policy [map, geo] over ten targets in eight PoPs, from a 1000-prefix map and a MaxMind DB of about 4500 networks (scripts/bench/steer_sources.py); half the frames carry ECS (a random /24 or /56), the rest come from 65536 client /24s (20 % IPv6 /56s); each frame's expected record count is the table's own pick" ;;
	deep-nx) echo "the deepest name under the apex that fits (one-byte labels, 123 labels under example.com, 255 octets): NXDOMAIN, the worst closest-encloser walk" ;;
	deep-refused) echo "127 one-byte labels under no served zone: REFUSED" ;;
	wildcard) echo "random names under the small zone's wildcard \`*.img\`" ;;
	signed-a) echo "small-a with DO=1 on the signed small zone: A/AAAA and its RRSIG" ;;
	signed-steered) echo "steered with DO=1 on the signed small zone, the variants signed with its ZSK (--sign-key): each answer carries its variant's RRSIG" ;;
	nsec3-nxdomain) echo "nxdomain with DO=1 on the signed small zone: SOA, three NSEC3 and their RRSIGs; every name differs (a random-subdomain flood), so the next closer cache always misses: one NSEC3 hash per query" ;;
	nsec3-repeat) echo "nsec3-nxdomain over 100 distinct names (\`--names 100\`: each repeated about 200 times in 20000 queries), so the next closer cache answers: no hash per query" ;;
	signed-wildcard) echo "wildcard with DO=1 on the signed small zone: the expanded A, its RRSIG, the NSEC3 covering the next closer name" ;;
	guard) echo "small-a from 65536 client /24s with the guard published as pop53d's defaults do: cookies on, RRL off" ;;
	rrl) echo "the same with RRL on (1000/s per account: nobody is limited; every query finds or makes its account)" ;;
	flood) echo "small-a's frames all from one /24 with RRL at 10/s and slip 2: almost every query limited, most before answering" ;;
	esac
}

{
	echo "## Replay: one core, no NIC"
	echo
	echo "\`scripts/bench/replay.sh\` measures what one query costs in the worker's own code, with no"
	echo "NIC, no kernel and no traffic generator in the way. \`p53-replay\` (scripts/bench/replay.c)"
	echo "compiles the zone with \`p53_image_build\`, pre-builds $FRAMES query frames (Ethernet, IPv4"
	echo "192.0.2.1 -> 192.0.2.53, UDP to port 53 with a correct checksum, DNS with RD=0 and an OPT"
	echo "record with payload 1232), then loops in bursts of 32: \`rte_pktmbuf_alloc_bulk\`, copy the"
	echo "next frames in (the NIC's DMA, modelled), \`p53_worker_burst\` (frame parse, UDP checksum"
	echo "verified in software as on a port without RX offload, answer from the replica, rewrite in"
	echo "place, software checksums as with \`tx_offload\` 0), \`rte_pktmbuf_free_bulk\`."
	echo "A second loop without \`p53_worker_burst\` measures the copy (with alloc and free) so it can"
	echo "be subtracted: **net = full - copy-only** is the cost of the worker's code per query."
	echo
	echo "Every frame's response is checked before timing (RCODE, AA, ANCOUNT, NSCOUNT, ID, ports); in"
	echo "the timed loop one response per burst is checked and afterwards the worker's counters must"
	echo "show one response with the expected RCODE per query. Any mismatch fails the run and no"
	echo "figure is written. The worker answers from the compiled image itself, transparent huge pages"
	echo "asked for, as pop53d's first worker does; \`p53-replay --replica 4k|thp|hugetlb|eal\` places a"
	echo "copy elsewhere (docs/BENCHMARKS.md, \"Big zone: page size and prefetch schedule\")."
	echo
	echo '```'
	echo "scripts/bench/replay.sh                      # every mix: 3 timed runs + callgrind, writes here"
	echo "scripts/bench/replay.sh --timed small-a      # one mix, timed only"
	echo "scripts/bench/replay.sh --callgrind small-a  # instructions/query and the top functions"
	echo "scripts/bench/replay.sh --no-write           # print, leave this file alone"
	echo '```'
	echo
	# shellcheck disable=SC2016 # the backquotes are Markdown
	echo "Mixes: $(for m in $ALL_MIXES; do printf '`%s` (%s); ' "$m" "$(desc_of "$m")"; done | sed 's/; $/./')"
	echo "The big zone is \`scripts/bench/genzone.py $BIG_N\` (\`big.test.\`) unless \`BIG_ZONE\` names"
	echo "another. Environment: \`BUILD\` (default \`build-replay\`), \`CPU\` (default 1), \`FRAMES\`,"
	echo "\`CG_COUNT\`, \`BIG_ZONE\`, \`BIG_ZONE_NAME\`, \`BIG_N\`."
	echo
	echo "- Date: $(date -u '+%Y-%m-%d %H:%M') UTC"
	echo "- Commit: $(bench_commit "$ROOT")"
	echo "- Machine: $(bench_machine)"
	echo "- Command: \`$CMDLINE\` (pinned with \`taskset -c $CPU\`)"
	if [ "$DO_TIMED" = 1 ] && [ -n "${T_LINE[small-a]:-}" ]; then
		echo "- TSC: $(awk -v h="$(field "${T_LINE[small-a]}" tsc_hz)" 'BEGIN { printf "%.2f GHz", h / 1e9 }') (ns below are TSC ns: rte_rdtsc / rte_get_tsc_hz)"
	fi
	if [ "$DO_TIMED" = 1 ]; then
		echo
		echo "### Timed ($RUNS runs of $COUNT queries per mix; the run with the median net cost is shown)"
		echo
		echo "| mix | zone | full loop ns/q | copy-only ns/q | net ns/q | net Mqps | target | response bytes (DNS / frame) | net ns/q per run |"
		echo "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | --- |"
		for m in "${MIXES[@]}"; do
			if [ -z "${T_LINE[$m]:-}" ]; then
				echo "| $m | - | | | | | | | ${NOTE[$m]:-not run} |"
				continue
			fi
			l=${T_LINE[$m]}
			t=$(target_of "$m")
			base=""
			case $m in big-a|signed-a) base=small-a ;; big-zipf) base=small-zipf ;; nxdomain6|nx-lens|nx-lens6|nsec3-nxdomain|nsec3-repeat|deep-nx|deep-refused) base=nxdomain ;; signed-wildcard) base=wildcard ;; signed-steered) base=steered ;; esac
			if [ -n "$base" ] && [ -n "${T_LINE[$base]:-}" ]; then
				t="$t: $(awk -v a="$(field "$l" net_ns)" -v b="$(field "${T_LINE[$base]}" net_ns)" 'BEGIN { printf "%.2fx", a / b }') $base"
			fi
			printf '| %s | %s (%s records) | %.1f | %.1f | %.1f | %.2f | %s | %s / %s | %s |\n' "$m" \
				"$(zone_label "$(zone_of "$m")")" "$(bench_fmt_int "$(field "$l" records)")" \
				"$(field "$l" ns)" "$(field "$l" copy_ns)" "$(field "$l" net_ns)" \
				"$(field "$l" net_mqps)" "$t" "$(field "$l" resp_dns)" "$(field "$l" resp_frame)" \
				"${T_RUNS[$m]}"
		done
	fi
	if [ "$DO_CG" = 1 ]; then
		echo
		echo "### Instructions per query (callgrind, $CG_COUNT queries)"
		echo
		echo "\`valgrind --tool=callgrind --collect-atstart=no --toggle-collect=replay_loop\`; Ir / queries."
		echo "\`p53_worker_burst\` is the worker's code (the target applies to it); the loop adds the"
		echo "mbuf alloc/free, the copy and the sampled check."
		echo
		echo "| mix | p53_worker_burst instr/q | whole loop instr/q | copy-only loop instr/q | target |"
		echo "| --- | ---: | ---: | ---: | --- |"
		for m in "${MIXES[@]}"; do
			if [ -z "${CG_LOOP[$m]:-}" ]; then
				echo "| $m | | | | ${NOTE[$m]:-not run} |"
				continue
			fi
			t="-"
			[ "$m" = small-a ] && t="≤ 400 (positive A on the small zone with EDNS; no guard: RRL and cookies are in the guard, rrl and flood mixes)"
			base=""
			case $m in big-a|signed-a) base=small-a ;; big-zipf) base=small-zipf ;; nxdomain6|nx-lens|nx-lens6|nsec3-nxdomain|nsec3-repeat|deep-nx|deep-refused) base=nxdomain ;; signed-wildcard) base=wildcard ;; signed-steered) base=steered ;; esac
			if [ -n "$base" ] && [ -n "${CG_BURST[$base]:-}" ]; then
				t="$(target_of "$m"): $(awk -v a="${CG_BURST[$m]}" -v b="${CG_BURST[$base]}" 'BEGIN { printf "%.2fx", a / b }') $base"
			if [ "$m" = rrl ] && [ -n "${CG_BURST[guard]:-}" ]; then
				t="≤ 1.15x guard (RRL off): $(awk -v a="${CG_BURST[$m]}" -v b="${CG_BURST[guard]}" 'BEGIN { printf "%.3fx", a / b }')"
				[ -n "${CG_BURST[small-a]:-}" ] && t="$t; $(awk -v a="${CG_BURST[$m]}" -v b="${CG_BURST[small-a]}" 'BEGIN { printf "%.3fx", a / b }') small-a without a guard"
			fi
			if [ "$m" = flood ] && [ -n "${CG_BURST[small-a]:-}" ]; then
				t="< small-a (answering it): $(awk -v a="${CG_BURST[$m]}" -v b="${CG_BURST[small-a]}" 'BEGIN { printf "%.2fx", a / b }')"
			fi
			fi
			echo "| $m | ${CG_BURST[$m]} | ${CG_LOOP[$m]} | ${CG_COPY[$m]} | $t |"
		done
		for m in "${MIXES[@]}"; do
			[ -n "${CG_TOP[$m]:-}" ] || continue
			echo
			echo "Top 10 functions by inclusive Ir, \`$m\` (per query; \`callgrind_annotate --inclusive=yes\`):"
			echo
			echo "| function | inclusive Ir/q | self Ir/q |"
			echo "| --- | ---: | ---: |"
			echo "${CG_TOP[$m]}"
		done
	fi
	# Reading the numbers: generated from this run's figures, so it never goes stale.
	notes=()
	if [ -n "${T_LINE[small-a]:-}" ]; then
		notes+=("small-a: $(field "${T_LINE[small-a]}" net_mqps) Mqps net on one core against a target of 10 Mqps.")
	fi
	if [ -n "${CG_BURST[small-a]:-}" ]; then
		notes+=("small-a: ${CG_BURST[small-a]} instructions/query in p53_worker_burst against a target of 400 ($(awk -v a="${CG_BURST[small-a]}" 'BEGIN { printf "%.1fx", a / 400 }') over), without a guard; the guard, rrl and flood rows show cookies and RRL.")
	fi
	if [ -n "${T_LINE[big-a]:-}" ] && [ -n "${T_LINE[small-a]:-}" ] && [ -n "${CG_BURST[big-a]:-}" ] && [ -n "${CG_BURST[small-a]:-}" ]; then
		notes+=("big-a costs $(awk -v a="$(field "${T_LINE[big-a]}" net_ns)" -v b="$(field "${T_LINE[small-a]}" net_ns)" 'BEGIN { printf "%.2fx", a / b }') small-a in time but $(awk -v a="${CG_BURST[big-a]}" -v b="${CG_BURST[small-a]}" 'BEGIN { printf "%.2fx", a / b }') in instructions: the difference is memory latency, not work. Each query looks up a random owner of a $(awk -v b="$(field "${T_LINE[big-a]}" image_bytes)" 'BEGIN { printf "%.0f MB", b / 1e6 }') image ($FRAMES distinct names), so the hash slot, node, owner name, RRset and RDATA reads miss the caches one after another; real traffic is skewed towards popular names and would miss less.")
	fi
	notes+=("Noise: the runs of one session agree within a few per cent, but on the shared 2-CPU VM this was first measured on, two sessions minutes apart differed by about 15 % (small-a 97 and 111 ns); compare figures from one session, and use instructions/query to judge changes smaller than that.")
	if [ -n "${CG_BURST[steered]:-}" ] && [ -n "${CG_BURST[ecs]:-}" ]; then
		notes+=("steered costs $(awk -v a="${CG_BURST[steered]}" -v b="${CG_BURST[ecs]}" 'BEGIN { printf "%.2fx", a / b }') ecs in instructions: the record lookup in the steering table, for the [map, geo] chain one /16 index read and a binary search over the merged map+GeoIP blocks it leaves (both locations from one block), and the variant's memcpy; both mixes are answered by the fast path, IPv4 and IPv6 frames alike (the fast parse reads both).")
	fi
	echo
	echo "Reading the numbers:"
	echo
	for n in "${notes[@]}"; do echo "- $n"; done
	echo
} >"$TMP/section.md"

cat "$TMP/section.md"
if [ "$WRITE" = 1 ]; then
	[ -f "$DOC" ] || printf '# Benchmarks\n' >"$DOC"
	bench_md_replace "$DOC" "$BEGIN_MARK" "$END_MARK" "$TMP/section.md"
	bench_log "wrote the results into ${DOC#"$ROOT"/}"
fi
