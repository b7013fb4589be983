import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An errno-carrying failure of a file-system call, with the operation and path.
struct FileSystemError: Error, CustomStringConvertible {
    let operation: String
    let path: String
    let errno: Int32
    var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
}

/// An open file descriptor, closed on deinit. Raw POSIX calls with EINTR retried.
final class POSIXFile {
    private(set) var fd: Int32
    let path: String

    /// Opens `path` with `flags` (`O_CREAT` files get mode 0600).
    init(path: String, flags: Int32) throws {
        var fd: Int32
        repeat { fd = open(path, flags | O_CLOEXEC, 0o600) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw FileSystemError(operation: "open", path: path, errno: errno) }
        self.fd = fd; self.path = path
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Gives up ownership of the descriptor (e.g. to libmicrohttpd, which closes it).
    func release() -> Int32 { let f = fd; fd = -1; return f }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(operation: "write", path: path, errno: errno)
            }
            done += n
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; 0 at end of file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        while true {
            let n = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno != EINTR { throw FileSystemError(operation: "read", path: path, errno: errno) }
        }
    }

    func sync() throws {
        guard fsync(fd) == 0 else { throw FileSystemError(operation: "fsync", path: path, errno: errno) }
    }

    func truncate(to size: Int64) throws {
        guard ftruncate(fd, off_t(size)) == 0 else {
            throw FileSystemError(operation: "truncate", path: path, errno: errno)
        }
    }

    var size: Int64 {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int64(st.st_size) : 0
    }
}

/// Directory and path operations for the content store.
enum FS {
    /// Creates `path` (mode 0700) if missing.
    static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw FileSystemError(operation: "mkdir", path: path, errno: errno)
        }
    }

    /// fsyncs a directory so a rename in it is durable.
    static func syncDirectory(_ path: String) throws {
        let f = try POSIXFile(path: path, flags: O_RDONLY | O_DIRECTORY)
        try f.sync()
    }

    static func rename(_ from: String, _ to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw FileSystemError(operation: "rename", path: from, errno: errno) }
    }

    /// Hard-links `from` to `to` (the same content under a second name).
    static func link(_ from: String, _ to: String) throws {
        guard Glibc.link(from, to) == 0 else { throw FileSystemError(operation: "link", path: from, errno: errno) }
    }

    static func remove(_ path: String) { unlink(path) }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Names in a directory (no `.`/`..`).
    static func list(_ path: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// Writes a small file crash-safely: temp, fsync, rename, fsync dir; mode 0600.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let tmp = path + ".tmp"
        let f = try POSIXFile(path: tmp, flags: O_WRONLY | O_CREAT | O_TRUNC)
        try bytes.withUnsafeBytes { try f.write($0, at: 0) }
        try f.sync()
        try rename(tmp, path)
        try syncDirectory((path as NSString).deletingLastPathComponent)
    }

    static func readAll(_ path: String) throws -> [UInt8] {
        guard let d = FileManager.default.contents(atPath: path) else {
            throw FileSystemError(operation: "read", path: path, errno: errno == 0 ? ENOENT : errno)
        }
        return [UInt8](d)
    }
}
