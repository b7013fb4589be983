import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Thin typed helpers over the POSIX calls the vault needs (permissions, fsync, statvfs).
enum POSIX {
    static func errnoMessage(_ e: Int32 = errno) -> String { String(cString: strerror(e)) }

    /// Creates `path` (and parents) with mode 0700 if missing, and enforces 0700.
    static func ensurePrivateDirectory(_ path: String) throws {
        var isDir: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw VaultError(.io, "cannot create folder \(path): \(error.localizedDescription)")
            }
        } else if !isDir.boolValue {
            throw VaultError(.io, "\(path) exists and is not a folder")
        }
        if chmod(path, 0o700) != 0 {
            throw VaultError(.io, "cannot set permissions on \(path): \(errnoMessage())")
        }
    }

    /// Fails when `path` can be written (or, for secrets, read) by group or others.
    static func checkPrivate(_ path: String) throws {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        if st.st_mode & 0o022 != 0 {
            throw VaultError(.insecure, "\(path) is writable by other users (mode \(String(st.st_mode & 0o777, radix: 8)))",
                             hint: "chmod go-w '\(path)' after checking nobody tampered with it")
        }
        if st.st_uid != getuid() {
            throw VaultError(.insecure, "\(path) is owned by another user (uid \(st.st_uid))")
        }
    }

    static func fsyncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw VaultError(.io, "cannot open folder \(path): \(errnoMessage())") }
        defer { close(fd) }
        if fsync(fd) != 0 { throw VaultError(.io, "fsync of \(path) failed: \(errnoMessage())") }
    }

    /// Writes `bytes` to `path` atomically: a 0600 temp file beside it, fsync, rename, fsync of the folder.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        let tmp = path + ".tmp-\(getpid())"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VaultError(.io, "cannot write \(tmp): \(errnoMessage())") }
        var ok = false
        defer { if !ok { unlink(tmp) } }
        try writeAll(fd: fd, bytes, path: tmp)
        if fsync(fd) != 0 { let e = errno; close(fd); throw mapWriteError(e, path: tmp) }
        close(fd)
        if rename(tmp, path) != 0 { throw VaultError(.io, "cannot replace \(path): \(errnoMessage())") }
        ok = true
        try fsyncDirectory(dir)
    }

    static func writeAll(fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { try writeAll(fd: fd, $0, path: path) }
    }

    static func writeAll(fd: Int32, _ buf: UnsafeRawBufferPointer, path: String) throws {
        var off = 0
        while off < buf.count {
            let n = write(fd, buf.baseAddress! + off, buf.count - off)
            if n < 0 {
                if errno == EINTR { continue }
                throw mapWriteError(errno, path: path)
            }
            off += n
        }
    }

    static func mapWriteError(_ e: Int32, path: String) -> VaultError {
        if e == ENOSPC || e == EDQUOT {
            return VaultError(.noSpace, "the disk is full while writing \(path)", hint: "free some space, then try again; nothing was changed")
        }
        return VaultError(.io, "write to \(path) failed: \(errnoMessage(e))")
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw VaultError(.notFound, "\(path) does not exist") }
            throw VaultError(.io, "cannot read \(path): \(errnoMessage())")
        }
        defer { close(fd) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw VaultError(.io, "read of \(path) failed: \(errnoMessage())") }
            if n == 0 { break }
            out.append(contentsOf: buf[0..<n])
        }
        return out
    }

    /// Bytes available to this user on the filesystem holding `path`.
    static func freeBytes(at path: String) -> UInt64? {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return nil }
        return UInt64(s.f_bavail) * UInt64(s.f_frsize)
    }

    static func fileSize(_ path: String) -> UInt64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return UInt64(st.st_size)
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
