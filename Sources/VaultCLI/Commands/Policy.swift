import Foundation
import VaultArguments
import VaultCore
import VaultSync

/// `vault policy`: the enterprise policy and this vault's compliance.
struct PolicyCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "policy", abstract: "show the enterprise policy and check this vault's compliance",
                             subcommands: [Show.self, Check.self])
    }

    /// `vault policy show`.
    struct Show: VaultCommand, ProducesJSON {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "show", abstract: "the effective policy, with the source of each value",
                                 discussion: "Each value is shown whole (a list on as many lines as it needs), with where it comes from: the system policy, the user's settings, or the default.")
        }

        @OptionGroup var output: OutputOptions

        func run(_ ctx: CommandContext) throws {
            let p = ctx.policy
            if ctx.out.json { try ctx.out.emit(p); return }
            ctx.out.line("system policy: \(p.systemFile.map { "\($0)\(p.signed ? " (signature verified)" : " (unsigned)")" } ?? "none")")
            for row in Self.rows(p) {
                let lines = row.values.isEmpty ? ["-"] : row.values
                for (i, v) in lines.enumerated() {
                    let name = i == 0 ? row.name : ""
                    let source = i == 0 ? row.source : ""
                    var text = "\(name.padding(toLength: 28, withPad: " ", startingAt: 0)) \(v.padding(toLength: max(24, v.count), withPad: " ", startingAt: 0)) \(source)"
                    while text.last == " " { text.removeLast() }   // continuation lines keep their indent
                    ctx.out.line(text)
                }
            }
        }

        /// Every policy value as text: a list gives one line per element, nothing is cut.
        static func rows(_ p: EffectivePolicy) -> [(name: String, values: [String], source: String)] {
            var rows: [(String, [String], String)] = []
            func row<T>(_ name: String, _ v: PolicyValue<T>, _ show: (T) -> [String]) {
                rows.append((name, v.value.map(show) ?? [], v.source))
            }
            row("idleTimeoutMax", p.idleTimeoutMax) { [Duration.describe($0)] }
            row("absoluteTimeoutMax", p.absoluteTimeoutMax) { [Duration.describe($0)] }
            row("kdfMinArgon2Ops", p.kdfMinArgon2Ops) { ["\($0)"] }
            row("kdfMinArgon2MemoryBytes", p.kdfMinArgon2MemoryBytes) { [ByteCount.format($0)] }
            row("kdfMinPBKDF2Iterations", p.kdfMinPBKDF2Iterations) { ["\($0)"] }
            row("pbkdf2Only", p.pbkdf2Only) { ["\($0)"] }
            row("keyring", p.keyring) { [$0] }
            row("maxFailedUnlocks", p.maxFailedUnlocks) { ["\($0)"] }
            row("escrowRequired", p.escrowRequired) { ["\($0)"] }
            row("plaintextExport", p.plaintextExport) { ["\($0)"] }
            row("largeTransfersUnmeteredOnly", p.largeTransfersUnmeteredOnly) { ["\($0)"] }
            row("contentBudgetMax", p.contentBudgetMax) { [ByteCount.format($0)] }
            row("allowedServers", p.allowedServers) { $0.isEmpty ? ["(none)"] : $0 }
            row("pinnedPublicKeys", p.pinnedPublicKeys) { $0.isEmpty ? ["(none)"] : $0 }
            row("backupExclusion", p.backupExclusion) { [$0] }
            row("memoryLockRequired", p.memoryLockRequired) { ["\($0)"] }
            row("allowInsecureHTTP", p.allowInsecureHTTP) { ["\($0)"] }
            row("remotePadding", p.remotePadding) { [$0] }
            row("lockOnScreenLock", p.lockOnScreenLock) { ["\($0)"] }
            row("lockOnSuspend", p.lockOnSuspend) { ["\($0)"] }
            row("conflictPolicy", p.conflictPolicy) { [$0] }
            row("requireHardwareKey", p.requireHardwareKey) { ["\($0)"] }
            row("hardwareKeyPin", p.hardwareKeyPin) { ["\($0)"] }
            return rows
        }
    }

    /// `vault policy check`.
    struct Check: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "check", abstract: "this vault's compliance, item by item (exit 11 if not compliant)")
        }

        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        struct Result: Encodable { var compliant: Bool; var items: [ComplianceItem] }

        func run(_ ctx: CommandContext) throws {
            let p = ctx.policy
            let vault = try ctx.openVault()
            let items = try vault.compliance(with: p, keyringAvailable: KeyringSession.availability(environment: ctx.environment).available,
                                             tcti: Vault.tpmConfiguration(ctx.environment))
                + SyncClient.compliance(vault: vault, policy: p)
            let ok = items.allSatisfy(\.compliant)
            let failure = VaultError(.policy, "the vault does not comply with the policy (\(items.filter { !$0.compliant }.count) item(s))")
            if ctx.out.json {
                try ctx.out.emit(Result(compliant: ok, items: items))
                if !ok { throw ReportedFailure(exitCode: failure.exitCode) }   // one JSON document
                return
            }
            if items.isEmpty { ctx.out.line("No policy rule applies to this vault.") }
            for i in items {
                ctx.out.line("\(i.compliant ? "ok  " : "FAIL") \(i.item): \(i.detail)")
                if let fix = i.fix { ctx.out.line("     fix: \(fix)") }
            }
            if !ok { throw failure }
        }
    }
}
