/// The content budget policy (README "Storage"), as pure logic: which cached content to evict so
/// that the cache fits its budget. Least recently used first; never pinned content, never the
/// content a command is reading or has just received (`keep`). Staged content (not yet uploaded)
/// is not cached content and never reaches this policy.
public enum CacheBudget {
    /// One sealed blob in the cache.
    public struct Item: Sendable, Equatable {
        /// The node whose head content this is (what an eviction names).
        public var nodeId: String
        /// Sealed bytes on disk.
        public var bytes: UInt64
        /// When it was last read, or arrived if never read (Unix seconds): the LRU order.
        public var lastUsed: Int64
        public var pinned: Bool
        /// False for content this policy may not drop (e.g. an older revision's blob).
        public var evictable: Bool

        public init(nodeId: String, bytes: UInt64, lastUsed: Int64, pinned: Bool, evictable: Bool = true) {
            self.nodeId = nodeId; self.bytes = bytes; self.lastUsed = lastUsed; self.pinned = pinned; self.evictable = evictable
        }
    }

    /// Why the cache still exceeds its budget after every permitted eviction.
    public enum Shortfall: Sendable, Equatable {
        /// Pinned content alone is larger than the budget.
        case pinnedAlone(pinnedBytes: UInt64)
        /// The kept content (being read, or just arrived) does not fit beside the pinned content.
        case kept(keptBytes: UInt64)
        /// Content this policy may not drop (older revisions) fills the rest.
        case unevictable
    }

    /// What to do.
    public struct Plan: Sendable, Equatable {
        /// Nodes whose cached content to evict, least recently used first.
        public var evict: [String]
        /// Cached bytes once those are evicted.
        public var usedAfter: UInt64
        /// Set when the cache still exceeds the budget.
        public var shortfall: Shortfall?

        public init(evict: [String], usedAfter: UInt64, shortfall: Shortfall?) {
            self.evict = evict; self.usedAfter = usedAfter; self.shortfall = shortfall
        }
    }

    /// Plans the evictions that bring `items` within `budget` bytes, never touching pinned,
    /// unevictable or `keep` content; the order is `lastUsed`, then node id (deterministic).
    public static func plan(items: [Item], budget: UInt64, keep: Set<String> = []) -> Plan {
        var used = items.reduce(0) { $0 + $1.bytes }
        guard used > budget else { return Plan(evict: [], usedAfter: used, shortfall: nil) }
        let candidates = items.filter { $0.evictable && !$0.pinned && !keep.contains($0.nodeId) }
            .sorted { ($0.lastUsed, $0.nodeId) < ($1.lastUsed, $1.nodeId) }
        var evict: [String] = []
        for c in candidates where used > budget {
            evict.append(c.nodeId)
            used -= c.bytes
        }
        guard used > budget else { return Plan(evict: evict, usedAfter: used, shortfall: nil) }
        let pinned = items.filter(\.pinned).reduce(0) { $0 + $1.bytes }
        let kept = items.filter { !$0.pinned && keep.contains($0.nodeId) }.reduce(0) { $0 + $1.bytes }
        let shortfall: Shortfall = pinned > budget ? .pinnedAlone(pinnedBytes: pinned)
            : kept > 0 && pinned + kept > budget ? .kept(keptBytes: kept) : .unevictable
        return Plan(evict: evict, usedAfter: used, shortfall: shortfall)
    }
}
