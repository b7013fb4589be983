// The test server, kept as a Swift string so SwiftPM sees no unhandled resource file (the test
// target declares no resources). Written to a temporary file and run with python3.

let echoServerScript = #"""
#!/usr/bin/env python3
"""Tiny HTTP(S) server for VaultHTTPTests. Binds 127.0.0.1 on a free port and prints the port.

Usage: echo_server.py [--watch-stdin] [--tls CERT KEY [legacy|static-rsa]]
(legacy: only TLS 1.0/1.1; static-rsa: only TLS 1.2 static-RSA suites, no forward secrecy)
With --watch-stdin the server exits when its standard input closes (the test process ended).

Routes
  PUT|POST /echo          -> JSON {length, sha256, pattern, expect, pieces}; the body is read in
                             pieces and compared with the test pattern (byte i == i % 251).
  GET /download?n=N       -> N pattern bytes; honours "Range: bytes=a-b" / "bytes=a-" with 206.
  GET /redirect           -> 308 with Location: /echo and Range: bytes=0-99 (must not be followed)
  GET /stall              -> 200 headers and 10 body bytes, then silence
  PUT /sink-stall         -> reads nothing (the upload stalls once socket buffers are full)
  GET /reset              -> 200 announcing 1 MiB, 64 KiB of body, then a TCP reset
  GET /busy               -> 503 with Retry-After: 7
  GET /interim            -> 103 Early Hints then 200 with X-Final: 1
  ANY /headers            -> JSON of the request line, headers and the client's port
"""
import hashlib, json, os, select, socket, ssl, struct, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs

PERIOD = 251
BLOCK = bytes(range(PERIOD)) * (((1 << 20) // PERIOD) + 2)  # > 1 MiB + one period


def pattern(offset, count):
    """count pattern bytes starting at absolute offset (count <= 1 MiB)."""
    start = offset % PERIOD
    return BLOCK[start:start + count]


def until_client_hangs_up(conn, bound=30):
    """Blocks until the client closes its side of conn (it gave up on a stalled transfer), for at
    most bound seconds (a hang bound). Reads nothing, so a stalled upload stays stalled."""
    p = select.poll()
    p.register(conn, select.POLLRDHUP)
    p.poll(bound * 1000)


def until_sent(conn, bound=30):
    """Blocks until no byte written to conn waits unsent (the client took them), for at most
    bound seconds: then a reset cannot discard them."""
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NOTSENT_LOWAT, 1)
    p = select.poll()
    p.register(conn, select.POLLOUT)
    p.poll(bound * 1000)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def reply_json(self, obj, status=200):
        self.reply(status, json.dumps(obj).encode(), [("Content-Type", "application/json")])

    def route(self):
        return urlparse(self.path).path

    def do_PUT(self):
        if self.route() == "/echo":
            return self.echo()
        if self.route() == "/sink-stall":
            until_client_hangs_up(self.connection)  # never reads the body: the client's upload stalls
            self.close_connection = True
            return
        if self.route() == "/headers":
            return self.headers_echo()
        self.reply(404)

    do_POST = do_PUT
    do_PATCH = do_PUT

    def do_DELETE(self):
        self.headers_echo()

    def echo(self):
        length = int(self.headers.get("Content-Length", "0"))
        digest = hashlib.sha256()
        got, matches, pieces = 0, True, 0
        while got < length:
            piece = self.rfile.read(min(1 << 20, length - got))
            if not piece:
                break
            digest.update(piece)
            if matches and piece != pattern(got, len(piece)):
                matches = False
            got += len(piece)
            pieces += 1
        self.reply_json({"length": got, "sha256": digest.hexdigest(), "pattern": matches,
                         "expect": self.headers.get("Expect"), "pieces": pieces})

    def headers_echo(self):
        length = int(self.headers.get("Content-Length", "0") or "0")
        if length:
            self.rfile.read(length)
        self.reply_json({"method": self.command, "path": self.path,
                         "headers": [[k, v] for k, v in self.headers.items()],
                         "client_port": self.client_address[1]})

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        route = self.route()
        if route == "/download":
            return self.download()
        if route == "/headers":
            return self.headers_echo()
        if route == "/redirect":
            return self.reply(308, headers=[("Location", "/echo"), ("Range", "bytes=0-99")])
        if route == "/busy":
            return self.reply(503, b"busy, come back later\n", [("Retry-After", "7")])
        if route == "/interim":
            self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n")
            self.wfile.flush()
            return self.reply(200, b"final", [("X-Final", "1")])
        if route == "/stall":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            until_client_hangs_up(self.connection)
            self.close_connection = True
            return
        if route == "/reset":
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 20))
            self.end_headers()
            self.wfile.write(pattern(0, 64 * 1024))
            self.wfile.flush()
            until_sent(self.connection)
            # SO_LINGER with a zero timeout turns close() into a TCP RST.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        self.reply(404)

    def download(self):
        n = int(parse_qs(urlparse(self.path).query).get("n", ["0"])[0])
        start, end, status = 0, n - 1, 200
        rng = self.headers.get("Range")
        headers = [("Accept-Ranges", "bytes")]
        if rng and rng.startswith("bytes="):
            a, _, b = rng[len("bytes="):].partition("-")
            start = int(a)
            end = min(int(b), n - 1) if b else n - 1
            if start >= n or start > end:
                return self.reply(416, headers=[("Content-Range", "bytes */%d" % n)])
            status = 206
            headers.append(("Content-Range", "bytes %d-%d/%d" % (start, end, n)))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        if self.command == "HEAD":
            return
        pos = start
        while pos <= end:
            count = min(1 << 20, end - pos + 1)
            self.wfile.write(pattern(pos, count))
            pos += count


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def watch_stdin():
    sys.stdin.read()  # returns at EOF, when the parent process has gone
    os._exit(0)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--watch-stdin"]:
        args = args[1:]
        threading.Thread(target=watch_stdin, daemon=True).start()
    server = Server(("127.0.0.1", 0), Handler)
    if len(args) in (3, 4) and args[0] == "--tls":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args[1], args[2])
        mode = args[3] if len(args) == 4 else ""
        if mode == "legacy":
            import warnings
            warnings.simplefilter("ignore", DeprecationWarning)
            ctx.set_ciphers("DEFAULT@SECLEVEL=0")
            ctx.minimum_version = ssl.TLSVersion.TLSv1
            ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        elif mode == "static-rsa":
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            ctx.maximum_version = ssl.TLSVersion.TLSv1_2
            ctx.set_ciphers("AES128-SHA:AES256-GCM-SHA384:AES128-GCM-SHA256")
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
"""#
