import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive advisory lock (flock) on the vault, held for the life of a command, so two
/// commands never change one vault at once. A second command waits briefly, then fails clearly.
public final class VaultLock {
    private let fd: Int32

    public init(path: String, timeout: TimeInterval) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VaultError(.io, "cannot open lock \(path): \(POSIX.errnoMessage())") }
        let deadline = Date().addingTimeInterval(timeout)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno != EWOULDBLOCK && errno != EINTR {
                close(fd); throw VaultError(.io, "cannot lock \(path): \(POSIX.errnoMessage())")
            }
            if Date() >= deadline {
                var buf = [UInt8](repeating: 0, count: 32)
                let n = pread(fd, &buf, 31, 0)
                let holder = n > 0 ? String(decoding: buf[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "?"
                close(fd)
                throw VaultError(.busy, "another vault command (pid \(holder)) is using this vault",
                                 hint: "wait for it to finish, then try again")
            }
            usleep(50_000)
        }
        self.fd = fd
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    deinit {
        _ = ftruncate(fd, 0)
        flock(fd, LOCK_UN)
        close(fd)
    }
}
