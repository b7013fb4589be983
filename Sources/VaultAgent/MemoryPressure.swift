import Foundation
import VaultPrimitives
import VaultKeys
#if canImport(Glibc)
import Glibc
#endif

/// Tells the agent when memory runs short, without polling: a PSI trigger on
/// `/proc/pressure/memory` (the kernel wakes a `poll` for `POLLPRI` when tasks stalled on memory
/// for 150 ms within a 2 s window), or, where there is no PSI, the cgroup's `memory.events`
/// (its `high`, `max`, `oom` or `oom_kill` count went up; the kernel signals a change of that
/// file to inotify). `VAULT_AGENT_MEMORY_EVENTS=<file>` watches that file instead (tests).
final class MemoryPressureWatch: @unchecked Sendable {
    // SAFETY: immutable after init; the watching thread owns its descriptors.
    /// What is watched, for `status`.
    let description: String

    private init(description: String) { self.description = description }

    /// Starts watching on a thread of its own; nil when this system offers no way to.
    static func start(environment: [String: String], log: AgentLog, onPressure: @escaping @Sendable (String) -> Void) -> MemoryPressureWatch? {
        if let path = environment["VAULT_AGENT_MEMORY_EVENTS"], !path.isEmpty {
            return watchEvents(path, onPressure: onPressure, log: log)
        }
        if let watch = watchPSI("/proc/pressure/memory", onPressure: onPressure) { return watch }
        if let path = cgroupEventsFile() { return watchEvents(path, onPressure: onPressure, log: log) }
        return nil
    }

    /// The PSI trigger: `some 150000 2000000` (µs stalled within a window; an unprivileged
    /// trigger's window must be a multiple of 2 s).
    static let psiTrigger = "some 150000 2000000"

    private static func watchPSI(_ path: String, onPressure: @escaping @Sendable (String) -> Void) -> MemoryPressureWatch? {
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let wrote = psiTrigger.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count) }
        guard wrote > 0 else { close(fd); return nil }
        let thread = Thread {
            var p = pollfd(fd: fd, events: Int16(POLLPRI), revents: 0)
            while true {
                p.revents = 0
                let n = poll(&p, 1, -1)
                if n < 0 { if errno == EINTR { continue }; break }
                if p.revents & Int16(POLLERR) != 0 { break }   // the trigger was destroyed
                if p.revents & Int16(POLLPRI) != 0 { onPressure("memory pressure (PSI: \(psiTrigger))") }
            }
            close(fd)
        }
        thread.name = "vault-agent-psi"
        thread.start()
        return MemoryPressureWatch(description: "PSI trigger on \(path) (\(psiTrigger))")
    }

    /// `/sys/fs/cgroup/<our cgroup v2 path>/memory.events`, when the unified hierarchy has one.
    private static func cgroupEventsFile() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            let path = "/sys/fs/cgroup" + line.dropFirst(3) + "/memory.events"
            if access(path, R_OK) == 0 { return path }
        }
        return nil
    }

    /// The counters of a `memory.events` file that mean pressure.
    static func pressureCounts(_ text: String) -> [String: UInt64] {
        var counts: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, ["high", "max", "oom", "oom_kill"].contains(String(parts[0])), let v = UInt64(parts[1]) else { continue }
            counts[String(parts[0])] = v
        }
        return counts
    }

    /// Which counters went up from `old` to `new`, in words (nil: none did).
    static func increase(from old: [String: UInt64], to new: [String: UInt64]) -> String? {
        let up = new.keys.sorted().filter { new[$0]! > old[$0, default: 0] }
        return up.isEmpty ? nil : up.map { "\($0) \(old[$0, default: 0])→\(new[$0]!)" }.joined(separator: ", ")
    }

    private static func watchEvents(_ path: String, onPressure: @escaping @Sendable (String) -> Void, log: AgentLog) -> MemoryPressureWatch? {
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, path, UInt32(IN_MODIFY)) >= 0 else {
            log("cannot watch \(path) for memory pressure: \(String(cString: strerror(errno)))")
            close(fd)
            return nil
        }
        let read: @Sendable () -> [String: UInt64] = { pressureCounts((try? String(contentsOfFile: path, encoding: .utf8)) ?? "") }
        let thread = Thread {
            var last = read()
            var buf = [UInt8](repeating: 0, count: 4096)
            while true {
                guard let n = try? buf.withUnsafeMutableBytes({ (b) throws(Errno) in try POSIXIO.read(fd, into: b) }), n > 0 else { break }
                let now = read()
                if let what = increase(from: last, to: now) { onPressure("memory pressure (\(path): \(what))") }
                last = now
            }
            close(fd)
        }
        thread.name = "vault-agent-memory-events"
        thread.start()
        return MemoryPressureWatch(description: "inotify on \(path)")
    }
}
