import Foundation
import XCTest

/// `--json` results (docs/json.md): one document per command, with one type per field, the
/// booleans booleans and the numbers numbers; errors as the error object.
final class JSONResultTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
    }

    func json(_ args: [String], status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let r = try h.run(args)
        XCTAssertEqual(r.status, status, "vault \(args): \(r.stderr)", file: file, line: line)
        return try XCTUnwrap(r.json as? [String: Any], "not one JSON object: \(r.out)", file: file, line: line)
    }

    func testEveryResultHasTypedFields() throws {
        let initResult = try json(["init", "--kdf-ops", "1", "--kdf-mem", "8M", "--json"] + h.pw)
        XCTAssertEqual(initResult["ok"] as? Bool, true, "ok is a boolean, not \"true\"")
        XCTAssertEqual(initResult["kdf"] as? String, "argon2id")
        XCTAssertNotNil(initResult["vaultId"] as? String)

        let f = try h.localFile("a.txt", Data("hello".utf8))
        let node = try json(["put", f, "/a.txt", "--json"] + h.pw)
        XCTAssertEqual(node["size"] as? Int, 5)
        XCTAssertEqual(node["pinned"] as? Bool, false)
        XCTAssertEqual(node["path"] as? String, "/a.txt")

        let out = h.root.appendingPathComponent("out.txt").path
        let got = try json(["get", "/a.txt", out, "--json"] + h.pw)
        XCTAssertEqual(got["ok"] as? Bool, true, "ok is a boolean, not \"true\"")
        XCTAssertEqual(got["size"] as? Int, 5)
        XCTAssertEqual(got["path"] as? String, out)

        let pin = try json(["pin", "/a.txt", "--json"] + h.pw)
        XCTAssertEqual(pin["ok"] as? Bool, true)
        XCTAssertEqual(pin["pinned"] as? Bool, true)
        XCTAssertEqual(pin["items"] as? Int, 1)
        XCTAssertEqual(try json(["unpin", "/a.txt", "--json"] + h.pw)["pinned"] as? Bool, false)

        let rm = try json(["rm", "/a.txt", "--json"] + h.pw)
        XCTAssertEqual(rm["removed"] as? Int, 1)
        XCTAssertEqual(rm["ok"] as? Bool, true)

        let lock = try json(["lock", "--json"])
        XCTAssertEqual(lock["ok"] as? Bool, true)
        XCTAssertEqual(lock["removed"] as? Bool, false, "no keyring: nothing was held")

        XCTAssertEqual(try json(["version", "--json"])["version"] as? String, "0.1.0")

        let org = h.root.appendingPathComponent("org").path
        let keys = try json(["admin", "keygen", "--out", org, "--json"])
        XCTAssertEqual((keys["files"] as? [String])?.count, 4)
        let policy = h.root.appendingPathComponent("p.json")
        try Data("{}".utf8).write(to: policy)
        let signed = try json(["admin", "sign-policy", policy.path, "--signing-key", org + "/org-signing.key", "--json"])
        XCTAssertEqual(signed["signature"] as? String, policy.path + ".sig")
    }

    /// The sync settings and the conflict list of two-way sync (no server needed): typed results,
    /// and the usage errors of their values and of `sync --watch --json` as the error object.
    func testSyncSettingsAndConflictsResults() throws {
        try h.initVault()
        let list = try json(["config", "--json"] + h.pw)
        XCTAssertEqual(list["conflicts"] as? String, "keep-both")
        XCTAssertNotNil(list["device-name"] as? String, "the host name by default")
        let set = try json(["config", "set", "device-name", "laptop", "--json"] + h.pw)
        XCTAssertEqual(set["ok"] as? Bool, true)
        XCTAssertEqual(set["key"] as? String, "device-name")
        XCTAssertEqual(set["value"] as? String, "laptop")
        XCTAssertEqual(try json(["config", "get", "device-name", "--json"] + h.pw).keys.sorted(), ["device-name"], "get: only the one asked")
        XCTAssertEqual(try json(["config", "unset", "device-name", "--json"] + h.pw)["value"] as? String, list["device-name"] as? String)
        let bad = try json(["config", "set", "conflicts", "newest", "--json"] + h.pw, status: 2)
        XCTAssertEqual((bad["error"] as? [String: Any])?["message"] as? String, "conflicts takes keep-both or last-writer-wins")

        let r = try h.run(["conflicts", "--json"] + h.pw)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual((r.json as? [Any])?.count, 0, "an empty array: \(r.out)")
        let cleared = try json(["conflicts", "--clear", "--json"] + h.pw)
        XCTAssertEqual(cleared["ok"] as? Bool, true)
        XCTAssertEqual(cleared["cleared"] as? Int, 0)
        XCTAssertEqual(try json(["status", "--json"] + h.pw)["conflicts"] as? Int, 0, "status counts them (a number)")

        let watch = try json(["sync", "--watch", "--json"] + h.pw, status: 2)
        XCTAssertEqual((watch["error"] as? [String: Any])?["kind"] as? String, "usage")
    }

    /// A usage error with --json is the error object (exit 2); a failing command's result is one
    /// document, never a result followed by an error object.
    func testErrorsAreOneDocument() throws {
        let usage = try json(["ls", "--bogus", "--json"], status: 2)
        let e = try XCTUnwrap(usage["error"] as? [String: Any])
        XCTAssertEqual(e["kind"] as? String, "usage")
        XCTAssertEqual(e["exitCode"] as? Int, 2)
        XCTAssertEqual(e["message"] as? String, "unknown option '--bogus'")
        let missing = try json(["ls", "/nowhere", "--json"] + h.pw, status: 4)
        XCTAssertEqual((missing["error"] as? [String: Any])?["kind"] as? String, "notInitialized")

        try h.initVault()
        try h.ok(["put", try h.localFile("b", Data("b".utf8)), "/b"] + h.pw)
        for blob in try h.blobFiles("staging") { try FileManager.default.removeItem(at: blob) }
        let doctor = try json(["doctor", "--json"] + h.pw, status: 6)
        XCTAssertEqual((doctor["problems"] as? [String])?.isEmpty, false)
        XCTAssertNil(doctor["error"], "the report alone")
    }
}
