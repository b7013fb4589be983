import Foundation
import VaultPrimitives
import VaultTestSupport
import XCTest

/// Issue 20's "0 bytes of any key in plaintext on disk", for a vault with both hardware slots:
/// after enrolling a TPM slot and a FIDO2 slot, unlocking through them, storing and pinning
/// content and locking, no file the vault or its keyring wrote holds the master key, raw or in
/// hex. Against a real keyring, a real TPM 2.0 (swtpm) and the software FIDO2 authenticator.
final class HardwareKeysAtRestTests: XCTestCase {
    func testNoKeyIsInPlaintextOnDiskWithATPMAndAFIDO2Slot() throws {
        try XCTSkipUnless(SoftwareTPM.available, "needs swtpm (scripts/install-deps.sh installs it)")
        try XCTSkipUnless(SoftwareFIDO2.available, "needs python3-fido2 and python3-cryptography")
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service")
        let tpm = try SoftwareTPM()
        let key = try SoftwareFIDO2()
        let h = try CLIHarness(keyring: true)
        let xdg = h.root.appendingPathComponent("xdg")
        for d in ["data", "config", "cache"] {
            try FileManager.default.createDirectory(at: xdg.appendingPathComponent(d), withIntermediateDirectories: true)
        }
        h.env["XDG_CONFIG_HOME"] = xdg.appendingPathComponent("config").path
        h.env["XDG_CACHE_HOME"] = xdg.appendingPathComponent("cache").path
        h.env["VAULT_TPM_TCTI"] = tpm.tcti
        h.env["VAULT_TEST_FIDO2_SOCKET"] = key.socket
        try h.initVault()
        try h.ok(["unlock"] + h.pw)
        let id = try h.vaultId()
        let item = try XCTUnwrap(try h.keyringItem(id)).trimmingCharacters(in: .newlines)
        XCTAssertTrue(item.hasPrefix("v1:"))
        let hex = try XCTUnwrap(item.split(separator: ":").last.map(String.init))
        XCTAssertEqual(hex.count, 64)
        let raw = Data(try XCTUnwrap(Hex.decode(hex)))

        try h.ok(["key", "add-tpm"] + h.pw)
        try h.ok(["key", "add-fido2"] + h.pw)
        try h.ok(["lock"])
        XCTAssertEqual(try h.unlockedWith([]).1, "tpm2")
        XCTAssertTrue(try XCTUnwrap(try h.keyringItem(id)).hasPrefix("v3:"), "held under the TPM")
        try h.ok(["lock"])
        XCTAssertEqual(try h.unlockedWith(["--no-tpm"]).1, "fido2")
        let src = try h.localFile("notes.txt", Data(String(repeating: "some notes\n", count: 5000).utf8))
        try h.ok(["put", src, "/notes.txt"] + h.pw)
        try h.ok(["pin", "/"] + h.pw)
        try h.ok(["doctor", "--verify"] + h.pw)
        try h.ok(["lock"])

        var scanned = 0
        for dir in [h.home, h.tmp, xdg] {
            let e = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil)
            while let url = e?.nextObject() as? URL {
                guard let data = try? Data(contentsOf: url) else { continue }
                scanned += 1
                XCTAssertNil(data.range(of: raw), "the master key in \(url.path)")
                XCTAssertNil(data.range(of: Data(hex.utf8)), "the master key in hex in \(url.path)")
                XCTAssertNil(data.range(of: Data(hex.uppercased().utf8)), "the master key in hex in \(url.path)")
            }
        }
        XCTAssertGreaterThan(scanned, 3)
    }
}
