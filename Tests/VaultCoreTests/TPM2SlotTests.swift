import Foundation
import XCTest
@testable import VaultCore
@testable import VaultKeys
import VaultCrypto
import VaultPrimitives
import VaultTestSupport
import VaultTPM

/// The tpm2 keyslot's format (SECURITY.md "Keyslot file"): its AAD binds every TPM field, the
/// other slot types' AAD is unchanged, and it never travels in the envelope. Against a real TPM
/// (swtpm) for the slot itself.
final class TPM2SlotTests: VaultTestCase {
    var tpm: SoftwareTPM!

    override func setUpWithError() throws {
        try super.setUpWithError()
        try XCTSkipUnless(SoftwareTPM.available, "needs swtpm (scripts/install-deps.sh installs it)")
        tpm = try SoftwareTPM()
    }

    override func tearDownWithError() throws {
        tpm = nil
        try super.tearDownWithError()
    }

    var tpmSlot: KeyslotFile.Slot { get throws { try XCTUnwrap(vault.keyslots.machineBoundSlots.first) } }

    func testOtherSlotTypesKeepTheirAAD() throws {
        let vid = "06af423ab3704282e8e96bce1d8df6c6"
        let recovery = KeyslotFile.Slot(id: "recovery-1", type: "recovery", kdf: nil, nonce: nil, wrappedKey: nil, createdAt: 0)
        XCTAssertEqual(String(decoding: KeyslotFile.aad(vaultId: vid, slot: recovery), as: UTF8.self),
                       "vault-keyslot-v1|06af423ab3704282e8e96bce1d8df6c6|recovery-1|recovery|")
        var password = recovery
        password.id = "password-1"; password.type = "password"
        password.kdf = .init(.argon2id(opsLimit: 1, memLimitBytes: 8_388_608, salt: Hex.decode("3c09d965bfc88b752cd5c867a3b71fdd")!))
        XCTAssertEqual(String(decoding: KeyslotFile.aad(vaultId: vid, slot: password), as: UTF8.self),
                       "vault-keyslot-v1|06af423ab3704282e8e96bce1d8df6c6|password-1|password|argon2id:ops=1:mem=8388608:salt=3c09d965bfc88b752cd5c867a3b71fdd")
        // Serialised without a tpm2 member: the file of a vault without a TPM slot is as before.
        XCTAssertFalse(String(decoding: try JSONEncoder().encode(password), as: UTF8.self).contains("tpm2"))
    }

    func testTheAADBindsEveryTPMField() throws {
        _ = try vault.addTPMSlot(tcti: tpm.tcti, pin: nil, pcrs: PCRSelection(list: "16")!)
        let slot = try tpmSlot
        let rec = try XCTUnwrap(slot.tpm2)
        var h = SHA256Hasher()
        h.update(Hex.decode(rec.publicArea)!); h.update(Hex.decode(rec.privateArea)!)
        XCTAssertEqual(String(decoding: KeyslotFile.aad(vaultId: vault.vaultId, slot: slot), as: UTF8.self),
                       "vault-keyslot-v1|\(vault.vaultId)|\(slot.id)|tpm2|tpm2:pcrs=16:pin=0:primary=\(rec.primaryName):object=\(Hex.encode(h.finalize()))")
        XCTAssertEqual(rec.primaryName.count, 68, "nameAlg and SHA-256 of the primary's public area")
        let secret = try TPM(tcti: tpm.tcti).unseal(TPMSealedObject(publicArea: Hex.decode(rec.publicArea)!, privateArea: Hex.decode(rec.privateArea)!,
                                                                    pcrs: PCRSelection(list: "16")!), auth: nil)
        XCTAssertTrue(try vault.keyslots.unlock(tpm2Slot: slot, secret: secret).constantTimeEquals(vault.masterKey))
        let kdf = try XCTUnwrap(vault.keyslots.body.slots[0].kdf)
        let changes: [(String, (inout KeyslotFile.Slot) -> Void)] = [
            ("pcrs", { $0.tpm2!.pcrs = [7] }), ("pin", { $0.tpm2!.pin = true }),
            ("primary", { $0.tpm2!.primaryName = String(repeating: "0", count: 68) }),
            ("public area", { $0.tpm2!.publicArea += "00" }), ("private area", { $0.tpm2!.privateArea = $0.tpm2!.privateArea.dropLast(2) + ($0.tpm2!.privateArea.hasSuffix("00") ? "01" : "00") }),
            ("id", { $0.id = "tpm2-000000" }), ("a kdf", { $0.kdf = kdf }), ("type", { $0.type = "recovery" }),
        ]
        for (what, change) in changes {
            var altered = slot
            change(&altered)
            XCTAssertThrowsError(try vault.keyslots.unlock(tpm2Slot: altered, secret: secret), what) {
                XCTAssertEqual(($0 as? VaultError)?.kind, .integrity, what)
            }
        }
        XCTAssertThrowsError(try vault.keyslots.unlock(tpm2Slot: slot, secret: SecureBytes.random(count: 32)), "another secret")
    }

    func testTheSlotNeverTravelsAndAMergeKeepsIt() throws {
        let before = try vault.envelopeBytes()
        let generation = vault.keyslots.body.generation
        let id = try vault.addTPMSlot(tcti: tpm.tcti, pin: SecureBytes(copying: Array("1234".utf8)), pcrs: .none)
        XCTAssertEqual(vault.keyslots.body.generation, generation, "the envelope did not change")
        XCTAssertEqual(try vault.envelopeBytes(), before, "the envelope is the file without the tpm2 slot, byte for byte")
        XCTAssertTrue(String(decoding: try POSIX.readFile(layout.keyslotFile), as: UTF8.self).contains(id))
        // Another device added a recovery slot: adopting and merging its envelope keep this one.
        let theirsBytes = try otherDeviceAddsARecoverySlot(to: before)
        let theirs = try KeyslotFile.parse(theirsBytes)
        try vault.adoptEnvelope(theirsBytes)
        XCTAssertEqual(vault.keyslots.body.slots.map(\.type), ["password", "recovery", "tpm2"])
        XCTAssertEqual(try vault.envelopeBytes(), theirsBytes, "what travels is theirs, byte for byte")
        _ = try vault.addRecoverySlot()
        try vault.mergeEnvelope(base: KeyslotFile.parse(before), theirs: theirs)
        XCTAssertEqual(vault.keyslots.body.slots.filter { $0.type == "tpm2" }.map(\.id), [id])
        XCTAssertFalse(String(decoding: try vault.envelopeBytes(), as: UTF8.self).contains("tpm2"))
        // The file as written still authenticates and holds the slot.
        let bytes = try POSIX.readFile(layout.keyslotFile)
        XCTAssertNoThrow(try KeyslotFile.verify(bytes: bytes, macKey: vault.keys.keyslotMacKey))
        XCTAssertEqual(try KeyslotFile.parse(bytes).machineBoundSlots.map(\.id), [id])
    }

    /// The envelope `bytes` with a recovery slot another device added (same master key).
    func otherDeviceAddsARecoverySlot(to bytes: [UInt8]) throws -> [UInt8] {
        var file = try KeyslotFile.parse(bytes)
        file.body.slots.append(try KeyslotFile.recoverySlot(id: "recovery-abcdef", recoveryKey: RecoveryKey.generate(),
                                                            masterKey: vault.masterKey, vaultId: vault.vaultId))
        file.body.generation = (file.body.generation ?? 0) + 1
        return try file.serialized(macKey: vault.keys.keyslotMacKey)
    }

    func testThePINAuthValueIsOfTheNFCForm() throws {
        let vid = Array(repeating: UInt8(7), count: 16)
        let composed = try KeyslotFile.tpm2PINAuth(SecureBytes(copying: Array("caf\u{E9}1".utf8)), vaultId: vid)
        let decomposed = try KeyslotFile.tpm2PINAuth(SecureBytes(copying: Array("cafe\u{301}1".utf8)), vaultId: vid)
        XCTAssertTrue(composed.constantTimeEquals(decomposed))
        XCTAssertEqual(composed.count, 32)
        XCTAssertFalse(composed.constantTimeEquals(try KeyslotFile.tpm2PINAuth(SecureBytes(copying: Array("caf\u{E9}1".utf8)),
                                                                                vaultId: Array(repeating: 8, count: 16))), "bound to the vault")
    }
}
