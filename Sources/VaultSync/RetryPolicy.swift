import Foundation
import VaultHTTP
import VaultPrimitives

/// The HTTP side of `RetryPolicy` (VaultPrimitives): which answers and transport failures are
/// worth another try, the server's `Retry-After`, and the pause of a transfer between tries.
extension RetryPolicy {
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
