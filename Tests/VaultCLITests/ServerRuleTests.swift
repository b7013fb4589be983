import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The rules every connection to the server obeys, checked where the connection is made, so
/// `login` and every later network command apply them to the address as stored: plain http://
/// only to this machine (or the loud `--insecure-http` opt-in), the policy's `allowedServers`,
/// and reads of content that is not here fail at once when the server cannot be reached.
final class ServerRuleTests: XCTestCase {
    var h: CLIHarness!
    var server: ServerHarness!

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
        server = try ServerHarness(root: h.root)
        h.useFastRetry()
    }

    override func tearDown() {
        server = nil
        h = nil
    }

    func writePolicy(_ json: String) throws { try h.usePolicy(json) }

    func login(_ url: String, _ extra: [String] = []) throws -> CLIHarness.Result {
        try h.run(["login", "--server", url, "--user", server.user, "--server-password-file", server.passwordFile.path] + extra + h.pw)
    }

    /// Request lines the server has logged so far.
    var requests: Int { server.log.split(separator: "\n").filter { $0.contains("\"method\":") }.count }

    /// A synced file whose content was then evicted (reading it needs the server), and a file
    /// that awaits upload.
    func syncedAndPending() throws {
        XCTAssertEqual(try login(server.url).status, 0)
        try h.ok(["put", try h.localFile("a.bin", Data(repeating: 1, count: 200_000)), "/a.bin"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/a.bin"] + h.pw)
        try h.ok(["put", try h.localFile("b.bin", Data(repeating: 2, count: 1000)), "/b.bin"] + h.pw)
    }

    func testPlainHTTPOnlyToThisMachine() throws {
        let port = server.port
        for url in ["http://192.0.2.1:8443", "http://127.1:\(port)", "http://0177.0.0.1:\(port)", "http://2130706433:\(port)",
                    "http://127.0.0.1.nip.io:\(port)", "http://localhost.example:\(port)", "http://[::ffff:127.0.0.1]:\(port)",
                    "http://0.0.0.0:\(port)", "HTTP://192.0.2.1"] {
            let r = try login(url)
            XCTAssertEqual(r.status, 9, "\(url) must be refused: \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("plain http://"), r.stderr)
            // Names are sealed: what would cross in the clear is the server password and the token.
            XCTAssertTrue(r.stderr.contains("the server password and the bearer token would cross the network unencrypted"), r.stderr)
            XCTAssertFalse(r.stderr.contains("file names"), r.stderr)
        }
        for url in ["http://alice@127.0.0.1:\(port)", "http://127.0.0.1:\(port)/?x=1", "http://127.0.0.1:\(port)#f",
                    "http://127.0.0.1:\(port)\\@example.com", "http://127.0.0.1:0", "http://127.0.0.1:+80", "ftp://127.0.0.1", "http://"] {
            XCTAssertEqual(try login(url).status, 2, "\(url) is not an address")
        }
        XCTAssertEqual(requests, 0, "nothing reached the server")
        XCTAssertEqual(try login("http://localhost:\(port)").status, 0)
        XCTAssertEqual(try login("http://127.0.0.1:\(port)/").status, 0)

        // An address edited in the database after login is checked by every network command.
        try h.ok(["put", try h.localFile("p.bin", Data(repeating: 3, count: 1000)), "/p.bin"] + h.pw)
        let edited = ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_SERVER_URL": "http://192.0.2.1:8443"]
        for args in [["sync"], ["transfers", "resume"], ["sync", "--pinned-only"]] {
            let r = try h.runBounded(args + h.pw, env: edited)
            XCTAssertEqual(r.result.status, 9, "\(args): \(r.result.stderr)")
            XCTAssertTrue(r.result.stderr.contains("plain http://"), r.result.stderr)
        }
    }

    /// `--insecure-http` lets plain http:// reach another machine, warns at every use, bypasses
    /// proxies, and is refused (and reported by `policy check`) when the policy forbids it.
    func testInsecureHTTPIsExplicitLoudAndPolicyControlled() throws {
        let url = "http://0.0.0.0:\(server.port)"   // not loopback by the rule; Linux delivers it locally
        let r = try login(url, ["--insecure-http"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("INSECURE"), r.stderr)
        XCTAssertTrue(r.stderr.contains("the server password and the bearer token cross the network unencrypted"), r.stderr)
        XCTAssertFalse(r.stderr.contains("file names"), r.stderr)
        try h.ok(["put", try h.localFile("i.bin", Data(repeating: 4, count: 1000)), "/i.bin"] + h.pw)
        // A proxy that does not exist: clear text never goes through a proxy.
        let sync = try h.run(["sync"] + h.pw, env: ["http_proxy": "http://127.0.0.1:9", "all_proxy": "http://127.0.0.1:9"])
        XCTAssertEqual(sync.status, 0, sync.stderr)
        XCTAssertTrue(sync.stderr.contains("INSECURE"), "every use warns: \(sync.stderr)")
        XCTAssertNotNil(try server.children()["i.bin"])

        try writePolicy(#"{"allowInsecureHTTP": false}"#)
        let before = requests
        let refused = try h.run(["sync"] + h.pw)
        XCTAssertEqual(refused.status, 11, refused.stderr)
        let check = try h.run(["policy", "check"] + h.pw)
        XCTAssertEqual(check.status, 11, check.out + check.stderr)
        XCTAssertTrue(check.out.contains("FAIL server transport"), check.out)
        XCTAssertTrue(check.out.contains("fix: vault login --server https://0.0.0.0:\(server.port) --user \(server.user)"), check.out)
        XCTAssertEqual(try login(url, ["--insecure-http"]).status, 11)
        XCTAssertEqual(requests, before, "nothing reached the server")
    }

    /// A policy installed after login that forbids the server: every network command refuses
    /// before any request, and `policy check` says what to do.
    func testAllowedServersIsCheckedByEveryNetworkCommand() throws {
        try syncedAndPending()
        try writePolicy(#"{"allowedServers": ["https://drive.example.com"]}"#)
        let before = requests
        let out = h.root.appendingPathComponent("out.bin").path
        for args in [["sync"], ["sync", "--pinned-only"], ["transfers", "resume"], ["cat", "/a.bin"], ["get", "/a.bin", out],
                     ["pin", "/a.bin", "--wait"], ["pin", "/a.bin"]] {
            let r = try h.run(args + h.pw)
            XCTAssertEqual(r.status, 11, "\(args) must be refused: \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("does not allow syncing with \(server.url)"), "\(args): \(r.stderr)")
        }
        XCTAssertEqual(try h.run(["transfers"] + h.pw).status, 0, "the local list needs no server")
        let check = try h.run(["policy", "check"] + h.pw)
        XCTAssertEqual(check.status, 11)
        XCTAssertTrue(check.out.contains("FAIL server: this vault is logged in to \(server.url), which the policy does not allow"), check.out)
        XCTAssertTrue(check.out.contains("fix: vault login --server https://drive.example.com --user \(server.user)"), check.out)
        let json = try XCTUnwrap(try h.run(["policy", "check", "--json"] + h.pw).json as? [String: Any])
        XCTAssertEqual(json["compliant"] as? Bool, false)
        XCTAssertEqual(requests, before, "a request reached the forbidden server:\n\(server.log)")
        XCTAssertNil(try server.children()["b.bin"], "the pending upload was sent")

        try writePolicy(#"{"allowedServers": ["\#(server.url)"]}"#)
        try h.ok(["sync"] + h.pw)
        XCTAssertEqual(try h.ok(["cat", "/a.bin"] + h.pw).stdout, Data(repeating: 1, count: 200_000))
        XCTAssertEqual(try h.run(["policy", "check"] + h.pw).status, 0)
    }

    /// With the server unreachable, reading content that is not on this device fails at once
    /// with exit 10 ("not downloaded"), without retries: a closed port and an unknown host. A
    /// sync still retries and then says clearly what waits.
    func testReadsOfContentNotHereFailAtOnceWhenTheServerIsUnreachable() throws {
        try syncedAndPending()
        for (what, env) in [("a closed port", [String: String]()),
                            ("an unknown host", ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_SERVER_URL": "https://vault-test.invalid"])] {
            if what == "a closed port" { server = nil }   // stops it: nothing listens on its port now
            // The default retries (8 attempts, about 30 s in all), which a read must not wait for.
            let defaults = env.merging(["VAULT_RETRY_BASE_MS": "500", "VAULT_RETRY_CAP_MS": "30000", "VAULT_RETRY_MAX": "8"]) { $1 }
            for args in [["cat", "/a.bin"], ["get", "/a.bin", h.root.appendingPathComponent("got").path]] {
                let r = try h.runBounded(args + h.pw, env: defaults)
                XCTAssertFalse(r.timedOut, "\(what): \(args) kept trying")
                XCTAssertEqual(r.result.status, 10, "\(what): \(args): \(r.result.stderr)")
                XCTAssertTrue(r.result.stderr.contains("is not downloaded, and the server cannot be reached"), r.result.stderr)
                XCTAssertFalse(r.result.stderr.contains("retrying"), "\(what): no retries for a read: \(r.result.stderr)")
            }
            XCTAssertEqual(try node("/a.bin")["contentState"] as? String, "NOT_DOWNLOADED")
        }
        let sync = try h.run(["sync"] + h.pw, env: ["VAULT_RETRY_MAX": "2"])
        XCTAssertNotEqual(sync.status, 0)
        XCTAssertTrue(sync.stderr.contains("retrying") && sync.stderr.contains("Couldn't connect"), "a sync backs off: \(sync.stderr)")
        XCTAssertTrue(sync.stderr.contains("run `vault sync`"), sync.stderr)
    }

    func node(_ path: String) throws -> [String: Any] { try h.node(path) }
}
