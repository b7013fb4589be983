import Foundation
import VaultAPI
import VaultCore
import VaultHTTP

/// The `upload` entry end to end (SECURITY.md "End to end", writing content): the staged blob's
/// sealed bytes as they are, a content record, and for a new file its chosen id, name token and
/// node record.
extension OutboxReplay {
    /// Sends an upload request (`createFile` or `newRevision`, as `PushRules` decided) through the
    /// resumable upload protocol. A large upload on a metered network, unreadable staged content,
    /// or a hold from `vault transfers` ends it here; every answer of the server goes to the rules.
    func upload(_ request: PushRequest, _ e: OutboxEntry, _ target: OutboxTarget?, _ path: String, seqs: RemoteSeqs) throws -> PushSent {
        let place: (fileId: String?, parent: String?, name: String, baseVersion: Int64?, clientId: String?, blobId: String)
        switch request {
        case let .createFile(id, parent, name, blob): place = (nil, parent, name, nil, id, blob)
        case let .newRevision(file, base, blob): place = (file, nil, "", base, nil, blob)
        default: throw VaultError(.internalError, "not an upload: \(request)")
        }
        // A removed file's uploads were dropped or became `discard_upload` (rules R1–R3; PushRules
        // completes them without a request).
        guard let node = target?.node, let sha = e.payload.sha256 else {
            return .ended(.failed("the outbox upload entry of \(path) has no content (run `vault doctor`)"))
        }
        let job: UploadJob
        do {
            job = try uploadJob(e, node: node, path: path, blobId: place.blobId, plaintextSHA256: sha, fileId: place.fileId,
                                parent: place.parent, name: place.name, clientId: place.clientId, baseVersion: place.baseVersion, seqs: seqs)
        } catch let err as VaultError where err.kind == .integrity || err.kind == .notFound {
            return .ended(.failed("the staged content is unreadable: \(err.message)"))
        }
        if let limit = holdLargeFrom, UInt64(max(0, job.size)) >= limit {
            let record = try TransferRecord.upload(in: vault, nodeId: node.id, requestId: e.requestId, blobId: place.blobId, total: job.size)
            record.set(.waitingForUnmetered, error: nil)
            return .ended(.waitingForUnmetered("waiting for an unmetered network: \(path) (\(ByteCount.format(UInt64(job.size))))"))
        }
        let uploader = ResumableUpload(api: api, vault: vault, retry: retry, concurrency: concurrency, say: say)
        uploader.onProgress = onProgress
        switch try uploader.run(job) {
        case .uploaded(let file):
            return .answer(.ok(try codec.open(file.sealed)))
        case .refused(let r):
            return .answer(try answer(r, doing: "upload \(path)", chosenId: place.clientId))
        case .failed(let why):
            return .ended(.failed(why))
        case .held(let state):
            try Self.settleHolds(vault: vault, api: api)
            return .ended(.held(state == .cancelled ? "cancelled the upload of \(path)" : "paused the upload of \(path)"))
        }
    }

    /// What an upload entry sends (SECURITY.md "End to end"): the staged blob's sealed bytes as
    /// they are (padded when the policy says so), their size and SHA-256, a content record with
    /// the next content seq; for a new file also the id chosen (stored in the entry first), its
    /// name token under the folder, and its node record.
    private func uploadJob(_ e: OutboxEntry, node: Node, path: String, blobId: String, plaintextSHA256: String, fileId: String?,
                           parent: String?, name: String, clientId: String?, baseVersion: Int64?, seqs next: RemoteSeqs) throws -> UploadJob {
        let sealed = try vault.openSealedBytes(blobId)
        if let recorded = try vault.blobRecord(blobId)?.sealedSize, recorded != sealed.size {
            throw VaultError(.integrity, "content blob \(blobId) is \(sealed.size) bytes on disk where \(recorded) were written", hint: "run `vault doctor`")
        }
        let length = policy.padding.uploadLength(sealedSize: sealed.size)
        guard let remoteId = fileId ?? clientId else { throw VaultError(.internalError, "an upload of \(path) with no server id") }
        let plaintextSize = Int64(e.payload.size ?? node.size)
        let content = ContentRecord(blob: blobId, device: api.account.deviceId, deviceName: deviceName, mime: e.payload.mimeType ?? node.mimeType ?? "application/octet-stream",
                                    mtime: node.modifiedAt, sealedSize: Int64(sealed.size), seq: next.content,
                                    sha256: plaintextSHA256.lowercased(), size: plaintextSize)
        var job = UploadJob(nodeId: node.id, path: path, requestId: e.requestId, blobId: blobId, size: Int64(length),
                            sealedSize: Int64(sealed.size), plaintextSize: plaintextSize,
                            sha256: try vault.uploadSHA256(ofBlob: blobId, length: length),
                            name: "", parentRemoteId: parent, fileId: fileId, baseVersion: baseVersion,
                            contentMeta: try codec.sealContent(content, nodeId: remoteId))
        if fileId == nil, let parent {
            let n = try codec.sealNode(nodeId: remoteId, name: name, parentId: parent, isFolder: false,
                                       seq: next.record, device: api.account.deviceId, deviceName: deviceName, mtime: node.modifiedAt)
            job.name = n.name; job.meta = n.meta; job.clientId = remoteId
        }
        return job
    }
}
