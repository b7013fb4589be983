import VaultAgent
import VaultCore
import VaultSync

/// The connection of one command to its vault's agent: made at the first need and kept for the
/// whole command (a `yield` lasts as long as it), or nil when no agent runs.
final class AgentConnections {
    private let environment: [String: String]
    private let warn: (String) -> Void
    private var clients: [String: AgentClient?] = [:]

    init(environment: [String: String], warn: @escaping (String) -> Void) {
        self.environment = environment; self.warn = warn
    }

    func client(for vaultId: String) -> AgentClient? {
        if let known = clients[vaultId] { return known }
        var client: AgentClient?
        do { client = try AgentClient.connect(vaultId: vaultId, environment: environment) } catch {
            warn("the vault agent cannot be reached (\(VaultError.wrap(error).message)); going on without it")
        }
        clients[vaultId] = client
        return client
    }
}

extension CommandContext {
    /// After a command queued changes for the server: hands them to the vault's agent, which
    /// sends them in the background once this command has ended. True when an agent took them
    /// (one runs and the vault is logged in to a server).
    @discardableResult
    func queuedChanges(_ vault: Vault) -> Bool {
        guard let agent = agent(), (try? SyncAccount.load(from: vault)) != nil else { return false }
        do { try agent.notifyWork() } catch {
            out.warn("the vault agent was not told about the new changes (\(VaultError.wrap(error).message)); `vault sync` sends them")
            return false
        }
        return true
    }
}
