import Foundation
import VaultCore

/// The texts of the status bar, from plain values.
public enum StatusText {
    /// `pinned 1.0 MiB  cached 3.0 MiB  staged 0 B  free 9.8 GiB  budget none`.
    public static func storage(_ r: StorageReport) -> String {
        "pinned \(ByteCount.format(r.pinnedBytes))  cached \(ByteCount.format(r.cachedBytes))  "
            + "staged \(ByteCount.format(r.stagedBytes))  free \(ByteCount.format(r.freeBytes))  "
            + "budget \(r.budgetBytes.map(ByteCount.format) ?? "none")"
    }

    /// Unfinished transfers in a few words: `up 1 45%  down 2 10%  3 waiting  1 failed`, or
    /// `no transfers`. Each running direction shows its overall percentage.
    public static func transfers(_ list: [TransferSummary]) -> String {
        var parts: [String] = []
        for upload in [true, false] {
            let running = list.filter { $0.upload == upload && $0.running }
            guard !running.isEmpty else { continue }
            let done = running.reduce(Int64(0)) { $0 + max(0, $1.bytesDone) }
            let total = running.reduce(Int64(0)) { $0 + max(0, $1.bytesTotal) }
            let pct = total > 0 ? min(100, done * 100 / total) : 0
            parts.append("\(upload ? "up" : "down") \(running.count) \(pct)%")
        }
        let waiting = list.filter { !$0.running && !$0.failed }.count
        let failed = list.filter { $0.failed }.count
        if waiting > 0 { parts.append("\(waiting) waiting") }
        if failed > 0 { parts.append("\(failed) failed") }
        return parts.isEmpty ? "no transfers" : parts.joined(separator: "  ")
    }

    /// The lock state: `unlocked, locks in 14m 32s (idle)`, `unlocked, no auto-lock`; with the
    /// key held by this process (no keyring session) it says so.
    public static func session(_ deadlines: VaultReopener.Deadlines, heldHere: Bool, now: Int64) -> String {
        let who = heldHere ? "unlocked (key held by this browser)" : "unlocked"
        let soonest: (at: Int64, why: String)?
        switch (deadlines.idle, deadlines.absolute) {
        case let (i?, a?): soonest = i <= a ? (i, "idle") : (a, "limit")
        case let (i?, nil): soonest = (i, "idle")
        case let (nil, a?): soonest = (a, "limit")
        case (nil, nil): soonest = nil
        }
        guard let soonest else { return who + ", no auto-lock" }
        return who + ", locks in \(countdown(soonest.at - now)) (\(soonest.why))"
    }

    /// `conflicts: 3`: what syncs settled that `vault conflicts` lists until cleared (nothing when none).
    public static func conflicts(_ n: Int) -> String? { n > 0 ? "conflicts: \(n)" : nil }

    /// `2h 05m`, `14m 32s`, `45s`, `0s`.
    public static func countdown(_ seconds: Int64) -> String {
        let s = max(0, seconds)
        if s >= 3600 { return "\(s / 3600)h " + twoDigits((s % 3600) / 60) + "m" }
        if s >= 60 { return "\(s / 60)m " + twoDigits(s % 60) + "s" }
        return "\(s)s"
    }

    private static func twoDigits(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }

    /// A date as the list shows it (`2024-05-01 13:45`, in `timeZone`).
    public static func date(_ secondsSinceEpoch: Int64, timeZone: TimeZone = .current) -> String {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = timeZone
        let c = cal.dateComponents([.year, .month, .day, .hour, .minute],
                                   from: Date(timeIntervalSince1970: TimeInterval(secondsSinceEpoch)))
        func d2(_ v: Int?) -> String { twoDigits(Int64(v ?? 0)) }
        return "\(c.year ?? 0)-\(d2(c.month))-\(d2(c.day)) \(d2(c.hour)):\(d2(c.minute))"
    }
}

/// One unfinished transfer, for the status bar.
public struct TransferSummary: Equatable, Sendable {
    public var upload: Bool
    /// Moving bytes now (not queued, paused, interrupted or waiting to retry).
    public var running: Bool
    /// Given up on (it needs the user).
    public var failed: Bool
    public var bytesDone: Int64
    public var bytesTotal: Int64

    public init(upload: Bool, running: Bool, failed: Bool, bytesDone: Int64, bytesTotal: Int64) {
        self.upload = upload; self.running = running; self.failed = failed
        self.bytesDone = bytesDone; self.bytesTotal = bytesTotal
    }
}
