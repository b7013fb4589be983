import VaultSQL

/// Where a transfer stands, as stored in the `transfers` table.
public enum TransferState: String, Sendable, Codable {
    /// Recorded, not started yet.
    case queued
    /// In progress now.
    case running
    /// Left `running` by a process that stopped (killed, crashed, power cut); the next
    /// `vault sync` or `vault transfers resume` continues it where the server says it stopped.
    /// (Shown, never stored: a stored `running` row seen while no transfer can run.)
    case interrupted
    /// Paused by the user (`vault transfers pause`); `vault transfers resume` continues it.
    case paused
    /// Cancelled by the user (`vault transfers cancel`): the server's partial copy is freed; the
    /// file stays in the vault awaiting upload until `vault transfers resume` or its removal.
    case cancelled
    /// A large transfer held back on a metered network (`vault sync --allow-metered` sends it).
    case waitingForUnmetered = "waiting_for_unmetered"
    /// Failed for now; retried at `nextAttemptAt` (or by the next `vault sync`).
    case waitingToRetry = "waiting_to_retry"
    /// Stopped for good; `error` says why.
    case failed
    /// The server holds a newer version; the sync layer must resolve it (never overwritten).
    case conflict
    /// Finished and verified.
    case done
}

/// Which way the bytes go.
public enum TransferDirection: String, Sendable, Codable {
    case upload, download
}

/// One row of the `transfers` table.
public struct TransferRow: Sendable, Equatable {
    public var id: Int64
    public var nodeId: String
    public var direction: TransferDirection
    public var state: TransferState
    /// Uploads: the staged blob; downloads: the sealed partial in `tmp/` while unfinished.
    public var blobId: String?
    public var bytesTotal: Int64
    public var bytesDone: Int64
    public var uploadId: String?
    public var uploadURL: String?
    /// Uploads: the outbox entry's request id (the session's idempotency key).
    public var requestId: String?
    public var attempts: Int64
    public var nextAttemptAt: Int64?
    public var error: String?
    public var createdAt: Int64
    public var updatedAt: Int64
}

/// One change to a transfer row (`Vault.updateTransfer`); each also sets `updated_at`.
public enum TransferChange: Sendable {
    /// A new state, with its reason and (when waiting to retry) the next attempt time.
    case state(TransferState, error: String? = nil, retryAt: Int64? = nil)
    /// A new state and the bytes done with it, in one write (a transfer's last progress and its end).
    case stateAndProgress(TransferState, error: String?, retryAt: Int64?, bytes: Int64)
    /// Bytes confirmed by the server (uploads) or arrived (downloads).
    case progress(Int64)
    /// The partial blob a download writes into (nil: none).
    case partialBlob(String?)
    /// The server's upload session (nil: none, e.g. expired or freed).
    case session(uploadId: String?, url: String?)
    /// One more failed attempt.
    case attempt
}

extension TransferRow {
    static let columns = ["id", "node_id", "direction", "state", "blob_id", "bytes_total", "bytes_done", "upload_id",
                          "upload_url", "request_id", "attempts", "next_attempt_at", "error", "created_at", "updated_at"]

    /// The transfer of a row selecting `columns`; throws `SQLError.Kind.decoding` on a damaged row.
    init(row r: SQLRow) throws {
        id = try r.decode(Int64.self, "id")
        nodeId = try NodesTable.nodeId(r["node_id"], column: "node_id")
        direction = try r.decode(TransferDirection.self, "direction")
        state = try r.decode(TransferState.self, "state")
        blobId = try CompactColumns.id(r["blob_id"], column: "blob_id")
        bytesTotal = try r.decode(Int64.self, "bytes_total")
        bytesDone = try r.decode(Int64.self, "bytes_done")
        uploadId = try r.decode(String?.self, "upload_id")
        uploadURL = try r.decode(String?.self, "upload_url")
        requestId = try CompactColumns.requestId(r["request_id"], column: "request_id")
        attempts = try r.decode(Int64.self, "attempts")
        nextAttemptAt = try r.decode(Int64?.self, "next_attempt_at")
        error = try r.decode(String?.self, "error")
        createdAt = try r.decode(Int64.self, "created_at")
        updatedAt = try r.decode(Int64.self, "updated_at")
    }
}
