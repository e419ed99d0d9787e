#!/usr/bin/python3
"""Raw-socket DNS-over-TCP client for tests/integration/tcp.sh (RFC 7766 framing cases).

Usage: tcp_client.py CASE --addr ADDR --ctl POP53CTL --sock CONTROL_SOCKET [--zone FILE]
                     [--idle-ms N] [--io-ms N] [--per-client N] [--max-conns N]

Each case prints TAP-style lines ("ok - ..." / "not ok - ...") that tcp.sh counts. Counters
are read with `pop53ctl --json stats`, so every bad-input row checks that its own close
reason was counted. dnspython builds and parses the messages; the framing is done here.
"""
import argparse
import json
import select
import socket
import struct
import subprocess
import sys
import time

import dns.edns
import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype

A = None  # parsed arguments


def say(ok, what):
    print(("ok - " if ok else "not ok - ") + what, flush=True)
    return ok


def stats():
    out = subprocess.run([A.ctl, "--json", "-s", A.sock, "stats"], capture_output=True, text=True)
    return json.loads(out.stdout)["stats"]


def closed(st, reason):
    return st["tcp"]["closed"][reason]


def refused(st, reason):
    return st["tcp"]["refused"][reason]


def query(name, rdtype="A", qid=1, edns=True, options=None):
    m = dns.message.make_query(name, rdtype, use_edns=0 if edns else False, payload=1232,
                               options=options or [])
    m.id = qid
    return m.to_wire()


def frame(wire):
    return struct.pack("!H", len(wire)) + wire


def connect(src=None, rcvbuf=None):
    fam = socket.AF_INET6 if ":" in A.addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    if src is not None:
        s.bind((src, 0))
    s.settimeout(5)
    s.connect((A.addr, 53))
    return s


def recv_exact(s, n, timeout=5.0):
    buf = b""
    end = time.time() + timeout
    while len(buf) < n:
        s.settimeout(max(0.01, end - time.time()))
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_msg(s, timeout=5.0):
    """One framed message, or None at EOF."""
    hdr = recv_exact(s, 2, timeout)
    if hdr is None:
        return None
    body = recv_exact(s, struct.unpack("!H", hdr)[0], timeout)
    return None if body is None else dns.message.from_wire(body)


def state_after(s, timeout):
    """'eof', 'reset' or 'open' (nothing happened within timeout); data read is discarded."""
    end = time.time() + timeout
    while True:
        left = end - time.time()
        if left <= 0:
            return "open"
        r, _, _ = select.select([s], [], [], left)
        if not r:
            return "open"
        try:
            if not s.recv(65536):
                return "eof"
        except ConnectionResetError:
            return "reset"


def first_answer(m):
    return [r.to_text() for rrset in m.answer for r in rrset]


def wait_counter(get, want, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if get() >= want:
            return True
        time.sleep(0.1)
    return get() >= want


# --- cases --------------------------------------------------------------------------------

EXPECT = [  # name, type, rcode, an answer that must be there (or None)
    ("www.tc.test", "A", dns.rcode.NOERROR, "192.0.2.80"),
    ("ns1.tc.test", "AAAA", dns.rcode.NOERROR, "2001:db8:53::53"),
    ("ns1.tc.test", "A", dns.rcode.NOERROR, "192.0.2.53"),
    ("nope.tc.test", "A", dns.rcode.NXDOMAIN, None),
    ("www.example.com", "A", dns.rcode.NOERROR, "192.0.2.80"),
]


def check_response(m, exp):
    name, rdtype, rcode, ans = exp
    if m is None or m.rcode() != rcode or m.flags & dns.flags.TC:
        return False
    if m.question[0].name.to_text().rstrip(".").lower() != name:
        return False
    return ans is None or ans in first_answer(m)


def case_pipeline():
    """20 queries in one segment, read back by ID (any order would do)."""
    s = connect()
    batch = b""
    want = {}
    for i in range(20):
        exp = EXPECT[i % len(EXPECT)]
        qid = 1000 + i
        want[qid] = exp
        batch += frame(query(exp[0], exp[1], qid))
    say(len(batch) < 1400, "20 queries fit one segment (%d bytes, TCP_NODELAY, one send)" % len(batch))
    s.sendall(batch)
    got = {}
    for _ in range(20):
        m = read_msg(s)
        if m is None:
            break
        got[m.id] = m
    say(sorted(got) == sorted(want), "20 pipelined queries: 20 responses, one per query ID")
    say(all(check_response(got.get(q), e) for q, e in want.items()),
        "each pipelined response answers its own query (RCODE, question, data)")
    s.close()


def case_split():
    s = connect()
    q = frame(query("www.tc.test", "A", 7))
    for b in q:  # well inside tcp.io_timeout_ms for the whole message
        s.send(bytes([b]))
        time.sleep(0.005)
    say(check_response(read_msg(s), EXPECT[0]), "a query sent one byte per segment is answered")
    q1, q2, q3 = (frame(query(e[0], e[1], 10 + i)) for i, e in enumerate(EXPECT[:3]))
    s.send(q1 + q2[:5])
    time.sleep(0.2)
    s.send(q2[5:] + q3[:1])
    time.sleep(0.2)
    s.send(q3[1:])
    got = [read_msg(s) for _ in range(3)]
    say(all(check_response(m, e) for m, e in zip(got, EXPECT[:3])),
        "messages split mid-body and mid-length across segments: all three answered")
    s.close()


def case_bad_input():
    good = frame(query("www.tc.test", "A", 5))
    rows = [
        # what, bytes, half-close after?, responses expected, close reason
        ("a length of 0 closes the connection", b"\x00\x00", False, 0, "zero_length"),
        ("a length of 0 after a good query: the good one answered, then closed",
         good + b"\x00\x00", False, 1, "zero_length"),
        ("a length larger than what follows, then EOF", b"\x01\x00" + b"\x12" * 20, True, 0,
         "eof_mid_message"),
        ("half a length field, then EOF", b"\x00", True, 0, "eof_mid_message"),
        ("a whole query, then EOF: answered, closed as a clean EOF", good, True, 1, "eof"),
    ]
    for what, data, half, n_resp, reason in rows:
        before = closed(stats(), reason)
        s = connect()
        s.sendall(data)
        if half:
            s.shutdown(socket.SHUT_WR)
        resp = [read_msg(s) for _ in range(n_resp)]
        ok = all(check_response(m, EXPECT[0]) for m in resp)
        st = state_after(s, 4)
        s.close()
        counted = wait_counter(lambda: closed(stats(), reason), before + 1, 3)
        say(ok and st in ("eof", "reset") and counted,
            "%s (%d response(s), server closed: %s, closed.%s +1: %s)" % (what, n_resp, st, reason, counted))


def case_slowloris():
    before = closed(stats(), "slow_message")
    s = connect()
    q = frame(query("www.tc.test", "A", 9))  # sent one byte every 300 ms
    t0 = time.time()
    state = "open"
    other_ok = None
    for i, b in enumerate(q):
        try:
            s.send(bytes([b]))
        except (BrokenPipeError, ConnectionResetError):
            state = "reset"
            break
        if i == 3:
            # Meanwhile another client on the same thread is served at once.
            o = connect()
            o.sendall(frame(query("www.tc.test", "A", 99)))
            t1 = time.time()
            other_ok = check_response(read_msg(o, 2), EXPECT[0]) and time.time() - t1 < 1.0
            o.close()
        st = state_after(s, 0.3)
        if st != "open":
            state = st
            break
    took = time.time() - t0
    full = len(q) * 0.3
    say(other_ok is True, "another connection is answered while one trickles (under 1 s)")
    say(state in ("eof", "reset") and took < min(full, A.io_ms / 1000.0 + 2.5),
        "a query trickled one byte per 300 ms is cut off after tcp.io_timeout_ms (%.1f s, whole would take %.1f s)"
        % (took, full))
    say(wait_counter(lambda: closed(stats(), "slow_message"), before + 1, 3), "counted as closed.slow_message")
    s.close()
    before = closed(stats(), "slow_message")
    s = connect()
    s.send(b"\x00")
    st = state_after(s, A.io_ms / 1000.0 + 2)
    say(st in ("eof", "reset") and wait_counter(lambda: closed(stats(), "slow_message"), before + 1, 3),
        "one byte of a length and nothing more: closed after tcp.io_timeout_ms, closed.slow_message")
    s.close()


def case_nonreader():
    """A client that sends queries for a 61 KB answer and never reads."""
    before = closed(stats(), "write_stalled")
    s = connect(rcvbuf=4096)
    q = frame(query("huge.tc.test", "TXT", 3, edns=False))
    try:
        s.sendall(q * 300)
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        pass
    time.sleep(0.3)
    o = connect()
    o.sendall(frame(query("www.tc.test", "A", 98)))
    t1 = time.time()
    say(check_response(read_msg(o, 2), EXPECT[0]) and time.time() - t1 < 1.0,
        "another connection is answered while a client does not read its responses")
    o.close()
    ok = wait_counter(lambda: closed(stats(), "write_stalled"), before + 1, A.io_ms / 1000.0 + 5)
    say(ok, "a client that never reads is closed after tcp.io_timeout_ms without progress (closed.write_stalled)")
    s.close()


def case_limits():
    conns = []
    answered = 0
    for i in range(A.per_client):
        c = connect()
        c.sendall(frame(query("www.tc.test", "A", 200 + i)))
        answered += check_response(read_msg(c), EXPECT[0])
        conns.append(c)
    say(answered == A.per_client, "%d connections from one address (tcp.max_per_client) all answered" % A.per_client)
    before = refused(stats(), "per_client")
    extra = connect()
    st = state_after(extra, 2)
    say(st in ("eof", "reset") and wait_counter(lambda: refused(stats(), "per_client"), before + 1, 2),
        "connection %d from the same address is closed at once (refused.per_client +1; %s)" % (A.per_client + 1, st))
    extra.close()
    others = 0
    for i in range(A.max_conns - A.per_client):
        c = connect(src=A.src2)
        c.sendall(frame(query("www.tc.test", "A", 300 + i)))
        others += check_response(read_msg(c), EXPECT[0])
        conns.append(c)
    say(others == A.max_conns - A.per_client,
        "another client address is still served (%d more connections: %d open in all)" % (others, A.max_conns))
    before = refused(stats(), "max_connections")
    extra = connect(src=A.src3)
    st = state_after(extra, 2)
    say(st in ("eof", "reset") and wait_counter(lambda: refused(stats(), "max_connections"), before + 1, 2),
        "connection %d (tcp.max_connections) is closed at once, from a new address too (refused.max_connections +1)"
        % (A.max_conns + 1))
    extra.close()
    for c in conns:
        c.close()
    time.sleep(0.5)
    c = connect()
    c.sendall(frame(query("www.tc.test", "A", 400)))
    say(check_response(read_msg(c), EXPECT[0]), "after those close, the first address is served again")
    c.close()


def case_idle():
    before = closed(stats(), "idle")
    s = connect()
    s.sendall(frame(query("www.tc.test", "A", 11)))
    ok = check_response(read_msg(s), EXPECT[0])
    t0 = time.time()
    early = state_after(s, A.idle_ms / 2000.0)
    late = state_after(s, A.idle_ms / 1000.0 + 2)
    took = time.time() - t0
    say(ok and early == "open" and late in ("eof", "reset"),
        "an idle connection stays open for half of tcp.idle_timeout_ms and is closed by the server after it (%.1f s)" % took)
    say(wait_counter(lambda: closed(stats(), "idle"), before + 1, 2), "counted as closed.idle")
    s.close()


def keepalive_of(m):
    for o in m.options:
        if o.otype == 11:
            data = o.to_wire() if hasattr(o, "to_wire") else o.data
            return struct.unpack("!H", data)[0] if len(data) == 2 else -1
    return None


def case_keepalive():
    s = connect()
    want = A.idle_ms // 100
    s.sendall(frame(query("www.tc.test", "A", 21, options=[dns.edns.GenericOption(11, b"")])))
    m = read_msg(s)
    got = keepalive_of(m) if m else None
    say(m is not None and m.rcode() == dns.rcode.NOERROR and got == want,
        "edns-tcp-keepalive in a query: the response carries the idle timeout, %s x 100 ms (RFC 7828)" % got)
    s.sendall(frame(query("www.tc.test", "A", 22)))
    m = read_msg(s)
    say(m is not None and keepalive_of(m) is None, "no keepalive option asked: none sent")
    s.sendall(frame(query("www.tc.test", "A", 23, options=[dns.edns.GenericOption(11, b"\x00\x64")])))
    m = read_msg(s)
    say(m is not None and m.rcode() == dns.rcode.FORMERR,
        "a keepalive option with a TIMEOUT in a query is FORMERR (RFC 7828 §3.2.1)")
    s.sendall(frame(query("www.tc.test", "A", 24)))
    say(check_response(read_msg(s), EXPECT[0]), "the connection goes on after the FORMERR")
    s.close()


def case_big():
    s = connect()
    s.sendall(frame(query("huge.tc.test", "TXT", 31, edns=False)))
    hdr = recv_exact(s, 2)
    n = struct.unpack("!H", hdr)[0] if hdr else 0
    m = dns.message.from_wire(recv_exact(s, n)) if n else None
    count = sum(len(r) for r in m.answer) if m else 0
    say(m is not None and not m.flags & dns.flags.TC and count == A.huge and n > 60000,
        "a %d-byte answer (%d TXT records) over TCP without EDNS: whole, no TC" % (n, count))
    s.close()


def case_reload():
    """A reload while a connection is open (and another holds half a message) swaps its data."""
    a = connect()
    a.sendall(frame(query("www.tc.test", "A", 41)))
    m = read_msg(a)
    say(m is not None and "192.0.2.80" in first_answer(m), "open connection: www.tc.test A 192.0.2.80 before the reload")
    slow = connect()
    slow.send(b"\x00")  # a partial message held open across the reload
    text = open(A.zone).read()
    serial = "2026120101"
    text = text.replace("www\tIN A 192.0.2.80", "www\tIN A 192.0.2.81").replace(serial, "2026120102")
    open(A.zone, "w").write(text)
    out = subprocess.run([A.ctl, "--json", "-s", A.sock, "zone", "reload"], capture_output=True, text=True)
    try:
        r = json.loads(out.stdout)
    except ValueError:
        r = {"ok": False, "error": out.stdout + out.stderr}
    say(r.get("ok") is True, "zone reload succeeds while a TCP client holds half a message (%s)" % r.get("error", "ok"))
    a.sendall(frame(query("www.tc.test", "A", 42)))
    m = read_msg(a)
    say(m is not None and "192.0.2.81" in first_answer(m),
        "the same connection now answers 192.0.2.81 from the new data")
    slow.close()
    a.close()


def case_hold():
    """Open connections (one mid-message) and keep them until killed: the stop must close them."""
    conns = [connect() for _ in range(3)]
    conns[0].sendall(frame(query("www.tc.test", "A", 51)))
    read_msg(conns[0])
    conns[1].send(b"\x00\x20\x12")
    print("holding", flush=True)
    time.sleep(60)


CASES = {
    "pipeline": case_pipeline, "split": case_split, "bad-input": case_bad_input,
    "slowloris": case_slowloris, "nonreader": case_nonreader, "limits": case_limits,
    "idle": case_idle, "keepalive": case_keepalive, "big": case_big, "reload": case_reload,
    "hold": case_hold,
}


def main():
    global A
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=sorted(CASES))
    p.add_argument("--addr", required=True)
    p.add_argument("--ctl", required=True)
    p.add_argument("--sock", required=True)
    p.add_argument("--zone")
    p.add_argument("--idle-ms", type=int, default=10000)
    p.add_argument("--io-ms", type=int, default=2000)
    p.add_argument("--per-client", type=int, default=4)
    p.add_argument("--max-conns", type=int, default=6)
    p.add_argument("--src2", default="192.0.2.2")
    p.add_argument("--src3", default="192.0.2.3")
    p.add_argument("--huge", type=int, default=230)
    A = p.parse_args()
    try:
        CASES[A.case]()
    except Exception as e:  # a crash of the client is a failed check, with its reason
        say(False, "%s: client error: %r" % (A.case, e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
