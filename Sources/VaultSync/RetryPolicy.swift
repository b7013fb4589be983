import Foundation
import VaultHTTP

/// When and how long to wait before trying a failed request again: exponential backoff with full
/// jitter (a random delay between 0 and `min(cap, base·2^attempt)`), never shorter than the
/// server's `Retry-After`, and a limit on consecutive failures. Public so that `vault agent`
/// spaces whole sync passes with the same rule (its own base and cap).
public struct RetryPolicy: Sendable {
    /// The first backoff ceiling.
    public var base: TimeInterval = 0.5
    /// The largest backoff ceiling.
    public var cap: TimeInterval = 30
    /// Consecutive failures after which a transfer stops and waits for the next `vault sync`.
    var maxAttempts = 8

    /// The defaults, with test overrides `VAULT_RETRY_BASE_MS`, `VAULT_RETRY_CAP_MS`, `VAULT_RETRY_MAX`.
    static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment) -> RetryPolicy {
        var p = RetryPolicy()
        if let ms = env["VAULT_RETRY_BASE_MS"].flatMap(Double.init) { p.base = ms / 1000 }
        if let ms = env["VAULT_RETRY_CAP_MS"].flatMap(Double.init) { p.cap = ms / 1000 }
        if let n = env["VAULT_RETRY_MAX"].flatMap(Int.init) { p.maxAttempts = max(1, n) }
        return p
    }

    /// A policy with this first and largest ceiling.
    public init(base: TimeInterval, cap: TimeInterval) { self.base = base; self.cap = cap }

    init() {}

    /// The wait before retry number `attempt` (0-based), honouring `retryAfter` (capped at 10 minutes).
    public func delay(attempt: Int, retryAfter: TimeInterval?) -> TimeInterval {
        let ceiling = min(cap, base * pow(2, Double(min(attempt, 30))))
        let jittered = Double.random(in: 0...max(ceiling, 0))
        return max(jittered, min(retryAfter ?? 0, 600))
    }

    /// Whether an HTTP status is worth retrying: 5xx, 408, 409 (chunk busy), 429.
    /// Other 4xx (and 412, a conflict) are final.
    static func isRetryable(status: Int) -> Bool {
        status >= 500 || status == 408 || status == 409 || status == 429
    }

    /// Whether a transport failure is worth retrying: connection trouble, timeouts, stalls and
    /// resets are; TLS refusals and the caller's own aborts are not.
    static func isRetryable(_ error: HTTPError) -> Bool {
        switch error {
        case .connect, .timeout, .stalled, .transport: return true
        case .tls, .aborted, .tooLarge: return false
        }
    }

    /// `Retry-After` in seconds (delta-seconds or an HTTP date), if the response has one.
    static func retryAfter(_ r: HTTPResponse) -> TimeInterval? {
        guard let v = r.header("Retry-After")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let s = Double(v) { return max(0, s) }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return f.date(from: v).map { max(0, $0.timeIntervalSinceNow) }
    }
}

extension RetryPolicy {
    /// After the `failures`-th failure in a row of a transfer: counts the attempt and, unless
    /// `maxAttempts` is reached, records the wait, says it, sleeps, and marks the transfer running
    /// again. Returns `giveUp` (the caller ends the transfer its own way) and the wait it computed.
    func pause(after f: RetryableFailure, failures: Int, record: TransferRecord, path: String,
               say: (String) -> Void) -> (giveUp: Bool, wait: TimeInterval) {
        record.countAttempt()
        let wait = delay(attempt: failures - 1, retryAfter: f.retryAfter)
        if failures >= maxAttempts { return (true, wait) }
        record.set(.waitingToRetry, error: f.reason, retryAt: Date().addingTimeInterval(wait))
        say("\(path): \(f.reason); retrying in \(String(format: "%.1f", wait)) s")
        Thread.sleep(forTimeInterval: wait)
        record.set(.running)
        return (false, wait)
    }
}
