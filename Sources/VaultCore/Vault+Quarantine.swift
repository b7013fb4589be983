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
        try QuarantineTable(db: db).all()
    }

    /// The remote ids in the quarantine.
    func quarantinedIds() throws -> Set<String> {
        try QuarantineTable(db: db).ids()
    }

    /// Puts `refused` in the quarantine (seen now) and takes `clearing` out, inside the caller's
    /// transaction.
    func quarantine(_ refused: [RefusedNode], clearing: Set<String>) throws {
        let table = QuarantineTable(db: db)
        for id in clearing.sorted() { try table.delete(remoteId: id) }
        for r in refused { try table.put(remoteId: r.id, reason: r.reason, seenAt: Vault.now) }
    }
}
