import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a long-lived interactive command (`vault browse`) reaches the vault: it opens the vault
/// for each step (a refresh, an action) and releases it in between, so the vault lock is never
/// held while the command sits idle and other commands keep working beside it.
///
/// While the vault is unlocked in the keyring, each step opens it from the keyring session, so
/// `vault lock` in another terminal and the session's auto-lock take effect at the next step.
/// Without a keyring session (no Secret Service, or a password source named for this command),
/// the first step unlocks with the password and this process holds the master key, in locked
/// memory, under the idle and absolute timeouts a keyring session would get (policy caps
/// included); the key is dropped when one passes, and the vault is then locked for this command.
/// Not thread-safe.
public final class VaultReopener {
    /// Where the key comes from.
    public enum KeySource: Sendable, Equatable {
        /// The keyring session (shared with every other command).
        case keyring
        /// This process, since the first step (no keyring session was there).
        case process
    }

    /// When the vault locks itself (seconds since the epoch; nil: that clock is off).
    public struct Deadlines: Sendable, Equatable {
        /// Without use (a refresh is not use) until then.
        public var idle: Int64?
        /// Since the unlock, at the latest.
        public var absolute: Int64?

        public init(idle: Int64?, absolute: Int64?) { self.idle = idle; self.absolute = absolute }

        init(_ r: KeyringSession.Record) {
            idle = r.idleTimeout > 0 ? r.lastUsedAt + r.idleTimeout : nil
            absolute = r.absoluteTimeout > 0 ? r.unlockedAt + r.absoluteTimeout : nil
        }
    }

    let sessions: VaultSessions
    private let password: PasswordSource
    private var started = false
    /// The key this process holds, with its clocks (`.process` only).
    private var held: KeyringSession.Record?
    /// Where the key came from at the last successful step.
    public private(set) var source: KeySource?
    /// The auto-lock deadlines as of the last successful step.
    public private(set) var deadlines = Deadlines(idle: nil, absolute: nil)

    /// `password` is used at the first step only (and only when no keyring session is there).
    public init(sessions: VaultSessions, password: PasswordSource) {
        self.sessions = sessions; self.password = password
    }

    /// Opens the vault for one step. `touch`: this step is the user's doing (a key press), so it
    /// counts as use for the idle timeout; a refresh passes false. `lockTimeout` 0 fails at once
    /// with `.busy` when another command holds the vault.
    /// - Throws: `.locked` once the vault is locked (from another terminal, by a timeout, or a
    ///   key rotation); `.busy`; and whatever opening the vault throws.
    public func open(lock: VaultLock.Request, access: Vault.Access, touch: Bool, lockTimeout: TimeInterval) throws -> Vault {
        if held != nil { return try openHeld(lock: lock, access: access, touch: touch, lockTimeout: lockTimeout) }
        // After the first step only a keyring session opens the vault: the password is not asked again.
        let source = started ? PasswordSource(isExplicit: false) { _ in
            throw VaultError(.locked, "the vault is locked", hint: "run `vault unlock`")
        } : password
        let (vault, session) = try sessions.open(password: source, lock: lock, access: access, touch: touch, lockTimeout: lockTimeout)
        started = true
        if let session {
            self.source = .keyring
            deadlines = Deadlines(session)
        } else {
            let now = Vault.now
            let limits = sessions.effectiveTimeouts(idle: VaultSessions.defaultIdleTimeout, absolute: VaultSessions.defaultAbsoluteTimeout)
            let rec = KeyringSession.Record(masterKey: vault.masterKey, epoch: vault.keyslots.body.epoch, unlockedAt: now,
                                            lastUsedAt: now, idleTimeout: limits.idle, absoluteTimeout: limits.absolute)
            held = rec
            self.source = .process
            deadlines = Deadlines(rec)
        }
        return vault
    }

    /// Confirms the vault is still unlocked without opening it (cheap enough for every second),
    /// and updates `deadlines`. `touch`: the user did something (a key press), which counts as
    /// use for the idle timeout exactly as opening the vault with `touch` does.
    /// - Throws: `.locked` as `open` does.
    public func check(touch: Bool) throws {
        if var rec = held {
            if let why = rec.expiry(now: Vault.now) {
                held = nil
                throw VaultError(.locked, "the vault is locked: \(why)", hint: "run `vault unlock`, or start the command again")
            }
            if touch { rec.lastUsedAt = Vault.now; held = rec }
            deadlines = Deadlines(rec)
            return
        }
        let (file, _) = try Vault.readKeyslots(sessions.layout)
        let (session, expired) = try sessions.checkSession(touch: touch)   // none without a keyring
        guard let rec = session else {
            throw VaultError(.locked, expired.map { "the vault is locked: \($0)" } ?? "the vault is locked", hint: "run `vault unlock`")
        }
        if rec.epoch != file.body.epoch && file.body.pendingRotation == nil {
            // Rotated since the unlock: the next opening clears the session and says so.
            _ = try open(lock: .control, access: .read, touch: touch, lockTimeout: 0)
            return
        }
        source = .keyring
        deadlines = Deadlines(rec)
    }

    /// What changes whenever the metadata database is written (its file's identity, size and
    /// modification time): the same stamp twice means nothing in the vault's tree, transfers or
    /// storage changed in between, so a view need not read it again. Nil when it cannot be read.
    public var databaseStamp: DatabaseStamp? {
        var st = stat()
        guard stat(sessions.layout.databaseFile, &st) == 0 else { return nil }
        return DatabaseStamp(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                             seconds: Int64(st.st_mtim.tv_sec), nanoseconds: Int64(st.st_mtim.tv_nsec))
    }

    /// Now, on the clock the deadlines are measured with (seconds since the epoch).
    public var now: Int64 { Vault.now }

    /// Free bytes on the vault's filesystem now (without opening the vault).
    public var freeBytes: UInt64? { POSIX.freeBytes(at: sessions.layout.root) }

    /// See `databaseStamp`.
    public struct DatabaseStamp: Equatable, Sendable {
        let device: UInt64, inode: UInt64, size: Int64, seconds: Int64, nanoseconds: Int64
    }

    private func openHeld(lock: VaultLock.Request, access: Vault.Access, touch: Bool, lockTimeout: TimeInterval) throws -> Vault {
        guard var rec = held else { throw VaultError(.locked, "the vault is locked") }
        if let why = rec.expiry(now: Vault.now) {
            held = nil   // the key's memory is wiped as it is released
            throw VaultError(.locked, "the vault is locked: \(why)",
                             hint: "run `vault unlock`, or start the command again")
        }
        let (file, _) = try Vault.readKeyslots(sessions.layout)
        if file.body.epoch != rec.epoch && file.body.pendingRotation == nil {
            held = nil
            throw VaultError(.locked, "the vault is locked: its master key was rotated since this command unlocked it",
                             hint: "run `vault unlock`, or start the command again")
        }
        let vault = try Vault.open(layout: sessions.layout, masterKey: rec.masterKey, lock: lock, access: access, lockTimeout: lockTimeout)
        if vault.keyslots.body.epoch != rec.epoch {
            // This step finished an interrupted rotation: keep the new key.
            rec.epoch = vault.keyslots.body.epoch
            rec.masterKey = vault.masterKey
        }
        if touch { rec.lastUsedAt = Vault.now }
        held = rec
        source = .process
        deadlines = Deadlines(rec)
        return vault
    }
}
