# Shared helpers for integration tests (sourced). Tests get $1 = build dir, $2 = source dir.
# Each test counts its checks and ends with "N passed, N failed".
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
SRC=$(cd "${2:?source dir}" && pwd)
POP53D="$BUILD/control/pop53d"
CLIENT_NS=p53-client
POP_NS=p53-pop
V4=192.0.2.53
V6=2001:db8:53::53
PASS=0
FAIL=0
TMP=$(mktemp -d /tmp/p53-test.XXXXXX)
POP53_PID=

# One lab user at a time: tests, the differential test and benchmarks take this lock (fd 9,
# held until the script exits), since scripts/lab.sh down ends every process in the lab.
LAB_LOCK=/run/lock/pop53-lab.lock
lab_lock() {
	mkdir -p "$(dirname "$LAB_LOCK")" && exec 9>"$LAB_LOCK"
	flock -w "${1:-900}" 9 || { echo "not ok - lab lock $LAB_LOCK held for too long"; exit 1; }
}

ok() { PASS=$((PASS + 1)); echo "ok - $*"; }
not_ok() { FAIL=$((FAIL + 1)); echo "not ok - $*"; }
expect() { # expect WHAT WANT GOT: ok when GOT is WANT, else not ok with both
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (want '$2', got '$3')"; fi
}
check() { # check "what" command...
	local what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}
finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}

# A pop53d config for the lab: write_config FILE PORT [extra zone lines...]; ANSWER_CACHE=N in
# the environment: dataplane.answer_cache N (unset: pop53d's default, 1024)
write_config() {
	local file=$1 port=$2 zone=${3:-$SRC/zones/example.com.zone}
	cat >"$file" <<YAML
server:
  identity: test-pop
  version: "pop53-test"
  control_socket: $TMP/control.sock
metrics: {listen: "127.0.0.1:19153"}
dataplane:
  eal: ["-l", "1", "--no-pci", "--in-memory", "--log-level=*:notice"]
  port: "$port"
  workers: 1
  addresses: [$V4, "$V6"]
  idle: {mode: adaptive, max_sleep_us: 100}
${ANSWER_CACHE:+  answer_cache: $ANSWER_CACHE}
zones:
  - {name: example.com, file: $zone}
YAML
}

# The zone reload tests' common ground (zone_reload_patch, zone_reload_changed):
# reload_test_init BIGFILE N makes a genzone.py zone of N records in BIGFILE, sets CTL, PY,
# SOCK, BIG (the file), BIG_HOST (one of its hosts with an A) and the helpers ctl, jq_py,
# generation, a_of (the sorted A addresses of a name), image_of (a reply's image: line).
reload_test_init() {
	CTL="$BUILD/control/pop53ctl"
	PY=/usr/bin/python3
	SOCK=$TMP/control.sock
	BIG=$1
	$PY "$SRC/scripts/bench/genzone.py" "$2" "$BIG" 2>/dev/null
	BIG_HOST=$(awk '$3=="A" || $4=="A" {print $1; exit}' <(grep -E '^host[0-9]+\.region' "$BIG"))
	BIG_HOST=${BIG_HOST%.}
	case "$BIG_HOST" in *.big.test) ;; *) BIG_HOST=$BIG_HOST.big.test ;; esac
	ctl() { "$CTL" -s "$SOCK" "$@"; }
	jq_py() { $PY -c 'import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
	generation() { ctl --json status | jq_py 'r["generation"]'; }
	a_of() { kdig_section answer @"$V4" "$1" A | awk '$4=="A" {print $5}' | sort | tr '\n' ' ' | sed 's/ $//'; }
	image_of() { grep '^image' <<<"$1"; }
}

# reload_test_config FILE ZONEFILE [zone lines...]: the lab config with example.com from
# ZONEFILE, the zone lines given, then big.test from $BIG (reload_test_init).
reload_test_config() {
	local file=$1 zone=$2
	shift 2
	write_config "$file" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1" "$zone"
	for z in "$@"; do echo "  - $z" >>"$file"; done
	echo "  - {name: big.test, file: $BIG}" >>"$file"
}

# start_pop53 CONFIG [netns]: start in the background, logs in $TMP/pop53d.log
start_pop53() {
	local cfg=$1 ns=${2-$POP_NS} # "" runs it outside any namespace
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$POP53D" -c "$cfg" >"$TMP/pop53d.log" 2>&1 &
	else
		"$POP53D" -c "$cfg" >"$TMP/pop53d.log" 2>&1 &
	fi
	POP53_PID=$!
}

# Wait until pop53d answers from the client namespace (bounded: 20 s).
wait_answering() {
	for _ in $(seq 1 40); do
		if ip netns exec "$CLIENT_NS" kdig +time=1 +retry=0 @"$V4" example.com SOA 2>/dev/null | grep -q 'status: NOERROR'; then
			return 0
		fi
		kill -0 "$POP53_PID" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

# start_pop53_answering CONFIG: start pop53d in the pop namespace and wait until it answers;
# a start that fails ends the test here, with the daemon's log.
start_pop53_answering() {
	start_pop53 "$1"
	if ! wait_answering; then
		not_ok "pop53d answers on the lab"
		cat "$TMP/pop53d.log"
		finish
		exit 1
	fi
	ok "pop53d answers on the lab"
}

# stop_pop53: SIGTERM, wait (bounded), return its exit status.
stop_pop53() {
	[ -n "$POP53_PID" ] || return 0
	kill -TERM "$POP53_PID" 2>/dev/null || true
	for _ in $(seq 1 100); do
		kill -0 "$POP53_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$POP53_PID" 2>/dev/null; then
		echo "pop53d did not stop on SIGTERM; killing" >&2
		kill -9 "$POP53_PID" 2>/dev/null || true
	fi
	wait "$POP53_PID" 2>/dev/null
	local rc=$?
	POP53_PID=
	return $rc
}

cleanup_common() {
	stop_pop53 >/dev/null 2>&1 || true
	ip -n "$POP_NS" link set p53p xdp off 2>/dev/null || true
	rm -rf "$TMP"
}

# Records of an RRset as the zone file has them, canonical text: zone_rrset ZONEFILE OWNER TYPE
zone_rrset() {
	ldns-read-zone -c "$1" 2>/dev/null | awk -v o="$2" -v t="$3" 'tolower($1)==tolower(o) && $4==t {
		$1=tolower($1); out=$1; for (i=2;i<=NF;i++) out=out" "$i; print out }' | sort
}

# subnet_answer NAME TYPE [kdig args]: a steered answer as the client namespace sees it,
# "ADDR... ttl=T scope=S" (addresses sorted; ttl "none" without one, scope "-" without ECS)
subnet_answer() {
	local name=$1 type=$2; shift 2
	local out addrs ttl scope
	out=$(ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 @"$V4" "$name" "$type" "$@" 2>&1)
	addrs=$(awk -v t="$type" '!/^;/ && $4==t {print $5}' <<<"$out" | sort | tr '\n' ' ')
	ttl=$(awk -v t="$type" '!/^;/ && $4==t {print $2; exit}' <<<"$out")
	scope=$(sed -n 's/^;* *CLIENT-SUBNET: .*\/\([0-9]*\)$/\1/p' <<<"$out")
	echo "${addrs}ttl=${ttl:-none} scope=${scope:--}"
}

# The answer section from kdig, same canonical form: kdig_section SECTION ARGS...
kdig_section() {
	local sec=$1; shift
	ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 +noall "+$sec" "$@" 2>/dev/null |
		awk '!/^;/ && NF { $1=tolower($1); out=$1; for (i=2;i<=NF;i++) out=out" "$i; print out }' | sort
}

# Where a query or a reply can be lost outside pop53d's own counters, on the lab's path
# kxdpgun -> p53c -> p53p -> pop53d's AF_XDP socket -> pop53d -> p53p -> p53c -> kxdpgun's
# AF_XDP socket (or a kernel UDP socket in the client namespace). lab_counters FILE [PID]
# writes one "name value" line per counter, for lab_counters_delta:
#   pop.p53p.* / client.p53c.*   the veth's driver counters (ethtool -S: rx_queue_0_drops, a
#                                frame its XDP program redirected to a socket that had no
#                                room; rx_queue_0_xdp_redirect...) and netdev ones (sys.*)
#   pop.xsk.*                    process PID's (pop53d's) AF_XDP sockets' own counters
#                                (xsk_stats.py: rx_ring_full, rx_fill_ring_empty_descs...):
#                                net_af_xdp folds only rx_dropped into imissed
#   client.udp.*                 the client namespace's UDP counters (RcvbufErrors...)
#   softnet.cpuN.*               the backlog's dropped and time_squeeze, per CPU (global)
lab_counters() {
	{
		local ns dev side
		for side in "pop $POP_NS p53p" "client $CLIENT_NS p53c"; do
			read -r side ns dev <<<"$side"
			ip netns exec "$ns" ethtool -S "$dev" 2>/dev/null |
				awk -v p="$side.$dev." -F': *' 'NR > 1 && $2 ~ /^[0-9]+$/ { gsub(/ /, "", $1); print p $1, $2 }'
			ip netns exec "$ns" sh -c "cd /sys/class/net/$dev/statistics && grep -H . *" 2>/dev/null |
				awk -v p="$side.$dev.sys." -F: '{ print p $1, $2 }'
		done
		[ -z "${2:-}" ] || /usr/bin/python3 "$SRC/tests/integration/xsk_stats.py" pop.xsk. "$2"
		ip netns exec "$CLIENT_NS" cat /proc/net/snmp 2>/dev/null |
			awk '$1 == "Udp:" { if (!h) { for (i = 2; i <= NF; i++) n[i] = $i; h = 1 }
			                     else for (i = 2; i <= NF; i++) print "client.udp." n[i], $i }'
		local cpu=0 _p dropped squeezed _r
		while read -r _p dropped squeezed _r; do
			echo "softnet.cpu$cpu.dropped $((16#$dropped))"
			echo "softnet.cpu$cpu.squeezed $((16#$squeezed))"
			cpu=$((cpu + 1))
		done </proc/net/softnet_stat
	} >"$1"
}

# lab_counters_delta BEFORE AFTER: "name delta" for every counter that moved (AFTER - BEFORE;
# a counter absent before counts from 0).
lab_counters_delta() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import sys
b, a = ({k: int(v) for k, v in (l.split() for l in open(f) if len(l.split()) == 2)} for f in sys.argv[1:3])
for k, v in a.items():
    if v != b.get(k, 0):
        print(k, v - b.get(k, 0))
PY
}
