/// The final response to a request: status, headers and (when collected) body.
///
/// When several responses arrive for one request (informational 1xx, or redirects that were
/// followed) only the last one's status and headers are kept.
public struct HTTPResponse: Sendable {
    /// The HTTP status code, for example 200, 206 or 308.
    public var status: Int
    /// Header fields in the order received, names as sent by the server.
    public var headers: [(String, String)]
    /// The body, only when the caller asked `send` to collect it; otherwise empty.
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the first header named `name`, compared case-insensitively (ASCII).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }

    /// All values of headers named `name`, compared case-insensitively, in order.
    public func headers(named name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.0.lowercased() == wanted }.map(\.1)
    }
}
