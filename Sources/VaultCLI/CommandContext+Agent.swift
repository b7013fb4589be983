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
}
