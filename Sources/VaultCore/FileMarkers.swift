internal import CLinuxShims
#if canImport(Glibc)
import Glibc
#endif

/// What a filesystem said when asked to set, clear or read one backup marker.
public enum MarkerState: String, Codable, Sendable {
    /// The marker is on the folder.
    case present
    /// The marker is not on the folder.
    case absent
    /// This filesystem cannot hold the marker (e.g. no user xattrs, no inode flags on tmpfs or overlayfs).
    case unsupported
}

/// Typed wrappers over the two non-file markers: the `user.xdg.robots.backup` extended attribute
/// (setxattr(2)) and the nodump inode flag (ioctl FS_IOC_GETFLAGS / FS_IOC_SETFLAGS through the
/// `CLinuxShims` C wrapper, since ioctl is variadic). Each call answers `unsupported` with a
/// reason where the filesystem lacks the feature, and throws only for real failures.
enum FileMarkers {
    static let xattrName = "user.xdg.robots.backup"

    /// errnos meaning "this filesystem does not do that", not "something broke".
    static func isUnsupported(_ e: Int32) -> Bool {
        e == ENOTSUP || e == EOPNOTSUPP || e == ENOTTY || e == EINVAL || e == ENOSYS
    }

    // MARK: user.xdg.robots.backup

    static func xattrState(_ path: String) -> (MarkerState, String?) {
        var buf = [UInt8](repeating: 0, count: 16)
        let n = CLinuxShims_xattr_get(path, xattrName, &buf, buf.count)
        if n >= 0 { return String(decoding: buf[0..<n], as: UTF8.self) == "false" ? (.present, nil) : (.absent, "set to another value") }
        let e = errno
        if e == ENODATA || e == ERANGE { return (.absent, nil) }
        if isUnsupported(e) { return (.unsupported, "this filesystem does not store user extended attributes") }
        return (.absent, "cannot read it: \(POSIX.errnoMessage(e))")
    }

    static func setXattr(_ path: String) throws -> (MarkerState, String?) {
        let value = Array("false".utf8)
        if CLinuxShims_xattr_set(path, xattrName, value, value.count) == 0 { return (.present, nil) }
        let e = errno
        if isUnsupported(e) { return (.unsupported, "this filesystem does not store user extended attributes") }
        throw VaultError(.io, "cannot set \(xattrName) on \(path): \(POSIX.errnoMessage(e))")
    }

    static func removeXattr(_ path: String) throws -> (MarkerState, String?) {
        if CLinuxShims_xattr_remove(path, xattrName) == 0 { return (.absent, nil) }
        let e = errno
        if e == ENODATA { return (.absent, nil) }
        if isUnsupported(e) { return (.unsupported, "this filesystem does not store user extended attributes") }
        throw VaultError(.io, "cannot remove \(xattrName) from \(path): \(POSIX.errnoMessage(e))")
    }

    // MARK: nodump inode flag

    static var nodumpFlag: Int32 { CLinuxShims_fs_nodump_flag() }

    /// Runs `body` with a read-only descriptor of `path` (files and folders alike).
    static func withDescriptor<R>(_ path: String, _ body: (Int32) throws -> R) throws -> R {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard fd >= 0 else { throw VaultError(.io, "cannot open \(path): \(POSIX.errnoMessage())") }
        defer { close(fd) }
        return try body(fd)
    }

    static func nodumpState(_ path: String) -> (MarkerState, String?) {
        (try? withDescriptor(path) { fd -> (MarkerState, String?) in
            var flags: Int32 = 0
            if CLinuxShims_fs_get_flags(fd, &flags) != 0 {
                let e = errno
                return isUnsupported(e) ? (.unsupported, "this filesystem has no inode flags") : (.absent, "cannot read flags: \(POSIX.errnoMessage(e))")
            }
            return (flags & nodumpFlag != 0 ? .present : .absent, nil)
        }) ?? (.absent, "cannot open \(path)")
    }

    /// Sets (`on`) or clears the nodump flag, keeping every other flag as it was.
    static func setNodump(_ path: String, on: Bool) throws -> (MarkerState, String?) {
        try withDescriptor(path) { fd in
            var flags: Int32 = 0
            if CLinuxShims_fs_get_flags(fd, &flags) != 0 {
                let e = errno
                if isUnsupported(e) { return (.unsupported, "this filesystem has no inode flags") }
                throw VaultError(.io, "cannot read the inode flags of \(path): \(POSIX.errnoMessage(e))")
            }
            let wanted = on ? flags | nodumpFlag : flags & ~nodumpFlag
            if wanted == flags { return (on ? .present : .absent, nil) }
            if CLinuxShims_fs_set_flags(fd, wanted) != 0 {
                let e = errno
                if isUnsupported(e) { return (.unsupported, "this filesystem does not support the nodump flag") }
                throw VaultError(.io, "cannot \(on ? "set" : "clear") the nodump flag on \(path): \(POSIX.errnoMessage(e))")
            }
            return (on ? .present : .absent, nil)
        }
    }
}
