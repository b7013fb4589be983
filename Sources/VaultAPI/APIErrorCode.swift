/// The stable machine-readable `code` of an error answer (`APIErrorBody`). The server answers
/// only with these; a client matches on them, and a code it does not know (a newer server's)
/// still decodes, as itself.
public struct APIErrorCode: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Coded as the bare string (`"not_found"`), as on the wire.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }

    // Requests the server refuses as written (400 unless said otherwise).
    public static let badRequest = Self(rawValue: "bad_request")
    public static let invalidJSON = Self(rawValue: "invalid_json")
    public static let invalidEncoding = Self(rawValue: "invalid_encoding")
    public static let invalidHeader = Self(rawValue: "invalid_header")
    public static let invalidDeviceId = Self(rawValue: "invalid_device_id")
    public static let invalidId = Self(rawValue: "invalid_id")
    public static let invalidName = Self(rawValue: "invalid_name")
    public static let invalidMimeType = Self(rawValue: "invalid_mime_type")
    public static let invalidRecord = Self(rawValue: "invalid_record")
    public static let invalidSize = Self(rawValue: "invalid_size")
    public static let invalidSHA256 = Self(rawValue: "invalid_sha256")
    public static let invalidVersion = Self(rawValue: "invalid_version")
    public static let invalidPrecondition = Self(rawValue: "invalid_precondition")
    public static let invalidScope = Self(rawValue: "invalid_scope")
    public static let invalidPageToken = Self(rawValue: "invalid_page_token")
    public static let invalidCursor = Self(rawValue: "invalid_cursor")
    public static let invalidEnvelope = Self(rawValue: "invalid_envelope")
    public static let invalidMultipart = Self(rawValue: "invalid_multipart")
    public static let invalidContentRange = Self(rawValue: "invalid_content_range")
    public static let misalignedChunk = Self(rawValue: "misaligned_chunk")
    public static let wrongChunkSize = Self(rawValue: "wrong_chunk_size")
    public static let notAFolder = Self(rawValue: "not_a_folder")
    public static let notAFile = Self(rawValue: "not_a_file")
    /// A test-only fault setting outside its bounds.
    public static let invalidFault = Self(rawValue: "invalid_fault")

    // Authentication, routing, limits.
    public static let unauthorized = Self(rawValue: "unauthorized")
    public static let notFound = Self(rawValue: "not_found")
    public static let routeNotFound = Self(rawValue: "route_not_found")
    public static let methodNotAllowed = Self(rawValue: "method_not_allowed")
    public static let tooLarge = Self(rawValue: "too_large")
    public static let tooManyRequests = Self(rawValue: "too_many_requests")
    public static let quotaExceeded = Self(rawValue: "quota_exceeded")
    public static let rangeNotSatisfiable = Self(rawValue: "range_not_satisfiable")
    public static let preconditionRequired = Self(rawValue: "precondition_required")

    // The server's state refuses the change.
    public static let conflict = Self(rawValue: "conflict")
    public static let nameConflict = Self(rawValue: "name_conflict")
    public static let idTaken = Self(rawValue: "id_taken")
    public static let parentTrashed = Self(rawValue: "parent_trashed")
    public static let fileTrashed = Self(rawValue: "file_trashed")
    public static let rootImmutable = Self(rawValue: "root_immutable")
    public static let cycle = Self(rawValue: "cycle")
    public static let versionMismatch = Self(rawValue: "version_mismatch")
    public static let subtreeChanged = Self(rawValue: "subtree_changed")
    public static let cursorExpired = Self(rawValue: "cursor_expired")
    public static let noEnvelope = Self(rawValue: "no_envelope")
    public static let envelopeChanged = Self(rawValue: "envelope_changed")
    public static let userExists = Self(rawValue: "user_exists")

    // Resumable uploads.
    public static let uploadExpired = Self(rawValue: "upload_expired")
    public static let chunkInProgress = Self(rawValue: "chunk_in_progress")
    public static let chunkSuperseded = Self(rawValue: "chunk_superseded")
    public static let checksumMismatch = Self(rawValue: "checksum_mismatch")

    // The server failed.
    public static let `internal` = Self(rawValue: "internal")
    public static let insufficientStorage = Self(rawValue: "insufficient_storage")
    /// `GET /readyz`: the metadata store is unreachable or not migrated, or content cannot be written (503).
    public static let notReady = Self(rawValue: "not_ready")
    /// The server's object store (`--content s3://…`) did not answer; nothing was changed.
    public static let contentStoreUnavailable = Self(rawValue: "content_store_unavailable")
    /// A test-only injected failure.
    public static let injectedFault = Self(rawValue: "injected_fault")
}
