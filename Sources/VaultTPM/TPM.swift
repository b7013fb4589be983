import CTPMShims
import Foundation
import VaultCrypto

/// A secret sealed by a TPM: its public and private areas as tpm2-tss marshals them
/// (TPM2B_PUBLIC, TPM2B_PRIVATE) and the PCRs its policy is bound to. Only the TPM that made it
/// can load it; only its policy (PCR values, then the auth value) can unseal it.
public struct TPMSealedObject: Equatable, Sendable {
    public var publicArea: [UInt8]
    public var privateArea: [UInt8]
    public var pcrs: PCRSelection

    public init(publicArea: [UInt8], privateArea: [UInt8], pcrs: PCRSelection) {
        self.publicArea = publicArea; self.privateArea = privateArea; self.pcrs = pcrs
    }
}

/// The TPM's dictionary-attack state: failures counted now and the most before lockout.
public struct TPMLockoutState: Equatable, Sendable {
    public var failures: Int
    public var maxFailures: Int
    /// Seconds after which one failure is forgotten, and seconds a lockout lasts.
    public var failureForgetSeconds: Int
    public var lockoutSeconds: Int
    /// How many more wrong PINs the TPM accepts before it locks out.
    public var triesLeft: Int { max(0, maxFailures - failures) }
}

/// One connection to a TPM 2.0 through tpm2-tss (ESAPI over a TCTI: the kernel's resource
/// manager `/dev/tpmrm0`, or swtpm's socket in tests). Not thread-safe; close it when done (also
/// on deinit). The primary key is derived afresh for each operation and flushed after it.
public final class TPM {
    /// The TCTI configuration used when none is given: the kernel's resource manager.
    public static let defaultDevice = "/dev/tpmrm0"

    private var ctx: OpaquePointer?
    /// What `open` was given, for messages.
    public let tcti: String

    /// Opens the TPM named by `tcti` (tpm2-tss syntax: `device:/dev/tpmrm0`, `swtpm:path=S`);
    /// nil means `device:/dev/tpmrm0`. A missing device or one this user may not open is named
    /// as such before tpm2-tss is asked.
    public init(tcti: String? = nil) throws(TPMError) {
        let conf = tcti ?? "device:\(Self.defaultDevice)"
        self.tcti = conf
        if let path = Self.devicePath(conf) {
            guard FileManager.default.fileExists(atPath: path) else { throw .noDevice(path: path) }
            guard access(path, R_OK | W_OK) == 0 else { throw .permissionDenied(path: path) }
        }
        // tpm2-tss logs every TPM error to stderr; the typed error says it once, in words.
        setenv("TSS2_LOG", "all+NONE", 0)
        var c: OpaquePointer?
        let rc = CTPMShims_open(conf, &c)
        guard rc == 0, let c else { throw Self.error(rc) }
        ctx = c
    }

    deinit { CTPMShims_close(ctx) }

    /// Closes the connection now.
    public func close() { CTPMShims_close(ctx); ctx = nil }

    /// The device path of a `device:` configuration, if it is one.
    static func devicePath(_ conf: String) -> String? {
        guard conf.hasPrefix("device") else { return nil }
        let rest = conf.dropFirst("device".count)
        if rest.isEmpty { return defaultDevice }
        guard rest.first == ":" else { return nil }
        return rest.count > 1 ? String(rest.dropFirst()) : defaultDevice
    }

    /// The name of this TPM's primary key: it identifies the TPM (its owner seed). A slot stores
    /// it so that a slot of another machine is recognised without trying it.
    public func primaryName() throws(TPMError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(CTPMShims_MaxName))
        var len = 0
        let rc = retryingWhenFull { out.withUnsafeMutableBufferPointer { CTPMShims_primaryName(ctx, $0.baseAddress, $0.count, &len) } }
        guard rc == 0 else { throw Self.error(rc) }
        return Array(out.prefix(len))
    }

    /// Seals `secret` (1…128 bytes) with the auth value `auth` (0…32 bytes; empty: no PIN),
    /// bound to the current values of `pcrs` when not empty.
    public func seal(_ secret: SecureBytes, auth: SecureBytes?, pcrs: PCRSelection) throws(TPMError) -> TPMSealedObject {
        var pub = [UInt8](repeating: 0, count: Int(CTPMShims_MaxPublic))
        var priv = [UInt8](repeating: 0, count: Int(CTPMShims_MaxPrivate))
        var pubLen = 0, privLen = 0
        let rc: UInt32 = retryingWhenFull { secret.withUnsafeBytes { s in
            Self.withAuth(auth) { a in
                pub.withUnsafeMutableBufferPointer { p in
                    priv.withUnsafeMutableBufferPointer { q in
                        CTPMShims_seal(ctx, s.bindMemory(to: UInt8.self).baseAddress, s.count,
                                       a.bindMemory(to: UInt8.self).baseAddress, a.count, pcrs.mask,
                                       p.baseAddress, p.count, &pubLen, q.baseAddress, q.count, &privLen)
                    }
                }
            }
        } }
        guard rc == 0 else { throw Self.error(rc) }
        return TPMSealedObject(publicArea: Array(pub.prefix(pubLen)), privateArea: Array(priv.prefix(privLen)), pcrs: pcrs)
    }

    /// Unseals `object` with `auth`. A wrong PIN says how many tries are left (read from the TPM).
    public func unseal(_ object: TPMSealedObject, auth: SecureBytes?) throws(TPMError) -> SecureBytes {
        let out = SecureBytes(count: Int(CTPMShims_MaxSecret))
        var len = 0
        let rc: UInt32 = retryingWhenFull { object.publicArea.withUnsafeBufferPointer { p in
            object.privateArea.withUnsafeBufferPointer { q in
                Self.withAuth(auth) { a in
                    out.withUnsafeMutableBytes { o in
                        CTPMShims_unseal(ctx, p.baseAddress, p.count, q.baseAddress, q.count,
                                         a.bindMemory(to: UInt8.self).baseAddress, a.count, object.pcrs.mask,
                                         o.bindMemory(to: UInt8.self).baseAddress, o.count, &len)
                    }
                }
            }
        } }
        guard rc == 0 else {
            var e = Self.error(rc)
            if case .wrongPIN = e { e = .wrongPIN(triesLeft: (try? lockoutState())?.triesLeft) }
            if case .lockedOut = e { e = .lockedOut(recoverySeconds: (try? lockoutState())?.lockoutSeconds) }
            throw e
        }
        return out.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<len])) }
    }

    /// Runs one TPM operation (`body` returns its response code); when the TPM is out of object
    /// or session memory — contexts that a client cut off mid-call left loaded, on a TPM reached
    /// without a resource manager (swtpm's socket, `/dev/tpm0`) — flushes them
    /// (`CTPMShims_flushStale`) and runs it once more. The TPM refuses a load before it checks an
    /// auth value, so the retry spends no PIN try.
    private func retryingWhenFull(_ body: () -> UInt32) -> UInt32 {
        let rc = body()
        let base = CTPMShims_baseCode(rc)
        guard base == UInt32(CTPMShims_RC_OBJECT_MEMORY) || base == UInt32(CTPMShims_RC_SESSION_MEMORY),
              CTPMShims_flushStale(ctx) == 0 else { return rc }
        return body()
    }

    /// The dictionary-attack counters.
    public func lockoutState() throws(TPMError) -> TPMLockoutState {
        var counter: UInt32 = 0, maxTries: UInt32 = 0, interval: UInt32 = 0, recovery: UInt32 = 0
        let rc = CTPMShims_lockout(ctx, &counter, &maxTries, &interval, &recovery)
        guard rc == 0 else { throw Self.error(rc) }
        return TPMLockoutState(failures: Int(counter), maxFailures: Int(maxTries),
                               failureForgetSeconds: Int(interval), lockoutSeconds: Int(recovery))
    }

    /// Extends PCR `index` (SHA-256 bank) with a 32-byte `digest`: what a boot change does (tests).
    public func extendPCR(_ index: Int, digest: [UInt8]) throws(TPMError) {
        guard digest.count == 32, (0..<24).contains(index) else { throw .malformed("a PCR digest is 32 bytes, its index 0…23") }
        let rc = digest.withUnsafeBufferPointer { CTPMShims_extendPCR(ctx, UInt32(index), $0.baseAddress) }
        guard rc == 0 else { throw Self.error(rc) }
    }

    private static func withAuth<R>(_ auth: SecureBytes?, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let auth else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return auth.withUnsafeBytes(body)
    }

    /// The typed error for a tpm2-tss response code.
    static func error(_ rc: UInt32) -> TPMError {
        let base = CTPMShims_baseCode(rc)
        let layer = rc & 0xFF_0000
        switch base {
        case UInt32(CTPMShims_RC_AUTH_FAIL), UInt32(CTPMShims_RC_BAD_AUTH): return .wrongPIN(triesLeft: nil)
        case UInt32(CTPMShims_RC_LOCKOUT): return .lockedOut(recoverySeconds: nil)
        case UInt32(CTPMShims_RC_POLICY_FAIL), UInt32(CTPMShims_RC_PCR_CHANGED): return .pcrsChanged
        case UInt32(CTPMShims_RC_INTEGRITY): return .otherTPM
        case UInt32(CTPMShims_RC_ARGUMENT): return .malformed("a size out of range")
        default: break
        }
        let text = String(cString: CTPMShims_describe(rc))
        if layer == UInt32(CTPMShims_LayerTCTI) { return .unreachable(detail: text) }
        // tpm2-tss's marshalling layer refusing a stored object: damaged bytes, not the TPM.
        if layer == 0x09_0000 { return .malformed(text) }
        return .failed(code: rc, description: text)
    }
}
