import Foundation
import VaultCrypto
import VaultPrimitives
import VaultSyncPlan

/// Enterprise policy settings (BRIEF §5). Every field is optional: absent means "no rule".
/// The same shape serves the system policy (`/etc/vault/policy.json`) and the user's settings
/// (`$XDG_CONFIG_HOME/vault/settings.json`); the effective policy is the stricter of the two.
public struct PolicySettings: Codable, Equatable, Sendable {
    public var idleTimeoutMax: Int64?
    public var absoluteTimeoutMax: Int64?
    public var kdfMinArgon2Ops: UInt64?
    public var kdfMinArgon2MemoryBytes: UInt64?
    public var kdfMinPBKDF2Iterations: UInt32?
    public var pbkdf2Only: Bool?
    /// "required", "forbidden" or "optional".
    public var keyring: String?
    public var maxFailedUnlocks: Int?
    public var escrowRequired: Bool?
    /// false forbids `vault get` and `vault cat` to anything but a terminal.
    public var plaintextExport: Bool?
    public var largeTransfersUnmeteredOnly: Bool?
    public var contentBudgetMax: UInt64?
    public var allowedServers: [String]?
    public var pinnedPublicKeys: [String]?
    /// The least backup exclusion required: "none", "cache" or "all".
    public var backupExclusion: String?
    /// true: refuse to handle keys where memory cannot be locked (keys could reach swap).
    public var memoryLockRequired: Bool?
    /// false forbids `vault login --insecure-http` (plain http:// to another machine). Plain
    /// http:// to this machine (loopback) is always allowed; https:// always.
    public var allowInsecureHTTP: Bool?
    /// "none" (default) or "padme": uploads padded to their Padmé size class (SECURITY.md "Size padding").
    public var remotePadding: String?
    /// true: a running `vault agent` locks the vault when the screen locks (logind `Lock`, the
    /// freedesktop ScreenSaver `ActiveChanged(true)`).
    public var lockOnScreenLock: Bool?
    /// true: a running `vault agent` locks the vault before the machine suspends or hibernates
    /// (logind `PrepareForSleep(true)`, holding a delay inhibitor until it has locked).
    public var lockOnSuspend: Bool?
    /// "keep-both" or "last-writer-wins": how an edit here and one elsewhere are settled
    /// (docs/sync.md); the user's `vault config set conflicts` is ignored when set.
    public var conflictPolicy: String?
    /// false forbids `vault mount` (default true: the vault may be mounted as a folder).
    public var mountAllowed: Bool?
    /// true: an unlock that does not go through this machine's TPM slot is refused; the
    /// recovery key and escrow stay allowed (they are the way back in).
    public var requireHardwareKey: Bool?
    /// true: `vault key add-tpm` without a PIN (`--pin`, `--pin-file`) is refused.
    public var hardwareKeyPin: Bool?

    public init() {}
}

/// One effective value and where it came from.
public struct PolicyValue<T: Sendable & Encodable>: Sendable, Encodable {
    public var value: T?
    /// "system", "user" or "default".
    public var source: String
}

/// The effective policy: each setting the stricter of system and user.
public struct EffectivePolicy: Sendable, Encodable {
    public var idleTimeoutMax: PolicyValue<Int64>
    public var absoluteTimeoutMax: PolicyValue<Int64>
    public var kdfMinArgon2Ops: PolicyValue<UInt64>
    public var kdfMinArgon2MemoryBytes: PolicyValue<UInt64>
    public var kdfMinPBKDF2Iterations: PolicyValue<UInt32>
    public var pbkdf2Only: PolicyValue<Bool>
    public var keyring: PolicyValue<String>
    public var maxFailedUnlocks: PolicyValue<Int>
    public var escrowRequired: PolicyValue<Bool>
    public var plaintextExport: PolicyValue<Bool>
    public var largeTransfersUnmeteredOnly: PolicyValue<Bool>
    public var contentBudgetMax: PolicyValue<UInt64>
    public var allowedServers: PolicyValue<[String]>
    public var pinnedPublicKeys: PolicyValue<[String]>
    public var backupExclusion: PolicyValue<String>
    public var memoryLockRequired: PolicyValue<Bool>
    public var allowInsecureHTTP: PolicyValue<Bool>
    public var remotePadding: PolicyValue<String>
    public var lockOnScreenLock: PolicyValue<Bool>
    public var lockOnSuspend: PolicyValue<Bool>
    public var conflictPolicy: PolicyValue<String>
    public var mountAllowed: PolicyValue<Bool>
    public var requireHardwareKey: PolicyValue<Bool>
    public var hardwareKeyPin: PolicyValue<Bool>
    /// Where the system policy was read from, and whether it was signed.
    public var systemFile: String?
    public var signed: Bool

    /// No rules at all.
    public static let none = EffectivePolicy(system: nil, user: nil, systemFile: nil, signed: false)

    init(system: PolicySettings?, user: PolicySettings?, systemFile: String?, signed: Bool) {
        func pick<T: Equatable & Sendable & Encodable>(_ k: KeyPath<PolicySettings, T?>, _ stricter: (T, T) -> T) -> PolicyValue<T> {
            switch (system?[keyPath: k], user?[keyPath: k]) {
            case let (s?, u?): let v = stricter(s, u); return PolicyValue(value: v, source: v == s ? "system" : "user")
            case let (s?, nil): return PolicyValue(value: s, source: "system")
            case let (nil, u?): return PolicyValue(value: u, source: "user")
            default: return PolicyValue(value: nil, source: "default")
            }
        }
        func smaller<T: Comparable>(_ a: T, _ b: T) -> T { min(a, b) }
        func larger<T: Comparable>(_ a: T, _ b: T) -> T { max(a, b) }
        idleTimeoutMax = pick(\.idleTimeoutMax, smaller)
        absoluteTimeoutMax = pick(\.absoluteTimeoutMax, smaller)
        kdfMinArgon2Ops = pick(\.kdfMinArgon2Ops, larger)
        kdfMinArgon2MemoryBytes = pick(\.kdfMinArgon2MemoryBytes, larger)
        kdfMinPBKDF2Iterations = pick(\.kdfMinPBKDF2Iterations, larger)
        pbkdf2Only = pick(\.pbkdf2Only) { $0 || $1 }
        keyring = pick(\.keyring) { s, _ in s }               // the organisation decides
        maxFailedUnlocks = pick(\.maxFailedUnlocks, smaller)
        escrowRequired = pick(\.escrowRequired) { $0 || $1 }
        plaintextExport = pick(\.plaintextExport) { $0 && $1 }
        largeTransfersUnmeteredOnly = pick(\.largeTransfersUnmeteredOnly) { $0 || $1 }
        contentBudgetMax = pick(\.contentBudgetMax, smaller)
        allowedServers = pick(\.allowedServers) { s, u in s.filter(u.contains) }
        pinnedPublicKeys = pick(\.pinnedPublicKeys) { s, _ in s }
        backupExclusion = pick(\.backupExclusion) { s, u in
            let rank = ["none": 0, "cache": 1, "all": 2]
            return (rank[s] ?? 0) >= (rank[u] ?? 0) ? s : u
        }
        memoryLockRequired = pick(\.memoryLockRequired) { $0 || $1 }
        allowInsecureHTTP = pick(\.allowInsecureHTTP) { $0 && $1 }
        remotePadding = pick(\.remotePadding) { s, u in s == "padme" || u == "padme" ? "padme" : s }
        lockOnScreenLock = pick(\.lockOnScreenLock) { $0 || $1 }
        lockOnSuspend = pick(\.lockOnSuspend) { $0 || $1 }
        conflictPolicy = pick(\.conflictPolicy) { s, _ in s }   // the organisation decides
        mountAllowed = pick(\.mountAllowed) { $0 && $1 }
        requireHardwareKey = pick(\.requireHardwareKey) { $0 || $1 }
        hardwareKeyPin = pick(\.hardwareKeyPin) { $0 || $1 }
        self.systemFile = systemFile
        self.signed = signed
    }
}

/// Reads the system policy (verifying its signature when an organisation key is configured) and
/// the user's settings. A policy that cannot be trusted fails closed: every command refuses.
public enum PolicyLoader {
    public static let defaultSystemPath = "/etc/vault/policy.json"
    public static let defaultKeyPath = "/etc/vault/org-signing.pub"

    public static func systemPolicyPath(_ env: [String: String]) -> String { env["VAULT_POLICY_FILE"] ?? defaultSystemPath }
    public static func signingKeyPath(_ env: [String: String]) -> String { env["VAULT_POLICY_KEY_FILE"] ?? defaultKeyPath }
    public static func userSettingsPath(_ layout: VaultLayout) -> String { layout.configDirectory + "/settings.json" }

    public static func load(layout: VaultLayout, environment env: [String: String] = ProcessInfo.processInfo.environment) throws -> EffectivePolicy {
        let path = systemPolicyPath(env)
        let keyPath = signingKeyPath(env)
        var system: PolicySettings?
        var signed = false
        let keyConfigured = FileManager.default.fileExists(atPath: keyPath)
        if let body = FileManager.default.contents(atPath: path) {
            if keyConfigured {
                guard let key = (try? OrgKeyFile.read(keyPath, count: Ed25519.publicKeySize, what: "Ed25519 public key"))?
                        .withUnsafeBytes({ Array($0) }) else {
                    throw failClosed("the organisation signing key \(keyPath) is unreadable or malformed")
                }
                guard let sigText = FileManager.default.contents(atPath: path + ".sig") else {
                    throw failClosed("the system policy \(path) is not signed (no \(path).sig) but an organisation signing key is configured")
                }
                let sig = Data(base64Encoded: String(decoding: sigText, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)).map { [UInt8]($0) } ?? []
                guard Ed25519.verify(signature: sig, message: [UInt8](body), publicKey: key) else {
                    throw failClosed("the system policy \(path) does not match its signature: it was altered or signed by another key")
                }
                signed = true
            }
            do {
                system = try JSONDecoder().decode(PolicySettings.self, from: body)
            } catch {
                throw failClosed("the system policy \(path) is not valid policy JSON (\(error))")
            }
            try validate(system!, path)
        } else if keyConfigured {
            throw failClosed("an organisation signing key is configured (\(keyPath)) but the system policy \(path) is missing")
        }
        var user: PolicySettings?
        let userPath = userSettingsPath(layout)
        if let data = FileManager.default.contents(atPath: userPath) {
            do { user = try JSONDecoder().decode(PolicySettings.self, from: data) } catch {
                throw VaultError(.usage, "your settings file \(userPath) is not valid (\(error))", hint: "fix or remove it")
            }
            try validate(user!, userPath)
        }
        return EffectivePolicy(system: system, user: user, systemFile: system == nil ? nil : path, signed: signed)
    }

    static func validate(_ p: PolicySettings, _ path: String) throws {
        if let k = p.keyring, !["required", "forbidden", "optional"].contains(k) {
            throw failClosed("\(path): keyring must be required, forbidden or optional (not \(k))")
        }
        if let b = p.backupExclusion, !["none", "cache", "all"].contains(b) {
            throw failClosed("\(path): backupExclusion must be none, cache or all (not \(b))")
        }
        if let m = p.maxFailedUnlocks, m < 1 { throw failClosed("\(path): maxFailedUnlocks must be at least 1") }
        if let r = p.remotePadding, RemotePadding(rawValue: r) == nil {
            throw failClosed("\(path): remotePadding must be none or padme (not \(r))")
        }
        if let c = p.conflictPolicy, ConflictPolicy(rawValue: c) == nil {
            throw failClosed("\(path): conflictPolicy must be keep-both or last-writer-wins (not \(c))")
        }
    }

    static func failClosed(_ why: String) -> VaultError {
        VaultError(.policy, "\(why); refusing to run (the policy fails closed)",
                   hint: "ask your administrator to restore or re-sign the policy (vault admin sign-policy)")
    }
}

extension EffectivePolicy {
    /// How uploads are padded (`remotePadding`: the stricter of system and user, `none` by default).
    public var padding: RemotePadding { remotePadding.value.flatMap(RemotePadding.init(rawValue:)) ?? .none }

    /// Throws when `params` is weaker than the KDF floor.
    public func checkKDF(_ params: KDFParameters) throws {
        switch params {
        case .argon2id(let ops, let mem, _):
            if pbkdf2Only.value == true {
                throw VaultError(.policy, "policy requires PBKDF2-HMAC-SHA512 (pbkdf2Only)", hint: "use --kdf pbkdf2")
            }
            if let m = kdfMinArgon2Ops.value, ops < m {
                throw VaultError(.policy, "Argon2id with \(ops) passes is below the policy floor of \(m)", hint: "raise --kdf-ops or use --kdf-time")
            }
            if let m = kdfMinArgon2MemoryBytes.value, mem < m {
                throw VaultError(.policy, "Argon2id with \(ByteCount.format(mem)) is below the policy floor of \(ByteCount.format(m))", hint: "raise --kdf-mem")
            }
        case .pbkdf2SHA512(let it, _):
            if let m = kdfMinPBKDF2Iterations.value, it < m {
                throw VaultError(.policy, "PBKDF2 with \(it) iterations is below the policy floor of \(m)", hint: "raise --pbkdf2-iterations")
            }
        }
    }

    /// Caps a requested session timeout (0 = never) at the policy maximum.
    public func cap(_ requested: Int64, _ max: PolicyValue<Int64>) -> Int64 {
        guard let m = max.value, m > 0 else { return requested }
        return requested == 0 ? m : min(requested, m)
    }
}
