import Foundation

/// How failed password checks are slowed down (`POST /v1/auth/token`).
public struct LoginThrottlePolicy: Sendable, Equatable {
    /// Failures one user name may collect before attempts for it must wait.
    public var userFailures = 5
    /// Failures one client IP may collect (over all user names) before its attempts must wait.
    public var ipFailures = 20
    /// The first wait, in seconds; it doubles with every further failure.
    public var baseDelay: Double = 1
    /// The longest wait, in seconds.
    public var maxDelay: Double = 900
    /// Seconds without a new failure after which one failure is forgotten.
    public var decay: Double = 600
    /// How long a successful (user, IP) pair is remembered, in seconds.
    public var knownFor: Double = 30 * 86_400
    /// Remembered IPs per user (the oldest is dropped).
    public var knownIPsPerUser = 16
    /// Entries kept per table in memory (user names, IPs, users with known IPs); the stalest go
    /// first. The metadata store's tables are bounded by the sweep instead (forgotten entries).
    public var maxEntries = 100_000

    public init() {}
}

/// One failure count of a user name or a client IP: failures (after decay, at `last`) and the
/// time of the last one, in seconds since 1970 (every server of a deployment shares the clock).
struct LoginCounter: Sendable, Equatable {
    var failures: Double
    var last: Double
}

/// What the throttle knows about one attempt's user name and client IP.
struct LoginEntries: Sendable, Equatable {
    var user: LoginCounter?
    var ip: LoginCounter?
    /// IPs the user signed in from successfully, with when.
    var knownIPs: [String: Double] = [:]
}

/// Where the throttle's counts live: the metadata store (`StoredLoginLedger`, shared by every
/// server on it) or memory (`MemoryLoginLedger`, for the policy's tests).
protocol LoginLedger: Sendable {
    /// Reads the entries of `user` and `ip`, lets `body` change them and writes them back, as one
    /// step no other attempt (on this server or another) interleaves with.
    func update<R>(user: String, ip: String, now: Double, _ body: (inout LoginEntries) throws -> R) throws -> R
}

/// Per-user and per-IP backoff on failed logins, kept in a `LoginLedger` (the metadata store:
/// every instance behind a balancer sees the same counts, and a restart forgets nothing).
///
/// Policy: each attempt first counts as a failure for its user name and for its client IP (so
/// parallel guesses see each other); a correct password takes the mark back. A name or an IP
/// with at least `userFailures` / `ipFailures` failures must wait `baseDelay × 2^(failures −
/// limit)` seconds (at most `maxDelay`) after its last failure; earlier attempts are answered
/// 429 with `Retry-After` and no password is checked. One failure is forgotten per `decay`
/// seconds without a new one. A success never clears earlier failures (an attacker with an
/// account of their own cannot reset their IP's count).
///
/// So that guessing at one account does not lock its owner out everywhere, an IP from which
/// that user logged in successfully (within `knownFor`) is exempt from the user's backoff, as
/// long as the IP itself is not held back. A new IP must wait like the attacker while the
/// account is under attack. Unknown user names are counted like real ones, so answers do not
/// reveal who exists.
final class LoginThrottle: Sendable {
    private let policy: LoginThrottlePolicy
    let ledger: any LoginLedger
    /// Seconds since 1970 (wall clock: the counts are shared between machines).
    private let clock: @Sendable () -> Double

    init(policy: LoginThrottlePolicy, ledger: any LoginLedger,
         clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.policy = policy; self.ledger = ledger; self.clock = clock
    }

    /// Before a password check: nil to go ahead (a failure is provisionally recorded; call
    /// `succeeded` if the password is right), or the whole seconds to wait.
    func admit(user: String, ip: String) throws -> Int? {
        let now = clock()
        return try ledger.update(user: user, ip: ip, now: now) { e in
            let ipWait = policy.wait(e.ip, limit: policy.ipFailures, now: now)
            var userWait = policy.wait(e.user, limit: policy.userFailures, now: now)
            if ipWait == 0, let seen = e.knownIPs[ip], now - seen < policy.knownFor { userWait = 0 }
            let longest = max(ipWait, userWait)
            guard longest <= 0 else { return max(1, Int(longest.rounded(.up))) }
            e.user = LoginCounter(failures: policy.current(e.user, now: now) + 1, last: now)
            e.ip = LoginCounter(failures: policy.current(e.ip, now: now) + 1, last: now)
            return nil
        }
    }

    /// The password was right: takes back the provisional failures and remembers the IP.
    func succeeded(user: String, ip: String) throws {
        let now = clock()
        try ledger.update(user: user, ip: ip, now: now) { e in
            e.user = Self.takeBack(e.user)
            e.ip = Self.takeBack(e.ip)
            e.knownIPs[ip] = now
            if e.knownIPs.count > policy.knownIPsPerUser, let oldest = e.knownIPs.min(by: { $0.value < $1.value })?.key {
                e.knownIPs.removeValue(forKey: oldest)
            }
        }
    }

    /// Failures `user` and `ip` have now (after decay), for tests and logs.
    func failures(user: String, ip: String) throws -> (user: Int, ip: Int) {
        let now = clock()
        return try ledger.update(user: user, ip: ip, now: now) { e in
            (Int(policy.current(e.user, now: now)), Int(policy.current(e.ip, now: now)))
        }
    }

    private static func takeBack(_ c: LoginCounter?) -> LoginCounter? {
        guard var c, c.failures > 1 else { return nil }
        c.failures -= 1
        return c
    }
}

extension LoginThrottlePolicy {
    /// The failures of `c` at `now`: one forgotten per `decay` seconds since the last.
    func current(_ c: LoginCounter?, now: Double) -> Double {
        guard let c else { return 0 }
        let forgotten = decay > 0 ? ((now - c.last) / decay).rounded(.down) : 0
        return max(0, c.failures - max(0, forgotten))
    }

    /// Seconds until an attempt is allowed (≤ 0: now).
    func wait(_ c: LoginCounter?, limit: Int, now: Double) -> Double {
        guard let c else { return 0 }
        let f = current(c, now: now)
        guard f >= Double(limit) else { return 0 }
        let delay = min(maxDelay, baseDelay * pow(2, min(f - Double(limit), 62)))
        return c.last + delay - now
    }
}

/// The throttle's counts in memory, each table bounded by `maxEntries` (the stalest go first).
final class MemoryLoginLedger: LoginLedger, @unchecked Sendable {
    // SAFETY: all tables are only touched with `lock` held.
    private let lock = NSLock()
    private let policy: LoginThrottlePolicy
    private var users: [String: LoginCounter] = [:]
    private var ips: [String: LoginCounter] = [:]
    private var known: [String: [String: Double]] = [:]

    init(policy: LoginThrottlePolicy) { self.policy = policy }

    func update<R>(user: String, ip: String, now: Double, _ body: (inout LoginEntries) throws -> R) throws -> R {
        lock.lock(); defer { lock.unlock() }
        var e = LoginEntries(user: users[user], ip: ips[ip], knownIPs: known[user] ?? [:])
        let before = e
        let result = try body(&e)
        if e.user != before.user { store(&users, user, e.user, now: now) }
        if e.ip != before.ip { store(&ips, ip, e.ip, now: now) }
        if e.knownIPs != before.knownIPs {
            if known[user] == nil && known.count >= policy.maxEntries,
               let stalest = known.min(by: { ($0.value.values.max() ?? 0) < ($1.value.values.max() ?? 0) })?.key {
                known.removeValue(forKey: stalest)
            }
            known[user] = e.knownIPs.isEmpty ? nil : e.knownIPs
        }
        return result
    }

    /// Entries per table (tests check they stay bounded).
    var tableSizes: (users: Int, ips: Int, known: Int) {
        lock.lock(); defer { lock.unlock() }
        return (users.count, ips.count, known.count)
    }

    private func store(_ table: inout [String: LoginCounter], _ key: String, _ value: LoginCounter?, now: Double) {
        guard let value else { table.removeValue(forKey: key); return }
        if table[key] == nil && table.count >= policy.maxEntries {
            // Drop forgotten entries; if none is, the one with the oldest failure.
            table = table.filter { policy.current($0.value, now: now) > 0 }
            if table.count >= policy.maxEntries, let stalest = table.min(by: { $0.value.last < $1.value.last })?.key {
                table.removeValue(forKey: stalest)
            }
        }
        table[key] = value
    }
}

/// The throttle's counts in the metadata store, read and written in one write transaction per
/// attempt (on PostgreSQL under the store's write lock, so attempts on any instance serialise).
struct StoredLoginLedger: LoginLedger {
    let store: MetadataStore

    func update<R>(user: String, ip: String, now: Double, _ body: (inout LoginEntries) throws -> R) throws -> R {
        try store.write(.logins) { db in
            var e = LoginEntries(user: try db.loginCounter(.user, user), ip: try db.loginCounter(.ip, ip),
                                 knownIPs: try db.knownLoginIPs(user: user))
            let before = e
            let result = try body(&e)
            if e.user != before.user { try db.setLoginCounter(.user, user, e.user) }
            if e.ip != before.ip { try db.setLoginCounter(.ip, ip, e.ip) }
            if e.knownIPs != before.knownIPs { try db.setKnownLoginIPs(user: user, before: before.knownIPs, after: e.knownIPs) }
            return result
        }
    }
}
