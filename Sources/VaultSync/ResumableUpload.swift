import Foundation
import VaultAPI
import VaultCore
import VaultHTTP
import VaultPrimitives

/// What one upload needs: the staged blob, what is sent of it and its checksum, and where it
/// goes on the server, sealed (SECURITY.md "End to end").
struct UploadJob {
    var nodeId: String
    var path: String
    /// The outbox entry's request id: the session's idempotency key.
    var requestId: String
    var blobId: String
    /// Bytes sent: the sealed blob, then zero padding up to this length.
    var size: Int64
    /// Bytes of the sealed blob.
    var sealedSize: Int64
    /// Bytes of the plaintext (for people).
    var plaintextSize: Int64
    /// SHA-256 (hex) of the bytes sent.
    var sha256: String
    /// The name token (new files only).
    var name: String
    var parentRemoteId: String?
    /// Set for a new version of a file the server already has.
    var fileId: String?
    var baseVersion: Int64?
    /// The sealed content record of this revision.
    var contentMeta: String
    /// New files: the id this device chose and the node record.
    var clientId: String?
    var meta: String?
}

/// How an upload ended (errors that stop it are thrown as `VaultError`).
enum UploadOutcome {
    case uploaded(FileResource)
    /// The server refused the change (412: it holds a newer version; 409: the id or the name is
    /// taken, or the folder is trashed): nothing was overwritten. Its answer, for the push rules
    /// to judge (`OutboxReplay.answer`).
    case refused(HTTPResponse)
    /// The user paused or cancelled it meanwhile (`paused` / `cancelled`); nothing more was sent.
    /// The caller settles it (`OutboxReplay.settleHolds`): its transfer row and the server session.
    case held(OutboxState)
    /// Failed for a reason of this upload alone (unreadable staged content, a checksum the server
    /// computed differently, a request the server refuses such as a full quota): recorded on the
    /// transfer; the other entries go on.
    case failed(String)
}

/// A failure of one upload that the others do not share (see `UploadOutcome.failed`).
struct EntryFailure: Error {
    var reason: String
}

/// A failure worth another try after a backoff.
struct RetryableFailure: Error {
    var reason: String
    var retryAfter: TimeInterval?
}

/// The resumable upload protocol for one staged blob: open (or reopen) a session with the
/// outbox request id, ask the server which ranges it holds, send exactly the missing chunks
/// (the sealed bytes as they are on disk, `SealedRangeReader`), and retry with backoff. State lives in the
/// `transfers` row, so a killed process resumes where the server says it stopped.
final class ResumableUpload {
    let api: ServerAPI
    let vault: Vault
    let retry: RetryPolicy
    /// Chunks in flight at once (1: one connection, chunk after chunk).
    let concurrency: Int
    let say: (String) -> Void
    var onProgress: ((TransferProgress) -> Void)?
    /// Bytes the server said it held at the previous status read of the current job (-1: none yet).
    private var heldBefore: Int64 = -1

    init(api: ServerAPI, vault: Vault, retry: RetryPolicy, concurrency: Int = 1, say: @escaping (String) -> Void) {
        self.api = api; self.vault = vault; self.retry = retry; self.concurrency = max(1, concurrency); self.say = say
    }

    private enum Step {
        case done(FileResource)
        case refused(HTTPResponse)
        /// Try again at once (a fresh session, or re-read the status); not a failure.
        case again
        /// The user asked to stop (see `TransferRecord.holdRequested`).
        case held
    }

    func run(_ job: UploadJob) throws -> UploadOutcome {
        let record = try TransferRecord.upload(in: vault, nodeId: job.nodeId, requestId: job.requestId,
                                               blobId: job.blobId, total: job.size)
        if let onProgress {
            record.observer = { onProgress(TransferProgress(path: job.path, direction: .upload, bytesDone: $0, bytesTotal: job.size)) }
        }
        let handle: SealedBytes
        do { handle = try vault.openSealedBytes(job.blobId) } catch {
            let why = "the staged content is unreadable: \((error as? VaultError)?.message ?? "\(error)")"
            record.set(.failed, error: why)
            return .failed(why)
        }
        record.set(.running)
        heldBefore = -1
        var failures = 0, quickRepeats = 0
        while true {
            var sent = false
            if let h = record.checkHold() { return .held(h) }
            do {
                switch try attempt(job, record, handle, sent: &sent) {
                case .done(let file):
                    record.end(.done, bytes: job.size)
                    return .uploaded(file)
                case .refused(let r):
                    record.set(.conflict, error: Self.refusalReason(r, job))
                    return .refused(r)
                case .again:
                    quickRepeats += 1
                    if quickRepeats > 5 { throw RetryableFailure(reason: "the server keeps losing the upload session", retryAfter: nil) }
                case .held:
                    return .held(record.holdRequested ?? .paused)
                }
            } catch let f as RetryableFailure {
                if let h = record.holdRequested { return .held(h) }
                if sent { failures = 0; quickRepeats = 0 }
                failures += 1
                let (giveUp, wait) = retry.pause(after: f, failures: failures, record: record, path: job.path, say: say)
                if giveUp {
                    record.set(.waitingToRetry, error: f.reason, retryAt: Date().addingTimeInterval(wait))
                    throw VaultError(.io, "the upload of \(job.path) stopped after \(failures) failed attempts: \(f.reason)",
                                     hint: "run `vault sync` (or `vault transfers resume`) later; it continues where the server stopped")
                }
            } catch let f as EntryFailure {
                if let h = record.holdRequested { return .held(h) }
                record.set(.failed, error: f.reason)
                return .failed(f.reason)
            } catch {
                if let h = record.holdRequested { return .held(h) }
                record.set(.failed, error: (error as? VaultError)?.message ?? "\(error)")
                throw error
            }
        }
    }

    /// One pass: learn what the server holds (or open a session), then send the missing chunks.
    /// `sent` becomes true once a chunk was accepted (progress resets the failure count).
    private func attempt(_ job: UploadJob, _ record: TransferRecord, _ handle: SealedBytes,
                         sent: inout Bool) throws -> Step {
        var status: UploadStatus?
        if let id = record.uploadId {
            let r = try transport { try api.json(.get, "/v1/upload/\(id)") }
            switch r.status {
            case 200: status = try ServerAPI.decode(UploadStatus.self, r)
            case 404, 410:
                say("\(job.path): the server no longer has the upload session; starting a new one")
                record.setSession(uploadId: nil, url: nil)
                return .again
            default: try failure(r, doing: "ask for the upload status of \(job.path)")
            }
        }
        let uploadURL: String
        if let s = status {
            uploadURL = "/v1/upload/\(s.uploadId)/chunk"
        } else {
            let (session, fresh, step) = try openSession(job)
            if let step { return step }
            guard let session else { return .again }
            record.setSession(uploadId: session.uploadId, url: session.uploadUrl)
            uploadURL = session.uploadUrl
            if !fresh { return .again }   // an existing session: read its ranges first
            status = UploadStatus(uploadId: session.uploadId, state: .active, size: job.size, chunkSize: session.chunkSize,
                                  totalChunks: session.totalChunks, chunksProcessed: 0, receivedRanges: [],
                                  bytesReceivedTotal: 0, uploadExpiresAt: session.uploadExpiresAt, file: nil)
        }
        guard let status else { return .again }
        if status.state == .complete, let file = status.file { return .done(file) }
        var confirmed = Self.received(status.receivedRanges)
        if heldBefore >= 0 && confirmed > heldBefore { sent = true }   // a cut-off chunk's kept prefix is progress too
        heldBefore = confirmed
        record.progress(confirmed, force: true)
        let missing = Self.missingChunks(size: job.size, chunkSize: status.chunkSize, received: status.receivedRanges)
        if missing.isEmpty {
            // Every byte acknowledged, yet no file: the server's answer cannot be true. Never take
            // it as done; retry (it may be finishing), then stop with a clear error.
            throw RetryableFailure(reason: "the server claims to hold all \(job.size) bytes of \(job.path) but has not published the file (its upload status is not consistent)",
                                   retryAfter: nil)
        }
        if concurrency > 1 && missing.count > 1 {
            return try sendParallel(job, url: uploadURL, chunks: missing, record: record,
                                    confirmed: confirmed, sent: &sent)
        }
        for (start, length) in missing {
            let r = try sendChunk(job, url: uploadURL, start: start, length: length, handle: handle, record: record, confirmed: confirmed)
            switch r.status {
            case 201:
                return .done(try ServerAPI.decode(FileResource.self, r))
            case 308:
                sent = true
                confirmed = (try? ServerAPI.decode(UploadStatus.self, r)).map { Self.received($0.receivedRanges) } ?? confirmed + length
                record.progress(confirmed)
            default:
                return try judge(r, job, record)
            }
        }
        return .again   // everything sent without a 201: re-read the status
    }

    /// What a chunk answer other than 201 or 308 means.
    private func judge(_ r: HTTPResponse, _ job: UploadJob, _ record: TransferRecord) throws -> Step {
        switch r.status {
        case 401:
            try api.refreshToken()
            return .again
        case 404, 410:
            say("\(job.path): the upload session expired; starting a new one")
            record.setSession(uploadId: nil, url: nil)
            return .again
        case 412:
            return .refused(r)
        case 422:
            throw EntryFailure(reason: "the server computed a different SHA-256 for \(job.path) than the staged content's; nothing was published (run `vault doctor --verify`)")
        default:
            try failure(r, doing: "upload a chunk of \(job.path)")
        }
    }

    /// Sends `chunks` over `concurrency` connections at once, each with its own client and
    /// file handle; the first non-308 answer is judged as for one chunk.
    private func sendParallel(_ job: UploadJob, url: String, chunks: [(Int64, Int64)],
                              record: TransferRecord, confirmed: Int64, sent: inout Bool) throws -> Step {
        var workers: [(HTTPClient, SealedBytes)] = []
        for _ in 0..<min(concurrency, chunks.count) {
            workers.append((try HTTPClient(configuration: api.http.configuration), try vault.openSealedBytes(job.blobId)))
        }
        let auth = "Bearer " + (api.account.token ?? ""), device = api.account.deviceId
        let fullURL = url.hasPrefix("http") ? url : api.url(url), size = job.size
        let pipeline = ParallelChunks(chunks: chunks, confirmed: confirmed)
        let end = pipeline.run(workers: workers, send: { client, handle, start, length in
            let reader = SealedRangeReader(file: handle, offset: UInt64(start), length: UInt64(length))
            let req = HTTPRequest(method: .put, url: fullURL,
                                  headers: [("Content-Range", "bytes \(start)-\(start + length - 1)/\(size)"),
                                            ("Content-Type", "application/octet-stream"), ("Accept", "application/json"),
                                            ("Expect", ""), ("Authorization", auth), ("X-Device-Id", device)],
                                  body: .stream(length: length, read: reader.read))
            return try client.send(req, collectUpTo: 1 << 20)
        }, tick: {
            record.progress(pipeline.progress)
            if record.holdRequested != nil { pipeline.stop() }   // paused or cancelled from another command
        })
        if pipeline.anyAccepted { sent = true }
        switch end {
        case .allAccepted: return .again
        case .completed(let r): return .done(try ServerAPI.decode(FileResource.self, r))
        case .answered(let r): return try judge(r, job, record)
        case .transport(let e):
            if RetryPolicy.isRetryable(e) { throw RetryableFailure(reason: e.description, retryAfter: nil) }
            throw ServerAPI.networkError(e, api.account.serverURL)
        case .failed(let e): throw e
        case .stopped: return .held
        }
    }

    /// Opens a session (or gets the existing one for this request id). Returns the session and
    /// whether it is new, or a step when the server refused with a conflict.
    private func openSession(_ job: UploadJob) throws -> (UploadSessionResponse?, Bool, Step?) {
        let body = UploadSessionRequest(name: job.fileId == nil ? job.name : nil,
                                        parentId: job.fileId == nil ? job.parentRemoteId : nil,
                                        size: job.size, mimeType: "application/octet-stream", sha256: job.sha256,
                                        requestId: job.requestId, fileId: job.fileId, baseVersion: job.baseVersion,
                                        id: job.fileId == nil ? job.clientId : nil, meta: job.fileId == nil ? job.meta : nil,
                                        contentMeta: job.contentMeta)
        let r = try transport { try api.json(.post, "/v1/upload?uploadType=resumable", body: body) }
        switch r.status {
        case 200, 201: return (try ServerAPI.decode(UploadSessionResponse.self, r), r.status == 201, nil)
        case 412: return (nil, false, .refused(r))
        case 409 where ServerAPI.apiError(r)?.code != .chunkInProgress:
            return (nil, false, .refused(r))
        default:
            try failure(r, doing: "start the upload of \(job.path)")
            return (nil, false, nil)
        }
    }

    private func sendChunk(_ job: UploadJob, url: String, start: Int64, length: Int64, handle: SealedBytes,
                           record: TransferRecord, confirmed: Int64) throws -> HTTPResponse {
        let range = job.size == 0 ? "bytes */0" : "bytes \(start)-\(start + length - 1)/\(job.size)"
        api.http.onProgress = { sentBytes, _ in
            record.progress(confirmed + min(sentBytes, length))
            return record.holdRequested == nil   // a pause or cancel from another command stops the chunk now
        }
        defer { api.http.onProgress = nil }
        return try transport {
            try api.send {
                let reader = SealedRangeReader(file: handle, offset: UInt64(start), length: UInt64(length))
                return HTTPRequest(method: .put, url: url.hasPrefix("http") ? url : api.url(url),
                                   headers: [("Content-Range", range), ("Content-Type", "application/octet-stream"),
                                             ("Accept", "application/json"), ("Expect", "")],
                                   body: length == 0 ? .none : .stream(length: length, read: reader.read))
            }
        }
    }

    /// Runs a request; a retryable transport failure becomes `RetryableFailure`.
    private func transport(_ body: () throws -> HTTPResponse) throws -> HTTPResponse { try api.retryableTransport(body) }

    /// Throws `RetryableFailure` for a retryable status, `EntryFailure` for a refusal of this
    /// upload (a 4xx other than 401), else a final `VaultError`.
    private func failure(_ r: HTTPResponse, doing what: String) throws -> Never {
        if RetryPolicy.isRetryable(status: r.status) {
            let detail = ServerAPI.apiError(r)?.message ?? "HTTP \(r.status)"
            throw RetryableFailure(reason: "server answered \(r.status): \(detail)", retryAfter: RetryPolicy.retryAfter(r))
        }
        if (400..<500).contains(r.status) && r.status != 401 { throw EntryFailure(reason: ServerAPI.statusError(r, doing: what).message) }
        throw ServerAPI.statusError(r, doing: what)
    }

    /// Why the server refused the upload, for `vault transfers`.
    static func refusalReason(_ r: HTTPResponse, _ job: UploadJob) -> String {
        guard r.status == 412 else { return "the server refused: \(ServerAPI.apiError(r)?.message ?? "HTTP \(r.status)")" }
        let current = (try? APIJSON.decoder().decode(FileResource.self, from: Data(r.body)))?.version
        return "the server has a newer version\(current.map { " (\($0))" } ?? "") of \(job.path) than this change was based on\(job.baseVersion.map { " (\($0))" } ?? "")"
    }

    static func received(_ ranges: [ByteRange]) -> Int64 {
        ranges.reduce(0) { $0 + max(0, $1.end - $1.start + 1) }
    }

    /// The (start, length) still to send of every chunk no received range fully covers, in
    /// order. A chunk whose body was cut off continues after the prefix the server kept.
    static func missingChunks(size: Int64, chunkSize: Int64, received: [ByteRange]) -> [(Int64, Int64)] {
        guard size > 0 else { return [(0, 0)] }
        let step = max(chunkSize, 1)
        var out: [(Int64, Int64)] = []
        var chunkStart: Int64 = 0
        while chunkStart < size {
            let end = min(chunkStart + step, size) - 1
            var start = chunkStart
            if let kept = received.first(where: { $0.start <= chunkStart && $0.end >= chunkStart }) {
                start = kept.end + 1
            }
            if start <= end { out.append((start, end - start + 1)) }
            chunkStart += step
        }
        return out
    }
}
