#!/usr/bin/env bash
# Installs every build, test, demo and benchmark dependency of pop53 from Debian's packages,
# then prepares hugepages and bpffs. Idempotent: a second run changes nothing.
set -euo pipefail

PKGS=(
	build-essential meson ninja-build pkg-config clang llvm
	dpdk dpdk-dev libdpdk-dev libbpf-dev libxdp-dev libelf-dev zlib1g-dev libpcap-dev libnuma-dev
	libldns-dev libssl-dev ldnsutils libmaxminddb-dev mmdb-bin libmaxmind-db-writer-perl libyaml-dev libcmocka-dev libmicrohttpd-dev libjansson-dev
	libmnl-dev libsystemd-dev frr bird2 exabgp
	knot knot-dnsutils knot-dnssecutils libknot-dev nsd dnsperf bind9-dnsutils bind9-utils
	iproute2 iputils-ping tcpdump ethtool procps psmisc util-linux coreutils curl time
	python3-dnspython python3-yaml
	valgrind gnuplot-nox
)

need=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
	echo "deps: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Packaged daemons must not hold port 53 or run on their own: the scripts start them.
for svc in knot nsd; do
	if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
		systemctl stop "$svc" || true
		systemctl disable "$svc" >/dev/null 2>&1 || true
	fi
	pkill -x "${svc}d" 2>/dev/null || true
done
# The packaged FRR and BIRD services would hold BGP: the tests start their own instances
# (own pathspace and sockets, tests/integration/bgp_lib.sh), which this never touches.
for svc in frr bird exabgp; do
	if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
		systemctl stop "$svc" || true
		systemctl disable "$svc" >/dev/null 2>&1 || true
	fi
done

# bpffs: the af_xdp PMD and the XDP steering program pin maps here.
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null || echo "deps: warning: cannot mount bpffs"
fi

# Hugepages: 2 MiB pages for DPDK. Without them pop53 runs with --no-huge (see docs/CONFIG.md).
HUGE_WANT=${POP53_HUGEPAGES:-512}
have=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
if [ "$have" -lt "$HUGE_WANT" ]; then
	echo "$HUGE_WANT" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
fi
have=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
mkdir -p /dev/hugepages
if ! mountpoint -q /dev/hugepages; then
	mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true
fi
if [ "$have" -lt 64 ] || ! mountpoint -q /dev/hugepages; then
	echo "deps: hugepages unavailable (have $have); pop53 will fall back to --no-huge"
	mkdir -p /run/pop53 && touch /run/pop53/no-huge
else
	rm -f /run/pop53/no-huge
fi
echo "deps: ok (hugepages=$have)"
