import VaultCrypto

/// A running `vault agent`, as the session code sees it. The agent owns the unlocked session:
/// it keeps the deadlines, the key that opens the keyring item, and it decides when the vault
/// locks. `VaultSessions` routes unlock, lock, key lookups and key replacement through it when
/// one answers for the vault (`VaultAgent`'s client implements this).
public protocol SessionAgentLink: AnyObject {
    /// The unlocked session with its master key, or nil and why the agent locked (nil when it was
    /// locked by `vault lock` or never unlocked). With `countsAsUse` (a command, a key press) the
    /// agent's idle deadline moves; without (a screen refreshing itself) it does not.
    func session(countsAsUse: Bool) throws -> (KeyringSession.Record?, lockedReason: String?)

    /// Hands the agent a master key that was just proven to open the vault (`vault unlock`), with
    /// the session's timeouts (already capped by the policy).
    func hold(masterKey: SecureBytes, epoch: UInt32, idleTimeout: Int64, absoluteTimeout: Int64) throws

    /// Replaces the held key after a rotation changed it (same deadlines).
    func replace(masterKey: SecureBytes, epoch: UInt32) throws

    /// Locks now; `reason` is what later commands are told. Returns whether it was unlocked.
    @discardableResult
    func lock(reason: String?) throws -> Bool

    /// Asks the agent to stop its background work (an upload in flight stops; it resumes later
    /// from where the server says it got) and leave the vault to this process while the
    /// returned token lives (nil: nothing to wait for). `VaultSessions` keeps it with the open vault.
    func yieldVault() throws -> AnyObject?
}
