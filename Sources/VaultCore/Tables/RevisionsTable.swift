import Foundation
import VaultSQL

/// The SQL of the `revisions` table: the server's revisions of each file as last listed (their
/// content records as JSON), and older versions kept here only (`remote_revision_id` NULL).
/// Typed reads and writes only; the caller (`Vault+Revisions`, the tree, the pull's plan) holds
/// the transaction and the logic.
struct RevisionsTable {
    let db: SQLDatabase

    /// One stored revision: a server one (`remoteId` set) or one kept here only.
    struct Row {
        var id: String
        var remoteId: String?
        var modifiedAt: Int64
        var size: Int64
        var sha256: String?
        var device: String?
        var isHead: Bool
        var contentJSON: String?
        var blobId: String?
    }

    static let columns = "id, remote_revision_id, modified_at, size, sha256, device, is_head, content, blob_id"

    static func row(_ r: SQLRow) throws -> Row {
        Row(id: try r.decode(String.self, "id"), remoteId: try r.decode(String?.self, "remote_revision_id"),
            modifiedAt: try r.decode(Int64.self, "modified_at"), size: try r.decode(Int64.self, "size"),
            sha256: try r.decode(String?.self, "sha256"), device: try r.decode(String?.self, "device"),
            isHead: try r.decode(Bool.self, "is_head"), contentJSON: try r.decode(String?.self, "content"),
            blobId: try CompactColumns.id(r["blob_id"], column: "blob_id"))
    }

    // MARK: - Reads

    /// The server revisions of `nodeId`, newest first.
    func serverRevisions(nodeId: String) throws -> [Row] {
        try db.query("""
            SELECT \(Self.columns) FROM revisions
            WHERE node_id = ? AND remote_revision_id IS NOT NULL ORDER BY modified_at DESC, rowid
            """, [CompactColumns.key(nodeId)]).map(Self.row)
    }

    /// The versions of `nodeId` kept here only, newest first.
    func localRevisions(nodeId: String) throws -> [Row] {
        try db.query("SELECT \(Self.columns) FROM revisions WHERE node_id = ? AND remote_revision_id IS NULL ORDER BY modified_at DESC",
                     [CompactColumns.key(nodeId)]).map(Self.row)
    }

    /// The revision of `nodeId` called `revision`: the server's of that id, or one kept here with that local id.
    func revision(nodeId: String, _ revision: String) throws -> Row? {
        try db.queryOne("""
            SELECT \(Self.columns) FROM revisions WHERE node_id = ? AND (remote_revision_id = ? OR (remote_revision_id IS NULL AND id = ?))
            """, [CompactColumns.key(nodeId), revision, revision]).map(Self.row)
    }

    /// Every blob a revision keeps.
    func blobIds() throws -> [String] {
        try db.query("SELECT blob_id FROM revisions WHERE blob_id IS NOT NULL").map { try BlobsTable.blobId($0["blob_id"], column: "blob_id") }
    }

    // MARK: - Writes

    /// Records a server revision of `nodeId` (its content record as `contentJSON`), its content here in `blobId` if any.
    func insertServer(id: String, nodeId: String, _ r: RevisionInfo, contentJSON: String?, blobId: String?) throws {
        try db.run("""
            INSERT INTO revisions(id, node_id, remote_revision_id, size, sha256, modified_at, blob_id, device, content, is_head)
            VALUES (?,?,?,?,?,?,?,?,?,?)
            """, [id, CompactColumns.key(nodeId), r.id, r.size, r.sha256, r.time, CompactColumns.key(blobId), r.device, contentJSON, r.isHead])
    }

    /// Records an older version of `nodeId` kept here in `blobId` (device `local`).
    func insertLocal(id: String, nodeId: String, size: Int64, sha256: String?, modifiedAt: Int64, blobId: String) throws {
        try db.run("INSERT INTO revisions(id, node_id, remote_revision_id, size, sha256, modified_at, blob_id, device) VALUES (?,?,?,?,?,?,?,?)",
                   [id, CompactColumns.key(nodeId), nil as String?, size, sha256, modifiedAt, CompactColumns.key(blobId), "local"])
    }

    /// Records that server revision `revision` of `nodeId` has its content here in `blobId`.
    func setBlob(nodeId: String, revision: String, _ blobId: String) throws {
        try db.run("UPDATE revisions SET blob_id = ? WHERE node_id = ? AND remote_revision_id = ?", [CompactColumns.key(blobId), CompactColumns.key(nodeId), revision])
    }

    /// Points every revision kept in blob `old` at `new` (a re-sealing).
    func rebindBlob(from old: String, to new: String) throws {
        try db.run("UPDATE revisions SET blob_id = ? WHERE blob_id = ?", [CompactColumns.key(new), CompactColumns.key(old)])
    }

    /// Deletes the server revisions of `nodeId`.
    func deleteServer(nodeId: String) throws {
        try db.run("DELETE FROM revisions WHERE node_id = ? AND remote_revision_id IS NOT NULL", [CompactColumns.key(nodeId)])
    }

    /// Deletes every revision of `nodeId`.
    func delete(nodeId: String) throws {
        try db.run("DELETE FROM revisions WHERE node_id = ?", [CompactColumns.key(nodeId)])
    }
}

extension Vault {
    /// The `revisions` table of this vault's database.
    var revisionsTable: RevisionsTable { RevisionsTable(db: db) }
}
