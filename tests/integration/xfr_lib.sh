# Zone-transfer lab (sourced after lib.sh): a hidden primary, knotd, in its own namespace.
#
#   p53-primary  veth p53r  198.51.100.2/24  2001:db8:100::2/64
#        |
#   p53-client   veth p53q  198.51.100.1/24  2001:db8:100::1/64   (routes between the two)
#        |
#   p53-pop      veth p53p  192.0.2.53 (pop53d, af_xdp)
#
# The primary sits behind the client namespace, as it would sit behind the PoP's upstream
# router: its NOTIFYs to 192.0.2.53 arrive on the DPDK port and go through a worker, the XDP
# program passes the TCP transfers and the SOA answers to the kernel. Created and removed by
# each test (primary_down in the trap). Needs the lab lock.
#
# A test's preamble, after sourcing lib.sh and this file:
#   xfr_begin                  the EXIT trap (xfr_cleanup) and the lab lock
#   xfr_lab_up                 the lab and the primary's namespace
#   knotd_conf ZONE...; knot_zone ZONE SERIAL...   the primary's config and zones
#   knotd_up                   knotd started, or the test ends there (not ok)
# A test with more to stop on exit (a load generator) defines xfr_cleanup_test, run first.
# A lower tier (tier_up: a knotd secondary of pop53 on TIER_V4, in the primary's namespace)
# is stopped by the trap too.
PRIMARY_NS=p53-primary
PRIMARY_V4=198.51.100.2
PRIMARY_V6=2001:db8:100::2
KNOT_DIR=
XFR_SECRET="c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="
TIER_DIR=$TMP/tier
TIER_V4=198.51.100.3

xfr_cleanup() {
	! declare -F xfr_cleanup_test >/dev/null || xfr_cleanup_test
	tier_stop
	stop_pop53 >/dev/null 2>&1 || true
	primary_down
	cleanup_common
}

xfr_begin() {
	trap xfr_cleanup EXIT
	lab_lock
}

xfr_lab_up() {
	"$SRC/scripts/lab.sh" up >/dev/null
	primary_up
}

primary_up() {
	ip netns del "$PRIMARY_NS" 2>/dev/null || true
	ip -n "$CLIENT_NS" link del p53q 2>/dev/null || true
	ip netns add "$PRIMARY_NS"
	ip link add p53q type veth peer name p53r
	ip link set p53q netns "$CLIENT_NS"
	ip link set p53r netns "$PRIMARY_NS"
	ip netns exec "$PRIMARY_NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	ip -n "$PRIMARY_NS" link set lo up
	ip -n "$CLIENT_NS" addr add 198.51.100.1/24 dev p53q
	ip -n "$CLIENT_NS" addr add 2001:db8:100::1/64 dev p53q nodad
	ip -n "$PRIMARY_NS" addr add "$PRIMARY_V4/24" dev p53r
	ip -n "$PRIMARY_NS" addr add "$PRIMARY_V6/64" dev p53r nodad
	ip -n "$CLIENT_NS" link set p53q up
	ip -n "$PRIMARY_NS" link set p53r up
	ip netns exec "$CLIENT_NS" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	ip -n "$PRIMARY_NS" route add default via 198.51.100.1
	ip -n "$PRIMARY_NS" -6 route add default via 2001:db8:100::1
	ip -n "$POP_NS" route replace 198.51.100.0/24 via 192.0.2.1
	ip -n "$POP_NS" -6 route replace 2001:db8:100::/64 via 2001:db8:53::1
	ip netns exec "$PRIMARY_NS" ping -c1 -W1 192.0.2.53 >/dev/null 2>&1 || true
}

primary_down() {
	knotd_stop
	ip -n "$POP_NS" route del 198.51.100.0/24 2>/dev/null || true
	ip -n "$POP_NS" -6 route del 2001:db8:100::/64 2>/dev/null || true
	ip netns exec "$CLIENT_NS" sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0 2>/dev/null || true
	ip -n "$CLIENT_NS" link del p53q 2>/dev/null || true
	ip netns pids "$PRIMARY_NS" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
	ip netns del "$PRIMARY_NS" 2>/dev/null || true
}

# A knotd policy "signer" (ECDSA P-256, NSEC3 without iterations), for KNOT_EXTRA_TEMPLATES
# when a test has the primary sign its zones (KNOT_EXTRA_ZONE_CONF: dnssec-signing, policy).
KNOT_NSEC3_SIGNER="policy:
  - id: signer
    algorithm: ecdsap256sha256
    nsec3: on
    nsec3-iterations: 0
    nsec3-salt-length: 8
    rrsig-lifetime: 30d
    rrsig-refresh: 7d"
# The same with an NSEC3 opt-out chain (RFC 5155 §6: insecure delegations, and the empty
# non-terminals leading only to them, own no NSEC3), policy "optout".
KNOT_NSEC3_OPTOUT_SIGNER="  - id: optout
    algorithm: ecdsap256sha256
    nsec3: on
    nsec3-opt-out: on
    nsec3-iterations: 0
    nsec3-salt-length: 8
    rrsig-lifetime: 30d
    rrsig-refresh: 7d"

# knotd_conf ZONE...: a primary for each zone (zone files in $KNOT_DIR/ZONE.zone), NOTIFY to
# pop53 signed with xfr.key, transfers allowed to the pop with that key.
# KNOT_EXTRA_ZONE_CONF is appended to each zone (e.g. catalog settings), or, when the test
# defines knot_zone_conf, what knot_zone_conf ZONE prints (a policy per zone).
knotd_conf() {
	KNOT_DIR=$TMP/knot
	mkdir -p "$KNOT_DIR/db"
	{
		cat <<EOF2
server:
  rundir: $KNOT_DIR
  listen: [$PRIMARY_V4@53, $PRIMARY_V6@53]
  udp-workers: 1
  tcp-workers: 2
  background-workers: 1
log:
  - target: $KNOT_DIR/knotd.log
    any: info
key:
  - id: xfr.key
    algorithm: hmac-sha256
    secret: $XFR_SECRET
  - id: wrong.key
    algorithm: hmac-sha256
    secret: $XFR_SECRET
remote:
  - id: pop
    address: 192.0.2.53@53
    key: xfr.key
acl:
  - id: pop_xfr
    address: [192.0.2.53, "2001:db8:53::53", $PRIMARY_V4]
    key: [xfr.key, wrong.key]
    action: transfer
database:
  storage: $KNOT_DIR/db
template:
  - id: default
    storage: $KNOT_DIR
    file: "%s.zone"
    notify: pop
    acl: pop_xfr
    zonefile-sync: -1
    journal-content: changes
    semantic-checks: off
${KNOT_EXTRA_TEMPLATES:-}
zone:
EOF2
		for z in "$@"; do
			echo "  - domain: $z"
			if declare -F knot_zone_conf >/dev/null; then
				knot_zone_conf "$z"
			elif [ -n "${KNOT_EXTRA_ZONE_CONF:-}" ]; then
				echo "$KNOT_EXTRA_ZONE_CONF"
			fi
		done
	} >"$KNOT_DIR/knot.conf"
}

knotd_start() {
	ip netns exec "$PRIMARY_NS" knotd -c "$KNOT_DIR/knot.conf" -d
	for _ in $(seq 1 50); do
		knotc status >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "knotd did not start:"; cat "$KNOT_DIR/knotd.log"
	return 1
}

# knotd_up: knotd_start, or the test ends here (nothing to test without the primary).
knotd_up() {
	knotd_start && return 0
	not_ok "knotd starts"
	finish
	exit 1
}

knotd_stop() {
	[ -n "$KNOT_DIR" ] && [ -S "$KNOT_DIR/knot.sock" ] || return 0
	knotc stop >/dev/null 2>&1 || true
	for _ in $(seq 1 50); do [ -S "$KNOT_DIR/knot.sock" ] || break; sleep 0.1; done
}

knotc() { ip netns exec "$PRIMARY_NS" /usr/sbin/knotc -c "$KNOT_DIR/knot.conf" -s "$KNOT_DIR/knot.sock" "$@"; }

# The lower tier: tier_up ZONES_CONF starts a second knotd (in $TIER_DIR) in the primary's
# namespace on TIER_V4, a secondary of pop53 (remote "pop": $V4 with xfr.key, from TIER_V4), logging to
# $TIER_DIR/knotd.log. ZONES_CONF: the YAML that follows the common sections (an acl: and
# the zone: list, whose zones name master: pop).
tier_up() {
	mkdir -p "$TIER_DIR/db"
	ip -n "$PRIMARY_NS" addr add "$TIER_V4/24" dev p53r
	cat >"$TIER_DIR/knot.conf" <<EOF2
server:
  rundir: $TIER_DIR
  listen: [$TIER_V4@53]
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
log:
  - target: $TIER_DIR/knotd.log
    any: info
key:
  - id: xfr.key
    algorithm: hmac-sha256
    secret: $XFR_SECRET
remote:
  - id: pop
    address: $V4@53
    via: $TIER_V4
    key: xfr.key
database:
  storage: $TIER_DIR/db
$1
EOF2
	ip netns exec "$PRIMARY_NS" knotd -c "$TIER_DIR/knot.conf" -d
}

tierc() { ip netns exec "$PRIMARY_NS" /usr/sbin/knotc -c "$TIER_DIR/knot.conf" -s "$TIER_DIR/knot.sock" "$@"; }

tier_stop() {
	[ ! -S "$TIER_DIR/knot.sock" ] || tierc stop >/dev/null 2>&1 || true
}

# A small zone: knot_zone NAME SERIAL [extra records...]
knot_zone() {
	local z=$1 serial=$2; shift 2
	{
		echo "\$ORIGIN $z."
		echo "\$TTL 300"
		echo "@ IN SOA ns1.$z. hostmaster.$z. $serial ${ZONE_REFRESH:-3600} ${ZONE_RETRY:-600} ${ZONE_EXPIRE:-1209600} 300"
		echo "@ IN NS ns1.$z."
		echo "ns1 IN A 192.0.2.53"
		echo "www IN A 192.0.2.80"
		for r in "$@"; do echo "$r"; done
	} >"$KNOT_DIR/$z.zone"
}

# The pop53d config with secondary zones: xfr_config FILE ZONE_LINES (YAML under zones:)
xfr_config() {
	local file=$1 zones=$2
	cat >"$file" <<YAML
server:
  identity: test-pop
  control_socket: $TMP/control.sock
metrics: {enabled: false}
dataplane:
  eal: ["-l", "1", "--no-pci", "--in-memory", "--log-level=*:notice"]
  port: "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
  workers: 1
  addresses: [$V4, "$V6"]
  idle: {mode: adaptive, max_sleep_us: 100}
tsig_keys:
  - {name: xfr.key, algorithm: hmac-sha256, secret: "$XFR_SECRET"}
xfr:
  directory: $TMP/xfr
  threads: ${XFR_THREADS:-2}
  timeout_ms: ${XFR_TIMEOUT_MS:-2000}
  refresh_min_s: 1
  retry_min_s: 1
  expire_min_s: 1
${XFR_COPY_SYNC:+  copy_sync_s: $XFR_COPY_SYNC}
zones:
  - {name: example.com, file: $SRC/zones/example.com.zone}
$zones
YAML
}

CTL() { "$BUILD/control/pop53ctl" -s "$TMP/control.sock" "$@"; }

# dig_a NAME [TYPE]: the first answer's data, from the client namespace.
dig_rr() {
	ip netns exec "$CLIENT_NS" kdig +time=1 +retry=1 +short @"$V4" "$1" "${2:-A}" 2>/dev/null | head -1
}

dig_rcode() {
	ip netns exec "$CLIENT_NS" kdig +time=1 +retry=1 @"$V4" "$1" "${2:-A}" 2>/dev/null |
		sed -n 's/.*status: \([A-Z]*\).*/\1/p' | head -1
}

# soa_serial NS ADDR ZONE: the serial of the SOA that ADDR serves for ZONE (empty if none).
soa_serial() { ip netns exec "$1" kdig +time=1 +short @"$2" "$3" SOA 2>/dev/null | awk 'NR == 1 { print $3 }'; }
# serial_is NS ADDR ZONE SERIAL: ADDR serves exactly that serial. (A grep for " 2 " in the
# SOA also matches serial 1 with a refresh of 2 s, as the ZONE_REFRESH=2 zones have.)
serial_is() { [ "$(soa_serial "$1" "$2" "$3")" = "$4" ]; }

# wait_for SECONDS CMD...: poll every 50 ms until CMD succeeds.
wait_for() {
	local limit=$1; shift
	local end=$(( $(date +%s%N) + limit * 1000000000 ))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

# kdig +dnssec of pop53 (client namespace) and of the primary: one section, records sorted.
pop_dnssec() { # SECTION NAME TYPE
	ip netns exec "$CLIENT_NS" kdig +time=1 +retry=1 +dnssec +bufsize=4096 @"$V4" "$2" "$3" \
		+noall "+$1" 2>/dev/null | awk 'NF { $1=tolower($1); print }' | sort
}
primary_dnssec() {
	ip netns exec "$PRIMARY_NS" kdig +time=1 +retry=1 +dnssec +bufsize=4096 @"$PRIMARY_V4" "$2" "$3" \
		+noall "+$1" 2>/dev/null | awk 'NF { $1=tolower($1); print }' | sort
}
same_as_primary() { # SECTION NAME TYPE
	local a b
	a=$(pop_dnssec "$@")
	b=$(primary_dnssec "$@")
	[ -n "$a" ] && [ "$a" = "$b" ] || { echo "pop53: $a"; echo "primary: $b"; return 1; }
}
# zone_patched ZONE N [MAX_COMPILED]: the last IXFR to ZONE was patched into the image, at
# least N were in all, and (with MAX_COMPILED) at most that many were compiled in full.
zone_patched() {
	CTL --json zone status "$1" | /usr/bin/python3 -c '
import json, sys
z = json.load(sys.stdin)["zone"]
assert z["last_ixfr_image"] == "patched" and z["ixfr_image"]["patched"] >= int(sys.argv[1]), z
assert len(sys.argv) < 3 or z["ixfr_image"]["compiled"] <= int(sys.argv[2]), z
' "${@:2}"
}
