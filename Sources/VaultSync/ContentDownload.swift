import Foundation
import VaultAPI
import VaultCore
import VaultHTTP

/// Downloads a file's head content straight into a new sealed blob in the cache: free space
/// checked first, the whole-file SHA-256 checked last against the node's recorded checksum. A
/// mismatch discards the blob; only verified content is published as LOCAL.
///
/// The server's answer must fit the file's recorded size: headers that announce another size
/// are refused before any body byte, and the transfer stops at the first byte past the size.
/// Such an answer, or a disk that fills up mid-way, also deletes the sealed partial (nothing
/// of a lying answer is resumed from; a full disk gets its space back).
final class ContentDownload {
    let api: ServerAPI
    let vault: Vault
    let retry: RetryPolicy
    let say: (String) -> Void
    var onProgress: ((TransferProgress) -> Void)?
    /// Plaintext bytes of the file on this device so far (kept partial plus this run's).
    private var arrived: UInt64 = 0

    init(api: ServerAPI, vault: Vault, retry: RetryPolicy, say: @escaping (String) -> Void) {
        self.api = api; self.vault = vault; self.retry = retry; self.say = say
    }

    /// Downloads `node` (a file with a remote id whose content is not here) and returns it LOCAL.
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
        var failures = 0
        while true {
            do {
                let blob: BlobRecord
                do {
                    blob = try fetch(remoteId, path: path, size: node.size, version: node.version, record: record)
                } catch is BlobStore.DiscardPartial {
                    record.setPartialBlob(nil)
                    continue    // the partial was dropped: fetch the whole file again
                }
                record.setPartialBlob(nil)
                return try publish(blob, node: node, path: path, record: record)
            } catch let f as RetryableFailure {
                failures += 1
                if retry.pause(after: f, failures: failures, record: record, path: path, say: say).giveUp {
                    record.set(.failed, error: f.reason)
                    throw VaultError(.io, "the download of \(path) failed \(failures) times: \(f.reason)",
                                     hint: "check the connection and try again")
                }
            } catch let e as VaultError where e.kind == .noSpace || e.kind == .integrity {
                // A full disk, or an answer that cannot be trusted: the partial goes first (its
                // space back, so the bookkeeping below can still be written).
                if let id = record.partialBlobId { vault.blobs.deletePartial(id) }
                record.setPartialBlob(nil)
                let reported = e.kind == .noSpace ? diskFull(node, path: path) : e
                record.set(.failed, error: reported.message)
                throw reported
            } catch {
                record.set(.failed, error: (error as? VaultError)?.message ?? "\(error)")
                throw error
            }
        }
    }

    /// Streams the content into a sealed cache blob (not yet recorded anywhere). A partial blob
    /// from an earlier, interrupted run keeps its authenticated segments and the rest is fetched
    /// with `Range` (and `If-Range`: if the file changed on the server, it starts over).
    private func fetch(_ remoteId: String, path: String, size: UInt64, version: Int64, record: TransferRecord) throws -> BlobRecord {
        var response: HTTPResponse?
        var received: Int64 = 0
        let blob = try vault.blobs.writeResumable(area: .cache, resuming: record.partialBlobId,
                                                  onStart: { if $0 != record.partialBlobId { record.setPartialBlob($0) } }) { resumeAt, emitNow in
          self.arrived = resumeAt
          record.progress(Int64(resumeAt), force: true)   // persisted at the start, so a kill never shows less
          if resumeAt > 0 { say("\(path): resuming the download at \(ByteCount.format(resumeAt))") }
          let remaining = Int64(size) - Int64(resumeAt)
          try withoutActuallyEscaping(emitNow) { emit in
            do {
                response = try api.send({
                    var req = HTTPRequest(method: .get, url: api.url("/v1/files/\(remoteId)/content"))
                    if resumeAt > 0 { req.headers += [("Range", "bytes=\(resumeAt)-"), ("If-Range", "\"\(version)\"")] }
                    return req
                }, onHead: { head in
                    // The server sent the whole file (it changed, or ignored the range): start over
                    // before any of it is written.
                    if resumeAt > 0 && head.status == 200 { throw BlobStore.DiscardPartial() }
                    try Self.checkAnnouncedSize(head, path: path, size: size, resumeAt: resumeAt)
                }, stream: { piece in
                    // Never a byte past the file's size: stop the transfer at the first one.
                    guard received + Int64(piece.count) <= remaining else {
                        throw Self.sizeLie(path: path, size: size, resumeAt: resumeAt, "it kept sending after the file's last byte")
                    }
                    received += Int64(piece.count)
                    self.arrived = resumeAt + UInt64(received)
                    try emit(piece)
                    record.progress(Int64(self.arrived))   // coalesced: a few writes a second
                    if received >= 4 << 20 { TestHooks.crashPoint("download-midway") }
                })
            } catch let e as HTTPError {
                if RetryPolicy.isRetryable(e) { throw RetryableFailure(reason: e.description, retryAfter: nil) }
                throw ServerAPI.networkError(e, api.account.serverURL)
            }
            guard let r = response else { return }
            if resumeAt > 0 && r.status == 200 {
                // The server sent the whole file (it changed, or ignored the range): start over.
                throw BlobStore.DiscardPartial()
            }
            if r.status != 200 && r.status != 206 {
                if RetryPolicy.isRetryable(status: r.status) {
                    throw RetryableFailure(reason: "server answered \(r.status)", retryAfter: RetryPolicy.retryAfter(r))
                }
                if r.status == 404 {
                    throw VaultError(.notFound, "the server no longer has \(path)", hint: "it may have been deleted on another device")
                }
                throw ServerAPI.statusError(r, doing: "download \(path)")
            }
          }
        }
        return blob
    }

    /// Refuses a streamed answer whose headers disagree with the file's recorded `size`: a 200's
    /// `Content-Length` must be the size; a 206's `Content-Range` must be exactly
    /// `bytes resumeAt-(size-1)/size` and its `Content-Length` the rest. Without a
    /// `Content-Length` (chunked) the byte count alone is checked, as the body arrives.
    static func checkAnnouncedSize(_ head: HTTPResponse, path: String, size: UInt64, resumeAt: UInt64) throws {
        if head.status == 206 {
            let raw = head.header("Content-Range")?.trimmingCharacters(in: .whitespaces) ?? ""
            guard resumeAt > 0 && resumeAt < size else {
                throw sizeLie(path: path, size: size, resumeAt: resumeAt, more: false,
                              "it sent a partial answer (Content-Range: \(raw)) that was not asked for")
            }
            let expected = "bytes \(resumeAt)-\(size - 1)/\(size)"
            guard raw != expected else { return try checkLength(head, path: path, size: size, resumeAt: resumeAt) }
            let numbers = raw.dropFirst("bytes ".count).split(whereSeparator: { $0 == "-" || $0 == "/" }).map { UInt64($0) }
            let bigger = raw.hasPrefix("bytes ") && numbers.count == 3 && numbers.allSatisfy { $0 != nil }
                && (numbers[1]! >= size || numbers[2]! > size)
            throw sizeLie(path: path, size: size, resumeAt: resumeAt, more: bigger,
                          raw.isEmpty ? "its partial answer has no Content-Range (expected \(expected))"
                                      : "its Content-Range says \(raw) (expected \(expected))")
        }
        if head.status == 200 { try checkLength(head, path: path, size: size, resumeAt: 0) }
    }

    private static func checkLength(_ head: HTTPResponse, path: String, size: UInt64, resumeAt: UInt64) throws {
        guard let raw = head.header("Content-Length") else { return }
        let remaining = size - resumeAt
        guard let announced = UInt64(raw.trimmingCharacters(in: .whitespaces)) else {
            throw sizeLie(path: path, size: size, resumeAt: resumeAt, more: false, "its Content-Length '\(raw)' is not a number")
        }
        guard announced == remaining else {
            throw sizeLie(path: path, size: size, resumeAt: resumeAt, more: announced > remaining,
                          "its Content-Length announces \(announced) bytes where \(remaining) \(resumeAt > 0 ? "remain after byte \(resumeAt)" : "were expected")")
        }
    }

    /// The error for an answer that does not fit the file's recorded size (`more`: past it).
    static func sizeLie(path: String, size: UInt64, resumeAt: UInt64, more: Bool = true, _ detail: String) -> VaultError {
        let what = more ? "sent more than the file's size" : "sent an answer that does not match the file's size"
        return VaultError(.integrity, "the server \(what) (\(size) bytes) for \(path): \(detail); the download was stopped and nothing of it was kept",
                          hint: "the server, or something between it and this device, is misbehaving; nothing was stored and the file stays not downloaded; try again later, and report it to the server's administrator if it goes on")
    }

    /// The error for a disk that filled up mid-download (the partial is already deleted).
    private func diskFull(_ node: Node, path: String) -> VaultError {
        let needed = BlobStore.sealedSize(plaintextSize: node.size) + BlobStore.freeSpaceReserve
        return VaultError(.noSpace, "the disk became full while downloading \(path) (\(ByteCount.format(arrived)) of \(ByteCount.format(node.size)) had arrived); the partial download was deleted to give the space back",
                          hint: "free some space so that at least \(ByteCount.format(needed)) is free on the disk that holds the vault (`vault evict`, or elsewhere on the disk), then run the command again; nothing in the vault changed and the file is still on the server")
    }

    /// Checks the checksum and publishes the blob as the node's content, or discards it.
    private func publish(_ blob: BlobRecord, node: Node, path: String, record: TransferRecord) throws -> Node {
        guard let expected = node.sha256?.lowercased(), blob.sha256 == expected, blob.size == node.size else {
            vault.blobs.delete(blob.id, area: .cache)
            throw VaultError(.integrity,
                             "the server sent content for \(path) that does not match its checksum (expected SHA-256 \(node.sha256 ?? "unknown"), \(node.size) bytes; got \(blob.sha256), \(blob.size) bytes); it was discarded",
                             hint: "the server or the network corrupted the file; nothing was stored; report it to the server's administrator")
        }
        let published: Node?
        do { published = try vault.publishDownloaded(blob, nodeId: node.id) } catch {
            vault.blobs.delete(blob.id, area: .cache)
            throw error
        }
        record.progress(Int64(blob.size), force: true)
        record.set(.done)
        guard let published else { throw VaultError(.conflict, "\(path) changed while it downloaded", hint: "try again") }
        // New content in the cache: fit the cache to the budget, keeping this file (it is being
        // read or was asked for). The download stands even if that bookkeeping fails.
        if let warning = (try? vault.applyBudget(keeping: [node.id]))?.message { say("warning: " + warning) }
        return published
    }
}
