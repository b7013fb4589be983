import Foundation
import VaultPrimitives
import VaultDigest
import VaultSQL
#if canImport(Glibc)
import Glibc
#endif

/// The content folder: one file per revision under `content/`, upload parts under `uploads/`,
/// one-shot upload temps under `tmp/INSTANCE/` (several servers may share the folder: each
/// clears only its own temps). Every published file got there by fsync + rename + dir fsync.
final class FolderContent: ContentBackend, @unchecked Sendable {
    // SAFETY: immutable.
    let root: String
    /// `--instance`: the temp folder's name.
    let instance: String
    var contentDir: String { root + "/content" }
    var uploadsDir: String { root + "/uploads" }
    var tmpDir: String { TempFolder.path(dataDir: root, instance: instance) }

    init(root: String, instance: String) throws {
        self.root = root; self.instance = instance
        for d in [root, contentDir, uploadsDir] { try FileSystem.makeDirectory(d) }
        try TempFolder.prepare(dataDir: root, instance: instance)
    }

    /// The content folder of an existing data folder, as it is (for `vault-server user` commands,
    /// which must not clear the temps of a server running on it).
    init(existing root: String) { self.root = root; instance = "" }

    func checkWritable() throws { try TempFolder.checkWritable(newTempPath()) }

    func revisionPath(_ revisionId: String) -> String { contentDir + "/" + revisionId }
    func partPath(_ uploadId: String) -> String { uploadsDir + "/" + uploadId + ".part" }
    func newTempPath() -> String { tmpDir + "/" + Sodium.randomID() }
    var publishesTempFiles: Bool { true }

    func sessionChunkSize(size: Int64, base: Int64) -> Int64 { base }

    func prepare(_ source: NewContent.Source, revisionId: String) throws {}

    /// Renames (or links) the content into `content/` inside the publishing transaction; a crash
    /// before commit leaves a file `sweep` puts back or removes.
    func commit(_ source: NewContent.Source, revisionId: String) throws {
        switch source {
        case .move(let path): try FileSystem.rename(path, revisionPath(revisionId))
        case .link(let rid): try FileSystem.link(revisionPath(rid), revisionPath(revisionId))
        case .upload(let s): try FileSystem.rename(partPath(s.id), revisionPath(revisionId))
        case .stored: throw APIError.internal("a data folder stores no body while it arrives")
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

    // MARK: Store moves: hard links where the folders allow

    func export(revision revisionId: String, size: Int64, to path: String) throws {
        try StoreMove.copyFile(revisionPath(revisionId), to: path)
    }

    func importRevision(_ revisionId: String, from path: String) throws {
        try FileSystem.makeDirectory(contentDir)
        try StoreMove.copyFile(path, to: revisionPath(revisionId))
    }

    var movesUploadSessions: Bool { true }

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

    /// Seconds a file in a shared content folder must be left alone before recovery treats it as
    /// a crash's leftover (a publish takes milliseconds between its rename and its commit).
    static let sharedFolderSettle: TimeInterval = 600

    /// Makes the content folder agree with the database after a crash: a session's part file
    /// moved into `content/` by a publish whose transaction never committed goes back; content
    /// files no revision references and part files no session owns are removed. (The folder is
    /// only swept at startup: `grace` does not apply.)
    ///
    /// With PostgreSQL metadata other live servers may share the folder: a file another server is
    /// publishing right now (renamed, its transaction not yet committed) looks the same as a
    /// crash's leftover, so there only files untouched for `sharedFolderSettle` seconds are moved
    /// or removed.
    func sweep(_ store: MetadataStore, grace: TimeInterval) throws {
        var shared = false
        if case .postgresql = store.location { shared = true }
        let settledBefore = Date().addingTimeInterval(-Self.sharedFolderSettle)
        func settled(_ path: String) -> Bool {
            guard shared else { return true }
            let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate]) as? Date
            return modified.map { $0 < settledBefore } ?? false
        }
        try store.withDB { db in
            let revisionIds = Set(try db.revisionIds())
            var sessionIds = Set<String>()
            for u in try db.activeUploadStores() {
                sessionIds.insert(u.id)
                let part = partPath(u.id), published = revisionPath(u.revisionId)
                if !FileSystem.exists(part) && FileSystem.exists(published) && !revisionIds.contains(u.revisionId) && settled(published) {
                    try FileSystem.rename(published, part)
                }
            }
            for name in FileSystem.list(contentDir) where !revisionIds.contains(name) && settled(contentDir + "/" + name) {
                FileSystem.remove(contentDir + "/" + name)
            }
            for name in FileSystem.list(uploadsDir) {
                let id = name.hasSuffix(".part") ? String(name.dropLast(5)) : name
                if !sessionIds.contains(id) && settled(uploadsDir + "/" + name) { FileSystem.remove(uploadsDir + "/" + name) }
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

/// The per-instance temp folder `DATA/tmp/INSTANCE/` of one-shot upload bodies (either backend
/// stages them on this machine).
enum TempFolder {
    static func path(dataDir: String, instance: String) -> String { dataDir + "/tmp/" + instance }

    /// Creates the folder and clears what a restart must not keep: this instance's own temps,
    /// loose ones of the layout before per-instance folders, and a day-old one of an instance
    /// since renamed (never a recent one of another instance: it may be live).
    static func prepare(dataDir: String, instance: String) throws {
        let tmp = dataDir + "/tmp", mine = path(dataDir: dataDir, instance: instance)
        for d in [dataDir, tmp, mine] { try FileSystem.makeDirectory(d) }
        for name in FileSystem.list(mine) { FileSystem.remove(mine + "/" + name) }
        let dayAgo = Date().addingTimeInterval(-86_400)
        for name in FileSystem.list(tmp) where name != instance {
            let path = tmp + "/" + name
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { continue }
            guard isDir.boolValue else { FileSystem.remove(path); continue }
            for temp in FileSystem.list(path) {
                let modified = (try? FileManager.default.attributesOfItem(atPath: path + "/" + temp))?[.modificationDate] as? Date
                if let modified, modified < dayAgo { FileSystem.remove(path + "/" + temp) }
            }
        }
    }

    /// Throws unless a small file can be created, written and fsynced at `path` (a fresh temp
    /// name: a full, read-only or vanished disk fails here); the file is removed again.
    static func checkWritable(_ path: String) throws {
        let f = try POSIXFile(path: path, flags: O_WRONLY | O_CREAT | O_EXCL)
        defer { FileSystem.remove(path) }
        let probe: [UInt8] = Array("vault readiness probe\n".utf8)
        try probe.withUnsafeBytes { try f.write($0, at: 0) }
        try f.sync()
    }
}
