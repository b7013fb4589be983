import Foundation
import VaultAPI
import VaultCore
import VaultHTTP

/// What one `vault sync` push did.
public struct PushSummary: Sendable, Codable {
    /// Outbox entries replayed and removed.
    public var done = 0
    /// Entries left as conflicts (the server has a newer version; nothing was overwritten).
    public var conflicts = 0
    /// Entries still waiting (after a conflict on the same node).
    public var skipped = 0
    /// Large uploads held back on a metered network.
    public var waitingForUnmetered = 0
    /// Entries paused or cancelled by the user (`vault transfers resume` puts them back).
    public var held = 0
    /// Pinned files downloaded after the push.
    public var downloaded = 0
    /// One line per event, for people.
    public var messages: [String] = []

    public init() {}
}

/// Replays the outbox to the server in order — folders created, files uploaded, moves and
/// deletes with `If-Match` — mapping local ids to remote ids, and marks each node synced in the
/// same transaction that removes its outbox entry. A 412 marks the entry `conflict` and leaves it.
final class OutboxReplay {
    let api: ServerAPI
    let vault: Vault
    let retry: RetryPolicy
    let concurrency: Int
    let say: (String) -> Void
    var onProgress: ((TransferProgress) -> Void)?
    /// Set when large uploads must wait: the network is metered and they were not allowed.
    var holdLargeFrom: UInt64?

    init(api: ServerAPI, vault: Vault, retry: RetryPolicy, concurrency: Int, say: @escaping (String) -> Void) {
        self.api = api; self.vault = vault; self.retry = retry; self.concurrency = concurrency; self.say = say
    }

    func run() throws -> PushSummary {
        var summary = PushSummary()
        try Self.settleHolds(vault: vault, api: api)
        defer { try? Self.settleHolds(vault: vault, api: api) }
        let all = try vault.outbox()
        var blocked = Set<String>(all.filter { $0.state != "pending" }.map(\.nodeId))
        summary.held = all.filter { $0.state == "paused" || $0.state == "cancelled" }.count
        for entry in all where entry.state == "pending" {
            if blocked.contains(entry.nodeId) { summary.skipped += 1; continue }
            // Paused or cancelled meanwhile from another command (`vault transfers pause|cancel`)?
            let now = try vault.db.scalar("SELECT state FROM outbox WHERE seq = ?", [entry.seq])?.string
            if now != "pending" {
                blocked.insert(entry.nodeId)
                if now == "paused" || now == "cancelled" { summary.held += 1 }
                continue
            }
            let outcome = try replay(entry)
            switch outcome {
            case .done(let message):
                summary.done += 1
                if let message { summary.messages.append(message); say(message) }
            case .waiting(let why):
                blocked.insert(entry.nodeId)
                summary.waitingForUnmetered += 1
                summary.messages.append(why)
                say(why)
            case .conflict(let why):
                try vault.db.run("UPDATE outbox SET state = 'conflict', last_error = ?, attempts = attempts + 1 WHERE seq = ?", [why, entry.seq])
                blocked.insert(entry.nodeId)
                summary.conflicts += 1
                summary.messages.append("conflict: \(why)")
                say("conflict: \(why)")
            case .held(let why):
                blocked.insert(entry.nodeId)
                summary.held += 1
                summary.messages.append(why)
                say(why)
            }
        }
        return summary
    }

    private enum Outcome {
        case done(String?)
        case conflict(String)
        case waiting(String)
        /// Paused or cancelled by the user while it ran.
        case held(String)
    }

    /// Settles what the user asked of held uploads: a cancelled one's server session is aborted
    /// (its bytes freed) and its transfer row removed; a paused one's transfer shows `paused`.
    static func settleHolds(vault: Vault, api: ServerAPI) throws {
        for row in try vault.db.query("""
            SELECT DISTINCT t.id, t.upload_id, o.state FROM transfers t JOIN outbox o ON o.node_id = t.node_id
            WHERE t.direction = 'upload' AND t.state != 'done' AND o.state IN ('paused', 'cancelled')
            """) {
            let id = row[0].int64 ?? 0
            if row[2].string == "cancelled" {
                if let uploadId = row[1].string { _ = try? api.json(.delete, "/v1/upload/\(uploadId)") }
                try vault.db.run("DELETE FROM transfers WHERE id = ?", [id])
            } else {
                try vault.db.run("UPDATE transfers SET state = 'paused' WHERE id = ? AND state != 'paused'", [id])
            }
        }
    }

    private func replay(_ e: OutboxEntry) throws -> Outcome {
        let node = try vault.node(id: e.nodeId)
        switch Vault.OutboxOp(rawValue: e.op) {
        case .createFolder?:
            guard let node else { try finish(e); return .done(nil) }
            return try createFolder(e, node)
        case .upload?:
            guard let node else { try finish(e); return .done(nil) }
            return try upload(e, node)
        case .move?:
            guard let node else { try finish(e); return .done(nil) }
            return try move(e, node)
        case .delete?:
            return try delete(e)
        case nil:
            throw VaultError(.internalError, "unknown outbox operation '\(e.op)'", hint: "upgrade vault")
        }
    }

    /// The server id of a local folder id ("root" stays "root").
    private func remoteId(ofLocal id: String?) throws -> String {
        guard let id, id != Vault.rootId else { return "root" }
        guard let n = try vault.node(id: id), let r = n.remoteId else {
            throw VaultError(.internalError, "folder \(id) is not on the server yet although its creation was replayed first",
                             hint: "run `vault doctor`, then `vault sync` again")
        }
        return r
    }

    /// Removes the entry and, in the same transaction, applies `apply` (the node's new state).
    private func finish(_ e: OutboxEntry, _ apply: () throws -> Void = {}) throws {
        try vault.db.transaction {
            try apply()
            try vault.db.run("DELETE FROM outbox WHERE seq = ?", [e.seq])
            // pending_op stays set while later entries of the node still wait.
            try vault.db.run("""
                UPDATE nodes SET pending_op = CASE WHEN EXISTS (SELECT 1 FROM outbox WHERE node_id = ?) THEN COALESCE(pending_op, 'sync') ELSE NULL END
                WHERE id = ?
                """, [e.nodeId, e.nodeId])
        }
    }

    private func synced(_ e: OutboxEntry, _ file: FileResource) throws {
        try finish(e) {
            try vault.db.run("UPDATE nodes SET remote_id = ?, version = ? WHERE id = ?", [file.id, file.version, e.nodeId])
        }
    }

    private func createFolder(_ e: OutboxEntry, _ node: Node) throws -> Outcome {
        let parent = try remoteId(ofLocal: e.payload.parentId ?? node.parentId)
        let name = e.payload.name ?? node.name
        let r = try call { try api.json(.post, "/v1/files", body: CreateFileRequest(name: name, parentId: parent, type: .folder)) }
        switch r.status {
        case 201:
            try synced(e, try ServerAPI.decode(FileResource.self, r))
            return .done("created folder \(try vault.path(of: node))")
        case 409:
            // Created by an earlier run that died before recording it? Adopt that folder.
            if let existing = try findChild(named: name, in: parent), existing.type == .folder {
                try synced(e, existing)
                return .done("created folder \(try vault.path(of: node))")
            }
            return .conflict("the server refused to create folder \(try vault.path(of: node)): \(ServerAPI.apiError(r)?.message ?? "name taken")")
        default:
            throw ServerAPI.statusError(r, doing: "create folder \(try vault.path(of: node))")
        }
    }

    private func upload(_ e: OutboxEntry, _ node: Node) throws -> Outcome {
        guard let blobId = e.payload.blobId, let sha = e.payload.sha256 else {
            throw VaultError(.internalError, "the outbox upload entry \(e.seq) has no content", hint: "run `vault doctor`")
        }
        let path = try vault.path(of: node)
        let fileId = node.remoteId ?? e.payload.remoteId
        let job = UploadJob(nodeId: node.id, path: path, requestId: e.requestId, blobId: blobId,
                            size: Int64(e.payload.size ?? node.size), sha256: sha, mimeType: e.payload.mimeType ?? node.mimeType,
                            name: e.payload.name ?? node.name,
                            parentRemoteId: fileId == nil ? try remoteId(ofLocal: e.payload.parentId ?? node.parentId) : nil,
                            fileId: fileId, baseVersion: fileId == nil ? nil : node.version)
        if let limit = holdLargeFrom, UInt64(max(0, job.size)) >= limit {
            let record = try TransferRecord.upload(in: vault, nodeId: node.id, requestId: e.requestId, blobId: blobId, total: job.size)
            record.set(.waitingForUnmetered, error: nil)
            return .waiting("waiting for an unmetered network: \(path) (\(ByteCount.format(UInt64(job.size))))")
        }
        let uploader = ResumableUpload(api: api, vault: vault, retry: retry, concurrency: concurrency, say: say)
        uploader.onProgress = onProgress
        switch try uploader.run(job) {
        case .uploaded(let file):
            try finish(e) {
                if node.localPath == blobId {
                    try vault.markUploaded(nodeId: node.id, remoteId: file.id, version: file.version)
                } else {
                    try vault.db.run("UPDATE nodes SET remote_id = ?, version = ? WHERE id = ?", [file.id, file.version, node.id])
                }
            }
            return .done("uploaded \(path) (\(ByteCount.format(UInt64(max(0, file.size)))))")
        case .conflict(let why):
            return .conflict(why)
        case .held(let state):
            try Self.settleHolds(vault: vault, api: api)
            return .held(state == "cancelled" ? "cancelled the upload of \(path)" : "paused the upload of \(path)")
        }
    }

    private func move(_ e: OutboxEntry, _ node: Node) throws -> Outcome {
        guard let remote = node.remoteId ?? e.payload.remoteId else {
            throw VaultError(.internalError, "cannot move \(try vault.path(of: node)): it is not on the server", hint: "run `vault doctor`")
        }
        let body = UpdateFileRequest(name: e.payload.name, parentId: try remoteId(ofLocal: e.payload.parentId))
        let r = try call { try api.json(.patch, "/v1/files/\(remote)", body: body, headers: [("If-Match", "\"\(node.version)\"")]) }
        switch r.status {
        case 200:
            try synced(e, try ServerAPI.decode(FileResource.self, r))
            return .done("moved \(try vault.path(of: node))")
        case 412 where Self.current(r).map({ $0.name == body.name && $0.parentId == body.parentId && !$0.trashed }) == true:
            // An earlier run moved it and died before recording that: the server already agrees.
            try synced(e, Self.current(r)!)
            return .done("moved \(try vault.path(of: node))")
        case 412, 404, 409:
            return .conflict("cannot move \(try vault.path(of: node)) on the server (HTTP \(r.status)): \(r.status == 412 ? "it changed there since" : ServerAPI.apiError(r)?.message ?? "")")
        default:
            throw ServerAPI.statusError(r, doing: "move \(try vault.path(of: node))")
        }
    }

    private func delete(_ e: OutboxEntry) throws -> Outcome {
        guard let remote = e.payload.remoteId else { try finish(e); return .done(nil) }
        let name = e.payload.name ?? remote
        var headers: [(String, String)] = []
        if let v = e.baseVersion { headers.append(("If-Match", "\"\(v)\"")) }
        let r = try call { try api.json(.delete, "/v1/files/\(remote)", headers: headers) }
        switch r.status {
        case 200, 204, 404:
            try finish(e)
            return .done("deleted \(name)")
        case 412 where Self.current(r)?.trashed == true:
            try finish(e)   // already deleted by an earlier run that died before recording it
            return .done("deleted \(name)")
        case 412:
            return .conflict("cannot delete \(name) on the server: it changed there since")
        default:
            throw ServerAPI.statusError(r, doing: "delete \(name)")
        }
    }

    /// A small metadata call, retried with backoff on retryable failures.
    private func call(_ body: () throws -> HTTPResponse) throws -> HTTPResponse {
        var failures = 0
        while true {
            var reason: String
            var retryAfter: TimeInterval?
            do {
                let r = try body()
                guard RetryPolicy.isRetryable(status: r.status) && r.status != 409 else { return r }
                reason = "server answered \(r.status)"
                retryAfter = RetryPolicy.retryAfter(r)
            } catch let e as HTTPError {
                guard RetryPolicy.isRetryable(e) else { throw ServerAPI.networkError(e, api.account.serverURL) }
                reason = e.description
            }
            failures += 1
            if failures >= retry.maxAttempts {
                throw VaultError(.io, "the server kept failing (\(reason))", hint: "run `vault sync` again later")
            }
            let wait = retry.delay(attempt: failures - 1, retryAfter: retryAfter)
            say("\(reason); retrying in \(String(format: "%.1f", wait)) s")
            Thread.sleep(forTimeInterval: wait)
        }
    }

    /// The current file a 412 answer carries.
    static func current(_ r: HTTPResponse) -> FileResource? {
        try? APIJSON.decoder().decode(FileResource.self, from: Data(r.body))
    }

    private func findChild(named name: String, in parent: String) throws -> FileResource? {
        var token: String?
        repeat {
            let q = "/v1/files?parentId=\(parent)&pageSize=1000" + (token.map { "&pageToken=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } ?? "")
            let r = try call { try api.json(.get, q) }
            guard r.status == 200 else { return nil }
            let page = try ServerAPI.decode(FileList.self, r)
            if let f = page.files.first(where: { $0.name == name }) { return f }
            token = page.nextPageToken
        } while token != nil
        return nil
    }
}
