import Foundation
import VaultCore
import VaultCrypto

extension VaultCommandLine {
    static let backupCommands: [Command] = [
        Command(name: "backup-exclusion", usage: """
            vault backup-exclusion apply [--all]      # keep the content cache (--all: the whole vault) out of backups
            vault backup-exclusion remove             # take every marker away
            vault backup-exclusion status [--json]    # markers present, and which tools honour each
            """, summary: "keep vault data out of home-folder backups (CACHEDIR.TAG, nodump, user.xdg.robots.backup)",
                flags: ["all"], run: runBackupExclusion),
        Command(name: "backup", usage: """
            vault backup export FILE [--passphrase-file F | --recovery-key-file F] [--kdf-ops N --kdf-mem SIZE]
            vault backup import FILE [--passphrase-file F | --recovery-key-file F] [--new-password-file F]
            """, summary: "portable encrypted bundle of the vault, opened by a backup passphrase or the recovery key",
                valued: ["passphrase-file", "recovery-key-file", "new-password-file", "kdf", "kdf-time", "kdf-ops", "kdf-mem", "pbkdf2-iterations"],
                run: runBackup),
    ]

    static func runBackupExclusion(_ ctx: CommandContext, _ a: Arguments) throws {
        let sub = try a.positional(0, "apply, remove or status")
        try a.expectPositionals(max: 1)
        let ex = BackupExclusion(layout: ctx.layout)
        let r: BackupExclusionReport
        switch sub {
        case "apply": r = try ex.apply(all: a.flag("all"))
        case "remove": r = try ex.remove()
        case "status": r = try ex.status()
        default: throw VaultError(.usage, "unknown backup-exclusion subcommand '\(sub)'", hint: "use apply, remove or status")
        }
        if ctx.out.json { try ctx.out.emit(r); return }
        let scope = ["none": "none (backups include the whole vault)", "cache": "the content cache",
                     "all": "the whole vault folder (staging, database, keyslots, cache)"][r.scope] ?? r.scope
        ctx.out.line("Left out of backups: \(scope)")
        for l in r.locations {
            ctx.out.line("\(l.name)  \(l.path)  — \(l.covers)")
            for m in l.markers {
                let state = m.state.rawValue + (m.detail.map { " (\($0))" } ?? "")
                let tools = m.honouredBy.isEmpty ? "no common backup tool reads it today" : m.honouredBy.joined(separator: ", ")
                ctx.out.line("  \(m.marker.padding(toLength: 23, withPad: " ", startingAt: 0)) \(state.padding(toLength: 12, withPad: " ", startingAt: 0))  honoured by: \(tools)")
            }
        }
        for n in r.notes { ctx.out.note(n) }
        for w in r.warnings { ctx.out.warn(w) }
    }

    static func runBackup(_ ctx: CommandContext, _ a: Arguments) throws {
        let sub = try a.positional(0, "export or import")
        let file = try a.positional(1, "the bundle FILE")
        try a.expectPositionals(max: 2)
        if a.values["passphrase-file"] != nil && a.values["recovery-key-file"] != nil {
            throw VaultError(.usage, "give either --passphrase-file or --recovery-key-file, not both")
        }
        switch sub {
        case "export":
            let protection: BackupProtection
            if let rk = a.values["recovery-key-file"] {
                protection = .recoveryKey(try RecoveryKey.parse(try PasswordInput.fromFile(rk)))
            } else {
                let (ops, mem) = try backupKDF(a)
                protection = .passphrase(try backupPassphrase(a, confirm: true), opsLimit: ops, memLimitBytes: mem)
            }
            let vault = try ctx.openVault()
            let r = try vault.exportBackup(to: file, protection: protection)
            if ctx.out.json { try ctx.out.emit(r); return }
            ctx.out.line("Wrote \(r.path): \(r.files) file(s), \(ByteCount.format(r.bundleBytes)), opened by the \(r.protection == "passphrase" ? "backup passphrase" : "recovery key").")
            ctx.out.note("Restore it on any machine with: vault backup import \(r.path)")
        case "import":
            let secret: BackupSecret
            if let rk = a.values["recovery-key-file"] {
                secret = .recoveryKey(try RecoveryKey.parse(try PasswordInput.fromFile(rk)))
            } else if try a.values["passphrase-file"] != nil || BackupBundle.protection(of: file) == "passphrase" {
                secret = .passphrase(try backupPassphrase(a, confirm: false))
            } else {
                secret = .recoveryKey(try RecoveryKey.parse(try PasswordInput.fromTerminal("Recovery key: ")))
            }
            var newPassword: (SecureBytes, KDFParameters)?
            if a.values["new-password-file"] != nil { newPassword = (try Self.newPassword(ctx, a), try kdfParameters(a, policy: ctx.policy)) }
            let r = try BackupBundle.importBundle(from: file, into: ctx.layout, secret: secret, newPassword: newPassword)
            if ctx.out.json { try ctx.out.emit(r); return }
            ctx.out.line("Imported vault \(r.vaultId) into \(ctx.layout.root): \(r.files) file(s), \(ByteCount.format(r.bytes)); every blob authenticated.")
            ctx.out.line(r.passwordAdded ? "Added a password slot for the new password; the original keyslots still work."
                                         : "Unlock it with its original password or recovery key (vault unlock).")
            for p in r.problems { ctx.out.warn("already damaged in the source vault: \(p)") }
            ctx.out.note("Backup exclusion markers are per device: run `vault backup-exclusion apply` here if you want them.")
        default:
            throw VaultError(.usage, "unknown backup subcommand '\(sub)'", hint: "use export or import")
        }
    }

    /// Argon2id costs for a bundle's passphrase: --kdf-ops/--kdf-mem, else 3 passes over 256 MiB.
    static func backupKDF(_ a: Arguments) throws -> (UInt64, UInt64) {
        let r = KDFParameters.argon2idOpsRange
        let ops = try a.values["kdf-ops"].map { v -> UInt64 in
            guard let o = UInt64(v), r.contains(o) else {
                throw VaultError(.usage, "--kdf-ops must be a whole number from \(r.lowerBound) to \(r.upperBound)")
            }
            return o
        } ?? 3
        return (ops, try kdfMemory(a) ?? (256 << 20))
    }

    /// The backup passphrase: first line of --passphrase-file, or asked on the terminal (twice for a new one).
    static func backupPassphrase(_ a: Arguments, confirm: Bool) throws -> SecureBytes {
        if let f = a.values["passphrase-file"] { return try PasswordInput.fromFile(f) }
        let p = try PasswordInput.fromTerminal("Backup passphrase: ")
        if confirm {
            guard p.constantTimeEquals(try PasswordInput.fromTerminal("Repeat the backup passphrase: ")) else {
                throw VaultError(.usage, "the passphrases do not match; nothing was written")
            }
            guard p.count >= 8 else { throw VaultError(.usage, "the backup passphrase is too short: use at least 8 characters") }
        }
        return p
    }
}
