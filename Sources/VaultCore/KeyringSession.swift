import Foundation
internal import CSecretShims
import VaultCrypto
import VaultPrimitives

/// Holds an unlocked vault's master key between commands in the desktop keyring (the Secret
/// Service, through libsecret): schema `org.vault.Session`, attribute `vault` = the vault id.
///
/// The item's secret is ASCII `v1:<epoch>:<unlockedAt>:<lastUsedAt>:<idleSeconds>:<absoluteSeconds>:<masterKeyHex>`.
/// Any process of the same user can read an unlocked keyring: that is the protection libsecret
/// gives, and why sessions time out.
public struct KeyringSession {
    /// One unlocked session.
    public struct Record {
        public var masterKey: SecureBytes
        public var epoch: UInt32
        public var unlockedAt: Int64
        public var lastUsedAt: Int64
        public var idleTimeout: Int64
        public var absoluteTimeout: Int64

        public init(masterKey: SecureBytes, epoch: UInt32, unlockedAt: Int64, lastUsedAt: Int64, idleTimeout: Int64, absoluteTimeout: Int64) {
            self.masterKey = masterKey; self.epoch = epoch; self.unlockedAt = unlockedAt
            self.lastUsedAt = lastUsedAt; self.idleTimeout = idleTimeout; self.absoluteTimeout = absoluteTimeout
        }

        /// Why the session has ended at `now`, or nil while it is valid.
        public func expiry(now: Int64) -> String? {
            if absoluteTimeout > 0 && now - unlockedAt >= absoluteTimeout {
                return "the vault locked itself \(Duration.describe(absoluteTimeout)) after it was unlocked (absolute timeout)"
            }
            if idleTimeout > 0 && now - lastUsedAt >= idleTimeout {
                return "the vault locked itself after \(Duration.describe(idleTimeout)) without use (idle timeout)"
            }
            return nil
        }
    }

    /// Whether a Secret Service answers; `reason` says why not.
    public static func availability(environment: [String: String] = ProcessInfo.processInfo.environment) -> (available: Bool, reason: String) {
        if environment["VAULT_NO_KEYRING"] == "1" { return (false, "VAULT_NO_KEYRING=1 is set") }
        guard let bus = environment["DBUS_SESSION_BUS_ADDRESS"], !bus.isEmpty else {
            return (false, "there is no D-Bus session (DBUS_SESSION_BUS_ADDRESS is unset)")
        }
        var err: UnsafeMutablePointer<CChar>?
        if CSecretShims_service_available(&err) == 1 { return (true, "") }
        let msg = err.map { String(cString: $0) } ?? "no Secret Service"
        CSecretShims_free(err)
        return (false, "no Secret Service answered (\(msg))")
    }

    let vaultId: String

    public init(vaultId: String) { self.vaultId = vaultId }

    private func fail(_ what: String, _ err: UnsafeMutablePointer<CChar>?) -> VaultError {
        let msg = err.map { String(cString: $0) } ?? "unknown error"
        CSecretShims_free(err)
        return VaultError(.io, "keyring \(what) failed: \(msg)")
    }

    /// Stores (replaces) the session item.
    public func store(_ r: Record) throws {
        var text = Array("v1:\(r.epoch):\(r.unlockedAt):\(r.lastUsedAt):\(r.idleTimeout):\(r.absoluteTimeout):".utf8.map { CChar(bitPattern: $0) })
        let prefix = text.count
        r.masterKey.withUnsafeBytes { mk in
            text += [CChar](repeating: 0, count: mk.count * 2)
            text.withUnsafeMutableBytes { Hex.encode(mk, into: UnsafeMutableRawBufferPointer(rebasing: $0[prefix...])) }
        }
        text.append(0)
        defer { for i in text.indices { text[i] = 0 } }
        var err: UnsafeMutablePointer<CChar>?
        let rc = CSecretShims_store(vaultId, "vault \(vaultId.prefix(8)) session key", text, &err)
        if rc != 0 { throw fail("store", err) }
    }

    /// The stored session, or nil when the vault is locked.
    public func lookup() throws -> Record? {
        var out: UnsafeMutablePointer<CChar>?
        var err: UnsafeMutablePointer<CChar>?
        let rc = CSecretShims_lookup(vaultId, &out, &err)
        if rc == 1 { return nil }
        if rc != 0 { throw fail("lookup", err) }
        guard let out else { return nil }
        defer { CSecretShims_free_secret(out) }
        let n = strlen(out)
        let bytes = UnsafeRawBufferPointer(start: out, count: n)
        // Split on ':' into 7 fields; the last is the key in hex.
        var fields: [Range<Int>] = []
        var start = 0
        for i in 0..<n where bytes[i] == UInt8(ascii: ":") && fields.count < 6 {
            fields.append(start..<i); start = i + 1
        }
        fields.append(start..<n)
        guard fields.count == 7, String(decoding: bytes[fields[0]], as: UTF8.self) == "v1" else {
            try? clear()
            return nil
        }
        func num(_ k: Int) -> Int64? { Int64(String(decoding: bytes[fields[k]], as: UTF8.self)) }
        guard let epoch = num(1), let ua = num(2), let lu = num(3), let idle = num(4), let abs = num(5),
              fields[6].count == 64 else { try? clear(); return nil }
        let key = SecureBytes(count: 32)
        var valid = true
        key.withUnsafeMutableBytes { k in
            func nib(_ c: UInt8) -> UInt8? {
                switch c { case 48...57: return c - 48; case 97...102: return c - 87; default: return nil }
            }
            for j in 0..<32 {
                let hi = nib(bytes[fields[6].lowerBound + 2 * j]), lo = nib(bytes[fields[6].lowerBound + 2 * j + 1])
                guard let hi, let lo else { valid = false; return }
                k[j] = hi << 4 | lo
            }
        }
        guard valid else { try? clear(); return nil }
        return Record(masterKey: key, epoch: UInt32(truncatingIfNeeded: epoch), unlockedAt: ua, lastUsedAt: lu,
                      idleTimeout: idle, absoluteTimeout: abs)
    }

    /// Removes the session item; true when one was there.
    @discardableResult
    public func clear() throws -> Bool {
        var err: UnsafeMutablePointer<CChar>?
        let rc = CSecretShims_clear(vaultId, &err)
        if rc < 0 { throw fail("clear", err) }
        return rc == 0
    }
}

/// Human durations ("15m", "8h", "90s") for timeouts.
public enum Duration {
    public static func parse(_ s: String) -> Int64? {
        guard let last = s.last else { return nil }
        let mult: Int64
        var digits = s
        switch last {
        case "s": mult = 1; digits.removeLast()
        case "m": mult = 60; digits.removeLast()
        case "h": mult = 3600; digits.removeLast()
        case "d": mult = 86400; digits.removeLast()
        default: mult = 1
        }
        guard let v = Int64(digits), v >= 0 else { return nil }
        return v * mult
    }

    public static func describe(_ seconds: Int64) -> String {
        if seconds % 3600 == 0 && seconds >= 3600 { return "\(seconds / 3600) h" }
        if seconds % 60 == 0 && seconds >= 60 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }
}
