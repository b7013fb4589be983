import Foundation
import VaultCore
import VaultSync

/// The revision steps `vault revisions`, `cat`/`get --revision`, `vault restore` and the browser
/// share. Each takes the sync client from its caller (which decides where progress and notes go:
/// standard error, or the browser's message line), made only when the server is needed.
enum RevisionAccess {
    /// The revisions of file `node`, newest first: fresh from the server when the vault has one
    /// and can write (the list is cached), else, or when the server cannot be reached, the list
    /// last seen (`offline`; a file never uploaded lists its versions kept here).
    static func list(_ vault: Vault, _ node: Node, client: () throws -> SyncClient) throws -> (list: [RevisionInfo], offline: Bool) {
        if node.remoteId != nil, !vault.isReadOnly, try SyncAccount.load(from: vault) != nil {
            return try client().revisions(of: node)
        }
        return (try vault.revisions(nodeId: node.id), node.remoteId != nil)
    }

    /// Makes revision `revision` of `node` readable here, downloading it when needed (an error
    /// says why it cannot be: offline on a read-only filesystem, or no server).
    static func makeLocal(_ vault: Vault, _ node: Node, _ revision: String, client: () throws -> SyncClient) throws {
        guard try vault.revisionBlob(nodeId: node.id, revision: revision) == nil else { return }
        guard !vault.isReadOnly, try SyncAccount.load(from: vault) != nil else {
            _ = try vault.openRevision(nodeId: node.id, revision: revision)   // says why not
            return
        }
        try client().downloadRevision(node, revision: revision)
    }

    /// Makes revision `revision` of `node` the current version (a new head on the server; the
    /// local node follows). Returns the node, its path and the sentence that says so (naming
    /// the revision `idShown`, by default its whole id).
    static func restore(_ vault: Vault, _ node: Node, _ revision: String, policy: EffectivePolicy, client: SyncClient,
                        idShown: String? = nil) throws -> (node: Node, path: String, message: String) {
        let restored = try client.restore(node, revision: revision, policy: try SyncClient.conflictPolicy(vault: vault, policy: policy))
        let shown = try vault.path(of: restored)
        return (restored, shown, "Restored revision \(idShown ?? revision) of \(DisplayText.escaped(shown)) (\(ByteCount.format(restored.size))); the previous version stays a revision.")
    }
}
