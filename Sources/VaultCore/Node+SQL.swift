import VaultSQL

/// How a `Node` is stored in the `nodes` table.
extension Node {
    var bindings: [any SQLBindable] {
        [id, remoteId, parentId, name, type.rawValue, Int64(size), version, modifiedAt, mimeType,
         contentState.rawValue, localPath, pinned, lastAccessed, pendingOp?.rawValue, localVersion, sha256]
    }

    static let columns = "id, remote_id, parent_id, name, type, size, version, modified_at, mime_type, content_state, local_path, pinned, last_accessed, pending_op, local_version, sha256"

    init(row: SQLRow) {
        self.init(id: row[0].string ?? "", remoteId: row[1].string, parentId: row[2].string, name: row[3].string ?? "",
                  type: NodeType(rawValue: row[4].string ?? "") ?? .file, size: UInt64(max(0, row[5].int64 ?? 0)),
                  version: row[6].int64 ?? 0, modifiedAt: row[7].int64 ?? 0, mimeType: row[8].string,
                  contentState: ContentState(rawValue: row[9].string ?? "") ?? .notDownloaded, localPath: row[10].string,
                  pinned: (row[11].int64 ?? 0) != 0, lastAccessed: row[12].int64, pendingOp: row[13].string.map { PendingOp(rawValue: $0) ?? .sync },
                  localVersion: row[14].int64 ?? 0, sha256: row[15].string)
    }
}
