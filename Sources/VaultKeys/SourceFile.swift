import Foundation
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// A local file opened for reading without ever blocking in `open()`: its type is checked with
/// `lstat`/`stat` first, it is opened `O_NONBLOCK` (a FIFO without a writer cannot hang the
/// command), the opened descriptor is checked again with `fstat` (the path may have been swapped
/// meanwhile), and only then is `O_NONBLOCK` cleared. Open sources before taking the vault lock,
/// so a source that cannot be read never holds the vault.
///
/// The descriptor is closed when the value is released.
public final class SourceFile {
    /// The file types a caller accepts.
    public struct Kinds: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// A regular file (content to import, a bundle).
        public static let regular = Kinds(rawValue: 1)
        /// A FIFO or pipe (`--password-file <(…)`, `/dev/stdin` from a pipe).
        public static let pipe = Kinds(rawValue: 2)
    }

    public let path: String
    public let fd: Int32
    /// True for a regular file (size and change detection apply).
    public let isRegular: Bool
    /// The size when it was opened (regular files).
    public let size: UInt64
    private let modified: timespec

    /// Opens `path` for reading; throws a `VaultError` that names the problem (missing, a
    /// dangling symbolic link, a folder, a FIFO, a socket, a device, unreadable).
    /// - Parameters:
    ///   - what: how the file is named in messages ("the password file").
    ///   - folderHint: the hint when `path` is a folder (e.g. "use `vault put -r`").
    public convenience init(_ path: String, accepting kinds: Kinds, what: String = "", folderHint: String? = nil) throws {
        let named = what.isEmpty ? DisplayText.escaped(path) : "\(what) \(DisplayText.escaped(path))"
        var st = stat()
        guard lstat(path, &st) == 0 else { throw Self.openError(errno, named) }
        if (st.st_mode & S_IFMT) == S_IFLNK {
            guard stat(path, &st) == 0 else {
                if errno == ENOENT { throw VaultError(.notFound, "\(named) is a symbolic link to a file that does not exist") }
                throw Self.openError(errno, named)
            }
        }
        try Self.check(st.st_mode, kinds, named, folderHint)
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.openError(errno, named) }
        try self.init(path, opened: fd, accepting: kinds, named: named, folderHint: folderHint, blocking: true)
    }

    /// Opens `path`, which a scan found to be a regular file, in two system calls (no `lstat`,
    /// no flag changes): a symbolic link put there since is refused (`O_NOFOLLOW`), and any other
    /// kind of file once opened (`O_NONBLOCK`: a FIFO does not block the open) — the same
    /// `VaultError`s as `init(_:accepting:)`.
    public convenience init(regularFileAt path: String) throws {
        let named = DisplayText.escaped(path)
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ELOOP { throw VaultError(.usage, "\(named) is a symbolic link, not a regular file") }
            throw Self.openError(errno, named)
        }
        // O_NONBLOCK stays: it changes nothing for a regular file.
        try self.init(path, opened: fd, accepting: .regular, named: named, folderHint: nil, blocking: false)
    }

    /// Takes `fd`, just opened `O_NONBLOCK` from `path`: checks what it is with `fstat` (the path
    /// may have been swapped since it was checked), clears `O_NONBLOCK` when `blocking`, and
    /// closes it on any error.
    private init(_ path: String, opened fd: Int32, accepting kinds: Kinds, named: String, folderHint: String?, blocking: Bool) throws {
        var now = stat()
        do {
            guard fstat(fd, &now) == 0 else { throw Self.openError(errno, named) }
            try Self.check(now.st_mode, kinds, named, folderHint)
            if blocking {
                let flags = fcntl(fd, F_GETFL)
                guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else { throw Self.openError(errno, named) }
            }
        } catch {
            close(fd)
            throw error
        }
        self.path = path
        self.fd = fd
        isRegular = (now.st_mode & S_IFMT) == S_IFREG
        size = UInt64(max(0, now.st_size))
        modified = now.st_mtim
    }

    deinit { close(fd) }

    /// Reads into `buffer`, retrying EINTR; 0 at the end of the file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        do { return try POSIXIO.read(fd, into: buffer) } catch {
            throw VaultError(.io, "read of \(DisplayText.escaped(path)) failed: \(error)")
        }
    }

    /// The whole content, refused when longer than `limit` bytes (for small files: keys, policies).
    public func readAll(limit: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = try chunk.withUnsafeMutableBytes { try read(into: $0) }
            if n == 0 { return out }
            out += chunk[0..<n]
            if out.count > limit {
                throw VaultError(.usage, "\(DisplayText.escaped(path)) is larger than \(limit) bytes; it is not the file expected here")
            }
        }
    }

    /// Throws "changed while reading" (`.conflict`) when a regular file's size or modification
    /// time differs from when it was opened, or `bytesRead` is not its size.
    public func checkUnchanged(bytesRead: UInt64) throws {
        guard isRegular else { return }
        var st = stat()
        let same = fstat(fd, &st) == 0 && UInt64(max(0, st.st_size)) == size && bytesRead == size
            && st.st_mtim.tv_sec == modified.tv_sec && st.st_mtim.tv_nsec == modified.tv_nsec
        if !same { throw Self.changed(path) }
    }

    /// The error for a file that changed while it was read (as tar says it).
    public static func changed(_ path: String) -> VaultError {
        VaultError(.conflict, "\(DisplayText.escaped(path)) changed while reading; nothing of it was stored",
                   hint: "run the command again once the file is no longer being written")
    }

    /// A file type in words.
    public static func describe(mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFLNK: return "a symbolic link"
        default: return "not a regular file"
        }
    }

    private static func check(_ mode: mode_t, _ kinds: Kinds, _ named: String, _ folderHint: String?) throws {
        let type = mode & S_IFMT
        if type == S_IFREG && kinds.contains(.regular) { return }
        if type == S_IFIFO && kinds.contains(.pipe) { return }
        let wanted = kinds.contains(.pipe) ? "a regular file or a pipe" : "a regular file"
        throw VaultError(.usage, "\(named) is \(describe(mode: mode)), not \(wanted)",
                         hint: type == S_IFDIR ? folderHint : nil)
    }

    private static func openError(_ e: Int32, _ named: String) -> VaultError {
        switch e {
        case ENOENT, ENOTDIR: return VaultError(.notFound, "\(named) does not exist")
        case EACCES, EPERM: return VaultError(.io, "cannot read \(named): \(POSIX.errnoMessage(e))",
                                              hint: "check the file's permissions")
        default: return VaultError(.io, "cannot open \(named): \(POSIX.errnoMessage(e))")
        }
    }
}

/// A failure of the file being read (unreadable, changed while reading), as opposed to one of
/// the vault: a folder import skips the file and goes on.
public struct SourceProblem: Error, Sendable {
    public let error: VaultError
    public init(_ error: VaultError) { self.error = error }
}

extension SourceProblem: VaultErrorConvertible {
    public var vaultError: VaultError { error }
}
