import Foundation

/// The open event streams: wakes a user's streams when their change feed grows, caps how many
/// one user may hold, schedules keep-alive comments, and ends them all at shutdown.
///
/// Time is a monotonic clock in seconds passed in by the caller (`tick(now:)`), so tests drive
/// keep-alives by hand.
final class EventHub: @unchecked Sendable {
    // SAFETY: all state is only touched with `lock` held. Streams are called with it held
    // (hub → stream lock order); streams never call back into the hub while holding theirs.
    private let lock = NSLock()
    private var latest: [String: Int64] = [:]
    private var streams: [String: [ObjectIdentifier: Registration]] = [:]
    private var stopped = false
    /// Streams one user may hold at once; more are answered 429.
    let perUserLimit: Int
    /// Seconds between keep-alive comments.
    let keepAlive: Double

    private struct Registration {
        let stream: EventStream
        var due: Double
    }

    init(perUserLimit: Int, keepAlive: Double) {
        self.perUserLimit = perUserLimit; self.keepAlive = keepAlive
    }

    /// Records that `owner`'s feed now reaches `cursor` and wakes their streams.
    func publish(owner: String, cursor: Int64) {
        lock.lock(); defer { lock.unlock() }
        latest[owner] = max(latest[owner] ?? 0, cursor)
        if let mine = streams[owner] { for r in mine.values { r.stream.offer(cursor: cursor) } }
    }

    /// A new stream for `owner` resuming after `after`; 429 (`too_many_requests`, Retry-After
    /// the keep-alive interval, within which a vanished client's stream is noticed) when the
    /// user already holds `perUserLimit`.
    func open(owner: String, generation: Int64 = 0, after: Int64, now: Double) throws -> EventStream {
        lock.lock(); defer { lock.unlock() }
        let stream = EventStream(hub: self, owner: owner, generation: generation, after: after)
        if stopped { stream.end(); return stream }
        var mine = streams[owner] ?? [:]
        guard mine.count < perUserLimit else {
            throw APIError.tooMany("at most \(perUserLimit) event streams per user are open at once",
                                   retryAfter: max(1, Int(keepAlive.rounded(.up))))
        }
        mine[ObjectIdentifier(stream)] = Registration(stream: stream, due: now + keepAlive)
        streams[owner] = mine
        if let c = latest[owner] { stream.offer(cursor: c) }
        return stream
    }

    /// Forgets a stream (it closed); idempotent.
    func close(_ stream: EventStream) {
        lock.lock(); defer { lock.unlock() }
        streams[stream.owner]?.removeValue(forKey: ObjectIdentifier(stream))
        if streams[stream.owner]?.isEmpty == true { streams.removeValue(forKey: stream.owner) }
    }

    /// Asks every stream whose keep-alive is due for one.
    func tick(now: Double) {
        lock.lock(); defer { lock.unlock() }
        for (owner, regs) in streams {
            for (id, r) in regs where r.due <= now {
                streams[owner]?[id]?.due = now + keepAlive
                r.stream.keepAliveDue()
            }
        }
    }

    /// Cuts off every stream whose owner and token generation `isCurrent` no longer accepts (the
    /// user was removed or its tokens revoked). `isCurrent` runs without the hub's lock held.
    func cutOff(unless isCurrent: (_ owner: String, _ generation: Int64) -> Bool) {
        lock.lock()
        let all = streams.values.flatMap { $0.values.map(\.stream) }
        lock.unlock()
        var verdicts: [String: Bool] = [:]
        for stream in all {
            let key = "\(stream.owner)#\(stream.generation)"
            let current = verdicts[key] ?? isCurrent(stream.owner, stream.generation)
            verdicts[key] = current
            if !current { stream.clientGone() }
        }
    }

    /// Ends every stream (shutdown); later ones end at once.
    func stop() {
        lock.lock(); defer { lock.unlock() }
        stopped = true
        for regs in streams.values { for r in regs.values { r.stream.end() } }
    }

    var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    /// Streams `owner` holds now.
    func openStreams(owner: String) -> Int {
        lock.lock(); defer { lock.unlock() }
        return streams[owner]?.count ?? 0
    }

    /// The users holding a stream now.
    var ownersWithStreams: [String] {
        lock.lock(); defer { lock.unlock() }
        return streams.filter { !$0.value.isEmpty }.map(\.key)
    }

    /// Streams open now, all users.
    var totalStreams: Int {
        lock.lock(); defer { lock.unlock() }
        return streams.values.reduce(0) { $0 + $1.count }
    }
}
