#!/bin/bash
# Instructions per query of steered answers against static ones, per address family, with and
# without ECS: issue 12's "steering adds under 30 %" (docs/BENCHMARKS.md, "Steered answers after
# Round 3"). Each row runs p53-replay under callgrind for 20000 queries and prints
# p53_worker_burst's inclusive instructions per query for the static mix and for steered.
#
#   scripts/bench/steer_families.sh [BUILD]      # BUILD: meson build dir, default build
#
# P53_ANSWER_CACHE=N in the environment: the replay worker's answer cache (dataplane/qcache.h),
# N entries as `dataplane.answer_cache`; unset: pop53d's default (1024); 0: none. Both sides
# of a row run with the same setting, printed first.
#
# Needs valgrind and the steering sources replay.sh builds (BUILD/bench/steer/map.json and
# geo.mmdb: run `BUILD=BUILD scripts/bench/replay.sh --callgrind --no-write steered` once).
set -euo pipefail
B=${1:-build}
cd "$(dirname "$0")/../.."
[ -f "$B/bench/steer/map.json" ] && [ -f "$B/bench/steer/geo.mmdb" ] ||
	{ echo "no $B/bench/steer/{map.json,geo.mmdb}: run BUILD=$B scripts/bench/replay.sh --callgrind --no-write steered first" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run() {
	valgrind --tool=callgrind --callgrind-out-file="$out" --collect-atstart=no \
		--toggle-collect=replay_loop --toggle-collect=replay_copy_loop \
		"$B/scripts/bench/p53-replay" -z example.com=zones/example.com.zone \
		-n 20000 -f 65536 -t 3600 "$@" >/dev/null 2>&1
	callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
		awk '!done && /p53_worker_burst/ { gsub(",", "", $1); printf "%d\n", $1 / 20000; done = 1 }'
}
echo "answer cache: ${P53_ANSWER_CACHE:-default (1024)} entries"
S="--steer-map $B/bench/steer/map.json --steer-geo $B/bench/steer/geo.mmdb --clients 65536"
pair() {
	local label=$1 a b
	a=$(run $2); b=$(run $3)
	awk -v l="$label" -v a="$a" -v b="$b" 'BEGIN { printf "%-14s static %5d  steered %5d  %.3fx\n", l, a, b, b / a }'
}
pair "IPv6, no ECS" "-m small-a -6 100" "-m steered -6 100 --ecs-pct 0 $S"
pair "IPv4, no ECS" "-m small-a" "-m steered -6 0 --ecs-pct 0 $S"
pair "IPv6, ECS" "-m ecs -6 100" "-m steered -6 100 --ecs-pct 100 $S"
pair "IPv4, ECS" "-m ecs -6 0" "-m steered -6 0 --ecs-pct 100 $S"
