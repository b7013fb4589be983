import Foundation
import VaultCrypto
import VaultPrimitives
import VaultTPM

/// What trying this machine's TPM slot came to (`VaultSessions.unlock(tpm:…)`).
public enum TPMUnlock {
    /// The TPM slot opened the vault; whether the key is held in the keyring.
    case unlocked(held: Bool)
    /// The vault has no tpm2 slot: the TPM was not asked.
    case noSlot
    /// The slot did not open the vault, for the reason given (one line): fall back to the password.
    case fellBack(VaultError)
}

extension VaultSessions {
    /// Tries the vault's tpm2 slot of this machine's TPM (`tcti`), asking `pin` for its PIN when it
    /// has one ("TPM PIN (N tries left): "), and holds the key as `unlock(password:)` does. A
    /// wrong PIN counts as a failed unlock (the policy may wipe the vault: that is thrown); every
    /// other reason the slot does not open is returned, for the caller to fall back to the password.
    public func unlock(tpm tcti: String?, pin: PasswordSource, idleTimeout: Int64 = defaultIdleTimeout,
                       absoluteTimeout: Int64 = defaultAbsoluteTimeout, opened: (Vault) throws -> Void = { _ in }) throws -> TPMUnlock {
        let (file, _) = try Vault.readKeyslots(layout)
        guard !file.machineBoundSlots.isEmpty else { return .noSlot }
        let master: SecureBytes
        do { master = try tpmMaster(file, tcti: tcti, pin: pin) } catch let fallback as TPMFallback { return .fellBack(fallback.error) }
        return .unlocked(held: try hold(masterKey: master, idleTimeout: idleTimeout, absoluteTimeout: absoluteTimeout, opened: opened))
    }

    /// The master key from the slot this TPM sealed; `TPMFallback` names why not.
    private func tpmMaster(_ file: KeyslotFile, tcti: String?, pin: PasswordSource) throws -> SecureBytes {
        let opened: UnsealedTPMSlot
        do {
            opened = try UnsealedTPMSlot(file, tcti: tcti, pin: pin) { unseal in
                // A wrong PIN is a failed unlock, counted as a wrong password is.
                try unlockMaster(file, unseal)
            }
        } catch let e as VaultError where e.kind == .wrongPassword { throw TPMFallback(e) }
        defer { opened.tpm.close() }
        do { return try file.unlock(tpm2Slot: opened.slot, secret: opened.secret) } catch let e as VaultError { throw TPMFallback(e) }
    }
}

/// The tpm2 slot this machine's TPM sealed, unsealed: the open TPM (close it), the slot, its
/// secret, the PIN's auth value and the PCRs. Every reason it fails is a `TPMFallback`, but a
/// wrong PIN, which is `.wrongPassword` (the caller counts it).
struct UnsealedTPMSlot {
    let tpm: TPM
    let slot: KeyslotFile.Slot
    let secret: SecureBytes
    let auth: SecureBytes?
    let pcrs: PCRSelection

    /// - Parameter guarding: runs the unseal (`unlockMaster` counts a wrong PIN as a failed unlock).
    init(_ file: KeyslotFile, tcti: String?, pin: PasswordSource,
         guarding: (() throws -> SecureBytes) throws -> SecureBytes = { try $0() }) throws {
        let tpm = try TPMFallback.step { () throws(TPMError) in try TPM(tcti: tcti) }
        var kept = false
        defer { if !kept { tpm.close() } }
        let name = Hex.encode(try TPMFallback.step { () throws(TPMError) in try tpm.primaryName() })
        guard let slot = file.machineBoundSlots.first(where: { $0.tpm2?.primaryName == name }), let record = slot.tpm2 else {
            throw TPMFallback(TPMError.otherTPM.vaultError)
        }
        let areas: (publicArea: [UInt8], privateArea: [UInt8], primaryName: [UInt8])
        do { areas = try record.decoded() } catch let e as VaultError { throw TPMFallback(e) }
        guard let pcrs = PCRSelection(mask: record.pcrs.reduce(UInt32(0)) { $0 | 1 << UInt32($1) }) else {
            throw TPMFallback(TPMError.malformed("a PCR index out of range").vaultError)
        }
        let object = TPMSealedObject(publicArea: areas.publicArea, privateArea: areas.privateArea, pcrs: pcrs)
        var auth: SecureBytes?
        if record.pin {
            let state = try TPMFallback.step { () throws(TPMError) in try tpm.lockoutState() }
            guard state.triesLeft > 0 else { throw TPMFallback(TPMError.lockedOut(recoverySeconds: state.lockoutSeconds).vaultError) }
            let typed: SecureBytes
            do { typed = try pin.read("TPM PIN (\(state.triesLeft) \(state.triesLeft == 1 ? "try" : "tries") left): ") } catch let e as VaultError {
                throw TPMFallback(VaultError(e.kind, "no TPM PIN: \(e.message)"))
            }
            auth = try KeyslotFile.tpm2PINAuth(typed, vaultId: file.vaultId)
        }
        secret = try guarding { [auth] in
            switch Result(catching: { () throws(TPMError) -> SecureBytes in try tpm.unseal(object, auth: auth) }) {
            case .success(let s): return s
            case .failure(.wrongPIN(let left)): throw VaultError(.wrongPassword, TPMError.wrongPIN(triesLeft: left).description)
            // The primary is this TPM's: an object that does not verify under it was altered.
            case .failure(.otherTPM): throw TPMFallback(TPMError.malformed("it does not verify under this TPM").vaultError)
            case .failure(let e): throw TPMFallback(e.vaultError)
            }
        }
        self.tpm = tpm; self.slot = slot; self.auth = auth; self.pcrs = pcrs
        kept = true
    }
}

/// Why the TPM slot did not open the vault (the password is the way in then).
struct TPMFallback: Error {
    let error: VaultError
    init(_ error: VaultError) { self.error = error }

    /// Runs one TPM call; a failure becomes the reason to fall back.
    static func step<R>(_ body: () throws(TPMError) -> R) throws(TPMFallback) -> R {
        do { return try body() } catch { throw TPMFallback(error.vaultError) }
    }
}
