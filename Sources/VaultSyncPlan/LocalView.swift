/// What this device last knew of a node on the server: its placement, version and sequence
/// numbers, and (files) the head's content record. Written by every pull for every node it
/// applies, and by the push for what it changed. The planner compares a remote node with it to
/// tell what changed on the server since, and to catch a server that rolls a node back.
public struct RemoteBase: Sendable, Equatable, Codable {
    public var remoteId: String
    /// The remote id of the folder the node is in (`root` for the top).
    public var parentId: String?
    public var name: String
    public var isFolder: Bool
    public var version: Int64
    /// The highest node-record sequence number seen or written.
    public var recordSeq: Int64
    /// The highest content-record sequence number seen or written.
    public var contentSeq: Int64
    /// The head's content record (files), as last seen.
    public var content: ContentRecord?

    public init(remoteId: String, parentId: String?, name: String, isFolder: Bool, version: Int64, recordSeq: Int64,
                contentSeq: Int64, content: ContentRecord?) {
        self.remoteId = remoteId; self.parentId = parentId; self.name = name; self.isFolder = isFolder; self.version = version
        self.recordSeq = recordSeq; self.contentSeq = contentSeq; self.content = content
    }

    /// The base a remote node gives once applied.
    public init(_ r: RemoteNode) {
        self.init(remoteId: r.id, parentId: r.parentId, name: r.name, isFolder: r.isFolder, version: r.version,
                  recordSeq: r.record?.seq ?? 0, contentSeq: r.content?.seq ?? 0, content: r.content)
    }
}

/// A node removed locally whose outbox entries still replay: its server id, type and the version
/// last recorded (the `outbox_tombstones` table).
public struct Tombstone: Sendable, Equatable, Codable {
    public var nodeId: String
    public var remoteId: String?
    public var isFolder: Bool
    public var version: Int64

    public init(nodeId: String, remoteId: String?, isFolder: Bool, version: Int64) {
        self.nodeId = nodeId; self.remoteId = remoteId; self.isFolder = isFolder; self.version = version
    }
}

/// Read-only lookups into a device's local state, so the planner never loads a whole vault:
/// VaultCore answers them from the metadata database, the simulation from memory.
public protocol LocalView {
    func node(id: String) throws -> Node?
    func node(remoteId: String) throws -> Node?
    /// The node named `name` in folder `parentId` (names compare exactly; they are NFC).
    func child(of parentId: String, named name: String) throws -> Node?
    func children(of parentId: String) throws -> [Node]
    func base(remoteId: String) throws -> RemoteBase?
    /// The bases whose parent is `remoteId`.
    func baseChildren(of remoteId: String) throws -> [RemoteBase]
    /// Nodes in the tree, the root included.
    func nodeCount() throws -> Int
}

/// A view with nothing in it but the root (a new device, or the simulation's starting point).
public struct EmptyLocalView: LocalView {
    public init() {}
    public func node(id: String) throws -> Node? { id == Node.rootId ? Node.root : nil }
    public func node(remoteId: String) throws -> Node? { remoteId == Node.rootId ? Node.root : nil }
    public func child(of parentId: String, named name: String) throws -> Node? { nil }
    public func children(of parentId: String) throws -> [Node] { [] }
    public func base(remoteId: String) throws -> RemoteBase? { nil }
    public func baseChildren(of remoteId: String) throws -> [RemoteBase] { [] }
    public func nodeCount() throws -> Int { 1 }
}

extension Node {
    /// The root folder's id, locally and on the server.
    public static let rootId = "root"

    /// The root folder as a new vault holds it.
    public static let root = Node(id: rootId, remoteId: nil, parentId: nil, name: "", type: .folder, size: 0, version: 0,
                                  modifiedAt: 0, mimeType: nil, contentState: .local, localPath: nil, pinned: false,
                                  lastAccessed: nil, pendingOp: nil, localVersion: 0, sha256: nil)
}
