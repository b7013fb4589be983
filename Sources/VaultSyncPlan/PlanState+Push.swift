/// The push's bookkeeping on a `PlanState` (a simulated device; VaultCore does the same in SQL in
/// `Vault.completeOutboxEntry`).
extension PlanState {
    /// The node entry `nodeId` is about: in the tree, or removed with entries still to replay.
    public func target(nodeId: String) throws -> OutboxTarget? {
        if let n = try node(id: nodeId) {
            return OutboxTarget(nodeId: nodeId, node: n, remoteId: n.remoteId, version: n.version, isFolder: n.isFolder)
        }
        guard let t = tombstones[nodeId] else { return nil }
        return OutboxTarget(nodeId: nodeId, node: nil, remoteId: t.remoteId, version: t.version, isFolder: t.isFolder)
    }

    /// The server id of local folder `id` (`root` for the root), or nil while it is not on the server.
    public func remoteFolderId(ofLocal id: String?) throws -> String? {
        guard let id, id != Node.rootId else { return Node.rootId }
        return try target(nodeId: id)?.remoteId
    }

    /// Completes entry `e` after the server applied it: records the server id and version on the
    /// node (or its tombstone) and what the server now holds, removes the entry, and drops
    /// tombstones no entry needs.
    public mutating func complete(_ e: OutboxEntry, _ c: OutboxCompletion, base: RemoteBase?) throws {
        switch c {
        case .nothing: break
        case let .onServer(remoteId, version), let .uploaded(remoteId, version, _):
            if var n = try node(id: e.nodeId) {
                n.remoteId = remoteId; n.version = version
                put(n)
            } else if var t = tombstones[e.nodeId] {
                t.remoteId = remoteId; t.version = version
                setTombstone(t)
            }
        }
        drop(seq: e.seq)
        if var n = try node(id: e.nodeId) {
            n.pendingOp = entries(of: n.id).isEmpty ? nil : (n.pendingOp ?? .sync)
            put(n)
        }
        dropSpentTombstones()
        if let base { setBase(base) }
    }

    /// Whether entry `e` puts its node somewhere on the server: a folder creation, a move, or the
    /// upload that creates a file (not one of a new version).
    public func places(_ e: OutboxEntry) throws -> Bool {
        switch e.op {
        case .createFolder, .move: return true
        case .upload:
            guard let n = try node(id: e.nodeId), n.remoteId == nil else { return false }
            return entries(of: e.nodeId).first { $0.op == .upload }?.seq == e.seq
        case .delete, .discardUpload: return false
        }
    }

    /// Sets an entry's state (and reason).
    public mutating func mark(_ seq: Int64, _ s: OutboxState, reason: String?) {
        guard var e = outbox.first(where: { $0.seq == seq }) else { return }
        e.state = s; e.lastError = reason; e.sentAt = nil
        if s != .pending { e.attempts += 1 }
        update(e)
    }

    /// Puts every entry in conflict back in line: what the pull brought may have settled it, and
    /// a replay that still finds the server changed is refused by `If-Match` again (never overwrites).
    public mutating func retryConflicts() {
        for var e in outbox where e.state == .conflict {
            e.state = .pending; e.lastError = nil; e.sentAt = nil
            update(e)
        }
    }
}
