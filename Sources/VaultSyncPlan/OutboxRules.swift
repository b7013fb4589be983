/// Outbox compaction (docs/outbox.md, rules R1–R6 and E3), as pure decisions: VaultCore applies
/// them to its tables, the simulation to its memory, so both rewrite the outbox alike.
public enum OutboxRules {
    /// How removing nodes rewrites the outbox.
    public struct Removal: Sendable, Equatable {
        /// Entries to drop.
        public var drop = Set<Int64>()
        /// Entries rewritten in place (op, payload, base version).
        public var rewrite: [Int64: Rewrite] = [:]
        /// Removed nodes that keep a tombstone (their entries, or entries naming them, replay).
        public var tombstoned = Set<String>()
        /// The delete to append for the top, if any.
        public var appendDelete: (payload: OutboxPayload, baseVersion: Int64)?

        public static func == (a: Removal, b: Removal) -> Bool {
            a.drop == b.drop && a.rewrite == b.rewrite && a.tombstoned == b.tombstoned
                && a.appendDelete?.payload == b.appendDelete?.payload && a.appendDelete?.baseVersion == b.appendDelete?.baseVersion
        }
    }

    public struct Rewrite: Sendable, Equatable {
        public var op: OutboxOp
        public var payload: OutboxPayload
        public var baseVersion: Int64?
    }

    /// Rules R1–R6 for removing `removed` (the top first, then everything under it) with the
    /// outbox `entries`, oldest first: the whole outbox, or only the entries that `concerns`
    /// keeps (no other entry changes the result). `session` gives the server upload session of
    /// an upload entry's request id, when one was opened.
    public static func removal(of removed: [Node], entries: [OutboxEntry], session: (String) throws -> String?) rethrows -> Removal {
        var out = Removal()
        guard let top = removed.first else { return out }
        let ids = Set(removed.map(\.id))
        var mine: [String: [OutboxEntry]] = [:]
        var others: [OutboxEntry] = []
        for e in entries {
            if ids.contains(e.nodeId) { mine[e.nodeId, default: []].append(e) } else { others.append(e) }
        }
        // R1–R3: files.
        for x in removed where !x.isFolder {
            var moved = false
            for e in mine[x.id] ?? [] {
                switch e.op {
                case .upload:
                    if e.state != .cancelled, let s = try session(e.requestId) {
                        out.rewrite[e.seq] = Rewrite(op: .discardUpload, payload: OutboxPayload(name: x.name, remoteId: x.remoteId, uploadId: s), baseVersion: nil)
                        out.tombstoned.insert(x.id)
                    } else {
                        out.drop.insert(e.seq)
                    }
                case .move where x.remoteId != nil && !moved:
                    moved = true
                    out.rewrite[e.seq] = Rewrite(op: .delete, payload: OutboxPayload(name: e.payload.name, parentId: e.payload.parentId,
                                                                                     remoteId: x.remoteId, replacesMove: true), baseVersion: x.version)
                    out.tombstoned.insert(x.id)
                case .delete, .discardUpload:
                    out.tombstoned.insert(x.id)
                default:
                    out.drop.insert(e.seq)
                }
            }
        }
        // R4–R5: folders on the server (or maybe: creation sent) are needed; others once a kept
        // entry places something in them (a fixpoint).
        let folders = removed.filter(\.isFolder)
        var needed = Set(folders.filter { f in
            f.remoteId != nil || (mine[f.id] ?? []).contains { $0.op == .createFolder && $0.sentAt != nil }
        }.map(\.id))
        var placedIn = Set<String>()
        func place(_ list: [OutboxEntry]) {
            for e in list where e.op.placesInParent && !out.drop.contains(e.seq) && out.rewrite[e.seq] == nil {
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
            guard let list = mine[f.id], !list.isEmpty else { continue }
            if needed.contains(f.id) { out.tombstoned.insert(f.id) } else { out.drop.formUnion(list.map(\.seq)) }
        }
        // R6: the top.
        let topDeleted = (mine[top.id] ?? []).contains { out.rewrite[$0.seq]?.op == .delete || $0.op == .delete }
        if (top.remoteId != nil || needed.contains(top.id)) && !topDeleted {
            out.appendDelete = (OutboxPayload(name: top.name, remoteId: top.remoteId), top.version)
            out.tombstoned.insert(top.id)
        }
        // Removed folders that kept entries place something in (their server id is needed).
        for e in others where e.op.placesInParent { if let p = e.payload.parentId, ids.contains(p) { out.tombstoned.insert(p) } }
        for list in mine.values {
            for e in list where !out.drop.contains(e.seq) {
                let op = out.rewrite[e.seq]?.op ?? e.op, payload = out.rewrite[e.seq]?.payload ?? e.payload
                guard op.placesInParent || payload.replacesMove == true, let p = payload.parentId, ids.contains(p) else { continue }
                out.tombstoned.insert(p)
            }
        }
        return out
    }

    /// Whether entry `e` can change what removing the nodes `ids` (of which `folders` are the
    /// folders) does: an entry of one of them, or one that places something in one of the
    /// folders. A store reads only these (`removal` needs no other).
    public static func concerns(_ e: OutboxEntry, removing ids: Set<String>, folders: Set<String>) -> Bool {
        if ids.contains(e.nodeId) { return true }
        guard e.op.placesInParent, let p = e.payload.parentId else { return false }
        return folders.contains(p)
    }

    /// Rule E3: the upload entry of `node` that takes new content in place (its session has not
    /// started), if any; otherwise the caller appends a new upload (E4).
    public static func mergeTarget(_ node: Node, entries: [OutboxEntry], session: (String) throws -> String?) rethrows -> OutboxEntry? {
        guard let e = entries.last(where: { $0.nodeId == node.id && $0.op == .upload }), try session(e.requestId) == nil else { return nil }
        return e
    }
}

extension PlanState {
    /// Removes `removed` (the top first, then everything under it) as `vault rm` does, with the
    /// outbox rewritten by rules R1–R6 (for a simulated device; the vault does the same in SQL).
    public mutating func removeLocally(_ removed: [Node], session: (String) -> String?, newRequestId: () -> String) throws {
        let r = OutboxRules.removal(of: removed, entries: outbox, session: session)
        for id in r.tombstoned {
            guard let x = removed.first(where: { $0.id == id }) else { continue }
            setTombstone(Tombstone(nodeId: x.id, remoteId: x.remoteId, isFolder: x.isFolder, version: x.version))
        }
        for seq in r.drop { drop(seq: seq) }
        for (seq, w) in r.rewrite {
            guard var e = outbox.first(where: { $0.seq == seq }) else { continue }
            e.op = w.op; e.payload = w.payload; e.baseVersion = w.baseVersion
            e.state = .pending; e.lastError = nil; e.sentAt = nil
            update(e)
        }
        if let d = r.appendDelete, let top = removed.first {
            append(.delete, nodeId: top.id, payload: d.payload, baseVersion: d.baseVersion, requestId: newRequestId())
        }
        for x in removed.reversed() { try remove(x.id) }
    }
}
