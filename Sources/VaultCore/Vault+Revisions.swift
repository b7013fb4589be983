import Foundation

/// One version of a file's content, as `vault revisions` lists it.
public struct RevisionInfo: Sendable, Codable, Equatable {
    /// The server's revision id (what `--revision` takes), or this device's id for an older
    /// version kept here that was never uploaded.
    public var id: String
    /// When the content was written (seconds since the epoch, from its content record).
    public var time: Int64
    /// Plaintext bytes.
    public var size: Int64
    public var sha256: String
    /// The device id that wrote it (`local` for a version kept here only).
    public var device: String
    public var isHead: Bool
    /// The content record (server revisions), with the blob id the sealed bytes carry.
    public var content: ContentRecord?
    /// Whether its sealed content is on this device.
    public var local: Bool

    public init(id: String, time: Int64, size: Int64, sha256: String, device: String, isHead: Bool, content: ContentRecord?, local: Bool) {
        self.id = id; self.time = time; self.size = size; self.sha256 = sha256; self.device = device
        self.isHead = isHead; self.content = content; self.local = local
    }

    /// Who wrote it, as listings say: `this device` (`thisDevice`: this device's id),
    /// `here, not uploaded`, the name the writing device sealed into the content record, or
    /// `device 1a2b3c4d` (the first 8 characters of its id) for a device that never said one.
    public func deviceLabel(thisDevice: String?) -> String {
        device == thisDevice ? "this device" : device == "local" ? "here, not uploaded" : DeviceName.label(id: device, name: content?.deviceName)
    }
}

extension Vault {
    /// Replaces the cached server revisions of node `nodeId` with `list` (newest first); versions
    /// kept here only (`put --replace` before an upload) stay.
    public func cacheRevisions(nodeId: String, _ list: [RevisionInfo]) throws {
        try db.transaction {
            let kept = Dictionary(try revisionsTable.serverRevisions(nodeId: nodeId).map { ($0.remoteId ?? "", $0.blobId) },
                                  uniquingKeysWith: { $1 })
            try revisionsTable.deleteServer(nodeId: nodeId)
            for r in list {
                let json = try r.content.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
                try revisionsTable.insertServer(id: Self.newId(), nodeId: nodeId, r, contentJSON: json, blobId: kept[r.id] ?? nil)
            }
        }
    }

    /// The revisions known for node `nodeId`, newest first: the server's as last listed, and the
    /// older versions kept here that no server revision holds.
    public func revisions(nodeId: String) throws -> [RevisionInfo] {
        var out: [RevisionInfo] = []
        var serverBlobs = Set<String>()
        for r in try revisionsTable.serverRevisions(nodeId: nodeId) {
            let content = r.contentJSON.flatMap { try? JSONDecoder().decode(ContentRecord.self, from: Data($0.utf8)) }
            if let b = content?.blob { serverBlobs.insert(b) }
            let blob = r.blobId
            out.append(RevisionInfo(id: r.remoteId ?? "", time: r.modifiedAt, size: r.size, sha256: r.sha256 ?? "",
                                    device: r.device ?? "", isHead: r.isHead, content: content,
                                    local: try blob.map { try locateBlob($0) != nil } ?? false))
        }
        for r in try revisionsTable.localRevisions(nodeId: nodeId) where !serverBlobs.contains(r.blobId ?? "") {
            out.append(RevisionInfo(id: r.id, time: r.modifiedAt, size: r.size, sha256: r.sha256 ?? "",
                                    device: "local", isHead: false, content: nil, local: true))
        }
        return out
    }

    /// The blob of a revision whose content is on this device (a server revision downloaded, or
    /// an older version kept here), if any.
    public func revisionBlob(nodeId: String, revision: String) throws -> (blobId: String, size: UInt64, sha256: String)? {
        guard let r = try revisionsTable.revision(nodeId: nodeId, revision), let blob = r.blobId, try locateBlob(blob) != nil else { return nil }
        return (blob, UInt64(max(0, r.size)), r.sha256 ?? "")
    }

    /// Records that server revision `revision` of `nodeId` is now on this device as `blob` (a
    /// verified cache blob): it opens offline from now on.
    public func recordRevisionBlob(_ blob: BlobRecord, nodeId: String, revision: String) throws {
        try db.transaction {
            if try !blobsTable.exists(id: blob.id) { try recordBlob(blob, nodeId: nodeId) }
            try revisionsTable.setBlob(nodeId: nodeId, revision: revision, blob.id)
        }
    }

    /// Opens the sealed content of a revision on this device, checked against its size.
    public func openRevision(nodeId: String, revision: String) throws -> (handle: BlobHandle, size: UInt64, sha256: String) {
        guard let r = try revisionBlob(nodeId: nodeId, revision: revision) else {
            throw VaultError(.notLocal, "revision \(revision) is not on this device", hint: "connect to the server: `vault cat --revision` downloads it")
        }
        let handle = try openBlob(r.blobId).handle
        guard handle.plaintextSize == r.size else {
            throw Self.contentMismatch(r.blobId, path: "revision \(revision)", "it holds \(handle.plaintextSize) bytes where the revision has \(r.size)")
        }
        return (handle, r.size, r.sha256)
    }

    /// Streams a revision's whole content to `body`, then checks its size and SHA-256.
    @discardableResult
    public func readRevision(nodeId: String, revision: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> UInt64 {
        let r = try openRevision(nodeId: nodeId, revision: revision)
        var n = try node(id: nodeId)!
        n.size = r.size; n.sha256 = r.sha256; n.contentState = .local
        return try readWhole(r.handle, of: n, body)
    }
}

extension Vault {
    /// What this device last knew of node `remoteId` on the server (the planner's base).
    public func remoteBase(remoteId: String) throws -> RemoteBase? {
        try SQLLocalView(db: db).base(remoteId: remoteId)
    }

    /// The highest content-record sequence number this device has seen (pulled) or written
    /// (pushed) for server file `remoteId`: a lower one from the server is a rollback, and a new
    /// record of it takes one more.
    public func seenContentSeq(remoteId: String) throws -> Int64 {
        let base = try RemoteBaseTable(db: db).contentSeq(remoteId: remoteId) ?? 0
        let own = try nodesTable.highestContentSeq(remoteId: remoteId)
        return max(base, own)
    }
}
