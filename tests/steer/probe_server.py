#!/usr/bin/python3
"""Servers for the steering probe test (tests/integration/steering_probes.sh).

  probe_server.py http ADDR PORT STATEFILE   HTTP/1.1: every GET answers with the status and
                                             body in STATEFILE ("200 pop53-ok"), read per request,
                                             so the test switches it to 503 without a restart
  probe_server.py tcp ADDR PORT              accepts connections and closes them

Both run in the foreground until killed; they print "ready" once listening.
"""
import http.server
import socket
import sys


def http_server(addr, port, statefile):
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
            sys.stderr.write("%s %s\n" % (self.headers.get("Host"), fmt % args))

    srv = http.server.HTTPServer((addr, port), Handler)
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


if __name__ == "__main__":
    if sys.argv[1] == "http":
        http_server(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        tcp_server(sys.argv[2], int(sys.argv[3]))
