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
    /// rules R1–R6. Call inside the removal's transaction, before the node rows go.
    func compactOutbox(removing removed: [Node]) throws {
        guard let top = removed.first else { return }
        let ids = Set(removed.map(\.id))
        var mine: [String: [OutboxEntry]] = [:]
        var others: [OutboxEntry] = []
        for e in try outbox() {
            if ids.contains(e.nodeId) { mine[e.nodeId, default: []].append(e) } else { others.append(e) }
        }
        var drop = Set<Int64>()
        var rewrite: [Int64: (op: OutboxOp, payload: OutboxPayload, base: Int64?)] = [:]
        var tombstoned = Set<String>()

        // R1–R3: files.
        for x in removed where !x.isFolder {
            var moved = false
            for e in mine[x.id] ?? [] {
                switch e.op {
                case .upload:
                    if e.state != .cancelled, let session = try uploadTransfer(requestId: e.requestId)?.uploadId {
                        rewrite[e.seq] = (.discardUpload, OutboxPayload(name: x.name, remoteId: x.remoteId, uploadId: session), nil)
                        tombstoned.insert(x.id)
                    } else {
                        drop.insert(e.seq)
                    }
                case .move where x.remoteId != nil && !moved:
                    moved = true
                    rewrite[e.seq] = (.delete, OutboxPayload(name: e.payload.name, parentId: e.payload.parentId, remoteId: x.remoteId,
                                                            replacesMove: true), x.version)
                    tombstoned.insert(x.id)
                case .delete, .discardUpload:
                    tombstoned.insert(x.id)
                default:
                    drop.insert(e.seq)
                }
            }
        }

        // R4–R5: folders. On the server (or maybe, its creation sent): needed. Otherwise needed
        // once a kept entry places something in it.
        let folders = removed.filter(\.isFolder)
        var needed = Set(folders.filter { f in
            f.remoteId != nil || (mine[f.id] ?? []).contains { $0.op == .createFolder && $0.sentAt != nil }
        }.map(\.id))
        var placedIn = Set<String>()
        func place(_ entries: [OutboxEntry]) {
            for e in entries where e.op.placesInParent && !drop.contains(e.seq) && rewrite[e.seq] == nil {
                if let p = e.payload.parentId { placedIn.insert(p) }
            }
        }
        place(others)
        for f in needed { place(mine[f] ?? []) }
        var grew = true
        while grew {
            grew = false
            for f in folders where !needed.contains(f.id) && placedIn.contains(f.id) {
                needed.insert(f.id)
                place(mine[f.id] ?? [])
                grew = true
            }
        }
        for f in folders {
            guard let entries = mine[f.id], !entries.isEmpty else { continue }
            if needed.contains(f.id) { tombstoned.insert(f.id) } else { drop.formUnion(entries.map(\.seq)) }
        }

        // R6: the top.
        let topDeleted = (mine[top.id] ?? []).contains { rewrite[$0.seq]?.op == .delete || $0.op == .delete }
        if (top.remoteId != nil || needed.contains(top.id)) && !topDeleted {
            try enqueue(.delete, nodeId: top.id, payload: .init(name: top.name, remoteId: top.remoteId), baseVersion: top.version)
            tombstoned.insert(top.id)
        }

        // Removed folders that kept entries place something in (their server id is needed then).
        for e in others where e.op.placesInParent { if let p = e.payload.parentId, ids.contains(p) { tombstoned.insert(p) } }
        for es in mine.values {
            for e in es where !drop.contains(e.seq) {
                let op = rewrite[e.seq]?.op ?? e.op, payload = rewrite[e.seq]?.payload ?? e.payload
                guard op.placesInParent || payload.replacesMove == true, let p = payload.parentId, ids.contains(p) else { continue }
                tombstoned.insert(p)
            }
        }
        let byId = Dictionary(uniqueKeysWithValues: removed.map { ($0.id, $0) })
        for id in tombstoned {
            guard let x = byId[id] else { continue }
            try db.run("INSERT OR REPLACE INTO outbox_tombstones(node_id, remote_id, type, version) VALUES (?, ?, ?, ?)",
                       [x.id, x.remoteId, x.type.rawValue, x.version])
        }
        for seq in drop { try db.run("DELETE FROM outbox WHERE seq = ?", [seq]) }
        for (seq, r) in rewrite {
            try db.run("""
                UPDATE outbox SET op = ?, payload = ?, base_version = ?, state = 'pending', last_error = NULL, sent_at = NULL WHERE seq = ?
                """, [r.op.rawValue, try Self.encodePayload(r.payload), r.base, seq])
        }
    }

    /// Rule E3: gives the node's pending upload the new content when its session has not
    /// started. Returns false when there is no such entry (the caller appends one: E4).
    func mergeNewContent(into n: Node, blob: BlobRecord) throws -> Bool {
        guard let e = try outbox(nodeId: n.id).last(where: { $0.op == .upload }),
              try uploadTransfer(requestId: e.requestId)?.uploadId == nil else { return false }
        var p = e.payload
        p.blobId = blob.id; p.size = blob.size; p.sha256 = blob.sha256
        try db.run("DELETE FROM transfers WHERE request_id = ? AND direction = 'upload'", [e.requestId])
        try db.run("""
            UPDATE outbox SET payload = ?, request_id = ?, last_error = CASE state WHEN 'failed' THEN NULL ELSE last_error END,
              state = CASE state WHEN 'failed' THEN 'pending' ELSE state END WHERE seq = ?
            """, [try Self.encodePayload(p), Self.newRequestId(), e.seq])
        return true
    }
}
