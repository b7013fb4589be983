import Foundation
import VaultPrimitives
import VaultDigest
#if canImport(Glibc)
import Glibc
#endif

/// The content folder: one file per revision under `content/`, upload parts under `uploads/`,
/// one-shot upload temps under `tmp/INSTANCE/` (several servers may share the folder: each
/// clears only its own temps). Every published file got there by fsync + rename + dir fsync.
struct ContentStore: Sendable {
    let root: String
    /// `--instance`: the temp folder's name.
    let instance: String
    var contentDir: String { root + "/content" }
    var uploadsDir: String { root + "/uploads" }
    var tmpDir: String { root + "/tmp/" + instance }

    init(root: String, instance: String) throws {
        self.root = root; self.instance = instance
        for d in [root, contentDir, uploadsDir, root + "/tmp", tmpDir] { try FileSystem.makeDirectory(d) }
        // One-shot upload temps never survive a restart: this instance's own, loose ones of the
        // layout before per-instance folders, and a day-old one of an instance since renamed
        // (never a recent one of another instance: it may be live).
        for name in FileSystem.list(tmpDir) { FileSystem.remove(tmpDir + "/" + name) }
        let dayAgo = Date().addingTimeInterval(-86_400)
        for name in FileSystem.list(root + "/tmp") where name != instance {
            let path = root + "/tmp/" + name
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { continue }
            guard isDir.boolValue else { FileSystem.remove(path); continue }
            for temp in FileSystem.list(path) {
                let modified = (try? FileManager.default.attributesOfItem(atPath: path + "/" + temp))?[.modificationDate] as? Date
                if let modified, modified < dayAgo { FileSystem.remove(path + "/" + temp) }
            }
        }
    }

    /// The content folder of an existing data folder, as it is (for `vault-server user` commands,
    /// which must not clear the temps of a server running on it).
    init(existing root: String) { self.root = root; instance = "" }

    /// Deletes the content and part files a removed user left (`SQLConnection.deleteUser`).
    func remove(_ files: RemovedUserFiles) throws {
        for rid in files.revisionIds { FileSystem.remove(revisionPath(rid)) }
        for id in files.uploadIds { FileSystem.remove(partPath(id)) }
        // A folder no server has started on yet has neither directory.
        for dir in [contentDir, uploadsDir] where FileSystem.exists(dir) { try FileSystem.syncDirectory(dir) }
    }

    func revisionPath(_ revisionId: String) -> String { contentDir + "/" + revisionId }
    func partPath(_ uploadId: String) -> String { uploadsDir + "/" + uploadId + ".part" }
    func newTempPath() -> String { tmpDir + "/" + Sodium.randomID() }

    /// Makes a fully written, fsynced file the content of `revisionId` (rename + dir fsync).
    func publish(from path: String, revisionId: String) throws {
        try FileSystem.rename(path, revisionPath(revisionId))
        try FileSystem.syncDirectory(contentDir)
    }

    /// Feeds bytes `from..<to` of a file to `hasher` (1 MiB at a time); throws if the file is short.
    func hash(_ path: String, from: Int64, to: Int64, into hasher: inout SHA256Hasher) throws {
        guard from < to else { return }
        let f = try POSIXFile(path: path, flags: O_RDONLY)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = from
        while offset < to {
            let want = Int(min(Int64(buffer.count), to - offset))
            let n = try buffer.withUnsafeMutableBytes { try f.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want]), at: offset) }
            guard n > 0 else { throw FileSystemError(operation: "read (file shorter than expected)", path: path, errno: .ioError) }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            offset += Int64(n)
        }
    }
}
