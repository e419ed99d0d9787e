#!/usr/bin/env bash
# HTTPS and DNS-over-TCP probes of steering targets (docs/CONFIG.md, steering:
# .pool[].check): pop53d's control thread probes real servers in the client namespace across
# the lab veth, and kdig from the client sees the steered answers change.
#   HTTPS: HTTP servers over TLS (tests/steer/probe_server.py https) with certificates made
#   here by `openssl req`/`openssl x509`: one signed by a test CA for web.probe.test, one
#   self-signed. The probe sends SNI, checks status and body as the HTTP probe does, and
#   verifies the certificate against check.ca_file or the system store (a hashed folder with
#   the test CA, given by SSL_CERT_DIR): a wrong name, an IP address the certificate lacks or
#   an untrusted issuer keep a target out with the reason in `pop53ctl target list`;
#   `tls_verify: false` lets it in. 503, a stopped server:
#   out within a bound of a few intervals; back after `rise`.
#   DNS over TCP (RFC 7766): knotd on port 5300; a reply too large for UDP (a 512-byte
#   datagram without EDNS comes back truncated, answer empty) passes over TCP and fails over
#   UDP; REFUSED (a zone knotd does not serve, then probe.test dropped by a knotd reload),
#   SERVFAIL (a zone whose file is missing) and a stopped knotd keep or take targets out.
#   TLS session resumption: each https check keeps the session of its last handshake and
#   offers it on the next probe; the server (probe_server.py logs tls=resumed|full per request)
#   and `pop53ctl target list` (tls_resumed, tls_full) see later probes resumed; a server that
#   never takes a session back (a new TLS context per connection) is still probed fine, with
#   full handshakes only; a reload drops the sessions (the first probe after it is full); a
#   restarted server (new ticket keys) gets a full handshake, then resumptions again; TLS 1.2
#   resumes too (openssl s_server -tls1_2).
# A server that accepts and never speaks TLS times the handshake out. A reload with the same
# probes keeps their verdicts; pop53d stops cleanly (with -Dsanitize=true: no leak of TLS
# objects on the timeout, reload and shutdown paths, where probes are mid-handshake).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/probe_lib.sh" # servers, knotd, q, wait_for, tl, text, metric

# Certificates: a test CA, a server certificate it signs for web.probe.test, a self-signed one.
PKI="$TMP/pki"
mkdir -p "$PKI"
mkcerts() {
	local key="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
	openssl req -x509 $key -keyout "$PKI/ca.key" -out "$PKI/ca.pem" -days 2 \
		-subj "/CN=pop53 test CA" -addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign &&
	openssl req $key -keyout "$PKI/web.key" -out "$PKI/web.csr" -subj "/CN=web.probe.test" &&
	printf 'subjectAltName=DNS:web.probe.test\nextendedKeyUsage=serverAuth\n' >"$PKI/web.ext" &&
	openssl x509 -req -in "$PKI/web.csr" -CA "$PKI/ca.pem" -CAkey "$PKI/ca.key" \
		-CAcreateserial -days 2 -extfile "$PKI/web.ext" -out "$PKI/web.pem" &&
	openssl req -x509 $key -keyout "$PKI/self.key" -out "$PKI/self.pem" -days 2 \
		-subj "/CN=web.probe.test" -addext subjectAltName=DNS:web.probe.test
} 2>"$TMP/openssl.err" >/dev/null
check "openssl makes a CA, a certificate it signs and a self-signed one" mkcerts
check "the CA-signed certificate verifies for web.probe.test (openssl verify)" \
	openssl verify -CAfile "$PKI/ca.pem" -verify_hostname web.probe.test "$PKI/web.pem"
# A "system store" holding the test CA: a hashed folder (as /etc/ssl/certs) that pop53d is
# pointed at with SSL_CERT_DIR, which OpenSSL reads in place of its default folder.
mkdir -p "$PKI/store"
cp "$PKI/ca.pem" "$PKI/store/pop53-test-ca.pem"
check "openssl rehash makes the store's hash links" bash -c \
	'openssl rehash "$0" && ls "$0" | grep -Eq "^[0-9a-f]{8}\.0$"' "$PKI/store"


echo "200 pop53-ok" >"$TMP/https.state"
check "HTTPS server (CA-signed) listens on $SRV:8443" \
	start_srv https https "$SRV" 8443 "$TMP/https.state" "$PKI/web.pem" "$PKI/web.key"
check "HTTPS server (self-signed) listens on $SRV:8444" \
	start_srv self https "$SRV" 8444 "$TMP/https.state" "$PKI/self.pem" "$PKI/self.key"
check "a mute listener (accepts TCP, never speaks) on $SRV:8445" start_srv mute mute "$SRV" 8445
check "HTTPS server that never resumes (a TLS context per connection) listens on $SRV:8446" \
	start_srv nores https-noresume "$SRV" 8446 "$TMP/https.state" "$PKI/web.pem" "$PKI/web.key"
# openssl s_server speaking TLS 1.2 only (-www: a 200 status page), for TLS 1.2 resumption.
ip netns exec "$CLIENT_NS" openssl s_server -accept "$SRV:8447" -cert "$PKI/web.pem" \
	-key "$PKI/web.key" -tls1_2 -www -quiet >"$TMP/s12.out" 2>&1 &
SRV_PIDS+=($!)
check "openssl s_server (TLS 1.2 only) listens on $SRV:8447" bash -c 'for _ in $(seq 1 50); do
		ip netns exec "$0" ss -ltn | grep -q "$1:8447 " && exit 0; sleep 0.1; done; exit 1' \
	"$CLIENT_NS" "$SRV"
check "curl with the CA gets the page over TLS (the servers work)" bash -c \
	'ip netns exec "$0" curl -sf --max-time 5 --cacert "$1" --resolve web.probe.test:8443:"$2" \
	 https://web.probe.test:8443/ | grep -q pop53-ok' "$CLIENT_NS" "$PKI/ca.pem" "$SRV"

# knotd on $SRV:5300: probe.test with www (A) and big (TXT, about 1 KB: more than a 512-byte
# UDP reply holds), broken.test whose file is missing (SERVFAIL).
mkdir -p "$TMP/knot"
{
	cat <<'ZONE'
$TTL 300
@	SOA	ns.probe.test. admin.probe.test. 1 3600 600 86400 300
@	NS	ns.probe.test.
ns	A	192.0.2.1
www	A	192.0.2.80
ZONE
	for i in $(seq 1 8); do
		echo "big	TXT	\"$i $(printf 'x%.0s' $(seq 1 110))\""
	done
} >"$TMP/knot/probe.test.zone"
knot_conf() { # knot_conf WITH_PROBE_TEST(yes|no)
	cat <<EOF
server:
  rundir: $TMP/knot
  listen: $SRV@5300
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
log:
  - target: $TMP/knot/knotd.log
    any: info
database:
  storage: $TMP/knot/db
zone:
  - domain: broken.test
    storage: $TMP/knot
    file: broken.test.zone
EOF
	[ "$1" = yes ] && cat <<EOF
  - domain: probe.test
    storage: $TMP/knot
    file: probe.test.zone
EOF
	true
}
knot_conf yes >"$TMP/knot/knot.conf"
check "knotd answers on $SRV:5300" start_knotd
check "knotd: big.probe.test TXT over UDP without EDNS is truncated (TC)" bash -c \
	'ip netns exec "$0" kdig +time=1 +retry=0 +noedns +notcp +ignore -p 5300 @"$1" big.probe.test TXT |
	 grep -Eiq "flags:[a-z ]* tc[ ;]"' "$CLIENT_NS" "$SRV"
check "knotd: SERVFAIL for broken.test (its file is missing)" [ "$(kq www.broken.test A)" = SERVFAIL ]
check "knotd: REFUSED for other.test (not served)" [ "$(kq www.other.test A)" = REFUSED ]

P="interval: ${IVL}ms, timeout: 450ms"
write_config "$TMP/pop53.yaml" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
cat >>"$TMP/pop53.yaml" <<YAML
steering:
  records:
    - owner: tls.example.com.
      type: A
      policy: [priority]
      ttl: 30
      pool:
        - {name: hs1, address: 10.0.6.1, priority: 1, check: {type: https, address: $SRV, port: 8443, path: /health, host: web.probe.test, ca_file: $PKI/ca.pem, body: pop53-ok, $P, rise: 2, fall: 2}}
        - {name: hnov, address: 10.0.6.2, priority: 1, check: {type: https, address: $SRV, port: 8444, tls_verify: false, $P, rise: 1, fall: 1}}
        - {name: hstore, address: 10.0.6.3, priority: 1, check: {type: https, address: $SRV, port: 8443, host: web.probe.test, $P, rise: 1, fall: 1}}
        - {name: s0, address: 10.0.6.9, priority: 1}
    - owner: resume.example.com.
      type: A
      policy: [priority]
      ttl: 30
      pool:
        - {name: hnores, address: 10.0.7.1, priority: 1, check: {type: https, address: $SRV, port: 8446, path: /nores, host: web.probe.test, ca_file: $PKI/ca.pem, $P, rise: 1, fall: 1}}
        - {name: h12, address: 10.0.7.2, priority: 1, check: {type: https, address: $SRV, port: 8447, host: web.probe.test, ca_file: $PKI/ca.pem, $P, rise: 1, fall: 1}}
        - {name: s4, address: 10.0.7.9, priority: 1}
    - owner: badtls.example.com.
      type: A
      policy: [priority]
      ttl: 30
      pool:
        - {name: hname, address: 10.0.5.1, priority: 1, check: {type: https, address: $SRV, port: 8443, host: "wrong.probe.test:8443", ca_file: $PKI/ca.pem, $P, rise: 1, fall: 1}}
        - {name: hself, address: 10.0.5.2, priority: 1, check: {type: https, address: $SRV, port: 8444, host: web.probe.test, ca_file: $PKI/ca.pem, $P, rise: 1, fall: 1}}
        - {name: hsys, address: 10.0.5.3, priority: 1, check: {type: https, address: $SRV, port: 8444, host: web.probe.test, $P, rise: 1, fall: 1}}
        - {name: hip, address: 10.0.5.4, priority: 1, check: {type: https, address: $SRV, port: 8443, ca_file: $PKI/ca.pem, $P, rise: 1, fall: 1}}
        - {name: hmute, address: 10.0.5.5, priority: 1, check: {type: https, address: $SRV, port: 8445, host: web.probe.test, $P, rise: 1, fall: 1}}
        - {name: s1, address: 10.0.5.9, priority: 1}
    - owner: dtcp.example.com.
      type: A
      policy: [priority]
      ttl: 30
      pool:
        - {name: dt1, address: 10.0.4.1, priority: 1, check: {type: dns, transport: tcp, address: $SRV, port: 5300, qname: www.probe.test., qtype: A, answer: true, $P, rise: 2, fall: 2}}
        - {name: dtbig, address: 10.0.4.2, priority: 1, check: {type: dns, transport: tcp, address: $SRV, port: 5300, qname: big.probe.test., qtype: TXT, answer: true, $P, rise: 1, fall: 1}}
        - {name: s2, address: 10.0.4.9, priority: 1}
    - owner: dbad.example.com.
      type: A
      policy: [priority]
      ttl: 30
      pool:
        - {name: dubig, address: 10.0.3.1, priority: 1, check: {type: dns, transport: udp, address: $SRV, port: 5300, qname: big.probe.test., qtype: TXT, answer: true, $P, rise: 1, fall: 1}}
        - {name: dtref, address: 10.0.3.2, priority: 1, check: {type: dns, transport: tcp, address: $SRV, port: 5300, qname: www.other.test., qtype: A, $P, rise: 1, fall: 1}}
        - {name: dtsf, address: 10.0.3.3, priority: 1, check: {type: dns, transport: tcp, address: $SRV, port: 5300, qname: www.broken.test., qtype: A, $P, rise: 1, fall: 1}}
        - {name: s3, address: 10.0.3.9, priority: 1}
YAML
check "the probe config passes pop53d --check-config" "$POP53D" --check-config "$TMP/pop53.yaml"
check "the probe config passes pop53ctl config check" "$CTL" config check "$TMP/pop53.yaml"

# Config errors an operator may make, each rejected with file:line and a reason.
bad() { # bad WHAT CHECK_MAPPING EXPECTED_REASON
	local f="$TMP/bad.yaml" out
	write_config "$f" "net_af_xdp0,iface=p53p,start_queue=0,queue_count=1"
	printf 'steering:\n  records:\n    - owner: x.example.com.\n      type: A\n      policy: [priority]\n      ttl: 30\n      pool:\n        - {name: a, address: 10.0.0.1, check: %s}\n' "$2" >>"$f"
	out=$("$POP53D" --check-config "$f" 2>&1)
	if [ $? -ne 0 ] && grep -Eq "bad.yaml:[0-9]+: .*$3" <<<"$out"; then ok "config: $1"; else
		not_ok "config: $1 (got: $out)"; fi
}
bad "ca_file that does not exist" "{type: https, ca_file: $TMP/nope.pem}" "nope.pem: No such file"
bad "tls_verify on an http check" "{type: http, tls_verify: false}" "'tls_verify' is not a key of a http check"
bad "transport on an https check" "{type: https, transport: tcp}" "'transport' is not a key of a https check"
bad "transport that is neither udp nor tcp" "{type: dns, qname: a.b., transport: quic}" "expected udp or tcp"

SSL_CERT_DIR="$PKI/store" start_pop53_answering "$TMP/pop53.yaml"


# As in steering_probes.sh: fall (2) probes an interval apart plus a tick and the query is
# three intervals on an idle machine; five and 2 s more on a shared one.
BOUND=$(( 5 * IVL + 2000 ))
TLS_ALL="10.0.6.1 10.0.6.2 10.0.6.3 10.0.6.9"
wait_for "https: hs1 (CA file), hnov (tls_verify false), hstore (system store) answered" tls.example.com "$TLS_ALL" 5000
check "target list: hs1 is an https probe, HTTP 200 with the body" \
	tl hs1 '.probe == "https" and .up == true and .probe_state.last == "ok" and (.probe_state.reason | test("HTTP 200, body has .pop53-ok."))'
check "target list (text): hs1 up, https, ok: HTTP 200" \
	grep -Eq '^tls.example.com. +A +hs1 +10.0.6.1 +up +up +auto +https +[0-9]+/0 +ok: HTTP 200' <(text hs1)
check "the server saw SNI web.probe.test and Host web.probe.test for /health" \
	grep -q '^sni=web.probe.test web.probe.test "GET /health HTTP/1.1" 200' "$TMP/https.err"
check "target list: hstore verified against the system store (no ca_file)" \
	tl hstore '.up == true and (.probe_state.reason | test("^HTTP 200 in"))'
check "target list: hnov passes the self-signed server without verifying" \
	tl hnov '.up == true and (.probe_state.reason | test("HTTP 200"))'
check "the server saw no SNI from hnov (no host: an IP address is not sent as SNI)" \
	grep -q '^sni=- 192.0.2.1 "GET / HTTP/1.1" 200' "$TMP/self.err"

# TLS session resumption. tl_wait NAME JQ LIMIT_MS: until target NAME's JSON satisfies JQ.
tl_wait() {
	local t0
	t0=$(now_ms)
	until tl "$1" "$2"; do
		[ $(( $(now_ms) - t0 )) -gt "$3" ] && return 1
		sleep 0.1
	done
}
check "target list: hs1's later probes resume its TLS session (tls_resumed >= 3 after 1 full)" \
	tl_wait hs1 '.probe_state.tls_resumed >= 3 and .probe_state.tls_full >= 1' 5000
check "the server saw hs1's resumed handshakes (tls=resumed for /health)" \
	bash -c '[ "$(grep -c "^sni=web.probe.test web.probe.test \"GET /health HTTP/1.1\" 200 - tls=resumed" "$0")" -ge 3 ]' "$TMP/https.err"
check "target list: hnov (no verification, no SNI) resumes too" \
	tl_wait hnov '.probe_state.tls_resumed >= 2' 5000
check "target list (text): hs1's line counts the resumed and full handshakes" \
	grep -Eq 'ok: HTTP 200.*\(TLS: [1-9][0-9]* resumed, [1-9][0-9]* full\)$' <(text hs1)
wait_for "a server that never resumes (hnores) and a TLS 1.2 one (h12) are answered" resume.example.com "10.0.7.1 10.0.7.2 10.0.7.9" 5000
check "target list: h12 resumes over TLS 1.2 (openssl s_server's session cache)" \
	tl_wait h12 '.up == true and .probe_state.tls_resumed >= 2 and .probe_state.tls_full >= 1' 5000
check "target list: hnores up after 3 full handshakes, none resumed" \
	tl_wait hnores '.up == true and .probe_state.tls_full >= 3 and .probe_state.tls_resumed == 0 and (.probe_state.reason | test("^HTTP 200"))' 5000
check "the never-resuming server saw only full handshakes" bash -c \
	'[ "$(grep -c "GET /nores HTTP/1.1\" 200 - tls=full" "$0")" -ge 3 ] && ! grep -q "tls=resumed" "$0"' "$TMP/nores.err"

wait_for "bad certificates: only the unprobed target is answered" badtls.example.com "10.0.5.9" 5000
check "target list: hname down, the certificate is not for wrong.probe.test" \
	tl hname '.up == false and .probe_state.reason == "TLS certificate: hostname mismatch"'
check "target list (text): hname's reason as an operator reads it" \
	grep -q 'fail: TLS certificate: hostname mismatch' <(text hname)
check "target list: hself down, self-signed (not from the CA file)" \
	tl hself '.up == false and (.probe_state.reason | test("^TLS certificate: self.signed certificate"))'
check "target list: hsys down, self-signed is not in the system store (verify is on by default)" \
	tl hsys '.up == false and (.probe_state.reason | test("^TLS certificate: self.signed certificate"))'
check "target list: hip down, no host: the certificate must name the IP address" \
	tl hip '.up == false and .probe_state.reason == "TLS certificate: IP address mismatch"'
check "target list: hmute down, its handshake timed out (the TLS is freed each time: ASAN)" \
	tl hmute '.up == false and (.probe_state.reason | test("^timed out after [0-9]+ ms while in the TLS handshake$"))'

# HTTP over TLS: the status and body checks.
echo "503 down for maintenance" >"$TMP/https.state"
wait_for "https 503: hs1, hnov and hstore leave" tls.example.com "10.0.6.9" "$BOUND"
check "target list: hs1 down, HTTP 503" tl hs1 '.up == false and (.probe_state.reason | test("^HTTP 503, want 200"))'
check "the change is logged" grep -q 'target hs1 (10.0.6.1) of tls.example.com. is down (HTTP 503, want 200)' "$TMP/pop53d.log"
echo "200 maintenance" >"$TMP/https.state"
wait_for "https 200 without the body: hnov and hstore back, hs1 stays out" tls.example.com "10.0.6.2 10.0.6.3 10.0.6.9" "$BOUND"
check "target list: hs1's reason names the body" tl hs1 '.probe_state.reason | test("lacks .pop53-ok.")'
echo "200 pop53-ok" >"$TMP/https.state"
wait_for "the body back: hs1 returns after rise" tls.example.com "$TLS_ALL" "$BOUND"

# The reload keeps the verdicts (the TLS contexts are made anew: ASAN sees the old ones freed).
FULL0=$(grep -c 'GET /health HTTP/1.1" 200 - tls=full' "$TMP/https.err")
check "pop53ctl reload (same config)" "$CTL" -s "$TMP/control.sock" reload
check "after the reload the bad certificates are still out at once" [ "$(q badtls.example.com)" = "10.0.5.9" ]
check "after the reload hs1 is still in" [ "$(q tls.example.com)" = "$TLS_ALL" ]
# The reload dropped the sessions with the old TLS contexts: a full handshake first.
check "after the reload hs1's first handshake is full (the server saw one more), then it resumes" \
	bash -c 'for _ in $(seq 1 50); do
		[ "$(grep -c "GET /health HTTP/1.1\" 200 - tls=full" "$0")" -gt "$1" ] && exit 0; sleep 0.1
	done; exit 1' "$TMP/https.err" "$FULL0"
check "target list: hs1's TLS counts began again at the reload and it resumes" \
	tl_wait hs1 '.probe_state.tls_full >= 1 and .probe_state.tls_full <= 2 and .probe_state.tls_resumed >= 1' 5000

# The server stops (refused), then comes back.
stop_srv https
wait_for "https server stopped: hs1 and hstore leave" tls.example.com "10.0.6.2 10.0.6.9" "$BOUND"
check "target list: connection refused" tl hs1 '.probe_state.reason | test("connect: Connection refused")'
check "HTTPS server restarts" start_srv https https "$SRV" 8443 "$TMP/https.state" "$PKI/web.pem" "$PKI/web.key"
wait_for "https server back: hs1 returns" tls.example.com "$TLS_ALL" "$BOUND"
# The new server process has new ticket keys: hs1's kept session is offered and turned down.
check "after the server restart hs1's first handshake was full (its old session refused)" \
	bash -c 'grep "GET /health" "$0" | head -1 | grep -q "tls=full$"' "$TMP/https.err"
check "then hs1 resumes the new server's session" bash -c 'for _ in $(seq 1 50); do
		grep -q "GET /health HTTP/1.1\" 200 - tls=resumed" "$0" && exit 0; sleep 0.1
	done; exit 1' "$TMP/https.err"

# DNS over TCP.
wait_for "dns over tcp: dt1 and dtbig answered" dtcp.example.com "10.0.4.1 10.0.4.2 10.0.4.9" 5000
check "target list: dtbig passes over tcp with the 8 TXT records" \
	tl dtbig '.probe == "dns" and .up == true and (.probe_state.reason | test("rcode NOERROR, 8 answer\\(s\\) in [0-9]+ ms over tcp"))'
wait_for "dns: udp truncated, REFUSED, SERVFAIL: only the unprobed target" dbad.example.com "10.0.3.9" 5000
check "target list: dubig down over udp, the reply truncated" \
	tl dubig '.up == false and (.probe_state.reason | test("no answer \\(truncated: TC set"))'
check "target list: dtref down, REFUSED" tl dtref '.up == false and .probe_state.reason == "rcode REFUSED, want NOERROR"'
check "target list: dtsf down, SERVFAIL" tl dtsf '.up == false and .probe_state.reason == "rcode SERVFAIL, want NOERROR"'

# knotd drops probe.test (reload): REFUSED for www.probe.test; then takes it back.
knot_conf no >"$TMP/knot/knot.conf"
check "knotc reload without probe.test" ip netns exec "$CLIENT_NS" knotc -c "$TMP/knot/knot.conf" reload
wait_for "knotd REFUSED for probe.test: dt1 and dtbig leave" dtcp.example.com "10.0.4.9" "$BOUND"
check "target list: dt1 down, REFUSED" tl dt1 '.up == false and .probe_state.reason == "rcode REFUSED, want NOERROR"'
knot_conf yes >"$TMP/knot/knot.conf"
check "knotc reload with probe.test" ip netns exec "$CLIENT_NS" knotc -c "$TMP/knot/knot.conf" reload
wait_for "probe.test back: dt1 and dtbig return" dtcp.example.com "10.0.4.1 10.0.4.2 10.0.4.9" "$BOUND"

# knotd stops, then comes back.
stop_knotd
wait_for "knotd stopped: dt1 and dtbig leave" dtcp.example.com "10.0.4.9" "$BOUND"
check "target list: dt1's reason says why" tl dt1 '.up == false and (.probe_state.reason | test("Connection refused|timed out"))'
check "knotd restarts" start_knotd
wait_for "knotd back: dt1 and dtbig return" dtcp.example.com "10.0.4.1 10.0.4.2 10.0.4.9" "$BOUND"

metrics_read
check "metrics: https probes passed and failed by type" \
	[ "$(metric 'pop53_steer_probe_ok_total{type="https"}')" -gt 5 -a "$(metric 'pop53_steer_probe_failed_total{type="https"}')" -ge 10 ]

check "pop53d stops cleanly" stop_pop53
check "no mbuf leaked" grep -q 'no leak' "$TMP/pop53d.log"
# With -Dsanitize=true: probes were mid-handshake (hmute always is) at the reload and the stop.
check "no sanitizer report (leaks of SSL objects included)" \
	bash -c '! grep -Eq "LeakSanitizer|AddressSanitizer|runtime error" "$0"' "$TMP/pop53d.log"
[ "$FAIL" -eq 0 ] && [ -z "${VERBOSE:-}" ] || cat "$TMP/pop53d.log"
finish
