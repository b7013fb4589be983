import VaultSQL

/// How a `Node` is stored in the `nodes` table (schema 9, SECURITY.md "Metadata database"): ids
/// as keys (`CompactColumns.key`), the server id as an empty key when it is the node's own id
/// (a pulled node), a folder flag, the content state and pending op as small integers
/// (`NodesTable.Codes`), the SHA-256 as its 32 bytes.
extension Node {
    var bindings: [any SQLBindable] {
        [CompactColumns.key(id), NodesTable.remoteKey(remoteId, ofNode: id), CompactColumns.key(parentId), name, type == .folder,
         Int64(size), version, modifiedAt, mimeType, NodesTable.Codes.code(contentState), CompactColumns.key(localPath), pinned, lastAccessed,
         pendingOp.map(NodesTable.Codes.code), localVersion, CompactColumns.digest(sha256)]
    }

    static let columns = "id, remote_id, parent_id, name, folder, size, version, modified_at, mime_type, content_state, local_path, pinned, last_accessed, pending_op, local_version, sha256"

    /// The node of a row selecting `columns`; throws `SQLError.Kind.decoding` on a damaged row.
    init(row: SQLRow) throws {
        guard let id = try CompactColumns.id(row["id"], column: "id") else {
            throw SQLError(kind: .decoding, code: .mismatch, message: "column \"id\" holds NULL")
        }
        self.init(id: id, remoteId: try NodesTable.remoteId(row["remote_id"], ofNode: id),
                  parentId: try CompactColumns.id(row["parent_id"], column: "parent_id"), name: try row.decode(String.self, "name"),
                  type: try row.decode(Bool.self, "folder") ? .folder : .file, size: UInt64(max(0, try row.decode(Int64.self, "size"))),
                  version: try row.decode(Int64.self, "version"), modifiedAt: try row.decode(Int64.self, "modified_at"),
                  mimeType: try row.decode(String?.self, "mime_type"),
                  contentState: try NodesTable.Codes.contentState(try row.decode(Int64.self, "content_state")),
                  localPath: try CompactColumns.id(row["local_path"], column: "local_path"),
                  pinned: try row.decode(Bool.self, "pinned"), lastAccessed: try row.decode(Int64?.self, "last_accessed"),
                  pendingOp: try row.decode(Int64?.self, "pending_op").map(NodesTable.Codes.pendingOp),
                  localVersion: try row.decode(Int64.self, "local_version"),
                  sha256: try CompactColumns.digest(row["sha256"], column: "sha256"))
    }
}
