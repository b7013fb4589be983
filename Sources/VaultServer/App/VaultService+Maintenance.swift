import Foundation
import VaultSQL
import VaultPrimitives

/// Startup recovery and the periodic sweep (expired uploads, revoked event streams, content no
/// row references).
extension VaultService {
    /// Deletes expired sessions (rows, then their content).
    func sweepExpiredUploads() {
        let now = Date()
        let sessions = (try? store.write(.store) { db -> [UploadSession] in
            let expired = try db.expiredUploads(before: now)
            for s in expired { try db.deleteUploadSession(s.id) }
            return expired
        }) ?? []
        for s in sessions { content.removeUpload(id: s.id, session: s) }
        uploadLocks.withLock { locks in for s in sessions { locks.removeValue(forKey: s.id) } }
    }

    /// Deletes the login throttle's forgotten counts and expired known IPs (a database error
    /// leaves them for the next sweep).
    func sweepLoginThrottle() {
        let p = config.loginThrottle
        _ = try? store.write(.logins) { db in try db.pruneLogins(now: Date().timeIntervalSince1970, decay: p.decay, knownFor: p.knownFor) }
    }

    /// Drops the event streams of users removed, or whose tokens were revoked, since they opened
    /// (a database error keeps them until the next sweep).
    func cutOffRevokedStreams() {
        hub.cutOff { owner, generation in (try? users.isCurrent(id: owner, generation: generation)) ?? true }
    }

    /// Makes the content store agree with the database after a crash (`ContentBackend.sweep`).
    func recover() throws {
        try content.sweep(store, grace: TimeInterval(config.contentSweepGrace))
        lastContentSweep.withLock { $0 = clock() }
    }

    /// Sweeps an object store every `contentSweepPeriod` while serving (the folder only at
    /// start: nothing but a crash leaves it unreferenced files). `force`: now (the test-only
    /// `expireSessionsNow`).
    func sweepContentIfDue(force: Bool = false) {
        guard content.needsStoreUpload else { return }
        let now = clock()
        let due = lastContentSweep.withLock { last in
            guard force || now - last >= Self.contentSweepPeriod else { return false }
            last = now
            return true
        }
        guard due else { return }
        do { try content.sweep(store, grace: TimeInterval(config.contentSweepGrace)) } catch {
            AccessLog.message("content sweep failed (tried again in \(Int(Self.contentSweepPeriod)) s): \(error)")
        }
    }

    static let contentSweepPeriod: Double = 3600
}
