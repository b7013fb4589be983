import VaultSQL

/// The SQL of the `blobs` table: one row per sealed content blob in `cache/` or `staging/`
/// (SECURITY.md "Blobs"). Since schema 12 (issue 21) a blob id is stored as its key (16 bytes,
/// `CompactColumns.key`) here and wherever a row names a blob (`nodes.local_path`,
/// `revisions.blob_id`, `transfers.blob_id`), the area as a small integer (`Codes`) and the
/// SHA-256s as their 32 bytes. Typed reads and writes only; the caller (`Vault+Tree`,
/// `+Publish`, `+Reencrypt`, the pull's plan) holds the transaction and the logic.
struct BlobsTable {
    let db: SQLDatabase

    /// The columns `record` reads, from `blobs` (unaliased): since schema 15 a NULL `sha256` is
    /// the SHA-256 of the blob's node, which holds it alike (`nodes_keep_blob_sha_*` copy it into
    /// the blob before the node's SHA-256 changes or the node goes).
    static let columns = "id, area, size, sealed_size, \(sha256Column) AS sha256, key_epoch, sealed_sha256"

    /// A blob's SHA-256, its own or its node's (schema 15), for the row `table` (a name or alias).
    static func sha256(of table: String) -> String {
        "coalesce(\(table).sha256, (SELECT sn.sha256 FROM nodes sn WHERE sn.id = \(table).node_id))"
    }

    private static let sha256Column = sha256(of: "blobs")

    /// The stored SHA-256 of a blob of node `?node` (a parameter's SQL) whose SHA-256 is `?sha`:
    /// NULL when the node holds it alike (schema 15), else `?sha`.
    private static func storedSHA256(node: String, sha: String) -> String {
        "CASE WHEN \(sha) IS NOT NULL AND (SELECT sn.sha256 FROM nodes sn WHERE sn.id = \(node)) IS \(sha) THEN NULL ELSE \(sha) END"
    }

    /// The record of a row selecting `columns`; throws `SQLError.Kind.decoding` on a damaged row.
    static func record(_ r: SQLRow) throws -> BlobRecord {
        BlobRecord(id: try blobId(r["id"], column: "id"), area: try Codes.area(try r.decode(Int64.self, "area")),
                   size: UInt64(max(0, try r.decode(Int64.self, "size"))), sealedSize: UInt64(max(0, try r.decode(Int64.self, "sealed_size"))),
                   sha256: try digest(r["sha256"], column: "sha256"), keyEpoch: UInt32(try r.decode(Int64.self, "key_epoch")),
                   sealedSHA256: try CompactColumns.digest(r["sealed_sha256"], column: "sealed_sha256"))
    }

    /// The blob id a stored key holds (never NULL).
    static func blobId(_ v: SQLValue, column: String) throws -> String {
        guard let id = try CompactColumns.id(v, column: column) else {
            throw SQLError(kind: .decoding, code: .mismatch, message: "column \"\(column)\" holds NULL")
        }
        return id
    }

    private static func digest(_ v: SQLValue, column: String) throws -> String {
        guard let d = try CompactColumns.digest(v, column: column) else {
            throw SQLError(kind: .decoding, code: .mismatch, message: "column \"\(column)\" holds NULL")
        }
        return d
    }

    /// The small integers the `area` column holds (frozen: stored).
    enum Codes {
        static func code(_ a: BlobArea) -> Int64 {
            switch a { case .cache: 0; case .staging: 1 }
        }

        static func area(_ c: Int64) throws -> BlobArea {
            switch c {
            case 0: return .cache
            case 1: return .staging
            default: throw SQLError(kind: .decoding, code: .mismatch, message: "column \"area\" holds \(c), no blob area")
            }
        }
    }

    // MARK: - Migration 12

    /// The schema-11 table set aside (its index and the counters' triggers that read it dropped first).
    static let setAsideSQL = """
        DROP TRIGGER counters_blobs_delete;
        DROP TRIGGER counters_blobs_update;
        DROP TRIGGER counters_nodes_delete_pinned;
        DROP TRIGGER counters_nodes_pinned;
        DROP INDEX blobs_node;
        ALTER TABLE blobs RENAME TO blobs_schema11;
        """

    /// The compact table (a rowid table: the rowid is kept, `vault key reencrypt` marks its
    /// progress by it) and the counters' triggers on the areas' codes.
    static let compactSchemaSQL = """
        CREATE TABLE blobs(
          id BLOB NOT NULL UNIQUE,
          node_id BLOB,
          area INTEGER NOT NULL,
          size INTEGER NOT NULL,
          sealed_size INTEGER NOT NULL,
          sha256 BLOB NOT NULL,
          key_epoch INTEGER NOT NULL,
          created_at INTEGER NOT NULL,
          sealed_sha256 BLOB
        );
        CREATE INDEX blobs_node ON blobs(node_id);
        \(CountersTable.blobsTriggersSQL(schema: 12))
        \(CountersTable.pinningTriggersSQL(schema: 12))
        """

    /// The columns that name a blob by its id, as `table.column` (their ids become keys in migration 12).
    static let referringColumns = [("nodes", "local_path"), ("revisions", "blob_id"), ("transfers", "blob_id")]

    /// Migration 12's copy: every row of the schema-11 table into the compact one (same rowid),
    /// streamed, then every blob id that a row of another table names as a key; `crashPoint` is
    /// called after each blob and once the copy is done.
    static func copySchema11Rows(_ db: SQLDatabase, crashPoint: (String) -> Void) throws {
        let st = try db.prepare("SELECT rowid AS r, id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256 FROM blobs_schema11")
        while try st.step() {
            let r = st.row()
            guard let area = BlobArea(rawValue: try r.decode(String.self, "area")) else {
                throw SQLError(kind: .decoding, code: .mismatch, message: "column \"area\" holds no blob area")
            }
            try db.run("""
                INSERT INTO blobs(rowid, id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256)
                VALUES (?,?,?,?,?,?,?,?,?,?)
                """, [r["r"], CompactColumns.key(try r.decode(String.self, "id")), r["node_id"], Codes.code(area), r["size"], r["sealed_size"],
                      CompactColumns.digest(try r.decode(String.self, "sha256")), r["key_epoch"], r["created_at"],
                      CompactColumns.digest(try r.decode(String?.self, "sealed_sha256"))])
            crashPoint("migration-12-row")
        }
        for (table, column) in referringColumns { try CompactColumns.rekey(db, table: table, column: column) }
        crashPoint("migration-12-copied")
    }

    /// The schema-11 table dropped (with its unique index of the id).
    static let dropSchema11SQL = "DROP TABLE blobs_schema11;"

    // MARK: - Migration 15 (frozen: a change is a new migration)

    /// The schema-14 table set aside (its index and the counters' triggers on it dropped first,
    /// so the new table's take their names).
    static let setAside14SQL = """
        DROP TRIGGER counters_blobs_delete;
        DROP TRIGGER counters_blobs_update;
        DROP INDEX blobs_node;
        ALTER TABLE blobs RENAME TO blobs_schema14;
        """

    /// Schema 15's table: schema 12's, its `sha256` NULL where the blob's node holds it alike;
    /// the counters' triggers on it, and the triggers that copy a node's SHA-256 into the blobs
    /// that take it before the node changes it (or its id) or goes.
    static let schema15SQL = """
        CREATE TABLE blobs(
          id BLOB NOT NULL UNIQUE,
          node_id BLOB,
          area INTEGER NOT NULL,
          size INTEGER NOT NULL,
          sealed_size INTEGER NOT NULL,
          sha256 BLOB,
          key_epoch INTEGER NOT NULL,
          created_at INTEGER NOT NULL,
          sealed_sha256 BLOB,
          CHECK (sha256 IS NOT NULL OR node_id IS NOT NULL)
        );
        CREATE INDEX blobs_node ON blobs(node_id);
        \(CountersTable.blobsTriggersSQL(schema: 12))
        CREATE TRIGGER nodes_keep_blob_sha_update BEFORE UPDATE ON nodes
        WHEN NEW.sha256 IS NOT OLD.sha256 OR NEW.id IS NOT OLD.id BEGIN
          UPDATE blobs SET sha256 = OLD.sha256 WHERE node_id = OLD.id AND sha256 IS NULL;
        END;
        CREATE TRIGGER nodes_keep_blob_sha_delete BEFORE DELETE ON nodes BEGIN
          UPDATE blobs SET sha256 = OLD.sha256 WHERE node_id = OLD.id AND sha256 IS NULL;
        END;
        """

    /// Migration 15's copy: every row of the schema-14 table into schema 15's with its rowid, in
    /// one statement, each taking its SHA-256 from its node when the node holds it alike.
    /// `crashPoint` is called once the rows are in, and once the copy is done.
    static func copySchema14Rows(_ db: SQLDatabase, crashPoint: (String) -> Void) throws {
        try db.execute("""
            INSERT INTO blobs(rowid, id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256)
            SELECT rowid, id, node_id, area, size, sealed_size, \(storedSHA256(node: "b.node_id", sha: "b.sha256")), key_epoch, created_at, sealed_sha256
            FROM blobs_schema14 b ORDER BY rowid
            """)
        crashPoint("migration-15-row")
        crashPoint("migration-15-copied")
    }

    /// The schema-14 table dropped.
    static let dropSchema14SQL = "DROP TABLE blobs_schema14;"

    // MARK: - Reads

    /// The stored row of blob `id`, if any.
    func record(id: String) throws -> BlobRecord? {
        try db.queryOne("SELECT \(Self.columns) FROM blobs WHERE id = ?", [CompactColumns.key(id)]).map(Self.record)
    }

    /// Whether blob `id` has a row.
    func exists(id: String) throws -> Bool {
        try db.scalar(Int.self, "SELECT 1 FROM blobs WHERE id = ?", [CompactColumns.key(id)]) != nil
    }

    /// The area the row of blob `id` records, nil without a row.
    func area(id: String) throws -> BlobArea? {
        try db.scalar(Int64.self, "SELECT area FROM blobs WHERE id = ?", [CompactColumns.key(id)]).map(Codes.area)
    }

    /// The key epoch blob `id` was sealed under, nil without a row.
    func keyEpoch(id: String) throws -> Int64? {
        try db.scalar(Int64.self, "SELECT key_epoch FROM blobs WHERE id = ?", [CompactColumns.key(id)])
    }

    /// The recorded SHA-256 of blob `id`'s sealed bytes, nil when unknown or without a row.
    func sealedSHA256(id: String) throws -> String? {
        try db.queryOne("SELECT sealed_sha256 FROM blobs WHERE id = ?", [CompactColumns.key(id)])
            .flatMap { try CompactColumns.digest($0["sealed_sha256"], column: "sealed_sha256") }
    }

    /// The ids of the rows that say `staging`.
    func stagingIds() throws -> [String] {
        try db.query("SELECT id FROM blobs WHERE area = ?", [BlobArea.staging]).map { try Self.blobId($0["id"], column: "id") }
    }

    /// The blobs of node `nodeId`, with their areas.
    func blobs(ofNode nodeId: String) throws -> [(id: String, area: BlobArea)] {
        try db.query("SELECT id, area FROM blobs WHERE node_id = ?", [CompactColumns.key(nodeId)]).map {
            (try Self.blobId($0["id"], column: "id"), try Codes.area(try $0.decode(Int64.self, "area")))
        }
    }

    /// The newest row's rowid (0 for none): a mark for a pass over every blob written before it.
    func lastRowid() throws -> Int64 {
        try db.scalar(Int64.self, "SELECT COALESCE(MAX(rowid), 0) FROM blobs") ?? 0
    }

    /// The blobs up to rowid `mark`, oldest first, with their areas.
    func blobs(upTo mark: Int64) throws -> [(id: String, area: BlobArea)] {
        try db.query("SELECT id, area FROM blobs WHERE rowid <= ? ORDER BY rowid", [mark]).map {
            (try Self.blobId($0["id"], column: "id"), try Codes.area(try $0.decode(Int64.self, "area")))
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
            (try Self.blobId(r["id"], column: "id"), try CompactColumns.id(r["node_id"], column: "node_id"), try r.decode(Int64.self, "sealed_size"),
             try r.decode(Bool.self, "pinned"), try r.decode(Int64.self, "last_used"),
             try r.decode(Bool?.self, "head") ?? false)   // NULL: the blob's node is gone
        }
    }

    // MARK: - Writes

    /// Records blob `b` of node `nodeId` (nil: no node), created `now`.
    func insert(_ b: BlobRecord, nodeId: String?, now: Int64) throws {
        try db.run("""
            INSERT INTO blobs(id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256)
            VALUES (?1, ?2, ?3, ?4, ?5, \(Self.storedSHA256(node: "?2", sha: "?6")), ?7, ?8, ?9)
            """, [CompactColumns.key(b.id), CompactColumns.key(nodeId), b.area, Int64(b.size), Int64(b.sealedSize), CompactColumns.digest(b.sha256),
                  Int64(b.keyEpoch), now, CompactColumns.digest(b.sealedSHA256)])
        try CountersTable(db: db).countBlob(id: b.id)
    }

    /// Records `fresh` (a re-sealing of blob `oldId`) in `area` for the same node, created `now`.
    func insert(_ fresh: BlobRecord, area: BlobArea, replacing oldId: String, now: Int64) throws {
        try db.run("""
            INSERT INTO blobs(id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256)
              SELECT ?1, node_id, ?2, ?3, ?4, \(Self.storedSHA256(node: "blobs.node_id", sha: "?5")), ?6, ?7, ?8 FROM blobs WHERE id = ?9
            """, [CompactColumns.key(fresh.id), area, Int64(fresh.size), Int64(fresh.sealedSize), CompactColumns.digest(fresh.sha256),
                  Int64(fresh.keyEpoch), now, CompactColumns.digest(fresh.sealedSHA256), CompactColumns.key(oldId)])
        try CountersTable(db: db).countBlob(id: fresh.id)
    }

    /// Gives blob `id` to node `nodeId` (its bytes move between the counters if the node's
    /// pinning says so); a SHA-256 it took from its old node is its own from then on.
    func setNode(id: String, _ nodeId: String) throws {
        try recounting(id) {
            try db.run("UPDATE blobs SET sha256 = \(Self.sha256Column), node_id = ? WHERE id = ?", [CompactColumns.key(nodeId), CompactColumns.key(id)])
        }
    }

    /// Records that blob `id` is in the cache now (its bytes move from staged to cached or pinned).
    func markCached(id: String) throws {
        try recounting(id) { try db.run("UPDATE blobs SET area = ? WHERE id = ?", [BlobArea.cache, CompactColumns.key(id)]) }
    }

    /// Runs `change` to blob `id`'s area or node, its bytes uncounted before and counted after.
    private func recounting(_ id: String, _ change: () throws -> Void) throws {
        let counters = CountersTable(db: db)
        try counters.countBlob(id: id, sign: -1)
        try change()
        try counters.countBlob(id: id)
    }

    func setSealedSHA256(id: String, _ digest: String) throws {
        try db.run("UPDATE blobs SET sealed_sha256 = ? WHERE id = ?", [CompactColumns.digest(digest), CompactColumns.key(id)])
    }

    func delete(id: String) throws {
        try db.run("DELETE FROM blobs WHERE id = ?", [CompactColumns.key(id)])
    }

    /// Deletes blob `id` unless a revision keeps it.
    func deleteUnlessRevision(id: String) throws {
        try db.run("DELETE FROM blobs WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM revisions WHERE blob_id = ?1)", [CompactColumns.key(id)])
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
