#!/usr/bin/env bash
# The lab: two network namespaces joined by a veth pair, IPv4 and IPv6.
#
#   p53-client  veth p53c  192.0.2.1/24   2001:db8:53::1/64
#   p53-pop     veth p53p  192.0.2.53/24  2001:db8:53::53/64   (the service addresses)
#
# pop53d binds p53p through net_af_xdp; the kernel keeps ARP, ND and ICMP on it.
# Usage: scripts/lab.sh up|down|status. Idempotent; `down` removes everything `up` made,
# whatever state a crashed run left.
set -euo pipefail

CLIENT_NS=p53-client
POP_NS=p53-pop
CLIENT_IF=p53c
POP_IF=p53p
CLIENT_V4=192.0.2.1
POP_V4=192.0.2.53
CLIENT_V6=2001:db8:53::1
POP_V6=2001:db8:53::53

ns_exists() { ip netns list | awk '{print $1}' | grep -qx "$1"; }

up() {
	ns_exists "$CLIENT_NS" || ip netns add "$CLIENT_NS"
	ns_exists "$POP_NS" || ip netns add "$POP_NS"
	if ! ip -n "$POP_NS" link show "$POP_IF" >/dev/null 2>&1; then
		ip link del "$CLIENT_IF" 2>/dev/null || true
		ip link add "$CLIENT_IF" type veth peer name "$POP_IF"
		ip link set "$CLIENT_IF" netns "$CLIENT_NS"
		ip link set "$POP_IF" netns "$POP_NS"
	fi
	for ns in "$CLIENT_NS" "$POP_NS"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
		ip -n "$ns" link set lo up
	done
	# af_xdp in native (driver) mode on veth needs the peer to be XDP-capable for redirects
	# back out; checksum offload on veth would leave partial checksums in AF_XDP frames.
	ip netns exec "$CLIENT_NS" ethtool -K "$CLIENT_IF" tx off rx off >/dev/null 2>&1 || true
	ip netns exec "$POP_NS" ethtool -K "$POP_IF" tx off rx off >/dev/null 2>&1 || true
	ip -n "$CLIENT_NS" addr replace "$CLIENT_V4/24" dev "$CLIENT_IF"
	ip -n "$CLIENT_NS" addr replace "$CLIENT_V6/64" dev "$CLIENT_IF" nodad
	ip -n "$POP_NS" addr replace "$POP_V4/24" dev "$POP_IF"
	ip -n "$POP_NS" addr replace "$POP_V6/64" dev "$POP_IF" nodad
	ip -n "$CLIENT_NS" link set "$CLIENT_IF" up
	ip -n "$POP_NS" link set "$POP_IF" up
	# Resolve neighbours now so the first DNS query is not lost to ARP/ND on the client.
	ip netns exec "$CLIENT_NS" ping -c1 -W1 "$POP_V4" >/dev/null 2>&1 || true
	ip netns exec "$CLIENT_NS" ping -6 -c1 -W1 "$POP_V6" >/dev/null 2>&1 || true
	echo "lab: up ($CLIENT_NS/$CLIENT_IF $CLIENT_V4 $CLIENT_V6 <-> $POP_NS/$POP_IF $POP_V4 $POP_V6)"
}

down() {
	# A crashed pop53d or knotd may leave an XDP program attached; it goes with the veth.
	ip -n "$POP_NS" link set "$POP_IF" xdp off 2>/dev/null || true
	ip -n "$POP_NS" link del "$POP_IF" 2>/dev/null || true
	ip link del "$CLIENT_IF" 2>/dev/null || true
	for ns in "$CLIENT_NS" "$POP_NS"; do
		if ns_exists "$ns"; then
			# Processes left in the namespace (a crashed run) would keep it alive.
			pids=$(ip netns pids "$ns" 2>/dev/null || true)
			[ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
			ip netns del "$ns"
		fi
	done
	echo "lab: down"
}

status() {
	local rc=0
	for ns in "$CLIENT_NS" "$POP_NS"; do
		if ns_exists "$ns"; then echo "namespace $ns: present"; else echo "namespace $ns: absent"; rc=1; fi
	done
	ip -n "$POP_NS" -br addr show "$POP_IF" 2>/dev/null || { echo "veth $POP_IF: absent"; rc=1; }
	ip -n "$CLIENT_NS" -br addr show "$CLIENT_IF" 2>/dev/null || { echo "veth $CLIENT_IF: absent"; rc=1; }
	ip -n "$POP_NS" link show "$POP_IF" 2>/dev/null | grep -o 'prog/xdp id [0-9]*' || true
	return $rc
}

case "${1:-}" in
	up) up ;;
	down) down ;;
	status) status ;;
	*) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
