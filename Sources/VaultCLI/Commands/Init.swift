import Foundation
import VaultArguments
import VaultCore

/// `vault init`: create a new vault with a password slot.
struct InitCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "init", abstract: "create a new vault with a password slot (and an escrow slot with --org-key)",
                             discussion: "The password is asked twice on the terminal (or read once from --password-file or VAULT_PASSWORD_COMMAND); at least 8 characters. The content cache is kept out of backups unless --no-backup-exclusion (or the policy) says otherwise.")
    }

    @OptionGroup var kdf: KDFOptions
    @Option(help: "also escrow the master key to the organisation's X25519 public key in FILE (hex)", valueName: "file", completion: .file)
    var orgKey: String?
    @Flag(help: "do not mark the content cache as excluded from backups")
    var noBackupExclusion = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    struct Result: Encodable {
        var ok = true
        var vaultId: String
        var path: String
        var kdf: String
        /// Whether a TPM 2.0 answers here (`vault key add-tpm` can enroll it), and the line saying so.
        var tpmFound: Bool
        var tpm: String
    }

    func run(_ ctx: CommandContext) throws {
        if Vault.exists(ctx.layout) {
            throw VaultError(.alreadyExists, "a vault already exists at \(ctx.layout.root)", hint: "use it, or set VAULT_HOME to another folder")
        }
        let params = try kdf.parameters(policy: ctx.policy)
        let orgKey = try orgKey.map { try OrgKeyFile.read($0, count: 32, what: "X25519 public key").withUnsafeBytes { Array($0) } }
        if ctx.policy.escrowRequired.value == true && orgKey == nil {
            throw VaultError(.policy, "the policy requires the master key to be escrowed", hint: "vault init --org-key FILE (your organisation's escrow public key)")
        }
        let src = ctx.password
        let pw = try src.read("New vault password: ")
        if !src.isExplicit {
            let again = try src.read("Repeat the password: ")
            guard pw.constantTimeEquals(again) else { throw VaultError(.usage, "the passwords do not match; nothing was created") }
        }
        guard pw.count >= 8 else { throw VaultError(.usage, "the password is too short: use at least 8 characters") }
        let vault = try Vault.create(layout: ctx.layout, password: pw, kdf: params)
        if let orgKey { try vault.addEscrowSlot(orgPublicKey: orgKey) }
        // Keep re-downloadable content out of backups by default; everything when the policy says so.
        let exclusion = ctx.policy.backupExclusion.value ?? "cache"
        if exclusion != "none" && !(noBackupExclusion && ctx.policy.backupExclusion.value == nil) {
            let report = try vault.applyBackupExclusion(all: exclusion == "all")
            for n in report.notes { ctx.out.note(n) }
        }
        let tpm = HardwareProtection.initNote(tcti: Vault.tpmConfiguration(ctx.environment))
        if ctx.out.json {
            try ctx.out.emit(Result(vaultId: vault.vaultId, path: ctx.layout.root, kdf: params.algorithmName, tpmFound: tpm.tpmFound, tpm: tpm.line))
        } else {
            ctx.out.line("Created a vault at \(ctx.layout.root) (KDF \(KDFOptions.describe(params))).")
            ctx.out.line(tpm.line)
            ctx.out.line("A FIDO2 security key with hmac-secret can open it with a touch: `vault key add-fido2`.")
            ctx.out.line("Next: `vault unlock`, then `vault put FILE`.")
        }
    }
}
