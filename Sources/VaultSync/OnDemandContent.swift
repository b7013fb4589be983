import Foundation
import VaultAPI
import VaultCore
import VaultCrypto
import VaultHTTP
import VaultPrimitives

/// A remote file's content read by segment ranges on demand (`vault mount`, docs/mount.md
/// "Reading"): the content record is read from the server and checked as a download checks it
/// (`ContentDownload.headRecord`), then the segments a read needs are fetched — one `Range`
/// request per run of consecutive missing segments, with `If-Range` on the version — into the
/// vault's sparse partial (`SparseContent`), each authenticated before it is kept. Once every
/// segment is present the partial becomes the file's ordinary cached blob.
///
/// Reads come one at a time and hold no `Vault`: each call is given the vault of the request
/// (the mount opens and closes it per burst of requests). The prefetch of a sequential reader
/// runs on a helper thread of its own (a connection without the vault: nothing of the database
/// is touched there), so a read never waits for segments beyond its own; the partial is shared
/// under a lock, and a read that needs a segment the prefetch is fetching waits for it. No
/// retries: a server that cannot be reached, or an answer that stalls past the stall timeout,
/// fails the read at once with a reason for the log (a failed prefetch only means the next read
/// fetches for itself).
public final class OnDemandContent: @unchecked Sendable {
    /// The partial the fetched segments go into (reach it only under `lock`, or once `isComplete`).
    public let sparse: SparseContent
    let nodeId: String
    let remoteId: String
    /// The server's version and stored size of the content; nil for a partial opened offline
    /// (read from the server before the first fetch).
    private var version: Int64?
    private var storedSize: Int64?
    /// For the prefetch's own connection.
    private let account: SyncAccount?
    private let policy: EffectivePolicy
    /// Guards `sparse`, `fetchedBytes` and the prefetch's state; signalled when a prefetch ends.
    private let lock = NSCondition()
    /// The segments the helper thread is fetching.
    private var inFlight: ClosedRange<Int>?
    private var cancelled = false
    private let prefetcher = DispatchQueue(label: "vault.mount.prefetch")
    private var fetched: UInt64 = 0

    /// Sealed bytes fetched by this object, the prefetch's included (for the log and tests).
    public var fetchedBytes: UInt64 { locked { fetched } }
    /// Segments present, and in the blob (nil before the header).
    public var presentCount: Int { locked { sparse.presentCount } }
    public var segmentCount: Int? { locked { sparse.segmentCount } }
    /// Every segment is here and no prefetch is running: `sparse` may be published.
    public var isComplete: Bool { locked { inFlight == nil && sparse.isComplete } }

    private init(sparse: SparseContent, nodeId: String, remoteId: String, version: Int64?, storedSize: Int64?,
                 account: SyncAccount?, policy: EffectivePolicy) {
        self.sparse = sparse; self.nodeId = nodeId; self.remoteId = remoteId; self.version = version; self.storedSize = storedSize
        self.account = account; self.policy = policy
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Stops the prefetch after the run it is fetching (the vault locked, or the file closed).
    public func cancel() { locked { cancelled = true } }

    /// Opens file `node`'s remote content (NOT_DOWNLOADED, with a server copy): one request for
    /// its record, then the partial kept from an earlier run, if any. When the server cannot be
    /// reached, a partial kept here of the content this device last saw of the file (its sync
    /// base's record, the node's size and SHA-256) opens without it: the segments it holds are
    /// served, and a missing one fails at once.
    /// - Throws: `.notLocal` when the server cannot be reached (and no partial is here);
    ///   `.integrity` for a record that does not fit what this device knows; `.conflict` when
    ///   the server has newer content.
    public static func open(_ node: Node, in vault: Vault, policy: EffectivePolicy) throws -> OnDemandContent {
        guard let remoteId = node.remoteId, node.type == .file else {
            throw VaultError(.notLocal, "node \(node.id) has no copy on the server to read")
        }
        let account = try SyncAccount.load(from: vault)
        do {
            return try reaching(vault, policy, node.id) { api in
                let h = try head(api, vault, node, remoteId)
                let sparse = try vault.sparseContent(h.content, nodeId: node.id)
                return OnDemandContent(sparse: sparse, nodeId: node.id, remoteId: remoteId, version: h.version, storedSize: h.storedSize,
                                       account: account, policy: policy)
            }
        } catch let e as VaultError where e.kind == .notLocal {
            guard let seen = try vault.remoteBase(remoteId: remoteId)?.content, seen.size == Int64(node.size),
                  seen.sha256 == node.sha256?.lowercased(), let kept = try vault.keptSparseContent(seen, nodeId: node.id) else { throw e }
            return OnDemandContent(sparse: kept, nodeId: node.id, remoteId: remoteId, version: nil, storedSize: nil, account: account, policy: policy)
        }
    }

    /// The content record of `node` on the server, checked as a download checks it.
    private static func head(_ api: ServerAPI, _ vault: Vault, _ node: Node, _ remoteId: String) throws -> (content: ContentRecord, storedSize: Int64, version: Int64) {
        let download = ContentDownload(api: api, vault: vault, retry: .fromEnvironment(), say: { _ in })
        let h = try download.headRecord(remoteId, node: node, path: "node \(node.id)")
        try RemoteCodec.checkStoredSize(h.storedSize, of: h.content, nodeId: remoteId)
        return h
    }

    /// Makes the segments that plaintext `[offset, offset + count)` needs present, waiting for a
    /// prefetch that is fetching some of them. Returns the sealed bytes fetched.
    @discardableResult
    public func ensure(offset: UInt64, count: Int, in vault: Vault, policy: EffectivePolicy) throws -> UInt64 {
        let before = fetchedBytes
        if try locked({ try waitForPrefetch(offset: offset, count: count) }) { return 0 }   // no connection needed
        try reaching(vault, policy, nodeId) { api in
            if locked({ storedSize == nil }) {   // opened offline: the server's record first, of the same content
                guard let node = try vault.node(id: nodeId) else { throw VaultError(.notFound, "node \(nodeId) was removed") }
                let h = try Self.head(api, vault, node, remoteId)
                guard h.content.blob == sparse.record.blob else {
                    throw VaultError(.conflict, "the content of node \(nodeId) changed on the server", hint: "run `vault sync`")
                }
                locked { version = h.version; storedSize = h.storedSize }
            }
            if !locked({ sparse.hasHeader }) {
                let header = try fetch(api, 0..<UInt64(SealedBlobHeader.size))
                try locked { try sparse.storeHeader(header) }
            }
            try fetchRuns(api, locked { missingRuns(offset: offset, count: count) })
        }
        return fetchedBytes - before
    }

    /// Under the lock: waits (bounded by the stall timeout) while a prefetch fetches segments
    /// the read needs; true when the read needs no fetch.
    private func waitForPrefetch(offset: UInt64, count: Int) throws -> Bool {
        guard sparse.hasHeader, let needed = sparse.segments(plaintextOffset: offset, count: count) else { return false }
        let deadline = Date().addingTimeInterval(Self.stallSeconds + 5)
        while let f = inFlight, f.overlaps(needed), !sparse.missingRuns(in: needed).isEmpty {
            if !lock.wait(until: deadline) { break }
        }
        return sparse.missingRuns(in: needed).isEmpty
    }

    static var stallSeconds: TimeInterval {
        ProcessInfo.processInfo.environment["VAULT_SYNC_STALL_SECONDS"].flatMap(TimeInterval.init) ?? 30
    }

    /// Fetches `runs` (at most `maxRun` segments per request), storing each answer under the lock.
    private func fetchRuns(_ api: ServerAPI, _ runs: [ClosedRange<Int>], stopping: () -> Bool = { false }) throws {
        for run in runs {
            var start = run.lowerBound
            while start <= run.upperBound {
                if stopping() { return }
                let piece = start...min(run.upperBound, start + Self.maxRun - 1)
                let range = locked { sparse.ciphertextRange(of: piece)! }
                let bytes = try fetch(api, range)
                try locked { try sparse.storeSegments(piece, sealed: bytes) }
                start = piece.upperBound + 1
            }
        }
    }

    /// The missing segments of a read (header required; under the lock).
    private func missingRuns(offset: UInt64, count: Int) -> [ClosedRange<Int>] {
        guard let needed = sparse.segments(plaintextOffset: offset, count: count) else { return [] }
        return sparse.missingRuns(in: needed)
    }

    /// Starts the prefetch after a sequential read of `[offset, offset + count)`: once fewer
    /// than `ahead / 2` segments after it are here, the missing ones of the next `ahead` are
    /// fetched on the helper thread — so a sequential reader makes one request per `ahead / 2`
    /// or more segments, and never waits for one it does not need yet. Nothing when a prefetch
    /// is running, when cancelled, or before the server's record is known.
    public func prefetch(after offset: UInt64, count: Int, ahead: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard ahead > 0, inFlight == nil, !cancelled, storedSize != nil, let account,
              let needed = sparse.segments(plaintextOffset: offset, count: count), let total = sparse.segmentCount,
              needed.upperBound + 1 < total else { return }
        let soon = (needed.upperBound + 1)...min(total - 1, needed.upperBound + ahead / 2)
        guard !sparse.missingRuns(in: soon).isEmpty else { return }
        let window = (needed.upperBound + 1)...min(total - 1, needed.upperBound + ahead)
        let runs = sparse.missingRuns(in: window)
        guard !runs.isEmpty else { return }
        inFlight = window
        let policy = self.policy
        prefetcher.async { [self] in
            do {
                let api = try ServerAPI(vault: nil, account: account, policy: policy, warn: { _ in })
                api.failFastWhenUnreachable = true
                try fetchRuns(api, runs, stopping: { locked { cancelled } })
            } catch {
                // The read that needs these segments fetches them itself, and reports.
            }
            locked { inFlight = nil; lock.broadcast() }
        }
    }

    /// Authenticated plaintext `[offset, offset + count)`, fetching what is missing first (see
    /// `ensure`), then the prefetch when `ahead` (see `prefetch`). Segments of the partial that
    /// no longer authenticate (damaged at rest) are forgotten and fetched once more; a second
    /// failure is the integrity error. Never returns a byte that did not authenticate: the
    /// plaintext goes into `buffer` (up to its size; returns how many bytes), zeroed on a failure.
    public func read(offset: UInt64, into buffer: UnsafeMutableRawBufferPointer, ahead: Int = 0, in vault: Vault, policy: EffectivePolicy) throws -> Int {
        let count = buffer.count
        try ensure(offset: offset, count: count, in: vault, policy: policy)
        let bytes: Int
        do { bytes = try locked { try sparse.read(offset: offset, into: buffer) } } catch let e as VaultError where e.kind == .integrity {
            let forgot = try locked { () throws -> Int in
                guard let needed = sparse.segments(plaintextOffset: offset, count: count) else { return 0 }
                return try sparse.forgetDamaged(in: needed)
            }
            guard forgot > 0 else { throw e }
            try ensure(offset: offset, count: count, in: vault, policy: policy)
            bytes = try locked { try sparse.read(offset: offset, into: buffer) }
        }
        prefetch(after: offset, count: count, ahead: ahead)
        return bytes
    }

    /// Segments per request at most (1 MiB of 64 KiB segments): bounds the memory of one answer.
    public static let maxRun = 16

    /// One `Range` request for sealed bytes `range`; the answer must be exactly that range (206,
    /// `Content-Range: bytes a-b/storedSize`, no byte more).
    private func fetch(_ api: ServerAPI, _ range: Range<UInt64>) throws -> [UInt8] {
        let a = range.lowerBound, b = range.upperBound - 1
        let (version, storedSize, sealedSize) = locked { (self.version ?? 0, self.storedSize ?? 0, UInt64(sparse.sealedSize)) }
        var body: [UInt8] = []
        body.reserveCapacity(Int(range.count))
        let what = "node \(nodeId)"
        let r: HTTPResponse
        do {
            r = try api.send({
                HTTPRequest(method: .get, url: api.url("/v1/files/\(self.remoteId)/content"),
                            headers: [("Range", "bytes=\(a)-\(b)"), ("If-Range", "\"\(version)\"")])
            }, onHead: { head in
                let expected = "bytes \(a)-\(b)/\(storedSize)"
                guard head.status == 206 else {
                    throw head.status == 200 ? VaultError(.conflict, "the content of \(what) changed on the server", hint: "run `vault sync`")
                                             : ContentDownload.sizeLie(path: what, sealedSize, more: false, "it answered \(head.status) to a range request")
                }
                let said = head.header("Content-Range")?.trimmingCharacters(in: .whitespaces) ?? ""
                guard said == expected else {
                    throw ContentDownload.sizeLie(path: what, sealedSize, more: false, "its Content-Range says '\(said)' (expected \(expected))")
                }
            }, stream: { piece in
                guard body.count + piece.count <= Int(range.count) else {
                    throw ContentDownload.sizeLie(path: what, sealedSize, "it sent more than the range asked for")
                }
                body.append(contentsOf: piece)
            })
        } catch let e as HTTPError { throw ServerAPI.networkError(e, api.account.serverURL) }
        switch r.status {
        case 206: break
        case 404: throw VaultError(.notFound, "the server no longer has \(what)", hint: "it may have been deleted on another device")
        default: throw ServerAPI.statusError(r, doing: "read \(what)")
        }
        guard body.count == Int(range.count) else {
            throw VaultError(.io, "the server's answer for \(what) ended after \(body.count) of \(range.count) bytes", hint: "try again")
        }
        locked { fetched += UInt64(body.count) }
        return body
    }

    /// Runs `body` with a connection to the vault's server that fails fast when the server cannot
    /// be reached (`.notLocal`, with the reason).
    @discardableResult
    private static func reaching<T>(_ vault: Vault, _ policy: EffectivePolicy, _ nodeId: String, _ body: (ServerAPI) throws -> T) throws -> T {
        let api = try ServerAPI(vault: vault, account: try SyncAccount.require(vault), policy: policy, warn: { _ in })
        api.failFastWhenUnreachable = true
        do { return try body(api) } catch let u as ServerUnreachable {
            throw VaultError(.notLocal, "node \(nodeId) is not downloaded, and the server cannot be reached to fetch it (\(u))",
                             hint: "connect to the network (or start the server); `vault pin PATH` while connected keeps a file on this device")
        } catch let f as RetryableFailure {
            throw VaultError(.io, "fetching node \(nodeId) failed: \(f.reason)", hint: "check the connection and try again")
        }
    }

    private func reaching<T>(_ vault: Vault, _ policy: EffectivePolicy, _ nodeId: String, _ body: (ServerAPI) throws -> T) throws -> T {
        try Self.reaching(vault, policy, nodeId, body)
    }
}
