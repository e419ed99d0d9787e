#!/usr/bin/env bash
# Steering compile benchmark: what a large subnet map and a large MaxMind DB cost to compile
# into the steering table (time, table bytes, bytes per network), through the entry points
# pop53d's publisher calls (build/scripts/bench/p53-steer-compile: p53_config_load,
# p53_steer_sources_load, p53_steer_build). The table is one copy shared by every worker
# (docs/ARCHITECTURE.md, Steering), so its bytes are the bytes per replica.
#
# Usage: scripts/bench/steer_compile.sh [--runs N] [--only map|geo|records]
# Environment: BUILD (meson build dir, default build), MAP_N (map networks, default 1000000),
# GEO_N (MMDB networks, default 1000000), GEO_SHAPE (steer_big.py's geo (default: the MMDB of
# the 1M figures, mostly IPv6) or city (GeoLite2-City-shaped: 75 % IPv4, with MaxMind's
# ::ffff:0:0/96 and 2002::/16 aliases)), WRITER (perl or c: the MMDB writer; default perl up to
# 20000 networks, c above: MaxMind's Perl writer took 192 s for 100000 networks on the 2-CPU
# VM, so a GeoLite2-sized DB of about 4M would take hours; build/scripts/bench/p53-mmdb-write
# (scripts/bench/mmdb_write.c) is ours, checked against it by scripts/bench/mmdb_write_check.sh;
# python, tests/steer/mmdb_writer.py, wrote the 1M figures: 731 s and 3.5 GB).
# The sources are generated once per build directory by scripts/bench/steer_big.py (seed 53).
# records: RECORDS_N (default 30000) steered names (one A each, over a one-entry map): what the
# config's records cost to load and link by owner: the whole process's wall and CPU time
# (process_wall_s, process_cpu_s = user+sys), of which build_s is p53_steer_build.
# Prints one line per run: p53-steer-compile's key=value and bytes_per_network.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
MAP_N=${MAP_N:-1000000}
GEO_N=${GEO_N:-1000000}
GEO_SHAPE=${GEO_SHAPE:-geo}
RUNS=3
ONLY="map geo"
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift ;;
	--only) ONLY=$2; shift ;;
	-h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "steer_compile.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
if [ -z "${WRITER:-}" ]; then
	if [ "$GEO_N" -le 20000 ]; then WRITER=perl; else WRITER=c; fi
fi
BIN="$BUILD/scripts/bench/p53-steer-compile"
[ -x "$BIN" ] || { echo "steer_compile.sh: build $BIN first (ninja -C $BUILD)" >&2; exit 1; }
D="$BUILD/bench/steer-big"
mkdir -p "$D"
log() { echo "[steer_compile $(date +%H:%M:%S)] $*" >&2; }

case $GEO_SHAPE in geo) GEO_TAG=$GEO_N ;; city) GEO_TAG=city-$GEO_N ;; *) echo "steer_compile.sh: GEO_SHAPE is geo or city" >&2; exit 2 ;; esac
ALIAS=
[ "$GEO_SHAPE" = city ] && ALIAS=--alias
RECORDS_N=${RECORDS_N:-30000}
if [ ! -s "$D/records-$RECORDS_N.yaml" ] && [[ " $ONLY " == *" records "* ]]; then
	log "generating a config of $RECORDS_N steered records"
	echo '[{"networks": ["198.51.100.0/24"], "labels": ["ORD", "LAX"]}]' >"$D/records-map.json"
	{
		printf 'server:\n  identity: bench\ndataplane:\n  port: net_null0\n  addresses: [192.0.2.1]\n'
		printf 'zones:\n  - {name: example.com, file: example.com.zone}\n'
		printf 'steering:\n  map: %s\n  records:\n' "$D/records-map.json"
		awk -v n="$RECORDS_N" 'BEGIN { for (i = 0; i < n; i++)
			printf "    - {owner: w%06d.example.com., type: A, policy: [map], pool: [{name: a1, address: 10.0.0.1, pop: ORD}, {name: a2, address: 10.0.0.2, pop: LAX}]}\n", i }'
	} >"$D/records-$RECORDS_N.yaml"
fi
if [ ! -s "$D/map-$MAP_N.json" ] && [[ " $ONLY " == *" map "* ]]; then
	log "generating a map of $MAP_N networks"
	python3 "$ROOT/scripts/bench/steer_big.py" map "$MAP_N" "$D/map-$MAP_N.json"
fi
GEO_DB="$D/geo-$GEO_TAG-$WRITER.mmdb"
if [ ! -s "$GEO_DB" ] && [[ " $ONLY " == *" geo "* ]]; then
	log "generating $GEO_N MMDB networks ($GEO_SHAPE), written by the $WRITER writer"
	python3 "$ROOT/scripts/bench/steer_big.py" "$GEO_SHAPE" "$GEO_N" "$D/geo-$GEO_TAG.json"
	case $WRITER in
	perl) /usr/bin/time -f "writer: %e s, %M KB" perl "$ROOT/tests/steer/mmdb_build.pl" \
		--record-size 32 $ALIAS "$GEO_DB" "$D/geo-$GEO_TAG.json" ;;
	c) /usr/bin/time -f "writer: %e s, %M KB" "$BUILD/scripts/bench/p53-mmdb-write" $ALIAS \
		"$GEO_DB" "$D/geo-$GEO_TAG.json" ;;
	python) [ -z "$ALIAS" ] || { echo "steer_compile.sh: the python writer has no aliases" >&2; exit 2; }
		/usr/bin/time -f "writer: %e s, %M KB" python3 "$ROOT/tests/steer/mmdb_writer.py" \
		"$GEO_DB" "$D/geo-$GEO_TAG.json" ;;
	*) echo "steer_compile.sh: WRITER is perl, c or python" >&2; exit 2 ;;
	esac
	rm -f "$D/geo-$GEO_TAG.json"
fi

# config POLICY SOURCE-KEY FILE: a config with one steered record over eight PoPs.
config() {
	cat <<YAML
server:
  identity: bench
dataplane:
  port: net_null0
  addresses: [192.0.2.1]
zones:
  - {name: example.com, file: example.com.zone}
steering:
  $2: $3
  records:
    - owner: www.example.com.
      type: A
      policy: [$1]
$( [ "$1" = geo ] && printf '      geo:\n        - {country: US, labels: [ORD]}\n        - {continent: EU, labels: [FRA]}\n        - {continent: AS, labels: [NRT]}\n' )
      pool:
        - {name: a1, address: 10.0.0.1, pop: ORD}
        - {name: a2, address: 10.0.0.2, pop: LAX}
        - {name: a3, address: 10.0.0.3, pop: FRA}
        - {name: a4, address: 10.0.0.4, pop: NRT}
        - {name: a5, address: 10.0.0.5, pop: AMS}
        - {name: a6, address: 10.0.0.6, pop: GRU}
        - {name: a7, address: 10.0.0.7, pop: SYD}
        - {name: a8, address: 10.0.0.8, pop: LHR}
YAML
}
config map map "$D/map-$MAP_N.json" >"$D/map.yaml"
config geo geoip "$GEO_DB" >"$D/geo.yaml"

for what in $ONLY; do
	if [ "$what" = records ]; then
		for _ in $(seq 1 "$RUNS"); do
			out=$(/usr/bin/time -f "process_wall_s=%e process_cpu_s=%U+%S" "$BIN" \
				"$D/records-$RECORDS_N.yaml" 2>&1)
			echo "records n=$RECORDS_N $(tr '\n' ' ' <<<"$out")"
		done
		continue
	fi
	n=$MAP_N
	[ "$what" = geo ] && n=$GEO_N
	for _ in $(seq 1 "$RUNS"); do
		out=$("$BIN" "$D/$what.yaml")
		bytes=$(sed -n 's/.*table_bytes=\([0-9]*\).*/\1/p' <<<"$out")
		echo "$what networks=$n $out bytes_per_network=$(awk -v b="$bytes" -v n="$n" 'BEGIN {printf "%.1f", b / n}')"
	done
done
