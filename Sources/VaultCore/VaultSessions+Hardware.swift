import VaultFIDO2

/// What trying a hardware slot came to: the tpm2 slot's outcome (`unlock(tpm:…)`) serves the
/// fido2 slots too (`unlock(fido2:…)`): unlocked (held or not), no slot of that kind, or fell
/// back with the reason.
public typealias HardwareUnlock = TPMUnlock

/// Why a hardware slot (tpm2, fido2) did not open the vault (the password is the way in then).
typealias HardwareFallback = TPMFallback

extension TPMFallback {
    /// Runs one FIDO2 call; a failure becomes the reason to fall back.
    static func step<R>(_ body: () throws(FIDO2Error) -> R) throws(TPMFallback) -> R {
        do { return try body() } catch { throw TPMFallback(error.vaultError) }
    }
}
