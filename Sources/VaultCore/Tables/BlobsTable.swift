import VaultSQL

/// The SQL of the `blobs` table: one row per sealed content blob in `cache/` or `staging/`
/// (SECURITY.md "Blobs"). Typed reads and writes only; the caller (`Vault+Tree`, `+Publish`,
/// `+Reencrypt`, the pull's plan) holds the transaction and the logic.
struct BlobsTable {
    let db: SQLDatabase

    static let columns = "id, area, size, sealed_size, sha256, key_epoch, sealed_sha256"

    /// The record of a row selecting `columns`; throws `SQLError.Kind.decoding` on a damaged row.
    static func record(_ r: SQLRow) throws -> BlobRecord {
        BlobRecord(id: try r.decode(String.self, "id"), area: try r.decode(BlobArea.self, "area"),
                   size: UInt64(max(0, try r.decode(Int64.self, "size"))), sealedSize: UInt64(max(0, try r.decode(Int64.self, "sealed_size"))),
                   sha256: try r.decode(String.self, "sha256"), keyEpoch: UInt32(try r.decode(Int64.self, "key_epoch")),
                   sealedSHA256: try r.decode(String?.self, "sealed_sha256"))
    }

    // MARK: - Reads

    /// The stored row of blob `id`, if any.
    func record(id: String) throws -> BlobRecord? {
        try db.queryOne("SELECT \(Self.columns) FROM blobs WHERE id = ?", [id]).map(Self.record)
    }

    /// Whether blob `id` has a row.
    func exists(id: String) throws -> Bool {
        try db.scalar(Int.self, "SELECT 1 FROM blobs WHERE id = ?", [id]) != nil
    }

    /// The area the row of blob `id` records, nil without a row.
    func area(id: String) throws -> BlobArea? {
        try db.queryOne("SELECT area FROM blobs WHERE id = ?", [id])?.decode(BlobArea.self, "area")
    }

    /// The key epoch blob `id` was sealed under, nil without a row.
    func keyEpoch(id: String) throws -> Int64? {
        try db.scalar(Int64.self, "SELECT key_epoch FROM blobs WHERE id = ?", [id])
    }

    /// The recorded SHA-256 of blob `id`'s sealed bytes, nil when unknown or without a row.
    func sealedSHA256(id: String) throws -> String? {
        try db.scalar(String?.self, "SELECT sealed_sha256 FROM blobs WHERE id = ?", [id]) ?? nil
    }

    /// The ids of the rows that say `staging`.
    func stagingIds() throws -> [String] {
        try db.query("SELECT id FROM blobs WHERE area = ?", [BlobArea.staging]).map { try $0.decode(String.self, "id") }
    }

    /// The blobs of node `nodeId`, with their areas.
    func blobs(ofNode nodeId: String) throws -> [(id: String, area: BlobArea)] {
        try db.query("SELECT id, area FROM blobs WHERE node_id = ?", [CompactColumns.key(nodeId)]).map {
            (try $0.decode(String.self, "id"), try $0.decode(BlobArea.self, "area"))
        }
    }

    /// The newest row's rowid (0 for none): a mark for a pass over every blob written before it.
    func lastRowid() throws -> Int64 {
        try db.scalar(Int64.self, "SELECT COALESCE(MAX(rowid), 0) FROM blobs") ?? 0
    }

    /// The blobs up to rowid `mark`, oldest first, with their areas.
    func blobs(upTo mark: Int64) throws -> [(id: String, area: BlobArea)] {
        try db.query("SELECT id, area FROM blobs WHERE rowid <= ? ORDER BY rowid", [mark]).map {
            (try $0.decode(String.self, "id"), try $0.decode(BlobArea.self, "area"))
        }
    }

    /// Every blob in the cache as the budget sees it: its node (if any), sealed size, whether
    /// the node is pinned, when last used, and whether it is the node's head content.
    func cacheItems() throws -> [(id: String, nodeId: String?, sealedSize: Int64, pinned: Bool, lastUsed: Int64, head: Bool)] {
        try db.query("""
            SELECT b.id AS id, b.node_id AS node_id, b.sealed_size AS sealed_size, COALESCE(n.pinned, 0) AS pinned,
                   COALESCE(n.last_accessed, b.created_at, 0) AS last_used, n.local_path = b.id AND n.folder = 0 AS head
            FROM blobs b LEFT JOIN nodes n ON n.id = b.node_id
            WHERE b.area = ?
            """, [BlobArea.cache]).map { r in
            (try r.decode(String.self, "id"), try CompactColumns.id(r["node_id"], column: "node_id"), try r.decode(Int64.self, "sealed_size"),
             try r.decode(Bool.self, "pinned"), try r.decode(Int64.self, "last_used"),
             try r.decode(Bool?.self, "head") ?? false)   // NULL: the blob's node is gone
        }
    }

    // MARK: - Writes

    /// Records blob `b` of node `nodeId` (nil: no node), created `now`.
    func insert(_ b: BlobRecord, nodeId: String?, now: Int64) throws {
        try db.run("INSERT INTO blobs(id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256) VALUES (?,?,?,?,?,?,?,?,?)",
                   [b.id, CompactColumns.key(nodeId), b.area, Int64(b.size), Int64(b.sealedSize), b.sha256, Int64(b.keyEpoch), now, b.sealedSHA256])
        try CountersTable(db: db).countBlob(id: b.id)
    }

    /// Records `fresh` (a re-sealing of blob `oldId`) in `area` for the same node, created `now`.
    func insert(_ fresh: BlobRecord, area: BlobArea, replacing oldId: String, now: Int64) throws {
        try db.run("""
            INSERT INTO blobs(id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256)
              SELECT ?, node_id, ?, ?, ?, ?, ?, ?, ? FROM blobs WHERE id = ?
            """, [fresh.id, area, Int64(fresh.size), Int64(fresh.sealedSize), fresh.sha256, Int64(fresh.keyEpoch), now,
                  fresh.sealedSHA256, oldId])
        try CountersTable(db: db).countBlob(id: fresh.id)
    }

    /// Gives blob `id` to node `nodeId` (its bytes move between the counters if the node's pinning says so).
    func setNode(id: String, _ nodeId: String) throws {
        try recounting(id) { try db.run("UPDATE blobs SET node_id = ? WHERE id = ?", [CompactColumns.key(nodeId), id]) }
    }

    /// Records that blob `id` is in the cache now (its bytes move from staged to cached or pinned).
    func markCached(id: String) throws {
        try recounting(id) { try db.run("UPDATE blobs SET area = ? WHERE id = ?", [BlobArea.cache, id]) }
    }

    /// Runs `change` to blob `id`'s area or node, its bytes uncounted before and counted after.
    private func recounting(_ id: String, _ change: () throws -> Void) throws {
        let counters = CountersTable(db: db)
        try counters.countBlob(id: id, sign: -1)
        try change()
        try counters.countBlob(id: id)
    }

    func setSealedSHA256(id: String, _ digest: String) throws {
        try db.run("UPDATE blobs SET sealed_sha256 = ? WHERE id = ?", [digest, id])
    }

    func delete(id: String) throws {
        try db.run("DELETE FROM blobs WHERE id = ?", [id])
    }

    /// Deletes blob `id` unless a revision keeps it.
    func deleteUnlessRevision(id: String) throws {
        try db.run("DELETE FROM blobs WHERE id = ? AND NOT EXISTS (SELECT 1 FROM revisions WHERE blob_id = ?)", [id, id])
    }

    /// After a rotation rewrapped every header: no sealed SHA-256 recorded holds any more, and
    /// every blob is of `epoch`.
    func rewrappedAll(toEpoch epoch: UInt32) throws {
        try db.run("UPDATE blobs SET sealed_sha256 = NULL WHERE sealed_sha256 IS NOT NULL")
        try db.run("UPDATE blobs SET key_epoch = ? WHERE key_epoch <> ?", [Int64(epoch), Int64(epoch)])
    }

    /// Deletes the blobs of node `nodeId`.
    func delete(ofNode nodeId: String) throws {
        try db.run("DELETE FROM blobs WHERE node_id = ?", [CompactColumns.key(nodeId)])
    }
}

extension Vault {
    /// The `blobs` table of this vault's database.
    var blobsTable: BlobsTable { BlobsTable(db: db) }
}
