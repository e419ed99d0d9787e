# Shared by the steering probe tests (steering_probes.sh, steering_probes_tls.sh), sourced
# after lib.sh: the servers they probe in the client namespace, the kdig and pop53ctl views an
# operator reads, and their cleanup. Each test sets up its own knotd config in $TMP/knot.
SRV_PIDS=()
KNOT_PID=
probe_cleanup() {
	for p in "${SRV_PIDS[@]}" $KNOT_PID; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null
	cleanup_common
}
trap probe_cleanup EXIT
lab_lock

"$SRC/scripts/lab.sh" up >/dev/null
SRV=192.0.2.1           # the client namespace's address: probes cross the veth
CTL="$BUILD/control/pop53ctl"
IVL=500                 # every probe's interval (ms)

# start_srv NAME ARGS...: a probe_server.py in the client namespace; its pid in ${PID_<NAME>}
start_srv() {
	local name=$1; shift
	ip netns exec "$CLIENT_NS" /usr/bin/python3 -u "$SRC/tests/steer/probe_server.py" "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" &
	printf -v "PID_$name" %s $!
	SRV_PIDS+=($!)
	for _ in $(seq 1 50); do grep -q ready "$TMP/$name.out" 2>/dev/null && return 0; sleep 0.1; done
	echo "$name did not start:"; cat "$TMP/$name.err"
	return 1
}
stop_srv() { local v="PID_$1"; kill "${!v}" 2>/dev/null; wait "${!v}" 2>/dev/null; true; }

# kq NAME TYPE [kdig options]: the status of the probed knotd's answer (port 5300)
kq() {
	ip netns exec "$CLIENT_NS" kdig +time=1 +retry=0 -p 5300 @"$SRV" "$@" 2>/dev/null |
		sed -n 's/.*status: \([A-Z]*\).*/\1/p'
}
# start_knotd: knotd with $TMP/knot/knot.conf in the client namespace, up once it answers
start_knotd() {
	ip netns exec "$CLIENT_NS" knotd -c "$TMP/knot/knot.conf" >/dev/null 2>&1 &
	KNOT_PID=$!
	for _ in $(seq 1 50); do
		[ "$(kq www.probe.test A)" = NOERROR ] && return 0
		sleep 0.1
	done
	cat "$TMP/knot/knotd.log"
	return 1
}
stop_knotd() { kill "$KNOT_PID" 2>/dev/null; wait "$KNOT_PID" 2>/dev/null; KNOT_PID=; true; }

# q NAME: the answer's addresses, sorted, space-separated
q() {
	ip netns exec "$CLIENT_NS" kdig +time=1 +retry=1 @"$V4" "$1" A 2>/dev/null |
		awk '!/^;/ && $4=="A" {print $5}' | sort | tr '\n' ' ' | sed 's/ $//'
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# wait_for WHAT NAME WANT LIMIT_MS: poll kdig until NAME's answer is WANT, at most LIMIT_MS
# (plus one query); passes when it got there in time, with the time taken in the message.
wait_for() {
	local what=$1 name=$2 want=$3 limit=$4 t0 got
	t0=$(now_ms)
	while :; do
		got=$(q "$name")
		[ "$got" = "$want" ] && { ok "$what (in $(( $(now_ms) - t0 )) ms, bound $limit ms)"; return 0; }
		[ $(( $(now_ms) - t0 )) -gt "$limit" ] && break
		sleep 0.05
	done
	not_ok "$what (want '$want', got '$got' after $(( $(now_ms) - t0 )) ms, bound $limit ms)"
	return 1
}
# tl NAME JQ: jq -e over target NAME's entry of `pop53ctl --json target list`
tl() { "$CTL" -s "$TMP/control.sock" --json target list | jq -e ".targets[] | select(.name == \"$1\") | $2" >/dev/null; }
# wait_tl WHAT NAME JQ LIMIT_MS: poll tl NAME JQ until it holds, at most LIMIT_MS; for a
# verdict that comes when a probe ends (a timeout), which a change in the answer may precede.
wait_tl() {
	local what=$1 name=$2 filter=$3 limit=$4 t0 first=""
	t0=$(now_ms)
	while ! tl "$name" "$filter"; do
		[ -n "$first" ] || first=$(text "$name")
		if [ $(( $(now_ms) - t0 )) -gt "$limit" ]; then
			not_ok "$what (not after $(( $(now_ms) - t0 )) ms, bound $limit ms): $(text "$name")"
			return 1
		fi
		sleep 0.05
	done
	ok "$what (in $(( $(now_ms) - t0 )) ms, bound $limit ms${first:+; first seen: $first})"
}
# text NAME: target NAME's line of `pop53ctl target list` (what an operator reads)
text() { "$CTL" -s "$TMP/control.sock" target list | awk -v n="$1" '$3 == n'; }

# metrics_read, then metric KEY: one value of pop53d's Prometheus page, as read then
metrics_read() { METRICS=$(ip netns exec "$POP_NS" curl -s --max-time 5 http://127.0.0.1:19153/metrics); }
metric() { awk -v k="$1" '$1 == k {print $2}' <<<"$METRICS"; }
