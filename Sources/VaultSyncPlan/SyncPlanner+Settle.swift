/// After a page is planned: pending entries that what the server did made impossible are
/// rewritten so the outbox stays a valid replay (docs/outbox.md, "The invariant").
extension PlanRun {
    func settle() throws {
        try settleOrphanedPlacements()
        try settleStaleTargets()
        settleRefusedMovesOfRemoved()
        try settleRefusedIntermediateMoves()
    }

    /// A move the server refused (or found in conflict) that a later move of the same node
    /// follows was only on the node's way: it goes, and the later move takes the node where it is.
    func settleRefusedIntermediateMoves() throws {
        for t in Set(state.outbox.filter { $0.op == .move }.map(\.nodeId)).sorted() {
            guard try state.node(id: t) != nil else { continue }
            let moves = state.entries(of: t).filter { $0.op == .move }
            for e in moves.dropLast() where e.state == .failed || e.state == .conflict { state.drop(seq: e.seq) }
        }
    }

    /// Entries that put a node into a folder that is gone (the server trashed it: this pull
    /// removed it here, or this device's delete of it has nothing left to do): a move there was
    /// only on the node's way (the node is elsewhere now) and goes; a creation there creates the
    /// node where it is now instead, and its later moves go; entries of a node removed here that
    /// was to be created or moved there go with it (and it is gone as a folder too).
    func settleOrphanedPlacements() throws {
        // A removed folder is kept only so a delete still to replay takes what goes into it: with
        // no delete left at all, nothing needs it.
        if !state.outbox.contains(where: { $0.op == .delete }) {
            for t in state.tombstones.values where state.entries(of: t.nodeId).isEmpty { deadFolders.insert(t.nodeId) }
        }
        var changed = true
        while changed {
            changed = false
            for e in state.outbox where e.op.placesInParent {
                guard let p = e.payload.parentId, p != Node.rootId, try state.node(id: p) == nil,
                      state.tombstones[p] == nil || deadFolders.contains(p),
                      state.outbox.contains(where: { $0.seq == e.seq }) else { continue }
                if let n = try state.node(id: e.nodeId) {
                    if try state.places(e) && e.op != .move && n.remoteId == nil {
                        guard e.payload.parentId != n.parentId || e.payload.name != n.name else { continue }
                        var c = e
                        c.payload.parentId = n.parentId; c.payload.name = n.name
                        state.update(c)
                        for m in state.entries(of: n.id) where m.op == .move { state.drop(seq: m.seq) }
                    } else if e.op == .move {
                        state.drop(seq: e.seq)
                    } else {
                        continue
                    }
                } else if let t = state.tombstones[e.nodeId], let rid = t.remoteId {
                    // Removed here on its way into a folder that is gone: it is deleted where it is.
                    for m in state.entries(of: e.nodeId) where m.op == .move { state.drop(seq: m.seq) }
                    if !state.entries(of: e.nodeId).contains(where: { $0.op == .delete }) {
                        let base = try state.base(remoteId: rid)
                        let version = max(t.version, base?.version ?? 0)
                        state.setTombstone(Tombstone(nodeId: t.nodeId, remoteId: rid, isFolder: t.isFolder, version: version))
                        state.append(.delete, nodeId: t.nodeId, payload: OutboxPayload(name: base?.name, remoteId: rid),
                                     baseVersion: version, requestId: settings.newId())
                    }
                } else {
                    // Never on the server, removed here: nothing of it is left to send.
                    for m in state.entries(of: e.nodeId) { state.drop(seq: m.seq) }
                    if state.tombstones[e.nodeId] != nil { deadFolders.insert(e.nodeId) }
                }
                changed = true
            }
        }
        state.dropSpentTombstones()
    }

    /// A pending entry that puts its node somewhere can find that name taken on the server now,
    /// by a node that stays there (synced), or that leaves only after this entry replays (its own
    /// move comes later: waiting for it could deadlock, as when that move goes into the folder this
    /// entry creates). The entry then takes a conflict name; when it is where its node is now, the
    /// node takes it too (said as a name collision).
    func settleStaleTargets() throws {
        for var e in state.outbox where try state.places(e) {
            guard let p = e.payload.parentId, let name = e.payload.name, try takenOnServer(e, p, name) else { continue }
            var n = 1
            var candidate = name
            repeat {
                candidate = ConflictName.make(name, device: settings.deviceName, date: settings.today, number: n)
                n += 1
            } while try state.child(of: p, named: candidate) != nil
                || state.outbox.contains(where: { try state.places($0) && $0.payload.parentId == p && $0.payload.name == candidate })
            e.payload.name = candidate
            if e.state == .conflict { e.state = .pending; e.lastError = nil }
            state.update(e)
            if var node = try state.node(id: e.nodeId), node.parentId == p, node.name == name,
               try state.entries(of: node.id).last(where: { try state.places($0) })?.seq == e.seq {
                node.name = candidate
                state.put(node)
                try say(.nameCollision, node, "\(name) is taken on the server by another item: this device's is now \(candidate)")
            }
        }
    }

    /// Whether the place entry `e` puts its node in is held on the server by another node when it replays.
    func takenOnServer(_ e: OutboxEntry, _ p: String, _ name: String) throws -> Bool {
        let mine = try state.node(id: e.nodeId)?.remoteId
        if let holder = try state.child(of: p, named: name), holder.id != e.nodeId, holder.remoteId != nil,
           try !state.entries(of: holder.id).contains(where: { try state.places($0) }) { return true }
        guard let rp = p == Node.rootId ? Node.rootId : try state.node(id: p)?.remoteId else { return false }
        for b in try state.baseChildren(of: rp) where b.name == name && b.remoteId != mine {
            guard let holder = try state.node(remoteId: b.remoteId) else {
                // Removed here: its delete frees the name, but only when it replays.
                if let t = state.tombstone(remoteId: b.remoteId), state.entries(of: t.nodeId).contains(where: { $0.op == .delete && $0.seq > e.seq }) {
                    return true
                }
                continue
            }
            // It leaves only after this entry, or its move away was refused (a swap through a
            // cycle): waiting for it could wait forever.
            if try state.entries(of: holder.id).contains(where: {
                try state.places($0) && ($0.seq > e.seq || $0.state == .failed || $0.state == .conflict)
            }) { return true }
        }
        return false
    }

    /// A move kept for a node removed here (rule R4: it was to end up inside the removed folder)
    /// that the server refused can no longer take the node into that folder's delete: the node is
    /// deleted where it is instead (the removal wins).
    func settleRefusedMovesOfRemoved() {
        for t in state.tombstones.values.sorted(by: { $0.nodeId < $1.nodeId }) {
            let entries = state.entries(of: t.nodeId)
            guard let rid = t.remoteId, !entries.contains(where: { $0.op == .delete }),
                  entries.contains(where: { $0.op == .move && ($0.state == .conflict || $0.state == .failed) }) else { continue }
            for e in entries where e.op == .move { state.drop(seq: e.seq) }
            let base = (try? state.base(remoteId: rid)) ?? nil
            let version = max(t.version, base?.version ?? 0)
            state.setTombstone(Tombstone(nodeId: t.nodeId, remoteId: rid, isFolder: t.isFolder, version: version))
            state.append(.delete, nodeId: t.nodeId, payload: OutboxPayload(name: base?.name, remoteId: rid),
                         baseVersion: version, requestId: settings.newId())
        }
    }
}
