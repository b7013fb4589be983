import Foundation
import VaultCore

/// How the mount reaches the vault: through a `VaultReopener`, as `vault browse` does. The
/// vault is opened for a burst of requests and closed once the requests pause (0.1 s) or the
/// burst has lasted 2 s, so other `vault` commands run beside the mount. The session is checked
/// at least once a second (on a timer when idle): once the vault is locked (`vault lock`, a
/// timeout, a key rotation) every request fails with EACCES until `vault unlock`. Requests do
/// not count as use for the idle timeout (docs/mount.md "Locking").
final class VaultGate {
    enum Change {
        case locked, unlocked
        /// The database changed since the last look (a pull, another command, this mount's own
        /// commits): the kernel's caches are checked against it (`MountFilesystem.changesBeside`).
        case changedBeside
    }

    private let reopener: VaultReopener
    private let readOnly: Bool
    private var opened: Vault?
    private var openedAt = Date.distantPast
    private var lastUse = Date.distantPast
    private var lastCheck = Date.distantPast
    private(set) var isLocked = false
    /// Set when a request found the vault locked; the loop reports it at its next `tick`.
    private var lockedDuringRequest = false
    private let log: (String) -> Void
    /// The metadata database, known from the first open, and its stamp at the last look.
    private var databaseFile: String?
    private var stamp: FileStamp?
    private var refreshDue = false
    private var lastRefresh = Date.distantPast
    private var lastStat = Date.distantPast

    init(reopener: VaultReopener, readOnly: Bool, log: @escaping (String) -> Void) {
        self.reopener = reopener; self.readOnly = readOnly; self.log = log
    }

    /// The open vault for one request. A request that only reads (`write` false) runs beside a
    /// sync pass that holds the vault (lock `.control`, as `vault browse` does), so browsing and
    /// reading the mount go on while the agent syncs; one that changes the vault holds it alone
    /// (waiting up to the lock timeout, then EBUSY).
    /// - Throws: EACCES while the vault is locked; the open's own failure otherwise.
    func vault(write: Bool = false, lockTimeout: TimeInterval = Vault.lockTimeout) throws(FuseErrno) -> Vault {
        guard !isLocked else { throw FuseErrno(EACCES, "the vault is locked") }
        lastUse = Date()
        if let opened, !(write && opened.isBesideSync) { return opened }
        opened = nil
        do {
            let v = try reopener.open(lock: write ? .exclusive : .control, access: readOnly ? .read : .readWrite,
                                      touch: false, lockTimeout: lockTimeout)
            opened = v; openedAt = Date(); lastCheck = Date()
            if databaseFile == nil { databaseFile = v.layout.databaseFile; stamp = FileStamp(v.layout.databaseFile) }
            return v
        } catch let e as VaultError where e.kind == .locked {
            lock()
            throw FuseErrno(EACCES, "the vault is locked")
        } catch {
            throw FuseErrno(error, doing: "opening the vault")
        }
    }

    private func lock() {
        isLocked = true; lockedDuringRequest = true
        opened = nil
    }

    /// Between requests: closes a paused or long burst's vault, checks the session once a
    /// second, and says when the vault locked or was unlocked again.
    func tick() -> Change? {
        let now = Date()
        if opened != nil && (now.timeIntervalSince(lastUse) > 0.1 || now.timeIntervalSince(openedAt) > 2) { opened = nil }
        if lockedDuringRequest { lockedDuringRequest = false; return .locked }
        if let change = checkSession(now) { return change }
        // A stat of the database at most every 50 ms (a burst of requests wakes the loop for
        // each), and at least each second; the check itself at most once a second, after the
        // session's (a lock is never put off).
        if !isLocked, let f = databaseFile, now.timeIntervalSince(lastStat) >= 0.05 {
            lastStat = now
            let s = FileStamp(f)
            if s != stamp { stamp = s; refreshDue = true }
            if refreshDue && now.timeIntervalSince(lastRefresh) >= 1 {
                refreshDue = false; lastRefresh = now
                return .changedBeside
            }
        }
        return nil
    }

    /// The session, once a second: locked, or unlocked again.
    private func checkSession(_ now: Date) -> Change? {
        guard now.timeIntervalSince(lastCheck) >= 1 else { return nil }
        lastCheck = now
        do {
            try reopener.check(touch: false)
            if isLocked { isLocked = false; refreshDue = true; return .unlocked }
        } catch {
            if !isLocked {
                log("the vault locked: \((error as? VaultError)?.kind.rawValue ?? "session check failed"); the mount serves nothing until `vault unlock`")
                lock(); lockedDuringRequest = false
                return .locked
            }
        }
        return nil
    }

    /// A burst holds the vault open (the loop then wakes sooner, to release it).
    var isOpen: Bool { opened != nil }

    /// Closes the vault now (the lock file is released).
    func close() { opened = nil }

    /// The check of a change could not run (the vault was busy): it runs at a later wake-up.
    func refreshLater() { refreshDue = true }
}

/// What a stat of a file says of its last change: any write moves it (SQLite's rollback
/// journal writes the database file at each commit).
struct FileStamp: Equatable {
    var ino: UInt64, size: Int64, mtime: timespec, ctime: timespec

    init?(_ path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        ino = UInt64(st.st_ino); size = Int64(st.st_size); mtime = st.st_mtim; ctime = st.st_ctim
    }

    static func == (a: FileStamp, b: FileStamp) -> Bool {
        a.ino == b.ino && a.size == b.size && a.mtime.tv_sec == b.mtime.tv_sec && a.mtime.tv_nsec == b.mtime.tv_nsec
            && a.ctime.tv_sec == b.ctime.tv_sec && a.ctime.tv_nsec == b.ctime.tv_nsec
    }
}
