#!/usr/bin/env bash
# pop53d as a secondary of a hidden primary that signs (knotd with automatic DNSSEC, NSEC3,
# tests/integration/xfr_lib.sh): a change of a record's value at the primary arrives as an
# IXFR carrying the record, its new RRSIG and the SOA's, and is patched into the running image
# (not compiled); what kdig +dnssec sees from pop53 then is what the primary serves (the
# answer with its RRSIGs, and an NXDOMAIN's NSEC3 proof). A change that adds a name (a new
# NSEC3 in the chain, its neighbour's next hash) and one that removes it are patched too
# (docs/ARCHITECTURE.md, "NSEC3 zones: names and types that come and go") and served as the
# primary serves them: the name, and name errors' NSEC3 proofs around it. A delegation's DS
# added, its NS set changed, its DS removed, its glue renumbered are patched too, and the DO
# referral is the primary's (NS and DS with its RRSIG, or NS and the NSEC3 that proves no DS;
# the glue). A new secure delegation with its glue, and its removal, are patched too, served
# as the primary serves them (the referral and its glue; then name errors' NSEC3 proofs).
# A wildcard added, changed and removed; a CNAME added, its target changed, removed; the apex
# NS set given a second server and losing its first; a DNAME added, its target changed and
# removed (the synthesized CNAME beside the DNAME and its RRSIG); a cut below a cut, NS put
# above a cut and taken away again; a CNAME below a cut added, re-pointed and replaced by
# glue: each patched, served as the primary serves them.
# A second zone, oo.test, signed with an NSEC3 opt-out chain (RFC 5155 §6): NS put above an
# insecure delegation and taken away again (it and the empty non-terminal above it own no
# NSEC3, so nothing of the chain comes in the diff: image_patch.c glue_proofs), the apex NS
# set removed whole and given back (signed_apex_ns_set): each patched, served as the primary
# serves them.
# Then a wildcard at the apex of each zone added and removed (every name error becoming an
# expansion, and back): patched, the expanded answers, the wildcard's NODATA and the name
# errors with DO as the primary serves them. A TYPE65534 at each apex and an AMTRELAY at www
# (types above 127, the NSEC3 bitmaps' windows 255 and 1) added and removed: patched, served
# as the primary serves them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfr_lib.sh"

xfr_begin

xfr_lab_up
KNOT_EXTRA_TEMPLATES="$KNOT_NSEC3_SIGNER
$KNOT_NSEC3_OPTOUT_SIGNER"
knot_zone_conf() {
	echo "    dnssec-signing: on"
	case $1 in oo.test) echo "    dnssec-policy: optout" ;; *) echo "    dnssec-policy: signer" ;; esac
}
knotd_conf signed.test oo.test
knot_zone signed.test 1 "txt IN TXT \"one\"" "mail IN A 192.0.2.25" "mail IN AAAA 2001:db8::25" \
	"kid IN NS ns.kid" "ns.kid IN A 192.0.2.60"
# oo.test: insecure delegations, none owning an NSEC3 (opt-out); mid an empty non-terminal
# leading only to low.mid.
knot_zone oo.test 1 "kid IN NS ns.kid" "ns.kid IN A 192.0.2.60" \
	"low.mid IN NS ns.elsewhere.example."
knotd_up
ok "knotd (signing primary) starts in $PRIMARY_NS"

xfr_config "$TMP/pop53.yaml" "  - name: signed.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]
  - name: oo.test
    primaries: [{address: $PRIMARY_V4, key: xfr.key}]"
start_pop53_answering "$TMP/pop53.yaml"

# The last IXFR to signed.test was patched into the image, and at least $1 were in all.
patched_at_least() { zone_patched signed.test "$1"; }
serial_of() { ip netns exec "$PRIMARY_NS" kdig +time=1 +short @"$PRIMARY_V4" signed.test SOA | awk '{ print $3 }'; }

# 1. The first transfer: the signed zone (AXFR).
check "signed.test transferred with its RRSIGs (www A, kdig +dnssec)" \
	wait_for 10 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +dnssec @$V4 www.signed.test A +noall +answer | grep -q 'RRSIG.*A 13 3'"
check "the answer and its RRSIG are the primary's" same_as_primary answer www.signed.test A

# 2. A value changed at the primary: knotd signs it again, the IXFR is patched.
s0=$(serial_of)
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test www A >/dev/null
knotc zone-set signed.test www 300 A 192.0.2.99 >/dev/null
knotc zone-commit signed.test >/dev/null
check "the change is served (www.signed.test A 192.0.2.99)" \
	wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 www.signed.test A)\" = 192.0.2.99 ]"
s1=$(serial_of)
check "the change came as an IXFR with the record's and the SOA's RRSIGs (serial $s0 to $s1)" \
	sh -c "[ '$s1' != '$s0' ] && grep -q 'IXFR to serial $s1: [0-9]* deleted, [0-9]* added' $TMP/pop53d.log"
check "the IXFR to the signed zone was patched into the running image, not compiled" \
	patched_at_least 1
check "kdig +dnssec: the new A and its new RRSIG, as the primary serves them" \
	same_as_primary answer www.signed.test A
check "kdig +dnssec: the SOA and its new RRSIG, as the primary serves them" \
	same_as_primary answer signed.test SOA
check "kdig +dnssec: an unchanged RRset (mail AAAA) and its RRSIG" \
	same_as_primary answer mail.signed.test AAAA
check "kdig +dnssec: a name error's NSEC3 proof is the primary's" \
	same_as_primary authority nothere.signed.test A
check "kdig +dnssec: a NODATA's NSEC3 proof is the primary's" \
	same_as_primary authority txt.signed.test A

# 3. Several values changed in one commit (TXT, AAAA): patched again.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test txt TXT >/dev/null
knotc zone-set signed.test txt 300 TXT "\"two\"" >/dev/null
knotc zone-unset signed.test mail AAAA >/dev/null
knotc zone-set signed.test mail 300 AAAA 2001:db8::26 >/dev/null
knotc zone-commit signed.test >/dev/null
check "the second change is served (mail AAAA 2001:db8::26)" \
	wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 mail.signed.test AAAA)\" = 2001:db8::26 ]"
check "patched again (ixfr_image counts two patches)" \
	patched_at_least 2
check "kdig +dnssec: the new TXT and its RRSIG as the primary's" \
	same_as_primary answer txt.signed.test TXT
check "kdig +dnssec: the new AAAA and its RRSIG as the primary's" \
	same_as_primary answer mail.signed.test AAAA

# The health check's signature margin reads the zone's earliest RRSIG expiration from the
# image: after the patches it must be the earliest of the primary's RRSIGs (its AXFR).
ip netns exec "$PRIMARY_NS" kdig +time=2 @"$PRIMARY_V4" -y "hmac-sha256:xfr.key:$XFR_SECRET" signed.test AXFR \
	+noall +answer 2>/dev/null | awk '$4 == "RRSIG" { print $9 }' >"$TMP/expirations.txt"
check "status: the signed zone's earliest RRSIG expiration is the primary's ($(sort -n "$TMP/expirations.txt" | head -1))" \
	/usr/bin/python3 -c "
import calendar, json, sys, time
exp = [calendar.timegm(time.strptime(l.strip(), '%Y%m%d%H%M%S')) for l in open(sys.argv[2]) if l.strip()]
z = [z for z in json.loads(sys.argv[1])['zones'] if z['name'].rstrip('.') == 'signed.test'][0]
assert exp and z['dnssec']['signed'] and z['dnssec']['expires'] == min(exp), (z, min(exp) if exp else None)
" "$(CTL --json status)" "$TMP/expirations.txt"

# 4. A new name: a new NSEC3 in the chain. Patched; served right.
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test fresh 300 A 192.0.2.77 >/dev/null
knotc zone-commit signed.test >/dev/null
check "the new name is served (fresh.signed.test A 192.0.2.77)" \
	wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 fresh.signed.test A)\" = 192.0.2.77 ]"
check "that IXFR was patched too (ixfr_image counts three patches)" \
	patched_at_least 3
check "kdig +dnssec: the new name's A and RRSIG as the primary's" \
	same_as_primary answer fresh.signed.test A
check "kdig +dnssec: a name error's NSEC3 proof after the new NSEC3, as the primary's" \
	same_as_primary authority nothere.signed.test A
check "kdig +dnssec: a name error below the new name, as the primary's" \
	same_as_primary authority x.fresh.signed.test A

# 5. The name removed again: its NSEC3 leaves the chain. Patched; name errors as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test fresh >/dev/null
knotc zone-commit signed.test >/dev/null
check "the removed name is a name error (fresh.signed.test)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 fresh.signed.test A | grep -q NXDOMAIN"
check "that IXFR was patched (ixfr_image counts four patches)" \
	patched_at_least 4
check "kdig +dnssec: the removed name's NSEC3 proof as the primary's" \
	same_as_primary authority fresh.signed.test A
check "kdig +dnssec: another name error's NSEC3 proof as the primary's" \
	same_as_primary authority nothere.signed.test A

# 6. A child rolled its keys in: DS added at the delegation kid (signed, the NSEC3 at kid's
# hash gains DS and RRSIG in its bitmap). Patched; the DO referral carries DS and its RRSIG.
DS1="kid 3600 DS 12345 13 2 8f3c1a2b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test $DS1 >/dev/null
knotc zone-commit signed.test >/dev/null
check "the DS added at kid.signed.test is served" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +dnssec @$V4 x.kid.signed.test A +noall +authority | grep -q 'DS.*12345 13 2'"
check "that IXFR was patched (ixfr_image counts five patches)" \
	patched_at_least 5
check "kdig +dnssec: the referral to kid carries NS, DS and the DS's RRSIG, as the primary's" \
	same_as_primary authority x.kid.signed.test A
check "kdig +dnssec: kid DS (the parent's answer) and its RRSIG, as the primary's" \
	same_as_primary answer kid.signed.test DS

# 7. The child's NS set changed (not signed): patched; the referral as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test kid 3600 NS ns.elsewhere.example. >/dev/null
knotc zone-commit signed.test >/dev/null
check "the new NS of kid.signed.test is served" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 x.kid.signed.test A +noall +authority | grep -q 'ns.elsewhere.example'"
check "that IXFR was patched (ixfr_image counts six patches)" \
	patched_at_least 6
check "kdig +dnssec: the referral (two NS, DS, RRSIG) as the primary's" \
	same_as_primary authority x.kid.signed.test A

# 8. The delegation made insecure: DS removed. Patched; the referral proves no DS by the
# NSEC3 at kid's hash, as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test kid DS >/dev/null
knotc zone-commit signed.test >/dev/null
check "the DS removed from kid.signed.test is no longer served" \
	wait_for 5 sh -c "! ip netns exec $CLIENT_NS kdig +time=1 +dnssec @$V4 x.kid.signed.test A +noall +authority | grep -q 'DS.*12345'"
check "that IXFR was patched (ixfr_image counts seven patches)" \
	patched_at_least 7
check "kdig +dnssec: the insecure referral's NSEC3 proof, as the primary's" \
	same_as_primary authority x.kid.signed.test A

# 9. The child's name server renumbered (glue, not signed): patched; the referral's glue as
# the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test ns.kid A >/dev/null
knotc zone-set signed.test ns.kid 3600 A 192.0.2.61 >/dev/null
knotc zone-commit signed.test >/dev/null
check "the renumbered glue ns.kid.signed.test is served in the referral" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 x.kid.signed.test A +noall +additional | grep -q '192.0.2.61'"
check "that IXFR was patched (ixfr_image counts eight patches)" \
	patched_at_least 8
check "kdig +dnssec: the referral's glue as the primary's" \
	same_as_primary additional x.kid.signed.test A

# 10. A new secure delegation with its glue (NS, DS and in-domain glue; knotd adds the NSEC3
# at its hash, NS DS RRSIG, and changes its neighbour's next hash): patched; the DO referral
# (NS, DS and its RRSIG) and its glue as the primary's.
DS2="newkid 3600 DS 23456 13 2 9f3c1a2b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test newkid 3600 NS ns.newkid >/dev/null
knotc zone-set signed.test ns.newkid 3600 A 192.0.2.62 >/dev/null
knotc zone-set signed.test $DS2 >/dev/null
knotc zone-commit signed.test >/dev/null
check "the new delegation newkid.signed.test is served as a referral" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 x.newkid.signed.test A +noall +authority | grep -q 'ns.newkid'"
check "that IXFR was patched (ixfr_image counts nine patches)" \
	patched_at_least 9
check "kdig +dnssec: the new referral (NS, DS, RRSIG) as the primary's" \
	same_as_primary authority x.newkid.signed.test A
check "kdig +dnssec: the new referral's glue as the primary's" \
	same_as_primary additional x.newkid.signed.test A
check "kdig +dnssec: a name error's NSEC3 proof beside the new delegation, as the primary's" \
	same_as_primary authority nothere.signed.test A

# 11. The delegation removed with its glue: the NSEC3 at its hash leaves the chain. Patched;
# names below it are name errors, with the primary's NSEC3 proof.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test newkid >/dev/null
knotc zone-unset signed.test ns.newkid >/dev/null
knotc zone-commit signed.test >/dev/null
check "the removed delegation is a name error (x.newkid.signed.test)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 x.newkid.signed.test A | grep -q NXDOMAIN"
check "that IXFR was patched (ixfr_image counts ten patches)" \
	patched_at_least 10
check "kdig +dnssec: the removed delegation's NSEC3 proof as the primary's" \
	same_as_primary authority x.newkid.signed.test A

# 12. A wildcard comes (issue 13: in a signed zone, with its NSEC3 and its neighbour's):
# patched; a name it matches is answered with the expanded A, its RRSIG and the NSEC3
# proving no closer match, as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test '*.mail' 300 A 192.0.2.88 >/dev/null
knotc zone-commit signed.test >/dev/null
check "the new wildcard answers host.mail.signed.test A 192.0.2.88" \
	wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 host.mail.signed.test A)\" = 192.0.2.88 ]"
check "that IXFR was patched (ixfr_image counts eleven patches)" \
	patched_at_least 11
check "kdig +dnssec: the wildcard-expanded A and its RRSIG, as the primary's" \
	same_as_primary answer host.mail.signed.test A
check "kdig +dnssec: the NSEC3 proving no closer match, as the primary's" \
	same_as_primary authority host.mail.signed.test A

# 13. The wildcard's address changed (signed again): patched; served as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test '*.mail' A >/dev/null
knotc zone-set signed.test '*.mail' 300 A 192.0.2.89 >/dev/null
knotc zone-commit signed.test >/dev/null
check "the wildcard's new address is served (host.mail.signed.test A 192.0.2.89)" \
	wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 host.mail.signed.test A)\" = 192.0.2.89 ]"
check "that IXFR was patched (ixfr_image counts twelve patches)" \
	patched_at_least 12
check "kdig +dnssec: the expanded answer, as the primary's" \
	same_as_primary answer other.mail.signed.test A

# 14. The wildcard goes (its NSEC3 leaves the chain): patched; a name error as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test '*.mail' >/dev/null
knotc zone-commit signed.test >/dev/null
check "host.mail.signed.test is a name error again" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 host.mail.signed.test A | grep -q NXDOMAIN"
check "that IXFR was patched (ixfr_image counts thirteen patches)" \
	patched_at_least 13
check "kdig +dnssec: the name error's NSEC3 proof, as the primary's" \
	same_as_primary authority host.mail.signed.test A

# 15. A CNAME at a new name (issue 13: in a signed zone, with its RRSIG and its NSEC3, the
# neighbour's next hash): patched; the CNAME and its target, signed, as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test alias 300 CNAME www >/dev/null
knotc zone-commit signed.test >/dev/null
check "the new CNAME is served (alias.signed.test CNAME www)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 alias.signed.test A | grep -q '^www.signed.test.$'"
check "that IXFR was patched (ixfr_image counts fourteen patches)" \
	patched_at_least 14
check "kdig +dnssec: the CNAME, the target's A and their RRSIGs, as the primary's" \
	same_as_primary answer alias.signed.test A
check "kdig +dnssec: the CNAME asked for, as the primary's" \
	same_as_primary answer alias.signed.test CNAME
check "kdig +dnssec: a name error's NSEC3 proof beside the new CNAME, as the primary's" \
	same_as_primary authority nothere.signed.test A

# 16. The CNAME's target changed (signed again): patched; served as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test alias CNAME >/dev/null
knotc zone-set signed.test alias 300 CNAME mail >/dev/null
knotc zone-commit signed.test >/dev/null
check "the CNAME's new target is served (alias.signed.test CNAME mail)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 alias.signed.test A | grep -q '^mail.signed.test.$'"
check "that IXFR was patched (ixfr_image counts fifteen patches)" \
	patched_at_least 15
check "kdig +dnssec: the CNAME to mail, its A and their RRSIGs, as the primary's" \
	same_as_primary answer alias.signed.test A
check "kdig +dnssec: the CNAME to mail, its AAAA and their RRSIGs, as the primary's" \
	same_as_primary answer alias.signed.test AAAA

# 17. The CNAME removed (its NSEC3 leaves the chain): patched; a name error as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test alias >/dev/null
knotc zone-commit signed.test >/dev/null
check "alias.signed.test is a name error again" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 alias.signed.test A | grep -q NXDOMAIN"
check "that IXFR was patched (ixfr_image counts sixteen patches)" \
	patched_at_least 16
check "kdig +dnssec: the removed CNAME's NSEC3 proof, as the primary's" \
	same_as_primary authority alias.signed.test A

# 18. The apex NS set changed: a second name server, in the zone with its address (the NS
# RRset signed again; a new name, its NSEC3): patched; the NS answer, its RRSIG and the
# servers' addresses as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test @ 300 NS ns2 >/dev/null
knotc zone-set signed.test ns2 300 A 192.0.2.54 >/dev/null
knotc zone-commit signed.test >/dev/null
check "the new apex NS is served (signed.test NS ns2)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 signed.test NS | grep -q '^ns2.signed.test.$'"
check "that IXFR was patched (ixfr_image counts seventeen patches)" \
	patched_at_least 17
check "kdig +dnssec: the apex NS set and its RRSIG, as the primary's" \
	same_as_primary answer signed.test NS
check "kdig: the name servers' addresses (the NS set's additional list)" \
	sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 signed.test NS +noall +additional | grep -q '^ns2.signed.test.*192.0.2.54'"

# 19. The first name server removed from the apex NS set: patched; as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test @ NS ns1 >/dev/null
knotc zone-commit signed.test >/dev/null
check "the apex NS set without ns1 is served" \
	wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 signed.test NS)\" = ns2.signed.test. ]"
check "that IXFR was patched (ixfr_image counts eighteen patches)" \
	patched_at_least 18
check "kdig +dnssec: the apex NS set and its new RRSIG, as the primary's" \
	same_as_primary answer signed.test NS
check "kdig: the additional section names ns2 alone" \
	sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 @$V4 signed.test NS +noall +additional | awk '\$4 == \"A\" { print \$1 }')\" = ns2.signed.test. ]"

# 20. A DNAME comes (issue 13: in a signed zone, with its RRSIG, its NSEC3 and its
# neighbour's): patched; a name below it is answered with the DNAME, its RRSIG and the
# synthesized CNAME (RFC 6672 §5.3, not signed), as the primary answers.
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test moved 300 DNAME example.net. >/dev/null
knotc zone-commit signed.test >/dev/null
check "the new DNAME is synthesized (host.moved.signed.test CNAME host.example.net.)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 host.moved.signed.test A +noall +answer | grep -q 'CNAME.*host.example.net'"
check "that IXFR was patched (ixfr_image counts nineteen patches)" \
	patched_at_least 19
check "kdig +dnssec: the DNAME, its RRSIG and the synthesized CNAME, as the primary's" \
	same_as_primary answer host.moved.signed.test A
check "kdig +dnssec: the DNAME asked itself, with its RRSIG, as the primary's" \
	same_as_primary answer moved.signed.test DNAME
check "kdig +dnssec: a name error's NSEC3 proof beside the DNAME, as the primary's" \
	same_as_primary authority nothere.signed.test A

# 21. The DNAME's target changed (signed again): patched; the new synthesis as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test moved DNAME >/dev/null
knotc zone-set signed.test moved 300 DNAME example.org. >/dev/null
knotc zone-commit signed.test >/dev/null
check "the DNAME's new target is synthesized (host.moved.signed.test CNAME host.example.org.)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 host.moved.signed.test A +noall +answer | grep -q 'CNAME.*host.example.org'"
check "that IXFR was patched (ixfr_image counts twenty patches)" \
	patched_at_least 20
check "kdig +dnssec: the changed DNAME, its RRSIG and the new CNAME, as the primary's" \
	same_as_primary answer host.moved.signed.test A

# 22. The DNAME goes (its NSEC3 leaves the chain): patched; names below it are name errors
# with the primary's NSEC3 proof.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test moved >/dev/null
knotc zone-commit signed.test >/dev/null
check "host.moved.signed.test is a name error again" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 host.moved.signed.test A | grep -q NXDOMAIN"
check "that IXFR was patched (ixfr_image counts twenty-one patches)" \
	patched_at_least 21
check "kdig +dnssec: the name error's NSEC3 proof, as the primary's" \
	same_as_primary authority host.moved.signed.test A

# pop53's SOA serial is the primary's (for changes no answer shows).
pop_serial_is_primary() {
	[ "$(ip netns exec "$CLIENT_NS" kdig +time=1 +short @"$V4" signed.test SOA | awk '{ print $3 }')" = "$(serial_of)" ]
}

# 23. A cut below a cut (issue 13: nested cuts in a signed zone): NS at sub.kid, below the
# delegation kid, is occluded: not signed, no NSEC3. Patched; names below it still get the
# referral to kid, as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test sub.kid 3600 NS ns.elsewhere.example. >/dev/null
knotc zone-commit signed.test >/dev/null
check "the IXFR with NS below the cut kid is served (pop53's serial is the primary's)" \
	wait_for 5 pop_serial_is_primary
check "that IXFR was patched (ixfr_image counts twenty-two patches)" \
	patched_at_least 22
check "kdig +dnssec: a name below the nested cut gets kid's referral, as the primary's" \
	same_as_primary authority x.sub.kid.signed.test A
check "kdig +dnssec: that referral's glue, as the primary's" \
	same_as_primary additional x.sub.kid.signed.test A

# 24. A new delegation below a new empty non-terminal (low.mid; mid and low.mid get their
# NSEC3s): patched; its referral as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test low.mid 3600 NS ns.elsewhere.example. >/dev/null
knotc zone-commit signed.test >/dev/null
check "the new delegation low.mid.signed.test is served as a referral" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 x.low.mid.signed.test A +noall +authority | grep -q 'low.mid.signed.test.*NS'"
check "that IXFR was patched (ixfr_image counts twenty-three patches)" \
	patched_at_least 23
check "kdig +dnssec: the referral to low.mid and its no-DS proof, as the primary's" \
	same_as_primary authority x.low.mid.signed.test A

# 25. NS above that cut: mid becomes a cut, low.mid is occluded (its NSEC3 leaves the chain,
# mid's bitmap gains NS). Patched; names below low.mid now get mid's referral, as the
# primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test mid 3600 NS ns.other.example. >/dev/null
knotc zone-commit signed.test >/dev/null
check "the cut mid.signed.test above low.mid is served (the referral names ns.other.example.)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 x.low.mid.signed.test A +noall +authority | grep -q 'mid.signed.test.*NS.*ns.other.example'"
check "that IXFR was patched (ixfr_image counts twenty-four patches)" \
	patched_at_least 24
check "kdig +dnssec: the referral to mid and its no-DS proof, as the primary's" \
	same_as_primary authority x.low.mid.signed.test A
check "kdig +dnssec: a name error's NSEC3 proof beside mid, as the primary's" \
	same_as_primary authority nothere.signed.test A

# 26. The cut above removed: low.mid is a delegation of the zone again (its NSEC3 back in the
# chain, mid an empty non-terminal). Patched; low.mid's referral as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test mid NS >/dev/null
knotc zone-commit signed.test >/dev/null
check "low.mid.signed.test's own referral is served again" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 x.low.mid.signed.test A +noall +authority | grep -q 'low.mid.signed.test.*NS'"
check "that IXFR was patched (ixfr_image counts twenty-five patches)" \
	patched_at_least 25
check "kdig +dnssec: the referral to low.mid and its no-DS proof, as the primary's" \
	same_as_primary authority x.low.mid.signed.test A

# 27. A CNAME new below the cut kid (issue 13: occluded data, not signed, no NSEC3: glue_cname):
# patched; names there still get kid's referral, as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-set signed.test www.kid 300 CNAME mail >/dev/null
knotc zone-commit signed.test >/dev/null
check "the IXFR with a CNAME below the cut kid is served (pop53's serial is the primary's)" \
	wait_for 5 pop_serial_is_primary
check "that IXFR was patched (ixfr_image counts twenty-six patches)" \
	patched_at_least 26
check "kdig +dnssec: the CNAME owner below kid gets kid's referral, as the primary's" \
	same_as_primary authority www.kid.signed.test A
check "kdig +dnssec: that referral's glue, as the primary's" \
	same_as_primary additional www.kid.signed.test A

# 28. That CNAME re-pointed (still glue): patched; the referral as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test www.kid CNAME >/dev/null
knotc zone-set signed.test www.kid 300 CNAME txt >/dev/null
knotc zone-commit signed.test >/dev/null
check "the IXFR re-pointing the CNAME below kid is served (pop53's serial is the primary's)" \
	wait_for 5 pop_serial_is_primary
check "that IXFR was patched (ixfr_image counts twenty-seven patches)" \
	patched_at_least 27
check "kdig +dnssec: the referral for www.kid, as the primary's" \
	same_as_primary authority www.kid.signed.test A

# 29. The CNAME below kid replaced by an address that kid's NS set now names (it ceases to be
# a CNAME owner and becomes glue the referral carries): patched; as the primary's.
knotc zone-begin signed.test >/dev/null
knotc zone-unset signed.test www.kid CNAME >/dev/null
knotc zone-set signed.test www.kid 300 A 192.0.2.61 >/dev/null
knotc zone-set signed.test kid 3600 NS www.kid >/dev/null
knotc zone-commit signed.test >/dev/null
check "kid's referral carries the new glue (www.kid.signed.test A 192.0.2.61)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 x.kid.signed.test A +noall +additional | grep -q '^www.kid.signed.test.*192.0.2.61'"
check "that IXFR was patched (ixfr_image counts twenty-eight patches)" \
	patched_at_least 28
check "kdig +dnssec: kid's referral (NS, DS or its proof), as the primary's" \
	same_as_primary authority x.kid.signed.test A
check "kdig +dnssec: the referral's glue, www.kid's address among it, as the primary's" \
	same_as_primary additional x.kid.signed.test A

# The opt-out zone (oo.test). Its serial at pop53 is the primary's once an IXFR is served.
oo_serial_is_primary() {
	[ "$(ip netns exec "$CLIENT_NS" kdig +time=1 +short @"$V4" oo.test SOA | awk '{ print $3 }')" = \
	  "$(ip netns exec "$PRIMARY_NS" kdig +time=1 +short @"$PRIMARY_V4" oo.test SOA | awk '{ print $3 }')" ]
}
# oo_ixfr_types FROM_SERIAL: the record types of the primary's IXFR to oo.test from that
# serial (what pop53 was sent).
oo_ixfr_types() {
	ip netns exec "$PRIMARY_NS" kdig +time=2 @"$PRIMARY_V4" -y "hmac-sha256:xfr.key:$XFR_SECRET" \
		oo.test "IXFR=$1" +noall +answer 2>/dev/null | awk '{ print $4 }' | sort -u | tr '\n' ' '
}
oo_serial() { ip netns exec "$PRIMARY_NS" kdig +time=1 +short @"$PRIMARY_V4" oo.test SOA | awk '{ print $3 }'; }

# 30. The opt-out zone transferred: the insecure delegations own no NSEC3.
check "oo.test (NSEC3 opt-out) transferred with its RRSIGs (www A, kdig +dnssec)" \
	wait_for 10 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +dnssec @$V4 www.oo.test A +noall +answer | grep -q 'RRSIG.*A 13 3'"
check "kdig +dnssec: the referral to low.mid and its opt-out proof, as the primary's" \
	same_as_primary authority x.low.mid.oo.test A

# The steps above left garbage in the image (each patch appends); past a quarter of it the
# next IXFR is compiled in full. A full compile now, so the steps below each get a patch.
check "reload --full: the image compiled anew (no garbage left)" \
	sh -c "'$BUILD/control/pop53ctl' -s '$TMP/control.sock' reload --full >/dev/null"

# 31. NS put above the insecure delegation low.mid (issue 13: glue flips in an opt-out
# chain): mid becomes an insecure cut, low.mid occluded; neither owns an NSEC3, so the IXFR
# carries none (glue_proofs makes the proofs again). Patched; names below low.mid get mid's
# referral, as the primary's.
s30=$(oo_serial)
knotc zone-begin oo.test >/dev/null
knotc zone-set oo.test mid 3600 NS ns.other.example. >/dev/null
knotc zone-commit oo.test >/dev/null
check "the cut mid.oo.test above low.mid is served (the referral names ns.other.example.)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 x.low.mid.oo.test A +noall +authority | grep -q 'mid.oo.test.*NS.*ns.other.example'"
types=$(oo_ixfr_types "$s30")
check "the primary's IXFR for it carries no NSEC3 (types: $types)" \
	sh -c "echo '$types' | grep -q RRSIG && ! echo '$types' | grep -q NSEC3"
check "that IXFR was patched into the image, not compiled (oo.test)" \
	zone_patched oo.test 1 0
check "kdig +dnssec: the referral to mid and its opt-out proof, as the primary's" \
	same_as_primary authority x.low.mid.oo.test A
check "kdig +dnssec: mid itself (the referral), as the primary's" \
	same_as_primary authority mid.oo.test A
check "kdig +dnssec: a name error's NSEC3 proof, as the primary's" \
	same_as_primary authority nothere.oo.test A

# 32. That NS taken away: low.mid is freed (its own insecure referral again), mid an empty
# non-terminal; again no NSEC3 in the IXFR. Patched; as the primary's.
s31=$(oo_serial)
knotc zone-begin oo.test >/dev/null
knotc zone-unset oo.test mid NS >/dev/null
knotc zone-commit oo.test >/dev/null
check "low.mid.oo.test's own referral is served again" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 x.low.mid.oo.test A +noall +authority | grep -q 'low.mid.oo.test.*NS'"
types=$(oo_ixfr_types "$s31")
check "the primary's IXFR for it carries no NSEC3 (types: $types)" \
	sh -c "echo '$types' | grep -q RRSIG && ! echo '$types' | grep -q NSEC3"
check "that IXFR was patched (oo.test: two patches, none compiled)" \
	zone_patched oo.test 2 0
check "kdig +dnssec: the referral to low.mid and its opt-out proof, as the primary's" \
	same_as_primary authority x.low.mid.oo.test A
check "kdig +dnssec: the empty non-terminal mid, as the primary's" \
	same_as_primary authority mid.oo.test A

# 33. The apex NS set removed whole (issue 13: signed_apex_ns_set; the apex's NSEC3 bitmap
# loses NS, signed again). Patched; the apex NODATA for NS and its proof, as the primary's.
knotc zone-begin oo.test >/dev/null
knotc zone-unset oo.test @ NS >/dev/null
knotc zone-commit oo.test >/dev/null
oo_apex_ns_gone() { oo_serial_is_primary && [ -z "$(ip netns exec "$CLIENT_NS" kdig +time=1 +short @"$V4" oo.test NS)" ]; }
check "the apex NS set is gone (oo.test NS: no answer, pop53's serial is the primary's)" \
	wait_for 5 oo_apex_ns_gone
check "that IXFR was patched (oo.test: three patches, none compiled)" \
	zone_patched oo.test 3 0
check "kdig +dnssec: the apex NODATA for NS and its NSEC3 proof, as the primary's" \
	same_as_primary authority oo.test NS
check "kdig +dnssec: the apex SOA and its RRSIG, as the primary's" \
	same_as_primary answer oo.test SOA

# 34. The apex NS set given back (a zone given its first name servers): patched; the NS set,
# its RRSIG and its additional list as the primary's.
knotc zone-begin oo.test >/dev/null
knotc zone-set oo.test @ 300 NS ns1 >/dev/null
knotc zone-commit oo.test >/dev/null
check "the apex NS set is served again (oo.test NS ns1)" \
	wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 oo.test NS | grep -q '^ns1.oo.test.$'"
check "that IXFR was patched (oo.test: four patches, none compiled)" \
	zone_patched oo.test 4 0
check "kdig +dnssec: the apex NS set and its RRSIG, as the primary's" \
	same_as_primary answer oo.test NS
check "kdig +dnssec: the NS set's additional list (ns1's address), as the primary's" \
	same_as_primary additional oo.test NS
check "kdig +dnssec: the insecure referral to kid, as the primary's" \
	same_as_primary authority x.kid.oo.test A

# 35-36. A wildcard at the apex added, then removed, in the NSEC3 and the opt-out zone (issue
# 13): every name error of the zone becomes an expansion, and back. Each IXFR patched; the
# expanded answers (DO: the RRSIG of the expansion and the NSEC3 proving no closer match), a
# wildcard NODATA, then the name errors (closest encloser, next closer, no wildcard) as the
# primary's.
patched_count() {
	CTL --json zone status "$1" | /usr/bin/python3 -c '
import json, sys
print(json.load(sys.stdin)["zone"]["ixfr_image"]["patched"])'
}
# knot_change ZONE STEP...: one transaction at the primary (knotd NOTIFYs pop53d when it is
# committed); each STEP is knotc's arguments in one string, split on spaces (no globs).
knot_change() {
	local zone=$1 step
	shift
	knotc zone-begin "$zone" >/dev/null
	for step in "$@"; do
		# shellcheck disable=SC2086 # the step's words, split on purpose
		knotc $step >/dev/null
	done
	knotc zone-commit "$zone" >/dev/null
}
for z in signed.test oo.test; do
	n0=$(patched_count "$z")
	knotc zone-begin "$z" >/dev/null
	knotc zone-set "$z" '*' 300 A 192.0.2.66 >/dev/null
	knotc zone-set "$z" '*' 300 TXT "apex wildcard" >/dev/null
	knotc zone-commit "$z" >/dev/null
	check "$z: the apex wildcard answers nothere.$z A 192.0.2.66" \
		wait_for 5 sh -c "[ \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 nothere.$z A)\" = 192.0.2.66 ]"
	check "$z: that IXFR was patched ($((n0 + 1)) patches)" zone_patched "$z" $((n0 + 1))
	check "$z: kdig +dnssec: the expanded A and its RRSIG, as the primary's" \
		same_as_primary answer nothere.$z A
	check "$z: kdig +dnssec: the NSEC3 proving no closer match, as the primary's" \
		same_as_primary authority nothere.$z A
	check "$z: kdig +dnssec: an expansion two labels down (TXT), as the primary's" \
		same_as_primary answer a.b.nothere.$z TXT
	check "$z: kdig +dnssec: the wildcard's NODATA (AAAA) and its proof, as the primary's" \
		same_as_primary authority nothere.$z AAAA
	check "$z: kdig +dnssec: an existing name's answer is not the wildcard's (www A)" \
		same_as_primary answer www.$z A
	knotc zone-begin "$z" >/dev/null
	knotc zone-unset "$z" '*' >/dev/null
	knotc zone-commit "$z" >/dev/null
	check "$z: nothere.$z is a name error again" \
		wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 @$V4 nothere.$z A | grep -q NXDOMAIN"
	check "$z: that IXFR was patched ($((n0 + 2)) patches)" zone_patched "$z" $((n0 + 2))
	check "$z: kdig +dnssec: the name error's NSEC3 proof (no wildcard), as the primary's" \
		same_as_primary authority nothere.$z A
	check "$z: kdig +dnssec: a name error two labels down, as the primary's" \
		same_as_primary authority a.b.nothere.$z TXT
done

# Types above 127 (round 26): a TYPE65534 at the apex (the signing-state record a BIND
# inline signer keeps there) and an AMTRELAY (260) at www, signed by the primary, the apex's
# and www's NSEC3 bitmaps naming them in windows 255 and 1: patched, not compiled, served as
# the primary serves them; then removed, patched again.
for z in signed.test oo.test; do
	n0=$(patched_count "$z")
	knot_change "$z" "zone-set $z $z. 0 TYPE65534 \\# 5 0d9f0a0000" \
		"zone-set $z www.$z. 300 TYPE260 \\# 2 0a00"
	check "$z: the apex's TYPE65534 is served" \
		wait_for 5 sh -c "ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 $z TYPE65534 | grep -qi 0d9f0a0000"
	check "$z: that IXFR was patched ($((n0 + 1)) patches, no compile)" zone_patched "$z" $((n0 + 1))
	check "$z: kdig +dnssec: the TYPE65534 and its RRSIG, as the primary's" \
		same_as_primary answer $z TYPE65534
	check "$z: kdig +dnssec: www's AMTRELAY and its RRSIG, as the primary's" \
		same_as_primary answer www.$z TYPE260
	check "$z: kdig +dnssec: the apex's NODATA (TYPE1000), its NSEC3 naming TYPE65534" \
		same_as_primary authority $z TYPE1000
	knot_change "$z" "zone-unset $z $z. TYPE65534" "zone-unset $z www.$z. TYPE260"
	check "$z: the TYPE65534 is gone (NODATA)" \
		wait_for 5 sh -c "[ -z \"\$(ip netns exec $CLIENT_NS kdig +time=1 +short @$V4 $z TYPE65534)\" ]"
	check "$z: that IXFR was patched ($((n0 + 2)) patches)" zone_patched "$z" $((n0 + 2))
	check "$z: kdig +dnssec: the TYPE65534 NODATA and its NSEC3, as the primary's" \
		same_as_primary authority $z TYPE65534
	check "$z: kdig +dnssec: www's AMTRELAY NODATA, as the primary's" \
		same_as_primary authority www.$z TYPE260
done

stop_pop53
finish
