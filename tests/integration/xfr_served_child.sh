#!/usr/bin/env bash
# pop53d as a secondary of a hidden primary (knotd, tests/integration/xfr_lib.sh) for a signed
# parent (NSEC3, knotd signing) and its child, both served by pop53, as a CDN serves a customer
# zone and its delegated subzones (issue 13: the parent side of a served child). The
# parent's delegation to the child changes at the primary (DS added, the NS set changed, the
# glue renumbered, DS rolled and removed): each IXFR of the parent is patched into the
# running image, not compiled, and what kdig sees from pop53 is what knotd, which serves both
# zones too, serves: DS at the child's apex answered from the parent's side with its RRSIG
# (RFC 4035 §3.1.4.1), or the parent's NSEC3 proof that there is none; the child's own NS.
# New glue below the child's apex, and that glue removed, are patched too, and so is the
# delegation removed while its glue stays and added back over it (the glue's NSEC3 coming
# and going with knotd's signatures). A third zone, deep.mid.parent.test, served below a name
# of the parent's own (mid): a delegation added at mid (above that child's apex, making the
# parent's names there glue, their NSEC3s going) and removed again, patched too (round 25).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfr_lib.sh"

xfr_begin

xfr_lab_up
KNOT_EXTRA_TEMPLATES=$KNOT_NSEC3_SIGNER
knotd_conf parent.test kid.parent.test deep.mid.parent.test
# Only the parent is signed (its DS for the child, as a registry's would be).
/usr/bin/python3 - "$KNOT_DIR/knot.conf" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("  - domain: parent.test\n",
              "  - domain: parent.test\n    dnssec-signing: on\n    dnssec-policy: signer\n")
open(p, "w").write(s)
PY
knot_zone parent.test 1 "kid IN NS ns.kid" "kid IN NS ns1.parent.test." "ns.kid IN A 192.0.2.60" \
	"txt IN TXT \"one\"" "mail IN MX 10 ns2.kid.parent.test." "mid IN TXT \"mid\"" \
	"deep.mid IN NS ns.deep.mid" "ns.deep.mid IN A 192.0.2.70"
knot_zone kid.parent.test 1 "ns IN A 192.0.2.60" "@ IN NS ns" "host IN A 192.0.2.61"
knot_zone deep.mid.parent.test 1 "ns IN A 192.0.2.70" "@ IN NS ns" "host IN A 192.0.2.71"
knotd_up
ok "knotd (primary of parent.test, signing, and of kid.parent.test) starts in $PRIMARY_NS"

xfr_config "$TMP/pop53.yaml" "  - name: parent.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
  - name: kid.parent.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
  - name: deep.mid.parent.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]"
start_pop53_answering "$TMP/pop53.yaml"

# The last IXFR to parent.test was patched into the image, and at least $1 were in all, none
# compiled in full.
patched_at_least() { zone_patched parent.test "$1" 0; }
serial_of() { ip netns exec "$PRIMARY_NS" kdig +time=1 +short @"$PRIMARY_V4" parent.test SOA | awk '{ print $3 }'; }
served_serial() { dig_rr parent.test SOA | awk '{ print $3 }'; }
commit_and_wait() { # the serial the parent moves to is served
	local s0
	s0=$(serial_of)
	knotc zone-commit parent.test >/dev/null
	wait_for 5 sh -c "[ \"\$(ip netns exec $PRIMARY_NS kdig +time=1 +short @$PRIMARY_V4 parent.test SOA | awk '{ print \$3 }')\" != $s0 ]" &&
		wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 parent.test SOA | awk '{ print \$3 }')\" = \"\$(ip netns exec $PRIMARY_NS kdig +time=1 +short @$PRIMARY_V4 parent.test SOA | awk '{ print \$3 }')\" ]"
}
DS1="12345 13 2 86006005A02DFAF57B83CAD173BB2DF3C4A6E932844832C2969A62954F819FD1"
DS2="23456 13 2 0F1E2D3C4B5A69788796A5B4C3D2E1F00F1E2D3C4B5A69788796A5B4C3D2E1F0"

# 1. Both zones transferred (AXFR); DS at the child's apex: the parent's NSEC3 proof of none.
check "parent.test transferred with its RRSIGs" \
	wait_for 10 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +dnssec @$V4 txt.parent.test TXT +noall +answer | grep -q RRSIG"
check "kid.parent.test transferred (host A 192.0.2.61)" \
	wait_for 10 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 host.kid.parent.test A)\" = 192.0.2.61 ]"
check "kdig +dnssec kid.parent.test DS: no DS, the parent's NSEC3 proof, as the primary's" \
	same_as_primary authority kid.parent.test DS

# 2. DS added at the delegation (the child made secure): patched, answered from the parent.
knotc zone-begin parent.test >/dev/null
knotc zone-set parent.test kid 3600 DS $DS1 >/dev/null
commit_and_wait
check "DS at kid.parent.test is served from the parent's side (key tag 12345)" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 kid.parent.test DS | grep -q '^12345 13 2 '"
check "that IXFR was patched into the running image, not compiled (zone status)" patched_at_least 1
check "kdig +dnssec kid.parent.test DS: the DS and its RRSIG, as the primary's" \
	same_as_primary answer kid.parent.test DS
check "kid.parent.test NS is the child's own, as the primary's" \
	same_as_primary answer kid.parent.test NS

# 3. A second DS (a rollover's first step), then the old one removed.
knotc zone-begin parent.test >/dev/null
knotc zone-set parent.test kid 3600 DS $DS2 >/dev/null
commit_and_wait
check "two DS served, as the primary's (answer with RRSIG)" same_as_primary answer kid.parent.test DS
knotc zone-begin parent.test >/dev/null
knotc zone-unset parent.test kid DS $DS1 >/dev/null
commit_and_wait
check "the rolled DS alone, as the primary's" same_as_primary answer kid.parent.test DS
check "both IXFRs were patched" patched_at_least 3

# 4. The delegation's NS set changed and its glue renumbered at the primary.
knotc zone-begin parent.test >/dev/null
knotc zone-unset parent.test kid NS ns1.parent.test. >/dev/null
knotc zone-set parent.test kid 300 NS ns.other.example. >/dev/null
knotc zone-unset parent.test ns.kid A >/dev/null
knotc zone-set parent.test ns.kid 300 A 192.0.2.62 >/dev/null
commit_and_wait
check "the NS set and glue change was patched" patched_at_least 4
check "kid.parent.test NS is still the child's own, as the primary's" \
	same_as_primary answer kid.parent.test NS
check "ns.kid.parent.test A is the child's (192.0.2.60), as the primary's" \
	same_as_primary answer ns.kid.parent.test A
check "kdig +dnssec kid.parent.test DS: as the primary's" same_as_primary answer kid.parent.test DS

# 5. DS removed (the child made insecure): the parent's NSEC3 proof of no DS again.
knotc zone-begin parent.test >/dev/null
knotc zone-unset parent.test kid DS >/dev/null
commit_and_wait
check "that IXFR was patched" patched_at_least 5
check "kid.parent.test DS: NOERROR, no answer" \
	sh -c "[ -z \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 kid.parent.test DS)\" ] && \
	       [ \"\$(ip netns exec $CLIENT_NS kdig +time=1 @$V4 kid.parent.test DS | sed -n 's/.*status: \([A-Z]*\).*/\1/p')\" = NOERROR ]"
check "kdig +dnssec kid.parent.test DS: the parent's SOA and NSEC3 proof, as the primary's" \
	same_as_primary authority kid.parent.test DS

# 6. New glue below the served child's apex (a name new in the parent there, out of the
# name index as the compiler makes it): patched; the parent's MX naming it lists the
# parent's own copy of it (its glue) from now on.
knotc zone-begin parent.test >/dev/null
knotc zone-set parent.test kid 300 NS ns2.kid.parent.test. >/dev/null
knotc zone-set parent.test ns2.kid 300 A 192.0.2.63 >/dev/null
commit_and_wait
check "new glue below the child's apex was patched" patched_at_least 6
check "kdig +dnssec kid.parent.test DS: as the primary's" same_as_primary authority kid.parent.test DS
check "kid.parent.test NS is still the child's own, as the primary's" \
	same_as_primary answer kid.parent.test NS
check "ns2.kid.parent.test A: the child's answer (no such name there), as the primary's" \
	same_as_primary authority ns2.kid.parent.test A
check "mail.parent.test MX: as the primary's (answer with RRSIG)" \
	same_as_primary answer mail.parent.test MX
check "mail.parent.test MX: its additional section holds the new glue (192.0.2.63)" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 mail.parent.test MX +noall +additional | grep -q '192.0.2.63'"

# 7. That glue removed with its NS: patched; the MX's additional section loses it (the
# child holds no address there to list instead).
knotc zone-begin parent.test >/dev/null
knotc zone-unset parent.test kid NS ns2.kid.parent.test. >/dev/null
knotc zone-unset parent.test ns2.kid A >/dev/null
commit_and_wait
check "glue removed below the child's apex was patched" patched_at_least 7
check "kdig +dnssec kid.parent.test DS: as the primary's" same_as_primary authority kid.parent.test DS
check "mail.parent.test MX: as the primary's (answer with RRSIG)" \
	same_as_primary answer mail.parent.test MX
check "mail.parent.test MX: no additional address any more" \
	sh -c "! ip netns exec $CLIENT_NS kdig +time=1 @$V4 mail.parent.test MX +noall +additional | grep -q '192.0.2.63'"

# The child's own NS at its apex, and the parent's MX naming a name below it, as knotd's.
kid_and_mail_as_primary() {
	check "kid.parent.test NS is the child's own, as the primary's" \
		same_as_primary answer kid.parent.test NS
	check "mail.parent.test MX: as the primary's (answer with RRSIG)" \
		same_as_primary answer mail.parent.test MX
}

# 8. The delegation to the served child removed while its glue stays: ns.kid becomes a name
# of the signed parent (knotd signs it and gives it its NSEC3), kid an empty non-terminal
# of the parent. Patched (shadow_flips, the proofs made again with the chain's), not
# compiled; the DS question at the child's apex gets the parent's proof of no DS.
knotc zone-begin parent.test >/dev/null
knotc zone-unset parent.test kid NS >/dev/null
knotc zone-set parent.test mail 300 MX 20 ns.kid.parent.test. >/dev/null
commit_and_wait
check "the delegation removed, its glue left, was patched" patched_at_least 8
check "kdig +dnssec kid.parent.test DS: the parent's NSEC3 proof, as the primary's" \
	same_as_primary authority kid.parent.test DS
check "ns.kid.parent.test A: the child's answer, as the primary's" \
	same_as_primary answer ns.kid.parent.test A
kid_and_mail_as_primary

# 9. The delegation back at the name the parent holds: ns.kid becomes glue again (its NSEC3
# and RRSIG go). Patched, and answered as knotd.
knotc zone-begin parent.test >/dev/null
knotc zone-set parent.test kid 300 NS ns.kid.parent.test. >/dev/null
knotc zone-set parent.test kid 3600 DS $DS1 >/dev/null
commit_and_wait
check "the delegation added over the parent's names was patched" patched_at_least 9
check "kdig +dnssec kid.parent.test DS: the DS and its RRSIG, as the primary's" \
	same_as_primary answer kid.parent.test DS
kid_and_mail_as_primary

# 10. A delegation added at mid.parent.test, above the served deep.mid.parent.test's apex
# (outside it): the parent's deep.mid (that child's parent side) and ns.deep.mid become glue,
# their NSEC3s and RRSIGs going in the IXFR. Patched (occ_above), not compiled.
check "deep.mid.parent.test transferred (host A 192.0.2.71)" \
	wait_for 10 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 host.deep.mid.parent.test A)\" = 192.0.2.71 ]"
knotc zone-begin parent.test >/dev/null
knotc zone-set parent.test mid 300 NS ns.other.example. >/dev/null
commit_and_wait
check "a delegation added above a served child's apex was patched" patched_at_least 10
check "mid.parent.test: a referral to ns.other.example., as the primary's" \
	same_as_primary authority x.mid.parent.test A
check "deep.mid.parent.test NS is that child's own, as the primary's" \
	same_as_primary answer deep.mid.parent.test NS
check "host.deep.mid.parent.test A: that child's answer, as the primary's" \
	same_as_primary answer host.deep.mid.parent.test A
kid_and_mail_as_primary

# 11. That delegation removed: the parent's names below it are freed (signed again, their
# NSEC3s back). Patched.
knotc zone-begin parent.test >/dev/null
knotc zone-unset parent.test mid NS >/dev/null
commit_and_wait
check "the delegation above a served child's apex removed was patched" patched_at_least 11
check "mid.parent.test TXT: as the primary's (answer with RRSIG)" \
	same_as_primary answer mid.parent.test TXT
check "kdig +dnssec deep.mid.parent.test DS: the parent's NSEC3 proof, as the primary's" \
	same_as_primary authority deep.mid.parent.test DS
check "nothing compiled in full for parent.test" zone_patched parent.test 11 0

stop_pop53
finish
