import Foundation
import Dispatch

/// One timer on the agent's queue, set to a wall-clock instant (`DispatchWallTime`, so time
/// spent suspended counts) and re-set as deadlines move: it fires once per setting, never
/// polls. Use only on `queue`.
final class DeadlineTimer {
    private let source: DispatchSourceTimer
    /// The instant it is set to (seconds since the epoch), nil when idle.
    private(set) var firesAt: Double?

    init(queue: DispatchQueue, handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.setEventHandler(handler: handler)
        source.schedule(wallDeadline: .distantFuture)
        source.resume()
    }

    /// Fires at `time` (seconds since the epoch), replacing any earlier setting.
    func set(at time: Double) {
        firesAt = time
        let whole = time.rounded(.down)
        let spec = timespec(tv_sec: Int(whole), tv_nsec: Int((time - whole) * 1_000_000_000))
        source.schedule(wallDeadline: DispatchWallTime(timespec: spec), leeway: .milliseconds(20))
    }

    /// Fires `seconds` from now.
    func set(after seconds: Double) { set(at: Date().timeIntervalSince1970 + seconds) }

    /// Idle until set again.
    func clear() {
        firesAt = nil
        source.schedule(wallDeadline: .distantFuture)
    }

    deinit { source.cancel() }
}
