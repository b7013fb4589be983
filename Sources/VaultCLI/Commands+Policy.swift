import Foundation
import VaultCore
import VaultSync

extension VaultCommandLine {
    static let policyCommands: [Command] = [
        Command(name: "policy", usage: """
            vault policy show [--json]      # the effective policy, with the source of each value
            vault policy check [--json]     # this vault's compliance, item by item (exit 11 if not compliant)
            """, summary: "show the enterprise policy and check this vault's compliance", run: runPolicy),
    ]

    static func runPolicy(_ ctx: CommandContext, _ a: Arguments) throws {
        let sub = try a.positional(0, "show or check")
        let p = ctx.policy
        switch sub {
        case "show":
            if ctx.out.json { try ctx.out.emit(p); return }
            ctx.out.line("system policy: \(p.systemFile.map { "\($0)\(p.signed ? " (signature verified)" : " (unsigned)")" } ?? "none")")
            func row<T>(_ name: String, _ v: PolicyValue<T>, _ show: (T) -> String) {
                ctx.out.line("\(name.padding(toLength: 28, withPad: " ", startingAt: 0)) \((v.value.map(show) ?? "-").padding(toLength: 24, withPad: " ", startingAt: 0)) \(v.source)")
            }
            row("idleTimeoutMax", p.idleTimeoutMax) { Duration.describe($0) }
            row("absoluteTimeoutMax", p.absoluteTimeoutMax) { Duration.describe($0) }
            row("kdfMinArgon2Ops", p.kdfMinArgon2Ops) { "\($0)" }
            row("kdfMinArgon2MemoryBytes", p.kdfMinArgon2MemoryBytes) { ByteCount.format($0) }
            row("kdfMinPBKDF2Iterations", p.kdfMinPBKDF2Iterations) { "\($0)" }
            row("pbkdf2Only", p.pbkdf2Only) { "\($0)" }
            row("keyring", p.keyring) { $0 }
            row("maxFailedUnlocks", p.maxFailedUnlocks) { "\($0)" }
            row("escrowRequired", p.escrowRequired) { "\($0)" }
            row("plaintextExport", p.plaintextExport) { "\($0)" }
            row("largeTransfersUnmeteredOnly", p.largeTransfersUnmeteredOnly) { "\($0)" }
            row("contentBudgetMax", p.contentBudgetMax) { ByteCount.format($0) }
            row("allowedServers", p.allowedServers) { $0.joined(separator: ", ") }
            row("pinnedPublicKeys", p.pinnedPublicKeys) { "\($0.count) key(s)" }
            row("backupExclusion", p.backupExclusion) { $0 }
            row("memoryLockRequired", p.memoryLockRequired) { "\($0)" }
            row("allowInsecureHTTP", p.allowInsecureHTTP) { "\($0)" }
            row("remotePadding", p.remotePadding) { $0 }
            row("lockOnScreenLock", p.lockOnScreenLock) { "\($0)" }
            row("lockOnSuspend", p.lockOnSuspend) { "\($0)" }
            row("conflictPolicy", p.conflictPolicy) { $0 }
        case "check":
            let vault = try ctx.openVault()
            let items = try vault.compliance(with: p, keyringAvailable: KeyringSession.availability(environment: ctx.environment).available)
                + SyncClient.compliance(vault: vault, policy: p)
            let ok = items.allSatisfy(\.compliant)
            let failure = VaultError(.policy, "the vault does not comply with the policy (\(items.filter { !$0.compliant }.count) item(s))")
            if ctx.out.json {
                struct Report: Encodable { var compliant: Bool; var items: [ComplianceItem] }
                try ctx.out.emit(Report(compliant: ok, items: items))
                if !ok { throw ReportedFailure(exitCode: failure.exitCode) }   // one JSON document
            } else {
                if items.isEmpty { ctx.out.line("No policy rule applies to this vault.") }
                for i in items {
                    ctx.out.line("\(i.compliant ? "ok  " : "FAIL") \(i.item): \(i.detail)")
                    if let fix = i.fix { ctx.out.line("     fix: \(fix)") }
                }
            }
            if !ok { throw failure }
        default:
            throw VaultError(.usage, "unknown policy subcommand '\(sub)'", hint: "vault policy show | check")
        }
    }
}
