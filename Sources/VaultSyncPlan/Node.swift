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

    public init(id: String, remoteId: String?, parentId: String?, name: String, type: NodeType, size: UInt64, version: Int64,
                modifiedAt: Int64, mimeType: String?, contentState: ContentState, localPath: String?, pinned: Bool,
                lastAccessed: Int64?, pendingOp: String?, localVersion: Int64, sha256: String?) {
        self.id = id; self.remoteId = remoteId; self.parentId = parentId; self.name = name; self.type = type; self.size = size
        self.version = version; self.modifiedAt = modifiedAt; self.mimeType = mimeType; self.contentState = contentState
        self.localPath = localPath; self.pinned = pinned; self.lastAccessed = lastAccessed; self.pendingOp = pendingOp
        self.localVersion = localVersion; self.sha256 = sha256
    }
}
