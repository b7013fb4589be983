import Foundation

/// Bytes on disk by kind (BRIEF §3 "vault storage").
public struct StorageReport: Sendable, Codable {
    /// Cached content of pinned files.
    public var pinnedBytes: UInt64
    /// Cached content that may be evicted.
    public var cachedBytes: UInt64
    /// Content waiting for upload (never evicted).
    public var stagedBytes: UInt64
    /// Free bytes on the vault's filesystem.
    public var freeBytes: UInt64
    /// The content budget for cached (evictable + pinned) content, if set.
    public var budgetBytes: UInt64?
    /// Set when pinned content alone exceeds the budget.
    public var warning: String?
}

/// The outcome of an eviction.
public struct EvictionResult: Sendable, Codable {
    public var evicted: [String]
    public var freedBytes: UInt64
    public var message: String?
}

extension Vault {
    static let budgetKey = "content_budget"

    /// The content budget: the one set, capped by the policy's maximum (which also applies when none is set).
    public func contentBudget() throws -> UInt64? {
        let set = try settingsTable.value(Self.budgetKey).flatMap(UInt64.init)
        switch (set, budgetMax) {
        case let (s?, m?): return min(s, m)
        case let (s, m): return s ?? m
        }
    }

    public func setContentBudget(_ bytes: UInt64?) throws {
        try db.transaction { try settingsTable.set(Self.budgetKey, bytes.map { String($0) }) }
    }

    public func storageReport() throws -> StorageReport {
        let sums = try countersTable.values()   // maintained totals, not a scan of the blobs
        func bytes(_ name: CountersTable.Name) -> UInt64 { UInt64(max(0, sums[name] ?? 0)) }
        let pinned = bytes(.pinnedBytes), cached = bytes(.cachedBytes), staged = bytes(.stagedBytes)
        let budget = try contentBudget()
        var warning: String?
        if let budget, pinned > budget {
            warning = "pinned content (\(ByteCount.format(pinned))) alone exceeds the content budget (\(ByteCount.format(budget))); unpin something or raise the budget — pinned content is never evicted"
        }
        return StorageReport(pinnedBytes: pinned, cachedBytes: cached, stagedBytes: staged,
                             freeBytes: POSIX.freeBytes(at: layout.root) ?? 0, budgetBytes: budget, warning: warning)
    }

    /// Evicts the content of specific files (their nodes stay, as NOT_DOWNLOADED). Pinned and
    /// not-yet-uploaded content is refused with a reason.
    public func evict(paths: [String]) throws -> EvictionResult {
        var result = EvictionResult(evicted: [], freedBytes: 0, message: nil)
        for p in paths {
            let n = try resolve(p)
            let files = n.isFolder ? try descendants(of: n.id).filter { !$0.isFolder } : [n]
            for f in files where f.localPath != nil {
                if f.pinned {
                    if !n.isFolder { throw VaultError(.conflict, "\(p) is pinned; its content is never evicted", hint: "`vault unpin \(p)` first") }
                    continue
                }
                if let freed = try evictContent(of: f) {
                    result.evicted.append(try path(of: f)); result.freedBytes += freed
                } else if !n.isFolder {
                    throw VaultError(.conflict, "\(p) has not been uploaded yet; evicting it would lose it",
                                     hint: "wait for `vault sync` to upload it")
                }
            }
        }
        return result
    }

    /// Drops one node's cached content; nil when it is not evictable (staged: not uploaded).
    func evictContent(of n: Node) throws -> UInt64? {
        guard let blobId = n.localPath,
              let record = try blobsTable.record(id: blobId), record.area == .cache else { return nil }
        try db.transaction {
            try nodesTable.setNotDownloaded(id: n.id)
            try blobsTable.delete(id: blobId)
        }
        blobs.delete(blobId, area: .cache)
        return record.sealedSize
    }
}
