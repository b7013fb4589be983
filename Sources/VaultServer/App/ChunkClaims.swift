import Foundation

/// Which request is writing which chunk (`uploadId#index`) right now.
///
/// A claim ends when its request ends, and the connection's end ends the request. A connection
/// can also die without the server seeing it (no FIN reaches it), and its claim would then
/// block the resumed client until the connection timed out. So a claim that has made no
/// progress for `stallAfter` may be taken over by a new request for the same chunk; the old
/// writer's ticket is then dead: it cannot write another byte, keep a prefix, or record the
/// chunk (`whileOwned` returns nil). A new request that finds the chunk claimed waits up to
/// `graceWait` for it to be released (a killed client's connection usually ends within
/// milliseconds), so a client resuming at once does not get a stream of 409s.
final class ChunkClaims: @unchecked Sendable {
    // SAFETY: `claims`, `nextGeneration`, `waiting` and every `Entry`'s `generation` and
    // `lastProgress` are guarded by `condition`; `Entry.writeLock` serialises a writer's
    // check-then-write against a takeover's fence.
    fileprivate final class Entry {
        var generation: UInt64
        var lastProgress: Date
        let writeLock = NSLock()
        init(generation: UInt64, at: Date) { self.generation = generation; lastProgress = at }
    }

    /// What a writer holds while it owns a chunk.
    struct Ticket: @unchecked Sendable {
        // SAFETY: `entry` is only touched through `ChunkClaims`, under its locks.
        let key: String
        let generation: UInt64
        fileprivate let entry: Entry
    }

    enum Outcome {
        /// The chunk is this request's; `tookOver` when a stalled writer was superseded.
        case claimed(Ticket, tookOver: Bool)
        /// Another request is still making progress on it.
        case busy(retryAfter: Int)
    }

    private let condition = NSCondition()
    private var claims: [String: Entry] = [:]
    private var nextGeneration: UInt64 = 1
    private var waiting = 0
    let stallAfter: TimeInterval
    let graceWait: TimeInterval
    private let now: @Sendable () -> Date

    /// `now` defaults to a monotonic clock (a wall-clock jump must not make a live writer look
    /// stalled); tests pass a clock they move by hand.
    init(stallAfter: TimeInterval, graceWait: TimeInterval,
         now: @escaping @Sendable () -> Date = { Date(timeIntervalSinceReferenceDate: Double(DispatchTime.now().uptimeNanoseconds) / 1e9) }) {
        self.stallAfter = stallAfter; self.graceWait = graceWait; self.now = now
    }

    /// Requests currently waiting in `acquire` (for tests).
    var waitingCount: Int { condition.lock(); defer { condition.unlock() }; return waiting }

    /// Claims `key`: at once when free; after waiting (at most `graceWait`) for its release; or
    /// by taking it over once its writer has made no progress for `stallAfter`.
    func acquire(_ key: String) -> Outcome {
        condition.lock()
        let deadline = now().addingTimeInterval(graceWait)
        while true {
            let t = now()
            guard let entry = claims[key] else {
                let entry = Entry(generation: takeGeneration(), at: t)
                claims[key] = entry
                condition.unlock()
                return .claimed(Ticket(key: key, generation: entry.generation, entry: entry), tookOver: false)
            }
            let idle = t.timeIntervalSince(entry.lastProgress)
            if idle >= stallAfter {
                entry.generation = takeGeneration()
                entry.lastProgress = t
                let ticket = Ticket(key: key, generation: entry.generation, entry: entry)
                condition.unlock()
                // Fence: a write the old writer began before the takeover ends before we return;
                // every later one sees the new generation and is refused.
                entry.writeLock.lock(); entry.writeLock.unlock()
                return .claimed(ticket, tookOver: true)
            }
            guard t < deadline else {
                condition.unlock()
                return .busy(retryAfter: max(1, Int((stallAfter - idle).rounded(.up))))
            }
            // `now` need not be the wall clock: wait for the interval, not until a wall-clock date.
            let wake = min(deadline, entry.lastProgress.addingTimeInterval(stallAfter))
            waiting += 1
            _ = condition.wait(until: Date().addingTimeInterval(max(0, wake.timeIntervalSince(t))))
            waiting -= 1
        }
    }

    /// Runs `body` (a write, or recording the chunk) only while `ticket` still owns its claim,
    /// and counts it as progress; nil, without running `body`, once the claim was taken over.
    func whileOwned<R>(_ ticket: Ticket, _ body: () throws -> R) rethrows -> R? {
        ticket.entry.writeLock.lock(); defer { ticket.entry.writeLock.unlock() }
        guard isCurrent(ticket) else { return nil }
        let result = try body()
        condition.lock()
        if ticket.entry.generation == ticket.generation { ticket.entry.lastProgress = now() }
        condition.unlock()
        return result
    }

    /// Ends the claim if `ticket` still holds it, waking waiters.
    func release(_ ticket: Ticket) {
        condition.lock(); defer { condition.unlock() }
        guard let entry = claims[ticket.key], entry === ticket.entry, entry.generation == ticket.generation else { return }
        claims.removeValue(forKey: ticket.key)
        condition.broadcast()
    }

    private func isCurrent(_ ticket: Ticket) -> Bool {
        condition.lock(); defer { condition.unlock() }
        return ticket.entry.generation == ticket.generation && claims[ticket.key] === ticket.entry
    }

    private func takeGeneration() -> UInt64 {
        defer { nextGeneration += 1 }
        return nextGeneration
    }
}
