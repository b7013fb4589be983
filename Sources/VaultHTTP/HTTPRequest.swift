/// An HTTP method name such as `GET` or `PUT`.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public static let get: HTTPMethod = "GET"
    public static let head: HTTPMethod = "HEAD"
    public static let put: HTTPMethod = "PUT"
    public static let post: HTTPMethod = "POST"
    public static let patch: HTTPMethod = "PATCH"
    public static let delete: HTTPMethod = "DELETE"
}

/// The body of a request.
public enum HTTPBody {
    /// No body (`Content-Length: 0` for methods that carry one).
    case none
    /// A small body held in memory.
    case bytes([UInt8])
    /// A body of exactly `length` bytes pulled in pieces while it is sent, so a 10 GB file never
    /// sits in memory. `read` fills as much of the buffer as it likes and returns the count; it
    /// returns 0 only at the end. Returning 0 early, or producing more than `length` bytes in
    /// total, fails the request. An error it throws ends the request and is rethrown by `send`.
    case stream(length: Int64, read: (UnsafeMutableRawBufferPointer) throws -> Int)

    /// The number of bytes the body will send.
    public var length: Int64 {
        switch self {
        case .none: return 0
        case .bytes(let b): return Int64(b.count)
        case .stream(let length, _): return length
        }
    }
}

/// One request: method, absolute `http://` or `https://` URL, extra headers and body.
///
/// Header order is kept. Setting a header to an empty value removes a header libcurl would add
/// itself (for example `("Accept", "")`). `Content-Length` is derived from the body; do not set it.
public struct HTTPRequest {
    public var method: HTTPMethod
    public var url: String
    public var headers: [(String, String)]
    public var body: HTTPBody

    public init(method: HTTPMethod = .get, url: String, headers: [(String, String)] = [],
                body: HTTPBody = .none) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

extension HTTPRequest: CustomStringConvertible {
    /// The method and URL only: header values (tokens) never reach logs through this.
    public var description: String { "\(method.rawValue) \(url)" }
}
