import Foundation
import VaultAPI
import VaultCore
import VaultHTTP
import VaultPrimitives

/// Replays the outbox to the server in order — folders created, files uploaded, moves and
/// deletes with `If-Match` — mapping local ids to server ids, and completes each entry in the
/// vault (`Vault.completeOutboxEntry`) once the server applied it.
///
/// What each entry sends and what each answer means are decided by `PushRules` (the rules the
/// simulation runs too); this class does the I/O: HTTP through `ServerAPI`, the sealed records
/// through the codec, uploads through `ResumableUpload`, and the vault's typed operations.
///
/// One entry never blocks the rest: an entry that cannot be replayed now (a conflict, a failure
/// of its own, a hold, a metered network) waits, and so do the entries that depend on it
/// (docs/outbox.md, rules D1–D6); every other entry goes on. Only a failure no entry can get past
/// (the network or the server down after retries) stops the run.
final class OutboxReplay {
    let api: ServerAPI
    let vault: Vault
    let retry: RetryPolicy
    let concurrency: Int
    let say: (String) -> Void
    /// Remote padding comes from it.
    let policy: EffectivePolicy
    /// Seals every name, record and content record this replay sends (SECURITY.md "End to end").
    let codec: RemoteCodec
    /// This device's name, sealed into every record it writes (`DeviceName`).
    let deviceName: String?
    var onProgress: ((TransferProgress) -> Void)?
    /// Set when large uploads must wait: the network is metered and they were not allowed.
    var holdLargeFrom: UInt64?
    /// Folder deletes wait for the pull that checks them (`PushRules.holdFolderDeletes`).
    var holdFolderDeletes = false

    init(api: ServerAPI, vault: Vault, policy: EffectivePolicy, retry: RetryPolicy, concurrency: Int, say: @escaping (String) -> Void) {
        self.api = api; self.vault = vault; self.policy = policy; self.retry = retry; self.concurrency = concurrency; self.say = say
        codec = vault.remoteCodec
        deviceName = try? SyncClient.deviceName(vault: vault)
    }

    /// How one entry's replay ended.
    enum Outcome {
        case done(String?)
        /// Depends on an entry that waits (not a problem of its own).
        case waits(String)
        case conflict(String)
        case failed(String)
        /// A large upload on a metered network.
        case waitingForUnmetered(String)
        /// Paused or cancelled by the user while it ran.
        case held(String)
    }

    func run() throws -> PushSummary {
        var summary = PushSummary()
        try vault.repairBlobAreas()
        try Self.settleHolds(vault: vault, api: api)
        defer { try? Self.settleHolds(vault: vault, api: api) }
        var waiting = PushWaiting()
        let cursor = try vault.changesCursor()
        for entry in try vault.outbox() {
            let removed = try vault.node(id: entry.nodeId) == nil
            // Held meanwhile from another command (`vault transfers pause|cancel`)?
            let state = entry.state.isReplayable ? try vault.outboxState(seq: entry.seq) : entry.state
            guard let state else { continue }
            guard state.isReplayable else {
                if state.isHeld { summary.held += 1 } else { summary.conflicts += 1 }
                waiting.add(entry, removed: removed)
                continue
            }
            if waiting.nodes.contains(entry.nodeId) {   // D1
                summary.skipped += 1
                waiting.add(entry, removed: removed)
                continue
            }
            let outcome = try replay(entry, waiting, cursor: cursor)
            if case .done = outcome {} else { waiting.add(entry, removed: removed) }
            switch outcome {
            case .done(let message):
                summary.done += 1
                if let message { note(message, &summary) }
            case .waits:
                summary.skipped += 1
            case .waitingForUnmetered(let why):
                summary.waitingForUnmetered += 1
                note(why, &summary)
            case .conflict(let why):
                try vault.markOutbox(seq: entry.seq, .conflict, reason: why)
                summary.conflicts += 1
                note("conflict: \(why)", &summary)
            case .failed(let why):
                try vault.markOutbox(seq: entry.seq, .failed, reason: why)
                summary.failed += 1
                note("failed: \(why)", &summary)
            case .held(let why):
                summary.held += 1
                note(why, &summary)
            }
        }
        return summary
    }

    private func note(_ message: String, _ summary: inout PushSummary) {
        summary.messages.append(message)
        say(message)
    }

    /// Settles what the user asked of held uploads: a cancelled one's server session is aborted
    /// (its bytes freed) and its transfer shows `cancelled` (until resumed or the file is
    /// removed); a paused one's transfer shows `paused`.
    static func settleHolds(vault: Vault, api: ServerAPI) throws {
        for (t, hold) in try vault.heldUploadTransfers() {
            if hold == .cancelled {
                if let uploadId = t.uploadId {
                    // Freed (or already gone): forget the session. Unreachable: try again next time.
                    guard let r = try? api.json(.delete, "/v1/upload/\(uploadId)"),
                          (200..<300).contains(r.status) || r.status == 404 || r.status == 410 else { continue }
                    try vault.updateTransfer(t.id, .session(uploadId: nil, url: nil))
                    try vault.updateTransfer(t.id, .progress(0))
                }
                if t.state != .cancelled { try vault.updateTransfer(t.id, .state(.cancelled)) }
            } else if t.state != .paused {
                try vault.updateTransfer(t.id, .state(.paused))
            }
        }
    }

    /// A small metadata call, retried with backoff on retryable failures.
    func call(_ body: () throws -> HTTPResponse) throws -> HTTPResponse {
        try api.retrying(retry, say: say, body)
    }

    /// The current file a 412 answer carries.
    static func current(_ r: HTTPResponse) -> FileResource? {
        try? APIJSON.decoder().decode(FileResource.self, from: Data(r.body))
    }

    /// The live children of server folder `parent` (every page).
    func children(of parent: String) throws -> [FileResource]? {
        var token: String?
        var out: [FileResource] = []
        repeat {
            let q = "/v1/files?parentId=\(parent)&pageSize=1000" + (token.map { "&pageToken=\(RemotePuller.escape($0))" } ?? "")
            let r = try call { try api.json(.get, q) }
            guard r.status == 200 else { return nil }
            let page = try ServerAPI.decode(FileList.self, r)
            out += page.files
            token = page.nextPageToken
        } while token != nil
        return out
    }

    /// The server ids of everything under server folder `id` (live, any depth).
    func subtree(of id: String) throws -> [String] {
        var out: [String] = []
        var folders = [id]
        while let f = folders.popLast() {
            for c in try children(of: f) ?? [] {
                out.append(c.id)
                if c.type == .folder { folders.append(c.id) }
            }
        }
        return out
    }

    /// For an entry's 4xx answer that is not a conflict: a failure of this entry (other entries go on).
    static func refusal(_ r: HTTPResponse, doing what: String) -> Outcome? {
        guard (400..<500).contains(r.status) && r.status != 401 else { return nil }
        return .failed(ServerAPI.statusError(r, doing: what).message)
    }
}
