import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An open file descriptor, closed on deinit; every call goes through `POSIXIO` and fails with a
/// `FileSystemError` naming the operation and the path.
public final class POSIXFile {
    public private(set) var fd: Int32
    public let path: String

    /// Opens `path` with `flags` (`O_CREAT` files get mode 0600).
    public init(path: String, flags: Int32) throws(FileSystemError) {
        do { fd = try POSIXIO.open(path, flags) } catch { throw FileSystemError(operation: "open", path: path, errno: error) }
        self.path = path
    }

    /// Takes ownership of the open descriptor `fd` (`path` names it in errors).
    public init(adopting fd: Int32, path: String) { self.fd = fd; self.path = path }

    deinit { if fd >= 0 { close(fd) } }

    /// Gives up ownership of the descriptor (e.g. to libmicrohttpd, which closes it).
    public func release() -> Int32 { let f = fd; fd = -1; return f }

    /// Writes all of `bytes` at `offset`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(FileSystemError) {
        do { try POSIXIO.writeAll(fd, bytes, at: offset) } catch { throw fail("write", error) }
    }

    /// Reads up to `buffer.count` bytes at `offset`; 0 at end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(FileSystemError) -> Int {
        do { return try POSIXIO.read(fd, into: buffer, at: offset) } catch { throw fail("read", error) }
    }

    public func sync() throws(FileSystemError) {
        guard fsync(fd) == 0 else { throw fail("fsync", .current) }
    }

    public func truncate(to size: Int64) throws(FileSystemError) {
        guard ftruncate(fd, off_t(size)) == 0 else { throw fail("truncate", .current) }
    }

    /// The file's size now (0 when it cannot be read).
    public var size: Int64 {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int64(st.st_size) : 0
    }

    private func fail(_ operation: String, _ e: Errno) -> FileSystemError {
        FileSystemError(operation: operation, path: path, errno: e)
    }
}

/// Folder and path operations, failing with a `FileSystemError`.
public enum FileSystem {
    /// Creates `path` with `mode` if missing (its parent must exist).
    public static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws(FileSystemError) {
        if mkdir(path, mode) != 0 && errno != EEXIST {
            throw FileSystemError(operation: "mkdir", path: path, errno: .current)
        }
    }

    /// fsyncs a folder so that a rename or a new name in it is durable.
    public static func syncDirectory(_ path: String) throws(FileSystemError) {
        try POSIXFile(path: path, flags: O_RDONLY | O_DIRECTORY).sync()
    }

    public static func rename(_ from: String, _ to: String) throws(FileSystemError) {
        guard Glibc.rename(from, to) == 0 else { throw FileSystemError(operation: "rename", path: from, errno: .current) }
    }

    /// Hard-links `from` to `to` (the same content under a second name).
    public static func link(_ from: String, _ to: String) throws(FileSystemError) {
        guard Glibc.link(from, to) == 0 else { throw FileSystemError(operation: "link", path: from, errno: .current) }
    }

    /// Removes a file; a missing one is no error.
    public static func remove(_ path: String) { unlink(path) }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Names in a folder (no `.`/`..`); empty when it cannot be read.
    public static func list(_ path: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// Writes a small file crash-safely with mode 0600: a temporary file beside it (`path` plus
    /// `temporarySuffix`), fsync, rename over `path`, fsync of the folder. The temporary file is
    /// removed when anything fails.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, temporarySuffix: String = ".tmp") throws(FileSystemError) {
        let tmp = path + temporarySuffix
        var renamed = false
        defer { if !renamed { remove(tmp) } }
        let f = try POSIXFile(path: tmp, flags: O_WRONLY | O_CREAT | O_TRUNC)
        do { try POSIXIO.writeAll(f.fd, bytes) } catch { throw FileSystemError(operation: "write", path: tmp, errno: error) }
        try f.sync()
        try rename(tmp, path)
        renamed = true
        try syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// The whole content of `path` (read in order, so a pipe works too).
    public static func readAll(_ path: String) throws(FileSystemError) -> [UInt8] {
        let f = try POSIXFile(path: path, flags: O_RDONLY)
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let result: Result<Int, Errno> = buf.withUnsafeMutableBytes { b in
                do throws(Errno) { return .success(try POSIXIO.read(f.fd, into: b)) } catch { return .failure(error) }
            }
            let n: Int
            do { n = try result.get() } catch { throw FileSystemError(operation: "read", path: path, errno: error) }
            if n == 0 { return out }
            out.append(contentsOf: buf[0..<n])
        }
    }
}
