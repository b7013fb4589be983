import Foundation

/// Keys of the encrypted `sync_state` table: the server account (kept by the sync layer's
/// `SyncAccount`), and how syncs went.
public enum SyncStateKey: String, Sendable, CaseIterable {
    case serverURL = "server_url"
    case serverUser = "server_user"
    case deviceId = "device_id"
    case serverCAFile = "server_ca_file"
    /// `1` when the user allowed plain HTTP to a remote server (`vault login --insecure-http`).
    case serverInsecureHTTP = "server_insecure_http"
    case serverPassword = "server_password"
    case serverToken = "server_token"
    case serverTokenExpires = "server_token_expires"
    /// Seconds since the epoch of the last sync that finished.
    case lastSyncAt = "last_sync_at"
    /// Seconds since the epoch of the last sync that stopped with an error, and that error.
    case lastSyncFailureAt = "last_sync_failure_at"
    case lastSyncFailure = "last_sync_failure"
    /// Syncs that failed since the last one that finished.
    case syncFailuresInRow = "sync_failures_in_row"
    /// The change feed's cursor after the last page this device applied.
    case changesCursor = "changes_cursor"
    /// The key envelope this device and the server last agreed on (its bytes), and the server's
    /// version of it (SECURITY.md "Envelope").
    case envelopeBase = "envelope_base"
    case envelopeVersion = "envelope_version"
}

/// Settings of the sync layer in the `settings` table.
public enum SyncSetting: String, Sendable {
    /// `yes`, `no` or `auto` (ask NetworkManager).
    case metered
    /// The size (bytes) from which a transfer counts as large.
    case largeTransferBytes = "large_transfer_bytes"
    /// How an edit here and an edit elsewhere are settled: `keep-both` (default) or `last-writer-wins`.
    case conflicts
    /// The device's name in conflict copies (default: the host name).
    case deviceName = "device_name"
}

/// How syncs have gone lately, for `vault status`.
public struct SyncHealth: Sendable, Codable, Equatable {
    public var lastSuccessAt: Int64?
    public var lastFailureAt: Int64?
    public var lastFailure: String?
    /// Syncs that failed since the last one that finished.
    public var failuresInRow: Int

    /// Consecutive failures from which `vault status` warns.
    public static let failuresBeforeWarning = 3
    /// `vault status` warns when changes wait and no sync finished for this long (seconds).
    public static let quietPeriod: Int64 = 24 * 3600

    public init(lastSuccessAt: Int64? = nil, lastFailureAt: Int64? = nil, lastFailure: String? = nil, failuresInRow: Int = 0) {
        self.lastSuccessAt = lastSuccessAt; self.lastFailureAt = lastFailureAt
        self.lastFailure = lastFailure; self.failuresInRow = failuresInRow
    }

    /// The warning `vault status` shows, if any: after `failuresBeforeWarning` failed syncs in a
    /// row, or when no sync finished for more than `quietPeriod` (sync is two-way: changes made on
    /// other devices wait too), or when local changes (`unsynced`) or a failure have waited that
    /// long without any sync having finished.
    public func warning(now: Int64, unsynced: Int) -> String? {
        let last = lastFailure.map { ": \($0)" } ?? ""
        if failuresInRow >= Self.failuresBeforeWarning {
            return "the last \(failuresInRow) syncs failed\(last)"
        }
        let failedSince = lastFailureAt.map { $0 > (lastSuccessAt ?? 0) } ?? false
        if let s = lastSuccessAt {
            guard now - s > Self.quietPeriod else { return nil }
            return "no sync has finished for \((now - s) / 3600) hours\(failedSince ? " (the last one failed\(last))" : "")"
        }
        // Never finished: warn once the oldest evidence (a failure, or changes waiting) is old.
        guard unsynced > 0 || failedSince else { return nil }
        guard let f = lastFailureAt, now - f > Self.quietPeriod || failuresInRow >= Self.failuresBeforeWarning else { return nil }
        return "no sync has ever finished (the last one failed\(last))"
    }
}

extension Vault {
    /// The stored values of `keys` (missing keys are absent).
    public func syncState(_ keys: [SyncStateKey] = SyncStateKey.allCases) throws -> [SyncStateKey: String] {
        var out: [SyncStateKey: String] = [:]
        for (key, value) in try syncStateTable.all() {
            // A key of another version of vault is not one of ours: skipped.
            if let k = SyncStateKey(rawValue: key), keys.contains(k) { out[k] = value }
        }
        return out
    }

    /// The change feed's cursor after the last page this device applied (nil before the first
    /// pull): what a folder delete was decided on (`X-Vault-Decided-At`, docs/sync.md "Pushing").
    public func changesCursor() throws -> Int64? {
        try syncState([.changesCursor])[.changesCursor].flatMap { Int64($0) }
    }

    /// Sets (or, with nil, removes) each value, in one transaction.
    public func setSyncState(_ values: [(SyncStateKey, String?)]) throws {
        try db.transaction { try writeSyncState(values) }
    }

    /// `setSyncState` inside a transaction the caller holds (transactions do not nest).
    func writeSyncState(_ values: [(SyncStateKey, String?)]) throws {
        for (k, v) in values { try syncStateTable.set(k.rawValue, v) }
    }

    /// A sync-layer setting, if set.
    public func setting(_ s: SyncSetting) throws -> String? {
        try settingsTable.value(s.rawValue)
    }

    /// Sets (or, with nil, removes) a sync-layer setting.
    public func setSetting(_ s: SyncSetting, _ value: String?) throws {
        try db.transaction { try settingsTable.set(s.rawValue, value) }
    }

    /// Records a sync that finished (its entries replayed, or left as conflicts or failures).
    public func recordSyncSuccess(at time: Int64? = nil) throws {
        try setSyncState([(.lastSyncAt, String(time ?? Vault.now)), (.syncFailuresInRow, "0")])
    }

    /// Records a sync that stopped with an error.
    public func recordSyncFailure(_ message: String, at time: Int64? = nil) throws {
        let n = Int(try syncState([.syncFailuresInRow])[.syncFailuresInRow] ?? "0") ?? 0
        try setSyncState([(.lastSyncFailureAt, String(time ?? Vault.now)), (.lastSyncFailure, String(message.prefix(500))),
                          (.syncFailuresInRow, String(n + 1))])
    }

    /// How syncs have gone lately.
    public func syncHealth() throws -> SyncHealth {
        let s = try syncState([.lastSyncAt, .lastSyncFailureAt, .lastSyncFailure, .syncFailuresInRow])
        return SyncHealth(lastSuccessAt: s[.lastSyncAt].flatMap { Int64($0) ?? Double($0).map { Int64($0) } },
                          lastFailureAt: s[.lastSyncFailureAt].flatMap { Int64($0) }, lastFailure: s[.lastSyncFailure],
                          failuresInRow: s[.syncFailuresInRow].flatMap { Int($0) } ?? 0)
    }

    /// How many nodes the tree has (the root included): the maintained counter, not a count.
    public func nodeCount() throws -> Int {
        Int(try countersTable.value(.nodes))
    }

    /// Files on the server whose content is not on this device (ids, in a stable order).
    public func remoteFilesNotDownloaded() throws -> [String] {
        try nodesTable.remoteFileIds(contentStates: [.notDownloaded, .downloading], pinnedOnly: false)
    }

    /// Pinned files on the server whose current content is not on this device (not downloaded,
    /// or an older version: STALE), ids in a stable order.
    public func pinnedFilesToDownload() throws -> [String] {
        try nodesTable.remoteFileIds(contentStates: [.notDownloaded, .downloading, .stale], pinnedOnly: true)
    }
}
