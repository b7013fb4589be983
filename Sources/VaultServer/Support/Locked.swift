import Foundation

/// A value reachable only while holding its lock (the "lock in a box" pattern).
final class Locked<Value>: @unchecked Sendable {
    // SAFETY: `value` is only touched inside `withLock`, under `lock`.
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock(); defer { lock.unlock() }
        return try body(&value)
    }
}
