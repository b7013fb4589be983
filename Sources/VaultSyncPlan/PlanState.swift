/// A device's local state as the planner changes it: an overlay of new, changed and removed
/// nodes, bases, outbox entries and tombstones over a read-only `LocalView`. A value: copying it
/// is a snapshot (copy-on-write), and `actions(since:)` turns the difference between two
/// snapshots into the `PlanAction`s that make the same change to the stored state.
///
/// Over an empty view it is the whole state of a simulated device.
public struct PlanState {
    public let view: any LocalView
    /// New or changed nodes, by local id.
    private(set) var nodes: [String: Node] = [:]
    /// Nodes of the view that are gone.
    private(set) var removed: Set<String> = []
    /// Folder id → name → id, for the nodes of the overlay.
    private var index: [String: [String: String]] = [:]
    /// Remote id → local id, for the nodes of the overlay.
    private var byRemote: [String: String] = [:]
    /// Changed bases by remote id (nil: dropped).
    private(set) var bases: [String: RemoteBase?] = [:]
    public private(set) var outbox: [OutboxEntry]
    public private(set) var tombstones: [String: Tombstone]
    /// Blobs given to another node than the one that had them (blob id → node id).
    public private(set) var blobOwners: [String: String] = [:]
    private var nextSeq: Int64

    /// - Parameter nextSeq: the number the store gives its next outbox entry (at least one more
    ///   than any entry it ever held), so entries this state appends keep their numbers when stored.
    public init(view: any LocalView, outbox: [OutboxEntry], tombstones: [Tombstone], nextSeq: Int64 = 1) {
        self.view = view
        self.outbox = outbox.sorted { $0.seq < $1.seq }
        self.tombstones = Dictionary(tombstones.map { ($0.nodeId, $0) }, uniquingKeysWith: { $1 })
        self.nextSeq = max(nextSeq, (outbox.map(\.seq).max() ?? 0) + 1)
    }

    // MARK: - Lookups

    public func node(id: String) throws -> Node? {
        if let n = nodes[id] { return n }
        if removed.contains(id) { return nil }
        return try view.node(id: id)
    }

    public func node(remoteId: String) throws -> Node? {
        if remoteId == Node.rootId { return try node(id: Node.rootId) }
        if let id = byRemote[remoteId], let n = nodes[id], n.remoteId == remoteId { return n }
        guard let n = try view.node(remoteId: remoteId), !removed.contains(n.id) else { return nil }
        if let changed = nodes[n.id] { return changed.remoteId == remoteId ? changed : nil }
        return n
    }

    /// The node at slash-separated `path` from the root ("a/b.txt"; "" is the root), nil when a
    /// part of it is missing.
    public func node(atPath path: String) throws -> Node? {
        guard var cur = try node(id: Node.rootId) else { return nil }
        for part in path.split(separator: "/") {
            guard let next = try child(of: cur.id, named: String(part)) else { return nil }
            cur = next
        }
        return cur
    }

    public func child(of parentId: String, named name: String) throws -> Node? {
        if let id = index[parentId]?[name], let n = nodes[id] { return n }
        guard let n = try view.child(of: parentId, named: name), nodes[n.id] == nil, !removed.contains(n.id) else { return nil }
        return n
    }

    public func children(of parentId: String) throws -> [Node] {
        var out = try view.children(of: parentId).filter { nodes[$0.id] == nil && !removed.contains($0.id) }
        for id in (index[parentId] ?? [:]).values.sorted() { if let n = nodes[id] { out.append(n) } }
        return out
    }

    /// Everything below folder `id`, parents before children.
    public func descendants(of id: String) throws -> [Node] {
        var out: [Node] = []
        var queue = [id]
        while let f = queue.popLast() {
            for c in try children(of: f) {
                out.append(c)
                if c.isFolder { queue.append(c.id) }
            }
        }
        return out
    }

    /// The vault path of a node ("/a/b"); a node outside the tree shows its name alone.
    public func path(of n: Node) throws -> String {
        var parts: [String] = []
        var cur: Node? = n
        var guardSteps = 0
        while let c = cur, c.id != Node.rootId, guardSteps < 10_000 {
            parts.append(c.name)
            cur = try c.parentId.flatMap { try node(id: $0) }
            guardSteps += 1
        }
        return "/" + parts.reversed().joined(separator: "/")
    }

    /// Whether `id` is `ancestor` or below it.
    public func isWithin(_ id: String, _ ancestor: String) throws -> Bool {
        var cur: String? = id
        var steps = 0
        while let c = cur, steps < 10_000 {
            if c == ancestor { return true }
            cur = try node(id: c)?.parentId
            steps += 1
        }
        return false
    }

    public func base(remoteId: String) throws -> RemoteBase? {
        if let b = bases[remoteId] { return b }
        return try view.base(remoteId: remoteId)
    }

    public func baseChildren(of remoteId: String) throws -> [RemoteBase] {
        var out = try view.baseChildren(of: remoteId).filter { bases[$0.remoteId] == nil }
        for case let (_, b?) in bases where b.parentId == remoteId { out.append(b) }
        return out
    }

    public func entries(of nodeId: String) -> [OutboxEntry] { outbox.filter { $0.nodeId == nodeId } }

    public func tombstone(remoteId: String) -> Tombstone? { tombstones.values.first { $0.remoteId == remoteId } }

    // MARK: - Changes

    /// Inserts or replaces a node.
    public mutating func put(_ n: Node) {
        if let old = nodes[n.id] {
            if let p = old.parentId, index[p]?[old.name] == n.id { index[p]?[old.name] = nil }
            if let r = old.remoteId, byRemote[r] == n.id { byRemote[r] = nil }
        }
        nodes[n.id] = n
        removed.remove(n.id)
        if let p = n.parentId { index[p, default: [:]][n.name] = n.id }
        if let r = n.remoteId { byRemote[r] = n.id }
    }

    /// Removes a node (its children must be gone first).
    public mutating func remove(_ id: String) throws {
        let inView = try view.node(id: id) != nil
        if let old = nodes.removeValue(forKey: id) {
            if let p = old.parentId, index[p]?[old.name] == id { index[p]?[old.name] = nil }
            if let r = old.remoteId, byRemote[r] == id { byRemote[r] = nil }
        }
        if inView { removed.insert(id) }
    }

    public mutating func setBase(_ b: RemoteBase) { bases[b.remoteId] = .some(b) }
    public mutating func dropBase(_ remoteId: String) { bases[remoteId] = .some(nil) }

    /// Appends an entry; returns its (provisional) sequence number.
    @discardableResult
    public mutating func append(_ op: OutboxOp, nodeId: String, payload: OutboxPayload, baseVersion: Int64?, requestId: String) -> Int64 {
        let seq = nextSeq
        nextSeq += 1
        outbox.append(OutboxEntry(seq: seq, op: op, nodeId: nodeId, payload: payload, baseVersion: baseVersion, requestId: requestId))
        return seq
    }

    /// Re-appends an existing entry at the end (it keeps its request id); returns its new number.
    @discardableResult
    public mutating func moveToEnd(_ seq: Int64) -> Int64? {
        guard let i = outbox.firstIndex(where: { $0.seq == seq }) else { return nil }
        var e = outbox.remove(at: i)
        e.seq = nextSeq
        nextSeq += 1
        outbox.append(e)
        return e.seq
    }

    /// Stores an entry made elsewhere with its own number (a plan's appended entry).
    public mutating func insert(_ e: OutboxEntry) {
        outbox.removeAll { $0.seq == e.seq }
        let i = outbox.firstIndex { $0.seq > e.seq } ?? outbox.endIndex
        outbox.insert(e, at: i)
        nextSeq = max(nextSeq, e.seq + 1)
    }

    public mutating func update(_ e: OutboxEntry) {
        if let i = outbox.firstIndex(where: { $0.seq == e.seq }) { outbox[i] = e }
    }

    public mutating func drop(seq: Int64) { outbox.removeAll { $0.seq == seq } }

    public mutating func setTombstone(_ t: Tombstone) { tombstones[t.nodeId] = t }
    public mutating func dropTombstone(_ nodeId: String) { tombstones[nodeId] = nil }

    /// Tombstones no entry needs any more: none of their own, and none naming them as a folder.
    public mutating func dropSpentTombstones() {
        for id in tombstones.keys where !outbox.contains(where: { $0.nodeId == id || $0.payload.parentId == id }) {
            tombstones[id] = nil
        }
    }

    public mutating func giveBlob(_ blobId: String, to nodeId: String) { blobOwners[blobId] = nodeId }
}
