import Foundation
import VaultAPI

/// `GET /v1/events`: Server-Sent Events saying "changed up to cursor N" (never file data),
/// resuming after `Last-Event-ID` (or `?cursor=`), with keep-alive comments.
extension VaultService {
    func events(_ ctx: RequestContext) throws -> RequestPlan {
        // Both are checked; a non-empty Last-Event-ID (a browser's reconnect) wins over the query,
        // an empty one counts as absent.
        let header = try Self.cursorValue(ctx.request.header("last-event-id"), name: "Last-Event-ID")
        let query = try Self.cursorValue(ctx.request.query["cursor"], name: "cursor")
        let last = try header ?? query ?? store.withDB { db in try db.latestCursor() }
        let userLatest = try store.withDB { db in try db.latestCursor(owner: ctx.userId) }
        hub.publish(owner: ctx.userId, cursor: userLatest)
        let stream = EventStream(hub: hub, owner: ctx.userId, after: last,
                                 keepAlive: TimeInterval(config.keepAliveInterval))
        return .respond(HTTPResponse(status: 200, headers: [
            ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no"),
        ], body: .stream(stream)))
    }

    /// A cursor given as text: nil when absent or empty, 400 `invalid_cursor` unless digits.
    static func cursorValue(_ raw: String?, name: String) throws -> Int64? {
        guard let raw, !raw.isEmpty else { return nil }
        guard let v = Digits.parse(raw, maxDigits: maxDigits) else {
            throw APIError.badRequest("\(name) must be a cursor (a whole number from a previous event)", code: "invalid_cursor")
        }
        return v
    }
}

/// The body of one SSE connection. `read` blocks (thread-per-connection) until there is news,
/// a keep-alive is due, or the server stops.
final class EventStream: StreamingBody, @unchecked Sendable {
    // SAFETY: read only from the connection's own thread, one call at a time.
    private let hub: EventHub
    private let owner: String
    private var after: Int64
    private let keepAlive: TimeInterval
    private var pending: [UInt8] = Array("retry: 2000\n: connected\n\n".utf8)

    init(hub: EventHub, owner: String, after: Int64, keepAlive: TimeInterval) {
        self.hub = hub; self.owner = owner; self.after = after; self.keepAlive = keepAlive
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        if pending.isEmpty {
            switch hub.wait(owner: owner, after: after, timeout: keepAlive) {
            case .none: pending = Array(": keep-alive\n\n".utf8)
            case .some(let c) where c < 0: return nil
            case .some(let c):
                after = c
                pending = Array("id: \(c)\nevent: changed\ndata: {\"cursor\":\(c)}\n\n".utf8)
            }
        }
        let n = min(buffer.count, pending.count)
        pending.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        pending.removeFirst(n)
        return n
    }

    func close() {}
}
