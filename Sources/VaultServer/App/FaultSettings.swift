import VaultAPI

/// Test-only fault switches (`POST /v1/test/faults`, only when the server runs with
/// `--test-faults`): the server's own, no client sees them. They apply to requests that arrive
/// after they are set.
struct FaultSettings: Codable, Sendable, Equatable {
    /// Close the connection after this many request-body bytes (once per setting; `nil` = off).
    var dropAfterBytes: Int64?
    /// How many requests the body drop applies to (default 1).
    var dropCount: Int?
    /// Sleep this long before answering each request.
    var delayMs: Int?
    /// Probability (0…1) of answering `errorStatus` instead of handling the request.
    var errorRate: Double?
    /// Status for `errorRate` (default 503).
    var errorStatus: Int?
    /// `errorRate` applies only to requests whose path starts with this (e.g. `/v1/upload`).
    var errorPathPrefix: String?
    /// Seeds the `errorRate` draws (SplitMix64), so a test's faults come again with its seed
    /// (`nil`: the system generator).
    var errorSeed: Int64?
    /// Answer the next N requests with 429 and `Retry-After`.
    var retryAfter429Count: Int?
    /// `Retry-After` seconds for those 429s (default 1).
    var retryAfterSeconds: Int?
    /// Expire every open upload session now (a one-shot action, not kept).
    var expireSessionsNow: Bool?
    /// Lie in upload status answers: claim every byte of an unfinished session was received.
    var lieReceivedRanges: Bool?
    /// Lie about a file's size in content downloads: append this many random bytes to each
    /// content GET body, counted in `Content-Length` and in a 206's `Content-Range` (end and total).
    var extraContentBytes: Int?
    /// Send content GET bodies chunked, without `Content-Length` (only the byte count can then
    /// reveal `extraContentBytes`).
    var contentWithoutLength: Bool?
    /// A slow link for content downloads: each piece (at most 64 KiB) of a content GET body waits
    /// this many milliseconds before it is handed over, and the body's start is logged, so a
    /// test can find the instance that holds a download and kill it mid-file.
    var contentPieceDelayMs: Int?
    /// Behave as a malicious server in one way (end-to-end tests: each lie must be caught).
    var lie: FaultLie?
    /// A test clock: bearer tokens are checked this many seconds ahead of the real clock, so a
    /// test of token expiry moves the clock instead of sleeping through the TTL.
    var clockAheadSeconds: Int?

    init(dropAfterBytes: Int64? = nil, dropCount: Int? = nil, delayMs: Int? = nil,
                errorRate: Double? = nil, errorStatus: Int? = nil, retryAfter429Count: Int? = nil,
                retryAfterSeconds: Int? = nil, expireSessionsNow: Bool? = nil, lieReceivedRanges: Bool? = nil,
                extraContentBytes: Int? = nil, contentWithoutLength: Bool? = nil, lie: FaultLie? = nil,
                clockAheadSeconds: Int? = nil, errorSeed: Int64? = nil) {
        self.lie = lie
        self.errorSeed = errorSeed
        self.clockAheadSeconds = clockAheadSeconds
        self.lieReceivedRanges = lieReceivedRanges
        self.extraContentBytes = extraContentBytes; self.contentWithoutLength = contentWithoutLength
        self.dropAfterBytes = dropAfterBytes; self.dropCount = dropCount; self.delayMs = delayMs
        self.errorRate = errorRate; self.errorStatus = errorStatus
        self.retryAfter429Count = retryAfter429Count; self.retryAfterSeconds = retryAfterSeconds
        self.expireSessionsNow = expireSessionsNow
    }
}

/// One lie of a malicious server (test-only, inside `FaultSettings`): what a device must catch
/// with an integrity error, publishing nothing (SECURITY.md "End to end").
struct FaultLie: Codable, Sendable, Equatable {
    enum Kind: String, Codable, Sendable {
        /// `GET /v1/keys/envelope` answers `envelope` instead of the stored one.
        case envelope
        /// Content downloads of `fileId` (head or revision) serve its head's stored bytes cut and
        /// joined by `ranges` (`[start, end)` pairs): truncated, segments dropped, reordered, duplicated.
        case splice
        /// Content downloads of `fileId` serve the head of `fromFileId` (of any account) or the
        /// revision `fromRevisionId` instead.
        case contentFrom
        /// `fileId` is described (single GET, listings, change feed) with `size` and/or `type`
        /// changed; with `fromRevisionId`, as if that revision were its head (a rollback: record,
        /// size, checksum and content of the older revision).
        case listing
    }

    var kind: Kind
    var envelope: String?
    var fileId: String?
    var ranges: [[Int64]]?
    var fromFileId: String?
    var fromRevisionId: String?
    var size: Int64?
    var type: FileType?

    init(kind: Kind, envelope: String? = nil, fileId: String? = nil, ranges: [[Int64]]? = nil, fromFileId: String? = nil,
                fromRevisionId: String? = nil, size: Int64? = nil, type: FileType? = nil) {
        self.kind = kind; self.envelope = envelope; self.fileId = fileId; self.ranges = ranges; self.fromFileId = fromFileId
        self.fromRevisionId = fromRevisionId; self.size = size; self.type = type
    }
}
