import Foundation
import VaultCore

/// A transfer that has not finished, by node: what a live view (`vault browse`) shows beside
/// the file and in its status bar.
public struct LiveTransfer: Sendable, Equatable {
    public var nodeId: String
    public var direction: TransferDirection
    public var state: TransferState
    public var bytesDone: Int64
    public var bytesTotal: Int64

    public init(nodeId: String, direction: TransferDirection, state: TransferState, bytesDone: Int64, bytesTotal: Int64) {
        self.nodeId = nodeId; self.direction = direction; self.state = state
        self.bytesDone = bytesDone; self.bytesTotal = bytesTotal
    }
}

extension TransferInfo {
    /// Every transfer not done, newest first, without resolving paths (cheap enough to call
    /// every second). `besideSync` as in `all(in:besideSync:)`: only then are rows marked
    /// running really running.
    public static func unfinished(in vault: Vault, besideSync: Bool) throws -> [LiveTransfer] {
        try vault.unfinishedTransfers().map { t in
            LiveTransfer(nodeId: t.nodeId, direction: t.direction,
                         state: t.state == .running && !besideSync ? .interrupted : t.state,
                         bytesDone: t.bytesDone, bytesTotal: t.bytesTotal)
        }
    }
}
