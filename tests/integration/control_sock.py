#!/usr/bin/python3
"""Raw clients for pop53d's control socket and DPDK telemetry, for tests/integration/control.sh.

  control_sock.py SOCK MODE       one malformed-input case; prints one line, exit 0 when the
                                  daemon behaved as expected (the line says what happened)
  control_sock.py TELEMETRY_SOCK telemetry CMD   print the JSON value of a telemetry command

Modes: oversized, badjson, object, nonstring, empty-array, truncated, idle, concurrent,
hold N SECONDS (N silent connections held open), burst N (N requests back to back),
request WORD... (one request, the reply printed as JSON).
Frames: 4-byte big-endian length, then the JSON. Every socket operation has a timeout.
"""
import json
import socket
import struct
import sys
import threading
import time

TIMEOUT = 5.0


def connect(path, timeout=TIMEOUT):
    """Connect, retrying while the listen backlog is full (AF_UNIX says EAGAIN), bounded."""
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None  # EOF
        buf += chunk
    return buf


def read_reply(s):
    """The reply object, or None when the daemon closed the connection without one."""
    hdr = recv_exact(s, 4)
    if hdr is None:
        return None
    (n,) = struct.unpack(">I", hdr)
    body = recv_exact(s, n)
    if body is None:
        raise RuntimeError("reply truncated: header says %d bytes" % n)
    return json.loads(body)


def frame(body):
    return struct.pack(">I", len(body)) + body


def send_then_read(s, data):
    """Send, then read the reply. A refused client ("busy") may find the socket closed
    before it sends: the reply is still there to read."""
    try:
        s.sendall(data)
    except BrokenPipeError:
        pass
    return read_reply(s)


def request(path, words):
    with connect(path) as s:
        return send_then_read(s, frame(json.dumps(words).encode()))


def expect_error(path, body, what):
    r = request_raw(path, body)
    if r is not None and r.get("ok") is False and r.get("error"):
        print("%s: ok:false, error '%s'" % (what, r["error"]))
        return 0
    print("%s: unexpected reply %r" % (what, r))
    return 1


def request_raw(path, body):
    with connect(path) as s:
        return send_then_read(s, frame(body))


def status_ok(path):
    r = request(path, ["status"])
    return r is not None and r.get("ok") is True


def outcome(r):
    """ok, busy (refused with a retry time), eof (closed without a reply) or bad."""
    if r is None:
        return "eof"
    if r.get("ok") is True:
        return "ok"
    if r.get("busy") is True and r.get("retry_ms", 0) > 0:
        return "busy"
    return "bad"


def main():
    path, mode = sys.argv[1], sys.argv[2]
    if mode == "oversized":
        # Claim 1,000,000 bytes, send a little of it, then wait for the verdict.
        with connect(path) as s:
            s.sendall(struct.pack(">I", 1000000) + b"[" + b" " * 4000)
            try:
                r = read_reply(s)
            except (ConnectionResetError, BrokenPipeError):
                r = None
        if r is None:
            print("oversized: connection closed without a reply")
        elif r.get("ok") is False and "too large" in r.get("error", ""):
            print("oversized: ok:false, error '%s'" % r["error"])
        else:
            print("oversized: unexpected reply %r" % r)
            return 1
        return 0 if status_ok(path) else 1
    if mode == "badjson":
        return expect_error(path, b'["status"', "bad JSON")
    if mode == "object":
        return expect_error(path, b'{"cmd":"status"}', "object")
    if mode == "nonstring":
        return expect_error(path, b'["zone", 1]', "non-string element")
    if mode == "empty-array":
        return expect_error(path, b"[]", "empty array")
    if mode == "truncated":
        # Announce 100 bytes, send 10, close: the daemon must just drop the client.
        with connect(path) as s:
            s.sendall(struct.pack(">I", 100) + b'["status",')
        ok = status_ok(path)
        print("truncated: status afterwards %s" % ("answered" if ok else "NOT answered"))
        return 0 if ok else 1
    if mode == "idle":
        # A silent client must not block another one, and is dropped after about 2 s.
        t0 = time.monotonic()
        idle = connect(path, timeout=8.0)
        time.sleep(0.2)  # the daemon has accepted it by now
        t1 = time.monotonic()
        ok = status_ok(path)
        t_other = time.monotonic() - t1
        try:
            data = idle.recv(1)
            closed = data == b""
        except socket.timeout:
            closed = False
        except ConnectionResetError:
            closed = True
        t_drop = time.monotonic() - t0
        idle.close()
        print("idle: other client %s in %.2f s; silent client %s after %.2f s"
              % ("answered" if ok else "NOT answered", t_other, "dropped" if closed else "NOT dropped", t_drop))
        return 0 if ok and t_other < 1.0 and closed and 1.5 <= t_drop <= 4.0 else 1
    if mode == "concurrent":
        # 20 clients connected at the same time, then each sends status and reads.
        n = int(sys.argv[3]) if len(sys.argv) > 3 else 20
        socks, results = [], [None] * n
        for _ in range(n):
            socks.append(connect(path))

        def run(i):
            s = socks[i]
            try:
                results[i] = outcome(send_then_read(s, frame(b'["status"]')))
            except (ConnectionResetError, BrokenPipeError):
                results[i] = "eof"
            except socket.timeout:
                results[i] = "timeout"
            except Exception as e:  # noqa: BLE001 - reported, counted as bad
                results[i] = "error:%s" % e
            finally:
                s.close()

        threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT * 2)
        counts = {}
        for r in results:
            counts[r] = counts.get(r, 0) + 1
        print("concurrent %d: %s" % (n, " ".join("%s=%d" % kv for kv in sorted(counts.items(), key=str))))
        # Every client got a reply (ok, or busy with a retry time) or a clean close; none hung,
        # none got garbage.
        return 0 if set(counts) <= {"ok", "busy", "eof"} else 1
    if mode == "hold":
        n, secs = int(sys.argv[3]), float(sys.argv[4])
        socks = [connect(path) for _ in range(n)]
        time.sleep(secs)
        for s in socks:
            s.close()
        print("held %d connections for %.1f s" % (n, secs))
        return 0
    if mode == "burst":
        n = int(sys.argv[3])
        counts = {}
        for _ in range(n):
            try:
                o = outcome(request(path, ["status"]))
            except (ConnectionResetError, BrokenPipeError):
                o = "eof"
            counts[o] = counts.get(o, 0) + 1
        print("burst %d: %s" % (n, " ".join("%s=%d" % kv for kv in sorted(counts.items()))))
        return 0
    if mode == "request":
        print(json.dumps(request(path, sys.argv[3:])))
        return 0
    if mode == "telemetry":
        cmd = sys.argv[3]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(TIMEOUT)
        s.connect(path)
        info = json.loads(s.recv(16384).decode())
        if "version" not in info:
            print("unexpected telemetry greeting %r" % info)
            return 1
        s.send(cmd.encode())
        reply = json.loads(s.recv(65536).decode())
        s.close()
        print(json.dumps(reply.get(cmd)))
        return 0
    print("unknown mode %s" % mode, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
