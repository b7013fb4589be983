import Foundation
import VaultSQL

/// The `transfers` table: one row per upload or download, kept current while it runs (the sync
/// layer coalesces progress writes), and a bounded history of finished ones.
extension Vault {
    /// Finished (`done`) rows kept for `vault transfers`: at most this many, newest first ...
    public static let transferHistoryCount = 200
    /// ... and none older than this (seconds). Unfinished rows are kept while their file exists.
    public static let transferHistoryAge: Int64 = 7 * 24 * 3600

    static func transferColumns(prefix: String = "") -> String {
        TransferRow.columns.map { prefix + $0 }.joined(separator: ", ")
    }

    static func transferRow(_ r: SQLRow) throws -> TransferRow { try TransferRow(row: r) }

    /// The upload of the outbox entry with `requestId`, if one was recorded.
    public func uploadTransfer(requestId: String) throws -> TransferRow? {
        try db.queryOne("SELECT \(Self.transferColumns()) FROM transfers WHERE request_id = ? AND direction = 'upload'", [requestId])
            .map(Self.transferRow)
    }

    /// The unfinished download of `nodeId` for content of `total` bytes, if any (it resumes).
    public func unfinishedDownload(nodeId: String, total: Int64) throws -> TransferRow? {
        try db.queryOne("""
            SELECT \(Self.transferColumns()) FROM transfers WHERE node_id = ? AND direction = 'download' AND state != 'done' AND bytes_total = ?
            """, [nodeId, total]).map(Self.transferRow)
    }

    /// Records a new transfer and returns its id; prunes the finished history beyond its bounds.
    public func addTransfer(_ direction: TransferDirection, nodeId: String, state: TransferState, blobId: String? = nil,
                            total: Int64, requestId: String? = nil) throws -> Int64 {
        try db.transaction {
            if direction == .download {
                try db.run("DELETE FROM transfers WHERE node_id = ? AND direction = 'download'", [nodeId])
            }
            try db.run("""
                INSERT INTO transfers(node_id, direction, state, blob_id, bytes_total, bytes_done, request_id, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)
                """, [nodeId, direction.rawValue, state.rawValue, blobId, total, requestId, Vault.now, Vault.now])
            let id = db.lastInsertRowID
            try pruneTransferHistory()
            return id
        }
    }

    /// Applies one change to transfer `id` (and stamps `updated_at`).
    public func updateTransfer(_ id: Int64, _ change: TransferChange) throws {
        let (set, params): (String, [any SQLBindable]) = switch change {
        case let .state(state, error, retryAt): ("state = ?, error = ?, next_attempt_at = ?", [state.rawValue, error, retryAt])
        case let .progress(bytes): ("bytes_done = ?", [bytes])
        case let .partialBlob(blobId): ("blob_id = ?", [blobId])
        case let .session(uploadId, url): ("upload_id = ?, upload_url = ?", [uploadId, url])
        case .attempt: ("attempts = attempts + 1", [])
        }
        try db.run("UPDATE transfers SET \(set), updated_at = ? WHERE id = ?", params + [Vault.now, id])
    }

    /// Marks download `id` done with all its bytes (inside the transaction that publishes its content).
    func markDownloadDone(_ id: Int64) throws {
        try db.run("""
            UPDATE transfers SET state = 'done', error = NULL, next_attempt_at = NULL, bytes_done = bytes_total, updated_at = ?
            WHERE id = ? AND direction = 'download'
            """, [Vault.now, id])
    }

    /// Settles the unfinished downloads of files whose content is here (LOCAL, its blob recorded
    /// with the file's SHA-256): a download killed after its publish but before its row was marked
    /// (vaults written before the two were one transaction), or one the file's own new content made
    /// moot. A row for the content the file has becomes done; a row for other content (another
    /// size) is removed, and with it the partial it kept. Returns the paths settled, for `doctor`.
    @discardableResult
    public func settleFinishedDownloads() throws -> [String] {
        let here = """
            FROM transfers t JOIN nodes n ON n.id = t.node_id JOIN blobs b ON b.id = n.local_path
            WHERE t.direction = 'download' AND t.state != 'done' AND n.content_state = 'LOCAL' AND lower(b.sha256) = lower(n.sha256)
            """
        return try db.transaction {
            let rows = try db.query("SELECT t.id AS id, t.node_id AS node_id, t.bytes_total = n.size AS complete \(here)")
            var settled: [String] = []
            for row in rows {
                let id = try row.decode(Int64.self, "id"), nodeId = try row.decode(String.self, "node_id")
                if try row.decode(Bool.self, "complete") {
                    try markDownloadDone(id)
                } else {
                    try db.run("DELETE FROM transfers WHERE id = ?", [id])
                }
                settled.append((try? node(id: nodeId)).flatMap { $0 }.flatMap { try? path(of: $0) } ?? nodeId)
            }
            return settled
        }
    }

    /// Every transfer whose file still exists, newest first.
    public func transfers() throws -> [TransferRow] {
        try db.query("""
            SELECT \(Self.transferColumns(prefix: "t.")) FROM transfers t JOIN nodes n ON n.id = t.node_id ORDER BY t.id DESC
            """).map(Self.transferRow)
    }

    /// The transfers not finished (not `done`) of files that still exist, newest first: cheap
    /// enough for a live view to read every second.
    public func unfinishedTransfers() throws -> [TransferRow] {
        try db.query("""
            SELECT \(Self.transferColumns(prefix: "t.")) FROM transfers t JOIN nodes n ON n.id = t.node_id
            WHERE t.state != 'done' ORDER BY t.id DESC
            """).map(Self.transferRow)
    }

    /// Uploads of `nodeId` marked running.
    public func runningUploads(nodeId: String) throws -> Int {
        try db.scalar(Int.self, "SELECT count(*) FROM transfers WHERE node_id = ? AND direction = 'upload' AND state = 'running'", [nodeId]) ?? 0
    }

    /// Removes the rows of files that are gone and the finished rows beyond the history bounds
    /// (`transferHistoryCount` newest, none older than `transferHistoryAge`). Returns how many.
    @discardableResult
    public func pruneTransfers() throws -> Int {
        try db.transaction {
            let gone = try db.run("DELETE FROM transfers WHERE node_id NOT IN (SELECT id FROM nodes)")
            return gone + (try pruneTransferHistory())
        }
    }

    @discardableResult
    func pruneTransferHistory() throws -> Int {
        try db.run("""
            DELETE FROM transfers WHERE state = 'done' AND (updated_at < ? OR id NOT IN
              (SELECT id FROM transfers WHERE state = 'done' ORDER BY id DESC LIMIT ?))
            """, [Vault.now - Self.transferHistoryAge, Self.transferHistoryCount])
    }
}
