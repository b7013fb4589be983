import Foundation
import VaultAgent
import VaultCore
import VaultSync

/// `vault sync`: two-way sync (push, pull, push what the pull produced, pinned downloads), once
/// or, with `--watch`, on every change the server announces.
extension VaultCommandLine {
    static let syncCommand = Command(
        name: "sync", usage: "vault sync [--watch] [--max-delete N] [--force] [--concurrency N] [--allow-metered] [--pinned-only] [--json]",
        summary: "sync both ways: push local changes, pull remote ones (conflicts settled by `vault config conflicts`), download pinned content; --watch keeps syncing on every remote change",
        valued: ["concurrency", "max-delete"], flags: ["allow-metered", "pinned-only", "force", "watch"], run: runTwoWaySync)

    static func runTwoWaySync(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 0)
        if a.flag("pinned-only") {   // what `vault pin` starts in the background: downloads only
            let vault = try ctx.openVault(lock: .sync)
            return try push(ctx, vault, a)
        }
        var o = SyncOptions()
        if let c = a.values["concurrency"] {
            guard let n = Int(c), (1...16).contains(n) else { throw VaultError(.usage, "--concurrency takes a number from 1 to 16") }
            o.concurrency = n
        }
        if let m = a.values["max-delete"] {
            guard let n = Int(m), n >= 0 else { throw VaultError(.usage, "--max-delete takes a number of items (0 or more)") }
            o.maxDelete = n
        }
        o.force = a.flag("force")
        if a.flag("watch") { return try runWatch(ctx, a, o) }
        try syncAndReport(ctx, a, o)
    }

    /// One sync, run by the vault agent when one runs (queued after its own pass), else here.
    static func syncAndReport(_ ctx: CommandContext, _ a: Arguments, _ o: SyncOptions) throws {
        if let agent = ctx.agent() {
            do {
                let r = try agent.sync(WorkOptions(allowMetered: a.flag("allow-metered"), concurrency: o.concurrency, pinnedOnly: false,
                                                   maxDelete: o.maxDelete, force: o.force))
                guard let summary = r.summary else { throw VaultError(.io, "the vault agent's sync pass gave no summary") }
                var report = SyncReport()
                report.push = summary
                report.pull = r.pull ?? PullSummary()
                report.downloaded = summary.downloaded
                report.waitingForUnmetered = summary.waitingForUnmetered
                if ctx.out.json { try ctx.out.emit(report) } else { describe(ctx, report) }
                return
            } catch let e as VaultError where e.kind == .locked && ctx.password.isExplicit {}
        }
        let vault = try ctx.openVault(lock: .sync)   // `vault transfers` (list, pause, cancel) may run beside it
        let report = try syncOnce(ctx, vault, a, o)
        if ctx.out.json { try ctx.out.emit(report) } else { describe(ctx, report) }
    }

    /// One two-way sync of `vault` with the options and the network rules.
    static func syncOnce(_ ctx: CommandContext, _ vault: Vault, _ a: Arguments, _ options: SyncOptions) throws -> SyncReport {
        var o = options
        o.holdLargeFrom = try NetworkCost.largeTransferHold(vault: vault, policy: ctx.policy, allowMetered: a.flag("allow-metered"),
                                                             environment: ctx.environment).holdLargeFrom
        o.conflictPolicy = try SyncClient.conflictPolicy(vault: vault, policy: ctx.policy)
        let bar = ProgressLine(enabled: !ctx.out.json)
        let client = try ctx.syncClient(vault, say: { bar.clear(); if !ctx.out.json { ctx.out.note($0) } })
        client.onProgress = bar.update
        defer { bar.clear() }
        return try client.sync(o)
    }

    static func describe(_ ctx: CommandContext, _ r: SyncReport) {
        let s = r.push
        ctx.out.line("Pushed \(s.done) change(s), pulled \(r.pull.applied) remote change(s)"
                     + (r.pull.removed > 0 ? " (\(r.pull.removed) item(s) removed here)" : "")
                     + (s.failed > 0 ? ", \(s.failed) failed" : "") + (s.skipped > 0 ? ", \(s.skipped) waiting behind another change" : "") + ".")
        if !r.pull.conflicts.isEmpty {
            ctx.out.line("\(r.pull.conflicts.count) conflict(s) settled (`vault conflicts` lists them).")
        }
        if r.downloaded > 0 { ctx.out.line("Downloaded \(r.downloaded) pinned file(s).") }
        if s.held > 0 { ctx.out.note("\(s.held) paused or cancelled change(s) wait for `vault transfers resume`") }
        if r.waitingForUnmetered > 0 { ctx.out.note("\(r.waitingForUnmetered) large transfer(s) wait for an unmetered network") }
        if s.conflicts > 0 { ctx.out.warn("\(s.conflicts) change(s) still in conflict with the server: the next sync tries them again (see `vault status`)") }
        if s.failed > 0 {
            ctx.out.warn("\(s.failed) change(s) failed for reasons of their own (see `vault status`); the others went on, and the next sync tries them again")
        }
    }
}
