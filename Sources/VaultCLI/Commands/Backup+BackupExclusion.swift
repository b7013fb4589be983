import Foundation
import VaultArguments
import VaultCore
import VaultCrypto

/// `vault backup`: a portable encrypted bundle of the vault.
struct BackupCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "backup", abstract: "portable encrypted bundle of the vault, opened by a backup passphrase or the recovery key",
                             subcommands: [Export.self, Import.self])
    }

    /// `--passphrase-file` / `--recovery-key-file`: what opens a bundle.
    struct BundleSecretOptions: ParsableArguments {
        @Option(help: "read the backup passphrase from the first line of FILE (else it is asked on the terminal)",
                valueName: "file", completion: .file)
        var passphraseFile: String?
        @Option(help: "use the vault's recovery key in FILE instead of a passphrase", valueName: "file", completion: .file)
        var recoveryKeyFile: String?

        func validate() throws {
            if passphraseFile != nil && recoveryKeyFile != nil {
                throw ValidationError("give either --passphrase-file or --recovery-key-file, not both")
            }
        }

        /// The backup passphrase: first line of --passphrase-file, or asked on the terminal (twice for a new one).
        func passphrase(confirm: Bool) throws -> SecureBytes {
            if let f = passphraseFile { return try PasswordInput.fromFile(f) }
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

    /// `vault backup export FILE`.
    struct Export: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "export", abstract: "write the whole vault into one bundle FILE, sealed under a backup passphrase or the recovery key")
        }

        @Argument(help: "the bundle file to write", valueName: "file", completion: .file)
        var file: String
        @OptionGroup var secret: BundleSecretOptions
        @Option(help: "Argon2id passes for the bundle's passphrase (1 to 64)", valueName: "n")
        var kdfOps: UInt64 = 3
        @Option(help: "Argon2id memory for the bundle's passphrase (8K to 4G)", valueName: "size")
        var kdfMem: ByteSize = ByteSize(argument: "256M")!
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            try KDFOptions.checkArgon2id(ops: kdfOps, memory: kdfMem.bytes)
        }

        func run(_ ctx: CommandContext) throws {
            let protection: BackupProtection
            if let rk = secret.recoveryKeyFile {
                protection = .recoveryKey(try RecoveryKey.parse(try PasswordInput.fromFile(rk)))
            } else {
                protection = .passphrase(try secret.passphrase(confirm: true), opsLimit: kdfOps, memLimitBytes: kdfMem.bytes)
            }
            let vault = try ctx.openVault()
            let r = try vault.exportBackup(to: file, protection: protection)
            if ctx.out.json { try ctx.out.emit(r); return }
            ctx.out.line("Wrote \(r.path): \(r.files) file(s), \(ByteCount.format(r.bundleBytes)), opened by the \(r.protection == "passphrase" ? "backup passphrase" : "recovery key").")
            ctx.out.note("Restore it on any machine with: vault backup import \(r.path)")
        }
    }

    /// `vault backup import FILE`.
    struct Import: VaultCommand, ProducesJSON {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "import", abstract: "restore a bundle into an empty VAULT_HOME; every blob is authenticated",
                                 discussion: "The vault keeps its original keyslots; --new-password-file adds a password slot for a new password.")
        }

        @Argument(help: "the bundle file", valueName: "file", completion: .file)
        var file: String
        @OptionGroup var secret: BundleSecretOptions
        @OptionGroup var newPassword: NewPasswordOptions
        @OptionGroup var kdf: KDFOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if kdf.asked && newPassword.newPasswordFile == nil {
                throw ValidationError("the --kdf options set the cost of a new password slot: give --new-password-file too")
            }
        }

        func run(_ ctx: CommandContext) throws {
            let bundleSecret: BackupSecret
            if let rk = secret.recoveryKeyFile {
                bundleSecret = .recoveryKey(try RecoveryKey.parse(try PasswordInput.fromFile(rk)))
            } else if try secret.passphraseFile != nil || BackupBundle.protection(of: file) == "passphrase" {
                bundleSecret = .passphrase(try secret.passphrase(confirm: false))
            } else {
                bundleSecret = .recoveryKey(try RecoveryKey.parse(try PasswordInput.fromTerminal("Recovery key: ")))
            }
            var newPassword: (SecureBytes, KDFParameters)?
            if self.newPassword.newPasswordFile != nil { newPassword = (try self.newPassword.read(), try kdf.parameters(policy: ctx.policy)) }
            let r = try BackupBundle.importBundle(from: file, into: ctx.layout, secret: bundleSecret, newPassword: newPassword)
            if ctx.out.json { try ctx.out.emit(r); return }
            ctx.out.line("Imported vault \(r.vaultId) into \(ctx.layout.root): \(r.files) file(s), \(ByteCount.format(r.bytes)); every blob authenticated.")
            ctx.out.line(r.passwordAdded ? "Added a password slot for the new password; the original keyslots still work."
                                         : "Unlock it with its original password or recovery key (vault unlock).")
            for p in r.problems { ctx.out.warn("already damaged in the source vault: \(p)") }
            ctx.out.note("Backup exclusion markers are per device: run `vault backup-exclusion apply` here if you want them.")
        }
    }
}

/// `vault backup-exclusion`: keep vault data out of home-folder backups.
struct BackupExclusionCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "backup-exclusion", abstract: "keep vault data out of home-folder backups (CACHEDIR.TAG, nodump, user.xdg.robots.backup)",
                             subcommands: [Apply.self, Remove.self, Status.self])
    }

    /// `vault backup-exclusion apply`.
    struct Apply: VaultCommand, ProducesJSON {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "apply", abstract: "mark the content cache (--all: the whole vault) as excluded from backups")
        }
        @Flag(help: "mark the whole vault folder (staging, database, keyslots, cache), not only the cache")
        var all = false
        @OptionGroup var output: OutputOptions
        func run(_ ctx: CommandContext) throws { try BackupExclusionCommand.show(ctx, try BackupExclusion(layout: ctx.layout).apply(all: all)) }
    }

    /// `vault backup-exclusion remove`.
    struct Remove: VaultCommand, ProducesJSON {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "remove", abstract: "take every marker away")
        }
        @OptionGroup var output: OutputOptions
        func run(_ ctx: CommandContext) throws { try BackupExclusionCommand.show(ctx, try BackupExclusion(layout: ctx.layout).remove()) }
    }

    /// `vault backup-exclusion status`.
    struct Status: VaultCommand, ProducesJSON {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "status", abstract: "the markers present, and which backup tools honour each")
        }
        @OptionGroup var output: OutputOptions
        func run(_ ctx: CommandContext) throws { try BackupExclusionCommand.show(ctx, try BackupExclusion(layout: ctx.layout).status()) }
    }

    static func show(_ ctx: CommandContext, _ r: BackupExclusionReport) throws {
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
}
