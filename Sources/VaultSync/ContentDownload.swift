import Foundation
import VaultAPI
import VaultCore
import VaultHTTP
import VaultPrimitives

/// Downloads a file's content (its head, or a revision) end to end (SECURITY.md "End to end",
/// content record rules): the content record is read from the server and opened through the
/// codec (bound to the file's id, not older than this device has seen, naming the content this
/// device expects); then exactly the sealed bytes `[0, sealedSize)` are fetched with `Range` —
/// never the padding — into `tmp/<blobId>.partial`, each segment authenticated as it arrives
/// (`SealedDownload`); a kill or a dropped connection resumes after the kept bytes, which are
/// re-verified first. Only when every segment opened and the plaintext has the record's size and
/// SHA-256 is the blob published into the cache; any mismatch is an integrity error (exit 6), the
/// partial is deleted and nothing is published. Free space is checked first.
final class ContentDownload {
    let api: ServerAPI
    let vault: Vault
    let retry: RetryPolicy
    let say: (String) -> Void
    let codec: RemoteCodec
    var onProgress: ((TransferProgress) -> Void)?

    init(api: ServerAPI, vault: Vault, retry: RetryPolicy, say: @escaping (String) -> Void) {
        self.api = api; self.vault = vault; self.retry = retry; self.say = say
        codec = vault.remoteCodec
    }

    /// Downloads `node`'s head content (a file with a remote id whose content is not here) and
    /// returns it LOCAL.
    func run(_ node: Node) throws -> Node {
        guard let remoteId = node.remoteId else {
            throw VaultError(.notLocal, "\(try vault.path(of: node)) has no copy on the server to download")
        }
        let path = try vault.path(of: node)
        try vault.blobs.checkFreeSpace(for: BlobStore.sealedSize(plaintextSize: node.size), doing: "download \(path)")
        let record = try TransferRecord.download(in: vault, nodeId: node.id, total: Int64(node.size))
        if let onProgress {
            let total = Int64(node.size)
            record.observer = { onProgress(TransferProgress(path: path, direction: .download, bytesDone: $0, bytesTotal: total)) }
        }
        var restarts = 0
        while true {
            let head: (content: ContentRecord, storedSize: Int64, version: Int64)
            do { head = try retrying(record, path) { try self.headRecord(remoteId, node: node, path: path) } } catch {
                record.set(.failed, error: (error as? VaultError)?.message ?? "\(error)")
                throw error
            }
            do {
                // The blob may be here already (a restore made an older revision the head again).
                if let here = try vault.blobRecord(head.content.blob), here.size == UInt64(head.content.size),
                   here.sha256 == head.content.sha256, try vault.locateBlob(here.id) != nil {
                    return try publish(here, node: node, path: path, record: record, fresh: false)
                }
                let blob = try fetch(url: "/v1/files/\(remoteId)/content", etag: "\"\(head.version)\"", content: head.content,
                                     storedSize: head.storedSize, path: path, record: record)
                return try publish(blob, node: node, path: path, record: record)
            } catch is ContentChanged where restarts < 3 {
                restarts += 1   // a new head arrived meanwhile: read its record again
            }
        }
    }

    /// Downloads the content of revision `revisionId` of server file `fileId`, described by the
    /// content record `content` (opened by the caller through the codec from the revision list),
    /// into the cache, and returns its blob (recorded by the caller). For the revisions commands.
    func fetchRevision(fileId: String, revisionId: String, content: ContentRecord, storedSize: Int64, nodeId: String,
                       path: String) throws -> BlobRecord {
        try RemoteCodec.checkStoredSize(storedSize, of: content, nodeId: fileId)
        let record = try TransferRecord.download(in: vault, nodeId: nodeId, total: content.size)
        let blob = try fetch(url: "/v1/files/\(fileId)/revisions/\(revisionId)/content", etag: "\"rev-\(revisionId)\"", content: content,
                             storedSize: storedSize, path: path, record: record)
        record.set(.done)   // else it stays "running" with nothing behind it: a transfer waiting for ever
        return blob
    }

    /// What the server says the head of `remoteId` is, opened and checked against what this
    /// device knows: the same content (or a newer one, which needs a sync first); never older.
    func headRecord(_ remoteId: String, node: Node, path: String) throws -> (content: ContentRecord, storedSize: Int64, version: Int64) {
        let r = try transport { try api.json(.get, "/v1/files/\(remoteId)") }
        switch r.status {
        case 200: break
        case 404: throw VaultError(.notFound, "the server no longer has \(path)", hint: "it may have been deleted on another device")
        default:
            if RetryPolicy.isRetryable(status: r.status) {
                throw RetryableFailure(reason: "server answered \(r.status)", retryAfter: RetryPolicy.retryAfter(r))
            }
            throw ServerAPI.statusError(r, doing: "read \(path) on the server")
        }
        let f = try ServerAPI.decode(FileResource.self, r)
        let remote = try codec.open(f.sealed)
        guard f.id == remoteId, !remote.isFolder, let content = remote.content else {
            throw RemoteCodec.lie("\(path) is listed as something other than the file this device knows")
        }
        let known = try vault.remoteSeqs(nodeId: node.id)
        guard content.seq >= known.content else {
            throw RemoteCodec.lie("\(path) is served at an older version than this device has seen (content seq \(content.seq) < \(known.content): a rollback)")
        }
        guard content.size == Int64(node.size), content.sha256 == node.sha256?.lowercased() else {
            if content.seq > known.content {
                throw VaultError(.conflict, "\(path) changed on the server since this device last synced",
                                 hint: "run `vault sync`, then try again")
            }
            throw RemoteCodec.lie("the server's record of \(path) names other content than this device recorded for the same version")
        }
        return (content, f.size, f.version)
    }

    /// Fetches the sealed bytes of `content` from `url` into a verified cache blob (not yet
    /// recorded anywhere). Resumes a kept partial of the same blob.
    private func fetch(url: String, etag: String, content: ContentRecord, storedSize: Int64, path: String,
                       record: TransferRecord) throws -> BlobRecord {
        if let old = record.partialBlobId, old != content.blob { vault.blobs.deletePartial(old) }
        let download = try vault.sealedDownload(content)
        record.setPartialBlob(content.blob)
        let z = UInt64(content.sealedSize), plain = content.size
        func shown(_ sealed: UInt64) -> Int64 { z == 0 ? 0 : Int64(Double(sealed) / Double(z) * Double(plain)) }
        record.progress(shown(download.received), force: true)
        if download.received > 0 { say("\(path): resuming the download at \(ByteCount.format(download.received))") }
        var reported = download.received
        do {
            while download.received < z {
                try retrying(record, path) {
                    try self.fetchRange(url: url, etag: etag, download: download, storedSize: UInt64(storedSize), path: path) {
                        // Progress from the bytes written into the partial (what a kill keeps).
                        let w = download.written
                        if w > reported { reported = w; record.progress(shown(w)) }
                    }
                }
            }
            let blob = try download.finish()
            record.setPartialBlob(nil)
            return blob
        } catch let e as VaultError where e.kind == .integrity || e.kind == .noSpace {
            // An answer that cannot be trusted, or a full disk: nothing of it is kept.
            download.discard()
            record.setPartialBlob(nil)
            let reported = e.kind == .noSpace ? diskFull(plain, path: path, arrived: download.received) : e
            record.set(.failed, error: reported.message)
            throw reported
        } catch is ContentChanged {
            download.discard()
            record.setPartialBlob(nil)
            throw ContentChanged()
        } catch {
            try? download.flush()
            record.set(.failed, error: (error as? VaultError)?.message ?? "\(error)")
            throw error
        }
    }

    /// One request for the rest of the sealed bytes: `Range: bytes=R-(Z-1)` (with `If-Range`
    /// once some are kept). The answer must be exactly that range of a file of the listed size;
    /// a byte past it stops the transfer.
    private func fetchRange(url: String, etag: String, download: SealedDownload, storedSize: UInt64, path: String,
                            progress: @escaping () -> Void) throws {
        let start = download.received, z = download.sealedSize
        var response: HTTPResponse?
        do {
            response = try api.send({
                var req = HTTPRequest(method: .get, url: api.url(url), headers: [("Range", "bytes=\(start)-\(z - 1)")])
                if start > 0 { req.headers.append(("If-Range", etag)) }
                return req
            }, onHead: { head in
                if head.status == 200 && start > 0 { throw ContentChanged() }   // If-Range: the content changed
                try Self.checkAnnounced(head, path: path, start: start, sealedSize: z, storedSize: storedSize)
            }, stream: { piece in
                guard download.received + UInt64(piece.count) <= z else {
                    throw Self.sizeLie(path: path, z, "it kept sending after the sealed content's last byte")
                }
                try download.append(piece)
                progress()
                if download.received >= 4 << 20 { TestHooks.crashPoint("download-midway") }
            })
        } catch let e as HTTPError {
            try? download.flush()
            if RetryPolicy.isRetryable(e) { throw RetryableFailure(reason: e.description, retryAfter: nil) }
            throw ServerAPI.networkError(e, api.account.serverURL)
        }
        try download.flush()
        guard let r = response else { return }
        switch r.status {
        case 200, 206:
            guard download.received == z else {
                throw RetryableFailure(reason: "the answer ended after \(download.received) of \(z) bytes", retryAfter: nil)
            }
        case 404:
            throw VaultError(.notFound, "the server no longer has \(path)", hint: "it may have been deleted on another device")
        default:
            if RetryPolicy.isRetryable(status: r.status) {
                throw RetryableFailure(reason: "server answered \(r.status)", retryAfter: RetryPolicy.retryAfter(r))
            }
            throw ServerAPI.statusError(r, doing: "download \(path)")
        }
    }

    /// Refuses an answer whose headers do not fit the request: a 206 must say
    /// `bytes start-(Z-1)/storedSize` with `Content-Length` Z − start; a 200 (a server that
    /// ignored the range) is accepted only for a first request of a file stored unpadded, with
    /// `Content-Length` Z.
    static func checkAnnounced(_ head: HTTPResponse, path: String, start: UInt64, sealedSize z: UInt64, storedSize: UInt64) throws {
        guard head.status == 200 || head.status == 206 else { return }
        if head.status == 200 && (start > 0 || storedSize != z) {
            throw sizeLie(path: path, z, more: false, "it ignored the range it was asked for")
        }
        let expectedLength = z - start
        if let raw = head.header("Content-Length")?.trimmingCharacters(in: .whitespaces) {
            guard let announced = UInt64(raw) else { throw sizeLie(path: path, z, more: false, "its Content-Length '\(raw)' is not a number") }
            guard announced == expectedLength else {
                throw sizeLie(path: path, z, more: announced > expectedLength,
                              "its Content-Length announces \(announced) bytes where \(expectedLength) \(start > 0 ? "remain after byte \(start)" : "were expected")")
            }
        }
        guard head.status == 206 else { return }
        let raw = head.header("Content-Range")?.trimmingCharacters(in: .whitespaces) ?? ""
        let expected = "bytes \(start)-\(z - 1)/\(storedSize)"
        guard raw != expected else { return }
        let numbers = raw.dropFirst("bytes ".count).split(whereSeparator: { $0 == "-" || $0 == "/" }).map { UInt64($0) }
        let bigger = raw.hasPrefix("bytes ") && numbers.count == 3 && numbers.allSatisfy { $0 != nil }
            && (numbers[1]! >= z || numbers[2]! > storedSize)
        throw sizeLie(path: path, z, more: bigger, raw.isEmpty ? "its partial answer has no Content-Range (expected \(expected))"
                                                              : "its Content-Range says \(raw) (expected \(expected))")
    }

    /// The error for an answer that does not fit the content's recorded size (`more`: past it).
    static func sizeLie(path: String, _ size: UInt64, more: Bool = true, _ detail: String) -> VaultError {
        let what = more ? "sent more than the file's size" : "sent an answer that does not match the file's size"
        return VaultError(.integrity, "the server \(what) (\(size) bytes of sealed content) for \(path): \(detail); the download was stopped and nothing of it was kept",
                          hint: "the server, or something between it and this device, is misbehaving; nothing was stored and the file stays not downloaded; try again later, and report it to the server's administrator if it goes on")
    }

    /// The error for a disk that filled up mid-download (the partial is already deleted).
    private func diskFull(_ size: Int64, path: String, arrived: UInt64) -> VaultError {
        let needed = BlobStore.sealedSize(plaintextSize: UInt64(max(0, size))) + BlobStore.freeSpaceReserve
        return VaultError(.noSpace, "the disk became full while downloading \(path) (\(ByteCount.format(arrived)) of \(ByteCount.format(UInt64(max(0, size)))) had arrived); the partial download was deleted to give the space back",
                          hint: "free some space so that at least \(ByteCount.format(needed)) is free on the disk that holds the vault (`vault evict`, or elsewhere on the disk), then run the command again; nothing in the vault changed and the file is still on the server")
    }

    /// Publishes the verified blob as the node's content (it was checked against the record,
    /// which names the node's recorded size and SHA-256).
    private func publish(_ blob: BlobRecord, node: Node, path: String, record: TransferRecord, fresh: Bool = true) throws -> Node {
        let published: Node?
        do { published = try vault.publishDownloaded(blob, nodeId: node.id, transfer: record.id) } catch {
            if fresh { vault.blobs.delete(blob.id, area: .cache) }
            throw error
        }
        record.end(.done, bytes: Int64(blob.size))
        guard let published else { throw VaultError(.conflict, "\(path) changed while it downloaded", hint: "try again") }
        // New content in the cache: fit the cache to the budget, keeping this file (it is being
        // read or was asked for). The download stands even if that bookkeeping fails.
        if let warning = (try? vault.applyBudget(keeping: [node.id]))?.message { say("warning: " + warning) }
        return published
    }

    /// Runs `body`, retrying a `RetryableFailure` with backoff until the policy gives up.
    @discardableResult
    private func retrying<T>(_ record: TransferRecord, _ path: String, _ body: () throws -> T) throws -> T {
        var failures = 0
        while true {
            do { return try body() } catch let f as RetryableFailure {
                failures += 1
                if retry.pause(after: f, failures: failures, record: record, path: path, say: say).giveUp {
                    record.set(.failed, error: f.reason)
                    throw VaultError(.io, "the download of \(path) failed \(failures) times: \(f.reason)",
                                     hint: "check the connection and try again")
                }
            }
        }
    }

    /// Runs a request; a retryable transport failure becomes `RetryableFailure`.
    private func transport(_ body: () throws -> HTTPResponse) throws -> HTTPResponse { try api.retryableTransport(body) }
}

/// The server's content changed during a resumed download (`If-Range` did not match).
struct ContentChanged: Error {}
