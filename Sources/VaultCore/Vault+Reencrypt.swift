import Foundation

/// `vault key reencrypt`: every blob re-sealed under a new random data key (new blob id), one
/// blob at a time, resumable after a kill (SECURITY.md "Re-encryption"). On a vault that syncs,
/// the server's copies are replaced too (a lost device cannot read what follows): every synced
/// file's new blob is staged and queued as a new revision, and every synced node is queued for a
/// new name token and node record under the current epoch, all in the outbox (so the next push
/// sends them, resumable like any change).
extension Vault {
    static let reencryptMarkKey = "reencrypt_up_to_rowid"

    /// Re-encrypts every blob that existed when the (first, possibly interrupted) run began.
    /// With `resealRemote`, also queues the server's copies for replacement (see above).
    /// Returns (re-encrypted now, total in this pass).
    @discardableResult
    public func reencrypt(resealRemote: Bool = false, progress: (Int, Int) -> Void = { _, _ in }) throws -> (done: Int, total: Int) {
        // The first run records the newest blob row (and queues every synced node's new record);
        // later runs resume from the same mark.
        let mark: Int64 = try db.transaction {
            if let m = try settingsTable.value(Self.reencryptMarkKey).flatMap(Int64.init) {
                return m
            }
            let m = try blobsTable.lastRowid()
            try settingsTable.set(Self.reencryptMarkKey, String(m))
            if resealRemote { try queueReseals() }
            return m
        }
        try repairBlobAreas()   // each file where its row says, before it is re-sealed in that area
        let todo = try blobsTable.blobs(upTo: mark)
        var done = 0
        for row in todo {
            let oldId = row.id
            var area = row.area
            let current = try nodesTable.syncedFile(withBlob: oldId)
            let reupload = resealRemote && current != nil
            if reupload { area = .staging }   // not evictable until the server has it
            let source = try openBlob(oldId, area: try locateBlob(oldId) ?? area).handle
            try checkFreeSpaceForCopy(source.plaintextSize)
            let fresh = try blobs.write(area: area) { emit in try source.stream { try emit($0) } }
            try db.transaction {
                try blobsTable.insert(fresh, area: area, replacing: oldId, now: Vault.now)
                try nodesTable.rebindBlob(from: oldId, to: fresh.id)
                try revisionsTable.rebindBlob(from: oldId, to: fresh.id)
                try rebindUploads(from: oldId, to: fresh)
                if reupload, var n = current {
                    n.localPath = fresh.id
                    try nodesTable.notePending(id: n.id, .upload)
                    if try !outbox(nodeId: n.id).contains(where: { $0.op == .upload && $0.payload.blobId == fresh.id }) {
                        try enqueue(.upload, nodeId: n.id,
                                    payload: .init(name: n.name, parentId: n.parentId, remoteId: n.remoteId, blobId: fresh.id,
                                                   size: fresh.size, sha256: fresh.sha256, mimeType: n.mimeType),
                                    baseVersion: n.version)
                    }
                }
                try blobsTable.delete(id: oldId)
            }
            blobs.delete(oldId, area: .cache); blobs.delete(oldId, area: .staging)
            done += 1
            progress(done, todo.count)
            if done == 2 { TestHooks.crashPoint("reencrypt-some") }
        }
        try settingsTable.set(Self.reencryptMarkKey, nil)
        return (done, todo.count)
    }

    /// Queues a new name token and node record under the current epoch for every node on the
    /// server: a `move` to where it is (the replay seals both afresh).
    func queueReseals() throws {
        for n in try nodesTable.synced() {
            try enqueue(.move, nodeId: n.id, payload: .init(name: n.name, parentId: n.parentId, remoteId: n.remoteId, reseal: true),
                        baseVersion: n.version)
            try nodesTable.notePending(id: n.id, .move)
        }
    }

    /// Points pending uploads of blob `old` at its re-sealed copy. An upload whose server session
    /// had started with the old bytes starts a new session (the old one expires on the server).
    func rebindUploads(from old: String, to fresh: BlobRecord) throws {
        for e in try outbox() where e.op == .upload && e.payload.blobId == old {
            var p = e.payload
            p.blobId = fresh.id
            var requestId = e.requestId
            if try uploadTransfer(requestId: e.requestId) != nil {
                try transfersTable.deleteUpload(requestId: e.requestId)
                requestId = Self.newRequestId()
            }
            try outboxTable.setPayload(seq: e.seq, p, requestId: requestId)
        }
    }

    func checkFreeSpaceForCopy(_ plaintext: UInt64) throws {
        try blobs.checkFreeSpace(for: BlobStore.sealedSize(plaintextSize: plaintext), doing: "re-encrypt a blob")
    }
}
