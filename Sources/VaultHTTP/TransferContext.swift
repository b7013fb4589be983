internal import CCurl

/// The state of one transfer, shared with libcurl's callbacks through an `Unmanaged` pointer.
/// `HTTPClient.send` keeps it alive for exactly one `curl_easy_perform`.
///
/// Callbacks never throw into C: an error is stored in `pendingError`, libcurl is told to abort,
/// and `send` rethrows the stored error once `curl_easy_perform` has returned.
final class TransferContext {
    private let easy: CurlEasy
    private var source: BodySource
    private let onHead: ((HTTPResponse) throws -> Void)?
    private let onBody: (UnsafeRawBufferPointer) throws -> Bool
    private let onProgress: ((Int64, Int64) -> Bool)?

    private(set) var headers = ResponseHeaderParser()
    private(set) var headDelivered = false
    /// The first error raised by a callback (the caller's or ours); rethrown after perform.
    private(set) var pendingError: (any Error)?

    private let clock = ContinuousClock()
    private var lastProgress: ContinuousClock.Instant?
    /// Minimum spacing between `onProgress` calls (a few per second).
    static let progressInterval: Duration = .milliseconds(250)

    init(easy: CurlEasy, body: HTTPBody, onHead: ((HTTPResponse) throws -> Void)?,
         onBody: @escaping (UnsafeRawBufferPointer) throws -> Bool,
         onProgress: ((Int64, Int64) -> Bool)?) {
        self.easy = easy
        self.source = BodySource(body)
        self.onHead = onHead
        self.onBody = onBody
        self.onProgress = onProgress
    }

    // MARK: Callbacks (called by the trampolines)

    /// Fills `buffer` with the next piece of the request body. Returns the count, 0 at the end,
    /// or nil to abort (the reason is in `pendingError`).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        do {
            return try source.read(into: buffer)
        } catch {
            fail(error)
            return nil
        }
    }

    /// Hands one piece of the response body to the caller; false aborts.
    func write(_ piece: UnsafeRawBufferPointer) -> Bool {
        do {
            try deliverHeadIfNeeded()
            guard try onBody(piece) else {
                fail(HTTPError.aborted)
                return false
            }
            return true
        } catch {
            fail(error)
            return false
        }
    }

    func header(_ line: UnsafeRawBufferPointer) -> Bool {
        headers.consume(line)
        return true
    }

    /// Reports progress at most every `progressInterval`; false aborts.
    func progress(uploaded: Int64, downloaded: Int64) -> Bool {
        guard let onProgress else { return true }
        let now = clock.now
        if let lastProgress, now - lastProgress < Self.progressInterval { return true }
        lastProgress = now
        guard onProgress(uploaded, downloaded) else {
            fail(HTTPError.aborted)
            return false
        }
        return true
    }

    // MARK: After perform

    /// The final response's status and headers, as libcurl reports them now.
    func head() -> HTTPResponse {
        HTTPResponse(status: easy.info(CURLINFO_RESPONSE_CODE), headers: headers.fields)
    }

    /// Calls `onHead` once, before the first body piece or (for an empty body) after the
    /// transfer.
    func deliverHeadIfNeeded() throws {
        guard !headDelivered else { return }
        headDelivered = true
        try onHead?(head())
    }

    func fail(_ error: any Error) {
        if pendingError == nil { pendingError = error }
    }
}
