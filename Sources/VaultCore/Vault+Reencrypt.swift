import Foundation

/// `vault key reencrypt`: every blob re-sealed under a new random data key (new blob id), one
/// blob at a time, resumable after a kill (SECURITY.md "Re-encryption").
extension Vault {
    static let reencryptMarkKey = "reencrypt_up_to_rowid"

    /// Re-encrypts every blob that existed when the (first, possibly interrupted) run began.
    /// Returns (re-encrypted now, total in this pass).
    @discardableResult
    public func reencrypt(progress: (Int, Int) -> Void = { _, _ in }) throws -> (done: Int, total: Int) {
        // The first run records the newest blob row; later runs resume from the same mark.
        let mark: Int64 = try db.transaction {
            if let m = try db.scalar("SELECT value FROM settings WHERE key=?", [Self.reencryptMarkKey])?.string.flatMap(Int64.init) {
                return m
            }
            let m = try db.scalar("SELECT COALESCE(MAX(rowid), 0) FROM blobs")?.int64 ?? 0
            try db.run("INSERT INTO settings(key, value) VALUES (?, ?)", [Self.reencryptMarkKey, String(m)])
            return m
        }
        try repairBlobAreas()   // each file where its row says, before it is re-sealed in that area
        let todo = try db.query("SELECT id, area FROM blobs WHERE rowid <= ? ORDER BY rowid", [mark])
        var done = 0
        for row in todo {
            guard let oldId = row[0].string, let area = BlobArea(rawValue: row[1].string ?? "") else { continue }
            let source = try blobs.open(oldId, area: area)
            try checkFreeSpaceForCopy(source.plaintextSize)
            let fresh = try blobs.write(area: area) { emit in try source.stream { try emit($0) } }
            try db.transaction {
                try db.run("""
                    INSERT INTO blobs(id, node_id, area, size, sealed_size, sha256, key_epoch, created_at)
                      SELECT ?, node_id, area, ?, ?, ?, ?, ? FROM blobs WHERE id = ?
                    """, [fresh.id, Int64(fresh.size), Int64(fresh.sealedSize), fresh.sha256, Int64(fresh.keyEpoch), Vault.now, oldId])
                try db.run("UPDATE nodes SET local_path = ? WHERE local_path = ?", [fresh.id, oldId])
                try db.run("UPDATE revisions SET blob_id = ? WHERE blob_id = ?", [fresh.id, oldId])
                try db.run("DELETE FROM blobs WHERE id = ?", [oldId])
            }
            blobs.delete(oldId, area: area)
            done += 1
            progress(done, todo.count)
            if done == 2 { TestHooks.crashPoint("reencrypt-some") }
        }
        try db.run("DELETE FROM settings WHERE key=?", [Self.reencryptMarkKey])
        return (done, todo.count)
    }

    func checkFreeSpaceForCopy(_ plaintext: UInt64) throws {
        try blobs.checkFreeSpace(for: BlobStore.sealedSize(plaintextSize: plaintext), doing: "re-encrypt a blob")
    }
}

