import Foundation
import VaultTestSupport
import XCTest
@testable import VaultServer

/// What an operator and a load balancer use (issue 22): `/healthz` and `/readyz`, request ids in
/// the request log, the client address behind a trusted proxy. Against the real process.
final class OperationsTests: XCTestCase {
    func testHealthzAndReadyzAnswerWithoutATokenAndNameWhatIsWrong() throws {
        let s = try ServerProcess(args: ["--instance", "ops-a"])
        let alive = try s.client.send("GET", "/healthz")
        XCTAssertEqual(alive.status, 200, alive.text)
        XCTAssertEqual(alive.json["status"] as? String, "alive")
        XCTAssertEqual(alive.json["instance"] as? String, "ops-a")
        let ready = try s.client.send("GET", "/readyz")
        XCTAssertEqual(ready.status, 200, ready.text)
        XCTAssertEqual(ready.json["status"] as? String, "ready")

        // The content store cannot be written: the instance's temp folder is now a file.
        let tmp = s.dataDir + "/d/tmp/ops-a"
        try FileManager.default.removeItem(atPath: tmp)
        FileManager.default.createFile(atPath: tmp, contents: Data())
        let noDisk = try s.client.send("GET", "/readyz")
        XCTAssertEqual(noDisk.status, 503, noDisk.text)
        XCTAssertEqual(noDisk.errorCode, "not_ready")
        XCTAssertTrue(noDisk.text.contains("content store"), noDisk.text)
        XCTAssertFalse(noDisk.text.contains(s.dataDir), "no path of the data folder: \(noDisk.text)")
        XCTAssertNotNil(noDisk.header("Retry-After"))
        XCTAssertEqual(try s.client.send("GET", "/healthz").status, 200, "still alive")
        try FileManager.default.removeItem(atPath: tmp)
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        XCTAssertEqual(try s.client.send("GET", "/readyz").status, 200)

        // The metadata store is at a schema this server does not write (a newer server migrated it).
        let db = try s.metadataConnection()
        let version = try db.schemaVersion
        try db.setSchemaVersion(99)
        let newer = try s.client.send("GET", "/readyz")
        XCTAssertEqual(newer.status, 503, newer.text)
        XCTAssertTrue(newer.text.contains("schema version 99"), newer.text)
        XCTAssertTrue(newer.text.contains("vault-server migrate"), newer.text)
        try db.setSchemaVersion(version)
        XCTAssertEqual(try s.client.send("GET", "/readyz").status, 200)
    }

    func testRequestIdsAreKeptOrMadeAndLoggedWithInstanceAndRoute() throws {
        let s = try ServerProcess(args: ["--instance", "ops-b"])
        let u = try APIUser(s, "alice")
        let missing = "0123456789abcdef0123456789abcdef"
        let given = try u.send("GET", "/v1/files/\(missing)", headers: ["X-Request-Id": "lb-7f3a:1"])
        XCTAssertEqual(given.status, 404)
        XCTAssertEqual(given.header("X-Request-Id"), "lb-7f3a:1", "the balancer's id is kept")
        let made = try u.send("GET", "/v1/changes/start")
        let madeId = try XCTUnwrap(made.header("X-Request-Id"))
        XCTAssertTrue(madeId.count == 32 && madeId.allSatisfy(\.isHexDigit), madeId)
        let odd = try u.send("GET", "/v1/changes/start", headers: ["X-Request-Id": "two words"])
        XCTAssertNotEqual(odd.header("X-Request-Id"), "two words", "an id that could break a log line is replaced")
        XCTAssertEqual(odd.header("X-Request-Id")?.count, 32)

        var line: [String: Any]?
        try waitUntil("the request's log line") {
            line = s.log.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }.first { $0["requestId"] as? String == "lb-7f3a:1" }
            return line != nil
        }
        XCTAssertEqual(line?["instance"] as? String, "ops-b")
        XCTAssertEqual(line?["route"] as? String, "/v1/files/{id}")
        XCTAssertEqual(line?["method"] as? String, "GET")
        XCTAssertEqual(line?["status"] as? Int, 404)
        try waitUntil("the made id's log line") { s.log.contains(madeId) }
        XCTAssertFalse(s.log.contains(u.token), "no token in the log")
        XCTAssertFalse(s.log.contains("pw-alice"), "no password in the log")
    }

    /// Behind a balancer every connection comes from the balancer: with `--trusted-proxy` the
    /// login backoff counts the address the balancer appended to `X-Forwarded-For`; from any
    /// other peer the header is the client's word and is ignored.
    func testLoginBackoffCountsTheForwardedClientOfATrustedProxyOnly() throws {
        let s = try ServerProcess(args: ["--trusted-proxy", "127.0.0.1", "--login-ip-failures", "2",
                                         "--login-user-failures", "100", "--login-base-delay", "60"])
        func login(forwardedFor: String, from peer: String) throws -> Int {
            try s.client.send("POST", "/v1/auth/token", headers: ["X-Forwarded-For": forwardedFor],
                              body: Array(#"{"username":"alice","password":"guess"}"#.utf8), from: peer).status
        }
        for _ in 0..<2 { XCTAssertEqual(try login(forwardedFor: "203.0.113.9, 10.0.0.1", from: "127.0.0.1"), 401) }
        XCTAssertEqual(try login(forwardedFor: "10.0.0.1", from: "127.0.0.1"), 429, "10.0.0.1 is held back")
        XCTAssertEqual(try login(forwardedFor: "10.0.0.1, 10.0.0.2", from: "127.0.0.1"), 401, "another client behind the balancer is not")
        for _ in 0..<2 { XCTAssertEqual(try login(forwardedFor: "10.0.0.3", from: "127.0.0.9"), 401) }
        XCTAssertEqual(try login(forwardedFor: "10.0.0.4", from: "127.0.0.9"), 429, "an untrusted peer is counted as itself")
    }

    func testForwardedAddressesAndRequestIdsAsParsed() {
        let lb: Set<String> = ["10.0.0.10"]
        XCTAssertEqual(ClientAddress.resolve(peer: "10.0.0.10", forwardedFor: "1.2.3.4, 198.51.100.7", trusted: lb), "198.51.100.7")
        XCTAssertEqual(ClientAddress.resolve(peer: "10.0.0.11", forwardedFor: "198.51.100.7", trusted: lb), "10.0.0.11", "not a trusted peer")
        XCTAssertEqual(ClientAddress.resolve(peer: "10.0.0.10", forwardedFor: nil, trusted: lb), "10.0.0.10")
        XCTAssertEqual(ClientAddress.resolve(peer: "10.0.0.10", forwardedFor: "1.2.3.4, unknown", trusted: lb), "10.0.0.10", "not an address")
        for bad in ["256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4.5", "1..3.4", "١.2.3.4", ""] { XCTAssertFalse(ClientAddress.isIPv4(bad), bad) }
        XCTAssertTrue(ClientAddress.isIPv4("0.0.0.0"))
        XCTAssertEqual(RequestId.choose(incoming: "7F000001:8296_1F90", random: { "new" }), "7F000001:8296_1F90")
        for bad in ["", "a b", "x\u{1}", String(repeating: "a", count: 129), "é"] {
            XCTAssertEqual(RequestId.choose(incoming: bad, random: { "new" }), "new", bad)
        }
    }
}
