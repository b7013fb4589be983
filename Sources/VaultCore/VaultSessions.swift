import Foundation
import VaultCrypto

/// How a command gets the password when it needs one.
public struct PasswordSource {
    /// True when the user named a source (`--password-file`, `VAULT_PASSWORD_COMMAND`), so a
    /// locked vault may be opened for this one command without asking.
    public let isExplicit: Bool
    public let read: (_ prompt: String) throws -> SecureBytes

    public init(isExplicit: Bool, read: @escaping (_ prompt: String) throws -> SecureBytes) {
        self.isExplicit = isExplicit; self.read = read
    }
}

/// Unlock, lock and per-command access: the master key comes from the keyring session while
/// it is valid (auto-lock enforced here), or from a password slot.
public struct VaultSessions {
    public let layout: VaultLayout
    public let environment: [String: String]
    /// The effective enterprise policy (keyring rule, timeouts, failed-unlock limit).
    public let policy: EffectivePolicy
    /// Called with warnings meant for the user (reduced security, auto-lock).
    public let warn: (String) -> Void
    /// The running `vault agent` of a local copy (by `VaultLayout.localId`), if one answers: it
    /// then owns the session.
    let agentLink: ((String) -> SessionAgentLink?)?

    /// Why a `v2` keyring item is no session for a command that reaches no agent: the agent
    /// stopped (its key went with it), or this command cannot reach it (another XDG_RUNTIME_DIR).
    static let agentGone = "its session is held by a `vault agent` that this command cannot reach (it stopped, and its key with it, or it runs for another XDG_RUNTIME_DIR)"

    public static let defaultIdleTimeout: Int64 = 15 * 60
    public static let defaultAbsoluteTimeout: Int64 = 8 * 3600
    /// How stale the idle clock in the keyring item may get before a command refreshes it: a
    /// thirtieth of the idle timeout, between 1 and 30 seconds. A session may so lock at most that
    /// long before its idle timeout after the last use (a second, for timeouts up to 30 s), while
    /// commands in quick succession do not each rewrite the keyring item.
    static func touchInterval(idleTimeout: Int64) -> Int64 {
        idleTimeout > 0 ? min(30, max(1, idleTimeout / 30)) : 30
    }

    /// The session timeouts `unlock` sets for the ones asked: each capped at the policy maximum
    /// (0, never, becomes the maximum).
    public func effectiveTimeouts(idle: Int64, absolute: Int64) -> (idle: Int64, absolute: Int64) {
        (policy.cap(idle, policy.idleTimeoutMax), policy.cap(absolute, policy.absoluteTimeoutMax))
    }

    /// - Parameter agent: finds the running `vault agent` of a local copy id (nil: none answers).
    public init(layout: VaultLayout, environment: [String: String] = ProcessInfo.processInfo.environment,
                policy: EffectivePolicy = .none, agent: ((String) -> SessionAgentLink?)? = nil,
                warn: @escaping (String) -> Void) {
        self.layout = layout; self.environment = environment; self.policy = policy; self.agentLink = agent; self.warn = warn
    }

    /// The agent that owns the session of this local copy of `vaultId`, when a keyring is there
    /// and an agent answers.
    func agent(for vaultId: String, _ avail: (available: Bool, reason: String)) -> SessionAgentLink? {
        avail.available ? agentLink?(layout.localId(vaultId: vaultId)) : nil
    }

    /// The keyring item of this local copy of `vaultId`.
    func sessionItem(_ vaultId: String) -> KeyringSession { KeyringSession(vaultId: vaultId, layout: layout) }

    public var keyringAvailability: (available: Bool, reason: String) {
        if policy.keyring.value == "forbidden" { return (false, "the policy forbids holding keys in the keyring") }
        return KeyringSession.availability(environment: environment)
    }

    /// What protection this device lacks (no keyring, no memory locking), in plain words.
    public var degradations: [String] {
        var d: [String] = []
        let k = keyringAvailability
        if !k.available { d.append("no keyring (\(k.reason)): the password is asked by every command and nothing auto-locks between commands") }
        if !SecureBytes.memoryLockingAvailable {
            d.append("memory locking is unavailable (RLIMIT_MEMLOCK): keys in memory could be written to swap")
        }
        return d
    }

    /// Refuses to handle keys where the policy requires memory locking that this process lacks.
    func checkMemoryLockPolicy() throws {
        if policy.memoryLockRequired.value == true && !SecureBytes.memoryLockingAvailable {
            throw VaultError(.policy, "the policy requires locked memory for keys, and mlock is not permitted here (RLIMIT_MEMLOCK)",
                             hint: "raise the memlock limit (ulimit -l) for this user")
        }
    }

    /// Refuses to go on when the policy requires a keyring that is not there.
    func checkKeyringPolicy(_ avail: (available: Bool, reason: String)) throws {
        try checkMemoryLockPolicy()
        if policy.keyring.value == "required" && !avail.available {
            throw VaultError(.policy, "the policy requires a Secret Service keyring, and \(avail.reason)",
                             hint: "start a desktop session with a keyring (gnome-keyring), then try again")
        }
    }

    /// Unlocks a master key from the keyslot file, counting a wrong secret against the policy limit.
    /// Where that count cannot be written (a read-only filesystem) and the policy limits failed
    /// unlocks, no secret is tried at all: guesses there could not be counted.
    func unlockMaster<T>(_ file: KeyslotFile, _ attempt: () throws -> T) throws -> T {
        if let max = policy.maxFailedUnlocks.value, !UnlockFailures.canRecord(layout) {
            throw VaultError(.policy, "the vault at \(layout.root) is on a read-only filesystem, where failed unlocks cannot be counted, and the policy limits them (maxFailedUnlocks = \(max)): no password or recovery key is tried here",
                             hint: "unlock it while it is writable (a keyring session then reads it read-only), or remount it read-write")
        }
        do { return try attempt() } catch let e as VaultError where e.kind == .wrongPassword {
            throw UnlockFailures.recordFailure(layout, policy: policy, vaultId: file.body.vaultId, original: e)
        }
    }

    /// Refuses a password unlock when the policy requires a hardware key (`requireHardwareKey`):
    /// only this machine's TPM slot opens the vault then, and the recovery key or escrow as the
    /// way back in.
    func checkHardwarePolicy() throws {
        guard policy.requireHardwareKey.value == true else { return }
        throw VaultError(.policy, "the policy requires a hardware key (requireHardwareKey): the password does not unlock this vault",
                         hint: "unlock through this machine's TPM slot (`vault unlock`; enroll it with `vault key add-tpm`), or with the recovery key (`vault unlock --recovery-key`)")
    }

    /// Resets the failed-unlock count after a secret was accepted; warns about a tampered counter.
    /// (Nothing to write, or check against, on a read-only filesystem.)
    func noteSuccess(_ vault: Vault) throws {
        guard !vault.isReadOnly else { return }
        if let w = try UnlockFailures.recordSuccess(vault) { warn(w) }
    }

    func warnNoKeyring(_ reason: String) {
        warn("no Secret Service: \(reason). The master key cannot be held between commands, so each command asks for the password; security is reduced (the password is typed more often, and nothing auto-locks).")
    }

    /// Checks the password and, where a keyring is available, keeps the master key there.
    /// Returns whether the key is held in the keyring. `opened` runs with the vault open before
    /// the key is kept (the sync layer catches up there with a rotation made on another device,
    /// which changes the key that is kept). A password that opens only the newer slots of such a
    /// rotation (kept aside by the sync that saw it) opens this device's key through its history.
    @discardableResult
    public func unlock(password: SecureBytes, idleTimeout: Int64 = defaultIdleTimeout,
                       absoluteTimeout: Int64 = defaultAbsoluteTimeout, opened: (Vault) throws -> Void = { _ in }) throws -> Bool {
        try checkHardwarePolicy()
        let (file, bytes) = try Vault.readKeyslots(layout)
        let result = try unlockMaster(file) { () -> (masterKey: SecureBytes, legacySlot: String?) in
            do { return try file.unlockPassword(password) } catch let e as VaultError where e.kind == .wrongPassword {
                guard let m = Vault.masterThroughPendingEnvelope(layout, local: file, localBytes: bytes, password: password,
                                                                 recoveryKey: nil, policy: policy) else { throw e }
                return (m, nil)
            }
        }
        return try hold(masterKey: result.masterKey, idleTimeout: idleTimeout, absoluteTimeout: absoluteTimeout) { vault in
            try upgrade(vault, result.legacySlot, password)
            try opened(vault)
        }
    }

    /// Rewraps a slot that opened only with the password's bytes as typed (written before
    /// passwords were normalised) under the NFC form; a failure to write is only a warning.
    func upgrade(_ vault: Vault, _ legacySlot: String?, _ password: SecureBytes) throws {
        guard let legacySlot else { return }
        do { try vault.upgradePasswordSlot(legacySlot, password: password) } catch {
            warn("could not rewrap keyslot \(legacySlot) to the normalised password (\(VaultError.wrap(error).message)); it still opens as before")
        }
    }

    /// Like `unlock(password:)`, with a recovery key (as typed: groups, any case).
    @discardableResult
    public func unlock(recoveryKey typed: SecureBytes, idleTimeout: Int64 = defaultIdleTimeout,
                       absoluteTimeout: Int64 = defaultAbsoluteTimeout, opened: (Vault) throws -> Void = { _ in }) throws -> Bool {
        let (file, bytes) = try Vault.readKeyslots(layout)
        // A typo (wrong length, a letter outside the alphabet, a failed checksum) is caught before
        // any key is tried, so it is not a failed unlock: only a well-formed key counts.
        let key = try RecoveryKey.parse(typed)
        let master = try unlockMaster(file) { () -> SecureBytes in
            do { return try file.unlock(recoveryKey: key) } catch let e as VaultError where e.kind == .wrongPassword {
                guard let m = Vault.masterThroughPendingEnvelope(layout, local: file, localBytes: bytes, password: nil,
                                                                 recoveryKey: key, policy: policy) else { throw e }
                return m
            }
        }
        return try hold(masterKey: master, idleTimeout: idleTimeout, absoluteTimeout: absoluteTimeout, opened: opened)
    }

    /// Proves `masterKey` opens this vault (keyslot MAC, database; finishing an interrupted
    /// rotation), then keeps it in the keyring when there is one.
    func hold(masterKey: SecureBytes, idleTimeout: Int64, absoluteTimeout: Int64,
              opened: (Vault) throws -> Void = { _ in }) throws -> Bool {
        let avail = keyringAvailability
        try checkKeyringPolicy(avail)
        let link = agent(for: try Vault.readKeyslots(layout).0.body.vaultId, avail)
        let yielded = try link?.yieldVault()
        let vault = try Vault.open(layout: layout, masterKey: masterKey, access: .read)
        vault.heldWhileOpen = yielded
        try noteSuccess(vault)
        try opened(vault)
        guard avail.available else { warnNoKeyring(avail.reason); return false }
        let now = Vault.now
        let limits = effectiveTimeouts(idle: idleTimeout, absolute: absoluteTimeout)
        try? sessionItem(vault.vaultId).clearLegacy()   // an older version's item, which nothing reads any more
        if let link {
            try link.hold(masterKey: vault.masterKey, epoch: vault.keyslots.body.epoch,
                          idleTimeout: limits.idle, absoluteTimeout: limits.absolute)
            return true
        }
        try sessionItem(vault.vaultId).store(.init(
            masterKey: vault.masterKey, epoch: vault.keyslots.body.epoch, unlockedAt: now, lastUsedAt: now,
            idleTimeout: limits.idle, absoluteTimeout: limits.absolute, hardware: hardwareSessionKey(vault.keyslots)))
        return true
    }

    /// After the master key changed (rotation), replaces the key held in the keyring, if any.
    public func refresh(after vault: Vault) throws {
        let avail = keyringAvailability
        guard avail.available else { return }
        if let link = agent(for: vault.vaultId, avail) {
            try link.replace(masterKey: vault.masterKey, epoch: vault.keyslots.body.epoch)
            return
        }
        let ring = sessionItem(vault.vaultId)
        switch try ring.lookup(tcti: tcti) {
        case .direct(var rec)?:
            rec.masterKey = vault.masterKey
            rec.epoch = vault.keyslots.body.epoch
            try ring.store(rec)
        case .agentWrapped?, .unusable?, nil: return   // held by an agent this command cannot reach, one this TPM does not open, or none
        }
    }

    /// Removes the master key from the keyring. Returns whether a session was there.
    @discardableResult
    public func lock() throws -> Bool {
        let (file, _) = try Vault.readKeyslots(layout)
        let avail = keyringAvailability
        guard avail.available else { return false }
        let held = try agent(for: file.body.vaultId, avail)?.lock(reason: nil) ?? false
        let legacy = (try? sessionItem(file.body.vaultId).clearLegacy()) ?? false
        return try sessionItem(file.body.vaultId).clear() || held || legacy
    }

    /// The current keyring session, if unlocked and not expired (an expired one is removed).
    /// With a running agent the agent answers (it enforces the deadlines itself), and `touch`
    /// (a use) moves its idle deadline; a `v2` item whose agent is gone opens nothing and is removed.
    public func currentSession(touch: Bool = true) throws -> (KeyringSession.Record?, expiredReason: String?) {
        let (file, _) = try Vault.readKeyslots(layout)
        let avail = keyringAvailability
        guard avail.available else { return (nil, nil) }
        if let link = agent(for: file.body.vaultId, avail) {
            let (rec, why) = try link.session(countsAsUse: touch)
            return (rec, why)
        }
        let ring = sessionItem(file.body.vaultId)
        let item = try ring.lookup(tcti: tcti)
        if case .unusable(let why)? = item { return (nil, why) }
        // Left in place: it opens nothing here, and an agent this command cannot reach may still
        // hold its key. The next agent to start removes it; `vault unlock` or `vault lock` replaces it.
        if case .agentWrapped? = item { return (nil, Self.agentGone) }
        guard case .direct(var rec)? = item else { return (nil, nil) }
        // A policy made stricter after unlock applies to the running session too.
        rec.idleTimeout = policy.cap(rec.idleTimeout, policy.idleTimeoutMax)
        rec.absoluteTimeout = policy.cap(rec.absoluteTimeout, policy.absoluteTimeoutMax)
        if let why = rec.expiry(now: Vault.now) {
            try ring.clear()
            return (nil, why)
        }
        return (rec, nil)
    }

    /// The session between two steps of a long-lived command (`VaultReopener.check`), without
    /// opening the vault. `touch` counts as use: the agent moves its idle deadline, or a `v1`
    /// item's clock is refreshed as `open` refreshes it.
    public func checkSession(touch: Bool) throws -> (KeyringSession.Record?, expiredReason: String?) {
        let (file, _) = try Vault.readKeyslots(layout)
        var (session, expired) = try currentSession(touch: touch)
        guard touch, var rec = session, agent(for: file.body.vaultId, keyringAvailability) == nil else { return (session, expired) }
        let now = Vault.now
        if now - rec.lastUsedAt >= Self.touchInterval(idleTimeout: rec.idleTimeout) {
            rec.lastUsedAt = now
            try sessionItem(file.body.vaultId).store(rec)
            session = rec
        }
        return (session, expired)
    }

    /// Opens the vault for one command: from the keyring session, else with a password when the
    /// vault has no keyring or the user named a password source; else it is locked. `access`
    /// `.read` lets the command run on a read-only filesystem (see `Vault.open`).
    public func open(password: PasswordSource, lock: VaultLock.Request = .exclusive, access: Vault.Access = .readWrite) throws -> Vault {
        try open(password: password, lock: lock, access: access, touch: true, lockTimeout: Vault.lockTimeout).vault
    }

    /// `open(password:lock:access:)` for a long-lived command that opens the vault again for each
    /// step (`vault browse`): `touch` false leaves the session's idle clock alone (a screen
    /// refreshing by itself is not use), `lockTimeout` bounds the wait for the vault lock (0: fail
    /// at once with `.busy`). Also returns the keyring session the vault was opened from, if any.
    public func open(password: PasswordSource, lock: VaultLock.Request, access: Vault.Access = .readWrite, touch: Bool,
                     lockTimeout: TimeInterval) throws -> (vault: Vault, session: KeyringSession.Record?) {
        let (file, _) = try Vault.readKeyslots(layout)
        let avail = keyringAvailability
        try checkKeyringPolicy(avail)
        let link = agent(for: file.body.vaultId, avail)
        if avail.available {
            let ring = sessionItem(file.body.vaultId)
            let (session, expired) = try currentSession(touch: touch)
            if let rec = session, rec.epoch != file.body.epoch, file.body.pendingRotation == nil {
                // The master key was rotated by another path since this session began.
                try link?.lock(reason: "its master key was rotated since it was unlocked")
                try ring.clear()
                if !password.isExplicit {
                    throw VaultError(.locked, "the vault is locked: its master key was rotated since it was unlocked",
                                     hint: "run `vault unlock`")
                }
            } else if var rec = session {
                let yielded = lock != .control ? try link?.yieldVault() : nil
                let vault = try Vault.open(layout: layout, masterKey: rec.masterKey, lock: lock, access: access, lockTimeout: lockTimeout)
                vault.heldWhileOpen = yielded
                let rotated = vault.keyslots.body.epoch != rec.epoch
                var store = rotated
                if rotated {
                    // This command finished an interrupted rotation: keep the new key.
                    rec.epoch = vault.keyslots.body.epoch
                    rec.masterKey = vault.masterKey
                }
                if let link {
                    // The agent counted this use itself (or not, without `touch`); it only needs a rotated key.
                    if rotated { try link.replace(masterKey: rec.masterKey, epoch: rec.epoch) }
                    return (vault, rec)
                }
                let now = Vault.now
                if touch && (rotated || now - rec.lastUsedAt >= Self.touchInterval(idleTimeout: rec.idleTimeout)) {
                    rec.lastUsedAt = now
                    store = true
                }
                if store { try ring.store(rec) }
                return (vault, rec)
            }
            if !password.isExplicit {
                if let expired {
                    throw VaultError(.locked, "the vault is locked: \(expired)", hint: "run `vault unlock`")
                }
                throw VaultError(.locked, "the vault is locked", hint: "run `vault unlock` (or pass --password-file for this command only)")
            }
            if let expired { warn(expired) }
        } else {
            warnNoKeyring(avail.reason)
        }
        try checkHardwarePolicy()
        let pw = try password.read("Password for the vault at \(layout.root): ")
        let opened = try unlockMaster(file) { try file.unlockPassword(pw) }
        let yielded = lock != .control ? try link?.yieldVault() : nil
        let vault = try Vault.open(layout: layout, masterKey: opened.masterKey, lock: lock, access: access, lockTimeout: lockTimeout)
        vault.heldWhileOpen = yielded
        try noteSuccess(vault)
        try upgrade(vault, opened.legacySlot, pw)
        return (vault, nil)
    }
}
