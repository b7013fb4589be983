import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Unmounting for the mount tests: every test unmounts what it mounted in its teardown, and a run
/// that was killed before its teardown (a hung test stopped from outside) leaves a dead mount that
/// the next run removes before it starts.
enum FuseMounts {
    /// Whether the mount tests can run here.
    static var available: Bool {
        FileManager.default.fileExists(atPath: "/dev/fuse") && FileManager.default.isExecutableFile(atPath: "/bin/fusermount3")
    }

    /// Detaches the mount at `path` (lazily, so a busy or dead mount goes too); no error when
    /// nothing is mounted there.
    static func unmount(_ path: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/fusermount3")
        p.arguments = ["-u", "-z", path]
        p.standardError = FileHandle.nullDevice
        try? p.run()
        p.waitUntilExit()
    }

    /// Detaches every `vault` mount under the temporary folder whose process is gone (its
    /// mountpoint answers ENOTCONN): left by a test run that was killed. Live mounts (another run's)
    /// are left alone.
    static func removeDead() {
        guard let table = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return }
        let tmp = FileManager.default.temporaryDirectory.path
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 2, fields[2] == "fuse.vault" else { continue }
            // /proc/mounts escapes spaces and other bytes as octal (\040).
            let path = String(fields[1]).replacingOccurrences(of: "\\040", with: " ")
            guard path.hasPrefix(tmp) else { continue }
            var st = stat()
            if stat(path, &st) != 0 && errno == ENOTCONN { unmount(path) }
        }
    }
}
