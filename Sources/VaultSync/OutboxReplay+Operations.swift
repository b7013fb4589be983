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

    func complete(_ e: OutboxEntry, _ c: OutboxCompletion, _ message: String?, seqs: RemoteSeqs? = nil) throws -> Outcome {
        TestHooks.crashPoint("replay-before-complete")   // the server applied it; the vault has not recorded it
        try vault.completeOutboxEntry(e, c, seqs: seqs)
        return .done(message)
    }

    private func createFolder(_ e: OutboxEntry, _ target: OutboxTarget, _ waiting: Waiting) throws -> Outcome {
        let path = try label(e, target)
        if let r = target.remoteId { return try complete(e, .onServer(remoteId: r, version: target.version), nil) }
        guard let parent = try vault.remoteFolderId(ofLocal: e.payload.parentId ?? target.node?.parentId) else {
            return .waits("\(path) waits for its folder")
        }
        let name = e.payload.name ?? target.node?.name ?? ""
        // The id first, on disk: a retry after a lost answer asks for the same one.
        let id = try vault.clientId(for: e)
        let seqs = RemoteSeqs(record: try vault.remoteSeqs(nodeId: e.nodeId).record + 1)
        let sealed = try codec.sealNode(nodeId: id, name: name, parentId: parent, isFolder: true, seq: seqs.record,
                                        device: api.account.deviceId, mtime: target.node?.modifiedAt ?? Vault.now)
        try vault.markOutboxSent(seq: e.seq)
        let r = try call { try api.json(.post, "/v1/files", body: CreateFileRequest(name: sealed.name, parentId: parent, type: .folder,
                                                                                   id: id, meta: sealed.meta)) }
        switch r.status {
        case 201:
            let f = try ServerAPI.decode(FileResource.self, r)
            return try complete(e, .onServer(remoteId: f.id, version: f.version), "created folder \(path)", seqs: seqs)
        case 409 where ServerAPI.apiError(r)?.code == "id_taken":
            // D6: sent by an earlier run that died before recording the answer. Ours only if its
            // record opens under our key and says what we sent.
            guard let f = try fetchFile(id), let node = try? codec.open(f.sealed), node.isFolder, node.parentId == parent,
                  Array(node.name.utf8) == Array(name.utf8), !node.trashed else {
                return .failed("the server holds another node under the id chosen for folder \(path)")
            }
            return try complete(e, .onServer(remoteId: f.id, version: f.version), "created folder \(path)",
                                seqs: RemoteSeqs(record: node.record?.seq ?? seqs.record))
        case 409:
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

    /// The server's file `id`, or nil when it has none.
    func fetchFile(_ id: String) throws -> FileResource? {
        let r = try call { try api.json(.get, "/v1/files/\(id)") }
        switch r.status {
        case 200: return try ServerAPI.decode(FileResource.self, r)
        case 404: return nil
        default: throw ServerAPI.statusError(r, doing: "read file \(id) on the server")
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
        let name = e.payload.name ?? target.node?.name ?? ""
        let seqs = RemoteSeqs(record: try vault.remoteSeqs(nodeId: e.nodeId).record + 1)
        let sealed = try codec.sealNode(nodeId: remote, name: name, parentId: parent, isFolder: target.isFolder, seq: seqs.record,
                                        device: api.account.deviceId, mtime: target.node?.modifiedAt ?? Vault.now)
        let body = UpdateFileRequest(name: sealed.name, parentId: parent, meta: sealed.meta)
        let done = e.payload.reseal == true ? "resealed \(path)" : "moved \(path)"
        let r = try call { try api.json(.patch, "/v1/files/\(remote)", body: body, headers: [("If-Match", "\"\(target.version)\"")]) }
        switch r.status {
        case 200:
            let f = try ServerAPI.decode(FileResource.self, r)
            return try complete(e, .onServer(remoteId: f.id, version: f.version), done, seqs: seqs)
        case 412:
            // An earlier run moved it and died before recording that: the server already agrees
            // (its record, opened under our key, names this place and this name).
            if let f = Self.current(r), !f.trashed, let node = try? codec.open(f.sealed), node.parentId == parent,
               Array(node.name.utf8) == Array(name.utf8),
               e.payload.reseal != true || node.record.map({ $0.seq >= seqs.record }) == true {
                return try complete(e, .onServer(remoteId: f.id, version: f.version), done,
                                    seqs: RemoteSeqs(record: node.record?.seq ?? 0))
            }
            return .conflict("cannot move \(path) on the server (HTTP 412): it changed there since")
        case 409 where waiting.any:   // D5
            return .waits(path)
        case 404, 409:
            return .conflict("cannot move \(path) on the server (HTTP \(r.status)): \(ServerAPI.apiError(r)?.message ?? "")")
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
        // A folder's delete names the cursor it was decided on: refused if anything below the
        // folder changed on the server after it (412 `subtree_changed`).
        let decidedAt = PushRules.decidedAt(isFolder: target?.isFolder ?? false, lastPull: try vault.changesCursor())
        for _ in 0..<2 {
            var headers = [("If-Match", "\"\(version)\"")]
            if let decidedAt { headers.append(("X-Vault-Decided-At", String(decidedAt))) }
            let r = try call { try api.json(.delete, "/v1/files/\(remote)", headers: headers) }
            switch r.status {
            case 200, 204, 404:
                return try complete(e, .nothing, "deleted \(name)")
            case 412 where ServerAPI.apiError(r)?.code == "subtree_changed":
                // The next pull brings what changed in it and settles the delete (docs/sync.md).
                return .conflict("cannot delete \(name) on the server: something in it changed there since this device's last pull")
            case 412 where Self.current(r)?.trashed == true:
                return try complete(e, .nothing, "deleted \(name)")   // by an earlier run that died before recording it
            case 412:
                // A delete that replaced a move (rule R2): an earlier run may have applied that move.
                if e.payload.replacesMove == true, let cur = Self.current(r),
                   let opened = try? codec.open(cur.sealed), Array(opened.name.utf8) == Array((e.payload.name ?? "").utf8),
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
