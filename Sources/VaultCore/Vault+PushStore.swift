import VaultSyncPlan

extension Vault {
    /// The store a push reads and records (VaultSync's replay through `PushRunner`).
    public func pushStore() -> VaultPushStore { VaultPushStore(vault: self) }
}

/// The vault as `PushRunner` sees it: the outbox, its targets and their server ids, and the
/// typed operations that record what the server did (each its own transaction).
public final class VaultPushStore: PushStore {
    let vault: Vault

    init(vault: Vault) { self.vault = vault }

    public func outbox() throws -> [OutboxEntry] { try vault.outbox() }
    public func current(_ entry: OutboxEntry) throws -> OutboxEntry? { try vault.outboxEntry(seq: entry.seq) }
    public func hasNode(_ id: String) throws -> Bool { try vault.node(id: id) != nil }
    public func target(nodeId: String) throws -> OutboxTarget? { try vault.outboxTarget(nodeId: nodeId) }
    public func remoteFolderId(ofLocal id: String?) throws -> String? { try vault.remoteFolderId(ofLocal: id) }
    public func holdsAny(remoteIds: [String]) throws -> Bool { try !vault.nodes(withRemoteIds: remoteIds).isEmpty }
    public func cursor() throws -> Int64? { try vault.changesCursor() }

    /// The vault path of a node in the tree, or its last name once removed.
    public func label(_ e: OutboxEntry, _ target: OutboxTarget?) throws -> String {
        if let n = target?.node { return try vault.path(of: n) }
        return e.payload.name ?? e.nodeId
    }

    public func clientId(for e: OutboxEntry, proposing id: String) throws -> String { try vault.clientId(for: e, proposing: id) }
    public func markSent(_ e: OutboxEntry) throws { try vault.markOutboxSent(seq: e.seq) }
    public func claimSeqs(remoteId: String, nodeId: String) throws -> RemoteSeqs { try vault.claimSeqs(remoteId: remoteId, nodeId: nodeId) }

    public func complete(_ e: OutboxEntry, _ completion: OutboxCompletion, seqs: RemoteSeqs?, base: RemoteBase?) throws {
        TestHooks.crashPoint("replay-before-complete")   // the server applied it; the vault has not recorded it
        try vault.completeOutboxEntry(e, completion, seqs: seqs, base: base)
        if case .uploaded = completion, let t = try vault.uploadTransfer(requestId: e.requestId), t.state != .done {
            try vault.updateTransfer(t.id, .state(.done))   // an earlier attempt's upload, recognised
        }
    }

    /// Marks `e`; an upload that waits says so on its transfer too (D5: where people look).
    public func mark(_ e: OutboxEntry, _ state: OutboxState, reason: String) throws {
        try vault.markOutbox(seq: e.seq, state, reason: reason)
        if state == .pending, e.op == .upload, let t = try vault.uploadTransfer(requestId: e.requestId) {
            try vault.updateTransfer(t.id, .state(.queued, error: reason))
        }
    }
}
