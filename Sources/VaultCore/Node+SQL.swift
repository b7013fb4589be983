import VaultSQL

/// How a `Node` is stored in the `nodes` table.
extension Node {
    var bindings: [any SQLBindable] {
        [id, remoteId, parentId, name, type.rawValue, Int64(size), version, modifiedAt, mimeType,
         contentState.rawValue, localPath, pinned, lastAccessed, pendingOp?.rawValue, localVersion, sha256]
    }

    static let columns = "id, remote_id, parent_id, name, type, size, version, modified_at, mime_type, content_state, local_path, pinned, last_accessed, pending_op, local_version, sha256"

    /// The node of a row selecting `columns`; throws `SQLError.Kind.decoding` on a damaged row.
    init(row: SQLRow) throws {
        self.init(id: try row.decode(String.self, "id"), remoteId: try row.decode(String?.self, "remote_id"),
                  parentId: try row.decode(String?.self, "parent_id"), name: try row.decode(String.self, "name"),
                  type: try row.decode(NodeType.self, "type"), size: UInt64(max(0, try row.decode(Int64.self, "size"))),
                  version: try row.decode(Int64.self, "version"), modifiedAt: try row.decode(Int64.self, "modified_at"),
                  mimeType: try row.decode(String?.self, "mime_type"),
                  contentState: try row.decode(ContentState.self, "content_state"), localPath: try row.decode(String?.self, "local_path"),
                  pinned: try row.decode(Bool.self, "pinned"), lastAccessed: try row.decode(Int64?.self, "last_accessed"),
                  pendingOp: try row.decode(String?.self, "pending_op").map { PendingOp(rawValue: $0) ?? .sync }, localVersion: try row.decode(Int64.self, "local_version"),
                  sha256: try row.decode(String?.self, "sha256"))
    }
}
