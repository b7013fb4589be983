import Foundation
import XCTest
import VaultCore
import VaultCrypto
import VaultPrimitives

final class RulesTests: XCTestCase {
    func testNames() {
        for bad in ["", ".", "..", "a/b", "nul\u{0}byte", String(repeating: "é", count: 128)] {
            XCTAssertThrowsError(try NameRules.validate(bad), bad) { XCTAssertEqual(($0 as? VaultError)?.kind, .invalidName) }
        }
        for good in ["a", "...", ".hidden", "With Space", "ünïcødé", String(repeating: "x", count: 255), "CASE", "case"] {
            XCTAssertNoThrow(try NameRules.validate(good), good)
        }
        XCTAssertThrowsError(try NameRules.components("/a/\u{0}/b"))
        XCTAssertEqual(try NameRules.components("//a///b/"), ["a", "b"])
    }

    func testSizesAndDurations() {
        XCTAssertEqual(ByteCount.parse("10G"), 10 << 30)
        XCTAssertEqual(ByteCount.parse("512MiB"), 512 << 20)
        XCTAssertEqual(ByteCount.parse("4096"), 4096)
        XCTAssertNil(ByteCount.parse("lots"))
        XCTAssertEqual(Duration.parse("15m"), 900)
        XCTAssertEqual(Duration.parse("8h"), 28800)
        XCTAssertEqual(Duration.parse("0"), 0)
        XCTAssertNil(Duration.parse("-1s"))
    }

    func testSessionExpiry() {
        let r = KeyringSession.Record(masterKey: SecureBytes(count: 32), epoch: 1, unlockedAt: 1000, lastUsedAt: 1500,
                                      idleTimeout: 600, absoluteTimeout: 3600)
        XCTAssertNil(r.expiry(now: 2000))
        XCTAssertTrue(r.expiry(now: 2100)!.contains("idle"))
        XCTAssertTrue(r.expiry(now: 4600)!.contains("absolute"))
        let never = KeyringSession.Record(masterKey: SecureBytes(count: 32), epoch: 1, unlockedAt: 0, lastUsedAt: 0,
                                          idleTimeout: 0, absoluteTimeout: 0)
        XCTAssertNil(never.expiry(now: 1 << 40))
    }
}

final class KeyslotTests: VaultTestCase {
    func testKeyslotFileRoundTripAndWrongPassword() throws {
        let (file, bytes) = try Vault.readKeyslots(layout)
        let master = try file.unlock(password: password)
        let keys = try KeyHierarchy(masterKey: master, vaultId: file.vaultId, epoch: file.body.epoch)
        XCTAssertNoThrow(try KeyslotFile.verify(bytes: bytes, macKey: keys.keyslotMacKey))
        XCTAssertThrowsError(try file.unlock(password: SecureBytes(copying: Array("nope".utf8)))) {
            XCTAssertEqual(($0 as? VaultError)?.kind, .wrongPassword)
        }
        // The MAC rejects another key.
        XCTAssertThrowsError(try KeyslotFile.verify(bytes: bytes, macKey: SecureBytes.random(count: 32)))
    }

    func testReopenWithMasterKeyAndWrongKey() throws {
        vault = nil
        let (file, _) = try Vault.readKeyslots(layout)
        let master = try file.unlock(password: password)
        XCTAssertNoThrow(try Vault.open(layout: layout, masterKey: master))
        XCTAssertThrowsError(try Vault.open(layout: layout, masterKey: SecureBytes.random(count: 32))) {
            XCTAssertEqual(($0 as? VaultError)?.kind, .integrity)
        }
    }
}
