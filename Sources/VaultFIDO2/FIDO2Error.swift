/// Why a FIDO2 operation did not happen, in the terms a user can act on. `vault unlock` names it
/// when it falls back to the password.
public enum FIDO2Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// No FIDO2 security key is plugged in (or none this user may open: Debian's udev rules give
    /// the logged-in user access to known keys).
    case noDevice
    /// The authenticator did not answer, or went away mid-call.
    case unreachable(detail: String)
    /// The PIN was wrong; `retriesLeft` more before the key blocks its PIN (when it says).
    case wrongPIN(retriesLeft: Int?)
    /// Too many wrong PINs: the key's PIN is blocked (for good, until it is reset, which also
    /// destroys its credentials), or until it is unplugged and plugged in again (`untilReplug`).
    case pinBlocked(untilReplug: Bool)
    /// The key has a PIN and the operation needs it (none was given).
    case pinRequired
    /// A PIN was given but the key has none set.
    case pinNotSet
    /// The key was not touched in time, or the touch was refused.
    case notTouched
    /// The key does not hold the credential: the slot was enrolled with another security key.
    case otherAuthenticator
    /// The key does not support the hmac-secret extension (or is U2F only).
    case unsupported(String)
    /// The authenticator's answer was not what CTAP2 specifies (damaged or hostile).
    case malformed(String)
    /// Any other libfido2 status, with libfido2's description.
    case failed(code: Int32, description: String)

    public var description: String {
        switch self {
        case .noDevice: return "no FIDO2 security key found"
        case .unreachable(let d): return "the FIDO2 security key did not answer (\(d))"
        case .wrongPIN(let left):
            return "wrong FIDO2 PIN" + (left.map { "; \($0) \($0 == 1 ? "try" : "tries") left before the key blocks its PIN" } ?? "")
        case .pinBlocked(let replug):
            return replug ? "the FIDO2 key refuses PINs after 3 wrong ones in a row (unplug it and plug it in again)"
                : "the FIDO2 key's PIN is blocked after too many wrong PINs"
        case .pinRequired: return "the FIDO2 key has a PIN and it was not given"
        case .pinNotSet: return "the FIDO2 key has no PIN set"
        case .notTouched: return "the FIDO2 key was not touched in time"
        case .otherAuthenticator: return "the FIDO2 slot belongs to another security key (this one does not hold its credential)"
        case .unsupported(let why): return "the FIDO2 key cannot be used (\(why))"
        case .malformed(let why): return "the FIDO2 key's answer is malformed (\(why))"
        case .failed(let code, let d): return "the FIDO2 key refused (\(code): \(d))"
        }
    }
}
