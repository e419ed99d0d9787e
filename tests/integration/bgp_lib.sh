# shellcheck shell=bash
# Real BGP speakers for the lab (sourced by tests/integration/anycast_bgp.sh and
# scripts/bench/withdraw.sh): FRR (zebra + bgpd with their own pathspace, -N, --vty_socket,
# -z) in the pop namespace on the PoP host's own addresses, BIRD 2 (its own control socket)
# in the client namespace as the upstream router. The caller holds the lab lock and calls
# bgp_cleanup from its EXIT trap. Needs: POP_NS, CLIENT_NS (lib.sh), BGP_DIR, SRC.
BGP_HOST4=192.0.2.179
BGP_HOST6=2001:db8:53::179
BGP_P4=192.0.2.53/32
BGP_P6=2001:db8:53::53/128
BGP_BIRD_SOCK=${BGP_DIR:?}/bird.ctl
# The interface that carries the host addresses: the lab veth in xdp mode; "" when pop53d puts
# them on its exception interface itself (dpdk mode: dataplane.exception.addresses).
BGP_DEV=${BGP_DEV-p53p}

# bgp_setup FRR_CONF: host addresses on $BGP_DEV, FRR's directory (FRR runs as user frr: it must own it)
# and config, BIRD's config (logging every route it imports or removes; no graceful restart,
# so that a stopped FRR takes its routes away at once instead of leaving them stale).
bgp_setup() {
	if [ -n "$BGP_DEV" ]; then
		ip -n "$POP_NS" addr replace "$BGP_HOST4/24" dev "$BGP_DEV"
		ip -n "$POP_NS" addr replace "$BGP_HOST6/64" dev "$BGP_DEV" nodad
	fi
	mkdir -p "$BGP_DIR/frr"
	cp "$1" "$BGP_DIR/frr/frr.conf"
	chown -R frr:frr "$BGP_DIR/frr"
	chmod 755 "$BGP_DIR" "$BGP_DIR/frr"
	{ echo "log \"$BGP_DIR/bird.log\" all;"; echo "debug protocols { routes };"
	  sed 's/connect retry time 1;/connect retry time 1;\n\tgraceful restart off;/' \
		"$SRC/configs/frr/bird-upstream.conf"; } >"$BGP_DIR/bird.conf"
}

bgp_start_frr() {
	local f=$BGP_DIR/frr
	ip netns exec "$POP_NS" /usr/lib/frr/zebra -d -N p53bgp -f "$f/frr.conf" -i "$f/zebra.pid" \
		-z "$f/zserv.api" --vty_socket "$f" --log "file:$f/zebra.log" 2>/dev/null &&
	ip netns exec "$POP_NS" /usr/lib/frr/bgpd -d -N p53bgp -f "$f/frr.conf" -i "$f/bgpd.pid" \
		-z "$f/zserv.api" --vty_socket "$f" --log "file:$f/bgpd.log" 2>/dev/null
}

# A daemon is alive while its pid runs and is not a zombie (nobody may reap FRR's daemons in
# a container whose init does not).
bgp_alive() {
	local s
	s=$(ps -o stat= -p "$1" 2>/dev/null)
	[ -n "$s" ] && [ "${s#Z}" = "$s" ]
}

bgp_stop_frr() {
	local f=$BGP_DIR/frr p
	for p in "$f/bgpd.pid" "$f/zebra.pid"; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	for _ in $(seq 1 50); do
		bgp_alive "$(cat "$f/bgpd.pid" 2>/dev/null)" || bgp_alive "$(cat "$f/zebra.pid" 2>/dev/null)" || return 0
		sleep 0.1
	done
	for p in "$f/bgpd.pid" "$f/zebra.pid"; do
		[ -f "$p" ] && kill -9 "$(cat "$p")" 2>/dev/null
	done
	return 0
}

bgp_start_bird() {
	ip netns exec "$CLIENT_NS" bird -s "$BGP_BIRD_SOCK" -c "$BGP_DIR/bird.conf" -P "$BGP_DIR/bird.pid"
}

bgp_cleanup() {
	bgp_stop_frr
	[ -f "$BGP_DIR/bird.pid" ] && kill "$(cat "$BGP_DIR/bird.pid")" 2>/dev/null
	if [ -n "$BGP_DEV" ]; then
		ip -n "$POP_NS" addr del "$BGP_HOST4/24" dev "$BGP_DEV" 2>/dev/null
		ip -n "$POP_NS" addr del "$BGP_HOST6/64" dev "$BGP_DEV" 2>/dev/null
	fi
	return 0
}

birdc_() { birdc -s "$BGP_BIRD_SOCK" "$@"; }
bgp_established() {
	local p
	p=$(birdc_ show protocols 2>/dev/null)
	grep -qE '^pop4 .*Established' <<<"$p" && grep -qE '^pop6 .*Established' <<<"$p"
}
# bgp_route PREFIX: BIRD's RIB entry for exactly that prefix, with attributes ("" when absent)
bgp_route() { birdc_ show route "$1" all 2>/dev/null | grep -v '^BIRD\|^Table'; }
bgp_has() { bgp_route "$1" | grep -q unicast; }
bgp_gone() { ! bgp_has "$1"; }
# de-preferred as configs/frr/frr-redistribute.conf marks it: 65535:0 and the path prepended
bgp_depref() {
	local r
	r=$(bgp_route "$1")
	grep -q 'BGP.community:.*(65535,0)' <<<"$r" && grep -q 'BGP.as_path: 65053 65053 65053 65053' <<<"$r"
}
bgp_full() {
	local r
	r=$(bgp_route "$1")
	grep -q unicast <<<"$r" && ! grep -q '65535,0' <<<"$r" && grep -q 'BGP.as_path: 65053$' <<<"$r"
}
# Times (ms since the epoch) at which BIRD's log shows PREFIX removed.
bgp_removed_times() {
	grep "removed.*$1" "$BGP_DIR/bird.log" 2>/dev/null |
		awk '{ split($2, t, /[:.]/); cmd = "date -d \"" $1 " " t[1] ":" t[2] ":" t[3] "\" +%s"; cmd | getline s; close(cmd); printf "%.0f\n", s * 1000 + t[4] }'
}
now_ms() { date +%s%3N; }
# wait_ms TIMEOUT_MS COMMAND...: poll every 20 ms; prints the ms it took ("N+" on timeout)
wait_ms() {
	local limit=$1 t0
	shift
	t0=$(now_ms)
	while :; do
		if "$@"; then echo $(( $(now_ms) - t0 )); return 0; fi
		[ $(( $(now_ms) - t0 )) -ge "$limit" ] && { echo "$limit+"; return 1; }
		sleep 0.02
	done
}
