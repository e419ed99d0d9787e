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
check() { # check "what" command...
	local what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}
finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}

# A pop53d config for the lab: write_config FILE PORT [extra zone lines...]
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
zones:
  - {name: example.com, file: $zone}
YAML
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

# The answer section from kdig, same canonical form: kdig_section SECTION ARGS...
kdig_section() {
	local sec=$1; shift
	ip netns exec "$CLIENT_NS" kdig +time=2 +retry=1 +noall "+$sec" "$@" 2>/dev/null |
		awk '!/^;/ && NF { $1=tolower($1); out=$1; for (i=2;i<=NF;i++) out=out" "$i; print out }' | sort
}
