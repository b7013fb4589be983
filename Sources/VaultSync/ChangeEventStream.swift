import Foundation
import Synchronization
import VaultCore
import VaultHTTP

/// One server-sent event of the push channel: "something changed up to cursor N" (never data).
public struct ChangeEvent: Sendable, Equatable {
    /// The event id (`id:`), the value to send back as `Last-Event-ID` on reconnect.
    public var id: String?
    /// The event type (`event:`), `changed` from the reference server; `message` when absent.
    public var type: String
    /// The event's data lines, joined with `\n`.
    public var data: String
}

/// Why the push channel could not be opened or ended.
public enum ChangeStreamError: Error, Equatable, CustomStringConvertible {
    /// The server refused the bearer token (401): get a new one (`SyncClient.changeEventStream(refreshToken: true)`).
    case tokenRefused
    /// The server answered another status; `retryAfter` from its `Retry-After` (429, 503).
    case status(Int, retryAfter: TimeInterval?)
    /// The server sent something that is not an event stream (a line over 64 KiB).
    case malformed(String)
    /// A transport failure (refused, reset, stalled: no byte, not even a keep-alive, for 60 s).
    case transport(String)

    public var description: String {
        switch self {
        case .tokenRefused: return "the server refused the token"
        case .status(let s, _): return "the server answered HTTP \(s)"
        case .malformed(let m): return "not an event stream: \(m)"
        case .transport(let m): return m
        }
    }
}

/// The server's push channel, `GET /v1/events` (server-sent events), for a process that waits
/// for changes (`vault agent`). It holds the address, the token and the TLS settings of the
/// connection, and no reference to the vault: it can run after the vault was closed.
///
/// Not thread-safe, except `cancel`, which any thread may call.
public final class ChangeEventStream: @unchecked Sendable {
    // SAFETY: `http` is used only by the thread in `run`; `cancelled` is atomic.
    private let http: HTTPClient
    private let url: String
    private let headers: [(String, String)]
    private let cancelled = Atomic<Bool>(false)
    /// The server's `retry:` advice in seconds, if it sent one.
    public private(set) var serverRetry: TimeInterval?

    /// The longest line accepted from the server.
    static let maxLine = 64 << 10

    init(http: HTTPClient, url: String, headers: [(String, String)]) {
        self.http = http; self.url = url; self.headers = headers
    }

    /// Connects (sending `Last-Event-ID` when given), calls `onOpen` once the server accepted the
    /// stream, then `onEvent` for each event, until the server ends the stream (returns) or the
    /// connection fails or `cancel` is called (throws `ChangeStreamError`).
    public func run(lastEventId: String?, onOpen: () -> Void, onEvent: (ChangeEvent) -> Void) throws {
        var request = HTTPRequest(method: .get, url: url, headers: headers + [("Accept", "text/event-stream"), ("Cache-Control", "no-cache")])
        if let lastEventId { request.headers.append(("Last-Event-ID", lastEventId)) }
        var parser = EventStreamParser()
        var status = 0
        var retryAfter: TimeInterval?
        http.onProgress = { _, _ in !self.cancelled.load(ordering: .relaxed) }   // reset below: no cycle
        defer { http.onProgress = nil }
        do {
            try withoutActuallyEscaping(onOpen) { onOpen in
                _ = try http.send(request, onHead: { head in
                    status = head.status
                    retryAfter = head.header("Retry-After").flatMap(TimeInterval.init)
                    if head.status == 200 { onOpen() }
                }, onBody: { piece in
                    guard status == 200 else { return true }   // an error body: read and dropped
                    for event in try parser.feed(piece) { onEvent(event) }
                    if let r = parser.retry { self.serverRetry = r }
                    return true
                })
            }
        } catch let e as HTTPError {
            throw ChangeStreamError.transport(e == .aborted ? "cancelled" : e.description)
        }
        switch status {
        case 200: return
        case 401: throw ChangeStreamError.tokenRefused
        default: throw ChangeStreamError.status(status, retryAfter: retryAfter)
        }
    }

    /// Ends a running `run` within about a second (from any thread).
    public func cancel() { cancelled.store(true, ordering: .relaxed) }
}

/// The `text/event-stream` format (WHATWG HTML, "Server-sent events"): lines ending in LF, CR
/// or CRLF; `field: value`; a blank line dispatches; lines starting with `:` are comments.
struct EventStreamParser {
    private var line: [UInt8] = []
    private var lastWasCR = false
    private var id: String?
    private var type = ""
    private var data: [String] = []
    private var hasData = false
    /// The last `retry:` value, in seconds.
    private(set) var retry: TimeInterval?

    mutating func feed(_ bytes: UnsafeRawBufferPointer) throws -> [ChangeEvent] {
        var events: [ChangeEvent] = []
        for b in bytes {
            if b == 10 && lastWasCR { lastWasCR = false; continue }   // the LF of a CRLF
            lastWasCR = b == 13
            if b == 10 || b == 13 {
                if let e = endLine() { events.append(e) }
            } else {
                guard line.count < ChangeEventStream.maxLine else { throw ChangeStreamError.malformed("a line longer than 64 KiB") }
                line.append(b)
            }
        }
        return events
    }

    private mutating func endLine() -> ChangeEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            defer { type = ""; data = []; hasData = false }
            guard hasData else { return nil }
            return ChangeEvent(id: id, type: type.isEmpty ? "message" : type, data: data.joined(separator: "\n"))
        }
        if line[0] == UInt8(ascii: ":") { return nil }
        let text = String(decoding: line, as: UTF8.self)
        let (field, value): (Substring, Substring)
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            let rest = text[text.index(after: colon)...]
            value = rest.first == " " ? rest.dropFirst() : rest
        } else {
            field = Substring(text); value = ""
        }
        switch field {
        case "id" where !value.contains("\0"): id = String(value)
        case "event": type = String(value)
        case "data": data.append(String(value)); hasData = true
        case "retry": if let ms = UInt64(value) { retry = TimeInterval(ms) / 1000 }
        default: break
        }
        return nil
    }
}

extension SyncClient {
    /// A connection to the server's push channel, ready to run after the vault is closed. The
    /// token is refreshed (and stored) first when `refreshToken` is set, when there is none, or
    /// when it expires within ten minutes. The address was checked against the transport rules
    /// and the policy when this client was made.
    public func changeEventStream(refreshToken: Bool = false) throws -> ChangeEventStream {
        if refreshToken || api.account.token == nil || (api.account.tokenExpiresAt.map { $0.timeIntervalSinceNow < 600 } ?? true) {
            try api.refreshToken()
        }
        var config = api.http.configuration
        config.lowSpeedLimit = 1      // the server sends a keep-alive comment every 15 s by default:
        config.lowSpeedTime = 60      // a minute without a byte is a dead connection
        let http = try HTTPClient(configuration: config)
        return ChangeEventStream(http: http, url: api.url("/v1/events"), headers: [
            ("Authorization", "Bearer " + (api.account.token ?? "")), ("X-Device-Id", api.account.deviceId),
        ])
    }
}
