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
            if let m = try db.scalar(String.self, "SELECT value FROM settings WHERE key=?", [Self.reencryptMarkKey]).flatMap(Int64.init) {
                return m
            }
            let m = try db.scalar(Int64.self, "SELECT COALESCE(MAX(rowid), 0) FROM blobs") ?? 0
            try db.run("INSERT INTO settings(key, value) VALUES (?, ?)", [Self.reencryptMarkKey, String(m)])
            if resealRemote { try queueReseals() }
            return m
        }
        try repairBlobAreas()   // each file where its row says, before it is re-sealed in that area
        let todo = try db.query("SELECT id, area FROM blobs WHERE rowid <= ? ORDER BY rowid", [mark])
        var done = 0
        for row in todo {
            let oldId = try row.decode(String.self, "id")
            var area = try row.decode(BlobArea.self, "area")
            let current = try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE local_path = ? AND remote_id IS NOT NULL AND type = 'file'", [oldId])
                .map(Node.init(row:))
            let reupload = resealRemote && current != nil
            if reupload { area = .staging }   // not evictable until the server has it
            let source = try openBlob(oldId, area: try locateBlob(oldId) ?? area).handle
            try checkFreeSpaceForCopy(source.plaintextSize)
            let fresh = try blobs.write(area: area) { emit in try source.stream { try emit($0) } }
            try db.transaction {
                try db.run("""
                    INSERT INTO blobs(id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256)
                      SELECT ?, node_id, ?, ?, ?, ?, ?, ?, ? FROM blobs WHERE id = ?
                    """, [fresh.id, area.rawValue, Int64(fresh.size), Int64(fresh.sealedSize), fresh.sha256, Int64(fresh.keyEpoch), Vault.now,
                          fresh.sealedSHA256, oldId])
                try db.run("UPDATE nodes SET local_path = ? WHERE local_path = ?", [fresh.id, oldId])
                try db.run("UPDATE revisions SET blob_id = ? WHERE blob_id = ?", [fresh.id, oldId])
                try rebindUploads(from: oldId, to: fresh)
                if reupload, var n = current {
                    n.localPath = fresh.id
                    try db.run("UPDATE nodes SET pending_op = COALESCE(pending_op, 'upload') WHERE id = ?", [n.id])
                    if try !outbox(nodeId: n.id).contains(where: { $0.op == .upload && $0.payload.blobId == fresh.id }) {
                        try enqueue(.upload, nodeId: n.id,
                                    payload: .init(name: n.name, parentId: n.parentId, remoteId: n.remoteId, blobId: fresh.id,
                                                   size: fresh.size, sha256: fresh.sha256, mimeType: n.mimeType),
                                    baseVersion: n.version)
                    }
                }
                try db.run("DELETE FROM blobs WHERE id = ?", [oldId])
            }
            blobs.delete(oldId, area: .cache); blobs.delete(oldId, area: .staging)
            done += 1
            progress(done, todo.count)
            if done == 2 { TestHooks.crashPoint("reencrypt-some") }
        }
        try db.run("DELETE FROM settings WHERE key=?", [Self.reencryptMarkKey])
        return (done, todo.count)
    }

    /// Queues a new name token and node record under the current epoch for every node on the
    /// server: a `move` to where it is (the replay seals both afresh).
    func queueReseals() throws {
        for n in try db.query("SELECT \(Node.columns) FROM nodes WHERE remote_id IS NOT NULL AND id != ? ORDER BY rowid", [Self.rootId]).map(Node.init(row:)) {
            try enqueue(.move, nodeId: n.id, payload: .init(name: n.name, parentId: n.parentId, remoteId: n.remoteId, reseal: true),
                        baseVersion: n.version)
            try db.run("UPDATE nodes SET pending_op = COALESCE(pending_op, 'move') WHERE id = ?", [n.id])
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
                try db.run("DELETE FROM transfers WHERE request_id = ? AND direction = 'upload'", [e.requestId])
                requestId = Self.newRequestId()
            }
            try db.run("UPDATE outbox SET payload = ?, request_id = ? WHERE seq = ?", [try Self.encodePayload(p), requestId, e.seq])
        }
    }

    func checkFreeSpaceForCopy(_ plaintext: UInt64) throws {
        try blobs.checkFreeSpace(for: BlobStore.sealedSize(plaintextSize: plaintext), doing: "re-encrypt a blob")
    }
}
