import Foundation
import XCTest
@testable import VaultCore
@testable import VaultKeys
import VaultCrypto

/// Passwords are Unicode NFC (SECURITY.md "Key hierarchy"): the composed and decomposed forms of
/// a password open the same vault, and a slot written before normalisation (its KEK made from the
/// bytes as typed) still opens with those bytes and is then rewrapped under the NFC form.
final class PasswordNormalisationTests: XCTestCase {
    let composed = "Crème brûlée à Zürich"                                           // NFC
    var decomposed: String { String(decoding: Array(composed.decomposedStringWithCanonicalMapping.utf8), as: UTF8.self) }

    func passwordFile(_ h: CLIHarness, _ name: String, _ pw: String) throws -> [String] {
        ["--password-file", try h.localFile(name, Data((pw + "\n").utf8))]
    }

    func testComposedAndDecomposedFormsOpenTheSameVault() throws {
        XCTAssertNotEqual(Array(composed.utf8), Array(decomposed.utf8))
        let h = try CLIHarness(keyring: false)
        let nfd = try passwordFile(h, "nfd", decomposed), nfc = try passwordFile(h, "nfc", composed)
        try h.ok(["init", "--kdf-ops", "1", "--kdf-mem", "8M"] + nfd)   // typed decomposed
        try h.ok(["mkdir", "/a"] + nfc)
        try h.ok(["mkdir", "/b"] + nfd)
        // The slot is keyed by the NFC bytes, as an independent reader derives it.
        let file = try KeyslotFile.parse([UInt8](try Data(contentsOf: h.home.appendingPathComponent("keyslots"))))
        XCTAssertNoThrow(try file.unlockPassword(SecureBytes(copying: Array(composed.utf8))))
        XCTAssertNil(try file.unlockPassword(SecureBytes(copying: Array(composed.utf8))).legacySlot)
        try h.ok(["key", "passwd", "--new-password-file", try h.localFile("new", Data((decomposed + "!\n").utf8)),
                  "--kdf-ops", "1", "--kdf-mem", "8M"] + nfc)
        try h.ok(["ls"] + (try passwordFile(h, "new-nfc", composed + "!")))
    }

    /// Backup passphrases follow the same rule: exported with one form, imported with the other.
    func testBackupPassphrasesAreNFCToo() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        try h.ok(["mkdir", "/in-the-bundle"] + h.pw)
        let bundle = h.root.appendingPathComponent("nfc.bundle").path
        let nfd = try h.localFile("pass-nfd", Data((decomposed + "\n").utf8)), nfc = try h.localFile("pass-nfc", Data((composed + "\n").utf8))
        try h.ok(["backup", "export", bundle, "--passphrase-file", nfd, "--kdf-ops", "1", "--kdf-mem", "8M"] + h.pw)
        let target = ["VAULT_HOME": h.root.appendingPathComponent("restored").path]
        try h.ok(["backup", "import", bundle, "--passphrase-file", nfc], env: target)
        XCTAssertEqual((try h.ok(["ls", "--json"] + h.pw, env: target).json as? [[String: Any]])?.first?["name"] as? String, "in-the-bundle")
    }

    /// A vault made before passwords were normalised, with a decomposed password: its slot's KEK
    /// is of those bytes. It opens with them, and is rewrapped to NFC on that first unlock.
    func testASlotWrittenBeforeNormalisationOpensAndIsRewrapped() throws {
        let h = try CLIHarness(keyring: false)
        let nfd = try passwordFile(h, "nfd", decomposed), nfc = try passwordFile(h, "nfc", composed)
        try h.ok(["init", "--kdf-ops", "1", "--kdf-mem", "8M"] + nfc)
        try h.ok(["mkdir", "/kept"] + nfc)
        // Rewrite the slot as the old binary wrote it: KEK = Argon2id(the decomposed bytes as typed).
        let path = h.home.appendingPathComponent("keyslots")
        var file = try KeyslotFile.parse([UInt8](try Data(contentsOf: path)))
        let master = try file.unlock(password: SecureBytes(copying: Array(composed.utf8)))
        let keys = try KeyHierarchy(masterKey: master, vaultId: file.vaultId, epoch: file.body.epoch)
        let slot = file.body.slots[0]
        let legacyKEK = try KDF.derive(password: SecureBytes(copying: Array(decomposed.utf8)), parameters: try slot.kdf!.parameters())
        file.body.slots[0] = try KeyslotFile.makeSlot(id: slot.id, type: "password", kdf: slot.kdf, kek: legacyKEK,
                                                      masterKey: master, vaultId: file.body.vaultId)
        try Data(try file.serialized(macKey: keys.keyslotMacKey)).write(to: path)
        XCTAssertEqual(try h.run(["ls"] + nfc).status, 3, "the old slot does not open with the NFC bytes")

        let before = try Data(contentsOf: path)
        try h.ok(["ls"] + nfd)   // the bytes as typed back then: opens, and rewraps
        XCTAssertNotEqual(try Data(contentsOf: path), before, "the slot was rewrapped")
        let rewrapped = try KeyslotFile.parse([UInt8](try Data(contentsOf: path)))
        XCTAssertEqual(rewrapped.body.slots[0].kdf?.alg, slot.kdf?.alg)
        XCTAssertEqual(rewrapped.body.slots[0].kdf?.opsLimit, slot.kdf?.opsLimit)
        XCTAssertNotEqual(rewrapped.body.slots[0].kdf?.salt, slot.kdf?.salt, "a fresh salt")
        XCTAssertEqual((try h.ok(["ls", "--json"] + nfc).json as? [[String: Any]])?.first?["name"] as? String, "kept")
        try h.ok(["ls"] + nfd)
    }
}
