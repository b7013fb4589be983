/// A node as the server stores it: the strings and numbers of the API's file resource, still
/// sealed (SECURITY.md "End to end"). The sync layer fills it from the wire; `RemoteCodec` opens it.
public struct SealedRemoteEntry: Sendable, Equatable {
    public var id: String
    public var parentId: String?
    /// The name token.
    public var name: String
    public var isFolder: Bool
    /// Bytes the server stores for the head (sealed blob ‖ padding).
    public var size: Int64
    public var version: Int64
    public var trashed: Bool
    public var meta: String?
    public var contentMeta: String?

    public init(id: String, parentId: String?, name: String, isFolder: Bool, size: Int64, version: Int64,
                trashed: Bool, meta: String?, contentMeta: String?) {
        self.id = id; self.parentId = parentId; self.name = name; self.isFolder = isFolder; self.size = size
        self.version = version; self.trashed = trashed; self.meta = meta; self.contentMeta = contentMeta
    }
}

/// The node record (`meta`): what a name token cannot say, bound to the node's id.
public struct NodeRecord: Codable, Sendable, Equatable {
    public var device: String
    /// The writing device's chosen name (`DeviceName`), sealed with the record; absent from the
    /// records of devices that never said one.
    public var deviceName: String?
    public var mtime: Int64
    public var name: String
    public var parent: String
    public var seq: Int64
    public var type: String
    public var v: Int

    public init(device: String, deviceName: String? = nil, mtime: Int64, name: String, parent: String, seq: Int64, isFolder: Bool) {
        self.device = device; self.deviceName = deviceName; self.mtime = mtime; self.name = name; self.parent = parent; self.seq = seq
        self.type = isFolder ? "folder" : "file"; self.v = 1
    }

    public var isFolder: Bool { type == "folder" }
}

/// The content record (`contentMeta`) of one revision, bound to the node's id.
public struct ContentRecord: Codable, Sendable, Equatable {
    /// The sealed blob's id (32 hex).
    public var blob: String
    public var device: String
    /// The writing device's chosen name (`DeviceName`), sealed with the record; absent from the
    /// records of devices that never said one.
    public var deviceName: String?
    public var mime: String
    public var mtime: Int64
    /// Bytes of the sealed blob; the server's copy may be longer (padding).
    public var sealedSize: Int64
    public var seq: Int64
    /// SHA-256 (hex) of the plaintext.
    public var sha256: String
    /// Plaintext bytes.
    public var size: Int64
    public var v: Int

    public init(blob: String, device: String, deviceName: String? = nil, mime: String, mtime: Int64, sealedSize: Int64, seq: Int64,
                sha256: String, size: Int64) {
        self.blob = blob; self.device = device; self.deviceName = deviceName; self.mime = mime; self.mtime = mtime; self.sealedSize = sealedSize
        self.seq = seq; self.sha256 = sha256; self.size = size; self.v = 1
    }
}

/// A remote node once opened and checked: what the sync planner works with. It never sees a token.
public struct RemoteNode: Sendable, Equatable {
    public var id: String
    public var parentId: String?
    public var name: String
    public var isFolder: Bool
    /// The server's version, for `If-Match`.
    public var version: Int64
    public var trashed: Bool
    public var record: NodeRecord?
    /// Files only.
    public var content: ContentRecord?
    /// Bytes the server stores for the head.
    public var storedSize: Int64

    public init(id: String, parentId: String?, name: String, isFolder: Bool, version: Int64, trashed: Bool,
                record: NodeRecord?, content: ContentRecord?, storedSize: Int64) {
        self.id = id; self.parentId = parentId; self.name = name; self.isFolder = isFolder; self.version = version
        self.trashed = trashed; self.record = record; self.content = content; self.storedSize = storedSize
    }
}

/// A node the server sent that this vault cannot authenticate: it has no node record, or one that
/// does not open under the vault's keys (no device of the vault wrote it: a script, a bug, a
/// compromised server). A pull refuses it, applies the rest, and keeps it in the quarantine that
/// `vault status` lists (SECURITY.md "End to end", the pull's reader rules).
public struct RefusedNode: Sendable, Equatable, Codable {
    /// The server's id of the node (checked: 32 lowercase hex).
    public var id: String
    /// Why it was refused.
    public var reason: String
    public init(id: String, reason: String) { self.id = id; self.reason = reason }
}

/// A node of the server as the codec opened it: the node, or its refusal.
public enum OpenedEntry: Sendable {
    case node(RemoteNode)
    case refused(RefusedNode)
}
