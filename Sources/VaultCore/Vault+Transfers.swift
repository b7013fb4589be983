import Foundation
import VaultSQL

/// The `transfers` table: one row per upload or download, kept current while it runs (the sync
/// layer coalesces progress writes), and a bounded history of finished ones.
extension Vault {
    /// Finished (`done`) rows kept for `vault transfers`: at most this many, newest first ...
    public static let transferHistoryCount = 200
    /// ... and none older than this (seconds). Unfinished rows are kept while their file exists.
    public static let transferHistoryAge: Int64 = 7 * 24 * 3600

    /// The upload of the outbox entry with `requestId`, if one was recorded.
    public func uploadTransfer(requestId: String) throws -> TransferRow? {
        try transfersTable.upload(requestId: requestId)
    }

    /// The unfinished download of `nodeId` for content of `total` bytes, if any (it resumes).
    public func unfinishedDownload(nodeId: String, total: Int64) throws -> TransferRow? {
        try transfersTable.unfinishedDownload(nodeId: nodeId, total: total)
    }

    /// Records a new transfer and returns its id; prunes the finished history beyond its bounds.
    public func addTransfer(_ direction: TransferDirection, nodeId: String, state: TransferState, blobId: String? = nil,
                            total: Int64, requestId: String? = nil) throws -> Int64 {
        try db.transaction {
            if direction == .download { try transfersTable.deleteDownloads(nodeId: nodeId) }
            let id = try transfersTable.insert(direction, nodeId: nodeId, state: state, blobId: blobId,
                                               total: total, requestId: requestId, now: Vault.now)
            try pruneTransferHistory()
            return id
        }
    }

    /// Applies one change to transfer `id` (and stamps `updated_at`).
    public func updateTransfer(_ id: Int64, _ change: TransferChange) throws {
        try transfersTable.update(id, change, now: Vault.now)
    }

    /// Marks download `id` done with all its bytes (inside the transaction that publishes its content).
    func markDownloadDone(_ id: Int64) throws {
        try transfersTable.markDownloadDone(id, now: Vault.now)
    }

    /// Settles the unfinished downloads of files whose content is here (LOCAL, its blob recorded
    /// with the file's SHA-256): a download killed after its publish but before its row was marked
    /// (vaults written before the two were one transaction), or one the file's own new content made
    /// moot. A row for the content the file has becomes done; a row for other content (another
    /// size) is removed, and with it the partial it kept. Returns the paths settled, for `doctor`.
    @discardableResult
    public func settleFinishedDownloads() throws -> [String] {
        try db.transaction {
            var settled: [String] = []
            for d in try transfersTable.downloadsOfLocalContent() {
                if d.complete { try markDownloadDone(d.id) } else { try transfersTable.delete(id: d.id) }
                settled.append((try? node(id: d.nodeId)).flatMap { $0 }.flatMap { try? path(of: $0) } ?? d.nodeId)
            }
            return settled
        }
    }

    /// Every transfer whose file still exists, newest first.
    public func transfers() throws -> [TransferRow] {
        try transfersTable.ofExistingFiles(unfinishedOnly: false)
    }

    /// The transfers not finished (not `done`) of files that still exist, newest first: cheap
    /// enough for a live view to read every second.
    public func unfinishedTransfers() throws -> [TransferRow] {
        try transfersTable.ofExistingFiles(unfinishedOnly: true)
    }

    /// Uploads of `nodeId` marked running.
    public func runningUploads(nodeId: String) throws -> Int {
        try transfersTable.runningUploads(nodeId: nodeId)
    }

    /// Removes the rows of files that are gone and the finished rows beyond the history bounds
    /// (`transferHistoryCount` newest, none older than `transferHistoryAge`). Returns how many.
    @discardableResult
    public func pruneTransfers() throws -> Int {
        try db.transaction {
            let gone = try transfersTable.deleteOfMissingNodes()
            return gone + (try pruneTransferHistory())
        }
    }

    @discardableResult
    func pruneTransferHistory() throws -> Int {
        try transfersTable.pruneFinished(olderThan: Vault.now - Self.transferHistoryAge, keep: Self.transferHistoryCount)
    }
}
