import Foundation

/// What the replay needs from the vault: the server id and version of the node an entry is
/// about (alive or tombstoned), and one operation that records an entry's outcome.
extension Vault {
    /// The node entry `nodeId` is about: in the tree, or removed with entries still to replay.
    public func outboxTarget(nodeId: String) throws -> OutboxTarget? {
        if let n = try node(id: nodeId) {
            return OutboxTarget(nodeId: nodeId, node: n, remoteId: n.remoteId, version: n.version, isFolder: n.isFolder)
        }
        guard let t = try tombstonesTable.tombstone(nodeId: nodeId) else { return nil }
        return OutboxTarget(nodeId: nodeId, node: nil, remoteId: t.remoteId, version: t.version, isFolder: t.isFolder)
    }

    /// The server id of local folder `id` (`root` for the root), or nil while it is not on the server.
    public func remoteFolderId(ofLocal id: String?) throws -> String? {
        guard let id, id != Self.rootId else { return "root" }
        return try outboxTarget(nodeId: id)?.remoteId
    }

    /// The nodes of the tree that have one of `remoteIds` as their server id.
    public func nodes(withRemoteIds remoteIds: [String]) throws -> [Node] {
        var out: [Node] = []
        let per = NodesTable.remoteIdsPerQuery
        for chunk in stride(from: 0, to: remoteIds.count, by: per).map({ Array(remoteIds[$0..<min($0 + per, remoteIds.count)]) }) {
            out += try nodesTable.nodes(remoteIds: chunk)
        }
        return out
    }

    /// Completes entry `e` after the server applied it: records `completion` (on the node, or
    /// on its tombstone), removes the entry, and keeps the node's `pending_op` while later entries
    /// of it wait; all in one transaction. Uploaded content that is the node's current content is
    /// published: its row says cached in that transaction, and its file moves from `staging/` to
    /// `cache/` after the commit (see `Vault+Publish`). `seqs` are the record sequence numbers
    /// the replay sent or saw (raised on the node in the same transaction); `base` what the server
    /// now holds of the node, when the answer was to this very request (`PushStep.done`), recorded
    /// as a pull records it.
    public func completeOutboxEntry(_ e: OutboxEntry, _ completion: OutboxCompletion, seqs: RemoteSeqs? = nil,
                                    base: RemoteBase? = nil) throws {
        var publish: String?
        try db.transaction {
            if let seqs { try noteRemoteSeqs(nodeId: e.nodeId, seqs) }
            switch completion {
            case .nothing: break
            case let .onServer(remoteId, version):
                try recordRemote(nodeId: e.nodeId, remoteId: remoteId, version: version)
            case let .uploaded(remoteId, version, blobId):
                try recordRemote(nodeId: e.nodeId, remoteId: remoteId, version: version)
                if let n = try node(id: e.nodeId) { publish = try publishInTransaction(n, blobId: blobId) }
            }
            try outboxTable.delete(seq: e.seq)
            try nodesTable.settlePendingOp(id: e.nodeId)
            try dropSpentTombstones()
            if let base { _ = try applyPlan([.setBase(base)], SQLLocalView(db: db)) }
        }
        if let publish { moveStagedToCache(publish) }
    }

    /// The server id and version of a node, or of its tombstone once it was removed locally.
    func recordRemote(nodeId: String, remoteId: String, version: Int64) throws {
        if try !nodesTable.setRemote(id: nodeId, remoteId: remoteId, version: version) {
            try tombstonesTable.setRemote(nodeId: nodeId, remoteId: remoteId, version: version)
        }
    }

    /// Tombstones no entry needs any more: none of their own, and none that names them as the
    /// folder to go into (ids are UUIDs, so a payload that contains one names it).
    func dropSpentTombstones() throws {
        try tombstonesTable.deleteSpent()
    }
}
