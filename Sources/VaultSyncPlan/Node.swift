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

/// What a node is waiting to have sent to the server (`Node.pendingOp`; the `nodes.pending_op`
/// column holds the raw value; one this version does not know reads as `.sync`). Set when the
/// change is made here, cleared once the outbox holds nothing more for the node.
public enum PendingOp: String, Sendable, Codable {
    /// Created here (a folder, or a file before its content): the server has no such node yet.
    case create
    /// New content to upload.
    case upload
    /// Renamed or moved here (or to be sealed afresh where it is).
    case move
    /// Outbox entries remain after one completed, of whatever kind.
    case sync
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
    public var pendingOp: PendingOp?
    public var localVersion: Int64
    public var sha256: String?

    public var isFolder: Bool { type == .folder }

    public init(id: String, remoteId: String?, parentId: String?, name: String, type: NodeType, size: UInt64, version: Int64,
                modifiedAt: Int64, mimeType: String?, contentState: ContentState, localPath: String?, pinned: Bool,
                lastAccessed: Int64?, pendingOp: PendingOp?, localVersion: Int64, sha256: String?) {
        self.id = id; self.remoteId = remoteId; self.parentId = parentId; self.name = name; self.type = type; self.size = size
        self.version = version; self.modifiedAt = modifiedAt; self.mimeType = mimeType; self.contentState = contentState
        self.localPath = localPath; self.pinned = pinned; self.lastAccessed = lastAccessed; self.pendingOp = pendingOp
        self.localVersion = localVersion; self.sha256 = sha256
    }
}
