import Foundation

/// Outbox compaction: how removals and new content rewrite the entries already waiting, so the
/// outbox stays a valid replay of the local tree (docs/outbox.md has the full table and the
/// replay's dependency rules).
///
/// Invariant: replaying the entries in `seq` order against the server as it was at the last sync
/// yields the local tree, and every entry is valid where it stands (its folder exists there, its
/// name is free there). Appending keeps it: when a change is made locally its folder exists and
/// its name is free, so both hold on the server at that point of the replay. Rewriting must keep
/// it too:
///
/// | rule | local change | outbox effect | why it stays valid |
/// |---|---|---|---|
/// | E1–E2, E5 | `mkdir`, `put` of a new file, `mv` | append `create_folder`, `upload`, `move` (folder and name at that moment) | see above |
/// | E3 | `put --replace`, the node has an upload whose session has not started | that entry takes the new content (blob, size, checksum, new request id) | content does not change the tree; only the newest offline version is sent (older ones stay local revisions) |
/// | E4 | `put --replace`, otherwise | append `upload` of a new version | a started session may already have made the file or version |
/// | R1 | `rm` of a file never on the server | drop its entries; an upload with a session becomes `discard_upload` | a file is no entry's folder: dropping only frees names, which no later entry needs taken |
/// | R2 | `rm` of a file on the server with pending moves | its first move becomes `delete` (remembering that move's destination); later moves and uploads dropped (a started upload: `discard_upload`) | it leaves its old place at the same point as the move would have, and nothing refers to a file |
/// | R3 | `rm` of a file on the server without pending moves | uploads dropped (started: `discard_upload`) | it is still inside the removed folder on the server; that folder's delete takes it |
/// | R4 | `rm` of a folder on the server | its entries (moves) kept | its server subtree must be exactly what was removed when the top's delete replays |
/// | R5 | `rm` of a folder never on the server | its entries dropped, unless a kept entry places something in it (a node created in it or moved through it that lives on, a folder on the server moved into it) or its creation was sent without an answer: then kept (created, later deleted with the top) | entries that need it on the server must stay valid (a fixpoint over the removed folders) |
/// | R6 | the top of an `rm` | append `delete` when it is on the server or kept by R5 (unless R2 made one); a tombstone keeps the server id and version of every removed node with entries left | the server deletes what is under the folder on the server when the delete replays, which by the invariant is exactly what was removed: moves out of it replayed before |
/// | R7 | `rm` | transfer rows of removed nodes deleted | a transfer of a file that is gone means nothing |
extension Vault {
    /// Rewrites the outbox for removing `removed` (the top first, then everything under it) by
    /// rules R1–R6 (`OutboxRules.removal`). Call inside the removal's transaction, before the node rows go.
    func compactOutbox(removing removed: [Node]) throws {
        guard let top = removed.first else { return }
        let r = try OutboxRules.removal(of: removed, entries: try outboxEntries(concerning: removed),
                                        session: { try uploadTransfer(requestId: $0)?.uploadId })
        if let d = r.appendDelete { try enqueue(.delete, nodeId: top.id, payload: d.payload, baseVersion: d.baseVersion) }
        let byId = Dictionary(uniqueKeysWithValues: removed.map { ($0.id, $0) })
        for id in r.tombstoned {
            guard let x = byId[id] else { continue }
            try tombstonesTable.put(Tombstone(nodeId: x.id, remoteId: x.remoteId, isFolder: x.isFolder, version: x.version))
        }
        for seq in r.drop { try outboxTable.delete(seq: seq) }
        for (seq, w) in r.rewrite {
            try outboxTable.rewrite(seq: seq, op: w.op, payload: w.payload, baseVersion: w.baseVersion)
        }
    }

    /// The outbox entries the removal of `removed` depends on (`OutboxRules.concerns`), oldest
    /// first: for files alone their own entries, by the node index; with folders, one pass over
    /// the outbox keeping only those (never the whole outbox in memory).
    func outboxEntries(concerning removed: [Node]) throws -> [OutboxEntry] {
        let folders = Set(removed.lazy.filter(\.isFolder).map(\.id))
        guard !folders.isEmpty else {
            return try removed.flatMap { try outbox(nodeId: $0.id) }.sorted { $0.seq < $1.seq }
        }
        let ids = Set(removed.map(\.id))
        return try outboxTable.entries { OutboxRules.concerns($0, removing: ids, folders: folders) }
    }

    /// Rule E3: gives the node's pending upload the new content when its session has not
    /// started. Returns false when there is no such entry (the caller appends one: E4).
    func mergeNewContent(into n: Node, blob: BlobRecord) throws -> Bool {
        guard let e = try OutboxRules.mergeTarget(n, entries: try outbox(nodeId: n.id),
                                                   session: { try uploadTransfer(requestId: $0)?.uploadId }) else { return false }
        var p = e.payload
        p.blobId = blob.id; p.size = blob.size; p.sha256 = blob.sha256
        try transfersTable.deleteUpload(requestId: e.requestId)
        try outboxTable.setNewContent(seq: e.seq, p, requestId: Self.newRequestId())
        return true
    }
}
