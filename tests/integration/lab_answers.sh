#!/usr/bin/env bash
# pop53d in af_xdp mode on the lab veth: real kdig queries over IPv4 and IPv6, answers checked
# record by record against the zone file, and the kernel still owning ARP/ND/ICMP and every
# packet that is not UDP/53 to a service address. With the answer cache on
# (dataplane.answer_cache): every check below passes through it, repeated questions are
# answered from it (pop53ctl workers), and a record changed by a reload is answered at once.
. "$(dirname "$0")/lib.sh"
trap cleanup_common EXIT
lab_lock
# A copy of the zone, changed and reloaded at the end.
ZONE=$TMP/example.com.zone
cp "$SRC/zones/example.com.zone" "$ZONE"
export ANSWER_CACHE=1024

"$SRC/scripts/lab.sh" up >/dev/null
# A second address on the pop veth that is NOT a service address: UDP/53 to it must reach
# the kernel (which has no listener, so it answers ICMP port unreachable).
ip -n "$POP_NS" addr replace 192.0.2.54/24 dev p53p
write_config "$TMP/pop53.yaml" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1" "$ZONE"
start_pop53_answering "$TMP/pop53.yaml"

for addr in "$V4" "$V6"; do
	for q in "www.example.com A" "www.example.com AAAA" "api.example.com A" "api.example.com AAAA" \
		 "example.com NS" "example.com MX" "example.com SOA" "example.com TXT" "example.com CAA" \
		 "_https._tcp.example.com SRV" "ns1.example.com AAAA"; do
		set -- $q
		want=$(zone_rrset "$ZONE" "$1." "$2")
		got=$(kdig_section answer @"$addr" "$1" "$2")
		check "[$addr] $1 $2 answer matches the zone record by record" [ -n "$want" -a "$want" = "$got" ]
	done
done

# Mixed case: the question comes back as sent (0x20), the data is found case-insensitively.
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 @"$V4" WwW.ExAmPlE.CoM A 2>/dev/null)
check "mixed-case query answered" grep -q 'status: NOERROR' <<<"$out"
# kdig lower-cases names before sending, so the 0x20 check sends with dnspython.
q20=$(ip netns exec "$CLIENT_NS" /usr/bin/python3 -c '
import dns.message, dns.query
q = dns.message.make_query("WwW.ExAmPlE.CoM.", "A")
r = dns.query.udp(q, "'"$V4"'", timeout=2)
print(r.question[0].name.to_text(), len(r.answer))' 2>&1)
check "question case preserved (0x20)" grep -q '^WwW.ExAmPlE.CoM. 1$' <<<"$q20"
check "answer flags are authoritative" grep -qE 'Flags: qr aa' <<<"$out"

# CNAME chased inside the zone.
want="$(zone_rrset "$ZONE" cdn.example.com. CNAME)
$(zone_rrset "$ZONE" www.example.com. A)"
got=$(kdig_section answer @"$V4" cdn.example.com A)
check "CNAME then the target's A" [ "$(sort <<<"$want")" = "$got" ]

# Wildcard: synthesized with the query name as owner.
got=$(kdig_section answer @"$V6" logo.img.example.com A)
want=$(zone_rrset "$ZONE" '*.img.example.com.' A | sed 's/^\*\.img/logo.img/')
check "wildcard answer with the query name as owner" [ -n "$want" -a "$want" = "$got" ]

# Negative answers: SOA in authority with TTL min(SOA TTL, MINIMUM) (RFC 2308 §5).
soa_ttl=$(zone_rrset "$ZONE" example.com. SOA | awk '{print $2}')
soa_min=$(zone_rrset "$ZONE" example.com. SOA | awk '{print $NF}')
neg=$(( soa_ttl < soa_min ? soa_ttl : soa_min ))
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 @"$V4" nope.example.com A 2>/dev/null)
check "NXDOMAIN for a missing name" grep -q 'status: NXDOMAIN' <<<"$out"
got=$(kdig_section authority @"$V4" nope.example.com A)
check "NXDOMAIN carries the SOA with the negative TTL $neg" grep -qE "^example.com. $neg IN SOA " <<<"$got"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 @"$V6" www.example.com TXT 2>/dev/null)
check "NODATA is NOERROR with no answer" grep -qE 'status: NOERROR.*' <<<"$out"
check "NODATA has an empty answer section" grep -q 'ANSWER: 0' <<<"$out"
got=$(kdig_section authority @"$V6" www.example.com TXT)
check "NODATA carries the SOA" grep -qE "^example.com. $neg IN SOA " <<<"$got"

# Outside every zone: REFUSED without AA.
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 @"$V4" example.org A 2>/dev/null)
check "REFUSED outside the zones" grep -q 'status: REFUSED' <<<"$out"
check "REFUSED is not authoritative" bash -c "! grep -qE 'Flags: qr aa' <<<\"\$0\"" "$out"

# EDNS: OPT echoed with our payload size; NSID and CHAOS give the identity.
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +edns=0 +bufsize=4096 +nsid @"$V4" www.example.com A 2>/dev/null)
check "EDNS OPT echoed, version 0" grep -q 'EDNS PSEUDOSECTION' <<<"$out"
check "our advertised payload is 1232" grep -qE 'Version: 0; flags: ; UDP size: 1232' <<<"$out"
check "NSID is the configured identity" grep -q 'NSID: .*"test-pop"' <<<"$out"
got=$(kdig_section answer @"$V4" -c CH id.server TXT)
check "CHAOS id.server gives the identity" grep -q '"test-pop"' <<<"$got"
out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +edns=1 @"$V4" www.example.com A 2>/dev/null)
check "EDNS version 1 gets BADVERS" grep -q 'status: BADVERS' <<<"$out"

# NOTIFY (RFC 1996) goes to the control thread; with no transfer source configured the
# answer is NOTAUTH (as Knot answers a NOTIFY no ACL allows).
nt=$(ip netns exec "$CLIENT_NS" /usr/bin/python3 -c '
import dns.message, dns.opcode, dns.query, dns.rcode
q = dns.message.make_query("example.com.", "SOA")
q.set_opcode(dns.opcode.NOTIFY)
q.flags |= dns.flags.AA
r = dns.query.udp(q, "'"$V4"'", timeout=2)
print(dns.opcode.to_text(r.opcode()), dns.rcode.to_text(r.rcode()), r.question[0].name)' 2>&1)
check "NOTIFY answered NOTAUTH with opcode NOTIFY and the question" grep -q '^NOTIFY NOTAUTH example.com.$' <<<"$nt"
for _ in $(seq 1 20); do grep -q 'NOTIFY for example.com. from 192.0.2.1' "$TMP/pop53d.log" && break; sleep 0.1; done
check "the control thread got the NOTIFY with zone and sender" grep -q 'NOTIFY for example.com. from 192.0.2.1' "$TMP/pop53d.log"

# The kernel keeps what is not UDP/53 to a service address.
check "ping to the IPv4 service address answered by the kernel" ip netns exec "$CLIENT_NS" ping -c 2 -W 1 -q "$V4"
check "ping to the IPv6 service address answered by the kernel" ip netns exec "$CLIENT_NS" ping -6 -c 2 -W 1 -q "$V6"
out=$(ip netns exec "$CLIENT_NS" kdig +time=1 +retry=0 @192.0.2.54 www.example.com A 2>&1)
check "UDP/53 to a non-service address is left to the kernel (no answer from pop53d)" \
	bash -c "! grep -q 'status: NOERROR' <<<\"\$0\"" "$out"

# The answer cache: a question asked again is answered from it (the hits counted per worker);
# a record changed by a reload is answered at once, however often the old one was asked.
CTL="$BUILD/control/pop53ctl"
ctl() { "$CTL" -s "$TMP/control.sock" "$@"; }
hits() { ctl --json workers | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["workers"][0]["answer_cache_hits"])'; }
h0=$(hits)
for _ in $(seq 1 5); do kdig_section answer @"$V4" www.example.com A >/dev/null; done
h1=$(hits)
check "repeated questions answered from the answer cache ($h0 -> $h1 hits)" [ "$h1" -ge $((h0 + 4)) ]
check "the cached answer is the zone's" [ "$(kdig_section answer @"$V4" www.example.com A)" = "$(zone_rrset "$ZONE" www.example.com. A)" ]
sed -i 's/^www\t\t300 IN A\t192.0.2.80$/www\t\t300 IN A\t192.0.2.81/' "$ZONE"
check "the zone file changed" grep -q '192.0.2.81' "$ZONE"
check "pop53ctl reload" ctl reload
got=$(kdig_section answer @"$V4" www.example.com A)
check "the record changed by the reload is answered at once: $got" grep -q '192.0.2.81' <<<"$got"
check "...and only it" bash -c "! grep -q '192.0.2.80' <<<\"\$0\"" "$got"
got=$(kdig_section answer @"$V6" www.example.com A)
check "...over IPv6 too" grep -q '192.0.2.81' <<<"$got"

check "pop53d stops cleanly on SIGTERM" stop_pop53
check "no mbuf leaked" grep -q 'no leak' "$TMP/pop53d.log"
check "counted the answers" grep -qE 'answered [1-9]' "$TMP/pop53d.log"
[ "$FAIL" -eq 0 ] || cat "$TMP/pop53d.log"
ip -n "$POP_NS" addr del 192.0.2.54/24 dev p53p 2>/dev/null || true
finish
