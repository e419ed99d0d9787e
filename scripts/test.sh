#!/usr/bin/env bash
# Installs what pop53 needs, builds it with -Werror, and runs every test through meson test:
# cmocka unit tests, the fuzz targets replaying their corpora, the lab integration tests
# (af_xdp on a veth, kdig, ping), the pcap tests, the clean-exit test and the differential
# test against knotd. Then the sanitizer job: a second build with ASAN and UBSAN
# (-Dsanitize=true, in $BUILD-asan) runs every test again: the unit tests, the fuzz corpora,
# the integration tests (af_xdp too) and the differential test (SANITIZE=0 skips it).
# Exits non-zero on any failure.
# Needs root (namespaces, XDP, hugepages), as CI has.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}

./scripts/deps.sh

if [ -d "$BUILD" ] && [ -f "$BUILD/build.ninja" ]; then
	meson setup --reconfigure "$BUILD" -Dwerror_ci=true -Dtests=true >/dev/null
else
	rm -rf "$BUILD"
	meson setup "$BUILD" -Dwerror_ci=true -Dtests=true >/dev/null
fi
ninja -C "$BUILD"

set +e
meson test -C "$BUILD" --print-errorlogs --num-processes 1 "$@"
rc=$?
set -e

summary() { # one plain summary line from meson's own log, for readers and CI alike
/usr/bin/python3 - "$1/meson-logs/testlog.json" <<'PY' || true
import json, sys
ok = bad = skip = 0
failed = []
for line in open(sys.argv[1]):
    t = json.loads(line)
    r = t["result"]
    if r in ("OK", "EXPECTEDFAIL"): ok += 1
    elif r == "SKIP": skip += 1
    else:
        bad += 1
        failed.append(f"{t['name']} ({r})")
print(f"{ok} passed, {bad} failed, {skip} skipped" + (": " + ", ".join(failed) if failed else ""))
PY
}
failures() { # the end of each failed test's output, for a log cut to its tail
/usr/bin/python3 - "$1/meson-logs/testlog.json" <<'PY' || true
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t["result"] not in ("OK", "EXPECTEDFAIL", "SKIP"):
        out = (t.get("stdout") or "").splitlines()[-25:]
        print(f"--- the end of {t['name']}'s output ({t['result']}):")
        print("\n".join(out))
PY
}
first=$(summary "$BUILD")
echo "$first"

# The sanitizer job: the same tests on an ASAN + UBSAN build. UBSan stops at the first error
# instead of printing and going on; LeakSanitizer reports leaks at exit (a test that checks
# pop53d's exit status fails on one). Tests are named on the command line only for the
# first pass: with names, this pass is skipped.
if [ "${SANITIZE:-1}" = 1 ] && [ $# -eq 0 ]; then
	ASAN_BUILD="$BUILD-asan"
	echo "sanitizer job: ASAN + UBSAN build in $ASAN_BUILD"
	if [ -d "$ASAN_BUILD" ] && [ -f "$ASAN_BUILD/build.ninja" ]; then
		meson setup --reconfigure "$ASAN_BUILD" -Dwerror_ci=true -Dtests=true -Dsanitize=true >/dev/null
	else
		rm -rf "$ASAN_BUILD"
		meson setup "$ASAN_BUILD" -Dwerror_ci=true -Dtests=true -Dsanitize=true >/dev/null
	fi
	ninja -C "$ASAN_BUILD"
	# Every suite runs under ASAN, af_xdp included. LeakSanitizer is told to ignore only the
	# leaks inside libxdp/libbpf that DPDK's af_xdp PMD leaves at port close (tests/lsan.supp).
	set +e
	ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0" \
		meson test -C "$ASAN_BUILD" --print-errorlogs --num-processes 1
	arc=$?
	set -e
	asan_summary=$(summary "$ASAN_BUILD")
	echo "sanitizer job: $asan_summary"
	[ "$arc" -eq 0 ] || rc=$arc
fi
# Both passes' results last, where a log cut to its tail still shows them.
failures "$BUILD"
[ -z "${asan_summary:-}" ] || failures "$ASAN_BUILD"
echo "first pass: $first"
[ -z "${asan_summary:-}" ] || echo "sanitizer job: $asan_summary"
exit $rc
