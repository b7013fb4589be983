import Foundation
import VaultAPI

/// `GET /v1/events`: Server-Sent Events saying "changed up to cursor N" (never file data),
/// resuming after `Last-Event-ID` (or `?cursor=`), with keep-alive comments.
extension VaultService {
    func events(_ ctx: RequestContext) throws -> RequestPlan {
        let lastRaw = ctx.request.header("last-event-id") ?? ctx.request.query["cursor"]
        let last: Int64
        if let lastRaw, !lastRaw.isEmpty {
            guard let v = Int64(lastRaw.trimmingCharacters(in: .whitespaces)), v >= 0 else {
                throw APIError.badRequest("Last-Event-ID must be a cursor")
            }
            last = v
        } else {
            last = try store.withDB { db in try db.latestCursor() }
        }
        let userLatest = try store.withDB { db in try db.latestCursor(owner: ctx.userId) }
        hub.publish(owner: ctx.userId, cursor: userLatest)
        let stream = EventStream(hub: hub, owner: ctx.userId, after: last,
                                 keepAlive: TimeInterval(config.keepAliveInterval))
        return .respond(HTTPResponse(status: 200, headers: [
            ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no"),
        ], body: .stream(stream)))
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
