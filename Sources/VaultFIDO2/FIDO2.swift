internal import CFIDO2Shims
import Foundation
import VaultCrypto

/// What an authenticator says about itself (authenticatorGetInfo).
public struct FIDO2Info: Equatable, Sendable {
    /// Whether a PIN is set, can be set, or cannot be (no clientPin).
    public enum PIN: Equatable, Sendable { case set, notSet, unsupported }
    /// True when the authenticator speaks CTAP2 (false: U2F only, no hmac-secret).
    public var ctap2: Bool
    /// The authenticator's PIN.
    public var pin: PIN
    /// True when it lists the hmac-secret extension.
    public var hmacSecret: Bool
}

/// One open FIDO2 authenticator through libfido2: a security key on HID, or, in tests, a software
/// authenticator on a Unix socket speaking CTAPHID reports (scripts/soft-fido2.py). Not
/// thread-safe; close it when done (also on deinit).
public final class FIDO2Authenticator {
    private var dev: OpaquePointer?
    /// The device path (or test socket) for messages.
    public let path: String

    /// Opens `device` (a hidraw path), the first security key the system lists when nil, or,
    /// when `testSocket` is given, the software authenticator listening there (the caller decides
    /// when that is allowed). Each operation waits at most `timeoutMs` (a touch included).
    public init(device: String? = nil, testSocket: String? = nil, timeoutMs: Int32 = 30_000) throws(FIDO2Error) {
        var target = device ?? ""
        if let testSocket {
            guard FileManager.default.fileExists(atPath: testSocket) else { throw .noDevice }
            target = testSocket
        } else if device == nil {
            var buf = [CChar](repeating: 0, count: Int(CFIDO2Shims_MaxPath))
            let rc = CFIDO2Shims_firstDevice(&buf, buf.count)
            guard rc == 0 else { throw Int(rc) == CFIDO2Shims_ERR_NOTFOUND ? .noDevice : Self.error(rc) }
            target = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        } else if !FileManager.default.fileExists(atPath: target) {
            throw .noDevice
        }
        path = target
        var d: OpaquePointer?
        let rc = testSocket != nil ? CFIDO2Shims_open(nil, target, timeoutMs, &d) : CFIDO2Shims_open(target, nil, timeoutMs, &d)
        guard rc == 0, let d else { throw Self.error(rc, opening: true) }
        dev = d
    }

    deinit { CFIDO2Shims_close(dev) }

    /// Closes the authenticator now.
    public func close() { CFIDO2Shims_close(dev); dev = nil }

    /// What the authenticator supports (CTAP2, a PIN, hmac-secret).
    public func info() throws(FIDO2Error) -> FIDO2Info {
        var ctap2: Int32 = 0, pin: Int32 = 0, hmac: Int32 = 0
        let rc = CFIDO2Shims_info(dev, &ctap2, &pin, &hmac)
        guard rc == 0 else { throw Self.error(rc) }
        return FIDO2Info(ctap2: ctap2 == 1, pin: pin == 1 ? .set : pin == 0 ? .notSet : .unsupported, hmacSecret: hmac == 1)
    }

    /// The PIN tries left before the key blocks its PIN.
    public func pinRetries() throws(FIDO2Error) -> Int {
        var n: Int32 = 0
        let rc = CFIDO2Shims_retries(dev, &n)
        guard rc == 0 else { throw Self.error(rc) }
        return Int(n)
    }

    /// Makes a non-discoverable credential with hmac-secret for relying party `rp` (the user
    /// touches the key; `pin` when it has one) and returns its id.
    public func makeCredential(rp: String, userId: [UInt8], pin: SecureBytes?) throws(FIDO2Error) -> [UInt8] {
        let info = try info()
        guard info.ctap2 else { throw .unsupported("it speaks U2F only, not FIDO2") }
        guard info.hmacSecret else { throw .unsupported("it has no hmac-secret extension") }
        var id = [UInt8](repeating: 0, count: Int(CFIDO2Shims_MaxCredentialId))
        var len = 0
        let cdh = SecureRandom.bytes(32)
        let rc = Self.withPIN(pin) { p in
            id.withUnsafeMutableBufferPointer { out in
                CFIDO2Shims_makeCredential(dev, rp, userId, userId.count, cdh, p, out.baseAddress, out.count, &len)
            }
        }
        guard rc == 0 else { throw try wrongPINCounted(rc) }
        return Array(id.prefix(len))
    }

    /// The hmac-secret output of credential `credentialId` for `salt` (one 32-byte salt, or two
    /// concatenated: both outputs from one touch), as many bytes as `salt`. The user touches the
    /// key; `pin` when the slot was enrolled with one.
    public func hmacSecret(rp: String, credentialId: [UInt8], salt: [UInt8], pin: SecureBytes?) throws(FIDO2Error) -> SecureBytes {
        let one = Int(CFIDO2Shims_SecretLength)
        guard salt.count == one || salt.count == 2 * one, !credentialId.isEmpty else {
            throw .malformed("a salt is 32 bytes (or two), a credential id not empty")
        }
        let out = SecureBytes(count: salt.count)
        let cdh = SecureRandom.bytes(32)
        let rc = Self.withPIN(pin) { p in
            out.withUnsafeMutableBytes { o in
                CFIDO2Shims_hmacSecret(dev, rp, credentialId, credentialId.count, salt, salt.count, cdh, p,
                                       o.bindMemory(to: UInt8.self).baseAddress)
            }
        }
        guard rc == 0 else { throw try wrongPINCounted(rc) }
        return out
    }

    /// A wrong PIN says how many tries are left (asked of the key).
    private func wrongPINCounted(_ rc: Int32) throws(FIDO2Error) -> FIDO2Error {
        let e = Self.error(rc)
        if case .wrongPIN = e { return .wrongPIN(retriesLeft: try? pinRetries()) }
        return e
    }

    /// Runs `body` with `pin` as a NUL-terminated C string in a buffer wiped afterwards.
    private static func withPIN<R>(_ pin: SecureBytes?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let pin else { return body(nil) }
        let c = SecureBytes(count: pin.count + 1)
        c.withUnsafeMutableBytes { dst in pin.withUnsafeBytes { src in dst.copyMemory(from: src) } }
        return c.withUnsafeBytes { body($0.bindMemory(to: CChar.self).baseAddress) }
    }

    /// The typed error for a libfido2 status.
    static func error(_ rc: Int32, opening: Bool = false) -> FIDO2Error {
        switch Int(rc) {
        case CFIDO2Shims_ERR_PIN_INVALID: return .wrongPIN(retriesLeft: nil)
        case CFIDO2Shims_ERR_PIN_BLOCKED: return .pinBlocked(untilReplug: false)
        case CFIDO2Shims_ERR_PIN_AUTH_BLOCKED: return .pinBlocked(untilReplug: true)
        case CFIDO2Shims_ERR_PIN_REQUIRED: return .pinRequired
        case CFIDO2Shims_ERR_PIN_NOT_SET: return .pinNotSet
        case CFIDO2Shims_ERR_USER_ACTION_TIMEOUT, CFIDO2Shims_ERR_ACTION_TIMEOUT,
             CFIDO2Shims_ERR_OPERATION_DENIED, CFIDO2Shims_ERR_UP_REQUIRED,
             CFIDO2Shims_ERR_USER_PRESENCE_REQUIRED: return .notTouched
        case CFIDO2Shims_ERR_NO_CREDENTIALS: return .otherAuthenticator
        case CFIDO2Shims_ERR_UNSUPPORTED_EXTENSION: return .unsupported("it has no hmac-secret extension")
        case CFIDO2Shims_ERR_NOTFOUND: return .noDevice
        case CFIDO2Shims_ERR_TX, CFIDO2Shims_ERR_RX:
            return .unreachable(detail: String(cString: CFIDO2Shims_describe(rc)))
        case CFIDO2Shims_ERR_RX_NOT_CBOR, CFIDO2Shims_ERR_RX_INVALID_CBOR, CFIDO2Shims_ERR_INVALID_PARAM:
            return .malformed(String(cString: CFIDO2Shims_describe(rc)))
        case _ where opening: return .unreachable(detail: String(cString: CFIDO2Shims_describe(rc)))
        default: return .failed(code: rc, description: String(cString: CFIDO2Shims_describe(rc)))
        }
    }
}
