internal import CCurl

/// A synchronous HTTP/1.1 and HTTP/2 client on one reused libcurl easy handle, so consecutive
/// requests to the same server share a kept-alive connection and TLS session.
///
/// Not thread-safe: use one client per thread (or serialise access). `send` blocks the calling
/// thread for the whole transfer; request and response bodies stream through closures in pieces,
/// so memory stays constant whatever the size.
///
/// Proxies come from the environment (`https_proxy`, `no_proxy`, …), read by libcurl itself.
public final class HTTPClient {
    /// The configuration every request uses.
    public let configuration: HTTPClientConfiguration
    /// Called with the bytes sent and received so far, at most about four times a second while a
    /// transfer runs. Return false to abort the transfer with `HTTPError.aborted`.
    public var onProgress: ((Int64, Int64) -> Bool)?

    private let easy: CurlEasy
    private var busy = false

    /// Creates the client and its libcurl handle. Throws `.tls` for a malformed pinned key.
    public init(configuration: HTTPClientConfiguration) throws {
        for pin in configuration.pinnedPublicKeys where !pin.hasPrefix("sha256//") || pin.contains(";") {
            throw HTTPError.tls("pinned public key must have the form sha256//<base64>")
        }
        self.configuration = configuration
        self.easy = try CurlEasy()
    }

    /// Sends the request; the response body is delivered in pieces to `onBody` (streaming,
    /// constant memory). Return false from `onBody` to abort with `HTTPError.aborted`.
    ///
    /// - Parameters:
    ///   - onHead: called once with the final response's status and headers (body empty) before
    ///     the first body piece, or after the transfer when there is no body. Throwing aborts.
    ///     Use it to route an error status's body away from, say, a download file.
    ///   - onBody: receives each piece of the final response's body; the buffer is valid only
    ///     during the call.
    /// - Returns: the final response's status and headers (`body` empty).
    /// - Throws: `HTTPError`, or the error a body closure threw, unchanged.
    public func send(_ req: HTTPRequest,
                     onHead: ((HTTPResponse) throws -> Void)? = nil,
                     onBody: (UnsafeRawBufferPointer) throws -> Bool) throws -> HTTPResponse {
        precondition(!busy, "HTTPClient.send called re-entrantly; the client is not thread-safe")
        busy = true
        defer { busy = false }
        return try withoutActuallyEscaping(onBody) { onBody in
            let ctx = TransferContext(easy: easy, body: req.body, onHead: onHead, onBody: onBody,
                                      onProgress: onProgress)
            return try perform(req, ctx)
        }
    }

    /// Sends the request and collects the body into `HTTPResponse.body`; more than `limit` bytes
    /// (announced by `Content-Length` or received) fails with `HTTPError.tooLarge`. Error statuses
    /// are returned, not thrown, with their body.
    public func send(_ req: HTTPRequest, collectUpTo limit: Int = 16 << 20) throws -> HTTPResponse {
        var body: [UInt8] = []
        var response = try send(req, onHead: { head in
            if req.method != .head, let length = head.header("Content-Length").flatMap(Int.init), length > limit {
                throw HTTPError.tooLarge
            }
        }, onBody: { piece in
            guard piece.count <= limit - body.count else { throw HTTPError.tooLarge }
            body.append(contentsOf: piece)
            return true
        })
        response.body = body
        return response
    }

    private func perform(_ req: HTTPRequest, _ ctx: TransferContext) throws -> HTTPResponse {
        try easy.reset()
        let headerList = try RequestSetup(configuration: configuration, request: req).apply(to: easy)
        defer { curl_slist_free_all(headerList) }
        let userData = Unmanaged.passUnretained(ctx).toOpaque()
        try easy.setCallbacks(context: userData, progress: onProgress != nil)

        let (rc, message) = withExtendedLifetime(ctx) { easy.perform() }
        if let error = ctx.pendingError { throw error }
        guard rc == CURLE_OK else { throw HTTPError(curlCode: rc, message: message) }
        try ctx.deliverHeadIfNeeded()
        return ctx.head()
    }
}
