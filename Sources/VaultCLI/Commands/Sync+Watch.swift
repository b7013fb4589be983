import Dispatch
import Foundation
import VaultCore
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// `vault sync --watch`: a sync, then one more on every change the server announces on its push
/// channel, until Ctrl-C (or SIGTERM). The vault is open only while a sync runs, so other
/// commands work in between; a signal during a sync lets it finish (every step of a sync is a
/// transaction), then the watch ends.
extension SyncCommand {
    func runWatch(_ ctx: CommandContext) throws {
        let watch = SyncWatch(say: { ctx.out.note($0) }) { refresh in
            // The vault only while the address and token are read (as the agent's listener does).
            let vault = try ctx.openVault(lock: .control, access: .read)
            return try ctx.syncClient(vault).changeEventStream(refreshToken: refresh)
        }
        let stop = StopSignal { watch.stop() }
        var syncs = 0
        func syncNow() throws -> String? {
            try syncOnce(ctx)
            syncs += 1
            let vault = try ctx.openVault(lock: .control, access: .read)
            return try vault.syncState([.changesCursor])[.changesCursor]
        }
        var last = try syncNow()
        ctx.out.note("Watching for changes on the server (Ctrl-C stops).")
        while !stop.requested, let event = try watch.next(after: last) {
            last = try syncNow() ?? event
        }
        ctx.out.note("Stopped watching after \(syncs) sync(s).")
    }
}

/// SIGINT and SIGTERM, caught by a dispatch signal source (never an abrupt exit in the middle of
/// a transaction): `requested` turns true and the watch loop stops at its next safe point.
final class StopSignal: @unchecked Sendable {
    // SAFETY: `sources` is only set in init and kept alive here; the flag is atomic.
    private let flag = Flag()
    private let sources: [DispatchSourceSignal]

    /// - Parameter onStop: called (on another thread) when a signal arrives.
    init(onStop: @escaping @Sendable () -> Void = {}) {
        let flag = self.flag
        sources = [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { flag.raise(); onStop() }
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
