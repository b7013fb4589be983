import Foundation
import VaultAPI
import VaultCore
import VaultHTTP

/// Each outbox operation against the server (docs/outbox.md, "Replay").
extension OutboxReplay {
    func replay(_ e: OutboxEntry, _ waiting: Waiting) throws -> Outcome {
        guard let target = try vault.outboxTarget(nodeId: e.nodeId) else {
            // Neither in the tree nor tombstoned: an entry of a node removed by an older version.
            if e.op == .delete || e.op == .discardUpload {
                return try e.op == .delete ? delete(e, nil, waiting) : discardUpload(e, nil)
            }
            try vault.completeOutboxEntry(e, .nothing)
            return .done(nil)
        }
        switch e.op {
        case .createFolder: return try createFolder(e, target, waiting)
        case .upload: return try upload(e, target, waiting)
        case .move: return try move(e, target, waiting)
        case .delete: return try delete(e, target, waiting)
        case .discardUpload: return try discardUpload(e, target)
        }
    }

    /// The vault path of a node in the tree, or its last name once removed.
    func label(_ e: OutboxEntry, _ target: OutboxTarget?) throws -> String {
        if let n = target?.node { return try vault.path(of: n) }
        return e.payload.name ?? e.nodeId
    }

    private func complete(_ e: OutboxEntry, _ c: OutboxCompletion, _ message: String?) throws -> Outcome {
        TestHooks.crashPoint("replay-before-complete")   // the server applied it; the vault has not recorded it
        try vault.completeOutboxEntry(e, c)
        return .done(message)
    }

    private func createFolder(_ e: OutboxEntry, _ target: OutboxTarget, _ waiting: Waiting) throws -> Outcome {
        let path = try label(e, target)
        if let r = target.remoteId { return try complete(e, .onServer(remoteId: r, version: target.version), nil) }
        guard let parent = try vault.remoteFolderId(ofLocal: e.payload.parentId ?? target.node?.parentId) else {
            return .waits("\(path) waits for its folder")
        }
        let name = e.payload.name ?? target.node?.name ?? ""
        try vault.markOutboxSent(seq: e.seq)
        let r = try call { try api.json(.post, "/v1/files", body: CreateFileRequest(name: name, parentId: parent, type: .folder)) }
        switch r.status {
        case 201:
            let f = try ServerAPI.decode(FileResource.self, r)
            return try complete(e, .onServer(remoteId: f.id, version: f.version), "created folder \(path)")
        case 409:
            // D6: sent by an earlier run that died before recording the answer: that folder is ours.
            if e.sentAt != nil, let existing = try children(of: parent)?.first(where: { $0.name == name }), existing.type == .folder {
                return try complete(e, .onServer(remoteId: existing.id, version: existing.version), "created folder \(path)")
            }
            if waiting.any {   // D5: the name may be held by a change that waits
                try vault.markOutbox(seq: e.seq, .pending, reason: "waits: the name is still taken on the server")
                return .waits(path)
            }
            return .conflict("the server refused to create folder \(path): \(ServerAPI.apiError(r)?.message ?? "name taken")")
        default:
            if let refused = Self.refusal(r, doing: "create folder \(path)") { return refused }
            throw ServerAPI.statusError(r, doing: "create folder \(path)")
        }
    }

    private func upload(_ e: OutboxEntry, _ target: OutboxTarget, _ waiting: Waiting) throws -> Outcome {
        // A removed file's uploads were dropped or became `discard_upload` (rule R1–R3).
        guard let node = target.node else { return try complete(e, .nothing, nil) }
        let path = try vault.path(of: node)
        guard let blobId = e.payload.blobId, let sha = e.payload.sha256 else {
            return .failed("the outbox upload entry of \(path) has no content (run `vault doctor`)")
        }
        let fileId = target.remoteId ?? e.payload.remoteId
        var parent: String?
        if fileId == nil {
            guard let p = try vault.remoteFolderId(ofLocal: e.payload.parentId ?? node.parentId) else {
                return .waits("\(path) waits for its folder")
            }
            parent = p
        }
        let job = UploadJob(nodeId: node.id, path: path, requestId: e.requestId, blobId: blobId,
                            size: Int64(e.payload.size ?? node.size), sha256: sha, mimeType: e.payload.mimeType ?? node.mimeType,
                            name: e.payload.name ?? node.name, parentRemoteId: parent,
                            fileId: fileId, baseVersion: fileId == nil ? nil : target.version)
        if let limit = holdLargeFrom, UInt64(max(0, job.size)) >= limit {
            let record = try TransferRecord.upload(in: vault, nodeId: node.id, requestId: e.requestId, blobId: blobId, total: job.size)
            record.set(.waitingForUnmetered, error: nil)
            return .waitingForUnmetered("waiting for an unmetered network: \(path) (\(ByteCount.format(UInt64(job.size))))")
        }
        let uploader = ResumableUpload(api: api, vault: vault, retry: retry, concurrency: concurrency, say: say)
        uploader.onProgress = onProgress
        switch try uploader.run(job) {
        case .uploaded(let file):
            return try complete(e, .uploaded(remoteId: file.id, version: file.version, blobId: blobId),
                                "uploaded \(path) (\(ByteCount.format(UInt64(max(0, file.size)))))")
        case let .conflict(why, nameTaken):
            if nameTaken && waiting.any {   // D5
                if let t = try vault.uploadTransfer(requestId: e.requestId) {
                    try vault.updateTransfer(t.id, .state(.queued, error: "waits: the name is still taken on the server"))
                }
                return .waits(path)
            }
            return .conflict(why)
        case .failed(let why):
            return .failed(why)
        case .held(let state):
            try Self.settleHolds(vault: vault, api: api)
            return .held(state == .cancelled ? "cancelled the upload of \(path)" : "paused the upload of \(path)")
        }
    }

    private func move(_ e: OutboxEntry, _ target: OutboxTarget, _ waiting: Waiting) throws -> Outcome {
        let path = try label(e, target)
        guard let remote = target.remoteId ?? e.payload.remoteId else {
            return .failed("cannot move \(path): it is not on the server (run `vault doctor`)")
        }
        guard let parent = try vault.remoteFolderId(ofLocal: e.payload.parentId) else {
            return .waits("\(path) waits for its destination folder")
        }
        let body = UpdateFileRequest(name: e.payload.name, parentId: parent)
        let r = try call { try api.json(.patch, "/v1/files/\(remote)", body: body, headers: [("If-Match", "\"\(target.version)\"")]) }
        switch r.status {
        case 200:
            let f = try ServerAPI.decode(FileResource.self, r)
            return try complete(e, .onServer(remoteId: f.id, version: f.version), "moved \(path)")
        case 412 where Self.current(r).map({ $0.name == body.name && $0.parentId == body.parentId && !$0.trashed }) == true:
            // An earlier run moved it and died before recording that: the server already agrees.
            let f = Self.current(r)!
            return try complete(e, .onServer(remoteId: f.id, version: f.version), "moved \(path)")
        case 409 where waiting.any:   // D5
            return .waits(path)
        case 412, 404, 409:
            return .conflict("cannot move \(path) on the server (HTTP \(r.status)): \(r.status == 412 ? "it changed there since" : ServerAPI.apiError(r)?.message ?? "")")
        default:
            if let refused = Self.refusal(r, doing: "move \(path)") { return refused }
            throw ServerAPI.statusError(r, doing: "move \(path)")
        }
    }

    private func delete(_ e: OutboxEntry, _ target: OutboxTarget?, _ waiting: Waiting) throws -> Outcome {
        let name = try label(e, target)
        guard let remote = target?.remoteId ?? e.payload.remoteId else {
            return try complete(e, .nothing, nil)   // it never reached the server
        }
        // D3: an entry that waits still needs this folder on the server.
        if waiting.placedIn.contains(e.nodeId) { return .waits("\(name) waits: a change inside it waits") }
        // D4: something that waits may leave the server's folder holding what must survive it.
        if waiting.any && target?.isFolder == true {
            if waiting.placingRemovedNode { return .waits("\(name) waits: a change under it waits") }
            if let keep = try vault.nodes(withRemoteIds: try subtree(of: remote)).first {
                return .waits("\(name) waits: it still holds \(try vault.path(of: keep)) on the server")
            }
        }
        var version = target?.version ?? e.baseVersion ?? 0
        for _ in 0..<2 {
            let r = try call { try api.json(.delete, "/v1/files/\(remote)", headers: [("If-Match", "\"\(version)\"")]) }
            switch r.status {
            case 200, 204, 404:
                return try complete(e, .nothing, "deleted \(name)")
            case 412 where Self.current(r)?.trashed == true:
                return try complete(e, .nothing, "deleted \(name)")   // by an earlier run that died before recording it
            case 412:
                // A delete that replaced a move (rule R2): an earlier run may have applied that move.
                if e.payload.replacesMove == true, let cur = Self.current(r), cur.name == e.payload.name,
                   let dest = try vault.remoteFolderId(ofLocal: e.payload.parentId), cur.parentId == dest, cur.version != version {
                    version = cur.version
                    continue
                }
                return .conflict("cannot delete \(name) on the server: it changed there since")
            default:
                if let refused = Self.refusal(r, doing: "delete \(name)") { return refused }
                throw ServerAPI.statusError(r, doing: "delete \(name)")
            }
        }
        return .conflict("cannot delete \(name) on the server: it changed there since")
    }

    /// Rule R1–R3's `discard_upload`: a file removed while its upload session was open.
    private func discardUpload(_ e: OutboxEntry, _ target: OutboxTarget?) throws -> Outcome {
        let name = try label(e, target)
        guard let uploadId = e.payload.uploadId else { return try complete(e, .nothing, nil) }
        let r = try call { try api.json(.get, "/v1/upload/\(uploadId)") }
        switch r.status {
        case 200:
            let status = try ServerAPI.decode(UploadStatus.self, r)
            guard status.state == "complete", let file = status.file else {
                let d = try call { try api.json(.delete, "/v1/upload/\(uploadId)") }
                guard (200..<300).contains(d.status) || d.status == 404 || d.status == 410 else {
                    if let refused = Self.refusal(d, doing: "free the upload of \(name)") { return refused }
                    throw ServerAPI.statusError(d, doing: "free the upload of \(name)")
                }
                return try complete(e, .nothing, nil)
            }
            if target?.remoteId != nil || e.payload.remoteId != nil {
                // A new version of a file on the server: its delete (a later entry) must match it.
                return try complete(e, .onServer(remoteId: file.id, version: file.version), nil)
            }
            let d = try call { try api.json(.delete, "/v1/files/\(file.id)", headers: [("If-Match", "\"\(file.version)\"")]) }
            switch d.status {
            case 200, 204, 404: return try complete(e, .nothing, "deleted \(name)")
            case 412 where Self.current(d)?.trashed == true: return try complete(e, .nothing, "deleted \(name)")
            case 412: return .conflict("cannot delete \(name) on the server: it changed there since")
            default:
                if let refused = Self.refusal(d, doing: "delete \(name)") { return refused }
                throw ServerAPI.statusError(d, doing: "delete \(name)")
            }
        case 404, 410:
            return try complete(e, .nothing, nil)
        default:
            if let refused = Self.refusal(r, doing: "free the upload of \(name)") { return refused }
            throw ServerAPI.statusError(r, doing: "free the upload of \(name)")
        }
    }
}
