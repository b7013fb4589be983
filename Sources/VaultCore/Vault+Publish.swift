import Foundation

/// Publishing content: a staged blob becomes cached content once the server holds it, and a
/// downloaded blob becomes a node's content. Crash-safe in two steps: the metadata commits first
/// (the row says `cache` while the file is still in `staging/`), then the file moves. A process
/// killed between the two leaves a blob the readers find in either area and that
/// `repairBlobAreas` (run by `vault sync`, `vault doctor` and re-encryption) moves where its row
/// says.
extension Vault {
    /// The area the `blobs` table records for `id`, if it has a row.
    func recordedArea(ofBlob id: String) throws -> BlobArea? {
        try blobsTable.area(id: id)
    }

    /// Where blob `id`'s file is: its recorded area, else the other one; nil when it is in neither.
    public func locateBlob(_ id: String) throws -> BlobArea? {
        let recorded = try recordedArea(ofBlob: id)
        let order: [BlobArea] = recorded == .staging ? [.staging, .cache] : [.cache, .staging]
        return order.first { POSIX.exists(blobs.path(id: id, area: $0)) }
    }

    /// Opens blob `id` for authenticated reads, in whichever area its file is (or in `area`).
    /// Every reader of local content comes through here: the header must name the key epoch the
    /// database records for the blob, or a later one up to the current epoch (SECURITY.md
    /// "Sealed blob format", reading rule 3); a blob without a row must name the current one.
    public func openBlob(_ id: String, area: BlobArea? = nil) throws -> (handle: BlobHandle, area: BlobArea) {
        let area = try area ?? locateBlob(id) ?? recordedArea(ofBlob: id) ?? .cache
        return (try blobs.open(id, area: area, lowestEpoch: try recordedEpoch(ofBlob: id)), area)
    }

    /// The key epoch the `blobs` table records for `id` (its header's when it was written,
    /// downloaded or last rewrapped by a rotation); the current epoch when it has no row.
    func recordedEpoch(ofBlob id: String) throws -> UInt32 {
        guard let e = try blobsTable.keyEpoch(id: id) else { return keys.epoch }
        return UInt32(clamping: e)
    }

    /// The second step of a publish, after the commit that recorded `blobId` as cached: moves
    /// its file from `staging/` to `cache/`. A failure here loses nothing (the readers find the
    /// file in staging, and `repairBlobAreas` moves it later).
    func moveStagedToCache(_ blobId: String) {
        TestHooks.crashPoint("publish-after-commit")
        guard POSIX.exists(blobs.path(id: blobId, area: .staging)) else { return }
        try? blobs.move(blobId, from: .staging, to: .cache)
    }

    /// Moves each blob file to the area its row records (a publish interrupted between its
    /// commit and its move; or, in vaults written before schema 2, a move whose transaction was
    /// rolled back). Looks only at `staging/` and the rows that say staging, so it is cheap.
    /// Returns one line per blob moved.
    @discardableResult
    public func repairBlobAreas() throws -> [String] {
        var fixed: [String] = []
        // The records read in one transaction (one lock, not one per file), the files moved after.
        let misplaced = try db.transaction { try blobs.idsOnDisk(.staging).filter { try recordedArea(ofBlob: $0) == .cache } }
        for id in misplaced {
            guard !POSIX.exists(blobs.path(id: id, area: .cache)) else { continue }
            try blobs.move(id, from: .staging, to: .cache)
            fixed.append("finished an interrupted publish: moved blob \(id) from staging/ to cache/")
        }
        for id in try blobsTable.stagingIds() {
            guard !POSIX.exists(blobs.path(id: id, area: .staging)),
                  POSIX.exists(blobs.path(id: id, area: .cache)) else { continue }
            try blobs.move(id, from: .cache, to: .staging)
            fixed.append("moved blob \(id) back to staging/, where its record says it is (it is not uploaded yet)")
        }
        return fixed
    }

    /// Marks a node's staged content as uploaded (the server holds it as `remoteId` at
    /// `version`): it becomes cached content, evictable.
    public func markUploaded(nodeId: String, remoteId: String, version: Int64) throws {
        var publish: String?
        try db.transaction {
            guard let n = try node(id: nodeId) else { throw VaultError(.notFound, "no node \(nodeId)") }
            try nodesTable.setUploaded(id: nodeId, remoteId: remoteId, version: version)
            publish = try publishInTransaction(n)
        }
        if let publish { moveStagedToCache(publish) }
    }

    /// Inside a transaction: records `n`'s staged content blob as cached; returns the blob id whose
    /// file `moveStagedToCache` must move after the commit.
    func publishInTransaction(_ n: Node, blobId: String? = nil) throws -> String? {
        guard let id = n.localPath, blobId == nil || blobId == id, try recordedArea(ofBlob: id) == .staging else { return nil }
        try blobsTable.markCached(id: id)
        return id
    }

    /// Publishes a downloaded, verified cache blob as the content of `nodeId`, if the node still
    /// waits for it (NOT_DOWNLOADED, or STALE: its older version's blob is then deleted) and still
    /// describes that content (`sha256`). Returns the node, or nil when it changed meanwhile (the
    /// blob is then deleted). The download's `transfer` row, if given, is marked done in the same
    /// transaction: a kill right after the publish leaves no row "interrupted" behind a file whose
    /// content is here.
    public func publishDownloaded(_ blob: BlobRecord, nodeId: String, transfer: Int64? = nil) throws -> Node? {
        var older: String?
        // A blob this device holds already (a revision read here, content restored on the
        // server): the same sealed object (a blob id names one sealing), recorded once.
        let held = try blobsTable.exists(id: blob.id)
        let published: Bool = try db.transaction {
            if !held { try recordBlob(blob, nodeId: nodeId) }
            guard let n = try node(id: nodeId), n.contentState == .notDownloaded || n.contentState == .stale,
                  n.sha256?.lowercased() == blob.sha256.lowercased() else {
                if !held { try blobsTable.delete(id: blob.id) }
                return false
            }
            if n.contentState == .stale, let old = n.localPath, old != blob.id {
                older = old
                try blobsTable.deleteUnlessRevision(id: old)
            }
            try nodesTable.setLocalContent(id: nodeId, blobId: blob.id)
            if let transfer { try markDownloadDone(transfer) }
            return true
        }
        TestHooks.crashPoint("download-after-publish")
        guard published else {
            if !held { blobs.delete(blob.id, area: blob.area) }
            return nil
        }
        if let older, try !blobsTable.exists(id: older) {
            blobs.delete(older, area: .cache); blobs.delete(older, area: .staging)
        }
        return try node(id: nodeId)
    }
}
