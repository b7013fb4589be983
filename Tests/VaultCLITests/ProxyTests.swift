import Foundation
import XCTest
import VaultTestSupport

/// Proxy variables are honoured (libcurl reads them): with `https_proxy` set, the real `vault`
/// binary logs in, uploads and downloads through a CONNECT proxy on loopback (TLS end to end,
/// verified against the test CA); with `no_proxy` naming the server it goes direct.
final class ProxyTests: XCTestCase {
    /// A tiny CONNECT-only forward proxy: prints its port, logs each request line, pipes bytes.
    static let proxyScript = #"""
import socket, sys, threading
log = open(sys.argv[1], "a", buffering=1)
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0)); srv.listen(64)
print(srv.getsockname()[1], flush=True)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
def handle(c):
    head = b""
    while b"\r\n\r\n" not in head:
        d = c.recv(4096)
        if not d: c.close(); return
        head += d
    line = head.split(b"\r\n", 1)[0].decode()
    log.write(line + "\n")
    method, target, _ = line.split(" ", 2)
    if method != "CONNECT":
        c.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n"); c.close(); return
    host, port = target.rsplit(":", 1)
    u = socket.create_connection((host, int(port)))
    c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    rest = head.split(b"\r\n\r\n", 1)[1]
    if rest: u.sendall(rest)
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    pipe(c, u)
while True:
    c, _ = srv.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
"""#

    func testHTTPSProxyFromTheEnvironmentIsUsedAndNoProxyBypassesIt() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        let server = try ServerHarness(root: h.root, args: ["--max-chunk", "1048576"], tls: true)
        let script = h.root.appendingPathComponent("proxy.py"), log = h.root.appendingPathComponent("proxy.log")
        try Data(Self.proxyScript.utf8).write(to: script)
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        proxy.arguments = [script.path, log.path]
        let out = Pipe()
        proxy.standardOutput = out
        proxy.standardError = FileHandle.nullDevice
        try proxy.run()
        defer { proxy.terminate(); proxy.waitUntilExit() }
        let first = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        let port = try XCTUnwrap(Int(first.trimmingCharacters(in: .whitespacesAndNewlines)), "proxy did not start: \(first)")
        func proxied() -> [String] {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        h.env["https_proxy"] = "http://127.0.0.1:\(port)"
        try h.ok(["login", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path,
                  "--ca-file", server.certFile!.path] + h.pw)
        let data = TestData.data(3 << 20, for: self.name)
        try h.ok(["put", try h.localFile("p.bin", data), "/"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/p.bin"] + h.pw)
        XCTAssertEqual(try h.ok(["cat", "/p.bin"] + h.pw).stdout, data)
        let through = proxied()
        XCTAssertFalse(through.isEmpty, "nothing went through the proxy")
        XCTAssertTrue(through.allSatisfy { $0 == "CONNECT 127.0.0.1:\(server.port) HTTP/1.1" }, "\(through)")
        XCTAssertGreaterThanOrEqual(through.count, 3, "login, the upload's chunks and the download each tunnelled: \(through)")

        h.env["no_proxy"] = "127.0.0.1"
        try h.ok(["evict", "/p.bin"] + h.pw)
        XCTAssertEqual(try h.ok(["cat", "/p.bin"] + h.pw).stdout, data)
        XCTAssertEqual(proxied().count, through.count, "no_proxy goes direct")
    }
}
