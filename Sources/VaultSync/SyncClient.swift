import Foundation
import VaultAPI
import VaultCore
import VaultCrypto
import VaultHTTP
import VaultPrimitives

/// The vault's connection to its server: sign-in, pushing the outbox (uploads, folders, moves,
/// deletes) and downloading content on demand. Built only on the vault's sealed API.
///
/// Synchronous and not thread-safe: one client per command.
public final class SyncClient {
    let vault: Vault
    let api: ServerAPI
    /// The effective policy (KDF floors an envelope must meet, remote padding).
    let policy: EffectivePolicy
    let retry: RetryPolicy
    let say: (String) -> Void
    /// Receives each transfer's progress, a few times a second (for a progress bar).
    public var onProgress: ((TransferProgress) -> Void)?
    /// Changes and nodes a pull asks per page (nil: `RemotePuller.defaultPage`; tests ask few).
    var pullPage: Int?

    /// A client for the server `vault login` stored; throws `.notFound` when there is none. The
    /// stored address is checked first (`ServerAddress.check`: transport rules, `allowedServers`),
    /// so no request reaches a server the rules or the policy forbid.
    /// - Parameters:
    ///   - policy: the effective policy (allowed servers, pinned keys, clear-text opt-in).
    ///   - say: receives retry notes and results for people (never secrets).
    ///   - warn: receives warnings that must always be shown (a clear-text connection).
    public convenience init(vault: Vault, policy: EffectivePolicy, say: @escaping (String) -> Void = { _ in },
                            warn: (String) -> Void = { _ in }) throws {
        self.init(api: try ServerAPI(vault: vault, account: try SyncAccount.require(vault), policy: policy, warn: warn), vault: vault,
                  policy: policy, say: say)
    }

    /// - Parameter retry: the backoff of every request and transfer (tests pass a fast one).
    init(api: ServerAPI, vault: Vault, policy: EffectivePolicy, retry: RetryPolicy = .fromEnvironment(), say: @escaping (String) -> Void) {
        self.vault = vault
        self.policy = policy
        self.api = api
        self.retry = retry
        self.say = say
    }

    /// The server address this vault syncs with.
    public var serverURL: String { api.account.serverURL }

    /// The id of the vault this client syncs.
    public var vaultId: String { vault.vaultId }

    /// Set once this client brought the key envelope in step (once per command).
    var envelopeInStep = false

    /// Signs in to `serverURL` as `user`, and stores the address, user, token and password (for
    /// refreshing the token) in the vault's encrypted database.
    ///
    /// - Parameter insecureHTTP: allow plain http:// to another machine (`--insecure-http`).
    /// - Throws: `.insecure` for plain http:// to another machine without `insecureHTTP`,
    ///   `.policy` for a server outside `allowedServers` (when the policy names any) or a forbidden
    ///   opt-in, `.wrongPassword` when the server refuses the password, `.io`/`.insecure` when it
    ///   cannot be reached safely.
    @discardableResult
    public static func login(vault: Vault, serverURL: String, user: String, password: SecureBytes, caFile: String?,
                             insecureHTTP: Bool = false, policy: EffectivePolicy, warn: (String) -> Void = { _ in }) throws -> SyncClient {
        let url = try ServerAddress(serverURL).url
        let passwordText = password.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let previous = try SyncAccount.load(from: vault)
        let account = SyncAccount(serverURL: url, user: user,
                                  deviceId: previous?.deviceId ?? UUID().uuidString.lowercased(),
                                  caFile: caFile.map { URL(fileURLWithPath: $0).standardizedFileURL.path },
                                  insecureHTTP: insecureHTTP, password: passwordText, token: nil, tokenExpiresAt: nil)
        // Nothing is stored before the server accepted the password and the account is this
        // vault's (or empty): another vault's envelope, or files synced in plaintext, refuse.
        let api = try ServerAPI(vault: nil, account: account, policy: policy, warn: warn)
        try api.refreshToken()
        let client = SyncClient(api: api, vault: vault, policy: policy, say: { _ in })
        if let previous, previous.serverURL != url || previous.user != user {
            try vault.setSyncState([(.envelopeBase, nil), (.envelopeVersion, nil)])   // another account: no agreement yet
        }
        try client.syncEnvelope()
        try api.account.save(to: vault)
        return SyncClient(api: try ServerAPI(vault: vault, account: api.account, policy: policy, warn: warn), vault: vault,
                          policy: policy, say: { _ in })
    }

    /// Throws when the server this vault is logged in to may not be used now (transport rules,
    /// policy), without connecting; nothing when it is not logged in.
    public static func checkServer(vault: Vault, policy: EffectivePolicy) throws {
        guard let account = try SyncAccount.load(from: vault) else { return }
        try ServerAddress(account.serverURL).check(policy: policy, insecureHTTP: account.insecureHTTP, warn: { _ in })
    }

    /// The policy items about the server this vault is logged in to (none when it is not): for
    /// `vault policy check`, with the command that fixes each.
    public static func compliance(vault: Vault, policy: EffectivePolicy) throws -> [ComplianceItem] {
        guard let account = try SyncAccount.load(from: vault), let address = try? ServerAddress(account.serverURL) else { return [] }
        var items: [ComplianceItem] = []
        if let allowed = policy.allowedServers.value {
            let ok = address.isAllowed(by: allowed)
            let choices = allowed.map { $0.contains("://") ? $0 : "https://\($0)" }
            items.append(ComplianceItem(
                item: "server", compliant: ok,
                detail: ok ? "\(address.url) is an allowed server"
                           : "this vault is logged in to \(address.url), which the policy does not allow (allowed: \(allowed.isEmpty ? "none" : allowed.joined(separator: ", ")))",
                fix: ok ? nil : choices.first.map { "vault login --server \($0) --user \(account.user)" }
                    ?? "no server is allowed: this vault must not sync; ask your administrator"))
        }
        if address.isCleartext && !address.isLoopback && policy.allowInsecureHTTP.value == false {
            items.append(ComplianceItem(
                item: "server transport", compliant: false,
                detail: "\(address.url) is plain http:// to another machine, which the policy forbids",
                fix: "vault login --server https://\(address.origin.dropFirst("http://".count))\(address.path) --user \(account.user)"))
        }
        return items
    }

    /// Chunks of one upload in flight by default. A cut-off chunk keeps its received prefix on
    /// the server, so more connections cost no re-sent bytes; four keep loopback near line rate.
    public static let defaultConcurrency = 4

    /// Replays every pending local change to the server, in order. An entry that fails for a
    /// reason of its own is marked failed (with the reason) and the entries that do not depend
    /// on it go on; conflicts are recorded and reported, never overwritten. Stops at the first
    /// failure no entry can get past (the server or network down after retries); its transfer is
    /// left waiting, resumable. Records how the sync went (`Vault.syncHealth`).
    /// - Parameter concurrency: chunks of one upload in flight at once, each on its own connection (1…16).
    /// - Parameter holdLargeFrom: when set, uploads of at least this many bytes wait (metered network).
    /// - Parameter holdFolderDeletes: folder deletes wait (the first push of a two-way sync: the
    ///   pull checks first that nothing in the folder changed on the server).
    public func push(concurrency: Int = SyncClient.defaultConcurrency, holdLargeFrom: UInt64? = nil,
                     holdFolderDeletes: Bool = false) throws -> PushSummary {
        let replay = OutboxReplay(api: api, vault: vault, policy: policy, retry: retry, concurrency: min(max(concurrency, 1), 16), say: say)
        replay.holdLargeFrom = holdLargeFrom
        replay.holdFolderDeletes = holdFolderDeletes
        replay.onProgress = onProgress
        // Uploaded content moves from staging to the cache: fit the cache to the budget after the
        // replay, also when it stopped part-way.
        defer { if let warning = (try? vault.applyBudget())?.message { say("warning: " + warning) } }
        let summary = try recordingFailure { () -> PushSummary in
            try syncEnvelope()
            return try replay.run()
        }
        try vault.recordSyncSuccess()
        try vault.pruneTransfers()
        return summary
    }

    /// Downloads the content of every pinned file that is not on this device (BRIEF §7: pinned
    /// content downloads in the background of sync). Files at least `holdLargeFrom` bytes wait
    /// when the network is metered. Returns (downloaded, waiting).
    public func downloadPinned(holdLargeFrom: UInt64? = nil) throws -> (downloaded: Int, waiting: Int) {
        try recordingFailure {
            try syncEnvelope()
            return try downloadPinnedFiles(holdLargeFrom: holdLargeFrom)
        }
    }

    private func downloadPinnedFiles(holdLargeFrom: UInt64?) throws -> (downloaded: Int, waiting: Int) {
        let ids = try vault.pinnedFilesToDownload()
        var done = 0, waiting = 0
        for id in ids {
            guard let node = try vault.node(id: id) else { continue }
            if let limit = holdLargeFrom, node.size >= limit { waiting += 1; continue }
            let download = ContentDownload(api: api, vault: vault, retry: retry, say: say)
            download.onProgress = onProgress
            _ = try download.run(node)
            say("downloaded \(try vault.path(of: node)) (pinned)")
            done += 1
        }
        return (done, waiting)
    }

    /// Runs `body`; an error it throws is recorded as a failed sync (for `vault status`) and rethrown.
    func recordingFailure<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch {
            try? vault.recordSyncFailure((error as? VaultError)?.message ?? "\(error)")
            throw error
        }
    }

    /// Pauses (or, with `cancel`, cancels) the pending upload of `nodeId`: its outbox entries are
    /// skipped by `push` until resumed; a cancel also aborts the server's upload session so its
    /// bytes are freed. The sealed staging copy stays: the file still needs it.
    public func hold(nodeId: String, cancel: Bool) throws -> Int {
        let n = try Self.requestHold(vault: vault, nodeId: nodeId, cancel: cancel)
        try OutboxReplay.settleHolds(vault: vault, api: api)
        return n
    }

    /// Marks the pending upload of `nodeId` paused or cancelled, and nothing more: safe beside a
    /// running `vault sync`, which stops that upload at its next progress write (about three
    /// times a second) and settles it (a cancel aborts the server session). Returns the entries marked.
    public static func requestHold(vault: Vault, nodeId: String, cancel: Bool) throws -> Int {
        try vault.holdOutbox(nodeId: nodeId, cancel: cancel)
    }

    /// Waits (up to `timeout`) until no upload of `nodeId` is running, i.e. the sync beside us
    /// obeyed a hold. Returns whether it did.
    public static func waitUntilStopped(vault: Vault, nodeId: String, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let running = (try? vault.runningUploads(nodeId: nodeId)) ?? 0
            if running == 0 { return true }
            usleep(100_000)
        }
        return false
    }

    /// Puts paused or cancelled entries (of one node, or all) back in line for the next push
    /// (`vault transfers resume`), after settling the downloads that had in fact finished.
    @discardableResult
    public static func release(vault: Vault, nodeId: String?) throws -> Int {
        try vault.settleFinishedDownloads()
        return try vault.releaseOutbox(nodeId: nodeId)
    }

    /// Makes `node`'s content local: downloads it when it is NOT_DOWNLOADED and on the server.
    /// Returns the node as it now is (unchanged when nothing was needed).
    ///
    /// For a read that waits on it (`cat`, `get`): a server that cannot be reached at all
    /// (connection refused, no route, unknown host, connect timeout) fails at once with
    /// `.notLocal` (exit 10), without the retries a sync makes.
    public func ensureLocal(_ node: Node) throws -> Node {
        guard node.type == .file, node.contentState == .notDownloaded, node.remoteId != nil else { return node }
        let download = ContentDownload(api: api, vault: vault, retry: retry, say: say)
        download.onProgress = onProgress
        api.failFastWhenUnreachable = true
        defer { api.failFastWhenUnreachable = false }
        do { return try download.run(node) } catch let u as ServerUnreachable {
            throw VaultError(.notLocal, "\(try vault.path(of: node)) is not downloaded, and the server cannot be reached to download it (\(u))",
                             hint: "connect to the network (or start the server), then run the command again; `vault pin PATH` while connected keeps a file on this device")
        }
    }
}

/// One transfer's progress, for a progress bar.
public struct TransferProgress: Sendable {
    /// The file's vault path.
    public var path: String
    public var direction: TransferDirection
    public var bytesDone: Int64
    public var bytesTotal: Int64
}
