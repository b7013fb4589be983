import Foundation
import VaultArguments
import VaultCore

/// `vault storage`: pinned, cached, staged and free bytes; the content budget.
struct StorageCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "storage", abstract: "show pinned, cached, staged and free bytes; set the content budget",
                             discussion: "The budget bounds the cache (pinned and evictable content) and is applied whenever content arrives; the policy's contentBudgetMax caps it. Staged content (not yet uploaded) is never evicted. The byte totals are counters the database keeps with every change (no scan: as fast in a vault of a million files as in an empty one); `vault doctor` checks them.")
    }

    @Option(help: "set the content budget to SIZE (10G, 512M), or none", valueName: "size")
    var budget: Budget?
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func run(_ ctx: CommandContext) throws {
        let vault = try ctx.openVault(access: budget == nil ? .read : .readWrite)
        switch budget {
        case nil: break
        case .none?: try vault.setContentBudget(nil)
        case .bytes(let bytes)?:
            if let max = ctx.policy.contentBudgetMax.value, bytes > max {
                throw VaultError(.policy, "the policy caps the content budget at \(ByteCount.format(max))")
            }
            try vault.setContentBudget(bytes)
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
}

/// `vault evict`: drop cached content.
struct EvictCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "evict", abstract: "drop cached content (all over budget, or of PATHs); never pinned or unsynced content")
    }

    @Argument(help: "vault files or folders whose cached content to drop (none: apply the budget now)", valueName: "path")
    var paths: [String] = []
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func run(_ ctx: CommandContext) throws {
        let vault = try ctx.openVault()
        let r = paths.isEmpty ? try vault.enforceBudget() : try vault.evict(paths: paths)
        if ctx.out.json { try ctx.out.emit(r); return }
        for p in r.evicted { ctx.out.line("evicted \(p)") }
        ctx.out.line("Freed \(ByteCount.format(r.freedBytes)).")
        if let m = r.message { ctx.out.note(m) }
    }
}

/// `vault doctor`: reconcile content states with the disk.
struct DoctorCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "doctor", abstract: "reconcile content states with the disk (--verify: authenticate every blob)",
                             discussion: "Also recounts the totals `vault status` and `vault storage` read (nodes, conflicts, pinned, cached and staged bytes, changes by state) and corrects one that disagrees, naming it. Exits 6 when a problem needs attention (a damaged or missing blob that cannot be repaired).")
    }

    @Flag(help: "authenticate every sealed blob (reads all content)")
    var verify = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func run(_ ctx: CommandContext) throws {
        let vault = try ctx.openVault()
        let r = try vault.doctor(verify: verify)
        if ctx.out.json { try ctx.out.emit(r) } else {
            ctx.out.line("Checked \(r.nodesChecked) file(s)\(verify ? ", authenticated \(r.blobsChecked) blob(s)" : "").")
            for x in r.repaired { ctx.out.line("repaired: \(x)") }
            for x in r.problems { ctx.out.line("PROBLEM: \(x)") }
            if r.healthy && r.repaired.isEmpty { ctx.out.line("Everything is consistent.") }
        }
        if !r.healthy {
            let e = VaultError(.integrity, "\(r.problems.count) problem(s) need attention")
            throw ctx.out.json ? ReportedFailure(exitCode: e.exitCode) : e   // one JSON document: the report
        }
    }
}
