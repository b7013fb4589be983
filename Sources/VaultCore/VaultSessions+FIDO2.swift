import Foundation
import VaultCrypto
import VaultFIDO2
import VaultPrimitives

extension VaultSessions {
    /// Tries the vault's fido2 slots with the security key of `source`: each slot's credential
    /// in turn (the key answers "not mine" for another key's without a touch), asking `pin` for
    /// the key's PIN when the slot was enrolled with one ("FIDO2 PIN (N tries left): "), telling
    /// `touch` before the touch; holds the key as `unlock(password:)` does. A wrong PIN counts as
    /// a failed unlock (the policy may wipe the vault: that is thrown); every other reason the
    /// slots do not open is returned, for the caller to fall back to the password.
    public func unlock(fido2 source: FIDO2Source, pin: PasswordSource, touch: (String) -> Void,
                       idleTimeout: Int64 = defaultIdleTimeout, absoluteTimeout: Int64 = defaultAbsoluteTimeout,
                       opened: (Vault) throws -> Void = { _ in }) throws -> HardwareUnlock {
        let (file, _) = try Vault.readKeyslots(layout)
        guard !file.fido2Slots.isEmpty else { return .noSlot }
        let master: SecureBytes
        do { master = try fido2Master(file, source: source, pin: pin, touch: touch) } catch let fallback as HardwareFallback {
            return .fellBack(fallback.error)
        }
        return .unlocked(held: try hold(masterKey: master, idleTimeout: idleTimeout, absoluteTimeout: absoluteTimeout, opened: opened))
    }

    /// The master key from the first fido2 slot the plugged-in key holds; `HardwareFallback`
    /// names why none opened (a wrong PIN is thrown as `.wrongPassword`, counted).
    private func fido2Master(_ file: KeyslotFile, source: FIDO2Source, pin: PasswordSource, touch: (String) -> Void) throws -> SecureBytes {
        let key = try HardwareFallback.step { () throws(FIDO2Error) in try source.open() }
        defer { key.close() }
        var typed: SecureBytes?
        var last = FIDO2Error.otherAuthenticator
        for slot in file.fido2Slots {
            guard let record = slot.fido2 else { continue }
            let (credential, salt): ([UInt8], [UInt8])
            do { (credential, salt) = try record.decoded() } catch let e as VaultError { throw HardwareFallback(e) }
            if record.pin && typed == nil {
                let left = try HardwareFallback.step { () throws(FIDO2Error) in try key.pinRetries() }
                guard left > 0 else { throw HardwareFallback(FIDO2Error.pinBlocked(untilReplug: false).vaultError) }
                do { typed = PasswordText.normalized(try pin.read("FIDO2 PIN (\(left) \(left == 1 ? "try" : "tries") left): ")) } catch let e as VaultError {
                    throw HardwareFallback(VaultError(e.kind, "no FIDO2 PIN: \(e.message)"))
                }
            }
            touch("Touch the security key…")
            let secret: SecureBytes
            do {
                secret = try unlockMaster(file) { [typed] () throws -> SecureBytes in
                    switch Result(catching: { () throws(FIDO2Error) -> SecureBytes in
                        try key.hmacSecret(rp: record.rp, credentialId: credential, salt: salt, pin: record.pin ? typed : nil)
                    }) {
                    case .success(let s): return s
                    // A wrong PIN is a failed unlock, counted as a wrong password is.
                    case .failure(let e) where { if case .wrongPIN = e { return true }; return false }():
                        throw VaultError(.wrongPassword, e.description)
                    case .failure(let e): throw e
                    }
                }
            } catch let e as FIDO2Error {
                if case .otherAuthenticator = e { last = e; continue }
                throw HardwareFallback(e.vaultError)
            } catch let e as VaultError where e.kind == .wrongPassword {
                throw HardwareFallback(e)   // counted: the password is still the way in
            }
            do { return try file.unlock(fido2Slot: slot, secret: secret) } catch let e as VaultError { throw HardwareFallback(e) }
        }
        throw HardwareFallback(last.vaultError)
    }
}
