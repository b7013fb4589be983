/// Errors thrown by VaultCrypto.
///
/// Every case carries a sentence for people. `authenticationFailed` deliberately does not say *which*
/// check failed inside the AEAD (tag, key or data); the message only says *what* was being opened
/// (for example "segment 3 of blob 00ff…"), so the caller can tell a wrong key from corruption by
/// where it happened, not by leaking a distinguisher.
public enum CryptoError: Error, Equatable, CustomStringConvertible {
    /// Tag mismatch, wrong key or tampered data.
    case authenticationFailed(String)
    /// Bad magic, version, sizes, or a truncated structure.
    case invalidFormat(String)
    /// A caller passed a value outside the documented range.
    case invalidParameter(String)
    /// The requested primitive or backend is not usable on this machine.
    case unavailable(String)
    /// A C library reported an error (including I/O errors while reading a sealed blob).
    case internalFailure(String)

    public var description: String {
        switch self {
        case .authenticationFailed(let message): "authentication failed: \(message)"
        case .invalidFormat(let message): "invalid format: \(message)"
        case .invalidParameter(let message): "invalid parameter: \(message)"
        case .unavailable(let message): "unavailable: \(message)"
        case .internalFailure(let message): "internal failure: \(message)"
        }
    }
}
