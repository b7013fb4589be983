import Foundation
import VaultAPI
import VaultSQL
import VaultPrimitives
import VaultDigest
#if canImport(Glibc)
import Glibc
#endif

/// Resumable uploads: a session per file, fixed-size chunks (any order, in parallel) written in
/// place into one part file, or each uploaded as a part of the session's S3 multipart upload;
/// each is durable before it counts; the whole-file SHA-256 is checked before the file is
/// published.
extension VaultService {
    func createUploadSession(_ ctx: RequestContext) throws -> RequestPlan {
        .buffer(limit: Self.jsonLimit) { [self] body in
            let req = try decode(UploadSessionRequest.self, body)
            guard (0...Self.maxSize).contains(req.size) else {
                throw APIError.badRequest("size must be 0…\(Self.maxSize)", code: .invalidSize)
            }
            if let m = req.mimeType { try Self.validateMediaType(m) }
            try Self.validateBaseVersion(req.baseVersion)
            try Self.validateIds(req.parentId, req.fileId)
            if let name = req.name { try Self.validateName(name) }   // checked even when fileId makes it unused
            let sha = try Self.sha256Hex(req.sha256)
            guard (1...200).contains(req.requestId.unicodeScalars.count) else {
                throw APIError.badRequest("requestId must be 1–200 characters")
            }
            try Self.validateRecord(req.contentMeta, "contentMeta")
            try Self.validateRecord(req.meta, "meta")
            if let id = req.id { try Self.validateClientId(id) }
            let target: UploadTarget = req.fileId.map { .existing(fileId: $0, baseVersion: req.baseVersion) }
                ?? .new(name: req.name ?? "", parentId: req.parentId ?? "root", id: req.id, meta: req.meta)
            let (session, isNew) = try store.write(.owner(ctx.userId)) { db -> (UploadSession, Bool) in
                if let existing = try db.uploadSession(owner: ctx.userId, requestId: req.requestId) {
                    guard existing.isExpired else { return (existing, false) }
                    // An expired session is gone for good: the same requestId starts afresh.
                    try db.deleteUploadSession(existing.id)
                    content.removeUpload(id: existing.id, session: existing)
                }
                try validate(db, owner: ctx.userId, target: target)
                let open = try db.activeUploadCount(owner: ctx.userId)
                guard open < config.maxSessions else {
                    throw APIError.tooMany("too many open upload sessions (\(config.maxSessions)); finish or abort some",
                                           retryAfter: 30)
                }
                try requireQuota(db, owner: ctx.userId, adding: req.size)
                let id = Sodium.randomID()
                let now = Date()
                try db.insertUploadSession(
                    id: id, owner: ctx.userId, requestId: req.requestId, name: req.name,
                    parentId: req.parentId ?? (req.fileId == nil ? "root" : nil), size: req.size,
                    mimeType: req.mimeType ?? "application/octet-stream", sha256: sha, fileId: req.fileId,
                    baseVersion: req.baseVersion, chunkSize: content.sessionChunkSize(size: req.size, base: config.chunkSize),
                    revisionId: Sodium.randomID(),
                    createdAt: now, expiresAt: now.addingTimeInterval(Double(config.uploadTTL)), deviceId: ctx.deviceId,
                    clientId: req.fileId == nil ? req.id : nil, meta: req.fileId == nil ? req.meta : nil,
                    contentMeta: req.contentMeta)
                return (try db.uploadSession(owner: ctx.userId, id: id)!, true)
            }
            // An object store's upload starts with the first chunk (`withStoreUpload`).
            if isNew && !content.needsStoreUpload { _ = try content.beginUpload(session) }
            let chunks = try store.withDB { db in try db.uploadChunks(session.id) }
            let response = UploadSessionResponse(
                uploadId: session.id, totalChunks: session.totalChunks, chunksProcessed: chunks.count,
                chunkSize: session.chunkSize, uploadUrl: "/v1/upload/\(session.id)/chunk",
                uploadExpiresAt: session.expiresAt)
            return .json(response, status: isNew ? 201 : 200, headers: [("Location", response.uploadUrl)])
        }
    }

    /// The session of `id` for this user, 404 when absent or expired.
    func liveSession(_ db: any SQLConnection, owner: String, id: String) throws -> UploadSession {
        guard let s = try db.uploadSession(owner: owner, id: id) else { throw APIError.notFound("no such upload session") }
        if s.isExpired {
            throw APIError(status: 404, code: .uploadExpired, message: "the upload session expired; start a new one")
        }
        return s
    }

    func uploadStatus(_ ctx: RequestContext) throws -> RequestPlan {
        let status = try store.withDB { db in try statusValue(db, try liveSession(db, owner: ctx.userId, id: ctx.request.param("id"))) }
        return Self.respond(status)
    }

    func statusValue(_ db: any SQLConnection, _ s: UploadSession) throws -> UploadStatus {
        // Every byte (a complete session, or the test-only lie): one range, never a list of
        // every chunk index (a session may declare 10^15 chunks).
        let all = s.state == .complete || faults.current.lieReceivedRanges == true
        let chunks = all ? [] : try db.uploadChunks(s.id)
        let ranges = all ? (s.size > 0 ? [ByteRange(start: 0, end: s.size - 1)] : [])
                         : s.ranges(chunks: chunks, partials: try db.uploadPartials(s.id))
        let file = try s.resultFileId.flatMap { try db.file(owner: s.owner, id: $0) }
        return UploadStatus(uploadId: s.id, state: s.state, size: s.size, chunkSize: s.chunkSize,
                            totalChunks: s.totalChunks, chunksProcessed: all ? s.totalChunks : chunks.count,
                            receivedRanges: ranges, bytesReceivedTotal: s.bytesReceived,
                            uploadExpiresAt: s.expiresAt, file: file)
    }

    func abortUpload(_ ctx: RequestContext) throws -> RequestPlan {
        let id = ctx.request.param("id")
        let session = try store.write(.owner(ctx.userId)) { db in
            let s = try liveSession(db, owner: ctx.userId, id: id)
            try db.deleteUploadSession(id)
            return s
        }
        content.removeUpload(id: id, session: session)
        uploadLocks.withLock { _ = $0.removeValue(forKey: id) }
        return .respond(HTTPResponse(status: 204))
    }

    func putChunk(_ ctx: RequestContext) throws -> RequestPlan {
        let id = ctx.request.param("id")
        var session = try store.withDB { db in try liveSession(db, owner: ctx.userId, id: id) }
        guard let raw = ctx.request.header("content-range"), let cr = ByteRanges.parseContentRange(raw) else {
            throw APIError.badRequest("a chunk needs Content-Range: bytes START-END/TOTAL", code: .invalidContentRange)
        }
        if let total = cr.total, total != session.size {
            throw APIError.badRequest("Content-Range total \(total) differs from the session size \(session.size)",
                                      code: .invalidContentRange)
        }
        let index: Int
        var skip: Int64 = 0   // bytes of the chunk this request does not resend (a kept prefix)
        if cr.start < 0 {
            guard session.size == 0 else {
                throw APIError.badRequest("bytes */TOTAL is only for an empty file", code: .invalidContentRange)
            }
            index = 0
        } else {
            guard cr.end < session.size else {
                throw APIError(status: 416, code: .rangeNotSatisfiable,
                               message: "bytes \(cr.start)-\(cr.end) reach past the end of a \(session.size)-byte file",
                               headers: [("Content-Range", "bytes */\(session.size)")])
            }
            index = Int(cr.start / session.chunkSize)
            let chunkStart = Int64(index) * session.chunkSize
            skip = cr.start - chunkStart
            if skip > 0 {
                // Continuing a chunk whose body was cut off: only from within the prefix the server kept.
                let kept = try store.withDB { db in try db.uploadPartial(id, index: index) }
                guard skip <= kept else {
                    throw APIError.badRequest("a chunk must start at a multiple of the chunk size \(session.chunkSize), or continue a cut-off chunk from at most byte \(chunkStart + kept) (what the server holds of it)",
                                              code: .misalignedChunk)
                }
            }
            let expected = session.chunkLength(index)
            guard cr.end - chunkStart + 1 == expected else {
                throw APIError.badRequest("chunk \(index) must end at byte \(chunkStart + expected - 1) (bytes \(chunkStart)-\(chunkStart + expected - 1))",
                                          code: .wrongChunkSize)
            }
        }
        let length = session.size == 0 ? 0 : session.chunkLength(index) - skip
        if let declared = ctx.request.contentLength, declared != length {
            throw APIError.badRequest("Content-Length \(declared) differs from the Content-Range length \(length)",
                                      code: .wrongChunkSize)
        }
        let recorded = { [self] in
            try store.withDB { db in
                try liveSession(db, owner: ctx.userId, id: id).state == .complete || db.uploadChunks(id).contains(index)
            }
        }
        var writer: (ChunkClaims.Ticket, ChunkStaging)?
        if try !recorded() {
            let ticket: ChunkClaims.Ticket
            switch chunkClaims.acquire("\(id)#\(index)") {
            case .busy(let retryAfter):
                var e = APIError.conflict("chunk \(index) is being received by another request", code: .chunkInProgress)
                e.headers = [("Retry-After", String(retryAfter))]
                throw e
            case .claimed(let t, _): ticket = t
            }
            do {
                // Again, now that the chunk is ours: it may have been recorded (and hashed) while
                // we waited; writing it once more would change bytes already hashed.
                if try !recorded() {
                    session = try withStoreUpload(session)
                    writer = (ticket, try content.openChunk(session, index: index, kept: skip))
                } else {
                    chunkClaims.release(ticket)
                }
            } catch {
                chunkClaims.release(ticket)
                throw error
            }
        }
        return .stream(ChunkSink(service: self, owner: ctx.userId, uploadId: id, index: index, offset: max(cr.start, 0),
                                 skip: skip, length: length, writer: writer))
    }

    /// Keeps the fsynced prefix of a chunk whose body was cut off after `upTo` of its bytes, so
    /// the client resends only the rest (the kept length never shrinks).
    func keepPartial(owner: String, uploadId: String, index: Int, upTo: Int64) {
        _ = try? store.write(.owner(owner)) { db in
            guard try !db.uploadChunkRecorded(uploadId, index: index), try db.uploadIsActive(uploadId) else { return }
            guard upTo > (try db.uploadPartial(uploadId, index: index)) else { return }
            try db.setUploadPartial(uploadId, index: index, bytes: upTo)
        }
    }

    /// `s` with its object store upload, started (and recorded) now if it has none yet. When two
    /// servers start one at once, the first recorded wins; the sweep aborts the other.
    func withStoreUpload(_ s: UploadSession) throws -> UploadSession {
        guard content.needsStoreUpload, s.storeUploadId == nil, let started = try content.beginUpload(s) else { return s }
        let recorded = try store.write(.owner(s.owner)) { db in try db.setUploadStoreId(s.id, started) }
        guard let recorded else { throw APIError.notFound("the upload session was aborted or expired") }
        var out = s
        out.storeUploadId = recorded
        return out
    }

    /// Records a fully written chunk (with its store `tag`), or just the bytes of a repeated one,
    /// and answers 308, or finalises the upload when it was the last one.
    func chunkDone(owner: String, uploadId: String, index: Int, written: Int64, record: Bool, tag: String? = nil) -> HTTPResponse {
        Self.answer {
            let progress = uploadProgress(uploadId)
            progress.lock.lock(); defer { progress.lock.unlock() }
            let (session, chunks) = try store.write(.owner(owner)) { db -> (UploadSession, [Int]) in
                guard let s = try db.uploadSession(owner: owner, id: uploadId) else {
                    throw APIError.notFound("the upload session was aborted or expired")
                }
                try db.addUploadBytesReceived(uploadId, written)
                if record && s.state == .active { try db.recordUploadChunk(uploadId, index: index, tag: tag) }
                return (s, try db.uploadChunks(uploadId))
            }
            if session.state == .complete {
                let status = try store.withDB { db in try statusValue(db, session) }
                return .json(status.file, status: 201)
            }
            if session.state == .active { try advanceHash(progress, session, chunks: chunks) }
            if chunks.count < session.totalChunks {
                let status = try store.withDB { db in try statusValue(db, session) }
                let ranges = status.receivedRanges.map { "\($0.start)-\($0.end)" }.joined(separator: ",")
                return .json(status, status: 308, headers: ranges.isEmpty ? [] : [("Range", "bytes=" + ranges)])
            }
            let file = try finalizeUpload(session, progress: progress)
            return .json(file, status: 201, headers: [Self.etag(file)])
        }
    }

    /// Hashes the received prefix of the upload as it grows, chunk by chunk, so completing a
    /// large upload only hashes what is left (an S3 part only while its request runs: a chunk
    /// that arrives ahead of the prefix is hashed after completion). Call with the session lock held.
    func advanceHash(_ progress: UploadProgress, _ s: UploadSession, chunks: [Int]) throws {
        let have = Set(chunks)
        while progress.hashedUpTo < s.size, progress.hashedUpTo % s.chunkSize == 0 {
            let index = Int(progress.hashedUpTo / s.chunkSize)
            guard have.contains(index), try content.hashChunk(s, index: index, into: &progress.hasher) else { return }
            progress.hashedUpTo += s.chunkLength(index)
        }
    }

    /// Verifies the whole file and publishes it; a mismatch or a target that moved on discards
    /// the session (422 / 412 / 409) and publishes nothing. When every byte was hashed as it
    /// arrived, the check comes before the store completes the upload; otherwise the completed,
    /// still unreferenced content is hashed from where the running hash stopped. Call with the
    /// session lock held.
    func finalizeUpload(_ s: UploadSession, progress: UploadProgress) throws -> FileResource {
        let discard = { [self] in
            try? store.write(.owner(s.owner)) { db in try db.deleteUploadSession(s.id) }
            content.removeUpload(id: s.id, session: s)
        }
        // The running hash is used up here: a retry starts from a fresh one.
        uploadLocks.withLock { _ = $0.removeValue(forKey: s.id) }
        let mismatch = { (sha: String) in
            APIError(status: 422, code: .checksumMismatch,
                     message: "the uploaded bytes hash to \(sha), not \(s.sha256); the session was discarded and nothing was published")
        }
        let hashedFirst = progress.hashedUpTo == s.size
        if hashedFirst {
            let sha = Hex.encode(progress.hasher.finalize())
            guard sha == s.sha256 else { discard(); throw mismatch(sha) }
        }
        let parts = try store.withDB { db in try db.uploadChunkTags(s.id) }
        try content.finish(s, parts: parts, hashedUpTo: progress.hashedUpTo, into: &progress.hasher)
        if !hashedFirst {
            progress.hashedUpTo = s.size
            let sha = Hex.encode(progress.hasher.finalize())
            guard sha == s.sha256 else {
                content.rollback(.upload(s), revisionId: s.revisionId)
                discard()
                throw mismatch(sha)
            }
        }
        do {
            let file = try publish(owner: s.owner, deviceId: s.deviceId,
                                   content: NewContent(source: .upload(s), size: s.size, sha256: s.sha256,
                                                       mimeType: s.mimeType, contentMeta: s.contentMeta, revisionId: s.revisionId),
                                   target: s.target, checkQuota: false) { db, file in
                try db.completeUploadSession(s.id, resultFileId: file.id)
            }
            if content.needsStoreUpload { content.removeUpload(id: s.id, session: nil) }   // its staged chunk objects
            return file
        } catch let e as APIError where [409, 412, 404].contains(e.status) {
            discard()
            throw e
        }
    }
}

/// What the server keeps in memory for a session: a lock serialising its bookkeeping and the
/// SHA-256 of its contiguous received prefix. Lost on restart, where hashing simply resumes
/// from byte 0.
final class UploadProgress: @unchecked Sendable {
    // SAFETY: `hasher` and `hashedUpTo` are only touched with `lock` held.
    let lock = NSLock()
    var hasher = SHA256Hasher()
    var hashedUpTo: Int64 = 0
}
