import Foundation
import VaultAPI
import VaultCore
import VaultHTTP

/// Each outbox entry against the server (docs/outbox.md, "Replay"): `PushRules` decides what
/// request it becomes and what the answer means; this file sends the request and decodes the
/// answer.
extension OutboxReplay {
    /// What sending one request came to: the server's answer, decoded for the rules, or an end
    /// the transfer layer reached on its own (a hold, a metered network, unreadable content).
    enum Sent {
        case answer(PushAnswer)
        case ended(Outcome)
    }

    func replay(_ entry: OutboxEntry, _ waiting: PushWaiting, cursor: Int64?) throws -> Outcome {
        var e = entry
        let target = try vault.outboxTarget(nodeId: e.nodeId)
        if e.op == .discardUpload { return try discardUpload(e, target) }
        let path = try label(e, target)
        let rules = PushRules(target: target, remoteFolderId: { [vault] in try vault.remoteFolderId(ofLocal: $0) }, waiting: waiting,
                              holdFolderDeletes: holdFolderDeletes, deviceId: api.account.deviceId, newId: RemoteCodec.newId,
                              subtreeHoldsLocal: { [self] in try !vault.nodes(withRemoteIds: try subtree(of: $0)).isEmpty },
                              label: path, cursor: cursor)
        var step = try rules.decide(e)
        var answered: RemoteNode?
        // A step is at most: an id, a request, its answer, one more request (a replaced move's delete).
        for _ in 0..<6 {
            switch step {
            case .assignId(let id):
                // On disk before the first request that carries it.
                e.payload.clientId = try vault.clientId(for: e, proposing: id)
                step = try rules.decide(e)
            case .send(let request):
                switch try send(request, e, target, path) {
                case .ended(let outcome): return outcome
                case .answer(let answer):
                    if case .ok(let n) = answer { answered = n } else if case .stale(let n) = answer { answered = n }
                    if case .idTaken(let n) = answer { answered = n }
                    step = try rules.interpret(answer, to: request, for: e)
                    if case .waits(let why) = step { try noteWaits(e, why) }
                }
            case let .done(completion, base, message):
                // The sequence numbers the answer showed (this request's, or what the server holds now).
                let seqs = answered.map { RemoteSeqs(record: $0.record?.seq ?? 0, content: $0.content?.seq ?? 0) }
                return try complete(e, completion, message.map { withSize($0, completion, e) }, seqs: seqs, base: base)
            case .waits(let why): return .waits(why)
            case .conflict(let why): return .conflict(why)
            case .failed(let why): return .failed(why)
            }
        }
        return .conflict("the server's answers about \(path) do not settle")
    }

    /// The vault path of a node in the tree, or its last name once removed.
    func label(_ e: OutboxEntry, _ target: OutboxTarget?) throws -> String {
        if let n = target?.node { return try vault.path(of: n) }
        return e.payload.name ?? e.nodeId
    }

    func complete(_ e: OutboxEntry, _ c: OutboxCompletion, _ message: String?, seqs: RemoteSeqs? = nil,
                  base: RemoteBase? = nil) throws -> Outcome {
        TestHooks.crashPoint("replay-before-complete")   // the server applied it; the vault has not recorded it
        try vault.completeOutboxEntry(e, c, seqs: seqs, base: base)
        if case .uploaded = c, let t = try vault.uploadTransfer(requestId: e.requestId), t.state != .done {
            try vault.updateTransfer(t.id, .state(.done))   // an earlier attempt's upload, recognised
        }
        return .done(message)
    }

    /// An upload's message says how much it sent.
    private func withSize(_ message: String, _ c: OutboxCompletion, _ e: OutboxEntry) -> String {
        guard case .uploaded = c, let size = e.payload.size else { return message }
        return "\(message) (\(ByteCount.format(size)))"
    }

    /// D5: an entry that waits for a name another waiting entry may hold says so where people look.
    private func noteWaits(_ e: OutboxEntry, _ why: String) throws {
        try vault.markOutbox(seq: e.seq, .pending, reason: why)
        if e.op == .upload, let t = try vault.uploadTransfer(requestId: e.requestId) {
            try vault.updateTransfer(t.id, .state(.queued, error: why))
        }
    }

    /// Sends `request` for entry `e`, its records sealed for the server.
    private func send(_ request: PushRequest, _ e: OutboxEntry, _ target: OutboxTarget?, _ path: String) throws -> Sent {
        switch request {
        case let .createFolder(id, parent, name):
            let seq = try vault.claimSeqs(remoteId: id, nodeId: e.nodeId).record
            let sealed = try codec.sealNode(nodeId: id, name: name, parentId: parent, isFolder: true, seq: seq,
                                            device: api.account.deviceId, deviceName: deviceName, mtime: target?.node?.modifiedAt ?? Vault.now)
            try vault.markOutboxSent(seq: e.seq)   // R5: a folder whose creation may have reached the server
            let r = try call { try api.json(.post, "/v1/files", body: CreateFileRequest(name: sealed.name, parentId: parent, type: .folder,
                                                                                       id: id, meta: sealed.meta)) }
            return .answer(try answer(r, doing: "create folder \(path)", chosenId: id))
        case let .move(id, base, parent, name):
            let seq = try vault.claimSeqs(remoteId: id, nodeId: e.nodeId).record
            let sealed = try codec.sealNode(nodeId: id, name: name, parentId: parent, isFolder: target?.isFolder ?? false, seq: seq,
                                            device: api.account.deviceId, deviceName: deviceName, mtime: target?.node?.modifiedAt ?? Vault.now)
            let body = UpdateFileRequest(name: sealed.name, parentId: parent, meta: sealed.meta)
            let r = try call { try api.json(.patch, "/v1/files/\(id)", body: body, headers: [("If-Match", "\"\(base)\"")]) }
            return .answer(try answer(r, doing: "move \(path)"))
        case let .delete(id, base, decidedAt):
            var headers = [("If-Match", "\"\(base)\"")]
            if let decidedAt { headers.append(("X-Vault-Decided-At", String(decidedAt))) }
            let r = try call { try api.json(.delete, "/v1/files/\(id)", headers: headers) }
            guard (200..<300).contains(r.status) else { return .answer(try answer(r, doing: "delete \(path)")) }
            // Trashed (a 204 carries no node, and the rules need none of it).
            return .answer(.ok(RemoteNode(id: id, parentId: nil, name: "", isFolder: target?.isFolder ?? false, version: base + 1,
                                          trashed: true, record: nil, content: nil, storedSize: 0)))
        case .createFile, .newRevision:
            return try upload(request, e, target, path)
        }
    }

    /// The server's answer to a change, for the rules: the node it carries opened by the codec. A
    /// retryable failure was retried already (`call`); one that still stands, or a server error,
    /// stops the run (thrown).
    func answer(_ r: HTTPResponse, doing what: String, chosenId: String? = nil) throws -> PushAnswer {
        let code = ServerAPI.apiError(r)?.code
        switch r.status {
        case 200, 201:
            return .ok(try codec.open(ServerAPI.decode(FileResource.self, r).sealed))
        case 412 where code == "subtree_changed":
            return .subtreeChanged
        case 412:
            // The node as it is now; one whose records do not open under this vault's keys is refused.
            guard let f = try? APIJSON.decoder().decode(FileResource.self, from: Data(r.body)) else {
                return .refused("the server refused to \(what) (HTTP 412) without saying what it holds")
            }
            do { return .stale(try codec.open(f.sealed)) } catch {
                return .refused("the server's answer to \(what) does not open: \((error as? VaultError)?.message ?? "\(error)")")
            }
        case 409 where code == "id_taken":
            guard let id = chosenId, let f = try fetchFile(id) else { return .idTaken(nil) }
            return .idTaken(try? codec.open(f.sealed))   // not opening under this vault's keys: not ours
        case 409 where code == "parent_trashed":
            return .parentGone
        case 409:
            return .nameTaken
        case 404:
            return .notFound
        default:
            if (400..<500).contains(r.status) && r.status != 401 { return .refused(ServerAPI.statusError(r, doing: what).message) }
            throw ServerAPI.statusError(r, doing: what)
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
                // A new version of a file on the server: its delete (a later entry) must match it,
                // the version this upload made (one more than this device last recorded). A later
                // one holds another device's change: the base is recorded, so the delete finds the
                // file changed (a conflict) instead of removing what it has not seen.
                let base = target?.version ?? 0
                return try complete(e, .onServer(remoteId: file.id, version: file.version == base + 1 ? file.version : base), nil)
            }
            // The upload made version 1 of a new file. A later version holds another device's
            // change, which this delete has not seen and must not remove (new content wins over a
            // delete, docs/sync.md): a conflict, settled by the next pull (the file comes back).
            guard file.version == 1 else { return .conflict("cannot delete \(name) on the server: it changed there since") }
            let d = try call { try api.json(.delete, "/v1/files/\(file.id)", headers: [("If-Match", "\"1\"")]) }
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
