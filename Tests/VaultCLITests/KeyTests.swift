import Foundation
import VaultTestSupport
import XCTest

/// Keyslots, password change, recovery and escrow keys, and master-key rotation, through the binary.
final class KeyTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
    }

    func v(_ args: String...) throws -> CLIHarness.Result { try h.ok(args + h.pw) }

    /// Puts `n` files with distinct random content; returns (vault path, bytes).
    func putFiles(_ n: Int, size: Int = 150_000) throws -> [(String, Data)] {
        var files: [(String, Data)] = []
        for i in 0..<n {
            let d = TestData.data(size + i, for: self.name)
            try h.ok(["put", try h.localFile("f\(i)", d), "/f\(i)"] + h.pw)
            files.append(("/f\(i)", d))
        }
        return files
    }

    func assertContent(_ files: [(String, Data)], password: [String]? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        for (p, d) in files {
            let r = try h.run(["cat", p] + (password ?? h.pw))
            XCTAssertEqual(r.status, 0, "cat \(p): \(r.stderr)", file: file, line: line)
            XCTAssertEqual(r.stdout, d, "content of \(p)", file: file, line: line)
        }
        let doc = try h.run(["doctor", "--verify"] + (password ?? h.pw))
        XCTAssertEqual(doc.status, 0, doc.out + doc.stderr, file: file, line: line)
    }

    func slots() throws -> [[String: Any]] { try XCTUnwrap(try v("key", "list", "--json").json as? [[String: Any]]) }

    /// `key passwd` keeps the slot's KDF and its costs (a new salt) unless asked otherwise; below
    /// the policy's floor it is recalibrated, still with the slot's algorithm.
    func testPasswdKeepsTheSlotsKDFUnlessAsked() throws {
        let p = try CLIHarness(keyring: false)
        try p.ok(["init", "--kdf", "pbkdf2", "--pbkdf2-iterations", "3000"] + p.pw)
        var current = p.pw
        func slotKDF() throws -> String {
            let all = try XCTUnwrap(try p.ok(["key", "list", "--json"] + current).json as? [[String: Any]])
            return try XCTUnwrap(all.first { $0["type"] as? String == "password" }?["kdf"] as? String)
        }
        let saltBefore = try String(contentsOf: p.home.appendingPathComponent("keyslots"), encoding: .utf8)
        let second = try p.localFile("second", Data("second password\n".utf8))
        let r = try p.ok(["key", "passwd", "--new-password-file", second] + p.pw)
        current = ["--password-file", second]
        XCTAssertEqual(try slotKDF(), "pbkdf2-sha512 3000 iterations", r.out)
        XCTAssertTrue(r.out.contains("pbkdf2-sha512, 3000 iterations"), r.out)
        XCTAssertNotEqual(try String(contentsOf: p.home.appendingPathComponent("keyslots"), encoding: .utf8), saltBefore)
        let third = try p.localFile("third", Data("third password\n".utf8))
        try p.ok(["key", "passwd", "--password-file", second, "--new-password-file", third, "--kdf", "argon2id", "--kdf-ops", "1", "--kdf-mem", "8M"])
        current = ["--password-file", third]
        let asked = try slotKDF()
        XCTAssertTrue(asked.hasPrefix("argon2id ops 1"), "asked for: \(asked)")

        // Below a floor the policy set later: recalibrated, same algorithm.
        let q = try CLIHarness(keyring: false)
        try q.ok(["init", "--kdf", "pbkdf2", "--pbkdf2-iterations", "3000"] + q.pw)
        try q.usePolicy(#"{"kdfMinPBKDF2Iterations": 5000}"#)
        try q.ok(["key", "passwd", "--new-password-file", try q.localFile("new", Data("new password 1\n".utf8))] + q.pw)
        let kdf = try XCTUnwrap((try q.ok(["key", "list", "--json", "--password-file", q.root.appendingPathComponent("new").path]).json as? [[String: Any]])?.first?["kdf"] as? String)
        XCTAssertTrue(kdf.hasPrefix("pbkdf2-sha512"), kdf)
        XCTAssertGreaterThanOrEqual(Int(kdf.split(separator: " ")[1]) ?? 0, 5000, kdf)
    }

    func testRecoveryKeyUnlocksAndTyposAreCaught() throws {
        let r = try XCTUnwrap(try v("key", "add-recovery", "--json").json as? [String: String])
        let key = try XCTUnwrap(r["recoveryKey"])
        XCTAssertEqual(key.count, 65)
        XCTAssertEqual(try slots().map { $0["type"] as? String }, ["password", "recovery"])
        let kf = try h.localFile("rk", Data(key.lowercased().replacingOccurrences(of: "-", with: " ").utf8))
        try h.ok(["unlock", "--recovery-key-file", kf])
        var typo = Array(key)
        typo[7] = typo[7] == "A" ? "B" : "A"
        let bad = try h.localFile("rk-bad", Data(String(typo).utf8))
        let u = try h.run(["unlock", "--recovery-key-file", bad])
        XCTAssertEqual(u.status, 3)
        XCTAssertTrue(u.stderr.contains("checksum") || u.stderr.contains("wrong recovery key"), u.stderr)
        let other = try h.localFile("rk-other", Data("AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA".utf8))
        XCTAssertEqual(try h.run(["unlock", "--recovery-key-file", other]).status, 3)
    }

    func testEscrowAndAdministratorRecovery() throws {
        let org = h.root.appendingPathComponent("org").path
        try h.ok(["admin", "keygen", "--out", org])
        try v("key", "add-escrow", "--org-key", org + "/org-escrow.pub")
        XCTAssertEqual(try h.run(["key", "add-escrow", "--org-key", org + "/org-escrow.pub"] + h.pw).status, 5)
        let files = try putFiles(2, size: 1000)
        // The user forgot the password; the administrator recovers with the organisation key.
        let newPw = try h.localFile("newpw", Data("brand new password\n".utf8))
        let wrongOrg = h.root.appendingPathComponent("org2").path
        try h.ok(["admin", "keygen", "--out", wrongOrg])
        XCTAssertEqual(try h.run(["admin", "recover", "--org-key", wrongOrg + "/org-escrow.key", "--new-password-file", newPw,
                                  "--kdf-ops", "1", "--kdf-mem", "8M"]).status, 3)
        try h.ok(["admin", "recover", "--org-key", org + "/org-escrow.key", "--new-password-file", newPw, "--kdf-ops", "1", "--kdf-mem", "8M"])
        XCTAssertEqual(try h.run(["ls"] + h.pw).status, 3, "the old password is replaced")
        try assertContent(files, password: ["--password-file", newPw])
    }

    func testRemovingTheLastUnlockableSlotIsRefused() throws {
        let r = try h.run(["key", "remove", "password-1"] + h.pw)
        XCTAssertEqual(r.status, 5)
        XCTAssertTrue(r.stderr.contains("lock you out"), r.stderr)
        XCTAssertEqual(try h.run(["key", "remove", "nope"] + h.pw).status, 4)
        _ = try v("key", "add-recovery")
        let recovery = try XCTUnwrap(try slots().first { $0["type"] as? String == "recovery" }?["id"] as? String)
        XCTAssertTrue(recovery.hasPrefix("recovery-") && recovery.count == "recovery-".count + 6, recovery)   // a random id
        try v("key", "remove", recovery)
        XCTAssertEqual(try slots().count, 1)
    }

    func testPasswdRewrapsOnlyTheSlot() throws {
        let files = try putFiles(2, size: 70_000)
        let blobsBefore = try h.blobFiles("staging").map { try Data(contentsOf: $0) }
        let newPw = try h.localFile("newpw", Data("another good password\n".utf8))
        let bad = try h.localFile("bad", Data("not it at all\n".utf8))
        XCTAssertEqual(try h.run(["key", "passwd", "--password-file", bad, "--new-password-file", newPw, "--kdf-ops", "1", "--kdf-mem", "8M"]).status, 3)
        try v("key", "passwd", "--new-password-file", newPw, "--kdf-ops", "1", "--kdf-mem", "8M")
        XCTAssertEqual(Set(try h.blobFiles("staging").map { try Data(contentsOf: $0) }), Set(blobsBefore), "content untouched")
        XCTAssertEqual(try h.run(["ls"] + h.pw).status, 3)
        try assertContent(files, password: ["--password-file", newPw])
    }

    func testRotateChangesEveryKeyAndKeepsEveryByte() throws {
        let files = try putFiles(4)
        let rk = try XCTUnwrap((try v("key", "add-recovery", "--json").json as? [String: String])?["recoveryKey"])
        let oldDbKey = try DocumentedKeys.databaseKeyHex(vaultHome: h.home.path, password: CLIHarness.password)
        let headersBefore = try h.blobFiles("staging").map { try Data(contentsOf: $0).prefix(112) }
        let r = try XCTUnwrap(try v("key", "rotate", "--json").json as? [String: Any])
        XCTAssertEqual(r["epoch"] as? Int, 2)
        XCTAssertEqual(r["rewrappedBlobs"] as? Int, 4)
        let headersAfter = try h.blobFiles("staging").map { try Data(contentsOf: $0).prefix(112) }
        XCTAssertTrue(Set(headersBefore).isDisjoint(with: Set(headersAfter)), "every data key rewrapped")
        XCTAssertNotEqual(try DocumentedKeys.databaseKeyHex(vaultHome: h.home.path, password: CLIHarness.password), oldDbKey)
        try assertContent(files)
        // The old recovery key no longer opens the vault; the new one does.
        let oldRk = try h.localFile("oldrk", Data(rk.utf8))
        XCTAssertEqual(try h.run(["unlock", "--recovery-key-file", oldRk]).status, 3)
        let newRk = try XCTUnwrap((r["recoveryKeys"] as? [[String: String]])?.first?["recoveryKey"])
        try h.ok(["unlock", "--recovery-key-file", try h.localFile("newrk", Data(newRk.utf8))])
        XCTAssertFalse(FileManager.default.fileExists(atPath: h.home.appendingPathComponent("rotation.journal").path))
    }

    /// `kill -9` at every step of a rotation: the vault opens afterwards (finishing the rotation)
    /// and every byte is there.
    func testRotationSurvivesKillAtEveryStep() throws {
        for point in ["rotate-recorded", "rotate-journaled", "rotate-some-headers", "rotate-headers-done",
                      "rotate-db-rekeyed", "rotate-keyslots-written"] {
            h = try CLIHarness(keyring: false)
            try h.initVault()
            let files = try putFiles(5, size: 80_000)
            let killed = try h.run(["key", "rotate"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": point])
            XCTAssertEqual(killed.status, 9, "\(point): expected SIGKILL, got \(killed.status): \(killed.stderr)")
            try assertContent(files)
            let list = try XCTUnwrap(try h.ok(["key", "list"] + h.pw).out)
            XCTAssertTrue(list.contains("epoch 2"), "\(point): rotation finished on the next open: \(list)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: h.home.appendingPathComponent("rotation.journal").path), point)
        }
    }

    /// A header torn by a crash mid-write is restored from the rotation journal.
    func testTornHeaderIsRestoredFromJournal() throws {
        let files = try putFiles(3, size: 10_000)
        let killed = try h.run(["key", "rotate"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": "rotate-journaled"])
        XCTAssertEqual(killed.status, 9)
        let blob = try XCTUnwrap(try h.blobFiles("staging").first)
        var d = try Data(contentsOf: blob)
        for i in 60..<100 { d[i] = 0xEE }   // half-written wrapped key
        try d.write(to: blob)
        try assertContent(files)
    }

    /// Kills at random moments of many rotations in a row; the vault always opens with every byte.
    func testRotationKilledAtRandomPoints() throws {
        let files = try putFiles(40, size: 20_000)
        // Seeded (VAULT_TEST_SEED reproduces a run), and the seed is printed and in every failure.
        let seed = TestSeed.make(self.name)
        var rng = SeededGenerator(seed: seed)
        for round in 0..<8 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CLIHarness.vaultBinary)
            p.arguments = ["key", "rotate"] + h.pw
            p.environment = h.env
            p.standardOutput = FileHandle.nullDevice; p.standardError = FileHandle.nullDevice
            try p.run()
            // A random moment is the point here: no event to wait for (the kill lands anywhere in the rotation).
            usleep(UInt32.random(in: 5_000...120_000, using: &rng))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let r = try h.run(["ls"] + h.pw)
            XCTAssertEqual(r.status, 0, "seed \(seed) round \(round): \(r.stderr)")
        }
        try assertContent(files)
    }

    func testRotateWithKeyringKeepsTheSessionUsable() throws {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a Secret Service")
        h = try CLIHarness(keyring: true)
        try h.initVault()
        let files = try putFiles(2, size: 1000)
        try h.ok(["unlock"] + h.pw)
        try h.ok(["key", "rotate"] + h.pw)
        for (p, d) in files { XCTAssertEqual(try h.ok(["cat", p]).stdout, d) }   // no password: the session holds the new key
    }

    func testReencryptGivesNewDataKeysAndResumesAfterKill() throws {
        let files = try putFiles(5, size: 70_000)
        try h.ok(["put", try h.localFile("v2", Data("second version".utf8)), "/f0", "--replace"] + h.pw)
        let before = Set(try h.blobFiles("staging").map(\.lastPathComponent))
        XCTAssertEqual(before.count, 6)
        let killed = try h.run(["key", "reencrypt"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": "reencrypt-some"])
        XCTAssertEqual(killed.status, 9)
        let r = try XCTUnwrap(try v("key", "reencrypt", "--json").json as? [String: Int])
        XCTAssertEqual(r["reencrypted"], 4, "resumes with the blobs not yet done")
        let after = Set(try h.blobFiles("staging").map(\.lastPathComponent))
        XCTAssertEqual(after.count, 6)
        XCTAssertTrue(before.isDisjoint(with: after), "every blob re-sealed under a new id and data key")
        XCTAssertEqual(try v("cat", "/f0").out, "second version")
        try assertContent(Array(files.dropFirst()))
    }

    func testCalibrate() throws {
        let r = try XCTUnwrap(try h.ok(["key", "calibrate", "--kdf-time", "0.1", "--json"]).json as? [String: Any])
        XCTAssertNotNil(r["seconds"] as? Double)
        XCTAssertEqual(r["applied"] as? Bool, false)
        try h.ok(["key", "calibrate", "--kdf", "pbkdf2", "--kdf-time", "0.1", "--apply"] + h.pw)
        XCTAssertTrue(try h.ok(["key", "list"] + h.pw).out.contains("pbkdf2-sha512"))
    }
}
