import VaultSyncPlan

/// The folders (and their bases) a listing has looked up, kept between its pages. Almost every
/// node of a listing asks for its folder, and each of those lookups read (and decrypted) pages of
/// a database far larger than its cache. An entry is dropped whenever the listing writes that node
/// or base, so what it answers is what the database holds. Only folders are kept (a listing asks
/// for files once), and at most `limit` of each.
struct ListingFolders {
    private var nodes: [String: Node] = [:]
    private var idOfRemote: [String: String] = [:]
    private var bases: [String: RemoteBase] = [:]
    static let limit = 20_000

    func node(id: String) -> Node? { nodes[id] }

    func node(remoteId: String) -> Node? {
        guard let id = idOfRemote[remoteId], let n = nodes[id], n.remoteId == remoteId else { return nil }
        return n
    }

    func base(remoteId: String) -> RemoteBase? { bases[remoteId] }

    /// Keeps a node read from the database (folders only).
    mutating func keep(_ n: Node) {
        guard n.isFolder, nodes.count < Self.limit else { return }
        nodes[n.id] = n
        if let r = n.remoteId { idOfRemote[r] = n.id }
    }

    /// Keeps a base read from the database (folders only).
    mutating func keep(_ b: RemoteBase) {
        guard b.isFolder, bases.count < Self.limit else { return }
        bases[b.remoteId] = b
    }

    /// The node with this id is being written or removed.
    mutating func forget(nodeId: String) {
        if let n = nodes.removeValue(forKey: nodeId), let r = n.remoteId, idOfRemote[r] == nodeId { idOfRemote[r] = nil }
    }

    /// The base with this remote id is being written or dropped.
    mutating func forget(baseId: String) { bases[baseId] = nil }
}
