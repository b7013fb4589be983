import Foundation
import VaultCore

/// A transfer that has not finished, by node: what a live view (`vault browse`) shows beside
/// the file and in its status bar.
public struct LiveTransfer: Sendable, Equatable {
    public var nodeId: String
    /// `upload` or `download`.
    public var direction: String
    public var state: TransferState
    public var bytesDone: Int64
    public var bytesTotal: Int64

    public init(nodeId: String, direction: String, state: TransferState, bytesDone: Int64, bytesTotal: Int64) {
        self.nodeId = nodeId; self.direction = direction; self.state = state
        self.bytesDone = bytesDone; self.bytesTotal = bytesTotal
    }
}

extension TransferInfo {
    /// Every transfer not done, newest first, without resolving paths (cheap enough to call
    /// every second). `besideSync` as in `all(in:besideSync:)`: only then are rows marked
    /// running really running.
    public static func unfinished(in vault: Vault, besideSync: Bool) throws -> [LiveTransfer] {
        try vault.db.query("""
            SELECT node_id, direction, state, bytes_done, bytes_total FROM transfers WHERE state != 'done' ORDER BY id DESC
            """).map { r in
            LiveTransfer(nodeId: r[0].string ?? "", direction: r[1].string ?? "", state: shown(r[2].string, besideSync: besideSync),
                         bytesDone: r[3].int64 ?? 0, bytesTotal: r[4].int64 ?? 0)
        }
    }
}
