import Foundation
import XCTest

/// The policy's KDF floors apply to every new password slot (SECURITY.md "Enterprise policy"),
/// including one added by `backup import --new-password-file` and by `admin recover`, and a floor
/// above what a keyslot can hold is refused rather than written into a slot no one could open.
final class PolicyFloorTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        h.env["VAULT_POLICY_KEY_FILE"] = h.root.appendingPathComponent("no-signing-key.pub").path
    }

    func usePolicy(_ json: String) throws { try h.usePolicy(json) }

    func testFloorAboveWhatAKeyslotHoldsIsRefused() throws {
        try usePolicy(#"{"kdfMinArgon2Ops": 65}"#)
        let r = try h.run(["init", "--kdf-time", "0.05"] + h.pw)
        XCTAssertEqual(r.status, 11, r.stderr)
        XCTAssertTrue(r.stderr.contains("more than a keyslot can hold"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: h.home.appendingPathComponent("keyslots").path))
    }

    /// (Before: `backup import --new-password-file` took no floor at all.)
    func testBackupImportNewPasswordMeetsTheFloor() throws {
        try h.initVault()
        let bundle = h.root.appendingPathComponent("b.vbk").path
        let pass = try h.localFile("pass", Data("backup passphrase\n".utf8))
        try h.ok(["backup", "export", bundle, "--passphrase-file", pass, "--kdf-ops", "1", "--kdf-mem", "8M"] + h.pw)
        try usePolicy(#"{"kdfMinArgon2Ops": 2}"#)
        let newPw = try h.localFile("new", Data("new password here\n".utf8))
        h.env["VAULT_HOME"] = h.root.appendingPathComponent("restored").path
        let r = try h.run(["backup", "import", bundle, "--passphrase-file", pass, "--new-password-file", newPw, "--kdf-ops", "1", "--kdf-mem", "8M"])
        XCTAssertEqual(r.status, 11, r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: h.root.appendingPathComponent("restored/keyslots").path))
        try h.ok(["backup", "import", bundle, "--passphrase-file", pass, "--new-password-file", newPw, "--kdf-ops", "2", "--kdf-mem", "8M"])
    }

    /// (Before: `admin recover` ignored the policy, floors included.)
    func testAdministratorRecoveryMeetsTheFloor() throws {
        let org = h.root.appendingPathComponent("org").path
        try h.ok(["admin", "keygen", "--out", org])
        try h.initVault(extra: ["--org-key", org + "/org-escrow.pub"])
        try usePolicy(#"{"kdfMinArgon2Ops": 2}"#)
        let newPw = try h.localFile("new", Data("new password here\n".utf8))
        let recover = ["admin", "recover", "--org-key", org + "/org-escrow.key", "--new-password-file", newPw, "--kdf-mem", "8M"]
        let r = try h.run(recover + ["--kdf-ops", "1"])
        XCTAssertEqual(r.status, 11, r.stderr)
        XCTAssertEqual(try h.run(["ls"] + h.pw).status, 0, "nothing changed: the old password still opens the vault")
        try h.ok(recover + ["--kdf-ops", "2"])
        XCTAssertEqual(try h.run(["ls", "--password-file", newPw]).status, 0)
    }
}
