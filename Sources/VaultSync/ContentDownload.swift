import Foundation
import VaultAPI
import VaultCore
import VaultHTTP

/// Downloads a file's head content straight into a new sealed blob in the cache: free space
/// checked first, the whole-file SHA-256 checked last against the node's recorded checksum. A
/// mismatch discards the blob; only verified content is published as LOCAL.
final class ContentDownload {
    let api: ServerAPI
    let vault: Vault
    let retry: RetryPolicy
    let say: (String) -> Void
    var onProgress: ((TransferProgress) -> Void)?

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
            record.observer = { onProgress(TransferProgress(path: path, direction: "download", bytesDone: $0, bytesTotal: total)) }
        }
        var failures = 0
        while true {
            do {
                let blob: BlobRecord
                do {
                    blob = try fetch(remoteId, path: path, version: node.version, record: record)
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
            } catch {
                record.set(.failed, error: (error as? VaultError)?.message ?? "\(error)")
                throw error
            }
        }
    }

    /// Streams the content into a sealed cache blob (not yet recorded anywhere). A partial blob
    /// from an earlier, interrupted run keeps its authenticated segments and the rest is fetched
    /// with `Range` (and `If-Range`: if the file changed on the server, it starts over).
    private func fetch(_ remoteId: String, path: String, version: Int64, record: TransferRecord) throws -> BlobRecord {
        var response: HTTPResponse?
        var received: Int64 = 0
        var offset: UInt64 = 0
        api.http.onProgress = { _, got in record.progress(Int64(offset) + got); return true }
        defer { api.http.onProgress = nil }
        let blob = try vault.blobs.writeResumable(area: .cache, resuming: record.partialBlobId,
                                                  onStart: { if $0 != record.partialBlobId { record.setPartialBlob($0) } }) { resumeAt, emitNow in
          offset = resumeAt
          if resumeAt > 0 { say("\(path): resuming the download at \(ByteCount.format(resumeAt))") }
          try withoutActuallyEscaping(emitNow) { emit in
            do {
                response = try api.send({
                    var req = HTTPRequest(method: .get, url: api.url("/v1/files/\(remoteId)/content"))
                    if resumeAt > 0 { req.headers += [("Range", "bytes=\(resumeAt)-"), ("If-Range", "\"\(version)\"")] }
                    return req
                }, stream: { piece in
                    received += Int64(piece.count)
                    try emit(piece)
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

    /// Checks the checksum and publishes the blob as the node's content, or discards it.
    private func publish(_ blob: BlobRecord, node: Node, path: String, record: TransferRecord) throws -> Node {
        guard let expected = node.sha256?.lowercased(), blob.sha256 == expected, blob.size == node.size else {
            vault.blobs.delete(blob.id, area: .cache)
            throw VaultError(.integrity,
                             "the server sent content for \(path) that does not match its checksum (expected SHA-256 \(node.sha256 ?? "unknown"), \(node.size) bytes; got \(blob.sha256), \(blob.size) bytes); it was discarded",
                             hint: "the server or the network corrupted the file; nothing was stored; report it to the server's administrator")
        }
        do {
            try vault.db.transaction {
                try vault.db.run("""
                    INSERT INTO blobs(id, node_id, area, size, sealed_size, sha256, key_epoch, created_at)
                    VALUES (?, ?, 'cache', ?, ?, ?, ?, ?)
                    """, [blob.id, node.id, Int64(blob.size), Int64(blob.sealedSize), blob.sha256, Int64(blob.keyEpoch),
                          Int64(Date().timeIntervalSince1970)])
                try vault.db.run("UPDATE nodes SET content_state = 'LOCAL', local_path = ? WHERE id = ? AND content_state = 'NOT_DOWNLOADED'",
                                 [blob.id, node.id])
            }
        } catch {
            vault.blobs.delete(blob.id, area: .cache)
            throw error
        }
        record.progress(Int64(blob.size), force: true)
        record.set(.done)
        guard let updated = try vault.node(id: node.id), updated.localPath == blob.id else {
            vault.blobs.delete(blob.id, area: .cache)
            _ = try? vault.db.run("DELETE FROM blobs WHERE id = ?", [blob.id])
            throw VaultError(.conflict, "\(path) changed while it downloaded", hint: "try again")
        }
        return updated
    }
}
