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
    /// Entries kept per table (user names, IPs, users with known IPs); the stalest go first.
    public var maxEntries = 100_000

    public init() {}
}

/// Per-user and per-IP backoff on failed logins, in memory (a restart forgets it).
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
final class LoginThrottle: @unchecked Sendable {
    // SAFETY: all tables are only touched with `lock` held.
    private let lock = NSLock()
    private let policy: LoginThrottlePolicy
    private let clock: @Sendable () -> Double
    private var users: [String: Counter] = [:]
    private var ips: [String: Counter] = [:]
    private var known: [String: [String: Double]] = [:]

    private struct Counter {
        var failures: Double
        var last: Double
    }

    init(policy: LoginThrottlePolicy, clock: @escaping @Sendable () -> Double = MonotonicClock.now) {
        self.policy = policy; self.clock = clock
    }

    /// Before a password check: nil to go ahead (a failure is provisionally recorded; call
    /// `succeeded` if the password is right), or the whole seconds to wait.
    func admit(user: String, ip: String) -> Int? {
        lock.lock(); defer { lock.unlock() }
        let now = clock()
        let ipWait = wait(ips[ip], limit: policy.ipFailures, now: now)
        var userWait = wait(users[user], limit: policy.userFailures, now: now)
        if ipWait == 0, let seen = known[user]?[ip], now - seen < policy.knownFor { userWait = 0 }
        let longest = max(ipWait, userWait)
        guard longest <= 0 else { return max(1, Int(longest.rounded(.up))) }
        record(&users, user, now: now)
        record(&ips, ip, now: now)
        return nil
    }

    /// The password was right: takes back the provisional failures and remembers the IP.
    func succeeded(user: String, ip: String) {
        lock.lock(); defer { lock.unlock() }
        takeBack(&users, user)
        takeBack(&ips, ip)
        var mine = known[user] ?? [:]
        mine[ip] = clock()
        if mine.count > policy.knownIPsPerUser, let oldest = mine.min(by: { $0.value < $1.value })?.key {
            mine.removeValue(forKey: oldest)
        }
        if known[user] == nil && known.count >= policy.maxEntries,
           let stalest = known.min(by: { ($0.value.values.max() ?? 0) < ($1.value.values.max() ?? 0) })?.key {
            known.removeValue(forKey: stalest)
        }
        known[user] = mine
    }

    /// Failures `user` and `ip` have now (after decay), for tests and logs.
    func failures(user: String, ip: String) -> (user: Int, ip: Int) {
        lock.lock(); defer { lock.unlock() }
        let now = clock()
        return (Int(current(users[user], now: now)), Int(current(ips[ip], now: now)))
    }

    /// Entries per table (tests check they stay bounded).
    var tableSizes: (users: Int, ips: Int, known: Int) {
        lock.lock(); defer { lock.unlock() }
        return (users.count, ips.count, known.count)
    }

    // MARK: -

    private func current(_ c: Counter?, now: Double) -> Double {
        guard let c else { return 0 }
        let forgotten = policy.decay > 0 ? ((now - c.last) / policy.decay).rounded(.down) : 0
        return max(0, c.failures - max(0, forgotten))
    }

    /// Seconds until an attempt is allowed (≤ 0: now).
    private func wait(_ c: Counter?, limit: Int, now: Double) -> Double {
        guard let c else { return 0 }
        let f = current(c, now: now)
        guard f >= Double(limit) else { return 0 }
        let delay = min(policy.maxDelay, policy.baseDelay * pow(2, min(f - Double(limit), 62)))
        return c.last + delay - now
    }

    private func record(_ table: inout [String: Counter], _ key: String, now: Double) {
        if table[key] == nil && table.count >= policy.maxEntries { prune(&table, now: now) }
        table[key] = Counter(failures: current(table[key], now: now) + 1, last: now)
    }

    private func takeBack(_ table: inout [String: Counter], _ key: String) {
        guard let c = table[key] else { return }
        if c.failures <= 1 { table.removeValue(forKey: key) } else { table[key]?.failures = c.failures - 1 }
    }

    /// Drops forgotten entries; if none is, the one with the oldest failure.
    private func prune(_ table: inout [String: Counter], now: Double) {
        table = table.filter { current($0.value, now: now) > 0 }
        if table.count >= policy.maxEntries, let stalest = table.min(by: { $0.value.last < $1.value.last })?.key {
            table.removeValue(forKey: stalest)
        }
    }
}
