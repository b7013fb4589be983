import Foundation
import VaultAPI
import VaultCore

extension SyncClient {
    /// The revisions of file `node`, newest first, as the server lists them (each content record
    /// opened through the codec: a record that does not open is an integrity error); cached so the
    /// list shows offline. `offline` when the server could not be reached and the cache answered.
    public func revisions(of node: Node) throws -> (list: [RevisionInfo], offline: Bool) {
        guard !node.isFolder else { throw VaultError(.usage, "\(try vault.path(of: node)) is a folder: only files have revisions") }
        guard let rid = node.remoteId else { return (try vault.revisions(nodeId: node.id), false) }
        let list: [RevisionInfo]
        api.failFastWhenUnreachable = true
        defer { api.failFastWhenUnreachable = false }
        do { list = try serverRevisions(rid) } catch is ServerUnreachable {
            return (try vault.revisions(nodeId: node.id), true)
        }
        try vault.cacheRevisions(nodeId: node.id, list)
        return (try vault.revisions(nodeId: node.id), false)
    }

    /// The server's revisions of `remoteId`, opened and checked.
    func serverRevisions(_ remoteId: String) throws -> [RevisionInfo] { try serverRevisionList(remoteId).map(\.info) }

    /// The server's revisions of `remoteId`, opened and checked, with the bytes the server stores
    /// for each.
    func serverRevisionList(_ remoteId: String) throws -> [(info: RevisionInfo, stored: Int64)] {
        let r = try api.retrying(retry, say: say) { try api.json(.get, "/v1/files/\(remoteId)/revisions") }
        if r.status == 404 { throw VaultError(.notFound, "the server no longer has this file", hint: "run `vault sync`") }
        guard r.status == 200 else { throw ServerAPI.statusError(r, doing: "list revisions") }
        let codec = vault.remoteCodec
        let known = try vault.seenContentSeq(remoteId: remoteId)
        var out: [(info: RevisionInfo, stored: Int64)] = []
        for rev in try ServerAPI.decode(RevisionList.self, r).revisions {
            guard rev.fileId == remoteId else { throw RemoteCodec.lie("a revision of another file is listed") }
            guard let meta = rev.contentMeta else { throw RemoteCodec.lie("a revision has no content record") }
            let c = try codec.openContent(meta, nodeId: remoteId)
            try RemoteCodec.checkStoredSize(rev.size, of: c, nodeId: remoteId)
            if rev.isHead && c.seq < known { throw RemoteCodec.lie("the server rolled back the content of a file (an older head than this device has seen)") }
            out.append((RevisionInfo(id: rev.id, time: c.mtime, size: c.size, sha256: c.sha256, device: c.device, isHead: rev.isHead,
                                     content: c, local: false), rev.size))
        }
        return out
    }

    /// Makes revision `revision` of file `node` the new head on the server (a new revision with a
    /// new content record, sealed through the codec with the next sequence number, sent with
    /// `If-Match`), then pulls so the local node follows (a copy held here is downloaded again).
    public func restore(_ node: Node, revision: String, policy: ConflictPolicy) throws -> Node {
        guard let rid = node.remoteId, !node.isFolder else {
            throw VaultError(.notFound, "\(try vault.path(of: node)) is not on the server yet", hint: "run `vault sync` first")
        }
        guard node.pendingOp == nil else {
            throw VaultError(.conflict, "\(try vault.path(of: node)) has changes waiting to be sent", hint: "run `vault sync` first, then restore")
        }
        let list = try serverRevisions(rid)
        guard let old = list.first(where: { $0.id == revision }), let record = old.content else {
            throw VaultError(.notFound, "\(try vault.path(of: node)) has no revision \(revision)", hint: "see `vault revisions \(try vault.path(of: node))`")
        }
        let seq = max(try vault.claimSeqs(remoteId: rid, nodeId: node.id).content, (list.compactMap(\.content?.seq).max() ?? 0) + 1)
        let fresh = ContentRecord(blob: record.blob, device: api.account.deviceId, deviceName: try Self.deviceName(vault: vault), mime: record.mime, mtime: Int64(Date().timeIntervalSince1970),
                                  sealedSize: record.sealedSize, seq: seq, sha256: record.sha256, size: record.size)
        let body = RestoreRequest(contentMeta: try vault.remoteCodec.sealContent(fresh, nodeId: rid))
        let r = try api.retrying(retry, say: say) {
            try api.json(.post, "/v1/files/\(rid)/revisions/\(revision)/restore", body: body, headers: [("If-Match", "\"\(node.version)\"")])
        }
        switch r.status {
        case 200: break
        case 412: throw VaultError(.conflict, "\(try vault.path(of: node)) changed on the server since this device last synced", hint: "run `vault sync`, then restore again")
        case 404: throw VaultError(.notFound, "the server no longer has that revision", hint: "see `vault revisions`")
        default: throw ServerAPI.statusError(r, doing: "restore a revision")
        }
        _ = try pull(policy: policy)
        // Restored here, read here: a copy this device held follows the restore at once.
        if let n = try vault.node(id: node.id), n.contentState == .stale, node.contentState == .local {
            return try ContentDownload(api: api, vault: vault, retry: retry, say: say).run(n)
        }
        return try vault.node(id: node.id) ?? node
    }

    /// Downloads revision `revision` of file `node` into a sealed cache blob (verified against its
    /// content record, as any content) and records it, so it reads offline from then on.
    public func downloadRevision(_ node: Node, revision: String) throws {
        if try vault.revisionBlob(nodeId: node.id, revision: revision) != nil { return }
        guard let rid = node.remoteId else {
            throw VaultError(.notFound, "\(try vault.path(of: node)) has no revision \(revision)")
        }
        let list = try serverRevisionList(rid)
        try vault.cacheRevisions(nodeId: node.id, list.map(\.info))
        guard let r = list.first(where: { $0.info.id == revision }), let record = r.info.content else {
            throw VaultError(.notFound, "\(try vault.path(of: node)) has no revision \(revision)", hint: "see `vault revisions \(try vault.path(of: node))`")
        }
        let blob = try ContentDownload(api: api, vault: vault, retry: retry, say: say)
            .fetchRevision(fileId: rid, revisionId: revision, content: record, storedSize: r.stored, nodeId: node.id, path: try vault.path(of: node))
        try vault.recordRevisionBlob(blob, nodeId: node.id, revision: revision)
    }
}
