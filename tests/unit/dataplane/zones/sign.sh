#!/usr/bin/env bash
# Regenerates the signed zones of tests/unit/dataplane/test_dnssec.c from the differential
# test's source zone (tests/differential/zones/signed.zone.in), with ldns-signzone (ldnsutils):
#   nsec.test.zone    NSEC
#   nsec3.test.zone   NSEC3, opt-out flag, salt 1a2b3c4d, 2 extra iterations (ldns still
#                     gives insecure delegations their NSEC3)
#   nsec3-resalted.test.zone  the same zone nsec3.test. signed again with salt cafe, 1 extra
#                     iteration: a reload with new NSEC3 parameters (the next closer cache)
#   optout.test.zone  kzonesign (knot-dnssecutils): NSEC3 with opt-out, no salt, no extra
#                     iteration; Knot leaves insecure delegations out of the chain
# Fresh ECDSA P-256 keys (not kept); signatures valid until 2037. The unit tests check which
# records a response carries, not the signatures, so they do not depend on the keys or dates.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC="$HERE/../../../differential/zones/signed.zone.in"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
for z in nsec.test nsec3.test; do
	ksk=$(ldns-keygen -a ECDSAP256SHA256 -k "$z")
	zsk=$(ldns-keygen -a ECDSAP256SHA256 "$z")
	sec=$(ldns-keygen -a ECDSAP256SHA256 -k "secure.$z")
	{ cat "$SRC"; ldns-key2ds -n -2 "$sec.key"; } > "$z.in"
	opts=()
	[ "$z" = nsec3.test ] && opts=(-n -p -s 1a2b3c4d -t 2)
	ldns-signzone "${opts[@]}" -o "$z." -i 20260101000000 -e 20371231000000 \
		-f "$HERE/$z.zone" "$z.in" "$ksk" "$zsk"
	[ "$z" = nsec3.test ] &&
		ldns-signzone -n -p -s cafe -t 1 -o "$z." -i 20260101000000 -e 20371231000000 \
			-f "$HERE/nsec3-resalted.test.zone" "$z.in" "$ksk" "$zsk"
done

mkdir -p kasp
{ cat "$SRC"; ldns-key2ds -n -2 "$(ldns-keygen -a ECDSAP256SHA256 -k secure.optout.test).key"; } > kasp/optout.test.zone
cat > kasp/knot.conf <<CONF
database:
    storage: "$T/kasp"
policy:
  - id: p
    algorithm: ecdsap256sha256
    nsec3: on
    nsec3-iterations: 0
    nsec3-salt-length: 0
    nsec3-opt-out: on
    rrsig-lifetime: 3650d
template:
  - id: default
    storage: "$T/kasp"
    file: "%s.zone"
zone:
  - domain: optout.test
    dnssec-signing: on
    dnssec-policy: p
CONF
kzonesign -c kasp/knot.conf -o "$HERE" optout.test >/dev/null 2>&1
[ -s "$HERE/optout.test.zone" ]
