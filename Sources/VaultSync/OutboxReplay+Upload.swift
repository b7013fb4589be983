import Foundation
import VaultAPI
import VaultCore
import VaultHTTP

/// The `upload` entry end to end (SECURITY.md "End to end", writing content): the staged blob's
/// sealed bytes as they are, a content record, and for a new file its chosen id, name token and
/// node record.
extension OutboxReplay {
    func upload(_ e: OutboxEntry, _ target: OutboxTarget, _ waiting: Waiting) throws -> Outcome {
        // A removed file's uploads were dropped or became `discard_upload` (rule R1–R3).
        guard let node = target.node else { return try complete(e, .nothing, nil) }
        let path = try vault.path(of: node)
        guard let blobId = e.payload.blobId, let sha = e.payload.sha256 else {
            return .failed("the outbox upload entry of \(path) has no content (run `vault doctor`)")
        }
        let fileId = target.remoteId ?? e.payload.remoteId
        var parent: String?
        if fileId == nil {
            guard let p = try vault.remoteFolderId(ofLocal: e.payload.parentId ?? node.parentId) else {
                return .waits("\(path) waits for its folder")
            }
            parent = p
        }
        let job: UploadJob
        do {
            job = try uploadJob(e, node: node, path: path, blobId: blobId, plaintextSHA256: sha, fileId: fileId, parent: parent,
                                baseVersion: fileId == nil ? nil : target.version)
        } catch let err as VaultError where err.kind == .integrity || err.kind == .notFound {
            return .failed("the staged content is unreadable: \(err.message)")
        }
        if let limit = holdLargeFrom, UInt64(max(0, job.size)) >= limit {
            let record = try TransferRecord.upload(in: vault, nodeId: node.id, requestId: e.requestId, blobId: blobId, total: job.size)
            record.set(.waitingForUnmetered, error: nil)
            return .waitingForUnmetered("waiting for an unmetered network: \(path) (\(ByteCount.format(UInt64(job.size))))")
        }
        let uploader = ResumableUpload(api: api, vault: vault, retry: retry, concurrency: concurrency, say: say)
        uploader.onProgress = onProgress
        switch try uploader.run(job) {
        case .uploaded(let file):
            return try complete(e, .uploaded(remoteId: file.id, version: file.version, blobId: blobId),
                                "uploaded \(path) (\(ByteCount.format(UInt64(max(0, job.plaintextSize)))))", seqs: job.seqs)
        case let .conflict(why, nameTaken):
            if nameTaken, let id = job.clientId, let adopted = try adoptUpload(e, job, id: id, path: path) { return adopted }
            if nameTaken && waiting.any {   // D5
                if let t = try vault.uploadTransfer(requestId: e.requestId) {
                    try vault.updateTransfer(t.id, .state(.queued, error: "waits: the name is still taken on the server"))
                }
                return .waits(path)
            }
            return .conflict(why)
        case .failed(let why):
            return .failed(why)
        case .held(let state):
            try Self.settleHolds(vault: vault, api: api)
            return .held(state == .cancelled ? "cancelled the upload of \(path)" : "paused the upload of \(path)")
        }
    }

    /// What an upload entry sends (SECURITY.md "End to end"): the staged blob's sealed bytes as
    /// they are (padded when the policy says so), their size and SHA-256, a content record with
    /// the next content seq; for a new file also the id chosen (stored in the entry first), its
    /// name token under the folder, and its node record.
    private func uploadJob(_ e: OutboxEntry, node: Node, path: String, blobId: String, plaintextSHA256: String, fileId: String?,
                           parent: String?, baseVersion: Int64?) throws -> UploadJob {
        let sealed = try vault.openSealedBytes(blobId)
        if let recorded = try vault.blobRecord(blobId)?.sealedSize, recorded != sealed.size {
            throw VaultError(.integrity, "content blob \(blobId) is \(sealed.size) bytes on disk where \(recorded) were written", hint: "run `vault doctor`")
        }
        let length = policy.padding.uploadLength(sealedSize: sealed.size)
        let known = try vault.remoteSeqs(nodeId: node.id)
        let remoteId = try fileId ?? vault.clientId(for: e)
        let plaintextSize = Int64(e.payload.size ?? node.size)
        var seqs = RemoteSeqs(record: known.record, content: known.content + 1)
        let content = ContentRecord(blob: blobId, device: api.account.deviceId, mime: e.payload.mimeType ?? node.mimeType ?? "application/octet-stream",
                                    mtime: node.modifiedAt, sealedSize: Int64(sealed.size), seq: seqs.content,
                                    sha256: plaintextSHA256.lowercased(), size: plaintextSize)
        var job = UploadJob(nodeId: node.id, path: path, requestId: e.requestId, blobId: blobId, size: Int64(length),
                            sealedSize: Int64(sealed.size), plaintextSize: plaintextSize,
                            sha256: try vault.uploadSHA256(ofBlob: blobId, length: length),
                            name: "", parentRemoteId: parent, fileId: fileId, baseVersion: baseVersion,
                            contentMeta: try codec.sealContent(content, nodeId: remoteId), seqs: seqs)
        if fileId == nil, let parent {
            seqs.record += 1
            let n = try codec.sealNode(nodeId: remoteId, name: e.payload.name ?? node.name, parentId: parent, isFolder: false,
                                       seq: seqs.record, device: api.account.deviceId, mtime: node.modifiedAt)
            job.name = n.name; job.meta = n.meta; job.clientId = remoteId; job.seqs = seqs
        }
        return job
    }

    /// A new file's session refused with `id_taken`: an earlier run made the file and died before
    /// recording it. Adopted when its records open under our key and name this content.
    private func adoptUpload(_ e: OutboxEntry, _ job: UploadJob, id: String, path: String) throws -> Outcome? {
        guard let f = try fetchFile(id) else { return nil }
        guard let node = try? codec.open(f.sealed), !node.isFolder, node.parentId == job.parentRemoteId,
              let content = node.content, content.blob == job.blobId else {
            return .failed("the server holds another node under the id chosen for \(path)")
        }
        return try complete(e, .uploaded(remoteId: f.id, version: f.version, blobId: job.blobId),
                            "uploaded \(path) (\(ByteCount.format(UInt64(max(0, job.plaintextSize)))))",
                            seqs: RemoteSeqs(record: node.record?.seq ?? 0, content: content.seq))
    }
}
