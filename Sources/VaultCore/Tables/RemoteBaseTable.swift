import Foundation
import VaultSQL

/// The SQL of the `remote_base` table: what this device last knew of each server node (the sync
/// planner's base, docs/sync.md), the head's content record. Since schema 8 (issue 21) its ids
/// are stored as keys (`CompactColumns.key`: 16 bytes) in a `WITHOUT ROWID` table keyed by the
/// server id. Since schema 10 a base does not store again what its node holds: when the node of
/// the same id (a pulled node, `nodes.remote_id = X''`) has the base's parent, name and, for a
/// file, its mime, mtime, size and SHA-256, the base holds `from_node = 1` and NULL there, and
/// reads them from the node; triggers on `nodes` copy them into the base before the node's
/// first change of any of them, or its removal (SECURITY.md "Metadata database"). Typed reads and
/// writes only; the pull's plan holds the transaction and the logic.
struct RemoteBaseTable {
    let db: SQLDatabase

    /// What a read selects: the base's columns, and those of its node for a base `from_node`.
    static let selection = """
        b.remote_id, b.folder, b.version, b.record_seq, b.content_seq, b.content, b.from_node,
        coalesce(b.parent_id, n.parent_id) AS parent_id, coalesce(b.name, n.name) AS name,
        CASE WHEN b.from_node = 1 THEN n.mime_type ELSE b.mime END AS mime,
        CASE WHEN b.from_node = 1 THEN n.modified_at ELSE b.mtime END AS mtime,
        CASE WHEN b.from_node = 1 THEN n.size ELSE b.size END AS size,
        CASE WHEN b.from_node = 1 THEN n.sha256 ELSE b.sha256 END AS sha256,
        n.id AS node_id
        """

    /// The join that finds a base's node (only for a base `from_node`).
    static let nodeJoin = "LEFT JOIN nodes n ON b.from_node = 1 AND n.id = b.remote_id AND n.remote_id = X''"

    /// The base of a row selecting `selection`; throws `SQLError.Kind.decoding` on a damaged row
    /// (also a base `from_node` whose node is not there: the triggers never let that happen).
    static func base(_ r: SQLRow) throws -> RemoteBase {
        guard let remoteId = try CompactColumns.id(r["remote_id"], column: "remote_id") else {
            throw SQLError(kind: .decoding, code: .mismatch, message: "column \"remote_id\" holds NULL")
        }
        if try r.decode(Bool.self, "from_node"), r["node_id"] == .null {
            throw SQLError(kind: .decoding, code: .mismatch, message: "the base of a node takes its fields from a node that is not there")
        }
        let content = try r.decode([UInt8]?.self, "content").map { bytes -> ContentRecord in
            guard let mime = try r.decode(String?.self, "mime"), let mtime = try r.decode(Int64?.self, "mtime"),
                  let size = try r.decode(Int64?.self, "size"), let sha = try CompactColumns.digest(r["sha256"], column: "sha256") else {
                throw SQLError(kind: .decoding, code: .mismatch, message: "a base's content record lacks its mime, mtime, size or SHA-256")
            }
            return try CompactColumns.content(blobRecord: bytes, mime: mime, mtime: mtime, size: size, sha256: sha, column: "content")
        }
        return RemoteBase(remoteId: remoteId, parentId: try CompactColumns.id(r["parent_id"], column: "parent_id"),
                          name: try r.decode(String.self, "name"), isFolder: try r.decode(Bool.self, "folder"),
                          version: try r.decode(Int64.self, "version"), recordSeq: try r.decode(Int64.self, "record_seq"),
                          contentSeq: try r.decode(Int64.self, "content_seq"), content: content)
    }

    // MARK: - Schema (migration 8; frozen: a change is a new migration)

    /// The compact table, created beside the old one as `remote_base_compact`.
    static let compactSchemaSQL = """
        CREATE TABLE remote_base_compact(
          remote_id BLOB PRIMARY KEY NOT NULL,
          parent_id BLOB,
          name TEXT NOT NULL,
          folder INTEGER NOT NULL,
          version INTEGER NOT NULL,
          record_seq INTEGER NOT NULL DEFAULT 0,
          content_seq INTEGER NOT NULL DEFAULT 0,
          content BLOB
        ) WITHOUT ROWID;
        """

    /// The old table swapped for the compact one (the old `remote_base_parent` index goes with it).
    static let swapSQL = """
        DROP TABLE remote_base;
        ALTER TABLE remote_base_compact RENAME TO remote_base;
        CREATE INDEX remote_base_parent ON remote_base(parent_id);
        """

    /// Migration 8's copy: every row of the schema-7 table (hex ids as TEXT, the content record
    /// as JSON) into `remote_base_compact`, streamed; `crashPoint` is called after each row
    /// and once the copy is done (the crash tests kill the process there).
    static func copySchema7Rows(_ db: SQLDatabase, crashPoint: (String) -> Void) throws {
        let st = try db.prepare("SELECT remote_id, parent_id, name, type, version, record_seq, content_seq, content FROM remote_base")
        while try st.step() {
            let r = st.row()
            let json = try r.decode(String?.self, "content")
            let content = try json.map { j -> ContentRecord in
                guard let c = ContentRecord.decode(json: j) else {
                    throw SQLError(kind: .decoding, code: .mismatch, message: "column \"content\" of remote_base holds no content record")
                }
                return c
            }
            let b = RemoteBase(remoteId: try r.decode(String.self, "remote_id"), parentId: try r.decode(String?.self, "parent_id"),
                               name: try r.decode(String.self, "name"), isFolder: try r.decode(NodeType.self, "type") == .folder,
                               version: try r.decode(Int64.self, "version"), recordSeq: try r.decode(Int64.self, "record_seq"),
                               contentSeq: try r.decode(Int64.self, "content_seq"), content: content)
            try db.run("INSERT INTO remote_base_compact(\(schema8Columns)) VALUES (?,?,?,?,?,?,?,?)", schema8Bindings(b))
            crashPoint("migration-8-row")
        }
        crashPoint("migration-8-copied")
    }

    /// Schema 8's (and 9's) columns, and a base's values for them (the content record whole).
    static let schema8Columns = "remote_id, parent_id, name, folder, version, record_seq, content_seq, content"

    static func schema8Bindings(_ b: RemoteBase) -> [any SQLBindable] {
        [CompactColumns.key(b.remoteId), CompactColumns.key(b.parentId), b.name, b.isFolder, b.version, b.recordSeq, b.contentSeq,
         b.content.map(CompactColumns.record)]
    }

    // MARK: - Schema (migration 10; frozen: a change is a new migration)

    /// Schema 10's table, created beside the old one as `remote_base_v10`.
    static let schema10SQL = """
        CREATE TABLE remote_base_v10(
          remote_id BLOB PRIMARY KEY NOT NULL,
          folder INTEGER NOT NULL,
          version INTEGER NOT NULL,
          record_seq INTEGER NOT NULL DEFAULT 0,
          content_seq INTEGER NOT NULL DEFAULT 0,
          content BLOB,
          from_node INTEGER NOT NULL DEFAULT 0,
          parent_id BLOB,
          name TEXT,
          mime TEXT,
          mtime INTEGER,
          size INTEGER,
          sha256 BLOB,
          CHECK (from_node = 1 OR name IS NOT NULL)
        ) WITHOUT ROWID;
        """

    /// What the triggers copy into a base `from_node` before its node changes or goes.
    private static let keepBase = """
        UPDATE remote_base SET from_node = 0, parent_id = OLD.parent_id, name = OLD.name,
          mime = CASE WHEN content IS NULL THEN NULL ELSE OLD.mime_type END,
          mtime = CASE WHEN content IS NULL THEN NULL ELSE OLD.modified_at END,
          size = CASE WHEN content IS NULL THEN NULL ELSE OLD.size END,
          sha256 = CASE WHEN content IS NULL THEN NULL ELSE OLD.sha256 END
        WHERE remote_id = OLD.id AND from_node = 1;
        """

    /// The old table swapped for schema 10's; the parent index only of the bases that hold their
    /// parent (the others are found through `nodes_folder_name`); the triggers that keep a base
    /// whole when its node changes a field the base takes from it, or is removed.
    static let swap10SQL = """
        DROP TABLE remote_base;
        ALTER TABLE remote_base_v10 RENAME TO remote_base;
        CREATE INDEX remote_base_parent ON remote_base(parent_id) WHERE from_node = 0;
        CREATE TRIGGER nodes_keep_base_update BEFORE UPDATE ON nodes
        WHEN OLD.remote_id = X'' AND (NEW.id IS NOT OLD.id OR NEW.remote_id IS NOT OLD.remote_id
          OR NEW.parent_id IS NOT OLD.parent_id OR NEW.name IS NOT OLD.name OR NEW.mime_type IS NOT OLD.mime_type
          OR NEW.modified_at IS NOT OLD.modified_at OR NEW.size IS NOT OLD.size OR NEW.sha256 IS NOT OLD.sha256) BEGIN
          \(keepBase)
        END;
        CREATE TRIGGER nodes_keep_base_delete BEFORE DELETE ON nodes WHEN OLD.remote_id = X'' BEGIN
          \(keepBase)
        END;
        """

    /// Migration 10's copy: every row of schema 9's table into `remote_base_v10`, streamed, each
    /// taking from its node what the node holds alike; `crashPoint` is called after each row and
    /// once the copy is done (the crash tests kill the process there).
    static func copySchema9Rows(_ db: SQLDatabase, crashPoint: (String) -> Void) throws {
        let st = try db.prepare("SELECT \(schema8Columns) FROM remote_base")
        while try st.step() {
            let r = st.row()
            guard let remoteId = try CompactColumns.id(r["remote_id"], column: "remote_id") else {
                throw SQLError(kind: .decoding, code: .mismatch, message: "column \"remote_id\" holds NULL")
            }
            let b = RemoteBase(remoteId: remoteId, parentId: try CompactColumns.id(r["parent_id"], column: "parent_id"),
                               name: try r.decode(String.self, "name"), isFolder: try r.decode(Bool.self, "folder"),
                               version: try r.decode(Int64.self, "version"), recordSeq: try r.decode(Int64.self, "record_seq"),
                               contentSeq: try r.decode(Int64.self, "content_seq"),
                               content: try r.decode([UInt8]?.self, "content").map { try CompactColumns.content($0, column: "content") })
            try insert(b, into: "remote_base_v10", db)
            crashPoint("migration-10-row")
        }
        crashPoint("migration-10-copied")
    }

    /// Inserts `b` into `table` (schema 10's shape): `from_node = 1` and NULL fields when the
    /// node of the same id, a pulled one, holds them alike (compared as stored, so a read gives
    /// back exactly `b`), else every field.
    private static func insert(_ b: RemoteBase, into table: String, _ db: SQLDatabase) throws {
        let c = b.content
        try db.run("""
            INSERT INTO \(table)(remote_id, folder, version, record_seq, content_seq, content, from_node, parent_id, name, mime, mtime, size, sha256)
            SELECT ?1, ?2, ?3, ?4, ?5, ?6, n.id IS NOT NULL,
              CASE WHEN n.id IS NULL THEN ?7 END, CASE WHEN n.id IS NULL THEN ?8 END, CASE WHEN n.id IS NULL THEN ?9 END,
              CASE WHEN n.id IS NULL THEN ?10 END, CASE WHEN n.id IS NULL THEN ?11 END, CASE WHEN n.id IS NULL THEN ?12 END
            FROM (SELECT 1) LEFT JOIN nodes n ON n.id = ?1 AND n.remote_id = X'' AND n.parent_id IS ?7 AND n.name = ?8
              AND (?6 IS NULL OR (n.mime_type IS ?9 AND n.modified_at IS ?10 AND n.size IS ?11 AND n.sha256 IS ?12))
            """, [CompactColumns.key(b.remoteId), b.isFolder, b.version, b.recordSeq, b.contentSeq, c.map(CompactColumns.blobRecord),
                  CompactColumns.key(b.parentId), b.name, c?.mime, c?.mtime, c?.size, CompactColumns.digest(c?.sha256)])
    }

    // MARK: - Rows

    /// The JSON a base's content record was stored as in schema 7 (read by migration 8).
    static func contentJSON(_ c: ContentRecord) throws -> String {
        try ContentRecord.storedJSON(c) ?? String(decoding: try recordEncoder.encode(c), as: UTF8.self)
    }

    private static let recordEncoder: JSONEncoder = {
        let e = JSONEncoder(); e.outputFormatting = [.sortedKeys]; return e
    }()

    func base(remoteId: String) throws -> RemoteBase? {
        try db.queryOne("SELECT \(Self.selection) FROM remote_base b \(Self.nodeJoin) WHERE b.remote_id = ?",
                        [CompactColumns.key(remoteId)]).map(Self.base)
    }

    /// The bases whose parent is `remoteId`: those that hold it, and those whose node is in the
    /// folder of that id (a base `from_node` has its node's parent).
    func children(of remoteId: String) throws -> [RemoteBase] {
        try db.query("""
            SELECT \(Self.selection) FROM remote_base b \(Self.nodeJoin) WHERE b.parent_id = ?1 AND b.from_node = 0
            UNION ALL
            SELECT \(Self.selection) FROM nodes n JOIN remote_base b ON b.remote_id = n.id AND b.from_node = 1
              WHERE n.parent_id = ?1 AND n.remote_id = X''
            """, [CompactColumns.key(remoteId)]).map(Self.base)
    }

    /// The content-record sequence number of the base of `remoteId`, nil without one.
    func contentSeq(remoteId: String) throws -> Int64? {
        try db.scalar(Int64.self, "SELECT content_seq FROM remote_base WHERE remote_id = ?", [CompactColumns.key(remoteId)])
    }

    /// Inserts `b` (a plain INSERT: the caller deletes an older one first; see `applyPlan`).
    func insert(_ b: RemoteBase) throws {
        try Self.insert(b, into: "remote_base", db)
    }

    func delete(remoteId: String) throws {
        try db.run("DELETE FROM remote_base WHERE remote_id = ?", [CompactColumns.key(remoteId)])
    }
}
