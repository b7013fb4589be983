import Foundation
import VaultPrimitives
internal import CLinuxShims
import VaultKeys
#if canImport(Glibc)
import Glibc
#endif

/// A helper process of the agent (`vault agent work`, `vault agent listen`): the `vault` binary
/// beside `vault-agent`, its standard output read line by line, its exit reported once.
///
/// Children are started from one long-lived thread (`Spawner`), because a child asks the kernel
/// to kill it when the thread that started it ends (`PR_SET_PDEATHSIG`, see
/// `CLinuxShims_die_with_parent`): so they die with the agent, even with `kill -9`, and with it the
/// keys they hold.
final class ChildProcess: @unchecked Sendable {
    // SAFETY: `pid` is immutable; `exited` is written once under `lock`.
    let pid: pid_t
    let name: String
    private let lock = NSLock()
    private var exited = false

    private init(pid: pid_t, name: String) { self.pid = pid; self.name = name }

    /// Starts the helper program with `arguments` (plus `--parent <agent pid>`). Each stdout line
    /// goes to `onLine`, then the exit status (`waitpid` status) to `onExit`, both on `queue`.
    static func start(_ arguments: [String], name: String, spawner: Spawner, queue: DispatchQueue,
                      onLine: @escaping @Sendable (String) -> Void, onExit: @escaping @Sendable (Int32) -> Void) throws -> ChildProcess {
        let (pid, fd) = try spawner.spawn(arguments + ["--parent", String(getpid())])
        let child = ChildProcess(pid: pid, name: name)
        let reader = Thread {
            var pending: [UInt8] = []
            var buf = [UInt8](repeating: 0, count: 4096)
            while true {
                guard let n = try? buf.withUnsafeMutableBytes({ (b) throws(Errno) in try POSIXIO.read(fd, into: b) }), n > 0 else { break }
                pending += buf[0..<n]
                while let nl = pending.firstIndex(of: 10) {
                    let line = String(decoding: pending[..<nl], as: UTF8.self)
                    pending.removeSubrange(...nl)
                    queue.async { onLine(line) }
                }
                if pending.count > 1 << 20 { pending.removeAll() }   // a runaway line is not ours
            }
            close(fd)
            let final = POSIXIO.waitForExit(pid) ?? 0
            child.markExited()
            queue.async { onExit(final) }
        }
        reader.name = "vault-agent-\(name)-reader"
        reader.start()
        return child
    }

    private func markExited() { lock.lock(); exited = true; lock.unlock() }

    /// Sends `signal` unless the child has already been reaped (so a recycled pid is never hit).
    func signal(_ signal: Int32) {
        lock.lock(); defer { lock.unlock() }
        if !exited { kill(pid, signal) }
    }

    /// A `waitpid` status in words.
    static func describe(_ status: Int32) -> String {
        let sig = status & 0x7f
        if sig == 0 { return "exit code \((status >> 8) & 0xff)" }
        return "signal \(sig)"
    }

    /// The exit code, or nil when a signal ended it.
    static func exitCode(_ status: Int32) -> Int32? { status & 0x7f == 0 ? (status >> 8) & 0xff : nil }
}

/// Starts child processes from one thread that lives as long as the agent (see `ChildProcess`).
final class Spawner: @unchecked Sendable {
    // SAFETY: `jobs` is guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    /// The helpers' program: `vault` (the agent itself is `vault-agent`).
    let executable: String

    /// Starts the thread; children run `executable`.
    init(executable: String) {
        self.executable = executable
        let thread = Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job()
            }
        }
        thread.name = "vault-agent-spawner"
        thread.start()
    }

    /// Starts `executable` with `arguments`; returns its pid and the read end of its stdout.
    func spawn(_ arguments: [String]) throws -> (pid_t, Int32) {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        let exe = executable
        condition.lock()
        jobs.append {
            result.value = Result { try Self.spawnNow(exe, arguments) }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        return try result.value!.get()
    }

    private final class ResultBox: @unchecked Sendable {
        // SAFETY: written by the spawner thread before `done.signal()`, read after `done.wait()`.
        var value: Result<(pid_t, Int32), Error>?
    }

    private static func spawnNow(_ exe: String, _ arguments: [String]) throws -> (pid_t, Int32) {
        let argv = ([exe] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        var fd: Int32 = -1
        let rc = CLinuxShims_spawn_reader(exe, argv, &pid, &fd)
        guard rc == 0 else { throw VaultError(.io, "cannot start a helper process: \(String(cString: strerror(rc)))") }
        return (pid, fd)
    }
}
