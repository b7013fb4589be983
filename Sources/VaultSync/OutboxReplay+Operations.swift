import Foundation
import VaultAPI
import VaultCore
import VaultHTTP

/// Each outbox entry against the server (docs/outbox.md, "Replay"): `PushRules` decides what
/// request it becomes and what the answer means; this file sends the request and decodes the
/// answer.
extension OutboxReplay {
    /// Sends `request` for entry `e`, its records sealed for the server with `seqs` (claimed by
    /// the runner; a folder's creation marked sent first, R5).
    func send(_ request: PushRequest, for e: OutboxEntry, target: OutboxTarget?, label path: String, seqs: RemoteSeqs) throws -> PushSent {
        switch request {
        case let .createFolder(id, parent, name):
            let sealed = try codec.sealNode(nodeId: id, name: name, parentId: parent, isFolder: true, seq: seqs.record,
                                            device: api.account.deviceId, deviceName: deviceName, mtime: target?.node?.modifiedAt ?? Vault.now)
            let r = try call { try api.json(.post, "/v1/files", body: CreateFileRequest(name: sealed.name, parentId: parent, type: .folder,
                                                                                       id: id, meta: sealed.meta)) }
            return .answer(try answer(r, doing: "create folder \(path)", chosenId: id))
        case let .move(id, base, parent, name):
            let sealed = try codec.sealNode(nodeId: id, name: name, parentId: parent, isFolder: target?.isFolder ?? false, seq: seqs.record,
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
            return try upload(request, e, target, path, seqs: seqs)
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
        case 412 where code == .subtreeChanged:
            return .subtreeChanged
        case 412:
            // The node as it is now; one whose records do not open under this vault's keys is refused.
            guard let f = try? APIJSON.decoder().decode(FileResource.self, from: Data(r.body)) else {
                return .refused("the server refused to \(what) (HTTP 412) without saying what it holds")
            }
            do { return .stale(try codec.open(f.sealed)) } catch {
                return .refused("the server's answer to \(what) does not open: \((error as? VaultError)?.message ?? "\(error)")")
            }
        case 409 where code == .idTaken:
            guard let id = chosenId, let f = try fetchFile(id) else { return .idTaken(nil) }
            return .idTaken(try? codec.open(f.sealed))   // not opening under this vault's keys: not ours
        case 409 where code == .parentTrashed:
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

    /// Rule R1–R3's `discard_upload`: a file removed while its upload session was open. The
    /// session is freed, or, when the server completed it, only what it made is deleted.
    func discardUpload(_ e: OutboxEntry, target: OutboxTarget?, label name: String) throws -> PushStep? {
        guard let uploadId = e.payload.uploadId else { return .done(.nothing, base: nil, message: nil) }
        let r = try call { try api.json(.get, "/v1/upload/\(uploadId)") }
        switch r.status {
        case 200:
            let status = try ServerAPI.decode(UploadStatus.self, r)
            guard status.state == .complete, let file = status.file else {
                let d = try call { try api.json(.delete, "/v1/upload/\(uploadId)") }
                guard (200..<300).contains(d.status) || d.status == 404 || d.status == 410 else {
                    if let refused = Self.refusal(d, doing: "free the upload of \(name)") { return refused }
                    throw ServerAPI.statusError(d, doing: "free the upload of \(name)")
                }
                return .done(.nothing, base: nil, message: nil)
            }
            if target?.remoteId != nil || e.payload.remoteId != nil {
                // A new version of a file on the server: its delete (a later entry) must match it,
                // the version this upload made (one more than this device last recorded). A later
                // one holds another device's change: the base is recorded, so the delete finds the
                // file changed (a conflict) instead of removing what it has not seen.
                let base = target?.version ?? 0
                return .done(.onServer(remoteId: file.id, version: file.version == base + 1 ? file.version : base), base: nil, message: nil)
            }
            // The upload made version 1 of a new file. A later version holds another device's
            // change, which this delete has not seen and must not remove (new content wins over a
            // delete, docs/sync.md): a conflict, settled by the next pull (the file comes back).
            guard file.version == 1 else { return .conflict("cannot delete \(name) on the server: it changed there since") }
            let d = try call { try api.json(.delete, "/v1/files/\(file.id)", headers: [("If-Match", "\"1\"")]) }
            switch d.status {
            case 200, 204, 404: return .done(.nothing, base: nil, message: "deleted \(name)")
            case 412 where Self.current(d)?.trashed == true: return .done(.nothing, base: nil, message: "deleted \(name)")
            case 412: return .conflict("cannot delete \(name) on the server: it changed there since")
            default:
                if let refused = Self.refusal(d, doing: "delete \(name)") { return refused }
                throw ServerAPI.statusError(d, doing: "delete \(name)")
            }
        case 404, 410:
            return .done(.nothing, base: nil, message: nil)
        default:
            if let refused = Self.refusal(r, doing: "free the upload of \(name)") { return refused }
            throw ServerAPI.statusError(r, doing: "free the upload of \(name)")
        }
    }
}
