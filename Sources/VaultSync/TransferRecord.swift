import Foundation
import VaultCore

/// One row of the `transfers` table, kept current while a transfer runs. Progress writes are
/// coalesced to at most about three a second; the first is written at once, so a transfer killed
/// early still shows what it had. Each write is a durable transaction of its own (about four
/// fsyncs), so a write that would leave the row as it is is not made, and a transfer's last
/// progress goes with its end in one write: a small upload wrote its row seven times, now three.
final class TransferRecord {
    let vault: Vault
    let id: Int64
    private(set) var uploadId: String?
    private var lastProgressWrite = Date.distantPast
    private var pendingBytes: Int64?
    /// Called with the bytes done at each (coalesced) progress write.
    var observer: ((Int64) -> Void)?

    /// What the row holds, as this record read or last wrote it.
    private struct Stored: Equatable {
        var state: TransferState
        var error: String?
        var retryAt: Int64?
        var bytes: Int64
    }
    private var stored: Stored?

    private init(vault: Vault, id: Int64, uploadId: String?, stored: Stored?) {
        self.vault = vault; self.id = id; self.uploadId = uploadId; self.stored = stored
    }

    private convenience init(vault: Vault, row: TransferRow) {
        self.init(vault: vault, id: row.id, uploadId: row.uploadId,
                  stored: Stored(state: row.state, error: row.error, retryAt: row.nextAttemptAt, bytes: row.bytesDone))
    }

    /// The transfer of `requestId` (an outbox entry), or a new one, running.
    static func upload(in vault: Vault, nodeId: String, requestId: String, blobId: String, total: Int64) throws -> TransferRecord {
        let r: TransferRecord
        if let row = try vault.uploadTransfer(requestId: requestId) {
            r = TransferRecord(vault: vault, row: row)
        } else {
            r = TransferRecord(vault: vault, id: try vault.addTransfer(.upload, nodeId: nodeId, state: .running, blobId: blobId,
                                                                        total: total, requestId: requestId), uploadId: nil,
                               stored: Stored(state: .running, error: nil, retryAt: nil, bytes: 0))
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
            let r = TransferRecord(vault: vault, row: row)
            r.partialBlobId = row.blobId
            r.set(.running)
            return r
        }
        return TransferRecord(vault: vault, id: try vault.addTransfer(.download, nodeId: nodeId, state: .running, total: total),
                              uploadId: nil, stored: Stored(state: .running, error: nil, retryAt: nil, bytes: 0))
    }

    /// Writes `change`; false when it failed (the row is then as it was, or unknown).
    @discardableResult
    private func update(_ change: TransferChange) -> Bool {
        // Bookkeeping only: a failed progress write must not fail the transfer itself.
        do { try vault.updateTransfer(id, change); return true } catch { stored = nil; return false }
    }

    /// Sets the state (and the bytes still to write with it, in the same write); no write when
    /// the row already says all of it.
    func set(_ state: TransferState, error: String? = nil, retryAt: Date? = nil) {
        _ = checkHold()
        let retry = retryAt.map { Int64($0.timeIntervalSince1970.rounded(.up)) }
        let bytes = pendingBytes ?? stored?.bytes
        pendingBytes = nil
        let want = bytes.map { Stored(state: state, error: error, retryAt: retry, bytes: $0) }
        guard want == nil || want != stored else { return }
        let written: Bool
        if let b = bytes, b != stored?.bytes {
            written = update(.stateAndProgress(state, error: error, retryAt: retry, bytes: b))
            observer?(b)
        } else {
            written = update(.state(state, error: error, retryAt: retry))
        }
        if written, let want { stored = want }
    }

    /// Ends the transfer in `state` with `bytes` done, in one write.
    func end(_ state: TransferState, bytes: Int64) {
        pendingBytes = bytes
        set(state)
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
        if b != stored?.bytes, update(.progress(b)) { stored?.bytes = b }
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
