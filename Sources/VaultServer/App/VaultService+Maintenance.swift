import Foundation
import VaultSQL
import VaultPrimitives

/// Startup recovery and the periodic sweep (expired uploads, revoked event streams).
extension VaultService {
    /// Deletes expired sessions (rows and part files).
    func sweepExpiredUploads() {
        let now = Date()
        let ids = (try? store.write { db -> [String] in
            let ids = try db.expiredUploadIds(before: now)
            for id in ids { try db.deleteUploadSession(id) }
            return ids
        }) ?? []
        for id in ids { FileSystem.remove(content.partPath(id)) }
        uploadLocks.withLock { locks in for id in ids { locks.removeValue(forKey: id) } }
    }

    /// Seconds a file in a shared content folder must be left alone before recovery treats it as
    /// a crash's leftover (a publish takes milliseconds between its rename and its commit).
    static let sharedFolderSettle: TimeInterval = 600

    /// Deletes the login throttle's forgotten counts and expired known IPs (a database error
    /// leaves them for the next sweep).
    func sweepLoginThrottle() {
        let p = config.loginThrottle
        _ = try? store.write { db in try db.pruneLogins(now: Date().timeIntervalSince1970, decay: p.decay, knownFor: p.knownFor) }
    }

    /// Drops the event streams of users removed, or whose tokens were revoked, since they opened
    /// (a database error keeps them until the next sweep).
    func cutOffRevokedStreams() {
        hub.cutOff { owner, generation in (try? users.isCurrent(id: owner, generation: generation)) ?? true }
    }

    /// Makes the content folder agree with the database after a crash: a session's part file
    /// moved into `content/` by a publish whose transaction never committed goes back; content
    /// files no revision references and part files no session owns are removed.
    ///
    /// With PostgreSQL metadata other live servers may share the folder: a file another server is
    /// publishing right now (renamed, its transaction not yet committed) looks the same as a
    /// crash's leftover, so there only files untouched for `sharedFolderSettle` seconds are moved
    /// or removed.
    func recover() throws {
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
            for (id, rid) in try db.activeUploadRevisions() {
                sessionIds.insert(id)
                let part = content.partPath(id), published = content.revisionPath(rid)
                if !FileSystem.exists(part) && FileSystem.exists(published) && !revisionIds.contains(rid) && settled(published) {
                    try FileSystem.rename(published, part)
                }
            }
            for name in FileSystem.list(content.contentDir) where !revisionIds.contains(name) && settled(content.contentDir + "/" + name) {
                FileSystem.remove(content.contentDir + "/" + name)
            }
            for name in FileSystem.list(content.uploadsDir) {
                let id = name.hasSuffix(".part") ? String(name.dropLast(5)) : name
                if !sessionIds.contains(id) && settled(content.uploadsDir + "/" + name) { FileSystem.remove(content.uploadsDir + "/" + name) }
            }
            try FileSystem.syncDirectory(content.contentDir)
            try FileSystem.syncDirectory(content.uploadsDir)
        }
    }
}
