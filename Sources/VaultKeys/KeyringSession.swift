import Foundation
internal import CSecretShims
import VaultCrypto
import VaultPrimitives
import VaultTPM

/// Holds an unlocked vault's master key between commands in the desktop keyring (the Secret
/// Service, through libsecret): schema `org.vault.LocalSession`, attributes `vault` = the vault
/// id and `copy` = this local copy's id (`VaultLayout.localId`), so two local copies of one vault
/// (a `vault join` into a second folder) each have their own session. Neither attribute is
/// secret (other applications of the user can read them).
///
/// The item's secret is ASCII, one of three forms:
/// - `v1:<epoch>:<unlockedAt>:<lastUsedAt>:<idleSeconds>:<absoluteSeconds>:<masterKeyHex>` when
///   no agent runs: the master key itself, and deadlines every command enforces;
/// - `v3:<epoch>:<unlockedAt>:<lastUsedAt>:<idleSeconds>:<absoluteSeconds>:<public>:<private>:<nonce>:<sealed>`
///   when no agent runs and this machine's TPM holds one of the vault's tpm2 slots: the same
///   deadlines, and the master key sealed under a session key only this TPM unseals
///   (`TPMSessionKey`);
/// - `v2:…` while a `vault agent` holds the session (`AgentWrappedKey`): the master key sealed
///   under a key only the agent has, and no deadlines (the agent's timers enforce them).
///
/// Any process of the same user can read an unlocked keyring: that is the protection libsecret
/// gives, why sessions time out, and why the agent keeps the item worth nothing on its own.
public struct KeyringSession {
    /// What the item holds.
    public enum Item {
        /// `v1`: the master key and its deadlines.
        case direct(Record)
        /// `v2`: the master key sealed under a running agent's key.
        case agentWrapped(AgentWrappedKey)
        /// A `v3` item this command cannot open, and why: this TPM cannot be used now (the item
        /// is kept), or the item does not open under it (altered, or another machine's: removed).
        case unusable(String)
    }

    /// One unlocked session.
    public struct Record {
        public var masterKey: SecureBytes
        public var epoch: UInt32
        public var unlockedAt: Int64
        public var lastUsedAt: Int64
        public var idleTimeout: Int64
        public var absoluteTimeout: Int64
        /// The TPM-sealed session key the item wraps the master key under (`v3`); nil: `v1`.
        public var hardware: TPMSessionKey?

        public init(masterKey: SecureBytes, epoch: UInt32, unlockedAt: Int64, lastUsedAt: Int64, idleTimeout: Int64, absoluteTimeout: Int64,
                    hardware: TPMSessionKey? = nil) {
            self.masterKey = masterKey; self.epoch = epoch; self.unlockedAt = unlockedAt
            self.lastUsedAt = lastUsedAt; self.idleTimeout = idleTimeout; self.absoluteTimeout = absoluteTimeout
            self.hardware = hardware
        }

        /// Why the session has ended at `now`, or nil while it is valid.
        public func expiry(now: Int64) -> String? {
            if absoluteTimeout > 0 && now - unlockedAt >= absoluteTimeout { return Self.absoluteExpiry(absoluteTimeout) }
            if idleTimeout > 0 && now - lastUsedAt >= idleTimeout { return Self.idleExpiry(idleTimeout) }
            return nil
        }

        /// What a session that reached its absolute timeout says.
        public static func absoluteExpiry(_ seconds: Int64) -> String {
            "the vault locked itself \(Duration.describe(seconds)) after it was unlocked (absolute timeout)"
        }

        /// What a session that reached its idle timeout says.
        public static func idleExpiry(_ seconds: Int64) -> String {
            "the vault locked itself after \(Duration.describe(seconds)) without use (idle timeout)"
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
    /// This local copy's id (`VaultLayout.localId(vaultId:)`).
    let copyId: String

    public init(vaultId: String, copyId: String) { self.vaultId = vaultId; self.copyId = copyId }

    /// The session item of the vault in `layout` (this local copy of `vaultId`).
    public init(vaultId: String, layout: VaultLayout) {
        self.init(vaultId: vaultId, copyId: layout.localId(vaultId: vaultId))
    }

    private func fail(_ what: String, _ err: UnsafeMutablePointer<CChar>?) -> VaultError {
        let msg = err.map { String(cString: $0) } ?? "unknown error"
        CSecretShims_free(err)
        return VaultError(.io, "keyring \(what) failed: \(msg)")
    }

    /// Stores (replaces) the item with an agent-wrapped key (`v2`).
    public func store(_ w: AgentWrappedKey) throws { try storeText(w.text, label: "agent-wrapped, ") }

    /// Removes every vault session item of this user (every vault, every local copy, and the items
    /// of older versions): `vault lock --all`.
    /// Returns whether any was there.
    @discardableResult
    public static func clearAll() throws -> Bool {
        var err: UnsafeMutablePointer<CChar>?
        let rc = CSecretShims_clear_all(&err)
        if rc < 0 {
            let msg = err.map { String(cString: $0) } ?? "unknown error"
            CSecretShims_free(err)
            throw VaultError(.io, "keyring clear failed: \(msg)")
        }
        return rc == 0
    }

    /// Stores (replaces) the session item with the master key itself (`v1`, no agent), or
    /// wrapped under `r.hardware` (`v3`, sealed again with a fresh nonce at every store).
    public func store(_ r: Record) throws {
        if let hardware = r.hardware { return try storeText(TPMWrappedSession.wrap(r, hardware, vaultId: vaultId, copyId: copyId), label: "TPM-wrapped, ") }
        var text = Array("v1:\(r.epoch):\(r.unlockedAt):\(r.lastUsedAt):\(r.idleTimeout):\(r.absoluteTimeout):".utf8.map { CChar(bitPattern: $0) })
        let prefix = text.count
        // Room for the hex and the terminating NUL first: no later growth copies (and frees
        // unwiped) a buffer that already holds the key's hex.
        text += [CChar](repeating: 0, count: r.masterKey.count * 2 + 1)
        r.masterKey.withUnsafeBytes { mk in
            text.withUnsafeMutableBytes { Hex.encode(mk, into: UnsafeMutableRawBufferPointer(rebasing: $0[prefix..<(prefix + mk.count * 2)])) }
        }
        defer { text.wipe() }
        var err: UnsafeMutablePointer<CChar>?
        let rc = CSecretShims_store(vaultId, copyId, "vault \(vaultId.prefix(8)) session key (copy \(copyId.prefix(8)))", text, &err)
        if rc != 0 { throw fail("store", err) }
    }

    /// Stores (replaces) the item with `text`, which holds no key in clear (`v2`, `v3`).
    private func storeText(_ text: String, label: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        if CSecretShims_store(vaultId, copyId, "vault \(vaultId.prefix(8)) session key (\(label)copy \(copyId.prefix(8)))", text, &err) != 0 {
            throw fail("store", err)
        }
    }

    /// The stored item, or nil when the vault is locked. An item in no form is removed. A `v3`
    /// item is opened through the TPM of `tcti`.
    public func lookup(tcti: String? = TPMSessionKey.configuration(ProcessInfo.processInfo.environment)) throws -> Item? {
        var out: UnsafeMutablePointer<CChar>?
        var err: UnsafeMutablePointer<CChar>?
        let rc = CSecretShims_lookup(vaultId, copyId, &out, &err)
        if rc == 1 { return nil }
        if rc != 0 { throw fail("lookup", err) }
        guard let out else { return nil }
        defer { CSecretShims_free_secret(out) }
        let n = strlen(out)
        let bytes = UnsafeRawBufferPointer(start: out, count: n)
        if n >= 3 && bytes[0] == UInt8(ascii: "v") && bytes[1] == UInt8(ascii: "2") {
            guard let w = AgentWrappedKey.parse(bytes) else { try? clear(); return nil }
            return .agentWrapped(w)
        }
        if n >= 3 && bytes[0] == UInt8(ascii: "v") && bytes[1] == UInt8(ascii: "3") {
            guard let w = TPMWrappedSession.parse(bytes) else { try? clear(); return nil }
            switch w.open(tcti: tcti, vaultId: vaultId, copyId: copyId) {
            case .success(let rec): return .direct(rec)
            case .failure(.unavailable(let why)): return .unusable(why)
            case .failure(.doesNotOpen(let why)): try? clear(); return .unusable(why)
            }
        }
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
        return .direct(Record(masterKey: key, epoch: UInt32(truncatingIfNeeded: epoch), unlockedAt: ua, lastUsedAt: lu,
                      idleTimeout: idle, absoluteTimeout: abs))
    }

    /// Removes the session item; true when one was there.
    @discardableResult
    public func clear() throws -> Bool {
        var err: UnsafeMutablePointer<CChar>?
        let rc = CSecretShims_clear(vaultId, copyId, &err)
        if rc < 0 { throw fail("clear", err) }
        return rc == 0
    }

    /// Removes the item an older version kept for the whole vault id (schema `org.vault.Session`,
    /// shared by every local copy; nothing reads it any more): after an upgrade, `vault unlock` and
    /// `vault lock` leave no master key behind in it. True when one was there.
    @discardableResult
    public func clearLegacy() throws -> Bool {
        var err: UnsafeMutablePointer<CChar>?
        let rc = CSecretShims_clear_legacy(vaultId, &err)
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
