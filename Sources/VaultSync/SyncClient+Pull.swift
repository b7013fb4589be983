import Foundation
import VaultCore

extension SyncClient {
    /// The conflict policy in force: the policy's `conflictPolicy`, else the vault's setting
    /// (`vault config set conflicts`), else keep-both.
    public static func conflictPolicy(vault: Vault, policy: EffectivePolicy) throws -> ConflictPolicy {
        if let forced = policy.conflictPolicy.value.flatMap(ConflictPolicy.init(rawValue:)) { return forced }
        return try vault.setting(.conflicts).flatMap(ConflictPolicy.init(rawValue:)) ?? .keepBoth
    }

    /// This device's name in conflict copies: the setting (`vault config set device-name`), else
    /// the host name.
    public static func deviceName(vault: Vault) throws -> String {
        if let n = try vault.setting(.deviceName), !n.isEmpty { return n }
        return ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "this device"
    }

    /// Pulls what changed on the server into the local tree (docs/sync.md "Pull"): the change feed
    /// from the stored cursor (the full listing the first time and after a 410), every node opened
    /// by the codec and planned before anything is applied, then each page applied in its own
    /// transaction with its cursor. What both sides changed is settled by the rules and kept for
    /// `vault conflicts`. A node that does not authenticate is refused and quarantined, the rest
    /// applied: the summary's `refused` lists the quarantine (the caller reports it, `vault sync`
    /// exits 6).
    /// - Throws: `.integrity` (exit 6) when the server's data fails its checks or rolls a node back
    ///   (nothing applied); `.conflict` when the pull would remove more than `maxDelete` nodes (or
    ///   half of a tree of more than 20) without `force` (nothing applied).
    public func pull(policy: ConflictPolicy, maxDelete: Int = 1000, force: Bool = false) throws -> PullSummary {
        try recordingFailure {
            try syncEnvelope()
            let planner = SyncPlanner(settings: SyncSettings(
                deviceId: api.account.deviceId, deviceName: try Self.deviceName(vault: vault), today: Self.today(),
                conflictPolicy: policy, newId: { UUID().uuidString.lowercased() }))
            let source = RemotePuller(api: api, codec: vault.remoteCodec, retry: retry, pageSize: pullPage, say: say)
            defer { source.finish() }
            let result: PullResult
            do {
                result = try PullRunner(planner: planner, maxDelete: maxDelete, force: force).run(source, vault.pullStore())
            } catch let e as SyncPlanError {
                throw RemoteCodec.lie(e.description)
            } catch let g as DeleteGuardTripped {
                throw VaultError(.conflict, "this sync would remove \(g.wouldRemove) of the \(g.treeSize) items on this device (they were deleted on the server); nothing was changed",
                                 hint: "check the server, then run `vault sync --force` to apply it (or raise --max-delete, now \(g.limit))")
            }
            try vault.recordConflicts(result.messages)
            var s = PullSummary()
            s.applied = result.applied; s.removed = result.removed; s.listed = result.listed; s.conflicts = result.messages
            s.refused = try vault.quarantinedNodes().map { RefusedNode(id: $0.id, reason: $0.reason) }
            for m in result.messages { say("conflict: \(m.path): \(m.text)") }
            return s
        }
    }

    /// Today as conflict copies name it (`YYYY-MM-DD`, local time).
    static func today() -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd"
        return f.string(from: Date())
    }

    /// What `vault join` pulls: the envelope only (checked and in step); the tree arrives with the
    /// first `vault sync` (`pull(policy:maxDelete:force:)`). Returns the remote changes applied (0).
    public func pull() throws -> Int {
        try syncEnvelope()
        return 0
    }
}
