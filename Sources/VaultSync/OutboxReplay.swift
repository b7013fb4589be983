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
final class OutboxReplay: PushTransport {
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

    /// One push of the outbox through `PushRunner` (the loop the simulation runs too), with
    /// this class as its transport and the vault's push store; held uploads are settled before
    /// and after.
    func run() throws -> PushSummary {
        try vault.repairBlobAreas()
        try Self.settleHolds(vault: vault, api: api)
        defer { try? Self.settleHolds(vault: vault, api: api) }
        let runner = PushRunner(holdFolderDeletes: holdFolderDeletes, deviceId: api.account.deviceId, say: say, sizeText: ByteCount.format)
        return try runner.run(vault.pushStore(), self)
    }

    // MARK: PushTransport

    func newId() -> String { RemoteCodec.newId() }
    func entryFinished() {}

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
    static func refusal(_ r: HTTPResponse, doing what: String) -> PushStep? {
        guard (400..<500).contains(r.status) && r.status != 401 else { return nil }
        return .failed(ServerAPI.statusError(r, doing: what).message)
    }
}
