import Foundation
import XCTest

/// The failed-unlock counter behind the policy's `maxFailedUnlocks` (SECURITY.md "Failed unlocks
/// and wipe"): every wrong secret counts, even when many are tried at once; a mistyped recovery
/// key (caught by its checksum before any key is tried) does not; a wipe leaves no copy of the keys.
final class FailedUnlockTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        h.env["VAULT_POLICY_KEY_FILE"] = h.root.appendingPathComponent("no-signing-key.pub").path
    }

    func usePolicy(_ json: String) throws { try h.usePolicy(json) }

    struct Counter: Decodable { var total: Int; var sinceSuccess: Int }

    func counter() throws -> Counter? {
        let url = h.home.appendingPathComponent("unlock-failures")
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(Counter.self, from: Data(contentsOf: url))
    }

    /// Wrong passwords tried at the same moment are each counted. (Before: 20 at once counted as 4,
    /// each process reading the same count and writing it back one higher.)
    func testFailedUnlocksTriedAtOnceAreAllCounted() throws {
        try usePolicy(#"{"maxFailedUnlocks": 1000}"#)
        try h.initVault()
        let bad = try h.localFile("bad", Data("wrong password!\n".utf8))
        let n = 16
        var running: [Process] = []
        for _ in 0..<n {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CLIHarness.vaultBinary)
            p.arguments = ["ls", "--password-file", bad]
            p.environment = h.env
            p.standardOutput = FileHandle.nullDevice; p.standardError = FileHandle.nullDevice
            try p.run()
            running.append(p)
        }
        for p in running { p.waitUntilExit(); XCTAssertEqual(p.terminationStatus, 3) }
        let c = try XCTUnwrap(try counter())
        XCTAssertEqual(c.total, n)
        XCTAssertEqual(c.sinceSuccess, n)
    }

    /// A recovery key that fails its own checks (a character outside the alphabet, the wrong
    /// length, the checksum) is refused before any key is tried, and is not a failed unlock: a
    /// typo cannot wipe the vault. A well-formed wrong key counts.
    func testMistypedRecoveryKeysAreNotFailedUnlocks() throws {
        try usePolicy(#"{"maxFailedUnlocks": 2}"#)
        try h.initVault()
        let key = try XCTUnwrap((try h.ok(["key", "add-recovery", "--json"] + h.pw).json as? [String: String])?["recoveryKey"])
        var typo = Array(key)
        typo[7] = typo[7] == "A" ? "B" : "A"
        for text in [String(typo), String(key.dropLast()), key.replacingOccurrences(of: "A", with: "1")] where text != key {
            let r = try h.run(["unlock", "--recovery-key-file", try h.localFile("typo", Data(text.utf8))])
            XCTAssertEqual(r.status, 3, r.stderr)
            XCTAssertFalse(r.stderr.contains("failed attempt"), r.stderr)
        }
        XCTAssertNil(try counter()?.sinceSuccess.nonZero)
        XCTAssertTrue(FileManager.default.fileExists(atPath: h.home.appendingPathComponent("keyslots").path))
        try h.ok(["unlock", "--recovery-key-file", try h.localFile("rk", Data(key.utf8))])
    }

    /// A wipe removes every copy of the keys: the keyslot file and a temp copy of it, the
    /// database with a rotation's rekeyed copy, the rotation journal, and all content.
    func testWipeLeavesNoCopyOfTheKeys() throws {
        try usePolicy(#"{"maxFailedUnlocks": 1}"#)
        try h.initVault()
        try h.ok(["put", try h.localFile("f", Data("keep me".utf8)), "/f"] + h.pw)
        let fm = FileManager.default
        let planted = ["keyslots.tmp-4242", "metadata.db.rekey", "rotation.journal"]
        try fm.copyItem(atPath: h.home.appendingPathComponent("keyslots").path, toPath: h.home.appendingPathComponent(planted[0]).path)
        try fm.copyItem(atPath: h.home.appendingPathComponent("metadata.db").path, toPath: h.home.appendingPathComponent(planted[1]).path)
        try Data(count: 128).write(to: h.home.appendingPathComponent(planted[2]))
        let r = try h.run(["ls", "--password-file", try h.localFile("bad", Data("wrong password!\n".utf8))])
        XCTAssertEqual(r.status, 11, r.stderr)
        for f in ["keyslots", "metadata.db", "cache", "staging", "tmp"] + planted {
            XCTAssertFalse(fm.fileExists(atPath: h.home.appendingPathComponent(f).path), "\(f) must be gone")
        }
        XCTAssertTrue(fm.fileExists(atPath: h.home.appendingPathComponent("WIPED.txt").path))
    }
}

private extension Int {
    var nonZero: Int? { self == 0 ? nil : self }
}
