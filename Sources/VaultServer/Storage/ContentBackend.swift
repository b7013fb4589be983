import Foundation
import VaultPrimitives
import VaultDigest
import VaultSQL

/// Where the bytes of revisions and of unfinished uploads live: the data folder
/// (`FolderContent`, the default) or an S3 bucket (`S3Content`, `--content s3://…`). The
/// metadata database is the truth about which content exists; a backend only stores bytes under
/// the ids the database hands it, and its sweep removes what no row references.
///
/// Publishing is three steps around the metadata transaction that makes a revision visible:
/// `prepare` (before it: the bytes reach their final place, unreferenced), `commit` (inside it:
/// cheap, local), `rollback` (when it failed: the prepared bytes go).
protocol ContentBackend: AnyObject, Sendable {
    /// The chunk size of a new resumable session of `size` bytes, given the server's `base` chunk
    /// size (an S3 multipart upload has at most 10,000 parts).
    func sessionChunkSize(size: Int64, base: Int64) -> Int64

    /// A fresh path for a one-shot upload body, on this machine (a `ContentWriter` file).
    func newTempPath() -> String
    /// Whether such a file becomes the content itself (renamed into place: it is fsynced first),
    /// or is only read to send its bytes to the store (which makes them durable: no fsync).
    var publishesTempFiles: Bool { get }
    /// A PUT of a one-shot body of `length` bytes that starts while the body still arrives into
    /// the temp file `path` (an object store, for a large enough body), or nil: send it once in.
    func streamedPut(path: String, length: Int64) throws -> StreamedPut?

    func prepare(_ source: NewContent.Source, revisionId: String) throws
    func commit(_ source: NewContent.Source, revisionId: String) throws
    func rollback(_ source: NewContent.Source, revisionId: String)

    /// Deletes the content of revisions no row references any more (best effort: the sweep
    /// catches what is left).
    func remove(revisions: [String])
    /// Deletes what a removed user left (`SQLConnection.deleteUser`).
    func remove(_ files: RemovedUserFiles) throws

    /// Opens revision `revisionId` (of `size` bytes) for reading at any offset.
    func open(revision revisionId: String, size: Int64) throws -> RevisionReader

    // MARK: Store moves (`vault-server export`, `import`)

    /// Writes revision `revisionId` (of `size` bytes) to the new file `path`.
    func export(revision revisionId: String, size: Int64, to path: String) throws
    /// Makes the file `path` the content of revision `revisionId` (the file stays).
    func importRevision(_ revisionId: String, from path: String) throws
    /// Whether unfinished upload sessions move with the store: their parts are files of the data
    /// folder. An object store keeps them as multipart uploads in its bucket, which no move carries.
    var movesUploadSessions: Bool { get }

    // MARK: Resumable uploads

    /// Whether a session needs a store-side upload (`uploads.store_upload_id`) before its first chunk.
    var needsStoreUpload: Bool { get }
    /// Starts the store-side upload of session `s`; returns its id to record, or nil.
    func beginUpload(_ s: UploadSession) throws -> String?
    /// Where chunk `index` of `s` is written; `kept` bytes of it were kept from a cut-off body.
    func openChunk(_ s: UploadSession, index: Int, kept: Int64) throws -> ChunkStaging
    /// Feeds chunk `index` of `s` to `hasher`; false when its bytes cannot be read back yet (an
    /// S3 part, once its request is over), which leaves the hash to `finish`.
    func hashChunk(_ s: UploadSession, index: Int, into hasher: inout SHA256Hasher) throws -> Bool
    /// Makes every received chunk of `s` the content of `s.revisionId` (not yet referenced), and
    /// feeds the bytes past `hashedUpTo` to `hasher` (S3 reads them back from the whole object).
    /// `parts`: each chunk's tag from `ChunkStaging.commit`, in chunk order.
    func finish(_ s: UploadSession, parts: [(index: Int, tag: String?)], hashedUpTo: Int64, into hasher: inout SHA256Hasher) throws
    /// Drops the bytes of session `id` (aborted, expired, discarded); `s` when its row was at hand.
    func removeUpload(id: String, session s: UploadSession?)

    /// Throws unless content can be written now (a small probe, removed again): `GET /readyz`.
    func checkWritable() throws

    // MARK: Recovery

    /// Makes the store agree with the database: after a crash at startup, and as the periodic
    /// sweep. Objects younger than `grace` seconds are left alone (a publish between `prepare`
    /// and its commit).
    func sweep(_ store: MetadataStore, grace: TimeInterval) throws
}

/// Chunk bytes on their way to the store. The sink writes them at absolute file offsets, then
/// either keeps a cut-off prefix (`keep`) or commits the whole chunk.
protocol ChunkStaging: AnyObject {
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws
    /// Makes the first `bytes` of the chunk durable as its kept prefix.
    func keep(prefix bytes: Int64) throws
    /// Makes the whole chunk durable; returns the tag to record with it (an S3 part's ETag).
    func commit() throws -> String?
    /// Releases local resources (the chunk's staging file); called once, last.
    func close()
}

/// Reads a revision's bytes at any offset.
protocol RevisionReader: AnyObject, Sendable {
    /// Up to `buffer.count` bytes at `offset`; 0 only at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int
    /// The open file, when the revision is one (served without copying).
    var file: POSIXFile? { get }
    /// Reads what a read at `offset` needs now, so a download whose store is down is a 503
    /// before any header, not a cut-off 200.
    func prefetch(at offset: Int64) throws
}

extension RevisionReader {
    func prefetch(at offset: Int64) throws {}

    /// The whole revision (`size` bytes) in memory: only for the test-only lies.
    func readAll(size: Int64) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(size))
        var at: Int64 = 0
        while at < size {
            let n = try out.withUnsafeMutableBytes { try read(into: UnsafeMutableRawBufferPointer(rebasing: $0[Int(at)...]), at: at) }
            guard n > 0 else { throw APIError.internal("content shorter than its revision") }
            at += Int64(n)
        }
        return out
    }

    /// Feeds bytes `from..<to` to `hasher`, 1 MiB at a time; throws if the content is short.
    func hash(from: Int64, to: Int64, into hasher: inout SHA256Hasher) throws {
        var buffer = [UInt8](repeating: 0, count: Int(max(1, min(1 << 20, to - from))))   // a small revision, a small buffer
        var offset = from
        while offset < to {
            let want = Int(min(Int64(buffer.count), to - offset))
            let n = try buffer.withUnsafeMutableBytes { try read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want]), at: offset) }
            guard n > 0 else { throw APIError.internal("content shorter than expected") }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            offset += Int64(n)
        }
    }
}

/// A response body of `length` bytes of a revision from `offset`, read on demand.
final class RevisionBody: StreamingBody, @unchecked Sendable {
    // SAFETY: read only from the connection's own thread, one call at a time.
    private let reader: RevisionReader
    private var offset: Int64
    private var left: Int64
    let length: Int64?

    init(reader: RevisionReader, offset: Int64, length: Int64) {
        self.reader = reader; self.offset = offset; self.left = length; self.length = length
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard left > 0 else { return nil }
        let room = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(min(Int64(buffer.count), left))])
        do {
            let n = try reader.read(into: room, at: offset)
            guard n > 0 else { return nil }
            offset += Int64(n); left -= Int64(n)
            return n
        } catch {
            AccessLog.message("content read failed midway: \(error)")
            return nil
        }
    }

    func close() {}
}

/// A revision that is a local file.
final class FileRevisionReader: RevisionReader, @unchecked Sendable {
    // SAFETY: `pread` at explicit offsets only; the descriptor is closed when the reader goes.
    let file: POSIXFile?
    init(_ file: POSIXFile) { self.file = file }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try file!.read(into: buffer, at: offset)
    }
}

extension ContentBackend {
    func streamedPut(path: String, length: Int64) throws -> StreamedPut? { nil }

    /// Reads the revision through `open` into a new file (mode 0600), synced.
    func export(revision revisionId: String, size: Int64, to path: String) throws {
        let reader = try open(revision: revisionId, size: size)
        let out = try POSIXFile(path: path, flags: O_WRONLY | O_CREAT | O_EXCL)   // mode 0600
        var buffer = [UInt8](repeating: 0, count: Int(max(1, min(1 << 20, size))))
        var at: Int64 = 0
        while at < size {
            let want = Int(min(Int64(buffer.count), size - at))
            let n = try buffer.withUnsafeMutableBytes { try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want]), at: at) }
            guard n > 0 else { throw APIError.internal("revision \(revisionId) is shorter in the store than its row says") }
            try buffer.withUnsafeBytes { try out.write(UnsafeRawBufferPointer(rebasing: $0[0..<n]), at: at) }
            at += Int64(n)
        }
        try out.sync()
    }

    /// The body of `length` bytes of `revisionId` from `offset`: the file itself when it is
    /// one, else a stream.
    func body(revision revisionId: String, size: Int64, offset: Int64, length: Int64) throws -> ResponseBody {
        guard length > 0 else { return .bytes([]) }
        let reader = try open(revision: revisionId, size: size)
        if let f = reader.file { return .file(f, offset: offset, length: length) }
        try reader.prefetch(at: offset)
        return .stream(RevisionBody(reader: reader, offset: offset, length: length))
    }
}

/// Opens the content backend `argument` names: an `s3://` URL, else the data folder.
enum ContentLocation {
    /// `instance`: a server starting (`--instance`; its one-shot temps never survive a restart);
    /// nil, an admin command, which leaves the temps of servers running on the folder alone.
    static func open(_ argument: String?, dataDir: String, instance: String?) throws -> any ContentBackend {
        if let argument {
            return try S3Content(location: S3Location(url: argument), dataDir: dataDir,
                                 instance: instance ?? "", clearTemps: instance != nil)
        }
        if let instance { return try FolderContent(root: dataDir, instance: instance) }
        return FolderContent(existing: dataDir)
    }
}
