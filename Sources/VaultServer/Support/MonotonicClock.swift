import Foundation

/// Seconds on the monotonic clock (unaffected by wall-clock changes). Deadlines, keep-alives and
/// login backoff take their time from a closure that defaults to this, so tests can pass their
/// own.
enum MonotonicClock {
    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1_000_000_000 }
}
