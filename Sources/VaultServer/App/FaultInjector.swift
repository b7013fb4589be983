import Foundation
import VaultAPI
import VaultPrimitives

/// The test-only fault switches, applied to requests that arrive after they are set.
final class FaultInjector: @unchecked Sendable {
    /// What to do to one incoming request.
    enum Action {
        case delay(milliseconds: Int)
        case fail(APIError)
    }

    // SAFETY: guarded by `state`'s lock.
    private let state = Locked(FaultSettings())
    private let drops = Locked(0)
    private let tooMany = Locked(0)
    /// The seeded `errorRate` draws (`FaultSettings.errorSeed`), nil: unseeded.
    private let draws = Locked<SplitMix64?>(nil)

    var current: FaultSettings { state.withLock { $0 } }

    func set(_ settings: FaultSettings) {
        var kept = settings
        kept.expireSessionsNow = nil
        state.withLock { $0 = kept }
        drops.withLock { $0 = settings.dropAfterBytes == nil ? 0 : max(settings.dropCount ?? 1, 1) }
        tooMany.withLock { $0 = max(settings.retryAfter429Count ?? 0, 0) }
        draws.withLock { $0 = settings.errorSeed.map(SplitMix64.init(seed:)) }
    }

    /// A draw in [0, 1) for `errorRate`: the next of the seeded sequence, or the system generator's.
    private func draw() -> Double {
        draws.withLock { g -> Double in g?.unit() ?? Double.random(in: 0..<1) }
    }

    /// Actions for a new request to `path`, in order (delay first, then maybe an injected error;
    /// errors only on paths under `errorPathPrefix` when it is set).
    func actions(path: String) -> [Action] {
        let s = current
        var out: [Action] = []
        if let ms = s.delayMs, ms > 0 { out.append(.delay(milliseconds: min(ms, 60_000))) }
        let claimed429 = tooMany.withLock { n -> Bool in if n > 0 { n -= 1; return true }; return false }
        if claimed429 {
            out.append(.fail(APIError.tooMany("injected 429", retryAfter: s.retryAfterSeconds ?? 1)))
        } else if let rate = s.errorRate, rate > 0, s.errorPathPrefix.map(path.hasPrefix) ?? true, draw() < rate {
            let status = s.errorStatus ?? 503
            out.append(.fail(APIError(status: status, code: .injectedFault, message: "injected \(status)")))
        }
        return out
    }

    /// Claims one body drop: the byte count after which to cut the connection.
    func claimDrop() -> Int64? {
        guard let after = current.dropAfterBytes else { return nil }
        return drops.withLock { n -> Int64? in
            guard n > 0 else { return nil }
            n -= 1
            return after
        }
    }
}
