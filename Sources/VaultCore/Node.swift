import VaultSQL

/// Whether a node's content is on this device (BRIEF §3). Changed in the same transaction as the
/// file operation; `vault doctor` reconciles it with the disk.
public enum ContentState: String, Sendable, Codable {
    case notDownloaded = "NOT_DOWNLOADED"
    case downloading = "DOWNLOADING"
    case local = "LOCAL"
    case stale = "STALE"
}

public enum NodeType: String, Sendable, Codable {
    case file, folder
}

/// One row of the file tree.
public struct Node: Sendable, Codable, Equatable {
    public var id: String
    public var remoteId: String?
    public var parentId: String?
    public var name: String
    public var type: NodeType
    public var size: UInt64
    public var version: Int64
    public var modifiedAt: Int64
    public var mimeType: String?
    public var contentState: ContentState
    /// The id of the sealed blob holding this node's content, when local.
    public var localPath: String?
    public var pinned: Bool
    public var lastAccessed: Int64?
    public var pendingOp: String?
    public var localVersion: Int64
    public var sha256: String?

    public var isFolder: Bool { type == .folder }

    var bindings: [any SQLBindable] {
        [id, remoteId, parentId, name, type.rawValue, Int64(size), version, modifiedAt, mimeType,
         contentState.rawValue, localPath, pinned, lastAccessed, pendingOp, localVersion, sha256]
    }
}

extension Node {
    static let columns = "id, remote_id, parent_id, name, type, size, version, modified_at, mime_type, content_state, local_path, pinned, last_accessed, pending_op, local_version, sha256"

    init(row: SQLRow) {
        id = row[0].string ?? ""
        remoteId = row[1].string
        parentId = row[2].string
        name = row[3].string ?? ""
        type = NodeType(rawValue: row[4].string ?? "") ?? .file
        size = UInt64(max(0, row[5].int64 ?? 0))
        version = row[6].int64 ?? 0
        modifiedAt = row[7].int64 ?? 0
        mimeType = row[8].string
        contentState = ContentState(rawValue: row[9].string ?? "") ?? .notDownloaded
        localPath = row[10].string
        pinned = (row[11].int64 ?? 0) != 0
        lastAccessed = row[12].int64
        pendingOp = row[13].string
        localVersion = row[14].int64 ?? 0
        sha256 = row[15].string
    }
}
