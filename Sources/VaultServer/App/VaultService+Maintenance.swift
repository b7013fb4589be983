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

    /// Drops the event streams of users removed, or whose tokens were revoked, since they opened
    /// (a database error keeps them until the next sweep).
    func cutOffRevokedStreams() {
        hub.cutOff { owner, generation in (try? users.isCurrent(id: owner, generation: generation)) ?? true }
    }

    /// Makes the content folder agree with the database after a crash: a session's part file
    /// moved into `content/` by a publish whose transaction never committed goes back; content
    /// files no revision references and part files no session owns are removed.
    func recover() throws {
        try store.withDB { db in
            let revisionIds = Set(try db.revisionIds())
            var sessionIds = Set<String>()
            for (id, rid) in try db.activeUploadRevisions() {
                sessionIds.insert(id)
                let part = content.partPath(id), published = content.revisionPath(rid)
                if !FileSystem.exists(part) && FileSystem.exists(published) && !revisionIds.contains(rid) {
                    try FileSystem.rename(published, part)
                }
            }
            for name in FileSystem.list(content.contentDir) where !revisionIds.contains(name) {
                FileSystem.remove(content.contentDir + "/" + name)
            }
            for name in FileSystem.list(content.uploadsDir) {
                let id = name.hasSuffix(".part") ? String(name.dropLast(5)) : name
                if !sessionIds.contains(id) { FileSystem.remove(content.uploadsDir + "/" + name) }
            }
            try FileSystem.syncDirectory(content.contentDir)
            try FileSystem.syncDirectory(content.uploadsDir)
        }
    }
}
