import Dispatch
import Foundation
import VaultCore
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// `vault sync --watch`: a sync, then one more on every change the server announces on its push
/// channel, until Ctrl-C (or SIGTERM). The vault is open only while a sync runs, so other
/// commands work in between; a signal during a sync lets it finish its transaction-safe steps.
extension VaultCommandLine {
    static func runWatch(_ ctx: CommandContext, _ a: Arguments, _ options: SyncOptions) throws {
        let stop = StopSignal()
        var watch: EventWatch?
        var cursor: Int64?
        var syncs = 0
        func syncNow() throws {
            let vault = try ctx.openVault(lock: .sync)
            let report = try syncOnce(ctx, vault, a, options)
            syncs += 1
            if ctx.out.json { try ctx.out.emit(report) } else { describe(ctx, report) }
            if watch == nil { watch = try EventWatch(vault: vault, policy: ctx.policy, say: { ctx.out.note($0) }, warn: { ctx.out.warn($0) }) }
            cursor = try vault.syncState([.changesCursor])[.changesCursor].flatMap { Int64($0) }
        }
        try syncNow()
        if !ctx.out.json { ctx.out.note("Watching for changes on the server (Ctrl-C stops).") }
        while !stop.requested, let w = watch {
            switch try w.next(after: cursor, shouldStop: { stop.requested }) {
            case .stopped: break
            case .changed: try syncNow()
            }
        }
        if !ctx.out.json { ctx.out.note("Stopped watching after \(syncs) sync(s).") }
    }
}

/// SIGINT and SIGTERM, caught by a dispatch signal source (never an abrupt exit in the middle of
/// a transaction): `requested` turns true and the watch loop stops at its next safe point.
final class StopSignal: @unchecked Sendable {
    // SAFETY: `sources` is only set in init and kept alive here; the flag is atomic.
    private let flag = Flag()
    private let sources: [DispatchSourceSignal]

    init() {
        let flag = self.flag
        sources = [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { flag.raise() }
            s.resume()
            return s
        }
    }

    var requested: Bool { flag.isRaised }
}

/// A boolean raised once, read from any thread.
private final class Flag: @unchecked Sendable {
    // SAFETY: `raised` is only touched with `lock` held.
    private let lock = NSLock()
    private var raised = false
    func raise() { lock.lock(); raised = true; lock.unlock() }
    var isRaised: Bool { lock.lock(); defer { lock.unlock() }; return raised }
}
