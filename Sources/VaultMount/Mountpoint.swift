import Foundation
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// Mountpoint housekeeping for the CLI.
public enum Mountpoint {
    /// True when `path` is a FUSE mount whose process is gone (stat or statvfs fails with
    /// ENOTCONN: statvfs always asks the mount, where stat may be answered from the kernel's cache).
    public static func isStale(_ path: String) -> Bool {
        var st = stat()
        if stat(path, &st) != 0 && errno == ENOTCONN { return true }
        var fs = statvfs()
        return statvfs(path, &fs) != 0 && errno == ENOTCONN
    }

    /// True when `path` is a mountpoint (another filesystem than its parent's, or stale).
    public static func isMounted(_ path: String) -> Bool {
        if isStale(path) { return true }
        var st = stat(), parent = stat()
        guard stat(path, &st) == 0, stat(path + "/..", &parent) == 0 else { return false }
        return st.st_dev != parent.st_dev
    }

    /// Unmounts `path` with `fusermount3 -u` (`lazy`: -z, detaching a stale or busy mount).
    /// - Throws: `.io` with fusermount3's reason when it fails.
    public static func unmount(_ path: String, lazy: Bool) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/fusermount3")
        p.arguments = lazy ? ["-u", "-z", path] : ["-u", path]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        do { try p.run() } catch {
            throw VaultError(.io, "cannot run fusermount3: \(error)", hint: "install fuse3 (Debian: apt-get install fuse3)")
        }
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            let reason = said.trimmingCharacters(in: .whitespacesAndNewlines)
            throw VaultError(.io, "cannot unmount \(path): \(reason.isEmpty ? "fusermount3 failed" : reason)",
                             hint: reason.contains("busy") ? "close the programs that have files open there, or `fusermount3 -uz` to detach it" : nil)
        }
    }
}
