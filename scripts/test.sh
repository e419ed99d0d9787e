#!/usr/bin/env bash
# Installs what pop53 needs, builds it with -Werror, and runs every test through meson test:
# cmocka unit tests, the lab integration tests (af_xdp on a veth, kdig, ping), the pcap test,
# the clean-exit test and the differential test against knotd. Exits non-zero on any failure.
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

# One plain summary line from meson's own log, for readers and CI alike.
/usr/bin/python3 - "$BUILD/meson-logs/testlog.json" <<'PY' || true
import json, sys
ok = bad = skip = 0
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"): ok += 1
    elif r == "SKIP": skip += 1
    else: bad += 1
print(f"{ok} passed, {bad} failed, {skip} skipped")
PY
exit $rc
