#!/usr/bin/env bash
# Signing steering variants (docs/CONFIG.md, dnssec.signing_keys): how long the control thread
# takes to sign N variants, for ECDSA P-256 and Ed25519 keys (ldns-keygen), measured where
# pop53d does it (p53_steer_build_signed, OpenSSL EVP) through `pop53d --check-config`, which
# builds and signs the table exactly as a start, reload, health change or re-signing does and
# prints "N steering variant(s), N signed in X ms". Each record is steered by the subnet map
# over 32 PoPs (32 one-PoP variants and the all-targets fallback: 33 variants per record).
#
# Usage: scripts/bench/sign.sh [--runs N] [--no-write] [VARIANTS ...]   (default 1023 10032)
# Environment: BUILD (meson build dir, default build).
# Writes into docs/BENCHMARKS.md between <!-- sign:begin --> and <!-- sign:end -->.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
. "$ROOT/scripts/bench/lib.sh"
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
RUNS=3
WRITE=1
SIZES=()
CMDLINE="scripts/bench/sign.sh${*:+ $*}"
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift ;;
	--no-write) WRITE=0 ;;
	-h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "sign.sh: unknown option $1" >&2; exit 2 ;;
	*) SIZES+=("$1") ;;
	esac
	shift
done
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1023 10032)
ninja -C "$BUILD" control/pop53d >/dev/null
TMP=$(mktemp -d /tmp/p53-sign.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# The map: PoP Pnn for 10.nn.0.0/16.
{ echo "["; for i in $(seq 1 32); do
	printf '{"networks": ["10.%d.0.0/16"], "labels": ["P%02d"]}%s\n' "$i" "$i" "$([ "$i" = 32 ] && echo || echo ,)"
done; echo "]"; } >"$TMP/map.json"

config() { # config KEY RECORDS
	cat <<YAML
server: {identity: bench}
dataplane: {port: net_null0, addresses: [192.0.2.53]}
zones:
  - {name: example.com, file: $TMP/example.com.zone}
dnssec:
  signing_keys: [$1]
steering:
  map: $TMP/map.json
  records:
YAML
	for r in $(seq 1 "$2"); do
		echo "    - owner: s$r.example.com."
		echo "      type: A"
		echo "      policy: [map]"
		if [ "$r" = 1 ]; then
			echo "      pool: &pool"
			for i in $(seq 1 32); do printf '        - {name: t%d, address: 10.0.0.%d, pop: P%02d}\n' "$i" "$i" "$i"; done
		else
			echo "      pool: *pool"
		fi
	done
}

declare -A RES
for alg in ECDSAP256SHA256 ED25519; do
	key=$(cd "$TMP" && ldns-keygen -a "$alg" -k example.com)
	rm -f "$TMP/$key.ds"
	ldns-signzone -n -o example.com. -f "$TMP/example.com.zone" "$ROOT/zones/example.com.zone" "$TMP/$key"
	for n in "${SIZES[@]}"; do
		recs=$(( (n + 32) / 33 ))
		config "$TMP/$key" "$recs" >"$TMP/c.yaml"
		ms=()
		for ((r = 1; r <= RUNS; r++)); do
			out=$("$BUILD/control/pop53d" --check-config "$TMP/c.yaml" 2>/dev/null)
			v=$(sed -n 's/.*; \([0-9]*\) steering variant(s), \([0-9]*\) signed in \([0-9.]*\) ms.*/\2 \3/p' <<<"$out")
			[ -n "$v" ] || { echo "sign.sh: no signing figure in: $out" >&2; exit 1; }
			ms+=("${v#* }")
			signed=${v% *}
		done
		med=$(printf '%s\n' "${ms[@]}" | sort -n | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }')
		RES[$alg,$n]="$signed|$med|$(awk -v m="$med" -v s="$signed" 'BEGIN { printf "%.1f", m * 1000 / s }')|${ms[*]}"
		bench_log "$alg: $signed variants signed in $med ms (median of ${ms[*]})"
	done
done

# OpenSSL's own figure on this machine, the floor for one signature.
speed=$(openssl speed -seconds 1 ecdsap256 ed25519 2>/dev/null |
	awk '/ecdsa \(nistp256\)/ { p = 1e6 / $(NF-1) } /EdDSA \(Ed25519\)/ { e = 1e6 / $(NF-1) }
	     END { printf "ECDSA P-256 %.1f µs, Ed25519 %.1f µs per signature", p, e }')
{
	echo "## Signing steering variants"
	echo
	echo "\`scripts/bench/sign.sh\`: the control thread's time to sign N steering variants (one RRSIG"
	echo "each, OpenSSL EVP, one sample of at most 16 verified with the DNSKEY), measured by \`pop53d"
	echo "--check-config\`, which builds and signs the steering table as a start, reload, health change"
	echo "or the re-signing timer does. Each record: policy [map] over 32 one-PoP targets, 33 variants."
	echo
	echo "- Date: $(date -u '+%Y-%m-%d %H:%M') UTC; commit $(bench_commit "$ROOT"); $(bench_machine)"
	echo "- Command: \`$CMDLINE\` (median of $RUNS runs)"
	echo
	echo "| key | variants signed | time (ms) | µs per variant | runs (ms) |"
	echo "| --- | ---: | ---: | ---: | --- |"
	for alg in ECDSAP256SHA256 ED25519; do
		for n in "${SIZES[@]}"; do
			IFS='|' read -r s m per runs <<<"${RES[$alg,$n]}"
			echo "| $alg | $s | $m | $per | $runs |"
		done
	done
	echo
	echo "For comparison, \`openssl speed -seconds 1 ecdsap256 ed25519\` in the same run: $speed."
	echo "The time includes building each variant's signed data (canonical order, RFC 4034 §6.3) and"
	echo "a new EVP context per signature; the sample verification is not counted. On a shared"
	echo "machine the runs of one size differ by tens of per cent: compare figures of one run. Workers never sign: a signed steered answer is"
	echo "the same memcpy as an unsigned one, with the RRSIG's bytes after the records."
	echo
} >"$TMP/section.md"
cat "$TMP/section.md"
if [ "$WRITE" = 1 ]; then
	bench_md_replace "$ROOT/docs/BENCHMARKS.md" '<!-- sign:begin -->' '<!-- sign:end -->' "$TMP/section.md"
	bench_log "wrote the results into docs/BENCHMARKS.md"
fi
