import Foundation
import VaultCrypto
import VaultPrimitives
import VaultTPM

/// The tpm2 keyslot (SECURITY.md "Keyslot file"): enrolling this machine's TPM. Unlocking with
/// it is `VaultSessions.unlock(tpm:…)`.
extension Vault {
    /// The TCTI configuration `VAULT_TPM_TCTI` names (nil: the device, `/dev/tpmrm0`).
    public static func tpmConfiguration(_ environment: [String: String]) -> String? {
        environment["VAULT_TPM_TCTI"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Seals a new random slot secret in the TPM of `tcti` (with the auth value of `pin` when
    /// given, bound to `pcrs` when not empty) and adds a tpm2 slot wrapping the master key under
    /// its KEK. The envelope is unchanged: the slot never leaves this machine, so the generation
    /// is not raised. Returns the slot id.
    public func addTPMSlot(tcti: String?, pin: SecureBytes?, pcrs: PCRSelection) throws -> String {
        let tpm = try TPMError.mapped { () throws(TPMError) in try TPM(tcti: tcti) }
        defer { tpm.close() }
        let name = try TPMError.mapped { () throws(TPMError) in try tpm.primaryName() }
        var file = keyslots
        if let held = file.machineBoundSlots.first(where: { $0.tpm2?.primaryName == Hex.encode(name) }) {
            throw VaultError(.alreadyExists, "this machine's TPM already holds keyslot \(held.id)",
                             hint: "remove it first (`vault key remove \(held.id)`) to enroll again")
        }
        let secret = SecureBytes.random(count: 32)
        let auth = try pin.map { try KeyslotFile.tpm2PINAuth($0, vaultId: keys.vaultId) }
        let sealed = try TPMError.mapped { () throws(TPMError) in try tpm.seal(secret, auth: auth, pcrs: pcrs) }
        let record = KeyslotFile.TPM2Record(publicArea: sealed.publicArea, privateArea: sealed.privateArea, pcrs: pcrs.indexes,
                                            pin: pin != nil, primaryName: name)
        let id = nextSlotId(KeyslotFile.tpm2Type, in: file.body.slots)
        file.body.slots.append(try KeyslotFile.tpm2Slot(id: id, record: record, secret: secret, masterKey: masterKey, vaultId: vaultId))
        try saveKeyslots(file, macKey: keys.keyslotMacKey, bumpGeneration: false)
        return id
    }
}

extension TPMError {
    /// The error to report for this TPM failure, with what to do next.
    public var vaultError: VaultError {
        switch self {
        case .noDevice: return VaultError(.notFound, description, hint: "set VAULT_TPM_TCTI to the TPM's TCTI, or use the password")
        case .permissionDenied: return VaultError(.insecure, description, hint: "`sudo adduser $USER tss`, then log in again")
        case .wrongPIN, .lockedOut: return VaultError(.wrongPassword, description, hint: "unlock with the password")
        case .pcrsChanged: return VaultError(.locked, description, hint: "unlock with the password, then `vault key remove` and `vault key add-tpm` again")
        case .otherTPM, .malformed: return VaultError(.integrity, description, hint: "unlock with the password; enroll this machine with `vault key add-tpm`")
        case .unreachable, .failed: return VaultError(.io, description, hint: "check the TPM (VAULT_TPM_TCTI), or use the password")
        }
    }

    /// Runs one TPM call, its failure as a `VaultError`.
    static func mapped<R>(_ body: () throws(TPMError) -> R) throws(VaultError) -> R {
        do { return try body() } catch { throw error.vaultError }
    }
}

/// How `vault key rotate` reaches this machine's TPM to re-seal its slot for the new key.
public struct TPMReseal {
    public var tcti: String?
    public var pin: PasswordSource

    public init(tcti: String?, pin: PasswordSource) { self.tcti = tcti; self.pin = pin }
}

extension Vault {
    /// This machine's tpm2 slot for `newMaster`, under the same id: the old slot is unsealed (its
    /// PIN proved, its wrap checked), then a fresh secret is sealed with the same PIN and PCRs.
    func resealedTPMSlot(_ reseal: TPMReseal, newMaster: SecureBytes) throws -> KeyslotFile.Slot {
        let old: UnsealedTPMSlot
        do { old = try UnsealedTPMSlot(keyslots, tcti: reseal.tcti, pin: reseal.pin) } catch let f as TPMFallback { throw f.error }
        defer { old.tpm.close() }
        _ = try keyslots.unlock(tpm2Slot: old.slot, secret: old.secret)
        let secret = SecureBytes.random(count: 32)
        let sealed = try TPMError.mapped { () throws(TPMError) in try old.tpm.seal(secret, auth: old.auth, pcrs: old.pcrs) }
        let record = KeyslotFile.TPM2Record(publicArea: sealed.publicArea, privateArea: sealed.privateArea, pcrs: old.pcrs.indexes,
                                            pin: old.auth != nil, primaryName: Hex.decode(old.slot.tpm2?.primaryName ?? "") ?? [])
        return try KeyslotFile.tpm2Slot(id: old.slot.id, record: record, secret: secret, masterKey: newMaster, vaultId: vaultId)
    }
}
