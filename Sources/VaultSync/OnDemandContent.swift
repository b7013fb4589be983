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
/// Made for one read at a time and holding no `Vault`: each call is given the vault of the
/// request (the mount opens and closes it per burst of requests). No retries: a server that
/// cannot be reached, or an answer that stalls past the stall timeout, fails the read at once
/// with a reason for the log.
public final class OnDemandContent {
    /// The partial the fetched segments go into.
    public let sparse: SparseContent
    let nodeId: String
    let remoteId: String
    /// The server's version and stored size of the content; nil for a partial opened offline
    /// (read from the server before the first fetch).
    private var version: Int64?
    private var storedSize: Int64?
    /// Sealed bytes fetched by this object (for the log and tests).
    public private(set) var fetchedBytes: UInt64 = 0

    private init(sparse: SparseContent, nodeId: String, remoteId: String, version: Int64?, storedSize: Int64?) {
        self.sparse = sparse; self.nodeId = nodeId; self.remoteId = remoteId; self.version = version; self.storedSize = storedSize
    }

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
        do {
            return try reaching(vault, policy, node.id) { api in
                let h = try head(api, vault, node, remoteId)
                let sparse = try vault.sparseContent(h.content, nodeId: node.id)
                return OnDemandContent(sparse: sparse, nodeId: node.id, remoteId: remoteId, version: h.version, storedSize: h.storedSize)
            }
        } catch let e as VaultError where e.kind == .notLocal {
            guard let seen = try vault.remoteBase(remoteId: remoteId)?.content, seen.size == Int64(node.size),
                  seen.sha256 == node.sha256?.lowercased(), let kept = try vault.keptSparseContent(seen, nodeId: node.id) else { throw e }
            return OnDemandContent(sparse: kept, nodeId: node.id, remoteId: remoteId, version: nil, storedSize: nil)
        }
    }

    /// The content record of `node` on the server, checked as a download checks it.
    private static func head(_ api: ServerAPI, _ vault: Vault, _ node: Node, _ remoteId: String) throws -> (content: ContentRecord, storedSize: Int64, version: Int64) {
        let download = ContentDownload(api: api, vault: vault, retry: .fromEnvironment(), say: { _ in })
        let h = try download.headRecord(remoteId, node: node, path: "node \(node.id)")
        try RemoteCodec.checkStoredSize(h.storedSize, of: h.content, nodeId: remoteId)
        return h
    }

    /// Makes the segments that plaintext `[offset, offset + count)` needs present and, with
    /// `ahead` (sequential prefetch), once fewer than `ahead / 2` segments after them are here,
    /// the next `ahead` too — so a sequential reader triggers one request per `ahead / 2` or more
    /// segments, not one per read. Each missing run is fetched with one request (at most `maxRun`
    /// segments). Returns the sealed bytes fetched.
    @discardableResult
    public func ensure(offset: UInt64, count: Int, ahead: Int = 0, in vault: Vault, policy: EffectivePolicy) throws -> UInt64 {
        let before = fetchedBytes
        if sparse.hasHeader && missingRuns(offset: offset, count: count, ahead: ahead).isEmpty { return 0 }   // no connection needed
        try reaching(vault, policy, nodeId) { api in
            if storedSize == nil {   // opened offline: the server's record first, of the same content
                guard let node = try vault.node(id: nodeId) else { throw VaultError(.notFound, "node \(nodeId) was removed") }
                let h = try Self.head(api, vault, node, remoteId)
                guard h.content.blob == sparse.record.blob else {
                    throw VaultError(.conflict, "the content of node \(nodeId) changed on the server", hint: "run `vault sync`")
                }
                version = h.version; storedSize = h.storedSize
            }
            if !sparse.hasHeader { try sparse.storeHeader(try fetch(api, 0..<UInt64(SealedBlobHeader.size))) }
            for run in missingRuns(offset: offset, count: count, ahead: ahead) {
                var start = run.lowerBound
                while start <= run.upperBound {
                    let piece = start...min(run.upperBound, start + Self.maxRun - 1)
                    let range = sparse.ciphertextRange(of: piece)!
                    try sparse.storeSegments(piece, sealed: try fetch(api, range))
                    start = piece.upperBound + 1
                }
            }
        }
        return fetchedBytes - before
    }

    /// The runs `ensure` fetches (header required): the missing segments of the read, and of the
    /// prefetch window when it is due.
    private func missingRuns(offset: UInt64, count: Int, ahead: Int) -> [ClosedRange<Int>] {
        guard let needed = sparse.segments(plaintextOffset: offset, count: count), let total = sparse.segmentCount else { return [] }
        var wanted = needed
        if ahead > 0, !sparse.missingRuns(in: needed.lowerBound...min(total - 1, needed.upperBound + ahead / 2)).isEmpty {
            wanted = needed.lowerBound...min(total - 1, needed.upperBound + ahead)
        }
        return sparse.missingRuns(in: wanted)
    }

    /// Authenticated plaintext `[offset, offset + count)`, fetching what is missing first (see
    /// `ensure`). Segments of the partial that no longer authenticate (damaged at rest) are
    /// forgotten and fetched once more; a second failure is the integrity error. Never returns a
    /// byte that did not authenticate.
    public func read(offset: UInt64, count: Int, ahead: Int = 0, in vault: Vault, policy: EffectivePolicy) throws -> [UInt8] {
        try ensure(offset: offset, count: count, ahead: ahead, in: vault, policy: policy)
        do { return try sparse.read(offset: offset, count: count) } catch let e as VaultError where e.kind == .integrity {
            guard let needed = sparse.segments(plaintextOffset: offset, count: count), try sparse.forgetDamaged(in: needed) > 0 else { throw e }
            try ensure(offset: offset, count: count, in: vault, policy: policy)
            return try sparse.read(offset: offset, count: count)
        }
    }

    /// Segments per request at most (1 MiB of 64 KiB segments): bounds the memory of one answer.
    public static let maxRun = 16

    /// One `Range` request for sealed bytes `range`; the answer must be exactly that range (206,
    /// `Content-Range: bytes a-b/storedSize`, no byte more).
    private func fetch(_ api: ServerAPI, _ range: Range<UInt64>) throws -> [UInt8] {
        let a = range.lowerBound, b = range.upperBound - 1
        var body: [UInt8] = []
        body.reserveCapacity(Int(range.count))
        let what = "node \(nodeId)"
        let r: HTTPResponse
        do {
            r = try api.send({
                HTTPRequest(method: .get, url: api.url("/v1/files/\(remoteId)/content"),
                            headers: [("Range", "bytes=\(a)-\(b)"), ("If-Range", "\"\(version ?? 0)\"")])
            }, onHead: { head in
                let expected = "bytes \(a)-\(b)/\(self.storedSize ?? 0)"
                guard head.status == 206 else {
                    throw head.status == 200 ? VaultError(.conflict, "the content of \(what) changed on the server", hint: "run `vault sync`")
                                             : ContentDownload.sizeLie(path: what, UInt64(self.sparse.sealedSize), more: false, "it answered \(head.status) to a range request")
                }
                let said = head.header("Content-Range")?.trimmingCharacters(in: .whitespaces) ?? ""
                guard said == expected else {
                    throw ContentDownload.sizeLie(path: what, UInt64(self.sparse.sealedSize), more: false, "its Content-Range says '\(said)' (expected \(expected))")
                }
            }, stream: { piece in
                guard body.count + piece.count <= Int(range.count) else {
                    throw ContentDownload.sizeLie(path: what, UInt64(self.sparse.sealedSize), "it sent more than the range asked for")
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
        fetchedBytes += UInt64(body.count)
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
