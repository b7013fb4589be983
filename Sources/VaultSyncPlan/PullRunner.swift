/// One page of the change feed, decoded.
public struct ChangesPage: Sendable {
    public var nodes: [RemoteNode]
    public var nextCursor: Int64
    public var hasMore: Bool
    /// The page's nodes that do not authenticate (`RefusedNode`): never planned.
    public var refused: [RefusedNode]
    public init(nodes: [RemoteNode], nextCursor: Int64, hasMore: Bool, refused: [RefusedNode] = []) {
        self.nodes = nodes; self.nextCursor = nextCursor; self.hasMore = hasMore; self.refused = refused
    }
}

/// One page of the full listing of live nodes, decoded.
public struct ListingPage: Sendable {
    public var nodes: [RemoteNode]
    /// The token of the next page; nil on the last.
    public var next: String?
    /// The page's nodes that do not authenticate (`RefusedNode`): never planned.
    public var refused: [RefusedNode]
    public init(nodes: [RemoteNode], next: String?, refused: [RefusedNode] = []) {
        self.nodes = nodes; self.next = next; self.refused = refused
    }
}

/// Where a pull reads the server (the API through the codec, or the simulated server).
public protocol PullSource {
    /// The feed's current cursor (taken before a full listing).
    func startCursor() throws -> Int64
    /// The changes after `cursor`; nil when the cursor expired (410).
    func changes(after cursor: Int64) throws -> ChangesPage?
    /// A page of the full listing of live nodes, and the token of the next page.
    func listing(after token: String?) throws -> ListingPage
    /// Folder `remoteId` and every live node below it.
    func subtree(of remoteId: String) throws -> [RemoteNode]
}

/// Where a pull writes: the local state, changed one transaction at a time.
public protocol PullStore {
    /// The stored cursor, nil before the first pull.
    func cursor() throws -> Int64?
    /// The local state to plan on (over the stored view, with the outbox and tombstones).
    func planState() throws -> PlanState
    /// Applies `actions` and stores `cursor` (when given) in one transaction.
    func apply(_ actions: [PlanAction], cursor: Int64?) throws
    /// A full listing is applied inside one transaction: begin it (true when the vault holds
    /// nothing but its root: every node the listing writes is new, so none can be missing from
    /// it and the runner keeps no record of what it listed)...
    @discardableResult func beginListing() throws -> Bool
    /// ... and end it: committed (after checking that every node has a parent and no folder is
    /// inside itself), or rolled back.
    func endListing(commit: Bool) throws
    /// Local ids of nodes with a remote id that is not in `listed`.
    func missing(listed: ListedIds) throws -> [String]
    /// The remote ids in the quarantine (nodes refused by an earlier pull, not cleared since).
    func quarantined() throws -> Set<String>
    /// Puts `refused` in the quarantine (with the time seen) and takes `clearing` out of it, in one
    /// transaction (inside a listing's, during one).
    func quarantine(_ refused: [RefusedNode], clearing: Set<String>) throws
}

/// What a pull did.
public struct PullResult: Sendable {
    public var messages: [SyncMessage] = []
    /// Remote nodes applied.
    public var applied = 0
    /// Local nodes removed because the server removed them.
    public var removed = 0
    /// Whether the full listing was used (first pull, or an expired cursor).
    public var listed = false
    /// Nodes this pull refused (not applied; now in the quarantine).
    public var refused: [RefusedNode] = []
    public init() {}
}

/// The pull stopped before applying anything: it would remove more than the guard allows.
public struct DeleteGuardTripped: Error, Sendable {
    public var wouldRemove: Int
    public var treeSize: Int
    public var limit: Int
}

/// The pull's control flow (docs/sync.md, "Pull"): the change feed from the stored cursor (or the
/// full listing the first time and after a 410), every page decoded and planned before anything
/// is applied (an integrity error or the delete guard stops it with nothing applied), then each
/// page applied in its own transaction with its cursor. A node that does not authenticate is
/// refused and quarantined, the rest applied; a node planned below a refused or quarantined
/// folder stops the pull (the rest depends on that folder).
public struct PullRunner {
    public var planner: SyncPlanner
    /// The most local nodes a pull may remove without `force` (`--max-delete`).
    public var maxDelete: Int
    public var force: Bool

    public init(planner: SyncPlanner, maxDelete: Int = 1000, force: Bool = false) {
        self.planner = planner; self.maxDelete = maxDelete; self.force = force
    }

    /// Whether removing `n` of a tree of `size` nodes needs `--force`: more than `maxDelete`, or
    /// more than half of a tree when that is more than 20 nodes.
    public func guardTrips(removing n: Int, of size: Int) -> Bool {
        !force && (n > maxDelete || (n > 20 && n * 2 > size))
    }

    public func run(_ source: PullSource, _ store: PullStore) throws -> PullResult {
        if let cursor = try store.cursor(), let first = try source.changes(after: cursor) {
            return try pullChanges(from: cursor, first: first, source, store)
        }
        return try pullListing(source, store)
    }

    private func pullChanges(from cursor: Int64, first: ChangesPage, _ source: PullSource, _ store: PullStore) throws -> PullResult {
        var pages = [first]
        while let last = pages.last, last.hasMore {
            guard let next = try source.changes(after: last.nextCursor) else { return try pullListing(source, store) }
            pages.append(next)
        }
        // Each node is planned in the page of its last change; one whose last change is refused
        // is not planned.
        var lastPage: [String: Int] = [:]
        for (i, p) in pages.enumerated() { for n in p.nodes { lastPage[n.id] = i } }
        let refused = Self.lastRefused(pages, lastPage)
        for r in refused { lastPage[r.id] = nil }
        var final: [String: RemoteNode] = [:]
        for p in pages { for n in p.nodes where lastPage[n.id] != nil { final[n.id] = n } }
        // A later valid record of a quarantined node clears it.
        let held = try store.quarantined()
        let cleared = held.filter { final[$0] != nil }
        try Self.checkNothingBelow(Set(refused.map(\.id)).union(held.subtracting(cleared)), final.values)

        var state = try store.planState()
        // A node that ends up below a folder a later page trashes is planned with that page, and
        // the pages between are applied together with it (one transaction, that page's cursor):
        // applied apart, a crash between them would leave what the later page names below the
        // node unknown.
        var holdsUntil = Array(repeating: -1, count: pages.count)
        for id in lastPage.keys.sorted() {
            let own = lastPage[id]!
            guard let t = try Self.trashPage(of: id, final, lastPage, state), t > own else { continue }
            lastPage[id] = t
            for k in own..<t { holdsUntil[k] = max(holdsUntil[k], t) }
        }
        var byPage: [Int: [String]] = [:]
        for (id, p) in lastPage.sorted(by: { $0.key < $1.key }) { byPage[p, default: []].append(id) }
        let size = try state.view.nodeCount() - 1   // items, the root not counted
        var result = PullResult()
        var plans: [([PlanAction], Int64)] = []
        var committed = state
        var carried: [RemoteNode] = []
        var pulledForward = Set<String>()
        for (i, page) in pages.enumerated() {
            let isLast = i == pages.count - 1
            var remote = carried + (byPage[i] ?? []).filter { !pulledForward.contains($0) }.map { final[$0]! }
            // A node that a later page moves out of a folder this page trashes is planned here,
            // before the trash takes it.
            let trashedNow = Set(remote.filter(\.trashed).map(\.id))
            if !trashedNow.isEmpty {
                for (id, p) in lastPage.sorted(by: { $0.key < $1.key }) where p > i && !pulledForward.contains(id) {
                    guard let f = final[id], !f.trashed, try Self.base(of: id, within: trashedNow, state) else { continue }
                    remote.append(f)
                    pulledForward.insert(id)
                }
            }
            // Every other node of the fetch, as it ends up (earlier pages' too: a child planned here
            // may sit below a folder that an earlier page trashed).
            var upcoming = final
            for n in remote { upcoming[n.id] = nil }
            var restoring = Set<String>()
            while true {
                var attempt = state
                let out = try planner.plan(remote, upcoming: upcoming, restoring: restoring, mode: .changes, state: &attempt)
                let more = out.needSubtrees.filter { !restoring.contains($0) }
                if !more.isEmpty && restoring.count < 64 {
                    for id in more { remote += try source.subtree(of: id); restoring.insert(id) }
                    continue
                }
                if isLast { attempt.retryConflicts() }
                if holdsUntil[i] <= i {
                    // One diff for the pages held together (a store may order one batch's
                    // removals before its additions).
                    plans.append((try attempt.actions(since: committed), page.nextCursor))
                    committed = attempt
                }
                state = attempt
                carried = out.deferred
                result.messages += out.messages
                result.removed += out.removed
                result.applied += remote.count - out.deferred.count
                break
            }
        }
        if !carried.isEmpty {
            let first = carried.min { $0.id < $1.id }!
            throw SyncPlanError("the change feed names \(carried.count) node(s) in a folder it never shows, such as \(first.id) in \(first.parentId ?? "-") (the server hid or invented a folder)")
        }
        if guardTrips(removing: result.removed, of: size) {
            throw DeleteGuardTripped(wouldRemove: result.removed, treeSize: size, limit: maxDelete)
        }
        if !refused.isEmpty || !cleared.isEmpty { try store.quarantine(refused, clearing: cleared) }
        result.refused = refused
        for (actions, next) in plans { try store.apply(actions, cursor: next) }
        if plans.isEmpty { try store.apply([], cursor: cursor) }
        return result
    }

    /// The nodes whose last change in `pages` is refused (after their last valid one, if any), by id.
    static func lastRefused(_ pages: [ChangesPage], _ lastPage: [String: Int]) -> [RefusedNode] {
        var last: [String: (page: Int, node: RefusedNode)] = [:]
        for (i, p) in pages.enumerated() { for r in p.refused { last[r.id] = (i, r) } }
        return last.filter { $0.value.page >= (lastPage[$0.key] ?? -1) }.map(\.value.node).sorted { $0.id < $1.id }
    }

    /// Stops the pull when a node to apply sits in a folder that was refused: the rest of the tree
    /// depends on that folder, which this device will not apply.
    static func checkNothingBelow(_ refused: Set<String>, _ nodes: some Sequence<RemoteNode>) throws {
        guard !refused.isEmpty else { return }
        let below = nodes.filter { $0.parentId.map(refused.contains) ?? false }
        guard let first = below.min(by: { $0.id < $1.id }) else { return }
        throw SyncPlanError("\(below.count) node(s) are in a folder the server sent without a record this vault can authenticate, such as \(first.id) in \(first.parentId ?? "-") (refused: the rest depends on it)")
    }

    /// The page that trashes a folder above node `id` (where a node is: as the fetch leaves it,
    /// else as the device last saw it).
    static func trashPage(of id: String, _ final: [String: RemoteNode], _ lastPage: [String: Int], _ state: PlanState) throws -> Int? {
        var cur = try final[id]?.parentId ?? state.base(remoteId: id)?.parentId
        var steps = 0
        while let c = cur, c != Node.rootId, steps < 10_000 {
            if let f = final[c], f.trashed { return lastPage[c] }
            cur = try final[c]?.parentId ?? state.base(remoteId: c)?.parentId
            steps += 1
        }
        return nil
    }

    /// Whether, as the device last saw the server, node `id` is below one of `folders`.
    static func base(of id: String, within folders: Set<String>, _ state: PlanState) throws -> Bool {
        var cur = try state.base(remoteId: id)?.parentId
        var steps = 0
        while let c = cur, steps < 10_000 {
            if folders.contains(c) { return true }
            cur = try state.base(remoteId: c)?.parentId
            steps += 1
        }
        return false
    }

    private func pullListing(_ source: PullSource, _ store: PullStore) throws -> PullResult {
        var restoring = Set<String>()
        while true {
            if let done = try listingAttempt(source, store, restoring: &restoring) { return done }
        }
    }

    /// One pass over the full listing in one transaction; nil (rolled back) when a delete of this
    /// device turned out to need dropping (`restoring` then holds it, for the next pass).
    private func listingAttempt(_ source: PullSource, _ store: PullStore, restoring: inout Set<String>) throws -> PullResult? {
        let start = try source.startCursor()
        var result = PullResult()
        result.listed = true
        // Into an empty vault, every node with a server id is one this listing wrote: none can be
        // missing, and there are no tombstones, so the listed ids (16 MB at 1,000,000 nodes) are
        // not kept.
        let fresh = try store.beginListing()
        var committed = false
        defer { if !committed { try? store.endListing(commit: false) } }
        var listed = ListedIds()
        var token: String?
        var size = 0
        var refused: [RefusedNode] = []
        var parents = Set<String>()
        repeat {
            let page = try source.listing(after: token)
            // A refused node counts as listed: what this device has of it stays as it is.
            refused += page.refused
            if !fresh { for r in page.refused { listed.insert(r.id) } }
            token = page.next
            var state = try store.planState()
            if size == 0 { size = try state.view.nodeCount() - 1 }
            let before = state
            let out = try planner.plan(page.nodes, restoring: restoring, mode: .listing, state: &state)
            let more = out.needSubtrees.filter { !restoring.contains($0) }
            if !more.isEmpty && restoring.count < 64 {
                restoring.formUnion(more)
                return nil
            }
            try store.apply(try state.actions(since: before), cursor: nil)
            for n in page.nodes {
                if !fresh { listed.insert(n.id) }
                if let p = n.parentId { parents.insert(p) }
            }
            result.messages += out.messages
            result.applied += page.nodes.count
        } while token != nil
        // The listing is the whole tree: the quarantine becomes what it refused.
        let refusedIds = Set(refused.map(\.id))
        if let p = parents.intersection(refusedIds).min() {
            throw SyncPlanError("the listing holds node(s) in folder \(p), which the server sent without a record this vault can authenticate (refused: the rest depends on it)")
        }
        let held = try store.quarantined()
        if !refused.isEmpty || !held.isEmpty { try store.quarantine(refused, clearing: held.subtracting(refusedIds)) }
        result.refused = refused
        var state = try store.planState()
        let before = state
        let out = try planner.sweep(missing: fresh ? [] : try store.missing(listed: listed), listed: listed, state: &state)
        state.retryConflicts()
        result.messages += out.messages
        result.removed = out.removed
        if guardTrips(removing: out.removed, of: size) {
            throw DeleteGuardTripped(wouldRemove: out.removed, treeSize: size, limit: maxDelete)
        }
        try store.apply(try state.actions(since: before), cursor: start)
        try store.endListing(commit: true)
        committed = true
        return result
    }
}
