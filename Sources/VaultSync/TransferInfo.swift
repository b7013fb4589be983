import Foundation
import VaultCore

/// One transfer as `vault transfers` shows it.
public struct TransferInfo: Sendable, Codable, Equatable {
    /// The row id in the `transfers` table.
    public var id: Int64
    /// The vault path of the file, when the node still exists.
    public var path: String?
    /// `upload` or `download`.
    public var direction: String
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

    /// Every transfer, newest first. Call it with the vault open and nothing transferring in this
    /// process: the vault lock then guarantees no other process runs a transfer, so a row still
    /// marked running was interrupted and is shown as `interrupted` — unless `besideSync` (this
    /// command runs beside a `vault sync`, whose transfers really are running).
    public static func all(in vault: Vault, besideSync: Bool = false) throws -> [TransferInfo] {
        try vault.db.query("""
            SELECT id, node_id, direction, state, bytes_done, bytes_total, attempts, next_attempt_at, error, updated_at
            FROM transfers ORDER BY id DESC
            """).map { r in
            let node = try r[1].string.flatMap { try vault.node(id: $0) }
            return TransferInfo(id: r[0].int64 ?? 0, path: try node.map { try vault.path(of: $0) },
                                direction: r[2].string ?? "", state: Self.shown(r[3].string, besideSync: besideSync),
                                bytesDone: r[4].int64 ?? 0, bytesTotal: r[5].int64 ?? 0, attempts: r[6].int64 ?? 0,
                                nextAttemptAt: r[7].int64, error: r[8].string, updatedAt: r[9].int64 ?? 0)
        }
    }

    static func shown(_ stored: String?, besideSync: Bool) -> TransferState {
        let state = TransferState(rawValue: stored ?? "") ?? .failed
        return state == .running && !besideSync ? .interrupted : state
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
        case .paused: state = "paused (`vault transfers resume`)"
        case .waitingForUnmetered: state = "waiting for an unmetered network (or `vault sync --allow-metered`)"
        default: state = self.state.rawValue
        }
        if let error, self.state != .done { state += " (\(error))" }
        return "\(direction.padding(toLength: 8, withPad: " ", startingAt: 0)) \(path ?? "(removed)")  \(bytes)  \(state)"
    }
}
