import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Runs for tests of inputs that used to hang: a watchdog kills the command after a generous
/// bound, so a hang fails the test (`timedOut`) instead of blocking the suite. The bound is a
/// safety net, never asserted as a timing.
extension CLIHarness {
    struct BoundedResult {
        var result: Result
        var timedOut: Bool
    }

    /// Runs `vault args` (through `prefix`, e.g. `setpriv …`, when given) under a watchdog.
    func runBounded(_ args: [String], prefix: [String] = [], env extra: [String: String] = [:],
                    bound: TimeInterval = 60, onStart: (pid_t) -> Void = { _ in }) throws -> BoundedResult {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: prefix.first ?? Self.vaultBinary)
        p.arguments = Array(prefix.dropFirst()) + (prefix.isEmpty ? [] : [Self.vaultBinary]) + args
        p.environment = env.merging(extra) { $1 }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let killed = Box(false)
        let pid = p.processIdentifier
        let watchdog = DispatchWorkItem {
            if p.isRunning { killed.set(true); kill(pid, SIGKILL) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + bound, execute: watchdog)
        onStart(pid)
        let output = readToEnd(stdout: out, stderr: err)
        p.waitUntilExit()
        watchdog.cancel()
        return BoundedResult(result: Result(status: p.terminationStatus, stdout: output.stdout,
                                            stderr: String(decoding: output.stderr, as: UTF8.self)),
                             timedOut: killed.get())
    }

    /// Waits (up to `bound`) until process `pid` has `path` open; false if it never does.
    static func waitUntil(_ pid: pid_t, hasOpen path: String, bound: TimeInterval = 30) -> Bool {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return eventually(within: bound) {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) == target }
        }
    }

    /// Whether process `pid` is gone (or a zombie nobody reaped yet), waiting up to `bound` for it.
    static func processGone(_ pid: pid_t, bound: TimeInterval = 10) -> Bool {
        eventually(within: bound) {
            guard kill(pid, 0) == 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            if let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] == "Z" { return true }
            return false
        }
    }

    /// A prefix that makes root subject to file permissions (no CAP_DAC_OVERRIDE or
    /// CAP_DAC_READ_SEARCH), so a mode-000 file is unreadable as it is for anyone else; none
    /// when not root. Nil when root and `setpriv` is missing.
    static var withoutFileCapabilities: [String]? {
        if getuid() != 0 { return [] }
        let setpriv = "/usr/bin/setpriv"
        guard FileManager.default.isExecutableFile(atPath: setpriv) else { return nil }
        return [setpriv, "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]
    }

    /// Makes a FIFO, a UNIX socket, a dangling symbolic link and an unreadable file (mode 000) in
    /// `dir`; returns their paths by kind.
    func specialFiles(in dir: URL) throws -> [String: String] {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let fifo = dir.appendingPathComponent("a-fifo").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let socket = dir.appendingPathComponent("a-socket").path
        XCTAssertEqual(try runCapture("/usr/bin/python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", socket]).0, 0)
        let dangling = dir.appendingPathComponent("a-dangling-link").path
        XCTAssertEqual(symlink(dir.appendingPathComponent("nowhere").path, dangling), 0)
        let unreadable = dir.appendingPathComponent("an-unreadable-file").path
        try Data("secret".utf8).write(to: URL(fileURLWithPath: unreadable))
        XCTAssertEqual(chmod(unreadable, 0), 0)
        return ["fifo": fifo, "socket": socket, "dangling symlink": dangling, "unreadable file": unreadable]
    }
}
