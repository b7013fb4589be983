import Foundation
import VaultSQL

/// A server node a pull refused (its record is missing or does not authenticate), as the
/// quarantine keeps it for `vault status` and `vault sync --json`.
public struct QuarantinedNode: Sendable, Equatable, Codable {
    /// The server's id of the node.
    public var id: String
    /// Why it was refused.
    public var reason: String
    /// When a pull last refused it (Unix seconds).
    public var seenAt: Int64
}

extension Vault {
    /// The quarantine, oldest first.
    public func quarantinedNodes() throws -> [QuarantinedNode] {
        try db.query("SELECT remote_id, reason, seen_at FROM quarantine ORDER BY seen_at, remote_id").map {
            QuarantinedNode(id: try $0.decode(String.self, "remote_id"), reason: try $0.decode(String.self, "reason"),
                            seenAt: try $0.decode(Int64.self, "seen_at"))
        }
    }

    /// The remote ids in the quarantine.
    func quarantinedIds() throws -> Set<String> {
        Set(try db.query("SELECT remote_id FROM quarantine").map { try $0.decode(String.self, "remote_id") })
    }

    /// Puts `refused` in the quarantine (seen now) and takes `clearing` out, inside the caller's
    /// transaction.
    func quarantine(_ refused: [RefusedNode], clearing: Set<String>) throws {
        for id in clearing.sorted() { _ = try db.run("DELETE FROM quarantine WHERE remote_id = ?", [id]) }
        for r in refused {
            _ = try db.run("INSERT OR REPLACE INTO quarantine(remote_id, reason, seen_at) VALUES (?, ?, ?)", [r.id, r.reason, Vault.now])
        }
    }
}
