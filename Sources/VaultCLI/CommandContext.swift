import Foundation
import VaultCore
import VaultCrypto
import VaultSync
import VaultAgent

/// What every command has: the layout, the environment, output, and how to get the password.
struct CommandContext {
    let layout: VaultLayout
    let environment: [String: String]
    let out: Output
    let passwordFile: String?
    /// The effective enterprise policy (loaded before any command runs; a bad one fails closed).
    let policy: EffectivePolicy
    /// The vault's running agent, reached once per command (it then owns the session).
    let agents: AgentConnections

    var sessions: VaultSessions {
        VaultSessions(layout: layout, environment: environment, policy: policy, agent: { [agents] in agents.client(for: $0) },
                      warn: { out.warn($0) })
    }

    /// The running agent of this vault (this local copy of it), if one answers (and a keyring is there for it).
    func agent() -> AgentClient? {
        guard sessions.keyringAvailability.available, let (file, _) = try? Vault.readKeyslots(layout) else { return nil }
        return agents.client(for: layout.localId(vaultId: file.body.vaultId))
    }

    var password: PasswordSource { PasswordInput.source(file: passwordFile, environment: environment) }

    /// The connection to the server `vault` is logged in to, checked against the transport rules
    /// and the policy before any request (`ServerAddress`); a clear-text warning goes to stderr.
    func syncClient(_ vault: Vault, say: @escaping (String) -> Void = { _ in }) throws -> SyncClient {
        try SyncClient(vault: vault, policy: policy, say: say, warn: { out.warn($0) })
    }

    /// Opens the unlocked vault for this command (holding the vault lock until released).
    /// `access: .read` for commands that only read, so they also run on a read-only filesystem.
    func openVault(lock: VaultLock.Request = .exclusive, access: Vault.Access = .readWrite) throws -> Vault {
        let vault = try sessions.open(password: password, lock: lock, access: access)
        vault.budgetMax = policy.contentBudgetMax.value
        return vault
    }
}
