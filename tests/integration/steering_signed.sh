#!/usr/bin/env bash
# Signed steering variants (docs/CONFIG.md, dnssec.signing_keys): the zone is signed with
# ldns-signzone by a key that pop53d also holds; each steered variant then carries its own
# RRSIG made by pop53d's control thread, and `delv` validates steered answers against the
# zone's DNSKEY (trust anchor: that key), for ECDSA P-256 and Ed25519. Also: DO=0 answers carry
# no RRSIG, two clients get different variants with different signatures, the signing time is
# logged, the re-signing timer re-signs (new expiration) without a reload, and bad key
# configs are refused with file:line. A steered CNAME (cn.example.com., pool targets in the
# zone): per client (source address or ECS, two and three map subnets) its own CNAME with its
# RRSIG, then the chased target's RRset with the zone's RRSIG, validated by delv (no ECS) and
# by dnspython against the key (with ECS). 7 variants in all: map.example.com. A has 4,
# cn.example.com. CNAME 3 (one per PoP; its fallback, the first target, is FRA's).
# NODATA at a steered owner (AAAA, TXT at map.example.com.: the zone's chain lacks it) is
# proven by the NSEC (ED25519 run: NSEC-signed zone) or NSEC3 (ECDSA run: NSEC3) that pop53d
# makes and signs for the owner: delv says "negative response, fully validated", dnspython
# checks the record and its RRSIG; DO=0 stays plain NODATA; name errors below and beside the
# owner still validate; the timer re-signs that record too (a zone recompile). The zone signed
# again with changes (a value, a new name) and reloaded (`zone reload example.com`) is patched,
# the owner's record kept and still valid; a new name right after the owner in the NSEC chain
# (its next name changes) is patched too, the owner's NSEC made and signed again by the patch
# as the compile would (and validated by delv and dnspython); patched in the NSEC3 zone.
. "$(dirname "$0")/lib.sh"
trap cleanup_common EXIT
lab_lock

# After a patched reload (args: label, NAME, what NAME is, NX): delv validates NODATA at the
# steered owner, NAME's A and a name error at NX.
delv_after() {
	local out
	out=$(validate "$V4" map.example.com TXT)
	check "$1: ...delv validates NODATA at the steered owner" \
		grep -q '^; negative response, fully validated' <<<"$out"
	out=$(validate "$V4" "$2")
	check "$1: ...and $3" grep -q '^; fully validated' <<<"$out"
	out=$(validate "$V4" "$4")
	check "$1: ...and a name error ($4)" grep -q '^; negative response, fully validated' <<<"$out"
}

for t in ldns-keygen ldns-signzone delv kdig; do
	command -v "$t" >/dev/null || { echo "not ok - $t is not installed (scripts/deps.sh)"; exit 1; }
done

cat >"$TMP/map.json" <<'JSON'
[{"networks": ["192.0.2.0/24"], "labels": ["FRA"]},
 {"networks": ["2001:db8:53::/48"], "labels": ["NRT"]},
 {"networks": ["198.51.100.0/24"], "labels": ["ORD"]}]
JSON

"$SRC/scripts/lab.sh" up >/dev/null

# sign ALG DENIAL: a key for example.com, the zone signed with it (DENIAL: nsec3 or nsec), the
# trust anchor for delv.
sign() {
	local alg=$1 d="$TMP/$1" n=-n
	[ "$2" = nsec ] && n=
	mkdir -p "$d"
	KEY=$(cd "$d" && ldns-keygen -a "$alg" -k example.com)
	KEY="$d/$KEY"
	rm -f "$KEY.ds"
	ldns-signzone $n -o example.com. -i "$(date -u -d '-1 hour' +%Y%m%d%H%M%S)" \
		-e "$(date -u -d '+30 days' +%Y%m%d%H%M%S)" -f "$d/example.com.zone" \
		"$SRC/zones/example.com.zone" "$KEY"
	awk '{ for (d = 2; d <= NF && $d != "DNSKEY"; d++); if (d > NF) next;
	       printf "trust-anchors {\n  \"%s\" static-key %s %s %s \"", $1, $(d+1), $(d+2), $(d+3);
	       for (i = d + 4; i <= NF && substr($i, 1, 1) != ";"; i++) printf "%s", $i; print "\";\n};" }' \
		"$KEY.key" >"$d/anchors.conf"
	TAG=${KEY##*+}; TAG=$((10#$TAG))
}

CTL() { "$BUILD/control/pop53ctl" -s "$TMP/control.sock" "$@"; }
dig_rr() {
	ip netns exec "$CLIENT_NS" kdig +time=1 +retry=1 +short @"$V4" "$1" "${2:-A}" 2>/dev/null | head -1
}

# resign ALG DENIAL SED-EXPR LINES: the zone's source edited (SED-EXPR, LINES appended, the
# serial + 1 each time) and signed again with the same key, as a signer does.
SERIAL=$(awk '/; serial/ {print $1}' "$SRC/zones/example.com.zone")
resign() {
	local d="$TMP/$1" n=-n
	[ "$2" = nsec ] && n=
	SERIAL=$((SERIAL + 1))
	sed -e "s/^\(\t*\)[0-9]\{10\} ; serial/\1$SERIAL ; serial/" -e "$3" "$SRC/zones/example.com.zone" >"$d/src.zone"
	printf '%s\n' "$4" >>"$d/src.zone"
	ldns-signzone $n -o example.com. -i "$(date -u -d '-1 hour' +%Y%m%d%H%M%S)" \
		-e "$(date -u -d '+30 days' +%Y%m%d%H%M%S)" -f "$d/example.com.zone" "$d/src.zone" "$KEY"
}

# config ALG VALIDITY REFRESH MARGIN
config() {
	write_config "$TMP/pop53.yaml" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1" "$TMP/$1/example.com.zone"
	cat >>"$TMP/pop53.yaml" <<YAML
dnssec:
  signing_keys: [$KEY]
  signature_validity: $2
  signature_refresh: $3
  signature_margin: $4
steering:
  map: $TMP/map.json
  records:
    - owner: map.example.com.
      type: A
      policy: [map]
      ttl: 300
      pool:
        - {name: ord2, address: 10.0.0.2, pop: ORD}
        - {name: ord1, address: 10.0.0.1, pop: ORD}
        - {name: nrt1, address: 10.0.0.3, pop: NRT}
        - {name: fra1, address: 10.0.0.4, pop: FRA}
    - owner: cn.example.com.
      type: CNAME
      policy: [map]
      ttl: 60
      pool:
        - {name: cn-fra, target: www.example.com., pop: FRA}
        - {name: cn-nrt, target: mail.example.com., pop: NRT}
        - {name: cn-ord, target: ns2.example.com., pop: ORD}
YAML
}

# validate ADDR NAME [TYPE]: delv's verdict line, from the client namespace
validate() {
	ip netns exec "$CLIENT_NS" delv @"$1" -a "$D/anchors.conf" +root=example.com +nosplit +nottl \
		"$2" "${3:-A}" 2>&1
}

# denial_validate NAME TYPE: a DO=1 query; the rcode, the answer count, then per RRset of the
# authority section "TYPE OWNER ok|bad (why)|unsigned" checked against the DNSKEY (dnspython),
# and for an NSEC its next name and types, for an NSEC3 whether its owner is the hash of NAME
# and its next hash that hash + 1, and its types.
denial_validate() {
	ip netns exec "$CLIENT_NS" /usr/bin/python3 - "$V4" "$KEY.key" "$@" <<'PY'
import base64, sys
import dns.dnssec, dns.message, dns.name, dns.query, dns.rdatatype, dns.rcode, dns.rrset
server, keyfile, name, qtype = sys.argv[1:5]
zone = dns.name.from_text("example.com.")
for line in open(keyfile):
    if line.strip() and not line.startswith(";"):
        f = line.split()
        key = dns.rrset.from_text(zone, 3600, "IN", "DNSKEY", " ".join(f[f.index("DNSKEY") + 1:]))
r = dns.query.udp(dns.message.make_query(name, qtype, want_dnssec=True), server, timeout=3)
print("rcode=%s answers=%d" % (dns.rcode.to_text(r.rcode()), len(r.answer)))
sigs = {(rs.name, rs.covers): rs for rs in r.authority if rs.rdtype == dns.rdatatype.RRSIG}
for rs in r.authority:
    if rs.rdtype == dns.rdatatype.RRSIG:
        continue
    sig = sigs.get((rs.name, rs.rdtype))
    verdict = "unsigned"
    if sig is not None:
        try:
            dns.dnssec.validate(rs, sig, {zone: key})
            verdict = "ok"
        except Exception as e:
            verdict = "bad (%s)" % e
    extra = ""
    if rs.rdtype == dns.rdatatype.NSEC:
        extra = " next=%s types=%s" % (rs[0].next, rs[0].to_text().split(" ", 1)[1])
    elif rs.rdtype == dns.rdatatype.NSEC3:
        rd = rs[0]
        h = dns.dnssec.nsec3_hash(name, rd.salt, rd.iterations, rd.algorithm).lower()
        own = rs.name.labels[0].decode().lower() == h
        nxt = int.from_bytes(base64.b32hexdecode(h.upper()), "big") + 1
        extra = " owner=%s next=%s types=%s" % ("hash" if own else "other",
            "hash+1" if int.from_bytes(rd.next, "big") == nxt else "other",
            " ".join(dns.rdatatype.to_text(t) for w, b in rd.windows for i in range(len(b) * 8)
                     if b[i // 8] & (0x80 >> (i % 8)) for t in [w * 256 + i]))
    print(dns.rdatatype.to_text(rs.rdtype), rs.name, verdict + extra)
PY
}


# ecs_validate NAME TYPE ECS: a DO=1 query with an ECS option (delv sends none), every RRset of
# the answer section checked against its RRSIG with the DNSKEY of the trust anchor's key file
# (dnspython): one line per RRset, "TYPE OWNER RDATA... ok|bad (why)|unsigned", then
# "scope=S rcode=R".
ecs_validate() {
	ip netns exec "$CLIENT_NS" /usr/bin/python3 - "$V4" "$KEY.key" "$@" <<'PY'
import sys
import dns.dnssec, dns.edns, dns.message, dns.name, dns.query, dns.rdataclass, dns.rdatatype, dns.rcode, dns.rrset, dns.zone
server, keyfile, name, qtype, ecs = sys.argv[1:6]
zone = dns.name.from_text("example.com.")
key = None
for line in open(keyfile):
    if line.strip() and not line.startswith(";"):
        f = line.split()
        d = f.index("DNSKEY")
        key = dns.rrset.from_text(zone, 3600, "IN", "DNSKEY", " ".join(f[d + 1:]))
addr, plen = ecs.split("/")
q = dns.message.make_query(name, qtype, want_dnssec=True,
                           options=[dns.edns.ECSOption(addr, int(plen))])
r = dns.query.udp(q, server, timeout=3)
sigs = {}
for rs in r.answer:
    if rs.rdtype == dns.rdatatype.RRSIG:
        sigs[(rs.name, rs.covers)] = rs
for rs in r.answer:
    if rs.rdtype == dns.rdatatype.RRSIG:
        continue
    sig = sigs.get((rs.name, rs.rdtype))
    if sig is None:
        verdict = "unsigned"
    else:
        try:
            dns.dnssec.validate(rs, sig, {zone: key})
            verdict = "ok"
        except Exception as e:
            verdict = "bad (%s)" % e
    print(dns.rdatatype.to_text(rs.rdtype), rs.name, " ".join(sorted(x.to_text() for x in rs)), verdict)
scope = [o.scopelen for o in r.options if isinstance(o, dns.edns.ECSOption)]
print("scope=%s rcode=%s" % (scope[0] if scope else "", dns.rcode.to_text(r.rcode())))
PY
}

for alg in ECDSAP256SHA256 ED25519; do
	num=13; denial=nsec3
	[ "$alg" = ED25519 ] && num=15 && denial=nsec
	sign "$alg" "$denial"
	D="$TMP/$alg"
	config "$alg" 1209600 604800 259200
	start_pop53_answering "$TMP/pop53.yaml"

	out=$(validate "$V4" map.example.com)
	check "$alg: delv validates the steered answer to 192.0.2.1 (FRA variant)" \
		grep -q '^; fully validated' <<<"$out"
	check "$alg: ...and it is the FRA variant" grep -Eq '^map\.example\.com\.[[:space:]]+IN[[:space:]]+A[[:space:]]+10\.0\.0\.4$' <<<"$out"
	out6=$(validate "$V6" map.example.com)
	check "$alg: delv validates the steered answer to 2001:db8:53::1 (NRT variant)" \
		grep -q '^; fully validated' <<<"$out6"
	check "$alg: ...and it is the NRT variant" grep -Eq '^map\.example\.com\.[[:space:]]+IN[[:space:]]+A[[:space:]]+10\.0\.0\.3$' <<<"$out6"
	out=$(validate "$V4" ns1.example.com)
	check "$alg: delv validates a static answer of the same zone (the zone and the key agree)" \
		grep -q '^; fully validated' <<<"$out"

	k=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" +dnssec map.example.com A +subnet=198.51.100.7/32 2>&1)
	sig1=$(awk '!/^;/ && $4=="RRSIG" && $5=="A" {print $NF}' <<<"$k")
	check "$alg: DO=1 with ECS 198.51.100.7: RRSIG A, algorithm $num, key tag $TAG, signer example.com." \
		grep -Eq "RRSIG[[:space:]]+A $num 3 300 [0-9]+ [0-9]+ $TAG example.com\. " <<<"$k"
	check "$alg: ...over the ORD variant, two A records (pool order 10.0.0.2 first; signed in canonical order)" \
		[ "$(awk '!/^;/ && $4=="A" {print $5}' <<<"$k" | sort | tr '\n' ' ')" = "10.0.0.1 10.0.0.2 " ]
	k2=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" +dnssec map.example.com A +subnet=192.0.2.0/24 2>&1)
	sig2=$(awk '!/^;/ && $4=="RRSIG" && $5=="A" {print $NF}' <<<"$k2")
	check "$alg: another variant has another signature" test -n "$sig1" -a -n "$sig2" -a "$sig1" != "$sig2"
	k=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" map.example.com A 2>&1)
	check "$alg: DO=0: no RRSIG" bash -c "! grep -q RRSIG <<<'$k'"
	check "$alg: the signing time is logged" \
		grep -Eq 'steering: signed 7 variant\(s\) in [0-9.]+ ms \([0-9.]+ us each\), 7 verified with the DNSKEY' "$TMP/pop53d.log"

	# NODATA at the steered owner (AAAA, TXT: map.example.com. has only its steered A): the
	# compiler's own NSEC/NSEC3 for the owner, signed with the key, proves it.
	for qt in AAAA TXT; do
		out=$(validate "$V4" map.example.com "$qt")
		check "$alg ($denial): delv validates NODATA for $qt at the steered owner" \
			grep -q '^; negative response, fully validated' <<<"$out"
	done
	got=$(denial_validate map.example.com AAAA)
	if [ "$denial" = nsec ]; then
		want="rcode=NOERROR answers=0
SOA example.com. ok
NSEC map.example.com. ok next=ns1.example.com. types=A RRSIG NSEC"
	else
		want="rcode=NOERROR answers=0
SOA example.com. ok
NSEC3 $(awk 'NR == 3 {print $2}' <<<"$got") ok owner=hash next=hash+1 types=A RRSIG"
	fi
	expect "$alg ($denial): DO=1 AAAA at the steered owner: SOA and the owner's own $denial, each with a valid RRSIG" \
		"$want" "$got"
	k=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" map.example.com AAAA 2>&1)
	check "$alg ($denial): DO=0 AAAA at the steered owner: plain NODATA, no DNSSEC record" \
		bash -c "grep -q 'status: NOERROR' <<<'$k' && grep -q 'ANSWER: 0' <<<'$k' && ! grep -Eq 'RRSIG|NSEC' <<<'$k'"
	out=$(validate "$V4" nope.map.example.com)
	check "$alg ($denial): delv still validates a name error below the steered owner" \
		grep -q '^; negative response, fully validated' <<<"$out"
	out=$(validate "$V4" nope.example.com)
	check "$alg ($denial): ...and one beside it (the chain is unchanged)" \
		grep -q '^; negative response, fully validated' <<<"$out"
	check "$alg ($denial): no 'negative answers there cannot be proven' warning for the steered owners" \
		bash -c "! grep -q 'cannot be proven' '$TMP/pop53d.log'"

	# A steered CNAME in the signed zone: each variant's CNAME carries its own RRSIG, the
	# chased target's RRset (static, in the zone) its own, and both validate.
	out=$(validate "$V4" cn.example.com)
	check "$alg: delv validates the steered CNAME from 192.0.2.1 (FRA: www.example.com., chased to its A)" \
		grep -q '^; fully validated' <<<"$out"
	check "$alg: ...CNAME www.example.com. and its RRSIG" bash -c "grep -Eq '^cn\.example\.com\.[[:space:]]+IN[[:space:]]+CNAME[[:space:]]+www\.example\.com\.$' <<<'$out' &&
		grep -Eq '^cn\.example\.com\.[[:space:]]+IN[[:space:]]+RRSIG[[:space:]]+CNAME $num 3 60 ' <<<'$out'"
	check "$alg: ...then www.example.com. A 192.0.2.80 and its RRSIG" bash -c "grep -Eq '^www\.example\.com\.[[:space:]]+IN[[:space:]]+A[[:space:]]+192\.0\.2\.80$' <<<'$out' &&
		grep -Eq '^www\.example\.com\.[[:space:]]+IN[[:space:]]+RRSIG[[:space:]]+A $num 3 300 ' <<<'$out'"
	out6=$(validate "$V6" cn.example.com)
	check "$alg: delv validates the steered CNAME from 2001:db8:53::1 (NRT: mail.example.com.)" \
		grep -q '^; fully validated' <<<"$out6"
	check "$alg: ...CNAME mail.example.com. then its A 192.0.2.25, both signed" bash -c "grep -Eq '^cn\.example\.com\.[[:space:]]+IN[[:space:]]+CNAME[[:space:]]+mail\.example\.com\.$' <<<'$out6' &&
		grep -Eq '^mail\.example\.com\.[[:space:]]+IN[[:space:]]+A[[:space:]]+192\.0\.2\.25$' <<<'$out6' &&
		grep -Eq '^cn\.example\.com\.[[:space:]]+IN[[:space:]]+RRSIG[[:space:]]+CNAME ' <<<'$out6' &&
		grep -Eq '^mail\.example\.com\.[[:space:]]+IN[[:space:]]+RRSIG[[:space:]]+A ' <<<'$out6'"
	# The same record asked with ECS from two map subnets (delv sends no ECS: dnspython checks
	# each RRSIG against the key).
	expect "$alg: ECS 198.51.100.7/32 (ORD): CNAME ns2.example.com. and the A behind it, each with a valid RRSIG, scope 24" \
		"CNAME cn.example.com. ns2.example.com. ok
A ns2.example.com. 198.51.100.53 ok
scope=24 rcode=NOERROR" "$(ecs_validate cn.example.com A 198.51.100.7/32)"
	expect "$alg: ECS 192.0.2.0/24 (FRA): CNAME www.example.com. and its A, each with a valid RRSIG, scope 24" \
		"CNAME cn.example.com. www.example.com. ok
A www.example.com. 192.0.2.80 ok
scope=24 rcode=NOERROR" "$(ecs_validate cn.example.com A 192.0.2.0/24)"
	expect "$alg: ECS 2001:db8:53::/56 (NRT), AAAA: CNAME mail.example.com. and its AAAA, each with a valid RRSIG, scope 48" \
		"CNAME cn.example.com. mail.example.com. ok
AAAA mail.example.com. 2001:db8:25::25 ok
scope=48 rcode=NOERROR" "$(ecs_validate cn.example.com AAAA 2001:db8:53::/56)"
	k=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" +dnssec cn.example.com A +subnet=198.51.100.7/32 2>&1)
	k2=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" +dnssec cn.example.com A +subnet=192.0.2.0/24 2>&1)
	csig1=$(awk '!/^;/ && $4=="RRSIG" && $5=="CNAME" {print $NF}' <<<"$k")
	csig2=$(awk '!/^;/ && $4=="RRSIG" && $5=="CNAME" {print $NF}' <<<"$k2")
	check "$alg: the two CNAME variants have different signatures" test -n "$csig1" -a -n "$csig2" -a "$csig1" != "$csig2"
	k=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" cn.example.com A +subnet=198.51.100.7/32 2>&1)
	check "$alg: DO=0: the steered CNAME and its target without RRSIG" bash -c "grep -q 'CNAME[[:space:]]*ns2.example.com.' <<<'$k' && ! grep -q RRSIG <<<'$k'"

	# `zone reload example.com` after the signer signed the zone again with changes (issue
	# 13): the image is patched, not compiled in full, the owner's NSEC/NSEC3 that pop53d
	# signed is kept (the same record: its next name and types hold) and still validates.
	resign "$alg" "$denial" 's/^\(www\t\t300 IN A\t\).*/\1192.0.2.99/' $'zz\t\t300 IN A\t192.0.2.98'
	out=$(CTL zone reload example.com 2>&1)
	check "$alg ($denial): zone reload of the signed zone with steered owners is patched ($(head -c 160 <<<"$out"))" \
		grep -qE '^image: patched: zone example\.com\.' <<<"$out"
	expect "$alg ($denial): ...www.example.com A changed" "192.0.2.99" "$(dig_rr www.example.com A)"
	expect "$alg ($denial): ...zz.example.com A new" "192.0.2.98" "$(dig_rr zz.example.com A)"
	expect "$alg ($denial): ...DO=1 AAAA at the steered owner: its $denial kept, valid" "$want" \
		"$(denial_validate map.example.com AAAA)"
	delv_after "$alg ($denial)" www.example.com "the changed www.example.com A" nope.example.com
	# A name right after the steered owner: in the NSEC chain the owner's NSEC names its
	# next name, which the patch makes and signs again with the zone's key (round 21; it
	# was compiled in full before); an NSEC3 zone hashes it elsewhere (patched).
	resign "$alg" "$denial" 's/^\(www\t\t300 IN A\t\).*/\1192.0.2.99/' $'zz\t\t300 IN A\t192.0.2.98\nmapa\t\t300 IN A\t192.0.2.97'
	out=$(CTL zone reload example.com 2>&1)
	if [ "$denial" = nsec ]; then
		check "$alg ($denial): a name right after the steered owner: patched, its NSEC signed again ($(head -c 160 <<<"$out"))" \
			grep -qE '^image: patched: zone example\.com\.' <<<"$out"
		want="rcode=NOERROR answers=0
SOA example.com. ok
NSEC map.example.com. ok next=mapa.example.com. types=A RRSIG NSEC"
	else
		check "$alg ($denial): a name right after the steered owner: patched" \
			grep -qE '^image: patched: zone example\.com\.' <<<"$out"
		got=$(denial_validate map.example.com AAAA)
		want="rcode=NOERROR answers=0
SOA example.com. ok
NSEC3 $(awk 'NR == 3 {print $2}' <<<"$got") ok owner=hash next=hash+1 types=A RRSIG"
	fi
	expect "$alg ($denial): ...mapa.example.com A served" "192.0.2.97" "$(dig_rr mapa.example.com A)"
	expect "$alg ($denial): ...DO=1 AAAA at the steered owner: its $denial as the full compile makes it" \
		"$want" "$(denial_validate map.example.com AAAA)"
	delv_after "$alg ($denial)" mapa.example.com "the new mapa.example.com A" mapb.example.com
	# The steered owner gains data of its own and so its own NSEC/NSEC3 from the signer (the
	# compile takes it and signs none: in the NSEC3 zone it takes the node of the one pop53
	# signed), then loses it again (pop53's signed again in its place, by the patch, round
	# 23): patched both times, answered as the full compile and validating.
	resign "$alg" "$denial" 's/^\(www\t\t300 IN A\t\).*/\1192.0.2.99/' $'zz\t\t300 IN A\t192.0.2.98\nmapa\t\t300 IN A\t192.0.2.97\nmap\t\t300 IN TXT\t"own"'
	out=$(CTL zone reload example.com 2>&1)
	check "$alg ($denial): the steered owner gains a TXT and its own $denial: patched ($(head -c 160 <<<"$out"))" \
		grep -qE '^image: patched: zone example\.com\.' <<<"$out"
	out=$(validate "$V4" map.example.com TXT)
	check "$alg ($denial): ...delv validates its TXT" grep -q '^; fully validated' <<<"$out"
	got=$(denial_validate map.example.com AAAA)
	check "$alg ($denial): ...DO=1 AAAA at it: the signer's $denial, valid ($(tr '\n' ' ' <<<"$got"))" \
		bash -c "grep -q '^rcode=NOERROR answers=0\$' <<<'$got' && grep -Eq '^NSEC3? .* ok .*types=.*TXT' <<<'$got' && ! grep -q ' bad' <<<'$got'"
	resign "$alg" "$denial" 's/^\(www\t\t300 IN A\t\).*/\1192.0.2.99/' $'zz\t\t300 IN A\t192.0.2.98\nmapa\t\t300 IN A\t192.0.2.97'
	out=$(CTL zone reload example.com 2>&1)
	check "$alg ($denial): ...and loses it again: patched, pop53's $denial signed in its place ($(head -c 160 <<<"$out"))" \
		grep -qE '^image: patched: zone example\.com\.' <<<"$out"
	got=$(denial_validate map.example.com AAAA)
	[ "$denial" = nsec ] || want="rcode=NOERROR answers=0
SOA example.com. ok
NSEC3 $(awk 'NR == 3 {print $2}' <<<"$got") ok owner=hash next=hash+1 types=A RRSIG"
	expect "$alg ($denial): ...DO=1 AAAA at the steered owner: its $denial as the full compile makes it" \
		"$want" "$got"
	delv_after "$alg ($denial), owner's own record gone" mapa.example.com "the mapa.example.com A" mapb.example.com
	check "$alg: pop53d stops cleanly" stop_pop53
done

# The re-signing timer: validity 70 s, re-signed when 65 s are left (5 s after signing).
D="$TMP/ED25519"
config ED25519 70 65 60
start_pop53_answering "$TMP/pop53.yaml"
exp() { ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" +dnssec map.example.com A 2>&1 |
	awk '!/^;/ && $4=="RRSIG" {print $9; exit}'; }
e1=$(exp)
resigned=
for _ in $(seq 1 40); do
	sleep 0.5
	e2=$(exp)
	[ -n "$e2" ] && [ "$e2" != "$e1" ] && { resigned=1; break; }
done
check "timer: the variants are re-signed before expiry, with a later expiration ($e1 -> ${e2:-none})" [ -n "$resigned" ]
check "timer: the re-signing is logged" grep -q 'steering: variants re-signed (signature_refresh 65 s)' "$TMP/pop53d.log"
out=$(validate "$V4" map.example.com)
check "timer: the re-signed answer validates" grep -q '^; fully validated' <<<"$out"
# The owners' NSEC (ED25519: an NSEC-signed zone) is made by the compile: its timer recompiles
# the zones, with the same period.
nexp() { ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" +dnssec map.example.com AAAA 2>&1 |
	awk '!/^;/ && $4=="RRSIG" && $5=="NSEC" && $1=="map.example.com." {print $9; exit}'; }
n1=$(nexp)
renewed=
for _ in $(seq 1 40); do
	sleep 0.5
	n2=$(nexp)
	[ -n "$n2" ] && [ "$n2" != "$n1" ] && { renewed=1; break; }
done
check "timer: the steered owner's NSEC is re-signed too, with a later expiration ($n1 -> ${n2:-none})" [ -n "$renewed" ]
out=$(validate "$V4" map.example.com AAAA)
check "timer: ...and NODATA there still validates" grep -q '^; negative response, fully validated' <<<"$out"
check "timer: no reload was asked for (every zone recompile is the denial timer's)" \
	[ "$(grep -c 'reload' "$TMP/pop53d.log")" = \
	  "$(( $(grep -c "re-signing the steered owners' NSEC/NSEC3" "$TMP/pop53d.log") ))" ]
check "pop53d stops cleanly" stop_pop53
check "no mbuf leaked" grep -q 'no leak' "$TMP/pop53d.log"

# Bad key configs: refused at the key's line.
bad() { # bad WHAT SED-EXPR EXPECTED-MESSAGE
	sed "$2" "$TMP/pop53.yaml" >"$TMP/bad.yaml"
	local line out
	line=$(grep -n 'signing_keys' "$TMP/bad.yaml" | cut -d: -f1)
	out=$("$POP53D" --check-config "$TMP/bad.yaml" 2>&1)
	check "bad config: $1" grep -qF "$TMP/bad.yaml:$line: dnssec.signing_keys[0]: $3" <<<"$out"
}
bad "a missing key file" "s|signing_keys: \[.*\]|signing_keys: [$TMP/nope]|" \
	"$TMP/nope.key: No such file or directory"
cp "$KEY.key" "$TMP/mismatch.key"
cp "$TMP/ECDSAP256SHA256/"K*.private "$TMP/mismatch.private"
bad "a private key of another algorithm than its DNSKEY" "s|signing_keys: \[.*\]|signing_keys: [$TMP/mismatch]|" \
	"$TMP/mismatch.private: algorithm or key size differs from the .key file"
other=$(cd "$TMP" && ldns-keygen -a ED25519 example.com)
cp "$TMP/$other.private" "$TMP/mismatch.private"
bad "a private key that is not the DNSKEY's" "s|signing_keys: \[.*\]|signing_keys: [$TMP/mismatch]|" \
	"$TMP/mismatch.private: the private key does not match the DNSKEY in the .key file"
sed 's/signature_refresh: 65/signature_refresh: 50/' "$TMP/pop53.yaml" >"$TMP/bad.yaml"
out=$("$POP53D" --check-config "$TMP/bad.yaml" 2>&1)
check "bad config: signature_refresh at or below signature_margin" \
	grep -q 'signature_refresh (50 s) must be above signature_margin (60 s)' <<<"$out"
out=$("$POP53D" --check-config "$TMP/pop53.yaml" 2>&1)
check "--check-config signs the variants too, and says how long it took" \
	grep -Eq "ok \(1 zone\(s\), [0-9]+ records, image [0-9]+ bytes; 7 steering variant\(s\), 7 signed in [0-9.]+ ms\)" <<<"$out"
grep -v 'signing_keys' "$TMP/pop53.yaml" >"$TMP/nokey.yaml"
line=$(grep -n 'owner: map.example.com.' "$TMP/nokey.yaml" | cut -d: -f1)
out=$("$POP53D" --check-config "$TMP/nokey.yaml" 2>&1)
check "a steered record in a signed zone without a key is warned about, at its line" \
	grep -q "$TMP/nokey.yaml:$line: steering.records\[0\]: map.example.com. is in the signed zone example.com. but no dnssec.signing_keys key is for that zone" <<<"$out"
check "...and the image's steered RRset is not reported as lacking an RRSIG" \
	bash -c "! grep -q \"A at 'map.example.com.' has no RRSIG\" <<<'$out'"
[ "$FAIL" -eq 0 ] && [ -z "${VERBOSE:-}" ] || cat "$TMP/pop53d.log"
finish
