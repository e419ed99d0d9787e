#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time under ASAN and UBSAN and reports executions
# and crashes. Builds with clang into its own build dir (meson -Dfuzzer=true -Dsanitize=true).
# Each target starts from a copy of its committed corpus (tests/fuzz/<target>.in/), so the
# repository is not touched; a crash's input is kept in $OUT as crash-<target>-<hash> (add it
# to the corpus with the fix that makes it pass).
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  default 60
#   TARGET              fuzz_answer fuzz_dnsmsg fuzz_zone fuzz_ecs fuzz_cookie fuzz_xfr
#                       fuzz_burst
#                       (default: all)
# Environment: BUILD (default build-fuzz), OUT (default $BUILD/fuzz-out), CPU (taskset CPU,
# default 1). Exit status: 0 when no target crashed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build-fuzz}
OUT=${OUT:-$BUILD/fuzz-out}
CPU=${CPU:-1}
SECS=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_answer fuzz_dnsmsg fuzz_zone fuzz_ecs fuzz_cookie fuzz_xfr fuzz_burst)

command -v clang >/dev/null || { echo "fuzz.sh: clang is needed (scripts/deps.sh installs it)" >&2; exit 2; }
if [ ! -f "$BUILD/build.ninja" ]; then
	CC=clang meson setup "$BUILD" -Dfuzzer=true -Dsanitize=true -Dtests=true -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C "$BUILD" $(printf 'tests/fuzz/%s ' "${TARGETS[@]}") >/dev/null
mkdir -p "$OUT"

# Each target's input size limit, as its FUZZ_MAX_LEN.
max_len() {
	case $1 in
	fuzz_answer) echo 1600 ;;
	fuzz_dnsmsg) echo 4096 ;;
	fuzz_zone) echo 4096 ;;
	fuzz_ecs) echo 64 ;;
	fuzz_cookie) echo 128 ;;
	fuzz_xfr) echo 16384 ;;
	fuzz_burst) echo 4096 ;;
	esac
}

rc=0
printf '%-12s %8s %12s %10s %8s %s\n' target seconds executions exec/s crashes corpus
for t in "${TARGETS[@]}"; do
	work="$OUT/$t.corpus"
	rm -rf "$work"
	mkdir -p "$work"
	cp "tests/fuzz/$t.in/"* "$work/"
	log="$OUT/$t.log"
	t0=$(date +%s)
	set +e
	# In its own shell, so a crash's "Aborted" lands in the log, not here.
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		bash -c 'exec "$@"' fuzz taskset -c "$CPU" "$BUILD/tests/fuzz/$t" -max_total_time="$SECS" \
		-max_len="$(max_len "$t")" -print_final_stats=1 -artifact_prefix="$OUT/crash-$t-" \
		-timeout=10 -rss_limit_mb=2048 "$work" >"$log" 2>&1
	status=$?
	set -e
	elapsed=$(( $(date +%s) - t0 ))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	# A crash ends the run before the final stats: take the last progress line's count.
	[ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
	crashes=$(find "$OUT" -maxdepth 1 -name "crash-$t-*" -o -maxdepth 1 -name "timeout-$t-*" -o \
		-maxdepth 1 -name "leak-$t-*" | wc -l)
	[ "$status" -eq 0 ] || [ "$crashes" -gt 0 ] || crashes="exit $status"
	printf '%-12s %8s %12s %10s %8s %s\n' "$t" "$elapsed" "${execs:-?}" \
		"$(awk -v e="${execs:-0}" -v s="$elapsed" 'BEGIN { printf "%.0f", (s > 0) ? e / s : 0 }')" "$crashes" \
		"$(ls "$work" | wc -l) files"
	if [ "$status" -ne 0 ] || [ "$crashes" != 0 ]; then
		rc=1
		echo "  see $log" >&2
	fi
done
exit $rc
