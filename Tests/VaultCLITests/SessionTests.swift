import Foundation
import XCTest

/// init, unlock, lock, status, auto-lock and password handling through the real binary.
final class SessionTests: XCTestCase {
    func requireKeyring() throws {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service (run scripts/test.sh)")
    }

    func testUnlockHoldsKeyInKeyringAndLockRemovesIt() throws {
        try requireKeyring()
        let h = try CLIHarness()
        try h.initVault()
        var r = try h.run(["ls"])
        XCTAssertEqual(r.status, 3, "a locked vault must refuse without a password")
        XCTAssertTrue(r.stderr.contains("locked"), r.stderr)
        try h.ok(["unlock"] + h.pw)
        try h.ok(["mkdir", "/docs"])               // no password needed now
        r = try h.ok(["status", "--json"])
        let s = try XCTUnwrap(r.json as? [String: Any])
        XCTAssertEqual(s["locked"] as? Bool, false)
        XCTAssertNotNil(s["locksAt"])
        try h.ok(["lock"])
        r = try h.run(["ls"])
        XCTAssertEqual(r.status, 3)
        // A named password source opens a locked vault for one command without unlocking it.
        try h.ok(["ls"] + h.pw)
        XCTAssertEqual(try h.run(["ls"]).status, 3)
    }

    func testWrongPasswordChangesNothing() throws {
        let h = try CLIHarness(keyring: CLIHarness.keyringAvailable)
        try h.initVault()
        let before = try Data(contentsOf: h.home.appendingPathComponent("keyslots"))
        let dbBefore = try Data(contentsOf: h.home.appendingPathComponent("metadata.db"))
        let bad = try h.localFile("bad", Data("not the password\n".utf8))
        let r = try h.run(["unlock", "--password-file", bad])
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.stderr.contains("wrong password"), r.stderr)
        XCTAssertEqual(try Data(contentsOf: h.home.appendingPathComponent("keyslots")), before)
        XCTAssertEqual(try Data(contentsOf: h.home.appendingPathComponent("metadata.db")), dbBefore)
        XCTAssertEqual(try h.run(["mkdir", "/x", "--password-file", bad]).status, 3)
    }

    func testPasswordCommandAndShortPassword() throws {
        let h = try CLIHarness(keyring: false)
        let short = try h.localFile("short", Data("abc\n".utf8))
        let r = try h.run(["init", "--password-file", short, "--kdf-ops", "1", "--kdf-mem", "8M"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("too short"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: h.home.appendingPathComponent("keyslots").path))
        try h.initVault()
        let viaCommand = try h.run(["mkdir", "/fromcmd"], env: ["VAULT_PASSWORD_COMMAND": "cat '\(h.passwordFile.path)'"])
        XCTAssertEqual(viaCommand.status, 0, viaCommand.stderr)
        XCTAssertEqual(try h.run(["ls"], env: ["VAULT_PASSWORD_COMMAND": "false"]).status, 2)
        let noSource = try h.run(["ls"])
        XCTAssertNotEqual(noSource.status, 0)
        XCTAssertTrue(noSource.stderr.contains("--password-file"), noSource.stderr)
    }

    func testWithoutKeyringEveryCommandWorksAndWarns() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        let u = try h.ok(["unlock"] + h.pw)
        XCTAssertTrue(u.stderr.contains("security is reduced"), u.stderr)
        let m = try h.ok(["mkdir", "/a"] + h.pw)
        XCTAssertEqual(m.stderr.components(separatedBy: "security is reduced").count - 1, 1, "warn once: \(m.stderr)")
        let f = try h.localFile("f.txt", Data("hello".utf8))
        try h.ok(["put", f, "/a"] + h.pw)
        XCTAssertEqual(try h.ok(["cat", "/a/f.txt"] + h.pw).out, "hello")
        let s = try h.ok(["status"] + h.pw)
        XCTAssertTrue(s.out.contains("unavailable"), s.out)
    }

    func testIdleTimeoutLocksAndSaysWhy() throws {
        try requireKeyring()
        let h = try CLIHarness()
        try h.initVault()
        // The vault's clock is set (test hooks), not waited for: 2 s pass between unlock and ls.
        let t0 = Int(Date().timeIntervalSince1970)
        try h.ok(["unlock", "--idle", "1s"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_NOW": "\(t0)"])
        let r = try h.run(["ls"], env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_NOW": "\(t0 + 2)"])
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.stderr.contains("idle timeout"), r.stderr)
        // The expired item is gone: the next command just says locked.
        let again = try h.run(["ls"], env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_NOW": "\(t0 + 2)"])
        XCTAssertEqual(again.status, 3)
        XCTAssertFalse(again.stderr.contains("idle"), again.stderr)
    }

    func testAbsoluteTimeout() throws {
        try requireKeyring()
        let h = try CLIHarness()
        try h.initVault()
        let t0 = Int(Date().timeIntervalSince1970)   // the vault's clock, set instead of waited for
        try h.ok(["unlock", "--idle", "0", "--absolute", "1s"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_NOW": "\(t0)"])
        let r = try h.run(["ls"], env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_NOW": "\(t0 + 2)"])
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.stderr.contains("absolute timeout"), r.stderr)
    }

    func testInitTwiceAndUninitialized() throws {
        let h = try CLIHarness(keyring: false)
        XCTAssertEqual(try h.run(["ls"] + h.pw).status, 4)
        try h.initVault()
        let r = try h.run(["init", "--password-file", h.passwordFile.path])
        XCTAssertEqual(r.status, 5)
        XCTAssertTrue(r.stderr.contains("already exists"))
    }

    func testPBKDF2Vault() throws {
        let h = try CLIHarness(keyring: false)
        try h.ok(["init", "--kdf", "pbkdf2", "--pbkdf2-iterations", "2000"] + h.pw)
        try h.ok(["mkdir", "/p"] + h.pw)
        let slots = try String(contentsOf: h.home.appendingPathComponent("keyslots"), encoding: .utf8)
        XCTAssertTrue(slots.contains("pbkdf2-sha512"))
    }

    func testPermissionsAndRefusalWhenWritableByOthers() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        for (name, mode) in [("keyslots", 0o600), ("metadata.db", 0o600), ("staging", 0o700), ("cache", 0o700), (".", 0o700)] {
            let attrs = try FileManager.default.attributesOfItem(atPath: h.home.appendingPathComponent(name).path)
            XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, mode, name)
        }
        chmod(h.home.appendingPathComponent("keyslots").path, 0o666)
        let r = try h.run(["ls"] + h.pw)
        XCTAssertEqual(r.status, 9)
        XCTAssertTrue(r.stderr.contains("writable by other users"), r.stderr)
    }

    func testHelpAndUsageErrors() throws {
        let h = try CLIHarness(keyring: false)
        XCTAssertTrue(try h.ok(["help"]).out.contains("EXIT STATUS:"))
        XCTAssertTrue(try h.ok(["put", "--help"]).out.contains("USAGE: vault put [<options>] <local> [<dest>]"))
        XCTAssertEqual(try h.run(["frobnicate"]).status, 2)
        XCTAssertEqual(try h.run(["ls", "--bogus"]).status, 2)
        // Options that were accepted and ignored: each belongs to other commands, which are named.
        try h.initVault()
        let misplaced = try h.run(["key", "list", "--kdf-time", "3"] + h.pw)
        XCTAssertEqual(misplaced.status, 2)
        XCTAssertTrue(misplaced.stderr.contains("unknown option '--kdf-time' here (it is an option of `vault init`"), misplaced.stderr)
        XCTAssertTrue(misplaced.stderr.contains("Usage: vault key list [--password-file <file>] [--json]"), misplaced.stderr)
        for args in [["lock", "--recursive"], ["status", "--wait"], ["transfers", "pause", "/a", "--metered", "yes"], ["mkdir", "/a", "/b"],
                     ["storage", "--budget", "1G", "--budget", "2G"], ["ls", "--json=yes"], ["unlock", "--idle"]] {
            let r = try h.run(args + h.pw)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("Usage: vault "), "\(args): \(r.stderr)")
        }
    }
}
