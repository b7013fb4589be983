import Foundation
import VaultCore

/// One transfer as `vault transfers` shows it.
public struct TransferInfo: Sendable, Codable, Equatable {
    /// The row id in the `transfers` table.
    public var id: Int64
    /// The vault path of the file.
    public var path: String?
    public var direction: TransferDirection
    /// Where it stands.
    public var state: TransferState
    /// Bytes the other side confirmed (uploads) or that arrived (downloads); persisted a few times a second.
    public var bytesDone: Int64
    /// The file's size.
    public var bytesTotal: Int64
    /// Failed attempts so far.
    public var attempts: Int64
    /// When a waiting transfer will be tried again (seconds since the epoch).
    public var nextAttemptAt: Int64?
    /// Why it failed or waits, in words.
    public var error: String?
    /// When the row last changed (seconds since the epoch).
    public var updatedAt: Int64

    /// Every transfer of a file that still exists, newest first (finished ones: the recent
    /// history, see `Vault.transferHistoryCount`). Call it with the vault open and nothing
    /// transferring in this process: the vault lock then guarantees no other process runs a
    /// transfer, so a row still marked running was interrupted and is shown as `interrupted` —
    /// unless `besideSync` (this command runs beside a `vault sync`, whose transfers really are running).
    public static func all(in vault: Vault, besideSync: Bool = false) throws -> [TransferInfo] {
        try vault.transfers().map { t in
            TransferInfo(id: t.id, path: try vault.node(id: t.nodeId).map { try vault.path(of: $0) },
                         direction: t.direction, state: t.state == .running && !besideSync ? .interrupted : t.state,
                         bytesDone: t.bytesDone, bytesTotal: t.bytesTotal, attempts: t.attempts,
                         nextAttemptAt: t.nextAttemptAt, error: t.error, updatedAt: t.updatedAt)
        }
    }

    /// A one-line description: state, bytes and reason.
    public var summary: String {
        let bytes = "\(ByteCount.format(UInt64(max(0, bytesDone))))/\(ByteCount.format(UInt64(max(0, bytesTotal))))"
        var state: String
        switch self.state {
        case .waitingToRetry:
            let at = nextAttemptAt.map { Date(timeIntervalSince1970: TimeInterval($0)) }
            state = "waiting to retry" + (at.map { " at " + ISO8601DateFormatter().string(from: $0) } ?? "")
        case .failed: state = "failed"
        case .conflict: state = "conflict"
        case .interrupted: state = "interrupted (resume with `vault transfers resume`)"
        case .paused where direction == .download:   // a sparse partial (SparseContent): only downloads read on demand pause
            state = "partly here, read on demand through `vault mount` (`vault get` or `vault pin` downloads it whole)"
        case .paused: state = "paused (`vault transfers resume`)"
        case .cancelled: state = "cancelled, awaiting upload (`vault transfers resume` sends it)"
        case .waitingForUnmetered: state = "waiting for an unmetered network (or `vault sync --allow-metered`)"
        default: state = self.state.rawValue
        }
        if let error, self.state != .done { state += " (\(error))" }
        return "\(direction.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(path ?? "(removed)")  \(bytes)  \(state)"
    }
}
