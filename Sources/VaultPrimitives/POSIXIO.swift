#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes on a file descriptor, the one place where an interrupted call (`EINTR`) is
/// retried and a short write continued. Every other error is returned as a typed `Errno`.
public enum POSIXIO {
    /// Reads up to `buffer.count` bytes; 0 at the end of the input. The C function is `read`.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw .current }
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; 0 at the end of the file. The C function is `pread`.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        while true {
            let n = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno != EINTR { throw .current }
        }
    }

    /// Fills `buffer` from `offset` (or from the current position when nil), stopping early only
    /// at the end of the file; returns how many bytes were read.
    public static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64? = nil) throws(Errno) -> Int {
        var done = 0
        while done < buffer.count {
            let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[done...])
            let n: Int
            if let offset { n = try read(fd, into: rest, at: offset + Int64(done)) } else { n = try read(fd, into: rest) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all of `bytes`, continuing after short writes. The C function is `write`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, base + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw .current
            }
            done += n
        }
    }

    /// Writes all of `bytes` at `offset`, continuing after short writes. The C function is `pwrite`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, base + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw .current
            }
            done += n
        }
    }

    /// `writeAll` of a byte array.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
        let result: Result<Void, Errno> = bytes.withUnsafeBytes { b in
            do throws(Errno) { try writeAll(fd, b); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }

    /// Opens `path` (mode 0600 when `O_CREAT` makes it), close-on-exec, retrying `EINTR`. The C
    /// function is `open`.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(Errno) -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw .current }
        }
    }

    /// Waits for the child `pid` to end and returns its wait status, retrying `EINTR`; nil when it
    /// cannot be waited for (not a child, already reaped). The C function is `waitpid`.
    public static func waitForExit(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        return status
    }
}

/// This process.
public enum CurrentProcess {
    /// The path of the running executable (`/proc/self/exe`), to start it again.
    public static func executablePath() throws(Errno) -> String {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        guard n > 0 else { throw .current }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Replaces this process with `path` (same pid; `arguments` after the program name,
    /// exactly `environment`). Returns only when that fails, with the reason. The C function is
    /// `execve`.
    public static func replace(with path: String, arguments: [String], environment: [String: String]) -> Errno {
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        execve(path, argv, envp)
        return .current
    }
}
