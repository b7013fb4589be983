import Foundation
import VaultCore

extension SyncClient {
    /// Pulls what changed on the server into the local tree (docs/sync.md "Pull"). The one call
    /// site `vault join` and `vault sync` share; the two-way sync engine fills it in (until then
    /// it applies nothing and returns 0). Returns the remote changes applied.
    public func pull() throws -> Int {
        try syncEnvelope()
        return 0
    }
}
