import Foundation
import VaultPrimitives
import VaultDigest
#if canImport(Glibc)
import Glibc
#endif

/// Streams bytes into a temp file while hashing them; `seal()` fsyncs and hands back the file.
/// Nothing is buffered beyond the piece being written.
final class ContentWriter {
    let path: String
    private var file: POSIXFile?
    private var hasher = SHA256Hasher()
    private(set) var count: Int64 = 0
    let limit: Int64

    init(store: any ContentBackend, limit: Int64) throws {
        path = store.newTempPath()
        file = try POSIXFile(path: path, flags: O_WRONLY | O_CREAT | O_EXCL)
        self.limit = limit
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard let file else { return }
        guard count + Int64(bytes.count) <= limit else {
            throw APIError.tooLarge("the body is larger than the \(limit)-byte limit of this upload type")
        }
        try file.write(bytes, at: count)
        hasher.update(bytes)
        count += Int64(bytes.count)
    }

    /// fsyncs and closes; returns the size and lowercase hex SHA-256.
    func seal() throws -> (size: Int64, sha256: String) {
        try file?.sync()
        file = nil
        return (count, Hex.encode(hasher.finalize()))
    }

    /// Removes the temp file.
    func discard() { file = nil; FileSystem.remove(path) }
}
