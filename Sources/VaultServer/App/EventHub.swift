import Foundation

/// Wakes SSE streams when a user's change feed grows.
final class EventHub: @unchecked Sendable {
    // SAFETY: all state is guarded by `condition`.
    private let condition = NSCondition()
    private var latest: [String: Int64] = [:]
    private var stopped = false

    /// Records that `owner`'s feed now reaches `cursor` and wakes its streams.
    func publish(owner: String, cursor: Int64) {
        condition.lock()
        latest[owner] = max(latest[owner] ?? 0, cursor)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `owner`'s feed passes `after` (returns the new cursor), the timeout passes
    /// (returns nil) or the hub stops (returns -1).
    func wait(owner: String, after: Int64, timeout: TimeInterval) -> Int64? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock(); defer { condition.unlock() }
        while true {
            if stopped { return -1 }
            if let c = latest[owner], c > after { return c }
            if !condition.wait(until: deadline) { return nil }
        }
    }

    /// Ends every stream (shutdown).
    func stop() {
        condition.lock(); stopped = true; condition.broadcast(); condition.unlock()
    }

    var isStopped: Bool { condition.lock(); defer { condition.unlock() }; return stopped }
}
