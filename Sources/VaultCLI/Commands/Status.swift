import Foundation
import VaultArguments
import VaultCore
import VaultSync
import VaultAgent

/// `vault status`: the vault, its lock state, and what awaits sync.
struct StatusCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "status", abstract: "show the vault, its lock state and what awaits sync",
                             discussion: "A locked vault shows only what needs no key (its id, the keyring, why it locked, how the key is protected on this machine: `hardware (TPM2, PIN)`, `hardware (TPM2)`, or `software only` with the reason) unless a password source is named for this command. No TPM PIN is asked and nothing is unsealed. The counts (nodes, changes by state, conflicts) and the storage line are counters the database keeps with every change: no scan, whatever the vault's size.")
    }

    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    struct Result: Encodable {
        var path: String
        var vaultId: String
        var locked: Bool
        var keyring: String
        var unlockedAt: Int64?
        var locksAt: Int64?
        var nodes: Int?
        /// Outbox entries waiting for the next sync (pending only).
        var pendingChanges: Int?
        /// Outbox entries by state: pending, conflict, failed, held (paused or cancelled).
        var changes: OutboxCounts?
        /// Entries in conflict or failed, with their reasons.
        var problems: [OutboxProblem]?
        var storage: StorageReport?
        var lastSync: String?
        var syncHealth: SyncHealth?
        /// Conflicts syncs settled, listed by `vault conflicts` (until `vault conflicts --clear`).
        var conflicts: Int?
        /// Server nodes syncs refused (they do not authenticate), kept until cleared (docs/sync.md).
        var refused: [QuarantinedNode]?
        var warnings: [String] = []
        var reducedProtection: [String]
        /// How the key is protected on this machine: a TPM-held slot or the password only (why).
        var protection: HardwareProtection
        /// `protection` in one line: `hardware (TPM2, PIN)`, `hardware (TPM2)` or `software only: …`.
        var keyProtection: String
        /// `agent` when a running `vault agent` locks at the deadline; `next-command` when only
        /// the next command enforces auto-lock.
        var autoLock: String = "next-command"
        var agent: AgentStatus?
    }

    func run(_ ctx: CommandContext) throws {
        let (file, _) = try Vault.readKeyslots(ctx.layout)
        let sessions = ctx.sessions
        let avail = sessions.keyringAvailability
        let protection = HardwareProtection.of(file, tcti: Vault.tpmConfiguration(ctx.environment))
        var s = Result(path: ctx.layout.root, vaultId: file.body.vaultId, locked: true,
                           keyring: avail.available ? "available" : "unavailable: \(avail.reason)",
                           reducedProtection: sessions.degradations, protection: protection, keyProtection: protection.summary)
        let (rec, expired) = try sessions.currentSession()
        s.agent = try ctx.agent()?.status()   // after the session request this command's use moved
        s.autoLock = s.agent == nil ? "next-command" : "agent"
        if let rec {
            s.locked = false
            s.unlockedAt = rec.unlockedAt
            let idleEnd = rec.idleTimeout > 0 ? rec.lastUsedAt + rec.idleTimeout : Int64.max
            let absEnd = rec.absoluteTimeout > 0 ? rec.unlockedAt + rec.absoluteTimeout : Int64.max
            s.locksAt = min(idleEnd, absEnd) == Int64.max ? nil : min(idleEnd, absEnd)
            if let agent = s.agent { s.locksAt = agent.session?.locksAt.map { Int64($0.rounded(.up)) } }   // to the second
        }
        if rec != nil || ctx.password.isExplicit || !avail.available {
            let vault = try ctx.openVault(lock: .control, access: .read)   // also beside a sync (the agent's)
            s.nodes = try vault.nodeCount()
            let changes = try vault.outboxCounts()
            s.changes = changes
            s.pendingChanges = changes.pending
            s.problems = try vault.outboxProblems(limit: 10)
            s.storage = try vault.storageReport()
            s.conflicts = try vault.conflictCount()
            s.refused = try vault.quarantinedNodes()
            let state = try vault.syncState([.serverURL, .serverUser])
            if let url = state[.serverURL] {
                let health = try vault.syncHealth()
                s.syncHealth = health
                let when = health.lastSuccessAt.map { "last successful sync \(Date(timeIntervalSince1970: TimeInterval($0)))" } ?? "never synced"
                let failed = health.failuresInRow > 0
                    ? "; \(health.failuresInRow) failed since" + (health.lastFailure.map { " (last: \($0))" } ?? "") : ""
                s.lastSync = "\(url) as \(state[.serverUser] ?? "?"); \(when)\(failed)"
                if let w = health.warning(now: Int64(Date().timeIntervalSince1970), unsynced: changes.total) { s.warnings.append(w) }
            } else {
                s.lastSync = "no server (vault login --server URL --user NAME)"
            }
        }
        if ctx.out.json { try ctx.out.emit(s); return }
        ctx.out.line("vault   \(s.path)")
        ctx.out.line("id      \(s.vaultId)")
        if let expired { ctx.out.line("state   locked — \(expired)") }
        else if s.locked { ctx.out.line("state   locked (run `vault unlock`)") }
        else {
            let when = s.locksAt.map { Date(timeIntervalSince1970: TimeInterval($0)).description } ?? "never"
            ctx.out.line("state   unlocked (auto-locks at \(when))")
        }
        ctx.out.line("keyring \(s.keyring)")
        ctx.out.line("key     \(s.keyProtection)")
        if s.agent == nil {
            ctx.out.line("autolock at the next vault command only: no `vault agent` runs (`vault agent install` locks at the deadline)")
        }
        for d in s.reducedProtection { ctx.out.line("reduced protection: \(d)") }
        if let n = s.nodes { ctx.out.line("nodes   \(n)") }
        if let c = s.changes {
            var line = "pending \(c.pending) local change(s) awaiting sync"
            if c.conflict > 0 { line += "; \(c.conflict) in conflict" }
            if c.failed > 0 { line += "; \(c.failed) failed (retried at the next sync)" }
            if c.held > 0 { line += "; \(c.held) paused or cancelled (`vault transfers resume`)" }
            ctx.out.line(line)
            for p in s.problems ?? [] {
                ctx.out.line("  \(p.state.rawValue): \(p.op.rawValue.replacingOccurrences(of: "_", with: " ")) \(p.path)" + (p.reason.map { ": \($0)" } ?? ""))
            }
        }
        if let st = s.storage {
            ctx.out.line("storage pinned \(ByteCount.format(st.pinnedBytes)), cached \(ByteCount.format(st.cachedBytes)), staged \(ByteCount.format(st.stagedBytes)), free \(ByteCount.format(st.freeBytes))")
        }
        if let l = s.lastSync { ctx.out.line("sync    \(l)") }
        if let agent = s.agent { AgentCommand.lines(agent).forEach(ctx.out.line) }
        if let c = s.conflicts, c > 0 { ctx.out.line("conflicts \(c) settled by syncs (`vault conflicts` lists them)") }
        if let refused = s.refused, !refused.isEmpty {
            ctx.out.line("refused \(refused.count) server node(s) that do not authenticate (not applied; `vault sync` exits 6 until cleared):")
            for r in refused { ctx.out.line("  \(r.id): \(r.reason) (last seen \(Date(timeIntervalSince1970: TimeInterval(r.seenAt))))") }
        }
        for w in s.warnings { ctx.out.warn(w) }
    }
}
