/// Every failure the vault reports: what went wrong and what to do next. Each kind maps to a
/// stable process exit code (documented in README.md) so scripts can react.
public struct VaultError: Error, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable {
        case usage              // bad arguments
        case notInitialized     // no vault here
        case alreadyExists      // init over an existing vault, name collision
        case wrongPassword      // password or key did not unlock
        case locked             // needs unlock / session expired
        case notFound           // no such path
        case invalidName        // a name the tree refuses
        case integrity          // tampered or damaged data: blob, keyslot file, database
        case busy               // another command holds the vault lock
        case noSpace            // not enough free space
        case insecure           // permissions or environment make it unsafe
        case notLocal           // content not on this device
        case conflict           // the operation conflicts with the tree
        case policy             // forbidden by the enterprise policy, or the policy itself is invalid
        case io                 // an operating-system error
        case internalError
    }
    public let kind: Kind
    public let message: String
    /// What the user can do about it, if anything.
    public let hint: String?

    public init(_ kind: Kind, _ message: String, hint: String? = nil) {
        self.kind = kind; self.message = message; self.hint = hint
    }

    /// The process exit code for this kind (stable; see README "Exit codes").
    public var exitCode: Int32 {
        switch kind {
        case .usage: return 2
        case .wrongPassword, .locked: return 3
        case .notFound, .notInitialized: return 4
        case .alreadyExists, .conflict, .invalidName: return 5
        case .integrity: return 6
        case .busy: return 7
        case .noSpace: return 8
        case .insecure: return 9
        case .notLocal: return 10
        case .policy: return 11
        case .io, .internalError: return 1
        }
    }

    public var description: String {
        hint.map { "\(message)\n  hint: \($0)" } ?? message
    }
}

/// An error of a layer above that knows which `VaultError` it is (the database's, a source
/// file's): `VaultError.wrap` asks it, so this module need not know those layers.
public protocol VaultErrorConvertible: Error {
    /// The error as the vault reports it.
    var vaultError: VaultError { get }
}

extension VaultError {
    /// Any error as a VaultError: a `VaultErrorConvertible` says which (database damage is
    /// `.integrity`, a full disk `.noSpace`); anything else is an internal error.
    public static func wrap(_ error: Error) -> VaultError {
        if let v = error as? VaultError { return v }
        if let c = error as? VaultErrorConvertible { return c.vaultError }
        return VaultError(.internalError, "unexpected error: \(error)")
    }
}
