import Foundation
import VaultPrimitives
import VaultDigest
import VaultSQL
#if canImport(Glibc)
import Glibc
#endif

/// The content folder: one file per revision under `content/`, upload parts under `uploads/`,
/// one-shot upload temps under `tmp/`. Every published file got there by fsync + rename + dir fsync.
final class FolderContent: ContentBackend, @unchecked Sendable {
    // SAFETY: immutable.
    let root: String
    var contentDir: String { root + "/content" }
    var uploadsDir: String { root + "/uploads" }
    var tmpDir: String { root + "/tmp" }

    init(root: String) throws {
        self.root = root
        for d in [root, contentDir, uploadsDir, tmpDir] { try FileSystem.makeDirectory(d) }
        // One-shot upload temps never survive a restart.
        for name in FileSystem.list(tmpDir) { FileSystem.remove(tmpDir + "/" + name) }
    }

    /// The content folder of an existing data folder, as it is (for `vault-server user` commands,
    /// which must not clear the temps of a server running on it).
    init(existing root: String) { self.root = root }

    func revisionPath(_ revisionId: String) -> String { contentDir + "/" + revisionId }
    func partPath(_ uploadId: String) -> String { uploadsDir + "/" + uploadId + ".part" }
    func newTempPath() -> String { tmpDir + "/" + Sodium.randomID() }

    func sessionChunkSize(size: Int64, base: Int64) -> Int64 { base }

    func prepare(_ source: NewContent.Source, revisionId: String) throws {}

    /// Renames (or links) the content into `content/` inside the publishing transaction; a crash
    /// before commit leaves a file `sweep` puts back or removes.
    func commit(_ source: NewContent.Source, revisionId: String) throws {
        switch source {
        case .move(let path): try FileSystem.rename(path, revisionPath(revisionId))
        case .link(let rid): try FileSystem.link(revisionPath(rid), revisionPath(revisionId))
        case .upload(let s): try FileSystem.rename(partPath(s.id), revisionPath(revisionId))
        }
        try FileSystem.syncDirectory(contentDir)
    }

    func rollback(_ source: NewContent.Source, revisionId: String) {}

    func remove(revisions: [String]) {
        for rid in revisions { FileSystem.remove(revisionPath(rid)) }
    }

    func remove(_ files: RemovedUserFiles) throws {
        for rid in files.revisionIds { FileSystem.remove(revisionPath(rid)) }
        for id in files.uploadIds { FileSystem.remove(partPath(id)) }
        // A folder no server has started on yet has neither directory.
        for dir in [contentDir, uploadsDir] where FileSystem.exists(dir) { try FileSystem.syncDirectory(dir) }
    }

    func open(revision revisionId: String, size: Int64) throws -> RevisionReader {
        FileRevisionReader(try POSIXFile(path: revisionPath(revisionId), flags: O_RDONLY))
    }

    // MARK: Resumable uploads: chunks written in place into one part file

    var needsStoreUpload: Bool { false }

    func beginUpload(_ s: UploadSession) throws -> String? {
        _ = try POSIXFile(path: partPath(s.id), flags: O_WRONLY | O_CREAT)
        return nil
    }

    func openChunk(_ s: UploadSession, index: Int, kept: Int64) throws -> ChunkStaging {
        FolderChunk(file: try POSIXFile(path: partPath(s.id), flags: O_WRONLY | O_CREAT))
    }

    func hashChunk(_ s: UploadSession, index: Int, into hasher: inout SHA256Hasher) throws -> Bool {
        let start = Int64(index) * s.chunkSize
        try hash(partPath(s.id), from: start, to: start + s.chunkLength(index), into: &hasher)
        return true
    }

    func finish(_ s: UploadSession, parts: [(index: Int, tag: String?)], hashedUpTo: Int64, into hasher: inout SHA256Hasher) throws {
        let part = partPath(s.id)
        try hash(part, from: hashedUpTo, to: s.size, into: &hasher)
        let f = try POSIXFile(path: part, flags: O_WRONLY)
        try f.truncate(to: s.size)
        try f.sync()
    }

    func removeUpload(id: String, session s: UploadSession?) { FileSystem.remove(partPath(id)) }

    /// Feeds bytes `from..<to` of a file to `hasher`; throws if the file is short.
    func hash(_ path: String, from: Int64, to: Int64, into hasher: inout SHA256Hasher) throws {
        guard from < to else { return }
        try FileRevisionReader(try POSIXFile(path: path, flags: O_RDONLY)).hash(from: from, to: to, into: &hasher)
    }

    // MARK: Recovery

    /// Makes the content folder agree with the database after a crash: a session's part file
    /// moved into `content/` by a publish whose transaction never committed goes back; content
    /// files no revision references and part files no session owns are removed. (The folder is
    /// only swept at startup: `grace` does not apply.)
    func sweep(_ store: MetadataStore, grace: TimeInterval) throws {
        try store.withDB { db in
            let revisionIds = Set(try db.revisionIds())
            var sessionIds = Set<String>()
            for u in try db.activeUploadStores() {
                sessionIds.insert(u.id)
                let part = partPath(u.id), published = revisionPath(u.revisionId)
                if !FileSystem.exists(part) && FileSystem.exists(published) && !revisionIds.contains(u.revisionId) {
                    try FileSystem.rename(published, part)
                }
            }
            for name in FileSystem.list(contentDir) where !revisionIds.contains(name) {
                FileSystem.remove(contentDir + "/" + name)
            }
            for name in FileSystem.list(uploadsDir) {
                let id = name.hasSuffix(".part") ? String(name.dropLast(5)) : name
                if !sessionIds.contains(id) { FileSystem.remove(uploadsDir + "/" + name) }
            }
            try FileSystem.syncDirectory(contentDir)
            try FileSystem.syncDirectory(uploadsDir)
        }
    }
}

/// A chunk written in place into the session's part file.
final class FolderChunk: ChunkStaging {
    let file: POSIXFile
    init(file: POSIXFile) { self.file = file }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws { try file.write(bytes, at: offset) }
    func keep(prefix bytes: Int64) throws { try file.sync() }
    func commit() throws -> String? { try file.sync(); return nil }
    func close() {}
}
