import Foundation
import VaultAPI
import VaultPrimitives

/// A parsed request as the router sees it: no sockets, no libmicrohttpd.
struct HTTPRequest {
    var method: String
    /// The path as sent (still percent-encoded; see `segments`).
    var path: String
    /// Decoded query arguments (last one wins).
    var query: [String: String]
    /// Header values by lowercased name.
    var headers: [String: String]
    /// The decoded path segments (`RequestDecoding.segments`).
    var segments: [String] = []
    /// `{name}` segments of the matched route pattern.
    var pathParams: [String: String] = [:]
    /// The client's IPv4 address (dotted), "" when unknown.
    var clientAddress = ""

    func header(_ name: String) -> String? { headers[name.lowercased()] }
    func param(_ name: String) -> String { pathParams[name] ?? "" }

    /// The declared body length, if any (a length past `Int64.max` reads as `Int64.max`, so it is
    /// refused as too large rather than ignored).
    var contentLength: Int64? { header("content-length").flatMap { Digits.parseSaturating($0) } }
}

/// Something that produces a response body piece by piece (SSE, generated content).
protocol StreamingBody: AnyObject, Sendable {
    /// Fills `buffer`; returns the count written, 0…; `nil` ends the stream normally.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int?
    /// Called once when the connection is done with the body.
    func close()
    /// The body's length when known in advance (sent as `Content-Length`); `nil` sends it chunked.
    var length: Int64? { get }
}

extension StreamingBody {
    var length: Int64? { nil }
}

/// What a live body had to give: bytes, nothing yet, its normal end, or a failure (the
/// connection is then closed at once).
enum LiveRead: Equatable {
    case bytes(Int)
    case later
    case end
    case failed
}

/// A body whose data comes later (Server-Sent Events). Instead of blocking a thread it answers
/// `.later` and calls its wake-up handler when it has something, has ended, or its client has
/// gone; the HTTP layer then asks again.
protocol LiveBody: StreamingBody {
    /// Fills `buffer` with what is ready.
    func poll(into buffer: UnsafeMutableRawBufferPointer) -> LiveRead
    /// Set by the HTTP layer before the first `poll`.
    func onWake(_ wake: @escaping @Sendable () -> Void)
    /// The client closed its side of the connection.
    func clientGone()
}

/// A response body.
enum ResponseBody {
    case bytes([UInt8])
    /// `length` bytes of an open descriptor from `offset`; the descriptor is handed over.
    case file(POSIXFile, offset: Int64, length: Int64)
    case stream(StreamingBody)
}

/// A response: status, headers and body.
struct HTTPResponse {
    var status: Int
    var headers: [(String, String)] = []
    var body: ResponseBody = .bytes([])

    /// A JSON body of an encodable value.
    static func json<T: Encodable>(_ value: T, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        let bytes = (try? APIJSON.encoder().encode(value)).map { [UInt8]($0) } ?? []
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: .bytes(bytes))
    }

    /// The JSON error answer for `error`.
    static func error(_ error: APIError) -> HTTPResponse {
        let body = error.body ?? (try? APIJSON.encoder().encode(APIErrorBody(code: error.code, message: error.message)))
            .map { [UInt8]($0) } ?? []
        return HTTPResponse(status: error.status, headers: [("Content-Type", "application/json")] + error.headers,
                            body: .bytes(body))
    }

    var bodyCount: Int64 {
        switch body {
        case .bytes(let b): return Int64(b.count)
        case .file(_, _, let length): return length
        case .stream(let s): return s.length ?? -1
        }
    }
}

/// Receives a request body as it streams in, then answers.
protocol BodySink: AnyObject {
    /// One piece of the body, in order. Throwing ends the request with that error.
    func receive(_ bytes: UnsafeRawBufferPointer) throws
    /// The whole body has arrived.
    func finish() -> HTTPResponse
    /// The connection ended before `finish` (client gone, fault drop, shutdown).
    func abort()
}

/// What a route decides once headers are in.
enum RequestPlan {
    /// Answer now; any body is read and discarded.
    case respond(HTTPResponse)
    /// Read a small body (at most `limit` bytes, else 413) into memory, then answer.
    case buffer(limit: Int, (_ body: [UInt8]) throws -> HTTPResponse)
    /// Stream the body into a sink.
    case stream(BodySink)
}
