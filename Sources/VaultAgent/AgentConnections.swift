import VaultCore

/// The connections of one process (a command, a helper) to vaults' agents: each made at the first
/// need and kept for the process's life (a `yield` lasts as long as its connection), or nil when
/// no agent runs.
public final class AgentConnections {
    private let environment: [String: String]
    private let background: Bool
    private let warn: (String) -> Void
    private var clients: [String: AgentClient?] = [:]

    /// - Parameter background: for the agent's own helpers (their key requests are no use of the vault).
    public init(environment: [String: String], background: Bool = false, warn: @escaping (String) -> Void) {
        self.environment = environment; self.background = background; self.warn = warn
    }

    /// The agent of `vaultId`, if one answers.
    public func client(for vaultId: String) -> AgentClient? {
        if let known = clients[vaultId] { return known }
        var client: AgentClient?
        do { client = try AgentClient.connect(vaultId: vaultId, environment: environment, background: background) } catch {
            warn("the vault agent cannot be reached (\(VaultError.wrap(error).message)); going on without it")
        }
        clients[vaultId] = client
        return client
    }
}
