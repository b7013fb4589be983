import Foundation
import VaultSQL

/// The SQL of the `remote_base` table: what this device last knew of each server node (the sync
/// planner's base, docs/sync.md), the head's content record. Since schema 8 (issue 21) its ids
/// are stored as keys (`CompactColumns.key`: 16 bytes) and the content record as a compact
/// record (`CompactColumns.record`), in a `WITHOUT ROWID` table keyed by the server id. Typed
/// reads and writes only; the pull's plan holds the transaction and the logic.
struct RemoteBaseTable {
    let db: SQLDatabase

    static let columns = "remote_id, parent_id, name, folder, version, record_seq, content_seq, content"

    /// The base of a row selecting `columns`; throws `SQLError.Kind.decoding` on a damaged row.
    static func base(_ r: SQLRow) throws -> RemoteBase {
        guard let remoteId = try CompactColumns.id(r["remote_id"], column: "remote_id") else {
            throw SQLError(kind: .decoding, code: .mismatch, message: "column \"remote_id\" holds NULL")
        }
        return RemoteBase(remoteId: remoteId, parentId: try CompactColumns.id(r["parent_id"], column: "parent_id"),
                          name: try r.decode(String.self, "name"), isFolder: try r.decode(Bool.self, "folder"),
                          version: try r.decode(Int64.self, "version"), recordSeq: try r.decode(Int64.self, "record_seq"),
                          contentSeq: try r.decode(Int64.self, "content_seq"),
                          content: try r.decode([UInt8]?.self, "content").map { try CompactColumns.content($0, column: "content") })
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
            try db.run("INSERT INTO remote_base_compact(\(columns)) VALUES (?,?,?,?,?,?,?,?)", bindings(b))
            crashPoint("migration-8-row")
        }
        crashPoint("migration-8-copied")
    }

    private static func bindings(_ b: RemoteBase) -> [any SQLBindable] {
        [CompactColumns.key(b.remoteId), CompactColumns.key(b.parentId), b.name, b.isFolder, b.version, b.recordSeq, b.contentSeq,
         b.content.map(CompactColumns.record)]
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
        try db.queryOne("SELECT \(Self.columns) FROM remote_base WHERE remote_id = ?", [CompactColumns.key(remoteId)]).map(Self.base)
    }

    /// The bases whose parent is `remoteId`.
    func children(of remoteId: String) throws -> [RemoteBase] {
        try db.query("SELECT \(Self.columns) FROM remote_base WHERE parent_id = ?", [CompactColumns.key(remoteId)]).map(Self.base)
    }

    /// The content-record sequence number of the base of `remoteId`, nil without one.
    func contentSeq(remoteId: String) throws -> Int64? {
        try db.scalar(Int64.self, "SELECT content_seq FROM remote_base WHERE remote_id = ?", [CompactColumns.key(remoteId)])
    }

    /// Inserts `b` (a plain INSERT: the caller deletes an older one first; see `applyPlan`).
    func insert(_ b: RemoteBase) throws {
        try db.run("INSERT INTO remote_base(\(Self.columns)) VALUES (?,?,?,?,?,?,?,?)", Self.bindings(b))
    }

    func delete(remoteId: String) throws {
        try db.run("DELETE FROM remote_base WHERE remote_id = ?", [CompactColumns.key(remoteId)])
    }
}
