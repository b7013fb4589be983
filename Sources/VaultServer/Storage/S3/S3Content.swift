import Foundation
import VaultPrimitives
import VaultDigest
import VaultSQL
#if canImport(Glibc)
import Glibc
#endif

/// Content in an S3 bucket (`--content s3://…`). Keys:
///
/// * `content/<revisionId>`: the bytes of one revision (what the folder's `content/` holds);
/// * a resumable session is a multipart upload of `content/<its revisionId>`: chunk n is part
///   n + 1, and CompleteMultipartUpload makes the object, still unreferenced until the metadata
///   transaction that publishes it commits;
/// * `uploads/<sessionId>/<chunk>`: the kept prefix of a chunk whose body was cut off, until the
///   rest arrives and the whole chunk is uploaded as its part;
/// * `uploads/<sessionId>/c<chunk>`: a whole chunk of a session whose chunks are smaller than
///   S3's 5 MiB minimum part (a server run with a small `--max-chunk`): such a file (at most
///   5 GiB) is composed into `content/<revisionId>` by one streamed PUT at completion.
///
/// Bodies are staged on this machine (`DATA/tmp/INSTANCE`, one file per request, gone when it ends)
/// before they go to the store, so a request never holds the store half-written.
final class S3Content: ContentBackend, @unchecked Sendable {
    // SAFETY: immutable, or behind `Locked`.
    let client: S3Client
    let tmpDir: String
    /// Staging files of chunks whose part was just uploaded, while their request still runs, so
    /// `hashChunk` can hash them without reading the part back (S3 cannot).
    private let staged = Locked([String: POSIXFile]())
    /// The most parts a multipart upload has, the smallest part but the last, and the largest
    /// single PUT.
    static let maxParts: Int64 = 10_000
    static let minPartSize: Int64 = 5 << 20
    static let maxPut: Int64 = 5 << 30

    /// A client for the `/readyz` probe, quick to give up (a stalled store is not ready).
    let probeClient: S3Client
    /// `--instance`: the temp folder's and the probe object's name.
    let instance: String

    /// `clearTemps`: a server starting (creates and clears its `DATA/tmp/INSTANCE`).
    init(location: S3Location, dataDir: String, instance: String, clearTemps: Bool) throws {
        client = S3Client(location)
        probeClient = S3Client(location, connectTimeout: 2, stallTime: 5)
        self.instance = instance
        tmpDir = TempFolder.path(dataDir: dataDir, instance: instance)
        if clearTemps { try TempFolder.prepare(dataDir: dataDir, instance: instance) }
    }

    /// Throws unless this machine's temp folder takes a file and the bucket takes (and gives
    /// up) a small probe object `readyz/INSTANCE`, each request bounded (2 s to connect, 5 s
    /// without a byte). For `GET /readyz`.
    func checkWritable() throws {
        try TempFolder.checkWritable(newTempPath())
        let key = "readyz/" + (instance.isEmpty ? "probe" : instance)
        try probeClient.put(key, bytes: Array("vault readiness probe\n".utf8))
        try probeClient.delete(key)
    }

    static func revisionKey(_ rid: String) -> String { "content/" + rid }
    static func partialKey(_ sessionId: String, _ index: Int) -> String { "uploads/\(sessionId)/\(index)" }
    static func chunkKey(_ sessionId: String, _ index: Int) -> String { "uploads/\(sessionId)/c\(index)" }

    /// Whether the chunks of `s` are parts of a multipart upload (else objects composed at the end).
    static func usesParts(_ s: UploadSession) -> Bool { s.chunkSize >= minPartSize && s.size > 0 }

    func newTempPath() -> String { tmpDir + "/" + Sodium.randomID() }
    var publishesTempFiles: Bool { false }

    /// The server's chunk size, times the smallest factor that keeps a file of `size` bytes
    /// within 10,000 parts, and (past 5 GiB, the most one PUT composes) at S3's 5 MiB minimum
    /// part (the session keeps it; chunks are never re-cut).
    func sessionChunkSize(size: Int64, base: Int64) -> Int64 {
        func up(_ n: Int64, _ d: Int64) -> Int64 { n / d + (n % d == 0 ? 0 : 1) }
        var factor = max(1, up(up(size, base), Self.maxParts))
        if size > Self.maxPut { factor = max(factor, up(Self.minPartSize, base)) }
        return base.multipliedReportingOverflow(by: factor).overflow ? base : base * factor
    }

    func prepare(_ source: NewContent.Source, revisionId: String) throws {
        let key = Self.revisionKey(revisionId)
        switch source {
        case .move(let path):
            let f = try POSIXFile(path: path, flags: O_RDONLY)
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
            try client.put(key, file: f, length: size)
        case .link(let rid): try client.copy(Self.revisionKey(rid), to: key)
        case .upload, .stored: break   // `finish` completed it; the body went up as it arrived
        }
    }

    func commit(_ source: NewContent.Source, revisionId: String) throws {
        switch source {
        case .move(let path), .stored(let path): FileSystem.remove(path)
        case .link, .upload: break
        }
    }

    /// A one-shot body of `length` bytes (at least 1 MiB: a smaller one is sent whole once it is
    /// in) goes up as it arrives, read from its temp file `path` as it is written.
    func streamedPut(path: String, length: Int64) throws -> StreamedPut? {
        guard length >= 1 << 20, length <= Self.maxPut else { return nil }
        return try StreamedPut(client: client, path: path, length: length)
    }

    func rollback(_ source: NewContent.Source, revisionId: String) {
        try? client.delete(Self.revisionKey(revisionId))
    }

    func remove(revisions: [String]) {
        for rid in revisions { try? client.delete(Self.revisionKey(rid)) }
    }

    /// The user's revisions go now; their sessions' multipart uploads and kept prefixes, which no
    /// row names any more, go with the next sweep.
    func remove(_ files: RemovedUserFiles) throws {
        for rid in files.revisionIds { try client.delete(Self.revisionKey(rid)) }
    }

    func open(revision revisionId: String, size: Int64) throws -> RevisionReader {
        S3RevisionReader(client: client, key: Self.revisionKey(revisionId), size: size)
    }

    // MARK: Store moves

    /// PUTs the file as `content/<revisionId>` (again, when a move into the same bucket finds it there).
    func importRevision(_ revisionId: String, from path: String) throws {
        let f = try POSIXFile(path: path, flags: O_RDONLY)
        try client.put(Self.revisionKey(revisionId), file: f, length: f.size)
    }

    var movesUploadSessions: Bool { false }

    // MARK: Resumable uploads

    var needsStoreUpload: Bool { true }

    func beginUpload(_ s: UploadSession) throws -> String? {
        guard Self.usesParts(s) else { return nil }
        return try client.createMultipartUpload(Self.revisionKey(s.revisionId))
    }

    func openChunk(_ s: UploadSession, index: Int, kept: Int64) throws -> ChunkStaging {
        let uploadId = s.storeUploadId ?? ""
        guard !Self.usesParts(s) || !uploadId.isEmpty else { throw APIError.internal("the session has no multipart upload") }
        let chunk = try S3Chunk(content: self, session: s, uploadId: uploadId, index: index,
                                path: tmpDir + "/\(s.id).\(index).\(Sodium.randomID())")
        do {
            if kept > 0 {
                // The kept prefix comes back from the store: any instance may continue the chunk.
                var at: Int64 = 0
                try client.get(Self.partialKey(s.id, index), offset: 0, length: kept) { piece in
                    try chunk.file.write(piece, at: at)
                    at += Int64(piece.count)
                    return true
                }
                guard at == kept else { throw S3Error.unavailable("the kept prefix of chunk \(index) is short") }
                chunk.hadPrefix = true
            }
        } catch {
            chunk.close()
            throw error
        }
        return chunk
    }

    func hashChunk(_ s: UploadSession, index: Int, into hasher: inout SHA256Hasher) throws -> Bool {
        guard let file = staged.withLock({ $0["\(s.id)#\(index)"] }) else { return false }
        try FileRevisionReader(file).hash(from: 0, to: s.chunkLength(index), into: &hasher)
        return true
    }

    func register(_ file: POSIXFile?, session: String, index: Int) {
        staged.withLock { $0["\(session)#\(index)"] = file }
    }

    func finish(_ s: UploadSession, parts: [(index: Int, tag: String?)], hashedUpTo: Int64, into hasher: inout SHA256Hasher) throws {
        let key = Self.revisionKey(s.revisionId)
        if s.size == 0 {
            try client.put(key, bytes: [])
        } else if !Self.usesParts(s) {
            // Composed before, by a request whose publish never committed: the object is there.
            if try client.size(key) != s.size {
                var hashed = hashedUpTo
                try compose(s, into: key, hashedUpTo: &hashed, hasher: &hasher)
                return
            }
        } else {
            guard let uploadId = s.storeUploadId else { throw APIError.internal("the session has no multipart upload") }
            var list: [(Int, String)] = []
            for p in parts {
                guard let tag = p.tag else { throw APIError.internal("chunk \(p.index) was recorded without its part's ETag") }
                list.append((p.index + 1, tag))
            }
            do {
                try client.completeMultipartUpload(key, uploadId: uploadId, parts: list)
            } catch S3Error.notFound {
                // Completed before, by a request whose publish never committed (a crash, or the
                // store or database failing right after): the object is there, unreferenced.
                guard try client.size(key) == s.size else { throw S3Error.notFound("multipart upload of \(key)") }
            }
        }
        guard hashedUpTo < s.size else { return }
        try open(revision: s.revisionId, size: s.size).hash(from: hashedUpTo, to: s.size, into: &hasher)
    }

    /// One PUT of `key` streaming the session's chunk objects in order, hashing the bytes past
    /// `hashedUpTo` as they pass (one chunk in memory at a time).
    private func compose(_ s: UploadSession, into key: String, hashedUpTo: inout Int64, hasher: inout SHA256Hasher) throws {
        var index = 0, piece: [UInt8] = [], used = 0
        var offset: Int64 = 0
        var h = hasher, hashed = hashedUpTo
        try client.put(key, length: s.size) { buffer in
            if used == piece.count {
                guard Int64(index) < Int64(s.totalChunks) else { return 0 }
                piece = []
                piece.reserveCapacity(Int(s.chunkLength(index)))
                try self.client.get(Self.chunkKey(s.id, index), offset: 0, length: s.chunkLength(index)) { p in
                    piece.append(contentsOf: p); return true
                }
                guard Int64(piece.count) == s.chunkLength(index) else { throw S3Error.unavailable("chunk \(index) is short in the store") }
                index += 1; used = 0
            }
            let n = min(buffer.count, piece.count - used)
            piece.withUnsafeBytes { src in
                buffer.baseAddress!.copyMemory(from: src.baseAddress! + used, byteCount: n)
                let end = offset + Int64(n)
                if end > hashed {
                    let from = Int(max(hashed - offset, 0))
                    h.update(UnsafeRawBufferPointer(rebasing: src[(used + from)..<(used + n)]))
                    hashed = end
                }
            }
            used += n; offset += Int64(n)
            return n
        }
        hasher = h; hashedUpTo = hashed
    }

    func removeUpload(id: String, session s: UploadSession?) {
        if let s, let uploadId = s.storeUploadId {
            try? client.abortMultipartUpload(Self.revisionKey(s.revisionId), uploadId: uploadId)
        }
        for o in (try? client.listObjects(prefix: "uploads/\(id)/")) ?? [] { try? client.delete(o.key) }
    }

    // MARK: Recovery

    /// What one sweep removed (for the log and the tests).
    struct SweepResult: Equatable { var abortedUploads = 0, deletedObjects = 0 }

    func sweep(_ store: MetadataStore, grace: TimeInterval) throws {
        let r = try sweepReporting(store, grace: grace)
        if r != SweepResult() {
            AccessLog.message("content sweep: aborted \(r.abortedUploads) multipart uploads, deleted \(r.deletedObjects) objects no row references")
        }
    }

    /// The listings are taken first and the rows read after, so anything listed either has the
    /// row that protects it by the time it is read, or is garbage: a session's row exists before
    /// its multipart upload and prefixes; a revision's object is referenced by the commit that
    /// follows `prepare` (objects younger than `grace` are left for that commit).
    func sweepReporting(_ store: MetadataStore, grace: TimeInterval, now: Date = Date()) throws -> SweepResult {
        let uploads = try client.listMultipartUploads()
        let revisionObjects = try client.listObjects(prefix: "content/")
        let partialObjects = try client.listObjects(prefix: "uploads/")
        let (revisionIds, sessions) = try store.withDB { db in
            (Set(try db.revisionIds()), try db.activeUploadStores())
        }
        let sessionByRevision = Dictionary(sessions.map { ($0.revisionId, $0) }, uniquingKeysWith: { a, _ in a })
        let sessionIds = Set(sessions.map(\.id))
        let old = { (d: Date?) in d.map { now.timeIntervalSince($0) >= grace } ?? true }
        var result = SweepResult()
        for u in uploads {
            let rid = u.key.hasPrefix("content/") ? String(u.key.dropFirst(8)) : ""
            let owner = sessionByRevision[rid]
            // A second upload of one session (two instances raced to start it) loses once the
            // winner is recorded and it is past the grace.
            let keep = owner.map { $0.storeUploadId == nil || $0.storeUploadId == u.uploadId || !old(u.initiated) } ?? false
            if !keep {
                try client.abortMultipartUpload(u.key, uploadId: u.uploadId)
                result.abortedUploads += 1
            }
        }
        for o in revisionObjects {
            let rid = String(o.key.dropFirst(8))
            if revisionIds.contains(rid) || sessionByRevision[rid] != nil || !old(o.modified) { continue }
            try client.delete(o.key)
            result.deletedObjects += 1
        }
        for o in partialObjects {
            let sid = o.key.split(separator: "/").dropFirst().first.map(String.init) ?? ""
            if sessionIds.contains(sid) { continue }
            try client.delete(o.key)
            result.deletedObjects += 1
        }
        return result
    }
}

/// A chunk staged in a file of its own, then uploaded whole as its part (or its prefix as the
/// session's kept-prefix object when the body was cut off).
final class S3Chunk: ChunkStaging {
    let content: S3Content
    let session: UploadSession
    let uploadId: String
    let index: Int
    let file: POSIXFile
    let path: String
    var hadPrefix = false
    private var committed = false

    /// Creates the staging file `path` (0600, a fresh name in DATA/tmp).
    init(content: S3Content, session: UploadSession, uploadId: String, index: Int, path: String) throws {
        self.content = content; self.session = session; self.uploadId = uploadId; self.index = index; self.path = path
        file = try POSIXFile(path: path, flags: O_RDWR | O_CREAT | O_EXCL)
    }

    private var chunkStart: Int64 { Int64(index) * session.chunkSize }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try file.write(bytes, at: offset - chunkStart)
    }

    func keep(prefix bytes: Int64) throws {
        try content.client.put(S3Content.partialKey(session.id, index), file: file, length: bytes)
        hadPrefix = true
    }

    func commit() throws -> String? {
        guard session.size > 0 else { return nil }   // an empty file is one empty object (`finish`)
        guard S3Content.usesParts(session) else {
            try content.client.put(S3Content.chunkKey(session.id, index), file: file, length: session.chunkLength(index))
            committed = true
            content.register(file, session: session.id, index: index)
            if hadPrefix { try? content.client.delete(S3Content.partialKey(session.id, index)) }
            return nil
        }
        let tag = try content.client.uploadPart(S3Content.revisionKey(session.revisionId), uploadId: uploadId,
                                                number: index + 1, file: file, length: session.chunkLength(index))
        committed = true
        content.register(file, session: session.id, index: index)
        if hadPrefix { try? content.client.delete(S3Content.partialKey(session.id, index)) }
        return tag
    }

    func close() {
        if committed { content.register(nil, session: session.id, index: index) }
        FileSystem.remove(path)
    }
}

/// Reads an object in pieces of `pieceSize` by ranged GETs, so a download of any size holds one
/// piece in memory and any instance can serve any range.
final class S3RevisionReader: RevisionReader, @unchecked Sendable {
    // SAFETY: used by one connection's thread at a time.
    let client: S3Client
    let key: String
    let size: Int64
    var file: POSIXFile? { nil }
    private var piece: [UInt8] = []
    private var pieceStart: Int64 = -1
    static let pieceSize: Int64 = 4 << 20

    init(client: S3Client, key: String, size: Int64) { self.client = client; self.key = key; self.size = size }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard offset < size, buffer.count > 0 else { return 0 }
        if pieceStart < 0 || offset < pieceStart || offset >= pieceStart + Int64(piece.count) { try fetch(at: offset) }
        let from = Int(offset - pieceStart)
        let n = min(buffer.count, piece.count - from)
        piece.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + from, byteCount: n) }
        return n
    }

    func prefetch(at offset: Int64) throws { if offset < size { try fetch(at: offset) } }

    private func fetch(at offset: Int64) throws {
        let length = min(Self.pieceSize, size - offset)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(length))
        try client.get(key, offset: offset, length: length) { p in bytes.append(contentsOf: p); return true }
        guard Int64(bytes.count) == length else { throw S3Error.unavailable("object \(key) is shorter than its revision") }
        piece = bytes; pieceStart = offset
    }
}
