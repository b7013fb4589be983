import VaultAgent
import VaultCore
import VaultSync

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

    /// Reports a node a command created or changed: hands the queued change to the agent, then
    /// prints the node (`--json`) or the line `text` makes of its path and of whether an agent
    /// took the change.
    func reportChanged(_ node: Node, in vault: Vault, _ text: (_ path: String, _ background: Bool) -> String) throws {
        let path = try vault.path(of: node)
        let background = queuedChanges(vault)
        if out.json { try out.emit(NodeResult(node, path: path)) } else { out.line(text(path, background)) }
    }

    /// `reportChanged` for a line that names only the path.
    func reportChanged(_ node: Node, in vault: Vault, _ text: (_ path: String) -> String) throws {
        try reportChanged(node, in: vault) { path, _ in text(path) }
    }
}
