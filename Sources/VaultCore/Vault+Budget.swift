import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The content budget, applied whenever content arrives in the cache (a download by cat, get,
/// pin or sync; an upload moving staged content to the cache) and by `vault evict`. The policy
/// itself is `CacheBudget.plan`; this file feeds it the cache and carries out its plan.
extension Vault {
    /// Fits the cache to the content budget after content arrived in it: evicts least recently
    /// used, unpinned cached content, never the nodes in `keeping` (the content being read, or
    /// just received, which is also stamped as used at `now`, by default the current time). When the cache cannot fit (pinned
    /// content alone, or the kept file, exceeds the budget) everything is kept and `message` says
    /// what to do, the first time in this command only (warn once). Nothing happens without a
    /// budget or on a read-only vault.
    @discardableResult
    public func applyBudget(keeping keep: Set<String> = [], now: Int64? = nil) throws -> EvictionResult {
        guard !isReadOnly else { return EvictionResult(evicted: [], freedBytes: 0, message: nil) }
        for id in keep { recordAccess(id, now: now ?? Vault.now) }
        guard let budget = try contentBudget() else { return EvictionResult(evicted: [], freedBytes: 0, message: nil) }
        var result = try fitBudget(budget, keeping: keep)
        if result.message != nil {
            if budgetWarningGiven { result.message = nil } else { budgetWarningGiven = true }
        }
        return result
    }

    /// `vault evict` with no paths: fits the cache to the budget now, and always says why it could not.
    public func enforceBudget() throws -> EvictionResult {
        guard let budget = try contentBudget() else {
            return EvictionResult(evicted: [], freedBytes: 0, message: "no content budget is set (vault storage --budget SIZE)")
        }
        return try fitBudget(budget, keeping: [])
    }

    private func fitBudget(_ budget: UInt64, keeping keep: Set<String>) throws -> EvictionResult {
        let plan = CacheBudget.plan(items: try cachedItems(), budget: budget, keep: keep.union(keep.map { Self.partialItem + $0 }))
        var result = EvictionResult(evicted: [], freedBytes: 0, message: nil)
        for id in plan.evict {
            if id.hasPrefix(Self.partialItem) {
                let nodeId = String(id.dropFirst(Self.partialItem.count))
                guard let n = try node(id: nodeId) else { continue }
                result.freedBytes += try discardPartials(of: nodeId)
                result.evicted.append(try path(of: n))
                continue
            }
            guard let n = try node(id: id), let freed = try evictContent(of: n) else { continue }
            result.evicted.append(try path(of: n))
            result.freedBytes += freed
        }
        if let shortfall = plan.shortfall {
            result.message = try describe(shortfall, used: plan.usedAfter, budget: budget, keep: keep)
        }
        return result
    }

    /// Every blob in the cache, as the budget policy sees it: a node's head content is evictable;
    /// an older revision's blob counts but stays.
    func cachedItems() throws -> [CacheBudget.Item] {
        try blobsTable.cacheItems().map { b in
            CacheBudget.Item(nodeId: b.head ? (b.nodeId ?? "") : "blob:" + b.id, bytes: UInt64(max(0, b.sealedSize)),
                             lastUsed: b.lastUsed, pinned: b.pinned, evictable: b.head)
        } + partialItems()
    }

    /// How the budget names the sparse partial of a node (content fetched on demand by the
    /// mount, not complete yet), beside its cached content.
    static let partialItem = "partial:"

    /// The sparse partials in `tmp/` (docs/mount.md "Reading"), counted at the bytes they hold
    /// on disk (their holes are free) and last used when their download row last changed. One
    /// of a file being read is kept (`keeping` names the node, and a mount of any process holds
    /// it open); any other is discarded when the budget needs the room, and fetched again if it
    /// is read again.
    func partialItems() throws -> [CacheBudget.Item] {
        try transfersTable.ofExistingFiles(unfinishedOnly: true).compactMap { t in
            guard t.direction == .download, let blob = t.blobId else { return nil }
            let path = layout.tempDirectory + "/" + blob + ".sparse"
            var st = stat()
            guard stat(path, &st) == 0 else { return nil }
            return CacheBudget.Item(nodeId: Self.partialItem + t.nodeId, bytes: UInt64(max(0, st.st_blocks)) * 512, lastUsed: t.updatedAt,
                                    pinned: false, evictable: !Self.partialInUse(path))
        }
    }

    /// Whether a process has the partial at `path` open (a `SparseContent` holds a shared
    /// `flock` on it): a mount reading it, in this process or another, so no budget drops it.
    static func partialInUse(_ path: String) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        return flock(fd, LOCK_EX | LOCK_NB) != 0
    }

    /// Drops the sparse partials of `nodeId` and their download rows; returns the bytes freed.
    func discardPartials(of nodeId: String) throws -> UInt64 {
        var freed: UInt64 = 0
        for t in try transfersTable.ofExistingFiles(unfinishedOnly: true) where t.nodeId == nodeId && t.direction == .download {
            guard let blob = t.blobId else { continue }
            let path = layout.tempDirectory + "/" + blob + ".sparse"
            var st = stat()
            guard stat(path, &st) == 0, !Self.partialInUse(path) else { continue }
            freed += UInt64(max(0, st.st_blocks)) * 512
            unlink(path); SparseSegmentMap.remove(for: path)
            try transfersTable.delete(id: t.id)
        }
        return freed
    }

    private func describe(_ shortfall: CacheBudget.Shortfall, used: UInt64, budget: UInt64, keep: Set<String>) throws -> String {
        let over = "the cache (\(ByteCount.format(used))) exceeds the content budget (\(ByteCount.format(budget)))"
        switch shortfall {
        case .pinnedAlone(let pinned):
            return "\(over): pinned content alone is \(ByteCount.format(pinned)), and pinned content is never evicted; unpin something (`vault unpin PATH`) or raise the budget (`vault storage --budget SIZE`)"
        case .kept(let kept):
            let paths = try keep.sorted().compactMap { try node(id: $0) }.map { try path(of: $0) }.joined(separator: ", ")
            return "\(over): \(paths) (\(ByteCount.format(kept))) was kept because it is in use, and does not fit beside the pinned content; raise the budget (`vault storage --budget SIZE`), or `vault evict \(paths)` when you are done with it"
        case .unevictable:
            return "\(over): the rest is pinned or older revisions' content, which is never evicted; raise the budget (`vault storage --budget SIZE`)"
        }
    }
}
