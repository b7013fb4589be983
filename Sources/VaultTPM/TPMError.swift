/// Why a TPM operation did not happen, in the terms a user can act on. `vault unlock` names it
/// when it falls back to the password.
public enum TPMError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No TPM at this path (the machine has none, or it is disabled in the firmware).
    case noDevice(path: String)
    /// The device exists but this user may not open it (Debian gives `/dev/tpmrm0` to group `tss`).
    case permissionDenied(path: String)
    /// The TPM did not answer: the device or socket went away, or the transport failed mid-call.
    case unreachable(detail: String)
    /// The PIN was wrong; `triesLeft` more failures (when the TPM says) before it locks out.
    case wrongPIN(triesLeft: Int?)
    /// The TPM is in dictionary-attack lockout: no PIN is tried until `recoverySeconds` pass.
    case lockedOut(recoverySeconds: Int?)
    /// The PCRs the slot is bound to hold other values than at enrollment (a firmware or boot
    /// change): only the password opens the vault until the slot is enrolled again.
    case pcrsChanged
    /// The sealed object was made by another TPM (or before this TPM was cleared).
    case otherTPM
    /// The stored object is not a well-formed TPM object (damaged or tampered with).
    case malformed(String)
    /// Any other TPM or tpm2-tss response, with tpm2-tss's description.
    case failed(code: UInt32, description: String)

    public var description: String {
        switch self {
        case .noDevice(let p): return "no TPM found (\(p) does not exist)"
        case .permissionDenied(let p): return "no permission to use the TPM (\(p); add this user to group tss)"
        case .unreachable(let d): return "the TPM did not answer (\(d))"
        case .wrongPIN(let left):
            return "wrong TPM PIN" + (left.map { "; \($0) \($0 == 1 ? "try" : "tries") left before the TPM locks out" } ?? "")
        case .lockedOut(let s):
            return "the TPM is locked out after too many wrong PINs" + (s.map { $0 > 0 ? " (for up to \($0) s)" : "" } ?? "")
        case .pcrsChanged: return "the TPM's PCR values changed since the slot was enrolled (a firmware or boot change)"
        case .otherTPM: return "the TPM slot belongs to another machine's TPM (or this TPM was cleared)"
        case .malformed(let why): return "the TPM slot is damaged (\(why))"
        case .failed(let code, let d): return "the TPM refused (0x\(String(code, radix: 16)): \(d))"
        }
    }
}
