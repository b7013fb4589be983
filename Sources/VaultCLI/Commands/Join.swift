import Foundation
import VaultArguments
import VaultCore
import VaultCrypto
import VaultSync

/// `vault join`: use on this device the vault an account holds (its key envelope), in an empty
/// VAULT_HOME.
struct JoinCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "join", abstract: "use the vault an account holds on this device: fetch its key envelope, unlock it, and create a local vault with the same key (in an empty VAULT_HOME)",
                             discussion: "Every secret is read first; nothing is created unless the envelope is accepted (its vault, format, generation and KDF costs against the policy) and the password or recovery key opens it. Then `vault unlock` and `vault sync` bring the tree.")
    }

    @OptionGroup var account: ServerOptions
    @Option(help: "unlock the envelope with the recovery key in FILE instead of the vault password", valueName: "file", completion: .file)
    var recoveryKeyFile: String?
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if password.passwordFile != nil && recoveryKeyFile != nil {
            throw ValidationError("--password-file and --recovery-key-file go separately: join with one or the other")
        }
    }

    struct Result: Encodable {
        var ok = true
        var message: String
        var vaultId: String
        /// The local vault's folder.
        var path: String
        /// Remote changes applied by the first pull.
        var pulled: Int
    }

    func run(_ ctx: CommandContext) throws {
        if Vault.exists(ctx.layout) {
            throw VaultError(.alreadyExists, "a vault already exists at \(ctx.layout.root)", hint: "use `vault join` in an empty VAULT_HOME")
        }
        let serverPassword = try account.check()
        var vaultPassword: SecureBytes?, recoveryKey: SecureBytes?
        if let f = recoveryKeyFile { recoveryKey = try PasswordInput.fromFile(f) } else { vaultPassword = try ctx.password.read("Vault password: ") }
        let client = try SyncClient.join(layout: ctx.layout, .init(serverURL: account.server, user: account.user, serverPassword: serverPassword,
                                                                    caFile: account.caFile, insecureHTTP: account.insecureHttp,
                                                                    password: vaultPassword, recoveryKey: recoveryKey),
                                         policy: ctx.policy, warn: { ctx.out.warn($0) })
        let pulled = try client.pull()
        let msg = "Joined vault \(client.vaultId) from \(client.serverURL) as \(account.user) at \(ctx.layout.root)."
            + (pulled > 0 ? " \(pulled) remote change(s) applied." : " The tree arrives with `vault sync`.")
        if ctx.out.json { try ctx.out.emit(Result(message: msg, vaultId: client.vaultId, path: ctx.layout.root, pulled: pulled)); return }
        ctx.out.line(msg)
        ctx.out.line("Next: `vault unlock`, then `vault sync`.")
    }
}
