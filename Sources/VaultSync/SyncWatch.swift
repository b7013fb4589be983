import Foundation
import VaultCore
import VaultPrimitives

/// `vault sync --watch`'s wait for the server's next change, over the push channel
/// (`ChangeEventStream`, which holds no vault: the vault is free between syncs). An event leaves
/// the stream (the caller syncs and asks again, with the event's id as `Last-Event-ID`); a failure
/// backs off with full jitter, never less than the server's `Retry-After` (429 when too many
/// streams are open); a refused token gets a new one. `stop` (from a signal handler's thread)
/// ends a wait within about a second.
public final class SyncWatch: @unchecked Sendable {
    // SAFETY: `current` and `stopped` are only touched with `lock` held.
    private let lock = NSLock()
    private var current: ChangeEventStream?
    private var stopped = false
    private let makeStream: (_ refreshToken: Bool) throws -> ChangeEventStream
    private let retry = RetryPolicy.fromEnvironment()
    private let say: (String) -> Void

    /// - Parameter makeStream: opens the push channel (reads the address and token from the vault,
    ///   refreshing the token when asked).
    public init(say: @escaping (String) -> Void = { _ in }, makeStream: @escaping (_ refreshToken: Bool) throws -> ChangeEventStream) {
        self.makeStream = makeStream; self.say = say
    }

    /// Ends the current or next wait.
    public func stop() {
        lock.lock(); stopped = true; let s = current; lock.unlock()
        s?.cancel()
    }

    public var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    /// Waits until the server's feed passes `lastEventId`; returns the new event id, or nil once
    /// stopped.
    public func next(after lastEventId: String?) throws -> String? {
        var failures = 0
        var refresh = false
        while !isStopped {
            let stream = try makeStream(refresh)
            refresh = false
            lock.lock(); current = stream; let stop = stopped; lock.unlock()
            if stop { return nil }
            var arrived: String?
            var retryAfter: TimeInterval?
            var reason = "the server ended the event stream"
            do {
                try stream.run(lastEventId: lastEventId, onOpen: { failures = 0 }, onEvent: { e in
                    guard e.type == "changed", let id = e.id, id != lastEventId else { return }
                    arrived = id
                    stream.cancel()
                })
            } catch ChangeStreamError.tokenRefused {
                refresh = true
                continue
            } catch ChangeStreamError.status(let code, let after) {
                reason = "the event stream answered HTTP \(code)"
                retryAfter = after
            } catch let e as ChangeStreamError {
                reason = e.description
            }
            if let arrived { return arrived }
            if isStopped { return nil }
            failures += 1
            let wait = retry.delay(attempt: min(failures - 1, 10), retryAfter: retryAfter)
            say("\(reason); listening again in \(String(format: "%.1f", wait)) s")
            let until = Date().addingTimeInterval(wait)
            while Date() < until && !isStopped { Thread.sleep(forTimeInterval: min(0.1, max(0, until.timeIntervalSinceNow))) }
        }
        return nil
    }
}
