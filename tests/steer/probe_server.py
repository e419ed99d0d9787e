#!/usr/bin/python3
"""Servers for the steering probe test (tests/integration/steering_probes.sh).

  probe_server.py http ADDR PORT STATEFILE   HTTP/1.1: every GET answers with the status and
                                             body in STATEFILE ("200 pop53-ok"), read per request,
                                             so the test switches it to 503 without a restart
  probe_server.py https ADDR PORT STATEFILE CERT KEY
                                             the same over TLS with CERT and KEY (PEM); each
                                             request's log line starts with the SNI the client
                                             sent ("-" for none) and ends with how the TLS
                                             handshake went: "tls=resumed" (the client's
                                             session was taken) or "tls=full"
  probe_server.py https-noresume ADDR PORT STATEFILE CERT KEY
                                             the same with a new TLS context per connection:
                                             its session tickets are never accepted back (new
                                             keys each time), so every handshake is full
  probe_server.py tcp ADDR PORT              accepts connections and closes them
  probe_server.py mute ADDR PORT             listens and never accepts: the kernel completes
                                             the TCP handshake, nothing ever answers

Both run in the foreground until killed; they print "ready" once listening.
"""
import http.server
import socket
import ssl
import sys
import time


def http_server(addr, port, statefile, cert=None, key=None, resume=True):
    sni = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            with open(statefile) as f:
                status, _, body = f.read().strip().partition(" ")
            data = (body + "\n").encode()
            self.send_response(int(status))
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        def log_message(self, fmt, *args):
            pre = ""
            if cert is not None:
                pre = "sni=%s " % (sni.get(id(self.connection)) or "-")
            post = ""
            if cert is not None:
                post = " tls=%s" % ("resumed" if self.connection.session_reused else "full")
            sys.stderr.write("%s%s %s%s\n" % (pre, self.headers.get("Host"), fmt % args, post))

    if cert is None:
        srv = http.server.HTTPServer((addr, port), Handler)
    else:
        # One thread per connection: a client stuck in (or failing) its handshake holds up
        # only its own thread.
        def on_sni(sock, name, _ctx):
            sni[id(sock)] = name

        def context():
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
            ctx.sni_callback = on_sni
            return ctx

        shared = context() if resume else None

        class TLSServer(http.server.ThreadingHTTPServer):
            def get_request(self):
                conn, peer = self.socket.accept()
                ctx = shared if shared is not None else context()
                return ctx.wrap_socket(conn, server_side=True,
                                       do_handshake_on_connect=False), peer

        srv = TLSServer((addr, port), Handler)
    print("ready", flush=True)
    srv.serve_forever()


def tcp_server(addr, port):
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(16)
    print("ready", flush=True)
    while True:
        c, _ = s.accept()
        c.close()


def mute_server(addr, port):
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(4096)
    print("ready", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    if sys.argv[1] == "http":
        http_server(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] in ("https", "https-noresume"):
        http_server(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6],
                    resume=sys.argv[1] == "https")
    elif sys.argv[1] == "mute":
        mute_server(sys.argv[2], int(sys.argv[3]))
    else:
        tcp_server(sys.argv[2], int(sys.argv[3]))
