import Foundation
import VaultCore
import VaultCrypto
import VaultSync

extension VaultCommandLine {
    static let joinCommand = Command(
        name: "join",
        usage: "vault join --server URL --user NAME [--server-password-file F] [--password-file F | --recovery-key-file F] [--ca-file F] [--insecure-http]",
        summary: "use the vault an account holds on this device: fetches its key envelope, unlocks it, and creates a local vault with the same key (in an empty VAULT_HOME)",
        valued: ["server", "user", "server-password-file", "recovery-key-file", "ca-file"], flags: ["insecure-http"], run: runJoin)

    /// `vault join`: every secret is read first; nothing is created unless the envelope is
    /// accepted and opens (`SyncClient.join`).
    static func runJoin(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 0)
        guard let server = a.values["server"], let user = a.values["user"], !user.isEmpty else {
            throw VaultError(.usage, "vault join needs --server URL and --user NAME")
        }
        _ = try ServerAddress(server)
        if let ca = a.values["ca-file"] { _ = try SourceFile(ca, accepting: .regular, what: "the CA file") }
        if Vault.exists(ctx.layout) {
            throw VaultError(.alreadyExists, "a vault already exists at \(ctx.layout.root)", hint: "use `vault join` in an empty VAULT_HOME")
        }
        let serverPassword = try a.values["server-password-file"].map { try PasswordInput.fromFile($0) }
            ?? PasswordInput.fromTerminal("Server password for \(user): ")
        var password: SecureBytes?, recoveryKey: SecureBytes?
        if let f = a.values["recovery-key-file"] { recoveryKey = try PasswordInput.fromFile(f) }
        else { password = try ctx.password.read("Vault password: ") }
        let client = try SyncClient.join(layout: ctx.layout, .init(serverURL: server, user: user, serverPassword: serverPassword,
                                                                    caFile: a.values["ca-file"], insecureHTTP: a.flag("insecure-http"),
                                                                    password: password, recoveryKey: recoveryKey),
                                         policy: ctx.policy, warn: { ctx.out.warn($0) })
        let pulled = try client.pull()
        let msg = "Joined vault \(client.vaultId) from \(client.serverURL) as \(user) at \(ctx.layout.root)."
            + (pulled > 0 ? " \(pulled) remote change(s) applied." : " The tree arrives with `vault sync`.")
        if ctx.out.json {
            try ctx.out.emit(["ok": "true", "vaultId": client.vaultId, "path": ctx.layout.root, "message": msg])
        } else {
            ctx.out.line(msg)
            ctx.out.line("Next: `vault unlock`, then `vault sync`.")
        }
    }
}
