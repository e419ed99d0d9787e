# shellcheck shell=bash
# Shared functions for the benchmark scripts in scripts/bench/. Source it; it defines no
# traps and runs nothing by itself. Needs bash.
#
# Lab facts (see scripts/lab.sh): client namespace p53-client (veth p53c, 192.0.2.1),
# pop namespace p53-pop (veth p53p, 192.0.2.53 / 2001:db8:53::53).

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) # scripts/bench

BENCH_CLIENT_NS=${BENCH_CLIENT_NS:-p53-client}
BENCH_POP_NS=${BENCH_POP_NS:-p53-pop}
BENCH_CLIENT_IF=${BENCH_CLIENT_IF:-p53c}
BENCH_POP_IF=${BENCH_POP_IF:-p53p}
BENCH_SERVER_V4=${BENCH_SERVER_V4:-192.0.2.53}
BENCH_SERVER_V6=${BENCH_SERVER_V6:-2001:db8:53::53}
BENCH_SERVER_CPU=${BENCH_SERVER_CPU:-1}
BENCH_CLIENT_CPU=${BENCH_CLIENT_CPU:-0}

bench_log() { printf '[bench %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# Detach any XDP program from both lab veths (knotd-xdp, pop53d, kxdpgun all attach one;
# kxdpgun 3.2 leaves its program attached on exit). Quiet, never fails.
bench_xdp_off() {
	ip -n "$BENCH_POP_NS" link set "$BENCH_POP_IF" xdp off 2>/dev/null || true
	ip -n "$BENCH_CLIENT_NS" link set "$BENCH_CLIENT_IF" xdp off 2>/dev/null || true
}

bench_xdp_attached() { # NS IFACE -> 0 if an XDP program is attached
	ip -n "$1" link show "$2" 2>/dev/null | grep -q 'prog/xdp'
}

# Start a command in the pop namespace pinned to the server CPU, in the background.
# Usage: bench_start_server LOGFILE CMD ARGS...   Sets BENCH_SERVER_PID.
# `ip netns exec` and `taskset` both exec, so the PID is the server's own.
bench_start_server() {
	local log=$1; shift
	ip netns exec "$BENCH_POP_NS" taskset -c "$BENCH_SERVER_CPU" "$@" >"$log" 2>&1 </dev/null 9>&- &
	# shellcheck disable=SC2034 # read by the caller
	BENCH_SERVER_PID=$!
}

# Stop a process: SIGTERM, wait up to TIMEOUT seconds (default 10), then SIGKILL.
bench_stop_pid() {
	local pid=$1 timeout=${2:-10} i
	[ -n "$pid" ] || return 0
	kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < timeout * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		bench_log "pid $pid did not stop on SIGTERM in ${timeout}s; SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

# One query from the client namespace. Usage: bench_kdig ADDR NAME TYPE -> full kdig output.
bench_kdig() {
	ip netns exec "$BENCH_CLIENT_NS" kdig +timeout=1 +retry=0 @"$1" "$2" "$3" 2>&1
}

# Check that ADDR answers NAME TYPE with NOERROR and an answer containing EXPECT.
# Prints a one-line reason on failure.
bench_check_answer() {
	local addr=$1 name=$2 type=$3 expect=$4 out
	out=$(bench_kdig "$addr" "$name" "$type")
	if ! grep -q 'status: NOERROR' <<<"$out"; then
		local st
		st=$(grep -o 'status: [A-Z]*' <<<"$out" | head -1)
		echo "no NOERROR answer from $addr for $name $type (${st:-$(tail -1 <<<"$out")})"
		return 1
	fi
	if ! awk '/ANSWER SECTION/{a=1;next} a&&/^;;/{a=0} a' <<<"$out" | grep -qF "$expect"; then
		echo "answer from $addr for $name $type lacks $expect"
		return 1
	fi
	return 0
}

# Poll until ADDR answers NAME TYPE correctly, for up to TIMEOUT seconds, while PID lives.
# Usage: bench_wait_ready PID TIMEOUT ADDR NAME TYPE EXPECT. Prints the reason on failure.
bench_wait_ready() {
	local pid=$1 timeout=$2 addr=$3 name=$4 type=$5 expect=$6 start reason
	start=$(date +%s)
	while :; do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid" 2>/dev/null
			echo "exited (status $?) before answering"
			return 1
		fi
		reason=$(bench_check_answer "$addr" "$name" "$type" "$expect") && return 0
		if (($(date +%s) - start >= timeout)); then
			echo "not ready after ${timeout}s: $reason"
			return 1
		fi
		sleep 0.3
	done
}

# Run kxdpgun once from the client namespace, pinned to the client CPU.
# Usage: bench_kxdpgun OUTFILE DURATION RATE QUERYFILE [extra kxdpgun args...]
# kxdpgun 3.2 exits 0 even when it cannot set up its XDP socket ("requested resource is
# busy" when run right after a previous instance), so: detach its old program, pause, and
# retry up to 3 times until the output has the "total replies" line.
bench_kxdpgun() {
	local out=$1 dur=$2 rate=$3 qfile=$4 try
	shift 4
	# shellcheck disable=SC2034 # read by the caller
	BENCH_KXDPGUN_CMD="ip netns exec $BENCH_CLIENT_NS taskset -c $BENCH_CLIENT_CPU kxdpgun -t $dur -Q $rate -i $qfile -I $BENCH_CLIENT_IF $* $BENCH_SERVER_V4"
	for try in 1 2 3; do
		ip -n "$BENCH_CLIENT_NS" link set "$BENCH_CLIENT_IF" xdp off 2>/dev/null || true
		sleep 0.5
		[ "${BENCH_NAPI:-}" = threaded ] && bench_napi_pin >/dev/null
		# kxdpgun stops itself after -t seconds; `timeout` is only a guard against a hang.
		timeout -k 2 $((dur + 15)) ip netns exec "$BENCH_CLIENT_NS" \
			taskset -c "$BENCH_CLIENT_CPU" kxdpgun -t "$dur" -Q "$rate" -i "$qfile" \
			-I "$BENCH_CLIENT_IF" "$@" "$BENCH_SERVER_V4" >"$out" 2>&1
		grep -q '^total replies:' "$out" && break
		bench_log "kxdpgun attempt $try failed: $(tail -1 "$out")"
		sleep 1
	done
	ip -n "$BENCH_CLIENT_NS" link set "$BENCH_CLIENT_IF" xdp off 2>/dev/null || true
	grep -q '^total replies:' "$out"
}

# Parse kxdpgun output. Prints "SENT REPLIES NOERROR DURATION" (counts, seconds).
# Format (Knot 3.2):  total queries:     1102580 (367526 pps)
#                     total replies:     291792 (97264 pps) (26%)
#                     responded NOERROR:   291792
#                     duration: 3 s
bench_parse_kxdpgun() {
	awk '
		/^total queries:/     { s = $3 }
		/^total replies:/     { r = $3 }
		/^responded NOERROR:/ { n = $3 }
		/^duration:/          { d = $2 }
		END { if (s == "" || r == "") exit 1; printf "%d %d %d %s\n", s, r, n, d }' "$1"
}

# bench_median_fmt FORMAT NUMBER...: the median, printed with the awk FORMAT (mean of the
# middle two for an even count); fails with no numbers.
bench_median_fmt() {
	local fmt=$1
	shift
	printf '%s\n' "$@" | sort -g | awk -v fmt="$fmt\n" '{v[NR] = $1} END {
		if (NR == 0) exit 1
		if (NR % 2) printf fmt, v[(NR + 1) / 2]
		else printf fmt, (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Median of whole numbers.
bench_median() { bench_median_fmt "%d" "$@"; }

# Thousands separators for a table: 1234567 -> 1,234,567.
bench_fmt_int() {
	printf '%s' "$1" | sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta'
}

# One line describing the machine: nproc, CPU model, kernel.
bench_machine() {
	local model
	model=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)
	printf '%s CPUs, %s, Linux %s' "$(nproc)" "${model:-unknown CPU}" "$(uname -r)"
}

# The commit under test, "uncommitted" before the first commit, "+local changes" if dirty.
bench_commit() {
	local root=$1 c
	if c=$(git -C "$root" rev-parse --short HEAD 2>/dev/null); then
		if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
			c="$c (+local changes)"
		fi
		echo "$c"
	else
		echo "uncommitted"
	fi
}

# Replace the text between the lines BEGIN and END markers in FILE with the content of
# NEWFILE (the marker lines stay). If the markers are missing, append a section.
bench_md_replace() {
	local file=$1 begin=$2 end=$3 new=$4 tmp
	tmp=$(mktemp "$file.XXXXXX")
	if grep -qxF "$begin" "$file" && grep -qxF "$end" "$file"; then
		awk -v b="$begin" -v e="$end" -v nf="$new" '
			$0 == b { print; while ((getline l < nf) > 0) print l; skip = 1; next }
			$0 == e { skip = 0 }
			!skip { print }' "$file" >"$tmp"
	else
		{ cat "$file"; echo; echo "$begin"; cat "$new"; echo "$end"; } >"$tmp"
	fi
	chmod --reference="$file" "$tmp" 2>/dev/null || true
	mv "$tmp" "$file"
}

# Threaded NAPI on the lab veths, so the receive path of each side runs on that side's CPU.
# On a veth the receiver's NAPI (XDP program, AF_XDP copy, kernel UDP stack up to the socket)
# otherwise runs in softirq on whichever CPU first scheduled it under load: the generator's
# or the server's, decided by a race at the start of a run; answered rates then flip between
# two modes from run to run (knotd-XDP: 267k or 93k qps). With GRO on, a veth keeps its NAPI
# whether or not an XDP program is attached; threaded mode turns each NAPI into a kthread
# "napi/IFACE-ID" that bench_napi_pin puts on the right CPU.
# Usage: bench_napi_setup on|off
bench_napi_setup() {
	local onoff=$1 t=0 ns_if ns ifc
	[ "$onoff" = on ] && t=1
	for ns_if in "$BENCH_POP_NS:$BENCH_POP_IF" "$BENCH_CLIENT_NS:$BENCH_CLIENT_IF"; do
		ns=${ns_if%%:*} ifc=${ns_if##*:}
		ip netns exec "$ns" ethtool -K "$ifc" gro "$onoff" >/dev/null 2>&1 || true
		ip netns exec "$ns" sh -c "echo $t > /sys/class/net/$ifc/threaded" 2>/dev/null || true
	done
}

# Pin the NAPI kthreads: the pop veth's to the server CPU, the client veth's to the client CPU.
# They stay SCHED_OTHER, sharing the core with the server under CFS. BENCH_NAPI_PRIO=N makes
# them SCHED_FIFO N, preempting the server like softirq after a NIC interrupt would; tried:
# under a saturating offered rate that livelocks the kernel-socket servers (NSD: 5-11k qps)
# and makes pop53d's busy-polling worker flip between 35k and 124k, so it is not the default.
# Prints how many it pinned. Call after anything that may re-create a NAPI (XDP attach).
bench_napi_pin() {
	local pid n=0
	for pid in $(pgrep "^napi/$BENCH_POP_IF-"); do
		taskset -pc "$BENCH_SERVER_CPU" "$pid" >/dev/null 2>&1 && n=$((n + 1))
		[ -z "${BENCH_NAPI_PRIO:-}" ] || chrt -f -p "$BENCH_NAPI_PRIO" "$pid" 2>/dev/null || true
	done
	for pid in $(pgrep "^napi/$BENCH_CLIENT_IF-"); do
		taskset -pc "$BENCH_CLIENT_CPU" "$pid" >/dev/null 2>&1 && n=$((n + 1))
		[ -z "${BENCH_NAPI_PRIO:-}" ] || chrt -f -p "$BENCH_NAPI_PRIO" "$pid" 2>/dev/null || true
	done
	echo "$n"
}

# Take the lab for this benchmark: an exclusive flock on $BENCH_LAB_LOCK held by fd 9 until the
# script exits, waiting up to TIMEOUT seconds (default 600). Two benchmarks in the lab at once
# would fight over 192.0.2.53:53 and p53p's XDP hook, and one's `lab.sh down` kills the
# other's servers. Only scripts that take the same lock are kept out.
BENCH_LAB_LOCK=${BENCH_LAB_LOCK:-/run/lock/pop53-lab.lock}
bench_lab_lock() {
	mkdir -p "$(dirname "$BENCH_LAB_LOCK")" && exec 9>>"$BENCH_LAB_LOCK" || return 1
	flock -n 9 && return 0
	bench_log "waiting for the lab lock $BENCH_LAB_LOCK (another benchmark holds it)"
	flock -w "${1:-600}" 9
}

# Run dnsperf once from the client namespace, pinned to the client CPU (kernel UDP sockets:
# the tool users run). Usage: bench_dnsperf OUTFILE DURATION RATE OUTSTANDING QUERYFILE [extra]
# RATE 0 = no -Q: dnsperf keeps OUTSTANDING queries in flight and sends as fast as answers
# come back. -t 1: a lost query holds an outstanding slot for a second at most, and the run
# ends at most a second after -l. Sets BENCH_DNSPERF_CMD (with QUERIES for the file).
bench_dnsperf() {
	local out=$1 dur=$2 rate=$3 outst=$4 qfile=$5 q=()
	shift 5
	[ "$rate" -gt 0 ] && q=(-Q "$rate")
	# shellcheck disable=SC2034 # read by the caller
	BENCH_DNSPERF_CMD="ip netns exec $BENCH_CLIENT_NS taskset -c $BENCH_CLIENT_CPU dnsperf -s $BENCH_SERVER_V4 -d QUERIES -l $dur -c 8 ${q[*]} -q $outst -t 1${*:+ $*}"
	[ "${BENCH_NAPI:-}" = threaded ] && bench_napi_pin >/dev/null
	timeout -k 2 $((dur + 15)) ip netns exec "$BENCH_CLIENT_NS" taskset -c "$BENCH_CLIENT_CPU" \
		dnsperf -s "$BENCH_SERVER_V4" -d "$qfile" -l "$dur" -c 8 "${q[@]}" -q "$outst" -t 1 "$@" \
		>"$out" 2>&1
	grep -q 'Queries per second:' "$out"
}

# Parse dnsperf 2.x statistics. Prints "QPS LOST_PCT AVG_S STDDEV_S MAX_S SENT COMPLETED
# REQ_BYTES RESP_BYTES". Format:
#   Queries sent:         500000
#   Queries completed:    499990 (100.00%)
#   Queries lost:         10 (0.00%)
#   Average packet size:  request 33, response 49
#   Queries per second:   99997.771060
#   Average Latency (s):  0.000129 (min 0.000021, max 0.003127)
#   Latency StdDev (s):   0.000080
# With -m tcp a "Connection Statistics" part follows with its own Average Latency and StdDev
# (of connection set-up): the first ones, the queries', are taken.
bench_parse_dnsperf() {
	awk '
		/Queries sent:/        { s = $3 }
		/Queries completed:/   { c = $3 }
		/Queries lost:/        { l = $4; gsub(/[()%]/, "", l) }
		/Average packet size:/ { rq = $5; rs = $7; sub(/,/, "", rq) }
		/Queries per second:/  { q = $4 }
		/Average Latency \(s\):/ && a == "" { a = $4; m = $8; sub(/\)/, "", m) }
		/Latency StdDev \(s\):/ && d == "" { d = $4 }
		END { if (q == "") exit 1
			printf "%s %s %s %s %s %s %s %s %s\n", q, (l == "" ? 0 : l), (a == "" ? 0 : a),
				(d == "" ? 0 : d), (m == "" ? 0 : m), s, c, (rq == "" ? 0 : rq), (rs == "" ? 0 : rs) }' "$1"
}

# Median of decimal numbers.
bench_median_f() { bench_median_fmt "%.10g" "$@"; }

# Other work on the machine: the processes using more than THRESHOLD % of a CPU (default 20)
# over half a second, as "comm(pid) N%" separated by ", ". Call it while the benchmark's own
# programs are stopped (between servers): whatever it finds shares the cores with the run.
bench_busy_procs() {
	local thr=${1:-20}
	top -b -n 2 -d 0.5 -w 200 2>/dev/null | awk -v thr="$thr" -v self="$$" '
		/^top -/ { it++ ; hdr = 0; next }
		it == 2 && $1 == "PID" { hdr = 1; next }
		it == 2 && hdr && $9 + 0 > thr && $12 != "top" && $1 != self { out = out (out ? ", " : "") $12 "(" $1 ") " int($9) "%" }
		END { print out }'
}

# The big test zone of bigzone.sh, reload.sh and reload_peers.sh: made once by genzone.py and
# cached by record count and generator version. bench_big_zone RECORDS CACHE_DIR prints the
# zone's path (its per-type counts are in PATH.counts); messages go to stderr.
bench_big_zone() {
	local records=$1 cache=$2 hash zone
	mkdir -p "$cache"
	hash=$(sha1sum "$BENCH_DIR/genzone.py" | cut -c1-8)
	zone="$cache/big.test-$records-$hash.zone"
	if [ -s "$zone" ] && [ -s "$zone.counts" ]; then
		bench_log "reusing $zone"
	else
		bench_log "generating $zone ($records records)"
		if ! /usr/bin/python3 "$BENCH_DIR/genzone.py" "$records" "$zone.tmp" 2>"$zone.counts.tmp"; then
			cat "$zone.counts.tmp" >&2
			return 1
		fi
		mv "$zone.tmp" "$zone" && mv "$zone.counts.tmp" "$zone.counts"
	fi
	echo "$zone"
}

# bench_wait_soa PID PORT TIMEOUT: poll "kdig @127.0.0.1 -p PORT big.test SOA" until it answers
# NOERROR with the SOA, while PID lives, for up to TIMEOUT seconds; prints why on failure.
bench_wait_soa() {
	local pid=$1 port=$2 timeout=$3 start out
	start=$(date +%s)
	while :; do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid" 2>/dev/null
			echo "exited (status $?) before answering"
			return 1
		fi
		out=$(kdig +timeout=1 +retry=0 @127.0.0.1 -p "$port" big.test SOA 2>&1)
		if grep -q 'status: NOERROR' <<<"$out" && grep -q 'IN[[:space:]]*SOA' <<<"$out"; then
			return 0
		fi
		if (($(date +%s) - start >= timeout)); then
			echo "no SOA answer after ${timeout}s"
			return 1
		fi
		sleep 0.2
	done
}

# Configs for the big-zone peers on loopback (bigzone.sh, reload_peers.sh): one worker, the zone
# loaded whole from ZONEFILE, nothing kept between runs, everything under DIR.
# bench_knot_big_conf DIR PORT ZONEFILE: DIR/knot.conf, control socket DIR/knot.sock.
bench_knot_big_conf() {
	local dir=$1 port=$2 zone=$3
	cat >"$dir/knot.conf" <<CONF
server:
    rundir: "$dir"
    listen: 127.0.0.1@$port
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
control:
    listen: "$dir/knot.sock"
log:
  - target: stderr
    any: info
database:
    storage: "$dir"
template:
  - id: default
    storage: "$dir"
    semantic-checks: off
    zonefile-load: whole
    zonefile-sync: -1
    journal-content: none
zone:
  - domain: big.test
    file: "$zone"
CONF
}

# bench_nsd_big_conf DIR PORT ZONEFILE [CONTROL_PORT]: DIR/nsd.conf; with CONTROL_PORT,
# nsd-control on 127.0.0.1 with keys made in DIR. Prints "yes" when nsd-control is enabled.
bench_nsd_big_conf() {
	local dir=$1 port=$2 zone=$3 ctl_port=${4:-} ctl=no
	if [ -n "$ctl_port" ] && nsd-control-setup -d "$dir" >"$dir/setup.out" 2>&1; then
		ctl=yes
	fi
	{
		cat <<CONF
server:
    server-count: 1
    ip-address: 127.0.0.1
    port: $port
    username: ""
    chroot: ""
    zonesdir: "$dir"
    database: ""
    zonelistfile: "$dir/zone.list"
    xfrdfile: "$dir/xfrd.state"
    xfrdir: "$dir"
    pidfile: "$dir/nsd.pid"
    logfile: "$dir/nsd.log"
    verbosity: 1
remote-control:
    control-enable: $ctl
CONF
		if [ "$ctl" = yes ]; then
			cat <<CONF
    control-interface: 127.0.0.1
    control-port: $ctl_port
    server-key-file: "$dir/nsd_server.key"
    server-cert-file: "$dir/nsd_server.pem"
    control-key-file: "$dir/nsd_control.key"
    control-cert-file: "$dir/nsd_control.pem"
CONF
		fi
		cat <<CONF
zone:
    name: big.test
    zonefile: "$zone"
CONF
	} >"$dir/nsd.conf"
	echo "$ctl"
}

# The threads of a process and the CPUs each may run on, one "name(tid) cpus" per thread,
# separated by ", ". Usage: bench_thread_affinity PID
bench_thread_affinity() {
	local t out=() comm cpus
	for t in /proc/"$1"/task/*; do
		comm=$(cat "$t/comm" 2>/dev/null) || continue
		cpus=$(awk '/^Cpus_allowed_list:/ {print $2}' "$t/status" 2>/dev/null)
		out+=("$comm(${t##*/}) $cpus")
	done
	local IFS=,; echo "${out[*]}" | sed 's/,/, /g'
}
