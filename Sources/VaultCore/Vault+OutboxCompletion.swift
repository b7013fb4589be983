import Foundation

/// What the replay needs from the vault: the server id and version of the node an entry is
/// about (alive or tombstoned), and one operation that records an entry's outcome.
extension Vault {
    /// The node entry `nodeId` is about: in the tree, or removed with entries still to replay.
    public func outboxTarget(nodeId: String) throws -> OutboxTarget? {
        if let n = try node(id: nodeId) {
            return OutboxTarget(nodeId: nodeId, node: n, remoteId: n.remoteId, version: n.version, isFolder: n.isFolder)
        }
        guard let r = try db.queryOne("SELECT remote_id, type, version FROM outbox_tombstones WHERE node_id = ?", [nodeId]) else {
            return nil
        }
        return OutboxTarget(nodeId: nodeId, node: nil, remoteId: try r.decode(String?.self, "remote_id"), version: try r.decode(Int64.self, "version"),
                            isFolder: try r.decode(NodeType.self, "type") == .folder)
    }

    /// The server id of local folder `id` (`root` for the root), or nil while it is not on the server.
    public func remoteFolderId(ofLocal id: String?) throws -> String? {
        guard let id, id != Self.rootId else { return "root" }
        return try outboxTarget(nodeId: id)?.remoteId
    }

    /// The nodes of the tree that have one of `remoteIds` as their server id.
    public func nodes(withRemoteIds remoteIds: [String]) throws -> [Node] {
        var out: [Node] = []
        for chunk in stride(from: 0, to: remoteIds.count, by: 500).map({ Array(remoteIds[$0..<min($0 + 500, remoteIds.count)]) }) {
            let marks = chunk.map { _ in "?" }.joined(separator: ",")
            out += try db.query("SELECT \(Node.columns) FROM nodes WHERE remote_id IN (\(marks))", chunk).map(Node.init(row:))
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
            try db.run("DELETE FROM outbox WHERE seq = ?", [e.seq])
            try db.run("""
                UPDATE nodes SET pending_op = CASE WHEN EXISTS (SELECT 1 FROM outbox WHERE node_id = ?) THEN COALESCE(pending_op, 'sync') ELSE NULL END
                WHERE id = ?
                """, [e.nodeId, e.nodeId])
            try dropSpentTombstones()
            if let base { _ = try applyPlan([.setBase(base)], SQLLocalView(db: db)) }
        }
        if let publish { moveStagedToCache(publish) }
    }

    /// The server id and version of a node, or of its tombstone once it was removed locally.
    func recordRemote(nodeId: String, remoteId: String, version: Int64) throws {
        if try db.run("UPDATE nodes SET remote_id = ?, version = ? WHERE id = ?", [remoteId, version, nodeId]) == 0 {
            try db.run("UPDATE outbox_tombstones SET remote_id = ?, version = ? WHERE node_id = ?", [remoteId, version, nodeId])
        }
    }

    /// Tombstones no entry needs any more: none of their own, and none that names them as the
    /// folder to go into (ids are UUIDs, so a payload that contains one names it).
    func dropSpentTombstones() throws {
        try db.run("""
            DELETE FROM outbox_tombstones WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.node_id = outbox_tombstones.node_id)
              AND NOT EXISTS (SELECT 1 FROM outbox o WHERE instr(o.payload, outbox_tombstones.node_id) > 0)
            """)
    }
}
