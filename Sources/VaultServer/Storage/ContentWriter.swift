import Foundation
import VaultPrimitives
import VaultDigest
#if canImport(Glibc)
import Glibc
#endif

/// Streams bytes into a temp file while hashing them; `seal()` fsyncs (where the file itself
/// becomes the content) and hands back the file. Nothing is buffered beyond the piece being written.
final class ContentWriter {
    let path: String
    /// Whether `seal` fsyncs (`ContentBackend.publishesTempFiles`).
    private let durable: Bool
    private var file: POSIXFile?
    private var hasher = SHA256Hasher()
    private(set) var count: Int64 = 0
    let limit: Int64
    /// The body on its way to the store as it arrives (`ContentBackend.streamedPut`).
    private let streamed: StreamedPut?

    /// `expectedLength`: the body's `Content-Length`, when known (an object store may then
    /// start storing it before it is all in).
    init(store: any ContentBackend, limit: Int64, expectedLength: Int64? = nil) throws {
        let path = store.newTempPath()
        self.path = path
        durable = store.publishesTempFiles
        file = try POSIXFile(path: path, flags: O_WRONLY | O_CREAT | O_EXCL)
        self.limit = limit
        streamed = try expectedLength.flatMap { $0 <= limit ? try store.streamedPut(path: path, length: $0) : nil }
    }

    /// What to publish once sealed: the temp file to move in, or the object it already became.
    func content(size: Int64, sha256: String, mimeType: String?) -> NewContent {
        guard let streamed else { return NewContent(source: .move(path: path), size: size, sha256: sha256, mimeType: mimeType) }
        return NewContent(source: .stored(path: path), size: size, sha256: sha256, mimeType: mimeType, revisionId: streamed.revisionId)
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard let file else { return }
        guard count + Int64(bytes.count) <= limit else {
            throw APIError.tooLarge("the body is larger than the \(limit)-byte limit of this upload type")
        }
        try file.write(bytes, at: count)
        hasher.update(bytes)
        count += Int64(bytes.count)
        streamed?.wrote(upTo: count)
    }

    /// fsyncs (when the file is to be published as it is) and closes; returns the size and
    /// lowercase hex SHA-256.
    func seal() throws -> (size: Int64, sha256: String) {
        if durable { try file?.sync() }
        file = nil
        try streamed?.end(at: count)
        return (count, Hex.encode(hasher.finalize()))
    }

    /// Removes the temp file, and a streamed object not published (its temp file still there:
    /// publishing removes it).
    func discard() {
        file = nil
        if let streamed, FileSystem.exists(path) { streamed.abort() }
        FileSystem.remove(path)
    }
}
