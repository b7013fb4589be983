/// One change to a device's stored state. A plan's actions are applied in one transaction, in
/// this order (see `PlanState.apply`): nodes that move are first detached, blobs change owner,
/// removed nodes go (children first), then nodes are written in order (parents first), then
/// bases, outbox entries and tombstones.
public enum PlanAction: Sendable, Equatable {
    /// Insert or replace a node row.
    case put(Node)
    /// Remove a node row (with its blobs, revisions and transfers).
    case remove(String)
    case setBase(RemoteBase)
    case dropBase(String)
    /// A new outbox entry, stored with its number (above every number the store ever gave).
    case append(OutboxEntry)
    case updateEntry(OutboxEntry)
    case dropEntry(Int64)
    case setTombstone(Tombstone)
    case dropTombstone(String)
    /// Blob `blobId` now belongs to node `nodeId` (a conflict copy takes the local content).
    case giveBlob(blobId: String, nodeId: String)
}

extension PlanState {
    /// The actions that turn `old` (an earlier snapshot of this state, over the same view) into this one.
    public func actions(since old: PlanState) throws -> [PlanAction] {
        var out: [PlanAction] = []
        for (blob, owner) in blobOwners.sorted(by: { $0.key < $1.key }) where old.blobOwners[blob] != owner {
            out.append(.giveBlob(blobId: blob, nodeId: owner))
        }
        // Nodes: removed ones deepest first, written ones parents first.
        let candidates = Set(old.nodes.keys).union(nodes.keys).union(removed.subtracting(old.removed))
        var gone: [(depth: Int, id: String)] = []
        var written: [Node] = []
        for id in candidates.sorted() {
            let before = try old.node(id: id), after = try node(id: id)
            if before == after { continue }
            if let after { written.append(after) } else if let before { gone.append((try old.depth(before), id)) }
        }
        out += gone.sorted { ($0.depth, $0.id) > ($1.depth, $1.id) }.map { .remove($0.id) }
        out += Self.parentsFirst(written).map { .put($0) }
        for key in Set(old.bases.keys).union(bases.keys).sorted() {
            let before = try old.base(remoteId: key), after = try base(remoteId: key)
            if before == after { continue }
            out.append(after.map { .setBase($0) } ?? .dropBase(key))
        }
        let oldEntries = Dictionary(old.outbox.map { ($0.seq, $0) }, uniquingKeysWith: { $1 })
        let newSeqs = Set(outbox.map(\.seq))
        for e in old.outbox where !newSeqs.contains(e.seq) { out.append(.dropEntry(e.seq)) }
        for e in outbox {
            if let before = oldEntries[e.seq] { if before != e { out.append(.updateEntry(e)) } } else { out.append(.append(e)) }
        }
        for id in Set(old.tombstones.keys).union(tombstones.keys).sorted() where old.tombstones[id] != tombstones[id] {
            out.append(tombstones[id].map { .setTombstone($0) } ?? .dropTombstone(id))
        }
        return out
    }

    /// Applies actions (made by `actions(since:)` from a state equal to this one) in the order a
    /// store applies them.
    public mutating func apply(_ actions: [PlanAction]) throws {
        for case .put(let n) in actions {
            if var old = try node(id: n.id), old.parentId != n.parentId || old.name != n.name {
                old.parentId = nil
                put(old)
            }
        }
        for case let .giveBlob(blob, owner) in actions { giveBlob(blob, to: owner) }
        for case .remove(let id) in actions { try remove(id) }
        for case .put(let n) in actions { put(n) }
        for a in actions {
            switch a {
            case .setBase(let b): setBase(b)
            case .dropBase(let r): dropBase(r)
            case .dropEntry(let seq): drop(seq: seq)
            case .updateEntry(let e): update(e)
            case .append(let e): insert(e)
            case .setTombstone(let t): setTombstone(t)
            case .dropTombstone(let id): dropTombstone(id)
            case .put, .remove, .giveBlob: break
            }
        }
    }

    func depth(_ n: Node) throws -> Int {
        var d = 0
        var cur = n.parentId
        while let c = cur, d < 10_000 { d += 1; cur = try node(id: c)?.parentId }
        return d
    }

    /// `nodes` ordered so that a node whose parent is also in the list comes after it.
    static func parentsFirst(_ nodes: [Node]) -> [Node] {
        let byId = Dictionary(nodes.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        var done = Set<String>()
        var out: [Node] = []
        func visit(_ n: Node, _ depth: Int) {
            guard !done.contains(n.id) else { return }
            done.insert(n.id)
            if depth < 10_000, let p = n.parentId, let parent = byId[p] { visit(parent, depth + 1) }
            out.append(n)
        }
        for n in nodes { visit(n, 0) }
        return out
    }
}
