import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The agent's log: one line per event on standard error (the journal, under systemd), with a
/// UTC time stamp. Never keys, passwords, tokens or file contents; paths and counts only.
struct AgentLog: Sendable {
    func callAsFunction(_ message: String) {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        var tm = tm()
        var seconds = t.tv_sec
        gmtime_r(&seconds, &tm)
        let stamp = String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                           tm.tm_hour, tm.tm_min, tm.tm_sec, t.tv_nsec / 1_000_000)
        let line = "vault agent \(stamp) \(message.replacingOccurrences(of: "\n", with: " "))\n"
        line.utf8CString.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count - 1) }
    }
}
