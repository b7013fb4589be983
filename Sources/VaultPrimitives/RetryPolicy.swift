import Foundation

/// When and how long to wait before trying a failed request again: exponential backoff with full
/// jitter (a random delay between 0 and `min(cap, base·2^attempt)`), never shorter than the
/// server's `Retry-After`, and a limit on consecutive failures. Here (no C library, no HTTP) so
/// that `VaultSync` retries requests with it and the `vault-agent` process, which links no HTTP
/// client, spaces whole sync passes and push-channel connections with the same rule (its own base
/// and cap). The HTTP-specific parts (which statuses and transport errors are retryable,
/// `Retry-After`) are in `VaultSync`.
public struct RetryPolicy: Sendable {
    /// The first backoff ceiling.
    public var base: TimeInterval = 0.5
    /// The largest backoff ceiling.
    public var cap: TimeInterval = 30
    /// Consecutive failures after which a transfer stops and waits for the next `vault sync`.
    public var maxAttempts = 8

    /// The defaults, with test overrides `VAULT_RETRY_BASE_MS`, `VAULT_RETRY_CAP_MS`, `VAULT_RETRY_MAX`.
    public static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment) -> RetryPolicy {
        var p = RetryPolicy()
        if let ms = env["VAULT_RETRY_BASE_MS"].flatMap(Double.init) { p.base = ms / 1000 }
        if let ms = env["VAULT_RETRY_CAP_MS"].flatMap(Double.init) { p.cap = ms / 1000 }
        if let n = env["VAULT_RETRY_MAX"].flatMap(Int.init) { p.maxAttempts = max(1, n) }
        return p
    }

    /// A policy with this first and largest ceiling.
    public init(base: TimeInterval, cap: TimeInterval) { self.base = base; self.cap = cap }

    /// The defaults (0.5 s doubling to 30 s, 8 attempts).
    public init() {}

    /// The wait before retry number `attempt` (0-based), honouring `retryAfter` (capped at 10 minutes).
    public func delay(attempt: Int, retryAfter: TimeInterval?) -> TimeInterval {
        let ceiling = min(cap, base * pow(2, Double(min(attempt, 30))))
        let jittered = Double.random(in: 0...max(ceiling, 0))
        return max(jittered, min(retryAfter ?? 0, 600))
    }
}
