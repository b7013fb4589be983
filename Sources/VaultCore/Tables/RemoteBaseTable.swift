import Foundation
import VaultSQL

/// The SQL of the `remote_base` table: what this device last knew of each server node (the sync
/// planner's base, docs/sync.md), the head's content record as JSON. Typed reads and writes
/// only; the pull's plan holds the transaction and the logic.
struct RemoteBaseTable {
    let db: SQLDatabase

    static let columns = "remote_id, parent_id, name, type, version, record_seq, content_seq, content"

    /// The base of a row selecting `columns`; throws `SQLError.Kind.decoding` on a damaged row.
    static func base(_ r: SQLRow) throws -> RemoteBase {
        RemoteBase(remoteId: try r.decode(String.self, "remote_id"), parentId: try r.decode(String?.self, "parent_id"),
                   name: try r.decode(String.self, "name"), isFolder: try r.decode(NodeType.self, "type") == .folder,
                   version: try r.decode(Int64.self, "version"), recordSeq: try r.decode(Int64.self, "record_seq"),
                   contentSeq: try r.decode(Int64.self, "content_seq"),
                   content: try r.decode(String?.self, "content").flatMap(ContentRecord.decode(json:)))
    }

    /// The JSON a base's content record is stored as.
    static func contentJSON(_ c: ContentRecord) throws -> String {
        try ContentRecord.storedJSON(c) ?? String(decoding: try recordEncoder.encode(c), as: UTF8.self)
    }

    private static let recordEncoder: JSONEncoder = {
        let e = JSONEncoder(); e.outputFormatting = [.sortedKeys]; return e
    }()

    func base(remoteId: String) throws -> RemoteBase? {
        try db.queryOne("SELECT \(Self.columns) FROM remote_base WHERE remote_id = ?", [remoteId]).map(Self.base)
    }

    /// The bases whose parent is `remoteId`.
    func children(of remoteId: String) throws -> [RemoteBase] {
        try db.query("SELECT \(Self.columns) FROM remote_base WHERE parent_id = ?", [remoteId]).map(Self.base)
    }

    /// The content-record sequence number of the base of `remoteId`, nil without one.
    func contentSeq(remoteId: String) throws -> Int64? {
        try db.scalar(Int64.self, "SELECT content_seq FROM remote_base WHERE remote_id = ?", [remoteId])
    }

    /// Inserts `b` (a plain INSERT: the caller deletes an older one first; see `applyPlan`).
    func insert(_ b: RemoteBase) throws {
        try db.run("INSERT INTO remote_base(\(Self.columns)) VALUES (?,?,?,?,?,?,?,?)",
                   [b.remoteId, b.parentId, b.name, b.isFolder ? "folder" : "file", b.version, b.recordSeq, b.contentSeq,
                    try b.content.map(Self.contentJSON)])
    }

    func delete(remoteId: String) throws {
        try db.run("DELETE FROM remote_base WHERE remote_id = ?", [remoteId])
    }
}
