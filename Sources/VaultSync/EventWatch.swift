import Foundation
import VaultAPI
import VaultCore
import VaultHTTP

/// The server's push channel (`GET /v1/events`, Server-Sent Events): "changed up to cursor N".
/// Holds no vault: it keeps its own connection (no low-speed limit: keep-alive comments show the
/// stream alive), so the vault is free between syncs. Reconnects with `Last-Event-ID`; after a
/// failure it backs off with full jitter, honouring the server's `Retry-After` (429 when too many
/// streams are open).
public final class EventWatch {
    let api: ServerAPI
    let retry: RetryPolicy
    let say: (String) -> Void

    /// Why `next` returned.
    public enum Wake: Sendable, Equatable {
        /// The server's feed reached this cursor.
        case changed(Int64)
        /// `shouldStop` said so.
        case stopped
    }

    /// A watcher for the server `vault` is logged in to (checked against the transport rules and
    /// the policy first). The vault may be closed once this returns.
    public init(vault: Vault, policy: EffectivePolicy, say: @escaping (String) -> Void = { _ in }, warn: (String) -> Void = { _ in }) throws {
        api = try ServerAPI(vault: nil, account: try SyncAccount.require(vault), policy: policy, warn: warn, streaming: true)
        retry = RetryPolicy.fromEnvironment()
        self.say = say
    }

    /// Waits for the next change after `lastEventId` (the cursor this device has applied), or
    /// until `shouldStop()` (polled a few times a second, also while backing off) says to stop.
    public func next(after lastEventId: Int64?, shouldStop: @escaping @Sendable () -> Bool) throws -> Wake {
        var failures = 0
        while !shouldStop() {
            var parser = EventParser()
            var event: Int64?
            var retryAfter: TimeInterval?
            var reason = ""
            api.http.onProgress = { _, _ in !shouldStop() }
            defer { api.http.onProgress = nil }
            do {
                let r = try api.send({
                    var req = HTTPRequest(method: .get, url: api.url("/v1/events"), headers: [("Accept", "text/event-stream")])
                    if let id = lastEventId { req.headers.append(("Last-Event-ID", String(id))) }
                    return req
                }, stream: { piece in
                    for e in parser.feed(piece) where e.type == "changed" {
                        if let id = e.id.flatMap({ Int64($0) }), id > (lastEventId ?? Int64.min) { event = id; throw Arrived() }
                    }
                })
                if r.status == 429 || r.status >= 500 {
                    reason = "the event stream answered \(r.status)"
                    retryAfter = RetryPolicy.retryAfter(r)
                } else if r.status != 200 {
                    throw ServerAPI.statusError(r, doing: "listen for changes")
                } else {
                    reason = "the event stream ended"
                    failures = 0
                }
            } catch is Arrived {
            } catch HTTPError.aborted {
                if shouldStop() { return .stopped }
            } catch let e as HTTPError {
                guard RetryPolicy.isRetryable(e) else { throw ServerAPI.networkError(e, api.account.serverURL) }
                reason = e.description
            }
            if let event { return .changed(event) }
            failures += 1
            let wait = retry.delay(attempt: min(failures - 1, 10), retryAfter: retryAfter)
            say("\(reason); listening again in \(String(format: "%.1f", wait)) s")
            let until = Date().addingTimeInterval(wait)
            while Date() < until && !shouldStop() { Thread.sleep(forTimeInterval: min(0.1, max(0, until.timeIntervalSinceNow))) }
        }
        return .stopped
    }

    /// An event arrived: the stream is left (the caller syncs, then listens again).
    private struct Arrived: Error {}
}

/// Server-Sent Events (the parts this protocol uses): `id:`, `event:` and `data:` fields, an
/// event per blank line, `:` comments (keep-alives) ignored. Bytes may split anywhere.
struct EventParser {
    struct Event: Equatable { var id: String?; var type: String; var data: String }
    private var buffer: [UInt8] = []
    private var id: String?
    private var type = ""
    private var data: [String] = []

    mutating func feed(_ piece: UnsafeRawBufferPointer) -> [Event] {
        buffer.append(contentsOf: piece)
        var out: [Event] = []
        while let nl = buffer.firstIndex(of: 10) {
            var line = Array(buffer[..<nl])
            buffer.removeSubrange(...nl)
            if line.last == 13 { line.removeLast() }
            let text = String(decoding: line, as: UTF8.self)
            if text.isEmpty {
                if !type.isEmpty || !data.isEmpty { out.append(Event(id: id, type: type.isEmpty ? "message" : type, data: data.joined(separator: "\n"))) }
                type = ""; data = []
                continue
            }
            if text.hasPrefix(":") { continue }
            let (field, value) = Self.split(text)
            switch field {
            case "id": id = value
            case "event": type = value
            case "data": data.append(value)
            default: break
            }
        }
        if buffer.count > 1 << 16 { buffer.removeAll() }   // a line that long is no event of ours
        return out
    }

    static func split(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        var value = line[line.index(after: colon)...]
        if value.first == " " { value = value.dropFirst() }
        return (String(line[..<colon]), String(value))
    }
}
