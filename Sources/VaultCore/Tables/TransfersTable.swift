import VaultSQL

/// The SQL of the `transfers` table: one row per upload or download (docs/outbox.md). Typed
/// reads and writes only; the caller (`Vault+Transfers` and the tree, outbox and pull code)
/// holds the transaction and the logic.
struct TransfersTable {
    let db: SQLDatabase

    /// The columns `TransferRow(row:)` reads, each prefixed with `prefix` (a join's alias).
    static func columns(prefix: String = "") -> String {
        TransferRow.columns.map { prefix + $0 }.joined(separator: ", ")
    }

    /// The upload recorded for the outbox entry with `requestId`, if any.
    func upload(requestId: String) throws -> TransferRow? {
        try db.queryOne("SELECT \(Self.columns()) FROM transfers WHERE request_id = ? AND direction = ?", [CompactColumns.requestKey(requestId), TransferDirection.upload])
            .map(TransferRow.init(row:))
    }

    /// The unfinished download of `nodeId` for content of `total` bytes, if any.
    func unfinishedDownload(nodeId: String, total: Int64) throws -> TransferRow? {
        try db.queryOne("""
            SELECT \(Self.columns()) FROM transfers WHERE node_id = ? AND direction = ? AND state != ? AND bytes_total = ?
            """, [CompactColumns.key(nodeId), TransferDirection.download, TransferState.done, total]).map(TransferRow.init(row:))
    }

    /// The transfers of files that still exist, newest first; with `unfinishedOnly`, not `done`.
    func ofExistingFiles(unfinishedOnly: Bool) throws -> [TransferRow] {
        try db.query("""
            SELECT \(Self.columns(prefix: "t.")) FROM transfers t JOIN nodes n ON n.id = t.node_id
            \(unfinishedOnly ? "WHERE t.state != ? " : "")ORDER BY t.id DESC
            """, unfinishedOnly ? [TransferState.done] : []).map(TransferRow.init(row:))
    }

    /// Unfinished uploads whose outbox entries are paused or cancelled, with that hold.
    func heldUploads() throws -> [(transfer: TransferRow, hold: OutboxState)] {
        try db.query("""
            SELECT DISTINCT \(Self.columns(prefix: "t.")), o.state AS hold FROM transfers t JOIN outbox o ON o.node_id = t.node_id
            WHERE t.direction = ? AND t.state != ? AND o.state IN (?, ?)
            """, [TransferDirection.upload, TransferState.done, OutboxState.paused, OutboxState.cancelled])
            .map { (try TransferRow(row: $0), try OutboxTable.Codes.state(try $0.decode(Int64.self, "hold"))) }
    }

    /// Unfinished downloads of files whose content is here (LOCAL, its blob recorded with the
    /// file's SHA-256), and whether each is for the size the file has.
    func downloadsOfLocalContent() throws -> [(id: Int64, nodeId: String, complete: Bool)] {
        try db.query("""
            SELECT t.id AS id, t.node_id AS node_id, t.bytes_total = n.size AS complete
            FROM transfers t JOIN nodes n ON n.id = t.node_id JOIN blobs b ON b.id = n.local_path
            WHERE t.direction = ? AND t.state != ? AND n.content_state = ? AND \(NodesTable.sha256Text(BlobsTable.sha256(of: "b"))) = \(NodesTable.sha256Text("n.sha256"))
            """, [TransferDirection.download, TransferState.done, NodesTable.Codes.code(ContentState.local)])
            .map { (try $0.decode(Int64.self, "id"), try NodesTable.nodeId($0["node_id"], column: "node_id"), try $0.decode(Bool.self, "complete")) }
    }

    /// The partial blobs (in `tmp/`) of downloads not finished.
    func unfinishedDownloadBlobs() throws -> [String] {
        try db.query("SELECT blob_id FROM transfers WHERE direction = ? AND state != ? AND blob_id IS NOT NULL",
                     [TransferDirection.download, TransferState.done])
            .map { try BlobsTable.blobId($0["blob_id"], column: "blob_id") }
    }

    /// How many uploads of `nodeId` are marked running.
    func runningUploads(nodeId: String) throws -> Int {
        try db.scalar(Int.self, "SELECT count(*) FROM transfers WHERE node_id = ? AND direction = ? AND state = ?",
                      [CompactColumns.key(nodeId), TransferDirection.upload, TransferState.running]) ?? 0
    }

    /// Inserts a new row (`bytes_done` 0, created and updated `now`) and returns its id.
    func insert(_ direction: TransferDirection, nodeId: String, state: TransferState, blobId: String?,
                total: Int64, requestId: String?, now: Int64) throws -> Int64 {
        try db.run("""
            INSERT INTO transfers(node_id, direction, state, blob_id, bytes_total, bytes_done, request_id, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)
            """, [CompactColumns.key(nodeId), direction, state, CompactColumns.key(blobId), total, CompactColumns.requestKey(requestId), now, now])
        return db.lastInsertRowID
    }

    /// Applies one change to row `id`, stamping `updated_at` with `now`.
    func update(_ id: Int64, _ change: TransferChange, now: Int64) throws {
        let (set, params): (String, [any SQLBindable]) = switch change {
        case let .state(state, error, retryAt): ("state = ?, error = ?, next_attempt_at = ?", [state, error, retryAt])
        case let .stateAndProgress(state, error, retryAt, bytes):
            ("state = ?, error = ?, next_attempt_at = ?, bytes_done = ?", [state, error, retryAt, bytes])
        case let .progress(bytes): ("bytes_done = ?", [bytes])
        case let .partialBlob(blobId): ("blob_id = ?", [CompactColumns.key(blobId)])
        case let .session(uploadId, url): ("upload_id = ?, upload_url = ?", [uploadId, url])
        case .attempt: ("attempts = attempts + 1", [])
        }
        try db.run("UPDATE transfers SET \(set), updated_at = ? WHERE id = ?", params + [now, id])
    }

    /// Marks download `id` done with all its bytes.
    func markDownloadDone(_ id: Int64, now: Int64) throws {
        try db.run("""
            UPDATE transfers SET state = ?, error = NULL, next_attempt_at = NULL, bytes_done = bytes_total, updated_at = ?
            WHERE id = ? AND direction = ?
            """, [TransferState.done, now, id, TransferDirection.download])
    }

    /// Puts the paused or cancelled transfers (of `nodeId`, or all) back to `queued`.
    func requeueHeld(nodeId: String?) throws {
        let held: [any SQLBindable] = [TransferState.paused, TransferState.cancelled]
        if let nodeId {
            try db.run("UPDATE transfers SET state = ? WHERE node_id = ? AND state IN (?, ?)", [TransferState.queued, CompactColumns.key(nodeId)] + held)
        } else {
            try db.run("UPDATE transfers SET state = ? WHERE state IN (?, ?)", [TransferState.queued] + held)
        }
    }

    func delete(id: Int64) throws {
        try db.run("DELETE FROM transfers WHERE id = ?", [id])
    }

    /// Deletes every transfer of `nodeId`.
    func delete(nodeId: String) throws {
        try db.run("DELETE FROM transfers WHERE node_id = ?", [CompactColumns.key(nodeId)])
    }

    /// Deletes the downloads of `nodeId`.
    func deleteDownloads(nodeId: String) throws {
        try db.run("DELETE FROM transfers WHERE node_id = ? AND direction = ?", [CompactColumns.key(nodeId), TransferDirection.download])
    }

    /// Deletes the upload of the outbox entry with `requestId`.
    func deleteUpload(requestId: String) throws {
        try db.run("DELETE FROM transfers WHERE request_id = ? AND direction = ?", [CompactColumns.requestKey(requestId), TransferDirection.upload])
    }

    /// Deletes the unfinished uploads whose request id no outbox entry has any more; returns how many.
    @discardableResult
    func deleteUploadsWithoutEntry() throws -> Int {
        try db.run("""
            DELETE FROM transfers WHERE direction = ? AND state != ? AND request_id IS NOT NULL
              AND request_id NOT IN (SELECT request_id FROM outbox)
            """, [TransferDirection.upload, TransferState.done])
    }

    /// Deletes the rows of node `nodeId` (by the node index: a removal need not scan the table).
    func delete(ofNode nodeId: String) throws {
        try db.run("DELETE FROM transfers WHERE node_id = ?", [CompactColumns.key(nodeId)])
    }

    /// Deletes the rows of files that are gone; returns how many.
    @discardableResult
    func deleteOfMissingNodes() throws -> Int {
        try db.run("DELETE FROM transfers WHERE node_id NOT IN (SELECT id FROM nodes)")
    }

    /// Deletes the finished rows updated before `olderThan` or beyond the `keep` newest; returns how many.
    @discardableResult
    func pruneFinished(olderThan: Int64, keep: Int) throws -> Int {
        try db.run("""
            DELETE FROM transfers WHERE state = ? AND (updated_at < ? OR id NOT IN
              (SELECT id FROM transfers WHERE state = ? ORDER BY id DESC LIMIT ?))
            """, [TransferState.done, olderThan, TransferState.done, keep])
    }
}

extension Vault {
    /// The `transfers` table of this vault's database.
    var transfersTable: TransfersTable { TransfersTable(db: db) }
}
