import Foundation
import VaultAPI

/// `GET /v1/events`: Server-Sent Events saying "changed up to cursor N" (never file data),
/// resuming after `Last-Event-ID` (or `?cursor=`), with keep-alive comments. At most
/// `--max-event-streams` per user (429 beyond). A stream of a user since removed, or whose tokens
/// were revoked, is cut off by the next sweep (`cutOffRevokedStreams`).
extension VaultService {
    func events(_ ctx: RequestContext) throws -> RequestPlan {
        // Both are checked; a non-empty Last-Event-ID (a browser's reconnect) wins over the query,
        // an empty one counts as absent.
        let header = try Self.cursorValue(ctx.request.header("last-event-id"), name: "Last-Event-ID")
        let query = try Self.cursorValue(ctx.request.query["cursor"], name: "cursor")
        let last = try header ?? query ?? store.withDB { db in try db.feedCursor(owner: ctx.userId) }
        let userLatest = try store.withDB { db in try db.latestCursor(owner: ctx.userId) }
        hub.publish(owner: ctx.userId, cursor: userLatest)
        let generation = try users.generation(id: ctx.userId) ?? 0
        let stream = try hub.open(owner: ctx.userId, generation: generation, after: last, now: clock())
        return .respond(HTTPResponse(status: 200, headers: [
            ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no"),
        ], body: .stream(stream)))
    }

    /// A cursor given as text: nil when absent or empty, 400 `invalid_cursor` unless digits.
    static func cursorValue(_ raw: String?, name: String) throws -> Int64? {
        guard let raw, !raw.isEmpty else { return nil }
        guard let v = Digits.parse(raw, maxDigits: maxDigits) else {
            throw APIError.badRequest("\(name) must be a cursor (a whole number from a previous event)", code: .invalidCursor)
        }
        return v
    }
}

/// The body of one SSE connection. It never blocks: `poll` answers `.later` when there is
/// nothing to send, and the hub (news, keep-alive due, shutdown) or the hang-up watcher (client
/// gone) wakes it.
final class EventStream: LiveBody, @unchecked Sendable {
    // SAFETY: mutable state is only touched with `lock` held; `wake` is called without it.
    private let lock = NSLock()
    private weak var hub: EventHub?
    let owner: String
    /// The owner's token generation when the stream opened (see `EventHub.cutOff`).
    let generation: Int64
    private var after: Int64
    private var known: Int64 = -1
    private var pending: [UInt8] = Array("retry: 2000\n: connected\n\n".utf8)
    private var keepAlive = false
    private var ended = false
    private var gone = false
    private var closed = false
    private var wake: (@Sendable () -> Void)?

    init(hub: EventHub, owner: String, generation: Int64 = 0, after: Int64) {
        self.hub = hub; self.owner = owner; self.generation = generation; self.after = after
    }

    func poll(into buffer: UnsafeMutableRawBufferPointer) -> LiveRead {
        lock.lock(); defer { lock.unlock() }
        if gone { return .failed }
        if pending.isEmpty {
            if known > after {
                after = known
                pending = Array("id: \(known)\nevent: changed\ndata: {\"cursor\":\(known)}\n\n".utf8)
            } else if ended {
                return .end
            } else if keepAlive {
                keepAlive = false
                pending = Array(": keep-alive\n\n".utf8)
            } else {
                return .later
            }
        }
        let n = min(buffer.count, pending.count)
        pending.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        pending.removeFirst(n)
        return .bytes(n)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        switch poll(into: buffer) {
        case .bytes(let n): return n
        case .later: return 0
        case .end, .failed: return nil
        }
    }

    func onWake(_ wake: @escaping @Sendable () -> Void) {
        lock.lock(); self.wake = wake; lock.unlock()
    }

    /// The client is gone, or may no longer listen: the connection is dropped.
    func clientGone() { update { $0.gone = true } }

    /// The user's feed reached `cursor`.
    func offer(cursor: Int64) { update { $0.known = max($0.known, cursor) } }

    func keepAliveDue() { update { $0.keepAlive = true } }

    /// The server is stopping: send what is pending, then end.
    func end() { update { $0.ended = true } }

    func close() {
        lock.lock()
        let first = !closed
        closed = true
        wake = nil
        lock.unlock()
        if first { hub?.close(self) }
    }

    private func update(_ change: (EventStream) -> Void) {
        lock.lock()
        change(self)
        let w = wake
        lock.unlock()
        w?()
    }
}
