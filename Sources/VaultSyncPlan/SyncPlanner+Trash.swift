/// Deletes on either side: a node trashed on the server, and a node this device removed that
/// changed on the server (docs/sync.md, the delete rows of "Conflicts").
extension PlanRun {
    /// Node `l` (and what is below it here) is gone from the server. What holds changes of this
    /// device survives: new nodes, new content, and nodes moved in from elsewhere stay, and the
    /// folders around them that were on the server are re-created (new ids); the rest goes.
    func remoteTrash(_ l: Node, remote r: RemoteNode?) throws {
        guard l.id != Node.rootId else { throw SyncPlanError("the server removed the root folder") }
        let subtree = [l] + (l.isFolder ? try state.descendants(of: l.id) : [])
        let top = l.remoteId
        var keep = Set<String>()
        for x in subtree where try unsynced(x, top: top) {
            var cur: Node? = x
            while let c = cur, keep.insert(c.id).inserted, c.id != l.id { cur = try c.parentId.flatMap { try state.node(id: $0) } }
        }
        let hadMoves = state.entries(of: l.id).contains { $0.op == .move }
        for x in subtree.reversed() where !keep.contains(x.id) {
            for e in state.entries(of: x.id) { state.drop(seq: e.seq) }
            try state.remove(x.id)
            outcome.removed += 1
        }
        if let top {
            try dropDeletesWithin(top)
            try recreateMovedOut(ofTrashed: top, except: Set(subtree.map(\.id)))
            dropBaseTree(top)
        }
        state.dropSpentTombstones()
        if keep.isEmpty {
            if hadMoves { outcome.messages.append(SyncMessage(kind: .moveDelete, path: try state.path(of: l), text: "renamed or moved here but deleted on another device: the delete wins")) }
            return
        }
        // Parents first: what was on the server below the trashed node is re-created.
        var recreated: [String] = []
        for x in subtree where keep.contains(x.id) {
            guard let y = try state.node(id: x.id), y.remoteId != nil, try !movedIn(y, top: top) else { continue }
            recreate(y)
            recreated.append(y.id)
        }
        try reorder(keep: subtree.filter { keep.contains($0.id) }.map(\.id), recreated: Set(recreated))
        let kept = try state.node(id: l.id) ?? l
        if l.isFolder {
            try say(.folderRecreated, kept, "deleted on another device while it held changes of this device: it is re-created with them; what it held unchanged is gone")
        } else {
            try say(.editDelete, kept, "changed here but deleted on another device: the edit wins, and the file is re-created")
        }
    }

    /// Node `y` is gone from the server, but holds changes of this device: it is made new here
    /// (a new id on the server): its moves go, its uploads create it where it is now.
    func recreate(_ y: Node) {
        var y = y
        if let r = y.remoteId { state.dropBase(r) }
        y.remoteId = nil; y.version = 0
        for var e in state.entries(of: y.id) {
            guard !y.isFolder, e.op == .upload else { state.drop(seq: e.seq); continue }
            e.payload.remoteId = nil; e.payload.clientId = nil; e.payload.name = y.name; e.payload.parentId = y.parentId
            e.requestId = settings.newId(); e.baseVersion = nil; e.state = .pending; e.lastError = nil; e.sentAt = nil
            state.update(e)
        }
        y.pendingOp = y.isFolder ? .create : .upload
        state.put(y)
    }

    /// Nodes that were, on the server, below folder `remoteId` (now trashed), and that this device
    /// moved elsewhere (a move still to replay): the server takes no change below a trashed
    /// folder, so they are trashed too (docs/sync.md: rename or move versus trashed), keeping what
    /// holds changes of this device (a file with new content is re-created where it is here).
    func recreateMovedOut(ofTrashed remoteId: String, except handled: Set<String> = []) throws {
        var queue = [remoteId]
        var seen = Set<String>()
        var found: [Node] = []
        while let id = queue.popLast(), seen.insert(id).inserted {
            for b in try state.baseChildren(of: id) {
                // Moved out on the server too (this fetch shows it elsewhere): not in the trash,
                // and neither is what it holds.
                if let f = fetched[b.remoteId], f.parentId != b.parentId { continue }
                queue.append(b.remoteId)
                guard let l = try state.node(remoteId: b.remoteId), !handled.contains(l.id), detached[l.id] == nil else { continue }
                found.append(l)
            }
        }
        let ids = Set(found.map(\.id))
        for l in found {
            // The topmost only: a folder takes what is below it here.
            var up = l.parentId, covered = false
            while let p = up, !covered { if ids.contains(p) { covered = true }; up = try state.node(id: p)?.parentId }
            if !covered, try state.node(id: l.id) != nil { try remoteTrash(l, remote: nil) }
        }
    }

    /// Whether `x` holds a change of this device that a delete of `top` on the server must not
    /// take, or is not below `top` on the server at all (it, or a folder above it, was moved in).
    func unsynced(_ x: Node, top: String?) throws -> Bool {
        if x.remoteId == nil { return true }
        if state.entries(of: x.id).contains(where: { $0.op == .upload }) { return true }
        return try movedIn(x, top: top)
    }

    /// Whether `x` is, on the server, outside `top`'s subtree (this device moved it, or a folder
    /// above it, in). What the server's place of a node is: as this device last saw it.
    func movedIn(_ x: Node, top: String?) throws -> Bool {
        guard let top, var id = x.remoteId, !gone.contains(x.id) else { return false }
        var steps = 0
        while id != top, steps < 10_000 {
            guard let b = try state.base(remoteId: id), let p = b.parentId else {
                // Nothing known of its place on the server: where this device has it.
                return false
            }
            if p == Node.rootId { return true }
            // Below a folder trashed in this fetch: as much in the trash as `top`.
            if fetched[p]?.trashed == true { return false }
            id = p
            steps += 1
        }
        return false
    }

    /// Rewrites the outbox after re-creating folders: the creations come first, parents first,
    /// then every entry of the kept nodes and of nodes going into them, in their order.
    func reorder(keep: [String], recreated: Set<String>) throws {
        var folders = Set<String>()
        for id in keep { if try state.node(id: id)?.isFolder == true { folders.insert(id) } }
        var affected = Set(keep)
        var grew = true
        while grew {
            grew = false
            for e in state.outbox where e.op.placesInParent && !affected.contains(e.nodeId) {
                if let p = e.payload.parentId, folders.contains(p) || affected.contains(p) {
                    affected.insert(e.nodeId); grew = true
                    if try state.node(id: e.nodeId)?.isFolder == true { folders.insert(e.nodeId) }
                }
            }
        }
        // Parents first, as the tree is here; nodes not on the server are created once where
        // they are now (their moves on the way meant places that may no longer come in order).
        let firstEntry = Dictionary(state.outbox.reversed().map { ($0.nodeId, $0.seq) }, uniquingKeysWith: { $1 })
        let ids = affected.sorted { (firstEntry[$0] ?? 0, $0) < (firstEntry[$1] ?? 0, $1) }
        var nodes: [Node] = []
        var removed: [String] = []
        for id in ids { if let n = try state.node(id: id) { nodes.append(n) } else { removed.append(id) } }
        for n in PlanState.parentsFirst(nodes) {
            if n.remoteId == nil { try collapseToCreation(n) } else { for e in state.entries(of: n.id) { state.moveToEnd(e.seq) } }
        }
        for id in removed { for e in state.entries(of: id) { state.moveToEnd(e.seq) } }
    }

    /// Rewrites the entries of `n` (not on the server) into its creation where it is now, at the
    /// end of the outbox: a folder's creation, or a file's uploads (the first one creating it).
    func collapseToCreation(_ n: Node) throws {
        let entries = state.entries(of: n.id)
        for e in entries where e.op == .move || e.op == .delete { state.drop(seq: e.seq) }
        if n.isFolder {
            if var c = entries.first(where: { $0.op == .createFolder }) {
                c.payload.name = n.name; c.payload.parentId = n.parentId
                state.update(c)
                state.moveToEnd(c.seq)
            } else {
                state.append(.createFolder, nodeId: n.id, payload: OutboxPayload(name: n.name, parentId: n.parentId),
                             baseVersion: nil, requestId: settings.newId())
            }
            return
        }
        for (i, var e) in entries.filter({ $0.op == .upload || $0.op == .discardUpload }).enumerated() {
            if i == 0 { e.payload.name = n.name; e.payload.parentId = n.parentId; state.update(e) }
            state.moveToEnd(e.seq)
        }
    }

    /// A node trashed on the server that this device does not have: a delete of its own (or of
    /// something in it) has nothing left to do.
    func trashedElsewhere(_ r: RemoteNode) throws {
        try dropDeletesWithin(r.id)
        try recreateMovedOut(ofTrashed: r.id)
        dropBaseTree(r.id)
    }

    /// Nodes this device removed that were, on the server, folder `remoteId` or below it (now
    /// trashed): their entries (a move out of it on the way, the delete) have nothing left to do.
    func dropDeletesWithin(_ remoteId: String) throws {
        for t in state.tombstones.values {
            guard let rid = t.remoteId, try rid == remoteId || baseWithin(rid, remoteId) else { continue }
            for e in state.entries(of: t.nodeId) { state.drop(seq: e.seq) }
            deadFolders.insert(t.nodeId)
        }
    }

    /// Whether, as last seen on the server, `id` is below `ancestor`.
    func baseWithin(_ id: String, _ ancestor: String) throws -> Bool {
        var cur: String? = try state.base(remoteId: id)?.parentId
        var steps = 0
        while let c = cur, steps < 10_000 {
            if c == ancestor { return true }
            cur = try state.base(remoteId: c)?.parentId
            steps += 1
        }
        return false
    }

    /// A node this device removed (its delete waits in the outbox) is alive on the server.
    func deletedHere(_ t: Tombstone, _ r: RemoteNode, parent p: String) throws {
        let changed = try changes(r)
        if !r.isFolder && changed.content {
            // The remote edit wins: the local delete is dropped and the file comes back.
            for e in state.entries(of: t.nodeId) { state.drop(seq: e.seq) }
            state.dropTombstone(t.nodeId)
            state.dropSpentTombstones()
            try create(r, parent: p)
            if let n = try state.node(remoteId: r.id) {
                try say(.deleteEdit, n, "deleted here but changed on \(writer(of: r, content: true)): the change wins, and the file is back")
            }
            return
        }
        try deleteWins(t, r)
    }

    /// A node removed here changed place on the server: it is deleted there, against the new
    /// version (docs/sync.md: delete versus renamed or moved).
    func deleteWins(_ t: Tombstone, _ r: RemoteNode) throws {
        var t = t
        t.version = max(t.version, r.version)
        state.setTombstone(t)
        var hasDelete = false
        for var e in state.entries(of: t.nodeId) {
            guard e.op == .delete else { state.drop(seq: e.seq); continue }
            hasDelete = true
            e.state = .pending; e.lastError = nil; e.sentAt = nil
            state.update(e)
        }
        if !hasDelete {
            state.append(.delete, nodeId: t.nodeId, payload: OutboxPayload(name: r.name, remoteId: r.id), baseVersion: r.version,
                         requestId: settings.newId())
        }
        state.setBase(RemoteBase(r))
    }

    /// A node alive on the server below a folder this device removed (`top`, its delete waiting).
    /// New content there, a node created there or moved in from elsewhere by another device, wins
    /// over the delete: the folder's subtree is listed and comes back. Anything else goes with it.
    func underLocalDelete(_ r: RemoteNode, top: Tombstone) throws {
        let changed = try changes(r)
        if let rid = top.remoteId {
            var movedIn = false
            if changed.placement {
                let wasAt = try state.base(remoteId: r.id)?.parentId
                movedIn = try wasAt.map { try !($0 == rid || baseWithin($0, rid)) } ?? true
            }
            if changed.content || movedIn {
                if !outcome.needSubtrees.contains(rid) { outcome.needSubtrees.append(rid) }
                return
            }
        }
        if let own = state.tombstone(remoteId: r.id) {
            // Removed here too: the removal wins, against the new version.
            return try deleteWins(own, r)
        }
        if let l = try state.node(remoteId: r.id) {
            // Here it is elsewhere (a move out of that folder waits): it stays where it is.
            return try update(l, r, parent: nil)
        }
        state.setBase(RemoteBase(r))
    }

    /// Drops this device's delete of remote folder `remoteId` (and the entries kept for what was
    /// below it): something in it changed on the server, and the change wins.
    func dropDelete(remoteId: String) throws {
        guard let t = state.tombstone(remoteId: remoteId) else { return }
        for other in state.tombstones.values {
            let below = try other.remoteId.map { try baseWithin($0, remoteId) } ?? false
            guard other.nodeId == t.nodeId || below else { continue }
            for e in state.entries(of: other.nodeId) { state.drop(seq: e.seq) }
            state.dropTombstone(other.nodeId)
        }
        state.dropSpentTombstones()
        sayBack(remoteId, path: try state.base(remoteId: remoteId)?.name ?? remoteId)
    }

    /// Says (once) that folder `remoteId`, deleted here, comes back: something in it changed on
    /// another device.
    func sayBack(_ remoteId: String, path: String) {
        guard saidBack.insert(remoteId).inserted else { return }
        outcome.messages.append(SyncMessage(kind: .deleteEdit, path: path,
                                            text: "deleted here but something in it changed on another device: the change wins, and it is back"))
    }
}
