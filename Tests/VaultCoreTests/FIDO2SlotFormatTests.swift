import Foundation
import XCTest
@testable import VaultCore
@testable import VaultKeys
import VaultCrypto
import VaultPrimitives

/// The fido2 keyslot's format (SECURITY.md "Keyslot file") with a stand-in hmac-secret output
/// (no authenticator): its AAD binds every field as spelled, and it never travels in the envelope.
final class FIDO2SlotFormatTests: VaultTestCase {
    func slot(_ secret: SecureBytes) throws -> KeyslotFile.Slot {
        let record = KeyslotFile.FIDO2Record(rp: "vault", credentialId: Array(repeating: 0xc3, count: 92), salt: Array(repeating: 0x5a, count: 32), pin: false)
        return try KeyslotFile.fido2Slot(id: "fido2-8c21d0", record: record, secret: secret, masterKey: vault.masterKey, vaultId: vault.vaultId)
    }

    func testTheAADBindsEveryFIDO2FieldAsSpelled() throws {
        let secret = SecureBytes.random(count: 32)
        let s = try slot(secret)
        XCTAssertEqual(String(decoding: KeyslotFile.aad(vaultId: vault.vaultId, slot: s), as: UTF8.self),
                       "vault-keyslot-v1|\(vault.vaultId)|fido2-8c21d0|fido2|fido2:rp=vault:pin=0:cred=\(String(repeating: "c3", count: 92)):salt=\(String(repeating: "5a", count: 32))")
        XCTAssertTrue(try vault.keyslots.unlock(fido2Slot: s, secret: secret).constantTimeEquals(vault.masterKey))
        let kdf = try XCTUnwrap(vault.keyslots.body.slots[0].kdf)
        let changes: [(String, (inout KeyslotFile.Slot) -> Void)] = [
            ("rp", { $0.fido2!.rp = "vault2" }), ("pin", { $0.fido2!.pin = true }),
            ("credential", { $0.fido2!.credentialId = String(repeating: "c4", count: 92) }),
            ("credential in upper case", { $0.fido2!.credentialId = $0.fido2!.credentialId.uppercased() }),
            ("salt", { $0.fido2!.salt = String(repeating: "5b", count: 32) }),
            ("id", { $0.id = "fido2-000000" }), ("a kdf", { $0.kdf = kdf }), ("type", { $0.type = "tpm2" }),
        ]
        for (what, change) in changes {
            var altered = s
            change(&altered)
            XCTAssertThrowsError(try vault.keyslots.unlock(fido2Slot: altered, secret: secret), what) {
                XCTAssertEqual(($0 as? VaultError)?.kind, .integrity, what)
            }
        }
        XCTAssertThrowsError(try vault.keyslots.unlock(fido2Slot: s, secret: SecureBytes.random(count: 32)), "another output")
        // The KEK is the tpm2 slot's derivation with the fido2 label: a tpm2 slot's KEK does not open it.
        XCTAssertFalse(try KeyslotFile.hardwareKEK(secret, vaultId: Hex.decode(vault.vaultId)!, type: "fido2")
            .constantTimeEquals(try KeyslotFile.tpm2KEK(secret, vaultId: Hex.decode(vault.vaultId)!)))
    }

    func testTheSlotNeverTravels() throws {
        let before = try vault.envelopeBytes()
        var file = vault.keyslots
        file.body.slots.append(try slot(SecureBytes.random(count: 32)))
        try vault.saveKeyslots(file, macKey: vault.keys.keyslotMacKey, bumpGeneration: false)
        XCTAssertEqual(try vault.envelopeBytes(), before, "the envelope is the file without the fido2 slot, byte for byte")
        XCTAssertEqual(vault.keyslots.deviceLocalSlots.map(\.type), ["fido2"])
        XCTAssertTrue(vault.keyslots.machineBoundSlots.isEmpty, "not a TPM slot: the TPM is not asked for it")
    }
}
