import Foundation
import VaultCore

/// One row of the `transfers` table, kept current while a transfer runs. Progress writes are
/// coalesced to at most about three a second; the first is written at once, so a transfer killed
/// early still shows what it had.
final class TransferRecord {
    let vault: Vault
    let id: Int64
    private(set) var uploadId: String?
    private var lastProgressWrite = Date.distantPast
    private var pendingBytes: Int64?
    /// Called with the bytes done at each (coalesced) progress write.
    var observer: ((Int64) -> Void)?

    private init(vault: Vault, id: Int64, uploadId: String?) {
        self.vault = vault; self.id = id; self.uploadId = uploadId
    }

    /// The transfer of `requestId` (an outbox entry) or a new queued one.
    static func upload(in vault: Vault, nodeId: String, requestId: String, blobId: String, total: Int64) throws -> TransferRecord {
        let r: TransferRecord
        if let row = try vault.uploadTransfer(requestId: requestId) {
            r = TransferRecord(vault: vault, id: row.id, uploadId: row.uploadId)
        } else {
            r = TransferRecord(vault: vault, id: try vault.addTransfer(.upload, nodeId: nodeId, state: .queued, blobId: blobId,
                                                                        total: total, requestId: requestId), uploadId: nil)
        }
        r.watchedNode = nodeId
        return r
    }

    /// The partial sealed blob (in `tmp/`) of an unfinished download, if any.
    private(set) var partialBlobId: String?

    /// The download transfer of `nodeId`: the unfinished one (with its partial blob, so it
    /// resumes), or a new one.
    static func download(in vault: Vault, nodeId: String, total: Int64) throws -> TransferRecord {
        if let row = try vault.unfinishedDownload(nodeId: nodeId, total: total) {
            let r = TransferRecord(vault: vault, id: row.id, uploadId: nil)
            r.partialBlobId = row.blobId
            r.set(.running)
            return r
        }
        return TransferRecord(vault: vault, id: try vault.addTransfer(.download, nodeId: nodeId, state: .running, total: total),
                              uploadId: nil)
    }

    private func update(_ change: TransferChange) {
        // Bookkeeping only: a failed progress write must not fail the transfer itself.
        try? vault.updateTransfer(id, change)
    }

    func set(_ state: TransferState, error: String? = nil, retryAt: Date? = nil) {
        flushProgress()
        update(.state(state, error: error, retryAt: retryAt.map { Int64($0.timeIntervalSince1970.rounded(.up)) }))
    }

    /// Records the partial blob a download is writing into (kept across failures and kills).
    func setPartialBlob(_ id: String?) {
        partialBlobId = id
        update(.partialBlob(id))
    }

    func countAttempt() { update(.attempt) }

    func setSession(uploadId: String?, url: String?) {
        self.uploadId = uploadId
        update(.session(uploadId: uploadId, url: url))
    }

    /// Records progress, writing at most every 0.3 s; `force` writes now (and does not delay the
    /// next write, so the first bytes after a forced write at a transfer's start are written too).
    func progress(_ bytesDone: Int64, force: Bool = false) {
        pendingBytes = bytesDone
        if force { flushProgress(stamp: false) } else if Date().timeIntervalSince(lastProgressWrite) >= 0.3 { flushProgress() }
    }

    func flushProgress(stamp: Bool = true) {
        _ = checkHold()
        guard let b = pendingBytes else { return }
        pendingBytes = nil
        if stamp { lastProgressWrite = Date() }
        update(.progress(b))
        observer?(b)
    }

    /// For an upload: the node whose outbox entries the user may pause or cancel from another
    /// command while this transfer runs (`vault transfers pause|cancel` beside a sync).
    private var watchedNode: String?
    /// `paused` or `cancelled` once the user asked to stop this upload (read at each progress write).
    private(set) var holdRequested: OutboxState?

    /// Reads whether the user asked to pause or cancel this upload; once asked, stays asked.
    func checkHold() -> OutboxState? {
        guard holdRequested == nil, let node = watchedNode else { return holdRequested }
        holdRequested = try? vault.outboxHold(nodeId: node)
        return holdRequested
    }
}
