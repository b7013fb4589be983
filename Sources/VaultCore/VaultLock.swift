import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The vault's advisory locks (flock), held for the life of a command, so two commands never
/// change one vault at once. A second command waits briefly, then fails clearly.
///
/// Two files: `lock` (every command but a transfer control holds it exclusively) and
/// `lock.transfers` (exclusive for ordinary commands, shared for a sync). A transfer control
/// (`vault transfers`, `pause`, `cancel`) that finds `lock` taken may still run *beside* a sync,
/// with `lock.transfers` shared: a sync never swaps the database or the keys, and the control only
/// reads the transfer list or marks outbox entries, which the running sync then obeys.
///
/// On a read-only filesystem the lock files cannot be opened for writing; they are opened
/// `O_RDONLY` (flock works on such descriptors) and both are taken *shared*: nothing there can
/// change the vault, so reading commands may run side by side (mode `.readOnly`).
public final class VaultLock {
    /// What a command asks for.
    public enum Request: Sendable {
        /// Alone with the vault (most commands).
        case exclusive
        /// Alone, but transfer controls may run beside it (`vault sync`, downloads).
        case sync
        /// Alone when the vault is free, else beside a running sync.
        case control
    }

    /// What a command got.
    public enum Mode: Sendable, Equatable {
        case exclusive, sync
        /// Beside a running sync: only transfer bookkeeping may be touched.
        case beside
        /// The vault is on a read-only filesystem: both locks shared, nothing may be written.
        case readOnly
    }

    public let mode: Mode
    private let main: Int32
    private let transfers: Int32

    public init(path: String, timeout: TimeInterval, request: Request = .exclusive) throws {
        var readOnly = false
        let main = try Self.openLockFile(path, readOnly: &readOnly)
        let transfers: Int32
        do { transfers = try Self.openLockFile(path + ".transfers", readOnly: &readOnly) } catch { Self.close(main); throw error }
        let deadline = Date().addingTimeInterval(timeout)
        if readOnly {
            // Nothing on a read-only filesystem can change the vault: every command shares it.
            for fd in [main, transfers] where fd >= 0 {
                while flock(fd, LOCK_SH | LOCK_NB) != 0 {
                    if errno != EWOULDBLOCK && errno != EINTR {
                        let message = POSIX.errnoMessage()
                        Self.close(main); Self.close(transfers)
                        throw VaultError(.io, "cannot lock \(path): \(message)")
                    }
                    if Date() >= deadline { throw Self.busy(main, transfers) }
                    usleep(50_000)
                }
            }
            self.main = main
            self.transfers = transfers
            self.mode = .readOnly
            return
        }
        var mode: Mode?
        while mode == nil {
            if flock(main, LOCK_EX | LOCK_NB) == 0 {
                // Ours alone; wait for any control still beside the previous sync.
                let op = request == .sync ? LOCK_SH : LOCK_EX
                while flock(transfers, op | LOCK_NB) != 0 {
                    if Date() >= deadline { throw Self.busy(main, transfers) }
                    usleep(20_000)
                }
                mode = request == .sync ? .sync : .exclusive
            } else if request == .control && flock(transfers, LOCK_SH | LOCK_NB) == 0 {
                // `lock` is held and `lock.transfers` is shared: a sync runs (or the vault was just freed).
                if flock(main, LOCK_EX | LOCK_NB) == 0 {
                    flock(transfers, LOCK_UN)
                    continue
                }
                mode = .beside
            } else {
                if errno != EWOULDBLOCK && errno != EINTR {
                    Self.close(main); Self.close(transfers)
                    throw VaultError(.io, "cannot lock \(path): \(POSIX.errnoMessage())")
                }
                if Date() >= deadline { throw Self.busy(main, transfers) }
                usleep(50_000)
            }
        }
        self.main = main
        self.transfers = transfers
        self.mode = mode!
        if self.mode != .beside {
            let pid = Array("\(getpid())\n".utf8)
            _ = ftruncate(main, 0)
            _ = pid.withUnsafeBytes { pwrite(main, $0.baseAddress, $0.count, 0) }
        }
    }

    /// Opens (creating) a lock file for writing; on a read-only filesystem (EROFS) opens it
    /// read-only instead and sets `readOnly`. A lock file missing from a read-only filesystem gives
    /// -1 (no lock is needed where nothing can change).
    private static func openLockFile(_ path: String, readOnly: inout Bool) throws -> Int32 {
        if !readOnly {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            if fd >= 0 { return fd }
            guard errno == EROFS else { throw VaultError(.io, "cannot open lock \(path): \(POSIX.errnoMessage())") }
            readOnly = true
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { return fd }
        if errno == ENOENT { return -1 }
        throw VaultError(.io, "cannot open lock \(path): \(POSIX.errnoMessage())")
    }

    private static func close(_ fd: Int32) { if fd >= 0 { Glibc.close(fd) } }

    /// Closes both files and says who holds the vault.
    private static func busy(_ main: Int32, _ transfers: Int32) -> VaultError {
        var buf = [UInt8](repeating: 0, count: 32)
        let n = main >= 0 ? pread(main, &buf, 31, 0) : 0
        let holder = n > 0 ? String(decoding: buf[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "?"
        // `lock.transfers` free to share while `lock` is held: the holder is a sync or a download.
        let syncing = transfers >= 0 && flock(transfers, LOCK_SH | LOCK_NB) == 0
        close(main); close(transfers)
        if syncing {
            return VaultError(.busy, "a `vault sync` or download (pid \(holder)) is using this vault",
                              hint: "`vault transfers` shows its progress (and can pause an upload); `ls` and `tree` work meanwhile; try again when it is done")
        }
        return VaultError(.busy, "another vault command (pid \(holder)) is using this vault",
                          hint: "wait for it to finish, then try again")
    }

    deinit {
        if mode != .beside && mode != .readOnly { _ = ftruncate(main, 0) }
        for fd in [transfers, main] where fd >= 0 {
            flock(fd, LOCK_UN)
            Self.close(fd)
        }
    }
}
