import Foundation
import VaultKeys
import VaultCrypto

/// The unlocked session the agent owns.
///
/// It holds a random 32-byte *agent key* (libsodium locked memory) and the session's clock; the
/// keyring item holds the master key sealed under that agent key (`AgentWrappedKey`), so
/// neither half alone opens the vault. At the idle or absolute deadline a timer locks: the
/// item is removed and the agent key released (zeroed). Every request that hands out the key
/// for a command moves the idle deadline (use is measured to the second).
///
/// Confined to the agent's queue.
final class SessionHolder: @unchecked Sendable {
    // SAFETY: every member is used on `queue` only (the timer fires there too).
    struct Held {
        let agentKey: SecureBytes
        let sessionId: [UInt8]
        var epoch: UInt32
        let unlockedAt: Double
        var lastUsedAt: Double
        var idle: Int64
        var absolute: Int64
    }

    let vaultId: String
    let ring: KeyringSession
    private let queue: DispatchQueue
    private let log: AgentLog
    /// The effective policy now (caps re-applied to a running session).
    var policy: () -> EffectivePolicy = { .none }
    private(set) var held: Held?
    /// Why the session ended by itself (deadline, screen lock, suspend); nil after `vault lock`.
    private(set) var lockReason: String?
    private(set) var lockedAt: Double?
    /// Called after the session ends (background work must stop), and after it begins.
    var onLocked: (String?) -> Void = { _ in }
    var onUnlocked: () -> Void = {}
    private lazy var timer = DeadlineTimer(queue: queue) { [weak self] in self?.checkDeadlines() }

    /// - Parameter ring: the keyring item of the agent's local copy of `vaultId`.
    init(ring: KeyringSession, vaultId: String, queue: DispatchQueue, log: AgentLog) {
        self.vaultId = vaultId; self.ring = ring
        self.queue = queue; self.log = log
    }

    static func now() -> Double { Date().timeIntervalSince1970 }

    var isUnlocked: Bool { held != nil }

    /// The session's clock, nil while locked.
    var info: SessionInfo? {
        held.map { SessionInfo(epoch: $0.epoch, unlockedAt: $0.unlockedAt, lastUsedAt: $0.lastUsedAt,
                               idleTimeout: $0.idle, absoluteTimeout: $0.absolute, locksAt: deadline(of: $0)) }
    }

    private func deadline(of h: Held) -> Double? {
        [h.idle > 0 ? h.lastUsedAt + Double(h.idle) : nil, h.absolute > 0 ? h.unlockedAt + Double(h.absolute) : nil]
            .compactMap { $0 }.min()
    }

    private func expiry(of h: Held, at t: Double) -> String? {
        if h.absolute > 0 && t >= h.unlockedAt + Double(h.absolute) { return KeyringSession.Record.absoluteExpiry(h.absolute) }
        if h.idle > 0 && t >= h.lastUsedAt + Double(h.idle) { return KeyringSession.Record.idleExpiry(h.idle) }
        return nil
    }

    private func arm() {
        if let h = held, let d = deadline(of: h) { timer.set(at: d) } else { timer.clear() }
    }

    /// Locks when a deadline has passed (the timer, a resume from sleep, a policy change), else re-arms.
    func checkDeadlines() {
        guard var h = held else { return }
        let p = policy()
        h.idle = p.cap(h.idle, p.idleTimeoutMax)
        h.absolute = p.cap(h.absolute, p.absoluteTimeoutMax)
        held = h
        if let why = expiry(of: h, at: Self.now()) { lock(reason: why) } else { arm() }
    }

    /// At start: takes over a session unlocked before the agent ran (a `v1` item: its key and
    /// deadlines), and removes an item an earlier agent left (its key is gone with that agent).
    func adoptAtStart() {
        do {
            switch try ring.lookup() {
            case .direct(let rec)?:
                try adopt(rec)
                if held != nil { log("took over the session unlocked before the agent started") }
            case .agentWrapped?:
                try ring.clear()
                log("removed the keyring item of an earlier agent session (its key is gone): the vault is locked")
            case .unusable(let why)?:
                log("could not take over the session unlocked before the agent started: \(why)")
            case nil:
                break
            }
        } catch {
            log("could not read the keyring: \(error)")
        }
    }

    private func adopt(_ rec: KeyringSession.Record) throws {
        let p = policy()
        try begin(masterKey: rec.masterKey, epoch: rec.epoch, unlockedAt: Double(rec.unlockedAt), lastUsedAt: Double(rec.lastUsedAt),
                  idle: p.cap(rec.idleTimeout, p.idleTimeoutMax), absolute: p.cap(rec.absoluteTimeout, p.absoluteTimeoutMax))
        checkDeadlines()
    }

    /// `vault unlock`: holds `masterKey` in a new session.
    func hold(masterKey: SecureBytes, epoch: UInt32, idle: Int64, absolute: Int64) throws {
        let p = policy(), t = Self.now()
        try begin(masterKey: masterKey, epoch: epoch, unlockedAt: t, lastUsedAt: t,
                  idle: p.cap(idle, p.idleTimeoutMax), absolute: p.cap(absolute, p.absoluteTimeoutMax))
    }

    private func begin(masterKey: SecureBytes, epoch: UInt32, unlockedAt: Double, lastUsedAt: Double, idle: Int64, absolute: Int64) throws {
        let key = SecureBytes.random(count: 32)
        let sessionId = SecureRandom.bytes(16)
        try ring.store(try AgentWrappedKey.wrap(masterKey: masterKey, agentKey: key, vaultId: vaultId, epoch: epoch, sessionId: sessionId))
        held = Held(agentKey: key, sessionId: sessionId, epoch: epoch, unlockedAt: unlockedAt, lastUsedAt: lastUsedAt,
                    idle: idle, absolute: absolute)
        lockReason = nil
        lockedAt = nil
        arm()
        onUnlocked()
    }

    /// The master key, opened from the keyring item with the agent key, and the session's
    /// clock; nil when locked (a deadline that passed locks here too). A use moves the idle
    /// deadline. An item that is gone, replaced or altered ends the session.
    func session(countsAsUse: Bool) throws -> (SecureBytes, SessionInfo)? {
        checkDeadlines()
        guard var h = held else { return nil }
        switch try ring.lookup() {
        case .agentWrapped(let w)? where w.sessionId == h.sessionId:
            guard let key = try? w.unwrap(agentKey: h.agentKey, vaultId: vaultId) else {
                lock(reason: "its keyring item was altered")
                return nil
            }
            if countsAsUse {
                h.lastUsedAt = Self.now()
                held = h
                arm()
            }
            return (key, info!)
        case .direct(let rec)?:
            // A command unlocked without reaching this agent: the newer session wins.
            try adopt(rec)
            return try session(countsAsUse: countsAsUse)
        default:
            lock(reason: "its keyring item was removed or replaced outside the agent")
            return nil
        }
    }

    /// A command the agent served without handing out the key (`vault sync`, `vault put`'s
    /// notice) is a use too: the idle deadline moves.
    func noteUse() {
        guard var h = held else { return }
        h.lastUsedAt = Self.now()
        held = h
        arm()
    }

    /// After a rotation: the new master key, same session and deadlines.
    func replace(masterKey: SecureBytes, epoch: UInt32) throws {
        guard var h = held else { throw VaultError(.locked, "the vault is locked", hint: "run `vault unlock`") }
        try ring.store(try AgentWrappedKey.wrap(masterKey: masterKey, agentKey: h.agentKey, vaultId: vaultId, epoch: epoch, sessionId: h.sessionId))
        h.epoch = epoch
        held = h
    }

    /// Ends the session: the keyring item is removed and the agent key released (its locked
    /// memory zeroed). `reason` (nil for `vault lock`) is what later commands are told.
    /// Returns whether a session was there.
    @discardableResult
    func lock(reason: String?) -> Bool {
        let was = held != nil
        held = nil   // the only reference to the agent key: zeroed and freed here
        timer.clear()
        do { try ring.clear() } catch { log("could not remove the keyring item: \(error)") }
        if was || reason == nil { lockReason = reason }
        if was {
            lockedAt = Self.now()
            log("locked: \(reason ?? "`vault lock`")")
            onLocked(reason)
        }
        return was
    }
}
