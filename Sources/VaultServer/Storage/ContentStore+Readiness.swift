import Foundation
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

extension ContentStore {
    /// Throws unless a small file can be created, written and fsynced in `tmp/` (a full,
    /// read-only or vanished disk fails here); the file is removed again. For `GET /readyz`.
    func checkWritable() throws {
        let path = newTempPath()
        let f = try POSIXFile(path: path, flags: O_WRONLY | O_CREAT | O_EXCL)
        defer { FileSystem.remove(path) }
        let probe: [UInt8] = Array("vault readiness probe\n".utf8)
        try probe.withUnsafeBytes { try f.write($0, at: 0) }
        try f.sync()
    }
}
