import Foundation
import VaultAPI
import VaultSQL

/// Key envelope rows: one per account, opaque to the server.
extension SQLConnection {
    /// The envelope of `owner`, or nil when it has none yet.
    func envelope(owner: String) throws -> KeyEnvelope? {
        try queryOne("SELECT body, version FROM envelopes WHERE owner = ?", [owner]).map {
            KeyEnvelope(envelope: $0["body"].string ?? "", version: $0["version"].int64 ?? 0)
        }
    }

    /// Replaces the envelope of `owner` with `e`.
    func saveEnvelope(owner: String, _ e: KeyEnvelope) throws {
        try run("DELETE FROM envelopes WHERE owner = ?", [owner])
        try run("INSERT INTO envelopes(owner, body, version, updated_at) VALUES(?,?,?,?)",
                [owner, e.envelope, e.version, Date().timeIntervalSince1970])
    }
}
