import Foundation
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Thin typed helpers over the POSIX calls the vault needs (permissions, fsync, statvfs).
package enum POSIX {
    package static func errnoMessage(_ e: Int32 = errno) -> String { String(cString: strerror(e)) }

    /// Creates `path` (and parents) with mode 0700 if missing, and enforces 0700.
    package static func ensurePrivateDirectory(_ path: String) throws {
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
    package static func checkPrivate(_ path: String) throws {
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

    package static func fsyncDirectory(_ path: String) throws {
        do { try FileSystem.syncDirectory(path) } catch { throw VaultError(error) }
    }

    /// Writes `bytes` to `path` atomically: a 0600 temp file beside it, fsync, rename, fsync of the folder.
    package static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        do { try FileSystem.writeAtomically(bytes, to: path, temporarySuffix: ".tmp-\(getpid())") } catch { throw VaultError(error) }
    }

    package static func writeAll(fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { try writeAll(fd: fd, $0, path: path) }
    }

    package static func writeAll(fd: Int32, _ buf: UnsafeRawBufferPointer, path: String) throws {
        do { try POSIXIO.writeAll(fd, buf) } catch { throw mapWriteError(error.rawValue, path: path) }
    }

    package static func mapWriteError(_ e: Int32, path: String) -> VaultError {
        if Errno(rawValue: e).isNoSpace {
            return VaultError(.noSpace, "the disk is full while writing \(path)", hint: "free some space, then try again; nothing was changed")
        }
        return VaultError(.io, "write to \(path) failed: \(errnoMessage(e))")
    }

    package static func readFile(_ path: String) throws -> [UInt8] {
        do { return try FileSystem.readAll(path) } catch { throw VaultError(error) }
    }

    /// Bytes available to this user on the filesystem holding `path`.
    package static func freeBytes(at path: String) -> UInt64? {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return nil }
        return UInt64(s.f_bavail) * UInt64(s.f_frsize)
    }

    package static func fileSize(_ path: String) -> UInt64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return UInt64(st.st_size)
    }

    package static func exists(_ path: String) -> Bool { FileSystem.exists(path) }
}

extension VaultError {
    /// A failed file-system call as the vault reports it: a full disk is `.noSpace`, a missing
    /// file `.notFound`, anything else `.io`, each naming the operation and the path.
    package init(_ e: FileSystemError) {
        if e.errno.isNoSpace {
            self.init(.noSpace, "the disk is full while writing \(e.path)", hint: "free some space, then try again; nothing was changed")
        } else if e.errno == .noEntry {
            self.init(.notFound, "\(e.path) does not exist")
        } else {
            self.init(.io, "cannot \(e.operation) \(e.path): \(e.errno)")
        }
    }
}
