import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The client speaks HTTP/2 where the server offers it: the real `vault` binary syncs through
/// Debian's `nghttpx` (TLS with ALPN h2 in front of the plain-HTTP/1.1 `vault-server`), and
/// nghttpx's access log shows which protocol each request used.
final class HTTP2Tests: XCTestCase {
    var h: CLIHarness!
    var server: ServerHarness!
    var proxy: H2Proxy?

    override func tearDown() {
        proxy?.stop()
        proxy = nil
        server = nil
        h = nil
    }

    func testUploadsSyncAndRangeDownloadsGoOverHTTP2ThroughAnH2Proxy() throws {
        guard let nghttpx = H2Proxy.binary else {
            throw XCTSkip("nghttpx is not installed (apt package nghttp2-proxy; scripts/install-deps.sh installs it)")
        }
        h = try CLIHarness(keyring: false)
        try h.initVault()
        server = try ServerHarness(root: h.root, args: ["--max-chunk", "1048576"])
        h.useFastRetry()
        let proxy = try H2Proxy(binary: nghttpx, root: h.root.appendingPathComponent("h2proxy"), backendPort: server.port)
        self.proxy = proxy

        // The log tells HTTP/1.1 from HTTP/2 apart: a client held to HTTP/1.1 is logged as such.
        let h1 = try runTool("/usr/bin/curl", ["-s", "-o", "/dev/null", "--http1.1", "--cacert", proxy.certFile.path,
                                               "--max-time", "20", proxy.url + "/v1/files"])
        XCTAssertEqual(h1, 0)
        let control = try XCTUnwrap(proxy.entries().last)
        XCTAssertEqual(control.alpn, "http/1.1", control.line)
        XCTAssertTrue(control.request.hasSuffix(" HTTP/1.1"), control.line)

        try h.ok(["login", "--server", proxy.url, "--user", server.user, "--server-password-file", server.passwordFile.path,
                  "--ca-file", proxy.certFile.path] + h.pw)

        // A multi-chunk upload (1 MiB chunks) with the default chunks in flight…
        let aData = random(3 << 20 + 512 << 10)
        let a = try h.localFile("a.bin", aData)
        try h.ok(["put", a, "/"] + h.pw)
        try h.ok(["sync"] + h.pw)
        XCTAssertEqual(try server.children()["a.bin"]?["sha256"] as? String, sha256Hex(aData))
        let aSealed = try XCTUnwrap(try server.children()["a.bin"]?["storedSize"] as? Int)
        // …and three at once.
        let bData = random(6 << 20 + 123)
        let b = try h.localFile("b.bin", bData)
        try h.ok(["put", b, "/"] + h.pw)
        try h.ok(["sync", "--concurrency", "3"] + h.pw)
        XCTAssertEqual(try server.children()["b.bin"]?["sha256"] as? String, sha256Hex(bData))
        let bSealed = try XCTUnwrap(try server.children()["b.bin"]?["storedSize"] as? Int)

        // Downloads: a whole one, then one killed part-way and resumed with Range.
        try h.ok(["evict", "/a.bin", "/b.bin"] + h.pw)
        XCTAssertEqual(try h.ok(["cat", "/a.bin"] + h.pw).stdout, aData)
        let killed = try h.run(["cat", "/b.bin"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": "download-midway"])
        XCTAssertEqual(killed.status, 9, killed.stderr)
        let resumed = try h.ok(["cat", "/b.bin"] + h.pw)
        XCTAssertEqual(resumed.stdout, bData)
        XCTAssertTrue(resumed.stderr.contains("resuming the download at"), resumed.stderr)

        // What nghttpx saw: every request of the vault client negotiated h2.
        let log = try proxy.entries(settling: 12)
        let client = log.filter { $0.userAgent.hasPrefix("vault/") }
        print("nghttpx access log (alpn|remote port|request|status|bytes sent|range|content-length|user-agent):\n"
              + client.map(\.line).joined(separator: "\n"))
        XCTAssertFalse(client.isEmpty, "no vault requests in the proxy's log:\n\(proxy.accessLog)")
        for e in client {
            XCTAssertEqual(e.alpn, "h2", e.line)
            XCTAssertTrue(e.request.hasSuffix(" HTTP/2"), e.line)
        }

        // The chunk PUTs: streamed bodies with their Content-Length, all accepted (308, last 201).
        let chunks = client.filter { $0.request.hasPrefix("PUT /v1/upload/") && $0.request.contains("/chunk ") }
        XCTAssertEqual(chunks.count, 4 + 7, chunks.map(\.line).joined(separator: "\n"))
        XCTAssertEqual(chunks.filter { $0.status == 201 }.count, 2, "one completed upload per file")
        XCTAssertTrue(chunks.allSatisfy { $0.status == 308 || $0.status == 201 }, chunks.map(\.line).joined(separator: "\n"))
        let lengths = chunks.compactMap { Int($0.contentLength) }
        XCTAssertEqual(lengths.count, chunks.count, "every chunk PUT announced its Content-Length")
        XCTAssertEqual(lengths.reduce(0, +), aSealed + bSealed, "each sealed byte sent once")
        let ports = Set(chunks.suffix(7).map(\.remotePort))
        print("--concurrency 3 sent b.bin's 7 chunks over \(ports.count) HTTP/2 connection(s)")

        // The content GETs, each for the sealed bytes (`bytes=N-(Z-1)`, 206): a whole one, the
        // killed one, and the resumed one for the rest.
        let gets = client.filter { $0.request.hasPrefix("GET /v1/files/") && $0.request.contains("/content ") }
        XCTAssertEqual(gets.count, 3, gets.map(\.line).joined(separator: "\n"))
        XCTAssertTrue(gets.allSatisfy { $0.status == 206 && $0.range.hasPrefix("bytes=") }, gets.map(\.line).joined(separator: "\n"))
        XCTAssertEqual(gets.first?.bytesSent, aSealed)
        let ranged = try XCTUnwrap(gets.last, gets.map(\.line).joined(separator: "\n"))
        let start = try XCTUnwrap(Int(ranged.range.dropFirst("bytes=".count).prefix { $0.isNumber }), ranged.line)
        XCTAssertGreaterThan(start, 0)
        XCTAssertEqual(ranged.bytesSent, bSealed - start, "the resumed download fetched only the rest")
    }

    private func random(_ count: Int) -> Data {
        TestData.data(count, for: self.name)
    }
}

/// `nghttpx` on 127.0.0.1 as a TLS-terminating HTTP/2 reverse proxy (ALPN h2, then http/1.1)
/// with a fresh self-signed certificate, forwarding over plain HTTP/1.1 to a local backend.
final class H2Proxy: @unchecked Sendable {
    struct Entry {
        var line: String
        var alpn = "", remotePort = "", request = "", range = "", contentLength = "", userAgent = ""
        var status = 0, bytesSent = 0
    }

    static var binary: String? {
        for dir in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"] {
            let path = dir + "/nghttpx"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    let certFile: URL
    let accessLogFile: URL
    let errorLogFile: URL
    private(set) var port: UInt16 = 0
    private var process: Process?
    var url: String { "https://127.0.0.1:\(port)" }

    init(binary: String, root: URL, backendPort: UInt16) throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        certFile = root.appendingPathComponent("cert.pem")
        let key = root.appendingPathComponent("key.pem")
        accessLogFile = root.appendingPathComponent("access.log")
        errorLogFile = root.appendingPathComponent("error.log")
        try ServerHarness.sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout '\(key.path)'"
                             + " -out '\(certFile.path)' -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1")
        // nghttpx cannot listen on port 0: take a free port and try again if it was taken meanwhile.
        for _ in 0..<5 {
            let port = try freeLoopbackPort()
            let p = Process()
            p.executableURL = URL(fileURLWithPath: binary)
            p.arguments = ["--conf=/dev/null", "--single-process", "--workers=1", "--no-ocsp",
                           "--frontend=127.0.0.1,\(port)",
                           "--backend=127.0.0.1,\(backendPort);;proto=http/1.1",
                           "--errorlog-file=\(errorLogFile.path)",
                           "--accesslog-file=\(accessLogFile.path)",
                           "--accesslog-format=$alpn|$remote_port|$request|$status|$body_bytes_sent|$http_range|$http_content_length|$http_user_agent",
                           "--backend-read-timeout=30s", "--backend-write-timeout=30s",
                           key.path, certFile.path]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            process = p
            _ = eventually(within: 10) { !p.isRunning || loopbackAccepts(port) }   // its readiness signal: the port accepts
            if p.isRunning && loopbackAccepts(port) { self.port = port; return }
            stop()
        }
        throw TransferTestError("nghttpx did not start: \((try? String(contentsOf: errorLogFile, encoding: .utf8)) ?? "")")
    }

    deinit { stop() }

    /// SIGTERM (fast shutdown), SIGKILL after 5 s.
    func stop() {
        guard let p = process else { return }
        process = nil
        if p.isRunning { p.terminate() }
        _ = eventually(within: 5) { !p.isRunning }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
    }

    var accessLog: String { (try? String(contentsOf: accessLogFile, encoding: .utf8)) ?? "" }

    /// The parsed access log; with `settling`, waits (up to 5 s) until at least that many lines
    /// are there, as nghttpx writes a line when a stream closes.
    func entries(settling count: Int = 0) throws -> [Entry] {
        var lines: [String] = []
        _ = eventually(within: 5) {
            lines = accessLog.split(separator: "\n").map(String.init)
            return lines.count >= count
        }
        return lines.map { line in
            let f = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            var e = Entry(line: line)
            guard f.count >= 8 else { return e }
            e.alpn = f[0]; e.remotePort = f[1]; e.request = f[2]
            e.status = Int(f[3]) ?? 0; e.bytesSent = Int(f[4]) ?? -1
            e.range = f[5]; e.contentLength = f[6]; e.userAgent = f[7...].joined(separator: "|")
            return e
        }
    }

}
