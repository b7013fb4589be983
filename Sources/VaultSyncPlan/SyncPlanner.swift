/// The two-way sync planner (docs/sync.md): decides, for a page of decoded remote nodes and the
/// local state with its pending outbox, what changes locally, how the outbox is rewritten and
/// what to say. No I/O, no clock, no randomness: everything comes in through `SyncSettings` and
/// the `PlanState`'s view. The CLI's pull and the multi-device simulation run this same code.
public struct SyncPlanner {
    public var settings: SyncSettings

    public init(settings: SyncSettings) { self.settings = settings }

    /// Plans one page into `state` (changed in place; on a throw, discard it).
    /// - Parameters:
    ///   - remote: the newest state of each node the page holds (later pages may change them again).
    ///   - upcoming: the final state of the fetch's other nodes (a child of a folder that ends up
    ///     trashed is trashed with it; a child of one still to come waits for it).
    ///   - restoring: remote folders whose subtree the caller listed because a local delete of
    ///     theirs is to be dropped (`PageOutcome.needSubtrees` of an earlier attempt).
    /// - Throws: `SyncPlanError` for a server that rolls a node back or describes a cycle.
    public func plan(_ remote: [RemoteNode], upcoming: [String: RemoteNode] = [:], restoring: Set<String> = [],
                     mode: PlanMode, state: inout PlanState) throws -> PageOutcome {
        let run = PlanRun(settings: settings, state: state, mode: mode)
        try run.plan(remote, upcoming: upcoming, restoring: restoring)
        state = run.state
        return run.outcome
    }

    /// After a full listing: local nodes with a remote id the listing did not hold are gone from
    /// the server (trashed, or below a trashed folder), and are handled as remote deletes; so are
    /// nodes removed here whose entries still wait (nothing is left for them to do).
    public func sweep(missing localIds: [String], listed: ListedIds, state: inout PlanState) throws -> PageOutcome {
        let run = PlanRun(settings: settings, state: state, mode: .listing)
        for t in run.state.tombstones.values.sorted(by: { $0.nodeId < $1.nodeId }) {
            guard let rid = t.remoteId, !listed.contains(rid) else { continue }
            for e in run.state.entries(of: t.nodeId) { run.state.drop(seq: e.seq) }
            run.deadFolders.insert(t.nodeId)
        }
        try run.settleOrphanedPlacements()
        var tops: [Node] = []
        let missing = Set(localIds)
        for id in localIds {
            guard let n = try run.state.node(id: id) else { continue }
            // Only the topmost: a missing folder takes what is below it.
            var up = n.parentId, covered = false
            while let p = up, !covered { if missing.contains(p) { covered = true }; up = try run.state.node(id: p)?.parentId }
            if !covered { tops.append(n) }
        }
        run.gone = missing
        for n in tops { try run.remoteTrash(n, remote: nil) }
        try run.settleOrphanedPlacements()
        state = run.state
        return run.outcome
    }
}

/// One planning pass: the state being changed and what it says.
final class PlanRun {
    let settings: SyncSettings
    var state: PlanState
    let mode: PlanMode
    var outcome = PageOutcome()
    /// Local ids the full listing showed gone from the server (none are moved in from a live place).
    var gone = Set<String>()
    /// Tombstoned folders the server trashed: nothing can go into them any more.
    var deadFolders = Set<String>()
    /// Remote folders whose subtree the caller listed into this page.
    var restoring = Set<String>()
    /// The newest state of every node the fetch holds (this page and the others).
    var fetched: [String: RemoteNode] = [:]
    /// Nodes of this page whose parent is not resolved yet.
    var unplanned = Set<String>()
    /// Remote folders this pass said come back (a delete of this device dropped).
    var saidBack = Set<String>()
    /// Nodes detached from their place for this page (they move on the server), with that place.
    var detached: [String: (parent: String?, name: String)] = [:]

    init(settings: SyncSettings, state: PlanState, mode: PlanMode) {
        self.settings = settings; self.state = state; self.mode = mode
    }

    func say(_ kind: SyncMessage.Kind, _ n: Node, _ text: String) throws {
        outcome.messages.append(SyncMessage(kind: kind, path: try state.path(of: n), text: text))
    }

    func plan(_ remote: [RemoteNode], upcoming: [String: RemoteNode], restoring: Set<String>) throws {
        self.restoring = restoring
        // The newest state of each node (a duplicated or reordered answer changes nothing).
        var newest: [String: RemoteNode] = [:]
        for r in remote where r.id != Node.rootId {
            if let old = newest[r.id], old.version > r.version { continue }
            newest[r.id] = r
        }
        let batch = newest.values.sorted { $0.id < $1.id }
        for r in batch { try checkRollback(r) }
        for id in restoring.sorted() { try dropDelete(remoteId: id) }

        // Trashed on the server: explicitly, or below a folder that ends up trashed (where a
        // node is on the server: as this fetch shows it, or as this device last saw it).
        var all = upcoming
        for r in batch { all[r.id] = r }
        fetched = all
        let explicitly = Set(all.values.filter(\.trashed).map(\.id))
        var trashed = explicitly
        var verdict: [String: Bool] = [:]
        func isTrashed(_ id: String) throws -> Bool {
            var chain: [String] = []
            var cur: String? = id
            var result = false
            while let c = cur, c != Node.rootId, chain.count < 10_000 {
                if let v = verdict[c] { result = v; break }
                if explicitly.contains(c) { result = true; break }
                chain.append(c)
                cur = try all[c]?.parentId ?? state.base(remoteId: c)?.parentId
            }
            for c in chain { verdict[c] = result }
            return result
        }
        for r in all.values where try isTrashed(r.id) { trashed.insert(r.id) }

        // Nodes that move on the server leave their place first, so swaps and moves out of a
        // folder trashed in the same page land where they go.
        for r in batch where !trashed.contains(r.id) { try detachIfMoving(r) }

        for r in batch where r.trashed {
            if let l = try state.node(remoteId: r.id) { try remoteTrash(l, remote: r) } else { try trashedElsewhere(r) }
        }
        for r in batch where trashed.contains(r.id) && !r.trashed {
            // Below a trashed folder: gone with it (what holds changes of this device survives).
            guard let l = try state.node(remoteId: r.id) else { try trashedElsewhere(r); continue }
            try remoteTrash(l, remote: r)
        }

        var todo = batch.filter { !trashed.contains($0.id) }
        unplanned = Set(todo.map(\.id))
        while !todo.isEmpty {
            var waiting: [RemoteNode] = []
            for r in todo {
                switch try resolveParent(r, upcoming: upcoming, batch: newest) {
                case .local(let p):
                    unplanned.remove(r.id)
                    try apply(r, parent: p)
                case .waits:
                    waiting.append(r)
                case .deleted(let top):
                    unplanned.remove(r.id)
                    try underLocalDelete(r, top: top)
                }
            }
            if waiting.count == todo.count {
                outcome.deferred = waiting
                break
            }
            todo = waiting
        }
        // Nodes detached for a move whose new folder is not known yet go back to their place.
        for (id, place) in detached {
            guard var n = try state.node(id: id), n.parentId == nil else { continue }
            n.parentId = place.parent
            n.name = try freeName(place.name, in: place.parent ?? Node.rootId, for: n.id)
            state.put(n)
        }
        try settle()
    }

    // MARK: - Checks

    /// A server that shows a node older than this device has seen it is rolling it back.
    func checkRollback(_ r: RemoteNode) throws {
        guard let b = try state.base(remoteId: r.id) else { return }
        if let seq = r.record?.seq, seq < b.recordSeq {
            throw SyncPlanError("the server rolled back \(b.name) (its record is older than one this device has seen)")
        }
        if let c = r.content, c.seq < b.contentSeq {
            throw SyncPlanError("the server rolled back the content of \(b.name) (an older version than one this device has seen)")
        }
        if r.version < b.version {
            throw SyncPlanError("the server rolled back \(b.name) (version \(r.version) after \(b.version))")
        }
    }

    // MARK: - Parents

    enum Parent { case local(String), waits, deleted(Tombstone) }

    /// Where a remote node's parent is on this device.
    func resolveParent(_ r: RemoteNode, upcoming: [String: RemoteNode], batch: [String: RemoteNode]) throws -> Parent {
        guard let p = r.parentId else { return .local(Node.rootId) }
        if p == Node.rootId { return .local(Node.rootId) }
        if let n = try state.node(remoteId: p) { return n.isFolder ? .local(n.id) : .waits }
        if let own = try ownCreation(remoteId: p) { return .local(own.id) }
        switch try holder(of: p) {
        case .deleted(let t):
            // A folder whose delete this pass drops (it was listed to come back): it comes back.
            if let rid = t.remoteId, restoring.contains(rid) {
                try dropDelete(remoteId: rid)
                return try resolveParent(r, upcoming: upcoming, batch: batch)
            }
            return .deleted(t)
        case .unplanned:
            return .waits
        case .none:
            break
        }
        if batch[p] != nil || upcoming[p] != nil { return .waits }
        return mode == .listing ? .local(p) : .waits
    }

    /// The local node whose creation this device sent with remote id `remoteId` without
    /// recording the answer (its outbox entry carries the id it chose).
    func ownCreation(remoteId: String) throws -> Node? {
        for e in state.outbox where (e.op == .createFolder || e.op == .upload) && e.payload.clientId == remoteId {
            if let n = try state.node(id: e.nodeId), n.remoteId == nil { return n }
        }
        return nil
    }

    /// What holds, on the server, a node of this page (`deletedAncestor`, and whether the answer
    /// waits for a folder of this page still to be planned).
    enum Holder { case deleted(Tombstone), unplanned, none }

    /// The tombstone of a folder this device removed (entries of it still to replay) that holds
    /// the node with remote id `start` (the node itself or an ancestor): on the server now (a
    /// folder this fetch shows is where the fetch puts it; the others as last seen), or, with
    /// `asLastSeen`, as this device last saw the server (what it removed with the folder).
    func deletedAncestor(startingAt start: String, asLastSeen: Bool = false) throws -> Tombstone? {
        if case .deleted(let t) = try holder(of: start, asLastSeen: asLastSeen) { return t }
        return nil
    }

    /// Walks up from `start` to the first folder removed here (`.deleted`) or present here. On the
    /// server now, a folder of this page not planned yet stops the walk (`.unplanned`): whether it
    /// is removed here too (moved out of a folder deleted here: deleted where it went) or comes
    /// back decides what holds what is below it. Following its old place instead found the folder
    /// it left, and the outcome depended on which of the two was planned first (seed 12226: a
    /// folder created in a folder moved out of one deleted here never arrived).
    func holder(of start: String, asLastSeen: Bool = false) throws -> Holder {
        var id: String? = start
        var steps = 0
        while let cur = id, cur != Node.rootId, steps < 10_000 {
            if let t = state.tombstone(remoteId: cur), !state.entries(of: t.nodeId).isEmpty { return .deleted(t) }
            if try state.node(remoteId: cur) != nil { return .none }
            if asLastSeen {
                id = try state.base(remoteId: cur)?.parentId
            } else {
                if unplanned.contains(cur) { return .unplanned }
                id = try fetched[cur]?.parentId ?? state.base(remoteId: cur)?.parentId
            }
            steps += 1
        }
        return .none
    }

    func dropBaseTree(_ remoteId: String) {
        var queue = [remoteId]
        var seen = Set<String>()
        while let id = queue.popLast(), seen.insert(id).inserted {
            queue += ((try? state.baseChildren(of: id)) ?? []).map(\.remoteId)
            state.dropBase(id)
        }
    }
}
