import Foundation
import XCTest

/// Enterprise policy: signature (fail closed), KDF floor, escrow, failed-unlock wipe, export,
/// timeouts, keyring rule, budget, and the stricter-of rule, through the real binary.
final class PolicyTests: XCTestCase {
    var h: CLIHarness!
    var policyFile: URL!
    var org: String!

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        policyFile = h.root.appendingPathComponent("policy.json")
        h.env["VAULT_POLICY_FILE"] = policyFile.path
        h.env["VAULT_POLICY_KEY_FILE"] = h.root.appendingPathComponent("no-signing-key.pub").path
        org = h.root.appendingPathComponent("org").path
    }

    func writePolicy(_ json: String, sign: Bool = false) throws {
        try Data(json.utf8).write(to: policyFile)
        if sign {
            if !FileManager.default.fileExists(atPath: org) { try h.ok(["admin", "keygen", "--out", org]) }
            try h.ok(["admin", "sign-policy", policyFile.path, "--signing-key", org + "/org-signing.key"])
            h.env["VAULT_POLICY_KEY_FILE"] = org + "/org-signing.pub"
        }
    }

    func expectPolicyError(_ args: [String], containing: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try h.run(args)
        XCTAssertEqual(r.status, 11, "\(args): \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.contains(containing), "expected '\(containing)' in \(r.stderr)", file: file, line: line)
    }

    func testSignedPolicyFailsClosedWhenAlteredUnsignedOrMissing() throws {
        try writePolicy(#"{"idleTimeoutMax": 600}"#, sign: true)
        try h.initVault()
        let show = try XCTUnwrap(try h.ok(["policy", "show", "--json"]).json as? [String: Any])
        XCTAssertEqual(show["signed"] as? Bool, true)
        XCTAssertEqual((show["idleTimeoutMax"] as? [String: Any])?["source"] as? String, "system")
        // Altered by one byte.
        try Data(#"{"idleTimeoutMax": 6000}"#.utf8).write(to: policyFile)
        try expectPolicyError(["ls"] + h.pw, containing: "does not match its signature")
        try expectPolicyError(["policy", "show"], containing: "fails closed")
        // Signature removed.
        try writePolicy(#"{"idleTimeoutMax": 600}"#)
        try FileManager.default.removeItem(atPath: policyFile.path + ".sig")
        try expectPolicyError(["ls"] + h.pw, containing: "not signed")
        // Signed by another organisation's key.
        let other = h.root.appendingPathComponent("other").path
        try h.ok(["admin", "keygen", "--out", other])
        try h.ok(["admin", "sign-policy", policyFile.path, "--signing-key", other + "/org-signing.key"])
        try expectPolicyError(["ls"] + h.pw, containing: "does not match its signature")
        // Policy missing while a signing key is configured.
        try FileManager.default.removeItem(at: policyFile)
        try expectPolicyError(["ls"] + h.pw, containing: "is missing")
        // Garbage.
        try writePolicy(#"{"keyring": "sometimes"}"#)
        h.env["VAULT_POLICY_KEY_FILE"] = h.root.appendingPathComponent("none.pub").path
        try expectPolicyError(["ls"] + h.pw, containing: "keyring must be")
    }

    /// `policy show` prints every value whole: each allowed server and pinned key on a line of its
    /// own, however long (it used to cut `allowedServers` at its column width).
    func testPolicyShowPrintsValuesWhole() throws {
        let servers = ["https://drive.example.org:8443/very/long/path/to/the/vault/api",
                       "https://backup-drive.example.com", "https://third.example.net:9443"]
        let pin = "sha256//" + String(repeating: "A", count: 43) + "="
        try writePolicy(#"{"allowedServers": ["\#(servers.joined(separator: #"", ""#))"], "pinnedPublicKeys": ["\#(pin)"], "contentBudgetMax": 1073741824}"#)
        let out = try h.ok(["policy", "show"]).out
        for value in servers + [pin, "1.0 GiB"] {
            XCTAssertTrue(out.split(separator: "\n").contains { $0.contains(value) }, "\(value) is not shown whole:\n\(out)")
        }
        let lines = out.split(separator: "\n").map(String.init)
        let first = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("allowedServers") })
        XCTAssertTrue(lines[first].contains(servers[0]) && lines[first].hasSuffix("system"), lines[first])
        let indent = String(repeating: " ", count: 29)   // continuation lines stand in the value column
        XCTAssertEqual(lines[first + 1], indent + servers[1])
        XCTAssertEqual(lines[first + 2], indent + servers[2])
        let json = try XCTUnwrap(try h.ok(["policy", "show", "--json"]).json as? [String: Any])
        XCTAssertEqual((json["allowedServers"] as? [String: Any])?["value"] as? [String], servers)
        XCTAssertEqual(try h.run(["policy", "show", "--password-file", h.passwordFile.path]).status, 2, "show opens no vault")
    }

    func testKDFFloorAndComplianceCheck() throws {
        try h.initVault()   // 1 pass, 8 MiB: made before the policy
        try writePolicy(#"{"kdfMinArgon2Ops": 2, "kdfMinArgon2MemoryBytes": 16777216}"#)
        let r = try h.run(["policy", "check"] + h.pw)
        XCTAssertEqual(r.status, 11)
        XCTAssertTrue(r.out.contains("FAIL kdf password-1") && r.out.contains("fix: vault key calibrate --apply"), r.out)
        let weak = try h.run(["key", "passwd", "--new-password-file", h.passwordFile.path, "--kdf-ops", "1", "--kdf-mem", "8M"] + h.pw)
        XCTAssertEqual(weak.status, 11, weak.stderr)
        try h.ok(["key", "calibrate", "--kdf-time", "0.05", "--apply"] + h.pw)
        let ok = try XCTUnwrap(try h.ok(["policy", "check", "--json"] + h.pw).json as? [String: Any])
        XCTAssertEqual(ok["compliant"] as? Bool, true)
        let h2 = try CLIHarness(keyring: false)
        h2.env = h.env; h2.env["VAULT_HOME"] = h.root.appendingPathComponent("v2").path
        let r2 = try h2.run(["init", "--kdf-ops", "1", "--kdf-mem", "8M"] + h.pw)
        XCTAssertEqual(r2.status, 11)
        XCTAssertTrue(r2.stderr.contains("below the policy floor"), r2.stderr)
    }

    func testPBKDF2Only() throws {
        try writePolicy(#"{"pbkdf2Only": true, "kdfMinPBKDF2Iterations": 5000}"#)
        XCTAssertEqual(try h.run(["init", "--kdf-ops", "1", "--kdf-mem", "8M"] + h.pw).status, 11)
        XCTAssertEqual(try h.run(["init", "--kdf", "pbkdf2", "--pbkdf2-iterations", "2000"] + h.pw).status, 11)
        try h.ok(["init", "--kdf", "pbkdf2", "--pbkdf2-iterations", "5000"] + h.pw)
        XCTAssertEqual((try h.ok(["policy", "check", "--json"] + h.pw).json as? [String: Any])?["compliant"] as? Bool, true)
    }

    func testEscrowRequired() throws {
        try h.ok(["admin", "keygen", "--out", org])
        try writePolicy(#"{"escrowRequired": true}"#)
        try expectPolicyError(["init", "--kdf-ops", "1", "--kdf-mem", "8M"] + h.pw, containing: "escrowed")
        try h.ok(["init", "--kdf-ops", "1", "--kdf-mem", "8M", "--org-key", org + "/org-escrow.pub"] + h.pw)
        XCTAssertEqual((try h.ok(["policy", "check", "--json"] + h.pw).json as? [String: Any])?["compliant"] as? Bool, true)
        let slots = try XCTUnwrap(try h.ok(["key", "list", "--json"] + h.pw).json as? [[String: Any]])
        let escrow = try XCTUnwrap(slots.first { $0["type"] as? String == "escrow" }?["id"] as? String)
        try expectPolicyError(["key", "remove", escrow] + h.pw, containing: "requires an escrow slot")
    }

    func testFailedUnlocksWipeTheLocalVault() throws {
        try writePolicy(#"{"maxFailedUnlocks": 3}"#)
        try h.initVault()
        try h.ok(["put", try h.localFile("f", Data("keep me".utf8)), "/f"] + h.pw)
        let bad = try h.localFile("bad", Data("wrong password!\n".utf8))
        var r = try h.run(["ls", "--password-file", bad])
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.stderr.contains("failed attempt 1 of 3"), r.stderr)
        try h.ok(["ls"] + h.pw)                                  // success resets the count
        XCTAssertEqual(try h.run(["ls", "--password-file", bad]).status, 3)
        XCTAssertEqual(try h.run(["unlock", "--password-file", bad]).status, 3)
        r = try h.run(["ls", "--password-file", bad])
        XCTAssertEqual(r.status, 11)
        XCTAssertTrue(r.stderr.contains("wiped"), r.stderr)
        for f in ["keyslots", "metadata.db", "staging", "cache"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: h.home.appendingPathComponent(f).path), "\(f) must be gone")
        }
        r = try h.run(["ls"] + h.pw)
        XCTAssertEqual(r.status, 4)
        XCTAssertTrue(r.stderr.contains("wiped"), r.stderr)
        try h.initVault()                                       // a fresh start works
    }

    func testResetFailureCounterIsDetected() throws {
        try writePolicy(#"{"maxFailedUnlocks": 5}"#)
        try h.initVault()
        let bad = try h.localFile("bad", Data("wrong password!\n".utf8))
        for _ in 0..<3 { XCTAssertEqual(try h.run(["ls", "--password-file", bad]).status, 3) }
        try h.ok(["ls"] + h.pw)
        for _ in 0..<2 { XCTAssertEqual(try h.run(["ls", "--password-file", bad]).status, 3) }
        try FileManager.default.removeItem(at: h.home.appendingPathComponent("unlock-failures"))
        let r = try h.ok(["ls"] + h.pw)
        XCTAssertTrue(r.stderr.contains("failed-unlock counter was reset"), r.stderr)
    }

    func testPlaintextExportForbidden() throws {
        try writePolicy(#"{"plaintextExport": false}"#)
        try h.initVault()
        try h.ok(["put", try h.localFile("f", Data("secret".utf8)), "/f"] + h.pw)
        try expectPolicyError(["get", "/f", h.root.appendingPathComponent("out").path] + h.pw, containing: "forbids")
        try expectPolicyError(["cat", "/f"] + h.pw, containing: "forbids plaintext export")   // stdout is a pipe here
        XCTAssertFalse(FileManager.default.fileExists(atPath: h.root.appendingPathComponent("out").path))
    }

    func testTimeoutsAreCappedAndStricterUserSettingsWin() throws {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a Secret Service")
        h.env.removeValue(forKey: "VAULT_NO_KEYRING")
        try writePolicy(#"{"idleTimeoutMax": 3600, "absoluteTimeoutMax": 7200}"#)
        try h.initVault()
        // The user's own settings are stricter on idle time: they win there.
        let cfg = h.home.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: cfg, withIntermediateDirectories: true)
        try Data(#"{"idleTimeoutMax": 1}"#.utf8).write(to: cfg.appendingPathComponent("settings.json"))
        let show = try XCTUnwrap(try h.ok(["policy", "show", "--json"]).json as? [String: Any])
        XCTAssertEqual((show["idleTimeoutMax"] as? [String: Any])?["source"] as? String, "user")
        XCTAssertEqual((show["absoluteTimeoutMax"] as? [String: Any])?["source"] as? String, "system")
        let t0 = Int(Date().timeIntervalSince1970)   // the vault's clock, set instead of waited for
        try h.ok(["unlock", "--idle", "0", "--absolute", "0"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_NOW": "\(t0)"])      // "never" is capped
        let r = try h.run(["ls"], env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_NOW": "\(t0 + 2)"])
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.stderr.contains("idle timeout"), r.stderr)
    }

    func testKeyringRequiredAndForbidden() throws {
        try writePolicy(#"{"keyring": "required"}"#)
        try h.initVault()
        try expectPolicyError(["ls"] + h.pw, containing: "requires a Secret Service keyring")
        try expectPolicyError(["unlock"] + h.pw, containing: "requires a Secret Service keyring")
        try XCTSkipUnless(CLIHarness.keyringAvailable, "the forbidden case needs a Secret Service to refuse")
        h.env.removeValue(forKey: "VAULT_NO_KEYRING")
        try h.ok(["unlock"] + h.pw)                          // available and required: fine
        try h.ok(["lock"])
        try writePolicy(#"{"keyring": "forbidden"}"#)
        let u = try h.ok(["unlock"] + h.pw)
        XCTAssertTrue(u.stderr.contains("policy forbids"), u.stderr)
        XCTAssertEqual(try h.run(["ls"]).status, 2, "nothing held: a password is needed again")
    }

    func testContentBudgetMax() throws {
        try writePolicy(#"{"contentBudgetMax": 1048576}"#)
        try h.initVault()
        try expectPolicyError(["storage", "--budget", "2M"] + h.pw, containing: "caps the content budget")
        let s = try XCTUnwrap(try h.ok(["storage", "--json"] + h.pw).json as? [String: Any])
        XCTAssertEqual(s["budgetBytes"] as? Int, 1_048_576)
        try h.ok(["storage", "--budget", "512K"] + h.pw)
    }
}
