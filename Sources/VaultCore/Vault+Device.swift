import Foundation

extension Vault {
    /// Gives this vault a new device id and drops its server token (`sync_state` keys
    /// `device_id`, `server_token`, `server_token_expires`, written by VaultSync's `SyncAccount`).
    /// For a vault restored from a backup bundle: it is another device than the one that
    /// exported it, and two live devices must never look like one to the server. The server
    /// address, user and password stay, so `vault sync` signs in again as the new device.
    public func forgetDeviceIdentity() throws {
        try db.transaction {
            try syncStateTable.update("device_id", to: UUID().uuidString.lowercased())
            try syncStateTable.remove(["server_token", "server_token_expires"])
        }
    }
}
