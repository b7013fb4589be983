import VaultKeys

/// The connections of one process (a command, a helper) to vaults' agents (one per local copy): each made at the first
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

    /// The agent of the local copy `localId` (`VaultLayout.localId`), if one answers.
    public func client(for localId: String) -> AgentClient? {
        if let known = clients[localId] { return known }
        var client: AgentClient?
        do { client = try AgentClient.connect(localId: localId, environment: environment, background: background) } catch {
            warn("the vault agent cannot be reached (\(VaultError.wrap(error).message)); going on without it")
        }
        clients[localId] = client
        return client
    }
}
