import Foundation
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// One mount per vault: `mount.lock` (0600) in the vault's folder, held with `flock` by the
/// mount's process for its lifetime (released when it ends, even by `kill -9`), naming the
/// mountpoint it serves.
public final class MountLock {
    private let fd: Int32

    /// Takes the lock for a mount at `mountpoint`.
    /// - Throws: `.busy` naming the other mountpoint when this vault is mounted already; `.io`.
    public init(vaultRoot: String, mountpoint: String) throws {
        let path = vaultRoot + "/mount.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VaultError(.io, "cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var buf = [UInt8](repeating: 0, count: 4096)
            let n = pread(fd, &buf, buf.count, 0)
            close(fd)
            let other = String(decoding: buf.prefix(max(0, n)), as: UTF8.self)
            throw VaultError(.busy, "this vault is mounted already\(other.isEmpty ? "" : " at \(other)")",
                             hint: "one mount per vault: `vault unmount \(other.isEmpty ? "MOUNTPOINT" : other)` first")
        }
        _ = ftruncate(fd, 0)
        let bytes = Array(mountpoint.utf8)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    deinit { close(fd) }
}
