import Foundation
import VaultCore

extension VaultCommandLine {
    static let storageCommands: [Command] = [
        Command(name: "storage", usage: "vault storage [--budget SIZE|none] [--json]",
                summary: "show pinned, cached, staged and free bytes; set the content budget", valued: ["budget"], run: runStorage),
        Command(name: "evict", usage: "vault evict [PATH…]", summary: "drop cached content (all over budget, or of PATHs); never pinned or unsynced content",
                run: runEvict),
        Command(name: "doctor", usage: "vault doctor [--verify] [--json]", summary: "reconcile content states with the disk (--verify: authenticate every blob)",
                flags: ["verify"], run: runDoctor),
    ]

    static func runStorage(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 0)
        let vault = try ctx.openVault(access: a.values["budget"] == nil ? .read : .readWrite)
        if let b = a.values["budget"] {
            if b == "none" { try vault.setContentBudget(nil) } else {
                guard let bytes = ByteCount.parse(b) else { throw VaultError(.usage, "--budget takes a size like 10G or 512M, or none") }
                if let max = ctx.policy.contentBudgetMax.value, bytes > max {
                    throw VaultError(.policy, "the policy caps the content budget at \(ByteCount.format(max))")
                }
                try vault.setContentBudget(bytes)
            }
        }
        let r = try vault.storageReport()
        if ctx.out.json { try ctx.out.emit(r); return }
        ctx.out.line("pinned  \(ByteCount.format(r.pinnedBytes))")
        ctx.out.line("cached  \(ByteCount.format(r.cachedBytes))")
        ctx.out.line("staged  \(ByteCount.format(r.stagedBytes))  (awaiting upload; never evicted)")
        ctx.out.line("free    \(ByteCount.format(r.freeBytes))")
        ctx.out.line("budget  \(r.budgetBytes.map(ByteCount.format) ?? "none")")
        if let w = r.warning { ctx.out.warn(w) }
    }

    static func runEvict(_ ctx: CommandContext, _ a: Arguments) throws {
        let vault = try ctx.openVault()
        let r = a.positionals.isEmpty ? try vault.enforceBudget() : try vault.evict(paths: a.positionals)
        if ctx.out.json { try ctx.out.emit(r); return }
        for p in r.evicted { ctx.out.line("evicted \(p)") }
        ctx.out.line("Freed \(ByteCount.format(r.freedBytes)).")
        if let m = r.message { ctx.out.note(m) }
    }

    static func runDoctor(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 0)
        let vault = try ctx.openVault()
        let r = try vault.doctor(verify: a.flag("verify"))
        if ctx.out.json { try ctx.out.emit(r) } else {
            ctx.out.line("Checked \(r.nodesChecked) file(s)\(a.flag("verify") ? ", authenticated \(r.blobsChecked) blob(s)" : "").")
            for x in r.repaired { ctx.out.line("repaired: \(x)") }
            for x in r.problems { ctx.out.line("PROBLEM: \(x)") }
            if r.healthy && r.repaired.isEmpty { ctx.out.line("Everything is consistent.") }
        }
        if !r.healthy { throw VaultError(.integrity, "\(r.problems.count) problem(s) need attention") }
    }
}
