import Foundation

/// What `vault doctor` found and did.
public struct DoctorReport: Sendable, Codable {
    public var nodesChecked = 0
    public var blobsChecked = 0
    /// Fixed without loss (metadata reconciled with the disk, leftovers removed).
    public var repaired: [String] = []
    /// Needs the user: content that cannot be recovered here.
    public var problems: [String] = []
    public var healthy: Bool { problems.isEmpty }
}

extension Vault {
    /// Reconciles `content_state` with the sealed blobs on disk and removes leftovers of
    /// interrupted writes. With `verify`, every blob is also fully authenticated (every segment,
    /// the final one included) and its plaintext checked against its node's size and SHA-256.
    public func doctor(verify: Bool = false) throws -> DoctorReport { try doctor(verify: verify, pageSize: Self.doctorPage) }

    /// `doctor` reading `pageSize` files at a time (tests make pages small).
    func doctor(verify: Bool, pageSize: Int) throws -> DoctorReport {
        var r = DoctorReport()
        // 0. Downloads whose content is here but whose rows still say unfinished (before 1: a
        // settled row keeps no partial).
        for p in try settleFinishedDownloads() { r.repaired.append("\(p): its download had finished; marked done") }
        // 1. Temp files of interrupted writes.
        for name in try removeInterruptedWrites() { r.repaired.append("removed an interrupted write: \(name)") }
        // 2. Blob files where their rows say (a publish interrupted between commit and move).
        r.repaired += try repairBlobAreas()
        // 3. Each node's claimed content against the disk, a page of files at a time, each page
        // read and repaired in one transaction (one lock, not one per query), the sealed files
        // of what it dropped removed once it committed.
        var referenced = BlobIdSet()
        var after: Int64 = 0
        while true {
            var doomed: [(String, BlobArea)] = []
            let last: Int64? = try db.transaction {
                let page = try nodesTable.files(afterRow: after, limit: pageSize)
                for n in page.nodes { try checkContent(of: n, verify: verify, referenced: &referenced, doomed: &doomed, into: &r) }
                return page.lastRow
            }
            for (id, area) in doomed { blobs.delete(id, area: area) }
            guard let last else { break }
            after = last
        }
        // 4. Revision blobs are referenced too.
        for id in try revisionsTable.blobIds() { referenced.insert(id) }
        // 5. Blob files or records nobody references.
        for area in [BlobArea.cache, .staging] {
            var unreferenced: [String] = []
            blobs.forEachIdOnDisk(area) { id in if !referenced.contains(id) { unreferenced.append(id) } }
            for id in unreferenced {
                blobs.delete(id, area: area)
                try blobsTable.delete(id: id)
                r.repaired.append("removed an unreferenced blob \(area.rawValue)/\(id)")
            }
        }
        // 6. The maintained totals against a recount (last: the repairs above moved them too).
        r.repaired += try repairCounters()
        return r
    }

    /// Step 3 of `doctor` for file `n`, inside the page's transaction: its claimed content
    /// against the disk, repaired or reported in `r`; its blob id goes into `referenced`, and a
    /// damaged blob it drops into `doomed` (its file is removed after the commit).
    private func checkContent(of n: Node, verify: Bool, referenced: inout BlobIdSet, doomed: inout [(String, BlobArea)],
                              into r: inout DoctorReport) throws {
        r.nodesChecked += 1
        var p: String { (try? path(of: n)) ?? n.id }   // only for what is reported
        guard let blobId = n.localPath else {
            if n.contentState == .local || n.contentState == .stale || n.contentState == .downloading {
                try nodesTable.setContentState(id: n.id, .notDownloaded)
                r.repaired.append("\(p): marked NOT_DOWNLOADED (no content on disk)")
            }
            return
        }
        referenced.insert(blobId)
        let record = try blobsTable.record(id: blobId)
        let area = record?.area ?? .cache   // no record: looked for in the cache
        let onDisk = POSIX.fileSize(blobs.path(id: blobId, area: area))
        var damage: String?
        if record == nil { damage = "its blob record is missing" }
        else if onDisk == nil { damage = "its sealed blob is missing from disk" }
        else if let record, onDisk != record.sealedSize { damage = "its sealed blob has the wrong size (\(onDisk!) bytes)" }
        else if verify {
            r.blobsChecked += 1
            // Every segment (the final one included), then the node's size and SHA-256.
            do { try readWhole(openBlob(blobId, area: area).handle, of: n) { _ in } } catch { damage = "\(error)" }
        }
        if let damage {
            if area == .staging && n.remoteId == nil {
                r.problems.append("\(p): \(damage); this content was never uploaded and cannot be recovered here")
            } else {
                try nodesTable.setNotDownloaded(id: n.id)
                try blobsTable.delete(id: blobId)
                doomed.append((blobId, area))
                r.repaired.append("\(p): \(damage); marked NOT_DOWNLOADED (download it again)")
            }
        } else if n.contentState != .local && n.contentState != .stale {
            try nodesTable.setContentState(id: n.id, .local)
            r.repaired.append("\(p): content is on disk; marked LOCAL")
        }
    }

    /// Files `doctor` reads at a time (its memory does not grow with the vault).
    static let doctorPage = 1_000

    /// Recounts every maintained total (`CountersTable`) and rewrites each stored one that
    /// disagrees, in one transaction (no writer moves them in between). Returns one line per
    /// counter rewritten, naming it with both values.
    func repairCounters() throws -> [String] {
        try db.transaction {
            let stored = try countersTable.values(), counted = try countersTable.recount()
            var fixed: [String] = []
            for name in CountersTable.Name.allCases {
                let now = counted[name] ?? 0
                guard stored[name] != now else { continue }
                try countersTable.set(name, now)
                fixed.append("counter \(name.rawValue) said \(stored[name].map(String.init) ?? "nothing"), a recount found \(now); corrected")
            }
            return fixed
        }
    }
}

extension Vault {
    /// Deletes what killed commands left in `tmp/` (a `put` or `reencrypt` sealing a blob):
    /// everything but the partial blob of a download that has not finished, which the next attempt
    /// resumes (and the sparse partial of content read on demand, with its segment map); and the temp files of an atomic rewrite of the keyslot file (`keyslots.tmp-<pid>`,
    /// which hold wrapped master keys). Called by `doctor` and whenever a command holds the vault
    /// alone (nobody else can be writing them then), so the space comes back before any free-space
    /// check. Returns the paths removed, relative to the vault root.
    @discardableResult
    func removeInterruptedWrites() throws -> [String] {
        var removed: [String] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.tempDirectory)) ?? []
        if !names.isEmpty {
            // A download's partial, and an on-demand sparse partial with its segment map (SparseContent).
            let resumable = Set(try transfersTable.unfinishedDownloadBlobs().flatMap { [$0 + ".partial", $0 + ".sparse", $0 + ".segments"] })
            for name in names where !resumable.contains(name) {
                if unlink(layout.tempDirectory + "/" + name) == 0 { removed.append("tmp/" + name) }
            }
        }
        for name in layout.keyslotTempFiles() where unlink(layout.path(name)) == 0 { removed.append(name) }
        return removed
    }
}
