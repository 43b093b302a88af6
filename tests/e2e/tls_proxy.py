#!/usr/bin/env python3
"""A GitHub Enterprise Server stand-in for the end-to-end tests: HTTPS on a loopback port, with a
certificate the test's own CA signed, forwarding https://127.0.0.1:PORT/api/v3/X to the GitHub
emulator's http://127.0.0.1:UPSTREAM/X (GHES serves its REST API under /api/v3).

Usage: tls_proxy.py CERT KEY UPSTREAM_URL LOG. Prints "listening PORT" once it accepts; appends
"METHOD PATH STATUS" to LOG for each request it forwarded. Ends on SIGTERM."""
import http.client
import http.server
import signal
import ssl
import sys
import threading
import urllib.parse

PREFIX = "/api/v3"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate", "host", "content-length"}


def main():
    cert, key, upstream, log_path = sys.argv[1:5]
    target = urllib.parse.urlsplit(upstream)
    log_lock = threading.Lock()

    class Forward(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def forward(self):
            if not self.path.startswith(PREFIX + "/"):
                self.send_error(404, "GHES serves its REST API under " + PREFIX)
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
            try:
                conn.request(self.command, self.path[len(PREFIX):], body=body, headers=headers)
                res = conn.getresponse()
                data = res.read()
            finally:
                conn.close()
            self.send_response(res.status, res.reason)
            for k, v in res.getheaders():
                if k.lower() not in HOP_BY_HOP:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            with log_lock, open(log_path, "a") as log:
                log.write("%s %s %d\n" % (self.command, self.path, res.status))

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = forward

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print("listening %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
