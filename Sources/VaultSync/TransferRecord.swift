import Foundation
import VaultCore
import VaultSQL

/// Where a transfer stands, as stored in the `transfers` table.
public enum TransferState: String, Sendable, Codable {
    /// Recorded, not started yet.
    case queued
    /// In progress now.
    case running
    /// Left `running` by a process that stopped (killed, crashed, power cut); the next
    /// `vault sync` or `vault transfers resume` continues it where the server says it stopped.
    case interrupted
    /// Paused by the user (`vault transfers pause`); `vault transfers resume` continues it.
    case paused
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

/// One row of the `transfers` table, kept current while a transfer runs. Progress writes are
/// coalesced to at most about three a second.
final class TransferRecord {
    let db: SQLDatabase
    let id: Int64
    private(set) var uploadId: String?
    private var lastProgressWrite = Date.distantPast
    private var pendingBytes: Int64?
    /// Called with the bytes done at each (coalesced) progress write.
    var observer: ((Int64) -> Void)?

    private init(db: SQLDatabase, id: Int64, uploadId: String?) {
        self.db = db; self.id = id; self.uploadId = uploadId
    }

    /// The transfer of `requestId` (an outbox entry) or a new queued one.
    static func upload(in vault: Vault, nodeId: String, requestId: String, blobId: String, total: Int64) throws -> TransferRecord {
        if let row = try vault.db.queryOne("SELECT id, upload_id FROM transfers WHERE request_id = ? AND direction = 'upload'", [requestId]) {
            let r = TransferRecord(db: vault.db, id: row[0].int64 ?? 0, uploadId: row[1].string)
            r.watchedNode = nodeId
            return r
        }
        let now = Int64(Date().timeIntervalSince1970)
        try vault.db.run("""
            INSERT INTO transfers(node_id, direction, state, blob_id, bytes_total, bytes_done, request_id, created_at, updated_at)
            VALUES (?, 'upload', 'queued', ?, ?, 0, ?, ?, ?)
            """, [nodeId, blobId, total, requestId, now, now])
        let r = TransferRecord(db: vault.db, id: vault.db.lastInsertRowID, uploadId: nil)
        r.watchedNode = nodeId
        return r
    }

    /// The partial sealed blob (in `tmp/`) of an unfinished download, if any.
    private(set) var partialBlobId: String?

    /// The download transfer of `nodeId`: the unfinished one (with its partial blob, so it
    /// resumes), or a new one.
    static func download(in vault: Vault, nodeId: String, total: Int64) throws -> TransferRecord {
        let now = Int64(Date().timeIntervalSince1970)
        if let row = try vault.db.queryOne("""
            SELECT id, blob_id FROM transfers WHERE node_id = ? AND direction = 'download' AND state != 'done' AND bytes_total = ?
            """, [nodeId, total]) {
            let r = TransferRecord(db: vault.db, id: row[0].int64 ?? 0, uploadId: nil)
            r.partialBlobId = row[1].string
            r.set(.running)
            return r
        }
        try vault.db.run("DELETE FROM transfers WHERE node_id = ? AND direction = 'download'", [nodeId])
        try vault.db.run("""
            INSERT INTO transfers(node_id, direction, state, bytes_total, bytes_done, created_at, updated_at)
            VALUES (?, 'download', 'running', ?, 0, ?, ?)
            """, [nodeId, total, now, now])
        return TransferRecord(db: vault.db, id: vault.db.lastInsertRowID, uploadId: nil)
    }

    private func update(_ set: String, _ params: [any SQLBindable]) {
        // Bookkeeping only: a failed progress write must not fail the transfer itself.
        _ = try? db.run("UPDATE transfers SET \(set), updated_at = ? WHERE id = ?",
                        params + [Int64(Date().timeIntervalSince1970), id])
    }

    func set(_ state: TransferState, error: String? = nil, retryAt: Date? = nil) {
        flushProgress()
        update("state = ?, error = ?, next_attempt_at = ?",
               [state.rawValue, error, retryAt.map { Int64($0.timeIntervalSince1970.rounded(.up)) }])
    }

    /// Records the partial blob a download is writing into (kept across failures and kills).
    func setPartialBlob(_ id: String?) {
        partialBlobId = id
        update("blob_id = ?", [id])
    }

    func countAttempt() { update("attempts = attempts + 1", []) }

    func setSession(uploadId: String?, url: String?) {
        self.uploadId = uploadId
        update("upload_id = ?, upload_url = ?", [uploadId, url])
    }

    /// Records progress, writing at most every 0.3 s (`force` writes now).
    func progress(_ bytesDone: Int64, force: Bool = false) {
        pendingBytes = bytesDone
        if force || Date().timeIntervalSince(lastProgressWrite) >= 0.3 { flushProgress() }
    }

    func flushProgress() {
        _ = checkHold()
        guard let b = pendingBytes else { return }
        pendingBytes = nil
        lastProgressWrite = Date()
        update("bytes_done = ?", [b])
        observer?(b)
    }

    /// For an upload: the node whose outbox entries the user may pause or cancel from another
    /// command while this transfer runs (`vault transfers pause|cancel` beside a sync).
    private var watchedNode: String?
    /// `paused` or `cancelled` once the user asked to stop this upload (read at each progress write).
    private(set) var holdRequested: String?

    /// Reads whether the user asked to pause or cancel this upload; once asked, stays asked.
    func checkHold() -> String? {
        guard holdRequested == nil, let node = watchedNode else { return holdRequested }
        holdRequested = try? db.scalar("SELECT state FROM outbox WHERE node_id = ? AND state IN ('paused', 'cancelled') LIMIT 1",
                                       [node])?.string
        return holdRequested
    }
}
